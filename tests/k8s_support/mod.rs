//! A real kube-apiserver for tests, the way controller-runtime's envtest does it.
//!
//! `KUBEBUILDER_ASSETS` names a folder holding `kube-apiserver`, `etcd` and (optionally)
//! `kubectl` (`eval "$(scripts/test-tools.sh envtest)"` makes one in target/k8s-assets; `.ci/run`
//! makes its own). Without it a test is reported as ignored, with how to get the assets
//! (tests/skip_support), except under `CI=true`, where a missing asset fails the test.
//!
//! [`cluster`] starts etcd and kube-apiserver on free loopback ports in a temporary folder once
//! per test binary; every test of the binary shares them. Rust never drops statics, so a
//! watchdog process (its own process group, immune to the terminal's Ctrl-C) polls the test
//! process and, once it is gone, stops the API server, etcd and every `winlint serve` the
//! tests started, then deletes the folder, unless a test failed: then the folder and its logs
//! (`etcd.log`, `kube-apiserver.log`, `winlint-*.log`) stay, and the failing test prints
//! where they are.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

#[path = "../yaml_support/mod.rs"]
pub mod yaml_support;

#[allow(clippy::duplicate_mod)]
#[path = "../metrics_support/mod.rs"]
pub mod metrics_support;

// One file for every support module: a test binary may load it more than once (the copies
// share nothing that matters: tests/skip_support).
#[allow(clippy::duplicate_mod)]
#[path = "../skip_support/mod.rs"]
pub mod skip_support;

/// The admin bearer token's user is in `system:masters`.
pub const ADMIN_TOKEN: &str = "winlint-envtest-admin-token";
/// A user that exists (authenticates) but has no RBAC rights at all.
pub const NOBODY_TOKEN: &str = "winlint-envtest-nobody-token";
/// Users without rights of their own, for tests that grant and revoke RBAC (one per test, so
/// that parallel tests do not see each other's grants): (user, token).
pub const SPARE_USERS: &[(&str, &str)] = &[
    ("alice", "winlint-envtest-alice-token"),
    ("bob", "winlint-envtest-bob-token"),
];

/// How long to wait for the API server to become ready (generous: 2 shared cores).
const APISERVER_READY: Duration = Duration::from_secs(120);
const ETCD_READY: Duration = Duration::from_secs(60);

/// The running API server of this test binary.
pub struct Cluster {
    /// The temporary folder: certificates, kubeconfig, logs.
    pub dir: PathBuf,
    pub port: u16,
    /// `https://127.0.0.1:PORT`
    pub url: String,
    /// CA of the API server's serving certificate (PEM).
    pub ca_pem: String,
    /// A kubeconfig for the admin token (context `envtest`).
    pub kubeconfig: PathBuf,
    /// A kubeconfig for a user without any rights (context `envtest`).
    pub nobody_kubeconfig: PathBuf,
    pub kubectl: PathBuf,
    /// Time until etcd answered `/health`.
    pub etcd_startup: Duration,
    /// Time from starting kube-apiserver until `/readyz` answered 200.
    pub apiserver_startup: Duration,
    pids: Mutex<Vec<u32>>,
}

static CLUSTER: OnceLock<Result<Cluster, String>> = OnceLock::new();
static SEQ: AtomicU32 = AtomicU32::new(0);

/// The assets folder, `None` (after printing why) when tests should skip.
fn assets() -> Option<PathBuf> {
    let missing = |why: String| -> Option<PathBuf> {
        skip_support::skip(
            &format!("needs a real kube-apiserver: {why}"),
            skip_support::GET_ENVTEST,
        )
    };
    let Some(dir) = std::env::var_os("KUBEBUILDER_ASSETS").filter(|d| !d.is_empty()) else {
        return missing("KUBEBUILDER_ASSETS is not set".into());
    };
    let dir = PathBuf::from(dir);
    for bin in ["kube-apiserver", "etcd"] {
        if !dir.join(bin).is_file() {
            return missing(format!("{} has no {bin}", dir.display()));
        }
    }
    if !dir.join("kubectl").is_file() && which("kubectl").is_none() {
        return missing(format!("no kubectl in {} nor on PATH", dir.display()));
    }
    Some(dir)
}

fn which(bin: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p)
            .map(|d| d.join(bin))
            .find(|p| p.is_file())
    })
}

/// The shared API server, started on first use. `None` when the assets are absent and the
/// test should return early (it has said why). Hold the guard for the whole test: if the test
/// panics, the guard keeps the logs and prints their folder.
pub fn cluster() -> Option<Guard> {
    let assets = assets()?;
    let c = CLUSTER.get_or_init(|| start(&assets));
    match c {
        Ok(c) => Some(Guard(c)),
        Err(e) => panic!("the test API server did not start: {e}"),
    }
}

/// More API servers, each with its own etcd, for a test that needs several clusters (a fleet).
static EXTRA: [OnceLock<Result<Cluster, String>>; 2] = [OnceLock::new(), OnceLock::new()];

/// `n` API servers of their own (at most 2), besides the shared one, started at once (in
/// parallel) on first use; `None` as [`cluster`]. A test that uses them may assume no other
/// test creates objects there.
pub fn extra_clusters(n: usize) -> Option<Vec<Guard>> {
    let assets = assets()?;
    std::thread::scope(|s| {
        for once in &EXTRA[..n] {
            let assets = &assets;
            s.spawn(move || once.get_or_init(|| start(assets)));
        }
    });
    Some(
        (EXTRA[..n].iter())
            .map(|once| match once.get().expect("started above") {
                Ok(c) => Guard(c),
                Err(e) => panic!("a test API server did not start: {e}"),
            })
            .collect(),
    )
}

/// One kubeconfig with a context per API server (admin token), `clusters` as (context, URL,
/// CA); the first is the current context.
pub fn fleet_kubeconfig(path: &Path, clusters: &[(&str, &str, &str)]) {
    use base64::Engine as _;
    let (mut c, mut u, mut x) = (String::new(), String::new(), String::new());
    for (name, url, ca_pem) in clusters {
        let ca = base64::engine::general_purpose::STANDARD.encode(ca_pem);
        c.push_str(&format!(
            "- name: {name}\n  cluster:\n    server: {url}\n    certificate-authority-data: {ca}\n"
        ));
        u.push_str(&format!(
            "- name: {name}\n  user:\n    token: {ADMIN_TOKEN}\n"
        ));
        x.push_str(&format!(
            "- name: {name}\n  context:\n    cluster: {name}\n    user: {name}\n"
        ));
    }
    let text = format!(
        "apiVersion: v1\nkind: Config\nclusters:\n{c}users:\n{u}contexts:\n{x}current-context: {}\n",
        clusters[0].0
    );
    std::fs::write(path, text).expect("fleet kubeconfig");
}

/// Derefs to the shared [`Cluster`]; on a failing test keeps the logs and says where.
pub struct Guard(&'static Cluster);

impl std::ops::Deref for Guard {
    type Target = Cluster;
    fn deref(&self) -> &Cluster {
        self.0
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        if std::thread::panicking() {
            let _ = std::fs::write(self.0.dir.join("keep"), b"a test failed\n");
            eprintln!(
                "test failed: API server logs kept in {} (kube-apiserver.log, etcd.log, \
                 winlint-*.log)",
                self.0.dir.display()
            );
        }
    }
}

/// A free loopback port (bound then released: callers retry when they lose the race).
pub fn free_port() -> u16 {
    TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port")
}

/// A free loopback port below the kernel's ephemeral range (`ip_local_port_range`), for a
/// listener that is bound later, after other connections were opened: a port from
/// [`free_port`] may meanwhile become the local port of an outgoing connection (same range),
/// one below that range cannot. Ports are tried in an order that differs per process and
/// call, so parallel tests and test binaries do not pick the same one.
pub fn free_port_outside_ephemeral() -> u16 {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let low: u32 = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|r| r.split_whitespace().next()?.parse().ok())
        .unwrap_or(32768);
    let (first, span) = (10_000u32, low.saturating_sub(10_000).max(1));
    let seed = std::process::id().wrapping_mul(7919);
    for _ in 0..span.min(2000) {
        let i = NEXT.fetch_add(1, Ordering::Relaxed);
        let port = first + seed.wrapping_add(i.wrapping_mul(104_729)) % span;
        let Ok(port) = u16::try_from(port) else {
            continue;
        };
        if TcpListener::bind((Ipv4Addr::LOCALHOST, port)).is_ok() {
            return port;
        }
    }
    panic!("no free loopback port below the ephemeral range")
}

fn start(assets: &Path) -> Result<Cluster, String> {
    let dir = tempfile::Builder::new()
        .prefix("winlint-envtest-")
        .tempdir()
        .map_err(|e| format!("temporary folder: {e}"))?
        .keep();
    let w = |name: &str, text: &str| -> Result<PathBuf, String> {
        let p = dir.join(name);
        std::fs::write(&p, text).map_err(|e| format!("{}: {e}", p.display()))?;
        Ok(p)
    };
    let tls = winlint::manifests::generate_tls(&["127.0.0.1".into(), "localhost".into()], 30)
        .map_err(|e| e.to_string())?;
    let ca = w("ca.crt", &tls.ca_pem)?;
    let cert = w("apiserver.crt", &tls.cert_pem)?;
    let key = w("apiserver.key", &tls.key_pem)?;
    let sa = rcgen::KeyPair::generate().map_err(|e| e.to_string())?;
    let sa_key = w("sa.key", &sa.serialize_pem())?;
    let sa_pub = w("sa.pub", &sa.public_key_pem())?;
    let mut token_lines = format!(
        "{ADMIN_TOKEN},admin,admin-uid,\"system:masters\"\n{NOBODY_TOKEN},nobody,nobody-uid\n"
    );
    for (user, token) in SPARE_USERS {
        token_lines.push_str(&format!("{token},{user},{user}-uid\n"));
    }
    let tokens = w("tokens.csv", &token_lines)?;
    let mut pids = Vec::new();

    // etcd (retried on a lost port race).
    let t0 = Instant::now();
    let mut etcd_port = 0;
    let mut last = String::new();
    for attempt in 0..3 {
        let (client, peer) = (free_port(), free_port());
        let log = log_file(&dir, "etcd.log")?;
        let child = Command::new(assets.join("etcd"))
            .arg("--data-dir")
            .arg(dir.join(format!("etcd-data-{attempt}")))
            .args([
                format!("--listen-client-urls=http://127.0.0.1:{client}"),
                format!("--advertise-client-urls=http://127.0.0.1:{client}"),
                format!("--listen-peer-urls=http://127.0.0.1:{peer}"),
                format!("--initial-advertise-peer-urls=http://127.0.0.1:{peer}"),
                format!("--initial-cluster=default=http://127.0.0.1:{peer}"),
                "--unsafe-no-fsync=true".into(),
                "--log-level=warn".into(),
            ])
            .stdin(Stdio::null())
            .stdout(log.try_clone().map_err(|e| e.to_string())?)
            .stderr(log)
            .spawn()
            .map_err(|e| format!("starting etcd: {e}"))?;
        let mut child = child;
        match wait_until(ETCD_READY, &mut child, || {
            http_get(client, "/health").is_ok_and(|(s, b)| s == 200 && b.contains("true"))
        }) {
            Ok(()) => {
                pids.push(child.id());
                std::mem::forget(child);
                etcd_port = client;
                break;
            }
            Err(e) => last = format!("etcd: {e} (see {})", dir.join("etcd.log").display()),
        }
    }
    if etcd_port == 0 {
        let _ = std::fs::write(dir.join("keep"), b"start failed\n");
        spawn_watchdog(&dir, &pids);
        return Err(last);
    }
    let etcd_startup = t0.elapsed();

    // kube-apiserver, with the flags shared/k8s/README.md lists.
    let t1 = Instant::now();
    let mut port = 0;
    for _ in 0..3 {
        let p = free_port();
        let log = log_file(&dir, "kube-apiserver.log")?;
        let mut child = Command::new(assets.join("kube-apiserver"))
            .args([
                format!("--etcd-servers=http://127.0.0.1:{etcd_port}"),
                format!("--secure-port={p}"),
                "--bind-address=127.0.0.1".into(),
                "--advertise-address=127.0.0.1".into(),
                format!("--tls-cert-file={}", cert.display()),
                format!("--tls-private-key-file={}", key.display()),
                format!("--client-ca-file={}", ca.display()),
                format!("--token-auth-file={}", tokens.display()),
                format!("--service-account-key-file={}", sa_pub.display()),
                format!("--service-account-signing-key-file={}", sa_key.display()),
                "--service-account-issuer=https://kubernetes.default.svc".into(),
                "--authorization-mode=RBAC".into(),
                "--service-cluster-ip-range=10.96.0.0/12".into(),
                "--enable-admission-plugins=NamespaceLifecycle,ServiceAccount,\
                 MutatingAdmissionWebhook,ValidatingAdmissionWebhook"
                    .into(),
                "--allow-privileged=true".into(),
            ])
            .stdin(Stdio::null())
            .stdout(log.try_clone().map_err(|e| e.to_string())?)
            .stderr(log)
            .spawn()
            .map_err(|e| format!("starting kube-apiserver: {e}"))?;
        let r = wait_until(APISERVER_READY, &mut child, || {
            https_get(p, "/readyz", &tls.ca_pem, ADMIN_TOKEN).is_ok_and(|(s, _)| s == 200)
        });
        match r {
            Ok(()) => {
                pids.push(child.id());
                std::mem::forget(child);
                port = p;
                break;
            }
            Err(e) => {
                last = format!(
                    "kube-apiserver: {e} (see {})",
                    dir.join("kube-apiserver.log").display()
                );
                let log =
                    std::fs::read_to_string(dir.join("kube-apiserver.log")).unwrap_or_default();
                if !log.contains("address already in use") {
                    break;
                }
            }
        }
    }
    // From here on the processes are the watchdog's to stop.
    spawn_watchdog(&dir, &pids);
    if port == 0 {
        let _ = std::fs::write(dir.join("keep"), b"start failed\n");
        return Err(last);
    }
    let apiserver_startup = t1.elapsed();
    let url = format!("https://127.0.0.1:{port}");
    let kubeconfig = w(
        "kubeconfig",
        &kubeconfig_text(&url, &tls.ca_pem, ADMIN_TOKEN),
    )?;
    let nobody_kubeconfig = w(
        "kubeconfig-nobody",
        &kubeconfig_text(&url, &tls.ca_pem, NOBODY_TOKEN),
    )?;
    let kubectl = if assets.join("kubectl").is_file() {
        assets.join("kubectl")
    } else {
        which("kubectl").expect("checked in assets()")
    };
    eprintln!(
        "envtest: etcd ready in {:.2?}, kube-apiserver ready in {:.2?} at {url} (folder {})",
        etcd_startup,
        apiserver_startup,
        dir.display()
    );
    Ok(Cluster {
        dir,
        port,
        url,
        ca_pem: tls.ca_pem,
        kubeconfig,
        nobody_kubeconfig,
        kubectl,
        etcd_startup,
        apiserver_startup,
        pids: Mutex::new(pids),
    })
}

fn log_file(dir: &Path, name: &str) -> Result<std::fs::File, String> {
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join(name))
        .map_err(|e| format!("{name}: {e}"))
}

/// Poll `ready` every 200 ms until it holds, the child exits, or `limit` passes (the child is
/// then killed).
fn wait_until(limit: Duration, child: &mut Child, ready: impl Fn() -> bool) -> Result<(), String> {
    let t = Instant::now();
    loop {
        if ready() {
            return Ok(());
        }
        if let Ok(Some(status)) = child.try_wait() {
            return Err(format!("exited early ({status})"));
        }
        if t.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("not ready after {limit:?}"));
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// The watchdog: a shell in its own process group (Ctrl-C in a terminal does not reach it)
/// that waits for this test process to end, then stops every process listed in `pids` (the
/// file grows as tests start `winlint serve`) and removes the folder unless `keep` exists.
// Never waited for: it must outlive this process (its parent, init, reaps it).
#[allow(clippy::zombie_processes)]
fn spawn_watchdog(dir: &Path, pids: &[u32]) {
    use std::os::unix::process::CommandExt;
    let list = dir.join("pids");
    let text: String = pids.iter().map(|p| format!("{p}\n")).collect();
    std::fs::write(&list, text).expect("pids file");
    let script = r#"
trap '' INT HUP
while kill -0 "$1" 2>/dev/null; do sleep 0.5; done
# Newest first: winlint serve, then kube-apiserver, then etcd.
pids=$(tac "$2/pids" 2>/dev/null)
for p in $pids; do kill -TERM "$p" 2>/dev/null; done
for i in 1 2 3 4 5 6 7 8 9 10; do
  alive=""
  for p in $pids; do kill -0 "$p" 2>/dev/null && alive=1; done
  [ -z "$alive" ] && break
  sleep 0.5
done
for p in $pids; do kill -KILL "$p" 2>/dev/null; done
if [ ! -e "$2/keep" ]; then rm -rf "$2"; fi
"#;
    Command::new("sh")
        .arg("-c")
        .arg(script)
        .arg("winlint-envtest-watchdog")
        .arg(std::process::id().to_string())
        .arg(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .expect("the envtest watchdog starts");
}

fn kubeconfig_text(url: &str, ca_pem: &str, token: &str) -> String {
    use base64::Engine as _;
    let ca = base64::engine::general_purpose::STANDARD.encode(ca_pem);
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: envtest\n  cluster:\n    server: {url}\n    \
         certificate-authority-data: {ca}\nusers:\n- name: envtest\n  user:\n    token: {token}\n\
         contexts:\n- name: envtest\n  context:\n    cluster: envtest\n    user: envtest\n\
         current-context: envtest\n"
    )
}

/// Plain HTTP GET on loopback: (status, body).
pub fn http_get(port: u16, path: &str) -> std::io::Result<(u16, String)> {
    let mut s = TcpStream::connect((Ipv4Addr::LOCALHOST, port))?;
    s.set_read_timeout(Some(Duration::from_secs(5)))?;
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    )?;
    read_response(&mut s)
}

/// HTTPS GET with a bearer token, trusting `ca_pem`: (status, body).
pub fn https_get(
    port: u16,
    path: &str,
    ca_pem: &str,
    token: &str,
) -> std::io::Result<(u16, String)> {
    https_request(port, "GET", path, None, ca_pem, token)
}

/// An HTTPS request with a bearer token and an optional JSON body, trusting `ca_pem`: (status,
/// body). One connection per request (`Connection: close`).
pub fn https_request(
    port: u16,
    method: &str,
    path: &str,
    json_body: Option<&str>,
    ca_pem: &str,
    token: &str,
) -> std::io::Result<(u16, String)> {
    use rustls::pki_types::{CertificateDer, ServerName};
    use rustls_pki_types::pem::PemObject;
    let mut roots = rustls::RootCertStore::empty();
    roots
        .add(CertificateDer::from_pem_slice(ca_pem.as_bytes()).map_err(std::io::Error::other)?)
        .map_err(std::io::Error::other)?;
    let cfg = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .map_err(std::io::Error::other)?
    .with_root_certificates(roots)
    .with_no_client_auth();
    let name = ServerName::IpAddress(std::net::IpAddr::from(Ipv4Addr::LOCALHOST).into());
    let conn = rustls::ClientConnection::new(Arc::new(cfg), name).map_err(std::io::Error::other)?;
    let tcp = TcpStream::connect((Ipv4Addr::LOCALHOST, port))?;
    tcp.set_read_timeout(Some(Duration::from_secs(30)))?;
    let mut s = rustls::StreamOwned::new(conn, tcp);
    let body = json_body.unwrap_or("");
    let content = match json_body {
        Some(b) => format!(
            "Content-Type: application/json\r\nContent-Length: {}\r\n",
            b.len()
        ),
        None => String::new(),
    };
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\n\
         {content}Connection: close\r\n\r\n{body}"
    )?;
    s.flush()?;
    read_response(&mut s)
}

fn read_response(s: &mut impl Read) -> std::io::Result<(u16, String)> {
    let mut buf = Vec::new();
    // A peer that closes without close_notify ends the read with an error after the data.
    let r = s.read_to_end(&mut buf);
    if buf.is_empty() {
        r?;
    }
    let text = String::from_utf8_lossy(&buf).into_owned();
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .ok_or_else(|| std::io::Error::other(format!("no HTTP status in {text:?}")))?;
    let body = text
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    Ok((status, body))
}

/// What a kubectl run printed.
#[derive(Debug, Clone)]
pub struct Kubectl {
    pub success: bool,
    pub stdout: String,
    pub stderr: String,
    /// `Warning: …` lines of stderr (admission warnings, deprecations), without the prefix and
    /// without the object winlint names each of its warnings by (`WIN502: …` of
    /// `Deployment shop/iis: WIN502: …`, `winlint::admission::warnings::unnamed`).
    pub warnings: Vec<String>,
    /// The same lines as kubectl printed them, the object's name included.
    pub named: Vec<String>,
}

impl Kubectl {
    /// stdout as JSON (after `-o json`); panics with the whole output otherwise.
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("kubectl printed no JSON ({e}): {self:#?}"))
    }
    /// Panics with the output unless kubectl succeeded.
    pub fn ok(self) -> Self {
        assert!(self.success, "kubectl failed: {self:#?}");
        self
    }
    /// Panics with the output unless kubectl failed.
    pub fn err(self) -> Self {
        assert!(!self.success, "kubectl unexpectedly succeeded: {self:#?}");
        self
    }
}

impl Cluster {
    /// A kubeconfig (context `envtest`) for `token`, written into the folder.
    pub fn kubeconfig_for(&self, name: &str, token: &str) -> PathBuf {
        let p = self.dir.join(format!("kubeconfig-{name}"));
        std::fs::write(&p, kubeconfig_text(&self.url, &self.ca_pem, token)).expect("kubeconfig");
        p
    }

    /// A kubeconfig like the admin's but for another server URL (e.g. a proxy on loopback).
    pub fn kubeconfig_with_server(&self, name: &str, url: &str) -> PathBuf {
        let p = self.dir.join(format!("kubeconfig-{name}"));
        std::fs::write(&p, kubeconfig_text(url, &self.ca_pem, ADMIN_TOKEN)).expect("kubeconfig");
        p
    }

    /// A name nobody else in this binary uses: `prefix-<pid>-<n>`.
    pub fn unique(&self, prefix: &str) -> String {
        format!(
            "{prefix}-{}-{}",
            std::process::id() % 100_000,
            SEQ.fetch_add(1, Ordering::Relaxed)
        )
    }

    /// Run kubectl with the admin kubeconfig; `stdin` is piped in when given.
    pub fn kubectl(&self, args: &[&str], stdin: Option<&str>) -> Kubectl {
        self.kubectl_as(&self.kubeconfig, args, stdin)
    }

    /// Run kubectl with another kubeconfig (e.g. [`Cluster::nobody_kubeconfig`]).
    pub fn kubectl_as(&self, kubeconfig: &Path, args: &[&str], stdin: Option<&str>) -> Kubectl {
        let mut child = Command::new(&self.kubectl)
            .arg("--kubeconfig")
            .arg(kubeconfig)
            .args(["--request-timeout=60s"])
            .args(args)
            .stdin(if stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .env_remove("KUBECONFIG")
            .spawn()
            .expect("kubectl starts");
        if let Some(text) = stdin {
            let mut i = child.stdin.take().unwrap();
            let text = text.to_string();
            // A writer thread: kubectl may print before it has read everything.
            std::thread::spawn(move || {
                let _ = i.write_all(text.as_bytes());
            });
        }
        let out = child.wait_with_output().expect("kubectl runs");
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        let named: Vec<String> = stderr
            .lines()
            .filter_map(|l| l.strip_prefix("Warning: "))
            .map(str::to_string)
            .collect();
        let warnings = named
            .iter()
            .map(|w| winlint::admission::warnings::unnamed(w).to_string())
            .collect();
        Kubectl {
            success: out.status.success(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr,
            warnings,
            named,
        }
    }

    /// `kubectl create -f - -o json` of one object.
    pub fn create(&self, obj: &Value) -> Kubectl {
        self.kubectl(&["create", "-f", "-", "-o", "json"], Some(&obj.to_string()))
    }

    /// `kubectl create --dry-run=server -f - -o json`: what a create would get, stored nowhere.
    pub fn dry_run_create(&self, obj: &Value) -> Kubectl {
        self.kubectl(
            &["create", "--dry-run=server", "-f", "-", "-o", "json"],
            Some(&obj.to_string()),
        )
    }

    /// Grant `user` get, list and watch on the facts every cluster has (nodes, namespaces,
    /// RuntimeClasses) and nothing else, by a ClusterRole and a ClusterRoleBinding both named
    /// by the returned role name; the binding is returned too, for tests that revoke and grant
    /// again. RBAC reaches the authorizer asynchronously: callers wait for the first success.
    pub fn grant_facts_reader(&self, user: &str) -> (String, Value) {
        let role = self.unique("facts-reader");
        let read = ["get", "list", "watch"];
        self.apply(
            &json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": role},
            "rules": [
                {"apiGroups": [""], "resources": ["nodes", "namespaces"], "verbs": read},
                {"apiGroups": ["node.k8s.io"], "resources": ["runtimeclasses"], "verbs": read}]}),
        )
        .ok();
        let binding = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
            "metadata": {"name": role},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}]});
        self.apply(&binding).ok();
        (role, binding)
    }

    /// `kubectl apply --server-side -f - -o json` (objects or a `List`).
    pub fn apply(&self, obj: &Value) -> Kubectl {
        self.kubectl(
            &[
                "apply",
                "--server-side",
                "--force-conflicts",
                "--field-manager=envtest",
                "-f",
                "-",
                "-o",
                "json",
            ],
            Some(&obj.to_string()),
        )
    }

    /// `kubectl get KIND NAME [-n NS] -o json`.
    pub fn get(&self, kind: &str, namespace: Option<&str>, name: &str) -> Kubectl {
        let mut args = vec!["get", kind, name, "-o", "json"];
        if let Some(ns) = namespace {
            args.extend(["-n", ns]);
        }
        self.kubectl(&args, None)
    }

    /// `kubectl delete KIND NAME [-n NS] --wait=false`.
    pub fn delete(&self, kind: &str, namespace: Option<&str>, name: &str) -> Kubectl {
        let mut args = vec!["delete", kind, name, "--wait=false"];
        if let Some(ns) = namespace {
            args.extend(["-n", ns]);
        }
        self.kubectl(&args, None)
    }

    /// A namespace with `labels` and its `default` ServiceAccount (no controller-manager
    /// creates it here, and the ServiceAccount admission plugin refuses pods without it).
    /// Install the wgpolicyk8s.io CRDs of testdata/policy-report/crd and wait until they are
    /// served.
    pub fn install_policy_report_crds(&self) {
        for f in ["policyreports", "clusterpolicyreports"] {
            let file = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!(
                "testdata/policy-report/crd/wgpolicyk8s.io_{f}.yaml"
            ));
            self.kubectl(
                &["apply", "--server-side", "-f", file.to_str().unwrap()],
                None,
            )
            .ok();
            self.kubectl(
                &[
                    "wait",
                    "--for=condition=Established",
                    "--timeout=60s",
                    &format!("crd/{f}.wgpolicyk8s.io"),
                ],
                None,
            )
            .ok();
        }
    }

    /// winlint's reports of `kind` (`policyreports.v1alpha2.wgpolicyk8s.io`, …) in `ns`, or in
    /// every namespace.
    pub fn managed_reports(&self, kind: &str, ns: Option<&str>) -> Vec<Value> {
        let scope = match ns {
            Some(ns) => ["-n", ns],
            None => ["-A", ""],
        };
        let mut args = vec!["get", kind];
        args.extend(scope.into_iter().filter(|a| !a.is_empty()));
        args.extend(["-l", "app.kubernetes.io/managed-by=winlint", "-o", "json"]);
        self.kubectl(&args, None).ok().json()["items"]
            .as_array()
            .unwrap()
            .clone()
    }

    /// A Deployment with `spec`, its ReplicaSet and one Pod, owned as the controllers
    /// would own them; the Pod's stored form.
    pub fn deployment(&self, ns: &str, name: &str, spec: Value) -> Value {
        let labels = json!({"app": name});
        let template = json!({"metadata": {"labels": labels}, "spec": spec});
        let d = self
            .create(&json!({"apiVersion": "apps/v1", "kind": "Deployment",
                "metadata": {"name": name, "namespace": ns},
                "spec": {"selector": {"matchLabels": labels}, "template": template}}))
            .ok()
            .json();
        let owner = |kind: &str, o: &Value| {
            json!([{"apiVersion": "apps/v1", "kind": kind, "name": o["metadata"]["name"],
                "uid": o["metadata"]["uid"], "controller": true}])
        };
        let rs = self
            .create(&json!({"apiVersion": "apps/v1", "kind": "ReplicaSet",
                "metadata": {"name": format!("{name}-5d4f"), "namespace": ns,
                    "ownerReferences": owner("Deployment", &d)},
                "spec": {"selector": {"matchLabels": labels}, "template": template}}))
            .ok()
            .json();
        let mut pod = template.clone();
        pod["apiVersion"] = "v1".into();
        pod["kind"] = "Pod".into();
        pod["metadata"]["name"] = format!("{name}-5d4f-x7k2p").into();
        pod["metadata"]["namespace"] = ns.into();
        pod["metadata"]["ownerReferences"] = json!([{"apiVersion": "apps/v1", "kind": "ReplicaSet",
            "name": rs["metadata"]["name"], "uid": rs["metadata"]["uid"], "controller": true}]);
        self.create(&pod).ok().json()
    }

    pub fn create_namespace(&self, name: &str, labels: &[(&str, &str)]) {
        let labels: serde_json::Map<String, Value> = labels
            .iter()
            .map(|(k, v)| ((*k).into(), (*v).into()))
            .collect();
        self.create(&json!({"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": name, "labels": labels}}))
            .ok();
        self.create(&json!({"apiVersion": "v1", "kind": "ServiceAccount",
            "metadata": {"name": "default", "namespace": name}}))
            .ok();
    }

    /// Create a Node (a plain API object: nothing runs on it). The API server adds the
    /// `node.kubernetes.io/not-ready:NoSchedule` taint to every new Node.
    pub fn create_node(&self, node: &Node) -> Value {
        self.create(&node.to_json()).ok().json()
    }

    /// Create a RuntimeClass with `handler`, optional scheduling nodeSelector and tolerations.
    pub fn create_runtime_class(
        &self,
        name: &str,
        handler: &str,
        node_selector: &[(&str, &str)],
        tolerations: Value,
    ) -> Value {
        let sel: serde_json::Map<String, Value> = node_selector
            .iter()
            .map(|(k, v)| ((*k).into(), (*v).into()))
            .collect();
        let mut rc = json!({"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass",
            "metadata": {"name": name}, "handler": handler});
        if !sel.is_empty() || tolerations.as_array().is_some_and(|t| !t.is_empty()) {
            rc["scheduling"] = json!({"nodeSelector": sel, "tolerations": tolerations});
        }
        self.create(&rc).ok().json()
    }

    /// Remember a process for the watchdog to stop when the test binary ends.
    pub fn track(&self, pid: u32) {
        let mut pids = self.pids.lock().unwrap();
        pids.push(pid);
        let text: String = pids.iter().map(|p| format!("{p}\n")).collect();
        // Written whole then renamed: the watchdog never reads half a file.
        let tmp = self.dir.join("pids.tmp");
        std::fs::write(&tmp, text).expect("pids file");
        std::fs::rename(&tmp, self.dir.join("pids")).expect("pids file");
    }
}

/// The DaemonSet controller's own tolerations (pkg/controller/daemon/util
/// `AddOrUpdateDaemonPodTolerations`, Kubernetes 1.32).
pub fn daemon_tolerations(spec: &Value) -> Vec<Value> {
    let mut t = vec![
        ("node.kubernetes.io/not-ready", "NoExecute"),
        ("node.kubernetes.io/unreachable", "NoExecute"),
        ("node.kubernetes.io/disk-pressure", "NoSchedule"),
        ("node.kubernetes.io/memory-pressure", "NoSchedule"),
        ("node.kubernetes.io/pid-pressure", "NoSchedule"),
        ("node.kubernetes.io/unschedulable", "NoSchedule"),
    ];
    if spec["hostNetwork"] == true {
        t.push(("node.kubernetes.io/network-unavailable", "NoSchedule"));
    }
    t.into_iter()
        .map(|(k, e)| json!({"key": k, "operator": "Exists", "effect": e}))
        .collect()
}

/// A Node as the tests create it.
#[derive(Debug, Clone, Default)]
pub struct Node {
    pub name: String,
    pub labels: Vec<(String, String)>,
    /// `key=value:Effect` or `key:Effect`.
    pub taints: Vec<String>,
    /// `status.nodeInfo`; `None` creates a Node without it.
    pub node_info: Option<Value>,
}

impl Node {
    /// A Windows node of `build` (`10.0.17763`, …) with the kubelet's usual labels and
    /// nodeInfo.
    pub fn windows(name: &str, build: &str) -> Node {
        Node {
            name: name.into(),
            labels: vec![
                ("kubernetes.io/os".into(), "windows".into()),
                ("kubernetes.io/arch".into(), "amd64".into()),
                ("kubernetes.io/hostname".into(), name.into()),
                // The kubelet still sets the deprecated beta labels (EKS samples select them).
                ("beta.kubernetes.io/os".into(), "windows".into()),
                ("beta.kubernetes.io/arch".into(), "amd64".into()),
                ("node.kubernetes.io/windows-build".into(), build.into()),
            ],
            taints: vec![],
            node_info: Some(json!({
                "operatingSystem": "windows", "architecture": "amd64",
                "kernelVersion": format!("{build}.2582"),
                "osImage": "Windows Server Datacenter",
                "containerRuntimeVersion": "containerd://1.7.20",
                "kubeletVersion": "v1.32.0", "kubeProxyVersion": "v1.32.0",
                "machineID": "", "systemUUID": "", "bootID": ""})),
        }
    }

    /// A Linux node.
    pub fn linux(name: &str) -> Node {
        Node {
            name: name.into(),
            labels: vec![
                ("kubernetes.io/os".into(), "linux".into()),
                ("kubernetes.io/arch".into(), "amd64".into()),
                ("kubernetes.io/hostname".into(), name.into()),
                // The kubelet still sets the deprecated beta labels (EKS samples select them).
                ("beta.kubernetes.io/os".into(), "linux".into()),
                ("beta.kubernetes.io/arch".into(), "amd64".into()),
            ],
            taints: vec![],
            node_info: Some(json!({
                "operatingSystem": "linux", "architecture": "amd64",
                "kernelVersion": "6.1.0-28-amd64", "osImage": "Debian GNU/Linux 12 (bookworm)",
                "containerRuntimeVersion": "containerd://1.7.20",
                "kubeletVersion": "v1.32.0", "kubeProxyVersion": "v1.32.0",
                "machineID": "", "systemUUID": "", "bootID": ""})),
        }
    }

    pub fn taint(mut self, t: &str) -> Node {
        self.taints.push(t.into());
        self
    }

    pub fn label(mut self, k: &str, v: &str) -> Node {
        self.labels.retain(|(key, _)| key != k);
        self.labels.push((k.into(), v.into()));
        self
    }

    pub fn to_json(&self) -> Value {
        let labels: serde_json::Map<String, Value> = self
            .labels
            .iter()
            .map(|(k, v)| (k.clone(), v.clone().into()))
            .collect();
        let taints: Vec<Value> = self
            .taints
            .iter()
            .map(|t| {
                let (kv, effect) = t.rsplit_once(':').expect("taint key[=value]:Effect");
                match kv.split_once('=') {
                    Some((k, v)) => json!({"key": k, "value": v, "effect": effect}),
                    None => json!({"key": kv, "effect": effect}),
                }
            })
            .collect();
        let mut n = json!({"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": self.name, "labels": labels},
            "spec": {"taints": taints}});
        if let Some(info) = &self.node_info {
            n["status"] = json!({"nodeInfo": info});
        }
        n
    }
}

/// Apply the webhook configurations of `winlint manifests` (`yaml`), renamed after `id`
/// (`winlint-<id>`, webhooks `<id>.<name>`) and narrowed to namespaces labelled
/// `WEBHOOK_LABEL=<id>` so that webhooks of parallel tests do not meet. Returns the kind and
/// name of each, to delete them.
pub fn register_webhooks(cluster: &Cluster, id: &str, yaml: &str) -> Vec<(String, String)> {
    let mut names = Vec::new();
    let mut items = Vec::new();
    for mut doc in yaml_support::yaml_docs(yaml) {
        let kind = doc["kind"].as_str().unwrap_or_default().to_string();
        // `winlint-<id>` (what `{name}` in the flags says), whatever `--url` names them.
        let name = format!("{}-{}", winlint::manifests::NAME, id);
        doc["metadata"]["name"] = name.clone().into();
        for w in doc["webhooks"].as_array_mut().into_iter().flatten() {
            w["name"] = format!("{}.{}", id, w["name"].as_str().unwrap()).into();
            let exprs = w["namespaceSelector"]["matchExpressions"]
                .as_array_mut()
                .expect("winlint's webhooks have a namespaceSelector");
            exprs.push(json!({"key": WEBHOOK_LABEL, "operator": "In",
                    "values": [id]}));
        }
        names.push((kind, name));
        items.push(doc);
    }
    assert!(!items.is_empty(), "winlint manifests --url printed nothing");
    cluster
        .apply(&json!({"apiVersion": "v1", "kind": "List", "items": items}))
        .ok();
    names
}

/// A `winlint serve` process registered with the API server by URL.
pub struct Webhook {
    pub id: String,
    pub port: u16,
    /// Folder with the generated certificate (`ca.crt`, `tls.crt`, `tls.key`) and
    /// `webhooks.yaml`, the output of `winlint manifests --url`.
    pub dir: PathBuf,
    pub log: PathBuf,
    child: Child,
    names: Vec<(String, String)>,
    cluster: &'static Cluster,
}

/// The label that selects the namespaces a [`Webhook`] serves.
pub const WEBHOOK_LABEL: &str = "envtest.winlint.io/webhook";

impl Webhook {
    /// Start `winlint serve` (plus `extra_args`, and `--config` when `config_yaml` is given;
    /// `--cluster-facts off` unless `extra_args` name `--kubeconfig` or `--cluster-facts`)
    /// with a certificate from `winlint manifests --url https://127.0.0.1:PORT --cert-dir`, and
    /// apply that command's webhook configurations, renamed after this webhook and narrowed to
    /// namespaces labelled `WEBHOOK_LABEL=<id>` so that webhooks of parallel tests do not meet.
    /// `{name}` in `extra_args` becomes the name of those configurations (`winlint-<id>`).
    /// Returns once the API server calls it.
    pub fn start(c: &Guard, config_yaml: Option<&str>, extra_args: &[&str]) -> Webhook {
        Self::start_with_policy(c, config_yaml, extra_args, "Fail")
    }

    /// [`Webhook::start`] registered with `failure_policy` (`Fail` or `Ignore`).
    pub fn start_with_policy(
        c: &Guard,
        config_yaml: Option<&str>,
        extra_args: &[&str],
        failure_policy: &str,
    ) -> Webhook {
        let cluster: &'static Cluster = c.0;
        let id = cluster.unique("wh");
        let dir = cluster.dir.join(&id);
        std::fs::create_dir_all(&dir).unwrap();
        let bin = env!("CARGO_BIN_EXE_winlint");
        let mut last = String::new();
        for _ in 0..3 {
            let port = free_port();
            let url = format!("https://127.0.0.1:{port}");
            let config = config_yaml.map(|cfg| {
                let p = dir.join("winlint.yaml");
                std::fs::write(&p, cfg).unwrap();
                p
            });
            let mut manifests = Command::new(bin);
            manifests
                .args([
                    "manifests",
                    "--url",
                    &url,
                    "--failure-policy",
                    failure_policy,
                ])
                .arg("--cert-dir")
                .arg(&dir);
            // The same configuration: `webhook.mutate: false` registers no mutating webhook.
            if let Some(p) = &config {
                manifests.arg("--config").arg(p);
            }
            let out = manifests.output().expect("winlint manifests runs");
            assert!(
                out.status.success(),
                "winlint manifests --url failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            let yaml = String::from_utf8(out.stdout).unwrap();
            std::fs::write(dir.join("webhooks.yaml"), &yaml).unwrap();
            let log = cluster.dir.join(format!("winlint-{id}.log"));
            let mut cmd = Command::new(bin);
            cmd.args(["serve", "--listen", &format!("127.0.0.1:{port}")])
                .arg("--tls-cert")
                .arg(dir.join("tls.crt"))
                .arg("--tls-key")
                .arg(dir.join("tls.key"))
                .args(["--log-format", "json"])
                .args(
                    extra_args
                        .iter()
                        .map(|a| a.replace("{name}", &format!("winlint-{id}"))),
                );
            // Live cluster facts only from the test API server (`--kubeconfig` in
            // `extra_args`), never from whatever cluster this machine's kubeconfig names.
            if !extra_args
                .iter()
                .any(|a| *a == "--kubeconfig" || *a == "--cluster-facts")
            {
                cmd.args(["--cluster-facts", "off"]);
            }
            if let Some(p) = &config {
                cmd.arg("--config").arg(p);
            }
            let f = log_file(&cluster.dir, &format!("winlint-{id}.log")).unwrap();
            let mut child = cmd
                .env_remove("RUST_LOG")
                .stdin(Stdio::null())
                .stdout(f.try_clone().unwrap())
                .stderr(f)
                .spawn()
                .expect("winlint serve starts");
            cluster.track(child.id());
            let listening = wait_until(Duration::from_secs(60), &mut child, || {
                std::fs::read_to_string(&log).is_ok_and(|l| l.contains("winlint webhook listening"))
            });
            if let Err(e) = listening {
                last = format!(
                    "winlint serve: {e}: {}",
                    std::fs::read_to_string(&log).unwrap_or_default()
                );
                continue;
            }
            let mut wh = Webhook {
                id: id.clone(),
                port,
                dir: dir.clone(),
                log,
                child,
                names: vec![],
                cluster,
            };
            wh.register(&yaml);
            wh.wait_called();
            return wh;
        }
        panic!("winlint serve did not start: {last}");
    }

    /// [`Webhook::start`] watching the test API server with `kubeconfig` (the admin's when
    /// `None`), metrics on a free port, plus `config` and `extra` flags.
    pub fn watching(
        c: &Guard,
        kubeconfig: Option<&Path>,
        config: Option<&str>,
        extra: &[&str],
    ) -> Webhook {
        let kc = kubeconfig.unwrap_or(&c.kubeconfig).display().to_string();
        let mut args = vec![
            "--kubeconfig",
            kc.as_str(),
            "--metrics-listen",
            "127.0.0.1:0",
        ];
        args.extend(extra);
        Webhook::start(c, config, &args)
    }

    fn register(&mut self, yaml: &str) {
        self.names = register_webhooks(self.cluster, &self.id, yaml);
    }

    /// The API server picks webhook configurations up asynchronously: dry-run a pod until
    /// winlint logs the request.
    fn wait_called(&self) {
        let ns = format!("{}-probe", self.id);
        self.namespace(&ns, &[]);
        let t = Instant::now();
        let mut n = 0;
        loop {
            n += 1;
            let name = format!("probe-{n}");
            self.cluster
                .dry_run_create(&json!({"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": name, "namespace": ns},
                "spec": {"containers": [{"name": "a", "image": "busybox"}]}}));
            let log = std::fs::read_to_string(&self.log).unwrap_or_default();
            if log
                .lines()
                .any(|l| l.contains("\"admission\"") && l.contains(&format!("\"{name}\"")))
            {
                return;
            }
            assert!(
                t.elapsed() < Duration::from_secs(60),
                "the API server never called webhook {} (log {})",
                self.id,
                self.log.display()
            );
            std::thread::sleep(Duration::from_millis(250));
        }
    }

    /// A namespace served by this webhook (and only this one), with `labels`.
    pub fn namespace(&self, name: &str, labels: &[(&str, &str)]) {
        let mut all = labels.to_vec();
        all.push((WEBHOOK_LABEL, &self.id));
        self.cluster.create_namespace(name, &all);
    }

    /// winlint's log so far.
    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// The process id of this `winlint serve`.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Whether the process is still running (no crash, no exit).
    pub fn running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// The `--metrics-listen` address, as winlint logged it (start it with
    /// `--metrics-listen 127.0.0.1:0`).
    pub fn metrics_port(&self) -> u16 {
        self.log_text()
            .lines()
            .rev()
            .filter(|l| l.contains("winlint webhook listening"))
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .find_map(|v| v["metrics"].as_str()?.parse::<SocketAddr>().ok())
            .expect("winlint serve was started with --metrics-listen")
            .port()
    }

    /// GET `path` on the metrics listener (`/metrics`, `/readyz`): (status, body).
    pub fn get(&self, path: &str) -> (u16, String) {
        http_get(self.metrics_port(), path).unwrap_or_else(|e| panic!("GET {path}: {e}"))
    }
}

impl Drop for Webhook {
    fn drop(&mut self) {
        for (kind, name) in &self.names {
            let _ = self.cluster.kubectl(
                &["delete", kind, name, "--ignore-not-found", "--wait=false"],
                None,
            );
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A two-thread runtime for the tests' own API clients.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// A client of the test API server from `kubeconfig` (one of [`Cluster`]'s).
pub fn client(rt: &tokio::runtime::Runtime, kubeconfig: &Path) -> kube::Client {
    rt.block_on(winlint::cluster::client(
        &winlint::cluster::ClientSource::Kubeconfig {
            path: Some(kubeconfig.to_path_buf()),
            context: None,
        },
    ))
    .expect("client from the test kubeconfig")
}

/// The number in environment variable `name` (measurement sizes), else `default`.
pub fn env_or(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// A generous bound for convergence (no assertion on speed: 2 shared cores).
pub const CONVERGE: Duration = Duration::from_secs(120);

/// Poll `f` every 100 ms until it returns `Ok`, or panic with `what` and the last state after
/// [`CONVERGE`].
pub fn eventually<T>(what: &str, mut f: impl FnMut() -> Result<T, String>) -> T {
    let t = Instant::now();
    loop {
        match f() {
            Ok(v) => return v,
            Err(last) if t.elapsed() > CONVERGE => panic!("{what}: not after {CONVERGE:?}: {last}"),
            Err(_) => std::thread::sleep(Duration::from_millis(100)),
        }
    }
}

/// Wait until `wh` (started with `--metrics-listen`) evaluates with a complete snapshot whose
/// Windows nodes per build are `want` (its `winlint_cluster_windows_nodes` metric).
pub fn wait_windows_nodes(wh: &Webhook, want: &BTreeMap<String, u64>) {
    eventually("the webhook evaluates with the test's nodes", || {
        let m = wh.get("/metrics").1;
        let got = windows_nodes(&m);
        if &got == want && metric(&m, "winlint_cluster_facts_synced") == Some(1.0) {
            Ok(())
        } else {
            Err(format!("want {want:?}, metrics:\n{m}"))
        }
    });
}

/// `winlint_cluster_windows_nodes{build="…"} N` lines.
pub fn windows_nodes(metrics: &str) -> BTreeMap<String, u64> {
    metrics
        .lines()
        .filter_map(|l| l.strip_prefix("winlint_cluster_windows_nodes{build=\""))
        .filter_map(|l| {
            let (build, n) = l.split_once("\"} ")?;
            Some((build.to_string(), n.trim().parse().ok()?))
        })
        .collect()
}

/// The value of a metric ([`metrics_support::metric`]).
#[allow(unused_imports)] // not every test binary reads metrics
pub use metrics_support::metric;

/// The Windows nodes of `nodes` per `node.kubernetes.io/windows-build`, as the
/// `winlint_cluster_windows_nodes` metric counts them.
pub fn windows_builds(nodes: &[Node]) -> BTreeMap<String, u64> {
    let mut want: BTreeMap<String, u64> = BTreeMap::new();
    for n in nodes {
        if let Some((_, b)) = n
            .labels
            .iter()
            .find(|(k, _)| k == "node.kubernetes.io/windows-build")
        {
            *want.entry(b.clone()).or_default() += 1;
        }
    }
    want
}

/// A TCP proxy on loopback to the API server that can be cut (every connection dropped) and
/// started again on the same port.
pub struct Proxy {
    pub port: u16,
    target: u16,
    tasks: Arc<Mutex<Vec<tokio::task::JoinHandle<()>>>>,
}

impl Proxy {
    pub fn new(target: u16) -> Proxy {
        Proxy {
            // Bound only at `start`: meanwhile no outgoing connection can take it.
            port: free_port_outside_ephemeral(),
            target,
            tasks: Arc::new(Mutex::new(Vec::new())),
        }
    }

    pub fn start(&self, rt: &tokio::runtime::Runtime) {
        let listener = rt
            .block_on(tokio::net::TcpListener::bind(loopback(self.port)))
            .expect("proxy port");
        let (target, tasks) = (self.target, Arc::clone(&self.tasks));
        let accept = rt.spawn(async move {
            while let Ok((mut inbound, _)) = listener.accept().await {
                let conn = tokio::spawn(async move {
                    if let Ok(mut out) = tokio::net::TcpStream::connect(loopback(target)).await {
                        let _ = tokio::io::copy_bidirectional(&mut inbound, &mut out).await;
                    }
                });
                tasks.lock().unwrap().push(conn);
            }
        });
        self.tasks.lock().unwrap().push(accept);
    }

    /// Stop accepting and drop every connection.
    pub fn cut(&self) {
        for t in self.tasks.lock().unwrap().drain(..) {
            t.abort();
        }
    }
}

/// Create `nodes` Nodes and `namespaces` Namespaces with `client` (16 at a time), for the
/// scale measurements: 10 pools (4 ltsc2019, 4 ltsc2022 of which half tainted
/// `os=windows:NoSchedule`, 2 Linux) over 10 zones; namespaces enforcing Pod Security baseline.
pub async fn create_scale_objects(client: &kube::Client, nodes: usize, namespaces: usize) {
    use futures::StreamExt;
    use k8s_openapi::api::core::v1::Namespace as K8sNamespace;
    use k8s_openapi::api::core::v1::Node as K8sNode;
    use kube::api::{Api, PostParams};
    let api: Api<K8sNode> = Api::all(client.clone());
    futures::stream::iter(0..nodes)
        .map(|i| {
            let api = api.clone();
            async move {
                let pool = i % 10;
                let name = format!("scale-{i:05}");
                let mut n = if pool < 8 {
                    let build = if pool < 4 { "10.0.17763" } else { "10.0.20348" };
                    let mut n = Node::windows(&name, build);
                    if pool % 2 == 0 {
                        n = n.taint("os=windows:NoSchedule");
                    }
                    n
                } else {
                    Node::linux(&name)
                };
                n = n.label("agentpool", &format!("pool{pool}")).label(
                    "topology.kubernetes.io/zone",
                    &format!("zone-{}", i / 10 % 10),
                );
                let obj: K8sNode = serde_json::from_value(n.to_json()).unwrap();
                api.create(&PostParams::default(), &obj).await.map(|_| ())
            }
        })
        .buffer_unordered(16)
        .for_each(|r| async move {
            r.expect("node created");
        })
        .await;
    let api: Api<K8sNamespace> = Api::all(client.clone());
    futures::stream::iter(0..namespaces)
        .map(|i| {
            let api = api.clone();
            async move {
                let ns: K8sNamespace = serde_json::from_value(json!({"metadata": {
                    "name": format!("scale-ns-{i:05}"),
                    "labels": {"team": format!("t{}", i % 50),
                        "pod-security.kubernetes.io/enforce": "baseline"}}}))
                .unwrap();
                api.create(&PostParams::default(), &ns).await.map(|_| ())
            }
        })
        .buffer_unordered(16)
        .for_each(|r| async move {
            r.expect("namespace created");
        })
        .await;
}

/// Addresses on loopback only (the tests' servers never listen elsewhere).
pub fn loopback(port: u16) -> SocketAddr {
    SocketAddr::from((Ipv4Addr::LOCALHOST, port))
}

/// Every golden case's input (`testdata/rules/<ID>/<case>/input.yaml`), sorted.
pub fn golden_inputs() -> Vec<PathBuf> {
    let rules = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/rules");
    let mut inputs: Vec<PathBuf> = std::fs::read_dir(rules)
        .expect("testdata/rules")
        .flatten()
        .flat_map(|rule| {
            std::fs::read_dir(rule.path())
                .into_iter()
                .flatten()
                .flatten()
        })
        .map(|case| case.path().join("input.yaml"))
        .filter(|p| p.is_file())
        .collect();
    inputs.sort();
    inputs
}

/// A JSON pointer as the API server writes a field: `/spec/containers/0/image` is
/// `spec.containers[0].image`.
pub fn dotted(pointer: &str) -> String {
    let mut out = String::new();
    for part in pointer.trim_start_matches('/').split('/') {
        let part = part.replace("~1", "/").replace("~0", "~");
        if part.parse::<usize>().is_ok() {
            out.push_str(&format!("[{part}]"));
        } else {
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(&part);
        }
    }
    out
}
