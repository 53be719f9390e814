//! WIN805 `resource-quantity-invalid`.

use std::cmp::Ordering;

use serde_json::Value;

use crate::model::Eval;
use crate::model::meta::{Area, Mutation, Reads, RuleOs};
use crate::model::quantity;
use crate::model::workload::{Lookup, PodSite};
use crate::model::{Finding, RuleMeta, Severity};
use crate::rules::Rule;
use crate::rules::api::common::refuses;

/// WIN805 in the registry.
pub const RULE: Rule = Rule {
    meta: &WIN805,
    check: resource_quantity_invalid,
};

pub static WIN805: RuleMeta = RuleMeta {
    id: "WIN805",
    name: "resource-quantity-invalid",
    severity: Severity::Error,
    summary: "Resource quantity that does not parse, is negative, or a request above its limit (the API server refuses it)",
    docs: r#"## What it does
Checks the `resources.requests` and `resources.limits` of every container and init container:

* each value is a Kubernetes quantity (`512Mi`, `1.5`, `100m`, `1e3`): anything else fails
  decoding (`quantities must match the regular expression
  '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`: `512MB`, `1 Gi`, `1gb`);
* none is negative (`ValidateResourceQuantityValue`: `must be greater than or equal to 0`);
* a request is not above the limit of the same resource (`ValidateResourceRequirements`:
  `must be less than or equal to cpu limit of 500m`), quantities compared exactly
  (`model/quantity.rs`, as WIN408 compares them).

## Why is this bad?
The API server refuses the object. A StatefulSet is the exception: the API server does not
validate its template's pod spec (`ValidatePodTemplateSpecForStatefulSet`), so it accepts the
StatefulSet and refuses every pod the StatefulSet controller creates from it (`FailedCreate`).

## Example
```yaml
resources:
  requests: {memory: 2Gi}
  limits: {memory: 1Gi}
```

## Fix
Write quantities with the Kubernetes suffixes (`Mi`, `Gi`, `m`) and keep each request at or below
its limit.
"#,
    fix: None,
    source: "Kubernetes API validation (core)",
    applies: "all",
    os: RuleOs::Any,
    default_on: true,
    reads: Reads::of(&[Area::Containers]),
    mutation: Mutation::DEFAULT,
};

fn resource_quantity_invalid(site: &PodSite, _eval: &Eval) -> Vec<Finding> {
    let mut out = Vec::new();
    for c in site.containers() {
        if c.list == "ephemeralContainers" {
            continue;
        }
        let mut parsed = |kind: &str| {
            let mut ok = Vec::new();
            for (name, v) in c
                .value
                .lookup(&format!("/resources/{kind}"))
                .and_then(Value::as_object)
                .into_iter()
                .flatten()
            {
                let ptr = site.container_ptr(
                    &c,
                    &format!("/resources/{kind}/{}", crate::model::pointer::escape(name)),
                );
                match quantity::of_value(v) {
                    None if !v.is_null() => out.push(Finding::new(
                        &WIN805,
                        ptr,
                        format!(
                            "{} {kind}.{name} is {v}, not a Kubernetes quantity; the API server cannot decode the {} (\"quantities must match the regular expression\"). Write it like 512Mi, 1Gi, 500m or 2",
                            c.label(),
                            site.kind
                        ),
                    )),
                    None => {}
                    Some((q, s)) if q < quantity::parse("0").expect("zero") => {
                        out.push(Finding::new(
                            &WIN805,
                            ptr,
                            format!(
                                "{} {kind}.{name} is {s}; {} (\"must be greater than or equal to 0\")",
                                c.label(),
                                refuses(site)
                            ),
                        ))
                    }
                    Some((q, s)) => ok.push((name.as_str(), q, s, ptr)),
                }
            }
            ok
        };
        let limits = parsed("limits");
        let requests = parsed("requests");
        for (name, rq, rs, ptr) in requests {
            if let Some((_, lq, ls, _)) = limits.iter().find(|l| l.0 == name)
                && rq.cmp(lq) == Ordering::Greater
            {
                out.push(Finding::new(
                    &WIN805,
                    ptr,
                    format!(
                        "{} requests {rs} of {name}, above its limit {ls}; {} (\"must be less than or equal to {name} limit of {ls}\"). Lower the request or raise the limit",
                        c.label(),
                        refuses(site)
                    ),
                ));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::testutil::{cfg, hit, hits, set, winok};
    use serde_json::json;

    fn res(r: Value) -> Value {
        set(winok(), "/spec/containers/0/resources", r)
    }

    #[test]
    fn win805_quantities_parse_and_requests_fit_limits() {
        let ok = res(json!({"requests": {"cpu": "500m", "memory": "1Gi"},
                            "limits": {"cpu": 1, "memory": "1024Mi"}}));
        assert!(hits(&ok, &cfg(), "WIN805").is_empty());
        let p = "/spec/containers/0/resources/requests/memory";
        assert_eq!(
            hits(
                &res(json!({"requests": {"memory": "512MB"}})),
                &cfg(),
                "WIN805"
            ),
            hit(Severity::Error, p)
        );
        assert_eq!(
            hits(
                &res(json!({"requests": {"memory": "-1Gi"}})),
                &cfg(),
                "WIN805"
            ),
            hit(Severity::Error, p)
        );
        assert_eq!(
            hits(
                &res(json!({"requests": {"memory": "2Gi"}, "limits": {"memory": "1Gi"}})),
                &cfg(),
                "WIN805"
            ),
            hit(Severity::Error, p)
        );
        let gpu = res(json!({"limits": {"nvidia.com/gpu": "x"}}));
        assert_eq!(
            hits(&gpu, &cfg(), "WIN805"),
            hit(
                Severity::Error,
                "/spec/containers/0/resources/limits/nvidia.com~1gpu"
            )
        );
    }
}
