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
//! duplicate keys, non-scalar keys, control characters.
//!
//! Nodes produced by an alias (`*x`) or merged in by a merge key (`<<`) have no source map entry
//! of their own: [`SourceMap::locate`] points at the alias or at the mapping that merges them.
//!
//! Tabs and shallow indentation in quoted strings, which kubectl accepts and YAML 1.2 does not,
//! are loaded as kubectl loads them ([`kubectl`]); [`load_bytes_warned`] says where.

pub mod emit;
pub mod kubectl;

use std::collections::HashMap;
use std::fmt::{self, Write as _};

use saphyr_parser::{Event, Marker, Parser, ScalarStyle, ScanError, Span, Tag};
use serde_json::{Map, Value};

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
#[derive(Debug, Clone, Default)]
pub struct SourceMap {
    nodes: HashMap<String, NodeInfo>,
    json: bool,
    indent_step: Option<usize>,
    seq_indent: Option<usize>,
    aliases: Vec<AliasUse>,
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
        self.nodes.get(pointer)
    }

    /// The node at `pointer` or at its nearest existing parent, with that parent's pointer.
    pub fn nearest<'p>(&self, pointer: &'p str) -> Option<(&'p str, &NodeInfo)> {
        let mut p = pointer;
        loop {
            if let Some(n) = self.nodes.get(p) {
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
        self.nodes.iter().map(|(k, v)| (k.as_str(), v))
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

/// `warnings`: where the text uses what kubectl accepts and YAML 1.2 does not.
fn load_with(
    text: &str,
    with_map: bool,
    warnings: &mut Vec<LoadError>,
) -> Result<Vec<Document>, LoadError> {
    check_chars(text)?;
    let bom = if text.starts_with('\u{feff}') { 3 } else { 0 };
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
        map.nodes
            .insert(String::new(), root_info(1, 1, bom, NodeKind::Scalar));
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

// ---------------------------------------------------------------------------------------------
// Scalar resolution (YAML 1.1 as go-yaml v2 / sigs.k8s.io/yaml does it)
// ---------------------------------------------------------------------------------------------

/// Resolve a plain scalar the way Kubernetes does (go-yaml v2's resolve table).
pub fn resolve_plain(s: &str) -> Value {
    match s {
        "" | "~" | "null" | "Null" | "NULL" => return Value::Null,
        "y" | "Y" | "yes" | "Yes" | "YES" | "true" | "True" | "TRUE" | "on" | "On" | "ON" => {
            return Value::Bool(true);
        }
        "n" | "N" | "no" | "No" | "NO" | "false" | "False" | "FALSE" | "off" | "Off" | "OFF" => {
            return Value::Bool(false);
        }
        _ => {}
    }
    match s.as_bytes()[0] {
        b'0'..=b'9' | b'+' | b'-' => {
            let plain: std::borrow::Cow<'_, str> = if s.contains('_') {
                s.replace('_', "").into()
            } else {
                s.into()
            };
            if let Some(v) = go_parse_int(&plain) {
                return v;
            }
            if is_yaml_float(&plain)
                && let Some(v) = plain.parse::<f64>().ok().and_then(float_value)
            {
                return v;
            }
            Value::String(s.to_owned())
        }
        b'.' => {
            if is_yaml_float(s)
                && let Some(v) = s.parse::<f64>().ok().and_then(float_value)
            {
                return v;
            }
            Value::String(s.to_owned())
        }
        _ => Value::String(s.to_owned()),
    }
}

/// A float as JSON: integral values become integers (Go's `json.Marshal` of `float64(1)` is
/// `1`, which is what the API server sees); NaN and infinities are not JSON (`None`).
fn float_value(f: f64) -> Option<Value> {
    if !f.is_finite() {
        return None;
    }
    if f.fract() == 0.0 && f.abs() < 9_007_199_254_740_992.0 {
        return Some(Value::from(f as i64));
    }
    serde_json::Number::from_f64(f).map(Value::Number)
}

/// Go's `strconv.ParseInt(s, 0, 64)`, falling back to `ParseUint(s, 0, 64)`.
fn go_parse_int(s: &str) -> Option<Value> {
    let b = s.as_bytes();
    let (neg, signed, rest) = match b.first()? {
        b'-' => (true, true, &b[1..]),
        b'+' => (false, true, &b[1..]),
        _ => (false, false, b),
    };
    let (radix, digits) = if rest.len() > 1 && rest[0] == b'0' {
        match rest[1] {
            b'x' | b'X' => (16, &rest[2..]),
            b'o' | b'O' => (8, &rest[2..]),
            b'b' | b'B' => (2, &rest[2..]),
            _ => (8, &rest[1..]),
        }
    } else {
        (10, rest)
    };
    if digits.is_empty() {
        return None;
    }
    let mut mag: u64 = 0;
    for &d in digits {
        let v = (d as char).to_digit(radix)?;
        mag = mag.checked_mul(radix as u64)?.checked_add(v as u64)?;
    }
    if neg {
        if mag <= i64::MAX as u64 + 1 {
            return Some(Value::from((mag as i64).wrapping_neg()));
        }
        return None;
    }
    if mag <= i64::MAX as u64 {
        Some(Value::from(mag as i64))
    } else if !signed {
        Some(Value::from(mag))
    } else {
        None
    }
}

/// `^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$` (go-yaml v2's float syntax).
fn is_yaml_float(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    if matches!(b.first(), Some(b'-' | b'+')) {
        i += 1;
    }
    let digits = |i: &mut usize| {
        let s = *i;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        *i - s
    };
    if b.get(i) == Some(&b'.') {
        i += 1;
        if digits(&mut i) == 0 {
            return false;
        }
    } else {
        if digits(&mut i) == 0 {
            return false;
        }
        if b.get(i) == Some(&b'.') {
            i += 1;
            digits(&mut i);
        }
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'-' | b'+')) {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == b.len()
}

fn resolve_scalar(v: &str, style: ScalarStyle, tag: Option<&Tag>) -> Value {
    if let Some(tag) = tag
        && tag.is_yaml_core_schema()
    {
        match tag.suffix.as_str() {
            "str" | "binary" | "timestamp" => return Value::String(v.to_owned()),
            "null" => return Value::Null,
            "bool" | "int" | "float" => return resolve_plain(v),
            _ => {}
        }
    }
    match style {
        ScalarStyle::Plain => resolve_plain(v),
        _ => Value::String(v.to_owned()),
    }
}

/// The string form of a scalar key (`true: x` has key `"true"`, `0x10: y` has key `"16"`).
fn key_string(v: Value, raw: &str) -> String {
    match v {
        Value::String(s) => s,
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::Null => raw.to_owned(),
        _ => raw.to_owned(),
    }
}

// ---------------------------------------------------------------------------------------------
// Loader
// ---------------------------------------------------------------------------------------------

/// Character index → byte offset (saphyr's markers count characters).
enum IndexConv {
    Ascii,
    /// Byte offset of every 64th character.
    Table(Vec<usize>),
}

impl IndexConv {
    fn new(text: &str) -> Self {
        if text.is_ascii() {
            return IndexConv::Ascii;
        }
        let mut t = Vec::with_capacity(text.len() / 64 + 1);
        for (n, (i, _)) in text.char_indices().enumerate() {
            if n % 64 == 0 {
                t.push(i);
            }
        }
        IndexConv::Table(t)
    }

    fn byte(&self, text: &str, ci: usize) -> usize {
        match self {
            IndexConv::Ascii => ci.min(text.len()),
            IndexConv::Table(t) => {
                let Some(&base) = t.get(ci / 64) else {
                    return text.len();
                };
                let b = text.as_bytes();
                let mut i = base;
                for _ in 0..ci % 64 {
                    if i >= b.len() {
                        return b.len();
                    }
                    i += utf8_width(b[i]);
                }
                i.min(b.len())
            }
        }
    }
}

fn utf8_width(lead: u8) -> usize {
    match lead {
        0..=0x7f => 1,
        0xc0..=0xdf => 2,
        0xe0..=0xef => 3,
        _ => 4,
    }
}

/// Entry context of a value: where its key or `-` is.
#[derive(Debug, Clone)]
struct Ctx {
    line: usize,
    column: usize,
    key: Option<(usize, usize)>,
    entry_start: usize,
    value_slot: usize,
    indent: usize,
    in_flow: bool,
    /// Pointer length before this value's token was pushed.
    ptr_base: usize,
}

struct PendingKey {
    name: String,
    merge: bool,
    line: usize,
    column: usize,
    start: usize,
    end: usize,
    slot: usize,
    indent: usize,
}

struct Frame {
    is_map: bool,
    flow: bool,
    map: Map<String, Value>,
    seq: Vec<Value>,
    ctx: Ctx,
    start: usize,
    last_end: usize,
    len: usize,
    child_indent: Option<usize>,
    pending: Option<PendingKey>,
    merges: Vec<Map<String, Value>>,
    anchor: usize,
    nodes: usize,
    depth: usize,
    record: bool,
    /// Column of the key when this is the block value of a block mapping entry.
    under_block_key: Option<usize>,
}

struct Anchor {
    value: Value,
    /// Pointer of the anchored node (empty without a source map).
    pointer: String,
    /// What one alias of it costs against [`MAX_ALIAS_NODES`]: its nodes, plus one per
    /// [`ALIAS_BYTES_PER_NODE`] bytes of text, so that aliasing a long string is bounded too.
    nodes: usize,
    depth: usize,
}

/// Bytes of scalar and key text that count as one node of alias expansion: with
/// [`MAX_ALIAS_NODES`] this bounds expanded text per document to about 64 MiB.
pub const ALIAS_BYTES_PER_NODE: usize = 64;

/// The alias cost of an anchored value of `nodes` nodes.
fn alias_weight(nodes: usize, value: &Value) -> usize {
    fn text_bytes(v: &Value) -> usize {
        match v {
            Value::String(s) => s.len(),
            Value::Array(a) => a.iter().map(text_bytes).sum(),
            Value::Object(m) => m.iter().map(|(k, v)| k.len() + text_bytes(v)).sum(),
            _ => 0,
        }
    }
    nodes.saturating_add(text_bytes(value) / ALIAS_BYTES_PER_NODE)
}

struct Loader<'a> {
    /// The whole text.
    full: &'a str,
    /// The text handed to the parser (after the BOM); offsets are converted back with `off`.
    body: &'a str,
    off: usize,
    conv: IndexConv,
    docs: Vec<Document>,
    stack: Vec<Frame>,
    ptr: String,
    /// The current document's nodes, put in a map of the right size at its end (growing the
    /// map as they come would hash every pointer again on each resize).
    nodes: Vec<(String, NodeInfo)>,
    /// Whether to build the source map (pointers and `nodes`); values and errors do not depend
    /// on it.
    with_map: bool,
    anchors: HashMap<usize, Anchor>,
    /// The current document's aliases ([`SourceMap::aliases`]).
    aliases: Vec<AliasUse>,
    expanded: usize,
    json: bool,
    indent_step: Option<usize>,
    seq_indent: Option<usize>,
    root: Option<Value>,
    doc_start: (usize, usize, usize),
    range_start: usize,
    /// The relaxed copy of `body` to parse instead, whose positions are mapped back.
    relaxed: Option<&'a kubectl::Relaxed>,
    /// The parser's error, in the parsed text's positions.
    scan_error: Option<ScanError>,
}

impl<'a> Loader<'a> {
    fn new(
        full: &'a str,
        off: usize,
        with_map: bool,
        relaxed: Option<&'a kubectl::Relaxed>,
    ) -> Self {
        let body = &full[off..];
        Loader {
            full,
            body,
            off,
            conv: IndexConv::new(body),
            docs: Vec::new(),
            stack: Vec::new(),
            ptr: String::new(),
            nodes: Vec::new(),
            with_map,
            anchors: HashMap::new(),
            aliases: Vec::new(),
            expanded: 0,
            json: true,
            indent_step: None,
            seq_indent: None,
            root: None,
            doc_start: (1, 1, 0),
            range_start: 0,
            relaxed,
            scan_error: None,
        }
    }

    /// A position in the parsed text as a position in `body`.
    fn unshift(&self, m: Marker) -> Marker {
        self.relaxed.map_or(m, |r| r.unshift(m))
    }

    /// Byte offset (in the whole text) of a marker.
    fn b(&self, m: Marker) -> usize {
        self.conv.byte(self.body, m.index()) + self.off
    }

    fn bytes(&self) -> &'a [u8] {
        self.full.as_bytes()
    }

    fn err(&self, m: Marker, message: String) -> LoadError {
        LoadError {
            line: m.line(),
            column: m.col() + 1,
            message,
        }
    }

    fn scan_err(&mut self, e: ScanError) -> LoadError {
        let err = self.err(
            self.unshift(*e.marker()),
            format!("invalid YAML: {}", e.info()),
        );
        self.scan_error = Some(e);
        err
    }

    fn run(&mut self) -> Result<(), LoadError> {
        let mut parser = Parser::new_from_str(self.relaxed.map_or(self.body, |r| r.text()));
        while let Some(ev) = parser.next_event() {
            let (ev, span) = ev.map_err(|e| self.scan_err(e))?;
            let span = Span::new(self.unshift(span.start), self.unshift(span.end));
            match ev {
                Event::StreamStart | Event::Nothing => {}
                Event::StreamEnd => break,
                Event::DocumentStart(_) => {
                    self.doc_start = (span.start.line(), span.start.col() + 1, self.b(span.start));
                }
                Event::DocumentEnd => self.end_document(span),
                Event::Scalar(v, style, aid, tag) => {
                    if self.expecting_key() {
                        self.key_scalar(&v, style, aid, tag.as_deref(), span)?;
                    } else {
                        self.value_scalar(&v, style, aid, tag.as_deref(), span)?;
                    }
                }
                Event::Alias(id) => {
                    if self.expecting_key() {
                        self.key_alias(id, span)?;
                    } else {
                        self.value_alias(id, span)?;
                    }
                }
                Event::MappingStart(aid, _) => self.start_collection(true, aid, span)?,
                Event::SequenceStart(aid, _) => self.start_collection(false, aid, span)?,
                Event::MappingEnd | Event::SequenceEnd => self.end_collection(span)?,
            }
        }
        if let Some(last) = self.docs.last_mut() {
            last.text_range.1 = self.full.len();
        }
        Ok(())
    }

    fn expecting_key(&self) -> bool {
        matches!(self.stack.last(), Some(f) if f.is_map && f.pending.is_none())
    }

    fn end_document(&mut self, span: Span) {
        let start = self.b(span.start);
        let explicit = self.bytes()[start..].starts_with(b"...");
        let end = if explicit { self.b(span.end) } else { start };
        let value = self.root.take().unwrap_or(Value::Null);
        let (line, _, _) = self.doc_start;
        let mut nodes = HashMap::with_capacity(self.nodes.len());
        nodes.extend(self.nodes.drain(..));
        let map = SourceMap {
            nodes,
            json: self.json,
            indent_step: self.indent_step.take(),
            seq_indent: self.seq_indent.take(),
            aliases: std::mem::take(&mut self.aliases),
        };
        self.docs.push(Document {
            value,
            map,
            start_line: line,
            text_range: (self.range_start, end.max(self.range_start)),
        });
        self.range_start = end.max(self.range_start);
        self.anchors.clear();
        self.expanded = 0;
        self.json = true;
        self.stack.clear();
        self.ptr.clear();
    }

    /// Whether children of the top frame are recorded in the source map.
    fn recording(&self) -> bool {
        match self.stack.last() {
            None => true,
            Some(f) => f.record && !f.pending.as_ref().is_some_and(|k| k.merge),
        }
    }

    /// Work out the entry context of a value starting at byte `start` and push its pointer token.
    fn begin_value(&mut self, start: usize, m: Marker) -> Ctx {
        let ptr_base = self.ptr.len();
        let Some(top) = self.stack.last_mut() else {
            let (line, column, _) = self.doc_start;
            return Ctx {
                line,
                column,
                key: None,
                entry_start: start,
                value_slot: start,
                indent: 0,
                in_flow: false,
                ptr_base,
            };
        };
        if top.is_map {
            let k = top.pending.as_ref().expect("value follows a key");
            if self.with_map {
                self.ptr.push('/');
                self.ptr.push_str(&crate::model::pointer::escape(&k.name));
            }
            return Ctx {
                line: k.line,
                column: k.column,
                key: Some((k.start, k.end)),
                entry_start: k.start,
                value_slot: k.slot,
                indent: k.indent,
                in_flow: top.flow,
                ptr_base,
            };
        }
        if self.with_map {
            let _ = write!(self.ptr, "/{}", top.seq.len());
        }
        if top.flow {
            return Ctx {
                line: m.line(),
                column: m.col() + 1,
                key: None,
                entry_start: start,
                value_slot: start,
                indent: m.col(),
                in_flow: true,
                ptr_base,
            };
        }
        let dash = find_dash_before(self.full.as_bytes(), start);
        let (entry_start, value_slot, indent) = match dash {
            Some(d) => (d, d + 1, col_of(self.full, d)),
            None => (start, start, m.col()),
        };
        let top = self.stack.last_mut().expect("checked above");
        if top.len == 0 {
            top.child_indent = Some(indent);
            top.start = top.start.min(entry_start);
            if let Some(k) = top.under_block_key
                && self.seq_indent.is_none()
                && indent >= k
            {
                self.seq_indent = Some(indent - k);
            }
        }
        Ctx {
            line: m.line(),
            column: m.col() + 1,
            key: None,
            entry_start,
            value_slot,
            indent,
            in_flow: false,
            ptr_base,
        }
    }

    fn key_scalar(
        &mut self,
        v: &str,
        style: ScalarStyle,
        aid: usize,
        tag: Option<&Tag>,
        span: Span,
    ) -> Result<(), LoadError> {
        let start = self.b(span.start);
        let raw_end = self.b(span.end);
        let end = match style {
            ScalarStyle::Plain => raw_end,
            ScalarStyle::SingleQuoted | ScalarStyle::DoubleQuoted => {
                quoted_end(self.bytes(), start, raw_end)
            }
            ScalarStyle::Literal | ScalarStyle::Folded => trim_back(self.bytes(), start, raw_end),
        };
        if style != ScalarStyle::DoubleQuoted {
            self.json = false;
        }
        let merge = style == ScalarStyle::Plain && v == "<<" && tag.is_none();
        let value = resolve_scalar(v, style, tag);
        if aid > 0 {
            let pointer = if self.with_map {
                format!(
                    "{}/{}",
                    self.ptr,
                    crate::model::pointer::escape(&key_string(value.clone(), v))
                )
            } else {
                String::new()
            };
            self.anchors.insert(
                aid,
                Anchor {
                    value: value.clone(),
                    pointer,
                    nodes: alias_weight(1, &value),
                    depth: 1,
                },
            );
        }
        let name = key_string(value, v);
        self.push_key(name, merge, span.start, start, end)
    }

    fn key_alias(&mut self, id: usize, span: Span) -> Result<(), LoadError> {
        self.json = false;
        let value = match self.anchors.get(&id) {
            Some(a) => a.value.clone(),
            None => return Err(self.err(span.start, "invalid YAML: unknown anchor".into())),
        };
        let name = match value {
            Value::Array(_) | Value::Object(_) => {
                return Err(self.err(
                    span.start,
                    "unsupported mapping key: a key must be a scalar, not a collection".into(),
                ));
            }
            Value::Null => "null".to_owned(),
            other => key_string(other, ""),
        };
        let (start, end) = (self.b(span.start), self.b(span.end));
        self.push_key(name, false, span.start, start, end)
    }

    fn push_key(
        &mut self,
        name: String,
        merge: bool,
        m: Marker,
        start: usize,
        end: usize,
    ) -> Result<(), LoadError> {
        let slot = slot_after_key(self.bytes(), end);
        let indent = m.col();
        let mut step = None;
        let top = self.stack.last_mut().expect("a key is inside a mapping");
        if top.len == 0 {
            top.child_indent = Some(indent);
            top.start = top.start.min(start);
            if let Some(k) = top.under_block_key
                && indent > k
            {
                step = Some(indent - k);
            }
        }
        top.pending = Some(PendingKey {
            name,
            merge,
            line: m.line(),
            column: m.col() + 1,
            start,
            end,
            slot,
            indent,
        });
        if self.indent_step.is_none() {
            self.indent_step = step;
        }
        Ok(())
    }

    fn value_scalar(
        &mut self,
        v: &str,
        style: ScalarStyle,
        aid: usize,
        tag: Option<&Tag>,
        span: Span,
    ) -> Result<(), LoadError> {
        let raw_start = self.b(span.start);
        let raw_end = self.b(span.end);
        let empty = style == ScalarStyle::Plain && v.is_empty() && aid == 0 && tag.is_none();
        let record = self.recording();
        let ctx = self.begin_value(raw_start, span.start);
        let b = self.bytes();
        let (start, end) = if empty {
            (ctx.value_slot, ctx.value_slot)
        } else {
            match style {
                ScalarStyle::Plain => (raw_start, raw_end),
                ScalarStyle::SingleQuoted | ScalarStyle::DoubleQuoted => {
                    (raw_start, quoted_end(b, raw_start, raw_end))
                }
                ScalarStyle::Literal | ScalarStyle::Folded => {
                    block_scalar_span(b, ctx.value_slot, raw_start, raw_end)
                }
            }
        };
        let value = resolve_scalar(v, style, tag);
        if self.json {
            let json_like = match style {
                ScalarStyle::DoubleQuoted => true,
                ScalarStyle::Plain => !value.is_string() && !empty,
                _ => false,
            };
            if !json_like || aid > 0 || tag.is_some() || self.stack.is_empty() {
                self.json = false;
            }
        }
        // An empty block sequence item is where its `-` is (saphyr marks the end of the line).
        let block_item = ctx.key.is_none() && !ctx.in_flow && ctx.value_slot != ctx.entry_start;
        let column = if empty && block_item {
            ctx.indent + 1
        } else {
            ctx.column
        };
        let info = NodeInfo {
            line: ctx.line,
            column,
            start,
            end,
            key: ctx.key,
            entry_start: ctx.entry_start.min(start),
            value_slot: ctx.value_slot,
            indent: ctx.indent,
            in_flow: ctx.in_flow,
            kind: NodeKind::Scalar,
            child_indent: None,
            len: 0,
            empty,
            anchored: aid > 0,
        };
        self.finish_value(ctx, info, value, aid, 1, 1, record)
    }

    fn value_alias(&mut self, id: usize, span: Span) -> Result<(), LoadError> {
        self.json = false;
        let (nodes, depth) = match self.anchors.get(&id) {
            Some(a) => (a.nodes, a.depth),
            None => return Err(self.err(span.start, "invalid YAML: unknown anchor".into())),
        };
        self.expanded += nodes;
        if self.expanded > MAX_ALIAS_NODES {
            return Err(self.err(
                span.start,
                format!(
                    "invalid YAML: aliases expand to more than {MAX_ALIAS_NODES} nodes \
                     (a \"billion laughs\" alias bomb?)"
                ),
            ));
        }
        if self.stack.len() + depth > MAX_DEPTH {
            return Err(self.err(
                span.start,
                format!("invalid YAML: nesting deeper than {MAX_DEPTH} levels"),
            ));
        }
        let value = self.anchors[&id].value.clone();
        let (start, end) = (self.b(span.start), self.b(span.end));
        let record = self.recording();
        let ctx = self.begin_value(start, span.start);
        if self.with_map {
            // Only what a merge key (`<<: *a`, `<<: [*a, *b]`) merges in is not recorded.
            let merge = !record;
            let pointer = match self.ptr.rfind("/<<") {
                Some(i) if merge => &self.ptr[..i],
                _ => &self.ptr,
            };
            let name = self.full.get(start..end).unwrap_or("");
            self.aliases.push(AliasUse {
                name: name.strip_prefix('*').unwrap_or(name).to_owned(),
                anchor: self.anchors[&id].pointer.clone(),
                pointer: pointer.to_owned(),
                merge,
            });
        }
        let info = NodeInfo {
            line: ctx.line,
            column: ctx.column,
            start,
            end,
            key: ctx.key,
            entry_start: ctx.entry_start.min(start),
            value_slot: ctx.value_slot,
            indent: ctx.indent,
            in_flow: ctx.in_flow,
            kind: NodeKind::Alias,
            child_indent: None,
            len: 0,
            empty: false,
            anchored: false,
        };
        self.finish_value(ctx, info, value, 0, nodes, depth, record)
    }

    fn start_collection(&mut self, is_map: bool, aid: usize, span: Span) -> Result<(), LoadError> {
        if self.expecting_key() {
            return Err(self.err(
                span.start,
                "unsupported mapping key: a key must be a scalar, not a collection".into(),
            ));
        }
        if self.stack.len() >= MAX_DEPTH {
            return Err(self.err(
                span.start,
                format!("invalid YAML: nesting deeper than {MAX_DEPTH} levels"),
            ));
        }
        let b = self.bytes();
        let mut start = self.b(span.start);
        let tok_end = self.b(span.end);
        let parent_flow = self.stack.last().is_some_and(|f| f.flow);
        let flow = parent_flow || (tok_end > start && matches!(b[tok_end - 1], b'{' | b'['));
        if !flow && !is_map && tok_end == start && b.get(start) != Some(&b'-') {
            // A block sequence's start marker may sit on its first item: move it to the `-`.
            if let Some(d) = find_dash_before(b, start) {
                start = d;
            }
        }
        if self.stack.is_empty() && !flow {
            self.json = false;
        }
        if aid > 0 {
            self.json = false;
        }
        let record = self.recording();
        let parent_block_map = self.stack.last().is_some_and(|f| f.is_map && !f.flow);
        let ctx = self.begin_value(start, span.start);
        let under_block_key = (parent_block_map && !flow).then_some(ctx.indent);
        self.stack.push(Frame {
            is_map,
            flow,
            map: Map::new(),
            seq: Vec::new(),
            ctx,
            start,
            last_end: tok_end.max(start),
            len: 0,
            child_indent: None,
            pending: None,
            merges: Vec::new(),
            anchor: aid,
            nodes: 1,
            depth: 1,
            record,
            under_block_key,
        });
        Ok(())
    }

    fn end_collection(&mut self, span: Span) -> Result<(), LoadError> {
        let mut f = self.stack.pop().expect("parser balances collections");
        let end = if f.flow {
            // The end token's span runs on over blanks and a comment: stop after the bracket.
            // After a trailing comma in a mapping (`{a: 1, }`) it starts at the comma: the
            // bracket comes after blanks, line breaks and comments.
            let s = self.b(span.start);
            let e = match closing_bracket(self.bytes(), s) {
                Some(at) => at + 1,
                None => s,
            };
            e.max(f.start)
        } else {
            f.last_end
        };
        let value = if f.is_map {
            for src in std::mem::take(&mut f.merges) {
                for (k, v) in src {
                    if !f.map.contains_key(&k) {
                        f.map.insert(k, v);
                    }
                }
            }
            Value::Object(std::mem::take(&mut f.map))
        } else {
            Value::Array(std::mem::take(&mut f.seq))
        };
        let kind = match (f.is_map, f.flow) {
            (true, false) => NodeKind::BlockMapping,
            (true, true) => NodeKind::FlowMapping,
            (false, false) => NodeKind::BlockSequence,
            (false, true) => NodeKind::FlowSequence,
        };
        let ctx = f.ctx.clone();
        let entry_start = if ctx.key.is_some() || ctx.value_slot != ctx.entry_start {
            ctx.entry_start
        } else {
            ctx.entry_start.min(f.start)
        };
        let info = NodeInfo {
            line: ctx.line,
            column: ctx.column,
            start: f.start,
            end,
            key: ctx.key,
            entry_start,
            value_slot: ctx.value_slot.min(f.start),
            indent: ctx.indent,
            in_flow: ctx.in_flow,
            kind,
            child_indent: if f.flow { None } else { f.child_indent },
            len: f.len,
            empty: false,
            anchored: f.anchor > 0,
        };
        self.finish_value(ctx, info, value, f.anchor, f.nodes, f.depth, f.record)
    }

    /// Record `info` at the current pointer, then pop the pointer back to `base`.
    fn record(&mut self, info: Option<NodeInfo>, base: usize) {
        if let Some(info) = info.filter(|_| self.with_map) {
            self.nodes.push((self.ptr.clone(), info));
        }
        self.ptr.truncate(base);
    }

    #[allow(clippy::too_many_arguments)]
    fn finish_value(
        &mut self,
        ctx: Ctx,
        info: NodeInfo,
        value: Value,
        aid: usize,
        nodes: usize,
        depth: usize,
        record: bool,
    ) -> Result<(), LoadError> {
        let end = info.end;
        let info = record.then_some(info);
        if aid > 0 {
            let pointer = if self.with_map {
                self.ptr.clone()
            } else {
                String::new()
            };
            self.anchors.insert(
                aid,
                Anchor {
                    value: value.clone(),
                    pointer,
                    nodes: alias_weight(nodes, &value),
                    depth,
                },
            );
        }
        let Some(parent) = self.stack.last_mut() else {
            self.root = Some(value);
            self.record(info, ctx.ptr_base);
            return Ok(());
        };
        parent.len += 1;
        parent.last_end = parent.last_end.max(end);
        parent.nodes = parent.nodes.saturating_add(nodes);
        parent.depth = parent.depth.max(depth + 1);
        if !parent.is_map {
            parent.seq.push(value);
            self.record(info, ctx.ptr_base);
            return Ok(());
        }
        let key = parent.pending.take().expect("value follows a key");
        if key.merge {
            self.ptr.truncate(ctx.ptr_base);
            let parent = self.stack.last_mut().expect("checked above");
            match value {
                Value::Object(m) => parent.merges.push(m),
                Value::Array(items) if items.iter().all(Value::is_object) => {
                    for item in items {
                        if let Value::Object(m) = item {
                            parent.merges.push(m);
                        }
                    }
                }
                _ => {
                    return Err(LoadError {
                        line: key.line,
                        column: key.column,
                        message: "invalid YAML: a merge key `<<` needs a mapping or a list of \
                                  mappings"
                            .into(),
                    });
                }
            }
            return Ok(());
        }
        match parent.map.entry(key.name) {
            serde_json::map::Entry::Vacant(e) => {
                e.insert(value);
                self.record(info, ctx.ptr_base);
                Ok(())
            }
            serde_json::map::Entry::Occupied(e) => {
                let name = e.key().clone();
                self.ptr.truncate(ctx.ptr_base);
                let mut first = self.ptr.clone();
                first.push('/');
                first.push_str(&crate::model::pointer::escape(&name));
                let seen = match self.nodes.iter().find(|(p, _)| *p == first) {
                    Some((_, n)) => format!(" (first defined on line {})", n.line),
                    None => String::new(),
                };
                Err(LoadError {
                    line: key.line,
                    column: key.column,
                    message: format!("duplicate key {name:?} in mapping{seen}"),
                })
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Text helpers shared with the editor
// ---------------------------------------------------------------------------------------------

/// Byte offset of the start of the line holding byte `pos`.
pub(crate) fn line_start(b: &[u8], pos: usize) -> usize {
    let pos = pos.min(b.len());
    b[..pos]
        .iter()
        .rposition(|&c| c == b'\n')
        .map_or(0, |i| i + 1)
}

/// 0-based column, in characters, of byte `pos`.
pub(crate) fn col_of(text: &str, pos: usize) -> usize {
    let ls = line_start(text.as_bytes(), pos);
    text.get(ls..pos).map_or(pos - ls, |s| s.chars().count())
}

/// Where a comment starts in `b[ls..end]` (a `#` at the line start or after a blank), else `end`.
fn comment_start(b: &[u8], ls: usize, end: usize) -> usize {
    (ls..end)
        .find(|&i| b[i] == b'#' && (i == ls || matches!(b[i - 1], b' ' | b'\t')))
        .unwrap_or(end)
}

/// The `-` of the block sequence item whose node starts at `pos` (looking back over blanks,
/// comments and blank lines).
pub(crate) fn find_dash_before(b: &[u8], pos: usize) -> Option<usize> {
    let mut end = pos.min(b.len());
    for _ in 0..1000 {
        let ls = line_start(b, end);
        let region_end = comment_start(b, ls, end);
        let mut q = region_end;
        while q > ls && matches!(b[q - 1], b' ' | b'\t' | b'\r' | b'\n') {
            q -= 1;
        }
        if q > ls {
            return (b[q - 1] == b'-').then_some(q - 1);
        }
        if ls == 0 {
            return None;
        }
        end = ls - 1;
    }
    None
}

/// End of a quoted scalar starting at (or, after its anchor/tag, after) `start`.
fn quoted_end(b: &[u8], start: usize, limit: usize) -> usize {
    let limit = limit.min(b.len());
    let Some(q) = (start..limit).find(|&i| b[i] == b'"' || b[i] == b'\'') else {
        return limit;
    };
    let quote = b[q];
    let mut i = q + 1;
    while i < limit {
        let c = b[i];
        if quote == b'"' && c == b'\\' {
            i += 2;
            continue;
        }
        if c == quote {
            if quote == b'\'' && b.get(i + 1) == Some(&b'\'') {
                i += 2;
                continue;
            }
            return i + 1;
        }
        i += 1;
    }
    limit
}

fn trim_back(b: &[u8], start: usize, end: usize) -> usize {
    let mut e = end.min(b.len());
    while e > start && matches!(b[e - 1], b' ' | b'\t' | b'\r' | b'\n') {
        e -= 1;
    }
    e
}

/// Byte offset right after the `:` that follows a key ending at `key_end` (or `key_end`).
fn slot_after_key(b: &[u8], key_end: usize) -> usize {
    let mut i = key_end;
    while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\r' | b'\n') {
        i += 1;
    }
    if b.get(i) == Some(&b':') {
        i + 1
    } else {
        key_end
    }
}

/// Span of a literal/folded block scalar: from its `|`/`>` header (or anchor/tag) to the end of
/// its last content line. saphyr's span starts at the content and ends after trailing breaks.
fn block_scalar_span(b: &[u8], slot: usize, raw_start: usize, raw_end: usize) -> (usize, usize) {
    let header = block_header(b, slot, raw_start);
    let mut he = header;
    if matches!(b.get(he), Some(b'|' | b'>')) {
        he += 1;
        while he < b.len() && matches!(b[he], b'-' | b'+' | b'0'..=b'9') {
            he += 1;
        }
    }
    let end = trim_back(b, header, raw_end.max(he)).max(he);
    (header, end)
}

fn block_header(b: &[u8], slot: usize, raw_start: usize) -> usize {
    let mut p = slot;
    while p < b.len() && matches!(b[p], b' ' | b'\t') {
        p += 1;
    }
    if p <= raw_start && matches!(b.get(p), Some(b'|' | b'>' | b'&' | b'!')) {
        return p;
    }
    if matches!(b.get(raw_start), Some(b'|' | b'>' | b'&' | b'!')) {
        return raw_start;
    }
    // The header is on an earlier line: the last non-blank line before the content.
    let mut end = line_start(b, raw_start);
    while end > 0 {
        let ls = line_start(b, end - 1);
        let ce = comment_start(b, ls, end - 1);
        let mut q = ce;
        while q > ls && matches!(b[q - 1], b' ' | b'\t' | b'\r' | b'\n') {
            q -= 1;
        }
        if q > ls {
            let mut i = q;
            while i > ls && matches!(b[i - 1], b'-' | b'+' | b'0'..=b'9') {
                i -= 1;
            }
            if i > ls && matches!(b[i - 1], b'|' | b'>') {
                return i - 1;
            }
            return raw_start;
        }
        end = ls;
    }
    raw_start
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
