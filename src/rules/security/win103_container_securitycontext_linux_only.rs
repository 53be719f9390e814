//! WIN103 `container-securitycontext-linux-only`.

use crate::model::Eval;
use crate::model::meta::{Mutation, Reads, Recorded, RuleOs};
use crate::model::pod::{self, FieldPlace, FieldValue};
use crate::model::workload::PodSite;
use crate::model::{Finding, FixSafety, RuleMeta, Severity};
use crate::rules::Rule;
use crate::rules::security::common::linux_only_findings;

/// WIN103 in the registry.
pub const RULE: Rule = Rule {
    meta: &WIN103,
    check: container_securitycontext_linux_only,
};

pub static WIN103: RuleMeta = RuleMeta {
    id: "WIN103",
    name: "container-securitycontext-linux-only",
    severity: Severity::Error,
    summary: "Linux-only field in a container's securityContext of a Windows pod (privileged, capabilities, allowPrivilegeEscalation, …)",
    docs: r#"## What it does
Finds the container security settings the API server forbids for Windows pods, in init, regular
and ephemeral containers: `securityContext.seLinuxOptions`, `.seccompProfile`, `.capabilities`,
`.readOnlyRootFilesystem`, `.privileged`, `.allowPrivilegeEscalation`, `.procMount`, `.runAsUser`,
`.runAsGroup` and `.appArmorProfile` (Kubernetes ≥ 1.30). Presence counts, not value:
`privileged: false`, `allowPrivilegeEscalation: false`, `capabilities: {}` and `procMount: Default`
are rejected too (a disabled `ProcMountType` gate coerces `procMount` to `Default`, it does not drop
it).

Severity: error with `spec.os.name: windows` (Kubernetes ≥ 1.24, 1.23 with `IdentifyPodOS`); without
it warning, or info for the neutral values Pod Security asks of Linux pods (they are harmless on
Windows and only block spec.os, which WIN003 names).

## Why is this bad?
Charts hardened for the Pod Security `restricted` profile set `allowPrivilegeEscalation: false`,
`capabilities.drop: [ALL]` and `seccompProfile: RuntimeDefault` everywhere. On Windows they mean
nothing, and once the pod declares `spec.os.name: windows` the API server rejects it ("cannot be set
for a windows pod"); a Deployment then loops on `FailedCreate`. `kubectl debug` profiles that set
`privileged: true` fail the same way on Windows pods.

## Example
```yaml
spec:
  os: {name: windows}
  containers:
  - name: web
    image: mcr.microsoft.com/windows/servercore:ltsc2022
    securityContext:
      allowPrivilegeEscalation: false   # rejected
```

## Fix
Delete neutral values: `privileged: false`, `allowPrivilegeEscalation: false`,
`readOnlyRootFilesystem: false`, `capabilities` that only drop, `seccompProfile`/`appArmorProfile`
of type `RuntimeDefault`, `procMount: Default`.

* **Safe** when the pod declares `spec.os.name: windows`: the pod is rejected as it stands, and Pod
  Security admission (≥ 1.25) exempts Windows-declared pods from the checks these values satisfy, so
  deleting them loses nothing.
* **Opt-in** (`--fix-opt-in WIN103`) when `spec.os` is unset: there the values may be what lets the
  pod pass a `restricted` namespace, so they may only go together with adding `spec.os` (mutation M4
  with `stripLinuxOnlyFields`).

Other values Windows ignores (`runAsUser`, `seLinuxOptions`, …) are removed only on opt-in.
`privileged: true`, `capabilities.add` and `readOnlyRootFilesystem: true` express intent Windows
cannot meet: no automatic fix (drop them, or use a HostProcess pod for host access).

## Severity
`error` where the API server rejects the field (the pod declares `spec.os.name: windows` and the
target validates it); `warning` where the field is kept and ignored on Windows; `info` for a
neutral value (what Pod Security asks of Linux pods: harmless) and for a field a disabled
feature gate makes the API server drop.
"#,
    fix: Some(FixSafety::OptIn),
    source: "VAL, K-INTRO, K-PSS, issue-9 research §1.2 (measured on kube-apiserver 1.32)",
    applies: "K>=1.24, 1.23 with IdentifyPodOS (error with spec.os.name: windows); any (warning/info)",
    os: RuleOs::Windows,
    default_on: true,
    reads: Reads::LINUX_ONLY_FIELDS,
    mutation: Mutation::named(Recorded::LinuxOnlyFields),
};

pub(crate) fn container_securitycontext_linux_only<'a>(
    site: &PodSite<'a>,
    eval: &Eval<'a>,
) -> Vec<Finding> {
    let declared = eval.os_declared_windows(site) && pod::spec_os_available(eval.target);
    linux_only_findings(
        &WIN103,
        FieldPlace::ContainerSecurityContext,
        site,
        eval,
        |f| match f.class {
            FieldValue::Neutral if declared => Some(FixSafety::Safe),
            FieldValue::Neutral | FieldValue::NoEffect => Some(FixSafety::OptIn),
            FieldValue::Intent => None,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    use crate::rules::security::common::tests::OWN;
    use crate::rules::testutil::{apply, assert_says, cfg, ids, ids_in, only, set, unset, winok};
    use serde_json::Value;

    pub(crate) fn with_container_sc(obj: Value, list: &str, sc: Value) -> Value {
        set(
            obj,
            &format!("/spec/{list}"),
            json!([{"name":"x","image":"mcr.microsoft.com/windows/servercore:ltsc2022","securityContext":sc}]),
        )
    }

    #[test]
    fn t08_allow_privilege_escalation_false_is_deleted() {
        let pod = set(
            winok(),
            "/spec/containers/0/securityContext",
            json!({"allowPrivilegeEscalation": false}),
        );
        assert_eq!(ids(&pod, &cfg()), ["WIN103"]);
        let f = &only(&pod, &cfg(), "WIN103")[0];
        assert_eq!(f.severity, Severity::Error);
        assert_eq!(
            f.pointer,
            "/spec/containers/0/securityContext/allowPrivilegeEscalation"
        );
        assert_says(f, "container \"app\"");
        let fix = f.fix.as_ref().unwrap();
        assert_eq!(
            fix.safety,
            FixSafety::Safe,
            "spec.os is windows: deleting loses nothing"
        );
        let fixed = apply(&pod, f);
        assert_eq!(fixed["spec"]["containers"][0]["securityContext"], json!({}));
        assert!(ids(&fixed, &cfg()).is_empty());
    }

    #[test]
    fn win103_neutral_values_without_spec_os_are_opt_in() {
        let pod = set(
            unset(winok(), "/spec/os"),
            "/spec/containers/0/securityContext",
            json!({"allowPrivilegeEscalation": false, "seccompProfile": {"type":"RuntimeDefault"}}),
        );
        let fs = only(&pod, &cfg(), "WIN103");
        assert_eq!(fs.len(), 2);
        // Values Pod Security asks of Linux pods: harmless on Windows, they only block spec.os.
        for f in &fs {
            assert_eq!(f.severity, Severity::Info);
            assert_eq!(f.fix.as_ref().unwrap().safety, FixSafety::OptIn);
        }
    }

    #[test]
    fn t12_init_container_capabilities() {
        let pod = with_container_sc(
            winok(),
            "initContainers",
            json!({"capabilities":{"drop":["ALL"]}}),
        );
        assert_eq!(ids(&pod, &cfg()), ["WIN103"]);
        let fs = only(&pod, &cfg(), "WIN103");
        assert_eq!(fs.len(), 1);
        assert_eq!(
            fs[0].pointer,
            "/spec/initContainers/0/securityContext/capabilities"
        );
        assert_eq!(fs[0].fix.as_ref().unwrap().safety, FixSafety::Safe);
        let fixed = apply(&pod, &fs[0]);
        assert_eq!(
            fixed["spec"]["initContainers"][0]["securityContext"],
            json!({})
        );
        // capabilities.add: intent Windows cannot meet, no fix.
        let pod = with_container_sc(
            winok(),
            "initContainers",
            json!({"capabilities":{"add":["NET_ADMIN"],"drop":["ALL"]}}),
        );
        assert!(only(&pod, &cfg(), "WIN103")[0].fix.is_none());
    }

    #[test]
    fn t13_ephemeral_privileged() {
        let pod = set(
            winok(),
            "/spec/ephemeralContainers",
            json!([{"name":"debugger","image":"busybox:1.36","securityContext":{"privileged":true}}]),
        );
        assert_eq!(ids_in(&pod, &cfg(), OWN), ["WIN103"]);
        let f = &only(&pod, &cfg(), "WIN103")[0];
        assert_eq!(
            f.pointer,
            "/spec/ephemeralContainers/0/securityContext/privileged"
        );
        assert_eq!(f.severity, Severity::Error);
        assert!(
            f.fix.is_none(),
            "privileged: true is intent, never stripped silently"
        );
        assert_says(f, "HostProcess");
    }

    #[test]
    fn t55_read_only_root_filesystem_without_spec_os() {
        let pod = set(
            unset(winok(), "/spec/os"),
            "/spec/containers/0/securityContext/readOnlyRootFilesystem",
            json!(true),
        );
        assert_eq!(ids_in(&pod, &cfg(), OWN), ["WIN103"]);
        let f = &only(&pod, &cfg(), "WIN103")[0];
        assert_eq!(f.severity, Severity::Warning);
        assert!(f.fix.is_none());
    }

    #[test]
    fn win103_every_container_field() {
        let sc = json!({"seLinuxOptions":{"level":"s0"},"seccompProfile":{"type":"Localhost","localhostProfile":"p.json"},
            "capabilities":{"drop":["ALL"]},"readOnlyRootFilesystem":false,"privileged":false,"allowPrivilegeEscalation":true,
            "procMount":"Default","runAsUser":1000,"runAsGroup":1000,"appArmorProfile":{"type":"Unconfined"},
            "runAsNonRoot":true,"windowsOptions":{"runAsUserName":"ContainerUser"}});
        let pod = set(winok(), "/spec/containers/0/securityContext", sc);
        let fs = only(&pod, &cfg(), "WIN103");
        let got: Vec<(&str, Option<FixSafety>)> = fs
            .iter()
            .map(|f| {
                (
                    f.pointer.rsplit('/').next().unwrap(),
                    f.fix.as_ref().map(|x| x.safety),
                )
            })
            .collect();
        use FixSafety::*;
        assert_eq!(
            got,
            [
                ("appArmorProfile", Some(OptIn)),
                ("seLinuxOptions", Some(OptIn)),
                ("seccompProfile", Some(OptIn)),
                ("capabilities", Some(Safe)),
                ("readOnlyRootFilesystem", Some(Safe)),
                ("privileged", Some(Safe)),
                ("allowPrivilegeEscalation", Some(OptIn)),
                ("procMount", Some(Safe)),
                ("runAsUser", Some(OptIn)),
                ("runAsGroup", Some(OptIn)),
            ]
        );
        // Applying every fix leaves only the allowed fields.
        let mut fixed = pod.clone();
        for f in &fs {
            json_patch::patch(&mut fixed, &f.fix.as_ref().unwrap().ops).unwrap();
        }
        assert_eq!(
            fixed["spec"]["containers"][0]["securityContext"],
            json!({"runAsNonRoot":true,"windowsOptions":{"runAsUserName":"ContainerUser"}})
        );
        assert!(ids(&fixed, &cfg()).is_empty());
    }
}
