//! The cluster a manifest is evaluated against (shared/rules.md §1): Kubernetes version, Windows
//! builds, isolation, runtime, feature gates and the taints of the Windows nodes.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::labels::{BETA_OS_LABEL, OS_LABEL};
use super::nodes::NodeGroup;
pub use super::nodes::{Taint, TaintError};
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

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Runtime {
    Containerd,
    Docker,
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
    /// The cluster's node groups when they are observed (the webhook's watches, `--cluster`);
    /// `None` offline, where the configured builds and taints stand for the nodes.
    pub nodes: Option<Arc<[NodeGroup]>>,
    /// Which facts the configuration sets itself (file or flags): facts read from a cluster
    /// never replace these.
    pub pinned: Pinned,
}

/// Target facts the configuration pins (set in `winlint.yaml` or by a flag).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Pinned {
    pub kubernetes: bool,
    pub windows_builds: bool,
    pub windows_taints: bool,
    pub runtime: bool,
    pub isolation: bool,
    pub cluster_mixed_builds: bool,
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
            nodes: None,
            pinned: Pinned::default(),
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

    /// The taints of the target's Windows nodes: the configured ones, except that before
    /// Kubernetes 1.14, when tainting Windows nodes was not yet the convention (and the
    /// `kubernetes.io/os` label did not exist), a target that does not set its taints has none.
    pub fn windows_node_taints(&self) -> &[Taint] {
        if !self.pinned.windows_taints && !self.kubernetes.at_least(1, 14) {
            &[]
        } else {
            &self.windows_taints
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
