//! Facts by digest on disk, between CLI runs (`--registry-cache DIR`, default
//! `$XDG_CACHE_HOME/winlint/registry`): one small JSON file per digest. A digest names its
//! content, so an entry never goes stale; a file that does not read back is ignored.

use std::path::{Path, PathBuf};

use crate::model::image_facts::ImageFacts;

/// The default directory: `$XDG_CACHE_HOME/winlint/registry`, else `~/.cache/winlint/registry`.
pub fn default_dir() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cache")))?;
    Some(base.join("winlint").join("registry"))
}

/// `sha256:HEX` → `DIR/sha256-HEX.json`; `None` for anything that is not a plain digest (no
/// path can be built from a registry's answer).
fn file(dir: &Path, digest: &str) -> Option<PathBuf> {
    let hex = digest.strip_prefix("sha256:")?;
    (hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit()))
        .then(|| dir.join(format!("sha256-{hex}.json")))
}

pub fn read(dir: &Path, digest: &str) -> Option<ImageFacts> {
    let text = std::fs::read(file(dir, digest)?).ok()?;
    let facts: ImageFacts = serde_json::from_slice(&text).ok()?;
    (facts.digest == digest).then_some(facts)
}

/// Write atomically (a temporary file renamed into place), so a reader never sees half a file.
pub fn write(dir: &Path, facts: &ImageFacts) -> std::io::Result<()> {
    let Some(path) = file(dir, &facts.digest) else {
        return Ok(());
    };
    std::fs::create_dir_all(dir)?;
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    serde_json::to_writer(&mut tmp, facts)?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_refuses_paths() {
        let dir = tempfile::tempdir().unwrap();
        let d = format!("sha256:{}", "a".repeat(64));
        let f = ImageFacts {
            digest: d.clone(),
            list: true,
            platforms: vec![],
            user: None,
        };
        write(dir.path(), &f).unwrap();
        assert_eq!(read(dir.path(), &d), Some(f));
        assert_eq!(read(dir.path(), "sha256:../../etc/passwd"), None);
        assert!(file(dir.path(), "sha512:00").is_none());
    }
}
