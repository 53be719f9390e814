//! Image references → repository, tag, digest and Windows build evidence (shared/rules.md §5).
//!
//! INTERFACE (owned by the image helper; signatures are relied on by classify and rules).

use crate::windows::Build;

/// A parsed image reference, normalised per the distribution grammar.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageRef {
    /// `docker.io`, `mcr.microsoft.com`, `myregistry.local:5000`.
    pub registry: String,
    /// Path without registry; Docker Hub official images get `library/`.
    pub repository: String,
    pub tag: Option<String>,
    pub digest: Option<String>,
}

/// What an image reference says about the OS and Windows build of the image.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ImageInfo {
    /// `None` when the reference does not parse.
    pub reference: Option<ImageRef>,
    /// Derived Windows build (P1–P5), if any.
    pub build: Option<Build>,
    /// Revision, when the tag names one (P1: `10.0.17763.4737`).
    pub revision: Option<u32>,
    /// The image is Windows-only (Windows repo or a Windows token in the tag).
    pub windows: bool,
    /// The image is known Linux-only (busybox, alpine, nginx, `*-alpine`, …).
    pub linux: bool,
    /// Tag and digest both given: the build comes from the tag and may be stale.
    pub low_confidence: bool,
    /// The token found in the tag has non-canonical case: (found, canonical), e.g. ("20h2", "20H2").
    pub case_mismatch: Option<(String, String)>,
    /// A Microsoft base-OS repository (`mcr.microsoft.com/windows/servercore`, …).
    pub ms_base: bool,
    /// A retired Docker Hub `microsoft/*` repository, with the MCR name to use instead.
    pub legacy_dockerhub: Option<String>,
    /// No tag and no digest, or tag `latest`.
    pub latest: bool,
}

/// Parse an image reference.
pub fn parse(reference: &str) -> Option<ImageRef> {
    let _ = reference;
    None
}

/// Analyse an image reference.
pub fn analyze(reference: &str) -> ImageInfo {
    ImageInfo {
        reference: parse(reference),
        ..ImageInfo::default()
    }
}
