//! What a registry says about an image (issue 18): its digest and the platforms it is published
//! for, and whether a Windows host pulls and runs it, decided the way containerd decides.
//!
//! Pure: the bytes come from `crate::registry` (the CLI's `--registry`, `serve`'s background
//! resolver); rules read the facts through [`Context::image_facts`](super::Context) and never
//! wait for a network.
//!
//! The matcher follows containerd's `platforms/platform_windows_compat.go` (also hcsshim's
//! `osversion`): only major.minor.build are compared; below build 20348 the build must be equal;
//! from 20348 on, a host runs images from the previous LTSC up to its own build (a Windows Server
//! 2025 host runs `ltsc2022` images). An entry without `os.version` matches every Windows host.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::windows::{Build, Isolation};

/// The media types a manifest GET accepts: OCI and Docker, lists and single manifests (MCR serves
/// Docker media types; a registry answers with what it has among these).
pub const OCI_INDEX: &str = "application/vnd.oci.image.index.v1+json";
pub const OCI_MANIFEST: &str = "application/vnd.oci.image.manifest.v1+json";
pub const DOCKER_LIST: &str = "application/vnd.docker.distribution.manifest.list.v2+json";
pub const DOCKER_MANIFEST: &str = "application/vnd.docker.distribution.manifest.v2+json";

/// One platform an image is published for (an index entry, or the config of a single manifest).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Platform {
    pub os: String,
    pub architecture: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant: Option<String>,
    /// `10.0.20348.2340` as published (`os.version`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub os_version: Option<String>,
    /// `os.features` (`win32k`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub os_features: Vec<String>,
    /// A list entry's manifest digest (`sha256:<64 hex>`, checked: it goes into a URL path);
    /// `None` for a single manifest's platform or a digest that is not one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
    /// A list entry's image config `User`, when the lookup read that entry's config: `""`
    /// when the config sets none (the container runs as ContainerAdministrator); `None`:
    /// not read (only Windows entries are, [`MAX_ENTRY_CONFIGS`] at most).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
}

impl Platform {
    pub fn is_windows(&self) -> bool {
        self.os.eq_ignore_ascii_case("windows")
    }
    /// The Windows build of `os.version` (`10.0.20348.2340` → 20348); `None` when absent or
    /// not `10.0.N`.
    pub fn build(&self) -> Option<Build> {
        windows_version(self.os_version.as_deref()?).map(|(_, _, b)| Build(b))
    }
}

/// What the registry says about one image reference.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImageFacts {
    /// `sha256:…` of the manifest (or index) the reference names.
    pub digest: String,
    /// The reference names a list (index or manifest list): the pull picks an entry by platform.
    pub list: bool,
    /// The platforms, attestation entries left out.
    pub platforms: Vec<Platform>,
    /// A single manifest's image config `config.User`, the user the container runs as without
    /// `runAsUserName` (Nano Server: `ContainerUser`): `None` for a config without a user, and
    /// in disk caches written before it was recorded. A list's users are its entries'
    /// ([`Platform::user`]); read them through [`user_for`](Self::user_for).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
}

/// What a Windows host of some build does with an image.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostVerdict {
    /// The pull picks an entry of this build, and the host runs it.
    Runs(Build),
    /// An entry without `os.version`: pulled everywhere, its build unverifiable.
    Unverifiable,
    /// No Windows entry at all: the pull fails (`no matching manifest for windows/amd64`).
    NoWindows,
    /// Windows entries exist but none this host pulls or runs; the builds published.
    NoMatch,
}

impl ImageFacts {
    pub fn windows(&self) -> impl Iterator<Item = &Platform> {
        self.platforms.iter().filter(|p| p.is_windows())
    }
    pub fn has_windows(&self) -> bool {
        self.windows().next().is_some()
    }
    pub fn has_linux(&self) -> bool {
        self.platforms
            .iter()
            .any(|p| p.os.eq_ignore_ascii_case("linux"))
    }
    /// The Windows builds published, ascending, without duplicates.
    pub fn windows_builds(&self) -> Vec<Build> {
        let mut b: Vec<Build> = self.windows().filter_map(Platform::build).collect();
        b.sort();
        b.dedup();
        b
    }

    /// The Windows entry containerd picks on a host of `host` build: among the entries the
    /// host runs (the LTSC window of containerd 1.6.23+/1.7.7+), the greatest `os.version`
    /// (`windowsMatchComparer.Less`: build, then revision). `None` when none has a build the
    /// host runs.
    pub fn entry_for(&self, host: Build) -> Option<&Platform> {
        self.windows()
            .filter_map(|p| {
                let b = p.build().filter(|&b| host_runs(host, b, true))?;
                let rev = p
                    .os_version
                    .as_deref()
                    .and_then(super::windows::parse_revision);
                Some(((b, rev.unwrap_or(0)), p))
            })
            .max_by_key(|(k, _)| *k)
            .map(|(_, p)| p)
    }

    /// The image config's `User` of the image a Windows host of each of `hosts` runs (`""`: the
    /// config sets none). A single manifest: its config's (`None` when it sets none). A list:
    /// the entry [`entry_for`](Self::entry_for) each host (or, with no host known, every
    /// Windows entry), when the lookup read each such entry's config and they all agree;
    /// `None` otherwise.
    pub fn user_for(&self, hosts: &[Build]) -> Option<String> {
        if !self.list {
            return self.user.clone();
        }
        let entries: Vec<&Platform> = if hosts.is_empty() {
            self.windows().collect()
        } else {
            hosts.iter().filter_map(|&h| self.entry_for(h)).collect()
        };
        let first = entries.first()?.user.clone()?;
        entries
            .iter()
            .all(|p| p.user.as_deref() == Some(first.as_str()))
            .then_some(first)
    }

    /// Does a Windows host of `host` build pull and run this image? `relaxed`: the node's
    /// runtime applies the LTSC window (containerd 1.6.23+/1.7.7+); older runtimes match exactly.
    /// Under Hyper-V isolation the pull still picks an entry by the host's build (so a list of
    /// only older builds fails to pull), but a single manifest of an older build runs.
    pub fn on_host(&self, host: Build, isolation: Isolation, relaxed: bool) -> HostVerdict {
        let mut entries = self.windows().peekable();
        if entries.peek().is_none() {
            return HostVerdict::NoWindows;
        }
        let mut unverifiable = false;
        let mut best: Option<Build> = None;
        for p in entries {
            let Some(image) = p.build() else {
                // containerd: an empty os.version matches; an unparsable one does not.
                unverifiable |= p.os_version.as_deref().is_none_or(str::is_empty);
                continue;
            };
            let pulls = host_runs(host, image, relaxed)
                || (!self.list && isolation == Isolation::Hyperv && image <= host);
            if pulls && best.is_none_or(|b| image > b) {
                best = Some(image);
            }
        }
        match (best, unverifiable) {
            (Some(b), _) => HostVerdict::Runs(b),
            (None, true) => HostVerdict::Unverifiable,
            (None, false) => HostVerdict::NoMatch,
        }
    }
}

/// containerd's `getWindowsOSVersion`: `10.0.20348.2340` → (10, 0, 20348); `None` for fewer than
/// three parts or a part out of range (containerd then compares a zero version, which matches
/// nothing).
pub fn windows_version(s: &str) -> Option<(u8, u8, u32)> {
    let mut it = s.split('.');
    let major = it.next()?.parse::<u8>().ok()?;
    let minor = it.next()?.parse::<u8>().ok()?;
    let build = it.next()?.parse::<u16>().ok()?;
    Some((major, minor, u32::from(build)))
}

/// The LTSC releases with a stable ABI, ascending (containerd `compatLTSCReleases`).
const COMPAT_LTSC: [u32; 2] = [20348, 26100];

/// containerd's `checkWindowsHostAndContainerCompat` on the build (major.minor is 10.0 for every
/// build here). `relaxed = false` is the exact match of runtimes before the LTSC window.
pub fn host_runs(host: Build, image: Build, relaxed: bool) -> bool {
    if host.0 < COMPAT_LTSC[0] || !relaxed {
        return host == image;
    }
    let floor = COMPAT_LTSC
        .iter()
        .rev()
        .find(|&&l| host.0 > l)
        .copied()
        .unwrap_or(COMPAT_LTSC[0]);
    floor <= image.0 && image.0 <= host.0
}

/// A manifest document as the registry sent it: a list whose entries are platforms, or a single
/// manifest whose config digest must be fetched to learn its platform.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Manifest {
    List(Vec<Platform>),
    /// The config blob's digest and size.
    Single {
        config: String,
        size: u64,
    },
}

/// The most bytes of a manifest read. Real lists are far smaller: `golang:latest` (Docker Hub,
/// 7 Linux platforms, their 7 attestations and 2 Windows builds) is a 16-entry index of about
/// 8 KiB; MCR's `windows/servercore` and `nanoserver` tags are one-entry lists (under 1 KiB).
/// 256 KiB is 30 times the largest; distribution refuses a manifest PUT over 4 MiB, which is
/// what a hostile registry would send instead (`[0,0,…]`).
pub const MAX_MANIFEST_BYTES: usize = 256 << 10;
/// The most entries of a list read (16 times `golang:latest`'s 16).
pub const MAX_ENTRIES: usize = 256;
/// The most bytes of an image config read. Only `os`, `architecture`, `os.version`,
/// `os.features` and `config.User` are read; a real config (history and environment included)
/// is a few KiB, tens for images of many layers.
pub const MAX_CONFIG_BYTES: usize = 1 << 20;
/// The most Windows entries of a list whose configs a lookup reads (two requests each: the
/// entry's manifest, its config) to learn their `User`. MCR's multi-build tags have one
/// Windows entry per LTSC (three today); the rest of a larger list keeps its users unknown.
pub const MAX_ENTRY_CONFIGS: usize = 4;
/// The most `os.features` of a platform (real ones name at most `win32k`).
const MAX_FEATURES: usize = 16;

/// Why a manifest or config could not be read: a fact about that reference (a registry that
/// answers it so answers it again), never a reason to back off from the registry.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    #[error("unreadable JSON: {0}")]
    Json(String),
    #[error("unsupported media type {0:?}")]
    MediaType(String),
    #[error("{0}")]
    Shape(&'static str),
    #[error("{what} of {size} bytes is over the {cap}-byte cap")]
    TooLarge {
        what: &'static str,
        size: u64,
        cap: usize,
    },
}

/// Read a manifest (OCI index, Docker manifest list, OCI or Docker manifest). `content_type` is
/// the response's; a document's own `mediaType` wins when present. Attestation entries
/// (`vnd.docker.reference.type: attestation-manifest`, `unknown/unknown`) are skipped.
///
/// Typed and in one pass: only the fields read are kept, everything else is skipped without
/// being built (`serde::de::IgnoredAny`), and a list beyond [`MAX_ENTRIES`] entries (or a
/// platform beyond 16 features) is refused as it is met. Memory is the bytes plus the
/// platforms kept, whatever the document's density.
pub fn parse_manifest(bytes: &[u8], content_type: Option<&str>) -> Result<Manifest, ParseError> {
    if bytes.len() > MAX_MANIFEST_BYTES {
        return Err(ParseError::TooLarge {
            what: "a manifest",
            size: bytes.len() as u64,
            cap: MAX_MANIFEST_BYTES,
        });
    }
    let doc: wire::Manifest = serde_json::from_slice(bytes).map_err(json_error)?;
    let media = doc
        .media_type
        .as_deref()
        .or(content_type.map(|c| c.split(';').next().unwrap_or(c).trim()))
        .unwrap_or("");
    // An OCI index may omit mediaType; `manifests` tells it apart from a manifest (`config`).
    let is_list = media == OCI_INDEX
        || media == DOCKER_LIST
        || (doc.manifests.is_some() && doc.config.is_none());
    if is_list {
        let entries = doc
            .manifests
            .ok_or(ParseError::Shape("a list without `manifests`"))?;
        let out = entries
            .0
            .into_iter()
            .filter(|e| {
                e.annotations
                    .as_ref()
                    .and_then(|a| a.reference_type.as_deref())
                    != Some("attestation-manifest")
            })
            .filter_map(|e| {
                let mut p = e.platform.map(wire::Platform::into_platform)?;
                p.digest = e.digest.filter(|d| is_digest(d));
                Some(p)
            })
            .filter(|p| p.os != "unknown")
            .collect();
        return Ok(Manifest::List(out));
    }
    if media == OCI_MANIFEST || media == DOCKER_MANIFEST || doc.config.is_some() {
        let config = doc
            .config
            .ok_or(ParseError::Shape("a manifest without `config.digest`"))?;
        let digest = config
            .digest
            .ok_or(ParseError::Shape("a manifest without `config.digest`"))?;
        if !is_digest(&digest) {
            return Err(ParseError::Shape(
                "a config digest that is not sha256:<64 hex>",
            ));
        }
        let size = config.size.unwrap_or(0);
        if size > MAX_CONFIG_BYTES as u64 {
            return Err(ParseError::TooLarge {
                what: "the image config",
                size,
                cap: MAX_CONFIG_BYTES,
            });
        }
        return Ok(Manifest::Single {
            config: digest,
            size,
        });
    }
    Err(ParseError::MediaType(media.to_string()))
}

/// `sha256:` and 64 lowercase hex digits (the only digest a lookup compares; it also goes
/// into the blob's URL path).
fn is_digest(d: &str) -> bool {
    d.strip_prefix("sha256:").is_some_and(|h| {
        h.len() == 64
            && h.bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    })
}

fn json_error(e: serde_json::Error) -> ParseError {
    ParseError::Json(e.to_string())
}

/// What a lookup reads of an image config blob: its platform and default user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageConfig {
    pub platform: Platform,
    /// `config.User`, trimmed, when it names one.
    pub user: Option<String>,
}

/// Read an image config blob (`os`, `architecture`, `variant`, `os.version`, `os.features` at
/// the top level, `config.User`), typed and in one pass like [`parse_manifest`].
pub fn parse_image_config(bytes: &[u8]) -> Result<ImageConfig, ParseError> {
    if bytes.len() > MAX_CONFIG_BYTES {
        return Err(ParseError::TooLarge {
            what: "the image config",
            size: bytes.len() as u64,
            cap: MAX_CONFIG_BYTES,
        });
    }
    let doc: wire::Config = serde_json::from_slice(bytes).map_err(json_error)?;
    let (platform, config) = doc.into_parts();
    let user = config
        .and_then(|c| c.user)
        .map(|u| u.trim().to_string())
        .filter(|u| !u.is_empty());
    Ok(ImageConfig { platform, user })
}

/// The platform of an image config blob.
pub fn parse_config(bytes: &[u8]) -> Result<Platform, ParseError> {
    parse_image_config(bytes).map(|c| c.platform)
}

/// The default user of an image config blob (`config.User`), when it names one.
pub fn config_user(bytes: &[u8]) -> Option<String> {
    parse_image_config(bytes).ok()?.user
}

/// The documents as serde reads them: only the fields winlint uses. Unknown fields are skipped
/// by serde's derive without being built; lists are read through [`wire::Bounded`].
mod wire {
    use std::fmt;
    use std::marker::PhantomData;

    use serde::Deserialize;
    use serde::de::{self, Deserializer, SeqAccess, Visitor};

    use crate::model::image_facts::{MAX_ENTRIES, MAX_FEATURES, Platform as Facts};

    /// A manifest or a list.
    #[derive(Deserialize)]
    pub struct Manifest {
        #[serde(rename = "mediaType", default)]
        pub media_type: Option<String>,
        #[serde(default)]
        pub manifests: Option<Bounded<Entry, MAX_ENTRIES>>,
        #[serde(default)]
        pub config: Option<Descriptor>,
    }

    #[derive(Deserialize)]
    pub struct Descriptor {
        #[serde(default)]
        pub digest: Option<String>,
        #[serde(default)]
        pub size: Option<u64>,
    }

    /// A list entry: its digest, its platform and the one annotation read.
    #[derive(Deserialize)]
    pub struct Entry {
        #[serde(default)]
        pub digest: Option<String>,
        #[serde(default)]
        pub platform: Option<Platform>,
        #[serde(default)]
        pub annotations: Option<Annotations>,
    }

    #[derive(Deserialize)]
    pub struct Annotations {
        #[serde(rename = "vnd.docker.reference.type", default)]
        pub reference_type: Option<String>,
    }

    /// A platform: a list entry's `platform`, or the top level of a config.
    #[derive(Deserialize)]
    pub struct Platform {
        #[serde(default)]
        os: Option<String>,
        #[serde(default)]
        architecture: Option<String>,
        #[serde(default)]
        variant: Option<String>,
        #[serde(rename = "os.version", default)]
        os_version: Option<String>,
        #[serde(rename = "os.features", default)]
        os_features: Option<Bounded<String, MAX_FEATURES>>,
    }

    impl Platform {
        pub fn into_platform(self) -> Facts {
            Facts {
                os: self.os.unwrap_or_default(),
                architecture: self.architecture.unwrap_or_default(),
                variant: self.variant.filter(|v| !v.is_empty()),
                os_version: self.os_version.filter(|v| !v.is_empty()),
                os_features: self.os_features.map(|f| f.0).unwrap_or_default(),
                digest: None,
                user: None,
            }
        }
    }

    /// An image config: the platform fields at the top level, and `config`. (Not
    /// `#[serde(flatten)]`: that buffers every unknown field.)
    #[derive(Deserialize)]
    pub struct Config {
        #[serde(default)]
        os: Option<String>,
        #[serde(default)]
        architecture: Option<String>,
        #[serde(default)]
        variant: Option<String>,
        #[serde(rename = "os.version", default)]
        os_version: Option<String>,
        #[serde(rename = "os.features", default)]
        os_features: Option<Bounded<String, MAX_FEATURES>>,
        #[serde(default)]
        pub config: Option<RunConfig>,
    }

    impl Config {
        /// The platform, and `config`.
        pub fn into_parts(self) -> (Facts, Option<RunConfig>) {
            let p = Platform {
                os: self.os,
                architecture: self.architecture,
                variant: self.variant,
                os_version: self.os_version,
                os_features: self.os_features,
            };
            (p.into_platform(), self.config)
        }
    }

    #[derive(Deserialize)]
    pub struct RunConfig {
        #[serde(rename = "User", default)]
        pub user: Option<String>,
    }

    /// A JSON array of at most `N` items: the item after the `N`th is an error, met before it
    /// is built.
    pub struct Bounded<T, const N: usize>(pub Vec<T>);

    impl<'de, T: Deserialize<'de>, const N: usize> Deserialize<'de> for Bounded<T, N> {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct Items<T, const N: usize>(PhantomData<T>);
            impl<'de, T: Deserialize<'de>, const N: usize> Visitor<'de> for Items<T, N> {
                type Value = Bounded<T, N>;
                fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                    write!(f, "a list of at most {N} items")
                }
                fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                    let mut out = Vec::new();
                    while let Some(item) = seq.next_element()? {
                        if out.len() == N {
                            return Err(de::Error::custom(format!("more than {N} items")));
                        }
                        out.push(item);
                    }
                    Ok(Bounded(out))
                }
            }
            d.deserialize_seq(Items(PhantomData))
        }
    }
}

/// Image facts by image reference as written in the pod, for one evaluation: what the front end
/// knew when it started (the CLI resolved them first; `serve` read its cache).
pub type ImageFactsMap = BTreeMap<String, Arc<ImageFacts>>;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::windows::{V23H2, WS2019, WS2022, WS2025};
    use serde_json::json;

    const WIN11_22H2: Build = Build(22621);

    /// containerd/platforms `Test_PlatformCompat`, vector for vector.
    #[test]
    fn containerd_platform_compat_vectors() {
        let cases = [
            (WS2019, WS2019, true),
            (WS2019, WS2022, false),
            (WS2022, WS2019, false),
            (WS2022, WS2022, true),
            (WIN11_22H2, WS2019, false),
            (WIN11_22H2, WS2022, true),
            (V23H2, WS2019, false),
            (V23H2, WS2022, true),
            (WS2025, WS2022, true),
            (WS2022, WS2025, false),
            (WS2022, WIN11_22H2, false),
            (WS2025, WIN11_22H2, true),
        ];
        for (host, image, runs) in cases {
            assert_eq!(
                host_runs(host, image, true),
                runs,
                "host {host:?} image {image:?}"
            );
        }
        // Before the LTSC window the match is exact.
        assert!(!host_runs(WS2025, WS2022, false));
        assert!(host_runs(WS2025, WS2025, false));
    }

    #[test]
    fn os_version_parts_like_containerd() {
        assert_eq!(windows_version("10.0.20348.2340"), Some((10, 0, 20348)));
        assert_eq!(windows_version("10.0.17763"), Some((10, 0, 17763)));
        assert_eq!(windows_version("10.0"), None);
        assert_eq!(windows_version("10.0.99999"), None, "a build beyond u16");
    }

    fn facts(list: bool, entries: &[(&str, Option<&str>)]) -> ImageFacts {
        ImageFacts {
            digest: "sha256:00".into(),
            list,
            platforms: entries
                .iter()
                .map(|(os, v)| Platform {
                    os: os.to_string(),
                    architecture: "amd64".into(),
                    variant: None,
                    os_version: v.map(str::to_string),
                    os_features: vec![],
                    digest: None,
                    user: None,
                })
                .collect(),
            user: None,
        }
    }

    #[test]
    fn a_lists_user_is_that_of_the_entry_each_host_pulls() {
        let mut f = facts(
            true,
            &[
                ("linux", None),
                ("windows", Some("10.0.17763.5329")),
                ("windows", Some("10.0.20348.999")),
                ("windows", Some("10.0.20348.2966")),
            ],
        );
        let users = [
            None,
            Some(""),
            Some("ContainerUser"),
            Some("ContainerAdministrator"),
        ];
        for (p, u) in f.platforms.iter_mut().zip(users) {
            p.user = u.map(str::to_string);
        }
        // containerd's pick: the greatest os.version of a build the host runs, by number.
        let picked = |h| f.entry_for(h).and_then(|p| p.os_version.clone());
        assert_eq!(picked(WS2022).as_deref(), Some("10.0.20348.2966"));
        assert_eq!(picked(WS2025).as_deref(), Some("10.0.20348.2966"));
        assert_eq!(picked(WS2019).as_deref(), Some("10.0.17763.5329"));
        assert_eq!(
            f.user_for(&[WS2022]).as_deref(),
            Some("ContainerAdministrator")
        );
        assert_eq!(f.user_for(&[WS2019]).as_deref(), Some(""));
        // Hosts whose entries disagree, or no host known and entries that disagree: unknown.
        assert_eq!(f.user_for(&[WS2019, WS2022]), None);
        assert_eq!(f.user_for(&[]), None);
        // An entry whose config was not read: unknown.
        f.platforms[3].user = None;
        assert_eq!(f.user_for(&[WS2022]), None);
        // A single manifest: its config's user.
        let mut single = facts(false, &[("windows", Some("10.0.20348.1"))]);
        single.user = Some("ContainerUser".into());
        assert_eq!(single.user_for(&[WS2019]).as_deref(), Some("ContainerUser"));
    }

    #[test]
    fn a_list_entry_keeps_its_digest_when_it_is_one() {
        let good = format!("sha256:{}", "a".repeat(64));
        let index = json!({"mediaType": OCI_INDEX, "manifests": [
            {"digest": good, "platform": {"os": "windows", "architecture": "amd64"}},
            {"digest": "sha256:../x", "platform": {"os": "windows", "architecture": "amd64"}}]});
        let Ok(Manifest::List(p)) = parse_manifest(index.to_string().as_bytes(), None) else {
            panic!()
        };
        assert_eq!(p[0].digest.as_deref(), Some(good.as_str()));
        assert_eq!(p[1].digest, None);
    }

    #[test]
    fn the_config_names_the_default_user() {
        let nano = json!({"os": "windows", "architecture": "amd64", "os.version": "10.0.20348.1",
            "config": {"User": "ContainerUser", "Env": ["PATH=C:\\Windows"]}});
        assert_eq!(
            config_user(nano.to_string().as_bytes()).as_deref(),
            Some("ContainerUser")
        );
        let none = json!({"os": "windows", "config": {"User": ""}});
        assert_eq!(config_user(none.to_string().as_bytes()), None);
        assert_eq!(config_user(b"{}"), None);
        assert_eq!(config_user(b"not json"), None);
    }

    #[test]
    fn verdicts_per_host() {
        let p = Isolation::Process;
        let multi = facts(
            true,
            &[
                ("linux", None),
                ("windows", Some("10.0.17763.5329")),
                ("windows", Some("10.0.20348.2340")),
            ],
        );
        assert_eq!(multi.on_host(WS2019, p, true), HostVerdict::Runs(WS2019));
        assert_eq!(multi.on_host(WS2022, p, true), HostVerdict::Runs(WS2022));
        assert_eq!(multi.on_host(WS2025, p, true), HostVerdict::Runs(WS2022));
        assert_eq!(multi.on_host(WS2025, p, false), HostVerdict::NoMatch);
        assert_eq!(multi.windows_builds(), vec![WS2019, WS2022]);
        let linux = facts(true, &[("linux", None)]);
        assert_eq!(linux.on_host(WS2022, p, true), HostVerdict::NoWindows);
        let anywhere = facts(true, &[("windows", None)]);
        assert_eq!(anywhere.on_host(WS2019, p, true), HostVerdict::Unverifiable);
        // Hyper-V: a list of older builds does not pull; a single older manifest runs.
        let old = facts(true, &[("windows", Some("10.0.17763.1"))]);
        assert_eq!(
            old.on_host(WS2022, Isolation::Hyperv, true),
            HostVerdict::NoMatch
        );
        let single = facts(false, &[("windows", Some("10.0.17763.1"))]);
        assert_eq!(
            single.on_host(WS2022, Isolation::Hyperv, true),
            HostVerdict::Runs(WS2019)
        );
    }

    #[test]
    fn attestations_are_skipped_and_single_manifests_name_their_config() {
        let index = json!({"schemaVersion": 2, "mediaType": OCI_INDEX, "manifests": [
            {"mediaType": OCI_MANIFEST, "digest": "sha256:a", "size": 1,
             "platform": {"os": "windows", "architecture": "amd64", "os.version": "10.0.20348.1",
                          "os.features": ["win32k"]}},
            {"mediaType": OCI_MANIFEST, "digest": "sha256:b", "size": 1,
             "platform": {"os": "unknown", "architecture": "unknown"},
             "annotations": {"vnd.docker.reference.type": "attestation-manifest"}}]});
        let m = parse_manifest(index.to_string().as_bytes(), None).unwrap();
        let Manifest::List(p) = m else {
            panic!("{m:?}")
        };
        assert_eq!(p.len(), 1);
        assert_eq!(p[0].build(), Some(WS2022));
        assert_eq!(p[0].os_features, vec!["win32k"]);
        let single = json!({"schemaVersion": 2, "mediaType": DOCKER_MANIFEST,
            "config": {"mediaType": "application/vnd.docker.container.image.v1+json",
                       "digest": format!("sha256:{}", "c".repeat(64)), "size": 9}, "layers": []});
        assert_eq!(
            parse_manifest(single.to_string().as_bytes(), None),
            Ok(Manifest::Single {
                config: format!("sha256:{}", "c".repeat(64)),
                size: 9
            })
        );
        assert!(matches!(
            parse_manifest(b"{\"x\":", None),
            Err(ParseError::Json(_))
        ));
        assert!(matches!(
            parse_manifest(b"{\"schemaVersion\":1}", Some("text/plain")),
            Err(ParseError::MediaType(_))
        ));
    }

    #[test]
    fn dense_documents_are_refused_or_skipped_without_being_built() {
        // Unknown fields, however dense, are skipped.
        let zeros = vec!["0"; 100_000].join(",");
        let doc = format!(
            r#"{{"schemaVersion":2,"mediaType":"{OCI_INDEX}","junk":[{zeros}],"manifests":[]}}"#
        );
        assert_eq!(
            parse_manifest(doc.as_bytes(), None),
            Ok(Manifest::List(vec![]))
        );
        // A list of numbers is not a list of entries.
        let doc = format!(r#"{{"manifests":[{zeros}]}}"#);
        assert!(matches!(
            parse_manifest(doc.as_bytes(), None),
            Err(ParseError::Json(_))
        ));
        // More entries than MAX_ENTRIES: refused.
        let many = vec!["{}"; MAX_ENTRIES + 1].join(",");
        let doc = format!(r#"{{"manifests":[{many}]}}"#);
        let e = parse_manifest(doc.as_bytes(), None).unwrap_err();
        assert!(e.to_string().contains("more than 256 items"), "{e}");
        let doc = format!(r#"{{"manifests":[{}]}}"#, vec!["{}"; MAX_ENTRIES].join(","));
        assert_eq!(
            parse_manifest(doc.as_bytes(), None),
            Ok(Manifest::List(vec![]))
        );
        // Features: at most 16.
        let feats = vec![r#""win32k""#; 17].join(",");
        let cfg = format!(r#"{{"os":"windows","os.features":[{feats}]}}"#);
        assert!(parse_config(cfg.as_bytes()).is_err());
        // Over the byte caps.
        let big = vec![b' '; MAX_MANIFEST_BYTES + 1];
        assert!(matches!(
            parse_manifest(&big, None),
            Err(ParseError::TooLarge { .. })
        ));
        // A config larger than the cap is refused from the manifest's descriptor.
        let single = json!({"mediaType": DOCKER_MANIFEST,
            "config": {"digest": format!("sha256:{}", "a".repeat(64)), "size": 5 << 20}});
        assert!(matches!(
            parse_manifest(single.to_string().as_bytes(), None),
            Err(ParseError::TooLarge { .. })
        ));
        // A config digest that is not one (it goes into a URL path).
        let bad = json!({"mediaType": DOCKER_MANIFEST,
            "config": {"digest": "sha256:../../x", "size": 1}});
        assert!(matches!(
            parse_manifest(bad.to_string().as_bytes(), None),
            Err(ParseError::Shape(_))
        ));
    }

    #[test]
    fn a_config_is_read_in_one_pass() {
        let c = json!({"os": "windows", "architecture": "amd64", "os.version": "10.0.20348.1",
            "history": [{"created_by": "x"}], "rootfs": {"diff_ids": ["sha256:1"]},
            "config": {"User": " ContainerUser ", "Env": ["A=B"]}});
        let got = parse_image_config(c.to_string().as_bytes()).unwrap();
        assert_eq!(got.platform.build(), Some(crate::model::windows::WS2022));
        assert_eq!(got.user.as_deref(), Some("ContainerUser"));
        assert!(matches!(parse_image_config(b"7"), Err(ParseError::Json(_))));
    }
}
