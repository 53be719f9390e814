//! Whether the cluster runs winlint's own mutating webhook (issue 20 §1): `winlint audit`
//! then judges a running workload as `/validate` does, by the pods that webhook gives it;
//! without it, as written. Found by the webhook's name, `mutate.winlint.io`, which both
//! `winlint manifests` and the Helm chart give it (the configuration's name is the release's).
//! Its `namespaceSelector` is kept: a namespace the webhook skips (kube-system, namespaces
//! labelled `winlint.io/ignore=true`) gets no mutation, so its workloads are judged as written
//! ([`MutatingWebhook::covers`]). Its `objectSelector` is not read (neither the chart nor
//! `winlint manifests` sets one).

use std::collections::BTreeMap;

use k8s_openapi::api::admissionregistration::v1::MutatingWebhookConfiguration;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use kube::api::Api;

use super::client::{ClusterError, list_paged_each};
use crate::model::schedule;

/// The name of winlint's pod mutating webhook in its MutatingWebhookConfiguration.
pub const MUTATING_WEBHOOK: &str = "mutate.winlint.io";

/// winlint's pod mutating webhook as one configuration registers it.
#[derive(Debug, Clone, PartialEq)]
pub struct MutatingWebhook {
    /// The MutatingWebhookConfiguration's name.
    pub configuration: String,
    /// `None`: every namespace (the API server's default).
    pub namespace_selector: Option<LabelSelector>,
}

impl MutatingWebhook {
    /// Whether the API server calls this webhook for a namespace with `labels`.
    pub fn covers(&self, labels: &BTreeMap<String, String>) -> bool {
        self.namespace_selector
            .as_ref()
            .is_none_or(|s| selects(s, labels))
    }
}

/// Label selector semantics (`metav1.LabelSelectorAsSelector`): every `matchLabels` pair and
/// every expression must hold; an empty selector selects everything. An unknown operator or a
/// malformed expression selects nothing (the API server would have refused it).
pub fn selects(selector: &LabelSelector, labels: &BTreeMap<String, String>) -> bool {
    let pairs = selector
        .match_labels
        .iter()
        .flatten()
        .all(|(k, v)| labels.get(k) == Some(v));
    let expressions = selector.match_expressions.iter().flatten().all(|e| {
        let values: Vec<&str> = e.values.iter().flatten().map(String::as_str).collect();
        let value = labels.get(&e.key).map(String::as_str);
        schedule::set_requirement(&e.operator, &values, value).unwrap_or(false)
    });
    pairs && expressions
}

/// winlint's pod mutating webhooks, one per MutatingWebhookConfiguration that holds it.
pub async fn winlint_mutating(
    client: &kube::Client,
    page_size: u32,
) -> Result<Vec<MutatingWebhook>, ClusterError> {
    let api: Api<MutatingWebhookConfiguration> = Api::all(client.clone());
    let mut found = Vec::new();
    list_paged_each(&api, page_size, "mutatingwebhookconfigurations", |c| {
        for w in c.webhooks.iter().flatten() {
            if w.name == MUTATING_WEBHOOK {
                found.push(MutatingWebhook {
                    configuration: c.metadata.name.clone().unwrap_or_default(),
                    namespace_selector: w.namespace_selector.clone(),
                });
            }
        }
        Ok(())
    })
    .await?;
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_charts_selector_skips_kube_system_and_ignored_namespaces() {
        let selector: LabelSelector =
            serde_json::from_value(crate::manifests::namespace_selector("winlint")).unwrap();
        let hook = MutatingWebhook {
            configuration: "winlint".into(),
            namespace_selector: Some(selector),
        };
        let ns = |name: &str, extra: &[(&str, &str)]| -> BTreeMap<String, String> {
            let mut l = BTreeMap::from([("kubernetes.io/metadata.name".into(), name.into())]);
            l.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
            l
        };
        assert!(hook.covers(&ns("shop", &[])));
        assert!(!hook.covers(&ns("kube-system", &[])));
        assert!(!hook.covers(&ns("winlint", &[])));
        assert!(!hook.covers(&ns("legacy", &[("winlint.io/ignore", "true")])));
        assert!(hook.covers(&ns("legacy", &[("winlint.io/ignore", "false")])));
        let labels: LabelSelector = serde_json::from_value(serde_json::json!({
            "matchLabels": {"team": "win"},
            "matchExpressions": [{"key": "tier", "operator": "Exists"}]}))
        .unwrap();
        assert!(selects(
            &labels,
            &ns("a", &[("team", "win"), ("tier", "x")])
        ));
        assert!(!selects(&labels, &ns("a", &[("team", "win")])));
        assert!(selects(&LabelSelector::default(), &BTreeMap::new()));
        let everywhere = MutatingWebhook {
            configuration: "x".into(),
            namespace_selector: None,
        };
        assert!(everywhere.covers(&BTreeMap::new()));
    }
}
