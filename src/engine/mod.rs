//! The engine: object → pod sites → rules → findings ([`lint_object`]), and the one fixer that
//! applies their fixes ([`fix`]; the webhook's mutation is built on it, [`mutation`]). Pure, no
//! I/O: the CLI and the webhook both call these.

/// The cooperative deadline lives in the model so that the pod-site iterators can check it.
pub use crate::model::deadline;
pub mod exemptions;
pub mod fix;
pub mod judge;
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
        // A fix is offered only where one can be applied: never to an existing Pod's spec
        // (immutable on UPDATE). Dropped here once for every rule, not by each rule.
        let fix_possible = eval.fix_possible(&site);
        for rule in rules::all() {
            if !windows && rule.meta.os != RuleOs::Any {
                continue;
            }
            // A rule the configuration turns off is not run at all.
            let severity = match config.policy.overrides.get(rule.meta.id) {
                Some(None) => continue,
                Some(Some(sev)) => Some(*sev),
                None => None,
            };
            // Between rules: a webhook request past its deadline stops here.
            deadline::check();
            for mut f in (rule.check)(&site, &eval) {
                if let Some(sev) = severity {
                    f.severity = sev;
                }
                if !fix_possible {
                    f.fix = None;
                }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::testutil::{cfg, unset, winok};

    /// The engine, not each rule, drops the fixes of an existing Pod (its spec is immutable):
    /// WIN001's fix is offered on CREATE and never on UPDATE, while a Deployment's template
    /// stays fixable.
    #[test]
    fn no_fix_is_offered_for_an_updated_pod() {
        let pod = unset(winok(), "/spec/nodeSelector");
        let fixes = |obj: &Value, op| {
            lint_object(obj, &cfg(), &Context::default(), op)
                .findings
                .iter()
                .filter(|f| f.rule.id == "WIN001")
                .map(|f| f.fix.is_some())
                .collect::<Vec<_>>()
        };
        assert_eq!(fixes(&pod, Operation::Create), vec![true]);
        assert_eq!(fixes(&pod, Operation::Update), vec![false]);
        let dep = serde_json::json!({"apiVersion":"apps/v1","kind":"Deployment",
            "metadata":{"name":"d"},"spec":{"template":{"metadata":{},"spec":pod["spec"].clone()}}});
        assert_eq!(fixes(&dep, Operation::Update), vec![true]);
    }

    /// A rule the configuration turns off is not run: WIN308 is off by default (its metadata
    /// says so) and on when enabled.
    #[test]
    fn rules_off_by_default_come_from_their_metadata() {
        let pod = crate::rules::testutil::set(
            winok(),
            "/spec/containers/0/volumeMounts",
            serde_json::json!([{"name":"d","mountPath":"/data"}]),
        );
        let pod = crate::rules::testutil::set(
            pod,
            "/spec/volumes",
            serde_json::json!([{"name":"d","emptyDir":{}}]),
        );
        let ran = |c: &Config| {
            lint_object(&pod, c, &Context::default(), Operation::Lint)
                .findings
                .iter()
                .any(|f| f.rule.id == "WIN308")
        };
        assert!(!ran(&cfg()));
        let mut on = cfg();
        on.policy.overrides.remove("WIN308");
        assert!(ran(&on));
    }
}
