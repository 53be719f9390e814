//! `winlint plan --cluster` against a real kube-apiserver 1.32 (tests/k8s_support): Windows
//! Server 2019 and 2022 nodes and a Linux node created as API objects, workloads of several
//! verdict classes in a namespace, and the binary planning the move to Windows Server 2025 from
//! the cluster's facts, for the running workloads (`-n`) and for a file. Skips (and says why)
//! without `KUBEBUILDER_ASSETS`, except under `CI=true`.

mod cli_support;
mod k8s_support;

use cli_support::Run;
use k8s_support::{Node, cluster};
use serde_json::{Value, json};

fn deployment(ns: &str, name: &str, selector: Value, image: &str) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}},
                "spec": {"nodeSelector": selector,
                    "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists"}],
                    "containers": [{"name": "c", "image": image}]}}}})
}

fn verdicts(plan: &Value) -> Vec<(String, String)> {
    plan["workloads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| {
            (
                w["object"].as_str().unwrap().to_string(),
                w["verdict"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn plan_the_running_workloads_from_the_clusters_facts() {
    let Some(c) = cluster() else { return };
    let label = "envtest.winlint.io/plan";
    for n in [
        Node::windows(&c.unique("w19"), "10.0.17763"),
        Node::windows(&c.unique("w22"), "10.0.20348"),
        Node::linux(&c.unique("lin")),
    ] {
        c.create_node(&n.label(label, "yes"));
    }
    let ns = c.unique("plan");
    c.create_namespace(&ns, &[]);
    let win = json!({"kubernetes.io/os": "windows"});
    let pinned19 = json!({"kubernetes.io/os": "windows",
        "node.kubernetes.io/windows-build": "10.0.17763"});
    for d in [
        deployment(
            &ns,
            "web22",
            win.clone(),
            "mcr.microsoft.com/windows/nanoserver:ltsc2022",
        ),
        deployment(
            &ns,
            "old19",
            pinned19,
            "mcr.microsoft.com/windows/servercore:ltsc2019",
        ),
        deployment(
            &ns,
            "mine",
            win,
            "example.com/app:1.0-windowsservercore-ltsc2019",
        ),
        deployment(
            &ns,
            "linux",
            json!({"kubernetes.io/os": "linux"}),
            "nginx:1.27",
        ),
    ] {
        c.create(&d).ok();
    }
    let kc = c.kubeconfig.to_str().unwrap();
    let out = Run::new(&[
        "plan",
        "--cluster",
        "--kubeconfig",
        kc,
        "-n",
        &ns,
        "--to",
        "ltsc2025",
        "--format",
        "json",
        "--as-of",
        "2026-11-29",
        "--no-config",
    ])
    .env_remove("KUBECONFIG")
    .run();
    assert_eq!(out.code(), 0, "{out}");
    let plan: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(plan["facts"], "cluster");
    let from: Vec<&str> = plan["from"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(
        from,
        ["10.0.17763 (ltsc2019)", "10.0.20348 (ltsc2022)"],
        "{out}"
    );
    assert_eq!(
        verdicts(&plan),
        [
            (format!("{ns}/Deployment/old19"), "pin-breaks".to_string()),
            (format!("{ns}/Deployment/mine"), "rebuild".to_string()),
            (format!("{ns}/Deployment/web22"), "runs-as-is".to_string()),
        ],
        "{out}"
    );
    assert_eq!(plan["not_windows"], 1);
    // A file planned against the same facts: the cluster's builds, not the configured default.
    let pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  nodeSelector: \
               {node.kubernetes.io/windows-build: '10.0.17763'}\n  containers:\n  - name: a\n    \
               image: mcr.microsoft.com/windows/nanoserver:1809\n";
    let out = Run::new(&[
        "plan",
        "-",
        "--cluster",
        "--kubeconfig",
        kc,
        "--to",
        "ltsc2025",
        "--format",
        "json",
        "--no-config",
    ])
    .env_remove("KUBECONFIG")
    .stdin(pod)
    .run();
    assert_eq!(out.code(), 0, "{out}");
    let plan: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(
        verdicts(&plan),
        [("Pod/p".to_string(), "pin-breaks".to_string())]
    );
    assert_eq!(plan["workloads"][0]["containers"][0]["verdict"], "retag");
}

/// The tests (libtest-mimic: a test that lacks an outside tool is reported ignored, with how
/// to get it; tests/skip_support).
fn main() {
    use k8s_support::skip_support::{run, test};
    run(vec![test(
        "plan_the_running_workloads_from_the_clusters_facts",
        plan_the_running_workloads_from_the_clusters_facts,
    )]);
}
