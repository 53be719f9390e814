//! WIN105 `runasusername-invalid`.

use crate::model::Eval;
use crate::model::api_fields::{self, ApiField, Fate, Place};
use crate::model::meta::{Area, Mutation, Reads, RuleOs};
use crate::model::pod::{self};
use crate::model::workload::PodSite;
use crate::model::{Finding, RuleMeta, Severity};
use crate::rules::Rule;
use crate::rules::identity::common::sets;
use crate::rules::identity::common::windows_options;

/// WIN105 in the registry.
pub const RULE: Rule = Rule {
    meta: &WIN105,
    check: runasusername_invalid,
};

/// `maxRunAsUserNameDomainLength` of VAL: the domain must be shorter than this (bytes).
pub const MAX_RUN_AS_USER_NAME_DOMAIN_LENGTH: usize = 256;

/// `maxRunAsUserNameUserLength` of VAL: the user may have at most this many bytes.
pub const MAX_RUN_AS_USER_NAME_USER_LENGTH: usize = 104;

/// `validNetBiosRegex`: `^[^\\/:\*\?"<>|\.][^\\/:\*\?"<>|]{0,14}$` (1–15 characters, none of
/// `\/:*?"<>|`, not starting with a dot).
pub(crate) fn valid_netbios(domain: &str) -> bool {
    const BAD: &[char] = &['\\', '/', ':', '*', '?', '"', '<', '>', '|'];
    let mut chars = domain.chars();
    let Some(first) = chars.next() else {
        return false;
    };
    !BAD.contains(&first)
        && first != '.'
        && domain.chars().count() <= 15
        && chars.all(|c| !BAD.contains(&c))
}

/// `validWindowsUserDomainDNSRegex`: dot-separated labels of 1–63 ASCII letters, digits and
/// hyphens, starting and ending with a letter or digit.
pub(crate) fn valid_windows_domain_dns(domain: &str) -> bool {
    domain.split('.').all(|label| {
        let b = label.as_bytes();
        !b.is_empty()
            && b.len() <= 63
            && b[0].is_ascii_alphanumeric()
            && b[b.len() - 1].is_ascii_alphanumeric()
            && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'-')
    })
}

/// The API server's errors for a `runAsUserName` (VAL `validateWindowsSecurityContextOptions`),
/// in its order and words. Empty when valid.
pub fn run_as_user_name_errors(name: &str) -> Vec<String> {
    if name.is_empty() {
        return vec!["runAsUserName cannot be an empty string".into()];
    }
    // ctrlRegex `[[:cntrl:]]+`: ASCII control characters.
    if name.chars().any(|c| c.is_ascii_control()) {
        return vec!["runAsUserName cannot contain control characters".into()];
    }
    let parts: Vec<&str> = name.split('\\').collect();
    if parts.len() > 2 {
        return vec!["runAsUserName cannot contain more than one backslash".into()];
    }
    let (has_domain, domain, user) = match parts.as_slice() {
        [user] => (false, "", *user),
        [domain, user] => (true, *domain, *user),
        _ => unreachable!("split yields one or two parts here"),
    };
    let mut errs = Vec::new();
    if domain.len() >= MAX_RUN_AS_USER_NAME_DOMAIN_LENGTH {
        errs.push(format!(
            "runAsUserName's Domain length must be under {MAX_RUN_AS_USER_NAME_DOMAIN_LENGTH} characters"
        ));
    }
    if has_domain && !(valid_netbios(domain) || valid_windows_domain_dns(domain)) {
        errs.push("runAsUserName's Domain doesn't match the NetBios nor the DNS format".into());
    }
    if user.is_empty() {
        errs.push("runAsUserName's User cannot be empty".into());
    } else if user.len() > MAX_RUN_AS_USER_NAME_USER_LENGTH {
        errs.push(format!(
            "runAsUserName's User length must not be longer than {MAX_RUN_AS_USER_NAME_USER_LENGTH} characters"
        ));
    }
    if !user.is_empty() && user.chars().all(|c| c == '.' || c == ' ') {
        errs.push("runAsUserName's User cannot contain only periods or spaces".into());
    }
    if user.chars().any(|c| "\"/\\:;|=,+*?<>@[]".contains(c)) {
        errs.push(
            r#"runAsUserName's User cannot contain the following characters: "/\:;|=,+*?<>@[]"#
                .into(),
        );
    }
    errs
}

/// Whether the target keeps `windowsOptions.runAsUserName` (alpha 1.16 behind
/// `WindowsRunAsUserName`, beta and on from 1.17, GA 1.18); elsewhere WIN109 reports it.
pub(crate) fn run_as_user_name_available(eval: &Eval) -> bool {
    ApiField::get(Place::WindowsOptions, "runAsUserName").fate(eval.target) == Fate::Kept
}

pub static WIN105: RuleMeta = RuleMeta {
    id: "WIN105",
    name: "runasusername-invalid",
    severity: Severity::Error,
    summary: "windowsOptions.runAsUserName the API server rejects (empty, >1 backslash, bad domain, forbidden characters, …)",
    docs: r#"## What it does
Validates `spec.securityContext.windowsOptions.runAsUserName` and every container's
`securityContext.windowsOptions.runAsUserName` exactly as the API server does
(`validateWindowsSecurityContextOptions`): the value must not be empty or contain control
characters or more than one `\`; in `DOMAIN\user` the domain must be shorter than 256 characters and
be a NetBIOS name (1–15 characters, none of `\/:*?"<>|`, not starting with `.`) or a DNS name; the
user must not be empty, longer than 104 characters, consist only of dots and spaces, or contain any
of `"/\:;|=,+*?<>@[]`.

## Why is this bad?
The API server rejects the pod (or, for a template, every pod the controller creates).

## Example
```yaml
securityContext:
  windowsOptions:
    runAsUserName: 'CONTOSO\ops\svc'   # more than one backslash
```

## Fix
Use `user` or `DOMAIN\user`, e.g. `ContainerUser`, `ContainerAdministrator`,
`NT AUTHORITY\SYSTEM` (HostProcess) or `CONTOSO\svc-web`. In YAML, single-quote values with a
backslash (`'NT AUTHORITY\SYSTEM'`) or double it inside double quotes.
"#,
    fix: None,
    source: "VAL",
    applies: "K>=1.17 (1.16 with WindowsRunAsUserName)",
    os: RuleOs::Windows,
    default_on: true,
    reads: Reads::of(&[Area::Containers, Area::PodSecurityContext]),
    mutation: Mutation::DEFAULT,
};

pub(crate) fn runasusername_invalid(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    if !run_as_user_name_available(eval) {
        return Vec::new();
    }
    let mut out = Vec::new();
    for (p, w) in windows_options(site, sets("runAsUserName")) {
        let Some(v) = w.get("runAsUserName").filter(|v| !v.is_null()) else {
            continue;
        };
        let Some(name) = v.as_str() else { continue };
        let errs = run_as_user_name_errors(name);
        if !errs.is_empty() {
            let p = format!("{p}/runAsUserName");
            let path = pod::dotted(&p);
            let quoted: Vec<String> = errs
                .iter()
                .map(|e| api_fields::invalid(&path, v, e))
                .collect();
            out.push(Finding::new(
                &WIN105,
                p.clone(),
                format!(
                    "{path} {name:?} is rejected by the API server ({}); use user or DOMAIN\\user (e.g. ContainerUser, NT AUTHORITY\\SYSTEM)",
                    quoted.join(", ")
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

    use crate::rules::testutil::{assert_says, at, cfg, ids, only, set, winok};

    #[test]
    fn t46_run_as_user_name_two_backslashes() {
        let pod = set(
            winok(),
            "/spec/securityContext/windowsOptions/runAsUserName",
            json!("CONTOSO\\ops\\svc"),
        );
        assert_eq!(ids(&pod, &cfg()), ["WIN105"]);
        let f = &only(&pod, &cfg(), "WIN105")[0];
        assert_eq!(
            f.pointer,
            "/spec/securityContext/windowsOptions/runAsUserName"
        );
        assert_eq!(f.severity, Severity::Error);
        assert_says(f, "runAsUserName cannot contain more than one backslash");
        // Container-level values are checked too.
        let pod = set(
            winok(),
            "/spec/containers/0/securityContext/windowsOptions/runAsUserName",
            json!(""),
        );
        let f = &only(&pod, &cfg(), "WIN105")[0];
        assert_eq!(
            f.pointer,
            "/spec/containers/0/securityContext/windowsOptions/runAsUserName"
        );
        assert!(
            f.message
                .contains("runAsUserName cannot be an empty string")
        );
    }

    #[test]
    fn win105_not_before_the_field_exists() {
        let pod = set(
            winok(),
            "/spec/securityContext/windowsOptions/runAsUserName",
            json!("a\\b\\c"),
        );
        assert!(only(&pod, &at(15), "WIN105").is_empty());
        assert_eq!(only(&pod, &at(17), "WIN105").len(), 1);
    }
}
