//! The serving certificate: loading, the TLS configuration, and the reload loop.

use std::hash::{Hash, Hasher};
use std::path::Path;
use std::sync::{Arc, RwLock};

use rustls::crypto::CryptoProvider;
use rustls::server::{ClientHello, ResolvesServerCert, WebPkiClientVerifier};
use rustls::sign::CertifiedKey;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use tokio::sync::watch;

use super::{AppState, ServeArgs, ServeError, secs};

/// The serving certificate, swapped in place on reload.
#[derive(Debug)]
pub(super) struct CertStore {
    pub(super) current: RwLock<Arc<CertifiedKey>>,
}

impl ResolvesServerCert for CertStore {
    fn resolve(&self, _hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(
            self.current
                .read()
                .unwrap_or_else(|e| e.into_inner())
                .clone(),
        )
    }
}

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// Read a cert/key pair: (certified key, content hash).
pub(super) fn load_pair(cert: &Path, key: &Path) -> Result<(CertifiedKey, u64), ServeError> {
    let flag = |name: &str, p: &Path| format!("{name} {}", p.display());
    let read = |name: &str, p: &Path| {
        std::fs::read(p).map_err(|source| ServeError::Io {
            what: flag(name, p),
            source,
        })
    };
    let cert_pem = read("--tls-cert", cert)?;
    let key_pem = read("--tls-key", key)?;
    let hash = content_hash(&cert_pem, &key_pem);
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(&cert_pem)
        .collect::<Result<_, _>>()
        .map_err(|e| ServeError::tls(flag("--tls-cert", cert), e))?;
    if certs.is_empty() {
        return Err(ServeError::tls(
            flag("--tls-cert", cert),
            "no CERTIFICATE in the file",
        ));
    }
    let key_der = PrivateKeyDer::from_pem_slice(&key_pem)
        .map_err(|e| ServeError::tls(flag("--tls-key", key), e))?;
    let ck = CertifiedKey::from_der(certs, key_der, &provider())
        .map_err(|e| ServeError::tls("certificate and key", e))?;
    Ok((ck, hash))
}

fn content_hash(a: &[u8], b: &[u8]) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    a.hash(&mut h);
    b.hash(&mut h);
    h.finish()
}

pub(super) fn tls_config(
    args: &ServeArgs,
    store: Arc<CertStore>,
) -> Result<rustls::ServerConfig, ServeError> {
    let builder = rustls::ServerConfig::builder_with_provider(provider())
        .with_protocol_versions(&[&rustls::version::TLS13, &rustls::version::TLS12])
        .map_err(|e| ServeError::tls("TLS", e))?;
    let builder = match &args.client_ca {
        Some(path) => {
            let client_ca = || format!("--client-ca {}", path.display());
            let mut roots = rustls::RootCertStore::empty();
            let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(path)
                .and_then(|it| it.collect::<Result<_, _>>())
                .map_err(|e| ServeError::tls(client_ca(), e))?;
            for c in certs {
                roots.add(c).map_err(|e| ServeError::tls(client_ca(), e))?;
            }
            let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider())
                .build()
                .map_err(|e| ServeError::tls(client_ca(), e))?;
            builder.with_client_cert_verifier(verifier)
        }
        None => builder.with_no_client_auth(),
    };
    let mut config = builder.with_cert_resolver(store);
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(config)
}

/// Re-read the certificate and key every `--cert-reload-interval` and swap them in when their
/// content changed and the new pair is valid.
pub(super) fn spawn_reload(
    args: &ServeArgs,
    store: Arc<CertStore>,
    state: Arc<AppState>,
    mut rx: watch::Receiver<bool>,
    hash: u64,
) {
    let (cert, key) = (args.tls_cert.clone(), args.tls_key.clone());
    let interval = secs(args.cert_reload_interval);
    tokio::spawn(async move {
        let mut last = hash;
        loop {
            tokio::select! {
                _ = tokio::time::sleep(interval) => {}
                _ = rx.wait_for(|s| *s) => return,
            }
            let (c, k) = (cert.clone(), key.clone());
            let loaded = tokio::task::spawn_blocking(move || {
                let cp = std::fs::read(&c).ok()?;
                let kp = std::fs::read(&k).ok()?;
                Some((content_hash(&cp, &kp), c, k))
            })
            .await
            .ok()
            .flatten();
            let Some((h, c, k)) = loaded else { continue };
            if h == last {
                continue;
            }
            match load_pair(&c, &k) {
                Ok((ck, h2)) => {
                    *store.current.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(ck);
                    last = h2;
                    state
                        .metrics
                        .cert_reloads
                        .get_or_create(&vec![("result".into(), "ok".into())])
                        .inc();
                    tracing::info!(uid = "", "serving certificate reloaded");
                }
                Err(e) => {
                    // Half-written files (cert updated, key not yet): keep the old pair and
                    // try again on the next tick.
                    state
                        .metrics
                        .cert_reloads
                        .get_or_create(&vec![("result".into(), "error".into())])
                        .inc();
                    tracing::warn!(
                        uid = "",
                        "certificate reload failed, keeping the old one: {e}"
                    );
                }
            }
        }
    });
}
