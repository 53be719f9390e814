//! `-o text`: the input errors, the findings (one-line records, or [`super::grouped`] at a
//! terminal) or `--statistics`, then the summary line.

use std::io::Write;

use anstyle::{AnsiColor, Style};

use super::{
    Counts, FixState, InputError, Located, Summary, TextLayout, ViewArgs, plural, printable,
};
use crate::model::Severity;

/// The text report, built as the findings arrive (in report order): the input errors, then the
/// findings, one record each (`file:line:col: namespace/Kind/name: severity WIN403
/// env-name-invalid: message`, a blank line between files) or grouped per object
/// ([`TextLayout::Grouped`]), then a summary line. It holds formatted lines only, a few hundred
/// bytes per finding; the text is styled, see [`strip_styles`].
#[derive(Default)]
pub struct TextReport {
    lines: Vec<u8>,
    last_file: Option<String>,
    layout: TextLayout,
    /// The header of the last group ([`TextLayout::Grouped`]).
    last_header: Option<String>,
    /// `--statistics`: the tables stand for the findings, which are not kept.
    statistics_only: bool,
}

impl TextReport {
    /// The report as `view` asks for it on stdout (the default is one-line records).
    pub fn for_view(view: &ViewArgs) -> Self {
        TextReport {
            layout: view.text_layout(),
            statistics_only: view.statistics,
            ..TextReport::default()
        }
    }

    /// The report in `layout`.
    pub fn with_layout(layout: TextLayout) -> Self {
        TextReport {
            layout,
            ..TextReport::default()
        }
    }

    pub fn push(&mut self, l: &Located) {
        // Writing to a Vec cannot fail.
        let _ = match self.layout {
            _ if self.statistics_only => Ok(()),
            TextLayout::Lines => self.write_finding(l),
            TextLayout::Grouped { width } => {
                super::grouped::write_finding(&mut self.lines, &mut self.last_header, l, width)
            }
        };
    }

    fn write_finding(&mut self, l: &Located) -> std::io::Result<()> {
        let out = &mut self.lines;
        match &mut self.last_file {
            Some(f) if *f == l.file => {}
            Some(f) => {
                writeln!(out)?;
                f.clone_from(&l.file);
            }
            None => self.last_file = Some(l.file.clone()),
        }
        let bold = Style::new().bold();
        let sev = l.finding.severity;
        let st = severity_style(sev);
        // What comes from the input (names, messages quoting its values) is printable only.
        let file = printable(&l.file);
        let object = l.object_name();
        let object = printable(&object);
        match (&l.rendered, &l.cluster_namespace) {
            // No line: the place is the template and the object in it.
            (Some(how), _) => write!(out, "{bold}{file}: {object} ({}):{bold:#}", printable(how))?,
            // An object in the cluster: `ns/Kind/name: /pointer:` (the place is its name).
            (None, Some(_)) => write!(out, "{bold}{file}: {}:{bold:#}", printable(&l.pointer))?,
            // A line of a file, and the object it is in.
            (None, None) => write!(
                out,
                "{bold}{file}:{}:{}:{bold:#} {object}:",
                l.line, l.column,
            )?,
        }
        write!(
            out,
            " {st}{}{st:#} {bold}{}{bold:#} {}: {}",
            sev.as_str(),
            l.finding.rule.id,
            l.finding.rule.name,
            printable(&l.finding.message)
        )?;
        let tag = match (l.fix, &l.not_fixed) {
            (FixState::None, _) => None,
            (FixState::Fixable, _) => Some("fixable".into()),
            (FixState::NotFixed, None) => Some("not fixed".into()),
            (FixState::NotFixed, Some(why)) => Some(format!("not fixed: {}", printable(why))),
        };
        if let Some(tag) = tag {
            let dim = Style::new().dimmed();
            write!(out, " {dim}[{tag}]{dim:#}")?;
        }
        writeln!(out)
    }

    /// The whole report: the input errors, the findings, the summary line; `counts` are those
    /// of the findings pushed.
    pub fn finish(self, counts: &Counts, errors: &[InputError], summary: &Summary) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.lines.len() + 256);
        // Writing to a Vec cannot fail.
        let _ = text_head(errors, &mut out);
        out.extend_from_slice(&self.lines);
        if let Some(s) = &counts.statistics {
            if !out.is_empty() {
                out.push(b'\n');
            }
            let _ = s.write_text(summary.audit.is_some(), &mut out);
        }
        let _ = text_tail(counts, errors, summary, &mut out);
        out
    }
}

/// A severity's colour, in every text layout.
pub fn severity_style(sev: Severity) -> Style {
    let color = match sev {
        Severity::Error => AnsiColor::Red,
        Severity::Warning => AnsiColor::Yellow,
        Severity::Info => AnsiColor::Cyan,
    };
    Style::new().fg_color(Some(color.into())).bold()
}

fn text_head(errors: &[InputError], out: &mut dyn Write) -> std::io::Result<()> {
    let bold = Style::new().bold();
    for e in errors {
        let red = Style::new().fg_color(Some(AnsiColor::Red.into())).bold();
        let file = printable(&e.file);
        let place = match (e.line, e.column) {
            (0, _) => file.into_owned(),
            (l, 0) => format!("{file}:{l}"),
            (l, c) => format!("{file}:{l}:{c}"),
        };
        writeln!(
            out,
            "{bold}{place}:{bold:#} {red}error{red:#} {}",
            printable(&e.message)
        )?;
    }
    Ok(())
}

fn text_tail(
    c: &Counts,
    errors: &[InputError],
    summary: &Summary,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let bold = Style::new().bold();
    if c.total() > 0 || !errors.is_empty() || c.statistics.is_some() {
        writeln!(out)?;
    }
    writeln!(out, "{bold}{}{bold:#}", summary_line(c, errors, summary))
}

/// The summary line of the text report (also the last line of `-o github`), printable
/// ([`printable`]: it quotes `winlint.io/ignore` reasons, the configuration's path, the cluster).
pub fn summary_line(c: &Counts, errors: &[InputError], summary: &Summary) -> String {
    let counts = format!(
        "{}, {}, {}",
        plural(c.errors, "error"),
        plural(c.warnings, "warning"),
        plural(c.info, "info"),
    );
    let mut line = match &summary.audit {
        None => format!(
            "{counts} in {} ({}, {} checked)",
            plural(summary.files, "file"),
            plural(summary.objects, "object"),
            plural(summary.pods, "pod template")
        ),
        Some(a) => format!(
            "{counts} in {} of {} ({} in the cluster, {} checked)",
            plural(summary.objects, "object"),
            plural(a.namespaces, "namespace"),
            plural(a.cluster_pods, "pod"),
            plural(summary.pods, "pod template")
        ),
    };
    if !errors.is_empty() {
        line.push_str(&match summary.audit {
            None => format!("; {} could not be read", plural(errors.len(), "input")),
            Some(_) => format!("; {} could not be listed", plural(errors.len(), "kind")),
        });
    }
    if let Some(min) = c.shown_from.filter(|_| c.hidden > 0) {
        line.push_str(&format!(
            "; {} not shown (below --severity {})",
            c.hidden,
            min.as_str()
        ));
    }
    if c.fixable > 0 {
        line.push_str(&format!("; {} fixable with --fix", c.fixable));
    }
    if c.not_fixed > 0 {
        line.push_str(&format!(
            "; {} not fixed by --fix (why is on each): fix by hand",
            c.not_fixed
        ));
    }
    if summary.suppressed > 0 {
        line.push_str(&format!(
            "; {} suppressed by winlint.io/ignore",
            summary.suppressed
        ));
        if !summary.ignore_reasons.is_empty() {
            line.push_str(&format!(" ({})", summary.ignore_reasons.join("; ")));
        }
    }
    if let Some(c) = &summary.config {
        line.push_str(&format!("; configuration {c} (found)"));
    }
    if let Some(cl) = &summary.cluster {
        let context = match &cl.context {
            Some(c) => format!("context {c} at "),
            None => String::new(),
        };
        line.push_str(&format!(
            "; target from the cluster ({context}{}): {}",
            cl.server,
            cl.facts.join(", ")
        ));
    }
    printable(&line).into_owned()
}

/// `styled` without its SGR sequences (`ESC [ digits/; m`, what the reports write), when that is
/// all that stripping ANSI escapes would remove: every other byte is printable ASCII or a
/// newline. `None` otherwise: then the text must go through anstream's stripper, which also
/// drops control characters and escapes that come from the input (file names, messages).
pub fn strip_styles(styled: &[u8]) -> Option<Vec<u8>> {
    // No early exit: the check vectorises.
    let ascii = styled
        .iter()
        .fold(true, |ok, &b| ok & matches!(b, b' '..=b'~' | b'\n' | 0x1b));
    if !ascii {
        return None;
    }
    let text = std::str::from_utf8(styled).ok()?;
    let mut out = Vec::with_capacity(styled.len());
    let mut pieces = text.split('\x1b');
    out.extend_from_slice(pieces.next()?.as_bytes());
    for piece in pieces {
        let rest = piece.strip_prefix('[')?;
        let params = rest.find(|c: char| !(c.is_ascii_digit() || c == ';'))?;
        out.extend_from_slice(rest[params..].strip_prefix('m')?.as_bytes());
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strip_styles_removes_only_our_styles() {
        let bold = Style::new().bold();
        let red = Style::new().fg_color(Some(AnsiColor::Red.into())).bold();
        let styled = format!("{bold}a.yaml:1:2:{bold:#} {red}error{red:#} x: y [ok]\n\nz\n");
        let plain = strip_styles(styled.as_bytes()).expect("only our styles");
        assert_eq!(
            String::from_utf8(plain).unwrap(),
            anstream::adapter::strip_str(&styled).to_string()
        );
        // Anything else goes through anstream's stripper.
        for other in ["a\x1b]0;t\x07b\n", "tab\there\n", "é\n", "\x1b[1", "\x1bc"] {
            assert_eq!(strip_styles(other.as_bytes()), None, "{other:?}");
        }
    }
}
