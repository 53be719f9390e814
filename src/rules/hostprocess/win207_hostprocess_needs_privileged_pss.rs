//! WIN207 `hostprocess-needs-privileged-pss`.

use crate::model::Eval;
use crate::model::labels::PSA_ENFORCE_LABEL;
use crate::model::meta::{Area, Mutation, Reads, RuleOs};
use crate::model::pod::{self};
use crate::model::workload::PodSite;
use crate::model::{Finding, RuleMeta, Severity};
use crate::rules::Rule;
use crate::rules::hostprocess::common::host_process_pod;

/// WIN207 in the registry.
pub const RULE: Rule = Rule {
    meta: &WIN207,
    check: hostprocess_needs_privileged_pss,
};

pub static WIN207: RuleMeta = RuleMeta {
    id: "WIN207",
    name: "hostprocess-needs-privileged-pss",
    severity: Severity::Warning,
    summary: "HostProcess pod in a namespace that enforces Pod Security baseline or restricted",
    docs: r#"## What it does
Only when the pod's namespace is known (a Namespace object in the same input, or the cluster for the
webhook): reports HostProcess pods in namespaces labelled
`pod-security.kubernetes.io/enforce: baseline` or `restricted`.

## Why is this bad?
The Pod Security `baseline` profile (and so `restricted`) disallows HostProcess containers: Pod
Security admission rejects the pod (for workloads, every pod the controller creates).

## Example
```yaml
apiVersion: v1
kind: Namespace
metadata:
  name: agents
  labels: {pod-security.kubernetes.io/enforce: baseline}
```

## Fix
Run HostProcess pods in a namespace labelled `pod-security.kubernetes.io/enforce: privileged`
(a dedicated system namespace), or exempt them in the PodSecurity admission configuration.
"#,
    fix: None,
    source: "K-PSS, K-HPC",
    applies: "K>=1.25",
    os: RuleOs::Windows,
    default_on: true,
    reads: Reads::of(&[Area::Containers, Area::PodSecurityContext]),
    mutation: Mutation::DEFAULT,
};

pub(crate) fn hostprocess_needs_privileged_pss(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    if !eval.target.kubernetes.at_least(1, 25) || !host_process_pod(site, eval) {
        return Vec::new();
    }
    let Some(ns) = site.namespace else {
        return Vec::new();
    };
    let Some(level) = eval
        .context
        .namespaces
        .get(ns)
        .and_then(|l| l.get(PSA_ENFORCE_LABEL))
        .filter(|l| matches!(l.as_str(), "baseline" | "restricted"))
    else {
        return Vec::new();
    };
    pod::host_process_requests(site)
        .into_iter()
        .map(|p| {
            Finding::new(
                &WIN207,
                p,
                format!(
                    "namespace {ns:?} enforces Pod Security {level:?}, which disallows HostProcess containers: the pod is rejected. Run it in a namespace labelled {PSA_ENFORCE_LABEL}: privileged, or exempt it"
                ),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use crate::engine::lint_object;
    use crate::model::Context;
    use crate::model::Operation;
    use crate::rules::hostprocess::common::tests::hpc;
    use crate::rules::testutil::{at, cfg, only, set};
    use serde_json::Value;
    use serde_json::json;

    pub(crate) fn lint_in_ns(obj: &Value, c: &Config, labels: Value) -> Vec<Finding> {
        let mut cx = Context::default();
        cx.add(&json!({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"agents","labels":labels}}));
        lint_object(obj, c, &cx, Operation::Lint).findings
    }

    #[test]
    fn win207_namespace_level() {
        let pod = set(hpc(), "/metadata/namespace", json!("agents"));
        let hits = |labels: Value, c: &Config| -> Vec<Finding> {
            lint_in_ns(&pod, c, labels)
                .into_iter()
                .filter(|f| f.rule.id == "WIN207")
                .collect()
        };
        let fs = hits(
            json!({"pod-security.kubernetes.io/enforce":"baseline"}),
            &cfg(),
        );
        assert_eq!(fs.len(), 1);
        assert_eq!(
            fs[0].pointer,
            "/spec/securityContext/windowsOptions/hostProcess"
        );
        assert_eq!(fs[0].severity, Severity::Warning);
        assert_eq!(
            hits(
                json!({"pod-security.kubernetes.io/enforce":"restricted"}),
                &cfg()
            )
            .len(),
            1
        );
        assert!(
            hits(
                json!({"pod-security.kubernetes.io/enforce":"privileged"}),
                &cfg()
            )
            .is_empty()
        );
        assert!(
            hits(
                json!({"pod-security.kubernetes.io/warn":"baseline"}),
                &cfg()
            )
            .is_empty()
        );
        assert!(
            hits(
                json!({"pod-security.kubernetes.io/enforce":"baseline"}),
                &at(24)
            )
            .is_empty()
        );
        // Unknown namespace: never on a guess.
        assert!(only(&pod, &cfg(), "WIN207").is_empty());
    }
}
