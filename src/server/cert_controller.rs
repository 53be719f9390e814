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
//!   third of its validity is left (or when it does not verify for the names, or `tls.key` is
//!   not its key), so a rotation never changes the caBundle: requests flow through it without a
//!   failed handshake.
//! * Each check also sets the caBundle of every webhook of both configurations to the Secret's
//!   `ca.crt` where it differs (a re-applied manifest, a first install), and only when that
//!   `ca.crt` verifies the served certificate for the name the API server calls: a bundle that
//!   does not would make the API server refuse every handshake (and fail open or closed).
//!
//! # A broken Secret
//!
//! `ca.key` is used only with the `ca.crt` it made (its public key is the certificate's, and a
//! certificate it signs verifies under `ca.crt`). When they do not pair (a partial restore, a
//! GitOps edit of one key) or one of them is missing while the other is there, a new serving
//! certificate would not verify under `ca.crt`: issuing one on every pass would never end. The
//! controller then changes nothing in the cluster:
//!
//! * when `tls.crt` (with its `tls.key`) still verifies under `ca.crt`, the replicas keep
//!   serving it and the caBundles name that `ca.crt`; it cannot be renewed, so it expires
//!   unless the Secret is repaired;
//! * otherwise the files and caBundles stay as they were (the last good certificate, which the
//!   caBundle the API server holds still verifies); a replica that starts has no such files and
//!   refuses to start, naming the problem.
//!
//! Either way the problem is reported on the pass that finds it: logged (once, and again when
//! it changes or ends), `winlint_certificates_secret_broken 1`, named by `/readyz` (which
//! stays ready: replacing the pod does not fix the Secret). The repair is the operator's:
//! restore the pair (the caBundle of the webhook configurations is the `ca.crt` that goes with
//! the `ca.key` in use), or delete the Secret: the next pass creates a new CA and serving
//! certificate and sets the caBundles to it.
//!
//! # Several replicas
//!
//! With `--leader-elect` only the Lease holder ([`super::leader`]) runs these passes; the
//! other replicas read the Secret on the same period and copy its serving pair to their files
//! (when it verifies under its `ca.crt`), so that every replica serves what the caBundle
//! verifies. A replica that starts before the Secret exists waits for the leader to create
//! it (or becomes the leader). A new leader runs a pass at once.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::ByteString;
use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration, WebhookClientConfig,
};
use k8s_openapi::api::core::v1::Secret;
use kube::Api;
use kube::api::{ObjectMeta, PostParams};
use tokio::sync::watch;

use super::AppState;
use crate::certs::issue::{self, Pem};
use crate::certs::verify;
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

/// What one pass of the controller found and did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The Secret was current: nothing issued.
    Current,
    /// A serving certificate was issued into the existing Secret.
    Issued,
    /// The Secret was created with a new CA.
    Created,
    /// The Secret is broken (see the module's documentation): nothing issued or replaced.
    Broken(String),
    /// Not the leader (`--leader-elect`): the Secret's serving pair copied to the files,
    /// nothing changed in the cluster.
    Followed,
}

impl Outcome {
    /// The `outcome` label of `winlint_certificate_controller_passes_total`.
    pub fn label(&self) -> &'static str {
        match self {
            Outcome::Current => "current",
            Outcome::Issued => "issued",
            Outcome::Created => "created",
            Outcome::Broken(_) => "broken",
            Outcome::Followed => "followed",
        }
    }
}

/// What a pass finds in an existing Secret.
enum Found {
    /// Usable as it is.
    Current,
    /// Issue a serving certificate under this CA (new when the Secret holds none).
    Issue(Pem),
    /// Not repairable by issuing: `serving` when `tls.crt` verifies under `ca.crt` (the replicas
    /// may keep serving it).
    Broken { problem: String, serving: bool },
}

impl Controller {
    /// Whether `cert`/`key` is a serving pair that `ca` verifies for every name.
    fn serving_ok(&self, ca: &str, cert: Option<&str>, key: Option<&str>) -> Result<(), String> {
        let (Some(cert), Some(key)) = (cert, key) else {
            return Err("tls.crt or tls.key missing".into());
        };
        verify::key_pairs(cert.as_bytes(), key.as_bytes())
            .map_err(|e| format!("tls.key is not the key of tls.crt: {e}"))?;
        for n in &self.names {
            verify::verify(ca.as_bytes(), cert.as_bytes(), n)
                .map_err(|e| format!("ca.crt does not verify tls.crt for {n}: {e}"))?;
        }
        Ok(())
    }

    /// What the Secret needs (see the module's documentation).
    fn assess(&self, s: &Secret) -> Result<Found, String> {
        let (ca, ca_key) = (text(s, "ca.crt"), text(s, "ca.key"));
        let (cert, key) = (text(s, "tls.crt"), text(s, "tls.key"));
        let serving = |ca: &str| self.serving_ok(ca, cert.as_deref(), key.as_deref());
        let (ca, ca_key) = match (ca, ca_key) {
            // An empty Secret (made for us, or emptied): a new CA.
            (None, None) => return Ok(Found::Issue(new_ca()?)),
            (Some(ca), Some(ca_key)) => (ca, ca_key),
            (ca, _) => {
                let missing = if ca.is_some() { "ca.key" } else { "ca.crt" };
                return Ok(Found::Broken {
                    problem: format!("{missing} is missing"),
                    serving: ca.is_some_and(|ca| serving(&ca).is_ok()),
                });
            }
        };
        if let Err(e) = verify::key_pairs(ca.as_bytes(), ca_key.as_bytes()) {
            return Ok(Found::Broken {
                problem: format!("ca.crt and ca.key do not pair ({e})"),
                serving: serving(&ca).is_ok(),
            });
        }
        let due = match (annotation(s, ISSUED), annotation(s, NOT_AFTER)) {
            (Some(i), Some(n)) if n > i => epoch_seconds() >= n - (n - i) / 3,
            _ => true,
        };
        Ok(if serving(&ca).is_err() || due {
            Found::Issue(Pem {
                cert: ca,
                key: ca_key,
            })
        } else {
            Found::Current
        })
    }

    /// A serving certificate under `ca`, written into `s`; an error (and `s` unchanged) when
    /// the new certificate would not verify under `ca.cert` (a CA winlint did not make).
    fn issue_into(&self, s: &mut Secret, ca: &Pem) -> Result<(), String> {
        let leaf =
            issue::serving(&ca.key, &self.names, self.validity).map_err(|e| e.to_string())?;
        self.serving_ok(&ca.cert, Some(&leaf.cert), Some(&leaf.key))
            .map_err(|e| format!("a serving certificate signed with ca.key: {e}"))?;
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
    /// CA; or, when it is broken, nothing is changed but the files and caBundles of a serving
    /// pair that still verifies.
    pub async fn reconcile(&self, client: &kube::Client) -> Result<Outcome, String> {
        let api: Api<Secret> = Api::namespaced(client.clone(), &self.namespace);
        let what = format!("Secret {}/{}", self.namespace, self.secret);
        let mut current = None;
        for _ in 0..5 {
            match api.get_opt(&self.secret).await {
                Err(e) => return Err(format!("reading {what}: {e}")),
                Ok(None) => {
                    let mut s = Secret {
                        metadata: ObjectMeta {
                            name: Some(self.secret.clone()),
                            namespace: Some(self.namespace.clone()),
                            ..Default::default()
                        },
                        type_: Some("kubernetes.io/tls".into()),
                        ..Default::default()
                    };
                    self.issue_into(&mut s, &new_ca()?)?;
                    match api.create(&PostParams::default(), &s).await {
                        Ok(created) => {
                            tracing::info!(
                                uid = "",
                                "created {what} with a new CA and serving certificate"
                            );
                            current = Some((created, Outcome::Created));
                            break;
                        }
                        // Another replica created it first: use theirs.
                        Err(kube::Error::Api(e)) if e.code == 409 => continue,
                        Err(e) => return Err(format!("creating {what}: {e}")),
                    }
                }
                Ok(Some(mut s)) => {
                    let (problem, serving) = match self.assess(&s)? {
                        Found::Current => {
                            current = Some((s, Outcome::Current));
                            break;
                        }
                        Found::Issue(ca) => match self.issue_into(&mut s, &ca) {
                            Ok(()) => {
                                // resourceVersion from the read: a concurrent change makes
                                // this a 409.
                                match api.replace(&self.secret, &PostParams::default(), &s).await {
                                    Ok(replaced) => {
                                        tracing::info!(
                                            uid = "",
                                            "serving certificate in {what} re-issued"
                                        );
                                        current = Some((replaced, Outcome::Issued));
                                        break;
                                    }
                                    Err(kube::Error::Api(e)) if e.code == 409 => continue,
                                    Err(e) => return Err(format!("updating {what}: {e}")),
                                }
                            }
                            Err(e) => (
                                format!("cannot issue under its CA: {e}"),
                                self.serving_ok(
                                    &ca.cert,
                                    text(&s, "tls.crt").as_deref(),
                                    text(&s, "tls.key").as_deref(),
                                )
                                .is_ok(),
                            ),
                        },
                        Found::Broken { problem, serving } => (problem, serving),
                    };
                    let mut problem = format!(
                        "{what}: {problem}: no serving certificate can be issued under its CA"
                    );
                    if serving {
                        problem.push_str(
                            "; its serving certificate still verifies under its ca.crt and is \
                             kept, but cannot be renewed",
                        );
                    } else {
                        problem.push_str(
                            "; nothing is changed (the last good certificate and caBundles stay)",
                        );
                    }
                    problem.push_str(
                        "; restore the pair (the caBundle of the webhook configurations is the \
                         ca.crt of the ca.key in use) or delete the Secret to have a new CA issued",
                    );
                    if !serving {
                        return Ok(Outcome::Broken(problem));
                    }
                    current = Some((s, Outcome::Broken(problem)));
                    break;
                }
            }
        }
        let (s, outcome) =
            current.ok_or_else(|| format!("{what}: changed by others 5 times in a row"))?;
        let (Some(ca), Some(cert), Some(key)) =
            (text(&s, "ca.crt"), text(&s, "tls.crt"), text(&s, "tls.key"))
        else {
            return Err(format!("{what}: ca.crt, tls.crt or tls.key missing"));
        };
        write_if_changed(&self.key_file, &key)?;
        write_if_changed(&self.cert_file, &cert)?;
        if let Some(name) = &self.webhook_configuration {
            inject(client, name, &ca, &cert).await?;
        }
        Ok(outcome)
    }
}

impl Controller {
    /// A pass of a replica that does not lead: the Secret's serving pair written to the files
    /// when it verifies under the Secret's `ca.crt` for every name; `None` while there is no
    /// such pair (no Secret yet, or a broken one: the leader reports it). Nothing is written
    /// to the cluster.
    pub async fn follow(&self, client: &kube::Client) -> Result<Option<Outcome>, String> {
        let api: Api<Secret> = Api::namespaced(client.clone(), &self.namespace);
        let s = api
            .get_opt(&self.secret)
            .await
            .map_err(|e| format!("reading Secret {}/{}: {e}", self.namespace, self.secret))?;
        let Some(s) = s else { return Ok(None) };
        let (Some(ca), Some(cert), Some(key)) =
            (text(&s, "ca.crt"), text(&s, "tls.crt"), text(&s, "tls.key"))
        else {
            return Ok(None);
        };
        if self.serving_ok(&ca, Some(&cert), Some(&key)).is_err() {
            return Ok(None);
        }
        write_if_changed(&self.key_file, &key)?;
        write_if_changed(&self.cert_file, &cert)?;
        Ok(Some(Outcome::Followed))
    }

    /// The pass before serving: the leader reconciles; another replica waits until the
    /// Secret holds a serving pair (the leader creates it) or it becomes the leader itself.
    pub async fn first_pass(
        &self,
        client: &kube::Client,
        mut leader: watch::Receiver<bool>,
    ) -> Result<Outcome, String> {
        let mut said = false;
        loop {
            if *leader.borrow_and_update() {
                return self.reconcile(client).await;
            }
            if let Some(o) = self.follow(client).await? {
                return Ok(o);
            }
            if !said {
                tracing::info!(
                    uid = "",
                    "waiting for the leader to create Secret {}/{}",
                    self.namespace,
                    self.secret
                );
                said = true;
            }
            tokio::select! {
                _ = tokio::time::sleep(Duration::from_secs(1)) => {}
                _ = changed(&mut leader) => {}
            }
        }
    }
}

/// The next change of `rx`; never, once its sender is gone.
async fn changed(rx: &mut watch::Receiver<bool>) {
    if rx.changed().await.is_err() {
        std::future::pending::<()>().await;
    }
}

/// A new CA.
fn new_ca() -> Result<Pem, String> {
    issue::new_ca(CA_VALIDITY).map_err(|e| e.to_string())
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
/// differs and `ca` verifies the served certificate `cert` for the name the API server calls
/// that webhook by (replace with the read's resourceVersion; the next pass retries a
/// conflict). A webhook `ca` does not verify keeps its caBundle, and is an error.
async fn inject(client: &kube::Client, name: &str, ca: &str, cert: &str) -> Result<(), String> {
    let bundle = ByteString(ca.as_bytes().to_vec());
    let mut refused =
        inject_one::<MutatingWebhookConfiguration>(client, name, &bundle, cert, |c| {
            c.webhooks
                .iter_mut()
                .flatten()
                .map(|w| (w.name.clone(), &mut w.client_config))
                .collect()
        })
        .await?;
    refused.extend(
        inject_one::<ValidatingWebhookConfiguration>(client, name, &bundle, cert, |c| {
            c.webhooks
                .iter_mut()
                .flatten()
                .map(|w| (w.name.clone(), &mut w.client_config))
                .collect()
        })
        .await?,
    );
    if refused.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "the Secret's ca.crt is not set as caBundle, as it does not verify the served \
             certificate: {}",
            refused.join("; ")
        ))
    }
}

/// [`inject`] for one kind; `configs` lists its webhooks' names and client configurations.
/// Returns the webhooks whose caBundle was not set, and why.
async fn inject_one<K>(
    client: &kube::Client,
    name: &str,
    bundle: &ByteString,
    cert: &str,
    configs: fn(&mut K) -> Vec<(String, &mut WebhookClientConfig)>,
) -> Result<Vec<String>, String>
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
        return Ok(vec![]);
    };
    let mut changed = false;
    let mut refused = Vec::new();
    for (webhook, cc) in configs(&mut c) {
        if cc.ca_bundle.as_ref() == Some(bundle) {
            continue;
        }
        let fits = super::ca_bundle::mismatches(
            [(
                webhook.as_str(),
                &WebhookClientConfig {
                    ca_bundle: Some(bundle.clone()),
                    ..cc.clone()
                },
            )]
            .into_iter(),
            cert.as_bytes(),
        );
        if fits.is_empty() {
            cc.ca_bundle = Some(bundle.clone());
            changed = true;
        } else {
            refused.extend(fits.into_iter().map(|p| format!("{kind}/{name} {p}")));
        }
    }
    if changed {
        api.replace(name, &PostParams::default(), &c)
            .await
            .map_err(|e| format!("setting the caBundle of {kind} {name}: {e}"))?;
        tracing::info!(uid = "", "caBundle of {kind} {name} set");
    }
    Ok(refused)
}

/// Count a pass and report a broken Secret at once: logged when the problem starts, changes or
/// ends, `winlint_certificates_secret_broken`, `/readyz`. An error (the API server could not be
/// read or written) is logged and changes nothing of that.
pub(super) fn record(state: &AppState, r: &Result<Outcome, String>) {
    let label = r.as_ref().map_or("error", Outcome::label);
    state
        .metrics
        .certificate_passes
        .get_or_create(&vec![("outcome".into(), label.into())])
        .inc();
    let problem = match r {
        Err(e) => {
            tracing::warn!(uid = "", "certificate controller: {e}");
            return;
        }
        Ok(Outcome::Broken(p)) => p.clone(),
        Ok(_) => String::new(),
    };
    state
        .metrics
        .certificates_secret_broken
        .set(i64::from(!problem.is_empty()));
    match state.ca_bundle.set_secret_problem(problem) {
        Some(p) if p.is_empty() => {
            tracing::info!(uid = "", "the certificate Secret is usable again")
        }
        Some(p) => tracing::error!(uid = "", "certificate controller: {p}"),
        None => {}
    }
}

/// Reconcile every `every` until shutdown while `leader` says this replica leads (errors are
/// logged; the last good files stay), each pass followed by the caBundle check, so that what
/// it changed or found is reported at once; at once when it becomes the leader. Otherwise
/// only copy the Secret to the files ([`Controller::follow`]).
pub(super) fn spawn(
    c: Controller,
    client: kube::Client,
    every: Duration,
    state: Arc<AppState>,
    mut leader: watch::Receiver<bool>,
    mut shutdown: watch::Receiver<bool>,
) {
    tokio::spawn(async move {
        loop {
            tokio::select! {
                _ = tokio::time::sleep(every) => {}
                _ = changed(&mut leader) => {}
                _ = shutdown.wait_for(|s| *s) => return,
            }
            if !*leader.borrow_and_update() {
                if let Some(r) = c.follow(&client).await.transpose() {
                    record(&state, &r);
                }
                continue;
            }
            record(&state, &c.reconcile(&client).await);
            if let Some(name) = &c.webhook_configuration {
                super::ca_bundle::check_now(name, &client, &c.cert_file, &state).await;
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn controller() -> Controller {
        Controller {
            secret: "s".into(),
            namespace: "ns".into(),
            names: vec!["winlint.ns.svc".into()],
            validity: Duration::from_secs(3600),
            webhook_configuration: None,
            cert_file: PathBuf::new(),
            key_file: PathBuf::new(),
        }
    }

    fn with(s: &Secret, key: &str, value: Option<&str>) -> Secret {
        let mut s = s.clone();
        let data = s.data.get_or_insert_with(Default::default);
        match value {
            Some(v) => data.insert(key.into(), ByteString(v.as_bytes().to_vec())),
            None => data.remove(key),
        };
        s
    }

    /// `Broken`'s `serving`, or `None` for another verdict.
    fn broken(c: &Controller, s: &Secret) -> Option<bool> {
        match c.assess(s).unwrap() {
            Found::Broken { serving, .. } => Some(serving),
            _ => None,
        }
    }

    #[test]
    fn a_ca_is_used_only_with_the_key_it_pairs_with() {
        let c = controller();
        let ca = new_ca().unwrap();
        let other = new_ca().unwrap();
        let mut s = Secret::default();
        assert!(matches!(c.assess(&s).unwrap(), Found::Issue(_)));
        c.issue_into(&mut s, &ca).unwrap();
        assert!(matches!(c.assess(&s).unwrap(), Found::Current));
        // ca.key edited: the serving certificate still verifies under ca.crt, and is kept.
        assert_eq!(
            broken(&c, &with(&s, "ca.key", Some(&other.key))),
            Some(true)
        );
        // ca.crt edited: nothing verifies what is served.
        assert_eq!(
            broken(&c, &with(&s, "ca.crt", Some(&other.cert))),
            Some(false)
        );
        assert_eq!(broken(&c, &with(&s, "ca.key", None)), Some(true));
        assert_eq!(broken(&c, &with(&s, "ca.crt", None)), Some(false));
        // The serving pair itself broken, the CA sound: re-issued (once: then it verifies).
        let leaf = issue::serving(&ca.key, &c.names, c.validity).unwrap();
        let mismatched = with(&s, "tls.key", Some(&leaf.key));
        assert!(matches!(c.assess(&mismatched).unwrap(), Found::Issue(_)));
    }

    #[test]
    fn a_ca_that_does_not_verify_what_its_key_signs_issues_nothing() {
        // A CA of another name: its key pairs, but winlint's leaves name winlint's CA as issuer.
        let key = rcgen::KeyPair::generate().unwrap();
        let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "someone else's CA");
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        let foreign = Pem {
            cert: params.self_signed(&key).unwrap().pem(),
            key: key.serialize_pem(),
        };
        let mut s = Secret::default();
        let e = controller().issue_into(&mut s, &foreign).unwrap_err();
        assert!(e.contains("ca.crt does not verify tls.crt"), "{e}");
        assert_eq!(s, Secret::default());
    }
}
