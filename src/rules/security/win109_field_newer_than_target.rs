//! WIN109 `field-newer-than-target`.

use crate::model::Eval;
use crate::model::api_fields::{self, Fate};
use crate::model::meta::{Mutation, Reads, RuleOs};
use crate::model::pod::{self};
use crate::model::workload::PodSite;
use crate::model::{Finding, RuleMeta, Severity};
use crate::rules::Rule;

/// WIN109 in the registry.
pub const RULE: Rule = Rule {
    meta: &WIN109,
    check: field_newer_than_target,
};

// ---------------------------------------------------------------------------------------------
// WIN109: fields the target does not have

pub static WIN109: RuleMeta = RuleMeta {
    id: "WIN109",
    name: "field-newer-than-target",
    severity: Severity::Warning,
    summary: "Field the target's API server does not have yet, or drops because its feature gate is off (spec.os, windowsOptions.runAsUserName, appArmorProfile, …)",
    docs: r#"## What it does
Finds fields of a Windows pod that the target's Kubernetes version does not have yet: `spec.os`
(1.23), `securityContext.windowsOptions` (1.14) and its `gmsaCredentialSpecName`/`gmsaCredentialSpec`
(1.14), `runAsUserName` (1.16), `appArmorProfile` (1.30), `seccompProfile` (1.19), `hostUsers`
(1.25), pod-level `resources` (1.32), … — and the Windows fields a disabled feature gate drops
(`runAsUserName` on 1.16, the gMSA fields on 1.14–1.15, `spec.os` on 1.23: their gates were alpha,
off by default). `hostProcess` is WIN203's.

## Why is this bad?
What happens depends on the client. `kubectl` refuses the manifest ("strict decoding error:
unknown field …" from 1.25; its client-side validation before); other clients (Helm, GitOps
controllers, client libraries) have the field dropped by the API server, with a warning from 1.25
and silently before. Either way the setting has no effect: a container meant to run as
`ContainerUser` runs as the image's default user, a gMSA pod runs without its domain identity, a pod
with `spec.os` is not validated as Windows.

## Example
```yaml
# target: kubernetes 1.15
spec:
  securityContext:
    windowsOptions:
      runAsUserName: ContainerUser   # added in 1.16
```

## Fix
Upgrade the cluster, or remove the field and get the behaviour another way (e.g. a `USER` in the
image instead of `runAsUserName`).
"#,
    fix: None,
    source: "issue-9 research §1.1, §1.4 (feature-gate history, measured on kube-apiserver 1.32)",
    applies: "K before the field's release, or its feature gate off",
    os: RuleOs::Windows,
    default_on: true,
    reads: Reads::ALL,
    mutation: Mutation::DEFAULT,
};

/// What losing the field means, for WIN109's message.
pub(crate) fn lost_consequence(field: &str) -> &'static str {
    match field {
        "os" => {
            "the API server does not validate the pod as Windows and the kubelet does not check its OS"
        }
        "windowsOptions" => {
            "its settings (runAsUserName, gMSA) have no effect: the containers run as the image's default user, without a domain identity"
        }
        "runAsUserName" => "the container runs as the image's default user",
        "gmsaCredentialSpecName" | "gmsaCredentialSpec" => {
            "the container runs without the gMSA domain identity"
        }
        _ => "it would have no effect on Windows anyway; remove it",
    }
}

pub(crate) fn field_newer_than_target(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    let t = eval.target;
    let k = t.kubernetes;
    pod::fields_lost_at_target(site, t)
        .into_iter()
        .map(|f| {
            let path = pod::dotted(&f.pointer);
            let who = f
                .container
                .map(|c| format!(" ({})", c.label()))
                .unwrap_or_default();
            let consequence = lost_consequence(f.api.name);
            let msg = match f.fate {
                Fate::Dropped { gate } => {
                    let kept = crate::model::target::gate_info(gate)
                        .and_then(|g| g.on_by_default_from())
                        .map(|m| format!("; it is kept from Kubernetes 1.{m}"))
                        .unwrap_or_default();
                    format!(
                        "{path}{who} is dropped by the Kubernetes {k} API server ({}): {consequence}{kept}",
                        api_fields::gate_off_text(t, gate)
                    )
                }
                _ => format!(
                    "{path}{who} does not exist in Kubernetes {k} (added in 1.{}): {}; {consequence}",
                    f.api.introduced,
                    api_fields::unknown_field_text(t, &path)
                ),
            };
            Finding::new(&WIN109, f.pointer, msg)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use serde_json::json;

    use crate::rules::testutil::{assert_says, at, ids_in, only, set, unset, winok};

    #[test]
    fn win109_fields_newer_than_the_target() {
        let pod = set(
            set(
                winok(),
                "/spec/securityContext/windowsOptions",
                json!({"runAsUserName": "ContainerUser"}),
            ),
            "/spec/containers/0/securityContext/windowsOptions",
            json!({"gmsaCredentialSpecName": "webapp1", "runAsUserName": "ContainerUser"}),
        );
        let w = |c: &Config| -> Vec<(String, Severity)> {
            only(&pod, c, "WIN109")
                .into_iter()
                .map(|f| (f.pointer, f.severity))
                .collect()
        };
        // 1.9: neither spec.os nor windowsOptions exist; windowsOptions is reported whole.
        let w9 = w(&at(9));
        assert_eq!(
            w9,
            [
                ("/spec/os".to_string(), Severity::Warning),
                (
                    "/spec/securityContext/windowsOptions".to_string(),
                    Severity::Warning
                ),
                (
                    "/spec/containers/0/securityContext/windowsOptions".to_string(),
                    Severity::Warning
                ),
            ]
        );
        let f = &only(&pod, &at(9), "WIN109")[1];
        assert!(
            f.message.starts_with(
                "spec.securityContext.windowsOptions does not exist in Kubernetes 1.9 (added in 1.14): kubectl's client-side validation refuses the manifest"
            ),
            "{}",
            f.message
        );
        // 1.15: windowsOptions exists, gMSA is alpha (off: dropped), runAsUserName does not.
        let ptrs = |c: &Config| -> Vec<String> { w(c).into_iter().map(|(p, _)| p).collect() };
        assert_eq!(
            ptrs(&at(15)),
            [
                "/spec/os",
                "/spec/securityContext/windowsOptions/runAsUserName",
                "/spec/containers/0/securityContext/windowsOptions/gmsaCredentialSpecName",
                "/spec/containers/0/securityContext/windowsOptions/runAsUserName"
            ]
        );
        // 1.16: runAsUserName is alpha and off: dropped.
        let f = &only(&pod, &at(16), "WIN109")[1];
        assert!(
            f.message.starts_with(
                "spec.securityContext.windowsOptions.runAsUserName is dropped by the Kubernetes 1.16 API server (feature gate WindowsRunAsUserName is off by default before 1.17): the container runs as the image's default user; it is kept from Kubernetes 1.17"
            ),
            "{}",
            f.message
        );
        // 1.23: only spec.os (IdentifyPodOS off by default); 1.24: nothing.
        assert_eq!(ptrs(&at(23)), ["/spec/os"]);
        assert!(ptrs(&at(24)).is_empty());
        // A Linux-only field the target does not know: unknown, with the strict-decoding story.
        let aa = set(
            winok(),
            "/spec/containers/0/securityContext/appArmorProfile",
            json!({"type": "RuntimeDefault"}),
        );
        let f = &only(&aa, &at(29), "WIN109")[0];
        assert_eq!(
            f.pointer,
            "/spec/containers/0/securityContext/appArmorProfile"
        );
        assert_says(
            f,
            "kubectl refuses the manifest (\"strict decoding error: unknown field \\\"spec.containers[0].securityContext.appArmorProfile\\\"\")",
        );
        assert!(only(&aa, &at(29), "WIN103").is_empty());
        assert!(only(&aa, &at(30), "WIN109").is_empty());
        // hostProcess is WIN203's.
        let hp = set(
            winok(),
            "/spec/securityContext/windowsOptions",
            json!({"hostProcess": true}),
        );
        assert!(
            only(&hp, &at(21), "WIN109")
                .iter()
                .all(|f| !f.pointer.contains("hostProcess"))
        );
        assert_eq!(only(&hp, &at(21), "WIN203").len(), 1);
    }

    #[test]
    fn win412_pod_level_resources() {
        let pod = set(
            winok(),
            "/spec/resources",
            json!({"limits": {"cpu": "2", "memory": "4Gi"}}),
        );
        let sev = |c: &Config| only(&pod, c, "WIN412").first().map(|f| f.severity);
        assert_eq!(sev(&at(34)), Some(Severity::Error));
        assert_eq!(sev(&at(33)), Some(Severity::Info));
        assert_eq!(sev(&at(32)), Some(Severity::Info));
        assert_eq!(sev(&at(31)), None);
        assert_eq!(ids_in(&pod, &at(31), &["WIN109"]), ["WIN109"]);
        let f = &only(&pod, &at(32), "WIN412")[0];
        assert!(
            f.message.starts_with(
                "spec.resources is dropped by the Kubernetes 1.32 API server (feature gate PodLevelResources is off by default before 1.34): the field has no effect; from Kubernetes 1.34 the API server rejects it"
            ),
            "{}",
            f.message
        );
        assert!(f.fix.is_none());
        // Without spec.os: not supported on Windows (warning), and it blocks spec.os from 1.34.
        let no_os = unset(pod, "/spec/os");
        assert_eq!(
            only(&no_os, &at(34), "WIN412")[0].severity,
            Severity::Warning
        );
        assert!(only(&no_os, &at(34), "WIN003")[0].fix.is_none());
        assert!(only(&no_os, &at(33), "WIN003")[0].fix.is_some());
    }
}
