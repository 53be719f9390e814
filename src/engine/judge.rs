//! How `/validate` judges a pod-bearing object, and `winlint audit` a running one when the
//! cluster has winlint's mutating webhook (issue 8 §1, issue 20 §1): a Pod as written (the
//! mutating webhook ran before); a workload by the pods it will create. When the template as
//! written has errors that the pod mutation can take away and the pod mutating webhook is
//! registered (`webhook.mutate`), the template is judged after the mutations that webhook will
//! apply to its pods (same engine, configuration and opt-outs, on a copy): only the errors that
//! survive them count, and [`Judged::added`] says what the pods will get. A template without
//! errors is judged as written (its pods are admitted either way), which keeps the common
//! request at one evaluation.

use serde_json::Value;

use super::{ObjectReport, lint_object, mutation};
use crate::config::{Config, HyperV};
use crate::model::labels::DEFAULT_OS_LABEL;
use crate::model::meta::Recorded;
use crate::model::{Context, Finding, Operation, Severity};
use crate::rules;

/// The findings a pod-bearing object is judged by.
#[derive(Debug, Default)]
pub struct Judged {
    pub findings: Vec<Finding>,
    /// What the pod mutating webhook will add to the pods (mutation names, as recorded in
    /// `winlint.io/mutated`); empty when the object is judged as written.
    pub added: Vec<String>,
    /// The mutations of the pods the user must hear of ([`mutation::Mutated::notices`]).
    pub notices: Vec<(&'static str, String)>,
}

/// Lint `object` as the linter reports it: as written, or, with `policy.judge_as_pods`
/// (winlint's mutating webhook is in the cluster), by the pods it will create, as `/validate`
/// judges it ([`as_pods`], under the mutation configuration of its namespace). Only an object
/// with errors costs more than its lint.
pub fn lint_judged(
    object: &Value,
    config: &Config,
    context: &Context,
    op: Operation,
) -> ObjectReport {
    judged(
        object,
        config,
        context,
        op,
        lint_object(object, config, context, op),
    )
}

/// [`lint_judged`] of an object whose lint as written is `report` already (`--fix` keeps the
/// lint of its last pass: the object is not linted again).
pub fn judged(
    object: &Value,
    config: &Config,
    context: &Context,
    op: Operation,
    mut report: ObjectReport,
) -> ObjectReport {
    if !config.policy.judge_as_pods
        || !report
            .findings
            .iter()
            .any(|f| f.severity == Severity::Error)
    {
        return report;
    }
    let namespace = object["metadata"]["namespace"].as_str().unwrap_or("");
    let windows_default = context
        .namespaces
        .get(namespace)
        .and_then(|l| l.get(DEFAULT_OS_LABEL))
        .is_some_and(|v| v == "windows");
    let mutation = MutationConfigs::new(config);
    let mutate = mutation.for_namespace(windows_default);
    if let Some(j) = as_pods(object, op, config, mutate, context, &report) {
        report.findings = j.findings;
    }
    report
}

/// The configurations of the webhook's pod mutation: [`mutation_config`], and its variant for
/// the namespaces that opted in with `winlint.io/default-os=windows`, where Windows-probable
/// pods are mutated too (shared/rules.md §3).
#[derive(Debug, Clone)]
pub struct MutationConfigs {
    plain: Config,
    probable: Config,
}

impl MutationConfigs {
    pub fn new(config: &Config) -> MutationConfigs {
        let plain = mutation_config(config);
        let mut probable = plain.clone();
        probable.policy.mutation.probable = true;
        MutationConfigs { plain, probable }
    }

    /// The configuration in a namespace (`windows_default`: labelled
    /// `winlint.io/default-os=windows`).
    pub fn for_namespace(&self, windows_default: bool) -> &Config {
        if windows_default {
            &self.probable
        } else {
            &self.plain
        }
    }
}

/// The configuration of the webhook's pod mutation, from the validating one: M2, the opt-in
/// fixes the mutation applies for this target (the Windows-build pin in a cluster of several
/// builds); M4 with `mutation.stripLinuxOnlyFields`, the Linux-only fields that would make the
/// API server reject the pod once `spec.os` is added are removed (their rules' opt-in fixes).
fn mutation_config(config: &Config) -> Config {
    let mut mutate_config = config.clone();
    for rule in rules::all() {
        if rule
            .meta
            .mutation
            .opt_in_when
            .is_some_and(|f| f(&config.target))
        {
            mutate_config.policy.fix_opt_in.insert(rule.meta.id.into());
        }
        if config.policy.mutation.strip_linux_only_fields
            && rule.meta.mutation.recorded_as == Some(Recorded::LinuxOnlyFields)
        {
            mutate_config.policy.fix_opt_in.insert(rule.meta.id.into());
        }
    }
    mutate_config
}

/// Judge `object` by the pods it will create, given `report`, its lint as written under
/// `config` (`/validate`'s configuration; `mutate_config` is the pod mutation's). `None` when
/// a rule panicked.
pub fn as_pods(
    object: &Value,
    op: Operation,
    config: &Config,
    mutate_config: &Config,
    context: &Context,
    report: &ObjectReport,
) -> Option<Judged> {
    let findings = report.findings.clone();
    let as_written = |findings| {
        Some(Judged {
            findings,
            ..Judged::default()
        })
    };
    let is_pod = object.get("kind").and_then(Value::as_str) == Some("Pod");
    if is_pod
        || !config.policy.pod_mutation
        || !findings.iter().any(|f| f.severity == Severity::Error)
    {
        return as_written(findings);
    }
    let cfg = mutate_config;
    // A DaemonSet's controller picks the nodes of its pods from the template (its
    // nodeSelector, affinity and tolerations: `NodeShouldRunDaemonPod`), before any pod
    // exists: what the pod webhook adds to those pods later moves none of them. So its
    // placement errors are judged as written.
    let daemon = object.get("kind").and_then(Value::as_str) == Some("DaemonSet");
    let moves_pods = |f: &Finding| daemon && f.rule.mutation.places_pod;
    // Only a mutation that can take an error away can change the verdict: the fix of an
    // error that the webhook applies, or Hyper-V isolation (which can make an image
    // runnable). When none can, the template is denied as written, at one evaluation
    // (its warnings are then the template's own).
    let removable = cfg.policy.mutation.hyperv != HyperV::Off
        || findings.iter().any(|f| {
            f.severity == Severity::Error
                && f.rule.mutation.recorded_as.is_some()
                && !moves_pods(f)
                && super::fix::fix_allowed(f, cfg)
        });
    if !removable {
        return as_written(findings);
    }
    let mut pods = object.clone();
    // The mutation configuration differs from the validating one only in its fix policy, so
    // on CREATE the lint above is the one the mutation starts from.
    let Some(mut m) = super::deadline::catch(|| match op {
        Operation::Create => mutation::mutate_linted(&mut pods, cfg, context, report),
        _ => mutation::mutate_with(&mut pods, cfg, context),
    }) else {
        return as_written(findings);
    };
    if m.patch.is_empty() {
        return as_written(findings);
    }
    // On CREATE the mutation's last lint is the mutated copy's, when nothing changed after it
    // (the findings do not depend on the fix policy): not linted again.
    let after = match m.after.take() {
        Some(r) if op == Operation::Create => Some(r.findings),
        _ => lint(&pods, config, context, op),
    };
    match after {
        Some(after) if daemon => {
            // The pods' placement is the template's: its placement findings as written,
            // the rest as its pods will be.
            let mut judged: Vec<Finding> = after.into_iter().filter(|f| !moves_pods(f)).collect();
            judged.extend(findings.into_iter().filter(|f| moves_pods(f)));
            let placing = |id: &str| rules::find(id).is_some_and(|r| r.meta.mutation.places_pod);
            Some(Judged {
                findings: judged,
                added: m
                    .changed
                    .into_iter()
                    .filter(|n| !mutation::places_pod(n))
                    .collect(),
                notices: m
                    .notices
                    .into_iter()
                    .filter(|(id, _)| !placing(id))
                    .collect(),
            })
        }
        Some(after) => Some(Judged {
            findings: after,
            added: m.changed,
            notices: m.notices,
        }),
        None => as_written(findings),
    }
}

/// Lint, turning a panicking rule into `None`.
fn lint(object: &Value, config: &Config, context: &Context, op: Operation) -> Option<Vec<Finding>> {
    super::deadline::catch(|| lint_object(object, config, context, op).findings)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::LinuxGuard;
    use crate::engine::reads_check::{targets, testdata_objects};

    /// `/validate` judges a template on CREATE by the mutation's last lint instead of linting
    /// the mutated copy again: over every workload of `testdata/` under several mutation
    /// policies and targets, that lint (the fixer's incremental re-lint, `lint_since`) is
    /// exactly the mutated copy's full lint (findings, fixes, exemptions, classes), and it is
    /// offered only when the copy did not change after it.
    #[test]
    fn the_mutations_last_lint_is_the_mutated_copys() {
        let mut configs = Vec::new();
        let targets = targets();
        for (i, (strip, hyperv, label, guard)) in [
            (false, HyperV::Off, false, LinuxGuard::Auto),
            (true, HyperV::Off, false, LinuxGuard::Auto),
            (true, HyperV::Auto, false, LinuxGuard::Auto),
            (false, HyperV::Off, true, LinuxGuard::On),
            (false, HyperV::Auto, false, LinuxGuard::Auto),
            (true, HyperV::Off, false, LinuxGuard::Auto),
        ]
        .into_iter()
        .enumerate()
        {
            let mut c = Config::default();
            if i >= 4 {
                c.target = targets[i - 3].1.target.clone();
            }
            c.policy.mutation.strip_linux_only_fields = strip;
            c.policy.mutation.hyperv = hyperv;
            c.policy.mutation.pod_os_label = label;
            c.policy.mutation.linux_guard = guard;
            configs.push(c);
        }
        let (mut reused, mut mutated) = (0, 0);
        for (file, cx, obj) in testdata_objects() {
            let obj = &obj;
            for c in &configs {
                for probable in [false, true] {
                    let mc = MutationConfigs::new(c);
                    let cfg = mc.for_namespace(probable);
                    let report = lint_object(obj, c, &cx, Operation::Create);
                    let mut pods = obj.clone();
                    let m = mutation::mutate_linted(&mut pods, cfg, &cx, &report);
                    if m.patch.is_empty() {
                        assert!(m.after.is_none());
                        continue;
                    }
                    mutated += 1;
                    let Some(after) = m.after else { continue };
                    reused += 1;
                    let again = lint_object(&pods, c, &cx, Operation::Create);
                    assert_eq!(
                        format!("{:?}", after),
                        format!("{again:?}"),
                        "{}",
                        file.display()
                    );
                }
            }
        }
        // Both cases occur: the lint reused, and a step or the pod's own record after it.
        assert!(reused > 50 && mutated > reused, "{reused} of {mutated}");
    }
}
