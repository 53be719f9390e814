//! WIN110 `gmsa-spec-not-found`.

use crate::model::Eval;
use crate::model::context::GmsaSpecs;
use crate::model::meta::{Area, Mutation, Reads, RuleOs};
use crate::model::names::dns1123_subdomain_errors;
use crate::model::pod::{self};
use crate::model::workload::PodSite;
use crate::model::{Finding, RuleMeta, Severity};
use crate::rules::Rule;
use crate::rules::identity::common::valid_gmsa_names;

/// WIN110 in the registry.
pub const RULE: Rule = Rule {
    meta: &WIN110,
    check: gmsa_spec_not_found,
};

/// How many of the known names a message lists.
const NAMES_SHOWN: usize = 5;

pub static WIN110: RuleMeta = RuleMeta {
    id: "WIN110",
    name: "gmsa-spec-not-found",
    severity: Severity::Warning,
    summary: "A gMSA credential spec name names no GMSACredentialSpec resource",
    docs: r#"## What it does
When the `GMSACredentialSpec` resources are known (the cluster's, with `--cluster`, `audit` and
`serve` when the CRD of kubernetes-sigs/windows-gmsa is installed; else those the same CLI input
creates: one file, or one chart's or kustomization's output), reports every
`windowsOptions.gmsaCredentialSpecName` of the pod or of a container that names none of them.
Without such facts it says nothing: specs are often created out of band, so a spec in one file
says nothing about a name in another.

## Why is this bad?
The windows-gmsa admission webhook reads the named resource when the pod is created: to inline
its `credspec` (mutating webhook) and, when the spec is already inlined, to compare the two
(validating webhook). A name with no resource makes it refuse the pod (`cred spec NAME does not
exist`), so the workload's pods are never created. Where the webhook does not run, the name does
nothing and the containers start without the domain identity.

It is a warning, not an error: the resource may be created a moment after the workload (one
`kubectl apply` of both), and the CLI input need not hold every resource of the cluster.

## Example
```yaml
# GMSACredentialSpec "webapp1" exists; the pod names "webapp01"
securityContext:
  windowsOptions:
    gmsaCredentialSpecName: webapp01
```

## Fix
Name an existing `GMSACredentialSpec`, or create the one the pod names (and grant the pod's
service account the `use` verb on it).
"#,
    fix: None,
    source: "kubernetes-sigs/windows-gmsa admission-webhook/webhook.go",
    applies: "K>=1.16 with the GMSACredentialSpec facts",
    os: RuleOs::Windows,
    default_on: true,
    reads: Reads::of(&[Area::Containers, Area::PodSecurityContext]),
    mutation: Mutation::DEFAULT,
};

pub(crate) fn gmsa_spec_not_found(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    let Some(specs) = eval.context.gmsa_credential_specs.as_ref() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (p, _, name) in valid_gmsa_names(site, eval) {
        // The webhook walks the pod's and `containers`' windowsOptions only
        // (iterateOverWindowsSecurityOptions): a name on an init container is never looked up.
        if p.contains("/initContainers/") || p.contains("/ephemeralContainers/") {
            continue;
        }
        if specs.names.contains(name) {
            continue;
        }
        let np = format!("{p}/gmsaCredentialSpecName");
        // The input's spec spelt with capitals (the Kubernetes gMSA task page does that): the
        // API server refuses that resource name, so the pod's lower-case name is the one to keep.
        let message = match specs.names.iter().find(|n| n.eq_ignore_ascii_case(name)) {
            Some(twin) => format!(
                "{} {name:?} names no GMSACredentialSpec {}: {twin:?} differs in case, and the API server refuses that resource name (metadata.name must be a lowercase RFC 1123 subdomain), so the gMSA webhook refuses the pod (cred spec {name} does not exist). Name the GMSACredentialSpec {name:?}",
                pod::dotted(&np),
                where_known(specs),
            ),
            None => format!(
                "{} {name:?} names no GMSACredentialSpec {}, so the gMSA webhook refuses the pod (cred spec {name} does not exist). {}",
                pod::dotted(&np),
                where_known(specs),
                remedy(specs, name)
            ),
        };
        out.push(Finding::new(&WIN110, np, message));
    }
    out
}

/// Where the known names come from, for the message.
fn where_known(specs: &GmsaSpecs) -> &'static str {
    if specs.from_cluster {
        "in the cluster"
    } else {
        "of this input (unless the cluster has it)"
    }
}

/// The fix: the known names the API server accepts (a few), or create the resource.
fn remedy(specs: &GmsaSpecs, name: &str) -> String {
    let valid: Vec<&String> = specs
        .names
        .iter()
        .filter(|n| dns1123_subdomain_errors(n).is_empty())
        .collect();
    let known: Vec<String> = valid
        .iter()
        .take(NAMES_SHOWN)
        .map(|n| format!("{n:?}"))
        .collect();
    let more = if valid.len() > NAMES_SHOWN {
        format!(" and {} more", valid.len() - NAMES_SHOWN)
    } else {
        String::new()
    };
    if known.is_empty() {
        format!("Create GMSACredentialSpec {name:?}")
    } else {
        format!(
            "Use {}{}{more} or create GMSACredentialSpec {name:?}",
            if valid.len() > 1 { "one of " } else { "" },
            known.join(", ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    use crate::model::{Context, Operation};
    use crate::rules::testutil::{cfg, set, winok};

    fn spec(name: &str) -> Value {
        json!({"apiVersion": "windows.k8s.io/v1", "kind": "GMSACredentialSpec",
            "metadata": {"name": name}, "credspec": {"CmsPlugins": ["ActiveDirectory"]}})
    }

    fn win110(obj: &Value, cx: &Context) -> Vec<Finding> {
        crate::engine::lint_object(obj, &cfg(), cx, Operation::Lint)
            .findings
            .into_iter()
            .filter(|f| f.rule.id == "WIN110")
            .collect()
    }

    const POD: &str = "/spec/securityContext/windowsOptions/gmsaCredentialSpecName";
    const C0: &str = "/spec/containers/0/securityContext/windowsOptions/gmsaCredentialSpecName";

    #[test]
    fn names_no_spec_of_the_input() {
        let mut cx = Context::default();
        cx.add(&spec("webapp1"));
        let pod = set(winok(), POD, json!("webapp01"));
        let f = &win110(&pod, &cx)[0];
        assert_eq!(f.pointer, POD);
        assert_eq!(f.severity, Severity::Warning);
        assert!(
            f.message
                .contains("of this input (unless the cluster has it)")
                && f.message.contains("does not exist")
                && f.message.contains("Use \"webapp1\" or create"),
            "{}",
            f.message
        );
        // Per container too; an existing name is fine.
        let pod = set(winok(), C0, json!("webapp01"));
        assert_eq!(win110(&pod, &cx)[0].pointer, C0);
        let pod = set(winok(), C0, json!("webapp1"));
        assert!(win110(&pod, &cx).is_empty());
        // Inlined spec with a missing name: the validating webhook's Get refuses it as well.
        let inlined = set(
            set(winok(), POD, json!("gone")),
            "/spec/securityContext/windowsOptions/gmsaCredentialSpec",
            json!("{}"),
        );
        assert_eq!(win110(&inlined, &cx).len(), 1);
    }

    #[test]
    fn silent_without_facts_and_where_the_webhook_does_not_look() {
        let pod = set(winok(), POD, json!("webapp01"));
        assert!(win110(&pod, &Context::default()).is_empty(), "no facts");
        let mut cx = Context::default();
        cx.add(&spec("webapp1"));
        // Invalid name: WIN106's.
        let bad = set(winok(), POD, json!("WebApp_1"));
        assert!(win110(&bad, &cx).is_empty());
        // Init containers are not walked by the webhook.
        let mut init = winok();
        init["spec"]["initContainers"] = json!([{"name": "i",
            "image": "mcr.microsoft.com/windows/nanoserver:ltsc2022",
            "securityContext": {"windowsOptions": {"gmsaCredentialSpecName": "webapp01"}}}]);
        assert!(win110(&init, &cx).is_empty());
    }

    #[test]
    fn a_spec_spelt_with_capitals() {
        // kubernetes/website configure-gmsa.md: the spec is `gmsa-WebApp1`, the pod names
        // `gmsa-webapp1`.
        let mut cx = Context::default();
        cx.add(&spec("gmsa-WebApp1"));
        let pod = set(winok(), POD, json!("gmsa-webapp1"));
        let m = &win110(&pod, &cx)[0].message;
        assert!(
            m.contains("\"gmsa-WebApp1\" differs in case")
                && m.ends_with("Name the GMSACredentialSpec \"gmsa-webapp1\""),
            "{m}"
        );
        // Another name: the invalid spec is not offered.
        let pod = set(winok(), POD, json!("other"));
        let m = &win110(&pod, &cx)[0].message;
        assert!(m.ends_with(". Create GMSACredentialSpec \"other\""), "{m}");
    }

    #[test]
    fn cluster_facts_and_long_lists() {
        let cx = Context {
            gmsa_credential_specs: Some(GmsaSpecs {
                names: (0..7).map(|i| format!("spec{i}")).collect(),
                from_cluster: true,
            }),
            ..Context::default()
        };
        let pod = set(winok(), POD, json!("webapp01"));
        let m = &win110(&pod, &cx)[0].message;
        assert!(
            m.contains("names no GMSACredentialSpec in the cluster"),
            "{m}"
        );
        assert!(m.contains("\"spec4\" and 2 more"), "{m}");
        // The CRD is installed and holds nothing: create it.
        let empty = Context {
            gmsa_credential_specs: Some(GmsaSpecs {
                names: Default::default(),
                from_cluster: true,
            }),
            ..Context::default()
        };
        let m = &win110(&pod, &empty)[0].message;
        assert!(
            m.ends_with(". Create GMSACredentialSpec \"webapp01\""),
            "{m}"
        );
    }
}
