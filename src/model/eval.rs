//! The evaluation context: everything a rule may look at besides the pod site itself.

use super::classify::Classification;
use super::context::Context;
use super::image::ImageInfo;
use super::placement::Placement;
use super::pod::{self, LinuxOnlyField};
use super::target::Target;
use super::windows::{self, Build, Isolation};
use super::workload::{ContainerRef, PodSite};

/// What the object is being evaluated for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    /// Offline lint of a manifest.
    Lint,
    /// Admission of a new object.
    Create,
    /// Admission of a change to an existing object.
    Update,
}

/// Everything a rule may look at besides the pod site itself.
pub struct Eval<'a> {
    pub target: &'a Target,
    pub context: &'a Context,
    pub operation: Operation,
    pub class: Classification,
    /// The containers of the site (init, regular, ephemeral) with their image analyses.
    pub images: Vec<(ContainerRef<'a>, ImageInfo)>,
    /// The site's Linux-only fields, computed once for the rules that need them: all of them,
    /// and those the target rejects once spec.os is set.
    linux_only: std::cell::OnceCell<Vec<LinuxOnlyField<'a>>>,
    blockers: std::cell::OnceCell<Vec<LinuxOnlyField<'a>>>,
    /// Where the pod can run, computed once for the rules that need node facts.
    placement: std::cell::OnceCell<Placement>,
    /// The pod's namespace ([`Eval::in_namespace`]): whose registry facts it may read.
    pub namespace: Option<&'a str>,
}

impl<'a> Eval<'a> {
    pub fn new(
        target: &'a Target,
        context: &'a Context,
        operation: Operation,
        class: Classification,
        images: Vec<(ContainerRef<'a>, ImageInfo)>,
    ) -> Self {
        Eval {
            target,
            context,
            operation,
            class,
            images,
            linux_only: std::cell::OnceCell::new(),
            blockers: std::cell::OnceCell::new(),
            placement: std::cell::OnceCell::new(),
            namespace: None,
        }
    }

    /// `self` for a pod of `namespace` (the registry's facts it reads are those the
    /// namespace's credentials could read).
    pub fn in_namespace(mut self, namespace: Option<&'a str>) -> Self {
        self.namespace = namespace;
        self
    }

    /// The fields the target's API server rejects once `spec.os.name: windows` is set
    /// ([`pod::linux_only_fields`] that are [`rejected`](LinuxOnlyField::rejected)): what blocks
    /// adding `spec.os`. A field the target drops (its feature gate is off) or does not know does
    /// not block it. WIN003, WIN107 and the webhook's spec.os guard ask.
    pub fn linux_only_fields(&self, site: &PodSite<'a>) -> &[LinuxOnlyField<'a>] {
        self.blockers.get_or_init(|| {
            self.present_linux_only_fields(site)
                .iter()
                .filter(|f| f.rejected)
                .cloned()
                .collect()
        })
    }

    /// Every Linux-only field the pod sets, with what the target's API server does with it
    /// ([`pod::linux_only_fields`]), computed once per pod site: WIN101–WIN103 and WIN412 ask.
    pub fn present_linux_only_fields(&self, site: &PodSite<'a>) -> &[LinuxOnlyField<'a>] {
        self.linux_only
            .get_or_init(|| pod::linux_only_fields(site, self.target))
    }

    /// Where the pod can run on the target's nodes ([`Placement`]), computed once per pod site.
    pub fn placement(&self, site: &PodSite) -> &Placement {
        self.placement
            .get_or_init(|| Placement::of(site, self.target, self.context))
    }

    /// The Windows builds of the nodes this pod's containers must run on: observed, those of
    /// the Windows nodes it can land on; offline, the target's configured `windowsBuilds`; none
    /// when nothing can be said ([`Placement::host_builds`]).
    pub fn host_builds(&self, site: &PodSite) -> Vec<Build> {
        self.placement(site)
            .host_builds(self.target)
            .map(|h| h.builds)
            .unwrap_or_default()
    }

    /// The isolation the pod's containers get: a RuntimeClass in the context whose handler
    /// says (`runhcs-wcow-hypervisor*` / `runhcs-wcow-process*`), else Hyper-V when the pod
    /// names the target's Hyper-V RuntimeClass, else the target's isolation.
    pub fn isolation(&self, site: &PodSite) -> Isolation {
        if let Some(name) = site.str("/runtimeClassName") {
            if let Some(iso) = self
                .context
                .runtime_classes
                .get(name)
                .and_then(|rc| windows::handler_isolation(&rc.handler))
            {
                return iso;
            }
            if name == self.target.hyperv_runtime_class {
                return Isolation::Hyperv;
            }
        }
        self.target.isolation
    }

    /// `spec.os.name == "windows"`: the API server validates Windows-only constraints.
    pub fn os_declared_windows(&self, site: &PodSite) -> bool {
        site.str("/os/name") == Some("windows")
    }

    /// Whether a fix may be offered for this evaluation: the spec of an existing Pod is
    /// immutable, so no fix is offered when a Pod is updated (workload templates stay fixable).
    pub fn fix_possible(&self, site: &PodSite) -> bool {
        !(site.kind == "Pod" && self.operation == Operation::Update)
    }
}
