//! WIN403–WIN405: environment variable names and `envFrom` (shared/rules.md §2.5): what the
//! target's API server accepts, what Windows (case-insensitive environment) makes of it.
//!
//! What several rules of the family share.

use crate::model::Target;
use serde_json::Value;

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
    pub(crate) fn server_text(self, name: &str) -> String {
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
    pub(crate) fn rejection(self, path: &str, name: &str) -> String {
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

pub(crate) fn is_c_identifier(s: &str) -> bool {
    let mut b = s.bytes();
    matches!(b.next(), Some(c) if c == b'_' || c.is_ascii_alphabetic())
        && b.all(|c| c == b'_' || c.is_ascii_alphanumeric())
}

/// apimachinery `envVarNameFmt`: `^[-._a-zA-Z][-._a-zA-Z0-9]*$`.
pub(crate) fn matches_strict_env_regex(s: &str) -> bool {
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
pub(crate) fn gate_hint(target: &Target) -> String {
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

#[cfg(test)]
pub(crate) mod tests {
    use serde_json::{Value, json};

    use crate::rules::testutil::{cfg, ids_in, legacy, set, winok};

    /// The WIN3xx/WIN4xx rules (other modules' rules are asserted by their tests).
    pub(crate) const OWN: &[&str] = &["WIN3", "WIN4"];

    pub(crate) fn with_env(env: Value) -> Value {
        set(winok(), "/spec/containers/0/env", env)
    }

    #[test]
    fn t30_double_underscore_is_fine() {
        let pod = with_env(json!([{"name":"ConnectionStrings__Default",
            "valueFrom":{"secretKeyRef":{"name":"db","key":"conn"}}}]));
        assert_eq!(ids_in(&pod, &cfg(), OWN), Vec::<&str>::new());
        assert_eq!(ids_in(&pod, &legacy(), OWN), Vec::<&str>::new());
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
