//! `winlint plan --cluster` against a real kube-apiserver 1.32 (tests/k8s_support): Windows
//! Server 2019 and 2022 nodes and a Linux node created as API objects, workloads of several
//! verdict classes in a namespace, and the binary planning the move to Windows Server 2025 from
//! the cluster's facts, for the running workloads (`-n`) and for a file; and a fleet of two more
//! API servers (2019 nodes in one, 2022 in the other) planned through one kubeconfig's two
//! contexts and through two kubeconfigs. Skips (and says why) without `KUBEBUILDER_ASSETS`,
//! except under `CI=true`.

mod cli_support;
mod k8s_support;

use cli_support::Run;
use k8s_support::{Cluster, Node, cluster, extra_clusters, fleet_kubeconfig, free_port};
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
    // needs-hyperv: a RuntimeClass whose handler is Hyper-V isolation, planned for a platform
    // that runs none (AKS: Azure/AKS#4447), read from the cluster like the nodes.
    let rc = c.unique("hyperv");
    c.create(
        &json!({"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass",
        "metadata": {"name": rc}, "handler": "runhcs-wcow-hypervisor"}),
    )
    .ok();
    let ns_hv = c.unique("plan-hv");
    c.create_namespace(&ns_hv, &[]);
    let mut d = deployment(
        &ns_hv,
        "isolated",
        json!({"kubernetes.io/os": "windows"}),
        "mcr.microsoft.com/windows/servercore:ltsc2019",
    );
    d["spec"]["template"]["spec"]["runtimeClassName"] = json!(rc);
    c.create(&d).ok();
    let out = Run::new(&[
        "plan",
        "--cluster",
        "--kubeconfig",
        kc,
        "-n",
        &ns_hv,
        "--platform",
        "aks",
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
    assert_eq!(
        verdicts(&plan),
        [(
            format!("{ns_hv}/Deployment/isolated"),
            "needs-hyperv".to_string()
        )],
        "{out}"
    );
}

/// `winlint plan` with `args` (and `--format json` and a fixed date when `json`); the run.
fn plan_run(args: &[&str], json: bool) -> cli_support::Out {
    let mut all = vec!["plan", "--to", "ltsc2025", "--no-config"];
    all.extend(args);
    if json {
        all.extend(["--format", "json", "--as-of", "2026-11-29"]);
    }
    Run::new(&all).env_remove("KUBECONFIG").run()
}

/// Verdict counts of one cluster (or the total) from the fleet's JSON, in `Verdict::ALL`'s
/// order: pin-breaks, rebuild, needs-hyperv, retag, unknown, runs-as-is.
fn counts(counts: &Value) -> Vec<u64> {
    [
        "pin-breaks",
        "rebuild",
        "needs-hyperv",
        "api-changes",
        "retag",
        "unknown",
        "runs-as-is",
    ]
    .iter()
    .map(|v| {
        counts[v]
            .as_u64()
            .unwrap_or_else(|| panic!("{v} in {counts}"))
    })
    .collect()
}

/// Windows Server 2019 nodes in one cluster, 2022 in the other, the same namespace in both
/// with workloads of five verdict classes between them; the fleet planned to 2025 by context.
fn plan_a_fleet_of_two_clusters_each_against_its_own_facts() {
    let Some(fleet) = extra_clusters(2) else {
        return;
    };
    let (c19, c22): (&Cluster, &Cluster) = (&fleet[0], &fleet[1]);
    let ns = "fleet";
    let win = json!({"kubernetes.io/os": "windows"});
    let pin = |build: &str| json!({"kubernetes.io/os": "windows", "node.kubernetes.io/windows-build": build});
    let nano = "mcr.microsoft.com/windows/nanoserver";
    let setups: [(&Cluster, &str, Vec<Value>); 2] = [
        (
            c19,
            "10.0.17763",
            vec![
                deployment(
                    ns,
                    "old19",
                    pin("10.0.17763"),
                    "mcr.microsoft.com/windows/servercore:ltsc2019",
                ),
                deployment(
                    ns,
                    "mine",
                    win.clone(),
                    "example.com/app:1.0-windowsservercore-ltsc2019",
                ),
                deployment(ns, "nano19", win.clone(), &format!("{nano}:ltsc2019")),
                deployment(
                    ns,
                    "linux",
                    json!({"kubernetes.io/os": "linux"}),
                    "nginx:1.27",
                ),
            ],
        ),
        (
            c22,
            "10.0.20348",
            vec![
                deployment(
                    ns,
                    "pinned22",
                    pin("10.0.20348"),
                    &format!("{nano}:ltsc2022"),
                ),
                deployment(ns, "web22", win.clone(), &format!("{nano}:ltsc2022")),
                deployment(ns, "thing", win.clone(), "example.com/thing:1.0"),
            ],
        ),
    ];
    for (c, build, workloads) in &setups {
        for i in 0..2 {
            c.create_node(&Node::windows(&format!("win-{i}"), build));
        }
        c.create_node(&Node::linux("lin-0"));
        c.create_namespace(ns, &[]);
        for d in workloads {
            c.create(d).ok();
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let kc = dir.path().join("fleet.kubeconfig");
    // A third context whose API server is gone: reported, the others planned.
    let gone = format!("https://127.0.0.1:{}", free_port());
    fleet_kubeconfig(
        &kc,
        &[
            ("ws2019", &c19.url, &c19.ca_pem),
            ("ws2022", &c22.url, &c22.ca_pem),
            ("gone", &gone, &c19.ca_pem),
        ],
    );
    let kc = kc.to_str().unwrap();
    let by_context = [
        "--kubeconfig",
        kc,
        "--context",
        "ws2019",
        "--context",
        "ws2022",
        "-n",
        ns,
    ];
    let out = plan_run(&by_context, true);
    assert_eq!(out.code(), 0, "{out}");
    let plan: Value = serde_json::from_str(&out.stdout).unwrap();
    let names: Vec<&str> = (plan["clusters"].as_array().unwrap().iter())
        .map(|c| c["cluster"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["ws2019", "ws2022"], "{out}");
    // Each cluster against its own facts: its builds, its verdicts.
    let cluster = |i: usize| &plan["clusters"][i]["plan"];
    assert_eq!(
        cluster(0)["from"],
        json!(["10.0.17763 (ltsc2019)"]),
        "{out}"
    );
    assert_eq!(
        cluster(1)["from"],
        json!(["10.0.20348 (ltsc2022)"]),
        "{out}"
    );
    let o = |name: &str| format!("{ns}/Deployment/{name}");
    let v = |name: &str, v: &str| (o(name), v.to_string());
    assert_eq!(
        verdicts(cluster(0)),
        [
            v("old19", "pin-breaks"),
            v("mine", "rebuild"),
            v("nano19", "retag")
        ],
        "{out}"
    );
    assert_eq!(cluster(0)["not_windows"], 1);
    assert_eq!(
        verdicts(cluster(1)),
        [
            v("pinned22", "pin-breaks"),
            v("thing", "unknown"),
            v("web22", "runs-as-is")
        ],
        "{out}"
    );
    // The summary: per cluster and in total, the blocked workloads of the fleet first.
    assert_eq!(counts(&plan["counts"]["ws2019"]), [1, 1, 0, 0, 1, 0, 0]);
    assert_eq!(counts(&plan["counts"]["ws2022"]), [1, 0, 0, 0, 0, 1, 1]);
    assert_eq!(counts(&plan["total"]), [2, 1, 0, 0, 1, 1, 1]);
    let blocked: Vec<(&str, &str, &str)> = (plan["blocked"].as_array().unwrap().iter())
        .map(|b| {
            (
                b["verdict"].as_str().unwrap(),
                b["cluster"].as_str().unwrap(),
                b["object"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        blocked,
        [
            ("pin-breaks", "ws2019", o("old19").as_str()),
            ("pin-breaks", "ws2022", o("pinned22").as_str()),
            ("rebuild", "ws2019", o("mine").as_str()),
        ],
        "{out}"
    );
    // The text: the table, then the blocked workloads, then each cluster.
    let text = plan_run(&by_context, false);
    assert_eq!(text.code(), 0, "{text}");
    let t = &text.stdout;
    for want in [
        "winlint plan: a fleet, 2 cluster(s): 6 Windows workload(s), 3 blocked",
        "ws2019            1        1             0            0      1        0           0        2          3",
        "total             2        1             0            0      1        1           1        3          6",
        "######## cluster ws2022 ########",
    ] {
        assert!(t.contains(want), "{want:?} not in\n{t}");
    }
    let at = |s: &str| t.find(s).unwrap_or_else(|| panic!("{s:?} not in\n{t}"));
    assert!(at("Blocked (3):") < at("######## cluster ws2019"), "{t}");
    // --fail-on across the fleet: a verdict of either cluster fails it, one of neither not.
    for (fail_on, code) in [("rebuild", 1), ("unknown", 1), ("needs-hyperv", 0)] {
        let mut a = by_context.to_vec();
        a.extend(["--fail-on", fail_on]);
        let out = plan_run(&a, true);
        assert_eq!(out.code(), code, "--fail-on {fail_on}\n{out}");
    }
    // A cluster that cannot be read: the others planned, the error reported, exit 2.
    let mut a = by_context.to_vec();
    a.extend(["--context", "gone", "--format", "markdown"]);
    let out = plan_run(&a, false);
    assert_eq!(out.code(), 2, "{out}");
    assert!(out.stdout.contains("| `gone` | not read: "), "{out}");
    assert!(
        out.stdout
            .contains("| `ws2022` | 1 | 0 | 0 | 0 | 0 | 1 | 1 | 1 | 3 |"),
        "{out}"
    );
    // Two kubeconfigs, each at its current context (both called envtest): told apart by file.
    let (k19, k22) = (
        c19.kubeconfig.to_str().unwrap(),
        c22.kubeconfig.to_str().unwrap(),
    );
    let out = plan_run(&["--kubeconfig", k19, "--kubeconfig", k22, "-n", ns], true);
    assert_eq!(out.code(), 0, "{out}");
    let plan: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(plan["clusters"][0]["cluster"], format!("envtest ({k19})"));
    assert_eq!(counts(&plan["total"]), [2, 1, 0, 0, 1, 1, 1], "{out}");
}

/// The tests (libtest-mimic: a test that lacks an outside tool is reported ignored, with how
/// to get it; tests/skip_support).
fn main() {
    use k8s_support::skip_support::{run, test};
    run(vec![
        test(
            "plan_the_running_workloads_from_the_clusters_facts",
            plan_the_running_workloads_from_the_clusters_facts,
        ),
        test(
            "plan_a_fleet_of_two_clusters_each_against_its_own_facts",
            plan_a_fleet_of_two_clusters_each_against_its_own_facts,
        ),
    ]);
}
