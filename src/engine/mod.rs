//! The engine: object → pod sites → rules → findings ([`lint_object`]), and the one fixer that
//! applies their fixes ([`fix`]; the webhook's mutation is built on it, [`mutation`]). Pure, no
//! I/O: the CLI and the webhook both call these.

pub mod fix;
pub mod mutation;

use serde_json::Value;

use crate::config::Config;
use crate::model::Context;
use crate::model::classify::{self, Classification};
use crate::model::image::{self, ImageInfo};
use crate::model::labels::{IGNORE_ANNOTATION, IGNORE_REASON_ANNOTATION};
use crate::model::meta::RuleOs;
use crate::model::workload::Lookup;
use crate::model::workload::{self, ContainerRef};
use crate::model::{Eval, Finding, Operation};
use crate::rules;

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
