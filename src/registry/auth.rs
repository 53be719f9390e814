//! Registry credentials and the challenge a registry answers `401` with.
//!
//! Credentials come from a docker config file (`{"auths": {HOST: {"auth": base64(user:pass)} |
//! {"username", "password"}}}`, or the legacy `.dockercfg` map without `auths`). A credential
//! helper (`credsStore`, `credHelpers`) is a program: winlint never runs one, and says so when
//! the file names one.

use std::collections::BTreeMap;
use std::path::Path;

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

/// The credentials of a docker config, by registry host.
#[derive(Debug, Clone, Default)]
pub struct Keyring {
    by_host: BTreeMap<String, Credential>,
    /// The credential helpers the file names (never run): for a note to the user.
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

impl Keyring {
    /// Read a docker config file.
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

    /// The user's docker config (`$DOCKER_CONFIG/config.json`, else `~/.docker/config.json`),
    /// or no credentials when there is none.
    pub fn default_file() -> Option<std::path::PathBuf> {
        if let Some(d) = std::env::var_os("DOCKER_CONFIG") {
            return Some(Path::new(&d).join("config.json"));
        }
        let home = std::env::var_os("HOME")?;
        Some(Path::new(&home).join(".docker").join("config.json"))
    }

    pub fn from_json(text: &[u8]) -> Result<Self, String> {
        let v: Value = serde_json::from_slice(text).map_err(|e| e.to_string())?;
        let obj = v.as_object().ok_or("not a JSON object")?;
        let mut ring = Keyring::default();
        if let Some(s) = obj.get("credsStore").and_then(Value::as_str) {
            ring.helpers.push(format!("credsStore {s}"));
        }
        if let Some(h) = obj.get("credHelpers").and_then(Value::as_object) {
            for (host, prog) in h {
                ring.helpers.push(format!(
                    "credHelpers {host}: {}",
                    prog.as_str().unwrap_or("?")
                ));
            }
        }
        // `.dockercfg` is the `auths` map itself.
        let auths = match obj.get("auths") {
            Some(a) => a.as_object().ok_or("`auths` is not an object")?,
            None if obj.contains_key("credsStore") || obj.contains_key("credHelpers") => {
                return Ok(ring);
            }
            None => obj,
        };
        for (key, entry) in auths {
            if let Some(c) = credential_of(entry)? {
                ring.by_host.insert(host_of(key), c);
            }
        }
        Ok(ring)
    }

    /// The credential for a registry host (`docker.io` also answers to Docker Hub's historic
    /// keys).
    pub fn get(&self, registry: &str) -> Option<&Credential> {
        let host = host_of(registry);
        self.by_host.get(&host).or_else(|| {
            (host == "docker.io")
                .then(|| {
                    ["index.docker.io", "registry-1.docker.io"]
                        .iter()
                        .find_map(|h| self.by_host.get(*h))
                })
                .flatten()
        })
    }

    pub fn insert(&mut self, registry: &str, c: Credential) {
        self.by_host.insert(host_of(registry), c);
    }

    pub fn is_empty(&self) -> bool {
        self.by_host.is_empty()
    }
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

/// `https://index.docker.io/v1/` → `index.docker.io`; `myreg:5000/path` → `myreg:5000`.
fn host_of(key: &str) -> String {
    let k = key
        .trim()
        .trim_start_matches("https://")
        .trim_start_matches("http://");
    k.split('/').next().unwrap_or(k).to_ascii_lowercase()
}

/// A `WWW-Authenticate` challenge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Challenge {
    Basic,
    Bearer {
        realm: String,
        service: Option<String>,
        scope: Option<String>,
    },
}

/// Parse `Bearer realm="…",service="…",scope="…"` or `Basic realm="…"`.
pub fn parse_challenge(h: &str) -> Option<Challenge> {
    let h = h.trim();
    let (scheme, rest) = h.split_once(' ').unwrap_or((h, ""));
    if scheme.eq_ignore_ascii_case("basic") {
        return Some(Challenge::Basic);
    }
    if !scheme.eq_ignore_ascii_case("bearer") {
        return None;
    }
    let mut params = BTreeMap::new();
    let mut rest = rest.trim();
    while !rest.is_empty() {
        let (k, after) = rest.split_once('=')?;
        let (v, after) = if let Some(q) = after.strip_prefix('"') {
            let end = q.find('"')?;
            (&q[..end], &q[end + 1..])
        } else {
            after.split_once(',').map_or((after, ""), |(v, a)| (v, a))
        };
        params.insert(k.trim().to_ascii_lowercase(), v.to_string());
        rest = after.trim_start_matches([',', ' ']);
    }
    Some(Challenge::Bearer {
        realm: params.remove("realm")?,
        service: params.remove("service"),
        scope: params.remove("scope"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn docker_config_auth_and_username_password() {
        let ring = Keyring::from_json(
            br#"{"auths": {"https://index.docker.io/v1/": {"auth": "dTpw"},
                 "127.0.0.1:5000": {"username": "a", "password": "b:c"}},
                 "credsStore": "desktop"}"#,
        )
        .unwrap();
        assert_eq!(ring.get("docker.io").unwrap().username, "u");
        assert_eq!(ring.get("127.0.0.1:5000").unwrap().password, "b:c");
        assert_eq!(ring.helpers, vec!["credsStore desktop"]);
        assert!(ring.get("ghcr.io").is_none());
        let legacy = Keyring::from_json(br#"{"r.example": {"auth": "dTpw"}}"#).unwrap();
        assert_eq!(legacy.get("r.example").unwrap().basic(), "Basic dTpw");
        assert!(Keyring::from_json(br#"{"auths": {"r": {"auth": "%%"}}}"#).is_err());
    }

    #[test]
    fn challenges() {
        assert_eq!(
            parse_challenge(
                r#"Bearer realm="https://auth.docker.io/token",service="registry.docker.io",scope="repository:library/nginx:pull""#
            ),
            Some(Challenge::Bearer {
                realm: "https://auth.docker.io/token".into(),
                service: Some("registry.docker.io".into()),
                scope: Some("repository:library/nginx:pull".into()),
            })
        );
        assert_eq!(
            parse_challenge(r#"Basic realm="r""#),
            Some(Challenge::Basic)
        );
        assert_eq!(parse_challenge("Negotiate"), None);
        assert_eq!(parse_challenge("Bearer service=x"), None);
    }
}
