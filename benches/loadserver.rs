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
            .route("/mutate", post(allow))
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

fn main() {
    // `cargo bench` passes `--bench`: without a command, do nothing.
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("certs") => certs(PathBuf::from(args.get(1).expect("certs DIR"))),
        Some("baseline") => {
            let listen: SocketAddr = arg(&args, "--listen")
                .unwrap_or_else(|| "127.0.0.1:9443".into())
                .parse()
                .expect("--listen ADDR");
            let cert = PathBuf::from(arg(&args, "--tls-cert").expect("--tls-cert FILE"));
            let key = PathBuf::from(arg(&args, "--tls-key").expect("--tls-key FILE"));
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
