//! Registry lookup metrics (`winlint_registry_*` on `serve`'s /metrics: its registry adds the
//! `winlint_` prefix): lookups by registry and
//! outcome, cache hits, failures by registry and reason, lookup latency by registry.

use std::time::Duration;

use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

use super::client::LookupError;

type Labels = Vec<(String, String)>;

#[derive(Debug, Clone)]
pub struct RegistryMetrics {
    pub lookups: Family<Labels, Counter>,
    pub cache_hits: Counter,
    pub failures: Family<Labels, Counter>,
    pub latency: Family<Labels, Histogram>,
    /// The sum of `lookups` (a family cannot be summed in place).
    sent: Counter,
}

impl Default for RegistryMetrics {
    fn default() -> Self {
        RegistryMetrics {
            lookups: Family::default(),
            cache_hits: Counter::default(),
            failures: Family::default(),
            latency: Family::new_with_constructor(|| {
                Histogram::new(exponential_buckets(0.001, 2.0, 16))
            }),
            sent: Counter::default(),
        }
    }
}

impl RegistryMetrics {
    pub fn register(&self, r: &mut Registry) {
        r.register(
            "registry_lookups",
            "Image lookups sent to a registry, by registry and outcome",
            self.lookups.clone(),
        );
        r.register(
            "registry_cache_hits",
            "Image fact reads answered from the cache (serve: every rule's read of a request)",
            self.cache_hits.clone(),
        );
        r.register(
            "registry_failures",
            "Failed image lookups, by registry and reason",
            self.failures.clone(),
        );
        r.register(
            "registry_lookup_seconds",
            "Time of one image lookup (all its requests), by registry",
            self.latency.clone(),
        );
    }

    pub(super) fn observe(&self, registry: &str, took: Duration, err: Option<&LookupError>) {
        let reg = ("registry".to_string(), registry.to_string());
        self.sent.inc();
        let outcome = if err.is_some() { "error" } else { "ok" };
        self.lookups
            .get_or_create(&vec![reg.clone(), ("outcome".into(), outcome.into())])
            .inc();
        self.latency
            .get_or_create(&vec![reg.clone()])
            .observe(took.as_secs_f64());
        if let Some(e) = err {
            self.failures
                .get_or_create(&vec![reg, ("reason".into(), reason(e).into())])
                .inc();
        }
    }

    /// Lookups sent so far (every registry and outcome): what tests and the replay count.
    pub fn lookup_count(&self) -> u64 {
        self.sent.get()
    }
}

fn reason(e: &LookupError) -> &'static str {
    match e {
        LookupError::Http(super::http::HttpError::Timeout(..)) => "timeout",
        LookupError::Http(super::http::HttpError::TooLarge(_)) => "too_large",
        LookupError::Http(super::http::HttpError::Redirects(_)) => "redirects",
        LookupError::Http(super::http::HttpError::Refused(_)) => "refused",
        LookupError::Http(_) => "transport",
        LookupError::Throttled { .. } => "throttled",
        LookupError::Status { .. } => "status",
        LookupError::NotFound => "not_found",
        LookupError::Auth(_) => "unauthorized",
        LookupError::Manifest(_) | LookupError::Digest { .. } => "bad_manifest",
        LookupError::Backoff(_) => "backoff",
        LookupError::Reference => "reference",
    }
}
