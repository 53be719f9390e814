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
}

/// JSON-pointer escape of one token (`kubernetes.io/os` → `kubernetes.io~1os`).
pub fn escape(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}
