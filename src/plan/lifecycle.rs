//! Platform lifecycles as data: `src/model/lifecycle.yaml` (which Windows Server versions AKS, EKS
//! and GKE offer, on which Kubernetes versions, until when; a source per row), parsed once, and
//! what it says about a node pool of some build on some Kubernetes version on a date.

use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

use crate::model::KubeVersion;
use crate::model::platform::Platform;
use crate::model::windows::{self, Build};

/// The table.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Table {
    pub platforms: Vec<PlatformRow>,
    pub pools: Vec<PoolRow>,
}

/// A platform's facts.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlatformRow {
    pub platform: String,
    /// Runs Windows containers under Hyper-V isolation; `None`: unknown.
    #[serde(default)]
    pub hyperv: Option<bool>,
    pub source: String,
}

/// One platform's pools of one Windows Server version.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PoolRow {
    pub platform: String,
    pub windows: String,
    #[serde(default = "yes")]
    pub offered: bool,
    #[serde(default)]
    pub min_kubernetes: Option<String>,
    #[serde(default)]
    pub no_new_pools_from: Option<String>,
    #[serde(default)]
    pub unsupported_from: Option<String>,
    #[serde(default)]
    pub default_from: Option<String>,
    #[serde(default)]
    pub retired: Option<String>,
    #[serde(default)]
    pub images_removed: Option<String>,
    #[serde(default)]
    pub note: Option<String>,
    pub source: String,
    #[serde(default)]
    pub sources: Vec<String>,
}

fn yes() -> bool {
    true
}

/// The table, parsed once.
pub fn table() -> &'static Table {
    static TABLE: OnceLock<Table> = OnceLock::new();
    TABLE.get_or_init(|| {
        parse(include_str!("../model/lifecycle.yaml"))
            .expect("src/model/lifecycle.yaml is a valid table")
    })
}

/// A table from YAML text.
pub fn parse(text: &str) -> Result<Table, String> {
    let doc = crate::source::load_first_value(text)?;
    serde_json::from_value(doc).map_err(|e| e.to_string())
}

/// How much a lifecycle fact weighs on the move.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Weight {
    /// The pool cannot be had (retired, not offered, unsupported on that Kubernetes version).
    Blocking,
    /// A date or version ahead that ends the pool.
    Warning,
    Info,
}

/// One thing the table says about a pool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Notice {
    pub weight: Weight,
    /// `current` or `planned`.
    pub pool: &'static str,
    pub message: String,
    pub source: String,
}

/// Whether `platform` runs Hyper-V isolation (`None`: the table does not know).
pub fn hyperv(platform: Platform) -> Option<(bool, &'static str)> {
    let row = table()
        .platforms
        .iter()
        .find(|r| r.platform == platform.name())?;
    row.hyperv.map(|h| (h, row.source.as_str()))
}

fn minor(v: &Option<String>) -> Option<KubeVersion> {
    v.as_deref().and_then(KubeVersion::parse)
}

/// What the table says about `platform`'s pools of `build` on Kubernetes `kube` as of `as_of`
/// (`YYYY-MM-DD`). `pool`: `current` or `planned` (a planned pool that is retired or not
/// offered blocks the move; a current one that retires is why to move).
pub fn notices(
    platform: Platform,
    build: Build,
    kube: KubeVersion,
    as_of: &str,
    pool: &'static str,
) -> Vec<Notice> {
    let token = build.token();
    let mut out = Vec::new();
    let name = platform.name().to_ascii_uppercase();
    let product = build.product();
    for row in table()
        .pools
        .iter()
        .filter(|r| r.platform == platform.name())
        .filter(|r| windows::parse_build(&r.windows) == Some(build) || r.windows == token)
    {
        let mut say = |weight, message: String| {
            out.push(Notice {
                weight,
                pool,
                message,
                source: row.source.clone(),
            })
        };
        let planned = pool == "planned";
        if !row.offered {
            say(
                if planned {
                    Weight::Blocking
                } else {
                    Weight::Info
                },
                format!(
                    "{name} offers no {product} node pools{}",
                    row.note
                        .as_deref()
                        .map(|n| format!(": {n}"))
                        .unwrap_or_default()
                ),
            );
            continue;
        }
        if let Some(min) = minor(&row.min_kubernetes)
            && !kube.at_least(min.major, min.minor)
        {
            say(
                if planned {
                    Weight::Blocking
                } else {
                    Weight::Warning
                },
                format!("{name} {product} pools need Kubernetes {min} (planned: {kube})"),
            );
        }
        if let Some(v) = minor(&row.unsupported_from)
            && kube.at_least(v.major, v.minor)
        {
            say(
                Weight::Blocking,
                format!(
                    "{name} does not support {product} pools on Kubernetes {v} and later ({kube})"
                ),
            );
        } else if let Some(v) = minor(&row.no_new_pools_from)
            && kube.at_least(v.major, v.minor)
        {
            say(
                if planned {
                    Weight::Blocking
                } else {
                    Weight::Warning
                },
                format!(
                    "{name} creates no new {product} pools on Kubernetes {v} and later ({kube})"
                ),
            );
        }
        if let Some(date) = &row.retired {
            if date.as_str() <= as_of {
                say(
                    Weight::Blocking,
                    format!("{name} retired {product} pools on {date}"),
                );
            } else {
                say(
                    Weight::Warning,
                    format!("this pool is retired on {date} ({name}, {product})"),
                );
            }
        }
        if let Some(date) = &row.images_removed {
            say(
                if date.as_str() <= as_of {
                    Weight::Blocking
                } else {
                    Weight::Warning
                },
                format!("{name} removes the {product} node images on {date}: scaling fails after"),
            );
        }
        if let Some(v) = minor(&row.default_from) {
            say(
                Weight::Info,
                format!(
                    "{product} is {name}'s default and only Windows version from Kubernetes {v}"
                ),
            );
        }
        if let Some(n) = &row.note
            && row.offered
        {
            say(Weight::Info, n.clone());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::windows::{WS2019, WS2022, WS2025};

    #[test]
    fn the_table_parses_and_every_row_has_a_source_and_a_known_build() {
        let t = table();
        assert!(t.pools.len() >= 8);
        for r in &t.pools {
            assert!(r.source.starts_with("https://"), "{r:?}");
            assert!(windows::parse_build(&r.windows).is_some(), "{r:?}");
            assert!(r.platform.parse::<Platform>().is_ok(), "{r:?}");
            for v in [&r.min_kubernetes, &r.no_new_pools_from, &r.unsupported_from] {
                assert!(v.as_deref().is_none_or(|v| KubeVersion::parse(v).is_some()));
            }
            for d in [&r.retired, &r.images_removed].into_iter().flatten() {
                assert_eq!(d.len(), 10, "{d}");
            }
        }
        assert!(parse("platforms: []\npools: [{platform: aks}]\n").is_err());
    }

    #[test]
    fn aks_2022_pools_retire_in_march_2027() {
        let n = notices(
            Platform::Aks,
            WS2022,
            KubeVersion::new(1, 34),
            "2026-11-29",
            "current",
        );
        assert!(
            n.iter().any(|n| n.weight == Weight::Warning
                && n.message == "this pool is retired on 2027-03-15 (AKS, Windows Server 2022)"),
            "{n:?}"
        );
        // As of the day after, the retirement blocks; on 1.35 no new pool can be made.
        let n = notices(
            Platform::Aks,
            WS2022,
            KubeVersion::new(1, 35),
            "2027-03-16",
            "planned",
        );
        assert!(
            n.iter().filter(|n| n.weight == Weight::Blocking).count() >= 2,
            "{n:?}"
        );
    }

    #[test]
    fn aks_2019_is_unsupported_from_1_33_and_eks_2025_needs_1_35() {
        let n = notices(
            Platform::Aks,
            WS2019,
            KubeVersion::new(1, 33),
            "2025-01-01",
            "current",
        );
        assert!(n.iter().any(
            |n| n.weight == Weight::Blocking && n.message.contains("Kubernetes 1.33 and later")
        ));
        let n = notices(
            Platform::Eks,
            WS2025,
            KubeVersion::new(1, 34),
            "2026-11-29",
            "planned",
        );
        assert!(n.iter().any(|n| n.weight == Weight::Blocking
            && n.message.contains("need Kubernetes 1.35")));
        assert!(
            notices(
                Platform::Eks,
                WS2025,
                KubeVersion::new(1, 35),
                "2026-11-29",
                "planned"
            )
            .iter()
            .all(|n| n.weight != Weight::Blocking)
        );
        let n = notices(
            Platform::Gke,
            WS2025,
            KubeVersion::new(1, 35),
            "2026-11-29",
            "planned",
        );
        assert_eq!(n[0].weight, Weight::Blocking, "{n:?}");
        assert_eq!(hyperv(Platform::Aks).map(|h| h.0), Some(false));
        assert_eq!(hyperv(Platform::Eks), None);
    }
}
