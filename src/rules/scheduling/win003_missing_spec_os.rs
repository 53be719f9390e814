//! WIN003 `missing-spec-os`.

use crate::model::Eval;
use crate::model::meta::{Mutation, Reads, Recorded, RuleOs};
use crate::model::workload::PodSite;
use crate::model::{Finding, Fix, FixSafety, RuleMeta, Severity, ops};
use crate::rules::Rule;
use serde_json::json;

/// WIN003 in the registry.
pub const RULE: Rule = Rule {
    meta: &WIN003,
    check: missing_spec_os,
};

pub static WIN003: RuleMeta = RuleMeta {
    id: "WIN003",
    name: "missing-spec-os",
    severity: Severity::Warning,
    summary: "Windows pod without spec.os.name: windows",
    docs: r#"## What it does
Checks that a Windows pod declares `spec.os.name: windows` (Kubernetes 1.24+, 1.23 with the
`IdentifyPodOS` gate).

## Why is this bad?
With `spec.os` set the API server validates the pod as a Windows pod (rejecting Linux-only fields
up front instead of ignoring them), Pod Security Admission exempts it from the Linux-only parts of
the `restricted` profile, and the kubelet refuses it (`PodOSNotSupported`) if it is ever scheduled to a
Linux node.

## Example
```yaml
spec:
  nodeSelector: {kubernetes.io/os: windows}
  containers:
  - name: web
    image: mcr.microsoft.com/windows/servercore:ltsc2022
```

## Fix
Safe, **only when the pod carries none of the Linux-only fields of WIN101–WIN103** (otherwise the API
server would reject the pod, and a Deployment would loop on `FailedCreate`): add
`spec.os: {name: windows}`. The webhook applies it on CREATE (mutation M4).
"#,
    fix: Some(FixSafety::Safe),
    source: "K-UG, VAL",
    applies: "K>=1.24 (1.23 with IdentifyPodOS)",
    os: RuleOs::Windows,
    default_on: true,
    reads: Reads::LINUX_ONLY_FIELDS,
    mutation: Mutation {
        recorded_as: Some(Recorded::Os),
        adds_spec_os: true,
        ..Mutation::DEFAULT
    },
};

pub(crate) fn missing_spec_os<'a>(site: &PodSite<'a>, eval: &Eval<'a>) -> Vec<Finding> {
    if !crate::model::pod::spec_os_available(eval.target) || site.get("/os").is_some() {
        return Vec::new();
    }
    let blockers: Vec<String> = eval
        .linux_only_fields(site)
        .iter()
        .map(|f| f.pointer.clone())
        .collect();
    if blockers.is_empty() {
        vec![
            Finding::new(
                &WIN003,
                site.spec_ptr.clone(),
                "Windows pod has no spec.os; add spec.os.name: windows so the API server, Pod Security admission and the kubelet treat it as Windows",
            )
            .with_fix(Fix {
                safety: FixSafety::Safe,
                description: "add spec.os.name=windows".into(),
                ops: vec![ops::add(&site.ptr("/os"), json!({"name": "windows"}))],
            }),
        ]
    } else {
        let names: Vec<String> = blockers
            .iter()
            .map(|p| crate::model::pod::dotted(p))
            .collect();
        vec![Finding::new(
            &WIN003,
            site.spec_ptr.clone(),
            format!(
                "Windows pod has no spec.os; add spec.os.name: windows, after removing the Linux-only fields the API server would then reject: {}",
                names.join(", ")
            ),
        )]
    }
}

#[cfg(test)]
mod tests {

    use serde_json::json;

    use crate::rules::testutil::{assert_says, cfg, findings, ids, set, unset, winok};

    #[test]
    fn win003_fix_and_guard() {
        let pod = unset(winok(), "/spec/os");
        let fs = findings(&pod, &cfg());
        let f = fs.iter().find(|f| f.rule.id == "WIN003").expect("WIN003");
        assert!(f.fix.is_some());
        let guarded = set(pod, "/spec/securityContext/runAsUser", json!(1000));
        let fs = findings(&guarded, &cfg());
        let f = fs.iter().find(|f| f.rule.id == "WIN003").expect("WIN003");
        assert!(
            f.fix.is_none(),
            "spec.os must not be added while runAsUser is set"
        );
        assert_says(f, "spec.securityContext.runAsUser");
    }

    #[test]
    fn win003_not_before_spec_os_exists() {
        let mut c = cfg();
        c.target.kubernetes = crate::model::KubeVersion::new(1, 22);
        assert!(!ids(&unset(winok(), "/spec/os"), &c).contains(&"WIN003"));
    }
}
