//! WIN203 `hostprocess-unavailable`.

use crate::model::Eval;
use crate::model::Runtime;
use crate::model::api_fields::{self, ApiField, Fate, Place};
use crate::model::meta::{Area, Mutation, Reads, RuleOs};
use crate::model::pod::{self};
use crate::model::workload::PodSite;
use crate::model::{Finding, RuleMeta, Severity};
use crate::rules::Rule;

/// WIN203 in the registry.
pub const RULE: Rule = Rule {
    meta: &WIN203,
    check: hostprocess_unavailable,
};

pub static WIN203: RuleMeta = RuleMeta {
    id: "WIN203",
    name: "hostprocess-unavailable",
    severity: Severity::Error,
    summary: "HostProcess requested where the target cannot run it (K<1.22, the gate off in 1.22-1.25, Docker runtime)",
    docs: r#"## What it does
Finds `windowsOptions.hostProcess: true` when the target cannot honour it:

* Kubernetes < 1.22 (**warning**): the field does not exist. `kubectl` refuses the manifest
  (unknown field); other clients have the field dropped and the pod starts as an ordinary isolated
  container, without host access;
* Kubernetes 1.22–1.25 with the `WindowsHostProcessContainers` feature gate off (alpha and off by
  default in 1.22; beta and on from 1.23, GA in 1.26) (**error**): the API server does not drop the
  field, it rejects the pod (HostProcess was the exception to dropping disabled fields);
* runtime Docker (dockershim, **error**): HostProcess containers need containerd 1.6 or later.

A cluster whose API server runs with `--allow-privileged=false` also rejects them ("spec: Forbidden:
hostProcess containers are disallowed by cluster policy", measured on 1.32); winlint cannot see that
flag.

## Why is this bad?
The workload silently runs without host access, or is never created.

## Example
```yaml
# target: kubernetes 1.21
spec:
  securityContext:
    windowsOptions: {hostProcess: true}
```

## Fix
Upgrade to Kubernetes ≥ 1.23 (HostProcess beta, on by default; GA in 1.26) with containerd ≥ 1.6,
or enable the gate on 1.22 (API server and kubelets).

## Severity
`error` where the target rejects or cannot run the request (the feature gate off, the Docker
runtime); `warning` where the target's API server does not know the field at all (before 1.22:
the pod runs as an ordinary container).
"#,
    fix: None,
    source: "K-HPC, VAL, kubernetes PR #99576, issue-9 research §1.4",
    applies: "K<1.22 (warning); 1.22-1.25 with the gate off, or runtime docker (error)",
    os: RuleOs::Windows,
    default_on: true,
    reads: Reads::of(&[Area::Containers, Area::PodSecurityContext]),
    mutation: Mutation::DEFAULT,
};

pub(crate) fn hostprocess_unavailable(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    let requests = pod::host_process_requests(site);
    if requests.is_empty() {
        return Vec::new();
    }
    let t = eval.target;
    let k = t.kubernetes;
    let (severity, cause) = match ApiField::get(Place::WindowsOptions, "hostProcess").fate(t) {
        Fate::Unknown => (
            Severity::Warning,
            None, // the message depends on the field's path
        ),
        Fate::GateRejects { gate } => (
            Severity::Error,
            Some(format!(
                "the Kubernetes {k} API server rejects the pod: HostProcess containers need the feature gate {gate}, and the {} (with it off, validation fails instead of dropping the field); enable it on the API server and the kubelets",
                api_fields::gate_off_text(t, gate)
            )),
        ),
        _ if t.runtime == Runtime::Docker => (
            Severity::Error,
            Some("the Docker runtime (dockershim) cannot run HostProcess containers: they need containerd 1.6 or later".to_string()),
        ),
        _ => return Vec::new(),
    };
    requests
        .into_iter()
        .map(|p| {
            let path = pod::dotted(&p);
            let msg = match &cause {
                Some(cause) => format!("{path}: true cannot be honoured by the target: {cause}"),
                None => format!(
                    "{path} does not exist in Kubernetes {k} (added in 1.22): {}; the pod would run as an ordinary isolated container, without host access",
                    api_fields::unknown_field_text(t, &path)
                ),
            };
            Finding::new(&WIN203, p, msg).severity(severity)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::rules::hostprocess::common::tests::OWN;
    use crate::rules::hostprocess::common::tests::hpc;
    use crate::rules::hostprocess::common::tests::t14;
    use crate::rules::testutil::{assert_says, at, ids_in, only, winok};

    #[test]
    fn win203_per_target() {
        let pod = hpc();
        let f = &only(&pod, &at(21), "WIN203")[0];
        assert_eq!(
            f.pointer,
            "/spec/securityContext/windowsOptions/hostProcess"
        );
        assert_says(f, "added in 1.22");
        // An unknown field: kubectl refuses it, other clients have it dropped (warning).
        assert_eq!(f.severity, Severity::Warning);
        assert_says(f, "--validate=false");
        // The other HostProcess rules do not apply where the field is dropped.
        assert_eq!(ids_in(&t14(), &at(21), OWN), ["WIN203"]);
        // 1.22 with the alpha gate off: the API server rejects the pod (it does not drop it).
        let f = &only(&pod, &at(22), "WIN203")[0];
        assert_says(
            f,
            "API server rejects the pod: HostProcess containers need the feature gate WindowsHostProcessContainers, and the feature gate WindowsHostProcessContainers is off by default before 1.23",
        );
        assert_eq!(f.severity, Severity::Error);
        let mut gated = at(22);
        gated
            .target
            .feature_gates
            .insert("WindowsHostProcessContainers".into(), true);
        assert!(only(&pod, &gated, "WIN203").is_empty());
        assert_eq!(ids_in(&t14(), &gated, OWN), ["WIN201"]);
        assert!(only(&pod, &at(23), "WIN203").is_empty());
        let mut docker = at(23);
        docker.target.runtime = Runtime::Docker;
        let f = &only(&pod, &docker, "WIN203")[0];
        assert_says(f, "containerd 1.6");
        assert_eq!(f.severity, Severity::Error);
        assert!(only(&winok(), &docker, "WIN203").is_empty());
    }
}
