//! The engine: object → pod sites → rules → findings (+ fixes). Pure, no I/O; the CLI and the
//! webhook both call [`lint_object`] and [`apply_fixes`].

use serde_json::Value;

use crate::classify::{self, Classification};
use crate::config::{Config, Target};
use crate::image::{self, ImageInfo};
use crate::rules::{self, Finding, FixSafety, Severity};
use crate::workload::{self, ContainerRef, Context, PodSite};

/// What the object is being evaluated for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    /// Offline lint of a manifest.
    Lint,
    /// Admission of a new object.
    Create,
    /// Admission of a change to an existing object.
    Update,
}

/// Everything a rule may look at besides the pod site itself.
pub struct Eval<'a> {
    pub config: &'a Config,
    pub target: &'a Target,
    pub context: &'a Context,
    pub operation: Operation,
    pub class: Classification,
    /// The containers of the site (init, regular, ephemeral) with their image analyses.
    pub images: Vec<(ContainerRef<'a>, ImageInfo)>,
    /// The site's Linux-only fields, computed once for the rules that need them.
    linux_only: std::cell::OnceCell<Vec<crate::rules::util::LinuxOnlyField<'a>>>,
}

/// Rules that run on every pod, whatever its OS; all others run only on Windows pods.
pub const ANY_OS_RULES: &[&str] = &["WIN004", "WIN008", "WIN104", "WIN603"];

/// Annotation that exempts an object from rules (IDs or names, comma-separated, or `all`).
pub const IGNORE_ANNOTATION: &str = "winlint.io/ignore";
pub const IGNORE_REASON_ANNOTATION: &str = "winlint.io/ignore-reason";

impl<'a> Eval<'a> {
    /// The fields `validateWindows` rejects once `spec.os.name: windows` is set
    /// ([`crate::rules::util::linux_only_fields`]), computed once per pod site: WIN003,
    /// WIN101–WIN103, WIN107 and the spec.os guard all ask.
    pub fn linux_only_fields(
        &self,
        site: &PodSite<'a>,
    ) -> &[crate::rules::util::LinuxOnlyField<'a>] {
        self.linux_only
            .get_or_init(|| crate::rules::util::linux_only_fields(site, self.target))
    }

    /// `spec.os.name == "windows"`: the API server validates Windows-only constraints.
    pub fn os_declared_windows(&self, site: &PodSite) -> bool {
        site.str("/os/name") == Some("windows")
    }

    /// Severity of a field the API server forbids once `spec.os.name: windows` is set
    /// (shared/rules.md §2.2): error when it is set (and the target validates it), else warning.
    pub fn forbidden_field_severity(&self, site: &PodSite) -> Severity {
        if self.os_declared_windows(site) && crate::rules::util::spec_os_available(self.target) {
            Severity::Error
        } else {
            Severity::Warning
        }
    }
}

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
        .pointer("/metadata/annotations")
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
        let eval = Eval {
            config,
            target: &config.target,
            context,
            operation,
            class,
            images,
            linux_only: std::cell::OnceCell::new(),
        };
        let windows = eval.class.is_windows();
        for rule in rules::all() {
            if !windows && !ANY_OS_RULES.contains(&rule.meta.id) {
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
        match (working.pointer(add.path.as_str()), &add.value) {
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
    let mut patch = Vec::new();
    let mut applied = Vec::new();
    for f in findings.iter().filter(|f| fix_allowed(f, config)) {
        let fix = f.fix.as_ref().expect("fix_allowed implies a fix");
        let mut ops = Vec::new();
        let mut trial = object.clone();
        let mut ok = true;
        for op in &fix.ops {
            let norm = normalize_op(&trial, op);
            if json_patch::patch(&mut trial, &norm).is_err() {
                ok = false;
                break;
            }
            ops.extend(norm);
        }
        if ok && !ops.is_empty() {
            *object = trial;
            patch.extend(ops);
            if !applied.contains(&f.rule.id) {
                applied.push(f.rule.id);
            }
        }
    }
    (patch, applied)
}

/// Passes [`fix_object`] makes at most.
pub const MAX_FIX_PASSES: usize = 4;

/// Apply the allowed fixes of `findings` (the lint of `object`), then lint again and apply the
/// fixes that became possible, until none is left (at most [`MAX_FIX_PASSES`] passes): one fix
/// can unblock another (WIN102 deleting `shareProcessNamespace: false` lets WIN003 add
/// `spec.os`). Rules in `skip` are never fixed. Returns the patch against the original object
/// and the rules whose fixes were applied.
pub fn fix_object(
    object: &mut Value,
    findings: &[Finding],
    config: &Config,
    context: &Context,
    operation: Operation,
    skip: &[&str],
) -> (Vec<json_patch::PatchOperation>, Vec<&'static str>) {
    let keep = |f: &&Finding| !skip.contains(&f.rule.id);
    let first: Vec<Finding> = findings.iter().filter(keep).cloned().collect();
    let (mut patch, mut applied) = apply_fixes(object, &first, config);
    for _ in 1..MAX_FIX_PASSES {
        if patch.is_empty() {
            break;
        }
        let next: Vec<Finding> = lint_object(object, config, context, operation)
            .findings
            .iter()
            .filter(keep)
            .cloned()
            .collect();
        let (p, a) = apply_fixes(object, &next, config);
        if p.is_empty() {
            break;
        }
        patch.extend(p);
        for id in a {
            if !applied.contains(&id) {
                applied.push(id);
            }
        }
    }
    (patch, applied)
}

/// JSON-pointer escape of one token (`kubernetes.io/os` → `kubernetes.io~1os`).
pub fn escape(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}
