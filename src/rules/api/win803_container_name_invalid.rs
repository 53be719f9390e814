//! WIN803 `container-name-invalid`.

use std::collections::HashMap;

use serde_json::Value;

use crate::model::Eval;
use crate::model::meta::{Area, Mutation, Reads, RuleOs};
use crate::model::names::dns1123_label_errors;
use crate::model::workload::PodSite;
use crate::model::{Finding, RuleMeta, Severity};
use crate::rules::Rule;
use crate::rules::api::common::refuses;

/// WIN803 in the registry.
pub const RULE: Rule = Rule {
    meta: &WIN803,
    check: container_name_invalid,
};

pub static WIN803: RuleMeta = RuleMeta {
    id: "WIN803",
    name: "container-name-invalid",
    severity: Severity::Error,
    summary: "Container name missing, not a DNS-1123 label, or used twice in the pod (the API server refuses it)",
    docs: r#"## What it does
Checks the `name` of every container and init container as Kubernetes 1.32's
`validateContainerCommon` and `validateContainers` / `validateInitContainers` do: it is required,
must be a DNS-1123 label (`IsDNS1123Label`: at most 63 lower-case letters, digits and `-`,
alphanumeric at both ends), and must be unique among the pod's containers and init containers
together (`Duplicate value`).

## Why is this bad?
The API server refuses the object. A StatefulSet is the exception: the API server does not
validate its template's pod spec (`ValidatePodTemplateSpecForStatefulSet`), so it accepts the
StatefulSet and refuses every pod the StatefulSet controller creates from it (`FailedCreate`). Windows manifests often name containers after their
executable or service (`IIS_Site`, `WebApp.Api`), which are not DNS labels.

## Example
```yaml
containers:
- name: IIS_Site
  image: mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2022
```

## Fix
Use lower-case letters, digits and `-` (`iis-site`), one name per container.
"#,
    fix: None,
    source: "Kubernetes API validation (core)",
    applies: "all",
    os: RuleOs::Any,
    default_on: true,
    reads: Reads::of(&[Area::Containers]),
    mutation: Mutation::DEFAULT,
};

fn container_name_invalid(site: &PodSite, _eval: &Eval) -> Vec<Finding> {
    let mut out = Vec::new();
    let mut seen: HashMap<&str, String> = HashMap::new();
    // `ValidatePodSpec` checks the containers first, then the init containers against them.
    let ordered = site
        .containers()
        .filter(|c| c.list == "containers")
        .chain(site.containers().filter(|c| c.list == "initContainers"));
    for c in ordered {
        let ptr = site.container_ptr(&c, "/name");
        let what = match c.list {
            "initContainers" => "init container",
            _ => "container",
        };
        let name = match c.value.get("name") {
            Some(Value::String(s)) if !s.is_empty() => s.as_str(),
            _ => {
                out.push(Finding::new(
                    &WIN803,
                    ptr,
                    format!("{what} {} has no name; {} (\"name: Required value\"). Name it with a DNS-1123 label", c.rel(), refuses(site)),
                ));
                continue;
            }
        };
        let errs = dns1123_label_errors(name);
        if !errs.is_empty() {
            out.push(Finding::new(
                &WIN803,
                ptr.clone(),
                format!(
                    "{what} name {name:?} is not a DNS-1123 label ({}); {}. Use lower-case letters, digits and '-', e.g. {}",
                    errs.join("; "),
                    refuses(site),
                    suggest(name)
                ),
            ));
        }
        if let Some(first) = seen.get(name) {
            out.push(Finding::new(
                &WIN803,
                ptr,
                format!(
                    "{what} name {name:?} is already used at {first}; {} (\"Duplicate value\"). Give each container its own name",
                    refuses(site)
                ),
            ));
        } else {
            seen.insert(name, site.container_ptr(&c, ""));
        }
    }
    out
}

/// A DNS-1123 label close to `name`: lower case, other characters as `-`, trimmed.
fn suggest(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    let s = s.trim_matches('-');
    let s = if s.len() > 63 { &s[..63] } else { s };
    s.trim_end_matches('-').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::testutil::{cfg, hit, hits, set, winok};
    use serde_json::json;

    #[test]
    fn win803_names_are_unique_dns_labels() {
        assert!(hits(&winok(), &cfg(), "WIN803").is_empty());
        let p = set(winok(), "/spec/containers/0/name", json!("IIS_Site"));
        assert_eq!(
            hits(&p, &cfg(), "WIN803"),
            hit(Severity::Error, "/spec/containers/0/name")
        );
        assert_eq!(suggest("IIS_Site"), "iis-site");
        let p = set(
            winok(),
            "/spec/initContainers",
            json!([{"name": "app", "image": "x"}]),
        );
        assert_eq!(
            hits(&p, &cfg(), "WIN803"),
            hit(Severity::Error, "/spec/initContainers/0/name")
        );
        let p = set(winok(), "/spec/containers/0/name", json!(""));
        assert_eq!(hits(&p, &cfg(), "WIN803").len(), 1);
    }
}
