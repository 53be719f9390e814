//! A registry answer is hostile input (issue 30, item 4): the pod author chooses the registry.
//! Against a loopback fake registry (`registry_support::Fake`, no outside tool needed):
//!
//! * the densest manifest (`[0,0,…]`, 4 MiB) and dense documents under the cap: the memory a
//!   lookup allocates, measured by a counting allocator in this test binary, stays a small
//!   multiple of the manifest cap, for one lookup and for eight in one pod;
//! * 160 000 registries named by pods: `/metrics` text stays small (bounded labels) and the
//!   backoff map bounded;
//! * a poisoned repository (an oversized config, a dense manifest, 5xx) of a shared registry:
//!   the other repositories are still looked up and judged by their facts;
//! * `serve`'s sync mode never runs more than `max_in_flight` lookups (counted at the fake).
//!
//! Each test prints its figures (`--nocapture`): the closing note of issue 30 quotes them.

mod registry_support;
mod webhook_support;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use registry_support::{Fake, OCI_INDEX, OCI_MANIFEST, Reply};
use serde_json::json;
use webhook_support::{Client, args, certs, parse_review, start};
use winlint::config::{RegistryFile, RegistryMode};
use winlint::model::image_facts::MAX_MANIFEST_BYTES;
use winlint::registry::client::sha256;
use winlint::registry::http::HttpError;
use winlint::registry::serve::ServeImages;
use winlint::registry::{
    Credentials, Keyring, Limits, LookupError, RegistryClient, RegistryMetrics, Resolver, Settings,
};
use winlint::windows::WS2019;

/// Counts the bytes live on each thread and their peak (the lookups run on a current-thread
/// runtime, so their allocations are this thread's; the fake registry's threads are not).
struct Counting;

thread_local! {
    static LIVE: Cell<i64> = const { Cell::new(0) };
    static PEAK: Cell<i64> = const { Cell::new(0) };
}

fn note(delta: i64) {
    // `try_with`: thread-locals may be gone while a thread exits.
    let _ = LIVE.try_with(|l| {
        let now = l.get() + delta;
        l.set(now);
        let _ = PEAK.try_with(|p| p.set(p.get().max(now)));
    });
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note(layout.size() as i64);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        note(-(layout.size() as i64));
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // The old and the new block are both live while the bytes move.
        note(new_size as i64);
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        note(-(layout.size() as i64));
        p
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// The peak of bytes live on this thread above where it started, while `f` runs.
fn peak_during<T>(f: impl FnOnce() -> T) -> (T, u64) {
    let base = LIVE.with(Cell::get);
    PEAK.with(|p| p.set(base));
    let out = f();
    let peak = PEAK.with(Cell::get);
    (out, (peak - base).max(0) as u64)
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn limits() -> Limits {
    Limits {
        connect: Duration::from_secs(2),
        read: Duration::from_secs(5),
        max_body: 4 << 20,
        max_redirects: 5,
    }
}

fn resolver(settings: Settings) -> Resolver {
    Resolver::new(
        RegistryClient::new(limits(), Credentials::new(Keyring::default())),
        settings,
        RegistryMetrics::default(),
    )
}

fn full(content_type: &str, body: Vec<u8>) -> Reply {
    Reply::Full(
        200,
        vec![
            ("Content-Type".into(), content_type.into()),
            ("Docker-Content-Digest".into(), sha256(&body)),
        ],
        body,
    )
}

/// The attack: a 4 MiB manifest list of `[0,0,…]`.
fn dense_zeros(bytes: usize) -> Vec<u8> {
    let head = format!(r#"{{"schemaVersion":2,"mediaType":"{OCI_INDEX}","manifests":["#);
    let mut b = head.into_bytes();
    while b.len() + 4 < bytes {
        b.extend_from_slice(b"0,");
    }
    b.extend_from_slice(b"0]}");
    b
}

/// A real-looking one-entry Windows list preceded by `pad` bytes of `[0,0,…]` in a field
/// winlint does not read (under the cap: parsed, and the padding skipped).
fn padded_windows_list(pad: usize) -> Vec<u8> {
    let zeros = vec!["0"; pad / 2].join(",");
    format!(
        r#"{{"schemaVersion":2,"mediaType":"{OCI_INDEX}","junk":[{zeros}],"manifests":[{{"mediaType":"{OCI_MANIFEST}","digest":"sha256:{}","size":1,"platform":{{"os":"windows","architecture":"amd64","os.version":"10.0.17763.1"}}}}]}}"#,
        "1".repeat(64)
    )
    .into_bytes()
}

#[test]
fn the_densest_manifest_costs_a_small_multiple_of_the_cap() {
    let dense = Arc::new(dense_zeros(4 << 20));
    let padded = Arc::new(padded_windows_list(MAX_MANIFEST_BYTES - 1024));
    let (d, p) = (dense.clone(), padded.clone());
    let fake = Fake::start(move |req, _| {
        if req.path.contains("/padded/") {
            full(OCI_INDEX, p.to_vec())
        } else {
            full(OCI_INDEX, d.to_vec())
        }
    });
    let rt = runtime();
    let r = resolver(Settings::default());
    // Warm up (the connection pool, TLS provider, lazy statics) on a reference not measured.
    let _ = rt.block_on(r.resolve(&format!("{}/warm/up:1", fake.addr)));

    let one = format!("{}/dense/app:1", fake.addr);
    let (out, peak_one) = peak_during(|| rt.block_on(r.resolve(&one)));
    assert_eq!(
        out.unwrap_err(),
        LookupError::Http(HttpError::TooLarge(MAX_MANIFEST_BYTES))
    );
    // A fact about the reference: remembered, no request, no backoff.
    let before = fake.requests().len();
    let again = rt.block_on(r.resolve(&one)).unwrap_err();
    assert!(matches!(again, LookupError::Http(HttpError::TooLarge(_))));
    assert_eq!(fake.requests().len(), before);
    assert_eq!(r.backoff_len(), 0);

    // Dense but under the cap: read, the padding skipped without being built.
    let (out, peak_padded) =
        peak_during(|| rt.block_on(r.resolve(&format!("{}/padded/app:1", fake.addr))));
    assert_eq!(out.unwrap().windows_builds(), vec![WS2019]);

    // Eight in one pod, at once.
    let refs: BTreeSet<String> = (0..8)
        .map(|i| format!("{}/dense/app{i}:1", fake.addr))
        .collect();
    let ((facts, failed), peak_eight) =
        peak_during(|| rt.block_on(winlint::registry::source::resolve_all(&r, &refs)));
    assert!(facts.is_empty());
    assert_eq!(failed.len(), 8);

    eprintln!(
        "peak bytes allocated by a lookup: the 4 MiB dense manifest {peak_one}, a dense list \
         under the cap ({} bytes) {peak_padded}, eight dense manifests at once {peak_eight} \
         (manifest cap {MAX_MANIFEST_BYTES})",
        padded.len()
    );
    let cap = MAX_MANIFEST_BYTES as u64;
    assert!(peak_one < 4 * cap, "one lookup: {peak_one} bytes");
    assert!(peak_padded < 4 * cap, "a dense list: {peak_padded} bytes");
    assert!(
        peak_eight < 8 * 4 * cap,
        "eight lookups: {peak_eight} bytes"
    );
}

/// `VmRSS` and `VmHWM` of this process, in kB.
fn rss_kb() -> (u64, u64) {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |k: &str| {
        s.lines()
            .find_map(|l| l.strip_prefix(k))
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

#[test]
fn a_hundred_and_sixty_thousand_registries_keep_metrics_and_backoff_bounded() {
    let n: usize = std::env::var("WINLINT_TEST_REGISTRIES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(160_000);
    // Every registry answers 503 (a transport failure: each repository backs off), through
    // the loopback mirror, so no name leaves the machine.
    let fake = Fake::start(|_, _| Reply::Full(503, vec![], vec![]));
    let rt = runtime();
    let settings = Settings::default();
    let capacity = settings.capacity;
    let metrics = RegistryMetrics::with_hosts(["registry.corp.example"]);
    let mut registry = prometheus_client::registry::Registry::with_prefix("winlint");
    metrics.register(&mut registry);
    let client = RegistryClient::new(limits(), Credentials::new(Keyring::default()))
        .with_mirror(&fake.addr)
        .unwrap();
    let r = Resolver::new(client, settings, metrics);
    let refs: BTreeSet<String> = (0..n)
        .map(|i| format!("r{i}.attacker.example/app:1"))
        .chain(["registry.corp.example/app:1".to_string()])
        .chain(["team.azurecr.io/app:1".to_string()])
        .collect();
    let (facts, failed) = rt.block_on(winlint::registry::source::resolve_all(&r, &refs));
    assert!(facts.is_empty());
    assert_eq!(failed.len(), n + 2);
    assert!(
        failed
            .iter()
            .all(|(_, e)| matches!(e, LookupError::Status { status: 503, .. })),
        "{:?}",
        failed.first()
    );
    let mut text = String::new();
    prometheus_client::encoding::text::encode(&mut text, &registry).unwrap();
    let (rss, hwm) = rss_kb();
    eprintln!(
        "{n} registries: /metrics {} bytes, backoff entries {} (capacity {capacity}), \
         VmRSS {rss} kB, VmHWM {hwm} kB",
        text.len(),
        r.backoff_len()
    );
    assert!(text.len() < 64 << 10, "/metrics is {} bytes", text.len());
    assert!(text.contains(r#"registry="other""#), "{text}");
    assert!(
        text.contains(r#"registry="registry.corp.example""#),
        "{text}"
    );
    assert!(text.contains(r#"registry="azurecr.io""#), "{text}");
    assert!(!text.contains("attacker"), "{text}");
    assert!(r.backoff_len() <= capacity, "{}", r.backoff_len());
    assert!(r.backoff_len() > 0);
}

/// A 1809 list for the victims, a config of 8 MiB for `tenant/poison:big`, a
/// config whose descriptor declares 5 MiB for `tenant/poison:declared`, the dense manifest for
/// `tenant/poison:dense`, 500 for `tenant/flaky`.
fn shared_registry() -> Fake {
    let victim = padded_windows_list(0);
    let dense = dense_zeros(4 << 20);
    let config_digest = format!("sha256:{}", "c".repeat(64));
    let single = |size: u64| {
        json!({"schemaVersion": 2, "mediaType": OCI_MANIFEST,
            "config": {"mediaType": "application/vnd.oci.image.config.v1+json",
                       "digest": config_digest, "size": size}, "layers": []})
        .to_string()
        .into_bytes()
    };
    let (big, declared) = (single(1000), single(5 << 20));
    Fake::start(move |req, _| {
        let p = req.path.as_str();
        if p.starts_with("/v2/shared/") {
            full(OCI_INDEX, victim.clone())
        } else if p.starts_with("/v2/tenant/poison/manifests/big") {
            full(OCI_MANIFEST, big.clone())
        } else if p.starts_with("/v2/tenant/poison/manifests/declared") {
            full(OCI_MANIFEST, declared.clone())
        } else if p.starts_with("/v2/tenant/poison/manifests/dense") {
            full(OCI_INDEX, dense.clone())
        } else if p.starts_with("/v2/tenant/poison/blobs/") {
            // Over the 4 MiB body cap of every request before issue 30 too.
            Reply::Endless(8 << 20)
        } else if p.starts_with("/v2/tenant/flaky/") {
            Reply::Full(500, vec![], b"down".to_vec())
        } else {
            Reply::Full(404, vec![], vec![])
        }
    })
}

#[test]
fn a_poisoned_repository_leaves_the_rest_of_its_registry_judged() {
    let fake = shared_registry();
    let rt = runtime();
    let r = resolver(Settings::default());
    let host = &fake.addr;
    let mut victims_judged = 0;
    for round in 0..20 {
        for tag in ["big", "declared", "dense"] {
            let e = rt
                .block_on(r.resolve(&format!("{host}/tenant/poison:{tag}")))
                .unwrap_err();
            assert!(!e.transient(), "{tag}: {e}");
            assert!(!matches!(e, LookupError::Backoff(_)), "{tag}: {e}");
        }
        let flaky = rt.block_on(r.resolve(&format!("{host}/tenant/flaky:{round}")));
        assert!(flaky.is_err());
        // A victim in another repository of the same registry: looked up, judged by its facts
        // (a 1809-only list: denied on ltsc2022 nodes).
        let f = rt
            .block_on(r.resolve(&format!("{host}/shared/victim{round}:1")))
            .unwrap_or_else(|e| panic!("victim {round}: {e}"));
        assert_eq!(f.windows_builds(), vec![WS2019]);
        victims_judged += 1;
    }
    assert_eq!(victims_judged, 20);
    // The flaky repository backs off; it alone.
    let again = rt
        .block_on(r.resolve(&format!("{host}/tenant/flaky:new")))
        .unwrap_err();
    assert!(matches!(again, LookupError::Backoff(_)), "{again}");
    assert_eq!(r.backoff_len(), 1);
    // The poisoned references were asked once each (then remembered as facts), the oversized
    // blob cut at the config cap.
    let reqs = fake.requests();
    let manifests = |tag: &str| {
        reqs.iter()
            .filter(|(l, _)| l.contains(&format!("/tenant/poison/manifests/{tag}")))
            .count()
    };
    assert_eq!(
        (manifests("big"), manifests("declared"), manifests("dense")),
        (1, 1, 1)
    );
    let blobs = reqs.iter().filter(|(l, _)| l.contains("/blobs/")).count();
    assert_eq!(blobs, 1, "the declared-5-MiB config is never fetched");
    let sent = fake
        .seen
        .bytes_sent
        .load(std::sync::atomic::Ordering::SeqCst);
    eprintln!(
        "poisoned repository: {} requests, {sent} bytes sent",
        reqs.len()
    );
}

fn review(images: &[String]) -> Vec<u8> {
    let containers: Vec<_> = images
        .iter()
        .enumerate()
        .map(|(i, image)| json!({"name": format!("c{i}"), "image": image}))
        .collect();
    serde_json::to_vec(&json!({
        "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
        "request": {"uid": "u", "kind": {"group": "", "version": "v1", "kind": "Pod"},
            "operation": "CREATE", "namespace": "default",
            "object": {"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": "p", "namespace": "default"},
                "spec": {"containers": containers}}}
    }))
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sync_mode_runs_at_most_max_in_flight_lookups() {
    let running = Arc::new(AtomicUsize::new(0));
    let most = Arc::new(AtomicUsize::new(0));
    let (r2, m2) = (running.clone(), most.clone());
    let fake = Fake::start(move |_, _| {
        let now = r2.fetch_add(1, Ordering::SeqCst) + 1;
        m2.fetch_max(now, Ordering::SeqCst);
        std::thread::sleep(Duration::from_millis(100));
        r2.fetch_sub(1, Ordering::SeqCst);
        full(OCI_INDEX, padded_windows_list(0))
    });
    let cfg = RegistryFile {
        mode: RegistryMode::Sync,
        sync_budget_ms: Some(1000),
        ..RegistryFile::default()
    };
    let mut registry = prometheus_client::registry::Registry::default();
    let serve = ServeImages::new(&cfg, &mut registry).unwrap();
    let max = Settings::default().max_in_flight;
    // Four requests at once, 100 images each.
    let requests: Vec<Vec<u8>> = (0..4)
        .map(|q| {
            let images: Vec<String> = (0..100)
                .map(|i| format!("{}/app{q}x{i}:1", fake.addr))
                .collect();
            review(&images)
        })
        .collect();
    futures::future::join_all(requests.iter().map(|b| serve.before_review(b))).await;
    let most = most.load(Ordering::SeqCst);
    let asked = fake.requests().len();
    eprintln!("sync mode: 400 images in 4 requests, {asked} requests, at most {most} at once");
    assert!(most <= max, "{most} lookups at once (max_in_flight {max})");
    assert!(most > 1 && asked >= max, "{most} at once, {asked} requests");
}

/// A Windows pod for ltsc2022 nodes with `images`.
fn windows_review(uid: &str, images: &[String]) -> Vec<u8> {
    let containers: Vec<_> = images
        .iter()
        .enumerate()
        .map(|(i, image)| json!({"name": format!("c{i}"), "image": image}))
        .collect();
    serde_json::to_vec(&json!({
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
                    "containers": containers}}}
    }))
    .unwrap()
}

/// Through `winlint serve` (sync mode): while a tenant's repository answers an oversized
/// config, a dense manifest and 500s, every victim pod naming a 1809-only image in another
/// repository of the same registry is denied by the registry's fact.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn victims_of_a_shared_registry_are_denied_while_a_tenant_poisons_it() {
    let fake = shared_registry();
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
    let host = &fake.addr;
    let poison: Vec<String> = ["big", "declared", "dense"]
        .iter()
        .map(|t| format!("{host}/tenant/poison:{t}"))
        .chain([format!("{host}/tenant/flaky:1")])
        .collect();
    let mut denied = 0;
    for round in 0..10 {
        let uid = format!("p{round}");
        let (status, body) = client
            .post("/validate", windows_review(&uid, &poison))
            .await
            .unwrap();
        assert_eq!(status, 200);
        let _ = parse_review(&body, &uid);
        let uid = format!("v{round}");
        let victim = vec![format!("{host}/shared/victim{round}:1")];
        let (_, body) = client
            .post("/validate", windows_review(&uid, &victim))
            .await
            .unwrap();
        let v = parse_review(&body, &uid);
        assert_eq!(v["response"]["allowed"], false, "victim {round}: {v}");
        let msg = v["response"]["status"]["message"].to_string();
        assert!(msg.contains("WIN502") && msg.contains("registry:"), "{msg}");
        denied += 1;
    }
    eprintln!("victims denied by the registry's facts while the tenant poisons it: {denied}/10");
    server.shutdown();
}
