//! WIN105, WIN106, WIN108, WIN409: who the containers run as (shared/rules.md §2.2, §2.5):
//! `windowsOptions.runAsUserName` and gMSA credential specs as the API server validates them
//! (`validateWindowsSecurityContextOptions`), and `runAsNonRoot` with an administrator user.

use serde_json::{Value, json};

use super::Rule;
use crate::model::Eval;
use crate::model::api_fields::{self, ApiField, Fate, Place};
use crate::model::meta::{Mutation, RuleOs};
use crate::model::pod::{
    self, effective_run_as_non_root, effective_run_as_user_name, is_host_process,
};
use crate::model::workload::{ContainerRef, Lookup, PodSite};
use crate::model::{Finding, Fix, FixSafety, RuleMeta, Severity, ops};

pub fn rules() -> Vec<Rule> {
    vec![
        Rule {
            meta: &WIN105,
            check: runasusername_invalid,
        },
        Rule {
            meta: &WIN106,
            check: gmsa_spec_invalid,
        },
        Rule {
            meta: &WIN108,
            check: gmsa_webhook_required,
        },
        Rule {
            meta: &WIN409,
            check: runasnonroot_admin,
        },
    ]
}

// ---------------------------------------------------------------------------------------------
// WIN105/WIN106: validateWindowsSecurityContextOptions

/// The `windowsOptions` of the pod and its containers that `wanted` accepts: (pointer to the
/// windowsOptions object, value).
fn windows_options<'a>(
    site: &PodSite<'a>,
    wanted: impl Fn(&Value) -> bool,
) -> Vec<(String, &'a Value)> {
    let mut out = Vec::new();
    if let Some(w) = site
        .get("/securityContext/windowsOptions")
        .filter(|w| wanted(w))
    {
        out.push((site.ptr("/securityContext/windowsOptions"), w));
    }
    for c in site.containers() {
        if let Some(w) = c
            .value
            .lookup("/securityContext/windowsOptions")
            .filter(|v| !v.is_null() && wanted(v))
        {
            out.push((
                site.ptr(&format!("{}/securityContext/windowsOptions", c.rel())),
                w,
            ));
        }
    }
    out
}

/// Whether a `windowsOptions` sets `field` (the pointers of the others are not built).
fn sets(field: &'static str) -> impl Fn(&Value) -> bool {
    move |w| w.get(field).is_some_and(|v| !v.is_null())
}

/// `maxRunAsUserNameDomainLength` of VAL: the domain must be shorter than this (bytes).
pub const MAX_RUN_AS_USER_NAME_DOMAIN_LENGTH: usize = 256;
/// `maxRunAsUserNameUserLength` of VAL: the user may have at most this many bytes.
pub const MAX_RUN_AS_USER_NAME_USER_LENGTH: usize = 104;
/// `maxGMSACredentialSpecLengthInKiB` of VAL.
pub const MAX_GMSA_CREDENTIAL_SPEC_LENGTH_KIB: usize = 64;
/// `maxGMSACredentialSpecLength` of VAL (bytes).
pub const MAX_GMSA_CREDENTIAL_SPEC_LENGTH: usize = MAX_GMSA_CREDENTIAL_SPEC_LENGTH_KIB * 1024;

/// `validNetBiosRegex`: `^[^\\/:\*\?"<>|\.][^\\/:\*\?"<>|]{0,14}$` (1–15 characters, none of
/// `\/:*?"<>|`, not starting with a dot).
fn valid_netbios(domain: &str) -> bool {
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
fn valid_windows_domain_dns(domain: &str) -> bool {
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
fn run_as_user_name_available(eval: &Eval) -> bool {
    ApiField::get(Place::WindowsOptions, "runAsUserName").fate(eval.target) == Fate::Kept
}

/// Whether the target keeps the GMSA fields (alpha 1.14 behind `WindowsGMSA`, beta and on from
/// 1.16, GA 1.18); elsewhere WIN109 reports them.
fn gmsa_available(eval: &Eval) -> bool {
    ApiField::get(Place::WindowsOptions, "gmsaCredentialSpecName").fate(eval.target) == Fate::Kept
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
    context: &[],
    mutation: Mutation::DEFAULT,
};

fn runasusername_invalid(site: &PodSite, eval: &Eval) -> Vec<Finding> {
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

/// `IsDNS1123Subdomain` of apimachinery, with its messages.
fn dns1123_subdomain_errors(v: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if v.len() > 253 {
        errs.push("must be no more than 253 characters".to_string());
    }
    let ok = v.split('.').all(|label| {
        let b = label.as_bytes();
        let alnum = |c: &u8| c.is_ascii_lowercase() || c.is_ascii_digit();
        !b.is_empty()
            && alnum(&b[0])
            && alnum(&b[b.len() - 1])
            && b.iter().all(|c| alnum(c) || *c == b'-')
    });
    if !ok {
        errs.push(
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
                .to_string(),
        );
    }
    errs
}

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
    context: &[],
    mutation: Mutation::DEFAULT,
};

fn gmsa_spec_invalid(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    if !gmsa_available(eval) {
        return Vec::new();
    }
    let mut out = Vec::new();
    for (p, w) in windows_options(site, |w| {
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
                out.push(Finding::new(
                    &WIN106,
                    np.clone(),
                    format!(
                        "{path} {name:?} is rejected by the API server ({}); it names a GMSACredentialSpec resource, use a lower-case name such as {:?}",
                        quoted.join(", "),
                        name.to_ascii_lowercase().replace('_', "-")
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

// ---------------------------------------------------------------------------------------------
// WIN108

pub static WIN108: RuleMeta = RuleMeta {
    id: "WIN108",
    name: "gmsa-webhook-required",
    severity: Severity::Info,
    summary: "A gMSA credential spec name needs the gMSA admission webhook and domain-joined nodes (or a ccg plugin)",
    docs: r#"## What it does
Reports every valid `windowsOptions.gmsaCredentialSpecName` whose credential spec is not inlined
yet (`gmsaCredentialSpec` unset) on a Windows pod.

## Why is this bad?
Nothing is wrong with the manifest, but the name alone does nothing: the gMSA admission webhook
(kubernetes-sigs/windows-gmsa) resolves it and inlines the `GMSACredentialSpec` resource into the
pod, and the Windows nodes must be joined to the domain or use a ccg plugin. Without them the
containers start without the domain identity and authentication fails at run time.

## Example
```yaml
securityContext:
  windowsOptions:
    gmsaCredentialSpecName: webapp1-credspec
```

## Fix
Install the gMSA webhook, create the `GMSACredentialSpec` resource and grant the pod's service
account `use` on it; join the Windows nodes to the domain (or configure a ccg plugin).
"#,
    fix: None,
    source: "VAL",
    applies: "K>=1.16 (1.14 with WindowsGMSA)",
    os: RuleOs::Windows,
    context: &[],
    mutation: Mutation::DEFAULT,
};

fn gmsa_webhook_required(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    if !gmsa_available(eval) {
        return Vec::new();
    }
    let mut out = Vec::new();
    for (p, w) in windows_options(site, sets("gmsaCredentialSpecName")) {
        let Some(name) = w.get("gmsaCredentialSpecName").and_then(Value::as_str) else {
            continue;
        };
        if w.get("gmsaCredentialSpec")
            .and_then(Value::as_str)
            .is_some()
            || !dns1123_subdomain_errors(name).is_empty()
        {
            continue;
        }
        let np = format!("{p}/gmsaCredentialSpecName");
        out.push(Finding::new(
            &WIN108,
            np.clone(),
            format!(
                "{} {name:?} is resolved by the gMSA admission webhook, which inlines the credential spec; the Windows nodes must be domain-joined or use a ccg plugin, or the containers run without the domain identity",
                pod::dotted(&np)
            ),
        ));
    }
    out
}

// ---------------------------------------------------------------------------------------------
// WIN409

/// Whether the image's default user is `ContainerAdministrator`: Windows Server Core, Server and
/// the full Windows base images and images built on them (`*windowsservercore*`, .NET Framework).
/// Nano Server's default user is `ContainerUser`; anything else is unknown (`false`).
pub fn image_default_user_is_admin(image: &str) -> bool {
    let img = image.to_ascii_lowercase();
    let name = img.split('@').next().unwrap_or(&img);
    // Drop the tag (a ':' after the last '/').
    let repo = match name.rfind(':') {
        Some(i) if i > name.rfind('/').unwrap_or(0) => &name[..i],
        _ => name,
    };
    if img.contains("nanoserver") {
        return false;
    }
    img.contains("servercore")
        || repo.contains("dotnet/framework/")
        || matches!(
            repo,
            "mcr.microsoft.com/windows" | "mcr.microsoft.com/windows/server"
        )
}

pub static WIN409: RuleMeta = RuleMeta {
    id: "WIN409",
    name: "runasnonroot-admin",
    severity: Severity::Error,
    summary: "runAsNonRoot: true with the ContainerAdministrator user (the kubelet refuses to start it)",
    docs: r#"## What it does
For every container with effective `runAsNonRoot: true` (its own `securityContext`, else the
pod's):

* effective `windowsOptions.runAsUserName` equal to `ContainerAdministrator` (any case) →
  **error**;
* no `runAsUserName` at all and a Server Core / Server / Windows based image, whose default user
  is `ContainerAdministrator` → **warning**. Nano Server images run as `ContainerUser` and are
  fine.

HostProcess containers are left to WIN204.

## Why is this bad?
The kubelet's `verifyRunAsNonRoot` on Windows treats `ContainerAdministrator` as root: the
container never starts ("container's runAsUserName (ContainerAdministrator) which will be
regarded as root identity and will break non-root policy").

## Example
```yaml
securityContext:
  runAsNonRoot: true
  windowsOptions: {runAsUserName: ContainerAdministrator}
```

## Fix
Opt-in: set `windowsOptions.runAsUserName: ContainerUser` (check that the application can run
without administrator rights).
"#,
    fix: Some(FixSafety::OptIn),
    source: "KL-SC",
    applies: "all",
    os: RuleOs::Windows,
    context: &[],
    mutation: Mutation::named("runAsUserName"),
};

/// Ops that set `securityContext.windowsOptions.runAsUserName` of container `c`, creating the
/// objects on the way.
fn set_container_user_ops(
    site: &PodSite,
    c: &ContainerRef,
    user: &str,
) -> Vec<json_patch::PatchOperation> {
    let sc = c.value.get("securityContext").filter(|v| v.is_object());
    let wo = sc
        .and_then(|s| s.get("windowsOptions"))
        .filter(|v| v.is_object());
    let op = match (sc, wo) {
        (_, Some(_)) => ops::add(
            &site.container_ptr(c, "/securityContext/windowsOptions/runAsUserName"),
            json!(user),
        ),
        (Some(_), None) => ops::add(
            &site.container_ptr(c, "/securityContext/windowsOptions"),
            json!({"runAsUserName": user}),
        ),
        (None, None) => ops::add(
            &site.container_ptr(c, "/securityContext"),
            json!({"windowsOptions": {"runAsUserName": user}}),
        ),
    };
    vec![op]
}

fn runasnonroot_admin(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    let mut out: Vec<Finding> = Vec::new();
    for c in site.containers() {
        if is_host_process(site, &c) {
            continue;
        }
        let Some(rnr) = effective_run_as_non_root(site, &c).filter(|e| e.value) else {
            continue;
        };
        match effective_run_as_user_name(site, &c) {
            Some(user) if user.value.eq_ignore_ascii_case("ContainerAdministrator") => {
                if out.iter().any(|f| f.pointer == user.pointer) {
                    continue;
                }
                let mut f = Finding::new(
                    &WIN409,
                    user.pointer.clone(),
                    format!(
                        "{} runs as {:?} with runAsNonRoot: true; the kubelet regards ContainerAdministrator as root and refuses to start the container. Use runAsUserName: ContainerUser, or drop runAsNonRoot",
                        c.label(),
                        user.value
                    ),
                );
                if eval.fix_possible(site) {
                    f = f.with_fix(Fix {
                        safety: FixSafety::OptIn,
                        description: format!(
                            "set runAsUserName to ContainerUser at {}",
                            crate::model::pod::dotted(&user.pointer)
                        ),
                        ops: vec![ops::replace(&user.pointer, json!("ContainerUser"))],
                    });
                }
                out.push(f);
            }
            Some(_) => {}
            None => {
                let image = c.image().unwrap_or("");
                if !image_default_user_is_admin(image) {
                    continue;
                }
                let mut f = Finding::new(
                    &WIN409,
                    site.container_ptr(&c, "/image"),
                    format!(
                        "{} sets runAsNonRoot: true ({}) without runAsUserName, and image {image} runs as ContainerAdministrator by default; the kubelet will refuse to start it. Set windowsOptions.runAsUserName: ContainerUser",
                        c.label(),
                        crate::model::pod::dotted(&rnr.pointer)
                    ),
                )
                .severity(Severity::Warning);
                if eval.fix_possible(site) {
                    f = f.with_fix(Fix {
                        safety: FixSafety::OptIn,
                        description: format!("set runAsUserName: ContainerUser in {}", c.label()),
                        ops: set_container_user_ops(site, &c, "ContainerUser"),
                    });
                }
                out.push(f);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    use crate::engine::lint_object;
    use crate::model::{Context, Operation};
    use crate::rules::testutil::{
        at, cfg, fixed, hit, hits, ids, ids_in, only, second_container, set, winok,
    };

    /// The WIN3xx/WIN4xx rules.
    const WIN34: &[&str] = &["WIN3", "WIN4"];

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
        assert!(
            f.message
                .contains("runAsUserName cannot contain more than one backslash"),
            "{}",
            f.message
        );
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
    fn run_as_user_name_validation_matches_the_api_server() {
        for ok in [
            "ContainerUser",
            "ContainerAdministrator",
            "NT AUTHORITY\\SYSTEM",
            "NT AUTHORITY\\Local service",
            "CONTOSO\\svc-web",
            "contoso.com\\svc",
            "a\\b",
            &"u".repeat(104),
            &format!("{}\\u", "d".repeat(63)),
        ] {
            assert!(
                run_as_user_name_errors(ok).is_empty(),
                "{ok:?}: {:?}",
                run_as_user_name_errors(ok)
            );
        }
        let one = |s: &str| run_as_user_name_errors(s).join(" | ");
        assert_eq!(one(""), "runAsUserName cannot be an empty string");
        assert_eq!(
            one("a\tb"),
            "runAsUserName cannot contain control characters"
        );
        assert_eq!(
            one("a\u{7f}"),
            "runAsUserName cannot contain control characters"
        );
        assert_eq!(
            one("a\\b\\c"),
            "runAsUserName cannot contain more than one backslash"
        );
        assert_eq!(
            one("\\user"),
            "runAsUserName's Domain doesn't match the NetBios nor the DNS format"
        );
        assert_eq!(
            one(".contoso\\user"),
            "runAsUserName's Domain doesn't match the NetBios nor the DNS format"
        );
        // 16 characters: too long for NetBIOS, and '_' is not DNS.
        assert_eq!(
            one("CONTOSO_DOMAIN_X\\user"),
            "runAsUserName's Domain doesn't match the NetBios nor the DNS format"
        );
        // NetBIOS allows '_' and spaces (up to 15 characters).
        assert_eq!(one("MY_DOMAIN\\user"), "");
        let long_domain = format!("{}\\u", vec!["a".repeat(63); 5].join("."));
        assert_eq!(long_domain.len() - 2, 319);
        assert_eq!(
            one(&long_domain),
            "runAsUserName's Domain length must be under 256 characters"
        );
        assert_eq!(one("CONTOSO\\"), "runAsUserName's User cannot be empty");
        assert_eq!(
            one(&"u".repeat(105)),
            "runAsUserName's User length must not be longer than 104 characters"
        );
        assert_eq!(
            one(". ."),
            "runAsUserName's User cannot contain only periods or spaces"
        );
        for bad in [
            "a\"b", "a/b", "a:b", "a;b", "a|b", "a=b", "a,b", "a+b", "a*b", "a?b", "a<b", "a>b",
            "a@b", "a[b", "a]b",
        ] {
            assert_eq!(
                one(bad),
                r#"runAsUserName's User cannot contain the following characters: "/\:;|=,+*?<>@[]"#,
                "{bad}"
            );
        }
        // Several errors at once, in the API server's order.
        assert_eq!(run_as_user_name_errors("\\a@b").len(), 2);
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

    #[test]
    fn win106_gmsa() {
        let name = "/spec/securityContext/windowsOptions/gmsaCredentialSpecName";
        let pod = set(winok(), name, json!("WebApp1_CredSpec"));
        let f = &only(&pod, &cfg(), "WIN106")[0];
        assert_eq!(f.pointer, name);
        assert_eq!(f.severity, Severity::Error);
        assert!(f.message.contains("RFC 1123 subdomain"), "{}", f.message);
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
    fn win108_gmsa_webhook_required() {
        let name = "/spec/securityContext/windowsOptions/gmsaCredentialSpecName";
        // Valid name, spec not inlined yet: info, at the name.
        let pod = set(winok(), name, json!("webapp1-credspec"));
        assert_eq!(hits(&pod, &cfg(), "WIN108"), hit(Severity::Info, name));
        let f = &only(&pod, &cfg(), "WIN108")[0];
        assert!(
            f.message.contains("gMSA admission webhook"),
            "{}",
            f.message
        );
        assert!(f.message.contains("domain-joined or use a ccg plugin"));
        // Per container too.
        let c = "/spec/containers/0/securityContext/windowsOptions/gmsaCredentialSpecName";
        let pod2 = set(winok(), c, json!("webapp1-credspec"));
        assert_eq!(hits(&pod2, &cfg(), "WIN108"), hit(Severity::Info, c));
        // Inlined by the webhook: nothing left to say.
        let inlined = set(
            pod,
            "/spec/securityContext/windowsOptions/gmsaCredentialSpec",
            json!("{\"CmsPlugins\":[\"ActiveDirectory\"]}"),
        );
        assert!(only(&inlined, &cfg(), "WIN108").is_empty());
        // An invalid name is WIN106's error alone; no gMSA fields before 1.14.
        let bad = set(winok(), name, json!("WebApp1_CredSpec"));
        assert!(only(&bad, &cfg(), "WIN108").is_empty());
        let pod = set(winok(), name, json!("webapp1-credspec"));
        assert!(only(&pod, &at(13), "WIN108").is_empty());
        // Linux pods: never.
        let linux = json!({"apiVersion":"v1","kind":"Pod","metadata":{"name":"l"},"spec":{
            "securityContext":{"windowsOptions":{"gmsaCredentialSpecName":"webapp1-credspec"}},
            "nodeSelector":{"kubernetes.io/os":"linux"},
            "containers":[{"name":"a","image":"nginx:1.25"}]}});
        assert!(only(&linux, &cfg(), "WIN108").is_empty());
    }

    #[test]
    fn t44_runasnonroot_containeradministrator() {
        let pod = set(
            winok(),
            "/spec/securityContext",
            json!({"runAsNonRoot":true,"windowsOptions":{"runAsUserName":"containeradministrator"}}),
        );
        assert_eq!(ids_in(&pod, &cfg(), WIN34), vec!["WIN409"]);
        assert_eq!(
            hits(&pod, &cfg(), "WIN409"),
            hit(
                Severity::Error,
                "/spec/securityContext/windowsOptions/runAsUserName"
            )
        );
        let f = fixed(&pod, &cfg(), "WIN409");
        assert_eq!(
            f["spec"]["securityContext"]["windowsOptions"]["runAsUserName"],
            "ContainerUser"
        );
        assert_eq!(ids_in(&f, &cfg(), WIN34), Vec::<&str>::new());
        // One finding for the pod-level field even with several containers.
        let two = second_container(pod.clone(), "mcr.microsoft.com/windows/nanoserver:ltsc2022");
        assert_eq!(hits(&two, &cfg(), "WIN409").len(), 1);
        // A container-level user overrides the pod's.
        let own_user = set(
            pod.clone(),
            "/spec/containers/0/securityContext",
            json!({"windowsOptions":{"runAsUserName":"ContainerUser"}}),
        );
        assert!(hits(&own_user, &cfg(), "WIN409").is_empty());
        // A container-level runAsNonRoot: false overrides the pod's.
        let off = set(
            pod,
            "/spec/containers/0/securityContext",
            json!({"runAsNonRoot":false}),
        );
        assert!(hits(&off, &cfg(), "WIN409").is_empty());
    }

    #[test]
    fn t45_nanoserver_runasnonroot_is_fine() {
        let pod = set(
            winok(),
            "/spec/containers/0/image",
            json!("mcr.microsoft.com/windows/nanoserver:ltsc2022"),
        );
        let pod = set(pod, "/spec/securityContext", json!({"runAsNonRoot":true}));
        assert_eq!(ids_in(&pod, &cfg(), WIN34), Vec::<&str>::new());
    }

    #[test]
    fn win409_servercore_default_user_warning_and_fix() {
        let pod = set(
            winok(),
            "/spec/securityContext",
            json!({"runAsNonRoot":true}),
        );
        assert_eq!(
            hits(&pod, &cfg(), "WIN409"),
            hit(Severity::Warning, "/spec/containers/0/image")
        );
        let f = fixed(&pod, &cfg(), "WIN409");
        assert_eq!(
            f["spec"]["containers"][0]["securityContext"],
            json!({"windowsOptions":{"runAsUserName":"ContainerUser"}})
        );
        assert!(hits(&f, &cfg(), "WIN409").is_empty());
        // Existing container securityContext / windowsOptions objects are kept.
        let sc = set(
            pod.clone(),
            "/spec/containers/0/securityContext",
            json!({"windowsOptions":{"gmsaCredentialSpecName":"gmsa"}}),
        );
        let f = fixed(&sc, &cfg(), "WIN409");
        assert_eq!(
            f["spec"]["containers"][0]["securityContext"]["windowsOptions"],
            json!({"gmsaCredentialSpecName":"gmsa","runAsUserName":"ContainerUser"})
        );
        // HostProcess containers are WIN204's business.
        let hp = set(
            pod.clone(),
            "/spec/securityContext/windowsOptions",
            json!({"hostProcess":true,"runAsUserName":"NT AUTHORITY\\SYSTEM"}),
        );
        assert!(hits(&hp, &cfg(), "WIN409").is_empty());
        // Fixes are not offered when an existing Pod is updated (its spec is immutable).
        let upd = lint_object(&pod, &cfg(), &Context::default(), Operation::Update);
        assert!(upd.findings.iter().all(|f| f.fix.is_none()));
        assert!(image_default_user_is_admin(
            "mcr.microsoft.com/dotnet/framework/aspnet:4.8-windowsservercore-ltsc2022"
        ));
        assert!(image_default_user_is_admin(
            "mcr.microsoft.com/windows/server:ltsc2025"
        ));
        assert!(!image_default_user_is_admin(
            "mcr.microsoft.com/dotnet/aspnet:8.0-nanoserver-ltsc2022"
        ));
        assert!(!image_default_user_is_admin("contoso/app:1.0-ltsc2019"));
    }
}
