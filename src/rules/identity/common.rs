//! WIN105, WIN106, WIN108, WIN409: who the containers run as (shared/rules.md §2.2, §2.5):
//! `windowsOptions.runAsUserName` and gMSA credential specs as the API server validates them
//! (`validateWindowsSecurityContextOptions`), and `runAsNonRoot` with an administrator user.
//!
//! What several rules of the family share.

use crate::model::Eval;
use crate::model::api_fields::{ApiField, Fate, Place};
use crate::model::names::dns1123_subdomain_errors;
use crate::model::workload::{Lookup, PodSite};
use serde_json::Value;

// ---------------------------------------------------------------------------------------------
// WIN105/WIN106: validateWindowsSecurityContextOptions

/// The `windowsOptions` of the pod and its containers that `wanted` accepts: (pointer to the
/// windowsOptions object, value).
pub(crate) fn windows_options<'a>(
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
pub(crate) fn sets(field: &'static str) -> impl Fn(&Value) -> bool {
    move |w| w.get(field).is_some_and(|v| !v.is_null())
}

/// Whether the target keeps the GMSA fields (alpha 1.14 behind `WindowsGMSA`, beta and on from
/// 1.16, GA 1.18); elsewhere WIN109 reports them.
fn gmsa_available(eval: &Eval) -> bool {
    ApiField::get(Place::WindowsOptions, "gmsaCredentialSpecName").fate(eval.target) == Fate::Kept
}

/// [`windows_options`] for the gMSA rules (WIN106, WIN108, WIN110): none where the target drops
/// the GMSA fields (WIN109 reports them there).
pub(crate) fn gmsa_options<'a>(
    site: &PodSite<'a>,
    eval: &Eval,
    wanted: impl Fn(&Value) -> bool,
) -> Vec<(String, &'a Value)> {
    if !gmsa_available(eval) {
        return Vec::new();
    }
    windows_options(site, wanted)
}

/// The `gmsaCredentialSpecName`s the API server accepts, for the rules that follow the name to
/// the gMSA webhook (WIN108, WIN110): (pointer to the windowsOptions, the windowsOptions, the
/// name). An invalid name is WIN106's error: the API server refuses the pod before any webhook.
pub(crate) fn valid_gmsa_names<'a>(
    site: &PodSite<'a>,
    eval: &Eval,
) -> impl Iterator<Item = (String, &'a Value, &'a str)> {
    gmsa_options(site, eval, sets("gmsaCredentialSpecName"))
        .into_iter()
        .filter_map(|(p, w)| {
            let name = w.get("gmsaCredentialSpecName").and_then(Value::as_str)?;
            dns1123_subdomain_errors(name)
                .is_empty()
                .then_some((p, w, name))
        })
}

#[cfg(test)]
pub(crate) mod tests {
    use serde_json::json;

    use crate::rules::identity::win105_runasusername_invalid::run_as_user_name_errors;
    use crate::rules::testutil::{cfg, ids_in, set, winok};

    /// The WIN3xx/WIN4xx rules.
    pub(crate) const WIN34: &[&str] = &["WIN3", "WIN4"];

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
    fn t45_nanoserver_runasnonroot_is_fine() {
        let pod = set(
            winok(),
            "/spec/containers/0/image",
            json!("mcr.microsoft.com/windows/nanoserver:ltsc2022"),
        );
        let pod = set(pod, "/spec/securityContext", json!({"runAsNonRoot":true}));
        assert_eq!(ids_in(&pod, &cfg(), WIN34), Vec::<&str>::new());
    }
}
