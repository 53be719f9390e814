//! Which findings the `winlint.io/ignore` annotation exempts, under the administrator's
//! `exemptions:` policy ([`ExemptionPolicy`], issue 15): the annotation may be off, limited to
//! some namespaces or rules, or require `winlint.io/ignore-reason`. The CLI and the webhook
//! both evaluate through here, so a policy means the same in both.

use serde_json::Value;

use crate::config::ExemptionPolicy;
use crate::model::labels::{IGNORE_ANNOTATION, IGNORE_REASON_ANNOTATION};
use crate::model::meta::RuleMeta;
use crate::model::workload::{self, Lookup};

/// What an object's annotations ask for and what the policy grants.
#[derive(Debug, Clone, Default)]
pub struct Exemptions {
    /// The keys of `winlint.io/ignore` the policy lets through (rule IDs, names, `all`).
    keys: Vec<String>,
    /// Why the annotation was not honoured (or only in part), for the user.
    pub refused: Option<String>,
    /// `winlint.io/ignore-reason`, when given.
    pub reason: Option<String>,
}

impl Exemptions {
    /// Read the annotations of `object` (its metadata and its pod templates') under `policy`.
    pub fn of(object: &Value, policy: &ExemptionPolicy) -> Exemptions {
        Exemptions::of_sites(object, &workload::pod_sites(object), policy)
    }

    /// [`Exemptions::of`] given the object's pod sites (the lint has them already).
    pub fn of_sites(
        object: &Value,
        sites: &[workload::PodSite],
        policy: &ExemptionPolicy,
    ) -> Exemptions {
        let reason = ignore_reason(object, sites);
        let keys = ignore_list(object, sites);
        let mut e = Exemptions {
            keys: Vec::new(),
            refused: None,
            reason,
        };
        if keys.is_empty() {
            return e;
        }
        let namespace = object
            .lookup("/metadata/namespace")
            .and_then(Value::as_str)
            .unwrap_or("default");
        e.refused = if !policy.pod_annotation {
            Some(format!(
                "{IGNORE_ANNOTATION} is not honoured here (exemptions.podAnnotation: deny)"
            ))
        } else if !policy.namespace_allowed(namespace) {
            Some(format!(
                "{IGNORE_ANNOTATION} is not honoured in namespace {namespace} (exemptions.namespaces)"
            ))
        } else if policy.require_reason && e.reason.is_none() {
            Some(format!(
                "{IGNORE_ANNOTATION} not honoured: this cluster requires a non-empty {IGNORE_REASON_ANNOTATION} beside it, on the object or its pod template (exemptions.requireReason)"
            ))
        } else {
            e.keys = keys;
            None
        };
        e
    }

    /// Whether a finding of `rule` is exempted; sets [`Exemptions::refused`] when the
    /// annotation names the rule but the policy does not let it be exempted.
    pub fn exempts(&mut self, rule: &RuleMeta, policy: &ExemptionPolicy) -> bool {
        let named = self.keys.iter().any(|k| {
            k.eq_ignore_ascii_case("all")
                || k.eq_ignore_ascii_case(rule.id)
                || k.eq_ignore_ascii_case(rule.name)
        });
        if !named {
            return false;
        }
        if policy.rule_allowed(rule.id) {
            return true;
        }
        if self.refused.is_none() {
            self.refused = Some(format!(
                "{IGNORE_ANNOTATION} may not exempt {} (exemptions.rules)",
                rule.id
            ));
        }
        false
    }
}

/// `winlint.io/ignore-reason` of the object, else of its pod template (README: both places
/// hold the exemption, so both hold its reason); an empty one counts as none.
fn ignore_reason(object: &Value, sites: &[workload::PodSite]) -> Option<String> {
    let of = |meta: Option<&Value>| {
        meta.and_then(|m| m.get("annotations"))
            .and_then(|a| a.get(IGNORE_REASON_ANNOTATION))
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|r| !r.is_empty())
            .map(str::to_string)
    };
    of(object.get("metadata")).or_else(|| {
        sites
            .iter()
            .filter(|s| s.meta_ptr != "/metadata")
            .find_map(|s| of(Some(s.meta)))
    })
}

/// The rules named in the object's `winlint.io/ignore` annotation (object metadata, and the
/// pod template's metadata for workloads).
fn ignore_list(object: &Value, sites: &[workload::PodSite]) -> Vec<String> {
    let mut out = Vec::new();
    let mut add = |meta: Option<&Value>| {
        if let Some(s) = meta
            .and_then(|m| m.get("annotations"))
            .and_then(|a| a.get(IGNORE_ANNOTATION))
            .and_then(Value::as_str)
        {
            out.extend(
                s.split(',')
                    .map(|x| x.trim().to_string())
                    .filter(|x| !x.is_empty()),
            );
        }
    };
    add(object.get("metadata"));
    for site in sites {
        if site.meta_ptr != "/metadata" {
            add(Some(site.meta));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::rules;

    fn pod(ns: &str, ignore: &str, reason: Option<&str>) -> Value {
        let mut a = json!({ IGNORE_ANNOTATION: ignore });
        if let Some(r) = reason {
            a[IGNORE_REASON_ANNOTATION] = r.into();
        }
        json!({"kind": "Pod", "metadata": {"name": "p", "namespace": ns, "annotations": a},
               "spec": {"containers": [{"name": "c", "image": "x"}]}})
    }

    fn policy(yaml: &str) -> ExemptionPolicy {
        crate::config::Config::from_yaml(yaml, "t")
            .unwrap()
            .policy
            .exemptions
    }

    fn exempts(p: &ExemptionPolicy, obj: &Value, id: &str) -> (bool, Option<String>) {
        let mut e = Exemptions::of(obj, p);
        let rule = rules::find(id).unwrap().meta;
        let r = e.exempts(rule, p);
        (r, e.refused)
    }

    #[test]
    fn by_default_every_annotation_is_honoured() {
        let p = ExemptionPolicy::default();
        assert_eq!(exempts(&p, &pod("a", "all", None), "WIN001"), (true, None));
        assert!(exempts(&p, &pod("a", "WIN101", None), "WIN101").0);
        assert!(!exempts(&p, &pod("a", "WIN101", None), "WIN001").0);
    }

    #[test]
    fn the_policy_limits_who_and_what() {
        let off = policy("exemptions: {podAnnotation: deny}");
        let (ok, why) = exempts(&off, &pod("a", "all", Some("r")), "WIN001");
        assert!(!ok && why.unwrap().contains("podAnnotation: deny"));

        let ns = policy("exemptions: {namespaces: [legacy, \"team-*\"]}");
        assert!(exempts(&ns, &pod("legacy", "all", None), "WIN001").0);
        assert!(exempts(&ns, &pod("team-x", "all", None), "WIN001").0);
        let (ok, why) = exempts(&ns, &pod("prod", "all", None), "WIN001");
        assert!(!ok && why.unwrap().contains("namespace prod"));

        let rules = policy("exemptions: {rules: [WIN101]}");
        assert!(exempts(&rules, &pod("a", "all", None), "WIN101").0);
        let (ok, why) = exempts(&rules, &pod("a", "all", None), "WIN001");
        assert!(!ok && why.unwrap().contains("may not exempt WIN001"));

        let reason = policy("exemptions: {requireReason: true}");
        assert!(!exempts(&reason, &pod("a", "all", None), "WIN001").0);
        assert!(!exempts(&reason, &pod("a", "all", Some(" ")), "WIN001").0);
        assert!(exempts(&reason, &pod("a", "all", Some("ticket 42")), "WIN001").0);
    }

    /// A Deployment whose pod template holds the annotations (README: "on the object or its
    /// pod template").
    fn deployment(ignore: &str, reason: Option<&str>) -> Value {
        let mut a = json!({ IGNORE_ANNOTATION: ignore });
        if let Some(r) = reason {
            a[IGNORE_REASON_ANNOTATION] = r.into();
        }
        json!({"kind": "Deployment", "metadata": {"name": "d", "namespace": "a"},
               "spec": {"template": {"metadata": {"annotations": a},
                        "spec": {"containers": [{"name": "c", "image": "x"}]}}}})
    }

    #[test]
    fn the_reason_on_a_pod_template_is_honoured() {
        let p = policy("exemptions: {requireReason: true}");
        let obj = deployment("all", Some("ticket 42"));
        let e = Exemptions::of(&obj, &p);
        assert_eq!(e.reason.as_deref(), Some("ticket 42"));
        assert_eq!(exempts(&p, &obj, "WIN001"), (true, None));
        // Without one, refused, and the note says what is missing and where it may go.
        let (ok, why) = exempts(&p, &deployment("all", None), "WIN001");
        let why = why.unwrap();
        assert!(!ok);
        assert!(why.contains(IGNORE_REASON_ANNOTATION) && why.contains("pod template"));
        assert!(why.contains("exemptions.requireReason"), "{why}");
        // Blank: none.
        assert!(!exempts(&p, &deployment("all", Some("  ")), "WIN001").0);
    }

    #[test]
    fn unknown_rules_in_the_policy_are_errors() {
        let e = crate::config::Config::from_yaml("exemptions: {rules: [WIN9999]}", "t");
        assert!(e.unwrap_err().to_string().contains("WIN9999"));
    }
}
