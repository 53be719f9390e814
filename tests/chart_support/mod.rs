//! The chart (charts/winlint) and `helm template` of it, for the tests that read the chart
//! (tests/chart.rs, tests/observability.rs). Loaded beside `skip_support` and `yaml_support`
//! (`mod skip_support; mod yaml_support;` at the test's root).
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// The chart's folder.
pub fn chart() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("charts/winlint")
}

/// The `helm` to use: `$WINLINT_HELM`, else `helm` on PATH; `None` when neither runs: locally
/// the test is reported ignored (with how to get helm), under CI=true it fails, since .ci/run
/// installs helm and a silent skip would hide the chart's tests.
pub fn helm() -> Option<String> {
    let cmd = std::env::var("WINLINT_HELM").unwrap_or_else(|_| "helm".into());
    let ok = Command::new(&cmd)
        .arg("version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        return crate::skip_support::skip(
            &format!("helm ({cmd}) cannot run"),
            crate::skip_support::GET_HELM,
        );
    }
    Some(cmd)
}

/// `helm template winlint --namespace winlint-system CHART --set …` of the chart, as documents.
pub fn helm_template(helm: &str, sets: &[&str]) -> Vec<Value> {
    let mut cmd = Command::new(helm);
    cmd.args(["template", "winlint", "--namespace", "winlint-system"])
        .arg(chart());
    for s in sets {
        cmd.args(["--set", s]);
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "helm template {sets:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    crate::yaml_support::yaml_docs(&String::from_utf8(out.stdout).unwrap())
}
