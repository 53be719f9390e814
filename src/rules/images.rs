//! WIN5xx: container images against the target's Windows builds (shared/rules.md §2.6, §5 and
//! the WIN508 row). The image facts come from [`crate::model::image::analyze`], computed once per
//! container by the engine (`eval.images`).

use super::Rule;
use super::image_registry;
use crate::model::Eval;
use crate::model::classify::Source;
use crate::model::image::ImageInfo;
use crate::model::known_images::{self, Platforms, Successor};
use crate::model::meta::{Fact, Mutation, RuleOs};
use crate::model::placement::{self, HostBuilds};
use crate::model::pod::is_host_process;
use crate::model::windows::{self, Build, Channel, Isolation};
use crate::model::workload::{ContainerRef, PodSite};
use crate::model::{Finding, Fix, FixSafety, RuleMeta, Severity, ops};
use serde_json::json;

pub fn rules() -> Vec<Rule> {
    vec![
        Rule {
            meta: &WIN501,
            check: image_untagged_or_latest,
        },
        Rule {
            meta: &WIN502,
            check: image_build_incompatible,
        },
        Rule {
            meta: &WIN503,
            check: image_build_unknown,
        },
        Rule {
            meta: &WIN504,
            check: legacy_dockerhub_microsoft,
        },
        Rule {
            meta: &WIN505,
            check: tag_case,
        },
        Rule {
            meta: &WIN506,
            check: eol_windows_build,
        },
        Rule {
            meta: &WIN507,
            check: linux_image_in_windows_pod,
        },
        Rule {
            meta: &WIN508,
            check: pod_mixed_windows_builds,
        },
    ]
}

// ---------------------------------------------------------------------------------------------
// The nodes a pod faces. Every question "which host builds, which isolation" in this file goes
// through these two functions.

/// The Windows builds of the nodes this pod's containers must run on: observed, those of the
/// Windows nodes it can land on; offline, the target's configured `windowsBuilds`; none when
/// nothing can be said ([`placement::Placement::host_builds`]).
pub fn host_builds(site: &PodSite, eval: &Eval) -> Vec<Build> {
    eval.placement(site)
        .host_builds(eval.target)
        .map(|h: HostBuilds| h.builds)
        .unwrap_or_default()
}

/// The isolation the pod's containers get: a RuntimeClass in the context whose handler says
/// (`runhcs-wcow-hypervisor*` / `runhcs-wcow-process*`), else Hyper-V when the pod names the
/// target's Hyper-V RuntimeClass, else the target's isolation.
pub fn isolation(site: &PodSite, eval: &Eval) -> Isolation {
    if let Some(name) = site.str("/runtimeClassName") {
        if let Some(iso) = eval
            .context
            .runtime_classes
            .get(name)
            .and_then(|rc| windows::handler_isolation(&rc.handler))
        {
            return iso;
        }
        if name == eval.target.hyperv_runtime_class {
            return Isolation::Hyperv;
        }
    }
    eval.target.isolation
}

// ---------------------------------------------------------------------------------------------
// Shared helpers

/// The containers with an image reference that parses, with their analyses.
fn images<'e, 'a>(
    eval: &'e Eval<'a>,
) -> impl Iterator<Item = (&'e ContainerRef<'a>, &'e str, &'e ImageInfo)> + 'e {
    eval.images.iter().filter_map(|(c, i)| {
        i.reference.as_ref()?;
        Some((c, c.image()?, i))
    })
}

fn image_ptr(site: &PodSite, c: &ContainerRef) -> String {
    site.ptr(&format!("{}/image", c.rel()))
}

/// `10.0.20348 (ltsc2022), 10.0.26100 (ltsc2025)` (`sep` between the builds).
fn describe(builds: &[Build], sep: &str) -> String {
    if builds.is_empty() {
        return "none configured".into();
    }
    builds
        .iter()
        .map(|b| match windows::KNOWN.iter().any(|(k, ..)| k == b) {
            true => format!("{b} ({})", b.token()),
            false => b.to_string(),
        })
        .collect::<Vec<_>>()
        .join(sep)
}

fn describe_builds(builds: &[Build]) -> String {
    describe(builds, ", ")
}

/// The builds images must be built for to run on nodes of `hosts` under process isolation
/// (23H2 nodes run ltsc2022 images), without repeats; Windows Server 2022 when no node build is
/// known.
fn image_builds(hosts: &[Build]) -> Vec<Build> {
    let mut v: Vec<Build> = Vec::new();
    for b in hosts.iter().map(|h| h.image_build()) {
        if !v.contains(&b) {
            v.push(b);
        }
    }
    if v.is_empty() {
        v.push(windows::WS2022);
    }
    v
}

/// The images [`known_images`] knows for nodes of `hosts`, in the order of the builds.
fn known_alternatives(info: &ImageInfo, hosts: &[Build]) -> Vec<known_images::Suggestion> {
    let mut v: Vec<known_images::Suggestion> = Vec::new();
    for s in image_builds(hosts)
        .into_iter()
        .filter_map(|b| info.image_for(b))
    {
        if !v.contains(&s) {
            v.push(s);
        }
    }
    v
}

/// "use X or Y" with images that exist for nodes of `hosts`, else "use an image built for
/// 10.0.20348 (ltsc2022)": never a tag the table does not know.
fn instead(info: &ImageInfo, hosts: &[Build]) -> String {
    let known = known_alternatives(info, hosts);
    if known.is_empty() {
        format!(
            "use an image built for {}",
            describe(&image_builds(hosts), " or ")
        )
    } else {
        let names: Vec<String> = known.iter().map(|s| s.to_string()).collect();
        format!("use {}", names.join(" or "))
    }
}

/// Today (`YYYY-MM-DD`): the target's `today`, else the system clock (UTC).
fn today(eval: &Eval) -> String {
    eval.target.today.clone().unwrap_or_else(today_utc)
}

/// Whether to advise adding nodes of build `b`: an LTSC build still in support (never a
/// Semi-Annual release: all are out of support) that the target's Kubernetes runs as a node:
/// Windows Server 2016 before 1.14, Windows Server 2019 and later from 1.14 (K-OLD14: 1.14 made
/// Windows GA on Windows Server 2019 only).
fn nodes_advisable(b: Build, eval: &Eval) -> bool {
    if b.channel() != Some(Channel::Ltsc) || b.out_of_support(&today(eval)) {
        return false;
    }
    let ga = eval.target.kubernetes.at_least(1, 14);
    if b == windows::WS2016 { !ga } else { ga }
}

/// Why no node of `hosts` runs an image under `iso`.
enum Mismatch {
    /// The image's build (from its tag or the table).
    Build(Build),
    /// A known manifest list, none of whose Windows entries fits.
    List(&'static [Build]),
    /// The HostProcess base image in an ordinary container.
    HostProcessOnly,
}

/// Why no node of `hosts` can run the image under `iso`, if none can (`None` also when no node
/// build is known or nothing is known about the image).
fn mismatch(info: &ImageInfo, hosts: &[Build], iso: Isolation) -> Option<Mismatch> {
    if hosts.is_empty() {
        return None;
    }
    if info.host_process_only() {
        return Some(Mismatch::HostProcessOnly);
    }
    let fits = |b: Build| !windows::compatible_hosts(b, hosts, iso).is_empty();
    if let Some(b) = info.build {
        return (!fits(b)).then_some(Mismatch::Build(b));
    }
    let list = info.list_builds()?;
    (!list.iter().any(|&b| fits(b))).then_some(Mismatch::List(list))
}

// ---------------------------------------------------------------------------------------------
// WIN501

pub static WIN501: RuleMeta = RuleMeta {
    id: "WIN501",
    name: "image-untagged-or-latest",
    severity: Severity::Error,
    summary: "Image without a tag or digest, or tagged :latest (error for Microsoft base-OS images)",
    docs: r#"## What it does
Finds container images with no tag and no digest (which means `:latest`) or with the tag `latest`.
For the Microsoft base-OS repositories (`mcr.microsoft.com/windows/servercore`, `…/nanoserver`,
`…/server`, `mcr.microsoft.com/windows`, and the Docker Hub `microsoft/windowsservercore` and
`microsoft/nanoserver`) this is an error; for other images a warning. A digest pins the image, so
`name:latest@sha256:…` is not reported.

Not reported: HostProcess containers (they run on the host, so the image's Windows build does not
matter; `:latest` there is ordinary tag hygiene, not a Windows problem), containers with
`imagePullPolicy: Never` (the image is never pulled: it is built on or imported to each node, as
the AWS gMSA samples do, so the tag names what that node has; except the Microsoft base images,
whose `latest` no node of today has), known Linux-only images
(WIN507), and `:latest` tags known to have no image for the nodes' build (WIN502 reports those:
Docker Hub's `microsoft/iis` has images for Windows Server 2016, 1709 and 1803 only).

## Why is this bad?
A Windows container only runs on a host whose build matches the image's (process isolation), so
the image build must be chosen on purpose. Microsoft stopped publishing the `latest` tag for its
Windows base images on April 16, 2019: `servercore:latest` does not exist and the pull fails.
For other images `latest` resolves to whatever was pushed last, possibly for another Windows
build or another OS, and changes under a running Deployment.

## Example
```yaml
containers:
- name: app
  image: mcr.microsoft.com/windows/servercore      # implicit :latest
```

## Fix
Use a tag of an image built for your nodes' Windows build: for Microsoft's images winlint names one
that exists (`mcr.microsoft.com/windows/servercore:ltsc2022`,
`mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2022`); for other images, a version
tag (or a digest) of an image built for that build, ideally a manifest list with one entry per
Windows build.
"#,
    fix: None,
    source: "MS-COMPAT, seed",
    applies: "all",
    os: RuleOs::Windows,
    context: &[],
    mutation: Mutation::DEFAULT,
};

fn image_untagged_or_latest(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    let hosts = host_builds(site, eval);
    let iso = isolation(site, eval);
    images(eval)
        .filter(|(c, _, i)| {
            i.latest
                && !i.linux
                && !is_host_process(site, c)
                // Never pulled: the image is put on each node by hand (built there, or
                // imported), so the tag names what is on that node; but no node of today has
                // a Microsoft base image tagged latest (it was never published after 2019).
                && (i.ms_base
                    || c.value.get("imagePullPolicy").and_then(serde_json::Value::as_str)
                        != Some("Never"))
                && mismatch(i, &hosts, iso).is_none()
        })
        .map(|(c, img, i)| {
            let r = i.reference.as_ref().expect("parsed");
            let how = if r.tag.is_none() {
                "has no tag (so :latest)"
            } else {
                "uses the :latest tag"
            };
            let f = |msg: String| Finding::new(&WIN501, image_ptr(site, c), msg);
            let builds = describe(&image_builds(&hosts), " or ");
            let known = !known_alternatives(i, &hosts).is_empty();
            if i.ms_base {
                f(format!(
                    "{} image {img} {how}, which Microsoft stopped publishing for its Windows base images on April 16, 2019: the pull fails. Name the nodes' Windows build: {}",
                    c.label(),
                    instead(i, &hosts)
                ))
                .severity(Severity::Error)
            } else if i.list_builds().is_some() {
                // A known list with an entry for the nodes (else WIN502 reports it).
                f(format!(
                    "{} image {img} {how}: today it has an image for the nodes' Windows build ({builds}), but what it resolves to changes with every push. Pin a tag: {}",
                    c.label(),
                    instead(i, &hosts)
                ))
                .severity(Severity::Warning)
            } else {
                let pin = if known {
                    format!("pin a tag that exists for it: {}", instead(i, &hosts))
                } else {
                    format!(
                        "pin a version tag (or a digest) of an image built for {builds}, ideally a manifest list with one entry per Windows build"
                    )
                };
                f(format!(
                    "{} image {img} {how}: what it resolves to changes with every push, and nothing in the reference says it has an image for the nodes' Windows build ({builds}); {pin}",
                    c.label(),
                ))
                .severity(Severity::Warning)
            }
        })
        .collect()
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
    context: &[Fact::Nodes],
    mutation: Mutation::DEFAULT,
};

fn image_build_incompatible(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    let p = eval.placement(site);
    let Some(hb) = p.host_builds(eval.target) else {
        return Vec::new();
    };
    let hosts = hb.builds.clone();
    let iso = isolation(site, eval);
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
                    "{} image {img}: registry: {what} {} ({}); containerd pulls and runs none of them on {}, which {} run: {}",
                    c.label(),
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

// ---------------------------------------------------------------------------------------------
// WIN503

pub static WIN503: RuleMeta = RuleMeta {
    id: "WIN503",
    name: "image-build-unknown",
    severity: Severity::Info,
    summary: "Windows pod images whose Windows build nothing tells (one finding per pod)",
    docs: r#"## What it does
Reports, once per pod, the images whose Windows build can be derived neither from the reference
(no build token such as `ltsc2022`, `1809`, `10.0.17763` in the tag; or a digest-only reference)
nor from what winlint knows about the repository. Bare numbers such as `:1809` count as build
tokens only in Microsoft base-image repositories.

Not reported: images known to be multi-OS manifest lists, which containerd resolves per node build
(`registry.k8s.io/sig-storage/*`, `registry.k8s.io/e2e-test-images/*`,
`registry.k8s.io/csi-secrets-store/*`, `mcr.microsoft.com/oss/kubernetes-csi/*`,
`registry.k8s.io/pause`, `mcr.microsoft.com/windows/servercore/iis:latest`,
`mcr.microsoft.com/dotnet/framework/*:4.8`, `mcr.microsoft.com/dotnet/framework/samples`, the
unsuffixed tags of Docker official images such as `golang`, …); `:latest` and untagged images
(WIN501); known Linux-only images (WIN507); HostProcess containers (no build requirement).

## Why is this bad?
winlint, the webhook's `windows-build` pin and the scheduler cannot match such an image to nodes.
A Windows image that is not a manifest list runs only on nodes of the build it was built on, so
the mismatch shows only when the pod starts.

## Example
```yaml
containers:
- name: web
  image: contoso.azurecr.io/web:1.4.2     # single-OS image? built on which Windows?
```

## Fix
Publish Windows images as a manifest list with one entry per Windows build of your nodes (each
entry carries its `os.version`, e.g. 10.0.17763 and 10.0.20348): containerd pulls the entry that
matches the node, and one tag serves every node build. `docker buildx imagetools create` or
`crane index append` assemble such a list from per-build images. When you pin by digest, keep the
tag next to it (`…:1.4.2@sha256:…`).
"#,
    fix: None,
    source: "IIS, DNF",
    applies: "all",
    os: RuleOs::Windows,
    context: &[],
    mutation: Mutation::DEFAULT,
};

fn image_build_unknown(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    // With the registry's facts an image's builds are known, unless its Windows entries carry
    // no os.version (pulled everywhere, unverifiable): those are said apart.
    let unverifiable: Vec<(&ContainerRef, &str)> = images(eval)
        .filter(|(c, ..)| !is_host_process(site, c))
        .filter(|(c, ..)| {
            image_registry::facts(eval, c).is_some_and(|f| image_registry::unverifiable(&f))
        })
        .map(|(c, img, _)| (c, img))
        .collect();
    let unknown: Vec<(&ContainerRef, &str, &ImageInfo)> = images(eval)
        .filter(|(c, _, i)| {
            i.build.is_none()
                && i.known.is_none()
                && !i.linux
                && !i.latest
                && !is_host_process(site, c)
                && image_registry::facts(eval, c).is_none()
        })
        .collect();
    if unknown.is_empty()
        && let Some(&(first, _)) = unverifiable.first()
    {
        let names: Vec<String> = unverifiable
            .iter()
            .map(|(c, img)| format!("{} image {img}", c.label()))
            .collect();
        return vec![Finding::new(
            &WIN503,
            image_ptr(site, first),
            format!(
                "registry: the Windows entries of {} carry no os.version, so every Windows node pulls them and winlint cannot check their build against the target nodes' {}; publish os.version in the manifest list (buildx and crane copy it from the base image)",
                names.join(", "),
                describe_builds(&host_builds(site, eval))
            ),
        )];
    }
    let Some(&(first, _, _)) = unknown.first() else {
        return Vec::new();
    };
    let hosts = host_builds(site, eval);
    let nodes = describe_builds(&hosts);
    let os_versions = image_builds(&hosts)
        .iter()
        .map(|b| b.to_string())
        .collect::<Vec<_>>()
        .join(", ");
    let digest_only = |i: &ImageInfo| {
        i.reference
            .as_ref()
            .is_some_and(|r| r.tag.is_none() && r.digest.is_some())
    };
    let names: Vec<String> = unknown
        .iter()
        .map(|(c, img, _)| format!("{} image {img}", c.label()))
        .collect();
    let pinned: Vec<&str> = unknown
        .iter()
        .filter(|(.., i)| digest_only(i))
        .map(|(_, img, _)| *img)
        .collect();
    let lists = format!(
        "A Windows image that is not a manifest list runs only on nodes of the build it was built on: use (or publish) images as manifest lists with one entry per Windows build of your nodes (os.version {os_versions}; containerd pulls the entry that matches each node), or images built for {}",
        describe(&image_builds(&hosts), " or ")
    );
    let msg = if unknown.len() == 1 && pinned.len() == 1 {
        let info = unknown[0].2;
        let example = match known_alternatives(info, &hosts).first() {
            Some(s) if !s.or_later => format!(
                "{}@{}",
                s.image,
                info.reference
                    .as_ref()
                    .and_then(|r| r.digest.as_deref())
                    .unwrap_or("")
            ),
            _ => "name:tag@sha256:…".to_string(),
        };
        format!(
            "{} is pinned by digest only, so winlint cannot check its Windows build against the target nodes' {nodes}; keep a tag that names the build next to the digest ({example})",
            names[0]
        )
    } else {
        let subject = if unknown.len() == 1 {
            format!(
                "{} names no Windows build, and winlint does not know which builds it has images for, so it cannot check it",
                names[0]
            )
        } else {
            format!(
                "the Windows builds of {} images are not known ({}), so winlint cannot check them",
                unknown.len(),
                names.join(", ")
            )
        };
        let digests = if pinned.is_empty() {
            String::new()
        } else {
            format!(
                ". For the images pinned by digest only ({}), keep the tag next to the digest",
                pinned.join(", ")
            )
        };
        format!("{subject} against the target nodes' {nodes}. {lists}{digests}")
    };
    vec![Finding::new(&WIN503, image_ptr(site, first), msg)]
}

// ---------------------------------------------------------------------------------------------
// WIN504

pub static WIN504: RuleMeta = RuleMeta {
    id: "WIN504",
    name: "legacy-dockerhub-microsoft",
    severity: Severity::Warning,
    summary: "Image from the retired Docker Hub microsoft/* repositories",
    docs: r#"## What it does
Finds images from Docker Hub's `microsoft/` organisation (`microsoft/windowsservercore`,
`microsoft/nanoserver`, `microsoft/iis`, `microsoft/aspnet`, `microsoft/dotnet-framework`, …).

## Why is this bad?
Microsoft moved its container images to the Microsoft Container Registry (`mcr.microsoft.com`)
in 2018–2019; the Docker Hub repositories are deprecated and receive no updates, so these images
lack years of security fixes and have no tags for current Windows builds (never
`microsoft/windowsservercore:ltsc2022` or `microsoft/iis:windowsservercore-ltsc2022`).

## Example
```yaml
containers:
- name: web
  image: microsoft/iis:windowsservercore-1709
```

## Fix
Use the MCR successor, with a tag that exists for your nodes' build (winlint names it):
`mcr.microsoft.com/windows/servercore` (for `microsoft/windowsservercore`),
`mcr.microsoft.com/windows/nanoserver`, `mcr.microsoft.com/windows/servercore/iis`,
`mcr.microsoft.com/dotnet/framework/{runtime,sdk,aspnet,wcf}`, `mcr.microsoft.com/dotnet/{runtime,aspnet,sdk}`,
`mcr.microsoft.com/powershell`. SQL Server on Windows containers (`microsoft/mssql-server-windows-*`)
was discontinued: there is no Windows successor.
"#,
    fix: None,
    source: "MS-COMPAT, seed",
    applies: "all",
    os: RuleOs::Windows,
    context: &[],
    mutation: Mutation::DEFAULT,
};

fn legacy_dockerhub_microsoft(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    let hosts = host_builds(site, eval);
    images(eval)
        .filter_map(|(c, img, i)| {
            let advice = match i.legacy_dockerhub? {
                Successor::Repo(repo) if known_alternatives(i, &hosts).is_empty() => format!(
                    "its successor is {repo} (winlint knows no tag there for {})",
                    describe(&image_builds(&hosts), " or ")
                ),
                Successor::Repo(_) => instead(i, &hosts),
                Successor::Discontinued => "Microsoft discontinued SQL Server on Windows containers, so there is no Windows successor (mcr.microsoft.com/mssql/server is Linux-only)".to_string(),
                Successor::Unknown => "look for its successor on mcr.microsoft.com".to_string(),
            };
            Some(Finding::new(
                &WIN504,
                image_ptr(site, c),
                format!(
                    "{} image {img} comes from Docker Hub's microsoft/ repositories, which Microsoft deprecated when it moved its images to mcr.microsoft.com (no updates since): {advice}",
                    c.label()
                ),
            ))
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// WIN505

pub static WIN505: RuleMeta = RuleMeta {
    id: "WIN505",
    name: "tag-case",
    severity: Severity::Warning,
    summary: "Windows OS token in an image tag spelled with the wrong case (20h2, LTSC2019)",
    docs: r#"## What it does
Finds Windows OS tokens in the tags of Microsoft images (`mcr.microsoft.com/*`, Docker Hub
`microsoft/*`) and Docker official images whose case differs from the published spelling:
`20H2`, `ltsc2019`, `sac2016`, `windowsservercore`, `servercore`, `nanoserver`. Other registries'
tags are whatever their owners pushed, so they are not checked.

## Why is this bad?
Registry tags are case-sensitive: `servercore:20h2` does not exist (the tag is `20H2`), so the pull
fails with "not found" although the tag looks right to a human, and to Windows, which ignores
case almost everywhere else.

## Example
```yaml
containers:
- name: app
  image: mcr.microsoft.com/windows/servercore:20h2
```

## Fix
Spell the token as published: `mcr.microsoft.com/windows/servercore:20H2`.
"#,
    fix: None,
    source: "MS-LIFE, IIS",
    applies: "all",
    os: RuleOs::Windows,
    context: &[],
    mutation: Mutation::DEFAULT,
};

fn tag_case(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    images(eval)
        .filter_map(|(c, img, i)| {
            let (found, canonical) = i.case_mismatch.as_ref()?;
            let r = i.reference.as_ref()?;
            let known_spelling = r.registry == "mcr.microsoft.com"
                || (r.registry == "docker.io"
                    && (r.repository.starts_with("microsoft/")
                        || r.repository.starts_with("library/")));
            if !known_spelling {
                return None;
            }
            let tag = r.tag.as_deref()?;
            Some(Finding::new(
                &WIN505,
                image_ptr(site, c),
                format!(
                    "{} image {img}: the tag spells {found} where the registry publishes {canonical}; tags are case-sensitive, so the pull fails (not found). Use {}:{}",
                    c.label(),
                    r.familiar(),
                    tag.replacen(found.as_str(), canonical, 1)
                ),
            ))
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// WIN506

pub static WIN506: RuleMeta = RuleMeta {
    id: "WIN506",
    name: "eol-windows-build",
    severity: Severity::Info,
    summary: "Image or target Windows build past end of support (--check-eol)",
    docs: r#"## What it does
Only with `--check-eol` (`target.checkEol`). Reports images whose derived Windows build, and target
node builds, are past their end of support: Semi-Annual Channel releases (1709 … 20H2) past their
end of servicing, LTSC releases past mainstream support (Windows Server 2016 since 2022-01-11,
2019 since 2024-01-09). Dates come from Microsoft's base image lifecycle page; today's date is the
system clock's (UTC) or `target.today`.

## Why is this bad?
Out-of-support SAC images get no security updates at all; LTSC images past mainstream support get
security fixes only, until extended support ends. Either way, the move to a newer build (which, under
process isolation, means new nodes too) is better planned than forced.

## Example
```yaml
containers:
- name: app
  image: mcr.microsoft.com/windows/servercore:20H2   # out of support since 2022-08-09
```

## Fix
Move to a supported LTSC image and nodes (`ltsc2022`, `ltsc2025`).
"#,
    fix: None,
    source: "MS-LIFE",
    applies: "date-based (--check-eol)",
    os: RuleOs::Windows,
    context: &[],
    mutation: Mutation::DEFAULT,
};

/// Why `b` is past end of support on `today` (`YYYY-MM-DD`), if it is.
fn eol_note(b: Build, today: &str) -> Option<String> {
    let end = b.mainstream_end().filter(|end| *end < today)?;
    Some(match b.channel() {
        Some(Channel::Ltsc) => format!(
            "whose mainstream support ended on {end} (security fixes only, until extended support ends)"
        ),
        _ => {
            format!("a Semi-Annual Channel release out of support since {end} (no security fixes)")
        }
    })
}

fn eol_windows_build(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    if !eval.target.check_eol {
        return Vec::new();
    }
    let today = today(eval);
    let mut out = Vec::new();
    let mut reported: Vec<Build> = Vec::new();
    for (c, img, i) in images(eval) {
        let Some(b) = i.build else { continue };
        let Some(note) = eol_note(b, &today) else {
            continue;
        };
        reported.push(b);
        out.push(Finding::new(
            &WIN506,
            image_ptr(site, c),
            format!(
                "{} image {img} is built for {}, {note}; move to a supported LTSC image (ltsc2022 or ltsc2025) and nodes",
                c.label(),
                b.named()
            ),
        ));
    }
    for b in host_builds(site, eval) {
        if reported.contains(&b) {
            continue;
        }
        if let Some(note) = eol_note(b, &today) {
            out.push(Finding::new(
                &WIN506,
                site.spec_ptr.clone(),
                format!(
                    "the target nodes run {}, {note}; plan the move to supported LTSC nodes and images",
                    b.named()
                ),
            ));
        }
    }
    out
}

/// Today's UTC date from the system clock, `YYYY-MM-DD`.
fn today_utc() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let (y, m, d) = civil_from_days((secs / 86_400) as i64);
    format!("{y:04}-{m:02}-{d:02}")
}

/// Days since 1970-01-01 → (year, month, day), proleptic Gregorian (H. Hinnant's
/// `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

// ---------------------------------------------------------------------------------------------
// WIN507

pub static WIN507: RuleMeta = RuleMeta {
    id: "WIN507",
    name: "linux-image-in-windows-pod",
    severity: Severity::Warning,
    summary: "Image with no Windows variant (busybox, alpine, nginx, dotnet/aspnet:8.0, pause:3.1, …) in a Windows pod",
    docs: r#"## What it does
Finds images that have no Windows image in a pod that is Windows:

* tags known to be Linux-only, reported as **errors** because the pull certainly fails:
  `mcr.microsoft.com/dotnet/{runtime,aspnet,sdk}` without a Windows suffix from .NET 8 on
  (`8.0`, `9.0`, `10.0`, `latest`, `8.0-alpine`: since .NET 8 the plain tags are Linux-only; the
  Windows images are `8.0-nanoserver-ltsc2022`, `8.0-windowsservercore-ltsc2022`, …; `6.0` and
  `7.0` still included Nano Server), and `registry.k8s.io/pause` before 3.4;
* Docker official images that exist for Linux only (`busybox`, `alpine`, `ubuntu`, `debian`,
  `centos`, `fedora`, `nginx`, and a few other distributions) and any `*-alpine` tag of an
  official image, `gcr.io/distroless/*`, and the Linux-only `registry.k8s.io` images (control plane,
  CoreDNS, ingress-nginx, metrics-server, …), reported as warnings.

Name heuristics hold only for Docker Hub official images (`busybox`, `docker.io/library/nginx`):
other repositories publish Windows images under such names (`e2eteam/nginx:1.14-alpine`, the
Kubernetes e2e test images `registry.k8s.io/e2e-test-images/*`, `gcr.io/kubernetes-e2e-test-images/*`),
so an image not on these lists is never called Linux-only. A pod whose OS is not declared (no
`spec.os`, no OS selector) and that also has a Windows image is reported by WIN008 instead.

## Why is this bad?
The container cannot start on a Windows node: the pull finds no `windows/amd64` image ("no matching
manifest for windows/amd64 10.0.20348 in the manifest list entries"). The usual sources are
`kubectl debug` adding a `busybox` ephemeral container to a Windows pod, and `dotnet/aspnet:8.0`
taken from a Linux sample.

## Example
```yaml
containers:
- name: web
  image: mcr.microsoft.com/dotnet/aspnet:8.0     # Linux-only since .NET 8
ephemeralContainers:
- name: debugger
  image: busybox:1.36
```

## Fix
Use the Windows tag that exists for the nodes' build (`mcr.microsoft.com/dotnet/aspnet:8.0-nanoserver-ltsc2022`,
`registry.k8s.io/pause:3.6 or later`; opt-in fix when there is exactly one), or a Windows image
such as `mcr.microsoft.com/windows/nanoserver:ltsc2022`
(`kubectl debug -it POD --image=mcr.microsoft.com/windows/nanoserver:ltsc2022`).
"#,
    fix: Some(FixSafety::OptIn),
    source: "K-INTRO, dotnet/dotnet-docker#4492, pause CHANGELOG",
    applies: "all",
    os: RuleOs::Windows,
    context: &[],
    mutation: Mutation::named("image"),
};

fn linux_image_in_windows_pod(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    // WIN008 covers a pod with undeclared OS mixing Windows and Linux images; report here what
    // it does not, so one image is not reported twice.
    let declared = eval.class.declared_by(Source::OsField).is_some()
        || eval.class.declared_by(Source::Selector).is_some();
    if !declared && eval.images.iter().any(|(_, i)| i.windows) {
        return Vec::new();
    }
    let hosts = host_builds(site, eval);
    let nanoserver = image_builds(&hosts)
        .into_iter()
        .filter_map(|b| known_images::image_for("mcr.microsoft.com", "windows/nanoserver", None, b))
        .map(|s| s.to_string())
        .next()
        .unwrap_or_else(|| "mcr.microsoft.com/windows/nanoserver:ltsc2022".to_string());
    let mut out = Vec::new();
    for (c, img, i) in images(eval) {
        match image_registry::facts(eval, c) {
            Some(f) if !f.has_windows() && !f.platforms.is_empty() => out.push(
                Finding::new(
                    &WIN507,
                    image_ptr(site, c),
                    format!(
                        "{} uses {img}: registry: it has no Windows entry ({}), so on a Windows node the pull fails with \"no matching manifest for windows/amd64\"; {}",
                        c.label(),
                        image_registry::platforms(&f),
                        instead(i, &hosts)
                    ),
                )
                .severity(Severity::Error),
            ),
            Some(_) => {}
            None if i.linux => out.push(linux_by_name(site, eval, c, img, i, &hosts, &nanoserver)),
            None => {}
        }
    }
    out
}

/// WIN507 from the image's name: the table's Linux-only tags (certain: error) and the
/// heuristics for official Linux images (warning).
fn linux_by_name(
    site: &PodSite,
    eval: &Eval,
    c: &ContainerRef,
    img: &str,
    i: &ImageInfo,
    hosts: &[Build],
    nanoserver: &str,
) -> Finding {
    let ptr = image_ptr(site, c);
    if let Some(Platforms::LinuxOnly(why)) = i.known {
        // Certain: the table knows this tag has no Windows image.
        let alternatives = known_alternatives(i, hosts);
        let mut f = Finding::new(
            &WIN507,
            ptr.clone(),
            format!(
                "{} uses {img}, which has no Windows image ({}): on a Windows node the pull fails with \"no matching manifest for windows/amd64\"; {}",
                c.label(),
                why.why(),
                instead(i, hosts)
            ),
        )
        .severity(Severity::Error);
        if let [only] = alternatives.as_slice()
            && !only.or_later
            && eval.fix_possible(site)
        {
            f = f.with_fix(Fix {
                safety: FixSafety::OptIn,
                description: format!("use {}", only.image),
                ops: vec![ops::replace(&ptr, json!(only.image))],
            });
        }
        return f;
    }
    let debug = if c.list == "ephemeralContainers" {
        format!(" (kubectl debug --image={nanoserver})")
    } else {
        String::new()
    };
    Finding::new(
        &WIN507,
        ptr,
        format!(
            "{} uses {img}, a Linux-only image, in a Windows pod: Windows nodes cannot run it (the pull finds no windows/amd64 image). Use a Windows image such as {nanoserver}{debug}",
            c.label()
        ),
    )
}

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
that no single host build can run together (§1.3: equal builds, or Windows Server 2022 images
beside Windows Server 2025 ones on a 2025 host). Under Hyper-V isolation any two different builds
are a warning: the node must run the newest of them. Ephemeral containers count because they join a
pod already running on a node of the other containers' build. When a build comes from the tag of a
tag+digest reference, the finding is a warning.

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
"#,
    fix: None,
    source: "MS-COMPAT",
    applies: "all",
    os: RuleOs::Windows,
    context: &[],
    mutation: Mutation::DEFAULT,
};

fn pod_mixed_windows_builds(site: &PodSite, eval: &Eval) -> Vec<Finding> {
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
    let iso = isolation(site, eval);
    let newest = *builds.last().expect("two builds");
    let list = built
        .iter()
        .map(|(c, img, _, b)| {
            let from = match image_registry::facts(eval, c) {
                Some(_) => ", registry",
                None => "",
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
                    !windows::compatible_hosts(b, &host_builds(site, eval), Isolation::Process)
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
    use crate::config::Config;
    use crate::engine::lint_object;
    use crate::model::Context;
    use crate::model::KubeVersion;
    use crate::model::Operation;
    use crate::model::windows::{WS2016, WS2019, WS2022, WS2025};
    use crate::rules::testutil::{cfg, findings, fixed, ids, only, set, winok};
    use serde_json::Value;
    use serde_json::json;

    const IMG: &str = "/spec/containers/0/image";
    const DIGEST: &str = "sha256:4b1a1d4e2c3f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b";

    fn with_image(image: &str) -> Value {
        set(winok(), IMG, json!(image))
    }

    fn target(builds: &[Build]) -> Config {
        let mut c = cfg();
        c.target.windows_builds = builds.to_vec();
        c
    }

    fn hyperv(mut c: Config) -> Config {
        c.target.isolation = Isolation::Hyperv;
        c
    }

    /// The severity of the (single) finding of `id`.
    fn sev(pod: &Value, c: &Config, id: &str) -> Severity {
        let fs: Vec<Finding> = findings(pod, c)
            .into_iter()
            .filter(|f| f.rule.id == id)
            .collect();
        assert_eq!(fs.len(), 1, "{id}: {fs:?}");
        fs[0].severity
    }

    fn message(pod: &Value, c: &Config, id: &str) -> String {
        findings(pod, c)
            .into_iter()
            .find(|f| f.rule.id == id)
            .unwrap_or_else(|| panic!("{id} did not fire"))
            .message
    }

    /// shared/rules.md §6 vectors about images: (name, pod, target, expected IDs).
    #[test]
    fn test_vectors() {
        let ws2019 = "mcr.microsoft.com/windows/servercore:ltsc2019";
        let t13 = set(
            winok(),
            "/spec/ephemeralContainers",
            json!([{"name":"debugger","image":"busybox:1.36","securityContext":{"privileged":true}}]),
        );
        let mut eol = target(&[windows::V20H2]);
        eol.target.check_eol = true;
        eol.target.today = Some("2026-01-01".into());
        let hyperv_class = set(
            with_image(ws2019),
            "/spec/runtimeClassName",
            json!("hyperv"),
        );
        let mut hv_named = cfg();
        hv_named.target.hyperv_runtime_class = "hyperv".into();
        let vectors: Vec<(&str, Value, Config, &[&str])> = vec![
            ("T04", winok(), cfg(), &[]),
            ("T13", t13, cfg(), &["WIN103", "WIN507"]),
            // rules.md §6 lists WIN503 beside WIN501 for T36/T37; WIN503 no longer repeats what
            // WIN501 says about a :latest image (issue 9: three findings stacked on one image).
            (
                "T36",
                with_image("mcr.microsoft.com/windows/servercore:latest"),
                cfg(),
                &["WIN501"],
            ),
            (
                "T37",
                with_image("mcr.microsoft.com/windows/nanoserver"),
                cfg(),
                &["WIN501"],
            ),
            ("T38", with_image(ws2019), cfg(), &["WIN502"]),
            ("T39", hyperv_class.clone(), hyperv(cfg()), &[]),
            ("T39 named class", hyperv_class, hv_named, &[]),
            ("T40", winok(), target(&[WS2025]), &[]),
            (
                "T41 process",
                with_image("mcr.microsoft.com/windows/servercore:ltsc2025"),
                cfg(),
                &["WIN502"],
            ),
            (
                "T41 hyperv",
                with_image("mcr.microsoft.com/windows/servercore:ltsc2025"),
                hyperv(cfg()),
                &["WIN502"],
            ),
            (
                "T42",
                with_image(
                    "mcr.microsoft.com/dotnet/framework/aspnet:4.8-20230808-windowsservercore-ltsc2022",
                ),
                cfg(),
                &[],
            ),
            (
                "T43",
                with_image(&format!("mcr.microsoft.com/windows/servercore@{DIGEST}")),
                cfg(),
                &["WIN503"],
            ),
            (
                "T54",
                with_image("mcr.microsoft.com/windows/servercore:20h2"),
                target(&[windows::V20H2]),
                &["WIN505"],
            ),
            (
                "T54 --check-eol",
                with_image("mcr.microsoft.com/windows/servercore:20h2"),
                eol,
                &["WIN505", "WIN506"],
            ),
        ];
        for (name, pod, c, want) in vectors {
            assert_eq!(ids(&pod, &c), want, "{name}");
        }
    }

    #[test]
    fn severities_of_the_vectors() {
        let t36 = with_image("mcr.microsoft.com/windows/servercore:latest");
        assert_eq!(sev(&t36, &cfg(), "WIN501"), Severity::Error);
        let t38 = with_image("mcr.microsoft.com/windows/servercore:ltsc2019");
        assert_eq!(sev(&t38, &cfg(), "WIN502"), Severity::Error);
        let t54 = with_image("mcr.microsoft.com/windows/servercore:20h2");
        assert_eq!(
            sev(&t54, &target(&[windows::V20H2]), "WIN505"),
            Severity::Warning
        );
    }

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
    fn t13_points_at_the_ephemeral_image() {
        let pod = set(
            winok(),
            "/spec/ephemeralContainers",
            json!([{"name":"debugger","image":"busybox:1.36"}]),
        );
        let fs = findings(&pod, &cfg());
        let f = fs.iter().find(|f| f.rule.id == "WIN507").expect("WIN507");
        assert_eq!(f.pointer, "/spec/ephemeralContainers/0/image");
        assert_eq!(f.severity, Severity::Warning);
        assert!(f.message.contains("kubectl debug"), "{}", f.message);
    }

    #[test]
    fn win501_severity_by_repository() {
        // (image, severity) — nothing for pinned images or Linux-only ones (WIN507's business).
        let cases: &[(&str, Option<Severity>)] = &[
            (
                "mcr.microsoft.com/windows/servercore",
                Some(Severity::Error),
            ),
            (
                "mcr.microsoft.com/windows/server:latest",
                Some(Severity::Error),
            ),
            ("mcr.microsoft.com/windows", Some(Severity::Error)),
            ("microsoft/windowsservercore", Some(Severity::Error)),
            ("microsoft/nanoserver:latest", Some(Severity::Error)),
            (
                "mcr.microsoft.com/windows/servercore/iis",
                Some(Severity::Warning),
            ),
            ("contoso/app", Some(Severity::Warning)),
            ("contoso/app:latest", Some(Severity::Warning)),
            ("contoso/app:1.0-ltsc2022", None),
            ("mcr.microsoft.com/windows/servercore:ltsc2022", None),
            ("mcr.microsoft.com/windows/servercore:latest@DIGEST", None),
            ("mcr.microsoft.com/windows/servercore@DIGEST", None),
        ];
        for (image, want) in cases {
            let pod = with_image(&image.replace("DIGEST", DIGEST));
            let got = findings(&pod, &cfg())
                .into_iter()
                .find(|f| f.rule.id == "WIN501")
                .map(|f| f.severity);
            assert_eq!(got, *want, "{image}");
        }
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
    fn hostprocess_containers_have_no_build_requirement() {
        let hp = |pod: Value| {
            let pod = set(pod, "/spec/hostNetwork", json!(true));
            set(
                pod,
                "/spec/securityContext/windowsOptions",
                json!({"hostProcess": true, "runAsUserName": "NT AUTHORITY\\SYSTEM"}),
            )
        };
        // Pod-level HostProcess: no WIN502, no WIN503.
        let old = hp(with_image("mcr.microsoft.com/windows/servercore:ltsc2019"));
        assert!(
            !ids(&old, &cfg()).contains(&"WIN502"),
            "{:?}",
            ids(&old, &cfg())
        );
        let unknown = hp(with_image("contoso/agent:1.0"));
        assert!(!ids(&unknown, &cfg()).contains(&"WIN503"));
        // No WIN501 either: the build of a HostProcess image does not matter, and :latest on it
        // is ordinary tag hygiene (the antrea-windows:latest HostProcess DaemonSet).
        let latest = hp(with_image("antrea/antrea-windows:latest"));
        assert!(!ids(&latest, &cfg()).contains(&"WIN501"));
        let base = hp(with_image("mcr.microsoft.com/windows/servercore"));
        assert!(!ids(&base, &cfg()).contains(&"WIN501"));
        // windows_exporter's shape: a nanoserver:1809 HostProcess init container beside a
        // HostProcess container: no WIN50x at all.
        let exporter = set(
            hp(with_image(
                "ghcr.io/prometheus-community/windows-exporter:latest",
            )),
            "/spec/initContainers",
            json!([{"name":"configure-firewall","image":"mcr.microsoft.com/windows/nanoserver:1809",
                    "command":["powershell"]}]),
        );
        assert!(
            !ids(&exporter, &target(&[WS2022]))
                .iter()
                .any(|id| id.starts_with("WIN50")),
            "{:?}",
            ids(&exporter, &cfg())
        );
        // Container-level HostProcess overrides a pod-level false.
        let pod = set(
            with_image("mcr.microsoft.com/windows/servercore:ltsc2019"),
            "/spec/containers/0/securityContext/windowsOptions/hostProcess",
            json!(true),
        );
        let sites = crate::model::workload::pod_sites(&pod);
        let c = sites[0].containers().next().unwrap();
        assert!(is_host_process(&sites[0], &c));
        let pod = set(
            pod,
            "/spec/securityContext/windowsOptions/hostProcess",
            json!(true),
        );
        let pod = set(
            pod,
            "/spec/containers/0/securityContext/windowsOptions/hostProcess",
            json!(false),
        );
        let sites = crate::model::workload::pod_sites(&pod);
        let c = sites[0].containers().next().unwrap();
        assert!(!is_host_process(&sites[0], &c));
    }

    /// A pod with `images` as its containers (`c0`, `c1`, …), declared Windows.
    fn pod_of(images: &[&str]) -> Value {
        let containers: Vec<Value> = images
            .iter()
            .enumerate()
            .map(|(n, i)| json!({"name": format!("c{n}"), "image": i}))
            .collect();
        set(winok(), "/spec/containers", json!(containers))
    }

    #[test]
    fn win503_once_per_pod_naming_every_image() {
        let pod = pod_of(&[
            "registry.k8s.io/sig-storage/livenessprobe:v2.15.0",
            "contoso/agent:1.0",
            "contoso/sidecar:2.1",
        ]);
        let fs = only(&pod, &cfg(), "WIN503");
        assert_eq!(fs.len(), 1, "{fs:?}");
        // At the first image concerned, naming each of them, advising manifest lists.
        assert_eq!(fs[0].pointer, "/spec/containers/1/image");
        let m = &fs[0].message;
        assert!(
            m.contains("container \"c1\" image contoso/agent:1.0"),
            "{m}"
        );
        assert!(
            m.contains("container \"c2\" image contoso/sidecar:2.1"),
            "{m}"
        );
        assert!(!m.contains("livenessprobe"), "{m}");
        assert!(m.contains("manifest list"), "{m}");
        assert!(m.contains("os.version 10.0.20348"), "{m}");
        assert!(!m.contains("tag Windows images with"), "{m}");
        assert_eq!(fs[0].severity, Severity::Info);
    }

    #[test]
    fn win503_silent_for_known_lists_latest_and_linux() {
        for image in [
            // Multi-OS manifest lists resolved per node build.
            "registry.k8s.io/sig-storage/csi-node-driver-registrar:v2.13.0",
            "k8s.gcr.io/sig-storage/livenessprobe:v2.7.0",
            "registry.k8s.io/e2e-test-images/agnhost:2.47",
            "registry.k8s.io/csi-secrets-store/driver:v1.4.7",
            "mcr.microsoft.com/oss/kubernetes-csi/livenessprobe:v2.10.0",
            "mcr.microsoft.com/oss/kubernetes-csi/azurefile-csi:v1.28.9",
            "gcr.io/k8s-staging-sig-storage/smbplugin:canary",
            "registry.k8s.io/pause:3.9",
            "mcr.microsoft.com/oss/kubernetes/pause:3.9",
            "mcr.microsoft.com/dotnet/framework/sdk:4.8",
            "mcr.microsoft.com/dotnet/framework/samples:aspnetapp",
            "mcr.microsoft.com/windows/servercore/iis:windowsservercore",
            "mcr.microsoft.com/dotnet/aspnet:7.0",
            "golang:1.22",
            // :latest (WIN501 says it) and Linux-only images (WIN507).
            "contoso/app",
            "mcr.microsoft.com/windows/servercore:latest",
            "nginx:1.27",
            "mcr.microsoft.com/dotnet/aspnet:8.0",
            // Builds known from the reference or the table.
            "contoso/app:1.0-ltsc2022",
            "redis:3.0-nanoserver",
        ] {
            assert!(
                !ids(&with_image(image), &cfg()).contains(&"WIN503"),
                "{image}"
            );
        }
        for image in ["contoso/app:1.2", "e2eteam/pause:3.1", "calico/porter:1809"] {
            assert!(
                ids(&with_image(image), &cfg()).contains(&"WIN503"),
                "{image}"
            );
        }
        // Digest only: the advice is to keep the tag.
        let pinned = with_image(&format!("mcr.microsoft.com/windows/servercore@{DIGEST}"));
        let m = message(&pinned, &cfg(), "WIN503");
        assert!(m.contains("pinned by digest only"), "{m}");
        assert!(
            m.ends_with(&format!(
                "keep a tag that names the build next to the digest (mcr.microsoft.com/windows/servercore:ltsc2022@{DIGEST})"
            )),
            "{m}"
        );
        assert!(
            !ids(
                &with_image(&format!(
                    "mcr.microsoft.com/windows/servercore:ltsc2022@{DIGEST}"
                )),
                &cfg()
            )
            .contains(&"WIN503")
        );
    }

    #[test]
    fn win504_legacy_docker_hub() {
        let pod = with_image("microsoft/iis:windowsservercore-1709");
        let c = target(&[windows::V1709]);
        assert_eq!(ids(&pod, &c), ["WIN504"]);
        assert!(message(&pod, &c, "WIN504").contains("mcr.microsoft.com/windows/servercore/iis"));
        // Implicit latest: Docker Hub's microsoft/iis had images for 2016, 1709 and 1803 only,
        // so on Windows Server 2022 nodes it is a certain WIN502 (and WIN501 stays quiet).
        assert_eq!(
            ids(&with_image("microsoft/iis"), &cfg()),
            ["WIN502", "WIN504"]
        );
        assert_eq!(ids(&with_image("microsoft/iis"), &c), ["WIN501", "WIN504"]);
        assert_eq!(ids(&winok(), &cfg()), Vec::<&str>::new());
    }

    #[test]
    fn win504_names_the_successor_with_a_tag_that_exists() {
        let cases: &[(&str, &[Build], &str)] = &[
            (
                "microsoft/windowsservercore:1709",
                &[WS2022],
                "use mcr.microsoft.com/windows/servercore:ltsc2022",
            ),
            (
                "microsoft/nanoserver:sac2016",
                &[WS2019, WS2022],
                "use mcr.microsoft.com/windows/nanoserver:1809 or mcr.microsoft.com/windows/nanoserver:ltsc2022",
            ),
            (
                "microsoft/aspnet:4.7.1-windowsservercore-1709",
                &[WS2025],
                "use mcr.microsoft.com/dotnet/framework/aspnet:4.8.1-windowsservercore-ltsc2025",
            ),
            (
                "microsoft/dotnet:2.1-aspnetcore-runtime",
                &[WS2022],
                "its successor is mcr.microsoft.com/dotnet/aspnet (winlint knows no tag there for 10.0.20348 (ltsc2022))",
            ),
            (
                "microsoft/mssql-server-windows-developer:2017-latest",
                &[WS2022],
                "there is no Windows successor (mcr.microsoft.com/mssql/server is Linux-only)",
            ),
            (
                "microsoft/contoso-tool:1.0",
                &[WS2022],
                "look for its successor on mcr.microsoft.com",
            ),
        ];
        for (image, builds, want) in cases {
            let m = message(&with_image(image), &target(builds), "WIN504");
            assert!(m.ends_with(want), "{image}: {m}");
        }
    }

    #[test]
    fn t26_t33_images_on_legacy_targets() {
        // The image half of T26/T33: the legacy Docker Hub names are the only image finding.
        let legacy = |builds: &[Build], image: &str| {
            let mut c = target(builds);
            c.target.kubernetes = KubeVersion::new(1, 9);
            let pod = set(
                with_image(image),
                "/spec/containers/1",
                json!({"name":"b","image":image}),
            );
            ids(&pod, &c)
                .into_iter()
                .filter(|id| id.starts_with("WIN5"))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            legacy(&[windows::V1709], "microsoft/windowsservercore:1709"),
            ["WIN504"]
        );
        assert_eq!(
            legacy(&[WS2016], "microsoft/windowsservercore:ltsc2016"),
            ["WIN504"]
        );
    }

    #[test]
    fn win505_only_where_the_spelling_is_known() {
        let c = target(&[windows::V20H2, WS2019, WS2022]);
        for (image, fires) in [
            ("mcr.microsoft.com/windows/servercore:20h2", true),
            ("mcr.microsoft.com/windows/servercore:20H2", false),
            ("mcr.microsoft.com/windows/servercore:LTSC2019", true),
            ("python:3.12-WindowsServerCore-ltsc2022", true),
            ("microsoft/iis:NanoServer-sac2016", true),
            ("contoso/app:1.0-LTSC2019", false),
        ] {
            assert_eq!(
                ids(&with_image(image), &c).contains(&"WIN505"),
                fires,
                "{image}"
            );
        }
        let m = message(
            &with_image("mcr.microsoft.com/windows/servercore:20h2"),
            &c,
            "WIN505",
        );
        assert!(
            m.contains("Use mcr.microsoft.com/windows/servercore:20H2"),
            "{m}"
        );
    }

    #[test]
    fn win506_dates_and_targets() {
        let mut c = target(&[WS2019]);
        c.target.check_eol = true;
        c.target.today = Some("2025-06-01".into());
        let pod = with_image("mcr.microsoft.com/windows/servercore:ltsc2019");
        // Image and target are the same EOL build: one finding, at the image.
        let fs: Vec<Finding> = findings(&pod, &c)
            .into_iter()
            .filter(|f| f.rule.id == "WIN506")
            .collect();
        assert_eq!(fs.len(), 1, "{fs:?}");
        assert_eq!(fs[0].pointer, IMG);
        assert_eq!(fs[0].severity, Severity::Info);
        assert!(
            fs[0]
                .message
                .contains("mainstream support ended on 2024-01-09")
        );
        // Before the date: nothing.
        c.target.today = Some("2023-12-31".into());
        assert!(!ids(&pod, &c).contains(&"WIN506"));
        // Off by default.
        let mut off = target(&[WS2019]);
        off.target.today = Some("2030-01-01".into());
        assert!(!ids(&pod, &off).contains(&"WIN506"));
        // An EOL target build with a current image: reported once, at the pod spec.
        let mut mixed = target(&[windows::V1709, WS2022]);
        mixed.target.check_eol = true;
        mixed.target.today = Some("2025-06-01".into());
        let fs: Vec<Finding> = findings(&winok(), &mixed)
            .into_iter()
            .filter(|f| f.rule.id == "WIN506")
            .collect();
        assert_eq!(fs.len(), 1, "{fs:?}");
        assert_eq!(fs[0].pointer, "/spec");
        assert!(
            fs[0].message.contains("Semi-Annual Channel"),
            "{}",
            fs[0].message
        );
        // The system clock is used without target.today (20H2 ended in 2022).
        let mut clock = target(&[windows::V20H2]);
        clock.target.check_eol = true;
        let sac = with_image("mcr.microsoft.com/windows/servercore:20H2");
        assert!(ids(&sac, &clock).contains(&"WIN506"));
    }

    #[test]
    fn civil_dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
        assert_eq!(civil_from_days(19_723), (2024, 1, 1));
        assert_eq!(civil_from_days(20_513), (2026, 3, 1));
        assert_eq!(civil_from_days(-1), (1969, 12, 31));
        assert_eq!(today_utc().len(), 10);
    }

    #[test]
    fn win507_linux_images() {
        for (image, fires) in [
            ("busybox:1.36", true),
            ("nginx:1.27", true),
            ("python:3.12-alpine", true),
            ("nginx:1.14-alpine", true),
            ("docker.io/library/nginx:1.14-alpine", true),
            ("registry.k8s.io/kube-apiserver:v1.30.0", true),
            ("nginx:1.27-windowsservercore-ltsc2022", false),
            ("registry.k8s.io/pause:3.9", false),
            ("registry.k8s.io/e2e-test-images/agnhost:2.47", false),
            ("golang:1.22", false),
            // Name heuristics only for Docker Hub official images: these are Windows builds.
            ("e2eteam/nginx:1.14-alpine", false),
            ("e2eteam/busybox:1.29", false),
            (
                "k8sprow.azurecr.io/kubernetes-e2e-test-images/nginx:1.14-alpine",
                false,
            ),
            (
                "gcr.io/kubernetes-e2e-test-images/httpd:2.4.38-alpine",
                false,
            ),
            ("registry.k8s.io/e2e-test-images/nginx:1.14-4", false),
            ("registry.k8s.io/e2e-test-images/busybox:1.29-4", false),
            ("contoso/app:1.0-alpine", false),
            ("quay.io/busybox:1", false),
        ] {
            let pod = set(
                winok(),
                "/spec/containers/1",
                json!({"name":"side","image":image}),
            );
            assert_eq!(ids(&pod, &cfg()).contains(&"WIN507"), fires, "{image}");
        }
    }

    #[test]
    fn win507_certain_linux_tags_are_errors_with_the_windows_tag() {
        // .NET 8+: the plain tags are Linux-only; the pull fails on Windows.
        let pod = with_image("mcr.microsoft.com/dotnet/aspnet:8.0");
        let fs = only(&pod, &cfg(), "WIN507");
        assert_eq!(fs.len(), 1, "{fs:?}");
        assert_eq!(fs[0].severity, Severity::Error);
        assert!(
            fs[0]
                .message
                .contains("no matching manifest for windows/amd64")
        );
        assert!(
            fs[0]
                .message
                .ends_with("use mcr.microsoft.com/dotnet/aspnet:8.0-nanoserver-ltsc2022"),
            "{}",
            fs[0].message
        );
        let fix = fs[0].fix.as_ref().expect("opt-in fix");
        assert_eq!(fix.safety, FixSafety::OptIn);
        assert_eq!(
            fixed(&pod, &cfg(), "WIN507")["spec"]["containers"][0]["image"],
            json!("mcr.microsoft.com/dotnet/aspnet:8.0-nanoserver-ltsc2022")
        );
        // Two node builds: both tags named, no fix (which one is the user's call).
        let two = only(&pod, &target(&[WS2019, WS2022]), "WIN507");
        assert!(two[0].fix.is_none());
        assert!(two[0].message.ends_with(
            "use mcr.microsoft.com/dotnet/aspnet:8.0-nanoserver-1809 or mcr.microsoft.com/dotnet/aspnet:8.0-nanoserver-ltsc2022"
        ), "{}", two[0].message);
        for image in [
            "mcr.microsoft.com/dotnet/sdk:9.0",
            "mcr.microsoft.com/dotnet/runtime:10.0",
            "mcr.microsoft.com/dotnet/aspnet",
            "mcr.microsoft.com/dotnet/aspnet:latest",
            "mcr.microsoft.com/dotnet/aspnet:8.0-alpine",
        ] {
            assert_eq!(
                sev(&with_image(image), &cfg(), "WIN507"),
                Severity::Error,
                "{image}"
            );
        }
        // ≤ 7.0 plain tags are multi-OS; suffixed tags are Windows.
        for image in [
            "mcr.microsoft.com/dotnet/aspnet:7.0",
            "mcr.microsoft.com/dotnet/aspnet:6.0",
            "mcr.microsoft.com/dotnet/aspnet:8.0-nanoserver-ltsc2022",
            "mcr.microsoft.com/dotnet/aspnet:8.0-windowsservercore-ltsc2022",
        ] {
            assert!(ids(&with_image(image), &cfg()).is_empty(), "{image}");
        }
        // pause before 3.4 is Linux-only.
        let m = message(&with_image("registry.k8s.io/pause:3.1"), &cfg(), "WIN507");
        assert!(m.ends_with("use registry.k8s.io/pause:3.6 or later"), "{m}");
        assert_eq!(
            sev(&with_image("k8s.gcr.io/pause:3.2"), &cfg(), "WIN507"),
            Severity::Error
        );
        // The heuristic list stays a warning, and suggests a Nano Server tag that exists.
        let m = message(&with_image("busybox:1.36"), &target(&[WS2019]), "WIN507");
        assert!(
            m.contains("mcr.microsoft.com/windows/nanoserver:1809"),
            "{m}"
        );
        assert_eq!(
            sev(&with_image("busybox:1.36"), &cfg(), "WIN507"),
            Severity::Warning
        );
    }

    #[test]
    fn win507_leaves_undeclared_mixed_pods_to_win008() {
        // No spec.os, no selector, a Windows image beside busybox: WIN008's case.
        let pod = json!({"apiVersion":"v1","kind":"Pod","metadata":{"name":"m"},"spec":{
            "tolerations":[{"key":"os","operator":"Equal","value":"windows","effect":"NoSchedule"}],
            "containers":[{"name":"a","image":"mcr.microsoft.com/windows/servercore:ltsc2022"},
                          {"name":"b","image":"busybox:1.36"}]}});
        assert!(!ids(&pod, &cfg()).contains(&"WIN507"));
        // Declared Windows by spec.os: WIN507.
        let declared = set(pod, "/spec/os", json!({"name":"windows"}));
        assert!(ids(&declared, &cfg()).contains(&"WIN507"));
        // Windows by windowsOptions only, with only a Linux image: WIN008 cannot fire, WIN507 does.
        let opts = json!({"apiVersion":"v1","kind":"Pod","metadata":{"name":"o"},"spec":{
            "securityContext":{"windowsOptions":{"runAsUserName":"ContainerUser"}},
            "containers":[{"name":"b","image":"busybox:1.36"}]}});
        assert!(ids(&opts, &cfg()).contains(&"WIN507"));
    }

    #[test]
    fn linux_pods_get_no_image_findings() {
        // T01/T03 shapes, and a Linux pod with an untagged image: the engine gates WIN5xx.
        for pod in [
            json!({"kind":"Pod","metadata":{"name":"a"},"spec":{"containers":[{"name":"web","image":"nginx:1.25"}]}}),
            json!({"kind":"Pod","metadata":{"name":"b"},"spec":{"containers":[{"name":"a","image":"alpine"}]}}),
            json!({"kind":"Pod","metadata":{"name":"c"},"spec":{"containers":[{"name":"a","image":"contoso/app"}]}}),
            json!({"kind":"Pod","metadata":{"name":"d"},"spec":{"containers":[{"name":"a","image":"mcr.microsoft.com/dotnet/aspnet:8.0"}]}}),
        ] {
            assert!(
                !ids(&pod, &cfg()).iter().any(|id| id.starts_with("WIN5")),
                "{pod}"
            );
        }
    }

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
        assert!(
            f.message.contains("init container \"setup\""),
            "{}",
            f.message
        );
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
