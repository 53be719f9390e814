//! Does a `caBundle` verify a serving certificate for a name? The API server's check, done with
//! rustls' WebPKI verifier (the TLS stack `serve` already uses): chain to a root of the bundle,
//! validity now, `serverAuth` usage, the name in the subject alternative names. And does a
//! private key belong to a certificate ([`key_pairs`]: the public key of the key is the
//! certificate's), so that a CA key is never used with a CA certificate it did not make.

use std::sync::Arc;

use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::ServerCertVerifier;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};

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

/// Whether the private key `key_pem` belongs to the first certificate of `cert_pem`: its public
/// key is the certificate's subject public key (rustls' own check of a serving pair).
pub fn key_pairs(cert_pem: &[u8], key_pem: &[u8]) -> Result<(), Mismatch> {
    let cert = CertificateDer::pem_slice_iter(cert_pem)
        .next()
        .ok_or_else(|| Mismatch("no certificate".into()))?
        .map_err(|e| Mismatch(format!("certificate is not PEM: {e}")))?;
    let key = PrivateKeyDer::from_pem_slice(key_pem)
        .map_err(|e| Mismatch(format!("key is not a PEM private key: {e}")))?;
    let provider = rustls::crypto::ring::default_provider();
    let key = provider
        .key_provider
        .load_private_key(key)
        .map_err(|e| Mismatch(format!("key: {e}")))?;
    rustls::sign::CertifiedKey::new(vec![cert], key)
        .keys_match()
        .map_err(|e| match e {
            rustls::Error::InconsistentKeys(rustls::InconsistentKeys::KeyMismatch) => {
                Mismatch("the key's public key is not the certificate's".into())
            }
            e => Mismatch(e.to_string()),
        })
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

    #[test]
    fn a_key_pairs_with_its_own_certificate_only() {
        let a = crate::certs::issue::new_ca(std::time::Duration::from_secs(60)).unwrap();
        let b = crate::certs::issue::new_ca(std::time::Duration::from_secs(60)).unwrap();
        assert_eq!(key_pairs(a.cert.as_bytes(), a.key.as_bytes()), Ok(()));
        let e = key_pairs(b.cert.as_bytes(), a.key.as_bytes()).unwrap_err();
        assert_eq!(e.0, "the key's public key is not the certificate's");
        assert!(key_pairs(b"", a.key.as_bytes()).is_err());
        assert!(key_pairs(a.cert.as_bytes(), b"junk").is_err());
    }
}
