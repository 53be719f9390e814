//! WIN006 `windows-build-selector-mismatch`.

use crate::model::Eval;
use crate::model::labels::BUILD_LABEL;
use crate::model::meta::{Area, Mutation, Reads, RuleOs};
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
    summary: "node.kubernetes.io/windows-build selector incompatible with the image build or with every target node build, or carrying a revision",
    docs: r#"## What it does
Checks the `node.kubernetes.io/windows-build` value a pod selects (its own `nodeSelector` or its
RuntimeClass's): it must be `10.0.NNNNN` without a revision, match a build of the target's Windows
nodes, and be able to run the pod's images under its isolation mode.

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
    let mut sources: Vec<(String, String, &str)> = Vec::new();
    if let Some(v) = site.node_selector(BUILD_LABEL) {
        sources.push((
            v.to_string(),
            site.ptr("/nodeSelector/node.kubernetes.io~1windows-build"),
            "nodeSelector",
        ));
    }
    if let Some(rc_name) = site.str("/runtimeClassName")
        && let Some(v) = eval
            .context
            .runtime_classes
            .get(rc_name)
            .and_then(|rc| rc.node_selector.get(BUILD_LABEL))
    {
        sources.push((v.clone(), site.ptr("/runtimeClassName"), "RuntimeClass"));
    }
    let mut out = Vec::new();
    for (value, ptr, from) in sources {
        let parts: Vec<&str> = value.split('.').collect();
        if parts.len() > 3 {
            out.push(Finding::new(
                &WIN006,
                ptr,
                format!("{from} {BUILD_LABEL}={value} has a revision; the kubelet sets only Major.Minor.Build. Use {}", parts[..3].join(".")),
            ));
            continue;
        }
        let Some(sel) = windows::parse_build(&value).filter(|_| value.starts_with("10.0.")) else {
            out.push(Finding::new(
                &WIN006,
                ptr,
                format!("{from} {BUILD_LABEL}={value} is not a build label value (10.0.NNNNN)"),
            ));
            continue;
        };
        // With the cluster's nodes observed (and the builds not pinned by the configuration),
        // a build no node runs today is WIN010's warning: a node pool scaled to zero brings
        // such a node when the pod asks for it, so the pod is not denied.
        let observed = eval.placement(site).observed() && !eval.target.pinned.windows_builds;
        if !observed
            && !eval.target.windows_builds.is_empty()
            && !eval.target.windows_builds.contains(&sel)
        {
            let t: Vec<String> = eval
                .target
                .windows_builds
                .iter()
                .map(|b| b.to_string())
                .collect();
            // One DaemonSet per Windows build is how node agents ship (New Relic, Calico,
            // windows_exporter): the one for a build the cluster lacks runs no pod.
            let (outcome, severity) = if is_daemonset(site) {
                (
                    ": the DaemonSet creates no pod there, as intended where one DaemonSet per Windows build is shipped",
                    Severity::Info,
                )
            } else {
                ("; the pod stays Pending", Severity::Error)
            };
            out.push(
                Finding::new(
                    &WIN006,
                    ptr.clone(),
                    format!(
                        "{from} {BUILD_LABEL}={value} matches none of the target's Windows nodes ({}){outcome}",
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
                                "{from} {BUILD_LABEL}={value} selects Windows {} nodes, but {} image {} is built for {} ({b}); under {} isolation they cannot run it",
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
}
