//! Planning one step against the text: where its edit goes (a key's value slot, a sequence's
//! next entry, a flow collection's brackets) and how its value is written in the style around
//! it (block or flow, the document's indentation and line ending, JSON inside JSON; scalars by
//! [`crate::source::emit`]).

use json_patch::PatchOperation;
use serde_json::{Map, Value};

use super::steps::{Step, alias_places, reload};
use super::{Edit, EditError, apply, fail};
use crate::source::emit::{json_string, key_text, literal_block, scalar_text, single_quoted};
use crate::source::{self, Document, NodeInfo, NodeKind, SourceMap, col_of, line_start};

/// `ops` starts with the removal of a key of a flow mapping and the addition of another key
/// to the same mapping (WIN002's rename of `beta.kubernetes.io/os`): one edit that writes the
/// new entry in place of the old one, so that the collection keeps its layout (removing its
/// only entry first would leave an empty line in a multi-line mapping). `None` when that is
/// not the case or the result would not load as the two operations say.
pub(super) fn rename_in_flow(
    text: &str,
    doc: &Document,
    ops: &[PatchOperation],
) -> Option<(Vec<Edit>, Document)> {
    let [PatchOperation::Remove(r), PatchOperation::Add(a), ..] = ops else {
        return None;
    };
    let (old_path, new_path) = (r.path.as_str(), a.path.as_str());
    let (parent, old_key) = split(old_path).ok()?;
    let (new_parent, new_key) = split(new_path).ok()?;
    let pv = doc.value.pointer(parent)?.as_object()?;
    if parent != new_parent || pv.contains_key(&new_key) || !pv.contains_key(&old_key) {
        return None;
    }
    let pn = doc.map.node(parent)?;
    let n = doc.map.node(old_path)?;
    let (ks, _) = n.key?;
    if pn.kind != NodeKind::FlowMapping || n.kind == NodeKind::Alias {
        return None;
    }
    let cx = Ctx::new(text, doc);
    let key = match text.as_bytes().get(ks) {
        Some(b'"') => json_string(&new_key),
        Some(b'\'') => single_quoted(&new_key).unwrap_or_else(|| json_string(&new_key)),
        _ if cx.json => json_string(&new_key),
        _ => key_text(&new_key, true),
    };
    let value = match (&a.value, n.kind) {
        (Value::String(s), NodeKind::Scalar) => {
            cx.keep_quotes(n, s).unwrap_or_else(|| cx.flow(&a.value))
        }
        _ => cx.flow(&a.value),
    };
    let edits = vec![edit(ks, n.end, format!("{key}: {value}"))];
    let out = apply(text, &edits);
    let renamed = reload(&out, new_path).ok()?;
    let mut want = doc.value.clone();
    json_patch::patch(&mut want, &ops[..2]).ok()?;
    (renamed.value == want).then_some((edits, renamed))
}

pub(super) struct Ctx<'a> {
    text: &'a str,
    b: &'a [u8],
    map: &'a SourceMap,
    value: &'a Value,
    eol: &'static str,
    json: bool,
    step: usize,
    seq_off: usize,
}

impl<'a> Ctx<'a> {
    pub(super) fn new(text: &'a str, doc: &'a Document) -> Self {
        Ctx {
            text,
            b: text.as_bytes(),
            map: &doc.map,
            value: &doc.value,
            eol: if text.contains("\r\n") { "\r\n" } else { "\n" },
            json: doc.map.is_json(),
            step: doc.map.indent_step(),
            seq_off: doc.map.seq_indent(),
        }
    }
}

pub(super) fn plan_one(text: &str, doc: &Document, step: &Step) -> Result<Vec<Edit>, EditError> {
    Ok(vec![Ctx::new(text, doc).step(step)?])
}

impl Ctx<'_> {
    pub(super) fn step(&self, step: &Step) -> Result<Edit, EditError> {
        match step {
            Step::Add(path, v) => self.add(path, v),
            Step::Remove(path) => self.remove(path),
            Step::Replace(path, v) => self.replace(path, v),
        }
    }
}

/// `(parent pointer, decoded last token)`.
pub(super) fn split(path: &str) -> Result<(&str, String), EditError> {
    match path.rfind('/') {
        Some(i) => Ok((
            &path[..i],
            crate::model::pointer::unescape(&path[i + 1..]).into_owned(),
        )),
        None => fail(path, "not a JSON pointer"),
    }
}

pub(super) fn child(parent: &str, token: &str) -> String {
    format!("{parent}/{}", crate::model::pointer::escape(token))
}

pub(super) fn edit(start: usize, end: usize, text: impl Into<String>) -> Edit {
    Edit {
        start,
        end,
        text: text.into(),
    }
}

impl Ctx<'_> {
    fn node(&self, p: &str) -> Result<&NodeInfo, EditError> {
        match self.map.node(p) {
            Some(n) if n.kind == NodeKind::Alias && p.is_empty() => self.alias_error(p),
            Some(n) => Ok(n),
            None => match self.map.nearest(p) {
                Some((ap, n)) if n.kind == NodeKind::Alias => self.alias_error(ap),
                Some((mp, _)) => {
                    let merged: Vec<&source::AliasUse> = (self.map.aliases().iter())
                        .filter(|a| a.merge && a.pointer == mp)
                        .collect();
                    match merged.first() {
                        Some(a) => fail(
                            p,
                            format!(
                                "the entry comes from the merge key `<<: *{}` of {}, shared with {}",
                                a.name,
                                if mp.is_empty() { "/" } else { mp },
                                a.anchor
                            ),
                        ),
                        None => fail(
                            p,
                            "the node is not written in the text (it comes from an alias or a \
                             merge key)",
                        ),
                    }
                }
                None => fail(p, "the node is not written in the text"),
            },
        }
    }

    /// The node at `ap` is an alias: an edit under it would edit the anchored node, which the
    /// alias shares with the anchor's place and its other aliases.
    fn alias_error<T>(&self, ap: &str) -> Result<T, EditError> {
        let aliases = self.map.aliases();
        let Some(me) = aliases.iter().find(|a| !a.merge && a.pointer == ap) else {
            return fail(ap, "it is an alias (`*name`): edit its anchor instead");
        };
        let mut others: Vec<&source::AliasUse> = aliases
            .iter()
            .filter(|a| a.anchor == me.anchor && a.pointer != ap)
            .collect();
        others.dedup_by(|a, b| a.pointer == b.pointer);
        let anchor = if me.anchor.is_empty() {
            "/"
        } else {
            &me.anchor
        };
        let also = if others.is_empty() {
            String::new()
        } else {
            format!(", also used at {}", alias_places(&others))
        };
        fail(
            ap,
            format!("it is an alias of &{} ({anchor}){also}", me.name),
        )
    }

    fn parent_value(&self, parent: &str) -> Result<&Value, EditError> {
        match self.value.pointer(parent) {
            Some(v) => Ok(v),
            None => fail(parent, "parent not found"),
        }
    }

    fn add(&self, path: &str, v: &Value) -> Result<Edit, EditError> {
        if path.is_empty() {
            return self.replace(path, v);
        }
        let (parent, token) = split(path)?;
        match self.parent_value(parent)? {
            Value::Object(m) => {
                if m.contains_key(&token) {
                    self.replace(path, v)
                } else {
                    self.insert_key(parent, &token, v)
                }
            }
            Value::Array(a) => {
                let idx = if token == "-" {
                    a.len()
                } else {
                    match token.parse::<usize>() {
                        Ok(i) if i <= a.len() && (token == "0" || !token.starts_with('0')) => i,
                        _ => return fail(path, "invalid array index"),
                    }
                };
                self.insert_item(parent, idx, a.len(), v)
            }
            _ => fail(parent, "parent is not a mapping or a sequence"),
        }
    }

    fn replace(&self, path: &str, v: &Value) -> Result<Edit, EditError> {
        let n = match self.map.node(path) {
            Some(n) => n,
            None if !path.is_empty() => {
                // A key that only exists through a merge key (`<<`): an explicit key overrides it.
                let (parent, token) = split(path)?;
                let pn = self.node(parent)?;
                if pn.kind.is_mapping() && self.value.pointer(parent).is_some_and(Value::is_object)
                {
                    return self.insert_key(parent, &token, v);
                }
                self.node(path)?
            }
            None => self.node(path)?,
        };
        // (Replacing an alias itself is fine: `key: *x` becomes `key: value`.)
        // A quoted string stays quoted the same way (`mountPath: "/cache"`).
        if let Value::String(s) = v
            && n.kind == NodeKind::Scalar
            && let Some(q) = self.keep_quotes(n, s)
        {
            return Ok(edit(n.start, n.end, q));
        }
        if n.in_flow || self.json {
            return Ok(edit(n.start, n.end, self.flow(v)));
        }
        let is_item = n.key.is_none() && n.value_slot != n.entry_start;
        let b = self.b;
        if path.is_empty() && n.empty {
            // An empty document: saphyr marks the next `---`/`...` or the end of the text.
            let body = self.compact(v, 0);
            let at = n.start.min(b.len());
            let rest = &b[at..];
            if rest.starts_with(b"---") || rest.starts_with(b"...") {
                return Ok(edit(at, at, format!("{body}{}", self.eol)));
            }
            if at > 0 && b[at - 1] != b'\n' {
                return Ok(edit(at, at, format!("{}{body}", self.eol)));
            }
            return Ok(edit(at, at, body));
        }
        if n.key.is_some()
            && let Some((header, lines)) = self.literal(v, n.indent + self.step)
            && is_blank(span(b, n.end, next_line_start(b, n.end).unwrap_or(b.len())))
        {
            let body = lines.join(self.eol);
            return Ok(edit(
                n.value_slot,
                n.end,
                format!(" {header}{}{body}", self.eol),
            ));
        }
        if is_inline(v) {
            let s = self.inline(v, false);
            if path.is_empty() {
                return Ok(edit(n.start, n.end, s));
            }
            if n.empty {
                return Ok(edit(n.value_slot, n.value_slot, format!(" {s}")));
            }
            if n.start > n.value_slot
                && is_blank(span(b, n.value_slot, n.start))
                && has_break(span(b, n.value_slot, n.start))
            {
                return Ok(edit(n.value_slot, n.end, format!(" {s}")));
            }
            return Ok(edit(n.start, n.end, s));
        }
        if n.key.is_some() {
            let indent = n.indent
                + if v.is_object() {
                    self.step
                } else {
                    self.seq_off
                };
            let body = self.block(v, indent).join(self.eol);
            if is_blank(span(b, n.value_slot, n.start)) {
                return Ok(edit(n.value_slot, n.end, format!("{}{body}", self.eol)));
            }
            let ls = line_start(b, n.start);
            if !is_blank(span(b, ls, n.start)) {
                return fail(path, "unsupported layout around the value");
            }
            return Ok(edit(ls, n.end, body));
        }
        if is_item && n.empty {
            return Ok(edit(
                n.value_slot,
                n.value_slot,
                format!(" {}", self.compact(v, n.indent + 2)),
            ));
        }
        let col = col_of(self.text, n.start);
        Ok(edit(n.start, n.end, self.compact(v, col)))
    }

    fn insert_key(&self, parent: &str, key: &str, v: &Value) -> Result<Edit, EditError> {
        let pn = self.node(parent)?;
        let b = self.b;
        match pn.kind {
            NodeKind::FlowMapping => {
                if pn.end == 0 || b[pn.end - 1] != b'}' {
                    return fail(parent, "unsupported flow mapping (no braces)");
                }
                let entry = self.flow_entry(key, v);
                if pn.len == 0 {
                    if !self.json && !pn.in_flow {
                        let mut m = Map::new();
                        m.insert(key.to_owned(), v.clone());
                        return self.replace(parent, &Value::Object(m));
                    }
                    return Ok(edit(pn.end - 1, pn.end - 1, entry));
                }
                let last = self.last_child(parent)?;
                Ok(self.flow_append(pn, last, &entry))
            }
            NodeKind::BlockMapping => {
                let indent = pn.child_indent.unwrap_or(pn.indent);
                let mut m = Map::new();
                m.insert(key.to_owned(), v.clone());
                let body = self.block(&Value::Object(m), indent).join(self.eol);
                Ok(self.after_line(pn.end, body))
            }
            NodeKind::Alias => fail(parent, "the mapping is an alias (`*name`)"),
            _ => fail(parent, "parent is not a mapping in the text"),
        }
    }

    fn insert_item(
        &self,
        parent: &str,
        idx: usize,
        len: usize,
        v: &Value,
    ) -> Result<Edit, EditError> {
        let pn = self.node(parent)?;
        let b = self.b;
        match pn.kind {
            NodeKind::FlowSequence => {
                if pn.end == 0 || b[pn.end - 1] != b']' {
                    return fail(parent, "unsupported flow sequence");
                }
                let item = self.flow(v);
                if len == 0 {
                    if !self.json && !pn.in_flow {
                        return self.replace(parent, &Value::Array(vec![v.clone()]));
                    }
                    return Ok(edit(pn.end - 1, pn.end - 1, item));
                }
                if idx == len {
                    let last = self.node(&format!("{parent}/{}", len - 1))?;
                    return Ok(self.flow_append(pn, last, &item));
                }
                let at = self.node(&format!("{parent}/{idx}"))?;
                let ls = line_start(b, at.entry_start);
                if is_blank(span(b, ls, at.entry_start)) {
                    let pad = " ".repeat(col_of(self.text, at.entry_start));
                    return Ok(edit(
                        at.entry_start,
                        at.entry_start,
                        format!("{item},{}{pad}", self.eol),
                    ));
                }
                Ok(edit(at.entry_start, at.entry_start, format!("{item}, ")))
            }
            NodeKind::BlockSequence => {
                let d = pn.child_indent.unwrap_or(pn.indent);
                let line = self.block(&Value::Array(vec![v.clone()]), d).join(self.eol);
                if idx == len {
                    return Ok(self.after_line(pn.end, line));
                }
                let at = self.node(&format!("{parent}/{idx}"))?;
                let ls = line_start(b, at.entry_start);
                if !is_blank(span(b, ls, at.entry_start)) {
                    // `- - a`: the new item takes the place of the `-`, the old one moves down.
                    let item = format!("- {}{}{}", self.compact(v, d + 2), self.eol, " ".repeat(d));
                    return Ok(edit(at.entry_start, at.entry_start, item));
                }
                Ok(edit(ls, ls, format!("{line}{}", self.eol)))
            }
            NodeKind::Alias => fail(parent, "the sequence is an alias (`*name`)"),
            _ => fail(parent, "parent is not a sequence in the text"),
        }
    }

    fn remove(&self, path: &str) -> Result<Edit, EditError> {
        if path.is_empty() {
            return fail(path, "cannot remove the whole document");
        }
        let (parent, token) = split(path)?;
        let pv = self.parent_value(parent)?;
        let path = match (pv, token.as_str()) {
            (Value::Array(a), "-") if !a.is_empty() => format!("{parent}/{}", a.len() - 1),
            _ => path.to_owned(),
        };
        let n = self.node(&path)?;
        let pn = self.node(parent)?;
        if pn.kind == NodeKind::Alias {
            return fail(parent, "the collection is an alias (`*name`)");
        }
        let b = self.b;
        let sibs = self.siblings(parent, pv);
        let pos = sibs.iter().position(|s| std::ptr::eq(*s, n));
        let next = pos.and_then(|i| sibs.get(i + 1)).copied();
        let prev = pos
            .and_then(|i| i.checked_sub(1))
            .and_then(|i| sibs.get(i))
            .copied();
        if n.in_flow {
            if let Some(next) = next {
                return Ok(edit(n.entry_start, next.entry_start, ""));
            }
            if let Some(prev) = prev {
                return Ok(edit(prev.end, n.end, ""));
            }
            // The only entry: the collection becomes `{}`/`[]` when nothing else (a comment) is
            // written between its brackets.
            let open = (pn.start..n.entry_start).find(|&i| matches!(b[i], b'{' | b'['));
            let close = pn.end.saturating_sub(1);
            if let Some(open) = open
                && is_blank(span(b, open + 1, n.entry_start))
                && span(b, n.end, close)
                    .iter()
                    .all(|c| matches!(c, b' ' | b'\t' | b'\r' | b'\n' | b','))
            {
                return Ok(edit(open + 1, close, ""));
            }
            let mut e = n.end;
            while e < b.len() && matches!(b[e], b' ' | b'\t' | b'\r' | b'\n') {
                e += 1;
            }
            if b.get(e) == Some(&b',') {
                e += 1;
            } else {
                e = n.end;
            }
            return Ok(edit(n.entry_start, e, ""));
        }
        if pn.len <= 1 {
            let empty = if pv.is_array() {
                Value::Array(Vec::new())
            } else {
                Value::Object(Map::new())
            };
            return self.replace(parent, &empty);
        }
        let ls = line_start(b, n.entry_start);
        if is_blank(span(b, ls, n.entry_start)) {
            let end = next_line_start(b, n.end).unwrap_or(b.len());
            return Ok(edit(ls, end, ""));
        }
        match next {
            Some(next) => Ok(edit(n.entry_start, next.entry_start, "")),
            None => fail(&path, "cannot remove an entry that shares its line"),
        }
    }

    /// The entries of a collection written in the text, in text order.
    fn siblings(&self, parent: &str, pv: &Value) -> Vec<&NodeInfo> {
        let mut v: Vec<&NodeInfo> = match pv {
            Value::Object(m) => m
                .keys()
                .filter_map(|k| self.map.node(&child(parent, k)))
                .collect(),
            Value::Array(a) => (0..a.len())
                .filter_map(|i| self.map.node(&format!("{parent}/{i}")))
                .collect(),
            _ => Vec::new(),
        };
        v.sort_by_key(|n| n.entry_start);
        v
    }

    fn last_child(&self, parent: &str) -> Result<&NodeInfo, EditError> {
        let pv = self.parent_value(parent)?;
        match self.siblings(parent, pv).last() {
            Some(n) => Ok(n),
            None => fail(parent, "no entry of the collection is written in the text"),
        }
    }

    /// Insert `entry` after the `last` entry of a flow collection `pn`.
    fn flow_append(&self, pn: &NodeInfo, last: &NodeInfo, entry: &str) -> Edit {
        let b = self.b;
        let ls = line_start(b, last.entry_start);
        let own_line = is_blank(span(b, ls, last.entry_start));
        let close_below = has_break(span(b, last.end, pn.end.saturating_sub(1).max(last.end)));
        if own_line && close_below {
            let pad = " ".repeat(col_of(self.text, last.entry_start));
            edit(last.end, last.end, format!(",{}{pad}{entry}", self.eol))
        } else {
            edit(last.end, last.end, format!(", {entry}"))
        }
    }

    /// Insert `body` (lines without a final line break) as new lines after the line holding `pos`.
    fn after_line(&self, pos: usize, body: String) -> Edit {
        match next_line_start(self.b, pos) {
            Some(at) => edit(at, at, format!("{body}{}", self.eol)),
            None => edit(self.b.len(), self.b.len(), format!("{}{body}", self.eol)),
        }
    }

    // --- emitting values -----------------------------------------------------------------------

    /// `s` written in the quoting style of the quoted scalar `n` it replaces; `None` when `n`
    /// is not quoted (plain, a block scalar) or carries an anchor or a tag.
    fn keep_quotes(&self, n: &NodeInfo, s: &str) -> Option<String> {
        match self.b.get(n.start)? {
            b'"' => Some(json_string(s)),
            b'\'' => Some(single_quoted(s).unwrap_or_else(|| json_string(s))),
            _ => None,
        }
    }

    fn inline(&self, v: &Value, flow: bool) -> String {
        match v {
            Value::Null => "null".into(),
            Value::Bool(b) => b.to_string(),
            Value::Number(n) => n.to_string(),
            Value::String(s) => scalar_text(s, flow),
            Value::Array(a) if a.is_empty() => "[]".into(),
            Value::Object(m) if m.is_empty() => "{}".into(),
            _ => self.flow(v),
        }
    }

    /// Flow style (JSON in JSON documents).
    fn flow(&self, v: &Value) -> String {
        match v {
            Value::Array(a) => {
                let items: Vec<String> = a.iter().map(|x| self.flow(x)).collect();
                format!("[{}]", items.join(", "))
            }
            Value::Object(m) => {
                let items: Vec<String> = m.iter().map(|(k, x)| self.flow_entry(k, x)).collect();
                format!("{{{}}}", items.join(", "))
            }
            Value::String(s) if self.json => json_string(s),
            _ => self.inline(v, true),
        }
    }

    fn flow_entry(&self, k: &str, v: &Value) -> String {
        let key = if self.json {
            json_string(k)
        } else {
            key_text(k, true)
        };
        format!("{key}: {}", self.flow(v))
    }

    /// Block lines of a non-empty collection at `indent`.
    fn block(&self, v: &Value, indent: usize) -> Vec<String> {
        let pad = " ".repeat(indent);
        let mut out = Vec::new();
        match v {
            Value::Object(m) => {
                for (k, x) in m {
                    let key = key_text(k, false);
                    if let Some((header, lines)) = self.literal(x, indent + self.step) {
                        out.push(format!("{pad}{key}: {header}"));
                        out.extend(lines);
                    } else if is_inline(x) {
                        out.push(format!("{pad}{key}: {}", self.inline(x, false)));
                    } else {
                        out.push(format!("{pad}{key}:"));
                        let sub = indent
                            + if x.is_object() {
                                self.step
                            } else {
                                self.seq_off
                            };
                        out.extend(self.block(x, sub));
                    }
                }
            }
            Value::Array(a) => {
                for x in a {
                    if let Some((header, lines)) = self.literal(x, indent + 2) {
                        out.push(format!("{pad}- {header}"));
                        out.extend(lines);
                    } else if is_inline(x) {
                        out.push(format!("{pad}- {}", self.inline(x, false)));
                    } else {
                        let mut sub = self.block(x, indent + 2);
                        if let Some(first) = sub.first_mut() {
                            *first = format!("{pad}- {}", &first[indent + 2..]);
                        }
                        out.extend(sub);
                    }
                }
            }
            _ => out.push(format!("{pad}{}", self.inline(v, false))),
        }
        out
    }

    /// A multi-line string as a literal block scalar in block context
    /// ([`literal_block`]); never in JSON.
    fn literal(&self, v: &Value, indent: usize) -> Option<(&'static str, Vec<String>)> {
        let Value::String(s) = v else { return None };
        if self.json {
            return None;
        }
        literal_block(s, indent)
    }

    /// A value written from column `col` on: its first line without indentation.
    fn compact(&self, v: &Value, col: usize) -> String {
        if is_inline(v) {
            return self.inline(v, false);
        }
        let mut lines = self.block(v, col);
        if let Some(first) = lines.first_mut() {
            *first = first[col..].to_owned();
        }
        lines.join(self.eol)
    }
}

pub(super) fn is_inline(v: &Value) -> bool {
    match v {
        Value::Array(a) => a.is_empty(),
        Value::Object(m) => m.is_empty(),
        _ => true,
    }
}

/// `b[s..e]`, empty when the range is out of order or out of bounds.
pub(super) fn span(b: &[u8], s: usize, e: usize) -> &[u8] {
    b.get(s..e).unwrap_or(&[])
}

pub(super) fn is_blank(b: &[u8]) -> bool {
    b.iter().all(|c| matches!(c, b' ' | b'\t' | b'\r' | b'\n'))
}

pub(super) fn has_break(b: &[u8]) -> bool {
    b.contains(&b'\n')
}

pub(super) fn next_line_start(b: &[u8], pos: usize) -> Option<usize> {
    b.get(pos..)?
        .iter()
        .position(|&c| c == b'\n')
        .map(|i| pos + i + 1)
}
