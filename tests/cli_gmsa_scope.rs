//! WIN110 in the CLI: a GMSACredentialSpec is context for the pods of its own input only (a
//! file, a chart's or a kustomization's output), not for every input of the run: such specs are
//! often created out of band, so one file's spec says nothing about a name in another file.

use std::process::Command;

const SPEC: &str = "apiVersion: windows.k8s.io/v1
kind: GMSACredentialSpec
metadata:
  name: webapp1
credspec:
  CmsPlugins: [ActiveDirectory]
";

const POD: &str = "apiVersion: v1
kind: Pod
metadata:
  name: web
spec:
  os: {name: windows}
  nodeSelector: {kubernetes.io/os: windows}
  tolerations: [{key: os, operator: Equal, value: windows, effect: NoSchedule}]
  securityContext:
    windowsOptions:
      gmsaCredentialSpecName: webapp01
  containers:
  - name: iis
    image: mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2022
";

fn lint(files: &[&std::path::Path]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_winlint"))
        .args(files)
        .output()
        .expect("winlint runs");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn a_spec_is_context_for_its_own_file_only() {
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("credspec.yaml");
    let pod = dir.path().join("pod.yaml");
    let both = dir.path().join("both.yaml");
    std::fs::write(&spec, SPEC).unwrap();
    std::fs::write(&pod, POD).unwrap();
    std::fs::write(&both, format!("{SPEC}---\n{POD}")).unwrap();
    // Two files: the spec of one is no fact about the other's pod.
    let apart = lint(&[&spec, &pod]);
    assert!(apart.contains("WIN108"), "{apart}");
    assert!(!apart.contains("WIN110"), "{apart}");
    // One file that creates webapp1 and names webapp01.
    let together = lint(&[&both]);
    assert!(
        together.contains("warning WIN110 gmsa-spec-not-found")
            && together.contains("Use \"webapp1\" or create GMSACredentialSpec \"webapp01\""),
        "{together}"
    );
}
