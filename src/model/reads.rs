//! Which parts of a pod a rule reads ([`Reads`], in each rule's [`RuleMeta`]), and which parts a
//! patch touches ([`touched`]): after the fixer patches a pod, only the rules whose reads
//! overlap what the patch touched are run again; the others' findings are carried over
//! (`engine::lint_since`).
//!
//! The areas are the parts of a PodSpec the webhook's fixes change (placement, `spec.os`, host
//! namespaces, security contexts, containers, volumes, pod labels) and the OS classification's
//! evidence. A patch that touches anything else (an annotation, `dnsPolicy`, the workload's own
//! fields) touches [`Reads::ALL`]: every rule runs again, so a rule need not declare a field
//! outside the areas. What a rule reads through a helper counts: [`Eval::placement`] and
//! [`Eval::host_builds`] read [`Area::Placement`] (derived from [`Reads::PLACEMENT`]),
//! [`Eval::isolation`] the RuntimeClass, [`Eval::images`] the containers,
//! [`Eval::linux_only_fields`] the security contexts, the host namespaces and the containers,
//! [`Classification::reason`] and the signals the evidence.
//!
//! [`RuleMeta`]: super::RuleMeta
//! [`Eval::placement`]: super::Eval::placement
//! [`Eval::host_builds`]: super::Eval::host_builds
//! [`Eval::images`]: super::Eval::images
//! [`Eval::isolation`]: super::Eval::isolation
//! [`Eval::linux_only_fields`]: super::Eval::linux_only_fields
//! [`Classification::reason`]: super::classify::Classification::reason

use super::placement::Placement;
use super::workload::PodSite;

/// One part of a pod a rule may read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u16)]
pub enum Area {
    /// `spec.nodeSelector`.
    NodeSelector = 1 << 0,
    /// `spec.affinity`.
    Affinity = 1 << 1,
    /// `spec.tolerations`.
    Tolerations = 1 << 2,
    /// `spec.os`.
    Os = 1 << 3,
    /// `spec.runtimeClassName`.
    RuntimeClass = 1 << 4,
    /// `spec.hostNetwork`, `hostPID`, `hostIPC`, `shareProcessNamespace`.
    HostNamespaces = 1 << 5,
    /// `spec.securityContext`.
    PodSecurityContext = 1 << 6,
    /// `spec.containers`, `initContainers`, `ephemeralContainers`: everything in them (images,
    /// commands, env, mounts, their security contexts).
    Containers = 1 << 7,
    /// `spec.volumes`.
    Volumes = 1 << 8,
    /// The pod's labels (`metadata.labels`, the template's for a workload).
    Labels = 1 << 9,
    /// The OS classification's evidence (its signals, [`reason`], [`declared_by`]), beyond the
    /// verdict (OS and strength), which every rule depends on and which, when it changes, makes
    /// every rule run again.
    ///
    /// [`reason`]: super::classify::Classification::reason
    /// [`declared_by`]: super::classify::Classification::declared_by
    Evidence = 1 << 10,
    /// Where the pod can land as [`Eval::placement`] computes it ([`Placement`]: the Windows
    /// builds it can run on, its build pin, its fit on each observed node group), beyond the
    /// fields it is computed from ([`Reads::PLACEMENT`]). Derived like [`Area::Evidence`]: a patch
    /// of those fields touches it only when the placement's value changed, or when nodes are
    /// observed (rules then also fit the pod to other RuntimeClasses:
    /// `placement::hyperv_runtime_class_for`). A rule that reads the placement fields only
    /// through [`Eval::placement`] and [`Eval::host_builds`] declares this instead of them.
    ///
    /// [`Eval::placement`]: super::Eval::placement
    /// [`Eval::host_builds`]: super::Eval::host_builds
    /// [`Placement`]: super::placement::Placement
    Placement = 1 << 11,
}

/// Every area, in declaration order.
pub const AREAS: [Area; 12] = [
    Area::NodeSelector,
    Area::Affinity,
    Area::Tolerations,
    Area::Os,
    Area::RuntimeClass,
    Area::HostNamespaces,
    Area::PodSecurityContext,
    Area::Containers,
    Area::Volumes,
    Area::Labels,
    Area::Evidence,
    Area::Placement,
];

/// A set of areas: what a rule reads, or what a patch touched.
#[derive(Clone, Copy, PartialEq, Eq, Default)]
pub struct Reads(u16);

impl std::fmt::Debug for Reads {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if *self == Reads::ALL {
            return f.write_str("Reads::ALL");
        }
        f.debug_set()
            .entries(AREAS.iter().filter(|a| self.contains(**a)))
            .finish()
    }
}

impl Reads {
    /// Everything (a valid declaration for any rule; what an unknown change touches).
    pub const ALL: Reads = Reads(u16::MAX);
    /// Nothing.
    pub const NONE: Reads = Reads(0);
    /// Where the pod can land ([`Placement`](super::placement::Placement)): its node selector,
    /// affinity, tolerations and RuntimeClass.
    pub const PLACEMENT: Reads = Reads::of(&[
        Area::NodeSelector,
        Area::Affinity,
        Area::Tolerations,
        Area::RuntimeClass,
    ]);
    /// What a rule reads that judges the pod's images by the Windows nodes it can run on:
    /// their builds ([`Area::Placement`]) and the pod's isolation ([`Eval::isolation`] reads
    /// `runtimeClassName`).
    ///
    /// [`Eval::isolation`]: super::Eval::isolation
    pub const HOSTS: Reads = Reads::of(&[Area::Placement, Area::RuntimeClass]);
    /// What the scan for Linux-only fields reads ([`linux_only_fields`](super::pod::linux_only_fields),
    /// `spec.os` deciding whether they are errors): the pod and container securityContexts,
    /// the host namespaces and `spec.os`.
    pub const LINUX_ONLY_FIELDS: Reads = Reads::of(&[
        Area::PodSecurityContext,
        Area::HostNamespaces,
        Area::Containers,
        Area::Os,
    ]);

    /// The set of `areas`.
    pub const fn of(areas: &[Area]) -> Reads {
        let mut bits = 0;
        let mut i = 0;
        while i < areas.len() {
            bits |= areas[i] as u16;
            i += 1;
        }
        Reads(bits)
    }

    /// `self` and `other`.
    pub const fn and(self, other: Reads) -> Reads {
        Reads(self.0 | other.0)
    }

    /// `self` and `area`.
    pub const fn with(self, area: Area) -> Reads {
        Reads(self.0 | area as u16)
    }

    pub const fn contains(self, area: Area) -> bool {
        self.0 & area as u16 != 0
    }

    /// Whether the two sets share an area.
    pub const fn overlaps(self, other: Reads) -> bool {
        self.0 & other.0 != 0
    }

    /// Whether a rule that reads `self` may see a change that touched `touched`: they share an
    /// area, or the change touched something outside every area ([`Reads::ALL`]), which even
    /// a rule that reads no area ([`Reads::NONE`]: only fields outside them) may read.
    pub const fn sees(self, touched: Reads) -> bool {
        touched.0 == Reads::ALL.0 || self.overlaps(touched)
    }

    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }
}

/// The areas of `site` a patch operation on `path` (a JSON pointer from the object's root)
/// touches: its area when the path is inside one, else [`Reads::ALL`] (the site's own pointers,
/// its annotations, any other field, anything outside the site).
pub fn touched(site: &PodSite, path: &str) -> Reads {
    if let Some(rel) = below(path, &site.spec_ptr) {
        let area = match first_token(rel) {
            "nodeSelector" => Area::NodeSelector,
            "affinity" => Area::Affinity,
            "tolerations" => Area::Tolerations,
            "os" => Area::Os,
            "runtimeClassName" => Area::RuntimeClass,
            "hostNetwork" | "hostPID" | "hostIPC" | "shareProcessNamespace" => Area::HostNamespaces,
            "securityContext" => Area::PodSecurityContext,
            "containers" | "initContainers" | "ephemeralContainers" => Area::Containers,
            "volumes" => Area::Volumes,
            _ => return Reads::ALL,
        };
        return Reads::of(&[area]);
    }
    if let Some(rel) = below(path, &site.meta_ptr)
        && first_token(rel) == "labels"
    {
        return Reads::of(&[Area::Labels]);
    }
    Reads::ALL
}

/// `touched` with [`Area::Placement`] when the patch changed where the pod can land: it
/// touched a placement field ([`Reads::PLACEMENT`]) and either nodes are observed (`was` is
/// then `None`) or the placement before it (`was`) differs from the one after it (`now`).
pub fn with_placement<'p>(
    touched: Reads,
    was: Option<&Placement>,
    now: impl FnOnce() -> &'p Placement,
) -> Reads {
    if touched.overlaps(Reads::PLACEMENT) && was.is_none_or(|w| w != now()) {
        touched.with(Area::Placement)
    } else {
        touched
    }
}

/// `path` below `parent` (`/x…` after it), or `None` when it is `parent` itself or elsewhere.
fn below<'p>(path: &'p str, parent: &str) -> Option<&'p str> {
    super::pointer::relative(path, parent).filter(|rel| !rel.is_empty())
}

/// The first reference token of `rel` (`/a/b` → `a`), as written (an escaped token never names
/// an area, so it touches everything).
fn first_token(rel: &str) -> &str {
    let rel = &rel[1..];
    rel.split('/').next().unwrap_or(rel)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::workload::pod_sites;
    use serde_json::json;

    /// A path inside an area touches that area; the site's own pointer, an annotation, another
    /// field or anything outside the site touches everything.
    #[test]
    fn a_patch_touches_the_area_its_path_is_in() {
        let dep = json!({"kind": "Deployment", "metadata": {"name": "d"},
            "spec": {"template": {"metadata": {}, "spec": {}}}});
        let sites = pod_sites(&dep);
        let t = |p: &str| touched(&sites[0], p);
        assert_eq!(
            t("/spec/template/spec/tolerations/-"),
            Reads::of(&[Area::Tolerations])
        );
        assert_eq!(t("/spec/template/spec/os"), Reads::of(&[Area::Os]));
        assert_eq!(
            t("/spec/template/spec/containers/0/env/3/name"),
            Reads::of(&[Area::Containers])
        );
        assert_eq!(
            t("/spec/template/metadata/labels/app"),
            Reads::of(&[Area::Labels])
        );
        for all in [
            "/spec/template/spec",
            "/spec/template/spec/dnsPolicy",
            "/spec/template/spec/osx",
            "/spec/template/specx/os",
            "/spec/template/metadata/annotations/a",
            "/metadata/labels/app",
            "/spec/replicas",
            "",
        ] {
            assert_eq!(t(all), Reads::ALL, "{all}");
        }
        assert!(Reads::PLACEMENT.contains(Area::Tolerations));
        assert!(!Reads::PLACEMENT.overlaps(Reads::of(&[Area::Os, Area::Containers])));
        // A change outside the areas is seen by every rule, one that reads no area included.
        assert!(Reads::NONE.sees(Reads::ALL) && Reads::PLACEMENT.sees(Reads::ALL));
        assert!(!Reads::NONE.sees(Reads::of(&[Area::Os])));
    }
}
