//! WIN406 `resources-ignored-legacy`.

use crate::model::Eval;
use crate::model::meta::{Area, Mutation, Reads, RuleOs};
use crate::model::workload::PodSite;
use crate::model::{Finding, RuleMeta, Severity};
use crate::rules::Rule;
use serde_json::Value;

/// WIN406 in the registry.
pub const RULE: Rule = Rule {
    meta: &WIN406,
    check: resources_ignored_legacy,
};

// ---------------------------------------------------------------------------------------------
// Resources (WIN406–WIN408)

pub(crate) fn nonempty_map(v: Option<&Value>) -> bool {
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
    default_on: true,
    reads: Reads::of(&[Area::Containers]),
    mutation: Mutation::DEFAULT,
};

pub(crate) fn resources_ignored_legacy(site: &PodSite, eval: &Eval) -> Vec<Finding> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::testutil::{at, hit, hits, legacy, set, winok};
    use serde_json::json;

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
}
