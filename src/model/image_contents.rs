//! What is inside an image (issue 26): the user it runs as without `runAsUserName`, its shells
//! and the programs of Linux names it brings. Two sources, in this order: the images a user
//! declares in `winlint.yaml` (`images:`, [`Target::images`](super::Target)), then winlint's
//! own table, `image_contents.yaml` (every entry with its source), parsed once.
//!
//! A pattern is a glob (`*`: any characters) on the reference's normal form
//! ([`image::parse`](super::image::parse)): `registry/repository` and, after the last `:`
//! that follows the last `/`, the tag; a pattern without a tag matches every tag, and a
//! Docker Hub pattern may be written short (`golang:*nanoserver*` is
//! `docker.io/library/golang:*nanoserver*`).

use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

use super::image::{ImageRef, normal_registry};
use super::image_facts::{ImageFacts, Platform};
use super::windows::{parse_build, parse_revision};

/// One image (or family of images) and what is known to be inside.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ImageEntry {
    /// The glob on the reference's normal form.
    #[serde(rename = "match")]
    pub pattern: String,
    /// `windows` or `linux`. Without the registry's facts, the image rules read it (with
    /// `builds`) as the registry's platforms ([`ImageEntry::declared_facts`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub os: Option<String>,
    /// The Windows builds the image is published for (`ltsc2022`, `10.0.20348`,
    /// `10.0.20348.2966` with its revision); the image rules read them as the registry's
    /// Windows entries when the registry was not asked.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub builds: Vec<String>,
    /// The image config's `User`; `""`: the config sets none (the container runs as
    /// ContainerAdministrator); absent: unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    /// The shells in the image (`cmd`, `powershell`, `pwsh`, `sh`, `bash`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shells: Option<Vec<String>>,
    /// Programs of Linux names the image brings; `linux`: the Linux utilities (busybox's
    /// applets, Git for Windows' MSYS tools).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<String>>,
    /// Where the facts come from (required in winlint's table).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

impl ImageEntry {
    /// The platforms the entry declares, as a registry would publish them (issue 26): one
    /// Windows entry per build (`os.version` `10.0.N`, or the full version when written with
    /// its revision, which WIN510 compares), or one Linux platform for `os: linux`. A single
    /// image for one build, a list for several. `None` when it declares neither builds nor
    /// `os: linux` (an `os: windows` without builds says nothing the image rules can check).
    pub fn declared_facts(&self) -> Option<ImageFacts> {
        let platform = |os: &str, os_version: Option<String>| Platform {
            os: os.into(),
            architecture: "amd64".into(),
            variant: None,
            os_version,
            os_features: Vec::new(),
            digest: None,
            user: None,
        };
        let platforms: Vec<Platform> = if self.os.as_deref() == Some("linux") {
            vec![platform("linux", None)]
        } else {
            self.builds
                .iter()
                .filter_map(|b| {
                    let build = parse_build(b)?;
                    let version = if parse_revision(b).is_some() {
                        b.trim().to_string()
                    } else {
                        format!("10.0.{}", build.0)
                    };
                    Some(platform("windows", Some(version)))
                })
                .collect()
        };
        (!platforms.is_empty()).then(|| ImageFacts {
            digest: String::new(),
            list: platforms.len() > 1,
            platforms,
            user: None,
        })
    }
}

/// Where an entry comes from, for messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// The user's `winlint.yaml` `images:`.
    Config,
    /// winlint's table of known images.
    Known,
}

/// What winlint knows about one image's contents.
#[derive(Debug, Clone, Copy)]
pub struct Contents<'a> {
    pub entry: &'a ImageEntry,
    pub origin: Origin,
}

impl Contents<'_> {
    /// Whether the program lists are known: then a program neither lists is absent.
    pub fn known_programs(&self) -> bool {
        self.entry.shells.is_some() || self.entry.tools.is_some()
    }

    /// Whether the image brings program `name` (lower case, without `.exe`): named among its
    /// shells or tools, or a Linux utility (`linux_tool`) in an image that brings them.
    pub fn has(&self, name: &str, linux_tool: bool) -> bool {
        let listed = |l: &Option<Vec<String>>| {
            l.iter()
                .flatten()
                .any(|t| t.eq_ignore_ascii_case(name) || (linux_tool && t == "linux"))
        };
        listed(&self.entry.shells) || listed(&self.entry.tools)
    }

    /// How winlint knows, for a message: "winlint.yaml images: PATTERN" or the table's source.
    pub fn why(&self) -> String {
        match self.origin {
            Origin::Config => format!("winlint.yaml images: {:?}", self.entry.pattern),
            Origin::Known => format!("winlint's table of known images ({})", self.entry.pattern),
        }
    }
}

/// winlint's table, parsed once.
pub fn known() -> &'static [ImageEntry] {
    static TABLE: OnceLock<Vec<ImageEntry>> = OnceLock::new();
    TABLE.get_or_init(|| {
        parse_entries(include_str!("image_contents.yaml"))
            .expect("src/model/image_contents.yaml is a valid table")
    })
}

/// A list of entries from YAML text.
pub fn parse_entries(text: &str) -> Result<Vec<ImageEntry>, String> {
    let doc = crate::source::load_first_value(text)?;
    if doc.is_null() {
        return Ok(Vec::new());
    }
    serde_json::from_value(doc).map_err(|e| e.to_string())
}

/// What is known about image `r`: the first declared entry that matches, else the first
/// entry of winlint's table.
pub fn lookup<'a>(declared: &'a [ImageEntry], r: &ImageRef) -> Option<Contents<'a>> {
    let hit = |entries: &'a [ImageEntry]| entries.iter().find(|e| matches(&e.pattern, r));
    hit(declared)
        .map(|entry| Contents {
            entry,
            origin: Origin::Config,
        })
        .or_else(|| {
            hit(known()).map(|entry| Contents {
                entry,
                origin: Origin::Known,
            })
        })
}

/// Whether `pattern` matches reference `r` (see the module's documentation).
pub fn matches(pattern: &str, r: &ImageRef) -> bool {
    let (name, tag) = split_pattern(pattern);
    let (registry, repository) = normal_name(name);
    glob(&registry, &r.registry)
        && glob(&repository, &r.repository)
        && tag.is_none_or(|t| glob(t, r.tag.as_deref().unwrap_or("latest")))
}

/// `name` and the tag glob, split at the last `:` after the last `/`.
fn split_pattern(pattern: &str) -> (&str, Option<&str>) {
    let slash = pattern.rfind('/').map_or(0, |i| i + 1);
    match pattern[slash..].rfind(':') {
        Some(i) => (&pattern[..slash + i], Some(&pattern[slash + i + 1..])),
        None => (pattern, None),
    }
}

/// A pattern's registry and repository in the normal form of references: Docker Hub's short
/// names expanded, the registry's spellings as [`normal_registry`] writes them.
fn normal_name(name: &str) -> (String, String) {
    let (first, rest) = name.split_once('/').unwrap_or(("", name));
    let registry_like = first.contains(['.', ':']) || first == "localhost";
    let (registry, repository) = if registry_like {
        (normal_registry(first), rest.to_string())
    } else {
        ("docker.io".to_string(), name.to_string())
    };
    let repository = repository.to_ascii_lowercase();
    let repository = if registry == "docker.io" && !repository.contains('/') {
        format!("library/{repository}")
    } else {
        repository
    };
    (registry, repository)
}

/// A glob of `*` (any characters, `/` included); every other character literal, compared
/// without ASCII case.
fn glob(pattern: &str, text: &str) -> bool {
    let (p, t) = (pattern.as_bytes(), text.as_bytes());
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && p[pi] == b'*' {
            star = Some((pi, ti));
            pi += 1;
        } else if pi < p.len() && p[pi].eq_ignore_ascii_case(&t[ti]) {
            pi += 1;
            ti += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == b'*')
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::image::parse;

    fn found(image: &str) -> Option<&'static ImageEntry> {
        lookup(&[], &parse(image).expect("reference")).map(|c| c.entry)
    }

    #[test]
    fn every_known_entry_names_its_source() {
        assert!(known().len() > 10);
        for e in known() {
            assert!(
                e.source.as_deref().is_some_and(|s| !s.trim().is_empty()),
                "{}",
                e.pattern
            );
            assert!(e.shells.is_some() || e.tools.is_some() || e.user.is_some());
        }
    }

    #[test]
    fn patterns_match_the_normal_form() {
        let r = |s: &str| parse(s).expect("reference");
        assert!(matches(
            "golang:*nanoserver*",
            &r("golang:1.22-nanoserver-ltsc2022")
        ));
        assert!(matches(
            "docker.io/library/golang",
            &r("registry-1.docker.io:443/library/golang:1.22")
        ));
        assert!(matches(
            "mcr.microsoft.com/windows",
            &r("MCR.microsoft.com/windows:ltsc2019")
        ));
        assert!(!matches(
            "mcr.microsoft.com/windows",
            &r("mcr.microsoft.com/windows/servercore:ltsc2019")
        ));
        assert!(matches(
            "contoso.azurecr.io/shop/*:*-ltsc2022",
            &r("contoso.azurecr.io/shop/web/api:1.2-ltsc2022")
        ));
        assert!(!matches(
            "contoso.azurecr.io/shop/*:*-ltsc2022",
            &r("contoso.azurecr.io/shop/web:1.2-ltsc2019")
        ));
        assert!(matches("localhost:5000/app:*", &r("localhost:5000/app")));
        assert!(glob("a*b*c", "axxbyyc") && !glob("a*b*c", "axxbyy"));
    }

    #[test]
    fn the_table_knows_base_images_and_busybox_images() {
        let sc = found("mcr.microsoft.com/windows/servercore:ltsc2022").expect("servercore");
        assert_eq!(sc.user.as_deref(), Some(""));
        let iis = found("mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2022");
        assert!(iis.is_some_and(|e| e.user.as_deref() == Some("")));
        let nano = found("mcr.microsoft.com/windows/nanoserver:ltsc2022").expect("nano");
        assert_eq!(nano.user.as_deref(), Some("ContainerUser"));
        let bb = lookup(
            &[],
            &parse("registry.k8s.io/e2e-test-images/busybox:1.36.1-1").expect("reference"),
        )
        .expect("busybox");
        assert!(bb.has("sleep", true) && bb.has("sh", true));
        let c = lookup(
            &[],
            &parse("mcr.microsoft.com/windows/servercore:ltsc2022").expect("reference"),
        )
        .expect("servercore");
        assert!(c.known_programs() && !c.has("sleep", true) && c.has("powershell", false));
        assert!(found("contoso/nanoserver:ltsc2022").is_none());
        assert!(found("mcr.microsoft.com/dotnet/aspnet:8.0").is_none());
    }

    #[test]
    fn declared_images_come_first() {
        let declared = parse_entries(
            "- match: mcr.microsoft.com/windows/servercore:*\n  user: ContainerUser\n",
        )
        .expect("entries");
        let r = parse("mcr.microsoft.com/windows/servercore:ltsc2022").expect("reference");
        let c = lookup(&declared, &r).expect("declared");
        assert_eq!(c.origin, Origin::Config);
        assert_eq!(c.entry.user.as_deref(), Some("ContainerUser"));
        assert!(parse_entries("- match: x\n  shell: [sh]\n").is_err());
    }
}
