//! WIN502 `image-build-incompatible`.

use crate::model::Eval;
use crate::model::known_images::{self};
use crate::model::meta::{Area, Mutation, Reads, RuleOs};
use crate::model::placement::{self};
use crate::model::pod::is_host_process;
use crate::model::windows::{self, Build, Channel, Isolation};
use crate::model::workload::PodSite;
use crate::model::{Finding, RuleMeta, Severity};
use crate::rules::Rule;
use crate::rules::images::common::Mismatch;
use crate::rules::images::common::describe;
use crate::rules::images::common::describe_builds;
use crate::rules::images::common::image_builds;
use crate::rules::images::common::image_ptr;
use crate::rules::images::common::images;
use crate::rules::images::common::instead;
use crate::rules::images::common::known_alternatives;
use crate::rules::images::common::mismatch;
use crate::rules::images::common::today;
use crate::rules::images::image_registry;

/// WIN502 in the registry.
pub const RULE: Rule = Rule {
    meta: &WIN502,
    check: image_build_incompatible,
};

/// Whether to advise adding nodes of build `b`: an LTSC build still in support (never a
/// Semi-Annual release: all are out of support) that the target's Kubernetes runs as a node:
/// Windows Server 2016 before 1.14, Windows Server 2019 and later from 1.14 (K-OLD14: 1.14 made
/// Windows GA on Windows Server 2019 only).
pub(crate) fn nodes_advisable(b: Build, eval: &Eval) -> bool {
    if b.channel() != Some(Channel::Ltsc) || b.out_of_support(&today(eval)) {
        return false;
    }
    let ga = eval.target.kubernetes.at_least(1, 14);
    if b == windows::WS2016 { !ga } else { ga }
}

// ---------------------------------------------------------------------------------------------
// WIN502

pub static WIN502: RuleMeta = RuleMeta {
    id: "WIN502",
    name: "image-build-incompatible",
    severity: Severity::Error,
    summary: "Image built for a Windows build that no target node can run under the pod's isolation",
    docs: r#"## What it does
Derives the Windows build of each image from its tag (`ltsc2019` → 10.0.17763, `1809`,
`10.0.17763.4737`, `windowsservercore-1709`, …; see `winlint explain WIN503` for what cannot be
derived) or from what winlint knows about the image (`redis:3.0-nanoserver` is a Windows Server
2016 image; `registry.k8s.io/pause:3.5` is a manifest list with Windows images for 1809, 1903,
1909, 2004 and 20H2 only, no ltsc2022; Docker Hub's `microsoft/iis` has none newer than 1803) and
checks it against the Windows builds of the nodes the pod can run on under the pod's isolation:

* process isolation (the default, and the only mode upstream Kubernetes supports): the image
  build must equal the host build, except that Windows Server 2025 and 23H2 hosts also run
  Windows Server 2022 (`ltsc2022`) images;
* Hyper-V isolation (the target's `isolation: hyperv`, the target's Hyper-V RuntimeClass, or a
  RuntimeClass with handler `runhcs-wcow-hypervisor`): the image build must not be newer than
  the host's.

Also reported: the HostProcess base image
(`mcr.microsoft.com/oss/kubernetes/windows-host-process-containers-base-image`), and images known
to be built on it (`ghcr.io/prometheus-community/windows-exporter`), in an ordinary container,
where they cannot run. HostProcess containers are skipped: they have no build
requirement. When the reference has both a tag and a digest the runtime uses the digest, so the
finding is a warning.

With `--registry` (CLI) or `registry.mode` (webhook) the image's manifest list decides instead of
its name: an error when containerd would pull and run none of its Windows entries on the nodes
(below 10.0.20348 the builds must be equal; from 20348 a node runs images from the previous LTSC
up to its own build; under Hyper-V a list is still picked by the node's build, while a single
older image runs). The message then says `registry:`.

## Why is this bad?
The container cannot start on any node: containerd fails with "The container operating system
does not match the host operating system", and the pod loops in `CreateContainerError` or
`ErrImagePull` ("no matching manifest").

## Example
```yaml
# target windowsBuilds: [10.0.20348]
containers:
- name: app
  image: mcr.microsoft.com/windows/servercore:ltsc2019
```

## Fix
Use an image built for the nodes' build. For Microsoft's repositories (and the MCR successors of
the retired Docker Hub `microsoft/*` ones) winlint names a tag that exists
(`mcr.microsoft.com/windows/servercore:ltsc2022`, `registry.k8s.io/pause:3.6 or later`); for
other images it names the build (`an image built for 10.0.20348 (ltsc2022)`), and for an image of
a build out of support it advises rebuilding it on a supported base. Adding nodes of the image's
build is advised only for a Long-Term Servicing build in support that the target's Kubernetes
version runs (never a Semi-Annual release such as 1709 or 20H2); pin the pod to them with
`node.kubernetes.io/windows-build`.
"#,
    fix: None,
    source: "MS-COMPAT, MS-PORT",
    applies: "all",
    os: RuleOs::Windows,
    default_on: true,
    reads: Reads::HOSTS.and(Reads::of(&[Area::Containers, Area::PodSecurityContext])),
    mutation: Mutation::DEFAULT,
};

pub(crate) fn image_build_incompatible(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    let p = eval.placement(site);
    let Some(hb) = p.host_builds(eval.target) else {
        return Vec::new();
    };
    let hosts = hb.builds.clone();
    let iso = eval.isolation(site);
    // The WS2016 revision check of §2.6 needs the hosts' revisions, which the target does not
    // carry (node labels have none either), so only builds are compared.
    let mut out = Vec::new();
    for (c, img, i) in images(eval) {
        if is_host_process(site, c) {
            continue;
        }
        if let Some(f) = image_registry::facts(eval, c) {
            // The registry's list decides, the way containerd picks an entry.
            if let Some(published) = image_registry::no_host_runs(&f, &hosts, iso) {
                let what = if f.list {
                    "its Windows entries are built for"
                } else {
                    "it is a single image built for"
                };
                let mut msg = format!(
                    "{} image {img}: {}: {what} {} ({}); containerd pulls and runs none of them on {}, which {} run: {}",
                    c.label(),
                    image_registry::source(eval, c),
                    describe_builds(&published),
                    image_registry::platforms(&f),
                    describe_builds(&hosts),
                    hb.who(),
                    instead(i, &hosts)
                );
                let mut sev = Severity::Error;
                if let Some(note) = p.unobserved_note() {
                    msg.push_str(note);
                    sev = Severity::Warning;
                }
                out.push(Finding::new(&WIN502, image_ptr(site, c), msg).severity(sev));
            }
            continue;
        }
        let Some(problem) = mismatch(i, &hosts, iso) else {
            continue;
        };
        let r = i.reference.as_ref().expect("parsed");
        let nodes = describe_builds(&hosts);
        let who = hb.who();
        let builds = describe(&image_builds(&hosts), " or ");
        let mut msg = match problem {
            Mismatch::Build(b) => {
                let why = match iso {
                    Isolation::Process => format!(
                        "but {who} run {nodes}; with process isolation the image and host builds must match"
                    ),
                    Isolation::Hyperv => format!(
                        "newer than {nodes}, which {who} run; Hyper-V isolation runs only images of the host's build or older"
                    ),
                };
                let family = known_images::publishes_multi_os_lists(&r.registry, &r.repository);
                let remedy = if family {
                    format!(
                        "use a current release of {}: current releases are multi-OS manifest lists with Windows entries for 1809 and ltsc2022, and containerd pulls the entry of the node's build",
                        r.familiar()
                    )
                } else if !known_alternatives(i, &hosts).is_empty() {
                    instead(i, &hosts)
                } else if b.out_of_support(&today(eval)) {
                    format!(
                        "rebuild it on a base image built for {builds}; {} is out of support since {}",
                        b.product(),
                        b.support_end().unwrap_or_default()
                    )
                } else {
                    instead(i, &hosts)
                };
                let hyperv =
                    placement::hyperv_runtime_class_for(site, eval.target, eval.context, &[b])
                        .filter(|_| iso == Isolation::Process);
                let add = if let Some(rc) = hyperv {
                    format!(", or run it under Hyper-V isolation with runtimeClassName: {rc}")
                } else if nodes_advisable(b, eval) && !family {
                    format!(" or add {} nodes", b.product())
                } else {
                    String::new()
                };
                let note = known_images::note(&r.registry, &r.repository)
                    .map(|n| format!(". {n}"))
                    .unwrap_or_default();
                format!(
                    "{} image {img} is built for {} {why}: {remedy}{add}{note}",
                    c.label(),
                    b.named(),
                )
            }
            Mismatch::List(list) => {
                let why = match iso {
                    Isolation::Process => format!(
                        "none matches {nodes}, which {who} run, and with process isolation the image and host builds must match"
                    ),
                    Isolation::Hyperv => format!(
                        "all are newer than {nodes}, which {who} run, and Hyper-V isolation runs only images of the host's build or older"
                    ),
                };
                format!(
                    "{} image {img} is a manifest list whose Windows images are built for {} only; {why}: {}",
                    c.label(),
                    describe_builds(list),
                    instead(i, &hosts)
                )
            }
            Mismatch::HostProcessOnly => format!(
                "{} image {img} {} the HostProcess base image, which runs only in HostProcess containers (windowsOptions.hostProcess: true); in an ordinary container it cannot start. Run the container as HostProcess, or use an image built for {builds}",
                c.label(),
                if r.repository
                    .ends_with("windows-host-process-containers-base-image")
                {
                    "is"
                } else {
                    "is built on"
                }
            ),
        };
        let mut sev = Severity::Error;
        if i.low_confidence {
            msg.push_str(
                " (the build comes from the tag; the runtime uses the digest, so check which build it names)",
            );
            sev = Severity::Warning;
        }
        if let Some(note) = p.unobserved_note() {
            msg.push_str(note);
            sev = Severity::Warning;
        }
        out.push(Finding::new(&WIN502, image_ptr(site, c), msg).severity(sev));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use crate::engine::lint_object;
    use crate::model::Context;
    use crate::model::KubeVersion;
    use crate::model::Operation;
    use crate::model::windows::{WS2016, WS2019, WS2022, WS2025};
    use crate::rules::images::common::tests::DIGEST;

    use crate::rules::testutil::{cfg, findings, ids, set};
    use serde_json::json;

    use crate::rules::images::common::tests::IMG;
    use crate::rules::images::common::tests::hyperv;
    use crate::rules::images::common::tests::message;
    use crate::rules::images::common::tests::sev;
    use crate::rules::images::common::tests::target;
    use crate::rules::images::common::tests::with_image;

    #[test]
    fn t38_message_names_image_builds_and_remedy() {
        let pod = with_image("mcr.microsoft.com/windows/servercore:ltsc2019");
        let fs = findings(&pod, &cfg());
        let f = fs.iter().find(|f| f.rule.id == "WIN502").expect("WIN502");
        assert_eq!(f.pointer, IMG);
        assert_eq!(
            f.message,
            "container \"app\" image mcr.microsoft.com/windows/servercore:ltsc2019 is built for Windows Server 2019 (10.0.17763) but the target nodes run 10.0.20348 (ltsc2022); with process isolation the image and host builds must match: use mcr.microsoft.com/windows/servercore:ltsc2022 or add Windows Server 2019 nodes"
        );
    }

    #[test]
    fn win502_by_target_and_isolation() {
        // (image, target builds, hyperv?, fires)
        let cases: &[(&str, &[Build], bool, bool)] = &[
            (
                "mcr.microsoft.com/windows/servercore:ltsc2022",
                &[WS2022],
                false,
                false,
            ),
            (
                "mcr.microsoft.com/windows/servercore:ltsc2022",
                &[WS2025],
                false,
                false,
            ),
            (
                "mcr.microsoft.com/windows/servercore:ltsc2022",
                &[windows::V23H2],
                false,
                false,
            ),
            (
                "mcr.microsoft.com/windows/servercore:ltsc2019",
                &[WS2022],
                false,
                true,
            ),
            (
                "mcr.microsoft.com/windows/servercore:ltsc2019",
                &[WS2022],
                true,
                false,
            ),
            (
                "mcr.microsoft.com/windows/servercore:ltsc2019",
                &[WS2019, WS2022],
                false,
                false,
            ),
            (
                "mcr.microsoft.com/windows/servercore:ltsc2025",
                &[WS2022],
                true,
                true,
            ),
            (
                "mcr.microsoft.com/windows/nanoserver:1809",
                &[WS2022],
                false,
                true,
            ),
            (
                "python:3.12-windowsservercore-1809",
                &[WS2019],
                false,
                false,
            ),
            (
                "microsoft/windowsservercore:1709",
                &[windows::V1709],
                false,
                false,
            ),
            (
                "microsoft/windowsservercore:ltsc2016",
                &[WS2016],
                false,
                false,
            ),
            (
                "mcr.microsoft.com/windows/servercore:10.0.17763.4737",
                &[WS2022],
                false,
                true,
            ),
            // No build derived, or no target builds: nothing to compare.
            (
                "myregistry.local:5000/team/app:1809",
                &[WS2022],
                false,
                false,
            ),
            (
                "mcr.microsoft.com/windows/servercore:ltsc2019",
                &[],
                false,
                false,
            ),
        ];
        for (image, builds, hv, fires) in cases {
            let mut c = target(builds);
            if *hv {
                c = hyperv(c);
            }
            let got = ids(&with_image(image), &c).contains(&"WIN502");
            assert_eq!(got, *fires, "{image} on {builds:?} hyperv={hv}");
        }
    }

    #[test]
    fn win502_isolation_from_runtime_class_in_context() {
        let pod = set(
            with_image("mcr.microsoft.com/windows/servercore:ltsc2019"),
            "/spec/runtimeClassName",
            json!("isolated"),
        );
        let lint = |handler: &str, c: &Config| {
            let mut cx = Context::default();
            cx.add(&json!({"apiVersion":"node.k8s.io/v1","kind":"RuntimeClass",
                "metadata":{"name":"isolated"},"handler":handler}));
            let mut v: Vec<&str> = lint_object(&pod, c, &cx, Operation::Lint)
                .findings
                .iter()
                .map(|f| f.rule.id)
                .collect();
            v.dedup();
            v
        };
        assert_eq!(lint("runhcs-wcow-hypervisor", &cfg()), Vec::<&str>::new());
        assert_eq!(
            lint("runhcs-wcow-hypervisor-17763", &cfg()),
            Vec::<&str>::new()
        );
        assert_eq!(lint("runhcs-wcow-process", &cfg()), ["WIN502"]);
        // The handler in context beats the target's default isolation.
        assert_eq!(lint("runhcs-wcow-process", &hyperv(cfg())), ["WIN502"]);
        assert_eq!(lint("something-else", &cfg()), ["WIN502"]);
    }

    #[test]
    fn win502_hyperv_message_and_low_confidence() {
        let pod = with_image("mcr.microsoft.com/windows/servercore:ltsc2025");
        let m = message(&pod, &hyperv(cfg()), "WIN502");
        assert!(
            m.contains("newer than 10.0.20348 (ltsc2022), which the target nodes run"),
            "{m}"
        );
        assert!(m.contains("Hyper-V isolation"), "{m}");
        let pinned = with_image(&format!(
            "mcr.microsoft.com/windows/servercore:ltsc2019@{DIGEST}"
        ));
        assert_eq!(sev(&pinned, &cfg(), "WIN502"), Severity::Warning);
        assert!(message(&pinned, &cfg(), "WIN502").contains("digest"));
    }

    #[test]
    fn win502_suggests_only_images_that_exist() {
        // (image, target builds, kubernetes minor, the remedy the message ends with)
        let cases: &[(&str, &[Build], u32, &str)] = &[
            // Docker Hub microsoft/* never had ltsc2022 tags: the MCR successor's tag.
            (
                "microsoft/windowsservercore:1709",
                &[WS2022],
                34,
                ": use mcr.microsoft.com/windows/servercore:ltsc2022",
            ),
            (
                "microsoft/iis:windowsservercore-1709",
                &[WS2022],
                34,
                ": use mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2022",
            ),
            // Nano Server 2019 is 1809; the full Windows image continues as windows/server.
            (
                "mcr.microsoft.com/windows/nanoserver:ltsc2022",
                &[WS2019],
                34,
                ": use mcr.microsoft.com/windows/nanoserver:1809 or add Windows Server 2022 nodes",
            ),
            (
                "mcr.microsoft.com/windows:1809",
                &[WS2022],
                34,
                ": use mcr.microsoft.com/windows/server:ltsc2022 or add Windows Server 2019 nodes",
            ),
            // .NET Framework: 4.8 has no ltsc2025 image, 4.8.1 none for ltsc2019.
            (
                "mcr.microsoft.com/dotnet/framework/aspnet:4.8-windowsservercore-ltsc2019",
                &[WS2025],
                34,
                ": use mcr.microsoft.com/dotnet/framework/aspnet:4.8.1-windowsservercore-ltsc2025 or add Windows Server 2019 nodes",
            ),
            (
                "mcr.microsoft.com/dotnet/framework/runtime:4.8.1",
                &[WS2019],
                34,
                ": use mcr.microsoft.com/dotnet/framework/runtime:4.8-windowsservercore-ltsc2019",
            ),
            (
                "mcr.microsoft.com/dotnet/aspnet:8.0-nanoserver-1809",
                &[WS2022],
                34,
                ": use mcr.microsoft.com/dotnet/aspnet:8.0-nanoserver-ltsc2022 or add Windows Server 2019 nodes",
            ),
            // CSI sidecars: a current release (a multi-OS list), never an invented build tag.
            (
                "mcr.microsoft.com/oss/kubernetes-csi/livenessprobe:v2.0.1-alpha.1-windows-1809-amd64",
                &[WS2022],
                34,
                ": use a current release of mcr.microsoft.com/oss/kubernetes-csi/livenessprobe: current releases are multi-OS manifest lists with Windows entries for 1809 and ltsc2022, and containerd pulls the entry of the node's build",
            ),
            // Any other image: the build, no tag; rebuild what is out of support, no nodes.
            (
                "contoso/app:1.0-ltsc2019",
                &[WS2022],
                34,
                ": use an image built for 10.0.20348 (ltsc2022) or add Windows Server 2019 nodes",
            ),
            (
                "kubeletwin/kube-proxy:v1.18.0-windowsservercore-1909",
                &[WS2022],
                34,
                ": rebuild it on a base image built for 10.0.20348 (ltsc2022); Windows Server, version 1909 is out of support since 2021-05-11",
            ),
            (
                "contoso/app:1.0-ltsc2019",
                &[WS2022, WS2025],
                34,
                ": use an image built for 10.0.20348 (ltsc2022) or 10.0.26100 (ltsc2025) or add Windows Server 2019 nodes",
            ),
            // Seed era: no Windows Server 2019 nodes before 1.14; 2016 nodes then.
            (
                "mcr.microsoft.com/windows/servercore:ltsc2019",
                &[windows::V1709],
                9,
                ": use mcr.microsoft.com/windows/servercore:1709",
            ),
            (
                "redis:3.0-nanoserver",
                &[windows::V1709],
                9,
                ": use an image built for 10.0.16299 (1709) or add Windows Server 2016 nodes. Docker Hub's redis has published no Windows image since its 2017 Windows Server 2016 ones",
            ),
            (
                "redis:3.0-nanoserver",
                &[WS2022],
                34,
                ": use an image built for 10.0.20348 (ltsc2022). Docker Hub's redis has published no Windows image since its 2017 Windows Server 2016 ones",
            ),
        ];
        for (image, builds, minor, want) in cases {
            let mut c = target(builds);
            c.target.kubernetes = KubeVersion::new(1, *minor);
            let m = message(&with_image(image), &c, "WIN502");
            assert!(
                m.ends_with(want),
                "{image} on {builds:?}:\n{m}\nwant …{want}"
            );
            assert!(!m.contains("microsoft/windowsservercore:ltsc"), "{m}");
            assert!(!m.contains("microsoft/iis:windowsservercore-ltsc"), "{m}");
            assert!(!m.contains("-windows-ltsc2022-amd64"), "{m}");
        }
    }

    #[test]
    fn win502_never_advises_nodes_out_of_support() {
        let c = target(&[WS2022]);
        for image in [
            "microsoft/windowsservercore:1709",
            "mcr.microsoft.com/windows/servercore:1803",
            "mcr.microsoft.com/windows/servercore:1909",
            "mcr.microsoft.com/windows/nanoserver:2004",
            "mcr.microsoft.com/windows/servercore:20H2",
            "contoso/app:1.0-nanoserver-1903",
            // Windows Server 2016 nodes: not since Kubernetes 1.14.
            "mcr.microsoft.com/windows/servercore:ltsc2016",
        ] {
            let m = message(&with_image(image), &c, "WIN502");
            assert!(!m.contains(" or add "), "{image}: {m}");
        }
        // Windows Server 2019 left support after 2029-01-09: no more advice to add such nodes.
        let mut late = c.clone();
        late.target.today = Some("2029-02-01".into());
        let m = message(
            &with_image("mcr.microsoft.com/windows/servercore:ltsc2019"),
            &late,
            "WIN502",
        );
        assert!(!m.contains("add Windows Server 2019 nodes"), "{m}");
    }

    #[test]
    fn win502_known_lists_whose_entries_do_not_fit() {
        // pause 3.4–3.5 have no ltsc2022 entry; 3.6 added it; ≤ 3.3 are Linux (WIN507).
        let pause = |v: &str| with_image(&format!("registry.k8s.io/pause:{v}"));
        let m = message(&pause("3.5"), &cfg(), "WIN502");
        assert!(m.contains("is a manifest list whose Windows images are built for 10.0.17763 (ltsc2019), 10.0.18362 (1903), 10.0.18363 (1909), 10.0.19041 (2004), 10.0.19042 (20H2) only"), "{m}");
        assert!(
            m.ends_with(": use registry.k8s.io/pause:3.6 or later"),
            "{m}"
        );
        assert_eq!(sev(&pause("3.4"), &cfg(), "WIN502"), Severity::Error);
        for (v, builds) in [
            ("3.5", &[WS2019][..]),
            ("3.6", &[WS2022]),
            ("3.9", &[WS2025]),
            ("3.10.1", &[WS2022]),
            ("3.11", &[WS2022]),
        ] {
            assert!(
                ids(&pause(v), &target(builds)).is_empty(),
                "pause:{v} on {builds:?}: {:?}",
                ids(&pause(v), &target(builds))
            );
        }
        // Hyper-V runs the 1809 entry on a 2022 host.
        assert!(!ids(&pause("3.5"), &hyperv(cfg())).contains(&"WIN502"));
        assert!(!ids(&with_image("k8s.gcr.io/pause:3.5"), &target(&[WS2019])).contains(&"WIN502"));
        // .NET Framework shared tags: 4.8 = 2016/2019/2022, 4.8.1 = 2022/2025.
        let fw = |t: &str| with_image(&format!("mcr.microsoft.com/dotnet/framework/sdk:{t}"));
        assert!(ids(&fw("4.8"), &target(&[WS2019])).is_empty());
        assert!(ids(&fw("4.8"), &target(&[WS2022])).is_empty());
        assert!(ids(&fw("latest"), &target(&[WS2016])).contains(&"WIN501"));
        assert!(ids(&fw("4.8.1"), &target(&[WS2025])).is_empty());
        assert!(ids(&fw("4.8.1"), &target(&[WS2019])).contains(&"WIN502"));
        // A WS2025 node runs the ltsc2022 entry of 4.8.
        assert!(ids(&fw("4.8"), &target(&[WS2025])).is_empty());
        // IIS latest spans the LTSC builds; a digest makes the list finding a warning.
        assert!(
            !ids(
                &with_image("mcr.microsoft.com/windows/servercore/iis"),
                &target(&[WS2025])
            )
            .contains(&"WIN502")
        );
        let pinned = with_image(&format!("registry.k8s.io/pause:3.5@{DIGEST}"));
        assert_eq!(sev(&pinned, &cfg(), "WIN502"), Severity::Warning);
    }

    #[test]
    fn win502_hostprocess_base_image_outside_hostprocess() {
        let base =
            "mcr.microsoft.com/oss/kubernetes/windows-host-process-containers-base-image:v1.0.0";
        let m = message(&with_image(base), &cfg(), "WIN502");
        assert!(m.contains("runs only in HostProcess containers"), "{m}");
        let hp = set(
            set(with_image(base), "/spec/hostNetwork", json!(true)),
            "/spec/securityContext/windowsOptions",
            json!({"hostProcess": true, "runAsUserName": "NT AUTHORITY\\SYSTEM"}),
        );
        assert!(!ids(&hp, &cfg()).iter().any(|id| id.starts_with("WIN50")));
    }

    #[test]
    fn workload_pointers() {
        let pod = with_image("mcr.microsoft.com/windows/servercore:ltsc2019");
        let dep = json!({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},
            "spec":{"template":{"metadata":{},"spec":pod["spec"].clone()}}});
        let fs = findings(&dep, &cfg());
        let f = fs.iter().find(|f| f.rule.id == "WIN502").expect("WIN502");
        assert_eq!(f.pointer, "/spec/template/spec/containers/0/image");
    }
}
