//! WIN807 `object-name-invalid`.

use serde_json::Value;

use crate::model::Eval;
use crate::model::meta::{Mutation, Reads, RuleOs};
use crate::model::names::dns1123_subdomain_errors;
use crate::model::workload::{Lookup, PodSite};
use crate::model::{Finding, RuleMeta, Severity};
use crate::rules::Rule;

/// WIN807 in the registry.
pub const RULE: Rule = Rule {
    meta: &WIN807,
    check: object_name_invalid,
};

pub static WIN807: RuleMeta = RuleMeta {
    id: "WIN807",
    name: "object-name-invalid",
    severity: Severity::Error,
    summary: "Object name the API server refuses for its kind (not a DNS-1123 subdomain, too long)",
    docs: r#"## What it does
Checks `metadata.name` of the workload kinds winlint reads as Kubernetes 1.32 does:

* every kind's name is a DNS-1123 subdomain (`NameIsDNSSubdomain`: `ValidatePodName`,
  `ValidateDeploymentName`, `ValidateReplicaSetName`, `ValidateDaemonSetName`,
  `ValidateStatefulSetName`, `ValidateReplicationControllerName` of `ValidateObjectMeta`):
  lower-case letters, digits, `-` and `.`, at most 253 characters;
* a CronJob's name is at most 52 characters (`validateCronJob`: the controller appends an
  11-character suffix to name its Jobs);
* a Job's name is at most 63 characters: the API server copies it into the template's
  `batch.kubernetes.io/job-name` label (`generateSelector`), a label value.

A name absent (written by a generator, or `generateName`) is not judged.

## Why is this bad?
The API server refuses the object. Windows application names (`IIS_Site`, `WebApp.Api`) are the
usual cause.

## Example
```yaml
metadata:
  name: IIS_Site
```

## Fix
Lower-case letters, digits and `-` (`iis-site`).
"#,
    fix: None,
    source: "Kubernetes API validation (core, apps, batch)",
    applies: "all",
    os: RuleOs::Any,
    default_on: true,
    reads: Reads::NONE,
    mutation: Mutation::DEFAULT,
};

fn object_name_invalid(site: &PodSite, _eval: &Eval) -> Vec<Finding> {
    let Some(name) = site.object.lookup("/metadata/name").and_then(Value::as_str) else {
        return Vec::new();
    };
    let kind = site.kind;
    let mut errs = dns1123_subdomain_errors(name);
    let max = match kind {
        "CronJob" => Some(52),
        "Job" => Some(63),
        _ => None,
    };
    if let Some(max) = max
        && name.len() > max
        && errs.is_empty()
    {
        errs.push(format!("must be no more than {max} characters"));
    }
    if errs.is_empty() {
        return Vec::new();
    }
    vec![Finding::new(
        &WIN807,
        "/metadata/name",
        format!(
            "the {kind} name {name:?} is refused by the API server: {}. Use lower-case letters, digits and '-'",
            errs.join("; ")
        ),
    )]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::testutil::{cfg, hit, hits, set, winok};
    use serde_json::json;

    #[test]
    fn win807_names_per_kind() {
        assert!(hits(&winok(), &cfg(), "WIN807").is_empty());
        let p = set(winok(), "/metadata/name", json!("IIS_Site"));
        assert_eq!(
            hits(&p, &cfg(), "WIN807"),
            hit(Severity::Error, "/metadata/name")
        );
        let cron = |name: &str| {
            json!({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": name},
                "spec": {"schedule": "* * * * *", "jobTemplate": {"spec": {"template": {
                    "spec": set(winok(), "/spec/restartPolicy", json!("Never"))["spec"].clone()}}}}})
        };
        assert!(hits(&cron(&"c".repeat(52)), &cfg(), "WIN807").is_empty());
        assert_eq!(hits(&cron(&"c".repeat(53)), &cfg(), "WIN807").len(), 1);
        let long = set(winok(), "/metadata/name", json!("p".repeat(64)));
        assert!(hits(&long, &cfg(), "WIN807").is_empty());
    }
}
