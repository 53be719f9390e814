//! What winlint knows about real images: the Microsoft repositories and the tags they publish
//! per Windows build, the MCR successors of the retired Docker Hub `microsoft/*` repositories,
//! the repositories that publish multi-OS manifest lists, and tags with no Windows image at all.
//!
//! Every image winlint suggests comes from here, so it never suggests one that does not exist
//! (issue 9: `microsoft/windowsservercore:ltsc2022` and `…-windows-ltsc2022-amd64` sidecar tags
//! never existed). Where this table knows nothing, the rules say "an image built for 10.0.20348
//! (ltsc2022)" and name no tag.
//!
//! Sources (the research notes of issue 9 give the details and confidence of each row):
//! Microsoft's base-image and version-compatibility docs (MS-COMPAT, MS-BASE), the READMEs of
//! microsoft/iis-docker, microsoft/dotnet-framework-docker and dotnet/dotnet-docker (.NET 8 made
//! the plain version tags Linux-only: dotnet/dotnet-docker#4492), kubernetes/kubernetes
//! `build/pause/CHANGELOG.md` (Windows entries per pause version), kubernetes-csi/csi-release-tools
//! and the e2e `BASEIMAGE` files (multi-OS lists), docker-library repo-info for `redis` (2017
//! Windows tags built on 10.0.14393).
//!
//! The functions take the parts of a parsed reference: `registry` (`docker.io`,
//! `mcr.microsoft.com`, …), `repository` (Docker Hub official images with `library/`) and `tag`,
//! so that `model::image`, which parses references, can use this module.

use std::fmt;

use super::windows::{self, Build, Isolation, V20H2, V1709, V1803, WS2016, WS2019, WS2022, WS2025};

const V1903: Build = Build(18362);
const V1909: Build = Build(18363);
const V2004: Build = Build(19041);

const DOCKER_HUB: &str = "docker.io";
const MCR: &str = "mcr.microsoft.com";

/// What the table knows about the Windows images behind a reference whose tag names no build.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Platforms {
    /// A manifest list whose Windows entries are built for exactly these builds (containerd
    /// pulls the entry a node can run).
    Windows(&'static [Build]),
    /// A manifest list with Windows entries that this table does not map to builds.
    WindowsUnmapped,
    /// A single-OS Windows image of this build, although its tag names none.
    Single(Build),
    /// No Windows image at all: the pull fails on a Windows node.
    LinuxOnly(LinuxOnly),
    /// An image that runs only as a HostProcess container.
    HostProcessOnly,
}

/// Why a tag has no Windows image.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinuxOnly {
    /// `mcr.microsoft.com/dotnet/{runtime,aspnet,sdk}`: Windows images only under tags with a
    /// `nanoserver-…`/`windowsservercore-…` suffix; since .NET 8 the plain version tags are Linux.
    Dotnet,
    /// `registry.k8s.io/pause` before 3.4.
    Pause,
    /// `mcr.microsoft.com/dotnet/samples:{dotnetapp,aspnetapp}-<linux variant>`: each platform
    /// of the samples is also tagged alone, and only the `…-nanoserver-<release>` ones are
    /// Windows.
    Samples,
    /// `docker.io/bitnami/<app>:<version>-debian-<n>-r<m>`: a Debian Linux image.
    Bitnami,
}

impl LinuxOnly {
    /// Why, for a message.
    pub fn why(self) -> &'static str {
        match self {
            LinuxOnly::Dotnet => {
                "Microsoft publishes the Windows .NET images only under tags with a nanoserver-… or windowsservercore-… suffix, and since .NET 8 the plain tags (8.0, 9.0, 10.0, latest) are Linux-only"
            }
            LinuxOnly::Pause => "pause images before 3.4 were built for Linux only",
            LinuxOnly::Bitnami => {
                "Bitnami's -debian-<n> tags are built FROM bitnami/minideb, a Debian Linux image"
            }
            LinuxOnly::Samples => {
                "the .NET samples publish Windows images only under tags with a nanoserver-… suffix; the other platform tags (alpine, …) are Linux"
            }
        }
    }
}

/// A Docker Hub official image whose tags are plain versions or `latest` and whose shared tags
/// include Windows entries (`golang:1.22` → windowsservercore and nanoserver variants).
const MULTI_OS_OFFICIAL: &[&str] = &[
    "golang",
    "python",
    "eclipse-temurin",
    "mongo",
    "hello-world",
];

/// Repositories (prefixes of `registry/repository`) that publish multi-OS manifest lists with
/// Windows entries: the Kubernetes CSI sidecars and drivers, the e2e test images, the Secrets
/// Store CSI driver, csi-proxy, AKS's mirrors, the AWS EBS CSI driver, Azure's cloud-node-manager.
const MULTI_OS_PREFIXES: &[&str] = &[
    "registry.k8s.io/sig-storage/",
    "k8s.gcr.io/sig-storage/",
    "registry.k8s.io/e2e-test-images/",
    "k8s.gcr.io/e2e-test-images/",
    "registry.k8s.io/csi-secrets-store/",
    "k8s.gcr.io/csi-secrets-store/",
    "mcr.microsoft.com/oss/kubernetes-csi/",
    "gcr.io/k8s-staging-sig-storage/",
    "ghcr.io/kubernetes-sigs/sig-windows/csi-proxy",
    "mcr.microsoft.com/oss/kubernetes/pause",
    // The Windows node DaemonSets of the cloud providers' own manifests use the Linux tag:
    // aws-ebs-csi-driver's Makefile builds `ALL_OSVERSION_windows ?= ltsc2019 ltsc2022` into the
    // release list; cloud-provider-azure's examples/out-of-tree/cloud-node-manager.yaml runs the
    // plain release tag on Windows nodes.
    "public.ecr.aws/ebs-csi-driver/aws-ebs-csi-driver",
    "mcr.microsoft.com/oss/kubernetes/azure-cloud-node-manager",
];

/// `registry/repository` starts with one of `prefixes` (a prefix without a trailing `/` is a
/// whole repository).
fn under(registry: &str, repository: &str, prefixes: &[&str]) -> bool {
    prefixes.iter().any(|p| {
        let Some(rest) = p.strip_prefix(registry).and_then(|r| r.strip_prefix('/')) else {
            return false;
        };
        if rest.ends_with('/') {
            repository.starts_with(rest)
        } else {
            repository == rest
        }
    })
}

/// Current releases of these repositories are multi-OS manifest lists with Windows entries for
/// 1809 and ltsc2022 (csi-release-tools' default platforms, the e2e `BASEIMAGE` files, the Azure
/// CSI drivers' `ALL_OSVERSIONS.windows`): old tags that name one Windows build are replaced by a
/// current release, not by another build's tag.
pub fn publishes_multi_os_lists(registry: &str, repository: &str) -> bool {
    under(registry, repository, MULTI_OS_PREFIXES)
}

/// The Windows tokens of a tag (the OS words; the builds are `model::image`'s business).
fn windows_word(tag: &str) -> bool {
    let t = tag.to_ascii_lowercase();
    t.contains("nanoserver") || t.contains("windowsservercore")
}

/// A version `3.10.1` → `[3, 10, 1]`; `None` for anything that is not dotted numbers.
fn version(s: &str) -> Option<Vec<u32>> {
    s.split('.').map(|p| p.parse().ok()).collect()
}

/// The leading version of a tag: `4.8-20240213-windowsservercore-ltsc2022` → `4.8`,
/// `8.0.100-nanoserver-1809` → `8.0.100`.
fn leading_version(tag: &str) -> Option<&str> {
    let v = tag.split('-').next()?;
    version(v).map(|_| v)
}

/// A tag that is a plain version (`8.0`, `8.0.1`, `10.0.0-preview.3`, `1.22`).
fn plain_version(tag: &str) -> bool {
    let (v, pre) = match tag.split_once('-') {
        Some((v, pre)) => (v, Some(pre)),
        None => (tag, None),
    };
    version(v).is_some()
        && pre.is_none_or(|p| {
            ["preview.", "rc."]
                .iter()
                .any(|k| p.strip_prefix(k).is_some_and(|n| version(n).is_some()))
        })
}

/// What the table knows about `registry/repository:tag` when the tag names no Windows build
/// (`None`: nothing).
pub fn platforms(registry: &str, repository: &str, tag: Option<&str>) -> Option<Platforms> {
    let latest = tag.is_none_or(|t| t == "latest");
    match (registry, repository) {
        (MCR, "windows/servercore/iis") => match tag {
            _ if latest => Some(Platforms::Windows(&[WS2016, WS2019, WS2022, WS2025])),
            Some("windowsservercore") => Some(Platforms::WindowsUnmapped),
            _ => None,
        },
        (MCR, "oss/kubernetes/windows-host-process-containers-base-image") => {
            Some(Platforms::HostProcessOnly)
        }
        // Built FROM the HostProcess base image (windows_exporter's Dockerfile).
        ("ghcr.io", "prometheus-community/windows-exporter") => Some(Platforms::HostProcessOnly),
        (MCR, r) if framework_kind(r).is_some() => match tag.unwrap_or("latest") {
            "latest" | "4.8" | "3.5" => Some(Platforms::Windows(&[WS2016, WS2019, WS2022])),
            "4.8.1" => Some(Platforms::Windows(&[WS2022, WS2025])),
            _ => Some(Platforms::WindowsUnmapped),
        },
        (MCR, "dotnet/framework/samples") => Some(Platforms::WindowsUnmapped),
        (MCR, "dotnet/samples") => dotnet_samples(tag),
        (MCR, "dotnet/runtime" | "dotnet/aspnet" | "dotnet/sdk") => {
            if tag.is_some_and(windows_word) {
                return None;
            }
            match tag.filter(|t| plain_version(t)) {
                _ if latest => Some(Platforms::LinuxOnly(LinuxOnly::Dotnet)),
                None => Some(Platforms::LinuxOnly(LinuxOnly::Dotnet)),
                Some(t) => match version(t.split('-').next()?)?.first()? {
                    8.. => Some(Platforms::LinuxOnly(LinuxOnly::Dotnet)),
                    6 | 7 => Some(Platforms::Windows(&[WS2019, WS2022])),
                    _ => Some(Platforms::WindowsUnmapped),
                },
            }
        }
        (MCR, "powershell") if tag.is_none_or(|t| t == "latest" || t == "lts") => {
            Some(Platforms::WindowsUnmapped)
        }
        ("registry.k8s.io" | "k8s.gcr.io", "pause") => pause_platforms(tag?),
        // bitnami/containers: every `<app>/<branch>/debian-<n>/Dockerfile` is `FROM
        // docker.io/bitnami/minideb:<debian release>` with `OS_NAME="linux"` (postgresql/16/debian-12
        // at 0191828691ccfad53afb58d918ce2dd3105e1f6b); the tag names the flavour
        // (`tags-info.yaml`: `16-debian-12`, and the immutable `16.3.0-debian-12-r19`).
        (DOCKER_HUB, r)
            if r.starts_with("bitnami/")
                && tag.is_some_and(|t| t.contains("-debian-") || t.starts_with("debian-")) =>
        {
            Some(Platforms::LinuxOnly(LinuxOnly::Bitnami))
        }
        (DOCKER_HUB, "library/redis") if tag.is_some_and(windows_word) => {
            Some(Platforms::Single(WS2016))
        }
        (DOCKER_HUB, "microsoft/iis") if latest => {
            Some(Platforms::Windows(&[WS2016, V1709, V1803]))
        }
        (DOCKER_HUB, r)
            if r.strip_prefix("library/")
                .is_some_and(|n| MULTI_OS_OFFICIAL.contains(&n))
                && tag.is_none_or(|t| t == "latest" || version(t).is_some()) =>
        {
            Some(Platforms::WindowsUnmapped)
        }
        _ if publishes_multi_os_lists(registry, repository) => Some(Platforms::WindowsUnmapped),
        _ => None,
    }
}

// ---------------------------------------------------------------------------------------------
// mcr.microsoft.com/dotnet/samples

/// The tags of `mcr.microsoft.com/dotnet/samples` (dotnet/dotnet-docker `manifest.samples.json`
/// and README.samples.md at 3ed00b611cc88eaa5995525a0549a5703965cd02, 2026-08-21, and its history):
/// the shared tags `latest`, `dotnetapp`, `aspnetapp` and `{dotnetapp,aspnetapp}-10.0` are
/// manifest lists of Alpine amd64/arm32v7/arm64v8 entries and one Windows entry,
/// `nanoserver-ltsc2022` (the samples moved to .NET 10 in dotnet/dotnet-docker#6658 and #6662,
/// dropping `nanoserver-1809`, which the `-9.0` lists keep; Server 2025 images are not published
/// to MCR: #6553). `…-chiseled` lists are Ubuntu only. Each platform is also tagged alone:
/// `aspnetapp-nanoserver-ltsc2022` (a build `model::image` reads from the tag) or
/// `aspnetapp-10.0-alpine-amd64` (Linux).
fn dotnet_samples(tag: Option<&str>) -> Option<Platforms> {
    let tag = tag.unwrap_or("latest");
    if windows_word(tag) {
        return None;
    }
    if tag == "latest" {
        return Some(Platforms::Windows(&[WS2022]));
    }
    let rest = tag
        .strip_prefix("dotnetapp")
        .or_else(|| tag.strip_prefix("aspnetapp"))?;
    match rest.strip_prefix('-') {
        None if rest.is_empty() => Some(Platforms::Windows(&[WS2022])),
        Some("10.0") => Some(Platforms::Windows(&[WS2022])),
        Some("9.0") => Some(Platforms::Windows(&[WS2019, WS2022])),
        Some(v) if version(v).is_some() => Some(Platforms::WindowsUnmapped),
        // chiseled, alpine, …: every platform tag without an OS word is a Linux one.
        Some(_) => Some(Platforms::LinuxOnly(LinuxOnly::Samples)),
        None => None,
    }
}

// ---------------------------------------------------------------------------------------------
// registry.k8s.io/pause

/// The Windows entries of each pause version, oldest first (kubernetes/kubernetes
/// `build/pause/CHANGELOG.md`): Windows images since 3.4, ltsc2022 since 3.6, the Semi-Annual
/// builds dropped in 3.7 (1903, 1909, 2004) and 3.9 (20H2). Nothing newer than 3.10.1 is recorded
/// and no version has an ltsc2025 entry (Windows Server 2025 nodes run the ltsc2022 one).
const PAUSE: &[(&str, &[Build])] = &[
    ("3.4", &[WS2019, V1903, V1909, V2004]),
    ("3.4.1", &[WS2019, V1903, V1909, V2004, V20H2]),
    ("3.5", &[WS2019, V1903, V1909, V2004, V20H2]),
    ("3.6", &[WS2019, V1903, V1909, V2004, V20H2, WS2022]),
    ("3.7", &[WS2019, V20H2, WS2022]),
    ("3.8", &[WS2019, V20H2, WS2022]),
    ("3.9", &[WS2019, WS2022]),
    ("3.10", &[WS2019, WS2022]),
    ("3.10.1", &[WS2019, WS2022]),
];

fn pause_platforms(tag: &str) -> Option<Platforms> {
    let v = version(tag)?;
    if v < vec![3, 4] {
        return Some(Platforms::LinuxOnly(LinuxOnly::Pause));
    }
    Some(
        PAUSE
            .iter()
            .find(|(t, _)| version(t).as_ref() == Some(&v))
            .map_or(Platforms::WindowsUnmapped, |(_, b)| Platforms::Windows(b)),
    )
}

/// The pause version to suggest for nodes of `build`: the oldest version from which every
/// recorded version has an entry such nodes run ("3.6 or later" for Windows Server 2022), else
/// the newest version that has one.
fn pause_for(build: Build) -> Option<Suggestion> {
    let runs = |builds: &[Build]| {
        builds
            .iter()
            .any(|&b| windows::compatible(b, build, Isolation::Process))
    };
    let from = PAUSE
        .iter()
        .rposition(|(_, b)| !runs(b))
        .map_or(Some(0), |i| (i + 1 < PAUSE.len()).then_some(i + 1));
    let (i, or_later) = match from {
        Some(i) => (i, true),
        None => (PAUSE.iter().rposition(|(_, b)| runs(b))?, false),
    };
    Some(Suggestion {
        image: format!("registry.k8s.io/pause:{}", PAUSE[i].0),
        or_later,
    })
}

// ---------------------------------------------------------------------------------------------
// Suggestions

/// An image that exists, to suggest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Suggestion {
    pub image: String,
    /// Any later version does too (`registry.k8s.io/pause:3.6 or later`).
    pub or_later: bool,
}

impl fmt::Display for Suggestion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.image)?;
        if self.or_later {
            f.write_str(" or later")?;
        }
        Ok(())
    }
}

/// The image lines the table can suggest tags of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Line {
    /// A base-OS repository of MCR (`windows/servercore`, …).
    Base(&'static str),
    Iis,
    /// `dotnet/framework/<kind>`.
    Framework(&'static str),
    /// `dotnet/<kind>` (.NET 5+).
    Dotnet(&'static str),
    Powershell,
    Pause,
}

/// The tags of the base-OS repositories per build (MS-COMPAT, MS-BASE): no `latest` since
/// 2019-04-16; Nano Server for Windows Server 2019 is tagged `1809` (an `ltsc2019` tag is not
/// evidenced) and has no 2016 image on MCR; the full `windows` image stops at 20H2 and is
/// continued by `windows/server`.
const SERVERCORE: &[(Build, &str)] = &[
    (WS2016, "ltsc2016"),
    (V1709, "1709"),
    (V1803, "1803"),
    (WS2019, "ltsc2019"),
    (V1903, "1903"),
    (V1909, "1909"),
    (V2004, "2004"),
    (V20H2, "20H2"),
    (WS2022, "ltsc2022"),
    (WS2025, "ltsc2025"),
];
const NANOSERVER: &[(Build, &str)] = &[
    (WS2019, "1809"),
    (V1903, "1903"),
    (V1909, "1909"),
    (V2004, "2004"),
    (V20H2, "20H2"),
    (WS2022, "ltsc2022"),
    (WS2025, "ltsc2025"),
];
const SERVER: &[(Build, &str)] = &[(WS2022, "ltsc2022"), (WS2025, "ltsc2025")];
const WINDOWS: &[(Build, &str)] = &[
    (WS2019, "1809"),
    (V1903, "1903"),
    (V1909, "1909"),
    (V2004, "2004"),
    (V20H2, "20H2"),
];

/// `mcr.microsoft.com/windows/servercore/iis:windowsservercore-<token>`.
const IIS: &[(Build, &str)] = &[
    (WS2016, "ltsc2016"),
    (WS2019, "ltsc2019"),
    (WS2022, "ltsc2022"),
    (WS2025, "ltsc2025"),
];

/// .NET Framework versions per build (`<version>-windowsservercore-<ltsc token>`), newest first:
/// 4.8.1 only from ltsc2022, no 4.8 for ltsc2025 (microsoft/dotnet-framework-docker READMEs).
/// `wcf` has no 3.5.
const FRAMEWORK: &[(Build, &str, &[&str])] = &[
    (
        WS2016,
        "ltsc2016",
        &["4.8", "4.7.2", "4.7.1", "4.7", "4.6.2", "3.5"],
    ),
    (WS2019, "ltsc2019", &["4.8", "4.7.2", "3.5"]),
    (WS2022, "ltsc2022", &["4.8.1", "4.8", "3.5"]),
    (WS2025, "ltsc2025", &["4.8.1", "3.5"]),
];

/// .NET (5+) Windows tags per major version and variant: the build token of each build.
/// `nanoserver` for Windows Server 2019 is `1809`, `windowsservercore` is `ltsc2019`; .NET 10 has
/// no 2019 images; ltsc2025 from .NET 8.
fn dotnet_token(major: u32, variant: &str, build: Build) -> Option<&'static str> {
    let nano = variant == "nanoserver";
    match build {
        WS2019 if (6..=9).contains(&major) => Some(if nano { "1809" } else { "ltsc2019" }),
        WS2022 if (6..=10).contains(&major) => Some("ltsc2022"),
        WS2025 if (8..=10).contains(&major) => Some("ltsc2025"),
        _ => None,
    }
}

fn framework_kind(repository: &str) -> Option<&'static str> {
    match repository {
        "dotnet/framework/runtime" => Some("runtime"),
        "dotnet/framework/aspnet" => Some("aspnet"),
        "dotnet/framework/sdk" => Some("sdk"),
        "dotnet/framework/wcf" => Some("wcf"),
        _ => None,
    }
}

/// The line of an MCR repository.
fn mcr_line(repository: &str) -> Option<Line> {
    Some(match repository {
        "windows/servercore" => Line::Base("windows/servercore"),
        "windows/nanoserver" => Line::Base("windows/nanoserver"),
        "windows/server" => Line::Base("windows/server"),
        "windows" => Line::Base("windows"),
        "windows/servercore/iis" => Line::Iis,
        "dotnet/runtime" => Line::Dotnet("runtime"),
        "dotnet/aspnet" => Line::Dotnet("aspnet"),
        "dotnet/sdk" => Line::Dotnet("sdk"),
        "powershell" => Line::Powershell,
        r => Line::Framework(framework_kind(r)?),
    })
}

/// The line of a reference: its own, or its MCR successor's for a Docker Hub `microsoft/*` one.
fn line(registry: &str, repository: &str, tag: Option<&str>) -> Option<Line> {
    match registry {
        MCR => mcr_line(repository),
        "registry.k8s.io" | "k8s.gcr.io" if repository == "pause" => Some(Line::Pause),
        DOCKER_HUB => match successor(repository.strip_prefix("microsoft/")?, tag) {
            Successor::Repo(r) => mcr_line(r.strip_prefix("mcr.microsoft.com/")?),
            _ => None,
        },
        _ => None,
    }
}

/// An image of the same line (the repository, or the MCR successor of a Docker Hub
/// `microsoft/*` one) that exists for nodes of `build` under process isolation, keeping the
/// version and variant of `tag` where that exists for the build. `None` when the table knows
/// none: the rules then name the build, not a tag.
pub fn image_for(
    registry: &str,
    repository: &str,
    tag: Option<&str>,
    build: Build,
) -> Option<Suggestion> {
    let tagged = |repo: &str, t: String| Suggestion {
        image: format!("{MCR}/{repo}:{t}"),
        or_later: false,
    };
    let find = |table: &[(Build, &'static str)]| {
        table
            .iter()
            .find(|(b, _)| *b == build)
            .map(|(_, t)| t.to_string())
    };
    let variant = if tag.is_some_and(|t| t.to_ascii_lowercase().contains("windowsservercore")) {
        "windowsservercore"
    } else {
        "nanoserver"
    };
    match line(registry, repository, tag)? {
        Line::Base("windows") if build >= WS2022 => {
            find(SERVER).map(|t| tagged("windows/server", t))
        }
        Line::Base(repo) => {
            let table = match repo {
                "windows/servercore" => SERVERCORE,
                "windows/nanoserver" => NANOSERVER,
                "windows/server" => SERVER,
                _ => WINDOWS,
            };
            find(table).map(|t| tagged(repo, t))
        }
        Line::Iis => {
            find(IIS).map(|t| tagged("windows/servercore/iis", format!("windowsservercore-{t}")))
        }
        Line::Framework(kind) => {
            let (_, token, versions) = FRAMEWORK.iter().find(|(b, ..)| *b == build)?;
            let versions: Vec<&str> = versions
                .iter()
                .copied()
                .filter(|v| kind != "wcf" || *v != "3.5")
                .collect();
            let wanted = tag.and_then(leading_version).unwrap_or("4.8");
            let v = if versions.contains(&wanted) {
                wanted
            } else if wanted == "3.5" {
                return None;
            } else {
                // The in-place successor: the oldest 4.x at least as new, else the newest.
                let w = version(wanted)?;
                versions
                    .iter()
                    .rev()
                    .copied()
                    .filter(|v| *v != "3.5")
                    .find(|v| version(v).is_some_and(|x| x >= w))
                    .or_else(|| versions.first().copied())?
            };
            Some(tagged(
                &format!("dotnet/framework/{kind}"),
                format!("{v}-windowsservercore-{token}"),
            ))
        }
        Line::Dotnet(kind) => {
            let given = tag.and_then(leading_version).and_then(|v| {
                let parts = version(v)?;
                Some((
                    parts[0],
                    format!("{}.{}", parts[0], parts.get(1).copied().unwrap_or(0)),
                ))
            });
            let (major, v) = match given {
                Some(g) => g,
                // `latest` or no version: the newest major with an image for the build.
                None => [10, 9, 8]
                    .into_iter()
                    .find(|m| dotnet_token(*m, variant, build).is_some())
                    .map(|m| (m, format!("{m}.0")))?,
            };
            let token = dotnet_token(major, variant, build)?;
            Some(tagged(
                &format!("dotnet/{kind}"),
                format!("{v}-{variant}-{token}"),
            ))
        }
        Line::Powershell => {
            let token = match (variant, build) {
                ("nanoserver", WS2019) => "1809",
                (_, WS2022) => "ltsc2022",
                _ => return None,
            };
            Some(tagged("powershell", format!("lts-{variant}-{token}")))
        }
        Line::Pause => pause_for(build),
    }
}

// ---------------------------------------------------------------------------------------------
// Docker Hub microsoft/* → MCR

/// Where a retired Docker Hub `microsoft/<name>` repository went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Successor {
    /// Its MCR repository (`mcr.microsoft.com/windows/servercore`).
    Repo(&'static str),
    /// Discontinued on Windows: SQL Server on Windows containers (`mssql-server-windows*`); the
    /// only successor, `mcr.microsoft.com/mssql/server`, is Linux-only.
    Discontinued,
    /// A `microsoft/*` repository this table does not know.
    Unknown,
}

/// The successor of Docker Hub's `microsoft/<name>` (`tag` tells the SDK and ASP.NET Core
/// images of the shared repositories apart).
pub fn successor(name: &str, tag: Option<&str>) -> Successor {
    let has = |w: &str| tag.is_some_and(|t| t.contains(w));
    Successor::Repo(match name {
        "windowsservercore" => "mcr.microsoft.com/windows/servercore",
        "nanoserver" => "mcr.microsoft.com/windows/nanoserver",
        "iis" => "mcr.microsoft.com/windows/servercore/iis",
        "aspnet" => "mcr.microsoft.com/dotnet/framework/aspnet",
        "wcf" => "mcr.microsoft.com/dotnet/framework/wcf",
        "dotnet-framework-build" => "mcr.microsoft.com/dotnet/framework/sdk",
        "dotnet-framework" if has("sdk") => "mcr.microsoft.com/dotnet/framework/sdk",
        "dotnet-framework" => "mcr.microsoft.com/dotnet/framework/runtime",
        "dotnet" if has("sdk") => "mcr.microsoft.com/dotnet/sdk",
        "dotnet" if has("aspnetcore") => "mcr.microsoft.com/dotnet/aspnet",
        "dotnet" => "mcr.microsoft.com/dotnet/runtime",
        "powershell" => "mcr.microsoft.com/powershell",
        n if n.starts_with("mssql-server-windows") => return Successor::Discontinued,
        _ => return Successor::Unknown,
    })
}

/// A fact about the image worth a sentence in a message (`None`: nothing to add).
pub fn note(registry: &str, repository: &str) -> Option<&'static str> {
    match (registry, repository) {
        (DOCKER_HUB, "library/redis") => Some(
            "Docker Hub's redis has published no Windows image since its 2017 Windows Server 2016 ones",
        ),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn suggest(reference: (&str, &str, Option<&str>), build: Build) -> Option<String> {
        image_for(reference.0, reference.1, reference.2, build).map(|s| s.to_string())
    }

    #[test]
    fn base_images_per_build() {
        let servercore = (MCR, "windows/servercore", Some("ltsc2019"));
        assert_eq!(
            suggest(servercore, WS2022).as_deref(),
            Some("mcr.microsoft.com/windows/servercore:ltsc2022")
        );
        assert_eq!(
            suggest(servercore, V1709).as_deref(),
            Some("mcr.microsoft.com/windows/servercore:1709")
        );
        // Nano Server 2019 is 1809; none for 2016 on MCR.
        let nano = (MCR, "windows/nanoserver", Some("ltsc2022"));
        assert_eq!(
            suggest(nano, WS2019).as_deref(),
            Some("mcr.microsoft.com/windows/nanoserver:1809")
        );
        assert_eq!(suggest(nano, WS2016), None);
        // The full Windows image stops at 20H2; windows/server continues it.
        let full = (MCR, "windows", Some("1809"));
        assert_eq!(
            suggest(full, WS2022).as_deref(),
            Some("mcr.microsoft.com/windows/server:ltsc2022")
        );
        assert_eq!(
            suggest((MCR, "windows/server", Some("ltsc2022")), WS2019),
            None
        );
        // 23H2 hosts have no images of their own (the rules ask for ltsc2022 images).
        assert_eq!(suggest(servercore, windows::V23H2), None);
    }

    #[test]
    fn docker_hub_microsoft_goes_to_its_successor() {
        // Never the invented microsoft/windowsservercore:ltsc2022 or microsoft/iis:…-ltsc2022.
        assert_eq!(
            suggest(
                (DOCKER_HUB, "microsoft/windowsservercore", Some("1709")),
                WS2022
            )
            .as_deref(),
            Some("mcr.microsoft.com/windows/servercore:ltsc2022")
        );
        assert_eq!(
            suggest(
                (DOCKER_HUB, "microsoft/iis", Some("windowsservercore-1709")),
                WS2022
            )
            .as_deref(),
            Some("mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2022")
        );
        assert_eq!(
            suggest((DOCKER_HUB, "microsoft/iis", None), WS2025).as_deref(),
            Some("mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2025")
        );
        assert_eq!(
            suggest(
                (
                    DOCKER_HUB,
                    "microsoft/aspnet",
                    Some("4.7.1-windowsservercore-1709")
                ),
                WS2022
            )
            .as_deref(),
            Some("mcr.microsoft.com/dotnet/framework/aspnet:4.8-windowsservercore-ltsc2022")
        );
        assert_eq!(
            suggest(
                (
                    DOCKER_HUB,
                    "microsoft/dotnet-framework",
                    Some("4.7.2-sdk-windowsservercore-1803")
                ),
                WS2019
            )
            .as_deref(),
            Some("mcr.microsoft.com/dotnet/framework/sdk:4.7.2-windowsservercore-ltsc2019")
        );
        // .NET Core 2.1 has no current Windows tag; SQL Server has no Windows successor.
        assert_eq!(
            suggest(
                (
                    DOCKER_HUB,
                    "microsoft/dotnet",
                    Some("2.1-aspnetcore-runtime")
                ),
                WS2022
            ),
            None
        );
        assert_eq!(
            successor("mssql-server-windows-developer", None),
            Successor::Discontinued
        );
        assert_eq!(successor("something", None), Successor::Unknown);
        assert_eq!(
            successor("dotnet", Some("2.1-aspnetcore-runtime")),
            Successor::Repo("mcr.microsoft.com/dotnet/aspnet")
        );
        assert_eq!(suggest((DOCKER_HUB, "contoso/iis", None), WS2022), None);
    }

    #[test]
    fn dotnet_framework_versions_per_build() {
        let fw = |tag: &'static str| (MCR, "dotnet/framework/aspnet", Some(tag));
        // 4.8 exists for ltsc2022 but not ltsc2025, where 4.8.1 is the successor.
        assert_eq!(
            suggest(fw("4.8-windowsservercore-ltsc2019"), WS2022).as_deref(),
            Some("mcr.microsoft.com/dotnet/framework/aspnet:4.8-windowsservercore-ltsc2022")
        );
        assert_eq!(
            suggest(fw("4.8-windowsservercore-ltsc2019"), WS2025).as_deref(),
            Some("mcr.microsoft.com/dotnet/framework/aspnet:4.8.1-windowsservercore-ltsc2025")
        );
        // 4.8.1 on a 2019 host: the newest there, 4.8. The date stamp is dropped.
        assert_eq!(
            suggest(fw("4.8.1-20240213-windowsservercore-ltsc2022"), WS2019).as_deref(),
            Some("mcr.microsoft.com/dotnet/framework/aspnet:4.8-windowsservercore-ltsc2019")
        );
        assert_eq!(
            suggest(fw("3.5"), WS2025).as_deref(),
            Some("mcr.microsoft.com/dotnet/framework/aspnet:3.5-windowsservercore-ltsc2025")
        );
        assert_eq!(
            suggest((MCR, "dotnet/framework/wcf", Some("3.5")), WS2022),
            None
        );
        assert_eq!(suggest(fw("4.8"), V20H2), None);
        // Shared tags.
        assert_eq!(
            platforms(MCR, "dotnet/framework/sdk", Some("4.8")),
            Some(Platforms::Windows(&[WS2016, WS2019, WS2022]))
        );
        assert_eq!(
            platforms(MCR, "dotnet/framework/sdk", None),
            Some(Platforms::Windows(&[WS2016, WS2019, WS2022]))
        );
        assert_eq!(
            platforms(MCR, "dotnet/framework/runtime", Some("4.8.1")),
            Some(Platforms::Windows(&[WS2022, WS2025]))
        );
        assert_eq!(
            platforms(MCR, "dotnet/framework/samples", Some("aspnetapp")),
            Some(Platforms::WindowsUnmapped)
        );
    }

    #[test]
    fn dotnet_plain_tags_are_linux_since_8() {
        for tag in [
            None,
            Some("latest"),
            Some("8.0"),
            Some("9.0.1"),
            Some("10.0"),
            Some("8.0-alpine"),
            Some("6.0-jammy"),
            Some("10.0.0-rc.1"),
        ] {
            assert_eq!(
                platforms(MCR, "dotnet/aspnet", tag),
                Some(Platforms::LinuxOnly(LinuxOnly::Dotnet)),
                "{tag:?}"
            );
        }
        assert_eq!(
            platforms(MCR, "dotnet/runtime", Some("7.0")),
            Some(Platforms::Windows(&[WS2019, WS2022]))
        );
        assert_eq!(
            platforms(MCR, "dotnet/sdk", Some("6.0.100-preview.7")),
            Some(Platforms::Windows(&[WS2019, WS2022]))
        );
        assert_eq!(
            platforms(MCR, "dotnet/sdk", Some("5.0")),
            Some(Platforms::WindowsUnmapped)
        );
        assert_eq!(
            platforms(MCR, "dotnet/aspnet", Some("8.0-nanoserver")),
            None
        );
    }

    #[test]
    fn dotnet_samples_tags() {
        let p = |tag| platforms(MCR, "dotnet/samples", tag);
        // The shared tags: Alpine and one Windows entry, nanoserver-ltsc2022 (no 2025 on MCR).
        for tag in [
            None,
            Some("latest"),
            Some("aspnetapp"),
            Some("dotnetapp-10.0"),
        ] {
            assert_eq!(p(tag), Some(Platforms::Windows(&[WS2022])), "{tag:?}");
        }
        assert_eq!(
            p(Some("aspnetapp-9.0")),
            Some(Platforms::Windows(&[WS2019, WS2022]))
        );
        assert_eq!(p(Some("dotnetapp-8.0")), Some(Platforms::WindowsUnmapped));
        // The Windows platform tags name their build; the others are Linux.
        assert_eq!(p(Some("aspnetapp-nanoserver-ltsc2022")), None);
        assert_eq!(p(Some("dotnetapp-10.0-nanoserver-ltsc2022")), None);
        for tag in [
            "aspnetapp-chiseled",
            "dotnetapp-chiseled-10.0-arm64v8",
            "aspnetapp-10.0-alpine-amd64",
            "dotnetapp-buster-slim",
        ] {
            assert_eq!(
                p(Some(tag)),
                Some(Platforms::LinuxOnly(LinuxOnly::Samples)),
                "{tag}"
            );
        }
        // Not a sample tag this table knows.
        assert_eq!(p(Some("webapp")), None);
    }

    #[test]
    fn bitnami_debian_tags_are_linux() {
        for tag in ["16.3.0-debian-12-r19", "16-debian-12", "debian-12"] {
            assert_eq!(
                platforms(DOCKER_HUB, "bitnami/postgresql", Some(tag)),
                Some(Platforms::LinuxOnly(LinuxOnly::Bitnami)),
                "{tag}"
            );
        }
        // A tag that names no flavour, or another publisher's repository: not known.
        assert_eq!(
            platforms(DOCKER_HUB, "bitnami/postgresql", Some("16")),
            None
        );
        assert_eq!(platforms(DOCKER_HUB, "bitnami/postgresql", None), None);
        assert_eq!(
            platforms(DOCKER_HUB, "someone/postgresql", Some("16-debian-12")),
            None
        );
        // Suggestions keep the version and variant; latest picks the newest major.
        let aspnet = |tag| (MCR, "dotnet/aspnet", tag);
        assert_eq!(
            suggest(aspnet(Some("8.0")), WS2022).as_deref(),
            Some("mcr.microsoft.com/dotnet/aspnet:8.0-nanoserver-ltsc2022")
        );
        assert_eq!(
            suggest(aspnet(Some("8.0.11")), WS2019).as_deref(),
            Some("mcr.microsoft.com/dotnet/aspnet:8.0-nanoserver-1809")
        );
        assert_eq!(
            suggest(aspnet(Some("8.0-windowsservercore-ltsc2019")), WS2019).as_deref(),
            Some("mcr.microsoft.com/dotnet/aspnet:8.0-windowsservercore-ltsc2019")
        );
        assert_eq!(suggest(aspnet(Some("10.0")), WS2019), None);
        assert_eq!(
            suggest(aspnet(None), WS2019).as_deref(),
            Some("mcr.microsoft.com/dotnet/aspnet:9.0-nanoserver-1809")
        );
        assert_eq!(
            suggest(aspnet(Some("latest")), WS2025).as_deref(),
            Some("mcr.microsoft.com/dotnet/aspnet:10.0-nanoserver-ltsc2025")
        );
        assert_eq!(suggest(aspnet(Some("7.0")), WS2025), None);
        assert_eq!(suggest(aspnet(Some("3.1")), WS2022), None);
    }

    #[test]
    fn pause_versions() {
        let p = |t| platforms("registry.k8s.io", "pause", Some(t));
        for old in ["3.1", "3.2", "3.3", "2.0", "0.8.0"] {
            assert_eq!(
                p(old),
                Some(Platforms::LinuxOnly(LinuxOnly::Pause)),
                "{old}"
            );
        }
        assert_eq!(
            p("3.4"),
            Some(Platforms::Windows(&[WS2019, V1903, V1909, V2004]))
        );
        assert!(matches!(p("3.5"), Some(Platforms::Windows(b)) if !b.contains(&WS2022)));
        assert!(matches!(p("3.6"), Some(Platforms::Windows(b)) if b.contains(&WS2022)));
        assert_eq!(p("3.9"), Some(Platforms::Windows(&[WS2019, WS2022])));
        assert_eq!(p("3.11"), Some(Platforms::WindowsUnmapped));
        assert_eq!(p("latest"), None);
        assert_eq!(platforms("k8s.gcr.io", "pause", Some("3.5")), p("3.5"));
        let s = |b| pause_for(b).map(|s| s.to_string());
        assert_eq!(
            s(WS2022).as_deref(),
            Some("registry.k8s.io/pause:3.6 or later")
        );
        assert_eq!(
            s(WS2025).as_deref(),
            Some("registry.k8s.io/pause:3.6 or later")
        );
        assert_eq!(
            s(WS2019).as_deref(),
            Some("registry.k8s.io/pause:3.4 or later")
        );
        // 1903 was dropped in 3.7: the newest that has it, without "or later".
        assert_eq!(s(V1903).as_deref(), Some("registry.k8s.io/pause:3.6"));
        assert_eq!(s(WS2016), None);
        assert_eq!(
            suggest(("k8s.gcr.io", "pause", Some("3.5")), WS2022).as_deref(),
            Some("registry.k8s.io/pause:3.6 or later")
        );
    }

    #[test]
    fn multi_os_repositories_and_certain_builds() {
        for (registry, repo, tag) in [
            (
                "registry.k8s.io",
                "sig-storage/livenessprobe",
                Some("v2.7.0"),
            ),
            (
                "k8s.gcr.io",
                "sig-storage/csi-node-driver-registrar",
                Some("v2.5.1"),
            ),
            ("registry.k8s.io", "e2e-test-images/agnhost", Some("2.26")),
            (
                "registry.k8s.io",
                "csi-secrets-store/driver",
                Some("v1.4.7"),
            ),
            (MCR, "oss/kubernetes-csi/livenessprobe", Some("v2.10.0")),
            (MCR, "oss/kubernetes/pause", Some("3.9")),
            (
                "gcr.io",
                "k8s-staging-sig-storage/smbplugin",
                Some("canary"),
            ),
            (
                "ghcr.io",
                "kubernetes-sigs/sig-windows/csi-proxy",
                Some("v1.1.3"),
            ),
            (
                "public.ecr.aws",
                "ebs-csi-driver/aws-ebs-csi-driver",
                Some("v1.49.0"),
            ),
            (
                MCR,
                "oss/kubernetes/azure-cloud-node-manager",
                Some("v1.27.5"),
            ),
            (DOCKER_HUB, "library/golang", Some("1.22")),
            (MCR, "windows/servercore/iis", Some("windowsservercore")),
            (MCR, "powershell", Some("lts")),
        ] {
            assert_eq!(
                platforms(registry, repo, tag),
                Some(Platforms::WindowsUnmapped),
                "{registry}/{repo}"
            );
        }
        for (registry, repo, tag) in [
            (
                "ghcr.io",
                "kubernetes-sigs/sig-windows/csi-proxy-x",
                Some("v1"),
            ),
            (DOCKER_HUB, "library/golang", Some("1.22-bookworm")),
            (DOCKER_HUB, "e2eteam/nginx", Some("1.14-alpine")),
            (
                "k8sprow.azurecr.io",
                "kubernetes-e2e-test-images/nginx",
                Some("1.14-alpine"),
            ),
            (DOCKER_HUB, "library/redis", Some("7.2")),
            (MCR, "windows/servercore", None),
        ] {
            assert_eq!(platforms(registry, repo, tag), None, "{registry}/{repo}");
        }
        assert_eq!(
            platforms(DOCKER_HUB, "library/redis", Some("3.0-nanoserver")),
            Some(Platforms::Single(WS2016))
        );
        assert_eq!(
            platforms(
                DOCKER_HUB,
                "library/redis",
                Some("3.2.100-windowsservercore")
            ),
            Some(Platforms::Single(WS2016))
        );
        assert_eq!(
            platforms(DOCKER_HUB, "microsoft/iis", None),
            Some(Platforms::Windows(&[WS2016, V1709, V1803]))
        );
        assert_eq!(
            platforms(MCR, "windows/servercore/iis", Some("latest")),
            Some(Platforms::Windows(&[WS2016, WS2019, WS2022, WS2025]))
        );
        assert_eq!(
            platforms(
                MCR,
                "oss/kubernetes/windows-host-process-containers-base-image",
                Some("v1.0.0")
            ),
            Some(Platforms::HostProcessOnly)
        );
        assert_eq!(
            platforms(
                "ghcr.io",
                "prometheus-community/windows-exporter",
                Some("0.30.5")
            ),
            Some(Platforms::HostProcessOnly)
        );
        assert!(publishes_multi_os_lists(
            MCR,
            "oss/kubernetes-csi/csi-node-driver-registrar"
        ));
        assert!(!publishes_multi_os_lists(MCR, "oss/kubernetes/kube-proxy"));
    }

    #[test]
    fn powershell_tags() {
        let ps = |tag| (MCR, "powershell", Some(tag));
        assert_eq!(
            suggest(ps("lts-nanoserver-1809"), WS2022).as_deref(),
            Some("mcr.microsoft.com/powershell:lts-nanoserver-ltsc2022")
        );
        assert_eq!(
            suggest(ps("lts-windowsservercore-ltsc2022"), WS2022).as_deref(),
            Some("mcr.microsoft.com/powershell:lts-windowsservercore-ltsc2022")
        );
        assert_eq!(suggest(ps("lts-nanoserver-ltsc2022"), WS2025), None);
        assert_eq!(suggest(ps("lts-windowsservercore-ltsc2022"), WS2019), None);
    }
}
