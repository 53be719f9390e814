//! WIN310 `unc-path`.

use crate::model::Eval;
use crate::model::meta::{Area, Mutation, Reads, RuleOs};
use crate::model::paths::is_smb_unc;
use crate::model::workload::Lookup;
use crate::model::workload::PodSite;
use crate::model::{Finding, RuleMeta, Severity};
use crate::rules::Rule;
use crate::rules::volumes::common::mount_path;
use crate::rules::volumes::common::mount_ptr;
use crate::rules::volumes::common::mounts;
use crate::rules::volumes::common::vol_name;
use serde_json::Value;

/// WIN310 in the registry.
pub const RULE: Rule = Rule {
    meta: &WIN310,
    check: unc_path,
};

// ---------------------------------------------------------------------------------------------
// WIN310

pub static WIN310: RuleMeta = RuleMeta {
    id: "WIN310",
    name: "unc-path",
    severity: Severity::Warning,
    summary: "hostPath or mountPath is a UNC share path (\\\\server\\share)",
    docs: r#"## What it does
Flags `hostPath.path` and `volumeMounts[].mountPath` values that start with `\\` and name an SMB
share (`\\server\share`), not a local named pipe (`\\.\pipe\…`) or device.

## Why is this bad?
The kubelet passes UNC paths through untouched (`IsWindowsUNCPath`), but the node's kubelet
account is usually not authenticated to the share, credentials cannot be given, and the mount is
not managed (no retry, no unmount). Whether it works depends on the node.

## Example
```yaml
volumes:
- name: share
  hostPath: {path: '\\fileserver\share'}
```

## Fix
Use the SMB CSI driver (`smb.csi.k8s.io`) with a Secret holding the credentials, through a
PersistentVolume/PersistentVolumeClaim.
"#,
    fix: None,
    source: "KL-PATH",
    applies: "all",
    os: RuleOs::Windows,
    default_on: true,
    reads: Reads::of(&[Area::Containers, Area::Volumes]),
    mutation: Mutation::DEFAULT,
};

pub(crate) fn unc_path(site: &PodSite, _eval: &Eval) -> Vec<Finding> {
    let mut out = Vec::new();
    for (i, v) in site.volumes() {
        if let Some(path) = v.lookup("/hostPath/path").and_then(Value::as_str)
            && is_smb_unc(path)
        {
            out.push(Finding::new(
                &WIN310,
                site.ptr(&format!("/volumes/{i}/hostPath/path")),
                format!(
                    "hostPath volume {:?} points at the SMB share {path:?}; the node must already be authenticated to it and nothing manages the mount. Use the SMB CSI driver (smb.csi.k8s.io) with a PVC",
                    vol_name(v)
                ),
            ));
        }
    }
    for (c, i, m) in mounts(site) {
        if let Some(path) = mount_path(m)
            && is_smb_unc(path)
        {
            out.push(Finding::new(
                &WIN310,
                mount_ptr(site, &c, i, "mountPath"),
                format!(
                    "{} mountPath {path:?} is an SMB share path; a container path cannot be a UNC share. Mount at a drive path (C:\\…) and use the SMB CSI driver for the share",
                    c.label()
                ),
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    use crate::rules::testutil::{cfg, hit, hits, ids_in};
    use crate::rules::volumes::common::tests::OWN;
    use crate::rules::volumes::common::tests::empty_dir_at;
    use crate::rules::volumes::common::tests::pod_with;

    #[test]
    fn t18_unc_hostpath() {
        let pod = pod_with(
            json!({"name":"share","hostPath":{"path":r"\\fileserver\share"}}),
            json!({"name":"share","mountPath":r"C:\data"}),
        );
        assert_eq!(ids_in(&pod, &cfg(), OWN), vec!["WIN310"]);
        assert_eq!(
            hits(&pod, &cfg(), "WIN310"),
            hit(Severity::Warning, "/spec/volumes/0/hostPath/path")
        );
    }

    #[test]
    fn win310_unc_mountpath() {
        let pod = empty_dir_at(r"\\server\share\x");
        assert_eq!(
            hits(&pod, &cfg(), "WIN310"),
            hit(
                Severity::Warning,
                "/spec/containers/0/volumeMounts/0/mountPath"
            )
        );
    }
}
