//! `serve`'s registry credentials: the Secrets named by `registry.pullSecrets`, in winlint's
//! own namespace, read by name with `get` (the only right the chart grants: never a list of
//! Secrets, never another namespace) and read again every `--pull-secrets-interval` seconds, so
//! a rotated or newly created secret is used without a restart. A poll of a few named objects
//! is cheaper than a watch and needs no `list`/`watch` rights.
//!
//! A secret's credentials are those the kubelet reads from it (`kubernetes.io/dockerconfigjson`
//! → `.dockerconfigjson`'s `auths`; `kubernetes.io/dockercfg` → `.dockercfg`), merged in the
//! configured order into one keyring matched to images as the kubelet matches
//! (`keyring.rs`). A secret that is missing or malformed is left out and logged (once per
//! change of what went wrong); a reading that fails (unreachable, 5xx, 403) keeps what that
//! secret gave before; the others count either way.

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::api::core::v1::Secret;
use kube::Api;
use tokio::sync::watch;

use super::keyring::{Credentials, Format, Keyring, Scope};
use crate::model::labels::PULL_SECRET_NAMESPACES_ANNOTATION;

/// Where the secrets are and how often they are read.
#[derive(Debug, Clone)]
pub struct PullSecrets {
    pub namespace: String,
    pub names: Vec<String>,
    pub interval: Duration,
    pub policy: SecretPolicy,
}

/// What the administrator allows of a secret (`registry.pullSecretsDefaultNamespaces`,
/// `registry.allowGlobKeys`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SecretPolicy {
    /// The namespaces a secret without the annotation serves (default: none).
    pub default_namespaces: Vec<String>,
    pub allow_glob_keys: bool,
}

/// The namespace file of a pod's ServiceAccount.
pub const NAMESPACE_FILE: &str = "/var/run/secrets/kubernetes.io/serviceaccount/namespace";

/// winlint's namespace: the flag (or `$POD_NAMESPACE`), else the ServiceAccount's file.
pub fn own_namespace(flag: Option<&str>) -> Option<String> {
    flag.filter(|f| !f.trim().is_empty())
        .map(str::to_string)
        .or_else(|| std::fs::read_to_string(NAMESPACE_FILE).ok())
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// The namespaces a secret serves: its annotation's list, else the configured default.
pub fn served_namespaces(secret: &Secret, policy: &SecretPolicy) -> Vec<String> {
    match secret
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(PULL_SECRET_NAMESPACES_ANNOTATION))
    {
        Some(list) => list
            .split(',')
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .map(str::to_string)
            .collect(),
        None => policy.default_namespaces.clone(),
    }
}

/// The credentials of `secret` added to `ring`, each serving the namespaces the secret
/// serves, or why there are none; `Ok`: notes for the administrator (glob keys left out, a
/// secret that serves no namespace).
pub fn add_secret(
    ring: &mut Keyring,
    secret: &Secret,
    policy: &SecretPolicy,
) -> Result<Vec<String>, String> {
    let (key, format) = match secret.type_.as_deref() {
        Some("kubernetes.io/dockerconfigjson") => (".dockerconfigjson", Format::Auths),
        Some("kubernetes.io/dockercfg") => (".dockercfg", Format::Legacy),
        other => {
            return Err(format!(
                "type {:?}, not kubernetes.io/dockerconfigjson or kubernetes.io/dockercfg",
                other.unwrap_or("Opaque")
            ));
        }
    };
    let data = secret
        .data
        .as_ref()
        .and_then(|d| d.get(key))
        .filter(|b| !b.0.is_empty())
        .ok_or_else(|| format!("no {key} key"))?;
    let namespaces = served_namespaces(secret, policy);
    let mut notes = Vec::new();
    if namespaces.is_empty() {
        notes.push(format!(
            "serves no namespace: annotate it {PULL_SECRET_NAMESPACES_ANNOTATION}=\"team-a,team-b\" \
             (or set registry.pullSecretsDefaultNamespaces)"
        ));
    }
    let scope = std::sync::Arc::new(Scope {
        source: secret.metadata.name.clone().unwrap_or_default(),
        namespaces: Some(namespaces),
    });
    let left_out = ring
        .add_scoped(&data.0, format, &scope, policy.allow_glob_keys)
        .map_err(|e| format!("{key}: {e}"))?;
    for k in left_out {
        notes.push(format!(
            "key {k:?} left out: glob keys are used only with registry.allowGlobKeys"
        ));
    }
    Ok(notes)
}

/// Reads the secrets and remembers what each gave, so that a failed reading (the API server
/// unreachable, a 5xx) keeps the credentials read before instead of dropping them; a secret
/// that is gone (404) or no longer parses is dropped.
#[derive(Debug)]
pub struct Reader {
    p: PullSecrets,
    last_good: BTreeMap<String, Keyring>,
    last_problems: Option<Vec<String>>,
}

impl Reader {
    pub fn new(p: PullSecrets) -> Self {
        Reader {
            p,
            last_good: BTreeMap::new(),
            last_problems: None,
        }
    }

    /// One reading: the keyring of the secrets in their configured order, and the problems.
    pub async fn read(&mut self, client: &kube::Client) -> (Keyring, Vec<String>) {
        let api: Api<Secret> = Api::namespaced(client.clone(), &self.p.namespace);
        let mut problems = Vec::new();
        for name in &self.p.names {
            let what = format!("Secret {}/{name}", self.p.namespace);
            match api.get_opt(name).await {
                Ok(Some(s)) => {
                    let mut part = Keyring::default();
                    match add_secret(&mut part, &s, &self.p.policy) {
                        Ok(notes) => {
                            problems.extend(notes.into_iter().map(|n| format!("{what}: {n}")));
                            self.last_good.insert(name.clone(), part);
                        }
                        Err(e) => {
                            problems.push(format!("{what}: {e}"));
                            self.last_good.remove(name);
                        }
                    }
                }
                Ok(None) => {
                    problems.push(format!("{what}: not found"));
                    self.last_good.remove(name);
                }
                Err(e) => {
                    let e = crate::cluster::ClusterError::from_kube(format!("reading {what}"), &e);
                    let kept = if self.last_good.contains_key(name) {
                        "; the credentials read before are kept"
                    } else {
                        ""
                    };
                    problems.push(format!(
                        "{e} (winlint needs get on that Secret: the chart grants it by name){kept}"
                    ));
                }
            }
        }
        let mut ring = Keyring::default();
        for name in &self.p.names {
            if let Some(part) = self.last_good.get(name) {
                ring.extend(part);
            }
        }
        ring.helpers.sort();
        ring.helpers.dedup();
        (ring, problems)
    }

    /// One pass of [`follow`]: swap a changed keyring in, log problems when they change.
    pub async fn refresh(&mut self, client: &kube::Client, credentials: &Credentials) {
        let (ring, problems) = self.read(client).await;
        if self.last_problems.as_ref() != Some(&problems) {
            for pr in &problems {
                tracing::warn!(uid = "", "registry.pullSecrets: {pr}");
            }
            self.last_problems = Some(problems);
        }
        let (n, helpers) = (ring.len(), ring.helpers.clone());
        if credentials.replace(ring) {
            tracing::info!(
                uid = "",
                "registry.pullSecrets: {n} credential(s) from {} in namespace {}",
                self.p.names.join(", "),
                self.p.namespace
            );
            for h in helpers {
                tracing::warn!(
                    uid = "",
                    "registry.pullSecrets: a secret names a credential helper ({h}); winlint never runs one"
                );
            }
        }
    }
}

/// Read the secrets into `credentials` every interval (the first reading is the caller's)
/// until shutdown.
pub async fn follow(
    client: kube::Client,
    mut reader: Reader,
    credentials: Credentials,
    mut shutdown: watch::Receiver<bool>,
) {
    loop {
        tokio::select! {
            _ = tokio::time::sleep(reader.p.interval) => {}
            _ = shutdown.changed() => return,
        }
        reader.refresh(&client, &credentials).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::ByteString;

    fn secret(type_: &str, key: &str, json: &str) -> Secret {
        Secret {
            type_: Some(type_.into()),
            data: Some([(key.to_string(), ByteString(json.as_bytes().to_vec()))].into()),
            ..Secret::default()
        }
    }

    /// What the chart's old default did: every namespace, glob keys on.
    fn open() -> SecretPolicy {
        SecretPolicy {
            default_namespaces: vec!["*".into()],
            allow_glob_keys: true,
        }
    }

    fn annotated(mut s: Secret, name: &str, namespaces: Option<&str>) -> Secret {
        s.metadata.name = Some(name.into());
        s.metadata.annotations = namespaces
            .map(|n| [(PULL_SECRET_NAMESPACES_ANNOTATION.to_string(), n.to_string())].into());
        s
    }

    #[test]
    fn both_secret_types_and_what_is_refused() {
        let mut ring = Keyring::default();
        let open = &open();
        add_secret(
            &mut ring,
            &secret(
                "kubernetes.io/dockerconfigjson",
                ".dockerconfigjson",
                r#"{"auths": {"*.azurecr.io": {"username": "a", "password": "1"}}}"#,
            ),
            open,
        )
        .unwrap();
        add_secret(
            &mut ring,
            &secret(
                "kubernetes.io/dockercfg",
                ".dockercfg",
                r#"{"https://index.docker.io/v1/": {"auth": "dTpw"}}"#,
            ),
            open,
        )
        .unwrap();
        assert_eq!(ring.lookup("contoso.azurecr.io/web")[0].username, "a");
        assert_eq!(ring.lookup("docker.io/library/nginx")[0].username, "u");
        let opaque = secret("Opaque", ".dockerconfigjson", "{}");
        assert!(
            add_secret(&mut ring, &opaque, open)
                .unwrap_err()
                .contains("Opaque")
        );
        let empty = secret("kubernetes.io/dockerconfigjson", ".dockercfg", "{}");
        assert!(
            add_secret(&mut ring, &empty, open)
                .unwrap_err()
                .contains("no .dockerconfigjson")
        );
        let bad = secret("kubernetes.io/dockerconfigjson", ".dockerconfigjson", "[");
        assert!(add_secret(&mut ring, &bad, open).is_err());
        assert_eq!(ring.len(), 2);
    }

    /// An API server that cannot be reached keeps the credentials read before (a blip must not
    /// turn every private image into a refusal); the problem says so.
    #[tokio::test]
    async fn an_unreachable_api_server_keeps_the_last_credentials() {
        let dead = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", dead.local_addr().unwrap());
        drop(dead);
        let client = kube::Client::try_from(kube::Config::new(url.parse().unwrap())).unwrap();
        let mut reader = Reader::new(PullSecrets {
            namespace: "wl".into(),
            names: vec!["regcred".into(), "never-read".into()],
            interval: Duration::from_secs(30),
            policy: open(),
        });
        let mut part = Keyring::default();
        add_secret(
            &mut part,
            &secret(
                "kubernetes.io/dockerconfigjson",
                ".dockerconfigjson",
                r#"{"auths": {"r.example": {"username": "a", "password": "1"}}}"#,
            ),
            &open(),
        )
        .unwrap();
        reader.last_good.insert("regcred".into(), part);
        let (ring, problems) = reader.read(&client).await;
        assert_eq!(ring.lookup("r.example/app")[0].username, "a");
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(
            problems[0].contains("credentials read before are kept"),
            "{problems:?}"
        );
        assert!(!problems[1].contains("kept"), "{problems:?}");
    }

    /// Issue 30: a secret serves the namespaces its annotation lists (exact, prefix*), else
    /// the configured default, which is none; a glob key is left out unless allowed, and
    /// both are said to the administrator.
    #[test]
    fn secrets_serve_the_namespaces_they_list_and_globs_need_the_flag() {
        use super::super::keyring::Reader;
        let json = r#"{"auths": {"r.example": {"username": "a", "password": "1"},
                                 "*.azurecr.io": {"username": "g", "password": "2"}}}"#;
        let s = |name, ns| {
            annotated(
                secret("kubernetes.io/dockerconfigjson", ".dockerconfigjson", json),
                name,
                ns,
            )
        };
        let strict = SecretPolicy::default();
        let mut ring = Keyring::default();
        let notes = add_secret(&mut ring, &s("team-a", Some("team-a, build-*")), &strict).unwrap();
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(notes[0].contains("*.azurecr.io") && notes[0].contains("allowGlobKeys"));
        let notes = add_secret(&mut ring, &s("nobody", None), &strict).unwrap();
        assert!(notes[0].contains("serves no namespace"), "{notes:?}");
        let users = |ns: &str, image: &str| -> Vec<String> {
            ring.lookup_for(image, &Reader::Namespace(ns.into()))
                .iter()
                .map(|m| format!("{}:{}", m.scope.source, m.credential.username))
                .collect()
        };
        assert_eq!(users("team-a", "r.example/app"), ["team-a:a"]);
        assert_eq!(users("build-7", "r.example/app"), ["team-a:a"]);
        assert!(users("team-b", "r.example/app").is_empty());
        assert!(
            users("team-a", "x.azurecr.io/app").is_empty(),
            "no glob key"
        );
        assert_ne!(
            ring.reader_key(&Reader::Namespace("team-a".into())),
            ring.reader_key(&Reader::Namespace("team-b".into()))
        );
        assert_eq!(
            ring.reader_key(&Reader::Namespace("team-a".into())),
            ring.reader_key(&Reader::Namespace("build-1".into())),
            "namespaces served by the same secrets share their facts"
        );

        // The administrator's explicit defaults: every namespace, glob keys on.
        let mut ring = Keyring::default();
        assert!(
            add_secret(&mut ring, &s("all", None), &open())
                .unwrap()
                .is_empty()
        );
        let m = ring.lookup_for("x.azurecr.io/app", &Reader::Namespace("any".into()));
        assert_eq!(m.len(), 1);
        assert!(m[0].by_glob() && m[0].key_matches_host("y.azurecr.io"));
        assert!(!m[0].key_matches_host("evil.example"));
    }

    #[test]
    fn the_namespace_flag_wins_and_blank_is_none() {
        assert_eq!(
            own_namespace(Some(" winlint\n")).as_deref(),
            Some("winlint")
        );
        if !std::path::Path::new(NAMESPACE_FILE).exists() {
            assert_eq!(own_namespace(None), None);
            assert_eq!(
                own_namespace(Some(" ")),
                None,
                "a blank $POD_NAMESPACE is none"
            );
        }
    }
}
