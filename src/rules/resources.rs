//! WIN406–WIN408, WIN412: resources on Windows (shared/rules.md §2.5): requests and limits
//! before 1.10, hugepages, memory requests below limits, pod-level resources.

use std::cmp::Ordering;

use serde_json::Value;

use super::Rule;
use crate::model::meta::{Mutation, RuleOs};
use crate::model::pod::FieldPlace;
use crate::model::quantity;
use crate::model::workload::{Lookup, PodSite};
use crate::model::{Eval, escape};
use crate::model::{Finding, RuleMeta, Severity};

pub fn rules() -> Vec<Rule> {
    vec![
        Rule {
            meta: &WIN406,
            check: resources_ignored_legacy,
        },
        Rule {
            meta: &WIN407,
            check: hugepages,
        },
        Rule {
            meta: &WIN408,
            check: memory_request_limit,
        },
        Rule {
            meta: &WIN412,
            check: pod_level_resources,
        },
    ]
}

// ---------------------------------------------------------------------------------------------
// Resources (WIN406–WIN408)

fn nonempty_map(v: Option<&Value>) -> bool {
    v.and_then(Value::as_object).is_some_and(|m| !m.is_empty())
}

pub static WIN406: RuleMeta = RuleMeta {
    id: "WIN406",
    name: "resources-ignored-legacy",
    severity: Severity::Warning,
    summary: "Container CPU/memory resources are ignored on Windows before Kubernetes 1.10",
    docs: r#"## What it does
On targets older than Kubernetes 1.10, reports containers with `resources.limits` or
`resources.requests`.

## Why is this bad?
Windows nodes honour container CPU and memory settings only from Kubernetes 1.10. Before, the
limits are not enforced: a container can use the whole node, and requests only affect
scheduling.

## Example
```yaml
resources:
  limits: {cpu: 500m, memory: 512Mi}
```

## Fix
Upgrade to Kubernetes 1.10 or newer, or size the nodes for unbounded containers.
"#,
    fix: None,
    source: "seed",
    applies: "K<1.10",
    os: RuleOs::Windows,
    context: &[],
    mutation: Mutation::DEFAULT,
};

fn resources_ignored_legacy(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    let k = eval.target.kubernetes;
    if k.at_least(1, 10) {
        return Vec::new();
    }
    site.containers()
        .filter(|c| {
            let r = c.value.get("resources");
            nonempty_map(r.and_then(|r| r.get("limits")))
                || nonempty_map(r.and_then(|r| r.get("requests")))
        })
        .map(|c| {
            Finding::new(
                &WIN406,
                site.container_ptr(&c, "/resources"),
                format!(
                    "{} sets CPU/memory resources, which Windows nodes on Kubernetes {k} do not enforce (supported from 1.10); the container is unbounded",
                    c.label()
                ),
            )
        })
        .collect()
}

pub static WIN407: RuleMeta = RuleMeta {
    id: "WIN407",
    name: "hugepages",
    severity: Severity::Error,
    summary: "hugepages-* resources (not supported on Windows)",
    docs: r#"## What it does
Reports `hugepages-*` keys in `resources.limits` / `resources.requests` of every container and of
the pod-level `spec.resources`.

## Why is this bad?
Windows nodes do not support HugePages: the node advertises no `hugepages-*` capacity, so the pod
never schedules (or the kubelet rejects it).

## Example
```yaml
resources:
  limits: {hugepages-2Mi: 100Mi, memory: 200Mi}
```

## Fix
Remove the hugepages resources.
"#,
    fix: None,
    source: "K-INTRO",
    applies: "all",
    os: RuleOs::Windows,
    context: &[],
    mutation: Mutation::DEFAULT,
};

fn hugepages(site: &PodSite, _eval: &Eval) -> Vec<Finding> {
    let mut out = Vec::new();
    // `base` and `who` (pointer and words) are only built for resources that have HugePages.
    let mut scan = |res: Option<&Value>, base: &dyn Fn() -> String, who: &dyn Fn() -> String| {
        for part in ["limits", "requests"] {
            let Some(m) = res.and_then(|r| r.get(part)).and_then(Value::as_object) else {
                continue;
            };
            for key in m.keys().filter(|k| k.starts_with("hugepages-")) {
                out.push(Finding::new(
                    &WIN407,
                    format!("{}/{part}/{}", base(), escape(key)),
                    format!(
                        "{} {part} {key}; Windows nodes do not support HugePages, so the pod cannot be scheduled. Remove it",
                        who()
                    ),
                ));
            }
        }
    };
    scan(site.get("/resources"), &|| site.ptr("/resources"), &|| {
        "the pod's resources".into()
    });
    for c in site.containers() {
        scan(
            c.value.get("resources"),
            &|| site.container_ptr(&c, "/resources"),
            &|| format!("{} resources", c.label()),
        );
    }
    out
}

pub static WIN408: RuleMeta = RuleMeta {
    id: "WIN408",
    name: "memory-request-limit",
    severity: Severity::Warning,
    summary: "Memory request lower than the memory limit (Windows pages instead of OOM-killing)",
    docs: r#"## What it does
Reports containers whose `resources.requests.memory` is set and lower than
`resources.limits.memory` (quantities compared exactly: `512Mi` < `1Gi`, `1G` = `1000M`,
`1e9` = `1G`). A container without a memory limit is not reported.

## Why is this bad?
Windows has no OOM killer: a container that uses more than its request is not killed, the node
pages to disk and every pod on it slows down. The scheduler packs nodes by requests, so a request
below the limit over-commits memory that Windows cannot reclaim. The Windows resource management
guidance is to "set a limit and leave the memory request unspecified, or set the request equal to
the limit".

## Example
```yaml
resources:
  requests: {memory: 512Mi}
  limits: {memory: 1Gi}
```

## Fix
Set `requests.memory` equal to `limits.memory`, or remove the request (it then defaults to the
limit).
"#,
    fix: None,
    source: "K-INTRO (resource management)",
    applies: "K≥1.10",
    os: RuleOs::Windows,
    context: &[],
    mutation: Mutation::DEFAULT,
};

fn memory_request_limit(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    if !eval.target.kubernetes.at_least(1, 10) {
        return Vec::new();
    }
    let mut out = Vec::new();
    for c in site.containers() {
        let req = c.value.lookup("/resources/requests/memory");
        let lim = c.value.lookup("/resources/limits/memory");
        let (Some((rq, rs)), Some((lq, ls))) = (
            req.and_then(quantity::of_value),
            lim.and_then(quantity::of_value),
        ) else {
            continue;
        };
        if rq.cmp(&lq) != Ordering::Less {
            continue;
        }
        out.push(Finding::new(
            &WIN408,
            site.container_ptr(&c, "/resources/requests/memory"),
            format!(
                "{} requests {rs} of memory but is limited to {ls}; Windows has no OOM killer and pages to disk when nodes over-commit. Set requests.memory equal to limits.memory ({ls}) or remove the request",
                c.label()
            ),
        ));
    }
    out
}

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
"#,
    fix: None,
    source: "kubernetes PR #133046, feature-gates/PodLevelResources.md, issue-9 research §1.2",
    applies: "K>=1.32 (error with spec.os.name: windows from 1.34)",
    os: RuleOs::Windows,
    context: &[],
    mutation: Mutation::DEFAULT,
};

fn pod_level_resources<'a>(site: &PodSite<'a>, eval: &Eval<'a>) -> Vec<Finding> {
    super::security::linux_only_findings(&WIN412, FieldPlace::PodResources, site, eval, |_| None)
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    use crate::rules::testutil::{at, cfg, hit, hits, ids_in, legacy, set, winok};

    /// The WIN3xx/WIN4xx rules (other modules' rules are asserted by their tests).
    const OWN: &[&str] = &["WIN3", "WIN4"];

    #[test]
    fn t47_hugepages() {
        let pod = set(
            winok(),
            "/spec/containers/0/resources",
            json!({"limits":{"hugepages-2Mi":"100Mi","memory":"200Mi"}}),
        );
        assert_eq!(ids_in(&pod, &cfg(), OWN), vec!["WIN407"]);
        assert_eq!(
            hits(&pod, &cfg(), "WIN407"),
            hit(
                Severity::Error,
                "/spec/containers/0/resources/limits/hugepages-2Mi"
            )
        );
        let podlevel = set(
            winok(),
            "/spec/resources",
            json!({"requests":{"hugepages-1Gi":"1Gi"}}),
        );
        assert_eq!(
            hits(&podlevel, &cfg(), "WIN407"),
            hit(Severity::Error, "/spec/resources/requests/hugepages-1Gi")
        );
    }

    #[test]
    fn win406_resources_before_1_10() {
        let pod = set(
            winok(),
            "/spec/containers/0/resources",
            json!({"limits":{"cpu":"500m","memory":"512Mi"}}),
        );
        assert_eq!(
            hits(&pod, &legacy(), "WIN406"),
            hit(Severity::Warning, "/spec/containers/0/resources")
        );
        assert!(hits(&pod, &at(10), "WIN406").is_empty());
        let empty = set(winok(), "/spec/containers/0/resources", json!({}));
        assert!(hits(&empty, &legacy(), "WIN406").is_empty());
    }

    #[test]
    fn win408_request_below_limit() {
        let pod = |req: Value, lim: Value| {
            set(
                winok(),
                "/spec/containers/0/resources",
                json!({"requests":{"memory":req},"limits":{"memory":lim}}),
            )
        };
        let p = "/spec/containers/0/resources/requests/memory";
        assert_eq!(
            hits(&pod(json!("512Mi"), json!("1Gi")), &cfg(), "WIN408"),
            hit(Severity::Warning, p)
        );
        assert_eq!(
            ids_in(&pod(json!("512Mi"), json!("1Gi")), &cfg(), OWN),
            vec!["WIN408"]
        );
        // Equal in different spellings.
        for (r, l) in [
            ("1Gi", "1024Mi"),
            ("1G", "1000M"),
            ("1e9", "1G"),
            ("1073741824", "1Gi"),
            ("0.5Gi", "512Mi"),
            ("1E3", "1k"),
        ] {
            assert!(
                hits(&pod(json!(r), json!(l)), &cfg(), "WIN408").is_empty(),
                "{r} {l}"
            );
        }
        // Request above limit (API error) or no limit: not this rule.
        assert!(hits(&pod(json!("2Gi"), json!("1Gi")), &cfg(), "WIN408").is_empty());
        let nolimit = set(
            winok(),
            "/spec/containers/0/resources",
            json!({"requests":{"memory":"1Gi"}}),
        );
        assert!(hits(&nolimit, &cfg(), "WIN408").is_empty());
        let noreq = set(
            winok(),
            "/spec/containers/0/resources",
            json!({"limits":{"memory":"1Gi"}}),
        );
        assert!(hits(&noreq, &cfg(), "WIN408").is_empty());
        // Decimal vs binary: 1G < 1Gi, 500M < 512Mi, bare numbers.
        assert_eq!(
            hits(&pod(json!("1G"), json!("1Gi")), &cfg(), "WIN408").len(),
            1
        );
        assert_eq!(
            hits(&pod(json!("500M"), json!("512Mi")), &cfg(), "WIN408").len(),
            1
        );
        assert_eq!(
            hits(&pod(json!(1000), json!("1Ki")), &cfg(), "WIN408").len(),
            1
        );
        // Unparseable quantities are left to the API server.
        assert!(hits(&pod(json!("lots"), json!("1Gi")), &cfg(), "WIN408").is_empty());
        // Not before 1.10 (WIN406 applies).
        assert!(hits(&pod(json!("512Mi"), json!("1Gi")), &legacy(), "WIN408").is_empty());
    }
}
