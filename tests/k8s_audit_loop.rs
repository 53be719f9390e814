//! `winlint serve --audit=on` (issue 29 §1) against a real kube-apiserver (tests/k8s_support)
//! with the wgpolicyk8s.io CRDs installed, `serve` started in this process so that the test
//! holds the "is leader" channel: while not leader the loop writes nothing, even when the
//! facts change; once leader it writes a PolicyReport per namespace and deletes winlint's
//! stale ones; a node's taint removed changes the verdict and the report follows, with no
//! period to help (`--audit-interval` is an hour); a namespace emptied loses its report; a
//! replica that stops leading stops auditing. Skips without `KUBEBUILDER_ASSETS`, except under
//! `CI=true`.
//!
//! `WINLINT_AUDIT_SCALE=N` (not in CI): `measure_audit_loop_on_many_pods` creates N Pods and
//! reports the time of one run (`winlint_audit_duration_seconds`) and the peak memory of the
//! `winlint serve` process that ran it.

mod k8s_support;

use std::path::PathBuf;
use std::process::Command;

use k8s_support::{Guard, Node, eventually, http_get, metric};
use serde_json::{Value, json};
use tokio::sync::watch;

const REPORTS: &str = "policyreports.v1alpha2.wgpolicyk8s.io";

/// A serving certificate for `serve` (`winlint manifests --url … --cert-dir`): (cert, key).
fn certificate(c: &Guard) -> (PathBuf, PathBuf) {
    let dir = c.dir.join(c.unique("audit-certs"));
    std::fs::create_dir_all(&dir).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_winlint"))
        .args(["manifests", "--url", "https://127.0.0.1:9"])
        .arg("--cert-dir")
        .arg(&dir)
        .output()
        .expect("winlint manifests runs");
    assert!(out.status.success(), "{out:?}");
    (dir.join("tls.crt"), dir.join("tls.key"))
}

fn iis_spec() -> Value {
    json!({"nodeSelector": {"kubernetes.io/os": "windows"},
        "containers": [{"name": "iis",
            "image": "mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2022"}]})
}

fn metrics(addr: std::net::SocketAddr) -> String {
    http_get(addr.port(), "/metrics")
        .unwrap_or_else(|e| panic!("GET /metrics: {e}"))
        .1
}

/// The value of the metric line that starts with `prefix` (labels included), 0 when absent.
fn value(m: &str, prefix: &str) -> f64 {
    metric(m, prefix).unwrap_or(0.0)
}

/// The results of winlint's report in `ns`: (rule or policy, result) per resource name.
fn results(c: &Guard, ns: &str) -> Vec<(String, String, String)> {
    let mut out: Vec<(String, String, String)> = c
        .managed_reports(REPORTS, Some(ns))
        .iter()
        .flat_map(|r| r["results"].as_array().cloned().unwrap_or_default())
        .map(|r| {
            (
                r["resources"][0]["name"]
                    .as_str()
                    .unwrap_or("-")
                    .to_string(),
                r["rule"]
                    .as_str()
                    .or(r["policy"].as_str())
                    .unwrap()
                    .to_string(),
                r["result"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    out.sort();
    out
}

fn names(c: &Guard, ns: &str) -> Vec<String> {
    let mut n: Vec<String> = c
        .managed_reports(REPORTS, Some(ns))
        .iter()
        .map(|r| r["metadata"]["name"].as_str().unwrap().to_string())
        .collect();
    n.sort();
    n
}

fn taint(c: &Guard, node: &str, t: &str) {
    c.kubectl(&["taint", "node", node, t, "--overwrite"], None)
        .ok();
}

fn label(c: &Guard, node: &str, l: &str) {
    c.kubectl(&["label", "node", node, l, "--overwrite"], None)
        .ok();
}

/// Wait until the evaluation state has been rebuilt since `before` rebuilds (a facts change is
/// in use), then ten debounce windows more: what a leading loop would have audited by then.
/// (An absence cannot be observed otherwise; nothing is asserted on speed.)
fn rebuilt_since(addr: std::net::SocketAddr, before: f64) {
    eventually("the change is in the facts", || {
        let m = metrics(addr);
        (value(&m, "winlint_cluster_facts_rebuilds_total") > before)
            .then_some(())
            .ok_or(m)
    });
    std::thread::sleep(std::time::Duration::from_secs(2));
}

fn the_audit_loop_follows_leadership_facts_and_workloads() {
    let Some(c) = k8s_support::cluster() else {
        return;
    };
    c.install_policy_report_crds();
    let w22 = c.unique("w22");
    let lin = c.unique("lin");
    for n in [
        Node::windows(&w22, "10.0.20348").taint("os=windows:NoSchedule"),
        Node::linux(&lin),
    ] {
        c.create_node(&n);
    }
    let shop = c.unique("shop");
    let tools = c.unique("tools");
    c.create_namespace(&shop, &[]);
    c.create_namespace(&tools, &[]);
    c.deployment(&shop, "iis", iis_spec());
    c.deployment(
        &tools,
        "nginx",
        json!({"nodeSelector": {"kubernetes.io/os": "linux"},
            "containers": [{"name": "nginx", "image": "nginx:1.27"}]}),
    );
    // A part left by an earlier, larger audit: stale now.
    c.apply(
        &json!({"apiVersion": "wgpolicyk8s.io/v1alpha2", "kind": "PolicyReport",
        "metadata": {"name": "winlint-2", "namespace": shop,
            "labels": {"app.kubernetes.io/managed-by": "winlint"}},
        "summary": {"pass": 0, "fail": 1, "warn": 0, "error": 0, "skip": 0}, "results": []}),
    )
    .ok();

    let (cert, key) = certificate(&c);
    let (leader, leader_rx) = watch::channel(false);
    let mut args =
        winlint::server::ServeArgs::new("127.0.0.1:0".parse().unwrap(), cert.clone(), key.clone());
    args.metrics_listen = Some("127.0.0.1:0".parse().unwrap());
    args.cluster_facts = winlint::server::FactsMode::On;
    args.cluster = winlint::cluster::ClusterArgs {
        kubeconfig: Some(c.kubeconfig.clone()),
        context: None,
    };
    args.audit = winlint::server::AuditMode::On;
    // No period within the test: every run comes from leadership or a facts change.
    args.audit_interval = 3600.0;
    args.audit_debounce = 0.2;
    args.audit_leader = Some(leader_rx);
    let rt = k8s_support::runtime();
    let server = rt
        .block_on(winlint::server::start(args))
        .expect("serve starts");
    let addr = server.metrics_addr.unwrap();

    // Not leader: the facts arrive and change (a taint added), nothing is audited.
    let rebuilt = eventually("the facts are in use", || {
        let m = metrics(addr);
        match metric(&m, "winlint_cluster_facts_synced") {
            Some(1.0) => Ok(value(&m, "winlint_cluster_facts_rebuilds_total")),
            _ => Err(m),
        }
    });
    label(&c, &lin, "pool=a");
    rebuilt_since(addr, rebuilt);
    let m = metrics(addr);
    assert_eq!(value(&m, "winlint_leader"), 0.0, "{m}");
    assert_eq!(value(&m, "winlint_audit_runs_total"), 0.0, "{m}");
    assert_eq!(names(&c, &tools), Vec::<String>::new());
    assert_eq!(names(&c, &shop), ["winlint-2"]);

    // Leader: the reports are written, the stale part deleted.
    leader.send(true).unwrap();
    let win007 = ("iis".to_string(), "WIN007".to_string(), "fail".to_string());
    eventually("the first audit's reports", || {
        let got = (names(&c, &shop), results(&c, &shop), results(&c, &tools));
        let ok = got.0 == ["winlint"]
            && got.1.contains(&win007)
            && got.2 == [("nginx".into(), "winlint".into(), "pass".into())];
        ok.then_some(()).ok_or(format!("{got:?}"))
    });
    let m = metrics(addr);
    assert_eq!(value(&m, "winlint_leader"), 1.0, "{m}");
    assert_eq!(
        value(
            &m,
            &format!(
                "winlint_audit_findings{{rule=\"WIN007\",severity=\"error\",namespace=\"{shop}\"}}"
            )
        ),
        1.0,
        "{m}"
    );
    assert!(
        value(&m, "winlint_audit_last_success_timestamp_seconds") > 1.7e9,
        "{m}"
    );
    let runs = value(&m, "winlint_audit_runs_total");

    // The Windows node loses its taint: the verdict changes, the report follows.
    taint(&c, &w22, "os-");
    let after = eventually("the report after the taint is gone", || {
        let got = results(&c, &shop);
        (!got.is_empty() && !got.contains(&win007))
            .then_some(got.clone())
            .ok_or(format!("{got:?}"))
    });
    assert!(value(&metrics(addr), "winlint_audit_runs_total") > runs);

    // The tools namespace is emptied: at the next run (a facts change) its report goes.
    for (kind, name) in [
        ("deployment", "nginx"),
        ("replicaset", "nginx-5d4f"),
        ("pod", "nginx-5d4f-x7k2p"),
    ] {
        c.kubectl(&["delete", kind, name, "-n", &tools, "--wait=false"], None)
            .ok();
    }
    label(&c, &lin, "pool=b");
    eventually("the emptied namespace's report is deleted", || {
        let got = names(&c, &tools);
        got.is_empty().then_some(()).ok_or(format!("{got:?}"))
    });

    // No longer leader: a verdict-changing facts change is not audited.
    leader.send(false).unwrap();
    eventually("the loop stands down", || {
        let m = metrics(addr);
        (value(&m, "winlint_leader") == 0.0).then_some(()).ok_or(m)
    });
    let m = metrics(addr);
    let (runs, rebuilt) = (
        value(&m, "winlint_audit_runs_total"),
        value(&m, "winlint_cluster_facts_rebuilds_total"),
    );
    taint(&c, &w22, "os=windows:NoSchedule");
    rebuilt_since(addr, rebuilt);
    assert_eq!(value(&metrics(addr), "winlint_audit_runs_total"), runs);
    assert_eq!(results(&c, &shop), after);
    server.shutdown();
    rt.block_on(server.wait());
}

/// `WINLINT_AUDIT_SCALE=10000 cargo test --test k8s_audit_loop measure -- --nocapture`: N Pods
/// (half Windows, half Linux, each its own top owner: the audit's worst case, a result per
/// Pod) in namespaces of 500, then one audit by a `winlint serve --audit=on` process: the run's
/// time and the process's peak memory (VmHWM). Not run without the variable.
fn measure_audit_loop_on_many_pods() {
    let Ok(n) = std::env::var("WINLINT_AUDIT_SCALE").map(|v| v.parse::<usize>().unwrap()) else {
        eprintln!("skipped: set WINLINT_AUDIT_SCALE=10000 to measure the audit loop");
        return;
    };
    let Some(c) = k8s_support::cluster() else {
        return;
    };
    c.install_policy_report_crds();
    c.create_node(&Node::windows(&c.unique("w22"), "10.0.20348").taint("os=windows:NoSchedule"));
    c.create_node(&Node::linux(&c.unique("lin")));
    let rt = k8s_support::runtime();
    let client = k8s_support::client(&rt, &c.kubeconfig);
    let prefix = c.unique("scale");
    let per_ns = 500;
    let namespaces: Vec<String> = (0..n.div_ceil(per_ns))
        .map(|i| format!("{prefix}-{i}"))
        .collect();
    for ns in &namespaces {
        c.create_namespace(ns, &[]);
    }
    let created = std::time::Instant::now();
    rt.block_on(async {
        use futures::StreamExt;
        let pp = kube::api::PostParams::default();
        futures::stream::iter(0..n)
            .map(|i| {
                let ns = &namespaces[i / per_ns];
                let api: kube::Api<k8s_openapi::api::core::v1::Pod> =
                    kube::Api::namespaced(client.clone(), ns);
                let spec = if i % 2 == 0 {
                    iis_spec()
                } else {
                    json!({"nodeSelector": {"kubernetes.io/os": "linux"},
                        "containers": [{"name": "app", "image": "nginx:1.27",
                            "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}},
                            "env": [{"name": "MODE", "value": "production"}]}]})
                };
                let pod: k8s_openapi::api::core::v1::Pod = serde_json::from_value(json!({
                    "apiVersion": "v1", "kind": "Pod",
                    "metadata": {"name": format!("p{i}"), "namespace": ns,
                        "labels": {"app": "scale", "team": format!("t{}", i % 7)}},
                    "spec": spec}))
                .unwrap();
                let pp = pp.clone();
                async move { api.create(&pp, &pod).await.map(|_| ()) }
            })
            .buffer_unordered(16)
            .for_each(|r| async move { r.expect("pod created") })
            .await;
    });
    eprintln!("{n} pods created in {:.1?}", created.elapsed());
    drop(rt);

    let (cert, key) = certificate(&c);
    let log = c.dir.join(format!("{prefix}.log"));
    let mut child = Command::new(env!("CARGO_BIN_EXE_winlint"))
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--metrics-listen",
            "127.0.0.1:0",
        ])
        .arg("--tls-cert")
        .arg(&cert)
        .arg("--tls-key")
        .arg(&key)
        .arg("--kubeconfig")
        .arg(&c.kubeconfig)
        .args([
            "--audit",
            "on",
            "--audit-interval",
            "3600",
            "--log-format",
            "json",
        ])
        .env_remove("RUST_LOG")
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .expect("winlint serve starts");
    c.track(child.id());
    // A measurement, not a check of speed: waits up to 30 minutes (a debug build on a loaded
    // machine).
    let t = std::time::Instant::now();
    let line = loop {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        if let Some(l) = text.lines().find(|l| l.contains("objects judged in")) {
            break l.to_string();
        }
        assert!(
            t.elapsed() < std::time::Duration::from_secs(1800),
            "no audit run: {text}"
        );
        std::thread::sleep(std::time::Duration::from_millis(500));
    };
    let status = std::fs::read_to_string(format!("/proc/{}/status", child.id())).unwrap();
    let hwm = status
        .lines()
        .find(|l| l.starts_with("VmHWM"))
        .unwrap_or("VmHWM: ?")
        .to_string();
    let _ = child.kill();
    let _ = child.wait();
    let v: Value = serde_json::from_str(&line).unwrap();
    eprintln!(
        "audit of {n} pods: {} | peak memory of winlint serve: {}",
        v["message"].as_str().unwrap_or(&line),
        hwm.trim_start_matches("VmHWM:").trim()
    );
    assert!(
        v["message"]
            .as_str()
            .unwrap()
            .contains(&format!("{n} objects judged")),
        "{line}"
    );
}

/// The tests (libtest-mimic: a test that lacks an outside tool is reported ignored, with how
/// to get it; tests/skip_support).
fn main() {
    use k8s_support::skip_support::{run, test};
    run(vec![
        test(
            "the_audit_loop_follows_leadership_facts_and_workloads",
            the_audit_loop_follows_leadership_facts_and_workloads,
        ),
        test(
            "measure_audit_loop_on_many_pods",
            measure_audit_loop_on_many_pods,
        ),
    ]);
}
