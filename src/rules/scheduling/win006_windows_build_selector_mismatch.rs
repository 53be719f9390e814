//! WIN006 `windows-build-selector-mismatch`.

use crate::model::Eval;
use crate::model::escape;
use crate::model::labels::{AKS_OS_SKU_LABEL, BUILD_LABEL};
use crate::model::meta::{Area, Mutation, Reads, RuleOs};
use crate::model::placement;
use crate::model::windows::{self};
use crate::model::workload::PodSite;
use crate::model::{Finding, RuleMeta, Severity};
use crate::rules::Rule;
use crate::rules::scheduling::common::is_daemonset;

/// WIN006 in the registry.
pub const RULE: Rule = Rule {
    meta: &WIN006,
    check: windows_build_selector_mismatch,
};

pub static WIN006: RuleMeta = RuleMeta {
    id: "WIN006",
    name: "windows-build-selector-mismatch",
    severity: Severity::Error,
    summary: "node.kubernetes.io/windows-build (or AKS os-sku) selector incompatible with the image build or with every target node build, or carrying a revision",
    docs: r#"## What it does
Checks the `node.kubernetes.io/windows-build` value a pod selects (its own `nodeSelector` or its
RuntimeClass's): it must be `10.0.NNNNN` without a revision, match a build of the target's Windows
nodes, and be able to run the pod's images under its isolation mode. AKS's OS SKU label
`kubernetes.azure.com/os-sku` is a build too (`Windows2019` → 10.0.17763, `Windows2022` →
10.0.20348, `Windows2025` → 10.0.26100; `WindowsAnnual` names no one build) and is checked the same
way.

When the pod's images are built for the selected build too, the message says so: selecting a
build of the target alone would move the failure from Pending to container start, so the images
must change with the selector.

## Why is this bad?
The kubelet sets the label to `Major.Minor.Build` (never a revision), so a selector with a revision,
or for a build no node has, leaves the pod Pending forever; a build that cannot run the image makes it
fail at container start.

A DaemonSet pinned to a build no node has creates no pod, which is how node agents ship one
DaemonSet per Windows build (New Relic, windows_exporter): that is info. A pod pinned to a build is
checked against that build only (WIN502 stays silent for it offline).

## Example
```yaml
spec:
  nodeSelector:
    node.kubernetes.io/windows-build: 10.0.17763.4737
```

## Fix
Select the build the images are made for, as `10.0.NNNNN`.

## Severity
`error` for a pod, which stays Pending; `info` for a DaemonSet, which creates no pod on the
missing build, as intended where one DaemonSet per Windows build is shipped.
"#,
    fix: None,
    source: "KL-LBL, MS-COMPAT",
    applies: "K>=1.17",
    os: RuleOs::Windows,
    default_on: true,
    reads: Reads::PLACEMENT.and(Reads::of(&[Area::Containers, Area::PodSecurityContext])),
    mutation: Mutation::DEFAULT,
};

pub(crate) fn windows_build_selector_mismatch(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    if !eval.target.kubernetes.at_least(1, 17) {
        return Vec::new();
    }
    // (label key, value, pointer, where it is written): the pod's nodeSelector first, then its
    // RuntimeClass's, each with the build label and AKS's OS SKU.
    let mut sources: Vec<(&str, String, String, &str)> = Vec::new();
    for key in [BUILD_LABEL, AKS_OS_SKU_LABEL] {
        if let Some(v) = site.node_selector(key) {
            sources.push((
                key,
                v.to_string(),
                site.ptr(&format!("/nodeSelector/{}", escape(key))),
                "nodeSelector",
            ));
        }
    }
    if let Some(rc_name) = site.str("/runtimeClassName")
        && let Some(rc) = eval.context.runtime_classes.get(rc_name)
    {
        for key in [BUILD_LABEL, AKS_OS_SKU_LABEL] {
            if let Some(v) = rc.node_selector.get(key) {
                sources.push((
                    key,
                    v.clone(),
                    site.ptr("/runtimeClassName"),
                    "RuntimeClass",
                ));
            }
        }
    }
    let mut out = Vec::new();
    for (key, value, ptr, from) in sources {
        let sel = if key == AKS_OS_SKU_LABEL {
            // A Linux SKU is WIN004's and WIN010's; WindowsAnnual implies no one build.
            let Some(b) = placement::os_sku_build(&value) else {
                continue;
            };
            b
        } else {
            let parts: Vec<&str> = value.split('.').collect();
            if parts.len() > 3 {
                out.push(Finding::new(
                    &WIN006,
                    ptr,
                    format!("{from} {BUILD_LABEL}={value} has a revision; the kubelet sets only Major.Minor.Build. Use {}", parts[..3].join(".")),
                ));
                continue;
            }
            let Some(b) = windows::parse_build(&value).filter(|_| value.starts_with("10.0."))
            else {
                out.push(Finding::new(
                    &WIN006,
                    ptr,
                    format!("{from} {BUILD_LABEL}={value} is not a build label value (10.0.NNNNN)"),
                ));
                continue;
            };
            b
        };
        let what = if key == AKS_OS_SKU_LABEL {
            format!(
                "{from} {key}={value} (AKS nodes of Windows {}, {sel})",
                sel.token()
            )
        } else {
            format!("{from} {key}={value}")
        };
        // With the cluster's nodes observed (and the builds not pinned by the configuration),
        // a build no node runs today is WIN010's warning: a node pool scaled to zero brings
        // such a node when the pod asks for it, so the pod is not denied.
        let observed = eval.placement(site).observed() && !eval.target.pinned.windows_builds;
        let targets = &eval.target.windows_builds;
        if !observed && !targets.is_empty() && !targets.contains(&sel) {
            let t: Vec<String> = targets.iter().map(|b| b.to_string()).collect();
            // One DaemonSet per Windows build is how node agents ship (New Relic, Calico,
            // windows_exporter): the one for a build the cluster lacks runs no pod.
            let (outcome, severity) = if is_daemonset(site) {
                (
                    ": the DaemonSet creates no pod there, as intended where one DaemonSet per Windows build is shipped".to_string(),
                    Severity::Info,
                )
            } else {
                (
                    format!("; the pod stays Pending{}", images_too(site, eval, sel)),
                    Severity::Error,
                )
            };
            out.push(
                Finding::new(
                    &WIN006,
                    ptr.clone(),
                    format!(
                        "{what} matches none of the target's Windows nodes ({}){outcome}",
                        t.join(", ")
                    ),
                )
                .severity(severity),
            );
        }
        // Whatever the target has, the pod runs only on nodes of the selected build.
        if !crate::model::pod::is_host_process_pod(site) {
            let isolation = eval.isolation(site);
            for (c, info) in &eval.images {
                if let Some(b) = info.build
                    && !windows::compatible(b, sel, isolation)
                {
                    out.push(Finding::new(
                            &WIN006,
                            ptr.clone(),
                            format!(
                                "{what} selects Windows {} nodes, but {} image {} is built for {} ({b}); under {} isolation they cannot run it",
                                sel.token(),
                                c.label(),
                                c.image().unwrap_or(""),
                                b.token(),
                                match isolation {
                                    windows::Isolation::Process => "process",
                                    windows::Isolation::Hyperv => "Hyper-V",
                                }
                            ),
                        ));
                    break;
                }
            }
        }
    }
    out
}

/// When the pod's images are built for the selected build too (they run there, and on no
/// build of the target), what the message adds: changing the selector alone still fails, the
/// images must change with it. Empty otherwise.
fn images_too(site: &PodSite, eval: &Eval, sel: windows::Build) -> String {
    if crate::model::pod::is_host_process_pod(site) {
        return String::new();
    }
    let isolation = eval.isolation(site);
    let targets = &eval.target.windows_builds;
    let stuck: Vec<String> = eval
        .images
        .iter()
        .filter(|(c, _)| c.list != "ephemeralContainers")
        .filter_map(|(c, info)| {
            let b = info.build?;
            (windows::compatible(b, sel, isolation)
                && !targets
                    .iter()
                    .any(|&t| windows::compatible(b, t, isolation)))
            .then(|| c.image().unwrap_or("").to_string())
        })
        .collect();
    if stuck.is_empty() {
        return String::new();
    }
    let tokens: Vec<String> = targets.iter().map(|t| t.image_token()).collect();
    format!(
        ". Its image{} {} {} built for {} too: selecting a build the target runs still fails at container start, so change the image{} to {} builds as well",
        if stuck.len() == 1 { "" } else { "s" },
        stuck.join(", "),
        if stuck.len() == 1 { "is" } else { "are" },
        sel.token(),
        if stuck.len() == 1 { "" } else { "s" },
        tokens.join(" or "),
    )
}

#[cfg(test)]
mod tests {

    use serde_json::json;

    use crate::rules::testutil::{cfg, findings, ids, set, winok};

    #[test]
    fn win006_revision_and_unknown_build() {
        let pod = set(
            winok(),
            "/spec/nodeSelector/node.kubernetes.io~1windows-build",
            json!("10.0.20348.1906"),
        );
        let fs = findings(&pod, &cfg());
        assert!(
            fs.iter()
                .any(|f| f.rule.id == "WIN006" && f.message.contains("revision"))
        );
        let pod = set(
            winok(),
            "/spec/nodeSelector/node.kubernetes.io~1windows-build",
            json!("10.0.17763"),
        );
        assert!(ids(&pod, &cfg()).contains(&"WIN006"));
        let pod = set(
            winok(),
            "/spec/nodeSelector/node.kubernetes.io~1windows-build",
            json!("10.0.20348"),
        );
        assert!(!ids(&pod, &cfg()).contains(&"WIN006"));
    }

    fn sku(value: &str, image: &str) -> serde_json::Value {
        let pod = set(
            winok(),
            "/spec/nodeSelector/kubernetes.azure.com~1os-sku",
            json!(value),
        );
        set(pod, "/spec/containers/0/image", json!(image))
    }

    fn win006(pod: &serde_json::Value, c: &crate::config::Config) -> Vec<crate::model::Finding> {
        crate::rules::testutil::only(pod, c, "WIN006")
    }

    /// AKS's OS SKU label is a build: the verdicts of the build label, said with the SKU.
    #[test]
    fn aks_os_sku_is_a_build() {
        let ws2019 = "mcr.microsoft.com/windows/servercore:ltsc2019";
        let ws2022 = "mcr.microsoft.com/windows/servercore:ltsc2022";
        // The target has only 10.0.20348: Windows2019 nodes do not exist, the pod stays Pending.
        let f = win006(&sku("Windows2019", ws2022), &cfg());
        assert!(
            f.iter().any(|f| f.message.contains(
                "kubernetes.azure.com/os-sku=Windows2019 (AKS nodes of Windows ltsc2019, 10.0.17763) matches none"
            ) && f.message.contains("Pending")
                && f.severity == crate::model::Severity::Error),
            "{f:?}"
        );
        // Its image is ltsc2022: it could not run on Windows2019 nodes either.
        assert!(
            f.iter().any(|f| f.message.contains("cannot run it")),
            "{f:?}"
        );
        // A SKU of a target build with images of that build: nothing.
        assert!(win006(&sku("Windows2022", ws2022), &cfg()).is_empty());
        // A SKU of a target build with images of another: they cannot run.
        let f = win006(&sku("Windows2022", ws2019), &cfg());
        assert_eq!(f.len(), 1, "{f:?}");
        assert!(f[0].message.contains("cannot run it"), "{}", f[0].message);
        // Linux SKUs and WindowsAnnual imply no Windows build.
        for v in ["Ubuntu", "AzureLinux", "WindowsAnnual", "windows2019"] {
            assert!(win006(&sku(v, ws2022), &cfg()).is_empty(), "{v}");
        }
        // The same pod on a 2019 + 2022 target: both SKUs exist.
        let mut both = cfg();
        both.target.windows_builds = vec![crate::windows::WS2019, crate::windows::WS2022];
        assert!(win006(&sku("Windows2019", ws2019), &both).is_empty());
    }

    /// A pod pinned to a build the target lacks whose images are of that build: fixing the
    /// selector alone would still fail, and the message says the images must change too.
    #[test]
    fn images_of_the_pinned_build_must_change_too() {
        let ws2019 = "mcr.microsoft.com/windows/servercore:ltsc2019";
        let pinned = set(
            set(
                winok(),
                "/spec/nodeSelector/node.kubernetes.io~1windows-build",
                json!("10.0.17763"),
            ),
            "/spec/containers/0/image",
            json!(ws2019),
        );
        let f = win006(&pinned, &cfg());
        assert_eq!(f.len(), 1, "{f:?}");
        assert!(
            f[0].message
                .contains(&format!("Its image {ws2019} is built for ltsc2019 too"))
                && f[0].message.contains("to ltsc2022 builds as well"),
            "{}",
            f[0].message
        );
        let f = win006(&sku("Windows2019", ws2019), &cfg());
        assert_eq!(f.len(), 1, "{f:?}");
        assert!(f[0].message.contains("too"), "{}", f[0].message);
        // Near miss: an image of unknown build says nothing about images.
        let unknown = set(
            pinned.clone(),
            "/spec/containers/0/image",
            json!("contoso.azurecr.io/app:1.0"),
        );
        let f = win006(&unknown, &cfg());
        assert_eq!(f.len(), 1, "{f:?}");
        assert!(!f[0].message.contains("too"), "{}", f[0].message);
    }
}
