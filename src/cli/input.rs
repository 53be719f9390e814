//! Reading the inputs of `winlint lint`: once, and never more than a cap.
//!
//! A regular file is read when it is linted (pass 1 reads it for context objects, pass 2 again:
//! memory holds one file at a time). Anything else named as a file (a FIFO, `/dev/stdin`, a
//! process substitution `<(helm template …)`, a character device) can be read only once: it is
//! read when the inputs are collected, and its bytes are kept. Every read stops at the cap
//! (`--max-input-bytes`): `/dev/zero` or a runaway generator is an input error, not an OOM.

use std::io::Read;
use std::path::Path;

/// The default of `--max-input-bytes`: far above any real manifest (the API server stores at
/// most 1.5 MiB per object) and a chart's rendering, and low enough that one input cannot
/// exhaust the machine.
pub const DEFAULT_MAX_INPUT_BYTES: u64 = 64 << 20;

/// Why an input could not be read.
#[derive(Debug)]
pub enum ReadError {
    Io(std::io::Error),
    /// More than the cap (the cap, in bytes).
    TooLarge(u64),
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadError::Io(e) => write!(f, "cannot read: {e}"),
            ReadError::TooLarge(cap) => write!(
                f,
                "larger than {}, the input size cap (--max-input-bytes); not linted",
                human(*cap)
            ),
        }
    }
}

/// `64 MiB`, `1000 bytes`.
pub fn human(bytes: u64) -> String {
    if bytes >= 1 << 20 && bytes.is_multiple_of(1 << 20) {
        format!("{} MiB", bytes >> 20)
    } else if bytes >= 1 << 10 && bytes.is_multiple_of(1 << 10) {
        format!("{} KiB", bytes >> 10)
    } else {
        format!("{bytes} bytes")
    }
}

/// Read `r` to its end, at most `cap` bytes: one byte more is [`ReadError::TooLarge`].
pub fn read_capped(r: impl Read, cap: u64) -> Result<Vec<u8>, ReadError> {
    read_into(r, cap, Vec::new())
}

/// [`read_capped`] into `bytes` (empty, with the capacity expected).
fn read_into(r: impl Read, cap: u64, mut bytes: Vec<u8>) -> Result<Vec<u8>, ReadError> {
    r.take(cap.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(ReadError::Io)?;
    if bytes.len() as u64 > cap {
        return Err(ReadError::TooLarge(cap));
    }
    Ok(bytes)
}

/// A path named as an input, as found when the inputs are collected.
pub enum Opened {
    /// A regular file no larger than the cap: read again when needed.
    File,
    /// Not a regular file (pipe, FIFO, device, socket): its bytes, read now, once.
    Stream(Vec<u8>),
}

/// Look at the path named as an input: a regular file is checked against the cap by its size;
/// anything else is read now (the only time it can be read).
pub fn open(path: &Path, cap: u64) -> Result<Opened, ReadError> {
    let meta = std::fs::metadata(path).map_err(ReadError::Io)?;
    if meta.is_file() {
        if meta.len() > cap {
            return Err(ReadError::TooLarge(cap));
        }
        return Ok(Opened::File);
    }
    let f = std::fs::File::open(path).map_err(ReadError::Io)?;
    read_capped(f, cap).map(Opened::Stream)
}

/// Read a regular file (again), within the cap (it may have grown since it was collected).
/// The buffer is sized from the file's length, so a file is two `read`s (its bytes, then the
/// end) rather than the nine of a buffer grown from nothing (strace, BENCHMARKS.md §11).
pub fn read_file(path: &Path, cap: u64) -> Result<Vec<u8>, ReadError> {
    let f = std::fs::File::open(path).map_err(ReadError::Io)?;
    let len = f.metadata().map_or(0, |m| m.len()).min(cap);
    let bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0).saturating_add(1));
    read_into(f, cap, bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_read_stops_one_byte_past_the_cap() {
        assert_eq!(read_capped(&b"abcd"[..], 4).unwrap(), b"abcd");
        assert!(matches!(
            read_capped(&b"abcde"[..], 4),
            Err(ReadError::TooLarge(4))
        ));
        // An endless source ends at the cap.
        assert!(matches!(
            read_capped(std::io::repeat(0), 1 << 10),
            Err(ReadError::TooLarge(1024))
        ));
    }

    #[test]
    fn sizes_read_as_people_write_them() {
        assert_eq!(human(64 << 20), "64 MiB");
        assert_eq!(human(2048), "2 KiB");
        assert_eq!(human(1000), "1000 bytes");
    }
}
