//! WIN009 `runtimeclass-selector-conflict`.

use crate::model::meta::{Area, Mutation, Reads, RuleOs};
use crate::model::workload::PodSite;
use crate::model::{Eval, escape};
use crate::model::{Finding, RuleMeta, Severity};
use crate::rules::Rule;

/// WIN009 in the registry.
pub const RULE: Rule = Rule {
    meta: &WIN009,
    check: runtimeclass_selector_conflict,
};

pub static WIN009: RuleMeta = RuleMeta {
    id: "WIN009",
    name: "runtimeclass-selector-conflict",
    severity: Severity::Error,
    summary: "Pod nodeSelector conflicts with the nodeSelector its RuntimeClass merges in",
    docs: r#"## What it does
When the pod's RuntimeClass is known (a RuntimeClass object in the same input), checks that no key of
the RuntimeClass's `scheduling.nodeSelector` is also in the pod's `nodeSelector` with another value.

## Why is this bad?
RuntimeClass admission merges the RuntimeClass's selector into the pod; "If there is a conflict, the
pod will be rejected".

## Example
```yaml
spec:
  runtimeClassName: windows-2019   # selects node.kubernetes.io/windows-build: 10.0.17763
  nodeSelector:
    node.kubernetes.io/windows-build: 10.0.20348
```

## Fix
Remove the key from the pod, or use a RuntimeClass that agrees.
"#,
    fix: None,
    source: "K-RC",
    applies: "K>=1.16",
    os: RuleOs::Windows,
    default_on: true,
    reads: Reads::of(&[Area::NodeSelector, Area::RuntimeClass]),
    mutation: Mutation::DEFAULT,
};

pub(crate) fn runtimeclass_selector_conflict(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    if !eval.target.kubernetes.at_least(1, 16) {
        return Vec::new();
    }
    let Some(name) = site.str("/runtimeClassName") else {
        return Vec::new();
    };
    let Some(rc) = eval.context.runtime_classes.get(name) else {
        return Vec::new();
    };
    rc.node_selector
        .iter()
        .filter_map(|(k, v)| {
            let pod_v = site.node_selector(k)?;
            (pod_v != v).then(|| {
                Finding::new(
                    &WIN009,
                    site.ptr(&format!("/nodeSelector/{}", escape(k))),
                    format!(
                        "nodeSelector {k}={pod_v} conflicts with RuntimeClass {name:?} ({k}={v}); the API server's RuntimeClass admission rejects {} (\"conflict: runtimeClass.scheduling.nodeSelector[{k}] = {v}; pod.spec.nodeSelector[{k}] = {pod_v}\"). Remove the key from the pod",
                        if site.spec_ptr == "/spec" { "the pod" } else { "every pod the workload creates" }
                    ),
                )
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use crate::model::windows;

    use serde_json::json;

    use crate::rules::testutil::cfg;

    #[test]
    fn win009_and_win006_runtimeclass() {
        let mut cx = crate::model::Context::default();
        cx.add(&json!({"apiVersion":"node.k8s.io/v1","kind":"RuntimeClass","metadata":{"name":"windows-2019"},"handler":"h",
            "scheduling":{"nodeSelector":{"kubernetes.io/os":"windows","node.kubernetes.io/windows-build":"10.0.17763"},
            "tolerations":[{"effect":"NoSchedule","key":"os","operator":"Equal","value":"windows"}]}}));
        let pod = json!({"kind":"Pod","spec":{"os":{"name":"windows"},"runtimeClassName":"windows-2019",
            "nodeSelector":{"node.kubernetes.io/windows-build":"10.0.20348"},
            "containers":[{"name":"a","image":"mcr.microsoft.com/windows/servercore:ltsc2022"}]}});
        let mut c = cfg();
        c.target.windows_builds = vec![windows::WS2019, windows::WS2022];
        let r = crate::engine::lint_object(&pod, &c, &cx, crate::model::Operation::Lint);
        let got: Vec<&str> = r.findings.iter().map(|f| f.rule.id).collect();
        assert!(got.contains(&"WIN009"), "{got:?}");
        assert!(
            !got.contains(&"WIN001") && !got.contains(&"WIN007"),
            "RuntimeClass supplies OS pin and toleration: {got:?}"
        );
    }
}
