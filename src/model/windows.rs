//! Windows Server builds, the tokens that name them, and image/host compatibility
//! (shared/rules.md §1.2–1.3).

use std::fmt;

/// A Windows build number as the kubelet reports it in `node.kubernetes.io/windows-build`
/// (`10.0.<build>`, never a revision).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Build(pub u32);

pub const WS2016: Build = Build(14393);
pub const V1709: Build = Build(16299);
pub const V1803: Build = Build(17134);
pub const WS2019: Build = Build(17763);
pub const V20H2: Build = Build(19042);
pub const WS2022: Build = Build(20348);
pub const V23H2: Build = Build(25398);
pub const WS2025: Build = Build(26100);

/// Known builds: (build, canonical tag token, channel, mainstream end, end of support), dates
/// `YYYY-MM-DD` (shared/rules.md §1.2, MS-LIFE). The end of support is the extended-support end
/// of an LTSC release and the end of servicing (= mainstream end) of a Semi-Annual one; empty
/// when unknown.
pub const KNOWN: &[(Build, &str, Channel, &str, &str)] = &[
    (
        Build(14393),
        "ltsc2016",
        Channel::Ltsc,
        "2022-01-11",
        "2027-01-11",
    ),
    (
        Build(16299),
        "1709",
        Channel::Sac,
        "2019-04-09",
        "2019-04-09",
    ),
    (
        Build(17134),
        "1803",
        Channel::Sac,
        "2019-11-12",
        "2019-11-12",
    ),
    (
        Build(17763),
        "ltsc2019",
        Channel::Ltsc,
        "2024-01-09",
        "2029-01-09",
    ),
    (
        Build(18362),
        "1903",
        Channel::Sac,
        "2020-12-08",
        "2020-12-08",
    ),
    (
        Build(18363),
        "1909",
        Channel::Sac,
        "2021-05-11",
        "2021-05-11",
    ),
    (
        Build(19041),
        "2004",
        Channel::Sac,
        "2021-12-14",
        "2021-12-14",
    ),
    (
        Build(19042),
        "20H2",
        Channel::Sac,
        "2022-08-09",
        "2022-08-09",
    ),
    (
        Build(20348),
        "ltsc2022",
        Channel::Ltsc,
        "2026-10-13",
        "2031-10-14",
    ),
    (Build(25398), "23H2", Channel::Annual, "", ""),
    (
        Build(26100),
        "ltsc2025",
        Channel::Ltsc,
        "2029-10-09",
        "2034-10-10",
    ),
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Channel {
    Ltsc,
    Sac,
    Annual,
}

impl fmt::Display for Build {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "10.0.{}", self.0)
    }
}

impl Build {
    /// The product name a user recognises: `ltsc2022`, `1709`, `20H2`, or the number.
    pub fn token(self) -> String {
        KNOWN
            .iter()
            .find(|(b, ..)| *b == self)
            .map(|(_, t, ..)| t.to_string())
            .unwrap_or_else(|| self.to_string())
    }

    /// Mainstream end of support, if known (`YYYY-MM-DD`).
    pub fn mainstream_end(self) -> Option<&'static str> {
        KNOWN
            .iter()
            .find(|(b, ..)| *b == self)
            .map(|(.., d, _)| *d)
            .filter(|d| !d.is_empty())
    }

    /// End of support (`YYYY-MM-DD`): extended support for LTSC, end of servicing for
    /// Semi-Annual releases; `None` when unknown.
    pub fn support_end(self) -> Option<&'static str> {
        KNOWN
            .iter()
            .find(|(b, ..)| *b == self)
            .map(|(.., d)| *d)
            .filter(|d| !d.is_empty())
    }

    /// Past its end of support on `today` (`YYYY-MM-DD`): no security fixes any more, so
    /// nobody should add nodes of this build or build images on it.
    pub fn out_of_support(self, today: &str) -> bool {
        self.support_end().is_some_and(|end| end < today)
    }

    pub fn channel(self) -> Option<Channel> {
        KNOWN
            .iter()
            .find(|(b, ..)| *b == self)
            .map(|(_, _, c, ..)| *c)
    }

    /// The product name: `Windows Server 2019`, `Windows Server, version 1709`, or
    /// `Windows build 10.0.12345` for builds this table does not know.
    pub fn product(self) -> String {
        match KNOWN.iter().find(|(b, ..)| *b == self) {
            Some((_, t, Channel::Ltsc, ..)) => {
                format!("Windows Server {}", t.trim_start_matches("ltsc"))
            }
            Some((_, t, ..)) => format!("Windows Server, version {t}"),
            None => format!("Windows build {self}"),
        }
    }

    /// The product name with the build, for messages: `Windows Server 2019 (10.0.17763)`, or
    /// `Windows build 10.0.12345` for builds this table does not know.
    pub fn named(self) -> String {
        if KNOWN.iter().any(|(b, ..)| *b == self) {
            format!("{} ({self})", self.product())
        } else {
            self.product()
        }
    }

    /// The tag token of the base images a host of this build runs under process isolation:
    /// its own token, except 23H2 hosts, which have no base images and run `ltsc2022`
    /// (shared/rules.md §1.3, MS-PORT).
    pub fn image_token(self) -> String {
        self.image_build().token()
    }

    /// The build of the base images a host of this build runs under process isolation: its
    /// own, except 23H2 hosts, which run `ltsc2022` images.
    pub fn image_build(self) -> Build {
        if self == V23H2 { WS2022 } else { self }
    }
}

/// Parse a host build as a user writes it: `ltsc2022`, `2022`, `1709`, `20H2`, `2009`,
/// `10.0.20348`, `10.0.20348.1906` (revision dropped), `20348`.
pub fn parse_build(s: &str) -> Option<Build> {
    let t = s.trim().to_ascii_lowercase();
    let t = t.strip_prefix("windows-server-").unwrap_or(&t);
    let by_token = match t {
        "ltsc2016" | "2016" | "sac2016" | "1607" | "ws2016" => Some(WS2016),
        "1709" => Some(V1709),
        "1803" => Some(V1803),
        "ltsc2019" | "2019" | "1809" | "ws2019" => Some(WS2019),
        "1903" => Some(Build(18362)),
        "1909" => Some(Build(18363)),
        "2004" => Some(Build(19041)),
        "20h2" | "2009" => Some(V20H2),
        "ltsc2022" | "2022" | "ws2022" => Some(WS2022),
        "23h2" => Some(V23H2),
        "ltsc2025" | "2025" | "ws2025" => Some(WS2025),
        _ => None,
    };
    if by_token.is_some() {
        return by_token;
    }
    let digits = t.strip_prefix("10.0.").unwrap_or(t);
    let build = digits.split('.').next()?;
    if build.len() == 5 && build.bytes().all(|b| b.is_ascii_digit()) {
        return build.parse().ok().map(Build);
    }
    None
}

/// The revision (update build revision, UBR) of a full Windows version: `10.0.20348.2849` →
/// 2849, as a Windows node's `status.nodeInfo.kernelVersion`, an image's `os.version`, or
/// `--windows-build 10.0.20348.2849` write it; `None` without a fourth part.
pub fn parse_revision(s: &str) -> Option<u32> {
    let mut parts = s.trim().split('.');
    let (Some(major), Some(_minor), Some(build), Some(rev), None) = (
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
    ) else {
        return None;
    };
    let digits = |p: &str| !p.is_empty() && p.len() <= 9 && p.bytes().all(|b| b.is_ascii_digit());
    (major == "10" && digits(build) && digits(rev))
        .then(|| rev.parse().ok())
        .flatten()
}

/// The revisions configured builds carry (`10.0.20348.2849` → 20348 at 2849): the target's
/// `windows_revisions`.
pub fn revisions<'a>(
    specs: impl Iterator<Item = &'a str>,
) -> std::collections::BTreeMap<Build, u32> {
    specs
        .filter_map(|s| Some((parse_build(s)?, parse_revision(s)?)))
        .collect()
}

/// Container isolation mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Isolation {
    Process,
    Hyperv,
}

/// Can a container built on `image` run on a host of build `host` under `isolation`?
/// (shared/rules.md §1.3)
pub fn compatible(image: Build, host: Build, isolation: Isolation) -> bool {
    match isolation {
        Isolation::Hyperv => image <= host,
        Isolation::Process => {
            image == host || (image == WS2022 && (host == WS2025 || host == V23H2))
        }
    }
}

/// The isolation a containerd runtime handler selects: `runhcs-wcow-hypervisor` (optionally with
/// a build suffix, `runhcs-wcow-hypervisor-17763`) is Hyper-V, `runhcs-wcow-process` is process;
/// `None` for handlers that do not say (shared/rules.md §0 WT, E2E-HV).
pub fn handler_isolation(handler: &str) -> Option<Isolation> {
    if handler.starts_with("runhcs-wcow-hypervisor") {
        Some(Isolation::Hyperv)
    } else if handler.starts_with("runhcs-wcow-process") {
        Some(Isolation::Process)
    } else {
        None
    }
}

/// The host builds (among `hosts`) that can run `image`.
pub fn compatible_hosts(image: Build, hosts: &[Build], isolation: Isolation) -> Vec<Build> {
    hosts
        .iter()
        .copied()
        .filter(|h| compatible(image, *h, isolation))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn revisions_of_full_versions() {
        assert_eq!(parse_revision("10.0.20348.2849"), Some(2849));
        assert_eq!(parse_revision(" 10.0.17763.0 "), Some(0));
        for none in [
            "10.0.20348",
            "6.1.0-17-amd64",
            "10.0.20348.x",
            "10.0.20348.1.2",
            "",
        ] {
            assert_eq!(parse_revision(none), None, "{none}");
        }
        let r = revisions(["10.0.20348.2849", "ltsc2019", "10.0.26100.1"].into_iter());
        assert_eq!(r.get(&WS2022), Some(&2849));
        assert_eq!(r.get(&WS2019), None);
        assert_eq!(r.get(&WS2025), Some(&1));
    }

    #[test]
    fn parses_tokens_and_numbers() {
        assert_eq!(parse_build("ltsc2022"), Some(WS2022));
        assert_eq!(parse_build("1709"), Some(V1709));
        assert_eq!(parse_build("20H2"), Some(V20H2));
        assert_eq!(parse_build("2009"), Some(V20H2));
        assert_eq!(parse_build("10.0.20348"), Some(WS2022));
        assert_eq!(parse_build("10.0.17763.4737"), Some(WS2019));
        assert_eq!(parse_build("windows-2019"), None);
        assert_eq!(parse_build("1.30"), None);
    }

    #[test]
    fn process_isolation_needs_same_build_except_portability() {
        assert!(compatible(WS2022, WS2022, Isolation::Process));
        assert!(!compatible(WS2019, WS2022, Isolation::Process));
        assert!(compatible(WS2022, WS2025, Isolation::Process));
        assert!(compatible(WS2022, V23H2, Isolation::Process));
        assert!(!compatible(WS2019, WS2025, Isolation::Process));
        assert!(!compatible(WS2025, WS2022, Isolation::Process));
    }

    #[test]
    fn hyperv_runs_older_images_only() {
        assert!(compatible(WS2019, WS2022, Isolation::Hyperv));
        assert!(!compatible(WS2025, WS2022, Isolation::Hyperv));
    }

    #[test]
    fn product_names() {
        assert_eq!(WS2019.product(), "Windows Server 2019");
        assert_eq!(V1709.product(), "Windows Server, version 1709");
        assert_eq!(V20H2.product(), "Windows Server, version 20H2");
        assert_eq!(V23H2.product(), "Windows Server, version 23H2");
        assert_eq!(Build(12345).product(), "Windows build 10.0.12345");
        assert_eq!(WS2019.named(), "Windows Server 2019 (10.0.17763)");
        assert_eq!(Build(12345).named(), "Windows build 10.0.12345");
        assert_eq!(V23H2.image_token(), "ltsc2022");
        assert_eq!(WS2025.image_token(), "ltsc2025");
    }

    #[test]
    fn handlers() {
        assert_eq!(
            handler_isolation("runhcs-wcow-hypervisor"),
            Some(Isolation::Hyperv)
        );
        assert_eq!(
            handler_isolation("runhcs-wcow-hypervisor-17763"),
            Some(Isolation::Hyperv)
        );
        assert_eq!(
            handler_isolation("runhcs-wcow-process"),
            Some(Isolation::Process)
        );
        assert_eq!(handler_isolation("example-container-runtime-handler"), None);
    }

    #[test]
    fn display_and_token() {
        assert_eq!(WS2022.to_string(), "10.0.20348");
        assert_eq!(V20H2.token(), "20H2");
        assert_eq!(Build(12345).token(), "10.0.12345");
    }

    #[test]
    fn support_ends() {
        // Semi-Annual releases end with their servicing; LTSC ones with extended support.
        assert!(V1709.out_of_support("2019-04-10"));
        assert!(!V1709.out_of_support("2019-04-09"));
        assert!(V20H2.out_of_support("2026-01-01"));
        assert!(!WS2019.out_of_support("2026-01-01"));
        assert!(WS2019.out_of_support("2029-01-10"));
        assert!(!WS2016.out_of_support("2026-12-31"));
        assert!(WS2016.out_of_support("2027-01-12"));
        assert!(!V23H2.out_of_support("2099-01-01"));
        assert!(!Build(12345).out_of_support("2099-01-01"));
        assert_eq!(WS2019.mainstream_end(), Some("2024-01-09"));
        assert_eq!(WS2019.support_end(), Some("2029-01-09"));
    }
}
