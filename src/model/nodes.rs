//! The cluster's nodes as the rules see them: groups of interchangeable nodes (OS, Windows
//! build, scheduling taints, labels, runtime) and RuntimeClasses. The live side
//! ([`crate::cluster`]) derives them from the API server; the offline target synthesises them from
//! the configured builds and taints. Also the vocabulary both sides use: [`Taint`] and
//! [`Toleration`]. Pure data; [`super::schedule`] matches pods against it.

use std::collections::BTreeMap;
use std::fmt;

use k8s_openapi::api::node::v1::RuntimeClass;
use serde_json::Value;

use super::windows::{Build, Isolation, handler_isolation, parse_build};

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

/// A pod's toleration (`key`, `operator`, `value`, `effect`; empty strings where absent, as the
/// API's zero values).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Toleration {
    pub key: String,
    /// `Equal` (also when empty) or `Exists`; anything else tolerates nothing.
    pub operator: String,
    pub value: String,
    /// Empty: every effect.
    pub effect: String,
}

/// A toleration borrowed from where it is written (a pod spec's JSON, a RuntimeClass's facts):
/// what the scheduling checks read, without copying its strings. [`Toleration`] owns one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TolerationRef<'a> {
    pub key: &'a str,
    /// `Equal` (also when empty) or `Exists`; anything else tolerates nothing.
    pub operator: &'a str,
    pub value: &'a str,
    /// Empty: every effect.
    pub effect: &'a str,
}

impl<'a> TolerationRef<'a> {
    /// From a toleration object of a pod spec; `None` when it is not an object.
    pub fn from_json(v: &'a Value) -> Option<TolerationRef<'a>> {
        let o = v.as_object()?;
        let s = |k: &str| o.get(k).and_then(Value::as_str).unwrap_or("");
        Some(TolerationRef {
            key: s("key"),
            operator: s("operator"),
            value: s("value"),
            effect: s("effect"),
        })
    }

    /// `v1.Toleration.ToleratesTaint`: empty effect matches every effect, empty key every key;
    /// operator `Exists` matches every value, `Equal` (or empty) exactly the taint's value (an
    /// absent taint value is the empty string).
    pub fn tolerates(&self, taint: &Taint) -> bool {
        if !self.effect.is_empty() && self.effect != taint.effect {
            return false;
        }
        if !self.key.is_empty() && self.key != taint.key {
            return false;
        }
        match self.operator {
            "" | "Equal" => self.value == taint.value.as_deref().unwrap_or(""),
            "Exists" => true,
            _ => false,
        }
    }
}

impl Toleration {
    /// The toleration, borrowed.
    pub fn as_ref(&self) -> TolerationRef<'_> {
        TolerationRef {
            key: &self.key,
            operator: &self.operator,
            value: &self.value,
            effect: &self.effect,
        }
    }

    /// From the typed toleration of a RuntimeClass.
    pub fn from_api(t: &k8s_openapi::api::core::v1::Toleration) -> Toleration {
        let s = |o: &Option<String>| o.clone().unwrap_or_default();
        Toleration {
            key: s(&t.key),
            operator: s(&t.operator),
            value: s(&t.value),
            effect: s(&t.effect),
        }
    }

    /// [`TolerationRef::tolerates`].
    pub fn tolerates(&self, taint: &Taint) -> bool {
        self.as_ref().tolerates(taint)
    }
}

/// Taints that the node lifecycle controller (and the kubelet / cloud controller while a node
/// starts) put on and take off by themselves: conditions of one node at one moment, not facts
/// about where a workload may run. Every new Node gets `not-ready` until its kubelet is Ready.
pub const CONDITION_TAINTS: &[&str] = &[
    "node.kubernetes.io/not-ready",
    "node.kubernetes.io/unreachable",
    "node.kubernetes.io/memory-pressure",
    "node.kubernetes.io/disk-pressure",
    "node.kubernetes.io/pid-pressure",
    "node.kubernetes.io/network-unavailable",
    "node.kubernetes.io/unschedulable",
    // Set by the kubelet with an external cloud provider until the cloud controller manager
    // has initialised the node.
    "node.cloudprovider.kubernetes.io/uninitialized",
];

/// Whether a taint is a scheduling fact (not a [`CONDITION_TAINTS`] one).
pub fn is_scheduling_taint(key: &str) -> bool {
    !CONDITION_TAINTS.contains(&key)
}

/// A node's operating system: label `kubernetes.io/os`, else `beta.kubernetes.io/os`, else
/// `status.nodeInfo.operatingSystem`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum NodeOs {
    Linux,
    Windows,
    Other(String),
    Unknown,
}

impl NodeOs {
    /// `linux`, `windows` (any case), empty = unknown, anything else as it is.
    pub fn parse(s: &str) -> NodeOs {
        match s.trim().to_ascii_lowercase().as_str() {
            "linux" => NodeOs::Linux,
            "windows" => NodeOs::Windows,
            "" => NodeOs::Unknown,
            o => NodeOs::Other(o.to_string()),
        }
    }
}

impl fmt::Display for NodeOs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NodeOs::Linux => f.write_str("linux"),
            NodeOs::Windows => f.write_str("windows"),
            NodeOs::Other(s) => f.write_str(s),
            NodeOs::Unknown => f.write_str("unknown"),
        }
    }
}

/// Nodes of one shape: same OS, build, scheduling taints, labels (but hostname) and runtime.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeGroup {
    pub os: NodeOs,
    pub build: Option<Build>,
    /// Windows nodes: the revision (UBR) of their `kernelVersion` (`10.0.20348.2849` → 2849).
    pub revision: Option<u32>,
    pub taints: Vec<Taint>,
    pub labels: BTreeMap<String, String>,
    pub runtime: Option<String>,
    /// Node name → its `kubernetes.io/hostname` label: a hostname selector or a `matchFields`
    /// on `metadata.name` matches exactly these.
    pub nodes: BTreeMap<String, Option<String>>,
}

impl NodeGroup {
    pub fn count(&self) -> usize {
        self.nodes.len()
    }
    pub fn is_windows(&self) -> bool {
        self.os == NodeOs::Windows
    }
    /// The hostnames of the group's nodes.
    pub fn hostnames(&self) -> impl Iterator<Item = &str> {
        self.nodes.values().filter_map(|h| h.as_deref())
    }
    /// The group as a user reads it in a finding: `Windows Server 2022 (10.0.20348) nodes,
    /// tainted os=windows:NoSchedule`, `Linux nodes, untainted` (no runtime, no debug
    /// brackets: the cluster's facts line says those).
    pub fn describe(&self) -> String {
        let mut s = if self.is_windows() {
            match self.build {
                Some(b) => format!("{} nodes", b.named()),
                None => "Windows nodes (build unknown)".to_string(),
            }
        } else {
            match &self.os {
                NodeOs::Linux => "Linux nodes".to_string(),
                other => format!("{other} nodes"),
            }
        };
        if self.taints.is_empty() {
            s.push_str(", untainted");
        } else {
            let taints: Vec<String> = self.taints.iter().map(|t| t.to_string()).collect();
            s.push_str(&format!(", tainted {}", taints.join(", ")));
        }
        s
    }

    /// The group as the cluster's facts list it (logs, `--cluster`'s summary):
    /// `windows 10.0.20348 taints [os=windows:NoSchedule] containerd://1.7.20`.
    pub fn facts(&self) -> String {
        let mut s = self.os.to_string();
        if self.is_windows() {
            match self.build {
                Some(b) => s.push_str(&format!(" {b}")),
                None => s.push_str(" (build unknown)"),
            }
        }
        let taints: Vec<String> = self.taints.iter().map(|t| t.to_string()).collect();
        s.push_str(&format!(" taints [{}]", taints.join(", ")));
        if let Some(r) = &self.runtime {
            s.push_str(&format!(" {r}"));
        }
        s
    }
}

/// A RuntimeClass as scheduling and isolation see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuntimeClassFacts {
    pub name: String,
    pub handler: String,
    /// `scheduling.nodeSelector`, merged into the pods that name the class.
    pub node_selector: BTreeMap<String, String>,
    /// `scheduling.tolerations`, added to the pods that name the class.
    pub tolerations: Vec<Toleration>,
    /// What the handler selects on Windows: containerd's `runhcs-wcow-hypervisor[-BUILD]` is
    /// Hyper-V, `runhcs-wcow-process` process isolation; `None` for other handlers.
    pub isolation: Option<Isolation>,
    /// `runhcs-wcow-hypervisor-19041`: the utility VM's build the handler pins (the
    /// `kubernetes-sigs/windows-testing` Hyper-V classes use this form).
    pub hyperv_guest_build: Option<Build>,
    /// The API version it was written in (`node.k8s.io/v1`, or `node.k8s.io/v1beta1`, read with
    /// the same shape): whether the target's API server serves it is WIN604's question.
    pub api_version: String,
}

impl RuntimeClassFacts {
    pub fn from_api(rc: &RuntimeClass) -> RuntimeClassFacts {
        let sched = rc.scheduling.as_ref();
        let handler = rc.handler.clone();
        let isolation = handler_isolation(&handler);
        let hyperv_guest_build = handler
            .strip_prefix("runhcs-wcow-hypervisor-")
            .and_then(parse_build);
        RuntimeClassFacts {
            name: rc.metadata.name.clone().unwrap_or_default(),
            node_selector: sched
                .and_then(|s| s.node_selector.clone())
                .unwrap_or_default(),
            tolerations: sched
                .and_then(|s| s.tolerations.as_ref())
                .into_iter()
                .flatten()
                .map(Toleration::from_api)
                .collect(),
            isolation,
            hyperv_guest_build,
            handler,
            api_version: "node.k8s.io/v1".into(),
        }
    }
    pub fn is_hyperv(&self) -> bool {
        self.isolation == Some(Isolation::Hyperv)
    }
}
