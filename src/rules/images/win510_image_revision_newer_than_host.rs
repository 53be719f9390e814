//! WIN510 `image-revision-newer-than-host`.

use crate::model::Eval;
use crate::model::image::ImageInfo;
use crate::model::image_facts::ImageFacts;
use crate::model::meta::{Mutation, Reads, RuleOs};
use crate::model::nodes::NodeGroup;
use crate::model::pod::is_host_process;
use crate::model::windows::{Build, Isolation, parse_revision};
use crate::model::workload::{ContainerRef, PodSite};
use crate::model::{Finding, RuleMeta, Severity};
use crate::rules::Rule;
use crate::rules::images::common::{image_ptr, images};
use crate::rules::images::image_registry;

/// WIN510 in the registry.
pub const RULE: Rule = Rule {
    meta: &WIN510,
    check: image_revision_newer_than_host,
};

// ---------------------------------------------------------------------------------------------
// WIN510

pub static WIN510: RuleMeta = RuleMeta {
    id: "WIN510",
    name: "image-revision-newer-than-host",
    severity: Severity::Error,
    summary: "Image patched later than the Windows nodes it lands on (os.version revision newer than the host's): the container fails at start",
    docs: r#"## What it does
Compares the full `os.version` of the image a process-isolated Windows container pulls
(`10.0.20348.2966`: build 20348, revision 2966) with the revision (update build revision, UBR)
of the Windows nodes the pod can land on: the nodes' `status.nodeInfo.kernelVersion`
(`10.0.20348.2849`) with live cluster facts (`--cluster`, `audit`, `serve`), else the revision the
target configures (`--windows-build 10.0.20348.2849`). The image's version comes from the
registry (`--registry`, `serve` with `registry.mode`: the manifest list entry containerd picks
for the node, the one of the node's build with the greatest `os.version`), else from a tag that
writes it (`servercore:10.0.20348.2966`).

With live node facts it is an error and names the nodes (audit lists the nodes behind the
images they run); with configured facts a warning. Hyper-V isolation and HostProcess containers
are not checked.

## Why is this bad?
containerd picks a Windows image by major.minor.build and does not compare the revision
(containerd/platforms `windowsMatchComparer`), so the pull succeeds; but a process-isolated
container whose image was patched later than the host fails at start with
`The virtual machine or container exited unexpectedly. (0xc0370106)`: a node that missed
a monthly update cannot run the images rebuilt on it (microsoft/Windows-Containers#591,
actions/runner-images#11582, microsoft/nav-docker#616, docker-library/official-images#18447).

## Example
```yaml
# nodes: kernelVersion 10.0.20348.2849
containers:
- name: app
  image: mcr.microsoft.com/windows/servercore:10.0.20348.2966
```

## Fix
Patch the nodes (install the cumulative update the image was built on), or pin an image built
no later than the nodes' revision, or run the pod under Hyper-V isolation.

## Severity
`error` with the cluster's nodes observed (their `kernelVersion` names the revision: the
container fails at start); `warning` with the revision of the configured target
(`--windows-build 10.0.20348.2849`), which may be out of date.
"#,
    fix: None,
    source: "containerd/platforms platform_windows_compat.go; microsoft/Windows-Containers#591; actions/runner-images#11582",
    applies: "process isolation",
    os: RuleOs::Windows,
    default_on: true,
    reads: Reads::HOSTS,
    mutation: Mutation::DEFAULT,
};

/// A Windows host the pod can land on, with its revision.
struct Host<'a> {
    build: Build,
    revision: u32,
    /// The observed group (none with configured facts).
    group: Option<&'a NodeGroup>,
}

/// The `os.version` the container runs on a host of `build` and its revision: the registry's
/// entry containerd picks (among the Windows entries the host runs, the greatest `os.version`:
/// `windowsMatchComparer.Less`), else the tag's full version. `None` when the picked entry is of
/// another build (the LTSC window) or says no revision.
fn image_version(
    facts: Option<&ImageFacts>,
    info: &ImageInfo,
    build: Build,
) -> Option<(String, u32)> {
    match facts {
        Some(f) => {
            let picked = f.entry_for(build)?.os_version.as_deref()?;
            let rev = parse_revision(picked)?;
            (crate::model::windows::parse_build(picked) == Some(build))
                .then(|| (picked.to_string(), rev))
        }
        None => {
            let rev = info.revision.filter(|_| info.build == Some(build))?;
            Some((format!("{build}.{rev}"), rev))
        }
    }
}

/// `w0, w1, w2 and 4 more`.
fn node_names(groups: &[&NodeGroup]) -> String {
    const SHOWN: usize = 3;
    let names: Vec<&str> = groups
        .iter()
        .flat_map(|g| g.nodes.keys())
        .map(String::as_str)
        .collect();
    let mut s = names[..names.len().min(SHOWN)].join(", ");
    if names.len() > SHOWN {
        s.push_str(&format!(" and {} more", names.len() - SHOWN));
    }
    s
}

fn image_revision_newer_than_host(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    if eval.isolation(site) != Isolation::Process {
        return Vec::new();
    }
    let p = eval.placement(site);
    let hosts: Vec<Host> = if p.observed() {
        p.windows_fitting()
            .into_iter()
            .filter_map(|g| {
                Some(Host {
                    build: g.build?,
                    revision: g.revision?,
                    group: Some(g),
                })
            })
            .collect()
    } else {
        eval.host_builds(site)
            .into_iter()
            .filter_map(|b| {
                Some(Host {
                    build: b,
                    revision: *eval.target.windows_revisions.get(&b)?,
                    group: None,
                })
            })
            .collect()
    };
    if hosts.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::new();
    for (c, img, info) in images(eval) {
        if is_host_process(site, c) {
            continue;
        }
        if let Some(f) = finding(site, eval, c, img, info, &hosts, p.observed()) {
            out.push(f);
        }
    }
    out
}

fn finding(
    site: &PodSite,
    eval: &Eval,
    c: &ContainerRef,
    img: &str,
    info: &ImageInfo,
    hosts: &[Host],
    observed: bool,
) -> Option<Finding> {
    let facts = image_registry::facts(eval, c);
    let mut behind: Vec<(&Host, String)> = Vec::new();
    for h in hosts {
        if let Some((version, rev)) = image_version(facts.as_deref(), info, h.build)
            && rev > h.revision
        {
            behind.push((h, version));
        }
    }
    let (first, version) = behind.first()?;
    let source = if facts.is_some() {
        format!("{}: ", image_registry::source(eval, c))
    } else {
        String::new()
    };
    let host_versions: Vec<String> = {
        let mut v: Vec<String> = behind
            .iter()
            .map(|(h, _)| format!("{}.{}", h.build, h.revision))
            .collect();
        v.dedup();
        v
    };
    let (severity, nodes) = if observed {
        let groups: Vec<&NodeGroup> = behind.iter().filter_map(|(h, _)| h.group).collect();
        (
            Severity::Error,
            format!(
                "the Windows nodes it can land on ({}: {})",
                host_versions.join(", "),
                node_names(&groups)
            ),
        )
    } else {
        (
            Severity::Warning,
            format!("the target's Windows nodes ({})", host_versions.join(", ")),
        )
    };
    let older = first.revision;
    Some(
        Finding::new(
            &WIN510,
            image_ptr(site, c),
            format!(
                "{} image {img}: {source}os.version {version} is patched later than {nodes}; containerd pulls Windows images by build without comparing the revision, and a process-isolated container whose image is newer than the host fails at start (0xc0370106, \"The virtual machine or container exited unexpectedly\"). Install the update the image was built on (revision {} or later) on the nodes, or use an image built no later than revision {older}, or run it under Hyper-V isolation",
                c.label(),
                version.rsplit('.').next().unwrap_or_default(),
            ),
        )
        .severity(severity),
    )
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::sync::Arc;

    use serde_json::json;

    use crate::config::Config;
    use crate::engine::lint_object;
    use crate::model::image_facts::{ImageFacts, ImageFactsMap, Platform};
    use crate::model::windows::WS2022;
    use crate::model::{Context, Operation, Severity};
    use crate::rules::images::common::tests::{target, with_image};
    use crate::rules::testutil::{cfg, group, hits, observed, set};

    const NEWER: &str = "mcr.microsoft.com/windows/servercore:10.0.20348.2966";
    const OLDER: &str = "mcr.microsoft.com/windows/servercore:10.0.20348.2700";

    fn nodes(kernel: &str) -> Config {
        observed(
            cfg(),
            vec![
                group("w", "windows", kernel, &["os=windows:NoSchedule"], &[], 2),
                group("l", "linux", "", &[], &[], 1),
            ],
        )
    }

    fn win510(pod: &serde_json::Value, c: &Config) -> Vec<(Severity, String)> {
        hits(pod, c, "WIN510")
    }

    #[test]
    fn error_on_live_nodes_patched_earlier_than_the_image() {
        let c = nodes("10.0.20348.2849");
        let got = crate::rules::testutil::only(&with_image(NEWER), &c, "WIN510");
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].severity, Severity::Error);
        let m = &got[0].message;
        assert!(
            m.contains("10.0.20348.2966") && m.contains("10.0.20348.2849"),
            "{m}"
        );
        assert!(m.contains("w0, w1") && m.contains("0xc0370106"), "{m}");
        // The near misses: an image patched earlier or at the same level; another build.
        assert!(win510(&with_image(OLDER), &c).is_empty());
        assert!(
            win510(
                &with_image("mcr.microsoft.com/windows/servercore:10.0.20348.2849"),
                &c
            )
            .is_empty()
        );
        assert!(
            win510(
                &with_image("mcr.microsoft.com/windows/servercore:ltsc2022"),
                &c
            )
            .is_empty()
        );
        // Nodes whose revision is unknown: nothing to compare.
        assert!(win510(&with_image(NEWER), &nodes("10.0.20348")).is_empty());
    }

    #[test]
    fn warning_with_the_configured_revision_and_none_without() {
        let mut c = target(&[WS2022]);
        assert!(win510(&with_image(NEWER), &c).is_empty());
        c.target.windows_revisions.insert(WS2022, 2849);
        assert_eq!(
            win510(&with_image(NEWER), &c),
            vec![(Severity::Warning, "/spec/containers/0/image".to_string())]
        );
    }

    #[test]
    fn hyperv_isolation_runs_it() {
        let mut c = nodes("10.0.20348.2849");
        c.target.isolation = crate::model::windows::Isolation::Hyperv;
        assert!(win510(&with_image(NEWER), &c).is_empty());
    }

    /// The registry's entry containerd picks: of the node's build, the greatest os.version.
    #[test]
    fn the_registry_entry_of_the_nodes_build_decides() {
        let image = "contoso.azurecr.io/app:1.0";
        let platform = |v: &str| Platform {
            os: "windows".into(),
            architecture: "amd64".into(),
            variant: None,
            os_version: Some(v.into()),
            os_features: vec![],
            digest: None,
            user: None,
        };
        let context = |versions: &[&str]| {
            let mut map: ImageFactsMap = BTreeMap::new();
            map.insert(
                crate::model::image::fact_key(image).into_owned(),
                Arc::new(ImageFacts {
                    digest: format!("sha256:{:064}", 1),
                    list: true,
                    platforms: versions.iter().map(|v| platform(v)).collect(),
                    user: None,
                }),
            );
            Context {
                images: Some(Arc::new(map)),
                ..Context::default()
            }
        };
        let c = nodes("10.0.20348.2849");
        let pod = set(with_image(image), "/spec/containers/0/image", json!(image));
        let run = |cx: &Context| {
            lint_object(&pod, &c, cx, Operation::Lint)
                .findings
                .into_iter()
                .filter(|f| f.rule.id == "WIN510")
                .collect::<Vec<_>>()
        };
        let f = run(&context(&["10.0.17763.6532", "10.0.20348.2966"]));
        assert_eq!(f.len(), 1);
        assert!(
            f[0].message
                .contains("image contoso.azurecr.io/app:1.0: registry: os.version 10.0.20348.2966"),
            "{}",
            f[0].message
        );
        assert!(run(&context(&["10.0.17763.6532", "10.0.20348.2700"])).is_empty());
        // Only a 1809 entry: WIN502's case, not this rule's.
        assert!(run(&context(&["10.0.17763.9999"])).is_empty());
    }
}
