//! The HTTP a registry lookup needs, bounded: a connect timeout, a read timeout on every wait
//! for bytes, a body cap enforced while streaming (a 100 MB "manifest" is cut at the cap, never
//! held), a redirect limit (a loop ends there), and credentials never sent to another host on a
//! redirect (registries redirect blobs to storage hosts: the `Authorization` header stays home).
//!
//! Where a lookup may go (issue 30): the registry a pod names is its [`Origin`], and every
//! further URL of the lookup (a redirect, the token realm of a `401`) must stay within what the
//! origin allows: HTTPS (plain HTTP only from a plain-HTTP loopback registry to loopback), and
//! public addresses, or addresses of the registry's own class (a registry at 10.0.0.5 may send
//! the client to 10.1.2.3, one at 127.0.0.1 to 127.0.0.2; a public one to neither). The classes
//! refused from a public registry: loopback (127/8, ::1, 0/8, ::), link-local (169.254/16 with the
//! cloud metadata services, fe80::/10), private (10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7),
//! and never anything multicast or reserved. A literal address is checked before any connection;
//! a name is checked after resolution, inside the connector, on every address it resolves to,
//! and the connection goes to one of those checked addresses (a name that resolves again to
//! another address between the check and the connection cannot slip through: there is no second
//! resolution).

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use http_body_util::{BodyExt, Empty};
use hyper::body::Bytes;
use hyper::header::{self, HeaderMap, HeaderValue};
use hyper::{Method, Request, StatusCode, Uri};
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::connect::dns::Name;
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
    /// A URL the registry sent the lookup to (a redirect, a token realm) that it may not go
    /// to: no request was made to it.
    #[error("{0}")]
    Refused(String),
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

/// What kind of address: public, or one of the classes a public registry may not send the
/// client to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Class {
    Public,
    /// 127/8, ::1, and the unspecified 0/8 and :: (a connection to them reaches this host).
    Loopback,
    /// 169.254/16 (where the cloud metadata services answer), fe80::/10.
    LinkLocal,
    /// 10/8, 172.16/12, 192.168/16, 100.64/10 (shared address space), fc00::/7.
    Private,
    /// Multicast, broadcast, reserved: never a registry.
    Unroutable,
}

impl Class {
    /// The class of an address (an IPv4 address inside IPv6, mapped or NAT64, by its IPv4).
    pub fn of(ip: IpAddr) -> Class {
        match ip {
            IpAddr::V4(v4) => class_v4(v4),
            IpAddr::V6(v6) => {
                if let Some(v4) = v6.to_ipv4_mapped() {
                    return class_v4(v4);
                }
                let seg = v6.segments();
                // NAT64's well-known prefix 64:ff9b::/96 carries an IPv4 address.
                if seg[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
                    let [a, b] = seg[6].to_be_bytes();
                    let [c, d] = seg[7].to_be_bytes();
                    return class_v4(Ipv4Addr::new(a, b, c, d));
                }
                if v6.is_loopback() || v6.is_unspecified() {
                    Class::Loopback
                } else if seg[0] & 0xffc0 == 0xfe80 {
                    Class::LinkLocal
                } else if seg[0] & 0xfe00 == 0xfc00 {
                    Class::Private
                } else if v6.is_multicast() {
                    Class::Unroutable
                } else {
                    Class::Public
                }
            }
        }
    }

    /// The class of a URL's host when it tells without a resolution: an address, or
    /// `localhost` (and its subdomains, which resolvers answer with loopback).
    pub fn of_host(host: &str) -> Option<Class> {
        let bare = host.trim_start_matches('[').trim_end_matches(']');
        if let Ok(ip) = bare.parse::<IpAddr>() {
            return Some(Class::of(ip));
        }
        let lower = host.trim_end_matches('.').to_ascii_lowercase();
        (lower == "localhost" || lower.ends_with(".localhost")).then_some(Class::Loopback)
    }

    fn name(self) -> &'static str {
        match self {
            Class::Public => "public",
            Class::Loopback => "loopback",
            Class::LinkLocal => "link-local",
            Class::Private => "private",
            Class::Unroutable => "multicast or reserved",
        }
    }
}

fn class_v4(v4: Ipv4Addr) -> Class {
    let [a, b, ..] = v4.octets();
    if v4.is_loopback() || a == 0 {
        Class::Loopback
    } else if v4.is_link_local() {
        Class::LinkLocal
    } else if v4.is_private() || (a == 100 && (64..128).contains(&b)) {
        Class::Private
    } else if v4.is_multicast() || v4.is_broadcast() || a >= 240 {
        Class::Unroutable
    } else {
        Class::Public
    }
}

/// The registry a lookup serves: whether it is spoken to over plain HTTP (a loopback
/// registry) and the class of its address. Every URL of the lookup is checked against it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Origin {
    pub plain_http: bool,
    pub class: Class,
}

impl Origin {
    /// May the lookup go to an address of class `c`? Public addresses, and the registry's own
    /// class (a private registry's storage on the same network), never an unroutable one.
    pub fn allows(&self, c: Class) -> bool {
        c == Class::Public || (c == self.class && c != Class::Unroutable)
    }

    /// May the lookup go to `uri` (a redirect's target, a token realm)? HTTPS, or plain HTTP
    /// from a plain-HTTP registry to a loopback host; a literal address (or `localhost`) of a
    /// class [`Origin::allows`]. A name is checked once resolved, by the connector.
    pub fn check(&self, uri: &Uri, what: &str) -> Result<(), HttpError> {
        let host = uri.host().unwrap_or("");
        let class = Class::of_host(host);
        match uri.scheme_str() {
            Some("https") => {}
            Some("http") if self.plain_http && class == Some(Class::Loopback) => {}
            _ => {
                return Err(HttpError::Refused(format!(
                    "{what} {} refused: only HTTPS is followed",
                    shown(uri)
                )));
            }
        }
        match class {
            Some(c) if !self.allows(c) => Err(HttpError::Refused(format!(
                "{what} {} refused: a {} address, and the registry's is {}",
                shown(uri),
                c.name(),
                self.class.name()
            ))),
            _ => Ok(()),
        }
    }
}

/// A URL for a message: scheme, host and path, no query (a token realm's query may carry
/// anything).
fn shown(uri: &Uri) -> String {
    format!(
        "{}://{}{}",
        uri.scheme_str().unwrap_or(""),
        uri.authority().map_or("", |a| a.as_str()),
        uri.path()
    )
}

/// The resolver of the connector of one origin class: every address a name resolves to must
/// be of a class the origin allows, or the connection is refused before it is made; the
/// connector then connects to those addresses only.
#[derive(Debug, Clone, Copy)]
struct Checked(Origin);

impl tower::Service<Name> for Checked {
    type Response = std::vec::IntoIter<SocketAddr>;
    type Error = std::io::Error;
    type Future = BoxFuture<'static, Result<Self::Response, Self::Error>>;

    fn poll_ready(
        &mut self,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Self::Error>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn call(&mut self, name: Name) -> Self::Future {
        let origin = self.0;
        Box::pin(async move {
            let host = name.as_str().to_string();
            let addrs: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            checked_addresses(&origin, &host, addrs).map(Vec::into_iter)
        })
    }
}

/// `addrs` (a name's resolution) when every one is of a class `origin` allows.
fn checked_addresses(
    origin: &Origin,
    host: &str,
    addrs: Vec<SocketAddr>,
) -> Result<Vec<SocketAddr>, std::io::Error> {
    if let Some(bad) = addrs.iter().find(|a| !origin.allows(Class::of(a.ip()))) {
        return Err(std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            format!(
                "refused: {host} resolves to {} (a {} address, and the registry's is {})",
                bad.ip(),
                Class::of(bad.ip()).name(),
                origin.class.name()
            ),
        ));
    }
    if addrs.is_empty() {
        return Err(std::io::Error::other(format!("{host}: no address")));
    }
    Ok(addrs)
}

type Pool = Client<HttpsConnector<HttpConnector<Checked>>, Empty<Bytes>>;

/// Pooled HTTP/1 clients over rustls (ring, the system's roots) or plain TCP: one per origin
/// (class, scheme), each connector resolving through the check of its origin, so that a
/// pooled connection is never reused across origins that allow different addresses.
#[derive(Clone)]
pub struct Http {
    pools: Arc<Vec<(Origin, Pool)>>,
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
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        // No system roots (a bare container): https fails with a verification error, http works.
        let tls = match hyper_rustls::ConfigBuilderExt::with_native_roots(
            rustls::ClientConfig::builder_with_provider(provider.clone())
                .with_safe_default_protocol_versions()
                .expect("ring supports the default protocol versions"),
        ) {
            Ok(b) => b.with_no_client_auth(),
            Err(_) => rustls::ClientConfig::builder_with_provider(provider)
                .with_safe_default_protocol_versions()
                .expect("ring supports the default protocol versions")
                .with_root_certificates(rustls::RootCertStore::empty())
                .with_no_client_auth(),
        };
        let mut pools = Vec::new();
        for class in [
            Class::Public,
            Class::Loopback,
            Class::LinkLocal,
            Class::Private,
            Class::Unroutable,
        ] {
            for plain_http in [false, true] {
                let origin = Origin { plain_http, class };
                let mut tcp = HttpConnector::new_with_resolver(Checked(origin));
                tcp.set_connect_timeout(Some(limits.connect));
                tcp.enforce_http(false);
                let https = hyper_rustls::HttpsConnectorBuilder::new()
                    .with_tls_config(tls.clone())
                    .https_or_http()
                    .enable_http1()
                    .wrap_connector(tcp);
                let client = Client::builder(TokioExecutor::new())
                    .pool_idle_timeout(Duration::from_secs(30))
                    .build(https);
                pools.push((origin, client));
            }
        }
        Http {
            pools: Arc::new(pools),
            limits,
        }
    }

    /// The origin of a registry's URL: its scheme and the class of its address (a name is
    /// resolved once to tell: a registry whose name resolves to private addresses is a
    /// private registry; the connection itself is checked again by the connector).
    pub async fn origin(&self, url: &str) -> Result<Origin, HttpError> {
        let uri: Uri = url.parse().map_err(|_| HttpError::Url(url.into()))?;
        let plain_http = uri.scheme_str() == Some("http");
        let host = uri.host().ok_or_else(|| HttpError::Url(url.into()))?;
        if let Some(class) = Class::of_host(host) {
            return Ok(Origin { plain_http, class });
        }
        let addrs = tokio::time::timeout(
            self.limits.connect,
            tokio::net::lookup_host((host, uri.port_u16().unwrap_or(443))),
        )
        .await
        .map_err(|_| HttpError::Timeout(self.limits.connect, "name resolution"))?
        .map_err(|e| HttpError::Transport(format!("resolving {host}: {e}")))?;
        // The first address not public names the class (the connector refuses the others).
        let class = addrs
            .map(|a| Class::of(a.ip()))
            .find(|c| *c != Class::Public)
            .unwrap_or(Class::Public);
        Ok(Origin { plain_http, class })
    }

    fn pool(&self, origin: &Origin) -> &Pool {
        &self
            .pools
            .iter()
            .find(|(o, _)| o == origin)
            .expect("a pool for every origin")
            .1
    }

    /// `method url` with `headers`, for a lookup of the registry `origin`; `auth` (an
    /// `Authorization` value) goes to the first host only. Every redirect is checked against
    /// `origin` ([`Origin::check`]; a refused one is an error before any connection to it),
    /// and every name resolved by the connector of `origin`'s class. Redirects are followed
    /// up to the limit; a body beyond the cap is an error. (`url` itself is the caller's to
    /// check: the registry's own URL, or a token realm it checked.)
    pub async fn request(
        &self,
        origin: &Origin,
        method: Method,
        url: &str,
        headers: &[(header::HeaderName, String)],
        auth: Option<&str>,
    ) -> Result<Response, HttpError> {
        let mut uri: Uri = url.parse().map_err(|_| HttpError::Url(url.into()))?;
        let home = uri.authority().cloned();
        let pool = self.pool(origin);
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
            let resp = tokio::time::timeout(self.limits.read, pool.request(req))
                .await
                .map_err(|_| HttpError::Timeout(self.limits.read, "response head"))?
                .map_err(|e| HttpError::Transport(transport_error(&e)))?;
            let status = resp.status();
            if status.is_redirection()
                && let Some(loc) = resp.headers().get(header::LOCATION)
            {
                uri = join(&uri, loc)?;
                origin.check(&uri, "a redirect to")?;
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

    /// Issue 30: the classes of addresses, IPv4 inside IPv6 included.
    #[test]
    fn address_classes() {
        let c = |s: &str| Class::of(s.parse().unwrap());
        for (ip, want) in [
            ("127.0.0.1", Class::Loopback),
            ("127.8.9.10", Class::Loopback),
            ("0.0.0.0", Class::Loopback),
            ("::1", Class::Loopback),
            ("::", Class::Loopback),
            ("169.254.169.254", Class::LinkLocal),
            ("fe80::1", Class::LinkLocal),
            ("febf::1", Class::LinkLocal),
            ("10.0.0.1", Class::Private),
            ("172.16.0.1", Class::Private),
            ("172.31.255.255", Class::Private),
            ("192.168.1.1", Class::Private),
            ("100.100.100.200", Class::Private),
            ("fc00::1", Class::Private),
            ("fd00:ec2::254", Class::Private),
            ("::ffff:169.254.169.254", Class::LinkLocal),
            ("::ffff:127.0.0.1", Class::Loopback),
            ("64:ff9b::a9fe:a9fe", Class::LinkLocal),
            ("224.0.0.1", Class::Unroutable),
            ("255.255.255.255", Class::Unroutable),
            ("ff02::1", Class::Unroutable),
            ("172.32.0.1", Class::Public),
            ("100.128.0.1", Class::Public),
            ("20.1.2.3", Class::Public),
            ("2001:db8::1", Class::Public),
            ("fec0::1", Class::Public),
        ] {
            assert_eq!(c(ip), want, "{ip}");
        }
        assert_eq!(Class::of_host("[::1]"), Some(Class::Loopback));
        assert_eq!(Class::of_host("LocalHost."), Some(Class::Loopback));
        assert_eq!(Class::of_host("a.localhost"), Some(Class::Loopback));
        assert_eq!(Class::of_host("registry.example"), None);
    }

    /// Issue 30: where a registry may send the lookup: HTTPS to public addresses, or to its
    /// own class; plain HTTP only from a plain-HTTP loopback registry to loopback.
    #[test]
    fn what_an_origin_allows() {
        let public = Origin {
            plain_http: false,
            class: Class::Public,
        };
        let loopback = Origin {
            plain_http: true,
            class: Class::Loopback,
        };
        let private = Origin {
            plain_http: false,
            class: Class::Private,
        };
        let ok = |o: &Origin, u: &str| o.check(&u.parse().unwrap(), "a redirect to").is_ok();
        assert!(ok(&public, "https://storage.example/blob"));
        assert!(ok(&public, "https://20.1.2.3/blob"));
        for refused in [
            "http://storage.example/blob",
            "http://169.254.169.254/latest/meta-data/",
            "https://169.254.169.254/latest/meta-data/",
            "https://[fd00:ec2::254]/latest/",
            "https://10.0.0.1/",
            "https://127.0.0.1:5000/",
            "https://localhost/",
            "https://[::ffff:10.1.1.1]/",
            "ftp://storage.example/",
        ] {
            assert!(!ok(&public, refused), "{refused}");
        }
        assert!(ok(&loopback, "http://127.0.0.2:5000/v2/x"));
        assert!(ok(&loopback, "http://localhost:5000/v2/x"));
        assert!(ok(&loopback, "https://storage.example/blob"));
        assert!(!ok(&loopback, "http://169.254.169.254/latest/meta-data/"));
        assert!(!ok(&loopback, "https://10.0.0.1/"));
        assert!(
            !ok(&loopback, "http://storage.example/"),
            "plain HTTP off loopback"
        );
        assert!(ok(&private, "https://10.1.2.3/blob"));
        assert!(!ok(&private, "http://10.1.2.3/blob"));
        assert!(!ok(&private, "https://169.254.169.254/"));
        assert!(!ok(&private, "https://127.0.0.1/"));
        let e = public
            .check(
                &"http://169.254.169.254/a?b=c".parse().unwrap(),
                "a redirect to",
            )
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "a redirect to http://169.254.169.254/a refused: only HTTPS is followed"
        );
    }

    /// A name is checked on every address it resolves to: one address outside the origin's
    /// classes refuses it.
    #[test]
    fn a_resolved_name_is_checked_on_every_address() {
        let public = Origin {
            plain_http: false,
            class: Class::Public,
        };
        let a = |s: &str| -> SocketAddr { s.parse().unwrap() };
        assert!(
            checked_addresses(&public, "h", vec![a("20.1.2.3:0"), a("[2001:db8::1]:0")]).is_ok()
        );
        let e = checked_addresses(&public, "h", vec![a("20.1.2.3:0"), a("169.254.169.254:0")])
            .unwrap_err();
        assert!(
            e.to_string()
                .contains("169.254.169.254 (a link-local address"),
            "{e}"
        );
        assert!(checked_addresses(&public, "h", vec![]).is_err());
    }

    /// The connector refuses a name that resolves to loopback for a public origin before any
    /// connection (`localhost` resolves from the hosts file: no traffic leaves the machine).
    #[tokio::test]
    async fn the_connector_checks_names_after_resolution() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        listener.set_nonblocking(true).unwrap();
        let http = Http::new(Limits::default());
        let public = Origin {
            plain_http: true,
            class: Class::Public,
        };
        let e = http
            .request(
                &public,
                Method::GET,
                &format!("http://localhost:{port}/v2/"),
                &[],
                None,
            )
            .await
            .unwrap_err();
        assert!(
            matches!(&e, HttpError::Transport(t) if t.contains("refused: localhost resolves to")),
            "{e:?}"
        );
        assert!(listener.accept().is_err(), "no connection was made");
        // The same name for a loopback origin connects (and gets this listener's silence).
        let loopback = Origin {
            plain_http: true,
            class: Class::Loopback,
        };
        let http = Http::new(Limits {
            read: Duration::from_millis(300),
            ..Limits::default()
        });
        let _ = http
            .request(
                &loopback,
                Method::GET,
                &format!("http://localhost:{port}/v2/"),
                &[],
                None,
            )
            .await;
        assert!(
            listener.accept().is_ok(),
            "a loopback registry reaches loopback"
        );
    }
}
