//! High availability on a real kube-apiserver (tests/k8s_support): three `winlint serve`
//! processes with `--leader-elect` on one Lease and one certificate Secret, behind a
//! round-robin TCP proxy in this test that the webhook registration (`failurePolicy: Fail`)
//! points at, as a Service spreads connections over the pods. Under a steady stream of
//! server-side dry-run pod creates, the leader is killed (SIGKILL: its Lease expires), then the
//! next one is stopped (SIGTERM: it releases its Lease). Checked: one leader at a time (the
//! intervals each replica logs, a killed one's closed at the kill), a new leader each time,
//! the certificate controller's passes moving to it, every admission answered after being
//! evaluated (the pod comes back mutated), none failed across the SIGTERM and at most the
//! requests in flight on the killed backend across the SIGKILL. Printed, not asserted: the
//! takeover times and the counts. Skips without `KUBEBUILDER_ASSETS`, except under `CI=true`.

mod k8s_support;

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use k8s_support::{
    Cluster, eventually, free_port, http_get, loopback, metric, register_webhooks, runtime,
};
use kube::api::{Api, PostParams};
use serde_json::{Value, json};

/// Concurrent pod creates of the load (each has at most one request in flight).
const CONCURRENCY: usize = 2;

/// One `winlint serve --leader-elect` replica.
struct Replica {
    name: String,
    metrics: u16,
    log: PathBuf,
    child: Child,
}

impl Replica {
    /// Start replica `i` of `id` on `port`, electing on Lease `ha-<id>` and managing Secret
    /// `certs-<id>` and the caBundles of `winlint-<id>` in `default`.
    fn start(c: &Cluster, id: &str, i: usize, port: u16) -> Replica {
        let dir = c.dir.join(format!("{id}-{i}"));
        std::fs::create_dir_all(&dir).unwrap();
        let name = format!("replica-{i}");
        let metrics = free_port();
        let log = c.dir.join(format!("winlint-{id}-{i}.log"));
        let out = std::fs::File::create(&log).unwrap();
        let child = Command::new(env!("CARGO_BIN_EXE_winlint"))
            .args(["serve", "--listen", &format!("127.0.0.1:{port}")])
            .args(["--metrics-listen", &format!("127.0.0.1:{metrics}")])
            .arg("--tls-cert")
            .arg(dir.join("tls.crt"))
            .arg("--tls-key")
            .arg(dir.join("tls.key"))
            .arg("--kubeconfig")
            .arg(&c.kubeconfig)
            .args(["--log-format", "json", "--cluster-facts", "off"])
            .args(["--webhook-configuration", &format!("winlint-{id}")])
            .args(["--certificates-secret", &format!("certs-{id}")])
            .args(["--certificates-namespace", "default"])
            .args(["--certificates-name", "127.0.0.1"])
            .args(["--certificates-check-interval", "0.5"])
            .args(["--cert-reload-interval", "0.2"])
            .args(["--leader-elect", "--lease-name", &format!("ha-{id}")])
            .args(["--lease-namespace", "default", "--lease-identity", &name])
            .args(["--lease-duration", "3", "--lease-renew-deadline", "2"])
            .args(["--lease-retry-period", "0.5"])
            .env_remove("RUST_LOG")
            .stdin(Stdio::null())
            .stdout(out.try_clone().unwrap())
            .stderr(out)
            .spawn()
            .expect("winlint serve starts");
        c.track(child.id());
        Replica {
            name,
            metrics,
            log,
            child,
        }
    }

    fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    fn metrics(&self) -> String {
        http_get(self.metrics, "/metrics").map_or_else(|_| String::new(), |r| r.1)
    }

    /// Whether its `winlint_leader` gauge says it leads (false when it does not answer).
    fn leads(&self) -> bool {
        metric(&self.metrics(), "winlint_leader") == Some(1.0)
    }

    /// Certificate controller passes only a leader runs (not `followed`).
    fn leader_passes(&self) -> f64 {
        let m = self.metrics();
        ["current", "issued", "created", "broken"]
            .iter()
            .filter_map(|o| {
                metric(
                    &m,
                    &format!("winlint_certificate_controller_passes_total{{outcome=\"{o}\"}}"),
                )
            })
            .sum()
    }

    /// Its leadership as it logged it: (start, end) intervals, the last one open.
    fn terms(&self) -> Vec<(Timestamp, Option<Timestamp>)> {
        let mut terms: Vec<(Timestamp, Option<Timestamp>)> = Vec::new();
        for v in self
            .log_text()
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        {
            let (Some(msg), Some(at)) = (v["message"].as_str(), v["timestamp"].as_str()) else {
                continue;
            };
            let at: Timestamp = at.parse().expect("an RFC 3339 timestamp");
            if msg.starts_with("became the leader") {
                terms.push((at, None));
            } else if msg.starts_with("stopped leading") {
                let last = terms.last_mut().expect("stopped leading after leading");
                last.1 = Some(at);
            }
        }
        terms
    }

    /// When its last term began.
    fn became(&self) -> Timestamp {
        self.terms().last().expect("it leads").0
    }
}

impl Drop for Replica {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Round-robin over `backends`, as a Service does; a backend that refuses the connection is
/// skipped for the next one (counted in `skipped`).
async fn proxy(listener: tokio::net::TcpListener, backends: Vec<u16>, skipped: Arc<AtomicUsize>) {
    let next = AtomicUsize::new(0);
    while let Ok((mut inbound, _)) = listener.accept().await {
        let first = next.fetch_add(1, Ordering::Relaxed);
        let mut out = None;
        for k in 0..backends.len() {
            let port = backends[(first + k) % backends.len()];
            match tokio::net::TcpStream::connect(loopback(port)).await {
                Ok(s) => {
                    out = Some(s);
                    break;
                }
                Err(_) => {
                    skipped.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
        if let Some(mut out) = out {
            tokio::spawn(async move {
                let _ = tokio::io::copy_bidirectional(&mut inbound, &mut out).await;
            });
        }
    }
}

/// What the load saw, per phase in which each request ended (0: before the kill, 1: across
/// the SIGKILL, 2: across the SIGTERM).
#[derive(Default, Debug)]
struct Tally {
    admitted: [usize; 3],
    /// Answered without winlint's mutation: not evaluated.
    unevaluated: [usize; 3],
    failed: [Vec<String>; 3],
}

/// A Windows pod without selectors: winlint pins it to Windows nodes.
fn pod(name: &str, ns: &str) -> Pod {
    serde_json::from_value(json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"containers": [{"name": "iis",
            "image": "mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2022"}]}}))
    .unwrap()
}

fn evaluated(p: &Pod) -> bool {
    p.spec
        .as_ref()
        .and_then(|s| s.node_selector.as_ref())
        .and_then(|s| s.get("kubernetes.io/os"))
        .is_some_and(|os| os == "windows")
}

/// Dry-run creates until `stop`, tallied under the current `phase`.
async fn load(
    api: Api<Pod>,
    worker: usize,
    phase: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
    tally: Arc<Mutex<Tally>>,
) {
    let dry = PostParams {
        dry_run: true,
        ..Default::default()
    };
    let ns = api.namespace().unwrap_or_default().to_string();
    let mut n = 0;
    while !stop.load(Ordering::Relaxed) {
        n += 1;
        let r = api.create(&dry, &pod(&format!("p{worker}-{n}"), &ns)).await;
        // The phase it ended in: a request in flight at a kill counts for that kill.
        let p = phase.load(Ordering::Relaxed);
        let mut t = tally.lock().unwrap();
        match r {
            Ok(created) if evaluated(&created) => t.admitted[p] += 1,
            Ok(_) => t.unevaluated[p] += 1,
            Err(kube::Error::Api(s)) => t.failed[p].push(s.message),
            Err(e) => t.failed[p].push(e.to_string()),
        }
    }
}

/// The one replica whose gauge says it leads, among `live`.
fn the_leader(replicas: &[Replica], live: &[usize]) -> Result<usize, String> {
    let leading: Vec<usize> = live
        .iter()
        .copied()
        .filter(|&i| replicas[i].leads())
        .collect();
    match leading[..] {
        [one] => Ok(one),
        _ => Err(format!("leading: {leading:?}")),
    }
}

fn send_sigterm(pid: u32) {
    // The shell's kill builtin: no dependency on a kill binary being installed.
    let ok = Command::new("sh")
        .args(["-c", &format!("kill -TERM {pid}")])
        .status()
        .unwrap()
        .success();
    assert!(ok, "kill -TERM {pid}");
}

fn three_replicas_elect_one_leader_and_take_over_under_load() {
    let Some(c) = k8s_support::cluster() else {
        return;
    };
    let rt = runtime();
    let id = c.unique("ha");
    let reg = c.dir.join(format!("{id}-registration"));

    // The proxy, and the registration pointing at it (its caBundle is replaced by the leader's
    // certificate controller with the Secret's CA).
    let listener = rt
        .block_on(tokio::net::TcpListener::bind(loopback(0)))
        .unwrap();
    let proxy_port = listener.local_addr().unwrap().port();
    let ports: Vec<u16> = (0..3).map(|_| free_port()).collect();
    let skipped = Arc::new(AtomicUsize::new(0));
    rt.spawn(proxy(listener, ports.clone(), skipped.clone()));
    let out = Command::new(env!("CARGO_BIN_EXE_winlint"))
        .args(["manifests", "--failure-policy", "Fail", "--url"])
        .arg(format!("https://127.0.0.1:{proxy_port}"))
        .arg("--cert-dir")
        .arg(&reg)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let registered = register_webhooks(&c, &id, &String::from_utf8(out.stdout).unwrap());
    let _unregister = Unregister(&c, registered);

    let mut replicas: Vec<Replica> = (0..3)
        .map(|i| Replica::start(&c, &id, i, ports[i]))
        .collect();
    eventually("3 replicas listening", || {
        match replicas
            .iter()
            .all(|r| r.log_text().contains("winlint webhook listening"))
        {
            true => Ok(()),
            false => Err(replicas.iter().map(Replica::log_text).collect()),
        }
    });
    let mut live = vec![0, 1, 2];
    let first = eventually("one leader", || the_leader(&replicas, &live));

    // Admission is live through the proxy (the caBundle injected, the files copied).
    let ns = c.unique("ha");
    c.create_namespace(&ns, &[(k8s_support::WEBHOOK_LABEL, id.as_str())]);
    let api: Api<Pod> = Api::namespaced(k8s_support::client(&rt, &c.kubeconfig), &ns);
    eventually("admission live through the proxy", || {
        let dry = PostParams {
            dry_run: true,
            ..Default::default()
        };
        match rt.block_on(api.create(&dry, &pod("probe", &ns))) {
            Ok(p) if evaluated(&p) => Ok(()),
            other => Err(format!("{other:?}")),
        }
    });

    let phase = Arc::new(AtomicUsize::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let tally = Arc::new(Mutex::new(Tally::default()));
    let workers: Vec<_> = (0..CONCURRENCY)
        .map(|w| {
            rt.spawn(load(
                api.clone(),
                w,
                phase.clone(),
                stop.clone(),
                tally.clone(),
            ))
        })
        .collect();
    // Some admissions before each kill (a count, not a time).
    let admitted_in = |p: usize, n: usize| {
        eventually(&format!("{n} admissions in phase {p}"), || {
            let t = tally.lock().unwrap();
            match t.admitted[p] >= n {
                true => Ok(()),
                false => Err(format!("{t:?}")),
            }
        })
    };
    admitted_in(0, 20);
    // Followers only copy the Secret: a replica that never led ran no pass of the controller
    // (read in this order: a leader logs its term before its first pass).
    for r in &replicas {
        let passes = r.leader_passes();
        assert!(
            passes == 0.0 || !r.terms().is_empty(),
            "{} ran {passes} controller passes without leading",
            r.name
        );
    }

    // 1. SIGKILL the leader: its Lease expires, another replica takes it over.
    phase.store(1, Ordering::Relaxed);
    let killed_at = Timestamp::try_from(SystemTime::now()).unwrap();
    replicas[first].child.kill().unwrap();
    replicas[first].child.wait().unwrap();
    live.retain(|&i| i != first);
    let second = eventually("a new leader after SIGKILL", || {
        the_leader(&replicas, &live)
    });
    let kill_takeover = replicas[second].became().duration_since(killed_at);
    eventually(
        "the certificate controller on the new leader",
        || match replicas[second].leader_passes() {
            n if n > 0.0 => Ok(()),
            _ => Err(replicas[second].metrics()),
        },
    );
    admitted_in(1, 20);

    // 2. SIGTERM the new leader: it steps down, releases the Lease and exits 0.
    phase.store(2, Ordering::Relaxed);
    let termed_at = Timestamp::try_from(SystemTime::now()).unwrap();
    send_sigterm(replicas[second].child.id());
    live.retain(|&i| i != second);
    let third = eventually("a new leader after SIGTERM", || {
        the_leader(&replicas, &live)
    });
    let term_takeover = replicas[third].became().duration_since(termed_at);
    let status = replicas[second].child.wait().unwrap();
    assert!(status.success(), "SIGTERM: {status}");
    eventually(
        "the certificate controller on the last leader",
        || match replicas[third].leader_passes() {
            n if n > 0.0 => Ok(()),
            _ => Err(replicas[third].metrics()),
        },
    );
    admitted_in(2, 20);
    stop.store(true, Ordering::Relaxed);
    for w in workers {
        rt.block_on(w).unwrap();
    }

    // One leader at a time: no two terms overlap (a killed replica's ends at the kill).
    let mut terms: Vec<(String, Timestamp, Timestamp)> = Vec::new();
    for (i, r) in replicas.iter().enumerate() {
        for (from, to) in r.terms() {
            let to = to
                .or((i == first).then_some(killed_at))
                .unwrap_or(Timestamp::MAX);
            terms.push((r.name.clone(), from, to));
        }
    }
    terms.sort_by_key(|t| t.1);
    for w in terms.windows(2) {
        assert!(w[0].2 <= w[1].1, "two leaders at once: {terms:?}");
    }
    assert!(terms.len() >= 3, "three terms: {terms:?}");
    // The Lease names the last leader; it changed hands twice.
    let lease = c
        .get("lease", Some("default"), &format!("ha-{id}"))
        .ok()
        .json();
    assert_eq!(
        lease["spec"]["holderIdentity"], replicas[third].name,
        "{lease}"
    );
    assert!(
        lease["spec"]["leaseTransitions"].as_i64() >= Some(2),
        "{lease}"
    );
    assert!(
        replicas[second].log_text().contains("released Lease"),
        "the SIGTERM'd leader released its Lease"
    );

    let t = tally.lock().unwrap();
    let secs = |d: SignedDuration| d.as_secs_f64();
    eprintln!(
        "takeover after SIGKILL {:.2} s (lease duration 3 s), after SIGTERM {:.2} s (retry period \
         0.5 s); admissions before/SIGKILL/SIGTERM phases: {:?}, unevaluated {:?}, failed {:?} \
         ({}, {}, {}); proxy skipped a dead backend {} times",
        secs(kill_takeover),
        secs(term_takeover),
        t.admitted,
        t.unevaluated,
        t.failed.iter().map(Vec::len).collect::<Vec<_>>(),
        t.failed[0].join("; "),
        t.failed[1].join("; "),
        t.failed[2].join("; "),
        skipped.load(Ordering::Relaxed),
    );
    assert_eq!(t.unevaluated, [0, 0, 0], "answered unevaluated: {t:?}");
    assert!(t.failed[0].is_empty(), "{t:?}");
    // A SIGKILL loses at most what was in flight on the dead backend's connection.
    assert!(t.failed[1].len() <= CONCURRENCY, "{t:?}");
    // A SIGTERM loses nothing: in-flight requests finish, new connections go elsewhere.
    assert!(t.failed[2].is_empty(), "{t:?}");
}

/// Deletes the registration when the test ends, passed or not.
struct Unregister<'a>(&'a Cluster, Vec<(String, String)>);

impl Drop for Unregister<'_> {
    fn drop(&mut self) {
        for (kind, name) in &self.1 {
            let _ = self.0.kubectl(
                &["delete", kind, name, "--ignore-not-found", "--wait=false"],
                None,
            );
        }
    }
}

/// The tests (libtest-mimic: a test that lacks an outside tool is reported ignored, with how
/// to get it; tests/skip_support).
fn main() {
    use k8s_support::skip_support::{run, test};
    run(vec![test(
        "three_replicas_elect_one_leader_and_take_over_under_load",
        three_replicas_elect_one_leader_and_take_over_under_load,
    )]);
}
