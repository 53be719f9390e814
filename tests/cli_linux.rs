//! Linux pods give no Windows findings. `testdata/linux/` is a realistic corpus (Pod Security
//! "restricted" pods, Helm-chart style workloads, Linux-pinned node agents, multi-OS images);
//! linting it must report nothing, on the default target and on every legacy target, but WIN011
//! (Linux-only pods that can land on Windows nodes) where the Windows nodes are untainted. A finding
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

/// WIN011 is the one rule about Linux pods: one whose images have no Windows variant, without
/// an OS pin, that can land on a Windows node. Only a target whose Windows nodes are untainted
/// lets these pods land there.
const LINUX_POD_RULE: &str = "WIN011";

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
    let windows: Vec<&serde_json::Value> = findings(&r)
        .iter()
        .filter(|f| f["rule"] != LINUX_POD_RULE)
        .collect();
    assert!(
        windows.is_empty(),
        "Windows findings on Linux pods (target {target:?}):\n{}",
        brief(&r)
    );
    assert_eq!(out.code(), i32::from(!findings(&r).is_empty()), "{out}");
    r
}

/// `file:line pointer` of the WIN011 warnings and errors of a report. Its infos (images winlint
/// does not know, on Windows nodes the pod can land on) are checked apart: they say only that.
fn linux_pod_findings(r: &serde_json::Value) -> Vec<String> {
    for f in findings(r)
        .iter()
        .filter(|f| f["rule"] == LINUX_POD_RULE && f["severity"] == "info")
    {
        let m = f["message"].as_str().unwrap();
        assert!(
            m.contains("unknown to winlint") && m.contains("registry look-ups"),
            "{f}"
        );
        assert!(f["fix"].is_null(), "no OS to pin is known: {f}");
    }
    findings(r)
        .iter()
        .filter(|f| f["rule"] == LINUX_POD_RULE && f["severity"] != "info")
        .map(|f| {
            format!(
                "{}:{} {}",
                f["file"].as_str().unwrap_or("?"),
                f["line"],
                f["pointer"].as_str().unwrap_or("?")
            )
        })
        .collect()
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
        let r = lint_corpus(t);
        let want: &[&str] = if *t == ["--windows-taint", "none"] {
            // Untainted Windows nodes (AKS/EKS): these pods can land on them and cannot run
            // there. Each is right: no OS pin, only Linux-only images (spec.os.name: linux in
            // restricted.yaml does not steer the scheduler). helm-web.yaml:132 runs
            // bitnami/redis:7.2.5-debian-12-r0, a Debian Linux image (model::known_images, issue 29).
            &[
                "testdata/linux/batch.yaml:77 /spec/jobTemplate/spec/template/spec",
                "testdata/linux/helm-defaults.yaml:23 /spec/template/spec/nodeSelector",
                "testdata/linux/helm-web.yaml:32 /spec/template/spec",
                "testdata/linux/helm-web.yaml:83 /spec/template/spec",
                "testdata/linux/helm-web.yaml:132 /spec/template/spec",
                "testdata/linux/restricted.yaml:80 /spec",
            ]
        } else {
            &[]
        };
        assert_eq!(linux_pod_findings(&r), want, "target {t:?}");
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
