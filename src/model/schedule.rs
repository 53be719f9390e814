//! Can a pod land on a node group? The scheduler's hard filters that depend on the pod spec and
//! on node facts only: `spec.nodeSelector`, required node affinity and NoSchedule/NoExecute
//! taints, with the exact upstream semantics
//! (`k8s.io/component-helpers/scheduling/corev1`: `nodeaffinity.GetRequiredNodeAffinity`,
//! `LazyErrorNodeSelector`, `FindMatchingUntoleratedTaint` with the scheduler's
//! `DoNotScheduleTaintsFilterFunc`, `Toleration.ToleratesTaint`).
//!
//! Pure: the pod spec is the request's `serde_json::Value` (typed structs drop fields), the node
//! side a [`NodeGroup`].
//!
//! A pod with `spec.nodeName` bypasses the scheduler: only the named node is a candidate, and
//! only the checks of that node's kubelet apply (`pkg/kubelet/lifecycle/predicate.go`,
//! `canAdmitPod`: the node affinity and nodeSelector filter, and of the taints only `NoExecute`
//! ones, "Kubelet is only interested in the NoExecute taint"); a `NoSchedule` taint does not keep
//! it off the node.
//!
//! Not modelled (they need state the facts do not hold, or are not hard filters): resources,
//! ports, volumes/topology, pod (anti-)affinity, topology spread, preferred terms and
//! `PreferNoSchedule`. Toleration operators `Lt`/`Gt`
//! (alpha `TaintTolerationComparisonOperators`, Kubernetes 1.35, off by default) tolerate
//! nothing, as upstream does while the gate is off.

use std::collections::BTreeMap;

use serde_json::Value;

use super::labels::HOSTNAME_LABEL;
use super::nodes::{NodeGroup, RuntimeClassFacts, Taint};
pub use super::nodes::{Toleration, TolerationRef};
use super::workload::each;

/// The tolerations of a pod spec (entries that are not objects are skipped). One without a key
/// whose operator is not `Exists` is left out: `ToleratesTaint` would compare its value with
/// every taint's, but the API server refuses a pod that has one (`ValidateTolerations`,
/// pkg/apis/core/validation/validation.go: "operator must be Exists when `key` is empty"), so
/// it tolerates nothing on any node ([`keyless_not_exists`] says why).
pub fn pod_tolerations(spec: &Value) -> Vec<TolerationRef<'_>> {
    each(
        spec["tolerations"]
            .as_array()
            .map_or(&[][..], Vec::as_slice),
    )
    .filter_map(TolerationRef::from_json)
    .filter(|t| !keyless_not_exists(t))
    .collect()
}

/// A toleration the API server refuses: no key, and an operator other than `Exists`.
pub fn keyless_not_exists(t: &TolerationRef) -> bool {
    t.key.is_empty() && t.operator != "Exists"
}

/// `spec.nodeName`, when the pod names its node (and so bypasses the scheduler).
pub fn node_name(spec: &Value) -> Option<&str> {
    spec["nodeName"].as_str().filter(|n| !n.is_empty())
}

/// Whether `taint` keeps a pod off a node: NoSchedule and NoExecute taints through the
/// scheduler's TaintToleration filter; only NoExecute ones for a pod that names its node (the
/// kubelet's admission, `predicate.go`, is then the only check, and it looks at NoExecute only).
pub fn blocks(taint: &Taint, spec: &Value) -> bool {
    taint.effect == "NoExecute" || (taint.effect == "NoSchedule" && node_name(spec).is_none())
}

/// Whether any toleration tolerates `taint`.
pub fn tolerated(tolerations: &[TolerationRef], taint: &Taint) -> bool {
    tolerations.iter().any(|t| t.tolerates(taint))
}

/// The taints of `taints` that keep the pod of `spec` off their node ([`blocks`]: NoSchedule
/// and NoExecute, NoExecute only for a pod that names its node; PreferNoSchedule never) and
/// that no toleration tolerates. The one definition the scheduler's fit, placement and WIN007
/// share.
pub fn untolerated<'a, 's, 't>(
    taints: &'a [Taint],
    spec: &'s Value,
    tolerations: &'t [TolerationRef<'t>],
) -> impl Iterator<Item = &'a Taint> + use<'a, 's, 't> {
    taints
        .iter()
        .filter(move |t| blocks(t, spec) && !tolerated(tolerations, t))
}

/// The labels and name of one node as the selector sees them.
#[derive(Debug, Clone, Copy)]
pub struct NodeView<'a> {
    /// Every label but `kubernetes.io/hostname`.
    pub labels: &'a BTreeMap<String, String>,
    /// The `kubernetes.io/hostname` label, if the node has one.
    pub hostname: Option<&'a str>,
    /// `metadata.name` (the only field `matchFields` may use).
    pub name: &'a str,
}

impl NodeView<'_> {
    fn label(&self, key: &str) -> Option<&str> {
        if key == HOSTNAME_LABEL {
            self.hostname
        } else {
            self.labels.get(key).map(String::as_str)
        }
    }
}

/// One `NodeSelectorRequirement` against a label (`labels.Requirement.Matches`). A malformed
/// requirement (unknown operator, wrong number of values, non-integer Gt/Lt value) is a parse
/// error: `None`.
fn requirement_matches(req: &Value, get: impl Fn(&str) -> Option<String>) -> Option<bool> {
    let key = req["key"].as_str()?;
    let values = requirement_values(req)?;
    let have = get(key);
    match req["operator"].as_str()? {
        op @ ("Gt" | "Lt") if values.len() == 1 => {
            // Go's strconv.ParseInt(s, 10, 64): optional sign, decimal digits.
            let want: i64 = values[0].parse().ok()?;
            let Some(h) = have.and_then(|h| h.parse::<i64>().ok()) else {
                return Some(false);
            };
            Some(if op == "Gt" { h > want } else { h < want })
        }
        op => set_requirement(op, &values, have.as_deref()),
    }
}

/// A requirement's `values`: absent or null is none; anything but a list of strings is
/// malformed (`None`).
fn requirement_values(req: &Value) -> Option<Vec<&str>> {
    match &req["values"] {
        Value::Null => Some(vec![]),
        Value::Array(a) => each(a).map(|v| v.as_str()).collect(),
        _ => None,
    }
}

/// One `metav1.LabelSelectorRequirement` (a workload's `spec.selector.matchExpressions` item)
/// against labels, as `LabelSelectorAsSelector` + `Matches` do: only the set-based operators
/// (no `Gt`/`Lt` in a label selector). A malformed requirement, which the API server's
/// `ValidateLabelSelector` refuses, is `None`.
pub fn label_requirement_matches<'a>(
    req: &Value,
    have: impl Fn(&str) -> Option<&'a str>,
) -> Option<bool> {
    let key = req["key"].as_str()?;
    set_requirement(
        req["operator"].as_str()?,
        &requirement_values(req)?,
        have(key),
    )
}

/// The set-based operators node and label selectors share (`labels.Requirement.Matches`):
/// `In`/`NotIn` need values, `Exists`/`DoesNotExist` take none. Anything else, or a requirement
/// with the wrong number of values, is malformed: `None`.
pub fn set_requirement(operator: &str, values: &[&str], have: Option<&str>) -> Option<bool> {
    match operator {
        "In" if !values.is_empty() => Some(have.is_some_and(|h| values.contains(&h))),
        "NotIn" if !values.is_empty() => Some(have.is_none_or(|h| !values.contains(&h))),
        "Exists" if values.is_empty() => Some(have.is_some()),
        "DoesNotExist" if values.is_empty() => Some(have.is_none()),
        _ => None,
    }
}

/// One field requirement (`matchFields`): only `In`/`NotIn` with exactly one value; the node's
/// only field is `metadata.name`, any other field reads as empty.
fn field_requirement_matches(req: &Value, node: &NodeView) -> Option<bool> {
    let key = req["key"].as_str()?;
    let values = req["values"].as_array()?;
    if values.len() != 1 {
        return None;
    }
    let want = values[0].as_str()?;
    let have = if key == "metadata.name" {
        node.name
    } else {
        ""
    };
    match req["operator"].as_str()? {
        "In" => Some(have == want),
        "NotIn" => Some(have != want),
        _ => None,
    }
}

/// A `NodeSelectorTerm`: its matchExpressions ANDed and its matchFields ANDed. An empty term
/// matches nothing; a malformed one is a parse error (`None`).
fn term_matches(term: &Value, node: &NodeView) -> Option<bool> {
    let exprs = term["matchExpressions"]
        .as_array()
        .map_or(&[][..], Vec::as_slice);
    let fields = term["matchFields"]
        .as_array()
        .map_or(&[][..], Vec::as_slice);
    if exprs.is_empty() && fields.is_empty() {
        return Some(false);
    }
    // Parse everything first: upstream rejects the whole term on any malformed requirement.
    let mut ok = true;
    for r in each(exprs) {
        ok &= requirement_matches(r, |k| node.label(k).map(str::to_string))?;
    }
    for r in each(fields) {
        ok &= field_requirement_matches(r, node)?;
    }
    Some(ok)
}

/// `spec.nodeSelector` (every pair must match) and required node affinity (terms ORed; no
/// terms, or only empty or malformed terms, select nothing).
pub fn selects(spec: &Value, node: &NodeView) -> bool {
    if let Some(sel) = spec["nodeSelector"].as_object() {
        for (k, v) in sel {
            if node.label(k) != v.as_str() {
                return false;
            }
        }
    }
    let required =
        &spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"];
    if required.is_null() {
        return true;
    }
    each(
        required["nodeSelectorTerms"]
            .as_array()
            .map_or(&[][..], Vec::as_slice),
    )
    .any(|t| term_matches(t, node) == Some(true))
}

/// Whether the selection depends on which node of a group it is: `spec.nodeName`, a hostname
/// label or a `matchFields` requirement.
fn per_node(spec: &Value) -> bool {
    if node_name(spec).is_some() || spec["nodeSelector"].get(HOSTNAME_LABEL).is_some() {
        return true;
    }
    spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
        ["nodeSelectorTerms"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|t| {
            t["matchFields"].as_array().is_some_and(|f| !f.is_empty())
                || t["matchExpressions"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .any(|e| e["key"] == HOSTNAME_LABEL)
        })
}

/// How a pod fares on a node group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fit {
    /// `nodes` of the group's nodes are selected and every blocking taint is tolerated.
    Fits { nodes: usize },
    /// The pod's nodeSelector or required node affinity selects none of the group's nodes.
    NotSelected,
    /// Selected, but this NoSchedule/NoExecute taint of the group is not tolerated.
    Untolerated(Taint),
}

impl Fit {
    pub fn fits(&self) -> bool {
        matches!(self, Fit::Fits { .. })
    }
}

/// Can the pod (`spec`: a pod spec or a pod template's spec) land on `group`? With
/// `runtime_class`, its scheduling is applied first, as the RuntimeClass admission plugin does:
/// its nodeSelector must match too (a conflicting key selects nothing) and its tolerations are
/// added to the pod's.
pub fn fit(spec: &Value, group: &NodeGroup, runtime_class: Option<&RuntimeClassFacts>) -> Fit {
    let rc_selects = |node: &NodeView| {
        runtime_class.is_none_or(|rc| {
            rc.node_selector
                .iter()
                .all(|(k, v)| node.label(k) == Some(v.as_str()))
        })
    };
    let takes = |(name, hostname): (&String, &Option<String>)| {
        let v = NodeView {
            labels: &group.labels,
            hostname: hostname.as_deref(),
            name,
        };
        node_name(spec).is_none_or(|n| n == name) && selects(spec, &v) && rc_selects(&v)
    };
    let selected = if per_node(spec)
        || runtime_class.is_some_and(|rc| rc.node_selector.contains_key(HOSTNAME_LABEL))
    {
        group.nodes.iter().filter(|n| takes(*n)).count()
    } else if group.nodes.iter().next().is_some_and(takes) {
        // Every node of the group answers alike: one answered for all.
        group.nodes.len()
    } else {
        0
    };
    if selected == 0 {
        return Fit::NotSelected;
    }
    let mut tolerations = pod_tolerations(spec);
    if let Some(rc) = runtime_class {
        tolerations.extend(rc.tolerations.iter().map(Toleration::as_ref));
    }
    match untolerated(&group.taints, spec, &tolerations).next() {
        Some(t) => Fit::Untolerated(t.clone()),
        None => Fit::Fits { nodes: selected },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::facts::NodeOs;
    use serde_json::json;

    fn taint(s: &str) -> Taint {
        Taint::parse(s).unwrap()
    }

    fn tol(v: Value) -> Toleration {
        let t = TolerationRef::from_json(&v).unwrap();
        Toleration {
            key: t.key.into(),
            operator: t.operator.into(),
            value: t.value.into(),
            effect: t.effect.into(),
        }
    }

    /// Upstream's TestTolerationToleratesTaint table (k8s.io/api/core/v1), plus the key-less
    /// cases.
    #[test]
    fn toleration_semantics() {
        let cases: &[(Value, &str, bool)] = &[
            // empty toleration (operator Equal, value "") vs a taint with a value
            (json!({}), "foo=bar:NoSchedule", false),
            // empty key + Exists tolerates everything
            (json!({"operator": "Exists"}), "foo=bar:NoSchedule", true),
            (json!({"operator": "Exists"}), "foo:NoExecute", true),
            // empty effect matches every effect
            (
                json!({"key": "foo", "operator": "Exists"}),
                "foo=bar:NoExecute",
                true,
            ),
            (
                json!({"key": "foo", "operator": "Equal", "value": "bar"}),
                "foo=bar:PreferNoSchedule",
                true,
            ),
            // effect must match when given
            (
                json!({"key": "foo", "operator": "Exists", "effect": "NoExecute"}),
                "foo=bar:NoSchedule",
                false,
            ),
            // key must match when given
            (
                json!({"key": "foo", "operator": "Exists"}),
                "bar=x:NoSchedule",
                false,
            ),
            // operator default is Equal
            (
                json!({"key": "foo", "value": "bar"}),
                "foo=bar:NoSchedule",
                true,
            ),
            (
                json!({"key": "foo", "value": "baz"}),
                "foo=bar:NoSchedule",
                false,
            ),
            // Equal with no value matches a taint without value
            (
                json!({"key": "foo", "operator": "Equal"}),
                "foo:NoSchedule",
                true,
            ),
            (
                json!({"key": "foo", "operator": "Equal"}),
                "foo=bar:NoSchedule",
                false,
            ),
            // Exists ignores the value
            (
                json!({"key": "foo", "operator": "Exists", "value": "zzz"}),
                "foo=bar:NoSchedule",
                true,
            ),
            // empty key with Equal: any key, value compared (validation forbids it, the
            // scheduler still evaluates it so)
            (
                json!({"operator": "Equal", "value": "bar"}),
                "foo=bar:NoSchedule",
                true,
            ),
            // unknown operators (and Lt/Gt with the alpha gate off) tolerate nothing
            (
                json!({"key": "foo", "operator": "Gt", "value": "1"}),
                "foo=2:NoSchedule",
                false,
            ),
            (
                json!({"key": "foo", "operator": "exists"}),
                "foo:NoSchedule",
                false,
            ),
        ];
        for (t, taint_s, want) in cases {
            assert_eq!(
                tol(t.clone()).tolerates(&taint(taint_s)),
                *want,
                "{t} vs {taint_s}"
            );
        }
    }

    #[test]
    fn untolerated_filter_ignores_prefer_no_schedule() {
        let taints = vec![
            taint("soft=x:PreferNoSchedule"),
            taint("os=windows:NoSchedule"),
            taint("evict:NoExecute"),
        ];
        let spec = json!({});
        let first = |tols: &[Toleration]| {
            let tols: Vec<TolerationRef> = tols.iter().map(Toleration::as_ref).collect();
            untolerated(&taints, &spec, &tols)
                .next()
                .map(|t| t.to_string())
        };
        assert_eq!(first(&[]), Some("os=windows:NoSchedule".into()));
        let some = [tol(json!({"key": "os", "value": "windows"}))];
        assert_eq!(first(&some), Some("evict:NoExecute".into()));
        let all = [tol(json!({"operator": "Exists"}))];
        assert_eq!(first(&all), None);
        let soft = [taint("soft=x:PreferNoSchedule")];
        assert_eq!(untolerated(&soft, &spec, &[]).next(), None);
        // A pod that names its node meets only the NoExecute taints (the kubelet's admission).
        let named = json!({"nodeName": "n1"});
        let left: Vec<String> = untolerated(&taints, &named, &[])
            .map(|t| t.to_string())
            .collect();
        assert_eq!(left, ["evict:NoExecute"]);
    }

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn sel(spec: Value, l: &BTreeMap<String, String>, host: Option<&str>, name: &str) -> bool {
        selects(
            &spec,
            &NodeView {
                labels: l,
                hostname: host,
                name,
            },
        )
    }

    fn affinity(terms: Value) -> Value {
        json!({"affinity": {"nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}}})
    }

    #[test]
    fn node_selector_needs_every_pair() {
        let l = labels(&[("kubernetes.io/os", "windows"), ("pool", "win")]);
        assert!(sel(json!({}), &l, None, "n"));
        assert!(sel(
            json!({"nodeSelector": {"kubernetes.io/os": "windows"}}),
            &l,
            None,
            "n"
        ));
        assert!(!sel(
            json!({"nodeSelector": {"kubernetes.io/os": "windows", "pool": "other"}}),
            &l,
            None,
            "n"
        ));
        assert!(!sel(
            json!({"nodeSelector": {"missing": ""}}),
            &l,
            None,
            "n"
        ));
        // hostname comes from the node, not the group labels
        assert!(sel(
            json!({"nodeSelector": {"kubernetes.io/hostname": "a"}}),
            &l,
            Some("a"),
            "n"
        ));
        assert!(!sel(
            json!({"nodeSelector": {"kubernetes.io/hostname": "a"}}),
            &l,
            Some("b"),
            "n"
        ));
    }

    /// Upstream's nodeaffinity tests (TestNodeSelectorMatch, TestRequiredNodeAffinity) and
    /// labels.Requirement.Matches, as a table.
    #[test]
    fn required_affinity_semantics() {
        let l = labels(&[
            ("kubernetes.io/os", "windows"),
            ("node.kubernetes.io/windows-build", "10.0.20348"),
            ("gen", "5"),
            ("weird", "abc"),
        ]);
        let e = |k: &str, op: &str, vals: Value| json!({"key": k, "operator": op, "values": vals});
        let ex = |k: &str, op: &str| json!({"key": k, "operator": op});
        let cases: Vec<(Value, bool, &str)> = vec![
            (json!([]), false, "no terms select nothing"),
            (json!([{}]), false, "an empty term selects nothing"),
            (
                json!([{"matchExpressions": []}]),
                false,
                "empty expressions select nothing",
            ),
            (
                json!([{"matchExpressions": [e("kubernetes.io/os", "In", json!(["windows"]))]}]),
                true,
                "In",
            ),
            (
                json!([{"matchExpressions": [e("kubernetes.io/os", "In", json!(["linux"]))]}]),
                false,
                "In miss",
            ),
            (
                json!([{"matchExpressions": [e("kubernetes.io/os", "NotIn", json!(["linux"]))]}]),
                true,
                "NotIn",
            ),
            (
                json!([{"matchExpressions": [e("absent", "NotIn", json!(["x"]))]}]),
                true,
                "NotIn on a missing key matches",
            ),
            (
                json!([{"matchExpressions": [ex("gen", "Exists")]}]),
                true,
                "Exists",
            ),
            (
                json!([{"matchExpressions": [ex("absent", "Exists")]}]),
                false,
                "Exists miss",
            ),
            (
                json!([{"matchExpressions": [ex("absent", "DoesNotExist")]}]),
                true,
                "DoesNotExist",
            ),
            (
                json!([{"matchExpressions": [ex("gen", "DoesNotExist")]}]),
                false,
                "DoesNotExist miss",
            ),
            (
                json!([{"matchExpressions": [e("gen", "Gt", json!(["4"]))]}]),
                true,
                "Gt",
            ),
            (
                json!([{"matchExpressions": [e("gen", "Gt", json!(["5"]))]}]),
                false,
                "Gt is strict",
            ),
            (
                json!([{"matchExpressions": [e("gen", "Lt", json!(["6"]))]}]),
                true,
                "Lt",
            ),
            (
                json!([{"matchExpressions": [e("gen", "Lt", json!(["+6"]))]}]),
                true,
                "Lt with a sign, as ParseInt",
            ),
            (
                json!([{"matchExpressions": [e("weird", "Gt", json!(["1"]))]}]),
                false,
                "Gt on a non-integer label",
            ),
            (
                json!([{"matchExpressions": [e("absent", "Lt", json!(["1"]))]}]),
                false,
                "Lt on a missing label",
            ),
            // parse errors: the term fails, another term can still match
            (
                json!([{"matchExpressions": [e("gen", "Gt", json!(["x"]))]}]),
                false,
                "Gt with a non-integer value",
            ),
            (
                json!([{"matchExpressions": [e("gen", "Gt", json!(["1", "2"]))]}]),
                false,
                "Gt with two values",
            ),
            (
                json!([{"matchExpressions": [e("gen", "In", json!([]))]}]),
                false,
                "In without values",
            ),
            (
                json!([{"matchExpressions": [e("gen", "Exists", json!(["5"]))]}]),
                false,
                "Exists with values",
            ),
            (
                json!([{"matchExpressions": [e("gen", "Like", json!(["5"]))]}]),
                false,
                "unknown operator",
            ),
            (
                json!([
                    {"matchExpressions": [e("gen", "Like", json!(["5"]))]},
                    {"matchExpressions": [e("kubernetes.io/os", "In", json!(["windows"]))]},
                ]),
                true,
                "terms are ORed past a malformed one",
            ),
            // ANDed within a term
            (
                json!([{"matchExpressions": [
                    e("kubernetes.io/os", "In", json!(["windows"])),
                    e("node.kubernetes.io/windows-build", "In", json!(["10.0.17763"])),
                ]}]),
                false,
                "expressions are ANDed",
            ),
            (
                json!([
                    {"matchExpressions": [e("kubernetes.io/os", "In", json!(["linux"]))]},
                    {"matchExpressions": [e("node.kubernetes.io/windows-build", "In", json!(["10.0.17763", "10.0.20348"]))]},
                ]),
                true,
                "terms are ORed",
            ),
            // matchFields on metadata.name
            (
                json!([{"matchFields": [e("metadata.name", "In", json!(["node-a"]))]}]),
                true,
                "matchFields In",
            ),
            (
                json!([{"matchFields": [e("metadata.name", "In", json!(["node-b"]))]}]),
                false,
                "matchFields In miss",
            ),
            (
                json!([{"matchFields": [e("metadata.name", "NotIn", json!(["node-b"]))]}]),
                true,
                "matchFields NotIn",
            ),
            (
                json!([{"matchFields": [e("metadata.name", "In", json!(["node-a", "node-b"]))]}]),
                false,
                "matchFields needs one value",
            ),
            (
                json!([{"matchFields": [e("metadata.name", "Exists", json!([]))]}]),
                false,
                "matchFields only In/NotIn",
            ),
            (
                json!([{
                    "matchExpressions": [e("kubernetes.io/os", "In", json!(["windows"]))],
                    "matchFields": [e("metadata.name", "In", json!(["node-b"]))],
                }]),
                false,
                "expressions and fields are ANDed",
            ),
        ];
        for (terms, want, why) in cases {
            assert_eq!(
                sel(affinity(terms.clone()), &l, Some("node-a"), "node-a"),
                want,
                "{why}: {terms}"
            );
        }
        // nodeSelector and affinity must both hold
        let mut both = affinity(json!([{"matchExpressions": [ex("gen", "Exists")]}]));
        both["nodeSelector"] = json!({"kubernetes.io/os": "linux"});
        assert!(!sel(both, &l, None, "n"));
        // preferred terms are not filters
        let pref = json!({"affinity": {"nodeAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 1, "preference": {"matchExpressions": [ex("absent", "Exists")]}}]}}});
        assert!(sel(pref, &l, None, "n"));
    }

    fn group(taints: &[&str], nodes: &[&str]) -> NodeGroup {
        NodeGroup {
            os: NodeOs::Windows,
            build: Some(crate::windows::WS2022),
            revision: None,
            taints: taints.iter().map(|t| taint(t)).collect(),
            labels: labels(&[("kubernetes.io/os", "windows"), ("pool", "win22")]),
            runtime: Some("containerd://1.7.20".into()),
            nodes: nodes
                .iter()
                .map(|n| (n.to_string(), Some(n.to_string())))
                .collect(),
        }
    }

    #[test]
    fn fit_counts_selected_nodes_and_checks_taints() {
        let g = group(&["os=windows:NoSchedule"], &["w1", "w2", "w3"]);
        let plain = json!({"containers": [{"name": "a", "image": "x"}]});
        assert_eq!(
            fit(&plain, &g, None),
            Fit::Untolerated(taint("os=windows:NoSchedule"))
        );
        let tolerant = json!({"tolerations": [{"key": "os", "operator": "Equal", "value": "windows", "effect": "NoSchedule"}]});
        assert_eq!(fit(&tolerant, &g, None), Fit::Fits { nodes: 3 });
        let mut one = tolerant.clone();
        one["nodeSelector"] = json!({"kubernetes.io/hostname": "w2"});
        assert_eq!(fit(&one, &g, None), Fit::Fits { nodes: 1 });
        let mut none = tolerant.clone();
        none["nodeSelector"] = json!({"kubernetes.io/hostname": "elsewhere"});
        assert_eq!(fit(&none, &g, None), Fit::NotSelected);
        let mut fields = tolerant.clone();
        fields["affinity"] = affinity(json!([{"matchFields": [
            {"key": "metadata.name", "operator": "NotIn", "values": ["w1"]}]}]))["affinity"]
            .clone();
        assert_eq!(fit(&fields, &g, None), Fit::Fits { nodes: 2 });
        // selection is reported before taints
        let linux = json!({"nodeSelector": {"kubernetes.io/os": "linux"}});
        assert_eq!(fit(&linux, &g, None), Fit::NotSelected);
        // an empty group fits nothing
        assert_eq!(fit(&tolerant, &group(&[], &[]), None), Fit::NotSelected);
    }

    /// `spec.nodeName`: only the named node, and only NoExecute taints (the kubelet's
    /// admission, pkg/kubelet/lifecycle/predicate.go; no scheduler runs).
    #[test]
    fn node_name_bypasses_the_scheduler() {
        let g = group(&["os=windows:NoSchedule"], &["w1", "w2", "w3"]);
        let named = json!({"nodeName": "w2", "containers": []});
        assert_eq!(fit(&named, &g, None), Fit::Fits { nodes: 1 });
        let elsewhere = json!({"nodeName": "l1", "containers": []});
        assert_eq!(fit(&elsewhere, &g, None), Fit::NotSelected);
        // The kubelet still checks the selectors against its node.
        let linux = json!({"nodeName": "w2", "nodeSelector": {"kubernetes.io/os": "linux"}});
        assert_eq!(fit(&linux, &g, None), Fit::NotSelected);
        // A NoExecute taint is refused at admission.
        let ne = group(&["os=windows:NoExecute"], &["w1"]);
        let on_ne = json!({"nodeName": "w1"});
        assert_eq!(
            fit(&on_ne, &ne, None),
            Fit::Untolerated(taint("os=windows:NoExecute"))
        );
        // An empty nodeName is no name.
        let empty = json!({"nodeName": ""});
        assert_eq!(
            fit(&empty, &g, None),
            Fit::Untolerated(taint("os=windows:NoSchedule"))
        );
    }

    /// A key-less toleration with an operator other than Exists: the API server refuses the
    /// pod, so it counts for nothing (ToleratesTaint alone would match by value).
    #[test]
    fn keyless_equal_toleration_tolerates_nothing() {
        let g = group(&["os=windows:NoSchedule"], &["w1"]);
        for op in [json!("Equal"), json!(null)] {
            let spec = json!({"tolerations": [{"operator": op, "value": "windows"}]});
            assert_eq!(pod_tolerations(&spec), vec![], "{op}");
            assert_eq!(
                fit(&spec, &g, None),
                Fit::Untolerated(taint("os=windows:NoSchedule"))
            );
        }
        let exists = json!({"tolerations": [{"operator": "Exists"}]});
        assert_eq!(fit(&exists, &g, None), Fit::Fits { nodes: 1 });
    }

    #[test]
    fn runtime_class_scheduling_is_merged() {
        let g = group(&["os=windows:NoSchedule"], &["w1"]);
        let rc = RuntimeClassFacts {
            name: "hyperv".into(),
            handler: "runhcs-wcow-hypervisor".into(),
            node_selector: labels(&[("kubernetes.io/os", "windows")]),
            tolerations: vec![tol(
                json!({"key": "os", "operator": "Equal", "value": "windows", "effect": "NoSchedule"}),
            )],
            isolation: Some(crate::windows::Isolation::Hyperv),
            hyperv_guest_build: None,
            api_version: "node.k8s.io/v1".into(),
        };
        let plain = json!({"runtimeClassName": "hyperv", "containers": []});
        assert_eq!(fit(&plain, &g, Some(&rc)), Fit::Fits { nodes: 1 });
        let mut other = rc.clone();
        other.node_selector = labels(&[("pool", "win19")]);
        assert_eq!(fit(&plain, &g, Some(&other)), Fit::NotSelected);
    }
}
