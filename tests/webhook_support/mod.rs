//! Shared helpers of the webhook integration tests: certificates, a TLS client speaking
//! HTTP/1.1 or h2, and an in-process server on 127.0.0.1:0.
#![allow(dead_code)]

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper_util::rt::{TokioExecutor, TokioIo};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use rustls_pki_types::pem::PemObject;
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;
use tokio_rustls::client::TlsStream;
use winlint::manifests::{GeneratedTls, generate_tls};
use winlint::server::{ServeArgs, Server};

#[allow(clippy::duplicate_mod)]
#[path = "../metrics_support/mod.rs"]
pub mod metrics_support;
#[allow(unused_imports)] // not every test binary reads metrics
pub use metrics_support::metric;

/// Where the captured AdmissionReviews live (copied into the repository from a real kube-apiserver).
pub fn captures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/admission")
}

/// A CA and a serving certificate for 127.0.0.1 and localhost, written into `dir`.
pub struct Certs {
    pub dir: tempfile::TempDir,
    pub tls: GeneratedTls,
    pub cert: PathBuf,
    pub key: PathBuf,
}

pub fn certs() -> Certs {
    let dir = tempfile::tempdir().unwrap();
    let tls = generate_tls(&["127.0.0.1".into(), "localhost".into()], 30).unwrap();
    let cert = dir.path().join("tls.crt");
    let key = dir.path().join("tls.key");
    std::fs::write(&cert, &tls.cert_pem).unwrap();
    std::fs::write(&key, &tls.key_pem).unwrap();
    Certs {
        dir,
        tls,
        cert,
        key,
    }
}

pub fn args(c: &Certs) -> ServeArgs {
    let mut a = ServeArgs::new(
        "127.0.0.1:0".parse().unwrap(),
        c.cert.clone(),
        c.key.clone(),
    );
    a.metrics_listen = Some("127.0.0.1:0".parse().unwrap());
    a
}

pub async fn start(a: ServeArgs) -> Server {
    winlint::server::start(a).await.expect("server starts")
}

pub fn der_of(pem: &str) -> CertificateDer<'static> {
    CertificateDer::from_pem_slice(pem.as_bytes()).unwrap()
}

/// A TLS client config trusting `ca_pems`, offering `alpn`.
pub fn client_config(
    ca_pems: &[&str],
    alpn: &[&[u8]],
    client_cert: Option<(&str, &str)>,
) -> Arc<rustls::ClientConfig> {
    let mut roots = rustls::RootCertStore::empty();
    for pem in ca_pems {
        roots.add(der_of(pem)).unwrap();
    }
    let b = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(roots);
    let mut cfg = match client_cert {
        Some((cert, key)) => b
            .with_client_auth_cert(
                vec![der_of(cert)],
                PrivateKeyDer::from_pem_slice(key.as_bytes()).unwrap(),
            )
            .unwrap(),
        None => b.with_no_client_auth(),
    };
    cfg.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    Arc::new(cfg)
}

/// Open a TLS connection to `addr` (no SNI: the name is an IP, like the API server's calls).
pub async fn tls_connect(
    addr: SocketAddr,
    cfg: Arc<rustls::ClientConfig>,
) -> std::io::Result<TlsStream<TcpStream>> {
    let tcp = TcpStream::connect(addr).await?;
    TlsConnector::from(cfg)
        .connect(ServerName::IpAddress(addr.ip().into()), tcp)
        .await
}

/// The leaf certificate the server presented.
pub fn peer_cert(s: &TlsStream<TcpStream>) -> CertificateDer<'static> {
    s.get_ref().1.peer_certificates().unwrap()[0]
        .clone()
        .into_owned()
}

/// An HTTP client on one connection (keep-alive for HTTP/1.1, multiplexed for h2).
pub enum Client {
    H1(hyper::client::conn::http1::SendRequest<Full<Bytes>>),
    H2(hyper::client::conn::http2::SendRequest<Full<Bytes>>),
}

impl Client {
    pub async fn connect(addr: SocketAddr, ca_pem: &str, h2: bool) -> Client {
        let alpn: &[&[u8]] = if h2 { &[b"h2"] } else { &[b"http/1.1"] };
        Self::connect_with(addr, client_config(&[ca_pem], alpn, None), h2)
            .await
            .expect("connects")
    }

    pub async fn connect_with(
        addr: SocketAddr,
        cfg: Arc<rustls::ClientConfig>,
        h2: bool,
    ) -> std::io::Result<Client> {
        let s = tls_connect(addr, cfg).await?;
        let io = TokioIo::new(s);
        if h2 {
            let (send, conn) = hyper::client::conn::http2::handshake(TokioExecutor::new(), io)
                .await
                .map_err(std::io::Error::other)?;
            tokio::spawn(conn);
            Ok(Client::H2(send))
        } else {
            let (send, conn) = hyper::client::conn::http1::handshake(io)
                .await
                .map_err(std::io::Error::other)?;
            tokio::spawn(conn);
            Ok(Client::H1(send))
        }
    }

    /// POST `body` to `path`; (status, body).
    pub async fn post(&mut self, path: &str, body: Vec<u8>) -> Result<(u16, Vec<u8>), String> {
        let req = hyper::Request::post(format!("https://127.0.0.1{path}"))
            .header("content-type", "application/json")
            .header("accept-encoding", "gzip")
            .body(Full::new(Bytes::from(body)))
            .unwrap();
        self.send(req).await
    }

    pub async fn get(&mut self, path: &str) -> Result<(u16, Vec<u8>), String> {
        let req = hyper::Request::get(format!("https://127.0.0.1{path}"))
            .body(Full::new(Bytes::new()))
            .unwrap();
        self.send(req).await
    }

    async fn send(
        &mut self,
        mut req: hyper::Request<Full<Bytes>>,
    ) -> Result<(u16, Vec<u8>), String> {
        let resp = match self {
            Client::H1(s) => {
                // HTTP/1.1 wants origin-form plus a Host header.
                let pq = req.uri().path_and_query().unwrap().clone();
                *req.uri_mut() = pq.as_str().parse().unwrap();
                req.headers_mut()
                    .insert("host", "127.0.0.1".parse().unwrap());
                s.ready().await.map_err(|e| e.to_string())?;
                s.send_request(req).await.map_err(|e| e.to_string())?
            }
            Client::H2(s) => {
                s.ready().await.map_err(|e| e.to_string())?;
                s.send_request(req).await.map_err(|e| e.to_string())?
            }
        };
        let status = resp.status().as_u16();
        let body = resp
            .into_body()
            .collect()
            .await
            .map_err(|e| e.to_string())?
            .to_bytes()
            .to_vec();
        Ok((status, body))
    }
}

/// Plain-HTTP GET against the metrics listener: (status, body).
pub async fn plain_get(addr: SocketAddr, path: &str) -> (u16, String) {
    let tcp = TcpStream::connect(addr).await.unwrap();
    let (mut send, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tcp))
        .await
        .unwrap();
    tokio::spawn(conn);
    let req = hyper::Request::get(path)
        .header("host", "127.0.0.1")
        .body(Full::new(Bytes::new()))
        .unwrap();
    let resp = send.send_request(req).await.unwrap();
    let status = resp.status().as_u16();
    let body = resp.into_body().collect().await.unwrap().to_bytes();
    (status, String::from_utf8_lossy(&body).into_owned())
}

/// A well-formed AdmissionReview for a Windows pod (the T05 pod of shared/rules.md §6).
pub fn windows_review(uid: &str) -> Vec<u8> {
    serde_json::to_vec(&serde_json::json!({
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": uid,
            "kind": {"group": "", "version": "v1", "kind": "Pod"},
            "resource": {"group": "", "version": "v1", "resource": "pods"},
            "operation": "CREATE",
            "namespace": "default",
            "object": {"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": "win", "namespace": "default"},
                "spec": {"containers": [{"name": "a",
                    "image": "mcr.microsoft.com/windows/servercore:ltsc2022"}]}}
        }
    }))
    .unwrap()
}

/// Parse a response body as an AdmissionReview and check the envelope.
pub fn parse_review(body: &[u8], uid: &str) -> serde_json::Value {
    let v: serde_json::Value = serde_json::from_slice(body).expect("JSON AdmissionReview");
    assert_eq!(v["kind"], "AdmissionReview");
    assert_eq!(v["response"]["uid"], uid);
    assert!(v["response"]["allowed"].is_boolean());
    v
}

/// A client CA and a client certificate (EKU clientAuth) it signed: (ca, cert, key) PEM.
pub fn client_pki(cn: &str) -> (String, String, String) {
    use rcgen::{
        BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    };
    let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.distinguished_name
        .push(DnType::CommonName, "test client CA");
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca_key = KeyPair::generate().unwrap();
    let ca_cert = ca.self_signed(&ca_key).unwrap();
    let issuer = Issuer::new(ca, ca_key);
    let mut leaf = CertificateParams::new(Vec::<String>::new()).unwrap();
    leaf.distinguished_name.push(DnType::CommonName, cn);
    leaf.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
    let key = KeyPair::generate().unwrap();
    let cert = leaf.signed_by(&key, &issuer).unwrap();
    (ca_cert.pem(), cert.pem(), key.serialize_pem())
}

/// Cluster facts as the watch would give them: `namespaces` (name, labels) and one untainted
/// ltsc2022 Windows node.
pub fn facts(
    namespaces: &[(&str, &[(&str, &str)])],
) -> std::sync::Arc<winlint::cluster::ClusterFacts> {
    use k8s_openapi::api::core::v1::{Namespace, Node};
    let nss: Vec<Namespace> = namespaces
        .iter()
        .map(|(name, labels)| {
            let labels: serde_json::Map<String, serde_json::Value> = labels
                .iter()
                .map(|(k, v)| ((*k).into(), (*v).into()))
                .collect();
            serde_json::from_value(
                serde_json::json!({"metadata": {"name": name, "labels": labels}}),
            )
            .unwrap()
        })
        .collect();
    // A mixed cluster: with no Linux node, a Windows pod needs no OS selector (WIN001).
    let node = |name: &str, labels: serde_json::Value| -> Node {
        serde_json::from_value(serde_json::json!({"metadata": {"name": name, "labels": labels}}))
            .unwrap()
    };
    let nodes = [
        node(
            "w1",
            serde_json::json!({"kubernetes.io/os": "windows", "node.kubernetes.io/windows-build": "10.0.20348"}),
        ),
        node("l1", serde_json::json!({"kubernetes.io/os": "linux"})),
    ];
    std::sync::Arc::new(winlint::cluster::ClusterFacts::derive(
        &nodes,
        &[],
        &nss,
        None,
    ))
}
