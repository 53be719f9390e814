//! WIN201 `hostprocess-requires-hostnetwork`.

use crate::model::Eval;
use crate::model::api_fields::{self};
use crate::model::meta::{Area, Mutation, Reads, Recorded, RuleOs};
use crate::model::pod::{self};
use crate::model::workload::PodSite;
use crate::model::{Finding, Fix, FixSafety, RuleMeta, Severity, ops};
use crate::rules::Rule;
use crate::rules::hostprocess::common::host_network;
use crate::rules::hostprocess::common::host_process_pod;
use serde_json::json;

/// WIN201 in the registry.
pub const RULE: Rule = Rule {
    meta: &WIN201,
    check: hostprocess_requires_hostnetwork,
};

pub static WIN201: RuleMeta = RuleMeta {
    id: "WIN201",
    name: "hostprocess-requires-hostnetwork",
    severity: Severity::Error,
    summary: "HostProcess pod without spec.hostNetwork: true",
    docs: r#"## What it does
Finds pods with a HostProcess container (a container's
`securityContext.windowsOptions.hostProcess: true`, or inherited from
`spec.securityContext.windowsOptions.hostProcess: true`) whose `spec.hostNetwork` is not `true`.

## Why is this bad?
The API server rejects the pod: "hostNetwork must be true if pod contains any hostProcess
containers". HostProcess containers always run in the host's network namespace.

## Example
```yaml
spec:
  securityContext:
    windowsOptions: {hostProcess: true, runAsUserName: 'NT AUTHORITY\SYSTEM'}
  containers:
  - name: agent
    image: mcr.microsoft.com/windows/nanoserver:ltsc2022
```

## Fix
Safe: set `spec.hostNetwork: true` — it only states what a HostProcess pod gets anyway.
"#,
    fix: Some(FixSafety::Safe),
    source: "VAL, K-HPC",
    applies: "K>=1.22 (where the HostProcess field is kept)",
    os: RuleOs::Windows,
    default_on: true,
    reads: Reads::of(&[
        Area::Containers,
        Area::PodSecurityContext,
        Area::HostNamespaces,
    ]),
    mutation: Mutation::named(Recorded::HostNetwork),
};

pub(crate) fn hostprocess_requires_hostnetwork(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    if !host_process_pod(site, eval) || host_network(site) {
        return Vec::new();
    }
    let pointer = if site.get("/hostNetwork").is_some() {
        site.ptr("/hostNetwork")
    } else {
        site.spec_ptr.clone()
    };
    let mut f = Finding::new(
        &WIN201,
        pointer,
        format!(
            "a pod with HostProcess containers must set hostNetwork: true: the API server rejects the pod ({}); set spec.hostNetwork: true, HostProcess containers always use the host network",
            api_fields::invalid(
                &pod::dotted(&site.ptr("/hostNetwork")),
                &json!(false),
                "hostNetwork must be true if pod contains any hostProcess containers"
            )
        ),
    );
    if eval.fix_possible(site) {
        f = f.with_fix(Fix {
            safety: FixSafety::Safe,
            description: "set spec.hostNetwork=true".into(),
            ops: vec![ops::add(&site.ptr("/hostNetwork"), json!(true))],
        });
    }
    vec![f]
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::engine::lint_object;
    use crate::model::Context;
    use crate::model::Operation;
    use crate::rules::hostprocess::common::tests::hpc;
    use crate::rules::hostprocess::common::tests::t14;
    use crate::rules::testutil::{cfg, ids, only, set, unset};

    #[test]
    fn t14_hostprocess_requires_hostnetwork() {
        assert_eq!(ids(&t14(), &cfg()), ["WIN201"]);
        let f = &only(&t14(), &cfg(), "WIN201")[0];
        assert_eq!(f.pointer, "/spec");
        assert_eq!(f.severity, Severity::Error);
        assert!(
            f.message
                .contains("hostNetwork must be true if pod contains any hostProcess containers")
        );
        let fix = f.fix.as_ref().unwrap();
        assert_eq!(fix.safety, FixSafety::Safe);
        let mut fixed = t14();
        json_patch::patch(&mut fixed, &fix.ops).unwrap();
        assert_eq!(fixed, hpc());
        assert!(ids(&fixed, &cfg()).is_empty());
        // hostNetwork: false is replaced.
        let pod = set(t14(), "/spec/hostNetwork", json!(false));
        let f = &only(&pod, &cfg(), "WIN201")[0];
        assert_eq!(f.pointer, "/spec/hostNetwork");
        let mut fixed = pod.clone();
        json_patch::patch(&mut fixed, &f.fix.as_ref().unwrap().ops).unwrap();
        assert_eq!(fixed, hpc());
        // Container-level HostProcess counts too.
        let pod = set(
            unset(t14(), "/spec/securityContext"),
            "/spec/containers/0/securityContext/windowsOptions",
            json!({"hostProcess":true,"runAsUserName":"NT AUTHORITY\\SYSTEM"}),
        );
        assert_eq!(ids(&pod, &cfg()), ["WIN201"]);
    }

    #[test]
    fn win201_no_fix_on_pod_update() {
        let r = lint_object(&t14(), &cfg(), &Context::default(), Operation::Update);
        let f = r.findings.iter().find(|f| f.rule.id == "WIN201").unwrap();
        assert!(f.fix.is_none());
    }
}
