//! Leader election on a `coordination.k8s.io/v1` Lease (`serve --leader-elect`): every replica
//! admits; the duties that must run once per cluster (the certificate controller, the audit
//! loop) run on the Lease holder only. kube 5 has no election helper, so this is the small
//! acquire/renew loop of client-go's `tools/leaderelection` (`leaderelection.go`,
//! `resourcelock/leaselock.go`), with its rules:
//!
//! * The Lease records `holderIdentity` (the pod's name: `$POD_NAME`, else the host name and
//!   the process id), `leaseDurationSeconds`, `acquireTime`, `renewTime` and
//!   `leaseTransitions`. Every write is a `replace` with the `resourceVersion` read: two
//!   candidates cannot both win (the second gets a `409`).
//! * Expiry is judged by this replica's own clock: a record is valid for `leaseDurationSeconds`
//!   after this replica *observed* it change (client-go's `observedTime`), never by comparing
//!   `renewTime` with the local clock, so clock skew between nodes does not matter.
//! * A candidate tries every `--lease-retry-period`; the holder renews at the same period and
//!   steps down (the receiver turns `false`) when no renewal succeeded for
//!   `--lease-renew-deadline`, which is shorter than `--lease-duration`: it stops its duties
//!   before another replica can take the Lease over.
//! * On shutdown the holder steps down first, then releases the Lease (empty `holderIdentity`,
//!   `leaseDurationSeconds: 1`, client-go's `ReleaseOnCancel`), so another replica takes over
//!   at its next try instead of waiting for the Lease to expire.
//!
//! The state is a [`tokio::sync::watch::Receiver<bool>`] ("this replica is the leader now"),
//! and the `winlint_leader` gauge. Without `--leader-elect` it is `true` for good: one
//! replica is its own leader.

use std::time::Duration;

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use k8s_openapi::jiff::Timestamp;
use kube::Api;
use kube::api::{ObjectMeta, PostParams};
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;
use tokio::sync::watch;
use tokio::time::Instant;

/// Where and how to elect.
#[derive(Debug, Clone)]
pub struct LeaseConfig {
    /// The Lease's name and namespace.
    pub name: String,
    pub namespace: String,
    /// This replica's `holderIdentity`, unique among the replicas ([`identity`]).
    pub identity: String,
    /// How long a record is valid after it was observed to change (client-go: 15 s).
    pub lease_duration: Duration,
    /// How long the holder keeps leading without a successful renewal (client-go: 10 s);
    /// shorter than `lease_duration`.
    pub renew_deadline: Duration,
    /// Time between tries to acquire or renew (client-go: 2 s).
    pub retry_period: Duration,
}

/// The holder identity of this process: `pod_name` (`$POD_NAME`, the chart's downward API),
/// else the host name and process id (two processes on one host stay distinct).
pub fn identity(pod_name: Option<&str>) -> String {
    match pod_name.map(str::trim).filter(|n| !n.is_empty()) {
        Some(n) => n.to_string(),
        None => {
            let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
                .ok()
                .or_else(|| std::env::var("HOSTNAME").ok())
                .map(|h| h.trim().to_string())
                .filter(|h| !h.is_empty())
                .unwrap_or_else(|| "winlint".into());
            format!("{host}_{}", std::process::id())
        }
    }
}

/// Whether this replica leads, for as long as it runs. [`Election::receiver`] hands out
/// receivers to the duties that only the leader performs; such a duty waits with
/// `rx.wait_for(|l| *l)` and stops when `*rx.borrow()` turns `false` (and must treat a
/// closed channel, at shutdown, as the end).
pub struct Election {
    rx: watch::Receiver<bool>,
    /// Keeps the channel open while the election lives (the constant one has no task).
    _tx: Option<watch::Sender<bool>>,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl Election {
    /// No election (`--leader-elect` off): this replica always leads.
    pub fn always() -> Election {
        let (tx, rx) = watch::channel(true);
        Election {
            rx,
            _tx: Some(tx),
            task: None,
        }
    }

    /// A receiver of "this replica is the leader now".
    pub fn receiver(&self) -> watch::Receiver<bool> {
        self.rx.clone()
    }

    /// Wait until the election has stopped (after `shutdown`: stepped down, Lease released).
    pub async fn stopped(self) {
        if let Some(t) = self.task {
            let _ = t.await;
        }
    }
}

/// The `winlint_leader` gauge, registered in `registry`, following `leading` (the receiver that
/// gates the once-per-cluster duties: the certificate controller and the audit loop) until its
/// sender is gone: 1 while this replica leads (always 1 without `--leader-elect`). The one
/// leadership metric; the audit loop has none of its own.
pub fn follow(registry: &mut Registry, mut leading: watch::Receiver<bool>) {
    let g: Gauge = Gauge::default();
    registry.register(
        "leader",
        "1 while this replica holds the leader Lease and runs the once-per-cluster duties \
         (certificate controller, audit loop; --leader-elect; always 1 without it)",
        g.clone(),
    );
    g.set(i64::from(*leading.borrow_and_update()));
    tokio::spawn(async move {
        while leading.changed().await.is_ok() {
            g.set(i64::from(*leading.borrow_and_update()));
        }
    });
}

/// Elect on `config`'s Lease until `shutdown` turns `true`.
pub fn spawn(
    client: kube::Client,
    config: LeaseConfig,
    shutdown: watch::Receiver<bool>,
) -> Election {
    let (tx, rx) = watch::channel(false);
    let api: Api<Lease> = Api::namespaced(client, &config.namespace);
    let task = tokio::spawn(run(Elector::new(api, config), tx, shutdown));
    Election {
        rx,
        _tx: None,
        task: Some(task),
    }
}

/// What a candidate knows of the Lease.
struct Elector {
    api: Api<Lease>,
    config: LeaseConfig,
    /// The last record seen (holder, renewTime, transitions) and when it was first seen.
    observed: Option<(Record, Instant)>,
}

/// The part of a Lease whose change restarts its validity.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Record {
    holder: String,
    renew: Option<String>,
    transitions: i32,
    duration: Duration,
}

impl Record {
    fn of(l: &Lease) -> Record {
        let spec = l.spec.clone().unwrap_or_default();
        Record {
            holder: spec.holder_identity.unwrap_or_default(),
            renew: spec.renew_time.map(|t| t.0.to_string()),
            transitions: spec.lease_transitions.unwrap_or(0),
            duration: Duration::from_secs(spec.lease_duration_seconds.unwrap_or(0).max(0) as u64),
        }
    }
}

/// Why a try did not make this replica the holder.
#[derive(Debug)]
enum Lost {
    /// Another replica holds a valid Lease.
    Held(String),
    /// The API server refused or could not be reached (a `409` included).
    Api(String),
}

impl Elector {
    fn new(api: Api<Lease>, config: LeaseConfig) -> Self {
        Elector {
            api,
            config,
            observed: None,
        }
    }

    fn what(&self) -> String {
        format!("Lease {}/{}", self.config.namespace, self.config.name)
    }

    /// Whole seconds of the lease duration, at least 1 (the field's unit).
    fn duration_seconds(&self) -> i32 {
        self.config
            .lease_duration
            .as_secs_f64()
            .ceil()
            .clamp(1.0, 1e9) as i32
    }

    /// Remember `l` as observed now when its record changed.
    fn observe(&mut self, l: &Lease) -> Record {
        let r = Record::of(l);
        if self.observed.as_ref().map(|(o, _)| o) != Some(&r) {
            self.observed = Some((r.clone(), Instant::now()));
        }
        r
    }

    /// client-go's `tryAcquireOrRenew`: create the Lease, or take it over when it is free
    /// or expired, or renew it when this replica holds it.
    async fn try_acquire_or_renew(&mut self) -> Result<(), Lost> {
        let now = MicroTime(Timestamp::now());
        let me = self.config.identity.clone();
        let existing = self
            .api
            .get_opt(&self.config.name)
            .await
            .map_err(|e| Lost::Api(format!("reading {}: {e}", self.what())))?;
        let Some(mut lease) = existing else {
            let lease = Lease {
                metadata: ObjectMeta {
                    name: Some(self.config.name.clone()),
                    namespace: Some(self.config.namespace.clone()),
                    ..Default::default()
                },
                spec: Some(LeaseSpec {
                    holder_identity: Some(me),
                    lease_duration_seconds: Some(self.duration_seconds()),
                    acquire_time: Some(now.clone()),
                    renew_time: Some(now),
                    lease_transitions: Some(0),
                    ..Default::default()
                }),
            };
            let created = self
                .api
                .create(&PostParams::default(), &lease)
                .await
                .map_err(|e| Lost::Api(format!("creating {}: {e}", self.what())))?;
            self.observe(&created);
            return Ok(());
        };
        let record = self.observe(&lease);
        let seen = self.observed.as_ref().map_or_else(Instant::now, |o| o.1);
        let mine = record.holder == me;
        if !record.holder.is_empty() && !mine && seen.elapsed() < record.duration {
            return Err(Lost::Held(record.holder));
        }
        let spec = lease.spec.get_or_insert_with(Default::default);
        if !mine {
            spec.acquire_time = Some(now.clone());
            spec.lease_transitions = Some(record.transitions.saturating_add(1));
        }
        spec.holder_identity = Some(me);
        spec.lease_duration_seconds = Some(self.duration_seconds());
        spec.renew_time = Some(now);
        // The resourceVersion read: a concurrent writer makes this a 409.
        let replaced = self
            .api
            .replace(&self.config.name, &PostParams::default(), &lease)
            .await
            .map_err(|e| Lost::Api(format!("updating {}: {e}", self.what())))?;
        self.observe(&replaced);
        Ok(())
    }

    /// client-go's `release`: an empty holder, so that the next candidate's try takes it.
    async fn release(&mut self) -> Result<(), String> {
        let Some(mut lease) = self
            .api
            .get_opt(&self.config.name)
            .await
            .map_err(|e| e.to_string())?
        else {
            return Ok(());
        };
        let spec = lease.spec.get_or_insert_with(Default::default);
        if spec.holder_identity.as_deref() != Some(self.config.identity.as_str()) {
            return Ok(());
        }
        let now = MicroTime(Timestamp::now());
        spec.holder_identity = None;
        spec.lease_duration_seconds = Some(1);
        spec.acquire_time = Some(now.clone());
        spec.renew_time = Some(now);
        self.api
            .replace(&self.config.name, &PostParams::default(), &lease)
            .await
            .map(|_| ())
            .map_err(|e| e.to_string())
    }
}

fn set(tx: &watch::Sender<bool>, leading: bool) {
    tx.send_replace(leading);
}

async fn run(mut e: Elector, tx: watch::Sender<bool>, mut shutdown: watch::Receiver<bool>) {
    let (what, me) = (e.what(), e.config.identity.clone());
    let (retry, deadline) = (e.config.retry_period, e.config.renew_deadline);
    // While leading: the last successful renewal.
    let mut renewed: Option<Instant> = None;
    let mut last_problem = String::new();
    loop {
        let attempt = e.try_acquire_or_renew();
        let result = match renewed {
            // A renewal may take until the deadline, not longer.
            Some(t) => {
                let left = deadline.saturating_sub(t.elapsed());
                tokio::select! {
                    r = tokio::time::timeout(left, attempt) => r.unwrap_or_else(|_| {
                        Err(Lost::Api("renewal timed out".into()))
                    }),
                    _ = shutdown.wait_for(|s| *s) => break,
                }
            }
            None => tokio::select! {
                r = attempt => r,
                _ = shutdown.wait_for(|s| *s) => break,
            },
        };
        match (result, renewed) {
            (Ok(()), None) => {
                renewed = Some(Instant::now());
                last_problem.clear();
                tracing::info!(uid = "", identity = %me, "became the leader ({what})");
                set(&tx, true);
            }
            (Ok(()), Some(_)) => renewed = Some(Instant::now()),
            (Err(lost), Some(t)) => {
                // Taken over (this replica's renewals did not reach the API server in time),
                // or no renewal within the deadline: stop before another replica may lead.
                let (taken, why) = match lost {
                    Lost::Held(h) => (true, format!("{h} holds it")),
                    Lost::Api(e) => (false, e),
                };
                if taken || t.elapsed() >= deadline {
                    set(&tx, false);
                    renewed = None;
                    tracing::warn!(
                        uid = "",
                        identity = %me,
                        "stopped leading: no renewal of {what} within the renew deadline ({why})"
                    );
                } else {
                    tracing::debug!(uid = "", "renewing {what}: {why}");
                }
            }
            (Err(Lost::Held(h)), None) => {
                if last_problem != h {
                    tracing::info!(uid = "", identity = %me, "{what} is held by {h}");
                    last_problem = h;
                }
            }
            (Err(Lost::Api(why)), None) => {
                if last_problem != why {
                    tracing::warn!(uid = "", identity = %me, "leader election: {why}");
                    last_problem = why;
                }
            }
        }
        tokio::select! {
            _ = tokio::time::sleep(retry) => {}
            _ = shutdown.wait_for(|s| *s) => break,
        }
    }
    // Shutdown: stop the duties first, then free the Lease for the next replica.
    if renewed.is_some() {
        set(&tx, false);
        tracing::info!(uid = "", identity = %me, "stopped leading: shutting down");
        match tokio::time::timeout(Duration::from_secs(2), e.release()).await {
            Ok(Ok(())) => tracing::info!(uid = "", identity = %me, "released {what}"),
            Ok(Err(why)) => tracing::warn!(uid = "", "releasing {what}: {why}"),
            Err(_) => tracing::warn!(uid = "", "releasing {what}: timed out"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_identity_is_the_pod_name_else_host_and_pid() {
        assert_eq!(identity(Some("winlint-abc-1")), "winlint-abc-1");
        let other = identity(Some("  "));
        assert!(
            other.ends_with(&format!("_{}", std::process::id())),
            "{other}"
        );
        assert_eq!(identity(None), other);
    }

    #[test]
    fn a_record_changes_with_its_holder_renewal_or_transitions() {
        let lease = |holder: &str, renew: i64| Lease {
            spec: Some(LeaseSpec {
                holder_identity: Some(holder.into()),
                renew_time: Some(MicroTime(Timestamp::from_second(renew).unwrap())),
                lease_duration_seconds: Some(15),
                ..Default::default()
            }),
            ..Default::default()
        };
        let a = Record::of(&lease("a", 1));
        assert_eq!(a.duration, Duration::from_secs(15));
        assert_eq!(a, Record::of(&lease("a", 1)));
        assert_ne!(a, Record::of(&lease("a", 2)));
        assert_ne!(a, Record::of(&lease("b", 1)));
        // A released Lease: no holder, free for the next try.
        assert_eq!(Record::of(&Lease::default()).holder, "");
    }
}
