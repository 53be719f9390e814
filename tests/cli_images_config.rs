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

/// The declared `os` and `builds` feed the image rules as the registry's platforms would
/// (issue 26): an image declared for ltsc2019 cannot run on the ltsc2022 target (WIN502), one
/// declared Linux is no Windows image (WIN507), one declared at a revision newer than the
/// target's (WIN510, a warning with configured facts). Offline without the file, the names say
/// nothing and none of these is reported.
#[test]
fn declared_os_and_builds_are_judged_as_registry_facts() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("winlint.yaml"),
        "images:\n\
         - match: \"contoso.azurecr.io/legacy/*\"\n  os: windows\n  builds: [ltsc2019]\n\
         - match: \"contoso.azurecr.io/tools/*\"\n  os: linux\n\
         - match: \"contoso.azurecr.io/api/*\"\n  builds: [\"10.0.20348.2966\"]\n\
         - match: \"contoso.azurecr.io/web/*\"\n  builds: [ltsc2019, ltsc2022]\n",
    )
    .unwrap();
    let pod = |name: &str, image: &str| {
        format!(
            "apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}}}\nspec:\n  os: {{name: windows}}\n  \
             nodeSelector: {{kubernetes.io/os: windows}}\n  tolerations: [{{key: os, operator: Equal, \
             value: windows, effect: NoSchedule}}]\n  containers:\n  - {{name: app, image: {image}}}\n"
        )
    };
    let pods = [
        pod("legacy", "contoso.azurecr.io/legacy/app:1.0"),
        pod("tools", "contoso.azurecr.io/tools/agent:1.0"),
        pod("api", "contoso.azurecr.io/api/app:2.0"),
        pod("web", "contoso.azurecr.io/web/app:3.0"),
    ]
    .join("---\n");
    std::fs::write(dir.path().join("pods.yaml"), pods).unwrap();
    let image_rules = |extra: &[&str]| -> Vec<(String, String, String, String)> {
        let mut args = vec!["--windows-build", "10.0.20348.2849", "-o", "json"];
        args.extend(extra);
        args.push("pods.yaml");
        let out = Run::new(&args).cwd(dir.path()).run();
        findings(&out.json())
            .iter()
            .filter(|f| matches!(f["rule"].as_str(), Some("WIN502" | "WIN507" | "WIN510")))
            .map(|f| {
                (
                    f["object"].as_str().unwrap_or_default().to_string(),
                    f["rule"].as_str().unwrap().to_string(),
                    f["severity"].as_str().unwrap().to_string(),
                    f["message"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };
    let got = image_rules(&[]);
    let brief: Vec<(&str, &str, &str)> = got
        .iter()
        .map(|(o, r, s, _)| (o.rsplit('/').next().unwrap(), r.as_str(), s.as_str()))
        .collect();
    assert_eq!(
        brief,
        [
            ("legacy", "WIN502", "error"),
            ("tools", "WIN507", "error"),
            ("api", "WIN510", "warning"),
        ],
        "{got:#?}"
    );
    for (_, _, _, message) in &got {
        assert!(
            message.contains("winlint.yaml images: \"contoso.azurecr.io/"),
            "the message names the declaration: {message}"
        );
    }
    assert!(
        got[2].3.contains("os.version 10.0.20348.2966"),
        "{}",
        got[2].3
    );
    assert_eq!(image_rules(&["--no-config"]), vec![], "offline, names only");
}
