//! `winlint manifests`: install YAML for users without Helm.
//!
//! In-cluster (default): Namespace, ServiceAccount, ClusterRole and ClusterRoleBinding (the
//! live cluster facts: get/list/watch on nodes, namespaces and runtimeclasses, list/watch on
//! gmsacredentialspecs.windows.k8s.io; not with
//! `--cluster-facts off`), a Role and RoleBinding with `get` on exactly the Secrets of
//! `registry.pullSecrets` (when the configuration looks images up), ConfigMap (`winlint.yaml`), TLS Secret, Deployment, Service,
//! PodDisruptionBudget and the two webhook configurations, with a CA and serving certificate
//! generated on the spot (rcgen, ring) and the CA as `caBundle`.
//!
//! Out-of-cluster (`--url https://host:port`): only the webhook configurations, pointing at the
//! URL. The serving certificate and key for that host are written to `--cert-dir` (or the CA of
//! `--ca-bundle` is used when the certificate already exists), ready for
//! `winlint serve --tls-cert … --tls-key …`. Certificates already in `--cert-dir` are kept
//! (their CA stays the caBundle) unless `--rotate-certs`.
//!
//! The webhook configurations are the same as the Helm chart's: `sideEffects: None`,
//! `timeoutSeconds: 5`, `matchPolicy: Equivalent`, `reinvocationPolicy: IfNeeded` (mutating),
//! a namespaceSelector that skips kube-system, winlint's own namespace and namespaces labelled
//! `winlint.io/ignore=true` (so exempt namespaces cost the API server no call). One mutating
//! webhook (`/mutate`) and one validating webhook (`/validate`): the namespace facts the rules
//! need (Pod Security level, `winlint.io/default-os`) come from the cluster facts `winlint
//! serve` watches. A config with `webhook.mutate: false` gets no mutating webhook (and its
//! `/validate` then judges workload templates as written).

mod cert_dir;

use std::io::Write;
use std::path::PathBuf;

use crate::model::labels::{ARCH_LABEL, EXEMPT_NAMESPACE_LABEL, OS_LABEL};
use crate::server::FactsMode;
pub use crate::source::emit::to_yaml;
use base64::Engine as _;
use serde_json::{Value, json};

/// Options of `winlint manifests`.
#[derive(Debug, Clone, clap::Args)]
pub struct ManifestsArgs {
    /// Namespace to install into (the chart's documented namespace too).
    #[arg(long, default_value = DEFAULT_NAMESPACE)]
    pub namespace: String,
    /// Container image of the webhook.
    #[arg(long, default_value = concat!("ghcr.io/winlint/winlint:", env!("CARGO_PKG_VERSION")))]
    pub image: String,
    /// Webhook running outside the cluster at this URL (`https://host:port`): print only the
    /// webhook configurations.
    #[arg(long, value_name = "URL")]
    pub url: Option<String>,
    /// With --url: PEM CA that signed the existing serving certificate (else one is generated
    /// and written to --cert-dir).
    #[arg(long, value_name = "FILE")]
    pub ca_bundle: Option<PathBuf>,
    /// With --url: where the ca.crt, tls.crt and tls.key are kept: generated when absent, reused
    /// when present (the caBundle stays the one registered).
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub cert_dir: PathBuf,
    /// With --url: replace the certificates of --cert-dir with new ones (a new CA: re-apply the
    /// printed configurations, or the API server keeps the old caBundle and cannot call serve).
    #[arg(long)]
    pub rotate_certs: bool,
    /// `winlint.yaml` to put into the ConfigMap (default: an empty config = built-in defaults).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// failurePolicy of both webhooks: Ignore (never block pod creation) or Fail.
    #[arg(long, default_value = "Ignore", value_parser = ["Ignore", "Fail"])]
    pub failure_policy: String,
    /// Webhook replicas.
    #[arg(long, default_value_t = 2)]
    pub replicas: u32,
    /// Validity of the generated serving certificate, in days.
    #[arg(long, default_value_t = 365)]
    pub cert_validity_days: u32,
    /// Live cluster facts (`off`: no ClusterRole, `winlint serve --cluster-facts off`).
    #[arg(long, value_enum, default_value_t = FactsMode::On)]
    pub cluster_facts: FactsMode,
    /// `webhook.enforcement` of the ConfigMap's winlint.yaml (the chart's `webhook.enforcement`):
    /// deny, or warn (admit, and return the denial as warnings: the rollout mode). Overrides
    /// the --config file's value; default: the file's, else deny. `winlint serve` reloads the
    /// ConfigMap when it changes: no restart to switch modes.
    #[arg(long, value_parser = ["deny", "warn"], conflicts_with = "url")]
    pub enforcement: Option<String>,
}

impl ManifestsArgs {
    /// Defaults (for embedding and tests).
    pub fn new() -> Self {
        ManifestsArgs {
            namespace: DEFAULT_NAMESPACE.into(),
            image: concat!("ghcr.io/winlint/winlint:", env!("CARGO_PKG_VERSION")).into(),
            url: None,
            ca_bundle: None,
            cert_dir: PathBuf::from("."),
            rotate_certs: false,
            config: None,
            failure_policy: "Ignore".into(),
            replicas: 2,
            cert_validity_days: 365,
            cluster_facts: FactsMode::On,
            enforcement: None,
        }
    }
}

impl Default for ManifestsArgs {
    fn default() -> Self {
        Self::new()
    }
}

/// A generated CA and a serving certificate it signed (PEM).
#[derive(Debug, Clone)]
pub struct GeneratedTls {
    pub ca_pem: String,
    pub cert_pem: String,
    pub key_pem: String,
}

/// Why the manifests cannot be produced.
#[derive(Debug, thiserror::Error)]
pub enum ManifestsError {
    #[error("generating certificates: {0}")]
    Certificates(rcgen::Error),
    #[error("name {name:?}: {source}")]
    Name { name: String, source: rcgen::Error },
    #[error("--url {0:?}: must start with https:// (the API server only calls webhooks over TLS)")]
    UrlScheme(String),
    #[error("--url {0:?}: no host")]
    UrlHost(String),
    /// A file (named by its flag).
    #[error("{what}: {source}")]
    Io {
        what: String,
        source: std::io::Error,
    },
    #[error(transparent)]
    Config(#[from] crate::config::ConfigError),
    #[error(transparent)]
    Issue(#[from] crate::certs::issue::IssueError),
    /// `--cert-dir` holds certificates that cannot be kept.
    #[error("--cert-dir {dir}: {problem}; fix it, or pass --rotate-certs to replace them")]
    CertDir { dir: String, problem: String },
}

/// `map_err` for an I/O error on `what`.
fn io(what: String) -> impl FnOnce(std::io::Error) -> ManifestsError {
    move |source| ManifestsError::Io { what, source }
}

/// Generate a CA and a serving certificate for `names` (DNS names or IP addresses), valid for
/// `days` days from yesterday.
pub fn generate_tls(names: &[String], days: u32) -> Result<GeneratedTls, ManifestsError> {
    use crate::certs::issue::{new_ca, serving};
    let day = std::time::Duration::from_secs(86_400);
    let validity = day * days.max(1);
    // The CA outlives the serving certificate by a year.
    let ca = new_ca(validity + day * 365)?;
    let leaf = serving(&ca.key, names, validity)?;
    Ok(GeneratedTls {
        ca_pem: ca.cert,
        cert_pem: leaf.cert,
        key_pem: leaf.key,
    })
}

/// Name of every object winlint installs.
pub const NAME: &str = "winlint";
/// Name of the webhook configurations `--url` prints (a webhook run outside the cluster while
/// trying winlint): not the chart's (named after the release, `winlint` for `helm install
/// winlint`), so that `helm install` afterwards does not fail on objects it does not own.
pub const DEV_NAME: &str = "winlint-dev";
/// The namespace `winlint manifests` installs into by default, and the one the chart's README
/// installs the release into.
pub const DEFAULT_NAMESPACE: &str = "winlint-system";
/// Port of the webhook container (HTTPS) and of its metrics/health listener (HTTP).
pub const WEBHOOK_PORT: u16 = 8443;
pub const METRICS_PORT: u16 = 9090;
/// The architectures of the published image (`kubernetes.io/arch` names): the ones
/// scripts/dist.sh builds; the Deployment's pods are placed only on nodes of these.
pub const IMAGE_ARCHITECTURES: [&str; 2] = ["amd64", "arm64"];

/// The namespaceSelector of both webhooks: not kube-system, not winlint's own namespace, not
/// namespaces labelled `winlint.io/ignore=true`.
pub fn namespace_selector(namespace: &str) -> Value {
    json!({"matchExpressions": [
        {"key": "kubernetes.io/metadata.name", "operator": "NotIn",
         "values": ["kube-system", namespace]},
        {"key": EXEMPT_NAMESPACE_LABEL, "operator": "NotIn", "values": ["true"]},
    ]})
}

/// The resources the validating webhook sees: Pods (and ephemeral containers) and every
/// pod-bearing workload kind.
pub fn validating_rules() -> Value {
    let ops = json!(["CREATE", "UPDATE"]);
    json!([
        {"apiGroups": [""], "apiVersions": ["v1"], "operations": ops,
         "resources": ["pods", "pods/ephemeralcontainers"], "scope": "Namespaced"},
        {"apiGroups": [""], "apiVersions": ["v1"], "operations": ops,
         "resources": ["replicationcontrollers", "podtemplates"], "scope": "Namespaced"},
        {"apiGroups": ["apps"], "apiVersions": ["v1"], "operations": ops,
         "resources": ["deployments", "replicasets", "statefulsets", "daemonsets"],
         "scope": "Namespaced"},
        {"apiGroups": ["batch"], "apiVersions": ["v1"], "operations": ops,
         "resources": ["jobs", "cronjobs"], "scope": "Namespaced"},
    ])
}

/// The resources the mutating webhook sees: CREATE of Pods only (shared/rules.md §3).
pub fn mutating_rules() -> Value {
    json!([{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"],
            "resources": ["pods"], "scope": "Namespaced"}])
}

/// The two webhook configurations. `client_config(path)` gives the clientConfig for a path.
/// The webhooks' `timeoutSeconds`.
pub const WEBHOOK_TIMEOUT_SECONDS: u32 = 5;

/// `--request-timeout` for a webhook registered with `timeout_seconds`: 80 % of it (the same
/// share `winlint serve` takes of the API server's `?timeout=`, and the chart's derivation).
pub fn request_timeout_for(timeout_seconds: u32) -> String {
    format!("{}", f64::from(timeout_seconds) * 0.8)
}

pub fn webhook_configurations(
    name: &str,
    namespace: &str,
    failure_policy: &str,
    client_config: impl Fn(&str) -> Value,
) -> Vec<Value> {
    let labels = json!({"app.kubernetes.io/name": NAME});
    let common = |path: &str| {
        json!({
            "clientConfig": client_config(path),
            "admissionReviewVersions": ["v1", "v1beta1"],
            "sideEffects": "None",
            "timeoutSeconds": WEBHOOK_TIMEOUT_SECONDS,
            "failurePolicy": failure_policy,
            "matchPolicy": "Equivalent",
            "namespaceSelector": namespace_selector(namespace),
        })
    };
    let mut mutating = common("/mutate");
    // audit and --cluster find the webhook by this name (cluster::webhooks).
    mutating["name"] = crate::cluster::webhooks::MUTATING_WEBHOOK.into();
    mutating["rules"] = mutating_rules();
    mutating["reinvocationPolicy"] = "IfNeeded".into();
    let mut validating = common("/validate");
    validating["name"] = "validate.winlint.io".into();
    validating["rules"] = validating_rules();
    vec![
        json!({"apiVersion": "admissionregistration.k8s.io/v1",
               "kind": "MutatingWebhookConfiguration",
               "metadata": {"name": name, "labels": labels}, "webhooks": [mutating]}),
        json!({"apiVersion": "admissionregistration.k8s.io/v1",
               "kind": "ValidatingWebhookConfiguration",
               "metadata": {"name": name, "labels": labels}, "webhooks": [validating]}),
    ]
}

/// The namespace label of the enforced Pod Security level.
pub use crate::model::labels::PSA_ENFORCE_LABEL;

/// What the live cluster facts read (`winlint serve` watches them): exactly these, with get,
/// list and watch.
pub fn cluster_facts_rules() -> Value {
    let verbs = json!(["get", "list", "watch"]);
    json!([
        {"apiGroups": [""], "resources": ["nodes", "namespaces"], "verbs": verbs},
        {"apiGroups": ["node.k8s.io"], "resources": ["runtimeclasses"], "verbs": verbs},
        // The names of the GMSACredentialSpecs (WIN110), by metadata list and watch; a cluster
        // without the CRD answers 404 and the rule stays silent.
        {"apiGroups": ["windows.k8s.io"], "resources": ["gmsacredentialspecs"],
         "verbs": ["list", "watch"]},
        // Its own webhook configurations, to check their caBundle (`serve
        // --webhook-configuration`).
        {"apiGroups": ["admissionregistration.k8s.io"],
         "resources": ["mutatingwebhookconfigurations", "validatingwebhookconfigurations"],
         "resourceNames": [NAME], "verbs": ["get"]},
    ])
}

/// Everything to install the webhook in a cluster (the `tls` certificate must be valid for the
/// Service's DNS names).
/// `mutates`: whether to register the mutating webhook (the configuration's `webhook.mutate`);
/// `pull_secrets`: the Secrets `serve` reads (`registry.pullSecrets`, when lookups are on).
pub fn in_cluster(
    args: &ManifestsArgs,
    config_yaml: &str,
    mutates: bool,
    pull_secrets: &[String],
    tls: &GeneratedTls,
) -> Vec<Value> {
    let ns = args.namespace.as_str();
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s.as_bytes());
    let labels = json!({"app.kubernetes.io/name": NAME, "app.kubernetes.io/instance": NAME});
    let meta = |name: &str| json!({"name": name, "namespace": ns, "labels": labels});
    let mut out = vec![
        json!({"apiVersion": "v1", "kind": "Namespace",
               "metadata": {"name": ns, "labels": {
                   EXEMPT_NAMESPACE_LABEL: "true",
                   PSA_ENFORCE_LABEL: "restricted"}}}),
        json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": meta(NAME),
               "automountServiceAccountToken": false}),
    ];
    if args.cluster_facts == FactsMode::On {
        let cluster_meta = json!({"name": NAME, "labels": labels});
        out.push(
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
               "metadata": cluster_meta, "rules": cluster_facts_rules()}),
        );
        out.push(json!({"apiVersion": "rbac.authorization.k8s.io/v1",
               "kind": "ClusterRoleBinding", "metadata": cluster_meta,
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                           "name": NAME},
               "subjects": [{"kind": "ServiceAccount", "name": NAME, "namespace": ns}]}));
    }
    if !pull_secrets.is_empty() {
        // `get` on exactly the named Secrets of its own namespace: serve re-reads them by
        // name, never lists Secrets.
        let name = format!("{NAME}-pull-secrets");
        out.push(
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
               "metadata": meta(&name),
               "rules": [{"apiGroups": [""], "resources": ["secrets"],
                          "resourceNames": pull_secrets, "verbs": ["get"]}]}),
        );
        out.push(
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
               "metadata": meta(&name),
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                           "name": name},
               "subjects": [{"kind": "ServiceAccount", "name": NAME, "namespace": ns}]}),
        );
    }
    out.extend([
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta(NAME),
               "data": {"winlint.yaml": config_yaml}}),
        json!({"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/tls",
               "metadata": meta("winlint-tls"),
               "data": {"tls.crt": b64(&tls.cert_pem), "tls.key": b64(&tls.key_pem),
                        "ca.crt": b64(&tls.ca_pem)}}),
        deployment(args, &labels, !pull_secrets.is_empty()),
        json!({"apiVersion": "v1", "kind": "Service", "metadata": meta(NAME),
               "spec": {"selector": labels, "ports": [
                   {"name": "https", "port": 443, "targetPort": "https", "protocol": "TCP"},
                   {"name": "metrics", "port": METRICS_PORT, "targetPort": "metrics", "protocol": "TCP"}]}}),
    ]);
    // minAvailable 1 over a single replica forbids its eviction and stalls every node drain.
    if args.replicas > 1 {
        out.push(
            json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": meta(NAME),
                   "spec": {"minAvailable": 1, "selector": {"matchLabels": labels}}}),
        );
    }
    let ca = b64(&tls.ca_pem);
    out.extend(
        webhook_configurations(NAME, ns, &args.failure_policy, |path| {
            json!({"service": {"name": NAME, "namespace": ns, "path": path, "port": 443},
                   "caBundle": ca})
        })
        .into_iter()
        .filter(|w| mutates || w["kind"] != "MutatingWebhookConfiguration"),
    );
    out
}

fn deployment(args: &ManifestsArgs, labels: &Value, pull_secrets: bool) -> Value {
    let ns = args.namespace.as_str();
    let facts = args.cluster_facts == FactsMode::On;
    let mut serve_args = vec![
        "serve".to_string(),
        "--listen".into(),
        format!("0.0.0.0:{WEBHOOK_PORT}"),
        "--tls-cert".into(),
        "/tls/tls.crt".into(),
        "--tls-key".into(),
        "/tls/tls.key".into(),
        "--config".into(),
        "/config/winlint.yaml".into(),
        "--metrics-listen".into(),
        format!("0.0.0.0:{METRICS_PORT}"),
        "--log-format".into(),
        "json".into(),
        "--shutdown-delay".into(),
        "5".into(),
        // Derived from the webhooks' timeoutSeconds: answered (per webhook.onError when the
        // evaluation cannot finish) before the API server gives up (issue 15).
        "--request-timeout".into(),
        request_timeout_for(WEBHOOK_TIMEOUT_SECONDS),
    ];
    if facts {
        serve_args.extend(["--webhook-configuration".into(), NAME.into()]);
    } else {
        serve_args.extend(["--cluster-facts".into(), "off".into()]);
    }
    if pull_secrets {
        serve_args.extend(["--pull-secrets-namespace".into(), ns.to_string()]);
    }
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": NAME, "namespace": ns, "labels": labels},
        "spec": {
            "replicas": args.replicas,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "serviceAccountName": NAME,
                    // The live cluster facts and the pull secrets read the API server with
                    // the ServiceAccount.
                    "automountServiceAccountToken": facts || pull_secrets,
                    "nodeSelector": {OS_LABEL: "linux"},
                    // Only where the image has a binary (scripts/dist.sh builds these).
                    "affinity": {"nodeAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                            {"matchExpressions": [{"key": ARCH_LABEL, "operator": "In",
                                                   "values": IMAGE_ARCHITECTURES}]}]}},
                        "podAntiAffinity": {
                        "preferredDuringSchedulingIgnoredDuringExecution": [{
                            "weight": 100,
                            "podAffinityTerm": {
                                "topologyKey": "kubernetes.io/hostname",
                                "labelSelector": {"matchLabels": labels}}}]}},
                    "securityContext": {"runAsNonRoot": true, "runAsUser": 65532,
                        "runAsGroup": 65532, "seccompProfile": {"type": "RuntimeDefault"}},
                    "terminationGracePeriodSeconds": 30,
                    "containers": [{
                        "name": NAME,
                        "image": args.image,
                        "imagePullPolicy": "IfNotPresent",
                        "args": serve_args,
                        "ports": [
                            {"name": "https", "containerPort": WEBHOOK_PORT, "protocol": "TCP"},
                            {"name": "metrics", "containerPort": METRICS_PORT, "protocol": "TCP"}],
                        "readinessProbe": {"httpGet": {"path": "/readyz", "port": "metrics"},
                            "periodSeconds": 5},
                        "livenessProbe": {"httpGet": {"path": "/healthz", "port": "metrics"},
                            "periodSeconds": 10},
                        "resources": {"requests": {"cpu": "50m", "memory": "64Mi"},
                                      "limits": {"memory": "256Mi"}},
                        "securityContext": {"allowPrivilegeEscalation": false,
                            "readOnlyRootFilesystem": true,
                            "capabilities": {"drop": ["ALL"]}},
                        "volumeMounts": [
                            {"name": "tls", "mountPath": "/tls", "readOnly": true},
                            {"name": "config", "mountPath": "/config", "readOnly": true}],
                    }],
                    "volumes": [
                        {"name": "tls", "secret": {"secretName": "winlint-tls"}},
                        {"name": "config", "configMap": {"name": NAME}}],
                }
            }
        }
    })
}

/// The webhook configurations for a webhook at `url` (out of cluster), with `ca_pem` as
/// caBundle.
pub fn out_of_cluster(
    url: &str,
    namespace: &str,
    failure_policy: &str,
    mutates: bool,
    ca_pem: &str,
) -> Vec<Value> {
    let ca = base64::engine::general_purpose::STANDARD.encode(ca_pem.as_bytes());
    let base = url.trim_end_matches('/').to_string();
    webhook_configurations(
        DEV_NAME,
        namespace,
        failure_policy,
        |path| json!({"url": format!("{base}{path}"), "caBundle": ca}),
    )
    .into_iter()
    .filter(|w| mutates || w["kind"] != "MutatingWebhookConfiguration")
    .collect()
}

/// The host of an `https://host:port[/…]` URL (IPv6 in brackets allowed).
pub fn url_host(url: &str) -> Result<String, ManifestsError> {
    let rest = url
        .strip_prefix("https://")
        .ok_or_else(|| ManifestsError::UrlScheme(url.to_string()))?;
    let authority = rest.split('/').next().unwrap_or("");
    let host = if let Some(v6) = authority.strip_prefix('[') {
        v6.split(']').next().unwrap_or("").to_string()
    } else {
        authority.split(':').next().unwrap_or("").to_string()
    };
    if host.is_empty() {
        return Err(ManifestsError::UrlHost(url.to_string()));
    }
    Ok(host)
}

/// The default `winlint.yaml` of the ConfigMap.
pub const DEFAULT_CONFIG: &str = "# winlint.yaml: target cluster and policy (see `winlint explain`).\n\
target: {}\n\
webhook:\n  onError: allow\n";

/// `text` (a winlint.yaml) with `webhook.enforcement` set to `mode` (`--enforcement`):
/// re-emitted, so the file's comments are not kept.
fn with_enforcement(text: &str, name: &str, mode: &str) -> Result<String, ManifestsError> {
    let mut doc = crate::source::load(text)
        .map_err(|e| crate::config::ConfigError::Syntax {
            file: name.to_string(),
            line: e.line,
            message: e.message,
        })?
        .into_iter()
        .next()
        .map_or(Value::Null, |d| d.value);
    if !doc.is_object() {
        doc = json!({});
    }
    if !doc["webhook"].is_object() {
        doc["webhook"] = json!({});
    }
    doc["webhook"]["enforcement"] = mode.into();
    Ok(format!(
        "# winlint.yaml: target cluster and policy (see `winlint explain`); webhook.enforcement \
         from winlint manifests --enforcement.\n{}",
        to_yaml(&[doc]).trim_start_matches("---\n")
    ))
}

/// Produce the manifests as a YAML string; with `--url`, writes the generated certificate files.
pub fn render(args: &ManifestsArgs) -> Result<String, ManifestsError> {
    let days = args.cert_validity_days;
    let config = match &args.config {
        Some(p) => {
            let text =
                std::fs::read_to_string(p).map_err(io(format!("--config {}", p.display())))?;
            let parsed = crate::config::Config::from_yaml(&text, &p.display().to_string())?;
            let r = &parsed.policy.registry;
            let pull_secrets = if r.mode == crate::config::RegistryMode::Off {
                Vec::new()
            } else {
                r.pull_secrets.clone()
            };
            (text, parsed.policy.pod_mutation, pull_secrets)
        }
        None => (DEFAULT_CONFIG.to_string(), true, Vec::new()),
    };
    let (mut config, mutates, pull_secrets) = config;
    if let Some(mode) = &args.enforcement {
        let name = args.config.as_ref().map_or_else(
            || "the default winlint.yaml".into(),
            |p| p.display().to_string(),
        );
        config = with_enforcement(&config, &name, mode)?;
        crate::config::Config::from_yaml(&config, &name)?;
    }
    if let Some(url) = &args.url {
        let host = url_host(url)?;
        let kept = match (&args.ca_bundle, args.rotate_certs) {
            (None, false) => cert_dir::existing(&args.cert_dir, &host)?,
            _ => None,
        };
        let (ca, note) = match &args.ca_bundle {
            Some(p) => (
                std::fs::read_to_string(p).map_err(io(format!("--ca-bundle {}", p.display())))?,
                format!("# caBundle from {}\n", p.display()),
            ),
            None if kept.is_some() => {
                let ca = kept.unwrap_or_default();
                let d = args.cert_dir.display();
                (
                    ca,
                    format!(
                        "# Existing certificate for {host} in {d} kept (its ca.crt is the caBundle); \
                         --rotate-certs makes new ones\n"
                    ),
                )
            }
            None => {
                let tls = generate_tls(std::slice::from_ref(&host), days)?;
                std::fs::create_dir_all(&args.cert_dir)
                    .map_err(io(format!("--cert-dir {}", args.cert_dir.display())))?;
                let write = |name: &str, text: &str| {
                    let p = args.cert_dir.join(name);
                    std::fs::write(&p, text).map_err(io(p.display().to_string()))
                };
                write("ca.crt", &tls.ca_pem)?;
                write("tls.crt", &tls.cert_pem)?;
                write("tls.key", &tls.key_pem)?;
                let d = args.cert_dir.display();
                (
                    tls.ca_pem,
                    format!(
                        "# Serving certificate for {host} written to {d}/tls.crt and {d}/tls.key; run:\n\
                         #   winlint serve --listen 0.0.0.0:PORT --tls-cert {d}/tls.crt --tls-key {d}/tls.key \\\n\
                         #     --kubeconfig ~/.kube/config --webhook-configuration {DEV_NAME}\n\
                         # (--kubeconfig: live cluster facts, get/list/watch on nodes, namespaces, runtimeclasses;\n\
                         #  --webhook-configuration: checks that the caBundle below verifies the certificate)\n"
                    ),
                )
            }
        };
        let docs = out_of_cluster(url, &args.namespace, &args.failure_policy, mutates, &ca);
        return Ok(format!(
            "# winlint webhook configurations for {url} (winlint manifests --url), named {DEV_NAME}\n\
             # (the chart's are named after its release: `helm install` later does not meet these).\n\
             # Remove them when done: kubectl delete mutatingwebhookconfiguration,validatingwebhookconfiguration {DEV_NAME}\n{note}{}",
            to_yaml(&docs)
        ));
    }
    let ns = &args.namespace;
    let names = [
        NAME.to_string(),
        format!("{NAME}.{ns}"),
        format!("{NAME}.{ns}.svc"),
        format!("{NAME}.{ns}.svc.cluster.local"),
    ];
    let tls = generate_tls(&names, days)?;
    let docs = in_cluster(args, &config, mutates, &pull_secrets, &tls);
    Ok(format!(
        "# winlint admission webhook: kubectl apply -f this file.\n\
         # Generated by `winlint manifests`; the CA key was not kept: re-run to rotate.\n{}",
        to_yaml(&docs)
    ))
}

/// `winlint manifests`: print the YAML. Returns the exit code.
pub fn manifests(args: ManifestsArgs) -> i32 {
    match render(&args) {
        Ok(yaml) => {
            let mut out = std::io::stdout().lock();
            let res = out.write_all(yaml.as_bytes()).and_then(|_| out.flush());
            crate::process::finish_output(res, 0)
        }
        Err(e) => {
            eprintln!("winlint manifests: {e}");
            2
        }
    }
}

/// The independent YAML reader the chart and manifests integration tests use, for checking the
/// emitter.
#[cfg(test)]
#[path = "../tests/yaml_support/mod.rs"]
mod yaml_support;

#[cfg(test)]
mod tests {
    use super::yaml_support::yaml_docs;
    use super::*;

    #[test]
    fn yaml_round_trips_through_the_loader() {
        let v = json!({"a": {"b": ["x", "yes", "0644", "", "multi\nline\n", 5, true, null]},
                       "kubernetes.io/os": "windows", "e": {}, "f": [], "g": "C:\\data"});
        let text = to_yaml(&[v.clone(), json!({"k": "v"})]);
        let docs = yaml_docs(&text);
        assert_eq!(docs.len(), 2);
        assert_eq!(docs[0], v, "{text}");
    }

    #[test]
    fn url_hosts() {
        assert_eq!(url_host("https://10.0.0.5:8443").unwrap(), "10.0.0.5");
        assert_eq!(url_host("https://[::1]:8443/x").unwrap(), "::1");
        assert_eq!(url_host("https://dev.local").unwrap(), "dev.local");
        assert!(url_host("http://x").is_err());
    }
}
