//! Image references → repository, tag, digest and Windows build evidence (shared/rules.md §5).
//!
//! [`analyze`] runs for every container of every pod the webhook sees, so it stays cheap: one
//! pass to split the reference, a handful of precompiled regexes over the (short) tag, and the
//! only allocations are the strings of [`ImageRef`] (plus rare ones for WIN504/WIN505).

use std::sync::LazyLock;

use regex::Regex;

use super::known_images::{self, Platforms, Successor};
use super::windows::{Build, WS2016, WS2019, WS2022, WS2025};

/// A parsed image reference in its one normal form (see [`parse`]): two references that
/// containerd pulls from the same place have equal `ImageRef`s, so every rule, the registry
/// client (host, credentials, caches) and its metrics compare and look up through these fields
/// (or [`ImageRef::canonical`]) and never through the string the pod wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageRef {
    /// The registry in normal form ([`normal_registry`]): `docker.io`, `mcr.microsoft.com`,
    /// `myregistry.local:5000`; lower-cased, without the default HTTPS port, Docker Hub's
    /// other names as `docker.io`.
    pub registry: String,
    /// Path without registry (lower case, as the grammar requires); Docker Hub official images
    /// get `library/`.
    pub repository: String,
    /// As written: tags are case-sensitive.
    pub tag: Option<String>,
    pub digest: Option<String>,
}

impl ImageRef {
    /// The repository as users write it: Docker Hub images without `docker.io/` and
    /// `library/` (`busybox`, `microsoft/iis`, `mcr.microsoft.com/windows/servercore`).
    pub fn familiar(&self) -> String {
        if self.registry == DOCKER_HUB {
            let r = &self.repository;
            r.strip_prefix("library/").unwrap_or(r).to_string()
        } else {
            format!("{}/{}", self.registry, self.repository)
        }
    }

    /// The image containerd pulls, in normal form: `registry/repository:tag`
    /// (`docker.io/library/nginx:1.25`), or `registry/repository@digest` when a digest is given,
    /// whose tag is then not pulled (distribution's `ParseDockerRef`, which containerd's CRI
    /// pulls by: `busybox:1.36@sha256:…` is `busybox@sha256:…`). The key of what a registry
    /// says about an image. The tag stays in [`ImageRef::tag`]: the analysis reads it as
    /// evidence of low confidence ([`ImageInfo::low_confidence`]).
    pub fn canonical(&self) -> String {
        let mut s = format!("{}/{}", self.registry, self.repository);
        match (&self.digest, &self.tag) {
            (Some(d), _) => {
                s.push('@');
                s.push_str(d);
            }
            (None, Some(t)) => {
                s.push(':');
                s.push_str(t);
            }
            (None, None) => {}
        }
        s
    }
}

/// What an image reference says about the OS and Windows build of the image.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ImageInfo {
    /// `None` when the reference does not parse.
    pub reference: Option<ImageRef>,
    /// Derived Windows build (P1–P5), or the build of a known image whose tag names none
    /// (`redis:3.0-nanoserver`, see [`known_images`]).
    pub build: Option<Build>,
    /// Revision, when the tag names one (P1: `10.0.17763.4737`).
    pub revision: Option<u32>,
    /// Byte range, in the tag, of the token the build was derived from (`ltsc2019` in
    /// `4.8-windowsservercore-ltsc2019`; the whole tag for P5): what to replace to suggest
    /// another build, see [`ImageInfo::retag`].
    pub build_token: Option<(usize, usize)>,
    /// The image is Windows-only (Windows repo or a Windows token in the tag).
    pub windows: bool,
    /// The image is known Linux-only: Docker Hub official Linux images (busybox, alpine, nginx,
    /// any official `*-alpine` tag), the Linux-only `registry.k8s.io` images, and the tags
    /// [`known_images`] knows have no Windows image (`dotnet/aspnet:8.0`, `pause:3.1`).
    pub linux: bool,
    /// A known multi-OS or multi-OS-version manifest list (`iis:latest`,
    /// `dotnet/framework/*:4.8`, `pause:3.9`, the CSI sidecars, …), not pinned by digest: the
    /// runtime picks the entry matching the node.
    pub multi: bool,
    /// What [`known_images`] knows about an image whose tag names no build.
    pub known: Option<Platforms>,
    /// Tag and digest both given: the build comes from the tag and may be stale.
    pub low_confidence: bool,
    /// The token found in the tag has non-canonical case: (found, canonical), e.g. ("20h2", "20H2").
    pub case_mismatch: Option<(String, String)>,
    /// A Microsoft base-OS repository (`mcr.microsoft.com/windows/servercore`, …).
    pub ms_base: bool,
    /// A retired Docker Hub `microsoft/*` repository, with where it went.
    pub legacy_dockerhub: Option<Successor>,
    /// No tag and no digest, or tag `latest` without a digest (a digest pins the image).
    pub latest: bool,
    /// The reference does not parse (the kubelet fails it with `InvalidImageName`): why.
    /// [`ImageInfo::reference`] then holds only what could be read from it, for the image
    /// rules' facts; it is never pulled, looked up, or used to suggest an image.
    pub invalid: Option<Invalid>,
}

impl ImageInfo {
    /// The Windows builds of a known manifest list (`pause:3.5` → 1809 … 20H2).
    pub fn list_builds(&self) -> Option<&'static [Build]> {
        match self.known {
            Some(Platforms::Windows(b)) => Some(b),
            _ => None,
        }
    }

    /// The reference when it parses (what may be pulled, looked up or suggested from).
    pub fn pullable(&self) -> Option<&ImageRef> {
        self.reference.as_ref().filter(|_| self.invalid.is_none())
    }

    /// An image that runs only as a HostProcess container.
    pub fn host_process_only(&self) -> bool {
        self.known == Some(Platforms::HostProcessOnly)
    }

    /// An image of the same line (or of its MCR successor) that exists for nodes of `build`,
    /// from [`known_images::image_for`].
    pub fn image_for(&self, build: Build) -> Option<known_images::Suggestion> {
        let r = self.pullable()?;
        known_images::image_for(&r.registry, &r.repository, r.tag.as_deref(), build)
    }

    /// The reference with its build token replaced by `token`, e.g. `retag("ltsc2022")` of
    /// `python:3.12-windowsservercore-1809` is `python:3.12-windowsservercore-ltsc2022`.
    /// `None` when no build was derived.
    pub fn retag(&self, token: &str) -> Option<String> {
        let r = self.pullable()?;
        let tag = r.tag.as_deref()?;
        let (start, end) = self.build_token?;
        Some(format!(
            "{}:{}{token}{}",
            r.familiar(),
            &tag[..start],
            &tag[end..]
        ))
    }
}

const DOCKER_HUB: &str = "docker.io";
const MCR: &str = "mcr.microsoft.com";

/// Docker Hub's registry under the other names a reference can give it. `index.docker.io` is
/// the one distribution's `ParseNormalizedNamed` rewrites (`legacyDefaultDomain`); containerd's
/// resolver then sends `docker.io` to `registry-1.docker.io` (remotes/docker/config/hosts.go,
/// `ConfigureHosts`), which a reference may also name itself, with or without `:443`;
/// `registry.hub.docker.com` serves the same API. containerd would connect to
/// `docker.io:443` and to upper-case spellings as written, and would not add `library/` to
/// `registry-1.docker.io/nginx` (Docker Hub's token service grants no `repository:nginx`):
/// such references pull Docker Hub's image or nothing at all, so winlint judges them as
/// Docker Hub's (a finding on a pod that cannot start costs nothing; a missed one lets an
/// image past the webhook).
const DOCKER_HUB_ALIASES: &[&str] = &[
    DOCKER_HUB,
    "index.docker.io",
    "registry-1.docker.io",
    "registry.hub.docker.com",
];

/// A loopback registry host (without its port): containerd and winlint speak plain HTTP to it,
/// so its ports are kept as written.
pub fn is_loopback(host: &str) -> bool {
    host == "localhost"
        || host == "[::1]"
        || host
            .parse::<std::net::Ipv4Addr>()
            .is_ok_and(|a| a.is_loopback())
}

/// `host[:port]` → (host, port digits), an IPv6 host in brackets.
fn split_port(registry: &str) -> (&str, Option<&str>) {
    let colon = match registry.rfind(']') {
        Some(end) => registry[end..].find(':').map(|i| end + i),
        None => registry.rfind(':'),
    };
    match colon {
        Some(i)
            if i + 1 < registry.len() && registry[i + 1..].bytes().all(|b| b.is_ascii_digit()) =>
        {
            (&registry[..i], Some(&registry[i + 1..]))
        }
        _ => (registry, None),
    }
}

/// The normal form of a registry (`host[:port]` as a reference names it), the one every
/// comparison uses: two registries are the same iff containerd reaches the same endpoint.
/// * the host lower-cased and the port normalised ([`normal_endpoint`]);
/// * Docker Hub's other names as `docker.io` (see `DOCKER_HUB_ALIASES`).
pub fn normal_registry(registry: &str) -> String {
    let endpoint = normal_endpoint(registry);
    match DOCKER_HUB_ALIASES.contains(&endpoint.as_str()) {
        true => DOCKER_HUB.to_string(),
        false => endpoint,
    }
}

/// `host[:port]` as an endpoint: the host lower-cased (DNS names are case-insensitive;
/// distribution keeps the case it was given, containerd connects to the same host); the port as
/// a number (`:05000` is Go's port 5000), and none for 443 on a host containerd speaks HTTPS to
/// (`mcr.microsoft.com:443` is `mcr.microsoft.com`); a loopback host (plain HTTP) keeps its
/// port. Also what a credential key's host is matched by (`registry::keyring`).
pub fn normal_endpoint(registry: &str) -> String {
    let lower = registry.to_ascii_lowercase();
    let (host, port) = split_port(&lower);
    let port = port.map(|p| match p.trim_start_matches('0') {
        "" => "0",
        t => t,
    });
    match port {
        None => host.to_string(),
        Some("443") if !is_loopback(host) => host.to_string(),
        // Not a port Go dials (nothing can be pulled from it): kept as written.
        Some(p) if p.len() > 5 || p.parse::<u32>().is_ok_and(|n| n > 65535) => lower,
        Some(p) => format!("{host}:{p}"),
    }
}

/// The key of what is known about the image `reference` (registry facts, caches): its
/// [`ImageRef::canonical`] form, or the string itself when it does not parse.
pub fn fact_key(reference: &str) -> std::borrow::Cow<'_, str> {
    match parse(reference) {
        Some(r) => r.canonical().into(),
        None => reference.into(),
    }
}

/// Parse an image reference, `[registry[:port]/]path[:tag][@digest]`, into its normal form.
/// The first component is a registry iff it contains `.` or `:`, is `localhost`, or has an
/// upper-case letter (a path may not: distribution's `splitDockerDomain`); else the registry
/// is Docker Hub, whose one-component paths get `library/`. `None` for references the
/// distribution grammar rejects (the kubelet fails them with `InvalidImageName`), among them
/// an upper-case path; [`parse_checked`] says why. See [`normal_registry`] for the registry.
pub fn parse(reference: &str) -> Option<ImageRef> {
    parse_checked(reference).ok()
}

/// Why the kubelet cannot parse an image reference: the error of distribution's
/// `ParseNormalizedNamed` (github.com/distribution/reference, normalize.go and reference.go;
/// the digest through opencontainers/go-digest's `Parse`), which the kubelet's image manager
/// calls before every pull (`applyDefaultImageTag`, pkg/kubelet/images/image_manager.go) and
/// answers with `InvalidImageName`. `error` is distribution's own text; `what` names the part.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invalid {
    pub error: &'static str,
    pub what: String,
    /// An unrendered template (`{{ .Values.image }}`, `${IMAGE}`): the reference is filled in
    /// before it reaches a cluster, so nothing is read from it and WIN509 stays silent.
    pub template: bool,
}

impl std::fmt::Display for Invalid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.error, self.what)
    }
}

const INVALID_FORMAT: &str = "invalid reference format";

fn invalid(error: &'static str, what: impl Into<String>) -> Invalid {
    Invalid {
        error,
        what: what.into(),
        template: false,
    }
}

/// An unrendered template placeholder: Helm's / Go's `{{ … }}` or a shell / envsubst `${…}`.
fn is_template(reference: &str) -> bool {
    let between = |open: &str, close: &str| {
        reference
            .find(open)
            .is_some_and(|i| reference[i + open.len()..].contains(close))
    };
    between("{{", "}}") || between("${", "}")
}

/// [`parse`], with the reason a reference does not parse (the kubelet's grammar, exactly:
/// distribution's `ReferenceRegexp`, its lower-case and 255-character path checks, the 64-hex
/// identifier check, and go-digest's algorithms `sha256`, `sha384`, `sha512` with 64, 96 or
/// 128 lower-case hex digits).
pub fn parse_checked(reference: &str) -> Result<ImageRef, Invalid> {
    if reference.is_empty() {
        return Err(invalid(
            "repository name must have at least one component",
            "the reference is empty",
        ));
    }
    if is_template(reference) {
        return Err(Invalid {
            template: true,
            ..invalid(INVALID_FORMAT, "an unrendered template placeholder")
        });
    }
    if reference.len() == 64
        && reference
            .bytes()
            .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    {
        return Err(invalid(
            "cannot specify 64-byte hexadecimal strings",
            "an image ID, not a repository name",
        ));
    }
    if let Some(c) = reference.chars().find(|c| c.is_whitespace()) {
        return Err(invalid(
            INVALID_FORMAT,
            format!("it contains whitespace ({c:?})"),
        ));
    }
    let (name_tag, digest) = match reference.split_once('@') {
        Some((n, d)) => (n, Some(d)),
        None => (reference, None),
    };
    if let Some(d) = digest {
        check_digest(d)?;
    }
    let last_slash = name_tag.rfind('/');
    let (name, tag) = match name_tag.rfind(':') {
        Some(i) if last_slash.is_none_or(|s| i > s) => (&name_tag[..i], Some(&name_tag[i + 1..])),
        _ => (name_tag, None),
    };
    if let Some(t) = tag.filter(|t| !valid_tag(t)) {
        return Err(invalid(
            INVALID_FORMAT,
            format!(
                "the tag {t:?} is not 1 to 128 of letters, digits, '_', '.' and '-', starting with a letter, digit or '_'"
            ),
        ));
    }
    let (registry, path) = match name.split_once('/') {
        Some((first, rest))
            if first.contains(['.', ':'])
                || first == "localhost"
                || first.bytes().any(|b| b.is_ascii_uppercase()) =>
        {
            (first, rest)
        }
        _ => (DOCKER_HUB, name),
    };
    if !valid_registry(registry) {
        return Err(invalid(
            INVALID_FORMAT,
            format!("the registry {registry:?} is not a host name with an optional port"),
        ));
    }
    if let Some(bad) = path.split('/').find(|c| !valid_component(c)) {
        let lower = bad.to_ascii_lowercase();
        let error = match bad != lower && valid_component(&lower) {
            true => "repository name must be lowercase",
            false => INVALID_FORMAT,
        };
        let what = match bad {
            "" => "a path component is empty".to_string(),
            _ => format!(
                "the path component {bad:?} is not lower-case letters and digits joined by '.', '_', '__' or dashes"
            ),
        };
        return Err(invalid(error, what));
    }
    let registry = normal_registry(registry);
    let repository = if registry == DOCKER_HUB && !path.contains('/') {
        format!("library/{path}")
    } else {
        path.to_string()
    };
    if repository.len() > 255 {
        return Err(invalid(
            "repository name must not be more than 255 characters",
            format!("the path has {} characters", repository.len()),
        ));
    }
    Ok(ImageRef {
        registry,
        repository,
        tag: tag.map(str::to_string),
        digest: digest.map(str::to_string),
    })
}

/// What can still be read from a reference the kubelet rejects, for the image rules' facts only
/// (never pulled, looked up or suggested): the tag as written, the path lower-cased, the
/// registry as the first component when it looks like one (`< Registry Name >.azurecr.io`
/// keeps its `.azurecr.io`). `None` for a template or when no path is left.
fn readable(reference: &str) -> Option<ImageRef> {
    let s = reference.trim();
    let (name_tag, digest) = match s.split_once('@') {
        Some((n, d)) => (n, check_digest(d).ok().map(|_| d)),
        None => (s, None),
    };
    let last_slash = name_tag.rfind('/');
    let (name, tag) = match name_tag.rfind(':') {
        Some(i) if last_slash.is_none_or(|s| i > s) => (&name_tag[..i], Some(&name_tag[i + 1..])),
        _ => (name_tag, None),
    };
    let tag = tag.map(str::trim).filter(|t| !t.is_empty());
    let (registry, path) = match name.split_once('/') {
        Some((first, rest))
            if first.contains(['.', ':', ' ', '<', '>'])
                || first == "localhost"
                || first.bytes().any(|b| b.is_ascii_uppercase()) =>
        {
            (first, rest)
        }
        _ => (DOCKER_HUB, name),
    };
    let path = path
        .split('/')
        .map(|c| c.trim().to_ascii_lowercase())
        .filter(|c| !c.is_empty())
        .collect::<Vec<_>>()
        .join("/");
    if path.is_empty() {
        return None;
    }
    let registry = normal_registry(&registry.split_whitespace().collect::<String>());
    let repository = match registry == DOCKER_HUB && !path.contains('/') {
        true => format!("library/{path}"),
        false => path,
    };
    Some(ImageRef {
        registry,
        repository,
        tag: tag.map(str::to_string),
        digest: digest.map(str::to_string),
    })
}

/// `[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}`
fn valid_tag(t: &str) -> bool {
    let b = t.as_bytes();
    !b.is_empty()
        && b.len() <= 128
        && (b[0].is_ascii_alphanumeric() || b[0] == b'_')
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'-'))
}

/// A path component, distribution's `[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*`: lower-case
/// alphanumerics separated by one `.`, one `_`, `__` or a run of dashes.
fn valid_component(c: &str) -> bool {
    let alnum = |x: u8| x.is_ascii_lowercase() || x.is_ascii_digit();
    let b = c.as_bytes();
    if b.is_empty() || !alnum(b[0]) || !alnum(b[b.len() - 1]) {
        return false;
    }
    b.split(|&x| alnum(x))
        .all(|sep| matches!(sep, b"" | b"." | b"_" | b"__") || sep.iter().all(|&x| x == b'-'))
}

/// distribution's domain: dot-separated labels of alphanumerics and inner dashes, or an IPv6
/// address in brackets, then an optional `:port` of digits.
fn valid_registry(r: &str) -> bool {
    let (host, _) = split_port(r);
    if host.len() < r.len() && !r[host.len()..].starts_with(':') {
        return false;
    }
    let label = |l: &[u8]| {
        !l.is_empty()
            && l[0].is_ascii_alphanumeric()
            && l[l.len() - 1].is_ascii_alphanumeric()
            && l.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'-')
    };
    match host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
        Some(v6) => !v6.is_empty() && v6.bytes().all(|c| c.is_ascii_hexdigit() || c == b':'),
        None => host.as_bytes().split(|&c| c == b'.').all(label),
    }
}

/// distribution's `digestPat` (`[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:` and at
/// least 32 hex digits), then go-digest's `Digest.Validate`: an algorithm it implements
/// (`sha256`, `sha384`, `sha512`) with exactly 64, 96 or 128 lower-case hex digits.
fn check_digest(d: &str) -> Result<(), Invalid> {
    let format = || {
        invalid(
            INVALID_FORMAT,
            format!("the digest {d:?} is not algorithm:hex"),
        )
    };
    let (alg, hex) = d.split_once(':').ok_or_else(format)?;
    let alg_ok = alg.split(['-', '_', '+', '.']).all(|part| {
        part.bytes().next().is_some_and(|c| c.is_ascii_alphabetic())
            && part.bytes().all(|c| c.is_ascii_alphanumeric())
    });
    if !alg_ok || hex.len() < 32 || !hex.bytes().all(|c| c.is_ascii_hexdigit()) {
        return Err(format());
    }
    let len = match alg {
        "sha256" => 64,
        "sha384" => 96,
        "sha512" => 128,
        _ => {
            return Err(invalid(
                "unsupported digest algorithm",
                format!("{alg:?}: the kubelet knows sha256, sha384 and sha512"),
            ));
        }
    };
    if hex.len() != len {
        return Err(invalid(
            "invalid checksum digest length",
            format!("{alg} takes {len} hex digits, not {}", hex.len()),
        ));
    }
    if hex.bytes().any(|c| c.is_ascii_uppercase()) {
        return Err(invalid(
            "invalid checksum digest format",
            "the hex digits must be lower case",
        ));
    }
    Ok(())
}

fn re(pattern: &str) -> Regex {
    Regex::new(pattern).expect("valid built-in regex")
}

// The ordered patterns of shared/rules.md §5.1 (first match wins), with capture groups added
// for the token; `[0-9]` stands for `\d` (tags are ASCII).
static P1: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)(?:^|[-_])(10\.0\.([0-9]{5})(?:\.([0-9]{1,6}))?)(?:$|[-_])"));
static P2: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)(?:^|[-_])(ltsc(2016|2019|2022|2025))(?:$|[-_])"));
static P3: LazyLock<Regex> = LazyLock::new(|| re(r"(?i)(?:^|[-_])(sac2016)(?:$|[-_])"));
static P4: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)(?:^|[-_])((?:windowsservercore|servercore|nanoserver|windows)-(1607|1709|1803|1809|1903|1909|2004|2009|20h2))(?:$|[-_])",
    )
});
static P5: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?i)^(1607|1709|1803|1809|1903|1909|2004|2009|20h2)(?:$|-kb[0-9]+|-amd64|-arm64)")
});
// P6 (`(?:^|[-_])(?:windowsservercore|nanoserver)(?:$|[-_])`: Windows, build unknown) is
// evidence only, and the §4.1 evidence below (the tag *contains* a Windows token) is a superset
// of it, so it needs no regex of its own.
/// Windows evidence in a tag (§4.1: the tag *contains* one of these).
static WINDOWS_TOKEN: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?i)windowsservercore|nanoserver|servercore|ltsc20(?:16|19|22|25)|sac2016")
});
/// OS words whose canonical spelling is lower case (WIN505).
static OS_WORD: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)(?:^|[-_])(windowsservercore|servercore|nanoserver|ltsc20(?:16|19|22|25)|sac2016)(?:$|[-_])",
    )
});
/// Alpine-based variants (`3.12-alpine`, `alpine3.19`, `1.25-alpine-slim`).
static ALPINE: LazyLock<Regex> = LazyLock::new(|| re(r"(?:^|[-_])alpine[0-9.]*(?:$|[-_])"));

/// The build a SAC token names (P4/P5).
fn sac_build(token: &str) -> Build {
    let t = token.as_bytes();
    Build(match t {
        b"1607" => 14393,
        b"1709" => 16299,
        b"1803" => 17134,
        b"1809" => 17763,
        b"1903" => 18362,
        b"1909" => 18363,
        b"2004" => 19041,
        _ => 19042, // 2009, 20H2 (the regexes admit nothing else)
    })
}

/// A build found in a tag.
struct TagBuild<'t> {
    build: Build,
    revision: Option<u32>,
    /// The text to check for case (WIN505); `None` when it has no letters (P1).
    case_token: Option<&'t str>,
    /// What to replace to suggest another build.
    span: (usize, usize),
}

/// P1–P5 over `tag`; P5 only when `ms_repo`.
fn tag_build(tag: &str, ms_repo: bool) -> Option<TagBuild<'_>> {
    // Every build pattern needs a digit: most application tags (`latest`, `stable`) stop here.
    if !tag.bytes().any(|b| b.is_ascii_digit()) {
        return None;
    }
    // Each pattern is tried only when the tag holds its literal part, which most tags do not.
    if let Some(c) = tag.contains("10.0.").then(|| P1.captures(tag)).flatten() {
        let whole = c.get(1)?;
        return Some(TagBuild {
            build: Build(c[2].parse().ok()?),
            revision: c.get(3).and_then(|r| r.as_str().parse().ok()),
            case_token: None,
            span: (whole.start(), whole.end()),
        });
    }
    if let Some(c) = contains_ci(tag, "ltsc").then(|| P2.captures(tag)).flatten() {
        let whole = c.get(1)?;
        let build = match &c[2] {
            "2016" => WS2016,
            "2019" => WS2019,
            "2022" => WS2022,
            _ => WS2025,
        };
        return Some(TagBuild {
            build,
            revision: None,
            case_token: Some(whole.as_str()),
            span: (whole.start(), whole.end()),
        });
    }
    if let Some(c) = contains_ci(tag, "sac2016")
        .then(|| P3.captures(tag))
        .flatten()
    {
        let whole = c.get(1)?;
        return Some(TagBuild {
            build: WS2016,
            revision: None,
            case_token: Some(whole.as_str()),
            span: (whole.start(), whole.end()),
        });
    }
    let p4 = contains_ci(tag, "server") || contains_ci(tag, "windows");
    if let Some(c) = p4.then(|| P4.captures(tag)).flatten() {
        let version = c.get(2)?;
        return Some(TagBuild {
            build: sac_build(&version.as_str().to_ascii_lowercase()),
            revision: None,
            case_token: Some(c.get(1)?.as_str()),
            span: (version.start(), version.end()),
        });
    }
    if !ms_repo || !tag.as_bytes()[0].is_ascii_digit() {
        return None;
    }
    let c = P5.captures(tag)?;
    let version = c.get(1)?;
    Some(TagBuild {
        build: sac_build(&version.as_str().to_ascii_lowercase()),
        revision: None,
        case_token: Some(version.as_str()),
        span: (0, tag.len()),
    })
}

/// `needle` (lower-case ASCII) occurs in `hay`, ignoring ASCII case.
fn contains_ci(hay: &str, needle: &str) -> bool {
    hay.as_bytes()
        .windows(needle.len())
        .any(|w| w.eq_ignore_ascii_case(needle.as_bytes()))
}

/// The canonical spelling of an OS token: lower case, except `20H2`.
fn canonical(token: &str) -> String {
    let mut s = token.to_ascii_lowercase();
    if let Some(i) = s.find("20h2") {
        s.replace_range(i..i + 4, "20H2");
    }
    s
}

/// The first OS token of `tag` (the build token, then the OS words) whose case differs from
/// the canonical spelling. `windows_token`: the tag holds Windows evidence (else it has no OS
/// word to look at).
fn case_mismatch(
    tag: &str,
    build_token: Option<&str>,
    windows_token: bool,
) -> Option<(String, String)> {
    if !tag.bytes().any(|b| b.is_ascii_uppercase()) && !tag.contains("20h2") {
        return None;
    }
    build_token
        .into_iter()
        .chain(
            OS_WORD
                .captures_iter(if windows_token { tag } else { "" })
                .filter_map(|c| c.get(1))
                .map(|m| m.as_str()),
        )
        .find_map(|found| {
            let canon = canonical(found);
            (canon != found).then(|| (found.to_string(), canon))
        })
}

/// Docker official images that exist for Linux only.
const LINUX_OFFICIAL: &[&str] = &[
    "busybox",
    "alpine",
    "ubuntu",
    "debian",
    "centos",
    "fedora",
    "nginx",
    "rockylinux",
    "almalinux",
    "amazonlinux",
    "oraclelinux",
    "archlinux",
];

/// `registry.k8s.io` repositories (and their sub-repositories) known to be Linux-only: the
/// control plane and cluster add-ons. Deliberately an allow-list: `pause`, `e2e-test-images/*`,
/// the CSI sidecars (`sig-storage/*`), `kube-proxy` and others publish Windows variants.
const LINUX_K8S: &[&str] = &[
    "kube-apiserver",
    "kube-controller-manager",
    "kube-scheduler",
    "etcd",
    "coredns",
    "ingress-nginx",
    "metrics-server",
    "kube-state-metrics",
    "dns",
    "cpa",
    "autoscaling",
    "descheduler",
    "nfd",
    "external-dns",
    "kas-network-proxy",
];

/// Known Linux-only: `linux` must never be a guess (it feeds WIN004, WIN008 and WIN507). Name
/// heuristics (`*-alpine`) hold only for Docker Hub official images: other repositories publish
/// Windows images under such names (`e2eteam/nginx:1.14-alpine`, the e2e test images).
fn known_linux(registry: &str, repository: &str, tag: Option<&str>) -> bool {
    match registry {
        DOCKER_HUB => repository.strip_prefix("library/").is_some_and(|n| {
            LINUX_OFFICIAL.contains(&n)
                || tag.is_some_and(|t| ALPINE.is_match(t))
                || (n == "redis" && redis_linux_only(tag))
        }),
        "registry.k8s.io" | "k8s.gcr.io" => LINUX_K8S.iter().any(|p| {
            repository
                .strip_prefix(p)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
        }),
        "gcr.io" => repository.starts_with("distroless/"),
        _ => false,
    }
}

/// Docker Hub's redis published Windows images (Nano Server and Server Core, 10.0.14393) for
/// 3.x only, in 2017, and none since (docker-library repo-info): `latest` and the tags of 4.0
/// and later are Linux-only; a 3.x shared tag may still list its Windows entries.
fn redis_linux_only(tag: Option<&str>) -> bool {
    match tag {
        None | Some("latest") => true,
        Some(t) => t
            .split(['.', '-'])
            .next()
            .and_then(|major| major.parse::<u32>().ok())
            .is_some_and(|major| major >= 4),
    }
}

/// Analyse an image reference.
///
/// A reference the kubelet rejects ([`parse_checked`]) is analysed from what can still be read
/// from it ([`readable`]): `< Registry Name >.azurecr.io/windows/servercore/iis:windowsservercore-ltsc2019`
/// still names an ltsc2019 image, which the build rules judge, while WIN509 reports the
/// reference ([`ImageInfo::invalid`]). Nothing is read from a template.
pub fn analyze(reference: &str) -> ImageInfo {
    match parse_checked(reference) {
        Ok(r) => analyze_ref(r),
        Err(e) => {
            let read = (!e.template).then(|| readable(reference)).flatten();
            let mut info = read.map(analyze_ref).unwrap_or_default();
            info.invalid = Some(e);
            info
        }
    }
}

fn analyze_ref(r: ImageRef) -> ImageInfo {
    let (registry, repo, tag) = (r.registry.as_str(), r.repository.as_str(), r.tag.as_deref());
    let mcr = registry == MCR;
    let hub = registry == DOCKER_HUB;
    let ms_base =
        (mcr && matches!(
            repo,
            "windows/servercore" | "windows/nanoserver" | "windows/server" | "windows"
        )) || (hub && matches!(repo, "microsoft/windowsservercore" | "microsoft/nanoserver"));
    // P5's context: the base-OS repositories, their insider variants, and IIS.
    let p5_repo = ms_base
        || (mcr
            && matches!(
                repo,
                "windows/servercore/insider"
                    | "windows/nanoserver/insider"
                    | "windows/server/insider"
                    | "windows/servercore/iis"
            ));
    let windows_repo = (mcr
        && (repo == "windows"
            || repo.starts_with("windows/")
            || repo.starts_with("dotnet/framework/")))
        || (hub
            && matches!(
                repo,
                "microsoft/windowsservercore" | "microsoft/nanoserver" | "microsoft/iis"
            ));
    let windows_token = tag.is_some_and(|t| WINDOWS_TOKEN.is_match(t));
    let found = tag.and_then(|t| tag_build(t, p5_repo));
    // What the table knows matters only where the tag names no build.
    let known = match found {
        Some(_) => None,
        None => known_images::platforms(registry, repo, tag),
    };
    let windows = windows_repo
        || windows_token
        || matches!(
            known,
            Some(Platforms::Single(_) | Platforms::HostProcessOnly)
        );
    let linux = !windows
        && (known_linux(registry, repo, tag) || matches!(known, Some(Platforms::LinuxOnly(_))));
    let multi = r.digest.is_none()
        && matches!(
            known,
            Some(Platforms::Windows(_) | Platforms::WindowsUnmapped)
        );
    ImageInfo {
        build: found.as_ref().map(|f| f.build).or(match known {
            Some(Platforms::Single(b)) => Some(b),
            _ => None,
        }),
        revision: found.as_ref().and_then(|f| f.revision),
        build_token: found.as_ref().map(|f| f.span),
        case_mismatch: tag.and_then(|t| {
            case_mismatch(t, found.as_ref().and_then(|f| f.case_token), windows_token)
        }),
        windows,
        linux,
        multi,
        known,
        low_confidence: tag.is_some() && r.digest.is_some(),
        ms_base,
        legacy_dockerhub: hub
            .then(|| repo.strip_prefix("microsoft/"))
            .flatten()
            .map(|name| known_images::successor(name, tag)),
        latest: r.digest.is_none() && tag.is_none_or(|t| t == "latest"),
        reference: Some(r),
        invalid: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(n: u32) -> Option<Build> {
        Some(Build(n))
    }

    const DIGEST: &str = "sha256:ea1b4bb4e6fd0d1f1d1d4e4e2b1f4e6f0d1f1d1d4e4e2b1f4e6f0d1f1d1d4e4e";

    #[test]
    fn parses_the_distribution_grammar() {
        // (reference, registry, repository, tag, digest)
        let cases: &[(&str, &str, &str, Option<&str>, bool)] = &[
            ("busybox", "docker.io", "library/busybox", None, false),
            (
                "busybox:1.36",
                "docker.io",
                "library/busybox",
                Some("1.36"),
                false,
            ),
            (
                "docker.io/busybox",
                "docker.io",
                "library/busybox",
                None,
                false,
            ),
            (
                "index.docker.io/library/busybox:1",
                "docker.io",
                "library/busybox",
                Some("1"),
                false,
            ),
            ("microsoft/iis", "docker.io", "microsoft/iis", None, false),
            (
                "docker.io/microsoft/iis:nanoserver",
                "docker.io",
                "microsoft/iis",
                Some("nanoserver"),
                false,
            ),
            (
                "myregistry.local:5000/team/app:1809",
                "myregistry.local:5000",
                "team/app",
                Some("1809"),
                false,
            ),
            (
                "myregistry.local:5000/app",
                "myregistry.local:5000",
                "app",
                None,
                false,
            ),
            ("localhost/app:1", "localhost", "app", Some("1"), false),
            (
                "localhost:5000/a/b/c",
                "localhost:5000",
                "a/b/c",
                None,
                false,
            ),
            ("team/app:1", "docker.io", "team/app", Some("1"), false),
            (
                "MCR.Microsoft.com/windows:1809",
                "mcr.microsoft.com",
                "windows",
                Some("1809"),
                false,
            ),
            (
                "mcr.microsoft.com/windows/nanoserver@DIGEST",
                "mcr.microsoft.com",
                "windows/nanoserver",
                None,
                true,
            ),
            (
                "mcr.microsoft.com/windows/nanoserver:ltsc2019@DIGEST",
                "mcr.microsoft.com",
                "windows/nanoserver",
                Some("ltsc2019"),
                true,
            ),
        ];
        for (input, registry, repo, tag, digest) in cases {
            let input = input.replace("DIGEST", DIGEST);
            let r = parse(&input).unwrap_or_else(|| panic!("{input} does not parse"));
            assert_eq!(r.registry, *registry, "{input}");
            assert_eq!(r.repository, *repo, "{input}");
            assert_eq!(r.tag.as_deref(), *tag, "{input}");
            assert_eq!(r.digest.is_some(), *digest, "{input}");
        }
    }

    #[test]
    fn rejects_invalid_references() {
        for bad in [
            "",
            "Busybox",
            "mcr.microsoft.com/Windows/servercore:ltsc2022",
            "busybox:",
            "busybox:-x",
            "busybox@sha256:abc",
            "busybox@sha256",
            "a//b",
            "/busybox",
            "busybox/",
            "bus box",
            "busybox:1.0 ",
        ] {
            assert_eq!(parse(bad), None, "{bad:?}");
            assert!(analyze(bad).invalid.is_some(), "{bad:?}");
            assert_eq!(analyze(bad).pullable(), None, "{bad:?}");
        }
    }

    /// The kubelet's grammar, case by case (distribution's reference.go / normalize.go and
    /// go-digest's algorithm.go): the error each reference gets.
    #[test]
    fn invalid_references_say_why_as_distribution_does() {
        let hex64 = "a".repeat(64);
        let long_tag = format!("busybox:{}", "t".repeat(129));
        let long_path = format!("r.io/{}", "a".repeat(256));
        let sha384 = format!("busybox@sha384:{}", "b".repeat(96));
        let upper_hex = format!("busybox@sha256:{}", "A".repeat(64));
        let short = format!("busybox@sha256:{}", "a".repeat(32));
        let md5 = format!("busybox@md5:{}", "a".repeat(32));
        let cases: &[(&str, Option<&str>)] = &[
            ("", Some("at least one component")),
            (&hex64, Some("64-byte hexadecimal")),
            (
                "mcr.microsoft.com/Windows/servercore:ltsc2022",
                Some("must be lowercase"),
            ),
            ("contoso/App:1", Some("must be lowercase")),
            ("Contoso/app:1", None), // an upper-case first component is a registry
            (
                "< Registry Name >.azurecr.io/windows/servercore/iis:windowsservercore-ltsc2019",
                Some("whitespace"),
            ),
            ("<registry>.azurecr.io/app:1", Some("registry")),
            ("busybox:1.0+x", Some("the tag")),
            ("busybox:-x", Some("the tag")),
            (&long_tag, Some("the tag")),
            (&format!("busybox:{}", "t".repeat(128)), None),
            (&long_path, Some("255 characters")),
            (&sha384, None),
            (&upper_hex, Some("lower case")),
            (&short, Some("digest length")),
            (&md5, Some("unsupported digest algorithm")),
            ("busybox@sha256", Some("algorithm:hex")),
            ("a//b", Some("empty")),
            ("{{ .Values.image }}", Some("template")),
            (
                "mcr.microsoft.com/windows/servercore:${TAG}",
                Some("template"),
            ),
        ];
        for (reference, why) in cases {
            match (parse_checked(reference), why) {
                (Ok(_), None) => {}
                (Err(e), Some(w)) => assert!(e.to_string().contains(w), "{reference:?}: {e}"),
                (r, w) => panic!("{reference:?}: {r:?}, expected {w:?}"),
            }
        }
        assert!(parse_checked("${IMAGE}").unwrap_err().template);
        assert!(!parse_checked("bus box").unwrap_err().template);
    }

    /// What an invalid reference still says feeds the facts (never a pull or a suggestion).
    #[test]
    fn invalid_references_keep_their_readable_parts() {
        let i = analyze(
            "< Registry Name >.azurecr.io/windows/servercore/iis:windowsservercore-ltsc2019",
        );
        assert!(i.invalid.is_some());
        assert_eq!(i.build, b(17763));
        assert!(i.windows);
        let r = i.reference.as_ref().unwrap();
        assert_eq!(r.repository, "windows/servercore/iis");
        assert_eq!(r.tag.as_deref(), Some("windowsservercore-ltsc2019"));
        assert_eq!(i.pullable(), None);
        assert_eq!(i.image_for(WS2022), None);
        assert_eq!(i.retag("ltsc2022"), None);
        // An upper-case path is read lower-cased: Microsoft's base image, 1809.
        let i = analyze("mcr.microsoft.com/Windows/ServerCore:ltsc2019");
        assert!(i.ms_base && i.invalid.is_some());
        assert_eq!(i.build, b(17763));
        // A template gives nothing to read.
        let i = analyze("{{ .Values.image.repository }}:ltsc2019");
        assert_eq!(i.reference, None);
        assert!(i.invalid.as_ref().unwrap().template);
    }

    #[test]
    fn familiar_names() {
        let f = |s: &str| parse(s).unwrap().familiar();
        assert_eq!(f("docker.io/library/busybox:1"), "busybox");
        assert_eq!(f("index.docker.io/microsoft/iis"), "microsoft/iis");
        assert_eq!(
            f("mcr.microsoft.com/windows/servercore:ltsc2019"),
            "mcr.microsoft.com/windows/servercore"
        );
    }

    /// distribution/reference `normalize_test.go` (the normaliser containerd's
    /// `reference/docker` copies and the kubelet's `ParseNormalizedNamed` runs):
    /// `TestParseRepositoryInfo`, every spelling of each row (familiar, full, ambiguous) →
    /// (domain, path), and `TestNormalizedSplitHostname`. One deliberate difference: the domain
    /// is lower-cased (`Foo/bar` is domain `Foo` upstream; containerd connects to the same host).
    #[test]
    fn distribution_normalize_vectors() {
        let repository_info: &[(&[&str], &str, &str)] = &[
            (
                &["fooo/bar", "docker.io/fooo/bar", "index.docker.io/fooo/bar"],
                "docker.io",
                "fooo/bar",
            ),
            (
                &["ubuntu", "docker.io/library/ubuntu", "library/ubuntu"],
                "docker.io",
                "library/ubuntu",
            ),
            (
                &["nonlibrary/ubuntu", "docker.io/nonlibrary/ubuntu"],
                "docker.io",
                "nonlibrary/ubuntu",
            ),
            (
                &["other/library", "docker.io/other/library"],
                "docker.io",
                "other/library",
            ),
            (
                &["127.0.0.1:8000/private/moonbase"],
                "127.0.0.1:8000",
                "private/moonbase",
            ),
            (
                &["127.0.0.1:8000/privatebase"],
                "127.0.0.1:8000",
                "privatebase",
            ),
            (
                &["example.com/private/moonbase"],
                "example.com",
                "private/moonbase",
            ),
            (&["example.com/privatebase"], "example.com", "privatebase"),
            (
                &["example.com:8000/private/moonbase"],
                "example.com:8000",
                "private/moonbase",
            ),
            (
                &["example.com:8000/privatebasee"],
                "example.com:8000",
                "privatebasee",
            ),
            (
                &[
                    "ubuntu-12.04-base",
                    "docker.io/library/ubuntu-12.04-base",
                    "index.docker.io/library/ubuntu-12.04-base",
                ],
                "docker.io",
                "library/ubuntu-12.04-base",
            ),
            (
                &["foo", "docker.io/library/foo", "docker.io/foo"],
                "docker.io",
                "library/foo",
            ),
            (
                &["library/foo/bar", "docker.io/library/foo/bar"],
                "docker.io",
                "library/foo/bar",
            ),
            (
                &["store/foo/bar", "docker.io/store/foo/bar"],
                "docker.io",
                "store/foo/bar",
            ),
            (&["Foo/bar"], "foo", "bar"),
            (&["FOO/bar"], "foo", "bar"),
        ];
        let split_hostname: &[(&str, &str, &str)] = &[
            ("test.com/foo", "test.com", "foo"),
            ("test_com/foo", "docker.io", "test_com/foo"),
            ("docker/migrator", "docker.io", "docker/migrator"),
            ("test.com:8080/foo", "test.com:8080", "foo"),
            ("test-com:8080/foo", "test-com:8080", "foo"),
            ("foo", "docker.io", "library/foo"),
            ("xn--n3h.com/foo", "xn--n3h.com", "foo"),
            ("xn--n3h.com:18080/foo", "xn--n3h.com:18080", "foo"),
            ("docker.io/foo", "docker.io", "library/foo"),
            ("docker.io/library/foo", "docker.io", "library/foo"),
            ("docker.io/library/foo/bar", "docker.io", "library/foo/bar"),
        ];
        let rows = repository_info
            .iter()
            .flat_map(|(spellings, d, p)| spellings.iter().map(move |s| (*s, *d, *p)))
            .chain(split_hostname.iter().copied());
        for (input, domain, path) in rows {
            let r = parse(input).unwrap_or_else(|| panic!("{input} does not parse"));
            assert_eq!(
                (r.registry.as_str(), r.repository.as_str()),
                (domain, path),
                "{input}"
            );
        }
    }

    /// distribution/reference `normalize_test.go` `TestValidateReferenceName` and
    /// `TestValidateRemoteName`. winlint refuses what they refuse (WIN509 reports it).
    #[test]
    fn distribution_valid_and_invalid_names() {
        for good in [
            "docker/docker",
            "library/debian",
            "debian",
            "docker.io/docker/docker",
            "docker.io/library/debian",
            "docker.io/debian",
            "index.docker.io/docker/docker",
            "index.docker.io/library/debian",
            "index.docker.io/debian",
            "127.0.0.1:5000/docker/docker",
            "127.0.0.1:5000/library/debian",
            "127.0.0.1:5000/debian",
            "192.168.0.1",
            "192.168.0.1:80",
            "192.168.0.1:8/debian",
            "192.168.0.2:25000/debian",
            "thisisthesongthatneverendsitgoesonandonandonthisisthesongthatnev",
            "[fc00::1]:5000/docker",
            "[fc00::1]:5000/docker/docker",
            "[fc00:1:2:3:4:5:6:7]:5000/library/debian",
            "docker.io/1a3f5e7d9c1b3a5f7e9d1c3b5a7f9e1d3c5b7a9f1e3d5d7c9b1a3f5e7d9c1b3a",
            "Docker/docker",
            "DOCKER/docker",
            "docker-rules/docker",
            "docker---rules/docker",
            "doc/docker",
            "d/docker",
            "jess/t",
            "dock__er/docker",
        ] {
            assert!(parse(good).is_some(), "{good} must parse");
        }
        for bad in [
            "https://github.com/docker/docker",
            "docker/Docker",
            "-docker",
            "-docker/docker",
            "docker///docker",
            "docker.io/docker/Docker",
            "docker.io/docker///docker",
            "[fc00::1]",
            "[fc00::1]:5000",
            "[fe80::1%eth0]:5000/debian",
            "docker-/docker",
            "-docker-/docker",
            "____/____",
            "_docker/_docker",
            "dock..er/docker",
            "dock_.er/docker",
            "dock-.er/docker",
            "docker/",
            "-docker.io/docker/docker",
            "fc00::1:5000/debian",
            "[2001:db8:3:4::192.0.2.33]:5000/debian",
        ] {
            assert_eq!(parse(bad), None, "{bad} must not parse");
        }
        // Refused by ParseNormalizedNamed before the grammar: a 64-hex name (an image ID);
        // and by Parse after it: a path over 255 characters.
        for bad in [
            "1a3f5e7d9c1b3a5f7e9d1c3b5a7f9e1d3c5b7a9f1e3d5d7c9b1a3f5e7d9c1b3a",
            &format!("docker.io/{}/app", "a".repeat(300)),
        ] {
            assert_eq!(parse(bad), None, "{bad}");
        }
    }

    /// The spellings of one image that containerd pulls from the same place: one normal form.
    #[test]
    fn equivalent_spellings_share_one_normal_form() {
        let classes: &[(&str, &[&str])] = &[
            (
                "mcr.microsoft.com/windows/servercore:1809",
                &[
                    "mcr.microsoft.com/windows/servercore:1809",
                    "mcr.microsoft.com:443/windows/servercore:1809",
                    "mcr.microsoft.com:0443/windows/servercore:1809",
                    "MCR.Microsoft.COM/windows/servercore:1809",
                    "MCR.MICROSOFT.COM:443/windows/servercore:1809",
                ],
            ),
            (
                "docker.io/library/nginx:1.25",
                &[
                    "nginx:1.25",
                    "library/nginx:1.25",
                    "docker.io/nginx:1.25",
                    "docker.io/library/nginx:1.25",
                    "Docker.IO/library/nginx:1.25",
                    "docker.io:443/library/nginx:1.25",
                    "index.docker.io/nginx:1.25",
                    "index.docker.io/library/nginx:1.25",
                    "INDEX.DOCKER.IO:443/library/nginx:1.25",
                    "registry-1.docker.io/library/nginx:1.25",
                    "registry-1.docker.io:443/library/nginx:1.25",
                    "registry.hub.docker.com/library/nginx:1.25",
                ],
            ),
            (
                "docker.io/microsoft/iis",
                &[
                    "microsoft/iis",
                    "docker.io/microsoft/iis",
                    "registry-1.docker.io:443/microsoft/iis",
                ],
            ),
            (
                "myregistry.local:5000/team/app:1.0",
                &[
                    "myregistry.local:5000/team/app:1.0",
                    "MyRegistry.Local:05000/team/app:1.0",
                ],
            ),
            (
                "docker.io/library/busybox@DIGEST",
                &["busybox@DIGEST", "registry-1.docker.io:443/busybox@DIGEST"],
            ),
        ];
        // A tag beside a digest is not pulled: the same image as the digest alone, for what
        // the registry says of it; the analysis keeps the tag as evidence of low confidence.
        for s in [
            "busybox:1.36@DIGEST",
            "Docker.io:443/library/busybox:latest@DIGEST",
        ] {
            let s = s.replace("DIGEST", DIGEST);
            assert_eq!(
                fact_key(&s),
                format!("docker.io/library/busybox@{DIGEST}"),
                "{s}"
            );
            assert!(analyze(&s).low_confidence, "{s}");
        }
        for (canonical, spellings) in classes {
            let canonical = canonical.replace("DIGEST", DIGEST);
            for s in *spellings {
                let s = s.replace("DIGEST", DIGEST);
                let r = parse(&s).unwrap_or_else(|| panic!("{s} does not parse"));
                assert_eq!(r.canonical(), canonical, "{s}");
                assert_eq!(fact_key(&s), canonical, "{s}");
                // The normal form is a fixed point.
                assert_eq!(parse(&canonical).as_ref(), Some(&r), "{s}");
                assert_eq!(analyze(&s), analyze(&canonical), "{s}");
            }
        }
    }

    /// What is not the same image: another port (443 stays on a loopback registry, spoken to
    /// in plain HTTP), another path (paths are lower case only: an upper-case one is refused),
    /// another tag (tags are case-sensitive), another registry.
    #[test]
    fn what_is_not_equivalent() {
        let key = |s: &str| parse(s).map(|r| r.canonical());
        for (a, b) in [
            (
                "mcr.microsoft.com/windows/servercore:1809",
                "mcr.microsoft.com:8443/windows/servercore:1809",
            ),
            (
                "mcr.microsoft.com/windows/servercore:1809",
                "mcr.microsoft.com:80/windows/servercore:1809",
            ),
            ("localhost/app:1", "localhost:443/app:1"),
            ("127.0.0.1:443/app:1", "127.0.0.1/app:1"),
            (
                "mcr.microsoft.com/windows/servercore:ltsc2019",
                "mcr.microsoft.com/windows/servercore:LTSC2019",
            ),
            ("nginx:1.25", "quay.io/nginx:1.25"),
            ("nginx:1.25", "docker.io/nginx/nginx:1.25"),
            ("nginx:1.25", "docker.com/library/nginx:1.25"),
            ("nginx:1.25", &format!("nginx@{DIGEST}")),
        ] {
            assert_ne!(key(a), key(b), "{a} vs {b}");
        }
        assert_eq!(key("localhost:443/app:1").unwrap(), "localhost:443/app:1");
        assert_eq!(key("[::1]:0443/app").unwrap(), "[::1]:443/app");
        assert_eq!(key("[fc00::1]:443/app").unwrap(), "[fc00::1]/app");
        assert_eq!(parse("mcr.microsoft.com/Windows/servercore:1809"), None);
        assert_eq!(fact_key("not a reference"), "not a reference");
    }

    /// shared/rules.md §5.3, every row: (image, build, revision, windows evidence).
    #[test]
    fn worked_examples() {
        let d = DIGEST;
        let rows: Vec<(String, Option<Build>, Option<u32>, bool)> = vec![
            (
                "mcr.microsoft.com/windows/servercore:ltsc2019".into(),
                b(17763),
                None,
                true,
            ),
            (
                "mcr.microsoft.com/windows/servercore:ltsc2019-amd64".into(),
                b(17763),
                None,
                true,
            ),
            (
                "mcr.microsoft.com/windows/nanoserver:1809".into(),
                b(17763),
                None,
                true,
            ),
            (
                "mcr.microsoft.com/windows/nanoserver:1809-KB4493509".into(),
                b(17763),
                None,
                true,
            ),
            (
                "mcr.microsoft.com/windows/nanoserver:10.0.17763.437".into(),
                b(17763),
                Some(437),
                true,
            ),
            (
                "mcr.microsoft.com/windows/servercore:10.0.17763.4737".into(),
                b(17763),
                Some(4737),
                true,
            ),
            (
                "mcr.microsoft.com/windows/nanoserver:2004-amd64".into(),
                b(19041),
                None,
                true,
            ),
            (
                "mcr.microsoft.com/windows/servercore:2009".into(),
                b(19042),
                None,
                true,
            ),
            (
                "mcr.microsoft.com/windows/servercore:20H2".into(),
                b(19042),
                None,
                true,
            ),
            (
                "mcr.microsoft.com/windows/servercore:20h2".into(),
                b(19042),
                None,
                true,
            ),
            (
                "mcr.microsoft.com/windows/servercore/insider:10.0.20348.1".into(),
                b(20348),
                Some(1),
                true,
            ),
            (
                "mcr.microsoft.com/windows/server:ltsc2022".into(),
                b(20348),
                None,
                true,
            ),
            (
                "mcr.microsoft.com/windows/server:ltsc2025".into(),
                b(26100),
                None,
                true,
            ),
            (
                "mcr.microsoft.com/windows:1809".into(),
                b(17763),
                None,
                true,
            ),
            (
                format!("mcr.microsoft.com/windows/nanoserver:ltsc2019@{d}"),
                b(17763),
                None,
                true,
            ),
            (
                format!("mcr.microsoft.com/windows/nanoserver@{d}"),
                None,
                None,
                true,
            ),
            (
                "mcr.microsoft.com/dotnet/framework/aspnet:4.8-20230808-windowsservercore-ltsc2022"
                    .into(),
                b(20348),
                None,
                true,
            ),
            (
                "mcr.microsoft.com/dotnet/framework/runtime:4.8.1-windowsservercore-ltsc2025"
                    .into(),
                b(26100),
                None,
                true,
            ),
            (
                "mcr.microsoft.com/dotnet/framework/sdk:4.8".into(),
                None,
                None,
                true,
            ),
            (
                "mcr.microsoft.com/dotnet/aspnet:8.0-nanoserver-1809".into(),
                b(17763),
                None,
                true,
            ),
            (
                "mcr.microsoft.com/dotnet/aspnet:8.0-nanoserver-ltsc2022".into(),
                b(20348),
                None,
                true,
            ),
            // rules.md §5.3 has `aspnet:8.0` here; since .NET 8 that tag is Linux-only (see
            // `linux_only_is_conservative`): the multi-OS example is 7.0.
            (
                "mcr.microsoft.com/dotnet/aspnet:7.0".into(),
                None,
                None,
                false,
            ),
            (
                "mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2022".into(),
                b(20348),
                None,
                true,
            ),
            (
                "mcr.microsoft.com/windows/servercore/iis".into(),
                None,
                None,
                true,
            ),
            (
                "microsoft/iis:windowsservercore-1709".into(),
                b(16299),
                None,
                true,
            ),
            (
                "microsoft/aspnet:4.7.1-windowsservercore-1709".into(),
                b(16299),
                None,
                true,
            ),
            (
                "microsoft/windowsservercore:1709".into(),
                b(16299),
                None,
                true,
            ),
            (
                "microsoft/windowsservercore:ltsc2016".into(),
                b(14393),
                None,
                true,
            ),
            ("microsoft/nanoserver:sac2016".into(), b(14393), None, true),
            (
                "microsoft/iis:nanoserver-sac2016".into(),
                b(14393),
                None,
                true,
            ),
            ("microsoft/iis".into(), None, None, true),
            // §5.3 says "Windows, unknown build"; the 2017 redis Windows images are Nano
            // Server 2016 builds (known_images).
            ("redis:3.0-nanoserver".into(), b(14393), None, true),
            (
                "golang:1.22-windowsservercore-ltsc2022".into(),
                b(20348),
                None,
                true,
            ),
            (
                "python:3.12-windowsservercore-1809".into(),
                b(17763),
                None,
                true,
            ),
            (
                "eclipse-temurin:17-jdk-nanoserver-ltsc2025".into(),
                b(26100),
                None,
                true,
            ),
            (
                "mcr.microsoft.com/powershell:lts-nanoserver-1809".into(),
                b(17763),
                None,
                true,
            ),
            ("contoso/app:1.0-ltsc2019".into(), b(17763), None, true),
            (
                "myregistry.local:5000/team/app:1809".into(),
                None,
                None,
                false,
            ),
            ("registry.k8s.io/pause:3.9".into(), None, None, false),
        ];
        for (image, build, revision, windows) in &rows {
            let i = analyze(image);
            assert!(i.reference.is_some(), "{image} does not parse");
            assert_eq!(i.build, *build, "{image}: build");
            assert_eq!(i.revision, *revision, "{image}: revision");
            assert_eq!(i.windows, *windows, "{image}: Windows evidence");
            assert!(!i.linux, "{image}: not Linux");
        }
    }

    #[test]
    fn worked_example_notes() {
        // Tag + digest: build from the tag, low confidence. Digest only: unknown, not latest.
        let td = analyze(&format!(
            "mcr.microsoft.com/windows/nanoserver:ltsc2019@{DIGEST}"
        ));
        assert!(td.low_confidence && !td.latest);
        let dg = analyze(&format!("mcr.microsoft.com/windows/nanoserver@{DIGEST}"));
        assert!(!dg.low_confidence && !dg.latest && dg.build.is_none());
        // 20h2 is detected but spelled wrong; 20H2 and 2009 are canonical.
        assert_eq!(
            analyze("mcr.microsoft.com/windows/servercore:20h2").case_mismatch,
            Some(("20h2".into(), "20H2".into()))
        );
        assert_eq!(
            analyze("mcr.microsoft.com/windows/servercore:20H2").case_mismatch,
            None
        );
        assert_eq!(
            analyze("mcr.microsoft.com/windows/servercore:2009").case_mismatch,
            None
        );
        // The KB suffix is upper case in Microsoft's own tags: not an OS token.
        assert_eq!(
            analyze("mcr.microsoft.com/windows/nanoserver:1809-KB4493509").case_mismatch,
            None
        );
        // Multi-OS(-version) tags.
        for m in [
            "mcr.microsoft.com/dotnet/framework/sdk:4.8",
            "mcr.microsoft.com/dotnet/framework/runtime:4.8.1",
            "mcr.microsoft.com/dotnet/aspnet:7.0",
            "mcr.microsoft.com/windows/servercore/iis",
            "mcr.microsoft.com/windows/servercore/iis:latest",
            "registry.k8s.io/pause:3.9",
            "mcr.microsoft.com/oss/kubernetes/pause:3.9",
        ] {
            assert!(analyze(m).multi, "{m}");
        }
        for m in [
            "mcr.microsoft.com/dotnet/aspnet:8.0-nanoserver-1809",
            "mcr.microsoft.com/dotnet/aspnet:8.0",
            "mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2022",
            "mcr.microsoft.com/windows/servercore:ltsc2022",
            "registry.k8s.io/pause:3.1",
        ] {
            assert!(!analyze(m).multi, "{m}");
        }
        // Implicit latest; legacy Docker Hub names.
        let iis = analyze("microsoft/iis");
        assert!(iis.latest && !iis.ms_base);
        assert_eq!(
            iis.legacy_dockerhub,
            Some(Successor::Repo("mcr.microsoft.com/windows/servercore/iis"))
        );
        assert!(analyze("mcr.microsoft.com/windows/servercore/iis").latest);
    }

    #[test]
    fn bare_tokens_only_in_microsoft_base_repos() {
        for image in [
            "myapp:2004",
            "postgres:1809",
            "contoso/app:20H2",
            "mcr.microsoft.com/dotnet/framework/sdk:1809",
        ] {
            assert_eq!(analyze(image).build, None, "{image}");
        }
        // P5 also covers IIS and the insider repositories.
        assert_eq!(
            analyze("mcr.microsoft.com/windows/servercore/iis:1809").build,
            b(17763)
        );
        assert_eq!(
            analyze("mcr.microsoft.com/windows/nanoserver/insider:1809").build,
            b(17763)
        );
        // P5 must start the tag; the date stamp of dotnet-framework tags never matches.
        assert_eq!(
            analyze("mcr.microsoft.com/windows/servercore:x-1809").build,
            None
        );
        assert_eq!(
            analyze("mcr.microsoft.com/dotnet/framework/runtime:4.8-20230808").build,
            None
        );
    }

    #[test]
    fn pattern_order_and_boundaries() {
        let cases: &[(&str, Option<Build>)] = &[
            // P1 before P2.
            ("contoso/app:10.0.17763.1-ltsc2022", b(17763)),
            // Tokens need separators.
            ("contoso/app:xltsc2019", None),
            ("contoso/app:ltsc2019x", None),
            ("contoso/app:v1_ltsc2022", b(20348)),
            ("contoso/app:110.0.17763", None),
            ("contoso/app:10.0.1776", None),
            ("contoso/app:10.0.17763.1234567", None),
            // P4 word + version, any case.
            ("contoso/app:1.0-windows-1903", b(18362)),
            ("contoso/app:1.0-servercore-1909", b(18363)),
            ("contoso/app:1.0-NanoServer-20H2", b(19042)),
            ("contoso/app:1.0-nanoserver-1607", b(14393)),
            ("contoso/app:1.0-nanoserver-1803", b(17134)),
            ("contoso/app:1.0-LTSC2019", b(17763)),
            ("mcr.microsoft.com/windows/nanoserver:1803-arm64", b(17134)),
        ];
        for (image, build) in cases {
            assert_eq!(analyze(image).build, *build, "{image}");
        }
    }

    #[test]
    fn case_of_os_tokens() {
        let cases: &[(&str, Option<(&str, &str)>)] = &[
            (
                "mcr.microsoft.com/windows/servercore:LTSC2019",
                Some(("LTSC2019", "ltsc2019")),
            ),
            ("mcr.microsoft.com/windows/servercore:ltsc2019", None),
            (
                "python:3.12-WindowsServerCore-ltsc2022",
                Some(("WindowsServerCore", "windowsservercore")),
            ),
            (
                "python:3.12-NanoServer-1809",
                Some(("NanoServer-1809", "nanoserver-1809")),
            ),
            (
                "contoso/app:1.0-nanoserver-20h2",
                Some(("nanoserver-20h2", "nanoserver-20H2")),
            ),
            ("contoso/app:1.0-Release", None),
            ("contoso/app:20h2", None),
            ("redis:3.0-Nanoserver", Some(("Nanoserver", "nanoserver"))),
        ];
        for (image, want) in cases {
            let got = analyze(image).case_mismatch;
            let want = want.map(|(a, b)| (a.to_string(), b.to_string()));
            assert_eq!(got, want, "{image}");
        }
    }

    #[test]
    fn windows_evidence() {
        for (image, windows) in [
            ("mcr.microsoft.com/windows/servercore:ltsc2022", true),
            ("mcr.microsoft.com/windows/servercore/iis", true),
            ("mcr.microsoft.com/dotnet/framework/sdk:4.8", true),
            ("microsoft/windowsservercore", true),
            ("microsoft/nanoserver:1709", true),
            ("contoso/app:servercore", true),
            ("contoso/app:1.0-sac2016", true),
            (
                "mcr.microsoft.com/oss/kubernetes/windows-host-process-containers-base-image:v1.0.0",
                true,
            ),
            ("contoso/app:10.0.17763", false),
            ("mcr.microsoft.com/dotnet/aspnet:8.0", false),
            ("mcr.microsoft.com/powershell:lts", false),
            ("golang:1.22", false),
            ("microsoft/dotnet:2.1-sdk", false),
            ("nginx:1.25", false),
        ] {
            assert_eq!(analyze(image).windows, windows, "{image}");
        }
    }

    #[test]
    fn linux_only_is_conservative() {
        for (image, linux) in [
            ("busybox:1.36", true),
            ("busybox", true),
            ("docker.io/library/alpine:3.19", true),
            ("ubuntu:24.04", true),
            ("debian:bookworm-slim", true),
            ("centos:7", true),
            ("fedora:40", true),
            ("nginx:1.27", true),
            ("nginx:1.27-windowsservercore", false),
            ("nginx:nanoserver", false),
            ("redis:7.2", true),
            ("redis", true),
            ("redis:7.2.4-bookworm", true),
            ("redis:3.2", false),
            ("redis:3.0-nanoserver", false),
            ("bitnami/redis:7.2", false),
            ("python:3.12-alpine", true),
            ("python:3.12-alpine3.19", true),
            ("nginx:alpine-slim", true),
            // The alpine heuristic holds for Docker Hub official images only: the e2e test
            // images publish Windows builds under `*-alpine` tags.
            ("contoso/app:1.0-alpine", false),
            ("e2eteam/nginx:1.14-alpine", false),
            (
                "k8sprow.azurecr.io/kubernetes-e2e-test-images/nginx:1.14-alpine",
                false,
            ),
            (
                "gcr.io/kubernetes-e2e-test-images/httpd:2.4.38-alpine",
                false,
            ),
            ("registry.k8s.io/e2e-test-images/nginx:1.14-4", false),
            ("docker.io/library/httpd:2.4-alpine", true),
            // Known tags without a Windows image.
            ("mcr.microsoft.com/dotnet/aspnet:8.0", true),
            ("mcr.microsoft.com/dotnet/sdk", true),
            (
                "mcr.microsoft.com/dotnet/aspnet:8.0-nanoserver-ltsc2022",
                false,
            ),
            ("mcr.microsoft.com/dotnet/aspnet:7.0", false),
            ("registry.k8s.io/pause:3.1", true),
            ("registry.k8s.io/pause:3.6", false),
            ("registry.k8s.io/kube-apiserver:v1.30.0", true),
            ("registry.k8s.io/coredns/coredns:v1.11.1", true),
            ("registry.k8s.io/ingress-nginx/controller:v1.10.0", true),
            ("k8s.gcr.io/etcd:3.5.0", true),
            ("gcr.io/distroless/static:nonroot", true),
            // Multi-OS or unknown: never "Linux".
            ("registry.k8s.io/pause:3.9", false),
            ("registry.k8s.io/kube-proxy:v1.30.0", false),
            ("registry.k8s.io/e2e-test-images/agnhost:2.47", false),
            (
                "registry.k8s.io/sig-storage/csi-node-driver-registrar:v2.10.0",
                false,
            ),
            ("registry.k8s.io/etcdx:1", false),
            ("golang:1.22", false),
            ("python:3.12", false),
            ("contoso/app:1.0", false),
            ("contoso/busybox:1.36", false),
            ("quay.io/busybox:1", false),
            ("mcr.microsoft.com/dotnet/aspnet:7.0", false),
            ("fluent/fluent-bit:2.2", false),
        ] {
            assert_eq!(analyze(image).linux, linux, "{image}");
        }
    }

    #[test]
    fn base_repos_and_latest() {
        for (image, base) in [
            ("mcr.microsoft.com/windows/servercore", true),
            ("mcr.microsoft.com/windows/nanoserver:latest", true),
            ("mcr.microsoft.com/windows/server", true),
            ("mcr.microsoft.com/windows", true),
            ("microsoft/windowsservercore", true),
            ("docker.io/microsoft/nanoserver", true),
            ("mcr.microsoft.com/windows/servercore/iis", false),
            ("mcr.microsoft.com/windows/servercore/insider", false),
            ("microsoft/iis", false),
            ("contoso/windows", false),
        ] {
            assert_eq!(analyze(image).ms_base, base, "{image}");
        }
        for (image, latest) in [
            ("mcr.microsoft.com/windows/servercore", true),
            ("mcr.microsoft.com/windows/servercore:latest", true),
            ("busybox", true),
            ("busybox:Latest", false),
            ("busybox:1.36", false),
            (&*format!("busybox:latest@{DIGEST}"), false),
            (&*format!("busybox@{DIGEST}"), false),
        ] {
            assert_eq!(analyze(image).latest, latest, "{image}");
        }
    }

    #[test]
    fn legacy_docker_hub_names() {
        let repo = Successor::Repo;
        for (image, successor) in [
            (
                "microsoft/windowsservercore:1709",
                Some(repo("mcr.microsoft.com/windows/servercore")),
            ),
            (
                "microsoft/nanoserver",
                Some(repo("mcr.microsoft.com/windows/nanoserver")),
            ),
            (
                "microsoft/iis",
                Some(repo("mcr.microsoft.com/windows/servercore/iis")),
            ),
            (
                "microsoft/aspnet:4.7.1",
                Some(repo("mcr.microsoft.com/dotnet/framework/aspnet")),
            ),
            (
                "microsoft/dotnet-framework:4.7.2-sdk",
                Some(repo("mcr.microsoft.com/dotnet/framework/sdk")),
            ),
            (
                "microsoft/dotnet-framework:4.7.2",
                Some(repo("mcr.microsoft.com/dotnet/framework/runtime")),
            ),
            (
                "microsoft/dotnet:2.1-aspnetcore-runtime",
                Some(repo("mcr.microsoft.com/dotnet/aspnet")),
            ),
            (
                "microsoft/mssql-server-windows-express",
                Some(Successor::Discontinued),
            ),
            ("microsoft/something", Some(Successor::Unknown)),
            ("mcr.microsoft.com/windows/servercore", None),
            ("contoso/microsoft", None),
            ("quay.io/microsoft/iis", None),
        ] {
            assert_eq!(analyze(image).legacy_dockerhub, successor, "{image}");
        }
    }

    #[test]
    fn retag_replaces_the_build_token() {
        let cases = [
            (
                "mcr.microsoft.com/windows/servercore:ltsc2019",
                "mcr.microsoft.com/windows/servercore:ltsc2022",
            ),
            (
                "mcr.microsoft.com/windows/nanoserver:1809-KB4493509",
                "mcr.microsoft.com/windows/nanoserver:ltsc2022",
            ),
            (
                "python:3.12-windowsservercore-1809",
                "python:3.12-windowsservercore-ltsc2022",
            ),
            (
                "mcr.microsoft.com/dotnet/framework/aspnet:4.8-20230808-windowsservercore-ltsc2019",
                "mcr.microsoft.com/dotnet/framework/aspnet:4.8-20230808-windowsservercore-ltsc2022",
            ),
            (
                "contoso/app:1.0-10.0.17763.4737-x",
                "contoso/app:1.0-ltsc2022-x",
            ),
        ];
        for (image, want) in cases {
            assert_eq!(
                analyze(image).retag("ltsc2022").as_deref(),
                Some(want),
                "{image}"
            );
        }
        assert_eq!(analyze("golang:1.22").retag("ltsc2022"), None);
    }
}
