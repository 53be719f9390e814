//! WIN101–WIN104, WIN107: Linux security settings and Windows pods (shared/rules.md §2.2): the
//! fields the API server forbids on Windows pods, windowsOptions on Linux pods, Pod Security
//! "restricted". Field lists and messages follow kubernetes/kubernetes
//! `pkg/apis/core/validation/validation.go`: `validateWindows` and `validateLinux`. (Who the
//! containers run as, `runAsUserName` and gMSA, is in `identity.rs`.)
//!
//! What several rules of the family share.

use crate::model::Eval;
use crate::model::api_fields::{self, Fate};
use crate::model::pod::{self, FieldPlace, FieldValue, LinuxOnlyField};
use crate::model::workload::PodSite;
use crate::model::{Finding, Fix, FixSafety, RuleMeta, Severity, ops};

// ---------------------------------------------------------------------------------------------
// WIN101–WIN103: validateWindows

/// What to do about one Linux-only field, by field and value; `host_process`: the pod is
/// already HostProcess, so it is not told to become one.
pub(crate) fn advice(f: &LinuxOnlyField, host_process: bool) -> &'static str {
    let is_true = f.value.as_bool() == Some(true);
    match f.field {
        "capabilities" | "privileged" | "hostPID" if host_process => {
            "remove it; a HostProcess container already runs on the host with the rights of its runAsUserName account"
        }
        "runAsUser" | "runAsGroup" => {
            "remove it; Windows has no Linux user/group IDs: use securityContext.windowsOptions.runAsUserName (e.g. ContainerUser) to choose the user"
        }
        "fsGroup" | "fsGroupChangePolicy" | "supplementalGroups" | "supplementalGroupsPolicy" => {
            "remove it; Windows has no Linux group IDs (volume ownership is not changed on Windows; use NTFS ACLs)"
        }
        "seLinuxOptions" | "seLinuxChangePolicy" => "remove it; SELinux does not exist on Windows",
        "seccompProfile" => "remove it; seccomp does not exist on Windows",
        "appArmorProfile" => "remove it; AppArmor does not exist on Windows",
        "sysctls" => "remove them; Linux sysctls do not exist on Windows",
        "procMount" => "remove it; /proc does not exist on Windows",
        "allowPrivilegeEscalation" => "remove it; it has no effect on Windows",
        "capabilities" if f.class == FieldValue::Intent => {
            "Linux capabilities do not exist on Windows and cannot be granted; remove it (a HostProcess pod is the Windows way to get host access)"
        }
        "capabilities" => "remove it; Linux capabilities do not exist on Windows",
        "privileged" if is_true => {
            "Windows has no privileged containers; remove it, or run a HostProcess pod (windowsOptions.hostProcess: true with hostNetwork: true) if it needs host access"
        }
        "readOnlyRootFilesystem" if is_true => {
            "Windows cannot mount a container's root filesystem read-only; remove it (protect files with ACLs in the image instead)"
        }
        "privileged" | "readOnlyRootFilesystem" => "remove it (false is the default)",
        "hostPID" => {
            "Windows pods cannot share the host's process namespace; remove it (a HostProcess pod runs among the host's processes)"
        }
        "hostIPC" => "Windows pods cannot share the host's IPC namespace; remove it",
        "shareProcessNamespace" if is_true => {
            "the containers of a Windows pod cannot share a process namespace; remove it"
        }
        "shareProcessNamespace" => "remove it (false is the default)",
        "hostUsers" if f.value.as_bool() == Some(false) => {
            "user namespaces do not exist on Windows; remove it"
        }
        "hostUsers" => "remove it (true is the default)",
        "resources" => {
            "pod-level resources are not supported for Windows pods; set requests and limits on each container instead"
        }
        _ => "remove it",
    }
}

/// The severity of a Linux-only field's finding (`None`: not reported by its own rule).
///
/// * the target does not know the field: WIN109's business;
/// * dropped by a disabled feature gate: **info** (admitted, no effect), except a neutral value on
///   a pod without spec.os, which nothing will ever reject;
/// * rejected (the pod declares `spec.os.name: windows` and the target validates the field):
///   **error**;
/// * otherwise the field is kept and ignored on Windows: **warning**, or **info** for a neutral
///   value (what Pod Security asks of Linux pods: harmless, it only blocks spec.os, which WIN003
///   names).
pub(crate) fn linux_only_severity(f: &LinuxOnlyField, declared: bool) -> Option<Severity> {
    let neutral = f.class == FieldValue::Neutral;
    match f.fate {
        Fate::Unknown | Fate::GateRejects { .. } => None,
        Fate::Dropped { .. } => (declared || !neutral).then_some(Severity::Info),
        Fate::Kept if declared && f.rejected => Some(Severity::Error),
        Fate::Kept if neutral => Some(Severity::Info),
        Fate::Kept => Some(Severity::Warning),
    }
}

/// The API server's words when it rejects the field, as measured on 1.32 (research §1.2); pod-level
/// `resources` is rejected only from 1.34, whose words were not measured.
pub(crate) fn forbidden_text(f: &LinuxOnlyField, path: &str) -> String {
    if f.place == FieldPlace::PodResources {
        "kubernetes PR #133046".to_string()
    } else {
        api_fields::forbidden(path, "cannot be set for a windows pod")
    }
}

/// The finding for one Linux-only field (see [`linux_only_severity`]), with advice and the fix of
/// the given safety (none when `safety` is `None`; a dropped field's fix is never more than
/// opt-in: removing it changes nothing on this target).
pub(crate) fn linux_only_finding(
    meta: &'static RuleMeta,
    site: &PodSite,
    eval: &Eval,
    f: &LinuxOnlyField,
    safety: Option<FixSafety>,
) -> Option<Finding> {
    let declared = eval.os_declared_windows(site);
    let sev = linux_only_severity(f, declared)?;
    let k = eval.target.kubernetes;
    let path = pod::dotted(&f.pointer);
    let who = f
        .container
        .map(|c| format!(" ({})", c.label()))
        .unwrap_or_default();
    let quoted = forbidden_text(f, &path);
    let why = match f.fate {
        Fate::Dropped { gate } => {
            let later = match f.api.windows_rejected_by_default_from() {
                Some(m) => format!(
                    "; from Kubernetes 1.{m} the API server rejects it on pods that declare spec.os.name: windows ({quoted})"
                ),
                None => String::new(),
            };
            format!(
                "{path}{who} is dropped by the Kubernetes {k} API server ({}): the field has no effect{later}",
                api_fields::gate_off_text(eval.target, gate)
            )
        }
        _ if sev == Severity::Error => format!(
            "{path}{who} cannot be set for a Windows pod: the API server rejects the pod because spec.os.name is windows ({quoted})"
        ),
        _ if f.api.windows_rejects(eval.target) => format!(
            "{path}{who} has no effect on Windows, and the API server rejects it once the pod declares spec.os.name: windows ({quoted})"
        ),
        _ => format!("{path}{who} has no effect on Windows"),
    };
    let mut advice = advice(f, crate::model::pod::is_host_process_pod(site)).to_string();
    if f.class == FieldValue::Neutral && !declared && f.api.windows_rejects(eval.target) {
        advice.push_str(
            "; if it is there for Pod Security, drop it together with adding spec.os.name: windows, which makes Pod Security (1.25+) skip the checks it satisfies",
        );
    }
    let mut finding =
        Finding::new(meta, f.pointer.clone(), format!("{why}; {advice}")).severity(sev);
    let safety = match (safety, f.fate) {
        (Some(_), Fate::Dropped { .. }) => Some(FixSafety::OptIn),
        (s, _) => s,
    };
    if let Some(safety) = safety.filter(|_| eval.fix_possible(site)) {
        finding = finding.with_fix(Fix {
            safety,
            description: format!("remove {path}"),
            ops: vec![ops::remove(&f.pointer)],
        });
    }
    Some(finding)
}

pub(crate) fn linux_only_findings<'a>(
    meta: &'static RuleMeta,
    place: FieldPlace,
    site: &PodSite<'a>,
    eval: &Eval<'a>,
    safety: impl Fn(&LinuxOnlyField) -> Option<FixSafety>,
) -> Vec<Finding> {
    eval.present_linux_only_fields(site)
        .iter()
        .filter(|f| f.place == place)
        .filter_map(|f| linux_only_finding(meta, site, eval, f, safety(f)))
        .collect()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use serde_json::json;

    use crate::rules::testutil::{apply, at, cfg, findings, ids, ids_in, only, set, unset, winok};

    /// The WIN1xx rules (other modules' rules may fire beside them).
    pub(crate) const OWN: &[&str] = &["WIN1"];

    #[test]
    fn t04_winok_clean() {
        assert!(ids_in(&winok(), &cfg(), OWN).is_empty());
    }

    #[test]
    fn t02_linux_pod_hardened_for_restricted() {
        let pod = json!({"kind":"Pod","metadata":{"name":"l"},"spec":{"os":{"name":"linux"},"nodeSelector":{"kubernetes.io/os":"linux"},
            "securityContext":{"runAsUser":1000,"runAsNonRoot":true,"seccompProfile":{"type":"RuntimeDefault"}},
            "containers":[{"name":"a","image":"nginx","securityContext":{"allowPrivilegeEscalation":false,"capabilities":{"drop":["ALL"]}}}]}});
        assert!(ids_in(&pod, &cfg(), OWN).is_empty());
        // Same without any OS evidence: still nothing.
        let pod = unset(unset(pod, "/spec/os"), "/spec/nodeSelector");
        assert!(ids_in(&pod, &cfg(), OWN).is_empty());
    }

    #[test]
    fn t11_host_users_true() {
        let pod = set(winok(), "/spec/hostUsers", json!(true));
        // 1.33+ (UserNamespacesSupport on by default): rejected, safe deletion of the default.
        let c34 = at(34);
        assert_eq!(ids(&pod, &c34), ["WIN102"]);
        let f = &only(&pod, &c34, "WIN102")[0];
        assert_eq!(f.pointer, "/spec/hostUsers");
        assert_eq!(f.severity, Severity::Error);
        assert_eq!(f.fix.as_ref().unwrap().safety, FixSafety::Safe);
        assert_eq!(apply(&pod, f), winok());
        // 1.30 (the vector target): the gate is off, the API server drops the field and admits
        // the pod (measured on 1.32): info, and its removal is only opt-in.
        assert_eq!(ids(&pod, &cfg()), ["WIN102"]);
        let f = &only(&pod, &cfg(), "WIN102")[0];
        assert_eq!(f.severity, Severity::Info);
        assert!(
            f.message.starts_with(
                "spec.hostUsers is dropped by the Kubernetes 1.30 API server (feature gate UserNamespacesSupport is off by default before 1.33): the field has no effect; from Kubernetes 1.33 the API server rejects it"
            ),
            "{}",
            f.message
        );
        assert_eq!(f.fix.as_ref().unwrap().safety, FixSafety::OptIn);
        // The gate turned on: rejected.
        let mut gates_on = at(32);
        gates_on
            .target
            .feature_gates
            .insert("UserNamespacesSupport".into(), true);
        assert_eq!(only(&pod, &gates_on, "WIN102")[0].severity, Severity::Error);
        // hostUsers: false asks for user namespaces: no fix.
        let pod = set(winok(), "/spec/hostUsers", json!(false));
        assert!(only(&pod, &c34, "WIN102")[0].fix.is_none());
        // The field does not exist before 1.25: WIN109's.
        assert!(only(&pod, &at(24), "WIN102").is_empty());
        assert_eq!(ids_in(&pod, &at(24), OWN), ["WIN109"]);
        // A dropped field does not block spec.os: WIN003 offers it on 1.32.
        let no_os = unset(set(winok(), "/spec/hostUsers", json!(false)), "/spec/os");
        let w003 = only(&no_os, &at(32), "WIN003");
        assert!(w003[0].fix.is_some(), "{}", w003[0].message);
        assert!(only(&no_os, &c34, "WIN003")[0].fix.is_none());
    }

    #[test]
    fn win1xx_empty_values_by_the_api_rule() {
        // Admitted: sysctls [], hostPID/hostIPC false. Rejected: supplementalGroups [],
        // capabilities {}, procMount Default (coerced, not dropped, whatever the gate).
        let pod = set(
            set(
                set(
                    winok(),
                    "/spec/securityContext",
                    json!({"sysctls": [], "supplementalGroups": []}),
                ),
                "/spec/hostPID",
                json!(false),
            ),
            "/spec/containers/0/securityContext",
            json!({"capabilities": {}, "procMount": "Default"}),
        );
        let got: Vec<(String, Severity)> = findings(&pod, &at(32))
            .into_iter()
            .filter(|f| f.rule.id.starts_with("WIN1"))
            .map(|f| (f.pointer, f.severity))
            .collect();
        assert_eq!(
            got,
            [
                (
                    "/spec/securityContext/supplementalGroups".to_string(),
                    Severity::Error
                ),
                (
                    "/spec/containers/0/securityContext/capabilities".to_string(),
                    Severity::Error
                ),
                (
                    "/spec/containers/0/securityContext/procMount".to_string(),
                    Severity::Error
                ),
            ]
        );
    }
}
