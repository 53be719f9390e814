//! WIN106 `gmsa-spec-invalid`.

use crate::model::Eval;
use crate::model::api_fields::{self};
use crate::model::meta::{Area, Mutation, Reads, RuleOs};
use crate::model::names::dns1123_subdomain_errors;
use crate::model::pod::{self};
use crate::model::workload::PodSite;
use crate::model::{Finding, RuleMeta, Severity};
use crate::rules::Rule;
use crate::rules::identity::common::gmsa_options;
use crate::rules::identity::common::sets;
use serde_json::{Value, json};

/// WIN106 in the registry.
pub const RULE: Rule = Rule {
    meta: &WIN106,
    check: gmsa_spec_invalid,
};

/// `maxGMSACredentialSpecLengthInKiB` of VAL.
pub const MAX_GMSA_CREDENTIAL_SPEC_LENGTH_KIB: usize = 64;

/// `maxGMSACredentialSpecLength` of VAL (bytes).
pub const MAX_GMSA_CREDENTIAL_SPEC_LENGTH: usize = MAX_GMSA_CREDENTIAL_SPEC_LENGTH_KIB * 1024;

pub static WIN106: RuleMeta = RuleMeta {
    id: "WIN106",
    name: "gmsa-spec-invalid",
    severity: Severity::Error,
    summary: "Invalid GMSA credential spec name or content",
    docs: r#"## What it does
Validates the GMSA fields of every `windowsOptions` as the API server does:
`gmsaCredentialSpecName` must be a DNS-1123 subdomain (it names a `GMSACredentialSpec` custom
resource), and an inlined `gmsaCredentialSpec` must not be empty nor 64 KiB or more. (What a valid
reference still needs is WIN108.)

## Why is this bad?
An invalid name or spec makes the API server reject the pod.

## Example
```yaml
securityContext:
  windowsOptions:
    gmsaCredentialSpecName: WebApp1_CredSpec   # upper case and '_' are not DNS-1123
```

## Fix
Name the credential spec resource in lower case (`webapp1-credspec`).
"#,
    fix: None,
    source: "VAL",
    applies: "K>=1.16 (1.14 with WindowsGMSA)",
    os: RuleOs::Windows,
    default_on: true,
    reads: Reads::of(&[Area::Containers, Area::PodSecurityContext]),
    mutation: Mutation::DEFAULT,
};

pub(crate) fn gmsa_spec_invalid(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    let mut out = Vec::new();
    for (p, w) in gmsa_options(site, eval, |w| {
        sets("gmsaCredentialSpecName")(w) || sets("gmsaCredentialSpec")(w)
    }) {
        let spec = w.get("gmsaCredentialSpec").and_then(Value::as_str);
        if let Some(name) = w.get("gmsaCredentialSpecName").and_then(Value::as_str) {
            let np = format!("{p}/gmsaCredentialSpecName");
            let errs = dns1123_subdomain_errors(name);
            if !errs.is_empty() {
                let path = pod::dotted(&np);
                let quoted: Vec<String> = errs
                    .iter()
                    .map(|e| api_fields::invalid(&path, &json!(name), e))
                    .collect();
                // A suggestion is a name the API server accepts, or none.
                let advice = if placeholder(name) {
                    "it is a placeholder left in the manifest: put the name of the GMSACredentialSpec resource there".to_string()
                } else if let Some(valid) = valid_name(name) {
                    format!(
                        "it names a GMSACredentialSpec resource, use a lower-case name such as {valid:?}"
                    )
                } else {
                    "it names a GMSACredentialSpec resource: use that resource's name (lower case, digits, '-' and '.')".to_string()
                };
                out.push(Finding::new(
                    &WIN106,
                    np.clone(),
                    format!(
                        "{path} {name:?} is rejected by the API server ({}); {advice}",
                        quoted.join(", "),
                    ),
                ));
            }
        }
        if let Some(s) = spec {
            let sp = format!("{p}/gmsaCredentialSpec");
            let path = pod::dotted(&sp);
            let err = if s.is_empty() {
                Some(api_fields::invalid(
                    &path,
                    &json!(""),
                    "gmsaCredentialSpec cannot be an empty string",
                ))
            } else if s.len() > MAX_GMSA_CREDENTIAL_SPEC_LENGTH {
                Some(format!(
                    "gmsaCredentialSpec size must be under {MAX_GMSA_CREDENTIAL_SPEC_LENGTH_KIB} KiB"
                ))
            } else {
                None
            };
            if let Some(err) = err {
                out.push(Finding::new(
                    &WIN106,
                    sp.clone(),
                    format!(
                        "{path} ({} bytes) is rejected by the API server ({err}); let the windows-gmsa webhook inline the spec from gmsaCredentialSpecName",
                        s.len()
                    ),
                ));
            }
        }
    }
    out
}

/// A name left to be filled in: `<Your GMSA Spec Name>`, `${SPEC}`, `{{ .Values.spec }}`,
/// `%SPEC%`. No rewriting of it is the name the user meant.
fn placeholder(name: &str) -> bool {
    let t = name.trim();
    (t.starts_with('<') && t.ends_with('>'))
        || t.contains("${")
        || t.contains("{{")
        || (t.len() > 2 && t.starts_with('%') && t.ends_with('%'))
}

/// `name` in the spelling of a DNS-1123 subdomain (lower case, `_` and spaces as `-`), if that
/// spelling is one: a suggestion the API server rejects too is no suggestion.
fn valid_name(name: &str) -> Option<String> {
    let lower: String = name
        .trim()
        .chars()
        .map(|c| match c {
            '_' | ' ' => '-',
            c => c.to_ascii_lowercase(),
        })
        .collect();
    (lower != name && dns1123_subdomain_errors(&lower).is_empty()).then_some(lower)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    use crate::rules::testutil::{assert_says, cfg, only, set, winok};

    #[test]
    fn win106_gmsa() {
        let name = "/spec/securityContext/windowsOptions/gmsaCredentialSpecName";
        let pod = set(winok(), name, json!("WebApp1_CredSpec"));
        let f = &only(&pod, &cfg(), "WIN106")[0];
        assert_eq!(f.pointer, name);
        assert_eq!(f.severity, Severity::Error);
        assert_says(f, "RFC 1123 subdomain");
        assert_says(f, "\"webapp1-credspec\"");
        // A valid name is not WIN106's concern (WIN108 says what it needs).
        let pod = set(winok(), name, json!("webapp1-credspec"));
        assert!(only(&pod, &cfg(), "WIN106").is_empty());
        // Empty and oversized specs.
        let spec = "/spec/containers/0/securityContext/windowsOptions/gmsaCredentialSpec";
        let pod = set(winok(), spec, json!(""));
        let f = &only(&pod, &cfg(), "WIN106")[0];
        assert_eq!(f.pointer, spec);
        assert!(
            f.message
                .contains("gmsaCredentialSpec cannot be an empty string")
        );
        let pod = set(winok(), spec, json!("x".repeat(64 * 1024 + 1)));
        assert!(
            only(&pod, &cfg(), "WIN106")[0]
                .message
                .contains("gmsaCredentialSpec size must be under 64 KiB")
        );
        let pod = set(winok(), spec, json!("x".repeat(64 * 1024)));
        assert!(only(&pod, &cfg(), "WIN106").is_empty());
    }

    #[test]
    fn suggestions_are_valid_names_or_none() {
        let name = "/spec/securityContext/windowsOptions/gmsaCredentialSpecName";
        // Issue 26: `<your gmsa spec name>` is no more valid than the placeholder.
        let pod = set(winok(), name, json!("<Your GMSA Spec Name>"));
        let f = &only(&pod, &cfg(), "WIN106")[0];
        assert_says(f, "placeholder");
        assert!(!f.message.contains("such as"), "{}", f.message);
        for p in ["${GMSA_SPEC}", "{{ .Values.gmsa }}", "%GMSA%"] {
            assert!(placeholder(p), "{p}");
        }
        assert!(!placeholder("WebApp1_CredSpec"));
        // Lower case that still is no DNS-1123 subdomain: no suggestion.
        let pod = set(winok(), name, json!("WebApp1.CredSpec!"));
        let f = &only(&pod, &cfg(), "WIN106")[0];
        assert!(!f.message.contains("such as"), "{}", f.message);
        for (bad, good) in [
            ("WebApp1_CredSpec", Some("webapp1-credspec")),
            ("GMSA Spec", Some("gmsa-spec")),
            ("-webapp", None),
            ("web_", None),
            ("webapp.", None),
        ] {
            assert_eq!(valid_name(bad).as_deref(), good, "{bad}");
        }
    }
}
