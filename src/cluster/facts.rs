//! From Nodes, RuntimeClasses, Namespaces and the server version to an immutable
//! [`ClusterFacts`] snapshot. Pure: no I/O, no logging (the live side logs).

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::sync::Arc;
use std::time::SystemTime;

use k8s_openapi::api::core::v1::{Namespace, Node};
use k8s_openapi::api::node::v1::RuntimeClass;
use k8s_openapi::apimachinery::pkg::version::Info;

use crate::model::labels::{BUILD_LABEL as WINDOWS_BUILD_LABEL, HOSTNAME_LABEL};
pub use crate::model::nodes::{
    CONDITION_TAINTS, NodeGroup, NodeOs, RuntimeClassFacts, is_scheduling_taint,
};
use crate::model::schedule::{self, Fit};
use crate::model::{KubeVersion, Taint};
use crate::windows::{Build, parse_build, parse_revision};

/// What makes nodes interchangeable for scheduling and for the rules: everything of a Node that
/// the facts keep except its name and hostname.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeShape {
    pub os: NodeOs,
    /// Windows nodes only: from `node.kubernetes.io/windows-build`, else
    /// `status.nodeInfo.kernelVersion`, else `osImage`; `None` when none says.
    pub build: Option<Build>,
    /// Windows nodes only: the revision (UBR) of `status.nodeInfo.kernelVersion`
    /// (`10.0.20348.2849` → 2849), what WIN510 compares images' `os.version` with. Nodes of one
    /// build patched to different levels are different shapes.
    pub revision: Option<u32>,
    /// Scheduling taints (no [`CONDITION_TAINTS`]), sorted.
    pub taints: Vec<Taint>,
    /// Every label but `kubernetes.io/hostname`.
    pub labels: BTreeMap<String, String>,
    /// `status.nodeInfo.containerRuntimeVersion` (`containerd://1.7.20`).
    pub runtime: Option<String>,
}

fn taint_key(t: &Taint) -> (&str, Option<&str>, &str) {
    (&t.key, t.value.as_deref(), &t.effect)
}

impl Ord for NodeShape {
    fn cmp(&self, o: &Self) -> Ordering {
        // Windows first, then by build: the order logs and metrics list groups in.
        (
            self.os != NodeOs::Windows,
            &self.os,
            self.build,
            self.revision,
        )
            .cmp(&(o.os != NodeOs::Windows, &o.os, o.build, o.revision))
            .then_with(|| {
                self.taints
                    .iter()
                    .map(taint_key)
                    .cmp(o.taints.iter().map(taint_key))
            })
            .then_with(|| self.labels.cmp(&o.labels))
            .then_with(|| self.runtime.cmp(&o.runtime))
    }
}

impl PartialOrd for NodeShape {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

/// The shape of a group's nodes.
fn shape_of(g: &NodeGroup) -> NodeShape {
    NodeShape {
        os: g.os.clone(),
        build: g.build,
        revision: g.revision,
        taints: g.taints.clone(),
        labels: g.labels.clone(),
        runtime: g.runtime.clone(),
    }
}

/// One Node, reduced to what the facts keep.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeObservation {
    pub name: String,
    /// The `kubernetes.io/hostname` label.
    pub hostname: Option<String>,
    pub shape: NodeShape,
    /// Why a Windows node's build is unknown (garbage label, no nodeInfo), for the log.
    pub build_problem: Option<String>,
}

/// The build in an `osImage` such as `Windows Server 2022 Datacenter`.
fn build_from_os_image(image: &str) -> Option<Build> {
    if !image.to_ascii_lowercase().contains("windows") {
        return None;
    }
    image
        .split(|c: char| c.is_whitespace() || c == ',')
        .filter(|t| t.len() >= 4)
        .find_map(parse_build)
}

impl NodeObservation {
    /// Reduce a Node. Never fails: missing or garbage fields give an unknown OS or build.
    pub fn from_node(node: &Node) -> NodeObservation {
        let name = node.metadata.name.clone().unwrap_or_default();
        let mut labels = node.metadata.labels.clone().unwrap_or_default();
        let hostname = labels.remove(HOSTNAME_LABEL);
        let info = node.status.as_ref().and_then(|s| s.node_info.as_ref());
        let os = labels
            .get("kubernetes.io/os")
            .or_else(|| labels.get("beta.kubernetes.io/os"))
            .map(|s| NodeOs::parse(s))
            .or_else(|| info.map(|i| NodeOs::parse(&i.operating_system)))
            .unwrap_or(NodeOs::Unknown);
        let (build, build_problem) = if os == NodeOs::Windows {
            let label = labels.get(WINDOWS_BUILD_LABEL);
            let from_label = label.and_then(|l| parse_build(l));
            let from_kernel = info.and_then(|i| parse_build(&i.kernel_version));
            let from_image = info.and_then(|i| build_from_os_image(&i.os_image));
            match from_label.or(from_kernel).or(from_image) {
                Some(b) => (Some(b), None),
                None => {
                    let label_says = match label {
                        Some(l) => {
                            format!("label {WINDOWS_BUILD_LABEL}={l:?} is not a Windows build")
                        }
                        None => format!("no label {WINDOWS_BUILD_LABEL}"),
                    };
                    let info_says = match info {
                        Some(i) => format!(
                            "status.nodeInfo names none (kernelVersion {:?}, osImage {:?})",
                            i.kernel_version, i.os_image
                        ),
                        None => "no status.nodeInfo".to_string(),
                    };
                    (None, Some(format!("{label_says} and {info_says}")))
                }
            }
        } else {
            (None, None)
        };
        // The revision only where it belongs to the build (a label's build is the kernel's).
        let revision = info
            .filter(|i| os == NodeOs::Windows && parse_build(&i.kernel_version) == build)
            .and_then(|i| parse_revision(&i.kernel_version));
        let mut taints: Vec<Taint> = node
            .spec
            .as_ref()
            .and_then(|s| s.taints.as_ref())
            .into_iter()
            .flatten()
            .filter(|t| is_scheduling_taint(&t.key))
            .map(|t| Taint {
                key: t.key.clone(),
                value: t.value.clone().filter(|v| !v.is_empty()),
                effect: t.effect.clone(),
            })
            .collect();
        taints.sort_by(|a, b| taint_key(a).cmp(&taint_key(b)));
        taints.dedup();
        let runtime = info
            .map(|i| i.container_runtime_version.clone())
            .filter(|r| !r.is_empty());
        NodeObservation {
            name,
            hostname,
            shape: NodeShape {
                os,
                build,
                revision,
                taints,
                labels,
                runtime,
            },
            build_problem,
        }
    }
}

/// The API server's version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerVersion {
    pub version: KubeVersion,
    /// `v1.32.0-beta.0+cd13ec4ae44e`
    pub git_version: String,
}

impl ServerVersion {
    /// From `/version`; `None` when it names no version winlint can read.
    pub fn from_info(info: &Info) -> Option<ServerVersion> {
        let version = KubeVersion::parse(&info.git_version).or_else(|| {
            KubeVersion::parse(&format!(
                "{}.{}",
                info.major,
                info.minor.trim_end_matches('+')
            ))
        })?;
        Some(ServerVersion {
            version,
            git_version: info.git_version.clone(),
        })
    }
}

/// Which of the three resources the snapshot has a complete list of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Synced {
    pub nodes: bool,
    pub runtime_classes: bool,
    pub namespaces: bool,
}

impl Synced {
    pub const ALL: Synced = Synced {
        nodes: true,
        runtime_classes: true,
        namespaces: true,
    };
    pub fn all(self) -> bool {
        self == Synced::ALL
    }
}

/// The facts of one moment. Immutable; the live side swaps a new one in whole.
#[derive(Debug, Clone)]
pub struct ClusterFacts {
    /// Which lists the facts are complete for (the live side publishes partial facts too, e.g.
    /// when RBAC forbids runtimeclasses; a one-shot read is all or nothing).
    pub synced: Synced,
    pub server_version: Option<ServerVersion>,
    /// Node groups, Windows first, by build.
    pub groups: Vec<NodeGroup>,
    pub runtime_classes: BTreeMap<String, RuntimeClassFacts>,
    /// Namespace name → labels.
    pub namespaces: BTreeMap<String, BTreeMap<String, String>>,
    /// Windows nodes whose build is unknown: name → why.
    pub unknown_builds: BTreeMap<String, String>,
    /// GMSACredentialSpec names (`gmsa.rs`); `None` without the CRD or the right to list it.
    /// Optional: not part of [`Synced`], a cluster without it is fully synced.
    pub gmsa_credential_specs: Option<BTreeSet<String>>,
    /// When this snapshot was built (not part of equality).
    pub built_at: SystemTime,
}

impl PartialEq for ClusterFacts {
    fn eq(&self, o: &Self) -> bool {
        self.synced == o.synced
            && self.server_version == o.server_version
            && self.groups == o.groups
            && self.runtime_classes == o.runtime_classes
            && self.namespaces == o.namespaces
            && self.unknown_builds == o.unknown_builds
            && self.gmsa_credential_specs == o.gmsa_credential_specs
    }
}

impl Default for ClusterFacts {
    fn default() -> Self {
        ClusterFacts::empty()
    }
}

/// Node observations indexed by node and grouped by shape: upserts are cheap and tell whether
/// anything that matters changed (a status heartbeat does not). Nodes of one shape share it
/// (one copy of the labels per group, not per node: 50 000 nodes stay small).
#[derive(Debug, Default, Clone)]
pub struct NodeIndex {
    by_name: HashMap<String, IndexedNode>,
    groups: BTreeMap<Arc<NodeShape>, BTreeMap<String, Option<String>>>,
}

#[derive(Debug, Clone)]
struct IndexedNode {
    shape: Arc<NodeShape>,
    hostname: Option<String>,
    build_problem: Option<String>,
}

impl NodeIndex {
    /// Insert or replace a node; `true` when the facts changed.
    pub fn upsert(&mut self, o: NodeObservation) -> bool {
        if let Some(n) = self.by_name.get(&o.name)
            && *n.shape == o.shape
            && n.hostname == o.hostname
            && n.build_problem == o.build_problem
        {
            return false;
        }
        self.remove(&o.name);
        let shape = match self.groups.get_key_value(&o.shape) {
            Some((s, _)) => Arc::clone(s),
            None => Arc::new(o.shape),
        };
        self.groups
            .entry(Arc::clone(&shape))
            .or_default()
            .insert(o.name.clone(), o.hostname.clone());
        self.by_name.insert(
            o.name,
            IndexedNode {
                shape,
                hostname: o.hostname,
                build_problem: o.build_problem,
            },
        );
        true
    }

    /// Remove a node; `true` when it was there.
    pub fn remove(&mut self, name: &str) -> bool {
        let Some(n) = self.by_name.remove(name) else {
            return false;
        };
        if let Some(members) = self.groups.get_mut(&n.shape) {
            members.remove(name);
            if members.is_empty() {
                self.groups.remove(&n.shape);
            }
        }
        true
    }

    pub fn len(&self) -> usize {
        self.by_name.len()
    }
    pub fn is_empty(&self) -> bool {
        self.by_name.is_empty()
    }

    /// The current observation's build problem of a node, if any.
    pub fn build_problem(&self, name: &str) -> Option<&str> {
        self.by_name
            .get(name)
            .and_then(|n| n.build_problem.as_deref())
    }

    fn groups(&self) -> Vec<NodeGroup> {
        self.groups
            .iter()
            .map(|(s, nodes)| NodeGroup {
                os: s.os.clone(),
                build: s.build,
                revision: s.revision,
                taints: s.taints.clone(),
                labels: s.labels.clone(),
                runtime: s.runtime.clone(),
                nodes: nodes.clone(),
            })
            .collect()
    }

    fn unknown_builds(&self) -> BTreeMap<String, String> {
        self.by_name
            .iter()
            .filter_map(|(name, n)| n.build_problem.as_ref().map(|p| (name.clone(), p.clone())))
            .collect()
    }
}

impl ClusterFacts {
    /// No facts at all (before the first sync).
    pub fn empty() -> ClusterFacts {
        ClusterFacts {
            synced: Synced::default(),
            server_version: None,
            groups: vec![],
            runtime_classes: BTreeMap::new(),
            namespaces: BTreeMap::new(),
            unknown_builds: BTreeMap::new(),
            gmsa_credential_specs: None,
            built_at: SystemTime::now(),
        }
    }

    /// Build a snapshot from indexed parts (the live side and [`ClusterFacts::derive`] share
    /// this).
    pub fn build(
        synced: Synced,
        nodes: &NodeIndex,
        runtime_classes: BTreeMap<String, RuntimeClassFacts>,
        namespaces: BTreeMap<String, BTreeMap<String, String>>,
        server_version: Option<ServerVersion>,
    ) -> ClusterFacts {
        ClusterFacts {
            synced,
            server_version,
            groups: nodes.groups(),
            runtime_classes,
            namespaces,
            unknown_builds: nodes.unknown_builds(),
            gmsa_credential_specs: None,
            built_at: SystemTime::now(),
        }
    }

    /// The same facts with the GMSACredentialSpec names (`None`: not known).
    pub fn with_gmsa_credential_specs(mut self, names: Option<BTreeSet<String>>) -> ClusterFacts {
        self.gmsa_credential_specs = names;
        self
    }

    /// The facts of complete lists of Nodes, RuntimeClasses and Namespaces and `/version`.
    pub fn derive(
        nodes: &[Node],
        runtime_classes: &[RuntimeClass],
        namespaces: &[Namespace],
        version: Option<&Info>,
    ) -> ClusterFacts {
        let mut index = NodeIndex::default();
        for n in nodes {
            index.upsert(NodeObservation::from_node(n));
        }
        ClusterFacts::build(
            Synced::ALL,
            &index,
            runtime_classes
                .iter()
                .map(|rc| {
                    let f = RuntimeClassFacts::from_api(rc);
                    (f.name.clone(), f)
                })
                .collect(),
            namespaces.iter().map(namespace_entry).collect(),
            version.and_then(ServerVersion::from_info),
        )
    }

    pub fn windows_groups(&self) -> impl Iterator<Item = &NodeGroup> {
        self.groups.iter().filter(|g| g.is_windows())
    }

    pub fn windows_node_count(&self) -> usize {
        self.windows_groups().map(NodeGroup::count).sum()
    }

    pub fn node_count(&self) -> usize {
        self.groups.iter().map(NodeGroup::count).sum()
    }

    /// The Windows builds the cluster's nodes run.
    pub fn windows_builds(&self) -> BTreeSet<Build> {
        self.windows_groups().filter_map(|g| g.build).collect()
    }

    /// Windows nodes per build (`None`: build unknown), for the metrics.
    pub fn windows_nodes_by_build(&self) -> BTreeMap<Option<Build>, usize> {
        let mut m = BTreeMap::new();
        for g in self.windows_groups() {
            *m.entry(g.build).or_default() += g.count();
        }
        m
    }

    /// The labels of a namespace, if the facts know it.
    pub fn namespace_labels(&self, ns: &str) -> Option<&BTreeMap<String, String>> {
        self.namespaces.get(ns)
    }

    /// RuntimeClasses whose handler runs Hyper-V isolation.
    pub fn hyperv_runtime_classes(&self) -> impl Iterator<Item = &RuntimeClassFacts> {
        self.runtime_classes.values().filter(|rc| rc.is_hyperv())
    }

    /// How a pod spec fares on every group, honouring its `runtimeClassName` when the class is
    /// known (an unknown class is left out: the API server would refuse the pod).
    pub fn placements<'a>(&'a self, spec: &serde_json::Value) -> Vec<(&'a NodeGroup, Fit)> {
        let rc = spec["runtimeClassName"]
            .as_str()
            .and_then(|n| self.runtime_classes.get(n));
        self.groups
            .iter()
            .map(|g| (g, schedule::fit(spec, g, rc)))
            .collect()
    }

    /// The changes from `old` worth a log line: server version, Windows builds appearing or
    /// disappearing, node groups appearing, disappearing or changing taints, RuntimeClasses,
    /// namespaces and the labels winlint reads (`pod-security.kubernetes.io/*`,
    /// `winlint.io/*`). Node counts within a group are [`FactChange::Nodes`].
    pub fn changes_from(&self, old: &ClusterFacts) -> Vec<FactChange> {
        let mut out = Vec::new();
        if self.server_version != old.server_version {
            out.push(FactChange::ServerVersion {
                from: old.server_version.as_ref().map(|v| v.git_version.clone()),
                to: self.server_version.as_ref().map(|v| v.git_version.clone()),
            });
        }
        let (ob, nb) = (old.windows_builds(), self.windows_builds());
        for b in nb.difference(&ob) {
            out.push(FactChange::BuildAppeared(*b));
        }
        for b in ob.difference(&nb) {
            out.push(FactChange::BuildGone(*b));
        }
        // Groups. Nodes that moved to a new group from one of the same shape but the taints
        // had their taints changed; a group whose every node moved so is not "gone".
        let sans_taints =
            |g: &NodeGroup| (g.os.clone(), g.build, g.labels.clone(), g.runtime.clone());
        let old_shapes: BTreeMap<NodeShape, usize> = old
            .groups
            .iter()
            .enumerate()
            .map(|(i, g)| (shape_of(g), i))
            .collect();
        let new_shapes: BTreeSet<NodeShape> = self.groups.iter().map(shape_of).collect();
        let old_group_of: HashMap<&str, usize> = old
            .groups
            .iter()
            .enumerate()
            .flat_map(|(i, g)| g.nodes.keys().map(move |n| (n.as_str(), i)))
            .collect();
        let mut moved: BTreeMap<usize, usize> = BTreeMap::new();
        for g in &self.groups {
            let shape = shape_of(g);
            if let Some(&oi) = old_shapes.get(&shape) {
                let o = &old.groups[oi];
                if o.count() != g.count() {
                    out.push(FactChange::Nodes {
                        group: g.facts(),
                        from: o.count(),
                        to: g.count(),
                    });
                }
                continue;
            }
            let mut from: BTreeMap<usize, usize> = BTreeMap::new();
            // (An old group of the same shape would have matched above: same shape but the
            // taints means other taints.)
            for n in g.nodes.keys() {
                if let Some(&oi) = old_group_of.get(n.as_str())
                    && sans_taints(&old.groups[oi]) == sans_taints(g)
                {
                    *from.entry(oi).or_default() += 1;
                }
            }
            let fresh = g.count() - from.values().sum::<usize>();
            for (oi, k) in from {
                *moved.entry(oi).or_default() += k;
                out.push(FactChange::TaintsChanged {
                    group: g.facts(),
                    from: old.groups[oi]
                        .taints
                        .iter()
                        .map(|t| t.to_string())
                        .collect(),
                    to: g.taints.iter().map(|t| t.to_string()).collect(),
                    nodes: k,
                });
            }
            if fresh > 0 {
                out.push(FactChange::GroupAdded {
                    group: g.facts(),
                    nodes: fresh,
                });
            }
        }
        for (oi, o) in old.groups.iter().enumerate() {
            if !new_shapes.contains(&shape_of(o)) && moved.get(&oi) != Some(&o.count()) {
                out.push(FactChange::GroupGone { group: o.facts() });
            }
        }
        for (n, rc) in &self.runtime_classes {
            match old.runtime_classes.get(n) {
                None => out.push(FactChange::RuntimeClassAdded {
                    name: n.clone(),
                    handler: rc.handler.clone(),
                    hyperv: rc.is_hyperv(),
                }),
                Some(o) if o != rc => out.push(FactChange::RuntimeClassChanged {
                    name: n.clone(),
                    handler: rc.handler.clone(),
                }),
                Some(_) => {}
            }
        }
        for n in old.runtime_classes.keys() {
            if !self.runtime_classes.contains_key(n) {
                out.push(FactChange::RuntimeClassGone { name: n.clone() });
            }
        }
        let watched = |l: &BTreeMap<String, String>| -> BTreeMap<String, String> {
            l.iter()
                .filter(|(k, _)| {
                    k.starts_with("pod-security.kubernetes.io/") || k.starts_with("winlint.io/")
                })
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        };
        for (n, labels) in &self.namespaces {
            match old.namespaces.get(n) {
                None => out.push(FactChange::NamespaceAdded { name: n.clone() }),
                Some(o) if watched(o) != watched(labels) => out.push(FactChange::NamespaceLabels {
                    name: n.clone(),
                    labels: watched(labels),
                }),
                Some(_) => {}
            }
        }
        for n in old.namespaces.keys() {
            if !self.namespaces.contains_key(n) {
                out.push(FactChange::NamespaceGone { name: n.clone() });
            }
        }
        out
    }
}

fn namespace_entry(ns: &Namespace) -> (String, BTreeMap<String, String>) {
    (
        ns.metadata.name.clone().unwrap_or_default(),
        ns.metadata.labels.clone().unwrap_or_default(),
    )
}

/// The facts a Namespace contributes (name, labels).
pub fn namespace_facts(ns: &Namespace) -> (String, BTreeMap<String, String>) {
    namespace_entry(ns)
}

/// One change between two snapshots (its `Display` is the log message).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FactChange {
    ServerVersion {
        from: Option<String>,
        to: Option<String>,
    },
    BuildAppeared(Build),
    BuildGone(Build),
    GroupAdded {
        group: String,
        nodes: usize,
    },
    GroupGone {
        group: String,
    },
    TaintsChanged {
        group: String,
        from: Vec<String>,
        to: Vec<String>,
        nodes: usize,
    },
    Nodes {
        group: String,
        from: usize,
        to: usize,
    },
    RuntimeClassAdded {
        name: String,
        handler: String,
        hyperv: bool,
    },
    RuntimeClassChanged {
        name: String,
        handler: String,
    },
    RuntimeClassGone {
        name: String,
    },
    NamespaceAdded {
        name: String,
    },
    NamespaceGone {
        name: String,
    },
    NamespaceLabels {
        name: String,
        labels: BTreeMap<String, String>,
    },
}

impl FactChange {
    /// Worth an info line (the rest, node counts and namespaces coming and going, is debug).
    pub fn notable(&self) -> bool {
        !matches!(
            self,
            FactChange::Nodes { .. }
                | FactChange::NamespaceAdded { .. }
                | FactChange::NamespaceGone { .. }
        )
    }
}

impl fmt::Display for FactChange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let opt = |o: &Option<String>| o.clone().unwrap_or_else(|| "unknown".into());
        match self {
            FactChange::ServerVersion { from, to } => {
                write!(f, "API server version {} -> {}", opt(from), opt(to))
            }
            FactChange::BuildAppeared(b) => write!(f, "Windows build {} appeared", b.named()),
            FactChange::BuildGone(b) => write!(f, "no Windows node of build {} left", b.named()),
            FactChange::GroupAdded { group, nodes } => {
                write!(f, "node group added: {group} ({nodes} nodes)")
            }
            FactChange::GroupGone { group } => write!(f, "node group gone: {group}"),
            FactChange::TaintsChanged {
                group,
                from,
                to,
                nodes,
            } => write!(
                f,
                "node group taints changed: [{}] -> [{}] ({nodes} nodes: {group})",
                from.join(", "),
                to.join(", ")
            ),
            FactChange::Nodes { group, from, to } => {
                write!(f, "node group {group}: {from} -> {to} nodes")
            }
            FactChange::RuntimeClassAdded {
                name,
                handler,
                hyperv,
            } => write!(
                f,
                "RuntimeClass {name} added (handler {handler}{})",
                if *hyperv { ", Hyper-V isolation" } else { "" }
            ),
            FactChange::RuntimeClassChanged { name, handler } => {
                write!(f, "RuntimeClass {name} changed (handler {handler})")
            }
            FactChange::RuntimeClassGone { name } => write!(f, "RuntimeClass {name} deleted"),
            FactChange::NamespaceAdded { name } => write!(f, "namespace {name} added"),
            FactChange::NamespaceGone { name } => write!(f, "namespace {name} deleted"),
            FactChange::NamespaceLabels { name, labels } => {
                let l: Vec<String> = labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
                write!(f, "namespace {name} labels now [{}]", l.join(", "))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::windows::Isolation;
    use crate::windows::{WS2019, WS2022};
    use serde_json::json;

    fn node(v: serde_json::Value) -> Node {
        serde_json::from_value(v).unwrap()
    }

    fn win(name: &str, build: &str, taints: serde_json::Value) -> Node {
        node(json!({"metadata": {"name": name, "labels": {
                "kubernetes.io/os": "windows", "kubernetes.io/hostname": name,
                "node.kubernetes.io/windows-build": build}},
            "spec": {"taints": taints},
            "status": {"nodeInfo": {"operatingSystem": "windows",
                "kernelVersion": format!("{build}.1"), "osImage": "Windows Server Datacenter",
                "containerRuntimeVersion": "containerd://1.7.20"}}}))
    }

    fn linux(name: &str) -> Node {
        node(json!({"metadata": {"name": name, "labels": {
                "kubernetes.io/os": "linux", "kubernetes.io/hostname": name}},
            "status": {"nodeInfo": {"operatingSystem": "linux", "kernelVersion": "6.1.0",
                "containerRuntimeVersion": "containerd://1.7.20"}}}))
    }

    #[test]
    fn groups_by_shape_without_hostname_and_condition_taints() {
        let t19 = json!([{"key": "os", "value": "windows", "effect": "NoSchedule"},
                         {"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}]);
        let nodes = vec![
            win("w19a", "10.0.17763", t19.clone()),
            // the same but without the condition taint: same group
            win(
                "w19b",
                "10.0.17763",
                json!([{"key": "os", "value": "windows", "effect": "NoSchedule"}]),
            ),
            win("w22a", "10.0.20348", json!([])),
            win(
                "w22b",
                "10.0.20348",
                json!([{"key": "node.kubernetes.io/unreachable", "effect": "NoExecute"}]),
            ),
            // GKE's taint is a fact
            win(
                "w22g",
                "10.0.20348",
                json!([{"key": "node.kubernetes.io/os", "value": "windows", "effect": "NoSchedule"}]),
            ),
            linux("l1"),
            linux("l2"),
        ];
        let f = ClusterFacts::derive(&nodes, &[], &[], None);
        assert_eq!(f.groups.len(), 4, "{:#?}", f.groups);
        // Windows first, ltsc2019 before ltsc2022.
        let g = &f.groups[0];
        assert_eq!((g.os.clone(), g.build), (NodeOs::Windows, Some(WS2019)));
        assert_eq!(
            g.taints,
            vec![Taint::parse("os=windows:NoSchedule").unwrap()]
        );
        assert_eq!(g.hostnames().collect::<Vec<_>>(), ["w19a", "w19b"]);
        assert!(!g.labels.contains_key(HOSTNAME_LABEL));
        assert_eq!(g.runtime.as_deref(), Some("containerd://1.7.20"));
        let w22: Vec<_> = f
            .groups
            .iter()
            .filter(|g| g.build == Some(WS2022))
            .collect();
        assert_eq!(w22.len(), 2);
        assert_eq!(w22[0].count() + w22[1].count(), 3);
        assert!(
            w22.iter().any(|g| g.taints
                == vec![Taint::parse("node.kubernetes.io/os=windows:NoSchedule").unwrap()])
        );
        assert_eq!(f.groups[3].os, NodeOs::Linux);
        assert_eq!(f.groups[3].count(), 2);
        assert_eq!(f.windows_builds(), [WS2019, WS2022].into_iter().collect());
        assert_eq!(f.windows_node_count(), 5);
        assert_eq!(f.node_count(), 7);
        assert_eq!(
            f.windows_nodes_by_build(),
            [(Some(WS2019), 2), (Some(WS2022), 3)].into_iter().collect()
        );
        assert!(f.unknown_builds.is_empty());
    }

    #[test]
    fn build_sources_and_garbage() {
        let obs = |v: serde_json::Value| NodeObservation::from_node(&node(v));
        // label wins over nodeInfo
        let o = obs(
            json!({"metadata": {"name": "a", "labels": {"kubernetes.io/os": "windows",
            "node.kubernetes.io/windows-build": "10.0.17763"}},
            "status": {"nodeInfo": {"kernelVersion": "10.0.20348.1"}}}),
        );
        assert_eq!(o.shape.build, Some(WS2019));
        // garbage label: kernelVersion
        let o = obs(
            json!({"metadata": {"name": "b", "labels": {"kubernetes.io/os": "windows",
            "node.kubernetes.io/windows-build": "foo"}},
            "status": {"nodeInfo": {"kernelVersion": "10.0.20348.2582"}}}),
        );
        assert_eq!(o.shape.build, Some(WS2022));
        assert_eq!(o.build_problem, None);
        // no label, osImage only
        let o = obs(
            json!({"metadata": {"name": "c", "labels": {"kubernetes.io/os": "windows"}},
            "status": {"nodeInfo": {"osImage": "Windows Server 2019 Datacenter"}}}),
        );
        assert_eq!(o.shape.build, Some(WS2019));
        // garbage and no nodeInfo: unknown, with the reason
        let o = obs(
            json!({"metadata": {"name": "d", "labels": {"kubernetes.io/os": "windows",
            "node.kubernetes.io/windows-build": "foo"}}}),
        );
        assert_eq!(o.shape.build, None);
        let p = o.build_problem.unwrap();
        assert!(
            p.contains("\"foo\" is not a Windows build") && p.contains("no status.nodeInfo"),
            "{p}"
        );
        // no labels, no status, no spec, no name: an unknown-OS node, no panic
        let o = obs(json!({"metadata": {}}));
        assert_eq!(o.shape.os, NodeOs::Unknown);
        assert_eq!(o.build_problem, None);
        // OS from beta label, then nodeInfo
        let o =
            obs(json!({"metadata": {"name": "e", "labels": {"beta.kubernetes.io/os": "linux"}}}));
        assert_eq!(o.shape.os, NodeOs::Linux);
        let o = obs(
            json!({"metadata": {"name": "f"}, "status": {"nodeInfo": {"operatingSystem": "Windows", "kernelVersion": "10.0.26100.1"}}}),
        );
        assert_eq!(
            (o.shape.os, o.shape.build),
            (NodeOs::Windows, Some(crate::windows::WS2025))
        );
        // a Linux kernel version never becomes a build
        let o = obs(
            json!({"metadata": {"name": "g", "labels": {"kubernetes.io/os": "linux"}},
            "status": {"nodeInfo": {"kernelVersion": "10.0.20348"}}}),
        );
        assert_eq!(o.shape.build, None);
        // taint values: empty is absent
        let o = obs(json!({"metadata": {"name": "h"}, "spec": {"taints": [
            {"key": "k", "value": "", "effect": "NoSchedule"}, {"key": "k", "effect": "NoSchedule"}]}}));
        assert_eq!(o.shape.taints, vec![Taint::parse("k:NoSchedule").unwrap()]);
    }

    #[test]
    fn unknown_builds_are_listed_and_grouped_apart() {
        let bad = node(
            json!({"metadata": {"name": "bad", "labels": {"kubernetes.io/os": "windows",
            "node.kubernetes.io/windows-build": "foo"}}}),
        );
        let f = ClusterFacts::derive(&[bad, win("ok", "10.0.20348", json!([]))], &[], &[], None);
        assert_eq!(f.unknown_builds.keys().collect::<Vec<_>>(), ["bad"]);
        assert_eq!(f.windows_nodes_by_build().get(&None), Some(&1));
        assert_eq!(f.windows_builds(), [WS2022].into_iter().collect());
    }

    #[test]
    fn index_ignores_heartbeats_and_tracks_moves() {
        let mut idx = NodeIndex::default();
        let a = win("a", "10.0.20348", json!([]));
        assert!(idx.upsert(NodeObservation::from_node(&a)));
        // a status update that changes nothing the facts keep
        let mut hb = a.clone();
        hb.status.as_mut().unwrap().conditions = Some(vec![]);
        hb.metadata.resource_version = Some("99".into());
        assert!(!idx.upsert(NodeObservation::from_node(&hb)));
        // the not-ready taint coming and going is not a change either
        let nr = win(
            "a",
            "10.0.20348",
            json!([{"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}]),
        );
        assert!(!idx.upsert(NodeObservation::from_node(&nr)));
        // a real taint moves the node to another group
        let t = win(
            "a",
            "10.0.20348",
            json!([{"key": "os", "value": "windows", "effect": "NoSchedule"}]),
        );
        assert!(idx.upsert(NodeObservation::from_node(&t)));
        assert_eq!(idx.groups().len(), 1);
        assert_eq!(idx.groups()[0].taints.len(), 1);
        assert!(idx.remove("a"));
        assert!(!idx.remove("a"));
        assert!(idx.groups().is_empty());
    }

    #[test]
    fn runtime_classes_and_hyperv() {
        let rc = |v: serde_json::Value| -> RuntimeClass { serde_json::from_value(v).unwrap() };
        let classes = vec![
            rc(
                json!({"metadata": {"name": "hv"}, "handler": "runhcs-wcow-hypervisor",
                "scheduling": {"nodeSelector": {"kubernetes.io/os": "windows"},
                    "tolerations": [{"key": "os", "operator": "Equal", "value": "windows", "effect": "NoSchedule"}]}}),
            ),
            rc(
                json!({"metadata": {"name": "windows-2004"}, "handler": "runhcs-wcow-hypervisor-19041"}),
            ),
            rc(json!({"metadata": {"name": "proc"}, "handler": "runhcs-wcow-process"})),
            rc(json!({"metadata": {"name": "gvisor"}, "handler": "runsc"})),
        ];
        let f = ClusterFacts::derive(&[], &classes, &[], None);
        let hv: Vec<&str> = f
            .hyperv_runtime_classes()
            .map(|r| r.name.as_str())
            .collect();
        assert_eq!(hv, ["hv", "windows-2004"]);
        assert_eq!(
            f.runtime_classes["windows-2004"].hyperv_guest_build,
            Some(Build(19041))
        );
        assert_eq!(f.runtime_classes["hv"].tolerations.len(), 1);
        assert_eq!(
            f.runtime_classes["hv"].node_selector["kubernetes.io/os"],
            "windows"
        );
        assert_eq!(
            f.runtime_classes["proc"].isolation,
            Some(Isolation::Process)
        );
        assert_eq!(f.runtime_classes["gvisor"].isolation, None);
    }

    #[test]
    fn namespaces_version_and_placements() {
        let ns: Namespace = serde_json::from_value(json!({"metadata": {"name": "apps",
            "labels": {"pod-security.kubernetes.io/enforce": "restricted"}}}))
        .unwrap();
        let info: Info = serde_json::from_value(json!({"major": "1", "minor": "32+",
            "gitVersion": "v1.32.0-beta.0+cd13ec4ae44e"}))
        .unwrap();
        let nodes = vec![
            win(
                "w",
                "10.0.20348",
                json!([{"key": "os", "value": "windows", "effect": "NoSchedule"}]),
            ),
            linux("l"),
        ];
        let f = ClusterFacts::derive(&nodes, &[], &[ns], Some(&info));
        assert_eq!(
            f.server_version.as_ref().unwrap().version,
            KubeVersion::new(1, 32)
        );
        assert_eq!(
            f.namespace_labels("apps").unwrap()["pod-security.kubernetes.io/enforce"],
            "restricted"
        );
        let spec = json!({"containers": [{"name": "a", "image": "x"}]});
        let fits: Vec<bool> = f
            .placements(&spec)
            .iter()
            .map(|(_, fit)| fit.fits())
            .collect();
        assert_eq!(fits, [false, true], "untolerated on Windows, fits on Linux");
    }

    /// The revision of a Windows node's kernelVersion is kept (WIN510), and splits groups.
    #[test]
    fn windows_nodes_keep_their_revision() {
        let node = |kernel: &str, label: Option<&str>| {
            let mut labels = json!({"kubernetes.io/os": "windows"});
            if let Some(l) = label {
                labels["node.kubernetes.io/windows-build"] = json!(l);
            }
            let n: Node =
                serde_json::from_value(json!({"metadata": {"name": "w", "labels": labels},
                "status": {"nodeInfo": {"kernelVersion": kernel}}}))
                .unwrap();
            NodeObservation::from_node(&n).shape.revision
        };
        assert_eq!(node("10.0.20348.2849", None), Some(2849));
        assert_eq!(node("10.0.20348.2849", Some("10.0.20348")), Some(2849));
        // A label naming another build than the kernel: the revision is not that build's.
        assert_eq!(node("10.0.20348.2849", Some("10.0.17763")), None);
        assert_eq!(node("10.0.20348", None), None);
    }

    #[test]
    fn changes_are_described() {
        let t = json!([{"key": "os", "value": "windows", "effect": "NoSchedule"}]);
        let before = ClusterFacts::derive(
            &[
                win("a", "10.0.20348", json!([])),
                win("b", "10.0.20348", json!([])),
                linux("l"),
            ],
            &[],
            &[],
            None,
        );
        let rc: RuntimeClass = serde_json::from_value(
            json!({"metadata": {"name": "hv"}, "handler": "runhcs-wcow-hypervisor"}),
        )
        .unwrap();
        let after = ClusterFacts::derive(
            &[
                win("a", "10.0.20348", t.clone()),
                win("b", "10.0.20348", t),
                win("c", "10.0.17763", json!([])),
            ],
            &[rc],
            &[],
            None,
        );
        let msgs: Vec<String> = after
            .changes_from(&before)
            .iter()
            .map(|c| c.to_string())
            .collect();
        assert!(
            msgs.contains(&"Windows build Windows Server 2019 (10.0.17763) appeared".to_string()),
            "{msgs:#?}"
        );
        assert!(
            msgs.iter().any(|m| m
                .starts_with("node group taints changed: [] -> [os=windows:NoSchedule] (2 nodes")),
            "{msgs:#?}"
        );
        assert!(
            msgs.iter()
                .any(|m| m.starts_with("node group added: windows 10.0.17763")),
            "{msgs:#?}"
        );
        assert!(
            msgs.iter().any(|m| m.starts_with("node group gone: linux")),
            "{msgs:#?}"
        );
        assert!(
            msgs.contains(
                &"RuntimeClass hv added (handler runhcs-wcow-hypervisor, Hyper-V isolation)"
                    .to_string()
            ),
            "{msgs:#?}"
        );
        assert!(
            !msgs
                .iter()
                .any(|m| m.starts_with("node group gone: windows")),
            "{msgs:#?}"
        );
        assert!(after.changes_from(&after.clone()).is_empty());
        // One node of two tainted: a taint change of one node, the rest of the group stays.
        let one = ClusterFacts::derive(
            &[
                win(
                    "a",
                    "10.0.20348",
                    json!([{"key": "dedicated", "value": "iis", "effect": "NoSchedule"}]),
                ),
                win("b", "10.0.20348", json!([])),
            ],
            &[],
            &[],
            None,
        );
        let msgs: Vec<String> = one
            .changes_from(&before)
            .iter()
            .map(|c| c.to_string())
            .collect();
        assert!(
            msgs.iter().any(|m| m.starts_with(
                "node group taints changed: [] -> [dedicated=iis:NoSchedule] (1 nodes"
            )),
            "{msgs:#?}"
        );
        assert!(
            msgs.iter().any(|m| m.starts_with(
                "node group windows 10.0.20348 taints [] containerd://1.7.20: 2 -> 1 nodes"
            )),
            "{msgs:#?}"
        );
        assert!(
            !msgs.iter().any(|m| m.starts_with("node group added")),
            "{msgs:#?}"
        );
        assert_eq!(after, after.clone());
    }
}
