//! WIN308 `mountpath-not-windows-style`.

use crate::model::Eval;
use crate::model::meta::{Area, Mutation, Reads, RuleOs};
use crate::model::paths::make_absolute;
use crate::model::pod;
use crate::model::workload::PodSite;
use crate::model::{Finding, Fix, FixSafety, RuleMeta, Severity, ops};
use crate::rules::Rule;
use crate::rules::volumes::common::injected_names;
use crate::rules::volumes::common::is_injected_mount;
use crate::rules::volumes::common::mount_path;
use crate::rules::volumes::common::mount_ptr;
use crate::rules::volumes::common::mounts;
use serde_json::json;

/// WIN308 in the registry.
pub const RULE: Rule = Rule {
    meta: &WIN308,
    check: mountpath_not_windows_style,
};

// ---------------------------------------------------------------------------------------------
// WIN308

pub static WIN308: RuleMeta = RuleMeta {
    id: "WIN308",
    name: "mountpath-not-windows-style",
    severity: Severity::Info,
    summary: "mountPath without a drive letter (the kubelet maps /x to c:/x); off by default",
    docs: r#"## What it does
**Off by default**: enable it with `rules: {WIN308: on}` in `winlint.yaml` or `--enable WIN308`.
Reports `volumeMounts[].mountPath` values that are neither drive-qualified (`C:\data`) nor UNC
(`\\.\pipe\x`): `/data` or `\data` (mapped to `c:/data`) and relative `data` (mapped to
`c:\data`). HostProcess pods and the ServiceAccount token mount the API server injects are not
reported.

## Why is this bad?
Usually it is not: `/data` already means `C:\data` to the kubelet (`MakeAbsolutePath`), and the
maintained Windows manifests (CNI, CSI, kube-proxy DaemonSets) write root-relative paths on purpose.
It matters where code or configuration expects the Linux path, or two mounts differ only by drive.
On very old Kubernetes (≤ 1.8) such paths failed (warning there).

## Example
```yaml
volumeMounts:
- {name: cache, mountPath: /cache}
```

## Fix
Safe with `winlint --fix` when the rule is enabled: prefix `C:` (`/cache` → `C:/cache`), which is
exactly what the kubelet does. Never applied by the admission webhook (it would rewrite upstream
manifests for nothing).

## Severity
`info` from Kubernetes 1.9 on, where the kubelet makes the path absolute on `C:`; `warning` on
Kubernetes ≤ 1.8, where such a path failed.
"#,
    fix: Some(FixSafety::Safe),
    source: "KL-PATH, K-EX, issue-9 research §3",
    applies: "all (warning K≤1.8); off by default",
    os: RuleOs::Windows,
    default_on: false,
    reads: Reads::of(&[Area::Containers, Area::Volumes, Area::PodSecurityContext]),
    mutation: Mutation::DEFAULT,
};

pub(crate) fn mountpath_not_windows_style(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    // In a HostProcess container a mount lands under %CONTAINER_SANDBOX_MOUNT_POINT% (containerd
    // 1.6, or 1.7 with symlink mounts), not at C:\x: the rule's story does not apply.
    if pod::is_host_process_pod(site) {
        return Vec::new();
    }
    let injected = injected_names(site);
    let sev = if eval.target.kubernetes.at_least(1, 9) {
        Severity::Info
    } else {
        Severity::Warning
    };
    let mut out = Vec::new();
    for (c, i, m) in mounts(site) {
        let Some(path) = mount_path(m) else { continue };
        if path.is_empty()
            || path.contains(':')
            || path.starts_with(r"\\")
            || is_injected_mount(m, &injected)
        {
            continue;
        }
        let fixed = if path.starts_with('/') || path.starts_with('\\') {
            format!("C:{path}")
        } else {
            format!("C:\\{path}")
        };
        let p = mount_ptr(site, &c, i, "mountPath");
        out.push(
            Finding::new(
                &WIN308,
                p.clone(),
                format!(
                    "{} mountPath {path:?} has no drive letter; the kubelet mounts it at {:?}. Write {fixed:?}",
                    c.label(),
                    make_absolute(path)
                ),
            )
            .severity(sev)
            .with_fix(Fix {
                safety: FixSafety::Safe,
                description: format!("set mountPath {path:?} to {fixed:?}"),
                ops: vec![ops::replace(&p, json!(fixed))],
            }),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::KubeVersion;
    use crate::rules::testutil::{cfg, findings, fixed, hit, hits, ids_in, set};
    use crate::rules::volumes::common::tests::OWN;
    use crate::rules::volumes::common::tests::cfg308;
    use crate::rules::volumes::common::tests::empty_dir_at;
    use serde_json::json;

    #[test]
    fn t20_posix_mountpath_info_with_safe_fix() {
        let pod = empty_dir_at("/data");
        // Off by default: `/data` already means C:\data.
        assert_eq!(ids_in(&pod, &cfg(), OWN), Vec::<&str>::new());
        let cfg = cfg308();
        assert_eq!(ids_in(&pod, &cfg, OWN), vec!["WIN308"]);
        assert_eq!(
            hits(&pod, &cfg, "WIN308"),
            hit(
                Severity::Info,
                "/spec/containers/0/volumeMounts/0/mountPath"
            )
        );
        let f = fixed(&pod, &cfg, "WIN308");
        assert_eq!(
            f["spec"]["containers"][0]["volumeMounts"][0]["mountPath"],
            "C:/data"
        );
        assert_eq!(ids_in(&f, &cfg, OWN), Vec::<&str>::new());
        // Relative: the kubelet uses c:\x.
        let rel = fixed(&empty_dir_at("data"), &cfg, "WIN308");
        assert_eq!(
            rel["spec"]["containers"][0]["volumeMounts"][0]["mountPath"],
            "C:\\data"
        );
        // K ≤ 1.8: warning.
        let mut old = cfg.clone();
        old.target.kubernetes = KubeVersion::new(1, 8);
        assert_eq!(hits(&pod, &old, "WIN308")[0].0, Severity::Warning);
        // `--fix` applies it when enabled; the webhook never does.
        let fs = findings(&pod, &cfg);
        let mut obj = pod.clone();
        let (_, applied) = crate::engine::fix::apply_fixes(&mut obj, &fs, &cfg);
        assert!(applied.contains(&"WIN308"));
        assert_eq!(obj, f);
        let mut obj = pod.clone();
        let m = crate::engine::mutation::mutate(&mut obj, &cfg);
        assert!(!m.rules.contains(&"WIN308"), "{:?}", m.rules);
        assert_eq!(
            obj["spec"]["containers"][0]["volumeMounts"][0]["mountPath"],
            "/data"
        );
        // HostProcess pods: mounts land under %CONTAINER_SANDBOX_MOUNT_POINT%, not at C:\x.
        let hpc = set(
            set(pod, "/spec/hostNetwork", json!(true)),
            "/spec/securityContext/windowsOptions",
            json!({"hostProcess": true, "runAsUserName": "NT AUTHORITY\\SYSTEM"}),
        );
        assert!(hits(&hpc, &cfg, "WIN308").is_empty());
    }

    #[test]
    fn win308_skips_drive_unc_and_pipes() {
        for p in [
            r"C:\data",
            "d:/x",
            r"\\.\pipe\docker_engine",
            r"\\server\share",
        ] {
            assert!(
                hits(&empty_dir_at(p), &cfg308(), "WIN308").is_empty(),
                "{p}"
            );
        }
        assert_eq!(hits(&empty_dir_at(r"\data"), &cfg308(), "WIN308").len(), 1);
    }
}
