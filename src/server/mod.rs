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
//! * Configuration: `--config` is polled the same way (`config_reload`): a valid new content
//!   becomes a new evaluation state (as new cluster facts do), an invalid one is logged with
//!   its file and line and the configuration in force is kept
//!   (`winlint_config_reload_total{result}`). The enforcement in force, with the file's
//!   SHA-256, is logged at start and on every change.
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
//!
//! * Several replicas (`--leader-elect`, [`leader`]): every replica admits; the Lease holder
//!   alone runs the once-per-cluster duties (the certificate controller), gated by
//!   [`Server::leader`].
//!
//! Layout: `transport` (TLS accept loop, per-connection deadlines), `limits` (per-request
//! budgets), `handlers` (routes, the admission handler), `metrics` (Prometheus, the metrics
//! listener), `certs` (serving certificate and its reload), `state` (what handlers share),
//! `facts` (the cluster watch).

mod audit_loop;
mod blocking;
mod ca_bundle;
mod cert_controller;
mod certs;
mod config_reload;
mod facts;
mod handlers;
mod handshake;
pub mod leader;
mod limits;
mod metrics;
mod poll;
mod state;
mod transport;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::sync::{Semaphore, watch};

use crate::cluster::{ClusterArgs, ClusterError, ClusterFacts};
use crate::config::{Config, ConfigError};

use certs::{CertStore, load_pair, tls_config};
use facts::{follow_facts, start_watch};
use handlers::webhook_router;
pub use metrics::Metrics;
use metrics::metrics_router;
use state::facts_summary;
pub use state::{AppState, Evaluation, LoadedConfig};
use transport::{Timeouts, accept_loop};

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

/// `--audit`: whether `winlint serve` audits the running workloads continuously.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum AuditMode {
    On,
    #[default]
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
    /// The same `winlint.yaml` as the CLI (target, rules, fixes, mutation, webhook). Re-read
    /// when it changes: a valid new content is put in force without a restart, an invalid one
    /// is logged (file and line) and the configuration in force is kept.
    #[arg(long, env = "WINLINT_CONFIG")]
    pub config: Option<PathBuf>,
    /// Seconds between checks of the --config file for changes.
    #[arg(long, default_value_t = 10.0, value_name = "SECONDS")]
    pub config_reload_interval: f64,
    /// Plain-HTTP listener for /metrics, /healthz and /readyz (off when not given).
    #[arg(long, env = "WINLINT_METRICS_LISTEN")]
    pub metrics_listen: Option<SocketAddr>,
    /// Log format.
    #[arg(long, value_enum, default_value_t = LogFormat::Text, env = "WINLINT_LOG_FORMAT")]
    pub log_format: LogFormat,
    /// Seconds between checks of the certificate and key files for changes.
    #[arg(long, default_value_t = 10.0, value_name = "SECONDS")]
    pub cert_reload_interval: f64,
    /// Requests evaluated at once; more wait for a slot (within the request's budget).
    #[arg(long, default_value_t = 256)]
    pub max_concurrency: usize,
    /// Request body bytes held at once, counted as they are read (not as announced); more
    /// wait for room within the request's budget. Bounds memory: a request peaks at a small
    /// multiple of its body (bodies denser than 6 bytes per JSON value are not parsed).
    #[arg(long, default_value_t = 32 * 1024 * 1024, value_name = "BYTES")]
    pub max_inflight_bytes: usize,
    /// Largest request body in bytes. Objects are ≤3 MiB, UPDATE carries two. Beyond it the
    /// request is answered per `webhook.onError` (413 when its uid cannot be read).
    #[arg(long, default_value_t = 8 * 1024 * 1024, value_name = "BYTES")]
    pub max_body_bytes: usize,
    /// Seconds a request may take, body upload and evaluation included; 80 % of the API
    /// server's `?timeout=` when that is shorter. Keep it below the webhook's timeoutSeconds
    /// (the chart and `winlint manifests` derive it). Past it the answer is per
    /// `webhook.onError` and the evaluation stops.
    #[arg(long, default_value_t = 10.0, value_name = "SECONDS")]
    pub request_timeout: f64,
    /// Read-rate floor of a request body, bytes per second on average, counted from its first
    /// byte after a grace second; slower bodies are cut while more than half of
    /// --max-inflight-bytes is taken (a body must also be complete in time to be evaluated
    /// within the request's budget).
    #[arg(long, default_value_t = 64 * 1024, value_name = "BYTES_PER_SECOND")]
    pub min_body_rate: u64,
    /// Open connections at most; at the cap the longest-idle connection is closed for a new
    /// one (or the new one is refused when none is idle).
    #[arg(long, default_value_t = 1024)]
    pub max_connections: usize,
    /// Seconds from a request's first byte to the end of its headers (HTTP/1.1); then the
    /// connection closes (slow-loris clients).
    #[arg(long, default_value_t = 10.0, value_name = "SECONDS")]
    pub header_timeout: f64,
    /// Seconds a keep-alive connection may sit idle between requests before it is closed.
    #[arg(long, default_value_t = 30.0, value_name = "SECONDS")]
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
    /// Name of this webhook's own Mutating/ValidatingWebhookConfiguration: check that their
    /// caBundle verifies the serving certificate (needs `get` on them; the chart and
    /// `winlint manifests` grant it by resourceName). A mismatch is logged, counted in
    /// `winlint_ca_bundle_mismatch` and named by /readyz.
    #[arg(long, value_name = "NAME", env = "WINLINT_WEBHOOK_CONFIGURATION")]
    pub webhook_configuration: Option<String>,
    /// Seconds between checks of the caBundle (--webhook-configuration).
    #[arg(long, default_value_t = 60.0, value_name = "SECONDS", hide = true)]
    pub ca_bundle_check_interval: f64,
    /// Manage the CA and serving certificate in this Secret (created if absent, re-issued when
    /// a third of the validity is left), write them to --tls-cert/--tls-key and keep the
    /// caBundle of --webhook-configuration in step: no cert-manager, nothing random in the
    /// install manifests.
    #[arg(long, value_name = "NAME", env = "WINLINT_CERTIFICATES_SECRET")]
    pub certificates_secret: Option<String>,
    /// Namespace of --certificates-secret (default: $POD_NAMESPACE).
    #[arg(long, value_name = "NAMESPACE", env = "POD_NAMESPACE")]
    pub certificates_namespace: Option<String>,
    /// winlint's own namespace, where the Secrets of `registry.pullSecrets` are read (default:
    /// $POD_NAMESPACE, else the ServiceAccount's namespace file).
    #[arg(long, value_name = "NAMESPACE", env = "POD_NAMESPACE")]
    pub pull_secrets_namespace: Option<String>,
    /// Seconds between readings of the `registry.pullSecrets` Secrets (a rotated secret is
    /// used from the next reading).
    #[arg(long, default_value_t = 30.0, value_name = "SECONDS", hide = true)]
    pub pull_secrets_interval: f64,
    /// Names of the managed serving certificate, repeatable (the Service's DNS names).
    #[arg(long = "certificates-name", value_name = "NAME")]
    pub certificates_names: Vec<String>,
    /// Validity of the managed serving certificate, in seconds (a year).
    #[arg(long, default_value_t = 365.0 * 86_400.0, value_name = "SECONDS", hide = true)]
    pub certificates_validity: f64,
    /// Seconds between checks of the managed certificates.
    #[arg(long, default_value_t = 60.0, value_name = "SECONDS", hide = true)]
    pub certificates_check_interval: f64,
    /// Elect a leader among the replicas on a coordination.k8s.io Lease: every replica admits,
    /// only the Lease holder runs the certificate controller and the other once-per-cluster
    /// duties (needs get/create/update on Leases in --lease-namespace). Off: this replica
    /// leads.
    #[arg(long, env = "WINLINT_LEADER_ELECT")]
    pub leader_elect: bool,
    /// Name of the leader Lease.
    #[arg(long, default_value = "winlint", value_name = "NAME")]
    pub lease_name: String,
    /// Namespace of the leader Lease (default: $POD_NAMESPACE).
    #[arg(long, value_name = "NAMESPACE", env = "POD_NAMESPACE")]
    pub lease_namespace: Option<String>,
    /// This replica's holderIdentity in the Lease (default: $POD_NAME, else host name and
    /// process id).
    #[arg(long, value_name = "NAME", env = "POD_NAME")]
    pub lease_identity: Option<String>,
    /// Seconds a Lease record stays valid after it was last seen renewed: how long a crashed
    /// leader's duties wait for another replica (a leader that stops releases it at once).
    #[arg(long, default_value_t = 15.0, value_name = "SECONDS")]
    pub lease_duration: f64,
    /// Seconds the leader keeps leading without a successful renewal (below --lease-duration).
    #[arg(long, default_value_t = 10.0, value_name = "SECONDS")]
    pub lease_renew_deadline: f64,
    /// Seconds between tries to acquire or renew the Lease (below --lease-renew-deadline).
    #[arg(long, default_value_t = 2.0, value_name = "SECONDS")]
    pub lease_retry_period: f64,
    /// Continuous audit (the chart turns it on): on the leader, judge every running workload
    /// with the live facts, every --audit-interval and when the facts change, and keep
    /// wgpolicyk8s.io PolicyReports per namespace (needs their CRDs, list on the workload
    /// kinds, and write on policyreports: the chart's RBAC).
    #[arg(long, value_enum, default_value_t = AuditMode::Off, env = "WINLINT_AUDIT")]
    pub audit: AuditMode,
    /// Seconds between two audits when the facts do not change.
    #[arg(
        long,
        default_value_t = 600.0,
        value_name = "SECONDS",
        env = "WINLINT_AUDIT_INTERVAL"
    )]
    pub audit_interval: f64,
    /// Seconds of facts changes gathered before an audit runs again.
    #[arg(long, default_value_t = 10.0, value_name = "SECONDS", hide = true)]
    pub audit_debounce: f64,
    /// Objects per list page of the audit.
    #[arg(long, default_value_t = crate::cluster::PAGE_SIZE, value_name = "N", hide = true)]
    pub audit_page_size: u32,
    /// Whether this replica leads (embedding and tests): the audit runs while it says true.
    /// `None`: see `leader_receiver` in `start`.
    #[arg(skip)]
    pub audit_leader: Option<watch::Receiver<bool>>,
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
            config_reload_interval: 10.0,
            metrics_listen: None,
            log_format: LogFormat::Text,
            cert_reload_interval: 10.0,
            max_concurrency: 256,
            max_inflight_bytes: 32 * 1024 * 1024,
            max_body_bytes: 8 * 1024 * 1024,
            request_timeout: 10.0,
            min_body_rate: 64 * 1024,
            max_connections: 1024,
            header_timeout: 10.0,
            idle_timeout: 30.0,
            handshake_timeout: 10.0,
            shutdown_delay: 0.0,
            shutdown_timeout: 25.0,
            cluster_facts: FactsMode::Off,
            cluster_facts_timeout: 30.0,
            webhook_configuration: None,
            ca_bundle_check_interval: 60.0,
            certificates_secret: None,
            certificates_namespace: None,
            pull_secrets_namespace: None,
            pull_secrets_interval: 30.0,
            certificates_names: Vec::new(),
            certificates_validity: 365.0 * 86_400.0,
            certificates_check_interval: 60.0,
            leader_elect: false,
            lease_name: "winlint".into(),
            lease_namespace: None,
            lease_identity: None,
            lease_duration: 15.0,
            lease_renew_deadline: 10.0,
            lease_retry_period: 2.0,
            audit: AuditMode::Off,
            audit_interval: 600.0,
            audit_debounce: 10.0,
            audit_page_size: crate::cluster::PAGE_SIZE,
            audit_leader: None,
            cluster: ClusterArgs::default(),
        }
    }
}

/// `registry.pullSecrets`: the namespace, a client, and a first reading before the first
/// request (a secret that cannot be read is logged; lookups go on without it).
async fn start_pull_secrets(
    args: &ServeArgs,
    config: &Config,
    images: &crate::registry::serve::ServeImages,
) -> Result<
    (
        kube::Client,
        crate::registry::pull_secrets::Reader,
        crate::registry::Credentials,
    ),
    ServeError,
> {
    use crate::registry::pull_secrets::{self, PullSecrets, Reader};
    let namespace = pull_secrets::own_namespace(args.pull_secrets_namespace.as_deref())
        .ok_or_else(|| {
            ServeError::Flag(
                "registry.pullSecrets needs winlint's namespace: --pull-secrets-namespace, \
                 $POD_NAMESPACE or the ServiceAccount's namespace file"
                    .into(),
            )
        })?;
    let client = crate::cluster::client(&args.cluster.client_source())
        .await
        .map_err(|e| ServeError::Flag(format!("registry.pullSecrets: {e}")))?;
    let p = PullSecrets {
        namespace,
        names: config.policy.registry.pull_secrets.clone(),
        policy: pull_secrets::SecretPolicy {
            default_namespaces: config
                .policy
                .registry
                .pull_secrets_default_namespaces
                .clone(),
            allow_glob_keys: config.policy.registry.allow_glob_keys,
        },
        // A reading is a GET per secret: never faster than twice a second, at least daily.
        interval: {
            let i = args.pull_secrets_interval;
            secs(if i.is_finite() {
                i.clamp(0.5, 86_400.0)
            } else {
                30.0
            })
        },
    };
    let credentials = images.credentials().clone();
    let mut reader = Reader::new(p);
    reader.refresh(&client, &credentials).await;
    Ok((client, reader, credentials))
}

pub(super) fn secs(s: f64) -> Duration {
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
    election: leader::Election,
}

impl Server {
    /// Begin a graceful shutdown (readiness off, then stop accepting, drain in-flight requests).
    pub fn shutdown(&self) {
        let _ = self.shutdown.send(true);
    }
    /// "This replica is the leader now" (always `true` without `--leader-elect`), for the
    /// duties only one replica performs.
    pub fn leader(&self) -> watch::Receiver<bool> {
        self.election.receiver()
    }
    /// Wait until the server has stopped (and, when it led, released the Lease).
    pub async fn wait(self) {
        let _ = self.task.await;
        if let Some(m) = self.metrics_task {
            let _ = m.await;
        }
        self.election.stopped().await;
    }
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
    /// A flag whose value cannot work.
    #[error("{0}")]
    Flag(String),
    /// Certificates and keys (named by their flag), and the TLS setup.
    #[error("{what}: {message}")]
    Tls { what: String, message: String },
}

impl ServeError {
    pub(super) fn tls(what: impl Into<String>, e: impl std::fmt::Display) -> Self {
        ServeError::Tls {
            what: what.into(),
            message: e.to_string(),
        }
    }
}

/// Limits that would make the webhook answer nothing (issue 15: `--max-body-bytes=0` and
/// `--request-timeout=0` were accepted).
fn check_flags(a: &ServeArgs) -> Result<(), ServeError> {
    let positive = [
        ("--request-timeout", a.request_timeout),
        ("--header-timeout", a.header_timeout),
        ("--idle-timeout", a.idle_timeout),
        ("--handshake-timeout", a.handshake_timeout),
        ("--cert-reload-interval", a.cert_reload_interval),
        ("--config-reload-interval", a.config_reload_interval),
        ("--shutdown-timeout", a.shutdown_timeout),
        ("--lease-retry-period", a.lease_retry_period),
        ("--audit-interval", a.audit_interval),
    ];
    for (flag, v) in positive {
        if !(v.is_finite() && v > 0.0) {
            return Err(ServeError::Flag(format!(
                "{flag}={v}: must be a positive number of seconds"
            )));
        }
    }
    let counts = [
        ("--max-body-bytes", a.max_body_bytes),
        ("--max-inflight-bytes", a.max_inflight_bytes),
        ("--max-concurrency", a.max_concurrency),
        ("--max-connections", a.max_connections),
        ("--min-body-rate", a.min_body_rate as usize),
        ("--audit-page-size", a.audit_page_size as usize),
    ];
    for (flag, v) in counts {
        if v == 0 {
            return Err(ServeError::Flag(format!(
                "{flag}=0: must be at least 1 (0 would refuse every request)"
            )));
        }
    }
    // client-go's order: a leader stops before its Lease can expire for the others, and
    // retries more than once before it stops.
    if a.leader_elect
        && !(a.lease_retry_period < a.lease_renew_deadline
            && a.lease_renew_deadline < a.lease_duration)
    {
        return Err(ServeError::Flag(format!(
            "--lease-retry-period={} < --lease-renew-deadline={} < --lease-duration={} must hold",
            a.lease_retry_period, a.lease_renew_deadline, a.lease_duration
        )));
    }
    Ok(())
}

/// Whether this replica leads, for the audit loop and the `winlint_leader` gauge: the receiver an embedder or test passes in
/// (`audit_leader`), else the Lease election's (`--leader-elect`; without it this replica leads).
fn leader_receiver(args: &ServeArgs, election: &leader::Election) -> watch::Receiver<bool> {
    args.audit_leader
        .clone()
        .unwrap_or_else(|| election.receiver())
}

/// `--audit=on`: the continuous audit on its own thread (`audit_loop`).
fn start_audit(
    args: &ServeArgs,
    election: &leader::Election,
    state: &Arc<AppState>,
    metrics: audit_loop::AuditMetrics,
    shutdown: &watch::Receiver<bool>,
) -> Result<(), ServeError> {
    if state.watch.is_none() {
        tracing::warn!(
            uid = "",
            "audit on without live cluster facts: workloads are judged with the configured \
             facts, every --audit-interval only"
        );
    }
    let l = audit_loop::AuditLoop {
        state: Arc::clone(state),
        source: args.cluster.client_source(),
        leader: leader_receiver(args, election),
        evaluations: state.evaluations.subscribe(),
        shutdown: shutdown.clone(),
        options: audit_loop::AuditOptions {
            interval: secs(args.audit_interval),
            debounce: Duration::from_secs_f64(args.audit_debounce.max(0.0)),
            page_size: args.audit_page_size,
        },
        metrics,
    };
    audit_loop::spawn(l)
        .map(|_| ())
        .map_err(|source| ServeError::Io {
            what: "the audit thread".into(),
            source,
        })
}

/// Bind the listeners and start serving in the background.
pub async fn start(args: ServeArgs) -> Result<Server, ServeError> {
    check_flags(&args)?;
    let (loaded, config_hash) = config_reload::load(args.config.as_deref())?;
    let config = loaded.config.clone();
    let mut metrics = Metrics::new();
    let (shutdown_tx, shutdown_rx) = watch::channel(false);
    let election = start_election(&args, &shutdown_rx).await?;
    leader::follow(&mut metrics.registry, leader_receiver(&args, &election));
    // Self-managed certificates: the files come from the Secret, before they are loaded.
    let controller = match &args.certificates_secret {
        Some(secret) => {
            let c = cert_controller::Controller {
                secret: secret.clone(),
                namespace: args.certificates_namespace.clone().unwrap_or_default(),
                names: args.certificates_names.clone(),
                validity: secs(args.certificates_validity),
                webhook_configuration: args.webhook_configuration.clone(),
                cert_file: args.tls_cert.clone(),
                key_file: args.tls_key.clone(),
            };
            if c.namespace.is_empty() || c.names.is_empty() {
                return Err(ServeError::tls(
                    "--certificates-secret",
                    "needs --certificates-namespace (or $POD_NAMESPACE) and --certificates-name",
                ));
            }
            let client = crate::cluster::client(&args.cluster.client_source())
                .await
                .map_err(ServeError::Cluster)?;
            // The leader issues; another replica waits for the Secret and copies it.
            let first = c
                .first_pass(&client, election.receiver())
                .await
                .map_err(|e| ServeError::tls("--certificates-secret", e))?;
            // A broken Secret leaves the files alone: without files from before, nothing to serve.
            if let cert_controller::Outcome::Broken(p) = &first
                && !c.cert_file.exists()
            {
                return Err(ServeError::tls("--certificates-secret", p));
            }
            Some((c, client, first))
        }
        None => None,
    };
    let (ck, hash) = load_pair(&args.tls_cert, &args.tls_key)?;
    let first_cert = ck.clone();
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
    let images =
        crate::registry::serve::ServeImages::new(&config.policy.registry, &mut metrics.registry);
    let pull_secrets = match &images {
        Some(i) if !config.policy.registry.pull_secrets.is_empty() => {
            Some(start_pull_secrets(&args, &config, i).await?)
        }
        _ => None,
    };
    let initial = Evaluation::build(
        Arc::new(loaded),
        Arc::new(ClusterFacts::empty()),
        images.as_ref(),
    );
    tracing::info!(uid = "", "evaluating with {}", facts_summary(&initial));
    state::log_enforcement(None, &initial);
    let audit_metrics = audit_loop::AuditMetrics::new(&mut metrics.registry);
    let state = Arc::new(AppState {
        evaluation: RwLock::new(Arc::new(initial)),
        evaluations: watch::channel(0).0,
        rebuilding: Default::default(),
        facts_settled: AtomicBool::new(watch.is_none()),
        watch,
        counted_errors: Default::default(),
        metrics,
        ready: AtomicBool::new(true),
        limit: Arc::new(Semaphore::new(args.max_concurrency.max(1))),
        bytes: Arc::new(Semaphore::new(
            args.max_inflight_bytes.min(Semaphore::MAX_PERMITS),
        )),
        bytes_total: args.max_inflight_bytes.min(Semaphore::MAX_PERMITS),
        max_body: args.max_body_bytes,
        min_body_rate: args.min_body_rate,
        request_timeout: secs(args.request_timeout),
        ca_bundle: Default::default(),
        images,
    });
    certs::record_expiry(&state, &first_cert);
    certs::spawn_reload(
        &args,
        store.clone(),
        state.clone(),
        shutdown_rx.clone(),
        hash,
    );
    config_reload::spawn(&args, state.clone(), shutdown_rx.clone(), config_hash);

    if let Some((client, reader, credentials)) = pull_secrets {
        tokio::spawn(crate::registry::pull_secrets::follow(
            client,
            reader,
            credentials,
            shutdown_rx.clone(),
        ));
    }
    if let Some(w) = &state.watch {
        follow_facts(&state, w, secs(args.cluster_facts_timeout), &shutdown_rx);
    }
    if let Some((c, client, first)) = controller {
        cert_controller::record(&state, &Ok(first));
        cert_controller::spawn(
            c,
            client,
            secs(args.certificates_check_interval),
            state.clone(),
            election.receiver(),
            shutdown_rx.clone(),
        );
    }
    if let Some(name) = &args.webhook_configuration {
        let client = crate::cluster::client(&args.cluster.client_source())
            .await
            .map_err(ServeError::Cluster)?;
        ca_bundle::spawn(
            name.clone(),
            client,
            args.tls_cert.clone(),
            secs(args.ca_bundle_check_interval),
            state.clone(),
            shutdown_rx.clone(),
        );
    }

    if args.audit == AuditMode::On {
        start_audit(&args, &election, &state, audit_metrics, &shutdown_rx)?;
    }

    let router = webhook_router(state.clone());
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
            max_connections: transport::connection_cap(args.max_connections),
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
        election,
    })
}

/// `--leader-elect`: elect on the Lease (see [`leader`]); else this replica always leads.
async fn start_election(
    args: &ServeArgs,
    shutdown: &watch::Receiver<bool>,
) -> Result<leader::Election, ServeError> {
    if !args.leader_elect {
        return Ok(leader::Election::always());
    }
    let namespace = args
        .lease_namespace
        .clone()
        .filter(|n| !n.is_empty())
        .ok_or_else(|| {
            ServeError::Flag("--leader-elect needs --lease-namespace (or $POD_NAMESPACE)".into())
        })?;
    let client = crate::cluster::client(&args.cluster.client_source())
        .await
        .map_err(|e| ServeError::Flag(format!("--leader-elect: {e}")))?;
    let config = leader::LeaseConfig {
        name: args.lease_name.clone(),
        namespace,
        identity: leader::identity(args.lease_identity.as_deref()),
        lease_duration: secs(args.lease_duration),
        renew_deadline: secs(args.lease_renew_deadline),
        retry_period: secs(args.lease_retry_period),
    };
    tracing::info!(
        uid = "",
        identity = %config.identity,
        "leader election on Lease {}/{}",
        config.namespace,
        config.name
    );
    Ok(leader::spawn(client, config, shutdown.clone()))
}
