//! WIN407 `hugepages`.

use crate::model::meta::{Area, Mutation, Reads, RuleOs};
use crate::model::workload::PodSite;
use crate::model::{Eval, escape};
use crate::model::{Finding, RuleMeta, Severity};
use crate::rules::Rule;
use serde_json::Value;

/// WIN407 in the registry.
pub const RULE: Rule = Rule {
    meta: &WIN407,
    check: hugepages,
};

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
    default_on: true,
    reads: Reads::of(&[Area::Containers]),
    mutation: Mutation::DEFAULT,
};

pub(crate) fn hugepages(site: &PodSite, _eval: &Eval) -> Vec<Finding> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::resources::common::tests::OWN;
    use crate::rules::testutil::{cfg, hit, hits, ids_in, set, winok};
    use serde_json::json;

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
}
