//! Pins that break with the move: a pod that selects the current Windows nodes by their build
//! (`node.kubernetes.io/windows-build`), AKS's OS SKU (`kubernetes.azure.com/os-sku`), a required
//! node-affinity term on either, or a RuntimeClass whose `scheduling.nodeSelector` does, and that
//! selects no Windows node once the nodes run the planned build.
//!
//! The nodes after the move are the nodes now with the build and the labels that follow from it
//! rewritten ([`moved`]); whether the pod selects them is the scheduler's predicate
//! ([`Placement::of`], `schedule::fit`), the same one the linter's WIN006/WIN010 ask.

use std::sync::Arc;

use serde_json::Value;

use crate::model::labels::{AKS_OS_SKU_LABEL, BUILD_LABEL};
use crate::model::nodes::NodeGroup;
use crate::model::placement::{self, Placement};
use crate::model::windows::Build;
use crate::model::{Context, PodSite, Target};

/// The Windows node groups after the move: each current Windows group once per planned build,
/// its build label and AKS OS SKU rewritten; other groups as they are.
pub fn moved(groups: &[NodeGroup], to: &[Build]) -> Vec<NodeGroup> {
    let mut out = Vec::new();
    for g in groups {
        if !g.is_windows() {
            out.push(g.clone());
            continue;
        }
        for &b in to {
            let mut n = g.clone();
            n.build = Some(b);
            n.revision = None;
            if n.labels.contains_key(BUILD_LABEL) {
                n.labels.insert(BUILD_LABEL.into(), b.to_string());
            }
            if n.labels.contains_key(AKS_OS_SKU_LABEL) {
                match placement::aks_os_sku(b) {
                    Some(sku) => n.labels.insert(AKS_OS_SKU_LABEL.into(), sku.into()),
                    None => n.labels.remove(AKS_OS_SKU_LABEL),
                };
            }
            out.push(n);
        }
    }
    out
}

/// A target whose nodes are `groups` (observed, or the configured ones standing for them).
pub fn with_nodes(target: &Target, groups: Vec<NodeGroup>) -> Target {
    Target {
        nodes: Some(Arc::from(groups)),
        ..target.clone()
    }
}

/// One pin that selects no node after the move.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Broken {
    /// `nodeSelector node.kubernetes.io/windows-build: 10.0.20348`.
    pub evidence: String,
    pub change: String,
}

/// The pod's pins that break: it selects some Windows group of `now` and none of `after`.
/// Empty when it still selects one. A pod that selects no Windows group now either is judged
/// by its build and OS-SKU pins alone (labels every Windows node carries, so a value no moved
/// node has is a pin that selects nothing after the move, whatever else it selects): a 2019
/// cluster's pod pinned to 10.0.20348 is Pending today and still after a move to 2025, never
/// "runs as is"; a selector on labels winlint does not see is not a pin it can judge.
pub fn broken(
    site: &PodSite,
    cx: &Context,
    now: &Target,
    after: &Target,
    to: &[Build],
) -> Vec<Broken> {
    let before = Placement::of(site, now, cx);
    let later = Placement::of(site, after, cx);
    if !later.windows_selected().is_empty() {
        return Vec::new();
    }
    if before.windows_selected().is_empty() {
        // A DaemonSet that selects no node runs no pod, now and after: per-build DaemonSets
        // (one for 2019 nodes, one for 2022) are built to select none on the other pools.
        if site.kind == "DaemonSet" {
            return Vec::new();
        }
        let moved: Vec<&NodeGroup> = (after.nodes.iter().flat_map(|n| n.iter()))
            .filter(|g| g.is_windows())
            .collect();
        return pins(site, cx, to)
            .into_iter()
            .filter(|p| !p.selects_any(&moved))
            .map(|p| Broken {
                evidence: format!(
                    "{} (it selects no current Windows node either: winlint lint reports it)",
                    p.broken.evidence
                ),
                change: p.broken.change,
            })
            .collect();
    }
    let mut out: Vec<Broken> = pins(site, cx, to).into_iter().map(|p| p.broken).collect();
    if out.is_empty() {
        out.push(Broken {
            evidence: "its node selection picks the current Windows nodes and none after the move".into(),
            change: "select the planned nodes (compare the pod's nodeSelector and affinity with the new pool's labels)".into(),
        });
    }
    out
}

/// A pin on a build or OS-SKU label, and the values of that label it accepts.
struct Pin {
    key: &'static str,
    /// `None`: an affinity operator other than `In` (not judged alone).
    values: Option<Vec<String>>,
    broken: Broken,
}

impl Pin {
    /// Whether some node group carries the label with an accepted value. A pin judged alone is
    /// never called broken when that cannot be told: an operator other than `In`, or a label
    /// no group carries (AKS's OS SKU on a cluster that is not AKS).
    fn selects_any(&self, groups: &[&NodeGroup]) -> bool {
        let carried = groups.iter().any(|g| g.labels.contains_key(self.key));
        match &self.values {
            Some(values) if carried => groups
                .iter()
                .any(|g| g.labels.get(self.key).is_some_and(|v| values.contains(v))),
            _ => true,
        }
    }
}

/// The pod's pins on `node.kubernetes.io/windows-build` and `kubernetes.azure.com/os-sku`:
/// its nodeSelector, its RuntimeClass's scheduling.nodeSelector, its required affinity terms;
/// each with the change that fits the planned builds `to`.
fn pins(site: &PodSite, cx: &Context, to: &[Build]) -> Vec<Pin> {
    let mut out = Vec::new();
    let tokens = to
        .iter()
        .map(|b| b.to_string())
        .collect::<Vec<_>>()
        .join(", ");
    let skus: Vec<&str> = to
        .iter()
        .filter_map(|&b| placement::aks_os_sku(b))
        .collect();
    let sku_change = |what: &str| match skus.as_slice() {
        [s] => format!("set {what} {AKS_OS_SKU_LABEL}: {s}"),
        _ => {
            format!("remove {what} {AKS_OS_SKU_LABEL} (no single OS SKU names the planned builds)")
        }
    };
    let build_change = |what: &str| match to {
        [b] => format!(
            "set {what} {BUILD_LABEL}: {b}, or remove it when the images run on every planned build"
        ),
        _ => format!(
            "remove {what} {BUILD_LABEL}, or select the planned builds ({tokens}) with a node-affinity term (operator In)"
        ),
    };
    let pinned = |key: &str| {
        [BUILD_LABEL, AKS_OS_SKU_LABEL]
            .into_iter()
            .find(|k| *k == key)
    };
    for (key, v) in node_selector(site.spec) {
        if let Some(key) = pinned(key) {
            let change = match key {
                BUILD_LABEL => build_change("nodeSelector"),
                _ => sku_change("nodeSelector"),
            };
            out.push(Pin {
                key,
                values: Some(vec![v.to_string()]),
                broken: Broken {
                    evidence: format!("nodeSelector {key}: {v}"),
                    change,
                },
            });
        }
    }
    if let Some(rc) = placement::runtime_class(site, cx) {
        for (key, v) in &rc.node_selector {
            if let Some(key) = pinned(key) {
                let what = format!("RuntimeClass {}'s", rc.name);
                let change = match key {
                    BUILD_LABEL => build_change(&what),
                    _ => sku_change(&what),
                };
                out.push(Pin {
                    key,
                    values: Some(vec![v.clone()]),
                    broken: Broken {
                        evidence: format!(
                            "RuntimeClass {} scheduling.nodeSelector {key}: {v}",
                            rc.name
                        ),
                        change,
                    },
                });
            }
        }
    }
    for (key, op, values) in affinity_terms(site.spec) {
        if let Some(key) = pinned(key) {
            let planned = if key == BUILD_LABEL {
                tokens.clone()
            } else {
                skus.join(", ")
            };
            out.push(Pin {
                key,
                values: (op == "In").then(|| values.iter().map(|v| v.to_string()).collect()),
                broken: Broken {
                    evidence: format!("required nodeAffinity {key} {op} [{}]", values.join(", ")),
                    change: format!("add {planned} to the term's values (or drop the expression)"),
                },
            });
        }
    }
    out
}

fn node_selector(spec: &Value) -> Vec<(&str, &str)> {
    spec.get("nodeSelector")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| Some((k.as_str(), v.as_str()?)))
                .collect()
        })
        .unwrap_or_default()
}

/// The match expressions of the required node-affinity terms: (key, operator, values).
fn affinity_terms(spec: &Value) -> Vec<(&str, &str, Vec<&str>)> {
    let terms = spec
        .pointer("/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution/nodeSelectorTerms")
        .and_then(Value::as_array);
    let mut out = Vec::new();
    for t in terms.into_iter().flatten() {
        for e in t
            .get("matchExpressions")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let (Some(k), Some(op)) = (
                e.get("key").and_then(Value::as_str),
                e.get("operator").and_then(Value::as_str),
            ) else {
                continue;
            };
            let values = e
                .get("values")
                .and_then(Value::as_array)
                .map(|v| v.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            out.push((k, op, values));
        }
    }
    out
}
