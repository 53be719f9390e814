//! The engine: object → pod sites → rules → findings (+ fixes). Pure, no I/O; the CLI and the
//! webhook both call [`lint_object`] and [`apply_fixes`].

use serde_json::Value;

use crate::config::Config;
use crate::model::Context;
use crate::model::classify::{self, Classification};
use crate::model::image::{self, ImageInfo};
use crate::model::meta::RuleOs;
use crate::model::workload::Lookup;
use crate::model::workload::{self, ContainerRef};
use crate::model::{Eval, Finding, FixSafety, Operation};
use crate::rules;

/// Annotation that exempts an object from rules (IDs or names, comma-separated, or `all`).
pub const IGNORE_ANNOTATION: &str = "winlint.io/ignore";
pub const IGNORE_REASON_ANNOTATION: &str = "winlint.io/ignore-reason";

/// The result of evaluating one object.
#[derive(Debug, Clone, Default)]
pub struct ObjectReport {
    pub findings: Vec<Finding>,
    /// Findings exempted by the `winlint.io/ignore` annotation.
    pub suppressed: usize,
    /// `winlint.io/ignore-reason`, when given.
    pub ignore_reason: Option<String>,
    /// The OS classification of each pod site, in [`workload::pod_sites`] order.
    pub classes: Vec<Classification>,
}

/// Evaluate every pod site of `object` against every enabled rule.
pub fn lint_object(
    object: &Value,
    config: &Config,
    context: &Context,
    operation: Operation,
) -> ObjectReport {
    let mut report = ObjectReport::default();
    let ignored = ignore_list(object);
    report.ignore_reason = object
        .lookup("/metadata/annotations")
        .and_then(|a| a.get(IGNORE_REASON_ANNOTATION))
        .and_then(Value::as_str)
        .map(str::to_string);
    for site in workload::pod_sites(object) {
        let images: Vec<(ContainerRef, ImageInfo)> = site
            .containers()
            .map(|c| (c, image::analyze(c.image().unwrap_or(""))))
            .collect();
        let class = classify::classify(
            &site,
            images.iter().map(|(_, i)| i),
            context,
            &config.target,
        );
        let eval = Eval::new(&config.target, context, operation, class, images);
        let windows = eval.class.is_windows();
        for rule in rules::all() {
            if !windows && rule.meta.os != RuleOs::Any {
                continue;
            }
            for mut f in (rule.check)(&site, &eval) {
                let Some(sev) = config
                    .policy
                    .overrides
                    .get(rule.meta.id)
                    .copied()
                    .unwrap_or(Some(f.severity))
                else {
                    continue;
                };
                f.severity = sev;
                if ignored.iter().any(|k| {
                    k.eq_ignore_ascii_case("all")
                        || k.eq_ignore_ascii_case(rule.meta.id)
                        || k.eq_ignore_ascii_case(rule.meta.name)
                }) {
                    report.suppressed += 1;
                    continue;
                }
                report.findings.push(f);
            }
        }
        report.classes.push(eval.class);
    }
    report
}

/// The rules named in the object's `winlint.io/ignore` annotation (object metadata, and the
/// pod template's metadata for workloads).
fn ignore_list(object: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let mut add = |meta: Option<&Value>| {
        if let Some(s) = meta
            .and_then(|m| m.get("annotations"))
            .and_then(|a| a.get(IGNORE_ANNOTATION))
            .and_then(Value::as_str)
        {
            out.extend(
                s.split(',')
                    .map(|x| x.trim().to_string())
                    .filter(|x| !x.is_empty()),
            );
        }
    };
    add(object.get("metadata"));
    for site in workload::pod_sites(object) {
        if site.meta_ptr != "/metadata" {
            add(Some(site.meta));
        }
    }
    out
}

/// Whether the policy lets `finding`'s fix be applied.
pub fn fix_allowed(finding: &Finding, config: &Config) -> bool {
    match finding.fix.as_ref().map(|f| f.safety) {
        Some(FixSafety::Safe) => {
            config.policy.safe_fixes || config.policy.fix_opt_in.contains(finding.rule.id)
        }
        Some(FixSafety::OptIn) => config.policy.fix_opt_in.contains(finding.rule.id),
        None => false,
    }
}

/// Rewrite `op` so it applies to `working` (the object with earlier fixes applied): an `add`
/// of an object or array where one now exists becomes adds of its members.
pub fn normalize_op(
    working: &Value,
    op: &json_patch::PatchOperation,
) -> Vec<json_patch::PatchOperation> {
    use json_patch::{AddOperation, PatchOperation};
    if let PatchOperation::Add(add) = op {
        match (working.lookup(add.path.as_str()), &add.value) {
            (Some(Value::Object(existing)), Value::Object(new)) => {
                return new
                    .iter()
                    .flat_map(|(k, v)| {
                        let mut path = add.path.clone();
                        path.push_back(k.as_str());
                        let sub = PatchOperation::Add(AddOperation {
                            path,
                            value: v.clone(),
                        });
                        if existing.get(k) == Some(v) {
                            Vec::new()
                        } else {
                            normalize_op(working, &sub)
                        }
                    })
                    .collect();
            }
            (Some(Value::Array(existing)), Value::Array(new)) => {
                return new
                    .iter()
                    .filter(|v| !existing.contains(v))
                    .map(|v| {
                        let mut path = add.path.clone();
                        path.push_back("-");
                        PatchOperation::Add(AddOperation {
                            path,
                            value: v.clone(),
                        })
                    })
                    .collect();
            }
            _ => {}
        }
    }
    vec![op.clone()]
}

/// Apply the allowed fixes of `findings` to `object`, in order. Returns the patch (RFC 6902
/// operations that, applied to the original object, give the fixed one) and the IDs of the
/// rules whose fixes were applied. A fix whose operations no longer apply is skipped whole.
pub fn apply_fixes(
    object: &mut Value,
    findings: &[Finding],
    config: &Config,
) -> (Vec<json_patch::PatchOperation>, Vec<&'static str>) {
    apply_allowed(object, findings.iter(), config, &mut Rollback::default())
}

/// [`apply_fixes`] over any sequence of findings (no filtered copy needed).
fn apply_allowed<'f>(
    object: &mut Value,
    findings: impl Iterator<Item = &'f Finding>,
    config: &Config,
    rollback: &mut Rollback,
) -> (Vec<json_patch::PatchOperation>, Vec<&'static str>) {
    let mut patch = Vec::new();
    let mut applied = Vec::new();
    for f in findings.filter(|f| fix_allowed(f, config)) {
        let fix = f.fix.as_ref().expect("fix_allowed implies a fix");
        let len = patch.len();
        if apply_fix(object, &fix.ops, &mut patch, rollback)
            && patch.len() > len
            && !applied.contains(&f.rule.id)
        {
            applied.push(f.rule.id);
        }
    }
    (patch, applied)
}

/// Apply one fix's operations to `object` in place, all or nothing: each operation is
/// normalized against the object as the earlier ones left it ([`normalize_op`]) and appended to
/// `patch`. If one does not apply, the ones before it are undone exactly (key order included)
/// and `patch` is left as it was. Returns whether the fix applied; the inverse of what it did is
/// added to `rollback`.
fn apply_fix(
    object: &mut Value,
    fix_ops: &[json_patch::PatchOperation],
    patch: &mut Vec<json_patch::PatchOperation>,
    rollback: &mut Rollback,
) -> bool {
    use json_patch::PatchOperation;
    let (len, mark) = (patch.len(), rollback.0.len());
    if !fix_ops.iter().all(|op| {
        matches!(
            op,
            PatchOperation::Add(_) | PatchOperation::Remove(_) | PatchOperation::Replace(_)
        )
    }) {
        // No exact undo for move/copy/test (no rule offers them): apply to a copy.
        let mut trial = object.clone();
        for op in fix_ops {
            let norm = normalize_op(&trial, op);
            if json_patch::patch(&mut trial, &norm).is_err() {
                patch.truncate(len);
                return false;
            }
            patch.extend(norm);
        }
        rollback
            .0
            .push(Undo::Restore(std::mem::replace(object, trial)));
        return true;
    }
    for op in fix_ops {
        for norm in normalize_op(object, op) {
            let inverse = Undo::of(object, &norm);
            if json_patch::patch(object, std::slice::from_ref(&norm)).is_err() {
                rollback.undo_to(object, mark);
                patch.truncate(len);
                return false;
            }
            rollback.0.extend(inverse);
            patch.push(norm);
        }
    }
    true
}

/// How to take back fixes applied in place ([`fix_object`]): [`Rollback::apply`] gives the
/// object back exactly as it was, key order included.
#[derive(Debug, Default)]
pub struct Rollback(Vec<Undo>);

impl Rollback {
    /// Undo everything recorded, newest first.
    pub fn apply(mut self, doc: &mut Value) {
        self.undo_to(doc, 0);
    }

    /// Undo what was recorded after the first `mark` entries.
    fn undo_to(&mut self, doc: &mut Value, mark: usize) {
        while self.0.len() > mark {
            if let Some(u) = self.0.pop() {
                u.apply(doc);
            }
        }
    }
}

/// The exact inverse of one add/remove/replace operation, recorded before it is applied.
#[derive(Debug)]
enum Undo {
    /// Put the whole object back (a fix applied to a copy).
    Restore(Value),
    /// Put `value` back under `key` of the map at `parent`, where it was.
    MapSet {
        parent: String,
        key: String,
        value: Value,
    },
    /// Remove `key` (added at the end of the map at `parent`).
    MapRemove { parent: String, key: String },
    /// Re-insert a removed `key` at position `index` of the map at `parent` (where `remove`,
    /// a swap-remove, put the map's last entry).
    MapInsert {
        parent: String,
        index: usize,
        key: String,
        value: Value,
    },
    /// Remove the element added at `index` of the array at `parent`.
    ArrayRemove { parent: String, index: usize },
    /// Re-insert a removed element at `index` of the array at `parent`.
    ArrayInsert {
        parent: String,
        index: usize,
        value: Value,
    },
    /// Put back the value a replace overwrote.
    Replace { path: String, value: Value },
}

impl Undo {
    /// The inverse of `op` on `doc` as it is now; `None` when `op` will not apply (so needs no
    /// undo) or changes the root.
    fn of(doc: &Value, op: &json_patch::PatchOperation) -> Option<Undo> {
        use json_patch::PatchOperation;
        use json_patch::jsonptr::index::Index;
        let path = op.path();
        if let PatchOperation::Replace(_) = op {
            return doc.lookup(path.as_str()).map(|v| Undo::Replace {
                path: path.as_str().to_string(),
                value: v.clone(),
            });
        }
        let (parent_ptr, last) = path.split_back()?;
        let parent = parent_ptr.as_str().to_string();
        match (op, doc.lookup(&parent)?) {
            (PatchOperation::Add(_), Value::Object(m)) => {
                let key = last.decoded().into_owned();
                Some(match m.get(&key) {
                    Some(v) => Undo::MapSet {
                        parent,
                        value: v.clone(),
                        key,
                    },
                    None => Undo::MapRemove { parent, key },
                })
            }
            (PatchOperation::Add(_), Value::Array(a)) => {
                let index = match last.to_index().ok()? {
                    Index::Next => a.len(),
                    Index::Num(i) => i,
                };
                Some(Undo::ArrayRemove { parent, index })
            }
            (PatchOperation::Remove(_), Value::Object(m)) => {
                let key = last.decoded().into_owned();
                let index = m.keys().position(|k| *k == key)?;
                Some(Undo::MapInsert {
                    parent,
                    index,
                    value: m[&key].clone(),
                    key,
                })
            }
            (PatchOperation::Remove(_), Value::Array(a)) => {
                let index = last.to_index().ok()?.for_len(a.len()).ok()?;
                Some(Undo::ArrayInsert {
                    parent,
                    index,
                    value: a.get(index)?.clone(),
                })
            }
            _ => None,
        }
    }

    fn apply(self, doc: &mut Value) {
        match self {
            Undo::Restore(value) => *doc = value,
            Undo::Replace { path, value } => {
                if let Some(v) = doc.pointer_mut(&path) {
                    *v = value;
                }
            }
            Undo::MapSet { parent, key, value } => {
                if let Some(Value::Object(m)) = doc.pointer_mut(&parent) {
                    m.insert(key, value);
                }
            }
            Undo::MapRemove { parent, key } => {
                if let Some(Value::Object(m)) = doc.pointer_mut(&parent) {
                    m.shift_remove(&key);
                }
            }
            Undo::MapInsert {
                parent,
                index,
                key,
                value,
            } => {
                if let Some(Value::Object(m)) = doc.pointer_mut(&parent) {
                    // `remove` swapped the last entry into `index`: move it back to the end.
                    let moved = m.keys().nth(index).cloned();
                    match moved.and_then(|k| m.shift_remove(&k).map(|v| (k, v))) {
                        Some((moved_key, moved_value)) => {
                            m.shift_insert(index, key, value);
                            m.insert(moved_key, moved_value);
                        }
                        None => {
                            m.insert(key, value);
                        }
                    }
                }
            }
            Undo::ArrayRemove { parent, index } => {
                if let Some(Value::Array(a)) = doc.pointer_mut(&parent) {
                    a.remove(index);
                }
            }
            Undo::ArrayInsert {
                parent,
                index,
                value,
            } => {
                if let Some(Value::Array(a)) = doc.pointer_mut(&parent) {
                    a.insert(index, value);
                }
            }
        }
    }
}

/// Passes [`fix_object`] makes at most.
pub const MAX_FIX_PASSES: usize = 4;

/// What [`fix_object`] did.
#[derive(Debug, Default)]
pub struct Fixed {
    /// The patch against the original object.
    pub patch: Vec<json_patch::PatchOperation>,
    /// The rules whose fixes were applied.
    pub applied: Vec<&'static str>,
    /// Every finding (`skip` not applied) of the fixed object, when the last pass linted it:
    /// `None` when nothing was fixed (the object is unchanged: `findings` still hold) or when
    /// the last pass still applied fixes.
    pub findings: Option<Vec<Finding>>,
    /// Takes the fixes back: the caller may reject the result.
    pub rollback: Rollback,
}

/// Apply the allowed fixes of `findings` (the lint of `object`), then lint again and apply the
/// fixes that became possible, until none is left (at most [`MAX_FIX_PASSES`] passes): one fix
/// can unblock another (WIN102 deleting `shareProcessNamespace: false` lets WIN003 add
/// `spec.os`). Rules in `skip` are never fixed. Returns the patch against the original object,
/// the rules whose fixes were applied and the lint of the fixed object its last pass made, so
/// a caller that checks the result need not lint the same object again.
pub fn fix_object(
    object: &mut Value,
    findings: &[Finding],
    config: &Config,
    context: &Context,
    operation: Operation,
    skip: &[&str],
) -> Fixed {
    let keep = |f: &&Finding| !skip.contains(&f.rule.id);
    let mut rollback = Rollback::default();
    let (mut patch, mut applied) =
        apply_allowed(object, findings.iter().filter(keep), config, &mut rollback);
    let mut last = None;
    for _ in 1..MAX_FIX_PASSES {
        if patch.is_empty() {
            break;
        }
        let next = lint_object(object, config, context, operation).findings;
        let (p, a) = apply_allowed(object, next.iter().filter(keep), config, &mut rollback);
        if p.is_empty() {
            last = Some(next);
            break;
        }
        patch.extend(p);
        for id in a {
            if !applied.contains(&id) {
                applied.push(id);
            }
        }
    }
    Fixed {
        patch,
        applied,
        findings: last,
        rollback,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::model::{Fix, ops};

    fn finding(fix_ops: Vec<json_patch::PatchOperation>) -> Finding {
        Finding::new(rules::find("WIN102").unwrap().meta, "/spec", "m").with_fix(Fix {
            safety: FixSafety::Safe,
            description: "d".into(),
            ops: fix_ops,
        })
    }

    /// A fix whose last operation fails is undone exactly, key order included (a map's
    /// `remove` reorders keys; the fixes after it see the object as it was).
    #[test]
    fn failed_fix_is_undone_exactly() {
        let mut cfg = Config::default();
        cfg.policy.safe_fixes = true;
        let original = json!({"spec": {"a": 1, "b": {"k": 2}, "c": [1, 2, 3], "d": 4}});
        let mut obj = original.clone();
        let failing = finding(vec![
            ops::remove("/spec/a"),
            ops::add("/spec/b", json!({"k": 2, "n": 5})),
            ops::add("/spec/b/k", json!(9)),
            ops::replace("/spec/d", json!(0)),
            ops::add("/spec/c/1", json!(7)),
            ops::add("/spec/c/-", json!(8)),
            ops::remove("/spec/c/0"),
            ops::add("/spec/e", json!(1)),
            ops::add("/spec/missing/x", json!(1)),
        ]);
        let (patch, applied) = apply_fixes(&mut obj, std::slice::from_ref(&failing), &cfg);
        assert!(patch.is_empty() && applied.is_empty());
        assert_eq!(obj.to_string(), original.to_string());
        let removals = finding(vec![
            ops::remove("/spec/a"),
            ops::remove("/spec/b"),
            ops::remove("/spec/d"),
            ops::remove("/spec/missing"),
        ]);
        let (patch, _) = apply_fixes(&mut obj, &[removals], &cfg);
        assert!(patch.is_empty());
        assert_eq!(obj.to_string(), original.to_string());
        // The same fix without its failing operation applies, as one patch.
        let mut ok = failing.clone();
        ok.fix.as_mut().unwrap().ops.pop();
        let (patch, applied) = apply_fixes(&mut obj, &[failing, ok], &cfg);
        assert_eq!(applied, ["WIN102"]);
        let mut replay = original.clone();
        json_patch::patch(&mut replay, &patch).unwrap();
        assert_eq!(replay.to_string(), obj.to_string());
        assert_eq!(
            obj,
            json!({"spec": {"b": {"k": 9, "n": 5}, "c": [7, 2, 3, 8], "d": 0, "e": 1}})
        );
    }

    /// Every pass of fix_object (adds, member adds, removals) is taken back exactly: the webhook
    /// retries on the same object when the API server would reject the result.
    #[test]
    fn fix_object_rolls_back_exactly() {
        let original = json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"labels": {"kubernetes.io/os": "linux"}, "name": "iis"},
            "spec": {"terminationGracePeriodSeconds": 71, "shareProcessNamespace": false,
                "securityContext": {"supplementalGroupsPolicy": "Merge"}, "tolerations": [],
                "nodeSelector": {"disktype": "ssd"},
                "containers": [{"name": "init", "image": "mcr.microsoft.com/windows/servercore:ltsc2022",
                    "securityContext": {"windowsOptions": {}, "privileged": false}}]}});
        let cfg = Config::default();
        let findings =
            lint_object(&original, &cfg, &Context::default(), Operation::Create).findings;
        let mut obj = original.clone();
        let fixed = fix_object(
            &mut obj,
            &findings,
            &cfg,
            &Context::default(),
            Operation::Create,
            &[],
        );
        assert_eq!(fixed.applied, ["WIN001", "WIN007", "WIN102"]); // add, array add, removal
        let mut replay = original.clone();
        json_patch::patch(&mut replay, &fixed.patch).unwrap();
        assert_eq!(replay, obj);
        fixed.rollback.apply(&mut obj);
        assert_eq!(obj.to_string(), original.to_string());
    }
}
