//! WIN107 `psa-restricted-windows`.

use crate::model::Eval;
use crate::model::KubeVersion;
use crate::model::labels::{PSA_ENFORCE_LABEL, PSA_ENFORCE_VERSION_LABEL};
use crate::model::meta::{Mutation, Reads, Recorded, RuleOs};
use crate::model::pod::{self};
use crate::model::workload::PodSite;
use crate::model::{Finding, Fix, FixSafety, RuleMeta, Severity, ops};
use crate::rules::Rule;
use serde_json::json;

/// WIN107 in the registry.
pub const RULE: Rule = Rule {
    meta: &WIN107,
    check: psa_restricted_windows,
};

// ---------------------------------------------------------------------------------------------
// WIN107: Pod Security restricted

/// The namespace's labels, when the object names its namespace and the namespace is known.
pub fn namespace_labels<'e>(
    site: &PodSite,
    eval: &'e Eval,
) -> Option<&'e std::collections::BTreeMap<String, String>> {
    eval.context.namespaces.get(site.namespace?)
}

pub static WIN107: RuleMeta = RuleMeta {
    id: "WIN107",
    name: "psa-restricted-windows",
    severity: Severity::Warning,
    summary: "Windows pod in a Pod Security 'restricted' namespace without spec.os.name: windows, or without runAsNonRoot: true",
    docs: r#"## What it does
Only when the pod's namespace is known (a Namespace object in the same input, or the cluster for the
webhook) and it is labelled `pod-security.kubernetes.io/enforce: restricted`:

* the Windows pod lacks `spec.os.name: windows`. Since Kubernetes 1.25 the restricted profile skips
  its seccomp, capabilities and allowPrivilegeEscalation checks only for pods that declare Windows;
  without it the pod is rejected unless it carries those Linux-only fields, which are meaningless on
  Windows and forbidden once `spec.os` is set (WIN101–WIN103);
* a container's effective `runAsNonRoot` is not `true`: restricted requires it for Windows pods too;
* the namespace pins `pod-security.kubernetes.io/enforce-version` below v1.25, whose restricted
  profile has no Windows exemption at all.

## Why is this bad?
Pod Security admission rejects the pod (or every pod of a workload), or the chart must carry Linux
settings that block `spec.os`.

## Example
```yaml
apiVersion: v1
kind: Namespace
metadata:
  name: web
  labels: {pod-security.kubernetes.io/enforce: restricted}
---
apiVersion: v1
kind: Pod
metadata: {name: iis, namespace: web}
spec:
  nodeSelector: {kubernetes.io/os: windows}
  containers:
  - name: iis
    image: mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2022
```

## Fix
Safe: add `spec.os: {name: windows}` — only when the pod has no WIN101–WIN103 field (the same guard
as WIN003 and mutation M4), and not on an update of a Pod. Set `runAsNonRoot: true` (with a
non-administrator user such as `ContainerUser`, see WIN409) by hand.
"#,
    fix: Some(FixSafety::Safe),
    source: "PSA, K-PSS",
    applies: "K>=1.25",
    os: RuleOs::Windows,
    default_on: true,
    reads: Reads::LINUX_ONLY_FIELDS,
    mutation: Mutation {
        recorded_as: Some(Recorded::Os),
        adds_spec_os: true,
        ..Mutation::DEFAULT
    },
};

pub(crate) fn psa_restricted_windows<'a>(site: &PodSite<'a>, eval: &Eval<'a>) -> Vec<Finding> {
    if !eval.target.kubernetes.at_least(1, 25) {
        return Vec::new();
    }
    let Some(labels) = namespace_labels(site, eval) else {
        return Vec::new();
    };
    if labels.get(PSA_ENFORCE_LABEL).map(String::as_str) != Some("restricted") {
        return Vec::new();
    }
    let ns = site.namespace.unwrap_or_default();
    let mut out = Vec::new();
    let pinned = labels
        .get(PSA_ENFORCE_VERSION_LABEL)
        .filter(|v| v.as_str() != "latest")
        .and_then(|v| KubeVersion::parse(v).map(|k| (v, k)));
    if let Some((v, _)) = pinned.filter(|(_, k)| !k.at_least(1, 25)) {
        out.push(Finding::new(
            &WIN107,
            site.spec_ptr.clone(),
            format!(
                "namespace {ns:?} enforces Pod Security \"restricted\" at version {v}, which predates the Windows exemptions of v1.25: a Windows pod cannot satisfy it (the seccomp, capabilities and allowPrivilegeEscalation fields it demands are forbidden on Windows pods). Set {PSA_ENFORCE_VERSION_LABEL} to v1.25 or later (or latest)"
            ),
        ));
    } else if !eval.os_declared_windows(site) {
        let blockers = eval.linux_only_fields(site);
        let mut msg = format!(
            "namespace {ns:?} enforces Pod Security \"restricted\", which exempts Windows pods from its seccomp, capabilities and allowPrivilegeEscalation checks only when they declare spec.os.name: windows; without it the pod is rejected unless it carries those Linux-only fields. Set spec.os.name: windows"
        );
        if !blockers.is_empty() {
            let names: Vec<String> = blockers.iter().map(|f| pod::dotted(&f.pointer)).collect();
            msg.push_str(&format!(
                ", after removing the Linux-only fields the API server would then reject: {}",
                names.join(", ")
            ));
        }
        let mut f = Finding::new(&WIN107, site.spec_ptr.clone(), msg);
        if blockers.is_empty() && pod::spec_os_available(eval.target) && eval.fix_possible(site) {
            f = f.with_fix(Fix {
                safety: FixSafety::Safe,
                description: "add spec.os.name=windows".into(),
                ops: vec![ops::add(&site.ptr("/os"), json!({"name": "windows"}))],
            });
        }
        out.push(f);
    }
    // runAsNonRoot: true for every container (pod-level or each container).
    let mut missing: Vec<(String, Vec<String>)> = Vec::new();
    for c in site.containers() {
        let pointer = match pod::effective_run_as_non_root(site, &c) {
            Some(e) if e.value => continue,
            Some(e) => e.pointer,
            None if site.get("/securityContext").is_some() => site.ptr("/securityContext"),
            None => site.spec_ptr.clone(),
        };
        match missing.iter_mut().find(|(p, _)| *p == pointer) {
            Some((_, names)) => names.push(c.label()),
            None => missing.push((pointer, vec![c.label()])),
        }
    }
    for (pointer, names) in missing {
        out.push(Finding::new(
            &WIN107,
            pointer,
            format!(
                "namespace {ns:?} enforces Pod Security \"restricted\", which requires runAsNonRoot: true for Windows pods too; {} not. Set spec.securityContext.runAsNonRoot: true with a non-administrator user (windowsOptions.runAsUserName: ContainerUser)",
                if names.len() == 1 {
                    format!("{} does", names[0])
                } else {
                    format!("{} do", names.join(", "))
                }
            ),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use crate::engine::lint_object;
    use crate::model::Context;
    use crate::model::Operation;
    use crate::rules::testutil::{apply, assert_says, at, cfg, set, unset, winok};
    use serde_json::Value;

    pub(crate) fn ns(name: &str, labels: Value) -> Value {
        json!({"apiVersion":"v1","kind":"Namespace","metadata":{"name":name,"labels":labels}})
    }

    pub(crate) fn lint_in(
        obj: &Value,
        c: &Config,
        namespace: Option<Value>,
        op: Operation,
    ) -> Vec<Finding> {
        let mut cx = Context::default();
        if let Some(n) = namespace {
            cx.add(&n);
        }
        lint_object(obj, c, &cx, op).findings
    }

    pub(crate) fn restricted_pod() -> Value {
        let p = set(winok(), "/metadata/namespace", json!("web"));
        set(p, "/spec/securityContext/runAsNonRoot", json!(true))
    }

    #[test]
    fn win107_restricted_namespace_without_spec_os() {
        let restricted = ns("web", json!({PSA_ENFORCE_LABEL: "restricted"}));
        let pod = unset(restricted_pod(), "/spec/os");
        let fs: Vec<Finding> = lint_in(&pod, &cfg(), Some(restricted.clone()), Operation::Lint)
            .into_iter()
            .filter(|f| f.rule.id == "WIN107")
            .collect();
        assert_eq!(fs.len(), 1);
        assert_eq!(fs[0].pointer, "/spec");
        assert_eq!(fs[0].severity, Severity::Warning);
        assert_eq!(fs[0].fix.as_ref().unwrap().safety, FixSafety::Safe);
        let fixed = apply(&pod, &fs[0]);
        assert_eq!(fixed["spec"]["os"], json!({"name":"windows"}));
        assert!(
            lint_in(&fixed, &cfg(), Some(restricted.clone()), Operation::Lint)
                .iter()
                .all(|f| f.rule.id != "WIN107")
        );
        // Linux-only fields present: no fix (the API server would reject spec.os).
        let guarded = set(
            pod.clone(),
            "/spec/containers/0/securityContext/allowPrivilegeEscalation",
            json!(false),
        );
        let f = lint_in(&guarded, &cfg(), Some(restricted.clone()), Operation::Lint)
            .into_iter()
            .find(|f| f.rule.id == "WIN107")
            .unwrap();
        assert!(f.fix.is_none());
        assert_says(&f, "allowPrivilegeEscalation");
        // No fix when a Pod is updated (spec.os is immutable).
        let f = lint_in(&pod, &cfg(), Some(restricted.clone()), Operation::Update)
            .into_iter()
            .find(|f| f.rule.id == "WIN107")
            .unwrap();
        assert!(f.fix.is_none());
        // Not before 1.25.
        assert!(
            lint_in(&pod, &at(24), Some(restricted), Operation::Lint)
                .iter()
                .all(|f| f.rule.id != "WIN107")
        );
    }

    #[test]
    fn win107_only_on_known_restricted_namespaces() {
        let pod = unset(restricted_pod(), "/spec/os");
        let none = |n: Option<Value>, p: &Value| {
            lint_in(p, &cfg(), n, Operation::Lint)
                .iter()
                .all(|f| f.rule.id != "WIN107")
        };
        assert!(
            none(None, &pod),
            "unknown namespace labels: never on a guess"
        );
        assert!(none(
            Some(ns("web", json!({PSA_ENFORCE_LABEL: "baseline"}))),
            &pod
        ));
        assert!(none(
            Some(ns("other", json!({PSA_ENFORCE_LABEL: "restricted"}))),
            &pod
        ));
        // A pod that does not name its namespace is not matched to one.
        assert!(none(
            Some(ns("default", json!({PSA_ENFORCE_LABEL: "restricted"}))),
            &unset(pod, "/metadata/namespace")
        ));
        // With spec.os and runAsNonRoot the restricted profile is satisfied.
        assert!(none(
            Some(ns("web", json!({PSA_ENFORCE_LABEL: "restricted"}))),
            &restricted_pod()
        ));
    }

    #[test]
    fn win107_requires_run_as_non_root() {
        let restricted = ns("web", json!({PSA_ENFORCE_LABEL: "restricted"}));
        let pod = unset(restricted_pod(), "/spec/securityContext/runAsNonRoot");
        let fs: Vec<Finding> = lint_in(&pod, &cfg(), Some(restricted.clone()), Operation::Lint)
            .into_iter()
            .filter(|f| f.rule.id == "WIN107")
            .collect();
        assert_eq!(fs.len(), 1);
        assert_says(&fs[0], "runAsNonRoot: true");
        assert_eq!(fs[0].pointer, "/spec/securityContext");
        assert!(fs[0].fix.is_none());
        // A container that overrides with false is pointed at.
        let pod = set(
            restricted_pod(),
            "/spec/containers/0/securityContext/runAsNonRoot",
            json!(false),
        );
        let f = lint_in(&pod, &cfg(), Some(restricted), Operation::Lint)
            .into_iter()
            .find(|f| f.rule.id == "WIN107")
            .unwrap();
        assert_eq!(f.pointer, "/spec/containers/0/securityContext/runAsNonRoot");
    }

    #[test]
    fn win107_pinned_old_policy_version() {
        let old = ns(
            "web",
            json!({PSA_ENFORCE_LABEL: "restricted", PSA_ENFORCE_VERSION_LABEL: "v1.24"}),
        );
        let fs: Vec<Finding> = lint_in(&restricted_pod(), &cfg(), Some(old), Operation::Lint)
            .into_iter()
            .filter(|f| f.rule.id == "WIN107")
            .collect();
        assert_eq!(fs.len(), 1);
        assert_says(&fs[0], "v1.24");
        let latest = ns(
            "web",
            json!({PSA_ENFORCE_LABEL: "restricted", PSA_ENFORCE_VERSION_LABEL: "latest"}),
        );
        assert!(
            lint_in(&restricted_pod(), &cfg(), Some(latest), Operation::Lint)
                .iter()
                .all(|f| f.rule.id != "WIN107")
        );
    }
}
