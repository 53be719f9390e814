//! The engine's fixes as code actions: one quick fix per fixable finding the range touches (its
//! fix's operations planned into surgical text edits by [`crate::textedit`], as `--fix` makes
//! them), and `source.fixAll.winlint`: every allowed fix at once, through the same fixer as
//! `winlint --fix`.

use std::collections::HashMap;

use lsp_types::{CodeAction, CodeActionKind, CodeActionOrCommand, Range, TextEdit, WorkspaceEdit};

use super::Linter;
use super::diagnostics::span;
use super::position::LineIndex;
use super::store::Doc;
use crate::report::FixState;

/// The kind of the action that applies every fix.
pub const FIX_ALL: &str = "source.fixAll.winlint";

/// The code actions for `range` of a linted document.
pub fn actions(doc: &Doc, range: Range, linter: &dyn Linter) -> Vec<CodeActionOrCommand> {
    let Some(lint) = &doc.lint else {
        return Vec::new();
    };
    let ix = LineIndex::new(&doc.text);
    let mut out = Vec::new();
    let docs = lint.docs.as_deref();
    let mut fixable = 0;
    for (l, diag) in lint.linted.findings.iter().zip(&lint.diagnostics) {
        let (FixState::Fixable, Some(fix), Some(docs)) = (l.fix, &l.finding.fix, docs) else {
            continue;
        };
        fixable += 1;
        if !overlaps(diag.range, range) {
            continue;
        }
        let at = span(&ix, l, Some(docs)).0;
        let Some(d) = (docs.iter())
            .find(|d| d.text_range.0 <= at && at < d.text_range.1)
            .or(docs.last())
        else {
            continue;
        };
        // A fix the text editor cannot make here (the finding stays; `--fix` says why).
        let Ok(edits) = crate::textedit::plan(&doc.text, d, &fix.ops) else {
            continue;
        };
        let edits = (edits.iter())
            .map(|e| TextEdit::new(ix.range(e.start, e.end), e.text.clone()))
            .collect();
        out.push(CodeActionOrCommand::CodeAction(CodeAction {
            title: format!("{}: {}", l.finding.rule.id, fix.description),
            kind: Some(CodeActionKind::QUICKFIX),
            diagnostics: Some(vec![diag.clone()]),
            edit: Some(edit(doc, edits)),
            is_preferred: Some(true),
            ..CodeAction::default()
        }));
    }
    if fixable > 0
        && let Some(fixed) = linter.fix_all(&doc.text, &lint.linted)
    {
        let (start, end, text) = changed(&doc.text, &fixed);
        out.push(CodeActionOrCommand::CodeAction(CodeAction {
            title: "winlint: fix all auto-fixable findings".to_string(),
            kind: Some(CodeActionKind::from(FIX_ALL.to_string())),
            edit: Some(edit(doc, vec![TextEdit::new(ix.range(start, end), text)])),
            ..CodeAction::default()
        }));
    }
    out
}

fn edit(doc: &Doc, edits: Vec<TextEdit>) -> WorkspaceEdit {
    WorkspaceEdit {
        changes: Some(HashMap::from([(doc.uri.clone(), edits)])),
        ..WorkspaceEdit::default()
    }
}

/// Ranges overlap, or touch (a cursor at either end of a diagnostic asks for its fixes).
fn overlaps(a: Range, b: Range) -> bool {
    a.start <= b.end && b.start <= a.end
}

/// The one replacement that turns `old` into `new`: the bytes between their common prefix and
/// suffix (on character boundaries).
fn changed(old: &str, new: &str) -> (usize, usize, String) {
    let mut p = (old.bytes().zip(new.bytes()))
        .take_while(|(a, b)| a == b)
        .count();
    while !old.is_char_boundary(p) || !new.is_char_boundary(p) {
        p -= 1;
    }
    let max = old.len().min(new.len()) - p;
    let mut s = (old.bytes().rev().zip(new.bytes().rev()))
        .take(max)
        .take_while(|(a, b)| a == b)
        .count();
    while !old.is_char_boundary(old.len() - s) || !new.is_char_boundary(new.len() - s) {
        s -= 1;
    }
    (p, old.len() - s, new[p..new.len() - s].to_string())
}

#[cfg(test)]
mod tests {
    use super::changed;

    #[test]
    fn one_replacement() {
        let (old, new) = ("a: 1\nb: 2\n", "a: 1\nx: y\nb: 2\n");
        let (s, e, t) = changed(old, new);
        assert_eq!(format!("{}{t}{}", &old[..s], &old[e..]), new);
        let (s, e, t) = changed("éa", "éb");
        assert_eq!((s, e, t.as_str()), (2, 3, "b"));
        assert_eq!(changed("x", "x"), (1, 1, String::new()));
    }
}
