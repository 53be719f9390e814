//! WIN303 `emptydir-memory`.

use crate::model::Eval;
use crate::model::meta::{Area, Mutation, Reads, Recorded, RuleOs};
use crate::model::workload::Lookup;
use crate::model::workload::PodSite;
use crate::model::{Finding, Fix, FixSafety, RuleMeta, Severity, ops};
use crate::rules::Rule;
use crate::rules::volumes::common::vol_name;
use serde_json::Value;

/// WIN303 in the registry.
pub const RULE: Rule = Rule {
    meta: &WIN303,
    check: emptydir_memory,
};

// ---------------------------------------------------------------------------------------------
// WIN303

pub static WIN303: RuleMeta = RuleMeta {
    id: "WIN303",
    name: "emptydir-memory",
    severity: Severity::Error,
    summary: "emptyDir with medium: Memory (no tmpfs on Windows)",
    docs: r#"## What it does
Flags `spec.volumes[*].emptyDir.medium: Memory`.

## Why is this bad?
Windows has no tmpfs: memory-backed emptyDir volumes are not supported on Windows nodes, and the
volume cannot be set up.

## Example
```yaml
spec:
  volumes:
  - name: cache
    emptyDir: {medium: Memory}
```

## Fix
Opt-in: drop `medium` so the volume is disk-backed. This changes semantics (data goes to the
node's disk instead of RAM, and `sizeLimit` counts against ephemeral storage), so it is never
applied silently.
"#,
    fix: Some(FixSafety::OptIn),
    source: "K-STOR, K-INTRO, KEP116",
    applies: "all",
    os: RuleOs::Windows,
    default_on: true,
    reads: Reads::of(&[Area::Volumes]),
    mutation: Mutation::named(Recorded::EmptyDirMedium),
};

pub(crate) fn emptydir_memory(site: &PodSite, _eval: &Eval) -> Vec<Finding> {
    let mut out = Vec::new();
    for (i, v) in site.volumes() {
        if v.lookup("/emptyDir/medium").and_then(Value::as_str) != Some("Memory") {
            continue;
        }
        let p = site.ptr(&format!("/volumes/{i}/emptyDir/medium"));
        out.push(
            Finding::new(
                &WIN303,
                p.clone(),
                format!(
                    "emptyDir volume {:?} has medium: Memory; Windows has no tmpfs, so memory-backed emptyDir is unsupported. Drop `medium` (the volume becomes disk-backed)",
                    vol_name(v)
                ),
            )
            .with_fix(Fix {
                safety: FixSafety::OptIn,
                description: format!("remove emptyDir.medium of volume {:?}", vol_name(v)),
                ops: vec![ops::remove(&p)],
            }),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    use crate::rules::testutil::{cfg, findings, fixed, hit, hits, ids_in, set};
    use crate::rules::volumes::common::tests::OWN;
    use crate::rules::volumes::common::tests::pod_with;

    #[test]
    fn t22_emptydir_memory_opt_in_fix() {
        let pod = pod_with(
            json!({"name":"cache","emptyDir":{"medium":"Memory","sizeLimit":"64Mi"}}),
            json!({"name":"cache","mountPath":r"C:\cache"}),
        );
        assert_eq!(ids_in(&pod, &cfg(), OWN), vec!["WIN303"]);
        assert_eq!(
            hits(&pod, &cfg(), "WIN303"),
            hit(Severity::Error, "/spec/volumes/0/emptyDir/medium")
        );
        let fs = findings(&pod, &cfg());
        assert_eq!(fs[0].fix.as_ref().unwrap().safety, FixSafety::OptIn);
        let f = fixed(&pod, &cfg(), "WIN303");
        assert_eq!(
            f["spec"]["volumes"][0],
            json!({"name":"cache","emptyDir":{"sizeLimit":"64Mi"}})
        );
        // Not applied without opt-in.
        let c = cfg();
        let mut obj = pod.clone();
        let (_, applied) = crate::engine::fix::apply_fixes(&mut obj, &fs, &c);
        assert!(applied.is_empty());
        let disk = set(pod, "/spec/volumes/0/emptyDir", json!({}));
        assert!(hits(&disk, &cfg(), "WIN303").is_empty());
    }
}
