//! One RFC 6902 operation as the steps the planner makes (a `move` is a remove and an add, a
//! `copy` an add), and the checks around them: the text reloaded after each step, edits under a
//! shared anchor refused with the places that share it, the final text compared with what
//! `json_patch` makes of the value.

use json_patch::PatchOperation;
use serde_json::Value;

use super::{Edit, EditError, fail};
use crate::source::{self, Document, SourceMap};

pub(super) fn reload(text: &str, pointer: &str) -> Result<Document, EditError> {
    let mut docs = source::load(text).map_err(|e| EditError {
        op: None,
        pointer: pointer.to_owned(),
        message: format!("the edit would make the YAML invalid ({e})"),
    })?;
    if docs.len() != 1 {
        return fail(pointer, "the edit would change the number of documents");
    }
    Ok(docs.remove(0))
}

/// Integral floats load as integers (see `source`): compare like with like.
pub(super) fn normalize(v: &mut Value) {
    match v {
        Value::Number(n) => {
            if let Some(f) = n.as_f64()
                && n.is_f64()
                && f.fract() == 0.0
                && f.abs() < 9_007_199_254_740_992.0
            {
                *v = Value::from(f as i64);
            }
        }
        Value::Array(a) => a.iter_mut().for_each(normalize),
        Value::Object(m) => m.values_mut().for_each(normalize),
        _ => {}
    }
}

/// Line diff of the old and new text of a document, tightened to the changed bytes.
pub(super) fn diff_edits(old: &str, new: &str) -> Vec<Edit> {
    let diff = similar::TextDiff::from_lines(old, new);
    let old_off: Vec<usize> = std::iter::once(0)
        .chain(diff.old_slices().iter().scan(0, |acc, s| {
            *acc += s.len();
            Some(*acc)
        }))
        .collect();
    let mut edits = Vec::new();
    for op in diff.ops() {
        let (tag, o, n) = op.as_tag_tuple();
        if tag == similar::DiffTag::Equal {
            continue;
        }
        let (mut s, mut e) = (old_off[o.start], old_off[o.end]);
        let text: String = diff.new_slices()[n].concat();
        let (mut ts, mut te) = (0, text.len());
        // Trim the common prefix and suffix, on character boundaries.
        for (a, b) in old[s..e].chars().zip(text.chars()) {
            if a != b {
                break;
            }
            s += a.len_utf8();
            ts += a.len_utf8();
        }
        for (a, b) in old[s..e].chars().rev().zip(text[ts..].chars().rev()) {
            if a != b {
                break;
            }
            e -= a.len_utf8();
            te -= a.len_utf8();
        }
        edits.push(Edit {
            start: s,
            end: e,
            text: text[ts..te].to_owned(),
        });
    }
    edits
}

/// The three operations the planner knows; move, copy and test are expressed with them.
pub(super) enum Step {
    Add(String, Value),
    Remove(String),
    Replace(String, Value),
}

impl Step {
    pub(super) fn path(&self) -> &str {
        match self {
            Step::Add(p, _) | Step::Remove(p) | Step::Replace(p, _) => p,
        }
    }

    /// Whether `value` is already as the step would leave it (an add into a sequence never is).
    pub(super) fn holds(&self, value: &Value) -> bool {
        match self {
            Step::Add(p, v) => {
                let parent_is_map = match p.rfind('/') {
                    Some(i) => value.pointer(&p[..i]).is_some_and(Value::is_object),
                    None => true,
                };
                parent_is_map && value.pointer(p) == Some(v)
            }
            Step::Replace(p, v) => value.pointer(p) == Some(v),
            Step::Remove(p) => value.pointer(p).is_none(),
        }
    }
}

/// Why edits that do not load to the patched value cannot be made: an operation edits (under)
/// an anchored node that aliases repeat elsewhere, so the edit would change them too.
pub(super) fn shared_anchor(map: &SourceMap, ops: &[PatchOperation]) -> Option<EditError> {
    for (i, op) in ops.iter().enumerate() {
        let mut p = op.path().as_str();
        loop {
            if map.node(p).is_some_and(|n| n.anchored) {
                let uses: Vec<&source::AliasUse> =
                    map.aliases().iter().filter(|a| a.anchor == p).collect();
                if let Some(first) = uses.first() {
                    return Some(EditError {
                        op: Some(i),
                        pointer: p.to_owned(),
                        message: format!(
                            "it is anchored as &{} and also used at {}: the edit would change \
                             them too",
                            first.name,
                            alias_places(&uses)
                        ),
                    });
                }
            }
            match p.rfind('/') {
                Some(i) => p = &p[..i],
                None => break,
            }
        }
    }
    None
}

/// `/a/b, /c (merge key)`.
pub(super) fn alias_places(uses: &[&source::AliasUse]) -> String {
    let places: Vec<String> = uses
        .iter()
        .map(|a| {
            let at = if a.pointer.is_empty() {
                "/"
            } else {
                &a.pointer
            };
            if a.merge {
                format!("{at} (merge key)")
            } else {
                at.to_owned()
            }
        })
        .collect();
    places.join(", ")
}

pub(super) fn expand(op: &PatchOperation, value: &Value) -> Result<Vec<Step>, EditError> {
    let from_value = |from: &str| match value.pointer(from) {
        Some(v) => Ok(v.clone()),
        None => fail(from, "no such node"),
    };
    Ok(match op {
        PatchOperation::Add(o) => vec![Step::Add(o.path.as_str().into(), o.value.clone())],
        PatchOperation::Remove(o) => vec![Step::Remove(o.path.as_str().into())],
        PatchOperation::Replace(o) => vec![Step::Replace(o.path.as_str().into(), o.value.clone())],
        PatchOperation::Move(o) => {
            let v = from_value(o.from.as_str())?;
            vec![
                Step::Remove(o.from.as_str().into()),
                Step::Add(o.path.as_str().into(), v),
            ]
        }
        PatchOperation::Copy(o) => {
            vec![Step::Add(
                o.path.as_str().into(),
                from_value(o.from.as_str())?,
            )]
        }
        PatchOperation::Test(_) => Vec::new(),
    })
}
