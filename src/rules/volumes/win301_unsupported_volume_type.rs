//! WIN301 `unsupported-volume-type`.

use crate::model::Eval;
use crate::model::meta::{Area, Mutation, Reads, RuleOs};
use crate::model::workload::PodSite;
use crate::model::{Finding, RuleMeta, Severity};
use crate::rules::Rule;
use crate::rules::volumes::common::vol_name;
use crate::rules::volumes::common::volume_type;

/// WIN301 in the registry.
pub const RULE: Rule = Rule {
    meta: &WIN301,
    check: unsupported_volume_type,
};

// ---------------------------------------------------------------------------------------------
// WIN301

/// Volume sources known to work on Windows nodes today (K ≥ 1.14).
pub(crate) const MODERN_ALLOWED: &[&str] = &[
    "emptyDir",
    "hostPath",
    "configMap",
    "secret",
    "downwardAPI",
    "projected",
    "persistentVolumeClaim",
    "ephemeral",
    "csi",
    "azureDisk",
    "azureFile",
    "awsElasticBlockStore",
    "gcePersistentDisk",
    "vsphereVolume",
    "flexVolume",
];

/// Volume sources the seed-era guides list for Windows (K ≤ 1.13). `secret`, `configMap`,
/// `downwardAPI` and `projected` are handled separately (WIN302 below 1803).
pub(crate) const LEGACY_ALLOWED: &[&str] = &[
    "hostPath",
    "emptyDir",
    "azureDisk",
    "azureFile",
    "flexVolume",
    "persistentVolumeClaim",
];

/// Volume sources that never work on Windows nodes.
pub(crate) const REJECTED: &[&str] = &[
    "nfs",
    "iscsi",
    "rbd",
    "cephfs",
    "glusterfs",
    "fc",
    "cinder",
    "flocker",
    "quobyte",
    "portworxVolume",
    "scaleIO",
    "storageos",
    "photonPersistentDisk",
    "gitRepo",
];

/// In-tree cloud plugins whose in-tree code was removed (the field is then served by CSI
/// migration only): (source, release of removal).
pub(crate) const REMOVED_IN_TREE: &[(&str, u32, &str)] = &[
    ("awsElasticBlockStore", 27, "ebs.csi.aws.com"),
    ("azureDisk", 27, "disk.csi.azure.com"),
    ("gcePersistentDisk", 28, "pd.csi.storage.gke.io"),
    ("azureFile", 30, "file.csi.azure.com"),
];

pub static WIN301: RuleMeta = RuleMeta {
    id: "WIN301",
    name: "unsupported-volume-type",
    severity: Severity::Error,
    summary: "Volume source that Windows nodes cannot mount (NFS, iSCSI, RBD, CephFS, …)",
    docs: r#"## What it does
Checks every `spec.volumes[*]` source against what Windows nodes can mount.

* Kubernetes ≥ 1.14: `emptyDir`, `hostPath`, `configMap`, `secret`, `downwardAPI`, `projected`,
  `persistentVolumeClaim`, `ephemeral`, `csi` (the driver needs a Windows node plugin / csi-proxy),
  the in-tree `azureDisk`, `azureFile`, `awsElasticBlockStore`, `gcePersistentDisk`,
  `vsphereVolume` (CSI-migrated) and `flexVolume` (SMB/iSCSI scripts) work.
* Kubernetes ≤ 1.13 (the guides of those versions): only `hostPath`, `emptyDir`, `azureDisk`, `azureFile`,
  `flexVolume` and `persistentVolumeClaim`; Secrets/ConfigMaps as volumes from Windows 1803 on.

`nfs`, `iscsi`, `rbd`, `cephfs`, `glusterfs`, `fc`, `cinder`, `flocker`, `quobyte`,
`portworxVolume`, `scaleIO`, `storageos`, `photonPersistentDisk` and `gitRepo` are errors. In-tree
cloud plugins on a Kubernetes version that removed their in-tree code are warnings: the field only
works through CSI migration, with the CSI driver's Windows node plugin installed.

## Why is this bad?
The kubelet on Windows has no mounter for these sources: the pod stays in `ContainerCreating` with
`FailedMount` events ("NFS based storage/volume support" is listed as unsupported).

## Example
```yaml
spec:
  volumes:
  - name: shared
    nfs: {server: nfs.example.com, path: /exports}
```

## Fix
Use an SMB share through the SMB CSI driver (`smb.csi.k8s.io`), Azure Files, or a CSI driver with a
Windows node plugin, via a `persistentVolumeClaim`.

## Severity
`error` for a volume type Windows nodes cannot mount (NFS, iSCSI, Ceph and the like; on Kubernetes
≤ 1.13 every type outside the legacy allow-list); `warning` for an in-tree plugin removed from
Kubernetes that only works through CSI migration with the driver's Windows node plugin, and for a
type not known to work on Windows.
"#,
    fix: None,
    source: "seed, K-STOR, KEP116",
    applies: "all (legacy allow-list K≤1.13, modern K≥1.14)",
    os: RuleOs::Windows,
    default_on: true,
    reads: Reads::of(&[Area::Volumes]),
    mutation: Mutation::DEFAULT,
};

pub(crate) fn unsupported_volume_type(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    let k = eval.target.kubernetes;
    let legacy = !k.at_least(1, 14);
    let mut out = Vec::new();
    for (i, v) in site.volumes() {
        let Some(ty) = volume_type(v) else { continue };
        let name = vol_name(v);
        let p = site.ptr(&format!("/volumes/{i}/{ty}"));
        if REJECTED.contains(&ty) {
            out.push(Finding::new(
                &WIN301,
                p,
                format!(
                    "volume {name:?} uses `{ty}`, which Windows nodes cannot mount; use SMB (smb.csi.k8s.io), Azure Files or a CSI driver with a Windows node plugin through a persistentVolumeClaim"
                ),
            ));
            continue;
        }
        if legacy {
            if LEGACY_ALLOWED.contains(&ty) {
                continue;
            }
            if matches!(ty, "secret" | "configMap" | "downwardAPI" | "projected") {
                // ≤1709: WIN302; from 1803 on they mount.
                continue;
            }
            out.push(Finding::new(
                &WIN301,
                p,
                format!(
                    "volume {name:?} uses `{ty}`, which Windows nodes on Kubernetes {k} cannot mount (supported: hostPath, emptyDir, azureDisk, azureFile, flexVolume, persistentVolumeClaim); use one of those"
                ),
            ));
            continue;
        }
        if let Some((_, minor, driver)) = REMOVED_IN_TREE
            .iter()
            .find(|(t, m, _)| *t == ty && k.at_least(1, *m))
        {
            out.push(
                Finding::new(
                    &WIN301,
                    p,
                    format!(
                        "volume {name:?} uses the in-tree `{ty}` plugin, removed in Kubernetes 1.{minor}; it only works through CSI migration with the {driver} driver's Windows node plugin installed. Prefer a persistentVolumeClaim of that CSI driver"
                    ),
                )
                .severity(Severity::Warning),
            );
            continue;
        }
        if MODERN_ALLOWED.contains(&ty) {
            continue;
        }
        out.push(
            Finding::new(
                &WIN301,
                p,
                format!(
                    "volume {name:?} uses `{ty}`, which is not known to work on Windows nodes; check that its plugin supports Windows, or use a CSI driver with a Windows node plugin"
                ),
            )
            .severity(Severity::Warning),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::KubeVersion;
    use crate::model::windows;
    use crate::rules::testutil::{cfg, hit, hits, ids_in, set, winok};
    use crate::rules::volumes::common::tests::OWN;
    use serde_json::{Value, json};

    #[test]
    fn t25_nfs() {
        let pod = set(
            winok(),
            "/spec/volumes",
            json!([{"name":"shared","nfs":{"server":"nfs","path":"/exports"}}]),
        );
        assert_eq!(ids_in(&pod, &cfg(), OWN), vec!["WIN301"]);
        assert_eq!(
            hits(&pod, &cfg(), "WIN301"),
            hit(Severity::Error, "/spec/volumes/0/nfs")
        );
    }

    // --- per-rule fire / no-fire -----------------------------------------------------------

    #[test]
    fn win301_versions_and_lists() {
        let vol = |v: Value| set(winok(), "/spec/volumes", json!([v]));
        for ok in [
            json!({"name":"a","emptyDir":{}}),
            json!({"name":"a","csi":{"driver":"smb.csi.k8s.io"}}),
            json!({"name":"a","persistentVolumeClaim":{"claimName":"x"}}),
            json!({"name":"a","ephemeral":{"volumeClaimTemplate":{}}}),
            json!({"name":"a","flexVolume":{"driver":"microsoft.com/smb.cmd"}}),
        ] {
            assert!(hits(&vol(ok.clone()), &cfg(), "WIN301").is_empty(), "{ok}");
        }
        for bad in ["iscsi", "rbd", "cephfs", "glusterfs", "gitRepo", "cinder"] {
            let h = hits(&vol(json!({"name":"a", bad: {}})), &cfg(), "WIN301");
            assert_eq!(h, vec![(Severity::Error, format!("/spec/volumes/0/{bad}"))]);
        }
        // In-tree plugin removed on the target version: warning.
        let ebs = vol(json!({"name":"a","awsElasticBlockStore":{"volumeID":"vol-1"}}));
        assert_eq!(hits(&ebs, &cfg(), "WIN301")[0].0, Severity::Warning);
        let mut k126 = cfg();
        k126.target.kubernetes = KubeVersion::new(1, 26);
        assert!(hits(&ebs, &k126, "WIN301").is_empty());
        // Legacy (K ≤ 1.13): csi is not on the seed allow-list.
        let mut k112 = cfg();
        k112.target.kubernetes = KubeVersion::new(1, 12);
        k112.target.windows_builds = vec![windows::V1803];
        let csi = vol(json!({"name":"a","csi":{"driver":"x"}}));
        assert_eq!(hits(&csi, &k112, "WIN301")[0].0, Severity::Error);
        assert!(hits(&csi, &cfg(), "WIN301").is_empty());
        // Secret volumes are fine for WIN301 from 1803 on.
        let sec = vol(json!({"name":"a","secret":{"secretName":"x"}}));
        assert!(hits(&sec, &k112, "WIN301").is_empty());
    }
}
