//! The HTTP a registry lookup needs, bounded: a connect timeout, a read timeout on every wait
//! for bytes, a body cap enforced while streaming (a 100 MB "manifest" is cut at the cap, never
//! held), a redirect limit (a loop ends there), and credentials never sent to another host on a
//! redirect (registries redirect blobs to storage hosts: the `Authorization` header stays home).

use std::sync::Arc;
use std::time::Duration;

use http_body_util::{BodyExt, Empty};
use hyper::body::Bytes;
use hyper::header::{self, HeaderMap, HeaderValue};
use hyper::{Method, Request, StatusCode, Uri};
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;

/// The bounds of every request.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub connect: Duration,
    /// The longest wait for the response head or for the next piece of the body.
    pub read: Duration,
    /// The most bytes of a body read (manifests, configs, token answers).
    pub max_body: usize,
    pub max_redirects: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            connect: Duration::from_secs(3),
            read: Duration::from_secs(5),
            max_body: 4 << 20,
            max_redirects: 5,
        }
    }
}

/// Why a request gave no answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HttpError {
    #[error("bad URL {0:?}")]
    Url(String),
    #[error("{0}")]
    Transport(String),
    #[error("no answer within {0:?} ({1})")]
    Timeout(Duration, &'static str),
    #[error("the body is larger than {0} bytes (cut there)")]
    TooLarge(usize),
    #[error("more than {0} redirects")]
    Redirects(usize),
}

/// An answer: status, headers and the whole (capped) body; `url` is where it came from after
/// redirects.
#[derive(Debug)]
pub struct Response {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Bytes,
    pub url: Uri,
}

impl Response {
    pub fn header(&self, name: header::HeaderName) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

/// A pooled HTTP/1 client over rustls (ring, the system's roots) or plain TCP.
#[derive(Clone)]
pub struct Http {
    client: Client<HttpsConnector<HttpConnector>, Empty<Bytes>>,
    pub limits: Limits,
}

impl std::fmt::Debug for Http {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Http")
            .field("limits", &self.limits)
            .finish()
    }
}

impl Http {
    pub fn new(limits: Limits) -> Self {
        let mut tcp = HttpConnector::new();
        tcp.set_connect_timeout(Some(limits.connect));
        tcp.enforce_http(false);
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let builder = hyper_rustls::HttpsConnectorBuilder::new();
        // No system roots (a bare container): https fails with a verification error, http works.
        let builder = match builder.with_provider_and_native_roots(provider.clone()) {
            Ok(b) => b,
            Err(_) => hyper_rustls::HttpsConnectorBuilder::new().with_tls_config(
                rustls::ClientConfig::builder_with_provider(provider)
                    .with_safe_default_protocol_versions()
                    .expect("ring supports the default protocol versions")
                    .with_root_certificates(rustls::RootCertStore::empty())
                    .with_no_client_auth(),
            ),
        };
        let https = builder.https_or_http().enable_http1().wrap_connector(tcp);
        let client = Client::builder(TokioExecutor::new())
            .pool_idle_timeout(Duration::from_secs(30))
            .build(https);
        Http { client, limits }
    }

    /// `method url` with `headers`; `auth` (an `Authorization` value) goes to the first host
    /// only. Redirects are followed up to the limit; a body beyond the cap is an error.
    pub async fn request(
        &self,
        method: Method,
        url: &str,
        headers: &[(header::HeaderName, String)],
        auth: Option<&str>,
    ) -> Result<Response, HttpError> {
        let mut uri: Uri = url.parse().map_err(|_| HttpError::Url(url.into()))?;
        let home = uri.authority().cloned();
        for _ in 0..=self.limits.max_redirects {
            let mut req = Request::builder().method(method.clone()).uri(uri.clone());
            for (k, v) in headers {
                req = req.header(k, v);
            }
            if let Some(a) = auth
                && uri.authority() == home.as_ref()
            {
                req = req.header(header::AUTHORIZATION, a);
            }
            let req = req
                .body(Empty::new())
                .map_err(|e| HttpError::Url(e.to_string()))?;
            let resp = tokio::time::timeout(self.limits.read, self.client.request(req))
                .await
                .map_err(|_| HttpError::Timeout(self.limits.read, "response head"))?
                .map_err(|e| HttpError::Transport(transport_error(&e)))?;
            let status = resp.status();
            if status.is_redirection()
                && let Some(loc) = resp.headers().get(header::LOCATION)
            {
                uri = join(&uri, loc)?;
                continue;
            }
            let (parts, mut body) = resp.into_parts();
            let mut buf = Vec::new();
            if method != Method::HEAD {
                loop {
                    let frame = tokio::time::timeout(self.limits.read, body.frame())
                        .await
                        .map_err(|_| HttpError::Timeout(self.limits.read, "body"))?;
                    let Some(frame) = frame else { break };
                    let frame = frame.map_err(|e| HttpError::Transport(e.to_string()))?;
                    if let Ok(data) = frame.into_data() {
                        if buf.len() + data.len() > self.limits.max_body {
                            return Err(HttpError::TooLarge(self.limits.max_body));
                        }
                        buf.extend_from_slice(&data);
                    }
                }
            }
            return Ok(Response {
                status,
                headers: parts.headers,
                body: Bytes::from(buf),
                url: uri,
            });
        }
        Err(HttpError::Redirects(self.limits.max_redirects))
    }
}

/// The error chain of a hyper client error in one line (its Display says only "client error").
fn transport_error(e: &hyper_util::client::legacy::Error) -> String {
    let mut s = e.to_string();
    let mut src = std::error::Error::source(e);
    while let Some(inner) = src {
        s.push_str(": ");
        s.push_str(&inner.to_string());
        src = inner.source();
    }
    s
}

/// A `Location` against the URL it answered: absolute, or a path on the same host.
fn join(base: &Uri, loc: &HeaderValue) -> Result<Uri, HttpError> {
    let loc = loc
        .to_str()
        .map_err(|_| HttpError::Url("a non-ASCII Location".into()))?;
    if loc.starts_with("http://") || loc.starts_with("https://") {
        return loc.parse().map_err(|_| HttpError::Url(loc.into()));
    }
    if !loc.starts_with('/') {
        return Err(HttpError::Url(format!("relative Location {loc:?}")));
    }
    let scheme = base.scheme_str().unwrap_or("https");
    let authority = base.authority().map(|a| a.as_str()).unwrap_or("");
    format!("{scheme}://{authority}{loc}")
        .parse()
        .map_err(|_| HttpError::Url(loc.into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locations_join_on_the_same_host() {
        let base: Uri = "http://127.0.0.1:5000/v2/a/manifests/b".parse().unwrap();
        let j = join(&base, &HeaderValue::from_static("/v2/x")).unwrap();
        assert_eq!(j.to_string(), "http://127.0.0.1:5000/v2/x");
        let j = join(&base, &HeaderValue::from_static("https://cdn.example/b")).unwrap();
        assert_eq!(j.authority().unwrap().as_str(), "cdn.example");
        assert!(join(&base, &HeaderValue::from_static("x/y")).is_err());
    }
}
