//! WIN415: how Windows pods resolve names (issue 19).
//!
//! The Windows DNS resolver treats any name with a dot as fully qualified and never appends the
//! pod's DNS suffixes to it (Kubernetes docs, "DNS for Services and Pods", DNS resolution on
//! Windows nodes; microsoft/Windows-Containers#59; kubernetes/kubernetes#65016): inside a
//! Windows pod `kubernetes` and `kubernetes.default.svc.cluster.local` resolve, `kubernetes.default`
//! and `kubernetes.default.svc` do not.
//!
//! What several rules of the family share.

/// The host names in a string value: URLs (`http://svc.ns:8080/x`), `host:port` and
/// `key=host:port` tokens, and bare names. Lower-case DNS names only (a value in another
/// alphabet is not a Kubernetes Service name).
pub fn hosts(value: &str) -> impl Iterator<Item = &str> {
    value
        .split(|c: char| c.is_whitespace() || matches!(c, ',' | ';' | '"' | '\'' | '(' | ')'))
        .filter_map(host_of)
}

/// The host of one token, if it has the shape of a DNS name.
fn host_of(token: &str) -> Option<&str> {
    let mut t = token;
    // `--server=svc.ns:80`, `DB=svc.ns`.
    if let Some((_, v)) = t.rsplit_once('=') {
        t = v;
    }
    if let Some((_, rest)) = t.split_once("://") {
        t = rest;
    }
    // userinfo, then path and query.
    if let Some((_, rest)) = t.rsplit_once('@') {
        t = rest;
    }
    let t = t.split(['/', '?', '#']).next()?;
    let host = match t.rsplit_once(':') {
        Some((h, port)) if !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit()) => h,
        Some(_) => return None,
        None => t,
    };
    // Every value of a pod goes through here: no allocation.
    let dns = host.split('.').all(|l| {
        !l.is_empty()
            && l.len() <= 63
            && l.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            && !l.starts_with('-')
            && !l.ends_with('-')
    });
    (dns && host.contains('.')).then_some(host)
}

/// A partially qualified Service name: `name.namespace.svc`, or `name.namespace` where the
/// namespace is one the evaluation knows. Anything else with a dot may be an external name
/// (`example.com`, `redis.io`): without a list of every top-level domain, only known
/// namespaces make a two-label name a Service.
pub fn partial_service_name(host: &str, known_namespace: impl Fn(&str) -> bool) -> bool {
    let labels: Vec<&str> = host.split('.').collect();
    match labels.as_slice() {
        [_, ns, "svc"] => !ns.bytes().all(|b| b.is_ascii_digit()),
        [name, ns] => !name.bytes().all(|b| b.is_ascii_digit()) && known_namespace(ns),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(value: &str) -> Vec<&str> {
        hosts(value).collect()
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
    fn partial_names() {
        let ns = |n: &str| n == "default" || n == "cache";
        assert!(partial_service_name("redis.cache.svc", ns));
        assert!(partial_service_name("redis.cache", ns));
        assert!(partial_service_name("kubernetes.default", ns));
        assert!(!partial_service_name("example.com", ns));
        assert!(!partial_service_name("redis.cache.svc.cluster.local", ns));
        assert!(!partial_service_name("10.0.0", ns));
        assert!(!partial_service_name("10.0", ns));
        assert!(!partial_service_name("a.b.c.d", ns));
    }
}
