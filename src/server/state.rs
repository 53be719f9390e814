//! What the handlers share: the current evaluation state, metrics, limits.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use tokio::sync::Semaphore;

use crate::admission::Webhook;
use crate::cluster::{ClusterFacts, ClusterWatch, Effective};
use crate::config::Config;

use super::Metrics;

/// What requests are evaluated with: the webhook (effective configuration + context), the
/// cluster facts and the configuration it was built from. Immutable; replaced whole when the
/// facts or the configuration change ([`AppState::apply_facts`], [`AppState::apply_config`]).
pub struct Evaluation {
    pub webhook: Webhook,
    /// The snapshot behind it ([`ClusterFacts::empty`] without live facts).
    pub facts: Arc<ClusterFacts>,
    /// The configuration behind it, as loaded (before the facts are applied).
    pub config: Arc<LoadedConfig>,
}

/// A configuration as loaded from `--config`, and where it came from (for the log).
#[derive(Debug, Clone, Default)]
pub struct LoadedConfig {
    pub config: Config,
    /// The `--config` file (`None`: the built-in defaults).
    pub path: Option<PathBuf>,
    /// SHA-256 of the file's bytes in hex, what `sha256sum` prints for it.
    pub sha256: Option<String>,
}

impl LoadedConfig {
    /// `FILE (sha256 0123456789ab)`, or `the built-in defaults (no --config)`.
    pub fn source(&self) -> String {
        match (&self.path, &self.sha256) {
            (Some(p), Some(h)) => format!("{} (sha256 {})", p.display(), &h[..h.len().min(12)]),
            (Some(p), None) => p.display().to_string(),
            _ => "the built-in defaults (no --config)".to_string(),
        }
    }
}

impl Evaluation {
    /// The one derivation of an evaluation state: the configuration with the facts applied
    /// ([`Effective`]), the context with the registry's facts.
    pub(super) fn build(
        config: Arc<LoadedConfig>,
        facts: Arc<ClusterFacts>,
        images: Option<&crate::registry::serve::ServeImages>,
    ) -> Evaluation {
        let eff = Effective::new(&config.config, &facts);
        let context = with_images(eff.context, images);
        let webhook = Webhook::with_context(Arc::unwrap_or_clone(eff.config), context);
        Evaluation {
            webhook,
            facts,
            config,
        }
    }
}

/// State shared by the handlers.
pub struct AppState {
    /// The current evaluation: a request clones the `Arc` (under the read lock only for that).
    pub(super) evaluation: RwLock<Arc<Evaluation>>,
    /// A new generation each time [`Self::rebuild`] swaps the evaluation in (new facts or a
    /// reloaded configuration: the audit loop runs again).
    pub(super) evaluations: tokio::sync::watch::Sender<u64>,
    /// Held while an evaluation state is built and swapped in, so that a facts snapshot and
    /// a configuration reload arriving together both end up in force.
    pub(super) rebuilding: Mutex<()>,
    /// The live facts (`None`: `--cluster-facts=off`, or no cluster configuration found).
    pub(super) watch: Option<ClusterWatch>,
    /// `/readyz` may say ready: the first sync arrived, its wait timed out, or no facts.
    pub(super) facts_settled: AtomicBool,
    /// The errors already counted in `watch_errors`, per resource.
    pub(super) counted_errors: std::sync::Mutex<std::collections::BTreeMap<&'static str, u64>>,
    pub metrics: Metrics,
    /// False once shutting down (`/readyz` 503).
    pub ready: AtomicBool,
    pub(super) limit: Arc<Semaphore>,
    /// Budget of in-flight request bytes (one permit a byte), taken as bodies are read.
    pub(super) bytes: Arc<Semaphore>,
    pub(super) bytes_total: usize,
    pub(super) max_body: usize,
    /// The read-rate floor of a body, bytes per second.
    pub(super) min_body_rate: u64,
    pub(super) request_timeout: Duration,
    /// What the caBundle check found (`--webhook-configuration`), for /readyz.
    pub(super) ca_bundle: super::ca_bundle::Status,
    /// `registry.mode` background or sync: the image facts (issue 18, `crate::registry::serve`).
    pub(super) images: Option<crate::registry::serve::ServeImages>,
}

impl AppState {
    /// The evaluation state requests use now (an `Arc` clone under a read lock).
    pub fn evaluation(&self) -> Arc<Evaluation> {
        self.evaluation
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Build the evaluation state of `facts` and swap it in: what the watch does on every new
    /// snapshot (public for tests and embedding). The derivation is not free (the context
    /// holds every namespace): call it off the request path.
    pub fn apply_facts(&self, facts: Arc<ClusterFacts>) {
        self.rebuild(None, Some(facts));
        self.metrics.facts_rebuilds.inc();
    }

    /// Build the evaluation state of a new configuration (the current facts applied) and swap
    /// it in: what the `--config` reload does once the file's new content is valid.
    pub fn apply_config(&self, config: Arc<LoadedConfig>) {
        self.rebuild(Some(config), None);
    }

    /// The one path that replaces the evaluation state: the current one with a new
    /// configuration or new facts. Logs what changed: the facts judged with, and the
    /// enforcement in force with its source.
    fn rebuild(&self, config: Option<Arc<LoadedConfig>>, facts: Option<Arc<ClusterFacts>>) {
        let _one_at_a_time = self.rebuilding.lock().unwrap_or_else(|e| e.into_inner());
        let cur = self.evaluation();
        let new = Arc::new(Evaluation::build(
            config.unwrap_or_else(|| Arc::clone(&cur.config)),
            facts.unwrap_or_else(|| Arc::clone(&cur.facts)),
            self.images.as_ref(),
        ));
        let old = {
            let mut slot = self.evaluation.write().unwrap_or_else(|e| e.into_inner());
            std::mem::replace(&mut *slot, Arc::clone(&new))
        };
        self.evaluations.send_modify(|g| *g += 1);
        let (was, now) = (facts_summary(&old), facts_summary(&new));
        if was != now {
            tracing::info!(uid = "", "evaluating with {now}");
        }
        log_enforcement(Some(&old), &new);
        // `old` is dropped here, outside the lock.
    }

    /// Whether `/readyz` may say ready as far as the facts go.
    pub fn facts_settled(&self) -> bool {
        self.facts_settled.load(Ordering::SeqCst)
    }

    /// Refresh the cluster-facts metrics (at scrape time: the snapshot's age moves on its own).
    pub(super) fn refresh_fact_metrics(&self) {
        let m = &self.metrics;
        let eval = self.evaluation();
        let facts = &eval.facts;
        m.windows_nodes.clear();
        if facts.synced.nodes {
            for (build, n) in facts.windows_nodes_by_build() {
                let build = build.map_or_else(|| "unknown".to_string(), |b| b.to_string());
                m.windows_nodes
                    .get_or_create(&vec![("build".into(), build)])
                    .set(n as i64);
            }
        }
        m.facts_synced.set(i64::from(facts.synced.all()));
        let Some(watch) = &self.watch else {
            m.cluster_objects.clear();
            m.facts_healthy.set(1);
            return;
        };
        let nodes: usize = facts.groups.iter().map(|g| g.count()).sum();
        for (resource, n) in [
            ("nodes", nodes),
            ("namespaces", facts.namespaces.len()),
            ("runtimeclasses", facts.runtime_classes.len()),
        ] {
            m.cluster_objects
                .get_or_create(&vec![("resource".into(), resource.into())])
                .set(n as i64);
        }
        let fm = watch.metrics();
        m.facts_healthy.set(i64::from(fm.healthy));
        m.facts_staleness.set(fm.staleness.as_secs_f64());
        m.facts_age.set(
            std::time::SystemTime::now()
                .duration_since(facts.built_at)
                .unwrap_or_default()
                .as_secs_f64(),
        );
        let mut counted = self
            .counted_errors
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        for r in watch.status().resources {
            let seen = counted.entry(r.resource).or_default();
            if r.errors_total > *seen {
                m.watch_errors
                    .get_or_create(&vec![("resource".into(), r.resource.into())])
                    .inc_by(r.errors_total - *seen);
                *seen = r.errors_total;
            }
        }
    }
}

/// The context with the registry's facts, when `registry.mode` is not off.
pub(super) fn with_images(
    context: Arc<crate::model::Context>,
    images: Option<&crate::registry::serve::ServeImages>,
) -> Arc<crate::model::Context> {
    let Some(images) = images else { return context };
    let mut cx = Arc::unwrap_or_clone(context);
    cx.images = Some(images.source());
    Arc::new(cx)
}

/// Log the enforcement in force (`webhook.enforcement`, `webhook.onError`, and the namespaces
/// that override the mode with their label) with the configuration's source: at start
/// (`was` = `None`) and whenever one of them changes.
pub(super) fn log_enforcement(was: Option<&Evaluation>, now: &Evaluation) {
    let summary = enforcement_summary(now);
    let source = now.config.source();
    if was.is_some_and(|w| enforcement_summary(w) == summary && w.config.source() == source) {
        return;
    }
    let p = &now.webhook.config.policy;
    tracing::info!(
        uid = "",
        enforcement = enforcement_name(p.enforcement),
        on_error = on_error_name(p.on_error),
        config = %source,
        "enforcement in force: {summary}; configuration from {source}"
    );
}

fn enforcement_name(e: crate::config::Enforcement) -> &'static str {
    match e {
        crate::config::Enforcement::Deny => "deny",
        crate::config::Enforcement::Warn => "warn",
    }
}

fn on_error_name(e: crate::config::OnError) -> &'static str {
    match e {
        crate::config::OnError::Allow => "allow",
        crate::config::OnError::Deny => "deny",
    }
}

/// `deny (webhook.enforcement), onError allow, namespaces labelled winlint.io/enforcement: 2 warn`.
fn enforcement_summary(e: &Evaluation) -> String {
    use crate::model::labels::ENFORCEMENT_NAMESPACE_LABEL;
    let p = &e.webhook.config.policy;
    let mut overrides = BTreeMap::<&str, usize>::new();
    for labels in e.facts.namespaces.values() {
        if let Some(mode) = labels
            .get(ENFORCEMENT_NAMESPACE_LABEL)
            .and_then(|v| crate::config::Enforcement::from_label(v))
            .filter(|m| *m != p.enforcement)
        {
            *overrides.entry(enforcement_name(mode)).or_default() += 1;
        }
    }
    let overrides = if overrides.is_empty() {
        "none".to_string()
    } else {
        overrides
            .iter()
            .map(|(m, n)| format!("{n} {m}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    format!(
        "{} (webhook.enforcement), onError {}, namespaces labelled {ENFORCEMENT_NAMESPACE_LABEL} otherwise: {overrides}",
        enforcement_name(p.enforcement),
        on_error_name(p.on_error)
    )
}

/// What an evaluation state judges with, for the log: where the facts come from and the
/// target they give.
pub(super) fn facts_summary(e: &Evaluation) -> String {
    let t = &e.webhook.config.target;
    let list = |v: Vec<String>| {
        if v.is_empty() {
            "none".to_string()
        } else {
            v.join(", ")
        }
    };
    let source = if e.facts.synced.all() {
        format!(
            "live cluster facts ({} Windows node groups)",
            e.facts.windows_groups().count()
        )
    } else if e.facts.synced.nodes || e.facts.synced.namespaces || e.facts.synced.runtime_classes {
        "part of the cluster facts (the rest as configured)".to_string()
    } else {
        "the configured facts".to_string()
    };
    format!(
        "{source}: Kubernetes {}, Windows builds [{}], Windows taints [{}], runtime {:?}, mixed builds {}",
        t.kubernetes,
        list(t.windows_builds.iter().map(|b| b.named()).collect()),
        list(t.windows_taints.iter().map(|t| t.to_string()).collect()),
        t.runtime,
        t.cluster_mixed_builds
    )
}
