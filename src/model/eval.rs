//! The evaluation context: everything a rule may look at besides the pod site itself.

use super::classify::Classification;
use super::context::Context;
use super::image::ImageInfo;
use super::meta::Severity;
use super::placement::Placement;
use super::pod::{self, LinuxOnlyField};
use super::target::Target;
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
    /// The site's Linux-only fields, computed once for the rules that need them.
    linux_only: std::cell::OnceCell<Vec<LinuxOnlyField<'a>>>,
    /// Where the pod can run, computed once for the rules that need node facts.
    placement: std::cell::OnceCell<Placement>,
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
            placement: std::cell::OnceCell::new(),
        }
    }

    /// The fields `validateWindows` rejects once `spec.os.name: windows` is set
    /// ([`pod::linux_only_fields`]), computed once per pod site: WIN003,
    /// WIN101–WIN103, WIN107 and the spec.os guard all ask.
    pub fn linux_only_fields(&self, site: &PodSite<'a>) -> &[LinuxOnlyField<'a>] {
        self.linux_only
            .get_or_init(|| pod::linux_only_fields(site, self.target))
    }

    /// Where the pod can run on the target's nodes ([`Placement`]), computed once per pod site.
    pub fn placement(&self, site: &PodSite) -> &Placement {
        self.placement
            .get_or_init(|| Placement::of(site, self.target, self.context))
    }

    /// `spec.os.name == "windows"`: the API server validates Windows-only constraints.
    pub fn os_declared_windows(&self, site: &PodSite) -> bool {
        site.str("/os/name") == Some("windows")
    }

    /// Severity of a field the API server forbids once `spec.os.name: windows` is set
    /// (shared/rules.md §2.2): error when it is set (and the target validates it), else warning.
    pub fn forbidden_field_severity(&self, site: &PodSite) -> Severity {
        if self.os_declared_windows(site) && pod::spec_os_available(self.target) {
            Severity::Error
        } else {
            Severity::Warning
        }
    }

    /// Whether a fix may be offered for this evaluation: the spec of an existing Pod is
    /// immutable, so no fix is offered when a Pod is updated (workload templates stay fixable).
    pub fn fix_possible(&self, site: &PodSite) -> bool {
        !(site.kind == "Pod" && self.operation == Operation::Update)
    }
}
