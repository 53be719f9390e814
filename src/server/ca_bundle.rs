//! Does the API server trust us? With `--webhook-configuration NAME`, `serve` reads its own
//! Mutating- and ValidatingWebhookConfiguration of that name (RBAC: `get` on exactly that
//! resourceName) every `--ca-bundle-check-interval` seconds and checks that each webhook's
//! `caBundle` verifies the serving certificate for the name the API server calls (the Service's
//! `NAME.NAMESPACE.svc`, or the URL's host). A mismatch (a stale caBundle after a certificate
//! rotation: the API server refuses the handshake and fails open or closed) is logged when it
//! starts and ends, shown as `winlint_ca_bundle_mismatch{configuration} 1`, and named by
//! `/readyz`, which stays ready: the pod is not what is broken, and taking it out of the
//! Service would turn a stale registration into an outage without fixing it.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration, WebhookClientConfig,
};
use kube::Api;
use tokio::sync::watch;

use super::AppState;
use crate::certs::verify::verify;

/// The last results, for `/readyz`: what does not verify (empty: all good, or not checked),
/// and what is wrong with the certificate Secret (`cert_controller`; empty: nothing).
#[derive(Debug, Default)]
pub struct Status {
    problems: Mutex<Vec<String>>,
    secret: Mutex<String>,
}

impl Status {
    /// `; the API server cannot verify …` and `; certificates: …` for `/readyz`, or empty.
    pub fn readyz_detail(&self) -> String {
        let mut out = String::new();
        let p = self.problems.lock().unwrap_or_else(|e| e.into_inner());
        if !p.is_empty() {
            out = format!(
                "; the API server cannot verify this webhook: {}",
                p.join("; ")
            );
        }
        let s = self.secret.lock().unwrap_or_else(|e| e.into_inner());
        if !s.is_empty() {
            out.push_str(&format!("; certificates: {s}"));
        }
        out
    }

    /// Record the certificate Secret's problem (empty: none); the new one when it changed.
    pub(super) fn set_secret_problem(&self, problem: String) -> Option<String> {
        let mut s = self.secret.lock().unwrap_or_else(|e| e.into_inner());
        (*s != problem).then(|| {
            s.clone_from(&problem);
            problem
        })
    }
}

/// The name the API server verifies the serving certificate for.
fn called_name(cc: &WebhookClientConfig) -> Option<String> {
    if let Some(s) = &cc.service {
        return Some(format!("{}.{}.svc", s.name, s.namespace));
    }
    let uri: axum::http::Uri = cc.url.as_deref()?.parse().ok()?;
    Some(uri.host()?.trim_matches(['[', ']']).to_string())
}

/// Each webhook of a configuration whose caBundle does not verify `cert_pem`: `webhook: why`.
pub fn mismatches<'a>(
    webhooks: impl Iterator<Item = (&'a str, &'a WebhookClientConfig)>,
    cert_pem: &[u8],
) -> Vec<String> {
    webhooks
        .filter_map(|(name, cc)| {
            let Some(host) = called_name(cc) else {
                return Some(format!("{name}: no service or URL"));
            };
            let bundle = cc.ca_bundle.as_ref().map(|b| b.0.as_slice()).unwrap_or(&[]);
            verify(bundle, cert_pem, &host)
                .err()
                .map(|e| format!("{name} (for {host}): {e}"))
        })
        .collect()
}

/// Start the periodic check (nothing without `--webhook-configuration`).
pub(super) fn spawn(
    name: String,
    client: kube::Client,
    cert: std::path::PathBuf,
    every: Duration,
    state: Arc<AppState>,
    mut shutdown: watch::Receiver<bool>,
) {
    tokio::spawn(async move {
        loop {
            check_now(&name, &client, &cert, &state).await;
            tokio::select! {
                _ = tokio::time::sleep(every) => {}
                _ = shutdown.wait_for(|s| *s) => return,
            }
        }
    });
}

/// One check: the gauges, `/readyz`, and a log line when the result changed. Also run by the
/// certificate controller after each of its passes.
pub(super) async fn check_now(
    name: &str,
    client: &kube::Client,
    cert: &std::path::Path,
    state: &AppState,
) {
    let problems = check(name, client, cert, state).await;
    let mut last = state
        .ca_bundle
        .problems
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    if problems == *last {
        return;
    }
    if problems.is_empty() {
        tracing::info!(
            uid = "",
            "the caBundle of {name} verifies the serving certificate again"
        );
    } else {
        tracing::error!(
            uid = "",
            "the caBundle of the webhook configuration {name} does not verify the serving \
             certificate: the API server cannot call this webhook and fails open or closed per \
             failurePolicy: {}; re-apply the configuration with the current CA (or let \
             cert-manager/the certificate controller inject it)",
            problems.join("; ")
        );
    }
    *last = problems;
}

/// The object of a read, if there is one to check.
fn read<K>(r: Result<Option<K>, kube::Error>, name: &str) -> Option<K> {
    r.unwrap_or_else(|e| {
        tracing::debug!(uid = "", "reading the webhook configuration {name}: {e}");
        None
    })
}

/// One check of both configurations named `name`; sets the gauges.
async fn check(
    name: &str,
    client: &kube::Client,
    cert: &std::path::Path,
    state: &AppState,
) -> Vec<String> {
    // A small file, read once a minute: no need for the blocking pool.
    let cert_pem = match std::fs::read(cert) {
        Ok(c) => c,
        Err(e) => return vec![format!("reading {}: {e}", cert.display())],
    };
    let mutating: Api<MutatingWebhookConfiguration> = Api::all(client.clone());
    let validating: Api<ValidatingWebhookConfiguration> = Api::all(client.clone());
    // (kind, its webhooks' names and client configurations); `None`: not registered (no
    // mutating one with `webhook.mutate: false`) or not readable (no RBAC: nothing to say).
    let registered = [
        (
            "MutatingWebhookConfiguration",
            read(mutating.get_opt(name).await, name).map(|m| {
                m.webhooks
                    .unwrap_or_default()
                    .into_iter()
                    .map(|w| (w.name, w.client_config))
                    .collect::<Vec<_>>()
            }),
        ),
        (
            "ValidatingWebhookConfiguration",
            read(validating.get_opt(name).await, name).map(|v| {
                v.webhooks
                    .unwrap_or_default()
                    .into_iter()
                    .map(|w| (w.name, w.client_config))
                    .collect::<Vec<_>>()
            }),
        ),
    ];
    let mut problems = Vec::new();
    for (kind, webhooks) in registered {
        let Some(webhooks) = webhooks else { continue };
        let found = mismatches(webhooks.iter().map(|(n, c)| (n.as_str(), c)), &cert_pem);
        let label = format!("{kind}/{name}");
        state
            .metrics
            .ca_bundle_mismatch
            .get_or_create(&vec![("configuration".into(), label.clone())])
            .set(i64::from(!found.is_empty()));
        problems.extend(found.into_iter().map(|p| format!("{label} {p}")));
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifests::generate_tls;
    use k8s_openapi::ByteString;
    use k8s_openapi::api::admissionregistration::v1::ServiceReference;

    #[test]
    fn each_webhook_is_checked_for_the_name_it_is_called_by() {
        let tls = generate_tls(&["winlint.ns.svc".into(), "127.0.0.1".into()], 1).unwrap();
        let other = generate_tls(&["winlint.ns.svc".into()], 1).unwrap();
        let service = |ca: &str| WebhookClientConfig {
            service: Some(ServiceReference {
                name: "winlint".into(),
                namespace: "ns".into(),
                ..Default::default()
            }),
            ca_bundle: Some(ByteString(ca.as_bytes().to_vec())),
            url: None,
        };
        let url = |u: &str, ca: &str| WebhookClientConfig {
            url: Some(u.into()),
            ca_bundle: Some(ByteString(ca.as_bytes().to_vec())),
            service: None,
        };
        let cert = tls.cert_pem.as_bytes();
        let good = [
            service(&tls.ca_pem),
            url("https://127.0.0.1:8443/validate", &tls.ca_pem),
        ];
        assert!(mismatches(good.iter().map(|c| ("w", c)), cert).is_empty());
        let stale = service(&other.ca_pem);
        let m = mismatches([("validate.winlint.io", &stale)].into_iter(), cert);
        assert_eq!(m.len(), 1);
        assert!(
            m[0].starts_with("validate.winlint.io (for winlint.ns.svc): "),
            "{m:?}"
        );
        let elsewhere = url("https://10.0.0.9:8443/validate", &tls.ca_pem);
        assert_eq!(mismatches([("w", &elsewhere)].into_iter(), cert).len(), 1);
        let none = WebhookClientConfig::default();
        assert_eq!(mismatches([("w", &none)].into_iter(), cert).len(), 1);
    }
}
