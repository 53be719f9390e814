//! WIN402 `hyperv-annotation`.

use crate::model::labels::HYPERV_ANNOTATION;
use crate::model::meta::{Area, Mutation, Reads, Recorded, RuleOs};
use crate::model::workload::{PodSite, list};
use crate::model::{Eval, escape};
use crate::model::{Finding, Fix, FixSafety, RuleMeta, Severity, ops};
use crate::rules::Rule;
use serde_json::json;

/// WIN402 in the registry.
pub const RULE: Rule = Rule {
    meta: &WIN402,
    check: hyperv_annotation,
};

pub static WIN402: RuleMeta = RuleMeta {
    id: "WIN402",
    name: "hyperv-annotation",
    severity: Severity::Warning,
    summary: "experimental.windows.kubernetes.io/isolation-type: hyperv (ignored, single-container only, or removed)",
    docs: r#"## What it does
Checks the annotation `experimental.windows.kubernetes.io/isolation-type: hyperv`:

* Kubernetes < 1.10: not implemented, ignored → warning;
* 1.10–1.20: needs the kubelet gate `HyperVContainer=true` (warning when the target does not
  enable it) and supports exactly one container → **error** with more than one;
* ≥ 1.21: removed, no effect → warning.

## Why is this bad?
The pod silently runs with process isolation (the image build must then match the host), or is
rejected for having several containers.

## Example
```yaml
metadata:
  annotations:
    experimental.windows.kubernetes.io/isolation-type: hyperv
```

## Fix
Kubernetes ≥ 1.21, opt-in: replace the annotation with `runtimeClassName` of the configured
Hyper-V RuntimeClass (handler `runhcs-wcow-hypervisor`, containerd ≥ 1.7).

## Severity
`warning` for the annotation; `error` for a pod of more than one container on Kubernetes
1.10-1.20, where annotation-based Hyper-V isolation runs exactly one.
"#,
    fix: Some(FixSafety::OptIn),
    source: "PR58751, PR95505, PR97141, WT, E2E-HV",
    applies: "all (error K1.10–1.20 with >1 container)",
    os: RuleOs::Windows,
    default_on: true,
    reads: Reads::of(&[Area::RuntimeClass, Area::Containers]),
    mutation: Mutation::named(Recorded::RuntimeClassName),
};

pub(crate) fn hyperv_annotation(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    if site.annotation(HYPERV_ANNOTATION) != Some("hyperv") {
        return Vec::new();
    }
    let k = eval.target.kubernetes;
    let p = site.meta_ptr(&format!("/annotations/{}", escape(HYPERV_ANNOTATION)));
    let n = list(site.spec, "containers").len();
    if !k.at_least(1, 10) {
        return vec![Finding::new(
            &WIN402,
            p,
            format!(
                "the Hyper-V isolation annotation is ignored before Kubernetes 1.10 (target {k}); the pod runs with process isolation, so its image must match the host build"
            ),
        )];
    }
    if !k.at_least(1, 21) {
        if n > 1 {
            return vec![
                Finding::new(
                    &WIN402,
                    p,
                    format!(
                        "Hyper-V isolation via annotation supports exactly one container per pod on Kubernetes 1.10-1.20, this pod has {n}; split the pod or remove the annotation"
                    ),
                )
                .severity(Severity::Error),
            ];
        }
        if !eval.target.gate("HyperVContainer") {
            return vec![Finding::new(
                &WIN402,
                p,
                "the Hyper-V isolation annotation only works with the kubelet feature gate HyperVContainer=true, which the target does not enable; without it the pod runs with process isolation",
            )];
        }
        return Vec::new();
    }
    let rc = &eval.target.hyperv_runtime_class;
    let mut f = Finding::new(
        &WIN402,
        p.clone(),
        format!(
            "the Hyper-V isolation annotation was removed in Kubernetes 1.21 and has no effect on {k}; the pod runs with process isolation. Use runtimeClassName: {rc} (handler runhcs-wcow-hypervisor, containerd 1.7+)"
        ),
    );
    let current = site.str("/runtimeClassName");
    if eval.fix_possible(site) && site.spec.is_object() && current.is_none_or(|c| c == rc) {
        let mut fix_ops = vec![ops::remove(&p)];
        if current.is_none() {
            fix_ops.push(ops::add(&site.ptr("/runtimeClassName"), json!(rc)));
        }
        f = f.with_fix(Fix {
            safety: FixSafety::OptIn,
            description: format!("replace the Hyper-V annotation with runtimeClassName {rc}"),
            ops: fix_ops,
        });
    }
    vec![f]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::windows;
    use crate::rules::legacy::common::tests::OWN;
    use crate::rules::testutil::{
        at, cfg, fixed, has_fix, hit, hits, ids_in, second_container, set, winok,
    };
    use serde_json::{Value, json};

    pub(crate) fn hyperv(pod: Value) -> Value {
        set(
            pod,
            "/metadata/annotations",
            json!({HYPERV_ANNOTATION: "hyperv"}),
        )
    }

    #[test]
    fn t35_hyperv_annotation() {
        let pod = hyperv(
            json!({"apiVersion":"v1","kind":"Pod","metadata":{"name":"hv"},"spec":{
            "nodeSelector":{"beta.kubernetes.io/os":"windows"},
            "containers":[
                {"name":"a","image":"mcr.microsoft.com/windows/servercore:1803"},
                {"name":"b","image":"mcr.microsoft.com/windows/servercore:1803"}]}}),
        );
        let mut t = at(12);
        t.target.windows_builds = vec![windows::V1803];
        t.target.windows_taints = Vec::new();
        let p = "/metadata/annotations/experimental.windows.kubernetes.io~1isolation-type";
        assert_eq!(ids_in(&pod, &t, OWN), vec!["WIN402"]);
        assert_eq!(hits(&pod, &t, "WIN402"), hit(Severity::Error, p));
        // Same annotation on WINOK with two containers, default target: removed → warning.
        let modern = hyperv(second_container(
            winok(),
            "mcr.microsoft.com/windows/servercore:ltsc2022",
        ));
        assert_eq!(ids_in(&modern, &cfg(), OWN), vec!["WIN402"]);
        assert_eq!(hits(&modern, &cfg(), "WIN402"), hit(Severity::Warning, p));
    }

    #[test]
    fn win402_versions_and_fix() {
        let one = hyperv(winok());
        let p = "/metadata/annotations/experimental.windows.kubernetes.io~1isolation-type";
        // < 1.10: ignored.
        assert_eq!(hits(&one, &at(9), "WIN402"), hit(Severity::Warning, p));
        // 1.10–1.20, one container: needs the kubelet gate.
        assert_eq!(hits(&one, &at(12), "WIN402"), hit(Severity::Warning, p));
        let mut gate = at(12);
        gate.target
            .feature_gates
            .insert("HyperVContainer".into(), true);
        assert!(hits(&one, &gate, "WIN402").is_empty());
        assert!(!has_fix(&one, &at(12), "WIN402"));
        // ≥ 1.21: opt-in replacement by the Hyper-V RuntimeClass.
        let f = fixed(&one, &cfg(), "WIN402");
        assert_eq!(f["spec"]["runtimeClassName"], "runhcs-wcow-hypervisor");
        assert_eq!(f["metadata"]["annotations"], json!({}));
        // Another RuntimeClass already chosen: no fix.
        let other = set(one.clone(), "/spec/runtimeClassName", json!("windows-2019"));
        assert!(!has_fix(&other, &cfg(), "WIN402"));
        // Not "hyperv": nothing.
        let proc = set(
            winok(),
            "/metadata/annotations",
            json!({HYPERV_ANNOTATION: "process"}),
        );
        assert!(hits(&proc, &cfg(), "WIN402").is_empty());
        // Deployment template: pointer into the template metadata.
        let dep = json!({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},
            "spec":{"template":{"metadata":one["metadata"].clone(),"spec":one["spec"].clone()}}});
        assert_eq!(
            hits(&dep, &cfg(), "WIN402")[0].1,
            "/spec/template/metadata/annotations/experimental.windows.kubernetes.io~1isolation-type"
        );
        let fd = fixed(&dep, &cfg(), "WIN402");
        assert_eq!(
            fd["spec"]["template"]["spec"]["runtimeClassName"],
            "runhcs-wcow-hypervisor"
        );
    }
}
