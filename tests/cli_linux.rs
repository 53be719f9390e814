//! Linux pods give no Windows findings. `testdata/linux/` is a realistic corpus (Pod Security
//! "restricted" pods, Helm-chart style workloads, Linux-pinned node agents, multi-OS images);
//! linting it must report nothing, on the default target and on every legacy target. A finding
//! here is a false positive on the Linux majority of a cluster: fix the rule or the OS
//! classification, never the corpus.

mod cli_support;

use cli_support::*;

const CORPUS: &str = "testdata/linux";

const TARGETS: &[&[&str]] = &[
    &[],
    &["--kubernetes-version", "1.30"],
    &[
        "--kubernetes-version",
        "1.9",
        "--windows-build",
        "1709",
        "--runtime",
        "docker",
    ],
    &[
        "--kubernetes-version",
        "1.13",
        "--windows-build",
        "ltsc2016",
    ],
    &["--kubernetes-version", "1.22", "--isolation", "hyperv"],
    &[
        "--cluster-mixed-builds",
        "--check-eol",
        "--windows-build",
        "ltsc2019",
        "--windows-build",
        "ltsc2022",
    ],
    &["--windows-taint", "none"],
    &[
        "--runtime",
        "docker",
        "--feature-gate",
        "WindowsHostNetwork=true",
    ],
];

fn lint_corpus(target: &[&str]) -> serde_json::Value {
    let mut args = vec!["-o", "json", "--fail-on", "info"];
    args.extend_from_slice(target);
    args.push(CORPUS);
    let out = winlint(&args);
    out.assert_clean_exit();
    let r = out.json();
    assert!(
        r["errors"].as_array().unwrap().is_empty(),
        "the corpus must load: {}",
        r["errors"]
    );
    assert!(
        findings(&r).is_empty(),
        "Windows findings on Linux pods (target {target:?}):\n{}",
        brief(&r)
    );
    assert_eq!(out.code(), 0, "{out}");
    r
}

#[test]
fn linux_corpus_gives_no_findings_on_the_default_target() {
    let r = lint_corpus(&[]);
    // The corpus is really linted: every file, every pod template.
    let files = std::fs::read_dir(root().join(CORPUS))
        .unwrap()
        .filter(|e| {
            let p = e.as_ref().unwrap().path();
            matches!(
                p.extension().and_then(|x| x.to_str()),
                Some("yaml" | "yml" | "json")
            )
        })
        .count();
    assert_eq!(r["summary"]["files"], files);
    assert!(
        r["summary"]["pods"].as_u64().unwrap() >= 25,
        "{}",
        r["summary"]
    );
    assert_eq!(
        r["summary"]["suppressed"], 0,
        "no ignore annotations in the corpus"
    );
}

#[test]
fn linux_corpus_gives_no_findings_on_any_target() {
    for t in TARGETS {
        lint_corpus(t);
    }
}

#[test]
fn linux_corpus_text_report_is_just_the_summary() {
    let out = winlint(&[CORPUS]);
    out.assert_code(0);
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(lines.len(), 1, "{out}");
    assert!(
        lines[0].starts_with("0 errors, 0 warnings, 0 info in "),
        "{out}"
    );
}

#[test]
fn linux_corpus_fix_changes_nothing() {
    let out = winlint(&[
        "--diff",
        "--fix-opt-in",
        "WIN403",
        "--fix-opt-in",
        "WIN303",
        CORPUS,
    ]);
    out.assert_clean_exit();
    assert!(
        out.stdout.trim().is_empty(),
        "--diff proposes edits to Linux pods\n{out}"
    );
}
