//! WIN205 `hostprocess-user`.

use crate::model::Eval;
use crate::model::meta::{Area, Mutation, Reads, RuleOs};
use crate::model::pod::{self};
use crate::model::workload::PodSite;
use crate::model::{Finding, RuleMeta, Severity};
use crate::rules::Rule;
use crate::rules::hostprocess::common::host_process_containers;
use crate::rules::hostprocess::common::push_once;

/// WIN205 in the registry.
pub const RULE: Rule = Rule {
    meta: &WIN205,
    check: hostprocess_user,
};

/// The accounts the HostProcess documentation lists (compared case-insensitively; Windows
/// spells the service accounts `LOCAL SERVICE` and `NETWORK SERVICE`, the documentation
/// `Local service` and `NetworkService`, so both spellings are accepted).
pub const HOSTPROCESS_USERS: &[&str] = &[
    "NT AUTHORITY\\SYSTEM",
    "NT AUTHORITY\\Local service",
    "NT AUTHORITY\\LocalService",
    "NT AUTHORITY\\NetworkService",
    "NT AUTHORITY\\Network service",
];

pub static WIN205: RuleMeta = RuleMeta {
    id: "WIN205",
    name: "hostprocess-user",
    severity: Severity::Warning,
    summary: "HostProcess container without runAsUserName (warning), or running as an account other than SYSTEM / Local service / NetworkService (info)",
    docs: r#"## What it does
For every HostProcess container, checks the effective `windowsOptions.runAsUserName` (container
value, else pod value):

* unset: **warning**, choose the account explicitly;
* not one of `NT AUTHORITY\SYSTEM`, `NT AUTHORITY\Local service` or `NT AUTHORITY\NetworkService`
  (case-insensitive): **info**. Any other name is valid when it names a local users group of the
  node: the container then runs as a temporary user in that group (KEP-1981); it fails at container
  start only if no such group exists on the node.

## Why is this bad?
HostProcess containers run directly on the host as a host account; the documented default choices
are the three service accounts above, and a local group keeps the container's rights to what the
group may do.

## Example
```yaml
spec:
  hostNetwork: true
  securityContext:
    windowsOptions: {hostProcess: true}
```

## Fix
Set `runAsUserName` to the least-privileged account that works: a local users group made for the
workload, or `NT AUTHORITY\Local service`; `NT AUTHORITY\SYSTEM` only when needed.

## Severity
`warning` for a user a HostProcess container cannot run as; `info` for a name that is none of
the three service accounts, which must then name a local users group of every node.
"#,
    fix: None,
    source: "K-HPC, KEP-1981",
    applies: "K>=1.22 (where the HostProcess field is kept)",
    os: RuleOs::Windows,
    default_on: true,
    reads: Reads::of(&[Area::Containers, Area::PodSecurityContext]),
    mutation: Mutation::DEFAULT,
};

pub(crate) fn hostprocess_user(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    let mut out = Vec::new();
    for c in host_process_containers(site, eval) {
        match pod::effective_run_as_user_name(site, &c) {
            None => {
                let Some(hp) = pod::effective_host_process(site, &c) else {
                    continue;
                };
                let who = if hp.inherited {
                    "HostProcess pod".to_string()
                } else {
                    format!("HostProcess {}", c.label())
                };
                push_once(
                    &mut out,
                    Finding::new(
                        &WIN205,
                        hp.pointer,
                        format!(
                            "{who} sets no windowsOptions.runAsUserName; set it to NT AUTHORITY\\SYSTEM, NT AUTHORITY\\Local service or NT AUTHORITY\\NetworkService"
                        ),
                    ),
                );
            }
            Some(e)
                if !HOSTPROCESS_USERS
                    .iter()
                    .any(|u| u.eq_ignore_ascii_case(e.value)) =>
            {
                push_once(
                    &mut out,
                    Finding::new(
                        &WIN205,
                        e.pointer.clone(),
                        format!(
                            "HostProcess containers run as a host account: {:?} is none of NT AUTHORITY\\SYSTEM, NT AUTHORITY\\Local service and NT AUTHORITY\\NetworkService, so it must name a local users group of the node (the container then runs as a temporary member of it); make sure the group exists on every Windows node",
                            e.value
                        ),
                    )
                    .severity(Severity::Info),
                );
            }
            Some(_) => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    use crate::rules::hostprocess::common::tests::hpc;
    use crate::rules::testutil::{assert_says, cfg, ids, only, set, unset};

    #[test]
    fn win205_user() {
        for ok in [
            "NT AUTHORITY\\SYSTEM",
            "nt authority\\system",
            "NT AUTHORITY\\Local service",
            "NT AUTHORITY\\LOCAL SERVICE",
            "NT AUTHORITY\\NetworkService",
            "NT AUTHORITY\\NETWORK SERVICE",
        ] {
            let pod = set(
                hpc(),
                "/spec/securityContext/windowsOptions/runAsUserName",
                json!(ok),
            );
            assert!(only(&pod, &cfg(), "WIN205").is_empty(), "{ok}");
        }
        let pod = set(
            hpc(),
            "/spec/securityContext/windowsOptions/runAsUserName",
            json!("ContainerAdministrator"),
        );
        assert_eq!(ids(&pod, &cfg()), ["WIN205"]);
        let f = &only(&pod, &cfg(), "WIN205")[0];
        assert_eq!(
            f.pointer,
            "/spec/securityContext/windowsOptions/runAsUserName"
        );
        // Another name is valid when it names a local users group (KEP-1981): info.
        assert_eq!(f.severity, Severity::Info);
        assert_says(f, "local users group");
        let pod = unset(hpc(), "/spec/securityContext/windowsOptions/runAsUserName");
        let fs = only(&pod, &cfg(), "WIN205");
        assert_eq!(fs.len(), 1);
        assert_eq!(fs[0].severity, Severity::Warning);
        assert_eq!(
            fs[0].pointer,
            "/spec/securityContext/windowsOptions/hostProcess"
        );
        // A container-level user overrides the pod's.
        let pod = set(
            hpc(),
            "/spec/containers/0/securityContext/windowsOptions/runAsUserName",
            json!("ContainerUser"),
        );
        assert_eq!(
            only(&pod, &cfg(), "WIN205")[0].pointer,
            "/spec/containers/0/securityContext/windowsOptions/runAsUserName"
        );
    }
}
