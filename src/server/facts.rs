//! The live cluster facts: starting the watch and following its snapshots.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use tokio::sync::watch;

use crate::cluster::{ClientSource, ClusterWatch, WatchOptions};

use super::{AppState, FactsMode, ServeArgs, ServeError};

/// The cluster watch of `args`: `None` with `--cluster-facts=off` or when no cluster
/// configuration can be found (neither flag given, not in a pod, no kubeconfig): the webhook
/// then evaluates with the configured facts and says so. A `--kubeconfig` / `--context` that
/// cannot be used is an error: the operator asked for that cluster.
pub(super) async fn start_watch(args: &ServeArgs) -> Result<Option<ClusterWatch>, ServeError> {
    if args.cluster_facts == FactsMode::Off {
        tracing::info!(
            uid = "",
            "cluster facts off (--cluster-facts=off): the configured target is used and rules \
             that need a namespace's labels do not fire"
        );
        return Ok(None);
    }
    let source = args.cluster.client_source();
    match crate::cluster::connect(&source).await {
        Ok((client, origin)) => {
            tracing::info!(
                uid = "",
                "watching the Nodes, RuntimeClasses and Namespaces of {}{}",
                origin.server,
                origin.context.as_ref().map_or_else(
                    || " (in-cluster)".to_string(),
                    |c| format!(" (context {c})")
                )
            );
            Ok(Some(ClusterWatch::start(client, WatchOptions::default())))
        }
        Err(e) if source == ClientSource::Infer => {
            tracing::warn!(
                uid = "",
                "cluster facts unavailable, evaluating with the configured facts: {e}"
            );
            Ok(None)
        }
        Err(e) => Err(ServeError::Cluster(e)),
    }
}

/// Follow the watch: every new snapshot becomes a new evaluation state (built on the blocking
/// pool, swapped in whole). `/readyz` turns ready when a complete snapshot is in use, or after
/// `limit` with the configured facts.
pub(super) fn follow_facts(
    state: &Arc<AppState>,
    w: &ClusterWatch,
    limit: Duration,
    shutdown: &watch::Receiver<bool>,
) {
    let started = Instant::now();
    let mut rx = w.subscribe();
    let mut stop = shutdown.clone();
    let st = Arc::clone(state);
    tokio::spawn(async move {
        loop {
            let facts = rx.borrow_and_update().clone();
            let synced = facts.synced.all();
            let s = Arc::clone(&st);
            if tokio::task::spawn_blocking(move || s.apply_facts(facts))
                .await
                .is_err()
            {
                tracing::error!(
                    uid = "",
                    "building the evaluation state from the cluster facts failed; keeping the previous one"
                );
            }
            if synced && !st.facts_settled.swap(true, Ordering::SeqCst) {
                tracing::info!(
                    uid = "",
                    "cluster facts in use {:.2?} after start: ready",
                    started.elapsed()
                );
            }
            tokio::select! {
                r = rx.changed() => if r.is_err() { return },
                _ = stop.wait_for(|s| *s) => return,
            }
        }
    });
    let st = Arc::clone(state);
    let mut stop = shutdown.clone();
    tokio::spawn(async move {
        tokio::select! {
            _ = tokio::time::sleep(limit) => {}
            _ = stop.wait_for(|s| *s) => return,
        }
        if st.facts_settled.swap(true, Ordering::SeqCst) {
            return;
        }
        let problems: Vec<String> = st
            .watch
            .as_ref()
            .map(|w| w.status().resources)
            .unwrap_or_default()
            .into_iter()
            .filter_map(|r| {
                r.last_error
                    .map(|e| format!("{}: {e}", r.resource))
                    .or_else(|| (!r.synced).then(|| format!("{}: not listed yet", r.resource)))
            })
            .collect();
        tracing::warn!(
            uid = "",
            "cluster facts not synced after {limit:?} (--cluster-facts-timeout): ready with the \
             configured facts until they arrive ({})",
            problems.join("; ")
        );
    });
}
