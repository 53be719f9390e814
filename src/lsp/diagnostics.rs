//! The findings as LSP diagnostics: the range of the node the finding points at (its key for a
//! mapping entry), the severity, the rule ID as the code with its documentation page, the
//! message. Input errors (invalid YAML) are diagnostics too, at their place.

use std::str::FromStr;

use lsp_types::{
    CodeDescription, Diagnostic, DiagnosticSeverity, NumberOrString, Position, Range, Uri,
};

use super::Linted;
use super::position::LineIndex;
use crate::model::Severity;
use crate::report::{InputError, Located};
use crate::source::Document;

/// `source` of every diagnostic.
pub const SOURCE: &str = "winlint";

/// The diagnostics of a lint of `text`, one per finding in order, then one per input error.
pub fn diagnostics(text: &str, linted: &Linted, docs: Option<&[Document]>) -> Vec<Diagnostic> {
    let ix = LineIndex::new(text);
    let mut out: Vec<Diagnostic> = (linted.findings.iter())
        .map(|l| finding(&ix, l, docs))
        .collect();
    for e in &linted.errors {
        let start = ix.line_column(e.line.max(1), e.column.max(1));
        let end = ix.line_end(ix.position(start).line as usize);
        out.push(Diagnostic {
            range: ix.range(start, end),
            severity: Some(DiagnosticSeverity::ERROR),
            source: Some(SOURCE.to_string()),
            message: e.message.clone(),
            ..Diagnostic::default()
        });
    }
    out
}

/// The byte range a finding is shown on: the key of the entry its pointer names (or of the
/// nearest entry that is written: a missing `nodeSelector` is shown on `spec`), else the first
/// line of the node; the finding's line and column when the text has no source map.
pub fn span(ix: &LineIndex, l: &Located, docs: Option<&[Document]>) -> (usize, usize) {
    let at = ix.line_column(l.line.max(1), l.column.max(1));
    let line_end = |o: usize| ix.line_end(ix.position(o).line as usize);
    let doc = docs.and_then(|d| {
        d.iter()
            .find(|d| d.text_range.0 <= at && at < d.text_range.1)
            .or(d.last())
    });
    match doc.and_then(|d| d.map.nearest(&l.pointer)) {
        Some((_, n)) => match n.key {
            Some((s, e)) => (s, e),
            None => (n.start, n.end.min(line_end(n.start)).max(n.start)),
        },
        None => (at, line_end(at)),
    }
}

fn finding(ix: &LineIndex, l: &Located, docs: Option<&[Document]>) -> Diagnostic {
    let (start, end) = span(ix, l, docs);
    Diagnostic {
        range: ix.range(start, end),
        ..about(l, format!("{} ({})", l.object, l.finding.rule.name))
    }
}

/// The first line of a file: where what has no line of its own is shown.
fn first_line() -> Range {
    Range::new(Position::new(0, 0), Position::new(1, 0))
}

/// A finding in a chart's or kustomization's rendered output, on the template its object comes
/// from (`Located::file`). It has no line there (the rendered lines are not the template's, see
/// `crate::render`): it is shown on the first line, with its object, its JSON pointer and the
/// render, as `winlint DIR` reports it.
pub fn rendered(l: &Located) -> Diagnostic {
    let how = l.rendered.as_deref().unwrap_or("rendered");
    Diagnostic {
        range: first_line(),
        ..about(
            l,
            format!(
                "{} ({how}, at {}) ({})",
                l.object, l.pointer, l.finding.rule.name
            ),
        )
    }
}

/// What makes a rendered finding the same problem as one of the buffer's own lint of its file
/// (a kustomization's resource is linted both ways): the rule, the object's kind and the JSON
/// pointer within the object. Not the name nor the namespace: the render applies the
/// kustomization's `namePrefix`/`nameSuffix`/`namespace`, so `Deployment/web` in the buffer is
/// `Deployment/prod-web-win` in the render. Not the line: a rendered finding has none. The keys
/// are counted as a multiset ([`Seen`]): two Deployments of the file with the same problem are
/// two buffer findings, and drop two rendered copies, no more; a third one the render adds (a
/// patch made another object wrong) stays. The price: two objects of one kind in a file, one
/// wrong in the buffer and the other made wrong the same way by a patch while the patch fixes
/// the first, show once instead of twice; rare, and the problem is still shown.
pub type Key = (&'static str, String, String);

/// The [`Key`] of a finding. A List item's pointer (`/items/0/spec/…`) is taken relative to the
/// item, as the render (which never writes Lists) points into it.
pub fn key(l: &Located) -> Key {
    let kind = l.object.split_once('/').map_or(&*l.object, |(k, _)| k);
    let pointer = (l.pointer.strip_prefix("/items/"))
        .and_then(|rest| {
            let digits = rest
                .find(|c: char| !c.is_ascii_digit())
                .unwrap_or(rest.len());
            (digits > 0).then(|| &rest[digits..])
        })
        .unwrap_or(&l.pointer);
    (l.finding.rule.id, kind.to_string(), pointer.to_string())
}

/// The keys of a buffer's findings, counted.
#[derive(Default)]
pub struct Seen(std::collections::HashMap<Key, usize>);

impl Seen {
    pub fn of(findings: &[Located]) -> Seen {
        let mut s = Seen::default();
        for l in findings {
            *s.0.entry(key(l)).or_default() += 1;
        }
        s
    }

    /// Whether a rendered finding with `k` is one the buffer shows already (it is then counted
    /// off).
    pub fn take(&mut self, k: &Key) -> bool {
        match self.0.get_mut(k) {
            Some(n) if *n > 0 => {
                *n -= 1;
                true
            }
            _ => false,
        }
    }
}

/// Why a chart or kustomization could not be rendered (helm's or kustomize's message, a time
/// limit, a missing tool): one error on the first line of the file whose save asked for it.
pub fn render_failed(errors: &[InputError]) -> Diagnostic {
    let message = (errors.iter())
        .map(|e| format!("{}: {}", e.file, e.message))
        .collect::<Vec<_>>()
        .join("\n");
    Diagnostic {
        range: first_line(),
        severity: Some(DiagnosticSeverity::ERROR),
        source: Some(SOURCE.to_string()),
        message,
        ..Diagnostic::default()
    }
}

/// A finding's diagnostic but its range: `what` names the object.
fn about(l: &Located, what: String) -> Diagnostic {
    let rule = l.finding.rule;
    Diagnostic {
        severity: Some(match l.finding.severity {
            Severity::Error => DiagnosticSeverity::ERROR,
            Severity::Warning => DiagnosticSeverity::WARNING,
            Severity::Info => DiagnosticSeverity::INFORMATION,
        }),
        code: Some(NumberOrString::String(rule.id.to_string())),
        code_description: Uri::from_str(&rule.docs_url())
            .ok()
            .map(|href| CodeDescription { href }),
        source: Some(SOURCE.to_string()),
        message: format!("{what}: {}", l.finding.message),
        ..Diagnostic::default()
    }
}

#[cfg(test)]
mod tests {
    use super::{Seen, key};
    use crate::model::Finding;
    use crate::report::{FixState, Located};
    use crate::rules;

    fn located(rule: &str, object: &str, pointer: &str) -> Located {
        Located {
            file: "k/deployment.yaml".into(),
            line: 0,
            column: 0,
            pointer: pointer.into(),
            object: object.into(),
            namespace: None,
            finding: Finding::new(rules::find(rule).unwrap().meta, pointer, "x"),
            fix: FixState::None,
            not_fixed: None,
            rendered: None,
            cluster_namespace: None,
        }
    }

    /// The render's `Deployment/prod-web-win` is the buffer's `Deployment/web` (a List item
    /// there), counted: two in the buffer drop two rendered copies, not a third.
    #[test]
    fn same_problem_by_rule_kind_and_pointer_counted() {
        let buffer = [
            located("WIN001", "Deployment/web", "/items/0/spec/template/spec"),
            located("WIN001", "Deployment/api", "/items/1/spec/template/spec"),
        ];
        let mut seen = Seen::of(&buffer);
        let r = located("WIN001", "Deployment/prod-web-win", "/spec/template/spec");
        assert!(seen.take(&key(&r)) && seen.take(&key(&r)));
        assert!(!seen.take(&key(&r)), "a third copy is the render's own");
        let other_kind = located("WIN001", "StatefulSet/web", "/spec/template/spec");
        let other_rule = located("WIN003", "Deployment/web", "/spec/template/spec");
        let mut seen = Seen::of(&buffer);
        assert!(!seen.take(&key(&other_kind)) && !seen.take(&key(&other_rule)));
    }
}
