//! WIN010 `selects-no-node`.

use crate::model::labels::{BETA_OS_LABEL, BUILD_LABEL, OS_LABELS};
use crate::model::meta::{Mutation, Reads, Recorded, RuleOs};
use crate::model::schedule;
use crate::model::workload::PodSite;
use crate::model::{Eval, escape};
use crate::model::{Finding, Fix, FixSafety, RuleMeta, Severity, ops};
use crate::rules::Rule;
use crate::rules::scheduling::common::is_daemonset;
use crate::rules::scheduling::common::selector_ptr;
use serde_json::{Value, json};

/// WIN010 in the registry.
pub const RULE: Rule = Rule {
    meta: &WIN010,
    check: selects_no_node,
};

/// What comes of a pod that no node takes ([`is_daemonset`]).
pub(crate) fn unplaced(site: &PodSite) -> &'static str {
    if is_daemonset(site) {
        "the DaemonSet creates no pod"
    } else if schedule::node_name(site.spec).is_some() {
        // No scheduler: the named node's kubelet checks the selectors (predicate.go,
        // generalFilter) and fails the pod.
        "the kubelet of the node it names (spec.nodeName) rejects the pod (NodeAffinity)"
    } else {
        "the pod stays Pending"
    }
}

pub static WIN010: RuleMeta = RuleMeta {
    id: "WIN010",
    name: "selects-no-node",
    severity: Severity::Error,
    summary: "The pod's node selection matches no Windows node: a label value in the wrong case, a label the target's nodes do not have yet, or none of the cluster's Windows nodes",
    docs: r#"## What it does
Checks that a Windows pod's `nodeSelector` and required node affinity can match a Windows node:

* the OS label's value in the wrong case (`kubernetes.io/os: Windows`): the kubelet writes
  `windows`, and label values are compared exactly, so no node ever matches (error);
* labels the target's Kubernetes does not set yet: `kubernetes.io/os` before 1.14 (only
  `beta.kubernetes.io/os` existed), `node.kubernetes.io/windows-build` before 1.17 (error);
* with the cluster's nodes known (`winlint serve`, `--cluster`, `audit`): selectors that match
  none of its Windows nodes (a warning: a node pool scaled to zero may still bring one).

## Why is this bad?
The API server accepts such a pod; the scheduler finds no node for it and it stays Pending
("0/5 nodes are available: 5 node(s) didn't match Pod's node affinity/selector").
A pod that names its node (`spec.nodeName`) skips the scheduler, but the named node's kubelet
checks the same selectors and rejects the pod (`NodeAffinity`, `pkg/kubelet/lifecycle/predicate.go`);
with the cluster's nodes known, a `spec.nodeName` that is none of its Windows nodes (and no node
that is not Windows either: WIN001) is a warning.

## Example
```yaml
spec:
  nodeSelector:
    kubernetes.io/os: Windows
```

## Fix
Safe for the OS label: write the value in lower case, or use `beta.kubernetes.io/os` on
Kubernetes before 1.14. Otherwise select labels the Windows nodes have
(`kubectl get nodes -l kubernetes.io/os=windows --show-labels`).

## Severity
`error` where no node can ever match (an OS value in the wrong case, a label the target's nodes
do not have yet); `warning` where the selector matches none of the observed Windows nodes (a node
that has them may join) or the pod names a node not in the observed list; `info` for such a
DaemonSet, which just creates no pod there.
"#,
    fix: Some(FixSafety::Safe),
    source: "KL-LBL, PR84472, scheduler",
    applies: "all",
    os: RuleOs::Windows,
    default_on: true,
    reads: Reads::PLACEMENT,
    mutation: Mutation::placing(Recorded::NodeSelector),
};

pub(crate) fn selects_no_node(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    let mut out = Vec::new();
    let k = eval.target.kubernetes;
    let sel_ptr = |key: &str| site.ptr(&format!("/nodeSelector/{}", escape(key)));
    for key in OS_LABELS {
        let Some(v) = site.node_selector(key) else {
            continue;
        };
        let lower = v.to_ascii_lowercase();
        if v != lower && matches!(lower.as_str(), "windows" | "linux") {
            out.push(
                Finding::new(
                    &WIN010,
                    sel_ptr(key),
                    format!(
                        "nodeSelector {key}: {v} matches no node: the kubelet sets {key}={lower} and label values are case-sensitive; {}. Write {lower}",
                        unplaced(site)
                    ),
                )
                .with_fix(Fix {
                    safety: FixSafety::Safe,
                    description: format!("set nodeSelector {key}={lower}"),
                    ops: vec![ops::replace(&sel_ptr(key), json!(lower))],
                }),
            );
        }
    }
    if !k.at_least(1, 14)
        && let Some(v) = site.node_selector(OS_LABELS[0])
    {
        let mut f = Finding::new(
            &WIN010,
            sel_ptr(OS_LABELS[0]),
            format!(
                "nodeSelector {}: {v} matches no node on Kubernetes {k}: the label exists from 1.14; before that nodes carry only {BETA_OS_LABEL}. Use {BETA_OS_LABEL}: {v}",
                OS_LABELS[0]
            ),
        );
        if site.node_selector(BETA_OS_LABEL).is_none() && eval.fix_possible(site) {
            f = f.with_fix(Fix {
                safety: FixSafety::Safe,
                description: format!("rename nodeSelector {} to {BETA_OS_LABEL}", OS_LABELS[0]),
                ops: vec![
                    ops::remove(&sel_ptr(OS_LABELS[0])),
                    ops::add(&sel_ptr(BETA_OS_LABEL), json!(v)),
                ],
            });
        }
        out.push(f);
    }
    if !k.at_least(1, 17)
        && let Some(v) = site.node_selector(BUILD_LABEL)
    {
        out.push(Finding::new(
            &WIN010,
            sel_ptr(BUILD_LABEL),
            format!(
                "nodeSelector {BUILD_LABEL}: {v} matches no node on Kubernetes {k}: the kubelet sets this label from 1.17; select Windows nodes by {} instead",
                eval.target.os_label_key()
            ),
        ));
    }
    let p = eval.placement(site);
    if out.is_empty() && p.observed() && p.windows_selected().is_empty() {
        let groups = p.windows_groups();
        let n: usize = groups.iter().map(|g| g.count()).sum();
        // The nodeSelector entries no Windows node has, to say what to change.
        let missing: Vec<String> = site
            .spec
            .get("nodeSelector")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .filter(|(key, v)| {
                !groups
                    .iter()
                    .any(|g| g.labels.get(*key).map(String::as_str) == v.as_str())
            })
            .map(|(key, v)| format!("{key}={}", v.as_str().unwrap_or("")))
            .collect();
        let named = schedule::node_name(site.spec);
        if let Some(node) = named.filter(|n| !groups.iter().any(|g| g.nodes.contains_key(*n))) {
            if p.other_fitting().is_empty() {
                // (A node that is there but not Windows is WIN001's finding.)
                out.push(Finding::new(
                    &WIN010,
                    site.ptr("/nodeName"),
                    format!(
                        "spec.nodeName {node} is none of the cluster's {n} Windows node{}: no scheduler moves a pod that names its node, so it runs only if a node of that name joins (the pod garbage collector deletes pods bound to a missing node). Name a Windows node, or drop spec.nodeName",
                        if n == 1 { "" } else { "s" },
                    ),
                )
                // The node list may lag behind a node that is joining: never a denial.
                .severity(Severity::Warning));
            }
            return out;
        }
        let what = if missing.is_empty() {
            "its nodeSelector and required node affinity".to_string()
        } else {
            format!("nodeSelector {}", missing.join(", "))
        };
        let daemon = is_daemonset(site);
        // Nodes that are not Windows may take it: then it is not Pending but lands where a
        // Windows pod cannot run (the real scheduler binds it there: tests/k8s_scheduler.rs).
        let others = p.other_fitting();
        let outcome = match others.first() {
            Some(g) => {
                let m: usize = others.iter().map(|g| g.count()).sum();
                format!(
                    "{} only on {m} node{} that {} not Windows ({}), where its Windows containers cannot run",
                    if daemon {
                        "the DaemonSet creates pods"
                    } else {
                        "the scheduler can place it"
                    },
                    if m == 1 { "" } else { "s" },
                    if m == 1 { "is" } else { "are" },
                    g.describe(),
                )
            }
            None => format!("{} until such a node joins", unplaced(site)),
        };
        out.push(
            Finding::new(
                &WIN010,
                selector_ptr(site),
                format!(
                    "{what} match{} none of the cluster's {n} Windows node{}; {outcome}",
                    if missing.len() > 1 { "" } else { "es" },
                    if n == 1 { "" } else { "s" },
                ),
            )
            .severity(if daemon {
                Severity::Info
            } else {
                Severity::Warning
            }),
        );
    }
    out
}

#[cfg(test)]
mod tests {

    use crate::model::Severity;
    use crate::rules::scheduling::common::tests::{linux, windows_and_linux};
    use crate::rules::testutil::{assert_says, cfg, group, ids, observed, only, set, winok};
    use serde_json::json;

    /// spec.nodeName bypasses the scheduler: the named node alone decides (WIN001 when it is
    /// not Windows, WIN010 when the cluster has no such node), and only NoExecute taints keep
    /// the pod off it (WIN007; pkg/kubelet/lifecycle/predicate.go).
    #[test]
    fn pods_that_name_their_node() {
        let c = windows_and_linux("os=windows:NoSchedule");
        let named = |n: &str| set(winok(), "/spec/nodeName", json!(n));
        // A Windows node: the NoSchedule taint does not apply, nothing to say.
        assert!(
            ids(&named("w1"), &c).is_empty(),
            "{:?}",
            ids(&named("w1"), &c)
        );
        // A Linux node (and no selector to make its kubelet refuse the pod): WIN001, at
        // spec.nodeName, without a fix.
        let mut on_linux = named("l0");
        on_linux["spec"]
            .as_object_mut()
            .unwrap()
            .remove("nodeSelector");
        let f = only(&on_linux, &c, "WIN001");
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].pointer, "/spec/nodeName");
        assert!(f[0].fix.is_none());
        assert_says(&f[0], "names its node, l0");
        assert!(only(&on_linux, &c, "WIN010").is_empty());
        // No such node: WIN010, a warning.
        let f = only(&named("gone"), &c, "WIN010");
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].severity, Severity::Warning);
        assert!(
            f[0].message.starts_with("spec.nodeName gone is none of"),
            "{}",
            f[0].message
        );
        // A NoExecute taint on the named node: WIN007, the kubelet refuses it.
        let ne = windows_and_linux("os=windows:NoExecute");
        let f = only(&named("w0"), &ne, "WIN007");
        assert_eq!(f.len(), 1);
        assert_says(&f[0], "UntoleratedTaint");
        // Its selectors still count: a wrong one makes the kubelet reject it.
        let wrong = set(
            named("w0"),
            "/spec/nodeSelector/kubernetes.io~1os",
            json!("Windows"),
        );
        let f = only(&wrong, &c, "WIN010");
        assert!(
            f.iter()
                .any(|f| f.message.contains("rejects the pod (NodeAffinity)")),
            "{f:?}"
        );
    }

    #[test]
    fn win010_selectors_that_match_no_windows_node() {
        let c = observed(
            cfg(),
            vec![
                group(
                    "w",
                    "windows",
                    "10.0.20348",
                    &["os=windows:NoSchedule"],
                    &[("agentpool", "win")],
                    2,
                ),
                linux(),
            ],
        );
        let pod = set(winok(), "/spec/nodeSelector/agentpool", json!("windows"));
        let f = only(&pod, &c, "WIN010");
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].severity, Severity::Warning);
        assert!(
            f[0].message.starts_with(
                "nodeSelector agentpool=windows matches none of the cluster's 2 Windows nodes"
            ),
            "{}",
            f[0].message
        );
        assert!(ids(&winok(), &c).is_empty(), "{:?}", ids(&winok(), &c));
    }

    /// A selector that picks Linux nodes only: the pod is not Pending, the scheduler binds it
    /// on a Linux node (as the real kube-scheduler does, tests/k8s_scheduler.rs).
    #[test]
    fn win010_selector_matching_only_linux_nodes_says_where_it_lands() {
        let mut l = linux();
        l.labels.insert("agentpool".into(), "nodepool1".into());
        let c = observed(
            cfg(),
            vec![
                group(
                    "w",
                    "windows",
                    "10.0.20348",
                    &[],
                    &[("agentpool", "win")],
                    2,
                ),
                l,
            ],
        );
        let mut pod = set(winok(), "/spec/nodeSelector/agentpool", json!("nodepool1"));
        pod["spec"]["nodeSelector"]
            .as_object_mut()
            .unwrap()
            .remove("kubernetes.io/os");
        let f = only(&pod, &c, "WIN010");
        assert_eq!(f.len(), 1, "{f:?}");
        assert!(
            f[0].message
                .contains("the scheduler can place it only on 3 nodes that are not Windows (Linux nodes, untainted)")
                && !f[0].message.contains("Pending"),
            "{}",
            f[0].message
        );
    }
}
