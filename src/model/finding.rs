//! Findings and fixes: what a rule reports, how bad it is and what would repair it.

use super::meta::{FixSafety, RuleMeta, Severity};

/// A fix: RFC 6902 operations against the *object* (pointers start at the object root).
///
/// Every operation's parent path must exist in the object the finding was computed on, so the
/// same operations can be applied as a JSONPatch (webhook) or as text edits (`--fix`).
#[derive(Debug, Clone, PartialEq)]
pub struct Fix {
    pub safety: FixSafety,
    /// One line, imperative: "add nodeSelector kubernetes.io/os=windows".
    pub description: String,
    pub ops: Vec<json_patch::PatchOperation>,
}

/// One problem found at one place.
#[derive(Debug, Clone)]
pub struct Finding {
    pub rule: &'static RuleMeta,
    pub severity: Severity,
    /// JSON pointer into the object (e.g. `/spec/template/spec/containers/0/env/1/name`).
    pub pointer: String,
    /// What is wrong and what to do about it.
    pub message: String,
    pub fix: Option<Fix>,
}

impl Finding {
    pub fn new(
        rule: &'static RuleMeta,
        pointer: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Finding {
            rule,
            severity: rule.severity,
            pointer: pointer.into(),
            message: message.into(),
            fix: None,
        }
    }
    pub fn severity(mut self, severity: Severity) -> Self {
        self.severity = severity;
        self
    }
    pub fn with_fix(mut self, fix: Fix) -> Self {
        self.fix = Some(fix);
        self
    }
}

/// Fix-building helpers: RFC 6902 operations from pointer strings.
pub mod ops {
    use json_patch::jsonptr::PointerBuf;
    use json_patch::{AddOperation, PatchOperation, RemoveOperation, ReplaceOperation};
    use serde_json::Value;

    fn ptr(path: &str) -> PointerBuf {
        PointerBuf::parse(path)
            .unwrap_or_else(|e| panic!("invalid JSON pointer {path:?} built by a rule: {e}"))
    }
    pub fn add(path: &str, value: Value) -> PatchOperation {
        PatchOperation::Add(AddOperation {
            path: ptr(path),
            value,
        })
    }
    pub fn remove(path: &str) -> PatchOperation {
        PatchOperation::Remove(RemoveOperation { path: ptr(path) })
    }
    pub fn replace(path: &str, value: Value) -> PatchOperation {
        PatchOperation::Replace(ReplaceOperation {
            path: ptr(path),
            value,
        })
    }

    /// The operation that sets `object[map_ptr][key] = value`: a member add when the map
    /// exists, else an add of the whole map (and of its parent map, when that is missing too).
    /// `None` when the entry already has that value.
    pub fn set_entry(
        object: &Value,
        map_ptr: &str,
        key: &str,
        value: Value,
    ) -> Option<PatchOperation> {
        use crate::model::workload::Lookup;
        Some(match object.lookup(map_ptr) {
            Some(Value::Object(m)) if m.get(key) == Some(&value) => return None,
            Some(Value::Object(_)) => add(
                &format!("{map_ptr}/{}", crate::model::pointer::escape(key)),
                value,
            ),
            _ => {
                let mut m = serde_json::Map::new();
                m.insert(key.to_string(), value);
                let (parent, last) = map_ptr.rsplit_once('/').unwrap_or(("", map_ptr));
                if !parent.is_empty() && !matches!(object.lookup(parent), Some(Value::Object(_))) {
                    let mut outer = serde_json::Map::new();
                    outer.insert(
                        crate::model::pointer::unescape(last).into_owned(),
                        Value::Object(m),
                    );
                    let (pp, plast) = parent.rsplit_once('/').unwrap_or(("", parent));
                    add(&format!("{pp}/{plast}"), Value::Object(outer))
                } else {
                    add(map_ptr, Value::Object(m))
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::ops;

    /// `set_entry` adds a member to an existing map, else the map (and its missing parent).
    #[test]
    fn set_entry_creates_missing_maps() {
        let mut obj = json!({"metadata": {"name": "x"}});
        let op = ops::set_entry(&obj, "/metadata/annotations", "a/b~c", "v".into()).unwrap();
        assert_eq!(
            serde_json::to_value(&op).unwrap()["path"],
            "/metadata/annotations"
        );
        json_patch::patch(&mut obj, &[op]).unwrap();
        assert_eq!(obj["metadata"]["annotations"]["a/b~c"], "v");
        let op = ops::set_entry(&obj, "/metadata/annotations", "d", "w".into()).unwrap();
        assert_eq!(
            serde_json::to_value(&op).unwrap()["path"],
            "/metadata/annotations/d"
        );
        assert!(ops::set_entry(&obj, "/metadata/annotations", "a/b~c", "v".into()).is_none());
        let mut tpl = json!({"spec": {"template": {"spec": {}}}});
        let op = ops::set_entry(&tpl, "/spec/template/metadata/labels", "k", "v".into()).unwrap();
        json_patch::patch(&mut tpl, &[op]).unwrap();
        assert_eq!(tpl["spec"]["template"]["metadata"]["labels"]["k"], "v");
    }
}
