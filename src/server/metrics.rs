//! Prometheus metrics of the webhook and the plain-HTTP metrics/health listener.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::routing::get;
use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

use super::AppState;

/// Metrics of the webhook.
pub struct Metrics {
    pub registry: Registry,
    pub requests: Family<Vec<(String, String)>, Counter>,
    pub latency: Family<Vec<(String, String)>, Histogram>,
    pub findings: Family<Vec<(String, String)>, Counter>,
    pub patches: Family<Vec<(String, String)>, Counter>,
    pub cert_reloads: Family<Vec<(String, String)>, Counter>,
    /// Windows nodes of the facts in use, by build (`unknown`: a Windows node whose build
    /// could not be read).
    pub windows_nodes: Family<Vec<(String, String)>, Gauge>,
    /// Objects of the snapshot in use, by resource (nodes, namespaces, runtimeclasses).
    pub cluster_objects: Family<Vec<(String, String)>, Gauge>,
    /// 1 while the evaluation uses a complete snapshot of the cluster; 0: the configured facts.
    pub facts_synced: Gauge,
    /// 1 while every watch is healthy (or the facts are off).
    pub facts_healthy: Gauge,
    /// Seconds since the snapshot in use was built.
    pub facts_age: Gauge<f64, AtomicU64>,
    /// Seconds the facts may have been missing changes (0 while every watch is healthy).
    pub facts_staleness: Gauge<f64, AtomicU64>,
    /// Watch and version-read errors by resource (nodes, runtimeclasses, namespaces, version).
    pub watch_errors: Family<Vec<(String, String)>, Counter>,
    /// Evaluation states built from cluster facts.
    pub facts_rebuilds: Counter,
    /// Open webhook connections.
    pub connections: Gauge,
    /// Idle connections closed for a newer one at `--max-connections`.
    pub connections_evicted: Counter,
    /// Connections refused at `--max-connections` (every connection busy).
    pub connections_refused: Counter,
    /// Failed accepts (EMFILE and friends).
    pub accept_errors: Counter,
    /// `winlint.io/ignore` exemptions used, by rule and namespace.
    pub exemptions: Family<Vec<(String, String)>, Counter>,
    /// Warn mode: errors that would have denied an admitted object, by rule and namespace.
    pub would_deny: Family<Vec<(String, String)>, Counter>,
    /// TLS handshakes that failed, by reason (`unknown_ca`: the client does not trust the
    /// serving certificate, as an API server with a stale caBundle; `other`).
    pub tls_handshake_errors: Family<Vec<(String, String)>, Counter>,
    /// 1 when a webhook configuration's caBundle does not verify the serving certificate (the
    /// API server cannot call the webhook and fails open or closed), by configuration.
    pub ca_bundle_mismatch: Family<Vec<(String, String)>, Gauge>,
    /// 1 while the certificate Secret is broken (`--certificates-secret`).
    pub certificates_secret_broken: Gauge,
    /// Passes of the certificate controller by outcome.
    pub certificate_passes: Family<Vec<(String, String)>, Counter>,
    /// The serving certificate's notAfter (Unix seconds), set at start and on every reload.
    pub cert_expiry: Gauge,
    /// Configuration reloads (`--config` changed) by result: `ok` (in force), `error` (kept
    /// the configuration in force).
    pub config_reloads: Family<Vec<(String, String)>, Counter>,
    /// 1 when the last content of --config was put in force (or at start), 0 after it was
    /// refused: the configuration in force is then older than the file.
    pub config_last_reload_ok: Gauge,
}

impl Metrics {
    pub(super) fn new() -> Self {
        let mut registry = Registry::with_prefix("winlint");
        let requests = Family::<Vec<(String, String)>, Counter>::default();
        registry.register(
            "admission_requests",
            "Admission requests by endpoint and outcome",
            requests.clone(),
        );
        let latency = Family::<Vec<(String, String)>, Histogram>::new_with_constructor(|| {
            Histogram::new(exponential_buckets(0.00005, 2.0, 18))
        });
        registry.register(
            "admission_request_duration_seconds",
            "Time to answer an admission request (body read to response)",
            latency.clone(),
        );
        let findings = Family::<Vec<(String, String)>, Counter>::default();
        registry.register(
            "findings",
            "Findings reported on admitted objects, by rule and severity",
            findings.clone(),
        );
        let patches = Family::<Vec<(String, String)>, Counter>::default();
        registry.register(
            "patches",
            "Fixes applied by the mutating webhook, by rule",
            patches.clone(),
        );
        let cert_reloads = Family::<Vec<(String, String)>, Counter>::default();
        registry.register(
            "tls_reloads",
            "Serving certificate reloads by result",
            cert_reloads.clone(),
        );
        let windows_nodes = Family::<Vec<(String, String)>, Gauge>::default();
        registry.register(
            "cluster_windows_nodes",
            "Windows nodes of the cluster facts in use, by build",
            windows_nodes.clone(),
        );
        let cluster_objects = Family::<Vec<(String, String)>, Gauge>::default();
        registry.register(
            "cluster_objects",
            "Objects of the cluster facts in use, by resource (nodes, namespaces, runtimeclasses)",
            cluster_objects.clone(),
        );
        let facts_synced = Gauge::default();
        registry.register(
            "cluster_facts_synced",
            "1 when the webhook evaluates with a complete snapshot of the cluster, 0 with the configured facts",
            facts_synced.clone(),
        );
        let facts_healthy = Gauge::default();
        registry.register(
            "cluster_facts_healthy",
            "1 while every cluster watch is healthy (or the cluster facts are off)",
            facts_healthy.clone(),
        );
        let facts_age = Gauge::<f64, AtomicU64>::default();
        registry.register(
            "cluster_facts_snapshot_age_seconds",
            "Seconds since the cluster facts in use were built",
            facts_age.clone(),
        );
        let facts_staleness = Gauge::<f64, AtomicU64>::default();
        registry.register(
            "cluster_facts_staleness_seconds",
            "Seconds the cluster facts may have been missing changes (0 while every watch is healthy)",
            facts_staleness.clone(),
        );
        let watch_errors = Family::<Vec<(String, String)>, Counter>::default();
        registry.register(
            "cluster_watch_errors",
            "Errors of the cluster watches and version reads, by resource (the last good facts are kept)",
            watch_errors.clone(),
        );
        let facts_rebuilds = Counter::default();
        registry.register(
            "cluster_facts_rebuilds",
            "Evaluation states built from new cluster facts",
            facts_rebuilds.clone(),
        );
        let connections = Gauge::default();
        registry.register(
            "connections",
            "Open webhook connections",
            connections.clone(),
        );
        let connections_evicted = Counter::default();
        registry.register(
            "connections_evicted",
            "Idle connections closed for a newer one at --max-connections",
            connections_evicted.clone(),
        );
        let connections_refused = Counter::default();
        registry.register(
            "connections_refused",
            "Connections refused at --max-connections while every connection was busy",
            connections_refused.clone(),
        );
        let accept_errors = Counter::default();
        registry.register(
            "accept_errors",
            "Failed accepts of new connections (EMFILE and friends)",
            accept_errors.clone(),
        );
        let exemptions = Family::<Vec<(String, String)>, Counter>::default();
        registry.register(
            "exemptions",
            "Findings exempted by the winlint.io/ignore annotation, by rule and namespace",
            exemptions.clone(),
        );
        let would_deny = Family::<Vec<(String, String)>, Counter>::default();
        registry.register(
            "would_deny",
            "Warn mode: errors that would have denied an admitted object, by rule and namespace",
            would_deny.clone(),
        );
        let tls_handshake_errors = Family::<Vec<(String, String)>, Counter>::default();
        registry.register(
            "tls_handshake_errors",
            "Failed TLS handshakes by reason (unknown_ca: the client does not trust the serving certificate)",
            tls_handshake_errors.clone(),
        );
        let ca_bundle_mismatch = Family::<Vec<(String, String)>, Gauge>::default();
        registry.register(
            "ca_bundle_mismatch",
            "1 when the webhook configuration's caBundle does not verify the serving certificate",
            ca_bundle_mismatch.clone(),
        );
        let certificates_secret_broken = Gauge::default();
        registry.register(
            "certificates_secret_broken",
            "1 while the certificate Secret cannot be used to issue a serving certificate \
             (ca.crt and ca.key do not pair, or one is missing): nothing is re-issued",
            certificates_secret_broken.clone(),
        );
        let certificate_passes = Family::<Vec<(String, String)>, Counter>::default();
        registry.register(
            "certificate_controller_passes",
            "Passes of the certificate controller by outcome (current, issued, created, broken, \
             error)",
            certificate_passes.clone(),
        );
        let cert_expiry = Gauge::default();
        registry.register(
            "serving_certificate_expiration_timestamp_seconds",
            "The serving certificate's notAfter, Unix seconds (set at start and on every reload)",
            cert_expiry.clone(),
        );
        let config_reloads = Family::<Vec<(String, String)>, Counter>::default();
        registry.register(
            "config_reload",
            "Reloads of the --config file after it changed, by result (ok: in force; error: \
             refused, the configuration in force is kept)",
            config_reloads.clone(),
        );
        let config_last_reload_ok = Gauge::default();
        config_last_reload_ok.set(1);
        registry.register(
            "config_last_reload_successful",
            "1 when the last content of the --config file is in force, 0 when it was refused \
             (the previous configuration is in force)",
            config_last_reload_ok.clone(),
        );
        Metrics {
            config_last_reload_ok,
            cert_expiry,
            config_reloads,
            connections,
            connections_evicted,
            connections_refused,
            accept_errors,
            exemptions,
            registry,
            would_deny,
            tls_handshake_errors,
            ca_bundle_mismatch,
            certificates_secret_broken,
            certificate_passes,
            requests,
            latency,
            findings,
            patches,
            cert_reloads,
            windows_nodes,
            cluster_objects,
            facts_synced,
            facts_healthy,
            facts_age,
            facts_staleness,
            watch_errors,
            facts_rebuilds,
        }
    }

    pub(super) fn request(&self, endpoint: &str, outcome: &str) {
        self.requests
            .get_or_create(&vec![
                ("endpoint".into(), endpoint.into()),
                ("outcome".into(), outcome.into()),
            ])
            .inc();
    }

    /// The Prometheus text exposition.
    pub fn render(&self) -> String {
        let mut s = String::new();
        encode(&mut s, &self.registry).expect("writing to a String cannot fail");
        s
    }
}

pub(super) fn metrics_router(state: Arc<AppState>) -> Router {
    Router::new()
        .route(
            "/metrics",
            get(|State(s): State<Arc<AppState>>| async move {
                (
                    [(
                        header::CONTENT_TYPE,
                        "application/openmetrics-text; version=1.0.0; charset=utf-8",
                    )],
                    {
                        s.refresh_fact_metrics();
                        s.metrics.render()
                    },
                )
            }),
        )
        .route("/healthz", get(|| async { "ok" }))
        .route(
            "/readyz",
            get(|State(s): State<Arc<AppState>>| async move {
                if !s.ready.load(Ordering::SeqCst) {
                    (StatusCode::SERVICE_UNAVAILABLE, "shutting down".to_string())
                } else if !s.facts_settled() {
                    (
                        StatusCode::SERVICE_UNAVAILABLE,
                        "waiting for the first sync of the cluster facts".to_string(),
                    )
                } else {
                    let facts = if s.evaluation().facts.synced.all() {
                        "ready: live cluster facts"
                    } else {
                        "ready: configured facts"
                    };
                    (
                        StatusCode::OK,
                        format!("{facts}{}", s.ca_bundle.readyz_detail()),
                    )
                }
            }),
        )
        .with_state(state)
}

#[cfg(test)]
mod tests {
    use super::Metrics;
    use std::collections::BTreeSet;

    /// Every family of `serve`'s registry with one member, the registry lookups' included, so
    /// that the exposition names them all (an empty family is not encoded).
    fn populated() -> Metrics {
        let mut m = Metrics::new();
        let reg = crate::registry::metrics::RegistryMetrics::default();
        reg.register(&mut m.registry);
        super::super::audit_loop::AuditMetrics::new(&mut m.registry);
        let l = vec![("k".to_string(), "v".to_string())];
        for f in [
            &m.requests,
            &m.findings,
            &m.patches,
            &m.cert_reloads,
            &m.watch_errors,
            &m.exemptions,
            &m.would_deny,
            &m.tls_handshake_errors,
            &m.certificate_passes,
            &m.config_reloads,
            &reg.lookups,
            &reg.failures,
        ] {
            f.get_or_create(&l).inc();
        }
        for f in [&m.windows_nodes, &m.cluster_objects, &m.ca_bundle_mismatch] {
            f.get_or_create(&l).set(1);
        }
        m.latency.get_or_create(&l).observe(0.1);
        reg.latency.get_or_create(&l).observe(0.1);
        m
    }

    /// The sample names of the exposition: a counter `x` is `x_total`, a histogram `x_bucket`,
    /// `x_sum` and `x_count` (what PromQL names).
    fn exported(text: &str) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        for l in text.lines() {
            let Some((name, kind)) = l.strip_prefix("# TYPE ").and_then(|r| r.split_once(' '))
            else {
                continue;
            };
            let suffixes: &[&str] = match kind {
                "counter" => &["_total"],
                "histogram" => &["_bucket", "_sum", "_count"],
                _ => &[""],
            };
            out.extend(suffixes.iter().map(|s| format!("{name}{s}")));
        }
        out
    }

    /// Issue 29 item 7: every `winlint_*` name in the chart's PrometheusRule and Grafana
    /// dashboard is a sample `serve` exports.
    #[test]
    fn the_alerts_and_the_dashboard_name_only_exported_metrics() {
        let text = populated().render();
        let exported = exported(&text);
        for name in [
            "winlint_admission_requests_total",
            "winlint_admission_request_duration_seconds_bucket",
            "winlint_registry_failures_total",
            "winlint_config_reload_total",
            "winlint_serving_certificate_expiration_timestamp_seconds",
        ] {
            assert!(exported.contains(name), "{name} not in\n{text}");
        }
        let chart = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("charts/winlint");
        let re = regex::Regex::new(r"\bwinlint_[a-z0-9_]+").unwrap();
        for file in [
            "templates/prometheusrule.yaml",
            "files/grafana-dashboard.json",
        ] {
            let body = std::fs::read_to_string(chart.join(file)).unwrap();
            let named: BTreeSet<&str> = re.find_iter(&body).map(|m| m.as_str()).collect();
            assert!(named.len() >= 10, "{file}: {named:?}");
            for name in named {
                assert!(
                    exported.contains(name),
                    "charts/winlint/{file} names {name}, which serve does not export:\n{text}"
                );
            }
        }
    }
}
