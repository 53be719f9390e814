//! WIN005 `missing-windows-build-selector`.

use crate::model::Eval;
use crate::model::labels::{AKS_OS_SKU_LABEL, BUILD_LABEL};
use crate::model::meta::{Area, Mutation, Reads, Recorded, RuleOs};
use crate::model::placement;
use crate::model::windows::{self, Build};
use crate::model::workload::PodSite;
use crate::model::{Finding, Fix, FixSafety, RuleMeta, Severity, ops};
use crate::rules::Rule;
use crate::rules::scheduling::common::node_selector_ops;
use crate::rules::scheduling::common::selector_ptr;
use serde_json::{Value, json};

/// WIN005 in the registry.
pub const RULE: Rule = Rule {
    meta: &WIN005,
    check: missing_windows_build_selector,
};

/// The single Windows build all (init) containers derive, if they agree and every one is known.
pub fn single_build(eval: &Eval) -> Option<Build> {
    let mut build = None;
    for (c, info) in &eval.images {
        if c.list == "ephemeralContainers" {
            continue;
        }
        let b = crate::rules::images::image_registry::build_of(eval, c, info)?;
        if build.is_some_and(|x| x != b) {
            return None;
        }
        build = Some(b);
    }
    build
}

/// Whether the pod pins its nodes' build: `node.kubernetes.io/windows-build` in its nodeSelector
/// or in every required node-affinity term, or an AKS OS SKU that implies one build
/// (`kubernetes.azure.com/os-sku: Windows2022`).
pub(crate) fn has_build_pin(site: &PodSite) -> bool {
    if site.node_selector(BUILD_LABEL).is_some()
        || site
            .node_selector(AKS_OS_SKU_LABEL)
            .and_then(placement::os_sku_build)
            .is_some()
    {
        return true;
    }
    site.get(
        "/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution/nodeSelectorTerms",
    )
    .and_then(Value::as_array)
    .is_some_and(|terms| {
        !terms.is_empty()
            && terms.iter().all(|t| {
                t.get("matchExpressions")
                    .and_then(Value::as_array)
                    .is_some_and(|es| {
                        es.iter().any(|e| {
                            matches!(
                                e.get("key").and_then(Value::as_str),
                                Some(BUILD_LABEL | AKS_OS_SKU_LABEL)
                            )
                        })
                    })
            })
    })
}

pub static WIN005: RuleMeta = RuleMeta {
    id: "WIN005",
    name: "missing-windows-build-selector",
    severity: Severity::Warning,
    summary: "Pod images derive one Windows build but the pod is not pinned to node.kubernetes.io/windows-build in a cluster with several builds",
    docs: r#"## What it does
When the cluster runs Windows nodes of more than one build (`target.clusterMixedBuilds`, or several
`windowsBuilds`), checks that a pod whose images derive a single Windows build selects the nodes of a
compatible build via the `node.kubernetes.io/windows-build` label (set by the kubelet since 1.17) or
AKS's `kubernetes.azure.com/os-sku` (`Windows2019`, `Windows2022`, `Windows2025`).

Only where a wrong-build node exists: among the builds the pod can land on (the observed Windows
nodes it fits, else the target's), one that cannot run its images under its isolation. A
Hyper-V isolated pod whose images every such build hosts (a host runs older images in a utility
VM), or one whose every candidate build runs them, is not reported.

## Why is this bad?
Under process isolation the image build must match the host build. Without the pin the scheduler
may pick a node of another build and the container fails to start ("The container operating system
does not match the host operating system").

## Example
```yaml
spec:
  nodeSelector: {kubernetes.io/os: windows}
  containers:
  - name: web
    image: mcr.microsoft.com/windows/servercore:ltsc2019
```

## Fix
Opt-in: add `nodeSelector: {node.kubernetes.io/windows-build: "10.0.17763"}`; where several target
builds can run the image (a WS2022 image on WS2025 hosts) a required node affinity `In` list on every
term instead. The webhook applies it as mutation M2 when the cluster has mixed builds.
"#,
    fix: Some(FixSafety::OptIn),
    source: "K-UG, PR84472",
    applies: "K>=1.17",
    os: RuleOs::Windows,
    default_on: true,
    reads: Reads::PLACEMENT.and(Reads::of(&[Area::Containers, Area::PodSecurityContext])),
    mutation: Mutation {
        recorded_as: Some(Recorded::WindowsBuild),
        places_pod: true,
        adds_spec_os: false,
        opt_in_when: Some(|target| target.cluster_mixed_builds),
        image_cannot_run: false,
    },
};

pub(crate) fn missing_windows_build_selector(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    // With the cluster's nodes known, the builds that matter are those of the Windows nodes
    // this pod can select; offline, the target's.
    let Some(host_builds) = eval.placement(site).host_builds(eval.target) else {
        return Vec::new();
    };
    let mixed = if host_builds.observed {
        host_builds.builds.len() > 1
    } else {
        eval.target.mixed_builds()
    };
    if !eval.target.kubernetes.at_least(1, 17)
        || !mixed
        || has_build_pin(site)
        || crate::model::pod::is_host_process_pod(site)
    {
        return Vec::new();
    }
    // A RuntimeClass that pins a build (the admission plugin merges its nodeSelector into the
    // pod's) pins the pod: the real scheduler binds it on that build's nodes only.
    if placement::runtime_class(site, eval.context).is_some_and(|rc| {
        placement::selected_build(|k| rc.node_selector.get(k).map(String::as_str)).is_some()
    }) {
        return Vec::new();
    }
    // A pod that lands on no Windows node (a taint it does not tolerate, as the real scheduler
    // decides it: `tests/k8s_scheduler.rs`) stays Pending whatever its build pin; WIN007 says
    // why. Its fix (a toleration) makes the fixer lint again, and this rule then reports.
    // With the taints only assumed, nothing is known of the real nodes' taints: it reports.
    let landing = eval.placement(site);
    let known_taints = landing.observed() || !eval.target.taints_assumed();
    if known_taints
        && landing.facts != placement::NodeFacts::NoWindowsNodes
        && placement::windows_landing(site, eval.target, eval.context, landing).is_none()
    {
        return Vec::new();
    }
    let Some(build) = single_build(eval) else {
        return Vec::new();
    };
    let hosts = windows::compatible_hosts(build, &host_builds.builds, eval.isolation(site));
    // No build the pod can land on runs the images: WIN502 reports it. A pin to the images'
    // own build would send the pod to nodes the target does not have (offline as with the
    // cluster's nodes known: it would wait, Pending), and on the copy `/validate` judges it
    // would hide WIN502 (a DaemonSet's pods are not even moved by it: their nodes come from
    // the template).
    if hosts.is_empty() {
        return Vec::new();
    }
    // A pin matters only where a node of a build that cannot run the images exists among those
    // the pod can land on: a Hyper-V pod whose images every build hosts, or a pod whose every
    // candidate build runs them, lands well anywhere. Offline, `clusterMixedBuilds` with one
    // listed build says that nodes of other, unnamed builds exist: they may be wrong.
    let unnamed_builds =
        !host_builds.observed && eval.target.cluster_mixed_builds && host_builds.builds.len() < 2;
    if hosts.len() == host_builds.builds.len() && !unnamed_builds {
        return Vec::new();
    }
    let fix_ops = if hosts.len() == 1 {
        node_selector_ops(site, BUILD_LABEL, &hosts[0].to_string())
    } else {
        affinity_in_ops(
            site,
            BUILD_LABEL,
            &hosts.iter().map(|h| h.to_string()).collect::<Vec<_>>(),
        )
    };
    let values = hosts
        .iter()
        .map(|h| h.to_string())
        .collect::<Vec<_>>()
        .join(", ");
    vec![
        Finding::new(
            &WIN005,
            selector_ptr(site),
            format!(
                "the pod's images are built for Windows {} ({build}) but nothing pins it to nodes of that build; add nodeSelector {BUILD_LABEL}: {values}",
                build.token()
            ),
        )
        .with_fix(Fix { safety: FixSafety::OptIn, description: format!("pin {BUILD_LABEL} to {values}"), ops: fix_ops }),
    ]
}

/// Ops that add `key In values` to every required node-affinity term (terms are ORed), creating
/// the affinity when absent.
pub(crate) fn affinity_in_ops(
    site: &PodSite,
    key: &str,
    values: &[String],
) -> Vec<json_patch::PatchOperation> {
    let expr = json!({"key": key, "operator": "In", "values": values});
    let req = "/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution";
    if let Some(terms) = site
        .get(&format!("{req}/nodeSelectorTerms"))
        .and_then(Value::as_array)
        .filter(|t| !t.is_empty())
    {
        return terms
            .iter()
            .enumerate()
            .map(|(i, t)| {
                if t.get("matchExpressions").is_some_and(Value::is_array) {
                    ops::add(
                        &site.ptr(&format!("{req}/nodeSelectorTerms/{i}/matchExpressions/-")),
                        expr.clone(),
                    )
                } else {
                    ops::add(
                        &site.ptr(&format!("{req}/nodeSelectorTerms/{i}/matchExpressions")),
                        json!([expr.clone()]),
                    )
                }
            })
            .collect();
    }
    let required = json!({"nodeSelectorTerms": [{"matchExpressions": [expr]}]});
    if site.get("/affinity/nodeAffinity").is_some() {
        vec![ops::add(&site.ptr(req), required)]
    } else if site.get("/affinity").is_some() {
        vec![ops::add(
            &site.ptr("/affinity/nodeAffinity"),
            json!({"requiredDuringSchedulingIgnoredDuringExecution": required}),
        )]
    } else {
        vec![ops::add(
            &site.ptr("/affinity"),
            json!({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": required}}),
        )]
    }
}

#[cfg(test)]
mod tests {

    use serde_json::json;

    use crate::rules::scheduling::common::tests::GKE;
    use crate::rules::scheduling::common::tests::linux;
    use crate::rules::testutil::{cfg, group, observed, only, set, winok};

    #[test]
    fn win005_does_not_pin_to_a_build_no_observed_node_runs() {
        let mixed = vec![
            group("a", "windows", "10.0.17763", &[GKE], &[], 1),
            group("b", "windows", "10.0.20348", &[GKE], &[], 2),
            linux(),
        ];
        let ws2025 = set(
            winok(),
            "/spec/containers/0/image",
            json!("mcr.microsoft.com/windows/servercore:ltsc2025"),
        );
        // No node runs it: WIN502 says so; a pin to 10.0.26100 would select no node.
        let c = observed(cfg(), mixed.clone());
        assert!(only(&ws2025, &c, "WIN005").is_empty());
        assert_eq!(only(&ws2025, &c, "WIN502").len(), 1);
        // An image one group runs: pinned to that group's build.
        let ws2019 = set(
            winok(),
            "/spec/containers/0/image",
            json!("mcr.microsoft.com/windows/servercore:ltsc2019"),
        );
        // It tolerates no taint of GKE's Windows nodes: Pending everywhere (WIN007), no pin.
        assert!(only(&ws2019, &c, "WIN005").is_empty());
        assert_eq!(only(&ws2019, &c, "WIN007").len(), 1);
        // Tolerating them, it can land on either build: pinned to that group's build.
        let ws2019 = set(
            ws2019,
            "/spec/tolerations",
            json!([{"key": "node.kubernetes.io/os", "operator": "Exists"}]),
        );
        let f = only(&ws2019, &c, "WIN005");
        assert_eq!(f.len(), 1, "{f:?}");
        assert!(f[0].message.ends_with(": 10.0.17763"), "{}", f[0].message);
    }

    fn with_image(image: &str) -> serde_json::Value {
        set(winok(), "/spec/containers/0/image", json!(image))
    }

    /// WIN005 only where a node of a build that cannot run the images exists.
    #[test]
    fn only_where_a_wrong_build_node_exists() {
        let ws2019 = with_image("mcr.microsoft.com/windows/servercore:ltsc2019");
        let mut two = cfg();
        two.target.windows_builds = vec![crate::windows::WS2019, crate::windows::WS2022];
        assert_eq!(only(&ws2019, &two, "WIN005").len(), 1);
        // Hyper-V: a 10.0.20348 host runs an ltsc2019 image in a utility VM, so every build of
        // the target runs it.
        let mut hv = two.clone();
        hv.target.isolation = crate::windows::Isolation::Hyperv;
        assert!(only(&ws2019, &hv, "WIN005").is_empty());
        // ... but not an ltsc2022 image on a 10.0.17763 host.
        let ws2022 = with_image("mcr.microsoft.com/windows/servercore:ltsc2022");
        assert_eq!(only(&ws2022, &hv, "WIN005").len(), 1);
        // An ltsc2022 image on 2022 and 2025 hosts (process isolation runs it on both).
        let mut new = cfg();
        new.target.windows_builds = vec![crate::windows::WS2022, crate::windows::WS2025];
        assert!(only(&ws2022, &new, "WIN005").is_empty());
        // Observed: one Hyper-V-capable pod, two builds that both host it.
        let groups = vec![
            group("a", "windows", "10.0.20348", &[GKE], &[], 1),
            group("b", "windows", "10.0.26100", &[GKE], &[], 1),
            linux(),
        ];
        let mut hv_obs = observed(cfg(), groups);
        hv_obs.target.isolation = crate::windows::Isolation::Hyperv;
        assert!(only(&ws2019, &hv_obs, "WIN005").is_empty());
    }

    /// AKS's OS SKU pins the build as the build label does.
    #[test]
    fn aks_os_sku_is_a_build_pin() {
        let mut two = cfg();
        two.target.windows_builds = vec![crate::windows::WS2019, crate::windows::WS2022];
        let ws2019 = with_image("mcr.microsoft.com/windows/servercore:ltsc2019");
        let pinned = set(
            ws2019.clone(),
            "/spec/nodeSelector/kubernetes.azure.com~1os-sku",
            json!("Windows2019"),
        );
        assert!(only(&pinned, &two, "WIN005").is_empty());
        let annual = set(
            ws2019,
            "/spec/nodeSelector/kubernetes.azure.com~1os-sku",
            json!("WindowsAnnual"),
        );
        assert_eq!(only(&annual, &two, "WIN005").len(), 1);
    }
}
