//! WIN202 `hostprocess-mixed`.

use crate::model::Eval;
use crate::model::api_fields::{self};
use crate::model::meta::{Area, Mutation, Reads, RuleOs};
use crate::model::pod::{self};
use crate::model::workload::Lookup;
use crate::model::workload::PodSite;
use crate::model::{Finding, RuleMeta, Severity};
use crate::rules::Rule;
use serde_json::{Value, json};

/// WIN202 in the registry.
pub const RULE: Rule = Rule {
    meta: &WIN202,
    check: hostprocess_mixed,
};

pub static WIN202: RuleMeta = RuleMeta {
    id: "WIN202",
    name: "hostprocess-mixed",
    severity: Severity::Error,
    summary: "Pod mixes HostProcess and non-HostProcess containers, or pod and container hostProcess values differ",
    docs: r#"## What it does
Checks, as `validateWindowsHostProcessPod` does, that a container's `windowsOptions.hostProcess`
equals the pod-level value when both are set, and that when any container (init, regular or
ephemeral) is a HostProcess container, all of them are.

## Why is this bad?
The API server rejects the pod: "pod hostProcess value must be identical if both are specified" /
"If pod contains any hostProcess containers then all containers must be HostProcess containers".
A HostProcess container runs on the host, outside any container sandbox, so it cannot share a
pod with isolated containers.

## Example
```yaml
spec:
  hostNetwork: true
  securityContext:
    windowsOptions: {hostProcess: true, runAsUserName: 'NT AUTHORITY\SYSTEM'}
  containers:
  - name: agent
    image: mcr.microsoft.com/windows/nanoserver:ltsc2022
  - name: sidecar
    image: mcr.microsoft.com/windows/nanoserver:ltsc2022
    securityContext:
      windowsOptions: {hostProcess: false}
```

## Fix
Make every container a HostProcess container (set `hostProcess` once, at pod level) or none; move
isolated containers to their own pod.
"#,
    fix: None,
    source: "VAL",
    applies: "K>=1.22 (where the HostProcess field is kept)",
    os: RuleOs::Windows,
    default_on: true,
    reads: Reads::of(&[Area::Containers, Area::PodSecurityContext]),
    mutation: Mutation::DEFAULT,
};

pub(crate) fn hostprocess_mixed(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    if !pod::host_process_available(eval.target) {
        return Vec::new();
    }
    let pod_hp = site
        .get("/securityContext/windowsOptions/hostProcess")
        .and_then(Value::as_bool);
    let any_hp = pod::is_host_process_pod(site);
    let mut out = Vec::new();
    for c in site.containers() {
        let own_rel = format!("{}/securityContext/windowsOptions/hostProcess", c.rel());
        let own = c
            .value
            .lookup("/securityContext/windowsOptions/hostProcess")
            .and_then(Value::as_bool);
        if let (Some(p), Some(o)) = (pod_hp, own)
            && p != o
        {
            out.push(Finding::new(
                &WIN202,
                site.ptr(&own_rel),
                format!(
                    "{} sets windowsOptions.hostProcess: {o}, but the pod sets {p}: the API server rejects the pod ({}). Remove the container-level value: all containers of a pod must have the same effective HostProcess value",
                    c.label(),
                    api_fields::invalid(
                        &pod::dotted(&site.ptr(&own_rel)),
                        &json!(o),
                        &format!("pod hostProcess value must be identical if both are specified, was {p}")
                    )
                ),
            ));
            continue;
        }
        if any_hp && !pod::is_host_process(site, &c) {
            let pointer = if own.is_some() {
                site.ptr(&own_rel)
            } else {
                site.ptr(&c.rel())
            };
            out.push(Finding::new(
                &WIN202,
                pointer,
                format!(
                    "{} is not a HostProcess container, but other containers of the pod are: the API server rejects the pod ({}). Make it a HostProcess container or move it to another pod",
                    c.label(),
                    api_fields::invalid(
                        &pod::dotted(&site.spec_ptr),
                        &json!(""),
                        "If pod contains any hostProcess containers then all containers must be HostProcess containers"
                    )
                ),
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::rules::hostprocess::common::tests::hpc;
    use crate::rules::testutil::{cfg, ids, only, set, unset};

    #[test]
    fn t15_mixed_hostprocess() {
        let pod = set(
            hpc(),
            "/spec/containers/1",
            json!({"name":"b","image":"mcr.microsoft.com/windows/nanoserver:ltsc2022",
                "securityContext":{"windowsOptions":{"hostProcess":false}}}),
        );
        assert_eq!(ids(&pod, &cfg()), ["WIN202"]);
        let fs = only(&pod, &cfg(), "WIN202");
        assert_eq!(fs.len(), 1, "one finding per field");
        assert_eq!(
            fs[0].pointer,
            "/spec/containers/1/securityContext/windowsOptions/hostProcess"
        );
        assert!(
            fs[0].message.contains(
                "pod hostProcess value must be identical if both are specified, was true"
            )
        );
        assert_eq!(fs[0].severity, Severity::Error);
    }

    #[test]
    fn win202_some_but_not_all() {
        // Container-level HostProcess in one container, nothing in the other (an init container).
        let pod = set(
            unset(hpc(), "/spec/securityContext"),
            "/spec/containers/0/securityContext/windowsOptions",
            json!({"hostProcess":true,"runAsUserName":"NT AUTHORITY\\SYSTEM"}),
        );
        let pod = set(
            pod,
            "/spec/initContainers",
            json!([{"name":"init","image":"mcr.microsoft.com/windows/nanoserver:ltsc2022"}]),
        );
        let fs = only(&pod, &cfg(), "WIN202");
        assert_eq!(fs.len(), 1);
        assert_eq!(fs[0].pointer, "/spec/initContainers/0");
        assert!(
            fs[0]
                .message
                .contains("all containers must be HostProcess containers")
        );
        // Pod-level false, container true: the container differs, and the others are not HP.
        let pod = set(
            set(
                pod,
                "/spec/securityContext/windowsOptions/hostProcess",
                json!(false),
            ),
            "/spec/initContainers/0/securityContext/windowsOptions/hostProcess",
            json!(false),
        );
        let ptrs: Vec<String> = only(&pod, &cfg(), "WIN202")
            .into_iter()
            .map(|f| f.pointer)
            .collect();
        assert_eq!(
            ptrs,
            [
                "/spec/initContainers/0/securityContext/windowsOptions/hostProcess",
                "/spec/containers/0/securityContext/windowsOptions/hostProcess"
            ]
        );
    }
}
