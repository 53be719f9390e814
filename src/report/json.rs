//! `-o json`: the JSON contract, streamed.

use std::io::Write;

use serde::Serialize;
use serde_json::json;

use super::{Counts, FixState, InputError, Located, Summary};
use crate::model::{FixSafety, Severity};

/// One finding of the JSON report, in the contract's key order.
#[derive(Serialize)]
struct LocatedJson<'a> {
    rule: &'static str,
    name: &'static str,
    severity: Severity,
    /// The three are absent for an object in the cluster, placed by `namespace` and `object`.
    #[serde(skip_serializing_if = "Option::is_none")]
    file: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    line: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    column: Option<usize>,
    /// The object's namespace; absent when the manifest gives none.
    #[serde(skip_serializing_if = "Option::is_none")]
    namespace: Option<&'a str>,
    pointer: &'a str,
    object: &'a str,
    /// How the object was made (`helm template`, `kubectl kustomize`); absent for files.
    #[serde(skip_serializing_if = "Option::is_none")]
    rendered: Option<&'a str>,
    message: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    fix: Option<FixJson<'a>>,
}

#[derive(Serialize)]
struct FixJson<'a> {
    safety: FixSafety,
    description: &'a str,
    applied_by_fix: bool,
    /// `--fix` ran and could not apply it.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    not_fixed: bool,
    /// Why, when `--fix` said.
    #[serde(skip_serializing_if = "Option::is_none")]
    not_fixed_reason: Option<&'a str>,
    patch: &'a [json_patch::PatchOperation],
}

impl<'a> LocatedJson<'a> {
    fn new(l: &'a Located) -> Self {
        let in_file = l.cluster_namespace.is_none();
        LocatedJson {
            rule: l.finding.rule.id,
            name: l.finding.rule.name,
            severity: l.finding.severity,
            file: in_file.then_some(l.file.as_str()),
            line: in_file.then_some(l.line),
            column: in_file.then_some(l.column),
            namespace: l.namespace.as_deref(),
            pointer: &l.pointer,
            object: &l.object,
            rendered: l.rendered.as_deref(),
            message: &l.finding.message,
            fix: l.finding.fix.as_ref().map(|fix| FixJson {
                safety: fix.safety,
                description: &fix.description,
                applied_by_fix: l.fix == FixState::Fixable,
                not_fixed: l.fix == FixState::NotFixed,
                not_fixed_reason: l
                    .not_fixed
                    .as_deref()
                    .filter(|_| l.fix == FixState::NotFixed),
                patch: &fix.ops,
            }),
        }
    }
}

/// `serde_json`'s `PrettyFormatter` (two-space indent, the same bytes) starting `level` levels
/// down, so that an item is written straight into its place in the report.
struct Pretty {
    level: usize,
    has_value: bool,
}

impl Pretty {
    fn at(level: usize) -> Self {
        Pretty {
            level,
            has_value: false,
        }
    }

    fn newline<W: ?Sized + Write>(&self, w: &mut W, first: bool) -> std::io::Result<()> {
        const SPACES: &[u8] = &[b' '; 64];
        w.write_all(if first { b"\n" } else { b",\n" })?;
        let mut n = 2 * self.level;
        while n > 0 {
            let k = n.min(SPACES.len());
            w.write_all(&SPACES[..k])?;
            n -= k;
        }
        Ok(())
    }

    fn begin<W: ?Sized + Write>(&mut self, w: &mut W, open: &[u8]) -> std::io::Result<()> {
        self.level += 1;
        self.has_value = false;
        w.write_all(open)
    }

    fn end<W: ?Sized + Write>(&mut self, w: &mut W, close: &[u8]) -> std::io::Result<()> {
        self.level -= 1;
        if self.has_value {
            // The closing bracket on a line of its own: a newline without a comma.
            self.newline(w, true)?;
        }
        w.write_all(close)
    }
}

impl serde_json::ser::Formatter for Pretty {
    fn begin_array<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.begin(w, b"[")
    }
    fn end_array<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.end(w, b"]")
    }
    fn begin_array_value<W: ?Sized + Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.newline(w, first)
    }
    fn end_array_value<W: ?Sized + Write>(&mut self, _w: &mut W) -> std::io::Result<()> {
        self.has_value = true;
        Ok(())
    }
    fn begin_object<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.begin(w, b"{")
    }
    fn end_object<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.end(w, b"}")
    }
    fn begin_object_key<W: ?Sized + Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.newline(w, first)
    }
    fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        w.write_all(b": ")
    }
    fn end_object_value<W: ?Sized + Write>(&mut self, _w: &mut W) -> std::io::Result<()> {
        self.has_value = true;
        Ok(())
    }
}

/// The JSON contract, `{"findings": […], "errors": […], "summary": {…}}` pretty-printed, written
/// as the findings arrive (in report order): memory does not grow with their number. The bytes
/// are those of `serde_json::to_string_pretty` of the whole report and a newline.
pub struct JsonReport<W: Write> {
    out: W,
    items: usize,
    /// The first write error; nothing more is written after it.
    failed: Option<std::io::Error>,
}

impl<W: Write> JsonReport<W> {
    pub fn new(out: W) -> Self {
        JsonReport {
            out,
            items: 0,
            failed: None,
        }
    }

    pub fn push(&mut self, l: &Located) {
        let first = self.items == 0;
        self.items += 1;
        if self.failed.is_none()
            && let Err(e) = self.write_finding(l, first)
        {
            self.failed = Some(e);
        }
    }

    fn write_finding(&mut self, l: &Located, first: bool) -> std::io::Result<()> {
        self.out.write_all(if first {
            b"{\n  \"findings\": [\n    "
        } else {
            b",\n    "
        })?;
        // An item of the array sits two levels down.
        let mut ser = serde_json::Serializer::with_formatter(&mut self.out, Pretty::at(2));
        LocatedJson::new(l).serialize(&mut ser)?;
        Ok(())
    }

    /// Close the findings array and write the errors and the summary; `c` are the counts of the
    /// findings pushed.
    pub fn finish(
        mut self,
        c: &Counts,
        errors: &[InputError],
        summary: &Summary,
    ) -> std::io::Result<()> {
        if let Some(e) = self.failed.take() {
            return Err(e);
        }
        self.out.write_all(if self.items == 0 {
            b"{\n  \"findings\": [],\n"
        } else {
            b"\n  ],\n"
        })?;
        let mut rest = json!({
            "errors": errors.iter().map(|e| json!({"file": e.file, "line": e.line, "column": e.column, "message": e.message})).collect::<Vec<_>>(),
            "summary": {
                "errors": c.errors,
                "warnings": c.warnings,
                "info": c.info,
                "fixable": c.fixable,
                "not_fixed": c.not_fixed,
                "files": summary.files,
                "objects": summary.objects,
                "pods": summary.pods,
                "suppressed": summary.suppressed,
                "ignore_reasons": summary.ignore_reasons,
                "input_errors": errors.len(),
            }
        });
        // Only when set: the reports of files stay as they were.
        if let Some(a) = &summary.audit {
            rest["summary"]["namespaces"] = json!(a.namespaces);
            rest["summary"]["cluster_pods"] = json!(a.cluster_pods);
        }
        if let Some(cl) = &summary.cluster {
            rest["summary"]["cluster"] = json!(cl);
        }
        if let Some(c) = &summary.config {
            rest["summary"]["config"] = json!(c);
        }
        // `--severity`: the findings listed are those from `shown_from` up; the counts above are
        // of all.
        if let Some(min) = c.shown_from {
            rest["summary"]["shown_from"] = json!(min);
            rest["summary"]["not_shown"] = json!(c.hidden);
        }
        if let Some(s) = &c.statistics {
            rest["statistics"] = s.to_json(summary.audit.is_some());
        }
        let rest = serde_json::to_string_pretty(&rest).unwrap_or_default();
        // `rest` is `{\n  "errors": …}`: its entries follow the findings' at the same level.
        self.out
            .write_all(rest.strip_prefix("{\n").unwrap_or(&rest).as_bytes())?;
        self.out.write_all(b"\n")?;
        self.out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn pretty_at_a_level_is_serde_json_pretty_indented() {
        let v = json!({"a": [], "b": {}, "c": [1, {"d": [[]], "e": "x\ny"}], "f": {"g": null}});
        let mut got = Vec::new();
        let mut ser = serde_json::Serializer::with_formatter(&mut got, Pretty::at(2));
        v.serialize(&mut ser).unwrap();
        let want = serde_json::to_string_pretty(&v)
            .unwrap()
            .replace('\n', "\n    ");
        assert_eq!(String::from_utf8(got).unwrap(), want);
    }
}
