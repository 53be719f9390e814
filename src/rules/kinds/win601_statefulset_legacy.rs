//! WIN601 `statefulset-legacy`.

use crate::model::Eval;
use crate::model::meta::{Mutation, Reads, RuleOs};
use crate::model::workload::PodSite;
use crate::model::{Finding, RuleMeta, Severity};
use crate::rules::Rule;

/// WIN601 in the registry.
pub const RULE: Rule = Rule {
    meta: &WIN601,
    check: statefulset_legacy,
};

pub static WIN601: RuleMeta = RuleMeta {
    id: "WIN601",
    name: "statefulset-legacy",
    severity: Severity::Error,
    summary: "StatefulSet of Windows pods on Kubernetes 1.13 or older",
    docs: r#"## What it does
Finds StatefulSets whose pod template is Windows when the target is Kubernetes 1.13 or older.

## Why is this bad?
Before Windows support went GA in 1.14, StatefulSets were not supported for Windows pods (the
Kubernetes 1.9-1.13 "Using Windows Server Containers" guide).

## Example
```yaml
kind: StatefulSet
spec:
  template:
    spec:
      nodeSelector: {beta.kubernetes.io/os: windows}
```

## Fix
Use a Deployment, or target Kubernetes 1.14 or newer.
"#,
    fix: None,
    source: "seed, K-OLD11",
    applies: "K<=1.13",
    os: RuleOs::Windows,
    default_on: true,
    reads: Reads::NONE,
    mutation: Mutation::DEFAULT,
};

pub(crate) fn statefulset_legacy(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    if site.kind != "StatefulSet" || eval.target.kubernetes.at_least(1, 14) {
        return Vec::new();
    }
    vec![Finding::new(
        &WIN601,
        "/kind",
        format!(
            "StatefulSets of Windows pods are not supported on Kubernetes {} (supported from 1.14); use a Deployment or upgrade",
            eval.target.kubernetes
        ),
    )]
}
