//! Issue the webhook's CA and serving certificates (rcgen, ring). The CA's parameters are
//! fixed, so a CA key alone (kept in a Secret by the certificate controller) is enough to sign
//! new serving certificates under the same CA: rotating the serving certificate never changes
//! the caBundle the API server holds.

use std::net::IpAddr;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose, SanType,
};

/// Why a certificate cannot be issued.
#[derive(Debug, thiserror::Error)]
pub enum IssueError {
    #[error("generating certificates: {0}")]
    Certificates(#[from] rcgen::Error),
    #[error("name {name:?}: {source}")]
    Name { name: String, source: rcgen::Error },
}

/// A PEM certificate and its PEM private key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pem {
    pub cert: String,
    pub key: String,
}

/// Seconds from the epoch to `t` (rcgen's time is `1970-01-01 + this`).
fn since_epoch(t: SystemTime) -> Duration {
    Duration::from_secs(
        t.duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0),
    )
}

/// The CA's parameters: the same for every CA winlint makes, so [`issuer`] can rebuild them.
fn ca_params() -> Result<CertificateParams, rcgen::Error> {
    let mut ca = CertificateParams::new(Vec::<String>::new())?;
    ca.distinguished_name
        .push(DnType::CommonName, "winlint webhook CA");
    ca.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
    ca.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    Ok(ca)
}

/// A new CA valid from a day ago for `validity`.
pub fn new_ca(validity: Duration) -> Result<Pem, IssueError> {
    let now = SystemTime::now();
    let mut ca = ca_params()?;
    ca.not_before =
        rcgen::date_time_ymd(1970, 1, 1) + since_epoch(now - Duration::from_secs(86_400));
    ca.not_after = rcgen::date_time_ymd(1970, 1, 1) + since_epoch(now + validity);
    let key = KeyPair::generate()?;
    let cert = ca.self_signed(&key)?;
    Ok(Pem {
        cert: cert.pem(),
        key: key.serialize_pem(),
    })
}

/// The issuer of the CA whose key is `ca_key_pem`.
fn issuer(ca_key_pem: &str) -> Result<Issuer<'static, KeyPair>, IssueError> {
    Ok(Issuer::new(ca_params()?, KeyPair::from_pem(ca_key_pem)?))
}

/// A serving certificate for `names` (DNS names or IP addresses) signed by the CA whose key is
/// `ca_key_pem`, valid from a minute ago (clock skew) for `validity`.
pub fn serving(ca_key_pem: &str, names: &[String], validity: Duration) -> Result<Pem, IssueError> {
    let issuer = issuer(ca_key_pem)?;
    let mut leaf = CertificateParams::new(Vec::<String>::new())?;
    for n in names {
        let san = match n.parse::<IpAddr>() {
            Ok(ip) => SanType::IpAddress(ip),
            Err(_) => {
                SanType::DnsName(n.clone().try_into().map_err(|source| IssueError::Name {
                    name: n.clone(),
                    source,
                })?)
            }
        };
        leaf.subject_alt_names.push(san);
    }
    if let Some(first) = names.first() {
        leaf.distinguished_name
            .push(DnType::CommonName, first.as_str());
    }
    leaf.key_usages = vec![
        KeyUsagePurpose::DigitalSignature,
        KeyUsagePurpose::KeyEncipherment,
    ];
    leaf.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    leaf.use_authority_key_identifier_extension = true;
    let now = SystemTime::now();
    leaf.not_before = rcgen::date_time_ymd(1970, 1, 1) + since_epoch(now - Duration::from_secs(60));
    leaf.not_after = rcgen::date_time_ymd(1970, 1, 1) + since_epoch(now + validity);
    let key = KeyPair::generate()?;
    let cert = leaf.signed_by(&key, &issuer)?;
    Ok(Pem {
        cert: cert.pem(),
        key: key.serialize_pem(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serving_certificates_of_one_ca_key_verify_under_its_certificate() {
        let ca = new_ca(Duration::from_secs(3600)).unwrap();
        let names = ["winlint.ns.svc".to_string(), "127.0.0.1".to_string()];
        let a = serving(&ca.key, &names, Duration::from_secs(60)).unwrap();
        let b = serving(&ca.key, &names, Duration::from_secs(60)).unwrap();
        assert_ne!(a, b);
        for p in [&a, &b] {
            crate::certs::verify::verify(ca.cert.as_bytes(), p.cert.as_bytes(), "winlint.ns.svc")
                .unwrap();
        }
        assert!(serving("junk", &names, Duration::from_secs(60)).is_err());
    }
}
