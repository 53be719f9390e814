//! WIN603 `os-unpinned-daemonset`.

use crate::model::Eval;
use crate::model::classify::{self, Os};
use crate::model::meta::{Mutation, Reads, RuleOs};
use crate::model::workload::PodSite;
use crate::model::{Finding, RuleMeta, Severity};
use crate::rules::Rule;
use serde_json::Value;

/// WIN603 in the registry.
pub const RULE: Rule = Rule {
    meta: &WIN603,
    check: os_unpinned_daemonset,
};

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

WIN011 (`linux-pod-can-land-on-windows`) reports the other pod-bearing kinds, and only when their
images have no Windows variant; it leaves every DaemonSet (and every pod a DaemonSet owns) to this
rule, so one unpinned agent is reported once.

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
    default_on: true,
    reads: Reads::PLACEMENT,
    mutation: Mutation::DEFAULT,
};

pub(crate) fn os_unpinned_daemonset(site: &PodSite, eval: &Eval) -> Vec<Finding> {
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
