//! WIN415 `partial-service-name`.

use serde_json::Value;

use crate::model::Eval;
use crate::model::meta::{Mutation, RuleOs};
use crate::model::workload::{PodSite, list};
use crate::model::{Finding, RuleMeta, Severity};
use crate::rules::Rule;
use crate::rules::network::common::{hosts, partial_service_name};

/// WIN415 in the registry.
pub const RULE: Rule = Rule {
    meta: &WIN415,
    check: partial_service_name_rule,
};

pub static WIN415: RuleMeta = RuleMeta {
    id: "WIN415",
    name: "partial-service-name",
    severity: Severity::Warning,
    summary: "a Windows pod names a Service by a partially qualified name (svc.namespace, svc.namespace.svc), which Windows does not resolve",
    docs: r#"## What it does
Finds, in the `env` values, `command` and `args` of Windows pods, host names of the form
`name.namespace.svc`, and `name.namespace` where `namespace` is a namespace winlint knows (one in
the input or the cluster, the pod's own, `default`, `kube-system`, `kube-public`,
`kube-node-lease`), alone, in URLs or as `host:port`.

## Why is this bad?
The Windows DNS resolver treats every name with a dot as fully qualified and never appends the
pod's DNS suffixes to it. In a Windows pod `redis` (same namespace) and
`redis.cache.svc.cluster.local` resolve, but `redis.cache` and `redis.cache.svc`, which work
from Linux pods through the search list, do not: the application fails to connect.

## Example
```yaml
spec:
  os: {name: windows}
  containers:
  - name: app
    image: contoso/app:1.0-ltsc2022
    env:
    - name: CACHE_URL
      value: redis://redis.cache.svc:6379
```

## Fix
Use the fully qualified name, `redis.cache.svc.cluster.local` (with the cluster's domain), or the
bare Service name from a pod of the same namespace.
"#,
    fix: None,
    source: "Kubernetes docs (DNS for Services and Pods, Windows), microsoft/Windows-Containers#59, kubernetes/kubernetes#65016",
    applies: "all",
    os: RuleOs::Windows,
    default_on: true,
    mutation: Mutation::DEFAULT,
};

/// Namespaces every cluster has.
const BUILT_IN_NAMESPACES: &[&str] = &["default", "kube-system", "kube-public", "kube-node-lease"];

pub(crate) fn partial_service_name_rule(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    let known = |ns: &str| {
        BUILT_IN_NAMESPACES.contains(&ns)
            || site.namespace == Some(ns)
            || eval.context.namespaces.contains_key(ns)
    };
    let mut out = Vec::new();
    for c in site.containers() {
        let mut values: Vec<(String, &str, String)> = Vec::new();
        for (i, e) in list(c.value, "env").iter().enumerate() {
            if let Some(v) = e.get("value").and_then(Value::as_str) {
                let name = e.get("name").and_then(Value::as_str).unwrap_or("");
                values.push((format!("/env/{i}/value"), v, format!("env {name}")));
            }
        }
        for field in ["command", "args"] {
            for (i, v) in list(c.value, field).iter().enumerate() {
                if let Some(v) = v.as_str() {
                    values.push((format!("/{field}/{i}"), v, format!("{field}[{i}]")));
                }
            }
        }
        for (rel, value, what) in values {
            let Some(host) = hosts(value)
                .into_iter()
                .find(|h| partial_service_name(h, known))
            else {
                continue;
            };
            let name = host.split('.').next().unwrap_or(host);
            let ns = host.split('.').nth(1).unwrap_or("");
            out.push(Finding::new(
                &WIN415,
                site.container_ptr(&c, &rel),
                format!(
                    "{} {what} names {host:?}, a partially qualified Service name: Windows treats \
                     any name with a dot as fully qualified and does not append the DNS search \
                     suffixes, so it does not resolve; use {name}.{ns}.svc.cluster.local (with \
                     the cluster's domain), or {name:?} from the same namespace",
                    c.label()
                ),
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    use crate::rules::testutil::{cfg, hits, only, set, winok};

    const C0: &str = "/spec/containers/0";

    fn env(value: &str) -> serde_json::Value {
        set(
            winok(),
            &format!("{C0}/env"),
            json!([{"name": "URL", "value": value}]),
        )
    }

    #[test]
    fn svc_suffix_without_cluster_domain() {
        let pod = env("redis://redis.cache.svc:6379");
        assert_eq!(
            hits(&pod, &cfg(), "WIN415"),
            [(Severity::Warning, format!("{C0}/env/0/value"))]
        );
        let f = &only(&pod, &cfg(), "WIN415")[0];
        assert!(
            f.message.contains("redis.cache.svc.cluster.local"),
            "{}",
            f.message
        );
    }

    #[test]
    fn name_dot_namespace_only_for_known_namespaces() {
        assert_eq!(
            hits(&env("https://kubernetes.default:443"), &cfg(), "WIN415").len(),
            1
        );
        // An unknown second label may be a top-level domain.
        assert!(hits(&env("http://redis.cache:6379"), &cfg(), "WIN415").is_empty());
        assert!(hits(&env("https://example.com"), &cfg(), "WIN415").is_empty());
        // The pod's own namespace is known.
        let pod = set(
            env("http://redis.cache:6379"),
            "/metadata/namespace",
            json!("cache"),
        );
        assert_eq!(hits(&pod, &cfg(), "WIN415").len(), 1);
    }

    #[test]
    fn fully_qualified_bare_and_addresses_are_fine() {
        for v in [
            "redis.cache.svc.cluster.local:6379",
            "redis",
            "localhost:8080",
            "10.0.0.10:53",
            "C:\\data\\cache",
        ] {
            assert!(hits(&env(v), &cfg(), "WIN415").is_empty(), "{v}");
        }
    }

    #[test]
    fn args_and_command() {
        let pod = set(
            winok(),
            &format!("{C0}/args"),
            json!(["--api=api.prod.svc:443"]),
        );
        assert_eq!(
            hits(&pod, &cfg(), "WIN415"),
            [(Severity::Warning, format!("{C0}/args/0"))]
        );
    }

    #[test]
    fn linux_pods_resolve_through_the_search_list() {
        let pod = json!({"apiVersion":"v1","kind":"Pod","metadata":{"name":"l"},"spec":{
            "containers":[{"name":"a","image":"nginx:1.25","env":[{"name":"U","value":"http://a.b.svc"}]}]}});
        assert!(hits(&pod, &cfg(), "WIN415").is_empty());
    }
}
