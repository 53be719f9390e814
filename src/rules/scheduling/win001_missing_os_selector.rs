//! WIN001 `missing-os-selector`.

use serde_json::Value;

use crate::model::Eval;
use crate::model::classify::{self, Os};
use crate::model::context::Context;
use crate::model::labels::{OS_LABELS, WINDOWS_ONLY_NODE_LABELS};
use crate::model::meta::{Area, Mutation, Reads, Recorded, RuleOs};
use crate::model::workload::PodSite;
use crate::model::{Finding, Fix, FixSafety, RuleMeta, Severity};
use crate::model::{placement, schedule};
use crate::rules::Rule;
use crate::rules::scheduling::common::node_selector_ops;
use crate::rules::scheduling::common::selector_ptr;

/// WIN001 in the registry.
pub const RULE: Rule = Rule {
    meta: &WIN001,
    check: missing_os_selector,
};

pub static WIN001: RuleMeta = RuleMeta {
    id: "WIN001",
    name: "missing-os-selector",
    severity: Severity::Error,
    summary: "Windows pod without a hard OS pin (nodeSelector kubernetes.io/os=windows, required affinity or RuntimeClass)",
    docs: r#"## What it does
Checks that a Windows pod is pinned to Windows nodes: `spec.nodeSelector["kubernetes.io/os"]: windows`
(or the legacy `beta.kubernetes.io/os`), a required node affinity whose **every** term requires
`kubernetes.io/os In [windows]`, or a RuntimeClass whose `scheduling.nodeSelector` supplies it.

## Why is this bad?
The scheduler ignores `spec.os` and image names. Without an OS pin a Windows pod can land on a Linux
node, where it fails with `ErrImagePull` ("no matching manifest for linux/amd64") or
`PodOSNotSupported`, and stays stuck.

A pod that names its node (`spec.nodeName`) is placed by no scheduler: an OS pin would move it
nowhere (the node's kubelet only checks the selectors against itself,
`pkg/kubelet/lifecycle/predicate.go`), so the rule is silent for it, except when the cluster's
nodes are known and the named node is not Windows (no fix: name a Windows node).

## Example
```yaml
spec:
  containers:
  - name: web
    image: mcr.microsoft.com/windows/servercore:ltsc2022
```

## Fix
Safe: add `nodeSelector: {kubernetes.io/os: windows}` (`beta.kubernetes.io/os` before Kubernetes 1.14).
The webhook applies the same fix as mutation M1.

## Severity
`error` where the scheduler can place the pod on a node that is not Windows; `warning` where a
label only Windows nodes carry already keeps it on them (the OS selector is still missing), and
where the cluster shows no Windows node yet (checked against the configured target, not denied).
"#,
    fix: Some(FixSafety::Safe),
    source: "K-UG, KEP116, seed",
    applies: "all",
    os: RuleOs::Windows,
    default_on: true,
    reads: Reads::PLACEMENT.and(Reads::of(&[Area::Evidence])),
    mutation: Mutation::placing(Recorded::NodeSelector),
};

pub(crate) fn missing_os_selector(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    let p = eval.placement(site);
    let key = eval.target.os_label_key();
    if let Some(node) = schedule::node_name(site.spec) {
        // No scheduler places a pod that names its node: an OS selector moves it nowhere
        // (the kubelet only checks it against that node, predicate.go). Only the named node,
        // when observed, says something.
        return named_node_not_windows(site, eval, node);
    }
    let mut severity = Severity::Error;
    let mut msg = if p.observed() {
        // The cluster's nodes say where the pod can land: a selector on any label that only
        // Windows nodes carry, or taints on every other node, keep it off them.
        let others = p.other_fitting();
        if others.is_empty() {
            return Vec::new();
        }
        let n: usize = others.iter().map(|g| g.count()).sum();
        // No Windows node takes it (taints, selectors): it lands on the others for certain.
        let can = if p.windows_fitting().is_empty() {
            "will place it on one of"
        } else {
            "can place it on"
        };
        format!(
            "Windows pod has no OS node selector ({}); the scheduler {can} {n} node{} that {} not Windows ({}), where its Windows containers cannot run. Add nodeSelector {key}: windows",
            eval.class.reason(),
            if n == 1 { "" } else { "s" },
            if n == 1 { "is" } else { "are" },
            others[0].describe()
        )
    } else if classify::has_os_pin(site, eval.context, Os::Windows)
        || OS_LABELS.iter().any(|k| {
            site.node_selector(k)
                .is_some_and(|v| v.eq_ignore_ascii_case("windows"))
        })
    {
        // (A value in the wrong case pins the pod to no node at all: WIN010.)
        return Vec::new();
    } else if let Some(by) = windows_only_selector(site, eval.context) {
        severity = Severity::Warning;
        format!(
            "the pod is kept on Windows nodes only by {by}, a label only Windows nodes carry; add nodeSelector {key}: windows as well, which every Kubernetes node has and every tool reads"
        )
    } else {
        // Windows nodes it does not tolerate (configured taints, not assumed ones) leave it only
        // the Linux nodes (WIN007 says which taint).
        let tols = placement::tolerations(site, eval.context);
        let untolerated = !eval.target.taints_assumed()
            && schedule::untolerated(eval.target.windows_node_taints(), site.spec, &tols)
                .next()
                .is_some();
        let lands = if untolerated {
            "will place it on a Linux node (it does not tolerate the Windows nodes' taints either, WIN007)"
        } else {
            "may place it on a Linux node"
        };
        format!(
            "Windows pod has no OS node selector ({}); the scheduler {lands}, where its Windows containers cannot run. Add nodeSelector {key}: windows",
            eval.class.reason()
        )
    };
    if classify::affinity_os(site.spec).is_some() {
        msg.push_str(
            " (the required node affinity does not pin every term to windows: terms are ORed)",
        );
    }
    if let Some(note) = p.unobserved_note() {
        msg.push_str(note);
        severity = Severity::Warning;
    }
    let mut f = Finding::new(&WIN001, selector_ptr(site), msg).severity(severity);
    // Never overwrite a conflicting OS key (that is WIN004's business).
    if OS_LABELS.iter().all(|k| site.node_selector(k).is_none()) {
        f = f.with_fix(Fix {
            safety: FixSafety::Safe,
            description: format!("add nodeSelector {key}=windows"),
            ops: node_selector_ops(site, key, "windows"),
        });
    }
    vec![f]
}

/// A Windows pod whose `spec.nodeName` names an observed node that is not Windows: it runs there
/// or nowhere. No fix: a selector would only make that kubelet refuse it sooner.
fn named_node_not_windows(site: &PodSite, eval: &Eval, node: &str) -> Vec<Finding> {
    let p = eval.placement(site);
    if !p.observed() {
        return Vec::new();
    }
    let Some(group) = p.other_fitting().into_iter().next() else {
        return Vec::new();
    };
    vec![Finding::new(
        &WIN001,
        site.ptr("/nodeName"),
        format!(
            "Windows pod ({}) names its node, {node}, which is not Windows ({}): the scheduler does not place a pod with spec.nodeName, so it runs on that node or not at all. Name a Windows node, or drop spec.nodeName and add nodeSelector {}: windows",
            eval.class.reason(),
            group.describe(),
            eval.target.os_label_key(),
        ),
    )]
}

/// What keeps the pod on Windows nodes by a label only Windows nodes carry
/// ([`WINDOWS_ONLY_NODE_LABELS`]), for the message: its own nodeSelector, the nodeSelector its
/// RuntimeClass merges in (the RuntimeClass admission plugin), or a required node affinity
/// whose every term (terms are ORed) requires such a label (`In` values of the label's Windows
/// prefix, or `Exists` for a label only Windows nodes have at all). The real scheduler binds
/// such a pod on Windows nodes only (tests/k8s_scheduler.rs).
pub(crate) fn windows_only_selector(site: &PodSite, cx: &Context) -> Option<String> {
    let own = WINDOWS_ONLY_NODE_LABELS.iter().find_map(|(label, prefix)| {
        site.node_selector(label)
            .filter(|v| v.starts_with(prefix))
            .map(|v| format!("nodeSelector {label}: {v}"))
    });
    own.or_else(|| {
        let name = site.str("/runtimeClassName")?;
        let rc = cx.runtime_classes.get(name)?;
        WINDOWS_ONLY_NODE_LABELS.iter().find_map(|(label, prefix)| {
            rc.node_selector
                .get(*label)
                .filter(|v| v.starts_with(prefix))
                .map(|v| format!("the nodeSelector {label}: {v} of RuntimeClass {name:?}"))
        })
    })
    .or_else(|| {
        let terms = site
            .get("/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution/nodeSelectorTerms")?
            .as_array()?;
        let windows_only = |e: &Value| -> Option<String> {
            let key = e.get("key")?.as_str()?;
            let (label, prefix) = WINDOWS_ONLY_NODE_LABELS.iter().find(|(l, _)| *l == key)?;
            let values: Vec<&str> = e
                .get("values")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            match e.get("operator")?.as_str()? {
                "In" if !values.is_empty() && values.iter().all(|v| v.starts_with(prefix)) => {
                    Some(format!("{label} In [{}]", values.join(", ")))
                }
                "Exists" if prefix.is_empty() => Some(format!("{label} Exists")),
                _ => None,
            }
        };
        let per_term: Vec<String> = terms
            .iter()
            .map(|t| {
                t.get("matchExpressions")?
                    .as_array()?
                    .iter()
                    .find_map(windows_only)
            })
            .collect::<Option<_>>()?;
        let first = per_term.first()?;
        Some(format!("the required node affinity ({first})"))
    })
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use crate::model::Severity;
    use crate::rules::scheduling::common::tests::linux;
    use crate::rules::testutil::{cfg, findings, group, ids, observed, only, set, unset, winok};
    use serde_json::json;

    #[test]
    fn win001_fix_creates_selector() {
        let pod = unset(winok(), "/spec/nodeSelector");
        let fs = findings(&pod, &cfg());
        let f = fs.iter().find(|f| f.rule.id == "WIN001").expect("WIN001");
        assert_eq!(f.pointer, "/spec");
        let mut fixed = pod.clone();
        json_patch::patch(&mut fixed, &f.fix.as_ref().unwrap().ops).unwrap();
        assert_eq!(fixed["spec"]["nodeSelector"]["kubernetes.io/os"], "windows");
        assert!(ids(&fixed, &cfg()).is_empty());
    }

    #[test]
    fn win001_legacy_key_before_1_14() {
        let mut c = cfg();
        c.target.kubernetes = crate::model::KubeVersion::new(1, 12);
        let pod = unset(winok(), "/spec/nodeSelector");
        let fs = findings(&pod, &c);
        let f = fs.iter().find(|f| f.rule.id == "WIN001").unwrap();
        let mut fixed = pod.clone();
        json_patch::patch(&mut fixed, &f.fix.as_ref().unwrap().ops).unwrap();
        assert_eq!(
            fixed["spec"]["nodeSelector"]["beta.kubernetes.io/os"],
            "windows"
        );
    }

    #[test]
    fn win001_affinity_terms_must_all_pin() {
        let term = |os: &str| json!({"matchExpressions":[{"key":"kubernetes.io/os","operator":"In","values":[os]}]});
        let aff = |terms: Value| json!({"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":terms}}});
        let pod = set(
            unset(winok(), "/spec/nodeSelector"),
            "/spec/affinity",
            aff(json!([term("windows")])),
        );
        assert!(!ids(&pod, &cfg()).contains(&"WIN001"));
        let pod = set(
            unset(winok(), "/spec/nodeSelector"),
            "/spec/affinity",
            aff(json!([term("windows"), term("linux")])),
        );
        assert!(ids(&pod, &cfg()).contains(&"WIN001"));
    }

    #[test]
    fn win001_says_where_the_pod_lands() {
        // Issue 26: what happens there, and "will" where no Windows node takes it.
        let pod = unset(winok(), "/spec/nodeSelector");
        let f = &only(&pod, &cfg(), "WIN001")[0];
        assert!(
            f.message
                .contains("may place it on a Linux node, where its Windows containers cannot run"),
            "{}",
            f.message
        );
        // The default taint is assumed: "may" all the same.
        let bare = unset(pod.clone(), "/spec/tolerations");
        assert!(
            only(&bare, &cfg(), "WIN001")[0]
                .message
                .contains("may place")
        );
        // Configured taints it does not tolerate: it will land on Linux.
        let mut c = cfg();
        c.target.pinned.windows_taints = true;
        let f = &only(&bare, &c, "WIN001")[0];
        assert!(
            f.message.contains("will place it on a Linux node"),
            "{}",
            f.message
        );
        let c = crate::rules::scheduling::common::tests::windows_and_linux("os=windows:NoSchedule");
        let f = &only(&bare, &c, "WIN001")[0];
        assert!(
            f.message.contains("will place it on one of 3 nodes"),
            "{}",
            f.message
        );
    }

    #[test]
    fn win001_asks_whether_the_pod_can_land_on_another_os() {
        let pod = unset(winok(), "/spec/nodeSelector");
        let win = group(
            "w",
            "windows",
            "10.0.20348",
            &["os=windows:NoSchedule"],
            &[("agentpool", "win")],
            2,
        );
        let c = observed(cfg(), vec![win.clone(), linux()]);
        let f = only(&pod, &c, "WIN001");
        assert_eq!(f[0].severity, Severity::Error);
        assert!(
            f[0].message
                .contains("can place it on 3 nodes that are not Windows (Linux nodes, untainted)"),
            "{}",
            f[0].message
        );
        // A selector on a label only the Windows nodes carry pins it.
        let pool = set(
            pod.clone(),
            "/spec/nodeSelector",
            json!({"agentpool": "win"}),
        );
        assert!(only(&pool, &c, "WIN001").is_empty());
        // Linux nodes tainted against it (RKE1 taints its Linux nodes): it cannot land there.
        let c = observed(
            cfg(),
            vec![
                win,
                group("l", "linux", "", &["cattle.io/os=linux:NoSchedule"], &[], 3),
            ],
        );
        assert!(only(&pod, &c, "WIN001").is_empty());
    }

    /// Kept on Windows nodes by a Windows-only label in every required affinity term or in its
    /// RuntimeClass, or kept off Linux by `NotIn [linux]`: never "may land on Linux" (the real
    /// kube-scheduler binds such pods on Windows nodes only, tests/k8s_scheduler.rs).
    #[test]
    fn win001_windows_only_labels_in_affinity_runtime_class_and_not_in_linux() {
        let term = |e: Value| {
            json!({"requiredDuringSchedulingIgnoredDuringExecution":
            {"nodeSelectorTerms": [{"matchExpressions": [e]}]}})
        };
        let base = unset(winok(), "/spec/nodeSelector");
        let build_in = set(
            base.clone(),
            "/spec/affinity",
            json!({"nodeAffinity": term(json!({"key": "node.kubernetes.io/windows-build",
                "operator": "In", "values": ["10.0.20348"]}))}),
        );
        let f = only(&build_in, &cfg(), "WIN001");
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].severity, Severity::Warning, "{}", f[0].message);
        assert!(
            f[0].message.contains(
                "required node affinity (node.kubernetes.io/windows-build In [10.0.20348])"
            ),
            "{}",
            f[0].message
        );
        let not_in = set(
            base.clone(),
            "/spec/affinity",
            json!({"nodeAffinity": term(json!({"key": "kubernetes.io/os",
                "operator": "NotIn", "values": ["linux"]}))}),
        );
        assert!(only(&not_in, &cfg(), "WIN001").is_empty());
        // One term without a Windows-only label: terms are ORed, the pod may land on Linux.
        let mut ored = build_in.clone();
        ored["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
            ["nodeSelectorTerms"]
            .as_array_mut()
            .unwrap()
            .push(json!({"matchExpressions": [{"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]}]}));
        assert_eq!(only(&ored, &cfg(), "WIN001")[0].severity, Severity::Error);
        let mut cx = crate::model::Context::default();
        cx.add(
            &json!({"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass",
            "metadata": {"name": "ws2022"}, "handler": "runhcs-wcow-process",
            "scheduling": {"nodeSelector": {"node.kubernetes.io/windows-build": "10.0.20348"}}}),
        );
        let rc = set(base, "/spec/runtimeClassName", json!("ws2022"));
        let r = crate::engine::lint_object(&rc, &cfg(), &cx, crate::model::Operation::Lint);
        let f: Vec<_> = r
            .findings
            .iter()
            .filter(|f| f.rule.id == "WIN001")
            .collect();
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].severity, Severity::Warning, "{}", f[0].message);
        assert!(
            f[0].message.contains("of RuntimeClass \"ws2022\""),
            "{}",
            f[0].message
        );
    }
}
