//! WIN701 `eks-windows-node-selector`.

use crate::model::Eval;
use serde_json::Value;

use crate::model::labels::{OS_LABELS, WINDOWS_ONLY_NODE_LABELS};
use crate::model::meta::{Area, Mutation, Reads, Recorded, RuleOs};
use crate::model::platform::Platform;
use crate::model::workload::{PodSite, items};
use crate::model::{Finding, Fix, FixSafety, RuleMeta, Severity};
use crate::rules::Rule;
use crate::rules::scheduling::common::node_selector_ops;

/// WIN701 in the registry.
pub const RULE: Rule = Rule {
    meta: &WIN701,
    check: eks_windows_node_selector,
};

pub static WIN701: RuleMeta = RuleMeta {
    id: "WIN701",
    name: "eks-windows-node-selector",
    severity: Severity::Error,
    summary: "on EKS, a Windows pod without nodeSelector kubernetes.io/os: windows gets no IP address",
    docs: r#"## What it does
With `--platform eks` (or `target.platform: eks`), finds Windows pods that are not on the host
network and whose `spec.nodeSelector` does not say `kubernetes.io/os: windows` (or the legacy
`beta.kubernetes.io/os: windows`), after the `scheduling.nodeSelector` of their RuntimeClass is
merged in: pods pinned to Windows nodes by node affinity, by a Windows-only label, or by a
RuntimeClass that does not set the OS label. Silent on other platforms, for a RuntimeClass
winlint does not know, for a pod with no Windows pin at all (WIN001 reports it, with the same
fix) and for an OS label with another value (WIN010, WIN004).

## Why is this bad?
On EKS the VPC resource controller's admission webhook gives a Windows pod its IP address
resource (`vpc.amazonaws.com/PrivateIPv4Address`) only when `spec.nodeSelector` names the OS
(`hasWindowsNodeSelector` in aws/amazon-vpc-resource-controller-k8s `webhooks/core/pod_webhook.go`);
it does not read affinity. Such a pod is scheduled on a Windows node and stays in
`ContainerCreating`: the CNI finds no IP for it (aws/containers-roadmap#463, #542, #836). The
RuntimeClass admission plugin runs before the webhooks, so a RuntimeClass whose
`scheduling.nodeSelector` has the label is enough.

## Example
```yaml
spec:
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - matchExpressions:
          - {key: kubernetes.io/os, operator: In, values: [windows]}
  containers:
  - name: app
    image: mcr.microsoft.com/windows/servercore:ltsc2022
```

## Fix
Safe: add `nodeSelector: {kubernetes.io/os: windows}` (the pod already runs only on Windows
nodes, so this changes nothing else).
"#,
    fix: Some(FixSafety::Safe),
    source: "aws/amazon-vpc-resource-controller-k8s webhooks/core/pod_webhook.go, aws/containers-roadmap#463, #836",
    applies: "platform=eks",
    os: RuleOs::Windows,
    default_on: true,
    reads: Reads::of(&[
        Area::NodeSelector,
        Area::Affinity,
        Area::HostNamespaces,
        Area::RuntimeClass,
    ]),
    mutation: Mutation::placing(Recorded::NodeSelector),
};

pub(crate) fn eks_windows_node_selector(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    if eval.target.platform != Some(Platform::Eks) {
        return Vec::new();
    }
    // The webhook leaves host-network pods alone: they take the node's address.
    if site.get("/hostNetwork").and_then(|v| v.as_bool()) == Some(true) {
        return Vec::new();
    }
    let says_windows = |get: &dyn Fn(&str) -> Option<String>| {
        OS_LABELS
            .iter()
            .any(|k| get(k).as_deref() == Some("windows"))
    };
    // An OS key with another value (`Windows`, `linux`) is WIN010's or WIN004's to report.
    if OS_LABELS.iter().any(|k| site.node_selector(k).is_some()) {
        return Vec::new();
    }
    // A pod with no Windows pin at all is WIN001's, whose fix is this one: the contract
    // concerns pods that reach Windows nodes by another way.
    if !pinned_otherwise(site) {
        return Vec::new();
    }
    let mut why = "the pod's spec.nodeSelector does not say kubernetes.io/os: windows".to_string();
    if let Some(rc) = site.str("/runtimeClassName") {
        let Some(facts) = eval.context.runtime_classes.get(rc) else {
            // Its scheduling.nodeSelector may supply the label: not a guess to deny on.
            return Vec::new();
        };
        if says_windows(&|k| facts.node_selector.get(k).cloned()) {
            return Vec::new();
        }
        why = format!(
            "neither the pod's spec.nodeSelector nor RuntimeClass {rc:?} says kubernetes.io/os: windows"
        );
    }
    let key = eval.target.os_label_key();
    let pointer = if site.get("/nodeSelector").is_some() {
        site.ptr("/nodeSelector")
    } else {
        site.spec_ptr.clone()
    };
    vec![
        Finding::new(
            &WIN701,
            pointer,
            format!(
                "on EKS, {why}: the VPC resource controller's webhook reads only the \
                 nodeSelector, so the pod gets no IP address and stays in ContainerCreating; \
                 add nodeSelector {key}: windows"
            ),
        )
        .with_fix(Fix {
            safety: FixSafety::Safe,
            description: format!("add nodeSelector {key}=windows"),
            ops: node_selector_ops(site, key, "windows"),
        }),
    ]
}

/// Whether something other than `spec.nodeSelector`'s OS label keeps the pod on Windows
/// nodes: a required node affinity on the OS label, a selector on a label only Windows nodes
/// carry, or a RuntimeClass (whose scheduling.nodeSelector the caller reads).
fn pinned_otherwise(site: &PodSite) -> bool {
    let affinity = site
        .get("/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution/nodeSelectorTerms")
        .and_then(Value::as_array)
        .is_some_and(|terms| {
            !terms.is_empty()
                && terms.iter().all(|t| {
                    items(t, "matchExpressions").any(|e| {
                        e.get("key")
                            .and_then(Value::as_str)
                            .is_some_and(|k| OS_LABELS.contains(&k))
                            && e.get("operator").and_then(Value::as_str) == Some("In")
                            && items(e, "values").any(|v| v == "windows")
                    })
                })
        });
    let windows_label = WINDOWS_ONLY_NODE_LABELS
        .iter()
        .any(|(k, prefix)| site.node_selector(k).is_some_and(|v| v.starts_with(prefix)));
    affinity || windows_label || site.str("/runtimeClassName").is_some()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    use crate::rules::testutil::{cfg, fixed, hits, set, unset, winok};

    fn eks() -> crate::config::Config {
        let mut c = cfg();
        c.target.set_platform(Platform::Eks);
        c
    }

    fn affinity_pinned() -> serde_json::Value {
        set(
            unset(winok(), "/spec/nodeSelector"),
            "/spec/affinity",
            json!({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [
                    {"key": "kubernetes.io/os", "operator": "In", "values": ["windows"]}]}]}}}),
        )
    }

    #[test]
    fn affinity_only_on_eks_is_an_error_with_the_selector_fix() {
        let pod = affinity_pinned();
        assert_eq!(
            hits(&pod, &eks(), "WIN701"),
            [(Severity::Error, "/spec".to_string())]
        );
        let after = fixed(&pod, &eks(), "WIN701");
        assert_eq!(after["spec"]["nodeSelector"]["kubernetes.io/os"], "windows");
        assert!(hits(&after, &eks(), "WIN701").is_empty());
    }

    #[test]
    fn silent_elsewhere_and_with_the_selector() {
        assert!(hits(&affinity_pinned(), &cfg(), "WIN701").is_empty());
        assert!(hits(&winok(), &eks(), "WIN701").is_empty());
        let beta = set(
            unset(winok(), "/spec/nodeSelector"),
            "/spec/nodeSelector",
            json!({"beta.kubernetes.io/os": "windows"}),
        );
        assert!(hits(&beta, &eks(), "WIN701").is_empty());
        let host = set(affinity_pinned(), "/spec/hostNetwork", json!(true));
        assert!(hits(&host, &eks(), "WIN701").is_empty());
        // No pin at all: WIN001's, with the same fix.
        let unpinned = unset(winok(), "/spec/nodeSelector");
        assert!(hits(&unpinned, &eks(), "WIN701").is_empty());
        assert!(!hits(&unpinned, &eks(), "WIN001").is_empty());
        // `Windows`: WIN010's (no node has that value).
        let cased = set(
            winok(),
            "/spec/nodeSelector/kubernetes.io~1os",
            json!("Windows"),
        );
        assert!(hits(&cased, &eks(), "WIN701").is_empty());
        // A Windows-only label pins it too, and the webhook does not read it.
        let build = set(
            unpinned,
            "/spec/nodeSelector",
            json!({"node.kubernetes.io/windows-build": "10.0.20348"}),
        );
        assert_eq!(hits(&build, &eks(), "WIN701").len(), 1);
    }

    #[test]
    fn runtime_class_selectors_are_merged_before_the_webhook() {
        let pod = set(
            affinity_pinned(),
            "/spec/runtimeClassName",
            json!("windows-2022"),
        );
        // Unknown class: it may supply the label.
        assert!(hits(&pod, &eks(), "WIN701").is_empty());
        let lint = |sel: serde_json::Value| {
            let mut cx = crate::model::Context::default();
            cx.add(
                &json!({"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass",
                "metadata": {"name": "windows-2022"}, "handler": "runhcs-wcow-process",
                "scheduling": {"nodeSelector": sel}}),
            );
            crate::engine::lint_object(&pod, &eks(), &cx, crate::model::Operation::Lint)
                .findings
                .into_iter()
                .filter(|f| f.rule.id == "WIN701")
                .count()
        };
        assert_eq!(lint(json!({"kubernetes.io/os": "windows"})), 0);
        assert_eq!(
            lint(json!({"node.kubernetes.io/windows-build": "10.0.20348"})),
            1
        );
    }
}
