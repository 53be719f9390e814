//! The cluster a manifest is evaluated against (shared/rules.md §1): Kubernetes version, Windows
//! builds, isolation, runtime, feature gates and the taints of the Windows nodes.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use super::labels::{BETA_OS_LABEL, OS_LABEL};
use super::windows::{self, Build, Isolation};

/// A Kubernetes minor version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct KubeVersion {
    pub major: u32,
    pub minor: u32,
}

impl KubeVersion {
    pub const fn new(major: u32, minor: u32) -> Self {
        KubeVersion { major, minor }
    }
    /// `1.30`, `v1.30`, `1.30.2`, `v1.30.2-eks-1234`.
    pub fn parse(s: &str) -> Option<Self> {
        let s = s.trim().trim_start_matches('v');
        let mut it = s.split(['.', '-', '+']);
        let major = it.next()?.parse().ok()?;
        let minor = it.next()?.trim_end_matches('+').parse().ok()?;
        Some(KubeVersion { major, minor })
    }
    /// `self >= major.minor`
    pub fn at_least(self, major: u32, minor: u32) -> bool {
        self >= KubeVersion::new(major, minor)
    }
}

impl fmt::Display for KubeVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Runtime {
    Containerd,
    Docker,
}

/// A node taint, `key=value:Effect` or `key:Effect`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Taint {
    pub key: String,
    pub value: Option<String>,
    pub effect: String,
}

/// A taint that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TaintError {
    #[error("taint {0:?}: expected key=value:Effect")]
    Format(String),
    #[error("taint {0:?}: effect must be NoSchedule, PreferNoSchedule or NoExecute")]
    Effect(String),
    #[error("taint {0:?}: empty key")]
    EmptyKey(String),
}

impl Taint {
    pub fn parse(s: &str) -> Result<Self, TaintError> {
        let (kv, effect) = s
            .rsplit_once(':')
            .ok_or_else(|| TaintError::Format(s.to_string()))?;
        let effect = effect.trim();
        if !matches!(effect, "NoSchedule" | "PreferNoSchedule" | "NoExecute") {
            return Err(TaintError::Effect(s.to_string()));
        }
        let (key, value) = match kv.split_once('=') {
            Some((k, v)) => (k.trim().to_string(), Some(v.trim().to_string())),
            None => (kv.trim().to_string(), None),
        };
        if key.is_empty() {
            return Err(TaintError::EmptyKey(s.to_string()));
        }
        Ok(Taint {
            key,
            value,
            effect: effect.to_string(),
        })
    }

    /// The toleration that tolerates exactly this taint.
    pub fn toleration(&self) -> serde_json::Value {
        let mut t = serde_json::Map::new();
        t.insert("key".into(), self.key.clone().into());
        match &self.value {
            Some(v) => {
                t.insert("operator".into(), "Equal".into());
                t.insert("value".into(), v.clone().into());
            }
            None => {
                t.insert("operator".into(), "Exists".into());
            }
        }
        t.insert("effect".into(), self.effect.clone().into());
        serde_json::Value::Object(t)
    }
}

impl fmt::Display for Taint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.value {
            Some(v) => write!(f, "{}={}:{}", self.key, v, self.effect),
            None => write!(f, "{}:{}", self.key, self.effect),
        }
    }
}

/// The cluster a manifest is evaluated against (shared/rules.md §1).
#[derive(Debug, Clone)]
pub struct Target {
    pub kubernetes: KubeVersion,
    pub windows_builds: Vec<Build>,
    pub isolation: Isolation,
    pub runtime: Runtime,
    pub feature_gates: BTreeMap<String, bool>,
    pub windows_taints: Vec<Taint>,
    /// The cluster runs Windows nodes of more than one build (enables WIN005 and M2).
    pub cluster_mixed_builds: bool,
    /// Report end-of-support builds (WIN506).
    pub check_eol: bool,
    /// Name of the Hyper-V RuntimeClass (M5, WIN402 fix).
    pub hyperv_runtime_class: String,
    /// Today's date for WIN506 (`YYYY-MM-DD`); defaults to the system clock.
    pub today: Option<String>,
}

impl Default for Target {
    fn default() -> Self {
        Target {
            kubernetes: KubeVersion::new(1, 34),
            windows_builds: vec![windows::WS2022],
            isolation: Isolation::Process,
            runtime: Runtime::Containerd,
            feature_gates: BTreeMap::new(),
            windows_taints: vec![
                Taint::parse("os=windows:NoSchedule").expect("valid default taint"),
            ],
            cluster_mixed_builds: false,
            check_eol: false,
            hyperv_runtime_class: "runhcs-wcow-hypervisor".into(),
            today: None,
        }
    }
}

impl Target {
    /// A feature gate's value: explicit setting, else its default for the target version.
    pub fn gate(&self, name: &str) -> bool {
        if let Some(v) = self.feature_gates.get(name) {
            return *v;
        }
        let k = self.kubernetes;
        match name {
            "RelaxedEnvironmentVariableValidation" => k.at_least(1, 32),
            "IdentifyPodOS" => k.at_least(1, 24),
            "WindowsHostProcessContainers" => k.at_least(1, 23),
            "WindowsHostNetwork" => false,
            "HyperVContainer" => false,
            _ => false,
        }
    }

    /// Whether several Windows builds are in play (configured mixed, or more than one listed).
    pub fn mixed_builds(&self) -> bool {
        self.cluster_mixed_builds || self.windows_builds.len() > 1
    }

    /// The OS label key the target's scheduler matches on.
    pub fn os_label_key(&self) -> &'static str {
        if self.kubernetes.at_least(1, 14) {
            OS_LABEL
        } else {
            BETA_OS_LABEL
        }
    }
}
