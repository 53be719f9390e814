//! WIN6xx: workload kinds (shared/rules.md §2.7).

use serde_json::Value;

use super::Rule;
use crate::model::Eval;
use crate::model::classify::{self, Os};
use crate::model::meta::{Fact, Mutation, RuleOs};
use crate::model::workload::PodSite;
use crate::model::{Finding, RuleMeta, Severity};

pub fn rules() -> Vec<Rule> {
    vec![
        Rule {
            meta: &WIN601,
            check: statefulset_legacy,
        },
        Rule {
            meta: &WIN602,
            check: hpa_legacy,
        },
        Rule {
            meta: &WIN603,
            check: os_unpinned_daemonset,
        },
    ]
}

pub static WIN601: RuleMeta = RuleMeta {
    id: "WIN601",
    name: "statefulset-legacy",
    severity: Severity::Error,
    summary: "StatefulSet of Windows pods on Kubernetes 1.13 or older",
    docs: r#"## What it does
Finds StatefulSets whose pod template is Windows when the target is Kubernetes 1.13 or older.

## Why is this bad?
Before Windows support went GA in 1.14, StatefulSets were not supported for Windows pods (seed-era
"Using Windows Server Containers" guide).

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
    context: &[],
    mutation: Mutation::DEFAULT,
};

fn statefulset_legacy(site: &PodSite, eval: &Eval) -> Vec<Finding> {
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
    context: &[Fact::HpaTargets],
    mutation: Mutation::DEFAULT,
};

fn hpa_legacy(site: &PodSite, eval: &Eval) -> Vec<Finding> {
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

pub static WIN603: RuleMeta = RuleMeta {
    id: "WIN603",
    name: "os-unpinned-daemonset",
    severity: Severity::Warning,
    summary: "DaemonSet without an OS pin: it runs on every node, Windows nodes included",
    docs: r#"## What it does
Finds DaemonSets of Linux (or OS-unknown) pods whose template has no OS pin: no
`kubernetes.io/os` node selector, no required node affinity on it, and no RuntimeClass that
supplies one. With the cluster's nodes known (`winlint serve`, `--cluster`, `audit`) it reports
only DaemonSets whose pods can land on one of its Windows nodes (selectors and taints); offline it
cannot know whether the Windows nodes are tainted against them. A Windows DaemonSet without an OS
pin is reported by WIN001.

## Why is this bad?
A DaemonSet targets every node. In a mixed cluster its Linux pods land on untainted Windows nodes too
and fail with `ErrImagePull` ("no matching manifest for windows/amd64"), or worse, a multi-OS image
resolves to a Windows variant that fails later.

## Example
```yaml
kind: DaemonSet
spec:
  template:
    spec:
      containers:
      - name: fluent-bit
        image: fluent/fluent-bit:2.2
```

## Fix
Add `nodeSelector: {kubernetes.io/os: linux}` (or `windows` for a Windows agent).
"#,
    fix: None,
    source: "K-UG",
    applies: "all",
    os: RuleOs::Any,
    context: &[Fact::Nodes],
    mutation: Mutation::DEFAULT,
};

fn os_unpinned_daemonset(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    // A Windows DaemonSet without an OS pin is WIN001's; this rule is about the Linux agents.
    if site.kind != "DaemonSet"
        || eval.class.is_windows()
        || classify::has_os_pin(site, eval.context, Os::Linux)
        || classify::has_os_pin(site, eval.context, Os::Windows)
    {
        return Vec::new();
    }
    let p = eval.placement(site);
    if p.observed() && p.windows_fitting().is_empty() {
        // Its pods land on no Windows node of the cluster (taints, selectors).
        return Vec::new();
    }
    let ptr = if site.spec.get("nodeSelector").is_some_and(Value::is_object) {
        site.ptr("/nodeSelector")
    } else {
        site.spec_ptr.clone()
    };
    vec![Finding::new(
        &WIN603,
        ptr,
        "DaemonSet has no OS node selector, so it is scheduled onto every node, Windows nodes included; add nodeSelector kubernetes.io/os: linux (or windows)",
    )]
}
