//! The engine: object → pod sites → rules → findings ([`lint_object`]), and the one fixer that
//! applies their fixes ([`fix`]; the webhook's mutation is built on it, [`mutation`]). Pure, no
//! I/O: the CLI and the webhook both call these.

/// The cooperative deadline lives in the model so that the pod-site iterators can check it.
pub use crate::model::deadline;
pub mod exemptions;
pub mod fix;
pub mod judge;
pub mod mutation;
#[cfg(test)]
mod reads_check;

use serde_json::Value;

use crate::config::Config;
use crate::model::Context;
use crate::model::classify::{self, Classification};
use crate::model::image::{self, ImageInfo};
use crate::model::meta::RuleOs;
use crate::model::placement::Placement;
use crate::model::reads::{self, Area, Reads};
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
    /// Each rule that ran, in the order it ran: where its findings are ([`lint_since`] carries
    /// them over).
    pub runs: Vec<RuleRun>,
    /// For each pod site, whether an image that cannot run on Windows holds back the fixes that
    /// settle the pod's OS ([`withhold_os_fixes`]).
    pub withheld: Vec<bool>,
    /// For each pod site, where the pod can land when no nodes are observed
    /// ([`reads::with_placement`] compares it after a patch).
    pub placements: Vec<Option<Placement>>,
    /// For each pod site, the analyses of its containers' images ([`workload::PodSite::containers`]
    /// order): [`lint_since`] keeps them when a patch did not touch the containers.
    pub images: Vec<Vec<ImageInfo>>,
}

/// One rule run on one pod site, as [`ObjectReport::runs`] records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleRun {
    /// The pod site ([`workload::pod_sites`] index).
    pub site: usize,
    /// The rule ([`rules::all`] index).
    pub rule: usize,
    /// How many findings the rule returned (exempted ones included).
    pub produced: usize,
    /// Where those that were kept are in [`ObjectReport::findings`] (all of them or, when the
    /// annotation exempts the rule, none).
    pub kept: std::ops::Range<usize>,
}

/// Evaluate every pod site of `object` against every enabled rule.
pub fn lint_object(
    object: &Value,
    config: &Config,
    context: &Context,
    operation: Operation,
) -> ObjectReport {
    lint(object, config, context, operation, None)
}

/// [`lint_object`] of `object` after a patch, given `before`, the lint of the object before
/// it (same configuration, context and operation), and `paths`, the JSON pointers (from the
/// object's root) of the patch's operations. A rule runs again only when the areas it
/// [`reads`](crate::model::RuleMeta::reads) overlap the areas the patch touched
/// ([`reads::touched`]) or when the site's classification changed its evidence and the rule
/// reads it; its findings are carried over otherwise. When a site's OS verdict changed every
/// rule runs. The report equals [`lint_object`]'s (the differential tests in
/// `engine::judge` check it over `testdata/`).
pub fn lint_since(
    object: &Value,
    config: &Config,
    context: &Context,
    operation: Operation,
    before: &ObjectReport,
    paths: &[&str],
) -> ObjectReport {
    lint(object, config, context, operation, Some((before, paths)))
}

/// What a patch touched on a site for its rules, given the areas of its paths (`t`,
/// [`touched_by`]) and the site's classification before (`was`) and after (`now`) it: those
/// areas, and the classification's evidence when it changed; `None` (every rule runs again)
/// when the OS verdict changed, which decides which rules run at all.
pub(crate) fn touched_since(was: &Classification, now: &Classification, t: Reads) -> Option<Reads> {
    if was.os != now.os || was.strength != now.strength {
        return None;
    }
    Some(if was == now {
        t
    } else {
        t.with(Area::Evidence)
    })
}

/// The areas of `site` that a patch on `paths` touched ([`reads::touched`]).
fn touched_by(site: &workload::PodSite, paths: &[&str]) -> Reads {
    paths
        .iter()
        .fold(Reads::NONE, |t, p| t.and(reads::touched(site, p)))
}

/// The one lint: every rule of every site, or, `since` a lint before a patch, the rules the
/// patch may have changed the findings of.
fn lint(
    object: &Value,
    config: &Config,
    context: &Context,
    operation: Operation,
    since: Option<(&ObjectReport, &[&str])>,
) -> ObjectReport {
    let mut report = ObjectReport::default();
    let exemption_policy = &config.policy.exemptions;
    let sites = workload::pod_sites(object);
    let mut exemptions = Exemptions::of_sites(object, &sites, exemption_policy);
    report.ignore_reason = exemptions.reason.clone();
    // The previous runs, in order: a cursor walks them along with this lint.
    let mut previous = since
        .map_or(&[][..], |(b, _)| b.runs.as_slice())
        .iter()
        .peekable();
    for (s, site) in sites.into_iter().enumerate() {
        // The areas of the site the patch touched, and the site before it.
        let patched = since.and_then(|(before, paths)| {
            let was = (before.images.get(s)?, before.classes.get(s)?);
            Some((was, touched_by(&site, paths)))
        });
        // A patch that did not touch the containers left their images as they were.
        let analyzed = patched
            .filter(|(_, t)| !t.contains(Area::Containers))
            .map(|((images, _), _)| images);
        let images: Vec<(ContainerRef, ImageInfo)> = site
            .containers()
            .enumerate()
            .map(|(i, c)| {
                let info = match analyzed.and_then(|was| was.get(i)) {
                    Some(was) => was.clone(),
                    None => image::analyze(c.image().unwrap_or("")),
                };
                (c, info)
            })
            .collect();
        let class = classify::classify_since(
            &site,
            images.iter().map(|(_, i)| i),
            context,
            &config.target,
            patched.map(|((_, class), t)| (class, t)),
        );
        let eval = Eval::new(&config.target, context, operation, class, images)
            .in_namespace(site.namespace);
        // What the patch touched on this site; `None`: every rule runs.
        let touched = since.zip(patched).and_then(|((before, _), ((_, was), t))| {
            let t = touched_since(was, &eval.class, t)?;
            let was_placed = before.placements.get(s)?.as_ref();
            Some(reads::with_placement(t, was_placed, || {
                eval.placement(&site)
            }))
        });
        // Fixes withheld before are not carried: the image may be fixed by now.
        let was_withheld = since.is_some_and(|(b, _)| b.withheld.get(s) == Some(&true));
        let site_start = report.findings.len();
        let windows = eval.class.is_windows();
        // A fix is offered only where one can be applied: never to an existing Pod's spec
        // (immutable on UPDATE). Dropped here once for every rule, not by each rule.
        let fix_possible = eval.fix_possible(&site);
        report.runs.reserve(rules::all().len());
        for (r, rule) in rules::all().iter().enumerate() {
            if !windows && rule.meta.os != RuleOs::Any {
                continue;
            }
            // A rule the configuration turns off is not run at all.
            let severity = match config.policy.overrides.get(rule.meta.id) {
                Some(None) => continue,
                Some(Some(sev)) => Some(*sev),
                None => None,
            };
            while previous.next_if(|p| (p.site, p.rule) < (s, r)).is_some() {}
            let carried = match (touched, previous.peek()) {
                (Some(t), Some(p))
                    if (p.site, p.rule) == (s, r)
                        && !rule.meta.reads.sees(t)
                        && !(was_withheld && rule.meta.mutation.settles_os()) =>
                {
                    since.map(|(before, _)| (*p, before))
                }
                _ => None,
            };
            let start = report.findings.len();
            let produced = if let Some((p, before)) = carried {
                // The rule reads nothing the patch touched: its findings (severity and fix
                // already settled) are the same, and so is what the annotation exempts.
                if p.produced > 0 && exemptions.exempts(rule.meta, exemption_policy) {
                    report.suppressed += p.produced;
                    report
                        .exempted
                        .extend(std::iter::repeat_n(rule.meta.id, p.produced));
                } else {
                    report
                        .findings
                        .extend_from_slice(&before.findings[p.kept.clone()]);
                }
                p.produced
            } else {
                // Between rules: a webhook request past its deadline stops here.
                deadline::check();
                let found = (rule.check)(&site, &eval);
                let produced = found.len();
                for mut f in found {
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
                produced
            };
            report.runs.push(RuleRun {
                site: s,
                rule: r,
                produced,
                kept: start..report.findings.len(),
            });
        }
        report.withheld.push(withhold_os_fixes(
            &mut report.findings[site_start..],
            config,
        ));
        // Offline, a placement is a build pin and cheap to keep; with observed nodes a placement
        // field touched counts as placement touched (`with_placement`).
        let placed = config
            .target
            .nodes
            .is_none()
            .then(|| eval.placement(&site).clone());
        report.placements.push(placed);
        report
            .images
            .push(eval.images.into_iter().map(|(_, i)| i).collect());
        report.classes.push(eval.class);
    }
    report.exemption_refused = exemptions.refused;
    report
}

/// Take the fixes that settle the pod's OS ([`Mutation::settles_os`]) off `findings` (one pod
/// site's) while one of them says an image cannot run on Windows ([`Mutation::image_cannot_run`])
/// and its own fix is not applied: such a pod runs nowhere as written, and placing it on Windows
/// or declaring it Windows hides that instead of fixing it. Returns whether it did. One place
/// for `winlint --fix` and `/mutate`, so both leave such a pod as written and offer only what
/// they apply.
///
/// [`Mutation::settles_os`]: crate::model::meta::Mutation::settles_os
/// [`Mutation::image_cannot_run`]: crate::model::meta::Mutation::image_cannot_run
fn withhold_os_fixes(findings: &mut [Finding], config: &Config) -> bool {
    let blocked = findings
        .iter()
        .any(|f| f.rule.mutation.image_cannot_run && !fix::fix_allowed(f, config));
    if blocked {
        for f in findings.iter_mut() {
            if f.rule.mutation.settles_os() {
                f.fix = None;
            }
        }
    }
    blocked
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
