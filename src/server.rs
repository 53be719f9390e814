//! `winlint serve`: the HTTPS admission webhook.
//!
//! * TLS: tokio-rustls with the `ring` provider, TLS 1.2 and 1.3 only, ALPN `h2`/`http/1.1`. The
//!   handshake runs in each connection's own task under a timeout (never inside the accept loop).
//!   With `--client-ca` the API server's client certificate is verified.
//! * HTTP: hyper-util's connection builder (HTTP/2 when ALPN says `h2`, else HTTP/1.1 with a
//!   header timeout counted from the first byte of a request and an idle timeout between
//!   requests), axum for routing: `POST /mutate`, `POST /validate` (the API server
//!   adds `?timeout=10s`), `GET /healthz`. Body limit 8 MiB by default (an UPDATE carries a
//!   ≤3 MiB object plus its oldObject) → 413 beyond; a per-request timeout (408) and a
//!   concurrency limit (requests wait for a slot within the request timeout, else 503).
//! * Certificates: cert and key are re-read every `--cert-reload-interval` seconds and swapped in
//!   (through a [`rustls::server::ResolvesServerCert`] holding an `RwLock<Arc<CertifiedKey>>`)
//!   when their content hash changes and the new pair parses and matches; established
//!   connections keep going, new handshakes see the new certificate. File-event watchers fire
//!   many times per atomic `..data` symlink swap of a Secret volume; polling is simpler.
//! * Shutdown: on SIGTERM/SIGINT `/readyz` turns 503, the listener stops after
//!   `--shutdown-delay`, and in-flight requests finish (bounded by `--shutdown-timeout`).
//! * Observability: `--metrics-listen` (plain HTTP) serves `/metrics` (Prometheus text),
//!   `/healthz`, `/readyz`. Logs through `tracing` (`--log-format text|json`); every request log
//!   line carries the AdmissionReview UID; no object contents at info level.
//! * Live cluster facts (issue 8 §2): unless `--cluster-facts=off`, a [`ClusterWatch`] on
//!   Nodes, RuntimeClasses and Namespaces (client from `--kubeconfig`/`--context`, else
//!   in-cluster or the default kubeconfig). Every new snapshot is turned into a whole new
//!   evaluation state ([`Evaluation`]: the [`Webhook`] with the effective configuration and
//!   the context of RuntimeClasses and namespace labels, [`crate::cluster::effective`]) on the
//!   blocking pool, then swapped in; a request only clones the current `Arc` under a read lock
//!   and never calls the API server. `/readyz` waits for the first complete sync, at most
//!   `--cluster-facts-timeout`, then is ready with the configured facts (logged, and
//!   `winlint_cluster_facts_synced 0`) until the facts arrive. Watch errors (403, 410,
//!   unreachable) keep the last good snapshot; they are logged by the watch and counted here.
//!   An older registration's namespace paths (`/validate/pss/{level}`,
//!   `/mutate/windows-namespace`) are answered as `/validate` and `/mutate`: the namespace's
//!   labels now come from the watch.

use std::hash::{Hash, Hasher};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;
use rustls::crypto::CryptoProvider;
use rustls::server::{ClientHello, ResolvesServerCert, WebPkiClientVerifier};
use rustls::sign::CertifiedKey;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use tokio::net::TcpListener;
use tokio::sync::{Semaphore, watch};
use tower::Service;

use crate::admission::{Endpoint, Webhook};
use crate::cluster::{
    ClientSource, ClusterArgs, ClusterError, ClusterFacts, ClusterWatch, Effective, WatchOptions,
};
use crate::config::{Config, ConfigError};

/// Log output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum LogFormat {
    #[default]
    Text,
    Json,
}

/// `--cluster-facts`: whether `winlint serve` watches the cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum FactsMode {
    #[default]
    On,
    Off,
}

/// Options of `winlint serve`.
#[derive(Debug, Clone, clap::Args)]
pub struct ServeArgs {
    /// Address of the HTTPS webhook listener.
    #[arg(long, default_value = "0.0.0.0:8443", env = "WINLINT_LISTEN")]
    pub listen: SocketAddr,
    /// PEM certificate chain of the serving certificate (re-read when it changes).
    #[arg(long, env = "WINLINT_TLS_CERT")]
    pub tls_cert: PathBuf,
    /// PEM private key of the serving certificate (re-read when it changes).
    #[arg(long, env = "WINLINT_TLS_KEY")]
    pub tls_key: PathBuf,
    /// PEM CA bundle: require and verify client certificates (the API server's) against it.
    #[arg(long, env = "WINLINT_CLIENT_CA")]
    pub client_ca: Option<PathBuf>,
    /// The same `winlint.yaml` as the CLI (target, rules, fixes, mutation, webhook).
    #[arg(long, env = "WINLINT_CONFIG")]
    pub config: Option<PathBuf>,
    /// Plain-HTTP listener for /metrics, /healthz and /readyz (off when not given).
    #[arg(long, env = "WINLINT_METRICS_LISTEN")]
    pub metrics_listen: Option<SocketAddr>,
    /// Log format.
    #[arg(long, value_enum, default_value_t = LogFormat::Text, env = "WINLINT_LOG_FORMAT")]
    pub log_format: LogFormat,
    /// Seconds between checks of the certificate and key files for changes.
    #[arg(long, default_value_t = 10.0, value_name = "SECONDS")]
    pub cert_reload_interval: f64,
    /// Requests evaluated at once; more wait for a slot (within the request timeout).
    #[arg(long, default_value_t = 256)]
    pub max_concurrency: usize,
    /// Request bytes being evaluated at once (by Content-Length); more wait for room (within
    /// the request timeout). Bounds memory: a 3 MiB object parses into several times that.
    #[arg(long, default_value_t = 32 * 1024 * 1024, value_name = "BYTES")]
    pub max_inflight_bytes: usize,
    /// Largest request body in bytes (413 beyond). Objects are ≤3 MiB, UPDATE carries two.
    #[arg(long, default_value_t = 8 * 1024 * 1024, value_name = "BYTES")]
    pub max_body_bytes: usize,
    /// Seconds a request may take, body upload included (408 beyond).
    #[arg(long, default_value_t = 10.0, value_name = "SECONDS")]
    pub request_timeout: f64,
    /// Seconds from a request's first byte to the end of its headers (HTTP/1.1); then the
    /// connection closes (slow-loris clients).
    #[arg(long, default_value_t = 10.0, value_name = "SECONDS")]
    pub header_timeout: f64,
    /// Seconds a keep-alive connection may sit idle between requests before it is closed.
    #[arg(long, default_value_t = 120.0, value_name = "SECONDS")]
    pub idle_timeout: f64,
    /// Seconds a client has to complete the TLS handshake.
    #[arg(long, default_value_t = 10.0, value_name = "SECONDS")]
    pub handshake_timeout: f64,
    /// Seconds to keep serving (with /readyz failing) after SIGTERM before closing the listener,
    /// so Service endpoints drop the pod first.
    #[arg(long, default_value_t = 0.0, value_name = "SECONDS")]
    pub shutdown_delay: f64,
    /// Seconds in-flight requests get to finish after the listener closes.
    #[arg(long, default_value_t = 25.0, value_name = "SECONDS")]
    pub shutdown_timeout: f64,
    /// Live cluster facts: watch Nodes, RuntimeClasses and Namespaces and judge pods by what
    /// the cluster runs (`off`: the configured target only; rules that need a namespace's
    /// labels do not fire).
    #[arg(long, value_enum, default_value_t = FactsMode::On, env = "WINLINT_CLUSTER_FACTS")]
    pub cluster_facts: FactsMode,
    /// Seconds /readyz waits for the first complete sync of the cluster facts; then the
    /// webhook is ready with the configured facts until they arrive (and says so).
    #[arg(long, default_value_t = 30.0, value_name = "SECONDS")]
    pub cluster_facts_timeout: f64,
    #[command(flatten)]
    pub cluster: ClusterArgs,
}

impl ServeArgs {
    /// Defaults with the given listener and certificate files (for embedding and tests), with
    /// the cluster facts off (the command line's default is on): a test must not read whatever
    /// cluster the machine's kubeconfig points at.
    pub fn new(listen: SocketAddr, tls_cert: PathBuf, tls_key: PathBuf) -> Self {
        ServeArgs {
            listen,
            tls_cert,
            tls_key,
            client_ca: None,
            config: None,
            metrics_listen: None,
            log_format: LogFormat::Text,
            cert_reload_interval: 10.0,
            max_concurrency: 256,
            max_inflight_bytes: 32 * 1024 * 1024,
            max_body_bytes: 8 * 1024 * 1024,
            request_timeout: 10.0,
            header_timeout: 10.0,
            idle_timeout: 120.0,
            handshake_timeout: 10.0,
            shutdown_delay: 0.0,
            shutdown_timeout: 25.0,
            cluster_facts: FactsMode::Off,
            cluster_facts_timeout: 30.0,
            cluster: ClusterArgs::default(),
        }
    }
}

fn secs(s: f64) -> Duration {
    Duration::from_secs_f64(if s.is_finite() && s > 0.0 { s } else { 0.001 })
}

/// `winlint serve`: run until SIGTERM/SIGINT. Returns the process exit code.
pub fn serve(args: ServeArgs) -> i32 {
    init_logging(args.log_format);
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("winlint serve: cannot start the runtime: {e}");
            return 1;
        }
    };
    rt.block_on(async move {
        let server = match start(args).await {
            Ok(s) => s,
            Err(e) => {
                tracing::error!(uid = "", "winlint serve: {e}");
                eprintln!("winlint serve: {e}");
                return 2;
            }
        };
        wait_for_signal().await;
        tracing::info!(uid = "", "signal received, shutting down");
        server.shutdown();
        server.wait().await;
        tracing::info!(uid = "", "stopped");
        0
    })
}

/// Install the global `tracing` subscriber (once; later calls are no-ops). `RUST_LOG` refines
/// the default filter `info,rustls=error,kube_runtime::watcher=error` (the cluster watch logs
/// its own errors once, with what to do, instead of kube's line per retry).
pub fn init_logging(format: LogFormat) {
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| EnvFilter::new("info"))
        .add_directive("rustls=error".parse().expect("valid directive"))
        .add_directive(
            "kube_runtime::watcher=error"
                .parse()
                .expect("valid directive"),
        );
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    let _ = match format {
        LogFormat::Json => builder.json().flatten_event(true).try_init(),
        LogFormat::Text => builder.with_ansi(false).try_init(),
    };
}

async fn wait_for_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = tokio::signal::ctrl_c() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

/// A running server.
pub struct Server {
    /// The bound HTTPS address (useful with port 0).
    pub addr: SocketAddr,
    /// The bound metrics address, if any.
    pub metrics_addr: Option<SocketAddr>,
    shutdown: watch::Sender<bool>,
    task: tokio::task::JoinHandle<()>,
    metrics_task: Option<tokio::task::JoinHandle<()>>,
    /// Shared state (metrics, readiness), for tests and embedding.
    pub state: Arc<AppState>,
}

impl Server {
    /// Begin a graceful shutdown (readiness off, then stop accepting, drain in-flight requests).
    pub fn shutdown(&self) {
        let _ = self.shutdown.send(true);
    }
    /// Wait until the server has stopped.
    pub async fn wait(self) {
        let _ = self.task.await;
        if let Some(m) = self.metrics_task {
            let _ = m.await;
        }
    }
}

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
}

impl Metrics {
    fn new() -> Self {
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
        Metrics {
            registry,
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

    fn request(&self, endpoint: &str, outcome: &str) {
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
    evaluation: RwLock<Arc<Evaluation>>,
    /// The configuration as loaded (`--config`): each snapshot is applied to it.
    config: Config,
    /// The live facts (`None`: `--cluster-facts=off`, or no cluster configuration found).
    watch: Option<ClusterWatch>,
    /// `/readyz` may say ready: the first sync arrived, its wait timed out, or no facts.
    facts_settled: AtomicBool,
    /// The errors already counted in `watch_errors`, per resource.
    counted_errors: std::sync::Mutex<std::collections::BTreeMap<&'static str, u64>>,
    pub metrics: Metrics,
    /// False once shutting down (`/readyz` 503).
    pub ready: AtomicBool,
    limit: Semaphore,
    /// Budget of in-flight request bytes, in KiB permits.
    bytes: Semaphore,
    bytes_kib: u32,
    max_body_kib: u32,
    request_timeout: Duration,
    /// `registry.mode` background or sync: the image facts (issue 18, `crate::registry::serve`).
    images: Option<crate::registry::serve::ServeImages>,
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
    fn refresh_fact_metrics(&self) {
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

/// What an evaluation state judges with, for the log: where the facts come from and the
/// target they give.
/// The context with the registry's facts, when `registry.mode` is not off.
fn with_images(
    context: Arc<crate::model::Context>,
    images: Option<&crate::registry::serve::ServeImages>,
) -> Arc<crate::model::Context> {
    let Some(images) = images else { return context };
    let mut cx = Arc::unwrap_or_clone(context);
    cx.images = Some(images.source());
    Arc::new(cx)
}

fn facts_summary(e: &Evaluation) -> String {
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

/// The serving certificate, swapped in place on reload.
#[derive(Debug)]
struct CertStore {
    current: RwLock<Arc<CertifiedKey>>,
}

impl ResolvesServerCert for CertStore {
    fn resolve(&self, _hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(
            self.current
                .read()
                .unwrap_or_else(|e| e.into_inner())
                .clone(),
        )
    }
}

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// Why the server cannot start.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// A file or a socket (named by its flag).
    #[error("{what}: {source}")]
    Io {
        what: String,
        source: std::io::Error,
    },
    /// The listener's address.
    #[error("{0}")]
    Listener(std::io::Error),
    /// The cluster configuration named by `--kubeconfig` / `--context` cannot be used.
    #[error("cluster facts: {0} (or --cluster-facts=off)")]
    Cluster(ClusterError),
    /// Certificates and keys (named by their flag), and the TLS setup.
    #[error("{what}: {message}")]
    Tls { what: String, message: String },
}

impl ServeError {
    fn tls(what: impl Into<String>, e: impl std::fmt::Display) -> Self {
        ServeError::Tls {
            what: what.into(),
            message: e.to_string(),
        }
    }
}

/// Read a cert/key pair: (certified key, content hash).
fn load_pair(cert: &Path, key: &Path) -> Result<(CertifiedKey, u64), ServeError> {
    let flag = |name: &str, p: &Path| format!("{name} {}", p.display());
    let read = |name: &str, p: &Path| {
        std::fs::read(p).map_err(|source| ServeError::Io {
            what: flag(name, p),
            source,
        })
    };
    let cert_pem = read("--tls-cert", cert)?;
    let key_pem = read("--tls-key", key)?;
    let hash = content_hash(&cert_pem, &key_pem);
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(&cert_pem)
        .collect::<Result<_, _>>()
        .map_err(|e| ServeError::tls(flag("--tls-cert", cert), e))?;
    if certs.is_empty() {
        return Err(ServeError::tls(
            flag("--tls-cert", cert),
            "no CERTIFICATE in the file",
        ));
    }
    let key_der = PrivateKeyDer::from_pem_slice(&key_pem)
        .map_err(|e| ServeError::tls(flag("--tls-key", key), e))?;
    let ck = CertifiedKey::from_der(certs, key_der, &provider())
        .map_err(|e| ServeError::tls("certificate and key", e))?;
    Ok((ck, hash))
}

fn content_hash(a: &[u8], b: &[u8]) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    a.hash(&mut h);
    b.hash(&mut h);
    h.finish()
}

fn tls_config(args: &ServeArgs, store: Arc<CertStore>) -> Result<rustls::ServerConfig, ServeError> {
    let builder = rustls::ServerConfig::builder_with_provider(provider())
        .with_protocol_versions(&[&rustls::version::TLS13, &rustls::version::TLS12])
        .map_err(|e| ServeError::tls("TLS", e))?;
    let builder = match &args.client_ca {
        Some(path) => {
            let client_ca = || format!("--client-ca {}", path.display());
            let mut roots = rustls::RootCertStore::empty();
            let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(path)
                .and_then(|it| it.collect::<Result<_, _>>())
                .map_err(|e| ServeError::tls(client_ca(), e))?;
            for c in certs {
                roots.add(c).map_err(|e| ServeError::tls(client_ca(), e))?;
            }
            let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider())
                .build()
                .map_err(|e| ServeError::tls(client_ca(), e))?;
            builder.with_client_cert_verifier(verifier)
        }
        None => builder.with_no_client_auth(),
    };
    let mut config = builder.with_cert_resolver(store);
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(config)
}

fn load_config(args: &ServeArgs) -> Result<Config, ServeError> {
    match &args.config {
        Some(path) => match Config::from_file(path) {
            // The read error names the flag too.
            Err(ConfigError::Read { source, .. }) => Err(ServeError::Io {
                what: format!("--config {}", path.display()),
                source,
            }),
            other => Ok(other?),
        },
        None => Ok(Config::default()),
    }
}

/// Bind the listeners and start serving in the background.
pub async fn start(args: ServeArgs) -> Result<Server, ServeError> {
    let config = load_config(&args)?;
    let (ck, hash) = load_pair(&args.tls_cert, &args.tls_key)?;
    let store = Arc::new(CertStore {
        current: RwLock::new(Arc::new(ck)),
    });
    let tls = Arc::new(tls_config(&args, store.clone())?);
    let listener = TcpListener::bind(args.listen)
        .await
        .map_err(|source| ServeError::Io {
            what: format!("--listen {}", args.listen),
            source,
        })?;
    let addr = listener.local_addr().map_err(ServeError::Listener)?;
    let metrics_listener = match args.metrics_listen {
        Some(a) => Some(
            TcpListener::bind(a)
                .await
                .map_err(|source| ServeError::Io {
                    what: format!("--metrics-listen {a}"),
                    source,
                })?,
        ),
        None => None,
    };
    let metrics_addr = metrics_listener.as_ref().and_then(|l| l.local_addr().ok());
    let watch = start_watch(&args).await?;
    let mut metrics = Metrics::new();
    let images =
        crate::registry::serve::ServeImages::new(&config.policy.registry, &mut metrics.registry);
    let initial = Evaluation {
        webhook: Webhook::with_context(
            config.clone(),
            with_images(Arc::default(), images.as_ref()),
        ),
        facts: Arc::new(ClusterFacts::empty()),
    };
    tracing::info!(uid = "", "evaluating with {}", facts_summary(&initial));
    let state = Arc::new(AppState {
        evaluation: RwLock::new(Arc::new(initial)),
        config,
        facts_settled: AtomicBool::new(watch.is_none()),
        watch,
        counted_errors: Default::default(),
        metrics,
        ready: AtomicBool::new(true),
        limit: Semaphore::new(args.max_concurrency.max(1)),
        bytes: Semaphore::new(kib(args.max_inflight_bytes) as usize),
        bytes_kib: kib(args.max_inflight_bytes),
        max_body_kib: kib(args.max_body_bytes),
        request_timeout: secs(args.request_timeout),
        images,
    });
    let (shutdown_tx, shutdown_rx) = watch::channel(false);

    // Certificate reload.
    {
        let (cert, key) = (args.tls_cert.clone(), args.tls_key.clone());
        let interval = secs(args.cert_reload_interval);
        let store = store.clone();
        let state = state.clone();
        let mut rx = shutdown_rx.clone();
        tokio::spawn(async move {
            let mut last = hash;
            loop {
                tokio::select! {
                    _ = tokio::time::sleep(interval) => {}
                    _ = rx.wait_for(|s| *s) => return,
                }
                let (c, k) = (cert.clone(), key.clone());
                let loaded = tokio::task::spawn_blocking(move || {
                    let cp = std::fs::read(&c).ok()?;
                    let kp = std::fs::read(&k).ok()?;
                    Some((content_hash(&cp, &kp), c, k))
                })
                .await
                .ok()
                .flatten();
                let Some((h, c, k)) = loaded else { continue };
                if h == last {
                    continue;
                }
                match load_pair(&c, &k) {
                    Ok((ck, h2)) => {
                        *store.current.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(ck);
                        last = h2;
                        state
                            .metrics
                            .cert_reloads
                            .get_or_create(&vec![("result".into(), "ok".into())])
                            .inc();
                        tracing::info!(uid = "", "serving certificate reloaded");
                    }
                    Err(e) => {
                        // Half-written files (cert updated, key not yet): keep the old pair and
                        // try again on the next tick.
                        state
                            .metrics
                            .cert_reloads
                            .get_or_create(&vec![("result".into(), "error".into())])
                            .inc();
                        tracing::warn!(
                            uid = "",
                            "certificate reload failed, keeping the old one: {e}"
                        );
                    }
                }
            }
        });
    }

    if let Some(w) = &state.watch {
        follow_facts(&state, w, secs(args.cluster_facts_timeout), &shutdown_rx);
    }

    let router = webhook_router(state.clone(), args.max_body_bytes);
    let task = tokio::spawn(accept_loop(
        listener,
        tls,
        router,
        state.clone(),
        shutdown_rx.clone(),
        Timeouts {
            handshake: secs(args.handshake_timeout),
            header: secs(args.header_timeout),
            idle: secs(args.idle_timeout),
            delay: Duration::from_secs_f64(args.shutdown_delay.max(0.0)),
            drain: secs(args.shutdown_timeout),
        },
    ));
    let metrics_task = metrics_listener.map(|l| {
        let router = metrics_router(state.clone());
        let mut rx = shutdown_rx.clone();
        let delay = Duration::from_secs_f64(args.shutdown_delay.max(0.0));
        tokio::spawn(async move {
            let _ = axum::serve(l, router)
                .with_graceful_shutdown(async move {
                    let _ = rx.wait_for(|s| *s).await;
                    // Keep answering /readyz (503) while the webhook drains.
                    tokio::time::sleep(delay).await;
                })
                .await;
        })
    });
    let metrics = metrics_addr.map_or_else(|| "off".to_string(), |a| a.to_string());
    tracing::info!(uid = "", %addr, %metrics, "winlint webhook listening");
    Ok(Server {
        addr,
        metrics_addr,
        shutdown: shutdown_tx,
        task,
        metrics_task,
        state,
    })
}

/// The cluster watch of `args`: `None` with `--cluster-facts=off` or when no cluster
/// configuration can be found (neither flag given, not in a pod, no kubeconfig): the webhook
/// then evaluates with the configured facts and says so. A `--kubeconfig` / `--context` that
/// cannot be used is an error: the operator asked for that cluster.
async fn start_watch(args: &ServeArgs) -> Result<Option<ClusterWatch>, ServeError> {
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
fn follow_facts(
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

struct Timeouts {
    handshake: Duration,
    header: Duration,
    idle: Duration,
    delay: Duration,
    drain: Duration,
}

async fn accept_loop(
    listener: TcpListener,
    tls: Arc<rustls::ServerConfig>,
    router: Router,
    state: Arc<AppState>,
    mut shutdown: watch::Receiver<bool>,
    t: Timeouts,
) {
    let acceptor = tokio_rustls::TlsAcceptor::from(tls);
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let mut h1 = auto::Builder::new(TokioExecutor::new()).http1_only();
    // hyper's own header_read_timeout also runs while a keep-alive connection is idle, so it
    // would close the API server's pooled connections; ConnGuard times headers from their
    // first byte instead.
    h1.http1()
        .timer(TokioTimer::new())
        .header_read_timeout(None)
        .keep_alive(true);
    let mut h2 = auto::Builder::new(TokioExecutor::new()).http2_only();
    h2.http2().timer(TokioTimer::new());
    let (h1, h2) = (Arc::new(h1), Arc::new(h2));
    let mut stop_at: Option<tokio::time::Instant> = None;
    loop {
        let accepted = tokio::select! {
            r = listener.accept() => r,
            _ = shutdown.wait_for(|s| *s), if stop_at.is_none() => {
                state.ready.store(false, Ordering::SeqCst);
                stop_at = Some(tokio::time::Instant::now() + t.delay);
                continue;
            }
            _ = tokio::time::sleep_until(stop_at.unwrap_or_else(tokio::time::Instant::now)), if stop_at.is_some() => break,
        };
        let (tcp, peer) = match accepted {
            Ok(x) => x,
            Err(e) => {
                // EMFILE and friends: back off a little instead of spinning.
                tracing::warn!(uid = "", "accept failed: {e}");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let _ = tcp.set_nodelay(true);
        let acceptor = acceptor.clone();
        let watcher = graceful.watcher();
        let (h1, h2) = (h1.clone(), h2.clone());
        let router = router.clone();
        let (handshake, header, idle) = (t.handshake, t.header, t.idle);
        tokio::spawn(async move {
            let stream = match tokio::time::timeout(handshake, acceptor.accept(tcp)).await {
                Ok(Ok(s)) => s,
                Ok(Err(e)) => {
                    tracing::debug!(uid = "", %peer, "TLS handshake failed: {e}");
                    return;
                }
                Err(_) => {
                    tracing::debug!(uid = "", %peer, "TLS handshake timed out");
                    return;
                }
            };
            let is_h2 = stream.get_ref().1.alpn_protocol() == Some(b"h2");
            // HTTP/2 streams have no header deadline here (frames interleave); the idle
            // deadline still closes connections that carry no request for --idle-timeout.
            let guard = Arc::new(ConnGuard::new((!is_h2).then_some(header), idle));
            let g = guard.clone();
            let svc = hyper::service::service_fn(move |req: Request<hyper::body::Incoming>| {
                let active = ActiveRequest::new(g.clone());
                let fut = router.clone().call(req);
                async move {
                    let r = fut.await;
                    drop(active);
                    r
                }
            });
            let io = TokioIo::new(GuardedIo::new(stream, guard));
            let result = if is_h2 {
                watcher
                    .watch(h2.serve_connection(io, svc).into_owned())
                    .await
            } else {
                watcher
                    .watch(h1.serve_connection(io, svc).into_owned())
                    .await
            };
            if let Err(e) = result {
                tracing::debug!(uid = "", %peer, "connection ended: {e}");
            }
        });
    }
    drop(listener);
    tracing::info!(uid = "", "listener closed, draining in-flight requests");
    if tokio::time::timeout(t.drain, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!(uid = "", "shutdown timeout: closing remaining connections");
    }
}

fn webhook_router(state: Arc<AppState>, max_body: usize) -> Router {
    Router::new()
        .route("/mutate", post(mutate))
        .route("/validate", post(validate))
        .route("/validate/pss/{level}", post(legacy))
        .route("/mutate/windows-namespace", post(legacy))
        .route("/healthz", get(|| async { "ok" }))
        .layer(middleware::from_fn_with_state(state.clone(), limits))
        .layer(DefaultBodyLimit::max(max_body))
        .with_state(state)
}

fn metrics_router(state: Arc<AppState>) -> Router {
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
                    (StatusCode::SERVICE_UNAVAILABLE, "shutting down")
                } else if !s.facts_settled() {
                    (
                        StatusCode::SERVICE_UNAVAILABLE,
                        "waiting for the first sync of the cluster facts",
                    )
                } else if s.evaluation().facts.synced.all() {
                    (StatusCode::OK, "ready: live cluster facts")
                } else {
                    (StatusCode::OK, "ready: configured facts")
                }
            }),
        )
        .with_state(state)
}

/// Concurrency limit and request timeout around every webhook request.
async fn limits(State(state): State<Arc<AppState>>, req: Request, next: Next) -> Response {
    let deadline = tokio::time::Instant::now() + state.request_timeout;
    let path = req.uri().path().to_string();
    // Memory: reserve the body's size (Content-Length, else the largest allowed body) from the
    // in-flight byte budget; a body larger than the whole budget takes all of it.
    let want = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok())
        .map_or(state.max_body_kib, kib)
        .clamp(1, state.bytes_kib);
    let permits = tokio::time::timeout_at(deadline, async {
        let count = state.limit.acquire().await.ok()?;
        let bytes = state.bytes.acquire_many(want).await.ok()?;
        Some((count, bytes))
    })
    .await;
    let Ok(Some(permits)) = permits else {
        state.metrics.request(endpoint_of(&path), "overloaded");
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            "winlint: too many requests\n",
        )
            .into_response();
    };
    let resp = match tokio::time::timeout_at(deadline, next.run(req)).await {
        Ok(r) => r,
        Err(_) => {
            state.metrics.request(endpoint_of(&path), "timeout");
            (StatusCode::REQUEST_TIMEOUT, "winlint: request timed out\n").into_response()
        }
    };
    drop(permits);
    resp
}

/// Bytes → KiB permits (rounded up, at least 1, saturating).
fn kib(bytes: usize) -> u32 {
    u32::try_from(bytes.div_ceil(1024).max(1)).unwrap_or(u32::MAX >> 3)
}

fn endpoint_of(path: &str) -> &'static str {
    match path {
        p if p == "/mutate" || p.starts_with("/mutate/") => "mutate",
        p if p == "/validate" || p.starts_with("/validate/") => "validate",
        _ => "other",
    }
}

async fn mutate(
    State(state): State<Arc<AppState>>,
    body: Result<Bytes, axum::extract::rejection::BytesRejection>,
) -> Response {
    admit(state, Endpoint::Mutate, body).await
}

async fn validate(
    State(state): State<Arc<AppState>>,
    body: Result<Bytes, axum::extract::rejection::BytesRejection>,
) -> Response {
    admit(state, Endpoint::Validate, body).await
}

/// Whether the deprecated namespace paths were called (logged once).
static LEGACY_PATH_LOGGED: AtomicBool = AtomicBool::new(false);

/// `/validate/pss/{level}` and `/mutate/windows-namespace`: the per-namespace webhooks an older
/// chart or `winlint manifests` registered, answered as `/validate` and `/mutate` (the
/// namespace's labels come from the cluster facts now), so that an upgrade never meets a 404.
async fn legacy(
    State(state): State<Arc<AppState>>,
    uri: axum::http::Uri,
    body: Result<Bytes, axum::extract::rejection::BytesRejection>,
) -> Response {
    let endpoint = if uri.path().starts_with("/mutate") {
        Endpoint::Mutate
    } else {
        Endpoint::Validate
    };
    if !LEGACY_PATH_LOGGED.swap(true, Ordering::Relaxed) {
        tracing::warn!(
            uid = "",
            path = uri.path(),
            "a webhook registered by an older winlint calls {}: answered as {}, with the \
             namespace's labels from the cluster facts; re-apply the chart or `winlint manifests` \
             to register the current webhooks",
            uri.path(),
            endpoint.path()
        );
    }
    admit(state, endpoint, body).await
}

/// Bodies above this size are evaluated on the blocking pool, so parsing megabytes never stalls
/// the workers that run handshakes and other connections.
const BLOCKING_THRESHOLD: usize = 256 * 1024;

async fn admit(
    state: Arc<AppState>,
    endpoint: Endpoint,
    body: Result<Bytes, axum::extract::rejection::BytesRejection>,
) -> Response {
    let ep = endpoint.as_str();
    let body = match body {
        Ok(b) => b,
        Err(rej) => {
            let status = rej.status();
            let outcome = if status == StatusCode::PAYLOAD_TOO_LARGE {
                "too_large"
            } else {
                "bad_request"
            };
            state.metrics.request(ep, outcome);
            tracing::warn!(uid = "", endpoint = ep, %status, "request body rejected: {}", rej.body_text());
            return (status, format!("winlint: {}\n", rej.body_text())).into_response();
        }
    };
    let started = Instant::now();
    if let Some(images) = &state.images {
        images.before_review(&body).await;
    }
    let eval = state.evaluation();
    let result = if body.len() > BLOCKING_THRESHOLD {
        match tokio::task::spawn_blocking(move || eval.webhook.review(&body, endpoint)).await {
            Ok(r) => r,
            Err(e) => Err(crate::admission::BadRequest(format!(
                "evaluation failed: {e}"
            ))),
        }
    } else {
        eval.webhook.review(&body, endpoint)
    };
    let elapsed = started.elapsed();
    match result {
        Err(bad) => {
            state.metrics.request(ep, "bad_request");
            tracing::warn!(uid = "", endpoint = ep, "bad request: {bad}");
            (
                StatusCode::BAD_REQUEST,
                format!("winlint: bad AdmissionReview: {bad}\n"),
            )
                .into_response()
        }
        Ok(out) => {
            let m = &state.metrics;
            m.request(ep, out.decision.as_str());
            m.latency
                .get_or_create(&vec![("endpoint".into(), ep.into())])
                .observe(elapsed.as_secs_f64());
            if endpoint == Endpoint::Validate {
                for (rule, sev) in &out.findings {
                    m.findings
                        .get_or_create(&vec![
                            ("rule".into(), (*rule).into()),
                            ("severity".into(), sev.as_str().into()),
                        ])
                        .inc();
                }
            }
            for rule in &out.patched_rules {
                m.patches
                    .get_or_create(&vec![("rule".into(), (*rule).into())])
                    .inc();
            }
            let rules: Vec<&str> = out.findings.iter().map(|(r, _)| *r).collect();
            tracing::info!(
                uid = %out.uid,
                endpoint = ep,
                operation = %out.operation,
                kind = %out.kind,
                namespace = %out.namespace,
                name = %out.name,
                dry_run = out.dry_run,
                allowed = out.allowed,
                decision = out.decision.as_str(),
                rules = ?rules,
                patched = ?out.patched,
                micros = elapsed.as_micros() as u64,
                "admission"
            );
            if let Some(e) = &out.error {
                tracing::warn!(uid = %out.uid, endpoint = ep, "object not evaluated: {e}");
            }
            Response::builder()
                .status(StatusCode::OK)
                .header(header::CONTENT_TYPE, "application/json")
                .body(Body::from(out.body))
                .expect("valid response")
        }
    }
}

/// Header and idle deadlines of one connection (header deadline: HTTP/1.1 only). A request's header must arrive within
/// `header` of its first byte (slow-loris clients are cut off); between requests the connection
/// may be idle for `idle`. While a request is being answered neither applies.
struct ConnGuard {
    state: std::sync::Mutex<GuardState>,
    header: Option<Duration>,
    idle: Duration,
}

struct GuardState {
    active: usize,
    /// Bytes of a new request arrived and its header is not parsed yet: the header deadline.
    head_deadline: Option<tokio::time::Instant>,
    idle_since: tokio::time::Instant,
}

impl ConnGuard {
    fn new(header: Option<Duration>, idle: Duration) -> Self {
        ConnGuard {
            state: std::sync::Mutex::new(GuardState {
                active: 0,
                head_deadline: None,
                idle_since: tokio::time::Instant::now(),
            }),
            header,
            idle,
        }
    }
    fn lock(&self) -> std::sync::MutexGuard<'_, GuardState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
    fn on_bytes(&self) {
        let mut s = self.lock();
        if let Some(header) = self.header
            && s.active == 0
            && s.head_deadline.is_none()
        {
            s.head_deadline = Some(tokio::time::Instant::now() + header);
        }
    }
    fn deadline(&self) -> Option<tokio::time::Instant> {
        let s = self.lock();
        if s.active > 0 {
            None
        } else {
            Some(s.head_deadline.unwrap_or(s.idle_since + self.idle))
        }
    }
}

/// Marks a request as being answered for as long as it lives.
struct ActiveRequest(Arc<ConnGuard>);

impl ActiveRequest {
    fn new(g: Arc<ConnGuard>) -> Self {
        {
            let mut s = g.lock();
            s.active += 1;
            s.head_deadline = None;
        }
        ActiveRequest(g)
    }
}

impl Drop for ActiveRequest {
    fn drop(&mut self) {
        let mut s = self.0.lock();
        s.active = s.active.saturating_sub(1);
        s.idle_since = tokio::time::Instant::now();
    }
}

/// The connection's IO with [`ConnGuard`]'s deadlines applied to reads.
struct GuardedIo<S> {
    inner: S,
    guard: Arc<ConnGuard>,
    sleep: std::pin::Pin<Box<tokio::time::Sleep>>,
}

impl<S> GuardedIo<S> {
    fn new(inner: S, guard: Arc<ConnGuard>) -> Self {
        let first = guard.deadline().unwrap_or_else(tokio::time::Instant::now);
        GuardedIo {
            inner,
            guard,
            sleep: Box::pin(tokio::time::sleep_until(first)),
        }
    }
}

impl<S: tokio::io::AsyncRead + Unpin> tokio::io::AsyncRead for GuardedIo<S> {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        use std::task::Poll;
        let before = buf.filled().len();
        match std::pin::Pin::new(&mut self.inner).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => {
                if buf.filled().len() > before {
                    self.guard.on_bytes();
                }
                return Poll::Ready(Ok(()));
            }
            Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
            Poll::Pending => {}
        }
        let Some(deadline) = self.guard.deadline() else {
            return Poll::Pending;
        };
        if self.sleep.deadline() != deadline {
            self.sleep.as_mut().reset(deadline);
        }
        if self.sleep.as_mut().poll(cx).is_ready() {
            let what = if self.guard.lock().head_deadline.is_some() {
                "request header timeout"
            } else {
                "idle timeout"
            };
            return Poll::Ready(Err(std::io::Error::new(std::io::ErrorKind::TimedOut, what)));
        }
        Poll::Pending
    }
}

impl<S: tokio::io::AsyncWrite + Unpin> tokio::io::AsyncWrite for GuardedIo<S> {
    fn poll_write(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        std::pin::Pin::new(&mut self.inner).poll_write(cx, buf)
    }
    fn poll_write_vectored(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> std::task::Poll<std::io::Result<usize>> {
        std::pin::Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }
    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
    fn poll_flush(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.inner).poll_flush(cx)
    }
    fn poll_shutdown(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}
