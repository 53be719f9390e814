//! WIN002 `deprecated-beta-os-label`.

use crate::model::labels::{BETA_ARCH_LABEL, BETA_OS_LABEL};
use crate::model::meta::{Area, Mutation, Reads, Recorded, RuleOs};
use crate::model::workload::PodSite;
use crate::model::{Eval, escape};
use crate::model::{Finding, Fix, FixSafety, RuleMeta, Severity, ops};
use crate::rules::Rule;
use serde_json::{Value, json};

/// WIN002 in the registry.
pub const RULE: Rule = Rule {
    meta: &WIN002,
    check: deprecated_beta_os_label,
};

pub static WIN002: RuleMeta = RuleMeta {
    id: "WIN002",
    name: "deprecated-beta-os-label",
    severity: Severity::Warning,
    summary: "Selector on the deprecated beta.kubernetes.io/os or beta.kubernetes.io/arch node label",
    docs: r#"## What it does
Finds `beta.kubernetes.io/os` and `beta.kubernetes.io/arch` in `nodeSelector` and node affinity.

## Why is this bad?
The beta labels are deprecated since Kubernetes 1.14; the API server answers every such pod with a
deprecation warning. The kubelet still sets both labels, so the selector still works.

## Example
```yaml
nodeSelector:
  beta.kubernetes.io/os: windows
```

## Fix
Safe: rename the key to `kubernetes.io/os` (`kubernetes.io/arch`).
"#,
    fix: Some(FixSafety::Safe),
    source: "WARN, KL-LBL",
    applies: "K>=1.14",
    os: RuleOs::Windows,
    default_on: true,
    reads: Reads::of(&[Area::NodeSelector, Area::Affinity]),
    mutation: Mutation::named(Recorded::BetaOsLabel),
};

pub(crate) fn deprecated_beta_os_label(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    if !eval.target.kubernetes.at_least(1, 14) {
        return Vec::new();
    }
    let mut out = Vec::new();
    for beta in [BETA_OS_LABEL, BETA_ARCH_LABEL] {
        let stable = beta.trim_start_matches("beta.");
        if let Some(v) = site.node_selector(beta) {
            let p = site.ptr(&format!("/nodeSelector/{}", escape(beta)));
            let mut fix_ops = vec![ops::remove(&p)];
            match site.node_selector(stable) {
                None => fix_ops.push(ops::add(
                    &site.ptr(&format!("/nodeSelector/{}", escape(stable))),
                    json!(v),
                )),
                Some(s) if s == v => {}
                Some(_) => fix_ops.clear(),
            }
            let mut f = Finding::new(
                &WIN002,
                p,
                format!(
                    "nodeSelector {beta} is deprecated since Kubernetes 1.14 and draws an API warning on every pod; use {stable}: {v}"
                ),
            );
            if !fix_ops.is_empty() {
                f = f.with_fix(Fix {
                    safety: FixSafety::Safe,
                    description: format!("rename {beta} to {stable}"),
                    ops: fix_ops,
                });
            }
            out.push(f);
        }
    }
    for (base, terms) in [
        (
            "/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution/nodeSelectorTerms",
            None,
        ),
        (
            "/affinity/nodeAffinity/preferredDuringSchedulingIgnoredDuringExecution",
            Some("/preference"),
        ),
    ] {
        let Some(list) = site.get(base).and_then(Value::as_array) else {
            continue;
        };
        for (i, t) in list.iter().enumerate() {
            let term_rel = format!("{base}/{i}{}", terms.unwrap_or(""));
            let term = if terms.is_some() {
                t.get("preference")
            } else {
                Some(t)
            };
            for field in ["matchExpressions", "matchFields"] {
                let exprs = term.and_then(|t| t.get(field)).and_then(Value::as_array);
                for (j, e) in exprs.into_iter().flatten().enumerate() {
                    let key = e.get("key").and_then(Value::as_str).unwrap_or("");
                    if key == BETA_OS_LABEL || key == BETA_ARCH_LABEL {
                        let stable = key.trim_start_matches("beta.");
                        let p = site.ptr(&format!("{term_rel}/{field}/{j}/key"));
                        out.push(
                            Finding::new(
                                &WIN002,
                                p.clone(),
                                format!("node affinity key {key} is deprecated since Kubernetes 1.14; use {stable}"),
                            )
                            .with_fix(Fix {
                                safety: FixSafety::Safe,
                                description: format!("rename {key} to {stable}"),
                                ops: vec![ops::replace(&p, json!(stable))],
                            }),
                        );
                    }
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {

    use serde_json::json;

    use crate::rules::testutil::{cfg, findings, ids, set, winok};

    #[test]
    fn win002_renames_beta_key() {
        let pod = set(
            winok(),
            "/spec/nodeSelector",
            json!({"beta.kubernetes.io/os":"windows"}),
        );
        let fs = findings(&pod, &cfg());
        let f = fs.iter().find(|f| f.rule.id == "WIN002").expect("WIN002");
        assert_eq!(f.pointer, "/spec/nodeSelector/beta.kubernetes.io~1os");
        let mut fixed = pod.clone();
        json_patch::patch(&mut fixed, &f.fix.as_ref().unwrap().ops).unwrap();
        assert_eq!(
            fixed["spec"]["nodeSelector"],
            json!({"kubernetes.io/os":"windows"})
        );
        let mut old = cfg();
        old.target.kubernetes = crate::model::KubeVersion::new(1, 12);
        assert!(!ids(&pod, &old).contains(&"WIN002"));
    }
}
