//! The loader proper: it drives `saphyr-parser`'s event stream into [`serde_json::Value`]s
//! and records each node's [`NodeInfo`] (pointer, line:column, byte spans, style, anchors and
//! alias uses), capping depth and alias expansion before memory is spent.

use std::collections::HashMap;
use std::fmt::Write as _;

use saphyr_parser::{Event, Marker, Parser, ScalarStyle, ScanError, Span, Tag};
use serde_json::{Map, Value};

use super::budget::Budget;
use super::scalar::{key_string, resolve_scalar};
use super::text::{
    block_scalar_span, col_of, find_dash_before, quoted_end, slot_after_key, trim_back,
};
use super::{
    AliasUse, Document, LoadError, MAX_ALIAS_NODES, MAX_DEPTH, NodeInfo, NodeKind, SourceMap,
    closing_bracket, kubectl,
};

/// Character index → byte offset (saphyr's markers count characters).
pub(super) enum IndexConv {
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

pub(super) fn utf8_width(lead: u8) -> usize {
    match lead {
        0..=0x7f => 1,
        0xc0..=0xdf => 2,
        0xe0..=0xef => 3,
        _ => 4,
    }
}

/// Entry context of a value: where its key or `-` is.
#[derive(Debug, Clone)]
pub(super) struct Ctx {
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

impl Ctx {
    /// Where a scalar or an alias (a node without entries) spanning `start..end` is in this
    /// context.
    fn leaf(&self, kind: NodeKind, start: usize, end: usize) -> NodeInfo {
        NodeInfo {
            line: self.line,
            column: self.column,
            start,
            end,
            key: self.key,
            entry_start: self.entry_start.min(start),
            value_slot: self.value_slot,
            indent: self.indent,
            in_flow: self.in_flow,
            kind,
            child_indent: None,
            len: 0,
            empty: false,
            anchored: false,
        }
    }
}

pub(super) struct PendingKey {
    name: String,
    merge: bool,
    line: usize,
    column: usize,
    start: usize,
    end: usize,
    slot: usize,
    indent: usize,
}

pub(super) struct Frame {
    is_map: bool,
    pub(super) flow: bool,
    map: Map<String, Value>,
    seq: Vec<Value>,
    ctx: Ctx,
    pub(super) start: usize,
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

pub(super) struct Anchor {
    value: Value,
    /// Pointer of the anchored node (empty without a source map).
    pointer: String,
    /// What one alias of it costs against [`MAX_ALIAS_NODES`]: its nodes, plus one per
    /// [`ALIAS_BYTES_PER_NODE`] bytes of text, so that aliasing a long string is bounded too.
    nodes: usize,
    depth: usize,
}

impl Anchor {
    /// Anchor `value` (`nodes` nodes, `depth` levels) found at `pointer`; its cost per alias is
    /// [`alias_weight`].
    fn new(value: Value, pointer: String, nodes: usize, depth: usize) -> Self {
        let nodes = alias_weight(nodes, &value);
        Anchor {
            value,
            pointer,
            nodes,
            depth,
        }
    }
}

/// Bytes of scalar and key text that count as one node of alias expansion: with
/// [`MAX_ALIAS_NODES`] this bounds expanded text per document to about 64 MiB.
pub const ALIAS_BYTES_PER_NODE: usize = 64;

/// The alias cost of an anchored value of `nodes` nodes.
pub(super) fn alias_weight(nodes: usize, value: &Value) -> usize {
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

pub(super) struct Loader<'a> {
    /// The whole text.
    full: &'a str,
    /// The text handed to the parser (after the BOM); offsets are converted back with `off`.
    body: &'a str,
    off: usize,
    conv: IndexConv,
    pub(super) docs: Vec<Document>,
    pub(super) stack: Vec<Frame>,
    ptr: String,
    /// The current document's source map, its nodes recorded as they end.
    map: SourceMap,
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
    pub(super) scan_error: Option<ScanError>,
    /// What the text may still cost ([`super::budget`]).
    budget: Budget,
    /// Where the node being recorded starts, for an error of the budget.
    at: Marker,
}

impl<'a> Loader<'a> {
    pub(super) fn new(
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
            map: SourceMap::default(),
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
            budget: Budget::new(full.len()),
            at: Marker::new(0, 1, 0),
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

    pub(super) fn run(&mut self) -> Result<(), LoadError> {
        let mut parser = Parser::new_from_str(self.relaxed.map_or(self.body, |r| r.text()));
        while let Some(ev) = parser.next_event() {
            let (ev, span) = ev.map_err(|e| self.scan_err(e))?;
            let span = Span::new(self.unshift(span.start), self.unshift(span.end));
            if matches!(
                ev,
                Event::Scalar(..)
                    | Event::Alias(_)
                    | Event::MappingStart(..)
                    | Event::SequenceStart(..)
            ) {
                self.budget.node(span.start)?;
                self.at = span.start;
            }
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
        let map = SourceMap {
            json: self.json,
            indent_step: self.indent_step.take(),
            seq_indent: self.seq_indent.take(),
            aliases: std::mem::take(&mut self.aliases),
            ..std::mem::take(&mut self.map)
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
            self.anchors
                .insert(aid, Anchor::new(value.clone(), pointer, 1, 1));
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
            column,
            empty,
            anchored: aid > 0,
            ..ctx.leaf(NodeKind::Scalar, start, end)
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
        let info = ctx.leaf(NodeKind::Alias, start, end);
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
    fn record(&mut self, info: Option<NodeInfo>, base: usize) -> Result<(), LoadError> {
        if let Some(info) = info.filter(|_| self.with_map) {
            self.budget.pointer(self.ptr.len(), self.at)?;
            self.map.push(&self.ptr, info);
        }
        self.ptr.truncate(base);
        Ok(())
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
            self.anchors
                .insert(aid, Anchor::new(value.clone(), pointer, nodes, depth));
        }
        let Some(parent) = self.stack.last_mut() else {
            self.root = Some(value);
            return self.record(info, ctx.ptr_base);
        };
        parent.len += 1;
        parent.last_end = parent.last_end.max(end);
        parent.nodes = parent.nodes.saturating_add(nodes);
        parent.depth = parent.depth.max(depth + 1);
        if !parent.is_map {
            parent.seq.push(value);
            return self.record(info, ctx.ptr_base);
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
                self.record(info, ctx.ptr_base)
            }
            serde_json::map::Entry::Occupied(e) => {
                let name = e.key().clone();
                self.ptr.truncate(ctx.ptr_base);
                let mut first = self.ptr.clone();
                first.push('/');
                first.push_str(&crate::model::pointer::escape(&name));
                let seen = match self.map.iter().find(|(p, _)| *p == first) {
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
