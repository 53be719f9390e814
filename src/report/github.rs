//! `-o github`: GitHub Actions workflow commands, one per finding
//! (`::error file=k8s/web.yaml,line=15,col=5,title=WIN001 missing-os-selector::…`), which the
//! runner turns into annotations on the pull request's diff; then the input errors, then the
//! summary line as plain log text.
//!
//! Severities: error → `::error`, warning → `::warning`, info → `::notice`. A finding in rendered
//! output (a Helm template, a kustomization) has no line: its annotation is on the file, and its
//! message starts with the object and how it was rendered.
//!
//! Escaping as GitHub's own toolkit does (`@actions/core`, `command.ts`): in the message `%`,
//! CR and LF become `%25`, `%0D`, `%0A`; in a property value also `:` and `,` become `%3A` and
//! `%2C`. Every other control character from the input is written as an escape ([`printable`]:
//! `\u{1b}`, `\t`), so a manifest can neither start a line of its own (`::error …`,
//! `::add-mask::`) nor drive the log's terminal; the summary line, written as plain log text, is
//! printable whole (its line breaks as `\n`).

use std::io::Write;

use super::ci::ci_path;
use crate::model::Severity;
use crate::report::{Counts, FixState, InputError, Located, Summary, printable, summary_line};

pub struct GithubReport<W: Write> {
    out: W,
    /// The first write error; nothing more is written after it.
    failed: Option<std::io::Error>,
}

fn escape_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

/// One workflow command: `::name k=v,k=v::message`.
fn command(name: &str, props: &[(&str, String)], message: &str) -> String {
    let props: Vec<String> = props
        .iter()
        .map(|(k, v)| format!("{k}={}", printable(&escape_property(v))))
        .collect();
    let sep = if props.is_empty() { "" } else { " " };
    format!(
        "::{name}{sep}{}::{}\n",
        props.join(","),
        printable(&escape_data(message))
    )
}

impl<W: Write> GithubReport<W> {
    pub fn new(out: W) -> Self {
        GithubReport { out, failed: None }
    }

    fn write(&mut self, text: &str) {
        if self.failed.is_none()
            && let Err(e) = self.out.write_all(text.as_bytes())
        {
            self.failed = Some(e);
        }
    }

    pub fn push(&mut self, l: &Located) {
        let name = match l.finding.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "notice",
        };
        let mut props = Vec::new();
        // An object in the cluster (`winlint audit`) has no file: the annotation goes on the
        // run, its message names the object.
        if l.file != "<stdin>" && l.cluster_namespace.is_none() {
            props.push(("file", ci_path(&l.file)));
        }
        if l.rendered.is_none() && l.line > 0 {
            props.push(("line", l.line.to_string()));
            props.push(("col", l.column.max(1).to_string()));
        }
        props.push((
            "title",
            format!("{} {}", l.finding.rule.id, l.finding.rule.name),
        ));
        // Every annotation names its object, as the text report does.
        let mut message = match (&l.rendered, &l.cluster_namespace) {
            (Some(how), _) => format!("{} ({how}): {}", l.object_name(), l.finding.message),
            (None, Some(_)) => format!("{}: {}: {}", l.file, l.pointer, l.finding.message),
            (None, None) => format!("{}: {}", l.object_name(), l.finding.message),
        };
        match l.fix {
            FixState::None => {}
            FixState::Fixable => message.push_str(" [fixable with winlint --fix]"),
            FixState::NotFixed => match &l.not_fixed {
                Some(why) => {
                    message.push_str(&format!(" [not fixed by --fix ({why}): fix by hand]"))
                }
                None => message.push_str(" [not fixed by --fix: fix by hand]"),
            },
        }
        let line = command(name, &props, &message);
        self.write(&line);
    }

    /// The input errors as `::error` commands, then the summary line; `c` are the counts of the
    /// findings pushed.
    pub fn finish(
        mut self,
        c: &Counts,
        errors: &[InputError],
        summary: &Summary,
    ) -> std::io::Result<()> {
        for e in errors {
            let mut props = Vec::new();
            let mut message = e.message.clone();
            if summary.audit.is_some() {
                // `winlint audit`: what could not be listed, no file.
                message = format!("{}: {message}", e.file);
            } else if e.file != "<stdin>" {
                props.push(("file", ci_path(&e.file)));
            }
            if e.line > 0 {
                props.push(("line", e.line.to_string()));
                if e.column > 0 {
                    props.push(("col", e.column.to_string()));
                }
            }
            let title = match summary.audit {
                None => "winlint could not read this input",
                Some(_) => "winlint could not list these objects",
            };
            props.push(("title", title.to_string()));
            let line = command("error", &props, &message);
            self.write(&line);
        }
        let line = format!("{}\n", summary_line(c, errors, summary));
        self.write(&line);
        if let Some(e) = self.failed.take() {
            return Err(e);
        }
        self.out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_follows_the_actions_toolkit() {
        assert_eq!(
            command(
                "error",
                &[("file", "a,b:c%.yaml".into()), ("title", "x\ny".into())],
                "50% done\r\nnext: a,b"
            ),
            "::error file=a%2Cb%3Ac%25.yaml,title=x%0Ay::50%25 done%0D%0Anext: a,b\n"
        );
        assert_eq!(command("notice", &[], "m"), "::notice::m\n");
        // Other control characters are escapes, never raw bytes.
        assert_eq!(
            command("error", &[("title", "t\x1b[2J".into())], "a\x1b]0;x\x07\tb"),
            "::error title=t\\u{1b}[2J::a\\u{1b}]0;x\\u{7}\\tb\n"
        );
    }
}
