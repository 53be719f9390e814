//! Managed Kubernetes platforms and what they do to Windows nodes by default: their taints and
//! the node labels only their Windows nodes carry (`--platform`, `target.platform`).
//!
//! Sources (checked 2026-11-25): AKS adds no taint to a Windows node pool (Microsoft's AKS
//! Windows FAQ and `az aks nodepool add --node-taints`: taints are the user's) and labels its
//! nodes `kubernetes.azure.com/os-sku=Windows2019|Windows2022|…`; EKS adds no taint to Windows
//! nodes (the EKS user guide's Windows support page: workloads select them with
//! `kubernetes.io/os: windows`; a taint is the node group's `--register-with-taints`); GKE taints
//! every Windows Server node `node.kubernetes.io/os=windows:NoSchedule` (GKE "Deploying Windows
//! Server applications"). `generic` is the convention of the Kubernetes Windows user guide,
//! `os=windows:NoSchedule`, stated rather than assumed.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::nodes::Taint;

/// A platform named by the configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Platform {
    Aks,
    Eks,
    Gke,
    Generic,
}

/// What a platform does to its Windows nodes.
struct Defaults {
    name: &'static str,
    /// The taints of a Windows node as the platform creates it (`key=value:Effect`).
    taints: &'static [&'static str],
}

impl Platform {
    pub const ALL: [Platform; 4] = [
        Platform::Aks,
        Platform::Eks,
        Platform::Gke,
        Platform::Generic,
    ];

    fn defaults(self) -> Defaults {
        match self {
            Platform::Aks => Defaults {
                name: "aks",
                taints: &[],
            },
            Platform::Eks => Defaults {
                name: "eks",
                taints: &[],
            },
            Platform::Gke => Defaults {
                name: "gke",
                taints: &["node.kubernetes.io/os=windows:NoSchedule"],
            },
            Platform::Generic => Defaults {
                name: "generic",
                taints: &["os=windows:NoSchedule"],
            },
        }
    }

    /// The taints the platform puts on its Windows nodes.
    pub fn windows_taints(self) -> Vec<Taint> {
        self.defaults()
            .taints
            .iter()
            .map(|t| Taint::parse(t).expect("valid platform taint"))
            .collect()
    }

    pub fn name(self) -> &'static str {
        self.defaults().name
    }
}

impl fmt::Display for Platform {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A platform name that is none of [`Platform::ALL`].
#[derive(Debug, thiserror::Error)]
#[error("platform {0:?}: expected aks, eks, gke or generic")]
pub struct UnknownPlatform(pub String);

impl FromStr for Platform {
    type Err = UnknownPlatform;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Platform::ALL
            .into_iter()
            .find(|p| p.name().eq_ignore_ascii_case(s))
            .ok_or_else(|| UnknownPlatform(s.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_platform_has_its_taints() {
        let taints = |p: Platform| -> Vec<String> {
            p.windows_taints().iter().map(|t| t.to_string()).collect()
        };
        assert!(taints(Platform::Aks).is_empty());
        assert!(taints(Platform::Eks).is_empty());
        assert_eq!(
            taints(Platform::Gke),
            ["node.kubernetes.io/os=windows:NoSchedule"]
        );
        assert_eq!(taints(Platform::Generic), ["os=windows:NoSchedule"]);
        for p in Platform::ALL {
            assert_eq!(p.name().parse::<Platform>().unwrap(), p);
        }
        assert_eq!("AKS".parse::<Platform>().unwrap(), Platform::Aks);
        assert!("openshift".parse::<Platform>().is_err());
    }
}
