//! Does a `caBundle` verify a serving certificate for a name? The API server's check, done with
//! rustls' WebPKI verifier (the TLS stack `serve` already uses): chain to a root of the bundle,
//! validity now, `serverAuth` usage, the name in the subject alternative names.

use std::sync::Arc;

use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::ServerCertVerifier;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, ServerName, UnixTime};

/// Why a bundle does not verify a certificate (one line).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Mismatch(pub String);

/// Whether `ca_bundle_pem` verifies the chain `cert_pem` (leaf first) for `name` (a DNS name or
/// an IP address) now.
pub fn verify(ca_bundle_pem: &[u8], cert_pem: &[u8], name: &str) -> Result<(), Mismatch> {
    let roots: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(ca_bundle_pem)
        .collect::<Result<_, _>>()
        .map_err(|e| Mismatch(format!("caBundle is not PEM: {e}")))?;
    if roots.is_empty() {
        return Err(Mismatch("caBundle holds no certificate".into()));
    }
    let mut store = rustls::RootCertStore::empty();
    let (_, rejected) = store.add_parsable_certificates(roots);
    if store.is_empty() {
        return Err(Mismatch(format!(
            "caBundle: none of its {rejected} certificate(s) can be a root"
        )));
    }
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(cert_pem)
        .collect::<Result<_, _>>()
        .map_err(|e| Mismatch(format!("serving certificate is not PEM: {e}")))?;
    let Some((leaf, intermediates)) = chain.split_first() else {
        return Err(Mismatch("no serving certificate".into()));
    };
    let server_name = ServerName::try_from(name.to_string())
        .map_err(|e| Mismatch(format!("name {name:?}: {e}")))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let verifier = WebPkiServerVerifier::builder_with_provider(Arc::new(store), provider)
        .build()
        .map_err(|e| Mismatch(format!("caBundle: {e}")))?;
    verifier
        .verify_server_cert(leaf, intermediates, &server_name, &[], UnixTime::now())
        .map(|_| ())
        .map_err(|e| Mismatch(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifests::generate_tls;

    #[test]
    fn the_own_ca_verifies_another_does_not() {
        let a = generate_tls(&["winlint.ns.svc".into(), "127.0.0.1".into()], 1).unwrap();
        let b = generate_tls(&["winlint.ns.svc".into()], 1).unwrap();
        let (ca, cert) = (a.ca_pem.as_bytes(), a.cert_pem.as_bytes());
        assert_eq!(verify(ca, cert, "winlint.ns.svc"), Ok(()));
        assert_eq!(verify(ca, cert, "127.0.0.1"), Ok(()));
        // A bundle with both CAs (a rotation's overlap) verifies too.
        let both = format!("{}{}", b.ca_pem, a.ca_pem);
        assert_eq!(verify(both.as_bytes(), cert, "winlint.ns.svc"), Ok(()));
        // Another CA of the same name: the stale caBundle case.
        let e = verify(b.ca_pem.as_bytes(), cert, "winlint.ns.svc").unwrap_err();
        assert!(!e.0.is_empty());
        // Another name.
        assert!(verify(ca, cert, "other.ns.svc").is_err());
        assert!(verify(b"", cert, "x").is_err());
        assert!(verify(b"junk", cert, "x").is_err());
    }
}
