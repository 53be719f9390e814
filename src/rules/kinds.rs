//! WIN6xx: workload kinds (shared/rules.md §2.7).

use serde_json::Value;

use super::Rule;
use crate::model::Eval;
use crate::model::classify::{self, Os};
use crate::model::meta::{Fact, Mutation, RuleOs};
use crate::model::workload::PodSite;
use crate::model::{Finding, KubeVersion, RuleMeta, Severity};

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
        Rule {
            meta: &WIN604,
            check: api_version_not_served,
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
(`RuntimeClass "x" not found`). Windows manifests of the seed era (acs-engine, the first
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
    context: &[Fact::RuntimeClasses],
    mutation: Mutation::DEFAULT,
};

/// (kind, apiVersion, first 1.x minor served, first 1.x minor no longer served).
const SERVED: &[(&str, &str, u32, Option<u32>)] = &[
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
fn not_served(kind: &str, api_version: &str, v: KubeVersion) -> Option<String> {
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
fn use_instead(kind: &str, v: KubeVersion) -> String {
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

fn api_version_not_served(site: &PodSite, eval: &Eval) -> Vec<Finding> {
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

#[cfg(test)]
mod win604_tests {
    use super::*;

    #[test]
    fn served_ranges() {
        let v = KubeVersion::new;
        assert_eq!(
            not_served("Deployment", "extensions/v1beta1", v(1, 16)).as_deref(),
            Some("no longer served since 1.16")
        );
        assert_eq!(
            not_served("Deployment", "extensions/v1beta1", v(1, 15)),
            None
        );
        assert_eq!(
            not_served("CronJob", "batch/v1", v(1, 20)).as_deref(),
            Some("served only from 1.21")
        );
        assert_eq!(not_served("CronJob", "batch/v1beta1", v(1, 24)), None);
        assert_eq!(not_served("Pod", "v1", v(1, 9)), None);
        assert_eq!(not_served("Job", "batch/v1", v(1, 9)), None);
        assert_eq!(use_instead("CronJob", v(1, 9)), "Write it as batch/v1beta1");
        assert_eq!(use_instead("Deployment", v(1, 34)), "Write it as apps/v1");
    }
}
