//! Where a pod can run: the node groups its `nodeSelector`, required node affinity, tolerations
//! and RuntimeClass let it land on ([`schedule::fit`] on every group of [`Target::nodes`]).
//!
//! The rules that need node facts ask this module, not the target's configured lists:
//!
//! * WIN007: does the pod tolerate the taints of some Windows node it can select?
//! * WIN502 / WIN005 / WIN006: which Windows builds can the pod land on?
//! * WIN001: can the pod land on a node that is not Windows?
//! * WIN010: does the pod select any Windows node at all?
//! * WIN011 (and the webhook's Linux guard, its fix): can a pod that is not Windows land on a
//!   Windows node ([`windows_landing`])?
//!
//! Offline (no observed nodes) the configured builds and taints stand for the Windows nodes, as
//! before. With observed nodes but no Windows node among them (a pool scaled to zero, or not
//! added yet), the configured target is the fallback, and rules say so and do not deny
//! ([`Placement::unobserved_note`]).

use std::sync::Arc;

use std::collections::BTreeMap;

use super::context::Context;
use super::labels::{
    AKS_OS_SKU_LABEL, ARCH_LABEL, BETA_ARCH_LABEL, BETA_OS_LABEL, BUILD_LABEL, OS_LABEL,
};
use super::nodes::{NodeGroup, NodeOs, RuntimeClassFacts, Taint};
use super::platform::Platform;
use super::schedule::{self, Fit, Toleration, TolerationRef};
use super::target::Target;
use super::windows::{self, Build, Isolation};
use super::workload::PodSite;

/// What the node facts of an evaluation are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeFacts {
    /// Offline: the configured Windows builds and taints stand for the nodes.
    Configured,
    /// Observed nodes, some of them Windows: the rules judge by them.
    Observed,
    /// Observed nodes, none of them Windows: the configured target is the fallback, and node
    /// rules do not deny.
    NoWindowsNodes,
}

/// The end of a node rule's message when the cluster shows no Windows node
/// ([`Placement::unobserved_note`]); front ends with short lines (admission warnings) say it
/// once by itself.
pub const UNOBSERVED_NOTE: &str =
    " (no Windows node is in the cluster yet: checked against the configured target, not denied)";

/// How one pod fares on the observed node groups.
#[derive(Debug, Clone)]
pub struct Placement {
    pub facts: NodeFacts,
    /// The observed groups (none offline) and the pod's fit on each, in the same order.
    groups: Option<Arc<[NodeGroup]>>,
    fits: Vec<Fit>,
    /// The Windows build the pod selects with `node.kubernetes.io/windows-build` or AKS's
    /// `kubernetes.azure.com/os-sku` (its own nodeSelector, else its RuntimeClass's):
    /// [`selected_build`].
    pinned: Option<Build>,
}

/// Two placements are equal when the pod fits the same groups of the same observed nodes (the
/// target's, compared by identity) the same way and pins the same build.
impl PartialEq for Placement {
    fn eq(&self, other: &Placement) -> bool {
        let same_groups = match (&self.groups, &other.groups) {
            (None, None) => true,
            (Some(a), Some(b)) => std::sync::Arc::ptr_eq(a, b),
            _ => false,
        };
        self.facts == other.facts
            && same_groups
            && self.fits == other.fits
            && self.pinned == other.pinned
    }
}

impl Placement {
    /// Compute the pod's fit on every observed group of `target` (its RuntimeClass, when the
    /// context knows it, applied as the RuntimeClass admission plugin does).
    pub fn of(site: &PodSite, target: &Target, context: &Context) -> Placement {
        let rc = runtime_class(site, context);
        let pinned = selected_build(|k| site.node_selector(k)).or_else(|| {
            rc.and_then(|rc| selected_build(|k| rc.node_selector.get(k).map(String::as_str)))
        });
        let Some(groups) = &target.nodes else {
            return Placement {
                facts: NodeFacts::Configured,
                groups: None,
                fits: Vec::new(),
                pinned,
            };
        };
        let fits = groups
            .iter()
            .map(|g| schedule::fit(site.spec, g, rc))
            .collect();
        let facts = if groups.iter().any(NodeGroup::is_windows) {
            NodeFacts::Observed
        } else {
            NodeFacts::NoWindowsNodes
        };
        Placement {
            facts,
            groups: Some(groups.clone()),
            fits,
            pinned,
        }
    }

    /// Whether the rules judge by observed Windows nodes.
    pub fn observed(&self) -> bool {
        self.facts == NodeFacts::Observed
    }

    fn groups(&self) -> impl Iterator<Item = (&NodeGroup, &Fit)> {
        self.groups.iter().flat_map(|g| g.iter()).zip(&self.fits)
    }

    /// Windows groups the pod's selectors pick (whatever their taints), with the fit.
    pub fn windows_selected(&self) -> Vec<(&NodeGroup, &Fit)> {
        self.groups()
            .filter(|(g, f)| g.is_windows() && **f != Fit::NotSelected)
            .collect()
    }

    /// Windows groups the pod can land on (selected and every blocking taint tolerated).
    pub fn windows_fitting(&self) -> Vec<&NodeGroup> {
        self.groups()
            .filter(|(g, f)| g.is_windows() && f.fits())
            .map(|(g, _)| g)
            .collect()
    }

    /// Groups that are not Windows (Linux, other or unknown OS) the pod can land on.
    pub fn other_fitting(&self) -> Vec<&NodeGroup> {
        self.groups()
            .filter(|(g, f)| !g.is_windows() && f.fits())
            .map(|(g, _)| g)
            .collect()
    }

    /// Every observed Windows group.
    pub fn windows_groups(&self) -> Vec<&NodeGroup> {
        self.groups()
            .filter(|(g, _)| g.is_windows())
            .map(|(g, _)| g)
            .collect()
    }

    /// The Windows hosts whose builds the pod's images must match: observed, the groups it can
    /// land on, or when it tolerates none of those it selects, the selected ones (WIN007 says
    /// why it cannot land there); offline, the configured builds. `None` when nothing can be
    /// said: the pod selects no observed Windows node (WIN010), or one of the candidates' builds
    /// is unknown.
    pub fn host_builds(&self, target: &Target) -> Option<HostBuilds> {
        if !self.observed() {
            // Offline, a pod pinned to a build the target lacks lands on no target node
            // (WIN006 says so, and checks its images against that build).
            if self.pinned.is_some_and(|b| {
                !target.windows_builds.is_empty() && !target.windows_builds.contains(&b)
            }) {
                return None;
            }
            return Some(HostBuilds {
                builds: target.windows_builds.clone(),
                observed: false,
                nodes: 0,
            });
        }
        let mut candidates = self.windows_fitting();
        if candidates.is_empty() {
            candidates = self
                .windows_selected()
                .into_iter()
                .map(|(g, _)| g)
                .collect();
        }
        if candidates.is_empty() || candidates.iter().any(|g| g.build.is_none()) {
            return None;
        }
        let mut builds: Vec<Build> = candidates.iter().filter_map(|g| g.build).collect();
        builds.sort();
        builds.dedup();
        Some(HostBuilds {
            builds,
            observed: true,
            nodes: candidates.iter().map(|g| g.count()).sum(),
        })
    }

    /// The note node rules add when the cluster shows no Windows node, so that they are
    /// checked against the configured target and do not deny.
    pub fn unobserved_note(&self) -> Option<&'static str> {
        (self.facts == NodeFacts::NoWindowsNodes).then_some(UNOBSERVED_NOTE)
    }
}

/// How a pod reaches a Windows node of the target ([`windows_landing`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WindowsLanding {
    /// Observed Windows nodes its selectors pick and whose taints it tolerates: how many, and
    /// one group described.
    Observed { nodes: usize, example: String },
    /// The configured Windows nodes (offline): the taints it tolerates (none: they are
    /// untainted, as on AKS and EKS).
    Configured { tolerated: Vec<Taint> },
    /// The configured taints are winlint's assumption, and a key-less `operator: Exists`
    /// toleration of the pod tolerates them, as it tolerates every taint.
    Swallowed,
}

impl WindowsLanding {
    /// Where the pod lands, for messages: `2 Windows nodes of the cluster (…)`, `the target's
    /// Windows nodes, which are untainted (…)`, …
    pub fn describe(&self) -> String {
        match self {
            WindowsLanding::Observed { nodes, example } => format!(
                "{nodes} Windows node{} of the cluster ({example})",
                if *nodes == 1 { "" } else { "s" }
            ),
            WindowsLanding::Configured { tolerated } if tolerated.is_empty() => {
                "the target's Windows nodes, which are untainted (as on AKS and EKS)".to_string()
            }
            WindowsLanding::Configured { tolerated } => format!(
                "the target's Windows nodes, whose taint{} {} it tolerates",
                if tolerated.len() == 1 { "" } else { "s" },
                tolerated
                    .iter()
                    .map(|t| t.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            WindowsLanding::Swallowed => {
                "a Windows node (a toleration without a key and with operator Exists tolerates every taint, the Windows nodes' included)".to_string()
            }
        }
    }
}

/// Can a pod land on a Windows node of the target? The scheduler's predicate
/// ([`schedule::fit`], with the pod's RuntimeClass) on the observed Windows groups; offline, on
/// the Windows nodes the configured target stands for ([`configured_windows_nodes`]). When the
/// taints are only assumed ([`Target::taints_assumed`]) a toleration of one named taint proves
/// nothing about the real nodes' taints: only a toleration that swallows every taint (no key,
/// `operator: Exists`) lets the pod land there. Observed nodes without any Windows node: `None`
/// (the pod can land on none today).
pub fn windows_landing(
    site: &PodSite,
    target: &Target,
    context: &Context,
    placement: &Placement,
) -> Option<WindowsLanding> {
    match placement.facts {
        NodeFacts::Observed => {
            let fitting = placement.windows_fitting();
            let first = fitting.first()?;
            Some(WindowsLanding::Observed {
                nodes: fitting.iter().map(|g| g.count()).sum(),
                example: first.describe(),
            })
        }
        NodeFacts::NoWindowsNodes => None,
        NodeFacts::Configured => {
            let rc = runtime_class(site, context);
            let nodes = configured_windows_nodes(target);
            if !target.taints_assumed() {
                return nodes
                    .iter()
                    .any(|g| schedule::fit(site.spec, g, rc).fits())
                    .then(|| WindowsLanding::Configured {
                        tolerated: target.windows_node_taints().to_vec(),
                    });
            }
            let swallowing: Vec<TolerationRef> = tolerations(site, context)
                .into_iter()
                .filter(|t| t.key.is_empty() && t.operator == "Exists")
                .collect();
            let lands = !swallowing.is_empty()
                && nodes.iter().any(|g| {
                    schedule::fit(site.spec, g, rc) != Fit::NotSelected
                        && untolerated(g, site.spec, &swallowing).is_empty()
                });
            lands.then_some(WindowsLanding::Swallowed)
        }
    }
}

/// The Windows nodes the configured target stands for, one per configured build, as the
/// scheduler would see them: the labels the kubelet sets on every Windows node (both OS labels,
/// both arch labels, `amd64`, the build label), AKS's OS SKU when the platform is AKS, and the
/// target's Windows taints. A selector on any other label (a node pool's name) selects none of
/// them: offline winlint cannot know which pools are Windows.
pub fn configured_windows_nodes(target: &Target) -> Vec<NodeGroup> {
    let node = |build: Option<Build>| {
        let mut labels = BTreeMap::new();
        for key in [OS_LABEL, BETA_OS_LABEL] {
            labels.insert(key.to_string(), "windows".to_string());
        }
        // The kubelet still sets the deprecated beta arch label beside the stable one
        // (`initialNode`): flannel's per-arch DaemonSets select on it.
        for key in [ARCH_LABEL, BETA_ARCH_LABEL] {
            labels.insert(key.to_string(), "amd64".to_string());
        }
        if let Some(b) = build {
            labels.insert(BUILD_LABEL.to_string(), b.to_string());
            if target.platform == Some(Platform::Aks)
                && let Some(sku) = aks_os_sku(b)
            {
                labels.insert(AKS_OS_SKU_LABEL.to_string(), sku.to_string());
            }
        }
        NodeGroup {
            os: NodeOs::Windows,
            build,
            revision: build.and_then(|b| target.windows_revisions.get(&b).copied()),
            taints: target.windows_node_taints().to_vec(),
            labels,
            runtime: None,
            nodes: [("windows-node".to_string(), None)].into_iter().collect(),
        }
    };
    if target.windows_builds.is_empty() {
        return vec![node(None)];
    }
    target
        .windows_builds
        .iter()
        .map(|&b| node(Some(b)))
        .collect()
}

/// AKS's OS SKUs of Windows nodes that imply one build (AKS agent pool `osSKU`: "Windows2019
/// only supports Windows2019 containers; it cannot run Windows2022 containers and vice versa").
/// `WindowsAnnual` is left out: its nodes' build follows the Annual Channel release of the node
/// image (23H2, then later ones), not the SKU.
const AKS_WINDOWS_SKUS: [(&str, Build); 3] = [
    ("Windows2019", windows::WS2019),
    ("Windows2022", windows::WS2022),
    ("Windows2025", windows::WS2025),
];

/// AKS's `kubernetes.azure.com/os-sku` of a Windows node of `build` (also `winlint plan`'s
/// nodes after a move).
pub fn aks_os_sku(build: Build) -> Option<&'static str> {
    AKS_WINDOWS_SKUS
        .iter()
        .find(|(_, b)| *b == build)
        .map(|(sku, _)| *sku)
}

/// The Windows build an AKS `kubernetes.azure.com/os-sku` value implies (`Windows2019` →
/// 10.0.17763, `Windows2022` → 10.0.20348, `Windows2025` → 10.0.26100); `None` for the Linux
/// SKUs and `WindowsAnnual`. Label values are compared exactly, as the scheduler does.
pub fn os_sku_build(value: &str) -> Option<Build> {
    AKS_WINDOWS_SKUS
        .iter()
        .find(|(sku, _)| *sku == value)
        .map(|(_, b)| *b)
}

/// The Windows build a node selector (`get`: the value of a key) pins: a
/// `node.kubernetes.io/windows-build` value of the kubelet's form (`10.0.NNNNN`), else the build
/// an AKS OS SKU implies.
pub fn selected_build<'a>(get: impl Fn(&str) -> Option<&'a str>) -> Option<Build> {
    get(BUILD_LABEL)
        .filter(|v| v.starts_with("10.0.") && v.split('.').count() == 3)
        .and_then(windows::parse_build)
        .or_else(|| get(AKS_OS_SKU_LABEL).and_then(os_sku_build))
}

/// The builds of the Windows nodes a pod can land on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostBuilds {
    pub builds: Vec<Build>,
    /// From observed nodes (else the configured target).
    pub observed: bool,
    /// How many observed nodes run them.
    pub nodes: usize,
}

impl HostBuilds {
    /// `the Windows nodes this pod can run on (3 nodes)` / `the target nodes`.
    pub fn who(&self) -> String {
        if self.observed {
            format!(
                "the Windows nodes this pod can select ({} node{})",
                self.nodes,
                if self.nodes == 1 { "" } else { "s" }
            )
        } else {
            "the target nodes".to_string()
        }
    }
}

/// The pod's RuntimeClass, when the context knows it.
pub fn runtime_class<'c>(site: &PodSite, context: &'c Context) -> Option<&'c RuntimeClassFacts> {
    context.runtime_classes.get(site.str("/runtimeClassName")?)
}

/// The pod's tolerations with its RuntimeClass's.
pub fn tolerations<'a>(site: &PodSite<'a>, context: &'a Context) -> Vec<TolerationRef<'a>> {
    let mut tols = schedule::pod_tolerations(site.spec);
    if let Some(rc) = runtime_class(site, context) {
        tols.extend(rc.tolerations.iter().map(Toleration::as_ref));
    }
    tols
}

/// The blocking taints of `group` ([`schedule::blocks`]: NoSchedule and NoExecute, NoExecute
/// only for a pod that names its node) that `tolerations` do not tolerate.
pub fn untolerated<'g>(
    group: &'g NodeGroup,
    spec: &serde_json::Value,
    tolerations: &[TolerationRef],
) -> Vec<&'g Taint> {
    schedule::untolerated(&group.taints, spec, tolerations).collect()
}

/// A known Hyper-V RuntimeClass (handler `runhcs-wcow-hypervisor[-BUILD]`) under which this pod
/// could run images of `builds`: the class's scheduling lands the pod (with its own selectors and
/// tolerations) on observed Windows nodes of a build that can host them all in a utility VM (the
/// host's build or newer), or, offline, one of the target's builds can. The first by name.
pub fn hyperv_runtime_class_for<'c>(
    site: &PodSite,
    target: &Target,
    context: &'c Context,
    builds: &[Build],
) -> Option<&'c str> {
    let hosts_all = |h: Build| {
        builds
            .iter()
            .all(|&b| windows::compatible(b, h, Isolation::Hyperv))
    };
    context
        .runtime_classes
        .values()
        .filter(|rc| rc.is_hyperv())
        .filter(|rc| {
            // A handler that pins the utility VM's build runs only images that build runs.
            rc.hyperv_guest_build.is_none_or(|g| {
                builds
                    .iter()
                    .all(|&b| windows::compatible(b, g, Isolation::Process))
            })
        })
        .filter(|rc| match target.nodes.as_deref() {
            Some(groups) => groups.iter().filter(|g| g.is_windows()).any(|g| {
                schedule::fit(site.spec, g, Some(rc)).fits() && g.build.is_some_and(hosts_all)
            }),
            None => target.windows_builds.iter().any(|&h| hosts_all(h)),
        })
        .map(|rc| rc.name.as_str())
        .min() // the context is a hash map: the same answer every time
}
