//! What a Kubernetes API server does with each PodSpec field winlint judges, version by version
//! (issue-9 research §1.1–§1.4, measured on kube-apiserver 1.32 with default and non-default
//! gates): when the field appeared, the feature gate that guards it, what a disabled gate does
//! with it (drop it before validation, coerce it, or reject the pod), and from which minor
//! `validateWindows` rejects it on a pod that declares `spec.os.name: windows`.
//!
//! One record per field ([`FIELDS`]); [`ApiField::fate`] answers for a target. The rules that
//! say "the API server rejects" (WIN101–WIN103, WIN412), the spec.os guard (WIN003, WIN107 and
//! the webhook, through [`super::pod::linux_only_fields`]), WIN109 (fields newer than the target)
//! and WIN203 (HostProcess) all read it.

use super::target::{Target, gate_info};

/// Where a field sits in the PodSpec.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// `spec.securityContext.<name>`.
    PodSecurityContext,
    /// `spec.<name>` (`hostPID`, `hostUsers`, `resources`, `os`, …).
    Spec,
    /// `securityContext.<name>` of every container (init, regular, ephemeral).
    ContainerSecurityContext,
    /// `securityContext.windowsOptions.<name>` of the pod and of every container.
    WindowsOptions,
}

/// What the API server does with the field while its feature gate is off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WhenOff {
    /// `dropDisabledFields` removes it before validation (unless the old object uses it): the
    /// pod is admitted without it.
    Drop,
    /// The value is forced to a default but kept (`procMount` → `Default`): still validated.
    Coerce,
    /// Validation fails (`hostProcess` in 1.22: "fail Pod validation if feature is not
    /// enabled … instead of dropping fields").
    Reject,
}

/// Which values `validateWindows` rejects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rejects {
    /// Any non-null value (`privileged: false`, `capabilities: {}`, `supplementalGroups: []`,
    /// `procMount: Default`, `shareProcessNamespace: false`).
    Present,
    /// Only `true` (`hostPID`, `hostIPC` are plain booleans).
    True,
    /// A non-empty list (`sysctls: []` is admitted).
    NonEmpty,
}

/// The API history of one field.
#[derive(Debug)]
pub struct ApiField {
    pub place: Place,
    pub name: &'static str,
    /// The first Kubernetes 1.x minor whose API has the field (0: older than anything winlint
    /// targets).
    pub introduced: u32,
    /// The feature gate that guards it (its defaults per minor are in `target::GATES`).
    pub gate: Option<&'static str>,
    pub when_off: WhenOff,
    /// First minor from which `validateWindows` rejects it on a pod that declares
    /// `spec.os.name: windows` (and the target keeps `spec.os`); `None`: not a Linux-only field.
    pub windows_rejects_from: Option<u32>,
    /// Which values count.
    pub rejects: Rejects,
}

const fn linux(
    place: Place,
    name: &'static str,
    introduced: u32,
    gate: Option<&'static str>,
    when_off: WhenOff,
    rejects: Rejects,
) -> ApiField {
    // validateWindows (1.23, with spec.os) checks every field from the release that has both.
    let from = if introduced > 23 { introduced } else { 23 };
    ApiField {
        place,
        name,
        introduced,
        gate,
        when_off,
        windows_rejects_from: Some(from),
        rejects,
    }
}

const fn windows(
    place: Place,
    name: &'static str,
    introduced: u32,
    gate: Option<&'static str>,
    when_off: WhenOff,
) -> ApiField {
    ApiField {
        place,
        name,
        introduced,
        gate,
        when_off,
        windows_rejects_from: None,
        rejects: Rejects::Present,
    }
}

use Place::{ContainerSecurityContext as Ctr, PodSecurityContext as Psc, Spec, WindowsOptions};
use Rejects::{NonEmpty, Present, True};
use WhenOff::{Coerce, Drop, Reject};

/// Every field winlint judges, in the order the API server validates them (research §1.2).
pub const FIELDS: &[ApiField] = &[
    // spec.securityContext (WIN101)
    linux(
        Psc,
        "appArmorProfile",
        30,
        Some("AppArmorFields"),
        Drop,
        Present,
    ),
    linux(Psc, "seLinuxOptions", 0, None, Drop, Present),
    linux(Psc, "seccompProfile", 19, None, Drop, Present),
    linux(Psc, "fsGroup", 0, None, Drop, Present),
    linux(
        Psc,
        "fsGroupChangePolicy",
        18,
        Some("ConfigurableFSGroupPolicy"),
        Drop,
        Present,
    ),
    linux(Psc, "sysctls", 11, None, Drop, NonEmpty),
    linux(Psc, "runAsUser", 0, None, Drop, Present),
    linux(Psc, "runAsGroup", 10, Some("RunAsGroup"), Drop, Present),
    linux(Psc, "supplementalGroups", 0, None, Drop, Present),
    linux(
        Psc,
        "supplementalGroupsPolicy",
        31,
        Some("SupplementalGroupsPolicy"),
        Drop,
        Present,
    ),
    linux(
        Psc,
        "seLinuxChangePolicy",
        32,
        Some("SELinuxChangePolicy"),
        Drop,
        Present,
    ),
    // spec (WIN102, WIN412)
    linux(Spec, "hostPID", 0, None, Drop, True),
    linux(Spec, "hostIPC", 0, None, Drop, True),
    linux(
        Spec,
        "shareProcessNamespace",
        10,
        Some("PodShareProcessNamespace"),
        Drop,
        Present,
    ),
    linux(
        Spec,
        "hostUsers",
        25,
        Some("UserNamespacesSupport"),
        Drop,
        Present,
    ),
    ApiField {
        // Pod-level resources: the Windows check came with the beta (kubernetes PR #133046).
        windows_rejects_from: Some(34),
        ..linux(
            Spec,
            "resources",
            32,
            Some("PodLevelResources"),
            Drop,
            Present,
        )
    },
    // containers[*].securityContext (WIN103)
    linux(
        Ctr,
        "appArmorProfile",
        30,
        Some("AppArmorFields"),
        Drop,
        Present,
    ),
    linux(Ctr, "seLinuxOptions", 0, None, Drop, Present),
    linux(Ctr, "seccompProfile", 19, None, Drop, Present),
    linux(Ctr, "capabilities", 0, None, Drop, Present),
    linux(Ctr, "readOnlyRootFilesystem", 0, None, Drop, Present),
    linux(Ctr, "privileged", 0, None, Drop, Present),
    linux(Ctr, "allowPrivilegeEscalation", 8, None, Drop, Present),
    linux(Ctr, "procMount", 12, Some("ProcMountType"), Coerce, Present),
    linux(Ctr, "runAsUser", 0, None, Drop, Present),
    linux(Ctr, "runAsGroup", 10, Some("RunAsGroup"), Drop, Present),
    // Windows fields (WIN109, WIN203)
    windows(Spec, "os", 23, Some("IdentifyPodOS"), Drop),
    windows(Psc, "windowsOptions", 14, None, Drop),
    windows(Ctr, "windowsOptions", 14, None, Drop),
    windows(
        WindowsOptions,
        "gmsaCredentialSpecName",
        14,
        Some("WindowsGMSA"),
        Drop,
    ),
    windows(
        WindowsOptions,
        "gmsaCredentialSpec",
        14,
        Some("WindowsGMSA"),
        Drop,
    ),
    windows(
        WindowsOptions,
        "runAsUserName",
        16,
        Some("WindowsRunAsUserName"),
        Drop,
    ),
    windows(
        WindowsOptions,
        "hostProcess",
        22,
        Some("WindowsHostProcessContainers"),
        Reject,
    ),
];

/// What the target's API server does with a field that a pod sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fate {
    /// The target's API does not have the field: kubectl refuses the manifest (strict
    /// decoding, or client-side validation before 1.25); other clients have it dropped.
    Unknown,
    /// Its feature gate is off at the target and the API server drops it before validation:
    /// admitted, no effect.
    Dropped { gate: &'static str },
    /// Its feature gate is off at the target and the API server rejects the pod.
    GateRejects { gate: &'static str },
    /// Kept (possibly coerced) and validated.
    Kept,
}

impl ApiField {
    /// The field's record.
    pub fn get(place: Place, name: &str) -> &'static ApiField {
        FIELDS
            .iter()
            .find(|f| f.place == place && f.name == name)
            .unwrap_or_else(|| panic!("no API record for {place:?} {name}"))
    }

    /// What the target's API server does with the field.
    pub fn fate(&self, target: &Target) -> Fate {
        if !target.kubernetes.at_least(1, self.introduced) {
            return Fate::Unknown;
        }
        match self.gate.filter(|g| !target.gate(g)) {
            Some(gate) => match self.when_off {
                WhenOff::Drop => Fate::Dropped { gate },
                WhenOff::Reject => Fate::GateRejects { gate },
                WhenOff::Coerce => Fate::Kept,
            },
            None => Fate::Kept,
        }
    }

    /// Whether the target's API server rejects the field on a pod that declares
    /// `spec.os.name: windows`: the target keeps `spec.os` and the field, and `validateWindows`
    /// checks it there.
    pub fn windows_rejects(&self, target: &Target) -> bool {
        self.windows_rejects_from
            .is_some_and(|m| target.kubernetes.at_least(1, m))
            && self.fate(target) == Fate::Kept
            && spec_os_kept(target)
    }

    /// Whether `value` counts for `validateWindows` (see [`Rejects`]); `null` never does.
    pub fn value_counts(&self, value: &serde_json::Value) -> bool {
        match self.rejects {
            _ if value.is_null() => false,
            Rejects::Present => true,
            Rejects::True => value.as_bool() == Some(true),
            Rejects::NonEmpty => value.as_array().is_none_or(|a| !a.is_empty()),
        }
    }

    /// The first minor from which a default-gate API server rejects the field on a Windows
    /// pod (for "rejected from 1.33" in messages).
    pub fn windows_rejected_by_default_from(&self) -> Option<u32> {
        let from = self.windows_rejects_from?.max(24);
        match self.gate.and_then(gate_info) {
            Some(g) if self.when_off == WhenOff::Drop => {
                g.on_by_default_from().map(|on| on.max(from))
            }
            _ => Some(from),
        }
    }
}

/// Whether the target keeps `spec.os` (1.24+, or 1.23 with the `IdentifyPodOS` gate); before
/// that the API server drops the field and validates nothing by OS.
pub fn spec_os_kept(target: &Target) -> bool {
    ApiField::get(Place::Spec, "os").fate(target) == Fate::Kept
}

/// What a field unknown to the target meets, for messages: `kubectl` refuses it, and other
/// clients have it dropped (with a warning from 1.25, silently before).
pub fn unknown_field_text(target: &Target, dotted: &str) -> String {
    if target.gate("ServerSideFieldValidation") {
        format!(
            "kubectl refuses the manifest (\"strict decoding error: unknown field \\\"{dotted}\\\"\"); other clients have the field dropped (API warning: unknown field \"{dotted}\")"
        )
    } else {
        format!(
            "kubectl's client-side validation refuses the manifest (unknown field {dotted:?}, unless --validate=false); the API server drops the field silently"
        )
    }
}

/// The API server's `Forbidden` error for the field at dotted `path`, quoted as `kubectl` prints
/// it: `"spec.hostPID: Forbidden: cannot be set for a windows pod"` (field.Forbidden).
pub fn forbidden(path: &str, detail: &str) -> String {
    format!("\"{path}: Forbidden: {detail}\"")
}

/// The API server's `Invalid value` error, quoted as `kubectl` prints it (field.Invalid): a string
/// value is Go-quoted (`Invalid value: "Web_App": …`), a boolean bare (`Invalid value: false: …`).
pub fn invalid(path: &str, value: &serde_json::Value, detail: &str) -> String {
    let value = match value {
        serde_json::Value::String(s) => format!("{s:?}"),
        v => v.to_string(),
    };
    format!("\"{path}: Invalid value: {value}: {detail}\"")
}

/// Why a gate is off at the target, for messages: "feature gate G is off by default before
/// 1.33" or "feature gate G is off".
pub fn gate_off_text(target: &Target, gate: &str) -> String {
    match gate_info(gate).and_then(|g| g.on_by_default_from()) {
        Some(on) if target.gate_setting(gate).is_none() && target.kubernetes.minor < on => {
            format!("feature gate {gate} is off by default before 1.{on}")
        }
        _ => format!("feature gate {gate} is off"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::target::tests::at;
    use serde_json::json;

    fn rejected_from(place: Place, name: &str) -> Option<u32> {
        let f = ApiField::get(place, name);
        (20..=40).find(|m| f.windows_rejects(&at(*m)))
    }

    /// Research §1.2, column "Reject since (default gates)".
    #[test]
    fn reject_since_with_default_gates() {
        for (place, name, from) in [
            (Place::PodSecurityContext, "runAsUser", 24),
            (Place::PodSecurityContext, "seccompProfile", 24),
            (Place::PodSecurityContext, "appArmorProfile", 30),
            (Place::PodSecurityContext, "supplementalGroupsPolicy", 33),
            (Place::PodSecurityContext, "seLinuxChangePolicy", 33),
            (Place::Spec, "hostUsers", 33),
            (Place::Spec, "resources", 34),
            (Place::Spec, "shareProcessNamespace", 24),
            (Place::ContainerSecurityContext, "procMount", 24),
            (Place::ContainerSecurityContext, "appArmorProfile", 30),
        ] {
            assert_eq!(rejected_from(place, name), Some(from), "{name}");
            assert_eq!(
                ApiField::get(place, name).windows_rejected_by_default_from(),
                Some(from),
                "{name}"
            );
        }
        assert_eq!(rejected_from(Place::WindowsOptions, "runAsUserName"), None);
    }

    #[test]
    fn fates() {
        let host_users = ApiField::get(Place::Spec, "hostUsers");
        assert_eq!(host_users.fate(&at(24)), Fate::Unknown);
        assert_eq!(
            host_users.fate(&at(32)),
            Fate::Dropped {
                gate: "UserNamespacesSupport"
            }
        );
        assert_eq!(host_users.fate(&at(33)), Fate::Kept);
        let mut gates_on = at(32);
        gates_on
            .feature_gates
            .insert("UserNamespacesSupport".into(), true);
        assert!(host_users.windows_rejects(&gates_on));
        // procMount is coerced, not dropped: rejected whatever the gate says.
        let proc_mount = ApiField::get(Place::ContainerSecurityContext, "procMount");
        assert_eq!(proc_mount.fate(&at(32)), Fate::Kept);
        assert!(proc_mount.windows_rejects(&at(32)));
        // hostProcess in 1.22: the disabled gate rejects.
        let hp = ApiField::get(Place::WindowsOptions, "hostProcess");
        assert_eq!(hp.fate(&at(21)), Fate::Unknown);
        assert_eq!(
            hp.fate(&at(22)),
            Fate::GateRejects {
                gate: "WindowsHostProcessContainers"
            }
        );
        assert_eq!(hp.fate(&at(23)), Fate::Kept);
        // spec.os is dropped in 1.23: nothing is rejected for Windows there.
        assert!(!spec_os_kept(&at(23)));
        assert!(!ApiField::get(Place::PodSecurityContext, "runAsUser").windows_rejects(&at(23)));
        let mut t = at(23);
        t.feature_gates.insert("IdentifyPodOS".into(), true);
        assert!(ApiField::get(Place::PodSecurityContext, "runAsUser").windows_rejects(&t));
    }

    #[test]
    fn values_that_count() {
        let sysctls = ApiField::get(Place::PodSecurityContext, "sysctls");
        assert!(!sysctls.value_counts(&json!([])));
        assert!(sysctls.value_counts(&json!([{"name": "a", "value": "1"}])));
        let groups = ApiField::get(Place::PodSecurityContext, "supplementalGroups");
        assert!(groups.value_counts(&json!([])));
        let host_pid = ApiField::get(Place::Spec, "hostPID");
        assert!(!host_pid.value_counts(&json!(false)));
        assert!(host_pid.value_counts(&json!(true)));
        let caps = ApiField::get(Place::ContainerSecurityContext, "capabilities");
        assert!(caps.value_counts(&json!({})));
        assert!(!caps.value_counts(&json!(null)));
    }

    #[test]
    fn server_errors_as_kubectl_prints_them() {
        assert_eq!(
            forbidden("spec.hostPID", "cannot be set for a windows pod"),
            "\"spec.hostPID: Forbidden: cannot be set for a windows pod\""
        );
        assert_eq!(
            invalid(
                "spec.hostNetwork",
                &json!(false),
                "hostNetwork must be true"
            ),
            "\"spec.hostNetwork: Invalid value: false: hostNetwork must be true\""
        );
        // Go's %q and Rust's {:?} agree on backslashes and quotes.
        assert_eq!(
            invalid("x", &json!("a\\b\\c"), "m"),
            "\"x: Invalid value: \"a\\\\b\\\\c\": m\""
        );
    }

    #[test]
    fn texts() {
        assert_eq!(
            gate_off_text(&at(32), "UserNamespacesSupport"),
            "feature gate UserNamespacesSupport is off by default before 1.33"
        );
        let mut t = at(33);
        t.feature_gates
            .insert("UserNamespacesSupport".into(), false);
        assert_eq!(
            gate_off_text(&t, "UserNamespacesSupport"),
            "feature gate UserNamespacesSupport is off"
        );
        assert!(unknown_field_text(&at(29), "spec.x").contains("strict decoding error"));
        assert!(unknown_field_text(&at(20), "spec.x").contains("--validate=false"));
    }
}
