//! Hover over a finding: its rule's documentation, the page `winlint explain WINxxx` prints.

use lsp_types::{Hover, HoverContents, MarkupContent, MarkupKind, Position};

use super::store::Doc;

pub fn hover(doc: &Doc, at: Position) -> Option<Hover> {
    let lint = doc.lint.as_ref()?;
    let mut pages: Vec<String> = Vec::new();
    let mut range = None;
    for (l, d) in lint.linted.findings.iter().zip(&lint.diagnostics) {
        if d.range.start <= at && at <= d.range.end {
            let page = l.finding.rule.page();
            if !pages.contains(&page) {
                pages.push(page);
            }
            range.get_or_insert(d.range);
        }
    }
    (!pages.is_empty()).then(|| Hover {
        contents: HoverContents::Markup(MarkupContent {
            kind: MarkupKind::Markdown,
            value: pages.join("\n\n---\n\n"),
        }),
        range,
    })
}
