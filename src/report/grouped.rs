//! The grouped text layout, for people at a terminal (`--layout grouped`, the default there):
//! one header line per object (`file: namespace/Kind/name`), then each finding as a line of
//! `line:col`, severity and rule (in rendered output and the cluster, the JSON pointer under
//! it), its message wrapped to the width and indented, its fix on a line of its own:
//!
//! ```text
//! testdata/examples/iis-deployment.yaml: web/Deployment/iis
//!   15:5  error WIN001 missing-os-selector
//!     Windows pod has no OS node selector (…); the scheduler may place it on a Linux
//!     node. Add nodeSelector kubernetes.io/os: windows
//!     fix: add nodeSelector kubernetes.io/os=windows [fixable]
//! ```
//!
//! As ruff's and clippy's full output, but without source snippets: the finding's line is given,
//! and what matters to a reader of Kubernetes manifests is which object, what and how to fix it.
//! annotate-snippets (in the graph through serde-saphyr) renders snippets and trims long source
//! lines but never wraps a message, which is the problem here; the wrapping is a greedy fill by
//! display width (unicode-width, already built for annotate-snippets: no new crate).

use std::io::Write;

use anstyle::{AnsiColor, Style};
use unicode_width::UnicodeWidthStr;

use super::{FixState, Located, printable};
use crate::model::{Fix, FixSafety};

/// Where the message and the fix start.
const INDENT: usize = 4;

/// Write `l` into `out`; `header` is the header of the group written last, updated.
pub fn write_finding(
    out: &mut Vec<u8>,
    header: &mut Option<String>,
    l: &Located,
    width: usize,
) -> std::io::Result<()> {
    let bold = Style::new().bold();
    let mine = group_header(l);
    if header.as_deref() != Some(mine.as_str()) {
        if header.is_some() {
            writeln!(out)?;
        }
        writeln!(out, "{bold}{mine}{bold:#}")?;
        *header = Some(mine);
    }
    let sev = l.finding.severity;
    let st = super::text::severity_style(sev);
    // A line of a file leads the finding's line, as in an editor's problem list; a place in
    // an object (rendered output, the cluster), a JSON pointer that may be wider than the rest,
    // has a line of its own.
    let (line, pointer) = if l.rendered.is_none() && l.cluster_namespace.is_none() {
        (format!("{}:{}  ", l.line, l.column), None)
    } else if l.pointer.is_empty() {
        (String::new(), Some("/".into()))
    } else {
        (String::new(), Some(printable(&l.pointer)))
    };
    writeln!(
        out,
        "  {line}{st}{}{st:#} {bold}{}{bold:#} {}",
        sev.as_str(),
        l.finding.rule.id,
        l.finding.rule.name
    )?;
    if let Some(p) = pointer {
        let dim = Style::new().dimmed();
        writeln!(out, "{:INDENT$}{dim}at {p}{dim:#}", "")?;
    }
    wrap(
        out,
        "",
        0,
        printable(&l.finding.message).split_whitespace(),
        width,
    )?;
    if let Some(fix) = &l.finding.fix {
        let tag = printable(&fix_tag(l, fix)).into_owned();
        let description = printable(&fix.description);
        let green = Style::new().fg_color(Some(AnsiColor::Green.into())).bold();
        // A short tag stays whole, as one word; a long why is filled like the rest.
        let whole = tag.width() <= width.saturating_sub(INDENT + 5);
        let mut words: Vec<&str> = description.split_whitespace().collect();
        match whole {
            true if !tag.is_empty() => words.push(&tag),
            _ => words.extend(tag.split_whitespace()),
        }
        let lead = format!("{green}fix:{green:#} ");
        wrap(out, &lead, 5, words.into_iter(), width)?;
    }
    Ok(())
}

/// What `--fix` does with the finding's fix, as a tag after it: `[fixable]`, `[not fixed: why]`,
/// `[opt-in: --fix-opt-in WIN…]`, or nothing. Shared with [`super::html`].
pub(super) fn fix_tag(l: &Located, fix: &Fix) -> String {
    match (l.fix, &l.not_fixed) {
        (FixState::Fixable, _) => "[fixable]".to_string(),
        (FixState::NotFixed, None) => "[not fixed]".to_string(),
        (FixState::NotFixed, Some(why)) => format!("[not fixed: {why}]"),
        // Only where --fix could edit: neither rendered output nor the cluster.
        (FixState::None, _)
            if fix.safety == FixSafety::OptIn
                && l.rendered.is_none()
                && l.cluster_namespace.is_none() =>
        {
            format!("[opt-in: --fix-opt-in {}]", l.finding.rule.id)
        }
        (FixState::None, _) => String::new(),
    }
}

/// The header line of a finding's object: the file and the object (and how it was rendered);
/// in the cluster, the object alone (its place is its name).
pub(super) fn group_header(l: &Located) -> String {
    let header = match (&l.rendered, &l.cluster_namespace) {
        (Some(how), _) => format!("{}: {} ({how})", l.file, l.object_name()),
        (None, Some(_)) => l.object_name(),
        (None, None) => format!("{}: {}", l.file, l.object_name()),
    };
    printable(&header).into_owned()
}

/// The words of a text filled into lines of at most `width` columns, indented by [`INDENT`]; the first starts
/// with `lead` (styled, `lead_width` columns wide), and the others hang under the text after it.
/// A word wider than a line gets a line of its own, whole: an image reference or a path cut in
/// two could not be copied.
fn wrap<'a>(
    out: &mut Vec<u8>,
    lead: &str,
    lead_width: usize,
    words: impl Iterator<Item = &'a str>,
    width: usize,
) -> std::io::Result<()> {
    let hang = INDENT + lead_width;
    write!(out, "{:INDENT$}{lead}", "")?;
    let mut col = hang;
    let mut line_empty = true;
    for word in words {
        let w = word.width();
        if !line_empty && col + 1 + w > width {
            write!(out, "\n{:hang$}", "")?;
            col = hang;
            line_empty = true;
        }
        if !line_empty {
            out.push(b' ');
            col += 1;
        }
        out.extend_from_slice(word.as_bytes());
        col += w;
        line_empty = false;
    }
    writeln!(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wrapped(text: &str, width: usize) -> String {
        let mut out = Vec::new();
        wrap(&mut out, "", 0, text.split_whitespace(), width).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn wrap_fills_lines_up_to_the_width_by_display_columns() {
        assert_eq!(
            wrapped("aaa bbb ccc ddd", 4 + 7),
            "    aaa bbb\n    ccc ddd\n"
        );
        // Wide characters count two columns: `日本` is 4.
        assert_eq!(wrapped("日本 日本 x", 4 + 9), "    日本 日本\n    x\n");
        // A word longer than the line is kept whole on its own line.
        assert_eq!(
            wrapped("a mcr.microsoft.com/windows/servercore:ltsc2022 b", 20),
            "    a\n    mcr.microsoft.com/windows/servercore:ltsc2022\n    b\n"
        );
    }

    #[test]
    fn a_lead_hangs_the_lines_after_it() {
        let mut out = Vec::new();
        let words = ["one", "two", "three [not fixed: why]"];
        wrap(&mut out, "fix: ", 5, words.into_iter(), 4 + 5 + 7).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "    fix: one two\n         three [not fixed: why]\n"
        );
    }
}
