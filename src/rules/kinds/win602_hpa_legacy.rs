//! WIN602 `hpa-legacy`.

use crate::model::Eval;
use crate::model::meta::{Mutation, Reads, RuleOs};
use crate::model::workload::PodSite;
use crate::model::{Finding, RuleMeta, Severity};
use crate::rules::Rule;

/// WIN602 in the registry.
pub const RULE: Rule = Rule {
    meta: &WIN602,
    check: hpa_legacy,
};

pub static WIN602: RuleMeta = RuleMeta {
    id: "WIN602",
    name: "hpa-legacy",
    severity: Severity::Warning,
    summary: "HorizontalPodAutoscaler targets a Windows workload on Kubernetes 1.13 or older",
    docs: r#"## What it does
Finds Windows workloads that a HorizontalPodAutoscaler in the same input scales, when the target is
Kubernetes 1.13 or older. The finding is reported on the workload.

## Why is this bad?
Before 1.14, the HPA was not supported for Windows pods (no metrics pipeline for Windows nodes).

## Example
```yaml
kind: HorizontalPodAutoscaler
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: iis}
```

## Fix
Scale manually, or target Kubernetes 1.14 or newer.
"#,
    fix: None,
    source: "seed, K-OLD11",
    applies: "K<=1.13",
    os: RuleOs::Windows,
    default_on: true,
    reads: Reads::NONE,
    mutation: Mutation::DEFAULT,
};

pub(crate) fn hpa_legacy(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    if eval.target.kubernetes.at_least(1, 14) {
        return Vec::new();
    }
    let ns = site.namespace.unwrap_or("default").to_string();
    let key = (ns, site.kind.to_string(), site.object_name().to_string());
    match eval.context.hpa_targets.get(&key) {
        Some(hpa) => vec![Finding::new(
            &WIN602,
            "/metadata/name",
            format!(
                "HorizontalPodAutoscaler {hpa:?} scales this Windows {}; the HPA is not supported for Windows pods on Kubernetes {}",
                site.kind, eval.target.kubernetes
            ),
        )],
        None => Vec::new(),
    }
}
