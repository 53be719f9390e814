//! WIN104 `windowsoptions-on-linux-pod`.

use crate::model::Eval;
use crate::model::api_fields::{self};
use crate::model::meta::{Area, Mutation, Reads, RuleOs};
use crate::model::pod::{self};
use crate::model::workload::Lookup;
use crate::model::workload::PodSite;
use crate::model::{Finding, RuleMeta, Severity};
use crate::rules::Rule;

/// WIN104 in the registry.
pub const RULE: Rule = Rule {
    meta: &WIN104,
    check: windowsoptions_on_linux_pod,
};

// ---------------------------------------------------------------------------------------------
// WIN104: validateLinux

pub static WIN104: RuleMeta = RuleMeta {
    id: "WIN104",
    name: "windowsoptions-on-linux-pod",
    severity: Severity::Error,
    summary: "securityContext.windowsOptions on a pod with spec.os.name: linux",
    docs: r#"## What it does
On pods that declare `spec.os.name: linux`, finds `spec.securityContext.windowsOptions` and every
container's `securityContext.windowsOptions` (`validateLinux`). This rule runs on Linux pods.

## Why is this bad?
The API server rejects the pod: "windows options cannot be set for a linux pod". Usually a Windows
pod template was copied and its `spec.os` was not changed, or a Linux pod inherited Windows settings
from a shared Helm value.

## Example
```yaml
spec:
  os: {name: linux}
  securityContext:
    windowsOptions: {runAsUserName: ContainerUser}
```

## Fix
Remove `windowsOptions`, or, if the pod is meant for Windows, set `spec.os.name: windows`.
"#,
    fix: None,
    source: "VAL",
    applies: "K>=1.24 (1.23 with IdentifyPodOS)",
    os: RuleOs::Any,
    default_on: true,
    reads: Reads::of(&[Area::Containers, Area::PodSecurityContext, Area::Os]),
    mutation: Mutation::DEFAULT,
};

pub(crate) fn windowsoptions_on_linux_pod(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    if site.str("/os/name") != Some("linux") || !pod::spec_os_available(eval.target) {
        return Vec::new();
    }
    let msg = |p: &str| {
        let path = pod::dotted(p);
        format!(
            "{path} cannot be set for a linux pod: the API server rejects the pod ({}); remove it, or set spec.os.name: windows if this is a Windows pod",
            api_fields::forbidden(&path, "windows options cannot be set for a linux pod")
        )
    };
    let mut out = Vec::new();
    if site.get("/securityContext/windowsOptions").is_some() {
        let p = site.ptr("/securityContext/windowsOptions");
        out.push(Finding::new(&WIN104, p.clone(), msg(&p)));
    }
    for c in site.containers() {
        if c.value
            .lookup("/securityContext/windowsOptions")
            .is_some_and(|v| !v.is_null())
        {
            let p = site.ptr(&format!("{}/securityContext/windowsOptions", c.rel()));
            out.push(Finding::new(&WIN104, p.clone(), msg(&p)));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    use crate::rules::security::common::tests::OWN;
    use crate::rules::testutil::{at, cfg, ids_in, only, set, unset, winok};

    #[test]
    fn t50_windows_options_on_linux_pod() {
        let pod = json!({"kind":"Pod","metadata":{"name":"l"},"spec":{"os":{"name":"linux"},
            "securityContext":{"windowsOptions":{"runAsUserName":"ContainerUser"}},
            "containers":[{"name":"a","image":"nginx:1.25"}]}});
        assert_eq!(ids_in(&pod, &cfg(), OWN), ["WIN104"]);
        let f = &only(&pod, &cfg(), "WIN104")[0];
        assert_eq!(f.pointer, "/spec/securityContext/windowsOptions");
        assert_eq!(f.severity, Severity::Error);
        assert!(
            f.message
                .contains("windows options cannot be set for a linux pod")
        );
        // Container-level too.
        let pod = set(
            unset(pod, "/spec/securityContext"),
            "/spec/containers/0/securityContext/windowsOptions",
            json!({"hostProcess":false}),
        );
        let f = &only(&pod, &cfg(), "WIN104")[0];
        assert_eq!(
            f.pointer,
            "/spec/containers/0/securityContext/windowsOptions"
        );
        // Before spec.os exists the API server does not validate by OS.
        assert!(only(&pod, &at(22), "WIN104").is_empty());
        // Windows pods with windowsOptions: not this rule.
        let win = set(
            winok(),
            "/spec/securityContext/windowsOptions",
            json!({"runAsUserName":"ContainerUser"}),
        );
        assert!(ids_in(&win, &cfg(), OWN).is_empty());
    }
}
