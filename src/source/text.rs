//! Byte-level helpers on YAML text the loader and the editor ([`crate::textedit`]) share: line
//! starts and columns, the dash of a sequence entry, the extent of a quoted scalar, a key's
//! value slot and a block scalar's span (what saphyr's events do not mark).

/// Byte offset of the start of the line holding byte `pos`.
pub(crate) fn line_start(b: &[u8], pos: usize) -> usize {
    let pos = pos.min(b.len());
    b[..pos]
        .iter()
        .rposition(|&c| c == b'\n')
        .map_or(0, |i| i + 1)
}

/// 0-based column, in characters, of byte `pos`.
pub(crate) fn col_of(text: &str, pos: usize) -> usize {
    let ls = line_start(text.as_bytes(), pos);
    text.get(ls..pos).map_or(pos - ls, |s| s.chars().count())
}

/// Where a comment starts in `b[ls..end]` (a `#` at the line start or after a blank), else `end`.
pub(super) fn comment_start(b: &[u8], ls: usize, end: usize) -> usize {
    (ls..end)
        .find(|&i| b[i] == b'#' && (i == ls || matches!(b[i - 1], b' ' | b'\t')))
        .unwrap_or(end)
}

/// The `-` of the block sequence item whose node starts at `pos` (looking back over blanks,
/// comments and blank lines).
pub(crate) fn find_dash_before(b: &[u8], pos: usize) -> Option<usize> {
    let mut end = pos.min(b.len());
    for _ in 0..1000 {
        let ls = line_start(b, end);
        let region_end = comment_start(b, ls, end);
        let mut q = region_end;
        while q > ls && matches!(b[q - 1], b' ' | b'\t' | b'\r' | b'\n') {
            q -= 1;
        }
        if q > ls {
            return (b[q - 1] == b'-').then_some(q - 1);
        }
        if ls == 0 {
            return None;
        }
        end = ls - 1;
    }
    None
}

/// End of a quoted scalar starting at (or, after its anchor/tag, after) `start`.
pub(super) fn quoted_end(b: &[u8], start: usize, limit: usize) -> usize {
    let limit = limit.min(b.len());
    let Some(q) = (start..limit).find(|&i| b[i] == b'"' || b[i] == b'\'') else {
        return limit;
    };
    let quote = b[q];
    let mut i = q + 1;
    while i < limit {
        let c = b[i];
        if quote == b'"' && c == b'\\' {
            i += 2;
            continue;
        }
        if c == quote {
            if quote == b'\'' && b.get(i + 1) == Some(&b'\'') {
                i += 2;
                continue;
            }
            return i + 1;
        }
        i += 1;
    }
    limit
}

pub(super) fn trim_back(b: &[u8], start: usize, end: usize) -> usize {
    let mut e = end.min(b.len());
    while e > start && matches!(b[e - 1], b' ' | b'\t' | b'\r' | b'\n') {
        e -= 1;
    }
    e
}

/// Byte offset right after the `:` that follows a key ending at `key_end` (or `key_end`).
pub(super) fn slot_after_key(b: &[u8], key_end: usize) -> usize {
    let mut i = key_end;
    while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\r' | b'\n') {
        i += 1;
    }
    if b.get(i) == Some(&b':') {
        i + 1
    } else {
        key_end
    }
}

/// Span of a literal/folded block scalar: from its `|`/`>` header (or anchor/tag) to the end of
/// its last content line. saphyr's span starts at the content and ends after trailing breaks.
pub(super) fn block_scalar_span(
    b: &[u8],
    slot: usize,
    raw_start: usize,
    raw_end: usize,
) -> (usize, usize) {
    let header = block_header(b, slot, raw_start);
    let mut he = header;
    if matches!(b.get(he), Some(b'|' | b'>')) {
        he += 1;
        while he < b.len() && matches!(b[he], b'-' | b'+' | b'0'..=b'9') {
            he += 1;
        }
    }
    let end = trim_back(b, header, raw_end.max(he)).max(he);
    (header, end)
}

pub(super) fn block_header(b: &[u8], slot: usize, raw_start: usize) -> usize {
    let mut p = slot;
    while p < b.len() && matches!(b[p], b' ' | b'\t') {
        p += 1;
    }
    if p <= raw_start && matches!(b.get(p), Some(b'|' | b'>' | b'&' | b'!')) {
        return p;
    }
    if matches!(b.get(raw_start), Some(b'|' | b'>' | b'&' | b'!')) {
        return raw_start;
    }
    // The header is on an earlier line: the last non-blank line before the content.
    let mut end = line_start(b, raw_start);
    while end > 0 {
        let ls = line_start(b, end - 1);
        let ce = comment_start(b, ls, end - 1);
        let mut q = ce;
        while q > ls && matches!(b[q - 1], b' ' | b'\t' | b'\r' | b'\n') {
            q -= 1;
        }
        if q > ls {
            let mut i = q;
            while i > ls && matches!(b[i - 1], b'-' | b'+' | b'0'..=b'9') {
                i -= 1;
            }
            if i > ls && matches!(b[i - 1], b'|' | b'>') {
                return i - 1;
            }
            return raw_start;
        }
        end = ls;
    }
    raw_start
}
