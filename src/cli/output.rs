//! Where the report goes: the [`Sink`] of `--output`'s format, written to stdout as findings come
//! (colours decided once, styles stripped in one pass), and the exit code CI can trust.

use std::io::{IsTerminal, Write};

use crate::report::{self, InputError, Located, Report, Summary};

use super::args::{ColorChoice, FailOn, Format};
use crate::process::{EXIT_FINDINGS, EXIT_OK, EXIT_USAGE};

/// Where the findings go, in report order, as they are found.
pub(super) enum Sink {
    /// `--diff`: only counted, for the exit code.
    Count,
    Text(report::TextReport),
    Json(report::JsonReport<std::io::BufWriter<std::io::StdoutLock<'static>>>),
    /// SARIF lists the invocation's errors before the results: written at the end.
    Sarif(Vec<Located>),
    Github(crate::report::GithubReport<std::io::BufWriter<std::io::StdoutLock<'static>>>),
    Codequality(crate::report::CodeQualityReport<std::io::BufWriter<std::io::StdoutLock<'static>>>),
    Html(crate::report::HtmlReport<std::io::BufWriter<std::io::StdoutLock<'static>>>),
}

impl Sink {
    /// The sink of `format`, writing to stdout as `view` asks.
    pub(super) fn new(format: Format, view: &report::ViewArgs) -> Sink {
        let stdout = || std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
        match format {
            Format::Text => Sink::Text(report::TextReport::for_view(view)),
            Format::Json => Sink::Json(report::JsonReport::new(stdout())),
            Format::Sarif => Sink::Sarif(Vec::new()),
            Format::Github => Sink::Github(crate::report::GithubReport::new(stdout())),
            Format::Codequality => {
                Sink::Codequality(crate::report::CodeQualityReport::new(stdout()))
            }
            Format::Html => Sink::Html(crate::report::HtmlReport::new(stdout())),
        }
    }

    /// Write the report: what was pushed, then the errors and the summary (`--diff`'s `Count`
    /// writes nothing).
    pub(super) fn finish(
        self,
        counts: &report::Counts,
        errors: &[InputError],
        summary: &Summary,
        color: ColorChoice,
    ) -> std::io::Result<()> {
        match self {
            Sink::Count => Ok(()),
            Sink::Text(t) => {
                let choice = match color {
                    ColorChoice::Always => anstream::ColorChoice::Always,
                    ColorChoice::Never => anstream::ColorChoice::Never,
                    ColorChoice::Auto => {
                        if std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty())
                            || !std::io::stdout().is_terminal()
                        {
                            anstream::ColorChoice::Never
                        } else {
                            anstream::ColorChoice::Auto
                        }
                    }
                };
                write_styled(
                    std::io::stdout().lock(),
                    choice,
                    &t.finish(counts, errors, summary),
                )
            }
            Sink::Json(j) => j.finish(counts, errors, summary),
            Sink::Github(g) => g.finish(counts, errors, summary),
            Sink::Codequality(q) => q.finish(counts, errors, summary),
            Sink::Html(h) => h.finish(counts, errors, summary),
            Sink::Sarif(findings) => {
                let report = Report {
                    findings: &findings,
                    errors,
                    summary,
                };
                let mut o = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
                serde_json::to_writer_pretty(&mut o, &report::sarif_value(&report))
                    .map_err(std::io::Error::from)
                    .and_then(|()| writeln!(o))
                    .and_then(|()| o.flush())
            }
        }
    }

    pub(super) fn push(&mut self, l: Located) {
        match self {
            Sink::Count => {}
            Sink::Text(t) => t.push(&l),
            Sink::Json(j) => j.push(&l),
            Sink::Sarif(v) => v.push(l),
            Sink::Github(g) => g.push(&l),
            Sink::Codequality(q) => q.push(&l),
            Sink::Html(h) => h.push(&l),
        }
    }
}

/// `AutoStream` decides colours as before; when it would strip them and the text holds no
/// other escapes, the styles are removed here in one pass and the text written at once.
pub(super) fn write_styled<S: anstream::stream::RawStream + anstream::stream::AsLockedWrite>(
    raw: S,
    choice: anstream::ColorChoice,
    styled: &[u8],
) -> std::io::Result<()> {
    let mut o = anstream::AutoStream::new(raw, choice);
    if o.current_choice() == anstream::ColorChoice::Never
        && let Some(plain) = report::strip_styles(styled)
    {
        let mut raw = o.into_inner();
        raw.write_all(&plain)?;
        return raw.flush();
    }
    o.write_all(styled)?;
    o.flush()
}

/// Say a write error (but a closed pipe), then the exit code: 2 when an input could not be
/// read, 1 when findings reach `fail_on`, else 0.
pub(super) fn exit_code(
    written: std::io::Result<()>,
    errors: &[InputError],
    counts: &report::Counts,
    fail_on: FailOn,
) -> i32 {
    if let Err(e) = written
        && e.kind() != std::io::ErrorKind::BrokenPipe
    {
        eprintln!("winlint: {e}");
    }
    if !errors.is_empty() {
        return EXIT_USAGE;
    }
    let failing = match fail_on {
        FailOn::Error => counts.errors,
        FailOn::Warning => counts.errors + counts.warnings,
        FailOn::Info => counts.total(),
        FailOn::Never => 0,
    };
    if failing > 0 { EXIT_FINDINGS } else { EXIT_OK }
}
