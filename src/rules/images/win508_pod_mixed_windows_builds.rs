//! WIN508 `pod-mixed-windows-builds`.

use crate::model::Eval;
use crate::model::image::ImageInfo;
use crate::model::meta::{Area, Mutation, Reads, RuleOs};
use crate::model::pod::is_host_process;
use crate::model::windows::{self, Build, Isolation};
use crate::model::workload::{ContainerRef, PodSite};
use crate::model::{Finding, RuleMeta, Severity};
use crate::rules::Rule;
use crate::rules::images::common::image_ptr;
use crate::rules::images::common::images;
use crate::rules::images::image_registry;

/// WIN508 in the registry.
pub const RULE: Rule = Rule {
    meta: &WIN508,
    check: pod_mixed_windows_builds,
};

// ---------------------------------------------------------------------------------------------
// WIN508

pub static WIN508: RuleMeta = RuleMeta {
    id: "WIN508",
    name: "pod-mixed-windows-builds",
    severity: Severity::Error,
    summary: "The containers of one pod derive different Windows builds",
    docs: r#"## What it does
Compares the Windows builds derived from the images of all containers of a pod (init, regular and
ephemeral; HostProcess containers excluded). Under process isolation it reports, as an error, builds
that no single host build can run together (equal builds, or Windows Server 2022 images
beside Windows Server 2025 ones on a 2025 host). Under Hyper-V isolation any two different builds
are a warning: the node must run the newest of them. Ephemeral containers count because they join a
pod already running on a node of the other containers' build. When a build comes from the tag of a
tag+digest reference, the finding is a warning.

With `--registry` (CLI) or `registry.mode` (webhook) an image's build is the one its registry
publishes when it publishes exactly one (a list of several builds runs on each of them).

## Why is this bad?
A pod runs on one node. With `servercore:ltsc2019` beside `nanoserver:ltsc2022`, every node fails
one of the containers ("The container operating system does not match the host operating system"),
whatever the node selector says.

## Example
```yaml
initContainers:
- name: setup
  image: mcr.microsoft.com/windows/servercore:ltsc2019
containers:
- name: app
  image: mcr.microsoft.com/windows/nanoserver:ltsc2022
```

## Fix
Build every container of the pod on the same Windows base (`ltsc2022` for Windows Server 2022
nodes).

## Severity
`error` under process isolation, where no node can run containers of different builds;
`warning` under Hyper-V isolation, and where some builds come from the tags of digest-pinned
images.
"#,
    fix: None,
    source: "MS-COMPAT",
    applies: "all",
    os: RuleOs::Windows,
    default_on: true,
    reads: Reads::HOSTS.and(Reads::of(&[Area::Containers, Area::PodSecurityContext])),
    mutation: Mutation::DEFAULT,
};

pub(crate) fn pod_mixed_windows_builds(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    let built: Vec<(&ContainerRef, &str, &ImageInfo, Build)> = images(eval)
        .filter(|(c, ..)| !is_host_process(site, c))
        .filter_map(|(c, img, i)| Some((c, img, i, image_registry::build_of(eval, c, i)?)))
        .collect();
    let mut builds: Vec<Build> = built.iter().map(|t| t.3).collect();
    builds.sort();
    builds.dedup();
    if builds.len() < 2 {
        return Vec::new();
    }
    let iso = eval.isolation(site);
    let newest = *builds.last().expect("two builds");
    let list = built
        .iter()
        .map(|(c, img, _, b)| {
            let from = match image_registry::facts(eval, c) {
                Some(_) => format!(", {}", image_registry::source(eval, c)),
                None => String::new(),
            };
            format!("{} {img} ({b}{from})", c.label())
        })
        .collect::<Vec<_>>()
        .join(", ");
    let (mut sev, mut msg) = match iso {
        Isolation::Process => {
            // Any host, not only the target's: the question is whether one node can exist.
            let hosts: Vec<Build> = windows::KNOWN
                .iter()
                .map(|k| k.0)
                .chain(builds.iter().copied())
                .collect();
            if hosts.iter().any(|&h| {
                builds
                    .iter()
                    .all(|&b| windows::compatible(b, h, Isolation::Process))
            }) {
                return Vec::new();
            }
            let hint = builds
                .iter()
                .find(|&&b| {
                    !windows::compatible_hosts(b, &eval.host_builds(site), Isolation::Process)
                        .is_empty()
                })
                .map(|b| format!(" (the target nodes run {})", b.token()))
                .unwrap_or_default();
            (
                Severity::Error,
                format!(
                    "the containers of this pod are built for different Windows builds: {list}; under process isolation no node can run them all. Rebuild them on one Windows base{hint}"
                ),
            )
        }
        Isolation::Hyperv => (
            Severity::Warning,
            format!(
                "the containers of this pod are built for different Windows builds: {list}; under Hyper-V isolation the node must run {} or newer. Build them on one Windows base",
                newest.named()
            ),
        ),
    };
    if built.iter().any(|t| t.2.low_confidence) {
        sev = Severity::Warning;
        msg.push_str(" (some builds come from tags of digest-pinned images: check the digests)");
    }
    // Point at the first container whose build differs from the first container's.
    let first = built[0].3;
    let at = built.iter().find(|t| t.3 != first).expect("two builds").0;
    vec![Finding::new(&WIN508, image_ptr(site, at), msg).severity(sev)]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::images::common::tests::DIGEST;

    use crate::model::windows::{WS2019, WS2022, WS2025};

    use crate::rules::images::common::tests::IMG;
    use crate::rules::images::common::tests::hyperv;
    use crate::rules::images::common::tests::message;
    use crate::rules::images::common::tests::sev;
    use crate::rules::images::common::tests::target;
    use crate::rules::testutil::{assert_says, findings, ids, set, winok};
    use serde_json::json;

    #[test]
    fn win508_mixed_builds() {
        let two = |a: &str, b: &str| {
            let pod = set(
                winok(),
                "/spec/initContainers",
                json!([{"name":"setup","image":a}]),
            );
            set(pod, IMG, json!(b))
        };
        let ws19 = "mcr.microsoft.com/windows/servercore:ltsc2019";
        let ws22 = "mcr.microsoft.com/windows/nanoserver:ltsc2022";
        let ws25 = "mcr.microsoft.com/windows/nanoserver:ltsc2025";
        let both = target(&[WS2019, WS2022]);
        // Process isolation: error, pointing at the container that differs.
        let pod = two(ws19, ws22);
        let fs = findings(&pod, &both);
        let f = fs.iter().find(|f| f.rule.id == "WIN508").expect("WIN508");
        assert_eq!(f.severity, Severity::Error);
        assert_eq!(f.pointer, IMG);
        assert_says(f, "init container \"setup\"");
        // Hyper-V: warning, the newest build decides.
        assert_eq!(
            sev(&pod, &hyperv(both.clone()), "WIN508"),
            Severity::Warning
        );
        assert!(message(&pod, &hyperv(both.clone()), "WIN508").contains("Windows Server 2022"));
        // Same build, or builds a WS2025 host runs together: no WIN508.
        assert!(
            !ids(
                &two(ws22, "mcr.microsoft.com/windows/servercore:ltsc2022"),
                &both
            )
            .contains(&"WIN508")
        );
        assert!(!ids(&two(ws22, ws25), &target(&[WS2025])).contains(&"WIN508"));
        // A build and an unknown: nothing to compare.
        assert!(!ids(&two(ws19, "contoso/app:1.0"), &both).contains(&"WIN508"));
        // Ephemeral containers count: they join the pod's node.
        let eph = set(
            winok(),
            "/spec/ephemeralContainers",
            json!([{"name":"dbg","image":"mcr.microsoft.com/windows/nanoserver:1809"}]),
        );
        let fs = findings(&eph, &target(&[WS2019, WS2022]));
        let f = fs.iter().find(|f| f.rule.id == "WIN508").expect("WIN508");
        assert_eq!(f.pointer, "/spec/ephemeralContainers/0/image");
        // HostProcess containers do not count.
        let hp = set(
            two(ws19, ws22),
            "/spec/initContainers/0/securityContext/windowsOptions/hostProcess",
            json!(true),
        );
        assert!(!ids(&hp, &both).contains(&"WIN508"));
        // A tag of a digest-pinned image: warning.
        let pinned = two(&format!("{ws19}@{DIGEST}"), ws22);
        assert_eq!(sev(&pinned, &both, "WIN508"), Severity::Warning);
    }
}
