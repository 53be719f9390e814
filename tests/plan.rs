//! `winlint plan` end to end: the goldens of `testdata/plan` (text, JSON, Markdown: a workload in
//! every verdict class, see its README), the exit codes of `--fail-on`, stdin, and the usage
//! errors. `WINLINT_BLESS=1 cargo test --test plan` rewrites the goldens.

mod cli_support;

use cli_support::{Out, Run};

/// The planned move of the goldens: a mixed 2019/2022 AKS cluster on 1.34 to Windows Server 2025
/// on 1.35, read on a fixed date.
const MOVE: &[&str] = &[
    "--no-config",
    "--platform",
    "aks",
    "--windows-build",
    "ltsc2019",
    "--windows-build",
    "ltsc2022",
    "--kubernetes-version",
    "1.34",
    "--to",
    "ltsc2025",
    "--kubernetes",
    "1.35",
    "--as-of",
    "2026-11-29",
];

/// `winlint plan EXTRA` in the crate root, with `stdin` piped in when given.
fn plan(extra: &[&str], stdin: Option<&str>) -> Out {
    let run = Run::new(&[&["plan"], extra].concat());
    match stdin {
        Some(s) => run.stdin(s),
        None => run,
    }
    .run()
}

fn golden(format: &str, file: &str) {
    let mut args = vec!["testdata/plan", "--format", format];
    args.extend_from_slice(MOVE);
    let out = plan(&args, None);
    assert_eq!(out.status.code(), Some(0), "{}", out.stderr);
    cli_support::golden(&format!("testdata/plan/{file}"), &out.stdout);
}

#[test]
fn text_golden() {
    golden("text", "expected.txt");
}

#[test]
fn json_golden() {
    golden("json", "expected.json");
}

#[test]
fn markdown_golden() {
    golden("markdown", "expected.md");
}

#[test]
fn html_golden() {
    golden("html", "expected.html");
}

/// Every verdict class is in the goldens, and the counts add up.
#[test]
fn the_goldens_hold_every_verdict() {
    let mut args = vec!["testdata/plan", "--format", "json"];
    args.extend_from_slice(MOVE);
    let out = plan(&args, None);
    let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let counts = v["counts"].as_object().unwrap();
    for verdict in [
        "pin-breaks",
        "rebuild",
        "needs-hyperv",
        "retag",
        "unknown",
        "runs-as-is",
    ] {
        assert!(
            counts[verdict].as_u64().unwrap() > 0,
            "no {verdict} in the goldens: {counts:?}"
        );
    }
    let total: u64 = counts.values().map(|c| c.as_u64().unwrap()).sum();
    assert_eq!(total, v["workloads"].as_array().unwrap().len() as u64);
    assert_eq!(v["not_windows"], 1);
    // Blocked workloads come first.
    let verdicts: Vec<&str> = v["workloads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["verdict"].as_str().unwrap())
        .collect();
    assert_eq!(verdicts.first(), Some(&"pin-breaks"));
    assert_eq!(verdicts.last(), Some(&"runs-as-is"));
}

#[test]
fn fail_on_sets_the_exit_code() {
    let run = |fail_on: &str| {
        let mut args = vec!["testdata/plan", "--fail-on", fail_on];
        args.extend_from_slice(MOVE);
        plan(&args, None).status.code()
    };
    assert_eq!(run("rebuild,pin-breaks"), Some(1));
    assert_eq!(run("needs-hyperv"), Some(1));
    // The one runs-as-is-only file: nothing to fail on.
    let mut args = vec![
        "testdata/plan/minikube-hybrid-win-webserver-ws2025.yaml",
        "--fail-on",
        "rebuild,pin-breaks,retag,unknown,needs-hyperv",
    ];
    args.extend_from_slice(MOVE);
    assert_eq!(plan(&args, None).status.code(), Some(0));
    let out = plan(
        &["testdata/plan", "--to", "ltsc2025", "--fail-on", "broken"],
        None,
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stderr.contains("not a verdict"));
}

#[test]
fn stdin_is_an_input_and_usage_errors_say_what() {
    let pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  nodeSelector: {kubernetes.io/os: windows}\n  containers:\n  - {name: c, image: 'mcr.microsoft.com/windows/nanoserver:ltsc2022'}\n";
    let out = plan(
        &["-", "--no-config", "--to", "ltsc2025", "--format", "json"],
        Some(pod),
    );
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(v["workloads"][0]["verdict"], "runs-as-is");
    assert_eq!(v["workloads"][0]["file"], "<stdin>");
    for (args, says) in [
        (
            vec!["testdata/plan", "--to", "ltsc2099"],
            "not a Windows build",
        ),
        (
            vec!["testdata/plan", "--to", "ltsc2025", "--as-of", "soon"],
            "not a date",
        ),
        (vec!["--to", "ltsc2025"], "no input"),
    ] {
        let out = plan(&args, None);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stderr.contains(says), "{args:?}: {}", out.stderr);
    }
}

/// A pod pinned to a build no current node runs is Pending now and, pinned to a build no moved
/// node runs either, Pending after the move: pin-breaks (saying it is broken today too), never
/// runs-as-is. A DaemonSet so pinned runs no pod now or after (per-build DaemonSets are built to
/// select none on the other pools): no pin-breaks. A pin on AKS's OS SKU where no node carries
/// the label (not AKS) is not judged.
#[test]
fn a_pin_that_selects_no_node_now_still_breaks_after_the_move() {
    let object = |kind: &str, selector: &str| {
        let (api, spec) = match kind {
            "Pod" => ("v1", "spec"),
            _ => (
                "apps/v1",
                "spec:\n  selector: {matchLabels: {app: a}}\n  template:\n    metadata: {labels: {app: a}}\n    spec",
            ),
        };
        let indent = if kind == "Pod" { "  " } else { "      " };
        format!(
            "apiVersion: {api}\nkind: {kind}\nmetadata: {{name: a}}\n{spec}:\n{indent}nodeSelector: {{kubernetes.io/os: windows, {selector}}}\n{indent}containers:\n{indent}- name: c\n{indent}  image: mcr.microsoft.com/windows/servercore:ltsc2022\n"
        )
    };
    let verdict = |doc: &str| {
        let out = plan(
            &[
                "-",
                "--no-config",
                "--windows-build",
                "ltsc2019",
                "--to",
                "ltsc2025",
                "--format",
                "json",
            ],
            Some(doc),
        );
        assert_eq!(out.status.code(), Some(0), "{out}");
        let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
        let w = &v["workloads"][0];
        (
            w["verdict"].as_str().unwrap().to_string(),
            w["pod"][0]["evidence"].as_str().unwrap_or("").to_string(),
        )
    };
    let build = "node.kubernetes.io/windows-build: '10.0.20348'";
    for kind in ["Pod", "Deployment"] {
        let (v, evidence) = verdict(&object(kind, build));
        assert_eq!(v, "pin-breaks", "{kind}");
        assert!(
            evidence.contains("10.0.20348") && evidence.contains("no current Windows node either"),
            "{kind}: {evidence}"
        );
    }
    assert_eq!(verdict(&object("DaemonSet", build)).0, "runs-as-is");
    let sku = "kubernetes.azure.com/os-sku: Windows2022";
    assert_eq!(verdict(&object("Deployment", sku)).0, "runs-as-is");
}
