//! `winlint.yaml` `images:` (issue 26): the user's private images judged offline as the registry
//! would judge them. Without the file, a Linux program in an unknown image is an info naming the
//! assumption and runAsNonRoot is not judged; with it, the declared Git for Windows image's bash
//! is silent, and the image declared to run as ContainerAdministrator is refused by the kubelet
//! under runAsNonRoot (WIN409 error) and lacks `sleep` (WIN413 error).

mod cli_support;

use cli_support::*;

const DIR: &str = "testdata/config-images";

/// (rule, severity, object) of every WIN409/WIN413 finding.
fn judged(report: &serde_json::Value) -> Vec<(String, String, String)> {
    findings(report)
        .iter()
        .filter(|f| matches!(f["rule"].as_str(), Some("WIN409" | "WIN413")))
        .map(|f| {
            (
                f["rule"].as_str().unwrap().to_string(),
                f["severity"].as_str().unwrap().to_string(),
                f["object"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

#[test]
fn declared_images_decide_win409_and_win413() {
    let with = Run::new(&["-o", "json", "pods.yaml"])
        .cwd(root().join(DIR))
        .run();
    let got = judged(&with.json());
    assert_eq!(
        got.iter()
            .map(|(r, s, _)| (r.as_str(), s.as_str()))
            .collect::<Vec<_>>(),
        [("WIN409", "error"), ("WIN413", "error")],
        "{with}"
    );
    assert!(got.iter().all(|(_, _, o)| o.contains("web")), "{got:?}");

    let without = Run::new(&["--no-config", "-o", "json", "pods.yaml"])
        .cwd(root().join(DIR))
        .run();
    let got = judged(&without.json());
    assert_eq!(
        got.iter()
            .map(|(r, s, _)| (r.as_str(), s.as_str()))
            .collect::<Vec<_>>(),
        [("WIN413", "info"), ("WIN413", "info")],
        "{without}"
    );
}

#[test]
fn a_bad_entry_is_refused_with_its_place() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("winlint.yaml");
    std::fs::write(&cfg, "images:\n- match: x\n  os: macos\n").unwrap();
    let out = Run::new(&["--config", cfg.to_str().unwrap(), "pods.yaml"])
        .cwd(root().join(DIR))
        .run();
    assert_ne!(out.code(), 0, "{out}");
    assert!(out.stderr.contains("images[0]"), "{out}");
}
