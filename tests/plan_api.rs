//! The api-changes verdict of `winlint plan --kubernetes X.Y` end to end: the goldens of
//! `testdata/plan-api` (text and JSON: fields a Windows pod may no longer carry from 1.33 and
//! 1.34, and a near miss with `spec.os.name: windows` and none of them), and a RuntimeClass in a
//! version removed in 1.25 (`testdata/realworld`). `WINLINT_BLESS=1 cargo test --test plan_api`
//! rewrites the goldens.

mod cli_support;

use cli_support::{Out, Run};

/// `winlint plan ARGS` in the crate root, on a fixed date.
fn plan(args: &[&str]) -> Out {
    Run::new(&[&["plan", "--no-config", "--as-of", "2026-11-29"], args].concat()).run()
}

/// 1.32 → 1.35: the window in which supplementalGroupsPolicy, hostUsers (1.33) and pod-level
/// resources (1.34) start to be refused on Windows pods; no workload API version is removed.
const MOVE: &[&str] = &[
    "--windows-build",
    "ltsc2022",
    "--kubernetes-version",
    "1.32",
    "--to",
    "ltsc2025",
    "--kubernetes",
    "1.35",
];

fn golden(args: &[&str], file: &str) {
    let out = plan(args);
    assert_eq!(out.status.code(), Some(0), "{}", out.stderr);
    cli_support::golden(&format!("testdata/plan-api/{file}"), &out.stdout);
}

#[test]
fn text_golden() {
    let mut args = vec!["testdata/plan-api"];
    args.extend_from_slice(MOVE);
    golden(&args, "expected.txt");
}

#[test]
fn json_golden() {
    let mut args = vec!["testdata/plan-api", "--format", "json"];
    args.extend_from_slice(MOVE);
    golden(&args, "expected.json");
}

#[test]
fn a_removed_runtimeclass_version_is_refused_across_1_25() {
    golden(
        &[
            "testdata/realworld/windows/windows-testing-runtimeclass-2004.yaml",
            "--windows-build",
            "2004",
            "--kubernetes-version",
            "1.24",
            "--to",
            "ltsc2022",
            "--kubernetes",
            "1.26",
        ],
        "expected-runtimeclass-1.24-1.26.txt",
    );
}

#[test]
fn the_verdict_counts_and_fails_and_only_a_move_of_the_version_judges() {
    let mut args = vec![
        "testdata/plan-api",
        "--format",
        "json",
        "--fail-on",
        "api-changes",
    ];
    args.extend_from_slice(MOVE);
    let out = plan(&args);
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(v["counts"]["api-changes"], 1);
    let items = v["workloads"][0]["pod"].as_array().unwrap();
    assert_eq!(items.len(), 3, "{items:?}");
    // The same Kubernetes version after the move: nothing changes at the API server.
    let out = plan(&[
        "testdata/plan-api",
        "--format",
        "json",
        "--kubernetes-version",
        "1.35",
        "--to",
        "ltsc2025",
    ]);
    let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(v["counts"]["api-changes"], 0);
}
