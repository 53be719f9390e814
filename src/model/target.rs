//! The cluster a manifest is evaluated against (shared/rules.md §1): Kubernetes version, Windows
//! builds, isolation, runtime, feature gates and the taints of the Windows nodes.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::labels::{BETA_OS_LABEL, OS_LABEL};
use super::nodes::NodeGroup;
pub use super::nodes::{Taint, TaintError};
use super::platform::Platform;
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
    /// The revision (UBR) the configuration gives a build, as in `--windows-build
    /// 10.0.20348.2849` (WIN510 compares images' `os.version` with it).
    pub windows_revisions: BTreeMap<Build, u32>,
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
    /// The platform the configuration names (`--platform`, `target.platform`): its defaults
    /// stand for the Windows nodes' taints unless `windowsTaints` sets them.
    pub platform: Option<Platform>,
    /// The images `winlint.yaml` declares (`images:`): what is inside them, as the registry
    /// would tell ([`super::image_contents`]).
    pub images: Arc<[super::image_contents::ImageEntry]>,
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
            windows_revisions: BTreeMap::new(),
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
            platform: None,
            images: Arc::from(Vec::new()),
        }
    }
}

/// A feature gate's history: its default in each stretch of Kubernetes minors, and the minor from
/// which it is locked (GA: the API server refuses to start with the gate set the other way, so an
/// explicit setting no longer counts). Sources: issue-9 research §1 (the 1.32 binary's
/// `kubernetes_feature_enabled` metrics; `pkg/features` of 1.32 and 1.33; the feature-gate pages
/// of kubernetes/website).
#[derive(Debug)]
pub struct Gate {
    pub name: &'static str,
    /// `(first minor, default from there on)`, ascending; before the first entry the gate does
    /// not exist (off, and setting it changes nothing).
    pub defaults: &'static [(u32, bool)],
    /// First minor where the gate is locked to its default.
    pub locked_from: Option<u32>,
    /// The gate's earlier name and the first minor of the current one (a setting under the old
    /// name counts before that minor).
    pub former: Option<(&'static str, u32)>,
}

/// The feature gates winlint's rules ask about (`Target::gate`).
pub const GATES: &[Gate] = &[
    Gate {
        // spec.os: alpha (off) 1.23, beta (on) 1.24, GA 1.25.
        name: "IdentifyPodOS",
        defaults: &[(23, false), (24, true)],
        locked_from: Some(25),
        former: None,
    },
    Gate {
        // windowsOptions.hostProcess: alpha (off) 1.22, beta (on) 1.23, GA 1.26.
        name: "WindowsHostProcessContainers",
        defaults: &[(22, false), (23, true)],
        locked_from: Some(26),
        former: None,
    },
    Gate {
        // Windows hostNetwork (KEP-3503): the 1.26-1.32 binaries report it alpha but on
        // (`WindowsHostNetwork ALPHA 1` in the 1.32 metrics); off and deprecated from 1.33.
        name: "WindowsHostNetwork",
        defaults: &[(26, true), (33, false)],
        locked_from: None,
        former: None,
    },
    Gate {
        // env var names: alpha (off) 1.30-1.31, beta (on) 1.32-1.33, GA 1.34.
        name: "RelaxedEnvironmentVariableValidation",
        defaults: &[(30, false), (32, true)],
        locked_from: Some(34),
        former: None,
    },
    Gate {
        // spec.hostUsers: alpha 1.25 (as UserNamespacesStatelessPodsSupport until 1.27), beta
        // off 1.30-1.32, beta on 1.33.
        name: "UserNamespacesSupport",
        defaults: &[(25, false), (33, true)],
        locked_from: None,
        former: Some(("UserNamespacesStatelessPodsSupport", 28)),
    },
    Gate {
        // securityContext.supplementalGroupsPolicy: alpha (off) 1.31, beta (on) 1.33.
        name: "SupplementalGroupsPolicy",
        defaults: &[(31, false), (33, true)],
        locked_from: None,
        former: None,
    },
    Gate {
        // securityContext.seLinuxChangePolicy: alpha (off) 1.32, beta (on) 1.33.
        name: "SELinuxChangePolicy",
        defaults: &[(32, false), (33, true)],
        locked_from: None,
        former: None,
    },
    Gate {
        // securityContext.procMount: alpha 1.12, beta off 1.31, beta on 1.33 (a disabled gate
        // coerces the value to Default, it does not drop it).
        name: "ProcMountType",
        defaults: &[(12, false), (33, true)],
        locked_from: None,
        former: None,
    },
    Gate {
        // pod-level spec.resources: alpha (off) 1.32, beta (on) 1.34.
        name: "PodLevelResources",
        defaults: &[(32, false), (34, true)],
        locked_from: None,
        former: None,
    },
    Gate {
        // the kubelet kills an exec probe past its timeoutSeconds: GA (on) 1.20, locked 1.35
        // (kubernetes pkg/features/kube_features.go); before 1.20 exec probe timeouts were not
        // enforced.
        name: "ExecProbeTimeout",
        defaults: &[(20, true)],
        locked_from: Some(35),
        former: None,
    },
    Gate {
        // securityContext.appArmorProfile: beta (on) 1.30, GA 1.31.
        name: "AppArmorFields",
        defaults: &[(30, true)],
        locked_from: Some(31),
        former: None,
    },
    Gate {
        // windowsOptions.runAsUserName: alpha (off) 1.16, beta (on) 1.17, GA 1.18.
        name: "WindowsRunAsUserName",
        defaults: &[(16, false), (17, true)],
        locked_from: Some(18),
        former: None,
    },
    Gate {
        // windowsOptions.gmsaCredentialSpec(Name): alpha (off) 1.14, beta (on) 1.16, GA 1.18.
        name: "WindowsGMSA",
        defaults: &[(14, false), (16, true)],
        locked_from: Some(18),
        former: None,
    },
    Gate {
        // securityContext.runAsGroup: alpha (off) 1.10, beta (on) 1.14, GA 1.21.
        name: "RunAsGroup",
        defaults: &[(10, false), (14, true)],
        locked_from: Some(21),
        former: None,
    },
    Gate {
        // spec.securityContext.fsGroupChangePolicy: alpha (off) 1.18, beta (on) 1.20, GA 1.23.
        name: "ConfigurableFSGroupPolicy",
        defaults: &[(18, false), (20, true)],
        locked_from: Some(23),
        former: None,
    },
    Gate {
        // spec.shareProcessNamespace: alpha (off) 1.10, beta (on) 1.12, GA 1.17.
        name: "PodShareProcessNamespace",
        defaults: &[(10, false), (12, true)],
        locked_from: Some(17),
        former: None,
    },
    Gate {
        // Server-side unknown-field warnings (fieldValidation): alpha (off) 1.23, beta (on)
        // 1.25, GA 1.27.
        name: "ServerSideFieldValidation",
        defaults: &[(23, false), (25, true)],
        locked_from: Some(27),
        former: None,
    },
    Gate {
        // The kubelet's Hyper-V isolation annotation: alpha (off) 1.10, deprecated 1.20,
        // removed 1.21.
        name: "HyperVContainer",
        defaults: &[(10, false)],
        locked_from: None,
        former: None,
    },
];

impl Gate {
    /// The gate's default in Kubernetes 1.`minor` (off before the gate exists).
    pub fn default_at(&self, minor: u32) -> bool {
        self.defaults
            .iter()
            .rev()
            .find(|(from, _)| minor >= *from)
            .is_some_and(|(_, on)| *on)
    }

    /// The first minor from which the gate is on by default, if any.
    pub fn on_by_default_from(&self) -> Option<u32> {
        self.defaults
            .iter()
            .find(|(_, on)| *on)
            .map(|(from, _)| *from)
    }

    /// Whether the gate exists in Kubernetes 1.`minor`.
    pub fn exists_at(&self, minor: u32) -> bool {
        self.defaults
            .first()
            .is_some_and(|(from, _)| minor >= *from)
    }
}

/// The history of gate `name`, when winlint knows it.
pub fn gate_info(name: &str) -> Option<&'static Gate> {
    GATES.iter().find(|g| g.name == name)
}

impl Target {
    /// A feature gate's value at the target: the explicit setting (`featureGates`,
    /// `--feature-gate`), else its default for the target version ([`GATES`]). A known gate
    /// is off before it exists and keeps its default once locked, whatever the setting says.
    pub fn gate(&self, name: &str) -> bool {
        let Some(g) = gate_info(name) else {
            return self.feature_gates.get(name).copied().unwrap_or(false);
        };
        let minor = self.kubernetes.minor;
        if !g.exists_at(minor) {
            return false;
        }
        if g.locked_from.is_some_and(|l| minor >= l) {
            return g.default_at(minor);
        }
        self.gate_setting(name)
            .unwrap_or_else(|| g.default_at(minor))
    }

    /// The explicit setting of gate `name` (under its current or, before the rename, its
    /// former name), if the configuration makes one.
    pub fn gate_setting(&self, name: &str) -> Option<bool> {
        if let Some(v) = self.feature_gates.get(name) {
            return Some(*v);
        }
        let (former, until) = gate_info(name)?.former?;
        (self.kubernetes.minor < until)
            .then(|| self.feature_gates.get(former).copied())
            .flatten()
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

    /// Whether the Windows nodes' taints are winlint's assumption (the user guide's
    /// convention): neither configured (`windowsTaints`, a platform) nor observed. A finding
    /// that rests on an assumption is never an error.
    pub fn taints_assumed(&self) -> bool {
        !self.pinned.windows_taints && self.platform.is_none() && self.nodes.is_none()
    }

    /// Name the platform: its taints stand for the Windows nodes' unless `windowsTaints` pins
    /// them (facts read from a cluster still replace them: the platform is a default).
    pub fn set_platform(&mut self, p: Platform) {
        self.platform = Some(p);
        if !self.pinned.windows_taints {
            self.windows_taints = p.windows_taints();
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

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// The default target at Kubernetes `1.minor` (also for the other version tests of model/).
    pub(crate) fn at(minor: u32) -> Target {
        Target {
            kubernetes: KubeVersion::new(1, minor),
            ..Target::default()
        }
    }

    /// The defaults measured on the 1.32 API server (research §1: its
    /// `kubernetes_feature_enabled` metrics) and the documented switches around it.
    #[test]
    fn gate_defaults_per_minor() {
        let cases: &[(&str, &[(u32, bool)])] = &[
            (
                "UserNamespacesSupport",
                &[(24, false), (25, false), (32, false), (33, true)],
            ),
            (
                "SupplementalGroupsPolicy",
                &[(30, false), (32, false), (33, true)],
            ),
            ("SELinuxChangePolicy", &[(32, false), (33, true)]),
            ("ProcMountType", &[(32, false), (33, true)]),
            ("PodLevelResources", &[(32, false), (33, false), (34, true)]),
            (
                "RelaxedEnvironmentVariableValidation",
                &[(31, false), (32, true)],
            ),
            ("AppArmorFields", &[(29, false), (30, true)]),
            (
                "WindowsHostNetwork",
                &[(25, false), (26, true), (32, true), (33, false)],
            ),
            ("IdentifyPodOS", &[(22, false), (23, false), (24, true)]),
            (
                "WindowsHostProcessContainers",
                &[(21, false), (22, false), (23, true)],
            ),
            ("WindowsRunAsUserName", &[(16, false), (17, true)]),
            ("WindowsGMSA", &[(15, false), (16, true)]),
            ("HyperVContainer", &[(12, false)]),
        ];
        for (name, points) in cases {
            for &(minor, want) in *points {
                assert_eq!(at(minor).gate(name), want, "{name} at 1.{minor}");
            }
        }
        assert!(!at(34).gate("NoSuchGate"));
    }

    #[test]
    fn explicit_settings_locks_and_former_names() {
        let mut t = at(32);
        t.feature_gates.insert("UserNamespacesSupport".into(), true);
        assert!(t.gate("UserNamespacesSupport"));
        // Locked at GA: the setting no longer counts.
        let mut t = at(34);
        t.feature_gates
            .insert("RelaxedEnvironmentVariableValidation".into(), false);
        assert!(t.gate("RelaxedEnvironmentVariableValidation"));
        t.kubernetes = KubeVersion::new(1, 31);
        assert!(!t.gate("RelaxedEnvironmentVariableValidation"));
        t.feature_gates
            .insert("RelaxedEnvironmentVariableValidation".into(), true);
        assert!(t.gate("RelaxedEnvironmentVariableValidation"));
        // A gate that does not exist yet cannot be turned on.
        let mut t = at(22);
        t.feature_gates.insert("IdentifyPodOS".into(), true);
        assert!(!t.gate("IdentifyPodOS"));
        // The gate's former name counts before the rename.
        let mut t = at(26);
        t.feature_gates
            .insert("UserNamespacesStatelessPodsSupport".into(), true);
        assert!(t.gate("UserNamespacesSupport"));
        t.kubernetes = KubeVersion::new(1, 28);
        assert!(!t.gate("UserNamespacesSupport"));
        // Unknown gates: the setting, else off.
        t.feature_gates.insert("SomethingNew".into(), true);
        assert!(t.gate("SomethingNew"));
    }
}
