//! WIN403–WIN405: environment variable names and `envFrom` (shared/rules.md §2.5): what the
//! target's API server accepts, what Windows (case-insensitive environment) makes of it.

use serde_json::{Value, json};

use super::Rule;
use crate::model::Eval;
use crate::model::Target;
use crate::model::meta::{Fact, Mutation, RuleOs};
use crate::model::workload::{ContainerRef, Lookup, PodSite, list};
use crate::model::{Finding, Fix, FixSafety, RuleMeta, Severity, ops};

pub fn rules() -> Vec<Rule> {
    vec![
        Rule {
            meta: &WIN403,
            check: env_name_invalid,
        },
        Rule {
            meta: &WIN404,
            check: envfrom_prefix_or_keys,
        },
        Rule {
            meta: &WIN405,
            check: env_case_collision,
        },
    ]
}

/// The pod's namespace for context lookups (ConfigMaps/Secrets): its own, else `default`.
fn namespace<'a>(site: &PodSite<'a>) -> &'a str {
    site.namespace
        .or_else(|| site.meta.get("namespace").and_then(Value::as_str))
        .filter(|n| !n.is_empty())
        .unwrap_or("default")
}

// ---------------------------------------------------------------------------------------------
// Environment variable names (WIN403, WIN404)

/// How the target's API server validates `env[].name` and `envFrom[].prefix`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EnvRegime {
    /// Before 1.8: C identifier `[A-Za-z_][A-Za-z0-9_]*`.
    CIdentifier,
    /// 1.8 – 1.29 (and 1.30 – 1.33 with the gate off): `[-._a-zA-Z][-._a-zA-Z0-9]*`, not `.`,
    /// `..` nor starting with `..` (apimachinery `IsEnvVarName`).
    Strict,
    /// `RelaxedEnvironmentVariableValidation` (1.30 alpha, 1.32 beta on by default, 1.34 GA):
    /// any printable ASCII character except `=` (`IsRelaxedEnvVarName`).
    Relaxed,
}

impl EnvRegime {
    pub fn of(target: &Target) -> EnvRegime {
        let k = target.kubernetes;
        // The gate's history (locked on from 1.34) is in `target::GATES`.
        if target.gate("RelaxedEnvironmentVariableValidation") {
            EnvRegime::Relaxed
        } else if k.at_least(1, 8) {
            EnvRegime::Strict
        } else {
            EnvRegime::CIdentifier
        }
    }

    /// Whether the API server accepts `name` (non-empty) under this regime.
    pub fn accepts(self, name: &str) -> bool {
        match self {
            EnvRegime::CIdentifier => is_c_identifier(name),
            EnvRegime::Strict => is_strict_env_name(name),
            EnvRegime::Relaxed => is_relaxed_env_name(name),
        }
    }

    /// Why the API server rejects `name` under this regime, in its words where they were
    /// measured (1.32 with the gate on and off, research §1.2; note the double spaces of the
    /// strict message), paraphrased for the C-identifier era.
    fn server_text(self, name: &str) -> String {
        match self {
            EnvRegime::CIdentifier => {
                "a name must be a C identifier ([A-Za-z_][A-Za-z0-9_]*) before Kubernetes 1.8"
                    .into()
            }
            EnvRegime::Strict if !matches_strict_env_regex(name) => STRICT_ENV_NAME_MSG.into(),
            // apimachinery `hasChDirPrefix`.
            EnvRegime::Strict if name == "." || name == ".." => format!("must not be '{name}'"),
            EnvRegime::Strict => "must not start with '..'".into(),
            EnvRegime::Relaxed => RELAXED_ENV_NAME_MSG.into(),
        }
    }

    /// The API server's error for `name` at the field `path` (dotted), quoted.
    fn rejection(self, path: &str, name: &str) -> String {
        match self {
            EnvRegime::CIdentifier => self.server_text(name),
            _ => crate::model::api_fields::invalid(
                path,
                &Value::String(name.to_string()),
                &self.server_text(name),
            ),
        }
    }
}

/// apimachinery `envVarNameFmtErrMsg` as the API server prints it (measured on 1.32 with
/// RelaxedEnvironmentVariableValidation off).
pub const STRICT_ENV_NAME_MSG: &str = "a valid environment variable name must consist of alphabetic characters, digits, '_', '-', or '.', and must not start with a digit (e.g. 'my.env-name',  or 'MY_ENV.NAME',  or 'MyEnvName1', regex used for validation is '[-._a-zA-Z][-._a-zA-Z0-9]*')";

/// apimachinery `relaxedEnvVarNameFmtErrMsg` (measured on 1.32 with the gate on).
pub const RELAXED_ENV_NAME_MSG: &str = "a valid environment variable name must consist only of printable ASCII characters other than '='";

fn is_c_identifier(s: &str) -> bool {
    let mut b = s.bytes();
    matches!(b.next(), Some(c) if c == b'_' || c.is_ascii_alphabetic())
        && b.all(|c| c == b'_' || c.is_ascii_alphanumeric())
}

/// apimachinery `envVarNameFmt`: `^[-._a-zA-Z][-._a-zA-Z0-9]*$`.
fn matches_strict_env_regex(s: &str) -> bool {
    let mut b = s.bytes();
    let ok_first =
        matches!(b.next(), Some(c) if c.is_ascii_alphabetic() || matches!(c, b'-' | b'.' | b'_'));
    ok_first && b.all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'.' | b'_'))
}

/// apimachinery `IsEnvVarName`: `^[-._a-zA-Z][-._a-zA-Z0-9]*$` and no `.`/`..`/`..`-prefix.
pub fn is_strict_env_name(s: &str) -> bool {
    matches_strict_env_regex(s) && s != "." && !s.starts_with("..")
}

/// apimachinery `IsRelaxedEnvVarName`: non-empty, printable ASCII (space included), no `=`.
pub fn is_relaxed_env_name(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|c| (0x20..=0x7e).contains(&c) && c != b'=')
}

/// What would make the target accept the name: the relaxed rule's gate, where it exists.
fn gate_hint(target: &Target) -> String {
    const GATE: &str = "RelaxedEnvironmentVariableValidation";
    let k = target.kubernetes;
    if target.gate(GATE) || !k.at_least(1, 30) {
        String::new()
    } else if target.gate_setting(GATE) == Some(false) {
        format!("; the feature gate {GATE} is switched off, with it on the API server accepts it")
    } else {
        format!("; with the feature gate {GATE} (alpha, off by default before 1.32) it accepts it")
    }
}

/// Does the container reference `$(name)` in its command, args or env values? Renaming the
/// variable would silently break the expansion.
fn referenced(c: &ContainerRef, name: &str) -> bool {
    let needle = format!("$({name})");
    let strs = |key: &str| -> bool {
        list(c.value, key)
            .iter()
            .filter_map(Value::as_str)
            .any(|s| s.contains(&needle))
    };
    strs("command")
        || strs("args")
        || list(c.value, "env").iter().any(|e| {
            e.get("value")
                .and_then(Value::as_str)
                .is_some_and(|v| v.contains(&needle))
        })
}

pub static WIN403: RuleMeta = RuleMeta {
    id: "WIN403",
    name: "env-name-invalid",
    severity: Severity::Error,
    summary: "env var name the API server rejects (typically ':' from .NET configuration keys)",
    docs: r#"## What it does
Checks `env[].name` of every container against the target API server's rule:

* before 1.30, and 1.30–1.31 without the `RelaxedEnvironmentVariableValidation` gate:
  `[-._a-zA-Z][-._a-zA-Z0-9]*` (not `.`, not starting with `..`) → **error**;
* 1.32+ (gate on by default; GA in 1.34) or 1.30–1.31 with the gate: any printable ASCII character
  except `=`. A name that only the relaxed rule accepts (`ConnectionStrings:Default`) is
  **info**: it works on this cluster but not on older ones; a name with `=` or non-ASCII
  characters stays an **error**.

## Why is this bad?
.NET / ASP.NET Core configuration keys use `:` (`Logging:LogLevel:Default`), and the seed-era
Windows guides tell users to pass them as environment variables. Older API servers reject the
whole pod ("a valid environment variable name must consist of alphabetic characters, digits, '_',
'-', or '.'"); a Deployment then never creates its pods.

## Example
```yaml
env:
- name: ConnectionStrings:Default
  valueFrom: {secretKeyRef: {name: db, key: conn}}
```

## Fix
Opt-in (`--fix-opt-in WIN403`, or the webhook's fix policy): rename `:` to `__`
(`ConnectionStrings__Default`). .NET configuration binding maps `__` to `:`, so ASP.NET Core
applications read the same key; other applications read exact names, so the rename is never
applied silently. Not offered when `$(NAME)` references to the variable exist or the new name
is taken.
"#,
    fix: Some(FixSafety::OptIn),
    source: "seed, K-OLD11, KEP4369, VAL, VAL-T",
    applies: "all (error K<1.30 or 1.30–1.31 without the gate; info with relaxed validation)",
    os: RuleOs::Windows,
    context: &[],
    mutation: Mutation::named("envNames"),
};

fn env_name_invalid(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    let regime = EnvRegime::of(eval.target);
    let k = eval.target.kubernetes;
    let mut out = Vec::new();
    for c in site.containers() {
        let env = list(c.value, "env");
        for (i, e) in env.iter().enumerate() {
            let Some(name) = e.get("name").and_then(Value::as_str) else {
                continue;
            };
            // Empty names are a generic API error ("Required value"), not this rule's business.
            if name.is_empty() {
                continue;
            }
            let accepted = regime.accepts(name);
            // Accepted names are reported (info) only where the relaxed rule is what accepts
            // them: they break on every API server with the strict rule.
            if accepted && (regime != EnvRegime::Relaxed || is_strict_env_name(name)) {
                continue;
            }
            let p = site.container_ptr(&c, &format!("/env/{i}/name"));
            let (sev, mut msg) = if !accepted {
                (
                    Severity::Error,
                    format!(
                        "{} env var name {name:?} is rejected by the Kubernetes {k} API server ({}){}",
                        c.label(),
                        regime.rejection(&crate::model::pod::dotted(&p), name),
                        if regime.accepts(name) || is_relaxed_env_name(name) {
                            gate_hint(eval.target)
                        } else {
                            String::new()
                        }
                    ),
                )
            } else {
                (
                    Severity::Info,
                    format!(
                        "{} env var name {name:?} is accepted by Kubernetes {k} (relaxed env var validation) but rejected by API servers before 1.32 (1.30-1.31 without the RelaxedEnvironmentVariableValidation gate)",
                        c.label()
                    ),
                )
            };
            let mut fix = None;
            if name.contains(':') {
                let new = name.replace(':', "__");
                let taken = env.iter().enumerate().any(|(j, o)| {
                    j != i
                        && o.get("name")
                            .and_then(Value::as_str)
                            .is_some_and(|n| n.eq_ignore_ascii_case(&new))
                });
                let valid = is_strict_env_name(&new)
                    && (regime != EnvRegime::CIdentifier || is_c_identifier(&new));
                if valid && !taken && !referenced(&c, name) && eval.fix_possible(site) {
                    msg.push_str(&format!(
                        "; rename it to {new:?} (.NET configuration reads `__` as `:`)"
                    ));
                    fix = Some(Fix {
                        safety: FixSafety::OptIn,
                        description: format!("rename env var {name:?} to {new:?}"),
                        ops: vec![ops::replace(&p, json!(new))],
                    });
                } else if taken {
                    msg.push_str(&format!(
                        "; {new:?} already exists in this container, rename it by hand"
                    ));
                } else if referenced(&c, name) {
                    msg.push_str(&format!(
                        "; rename it to {new:?} and update the $({name}) references"
                    ));
                } else {
                    msg.push_str("; rename it");
                }
            } else {
                msg.push_str("; rename it");
            }
            let mut f = Finding::new(&WIN403, p, msg).severity(sev);
            if let Some(fx) = fix {
                f = f.with_fix(fx);
            }
            out.push(f);
        }
    }
    out
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
"#,
    fix: None,
    source: "VAL, KEP4369, kubelet",
    applies: "as WIN403",
    os: RuleOs::Windows,
    context: &[Fact::ConfigMapAndSecretKeys],
    mutation: Mutation::DEFAULT,
};

fn envfrom_prefix_or_keys(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    let regime = EnvRegime::of(eval.target);
    let k = eval.target.kubernetes;
    let ns = namespace(site);
    let mut out = Vec::new();
    for c in site.containers() {
        for (j, ef) in list(c.value, "envFrom").iter().enumerate() {
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

// ---------------------------------------------------------------------------------------------
// WIN405

pub static WIN405: RuleMeta = RuleMeta {
    id: "WIN405",
    name: "env-case-collision",
    severity: Severity::Warning,
    summary: "Two env vars of one container that differ only in case (Windows env names are case-insensitive)",
    docs: r#"## What it does
Reports `env[].name` entries of a container that equal an earlier entry when case is ignored
(`Path` and `PATH`).

## Why is this bad?
Kubernetes treats the names as different variables; Windows environment names are
case-insensitive, so one value silently overwrites the other — and overriding `PATH` with a
differently-cased `Path` can replace the system search path.

## Example
```yaml
env:
- {name: Path, value: 'C:\app'}
- {name: PATH, value: 'C:\tools'}
```

## Fix
Keep one of the two entries.
"#,
    fix: None,
    source: "Windows semantics",
    applies: "all",
    os: RuleOs::Windows,
    context: &[],
    mutation: Mutation::DEFAULT,
};

fn env_case_collision(site: &PodSite, _eval: &Eval) -> Vec<Finding> {
    let mut out = Vec::new();
    for c in site.containers() {
        // Case-folded name → the distinct spellings seen so far, in order (linear: a container
        // may carry thousands of env vars).
        let mut seen: std::collections::HashMap<String, Vec<&str>> =
            std::collections::HashMap::new();
        for (i, e) in list(c.value, "env").iter().enumerate() {
            let Some(name) = e.get("name").and_then(Value::as_str) else {
                continue;
            };
            let spellings = seen.entry(name.to_lowercase()).or_default();
            if let Some(first) = spellings.iter().find(|raw| **raw != name) {
                out.push(Finding::new(
                    &WIN405,
                    site.container_ptr(&c, &format!("/env/{i}/name")),
                    format!(
                        "{} sets env vars {first:?} and {name:?}, which are the same variable on Windows (names are case-insensitive); one overwrites the other. Keep one",
                        c.label()
                    ),
                ));
            }
            if !spellings.contains(&name) {
                spellings.push(name);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::config::Config;
    use crate::engine::fix::apply_fixes;
    use crate::engine::lint_object;
    use crate::model::{Context, KubeVersion, Operation};
    use crate::rules::testutil::{
        at, cfg, findings, fixed, has_fix, hit, hits, ids_in, legacy, only, set, winok,
    };

    /// The WIN3xx/WIN4xx rules (other modules' rules are asserted by their tests).
    const OWN: &[&str] = &["WIN3", "WIN4"];

    fn with_env(env: Value) -> Value {
        set(winok(), "/spec/containers/0/env", env)
    }

    #[test]
    fn t29_colon_env_name_by_version() {
        let pod = with_env(json!([{"name":"ConnectionStrings:Default","value":"x"}]));
        let p = "/spec/containers/0/env/0/name";
        assert_eq!(ids_in(&pod, &cfg(), OWN), vec!["WIN403"]);
        assert_eq!(hits(&pod, &cfg(), "WIN403"), hit(Severity::Error, p));
        // The strict regime's words, as a 1.32 API server with the gate off prints them.
        let f = &only(&pod, &cfg(), "WIN403")[0];
        assert!(
            f.message.contains(&format!(
                "(\"spec.containers[0].env[0].name: Invalid value: \"ConnectionStrings:Default\": {STRICT_ENV_NAME_MSG}\")"
            )),
            "{}",
            f.message
        );
        assert!(
            f.message
                .contains("with the feature gate RelaxedEnvironmentVariableValidation"),
            "{}",
            f.message
        );
        assert_eq!(hits(&pod, &at(32), "WIN403"), hit(Severity::Info, p));
        let mut gated = cfg();
        gated
            .target
            .feature_gates
            .insert("RelaxedEnvironmentVariableValidation".into(), true);
        assert_eq!(hits(&pod, &gated, "WIN403"), hit(Severity::Info, p));
        // Opt-in fix `:` → `__`, offered in both regimes.
        let f = fixed(&pod, &cfg(), "WIN403");
        assert_eq!(
            f["spec"]["containers"][0]["env"][0]["name"],
            "ConnectionStrings__Default"
        );
        assert_eq!(ids_in(&f, &cfg(), OWN), Vec::<&str>::new());
        assert!(has_fix(&pod, &at(32), "WIN403"));
        // Never applied silently; applied with --fix-opt-in WIN403.
        let c = cfg();
        let fs = findings(&pod, &c);
        let mut obj = pod.clone();
        assert!(apply_fixes(&mut obj, &fs, &c).1.is_empty());
        let mut opt = cfg();
        opt.policy.fix_opt_in.insert("WIN403".into());
        let mut obj = pod.clone();
        assert_eq!(apply_fixes(&mut obj, &fs, &opt).1, vec!["WIN403"]);
        assert_eq!(obj, f);
    }

    #[test]
    fn t30_double_underscore_is_fine() {
        let pod = with_env(json!([{"name":"ConnectionStrings__Default",
            "valueFrom":{"secretKeyRef":{"name":"db","key":"conn"}}}]));
        assert_eq!(ids_in(&pod, &cfg(), OWN), Vec::<&str>::new());
        assert_eq!(ids_in(&pod, &legacy(), OWN), Vec::<&str>::new());
    }

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
    fn t32_case_collision() {
        let pod = with_env(json!([{"name":"Path","value":"a"},{"name":"PATH","value":"b"}]));
        assert_eq!(ids_in(&pod, &cfg(), OWN), vec!["WIN405"]);
        assert_eq!(
            hits(&pod, &cfg(), "WIN405"),
            hit(Severity::Warning, "/spec/containers/0/env/1/name")
        );
        // Exact duplicates and different names are not Windows findings.
        let dup = with_env(json!([{"name":"PATH","value":"a"},{"name":"PATH","value":"b"}]));
        assert!(hits(&dup, &cfg(), "WIN405").is_empty());
        // Across containers no collision.
        let two = set(
            with_env(json!([{"name":"Path","value":"a"}])),
            "/spec/containers/1",
            json!({"name":"b","image":"mcr.microsoft.com/windows/servercore:ltsc2022",
                "env":[{"name":"PATH","value":"b"}]}),
        );
        assert!(hits(&two, &cfg(), "WIN405").is_empty());
    }

    #[test]
    fn win403_regimes() {
        let pod = |n: &str| with_env(json!([{"name":n,"value":"x"}]));
        let sev = |n: &str, c: &Config| hits(&pod(n), c, "WIN403").first().map(|h| h.0);
        // `=` and non-ASCII: error even with relaxed validation (1.34 GA).
        assert_eq!(sev("A=B", &at(34)), Some(Severity::Error));
        let f = &only(&pod("A=B"), &at(32), "WIN403")[0];
        assert!(
            f.message.contains(&format!(
                "(\"spec.containers[0].env[0].name: Invalid value: \"A=B\": {RELAXED_ENV_NAME_MSG}\")"
            )),
            "{}",
            f.message
        );
        assert!(!f.message.contains("feature gate"), "{}", f.message);
        assert!(
            only(&pod("..x"), &cfg(), "WIN403")[0]
                .message
                .contains(": must not start with '..'")
        );
        assert_eq!(sev("Grüße", &at(34)), Some(Severity::Error));
        // Starting with a digit: strict error, relaxed info.
        assert_eq!(sev("1VAR", &cfg()), Some(Severity::Error));
        assert_eq!(sev("1VAR", &at(34)), Some(Severity::Info));
        assert_eq!(sev("..x", &cfg()), Some(Severity::Error));
        // Gate explicitly off on 1.32: strict; on 1.34 (GA) the gate cannot be turned off.
        let mut off = at(32);
        off.target
            .feature_gates
            .insert("RelaxedEnvironmentVariableValidation".into(), false);
        assert_eq!(sev("a:b", &off), Some(Severity::Error));
        off.target.kubernetes = KubeVersion::new(1, 34);
        assert_eq!(sev("a:b", &off), Some(Severity::Info));
        // The gate does not exist before 1.30.
        let mut early = at(29);
        early
            .target
            .feature_gates
            .insert("RelaxedEnvironmentVariableValidation".into(), true);
        assert_eq!(sev("a:b", &early), Some(Severity::Error));
        // Valid names everywhere.
        for n in ["my.env-name", "MY_ENV.NAME", "MyEnvName1", "_x", "-x"] {
            assert_eq!(sev(n, &cfg()), None, "{n}");
        }
        // Before 1.8: C identifiers only.
        assert_eq!(sev("my.env-name", &at(7)), Some(Severity::Error));
        assert_eq!(sev("MY_ENV", &at(7)), None);
        // Init and ephemeral containers too.
        let init = set(
            winok(),
            "/spec/initContainers",
            json!([{"name":"i","image":"mcr.microsoft.com/windows/servercore:ltsc2022",
                "env":[{"name":"a:b","value":"x"}]}]),
        );
        assert_eq!(
            hits(&init, &cfg(), "WIN403"),
            hit(Severity::Error, "/spec/initContainers/0/env/0/name")
        );
    }

    #[test]
    fn win403_fix_only_when_safe_to_rename() {
        // The new name is taken (case-insensitively).
        let taken = with_env(json!([{"name":"a:b","value":"1"},{"name":"A__B","value":"2"}]));
        assert!(!has_fix(&taken, &cfg(), "WIN403"));
        // $(a:b) referenced by args.
        let refd = set(
            with_env(json!([{"name":"a:b","value":"1"}])),
            "/spec/containers/0/args",
            json!(["--x=$(a:b)"]),
        );
        assert!(!has_fix(&refd, &cfg(), "WIN403"));
        // The rename would not make it valid.
        let eq = with_env(json!([{"name":"a:b=c","value":"1"}]));
        assert!(!has_fix(&eq, &cfg(), "WIN403"));
        // No `:` — nothing to rename.
        assert!(!has_fix(
            &with_env(json!([{"name":"1VAR","value":"1"}])),
            &cfg(),
            "WIN403"
        ));
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

    #[test]
    fn nothing_on_linux_pods() {
        // (No Hyper-V annotation: it is Windows evidence itself.)
        let linux = json!({"apiVersion":"v1","kind":"Pod","metadata":{"name":"l"},"spec":{
            "securityContext":{"runAsNonRoot":true},
            "containers":[{"name":"a","image":"alpine","env":[{"name":"Logging:Level","value":"x"},
                {"name":"path","value":"a"},{"name":"PATH","value":"b"}],
                "resources":{"requests":{"memory":"1Mi"},"limits":{"memory":"1Gi","hugepages-2Mi":"1Gi"}},
                "ports":[{"containerPort":53,"protocol":"UDP"}]},{"name":"b","image":"nginx"}]}});
        assert_eq!(ids_in(&linux, &cfg(), OWN), Vec::<&str>::new());
        assert_eq!(ids_in(&linux, &legacy(), OWN), Vec::<&str>::new());
    }
}
