//! WIN603 `os-unpinned-daemonset`.

use crate::model::Eval;
use crate::model::classify::{self, Os};
use crate::model::meta::{Area, Mutation, Reads, RuleOs};
use crate::model::placement::{self, NodeFacts};
use crate::model::schedule::{self, Fit};
use crate::model::workload::PodSite;
use crate::model::{Finding, RuleMeta, Severity};
use crate::rules::Rule;
use crate::rules::images::image_registry;
use serde_json::Value;

/// WIN603 in the registry.
pub const RULE: Rule = Rule {
    meta: &WIN603,
    check: os_unpinned_daemonset,
};

pub static WIN603: RuleMeta = RuleMeta {
    id: "WIN603",
    name: "os-unpinned-daemonset",
    severity: Severity::Warning,
    summary: "DaemonSet without an OS pin whose pods the scheduler's filters let onto Windows nodes",
    docs: r#"## What it does
Finds DaemonSets of Linux (or OS-unknown) pods whose template has no OS pin (no
`kubernetes.io/os` node selector, no required node affinity on it, no RuntimeClass that supplies
one) and whose pods the DaemonSet controller would create on a Windows node, by the scheduler's own
filters (`nodeSelector`, required node affinity terms ORed and their expressions ANDed,
NoSchedule/NoExecute taints and tolerations):

* with the cluster's nodes known (`winlint serve`, `--cluster`, `audit`): an observed Windows node
  it fits;
* offline, the Windows nodes of the configured target, labelled as the kubelet and the platform
  label them (`kubernetes.io/os=windows`, `kubernetes.io/arch=amd64`, the build label, AKS's
  `kubernetes.azure.com/os-sku`) and tainted as the platform taints them (`--platform gke`:
  `node.kubernetes.io/os=windows:NoSchedule`, `generic`: `os=windows:NoSchedule`, `aks`/`eks`:
  none, or `--windows-taint`). A selector Windows nodes do not match (`kubernetes.io/arch: arm64`,
  a node pool's label) or a taint it does not tolerate keeps it off them: nothing is reported.
  When the taints are only winlint's assumption (no platform, no `--windows-taint`, no cluster),
  the finding says that untainted Windows nodes (AKS, EKS) take its pods.

The automatic tolerations the DaemonSet controller adds to its pods (`not-ready`,
`unreachable`, `disk-pressure`, `memory-pressure`, `pid-pressure`, `unschedulable`, and
`network-unavailable` for host-network pods: `AddOrUpdateDaemonPodTolerations`) are for node
conditions only; none of them tolerates a Windows taint.

A Windows DaemonSet without an OS pin is reported by WIN001.

WIN011 (`linux-pod-can-land-on-windows`) reports the other pod-bearing kinds, and only when their
images have no Windows variant; it leaves every DaemonSet (and every pod a DaemonSet owns) to this
rule, so one unpinned agent is reported once.

## Why is this bad?
A DaemonSet targets every node. In a mixed cluster its Linux pods land on untainted Windows nodes too
and fail with `ErrImagePull` ("no matching manifest for windows/amd64"), or worse, a multi-OS image
resolves to a Windows variant that fails later.

## Example
```yaml
kind: DaemonSet
spec:
  template:
    spec:
      containers:
      - name: fluent-bit
        image: fluent/fluent-bit:2.2
```

## Fix
Add `nodeSelector: {kubernetes.io/os: linux}` (or `windows` for a Windows agent). A taint on the
Windows nodes also keeps it off them, but only on clusters that have that taint.
"#,
    fix: None,
    source: "K-UG",
    applies: "all",
    os: RuleOs::Any,
    default_on: true,
    // The images decide what the message says happens on a Windows node.
    reads: Reads::PLACEMENT.and(Reads::of(&[Area::Containers])),
    mutation: Mutation::DEFAULT,
};

pub(crate) fn os_unpinned_daemonset(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    // A Windows DaemonSet without an OS pin is WIN001's; this rule is about the Linux agents.
    if site.kind != "DaemonSet"
        || eval.class.is_windows()
        || classify::has_os_pin(site, eval.context, Os::Linux)
        || classify::has_os_pin(site, eval.context, Os::Windows)
    {
        return Vec::new();
    }
    // The DaemonSet controller creates a pod for a node only where the template's nodeSelector,
    // required node affinity and tolerations fit it (`NodeShouldRunDaemonPod`,
    // pkg/controller/daemon): the scheduler's predicate. The tolerations it adds itself
    // (`AddOrUpdateDaemonPodTolerations`, pkg/controller/daemon/util) are for the node
    // condition taints only (not-ready, unreachable, *-pressure, unschedulable,
    // network-unavailable), which node groups leave out; never for a platform's Windows taint.
    let Some(where_) = windows_nodes_it_runs_on(site, eval) else {
        return Vec::new();
    };
    let ptr = if site.spec.get("nodeSelector").is_some_and(Value::is_object) {
        site.ptr("/nodeSelector")
    } else {
        site.spec_ptr.clone()
    };
    vec![Finding::new(
        &WIN603,
        ptr,
        format!(
            "DaemonSet has no OS node selector, so {where_}, {}; add nodeSelector {}: linux (or windows)",
            consequence(eval),
            eval.target.os_label_key()
        ),
    )]
}

/// What happens to its pods on a Windows node: a Linux-only image (registry, or known by name)
/// fails to pull; another image pulls only if it has a Windows variant of the node's build.
fn consequence(eval: &Eval) -> String {
    let linux_only: Vec<&str> = eval
        .images
        .iter()
        .filter(|(c, _)| c.list != "ephemeralContainers")
        .filter(|(c, info)| image_registry::linux_only(eval, c, info).is_some())
        .filter_map(|(c, _)| c.image())
        .collect();
    match linux_only.first() {
        Some(image) => format!(
            "where {image} (Linux-only) fails to pull (\"no matching manifest for windows/amd64\") and its pods sit in ImagePullBackOff"
        ),
        None => "where its pods run only if every image has a Windows variant of the node's build (else the pull fails: \"no matching manifest for windows/amd64\", ImagePullBackOff)".to_string(),
    }
}

/// Which Windows nodes of the target the DaemonSet's pods land on, said for the message, or
/// `None` when its selectors or the taints it does not tolerate keep it off all of them: the
/// observed Windows nodes it fits; offline, the Windows nodes the configured target stands for
/// (their labels: OS, `kubernetes.io/arch=amd64`, the build, AKS's OS SKU; their taints). When
/// the taints are only winlint's assumption ([`crate::model::Target::taints_assumed`]), a
/// DaemonSet its selectors send there is reported with the condition that decides it.
fn windows_nodes_it_runs_on(site: &PodSite, eval: &Eval) -> Option<String> {
    let p = eval.placement(site);
    if let Some(landing) = placement::windows_landing(site, eval.target, eval.context, p) {
        return Some(format!("its pods run on {}", landing.describe()));
    }
    if p.facts != NodeFacts::Configured || !eval.target.taints_assumed() {
        return None;
    }
    // Assumed taints: the selectors decide whether it can reach a Windows node at all; the
    // taints are not known, so the message names the condition.
    let rc = placement::runtime_class(site, eval.context);
    let selected = placement::configured_windows_nodes(eval.target)
        .iter()
        .any(|g| schedule::fit(site.spec, g, rc) != Fit::NotSelected);
    selected.then(|| {
        "its pods run on every Windows node that has no taint it does not tolerate (AKS and EKS taint none; winlint assumed os=windows:NoSchedule: name the platform with --platform, or read the nodes with --cluster)".to_string()
    })
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use crate::config::Config;
    use crate::model::platform::Platform;
    use crate::rules::scheduling::common::tests::{GKE, linux};
    use crate::rules::testutil::{assert_says, cfg, group, observed, only, set};

    fn ds() -> Value {
        json!({"apiVersion":"apps/v1","kind":"DaemonSet","metadata":{"name":"agent"},
            "spec":{"selector":{"matchLabels":{"app":"a"}},"template":{
                "metadata":{"labels":{"app":"a"}},
                "spec":{"containers":[{"name":"c","image":"fluent/fluent-bit:2.2"}]}}}})
    }

    fn on(p: Platform) -> Config {
        let mut c = cfg();
        c.target.set_platform(p);
        c
    }

    fn win603(obj: &Value, c: &Config) -> Vec<crate::model::Finding> {
        only(obj, c, "WIN603")
    }

    fn with(obj: Value, ptr: &str, v: Value) -> Value {
        set(obj, &format!("/spec/template/spec{ptr}"), v)
    }

    #[test]
    fn untainted_platforms_take_its_pods() {
        for p in [Platform::Aks, Platform::Eks] {
            let f = win603(&ds(), &on(p));
            assert_eq!(f.len(), 1, "{p}");
            assert_says(&f[0], "untainted");
            assert_says(&f[0], "ImagePullBackOff");
            assert_says(&f[0], "only if every image has a Windows variant");
        }
        // A Linux-only image: the pull fails for certain.
        let nginx = with(ds(), "/containers/0/image", json!("nginx:1.27"));
        assert_says(
            &win603(&nginx, &on(Platform::Aks))[0],
            "nginx:1.27 (Linux-only) fails to pull",
        );
    }

    /// GKE's and the user guide's taint keep an intolerant DaemonSet off the Windows nodes;
    /// a toleration of that taint (or of every taint) lets it on.
    #[test]
    fn a_platform_taint_it_does_not_tolerate_keeps_it_off() {
        for p in [Platform::Gke, Platform::Generic] {
            assert!(win603(&ds(), &on(p)).is_empty(), "{p}");
            let all = with(ds(), "/tolerations", json!([{"operator": "Exists"}]));
            assert_says(&win603(&all, &on(p))[0], "it tolerates");
        }
        let gke_tol = with(
            ds(),
            "/tolerations",
            json!([{"key": "node.kubernetes.io/os", "operator": "Exists", "effect": "NoSchedule"}]),
        );
        let f = win603(&gke_tol, &on(Platform::Gke));
        assert_eq!(f.len(), 1);
        assert_says(&f[0], "node.kubernetes.io/os=windows:NoSchedule");
        // The toleration of the user guide's taint is not GKE's.
        let guide_tol = with(
            ds(),
            "/tolerations",
            json!([{"key": "os", "operator": "Equal", "value": "windows", "effect": "NoSchedule"}]),
        );
        assert!(win603(&guide_tol, &on(Platform::Gke)).is_empty());
        assert_eq!(win603(&guide_tol, &on(Platform::Generic)).len(), 1);
    }

    /// Windows nodes are amd64: an arm64 pin keeps the DaemonSet off them; an amd64 one does not.
    #[test]
    fn selectors_windows_nodes_do_not_match_keep_it_off() {
        let arm = with(
            ds(),
            "/nodeSelector",
            json!({"kubernetes.io/arch": "arm64"}),
        );
        let amd = with(
            ds(),
            "/nodeSelector",
            json!({"kubernetes.io/arch": "amd64"}),
        );
        for c in [on(Platform::Aks), cfg()] {
            assert!(win603(&arm, &c).is_empty());
            assert_eq!(win603(&amd, &c).len(), 1);
        }
        let arm_affinity = with(
            ds(),
            "/affinity",
            json!({"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{
                "nodeSelectorTerms":[{"matchExpressions":[
                    {"key":"kubernetes.io/arch","operator":"In","values":["arm64"]}]}]}}}),
        );
        assert!(win603(&arm_affinity, &on(Platform::Aks)).is_empty());
        // Terms are ORed: one a Windows node matches lets it on.
        let ored = with(
            ds(),
            "/affinity",
            json!({"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{
                "nodeSelectorTerms":[
                    {"matchExpressions":[{"key":"kubernetes.io/arch","operator":"In","values":["arm64"]}]},
                    {"matchExpressions":[{"key":"kubernetes.io/arch","operator":"In","values":["amd64"]}]}]}}}),
        );
        assert_eq!(win603(&ored, &on(Platform::Aks)).len(), 1);
        // An AKS Linux OS SKU: no Windows node has it.
        let ubuntu = with(
            ds(),
            "/nodeSelector",
            json!({"kubernetes.azure.com/os-sku": "Ubuntu"}),
        );
        assert!(win603(&ubuntu, &on(Platform::Aks)).is_empty());
    }

    /// No platform, no taint, no cluster: the message names the condition.
    #[test]
    fn assumed_taints_say_what_decides() {
        let f = win603(&ds(), &cfg());
        assert_eq!(f.len(), 1);
        assert_says(&f[0], "winlint assumed os=windows:NoSchedule");
    }

    #[test]
    fn observed_nodes_decide() {
        let untainted = observed(
            cfg(),
            vec![group("w", "windows", "10.0.20348", &[], &[], 2), linux()],
        );
        assert_says(
            &win603(&ds(), &untainted)[0],
            "2 Windows nodes of the cluster",
        );
        let tainted = observed(
            cfg(),
            vec![group("w", "windows", "10.0.20348", &[GKE], &[], 2), linux()],
        );
        assert!(win603(&ds(), &tainted).is_empty());
        // No Windows node in the cluster: it runs on none.
        assert!(win603(&ds(), &observed(cfg(), vec![linux()])).is_empty());
    }
}
