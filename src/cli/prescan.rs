//! Pass 1 of `winlint lint` and `--registry`'s image list, cheaply: a YAML stream split into its
//! documents as text, and only the documents that can hold what is looked for (a context
//! object, an image) parsed, without source maps. The rest is left to pass 2.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::model::workload::objects;
use crate::source::{self};

/// Kinds whose objects are context for pods (see [`Context::add`]).
pub(super) const CONTEXT_KINDS: &[&str] = &[
    "RuntimeClass",
    "ConfigMap",
    "Secret",
    "Namespace",
    "HorizontalPodAutoscaler",
    "StorageClass",
    "PersistentVolumeClaim",
];

/// Cheap pre-check: can this text hold a context object at all?
pub(super) fn may_hold_context(text: &str) -> bool {
    CONTEXT_KINDS.iter().any(|k| text.contains(k))
}

/// The documents of a YAML stream as text: split before every line that starts with the
/// document marker `---` followed by a space, a tab or the line's end. YAML forbids such a line
/// inside any scalar, plain, quoted or block (`c-forbidden`), so in a stream the loader accepts
/// each piece is one document (the first may be empty or hold only comments).
pub(super) fn document_texts(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        // The next marker line after the first line of `rest`.
        let mut at = 0;
        let end = loop {
            match rest[at..].find('\n') {
                None => break rest.len(),
                Some(nl) => {
                    at += nl + 1;
                    let line = &rest.as_bytes()[at..];
                    if line.starts_with(b"---")
                        && matches!(line.get(3), None | Some(b' ' | b'\t' | b'\r' | b'\n'))
                    {
                        break at;
                    }
                }
            }
        };
        let (doc, tail) = rest.split_at(end);
        rest = tail;
        Some(doc)
    })
}

/// Pass 1's view of one input: the objects of the documents that can hold context. Only those
/// documents are parsed (without source maps); the others (most of a typical input) are left
/// to pass 2. When one of them does not load on its own (say, a `%TAG` directive that belongs to
/// the document before it), the whole stream is loaded, as one file.
pub(super) fn context_values(text: &str) -> Vec<Value> {
    let mut values = Vec::new();
    for doc in document_texts(text).filter(|d| may_hold_context(d)) {
        match source::load_bytes_values(doc.as_bytes()) {
            Ok(v) => values.extend(v),
            Err(_) => return source::load_bytes_values(text.as_bytes()).unwrap_or_default(),
        }
    }
    values
}

/// The image references of the pods in `text` (for `--registry`): the documents that name an
/// image, parsed without source maps.
pub(super) fn image_references(text: &str, out: &mut BTreeSet<String>) {
    for doc in document_texts(text).filter(|d| d.contains("image")) {
        for v in source::load_bytes_values(doc.as_bytes()).unwrap_or_default() {
            for (_, o) in objects(&v) {
                crate::registry::source::image_references(o, out);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    use crate::cli::collect::is_manifest;

    #[test]
    fn document_texts_split_before_marker_lines_only() {
        let text =
            "a: 1\n---\nb: |\n  ---\n  x\n--- \nc: 3\n---\r\nd: '---'\n----\n---x\n  ---\n---";
        let docs: Vec<&str> = document_texts(text).collect();
        assert_eq!(
            docs,
            [
                "a: 1\n",
                "---\nb: |\n  ---\n  x\n",
                "--- \nc: 3\n",
                "---\r\nd: '---'\n----\n---x\n  ---\n",
                "---",
            ]
        );
        assert_eq!(docs.concat(), text);
        assert_eq!(document_texts("").count(), 0);
        assert_eq!(document_texts("---\n").collect::<Vec<_>>(), ["---\n"]);
    }

    /// Pass 1 finds the same context objects as loading the whole file, on every fixture of the
    /// project that loads (multi-document files, Lists, JSON, anchors, odd YAML).
    #[test]
    fn context_values_match_the_whole_file_on_every_fixture() {
        let is_context = |v: &&Value| {
            v.get("kind")
                .and_then(Value::as_str)
                .is_some_and(|k| CONTEXT_KINDS.contains(&k))
        };
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut checked = 0;
        for entry in walkdir::WalkDir::new(root.join("testdata")) {
            let entry = entry.unwrap();
            let p = entry.path();
            if !is_manifest(p) {
                continue;
            }
            let Ok(text) = std::fs::read_to_string(p) else {
                continue;
            };
            let Ok(whole) = source::load_bytes_values(text.as_bytes()) else {
                continue;
            };
            let expected: Vec<Value> = whole
                .iter()
                .flat_map(|v| objects(v).into_iter().map(|(_, o)| o))
                .filter(is_context)
                .cloned()
                .collect();
            let got: Vec<Value> = context_values(&text)
                .iter()
                .flat_map(|v| objects(v).into_iter().map(|(_, o)| o))
                .filter(is_context)
                .cloned()
                .collect();
            assert_eq!(got, expected, "{}", p.display());
            checked += usize::from(!expected.is_empty());
        }
        assert!(checked >= 3, "only {checked} fixtures hold context objects");
    }

    #[test]
    fn a_broken_pod_document_does_not_hide_its_files_context() {
        let text = "kind: Service\n---\nkind: RuntimeClass\nmetadata: {name: w}\nhandler: h\n\
                    ---\nkind: Pod\nspec: {containers: [\n";
        let v = context_values(text);
        assert_eq!(v.len(), 1, "{v:?}");
        assert_eq!(v[0]["kind"], "RuntimeClass");
        // A context document that does not load gives nothing, as the whole file would.
        assert!(context_values("kind: ConfigMap\ndata: {a: [\n").is_empty());
    }
}
