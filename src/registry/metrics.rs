//! Registry lookup metrics (`winlint_registry_*` on `serve`'s /metrics: its registry adds the
//! `winlint_` prefix): lookups by registry and
//! outcome, cache hits, failures by registry and reason, lookup latency by registry.
//!
//! The pod author names the registry, so the `registry` label comes from a bounded set
//! ([`RegistryMetrics::label`]): the registries `registry.metricRegistries` names (at most
//! [`MAX_CONFIGURED`]), the well-known public ones ([`WELL_KNOWN`], and [`WELL_KNOWN_SUFFIXES`]
//! for the per-tenant hosts of cloud registries, one label per cloud), and `other`. 160 000
//! registries named by pods are at most 64 + 12 label values.

use std::collections::BTreeSet;
use std::sync::Arc;
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
    /// The configured registries (lowercase, without `:443`).
    hosts: Arc<BTreeSet<String>>,
}

/// The most configured registries labelled by name.
pub const MAX_CONFIGURED: usize = 64;

/// Registries labelled by their own name (compared lowercase, without `:443`).
pub const WELL_KNOWN: [&str; 7] = [
    "mcr.microsoft.com",
    "docker.io",
    "registry.k8s.io",
    "ghcr.io",
    "quay.io",
    "gcr.io",
    "public.ecr.aws",
];

/// Per-tenant hosts of cloud registries: (suffix, label). `myteam.azurecr.io` is `azurecr.io`,
/// `us.gcr.io` and `k8s.gcr.io` are `gcr.io`, `europe-docker.pkg.dev` is `pkg.dev`,
/// `123.dkr.ecr.eu-west-1.amazonaws.com` is `amazonaws.com`.
pub const WELL_KNOWN_SUFFIXES: [(&str, &str); 4] = [
    (".azurecr.io", "azurecr.io"),
    (".gcr.io", "gcr.io"),
    ("-docker.pkg.dev", "pkg.dev"),
    (".amazonaws.com", "amazonaws.com"),
];

/// Docker Hub's other names (containerd's normalisation).
const DOCKER_HUB: [&str; 2] = ["index.docker.io", "registry-1.docker.io"];

/// A registry host as compared: lowercase, without the default port.
fn canonical(registry: &str) -> String {
    let r = registry.to_ascii_lowercase();
    match r.strip_suffix(":443") {
        Some(h) => h.to_string(),
        None => r,
    }
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
            hosts: Arc::default(),
        }
    }
}

impl RegistryMetrics {
    /// Metrics that label `hosts` (`registry.metricRegistries`: the first
    /// [`MAX_CONFIGURED`]) by name besides the well-known registries.
    pub fn with_hosts<S: AsRef<str>>(hosts: impl IntoIterator<Item = S>) -> Self {
        RegistryMetrics {
            hosts: Arc::new(
                hosts
                    .into_iter()
                    .take(MAX_CONFIGURED)
                    .map(|h| canonical(h.as_ref()))
                    .collect(),
            ),
            ..RegistryMetrics::default()
        }
    }

    /// The `registry` label of a registry: its name when configured or well known, the
    /// cloud's for a tenant host of a cloud registry, else `other`.
    pub fn label(&self, registry: &str) -> String {
        let r = canonical(registry);
        if self.hosts.contains(&r) || WELL_KNOWN.contains(&r.as_str()) {
            return r;
        }
        if DOCKER_HUB.contains(&r.as_str()) {
            return "docker.io".into();
        }
        WELL_KNOWN_SUFFIXES
            .iter()
            .find(|(suffix, _)| r.ends_with(suffix))
            .map_or("other", |(_, label)| label)
            .into()
    }

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
        let reg = ("registry".to_string(), self.label(registry));
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_come_from_a_bounded_set() {
        let m = RegistryMetrics::with_hosts(["Registry.Corp.Example:5000", "mirror.example"]);
        assert_eq!(
            m.label("registry.corp.example:5000"),
            "registry.corp.example:5000"
        );
        assert_eq!(m.label("mirror.example:443"), "mirror.example");
        assert_eq!(m.label("MCR.microsoft.com"), "mcr.microsoft.com");
        assert_eq!(m.label("registry-1.docker.io:443"), "docker.io");
        assert_eq!(m.label("team.azurecr.io"), "azurecr.io");
        assert_eq!(m.label("k8s.gcr.io"), "gcr.io");
        assert_eq!(m.label("europe-docker.pkg.dev"), "pkg.dev");
        assert_eq!(
            m.label("1.dkr.ecr.eu-west-1.amazonaws.com"),
            "amazonaws.com"
        );
        assert_eq!(m.label("attacker-1234.example"), "other");
        assert_eq!(m.label("127.0.0.1:5000"), "other");
        // The configured list is cut at MAX_CONFIGURED.
        let many = RegistryMetrics::with_hosts((0..1000).map(|i| format!("r{i}.example")));
        assert_eq!(many.hosts.len(), MAX_CONFIGURED);
        assert_eq!(many.label("r999.example"), "other");
    }
}
