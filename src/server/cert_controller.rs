//! Certificates that do not churn (`--certificates-secret NAME`): `serve` keeps its own CA and
//! serving certificate in a Secret of its namespace and the caBundle of its own webhook
//! configurations (`--webhook-configuration`) in step with it, as Gatekeeper's cert-controller
//! and Kyverno do. No cert-manager, nothing random in the install manifests.
//!
//! * The Secret is the source of truth: created if absent (a `409` means another replica won:
//!   read theirs), replaced with its `resourceVersion` (optimistic concurrency: a `409` means
//!   another replica changed it first: read again). Every replica copies it to `--tls-cert` /
//!   `--tls-key`, which the reload loop picks up.
//! * The CA lives 10 years; the serving certificate is re-issued under the same CA key when a
//!   third of its validity is left (or when it does not verify for the names), so a rotation
//!   never changes the caBundle: requests flow through it without a failed handshake.
//! * Each check also sets the caBundle of every webhook of both configurations to the Secret's
//!   `ca.crt` where it differs (a re-applied manifest, a first install).

use std::path::{Path, PathBuf};
use std::time::Duration;

use k8s_openapi::ByteString;
use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration, WebhookClientConfig,
};
use k8s_openapi::api::core::v1::Secret;
use kube::Api;
use kube::api::{ObjectMeta, PostParams};

use crate::certs::issue::{self, Pem};
use crate::model::date::epoch_seconds;

/// The CA's validity.
const CA_VALIDITY: Duration = Duration::from_secs(10 * 365 * 86_400);
/// Annotations with the serving certificate's issue and expiry times (Unix seconds).
const ISSUED: &str = "winlint.io/serving-issued";
const NOT_AFTER: &str = "winlint.io/serving-not-after";

/// What the controller manages.
#[derive(Debug, Clone)]
pub struct Controller {
    pub secret: String,
    pub namespace: String,
    /// The serving certificate's names (the Service's DNS names, or the URL's host).
    pub names: Vec<String>,
    pub validity: Duration,
    /// The webhook configurations whose caBundle to keep (`--webhook-configuration`).
    pub webhook_configuration: Option<String>,
    pub cert_file: PathBuf,
    pub key_file: PathBuf,
}

fn text(s: &Secret, k: &str) -> Option<String> {
    let b = s.data.as_ref()?.get(k)?;
    String::from_utf8(b.0.clone()).ok()
}

fn annotation(s: &Secret, k: &str) -> Option<u64> {
    s.metadata.annotations.as_ref()?.get(k)?.parse().ok()
}

impl Controller {
    /// Whether the Secret's serving certificate must be re-issued now.
    fn due(&self, s: &Secret) -> bool {
        let (Some(ca), Some(cert), Some(_), Some(_)) = (
            text(s, "ca.crt"),
            text(s, "tls.crt"),
            text(s, "tls.key"),
            text(s, "ca.key"),
        ) else {
            return true;
        };
        if self
            .names
            .iter()
            .any(|n| crate::certs::verify::verify(ca.as_bytes(), cert.as_bytes(), n).is_err())
        {
            return true;
        }
        match (annotation(s, ISSUED), annotation(s, NOT_AFTER)) {
            (Some(i), Some(n)) if n > i => epoch_seconds() >= n - (n - i) / 3,
            _ => true,
        }
    }

    /// A serving certificate under `ca_key`, written into `s`.
    fn issue_into(&self, s: &mut Secret, ca: &Pem) -> Result<(), String> {
        let leaf =
            issue::serving(&ca.key, &self.names, self.validity).map_err(|e| e.to_string())?;
        let now = epoch_seconds();
        let data = s.data.get_or_insert_with(Default::default);
        for (k, v) in [
            ("ca.crt", &ca.cert),
            ("ca.key", &ca.key),
            ("tls.crt", &leaf.cert),
            ("tls.key", &leaf.key),
        ] {
            data.insert(k.into(), ByteString(v.as_bytes().to_vec()));
        }
        let ann = s.metadata.annotations.get_or_insert_with(Default::default);
        ann.insert(ISSUED.into(), now.to_string());
        ann.insert(
            NOT_AFTER.into(),
            (now + self.validity.as_secs().max(1)).to_string(),
        );
        Ok(())
    }

    /// One pass: the Secret exists and is current, the files hold it, the caBundles name its
    /// CA. Returns the CA bundle in use.
    pub async fn reconcile(&self, client: &kube::Client) -> Result<String, String> {
        let api: Api<Secret> = Api::namespaced(client.clone(), &self.namespace);
        let what = format!("Secret {}/{}", self.namespace, self.secret);
        let mut secret = None;
        for _ in 0..5 {
            match api.get_opt(&self.secret).await {
                Err(e) => return Err(format!("reading {what}: {e}")),
                Ok(None) => {
                    let ca = issue::new_ca(CA_VALIDITY).map_err(|e| e.to_string())?;
                    let mut s = Secret {
                        metadata: ObjectMeta {
                            name: Some(self.secret.clone()),
                            namespace: Some(self.namespace.clone()),
                            ..Default::default()
                        },
                        type_: Some("kubernetes.io/tls".into()),
                        ..Default::default()
                    };
                    self.issue_into(&mut s, &ca)?;
                    match api.create(&PostParams::default(), &s).await {
                        Ok(created) => {
                            tracing::info!(
                                uid = "",
                                "created {what} with a new CA and serving certificate"
                            );
                            secret = Some(created);
                            break;
                        }
                        // Another replica created it first: use theirs.
                        Err(kube::Error::Api(e)) if e.code == 409 => continue,
                        Err(e) => return Err(format!("creating {what}: {e}")),
                    }
                }
                Ok(Some(mut s)) if self.due(&s) => {
                    let ca = match (text(&s, "ca.crt"), text(&s, "ca.key")) {
                        (Some(cert), Some(key)) => Pem { cert, key },
                        _ => issue::new_ca(CA_VALIDITY).map_err(|e| e.to_string())?,
                    };
                    self.issue_into(&mut s, &ca)?;
                    // resourceVersion from the read: a concurrent change makes this a 409.
                    match api.replace(&self.secret, &PostParams::default(), &s).await {
                        Ok(replaced) => {
                            tracing::info!(uid = "", "serving certificate in {what} re-issued");
                            secret = Some(replaced);
                            break;
                        }
                        Err(kube::Error::Api(e)) if e.code == 409 => continue,
                        Err(e) => return Err(format!("updating {what}: {e}")),
                    }
                }
                Ok(Some(s)) => {
                    secret = Some(s);
                    break;
                }
            }
        }
        let s = secret.ok_or_else(|| format!("{what}: changed by others 5 times in a row"))?;
        let (Some(ca), Some(cert), Some(key)) =
            (text(&s, "ca.crt"), text(&s, "tls.crt"), text(&s, "tls.key"))
        else {
            return Err(format!("{what}: ca.crt, tls.crt or tls.key missing"));
        };
        write_if_changed(&self.key_file, &key)?;
        write_if_changed(&self.cert_file, &cert)?;
        if let Some(name) = &self.webhook_configuration {
            inject(client, name, &ca).await?;
        }
        Ok(ca)
    }
}

/// Replace `path` with `text` (write then rename) unless it already holds it.
fn write_if_changed(path: &Path, text: &str) -> Result<(), String> {
    if std::fs::read(path).is_ok_and(|b| b == text.as_bytes()) {
        return Ok(());
    }
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, text)
        .and_then(|_| std::fs::rename(&tmp, path))
        .map_err(|e| format!("writing {}: {e}", path.display()))
}

/// Set the caBundle of every webhook of both configurations named `name` to `ca` where it
/// differs (replace with the read's resourceVersion; the next pass retries a conflict).
async fn inject(client: &kube::Client, name: &str, ca: &str) -> Result<(), String> {
    let bundle = ByteString(ca.as_bytes().to_vec());
    inject_one::<MutatingWebhookConfiguration>(client, name, &bundle, |c| {
        c.webhooks
            .iter_mut()
            .flatten()
            .map(|w| &mut w.client_config)
            .collect()
    })
    .await?;
    inject_one::<ValidatingWebhookConfiguration>(client, name, &bundle, |c| {
        c.webhooks
            .iter_mut()
            .flatten()
            .map(|w| &mut w.client_config)
            .collect()
    })
    .await
}

/// [`inject`] for one kind; `configs` lists its webhooks' client configurations.
async fn inject_one<K>(
    client: &kube::Client,
    name: &str,
    bundle: &ByteString,
    configs: fn(&mut K) -> Vec<&mut WebhookClientConfig>,
) -> Result<(), String>
where
    K: kube::Resource<DynamicType = (), Scope = k8s_openapi::ClusterResourceScope>
        + Clone
        + std::fmt::Debug
        + serde::de::DeserializeOwned
        + serde::Serialize,
{
    let api: Api<K> = Api::all(client.clone());
    let kind = K::kind(&());
    let Ok(Some(mut c)) = api.get_opt(name).await else {
        return Ok(());
    };
    let mut changed = false;
    for cc in configs(&mut c) {
        if cc.ca_bundle.as_ref() != Some(bundle) {
            cc.ca_bundle = Some(bundle.clone());
            changed = true;
        }
    }
    if changed {
        api.replace(name, &PostParams::default(), &c)
            .await
            .map_err(|e| format!("setting the caBundle of {kind} {name}: {e}"))?;
        tracing::info!(uid = "", "caBundle of {kind} {name} set");
    }
    Ok(())
}

/// Reconcile every `every` until shutdown (errors are logged; the last good files stay).
pub(super) fn spawn(
    c: Controller,
    client: kube::Client,
    every: Duration,
    mut shutdown: tokio::sync::watch::Receiver<bool>,
) {
    tokio::spawn(async move {
        loop {
            tokio::select! {
                _ = tokio::time::sleep(every) => {}
                _ = shutdown.wait_for(|s| *s) => return,
            }
            if let Err(e) = c.reconcile(&client).await {
                tracing::warn!(uid = "", "certificate controller: {e}");
            }
        }
    });
}
