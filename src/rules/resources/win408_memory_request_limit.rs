//! WIN408 `memory-request-limit`.

use crate::model::Eval;
use crate::model::meta::{Area, Mutation, Reads, RuleOs};
use crate::model::quantity;
use crate::model::workload::{Lookup, PodSite};
use crate::model::{Finding, RuleMeta, Severity};
use crate::rules::Rule;
use std::cmp::Ordering;

/// WIN408 in the registry.
pub const RULE: Rule = Rule {
    meta: &WIN408,
    check: memory_request_limit,
};

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
    default_on: true,
    reads: Reads::of(&[Area::Containers]),
    mutation: Mutation::DEFAULT,
};

pub(crate) fn memory_request_limit(site: &PodSite, eval: &Eval) -> Vec<Finding> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::resources::common::tests::OWN;
    use crate::rules::testutil::{cfg, hit, hits, ids_in, legacy, set, winok};
    use serde_json::{Value, json};

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
