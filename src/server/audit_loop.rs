//! The continuous audit (issue 29 §1): `winlint serve --audit=on` judges what runs in the
//! cluster with the facts it evaluates admissions with, and keeps winlint's wgpolicyk8s.io
//! PolicyReports (one per namespace, split in parts when large, labelled
//! `app.kubernetes.io/managed-by=winlint`) up to date, the stale ones deleted. The same code as
//! `winlint audit -A --policy-report=apply`: the judgement of an object
//! ([`crate::cluster::judge`]), the reports ([`crate::cluster::policy_results`]) and their
//! writing ([`crate::cluster::policy_report`]); only the listing differs, in bounded memory
//! ([`crate::cluster::audit::stream_workloads`]: a page of objects at a time, each top owner
//! judged as it arrives; kept are its findings, the uids of the workloads and the Pending Pods).
//!
//! When: only while the `leader` receiver says this replica leads (the Lease election of
//! `server/leader.rs`; without one, every replica is its own leader), on becoming leader (once
//! the cluster facts are in use, or their wait `--cluster-facts-timeout` is over), then every `--audit-interval` and whenever the evaluation state is rebuilt (new
//! cluster facts: nodes, taints, builds, RuntimeClasses, namespaces' labels), debounced by
//! `--audit-debounce` (a node pool upgrade changes many nodes in a few seconds). A run in
//! progress when leadership is lost is dropped at its next API call: a new leader starts its
//! own.
//!
//! Where: on a thread of its own with a one-thread runtime and its own client: judging ten
//! thousand objects never takes an admission worker.
//!
//! Metrics (`winlint_audit_*`): runs by result, duration, the timestamp of the last complete
//! run (the audit's age is `time() - winlint_audit_last_success_timestamp_seconds`), findings
//! of the last run by rule, severity and namespace (the [`NAMESPACE_LABELS`] namespaces with
//! the most findings by name, the rest as `namespace="other"`: the cardinality is bounded by
//! the rules, not by the cluster), objects judged, errors by stage. Whether this replica
//! audits is `winlint_leader` (`server/leader.rs`), which follows the same receiver.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::time::{Duration, Instant};

use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;
use serde_json::{Value, json};
use tokio::sync::watch;

use crate::cluster::audit::{Scope, stream_workloads};
use crate::cluster::judge::{self, Judge};
use crate::cluster::policy_results::{self, PolicyReports};
use crate::cluster::{ClientSource, ClusterError, ErrorKind};
use crate::model::{Finding, Severity};

use super::AppState;

/// Namespaces named in `winlint_audit_findings`; the others are summed as `other`.
pub const NAMESPACE_LABELS: usize = 20;

/// When and how the audit runs.
#[derive(Debug, Clone)]
pub struct AuditOptions {
    /// Between two runs when nothing changes.
    pub interval: Duration,
    /// After a facts change, how long to gather more before running.
    pub debounce: Duration,
    /// Objects per list page.
    pub page_size: u32,
}

/// The `winlint_audit_*` metrics.
#[derive(Clone)]
pub struct AuditMetrics {
    runs: Family<Vec<(String, String)>, Counter>,
    duration: Histogram,
    last_success: Gauge<f64, AtomicU64>,
    findings: Family<Vec<(String, String)>, Gauge>,
    objects: Gauge,
    errors: Family<Vec<(String, String)>, Counter>,
}

impl AuditMetrics {
    /// The metrics, registered in `registry`.
    pub fn new(registry: &mut Registry) -> AuditMetrics {
        let m = AuditMetrics {
            runs: Family::default(),
            duration: Histogram::new(exponential_buckets(0.05, 2.0, 14)),
            last_success: Gauge::default(),
            findings: Family::default(),
            objects: Gauge::default(),
            errors: Family::default(),
        };
        registry.register(
            "audit_runs",
            "Audit runs by result (ok: every report written; partial: some not; error)",
            m.runs.clone(),
        );
        registry.register(
            "audit_duration_seconds",
            "Time of one audit run: list, judge, write the reports",
            m.duration.clone(),
        );
        registry.register(
            "audit_last_success_timestamp_seconds",
            "When the last audit run that wrote every report ended (Unix time; 0: none yet)",
            m.last_success.clone(),
        );
        registry.register(
            "audit_findings",
            "Findings of the last audit run by rule, severity and namespace (the namespaces \
             with the most findings by name, the rest as other)",
            m.findings.clone(),
        );
        registry.register(
            "audit_objects",
            "Top-level objects judged by the last audit run",
            m.objects.clone(),
        );
        registry.register(
            "audit_errors",
            "Audit errors by stage (connect, list, write)",
            m.errors.clone(),
        );
        m
    }

    fn error(&self, stage: &str) {
        self.errors
            .get_or_create(&vec![("stage".into(), stage.into())])
            .inc();
    }

    fn run(&self, result: &str) {
        self.runs
            .get_or_create(&vec![("result".into(), result.into())])
            .inc();
    }

    /// The findings of a run: (rule, severity, namespace) → count, the namespaces beyond the
    /// [`NAMESPACE_LABELS`] with the most findings summed as `other`.
    fn set_findings(&self, counts: &HashMap<(&'static str, Severity, String), u64>) {
        self.findings.clear();
        for ((rule, severity, ns), n) in bounded(counts, NAMESPACE_LABELS) {
            self.findings
                .get_or_create(&vec![
                    ("rule".into(), rule.into()),
                    ("severity".into(), severity.as_str().into()),
                    ("namespace".into(), ns),
                ])
                .set(n as i64);
        }
    }
}

/// `counts` with only the `keep` namespaces of most findings named (ties: by name), the
/// others' findings summed per rule and severity under `other`.
fn bounded(
    counts: &HashMap<(&'static str, Severity, String), u64>,
    keep: usize,
) -> BTreeMap<(&'static str, Severity, String), u64> {
    let mut per_ns: BTreeMap<&str, u64> = BTreeMap::new();
    for ((_, _, ns), n) in counts {
        *per_ns.entry(ns).or_default() += n;
    }
    let mut ranked: Vec<(&str, u64)> = per_ns.into_iter().collect();
    ranked.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let named: std::collections::BTreeSet<&str> =
        ranked.into_iter().take(keep).map(|(ns, _)| ns).collect();
    let mut out = BTreeMap::new();
    for ((rule, severity, ns), n) in counts {
        let ns = if named.contains(ns.as_str()) {
            ns.clone()
        } else {
            "other".to_string()
        };
        *out.entry((*rule, *severity, ns)).or_default() += n;
    }
    out
}

/// What the loop needs.
pub struct AuditLoop {
    pub state: Arc<AppState>,
    /// Where the cluster is (serve's `--kubeconfig`/`--context`, in-cluster, …).
    pub source: ClientSource,
    /// Whether this replica leads.
    pub leader: watch::Receiver<bool>,
    /// A new generation each time the evaluation state is rebuilt (new facts).
    pub evaluations: watch::Receiver<u64>,
    pub shutdown: watch::Receiver<bool>,
    pub options: AuditOptions,
    pub metrics: AuditMetrics,
}

/// Start the loop on a thread of its own (see the module's doc); it ends at shutdown.
pub fn spawn(l: AuditLoop) -> std::io::Result<std::thread::JoinHandle<()>> {
    std::thread::Builder::new()
        .name("winlint-audit".into())
        .spawn(move || {
            let rt = match tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                Ok(rt) => rt,
                Err(e) => {
                    tracing::error!(uid = "", "audit: cannot start its runtime: {e}");
                    return;
                }
            };
            rt.block_on(l.run());
        })
}

/// Wait until `rx` says `want`; never returns when its sender is gone first (the value then
/// stays what it was).
async fn until(rx: &mut watch::Receiver<bool>, want: bool) {
    if rx.wait_for(|v| *v == want).await.is_err() {
        std::future::pending::<()>().await;
    }
}

/// Wait for the next change of `rx`; never returns when its sender is gone.
async fn changed(rx: &mut watch::Receiver<u64>) {
    if rx.changed().await.is_err() {
        std::future::pending::<()>().await;
    }
}

impl AuditLoop {
    async fn run(mut self) {
        loop {
            tokio::select! {
                _ = until(&mut self.leader, true) => {}
                _ = until(&mut self.shutdown, true) => return,
            }
            tracing::info!(
                uid = "",
                "audit: this replica leads: auditing every {:?} and on facts changes",
                self.options.interval
            );
            // The first run judges with the cluster's facts, not the configured ones: wait
            // until they are in use (or their wait, --cluster-facts-timeout, is over).
            while !self.state.facts_settled() {
                tokio::select! {
                    _ = tokio::time::sleep(Duration::from_millis(200)) => {}
                    _ = until(&mut self.shutdown, true) => return,
                }
            }
            self.evaluations.borrow_and_update();
            let mut client = None;
            loop {
                let mut leader = self.leader.clone();
                let mut shutdown = self.shutdown.clone();
                tokio::select! {
                    _ = self.once(&mut client) => {}
                    _ = until(&mut leader, false) => break,
                    _ = until(&mut shutdown, true) => return,
                }
                tokio::select! {
                    _ = tokio::time::sleep(self.options.interval) => {}
                    _ = changed(&mut self.evaluations) => {
                        // Gather the changes that come with this one.
                        tokio::select! {
                            _ = tokio::time::sleep(self.options.debounce) => {}
                            _ = until(&mut shutdown, true) => return,
                        }
                        self.evaluations.borrow_and_update();
                        tracing::info!(uid = "", "audit: the cluster facts changed: auditing again");
                    }
                    _ = until(&mut leader, false) => break,
                    _ = until(&mut shutdown, true) => return,
                }
            }
            tracing::info!(
                uid = "",
                "audit: this replica no longer leads: audit stopped"
            );
        }
    }

    /// One run, timed and counted; errors are logged and counted (the next run comes on the
    /// period or the next facts change).
    async fn once(&self, client: &mut Option<kube::Client>) {
        let started = Instant::now();
        if client.is_none() {
            match crate::cluster::client(&self.source).await {
                Ok(c) => *client = Some(c),
                Err(e) => {
                    self.metrics.error("connect");
                    self.metrics.run("error");
                    tracing::warn!(uid = "", "audit: cannot connect: {e}");
                    return;
                }
            }
        }
        let Some(c) = client.as_ref() else { return };
        let result = audit(c, &self.state, &self.options, &self.metrics).await;
        let took = started.elapsed();
        self.metrics.duration.observe(took.as_secs_f64());
        match result {
            Ok(done) => {
                self.metrics
                    .run(if done.failed == 0 { "ok" } else { "partial" });
                if done.failed == 0 {
                    self.metrics.last_success.set(
                        std::time::SystemTime::now()
                            .duration_since(std::time::UNIX_EPOCH)
                            .unwrap_or_default()
                            .as_secs_f64(),
                    );
                }
                tracing::info!(
                    uid = "",
                    "audit: {} objects judged in {took:.2?}: {} reports written, {} stale deleted, {} failed",
                    done.objects,
                    done.written,
                    done.deleted,
                    done.failed
                );
            }
            Err((stage, e)) => {
                self.metrics.error(stage);
                self.metrics.run("error");
                tracing::warn!(uid = "", "audit failed after {took:.2?}: {e}");
            }
        }
    }
}

/// What one run did.
struct Done {
    objects: usize,
    written: usize,
    deleted: usize,
    failed: usize,
}

/// What is kept of a judged top owner until its Pods are listed: who it is and its verdict.
struct Kept {
    /// apiVersion, kind and metadata's name, namespace, uid: what a result names.
    reference: Value,
    findings: Vec<Finding>,
    exempted: Vec<&'static str>,
    ignore_reason: Option<String>,
}

/// The rights the audit needs, named when a list is forbidden.
const AUDIT_RBAC: &str = "the audit needs list on pods, replicationcontrollers, deployments, \
     replicasets, statefulsets, daemonsets, jobs and cronjobs";

/// List, judge, write: one run with the evaluation state in use now.
async fn audit(
    client: &kube::Client,
    state: &AppState,
    options: &AuditOptions,
    metrics: &AuditMetrics,
) -> Result<Done, (&'static str, String)> {
    let evaluation = state.evaluation();
    let webhook = &evaluation.webhook;
    // winlint's own webhook: the workloads of the namespaces it mutates are judged by the
    // pods it gives them, as `/validate` judges them.
    let as_pods = judge::webhook_judging(client, false)
        .await
        .unwrap_or_else(|why| {
            tracing::warn!(
                uid = "",
                "audit: judging workloads as written: {why}, so whether winlint's mutating webhook is registered is unknown"
            );
            None
        });
    let judge = Judge::new(&webhook.config, webhook.context(), as_pods);
    let streamed = stream_workloads(client, &Scope::AllNamespaces, options.page_size, |v| {
        let ns = v["metadata"]["namespace"].as_str().unwrap_or_default();
        let rep = judge.judge(v, ns);
        let mut reference = json!({"apiVersion": v["apiVersion"], "kind": v["kind"],
            "metadata": {"name": v["metadata"]["name"], "namespace": ns,
                "uid": v["metadata"]["uid"]}});
        if reference["metadata"]["uid"].is_null()
            && let Some(m) = reference["metadata"].as_object_mut()
        {
            m.remove("uid");
        }
        Kept {
            reference,
            findings: rep.findings,
            exempted: rep.exempted,
            ignore_reason: rep.ignore_reason,
        }
    })
    .await
    .map_err(|e| ("list", one_line(&e)))?;
    let now = policy_results::now_seconds();
    let mut reports = PolicyReports::new(now);
    for (kind, e) in &streamed.skipped {
        reports.error(None, kind, &one_line(e));
    }
    let mut counts: HashMap<(&'static str, Severity, String), u64> = HashMap::new();
    let objects = streamed.tops.len();
    for mut top in streamed.tops {
        Judge::with_pending(&mut top.value.findings, &top.pending);
        for f in &top.value.findings {
            *counts
                .entry((f.rule.id, f.severity, top.namespace.clone()))
                .or_default() += 1;
        }
        let k = top.value;
        reports.object(
            &k.reference,
            &k.findings,
            &k.exempted,
            k.ignore_reason.as_deref(),
        );
    }
    metrics.objects.set(objects as i64);
    metrics.set_findings(&counts);
    let done = policy_results::write(client, &Scope::AllNamespaces, reports.finish(), now)
        .await
        .map_err(|e| ("write", one_line(&e)))?;
    for f in &done.failed {
        metrics.error("write");
        tracing::warn!(uid = "", "audit: {}", policy_results::failure_line(f));
    }
    Ok(Done {
        objects,
        written: done.written.len(),
        deleted: done.deleted.len(),
        failed: done.failed.len(),
    })
}

/// One line for an error talking to the cluster; a 403 names the rights the audit needs.
fn one_line(e: &ClusterError) -> String {
    match e.kind {
        ErrorKind::Forbidden => format!("{} ({AUDIT_RBAC})", e.without_hint()),
        _ => e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn namespaces_beyond_the_bound_are_summed_as_other() {
        let mut counts = HashMap::new();
        for (i, n) in [5u64, 1, 3, 2].into_iter().enumerate() {
            counts.insert(("WIN007", Severity::Error, format!("ns{i}")), n);
            counts.insert(("WIN501", Severity::Warning, format!("ns{i}")), 1);
        }
        let got = bounded(&counts, 2);
        let s = |x: &str| x.to_string();
        assert_eq!(
            got.into_iter().collect::<Vec<_>>(),
            vec![
                (("WIN007", Severity::Error, s("ns0")), 5),
                (("WIN007", Severity::Error, s("ns2")), 3),
                (("WIN007", Severity::Error, s("other")), 3),
                (("WIN501", Severity::Warning, s("ns0")), 1),
                (("WIN501", Severity::Warning, s("ns2")), 1),
                (("WIN501", Severity::Warning, s("other")), 2),
            ]
        );
    }
}
