//! `winlint audit --policy-report` and Pending Pods (issue 20) against a real kube-apiserver
//! (tests/k8s_support) with the wgpolicyk8s.io CRDs of testdata/policy-report/crd installed:
//! the reports land in the cluster and are read back with kubectl (their normalized content
//! is testdata/policy-report/applied*.json; `WINLINT_BLESS=1` rewrites them), fixing a
//! workload takes its failure away, a namespace left without workloads loses its report, and
//! what `--policy-report` prints is what the API server accepts. A namespace whose findings
//! exceed what one object can hold gets its report in parts, and a namespace whose report the
//! API server refuses (it is being deleted) stops nothing: the others are written, the failure
//! is in the ClusterPolicyReport, on stderr and in the exit code. No scheduler runs: the
//! `PodScheduled=False` condition a scheduler would write is set through the status
//! subresource. Skips without `KUBEBUILDER_ASSETS`, except under `CI=true`.

mod cli_support;
mod k8s_support;

use std::path::Path;

use cli_support::{Out, Run, golden};
use k8s_support::{Guard, Node};
use serde_json::{Value, json};

/// When the results say they were found: `SOURCE_DATE_EPOCH` of every run.
const NOW: &str = "1795000000";
/// When the scheduler gave up on the Pending Pod (its condition's lastTransitionTime).
const PENDING_SINCE: &str = "2026-11-27T10:00:00Z";

fn winlint(args: &[&str]) -> Out {
    let out = Run::new(args)
        .env_remove("KUBECONFIG")
        .env("SOURCE_DATE_EPOCH", NOW)
        .run();
    out.assert_clean_exit();
    out
}

fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn iis_spec(tolerate: bool) -> Value {
    let mut spec = json!({"nodeSelector": {"kubernetes.io/os": "windows"},
        "containers": [{"name": "iis",
            "image": "mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2022"}]});
    if tolerate {
        spec["tolerations"] = json!([{"key": "os", "operator": "Equal", "value": "windows",
            "effect": "NoSchedule"}]);
    }
    spec
}

/// Set what the scheduler writes on a Pod it cannot place.
fn unschedulable(c: &Guard, ns: &str, pod: &str) {
    let status = json!({"status": {"phase": "Pending", "conditions": [{
        "type": "PodScheduled", "status": "False", "reason": "Unschedulable",
        "lastTransitionTime": PENDING_SINCE,
        "message": "0/2 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, \
                    1 node(s) had untolerated taint {os: windows}. preemption: 0/2 nodes are \
                    available: 2 Preemption is not helpful for scheduling."}]}});
    c.kubectl(
        &[
            "patch",
            "pod",
            pod,
            "-n",
            ns,
            "--subresource=status",
            "--type=merge",
            "-p",
            &status.to_string(),
        ],
        None,
    )
    .ok();
}

/// winlint's reports in the cluster, normalized for a golden: the test's namespace names as
/// placeholders, the fields the API server fills (uid, resourceVersion, …) dropped, the uids
/// of the resources checked against the objects' and replaced.
fn reports(c: &Guard, names: &[(&str, &str)]) -> String {
    let mut items = Vec::new();
    // The version winlint writes (the vendored CRDs prefer v1beta1).
    for kind in [
        "policyreports.v1alpha2.wgpolicyk8s.io",
        "clusterpolicyreports.v1alpha2.wgpolicyk8s.io",
    ] {
        for mut r in c.managed_reports(kind, None) {
            let ns = r["metadata"]["namespace"].as_str().map(str::to_string);
            let name = r["metadata"]["name"].clone();
            let labels = r["metadata"]["labels"].clone();
            r["metadata"] = json!({"name": name, "labels": labels});
            if let Some(ns) = ns {
                r["metadata"]["namespace"] = ns.into();
            }
            for res in r["results"]
                .as_array_mut()
                .into_iter()
                .flatten()
                .flat_map(|x| x["resources"].as_array_mut().unwrap())
            {
                let o = c
                    .get(
                        res["kind"].as_str().unwrap(),
                        res["namespace"].as_str(),
                        res["name"].as_str().unwrap(),
                    )
                    .ok()
                    .json();
                assert_eq!(res["uid"], o["metadata"]["uid"], "{res}");
                res["uid"] = "$UID".into();
            }
            items.push(r);
        }
    }
    items.sort_by_key(|r| {
        (
            r["kind"].as_str().unwrap().to_string(),
            r["metadata"]["namespace"].to_string(),
        )
    });
    let mut text = serde_json::to_string_pretty(&items).unwrap() + "\n";
    for (name, placeholder) in names {
        text = text.replace(name, placeholder);
    }
    text
}

fn policy_reports_land_in_the_cluster_and_follow_the_workloads() {
    let Some(c) = cluster_or_skip() else { return };
    // Before the CRDs exist: one line that says what to install, exit code 2.
    let out = winlint(&[
        "audit",
        "-A",
        "--kubeconfig",
        path(&c.kubeconfig),
        "--policy-report=apply",
    ]);
    out.assert_code(2);
    assert!(
        out.stderr
            .contains("the wgpolicyk8s.io/v1alpha2 CRDs are not installed"),
        "{out}"
    );
    c.install_policy_report_crds();
    for n in [
        Node::windows(&c.unique("w22"), "10.0.20348").taint("os=windows:NoSchedule"),
        Node::linux(&c.unique("lin")),
    ] {
        c.create_node(&n);
    }
    let shop = c.unique("shop");
    let tools = c.unique("tools");
    c.create_namespace(&shop, &[]);
    c.create_namespace(&tools, &[]);
    let names = [(shop.as_str(), "$SHOP"), (tools.as_str(), "$TOOLS")];
    let pod = c.deployment(&shop, "iis", iis_spec(false));
    let pod = pod["metadata"]["name"].as_str().unwrap().to_string();
    unschedulable(&c, &shop, &pod);
    let linux = json!({"nodeSelector": {"kubernetes.io/os": "linux"},
        "containers": [{"name": "nginx", "image": "nginx:1.27"}]});
    c.deployment(&tools, "nginx", linux);
    let kc = path(&c.kubeconfig);

    // Pending: the scheduler's message is on the finding that explains it, in text and JSON.
    let out = winlint(&["audit", "-n", &shop, "--kubeconfig", kc, "-o", "json"]);
    out.assert_code(1);
    let report = out.json();
    let win007 = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == "WIN007")
        .unwrap_or_else(|| panic!("no WIN007: {report:#}"));
    let now = format!(
        "Now: Pod {pod} is Pending since {PENDING_SINCE}: Unschedulable: 0/2 nodes are \
         available: 1 node(s) didn't match Pod's node affinity/selector, 1 node(s) had \
         untolerated taint {{os: windows}}."
    );
    let message = win007["message"].as_str().unwrap();
    assert!(message.contains(&now), "{message}");
    assert!(message.contains("it will stay Pending"), "{message}");
    let text = winlint(&["audit", "-n", &shop, "--kubeconfig", kc]);
    assert!(text.stdout.contains(&now), "{text}");

    // apply: one PolicyReport per namespace, read back from the API server.
    let out = winlint(&["audit", "-A", "--kubeconfig", kc, "--policy-report=apply"]);
    out.assert_code(1);
    assert!(
        out.stderr.contains(&format!(
            "policy reports applied: PolicyReport {shop}/winlint, PolicyReport {tools}/winlint"
        )),
        "{out}"
    );
    assert!(
        out.stdout.contains("WIN007"),
        "the report is printed as usual: {out}"
    );
    golden("testdata/policy-report/applied.json", &reports(&c, &names));

    // What `--policy-report` prints is what was applied, and the API server takes it.
    let printed = winlint(&["audit", "-A", "--kubeconfig", kc, "--policy-report"]);
    let uids = regex::Regex::new(r"(?m)^( *uid: ).*$").unwrap();
    let mut yaml = uids.replace_all(&printed.stdout, "${1}$$UID").into_owned();
    for (name, placeholder) in names {
        yaml = yaml.replace(name, placeholder);
    }
    golden("testdata/policy-report/printed.yaml", &yaml);
    let dry = c.kubectl(
        &[
            "apply",
            "--server-side",
            "--field-manager=winlint",
            "--dry-run=server",
            "-f",
            "-",
            "-o",
            "json",
        ],
        Some(&printed.stdout),
    );
    let dry = dry.ok().json();
    let applied: Vec<Value> = winlint::source::load_bytes_values(printed.stdout.as_bytes())
        .unwrap()
        .into_iter()
        .filter(|d| !d.is_null())
        .collect();
    assert_eq!(dry["items"].as_array().map(Vec::len), Some(applied.len()));

    // The workload fixed: its failure is gone, a pass stands in its place.
    c.kubectl(
        &[
            "patch",
            "deployment",
            "iis",
            "-n",
            &shop,
            "--type=merge",
            "-p",
            &json!({"spec": {"template": {"spec": iis_spec(true)}}}).to_string(),
        ],
        None,
    )
    .ok();
    // (No controller rolls it out here: the old Pod stays Pending, the Deployment is clean.)
    let out = winlint(&["audit", "-A", "--kubeconfig", kc, "--policy-report=apply"]);
    out.assert_code(0);
    // The namespace left without workloads: its report is deleted, not left stale.
    for (kind, name) in [
        ("pod", "nginx-5d4f-x7k2p"),
        ("replicaset", "nginx-5d4f"),
        ("deployment", "nginx"),
    ] {
        c.kubectl(&["delete", kind, name, "-n", &tools, "--wait=true"], None)
            .ok();
    }
    let out = winlint(&["audit", "-A", "--kubeconfig", kc, "--policy-report=apply"]);
    out.assert_code(0);
    assert!(
        out.stderr
            .contains(&format!("stale ones deleted: PolicyReport {tools}/winlint")),
        "{out}"
    );
    golden(
        "testdata/policy-report/applied-after-fix.json",
        &reports(&c, &names),
    );

    one_failure_stops_nothing_and_large_reports_are_split(&c);
}

/// A Deployment in `ns` whose template has `containers` Windows containers with Linux security
/// settings: 7 findings each.
fn noisy(c: &Guard, ns: &str, name: &str, containers: usize) {
    let containers: Vec<Value> = (0..containers)
        .map(|i| {
            json!({"name": format!("c{i}"),
                "image": "mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2022",
                "securityContext": {"privileged": true, "runAsUser": 0,
                    "readOnlyRootFilesystem": true, "capabilities": {"add": ["NET_ADMIN"]},
                    "seLinuxOptions": {"level": "s0"}, "allowPrivilegeEscalation": true,
                    "procMount": "Unmasked"}})
        })
        .collect();
    let labels = json!({"app": name});
    c.create(&json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"selector": {"matchLabels": labels}, "template": {"metadata": {"labels": labels},
            "spec": {"nodeSelector": {"kubernetes.io/os": "windows"}, "containers": containers}}}}))
        .ok();
}

/// winlint's PolicyReports of `ns`, by name.
fn policy_reports(c: &Guard, ns: &str) -> Vec<Value> {
    let mut items = c.managed_reports("policyreports.v1alpha2.wgpolicyk8s.io", Some(ns));
    items.sort_by_key(|r| r["metadata"]["name"].as_str().unwrap().to_string());
    items
}

/// Issue 30: `big` holds more findings than one object may (etcd keeps at most 1.5 MiB): its
/// report is split; `doomed` is being deleted, so the API server refuses to create its report:
/// the run goes on, writes the rest and says what failed.
fn one_failure_stops_nothing_and_large_reports_are_split(c: &Guard) {
    let kc = path(&c.kubeconfig);
    let (big, normal, doomed) = (c.unique("big"), c.unique("normal"), c.unique("doomed"));
    for ns in [&big, &normal, &doomed] {
        c.create_namespace(ns, &[]);
    }
    for i in 0..5 {
        noisy(c, &big, &format!("noisy{i}"), 100);
    }
    c.deployment(&normal, "iis", iis_spec(false));
    c.deployment(&doomed, "iis", iis_spec(false));
    // No namespace controller runs: the namespace stays Terminating, its workloads listed.
    c.kubectl(&["delete", "namespace", &doomed, "--wait=false"], None)
        .ok();
    let findings =
        winlint(&["audit", "-n", &big, "--kubeconfig", kc, "-o", "json"]).json()["findings"]
            .as_array()
            .unwrap()
            .len();
    assert!(findings >= 3000, "{findings}");

    let out = winlint(&["audit", "-A", "--kubeconfig", kc, "--policy-report=apply"]);
    out.assert_code(2);
    let failed = format!("PolicyReport {doomed}/winlint not written (");
    assert!(out.stderr.contains(&failed), "{out}");
    assert!(out.stderr.contains("being terminated"), "{out}");
    assert!(
        out.stderr
            .contains(&format!("PolicyReport {normal}/winlint, ")),
        "{out}"
    );
    assert!(
        out.stdout.contains("WIN103"),
        "the report is printed: {out}"
    );
    // The big namespace: in parts, each well under the limit, every finding once.
    let parts = policy_reports(c, &big);
    let names: Vec<&str> = parts
        .iter()
        .map(|r| r["metadata"]["name"].as_str().unwrap())
        .collect();
    assert!(names.len() >= 4 && names[0] == "winlint", "{names:?}");
    assert!(
        names[1..].iter().all(|n| n.starts_with("winlint-")),
        "{names:?}"
    );
    let (mut results, mut total) = (0, 0);
    for r in &parts {
        let bytes = serde_json::to_vec(r).unwrap().len();
        total += bytes;
        assert!(
            bytes < 1024 * 1024,
            "{} is {bytes} bytes",
            r["metadata"]["name"]
        );
        let n = r["results"].as_array().unwrap().len();
        let s = &r["summary"];
        assert_eq!(
            s["fail"].as_u64().unwrap() + s["warn"].as_u64().unwrap(),
            n as u64,
            "{s}"
        );
        results += n;
    }
    assert_eq!(results, findings);
    assert!(
        total > 3 << 19,
        "{total} bytes fit in one object of etcd's 1.5 MiB"
    );
    eprintln!(
        "{findings} results of {big}: {total} bytes in {} parts",
        parts.len()
    );
    assert_eq!(policy_reports(c, &normal).len(), 1);
    assert!(policy_reports(c, &doomed).is_empty());
    // The cluster administrator sees the failure.
    let cluster = c
        .get(
            "clusterpolicyreports.v1alpha2.wgpolicyk8s.io",
            None,
            "winlint",
        )
        .ok()
        .json();
    let errors: Vec<&str> = cluster["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["result"] == "error")
        .filter_map(|r| r["message"].as_str())
        .collect();
    assert!(
        errors
            .iter()
            .any(|m| m.starts_with(&failed) && m.contains("fail")),
        "{cluster:#}"
    );

    // Fewer findings: the parts no longer needed are deleted.
    for i in 1..5 {
        c.delete("deployment", Some(&big), &format!("noisy{i}"))
            .ok();
    }
    let out = winlint(&["audit", "-A", "--kubeconfig", kc, "--policy-report=apply"]);
    out.assert_code(2);
    let left: Vec<String> = policy_reports(c, &big)
        .iter()
        .map(|r| r["metadata"]["name"].as_str().unwrap().to_string())
        .collect();
    assert!(left.len() < names.len(), "{left:?}");
    for gone in &names[left.len()..] {
        assert!(
            out.stderr.contains(&format!("PolicyReport {big}/{gone}")),
            "{gone} not deleted: {out}"
        );
    }
}

fn cluster_or_skip() -> Option<Guard> {
    k8s_support::cluster()
}

/// The tests (libtest-mimic: a test that lacks an outside tool is reported ignored, with how
/// to get it; tests/skip_support).
fn main() {
    use k8s_support::skip_support::{run, test};
    run(vec![test(
        "policy_reports_land_in_the_cluster_and_follow_the_workloads",
        policy_reports_land_in_the_cluster_and_follow_the_workloads,
    )]);
}
