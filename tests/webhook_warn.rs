//! Warn mode over real TLS: `webhook.enforcement: warn` admits what would be denied and returns
//! the denial as warnings (`would deny: WIN502: …` after a line naming the object), counted in
//! `winlint_would_deny_total{rule,namespace}`; the namespace label `winlint.io/enforcement`
//! (`warn` or `deny`, from the cluster facts) overrides the configuration per namespace.

mod webhook_support;

use std::collections::BTreeSet;

use serde_json::{Value, json};
use webhook_support::*;

/// A Windows Pod in `ns` whose image is built for Windows Server 2019 while the target's nodes
/// run 2022: WIN502, an error whatever the taints.
fn review(uid: &str, ns: &str) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": uid,
            "kind": {"group": "", "version": "v1", "kind": "Pod"},
            "resource": {"group": "", "version": "v1", "resource": "pods"},
            "operation": "CREATE",
            "namespace": ns,
            "name": "iis",
            "object": {"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": "iis", "namespace": ns},
                "spec": {"os": {"name": "windows"},
                    "nodeSelector": {"kubernetes.io/os": "windows"},
                    "tolerations": [{"operator": "Exists"}],
                    "containers": [{"name": "a",
                        "image": "mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2019"}]}}
        }
    }))
    .unwrap()
}

fn warnings(v: &Value) -> Vec<String> {
    v["response"]["warnings"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|w| w.as_str().unwrap().to_string())
        .collect()
}

async fn serve_with(config: &str) -> (Certs, winlint::server::Server) {
    let c = certs();
    let path = c.dir.path().join("winlint.yaml");
    std::fs::write(&path, config).unwrap();
    let mut a = args(&c);
    a.config = Some(path);
    let server = start(a).await;
    (c, server)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn warn_mode_admits_and_says_what_would_be_denied() {
    let (c, server) = serve_with("webhook:\n  enforcement: warn\n").await;
    let mut client = Client::connect(server.addr, &c.tls.ca_pem, false).await;
    for uid in ["w1", "w2"] {
        let (status, body) = client.post("/validate", review(uid, "shop")).await.unwrap();
        assert_eq!(status, 200);
        let v = parse_review(&body, uid);
        assert_eq!(v["response"]["allowed"], true, "{v}");
        assert!(v["response"].get("status").is_none(), "{v}");
        let w = warnings(&v);
        assert_eq!(
            w[0],
            "Pod shop/iis: winlint: warn mode: admitted; enforcement deny would refuse it (1 error)",
            "{w:?}"
        );
        assert!(
            w[1].starts_with("Pod shop/iis: would deny: WIN502: container \"a\" image "),
            "{w:?}"
        );
        assert!(
            w.iter()
                .all(|l| l.chars().count() <= winlint::admission::MAX_WARNING_CHARS),
            "{w:?}"
        );
    }
    let m = server.metrics_addr.unwrap();
    let (_, text) = plain_get(m, "/metrics").await;
    for line in [
        "winlint_would_deny_total{rule=\"WIN502\",namespace=\"shop\"} 2",
        "winlint_admission_requests_total{endpoint=\"validate\",outcome=\"would_deny\"} 2",
    ] {
        assert!(text.lines().any(|l| l == line), "{line} not in\n{text}");
    }
    server.shutdown();
    server.wait().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_namespace_label_overrides_the_configuration() {
    // Deny by configuration; namespace "trial" opts into warn.
    let (c, server) = serve_with("webhook:\n  enforcement: deny\n").await;
    let mut client = Client::connect(server.addr, &c.tls.ca_pem, true).await;
    server.state.apply_facts(facts(&[
        ("trial", &[("winlint.io/enforcement", "warn")]),
        ("prod", &[]),
        ("typo", &[("winlint.io/enforcement", "audit")]),
    ]));
    let allowed = |v: &Value| v["response"]["allowed"].as_bool().unwrap();
    let (_, b) = client
        .post("/validate", review("t", "trial"))
        .await
        .unwrap();
    let v = parse_review(&b, "t");
    assert!(allowed(&v), "{v}");
    let rules: BTreeSet<String> = warnings(&v)
        .iter()
        .filter_map(|w| winlint::admission::warnings::unnamed(w).strip_prefix("would deny: "))
        .map(|w| w[..6].to_string())
        .collect();
    assert_eq!(rules, BTreeSet::from(["WIN502".to_string()]));
    for ns in ["prod", "typo"] {
        let (_, b) = client.post("/validate", review(ns, ns)).await.unwrap();
        let v = parse_review(&b, ns);
        assert!(
            !allowed(&v),
            "{ns}: an unknown label value is no override: {v}"
        );
        assert_eq!(v["response"]["status"]["code"], 403);
    }
    server.shutdown();
    server.wait().await;

    // Warn by configuration; namespace "prod" insists on deny.
    let (c, server) = serve_with("webhook:\n  enforcement: warn\n").await;
    let mut client = Client::connect(server.addr, &c.tls.ca_pem, false).await;
    server.state.apply_facts(facts(&[
        ("prod", &[("winlint.io/enforcement", "deny")]),
        ("dev", &[]),
    ]));
    let (_, b) = client.post("/validate", review("p", "prod")).await.unwrap();
    assert!(!allowed(&parse_review(&b, "p")));
    let (_, b) = client.post("/validate", review("d", "dev")).await.unwrap();
    assert!(allowed(&parse_review(&b, "d")));
    server.shutdown();
    server.wait().await;
}

/// Mutation is the same in both modes: a fix makes a pod run and never refuses one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn warn_mode_still_mutates() {
    let (c, server) = serve_with("webhook:\n  enforcement: warn\n").await;
    let mut client = Client::connect(server.addr, &c.tls.ca_pem, false).await;
    let (_, b) = client.post("/mutate", windows_review("m")).await.unwrap();
    let v = parse_review(&b, "m");
    assert!(v["response"]["patch"].is_string(), "{v}");
    server.shutdown();
    server.wait().await;
}
