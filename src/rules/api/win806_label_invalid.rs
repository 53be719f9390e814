//! WIN806 `label-invalid`.

use serde_json::Value;

use crate::model::Eval;
use crate::model::meta::{Area, Mutation, Reads, RuleOs};
use crate::model::names::{label_value_errors, qualified_name_errors};
use crate::model::pointer::escape;
use crate::model::workload::{Lookup, PodSite};
use crate::model::{Finding, RuleMeta, Severity};
use crate::rules::Rule;

/// WIN806 in the registry.
pub const RULE: Rule = Rule {
    meta: &WIN806,
    check: label_invalid,
};

pub static WIN806: RuleMeta = RuleMeta {
    id: "WIN806",
    name: "label-invalid",
    severity: Severity::Error,
    summary: "Label key or value the API server refuses (syntax, length, not a string)",
    docs: r#"## What it does
Checks the labels of the object, of its pod template, and of its selector's `matchLabels` as
Kubernetes 1.32's `ValidateLabels` (`ValidateObjectMeta`, `ValidateLabelSelector`) does:

* a key is a qualified name (`IsQualifiedName`): an optional DNS-1123 subdomain prefix and `/`,
  then at most 63 alphanumerics, `-`, `_`, `.`, alphanumeric at both ends;
* a value is empty or at most 63 such characters (`IsValidLabelValue`);
* a value is a string: `version: 1.0` or `enabled: true` in YAML is a number or a boolean, which
  does not decode into a label (`cannot unmarshal number into Go struct field … of type string`).

## Why is this bad?
The API server refuses the object. Windows manifests put build numbers and image tags into labels
(`os-version: 10.0.17763.2114+`, `image: servercore:ltsc2022`), which `+` and `:` make invalid.

## Example
```yaml
metadata:
  labels:
    image: servercore:ltsc2022
    version: 1.0
```

## Fix
Keep to letters, digits, `-`, `_` and `.`; quote numbers (`version: "1.0"`); put free text in
annotations.
"#,
    fix: None,
    source: "Kubernetes API validation (apimachinery)",
    applies: "all",
    os: RuleOs::Any,
    default_on: true,
    reads: Reads::of(&[Area::Labels]),
    mutation: Mutation::DEFAULT,
};

fn label_invalid(site: &PodSite, _eval: &Eval) -> Vec<Finding> {
    let mut places = vec!["/metadata/labels".to_string()];
    let template = site.meta_ptr("/labels");
    if !places.contains(&template) {
        places.push(template);
    }
    // A CronJob's Job template's own labels are not validated with the CronJob
    // (`ValidateJobTemplateSpec` checks its spec only): not judged here.
    match site.kind {
        "ReplicationController" => places.push("/spec/selector".into()),
        "Pod" | "PodTemplate" | "CronJob" => {}
        _ => places.push("/spec/selector/matchLabels".into()),
    }
    let mut out = Vec::new();
    for place in places {
        let Some(labels) = site.object.lookup(&place).and_then(Value::as_object) else {
            continue;
        };
        for (key, value) in labels {
            let ptr = format!("{place}/{}", escape(key));
            let errs = qualified_name_errors(key);
            if !errs.is_empty() {
                out.push(Finding::new(
                    &WIN806,
                    ptr.clone(),
                    format!(
                        "label key {key:?} is not a qualified name ({}); the API server refuses the {}",
                        errs.join("; "),
                        site.kind
                    ),
                ));
            }
            let msg = match value {
                Value::String(s) => {
                    let errs = label_value_errors(s);
                    if errs.is_empty() {
                        continue;
                    }
                    format!(
                        "label {key}'s value {s:?} is not a valid label value ({}); the API server refuses the {}. Keep to letters, digits, '-', '_' and '.' (or move it to an annotation)",
                        errs.join("; "),
                        site.kind
                    )
                }
                Value::Null => continue,
                other => format!(
                    "label {key}'s value {other} is not a string (YAML reads it as a {}); it does not decode into a label and the {} is refused. Quote it: \"{other}\"",
                    if other.is_boolean() {
                        "boolean"
                    } else {
                        "number"
                    },
                    site.kind
                ),
            };
            out.push(Finding::new(&WIN806, ptr, msg));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::testutil::{cfg, hit, hits, set, winok};
    use serde_json::json;

    #[test]
    fn win806_label_keys_and_values() {
        let ok = set(
            winok(),
            "/metadata/labels",
            json!({"app.kubernetes.io/name": "web", "v": "1.0", "empty": ""}),
        );
        assert!(hits(&ok, &cfg(), "WIN806").is_empty());
        let bad = set(
            winok(),
            "/metadata/labels",
            json!({"image": "servercore:ltsc2022"}),
        );
        assert_eq!(
            hits(&bad, &cfg(), "WIN806"),
            hit(Severity::Error, "/metadata/labels/image")
        );
        let num = set(winok(), "/metadata/labels", json!({"version": 1.0}));
        assert_eq!(hits(&num, &cfg(), "WIN806").len(), 1);
        let key = set(winok(), "/metadata/labels", json!({"my app": "x"}));
        assert_eq!(hits(&key, &cfg(), "WIN806").len(), 1);
        let d = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
            "spec": {"selector": {"matchLabels": {"os": "win 2022"}},
                "template": {"metadata": {"labels": {"os": "win 2022"}}, "spec": winok()["spec"].clone()}}});
        let mut h = hits(&d, &cfg(), "WIN806");
        h.sort();
        assert_eq!(
            h.iter().map(|(_, p)| p.as_str()).collect::<Vec<_>>(),
            vec![
                "/spec/selector/matchLabels/os",
                "/spec/template/metadata/labels/os"
            ]
        );
    }
}
