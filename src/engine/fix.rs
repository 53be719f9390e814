//! The one fixer: lint → apply the fixes the policy allows → lint again, until nothing is left
//! to fix. The CLI (`--fix`) and the webhook (`/mutate`) both fix through [`Fixer`]; they differ
//! only in the [`Document`] the fixes land in (surgical text edits of a YAML file, or the
//! admission object itself, patched in place and answered as a JSON Patch) and in their
//! [`FixOptions`].
//!
//! A pass lints every object of the document once (the first pass may reuse the caller's lint),
//! applies the allowed fixes one after another to a working copy (each operation normalized
//! against what the earlier ones left, [`normalize_op`]; a fix applies whole or not at all) and
//! hands them to the document, which realizes them. One fix can unblock another (WIN102 deleting
//! `shareProcessNamespace: false` lets WIN003 add `spec.os`), so passes repeat until one has
//! nothing to apply.
//!
//! [`Fixer::fix_guarded`] adds the webhook's guard: the fixed object must not have an error the
//! original did not have (the API server would reject it); if it has, the fixer takes its fixes
//! back and tries again without the fixes that add `spec.os`, then without fixes.

use std::collections::HashSet;

use json_patch::PatchOperation;
use serde_json::Value;

use super::{ObjectReport, lint_object, lint_since};
use crate::config::Config;
use crate::model::pointer;
use crate::model::workload::{Lookup, objects};
use crate::model::{Context, Finding, FixSafety, Operation, RuleMeta, Severity};

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
pub(crate) fn apply_fix(
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
            // One add, remove or replace fails before it changes anything, and `inverse` undoes
            // it exactly: json_patch's own undo stack (`patch`) would only copy the same.
            if json_patch::patch_unsafe(object, std::slice::from_ref(&norm)).is_err() {
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

/// How to take back fixes applied in place ([`Fixer::fix`]): [`Rollback::apply`] gives the
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

/// How a front end wants its fixes made.
#[derive(Debug, Clone, Copy)]
pub struct FixOptions {
    /// Passes at most; [`Fixed::converged`] says whether the last one had nothing to apply.
    pub max_passes: usize,
    /// A fix that does not apply (an operation fails, or it changes nothing) is tried again in
    /// the next pass (the webhook), or given up for the rest of the run (the CLI, which also
    /// gives up the fixes its text planner cannot express).
    pub retry_failed: bool,
}

impl FixOptions {
    /// `winlint --fix`: up to 16 passes; a fix that fails once is given up.
    pub const CLI: FixOptions = FixOptions {
        max_passes: 16,
        retry_failed: false,
    };
    /// `/mutate`: up to 4 passes (an admission request has a deadline); failed fixes are tried
    /// again in the next pass.
    pub const WEBHOOK: FixOptions = FixOptions {
        max_passes: 4,
        retry_failed: true,
    };
}

/// One fix a pass applied to the working copy of a root.
#[derive(Debug)]
pub struct PassFix<'f> {
    /// The root (YAML document) it belongs to.
    pub root: usize,
    /// The pointer of the finding's object in the root (`""`, or `/items/3` in a `List`).
    pub prefix: &'f str,
    pub finding: &'f Finding,
    /// The operations, normalized against the root as the pass's earlier fixes left it, with
    /// pointers from the root. [`Document::commit`] may take them.
    pub ops: Vec<PatchOperation>,
}

impl PassFix<'_> {
    /// The fix's identity across passes: (root, rule, pointer of the finding from the root).
    fn key(&self) -> FixKey {
        (
            self.root,
            self.finding.rule.id,
            format!("{}{}", self.prefix, self.finding.pointer),
        )
    }
}

/// (root, rule, pointer from the root) of a fix.
type FixKey = (usize, &'static str, String);

/// What a [`Document`] made of a pass's fixes.
#[derive(Debug, Default)]
pub struct Commit {
    /// The document changed (the next pass lints it again).
    pub changed: bool,
    /// Indexes (into the pass's fixes) of the fixes the document cannot realize, each with why
    /// (for the user): never tried again.
    pub given_up: Vec<(usize, String)>,
}

/// What the fixer fixes: one or more JSON roots (the documents of a YAML file, or the admission
/// object), each holding one object or a `List` of them ([`objects`]).
pub trait Document {
    type Error;
    /// How many roots.
    fn roots(&self) -> usize;
    /// Root `i` as it is now: what the pass lints.
    fn root(&self, i: usize) -> &Value;
    /// Where the pass applies the fixes of root `i`, one after another: the root itself, or a
    /// scratch copy of it made for the pass.
    fn working(&mut self, i: usize) -> &mut Value;
    /// Realize one pass's fixes, in order.
    fn commit(&mut self, fixes: &mut [PassFix]) -> Result<Commit, Self::Error>;
    /// After [`Document::commit`], each root is exactly its working copy with the pass's fixes
    /// applied (nothing given up, nothing parsed again): the next pass may lint it from the
    /// pass's lint and the paths its fixes touched ([`lint_since`]).
    fn patched_in_place(&self) -> bool {
        false
    }
}

/// A document that is one object patched in place (the webhook): every fix a pass applies is
/// realized at once; [`InPlace::patch`] collects the operations (against the original object).
pub struct InPlace<'v> {
    pub object: &'v mut Value,
    pub patch: Vec<PatchOperation>,
}

impl Document for InPlace<'_> {
    type Error = std::convert::Infallible;
    fn roots(&self) -> usize {
        1
    }
    fn root(&self, _: usize) -> &Value {
        self.object
    }
    fn working(&mut self, _: usize) -> &mut Value {
        self.object
    }
    fn commit(&mut self, fixes: &mut [PassFix]) -> Result<Commit, Self::Error> {
        for f in fixes.iter_mut() {
            self.patch.append(&mut f.ops);
        }
        Ok(Commit {
            changed: !fixes.is_empty(),
            given_up: Vec::new(),
        })
    }
    fn patched_in_place(&self) -> bool {
        true
    }
}

/// What a run of the fixer did.
#[derive(Debug, Default)]
pub struct Fixed {
    /// The rules whose fixes were applied, in the order they first were.
    pub applied: Vec<&'static RuleMeta>,
    /// The last pass had nothing left to apply (else [`FixOptions::max_passes`] stopped it).
    pub converged: bool,
    /// The first pass's lint of every object, of the document as given (when the fixer linted
    /// it, that is without `first`): a caller that reports on the original need not lint it.
    pub first: Option<Vec<ObjectLint>>,
    /// The last pass's lint when it linted the document as fixed (the last pass converged and
    /// was not the first): a caller that checks or reports on the result need not lint again.
    pub last: Option<Vec<ObjectLint>>,
    /// Takes back what was applied in place ([`InPlace`]).
    pub rollback: Rollback,
    /// The fixes given up for the rest of the run ([`FixOptions::retry_failed`] off), with why.
    pub not_fixed: Vec<NotFixed>,
}

/// One object's lint in a pass: the root it is in, its pointer there ([`objects`]), the report.
#[derive(Debug)]
pub struct ObjectLint {
    pub root: usize,
    pub prefix: String,
    pub report: ObjectReport,
}

/// A fix the fixer gave up, and why (said to the user next to the finding that stays).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotFixed {
    /// The root (YAML document) of the finding.
    pub root: usize,
    pub rule: &'static str,
    /// The finding's pointer from the root (`/items/3/spec/…` in a `List`), as the pass that
    /// gave the fix up found it.
    pub pointer: String,
    pub reason: String,
}

impl Fixed {
    /// Give `fix` up for the rest of the run, saying why.
    fn give_up(&mut self, given_up: &mut HashSet<FixKey>, fix: &PassFix, reason: String) {
        let (root, rule, pointer) = fix.key();
        if given_up.insert((root, rule, pointer.clone())) {
            self.not_fixed.push(NotFixed {
                root,
                rule,
                pointer,
                reason,
            });
        }
    }
}

/// The fixer: lints with `config`, `context` and `operation` and applies the fixes the policy
/// of `config` allows.
pub struct Fixer<'a> {
    pub config: &'a Config,
    pub context: &'a Context,
    pub operation: Operation,
    pub options: FixOptions,
}

impl Fixer<'_> {
    /// Fix `doc` until a pass has nothing to apply (or [`FixOptions::max_passes`]). The rules
    /// `skip` holds for are never fixed. `first`: the lint of the document's only object when
    /// the caller has it already (the first pass uses it instead of linting).
    ///
    /// A document patched in place ([`Document::patched_in_place`]) is linted again after a
    /// pass by [`lint_since`]: only the rules that read what the pass's fixes touched run again.
    pub fn fix<D: Document>(
        &self,
        doc: &mut D,
        first: Option<&ObjectReport>,
        skip: &dyn Fn(&RuleMeta) -> bool,
    ) -> Result<Fixed, D::Error> {
        debug_assert!(first.is_none() || doc.roots() == 1);
        let mut out = Fixed::default();
        // Fixes given up for the rest of the run.
        let mut given_up: HashSet<FixKey> = HashSet::new();
        // The previous pass's lints (when it linted) and the paths (root, pointer from the
        // root) its fixes touched: what the next pass's lint starts from.
        let mut previous: Option<Vec<ObjectLint>> = None;
        let mut touched: Vec<(usize, String)> = Vec::new();
        for pass in 0..self.options.max_passes {
            super::deadline::check();
            // The lint of every object of every root, as the pass found them.
            let mut lints: Vec<ObjectLint> = Vec::new();
            if first.is_none() || pass > 0 {
                for root in 0..doc.roots() {
                    // The caller's lint is of the root as one object: later passes lint the
                    // same object (no search of the document for objects, patches or lists).
                    let listed = match first {
                        Some(_) => vec![(String::new(), doc.root(root))],
                        None => objects(doc.root(root)),
                    };
                    for (prefix, o) in listed {
                        let before = if pass == 0 || !doc.patched_in_place() {
                            None
                        } else {
                            match previous.as_ref().or(out.first.as_ref()) {
                                Some(lints) => lints
                                    .iter()
                                    .find(|l| l.root == root && l.prefix == prefix)
                                    .map(|l| &l.report),
                                None => first,
                            }
                        };
                        let report = match before {
                            Some(before) => {
                                let paths: Vec<&str> = touched
                                    .iter()
                                    .filter(|(r, _)| *r == root)
                                    .filter_map(|(_, p)| pointer::relative(p, &prefix))
                                    .collect();
                                lint_since(
                                    o,
                                    self.config,
                                    self.context,
                                    self.operation,
                                    before,
                                    &paths,
                                )
                            }
                            None => lint_object(o, self.config, self.context, self.operation),
                        };
                        lints.push(ObjectLint {
                            root,
                            prefix,
                            report,
                        });
                    }
                }
            }
            let given: Vec<(usize, &str, &[Finding])> = match first.filter(|_| pass == 0) {
                Some(f) => vec![(0, "", f.findings.as_slice())],
                None => lints
                    .iter()
                    .map(|l| (l.root, l.prefix.as_str(), l.report.findings.as_slice()))
                    .collect(),
            };
            let mut fixes: Vec<PassFix> = Vec::new();
            for &(r, prefix, findings) in &given {
                let working = doc.working(r);
                for f in findings
                    .iter()
                    .filter(|f| fix_allowed(f, self.config) && !skip(f.rule))
                {
                    super::deadline::check();
                    let mut fix = PassFix {
                        root: r,
                        prefix,
                        finding: f,
                        ops: Vec::new(),
                    };
                    if !given_up.is_empty() && given_up.contains(&fix.key()) {
                        continue;
                    }
                    let Some(target) = working.pointer_mut(prefix) else {
                        continue;
                    };
                    let ops = &f.fix.as_ref().expect("fix_allowed implies a fix").ops;
                    let applies = apply_fix(target, ops, &mut fix.ops, &mut out.rollback);
                    if !applies || fix.ops.is_empty() {
                        // A fix that changes nothing is already made (by another fix of
                        // the pass, often): not a failure to report.
                        if !self.options.retry_failed && !applies {
                            out.give_up(
                                &mut given_up,
                                &fix,
                                "its fix does not apply to the object as the other fixes left it"
                                    .to_string(),
                            );
                        } else if !self.options.retry_failed {
                            given_up.insert(fix.key());
                        }
                        continue;
                    }
                    if !prefix.is_empty() {
                        fix.ops = std::mem::take(&mut fix.ops)
                            .into_iter()
                            .map(|op| prefix_op(prefix, op))
                            .collect();
                    }
                    fixes.push(fix);
                }
            }
            if fixes.is_empty() {
                out.converged = true;
                if pass > 0 {
                    out.last = Some(lints);
                } else if first.is_none() {
                    out.first = Some(lints);
                }
                return Ok(out);
            }
            touched.clear();
            if doc.patched_in_place() {
                for f in &fixes {
                    touched.extend(f.ops.iter().flat_map(op_paths).map(|p| (f.root, p)));
                }
            }
            let commit = doc.commit(&mut fixes)?;
            for (i, reason) in &commit.given_up {
                out.give_up(&mut given_up, &fixes[*i], reason.clone());
            }
            let failed: HashSet<usize> = commit.given_up.iter().map(|(g, _)| *g).collect();
            for (i, f) in fixes.iter().enumerate() {
                let rule = f.finding.rule;
                if !failed.contains(&i) && !out.applied.iter().any(|a| a.id == rule.id) {
                    out.applied.push(rule);
                }
            }
            drop(fixes);
            if pass == 0 && first.is_none() {
                out.first = Some(lints);
            } else if pass > 0 {
                previous = Some(lints);
            }
            if !commit.changed {
                out.converged = true;
                return Ok(out);
            }
        }
        Ok(out)
    }

    /// Fix an admission object in place ([`InPlace`]) without making it worse, with the fixes
    /// of the rules that are webhook mutations (a [`Mutation::recorded_as`] name; the others are
    /// never applied here): if the fixed object has an error (by rule) that `findings` (its
    /// lint) does not, the API server would reject it, so the fixes are taken back and tried
    /// again without the fixes that add `spec.os` ([`Mutation::adds_spec_os`]), then not at
    /// all. Returns the patch against the original object, the rules whose fixes it holds and,
    /// when the fixer linted it, the lint of the object as fixed ([`Guarded`]).
    ///
    /// [`Mutation::recorded_as`]: crate::model::meta::Mutation::recorded_as
    /// [`Mutation::adds_spec_os`]: crate::model::meta::Mutation::adds_spec_os
    pub fn fix_guarded(&self, object: &mut Value, report: &ObjectReport) -> Guarded {
        let findings = report.findings.as_slice();
        // (A pod with an image that cannot run on Windows is not placed there: the engine
        // offers no such fix, `withhold_os_fixes`.)
        let mut without_spec_os = false;
        for attempt in 0..2 {
            let mut doc = InPlace {
                object,
                patch: Vec::new(),
            };
            // Only webhook mutations; on the second attempt, none that adds spec.os.
            let skip = |r: &RuleMeta| {
                r.mutation.recorded_as.is_none() || (without_spec_os && r.mutation.adds_spec_os)
            };
            let Ok(mut fixed) = self.fix(&mut doc, Some(report), &skip);
            let patch = doc.patch;
            // The last pass linted the fixed object already, when it could: reuse its findings.
            // One object at the root (never a `List`): its lint is the fixed object's.
            let whole = fixed
                .last
                .as_ref()
                .is_none_or(|l| l.len() == 1 && l[0].prefix.is_empty());
            let last: Vec<ObjectReport> = match fixed.last.take() {
                Some(lints) => lints.into_iter().map(|l| l.report).collect(),
                None if patch.is_empty() => Vec::new(),
                None => vec![lint_object(
                    object,
                    self.config,
                    self.context,
                    self.operation,
                )],
            };
            let accept =
                patch.is_empty() || !adds_error(findings, last.iter().flat_map(|r| &r.findings));
            if accept {
                let mut last = last;
                let after = match (patch.is_empty(), last.len()) {
                    (false, 1) if whole => last.pop(),
                    _ => None,
                };
                return Guarded {
                    patch,
                    applied: fixed.applied,
                    after,
                };
            }
            fixed.rollback.apply(object);
            if attempt == 0 {
                without_spec_os = true;
            }
        }
        Guarded::default()
    }
}

/// What [`Fixer::fix_guarded`] did to an admission object.
#[derive(Debug, Default)]
pub struct Guarded {
    /// The patch against the original object (empty: left alone).
    pub patch: Vec<PatchOperation>,
    /// The rules whose fixes the patch holds, in the order they first were applied.
    pub applied: Vec<&'static RuleMeta>,
    /// The lint of the object as fixed (the fixer's last pass, or the guard's own lint), under
    /// the fixer's configuration and operation; `None` when the patch is empty.
    pub after: Option<ObjectReport>,
}

/// Whether `after` (the lint of a mutated object) has an error, by rule, that `before` (the
/// lint of the object as given) does not: the API server would reject it, or `/validate`
/// would deny the pod `/mutate` made. The guard of the fixes and of the mutation steps.
pub(crate) fn adds_error<'f>(
    before: &[Finding],
    after: impl IntoIterator<Item = &'f Finding>,
) -> bool {
    let is_error = |f: &&Finding| f.severity == Severity::Error;
    // The rules with an error before, once (not a scan of `before` per error after: both
    // are thousands on a pod of thousands of bad mounts).
    let had: std::collections::HashSet<&str> =
        before.iter().filter(is_error).map(|b| b.rule.id).collect();
    after
        .into_iter()
        .filter(is_error)
        .any(|a| !had.contains(a.rule.id))
}

/// The paths an operation changes (a `move` changes where it takes from, too).
fn op_paths(op: &PatchOperation) -> Vec<String> {
    let mut paths = vec![op.path().as_str().to_string()];
    if let PatchOperation::Move(m) = op {
        paths.push(m.from.as_str().to_string());
    }
    paths
}

/// `op` with `prefix` (the pointer of an object inside its root) before its path.
pub fn prefix_op(prefix: &str, op: PatchOperation) -> PatchOperation {
    use PatchOperation as P;
    if prefix.is_empty() {
        return op;
    }
    let pre = |p: &json_patch::jsonptr::PointerBuf| {
        json_patch::jsonptr::PointerBuf::parse(format!("{prefix}{p}"))
            .expect("prefixed pointer is valid")
    };
    match op {
        P::Add(mut o) => {
            o.path = pre(&o.path);
            P::Add(o)
        }
        P::Remove(mut o) => {
            o.path = pre(&o.path);
            P::Remove(o)
        }
        P::Replace(mut o) => {
            o.path = pre(&o.path);
            P::Replace(o)
        }
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::model::{Fix, ops};
    use crate::rules;

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

    /// Every pass of the fixer (adds, member adds, removals) is taken back exactly: the webhook
    /// retries on the same object when the API server would reject the result.
    #[test]
    fn fixes_in_place_roll_back_exactly() {
        let original = json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"labels": {"kubernetes.io/os": "linux"}, "name": "iis"},
            "spec": {"terminationGracePeriodSeconds": 71, "shareProcessNamespace": false,
                "securityContext": {"supplementalGroupsPolicy": "Merge"}, "tolerations": [],
                "nodeSelector": {"disktype": "ssd"},
                "containers": [{"name": "init", "image": "mcr.microsoft.com/windows/servercore:ltsc2022",
                    "securityContext": {"windowsOptions": {}, "privileged": false}}]}});
        let cfg = Config::default();
        let report = lint_object(&original, &cfg, &Context::default(), Operation::Create);
        let mut obj = original.clone();
        let fixer = Fixer {
            config: &cfg,
            context: &Context::default(),
            operation: Operation::Create,
            options: FixOptions::WEBHOOK,
        };
        let mut doc = InPlace {
            object: &mut obj,
            patch: Vec::new(),
        };
        let Ok(fixed) = fixer.fix(&mut doc, Some(&report), &|_| false);
        let patch = doc.patch;
        let applied: Vec<&str> = fixed.applied.iter().map(|r| r.id).collect();
        assert_eq!(applied, ["WIN001", "WIN007", "WIN102"]); // add, array add, removal
        let mut replay = original.clone();
        json_patch::patch(&mut replay, &patch).unwrap();
        assert_eq!(replay, obj);
        fixed.rollback.apply(&mut obj);
        assert_eq!(obj.to_string(), original.to_string());
    }
}
