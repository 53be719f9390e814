//! The engine: object → pod sites → rules → findings ([`lint_object`]), and the one fixer that
//! applies their fixes ([`fix`]; the webhook's mutation is built on it, [`mutation`]). Pure, no
//! I/O: the CLI and the webhook both call these.

/// The cooperative deadline lives in the model so that the pod-site iterators can check it.
pub use crate::model::deadline;
pub mod exemptions;
pub mod fix;
pub mod mutation;

use serde_json::Value;

use crate::config::Config;
use crate::model::Context;
use crate::model::classify::{self, Classification};
use crate::model::image::{self, ImageInfo};
use crate::model::meta::RuleOs;
use crate::model::workload::{self, ContainerRef};
use crate::model::{Eval, Finding, Operation};
use crate::rules;
use exemptions::Exemptions;

/// The result of evaluating one object.
#[derive(Debug, Clone, Default)]
pub struct ObjectReport {
    pub findings: Vec<Finding>,
    /// Findings exempted by the `winlint.io/ignore` annotation.
    pub suppressed: usize,
    /// The rule of each exempted finding (for metrics and logs).
    pub exempted: Vec<&'static str>,
    /// Why the annotation was not honoured, or only in part (`exemptions:` policy).
    pub exemption_refused: Option<String>,
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
    let exemption_policy = &config.policy.exemptions;
    let mut exemptions = Exemptions::of(object, exemption_policy);
    report.ignore_reason = exemptions.reason.clone();
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
            // Between rules: a webhook request past its deadline stops here.
            deadline::check();
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
                if exemptions.exempts(rule.meta, exemption_policy) {
                    report.suppressed += 1;
                    report.exempted.push(rule.meta.id);
                    continue;
                }
                report.findings.push(f);
            }
        }
        report.classes.push(eval.class);
    }
    report.exemption_refused = exemptions.refused;
    report
}
