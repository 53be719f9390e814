//! `winlint serve` and the registry (`registry.mode`): the cache the webhook's context reads,
//! and the wait of `sync` mode. Background mode never delays a request: a miss is judged by
//! the image's name and queues a lookup whose fact later requests read.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use super::source::{Background, image_references, reader_of};
use super::{Credentials, Limits, RegistryClient, RegistryMetrics, Resolver, Settings};
use crate::config::{RegistryFile, RegistryMode};
use crate::model::context::ImageFactsSource;

/// The registry side of `serve`; `None` when `registry.mode` is `off`.
#[derive(Debug, Clone)]
pub struct ServeImages {
    resolver: Resolver,
    /// Replaced by the pull-secret reader (`registry.pullSecrets`).
    credentials: Credentials,
    mode: RegistryMode,
    budget: Duration,
}

impl ServeImages {
    /// Build from the configuration and register the metrics. Credentials: none until
    /// `pull_secrets::follow` reads the configured secrets into [`ServeImages::credentials`].
    pub fn new(
        cfg: &RegistryFile,
        metrics: &mut prometheus_client::registry::Registry,
    ) -> Option<Self> {
        if cfg.mode == RegistryMode::Off {
            return None;
        }
        let settings = Settings {
            tag_ttl: Duration::from_secs(cfg.tag_ttl_seconds.unwrap_or(600)),
            capacity: cfg.cache_entries.unwrap_or(4096).max(1),
            ..Settings::default()
        };
        let m = RegistryMetrics::with_hosts(&cfg.metric_registries);
        m.register(metrics);
        let credentials = Credentials::default();
        let client = RegistryClient::new(Limits::default(), credentials.clone());
        Some(ServeImages {
            resolver: Resolver::new(client, settings, m),
            credentials,
            mode: cfg.mode,
            budget: Duration::from_millis(
                cfg.sync_budget_ms
                    .unwrap_or(500)
                    .min(crate::config::MAX_SYNC_BUDGET_MS),
            ),
        })
    }

    /// What the webhook's context reads.
    pub fn source(&self) -> Arc<dyn ImageFactsSource> {
        Arc::new(Background(self.resolver.clone()))
    }

    /// The credentials lookups use (the pull secrets' reader swaps them).
    pub fn credentials(&self) -> &Credentials {
        &self.credentials
    }

    pub fn resolver(&self) -> &Resolver {
        &self.resolver
    }

    /// `sync`: look the request's images up, waiting at most the budget (what is not known by
    /// then is judged by its name, and its lookup goes on). Background: nothing.
    ///
    /// The lookups are the background queue's (`Resolver::queue`): at most `max_in_flight`
    /// run at once across all requests, and an image beyond that is judged by its name, as in
    /// background mode, rather than starting one more lookup per image of every request.
    pub async fn before_review(&self, body: &[u8]) {
        if self.mode != RegistryMode::Sync {
            return;
        }
        let Ok(review) = serde_json::from_slice::<Value>(body) else {
            return;
        };
        let mut refs = BTreeSet::new();
        if let Some(o) = review.pointer("/request/object") {
            image_references(o, &mut refs);
        }
        // The namespace the evaluation reads the facts as: the object's, else the request's
        // (`Webhook::in_namespace` fills the one from the other).
        let namespace = ["/request/object/metadata/namespace", "/request/namespace"]
            .iter()
            .find_map(|p| review.pointer(p).and_then(Value::as_str));
        let reader = reader_of(namespace);
        refs.retain(|r| self.resolver.peek_for(r, &reader).is_none());
        if refs.is_empty() {
            return;
        }
        for r in &refs {
            // Started detached, so a lookup the budget cuts off still fills the cache.
            self.resolver.queue_for(r, &reader);
        }
        let _ =
            tokio::time::timeout(self.budget, self.resolver.join_running_for(&refs, &reader)).await;
    }
}
