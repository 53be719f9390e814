//! The serving certificate: loading, the TLS configuration, and the reload loop.

use std::path::Path;
use std::sync::{Arc, RwLock};

use rustls::crypto::CryptoProvider;
use rustls::server::{ClientHello, ResolvesServerCert, WebPkiClientVerifier};
use rustls::sign::CertifiedKey;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use tokio::sync::watch;

use super::poll::{Seen, content_hash, spawn_poll};
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
    let read = |name: &str, p: &Path| {
        std::fs::read(p).map_err(|source| ServeError::Io {
            what: format!("{name} {}", p.display()),
            source,
        })
    };
    let cert_pem = read("--tls-cert", cert)?;
    let key_pem = read("--tls-key", key)?;
    let hash = content_hash(&[&cert_pem, &key_pem]);
    Ok((parse_pair(&cert_pem, &key_pem, cert, key)?, hash))
}

/// A cert/key pair from their PEM texts (`cert` and `key` name the files in errors).
fn parse_pair(
    cert_pem: &[u8],
    key_pem: &[u8],
    cert: &Path,
    key: &Path,
) -> Result<CertifiedKey, ServeError> {
    let flag = |name: &str, p: &Path| format!("{name} {}", p.display());
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(cert_pem)
        .collect::<Result<_, _>>()
        .map_err(|e| ServeError::tls(flag("--tls-cert", cert), e))?;
    if certs.is_empty() {
        return Err(ServeError::tls(
            flag("--tls-cert", cert),
            "no CERTIFICATE in the file",
        ));
    }
    let key_der = PrivateKeyDer::from_pem_slice(key_pem)
        .map_err(|e| ServeError::tls(flag("--tls-key", key), e))?;
    CertifiedKey::from_der(certs, key_der, &provider())
        .map_err(|e| ServeError::tls("certificate and key", e))
}

/// The serving certificate's notAfter, Unix seconds: `winlint_serving_certificate_expiration_timestamp_seconds`
/// (the certificate-expiry alert of the chart's PrometheusRule reads it).
pub(super) fn record_expiry(state: &AppState, ck: &CertifiedKey) {
    match ck.end_entity_cert().ok().and_then(|c| not_after(c)) {
        Some(t) => {
            state.metrics.cert_expiry.set(t);
        }
        None => tracing::warn!(
            uid = "",
            "the serving certificate's notAfter cannot be read"
        ),
    }
}

/// notAfter of a DER X.509 certificate, Unix seconds (RFC 5280 §4.1: Certificate ::=
/// SEQUENCE { tbsCertificate, … }; TBSCertificate ::= SEQUENCE { [0] version OPTIONAL,
/// serialNumber, signature, issuer, validity SEQUENCE { notBefore, notAfter }, … }).
pub(super) fn not_after(der: &[u8]) -> Option<i64> {
    use yasna::{ASN1Error, ASN1ErrorKind, BERReader, Tag};
    let tbs = yasna::parse_der(der, |r| {
        r.read_sequence(|r| {
            let tbs = r.next().read_der()?;
            r.next().read_der()?;
            r.next().read_der()?;
            Ok(tbs)
        })
    })
    .ok()?;
    let mut fields = Vec::new();
    yasna::parse_der(&tbs, |r| {
        r.read_sequence_of(|r| {
            fields.push(r.read_der()?);
            Ok(())
        })
    })
    .ok()?;
    // [0] EXPLICIT version, when present, is the first field.
    let skip = usize::from(fields.first()?.first() == Some(&0xa0));
    let validity = fields.get(skip + 3)?;
    let time = |r: BERReader| -> Result<i64, ASN1Error> {
        match r.lookahead_tag()? {
            Tag { tag_number: 23, .. } => Ok(r.read_utctime()?.datetime().unix_timestamp()),
            Tag { tag_number: 24, .. } => {
                Ok(r.read_generalized_time()?.datetime().unix_timestamp())
            }
            _ => Err(ASN1Error::new(ASN1ErrorKind::Invalid)),
        }
    };
    yasna::parse_der(validity, |r| {
        r.read_sequence(|r| {
            time(r.next())?;
            time(r.next())
        })
    })
    .ok()
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
    rx: watch::Receiver<bool>,
    hash: u64,
) {
    let (cert, key) = (args.tls_cert.clone(), args.tls_key.clone());
    let paths = vec![cert.clone(), key.clone()];
    spawn_poll(
        paths,
        secs(args.cert_reload_interval),
        rx,
        hash,
        move |files| {
            let result = |r: &str| vec![("result".to_string(), r.to_string())];
            match parse_pair(&files[0], &files[1], &cert, &key) {
                Ok(ck) => {
                    record_expiry(&state, &ck);
                    *store.current.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(ck);
                    state
                        .metrics
                        .cert_reloads
                        .get_or_create(&result("ok"))
                        .inc();
                    tracing::info!(uid = "", "serving certificate reloaded");
                    Seen::Settled
                }
                Err(e) => {
                    // Half-written files (cert updated, key not yet): keep the old pair and
                    // try again on the next tick.
                    state
                        .metrics
                        .cert_reloads
                        .get_or_create(&result("error"))
                        .inc();
                    tracing::warn!(
                        uid = "",
                        "certificate reload failed, keeping the old one: {e}"
                    );
                    Seen::Retry
                }
            }
        },
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn not_after_reads_the_validity_of_issued_certificates() {
        use crate::certs::issue::{new_ca, serving};
        let day = std::time::Duration::from_secs(86_400);
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs() as i64;
        let ca = new_ca(day * 3650).unwrap();
        // Whatever the encoding: UTCTime before 2050, GeneralizedTime from 2050 (RFC 5280).
        for (days, what) in [(30u32, "UTCTime"), (40 * 365, "GeneralizedTime")] {
            let leaf =
                serving(&ca.key, &["winlint.winlint-system.svc".into()], day * days).unwrap();
            let der = CertificateDer::from_pem_slice(leaf.cert.as_bytes()).unwrap();
            let t = not_after(&der).unwrap_or_else(|| panic!("{what}"));
            let want = now + i64::from(days) * 86_400;
            assert!((t - want).abs() < 3_600, "{what}: {t} vs {want}");
        }
        assert_eq!(not_after(b"not a certificate"), None);
    }
}
