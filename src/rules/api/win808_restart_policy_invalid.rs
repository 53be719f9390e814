//! WIN808 `restart-policy-invalid`.

use serde_json::Value;

use crate::model::Eval;
use crate::model::meta::{Mutation, Reads, RuleOs};
use crate::model::workload::PodSite;
use crate::model::{Finding, RuleMeta, Severity};
use crate::rules::Rule;

/// WIN808 in the registry.
pub const RULE: Rule = Rule {
    meta: &WIN808,
    check: restart_policy_invalid,
};

pub static WIN808: RuleMeta = RuleMeta {
    id: "WIN808",
    name: "restart-policy-invalid",
    severity: Severity::Error,
    summary: "Pod restartPolicy the workload kind does not allow (a Job's template defaults to Always, which Jobs refuse)",
    docs: r#"## What it does
Checks the pod's `restartPolicy` against what Kubernetes 1.32 allows for the kind around it:

| kind | allowed | where |
|---|---|---|
| Pod, PodTemplate | `Always`, `OnFailure`, `Never` | `validateRestartPolicy` |
| Deployment, ReplicaSet, DaemonSet, StatefulSet, ReplicationController | `Always` | `ValidatePodTemplateSpecForReplicaSet`, `ValidateDaemonSetSpec`, `ValidatePodTemplateSpecForStatefulSet`, `ValidatePodTemplateSpecForRC` |
| Job, CronJob | `OnFailure`, `Never` | `validateJobSpec` (`spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"`) |

An absent `restartPolicy` is defaulted to `Always` (`SetDefaults_PodSpec`) before validation: a Job
or CronJob that does not set it is refused.

## Why is this bad?
The API server refuses the object.

## Example
```yaml
kind: Job
spec:
  template:
    spec:
      containers: [...]   # no restartPolicy: Always, refused
```

## Fix
`restartPolicy: OnFailure` or `Never` in Jobs and CronJobs; `Always` (or nothing) in
controllers that keep pods running.
"#,
    fix: None,
    source: "Kubernetes API validation (core, apps, batch)",
    applies: "all",
    os: RuleOs::Any,
    default_on: true,
    reads: Reads::NONE,
    mutation: Mutation::DEFAULT,
};

fn restart_policy_invalid(site: &PodSite, _eval: &Eval) -> Vec<Finding> {
    if !site.spec.is_object() {
        return Vec::new();
    }
    let allowed: &[&str] = match site.kind {
        "Pod" | "PodTemplate" => &["Always", "OnFailure", "Never"],
        "Job" | "CronJob" => &["OnFailure", "Never"],
        _ => &["Always"],
    };
    let written = site.spec.get("restartPolicy").and_then(Value::as_str);
    let policy = written.filter(|p| !p.is_empty()).unwrap_or("Always");
    if allowed.contains(&policy) {
        return Vec::new();
    }
    let list = allowed
        .iter()
        .map(|a| format!("{a:?}"))
        .collect::<Vec<_>>()
        .join(", ");
    let what = match written {
        Some(p) if !p.is_empty() => format!("restartPolicy {p:?}"),
        _ => "no restartPolicy, which defaults to \"Always\",".to_string(),
    };
    vec![Finding::new(
        &WIN808,
        site.ptr("/restartPolicy"),
        format!(
            "the {}'s pod template has {what} but a {} allows only {list}; the API server refuses it. Set restartPolicy: {}",
            site.kind, site.kind, allowed[0]
        ),
    )]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::testutil::{cfg, hit, hits, set, winok};
    use serde_json::json;

    #[test]
    fn win808_restart_policy_per_kind() {
        assert!(hits(&winok(), &cfg(), "WIN808").is_empty());
        let p = set(winok(), "/spec/restartPolicy", json!("Sometimes"));
        assert_eq!(
            hits(&p, &cfg(), "WIN808"),
            hit(Severity::Error, "/spec/restartPolicy")
        );
        let job = |policy: Option<&str>| {
            let mut spec = winok()["spec"].clone();
            if let Some(p) = policy {
                spec["restartPolicy"] = json!(p);
            }
            json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"},
                "spec": {"template": {"spec": spec}}})
        };
        assert!(hits(&job(Some("Never")), &cfg(), "WIN808").is_empty());
        assert_eq!(
            hits(&job(None), &cfg(), "WIN808"),
            hit(Severity::Error, "/spec/template/spec/restartPolicy")
        );
        assert_eq!(hits(&job(Some("Always")), &cfg(), "WIN808").len(), 1);
        let d = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
            "spec": {"selector": {"matchLabels": {"a": "b"}}, "template": {
                "metadata": {"labels": {"a": "b"}},
                "spec": set(winok(), "/spec/restartPolicy", json!("OnFailure"))["spec"].clone()}}});
        assert_eq!(hits(&d, &cfg(), "WIN808").len(), 1);
    }
}
