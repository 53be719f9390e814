//! What the handlers share: the current evaluation state, metrics, limits.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use tokio::sync::Semaphore;

use crate::admission::Webhook;
use crate::cluster::{ClusterFacts, ClusterWatch, Effective};
use crate::config::Config;

use super::Metrics;

/// What requests are evaluated with: the webhook (effective configuration + context) and the
/// cluster facts it was built from. Immutable; replaced whole when the facts change.
pub struct Evaluation {
    pub webhook: Webhook,
    /// The snapshot behind it ([`ClusterFacts::empty`] without live facts).
    pub facts: Arc<ClusterFacts>,
}

/// State shared by the handlers.
pub struct AppState {
    /// The current evaluation: a request clones the `Arc` (under the read lock only for that).
    pub(super) evaluation: RwLock<Arc<Evaluation>>,
    /// A new generation each time [`Self::apply_facts`] swaps the evaluation in (the audit
    /// loop runs again).
    pub(super) evaluations: tokio::sync::watch::Sender<u64>,
    /// The configuration as loaded (`--config`): each snapshot is applied to it.
    pub(super) config: Config,
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
        let eff = Effective::new(&self.config, &facts);
        let context = with_images(eff.context, self.images.as_ref());
        let webhook = Webhook::with_context(Arc::unwrap_or_clone(eff.config), context);
        let new = Arc::new(Evaluation { webhook, facts });
        let old = {
            let mut cur = self.evaluation.write().unwrap_or_else(|e| e.into_inner());
            std::mem::replace(&mut *cur, Arc::clone(&new))
        };
        self.metrics.facts_rebuilds.inc();
        self.evaluations.send_modify(|g| *g += 1);
        let (was, now) = (facts_summary(&old), facts_summary(&new));
        if was != now {
            tracing::info!(uid = "", "evaluating with {now}");
        }
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
