//! The chart's observability (issue 29 item 7): the PrometheusRule
//! (charts/winlint/templates/prometheusrule.yaml) rendered by helm passes `promtool check rules`
//! and the unit tests of testdata/observability/alerts_test.yaml (`promtool test rules`: every
//! alert fires on its case and stays quiet on the healthy near misses); the Grafana dashboard
//! (charts/winlint/files/grafana-dashboard.json) is a ConfigMap for Grafana's sidecar; both are
//! off by default. (That every metric they name is one `winlint serve` exports is checked in
//! src/server/metrics.rs, where every family can be given a member.)
//!
//! helm (`$WINLINT_HELM`) and promtool (`$WINLINT_PROMTOOL`, Debian's `prometheus` package)
//! are installed by .ci/run; without them the tests that need them skip locally and fail under
//! `CI=true`.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use serde_json::Value;

#[path = "yaml_support/mod.rs"]
mod yaml_support;

mod skip_support;
use yaml_support::yaml_docs;

mod chart_support;
use chart_support::{chart, helm, helm_template};

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// `$var`, else `default`, when `args` runs it successfully; when it does not, the test is
/// reported ignored locally (saying how to get the tool) and fails under `CI=true`.
fn tool(var: &str, default: &str, args: &[&str], how: &str) -> Option<String> {
    let cmd = std::env::var(var).unwrap_or_else(|_| default.into());
    let ok = Command::new(&cmd)
        .args(args)
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        return skip_support::skip(
            &format!("{cmd} cannot run"),
            &format!("{how}, or set {var}"),
        );
    }
    Some(cmd)
}

fn promtool() -> Option<String> {
    tool(
        "WINLINT_PROMTOOL",
        "promtool",
        &["--version"],
        "run `apt-get install prometheus` (Debian's package ships promtool)",
    )
}

fn run(cmd: &str, args: &[&str], dir: &Path) -> String {
    let out = Command::new(cmd)
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{cmd} {args:?}:\n{text}");
    text
}

const ALERTS_TEST: &str = "testdata/observability/alerts_test.yaml";

fn the_rendered_alerts_pass_promtool_check_and_unit_tests() {
    let (Some(helm), Some(promtool)) = (helm(), promtool()) else {
        return;
    };
    let off = helm_template(&helm, &[]);
    assert!(
        !off.iter().any(|d| d["kind"] == "PrometheusRule"),
        "off by default"
    );
    let docs = helm_template(&helm, &["metrics.prometheusRule.enabled=true"]);
    let rule = docs
        .iter()
        .find(|d| d["kind"] == "PrometheusRule")
        .expect("a PrometheusRule");
    assert_eq!(rule["apiVersion"], "monitoring.coreos.com/v1");
    // The operator's PrometheusRule spec is a Prometheus rule file: `groups`.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("rules.json"),
        serde_json::to_vec_pretty(&rule["spec"]).unwrap(),
    )
    .unwrap();
    let tests = read(&Path::new(env!("CARGO_MANIFEST_DIR")).join(ALERTS_TEST));
    std::fs::write(dir.path().join("alerts_test.yaml"), &tests).unwrap();
    let checked = run(&promtool, &["check", "rules", "rules.json"], dir.path());
    assert!(checked.contains("SUCCESS"), "{checked}");
    let tested = run(
        &promtool,
        &["test", "rules", "alerts_test.yaml"],
        dir.path(),
    );
    assert!(tested.contains("SUCCESS"), "{tested}");
    // Every alert has a case that fires it and a healthy case that does not.
    let alerts: Vec<&str> = rule["spec"]["groups"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|g| g["rules"].as_array().unwrap())
        .filter_map(|r| r["alert"].as_str())
        .collect();
    assert!(alerts.len() >= 8, "{alerts:?}");
    let cases = yaml_docs(&tests).remove(0);
    for alert in &alerts {
        for (i, case) in cases["tests"].as_array().unwrap().iter().enumerate() {
            let t = case["alert_rule_test"]
                .as_array()
                .unwrap()
                .iter()
                .find(|t| t["alertname"] == *alert)
                .unwrap_or_else(|| panic!("{ALERTS_TEST}: test {i} has no case for {alert}"));
            let fires = !t["exp_alerts"].as_array().unwrap().is_empty();
            assert_eq!(fires, i == 0, "{ALERTS_TEST}: test {i}, {alert}");
        }
    }
}

fn the_grafana_dashboard_is_a_configmap_for_the_sidecar() {
    let Some(helm) = helm() else { return };
    let dashboards = |docs: &[Value]| -> Vec<Value> {
        docs.iter()
            .filter(|d| d["kind"] == "ConfigMap" && d["metadata"]["name"] == "winlint-dashboard")
            .cloned()
            .collect()
    };
    assert!(
        dashboards(&helm_template(&helm, &[])).is_empty(),
        "off by default"
    );
    let docs = helm_template(
        &helm,
        &[
            "metrics.grafanaDashboard.enabled=true",
            "metrics.grafanaDashboard.namespace=monitoring",
        ],
    );
    let cm = dashboards(&docs).pop().expect("the dashboard's ConfigMap");
    assert_eq!(cm["metadata"]["namespace"], "monitoring");
    // The label kube-prometheus-stack's Grafana sidecar watches by default.
    assert_eq!(cm["metadata"]["labels"]["grafana_dashboard"], "1");
    let json: Value = serde_json::from_str(cm["data"]["winlint.json"].as_str().unwrap())
        .expect("the dashboard is JSON");
    let file: Value =
        serde_json::from_str(&read(&chart().join("files/grafana-dashboard.json"))).unwrap();
    assert_eq!(json, file, "the ConfigMap carries the file as it is");
    assert_eq!(json["uid"], "winlint");
    let panels = json["panels"].as_array().unwrap();
    let ids: BTreeSet<u64> = panels.iter().map(|p| p["id"].as_u64().unwrap()).collect();
    assert_eq!(ids.len(), panels.len(), "panel ids are unique");
    for p in panels.iter().filter(|p| p["type"] != "row") {
        let targets = p["targets"].as_array().unwrap();
        assert!(!targets.is_empty(), "{}", p["title"]);
        for t in targets {
            // The data source is the dashboard's variable: any Prometheus the user picks.
            assert_eq!(t["datasource"]["uid"], "${datasource}", "{}", p["title"]);
        }
    }
}

/// The tests (libtest-mimic: a test that lacks an outside tool is reported ignored, with how
/// to get it; tests/skip_support).
fn main() {
    use skip_support::{run, test};
    run(vec![
        test(
            "the_rendered_alerts_pass_promtool_check_and_unit_tests",
            the_rendered_alerts_pass_promtool_check_and_unit_tests,
        ),
        test(
            "the_grafana_dashboard_is_a_configmap_for_the_sidecar",
            the_grafana_dashboard_is_a_configmap_for_the_sidecar,
        ),
    ]);
}
