//! From a facts snapshot to what the engine evaluates with: the configuration's target with the
//! cluster's facts wherever the configuration does not pin them ([`Target::pinned`]), and the
//! context (RuntimeClasses, namespace labels) every evaluation shares. Pure; built once per
//! snapshot, off the request path.

use std::collections::BTreeSet;
use std::sync::Arc;

use super::facts::ClusterFacts;
use crate::config::Config;
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

/// The context the facts give every evaluation: RuntimeClasses by name and namespace labels.
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
        ..Context::default()
    }
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
