//! WIN403 `env-name-invalid`.

use crate::model::Eval;
use crate::model::meta::{Area, Mutation, Reads, Recorded, RuleOs};
use crate::model::workload::{ContainerRef, PodSite, each, items, list};
use crate::model::{Finding, Fix, FixSafety, RuleMeta, Severity, ops};
use crate::rules::Rule;
use crate::rules::env::common::EnvRegime;
use crate::rules::env::common::gate_hint;
use crate::rules::env::common::is_c_identifier;
use crate::rules::env::common::is_relaxed_env_name;
use crate::rules::env::common::is_strict_env_name;
use serde_json::{Value, json};

/// WIN403 in the registry.
pub const RULE: Rule = Rule {
    meta: &WIN403,
    check: env_name_invalid,
};

/// Does the container reference `$(name)` in its command, args or env values? Renaming the
/// variable would silently break the expansion.
pub(crate) fn referenced(c: &ContainerRef, name: &str) -> bool {
    let needle = format!("$({name})");
    let strs = |key: &str| -> bool {
        items(c.value, key)
            .filter_map(Value::as_str)
            .any(|s| s.contains(&needle))
    };
    strs("command")
        || strs("args")
        || items(c.value, "env").any(|e| {
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
.NET / ASP.NET Core configuration keys use `:` (`Logging:LogLevel:Default`), and the early
Windows guides (Kubernetes 1.9-1.13) tell users to pass them as environment variables. Older API servers reject the
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

## Severity
`error` for a name the target's API server rejects; `info` for one it accepts only under the
relaxed rule (1.32+, or the gate), which API servers before it reject.
"#,
    fix: Some(FixSafety::OptIn),
    source: "seed, K-OLD11, KEP4369, VAL, VAL-T",
    applies: "all (error K<1.30 or 1.30–1.31 without the gate; info with relaxed validation)",
    os: RuleOs::Windows,
    default_on: true,
    reads: Reads::of(&[Area::Containers]),
    mutation: Mutation::named(Recorded::EnvNames),
};

pub(crate) fn env_name_invalid(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    let regime = EnvRegime::of(eval.target);
    let k = eval.target.kubernetes;
    let mut out = Vec::new();
    for c in site.containers() {
        let env = list(c.value, "env");
        for (i, e) in each(env).enumerate() {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use crate::engine::fix::apply_fixes;
    use crate::rules::env::common::{RELAXED_ENV_NAME_MSG, STRICT_ENV_NAME_MSG};
    use serde_json::json;

    use crate::model::KubeVersion;
    use crate::rules::env::common::tests::OWN;
    use crate::rules::env::common::tests::with_env;
    use crate::rules::testutil::{
        assert_says, at, cfg, findings, fixed, has_fix, hit, hits, ids_in, only, set, winok,
    };

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
        assert_says(
            f,
            "with the feature gate RelaxedEnvironmentVariableValidation",
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
}
