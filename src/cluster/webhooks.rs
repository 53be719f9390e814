//! Whether the cluster runs winlint's own mutating webhook (issue 20 §1): `winlint audit`
//! then judges a running workload as `/validate` does, by the pods that webhook gives it;
//! without it, as written. Found by the webhook's name, `mutate.winlint.io`, which both
//! `winlint manifests` and the Helm chart give it (the configuration's name is the release's).

use k8s_openapi::api::admissionregistration::v1::MutatingWebhookConfiguration;
use kube::api::Api;

use super::client::{ClusterError, list_paged_each};

/// The name of winlint's pod mutating webhook in its MutatingWebhookConfiguration.
pub const MUTATING_WEBHOOK: &str = "mutate.winlint.io";

/// The MutatingWebhookConfigurations that hold winlint's pod mutating webhook, by name.
pub async fn winlint_mutating(
    client: &kube::Client,
    page_size: u32,
) -> Result<Vec<String>, ClusterError> {
    let api: Api<MutatingWebhookConfiguration> = Api::all(client.clone());
    let mut found = Vec::new();
    list_paged_each(&api, page_size, "mutatingwebhookconfigurations", |c| {
        let ours = c
            .webhooks
            .iter()
            .flatten()
            .any(|w| w.name == MUTATING_WEBHOOK);
        if ours {
            found.push(c.metadata.name.clone().unwrap_or_default());
        }
        Ok(())
    })
    .await?;
    Ok(found)
}
