//! WIN401 `multi-container-ws2016`.

use crate::model::Eval;
use crate::model::meta::{Area, Mutation, Reads, RuleOs};
use crate::model::windows;
use crate::model::workload::{PodSite, list};
use crate::model::{Finding, RuleMeta, Severity};
use crate::rules::Rule;

/// WIN401 in the registry.
pub const RULE: Rule = Rule {
    meta: &WIN401,
    check: multi_container_ws2016,
};

// ---------------------------------------------------------------------------------------------
// WIN401, WIN402 (legacy platform limits)

pub static WIN401: RuleMeta = RuleMeta {
    id: "WIN401",
    name: "multi-container-ws2016",
    severity: Severity::Error,
    summary: "More than one container per pod on Windows Server 2016 nodes",
    docs: r#"## What it does
When the target has Windows Server 2016 (10.0.14393) nodes, reports pods with more than one
container (error) and pods with init containers (warning).

## Why is this bad?
"Only Windows Server 1709 or later versions support running multiple containers in a Pod": on
WS2016 the containers of a pod cannot share the pod's network namespace, so the pod fails.

## Example
```yaml
spec:
  containers:
  - {name: web, image: microsoft/iis:windowsservercore-ltsc2016}
  - {name: logger, image: microsoft/windowsservercore:ltsc2016}
```

## Fix
Split the containers into separate pods, or move to Windows Server 1709/2019 or newer nodes.

## Severity
`error` for several containers on Windows Server 2016; `warning` for init containers there, which
may fail.
"#,
    fix: None,
    source: "seed, K-OLD11",
    applies: "W=14393",
    os: RuleOs::Windows,
    default_on: true,
    reads: Reads::of(&[Area::Containers]),
    mutation: Mutation::DEFAULT,
};

pub(crate) fn multi_container_ws2016(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    if !eval.target.windows_builds.contains(&windows::WS2016) {
        return Vec::new();
    }
    let mut out = Vec::new();
    let n = list(site.spec, "containers").len();
    if n > 1 {
        out.push(Finding::new(
            &WIN401,
            site.ptr("/containers"),
            format!(
                "pod has {n} containers, but Windows Server 2016 (10.0.14393) runs only one container per pod; split them into separate pods or use 1709/2019+ nodes"
            ),
        ));
    }
    if !list(site.spec, "initContainers").is_empty() {
        out.push(
            Finding::new(
                &WIN401,
                site.ptr("/initContainers"),
                "pod has init containers, but Windows Server 2016 (10.0.14393) supports only one container per pod; init containers may fail there. Move the init step into the image or use 1709/2019+ nodes",
            )
            .severity(Severity::Warning),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::legacy::common::tests::OWN;
    use crate::rules::testutil::{hit, hits, ids_in, legacy, set, unset};
    use serde_json::{Value, json};

    pub(crate) fn t33_pod() -> Value {
        json!({"apiVersion":"v1","kind":"Pod","metadata":{"name":"two"},"spec":{
            "nodeSelector":{"beta.kubernetes.io/os":"windows"},
            "containers":[
                {"name":"a","image":"microsoft/windowsservercore:ltsc2016"},
                {"name":"b","image":"microsoft/windowsservercore:ltsc2016"}]}})
    }

    #[test]
    fn t33_two_containers_on_ws2016() {
        let mut t = legacy();
        t.target.windows_builds = vec![windows::WS2016];
        // Expected [WIN401, WIN504]; WIN504 belongs to the image rules.
        assert_eq!(ids_in(&t33_pod(), &t, OWN), vec!["WIN401"]);
        assert_eq!(
            hits(&t33_pod(), &t, "WIN401"),
            hit(Severity::Error, "/spec/containers")
        );
        // 1709 runs several containers per pod.
        assert!(hits(&t33_pod(), &legacy(), "WIN401").is_empty());
        // Init containers: warning.
        let init = set(
            unset(t33_pod(), "/spec/containers/1"),
            "/spec/initContainers",
            json!([{"name":"i","image":"microsoft/windowsservercore:ltsc2016"}]),
        );
        let init = set(
            init,
            "/spec/containers",
            json!([{"name":"a","image":"microsoft/windowsservercore:ltsc2016"}]),
        );
        assert_eq!(
            hits(&init, &t, "WIN401"),
            hit(Severity::Warning, "/spec/initContainers")
        );
    }
}
