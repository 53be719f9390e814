//! One image lookup against the distribution API (`/v2/NAME/manifests/REF`, `/v2/NAME/blobs/D`):
//! the manifest (a list gives the platforms), the config blob of a single manifest (and of a
//! list's first Windows entries, for their `User`), and the
//! auth dance a `401` starts (Basic from the keyring, or a Bearer token from the challenge's
//! realm, cached per repository and credential until it expires).
//!
//! Whose credentials (issue 30): a lookup is for a [`Reader`] (the CLI's user, or the pods of a
//! namespace) and tries only the credentials that serve it. Where they may go: the Basic
//! credential to the registry itself; to a token realm only over HTTPS (plain HTTP only between
//! loopback hosts, as in tests) and at an address the registry's class allows (`http.rs`); and
//! a credential matched by a glob key (`*.azurecr.io`) only to a realm on the registry's own
//! host or one the same glob matches. An exact key's password goes to the realm the registry
//! names, whatever its host, as the kubelet and containerd send it (Docker Hub's realm is
//! auth.docker.io for registry-1.docker.io): the administrator named that registry.
//!
//! Hand-written on hyper (see `http.rs`) rather than `oci-client`: the lookup needs four
//! requests and a challenge parser, and the crate would add reqwest and oci-spec to a graph
//! that already builds hyper, hyper-rustls and rustls for kube.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use hyper::header::{self, HeaderName};
use hyper::{Method, StatusCode};

use super::auth::{Challenge, parse_challenge};
use super::http::{Http, HttpError, Limits, Origin, Response};
use super::keyring::{Credential, Credentials, Matched, Reader};
use crate::model::image::ImageRef;
use crate::model::image_facts::{
    ImageConfig, ImageFacts, MAX_CONFIG_BYTES, MAX_ENTRY_CONFIGS, MAX_MANIFEST_BYTES, Manifest,
    ParseError, parse_image_config, parse_manifest,
};

/// Every manifest media type winlint reads (MCR serves the Docker ones); the test checks it
/// names each constant of `image_facts`.
const ACCEPT: &str = "application/vnd.oci.image.index.v1+json, \
    application/vnd.docker.distribution.manifest.list.v2+json, \
    application/vnd.oci.image.manifest.v1+json, \
    application/vnd.docker.distribution.manifest.v2+json";

/// Why a lookup gave no facts.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LookupError {
    #[error("{0}")]
    Http(#[from] HttpError),
    #[error("HTTP {status} for {what}")]
    Status { status: u16, what: String },
    #[error("too many requests (HTTP 429)")]
    Throttled { retry_after: Option<Duration> },
    #[error("not found (HTTP 404)")]
    NotFound,
    #[error("unauthorized: {0}")]
    Auth(String),
    #[error("{0}")]
    Manifest(#[from] ParseError),
    #[error("digest mismatch: asked {asked}, got {got}")]
    Digest { asked: String, got: String },
    #[error("registry backing off after failures; next try in {0:?}")]
    Backoff(Duration),
    #[error("not a valid image reference")]
    Reference,
}

impl LookupError {
    /// Worth backing off from (the registry is unwell or asks us to slow down: a connection
    /// that fails, a timeout, 5xx, 429), rather than a fact about the image (not found,
    /// unauthorized, a manifest or config too large or malformed, a redirect loop): a tenant
    /// controls the answers for their own repository, and must not make them a reason to stop
    /// asking about anyone else's.
    pub fn transient(&self) -> bool {
        match self {
            // A refused redirect or realm (`HttpError::Refused`) is the registry's answer,
            // not its health: not transient.
            LookupError::Http(HttpError::Transport(_) | HttpError::Timeout(..))
            | LookupError::Throttled { .. } => true,
            LookupError::Status { status, .. } => *status >= 500,
            _ => false,
        }
    }
}

/// (registry, repository, credential: [`credential_id`], `""` anonymous) → (Authorization
/// value, valid until). Keyed by credential: a token one namespace's secret got is never sent
/// for another namespace's lookup.
type Tokens = HashMap<(String, String, String), (String, Instant)>;

/// What tells a credential apart in the token cache: its source, key and user.
fn credential_id(m: &Matched) -> String {
    format!("{}\0{}\0{}", m.scope.source, m.key, m.credential.username)
}

/// The distribution API client: HTTP, credentials and the Bearer tokens it was given.
#[derive(Debug)]
pub struct RegistryClient {
    http: Http,
    credentials: Credentials,
    /// The tokens, with the credentials' generation they were got under.
    tokens: Mutex<(u64, Tokens)>,
    /// A loopback registry that serves every registry's repositories under `<registry>/`
    /// (tests only: the real-world corpus's images resolve against a local copy of their lists).
    mirror: Option<String>,
}

impl RegistryClient {
    pub fn new(limits: Limits, credentials: Credentials) -> Self {
        RegistryClient {
            http: Http::new(limits),
            tokens: Mutex::new((credentials.generation(), HashMap::new())),
            credentials,
            mirror: None,
        }
    }

    /// Read every image from the loopback registry at `addr` (`host:port`), repository
    /// `<registry>/<repository>`, instead of its own registry. Loopback only, so no lookup (and
    /// no credential sent on a 401) leaves the machine; otherwise the error says why.
    pub fn with_mirror(mut self, addr: &str) -> Result<Self, String> {
        if !base_url(addr).starts_with("http://") {
            return Err(format!(
                "registry mirror {addr}: only a loopback address is accepted"
            ));
        }
        self.mirror = Some(addr.to_string());
        Ok(self)
    }

    /// The URL of `path` (`/v2/<repository>/…`) for image `r`.
    fn url(&self, r: &ImageRef, path: &str) -> String {
        match (&self.mirror, path.strip_prefix("/v2/")) {
            (Some(m), Some(rest)) => format!("http://{m}/v2/{}/{rest}", r.registry),
            _ => format!("{}{path}", base_url(&r.registry)),
        }
    }

    /// The credentials it uses (`serve` replaces them when a pull secret changes).
    pub fn credentials(&self) -> &Credentials {
        &self.credentials
    }

    /// The digest a tag points at, by `HEAD` (free on Docker Hub, where a GET counts as a pull).
    /// `None` when the registry does not send `Docker-Content-Digest`.
    pub async fn head_digest(
        &self,
        r: &ImageRef,
        reader: &Reader,
    ) -> Result<Option<String>, LookupError> {
        let origin = self.origin(r).await?;
        let resp = self
            .manifest(r, &origin, reader, Method::HEAD, reference_of(r))
            .await?;
        Ok(resp
            .header(HeaderName::from_static("docker-content-digest"))
            .filter(|d| d.starts_with("sha256:"))
            .map(str::to_string))
    }

    /// The facts of `r` (its manifest, and the config of a single manifest). `by_digest`
    /// fetches that digest instead of the tag (after a HEAD told it).
    pub async fn facts(
        &self,
        r: &ImageRef,
        by_digest: Option<&str>,
        reader: &Reader,
    ) -> Result<ImageFacts, LookupError> {
        let want = by_digest.or(r.digest.as_deref());
        let reference = want.unwrap_or_else(|| reference_of(r));
        let origin = self.origin(r).await?;
        let resp = self
            .manifest(r, &origin, reader, Method::GET, reference)
            .await?;
        let digest = sha256(&resp.body);
        if let Some(asked) = want
            && asked != digest
        {
            return Err(LookupError::Digest {
                asked: asked.into(),
                got: digest,
            });
        }
        let manifest = parse_manifest(&resp.body, resp.header(header::CONTENT_TYPE))?;
        // The list's bytes are not kept while its entries are read: one body at a time.
        drop(resp);
        match manifest {
            Manifest::List(mut platforms) => {
                // The Windows entries' users (issue 26 item 2): the kubelet's runAsNonRoot
                // check reads the config of the entry the node pulls. Bounded, and best
                // effort: an entry that cannot be read keeps its user unknown.
                for p in platforms
                    .iter_mut()
                    .filter(|p| p.is_windows() && p.digest.is_some())
                    .take(MAX_ENTRY_CONFIGS)
                {
                    let entry = p.digest.clone().unwrap_or_default();
                    if let Ok(image) = self.entry_config(r, &origin, reader, &entry).await {
                        p.user = Some(image.user.unwrap_or_default());
                    }
                }
                Ok(ImageFacts {
                    digest,
                    list: true,
                    platforms,
                    user: None,
                })
            }
            Manifest::Single { config, .. } => {
                let image = self.config(r, &origin, reader, config).await?;
                Ok(ImageFacts {
                    digest,
                    list: false,
                    platforms: vec![image.platform],
                    user: image.user,
                })
            }
        }
    }

    /// The image config of list entry `entry` (a checked digest): its manifest, which must be
    /// a single one of that digest, then its config.
    async fn entry_config(
        &self,
        r: &ImageRef,
        origin: &Origin,
        reader: &Reader,
        entry: &str,
    ) -> Result<ImageConfig, LookupError> {
        let resp = self.manifest(r, origin, reader, Method::GET, entry).await?;
        let got = sha256(&resp.body);
        if got != entry {
            return Err(LookupError::Digest {
                asked: entry.into(),
                got,
            });
        }
        let manifest = parse_manifest(&resp.body, resp.header(header::CONTENT_TYPE))?;
        drop(resp);
        match manifest {
            Manifest::Single { config, .. } => self.config(r, origin, reader, config).await,
            Manifest::List(_) => Err(ParseError::Shape("a list entry that is a list").into()),
        }
    }

    /// The config blob `config` (a checked digest), verified against its digest.
    async fn config(
        &self,
        r: &ImageRef,
        origin: &Origin,
        reader: &Reader,
        config: String,
    ) -> Result<ImageConfig, LookupError> {
        let blob = self
            .get(r, origin, reader, Method::GET, Object::Config(&config))
            .await?;
        check(&blob, "the config blob")?;
        if sha256(&blob.body) != config {
            return Err(LookupError::Digest {
                asked: config,
                got: sha256(&blob.body),
            });
        }
        Ok(parse_image_config(&blob.body)?)
    }

    /// The registry's [`Origin`]: what every URL of the lookup is checked against.
    async fn origin(&self, r: &ImageRef) -> Result<Origin, LookupError> {
        Ok(self.http.origin(&self.url(r, "/v2/")).await?)
    }

    async fn manifest(
        &self,
        r: &ImageRef,
        origin: &Origin,
        reader: &Reader,
        method: Method,
        reference: &str,
    ) -> Result<Response, LookupError> {
        let resp = self
            .get(r, origin, reader, method, Object::Manifest(reference))
            .await?;
        check(&resp, "the manifest")?;
        Ok(resp)
    }

    /// A request with the repository's credentials that serve `reader`: a cached token of one
    /// of them (or an anonymous one) first; on `401`, the challenge's scheme with every such
    /// credential the keyring matches to the image, most specific first (the kubelet tries
    /// them in turn), then, for a token realm, an anonymous token (a public repository on a
    /// registry whose credentials were refused). A body over the object's cap (or the
    /// client's own cap, if lower) is cut there: `HttpError::TooLarge`.
    async fn get(
        &self,
        r: &ImageRef,
        origin: &Origin,
        reader: &Reader,
        method: Method,
        object: Object<'_>,
    ) -> Result<Response, LookupError> {
        let (path, accept, cap) = match object {
            Object::Manifest(reference) => (
                format!("/v2/{}/manifests/{reference}", r.repository),
                Some(ACCEPT),
                MAX_MANIFEST_BYTES,
            ),
            Object::Config(digest) => (
                format!("/v2/{}/blobs/{digest}", r.repository),
                None,
                MAX_CONFIG_BYTES,
            ),
        };
        let mut http = self.http.clone();
        http.limits.max_body = http.limits.max_body.min(cap);
        let url = self.url(r, &path);
        let headers: Vec<(HeaderName, String)> = accept
            .map(|a| vec![(header::ACCEPT, a.to_string())])
            .unwrap_or_default();
        let keyring = self.credentials.current();
        let creds = keyring.lookup_for(&format!("{}/{}", r.registry, r.repository), reader);
        let ids: Vec<String> = creds.iter().map(credential_id).collect();
        let key = |id: &str| (r.registry.clone(), r.repository.clone(), id.to_string());
        let generation = self.credentials.generation();
        let cached = {
            let mut tokens = self.tokens.lock().unwrap_or_else(|e| e.into_inner());
            // A token got with credentials that were since replaced is not used again.
            if tokens.0 != generation {
                *tokens = (generation, HashMap::new());
            }
            let now = Instant::now();
            ids.iter()
                .map(String::as_str)
                .chain([""])
                .find_map(|id| tokens.1.get(&key(id)).filter(|(_, until)| *until > now))
                .map(|(t, _)| t.clone())
        };
        let resp = http
            .request(origin, method.clone(), &url, &headers, cached.as_deref())
            .await?;
        if resp.status != StatusCode::UNAUTHORIZED {
            return Ok(resp);
        }
        let challenge = resp
            .header(header::WWW_AUTHENTICATE)
            .and_then(parse_challenge)
            .ok_or_else(|| LookupError::Auth("401 without a challenge winlint reads".into()))?;
        let anonymous = matches!(challenge, Challenge::Bearer { .. }).then_some(None);
        let mut refused = 0;
        let mut withheld = Vec::new();
        for (id, cred) in creds
            .iter()
            .zip(&ids)
            .map(|(c, id)| (id.as_str(), Some(c)))
            .chain(anonymous.map(|a| ("", a)))
        {
            let (auth, ttl) = match (&challenge, cred) {
                (Challenge::Basic, Some(c)) => (c.credential.basic(), Duration::from_secs(3600)),
                (Challenge::Basic, None) => continue,
                (Challenge::Bearer { realm, service, .. }, c) => {
                    let realm_uri = realm_uri(origin, realm)?;
                    if let Some(m) = c
                        && !may_send_to_realm(r, origin, m, &realm_uri)
                    {
                        withheld.push(m.key.to_string());
                        continue;
                    }
                    match self
                        .token(
                            r,
                            origin,
                            &realm_uri,
                            service.as_deref(),
                            c.map(|m| m.credential),
                        )
                        .await
                    {
                        Ok((token, ttl)) => (format!("Bearer {token}"), ttl),
                        Err(LookupError::Auth(_)) => {
                            refused += 1;
                            continue;
                        }
                        Err(e) => return Err(e),
                    }
                }
            };
            let resp = http
                .request(origin, method.clone(), &url, &headers, Some(&auth))
                .await?;
            if resp.status == StatusCode::UNAUTHORIZED {
                refused += 1;
                continue;
            }
            let mut tokens = self.tokens.lock().unwrap_or_else(|e| e.into_inner());
            if tokens.0 == generation {
                tokens.1.insert(key(id), (auth, Instant::now() + ttl));
            }
            return Ok(resp);
        }
        let withheld = if withheld.is_empty() {
            String::new()
        } else {
            format!(
                "; the credentials of glob key(s) {} were not sent to a token realm on another host",
                withheld.join(", ")
            )
        };
        Err(LookupError::Auth(if creds.is_empty() {
            format!(
                "{} asks for credentials; none match the image{withheld}",
                r.registry
            )
        } else {
            format!(
                "{} refused the credentials ({refused} tried){withheld}",
                r.registry
            )
        }))
    }

    /// The token flow: GET the realm with `service` and `scope=repository:NAME:pull`, with
    /// Basic credentials when given; `{token | access_token, expires_in}`.
    async fn token(
        &self,
        r: &ImageRef,
        origin: &Origin,
        realm: &hyper::Uri,
        service: Option<&str>,
        cred: Option<&Credential>,
    ) -> Result<(String, Duration), LookupError> {
        let query = {
            let mut q = form_urlencoded::Serializer::new(String::new());
            if let Some(s) = service {
                q.append_pair("service", s);
            }
            q.append_pair("scope", &format!("repository:{}:pull", r.repository));
            q.finish()
        };
        let realm = realm.to_string();
        let sep = if realm.contains('?') { '&' } else { '?' };
        let url = format!("{realm}{sep}{query}");
        let basic = cred.map(Credential::basic);
        let mut http = self.http.clone();
        http.limits.max_body = http.limits.max_body.min(MAX_TOKEN_BYTES);
        let resp = http
            .request(origin, Method::GET, &url, &[], basic.as_deref())
            .await?;
        check(&resp, "the token endpoint")?;
        let answer: TokenAnswer = serde_json::from_slice(&resp.body)
            .map_err(|e| LookupError::Auth(format!("token answer is not JSON: {e}")))?;
        let token = answer
            .token
            .or(answer.access_token)
            .filter(|t| !t.is_empty())
            .ok_or_else(|| LookupError::Auth("token answer without a token".into()))?;
        // The spec's default lifetime is 60 s; keep a margin.
        let secs = answer.expires_in.and_then(|n| n.as_u64()).unwrap_or(60);
        Ok((token, Duration::from_secs(secs.saturating_sub(5).max(1))))
    }
}

/// What a lookup fetches from a repository: a manifest by tag or digest, or a config blob by
/// digest (each with its `Accept` and its size cap).
#[derive(Debug, Clone, Copy)]
enum Object<'a> {
    Manifest(&'a str),
    Config(&'a str),
}

/// The most bytes of a token answer read (Docker Hub's and ACR's tokens are a few KiB).
const MAX_TOKEN_BYTES: usize = 64 << 10;

/// A token answer, typed: only what is read is kept (the rest is skipped, never built).
#[derive(serde::Deserialize)]
struct TokenAnswer {
    #[serde(default)]
    token: Option<String>,
    #[serde(default)]
    access_token: Option<String>,
    /// A number (not always an integer in the wild); read as whole seconds when it is one.
    #[serde(default)]
    expires_in: Option<serde_json::Number>,
}

/// The realm of a Bearer challenge as a URL the lookup may go to ([`Origin::check`]: HTTPS,
/// an address the registry's class allows), else why not.
fn realm_uri(origin: &Origin, realm: &str) -> Result<hyper::Uri, LookupError> {
    let uri: hyper::Uri = realm
        .parse()
        .ok()
        .filter(|u: &hyper::Uri| u.host().is_some())
        .ok_or_else(|| LookupError::Auth(format!("the token realm {realm:?} is not a URL")))?;
    origin
        .check(&uri, "the token realm")
        .map_err(|e| LookupError::Auth(e.to_string()))?;
    Ok(uri)
}

/// May the password of `m` go to the token realm `realm` for image `r` (of the registry
/// `origin`)? An exact key's, to any realm (the registry the administrator named chose it); a
/// glob key's, only to the registry's own host and port or to a host the same glob matches (a
/// tenant may own a host under the glob, never choose where the password goes from there).
fn may_send_to_realm(r: &ImageRef, origin: &Origin, m: &Matched, realm: &hyper::Uri) -> bool {
    if !m.by_glob() {
        return true;
    }
    let Some(host) = realm.host() else {
        return false;
    };
    let default_port = |plain_http: bool| if plain_http { 80 } else { 443 };
    let realm_port = realm
        .port_u16()
        .unwrap_or(default_port(realm.scheme_str() == Some("http")));
    let (registry_host, registry_port) = match r.registry.rsplit_once(':') {
        Some((h, p)) if p.bytes().all(|b| b.is_ascii_digit()) => (h, p.parse().ok()),
        _ => (r.registry.as_str(), None),
    };
    let registry_port = registry_port.unwrap_or(default_port(origin.plain_http));
    let authority = realm.authority().map_or(host, |a| a.as_str());
    (host.eq_ignore_ascii_case(registry_host) && realm_port == registry_port)
        || m.key_matches_host(authority)
}

/// A status that is not success, as an error (429 with its Retry-After).
fn check(resp: &Response, what: &str) -> Result<(), LookupError> {
    let s = resp.status;
    if s.is_success() {
        return Ok(());
    }
    Err(match s {
        StatusCode::NOT_FOUND => LookupError::NotFound,
        StatusCode::TOO_MANY_REQUESTS => LookupError::Throttled {
            retry_after: resp
                .header(header::RETRY_AFTER)
                .and_then(|v| v.trim().parse().ok())
                .map(Duration::from_secs),
        },
        StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => {
            LookupError::Auth(format!("HTTP {} for {what}", s.as_u16()))
        }
        _ => LookupError::Status {
            status: s.as_u16(),
            what: what.into(),
        },
    })
}

fn reference_of(r: &ImageRef) -> &str {
    r.digest.as_deref().or(r.tag.as_deref()).unwrap_or("latest")
}

/// The API base of a registry in normal form (`ImageRef::registry`): Docker Hub's API host;
/// plain HTTP for loopback registries (as docker treats them), HTTPS for every other. An
/// explicit port is kept, except 443 on HTTPS, which the normal form drops: the same endpoint.
pub fn base_url(registry: &str) -> String {
    if registry == "docker.io" {
        return "https://registry-1.docker.io".into();
    }
    let host = registry.rsplit_once(':').map_or(registry, |(h, p)| {
        if p.bytes().all(|b| b.is_ascii_digit()) {
            h
        } else {
            registry
        }
    });
    let scheme = if crate::model::image::is_loopback(host) {
        "http"
    } else {
        "https"
    };
    format!("{scheme}://{registry}")
}

/// `sha256:HEX` of bytes.
pub fn sha256(bytes: &[u8]) -> String {
    format!("sha256:{}", crate::model::digest::sha256_hex(&[bytes]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::image_facts::{DOCKER_LIST, DOCKER_MANIFEST, OCI_INDEX, OCI_MANIFEST};

    #[test]
    fn loopback_registries_speak_http() {
        assert_eq!(base_url("127.0.0.1:5000"), "http://127.0.0.1:5000");
        assert_eq!(base_url("localhost:5000"), "http://localhost:5000");
        assert_eq!(base_url("mcr.microsoft.com"), "https://mcr.microsoft.com");
        assert_eq!(base_url("docker.io"), "https://registry-1.docker.io");
    }

    #[test]
    fn a_mirror_serves_each_registry_under_its_name_and_only_on_loopback() {
        let c = || {
            RegistryClient::new(
                Limits::default(),
                Credentials::new(super::super::keyring::Keyring::default()),
            )
        };
        let r =
            crate::model::image::parse("mcr.microsoft.com/windows/servercore:ltsc2022").unwrap();
        let m = c().with_mirror("127.0.0.1:5000").unwrap();
        assert_eq!(
            m.url(&r, "/v2/windows/servercore/manifests/ltsc2022"),
            "http://127.0.0.1:5000/v2/mcr.microsoft.com/windows/servercore/manifests/ltsc2022"
        );
        assert_eq!(
            c().url(&r, "/v2/windows/servercore/manifests/ltsc2022"),
            "https://mcr.microsoft.com/v2/windows/servercore/manifests/ltsc2022"
        );
        assert!(c().with_mirror("mirror.example.com:5000").is_err());
    }

    /// Every spelling of a registry is one endpoint (the explicit port when it is not HTTPS's
    /// default), one key for credentials and tokens, one metric label.
    #[test]
    fn spellings_of_a_registry_are_one_endpoint() {
        let c = RegistryClient::new(
            Limits::default(),
            Credentials::new(super::super::keyring::Keyring::default()),
        );
        let url = |image: &str| {
            let r = crate::model::image::parse(image).unwrap();
            c.url(&r, &format!("/v2/{}/manifests/1", r.repository))
        };
        for (image, want) in [
            (
                "mcr.microsoft.com:443/windows/servercore:1809",
                "https://mcr.microsoft.com/v2/windows/servercore/manifests/1",
            ),
            (
                "MCR.Microsoft.com/windows/servercore:1809",
                "https://mcr.microsoft.com/v2/windows/servercore/manifests/1",
            ),
            (
                "registry-1.docker.io:443/library/nginx",
                "https://registry-1.docker.io/v2/library/nginx/manifests/1",
            ),
            (
                "index.docker.io/nginx",
                "https://registry-1.docker.io/v2/library/nginx/manifests/1",
            ),
            (
                "myregistry.example.com:8443/app",
                "https://myregistry.example.com:8443/v2/app/manifests/1",
            ),
            (
                "localhost:443/app",
                "http://localhost:443/v2/app/manifests/1",
            ),
        ] {
            assert_eq!(url(image), want, "{image}");
        }
    }

    #[test]
    fn accept_names_every_media_type() {
        for m in [OCI_INDEX, DOCKER_LIST, OCI_MANIFEST, DOCKER_MANIFEST] {
            assert!(ACCEPT.contains(m));
        }
    }
}
