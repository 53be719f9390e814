//! WIN404 `envfrom-prefix-or-keys`.

use crate::model::Eval;
use crate::model::meta::{Area, Mutation, Reads, RuleOs};
use crate::model::workload::{Lookup, PodSite, items};
use crate::model::{Finding, RuleMeta, Severity};
use crate::rules::Rule;
use crate::rules::env::common::EnvRegime;
use crate::rules::env::common::gate_hint;
use crate::rules::env::common::is_relaxed_env_name;
use serde_json::Value;

/// WIN404 in the registry.
pub const RULE: Rule = Rule {
    meta: &WIN404,
    check: envfrom_prefix_or_keys,
};

/// The pod's namespace for context lookups (ConfigMaps/Secrets): its own, else `default`.
pub(crate) fn namespace<'a>(site: &PodSite<'a>) -> &'a str {
    site.namespace
        .or_else(|| site.meta.get("namespace").and_then(Value::as_str))
        .filter(|n| !n.is_empty())
        .unwrap_or("default")
}

pub static WIN404: RuleMeta = RuleMeta {
    id: "WIN404",
    name: "envfrom-prefix-or-keys",
    severity: Severity::Error,
    summary: "envFrom prefix the API server rejects, or ConfigMap/Secret keys the kubelet will skip",
    docs: r#"## What it does
Checks `envFrom[].prefix` of every container against the target API server's env var name rule
(as WIN403): an invalid prefix is an **error**. When the referenced ConfigMap or Secret is known
(same CLI input, or the webhook's cluster view; namespace of the pod, else `default`), reports as
a **warning** the keys that, with the prefix, are not valid env var names.

## Why is this bad?
An invalid prefix makes the API server reject the pod. Invalid keys are worse: the kubelet
silently skips them (event `InvalidEnvironmentVariableNames`) and the application starts without
the setting.

## Example
```yaml
envFrom:
- prefix: "App:"
  configMapRef: {name: cfg}
```

## Fix
Use a prefix such as `App__` (.NET maps `__` to `:`), and rename the offending keys.

## Severity
`error` for a prefix the API server rejects; `warning` for keys of a known ConfigMap or Secret
that the kubelet skips (the pod is admitted and starts without them).
"#,
    fix: None,
    source: "VAL, KEP4369, kubelet",
    applies: "as WIN403",
    os: RuleOs::Windows,
    default_on: true,
    reads: Reads::of(&[Area::Containers, Area::Labels]),
    mutation: Mutation::DEFAULT,
};

pub(crate) fn envfrom_prefix_or_keys(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    let regime = EnvRegime::of(eval.target);
    let k = eval.target.kubernetes;
    let ns = namespace(site);
    let mut out = Vec::new();
    for c in site.containers() {
        for (j, ef) in items(c.value, "envFrom").enumerate() {
            let prefix = ef.get("prefix").and_then(Value::as_str).unwrap_or("");
            if !prefix.is_empty() && !regime.accepts(prefix) {
                let hint = if prefix.contains(':') {
                    format!(
                        "; use {:?} (.NET configuration reads `__` as `:`)",
                        prefix.replace(':', "__")
                    )
                } else {
                    String::new()
                };
                out.push(Finding::new(
                    &WIN404,
                    site.container_ptr(&c, &format!("/envFrom/{j}/prefix")),
                    format!(
                        "{} envFrom prefix {prefix:?} is rejected by the Kubernetes {k} API server ({}){}{hint}",
                        c.label(),
                        regime.rejection(
                            &crate::model::pod::dotted(&site.container_ptr(&c, &format!("/envFrom/{j}/prefix"))),
                            prefix
                        ),
                        if is_relaxed_env_name(prefix) { gate_hint(eval.target) } else { String::new() }
                    ),
                ));
                continue;
            }
            for (field, what) in [("configMapRef", "ConfigMap"), ("secretRef", "Secret")] {
                let Some(name) = ef.lookup(&format!("/{field}/name")).and_then(Value::as_str)
                else {
                    continue;
                };
                let store = if field == "configMapRef" {
                    &eval.context.config_maps
                } else {
                    &eval.context.secrets
                };
                let Some(keys) = store.get(&(ns.to_string(), name.to_string())) else {
                    continue;
                };
                let bad: Vec<String> = keys
                    .iter()
                    .map(|key| format!("{prefix}{key}"))
                    .filter(|n| !regime.accepts(n))
                    .collect();
                if bad.is_empty() {
                    continue;
                }
                out.push(
                    Finding::new(
                        &WIN404,
                        site.container_ptr(&c, &format!("/envFrom/{j}/{field}")),
                        format!(
                            "{} imports {what} {ns}/{name}, but {} {} not valid env var names on Kubernetes {k} and the kubelet skips {} (event InvalidEnvironmentVariableNames): {}. Rename the keys{}",
                            c.label(),
                            bad.len(),
                            if bad.len() == 1 { "is" } else { "are" },
                            if bad.len() == 1 { "it" } else { "them" },
                            bad.iter().map(|b| format!("{b:?}")).collect::<Vec<_>>().join(", "),
                            if prefix.is_empty() { "" } else { " or the prefix" }
                        ),
                    )
                    .severity(Severity::Warning),
                );
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use serde_json::json;

    use crate::engine::lint_object;
    use crate::model::{Context, Operation};
    use crate::rules::env::common::tests::OWN;
    use crate::rules::testutil::{at, cfg, hit, hits, ids_in, set, winok};

    #[test]
    fn t31_envfrom_prefix() {
        let pod = set(
            winok(),
            "/spec/containers/0/envFrom",
            json!([{"prefix":"App:","configMapRef":{"name":"cfg"}}]),
        );
        assert_eq!(ids_in(&pod, &cfg(), OWN), vec!["WIN404"]);
        assert_eq!(
            hits(&pod, &cfg(), "WIN404"),
            hit(Severity::Error, "/spec/containers/0/envFrom/0/prefix")
        );
        // Accepted by relaxed validation.
        assert!(hits(&pod, &at(32), "WIN404").is_empty());
        // `=` is never accepted.
        let eq = set(pod, "/spec/containers/0/envFrom/0/prefix", json!("A="));
        assert_eq!(hits(&eq, &at(34), "WIN404")[0].0, Severity::Error);
    }

    #[test]
    fn win404_keys_only_with_known_context() {
        let pod = set(
            winok(),
            "/spec/containers/0/envFrom",
            json!([{"configMapRef":{"name":"cfg"}},{"prefix":"App_","secretRef":{"name":"s"}}]),
        );
        // No context: nothing.
        assert!(hits(&pod, &cfg(), "WIN404").is_empty());
        let mut cx = Context::default();
        cx.add(
            &json!({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cfg"},
            "data":{"1st":"x","good":"y",".hidden":"z"}}),
        );
        cx.add(
            &json!({"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"},
            "stringData":{"1st":"x"}}),
        );
        let run = |c: &Config| -> Vec<(Severity, String)> {
            lint_object(&pod, c, &cx, Operation::Lint)
                .findings
                .into_iter()
                .filter(|f| f.rule.id == "WIN404")
                .map(|f| (f.severity, f.pointer))
                .collect()
        };
        // "1st" is skipped by the kubelet; ".hidden" is valid; "App_1st" is valid.
        assert_eq!(
            run(&cfg()),
            hit(
                Severity::Warning,
                "/spec/containers/0/envFrom/0/configMapRef"
            )
        );
        // Relaxed validation accepts every ConfigMap key.
        assert!(run(&at(34)).is_empty());
        // Another namespace: unknown, nothing.
        let other = set(pod.clone(), "/metadata/namespace", json!("prod"));
        assert!(
            lint_object(&other, &cfg(), &cx, Operation::Lint)
                .findings
                .iter()
                .all(|f| f.rule.id != "WIN404")
        );
    }
}
