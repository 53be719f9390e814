//! Registry credentials, matched to an image the kubelet's way. One code path for the CLI's
//! docker config (`--registry-config`) and `serve`'s pull secrets.
//!
//! The matching is kubernetes `pkg/credentialprovider/keyring.go` (`BasicDockerKeyring.Add`,
//! `Lookup`, `URLsMatch`, `isDefaultRegistryMatch`; unchanged in substance from v1.3 to v1.35):
//! * a key is a host, optionally with a port and a path (`https://` and a `/v1/` or `/v2/`
//!   prefix of the path dropped: `https://index.docker.io/v1/` is `index.docker.io`);
//! * a key matches an image (`registry/repository`, Docker Hub's as `docker.io/library/x`) when
//!   the ports are equal, the hosts have as many dot-separated labels and each label matches
//!   the key's as a glob (`*.azurecr.io`), and the key's path is a string prefix of the image's
//!   (`quay.io/coreos` matches `quay.io/coreos/etcd` and also `quay.io/coreosx`);
//! * keys are tried in reverse lexical order (`quay.io/coreos` before `quay.io`) and every
//!   match is returned, all credentials of each, in the order they were added: the kubelet
//!   tries them one after the other;
//! * when nothing matched, an image of Docker Hub (`docker.io/…`, `index.docker.io/…`, or a
//!   first path part without `.` or `:`) gets the credentials of `index.docker.io`.
//!
//! The kubelet pulls anonymously only when nothing matched; winlint also asks anonymously
//! after every matched credential was refused (`client.rs`): a fact read anonymously is as
//! true as one read with a password.
//!
//! Docker configs: `{"auths": {KEY: {"auth": base64(user:pass)} | {"username", "password"}}}`
//! (a `kubernetes.io/dockerconfigjson` Secret's `.dockerconfigjson`), or the legacy map
//! without `auths` (`kubernetes.io/dockercfg`'s `.dockercfg`). `auth` wins over
//! `username`/`password`, as in the kubelet's `DockerConfigEntry.UnmarshalJSON`. A
//! credential helper (`credsStore`, `credHelpers`) is a program: never run, only reported.
//!
//! Whom a credential serves (issue 30): `serve` holds the pull secrets of many teams, so each
//! credential carries its [`Scope`] (the Secret it came from and the namespaces whose pods it
//! may serve) and a lookup for a pod uses only the credentials that serve the pod's namespace
//! ([`Keyring::lookup_for`]). The CLI's docker config serves its one user: every reader.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, RwLock};

use base64::Engine;
use serde_json::Value;

/// A user name and password for one registry.
#[derive(Clone, PartialEq, Eq)]
pub struct Credential {
    pub username: String,
    pub password: String,
}

impl std::fmt::Debug for Credential {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Credential({:?}, <hidden>)", self.username)
    }
}

impl Credential {
    /// The `Authorization: Basic …` value.
    pub fn basic(&self) -> String {
        let raw = format!("{}:{}", self.username, self.password);
        format!(
            "Basic {}",
            base64::engine::general_purpose::STANDARD.encode(raw)
        )
    }
}

/// Where a credential came from and whose lookups it serves.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Scope {
    /// The Secret's name (`serve`); empty for the CLI's docker config.
    pub source: String,
    /// The namespaces whose pods it serves (exact names, a prefix ending in `*`, `*` for all);
    /// `None`: every reader (the CLI's docker config).
    pub namespaces: Option<Vec<String>>,
}

impl Scope {
    /// Does this credential serve `reader`?
    pub fn serves(&self, reader: &Reader) -> bool {
        match (&self.namespaces, reader) {
            (None, _) | (_, Reader::Anyone) => true,
            (Some(patterns), Reader::Namespace(ns)) => patterns
                .iter()
                .any(|p| crate::config::namespace_matches(p, ns)),
        }
    }
}

/// Who a lookup is for: the CLI's user (every credential), or the pods of a namespace
/// (`serve`: the credentials whose [`Scope`] lists it).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Reader {
    Anyone,
    Namespace(String),
}

/// A credential a lookup may use for an image, with the key it matched by (a glob key
/// limits where its password may go: `client.rs`).
#[derive(Debug, Clone, Copy)]
pub struct Matched<'a> {
    pub credential: &'a Credential,
    /// The normalised key (`host[:port][/path]`).
    pub key: &'a str,
    pub scope: &'a Scope,
}

impl Matched<'_> {
    /// Whether its key's host has glob patterns (`*.azurecr.io`).
    pub fn by_glob(&self) -> bool {
        is_glob_key(self.key)
    }

    /// Whether `host` (`name[:port]`) is one the key's host matches (the same glob, label by
    /// label; the port as the kubelet compares it).
    pub fn key_matches_host(&self, host: &str) -> bool {
        let key_host = self.key.split('/').next().unwrap_or("");
        urls_match(key_host, host)
    }
}

/// Whether a key's host has glob characters (`*`, `?`, `[`, `\`).
pub fn is_glob_key(key: &str) -> bool {
    key.split('/')
        .next()
        .unwrap_or("")
        .contains(['*', '?', '[', '\\'])
}

/// Credentials by key (`host[:port][/path]`, host labels may be globs).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Keyring {
    /// Iterated in reverse: the kubelet's reverse-sorted index.
    by_key: BTreeMap<String, Vec<(Credential, Arc<Scope>)>>,
    /// The credential helpers named (never run): for a note to the user.
    pub helpers: Vec<String>,
}

/// Why a docker config could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{path}: {err}")]
    Read { path: String, err: std::io::Error },
    #[error("{path}: not a docker config: {err}")]
    Parse { path: String, err: String },
}

/// Docker Hub's key after normalisation (`https://index.docker.io/v1/`).
const DOCKER_HUB_KEY: &str = "index.docker.io";

impl Keyring {
    /// Read a docker config file (`auths`, or the legacy map).
    pub fn from_file(path: &Path) -> Result<Self, ConfigError> {
        let text = std::fs::read(path).map_err(|err| ConfigError::Read {
            path: path.display().to_string(),
            err,
        })?;
        Self::from_json(&text).map_err(|err| ConfigError::Parse {
            path: path.display().to_string(),
            err,
        })
    }

    /// The user's docker config (`$DOCKER_CONFIG/config.json`, else `~/.docker/config.json`).
    pub fn default_file() -> Option<std::path::PathBuf> {
        if let Some(d) = std::env::var_os("DOCKER_CONFIG") {
            return Some(Path::new(&d).join("config.json"));
        }
        let home = std::env::var_os("HOME")?;
        Some(Path::new(&home).join(".docker").join("config.json"))
    }

    /// A docker config: `auths` when present, else the legacy map (a file may be either).
    pub fn from_json(text: &[u8]) -> Result<Self, String> {
        let mut ring = Keyring::default();
        ring.add_config(text, Format::Either)?;
        Ok(ring)
    }

    /// Add the entries of a docker config in `format` (a Secret's type says which).
    pub fn add_config(&mut self, text: &[u8], format: Format) -> Result<(), String> {
        self.add_scoped(text, format, &Arc::new(Scope::default()), true)
            .map(|_| ())
    }

    /// Add the entries of a docker config in `format`, each serving `scope`; glob keys only
    /// with `globs` (else they are left out and returned, for a note to the administrator).
    pub fn add_scoped(
        &mut self,
        text: &[u8],
        format: Format,
        scope: &Arc<Scope>,
        globs: bool,
    ) -> Result<Vec<String>, String> {
        let v: Value = serde_json::from_slice(text).map_err(|e| e.to_string())?;
        let obj = v.as_object().ok_or("not a JSON object")?;
        if let Some(s) = obj.get("credsStore").and_then(Value::as_str) {
            self.helpers.push(format!("credsStore {s}"));
        }
        if let Some(h) = obj.get("credHelpers").and_then(Value::as_object) {
            for (host, prog) in h {
                self.helpers.push(format!(
                    "credHelpers {host}: {}",
                    prog.as_str().unwrap_or("?")
                ));
            }
        }
        let auths = match (format, obj.get("auths")) {
            (Format::Legacy, _) => obj,
            (_, Some(a)) => a.as_object().ok_or("`auths` is not an object")?,
            (Format::Auths, None) => return Ok(Vec::new()),
            (Format::Either, None) => {
                if obj.contains_key("credsStore") || obj.contains_key("credHelpers") {
                    return Ok(Vec::new());
                }
                obj
            }
        };
        let mut left_out = Vec::new();
        for (key, entry) in auths {
            if let (Some(k), Some(c)) = (normalize_key(key), credential_of(entry)?) {
                if !globs && is_glob_key(&k) {
                    left_out.push(k);
                    continue;
                }
                self.by_key.entry(k).or_default().push((c, scope.clone()));
            }
        }
        Ok(left_out)
    }

    /// Every credential for the image `registry/repository`, most specific key first (see the
    /// module comment); empty: pull anonymously.
    pub fn lookup(&self, image: &str) -> Vec<&Credential> {
        self.lookup_for(image, &Reader::Anyone)
            .into_iter()
            .map(|m| m.credential)
            .collect()
    }

    /// The credentials for the image `registry/repository` that serve `reader`, most specific
    /// key first. A credential that does not serve the reader is not there at all: the kubelet's
    /// Docker Hub fallback applies when none that serves it matched.
    pub fn lookup_for(&self, image: &str, reader: &Reader) -> Vec<Matched<'_>> {
        fn entries<'k>(
            out: &mut Vec<Matched<'k>>,
            (k, c): (&'k String, &'k Vec<(Credential, Arc<Scope>)>),
            reader: &Reader,
        ) {
            for (credential, scope) in c.iter().filter(|(_, s)| s.serves(reader)) {
                out.push(Matched {
                    credential,
                    key: k.as_str(),
                    scope: scope.as_ref(),
                });
            }
        }
        let mut out = Vec::new();
        for e in self
            .by_key
            .iter()
            .rev()
            .filter(|(k, _)| urls_match(k, image))
        {
            entries(&mut out, e, reader);
        }
        if out.is_empty()
            && is_default_registry_match(image)
            && let Some(e) = self.by_key.get_key_value(DOCKER_HUB_KEY)
        {
            entries(&mut out, e, reader);
        }
        out
    }

    /// What tells apart the readers a lookup may be shared by: the sources of the credentials
    /// that serve `reader` (sorted, joined). Two namespaces served by the same secrets share
    /// their facts; a namespace served by none shares only what anyone may read.
    pub fn reader_key(&self, reader: &Reader) -> String {
        if *reader == Reader::Anyone {
            // The CLI's one user: kept apart from every namespace's entries.
            return "*".into();
        }
        let mut sources: Vec<&str> = self
            .by_key
            .values()
            .flatten()
            .filter(|(_, s)| s.serves(reader))
            .map(|(_, s)| s.source.as_str())
            .collect();
        sources.sort_unstable();
        sources.dedup();
        sources
            .iter()
            .map(|s| format!("{s:?}"))
            .collect::<Vec<_>>()
            .join(",")
    }

    pub fn insert(&mut self, key: &str, c: Credential) {
        if let Some(k) = normalize_key(key) {
            self.by_key
                .entry(k)
                .or_default()
                .push((c, Arc::new(Scope::default())));
        }
    }

    /// Append `other`'s credentials after this keyring's (a later secret's, tried later for
    /// the same key).
    pub fn extend(&mut self, other: &Keyring) {
        for (k, c) in &other.by_key {
            self.by_key
                .entry(k.clone())
                .or_default()
                .extend(c.iter().cloned());
        }
        self.helpers.extend(other.helpers.iter().cloned());
    }

    /// Credentials held (every key, every entry).
    pub fn len(&self) -> usize {
        self.by_key.values().map(Vec::len).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.by_key.is_empty()
    }
}

/// Which shape of docker config to read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `{"auths": {…}}` (`kubernetes.io/dockerconfigjson`; the kubelet reads only `auths`).
    Auths,
    /// The map itself (`kubernetes.io/dockercfg`).
    Legacy,
    /// A file on disk: `auths` when present, else the map.
    Either,
}

/// The kubelet's `Add`: scheme dropped, a `/v1/` or `/v2/` path prefix dropped, a path of `/`
/// is none. `None` for an entry without a host (the kubelet ignores what `url.Parse` refuses).
/// The host is normalised as an image's registry is (`model::image::normal_endpoint`: lower
/// case, no `:443`), so a key matches the images of its endpoint however they spell it.
fn normalize_key(key: &str) -> Option<String> {
    let k = key.trim();
    let k = k
        .strip_prefix("https://")
        .or_else(|| k.strip_prefix("http://"))
        .unwrap_or(k);
    let (host, path) = k.find('/').map_or((k, ""), |i| k.split_at(i));
    if host.is_empty() {
        return None;
    }
    let path = if path.starts_with("/v1/") || path.starts_with("/v2/") {
        &path[3..]
    } else {
        path
    };
    let host = crate::model::image::normal_endpoint(host);
    Some(if path.is_empty() || path == "/" {
        host
    } else {
        format!("{host}{path}")
    })
}

/// `host[:port]` split into its labels and port, and the path (`""` or from `/`): Go's
/// `url.Parse("https://" + s)` then `net.SplitHostPort` (no port: the whole host).
fn split(s: &str) -> (Vec<String>, &str, &str) {
    let (hostport, path) = s.find('/').map_or((s, ""), |i| s.split_at(i));
    let (host, port) = match hostport.rsplit_once(':') {
        Some((h, p)) if !h.is_empty() && (!h.starts_with('[') || h.ends_with(']')) => {
            (h.trim_start_matches('[').trim_end_matches(']'), p)
        }
        _ => (hostport, ""),
    };
    let labels = host.split('.').map(str::to_ascii_lowercase).collect();
    (labels, port, path)
}

/// The kubelet's `URLsMatch`: same port, same number of host labels, each a glob match, the
/// key's path a prefix of the image's. Globs only in host labels.
fn urls_match(key: &str, image: &str) -> bool {
    let (kl, kp, kpath) = split(key);
    let (il, ip, ipath) = split(image);
    kp == ip
        && kl.len() == il.len()
        && ipath.starts_with(kpath)
        && kl
            .iter()
            .zip(&il)
            .all(|(g, l)| glob(g.as_bytes(), l.as_bytes()))
}

/// Go's `filepath.Match` on one host label: `*` any run, `?` one character, `[…]` a class
/// (`^` negates, `a-z` ranges), `\` escapes. A malformed pattern matches nothing (Go returns
/// an error, which `Lookup` reads as no match).
fn glob(p: &[u8], s: &[u8]) -> bool {
    match p.split_first() {
        None => s.is_empty(),
        Some((b'*', rest)) => (0..=s.len()).any(|i| glob(rest, &s[i..])),
        Some((b'?', rest)) => !s.is_empty() && glob(rest, &s[1..]),
        Some((b'[', rest)) => {
            let Some((&c, tail)) = s.split_first() else {
                return false;
            };
            match class(rest, c) {
                Some((true, after)) => glob(after, tail),
                _ => false,
            }
        }
        Some((b'\\', rest)) => match (rest.split_first(), s.split_first()) {
            (Some((pc, prest)), Some((sc, srest))) => pc == sc && glob(prest, srest),
            _ => false,
        },
        Some((pc, rest)) => s.first() == Some(pc) && glob(rest, &s[1..]),
    }
}

/// A character class after its `[`: whether `c` is in it, and the pattern after its `]`.
fn class(mut p: &[u8], c: u8) -> Option<(bool, &[u8])> {
    let negate = p.first() == Some(&b'^');
    if negate {
        p = &p[1..];
    }
    let mut hit = false;
    let mut first = true;
    loop {
        let (&lo, rest) = p.split_first()?;
        if lo == b']' && !first {
            return Some((hit != negate, rest));
        }
        first = false;
        let (lo, rest) = if lo == b'\\' {
            let (&e, r) = rest.split_first()?;
            (e, r)
        } else {
            (lo, rest)
        };
        p = rest;
        if p.first() == Some(&b'-') && p.get(1).is_some_and(|&b| b != b']') {
            let hi = p[1];
            p = &p[2..];
            hit |= lo <= c && c <= hi;
        } else {
            hit |= lo == c;
        }
    }
}

/// The kubelet's `isDefaultRegistryMatch`: does `image` pull from Docker Hub.
fn is_default_registry_match(image: &str) -> bool {
    let (first, rest) = match image.split_once('/') {
        Some((f, r)) => (f, Some(r)),
        None => (image, None),
    };
    if first.is_empty() {
        return false;
    }
    if rest.is_none() || first == "docker.io" || first == "index.docker.io" {
        return true;
    }
    !first.contains(['.', ':'])
}

fn credential_of(entry: &Value) -> Result<Option<Credential>, String> {
    if let Some(a) = entry
        .get("auth")
        .and_then(Value::as_str)
        .filter(|a| !a.is_empty())
    {
        let raw = base64::engine::general_purpose::STANDARD
            .decode(a.trim())
            .map_err(|e| format!("`auth` is not base64: {e}"))?;
        let raw = String::from_utf8(raw).map_err(|_| "`auth` is not UTF-8")?;
        let (u, p) = raw.split_once(':').ok_or("`auth` is not user:password")?;
        return Ok(Some(Credential {
            username: u.into(),
            password: p.into(),
        }));
    }
    let s = |k| entry.get(k).and_then(Value::as_str);
    Ok(match (s("username"), s("password")) {
        (Some(u), Some(p)) => Some(Credential {
            username: u.into(),
            password: p.into(),
        }),
        _ => None,
    })
}

/// The keyring a client uses now, replaced whole when `serve` re-reads its pull secrets; the
/// generation tells caches that remembered a refusal that the credentials changed.
#[derive(Debug, Clone, Default)]
pub struct Credentials {
    inner: Arc<RwLock<(Arc<Keyring>, u64)>>,
}

impl Credentials {
    pub fn new(k: Keyring) -> Self {
        Credentials {
            inner: Arc::new(RwLock::new((Arc::new(k), 0))),
        }
    }

    /// The keyring now.
    pub fn current(&self) -> Arc<Keyring> {
        self.inner
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .0
            .clone()
    }

    /// Bumped by every change.
    pub fn generation(&self) -> u64 {
        self.inner.read().unwrap_or_else(|e| e.into_inner()).1
    }

    /// Swap `k` in; false (and no new generation) when it equals the current one.
    pub fn replace(&self, k: Keyring) -> bool {
        let mut cur = self.inner.write().unwrap_or_else(|e| e.into_inner());
        if *cur.0 == k {
            return false;
        }
        cur.0 = Arc::new(k);
        cur.1 += 1;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ring(key: &str) -> Keyring {
        let mut k = Keyring::default();
        k.insert(
            key,
            Credential {
                username: "foo".into(),
                password: "bar".into(),
            },
        );
        k
    }

    /// kubernetes pkg/credentialprovider/keyring_test.go `TestUrlsMatch`.
    #[test]
    fn kubelet_urls_match() {
        for (glob, target, want) in [
            ("*.kubernetes.io", "prefix.kubernetes.io", true),
            ("prefix.*.io", "prefix.kubernetes.io", true),
            ("prefix.kubernetes.*", "prefix.kubernetes.io", true),
            ("*-good.kubernetes.io", "prefix-good.kubernetes.io", true),
            ("*.kubernetes.io/blah", "prefix.kubernetes.io/blah", true),
            ("prefix.*.io/foo", "prefix.kubernetes.io/foo/bar", true),
            (
                "*.kubernetes.io:1111/blah",
                "prefix.kubernetes.io:1111/blah",
                true,
            ),
            (
                "prefix.*.io:1111/foo",
                "prefix.kubernetes.io:1111/foo/bar",
                true,
            ),
            ("*.kubernetes.io", "kubernetes.io", false),
            ("*.*.kubernetes.io", "prefix.kubernetes.io", false),
            ("*.*.kubernetes.io", "kubernetes.io", false),
            ("kubernetes.io", "kubernetes.com", false),
            ("k*.io", "quay.io", false),
            (
                "*.kubernetes.io:1234/blah",
                "prefix.kubernetes.io:1111/blah",
                false,
            ),
            (
                "prefix.*.io/foo",
                "prefix.kubernetes.io:1111/foo/bar",
                false,
            ),
        ] {
            assert_eq!(urls_match(glob, target), want, "{glob} vs {target}");
        }
    }

    /// `TestDockerKeyringForGlob`: each key found for `target/foo/bar`.
    #[test]
    fn kubelet_keyring_for_glob() {
        for (key, target) in [
            ("https://hello.kubernetes.io", "hello.kubernetes.io"),
            ("https://*.docker.io", "prefix.docker.io"),
            ("https://prefix.*.io", "prefix.docker.io"),
            ("https://prefix.docker.*", "prefix.docker.io"),
            ("https://*.docker.io/path", "prefix.docker.io/path"),
            ("https://prefix.*.io/path", "prefix.docker.io/path/subpath"),
            ("https://prefix.docker.*/path", "prefix.docker.io/path"),
            ("https://*.docker.io:8888", "prefix.docker.io:8888"),
            ("https://prefix.*.io:8888", "prefix.docker.io:8888"),
            ("https://prefix.docker.*:8888", "prefix.docker.io:8888"),
            (
                "https://*.docker.io/path:1111",
                "prefix.docker.io/path:1111",
            ),
            ("https://*.docker.io/v1/", "prefix.docker.io/path:1111"),
            ("https://*.docker.io/v2/", "prefix.docker.io/path:1111"),
            (
                "https://prefix.docker.*/path:1111",
                "prefix.docker.io/path:1111",
            ),
            ("prefix.docker.io:1111", "prefix.docker.io:1111/path"),
            ("*.docker.io:1111", "prefix.docker.io:1111/path"),
        ] {
            let image = format!("{target}/foo/bar");
            let k = ring(key);
            let found = k.lookup(&image);
            assert_eq!(found.len(), 1, "{key} for {image}");
            assert_eq!(found[0].username, "foo");
        }
    }

    /// `TestKeyringMiss` and `TestKeyringMissWithDockerHubCredentials`.
    #[test]
    fn kubelet_keyring_miss() {
        for (key, target) in [
            ("https://hello.kubernetes.io", "world.mesos.org/foo/bar"),
            ("https://*.docker.com", "prefix.docker.io"),
            ("https://suffix.*.io", "prefix.docker.io"),
            ("https://prefix.docker.c*", "prefix.docker.io"),
            (
                "https://prefix.*.io/path:1111",
                "prefix.docker.io/path/subpath:1111",
            ),
            ("suffix.*.io", "prefix.docker.io"),
            ("https://index.docker.io/v1/", "world.mesos.org"),
        ] {
            let image = format!("{target}/foo/bar");
            assert!(ring(key).lookup(&image).is_empty(), "{key} for {image}");
        }
    }

    /// `TestKeyringHitWith{Unqualified,UnqualifiedLibrary,Qualified}DockerHub`, and the
    /// references winlint builds for Docker Hub (`docker.io/library/x`).
    #[test]
    fn kubelet_docker_hub_key() {
        let hub = ring("https://index.docker.io/v1/");
        for image in [
            "google/docker-registry",
            "jenkins",
            "index.docker.io/v1//google/docker-registry",
            "docker.io/library/nginx",
        ] {
            assert_eq!(hub.lookup(image).len(), 1, "{image}");
        }
    }

    /// `TestIsDefaultRegistryMatch`.
    #[test]
    fn kubelet_default_registry_match() {
        for (image, want) in [
            ("foo/bar", true),
            ("docker.io/foo/bar", true),
            ("index.docker.io/foo/bar", true),
            ("foo", true),
            ("", false),
            ("registry.tld/foo/bar", false),
            ("registry:5000/foo/bar", false),
            ("myhostdocker.io/foo/bar", false),
        ] {
            assert_eq!(is_default_registry_match(image), want, "{image:?}");
        }
    }

    /// `TestDockerKeyringLookup` (most specific first, every match) and `TestIssue3797` (a
    /// `/v1/` path is the host).
    #[test]
    fn kubelet_lookup_order() {
        let mut k = Keyring::from_json(
            br#"{"bar.example.com/pong": {"username": "grace", "password": "squash"},
                 "bar.example.com": {"username": "ada", "password": "smash"}}"#,
        )
        .unwrap();
        let names = |k: &Keyring, i: &str| -> Vec<String> {
            k.lookup(i).iter().map(|c| c.username.clone()).collect()
        };
        assert_eq!(names(&k, "bar.example.com"), ["ada"]);
        assert_eq!(names(&k, "bar.example.com/pong"), ["grace", "ada"]);
        assert_eq!(names(&k, "bar.example.com/ping"), ["ada"]);
        assert_eq!(names(&k, "bar.example.com/pongz"), ["grace", "ada"]);
        assert_eq!(names(&k, "bar.example.com/pong/pang"), ["grace", "ada"]);
        assert!(names(&k, "example.com").is_empty());
        assert!(names(&k, "foo.example.com").is_empty());
        k.add_config(
            br#"{"auths": {"https://quay.io/v1/": {"username": "rex", "password": "tiny arms"}}}"#,
            Format::Auths,
        )
        .unwrap();
        for i in ["quay.io", "quay.io/foo", "quay.io/foo/bar"] {
            assert_eq!(names(&k, i), ["rex"], "{i}");
        }
    }

    #[test]
    fn globs_with_classes_and_acr_wildcards() {
        let k = ring("*.azurecr.io");
        assert_eq!(k.lookup("contoso.azurecr.io/web").len(), 1);
        assert!(k.lookup("azurecr.io/web").is_empty());
        assert!(k.lookup("a.b.azurecr.io/web").is_empty());
        assert!(glob(b"r[0-9]", b"r7"));
        assert!(!glob(b"r[^0-9]", b"r7"));
        assert!(!glob(b"r[0-9", b"r7"), "a malformed class matches nothing");
        assert!(glob(b"a\\*", b"a*") && !glob(b"a\\*", b"ab"));
    }

    /// A key matches the images of its endpoint however either spells it: the image's registry
    /// in normal form (`model::image`), the key's host alike.
    #[test]
    fn keys_and_images_meet_in_normal_form() {
        let image = |s: &str| {
            let r = crate::model::image::parse(s).unwrap();
            format!("{}/{}", r.registry, r.repository)
        };
        for key in [
            "myreg.example.com",
            "https://MyReg.example.com:443/v2/",
            "myreg.example.com:0443",
        ] {
            let k = ring(key);
            for spelling in [
                "myreg.example.com/app:1",
                "myreg.example.com:443/app:1",
                "MYREG.example.com:443/app:1",
            ] {
                assert_eq!(k.lookup(&image(spelling)).len(), 1, "{key} / {spelling}");
            }
            assert!(k.lookup(&image("myreg.example.com:8443/app")).is_empty());
        }
    }

    #[test]
    fn docker_configs_of_every_shape() {
        let ring = Keyring::from_json(
            br#"{"auths": {"https://index.docker.io/v1/": {"auth": "dTpw"},
                 "127.0.0.1:5000": {"username": "a", "password": "b:c"}},
                 "credsStore": "desktop"}"#,
        )
        .unwrap();
        assert_eq!(ring.lookup("docker.io/library/x")[0].username, "u");
        assert_eq!(ring.lookup("127.0.0.1:5000/app")[0].password, "b:c");
        assert!(
            ring.lookup("127.0.0.1:5001/app").is_empty(),
            "the port counts"
        );
        assert_eq!(ring.helpers, vec!["credsStore desktop"]);
        assert!(ring.lookup("ghcr.io/x").is_empty());
        let legacy = Keyring::from_json(br#"{"r.example": {"auth": "dTpw"}}"#).unwrap();
        assert_eq!(legacy.lookup("r.example/x")[0].basic(), "Basic dTpw");
        assert!(Keyring::from_json(br#"{"auths": {"r": {"auth": "%%"}}}"#).is_err());
        // A dockerconfigjson Secret is read through `auths` only (the kubelet's
        // `DockerConfigJSON`); a dockercfg one is the map.
        let mut k = Keyring::default();
        k.add_config(br#"{"r.example": {"auth": "dTpw"}}"#, Format::Auths)
            .unwrap();
        assert!(k.is_empty());
        k.add_config(br#"{"r.example": {"auth": "dTpw"}}"#, Format::Legacy)
            .unwrap();
        assert_eq!(k.len(), 1);
    }

    #[test]
    fn credentials_bump_their_generation_on_change_only() {
        let c = Credentials::default();
        assert_eq!(c.generation(), 0);
        assert!(!c.replace(Keyring::default()));
        assert_eq!(c.generation(), 0);
        assert!(c.replace(ring("r.example")));
        assert_eq!(c.generation(), 1);
        assert!(!c.replace(ring("r.example")));
        assert_eq!(c.current().len(), 1);
    }
}
