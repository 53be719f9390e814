//! One audited object judged: what `winlint audit` and `winlint serve`'s audit loop
//! (`server/audit_loop.rs`) both do with each top owner they list (issue 29: one code path).
//! The object is linted, judged by the pods winlint's mutating webhook gives it where that
//! webhook covers its namespace ([`AsPods`]; `engine::judge::lint_judged`), and the Pods the
//! scheduler could not place are joined to the findings that explain them
//! ([`super::pending::attach`]).

use std::collections::BTreeMap;

use crate::config::Config;
use crate::engine::{self, ObjectReport};
use crate::model::{Context, Operation};

use super::client::{ClusterError, ErrorKind, PAGE_SIZE};
use super::pending::{self, Pending};
use super::webhooks::{self, MutatingWebhook};

/// Workloads are judged by the pods winlint's mutating webhook gives them.
#[derive(Debug, Clone)]
pub struct AsPods {
    /// Why, for the user (the configurations found, or `--assume-webhook`).
    pub why: String,
    /// The webhooks found, whose namespaceSelectors say where; `None`: everywhere
    /// (`--assume-webhook`).
    pub hooks: Option<Vec<MutatingWebhook>>,
}

impl AsPods {
    /// Whether the webhook mutates the pods of a namespace with `labels` (unknown labels:
    /// none, as the API server matches a namespace it does not know).
    pub fn covers(&self, labels: Option<&BTreeMap<String, String>>) -> bool {
        let none = BTreeMap::new();
        self.hooks
            .as_ref()
            .is_none_or(|hooks| hooks.iter().any(|h| h.covers(labels.unwrap_or(&none))))
    }
}

/// Whether to judge workloads as the pods winlint's mutating webhook makes of them: `Some`
/// when `assume` says so or the cluster has the webhook; `Err` (with why, one line) when the
/// cluster does not let us look: then they are judged as written.
pub async fn webhook_judging(
    client: &kube::Client,
    assume: bool,
) -> Result<Option<AsPods>, String> {
    if assume {
        return Ok(Some(AsPods {
            why: "--assume-webhook".into(),
            hooks: None,
        }));
    }
    match webhooks::winlint_mutating(client, PAGE_SIZE).await {
        Ok(found) if !found.is_empty() => Ok(Some(AsPods {
            why: format!(
                "winlint's mutating webhook is registered (MutatingWebhookConfiguration {})",
                found
                    .iter()
                    .map(|h| h.configuration.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            hooks: Some(found),
        })),
        Ok(_) => Ok(None),
        Err(e) => Err(why_unknown(&e)),
    }
}

fn why_unknown(e: &ClusterError) -> String {
    match e.kind {
        ErrorKind::Forbidden => "not allowed to list mutatingwebhookconfigurations".into(),
        _ => e.without_hint(),
    }
}

/// What every object of one audit is judged with.
pub struct Judge<'a> {
    /// The configuration of the namespaces judged as written.
    as_written: Config,
    /// The same with `judge_as_pods`, for the namespaces the webhook covers.
    as_pods_config: Option<Config>,
    as_pods: Option<AsPods>,
    context: &'a Context,
}

impl<'a> Judge<'a> {
    pub fn new(config: &Config, context: &'a Context, as_pods: Option<AsPods>) -> Judge<'a> {
        let as_pods_config = as_pods.as_ref().map(|_| {
            let mut c = config.clone();
            c.policy.judge_as_pods = true;
            c
        });
        Judge {
            as_written: config.clone(),
            as_pods_config,
            as_pods,
            context,
        }
    }

    /// The context the objects are judged in.
    pub fn context(&self) -> &Context {
        self.context
    }

    /// Lint `object` (in `namespace`) as the audit judges it; no Pod of it is pending.
    pub fn judge(&self, object: &serde_json::Value, namespace: &str) -> ObjectReport {
        let config = match (&self.as_pods, &self.as_pods_config) {
            (Some(a), Some(c)) if a.covers(self.context.namespaces.get(namespace)) => c,
            _ => &self.as_written,
        };
        engine::judge::lint_judged(object, config, self.context, Operation::Lint)
    }

    /// The findings of an object whose Pods `pending` the scheduler could not place: the
    /// scheduler's word joined to the findings that explain it.
    pub fn with_pending(findings: &mut [crate::model::Finding], pending: &[Pending]) {
        pending::attach(findings, pending);
    }
}
