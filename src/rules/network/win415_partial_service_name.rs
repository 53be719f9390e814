//! WIN415 `partial-service-name`.

use serde_json::Value;

use crate::model::Eval;
use crate::model::meta::{Area, Mutation, Reads, RuleOs};
use crate::model::workload::{Lookup, PodSite, items};
use crate::model::{Finding, RuleMeta, Severity};
use crate::rules::Rule;
use crate::rules::network::common::{Host, Partial, hosts, names_a_host, partial_service_name};

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

A `name.namespace` whose namespace winlint does not know is reported too when its last label is
no public suffix, so that no name on the internet ends in it (`orders.backend`, `grafana.monitoring`:
Mozilla's Public Suffix List, compiled in), and the value says it is a host: a URL, a port,
`user@`, or a variable, ConfigMap key or `key=` named like a host (`ORDERS_HOST`, `ApiUrl`,
`--server=`, `Server=`). Real domains stay silent: `api.example.com`, `redis.io`, the special-use
and private top-level names (`.local`, `.internal`, `.corp`, `.lan`, `.home`, `.test`). A dotted
word the value does not call a host (`config.yml`, `cmd.exe`, `dbo.orders`) is not read as one,
and a namespace that is also a top-level domain (`web`, `shop`, `dev`) is found only when it is
known.

The values of ConfigMaps the pod reads are checked too when the ConfigMap is in the linted
input (`env[].valueFrom.configMapKeyRef`, `envFrom[].configMapRef` (single-line values of keys without a
dot: a file imported as a variable is not read as a host), and `configMap` volumes or projected sources that
a container mounts, restricted to their `items`). Such a finding points
at the pod's reference and names the ConfigMap and key: the same ConfigMap is right for the
Linux pods that read it. The webhook does not read ConfigMaps, so it checks the pod's own
values only.

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
    reads: Reads::of(&[Area::Containers, Area::Volumes, Area::Labels]),
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
    for Used {
        pointer,
        value,
        what,
        config_map,
        named_host,
    } in values(site, eval, |v, named| partial(v, named, &known).is_some())
    {
        let Some((host, why)) = partial(value, named_host, &known) else {
            continue;
        };
        let name = host.split('.').next().unwrap_or(host);
        let ns = host.split('.').nth(1).unwrap_or("");
        let place = config_map
            .map(|cm| format!(" (change it in ConfigMap {cm})"))
            .unwrap_or_default();
        // A namespace winlint does not know: say why the name is read as one.
        let reading = match why {
            Partial::NoPublicSuffix => format!(
                " ({ns:?} is no public suffix, so the name is Service {name} in namespace {ns})"
            ),
            Partial::Svc | Partial::KnownNamespace => String::new(),
        };
        out.push(Finding::new(
            &WIN415,
            pointer,
            format!(
                "{what} names {host:?}, a partially qualified Service name{reading}: Windows \
                 treats any name with a dot as fully qualified and does not append the DNS \
                 search suffixes, so it does not resolve; use {name}.{ns}.svc.cluster.local \
                 (with the cluster's domain), or {name:?} from the same namespace{place}"
            ),
        ));
    }
    out
}

/// The first partially qualified Service name in `value`, and why it is one. `named_host`: the
/// variable or ConfigMap key holding the value says it is a host (`ORDERS_HOST`).
fn partial<'v>(
    value: &'v str,
    named_host: bool,
    known: &impl Fn(&str) -> bool,
) -> Option<(&'v str, Partial)> {
    hosts(value).find_map(|h| {
        let h = Host {
            addressed: h.addressed || named_host,
            ..h
        };
        partial_service_name(h, known).map(|why| (h.name, why))
    })
}

/// One string the pod uses, where the finding points and how the message names it.
struct Used<'a> {
    pointer: String,
    value: &'a str,
    what: String,
    /// `namespace/name` of the ConfigMap the value comes from.
    config_map: Option<String>,
    /// The variable or key holding the value says it is a host ([`names_a_host`]).
    named_host: bool,
}

/// The strings the pod's containers use: `env` values, `command` and `args`, and the values of
/// ConfigMaps in the context that the pod reads (`env[].valueFrom.configMapKeyRef`,
/// `envFrom[].configMapRef`, `configMap` volumes and `projected` ConfigMap sources that a
/// container mounts). A ConfigMap value's finding points at the pod's reference to it: the
/// ConfigMap may be in another file, and is only wrong for the Windows pods that read it.
/// Only the values `wanted` accepts are described: every value of every pod passes here, and
/// the pointer and wording are for the rare one that is reported.
fn values<'a>(
    site: &PodSite<'a>,
    eval: &'a Eval,
    wanted: impl Fn(&str, bool) -> bool,
) -> Vec<Used<'a>> {
    let ns = site
        .namespace
        .or_else(|| site.meta.get("namespace").and_then(Value::as_str))
        .filter(|n| !n.is_empty())
        .unwrap_or("default");
    let data = |name: &str| eval.context.config_map_data.get(&(ns.into(), name.into()));
    let mut out = Vec::new();
    for c in site.containers() {
        for (i, e) in items(c.value, "env").enumerate() {
            let env = e.get("name").and_then(Value::as_str).unwrap_or("");
            let named = names_a_host(env);
            if let Some(v) = e.get("value").and_then(Value::as_str)
                && wanted(v, named)
            {
                out.push(Used {
                    pointer: site.container_ptr(&c, &format!("/env/{i}/value")),
                    value: v,
                    what: format!("{} env {env}", c.label()),
                    config_map: None,
                    named_host: named,
                });
            }
            let r = e.lookup("/valueFrom/configMapKeyRef");
            let name = r.and_then(|r| r.get("name")).and_then(Value::as_str);
            let key = r.and_then(|r| r.get("key")).and_then(Value::as_str);
            if let (Some(name), Some(key)) = (name, key)
                && let Some(v) = data(name).and_then(|d| d.get(key))
                && wanted(v, named || names_a_host(key))
            {
                out.push(Used {
                    pointer: site.container_ptr(&c, &format!("/env/{i}/valueFrom/configMapKeyRef")),
                    value: v,
                    what: format!(
                        "{} env {env} reads key {key:?} of ConfigMap {ns}/{name}, which",
                        c.label()
                    ),
                    config_map: Some(format!("{ns}/{name}")),
                    named_host: named || names_a_host(key),
                });
            }
        }
        for (i, e) in items(c.value, "envFrom").enumerate() {
            let Some(name) = e.lookup("/configMapRef/name").and_then(Value::as_str) else {
                continue;
            };
            // Every key becomes a variable, but a multi-line value or a key with a dot
            // (`nginx.conf`) is a file the ConfigMap serves to volumes: no program reads its
            // host from such a variable (no shell can even name it).
            for (key, v) in data(name).into_iter().flatten() {
                let named = names_a_host(key);
                if v.trim_end().contains('\n') || key.contains('.') || !wanted(v, named) {
                    continue;
                }
                out.push(Used {
                    pointer: site.container_ptr(&c, &format!("/envFrom/{i}/configMapRef")),
                    value: v,
                    what: format!(
                        "{} imports ConfigMap {ns}/{name}, whose key {key:?}",
                        c.label()
                    ),
                    config_map: Some(format!("{ns}/{name}")),
                    named_host: named,
                });
            }
        }
        for field in ["command", "args"] {
            for (i, v) in items(c.value, field).enumerate() {
                if let Some(v) = v.as_str()
                    && wanted(v, false)
                {
                    out.push(Used {
                        pointer: site.container_ptr(&c, &format!("/{field}/{i}")),
                        value: v,
                        what: format!("{} {field}[{i}]", c.label()),
                        config_map: None,
                        named_host: false,
                    });
                }
            }
        }
    }
    // Volumes: only those a container mounts (an unmounted volume's files are never read).
    let mounted: std::collections::HashSet<&str> = site
        .containers()
        .flat_map(|c| items(c.value, "volumeMounts"))
        .filter_map(|m| m.get("name").and_then(Value::as_str))
        .collect();
    for (i, v) in site.volumes() {
        let volume = v.get("name").and_then(Value::as_str).unwrap_or("");
        let mut sources: Vec<(String, &Value)> = Vec::new();
        if let Some(cm) = v.get("configMap") {
            sources.push((format!("/volumes/{i}/configMap"), cm));
        }
        for (j, s) in v
            .lookup("/projected/sources")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            if let Some(cm) = s.get("configMap") {
                sources.push((format!("/volumes/{i}/projected/sources/{j}/configMap"), cm));
            }
        }
        if sources.is_empty() || !mounted.contains(volume) {
            continue;
        }
        for (rel, cm) in sources {
            let Some(name) = cm.get("name").and_then(Value::as_str) else {
                continue;
            };
            let Some(d) = data(name) else { continue };
            // `items` projects only the keys it lists.
            let items: Option<Vec<&str>> = cm.get("items").and_then(Value::as_array).map(|a| {
                a.iter()
                    .filter_map(|it| it.get("key").and_then(Value::as_str))
                    .collect()
            });
            for (key, value) in d {
                // A mounted file: its key is a file name, only its text can say "host".
                if items.as_ref().is_some_and(|k| !k.contains(&key.as_str()))
                    || !wanted(value, false)
                {
                    continue;
                }
                out.push(Used {
                    pointer: site.ptr(&rel),
                    value,
                    what: format!(
                        "volume {volume:?} mounts ConfigMap {ns}/{name}, whose key {key:?}"
                    ),
                    config_map: Some(format!("{ns}/{name}")),
                    named_host: false,
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    use crate::rules::testutil::{assert_says, cfg, hits, only, set, winok};

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
        assert_says(f, "redis.cache.svc.cluster.local");
    }

    #[test]
    fn name_dot_namespace_for_known_namespaces() {
        assert_eq!(
            hits(&env("https://kubernetes.default:443"), &cfg(), "WIN415").len(),
            1
        );
        assert!(hits(&env("https://example.com"), &cfg(), "WIN415").is_empty());
        // `shop` is a top-level domain: only a known namespace makes it one.
        assert!(hits(&env("http://redis.shop:6379"), &cfg(), "WIN415").is_empty());
        // The pod's own namespace is known.
        let pod = set(
            env("http://redis.shop:6379"),
            "/metadata/namespace",
            json!("shop"),
        );
        assert_eq!(hits(&pod, &cfg(), "WIN415").len(), 1);
    }

    fn named_env(name: &str, value: &str) -> Value {
        set(
            winok(),
            &format!("{C0}/env"),
            json!([{"name": name, "value": value}]),
        )
    }

    #[test]
    fn no_public_suffix_is_a_namespace_where_the_value_is_a_host() {
        // Issue 26: `backend` ends no domain on the internet.
        let pod = env("http://orders.backend:8080/api");
        let f = &only(&pod, &cfg(), "WIN415")[0];
        assert_says(f, "orders.backend.svc.cluster.local");
        assert_says(f, "no public suffix");
        assert_eq!(
            hits(
                &named_env("ORDERS_HOST", "orders.backend"),
                &cfg(),
                "WIN415"
            )
            .len(),
            1
        );
        // Not said to be a host: a bare word pair, a file name.
        for (name, value) in [
            ("TABLE", "dbo.orders"),
            ("CONFIG", "config.yml"),
            ("SHELL", "cmd.exe"),
        ] {
            assert!(
                hits(&named_env(name, value), &cfg(), "WIN415").is_empty(),
                "{value}"
            );
        }
        // Real domains.
        for v in [
            "https://api.example.com",
            "http://nas.local",
            "http://foo.internal:80",
            "Server=sql01.corp;Database=Orders",
            "https://login.microsoftonline.com",
        ] {
            assert!(
                hits(&named_env("DB_HOST", v), &cfg(), "WIN415").is_empty(),
                "{v}"
            );
        }
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

    fn with_config_map(pod: Value, data: Value) -> Vec<(Severity, String)> {
        let mut cx = crate::model::Context::default();
        cx.add(&json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "settings", "namespace": "shop"}, "data": data}));
        let pod = set(pod, "/metadata/namespace", json!("shop"));
        crate::engine::lint_object(&pod, &cfg(), &cx, crate::model::Operation::Lint)
            .findings
            .into_iter()
            .filter(|f| f.rule.id == "WIN415")
            .map(|f| (f.severity, f.pointer))
            .collect()
    }

    #[test]
    fn config_map_values_the_pod_reads() {
        let data = json!({"CACHE": "redis.cache.svc:6379", "OK": "redis",
            "appsettings.json": "{\"Api\": \"http://api.prod.svc/v1\"}", "API": "api.prod.svc"});
        let key_ref = set(
            winok(),
            &format!("{C0}/env"),
            json!([{"name": "URL", "valueFrom": {"configMapKeyRef": {"name": "settings", "key": "CACHE"}}},
                   {"name": "FINE", "valueFrom": {"configMapKeyRef": {"name": "settings", "key": "OK"}}}]),
        );
        assert_eq!(
            with_config_map(key_ref, data.clone()),
            [(
                Severity::Warning,
                format!("{C0}/env/0/valueFrom/configMapKeyRef")
            )]
        );
        let env_from = set(
            winok(),
            &format!("{C0}/envFrom"),
            json!([{"configMapRef": {"name": "settings"}}]),
        );
        // Two keys name partial names: one finding each, at the reference.
        assert_eq!(
            with_config_map(env_from, data.clone()),
            [
                (Severity::Warning, format!("{C0}/envFrom/0/configMapRef")),
                (Severity::Warning, format!("{C0}/envFrom/0/configMapRef"))
            ]
        );
        let volume = set(
            set(
                winok(),
                "/spec/volumes",
                json!([{"name": "cfg", "configMap": {"name": "settings",
                    "items": [{"key": "appsettings.json", "path": "appsettings.json"}]}}]),
            ),
            &format!("{C0}/volumeMounts"),
            json!([{"name": "cfg", "mountPath": "C:\\app\\config"}]),
        );
        let found = with_config_map(volume.clone(), data.clone());
        assert_eq!(
            found,
            [(Severity::Warning, "/spec/volumes/0/configMap".to_string())]
        );
        // Not mounted: never read.
        let unmounted = set(volume, &format!("{C0}/volumeMounts"), json!([]));
        assert!(with_config_map(unmounted, data.clone()).is_empty());
        // Another namespace's ConfigMap of the same name is not this pod's.
        let mut cx = crate::model::Context::default();
        cx.add(&json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "settings", "namespace": "other"}, "data": data}));
        let pod = set(
            winok(),
            &format!("{C0}/envFrom"),
            json!([{"configMapRef": {"name": "settings"}}]),
        );
        assert!(
            crate::engine::lint_object(&pod, &cfg(), &cx, crate::model::Operation::Lint)
                .findings
                .iter()
                .all(|f| f.rule.id != "WIN415")
        );
    }

    #[test]
    fn the_message_names_the_config_map_and_key() {
        let mut cx = crate::model::Context::default();
        cx.add(&json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "settings"}, "data": {"CACHE": "redis.cache.svc:6379"}}));
        let pod = set(
            winok(),
            &format!("{C0}/envFrom"),
            json!([{"configMapRef": {"name": "settings"}}]),
        );
        let f = crate::engine::lint_object(&pod, &cfg(), &cx, crate::model::Operation::Lint)
            .findings
            .into_iter()
            .find(|f| f.rule.id == "WIN415")
            .expect("a finding");
        for part in [
            "default/settings",
            "\"CACHE\"",
            "redis.cache.svc.cluster.local",
        ] {
            assert!(f.message.contains(part), "{part}: {}", f.message);
        }
    }

    #[test]
    fn linux_pods_resolve_through_the_search_list() {
        let pod = json!({"apiVersion":"v1","kind":"Pod","metadata":{"name":"l"},"spec":{
            "containers":[{"name":"a","image":"nginx:1.25","env":[{"name":"U","value":"http://a.b.svc"}]}]}});
        assert!(hits(&pod, &cfg(), "WIN415").is_empty());
    }
}
