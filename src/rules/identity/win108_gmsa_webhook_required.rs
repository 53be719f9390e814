//! WIN108 `gmsa-webhook-required`.

use crate::model::Eval;
use crate::model::meta::{Area, Mutation, Reads, RuleOs};
use crate::model::pod::{self};
use crate::model::workload::PodSite;
use crate::model::{Finding, RuleMeta, Severity};
use crate::rules::Rule;
use crate::rules::identity::common::valid_gmsa_names;
use serde_json::Value;

/// WIN108 in the registry.
pub const RULE: Rule = Rule {
    meta: &WIN108,
    check: gmsa_webhook_required,
};

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
    default_on: true,
    reads: Reads::of(&[Area::Containers, Area::PodSecurityContext]),
    mutation: Mutation::DEFAULT,
};

pub(crate) fn gmsa_webhook_required(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    let mut out = Vec::new();
    for (p, w, name) in valid_gmsa_names(site, eval) {
        // Already inlined (by the webhook, or by hand): nothing left to resolve.
        if w.get("gmsaCredentialSpec")
            .and_then(Value::as_str)
            .is_some()
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    use crate::rules::testutil::{assert_says, at, cfg, hit, hits, only, set, winok};

    #[test]
    fn win108_gmsa_webhook_required() {
        let name = "/spec/securityContext/windowsOptions/gmsaCredentialSpecName";
        // Valid name, spec not inlined yet: info, at the name.
        let pod = set(winok(), name, json!("webapp1-credspec"));
        assert_eq!(hits(&pod, &cfg(), "WIN108"), hit(Severity::Info, name));
        let f = &only(&pod, &cfg(), "WIN108")[0];
        assert_says(f, "gMSA admission webhook");
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
}
