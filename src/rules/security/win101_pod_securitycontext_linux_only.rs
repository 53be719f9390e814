//! WIN101 `pod-securitycontext-linux-only`.

use crate::model::Eval;
use crate::model::meta::{Mutation, Reads, Recorded, RuleOs};
use crate::model::pod::FieldPlace;
use crate::model::workload::PodSite;
use crate::model::{Finding, FixSafety, RuleMeta, Severity};
use crate::rules::Rule;
use crate::rules::security::common::linux_only_findings;

/// WIN101 in the registry.
pub const RULE: Rule = Rule {
    meta: &WIN101,
    check: pod_securitycontext_linux_only,
};

pub static WIN101: RuleMeta = RuleMeta {
    id: "WIN101",
    name: "pod-securitycontext-linux-only",
    severity: Severity::Error,
    summary: "Linux-only field in spec.securityContext of a Windows pod (runAsUser, fsGroup, seccompProfile, …)",
    docs: r#"## What it does
Finds the pod-level security settings the API server forbids for Windows pods (`validateWindows`):
`spec.securityContext.seLinuxOptions`, `.seccompProfile`, `.fsGroup`, `.fsGroupChangePolicy`,
`.sysctls` (non-empty: `sysctls: []` is admitted), `.runAsUser`, `.runAsGroup`,
`.supplementalGroups` (even `[]`), `.supplementalGroupsPolicy`, `.seLinuxChangePolicy` and
`.appArmorProfile`. Presence counts, not value. Only `runAsNonRoot` and `windowsOptions` are
allowed in a Windows pod's securityContext.

Severity, by what the target's API server does (checked against a real kube-apiserver 1.32):

* **error** when the pod declares `spec.os.name: windows` and the target rejects the field:
  Kubernetes ≥ 1.24 (1.23 with `IdentifyPodOS`), and the field's feature gate on —
  `appArmorProfile` from 1.30, `supplementalGroupsPolicy` and `seLinuxChangePolicy` from 1.33
  (`SupplementalGroupsPolicy`, `SELinuxChangePolicy` gates, off by default before). The message
  quotes the server: "spec.securityContext.runAsUser: Forbidden: cannot be set for a windows pod";
* **info** when a disabled feature gate makes the API server drop the field (admitted, no effect;
  e.g. `supplementalGroupsPolicy` on 1.31–1.32): nothing breaks today, it will be rejected once
  the gate is on;
* **warning** when `spec.os` is unset: the API server accepts the pod and Windows ignores the
  field, but the pod can never be given `spec.os`; **info** for a neutral value
  (`seccompProfile`/`appArmorProfile` `RuntimeDefault`, set for Pod Security on purpose): harmless,
  WIN003 names it when it asks for spec.os.

A field the target does not know yet (e.g. `appArmorProfile` before 1.30) is WIN109's.

## Why is this bad?
The settings mean nothing on Windows: the kubelet logs "Windows container does not support
SecurityContext.RunAsUser" and carries on. Worse, they block `spec.os.name: windows`, and with it the
API server's Windows validation, the Pod Security exemptions (WIN107) and the kubelet's OS check.

## Example
```yaml
spec:
  os: {name: windows}
  securityContext:
    runAsUser: 1000        # rejected
  containers:
  - name: web
    image: mcr.microsoft.com/windows/servercore:ltsc2022
```

## Fix
Opt-in (`--fix-opt-in WIN101`): remove the field. It has no effect on Windows, but it changes the
manifest; to choose the user on Windows use `securityContext.windowsOptions.runAsUserName`.

## Severity
`error` where the API server rejects the field (the pod declares `spec.os.name: windows` and the
target validates it); `warning` where the field is kept and ignored on Windows; `info` for a
neutral value (what Pod Security asks of Linux pods: harmless) and for a field a disabled
feature gate makes the API server drop.
"#,
    fix: Some(FixSafety::OptIn),
    source: "VAL, K-INTRO, issue-9 research §1.2 (measured on kube-apiserver 1.32)",
    applies: "K>=1.24, 1.23 with IdentifyPodOS (error with spec.os.name: windows, per field and gate); any (warning/info)",
    os: RuleOs::Windows,
    default_on: true,
    reads: Reads::LINUX_ONLY_FIELDS,
    mutation: Mutation::named(Recorded::LinuxOnlyFields),
};

pub(crate) fn pod_securitycontext_linux_only<'a>(
    site: &PodSite<'a>,
    eval: &Eval<'a>,
) -> Vec<Finding> {
    linux_only_findings(&WIN101, FieldPlace::PodSecurityContext, site, eval, |_| {
        Some(FixSafety::OptIn)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use serde_json::json;

    use crate::rules::security::common::tests::OWN;
    use crate::rules::testutil::{
        apply, assert_says, at, cfg, ids, ids_in, only, set, unset, winok,
    };

    #[test]
    fn t07_pod_run_as_user_error() {
        let pod = set(winok(), "/spec/securityContext/runAsUser", json!(1000));
        assert_eq!(ids(&pod, &cfg()), ["WIN101"]);
        let f = &only(&pod, &cfg(), "WIN101")[0];
        assert_eq!(f.severity, Severity::Error);
        assert_eq!(f.pointer, "/spec/securityContext/runAsUser");
        assert!(
            f.message.starts_with(
                "spec.securityContext.runAsUser cannot be set for a Windows pod: the API server rejects the pod because spec.os.name is windows (\"spec.securityContext.runAsUser: Forbidden: cannot be set for a windows pod\")"
            ),
            "{}",
            f.message
        );
        assert!(f.message.contains("windowsOptions.runAsUserName"));
        assert_eq!(f.fix.as_ref().unwrap().safety, FixSafety::OptIn);
        let fixed = apply(&pod, f);
        assert_eq!(fixed["spec"]["securityContext"], json!({}));
        assert!(ids(&fixed, &cfg()).is_empty());
    }

    #[test]
    fn t09_without_spec_os_is_warning() {
        let pod = set(
            unset(winok(), "/spec/os"),
            "/spec/securityContext/runAsUser",
            json!(1000),
        );
        assert_eq!(ids_in(&pod, &cfg(), OWN), ["WIN101"]);
        let f = &only(&pod, &cfg(), "WIN101")[0];
        assert_eq!(f.severity, Severity::Warning);
        assert_says(f, "rejects it once the pod declares spec.os.name: windows");
        // Before spec.os exists nothing rejects it: it only has no effect.
        let f = &only(&pod, &at(23), "WIN101")[0];
        assert_eq!(f.severity, Severity::Warning);
        assert!(!f.message.contains("rejects"), "{}", f.message);
    }

    #[test]
    fn win101_every_field_and_version_gates() {
        let sc = json!({"seLinuxOptions":{"level":"s0"},"seccompProfile":{"type":"RuntimeDefault"},"fsGroup":2000,
            "fsGroupChangePolicy":"OnRootMismatch","sysctls":[{"name":"net.core.somaxconn","value":"1024"}],
            "runAsUser":1000,"runAsGroup":3000,"supplementalGroups":[4000],"supplementalGroupsPolicy":"Strict",
            "seLinuxChangePolicy":"Recursive","appArmorProfile":{"type":"RuntimeDefault"},
            "runAsNonRoot":true,"windowsOptions":{"runAsUserName":"ContainerUser"}});
        let pod = set(winok(), "/spec/securityContext", sc);
        let ptrs = |c: &Config| -> Vec<String> {
            only(&pod, c, "WIN101")
                .into_iter()
                .map(|f| f.pointer)
                .collect()
        };
        let sev = |c: &Config| -> Vec<(String, Severity)> {
            only(&pod, c, "WIN101")
                .into_iter()
                .map(|f| {
                    (
                        f.pointer.rsplit('/').next().unwrap().to_string(),
                        f.severity,
                    )
                })
                .collect()
        };
        assert_eq!(ptrs(&at(34)).len(), 11);
        assert!(sev(&at(34)).iter().all(|(_, s)| *s == Severity::Error));
        // 1.32: the gates of supplementalGroupsPolicy and seLinuxChangePolicy are off, the API
        // server drops both (info); 1.31 does not know seLinuxChangePolicy (WIN109's).
        let s32 = sev(&at(32));
        assert_eq!(s32.len(), 11);
        for (field, s) in &s32 {
            let dropped = field == "supplementalGroupsPolicy" || field == "seLinuxChangePolicy";
            assert_eq!(
                *s,
                if dropped {
                    Severity::Info
                } else {
                    Severity::Error
                },
                "{field}"
            );
        }
        let mut gates_on = at(32);
        for g in ["SupplementalGroupsPolicy", "SELinuxChangePolicy"] {
            gates_on.target.feature_gates.insert(g.into(), true);
        }
        assert!(sev(&gates_on).iter().all(|(_, s)| *s == Severity::Error));
        let p30 = ptrs(&cfg());
        assert_eq!(p30.len(), 9, "{p30:?}");
        assert!(p30.contains(&"/spec/securityContext/appArmorProfile".to_string()));
        let p29 = ptrs(&at(29));
        assert_eq!(p29.len(), 8);
        assert!(!p29.iter().any(|p| p.ends_with("appArmorProfile")));
        assert_eq!(ids_in(&pod, &at(29), &["WIN109"]), ["WIN109"]);
        // Before spec.os exists nothing is an error (neutral RuntimeDefault values are info).
        let s22 = sev(&at(22));
        assert!(!s22.is_empty());
        for (field, s) in &s22 {
            let neutral = field == "seccompProfile";
            assert_eq!(
                *s,
                if neutral {
                    Severity::Info
                } else {
                    Severity::Warning
                },
                "{field}"
            );
        }
        // Empty sysctls are allowed; null counts as absent.
        let pod = set(
            winok(),
            "/spec/securityContext",
            json!({"sysctls":[],"runAsUser":null,"runAsNonRoot":true}),
        );
        assert!(ids_in(&pod, &cfg(), OWN).is_empty());
    }

    #[test]
    fn win101_in_a_deployment_points_into_the_template() {
        let dep = json!({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},
            "spec":{"template":{"metadata":{},"spec":winok()["spec"].clone()}}});
        let dep = set(
            dep,
            "/spec/template/spec/securityContext/fsGroup",
            json!(2000),
        );
        let f = &only(&dep, &cfg(), "WIN101")[0];
        assert_eq!(f.pointer, "/spec/template/spec/securityContext/fsGroup");
        assert!(
            f.message
                .starts_with("spec.template.spec.securityContext.fsGroup cannot")
        );
        let fixed = apply(&dep, f);
        assert!(only(&fixed, &cfg(), "WIN101").is_empty());
    }
}
