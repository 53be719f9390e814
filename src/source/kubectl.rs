//! What kubectl accepts and YAML 1.2 refuses: tabs and shallow indentation in quoted strings.
//!
//! kubectl reads manifests with go-yaml (through `sigs.k8s.io/yaml`), which follows libyaml:
//! the continuation lines of a multi-line quoted string (`"…"` or `'…'`) may be indented with
//! tabs, and by less than the string's key. YAML 1.2, and so saphyr-parser, refuses both
//! ("tab cannot be used as indentation", "invalid indentation in quoted scalar"). It is common
//! in the wild: a Windows DaemonSet embeds its PowerShell script in one double-quoted string,
//! edited with tabs. go-yaml also reads a tab after a mapping's `:` (`key:<TAB>value`) as the
//! space it is, where saphyr-parser refuses it when a letter, digit or `-` follows.
//!
//! Inside a flow collection (`[…]`, `{…}`) nested in a block, go-yaml checks no indentation at
//! all: its lines may be indented with tabs, or at or left of the key (closing bracket
//! included), where saphyr-parser refuses them.
//!
//! These four, and only these, are loaded as kubectl loads them, with a warning. The loader
//! ([`crate::source`]) parses the text as it is; when saphyr-parser stops on one of those four
//! errors, [`Relaxed::relax`] edits the parser's copy of the text at that place and the loader
//! parses it again. The edits cannot change any value: the leading whitespace of a quoted
//! string's continuation lines is never part of the string (YAML 1.2 §7.3 and go-yaml both drop
//! it: a line break folds to a space, or to a newline before an empty line), so its tabs may
//! become spaces and spaces may be added to it; the whitespace after `:` is a separator. Each
//! edit is made only where saphyr-parser reported the error (a scan error is raised at that
//! place only in that state), so what it touches is that whitespace. Tabs become spaces one for
//! one; added spaces go at the start of a line, and [`Relaxed::unshift`] maps every position the
//! parser reports back to the original text, so lines, columns and byte spans (for `--fix`) are
//! the original's.
//!
//! Everything else is refused as before, with saphyr-parser's message and place: a tab that
//! indents a block key or a plain or block scalar (go-yaml refuses those too), a document marker
//! inside a quoted string, an unterminated string. The differences left (`-<TAB>item`, a line
//! holding only a tab in block context, a block scalar whose content starts with a tab, which
//! saphyr-parser accepts and kubectl refuses) are listed in the README.
//! tests/yaml_kubectl.rs compares the loaded values with kubectl's on testdata/yaml/kubectl/.

use saphyr_parser::{Marker, ScanError};

use super::LoadError;

/// Most edits for one text; a text needing more is refused with the parser's error.
const MAX_EDITS: usize = 100_000;

const TAB_IN_QUOTED: &str = "tab cannot be used as indentation";
const SHALLOW_QUOTED: &str = "invalid indentation in quoted scalar";
const TAB_AFTER_COLON: &str = "':' must be followed by a valid YAML whitespace";
/// What saphyr-parser says of a line inside a flow collection (`[…]`, `{…}`) in block context
/// that is indented with tabs, or not deeper than the block it sits in.
const FLOW_INDENT: &[&str] = &[
    "invalid indentation",
    "invalid indentation in flow construct",
    "tabs disallowed within this context (block indentation)",
];

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Leniency {
    /// A tab in the indentation of a continuation line, or too little indentation.
    QuotedIndent,
    TabAfterColon,
    /// A line of a flow collection indented with tabs, or at or left of its block's column.
    FlowIndent,
}

impl Leniency {
    fn describe(self) -> &'static str {
        match self {
            Leniency::QuotedIndent => {
                "multi-line quoted string indented with tabs or by less than its key"
            }
            Leniency::TabAfterColon => "tab after a mapping's ':'",
            Leniency::FlowIndent => {
                "flow collection ([…] or {…}) continued on lines indented with tabs or left of its key"
            }
        }
    }
}

/// The parser's copy of a text, with the edits made so far.
#[derive(Debug)]
pub struct Relaxed {
    text: String,
    /// Spaces added at the start of a line: (1-based line, count), sorted by line, with the
    /// characters added on the lines before it.
    added: Vec<(usize, usize, usize)>,
    notes: Vec<(Leniency, usize)>,
    edits: usize,
}

impl Relaxed {
    pub fn new(text: &str) -> Self {
        Relaxed {
            text: text.to_string(),
            added: Vec::new(),
            notes: Vec::new(),
            edits: 0,
        }
    }

    /// The text to parse.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// A position in [`Self::text`] as a position in the original text.
    pub fn unshift(&self, m: Marker) -> Marker {
        let i = self.added.partition_point(|&(l, _, _)| l < m.line());
        let before = self.added.get(i).map_or_else(
            || self.added.last().map_or(0, |&(_, n, b)| b + n),
            |&(_, _, b)| b,
        );
        let here = match self.added.get(i) {
            Some(&(l, n, _)) if l == m.line() => n.min(m.col()),
            _ => 0,
        };
        Marker::new(m.index() - before - here, m.line(), m.col() - here)
    }

    /// One warning per kind of leniency used, at its first line, naming the lines where the
    /// parser stopped (a continuation line with a tab, or the first line of a string whose
    /// continuation lines are too shallow).
    pub fn warnings(&self) -> Vec<LoadError> {
        let mut notes = self.notes.clone();
        notes.sort();
        notes.dedup();
        let mut out: Vec<LoadError> = Vec::new();
        for kind in [
            Leniency::QuotedIndent,
            Leniency::TabAfterColon,
            Leniency::FlowIndent,
        ] {
            let lines: Vec<usize> = notes
                .iter()
                .filter(|(k, _)| *k == kind)
                .map(|&(_, l)| l)
                .collect();
            let Some(&first) = lines.first() else {
                continue;
            };
            let more = match lines.len() {
                1 => String::new(),
                n => format!(
                    " (lines {}{})",
                    lines
                        .iter()
                        .take(8)
                        .map(usize::to_string)
                        .collect::<Vec<_>>()
                        .join(", "),
                    if n > 8 { ", …" } else { "" }
                ),
            };
            out.push(LoadError {
                line: first,
                column: 0,
                message: format!(
                    "{}{more}: YAML 1.2 forbids it, kubectl accepts it; loaded as kubectl does",
                    kind.describe()
                ),
            });
        }
        out
    }

    /// Edit the text so that the scan error `e` (raised on [`Self::text`]) goes away, when it is
    /// one of the leniencies of kubectl. `false`: it is not, or nothing could be changed.
    /// `flow_col`: the column of the outermost flow collection the parser was in, if any.
    pub fn relax(&mut self, e: &ScanError, flow_col: Option<usize>) -> bool {
        self.edits += 1;
        if self.edits > MAX_EDITS {
            return false;
        }
        let m = *e.marker();
        let Some(at) = byte_of(&self.text, m.index()) else {
            return false;
        };
        match e.info() {
            TAB_IN_QUOTED => {
                let start = line_start(&self.text, at);
                self.respace(start, 0) && self.note(Leniency::QuotedIndent, m.line())
            }
            SHALLOW_QUOTED => self.deepen_quoted(at, m),
            TAB_AFTER_COLON => {
                let b = self.text.as_bytes();
                let ws = b[..at]
                    .iter()
                    .rposition(|&c| c != b' ' && c != b'\t')
                    .map_or(0, |p| p + 1);
                if ws == 0 || b[ws - 1] != b':' || !b[ws..at].contains(&b'\t') {
                    return false;
                }
                let spaces = " ".repeat(at - ws);
                self.text.replace_range(ws..at, &spaces);
                self.note(Leniency::TabAfterColon, m.line())
            }
            // Inside […] / {…} go-yaml checks no indentation, and a line's leading blanks are
            // never part of a value there (separation, or folded in a multi-line plain or
            // quoted scalar): spaces, deeper than the collection's opening bracket, change
            // nothing. A line starting with a document marker is left alone (kubectl refuses
            // it too).
            info if FLOW_INDENT.contains(&info) => {
                let Some(col) = flow_col else {
                    return false;
                };
                let start = line_start(&self.text, at);
                !is_document_marker(&self.text.as_bytes()[start..])
                    && self.respace(start, col + 1)
                    && self.note(Leniency::FlowIndent, m.line())
            }
            _ => false,
        }
    }

    fn note(&mut self, kind: Leniency, line: usize) -> bool {
        self.notes.push((kind, line));
        true
    }

    /// Replace the line starting at byte `start`'s leading blanks with spaces, at least `width`
    /// of them; `true` if that changed the text.
    fn respace(&mut self, start: usize, width: usize) -> bool {
        let b = self.text.as_bytes();
        let end = start
            + b[start..]
                .iter()
                .take_while(|&&c| c == b' ' || c == b'\t')
                .count();
        let old = end - start;
        let has_tab = b[start..end].contains(&b'\t');
        // A line holding only blanks needs no depth.
        let blank = matches!(b.get(end), None | Some(b'\n' | b'\r'));
        let new = if blank { old } else { old.max(width) };
        if !has_tab && new == old {
            return false;
        }
        let line = 1 + b[..start].iter().filter(|&&c| c == b'\n').count();
        self.text.replace_range(start..end, &" ".repeat(new));
        if new > old {
            self.add_spaces(line, new - old);
        }
        true
    }

    fn add_spaces(&mut self, line: usize, n: usize) {
        match self.added.binary_search_by_key(&line, |&(l, _, _)| l) {
            Ok(i) => self.added[i].1 += n,
            Err(i) => self.added.insert(i, (line, n, 0)),
        }
        let mut before = 0;
        for a in &mut self.added {
            a.2 = before;
            before += a.1;
        }
    }

    /// The quoted string starting at byte `at` (its quote) has continuation lines indented less
    /// than the parser requires: give each of them spaces instead of tabs, and as many as the
    /// string's column plus one, which is more than any block indentation it sits in. A line
    /// that starts with a document marker is left alone (kubectl refuses it too).
    fn deepen_quoted(&mut self, at: usize, m: Marker) -> bool {
        let b = self.text.as_bytes();
        let Some(&quote) = b.get(at).filter(|&&q| q == b'"' || q == b'\'') else {
            return false;
        };
        let Some(end) = quoted_end(b, at, quote) else {
            return false;
        };
        let width = m.col() + 1;
        let starts: Vec<usize> = (at..end)
            .filter(|&i| b[i] == b'\n')
            .map(|i| i + 1)
            .filter(|&s| !is_document_marker(&b[s..]))
            .collect();
        let mut changed = false;
        // From the last line up: an edit does not move the lines before it.
        for &s in starts.iter().rev() {
            changed |= self.respace(s, width);
        }
        changed && self.note(Leniency::QuotedIndent, m.line())
    }
}

/// The byte of character `ci` of `text`.
fn byte_of(text: &str, ci: usize) -> Option<usize> {
    if text.is_ascii() {
        return (ci <= text.len()).then_some(ci);
    }
    text.char_indices()
        .map(|(i, _)| i)
        .chain(std::iter::once(text.len()))
        .nth(ci)
}

fn line_start(text: &str, at: usize) -> usize {
    text.as_bytes()[..at]
        .iter()
        .rposition(|&c| c == b'\n')
        .map_or(0, |p| p + 1)
}

/// The byte of the quote that ends the quoted string whose opening quote is at `at`.
fn quoted_end(b: &[u8], at: usize, quote: u8) -> Option<usize> {
    let mut i = at + 1;
    while i < b.len() {
        match b[i] {
            b'\\' if quote == b'"' => i += 2,
            b'\'' if quote == b'\'' && b.get(i + 1) == Some(&b'\'') => i += 2,
            c if c == quote => return Some(i),
            _ => i += 1,
        }
    }
    None
}

/// `---` or `...` followed by a blank or the line's end.
fn is_document_marker(line: &[u8]) -> bool {
    (line.starts_with(b"---") || line.starts_with(b"..."))
        && matches!(line.get(3), None | Some(b' ' | b'\t' | b'\r' | b'\n'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unshift_maps_positions_after_added_spaces_back() {
        let mut r = Relaxed::new("a\nb\nc\nd\n");
        r.add_spaces(2, 3);
        r.add_spaces(4, 1);
        r.add_spaces(2, 1);
        assert_eq!(r.added, [(2, 4, 0), (4, 1, 4)]);
        // Line 1 is before every edit.
        assert_eq!(r.unshift(Marker::new(1, 1, 1)), Marker::new(1, 1, 1));
        // Line 2, after its 4 added spaces: index 2 + 4, column 4.
        assert_eq!(r.unshift(Marker::new(6, 2, 4)), Marker::new(2, 2, 0));
        // Line 3: 4 added before it.
        assert_eq!(r.unshift(Marker::new(12, 3, 0)), Marker::new(8, 3, 0));
        // Line 4: 4 before, 1 on it.
        assert_eq!(r.unshift(Marker::new(15, 4, 1)), Marker::new(10, 4, 0));
        // Line 5: 5 before.
        assert_eq!(r.unshift(Marker::new(17, 5, 0)), Marker::new(12, 5, 0));
    }

    /// Lines of a flow collection in block context, indented with tabs or at or left of the
    /// key: loaded as go-yaml loads them, with one warning; a plain scalar under-indented in
    /// block context stays refused (kubectl refuses it too).
    #[test]
    fn flow_collections_ignore_indentation_as_go_yaml_does() {
        use serde_json::json;
        let load = |t: &str| {
            crate::source::load_bytes_warned(t.as_bytes()).map(|(d, w)| {
                (
                    d[0].value.clone(),
                    w.iter().map(|w| w.line).collect::<Vec<_>>(),
                )
            })
        };
        let s = |v| json!({"data": {"s": v}});
        assert_eq!(
            load("data:\n  s: [a,\n b]\n"),
            Ok((s(json!(["a", "b"])), vec![3]))
        );
        assert_eq!(
            load("data:\n  s: [a,\nb\n]\n"),
            Ok((s(json!(["a", "b"])), vec![3]))
        );
        assert_eq!(
            load("data:\n  s: [a,\n  b,\n]\n"),
            Ok((s(json!(["a", "b"])), vec![3]))
        );
        assert_eq!(
            load("data:\n  s: [a,\n\tb]\n"),
            Ok((s(json!(["a", "b"])), vec![3]))
        );
        assert_eq!(
            load("data:\n  s: {a: b,\nc: d\n}\n"),
            Ok((s(json!({"a": "b", "c": "d"})), vec![3]))
        );
        // A later error keeps its own line.
        let e = load("data:\n  s: [a,\nb]\n  t: x: y\n").unwrap_err();
        assert_eq!(e.line, 4, "{e:?}");
        // Block context: refused as before.
        assert!(load("data:\n  s: a\n b\n").is_err());
        // A document marker inside the collection is not re-indented.
        assert!(load("s: [a,\n---\n]\n").is_err());
    }

    #[test]
    fn quoted_strings_end_at_their_own_quote() {
        let b = br#""a\"b" 'c''d' "x"#;
        assert_eq!(quoted_end(b, 0, b'"'), Some(5));
        assert_eq!(quoted_end(b, 7, b'\''), Some(12));
        assert_eq!(quoted_end(b, 14, b'"'), None);
    }
}
