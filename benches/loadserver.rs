//! The load harness's server side (issue 4), a bench binary without harness:
//!
//! * `loadserver certs DIR`: write a self-signed `cert.pem`/`key.pem` for 127.0.0.1 (rcgen);
//! * `loadserver baseline --listen ADDR --tls-cert FILE --tls-key FILE`: the no-op baseline,
//!   the transport limit: the same stack as `winlint serve` (tokio multi-thread runtime,
//!   tokio-rustls with the ring provider, TLS 1.2/1.3, ALPN h2/http1.1, the handshake in each
//!   connection's own task, hyper-util's auto connection builder, axum routing, the body read
//!   in full) answering every `POST /mutate` and `POST /validate` with `allowed: true` for the
//!   request's UID, found by a byte scan (no JSON parse, no evaluation).
//!
//!   With `--parse` it parses the body into a `serde_json::Value` first and serializes the
//!   answer: the JSON floor every webhook that reads the object pays.
//!
//!   With `--patch FILE` (issue 29, scripts/e2e-load.sh) `/mutate` answers with a canned
//!   JSONPatch: FILE is a JSON object `{"NEEDLE": [ops…], …}` and the first NEEDLE found in the
//!   body picks the ops (none found: no patch). It replays what winlint would patch at the
//!   no-op's cost, so that the API server's cost of applying a patch is measured apart from the
//!   webhook's own.
//!
//! * `loadserver soak --winlint BIN --bodies DIR [--secs 600] [--rotate 30] [--restart 60]
//!   [--rate 400] [--workers 4] [--follow-readiness]`: the soak (see `soak` below and
//!   BENCHMARKS.md).
//!
//! `scripts/load.sh` starts it next to `winlint serve` and drives both with the same
//! generator. Runs until killed.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use tower::Service;

// The allocator of the `winlint` binary (src/main.rs): the baselines run on the same stack.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn arg(args: &[String], name: &str) -> Option<String> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

/// The request UID by a byte scan of `"uid":"…"` after `"request"` (captured reviews put the
/// request's own uid first; userInfo.uid comes later).
fn uid(body: &[u8]) -> &str {
    let start = find(body, b"\"request\"").unwrap_or(0);
    let rest = &body[start..];
    let Some(i) = find(rest, b"\"uid\"") else {
        return "";
    };
    let rest = &rest[i + 5..];
    let Some(q) = rest.iter().position(|&b| b == b'"') else {
        return "";
    };
    let rest = &rest[q + 1..];
    let end = rest.iter().position(|&b| b == b'"').unwrap_or(0);
    std::str::from_utf8(&rest[..end]).unwrap_or("")
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// `--parse`: the JSON floor any webhook pays: parse the whole review into a
/// `serde_json::Value` (as winlint does) and serialize the answer, evaluating nothing.
async fn allow_parsed(body: Bytes) -> Response {
    let Ok(v) = serde_json::from_slice::<serde_json::Value>(&body) else {
        return (StatusCode::BAD_REQUEST, "malformed JSON\n").into_response();
    };
    let out = serde_json::to_vec(&serde_json::json!({
        "apiVersion": v["apiVersion"],
        "kind": "AdmissionReview",
        "response": {"uid": v["request"]["uid"], "allowed": true},
    }))
    .expect("a Value serializes");
    Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(out))
        .expect("valid response")
}

/// `--patch`: (needle, base64 JSONPatch), the first needle found in a `/mutate` body wins.
static PATCHES: std::sync::OnceLock<Vec<(Vec<u8>, String)>> = std::sync::OnceLock::new();

fn load_patches(file: &str) -> Vec<(Vec<u8>, String)> {
    use base64::Engine;
    let text = std::fs::read_to_string(file).expect("--patch FILE");
    let map: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(&text).expect("--patch FILE: a JSON object NEEDLE -> ops");
    map.into_iter()
        .map(|(needle, ops)| {
            let ops = serde_json::to_vec(&ops).expect("ops serialize");
            (
                needle.into_bytes(),
                base64::engine::general_purpose::STANDARD.encode(ops),
            )
        })
        .collect()
}

async fn allow_mutate(body: Bytes) -> Response {
    let patch = PATCHES
        .get()
        .and_then(|p| p.iter().find(|(needle, _)| find(&body, needle).is_some()));
    let Some((_, patch)) = patch else {
        return allow(body).await;
    };
    let uid = uid(&body);
    let out = format!(
        r#"{{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{{"uid":"{uid}","allowed":true,"patchType":"JSONPatch","patch":"{patch}"}}}}"#
    );
    Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(out))
        .expect("valid response")
}

async fn allow(body: Bytes) -> Response {
    let uid = uid(&body);
    let v1beta1 = find(&body[..body.len().min(256)], b"admission.k8s.io/v1beta1").is_some();
    let api = if v1beta1 {
        "admission.k8s.io/v1beta1"
    } else {
        "admission.k8s.io/v1"
    };
    let out = format!(
        r#"{{"apiVersion":"{api}","kind":"AdmissionReview","response":{{"uid":"{uid}","allowed":true}}}}"#
    );
    Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(out))
        .expect("valid response")
        .into_response()
}

fn certs(dir: PathBuf) {
    std::fs::create_dir_all(&dir).unwrap();
    let key = rcgen::KeyPair::generate().unwrap();
    let mut params =
        rcgen::CertificateParams::new(vec!["127.0.0.1".into(), "localhost".into()]).unwrap();
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "winlint-load");
    let cert = params.self_signed(&key).unwrap();
    std::fs::write(dir.join("cert.pem"), cert.pem()).unwrap();
    std::fs::write(dir.join("key.pem"), key.serialize_pem()).unwrap();
}

async fn baseline(listen: SocketAddr, cert: PathBuf, key: PathBuf, parse: bool) {
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(&cert)
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let key = PrivateKeyDer::from_pem_file(&key).unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut tls = rustls::ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13, &rustls::version::TLS12])
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .unwrap();
    tls.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(tls));
    let router = if parse {
        Router::new()
            .route("/mutate", post(allow_parsed))
            .route("/validate", post(allow_parsed))
    } else {
        Router::new()
            .route("/mutate", post(allow_mutate))
            .route("/validate", post(allow))
    };
    let router = router
        .route("/healthz", get(|| async { "ok" }))
        .layer(axum::extract::DefaultBodyLimit::max(8 * 1024 * 1024));
    let listener = tokio::net::TcpListener::bind(listen).await.unwrap();
    eprintln!("baseline listening on {}", listener.local_addr().unwrap());
    let mut h1 = auto::Builder::new(TokioExecutor::new()).http1_only();
    h1.http1()
        .timer(TokioTimer::new())
        .header_read_timeout(Duration::from_secs(10))
        .keep_alive(true);
    let mut h2 = auto::Builder::new(TokioExecutor::new()).http2_only();
    h2.http2().timer(TokioTimer::new());
    let (h1, h2) = (Arc::new(h1), Arc::new(h2));
    loop {
        let Ok((tcp, _)) = listener.accept().await else {
            tokio::time::sleep(Duration::from_millis(50)).await;
            continue;
        };
        let _ = tcp.set_nodelay(true);
        let (acceptor, router, h1, h2) = (acceptor.clone(), router.clone(), h1.clone(), h2.clone());
        tokio::spawn(async move {
            let Ok(Ok(stream)) =
                tokio::time::timeout(Duration::from_secs(10), acceptor.accept(tcp)).await
            else {
                return;
            };
            let is_h2 = stream.get_ref().1.alpn_protocol() == Some(b"h2");
            let svc = hyper::service::service_fn(move |req| router.clone().call(req));
            let io = TokioIo::new(stream);
            let _ = if is_h2 {
                h2.serve_connection(io, svc).await
            } else {
                h1.serve_connection(io, svc).await
            };
        });
    }
}

// ---------------------------------------------------------------------------------------------
// Soak: two `winlint serve` replicas behind a round-robin client, certificate rotation,
// SIGTERM + restart of one replica, RSS sampling.

mod soak {
    use std::net::SocketAddr;
    use std::path::{Path, PathBuf};
    use std::process::{Child, Command, Stdio};
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
    use std::time::{Duration, Instant};

    use axum::body::Bytes;
    use http_body_util::{BodyExt, Full};
    use hyper::client::conn::http1::SendRequest;
    use hyper_util::rt::TokioIo;
    use rustls_pki_types::{CertificateDer, ServerName};
    use tokio::sync::Mutex;

    #[derive(Default)]
    pub struct Stats {
        ok: AtomicU64,
        /// Succeeded on the other replica after the first one failed.
        retried_ok: AtomicU64,
        /// Failed on both replicas: a failed admission request.
        failed: AtomicU64,
        /// First attempts that failed before a request was written (connect refused, TLS).
        connect_errors: AtomicU64,
        /// First attempts that failed after the request was sent (no or bad response).
        request_errors: AtomicU64,
        new_connections: AtomicU64,
    }

    struct Ca {
        issuer: rcgen::CertifiedIssuer<'static, rcgen::KeyPair>,
    }

    impl Ca {
        fn new() -> Ca {
            let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
            params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
            params
                .distinguished_name
                .push(rcgen::DnType::CommonName, "winlint soak CA");
            let key = rcgen::KeyPair::generate().unwrap();
            Ca {
                issuer: rcgen::CertifiedIssuer::self_signed(params, key).unwrap(),
            }
        }
        /// Write a fresh serving pair atomically (temp file + rename, cert first).
        fn rotate(&self, dir: &Path, n: u64) {
            let mut params =
                rcgen::CertificateParams::new(vec!["127.0.0.1".into(), "localhost".into()])
                    .unwrap();
            params
                .distinguished_name
                .push(rcgen::DnType::CommonName, format!("winlint soak {n}"));
            let key = rcgen::KeyPair::generate().unwrap();
            let cert = params.signed_by(&key, &self.issuer).unwrap();
            for (name, text) in [("cert.pem", cert.pem()), ("key.pem", key.serialize_pem())] {
                let tmp = dir.join(format!(".{name}.tmp"));
                std::fs::write(&tmp, text).unwrap();
                std::fs::rename(&tmp, dir.join(name)).unwrap();
            }
        }
    }

    struct Replica {
        addr: SocketAddr,
        metrics: SocketAddr,
        args: Vec<String>,
        bin: PathBuf,
        child: Child,
        log: PathBuf,
    }

    impl Replica {
        fn start(bin: &Path, dir: &Path, port: u16, name: &str) -> Replica {
            let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
            let args: Vec<String> = [
                "serve",
                "--listen",
                &addr.to_string(),
                "--tls-cert",
                &dir.join("cert.pem").display().to_string(),
                "--tls-key",
                &dir.join("key.pem").display().to_string(),
                "--cert-reload-interval",
                "2",
                "--shutdown-delay",
                "1",
                "--metrics-listen",
                &format!("127.0.0.1:{}", port + 100),
            ]
            .iter()
            .map(|s| s.to_string())
            .collect();
            let log = dir.join(format!("{name}.log"));
            let child = spawn(bin, &args, &log);
            Replica {
                addr,
                metrics: format!("127.0.0.1:{}", port + 100).parse().unwrap(),
                args,
                bin: bin.to_path_buf(),
                child,
                log,
            }
        }
        fn rss_kib(&self) -> u64 {
            std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
                .ok()
                .and_then(|s| {
                    s.lines()
                        .find(|l| l.starts_with("VmRSS:"))
                        .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
                })
                .unwrap_or(0)
        }
        fn terminate(&mut self) -> Option<i32> {
            let _ = Command::new("kill")
                .args(["-TERM", &self.child.id().to_string()])
                .status();
            self.child.wait().ok().and_then(|s| s.code())
        }
        fn restart(&mut self) {
            self.child = spawn(&self.bin, &self.args, &self.log);
        }
    }

    fn spawn(bin: &Path, args: &[String], log: &Path) -> Child {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
            .unwrap();
        Command::new(bin)
            .args(args)
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("winlint serve starts")
    }

    async fn wait_listening(addr: SocketAddr) {
        for _ in 0..200 {
            if tokio::net::TcpStream::connect(addr).await.is_ok() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        panic!("{addr} does not listen");
    }

    /// `GET /readyz` on the plain-HTTP metrics listener: 200 = in the endpoints.
    async fn ready(metrics: SocketAddr) -> bool {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let probe = async {
            let mut s = tokio::net::TcpStream::connect(metrics).await.ok()?;
            s.write_all(b"GET /readyz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                .await
                .ok()?;
            let mut buf = [0u8; 12];
            s.read_exact(&mut buf).await.ok()?;
            Some(&buf[9..12] == b"200")
        };
        tokio::time::timeout(Duration::from_millis(500), probe)
            .await
            .ok()
            .flatten()
            .unwrap_or(false)
    }

    type Sender = SendRequest<Full<Bytes>>;

    async fn connect(
        tls: &tokio_rustls::TlsConnector,
        addr: SocketAddr,
        stats: &Stats,
    ) -> Result<Sender, String> {
        let tcp = tokio::net::TcpStream::connect(addr)
            .await
            .map_err(|e| e.to_string())?;
        let _ = tcp.set_nodelay(true);
        let stream = tls
            .connect(ServerName::IpAddress(addr.ip().into()), tcp)
            .await
            .map_err(|e| e.to_string())?;
        let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .map_err(|e| e.to_string())?;
        tokio::spawn(conn);
        stats.new_connections.fetch_add(1, Relaxed);
        Ok(sender)
    }

    enum Failure {
        Connect,
        Request,
    }

    async fn attempt(
        tls: &tokio_rustls::TlsConnector,
        conn: &mut Option<Sender>,
        addr: SocketAddr,
        path: &str,
        body: &Bytes,
        stats: &Stats,
    ) -> Result<(), Failure> {
        if conn.as_ref().is_none_or(|c| c.is_closed()) {
            *conn = Some(
                connect(tls, addr, stats)
                    .await
                    .map_err(|_| Failure::Connect)?,
            );
        }
        let sender = conn.as_mut().unwrap();
        if sender.ready().await.is_err() {
            // Closed by the server between requests (graceful shutdown): reconnect once.
            *conn = Some(
                connect(tls, addr, stats)
                    .await
                    .map_err(|_| Failure::Connect)?,
            );
        }
        let sender = conn.as_mut().unwrap();
        let req = hyper::Request::post(format!("{path}?timeout=10s"))
            .header("host", addr.to_string())
            .header("content-type", "application/json")
            .body(Full::new(body.clone()))
            .unwrap();
        let resp = match sender.send_request(req).await {
            Ok(r) => r,
            Err(_) => {
                *conn = None;
                return Err(Failure::Request);
            }
        };
        let ok = resp.status() == 200;
        let bytes = resp.into_body().collect().await.map_err(|_| {
            *conn = None;
            Failure::Request
        })?;
        let bytes = bytes.to_bytes();
        if ok && bytes.windows(9).any(|w| w == b"\"allowed\"") {
            Ok(())
        } else {
            Err(Failure::Request)
        }
    }

    pub async fn run(args: Vec<String>) -> i32 {
        let get = |n: &str, d: &str| super::arg(&args, n).unwrap_or_else(|| d.to_string());
        let bin = PathBuf::from(get("--winlint", "target/release/winlint"));
        let bodies_dir = PathBuf::from(get("--bodies", "testdata/admission"));
        let secs: u64 = get("--secs", "600").parse().unwrap();
        let rotate: u64 = get("--rotate", "30").parse().unwrap();
        let restart: u64 = get("--restart", "60").parse().unwrap();
        let rate: u64 = get("--rate", "400").parse().unwrap();
        let workers: u64 = get("--workers", "4").parse().unwrap();
        // Follow readiness like an endpoints controller: send only to replicas whose /readyz
        // answered 200 in the last probe (every 50 ms).
        let follow = args.iter().any(|a| a == "--follow-readiness");

        let mut bodies: Vec<(String, Bytes)> = Vec::new();
        let mut paths: Vec<PathBuf> = std::fs::read_dir(&bodies_dir)
            .expect("--bodies DIR")
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                let n = p.file_name().unwrap().to_string_lossy().to_string();
                n.ends_with(".json")
                    && !n.ends_with(".meta.json")
                    && n.as_bytes()[0].is_ascii_digit()
            })
            .collect();
        paths.sort();
        for p in paths {
            let meta = std::fs::read_to_string(p.with_extension("meta.json")).unwrap_or_default();
            let path = if meta.contains("\"/mutate") {
                "/mutate"
            } else {
                "/validate"
            };
            bodies.push((path.to_string(), Bytes::from(std::fs::read(&p).unwrap())));
        }
        let bodies = Arc::new(bodies);

        let dir = tempfile::tempdir().unwrap();
        let ca = Ca::new();
        ca.rotate(dir.path(), 0);
        let mut roots = rustls::RootCertStore::empty();
        roots
            .add(CertificateDer::from(ca.issuer.der().to_vec()))
            .unwrap();
        let mut client = rustls::ClientConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
        client.alpn_protocols = vec![b"http/1.1".to_vec()];
        let tls = tokio_rustls::TlsConnector::from(Arc::new(client));

        let port = |env: &str, d: u16| {
            std::env::var(env)
                .ok()
                .and_then(|v| v.parse().ok())
                .unwrap_or(d)
        };
        let a = Replica::start(&bin, dir.path(), port("SOAK_PORT_A", 21443), "a");
        let b = Replica::start(&bin, dir.path(), port("SOAK_PORT_B", 22443), "b");
        wait_listening(a.addr).await;
        wait_listening(b.addr).await;
        let addrs = [a.addr, b.addr];
        let metrics = [a.metrics, b.metrics];
        let readiness = Arc::new([
            std::sync::atomic::AtomicBool::new(true),
            std::sync::atomic::AtomicBool::new(true),
        ]);
        if follow {
            let readiness = readiness.clone();
            tokio::spawn(async move {
                loop {
                    for i in 0..2 {
                        readiness[i].store(ready(metrics[i]).await, Relaxed);
                    }
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            });
        }
        let a = Arc::new(Mutex::new(a));
        let b = Arc::new(Mutex::new(b));
        println!(
            "soak: {secs} s, {rate} req/s over {workers} workers, round-robin over {} and {}{}, \
             cert rotation every {rotate} s, SIGTERM+restart of replica b every {restart} s, {} bodies",
            addrs[0],
            addrs[1],
            if follow { " following /readyz" } else { "" },
            bodies.len()
        );

        let stats = Arc::new(Stats::default());
        let start = Instant::now();
        let deadline = start + Duration::from_secs(secs);
        let counter = Arc::new(AtomicU64::new(0));
        let mut tasks = Vec::new();
        for _ in 0..workers {
            let (tls, stats, bodies, counter, readiness) = (
                tls.clone(),
                stats.clone(),
                bodies.clone(),
                counter.clone(),
                readiness.clone(),
            );
            tasks.push(tokio::spawn(async move {
                let mut conns: [Option<Sender>; 2] = [None, None];
                let period = Duration::from_secs_f64(workers as f64 / rate as f64);
                let mut tick = tokio::time::interval(period);
                tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
                while Instant::now() < deadline {
                    tick.tick().await;
                    let n = counter.fetch_add(1, Relaxed);
                    let (path, body) = &bodies[(n as usize) % bodies.len()];
                    let mut first = (n % 2) as usize;
                    if !readiness[first].load(Relaxed) {
                        first = 1 - first;
                    }
                    match attempt(&tls, &mut conns[first], addrs[first], path, body, &stats).await {
                        Ok(()) => {
                            stats.ok.fetch_add(1, Relaxed);
                            continue;
                        }
                        Err(Failure::Connect) => stats.connect_errors.fetch_add(1, Relaxed),
                        Err(Failure::Request) => stats.request_errors.fetch_add(1, Relaxed),
                    };
                    let other = 1 - first;
                    match attempt(&tls, &mut conns[other], addrs[other], path, body, &stats).await {
                        Ok(()) => stats.retried_ok.fetch_add(1, Relaxed),
                        Err(_) => stats.failed.fetch_add(1, Relaxed),
                    };
                }
            }));
        }

        // Rotation, restarts and RSS samples.
        let mut rss_a = Vec::new();
        let mut restarts = 0;
        let mut exit_codes = Vec::new();
        let (mut next_rotate, mut next_restart, mut next_sample) = (rotate, restart, 0);
        let mut n = 1;
        loop {
            let t = start.elapsed().as_secs();
            if t >= secs {
                break;
            }
            if t >= next_rotate {
                ca.rotate(dir.path(), n);
                n += 1;
                next_rotate += rotate;
            }
            if t >= next_restart && t + 5 < secs {
                let mut r = b.lock().await;
                let code = tokio::task::block_in_place(|| r.terminate());
                exit_codes.push(code);
                r.restart();
                let addr = r.addr;
                drop(r);
                wait_listening(addr).await;
                restarts += 1;
                next_restart += restart;
            }
            if t >= next_sample {
                let ra = a.lock().await.rss_kib();
                let rb = b.lock().await.rss_kib();
                rss_a.push(ra);
                println!(
                    "t={t:>4}s rss a={ra} KiB b={rb} KiB | ok={} retried_ok={} failed={} connect_err={} request_err={} conns={}",
                    stats.ok.load(Relaxed),
                    stats.retried_ok.load(Relaxed),
                    stats.failed.load(Relaxed),
                    stats.connect_errors.load(Relaxed),
                    stats.request_errors.load(Relaxed),
                    stats.new_connections.load(Relaxed)
                );
                next_sample += 30;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        for t in tasks {
            let _ = t.await;
        }
        let code_a = tokio::task::block_in_place(|| a.blocking_lock().terminate());
        let code_b = tokio::task::block_in_place(|| b.blocking_lock().terminate());
        let reloads = std::fs::read_to_string(dir.path().join("a.log"))
            .unwrap_or_default()
            .matches("certificate reloaded")
            .count();
        let failed = stats.failed.load(Relaxed);
        println!(
            "done: ok={} retried_ok={} failed={failed} (first-attempt connect errors {}, request errors {}), \
             new connections {}, rotations {}, replica-a cert reloads {reloads}, restarts of b {restarts} \
             (exit codes on SIGTERM {:?}), final exit codes a={code_a:?} b={code_b:?}",
            stats.ok.load(Relaxed),
            stats.retried_ok.load(Relaxed),
            stats.connect_errors.load(Relaxed),
            stats.request_errors.load(Relaxed),
            stats.new_connections.load(Relaxed),
            n - 1,
            exit_codes,
        );
        let (first, last) = (
            rss_a.get(1).copied().unwrap_or(0),
            rss_a.last().copied().unwrap_or(0),
        );
        println!(
            "replica a RSS: min {} max {} first(30s) {first} last {last} KiB",
            rss_a.iter().min().unwrap_or(&0),
            rss_a.iter().max().unwrap_or(&0)
        );
        if failed == 0 { 0 } else { 1 }
    }
}

fn main() {
    // `cargo bench` passes `--bench`: without a command, do nothing.
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("soak") => {
            let code = tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .build()
                .unwrap()
                .block_on(soak::run(args.clone()));
            std::process::exit(code);
        }
        Some("certs") => certs(PathBuf::from(args.get(1).expect("certs DIR"))),
        Some("baseline") => {
            let listen: SocketAddr = arg(&args, "--listen")
                .unwrap_or_else(|| "127.0.0.1:9443".into())
                .parse()
                .expect("--listen ADDR");
            let cert = PathBuf::from(arg(&args, "--tls-cert").expect("--tls-cert FILE"));
            let key = PathBuf::from(arg(&args, "--tls-key").expect("--tls-key FILE"));
            if let Some(file) = arg(&args, "--patch") {
                PATCHES.set(load_patches(&file)).expect("set once");
            }
            tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .build()
                .unwrap()
                .block_on(baseline(
                    listen,
                    cert,
                    key,
                    args.iter().any(|a| a == "--parse"),
                ));
        }
        _ => eprintln!(
            "loadserver: `certs DIR` or `baseline --listen ADDR --tls-cert FILE --tls-key FILE` (see scripts/load.sh)"
        ),
    }
}
