//! WIN3xx: volumes and mounts (shared/rules.md §2.4, WIN314 in "Rules added").
//!
//! Everything here skips what the platform itself injects into every pod before admission
//! webhooks see it: the ServiceAccount token volume (`kube-api-access-*` projected volume, or the
//! legacy `<sa>-token-xxxxx` Secret volume) and its mounts, and the API server defaults
//! (`defaultMode: 420`, `terminationMessagePath: /dev/termination-log`). A user cannot act on
//! those, so flagging them would put a finding on every Windows pod of a cluster.

use std::collections::HashSet;

use serde_json::{Value, json};

use super::Rule;
use crate::model::Eval;
use crate::model::Runtime;
use crate::model::meta::{Mutation, RuleOs};
use crate::model::paths::{is_smb_unc, kubelet_pipe_path, make_absolute, normalize_path};
use crate::model::pod;
use crate::model::windows;
use crate::model::workload::Lookup;
use crate::model::workload::{ContainerRef, PodSite};
use crate::model::{Finding, Fix, FixSafety, RuleMeta, Severity, ops};

pub fn rules() -> Vec<Rule> {
    vec![
        Rule {
            meta: &WIN301,
            check: unsupported_volume_type,
        },
        Rule {
            meta: &WIN302,
            check: configmap_secret_volume_legacy,
        },
        Rule {
            meta: &WIN303,
            check: emptydir_memory,
        },
        Rule {
            meta: &WIN304,
            check: mount_propagation,
        },
        Rule {
            meta: &WIN305,
            check: volume_devices,
        },
        Rule {
            meta: &WIN306,
            check: subpath,
        },
        Rule {
            meta: &WIN307,
            check: file_mode_ignored,
        },
        Rule {
            meta: &WIN308,
            check: mountpath_not_windows_style,
        },
        Rule {
            meta: &WIN309,
            check: mountpath_case_collision,
        },
        Rule {
            meta: &WIN310,
            check: unc_path,
        },
        Rule {
            meta: &WIN311,
            check: named_pipe_mismatch,
        },
        Rule {
            meta: &WIN312,
            check: linux_hostpath,
        },
        Rule {
            meta: &WIN313,
            check: termination_message_file,
        },
        Rule {
            meta: &WIN314,
            check: secret_volume_cleartext,
        },
    ]
}

// ---------------------------------------------------------------------------------------------
// Helpers

/// Where the ServiceAccount admission plugin mounts the token volume in every container.
pub const SA_MOUNT_PATH: &str = "/var/run/secrets/kubernetes.io/serviceaccount";

/// The API server's default for `defaultMode` of secret/configMap/downwardAPI/projected (0644).
const DEFAULT_MODE: i64 = 420;

/// The kubelet's (API-defaulted) termination message path.
const DEFAULT_TERMINATION_MESSAGE_PATH: &str = "/dev/termination-log";

/// The volume source key of a volume (`emptyDir`, `secret`, …): its first key that is not `name`.
pub fn volume_type(v: &Value) -> Option<&str> {
    v.as_object()?
        .iter()
        .find(|(k, v)| k.as_str() != "name" && !v.is_null())
        .map(|(k, _)| k.as_str())
}

fn vol_name(v: &Value) -> &str {
    v.get("name").and_then(Value::as_str).unwrap_or("")
}

/// Every volume mount of every container: (container, index in `volumeMounts`, mount).
fn mounts<'a>(
    site: &PodSite<'a>,
) -> impl Iterator<Item = (ContainerRef<'a>, usize, &'a Value)> + 'a {
    site.containers().flat_map(|c| {
        c.value
            .get("volumeMounts")
            .and_then(Value::as_array)
            .map(|a| a.as_slice())
            .unwrap_or(&[])
            .iter()
            .enumerate()
            .map(move |(i, m)| (c, i, m))
    })
}

fn mount_path(m: &Value) -> Option<&str> {
    m.get("mountPath").and_then(Value::as_str)
}

fn mount_ptr(site: &PodSite, c: &ContainerRef, i: usize, field: &str) -> String {
    site.ptr(&format!("{}/volumeMounts/{i}/{field}", c.rel()))
}

/// Is volume `v` the ServiceAccount token volume the API server injects into every pod?
///
/// * `kube-api-access-<suffix>`: a projected volume whose sources are only the bound
///   `serviceAccountToken`, the `kube-root-ca.crt` ConfigMap and the `downwardAPI` namespace file
///   (Kubernetes ≥ 1.21/1.22, BoundServiceAccountTokenVolume);
/// * the legacy token Secret volume (Kubernetes < 1.24): a `secret` volume named after its
///   Secret `<serviceaccount>-token-<5 chars>`, mounted only at the ServiceAccount mount path.
///
/// A user-written projected volume with a `secret` source, or any other name, is not injected.
pub fn is_injected_volume(site: &PodSite, v: &Value) -> bool {
    let name = vol_name(v);
    let keys: Vec<&str> = v
        .as_object()
        .map(|m| m.keys().map(String::as_str).collect())
        .unwrap_or_default();
    if name.starts_with("kube-api-access-") && name.len() > "kube-api-access-".len() {
        let Some(sources) = v.lookup("/projected/sources").and_then(Value::as_array) else {
            return false;
        };
        if keys.iter().any(|k| *k != "name" && *k != "projected") {
            return false;
        }
        let mut token = false;
        for s in sources {
            let Some(obj) = s.as_object() else {
                return false;
            };
            for (k, val) in obj {
                match k.as_str() {
                    "serviceAccountToken" => token = true,
                    "configMap"
                        if val.get("name").and_then(Value::as_str) == Some("kube-root-ca.crt") => {}
                    "downwardAPI" => {}
                    _ => return false,
                }
            }
        }
        return token;
    }
    if let Some(secret) = v.get("secret") {
        let secret_name = secret.get("secretName").and_then(Value::as_str);
        let Some((sa, suffix)) = name.rsplit_once("-token-") else {
            return false;
        };
        if secret_name != Some(name)
            || sa.is_empty()
            || suffix.len() != 5
            || !suffix
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
            || keys.iter().any(|k| *k != "name" && *k != "secret")
        {
            return false;
        }
        let mut mounted = false;
        for (_, _, m) in mounts(site) {
            if m.get("name").and_then(Value::as_str) == Some(name) {
                if mount_path(m) != Some(SA_MOUNT_PATH) {
                    return false;
                }
                mounted = true;
            }
        }
        return mounted;
    }
    false
}

/// Names of the injected volumes of the pod (their mounts are skipped too).
fn injected_names<'a>(site: &PodSite<'a>) -> HashSet<&'a str> {
    site.volumes()
        .filter(|(_, v)| is_injected_volume(site, v))
        .map(|(_, v)| vol_name(v))
        .collect()
}

/// Is a mount one of the injected ServiceAccount mounts?
fn is_injected_mount(m: &Value, injected: &HashSet<&str>) -> bool {
    m.get("name")
        .and_then(Value::as_str)
        .is_some_and(|n| injected.contains(n))
}

/// Does the target include a Windows build that cannot mount Secret/ConfigMap volumes
/// (≤ 10.0.16299, i.e. WS2016 and 1709)?
pub fn legacy_volume_builds(eval: &Eval) -> bool {
    eval.target
        .windows_builds
        .iter()
        .any(|b| *b <= windows::V1709)
}

fn legacy_builds_text(eval: &Eval) -> String {
    eval.target
        .windows_builds
        .iter()
        .filter(|b| **b <= windows::V1709)
        .map(|b| b.token())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The spec of an existing Pod is immutable: drop the fixes when a Pod is updated.
fn fixable(site: &PodSite, eval: &Eval, mut out: Vec<Finding>) -> Vec<Finding> {
    if !eval.fix_possible(site) {
        for f in &mut out {
            f.fix = None;
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// WIN301

/// Volume sources known to work on Windows nodes today (K ≥ 1.14).
const MODERN_ALLOWED: &[&str] = &[
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
const LEGACY_ALLOWED: &[&str] = &[
    "hostPath",
    "emptyDir",
    "azureDisk",
    "azureFile",
    "flexVolume",
    "persistentVolumeClaim",
];

/// Volume sources that never work on Windows nodes.
const REJECTED: &[&str] = &[
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
const REMOVED_IN_TREE: &[(&str, u32, &str)] = &[
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
* Kubernetes ≤ 1.13 (the seed-era guides): only `hostPath`, `emptyDir`, `azureDisk`, `azureFile`,
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
"#,
    fix: None,
    source: "seed, K-STOR, KEP116",
    applies: "all (legacy allow-list K≤1.13, modern K≥1.14)",
    os: RuleOs::Windows,
    context: &[],
    mutation: Mutation::DEFAULT,
};

fn unsupported_volume_type(site: &PodSite, eval: &Eval) -> Vec<Finding> {
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

// ---------------------------------------------------------------------------------------------
// WIN302

pub static WIN302: RuleMeta = RuleMeta {
    id: "WIN302",
    name: "configmap-secret-volume-legacy",
    severity: Severity::Error,
    summary: "Secret/ConfigMap/downwardAPI/projected volume on Windows Server 1709 or older",
    docs: r#"## What it does
Flags `spec.volumes[*].secret`, `.configMap`, `.downwardAPI` and `.projected` (any source, including
`serviceAccountToken`) when the target has a Windows build ≤ 10.0.16299 (WS2016, 1709).

## Why is this bad?
"Secrets and ConfigMaps can only be used as environment variables — known issue with versions 1709
and earlier … fixed by upgrading to version 1803." These volumes are written by the kubelet's
atomic writer through symlinks that those Windows builds cannot follow inside a container; the pod
fails to start. downwardAPI and projected volumes use the same mechanism.

## Example
```yaml
spec:
  volumes:
  - name: creds
    secret: {secretName: db}
```

## Fix
Consume the data as environment variables (`env[].valueFrom.secretKeyRef` / `configMapKeyRef`, or
`envFrom`), or move the nodes to Windows Server 1803 or newer.
"#,
    fix: None,
    source: "seed, K-OLD11",
    applies: "W≤1709 (any K)",
    os: RuleOs::Windows,
    context: &[],
    mutation: Mutation::DEFAULT,
};

fn configmap_secret_volume_legacy(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    if !legacy_volume_builds(eval) {
        return Vec::new();
    }
    let builds = legacy_builds_text(eval);
    let mut out = Vec::new();
    for (i, v) in site.volumes() {
        let Some(ty) = volume_type(v) else { continue };
        if !matches!(ty, "secret" | "configMap" | "downwardAPI" | "projected")
            || is_injected_volume(site, v)
        {
            continue;
        }
        let advice = match ty {
            "secret" => "use env[].valueFrom.secretKeyRef or envFrom.secretRef instead",
            "configMap" => "use env[].valueFrom.configMapKeyRef or envFrom.configMapRef instead",
            "downwardAPI" => "use env[].valueFrom.fieldRef instead",
            _ => "use env[].valueFrom / envFrom for its sources instead",
        };
        out.push(Finding::new(
            &WIN302,
            site.ptr(&format!("/volumes/{i}/{ty}")),
            format!(
                "volume {:?} is a `{ty}` volume, which Windows Server {builds} cannot mount (fixed in 1803); {advice}, or upgrade the nodes to 1803 or newer",
                vol_name(v)
            ),
        ));
    }
    out
}

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
    context: &[],
    mutation: Mutation::named("emptyDirMedium"),
};

fn emptydir_memory(site: &PodSite, eval: &Eval) -> Vec<Finding> {
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
    fixable(site, eval, out)
}

// ---------------------------------------------------------------------------------------------
// WIN304

pub static WIN304: RuleMeta = RuleMeta {
    id: "WIN304",
    name: "mount-propagation",
    severity: Severity::Warning,
    summary: "volumeMounts[].mountPropagation HostToContainer/Bidirectional (Windows has no mount propagation; Bidirectional needs a privileged container)",
    docs: r#"## What it does
Flags `volumeMounts[].mountPropagation` in every container; `None` is fine.

* `Bidirectional` in a container that is not `privileged: true`: **error**. The API server rejects it
  on any pod: "spec.containers[0].volumeMounts.mountPropagation: Forbidden: Bidirectional mount
  propagation is available only to privileged containers" (measured on 1.32).
* `Bidirectional` in a privileged container, and `HostToContainer`: **warning**. The API server
  admits them (a privileged container is itself rejected once the pod declares
  `spec.os.name: windows`, WIN103), and the Windows kubelet runs the mount without propagation.

## Why is this bad?
Windows containers have no mount propagation ("You cannot enable mountPropagation"): whatever the
manifest asks for, mounts made on the host after the container started do not appear in it, and
the container's mounts never reach the host. Node agents written for Linux (CSI node plugins)
rely on it.

## Example
```yaml
containers:
- name: app
  volumeMounts:
  - {name: data, mountPath: 'C:\data', mountPropagation: Bidirectional}
```

## Fix
Safe for `HostToContainer`: delete the field (Windows behaves as `None` anyway). `Bidirectional`
has no Windows equivalent: remove it and redesign how the host and the container share mounts (on
Windows, CSI node plugins use csi-proxy or run as HostProcess containers).
"#,
    fix: Some(FixSafety::Safe),
    source: "K-INTRO, KEP116, VAL, issue-9 research §1.2 (measured on kube-apiserver 1.32)",
    applies: "all",
    os: RuleOs::Windows,
    context: &[],
    mutation: Mutation::named("mountPropagation"),
};

fn mount_propagation(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    let mut out = Vec::new();
    for (c, i, m) in mounts(site) {
        let Some(mode) = m.get("mountPropagation").and_then(Value::as_str) else {
            continue;
        };
        let p = mount_ptr(site, &c, i, "mountPropagation");
        let path = mount_path(m).unwrap_or("");
        match mode {
            "HostToContainer" => out.push(
                Finding::new(
                    &WIN304,
                    p.clone(),
                    format!(
                        "{} mounts {path:?} with mountPropagation: HostToContainer; the API server admits it, but Windows has no mount propagation: mounts made on the host later do not appear in the container. Delete the field",
                        c.label()
                    ),
                )
                .with_fix(Fix {
                    safety: FixSafety::Safe,
                    description: format!("delete mountPropagation of {path:?}"),
                    ops: vec![ops::remove(&p)],
                }),
            ),
            "Bidirectional" => {
                let privileged = c.value.lookup("/securityContext/privileged")
                    == Some(&Value::Bool(true));
                out.push(if privileged {
                    Finding::new(
                        &WIN304,
                        p,
                        format!(
                            "{} mounts {path:?} with mountPropagation: Bidirectional; the API server admits it for this privileged container, but Windows has no mount propagation: the mount is private. Remove it",
                            c.label()
                        ),
                    )
                } else {
                    Finding::new(
                        &WIN304,
                        p.clone(),
                        format!(
                            "{} mounts {path:?} with mountPropagation: Bidirectional, which the API server rejects for a container that is not privileged ({}); Windows has no mount propagation anyway. Remove it",
                            c.label(),
                            crate::model::api_fields::forbidden(
                                &pod::dotted(&site.ptr(&format!("{}/volumeMounts/mountPropagation", c.rel()))),
                                "Bidirectional mount propagation is available only to privileged containers"
                            )
                        ),
                    )
                    .severity(Severity::Error)
                });
            }
            _ => {}
        }
    }
    fixable(site, eval, out)
}

// ---------------------------------------------------------------------------------------------
// WIN305

pub static WIN305: RuleMeta = RuleMeta {
    id: "WIN305",
    name: "volume-devices",
    severity: Severity::Error,
    summary: "Raw block volumes (volumeDevices) are not supported on Windows",
    docs: r#"## What it does
Flags every `volumeDevices[]` entry of every container.

## Why is this bad?
Raw block volumes (`volumeMode: Block`) are not supported on Windows nodes: the device cannot be
mapped into the container and the pod does not start.

## Example
```yaml
containers:
- name: db
  volumeDevices:
  - {name: blk, devicePath: '\\.\PhysicalDrive1'}
```

## Fix
Use a filesystem volume (`volumeMode: Filesystem`) mounted with `volumeMounts`.
"#,
    fix: None,
    source: "K-INTRO, K-STOR",
    applies: "all",
    os: RuleOs::Windows,
    context: &[],
    mutation: Mutation::DEFAULT,
};

fn volume_devices(site: &PodSite, _eval: &Eval) -> Vec<Finding> {
    let mut out = Vec::new();
    for c in site.containers() {
        let Some(devs) = c.value.get("volumeDevices").and_then(Value::as_array) else {
            continue;
        };
        for (i, d) in devs.iter().enumerate() {
            let name = d.get("name").and_then(Value::as_str).unwrap_or("");
            out.push(Finding::new(
                &WIN305,
                site.ptr(&format!("{}/volumeDevices/{i}", c.rel())),
                format!(
                    "{} maps raw block volume {name:?}; Windows does not support raw block volumes. Use a filesystem volume with volumeMounts",
                    c.label()
                ),
            ));
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// WIN306

pub static WIN306: RuleMeta = RuleMeta {
    id: "WIN306",
    name: "subpath",
    severity: Severity::Error,
    summary: "subPath naming a single file of a configMap/secret/downwardAPI/projected volume with the Docker runtime (Docker on Windows cannot bind-mount a file)",
    docs: r#"## What it does
With runtime `docker` (dockershim up to 1.23, or cri-dockerd), flags `volumeMounts[].subPath` values
that name a single file: a key or `items[].path` of a `configMap`, `secret`, `downwardAPI` or
`projected` volume. HostProcess pods are not checked (their mounts are not bind mounts of a
container).

Directory subPaths and `subPathExpr` are not reported: the Windows kubelet implements subPath
(`subpath_windows.go`: the subpath itself becomes the mount source, no bind mount needed), and the
upstream e2e subPath tests run on Windows except the file ones. With containerd (WS2019 and later)
single-file mounts work too. The Windows storage page that calls subPath unsupported is out of date.

## Why is this bad?
Docker on Windows cannot bind-mount a file: the container is never created ("invalid mount config
for type "bind": source path must be a directory", moby#30555), and the pod stays in
`CreateContainerError`.

## Example
```yaml
# target: runtime docker
volumeMounts:
- {name: config, mountPath: 'C:\app\appsettings.json', subPath: appsettings.json}
volumes:
- name: config
  configMap: {name: app-config}
```

## Fix
Mount the whole volume at a directory and point the application at the file inside it (`items`
chooses the file names), or move the nodes to containerd.
"#,
    fix: None,
    source: "pkg/volume/util/subpath/subpath_windows.go, test/e2e/storage/testsuites/subpath.go, moby#30555, kubernetes PR #83057, issue-9 research §2",
    applies: "runtime docker",
    os: RuleOs::Windows,
    context: &[],
    mutation: Mutation::DEFAULT,
};

/// Whether `sub` names a single file of volume `v`: a key (a configMap/secret without `items`
/// projects each key as a file, and keys contain no `/`) or an `items[].path` of a configMap,
/// secret, downwardAPI or projected volume. `None`: what `sub` names cannot be told from the
/// manifest (emptyDir, hostPath, PVC, … or a path the volume does not project).
fn subpath_file_kind(v: &Value, sub: &str) -> Option<&'static str> {
    let sub = sub.trim_end_matches('/');
    let item_paths = |src: &Value| -> Option<bool> {
        src.get("items").and_then(Value::as_array).map(|items| {
            items
                .iter()
                .any(|i| i.get("path").and_then(Value::as_str) == Some(sub))
        })
    };
    // A configMap/secret source: an item path, else (no items) any key.
    let keyed = |src: &Value| item_paths(src).unwrap_or(!sub.contains('/'));
    for (kind, what) in [("configMap", "configMap"), ("secret", "secret")] {
        if let Some(src) = v.get(kind) {
            return keyed(src).then_some(what);
        }
    }
    if let Some(src) = v.get("downwardAPI") {
        return item_paths(src).unwrap_or(false).then_some("downwardAPI");
    }
    let sources = v.lookup("/projected/sources").and_then(Value::as_array)?;
    sources
        .iter()
        .any(|s| {
            ["configMap", "secret"]
                .iter()
                .any(|k| s.get(*k).is_some_and(keyed))
                || s.get("downwardAPI").and_then(item_paths).unwrap_or(false)
                || ["serviceAccountToken", "clusterTrustBundle"]
                    .iter()
                    .any(|k| s.lookup(&format!("/{k}/path")).and_then(Value::as_str) == Some(sub))
        })
        .then_some("projected")
}

fn subpath(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    if eval.target.runtime != Runtime::Docker || pod::is_host_process_pod(site) {
        return Vec::new();
    }
    let mut out = Vec::new();
    for (c, i, m) in mounts(site) {
        let Some(sp) = m
            .get("subPath")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
        else {
            continue;
        };
        let name = m.get("name").and_then(Value::as_str).unwrap_or("");
        let Some(kind) = site
            .volumes()
            .find(|(_, v)| vol_name(v) == name)
            .and_then(|(_, v)| subpath_file_kind(v, sp))
        else {
            continue;
        };
        out.push(Finding::new(
            &WIN306,
            mount_ptr(site, &c, i, "subPath"),
            format!(
                "{} mounts subPath {sp:?} of {kind} volume {name:?}, a single file: Docker on Windows cannot bind-mount a file (\"invalid mount config for type \\\"bind\\\": source path must be a directory\"), so the container is never created. Mount the whole volume at a directory instead",
                c.label()
            ),
        ));
    }
    out
}

// ---------------------------------------------------------------------------------------------
// WIN307

pub static WIN307: RuleMeta = RuleMeta {
    id: "WIN307",
    name: "file-mode-ignored",
    severity: Severity::Info,
    summary: "defaultMode / items[].mode on Secret, ConfigMap, downwardAPI or projected volumes (ignored on Windows)",
    docs: r#"## What it does
Reports `defaultMode` of `secret`, `configMap`, `downwardAPI` and `projected` volumes, and
`items[].mode` (also inside projected sources). `defaultMode: 420` (0644) is the API server's
default and is not reported; nor is the ServiceAccount token volume the API server injects.

## Why is this bad?
Windows has no POSIX file modes: "DefaultMode (due to UID/GID dependency)" is listed as
unsupported. A mode such as `0400` for a private key does not restrict anything on Windows.

## Example
```yaml
volumes:
- name: key
  secret: {secretName: tls, defaultMode: 0400}
```

## Fix
Remove the mode; protect the files with NTFS ACLs inside the image or with `runAsUserName`.
"#,
    fix: None,
    source: "K-STOR",
    applies: "all",
    os: RuleOs::Windows,
    context: &[],
    mutation: Mutation::DEFAULT,
};

fn file_mode_ignored(site: &PodSite, _eval: &Eval) -> Vec<Finding> {
    let mut out = Vec::new();
    let items = |base: &str, src: &Value, out: &mut Vec<Finding>, vname: &str| {
        if let Some(its) = src.get("items").and_then(Value::as_array) {
            for (j, it) in its.iter().enumerate() {
                if let Some(mode) = it.get("mode").filter(|m| !m.is_null()) {
                    out.push(Finding::new(
                        &WIN307,
                        format!("{base}/items/{j}/mode"),
                        format!(
                            "volume {vname:?} item {:?} sets mode {mode}; Windows ignores file modes. Remove it and use NTFS ACLs if the file must be protected",
                            it.get("path").and_then(Value::as_str).unwrap_or("")
                        ),
                    ));
                }
            }
        }
    };
    for (i, v) in site.volumes() {
        let Some(ty) = volume_type(v) else { continue };
        if !matches!(ty, "secret" | "configMap" | "downwardAPI" | "projected")
            || is_injected_volume(site, v)
        {
            continue;
        }
        let vname = vol_name(v);
        let base = site.ptr(&format!("/volumes/{i}/{ty}"));
        let src = &v[ty];
        if let Some(mode) = src.get("defaultMode").filter(|m| !m.is_null())
            && mode.as_i64() != Some(DEFAULT_MODE)
        {
            out.push(Finding::new(
                &WIN307,
                format!("{base}/defaultMode"),
                format!(
                    "volume {vname:?} sets defaultMode {mode}; Windows ignores file modes (no UID/GID). Remove it and use NTFS ACLs if the files must be protected"
                ),
            ));
        }
        if ty == "projected" {
            if let Some(sources) = src.get("sources").and_then(Value::as_array) {
                for (j, s) in sources.iter().enumerate() {
                    for k in ["secret", "configMap", "downwardAPI"] {
                        if let Some(inner) = s.get(k) {
                            items(&format!("{base}/sources/{j}/{k}"), inner, &mut out, vname);
                        }
                    }
                }
            }
        } else {
            items(&base, src, &mut out, vname);
        }
    }
    out
}

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
"#,
    fix: Some(FixSafety::Safe),
    source: "KL-PATH, K-EX, issue-9 research §3",
    applies: "all (warning K≤1.8); off by default",
    os: RuleOs::Windows,
    context: &[],
    mutation: Mutation::DEFAULT,
};

fn mountpath_not_windows_style(site: &PodSite, eval: &Eval) -> Vec<Finding> {
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
    fixable(site, eval, out)
}

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
    context: &[],
    mutation: Mutation::DEFAULT,
};

fn mountpath_case_collision(site: &PodSite, _eval: &Eval) -> Vec<Finding> {
    let injected = injected_names(site);
    let mut out = Vec::new();
    for c in site.containers() {
        let Some(ms) = c.value.get("volumeMounts").and_then(Value::as_array) else {
            continue;
        };
        let mut seen: Vec<(usize, &str, String)> = Vec::new();
        for (i, m) in ms.iter().enumerate() {
            let Some(path) = mount_path(m).filter(|p| !p.is_empty()) else {
                continue;
            };
            let norm = normalize_path(path);
            if let Some((j, first, _)) = seen.iter().find(|(_, raw, n)| *n == norm && *raw != path)
            {
                // Point at the mount the user wrote, never at the injected one.
                let at = if is_injected_mount(m, &injected) {
                    *j
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
            seen.push((i, path, norm));
        }
    }
    out
}

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
    context: &[],
    mutation: Mutation::DEFAULT,
};

fn unc_path(site: &PodSite, _eval: &Eval) -> Vec<Finding> {
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

// ---------------------------------------------------------------------------------------------
// WIN311

pub static WIN311: RuleMeta = RuleMeta {
    id: "WIN311",
    name: "named-pipe-mismatch",
    severity: Severity::Warning,
    summary: "Named-pipe hostPath mounted at a non-pipe path, or a pipe mountPath from a non-pipe volume",
    docs: r#"## What it does
For every volume mount, compares the volume and the mount: a `hostPath` named pipe
(`\\.\pipe\name`) must be mounted at a named-pipe path, and a named-pipe `mountPath` must come
from a named-pipe `hostPath`.

## Why is this bad?
Named-pipe host mounts are supported on Windows, but only pipe-to-pipe: mapping a pipe onto a
directory (or a directory onto a pipe path) fails at container start.

## Example
```yaml
volumes:
- name: docker
  hostPath: {path: '\\.\pipe\docker_engine'}
containers:
- name: agent
  volumeMounts:
  - {name: docker, mountPath: 'C:\docker'}
```

## Fix
Mount the pipe at the same pipe path (`mountPath: '\\.\pipe\docker_engine'`).
"#,
    fix: None,
    source: "K-INTRO, KL-PATH",
    applies: "all",
    os: RuleOs::Windows,
    context: &[],
    mutation: Mutation::DEFAULT,
};

fn named_pipe_mismatch(site: &PodSite, _eval: &Eval) -> Vec<Finding> {
    let mut out = Vec::new();
    for (c, i, m) in mounts(site) {
        let Some(path) = mount_path(m) else { continue };
        let name = m.get("name").and_then(Value::as_str).unwrap_or("");
        let Some((_, vol)) = site.volumes().find(|(_, v)| vol_name(v) == name) else {
            continue;
        };
        let host = vol.lookup("/hostPath/path").and_then(Value::as_str);
        let host_pipe = host.is_some_and(kubelet_pipe_path);
        let mount_pipe = kubelet_pipe_path(path);
        if host_pipe && !mount_pipe {
            out.push(Finding::new(
                &WIN311,
                mount_ptr(site, &c, i, "mountPath"),
                format!(
                    "{} mounts the named pipe {:?} at {path:?}, which is not a pipe path; named pipes can only be mounted at a \\\\.\\pipe\\ path. Use mountPath {:?}",
                    c.label(),
                    host.unwrap_or(""),
                    host.unwrap_or("")
                ),
            ));
        } else if mount_pipe && !host_pipe {
            let what = match host {
                Some(h) => format!("hostPath {h:?}"),
                None => format!("a `{}` volume", volume_type(vol).unwrap_or("?")),
            };
            out.push(Finding::new(
                &WIN311,
                mount_ptr(site, &c, i, "mountPath"),
                format!(
                    "{} mounts {what} at the named-pipe path {path:?}; only a named-pipe hostPath (\\\\.\\pipe\\…) can be mounted there"
                    ,
                    c.label()
                ),
            ));
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// WIN312

/// Host paths that only exist on Linux nodes (first path components).
/// The Unix sockets of Linux container runtimes and daemons: they do not exist on a Windows node
/// (Docker listens on `\\.\pipe\docker_engine`, containerd on `\\.\pipe\containerd-containerd`).
const LINUX_DAEMON_SOCKETS: &[&str] = &[
    "/var/run/docker.sock",
    "/run/docker.sock",
    "/var/run/containerd/containerd.sock",
    "/run/containerd/containerd.sock",
    "/var/run/crio/crio.sock",
    "/run/crio/crio.sock",
    "/var/run/dockershim.sock",
    "/var/run/cri-dockerd.sock",
    "/run/cri-dockerd.sock",
];

/// Linux kernel and tmpfs trees: on a Windows node `/proc` is just the directory `C:\proc`.
const LINUX_PSEUDO_DIRS: &[&str] = &["/proc", "/sys", "/dev", "/run", "/var/run"];

/// What a root-relative hostPath is on a Linux node that it cannot be on a Windows one, if
/// anything: a Linux daemon socket, or a kernel/tmpfs tree. Other root-relative paths
/// (`/etc/cni/net.d`, `/var/log`, `/opt/cni/bin`) are ordinary directories of the system drive.
fn linux_only_host_path(p: &str) -> Option<&'static str> {
    let p = p.trim_end_matches('/');
    if LINUX_DAEMON_SOCKETS.contains(&p) {
        return Some("socket");
    }
    LINUX_PSEUDO_DIRS
        .iter()
        .any(|d| p == *d || p.strip_prefix(d).is_some_and(|r| r.starts_with('/')))
        .then_some("tree")
}

/// A directory of its own under `/run` or `/var/run` (`/var/run/azure-vnet`): where a Windows
/// agent keeps its state as `C:\var\run\…`. Created by the kubelet (`DirectoryOrCreate`) or
/// used by a HostProcess pod (a Windows-native binary on the host), it is what the agent itself
/// writes, not a Linux tmpfs that a Linux agent expects filled.
fn own_run_dir(p: &str) -> bool {
    ["/run/", "/var/run/"].iter().any(|d| {
        p.trim_end_matches('/')
            .strip_prefix(d)
            .is_some_and(|r| !r.is_empty())
    })
}

pub static WIN312: RuleMeta = RuleMeta {
    id: "WIN312",
    name: "linux-hostpath",
    severity: Severity::Warning,
    summary: "hostPath that cannot work on Windows: a Linux daemon socket (docker.sock, containerd.sock), /proc, /sys, /dev, /run, /var/run, or type CharDevice/BlockDevice",
    docs: r#"## What it does
Flags `hostPath` volumes that cannot work on a Windows node:

* the Unix sockets of Linux runtimes and daemons (`/var/run/docker.sock`, `/run/containerd/containerd.sock`,
  `/var/run/crio/crio.sock`, …);
* Linux kernel and tmpfs trees: `/proc`, `/sys`, `/dev`, `/run`, `/var/run` and below;
* `hostPath.type` `CharDevice` or `BlockDevice`: the Windows kubelet reports no device files, so
  the type check fails and the pod does not start.

A directory of its own below `/run` or `/var/run` is not reported when the kubelet creates it
(`type: DirectoryOrCreate`) or the pod is HostProcess: Azure CNS keeps its state in
`/var/run/azure-vnet`, which is `C:\var\run\azure-vnet` on the node.

Root-relative directories are not reported: on a Windows node `/etc/cni/net.d` is
`C:\etc\cni\net.d`, `/var/log/antrea` is `C:\var\log\antrea`, the places the maintained Windows
CNI and CSI manifests use. `type: Socket` alone is not reported either: AF_UNIX sockets exist on
Windows (CSI drivers use them) and the kubelet's type check supports them.

## Why is this bad?
Typical of Linux agents (log shippers, monitoring, Docker-in-Docker) deployed to Windows nodes: the
socket does not exist (the runtime listens on a named pipe), and `C:\proc` is an empty directory,
not the node's process table.

## Example
```yaml
volumes:
- name: docker
  hostPath: {path: /var/run/docker.sock, type: Socket}
```

## Fix
Use the named pipe (`\\.\pipe\containerd-containerd`, `\\.\pipe\docker_engine`) or the Windows
location of what the agent needs, or keep the workload on Linux nodes.
"#,
    fix: None,
    source: "K-INTRO, pkg/volume/util/util.go (MakeAbsolutePath), hostutil_windows.go, issue-9 research §4",
    applies: "all",
    os: RuleOs::Windows,
    context: &[],
    mutation: Mutation::DEFAULT,
};

fn linux_hostpath(site: &PodSite, _eval: &Eval) -> Vec<Finding> {
    let mut out = Vec::new();
    for (i, v) in site.volumes() {
        let Some(hp) = v.get("hostPath") else {
            continue;
        };
        let name = vol_name(v);
        if let Some(path) = hp.get("path").and_then(Value::as_str)
            && path.starts_with('/')
            && let Some(what) = linux_only_host_path(path)
            && !(what == "tree"
                && own_run_dir(path)
                && (hp.get("type").and_then(Value::as_str) == Some("DirectoryOrCreate")
                    || crate::model::pod::is_host_process_pod(site)))
        {
            let msg = if what == "socket" {
                format!(
                    "hostPath volume {name:?} mounts {path}, a Linux runtime socket that does not exist on a Windows node: Docker listens on the named pipe \\\\.\\pipe\\docker_engine, containerd on \\\\.\\pipe\\containerd-containerd. Mount the named pipe, or run this workload on Linux"
                )
            } else {
                format!(
                    "hostPath volume {name:?} mounts {path}, a Linux kernel/tmpfs path: on a Windows node it is the ordinary directory C:{}, not what a Linux agent expects there. Use the Windows source of the data, or run this workload on Linux",
                    path.replace('/', "\\")
                )
            };
            out.push(Finding::new(
                &WIN312,
                site.ptr(&format!("/volumes/{i}/hostPath/path")),
                msg,
            ));
        }
        if let Some(ty) = hp.get("type").and_then(Value::as_str)
            && matches!(ty, "CharDevice" | "BlockDevice")
        {
            out.push(Finding::new(
                &WIN312,
                site.ptr(&format!("/volumes/{i}/hostPath/type")),
                format!(
                    "hostPath volume {name:?} has type {ty}: the Windows kubelet finds no device files, so the type check fails and the pod does not start. Remove the volume or run this workload on Linux"
                ),
            ));
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// WIN313

pub static WIN313: RuleMeta = RuleMeta {
    id: "WIN313",
    name: "termination-message-file",
    severity: Severity::Info,
    summary: "Custom terminationMessagePath with the Docker runtime (single-file mounts unsupported)",
    docs: r#"## What it does
With the Docker runtime, reports containers whose `terminationMessagePath` is not the default
`/dev/termination-log`.

## Why is this bad?
The termination message is a single file bind-mounted into the container; Docker on Windows
cannot map single files, so the message is lost. "This limitation does not exist with
CRI-containerD."

## Example
```yaml
containers:
- name: app
  terminationMessagePath: 'C:\logs\termination.log'
```

## Fix
Use `terminationMessagePolicy: FallbackToLogsOnError`, or move the nodes to containerd.
"#,
    fix: None,
    source: "K-INTRO, K-STOR",
    applies: "runtime=docker",
    os: RuleOs::Windows,
    context: &[],
    mutation: Mutation::DEFAULT,
};

fn termination_message_file(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    if eval.target.runtime != Runtime::Docker {
        return Vec::new();
    }
    let mut out = Vec::new();
    for c in site.containers() {
        let Some(p) = c
            .value
            .get("terminationMessagePath")
            .and_then(Value::as_str)
        else {
            continue;
        };
        if p.is_empty() || p == DEFAULT_TERMINATION_MESSAGE_PATH {
            continue;
        }
        out.push(Finding::new(
            &WIN313,
            site.ptr(&format!("{}/terminationMessagePath", c.rel())),
            format!(
                "{} sets terminationMessagePath {p:?}; with Docker on Windows single-file mounts are unsupported and the message is lost. Use terminationMessagePolicy: FallbackToLogsOnError or containerd",
                c.label()
            ),
        ));
    }
    out
}

// ---------------------------------------------------------------------------------------------
// WIN314

pub static WIN314: RuleMeta = RuleMeta {
    id: "WIN314",
    name: "secret-volume-cleartext",
    severity: Severity::Warning,
    summary: "Secret volume on a Windows pod: Windows writes Secret data in clear text to the node's disk",
    docs: r#"## What it does
Flags `spec.volumes[*].secret` and the `secret` sources of `projected` volumes of a Windows pod,
on targets where Windows can mount them (1803 and newer; below, WIN302 applies).

## Why is this bad?
On Linux the kubelet keeps Secret volumes in tmpfs (memory). Windows has no tmpfs: Secret data is
written in clear text to the node's local disk ("Protection for Secret data on nodes"), where
anyone with access to the node or its backups can read it.

## Example
```yaml
spec:
  volumes:
  - name: creds
    secret: {secretName: db}
```

## Fix
Pass the values as environment variables (`env[].valueFrom.secretKeyRef`), protect the node disk
(file ACLs, BitLocker), or use the Secrets Store CSI driver with a Windows provider. A policy may
raise this rule to error.
"#,
    fix: None,
    source: "kubernetes/website windows-security.md",
    applies: "W≥1803",
    os: RuleOs::Windows,
    context: &[],
    mutation: Mutation::DEFAULT,
};

fn secret_volume_cleartext(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    if legacy_volume_builds(eval) {
        return Vec::new();
    }
    const ADVICE: &str = "Use env[].valueFrom.secretKeyRef, protect the node disk (file ACLs, BitLocker), or use the Secrets Store CSI driver";
    let mut out = Vec::new();
    for (i, v) in site.volumes() {
        if is_injected_volume(site, v) {
            continue;
        }
        let name = vol_name(v);
        if let Some(s) = v.get("secret").filter(|s| !s.is_null()) {
            let sname = s.get("secretName").and_then(Value::as_str).unwrap_or(name);
            out.push(Finding::new(
                &WIN314,
                site.ptr(&format!("/volumes/{i}/secret")),
                format!(
                    "volume {name:?} mounts Secret {sname:?}; Windows writes Secret volume data in clear text to the node's local disk (no tmpfs). {ADVICE}"
                ),
            ));
        }
        if let Some(sources) = v.lookup("/projected/sources").and_then(Value::as_array) {
            for (j, src) in sources.iter().enumerate() {
                let Some(s) = src.get("secret").filter(|s| !s.is_null()) else {
                    continue;
                };
                let sname = s.get("name").and_then(Value::as_str).unwrap_or("");
                out.push(Finding::new(
                    &WIN314,
                    site.ptr(&format!("/volumes/{i}/projected/sources/{j}/secret")),
                    format!(
                        "projected volume {name:?} includes Secret {sname:?}; Windows writes it in clear text to the node's local disk (no tmpfs). {ADVICE}"
                    ),
                ));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::model::KubeVersion;
    use crate::rules::testutil::{
        cfg, findings, fixed, hits, ids, ids_in, legacy, only, set, unset, winok,
    };

    /// The WIN3xx/WIN4xx rules (other modules' rules are asserted by their tests).
    const OWN: &[&str] = &["WIN3", "WIN4"];

    /// The vector target with WIN308 (off by default) enabled.
    fn cfg308() -> crate::config::Config {
        let mut c = cfg();
        c.policy.overrides.remove("WIN308");
        c
    }

    /// WINOK with one volume mounted by the container.
    fn pod_with(vol: Value, mount: Value) -> Value {
        let p = set(winok(), "/spec/volumes", json!([vol]));
        set(p, "/spec/containers/0/volumeMounts", json!([mount]))
    }

    fn empty_dir_at(path: &str) -> Value {
        pod_with(
            json!({"name":"data","emptyDir":{}}),
            json!({"name":"data","mountPath":path}),
        )
    }

    /// The seed-era pod of T26: beta OS selector, Docker Hub 1709 image, no spec.os.
    fn legacy_pod(vol: Value) -> Value {
        json!({"apiVersion":"v1","kind":"Pod","metadata":{"name":"legacy"},"spec":{
            "nodeSelector":{"beta.kubernetes.io/os":"windows"},
            "containers":[{"name":"app","image":"microsoft/windowsservercore:1709",
                "volumeMounts":[{"name":"secrets","mountPath":"C:\\secrets"}]}],
            "volumes":[vol]}})
    }

    /// What a real API server injects into every pod (BoundServiceAccountTokenVolume).
    fn kube_api_access_pod() -> Value {
        let vol = json!({"name":"kube-api-access-7xk2p","projected":{"defaultMode":420,"sources":[
            {"serviceAccountToken":{"expirationSeconds":3607,"path":"token"}},
            {"configMap":{"name":"kube-root-ca.crt","items":[{"key":"ca.crt","path":"ca.crt"}]}},
            {"downwardAPI":{"items":[{"fieldRef":{"apiVersion":"v1","fieldPath":"metadata.namespace"},"path":"namespace"}]}}]}});
        let mount =
            json!({"name":"kube-api-access-7xk2p","mountPath":SA_MOUNT_PATH,"readOnly":true});
        pod_with(vol, mount)
    }

    #[test]
    fn injected_kube_api_access_volume_gives_nothing() {
        let pod = kube_api_access_pod();
        assert_eq!(ids_in(&pod, &cfg(), OWN), Vec::<&str>::new());
        let mut k134 = cfg();
        k134.target.kubernetes = KubeVersion::new(1, 34);
        assert_eq!(ids_in(&pod, &k134, OWN), Vec::<&str>::new());
        // Also in a Deployment template.
        let dep = json!({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},
            "spec":{"template":{"metadata":{},"spec":pod["spec"].clone()}}});
        assert_eq!(ids_in(&dep, &cfg(), OWN), Vec::<&str>::new());
        // The platform injects it on every target, legacy builds included.
        let mut old = legacy();
        old.target.kubernetes = KubeVersion::new(1, 22);
        assert_eq!(ids_in(&pod, &old, OWN), Vec::<&str>::new());
    }

    #[test]
    fn injected_legacy_token_secret_gives_nothing() {
        let pod = pod_with(
            json!({"name":"default-token-x7k2p","secret":{"secretName":"default-token-x7k2p","defaultMode":420}}),
            json!({"name":"default-token-x7k2p","mountPath":SA_MOUNT_PATH,"readOnly":true}),
        );
        let mut t = cfg();
        t.target.kubernetes = KubeVersion::new(1, 20);
        assert_eq!(ids_in(&pod, &t, OWN), Vec::<&str>::new());
        // The same Secret mounted somewhere else is the user's doing.
        let user = set(
            pod,
            "/spec/containers/0/volumeMounts/0/mountPath",
            json!("C:\\token"),
        );
        assert_eq!(ids_in(&user, &t, OWN), vec!["WIN314"]);
    }

    #[test]
    fn lookalike_of_the_injected_volume_is_flagged() {
        // A user-written projected volume named like the injected one, with a secret source.
        let pod = set(
            kube_api_access_pod(),
            "/spec/volumes/0/projected/sources/3",
            json!({"secret":{"name":"db"}}),
        );
        assert_eq!(
            hits(&pod, &cfg(), "WIN314"),
            vec![(
                Severity::Warning,
                "/spec/volumes/0/projected/sources/3/secret".to_string()
            )]
        );
        assert_eq!(hits(&pod, &cfg308(), "WIN308").len(), 1);
    }

    // --- §6 vectors -------------------------------------------------------------------------

    #[test]
    fn t16_hostprocess_pipe_mount_is_not_a_volume_finding() {
        let pod = json!({"apiVersion":"v1","kind":"Pod","metadata":{"name":"hp"},"spec":{
            "os":{"name":"windows"},"nodeSelector":{"kubernetes.io/os":"windows"},
            "tolerations":[{"key":"os","operator":"Equal","value":"windows","effect":"NoSchedule"}],
            "hostNetwork":true,
            "securityContext":{"windowsOptions":{"hostProcess":true,"runAsUserName":"NT AUTHORITY\\SYSTEM"}},
            "volumes":[{"name":"pipe","hostPath":{"path":"\\\\.\\pipe\\containerd-containerd"}}],
            "containers":[{"name":"a","image":"mcr.microsoft.com/windows/nanoserver:ltsc2022",
                "volumeMounts":[{"name":"pipe","mountPath":"\\\\.\\pipe\\containerd-containerd"}]}]}});
        assert_eq!(ids_in(&pod, &cfg(), OWN), Vec::<&str>::new());
    }

    #[test]
    fn t17_docker_pipe_gives_nothing() {
        let pipe = r"\\.\pipe\docker_engine";
        let pod = pod_with(
            json!({"name":"docker","hostPath":{"path":pipe}}),
            json!({"name":"docker","mountPath":pipe}),
        );
        assert_eq!(ids(&pod, &cfg()), Vec::<&str>::new());
    }

    #[test]
    fn t18_unc_hostpath() {
        let pod = pod_with(
            json!({"name":"share","hostPath":{"path":r"\\fileserver\share"}}),
            json!({"name":"share","mountPath":r"C:\data"}),
        );
        assert_eq!(ids_in(&pod, &cfg(), OWN), vec!["WIN310"]);
        assert_eq!(
            hits(&pod, &cfg(), "WIN310"),
            vec![(
                Severity::Warning,
                "/spec/volumes/0/hostPath/path".to_string()
            )]
        );
    }

    #[test]
    fn t19_lowercase_drive_is_fine() {
        assert_eq!(
            ids_in(&empty_dir_at(r"c:\data"), &cfg(), OWN),
            Vec::<&str>::new()
        );
    }

    #[test]
    fn t20_posix_mountpath_info_with_safe_fix() {
        let pod = empty_dir_at("/data");
        // Off by default: `/data` already means C:\data.
        assert_eq!(ids_in(&pod, &cfg(), OWN), Vec::<&str>::new());
        let cfg = cfg308();
        assert_eq!(ids_in(&pod, &cfg, OWN), vec!["WIN308"]);
        assert_eq!(
            hits(&pod, &cfg, "WIN308"),
            vec![(
                Severity::Info,
                "/spec/containers/0/volumeMounts/0/mountPath".to_string()
            )]
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
            vec![(
                Severity::Error,
                "/spec/containers/0/volumeMounts/1/mountPath".to_string()
            )]
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

    #[test]
    fn t22_emptydir_memory_opt_in_fix() {
        let pod = pod_with(
            json!({"name":"cache","emptyDir":{"medium":"Memory","sizeLimit":"64Mi"}}),
            json!({"name":"cache","mountPath":r"C:\cache"}),
        );
        assert_eq!(ids_in(&pod, &cfg(), OWN), vec!["WIN303"]);
        assert_eq!(
            hits(&pod, &cfg(), "WIN303"),
            vec![(
                Severity::Error,
                "/spec/volumes/0/emptyDir/medium".to_string()
            )]
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

    #[test]
    fn t23_mount_propagation() {
        let mk = |mode: &str| {
            pod_with(
                json!({"name":"data","emptyDir":{}}),
                json!({"name":"data","mountPath":r"C:\data","mountPropagation":mode}),
            )
        };
        let bi = mk("Bidirectional");
        assert_eq!(ids_in(&bi, &cfg(), OWN), vec!["WIN304"]);
        let p = "/spec/containers/0/volumeMounts/0/mountPropagation".to_string();
        assert_eq!(
            hits(&bi, &cfg(), "WIN304"),
            vec![(Severity::Error, p.clone())]
        );
        assert!(findings(&bi, &cfg())[0].fix.is_none());
        // The server's words, with its path (no index after volumeMounts).
        assert!(
            only(&bi, &cfg(), "WIN304")[0].message.contains(
                "(\"spec.containers[0].volumeMounts.mountPropagation: Forbidden: Bidirectional mount propagation is available only to privileged containers\")"
            )
        );
        // A privileged container may ask for it (the API server admits it): a warning; the
        // privileged field itself is WIN103's.
        let privileged = set(
            unset(bi.clone(), "/spec/os"),
            "/spec/containers/0/securityContext/privileged",
            json!(true),
        );
        assert_eq!(hits(&privileged, &cfg(), "WIN304")[0].0, Severity::Warning);
        let h2c = mk("HostToContainer");
        assert_eq!(hits(&h2c, &cfg(), "WIN304"), vec![(Severity::Warning, p)]);
        let f = fixed(&h2c, &cfg(), "WIN304");
        assert_eq!(
            f["spec"]["containers"][0]["volumeMounts"][0],
            json!({"name":"data","mountPath":r"C:\data"})
        );
        assert!(hits(&mk("None"), &cfg(), "WIN304").is_empty());
    }

    #[test]
    fn t24_volume_devices() {
        let pod = set(
            winok(),
            "/spec/volumes",
            json!([{"name":"blk","persistentVolumeClaim":{"claimName":"raw"}}]),
        );
        let pod = set(
            pod,
            "/spec/containers/0/volumeDevices",
            json!([{"name":"blk","devicePath":r"\\.\PhysicalDrive1"}]),
        );
        assert_eq!(ids_in(&pod, &cfg(), OWN), vec!["WIN305"]);
        assert_eq!(
            hits(&pod, &cfg(), "WIN305"),
            vec![(
                Severity::Error,
                "/spec/containers/0/volumeDevices/0".to_string()
            )]
        );
    }

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
            vec![(Severity::Error, "/spec/volumes/0/nfs".to_string())]
        );
    }

    #[test]
    fn t26_secret_volume_legacy() {
        let pod = legacy_pod(json!({"name":"secrets","secret":{"secretName":"db"}}));
        // Expected [WIN302, WIN504]; WIN504 belongs to the image rules.
        assert_eq!(ids_in(&pod, &legacy(), OWN), vec!["WIN302"]);
        assert_eq!(
            hits(&pod, &legacy(), "WIN302"),
            vec![(Severity::Error, "/spec/volumes/0/secret".to_string())]
        );
        // configMap, downwardAPI likewise; the seed K1.9 allow-list does not add WIN301.
        for ty in ["configMap", "downwardAPI"] {
            let p = legacy_pod(json!({"name":"secrets", ty: {}}));
            assert_eq!(ids_in(&p, &legacy(), OWN), vec!["WIN302"], "{ty}");
        }
        // WS2016 (14393) is ≤1709 too.
        let mut ws2016 = legacy();
        ws2016.target.windows_builds = vec![windows::WS2016];
        assert_eq!(ids_in(&pod, &ws2016, OWN), vec!["WIN302"]);
    }

    #[test]
    fn t27_secret_volume_modern_is_cleartext_warning() {
        // rules.md §6 T27 says [] — written before WIN314 was added; the binding product
        // decision ("secret volumes: WIN302 … and WIN314 on modern targets") wins.
        let pod = pod_with(
            json!({"name":"secrets","secret":{"secretName":"db"}}),
            json!({"name":"secrets","mountPath":r"C:\secrets"}),
        );
        assert_eq!(ids_in(&pod, &cfg(), OWN), vec!["WIN314"]);
        assert_eq!(
            hits(&pod, &cfg(), "WIN314"),
            vec![(Severity::Warning, "/spec/volumes/0/secret".to_string())]
        );
        // Mixed 1709 + 2022 target: WIN302 applies instead, never both.
        let mut mixed = cfg();
        mixed.target.windows_builds = vec![windows::V1709, windows::WS2022];
        assert_eq!(ids_in(&pod, &mixed, OWN), vec!["WIN302"]);
        // 1803 (K1.12): Secret volumes mount, WIN314 applies.
        let mut t1803 = cfg();
        t1803.target.kubernetes = KubeVersion::new(1, 12);
        t1803.target.windows_builds = vec![windows::V1803];
        assert_eq!(ids_in(&pod, &t1803, OWN), vec!["WIN314"]);
        // configMap volumes are not secret.
        let cm = pod_with(
            json!({"name":"cfg","configMap":{"name":"cfg"}}),
            json!({"name":"cfg","mountPath":r"C:\cfg"}),
        );
        assert_eq!(ids_in(&cm, &cfg(), OWN), Vec::<&str>::new());
    }

    #[test]
    fn t28_projected_secret_and_token() {
        let vol = json!({"name":"secrets","projected":{"sources":[
            {"secret":{"name":"db"}},
            {"serviceAccountToken":{"path":"token","expirationSeconds":3600}}]}});
        let pod = legacy_pod(vol.clone());
        assert_eq!(ids_in(&pod, &legacy(), OWN), vec!["WIN302"]);
        assert_eq!(
            hits(&pod, &legacy(), "WIN302"),
            vec![(Severity::Error, "/spec/volumes/0/projected".to_string())]
        );
        // Default target: the secret source is written in clear text (see t27 on the vector).
        let modern = pod_with(vol, json!({"name":"secrets","mountPath":r"C:\secrets"}));
        assert_eq!(ids_in(&modern, &cfg(), OWN), vec!["WIN314"]);
        assert_eq!(
            hits(&modern, &cfg(), "WIN314"),
            vec![(
                Severity::Warning,
                "/spec/volumes/0/projected/sources/0/secret".to_string()
            )]
        );
        // A user-written projected token volume (no secret) is fine on modern targets.
        let tok = set(
            modern,
            "/spec/volumes/0/projected/sources",
            json!([{"serviceAccountToken":{"path":"token"}}]),
        );
        assert_eq!(ids_in(&tok, &cfg(), OWN), Vec::<&str>::new());
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

    #[test]
    fn win306_subpath() {
        let mut docker = cfg();
        docker.target.runtime = Runtime::Docker;
        // A configMap key as a file: Docker cannot bind-mount it.
        let pod = pod_with(
            json!({"name":"cfg","configMap":{"name":"cfg"}}),
            json!({"name":"cfg","mountPath":r"C:\app\appsettings.json","subPath":"appsettings.json"}),
        );
        assert_eq!(
            hits(&pod, &docker, "WIN306"),
            vec![(
                Severity::Error,
                "/spec/containers/0/volumeMounts/0/subPath".to_string()
            )]
        );
        let f = &only(&pod, &docker, "WIN306")[0];
        assert!(
            f.message.contains("source path must be a directory"),
            "{}",
            f.message
        );
        // containerd mounts single files: nothing.
        assert!(hits(&pod, &cfg(), "WIN306").is_empty());
        // subPathExpr and directory subPaths work with every runtime.
        let expr = set(
            unset(pod.clone(), "/spec/containers/0/volumeMounts/0/subPath"),
            "/spec/containers/0/volumeMounts/0/subPathExpr",
            json!("$(POD_NAME)"),
        );
        assert!(hits(&expr, &docker, "WIN306").is_empty());
        let dir = pod_with(
            json!({"name":"data","emptyDir":{}}),
            json!({"name":"data","mountPath":r"C:\data","subPath":"logs"}),
        );
        assert!(hits(&dir, &docker, "WIN306").is_empty());
        // items: a file only where the subPath is an item's path.
        let items = set(
            pod.clone(),
            "/spec/volumes/0/configMap/items",
            json!([{"key":"a","path":"conf/app.json"}]),
        );
        assert!(hits(&items, &docker, "WIN306").is_empty());
        let items = set(
            items,
            "/spec/containers/0/volumeMounts/0/subPath",
            json!("conf/app.json"),
        );
        assert_eq!(hits(&items, &docker, "WIN306").len(), 1);
        // secret, downwardAPI and projected sources.
        for vol in [
            json!({"name":"cfg","secret":{"secretName":"s"}}),
            json!({"name":"cfg","downwardAPI":{"items":[{"path":"appsettings.json","fieldRef":{"fieldPath":"metadata.name"}}]}}),
            json!({"name":"cfg","projected":{"sources":[{"secret":{"name":"s"}}]}}),
        ] {
            let p = set(pod.clone(), "/spec/volumes/0", vol.clone());
            assert_eq!(hits(&p, &docker, "WIN306").len(), 1, "{vol}");
        }
        // HostProcess pods: their mounts are not container bind mounts.
        let hpc = set(
            set(pod, "/spec/hostNetwork", json!(true)),
            "/spec/securityContext/windowsOptions",
            json!({"hostProcess": true, "runAsUserName": "NT AUTHORITY\\SYSTEM"}),
        );
        assert!(hits(&hpc, &docker, "WIN306").is_empty());
    }

    #[test]
    fn win307_modes() {
        let pod = pod_with(
            json!({"name":"key","secret":{"secretName":"tls","defaultMode":256,
                "items":[{"key":"tls.key","path":"tls.key","mode":256}]}}),
            json!({"name":"key","mountPath":r"C:\tls"}),
        );
        assert_eq!(
            hits(&pod, &cfg(), "WIN307"),
            vec![
                (
                    Severity::Info,
                    "/spec/volumes/0/secret/defaultMode".to_string()
                ),
                (
                    Severity::Info,
                    "/spec/volumes/0/secret/items/0/mode".to_string()
                ),
            ]
        );
        // The API default 420 alone is not reported.
        let dflt = set(
            pod.clone(),
            "/spec/volumes/0/secret",
            json!({"secretName":"tls","defaultMode":420}),
        );
        assert!(hits(&dflt, &cfg(), "WIN307").is_empty());
        // Projected source items.
        let proj = set(
            pod,
            "/spec/volumes/0",
            json!({"name":"key","projected":{"sources":[{"configMap":{"name":"c","items":[{"key":"k","path":"k","mode":384}]}}]}}),
        );
        assert_eq!(
            hits(&proj, &cfg(), "WIN307"),
            vec![(
                Severity::Info,
                "/spec/volumes/0/projected/sources/0/configMap/items/0/mode".to_string()
            )]
        );
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

    #[test]
    fn win310_unc_mountpath() {
        let pod = empty_dir_at(r"\\server\share\x");
        assert_eq!(
            hits(&pod, &cfg(), "WIN310"),
            vec![(
                Severity::Warning,
                "/spec/containers/0/volumeMounts/0/mountPath".to_string()
            )]
        );
    }

    #[test]
    fn win311_pipe_mismatch_both_ways() {
        let pipe = r"\\.\pipe\docker_engine";
        let a = pod_with(
            json!({"name":"d","hostPath":{"path":pipe}}),
            json!({"name":"d","mountPath":r"C:\docker"}),
        );
        assert_eq!(ids_in(&a, &cfg(), OWN), vec!["WIN311"]);
        assert_eq!(
            hits(&a, &cfg(), "WIN311"),
            vec![(
                Severity::Warning,
                "/spec/containers/0/volumeMounts/0/mountPath".to_string()
            )]
        );
        let b = pod_with(
            json!({"name":"d","hostPath":{"path":r"C:\docker"}}),
            json!({"name":"d","mountPath":pipe}),
        );
        assert_eq!(ids_in(&b, &cfg(), OWN), vec!["WIN311"]);
        // Case-insensitive prefix.
        let c = pod_with(
            json!({"name":"d","hostPath":{"path":r"\\.\PIPE\docker_engine"}}),
            json!({"name":"d","mountPath":pipe}),
        );
        assert!(hits(&c, &cfg(), "WIN311").is_empty());
    }

    #[test]
    fn win312_linux_hostpaths() {
        let pod = pod_with(
            json!({"name":"sock","hostPath":{"path":"/var/run/docker.sock","type":"Socket"}}),
            json!({"name":"sock","mountPath":r"C:\sock"}),
        );
        // One finding for the socket path; `type: Socket` alone says nothing.
        assert_eq!(
            hits(&pod, &cfg(), "WIN312"),
            vec![(
                Severity::Warning,
                "/spec/volumes/0/hostPath/path".to_string()
            )]
        );
        let f = &only(&pod, &cfg(), "WIN312")[0];
        assert!(
            f.message.contains(r"\\.\pipe\docker_engine"),
            "{}",
            f.message
        );
        for p in [
            "/proc",
            "/sys/fs/cgroup",
            "/dev/kmsg",
            "/run",
            "/var/run/secrets",
            "/run/containerd/containerd.sock",
            "/var/run/crio/crio.sock/",
        ] {
            let v = set(pod.clone(), "/spec/volumes/0/hostPath", json!({"path":p}));
            assert_eq!(hits(&v, &cfg(), "WIN312").len(), 1, "{p}");
        }
        // Root-relative directories are C:\ paths on a Windows node (the maintained CNI and CSI
        // manifests use them); AF_UNIX sockets exist on Windows.
        for p in [
            r"C:\var\log",
            "/data",
            "/etcetera",
            "/etc",
            "/etc/cni/net.d",
            "/var/log/antrea/",
            "/opt/cni/bin",
            "/var/lib/kubelet",
            "/k/antrea",
            "/",
            "/var/runner",
            r"\\.\pipe\x",
        ] {
            let v = set(pod.clone(), "/spec/volumes/0/hostPath", json!({"path":p}));
            assert!(hits(&v, &cfg(), "WIN312").is_empty(), "{p}");
        }
        let sock = set(
            pod.clone(),
            "/spec/volumes/0/hostPath",
            json!({"path":r"C:\csi\csi.sock","type":"Socket"}),
        );
        assert!(hits(&sock, &cfg(), "WIN312").is_empty());
        // Device types cannot pass the Windows kubelet's type check.
        for ty in ["CharDevice", "BlockDevice"] {
            let v = set(
                pod.clone(),
                "/spec/volumes/0/hostPath",
                json!({"path":r"C:\dev","type":ty}),
            );
            assert_eq!(
                hits(&v, &cfg(), "WIN312"),
                vec![(
                    Severity::Warning,
                    "/spec/volumes/0/hostPath/type".to_string()
                )],
                "{ty}"
            );
        }
    }

    #[test]
    fn win313_docker_only_and_not_the_default() {
        let pod = set(
            winok(),
            "/spec/containers/0/terminationMessagePath",
            json!(r"C:\logs\term.log"),
        );
        let mut docker = cfg();
        docker.target.runtime = Runtime::Docker;
        assert_eq!(
            hits(&pod, &docker, "WIN313"),
            vec![(
                Severity::Info,
                "/spec/containers/0/terminationMessagePath".to_string()
            )]
        );
        assert!(hits(&pod, &cfg(), "WIN313").is_empty());
        let dflt = set(
            winok(),
            "/spec/containers/0/terminationMessagePath",
            json!("/dev/termination-log"),
        );
        assert!(hits(&dflt, &docker, "WIN313").is_empty());
    }

    #[test]
    fn nothing_on_linux_pods() {
        let linux = json!({"apiVersion":"v1","kind":"Pod","metadata":{"name":"l"},"spec":{
            "volumes":[{"name":"s","secret":{"secretName":"x","defaultMode":256}},{"name":"n","nfs":{"server":"a","path":"/"}},
                {"name":"m","emptyDir":{"medium":"Memory"}}],
            "containers":[{"name":"a","image":"nginx:1.25","volumeMounts":[
                {"name":"s","mountPath":"/s","mountPropagation":"HostToContainer","subPath":"x"}]}]}});
        assert_eq!(ids_in(&linux, &cfg(), OWN), Vec::<&str>::new());
        assert_eq!(ids_in(&linux, &legacy(), OWN), Vec::<&str>::new());
    }

    #[test]
    fn no_fixes_when_a_pod_is_updated() {
        use crate::engine::lint_object;
        use crate::model::Context;
        use crate::model::Operation;
        let pod = pod_with(
            json!({"name":"data","emptyDir":{"medium":"Memory"}}),
            json!({"name":"data","mountPath":"/data","mountPropagation":"HostToContainer"}),
        );
        let cfg = cfg308();
        let r = lint_object(&pod, &cfg, &Context::default(), Operation::Update);
        let mut got: Vec<&str> = r.findings.iter().map(|f| f.rule.id).collect();
        got.sort();
        assert_eq!(got, vec!["WIN303", "WIN304", "WIN308"]);
        assert!(r.findings.iter().all(|f| f.fix.is_none()));
        // Workload templates stay fixable.
        let dep = json!({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},
            "spec":{"template":{"metadata":{},"spec":pod["spec"].clone()}}});
        let r = lint_object(&dep, &cfg, &Context::default(), Operation::Update);
        assert_eq!(r.findings.iter().filter(|f| f.fix.is_some()).count(), 3);
        let f = fixed(&dep, &cfg, "WIN308");
        assert_eq!(
            f["spec"]["template"]["spec"]["containers"][0]["volumeMounts"][0]["mountPath"],
            "C:/data"
        );
    }
}
