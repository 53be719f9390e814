//! `winlint serve` with `registry.mode: background` against a real registry (issue 18): a
//! request that meets an unknown image is answered from the image's name at once and queues a
//! lookup; later requests are judged by the registry's fact; a registry that is down changes
//! nothing but the facts.

mod registry_support;
mod webhook_support;

use registry_support::{Layout, Registry, entry, tools};
use webhook_support::{Client, args, certs, parse_review, plain_get, start};

fn review(uid: &str, image: &str) -> Vec<u8> {
    serde_json::to_vec(&serde_json::json!({
        "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
        "request": {"uid": uid, "kind": {"group": "", "version": "v1", "kind": "Pod"},
            "resource": {"group": "", "version": "v1", "resource": "pods"},
            "operation": "CREATE", "namespace": "default",
            "object": {"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": "win", "namespace": "default"},
                "spec": {"os": {"name": "windows"},
                    "nodeSelector": {"kubernetes.io/os": "windows"},
                    "tolerations": [{"key": "os", "operator": "Equal", "value": "windows",
                        "effect": "NoSchedule"}],
                    "containers": [{"name": "a", "image": image}]}}}
    }))
    .unwrap()
}

/// A registry holding `app:old` (a single 1809 image) and `app:multi` (1809 + 20348).
fn registry_with_images() -> (Registry, Layout) {
    let reg = Registry::start(None);
    let mut l = Layout::new();
    let w1809 = registry_support::Plat {
        os: "windows",
        arch: "amd64",
        version: Some("10.0.17763.5329"),
    };
    let w2022 = registry_support::Plat {
        os: "windows",
        arch: "amd64",
        version: Some("10.0.20348.2340"),
    };
    let single = l.manifest(&w1809);
    l.tag(&single, "old");
    let multi = l.index(vec![
        entry(&l.manifest(&w1809), &w1809),
        entry(&l.manifest(&w2022), &w2022),
    ]);
    l.tag(&multi, "multi");
    reg.push(l.dir.path(), "old", "app", false);
    reg.push(l.dir.path(), "multi", "app", false);
    (reg, l)
}

async fn background_facts_deny_a_1809_image_on_ltsc2022_nodes_once_known() {
    if tools().is_none() {
        return;
    }
    let (reg, _layout) = registry_with_images();
    let c = certs();
    let cfg = c.dir.path().join("winlint.yaml");
    std::fs::write(
        &cfg,
        "target:\n  windowsBuilds: [ltsc2022]\nregistry:\n  mode: background\n",
    )
    .unwrap();
    let mut a = args(&c);
    a.config = Some(cfg);
    let server = start(a).await;
    let mut client = Client::connect(server.addr, &c.tls.ca_pem, false).await;

    let old = format!("{}/app:old", reg.host);
    let multi = format!("{}/app:multi", reg.host);
    // First sight: judged by the name (build unknown: allowed), a lookup queued.
    let (status, body) = client.post("/validate", review("u0", &old)).await.unwrap();
    assert_eq!(status, 200);
    let first = parse_review(&body, "u0");
    assert_eq!(first["response"]["allowed"], true, "{first}");
    // Later requests read the fact: the single 1809 image is denied on ltsc2022 nodes. The
    // lookup runs in the background; ask again, a bounded number of times.
    let mut denied = None;
    for i in 0..100 {
        let uid = format!("u{}", i + 1);
        let (_, body) = client.post("/validate", review(&uid, &old)).await.unwrap();
        let v = parse_review(&body, &uid);
        if v["response"]["allowed"] == false {
            denied = Some(v);
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let denied = denied.expect("the registry's fact reached the webhook");
    let msg = denied["response"]["status"]["message"].to_string();
    assert!(msg.contains("WIN502") && msg.contains("registry:"), "{msg}");

    // A multi-build list is admitted (its 20348 entry runs), before and after its lookup.
    for i in 0..20 {
        let uid = format!("m{i}");
        let (_, body) = client
            .post("/validate", review(&uid, &multi))
            .await
            .unwrap();
        let v = parse_review(&body, &uid);
        assert_eq!(v["response"]["allowed"], true, "{v}");
        if server
            .state
            .metrics
            .render()
            .contains("registry_lookups_total{registry")
        {
            break;
        }
    }

    // The registry goes away: requests for new images are answered from their names.
    let host = reg.host.clone();
    drop(reg);
    let (status, body) = client
        .post("/validate", review("down", &format!("{host}/app:other")))
        .await
        .unwrap();
    assert_eq!(status, 200);
    assert_eq!(parse_review(&body, "down")["response"]["allowed"], true);

    let (_, text) = plain_get(server.metrics_addr.unwrap(), "/metrics").await;
    assert!(text.contains("winlint_registry_lookups_total"), "{text}");
    assert!(text.contains("winlint_registry_cache_hits_total"), "{text}");
    server.shutdown();
}

/// `sync`: the first request waits (within the budget) and is judged by the fact.
async fn sync_mode_judges_the_first_request_by_the_fact() {
    if tools().is_none() {
        return;
    }
    let (reg, _layout) = registry_with_images();
    let c = certs();
    let cfg = c.dir.path().join("winlint.yaml");
    std::fs::write(
        &cfg,
        "target:\n  windowsBuilds: [ltsc2022]\nregistry:\n  mode: sync\n  syncBudgetMs: 1000\n",
    )
    .unwrap();
    let mut a = args(&c);
    a.config = Some(cfg);
    let server = start(a).await;
    let mut client = Client::connect(server.addr, &c.tls.ca_pem, false).await;
    let old = format!("{}/app:old", reg.host);
    let (_, body) = client.post("/validate", review("s0", &old)).await.unwrap();
    let v = parse_review(&body, "s0");
    assert_eq!(v["response"]["allowed"], false, "{v}");
    let multi = format!("{}/app:multi", reg.host);
    let (_, body) = client
        .post("/validate", review("s1", &multi))
        .await
        .unwrap();
    assert_eq!(parse_review(&body, "s1")["response"]["allowed"], true);
    server.shutdown();
}

/// Issue 26 item 6 (WIN510): an image whose `os.version` revision is newer than the live
/// Windows nodes' kernelVersion revision is denied (the container would fail at start with
/// 0xc0370106); one patched earlier than the nodes is admitted.
async fn an_image_patched_later_than_the_live_nodes_is_denied() {
    if tools().is_none() {
        return;
    }
    let reg = Registry::start(None);
    let mut l = Layout::new();
    for (tag, version) in [("newer", "10.0.20348.2966"), ("older", "10.0.20348.2700")] {
        let m = l.manifest(&registry_support::Plat {
            os: "windows",
            arch: "amd64",
            version: Some(version),
        });
        l.tag(&m, tag);
        reg.push(l.dir.path(), tag, "app", false);
    }
    let c = certs();
    let cfg = c.dir.path().join("winlint.yaml");
    std::fs::write(&cfg, "registry:\n  mode: sync\n  syncBudgetMs: 1000\n").unwrap();
    let mut a = args(&c);
    a.config = Some(cfg);
    let server = start(a).await;
    // Live facts: two ltsc2022 nodes at revision 2849 (kernelVersion), one Linux node.
    let node = |name: &str, os: &str, kernel: &str| -> k8s_openapi::api::core::v1::Node {
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": name, "labels": {"kubernetes.io/os": os}},
            "spec": {"taints": if os == "windows" {
                serde_json::json!([{"key": "os", "value": "windows", "effect": "NoSchedule"}])
            } else { serde_json::json!([]) }},
            "status": {"nodeInfo": {"operatingSystem": os, "kernelVersion": kernel}}}))
        .unwrap()
    };
    let nodes = [
        node("win-a", "windows", "10.0.20348.2849"),
        node("win-b", "windows", "10.0.20348.2849"),
        node("lin-a", "linux", "6.1.0"),
    ];
    server
        .state
        .apply_facts(std::sync::Arc::new(winlint::cluster::ClusterFacts::derive(
            &nodes,
            &[],
            &[],
            None,
        )));
    let mut client = Client::connect(server.addr, &c.tls.ca_pem, false).await;
    let (_, body) = client
        .post(
            "/validate",
            review("n0", &format!("{}/app:newer", reg.host)),
        )
        .await
        .unwrap();
    let v = parse_review(&body, "n0");
    assert_eq!(v["response"]["allowed"], false, "{v}");
    let msg = v["response"]["status"]["message"].to_string();
    assert!(
        msg.contains("WIN510") && msg.contains("10.0.20348.2966") && msg.contains("win-a"),
        "{msg}"
    );
    let (_, body) = client
        .post(
            "/validate",
            review("o0", &format!("{}/app:older", reg.host)),
        )
        .await
        .unwrap();
    let v = parse_review(&body, "o0");
    assert_eq!(v["response"]["allowed"], true, "{v}");
    server.shutdown();
}

fn a_sync_budget_over_one_second_is_refused() {
    let e = winlint::config::Config::from_yaml(
        "registry:\n  mode: sync\n  syncBudgetMs: 5000\n",
        "w.yaml",
    )
    .unwrap_err();
    assert!(e.to_string().contains("at most 1000"), "{e}");
}

/// The tests (libtest-mimic: a test that lacks an outside tool is reported ignored, with how
/// to get it; tests/skip_support).
fn main() {
    use registry_support::skip_support::{multi_thread, run, test};
    run(vec![
        test(
            "background_facts_deny_a_1809_image_on_ltsc2022_nodes_once_known",
            || multi_thread(background_facts_deny_a_1809_image_on_ltsc2022_nodes_once_known()),
        ),
        test("sync_mode_judges_the_first_request_by_the_fact", || {
            multi_thread(sync_mode_judges_the_first_request_by_the_fact())
        }),
        test(
            "an_image_patched_later_than_the_live_nodes_is_denied",
            || multi_thread(an_image_patched_later_than_the_live_nodes_is_denied()),
        ),
        test(
            "a_sync_budget_over_one_second_is_refused",
            a_sync_budget_over_one_second_is_refused,
        ),
    ]);
}
