//! WIN415: how Windows pods resolve names (issue 19).
//!
//! The Windows DNS resolver treats any name with a dot as fully qualified and never appends the
//! pod's DNS suffixes to it (Kubernetes docs, "DNS for Services and Pods", DNS resolution on
//! Windows nodes; microsoft/Windows-Containers#59; kubernetes/kubernetes#65016): inside a
//! Windows pod `kubernetes` and `kubernetes.default.svc.cluster.local` resolve, `kubernetes.default`
//! and `kubernetes.default.svc` do not.
//!
//! What several rules of the family share.

/// One host name in a value, and whether the value itself says it is a host: a URL
/// (`http://`), a port, userinfo (`user@`), or a `key=` whose key names a host (`--server=`,
/// `Server=` of a connection string, `DB_HOST=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Host<'v> {
    pub name: &'v str,
    pub addressed: bool,
}

/// The host names in a string value: URLs (`http://svc.ns:8080/x`), `host:port` and
/// `key=host:port` tokens, and bare names. Lower-case DNS names only (a value in another
/// alphabet is not a Kubernetes Service name).
pub fn hosts(value: &str) -> impl Iterator<Item = Host<'_>> {
    value
        .split(|c: char| c.is_whitespace() || matches!(c, ',' | ';' | '"' | '\'' | '(' | ')'))
        .filter_map(host_of)
}

/// The host of one token, if it has the shape of a DNS name.
fn host_of(token: &str) -> Option<Host<'_>> {
    let mut t = token;
    let mut addressed = false;
    // `--server=svc.ns:80`, `DB=svc.ns`.
    if let Some((key, v)) = t.rsplit_once('=') {
        addressed |= names_a_host(key);
        t = v;
    }
    if let Some((scheme, rest)) = t.split_once("://") {
        // `C://oms.crt` is a Windows path (a drive letter), not a URL.
        if scheme.len() < 2 {
            return None;
        }
        addressed = true;
        t = rest;
    }
    // userinfo, then path and query.
    if let Some((_, rest)) = t.rsplit_once('@') {
        addressed = true;
        t = rest;
    }
    let t = t.split(['/', '?', '#']).next()?;
    let name = match t.rsplit_once(':') {
        Some((h, port)) if !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit()) => {
            addressed = true;
            h
        }
        Some(_) => return None,
        None => t,
    };
    // Every value of a pod goes through here: no allocation.
    let dns = name.split('.').all(|l| {
        !l.is_empty()
            && l.len() <= 63
            && l.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            && !l.starts_with('-')
            && !l.ends_with('-')
    });
    (dns && name.contains('.')).then_some(Host { name, addressed })
}

/// Whether the name of a variable, a ConfigMap key or a `key=` says its value is a host
/// (`ORDERS_HOST`, `ApiUrl`, `--server`, `Server` of a connection string).
pub fn names_a_host(key: &str) -> bool {
    const WORDS: &[&str] = &[
        "host", "url", "uri", "addr", "server", "endpoint", "service", "svc",
    ];
    WORDS.iter().any(|w| {
        key.as_bytes()
            .windows(w.len())
            .any(|win| win.eq_ignore_ascii_case(w.as_bytes()))
    })
}

/// Why a host name is a partially qualified Service name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Partial {
    /// `name.namespace.svc`.
    Svc,
    /// `name.namespace` where the namespace is one the evaluation knows.
    KnownNamespace,
    /// `name.namespace` where `namespace` is no public suffix: no name on the internet ends in
    /// it, so it can only be resolved by the cluster's search list.
    NoPublicSuffix,
}

/// Top-level names that are no public suffix but are real domains all the same: special-use
/// names (RFC 6761 `test`, `localhost`, `invalid`, `example`; RFC 6762 `local`, mDNS and many
/// Active Directory forests; ICANN's `internal` for private use, 2024) and the private names
/// ICANN's name-collision studies found in use (SAC 062: `home`, `corp`, `mail`; `lan`,
/// `intranet`, `private`, `localdomain`). A Windows pod names `sql01.corp` to reach a host of
/// the company's own DNS, which its resolver answers without any search list.
const PRIVATE_TOP_LEVEL: &[&str] = &[
    "local",
    "localhost",
    "localdomain",
    "internal",
    "test",
    "example",
    "invalid",
    "home",
    "corp",
    "mail",
    "lan",
    "intranet",
    "private",
];

/// A partially qualified Service name: `name.namespace.svc`; `name.namespace` where the
/// namespace is one the evaluation knows; or, where the value says it is a host (`addressed`:
/// a URL, a port, a host-named key), `name.namespace` whose last label is no public suffix
/// (Mozilla's Public Suffix List, the `psl` crate) nor a private top-level name: `orders.backend`
/// is a Service, `api.example.com` and `redis.io` are domains, `sql01.corp` is the company's.
/// A namespace that is also a top-level domain (`web`, `shop`, `dev`) is found only when it is
/// known.
pub fn partial_service_name(host: Host, known_namespace: impl Fn(&str) -> bool) -> Option<Partial> {
    let mut labels = host.name.split('.');
    let (Some(name), Some(ns)) = (labels.next(), labels.next()) else {
        return None;
    };
    let digits = |l: &str| l.bytes().all(|b| b.is_ascii_digit());
    match (labels.next(), labels.next()) {
        (Some("svc"), None) => (!digits(ns)).then_some(Partial::Svc),
        (None, None) if digits(name) => None,
        (None, None) if known_namespace(ns) => Some(Partial::KnownNamespace),
        (None, None) => {
            // A Service name is a DNS-1035 label: it starts with a letter.
            let service = name.starts_with(|c: char| c.is_ascii_lowercase());
            let word = ns.bytes().any(|b| b.is_ascii_lowercase());
            let private = PRIVATE_TOP_LEVEL.contains(&ns);
            let public = psl::suffix(host.name.as_bytes()).is_some_and(|s| s.is_known());
            (host.addressed && service && word && !private && !public)
                .then_some(Partial::NoPublicSuffix)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(value: &str) -> Vec<&str> {
        hosts(value).map(|h| h.name).collect()
    }

    fn host(value: &str) -> Host<'_> {
        hosts(value).next().expect("a host")
    }

    #[test]
    fn hosts_of_values() {
        assert_eq!(all("http://redis.cache:6379/0"), ["redis.cache"]);
        assert_eq!(all("--server=api.prod.svc:443 --v=2"), ["api.prod.svc"]);
        assert_eq!(all("amqp://user:pw@rabbit.mq.svc:5672"), ["rabbit.mq.svc"]);
        assert_eq!(
            all("db.data.svc.cluster.local"),
            ["db.data.svc.cluster.local"]
        );
        assert!(all("C:\\app\\app.exe").is_empty());
        assert!(all("localhost:8080").is_empty());
        assert!(all("Server=SQL01.corp;Database=x").is_empty());
        assert_eq!(all("10.0.0.1:80"), ["10.0.0.1"]);
    }

    #[test]
    fn what_says_a_value_is_a_host() {
        for v in [
            "http://orders.backend/api",
            "orders.backend:8080",
            "amqp://u@orders.backend",
            "--server=orders.backend",
            "Server=orders.backend;Database=x",
            "--db-host=orders.backend",
        ] {
            assert!(host(v).addressed, "{v}");
        }
        for v in [
            "orders.backend",
            "--config=config.yml",
            "cmd.exe",
            "table=dbo.users",
        ] {
            assert!(!host(v).addressed, "{v}");
        }
        // A drive letter is no scheme (testdata/realworld oms-agent: `C://oms.crt`).
        assert!(all("C://oms.crt").is_empty());
        assert!(all("c://oms.key").is_empty());
        assert!(names_a_host("ORDERS_HOST"));
        assert!(names_a_host("ConnectionStrings__ApiUrl"));
        assert!(!names_a_host("LOG_LEVEL"));
    }

    #[test]
    fn partial_names() {
        let ns = |n: &str| n == "default" || n == "cache";
        let p = |v: &str| partial_service_name(host(v), ns);
        assert_eq!(p("redis.cache.svc"), Some(Partial::Svc));
        assert_eq!(p("redis.cache"), Some(Partial::KnownNamespace));
        assert_eq!(p("kubernetes.default"), Some(Partial::KnownNamespace));
        assert_eq!(p("redis.cache.svc.cluster.local"), None);
        assert_eq!(p("10.0.0"), None);
        assert_eq!(p("10.0"), None);
        assert_eq!(p("a.b.c.d"), None);
    }

    #[test]
    fn no_public_suffix_makes_a_namespace() {
        let none = |_: &str| false;
        let p = |v: &str| partial_service_name(host(v), none);
        // `backend`, `monitoring`, `istio-system` end no domain on the internet.
        for v in [
            "http://orders.backend:8080",
            "orders.backend:80",
            "https://grafana.monitoring/api",
            "--server=istiod.istio-system",
        ] {
            assert_eq!(p(v), Some(Partial::NoPublicSuffix), "{v}");
        }
        // Real domains: public suffixes (also wildcard rules: `*.ck`), special-use and private
        // top-level names.
        for v in [
            "http://example.com",
            "https://redis.io",
            "http://foo.ck",
            "http://api.dev:8443",
            "http://nas.local",
            "http://foo.internal",
            "Server=sql01.corp;Database=x",
            "http://printer.lan",
            "http://a.test",
        ] {
            assert_eq!(p(v), None, "{v}");
        }
        // Not said to be a host: file names, field paths, tables.
        for v in [
            "cmd.exe",
            "--config=config.yml",
            "fluent-bit.conf",
            "dbo.users",
        ] {
            assert_eq!(p(v), None, "{v}");
        }
        // A Service name starts with a letter; a namespace of digits is a version.
        assert_eq!(p("http://1st.backend"), None);
        assert_eq!(p("http://v1.2:80"), None);
    }
}
