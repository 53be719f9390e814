//! Issue 15 through a real kube-apiserver (tests/k8s_support): with `failurePolicy: Ignore` (the
//! chart's default) a webhook that is starved into timing out admits pods unchecked. While
//! clients announce 100 MiB bodies and trickle slow ones at `winlint serve`, the API server's
//! own calls must still be answered: two servercore:ltsc2019 pods without a selector are
//! DENIED, not stored. Skips without `KUBEBUILDER_ASSETS`, except under `CI=true`.

mod k8s_support;
mod webhook_support;

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use k8s_support::{Webhook, cluster};
use serde_json::json;
use tokio::io::AsyncWriteExt;
use webhook_support::{client_config, tls_connect};

/// The attackers' target and switches.
struct Target {
    addr: SocketAddr,
    ca: String,
    stop: Arc<AtomicBool>,
    connected: Arc<AtomicUsize>,
}

/// A connection that announces `head` and then sends `trickle` every `every` until stopped
/// (reconnecting when cut).
fn attack(
    rt: &tokio::runtime::Runtime,
    t: &Target,
    head: &'static str,
    trickle: &'static [u8],
    every: Duration,
) {
    let (addr, ca) = (t.addr, t.ca.clone());
    let (stop, connected) = (t.stop.clone(), t.connected.clone());
    rt.spawn(async move {
        while !stop.load(Ordering::Relaxed) {
            let cfg = client_config(&[&ca], &[b"http/1.1"], None);
            let Ok(mut s) = tls_connect(addr, cfg).await else {
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            };
            if s.write_all(head.as_bytes()).await.is_err() {
                continue;
            }
            connected.fetch_add(1, Ordering::Relaxed);
            while !stop.load(Ordering::Relaxed) {
                if s.write_all(trickle).await.is_err() || s.flush().await.is_err() {
                    break;
                }
                tokio::time::sleep(every).await;
            }
        }
    });
}

fn bad_pods_are_denied_while_the_webhook_is_attacked() {
    let Some(c) = cluster() else { return };
    let wh = Webhook::start_with_policy(
        &c,
        None,
        &["--max-inflight-bytes", "1048576", "--max-concurrency", "8"],
        "Ignore",
    );
    let ns = c.unique("hostile");
    wh.namespace(&ns, &[]);
    let ca = std::fs::read_to_string(wh.dir.join("ca.crt")).unwrap();
    let addr: SocketAddr = format!("127.0.0.1:{}", wh.port).parse().unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let t = Target {
        addr,
        ca,
        stop: Arc::new(AtomicBool::new(false)),
        connected: Arc::new(AtomicUsize::new(0)),
    };
    for _ in 0..3 {
        let head = "POST /validate HTTP/1.1\r\nHost: x\r\nContent-Length: 104857600\r\n\r\n";
        attack(&rt, &t, head, b"{", Duration::from_secs(1));
    }
    for _ in 0..4 {
        let head = "POST /mutate HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n";
        attack(&rt, &t, head, b"1\r\n \r\n", Duration::from_millis(300));
    }
    for _ in 0..60 {
        let head = "POST /validate HTTP/1.1\r\nHost: x\r\nContent-Length: 2000\r\n\r\n";
        attack(&rt, &t, head, b" ", Duration::from_millis(500));
    }
    let attack_started = std::time::Instant::now();
    std::thread::sleep(Duration::from_secs(2));
    assert!(
        t.connected.load(Ordering::Relaxed) >= 60,
        "the attack is running"
    );
    for name in ["old-1", "old-2"] {
        let out = c
            .create(&json!({"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": name, "namespace": ns},
                "spec": {"containers": [{"name": "app",
                    "image": "mcr.microsoft.com/windows/servercore:ltsc2019"}]}}))
            .err();
        assert!(
            out.stderr.contains("denied the request"),
            "{name}: {out:#?}"
        );
        let get = c.get("pod", Some(&ns), name).err();
        assert!(
            get.stderr.contains("NotFound") || get.stderr.contains("not found"),
            "{name} was stored: {get:#?}"
        );
    }
    // The slow bodies hold no bytes worth the floor (the budget is not under pressure), so
    // they are cut at their deadline (the 10 s request timeout less its margin), not sooner.
    let cut_by = Duration::from_secs(11);
    if let Some(left) = cut_by.checked_sub(attack_started.elapsed()) {
        std::thread::sleep(left);
    }
    t.stop.store(true, Ordering::Relaxed);
    rt.shutdown_timeout(Duration::from_secs(5));
    let log = wh.log_text();
    assert!(log.contains("slow"), "the server cut slow bodies");
}

/// The tests (libtest-mimic: a test that lacks an outside tool is reported ignored, with how
/// to get it; tests/skip_support).
fn main() {
    use k8s_support::skip_support::{run, test};
    run(vec![test(
        "bad_pods_are_denied_while_the_webhook_is_attacked",
        bad_pods_are_denied_while_the_webhook_is_attacked,
    )]);
}
