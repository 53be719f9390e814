//! Failed TLS handshakes, made visible: counted by reason (`winlint_tls_handshake_errors_total`)
//! and (`unknown_ca`, `expired`) logged at most once a minute per reason with the count since the last line. The reason
//! that matters is `unknown_ca`: the client refused the serving certificate, which is what an
//! API server with a stale `caBundle` does before it fails open (`failurePolicy: Ignore`) and
//! admits the pod unchecked.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use rustls::AlertDescription;

use super::Metrics;

/// At most one log line per reason in this time.
const LOG_EVERY: Duration = Duration::from_secs(60);

/// Per reason: when the last line was logged, and the failures since.
static LOGGED: Mutex<BTreeMap<&'static str, (Option<Instant>, u64)>> = Mutex::new(BTreeMap::new());

/// The metric label of a failed handshake.
pub(super) fn reason(e: &std::io::Error) -> &'static str {
    let tls = e.get_ref().and_then(|i| i.downcast_ref::<rustls::Error>());
    match tls {
        // Go's crypto/tls (the API server) answers an untrusted chain with bad_certificate,
        // OpenSSL and rustls with unknown_ca; a chain whose issuer has the name of the trusted
        // CA but another key (a regenerated CA: the stale-caBundle case) fails its signature
        // check, which rustls answers with decrypt_error.
        Some(rustls::Error::AlertReceived(
            AlertDescription::UnknownCA
            | AlertDescription::BadCertificate
            | AlertDescription::CertificateUnknown
            | AlertDescription::DecryptError,
        )) => "unknown_ca",
        Some(rustls::Error::AlertReceived(AlertDescription::CertificateExpired)) => "expired",
        _ => "other",
    }
}

/// Count a failed handshake, and log it unless its reason was logged in the last minute.
pub(super) fn failed(metrics: &Metrics, peer: SocketAddr, reason: &'static str, detail: &str) {
    metrics
        .tls_handshake_errors
        .get_or_create(&vec![("reason".into(), reason.into())])
        .inc();
    if !matches!(reason, "unknown_ca" | "expired") {
        // Port probes and clients that hang up: counted, not worth a warning.
        tracing::debug!(uid = "", %peer, reason, "TLS handshake failed: {detail}");
        return;
    }
    let mut logged = LOGGED.lock().unwrap_or_else(|e| e.into_inner());
    let (last, since) = logged.entry(reason).or_insert((None, 0));
    *since += 1;
    let now = Instant::now();
    if last.is_some_and(|t| now.duration_since(t) < LOG_EVERY) {
        return;
    }
    let n = std::mem::take(since);
    *last = Some(now);
    drop(logged);
    if reason == "unknown_ca" {
        tracing::warn!(
            uid = "",
            %peer,
            reason,
            failures = n,
            "TLS handshake failed: the client does not trust the serving certificate ({detail}); \
             if it is the API server, the webhook configuration's caBundle is stale and the API \
             server fails open or closed per failurePolicy (winlint_tls_handshake_errors_total)"
        );
    } else {
        tracing::warn!(
            uid = "",
            %peer,
            reason,
            failures = n,
            "TLS handshake failed: the client refused the serving certificate as expired ({detail})"
        );
    }
}
