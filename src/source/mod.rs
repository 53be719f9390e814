//! YAML/JSON loading with a source map from JSON pointer to line:column and byte spans.
//!
//! [`load`] reads every document of a YAML (or JSON, which is YAML) text into a
//! [`serde_json::Value`] the way Kubernetes' `sigs.k8s.io/yaml` does (YAML 1.1 scalars:
//! `yes`/`on`/`y` are booleans, `0644` is octal, `0x1F` is hex), and records for every node its
//! JSON pointer, the `line:column` a user would point at and the byte spans that surgical text
//! edits (`textedit`, which builds on this module) need.
//!
//! The loader drives `saphyr-parser`'s event stream itself (rather than building a `MarkedYaml`
//! tree and converting it) so that it sees key spans, collection styles and alias expansions, and
//! so that it can cap nesting depth and alias expansion before memory is spent.
//!
//! Limits, each a [`LoadError`] rather than a crash: nesting deeper than [`MAX_DEPTH`], more than
//! [`MAX_ALIAS_NODES`] nodes produced by alias expansion in one document (billion laughs),
//! more nodes or longer pointers than the text's length affords ([`budget`]: memory bounded by
//! the input), duplicate keys, non-scalar keys, control characters.
//!
//! Nodes produced by an alias (`*x`) or merged in by a merge key (`<<`) have no source map entry
//! of their own: [`SourceMap::locate`] points at the alias or at the mapping that merges them.
//!
//! Tabs and shallow indentation in quoted strings, which kubectl accepts and YAML 1.2 does not,
//! are loaded as kubectl loads them ([`kubectl`]); [`load_bytes_warned`] says where.
//!
//! This file holds the loaded types and the entry points; the event-driven loader is
//! [`loader`], scalar resolution [`scalar`], the byte-level text helpers the editor shares
//! [`text`].

mod budget;
pub mod emit;
pub mod kubectl;
mod loader;
mod scalar;
mod text;

use std::collections::HashMap;
use std::fmt;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::Value;

pub use budget::{MAX_POINTER_BYTES_PER_BYTE, MIN_BYTES_PER_NODE};
use loader::Loader;
pub use scalar::resolve_plain;
pub(crate) use text::{col_of, line_start};

/// Deepest nesting of collections accepted in one document (aliases included).
pub const MAX_DEPTH: usize = 256;
/// Most nodes that alias expansion may produce in one document.
pub const MAX_ALIAS_NODES: usize = 1_000_000;

/// A load error with its place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadError {
    /// 1-based line, 0 when unknown.
    pub line: usize,
    /// 1-based column, 0 when unknown.
    pub column: usize,
    pub message: String,
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.line, self.column, self.message)
    }
}

impl std::error::Error for LoadError {}

/// One loaded document.
#[derive(Debug, Clone)]
pub struct Document {
    /// The document's value; `Value::Null` for an empty document (callers skip those).
    pub value: Value,
    pub map: SourceMap,
    /// 1-based line where the document starts (its `---`, or its first token).
    pub start_line: usize,
    /// Byte range of the document in the whole text. The ranges of a text's documents are
    /// contiguous and cover the whole text (leading comments belong to the document after them).
    pub text_range: (usize, usize),
}

/// What a node is, and for collections how it is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeKind {
    Scalar,
    /// `*name`: a reference to an anchored node.
    Alias,
    BlockMapping,
    /// `{…}` (JSON objects too).
    FlowMapping,
    BlockSequence,
    /// `[…]` (JSON arrays too).
    FlowSequence,
}

impl NodeKind {
    pub fn is_mapping(self) -> bool {
        matches!(self, NodeKind::BlockMapping | NodeKind::FlowMapping)
    }
    pub fn is_sequence(self) -> bool {
        matches!(self, NodeKind::BlockSequence | NodeKind::FlowSequence)
    }
    pub fn is_flow_collection(self) -> bool {
        matches!(self, NodeKind::FlowMapping | NodeKind::FlowSequence)
    }
    pub fn is_block_collection(self) -> bool {
        matches!(self, NodeKind::BlockMapping | NodeKind::BlockSequence)
    }
}

/// Where one node is. Byte offsets are into the whole text passed to [`load`] (documents of one
/// text share one offset space); columns are counted in characters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeInfo {
    /// 1-based line a user would point at: the key of a mapping entry, the node of a sequence
    /// item, the document start for the root.
    pub line: usize,
    /// 1-based column of the same place.
    pub column: usize,
    /// Byte span of the value, anchor and tag included. A block collection spans from its first
    /// entry to the end of its last value; a flow collection from `{`/`[` to `}`/`]`. An empty
    /// value (`key:` with nothing) is the empty span right after the `:` (or `-`).
    pub start: usize,
    pub end: usize,
    /// Byte span of the key, for mapping entries.
    pub key: Option<(usize, usize)>,
    /// Where the entry starts: its key, the `-` of a block sequence item, else the value.
    pub entry_start: usize,
    /// Byte offset right after the entry's `:` (mapping) or `-` (block sequence); the value start
    /// for flow items and the root.
    pub value_slot: usize,
    /// 0-based column of the entry: of its key, of the `-` of a block sequence item.
    pub indent: usize,
    /// Whether the collection holding this entry is a flow collection (`{}`, `[]`, JSON).
    pub in_flow: bool,
    pub kind: NodeKind,
    /// For block collections: 0-based column of their entries (keys, or `-`).
    pub child_indent: Option<usize>,
    /// For collections: number of entries written in the text (a `<<` merge entry counts as one;
    /// the keys it merges in do not).
    pub len: usize,
    /// A scalar written as nothing at all (`key:`), which loads as null.
    pub empty: bool,
    /// The node carries an anchor (`&name`).
    pub anchored: bool,
}

/// Where each node of a document is.
///
/// The pointers sit end to end in one `String`, and an index from pointer to node is built only
/// when a document is asked often: the loader records every node of every document (60 per
/// object in the generated corpus), and a document is mostly asked once or twice, where its
/// findings are (BENCHMARKS.md §11: a `String` and a hash insert per node were 7 % of the CLI's
/// instructions).
#[derive(Debug, Default)]
pub struct SourceMap {
    /// Every recorded node's pointer, one after another.
    pointers: String,
    /// Every recorded node, in the order recorded, with where its pointer ends in `pointers`
    /// (it starts where the one before ends).
    nodes: Vec<(usize, NodeInfo)>,
    /// Lookups so far; the first [`SCANS_BEFORE_INDEX`] scan `nodes`.
    lookups: AtomicUsize,
    /// Pointer to index in `nodes`, built at the lookup after the scans (std's `HashMap`, whose
    /// keyed hash an input cannot aim at; sorting the pointers instead cost 196 M instructions
    /// on the 10 000-container pod of scripts/big-inputs.sh, whose pointers share long
    /// prefixes, where the map had cost 72 M).
    index: OnceLock<HashMap<Box<str>, u32>>,
    json: bool,
    indent_step: Option<usize>,
    seq_indent: Option<usize>,
    aliases: Vec<AliasUse>,
}

/// Lookups of a [`SourceMap`] that scan its nodes before it builds its index: a scan of a
/// document's nodes costs less than sorting them, and most documents are asked about a finding
/// or two; a document asked more (the fixer's, one with many findings) gets the index, so the
/// scans add at most this many passes over it.
const SCANS_BEFORE_INDEX: usize = 16;

impl Clone for SourceMap {
    fn clone(&self) -> Self {
        SourceMap {
            pointers: self.pointers.clone(),
            nodes: self.nodes.clone(),
            lookups: AtomicUsize::new(self.lookups.load(Ordering::Relaxed)),
            index: self.index.clone(),
            json: self.json,
            indent_step: self.indent_step,
            seq_indent: self.seq_indent,
            aliases: self.aliases.clone(),
        }
    }
}

/// One `*name` written in a document: where it is used and which anchored node it repeats.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AliasUse {
    /// The anchor's name, without `&`/`*`.
    pub name: String,
    /// Pointer of the anchored node (`&name`) it repeats.
    pub anchor: String,
    /// Pointer of the alias node; for a merge key (`<<: *name`), of the mapping it merges into.
    pub pointer: String,
    /// Used by a merge key.
    pub merge: bool,
}

impl SourceMap {
    /// 1-based (line, column) of the node at `pointer`, or of its nearest existing parent.
    pub fn locate(&self, pointer: &str) -> (usize, usize) {
        match self.nearest(pointer) {
            Some((_, n)) => (n.line, n.column),
            None => (1, 1),
        }
    }

    /// The node at `pointer` (RFC 6901, `""` is the root), if it is written in the text.
    pub fn node(&self, pointer: &str) -> Option<&NodeInfo> {
        let index = match self.index.get() {
            Some(index) => index,
            None if self.lookups.fetch_add(1, Ordering::Relaxed) < SCANS_BEFORE_INDEX => {
                let i = (0..self.nodes.len()).find(|&i| self.pointer(i) == pointer)?;
                return Some(&self.nodes[i].1);
            }
            None => self.index.get_or_init(|| {
                (0..self.nodes.len())
                    .map(|i| (self.pointer(i).into(), i as u32))
                    .collect()
            }),
        };
        index.get(pointer).map(|&i| &self.nodes[i as usize].1)
    }

    /// The pointer of the `i`th node recorded.
    fn pointer(&self, i: usize) -> &str {
        let start = i.checked_sub(1).map_or(0, |p| self.nodes[p].0);
        &self.pointers[start..self.nodes[i].0]
    }

    /// Record the node at `pointer` (the loader's, and the root of an empty text).
    fn push(&mut self, pointer: &str, info: NodeInfo) {
        self.pointers.push_str(pointer);
        self.nodes.push((self.pointers.len(), info));
    }

    /// The node at `pointer` or at its nearest existing parent, with that parent's pointer.
    pub fn nearest<'p>(&self, pointer: &'p str) -> Option<(&'p str, &NodeInfo)> {
        let mut p = pointer;
        loop {
            if let Some(n) = self.node(p) {
                return Some((p, n));
            }
            if p.is_empty() {
                return None;
            }
            p = match p.rfind('/') {
                Some(i) => &p[..i],
                None => "",
            };
        }
    }

    /// Whether the document is written as JSON (a flow collection with double-quoted keys only).
    pub fn is_json(&self) -> bool {
        self.json
    }

    /// Indentation step of nested block mappings in this document (2 when unknown).
    pub fn indent_step(&self) -> usize {
        self.indent_step.unwrap_or(2)
    }

    /// How far a block sequence under a key is indented past the key: 0 for
    /// `containers:\n- name: a`, 2 for `containers:\n  - name: a` (the indent step when unknown).
    pub fn seq_indent(&self) -> usize {
        self.seq_indent.unwrap_or_else(|| self.indent_step())
    }

    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Every recorded node with its pointer, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &NodeInfo)> {
        (0..self.nodes.len()).map(|i| (self.pointer(i), &self.nodes[i].1))
    }

    /// Every alias written in the document, in text order.
    pub fn aliases(&self) -> &[AliasUse] {
        &self.aliases
    }
}

/// Load every document of a YAML (or JSON) text.
///
/// A text without any document (empty, or only comments) yields one `Null` document.
pub fn load(text: &str) -> Result<Vec<Document>, LoadError> {
    load_with(text, true, &mut Vec::new())
}

/// The first document of a YAML text as a value (`Null` for an empty text): the data tables
/// the model ships (`model/lifecycle.yaml`, `model/image_contents.yaml`) and their overrides.
/// `Err` is `line N: problem`.
pub fn load_first_value(text: &str) -> Result<Value, String> {
    Ok(load(text)
        .map_err(|e| format!("line {}: {}", e.line, e.message))?
        .into_iter()
        .next()
        .map(|d| d.value)
        .unwrap_or(Value::Null))
}

/// `warnings`: where the text uses what kubectl accepts and YAML 1.2 does not.
fn load_with(
    text: &str,
    with_map: bool,
    warnings: &mut Vec<LoadError>,
) -> Result<Vec<Document>, LoadError> {
    check_chars(text)?;
    let bom = if text.starts_with('\u{feff}') { 3 } else { 0 };
    // A text too dense for its length is refused before anything is built (source::budget).
    budget::precount(&text[bom..], text.len(), with_map)?;
    // Parse the text; on an error kubectl would not make, parse a relaxed copy (source::kubectl).
    let mut relaxed: Option<kubectl::Relaxed> = None;
    let mut loader = loop {
        let mut loader = Loader::new(text, bom, with_map, relaxed.as_ref());
        let Err(e) = loader.run() else {
            warnings.extend(relaxed.iter().flat_map(|r| r.warnings()));
            break loader;
        };
        // The column of the outermost open flow collection, when the parser stopped in one.
        let flow_col = loader.stack.iter().find(|f| f.flow).map(|f| {
            f.start
                - text.as_bytes()[..f.start]
                    .iter()
                    .rposition(|&c| c == b'\n')
                    .map_or(0, |p| p + 1)
        });
        match loader.scan_error.take() {
            Some(raw)
                if relaxed
                    .get_or_insert_with(|| kubectl::Relaxed::new(&text[bom..]))
                    .relax(&raw, flow_col) => {}
            _ => return Err(e),
        }
    };
    let mut docs = std::mem::take(&mut loader.docs);
    if docs.is_empty() {
        let mut map = SourceMap::default();
        map.push("", root_info(1, 1, bom, NodeKind::Scalar));
        docs.push(Document {
            value: Value::Null,
            map,
            start_line: 1,
            text_range: (0, text.len()),
        });
    }
    Ok(docs)
}

/// [`load`] for raw bytes: reports invalid UTF-8 (and UTF-16/32 input) with its line.
pub fn load_bytes(bytes: &[u8]) -> Result<Vec<Document>, LoadError> {
    load_bytes_with(bytes, true, &mut Vec::new())
}

/// [`load_bytes`], and the places where the text relies on what kubectl accepts and YAML 1.2
/// forbids (tabs in quoted strings' indentation…), to warn about.
pub fn load_bytes_warned(bytes: &[u8]) -> Result<(Vec<Document>, Vec<LoadError>), LoadError> {
    let mut warnings = Vec::new();
    let docs = load_bytes_with(bytes, true, &mut warnings)?;
    Ok((docs, warnings))
}

/// The values of [`load_bytes`] without building source maps (about a fifth cheaper): the same
/// values, and an error exactly when [`load_bytes`] fails (a duplicate key's message lacks the
/// line of its first definition). For a pass that only reads the objects, such as the CLI's
/// context pass.
pub fn load_bytes_values(bytes: &[u8]) -> Result<Vec<Value>, LoadError> {
    Ok(load_bytes_with(bytes, false, &mut Vec::new())?
        .into_iter()
        .map(|d| d.value)
        .collect())
}

fn load_bytes_with(
    bytes: &[u8],
    with_map: bool,
    warnings: &mut Vec<LoadError>,
) -> Result<Vec<Document>, LoadError> {
    if bytes.starts_with(&[0xff, 0xfe]) || bytes.starts_with(&[0xfe, 0xff]) {
        return Err(LoadError {
            line: 1,
            column: 1,
            message: "invalid YAML: UTF-16/UTF-32 input is not supported, convert it to UTF-8"
                .into(),
        });
    }
    match std::str::from_utf8(bytes) {
        Ok(text) => load_with(text, with_map, warnings),
        Err(e) => {
            let valid = e.valid_up_to();
            // The prefix is valid UTF-8 by definition.
            let prefix = std::str::from_utf8(&bytes[..valid]).unwrap_or_default();
            let (line, column) = line_col(prefix, valid);
            Err(LoadError {
                line,
                column,
                message: format!("invalid UTF-8 at byte {valid}"),
            })
        }
    }
}

fn root_info(line: usize, column: usize, at: usize, kind: NodeKind) -> NodeInfo {
    NodeInfo {
        line,
        column,
        start: at,
        end: at,
        key: None,
        entry_start: at,
        value_slot: at,
        indent: 0,
        in_flow: false,
        kind,
        child_indent: None,
        len: 0,
        empty: true,
        anchored: false,
    }
}

/// The `]`/`}` that closes a flow collection whose end token starts at `from`: the first byte
/// after one optional `,`, blanks, line breaks and comments.
fn closing_bracket(b: &[u8], from: usize) -> Option<usize> {
    let mut i = from;
    let mut comma = false;
    while let Some(&c) = b.get(i) {
        match c {
            b']' | b'}' => return Some(i),
            b',' if !comma => comma = true,
            b' ' | b'\t' | b'\r' | b'\n' => {}
            b'#' if i == from || matches!(b[i - 1], b' ' | b'\t' | b'\r' | b'\n') => {
                while b.get(i).is_some_and(|&c| c != b'\n') {
                    i += 1;
                }
                continue;
            }
            _ => return None,
        }
        i += 1;
    }
    None
}

/// 1-based line and column (in characters) of byte `at` of `text`.
fn line_col(text: &str, at: usize) -> (usize, usize) {
    let at = at.min(text.len());
    let before = &text.as_bytes()[..at];
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let ls = before
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    let column = text.get(ls..at).map_or(at - ls, |s| s.chars().count()) + 1;
    (line, column)
}

/// YAML forbids C0 controls (but tab, LF, CR), DEL and C1 controls (but NEL) in a stream; the
/// scanner would otherwise stop silently at a NUL.
fn check_chars(text: &str) -> Result<(), LoadError> {
    let bad = |at: usize, c: char| {
        let (line, column) = line_col(text, at);
        Err(LoadError {
            line,
            column,
            message: format!(
                "invalid YAML: control character U+{:04X} is not allowed (binary file?)",
                c as u32
            ),
        })
    };
    let bytes = text.as_bytes();
    if let Some(i) = bytes
        .iter()
        .position(|&b| (b < 0x20 && b != b'\t' && b != b'\n' && b != b'\r') || b == 0x7f)
    {
        return bad(i, bytes[i] as char);
    }
    if !text.is_ascii() {
        for (i, c) in text.char_indices() {
            if matches!(c, '\u{80}'..='\u{84}' | '\u{86}'..='\u{9f}' | '\u{fffe}' | '\u{ffff}') {
                return bad(i, c);
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn one(text: &str) -> Document {
        let mut docs = load(text).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(docs.len(), 1, "one document expected");
        docs.remove(0)
    }

    fn err(text: &str) -> LoadError {
        match load(text) {
            Ok(d) => panic!(
                "expected an error, got {:?}",
                d.iter().map(|d| &d.value).collect::<Vec<_>>()
            ),
            Err(e) => e,
        }
    }

    /// The text of a node's value span.
    fn span<'t>(text: &'t str, d: &Document, p: &str) -> &'t str {
        let n = d.map.node(p).unwrap_or_else(|| panic!("no node {p}"));
        &text[n.start..n.end]
    }

    fn fixture(name: &str) -> String {
        let path = format!("{}/testdata/yaml/{name}", env!("CARGO_MANIFEST_DIR"));
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    #[test]
    fn block_positions_point_at_keys() {
        let text = fixture("deployment.yaml");
        let d = one(&text);
        assert_eq!(
            d.value["spec"]["template"]["spec"]["containers"][0]["env"][1]["name"],
            "B"
        );
        let m = &d.map;
        assert_eq!(m.locate(""), (3, 1));
        assert_eq!(m.locate("/apiVersion"), (3, 1));
        assert_eq!(m.locate("/metadata/name"), (6, 3));
        assert_eq!(m.locate("/spec/template/spec/containers"), (19, 7));
        // A sequence item points at its node; an entry at its key.
        assert_eq!(m.locate("/spec/template/spec/containers/0"), (20, 9));
        assert_eq!(
            m.locate("/spec/template/spec/containers/0/env/1/name"),
            (25, 11)
        );
        assert_eq!(
            m.locate("/spec/template/spec/containers/0/env/0/value"),
            (24, 11)
        );
        assert_eq!(
            m.locate("/spec/template/spec/nodeSelector/kubernetes.io~1os"),
            (29, 9)
        );
        // Missing nodes map to their nearest existing parent.
        assert_eq!(
            m.locate("/spec/template/spec/containers/0/securityContext/runAsUser"),
            (20, 9)
        );
        assert_eq!(m.locate("/spec/template/spec/containers/7"), (19, 7));
        assert_eq!(m.locate("/nope"), (3, 1));
        assert_eq!(
            span(&text, &d, "/spec/template/spec/containers/0/env/0/name"),
            "A"
        );
        assert_eq!(
            span(&text, &d, "/spec/template/spec/containers/0/env/0/value"),
            "\"1\""
        );
        assert_eq!(
            span(&text, &d, "/spec/template/spec/containers/0/env/1/value"),
            "'two'"
        );
        let env1 = m.node("/spec/template/spec/containers/0/env/1").unwrap();
        assert_eq!(env1.kind, NodeKind::BlockMapping);
        assert_eq!(&text[env1.entry_start..env1.entry_start + 2], "- ");
        assert_eq!(env1.indent, 8);
        assert_eq!(env1.child_indent, Some(10));
        assert_eq!(env1.len, 2);
        let key = m
            .node("/spec/template/spec/containers/0/env/1/name")
            .unwrap();
        assert_eq!(&text[key.key.unwrap().0..key.key.unwrap().1], "name");
        assert_eq!(&text[key.entry_start..key.value_slot], "name:");
        let containers = m.node("/spec/template/spec/containers").unwrap();
        assert_eq!(containers.kind, NodeKind::BlockSequence);
        assert_eq!(containers.child_indent, Some(6));
        assert!(text[containers.start..containers.end].starts_with("- name: iis"));
        assert!(text[containers.start..containers.end].ends_with("{containerPort: 443}]"));
        // A block mapping ends at the end of its last value, not at the next key.
        let spec = m.node("/spec/template/spec").unwrap();
        assert!(text[spec.start..spec.end].ends_with("kubernetes.io/os: windows"));
        assert_eq!(m.indent_step(), 2);
        assert_eq!(m.seq_indent(), 0);
        assert!(!m.is_json());
    }

    #[test]
    fn flow_positions_and_spans() {
        let text = fixture("deployment.yaml");
        let d = one(&text);
        let m = &d.map;
        assert_eq!(m.locate("/metadata/labels"), (7, 3));
        assert_eq!(m.locate("/metadata/labels/app"), (7, 12));
        assert_eq!(m.locate("/metadata/labels/tier"), (7, 22));
        assert_eq!(
            span(&text, &d, "/metadata/labels"),
            "{app: iis, \"tier\": web}"
        );
        let tier = m.node("/metadata/labels/tier").unwrap();
        assert!(tier.in_flow);
        assert_eq!(&text[tier.key.unwrap().0..tier.key.unwrap().1], "\"tier\"");
        let ports = "/spec/template/spec/containers/0/ports";
        assert_eq!(m.node(ports).unwrap().kind, NodeKind::FlowSequence);
        assert_eq!(
            span(&text, &d, &format!("{ports}/1")),
            "{containerPort: 443}"
        );
        assert_eq!(span(&text, &d, &format!("{ports}/1/containerPort")), "443");
        assert_eq!(m.locate(&format!("{ports}/1")), (27, 38));
        assert_eq!(
            d.value["spec"]["template"]["spec"]["containers"][0]["ports"][1]["containerPort"],
            443
        );
        let t = "args: [a, b] # c\nm: {k: v}   # d\n";
        let d = one(t);
        assert_eq!(span(t, &d, "/args"), "[a, b]");
        assert_eq!(span(t, &d, "/m"), "{k: v}");
        assert_eq!(span(t, &d, ""), "args: [a, b] # c\nm: {k: v}");
    }

    #[test]
    fn block_scalars_and_multiline_plain() {
        let text = fixture("deployment.yaml");
        let d = one(&text);
        assert_eq!(
            d.value["metadata"]["annotations"]["note"],
            "line one\nline two\n"
        );
        assert_eq!(d.value["metadata"]["annotations"]["folded"], "folded text");
        assert_eq!(
            span(&text, &d, "/metadata/annotations/note"),
            "|\n      line one\n      line two"
        );
        assert_eq!(
            span(&text, &d, "/metadata/annotations/folded"),
            ">-\n      folded\n      text"
        );
        let t = "a: &x |+\n  keep\n\n# comment\nb: !!str >\n  f\nc: plain\n  continued # c\nd: |\ne: 1\n";
        let d = one(t);
        assert_eq!(
            d.value,
            json!({"a": "keep\n\n", "b": "f\n", "c": "plain continued", "d": "", "e": 1})
        );
        assert_eq!(span(t, &d, "/a"), "&x |+\n  keep");
        assert_eq!(span(t, &d, "/b"), "!!str >\n  f");
        assert_eq!(span(t, &d, "/c"), "plain\n  continued");
        assert_eq!(span(t, &d, "/d"), "|");
    }

    #[test]
    fn quoted_keys_and_values() {
        let t = "\"a b\": 'it''s'\n'c:d': \"say \\\"hi\\\"\" # comment\n\"\": empty\n";
        let d = one(t);
        assert_eq!(
            d.value,
            json!({"a b": "it's", "c:d": "say \"hi\"", "": "empty"})
        );
        assert_eq!(span(t, &d, "/a b"), "'it''s'");
        assert_eq!(span(t, &d, "/c:d"), "\"say \\\"hi\\\"\"");
        let n = d.map.node("/c:d").unwrap();
        assert_eq!(&t[n.key.unwrap().0..n.key.unwrap().1], "'c:d'");
        assert_eq!(d.map.locate("/c:d"), (2, 1));
        assert_eq!(d.map.locate("/"), (3, 1));
    }

    #[test]
    fn pointer_escaping() {
        let t = "a/b: 1\nc~d: 2\n";
        let d = one(t);
        assert_eq!(d.map.locate("/a~1b"), (1, 1));
        assert_eq!(d.map.locate("/c~0d"), (2, 1));
        assert!(d.map.node("/a/b").is_none());
    }

    #[test]
    fn comments_are_ignored() {
        let t = "# head\na: 1 # one\n# between\nb: # nothing yet\n  - x # item\n  # trailing\n";
        let d = one(t);
        assert_eq!(d.value, json!({"a": 1, "b": ["x"]}));
        assert_eq!(span(t, &d, "/a"), "1");
        assert_eq!(span(t, &d, "/b"), "- x");
        assert_eq!(d.map.locate("/b/0"), (5, 5));
    }

    #[test]
    fn multi_document_offsets() {
        let text = fixture("multi.yaml");
        let docs = load(&text).unwrap();
        assert_eq!(docs.len(), 4);
        assert_eq!(docs[0].value["metadata"]["name"], "one");
        assert_eq!(docs[1].value["metadata"]["name"], "two");
        assert!(docs[2].value.is_null());
        assert_eq!(docs[3].value["metadata"]["name"], "three");
        assert_eq!(
            docs.iter().map(|d| d.start_line).collect::<Vec<_>>(),
            [2, 5, 10, 13]
        );
        // Ranges partition the text.
        assert_eq!(docs[0].text_range.0, 0);
        for w in docs.windows(2) {
            assert_eq!(w[0].text_range.1, w[1].text_range.0);
        }
        assert_eq!(docs[3].text_range.1, text.len());
        assert!(text[docs[1].text_range.0..].starts_with("---\napiVersion"));
        // Offsets are into the whole text.
        let n = docs[1].map.node("/metadata/name").unwrap();
        assert_eq!(&text[n.start..n.end], "two");
        assert_eq!(docs[1].map.locate("/metadata/name"), (9, 3));
        let n = docs[3].map.node("/metadata/name").unwrap();
        assert_eq!(&text[n.start..n.end], "\"three\"");
        assert_eq!(docs[3].map.locate("/kind"), (14, 22));
        assert!(docs[3].map.is_json());
        assert!(!docs[0].map.is_json());
    }

    #[test]
    fn empty_documents() {
        for t in ["", "# only a comment\n", "---\n", "--- # c\n...\n"] {
            let docs = load(t).unwrap();
            assert_eq!(docs.len(), 1, "{t:?}");
            assert!(docs[0].value.is_null());
            assert_eq!(docs[0].map.locate("/x"), (1, 1));
        }
        let docs = load("a: 1\n---\n---\nb: 2\n---\n").unwrap();
        let values: Vec<_> = docs.iter().map(|d| d.value.clone()).collect();
        assert_eq!(
            values,
            [json!({"a": 1}), Value::Null, json!({"b": 2}), Value::Null]
        );
    }

    #[test]
    fn anchors_aliases_and_merge_keys() {
        let text = fixture("anchors.yaml");
        let d = one(&text);
        let c = &d.value["containers"];
        assert_eq!(
            c[0],
            json!({"imagePullPolicy": "Always", "name": "a",
                   "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}})
        );
        // Earlier mappings of a merge list win; explicit keys win over merged ones.
        assert_eq!(
            c[1],
            json!({"name": "b", "tty": true, "imagePullPolicy": "IfNotPresent",
                   "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}})
        );
        assert_eq!(c[2]["resources"]["limits"]["memory"], "1Gi");
        // Merged and aliased nodes locate at the mapping that merges them / at the alias.
        assert_eq!(d.map.locate("/containers/0/resources/limits/cpu"), (8, 3));
        assert_eq!(d.map.locate("/containers/0/imagePullPolicy"), (10, 3));
        assert!(d.map.node("/containers/0/<<").is_none());
        assert_eq!(d.map.locate("/containers/2/resources/limits"), (14, 3));
        assert_eq!(
            d.map.node("/containers/2/resources").unwrap().kind,
            NodeKind::Alias
        );
        assert!(d.map.node("/defaults").unwrap().anchored);
        // Every alias, with the anchored node it repeats and where it is used.
        let uses: Vec<(&str, &str, &str, bool)> = (d.map.aliases().iter())
            .map(|a| {
                (
                    a.name.as_str(),
                    a.anchor.as_str(),
                    a.pointer.as_str(),
                    a.merge,
                )
            })
            .collect();
        assert_eq!(
            uses,
            [
                ("defaults", "/defaults", "/containers/0", true),
                ("extra", "/extra", "/containers/1", true),
                ("defaults", "/defaults", "/containers/1", true),
                (
                    "res",
                    "/defaults/resources",
                    "/containers/2/resources",
                    false
                ),
            ]
        );
        // An anchored scalar, a merge in flow style, an alias as a key.
        let d =
            one("a: &v 5\nb: *v\nc: {<<: {x: 1, z: 0}, z: 2}\n&k key: 1\nother: *k\n*v : five\n");
        assert_eq!(
            d.value,
            json!({"a": 5, "b": 5, "c": {"x": 1, "z": 2}, "key": 1, "other": "key", "5": "five"})
        );
        // `y` is a boolean in YAML 1.1, as a key too.
        assert_eq!(one("{y: 1, n: 2}").value, json!({"true": 1, "false": 2}));
        let e = err("a: &k x\n*k : 2\nx: 3\n");
        assert!(e.message.contains("duplicate key \"x\""), "{e}");
        let e = err("a: &m [1]\nb:\n  <<: *m\n");
        assert!(e.message.contains("merge key"), "{e}");
    }

    #[test]
    fn scalar_resolution_is_yaml_1_1() {
        let text = fixture("scalars.yaml");
        let d = one(&text);
        let v = &d.value;
        assert_eq!(
            v["bools"],
            json!([
                true, true, true, false, true, true, false, false, true, true, false, false, true,
                false
            ])
        );
        assert_eq!(
            v["strings"],
            json!([
                "true",
                "yes",
                "tRUE",
                "yEs",
                "10.0.20348",
                "1.2.3",
                "0644",
                "2024-01-01"
            ])
        );
        assert_eq!(
            v["ints"],
            json!([420, 31, 15, 5, 1000, 5, -7, 0, 12345678901234567890u64])
        );
        assert_eq!(v["floats"], json!([1.5, -0.25, 0.5, 1000, 1, 9]));
        assert_eq!(v["nulls"], json!([null, null, null, null]));
        assert_eq!(v["empty"], Value::Null);
        assert_eq!(v["big"], json!(1.2345678901234568e29));
        assert_eq!(v["huge"], "1e400");
        assert_eq!(v["special"], json!([".inf", ".nan"]));
        assert_eq!(v["tagged"], json!(["12", 12]));
        // Non-string keys become their string form.
        assert_eq!(v["1"], "one");
        assert_eq!(v["true"], "yes-key");
        assert_eq!(v["16"], "hex-key");
        assert_eq!(d.map.locate("/16"), (14, 1));
        for (s, want) in [
            ("-0x10", json!(-16)),
            ("-9223372036854775808", json!(i64::MIN)),
            ("18446744073709551616", json!(18446744073709551616.0)),
            ("+", json!("+")),
            ("-", json!("-")),
            ("0x", json!("0x")),
            ("1e", json!("1e")),
            (".", json!(".")),
            ("1:20", json!("1:20")),
            ("0.1", json!(0.1)),
            ("1_0.5", json!(10.5)),
            ("<<x", json!("<<x")),
        ] {
            assert_eq!(resolve_plain(s), want, "{s}");
        }
    }

    #[test]
    fn duplicate_keys_are_an_error_with_their_line() {
        let e = load(&fixture("duplicate-key.yaml")).unwrap_err();
        assert_eq!((e.line, e.column), (5, 3));
        assert_eq!(
            e.message,
            "duplicate key \"name\" in mapping (first defined on line 4)"
        );
        // Keys that resolve to the same string are duplicates too.
        let e = err("true: 1\nyes: 2\n");
        assert_eq!(e.line, 2);
        let e = err("{a: 1, a: 2}");
        assert_eq!((e.line, e.column), (1, 8));
    }

    #[test]
    fn invalid_yaml_reports_the_parser_message_and_place() {
        let e = err("a: b: c\n");
        assert_eq!(
            e,
            LoadError {
                line: 1,
                column: 5,
                message: "invalid YAML: mapping values are not allowed in this context".into()
            }
        );
        let e = err("a:\n  - x\n  y: 1\n");
        assert_eq!(e.line, 3);
        let e = err("a:\n\tb: 1\n");
        assert_eq!(e.line, 2);
        assert!(e.message.contains("tab"), "{e}");
        let e = err("a: \"unterminated\n");
        assert!(e.message.starts_with("invalid YAML: "), "{e}");
        let e = err("a: *nope\n");
        assert!(e.message.contains("unknown anchor"), "{e}");
        let e = err("? [a, b]\n: c\n");
        assert!(e.message.contains("key must be a scalar"), "{e}");
        assert_eq!(
            e.to_string(),
            format!("{}:{}: {}", e.line, e.column, e.message)
        );
    }

    #[test]
    fn garbage_and_binary_input() {
        let e = err("a: 1\nb: \u{0}\u{1}\u{2}");
        assert_eq!((e.line, e.column), (2, 4));
        assert!(e.message.contains("control character"), "{e}");
        let e = load_bytes(b"a: 1\nb: \xff\xfe\x00garbage").unwrap_err();
        assert_eq!((e.line, e.column), (2, 4));
        assert!(e.message.contains("invalid UTF-8"), "{e}");
        assert!(load_bytes(b"\xff\xfea\x00:\x00").is_err());
        assert_eq!(load_bytes(b"a: 1\n").unwrap()[0].value, json!({"a": 1}));
        // Pseudo-random bytes: never a panic.
        const CHARS: &[u8] = b"ab:- \n\t[]{},#&*!|>'\"%@`?~0\r";
        let mut x: u32 = 12345;
        for n in 0..300 {
            let bytes: Vec<u8> = (0..(n % 97 + 1))
                .map(|_| {
                    x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
                    CHARS[(x >> 16) as usize % CHARS.len()]
                })
                .collect();
            let _ = load_bytes(&bytes);
        }
    }

    #[test]
    fn crlf_line_endings() {
        let text = fixture("deployment.yaml").replace('\n', "\r\n");
        let d = one(&text);
        assert_eq!(d.value, one(&fixture("deployment.yaml")).value);
        assert_eq!(
            d.map.locate("/spec/template/spec/containers/0/env/1/name"),
            (25, 11)
        );
        assert_eq!(
            span(&text, &d, "/metadata/annotations/note"),
            "|\r\n      line one\r\n      line two"
        );
        assert_eq!(
            span(
                &text,
                &d,
                "/spec/template/spec/nodeSelector/kubernetes.io~1os"
            ),
            "windows"
        );
    }

    #[test]
    fn bom_is_stripped_and_offsets_stay_in_the_whole_text() {
        let text = "\u{feff}a: 1\nb: ü\nc: x\n";
        let d = one(text);
        assert_eq!(d.value, json!({"a": 1, "b": "ü", "c": "x"}));
        assert_eq!(d.map.locate("/a"), (1, 1));
        assert_eq!(span(text, &d, "/a"), "1");
        assert_eq!(span(text, &d, "/b"), "ü");
        assert_eq!(span(text, &d, "/c"), "x");
        // Columns count characters.
        let t = "ä: {ö: 1, ü: 2}\n";
        let d = one(t);
        assert_eq!(d.map.locate("/ä/ü"), (1, 11));
        assert_eq!(span(t, &d, "/ä/ü"), "2");
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_stack_overflow() {
        let e = err(&"[".repeat(100_000));
        assert!(e.message.starts_with("invalid YAML"), "{e}");
        let e = err(&"{a: ".repeat(100_000));
        assert!(e.message.starts_with("invalid YAML"), "{e}");
        let e = err(&"- ".repeat(100_000));
        assert!(e.message.contains("nesting deeper than 256"), "{e}");
        let mut t = String::new();
        for i in 0..300 {
            t.push_str(&" ".repeat(i));
            t.push_str("k:\n");
        }
        let e = err(&t);
        assert!(e.message.contains("nesting deeper than 256"), "{e}");
        // Depth through aliases counts too.
        let mut t = String::from("a: &a ");
        t.push_str(&"[".repeat(200));
        t.push_str(&"]".repeat(200));
        t.push_str("\nb: ");
        t.push_str(&"[".repeat(100));
        t.push_str("*a");
        t.push_str(&"]".repeat(100));
        let e = err(&t);
        assert!(e.message.contains("nesting deeper"), "{e}");
        // 250 levels are fine.
        let t = format!("{}{}", "[".repeat(250), "]".repeat(250));
        assert!(load(&t).is_ok());
    }

    #[test]
    fn billion_laughs_fails_fast() {
        let e = load(&fixture("billion-laughs.yaml")).unwrap_err();
        assert!(e.message.contains("billion laughs"), "{e}");
        assert_eq!(e.line, 8);
        // Reasonable reuse of anchors is fine.
        let mut t = String::from("a: &a [1, 2, 3]\n");
        for i in 0..1000 {
            t.push_str(&format!("k{i}: *a\n"));
        }
        assert_eq!(one(&t).value["k999"], json!([1, 2, 3]));
    }

    #[test]
    fn empty_values_and_items() {
        let t = "a:\nb: # c\nc:\n- \n-\n-   # c\n- z\n";
        let d = one(t);
        assert_eq!(
            d.value,
            json!({"a": null, "b": null, "c": [null, null, null, "z"]})
        );
        let a = d.map.node("/a").unwrap();
        assert!(a.empty);
        assert_eq!((a.start, a.end, a.value_slot), (2, 2, 2));
        let b = d.map.node("/b").unwrap();
        assert_eq!(&t[..b.start], "a:\nb:");
        for i in 0..3 {
            let n = d.map.node(&format!("/c/{i}")).unwrap();
            assert_eq!(&t[n.entry_start..n.entry_start + 1], "-");
            assert_eq!(n.start, n.entry_start + 1);
        }
        assert_eq!(d.map.locate("/c/2"), (6, 1));
    }

    #[test]
    fn nested_block_sequences_find_their_dashes() {
        let t = "- - a\n  - b\n- c\n-\n  - d\n";
        let d = one(t);
        assert_eq!(d.value, json!([["a", "b"], "c", ["d"]]));
        let n = d.map.node("/0").unwrap();
        assert_eq!((n.entry_start, n.start, n.indent), (0, 2, 0));
        let n = d.map.node("/0/1").unwrap();
        assert_eq!((n.entry_start, n.indent), (8, 2));
        assert_eq!(d.map.node("/0").unwrap().child_indent, Some(2));
        let n = d.map.node("/2").unwrap();
        assert_eq!(&t[n.start..n.end], "- d");
        assert_eq!(n.entry_start, 16);
    }

    /// Each scalar's and flow collection's span loads, on its own, to the node's value.
    #[test]
    fn spans_hold_exactly_their_values() {
        let mut texts = vec![
            fixture("deployment.yaml"),
            fixture("scalars.yaml"),
            fixture("multi.yaml"),
        ];
        texts.push(texts[0].replace('\n', "\r\n"));
        texts.push(
            "a: 'x # y' # z\nb: \"q\\\"\" # c\nc: [1, \"]\", {d: '}'}] # e\nf: plain # g\n".into(),
        );
        // Trailing commas (the Kubernetes documentation's flow style), comments before brackets.
        texts.push(
            "{\n  a: {\n    b: 1,\n  },\n  c: [1, 2, ],\n  d: {e: 1, # c\n  },\n  f: {g: [x,], h: {},},\n}\n"
                .into(),
        );
        let mut checked = 0;
        for text in &texts {
            for doc in load(text).unwrap() {
                for (p, n) in doc.map.iter() {
                    let flow = n.kind.is_flow_collection();
                    if (n.kind != NodeKind::Scalar && !flow) || n.empty || n.anchored {
                        continue;
                    }
                    let alone = &text[n.start..n.end];
                    if flow {
                        assert!(alone.ends_with(['}', ']']), "{p}: {alone:?}");
                    }
                    let v = &load(alone).unwrap_or_else(|e| panic!("{p}: {alone:?}: {e}"))[0].value;
                    assert_eq!(Some(v), doc.value.pointer(p), "{p}: {alone:?}");
                    checked += 1;
                }
            }
        }
        assert!(checked > 100, "{checked}");
    }

    #[test]
    fn indentation_style_is_detected() {
        let d = one("a:\n    b:\n        - x\n");
        assert_eq!((d.map.indent_step(), d.map.seq_indent()), (4, 4));
        let d = one("a:\n  b:\n  - x\n");
        assert_eq!((d.map.indent_step(), d.map.seq_indent()), (2, 0));
        let d = one("a: 1\n");
        assert_eq!((d.map.indent_step(), d.map.seq_indent()), (2, 2));
    }

    #[test]
    fn json_documents() {
        let t = "{\n  \"a\": [1, 2.5, true, null],\n  \"b\": {\"c\": \"d\"}\n}\n";
        let d = one(t);
        assert!(d.map.is_json());
        assert_eq!(d.value, json!({"a": [1, 2.5, true, null], "b": {"c": "d"}}));
        assert_eq!(d.map.locate("/b/c"), (3, 9));
        assert_eq!(span(t, &d, "/b"), "{\"c\": \"d\"}");
        assert!(!one("{a: 1}").map.is_json());
        assert!(!one("{\"a\": x}").map.is_json());
        assert!(!one("[1, 'x']").map.is_json());
    }

    /// `n` Deployments with a little of everything, as one multi-document text.
    pub(crate) fn generate_manifests(n: usize) -> String {
        let mut t = String::new();
        for i in 0..n {
            t.push_str(&format!(
                "---\n# deployment {i}\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app-{i}\n  \
                 labels: {{app: app-{i}, tier: \"web\"}}\nspec:\n  replicas: {}\n  template:\n    spec:\n      \
                 nodeSelector:\n        kubernetes.io/os: windows\n      containers:\n      - name: c{i}\n        \
                 image: mcr.microsoft.com/windows/nanoserver:ltsc2022\n        args: [\"/c\", 'ping -t localhost']\n        \
                 env:\n        - name: A\n          value: \"{i}\"\n        - name: B\n          value: |\n            \
                 multi\n            line\n        resources:\n          limits: {{cpu: 500m, memory: 1Gi}}\n",
                i % 7
            ));
        }
        t
    }

    #[test]
    fn a_few_megabytes_load() {
        let text = generate_manifests(5_000);
        assert!(text.len() > 2_500_000, "{}", text.len());
        let docs = load(&text).unwrap();
        assert_eq!(docs.len(), 5_000);
        let last = &docs[4_999];
        assert_eq!(last.value["metadata"]["name"], "app-4999");
        let n = last
            .map
            .node("/spec/template/spec/containers/0/env/0/value")
            .unwrap();
        assert_eq!(&text[n.start..n.end], "\"4999\"");
    }

    /// The 50 MB case. Slow in debug builds (the parser dominates): run it with
    /// `cargo test --release -- --ignored fifty_megabytes`.
    #[test]
    #[ignore]
    fn fifty_megabytes_load() {
        let text = generate_manifests(75_000);
        assert!(text.len() > 50_000_000, "{}", text.len());
        let t0 = std::time::Instant::now();
        let docs = load(&text).unwrap();
        let secs = t0.elapsed().as_secs_f64();
        eprintln!(
            "{} MB in {secs:.2} s: {:.1} MB/s",
            text.len() / 1_000_000,
            text.len() as f64 / 1e6 / secs
        );
        assert_eq!(docs.len(), 75_000);
    }
}
