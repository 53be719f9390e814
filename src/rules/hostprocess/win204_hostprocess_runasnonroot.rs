//! WIN204 `hostprocess-runasnonroot`.

use crate::model::Eval;
use crate::model::meta::{Area, Mutation, Reads, RuleOs};
use crate::model::pod::{self, Effective};
use crate::model::workload::PodSite;
use crate::model::{Finding, RuleMeta, Severity};
use crate::rules::Rule;
use crate::rules::hostprocess::common::host_process_containers;
use crate::rules::hostprocess::common::push_once;

/// WIN204 in the registry.
pub const RULE: Rule = Rule {
    meta: &WIN204,
    check: hostprocess_runasnonroot,
};

pub static WIN204: RuleMeta = RuleMeta {
    id: "WIN204",
    name: "hostprocess-runasnonroot",
    severity: Severity::Warning,
    summary: "HostProcess container with effective runAsNonRoot: true (admitted, but it restricts nothing)",
    docs: r#"## What it does
Finds HostProcess containers whose effective `runAsNonRoot` (the container's value, else the pod's)
is `true`.

## Why is this bad?
The API server admits the pod (measured on 1.32: this is not an API rule), but the setting does not
do what it says. A HostProcess container runs as the host account named by `runAsUserName`
(`NT AUTHORITY\SYSTEM` is the most privileged account of the node); the kubelet's non-root check
on Windows only refuses the user name `ContainerAdministrator`. The HostProcess documentation
allows `runAsNonRoot` only undefined or `false`: a reviewer reading `runAsNonRoot: true` is misled.

## Example
```yaml
spec:
  hostNetwork: true
  securityContext:
    runAsNonRoot: true
    windowsOptions: {hostProcess: true, runAsUserName: 'NT AUTHORITY\Local service'}
```

## Fix
Remove `runAsNonRoot` (or set it to `false`) for HostProcess pods.
"#,
    fix: None,
    source: "K-HPC, KL-SC, issue-9 research §1.3 (admitted by kube-apiserver 1.32)",
    applies: "K>=1.22 (where the HostProcess field is kept)",
    os: RuleOs::Windows,
    default_on: true,
    reads: Reads::of(&[Area::Containers, Area::PodSecurityContext]),
    mutation: Mutation::DEFAULT,
};

pub(crate) fn hostprocess_runasnonroot(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    let mut out = Vec::new();
    for c in host_process_containers(site, eval) {
        if let Some(Effective {
            value: true,
            pointer,
            inherited,
        }) = pod::effective_run_as_non_root(site, &c)
        {
            let who = if inherited {
                "the pod".to_string()
            } else {
                c.label()
            };
            push_once(
                &mut out,
                Finding::new(
                    &WIN204,
                    pointer.clone(),
                    format!(
                        "{} sets runAsNonRoot: true for HostProcess containers: the API server admits it, but it restricts nothing (a HostProcess container runs as the host account in runAsUserName; the kubelet only refuses ContainerAdministrator), and the HostProcess documentation leaves it undefined or false; remove {}",
                        who,
                        pod::dotted(&pointer)
                    ),
                ),
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    use crate::rules::hostprocess::common::tests::hpc;
    use crate::rules::testutil::{assert_says, cfg, ids, only, set, winok};

    #[test]
    fn win204_run_as_non_root() {
        let pod = set(hpc(), "/spec/securityContext/runAsNonRoot", json!(true));
        assert_eq!(ids(&pod, &cfg()), ["WIN204"]);
        let f = &only(&pod, &cfg(), "WIN204")[0];
        assert_eq!(f.pointer, "/spec/securityContext/runAsNonRoot");
        // Admitted by the API server (measured): a warning that says so, not a rejection.
        assert_eq!(f.severity, Severity::Warning);
        assert_says(f, "the API server admits it");
        assert!(!f.message.contains("rejects"), "{}", f.message);
        // Container override to false: fine.
        let ok = set(
            pod.clone(),
            "/spec/containers/0/securityContext/runAsNonRoot",
            json!(false),
        );
        assert!(only(&ok, &cfg(), "WIN204").is_empty());
        // false at pod level: fine.
        let ok = set(hpc(), "/spec/securityContext/runAsNonRoot", json!(false));
        assert!(only(&ok, &cfg(), "WIN204").is_empty());
        // Non-HostProcess pods: not this rule.
        let ok = set(winok(), "/spec/securityContext/runAsNonRoot", json!(true));
        assert!(only(&ok, &cfg(), "WIN204").is_empty());
    }
}
