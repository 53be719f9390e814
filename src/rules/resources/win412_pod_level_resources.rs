//! WIN412 `pod-level-resources`.

use crate::model::Eval;
use crate::model::meta::{Mutation, Reads, RuleOs};
use crate::model::pod::FieldPlace;
use crate::model::workload::PodSite;
use crate::model::{Finding, RuleMeta, Severity};
use crate::rules::Rule;

/// WIN412 in the registry.
pub const RULE: Rule = Rule {
    meta: &WIN412,
    check: pod_level_resources,
};

// ---------------------------------------------------------------------------------------------
// WIN412

pub static WIN412: RuleMeta = RuleMeta {
    id: "WIN412",
    name: "pod-level-resources",
    severity: Severity::Error,
    summary: "Pod-level spec.resources on a Windows pod (not supported on Windows; rejected with spec.os.name: windows from 1.34)",
    docs: r#"## What it does
Reports the pod-level `spec.resources` (the `PodLevelResources` feature) on Windows pods.

Severity, by what the target's API server does:

* **error** with `spec.os.name: windows` from Kubernetes 1.34 (`PodLevelResources` beta, on by
  default; kubernetes PR #133046: the API server rejects pod-level resources on pods that target
  Windows);
* **info** on 1.32–1.33 with default gates: the gate is off, the API server drops the field and
  admits the pod (measured on 1.32);
* **warning** without `spec.os`: Windows nodes do not support pod-level resources.

Before 1.32 the field does not exist (WIN109).

## Why is this bad?
Pod-level resources are not supported for Windows pods: the budget is not enforced, and once the pod
declares Windows the API server refuses it.

## Example
```yaml
spec:
  os: {name: windows}
  resources:
    limits: {cpu: "2", memory: 4Gi}
```

## Fix
Set requests and limits on each container instead.

## Severity
`error` where the API server rejects the field (the pod declares `spec.os.name: windows` and the
target validates it); `warning` where the field is kept and ignored on Windows; `info` for a
neutral value (what Pod Security asks of Linux pods: harmless) and for a field a disabled
feature gate makes the API server drop.
"#,
    fix: None,
    source: "kubernetes PR #133046, feature-gates/PodLevelResources.md, issue-9 research §1.2",
    applies: "K>=1.32 (error with spec.os.name: windows from 1.34)",
    os: RuleOs::Windows,
    default_on: true,
    reads: Reads::LINUX_ONLY_FIELDS,
    mutation: Mutation::DEFAULT,
};

pub(crate) fn pod_level_resources<'a>(site: &PodSite<'a>, eval: &Eval<'a>) -> Vec<Finding> {
    crate::rules::security::common::linux_only_findings(
        &WIN412,
        FieldPlace::PodResources,
        site,
        eval,
        |_| None,
    )
}
