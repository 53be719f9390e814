//! WIN208 `hostnetwork-without-hostprocess`.

use crate::model::Eval;
use crate::model::api_fields::{ApiField, Fate, Place};
use crate::model::meta::{Area, Mutation, Reads, RuleOs};
use crate::model::pod::{self};
use crate::model::workload::PodSite;
use crate::model::{Finding, RuleMeta, Severity};
use crate::rules::Rule;
use crate::rules::hostprocess::common::host_network;
use crate::rules::hostprocess::common::host_process_pod;

/// WIN208 in the registry.
pub const RULE: Rule = Rule {
    meta: &WIN208,
    check: hostnetwork_without_hostprocess,
};

pub static WIN208: RuleMeta = RuleMeta {
    id: "WIN208",
    name: "hostnetwork-without-hostprocess",
    severity: Severity::Warning,
    summary: "spec.hostNetwork: true on a Windows pod that is not a HostProcess pod",
    docs: r#"## What it does
Finds Windows pods with `spec.hostNetwork: true` and no HostProcess container.

## Why is this bad?
Host networking for ordinary Windows containers is not supported: only HostProcess containers run
in the host's network. Kubernetes 1.26–1.32 had an alpha feature for it (KEP-3503, feature gate
`WindowsHostNetwork`; the 1.26–1.32 binaries have it on by default although it is alpha, and it
needs containerd 1.7+ on the nodes); it was withdrawn in 1.33. The API server never rejects the
field: this is about what the nodes do with it. Set `featureGates: {WindowsHostNetwork: true}` in
the target when a 1.26–1.32 cluster relies on the alpha feature on purpose.

## Example
```yaml
spec:
  os: {name: windows}
  hostNetwork: true
  containers:
  - name: web
    image: mcr.microsoft.com/windows/servercore:ltsc2022
```

## Fix
Remove `hostNetwork` and expose the pod through a Service (or `hostPort`), or make it a HostProcess
pod if it must run on the host.
"#,
    fix: None,
    source: "K-NET, KEP3503",
    applies: "all (K 1.26-1.32: unless the target sets the WindowsHostNetwork gate on)",
    os: RuleOs::Windows,
    default_on: true,
    reads: Reads::of(&[
        Area::Containers,
        Area::PodSecurityContext,
        Area::HostNamespaces,
    ]),
    mutation: Mutation::DEFAULT,
};

pub(crate) fn hostnetwork_without_hostprocess(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    if !host_network(site) || host_process_pod(site, eval) {
        return Vec::new();
    }
    // A HostProcess request the API server rejects (WIN203): the pod is never created.
    if matches!(
        ApiField::get(Place::WindowsOptions, "hostProcess").fate(eval.target),
        Fate::GateRejects { .. }
    ) && pod::is_host_process_pod(site)
    {
        return Vec::new();
    }
    let k = eval.target.kubernetes;
    let why = if k.at_least(1, 33) {
        format!(
            "host networking for Windows pods (alpha in 1.26-1.32, KEP-3503) was withdrawn in Kubernetes 1.33, so on {k} only HostProcess pods run in the host network"
        )
    } else if k.at_least(1, 26) {
        // The configuration says the cluster uses the alpha feature on purpose.
        if eval.target.gate_setting("WindowsHostNetwork") == Some(true) {
            return Vec::new();
        }
        if eval.target.gate("WindowsHostNetwork") {
            format!(
                "host networking for Windows pods is an alpha feature of Kubernetes {k} (feature gate WindowsHostNetwork, on by default in the 1.26-1.32 binaries) that works only with containerd 1.7+ on the nodes (with an older runtime the pod gets its own network) and was withdrawn in 1.33"
            )
        } else {
            format!(
                "host networking for Windows pods is alpha in Kubernetes {k} and the feature gate WindowsHostNetwork is off, so the pod gets its own network (the feature was withdrawn in 1.33)"
            )
        }
    } else {
        format!(
            "Kubernetes {k} does not support host networking for Windows pods; only HostProcess pods run in the host network"
        )
    };
    vec![Finding::new(
        &WIN208,
        site.ptr("/hostNetwork"),
        format!(
            "spec.hostNetwork: true on a Windows pod without HostProcess containers: {why}. Remove it and use a Service or hostPort, or make the pod a HostProcess pod"
        ),
    )]
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    use crate::rules::hostprocess::common::tests::hpc;
    use crate::rules::testutil::{assert_says, at, cfg, ids, only, set, winok};

    #[test]
    fn t57_hostnetwork_without_hostprocess() {
        let pod = set(winok(), "/spec/hostNetwork", json!(true));
        assert_eq!(ids(&pod, &cfg()), ["WIN208"]);
        let f = &only(&pod, &cfg(), "WIN208")[0];
        assert_eq!(f.pointer, "/spec/hostNetwork");
        assert_eq!(f.severity, Severity::Warning);
        // The 1.26-1.32 binaries have the alpha gate on by default (measured on 1.32).
        assert_says(
            f,
            "WindowsHostNetwork, on by default in the 1.26-1.32 binaries",
        );
        let mut off = cfg();
        off.target
            .feature_gates
            .insert("WindowsHostNetwork".into(), false);
        assert!(
            only(&pod, &off, "WIN208")[0]
                .message
                .contains("WindowsHostNetwork is off")
        );
        assert!(
            only(&pod, &at(34), "WIN208")[0]
                .message
                .contains("withdrawn in Kubernetes 1.33")
        );
        assert!(
            only(&pod, &at(25), "WIN208")[0]
                .message
                .contains("does not support")
        );
        let mut gated = cfg();
        gated
            .target
            .feature_gates
            .insert("WindowsHostNetwork".into(), true);
        assert!(only(&pod, &gated, "WIN208").is_empty());
        // hostNetwork: false, or a HostProcess pod: nothing.
        assert!(
            only(
                &set(winok(), "/spec/hostNetwork", json!(false)),
                &cfg(),
                "WIN208"
            )
            .is_empty()
        );
        assert!(only(&hpc(), &cfg(), "WIN208").is_empty());
    }
}
