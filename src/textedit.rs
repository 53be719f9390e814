//! Apply RFC 6902 operations to YAML/JSON text surgically.
//!
//! `winlint --fix` must change only the nodes a fix concerns: comments, key order, quoting and
//! everything else stay byte for byte. [`plan`] turns the operations of a fix into text [`Edit`]s
//! using the document's [`SourceMap`](crate::source::SourceMap); [`apply`] splices them in.
//!
//! Inserted values follow the style around them: block YAML under block parents (indented like
//! the rest of the document, sequences indented or not under their key as the document does),
//! flow style inside `{}`/`[]` (a new entry on a line of its own where the collection has one
//! entry a line, trailing commas kept; a key renamed in place), JSON inside JSON documents, the
//! file's line ending. New scalars are quoted only when a plain scalar would read back as
//! something else under YAML 1.1; a string replacing a quoted scalar keeps its quotes; a
//! multi-line string in block context is a literal block scalar (`|`).
//!
//! Operations are planned one at a time, each against the text left by the previous one
//! (re-loaded), so indices and parents created by earlier operations resolve exactly as
//! `json_patch::patch` sees them; one already true of the text (made through an alias by an
//! earlier edit of the anchored node) is skipped. The final text is loaded again and must equal
//! `json_patch::patch(doc.value, ops)`: a fix that would not round-trip is an [`EditError`],
//! never a wrong file. The error says why for the user: an alias and the places sharing its
//! anchor, an anchored node its aliases repeat elsewhere, a merged key, a layout.
//!
//! This file plans a patch and applies edits; one operation's steps and their checks are
//! [`steps`], one step's place in the text and the layout of its value [`layout`].

mod layout;
mod steps;

use std::fmt;

use json_patch::PatchOperation;
use serde_json::Value;

use crate::source::Document;
use layout::{Ctx, plan_one, rename_in_flow};
use steps::{diff_edits, expand, normalize, reload, shared_anchor};

/// Replace bytes `start..end` of the text with `text`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edit {
    pub start: usize,
    pub end: usize,
    pub text: String,
}

/// Why a set of operations cannot be applied to the text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EditError {
    /// Index of the operation in `ops`, when one is to blame.
    pub op: Option<usize>,
    /// JSON pointer concerned.
    pub pointer: String,
    pub message: String,
}

impl fmt::Display for EditError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.pointer.is_empty() {
            write!(f, "cannot edit the text: {}", self.message)
        } else {
            write!(f, "cannot edit {}: {}", self.pointer, self.message)
        }
    }
}

impl std::error::Error for EditError {}

fn fail<T>(pointer: &str, message: impl Into<String>) -> Result<T, EditError> {
    Err(EditError {
        op: None,
        pointer: pointer.to_owned(),
        message: message.into(),
    })
}

/// Plan text edits for `ops` against document `doc` of `text`. Every op's parent must exist in the
/// document (the caller computed `ops` against `doc.value`). Edits are sorted and do not overlap;
/// they stay inside `doc.text_range`, so edits planned for several documents of one text can be
/// applied together.
pub fn plan(text: &str, doc: &Document, ops: &[PatchOperation]) -> Result<Vec<Edit>, EditError> {
    let (rs, re) = doc.text_range;
    let Some(slice) = text.get(rs..re) else {
        return fail("", "the document's range is not in the text");
    };
    let mut expected = doc.value.clone();
    json_patch::patch(&mut expected, ops).map_err(|e| EditError {
        op: Some(e.operation),
        pointer: e.path.as_str().to_owned(),
        message: format!("the patch does not apply to the document: {}", e.kind),
    })?;
    normalize(&mut expected);

    let mut cur = slice.to_owned();
    let cur_doc = reload(&cur, "")?;
    if cur_doc.value != doc.value {
        return fail("", "the document does not match its text");
    }
    // An edit that fails where it touches an anchored node its aliases repeat elsewhere fails
    // because of that (the edit would change them too, or drop the anchor they need).
    let mut steps = Vec::new();
    let edited = edit_steps(&mut cur, cur_doc, ops, &mut steps, &expected).and_then(|value| {
        match value == expected {
            true => Ok(()),
            false => fail("", "the edited text would not load to the patched value"),
        }
    });
    if let Err(e) = edited {
        return Err(shared_anchor(&doc.map, ops).unwrap_or(e));
    }
    let edits = match steps.len() {
        1 => steps.pop().unwrap_or_default(),
        // Many operations (a big pod's fixes): one edit over the changed bytes; a line diff of
        // the whole document costs its size times the number of changes.
        _ if ops.len() > DIFF_OPS => changed_span(slice, &cur),
        _ => diff_edits(slice, &cur),
    };
    Ok(edits
        .into_iter()
        .map(|e| Edit {
            start: e.start + rs,
            end: e.end + rs,
            text: e.text,
        })
        .collect())
}

/// Above this many operations, [`plan`] gives one edit over the changed span instead of a line
/// diff.
const DIFF_OPS: usize = 16;

/// The edit from `old` to `new`: the bytes between their common prefix and common suffix.
fn changed_span(old: &str, new: &str) -> Vec<Edit> {
    let (o, n) = (old.as_bytes(), new.as_bytes());
    let mut s = o.iter().zip(n).take_while(|(a, b)| a == b).count();
    while !old.is_char_boundary(s) || !new.is_char_boundary(s) {
        s -= 1;
    }
    let max_suffix = o.len().min(n.len()) - s;
    let mut e = o[s..]
        .iter()
        .rev()
        .zip(n[s..].iter().rev())
        .take(max_suffix)
        .take_while(|(a, b)| a == b)
        .count();
    while !old.is_char_boundary(o.len() - e) || !new.is_char_boundary(n.len() - e) {
        e -= 1;
    }
    vec![Edit {
        start: s,
        end: o.len() - e,
        text: new[s..n.len() - e].to_owned(),
    }]
}

/// Edit `cur` (a document's text, loaded as `cur_doc`) for `ops`; pushes each step's edits and
/// returns the value the edited text loads to. Independent operations are planned together, in
/// [`rounds`] (one reload per round, not per operation: a fix of every container of a big pod
/// is linear in its size); when that does not work out or does not load to `expected`, step by
/// step ([`edit_one_by_one`]).
fn edit_steps(
    cur: &mut String,
    cur_doc: Document,
    ops: &[PatchOperation],
    steps: &mut Vec<Vec<Edit>>,
    expected: &Value,
) -> Result<Value, EditError> {
    if let Some(rounds) = rounds(ops).filter(|r| r.len() < ops.len())
        && let Some((text, value, edits)) = edit_rounds(cur, &cur_doc, ops, &rounds)
        && value == *expected
    {
        *cur = text;
        steps.extend(edits);
        return Ok(value);
    }
    edit_one_by_one(cur, cur_doc, ops, steps)
}

/// The operations grouped in rounds (indices, in order) so that no two of a round touch the same
/// parent or lie one under the other: planned against the same text, their edits are those the
/// one-by-one planning makes. `None` when an operation is not a plain add, remove or replace, or
/// a remove and an add of the same parent follow each other (a key renamed in a flow mapping,
/// which the one-by-one planning edits in place).
fn rounds(ops: &[PatchOperation]) -> Option<Vec<Vec<usize>>> {
    use std::collections::HashMap;
    fn parent(p: &str) -> &str {
        p.rfind('/').map_or("", |i| &p[..i])
    }
    let mut at: HashMap<&str, usize> = HashMap::new();
    let mut under: HashMap<&str, usize> = HashMap::new();
    let mut by_parent: HashMap<&str, usize> = HashMap::new();
    let mut out: Vec<Vec<usize>> = Vec::new();
    for (i, op) in ops.iter().enumerate() {
        if !matches!(
            op,
            PatchOperation::Add(_) | PatchOperation::Remove(_) | PatchOperation::Replace(_)
        ) {
            return None;
        }
        let p = op.path().as_str();
        if let (PatchOperation::Remove(_), Some(PatchOperation::Add(next))) = (op, ops.get(i + 1))
            && parent(next.path.as_str()) == parent(p)
        {
            return None;
        }
        let after = |r: Option<&usize>| r.map_or(0, |r| r + 1);
        let mut round = after(by_parent.get(parent(p))).max(after(under.get(p)));
        let mut a = p;
        loop {
            round = round.max(after(at.get(a)));
            if a.is_empty() {
                break;
            }
            a = parent(a);
        }
        fn set<'p>(m: &mut HashMap<&'p str, usize>, k: &'p str, round: usize) {
            let e = m.entry(k).or_insert(round);
            *e = (*e).max(round);
        }
        set(&mut at, p, round);
        set(&mut by_parent, parent(p), round);
        let mut a = p;
        while !a.is_empty() {
            a = parent(a);
            set(&mut under, a, round);
        }
        if out.len() <= round {
            out.resize_with(round + 1, Vec::new);
        }
        out[round].push(i);
        crate::model::work::step();
    }
    Some(out)
}

/// Plan each round's operations against the same text and apply them together. `None` when an
/// operation cannot be planned so, or two edits of a round touch: the caller then plans one by
/// one (and says why an operation fails).
fn edit_rounds(
    text: &str,
    doc: &Document,
    ops: &[PatchOperation],
    rounds: &[Vec<usize>],
) -> Option<(String, Value, Vec<Vec<Edit>>)> {
    let mut cur = text.to_owned();
    let mut cur_doc: Option<Document> = None;
    let mut steps = Vec::new();
    for round in rounds {
        let d = cur_doc.as_ref().unwrap_or(doc);
        let cx = Ctx::new(&cur, d);
        let mut edits = Vec::with_capacity(round.len());
        for &i in round {
            let step = match expand(&ops[i], &d.value).ok()?.pop()? {
                step if step.holds(&d.value) => continue,
                step => step,
            };
            edits.push(cx.step(&step).ok()?);
        }
        edits.sort_by_key(|e| (e.start, e.end));
        if edits.windows(2).any(|w| w[0].end >= w[1].start) {
            return None;
        }
        cur = apply(&cur, &edits);
        cur_doc = Some(reload(&cur, "").ok()?);
        steps.push(edits);
    }
    let value = match cur_doc {
        Some(d) => d.value,
        None => doc.value.clone(),
    };
    Some((cur, value, steps))
}

/// Edit `cur` step by step for `ops`, each step planned against the text the previous one left
/// (loaded again); pushes each step's edits. Returns the value the edited text loads to.
fn edit_one_by_one(
    cur: &mut String,
    mut cur_doc: Document,
    ops: &[PatchOperation],
    steps: &mut Vec<Vec<Edit>>,
) -> Result<Value, EditError> {
    let mut i = 0;
    while i < ops.len() {
        let with_op = |mut e: EditError| {
            e.op = Some(i);
            e
        };
        // A key renamed in a flow mapping (a remove, then an add beside it) is edited in place.
        if let Some((edits, renamed)) = rename_in_flow(cur, &cur_doc, &ops[i..]) {
            *cur = apply(cur, &edits);
            cur_doc = renamed;
            steps.push(edits);
            i += 2;
            continue;
        }
        for step in expand(&ops[i], &cur_doc.value).map_err(with_op)? {
            // Already true of the text: an earlier edit of an anchored node made it through an
            // alias (both objects sharing the node get the same fix). The caller checks the
            // final value.
            if step.holds(&cur_doc.value) {
                continue;
            }
            let edits = plan_one(cur, &cur_doc, &step).map_err(with_op)?;
            *cur = apply(cur, &edits);
            cur_doc = reload(cur, step.path()).map_err(with_op)?;
            steps.push(edits);
        }
        i += 1;
    }
    Ok(cur_doc.value)
}

/// Apply non-overlapping edits (sorted by start; zero-width inserts at the same offset keep their
/// order). An edit overlapping an earlier one is clipped to what follows it; one that does not
/// fall on character boundaries is skipped.
pub fn apply(text: &str, edits: &[Edit]) -> String {
    let mut sorted: Vec<&Edit> = edits.iter().collect();
    sorted.sort_by_key(|e| e.start);
    let extra: usize = edits.iter().map(|e| e.text.len()).sum();
    let mut out = String::with_capacity(text.len() + extra);
    let mut cursor = 0;
    for e in sorted {
        let s = e.start.max(cursor).min(text.len());
        let en = e.end.max(s).min(text.len());
        if !text.is_char_boundary(s) || !text.is_char_boundary(en) {
            continue;
        }
        out.push_str(&text[cursor..s]);
        out.push_str(&e.text);
        cursor = en;
    }
    out.push_str(&text[cursor..]);
    out
}

#[cfg(test)]
mod tests {
    use super::layout::edit;
    use super::*;
    use crate::source::{self, NodeKind};
    use serde_json::json;

    fn ops(v: Value) -> Vec<PatchOperation> {
        serde_json::from_value(v).expect("valid JSON patch")
    }

    /// Plan `patch` against document `doc_index` of `text`, apply it, and check the round-trip
    /// property: the result loads to `json_patch::patch(value, ops)` (other documents unchanged),
    /// and the bytes outside the edits are unchanged. Returns the new text.
    fn check_doc(text: &str, doc_index: usize, patch: Value) -> String {
        let docs = source::load(text).unwrap_or_else(|e| panic!("{e}"));
        let doc = &docs[doc_index];
        let ops = ops(patch);
        let edits = plan(text, doc, &ops).unwrap_or_else(|e| panic!("{e}"));
        let out = apply(text, &edits);
        let mut want = doc.value.clone();
        json_patch::patch(&mut want, &ops).unwrap();
        normalize(&mut want);
        let got = source::load(&out).unwrap_or_else(|e| panic!("{e}\n---\n{out}"));
        assert_eq!(got.len(), docs.len(), "{out}");
        for (i, (g, d)) in got.iter().zip(&docs).enumerate() {
            if i == doc_index {
                assert_eq!(g.value, want, "\n--- result:\n{out}");
            } else {
                assert_eq!(g.value, d.value);
            }
        }
        // Outside the edits, bytes are unchanged.
        let mut sorted = edits.clone();
        sorted.sort_by_key(|e| e.start);
        let (mut ci, mut co) = (0, 0);
        for e in &sorted {
            assert!(e.start >= ci && e.end >= e.start);
            assert!(e.start >= doc.text_range.0 && e.end <= doc.text_range.1);
            assert_eq!(text[ci..e.start], out[co..co + e.start - ci]);
            co += e.start - ci + e.text.len();
            ci = e.end;
        }
        assert_eq!(text[ci..], out[co..]);
        out
    }

    fn check(text: &str, patch: Value) -> String {
        check_doc(text, 0, patch)
    }

    fn plan_err(text: &str, patch: Value) -> EditError {
        let docs = source::load(text).unwrap();
        plan(text, &docs[0], &ops(patch)).expect_err("expected an error")
    }

    const POD: &str = "\
apiVersion: v1
kind: Pod
metadata:
  name: web # the name
  labels: {app: web}
spec:
  containers:
  - name: a
    image: img:1
    env:
    - name: X
      value: \"1\" # keep me
    - name: Y
      value: y
  # trailing comment
";

    #[test]
    fn add_key_to_block_map_creates_nested_block_map() {
        let out = check(
            POD,
            json!([{"op": "add", "path": "/spec/nodeSelector", "value": {"kubernetes.io/os": "windows"}}]),
        );
        assert!(out.contains("      value: y\n  nodeSelector:\n    kubernetes.io/os: windows\n  # trailing comment\n"), "{out}");
    }

    #[test]
    fn add_key_in_a_compact_sequence_item() {
        let out = check(
            POD,
            json!([{"op": "add", "path": "/spec/containers/0/securityContext",
                    "value": {"windowsOptions": {"runAsUserName": "ContainerUser"}}}]),
        );
        assert!(out.contains("      value: y\n    securityContext:\n      windowsOptions:\n        runAsUserName: ContainerUser\n"), "{out}");
        let out = check(
            POD,
            json!([{"op": "add", "path": "/spec/containers/0/env/0/x", "value": true}]),
        );
        assert!(
            out.contains("      value: \"1\" # keep me\n      x: true\n"),
            "{out}"
        );
    }

    #[test]
    fn add_key_to_flow_map_and_json() {
        let out = check(
            POD,
            json!([{"op": "add", "path": "/metadata/labels/os", "value": "windows"}]),
        );
        assert!(out.contains("labels: {app: web, os: windows}\n"), "{out}");
        let out = check(
            POD,
            json!([{"op": "add", "path": "/metadata/labels/v", "value": "1.0"}]),
        );
        assert!(out.contains("labels: {app: web, v: \"1.0\"}\n"), "{out}");
        let text = "{\"kind\": \"Pod\", \"spec\": {\"containers\": []}}";
        let out = check(
            text,
            json!([{"op": "add", "path": "/spec/nodeSelector", "value": {"kubernetes.io/os": "windows"}}]),
        );
        assert_eq!(
            out,
            "{\"kind\": \"Pod\", \"spec\": {\"containers\": [], \"nodeSelector\": {\"kubernetes.io/os\": \"windows\"}}}"
        );
        let out = check(
            text,
            json!([{"op": "add", "path": "/spec/containers/-", "value": {"name": "a"}}]),
        );
        assert_eq!(
            out,
            "{\"kind\": \"Pod\", \"spec\": {\"containers\": [{\"name\": \"a\"}]}}"
        );
        // Pretty-printed JSON keeps one entry per line.
        let text = "{\n  \"spec\": {\n    \"a\": 1\n  }\n}\n";
        let out = check(
            text,
            json!([{"op": "add", "path": "/spec/b", "value": [true]}]),
        );
        assert_eq!(
            out,
            "{\n  \"spec\": {\n    \"a\": 1,\n    \"b\": [true]\n  }\n}\n"
        );
    }

    #[test]
    fn empty_flow_parents() {
        let out = check(
            "spec: {}\n",
            json!([{"op": "add", "path": "/spec/nodeSelector", "value": {"a": "b"}}]),
        );
        assert_eq!(out, "spec:\n  nodeSelector:\n    a: b\n");
        let out = check(
            "spec:\n  tolerations: []\n",
            json!([{"op": "add", "path": "/spec/tolerations/-", "value": {"key": "os", "value": "windows"}}]),
        );
        // No sequence under a key to imitate: indent it by the indent step.
        assert_eq!(
            out,
            "spec:\n  tolerations:\n    - key: os\n      value: windows\n"
        );
        let out = check(
            "a: {b: {}}\n",
            json!([{"op": "add", "path": "/a/b/c", "value": 1}]),
        );
        assert_eq!(out, "a: {b: {c: 1}}\n");
        let out = check(
            "a: [[]]\n",
            json!([{"op": "add", "path": "/a/0/0", "value": "x y"}]),
        );
        assert_eq!(out, "a: [[x y]]\n");
    }

    #[test]
    fn null_valued_key_is_replaced() {
        let text = "spec:\n  nodeSelector:\n  containers: []\n";
        let out = check(
            text,
            json!([{"op": "add", "path": "/spec/nodeSelector", "value": {"kubernetes.io/os": "windows"}}]),
        );
        assert_eq!(
            out,
            "spec:\n  nodeSelector:\n    kubernetes.io/os: windows\n  containers: []\n"
        );
        let out = check(
            "a: ~ # none\n",
            json!([{"op": "replace", "path": "/a", "value": [1, 2]}]),
        );
        assert_eq!(out, "a:\n  - 1\n  - 2 # none\n");
        let out = check(
            "a:\nb: 1\n",
            json!([{"op": "replace", "path": "/a", "value": "x"}]),
        );
        assert_eq!(out, "a: x\nb: 1\n");
    }

    #[test]
    fn append_and_insert_into_block_sequences() {
        let out = check(
            POD,
            json!([{"op": "add", "path": "/spec/containers/0/env/-", "value": {"name": "Z", "value": "true"}}]),
        );
        assert!(
            out.contains("      value: y\n    - name: Z\n      value: \"true\"\n  # trailing"),
            "{out}"
        );
        let out = check(
            POD,
            json!([{"op": "add", "path": "/spec/containers/0/env/1", "value": {"name": "W"}}]),
        );
        assert!(
            out.contains("# keep me\n    - name: W\n    - name: Y\n"),
            "{out}"
        );
        let out = check(
            POD,
            json!([{"op": "add", "path": "/spec/containers/0", "value": {"name": "first", "args": ["a", "b"]}}]),
        );
        assert!(
            out.contains(
                "  containers:\n  - name: first\n    args:\n    - a\n    - b\n  - name: a\n"
            ),
            "{out}"
        );
    }

    #[test]
    fn append_to_flow_sequence() {
        let out = check(
            "args: [a, b] # c\n",
            json!([{"op": "add", "path": "/args/-", "value": "--x=1"}]),
        );
        assert_eq!(out, "args: [a, b, --x=1] # c\n");
        let out = check(
            "args: [a, b]\n",
            json!([{"op": "add", "path": "/args/0", "value": "z"}]),
        );
        assert_eq!(out, "args: [z, a, b]\n");
        let out = check(
            "args: [\n  a,\n  b\n]\n",
            json!([{"op": "add", "path": "/args/-", "value": "c"}]),
        );
        assert_eq!(out, "args: [\n  a,\n  b,\n  c\n]\n");
    }

    #[test]
    fn remove_block_entries_with_their_comments() {
        let out = check(POD, json!([{"op": "remove", "path": "/metadata/name"}]));
        assert!(out.contains("metadata:\n  labels: {app: web}\n"), "{out}");
        let out = check(
            POD,
            json!([{"op": "remove", "path": "/spec/containers/0/env/0/value"}]),
        );
        assert!(out.contains("    - name: X\n    - name: Y\n"), "{out}");
        assert!(!out.contains("keep me"));
        let out = check(
            POD,
            json!([{"op": "remove", "path": "/spec/containers/0/env/0"}]),
        );
        assert!(
            out.contains("    env:\n    - name: Y\n      value: y\n"),
            "{out}"
        );
        // The first entry of a compact item: the `-` stays.
        let out = check(
            POD,
            json!([{"op": "remove", "path": "/spec/containers/0/env/1/name"}]),
        );
        assert!(out.contains("    - value: y\n"), "{out}");
        // The only entry: the collection becomes empty.
        let out = check(
            "a:\n  b: 1\nc: 2\n",
            json!([{"op": "remove", "path": "/a/b"}]),
        );
        assert_eq!(out, "a: {}\nc: 2\n");
        let out = check("a:\n- 1\n", json!([{"op": "remove", "path": "/a/0"}]));
        assert_eq!(out, "a: []\n");
        let out = check("- x: 1\n- y\n", json!([{"op": "remove", "path": "/0/x"}]));
        assert_eq!(out, "- {}\n- y\n");
        // A block scalar goes with its lines.
        let out = check(
            "a: |\n  x\n  y\nb: 1\n",
            json!([{"op": "remove", "path": "/a"}]),
        );
        assert_eq!(out, "b: 1\n");
        let out = check("a: 1\nb: 2", json!([{"op": "remove", "path": "/b"}]));
        assert_eq!(out, "a: 1\n");
    }

    #[test]
    fn remove_flow_entries() {
        assert_eq!(
            check(
                "a: {p: 1, q: 2, r: 3}\n",
                json!([{"op": "remove", "path": "/a/q"}])
            ),
            "a: {p: 1, r: 3}\n"
        );
        assert_eq!(
            check(
                "a: {p: 1, q: 2}\n",
                json!([{"op": "remove", "path": "/a/q"}])
            ),
            "a: {p: 1}\n"
        );
        assert_eq!(
            check(
                "a: {p: 1,\n    q: 2}\n",
                json!([{"op": "remove", "path": "/a/q"}])
            ),
            "a: {p: 1}\n"
        );
        assert_eq!(
            check("a: {x: 1}\n", json!([{"op": "remove", "path": "/a/x"}])),
            "a: {}\n"
        );
        assert_eq!(
            check("a: [1, 2, 3]\n", json!([{"op": "remove", "path": "/a/0"}])),
            "a: [2, 3]\n"
        );
        assert_eq!(
            check("a: [1, 2, 3]\n", json!([{"op": "remove", "path": "/a/2"}])),
            "a: [1, 2]\n"
        );
        assert_eq!(
            check("[1,]\n", json!([{"op": "remove", "path": "/0"}])),
            "[]\n"
        );
        assert_eq!(
            check(
                "{\"a\": 1, \"b\": [1, 2]}",
                json!([{"op": "remove", "path": "/a"}])
            ),
            "{\"b\": [1, 2]}"
        );
    }

    #[test]
    fn replace_scalars_keeps_everything_else() {
        let out = check(
            POD,
            json!([{"op": "replace", "path": "/spec/containers/0/image", "value": "img:2"}]),
        );
        assert_eq!(out, POD.replace("image: img:1", "image: img:2"));
        let out = check(
            POD,
            json!([{"op": "replace", "path": "/spec/containers/0/env/0/value", "value": "2"}]),
        );
        assert_eq!(
            out,
            POD.replace("value: \"1\" # keep me", "value: \"2\" # keep me")
        );
        let out = check(
            POD,
            json!([{"op": "replace", "path": "/metadata/name", "value": 5}]),
        );
        assert_eq!(
            out,
            POD.replace("name: web # the name", "name: 5 # the name")
        );
        let out = check(
            "a: |\n  old\nb: 1\n",
            json!([{"op": "replace", "path": "/a", "value": "new"}]),
        );
        assert_eq!(out, "a: new\nb: 1\n");
        let out = check(
            "a:\n  b: 1\n  c: 2\nd: 3\n",
            json!([{"op": "replace", "path": "/a", "value": false}]),
        );
        assert_eq!(out, "a: false\nd: 3\n");
        let out = check(
            "a:\n  b: 1\nd: 3\n",
            json!([{"op": "replace", "path": "/a", "value": {"x": {"w": "z"}}}]),
        );
        assert_eq!(out, "a:\n  x:\n    w: z\nd: 3\n");
        let out = check(
            "- a\n- b\n",
            json!([{"op": "replace", "path": "/1", "value": {"k": "v", "l": ["w"]}}]),
        );
        assert_eq!(out, "- a\n- k: v\n  l:\n    - w\n");
        let out = check(
            "x: 1\n",
            json!([{"op": "replace", "path": "", "value": {"z": 2}}]),
        );
        assert_eq!(out, "z: 2\n");
    }

    #[test]
    fn quoting_only_when_needed() {
        let cases = [
            ("windows", "windows"),
            ("kubernetes.io/os", "kubernetes.io/os"),
            ("10.0.20348", "\"10.0.20348\""),
            ("true", "\"true\""),
            ("yes", "\"yes\""),
            ("On", "\"On\""),
            ("y", "\"y\""),
            ("null", "\"null\""),
            ("", "\"\""),
            ("0644", "\"0644\""),
            ("1e3", "\"1e3\""),
            ("1:20", "\"1:20\""),
            ("2024-01-01", "\"2024-01-01\""),
            ("a: b", "\"a: b\""),
            ("a #b", "\"a #b\""),
            ("#x", "\"#x\""),
            ("- x", "\"- x\""),
            ("-", "\"-\""),
            ("-Command", "-Command"),
            ("--v=2", "--v=2"),
            ("-1", "\"-1\""),
            ("-.inf", "\"-.inf\""),
            ("---", "---"),
            ("*x", "\"*x\""),
            ("x\ny", "|-\n  x\n  y"),
            ("x\ny\n", "|\n  x\n  y"),
            ("x\n\n", "\"x\\n\\n\""),
            (" x\ny", "\" x\\ny\""),
            ("x \ny", "\"x \\ny\""),
            ("x\r\ny", "\"x\\r\\ny\""),
            (" x", "\" x\""),
            ("1.0", "\"1.0\""),
            ("*", "\"*\""),
            (":", "\":\""),
            ("a:b", "a:b"),
            ("1Gi", "1Gi"),
            ("500m", "500m"),
            (
                "mcr.microsoft.com/windows/nanoserver:ltsc2022",
                "mcr.microsoft.com/windows/nanoserver:ltsc2022",
            ),
            ("C:\\Windows", "C:\\Windows"),
            ("ContainerAdministrator", "ContainerAdministrator"),
            ("über", "über"),
            ("\u{7f}", "\"\\u007f\""),
        ];
        for (s, want) in cases {
            let out = check("a: 1\n", json!([{"op": "add", "path": "/k", "value": s}]));
            assert_eq!(out, format!("a: 1\nk: {want}\n"), "{s:?}");
        }
        let out = check(
            "a: 1\n",
            json!([{"op": "add", "path": "/true", "value": 1}]),
        );
        assert_eq!(out, "a: 1\n\"true\": 1\n");
        let out = check(
            "a: {}\n",
            json!([{"op": "add", "path": "/a/b", "value": "x,y"}]),
        );
        assert_eq!(out, "a:\n  b: x,y\n");
        let out = check(
            "a: {c: 1}\n",
            json!([{"op": "add", "path": "/a/b", "value": "x,y"}]),
        );
        assert_eq!(out, "a: {c: 1, b: \"x,y\"}\n");
    }

    #[test]
    fn crlf_files_keep_crlf() {
        let text = POD.replace('\n', "\r\n");
        let out = check(
            &text,
            json!([{"op": "add", "path": "/spec/nodeSelector", "value": {"kubernetes.io/os": "windows"}}]),
        );
        assert!(
            out.contains("      value: y\r\n  nodeSelector:\r\n    kubernetes.io/os: windows\r\n"),
            "{out}"
        );
        assert!(!out.replace("\r\n", "").contains('\n'));
        let out = check(
            &text,
            json!([{"op": "remove", "path": "/spec/containers/0/env/0"}]),
        );
        assert!(!out.replace("\r\n", "").contains('\n'));
        let out = check(
            &text,
            json!([{"op": "add", "path": "/spec/containers/0/env/-", "value": {"name": "Z"}}]),
        );
        assert!(out.contains("      value: y\r\n    - name: Z\r\n"), "{out}");
    }

    #[test]
    fn four_space_and_indented_sequence_styles() {
        let text = "spec:\n    containers:\n        -   name: a\n            image: b\n";
        let out = check(
            text,
            json!([{"op": "add", "path": "/spec/containers/0/securityContext", "value": {"runAsNonRoot": true}}]),
        );
        assert_eq!(
            out,
            "spec:\n    containers:\n        -   name: a\n            image: b\n            securityContext:\n                runAsNonRoot: true\n"
        );
        let out = check(
            text,
            json!([{"op": "add", "path": "/spec/tolerations", "value": [{"key": "os"}]}]),
        );
        assert_eq!(
            out,
            "spec:\n    containers:\n        -   name: a\n            image: b\n    tolerations:\n        - key: os\n"
        );
        let out = check(
            text,
            json!([{"op": "add", "path": "/spec/containers/-", "value": {"name": "c"}}]),
        );
        assert_eq!(out, format!("{text}        - name: c\n"));
        // 2-space, sequences not indented under their key.
        let text = "spec:\n  containers:\n  - name: a\n";
        let out = check(
            text,
            json!([{"op": "add", "path": "/spec/volumes", "value": [{"name": "v", "emptyDir": {}}]}]),
        );
        assert_eq!(
            out,
            "spec:\n  containers:\n  - name: a\n  volumes:\n  - name: v\n    emptyDir: {}\n"
        );
        // 2-space, sequences indented.
        let text = "spec:\n  containers:\n    - name: a\n";
        let out = check(
            text,
            json!([{"op": "add", "path": "/spec/volumes", "value": [{"name": "v"}]}]),
        );
        assert_eq!(
            out,
            "spec:\n  containers:\n    - name: a\n  volumes:\n    - name: v\n"
        );
        let out = check(
            text,
            json!([{"op": "add", "path": "/spec/containers/0/ports", "value": [{"containerPort": 80}]}]),
        );
        assert_eq!(
            out,
            "spec:\n  containers:\n    - name: a\n      ports:\n        - containerPort: 80\n"
        );
    }

    #[test]
    fn several_ops_and_documents() {
        let text = "a: 1\n---\n# second\nkind: Pod\nspec:\n  containers:\n  - name: a\n  - name: b\n---\nc: 3\n";
        let out = check_doc(
            text,
            1,
            json!([
                {"op": "add", "path": "/spec/nodeSelector", "value": {}},
                {"op": "add", "path": "/spec/nodeSelector/kubernetes.io~1os", "value": "windows"},
                {"op": "remove", "path": "/spec/containers/0"},
                {"op": "replace", "path": "/spec/containers/0/name", "value": "bb"},
                {"op": "test", "path": "/kind", "value": "Pod"},
                {"op": "move", "from": "/kind", "path": "/kind2"},
                {"op": "copy", "from": "/spec/containers/0", "path": "/spec/containers/-"}
            ]),
        );
        assert!(out.starts_with("a: 1\n---\n# second\n"), "{out}");
        assert!(out.ends_with("---\nc: 3\n"), "{out}");
        // Edits planned for two documents apply together.
        let docs = source::load(text).unwrap();
        let mut edits = plan(
            text,
            &docs[0],
            &ops(json!([{"op": "replace", "path": "/a", "value": 2}])),
        )
        .unwrap();
        edits.extend(
            plan(
                text,
                &docs[2],
                &ops(json!([{"op": "add", "path": "/d", "value": 4}])),
            )
            .unwrap(),
        );
        let out = apply(text, &edits);
        assert!(out.starts_with("a: 2\n---\n# second\nkind: Pod\n"), "{out}");
        assert!(out.ends_with("---\nc: 3\nd: 4\n"), "{out}");
    }

    #[test]
    fn merged_keys_are_overridden_explicitly() {
        let text = "base: &b {policy: IfNotPresent, tty: true}\nc:\n  <<: *b\n  name: x\n";
        let out = check(
            text,
            json!([{"op": "replace", "path": "/c/policy", "value": "Always"}]),
        );
        assert_eq!(
            out,
            "base: &b {policy: IfNotPresent, tty: true}\nc:\n  <<: *b\n  name: x\n  policy: Always\n"
        );
    }

    #[test]
    fn unsupported_situations_are_errors() {
        // Inside an alias: the error names the alias, its anchor and the places sharing it.
        let text = "a: &x {k: 1}\nb: *x\nc: [*x]\nd:\n  <<: *x\n";
        let e = plan_err(text, json!([{"op": "replace", "path": "/b/k", "value": 2}]));
        assert_eq!(
            e.to_string(),
            "cannot edit /b: it is an alias of &x (/a), also used at /c/0, /d (merge key)"
        );
        // Editing an anchored node would change its aliases too.
        let e = plan_err(text, json!([{"op": "replace", "path": "/a/k", "value": 2}]));
        assert_eq!(
            e.to_string(),
            "cannot edit /a: it is anchored as &x and also used at /b, /c/0, /d (merge key): \
             the edit would change them too"
        );
        // Removing a merged key.
        let e = plan_err(text, json!([{"op": "remove", "path": "/d/k"}]));
        assert_eq!(
            e.to_string(),
            "cannot edit /d/k: the entry comes from the merge key `<<: *x` of /d, shared with /a"
        );
        // A patch that does not apply.
        let e = plan_err("a: 1\n", json!([{"op": "remove", "path": "/nope"}]));
        assert_eq!(e.op, Some(0));
        let e = plan_err("a: 1\n", json!([{"op": "add", "path": "/a/b", "value": 1}]));
        assert!(e.message.contains("does not apply"), "{e}");
        assert!(e.to_string().starts_with("cannot edit /a/b: "), "{e}");
        // A document that does not match its text.
        let docs = source::load("a: 1\n").unwrap();
        let e = plan("a: 2\n", &docs[0], &[]).unwrap_err();
        assert!(e.message.contains("does not match"), "{e}");
    }

    #[test]
    fn apply_handles_order_and_bad_edits() {
        let t = "abcdef";
        let edits = [
            edit(3, 3, "X"),
            edit(0, 1, "A"),
            edit(3, 3, "Y"),
            edit(5, 6, ""),
        ];
        assert_eq!(apply(t, &edits), "AbcXYde");
        assert_eq!(apply("äb", &[edit(1, 2, "x")]), "äb");
        assert_eq!(apply("ab", &[edit(0, 2, "x"), edit(1, 2, "y")]), "xy");
        assert_eq!(apply("ab", &[edit(5, 9, "x")]), "abx");
    }

    /// The Kubernetes documentation's flow style: multi-line flow mappings, `[{` … `}]`, every
    /// string double-quoted, trailing commas.
    const FLOW_POD: &str = "{
  apiVersion: \"v1\",
  kind: \"Pod\",
  spec: {
    containers: [{
      name: \"iis\",
      image: \"microsoft/iis\",
      ports: [{
        containerPort: 80,
      }],
    }],
    nodeSelector: {
      beta.kubernetes.io/os: \"windows\",
    },
  },
}
";

    #[test]
    fn flow_mappings_with_trailing_commas() {
        // A new key: its own line before the closing brace, the trailing comma kept.
        let out = check(
            FLOW_POD,
            json!([{"op": "add", "path": "/spec/os", "value": {"name": "windows"}}]),
        );
        assert_eq!(
            out,
            FLOW_POD.replace(
                "    },\n  },\n}",
                "    },\n    os: {name: windows},\n  },\n}"
            )
        );
        // A nested map in a flow map is written in flow style too.
        let out = check(
            FLOW_POD,
            json!([{"op": "add", "path": "/spec/containers/0/securityContext",
                    "value": {"windowsOptions": {"runAsUserName": "ContainerUser"}}}]),
        );
        assert!(
            out.contains("      }],\n      securityContext: {windowsOptions: {runAsUserName: ContainerUser}},\n    }],"),
            "{out}"
        );
        // Appended to a flow sequence written `[{ … }]`.
        let out = check(
            FLOW_POD,
            json!([{"op": "add", "path": "/spec/containers/0/ports/-", "value": {"containerPort": 443}}]),
        );
        assert!(
            out.contains("        containerPort: 80,\n      }, {containerPort: 443}],\n"),
            "{out}"
        );
        // A key renamed in place (WIN002): position, quoting of the value and layout kept.
        let rename = json!([
            {"op": "remove", "path": "/spec/nodeSelector/beta.kubernetes.io~1os"},
            {"op": "add", "path": "/spec/nodeSelector/kubernetes.io~1os", "value": "windows"},
            {"op": "add", "path": "/spec/os", "value": {"name": "windows"}}
        ]);
        let out = check(FLOW_POD, rename);
        assert_eq!(
            out,
            FLOW_POD
                .replace("beta.kubernetes.io/os", "kubernetes.io/os")
                .replace(
                    "    },\n  },\n}",
                    "    },\n    os: {name: windows},\n  },\n}"
                )
        );
        // The only entry removed: `{}`, no blank line left behind.
        let out = check(
            FLOW_POD,
            json!([{"op": "remove", "path": "/spec/nodeSelector/beta.kubernetes.io~1os"}]),
        );
        assert!(out.contains("    nodeSelector: {},\n  },\n}"), "{out}");
        // Entries removed: the first, the last (its trailing comma stays), a whole item.
        let out = check(
            FLOW_POD,
            json!([{"op": "remove", "path": "/spec/containers/0/name"}]),
        );
        assert!(
            out.contains("    containers: [{\n      image: \"microsoft/iis\",\n"),
            "{out}"
        );
        let out = check(
            FLOW_POD,
            json!([{"op": "remove", "path": "/spec/nodeSelector"}]),
        );
        assert!(out.contains("      }],\n    }],\n  },\n}"), "{out}");
        let out = check(
            FLOW_POD,
            json!([{"op": "remove", "path": "/spec/containers/0"}]),
        );
        assert!(out.contains("    containers: [],\n"), "{out}");
        // A replaced double-quoted string stays double-quoted; a number stays plain.
        let out = check(
            FLOW_POD,
            json!([{"op": "replace", "path": "/spec/containers/0/image", "value": "mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2022"}]),
        );
        assert!(
            out.contains("      image: \"mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2022\",\n"),
            "{out}"
        );
        let out = check(
            FLOW_POD,
            json!([{"op": "replace", "path": "/spec/containers/0/ports/0/containerPort", "value": 8080}]),
        );
        assert!(out.contains("        containerPort: 8080,\n"), "{out}");
        // CRLF.
        let crlf = FLOW_POD.replace('\n', "\r\n");
        let out = check(
            &crlf,
            json!([{"op": "add", "path": "/spec/os", "value": {"name": "windows"}}]),
        );
        assert!(
            out.contains("    },\r\n    os: {name: windows},\r\n  },\r\n}"),
            "{out}"
        );
    }

    #[test]
    fn flow_collections_on_one_line() {
        let text = "spec: {containers: [{name: a}], nodeSelector: {a: b,},}\n";
        let out = check(
            text,
            json!([{"op": "add", "path": "/spec/os", "value": {"name": "windows"}}]),
        );
        assert_eq!(
            out,
            "spec: {containers: [{name: a}], nodeSelector: {a: b,}, os: {name: windows},}\n"
        );
        let out = check(
            text,
            json!([{"op": "add", "path": "/spec/nodeSelector/kubernetes.io~1os", "value": "windows"}]),
        );
        assert_eq!(
            out,
            "spec: {containers: [{name: a}], nodeSelector: {a: b, kubernetes.io/os: windows,},}\n"
        );
        let out = check(
            text,
            json!([{"op": "remove", "path": "/spec/nodeSelector/a"}]),
        );
        assert_eq!(out, "spec: {containers: [{name: a}], nodeSelector: {},}\n");
        let out = check(
            "args: [a, b, ]\n",
            json!([{"op": "add", "path": "/args/-", "value": "c d"}]),
        );
        assert_eq!(out, "args: [a, b, c d, ]\n");
        let out = check(
            "args: [a, b, ]\n",
            json!([{"op": "add", "path": "/args/1", "value": "x,y"}]),
        );
        assert_eq!(out, "args: [a, \"x,y\", b, ]\n");
        let out = check(
            "args: [a, b, ]\n",
            json!([{"op": "remove", "path": "/args/1"}]),
        );
        assert_eq!(out, "args: [a, ]\n");
        let out = check(
            "args: ['a', ]\n",
            json!([{"op": "replace", "path": "/args/0", "value": "it's"}]),
        );
        assert_eq!(out, "args: ['it''s', ]\n");
    }

    #[test]
    fn block_mappings_holding_flow_values() {
        let text = "spec:\n  nodeSelector: {beta.kubernetes.io/os: windows} # pin\n  tolerations: [{key: a, operator: Exists},]\n  containers:\n  - name: a\n    args: [\"x\"]\n";
        let out = check(
            text,
            json!([
                {"op": "remove", "path": "/spec/nodeSelector/beta.kubernetes.io~1os"},
                {"op": "add", "path": "/spec/nodeSelector/kubernetes.io~1os", "value": "windows"}
            ]),
        );
        assert_eq!(
            out,
            text.replace(
                "{beta.kubernetes.io/os: windows}",
                "{kubernetes.io/os: windows}"
            )
        );
        let out = check(
            text,
            json!([{"op": "add", "path": "/spec/tolerations/-", "value": {"key": "os", "operator": "Equal", "value": "windows", "effect": "NoSchedule"}}]),
        );
        assert_eq!(
            out,
            text.replace(
                "Exists},]",
                "Exists}, {key: os, operator: Equal, value: windows, effect: NoSchedule},]"
            )
        );
        let out = check(
            text,
            json!([{"op": "replace", "path": "/spec/containers/0/args/0", "value": "y z"}]),
        );
        assert_eq!(out, text.replace("[\"x\"]", "[\"y z\"]"));
        // The block mapping itself gets block entries.
        let out = check(
            text,
            json!([{"op": "add", "path": "/spec/os", "value": {"name": "windows"}}]),
        );
        assert_eq!(out, format!("{text}  os:\n    name: windows\n"));
    }

    #[test]
    fn json_documents_keep_their_layout() {
        let text = "{\n  \"spec\": {\n    \"containers\": [\n      {\n        \"name\": \"iis\"\n      }\n    ],\n    \"nodeSelector\": {\n      \"beta.kubernetes.io/os\": \"windows\"\n    }\n  }\n}\n";
        let out = check(
            text,
            json!([
                {"op": "remove", "path": "/spec/nodeSelector/beta.kubernetes.io~1os"},
                {"op": "add", "path": "/spec/nodeSelector/kubernetes.io~1os", "value": "windows"},
                {"op": "add", "path": "/spec/os", "value": {"name": "windows"}},
                {"op": "add", "path": "/spec/tolerations", "value": [{"key": "os", "operator": "Equal"}]}
            ]),
        );
        assert_eq!(
            out,
            "{\n  \"spec\": {\n    \"containers\": [\n      {\n        \"name\": \"iis\"\n      }\n    ],\n    \"nodeSelector\": {\n      \"kubernetes.io/os\": \"windows\"\n    },\n    \"os\": {\"name\": \"windows\"},\n    \"tolerations\": [{\"key\": \"os\", \"operator\": \"Equal\"}]\n  }\n}\n"
        );
        assert!(!out.lines().any(|l| !l.is_empty() && l.trim().is_empty()));
        let out = check(
            text,
            json!([{"op": "remove", "path": "/spec/nodeSelector/beta.kubernetes.io~1os"}]),
        );
        assert!(out.contains("    \"nodeSelector\": {}\n"), "{out}");
        let out = check(
            text,
            json!([{"op": "add", "path": "/spec/containers/-", "value": {"name": "b", "args": ["a\nb"]}}]),
        );
        assert!(
            out.contains("      },\n      {\"name\": \"b\", \"args\": [\"a\\nb\"]}\n    ],"),
            "{out}"
        );
    }

    /// The Kubernetes documentation's Windows examples (testdata/realworld): the fixes --fix
    /// makes there (spec.os, tolerations, the WIN002 rename, a mountPath) round-trip, and every
    /// line of the original is kept (the new entries go on lines of their own).
    #[test]
    fn realworld_flow_examples() {
        let dir = format!("{}/testdata/realworld/windows", env!("CARGO_MANIFEST_DIR"));
        let mut files = 0;
        for e in std::fs::read_dir(&dir).unwrap() {
            let path = e.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            let text = std::fs::read_to_string(&path).unwrap();
            // (One file of the corpus does not load: a duplicate key, on purpose.)
            let Ok(docs) = source::load(&text) else {
                continue;
            };
            if !docs.iter().any(|d| {
                d.map
                    .node("")
                    .is_some_and(|n| n.kind == NodeKind::FlowMapping)
            }) {
                continue;
            }
            files += 1;
            for (i, doc) in docs.iter().enumerate() {
                let spec = match doc.value.pointer("/spec/template/spec") {
                    Some(_) => "/spec/template/spec",
                    None if doc.value.pointer("/spec/containers").is_some() => "/spec",
                    None => continue,
                };
                let mut patch = vec![
                    json!({"op": "add", "path": format!("{spec}/os"), "value": {"name": "windows"}}),
                    json!({"op": "add", "path": format!("{spec}/tolerations"), "value": [{"key": "os", "operator": "Equal", "value": "windows", "effect": "NoSchedule"}]}),
                ];
                let sel = doc.value.pointer(&format!("{spec}/nodeSelector"));
                if sel.is_some_and(|s| s.get("beta.kubernetes.io/os").is_some()) {
                    patch.push(json!({"op": "remove", "path": format!("{spec}/nodeSelector/beta.kubernetes.io~1os")}));
                    patch.push(json!({"op": "add", "path": format!("{spec}/nodeSelector/kubernetes.io~1os"), "value": "windows"}));
                } else if sel.is_none() {
                    patch.push(json!({"op": "add", "path": format!("{spec}/nodeSelector"), "value": {"kubernetes.io/os": "windows"}}));
                }
                if doc
                    .value
                    .pointer(&format!("{spec}/containers/0/volumeMounts/0"))
                    .is_some()
                {
                    patch.push(json!({"op": "replace", "path": format!("{spec}/containers/0/volumeMounts/0/mountPath"), "value": "C:/cache"}));
                }
                let out = check_doc(&text, i, Value::Array(patch));
                let kept: Vec<&str> = out.lines().collect();
                for line in text.lines() {
                    let renamed =
                        line.contains("beta.kubernetes.io/os") || line.contains("mountPath");
                    assert!(
                        renamed || kept.contains(&line),
                        "{name}: lost {line:?}\n{out}"
                    );
                }
                assert!(
                    !out.lines().any(|l| !l.is_empty() && l.trim().is_empty()),
                    "{name}: a blank line left\n{out}"
                );
            }
        }
        assert!(files >= 7, "{files} flow-style files");
    }

    #[test]
    fn quoted_scalars_keep_their_quotes() {
        let out = check(
            "a: \"/cache\" # c\nb: '/x'\nc: /y\n",
            json!([
                {"op": "replace", "path": "/a", "value": "C:/cache"},
                {"op": "replace", "path": "/b", "value": "C:/x"},
                {"op": "replace", "path": "/c", "value": "C:/y"}
            ]),
        );
        assert_eq!(out, "a: \"C:/cache\" # c\nb: 'C:/x'\nc: C:/y\n");
        // A single-quoted scalar cannot hold a line break as an escape: double quotes then.
        let out = check(
            "b: 'x'\n",
            json!([{"op": "replace", "path": "/b", "value": "x\ny"}]),
        );
        assert_eq!(out, "b: \"x\\ny\"\n");
        // A string that needs quotes where the original was plain gets them.
        let out = check(
            "c: x\n",
            json!([{"op": "replace", "path": "/c", "value": "yes"}]),
        );
        assert_eq!(out, "c: \"yes\"\n");
    }

    #[test]
    fn multi_line_strings_as_literal_blocks() {
        let script = "$ErrorActionPreference = 'Stop'\nWrite-Host \"hello\"\n";
        let out = check(
            POD,
            json!([{"op": "add", "path": "/spec/containers/0/args", "value": ["-Command", script]}]),
        );
        assert!(
            out.contains("    args:\n    - -Command\n    - |\n      $ErrorActionPreference = 'Stop'\n      Write-Host \"hello\"\n"),
            "{out}"
        );
        let out = check(
            POD,
            json!([{"op": "add", "path": "/metadata/annotations", "value": {"note": "a\n\nb"}}]),
        );
        assert!(
            out.contains("  annotations:\n    note: |-\n      a\n\n      b\n"),
            "{out}"
        );
        // A replaced plain value; not when a comment follows it (it would become content).
        let out = check(
            "a: x\nb: 1\n",
            json!([{"op": "replace", "path": "/a", "value": "l1\nl2\n"}]),
        );
        assert_eq!(out, "a: |\n  l1\n  l2\nb: 1\n");
        let out = check(
            "a: x # c\nb: 1\n",
            json!([{"op": "replace", "path": "/a", "value": "l1\nl2\n"}]),
        );
        assert_eq!(out, "a: \"l1\\nl2\\n\" # c\nb: 1\n");
        // In flow style: escapes.
        let out = check(
            "a: {b: x}\n",
            json!([{"op": "add", "path": "/a/c", "value": "l1\nl2"}]),
        );
        assert_eq!(out, "a: {b: x, c: \"l1\\nl2\"}\n");
    }

    #[test]
    fn a_deployment_fixture_round_trips() {
        let path = format!(
            "{}/testdata/yaml/deployment.yaml",
            env!("CARGO_MANIFEST_DIR")
        );
        let text = std::fs::read_to_string(path).unwrap();
        let cases = [
            json!([{"op": "add", "path": "/spec/template/spec/securityContext", "value": {"windowsOptions": {"hostProcess": false}}}]),
            json!([{"op": "replace", "path": "/spec/template/spec/nodeSelector/kubernetes.io~1os", "value": "linux"}]),
            json!([{"op": "remove", "path": "/spec/template/spec/nodeSelector"}]),
            json!([{"op": "add", "path": "/spec/template/spec/containers/0/ports/-", "value": {"containerPort": 8080}}]),
            json!([{"op": "remove", "path": "/spec/template/spec/containers/0/ports/0"}]),
            json!([{"op": "add", "path": "/metadata/annotations/x", "value": "multi\nline"}]),
            json!([{"op": "replace", "path": "/metadata/annotations/note", "value": "short"}]),
            json!([{"op": "remove", "path": "/metadata/annotations/folded"}]),
            json!([{"op": "add", "path": "/spec/template/spec/tolerations", "value": [{"key": "os", "operator": "Equal", "value": "windows", "effect": "NoSchedule"}]}]),
            json!([{"op": "add", "path": "/metadata/labels/tier", "value": "db"}]),
        ];
        for c in cases {
            check(&text, c);
        }
        let crlf = text.replace('\n', "\r\n");
        check(
            &crlf,
            json!([{"op": "remove", "path": "/metadata/annotations/note"}]),
        );
    }
}

#[cfg(test)]
mod property {
    use super::*;
    use crate::source;
    use serde_json::json;

    fn fixture(name: &str) -> String {
        let path = format!("{}/testdata/yaml/{name}", env!("CARGO_MANIFEST_DIR"));
        std::fs::read_to_string(path).unwrap()
    }

    /// Every operation on every node of the fixtures either round-trips or is refused; returns
    /// the refusals.
    fn exercise(text: &str) -> (usize, Vec<String>) {
        let docs = source::load(text).unwrap();
        let mut ok = 0;
        let mut refused = Vec::new();
        for doc in &docs {
            let mut pointers: Vec<&str> = doc.map.iter().map(|(p, _)| p).collect();
            pointers.sort();
            for p in pointers {
                let v = doc.value.pointer(p).unwrap();
                let mut cases = vec![
                    json!([{"op": "replace", "path": p, "value": "x-new"}]),
                    json!([{"op": "replace", "path": p, "value": {"k": "v", "l": [1, {"a": "b"}]}}]),
                    json!([{"op": "replace", "path": p, "value": [true]}]),
                    json!([{"op": "replace", "path": p, "value": {}}]),
                ];
                if !p.is_empty() {
                    cases.push(json!([{"op": "remove", "path": p}]));
                }
                match v {
                    Value::Object(_) => {
                        cases.push(
                            json!([{"op": "add", "path": format!("{p}/zz"), "value": "new"}]),
                        );
                        cases.push(json!([{"op": "add", "path": format!("{p}/zz"), "value": {"n": ["a"]}}]));
                    }
                    Value::Array(_) => {
                        cases
                            .push(json!([{"op": "add", "path": format!("{p}/-"), "value": "new"}]));
                        cases.push(
                            json!([{"op": "add", "path": format!("{p}/0"), "value": {"n": 1}}]),
                        );
                    }
                    _ => {}
                }
                for c in cases {
                    let ops: Vec<PatchOperation> = serde_json::from_value(c.clone()).unwrap();
                    match plan(text, doc, &ops) {
                        Ok(edits) => {
                            let out = apply(text, &edits);
                            let mut want = doc.value.clone();
                            json_patch::patch(&mut want, &ops).unwrap();
                            let got = source::load(&out).unwrap();
                            let i = docs.iter().position(|d| std::ptr::eq(d, doc)).unwrap();
                            assert_eq!(got[i].value, want, "{c}\n{out}");
                            ok += 1;
                        }
                        Err(e) => refused.push(format!("{c}: {e}")),
                    }
                }
            }
        }
        (ok, refused)
    }

    #[test]
    fn every_node_of_the_fixtures() {
        let inline = [
            "spec:\n    containers:\n        -   name: a\n            args: [x, y]\n    volumes:\n        - {name: v}\n",
            "spec:\n  containers:\n    - name: a\n      env:\n        - name: X\n          value: |\n            v\n",
            "{\n  \"spec\": {\n    \"a\": [\n      1,\n      {\"b\": null}\n    ],\n    \"c\": {}\n  }\n}\n",
            "- - a\n  - b\n- {k: [1, 2], m: {}}\n- \n-   # empty\n- 'q'\n",
            "a: 1 # c\nb:\n  # comment\n  c: \"x\"\n\n  d:\n  - 1\n",
            // Flow style with trailing commas, on one line and over lines.
            "{a: {b: 1,}, c: [x, 'y',], d: {},}\n",
            "{\n  kind: \"Pod\",\n  spec: {\n    containers: [{\n      name: \"a\",\n      ports: [{\n        containerPort: 80,\n      }],\n    }, {\n      name: 'b', # c\n    }],\n    nodeSelector: {\n      kubernetes.io/os: \"windows\",\n    },\n  },\n}\n",
            "spec:\n  nodeSelector: {a: b} # c\n  tolerations: [{key: a},]\n  e: [\n    1,\n    2,\n  ]\n",
        ];
        let mut texts: Vec<(String, String)> = inline
            .iter()
            .enumerate()
            .map(|(i, t)| (format!("inline #{i}"), t.to_string()))
            .collect();
        for name in [
            "deployment.yaml",
            "multi.yaml",
            "anchors.yaml",
            "scalars.yaml",
        ] {
            texts.push((name.to_string(), fixture(name)));
        }
        for (name, text) in texts {
            for text in [text.clone(), text.replace('\n', "\r\n")] {
                let (ok, refused) = exercise(&text);
                assert!(ok > 0, "{name}");
                // Only edits of anchored nodes (which would change their aliases too), inside
                // aliases, or that would uncover a merged key are refused.
                for r in &refused {
                    let allowed = name == "anchors.yaml"
                        && (r.contains("\"/defaults")
                            || r.contains("\"/extra")
                            || r.contains("/containers/2/resources/zz")
                            || r.contains("remove\",\"path\":\"/containers/0/imagePullPolicy"));
                    assert!(allowed, "{name}: {r}");
                }
            }
        }
    }
}
