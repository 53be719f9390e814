//! Target (the cluster the manifests are meant for) and policy (what to report and fix).
//!
//! One file, `winlint.yaml`, read by the CLI (`--config`) and by the webhook (mounted from a
//! ConfigMap), overridable by flags. Same file, same meaning.

pub mod discover;

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::model::Severity;
use crate::model::labels::EXEMPT_NAMESPACE_LABEL;
use crate::model::meta::UnknownSeverity;
use crate::model::platform::UnknownPlatform;
use crate::model::target::TaintError;
/// The target's types, at the path they had before [`crate::model`] held them.
pub use crate::model::target::{KubeVersion, Runtime, Taint, Target};
use crate::model::windows::{self, Isolation};

/// What the webhook may change (shared/rules.md §3).
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct MutationPolicy {
    /// Also mutate workload templates (Deployments, …), not only Pods. Off: fights GitOps.
    pub workloads: bool,
    /// M5: request Hyper-V isolation: never (`false`), for every Windows pod (`true`), or only
    /// for a pod whose images no Windows node it can select runs under process isolation and a
    /// Hyper-V RuntimeClass can (`auto`).
    pub hyperv: HyperV,
    /// M6: add the `kubernetes.io/os=windows` pod label.
    pub pod_os_label: bool,
    /// M4 with stripping of Linux-only fields: the opt-in fixes of the rules recorded as
    /// `linuxOnlyFields` (WIN101–WIN103) are applied, so that `spec.os` can be added.
    pub strip_linux_only_fields: bool,
    /// Pin pods to Linux (`kubernetes.io/os=linux`): never (`off`), every OS-unknown pod (`on`,
    /// the old `true`), or only a pod whose images have no Windows variant and that can land on
    /// a Windows node (`auto`, the default: WIN011's fix).
    pub linux_guard: LinuxGuard,
    /// Mutate pods only probably Windows (off: only definite ones).
    pub probable: bool,
}

/// A switch written as a boolean or a word (`mutation.hyperv`, `mutation.linuxGuard`).
#[derive(Deserialize)]
#[serde(untagged)]
enum Raw {
    Bool(bool),
    Str(String),
}

/// `mutation.hyperv`: `false`, `true` or `auto`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum HyperV {
    #[default]
    Off,
    /// Every Windows pod gets the configured Hyper-V RuntimeClass (or, before 1.21, the
    /// isolation annotation).
    On,
    /// Only pods that need it to run, with a Hyper-V RuntimeClass that the cluster has.
    Auto,
}

impl<'de> Deserialize<'de> for HyperV {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Raw::deserialize(d)? {
            Raw::Bool(false) => Ok(HyperV::Off),
            Raw::Bool(true) => Ok(HyperV::On),
            Raw::Str(s) if s == "auto" => Ok(HyperV::Auto),
            Raw::Str(s) if s == "true" => Ok(HyperV::On),
            Raw::Str(s) if s == "false" => Ok(HyperV::Off),
            Raw::Str(s) => Err(serde::de::Error::custom(format!(
                "mutation.hyperv {s:?}: expected true, false or auto"
            ))),
        }
    }
}

impl Serialize for HyperV {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            HyperV::Off => s.serialize_bool(false),
            HyperV::On => s.serialize_bool(true),
            HyperV::Auto => s.serialize_str("auto"),
        }
    }
}

/// `mutation.linuxGuard`: `off`, `on` or `auto` (`false` and `true` still read as off and on).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum LinuxGuard {
    Off,
    /// Every OS-unknown pod is pinned to Linux nodes, whatever its images.
    On,
    /// Only pods WIN011 reports: every image known to have no Windows variant (registry facts,
    /// or the known Linux-only images), no OS pin, and a Windows node of the target (observed,
    /// else configured) they can land on. Multi-OS and unknown images are never pinned.
    #[default]
    Auto,
}

impl<'de> Deserialize<'de> for LinuxGuard {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Raw::deserialize(d)? {
            Raw::Bool(false) => Ok(LinuxGuard::Off),
            Raw::Bool(true) => Ok(LinuxGuard::On),
            Raw::Str(s) => match s.as_str() {
                "auto" => Ok(LinuxGuard::Auto),
                "on" | "true" => Ok(LinuxGuard::On),
                "off" | "false" => Ok(LinuxGuard::Off),
                _ => Err(serde::de::Error::custom(format!(
                    "mutation.linuxGuard {s:?}: expected auto, on or off"
                ))),
            },
        }
    }
}

impl Serialize for LinuxGuard {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            LinuxGuard::Off => s.serialize_bool(false),
            LinuxGuard::On => s.serialize_bool(true),
            LinuxGuard::Auto => s.serialize_str("auto"),
        }
    }
}

/// What the webhook answers when it cannot evaluate an object.
#[derive(Debug, Clone, Copy, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum OnError {
    #[default]
    Allow,
    Deny,
}

/// What the webhook does with a pod its rules would deny (`webhook.enforcement`, overridden per
/// namespace by the label [`crate::model::labels::ENFORCEMENT_NAMESPACE_LABEL`]).
#[derive(Debug, Clone, Copy, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Enforcement {
    /// Deny it (the default).
    #[default]
    Deny,
    /// Admit it, and return the denial as warnings (counted in `winlint_would_deny_total`):
    /// the rollout mode, like Kyverno's `Audit` and Gatekeeper's `warn`.
    Warn,
}

impl Enforcement {
    /// The value of the namespace label: `warn` or `deny`, anything else is no override.
    pub fn from_label(v: &str) -> Option<Enforcement> {
        match v {
            "warn" => Some(Enforcement::Warn),
            "deny" => Some(Enforcement::Deny),
            _ => None,
        }
    }
}

/// Report and fix policy.
#[derive(Debug, Clone, Default)]
pub struct Policy {
    /// Per-rule severity override (`None` = disabled). Keys are rule IDs.
    pub overrides: BTreeMap<String, Option<Severity>>,
    /// Rules whose opt-in fixes may be applied (IDs).
    pub fix_opt_in: BTreeSet<String>,
    /// Apply safe fixes at all (webhook `autofix: safe`, CLI `--fix`).
    pub safe_fixes: bool,
    pub mutation: MutationPolicy,
    pub on_error: OnError,
    /// Namespaces label that exempts a namespace (webhook).
    pub exempt_namespace_label: String,
    /// The mutating webhook for Pods is registered (`webhook.mutate`, default true), so
    /// `/validate` judges a workload by the pods it will create: its template after the
    /// mutations that webhook will apply. False: templates are judged as written.
    pub pod_mutation: bool,
    /// The linter (`winlint audit`, `winlint --cluster`) judges workloads by the pods
    /// winlint's mutating webhook gives them, as `/validate` does
    /// ([`crate::engine::judge::lint_judged`]): set when that webhook is found in the cluster
    /// (or `audit --assume-webhook`). Off: as written. The webhook itself reads `pod_mutation`.
    pub judge_as_pods: bool,
    /// Who may exempt a pod with `winlint.io/ignore` (`exemptions:`).
    pub exemptions: ExemptionPolicy,
    /// Deny, or only warn, what the rules would deny (`webhook.enforcement`).
    pub enforcement: Enforcement,
    /// `registry:`: how `serve` looks images up (issue 18).
    pub registry: RegistryFile,
}

/// `exemptions:` in `winlint.yaml`: what an administrator lets pod authors exempt with the
/// `winlint.io/ignore` annotation (issue 15: any pod author could turn winlint off for their
/// pod). Same meaning in the CLI and the webhook; the default honours every annotation.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct ExemptionsFile {
    /// `allow` (default): the annotation is honoured (within the limits below); `deny`: never.
    pub pod_annotation: Option<OnError>,
    /// Only in these namespaces (exact names, or a prefix ending in `*`); empty: all.
    pub namespaces: Vec<String>,
    /// Only these rules may be exempted (IDs or names; `all` exempts just these); empty: any.
    pub rules: Vec<String>,
    /// Honoured only with a non-empty `winlint.io/ignore-reason`.
    pub require_reason: bool,
}

/// [`ExemptionsFile`] resolved: rule keys are rule IDs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExemptionPolicy {
    pub pod_annotation: bool,
    pub namespaces: Vec<String>,
    /// Rule IDs; empty: any rule.
    pub rules: BTreeSet<String>,
    pub require_reason: bool,
}

impl Default for ExemptionPolicy {
    fn default() -> Self {
        ExemptionPolicy {
            pod_annotation: true,
            namespaces: Vec::new(),
            rules: BTreeSet::new(),
            require_reason: false,
        }
    }
}

/// A namespace pattern of the configuration: an exact name, or a prefix ending in `*` (`*`
/// alone: every namespace).
pub fn namespace_matches(pattern: &str, namespace: &str) -> bool {
    match pattern.strip_suffix('*') {
        Some(prefix) => namespace.starts_with(prefix),
        None => pattern == namespace,
    }
}

impl ExemptionPolicy {
    /// Whether `namespace` may use the annotation at all.
    pub fn namespace_allowed(&self, namespace: &str) -> bool {
        self.namespaces.is_empty()
            || self
                .namespaces
                .iter()
                .any(|n| namespace_matches(n, namespace))
    }
    /// Whether the rule `id` may be exempted.
    pub fn rule_allowed(&self, id: &str) -> bool {
        self.rules.is_empty() || self.rules.contains(id)
    }
}

/// `registry.mode`: `serve` never looks images up (`off`, the default), looks them up behind
/// the requests (`background`: a request that meets an unknown image is judged by its name and
/// queues a lookup), or waits for them up to `syncBudgetMs` per request (`sync`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RegistryMode {
    #[default]
    Off,
    Background,
    Sync,
}

/// `mode: off` unquoted is the boolean `false` to a YAML 1.1 reader (go-yaml, and winlint's
/// kubectl-compatible loader), and the README writes it so: it reads as `off`.
impl<'de> Deserialize<'de> for RegistryMode {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Raw::deserialize(d)? {
            Raw::Bool(false) => Ok(RegistryMode::Off),
            Raw::Str(s) => match s.as_str() {
                "off" | "false" => Ok(RegistryMode::Off),
                "background" => Ok(RegistryMode::Background),
                "sync" => Ok(RegistryMode::Sync),
                _ => Err(serde::de::Error::custom(format!(
                    "registry.mode {s:?}: expected off, background or sync"
                ))),
            },
            Raw::Bool(true) => Err(serde::de::Error::custom(
                "registry.mode true: expected off, background or sync",
            )),
        }
    }
}

/// The `registry:` section of `winlint.yaml`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct RegistryFile {
    pub mode: RegistryMode,
    /// `sync`: the most one request waits for lookups, in milliseconds (default 500, at most
    /// 1000: mutating webhooks run in sequence).
    pub sync_budget_ms: Option<u64>,
    /// How long a tag's digest is trusted, in seconds (default 600).
    pub tag_ttl_seconds: Option<u64>,
    /// Image digests kept in memory (default 4096).
    pub cache_entries: Option<usize>,
    /// Registries named in the `registry` label of `winlint_registry_*` metrics besides the
    /// well-known ones (at most 64; any other registry is counted as `other`).
    pub metric_registries: Vec<String>,
    /// `serve`: Secrets of type `kubernetes.io/dockerconfigjson` (or legacy
    /// `kubernetes.io/dockercfg`) in winlint's own namespace whose credentials the lookups use,
    /// read by name (`get` on exactly these) and re-read so a rotated secret is picked up.
    pub pull_secrets: Vec<String>,
    /// The namespaces served by a pull secret without the `winlint.io/namespaces` annotation
    /// (patterns as `exemptions.namespaces`; `["*"]`: every namespace). Empty (the default):
    /// such a secret serves no namespace, so no tenant's pod reads what another team's
    /// credentials can see.
    pub pull_secrets_default_namespaces: Vec<String>,
    /// Whether a pull secret's glob keys (`*.azurecr.io`) are used (default: left out and
    /// logged). With them, a token realm gets the password only over HTTPS and on the
    /// registry's own host or one the same glob matches.
    pub allow_glob_keys: bool,
}

/// The longest `registry.syncBudgetMs` accepted.
pub const MAX_SYNC_BUDGET_MS: u64 = 1000;

/// The whole configuration: target plus policy.
#[derive(Debug, Clone)]
pub struct Config {
    pub target: Target,
    pub policy: Policy,
}

impl Default for Config {
    /// The default target and policy: safe fixes on, the rules of
    /// rules that are off by default ([`crate::model::RuleMeta::default_on`]) off.
    fn default() -> Self {
        Config {
            target: Target::default(),
            policy: Policy {
                safe_fixes: true,
                exempt_namespace_label: EXEMPT_NAMESPACE_LABEL.into(),
                overrides: crate::rules::all()
                    .iter()
                    .filter(|r| !r.meta.default_on)
                    .map(|r| (r.meta.id.to_string(), None))
                    .collect(),
                pod_mutation: true,
                judge_as_pods: false,
                ..Policy::default()
            },
        }
    }
}

/// `winlint.yaml` as written by users.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct ConfigFile {
    pub target: TargetFile,
    /// `WIN403: error`, `env-name-invalid: off` (a bare `off`/`false` is YAML 1.1's false),
    /// `WIN308: on` (a rule that is off by default, at its own severity).
    pub rules: BTreeMap<String, serde_json::Value>,
    pub fix: FixFile,
    pub mutation: MutationPolicy,
    pub webhook: WebhookFile,
    pub exemptions: ExemptionsFile,
    pub registry: RegistryFile,
    /// What is inside the user's own images (issue 26): `match` (a glob on the reference's
    /// normal form), `os`, `builds`, `user`, `shells`, `tools`; read before winlint's table of
    /// known images, so that offline CI judges them as the registry would.
    pub images: Vec<crate::model::image_contents::ImageEntry>,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct TargetFile {
    /// A string: an unquoted `1.30` is the number 1.3 and is refused with a hint.
    pub kubernetes_version: Option<serde_json::Value>,
    pub windows_builds: Option<Vec<String>>,
    pub isolation: Option<Isolation>,
    pub runtime: Option<Runtime>,
    pub feature_gates: BTreeMap<String, bool>,
    pub windows_taints: Option<Vec<String>>,
    pub cluster_mixed_builds: Option<bool>,
    pub check_eol: Option<bool>,
    pub hyperv_runtime_class: Option<String>,
    /// `aks`, `eks`, `gke` or `generic`: the platform's defaults for the Windows nodes.
    pub platform: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct FixFile {
    /// Apply safe fixes (default true).
    pub safe: Option<bool>,
    /// Rules whose opt-in fixes are allowed.
    pub opt_in: Vec<String>,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct WebhookFile {
    pub on_error: Option<OnError>,
    pub exempt_namespace_label: Option<String>,
    /// Whether the mutating webhook for Pods is registered (the chart's `webhook.mutate`).
    pub mutate: Option<bool>,
    /// `deny` (default) or `warn`.
    pub enforcement: Option<Enforcement>,
}

/// What the builds of `target.windowsBuilds` and `--windows-build` may be.
const BUILD_HINT: &str =
    "expected ltsc2016|ltsc2019|ltsc2022|ltsc2025, 1709, 1803, 20H2, … or 10.0.NNNNN";

/// A configuration (file or flags) that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("registry.syncBudgetMs {0}: at most 1000 (a webhook in the request path)")]
    SyncBudget(u64),
    #[error("images[{index}] ({pattern:?}): {message}")]
    Image {
        index: usize,
        pattern: String,
        message: String,
    },
    #[error("registry.pullSecrets: {0:?} is not a Secret name (a DNS subdomain)")]
    PullSecretName(String),
    #[error("unknown rule {0:?} (see `winlint rules`)")]
    UnknownRule(String),
    #[error("target.kubernetesVersion {0:?}: expected e.g. \"1.34\"")]
    KubernetesVersion(String),
    #[error(
        "target.kubernetesVersion {0}: quote it, e.g. \"1.30\" (unquoted, YAML reads 1.30 as the number 1.3)"
    )]
    UnquotedKubernetesVersion(serde_json::Value),
    #[error("Windows build {0:?}: {hint}", hint = BUILD_HINT)]
    WindowsBuild(String),
    #[error(transparent)]
    Taint(#[from] TaintError),
    #[error("target.{0}")]
    Platform(#[from] UnknownPlatform),
    #[error("--{0}")]
    PlatformFlag(UnknownPlatform),
    #[error("rules.{key}: {source}")]
    RuleSeverity {
        key: String,
        source: UnknownSeverity,
    },
    #[error("rules.{key}: {value} is not a severity (error, warning, info, on or off)")]
    RuleValue {
        key: String,
        value: serde_json::Value,
    },
    /// The file is not YAML.
    #[error("{file}:{line}: {message}")]
    Syntax {
        file: String,
        line: usize,
        message: String,
    },
    /// The file is YAML but not a `winlint.yaml` (`at`: `:LINE` of the field or value the
    /// error names, when it can be found).
    #[error("{file}{at}: {source}")]
    Schema {
        file: String,
        at: String,
        source: serde_json::Error,
    },
    /// An error in the named file.
    #[error("{file}: {source}")]
    InFile {
        file: String,
        source: Box<ConfigError>,
    },
    #[error("{path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("--kubernetes-version {0:?}: expected e.g. 1.34")]
    KubernetesVersionFlag(String),
    #[error("--windows-build: Windows build {0:?}: {hint}", hint = BUILD_HINT)]
    WindowsBuildFlag(String),
    #[error("--feature-gate {0:?}: expected Name=true")]
    FeatureGateFormat(String),
    #[error("--feature-gate {0:?}: value must be true or false")]
    FeatureGateValue(String),
}

/// Resolve a rule key (ID or name) to its ID, through the registry.
pub fn rule_id(key: &str) -> Result<&'static str, ConfigError> {
    crate::rules::find(key)
        .map(|r| r.meta.id)
        .ok_or_else(|| ConfigError::UnknownRule(key.to_string()))
}

impl Config {
    /// Apply a config file on top of `self`.
    pub fn apply_file(&mut self, f: &ConfigFile) -> Result<(), ConfigError> {
        let t = &f.target;
        match &t.kubernetes_version {
            None => {}
            Some(serde_json::Value::String(v)) => {
                self.target.pinned.kubernetes = true;
                self.target.kubernetes = KubeVersion::parse(v)
                    .ok_or_else(|| ConfigError::KubernetesVersion(v.clone()))?;
            }
            Some(v) => return Err(ConfigError::UnquotedKubernetesVersion(v.clone())),
        }
        if let Some(b) = &t.windows_builds {
            self.target.pinned.windows_builds = true;
            self.target.windows_builds = b
                .iter()
                .map(|s| {
                    windows::parse_build(s).ok_or_else(|| ConfigError::WindowsBuild(s.clone()))
                })
                .collect::<Result<_, _>>()?;
            self.target.windows_revisions = windows::revisions(b.iter().map(String::as_str));
        }
        if let Some(i) = t.isolation {
            self.target.pinned.isolation = true;
            self.target.isolation = i;
        }
        if let Some(r) = t.runtime {
            self.target.pinned.runtime = true;
            self.target.runtime = r;
        }
        self.target
            .feature_gates
            .extend(t.feature_gates.iter().map(|(k, v)| (k.clone(), *v)));
        if let Some(p) = &t.platform {
            self.target.set_platform(p.parse()?);
        }
        if let Some(ts) = &t.windows_taints {
            self.target.pinned.windows_taints = true;
            self.target.windows_taints = ts
                .iter()
                .map(|s| Taint::parse(s))
                .collect::<Result<_, _>>()?;
        }
        if let Some(m) = t.cluster_mixed_builds {
            self.target.pinned.cluster_mixed_builds = true;
            self.target.cluster_mixed_builds = m;
        }
        if let Some(e) = t.check_eol {
            self.target.check_eol = e;
        }
        if let Some(h) = &t.hyperv_runtime_class {
            self.target.hyperv_runtime_class = h.clone();
        }
        for (k, v) in &f.rules {
            let id = rule_id(k)?;
            match v {
                serde_json::Value::Bool(false) => {
                    self.policy.overrides.insert(id.to_string(), None);
                }
                serde_json::Value::Bool(true) => {
                    self.policy.overrides.remove(id);
                }
                serde_json::Value::String(s)
                    if matches!(s.to_ascii_lowercase().as_str(), "on" | "enabled" | "true") =>
                {
                    self.policy.overrides.remove(id);
                }
                serde_json::Value::String(s) => {
                    let sev = match s.to_ascii_lowercase().as_str() {
                        "off" | "disabled" | "false" | "none" => None,
                        s => Some(s.parse::<Severity>().map_err(|source| {
                            ConfigError::RuleSeverity {
                                key: k.clone(),
                                source,
                            }
                        })?),
                    };
                    self.policy.overrides.insert(id.to_string(), sev);
                }
                other => {
                    return Err(ConfigError::RuleValue {
                        key: k.clone(),
                        value: other.clone(),
                    });
                }
            }
        }
        if let Some(s) = f.fix.safe {
            self.policy.safe_fixes = s;
        }
        for k in &f.fix.opt_in {
            self.policy.fix_opt_in.insert(rule_id(k)?.to_string());
        }
        self.policy.mutation = f.mutation.clone();
        if let Some(o) = f.webhook.on_error {
            self.policy.on_error = o;
        }
        if let Some(l) = &f.webhook.exempt_namespace_label {
            self.policy.exempt_namespace_label = l.clone();
        }
        if let Some(m) = f.webhook.mutate {
            self.policy.pod_mutation = m;
        }
        let e = &f.exemptions;
        self.policy.exemptions = ExemptionPolicy {
            pod_annotation: e.pod_annotation != Some(OnError::Deny),
            namespaces: e.namespaces.clone(),
            rules: e
                .rules
                .iter()
                .map(|k| rule_id(k).map(str::to_string))
                .collect::<Result<_, _>>()?,
            require_reason: e.require_reason,
        };
        if let Some(e) = f.webhook.enforcement {
            self.policy.enforcement = e;
        }
        if f.registry
            .sync_budget_ms
            .is_some_and(|b| b > MAX_SYNC_BUDGET_MS)
        {
            return Err(ConfigError::SyncBudget(
                f.registry.sync_budget_ms.unwrap_or(0),
            ));
        }
        if let Some(bad) = f
            .registry
            .pull_secrets
            .iter()
            .find(|n| !crate::model::names::dns1123_subdomain_errors(n).is_empty())
        {
            return Err(ConfigError::PullSecretName(bad.clone()));
        }
        self.policy.registry = f.registry.clone();
        for (index, e) in f.images.iter().enumerate() {
            let bad = |message: String| ConfigError::Image {
                index,
                pattern: e.pattern.clone(),
                message,
            };
            if e.pattern.trim().is_empty() {
                return Err(bad("match: an empty pattern".into()));
            }
            if let Some(os) =
                e.os.as_deref()
                    .filter(|o| !matches!(*o, "windows" | "linux"))
            {
                return Err(bad(format!("os {os:?}: expected windows or linux")));
            }
            if let Some(b) = e.builds.iter().find(|b| windows::parse_build(b).is_none()) {
                return Err(bad(format!("builds: {b:?}: {BUILD_HINT}")));
            }
        }
        if !f.images.is_empty() {
            self.target.images = f.images.clone().into();
        }
        Ok(())
    }

    /// Parse `winlint.yaml` text (YAML or JSON).
    pub fn from_yaml(text: &str, name: &str) -> Result<Config, ConfigError> {
        let docs = crate::source::load(text).map_err(|e| ConfigError::Syntax {
            file: name.to_string(),
            line: e.line,
            message: e.message,
        })?;
        let mut cfg = Config::default();
        if let Some(doc) = docs.into_iter().next()
            && !doc.value.is_null()
        {
            let f: ConfigFile = serde_json::from_value(doc.value.clone()).map_err(|source| {
                let at = schema_line(&doc, &source.to_string())
                    .map_or_else(String::new, |l| format!(":{l}"));
                ConfigError::Schema {
                    file: name.to_string(),
                    at,
                    source,
                }
            })?;
            cfg.apply_file(&f).map_err(|e| ConfigError::InFile {
                file: name.to_string(),
                source: Box::new(e),
            })?;
        }
        Ok(cfg)
    }

    /// Defaults, then the file at `path`.
    pub fn from_file(path: &std::path::Path) -> Result<Config, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.display().to_string(),
            source,
        })?;
        Config::from_yaml(&text, &path.display().to_string())
    }
}

/// The line of what a serde error names: the key of "unknown field `x`", else the first
/// scalar written as the quoted token ("unknown variant `block`"). serde_json's errors from a
/// value carry no position; the source map has every node's.
fn schema_line(doc: &crate::source::Document, message: &str) -> Option<usize> {
    fn find(v: &serde_json::Value, at: &str, token: &str, key: bool) -> Option<String> {
        match v {
            serde_json::Value::Object(m) => m.iter().find_map(|(k, v)| {
                let p = format!("{at}/{}", crate::model::pointer::escape(k));
                if key && k == token {
                    return Some(p);
                }
                find(v, &p, token, key)
            }),
            serde_json::Value::Array(a) => a
                .iter()
                .enumerate()
                .find_map(|(i, v)| find(v, &format!("{at}/{i}"), token, key)),
            serde_json::Value::String(s) if !key && s == token => Some(at.to_string()),
            _ => None,
        }
    }
    let token = message.split('`').nth(1)?;
    let key = message.starts_with("unknown field");
    let pointer = find(&doc.value, "", token, key)?;
    Some(doc.map.node(&pointer)?.line)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schema_errors_name_their_line() {
        let e = Config::from_yaml("target: {}\nwebhook:\n  enforcement: block\n", "w.yaml")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("w.yaml:3: unknown variant `block`"), "{e}");
        let e = Config::from_yaml("webhook:\n  onError: allow\n  enforcment: warn\n", "w.yaml")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("w.yaml:3: unknown field `enforcment`"), "{e}");
    }

    #[test]
    fn declared_images() {
        let c = Config::from_yaml(
            "images:\n- match: \"contoso.azurecr.io/shop/*\"\n  os: windows\n  builds: [ltsc2022]\n  user: ContainerUser\n  shells: [cmd]\n  tools: [linux]\n",
            "w.yaml",
        )
        .expect("config");
        assert_eq!(c.target.images.len(), 1);
        assert_eq!(c.target.images[0].user.as_deref(), Some("ContainerUser"));
        for bad in [
            "images:\n- match: x\n  os: macos\n",
            "images:\n- match: x\n  builds: [ltsc2099]\n",
            "images:\n- match: \"\"\n",
            "images:\n- match: x\n  shell: [sh]\n",
        ] {
            assert!(Config::from_yaml(bad, "w.yaml").is_err(), "{bad}");
        }
    }

    #[test]
    fn kube_versions() {
        assert_eq!(
            KubeVersion::parse("v1.30.2-eks-1"),
            Some(KubeVersion::new(1, 30))
        );
        assert_eq!(KubeVersion::parse("1.9"), Some(KubeVersion::new(1, 9)));
        assert!(KubeVersion::new(1, 9) < KubeVersion::new(1, 14));
        assert_eq!(KubeVersion::parse("abc"), None);
    }

    #[test]
    fn taints() {
        let t = Taint::parse("os=windows:NoSchedule").unwrap();
        assert_eq!(t.to_string(), "os=windows:NoSchedule");
        assert_eq!(t.toleration()["operator"], "Equal");
        assert!(Taint::parse("os=windows").is_err());
        assert_eq!(Taint::parse("dedicated:NoExecute").unwrap().value, None);
    }

    /// WIN308 is off by default; `on`/`true` turns it on at its own severity, flags too.
    #[test]
    fn rules_off_by_default() {
        let off = |c: &Config| c.policy.overrides.get("WIN308") == Some(&None);
        assert!(off(&Config::default()));
        for v in ["on", "true", "enabled"] {
            let c = Config::from_yaml(&format!("rules: {{WIN308: \"{v}\"}}"), "t").unwrap();
            assert!(!off(&c), "{v}");
        }
        let c = Config::from_yaml("rules: {mountpath-not-windows-style: true}", "t").unwrap();
        assert!(!off(&c));
        let c = Config::from_yaml("rules: {WIN308: info}", "t").unwrap();
        assert_eq!(
            c.policy.overrides.get("WIN308"),
            Some(&Some(Severity::Info))
        );
        let c = Config::from_yaml("rules: {WIN408: off}", "t").unwrap();
        assert!(off(&c) && c.policy.overrides.get("WIN408") == Some(&None));
    }

    /// `registry.mode: off` as the README writes it, unquoted (a YAML 1.1 boolean), is off.
    #[test]
    fn registry_mode_off_unquoted() {
        let mode = |v: &str| {
            Config::from_yaml(&format!("registry: {{mode: {v}}}"), "t")
                .map(|c| c.policy.registry.mode)
        };
        assert_eq!(mode("off").unwrap(), RegistryMode::Off);
        assert_eq!(mode("\"off\"").unwrap(), RegistryMode::Off);
        assert_eq!(mode("background").unwrap(), RegistryMode::Background);
        assert_eq!(mode("sync").unwrap(), RegistryMode::Sync);
        assert!(mode("on").is_err());
        assert!(
            mode("fast")
                .unwrap_err()
                .to_string()
                .contains("registry.mode")
        );
    }

    /// `mutation.linuxGuard`: auto by default; the old booleans still mean on and off.
    #[test]
    fn linux_guard_values() {
        let guard = |v: &str| {
            Config::from_yaml(&format!("mutation: {{linuxGuard: {v}}}"), "t")
                .map(|c| c.policy.mutation.linux_guard)
        };
        assert_eq!(
            Config::default().policy.mutation.linux_guard,
            LinuxGuard::Auto
        );
        assert_eq!(guard("auto").unwrap(), LinuxGuard::Auto);
        assert_eq!(guard("true").unwrap(), LinuxGuard::On);
        assert_eq!(guard("false").unwrap(), LinuxGuard::Off);
        assert_eq!(guard("on").unwrap(), LinuxGuard::On);
        assert_eq!(guard("\"off\"").unwrap(), LinuxGuard::Off);
        let e = guard("always").unwrap_err().to_string();
        assert!(e.contains("expected auto, on or off"), "{e}");
        // What serializes reads back.
        for g in [LinuxGuard::Off, LinuxGuard::On, LinuxGuard::Auto] {
            let v = serde_json::to_string(&g).unwrap();
            assert_eq!(guard(&v).unwrap(), g, "{v}");
        }
    }

    #[test]
    fn gates_follow_versions() {
        let mut t = Target {
            kubernetes: KubeVersion::new(1, 30),
            ..Target::default()
        };
        assert!(!t.gate("RelaxedEnvironmentVariableValidation"));
        t.feature_gates
            .insert("RelaxedEnvironmentVariableValidation".into(), true);
        assert!(t.gate("RelaxedEnvironmentVariableValidation"));
        t.kubernetes = KubeVersion::new(1, 32);
        t.feature_gates.clear();
        assert!(t.gate("RelaxedEnvironmentVariableValidation"));
    }
}
