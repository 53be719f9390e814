//! WIN604 `api-version-not-served`.

use crate::model::Eval;
use crate::model::meta::{Area, Mutation, Reads, RuleOs};
use crate::model::workload::PodSite;
use crate::model::{Finding, KubeVersion, RuleMeta, Severity};
use crate::rules::Rule;
use serde_json::Value;

/// WIN604 in the registry.
pub const RULE: Rule = Rule {
    meta: &WIN604,
    check: api_version_not_served,
};

// ---------------------------------------------------------------------------------------------
// WIN604

pub static WIN604: RuleMeta = RuleMeta {
    id: "WIN604",
    name: "api-version-not-served",
    severity: Severity::Error,
    summary: "Workload or RuntimeClass in an API version the target's API server does not serve",
    docs: r#"## What it does
Finds Windows workloads written in an API version that the target's Kubernetes does not serve,
and pods naming a RuntimeClass of the same input (or the cluster) written in such a version:

| kind | apiVersion | served |
|---|---|---|
| Deployment, DaemonSet, ReplicaSet | `extensions/v1beta1` | until 1.15 |
| Deployment, StatefulSet | `apps/v1beta1` | until 1.15 |
| Deployment, DaemonSet, ReplicaSet, StatefulSet | `apps/v1beta2` | 1.8 to 1.15 |
| Deployment, DaemonSet, ReplicaSet, StatefulSet | `apps/v1` | from 1.9 |
| CronJob | `batch/v1beta1` | 1.8 to 1.24 |
| CronJob | `batch/v1` | from 1.21 |
| RuntimeClass | `node.k8s.io/v1beta1` | 1.14 to 1.24 |
| RuntimeClass | `node.k8s.io/v1` | from 1.20 |

(Kubernetes' deprecated API migration guide. `batch/v2alpha1` CronJobs, served only when an
administrator enables the alpha API, are not judged.)

## Why is this bad?
The API server refuses the object (`no matches for kind "Deployment" in version
"extensions/v1beta1"`), and a pod naming a RuntimeClass that could not be created is refused too
(`RuntimeClass "x" not found`). Windows manifests of Kubernetes 1.9-1.13 (acs-engine, the first
"Windows Server Containers" guides) and the Hyper-V RuntimeClasses of
`kubernetes-sigs/windows-testing` are still copied today in these versions.

## Example
```yaml
apiVersion: extensions/v1beta1
kind: Deployment
```

## Fix
Write the object in a served version: `apps/v1` for workloads (which requires `spec.selector`;
`extensions/v1beta1` defaulted it from the template's labels), `batch/v1` for CronJobs,
`node.k8s.io/v1` for RuntimeClasses (same fields as v1beta1). Not fixed automatically: the
selector a Deployment needs is a choice.
"#,
    fix: None,
    source: "Kubernetes deprecated API migration guide",
    applies: "all",
    os: RuleOs::Windows,
    default_on: true,
    reads: Reads::of(&[Area::RuntimeClass]),
    mutation: Mutation::DEFAULT,
};

/// (kind, apiVersion, first 1.x minor served, first 1.x minor no longer served).
pub(crate) const SERVED: &[(&str, &str, u32, Option<u32>)] = &[
    ("Deployment", "extensions/v1beta1", 0, Some(16)),
    ("DaemonSet", "extensions/v1beta1", 0, Some(16)),
    ("ReplicaSet", "extensions/v1beta1", 0, Some(16)),
    ("Deployment", "apps/v1beta1", 0, Some(16)),
    ("StatefulSet", "apps/v1beta1", 0, Some(16)),
    ("Deployment", "apps/v1beta2", 8, Some(16)),
    ("DaemonSet", "apps/v1beta2", 8, Some(16)),
    ("ReplicaSet", "apps/v1beta2", 8, Some(16)),
    ("StatefulSet", "apps/v1beta2", 8, Some(16)),
    ("Deployment", "apps/v1", 9, None),
    ("DaemonSet", "apps/v1", 9, None),
    ("ReplicaSet", "apps/v1", 9, None),
    ("StatefulSet", "apps/v1", 9, None),
    ("CronJob", "batch/v1beta1", 8, Some(25)),
    ("CronJob", "batch/v1", 21, None),
    ("RuntimeClass", "node.k8s.io/v1beta1", 14, Some(25)),
    ("RuntimeClass", "node.k8s.io/v1", 20, None),
];

/// Why `kind` in `api_version` is not served by `v` (`None`: served, or not in the table).
pub(crate) fn not_served(kind: &str, api_version: &str, v: KubeVersion) -> Option<String> {
    let &(_, _, since, until) = SERVED
        .iter()
        .find(|(k, a, ..)| *k == kind && *a == api_version)?;
    if v.major != 1 {
        return None;
    }
    if let Some(until) = until.filter(|&u| v.minor >= u) {
        return Some(format!("no longer served since 1.{until}"));
    }
    (v.minor < since).then(|| format!("served only from 1.{since}"))
}

/// "Write it as apps/v1": the newest version of `kind` that `v` serves.
pub(crate) fn use_instead(kind: &str, v: KubeVersion) -> String {
    let served: Vec<&str> = SERVED
        .iter()
        .filter(|(k, a, ..)| *k == kind && not_served(kind, a, v).is_none())
        .map(|&(_, a, ..)| a)
        .collect();
    match served.last() {
        Some(a) => format!("Write it as {a}"),
        None => format!("Kubernetes {v} serves no version of {kind}"),
    }
}

pub(crate) fn api_version_not_served(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    let v = eval.target.kubernetes;
    let mut out = Vec::new();
    let api = site
        .object
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or("");
    if let Some(why) = not_served(site.kind, api, v) {
        let selector = if api == "extensions/v1beta1" || api == "apps/v1beta1" {
            " (apps/v1 requires spec.selector, which this version defaulted from the template's labels)"
        } else {
            ""
        };
        out.push(Finding::new(
            &WIN604,
            "/apiVersion",
            format!(
                "{} in {api} is {why}: Kubernetes {v} refuses the object. {}{selector}",
                site.kind,
                use_instead(site.kind, v)
            ),
        ));
    }
    if let Some(name) = site.str("/runtimeClassName")
        && let Some(rc) = eval.context.runtime_classes.get(name)
        && let Some(why) = not_served("RuntimeClass", &rc.api_version, v)
    {
        out.push(Finding::new(
            &WIN604,
            site.ptr("/runtimeClassName"),
            format!(
                "RuntimeClass {name} is written in {}, {why}: Kubernetes {v} refuses it, and then this pod (RuntimeClass not found). {} (same fields)",
                rc.api_version,
                use_instead("RuntimeClass", v)
            ),
        ));
    }
    out
}
