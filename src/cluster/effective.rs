//! From a facts snapshot to what the engine evaluates with: the configuration's target with the
//! cluster's facts wherever the configuration does not pin them ([`Target::pinned`]), and the
//! context (RuntimeClasses, namespace labels) every evaluation shares. Pure; built once per
//! snapshot, off the request path.

use std::collections::BTreeSet;
use std::sync::Arc;

use super::facts::ClusterFacts;
use crate::config::Config;
use crate::model::context::GmsaSpecs;
use crate::model::{Context, Runtime, Taint, Target};

/// `config` with the cluster's facts: the API server's version, the Windows builds its nodes run,
/// their runtime, whether builds are mixed, the Windows nodes' taints, and the node groups
/// themselves ([`Target::nodes`], when the node list is complete). A fact the configuration
/// pins stays as configured.
pub fn apply(config: &Config, facts: &ClusterFacts) -> Config {
    let mut config = config.clone();
    apply_to_target(&mut config.target, facts);
    config
}

fn apply_to_target(t: &mut Target, facts: &ClusterFacts) {
    if let Some(v) = &facts.server_version
        && !t.pinned.kubernetes
    {
        t.kubernetes = v.version;
    }
    if !facts.synced.nodes {
        return;
    }
    t.nodes = Some(facts.groups.clone().into());
    let builds = facts.windows_builds();
    if !builds.is_empty() {
        if !t.pinned.windows_builds {
            t.windows_builds = builds.iter().copied().collect();
        }
        if !t.pinned.cluster_mixed_builds {
            t.cluster_mixed_builds = builds.len() > 1;
        }
    }
    let runtimes: BTreeSet<Runtime> = facts
        .windows_groups()
        .filter_map(|g| runtime_of(g.runtime.as_deref()?))
        .collect();
    if !t.pinned.runtime && runtimes.len() == 1 {
        t.runtime = *runtimes.first().expect("one runtime");
    }
    if !t.pinned.windows_taints && facts.windows_groups().next().is_some() {
        // The taints that keep other pods off Windows nodes: those of Windows groups that no
        // other group carries (a cluster-wide taint says nothing about Windows).
        let mut taints: Vec<Taint> = Vec::new();
        for g in facts.windows_groups() {
            for taint in &g.taints {
                let blocks = taint.effect == "NoSchedule" || taint.effect == "NoExecute";
                let elsewhere = facts
                    .groups
                    .iter()
                    .filter(|o| !o.is_windows())
                    .any(|o| o.taints.contains(taint));
                if blocks && !elsewhere && !taints.contains(taint) {
                    taints.push(taint.clone());
                }
            }
        }
        t.windows_taints = taints;
    }
}

fn runtime_of(version: &str) -> Option<Runtime> {
    match version.split_once("://")?.0 {
        "containerd" => Some(Runtime::Containerd),
        "docker" => Some(Runtime::Docker),
        _ => None,
    }
}

/// The context the facts give every evaluation: RuntimeClasses by name, namespace labels and
/// GMSACredentialSpec names.
pub fn context(facts: &ClusterFacts) -> Context {
    Context {
        runtime_classes: facts
            .runtime_classes
            .iter()
            .map(|(name, rc)| (name.clone(), rc.clone()))
            .collect(),
        namespaces: facts
            .namespaces
            .iter()
            .map(|(name, labels)| (name.clone(), labels.clone()))
            .collect(),
        gmsa_credential_specs: facts.gmsa_credential_specs.as_ref().map(|names| GmsaSpecs {
            names: names.clone(),
            from_cluster: true,
        }),
        ..Context::default()
    }
}

/// What the target holds after [`apply`], for people: `Kubernetes 1.32`, `2 Windows nodes
/// (ltsc2019, ltsc2022)`, `Windows taints os=windows:NoSchedule`; a fact the configuration
/// pins is marked so (`(configured)`), and a cluster without a Windows node says that the
/// configured builds and taints stand.
pub fn describe(target: &Target, facts: &ClusterFacts) -> Vec<String> {
    let configured = |pinned: bool| if pinned { " (configured)" } else { "" };
    let p = &target.pinned;
    let mut out = vec![format!(
        "Kubernetes {}{}",
        target.kubernetes,
        configured(p.kubernetes || facts.server_version.is_none())
    )];
    let windows = facts.windows_node_count();
    if windows == 0 {
        out.push("no Windows node (the configured Windows builds and taints stand)".into());
        return out;
    }
    let builds: Vec<String> = facts.windows_builds().iter().map(|b| b.token()).collect();
    let unknown = facts.unknown_builds.len();
    let mut nodes = format!(
        "{windows} Windows node{}",
        if windows == 1 { "" } else { "s" }
    );
    match (builds.is_empty(), unknown) {
        (false, 0) => nodes.push_str(&format!(" ({})", builds.join(", "))),
        (false, u) => nodes.push_str(&format!(" ({}; {u} of unknown build)", builds.join(", "))),
        (true, _) => nodes.push_str(" (of unknown build)"),
    }
    out.push(nodes);
    if p.windows_builds || builds.is_empty() {
        let b: Vec<String> = target.windows_builds.iter().map(|b| b.token()).collect();
        out.push(format!("Windows builds {} (configured)", b.join(", ")));
    }
    let taints: Vec<String> = target
        .windows_taints
        .iter()
        .map(|t| t.to_string())
        .collect();
    out.push(if taints.is_empty() {
        format!("no Windows taint{}", configured(p.windows_taints))
    } else {
        format!(
            "Windows taint{} {}{}",
            if taints.len() == 1 { "" } else { "s" },
            taints.join(", "),
            configured(p.windows_taints)
        )
    });
    out
}

/// The effective configuration and context of one snapshot, shared by every request.
#[derive(Debug, Clone)]
pub struct Effective {
    pub config: Arc<Config>,
    pub context: Arc<Context>,
}

impl Effective {
    pub fn new(config: &Config, facts: &ClusterFacts) -> Effective {
        Effective {
            config: Arc::new(apply(config, facts)),
            context: Arc::new(context(facts)),
        }
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::Node;
    use k8s_openapi::apimachinery::pkg::version::Info;
    use serde_json::json;

    use super::*;
    use crate::model::KubeVersion;
    use crate::windows::{WS2019, WS2022};

    fn node(name: &str, os: &str, build: &str, taints: serde_json::Value, rt: &str) -> Node {
        serde_json::from_value(json!({
            "metadata": {"name": name, "labels": {
                "kubernetes.io/os": os, "kubernetes.io/hostname": name,
                "node.kubernetes.io/windows-build": build}},
            "spec": {"taints": taints},
            "status": {"nodeInfo": {"containerRuntimeVersion": rt, "kernelVersion": "",
                "osImage": "", "operatingSystem": os, "architecture": "amd64",
                "bootID": "", "kubeProxyVersion": "", "kubeletVersion": "", "machineID": "",
                "systemUUID": ""}}
        }))
        .unwrap()
    }

    fn facts(nodes: &[Node]) -> ClusterFacts {
        let info = Info {
            git_version: "v1.32.0".into(),
            major: "1".into(),
            minor: "32".into(),
            ..Info::default()
        };
        ClusterFacts::derive(nodes, &[], &[], Some(&info))
    }

    #[test]
    fn cluster_facts_fill_what_the_config_does_not_pin() {
        let gke = json!([{"key": "node.kubernetes.io/os", "value": "windows", "effect": "NoSchedule"},
            {"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}]);
        let f = facts(&[
            node(
                "w1",
                "windows",
                "10.0.17763",
                gke.clone(),
                "containerd://1.7.20",
            ),
            node("w2", "windows", "10.0.20348", gke, "containerd://1.7.20"),
            node("l1", "linux", "", json!([]), "containerd://1.7.20"),
        ]);
        let c = apply(&Config::default(), &f);
        let t = &c.target;
        assert_eq!(t.kubernetes, KubeVersion::new(1, 32));
        assert_eq!(t.windows_builds, [WS2019, WS2022]);
        assert!(t.cluster_mixed_builds);
        assert_eq!(t.runtime, Runtime::Containerd);
        let taints: Vec<String> = t.windows_taints.iter().map(|t| t.to_string()).collect();
        assert_eq!(taints, ["node.kubernetes.io/os=windows:NoSchedule"]);
        assert_eq!(t.nodes.as_ref().map(|n| n.len()), Some(3));

        let mut pinned = Config::default();
        pinned
            .apply_file(
                &serde_json::from_value(json!({"target": {"kubernetesVersion": "1.30",
                "windowsBuilds": ["ltsc2022"], "windowsTaints": []}}))
                .unwrap(),
            )
            .unwrap();
        let c = apply(&pinned, &f);
        assert_eq!(c.target.kubernetes, KubeVersion::new(1, 30));
        assert_eq!(c.target.windows_builds, [WS2022]);
        assert!(c.target.windows_taints.is_empty());
        assert!(
            c.target.nodes.is_some(),
            "the groups are facts, not settings"
        );
    }

    #[test]
    fn the_summary_says_what_the_cluster_gave_and_what_is_configured() {
        let f = facts(&[
            node(
                "w1",
                "windows",
                "10.0.20348",
                json!([{"key": "os", "value": "windows", "effect": "NoSchedule"}]),
                "containerd://1.7.20",
            ),
            node("w2", "windows", "foo", json!([]), "containerd://1.7.20"),
            node("l1", "linux", "", json!([]), "containerd://1.7.20"),
        ]);
        let c = apply(&Config::default(), &f);
        assert_eq!(
            describe(&c.target, &f),
            [
                "Kubernetes 1.32",
                "2 Windows nodes (ltsc2022; 1 of unknown build)",
                "Windows taint os=windows:NoSchedule"
            ]
        );
        let mut pinned = Config::default();
        pinned
            .apply_file(
                &serde_json::from_value(json!({"target": {"kubernetesVersion": "1.30",
                "windowsBuilds": ["ltsc2019"], "windowsTaints": []}}))
                .unwrap(),
            )
            .unwrap();
        let c = apply(&pinned, &f);
        assert_eq!(
            describe(&c.target, &f),
            [
                "Kubernetes 1.30 (configured)",
                "2 Windows nodes (ltsc2022; 1 of unknown build)",
                "Windows builds ltsc2019 (configured)",
                "no Windows taint (configured)"
            ]
        );
        // No Windows node: the configuration's builds and taints stand, and the summary says so.
        let linux = facts(&[node("l1", "linux", "", json!([]), "containerd://1.7.20")]);
        let c = apply(&Config::default(), &linux);
        assert_eq!(
            describe(&c.target, &linux),
            [
                "Kubernetes 1.32",
                "no Windows node (the configured Windows builds and taints stand)"
            ]
        );
        assert_eq!(
            c.target.windows_taints,
            Config::default().target.windows_taints
        );
    }

    #[test]
    fn untainted_windows_nodes_mean_no_windows_taint() {
        let f = facts(&[
            node(
                "w1",
                "windows",
                "10.0.20348",
                json!([]),
                "containerd://1.7.20",
            ),
            node("l1", "linux", "", json!([]), "containerd://1.7.20"),
        ]);
        let c = apply(&Config::default(), &f);
        assert!(c.target.windows_taints.is_empty());
        assert!(!c.target.cluster_mixed_builds);
    }
}
