//! Writing `--fix` back to a file without harm.
//!
//! Before anything is written, the file is checked:
//! * it is a regular file inside the tree it was named in (the directory given on the command
//!   line, or a named file's own directory), unless `--fix-follow-symlinks` allows a symlink to
//!   lead out of it: a link to `/etc/…` in a repository is not the repository's to rewrite;
//! * it has one link, unless `--fix-follow-symlinks` allows more: a hard link's other names may
//!   lie anywhere on the file system (`ln /etc/x repo/x.yaml`), and a fix written through one
//!   name would change them all, while replacing the file would silently split them;
//! * it is writable by its mode: a file without any write bit is refused, also for root (who
//!   could write it anyway; the mode says the owner does not want it changed);
//! * it holds exactly the bytes that were linted: anything written to it meanwhile (an append
//!   by an editor or a generator) would be lost, so the fix is refused and the file left alone.
//!
//! **How it is written.** A file with one link, whose owner and group the new file can keep
//! (ours, or we are root), is replaced atomically: a temporary file in the same directory gets the
//! bytes, the mode, the owner and group, is synced, the content check is made once more, and it is
//! renamed over the file (a crash or Ctrl-C leaves the old file or the new, never half of one; see
//! `crate::process`); a directory where no temporary file can be made fails the fix. Extended
//! attributes and ACLs are not carried over. Any other file (hard links under
//! `--fix-follow-symlinks`, another owner whose file we may write) is rewritten in place through
//! the descriptor that made the content check:
//! its inode, links, owner, mode, attributes stay; a crash in the middle of that write can leave
//! it partly written, which is the price of keeping the links. Between the last check and the
//! rename (or the write) another process can still write: that window is microseconds, not the
//! whole run.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
#[cfg(unix)]
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// Why a fix was not written; the text is the `[not fixed: …]` reason.
#[derive(Debug)]
pub struct Refused(pub String);

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Where a file named for `--fix` may be written.
pub struct Place<'a> {
    /// The path as named (or found while walking).
    pub path: &'a Path,
    /// The tree it belongs to: the directory walked, or the named file's directory.
    pub tree: &'a Path,
    /// `--fix-follow-symlinks`: a symlink may lead out of the tree.
    pub follow_symlinks: bool,
}

/// Write `fixed` over the file at `place`, which held `original` when it was read.
pub fn write_fix(place: &Place, original: &[u8], fixed: &[u8]) -> Result<(), Refused> {
    let meta = std::fs::metadata(place.path)
        .map_err(|e| Refused(format!("the file cannot be examined: {e}")))?;
    if !meta.is_file() {
        return Err(Refused(
            "not a regular file (a pipe or a device): --fix writes files; pipe the input into \
             `winlint --fix -` to get the fixed manifest on stdout"
                .into(),
        ));
    }
    let target = std::fs::canonicalize(place.path)
        .map_err(|e| Refused(format!("the file cannot be found again: {e}")))?;
    if !place.follow_symlinks {
        let tree = std::fs::canonicalize(place.tree).unwrap_or_else(|_| place.tree.into());
        if !target.starts_with(&tree) {
            return Err(Refused(format!(
                "a symlink leads out of {} (to {}); not written (--fix-follow-symlinks writes there)",
                shown(place.tree),
                target.display()
            )));
        }
    }
    if links(&meta) > 1 && !place.follow_symlinks {
        return Err(Refused(format!(
            "{} has {} hard links: a fix would change the file under its other names too, \
             which may lie outside {}; not written (--fix-follow-symlinks writes it in place, \
             keeping the links)",
            place.path.display(),
            links(&meta),
            shown(place.tree)
        )));
    }
    if let Some(why) = read_only(&meta) {
        return Err(Refused(format!(
            "the file is read-only ({why}); not written"
        )));
    }
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .open(&target)
        .map_err(|e| Refused(format!("the file cannot be opened for writing: {e}")))?;
    test_append_before_fix(&target);
    unchanged(&mut file, original)?;
    crate::process::without_interruption(|| {
        if links(&meta) == 1
            && let Some(tmp) = replacement(&target, &meta, fixed)
                .map_err(|e| Refused(format!("the fixed file could not be written: {e}")))?
        {
            unchanged(&mut file, original)?;
            // Windows refuses to replace a file that is open, ours included (MoveFileExW:
            // ERROR_ACCESS_DENIED, even with FILE_SHARE_DELETE); the Wine test of the Windows
            // binary found it. Closed after the last check, as on Unix the rename does not
            // depend on the handle either.
            drop(file);
            crate::process::test_signal_before_rename();
            return tmp
                .persist(&target)
                .map(drop)
                .map_err(|e| Refused(format!("the fixed file could not be written: {}", e.error)));
        }
        in_place(&mut file, original, fixed)
    })
}

/// The file's hard links (on Windows 1: std does not read the count there yet).
#[cfg(unix)]
fn links(meta: &std::fs::Metadata) -> u64 {
    meta.nlink()
}

#[cfg(not(unix))]
fn links(_meta: &std::fs::Metadata) -> u64 {
    1
}

/// Why nobody may write the file, if so: no write bit (Unix), the read-only attribute (Windows).
#[cfg(unix)]
fn read_only(meta: &std::fs::Metadata) -> Option<String> {
    let mode = meta.permissions().mode() & 0o7777;
    (mode & 0o222 == 0).then(|| format!("mode {mode:04o}"))
}

#[cfg(not(unix))]
fn read_only(meta: &std::fs::Metadata) -> Option<String> {
    meta.permissions()
        .readonly()
        .then(|| "the read-only attribute".into())
}

/// Test hook: with `WINLINT_TEST_APPEND_BEFORE_FIX` set, append its value to the file here, as
/// another writer could between winlint's read and its write.
fn test_append_before_fix(target: &Path) {
    if let Some(extra) = std::env::var_os("WINLINT_TEST_APPEND_BEFORE_FIX")
        && let Ok(mut f) = OpenOptions::new().append(true).open(target)
    {
        let _ = f.write_all(extra.as_encoded_bytes());
    }
}

/// `dir/` for messages.
fn shown(p: &Path) -> String {
    match p.as_os_str().is_empty() {
        true => ".".into(),
        false => p.display().to_string(),
    }
}

/// The file through `file` still holds `original` (and not a byte more).
fn unchanged(file: &mut File, original: &[u8]) -> Result<(), Refused> {
    let mut now = Vec::with_capacity(original.len());
    let read = file.seek(SeekFrom::Start(0)).and_then(|_| {
        (&mut *file)
            .take(original.len() as u64 + 1)
            .read_to_end(&mut now)
    });
    match read {
        Ok(_) if now == original => Ok(()),
        Ok(_) => Err(Refused(
            "the file changed while winlint ran (written or appended to); not written: run \
             winlint again"
                .into(),
        )),
        Err(e) => Err(Refused(format!("the file cannot be read again: {e}"))),
    }
}

/// A synced temporary file beside `target` with `fixed`, the mode, owner and group of `meta`;
/// `None` when it cannot get that owner and group (then the file is written in place). An error
/// (the directory is not writable, the disk is full) is the fix's failure: the file is left.
fn replacement(
    target: &Path,
    meta: &std::fs::Metadata,
    fixed: &[u8],
) -> std::io::Result<Option<tempfile::NamedTempFile>> {
    let dir: PathBuf = target.parent().unwrap_or(Path::new("/")).into();
    let mut tmp = tempfile::NamedTempFile::new_in(&dir)?;
    #[cfg(unix)]
    {
        let mine = tmp.as_file().metadata()?;
        if (mine.uid(), mine.gid()) != (meta.uid(), meta.gid())
            && std::os::unix::fs::fchown(tmp.as_file(), Some(meta.uid()), Some(meta.gid())).is_err()
        {
            return Ok(None);
        }
        tmp.as_file()
            .set_permissions(std::fs::Permissions::from_mode(meta.mode() & 0o7777))?;
    }
    #[cfg(not(unix))]
    tmp.as_file().set_permissions(meta.permissions())?;
    tmp.write_all(fixed)?;
    tmp.as_file().sync_all()?;
    Ok(Some(tmp))
}

/// Overwrite the file through its descriptor: same inode, links, owner and mode.
fn in_place(file: &mut File, original: &[u8], fixed: &[u8]) -> Result<(), Refused> {
    unchanged(file, original)?;
    let res = file
        .seek(SeekFrom::Start(0))
        .and_then(|_| file.write_all(fixed))
        .and_then(|_| file.set_len(fixed.len() as u64))
        .and_then(|_| file.sync_all());
    res.map_err(|e| Refused(format!("the fixed file could not be written: {e}")))
}
