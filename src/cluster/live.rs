//! The live facts of `winlint serve`: watchers on Nodes, RuntimeClasses and Namespaces (and,
//! optional, GMSACredentialSpec names: `gmsa.rs`), the server version refreshed periodically, and a snapshot rebuilt off the request path and
//! swapped whole.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use futures::StreamExt;
use futures::stream::BoxStream;
use k8s_openapi::api::core::v1::{Namespace, Node};
use k8s_openapi::api::node::v1::RuntimeClass;
use kube::Api;
use kube::runtime::WatchStreamExt;
use kube::runtime::watcher::{self, Event};
use tokio::sync::{mpsc, watch};
use tracing::Instrument;

use super::client::{ClusterError, ErrorKind};
use super::facts::{
    ClusterFacts, NodeIndex, NodeObservation, RuntimeClassFacts, ServerVersion, Synced,
    namespace_facts,
};
use super::gmsa::{self, GmsaStore};

/// Tuning of [`ClusterWatch`].
#[derive(Debug, Clone)]
pub struct WatchOptions {
    /// Objects per page of the (re)lists: 50 000 Nodes arrive 500 at a time.
    pub page_size: u32,
    /// Changes are gathered this long before the snapshot is rebuilt (a node pool scaling by
    /// 100 nodes is one rebuild, not 100).
    pub debounce: Duration,
    /// How often `/version` is read again (an upgrade changes it without any watch event).
    pub version_refresh: Duration,
    /// Server-side timeout of each watch call, after which it is restarted from the last
    /// resource version (kube's default, 290 s, when `None`). A restart re-checks RBAC.
    pub watch_timeout: Option<u32>,
    /// The `watch` field of the `cluster_facts` span every log line of this watch carries.
    pub name: String,
}

impl Default for WatchOptions {
    fn default() -> Self {
        WatchOptions {
            page_size: super::client::PAGE_SIZE,
            debounce: Duration::from_millis(200),
            version_refresh: Duration::from_secs(600),
            watch_timeout: None,
            name: "cluster".into(),
        }
    }
}

/// One watched resource's health.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceStatus {
    /// `nodes`, `runtimeclasses`, `namespaces` or `version`.
    pub resource: &'static str,
    /// A complete list has been received at least once.
    pub synced: bool,
    /// The last call succeeded.
    pub healthy: bool,
    /// Failures since the last success.
    pub consecutive_failures: u64,
    pub errors_total: u64,
    /// The last error, as logged.
    pub last_error: Option<String>,
    pub last_error_kind: Option<ErrorKind>,
}

impl ResourceStatus {
    fn new(resource: &'static str) -> Self {
        ResourceStatus {
            resource,
            synced: false,
            healthy: true,
            consecutive_failures: 0,
            errors_total: 0,
            last_error: None,
            last_error_kind: None,
        }
    }
}

/// Health of the whole watch.
#[derive(Debug, Clone)]
pub struct WatchStatus {
    /// nodes, runtimeclasses, namespaces, version.
    pub resources: Vec<ResourceStatus>,
    /// Every resource has been listed completely at least once.
    pub synced: bool,
    /// When the facts were last known current: now while every watch is healthy and synced,
    /// else the moment that stopped being true (the start, before the first sync).
    pub current_until: Instant,
}

impl WatchStatus {
    pub fn healthy(&self) -> bool {
        self.synced && self.resources.iter().all(|r| r.healthy)
    }
    /// The resource's status by name.
    pub fn resource(&self, name: &str) -> Option<&ResourceStatus> {
        self.resources.iter().find(|r| r.resource == name)
    }
}

/// What the metrics need, read in one call (plain values: the coordinator registers them with
/// the server's prometheus-client registry).
#[derive(Debug, Clone, PartialEq)]
pub struct FactsMetrics {
    /// Windows nodes per build: `10.0.20348` → count; `unknown` for nodes of unknown build.
    pub windows_nodes_by_build: Vec<(String, u64)>,
    /// Time since the current snapshot was built.
    pub snapshot_age: Duration,
    /// 0 while every watch is healthy and synced; else how long the facts may have been
    /// missing changes (since start, before the first sync).
    pub staleness: Duration,
    pub synced: bool,
    pub healthy: bool,
    /// Errors of all watches and version reads since start.
    pub errors_total: u64,
}

struct Shared {
    status: Mutex<StatusInner>,
}

struct StatusInner {
    resources: [ResourceStatus; 4],
    synced: bool,
    current_until: Instant,
}

impl StatusInner {
    fn all_good(&self) -> bool {
        self.synced && self.resources.iter().all(|r| r.healthy)
    }
}

const NODES: usize = 0;
const RUNTIME_CLASSES: usize = 1;
const NAMESPACES: usize = 2;
const VERSION: usize = 3;

/// The live facts. Start it once; clone the snapshot on every request ([`ClusterWatch::facts`]
/// is an `Arc` clone under a read lock, never a call to the API server). Dropping it stops the
/// watches.
pub struct ClusterWatch {
    facts: watch::Receiver<Arc<ClusterFacts>>,
    synced: watch::Receiver<bool>,
    shared: Arc<Shared>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl Drop for ClusterWatch {
    fn drop(&mut self) {
        for t in &self.tasks {
            t.abort();
        }
    }
}

/// Watch events, reduced to the facts as they arrive (a full Node, its images and conditions,
/// is dropped at once).
enum Ev {
    Node(Result<Event<NodeObservation>, watcher::Error>),
    Rc(Result<Event<(String, RuntimeClassFacts)>, watcher::Error>),
    Ns(Result<Event<(String, Labels)>, watcher::Error>),
    /// Optional facts: not in the health status nor in [`Synced`] (`GmsaStore` logs).
    Gmsa(Result<Event<String>, watcher::Error>),
}

type Labels = BTreeMap<String, String>;

fn reduce<K, T>(
    r: Result<Event<K>, watcher::Error>,
    f: impl Fn(&K) -> T,
) -> Result<Event<T>, watcher::Error> {
    r.map(|ev| match ev {
        Event::Init => Event::Init,
        Event::InitApply(o) => Event::InitApply(f(&o)),
        Event::InitDone => Event::InitDone,
        Event::Apply(o) => Event::Apply(f(&o)),
        Event::Delete(o) => Event::Delete(f(&o)),
    })
}

impl ClusterWatch {
    /// Start watching with `client` on the current tokio runtime. Returns at once; the first
    /// snapshot is [`ClusterFacts::empty`] until the lists arrive ([`ClusterWatch::wait_synced`]).
    pub fn start(client: kube::Client, opts: WatchOptions) -> ClusterWatch {
        let (facts_tx, facts) = watch::channel(Arc::new(ClusterFacts::empty()));
        let (synced_tx, synced) = watch::channel(false);
        let shared = Arc::new(Shared {
            status: Mutex::new(StatusInner {
                resources: [
                    ResourceStatus::new("nodes"),
                    ResourceStatus::new("runtimeclasses"),
                    ResourceStatus::new("namespaces"),
                    ResourceStatus::new("version"),
                ],
                synced: false,
                current_until: Instant::now(),
            }),
        });
        let (version_tx, version_rx) = mpsc::channel(4);
        let span = tracing::info_span!("cluster_facts", watch = %opts.name);
        let version_task = tokio::spawn(
            refresh_version(
                client.clone(),
                opts.version_refresh,
                version_tx,
                Arc::clone(&shared),
            )
            .instrument(span.clone()),
        );
        let main = tokio::spawn(
            run(
                client,
                opts,
                facts_tx,
                synced_tx,
                version_rx,
                Arc::clone(&shared),
            )
            .instrument(span),
        );
        ClusterWatch {
            facts,
            synced,
            shared,
            tasks: vec![main, version_task],
        }
    }

    /// The current snapshot (an `Arc` clone).
    pub fn facts(&self) -> Arc<ClusterFacts> {
        Arc::clone(&self.facts.borrow())
    }

    /// A receiver that sees every new snapshot (tests, or a task that recomputes something
    /// derived from the facts).
    pub fn subscribe(&self) -> watch::Receiver<Arc<ClusterFacts>> {
        self.facts.clone()
    }

    /// Whether Nodes, RuntimeClasses and Namespaces have all been listed once.
    pub fn is_synced(&self) -> bool {
        *self.synced.borrow()
    }

    /// Wait for the first complete sync, at most `limit`; `true` when synced. For `/readyz`:
    /// wait bounded, then serve with the configured facts (and say so) when this is `false`.
    pub async fn wait_synced(&self, limit: Duration) -> bool {
        let mut rx = self.synced.clone();
        matches!(
            tokio::time::timeout(limit, rx.wait_for(|s| *s)).await,
            Ok(Ok(_))
        )
    }

    pub fn status(&self) -> WatchStatus {
        let s = self.shared.status.lock().expect("status lock");
        WatchStatus {
            resources: s.resources.to_vec(),
            synced: s.synced,
            current_until: if s.all_good() {
                Instant::now()
            } else {
                s.current_until
            },
        }
    }

    /// The values the metrics export.
    pub fn metrics(&self) -> FactsMetrics {
        let facts = self.facts();
        let status = self.status();
        FactsMetrics {
            windows_nodes_by_build: facts
                .windows_nodes_by_build()
                .into_iter()
                .map(|(b, n)| {
                    (
                        b.map_or_else(|| "unknown".to_string(), |b| b.to_string()),
                        n as u64,
                    )
                })
                .collect(),
            snapshot_age: SystemTime::now()
                .duration_since(facts.built_at)
                .unwrap_or_default(),
            staleness: if status.healthy() {
                Duration::ZERO
            } else {
                status.current_until.elapsed()
            },
            synced: status.synced,
            healthy: status.healthy(),
            errors_total: status.resources.iter().map(|r| r.errors_total).sum(),
        }
    }
}

/// Read `/version` now and every `every`; failures are recorded and retried with backoff.
async fn refresh_version(
    client: kube::Client,
    every: Duration,
    tx: mpsc::Sender<ServerVersion>,
    shared: Arc<Shared>,
) {
    let mut backoff = Duration::from_millis(800);
    loop {
        match client.apiserver_version().await {
            Ok(info) => {
                record_ok(&shared, VERSION, true);
                backoff = Duration::from_millis(800);
                match ServerVersion::from_info(&info) {
                    Some(v) => {
                        if tx.send(v).await.is_err() {
                            return;
                        }
                    }
                    None => tracing::warn!(
                        uid = "",
                        "the API server's /version names no version winlint can read: {:?}",
                        info.git_version
                    ),
                }
                tokio::time::sleep(every).await;
            }
            Err(e) => {
                let err = ClusterError::from_kube("reading the server version", &e);
                record_err(&shared, VERSION, &err);
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(Duration::from_secs(30));
            }
        }
    }
}

fn record_ok(shared: &Shared, i: usize, synced: bool) {
    let mut s = shared.status.lock().expect("status lock");
    let was_good = s.all_good();
    let r = &mut s.resources[i];
    if !r.healthy {
        tracing::info!(
            uid = "",
            resource = r.resource,
            "{} recovered after {} failed attempts",
            what(r.resource),
            r.consecutive_failures
        );
    }
    r.healthy = true;
    r.consecutive_failures = 0;
    r.synced |= synced;
    if !was_good && s.all_good() {
        s.current_until = Instant::now();
    }
}

fn what(resource: &str) -> String {
    if resource == "version" {
        "reading the server version".into()
    } else {
        format!("watching {resource}")
    }
}

fn record_err(shared: &Shared, i: usize, err: &ClusterError) {
    let mut s = shared.status.lock().expect("status lock");
    if err.kind == ErrorKind::Gone {
        // Routine: the watcher lists again at once; the store is replaced when that list ends.
        tracing::info!(
            uid = "",
            resource = s.resources[i].resource,
            "{err}; listing again"
        );
        return;
    }
    if s.all_good() {
        s.current_until = Instant::now();
    }
    let r = &mut s.resources[i];
    r.healthy = false;
    r.consecutive_failures += 1;
    r.errors_total += 1;
    let msg = err.to_string();
    let n = r.consecutive_failures;
    // The first failure, a new kind of failure and every tenth are warnings; the retries in
    // between (backoff: 0.8 s doubling to 30 s) are debug.
    let repeated = n > 1 && r.last_error.as_deref() == Some(msg.as_str());
    if !repeated || n.is_multiple_of(10) {
        tracing::warn!(
            uid = "",
            resource = r.resource,
            attempts = n,
            "{msg}; retrying with backoff, keeping the last facts"
        );
    } else {
        tracing::debug!(uid = "", resource = r.resource, attempts = n, "{msg}");
    }
    r.last_error = Some(msg);
    r.last_error_kind = Some(err.kind.clone());
}

fn watch_error(resource: &str, e: &watcher::Error) -> ClusterError {
    let doing = format!("watching {resource}");
    match e {
        watcher::Error::InitialListFailed(k)
        | watcher::Error::WatchStartFailed(k)
        | watcher::Error::WatchFailed(k) => ClusterError::from_kube(doing, k),
        watcher::Error::WatchError(s) => {
            ClusterError::from_kube(doing, &kube::Error::Api(s.clone()))
        }
        other => ClusterError::new(ErrorKind::Other, doing, other.to_string()),
    }
}

/// After a watch error, ask the same question cheaply (a metadata list of one object) until it
/// is answered again: a watch that reconnects to a quiet resource emits nothing, so without
/// this a recovered watch would look failed until the next change.
async fn probe(client: kube::Client, i: usize, done: mpsc::UnboundedSender<usize>) {
    use kube::api::ListParams;
    let lp = ListParams::default().limit(1);
    let mut delay = Duration::from_millis(800);
    loop {
        tokio::time::sleep(delay).await;
        if done.is_closed() {
            return; // the watch was stopped
        }
        let ok = match i {
            NODES => Api::<Node>::all(client.clone())
                .list_metadata(&lp)
                .await
                .is_ok(),
            RUNTIME_CLASSES => Api::<RuntimeClass>::all(client.clone())
                .list_metadata(&lp)
                .await
                .is_ok(),
            _ => Api::<Namespace>::all(client.clone())
                .list_metadata(&lp)
                .await
                .is_ok(),
        };
        if ok {
            let _ = done.send(i);
            return;
        }
        delay = (delay * 2).min(Duration::from_secs(30));
    }
}

/// The stores the snapshot is built from: the current one of each resource, and the one being
/// filled by a (re)list, swapped in at its end so that a relist never shows half a cluster.
#[derive(Default)]
struct Stores {
    nodes: NodeIndex,
    nodes_init: Option<NodeIndex>,
    rcs: BTreeMap<String, RuntimeClassFacts>,
    rcs_init: Option<BTreeMap<String, RuntimeClassFacts>>,
    nss: BTreeMap<String, Labels>,
    nss_init: Option<BTreeMap<String, Labels>>,
    synced: Synced,
    version: Option<ServerVersion>,
    gmsa: GmsaStore,
}

/// Apply one event to a keyed store; `true` when the facts changed.
fn apply_map<V: PartialEq>(
    ev: Event<(String, V)>,
    cur: &mut BTreeMap<String, V>,
    init: &mut Option<BTreeMap<String, V>>,
    synced: &mut bool,
) -> bool {
    match ev {
        Event::Init => {
            *init = Some(BTreeMap::new());
            false
        }
        Event::InitApply((k, v)) => {
            init.get_or_insert_default().insert(k, v);
            false
        }
        Event::InitDone => {
            let new = init.take().unwrap_or_default();
            let changed = *cur != new || !*synced;
            *cur = new;
            *synced = true;
            changed
        }
        Event::Apply((k, v)) => {
            cur.get(&k) != Some(&v) && {
                cur.insert(k, v);
                true
            }
        }
        Event::Delete((k, _)) => cur.remove(&k).is_some(),
    }
}

impl Stores {
    /// Apply an event; `Ok(true)` when the facts changed. The index is the resource of the
    /// health status (`None`: an optional fact, whose errors are no failure).
    fn apply(&mut self, ev: Ev) -> (Option<usize>, Result<bool, ClusterError>) {
        let (i, r) = match ev {
            Ev::Gmsa(r) => {
                let r = r.map_err(|e| watch_error("gmsacredentialspecs", &e));
                return (None, Ok(self.gmsa.apply(r)));
            }
            Ev::Node(Err(e)) => (NODES, Err(watch_error("nodes", &e))),
            Ev::Rc(Err(e)) => (RUNTIME_CLASSES, Err(watch_error("runtimeclasses", &e))),
            Ev::Ns(Err(e)) => (NAMESPACES, Err(watch_error("namespaces", &e))),
            Ev::Node(Ok(ev)) => (NODES, Ok(self.apply_node(ev))),
            Ev::Rc(Ok(ev)) => (
                RUNTIME_CLASSES,
                Ok(apply_map(
                    ev,
                    &mut self.rcs,
                    &mut self.rcs_init,
                    &mut self.synced.runtime_classes,
                )),
            ),
            Ev::Ns(Ok(ev)) => (
                NAMESPACES,
                Ok(apply_map(
                    ev,
                    &mut self.nss,
                    &mut self.nss_init,
                    &mut self.synced.namespaces,
                )),
            ),
        };
        (Some(i), r)
    }

    fn apply_node(&mut self, ev: Event<NodeObservation>) -> bool {
        match ev {
            Event::Init => {
                self.nodes_init = Some(NodeIndex::default());
                false
            }
            Event::InitApply(n) => {
                self.nodes_init.get_or_insert_default().upsert(n);
                false
            }
            Event::InitDone => {
                self.nodes = self.nodes_init.take().unwrap_or_default();
                self.synced.nodes = true;
                true
            }
            Event::Apply(n) => self.nodes.upsert(n),
            Event::Delete(n) => self.nodes.remove(&n.name),
        }
    }

    fn synced_of(&self, i: usize) -> bool {
        match i {
            NODES => self.synced.nodes,
            RUNTIME_CLASSES => self.synced.runtime_classes,
            _ => self.synced.namespaces,
        }
    }

    fn snapshot(&self) -> ClusterFacts {
        ClusterFacts::build(
            self.synced,
            &self.nodes,
            self.rcs.clone(),
            self.nss.clone(),
            self.version.clone(),
        )
        .with_gmsa_credential_specs(self.gmsa.names().cloned())
    }
}

fn summary(f: &ClusterFacts) -> String {
    let builds: Vec<String> = f
        .windows_nodes_by_build()
        .into_iter()
        .map(|(b, n)| format!("{}: {n}", b.map_or_else(|| "unknown".into(), |b| b.named())))
        .collect();
    let hyperv: Vec<&str> = f
        .hyperv_runtime_classes()
        .map(|r| r.name.as_str())
        .collect();
    format!(
        "cluster facts synced: {} nodes in {} groups, {} Windows ({}), {} RuntimeClasses \
         (Hyper-V: [{}]), {} namespaces, API server {}",
        f.node_count(),
        f.groups.len(),
        f.windows_node_count(),
        builds.join(", "),
        f.runtime_classes.len(),
        hyperv.join(", "),
        f.namespaces.len(),
        f.server_version
            .as_ref()
            .map_or("version unknown", |v| v.git_version.as_str())
    )
}

/// Log what changed from `old` to `new`.
fn log_changes(old: &ClusterFacts, new: &ClusterFacts) {
    // Nodes whose build is unknown: once per node (and again only if the reason changes).
    for (node, why) in &new.unknown_builds {
        if old.unknown_builds.get(node) != Some(why) {
            tracing::warn!(uid = "", node = %node, "Windows node of unknown build: {why}");
        }
    }
    if !old.synced.all() {
        if new.synced.all() {
            tracing::info!(uid = "", "{}", summary(new));
        }
        return;
    }
    for c in new.changes_from(old) {
        if c.notable() {
            tracing::info!(uid = "", "cluster facts: {c}");
        } else {
            tracing::debug!(uid = "", "cluster facts: {c}");
        }
    }
}

async fn run(
    client: kube::Client,
    opts: WatchOptions,
    facts_tx: watch::Sender<Arc<ClusterFacts>>,
    synced_tx: watch::Sender<bool>,
    mut version_rx: mpsc::Receiver<ServerVersion>,
    shared: Arc<Shared>,
) {
    let mut cfg = watcher::Config::default().page_size(opts.page_size.max(1));
    if let Some(t) = opts.watch_timeout {
        cfg = cfg.timeout(t);
    }
    let nodes: BoxStream<'static, Ev> =
        watcher::watcher(Api::<Node>::all(client.clone()), cfg.clone())
            .default_backoff()
            .map(|r| Ev::Node(reduce(r, NodeObservation::from_node)))
            .boxed();
    let rcs: BoxStream<'static, Ev> =
        watcher::watcher(Api::<RuntimeClass>::all(client.clone()), cfg.clone())
            .default_backoff()
            .map(|r| {
                Ev::Rc(reduce(r, |rc| {
                    let f = RuntimeClassFacts::from_api(rc);
                    (f.name.clone(), f)
                }))
            })
            .boxed();
    let nss: BoxStream<'static, Ev> =
        watcher::watcher(Api::<Namespace>::all(client.clone()), cfg.clone())
            .default_backoff()
            .map(|r| Ev::Ns(reduce(r, namespace_facts)))
            .boxed();
    let gmsa: BoxStream<'static, Ev> = gmsa::watch_names(&client, cfg).map(Ev::Gmsa).boxed();
    let mut events = futures::stream::select_all([nodes, rcs, nss, gmsa]);
    let mut stores = Stores::default();
    let mut rebuild_at: Option<tokio::time::Instant> = None;
    let (probe_tx, mut probe_rx) = mpsc::unbounded_channel();
    let mut probes: [Option<tokio::task::JoinHandle<()>>; 3] = [None, None, None];
    let mut version_open = true;
    loop {
        let changed = tokio::select! {
            ev = events.next() => {
                let Some(ev) = ev else { return };
                let (i, r) = stores.apply(ev);
                match (i, r) {
                    (None, r) => r.unwrap_or(false),
                    (Some(i), Ok(changed)) => {
                        record_ok(&shared, i, stores.synced_of(i));
                        changed
                    }
                    (Some(i), Err(e)) => {
                        record_err(&shared, i, &e);
                        // 410 Gone is routine: the watcher lists again at once.
                        if e.kind != ErrorKind::Gone && probes[i].as_ref().is_none_or(|p| p.is_finished()) {
                            probes[i] = Some(tokio::spawn(probe(client.clone(), i, probe_tx.clone())));
                        }
                        false
                    }
                }
            }
            Some(i) = probe_rx.recv() => {
                record_ok(&shared, i, stores.synced_of(i));
                false
            }
            v = version_rx.recv(), if version_open => match v {
                Some(v) if stores.version.as_ref() != Some(&v) => {
                    stores.version = Some(v);
                    true
                }
                Some(_) => false,
                None => {
                    version_open = false;
                    false
                }
            },
            _ = async { tokio::time::sleep_until(rebuild_at.unwrap_or_else(tokio::time::Instant::now)).await }, if rebuild_at.is_some() => {
                rebuild_at = None;
                let new = stores.snapshot();
                let old = facts_tx.borrow().clone();
                if *old != new {
                    log_changes(&old, &new);
                    let all = new.synced.all();
                    facts_tx.send_replace(Arc::new(new));
                    if all && !*synced_tx.borrow() {
                        let mut s = shared.status.lock().expect("status lock");
                        s.synced = true;
                        if s.all_good() {
                            s.current_until = Instant::now();
                        }
                        drop(s);
                        synced_tx.send_replace(true);
                    }
                }
                false
            }
        };
        if changed && rebuild_at.is_none() {
            rebuild_at = Some(tokio::time::Instant::now() + opts.debounce);
        }
    }
}
