//! WIN5xx: container images against the target's Windows builds (shared/rules.md §2.6, §5 and
//! the WIN508 row). The image facts come from [`crate::model::image::analyze`], computed once per
//! container by the engine (`eval.images`).

use super::Rule;
use crate::model::Eval;
use crate::model::classify::Source;
use crate::model::image::ImageInfo;
use crate::model::meta::{Fact, Mutation, RuleOs};
use crate::model::placement;
use crate::model::pod::is_host_process;
use crate::model::windows::{self, Build, Channel, Isolation};
use crate::model::workload::{ContainerRef, PodSite};
use crate::model::{Finding, RuleMeta, Severity};

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
// Shared helpers

/// The isolation the pod's containers get: a RuntimeClass in the context whose handler says
/// (`runhcs-wcow-hypervisor*` / `runhcs-wcow-process*`), else Hyper-V when the pod names the
/// target's Hyper-V RuntimeClass, else the target's isolation.
pub fn pod_isolation(site: &PodSite, eval: &Eval) -> Isolation {
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

/// `10.0.20348 (ltsc2022), 10.0.26100 (ltsc2025)`.
fn describe_builds(builds: &[Build]) -> String {
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
        .join(", ")
}

/// The image tag tokens that suit the target's nodes (`ltsc2022`), deduplicated, in order.
fn target_tokens(eval: &Eval) -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    for t in eval.target.windows_builds.iter().map(|b| b.image_token()) {
        if !v.contains(&t) {
            v.push(t);
        }
    }
    if v.is_empty() {
        v.push(windows::WS2022.token());
    }
    v
}

/// "use X or Y": the image re-tagged for the target's builds, or a generic hint.
fn suggest_retag(info: &ImageInfo, eval: &Eval) -> String {
    let tokens = target_tokens(eval);
    let names: Vec<String> = tokens.iter().filter_map(|t| info.retag(t)).collect();
    if names.is_empty() {
        format!("use an image built for {}", tokens.join(" or "))
    } else {
        format!("use {}", names.join(" or "))
    }
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
Use a tag that names the Windows build of your nodes:
`mcr.microsoft.com/windows/servercore:ltsc2022`, or pin a digest.
"#,
    fix: None,
    source: "MS-COMPAT, seed",
    applies: "all",
    os: RuleOs::Windows,
    context: &[],
    mutation: Mutation::DEFAULT,
};

fn image_untagged_or_latest(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    let token = &target_tokens(eval)[0];
    images(eval)
        .filter(|(_, _, i)| i.latest && !i.linux)
        .map(|(c, img, i)| {
            let r = i.reference.as_ref().expect("parsed");
            let how = if r.tag.is_none() {
                "has no tag (so :latest)"
            } else {
                "uses the :latest tag"
            };
            let f = |msg: String| Finding::new(&WIN501, image_ptr(site, c), msg);
            if i.ms_base {
                f(format!(
                    "{} image {img} {how}, which Microsoft stopped publishing for its Windows base images on April 16, 2019: the pull fails. Use the tag of the nodes' Windows build, e.g. {}:{token}",
                    c.label(),
                    r.familiar()
                ))
                .severity(Severity::Error)
            } else {
                f(format!(
                    "{} image {img} {how}: what it resolves to changes with every push and may be built for another Windows build than the nodes' ({}). Pin a tag that names the Windows build (e.g. one ending in -{token}) or a digest",
                    c.label(),
                    describe_builds(&eval.target.windows_builds)
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
derived) and checks it against the target's `windowsBuilds` under the pod's isolation:

* process isolation (the default, and the only mode upstream Kubernetes supports): the image
  build must equal the host build, except that Windows Server 2025 and 23H2 hosts also run
  Windows Server 2022 (`ltsc2022`) images;
* Hyper-V isolation (the target's `isolation: hyperv`, the target's Hyper-V RuntimeClass, or a
  RuntimeClass with handler `runhcs-wcow-hypervisor`): the image build must not be newer than
  the host's.

HostProcess containers are skipped: they have no build requirement. When the reference has both
a tag and a digest the runtime uses the digest, so the finding is a warning.

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
Use the image variant built for the nodes' build (`:ltsc2022`), or add nodes of the image's build
(and pin the pod to them with `node.kubernetes.io/windows-build`).
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
    let Some(hosts) = p.host_builds(eval.target) else {
        return Vec::new();
    };
    if hosts.builds.is_empty() {
        return Vec::new();
    }
    let iso = pod_isolation(site, eval);
    // The WS2016 revision check of §2.6 needs the hosts' revisions, which the target does not
    // carry (node labels have none either), so only builds are compared.
    let mut out = Vec::new();
    for (c, img, i) in images(eval) {
        let Some(b) = i.build else { continue };
        if is_host_process(site, c) || !windows::compatible_hosts(b, &hosts.builds, iso).is_empty()
        {
            continue;
        }
        let product = b.product();
        let why = match iso {
            Isolation::Process => format!(
                "but {} run {}; with process isolation the image and host builds must match",
                hosts.who(),
                describe_builds(&hosts.builds)
            ),
            Isolation::Hyperv => format!(
                "newer than {}' {}; Hyper-V isolation runs only images of the host's build or older",
                hosts.who(),
                describe_builds(&hosts.builds)
            ),
        };
        let mut msg = format!(
            "{} image {img} is built for {} {why}: {}",
            c.label(),
            b.named(),
            suggest_retag(i, eval)
        );
        match placement::hyperv_runtime_class_for(site, eval.target, eval.context, &[b])
            .filter(|_| iso == Isolation::Process)
        {
            Some(rc) => msg.push_str(&format!(
                ", or run it under Hyper-V isolation with runtimeClassName: {rc}"
            )),
            None => msg.push_str(&format!(" or add {product} nodes")),
        }
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
    summary: "Windows pod image whose Windows build cannot be derived from its reference",
    docs: r#"## What it does
Reports images of a Windows pod whose Windows build cannot be derived from the reference:
digest-only references, multi-OS-version tags (`mcr.microsoft.com/windows/servercore/iis:latest`,
`mcr.microsoft.com/dotnet/framework/sdk:4.8`), multi-OS tags (`mcr.microsoft.com/dotnet/aspnet:8.0`,
`registry.k8s.io/pause:3.9`), and tags that name no build (`contoso/app:1.2`). Bare numbers such as
`:1809` count as build tokens only in Microsoft base-image repositories. Known Linux-only images
(WIN507) and HostProcess containers are not reported.

## Why is this bad?
winlint, the webhook's `windows-build` pin and the scheduler cannot match such an image to nodes:
if it has no variant for a node's build, the mismatch shows only when the pod starts. A
multi-OS-version tag works only where every node build has a variant.

## Example
```yaml
containers:
- name: web
  image: mcr.microsoft.com/windows/servercore/iis   # :latest spans 2016 … 2025
```

## Fix
Use a tag that names the build (`mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2022`);
keep it next to a digest (`…:ltsc2022@sha256:…`) when you pin by digest.
"#,
    fix: None,
    source: "IIS, DNF",
    applies: "all",
    os: RuleOs::Windows,
    context: &[],
    mutation: Mutation::DEFAULT,
};

fn image_build_unknown(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    let token = &target_tokens(eval)[0];
    let hosts = describe_builds(&eval.target.windows_builds);
    images(eval)
        .filter(|(c, _, i)| i.build.is_none() && !i.linux && !is_host_process(site, c))
        .map(|(c, img, i)| {
            let r = i.reference.as_ref().expect("parsed");
            let example = if i.ms_base {
                format!("{}:{token}", r.familiar())
            } else {
                format!("a tag ending in -{token}")
            };
            let what = if r.tag.is_none() && r.digest.is_some() {
                format!(
                    "is pinned by digest only, so its Windows build cannot be checked against the target nodes' {hosts}; keep a tag that names the build next to the digest ({}:{token}@{})",
                    r.familiar(),
                    r.digest.as_deref().unwrap_or("")
                )
            } else if i.multi {
                format!(
                    "is a multi-OS or multi-OS-version tag: each node pulls the variant of its own build, so the image cannot be checked against the target nodes' {hosts} and runs only where a variant exists; use a tag that names the build (e.g. one with {token})"
                )
            } else if i.latest {
                format!(
                    "is :latest, which names no Windows build, so it cannot be checked against the target nodes' {hosts}; use a tag that names the build (e.g. {example})"
                )
            } else {
                format!(
                    "names no Windows build in its tag, so it cannot be checked against the target nodes' {hosts}; tag Windows images with the build they are based on (e.g. {example})"
                )
            };
            Finding::new(
                &WIN503,
                image_ptr(site, c),
                format!("{} image {img} {what}", c.label()),
            )
        })
        .collect()
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
lack years of security fixes and have no tags for current Windows builds.

## Example
```yaml
containers:
- name: web
  image: microsoft/iis:windowsservercore-1709
```

## Fix
Use the MCR name: `mcr.microsoft.com/windows/servercore` (for `microsoft/windowsservercore`),
`mcr.microsoft.com/windows/nanoserver`, `mcr.microsoft.com/windows/servercore/iis`,
`mcr.microsoft.com/dotnet/framework/{runtime,sdk,aspnet,wcf}`, with a tag for your nodes' build.
"#,
    fix: None,
    source: "MS-COMPAT, seed",
    applies: "all",
    os: RuleOs::Windows,
    context: &[],
    mutation: Mutation::DEFAULT,
};

fn legacy_dockerhub_microsoft(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    images(eval)
        .filter_map(|(c, img, i)| {
            let mcr = i.legacy_dockerhub.as_deref()?;
            let instead = if mcr.contains('/') {
                format!("use {mcr}")
            } else {
                format!("use its {mcr} counterpart")
            };
            Some(Finding::new(
                &WIN504,
                image_ptr(site, c),
                format!(
                    "{} image {img} comes from Docker Hub's microsoft/ repositories, which Microsoft deprecated when it moved its images to mcr.microsoft.com (no updates since): {instead}, with a tag for the nodes' Windows build",
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
    let today = eval.target.today.clone().unwrap_or_else(today_utc);
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
    for &b in &eval.target.windows_builds {
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
    summary: "Known Linux-only image (busybox, alpine, nginx, *-alpine, …) in a Windows pod",
    docs: r#"## What it does
Finds images known to exist for Linux only in a pod that is Windows: Docker official `busybox`,
`alpine`, `ubuntu`, `debian`, `centos`, `fedora`, `nginx` (and a few other distributions), any
`*-alpine` tag, `gcr.io/distroless/*`, and the Linux-only `registry.k8s.io` images (control plane,
CoreDNS, ingress-nginx, metrics-server, …; not `pause`, the e2e test images or the CSI sidecars,
which have Windows variants). The list is deliberately short: an image not on it is never called
Linux-only. A pod whose OS is not declared (no `spec.os`, no OS selector) and that also has a
Windows image is reported by WIN008 instead.

## Why is this bad?
The container cannot start on a Windows node: the pull finds no `windows/amd64` image. The usual
source is `kubectl debug` adding a `busybox` ephemeral container to a Windows pod.

## Example
```yaml
ephemeralContainers:
- name: debugger
  image: busybox:1.36
```

## Fix
Use a Windows image of the node's build, e.g. `mcr.microsoft.com/windows/nanoserver:ltsc2022`
(`kubectl debug -it POD --image=mcr.microsoft.com/windows/nanoserver:ltsc2022`).
"#,
    fix: None,
    source: "K-INTRO",
    applies: "all",
    os: RuleOs::Windows,
    context: &[],
    mutation: Mutation::DEFAULT,
};

fn linux_image_in_windows_pod(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    // WIN008 covers a pod with undeclared OS mixing Windows and Linux images; report here what
    // it does not, so one image is not reported twice.
    let declared = eval.class.declared_by(Source::OsField).is_some()
        || eval.class.declared_by(Source::Selector).is_some();
    if !declared && eval.images.iter().any(|(_, i)| i.windows) {
        return Vec::new();
    }
    let token = &target_tokens(eval)[0];
    images(eval)
        .filter(|(_, _, i)| i.linux)
        .map(|(c, img, _)| {
            let debug = if c.list == "ephemeralContainers" {
                format!(" (kubectl debug --image=mcr.microsoft.com/windows/nanoserver:{token})")
            } else {
                String::new()
            };
            Finding::new(
                &WIN507,
                image_ptr(site, c),
                format!(
                    "{} uses {img}, a Linux-only image, in a Windows pod: Windows nodes cannot run it (the pull finds no windows/amd64 image). Use a Windows image such as mcr.microsoft.com/windows/nanoserver:{token}{debug}",
                    c.label()
                ),
            )
        })
        .collect()
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
        .filter_map(|(c, img, i)| Some((c, img, i, i.build?)))
        .collect();
    let mut builds: Vec<Build> = built.iter().map(|t| t.3).collect();
    builds.sort();
    builds.dedup();
    if builds.len() < 2 {
        return Vec::new();
    }
    let iso = pod_isolation(site, eval);
    let newest = *builds.last().expect("two builds");
    let list = built
        .iter()
        .map(|(c, img, _, b)| format!("{} {img} ({b})", c.label()))
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
                    !windows::compatible_hosts(b, &eval.target.windows_builds, Isolation::Process)
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
    use crate::rules::testutil::{cfg, findings, ids, set, winok};
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
            (
                "T36",
                with_image("mcr.microsoft.com/windows/servercore:latest"),
                cfg(),
                &["WIN501", "WIN503"],
            ),
            (
                "T37",
                with_image("mcr.microsoft.com/windows/nanoserver"),
                cfg(),
                &["WIN501", "WIN503"],
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
        assert_eq!(sev(&t36, &cfg(), "WIN503"), Severity::Info);
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
            m.contains("newer than the target nodes' 10.0.20348 (ltsc2022)"),
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

    #[test]
    fn win503_reasons() {
        let cases: &[(&str, Option<&str>)] = &[
            ("mcr.microsoft.com/windows/servercore/iis", Some("multi-OS")),
            (
                "mcr.microsoft.com/dotnet/framework/sdk:4.8",
                Some("multi-OS"),
            ),
            ("mcr.microsoft.com/dotnet/aspnet:8.0", Some("multi-OS")),
            ("registry.k8s.io/pause:3.9", Some("multi-OS")),
            ("contoso/app:1.2", Some("names no Windows build in its tag")),
            ("contoso/app", Some("is :latest")),
            (
                "mcr.microsoft.com/windows/servercore:latest",
                Some("(e.g. mcr.microsoft.com/windows/servercore:ltsc2022)"),
            ),
            ("redis:3.0-nanoserver", Some("names no Windows build")),
            (
                "mcr.microsoft.com/windows/servercore@DIGEST",
                Some("pinned by digest only"),
            ),
            ("mcr.microsoft.com/windows/servercore:ltsc2022@DIGEST", None),
            ("contoso/app:1.0-ltsc2022", None),
            ("nginx:1.27", None),
        ];
        for (image, want) in cases {
            let pod = with_image(&image.replace("DIGEST", DIGEST));
            let got = findings(&pod, &cfg())
                .into_iter()
                .find(|f| f.rule.id == "WIN503")
                .map(|f| f.message);
            match (want, got) {
                (None, None) => {}
                (Some(w), Some(m)) => assert!(m.contains(w), "{image}: {m}"),
                (w, g) => panic!("{image}: want {w:?}, got {g:?}"),
            }
        }
    }

    #[test]
    fn win504_legacy_docker_hub() {
        let pod = with_image("microsoft/iis:windowsservercore-1709");
        let c = target(&[windows::V1709]);
        assert_eq!(ids(&pod, &c), ["WIN504"]);
        assert!(message(&pod, &c, "WIN504").contains("mcr.microsoft.com/windows/servercore/iis"));
        // Implicit latest, unknown build: the K-EX deploy-resource.yaml image.
        assert_eq!(
            ids(&with_image("microsoft/iis"), &cfg()),
            ["WIN501", "WIN503", "WIN504"]
        );
        assert_eq!(ids(&winok(), &cfg()), Vec::<&str>::new());
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
            ("registry.k8s.io/kube-apiserver:v1.30.0", true),
            ("nginx:1.27-windowsservercore-ltsc2022", false),
            ("registry.k8s.io/pause:3.9", false),
            ("registry.k8s.io/e2e-test-images/agnhost:2.47", false),
            ("golang:1.22", false),
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
