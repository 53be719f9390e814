//! WIN309 `mountpath-case-collision`.

use crate::model::Eval;
use crate::model::meta::{Area, Mutation, Reads, RuleOs};
use crate::model::paths::normalize_path;
use crate::model::workload::{PodSite, items};
use crate::model::{Finding, RuleMeta, Severity};
use crate::rules::Rule;
use crate::rules::volumes::common::injected_names;
use crate::rules::volumes::common::is_injected_mount;
use crate::rules::volumes::common::mount_path;
use crate::rules::volumes::common::mount_ptr;
use std::collections::HashMap;

/// WIN309 in the registry.
pub const RULE: Rule = Rule {
    meta: &WIN309,
    check: mountpath_case_collision,
};

// ---------------------------------------------------------------------------------------------
// WIN309

pub static WIN309: RuleMeta = RuleMeta {
    id: "WIN309",
    name: "mountpath-case-collision",
    severity: Severity::Error,
    summary: "Two mounts of one container whose paths are the same on Windows (case, separators, drive)",
    docs: r#"## What it does
Normalises the mount paths of each container as Windows sees them (default drive `c:` as the
kubelet adds it, `/` → `\`, repeated separators collapsed, lower case, no trailing `\`) and reports
mounts that collide with an earlier one.

## Why is this bad?
The API server's uniqueness check is case-sensitive (`C:\Data` ≠ `c:/data/`), NTFS is not: both
volumes target the same directory and the container fails to start, or one mount hides the other.

## Example
```yaml
volumeMounts:
- {name: a, mountPath: 'C:\Data'}
- {name: b, mountPath: 'c:/data/'}
```

## Fix
Give each mount its own directory.
"#,
    fix: None,
    source: "K-INTRO, KL-PATH",
    applies: "all",
    os: RuleOs::Windows,
    default_on: true,
    reads: Reads::of(&[Area::Containers, Area::Volumes]),
    mutation: Mutation::DEFAULT,
};

pub(crate) fn mountpath_case_collision(site: &PodSite, _eval: &Eval) -> Vec<Finding> {
    let injected = injected_names(site);
    let mut out = Vec::new();
    for c in site.containers() {
        // Normalised path → the first mount at it (index, path as written). A mount that
        // collides is not recorded, so every recorded mount of one normalised path is spelt
        // as the first: the first is the only spelling to compare with (linear, where a list
        // of the mounts seen was mounts² for one container's thousands of mounts).
        let mut seen: HashMap<String, (usize, &str)> = HashMap::new();
        for (i, m) in items(c.value, "volumeMounts").enumerate() {
            let Some(path) = mount_path(m).filter(|p| !p.is_empty()) else {
                continue;
            };
            let norm = normalize_path(path);
            if let Some(&(j, first)) = seen.get(&norm).filter(|(_, raw)| *raw != path) {
                // Point at the mount the user wrote, never at the injected one.
                let at = if is_injected_mount(m, &injected) {
                    j
                } else {
                    i
                };
                out.push(Finding::new(
                    &WIN309,
                    mount_ptr(site, &c, at, "mountPath"),
                    format!(
                        "{} mounts {path:?} and {first:?}, which are the same directory on Windows ({norm}); paths are case-insensitive there. Use distinct directories",
                        c.label()
                    ),
                ));
                continue;
            }
            seen.entry(norm).or_insert((i, path));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    use crate::rules::testutil::{cfg, hit, hits, ids_in, set, unset, winok};
    use crate::rules::volumes::common::tests::OWN;

    #[test]
    fn t21_case_collision() {
        let pod = set(
            winok(),
            "/spec/volumes",
            json!([{"name":"a","emptyDir":{}},{"name":"b","emptyDir":{}}]),
        );
        let pod = set(
            pod,
            "/spec/containers/0/volumeMounts",
            json!([{"name":"a","mountPath":r"C:\Data"},{"name":"b","mountPath":"c:/data/"}]),
        );
        assert_eq!(ids_in(&pod, &cfg(), OWN), vec!["WIN309"]);
        assert_eq!(
            hits(&pod, &cfg(), "WIN309"),
            hit(
                Severity::Error,
                "/spec/containers/0/volumeMounts/1/mountPath"
            )
        );
        // Drive added by the kubelet: /data and C:\data collide as well.
        let p2 = set(
            pod.clone(),
            "/spec/containers/0/volumeMounts/1/mountPath",
            json!("/DATA"),
        );
        assert_eq!(hits(&p2, &cfg(), "WIN309").len(), 1);
        // Different containers do not collide.
        let p3 = set(
            unset(pod.clone(), "/spec/containers/0/volumeMounts"),
            "/spec/containers/0/volumeMounts",
            json!([{"name":"a","mountPath":r"C:\Data"}]),
        );
        let p3 = set(
            p3,
            "/spec/containers/1",
            json!({"name":"b","image":"mcr.microsoft.com/windows/servercore:ltsc2022",
                "volumeMounts":[{"name":"b","mountPath":"c:/data/"}]}),
        );
        assert!(hits(&p3, &cfg(), "WIN309").is_empty());
    }
}
