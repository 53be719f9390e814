//! WIN802 `required-field-missing`.

use serde_json::Value;

use crate::model::Eval;
use crate::model::meta::{Area, Mutation, Reads, RuleOs};
use crate::model::workload::{self, PodSite};
use crate::model::{Finding, RuleMeta, Severity};
use crate::rules::Rule;
use crate::rules::api::common::refuses;

/// WIN802 in the registry.
pub const RULE: Rule = Rule {
    meta: &WIN802,
    check: required_field_missing,
};

pub static WIN802: RuleMeta = RuleMeta {
    id: "WIN802",
    name: "required-field-missing",
    severity: Severity::Error,
    summary: "Pod spec without containers, or a container without an image (the API server refuses it)",
    docs: r#"## What it does
Reports a pod spec (a Pod's, or a workload's template) with no `containers`, and a container or
init container with no `image` (absent or empty). Kubernetes 1.32's `ValidatePodSpec` requires at
least one container (`spec.containers: Required value`), and `validateContainerCommon` requires
every container's image (`spec.containers[0].image: Required value`) for Pods and for the pod
templates of workloads alike (`ValidatePodTemplateSpec` runs the same container checks).

## Why is this bad?
The API server refuses the object. A StatefulSet is the exception: the API server does not
validate its template's pod spec (`ValidatePodTemplateSpecForStatefulSet`), so it accepts the
StatefulSet and refuses every pod the StatefulSet controller creates from it (`FailedCreate`). A DaemonSet or Deployment written with the image in a Helm
value that was never set, or with `image:` under the wrong key (`images:`, at the pod level),
renders to exactly this.

## Example
```yaml
containers:
- name: agent
  imagePullPolicy: IfNotPresent   # no image
```

## Fix
Give every container its `image`.
"#,
    fix: None,
    source: "Kubernetes API validation (core)",
    applies: "all",
    os: RuleOs::Any,
    default_on: true,
    reads: Reads::of(&[Area::Containers]),
    mutation: Mutation::DEFAULT,
};

fn required_field_missing(site: &PodSite, _eval: &Eval) -> Vec<Finding> {
    if !site.spec.is_object() {
        return Vec::new();
    }
    let mut out = Vec::new();
    if workload::list(site.spec, "containers").is_empty() {
        out.push(Finding::new(
            &WIN802,
            site.ptr("/containers"),
            format!(
                "the pod spec has no containers; {} (\"spec.containers: Required value\"). Add the containers the pod runs",
                refuses(site)
            ),
        ));
    }
    for c in site.containers() {
        if c.list == "ephemeralContainers" {
            continue;
        }
        let image = c.value.get("image");
        let missing = match image {
            None | Some(Value::Null) => true,
            Some(Value::String(s)) => s.is_empty(),
            Some(_) => false,
        };
        if missing {
            out.push(Finding::new(
                &WIN802,
                site.container_ptr(&c, "/image"),
                format!(
                    "{} has no image; {} (\"image: Required value\"). Set the container's image",
                    c.label(),
                    refuses(site)
                ),
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::testutil::{cfg, hit, hits, set, unset, winok};
    use serde_json::json;

    #[test]
    fn win802_containers_and_images_are_required() {
        assert!(hits(&winok(), &cfg(), "WIN802").is_empty());
        let p = unset(winok(), "/spec/containers/0/image");
        assert_eq!(
            hits(&p, &cfg(), "WIN802"),
            hit(Severity::Error, "/spec/containers/0/image")
        );
        let p = set(winok(), "/spec/containers/0/image", json!(""));
        assert_eq!(hits(&p, &cfg(), "WIN802").len(), 1);
        let p = set(winok(), "/spec/initContainers", json!([{"name": "init"}]));
        assert_eq!(
            hits(&p, &cfg(), "WIN802"),
            hit(Severity::Error, "/spec/initContainers/0/image")
        );
        let p = set(winok(), "/spec/containers", json!([]));
        assert_eq!(
            hits(&p, &cfg(), "WIN802"),
            hit(Severity::Error, "/spec/containers")
        );
        let d = json!({"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "d"},
            "spec": {"selector": {"matchLabels": {"a": "b"}}, "template": {
                "metadata": {"labels": {"a": "b"}},
                "spec": {"containers": [{"name": "agent"}]}}}});
        assert_eq!(
            hits(&d, &cfg(), "WIN802"),
            hit(Severity::Error, "/spec/template/spec/containers/0/image")
        );
    }
}
