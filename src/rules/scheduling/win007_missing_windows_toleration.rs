//! WIN007 `missing-windows-toleration`.

use crate::model::Eval;
use crate::model::classify::{self, Os};
use crate::model::labels::OS_LABELS;
use crate::model::meta::{Mutation, Reads, Recorded, RuleOs};
use crate::model::placement;
use crate::model::schedule;
use crate::model::workload::PodSite;
use crate::model::{Finding, Fix, FixSafety, RuleMeta, Severity, Taint, ops};
use crate::rules::Rule;
use crate::rules::scheduling::common::is_daemonset;
use crate::rules::scheduling::win001_missing_os_selector::windows_only_selector;
use serde_json::Value;

/// WIN007 in the registry.
pub const RULE: Rule = Rule {
    meta: &WIN007,
    check: missing_windows_toleration,
};

pub static WIN007: RuleMeta = RuleMeta {
    id: "WIN007",
    name: "missing-windows-toleration",
    severity: Severity::Error,
    summary: "Windows pod does not tolerate the taint of the cluster's Windows nodes",
    docs: r#"## What it does
When the target says Windows nodes are tainted (`windowsTaints`, default `os=windows:NoSchedule`, the
convention of the Kubernetes Windows user guide), checks that the pod or its RuntimeClass tolerates
every such taint (an `operator: Exists` toleration with an empty key tolerates everything; an
empty key with any other operator tolerates nothing: the API server refuses the pod,
`ValidateTolerations`). A pod that names its node (`spec.nodeName`) bypasses the scheduler, so
only `NoExecute` taints keep it off that node (the kubelet's admission,
`pkg/kubelet/lifecycle/predicate.go`, looks at no other).
The default taint is an assumption (neither configured nor read from the cluster): then the
finding is a warning that says so. `--platform aks|eks|gke|generic` names the platform's taints.

## Why is this bad?
A pod pinned to Windows (an OS selector or affinity) that does not tolerate the taint of the only
nodes that can run it stays Pending. A pod with no OS pin is not Pending: the scheduler places it
on a node without the taint, a Linux node, where its Windows containers cannot run (WIN001 asks
for the pin; the message says where it lands).
A DaemonSet's controller creates no pod at all for a node whose taints its template does not
tolerate (`NodeShouldRunDaemonPod`), so nothing is Pending: the DaemonSet just never runs on the
Windows nodes. That is a warning, and the webhook does not count the toleration it would add at
pod creation for a DaemonSet (its pods are placed before the webhook sees them).

## Example
```yaml
spec:
  nodeSelector: {kubernetes.io/os: windows}
  containers:
  - name: web
    image: mcr.microsoft.com/windows/servercore:ltsc2022
```

## Fix
Safe: add `tolerations: [{key: os, operator: Equal, value: windows, effect: NoSchedule}]` (one per
configured taint). The webhook applies it as mutation M3.

## Severity
`error` where the taint is configured (`windowsTaints`, `--platform`) or read from the cluster;
`warning` where winlint assumed it (the user guide's convention), where the cluster shows no
Windows node yet, and for a DaemonSet (no pod of it is Pending). A toleration without key that
the API server refuses is an `error` whatever the nodes are.
"#,
    fix: Some(FixSafety::Safe),
    source: "K-UG",
    applies: "all",
    os: RuleOs::Windows,
    default_on: true,
    reads: Reads::PLACEMENT,
    mutation: Mutation::placing(Recorded::Tolerations),
};

pub(crate) fn missing_windows_toleration(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    let p = eval.placement(site);
    let tols = placement::tolerations(site, eval.context);
    let (missing, whose): (Vec<&Taint>, String) = if p.observed() {
        let selected = p.windows_selected();
        if selected.is_empty() || selected.iter().any(|(_, f)| f.fits()) {
            // Selects no Windows node (WIN010), or can land on one.
            return Vec::new();
        }
        // The group that needs the fewest tolerations (the largest one on a tie).
        let (_, missing) = selected
            .iter()
            .map(|(g, _)| (*g, placement::untolerated(g, site.spec, &tols)))
            .min_by_key(|(g, m)| (m.len(), std::cmp::Reverse(g.count())))
            .expect("a selected group");
        let n = selected.iter().map(|(g, _)| g.count()).sum::<usize>();
        // Every build among them, not only the chosen group's.
        let mut builds: Vec<_> = selected.iter().filter_map(|(g, _)| g.build).collect();
        builds.sort();
        builds.dedup();
        let builds: String = builds.iter().map(|b| format!(", {b}")).collect();
        let whose = format!(
            "The Windows nodes this pod can select ({n} node{}{builds}) are tainted",
            if n == 1 { "" } else { "s" },
        );
        (missing, whose)
    } else {
        let missing =
            schedule::untolerated(eval.target.windows_node_taints(), site.spec, &tols).collect();
        (missing, "Windows nodes are tainted".to_string())
    };
    if missing.is_empty() {
        return Vec::new();
    }
    let new_tols: Vec<Value> = missing.iter().map(|t| t.toleration()).collect();
    let refused = keyless_refused(site);
    let fix_ops = if refused {
        // The key-less entry makes the API server refuse the pod: the fix replaces it.
        let mut kept: Vec<Value> = site.spec["tolerations"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|t| {
                schedule::TolerationRef::from_json(t)
                    .is_none_or(|t| !schedule::keyless_not_exists(&t))
            })
            .cloned()
            .collect();
        kept.extend(new_tols.iter().cloned());
        vec![ops::replace(&site.ptr("/tolerations"), Value::Array(kept))]
    } else if site.get("/tolerations").is_some_and(Value::is_array) {
        new_tols
            .iter()
            .map(|t| ops::add(&site.ptr("/tolerations/-"), t.clone()))
            .collect()
    } else {
        vec![ops::add(&site.ptr("/tolerations"), Value::Array(new_tols))]
    };
    let names: Vec<String> = missing.iter().map(|t| t.to_string()).collect();
    let ptr = if site.get("/tolerations").is_some() {
        site.ptr("/tolerations")
    } else {
        site.spec_ptr.clone()
    };
    let them = if names.len() == 1 { "it" } else { "them" };
    let mut msg = if refused {
        format!(
            "{whose} {} but the pod does not tolerate {them}: its toleration without key has an operator other than Exists, which the API server refuses (\"operator must be Exists when `key` is empty\"), so the pod is not created. Replace it with a toleration for {}",
            names.join(", "),
            names.join(", "),
        )
    } else if is_daemonset(site) {
        format!(
            "the DaemonSet creates no pod on Windows nodes: {whose} {} and its pods do not tolerate {them}. Add a toleration",
            names.join(", "),
        )
    } else if let Some(node) = schedule::node_name(site.spec) {
        // No scheduler: the kubelet's admission refuses it (predicate.go, NoExecute only).
        format!(
            "{whose} {} but the pod does not tolerate {them}; it names its node (spec.nodeName: {node}), so the kubelet there rejects it (UntoleratedTaint). Add a toleration",
            names.join(", "),
        )
    } else if let Some(elsewhere) = lands_elsewhere(site, eval) {
        // Not pinned to Windows: the scheduler does not leave it Pending, it places it where
        // no taint keeps it off (issue 26).
        format!(
            "{whose} {} but the pod does not tolerate {them}; it has no OS pin, so the scheduler places it on {elsewhere} instead, where its Windows containers cannot run (WIN001 asks for the OS pin). Add a toleration",
            names.join(", "),
        )
    } else {
        format!(
            "{whose} {} but the pod does not tolerate {them}; it will stay Pending. Add a toleration",
            names.join(", "),
        )
    };
    let near: Vec<String> = missing
        .iter()
        .filter_map(|t| near_miss(&schedule::pod_tolerations(site.spec), t))
        .collect();
    if !near.is_empty() {
        msg.push_str(&format!(" ({})", near.join("; ")));
    }
    let mut f = Finding::new(&WIN007, ptr, msg).with_fix(Fix {
        safety: FixSafety::Safe,
        description: if refused {
            format!(
                "replace the toleration without key by one for {}",
                names.join(", ")
            )
        } else {
            format!("add toleration for {}", names.join(", "))
        },
        ops: fix_ops,
    });
    if p.facts == placement::NodeFacts::Configured && eval.target.taints_assumed() {
        // Neither configured nor observed: an assumption (the user guide's convention), which
        // never makes an error.
        f.message.push_str(
            "; winlint assumed this taint, the Kubernetes user guide's convention (AKS and EKS add none): name the platform (--platform aks|eks|gke|generic), the taints (--windows-taint) or read the nodes (--cluster)",
        );
        f = f.severity(Severity::Warning);
    }
    if let Some(note) = p.unobserved_note() {
        f.message.push_str(note);
        f = f.severity(Severity::Warning);
    }
    if is_daemonset(site) {
        // No pod of it is ever Pending: its controller creates none for those nodes.
        f = f.severity(Severity::Warning);
    }
    if refused {
        // Refused whatever the nodes are (ValidateTolerations): no assumption is involved.
        f = f.severity(Severity::Error);
    }
    vec![f]
}

/// Where a pod that no Windows node takes lands instead, when nothing pins it to Windows: the
/// observed nodes that are not Windows it fits, or offline (a mixed cluster) a Linux node. `None`
/// for a pod pinned to Windows (an OS selector or affinity, a label only Windows nodes carry),
/// which stays Pending.
fn lands_elsewhere(site: &PodSite, eval: &Eval) -> Option<String> {
    let p = eval.placement(site);
    if p.observed() {
        let others = p.other_fitting();
        let n: usize = others.iter().map(|g| g.count()).sum();
        return (n > 0).then(|| {
            format!(
                "one of {n} node{} that {} not Windows ({})",
                if n == 1 { "" } else { "s" },
                if n == 1 { "is" } else { "are" },
                others[0].describe()
            )
        });
    }
    // WIN001's reading: a value in the wrong case pins the pod to no node at all (WIN010).
    let pinned = classify::has_os_pin(site, eval.context, Os::Windows)
        || OS_LABELS.iter().any(|k| {
            site.node_selector(k)
                .is_some_and(|v| v.eq_ignore_ascii_case("windows"))
        })
        || windows_only_selector(site, eval.context).is_some();
    (!pinned).then(|| "a Linux node".to_string())
}

/// Whether the pod has a toleration without key whose operator is not `Exists`: the API server
/// refuses the pod ([`schedule::keyless_not_exists`]).
fn keyless_refused(site: &PodSite) -> bool {
    site.spec["tolerations"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(schedule::TolerationRef::from_json)
        .any(|t| schedule::keyless_not_exists(&t))
}

/// OS keys a toleration meant for a Windows taint is often written with.
pub(crate) const OS_TAINT_KEYS: &[&str] = &[
    "os",
    "node.kubernetes.io/os",
    "kubernetes.io/os",
    "beta.kubernetes.io/os",
];

/// Why the pod's toleration that was most likely meant for `taint` does not tolerate it: a key,
/// value or effect that differs only by case, another OS key, another effect.
pub(crate) fn near_miss(tolerations: &[schedule::TolerationRef], taint: &Taint) -> Option<String> {
    let show = |t: &schedule::TolerationRef| {
        let mut parts = vec![format!("key: {}", t.key)];
        if !t.operator.is_empty() {
            parts.push(format!("operator: {}", t.operator));
        }
        if !t.value.is_empty() {
            parts.push(format!("value: {}", t.value));
        }
        if !t.effect.is_empty() {
            parts.push(format!("effect: {}", t.effect));
        }
        format!("{{{}}}", parts.join(", "))
    };
    let value = taint.value.as_deref().unwrap_or("");
    let os_key = |k: &str| OS_TAINT_KEYS.iter().any(|o| o.eq_ignore_ascii_case(k));
    for t in tolerations.iter().filter(|t| !t.key.is_empty()) {
        let why = if t.key != taint.key && t.key.eq_ignore_ascii_case(&taint.key) {
            format!(
                "its key {} is not the taint's {}: keys are case-sensitive",
                t.key, taint.key
            )
        } else if t.key != taint.key && os_key(t.key) && os_key(&taint.key) {
            format!("its key {} is not the taint's key {}", t.key, taint.key)
        } else if t.key != taint.key && !value.is_empty() && t.key.eq_ignore_ascii_case(value) {
            format!(
                "its key {} is the taint's value: write key: {}, value: {value}",
                t.key, taint.key
            )
        } else if t.key != taint.key {
            continue;
        } else if !t.effect.is_empty() && t.effect != taint.effect {
            format!(
                "its effect {} does not tolerate a {} taint (leave effect out to tolerate every effect)",
                t.effect, taint.effect
            )
        } else if matches!(t.operator, "" | "Equal") && t.value != value {
            if t.value.eq_ignore_ascii_case(value) {
                format!(
                    "its value {} is not the taint's {value}: values are case-sensitive",
                    t.value
                )
            } else {
                format!("its value {} is not the taint's {value}", t.value)
            }
        } else if !matches!(t.operator, "" | "Equal" | "Exists") {
            format!(
                "its operator {} is neither Equal nor Exists (operators are case-sensitive)",
                t.operator
            )
        } else {
            continue;
        };
        return Some(format!("the toleration {} does not match: {why}", show(t)));
    }
    None
}

#[cfg(test)]
mod tests {

    use crate::model::Severity;
    use crate::rules::scheduling::common::tests::GKE;
    use crate::rules::scheduling::common::tests::linux;
    use crate::rules::testutil::{
        assert_says, cfg, findings, group, hits, ids, observed, only, set, unset, winok,
    };
    use serde_json::json;

    #[test]
    fn an_unpinned_pod_lands_on_linux_instead_of_pending() {
        // Issue 26: no OS pin, no toleration: the scheduler places it on a Linux node.
        let bare = unset(unset(winok(), "/spec/nodeSelector"), "/spec/tolerations");
        let f = &only(&bare, &cfg(), "WIN007")[0];
        assert!(!f.message.contains("stay Pending"), "{}", f.message);
        assert_says(f, "places it on a Linux node instead");
        // Pinned by the OS selector: nowhere else to go, Pending.
        let pinned = unset(winok(), "/spec/tolerations");
        assert_says(&only(&pinned, &cfg(), "WIN007")[0], "stay Pending");
        // Observed nodes: it lands on the Linux group it fits.
        let c = crate::rules::scheduling::common::tests::windows_and_linux("os=windows:NoSchedule");
        let f = &only(&bare, &c, "WIN007")[0];
        assert_says(
            f,
            "places it on one of 3 nodes that are not Windows (Linux nodes, untainted)",
        );
        assert_says(&only(&pinned, &c, "WIN007")[0], "stay Pending");
    }

    #[test]
    fn win007_tolerations() {
        let pod = unset(winok(), "/spec/tolerations");
        let fs = findings(&pod, &cfg());
        let f = fs.iter().find(|f| f.rule.id == "WIN007").expect("WIN007");
        let mut fixed = pod.clone();
        json_patch::patch(&mut fixed, &f.fix.as_ref().unwrap().ops).unwrap();
        assert!(ids(&fixed, &cfg()).is_empty());
        // tolerate-everything
        let all = set(
            unset(winok(), "/spec/tolerations"),
            "/spec/tolerations",
            json!([{"operator":"Exists"}]),
        );
        assert!(!ids(&all, &cfg()).contains(&"WIN007"));
        // no taints configured
        let mut c = cfg();
        c.target.windows_taints.clear();
        assert!(!ids(&pod, &c).contains(&"WIN007"));
    }

    #[test]
    fn win007_asks_the_taints_of_the_nodes_the_pod_can_select() {
        // GKE's taint, not the configured default: the toleration to add is GKE's.
        let c = observed(
            cfg(),
            vec![group("w", "windows", "10.0.20348", &[GKE], &[], 2), linux()],
        );
        let f = only(&winok(), &c, "WIN007");
        assert_eq!(f.len(), 1, "{f:?}");
        assert!(f[0].message.starts_with("The Windows nodes this pod can select (2 nodes, 10.0.20348) are tainted node.kubernetes.io/os=windows:NoSchedule"), "{}", f[0].message);
        let fixed = crate::rules::testutil::apply(&winok(), &f[0]);
        assert!(only(&fixed, &c, "WIN007").is_empty());
        // Groups of several builds: the message names them all.
        let c2 = observed(
            cfg(),
            vec![
                group("w", "windows", "10.0.20348", &[GKE], &[], 2),
                group("v", "windows", "10.0.17763", &[GKE], &[], 1),
                linux(),
            ],
        );
        let f = only(&winok(), &c2, "WIN007");
        assert!(
            f[0].message.starts_with(
                "The Windows nodes this pod can select (3 nodes, 10.0.17763, 10.0.20348) are tainted"
            ),
            "{}",
            f[0].message
        );
        // Untainted Windows nodes: nothing to tolerate, whatever the configured default says.
        let c = observed(
            cfg(),
            vec![group("w", "windows", "10.0.20348", &[], &[], 2), linux()],
        );
        assert!(only(&unset(winok(), "/spec/tolerations"), &c, "WIN007").is_empty());
        // One tainted and one untainted Windows group: the pod can land on the second.
        let c = observed(
            cfg(),
            vec![
                group("a", "windows", "10.0.20348", &[GKE], &[], 2),
                group("b", "windows", "10.0.20348", &[], &[("pool", "b")], 1),
                linux(),
            ],
        );
        assert!(only(&unset(winok(), "/spec/tolerations"), &c, "WIN007").is_empty());
        // …unless its selector picks the tainted one only.
        let pod = set(
            unset(winok(), "/spec/tolerations"),
            "/spec/nodeSelector/pool",
            json!("a"),
        );
        assert!(
            only(&pod, &c, "WIN007").is_empty(),
            "pool=a selects no node: WIN010's"
        );
        let c = observed(
            cfg(),
            vec![
                group("a", "windows", "10.0.20348", &[GKE], &[("pool", "a")], 2),
                group("b", "windows", "10.0.20348", &[], &[("pool", "b")], 1),
            ],
        );
        assert_eq!(only(&pod, &c, "WIN007").len(), 1);
    }

    #[test]
    fn no_windows_node_observed_means_warnings_not_denials() {
        let c = observed(cfg(), vec![linux()]);
        let pod = unset(winok(), "/spec/tolerations");
        let f = only(&pod, &c, "WIN007");
        assert_eq!(f[0].severity, Severity::Warning);
        assert_says(&f[0], "no Windows node is in the cluster yet");
        let old = set(
            winok(),
            "/spec/containers/0/image",
            json!("mcr.microsoft.com/windows/servercore:ltsc2019"),
        );
        assert_eq!(hits(&old, &c, "WIN502")[0].0, Severity::Warning);
    }
}
