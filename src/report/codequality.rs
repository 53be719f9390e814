//! `-o codequality`: GitLab's Code Quality report (a JSON array of Code Climate issues), for
//! `artifacts: reports: codequality:` in `.gitlab-ci.yml`. Each finding is an issue with the
//! fields GitLab requires: `description`, `check_name` (the rule ID), `fingerprint` (see
//! [`super::ci::Fingerprints`]: the same finding keeps it across runs and when lines move, which is
//! how GitLab tells new issues from old ones), `severity` and `location.path` with
//! `location.lines.begin`.
//!
//! Severities: error → `major`, warning → `minor`, info → `info` (as GitLab's own ESLint and
//! Code Climate integrations map them). A finding in rendered output has no line of its own:
//! `lines.begin` is 1 (GitLab requires a line) and the description names the object and how it
//! was rendered. An input that could not be read is an issue too (`check_name`
//! `winlint/unreadable-input`, `major`), so that a broken file does not vanish from the report.
//!
//! The array is written as the findings arrive, one issue per line.

use std::io::Write;

use serde_json::json;

use super::ci::{Fingerprints, ci_path};
use crate::model::Severity;
use crate::report::{Counts, InputError, Located, Summary};

pub struct CodeQualityReport<W: Write> {
    out: W,
    items: usize,
    prints: Fingerprints,
    /// The first write error; nothing more is written after it.
    failed: Option<std::io::Error>,
}

impl<W: Write> CodeQualityReport<W> {
    pub fn new(out: W) -> Self {
        CodeQualityReport {
            out,
            items: 0,
            prints: Fingerprints::default(),
            failed: None,
        }
    }

    fn item(&mut self, v: &serde_json::Value) {
        let sep: &[u8] = if self.items == 0 { b"[\n  " } else { b",\n  " };
        self.items += 1;
        if self.failed.is_none() {
            let res = self
                .out
                .write_all(sep)
                .and_then(|()| serde_json::to_writer(&mut self.out, v).map_err(Into::into));
            if let Err(e) = res {
                self.failed = Some(e);
            }
        }
    }

    pub fn push(&mut self, l: &Located) {
        let f = &l.finding;
        let description = match &l.rendered {
            Some(how) => format!(
                "{} {}: {} ({how}): {}",
                f.rule.id,
                f.rule.name,
                l.object_name(),
                f.message
            ),
            None => format!(
                "{} {}: {}: {}",
                f.rule.id,
                f.rule.name,
                l.object_name(),
                f.message
            ),
        };
        let severity = match f.severity {
            Severity::Error => "major",
            Severity::Warning => "minor",
            Severity::Info => "info",
        };
        let v = json!({
            "description": description,
            "check_name": f.rule.id,
            "fingerprint": self.prints.of(l),
            "severity": severity,
            "location": {"path": ci_path(&l.file), "lines": {"begin": l.line.max(1)}},
        });
        self.item(&v);
    }

    /// The input errors as issues, then the end of the array.
    pub fn finish(
        mut self,
        _c: &Counts,
        errors: &[InputError],
        _summary: &Summary,
    ) -> std::io::Result<()> {
        for e in errors {
            let path = ci_path(&e.file);
            let v = json!({
                "description": format!("winlint could not read this input: {}", e.message),
                "check_name": "winlint/unreadable-input",
                "fingerprint": self.prints.next(&[&path, "winlint/unreadable-input"]),
                "severity": "major",
                "location": {"path": path, "lines": {"begin": e.line.max(1)}},
            });
            self.item(&v);
        }
        if let Some(e) = self.failed.take() {
            return Err(e);
        }
        self.out
            .write_all(if self.items == 0 { b"[]\n" } else { b"\n]\n" })?;
        self.out.flush()
    }
}
