//! The per-container judgement of `winlint plan`: can this container's image run on a Windows
//! node of the planned build, and if not, what exactly to change.
//!
//! Every fact comes from the model: the registry's manifest list decides through
//! [`ImageFacts::on_host`] (containerd's matcher, `platform_windows_compat.go`: below 20348 the
//! builds must be equal, from 20348 a host runs images from the previous LTSC up to its own
//! build, so 10.0.20348 images run on 10.0.26100 hosts); without the registry the name decides
//! ([`ImageInfo::build`], the known manifest lists of `known_images`) through the same matcher
//! ([`image_facts::host_runs`]); the tag to move to comes from the registry (a candidate looked up)
//! or from the known image families ([`ImageInfo::image_for`]). What neither tells is
//! [`Verdict::Unknown`], said plainly.

use std::sync::Arc;

use crate::model::image::ImageInfo;
use crate::model::image_facts::{self, HostVerdict, ImageFacts};
use crate::model::windows::{self, Build, Isolation};

use super::Verdict;

/// One container's judgement against one planned build.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Judgement {
    pub verdict: Verdict,
    /// Why: the facts the verdict rests on.
    pub evidence: String,
    /// The exact change, when one is needed.
    pub change: Option<String>,
    /// A retag's reference to move to (what `plan --fix` may write), when one is named.
    pub retag: Option<RetagTo>,
}

/// The reference a retag names: a tag of the registry's or of a known family, and its digest
/// when the registry listed it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetagTo {
    /// `mcr.microsoft.com/windows/servercore:ltsc2025` (familiar form).
    pub reference: String,
    pub digest: Option<String>,
}

impl Judgement {
    fn new(verdict: Verdict, evidence: String, change: Option<String>) -> Judgement {
        Judgement {
            verdict,
            evidence,
            change,
            retag: None,
        }
    }

    fn retag(evidence: String, to: RetagTo) -> Judgement {
        let change = match &to.digest {
            Some(d) => format!("image: {} (digest {d})", to.reference),
            None => format!("image: {}", to.reference),
        };
        Judgement {
            retag: Some(to),
            ..Judgement::new(Verdict::Retag, evidence, Some(change))
        }
    }
}

/// What the judgement of one container may look at.
pub struct Facts<'a> {
    /// The image as written.
    pub image: &'a str,
    pub info: &'a ImageInfo,
    /// The registry's facts for the image (`--registry`), if looked up.
    pub registry: Option<Arc<ImageFacts>>,
    /// The registry's facts for another reference (a candidate tag), if looked up.
    pub lookup: &'a dyn Fn(&str) -> Option<Arc<ImageFacts>>,
    /// The container is a HostProcess container (no image build requirement).
    pub host_process: bool,
    /// The nodes' runtime applies containerd's LTSC window (containerd; Docker matches exactly).
    pub relaxed: bool,
    /// The platform runs Hyper-V isolation (`None`: unknown).
    pub hyperv_offered: Option<bool>,
}

/// The references worth looking up for `info` on hosts of `host` (`--registry`): the known
/// family's tag for the build, and the tag with its build token replaced.
pub fn candidates(info: &ImageInfo, host: Build) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(s) = info.image_for(host) {
        out.push(s.image);
    }
    if let Some(r) = info.retag(&host.image_token())
        && !out.contains(&r)
    {
        out.push(r);
    }
    out
}

/// Judge one container for a node of `host` under `iso`.
pub fn judge(f: &Facts, host: Build, iso: Isolation) -> Judgement {
    if f.host_process {
        return Judgement::new(
            Verdict::RunsAsIs,
            "a HostProcess container runs on the host itself: no image build to match".into(),
            None,
        );
    }
    if f.info.invalid.is_some() {
        // What can still be read from it is judged, as the linter's build rules do (WIN509
        // reports the reference itself); nothing else is.
        if f.info.build.is_none() {
            return Judgement::new(
                Verdict::Unknown,
                format!(
                    "the reference {} does not parse: its build cannot be told",
                    f.image
                ),
                Some("write a reference the kubelet pulls (winlint lint: WIN509)".into()),
            );
        }
        let mut j = by_name(f, host, iso);
        j.evidence
            .push_str(" (the reference does not parse as written: winlint lint: WIN509)");
        return j;
    }
    if let Some(facts) = &f.registry {
        return by_registry(f, facts, host, iso);
    }
    by_name(f, host, iso)
}

fn relaxed_note(image: Build, host: Build) -> String {
    format!(
        "containerd on {} hosts runs images from the previous LTSC up to the host's build ({image} ≤ {host}; containerd 1.6.23+/1.7.7+, platform_windows_compat.go)",
        host.token(),
    )
}

fn by_registry(f: &Facts, facts: &ImageFacts, host: Build, iso: Isolation) -> Judgement {
    let what = if facts.list {
        "the manifest list"
    } else {
        "the single image"
    };
    match facts.on_host(host, iso, f.relaxed) {
        HostVerdict::Runs(b) if b == host => Judgement::new(
            Verdict::RunsAsIs,
            format!(
                "registry: {what} has a windows {b} entry ({})",
                entry_version(facts, b)
            ),
            None,
        ),
        HostVerdict::Runs(b) => Judgement::new(
            Verdict::RunsAsIs,
            format!(
                "registry: {what}'s newest entry a {} host takes is {b} ({}): {}",
                host.token(),
                entry_version(facts, b),
                relaxed_note(b, host)
            ),
            None,
        ),
        HostVerdict::Unverifiable => Judgement::new(
            Verdict::Unknown,
            format!(
                "registry: {what}'s Windows entries carry no os.version: every Windows host pulls it, and whether {} runs it cannot be told before it starts",
                host
            ),
            None,
        ),
        HostVerdict::NoWindows => Judgement::new(
            Verdict::Unknown,
            format!(
                "registry: {what} has no Windows entry ({}): it cannot run on Windows nodes before or after the move (winlint lint: WIN507)",
                crate::rules::images::image_registry::platforms(facts)
            ),
            None,
        ),
        HostVerdict::NoMatch => {
            let published = describe(&facts.windows_builds());
            let evidence = format!(
                "registry: {what}'s Windows entries are built for {published}; containerd on a {host} host pulls none (`no matching manifest for windows/amd64 {host}`)"
            );
            move_to(
                f,
                host,
                iso,
                evidence,
                facts.windows_builds().last().copied(),
            )
        }
    }
}

/// `10.0.20348.2340`: the os.version of the entry of build `b`.
fn entry_version(facts: &ImageFacts, b: Build) -> String {
    facts
        .windows()
        .filter(|p| p.build() == Some(b))
        .filter_map(|p| p.os_version.clone())
        .next()
        .unwrap_or_else(|| b.to_string())
}

fn describe(builds: &[Build]) -> String {
    if builds.is_empty() {
        return "no build".into();
    }
    builds
        .iter()
        .map(|b| format!("{b} ({})", b.token()))
        .collect::<Vec<_>>()
        .join(", ")
}

fn runs_by_name(image: Build, host: Build, iso: Isolation, relaxed: bool) -> bool {
    match iso {
        Isolation::Hyperv => windows::compatible(image, host, Isolation::Hyperv),
        Isolation::Process => image_facts::host_runs(host, image, relaxed),
    }
}

fn by_name(f: &Facts, host: Build, iso: Isolation) -> Judgement {
    let i = f.info;
    if let Some(b) = i.build {
        if iso == Isolation::Hyperv && b < host && !image_facts::host_runs(host, b, f.relaxed) {
            // Hyper-V runs an older image, but the pull picks a manifest list's entry by the
            // host's build (shared/registry.md): whether this tag is a list, the name does not say.
            return Judgement::new(
                Verdict::Unknown,
                format!(
                    "the tag names {} ({b}); Hyper-V isolation runs images of the host's build or older, but a manifest list's entry is picked by the host's build ({host}), so the pull fails when this tag is a list",
                    b.token()
                ),
                Some(format!(
                    "run `winlint plan --registry` to see whether it is a list, and name the windows {b} manifest by digest if it is"
                )),
            );
        }
        if runs_by_name(b, host, iso, f.relaxed) {
            let why = if b == host {
                format!("the tag names {} ({b}), the planned build", b.token())
            } else if iso == Isolation::Hyperv {
                format!(
                    "the tag names {} ({b}); Hyper-V isolation runs images of the host's build or older",
                    b.token()
                )
            } else {
                format!(
                    "the tag names {} ({b}); {}",
                    b.token(),
                    relaxed_note(b, host)
                )
            };
            return Judgement::new(Verdict::RunsAsIs, why, None);
        }
        let evidence = format!(
            "the tag names {} ({b}); a {host} host does not run it under {} isolation{}",
            b.token(),
            iso_name(iso),
            if b < host && iso == Isolation::Process {
                " (containerd runs only images of the previous LTSC up to the host's build)"
            } else {
                ""
            }
        );
        return move_to(f, host, iso, evidence, Some(b));
    }
    if let Some(list) = i.list_builds() {
        if let Some(&b) = list
            .iter()
            .rev()
            .find(|&&b| runs_by_name(b, host, Isolation::Process, f.relaxed))
        {
            let why = if b == host {
                format!("a known multi-OS manifest list with a {b} entry")
            } else {
                format!(
                    "a known multi-OS manifest list whose newest entry a {} host takes is {b}: {}",
                    host.token(),
                    relaxed_note(b, host)
                )
            };
            return Judgement::new(Verdict::RunsAsIs, why, None);
        }
        let evidence = format!(
            "a known manifest list whose Windows entries are built for {} only; a {host} host pulls none",
            describe(list)
        );
        return move_to(f, host, iso, evidence, list.last().copied());
    }
    if i.linux {
        return Judgement::new(
            Verdict::Unknown,
            format!(
                "{} is known to have no Windows image: it cannot run on Windows nodes before or after the move (winlint lint: WIN507)",
                f.image
            ),
            None,
        );
    }
    let why = if i.multi {
        "a multi-OS manifest list whose Windows builds winlint does not know"
    } else if i.latest {
        "the tag names no Windows build (untagged or latest)"
    } else {
        "the tag names no Windows build and winlint does not know the image"
    };
    Judgement::new(
        Verdict::Unknown,
        format!("{why}: whether a {host} host runs it cannot be told from the name"),
        Some("run `winlint plan --registry` to read its manifest list, or pin a tag that names the build".into()),
    )
}

fn iso_name(iso: Isolation) -> &'static str {
    match iso {
        Isolation::Process => "process",
        Isolation::Hyperv => "Hyper-V",
    }
}

/// The image cannot run on `host`: a tag to move to (registry, then the known families), else
/// a rebuild on the base image of the planned build. `image`: the build it is for, if known.
fn move_to(
    f: &Facts,
    host: Build,
    iso: Isolation,
    evidence: String,
    image: Option<Build>,
) -> Judgement {
    let i = f.info;
    // A candidate the registry lists with an entry this host runs: the tag and its digest.
    for c in candidates(i, host) {
        if let Some(cf) = (f.lookup)(&c)
            && let HostVerdict::Runs(b) = cf.on_host(host, iso, f.relaxed)
        {
            return Judgement::retag(
                format!("{evidence}; registry: {c} has a windows {b} entry"),
                RetagTo {
                    reference: c,
                    digest: Some(cf.digest.clone()),
                },
            );
        }
    }
    // A family whose tags winlint knows (Microsoft's repositories, pause).
    if f.registry.is_none()
        && let Some(s) = i.image_for(host)
    {
        return Judgement {
            retag: Some(RetagTo {
                reference: s.image.clone(),
                digest: None,
            }),
            ..Judgement::new(
                Verdict::Retag,
                format!("{evidence}; {} is published for {}", s.image, host.token()),
                Some(format!("image: {s}")),
            )
        };
    }
    // A family whose current releases are multi-OS lists with an ltsc2022 entry (the CSI
    // sidecars, the e2e images, …): a current release, when the planned host runs that entry.
    if let Some(r) = i.pullable()
        && crate::model::known_images::publishes_multi_os_lists(&r.registry, &r.repository)
        && image_facts::host_runs(host, windows::WS2022, f.relaxed)
    {
        let entry = if host == windows::WS2022 {
            "its ltsc2022 entry".to_string()
        } else {
            format!(
                "its ltsc2022 entry ({})",
                relaxed_note(windows::WS2022, host)
            )
        };
        return Judgement::new(
            Verdict::Retag,
            format!(
                "{evidence}; current releases of {} are multi-OS manifest lists with Windows entries for 1809 and ltsc2022, and a {host} host pulls {entry}",
                r.familiar()
            ),
            Some(format!("image: a current release of {}", r.familiar())),
        );
    }
    let base = base_image(f.image, host);
    let retag = i
        .retag(&host.image_token())
        .filter(|_| f.registry.is_none())
        .map(|r| format!(" (or, if its publisher publishes it, {r}: check with --registry)"))
        .unwrap_or_default();
    let also = if host == windows::WS2025 {
        format!(
            "; a FROM {} image also runs on {} hosts",
            base_image(f.image, windows::WS2022),
            host.token()
        )
    } else {
        String::new()
    };
    let hyperv = match (image, f.hyperv_offered) {
        (Some(b), Some(true)) if b < host && iso == Isolation::Process => {
            ", or run it under Hyper-V isolation (a RuntimeClass with handler runhcs-wcow-hypervisor)"
        }
        _ => "",
    };
    Judgement::new(
        Verdict::Rebuild,
        evidence,
        Some(format!(
            "rebuild the image FROM {base}{also}{retag}{hyperv}"
        )),
    )
}

/// The Microsoft base image of `host` of the image's variant: Nano Server when the reference
/// names it, else Server Core (the tags come from the model's table of Microsoft's repositories).
fn base_image(image: &str, host: Build) -> String {
    let repo = if image.to_ascii_lowercase().contains("nanoserver") {
        "windows/nanoserver"
    } else {
        "windows/servercore"
    };
    let token = host.image_token();
    crate::model::known_images::image_for("mcr.microsoft.com", repo, Some(&token), host)
        .map(|s| s.image)
        .unwrap_or_else(|| format!("mcr.microsoft.com/{repo}:{token}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::image::analyze;
    use crate::model::image_facts::Platform;
    use crate::model::windows::{WS2019, WS2022, WS2025};

    fn none(_: &str) -> Option<Arc<ImageFacts>> {
        None
    }

    fn judge_name(image: &str, host: Build) -> Judgement {
        let info = analyze(image);
        let f = Facts {
            image,
            info: &info,
            registry: None,
            lookup: &none,
            host_process: false,
            relaxed: true,
            hyperv_offered: Some(false),
        };
        judge(&f, host, Isolation::Process)
    }

    fn list(builds: &[&str]) -> Arc<ImageFacts> {
        Arc::new(ImageFacts {
            digest: "sha256:aa".into(),
            list: true,
            platforms: builds
                .iter()
                .map(|v| Platform {
                    os: "windows".into(),
                    architecture: "amd64".into(),
                    variant: None,
                    os_version: Some(v.to_string()),
                    os_features: Vec::new(),
                    digest: None,
                    user: None,
                })
                .collect(),
            user: None,
        })
    }

    #[test]
    fn an_ltsc2022_image_runs_on_2025_by_the_relaxed_matcher() {
        let j = judge_name("mcr.microsoft.com/windows/servercore:ltsc2022", WS2025);
        assert_eq!(j.verdict, Verdict::RunsAsIs);
        assert!(j.evidence.contains("previous LTSC"), "{j:?}");
        // Docker (exact match) does not.
        let info = analyze("mcr.microsoft.com/windows/servercore:ltsc2022");
        let f = Facts {
            image: "x",
            info: &info,
            registry: None,
            lookup: &none,
            host_process: false,
            relaxed: false,
            hyperv_offered: None,
        };
        let j = judge(&f, WS2025, Isolation::Process);
        assert_eq!(j.verdict, Verdict::Retag, "{j:?}");
        assert_eq!(
            j.change.as_deref(),
            Some("image: mcr.microsoft.com/windows/servercore:ltsc2025")
        );
    }

    #[test]
    fn a_microsoft_ltsc2019_image_is_retagged_and_a_third_party_one_rebuilt() {
        let j = judge_name("mcr.microsoft.com/windows/servercore:ltsc2019", WS2022);
        assert_eq!(j.verdict, Verdict::Retag);
        assert_eq!(
            j.change.as_deref(),
            Some("image: mcr.microsoft.com/windows/servercore:ltsc2022")
        );
        let j = judge_name("example.com/app:1.0-windowsservercore-ltsc2019", WS2025);
        assert_eq!(j.verdict, Verdict::Rebuild, "{j:?}");
        let change = j.change.unwrap();
        assert!(
            change.starts_with(
                "rebuild the image FROM mcr.microsoft.com/windows/servercore:ltsc2025"
            ),
            "{change}"
        );
        assert!(
            change.contains("example.com/app:1.0-windowsservercore-ltsc2025"),
            "{change}"
        );
    }

    #[test]
    fn an_old_sidecar_moves_to_a_current_multi_os_release() {
        let j = judge_name(
            "mcr.microsoft.com/oss/kubernetes-csi/livenessprobe:v2.0.1-alpha.1-windows-1809-amd64",
            WS2025,
        );
        assert_eq!(j.verdict, Verdict::Retag, "{j:?}");
        assert_eq!(
            j.change.as_deref(),
            Some("image: a current release of mcr.microsoft.com/oss/kubernetes-csi/livenessprobe")
        );
    }

    #[test]
    fn a_name_without_a_build_is_unknown_never_fine() {
        for image in [
            "example.com/app:1.0",
            "example.com/app",
            "nginx:1.25-windows",
        ] {
            let j = judge_name(image, WS2025);
            assert_eq!(j.verdict, Verdict::Unknown, "{image}: {j:?}");
        }
    }

    #[test]
    fn the_registry_list_decides_and_a_candidate_tag_is_named_with_its_digest() {
        let info = analyze("example.com/app:1.0-ltsc2019");
        let lookup =
            |r: &str| (r == "example.com/app:1.0-ltsc2022").then(|| list(&["10.0.20348.1"]));
        let f = Facts {
            image: "example.com/app:1.0-ltsc2019",
            info: &info,
            registry: Some(list(&["10.0.17763.5329"])),
            lookup: &lookup,
            host_process: false,
            relaxed: true,
            hyperv_offered: None,
        };
        let j = judge(&f, WS2022, Isolation::Process);
        assert_eq!(j.verdict, Verdict::Retag, "{j:?}");
        assert_eq!(
            j.change.as_deref(),
            Some("image: example.com/app:1.0-ltsc2022 (digest sha256:aa)")
        );
        // A list with a 20348 entry runs on 26100 by the relaxed matcher; with 26100, exactly.
        let f = Facts {
            registry: Some(list(&["10.0.17763.1", "10.0.20348.2"])),
            ..f
        };
        let j = judge(&f, WS2025, Isolation::Process);
        assert_eq!(j.verdict, Verdict::RunsAsIs);
        assert!(j.evidence.contains("10.0.20348.2"), "{j:?}");
        let f = Facts {
            registry: Some(list(&["10.0.26100.3"])),
            ..f
        };
        assert_eq!(
            judge(&f, WS2025, Isolation::Process).verdict,
            Verdict::RunsAsIs
        );
        assert_eq!(
            judge(&f, WS2019, Isolation::Process).verdict,
            Verdict::Rebuild
        );
    }
}
