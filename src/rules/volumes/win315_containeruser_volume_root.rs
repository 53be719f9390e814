//! WIN315 `containeruser-volume-root`.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use crate::model::Eval;
use crate::model::image_user::effective_user;
use crate::model::meta::{Area, Mutation, Reads, RuleOs};
use crate::model::pod::is_host_process;
use crate::model::workload::{ContainerRef, Lookup, PodSite, each, items, list};
use crate::model::{Finding, RuleMeta, Severity};
use crate::rules::Rule;
use crate::rules::volumes::common::{mount_path, vol_name, volume_type};

/// WIN315 in the registry.
pub const RULE: Rule = Rule {
    meta: &WIN315,
    check: containeruser_volume_root,
};

pub static WIN315: RuleMeta = RuleMeta {
    id: "WIN315",
    name: "containeruser-volume-root",
    severity: Severity::Warning,
    summary: "a container running as ContainerUser mounts the root of a disk volume, where it cannot create files",
    docs: r#"## What it does
Finds the writable mounts (no `readOnly: true`, no `subPath`) of a disk volume the node formats
with NTFS, in containers that run as `ContainerUser`:

* the user is `windowsOptions.runAsUserName` (the container's, else the pod's), else the image's
  default user: the image config's `User` when a registry lookup read it (`--registry`, the
  webhook's `registry.mode`), else what winlint knows (Nano Server, and the .NET, PowerShell and
  Docker official images built on it, run as `ContainerUser`). An unknown user is not reported;
* the volume is an in-tree disk (`azureDisk`, `awsElasticBlockStore`, `gcePersistentDisk`,
  `vsphereVolume`), or a claim (`persistentVolumeClaim`, a StatefulSet's `volumeClaimTemplates`,
  an `ephemeral` volume) whose StorageClass, found in the input, is provisioned by a disk driver
  (Azure Disk, EBS, GCE PD, vSphere). Without the StorageClass the claim may be a file share and
  nothing is reported. `emptyDir`, `hostPath` and SMB shares take their permissions from the node
  or the share, and ConfigMap, Secret and projected volumes are read-only.

An init container that mounts the volume and runs `icacls` is taken as the fix: nothing is
reported for that volume. When the container's `command` or `args` name paths under the mount
and all of them are in subdirectories (`C:\data\logs\app.log`), the program writes where it
may: nothing is reported; a path directly in the root (`C:\data\app.db`) is named in the
message.

## Why is this bad?
The root of a freshly formatted NTFS volume grants `BUILTIN\Users` (of which `ContainerUser` is a
member) read, and the right to create folders, but not files (`BUILTIN\Users:(CI)(IO)(WD)`
applies to subfolders only). Creating a file directly in the mount path fails with `Access is
denied`; creating a subfolder and writing inside it works. ContainerAdministrator writes
anywhere. The pod runs; the application's first write at the root of its data directory fails
(kubernetes/kubernetes#131341, kubernetes-csi/csi-proxy#382, dotnet/dotnet-docker#569).

## Example
```yaml
spec:
  os: {name: windows}
  containers:
  - name: db
    image: mcr.microsoft.com/windows/nanoserver:ltsc2022
    volumeMounts:
    - {name: data, mountPath: 'C:\data'}
  volumes:
  - name: data
    persistentVolumeClaim: {claimName: data}   # StorageClass provisioner: disk.csi.azure.com
```

## Fix
Any one of:
* mount a subdirectory of the volume (`subPath: data`): the kubelet creates it, and
  `BUILTIN\Users` may create files in subfolders;
* run the container as `ContainerAdministrator` (`windowsOptions.runAsUserName`);
* grant `BUILTIN\Users` modify rights on the volume root from an init container that runs as
  `ContainerAdministrator` and mounts the volume:
  `icacls C:\data /grant *S-1-5-32-545:(OI)(CI)M`.
"#,
    fix: None,
    source: "kubernetes/kubernetes#131341, kubernetes-csi/csi-proxy#382, dotnet/dotnet-docker#569, moby/buildkit#4731",
    applies: "all",
    os: RuleOs::Windows,
    default_on: true,
    reads: Reads::of(&[Area::Containers, Area::Volumes, Area::PodSecurityContext]),
    mutation: Mutation::DEFAULT,
};

/// In-tree volume sources that attach a disk the node formats.
const DISK_SOURCES: &[&str] = &[
    "azureDisk",
    "awsElasticBlockStore",
    "gcePersistentDisk",
    "vsphereVolume",
];

/// StorageClass provisioners that attach a disk the node formats (NTFS on Windows, by
/// csi-proxy's `FormatVolume`), CSI drivers and the in-tree names they migrated from. File
/// drivers (`file.csi.azure.com`, `smb.csi.k8s.io`) mount a share whose permissions the share
/// decides: not listed.
const DISK_PROVISIONERS: &[&str] = &[
    "disk.csi.azure.com",
    "kubernetes.io/azure-disk",
    "ebs.csi.aws.com",
    "kubernetes.io/aws-ebs",
    "pd.csi.storage.gke.io",
    "kubernetes.io/gce-pd",
    "csi.vsphere.vmware.com",
    "kubernetes.io/vsphere-volume",
];

pub(crate) fn containeruser_volume_root(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    let mut out = Vec::new();
    // Built once per pod (a pod of many containers and mounts stays linear): the volumes by
    // name, and those an init container grants with icacls.
    let mut volumes: HashMap<&str, &Value> = HashMap::new();
    for (_, v) in site.volumes() {
        volumes.entry(vol_name(v)).or_insert(v);
    }
    let granted = granted_by_init_containers(site);
    // The engine analysed every container's image once, in container order.
    for (c, image) in &eval.images {
        let c = *c;
        if c.list == "ephemeralContainers" || is_host_process(site, &c) {
            continue;
        }
        let mounts = list(c.value, "volumeMounts");
        if mounts.is_empty() {
            continue;
        }
        let Some(user) = effective_user(site, &c, eval, Some(image)) else {
            continue;
        };
        if !user.is_container_user() {
            continue;
        }
        for (i, m) in each(mounts).enumerate() {
            let writable = m.get("readOnly").and_then(Value::as_bool) != Some(true);
            let root = ["subPath", "subPathExpr"]
                .iter()
                .all(|k| m.get(*k).and_then(Value::as_str).is_none_or(str::is_empty));
            let name = m.get("name").and_then(Value::as_str).unwrap_or("");
            if !writable || !root || granted.contains(name) {
                continue;
            }
            let Some(disk) = disk_volume(site, eval, volumes.get(name).copied(), name) else {
                continue;
            };
            let path = mount_path(m).unwrap_or("");
            let win = windows_form(path);
            let evidence = match written_paths(&c, path) {
                Written::OnlyInSubdirectories => continue,
                Written::AtRoot(file) => format!(" (the command names {file})"),
                Written::Unknown => String::new(),
            };
            out.push(Finding::new(
                &WIN315,
                site.container_ptr(&c, &format!("/volumeMounts/{i}")),
                format!(
                    "{} runs as ContainerUser ({}) and mounts volume {name:?} ({disk}) at {path}: \
                     the root of an NTFS volume lets BUILTIN\\Users create folders there but not \
                     files, so a file written directly in {win}{evidence} fails with Access is denied. \
                     Mount a subPath, run as ContainerAdministrator (windowsOptions.runAsUserName), \
                     or grant Users modify rights from an init container running as \
                     ContainerAdministrator (icacls {win} /grant *S-1-5-32-545:(OI)(CI)M)",
                    c.label(),
                    user.why(),
                ),
            ));
        }
    }
    out
}

/// Whether volume `name` is a disk the node formats, and why winlint knows (for the message).
fn disk_volume(site: &PodSite, eval: &Eval, volume: Option<&Value>, name: &str) -> Option<String> {
    let ns = site.namespace.unwrap_or("default");
    let class_of = |class: Option<&str>| -> Option<String> {
        let class = match class {
            Some(c) => c.to_string(),
            None => eval.context.default_storage_class.clone()?,
        };
        let provisioner = eval.context.storage_classes.get(&class)?;
        DISK_PROVISIONERS
            .contains(&provisioner.as_str())
            .then(|| format!("StorageClass {class:?}, provisioner {provisioner}"))
    };
    if let Some(v) = volume {
        let kind = volume_type(v)?;
        if DISK_SOURCES.contains(&kind) {
            return Some(format!("an {kind} disk"));
        }
        return match kind {
            "persistentVolumeClaim" => {
                let claim = v.lookup("/persistentVolumeClaim/claimName")?.as_str()?;
                let class = eval.context.claims.get(&(ns.into(), claim.into()))?;
                class_of(class.as_deref()).map(|why| format!("claim {claim:?}, {why}"))
            }
            "ephemeral" => class_of(
                v.lookup("/ephemeral/volumeClaimTemplate/spec/storageClassName")
                    .and_then(Value::as_str),
            ),
            _ => None,
        };
    }
    // A StatefulSet's claim templates are volumes of its pods, by name.
    if site.kind != "StatefulSet" {
        return None;
    }
    let template = site
        .object
        .lookup("/spec/volumeClaimTemplates")
        .and_then(Value::as_array)?
        .iter()
        .find(|t| t.lookup("/metadata/name").and_then(Value::as_str) == Some(name))?;
    class_of(
        template
            .lookup("/spec/storageClassName")
            .and_then(Value::as_str),
    )
    .map(|why| format!("volumeClaimTemplate, {why}"))
}

/// A mount path as Windows writes it, for the message: `/data/` → `C:\\data` (the kubelet mounts a
/// path without a drive on `C:`).
fn windows_form(path: &str) -> String {
    let p = path.replace('/', "\\");
    let p = p.trim_end_matches('\\');
    if p.starts_with('\\') {
        format!("C:{p}")
    } else {
        p.to_string()
    }
}

/// What the container's `command` and `args` say about the files it writes under a mount.
enum Written {
    /// A path directly in the mount's root (the first one named).
    AtRoot(String),
    /// Paths under the mount, all in subdirectories: the program creates the folder (which
    /// `BUILTIN\Users` may) and writes inside it, as the OpenShift WMCO vSphere CSI sample does.
    OnlyInSubdirectories,
    /// No path under the mount: the program's own configuration decides.
    Unknown,
}

/// The paths under `mount_path` that the container's `command` and `args` name (compared as
/// Windows compares paths: without case, `/` as `\`, a path without a drive on `C:`).
fn written_paths(c: &ContainerRef, mount_path: &str) -> Written {
    let norm = |s: &str| s.to_ascii_lowercase().replace('/', "\\");
    let mut root = norm(mount_path).trim_end_matches('\\').to_string();
    if root.starts_with('\\') {
        root.insert_str(0, "c:");
    }
    if root.is_empty() {
        return Written::Unknown;
    }
    let prefix = format!("{root}\\");
    let mut deeper = false;
    for arg in ["command", "args"]
        .iter()
        .flat_map(|f| items(c.value, f))
        .filter_map(Value::as_str)
    {
        // ASCII lower-casing and `/` → `\` keep byte offsets: the path is cut from `arg` as
        // written.
        let normalized = norm(arg);
        let mut from = 0;
        while let Some(at) = normalized[from..].find(&prefix) {
            let start = from + at;
            let tail = &normalized[start + prefix.len()..];
            let end = tail
                .find(|ch: char| ch.is_whitespace() || "'\";|&<>,".contains(ch))
                .unwrap_or(tail.len());
            let name = &tail[..end];
            if name.contains('\\') {
                deeper = true;
            } else if !name.is_empty() {
                return Written::AtRoot(arg[start..start + prefix.len() + end].to_string());
            }
            from = start + prefix.len() + end;
        }
    }
    if deeper {
        Written::OnlyInSubdirectories
    } else {
        Written::Unknown
    }
}

/// The volumes an init container mounts while it runs `icacls`: the documented fix (a grant to
/// `BUILTIN\Users` from an administrator) is in place for them.
fn granted_by_init_containers<'a>(site: &PodSite<'a>) -> HashSet<&'a str> {
    let mut out = HashSet::new();
    for c in site.containers().filter(|c| c.list == "initContainers") {
        let icacls = ["command", "args"].iter().any(|f| {
            items(c.value, f)
                .filter_map(Value::as_str)
                .any(|s| s.to_ascii_lowercase().contains("icacls"))
        });
        if icacls {
            out.extend(
                items(c.value, "volumeMounts")
                    .filter_map(|m| m.get("name").and_then(Value::as_str)),
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    use crate::model::Context;
    use crate::rules::testutil::{cfg, set, winok};

    const C0: &str = "/spec/containers/0";

    fn nano_with(volume: Value, mount: Value) -> Value {
        let pod = set(
            winok(),
            &format!("{C0}/image"),
            json!("mcr.microsoft.com/windows/nanoserver:ltsc2022"),
        );
        let pod = set(pod, &format!("{C0}/volumeMounts"), json!([mount]));
        set(pod, "/spec/volumes", json!([volume]))
    }

    fn disk_context() -> Context {
        let mut cx = Context::default();
        cx.add(
            &json!({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
            "metadata": {"name": "managed-csi",
                "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}},
            "provisioner": "disk.csi.azure.com"}),
        );
        cx.add(
            &json!({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
            "metadata": {"name": "azurefile-csi"}, "provisioner": "file.csi.azure.com"}),
        );
        for (claim, class) in [
            ("data", json!("managed-csi")),
            ("share", json!("azurefile-csi")),
            ("default", Value::Null),
        ] {
            cx.add(&json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                "metadata": {"name": claim}, "spec": {"storageClassName": class}}));
        }
        cx
    }

    fn hits(pod: &Value, cx: &Context) -> Vec<String> {
        crate::engine::lint_object(pod, &cfg(), cx, crate::model::Operation::Lint)
            .findings
            .into_iter()
            .filter(|f| f.rule.id == "WIN315")
            .map(|f| f.pointer)
            .collect()
    }

    fn claim(name: &str) -> Value {
        json!({"name": "data", "persistentVolumeClaim": {"claimName": name}})
    }

    const MOUNT: &str = "C:\\data";

    #[test]
    fn container_user_on_a_disk_claim() {
        let pod = nano_with(claim("data"), json!({"name": "data", "mountPath": MOUNT}));
        assert_eq!(
            hits(&pod, &disk_context()),
            [format!("{C0}/volumeMounts/0")]
        );
        // The default StorageClass serves a claim without one.
        let pod = nano_with(
            claim("default"),
            json!({"name": "data", "mountPath": MOUNT}),
        );
        assert_eq!(hits(&pod, &disk_context()).len(), 1);
        // An in-tree disk needs no context.
        let pod = nano_with(
            json!({"name": "data", "azureDisk": {"diskName": "d", "diskURI": "u"}}),
            json!({"name": "data", "mountPath": MOUNT}),
        );
        assert_eq!(hits(&pod, &Context::default()).len(), 1);
    }

    #[test]
    fn near_misses() {
        let cx = disk_context();
        let mount = json!({"name": "data", "mountPath": MOUNT});
        // A file share, an unknown claim, an emptyDir.
        assert!(hits(&nano_with(claim("share"), mount.clone()), &cx).is_empty());
        assert!(hits(&nano_with(claim("elsewhere"), mount.clone()), &cx).is_empty());
        let empty = json!({"name": "data", "emptyDir": {}});
        assert!(hits(&nano_with(empty, mount.clone()), &cx).is_empty());
        // Read-only, or a subdirectory of the volume.
        let ro = json!({"name": "data", "mountPath": MOUNT, "readOnly": true});
        assert!(hits(&nano_with(claim("data"), ro), &cx).is_empty());
        let sub = json!({"name": "data", "mountPath": MOUNT, "subPath": "db"});
        assert!(hits(&nano_with(claim("data"), sub), &cx).is_empty());
        // ContainerAdministrator, at the pod level.
        let admin = set(
            nano_with(claim("data"), mount.clone()),
            "/spec/securityContext",
            json!({"windowsOptions": {"runAsUserName": "ContainerAdministrator"}}),
        );
        assert!(hits(&admin, &cx).is_empty());
        // An image whose user winlint does not know.
        let unknown = set(
            nano_with(claim("data"), mount.clone()),
            &format!("{C0}/image"),
            json!("contoso/app:1.0-ltsc2022"),
        );
        assert!(hits(&unknown, &cx).is_empty());
        // ... unless runAsUserName says ContainerUser.
        let user = set(
            unknown,
            &format!("{C0}/securityContext"),
            json!({"windowsOptions": {"runAsUserName": "containeruser"}}),
        );
        assert_eq!(hits(&user, &cx).len(), 1);
    }

    #[test]
    fn paths_the_command_names() {
        let cx = disk_context();
        let mount = json!({"name": "data", "mountPath": "/test/"});
        let with = |script: &str| {
            set(
                nano_with(claim("data"), mount.clone()),
                &format!("{C0}/command"),
                json!(["pwsh.exe", "-command", script]),
            )
        };
        // The OpenShift WMCO sample: a file in a subdirectory it creates.
        let sub = with("$f='C:\\test\\csi\\timestamp.txt'; New-Item -Path $f -Force");
        assert!(hits(&sub, &cx).is_empty());
        let root = with("Add-Content C:/Test/timestamp.txt x");
        let found = crate::engine::lint_object(&root, &cfg(), &cx, crate::model::Operation::Lint)
            .findings
            .into_iter()
            .find(|f| f.rule.id == "WIN315")
            .expect("a finding");
        assert!(
            found.message.contains("C:/Test/timestamp.txt")
                && found.message.contains("icacls C:\\test "),
            "{}",
            found.message
        );
        // No path: the program's configuration decides, and the data directory is the mount.
        assert_eq!(hits(&with("Start-App"), &cx).len(), 1);
    }

    #[test]
    fn an_init_container_granting_users_is_the_fix() {
        let pod = nano_with(claim("data"), json!({"name": "data", "mountPath": MOUNT}));
        let pod = set(
            pod,
            "/spec/initContainers",
            json!([{"name": "acl", "image": "mcr.microsoft.com/windows/servercore:ltsc2022",
                "command": ["cmd", "/c", "icacls C:\\data /grant *S-1-5-32-545:(OI)(CI)M"],
                "volumeMounts": [{"name": "data", "mountPath": MOUNT}]}]),
        );
        assert!(hits(&pod, &disk_context()).is_empty());
    }

    #[test]
    fn statefulset_claim_templates() {
        let sts = json!({"apiVersion": "apps/v1", "kind": "StatefulSet",
            "metadata": {"name": "db"},
            "spec": {"serviceName": "db", "selector": {"matchLabels": {"app": "db"}},
                "template": {"metadata": {"labels": {"app": "db"}}, "spec": {
                    "os": {"name": "windows"},
                    "nodeSelector": {"kubernetes.io/os": "windows"},
                    "tolerations": [{"key": "os", "value": "windows", "effect": "NoSchedule"}],
                    "containers": [{"name": "db",
                        "image": "mcr.microsoft.com/dotnet/aspnet:8.0-nanoserver-ltsc2022",
                        "volumeMounts": [{"name": "data", "mountPath": MOUNT}]}]}},
                "volumeClaimTemplates": [{"metadata": {"name": "data"},
                    "spec": {"storageClassName": "managed-csi",
                        "accessModes": ["ReadWriteOnce"],
                        "resources": {"requests": {"storage": "1Gi"}}}}]}});
        assert_eq!(
            hits(&sts, &disk_context()),
            ["/spec/template/spec/containers/0/volumeMounts/0"]
        );
    }

    #[test]
    fn registry_facts_name_the_user() {
        use crate::model::image_facts::{ImageFacts, ImageFactsMap};
        use std::sync::Arc;
        let image = "contoso/app:1.0-ltsc2022";
        let pod = set(
            nano_with(claim("data"), json!({"name": "data", "mountPath": MOUNT})),
            &format!("{C0}/image"),
            json!(image),
        );
        let facts = |user: &str| {
            let mut m = ImageFactsMap::new();
            m.insert(
                crate::model::image::fact_key(image).into_owned(),
                Arc::new(ImageFacts {
                    digest: "sha256:0".into(),
                    list: false,
                    platforms: vec![],
                    user: Some(user.into()),
                }),
            );
            m
        };
        let mut cx = disk_context();
        cx.images = Some(Arc::new(facts("ContainerUser")));
        assert_eq!(hits(&pod, &cx).len(), 1);
        cx.images = Some(Arc::new(facts("ContainerAdministrator")));
        assert!(hits(&pod, &cx).is_empty());
    }

    /// Steps of the rule on a pod of `n` ContainerUser containers, each mounting its own disk
    /// claim and every other container's (n² mounts): the work must follow the mounts, not
    /// mounts × containers or mounts × volumes.
    #[test]
    fn work_is_linear_in_mounts() {
        let cx = disk_context();
        let steps = |n: usize| {
            let volumes: Vec<Value> = (0..n)
                .map(|i| json!({"name": format!("v{i}"), "persistentVolumeClaim": {"claimName": "data"}}))
                .collect();
            let mounts: Vec<Value> = (0..n)
                .map(|i| json!({"name": format!("v{i}"), "mountPath": format!("C:\\d{i}")}))
                .collect();
            let containers: Vec<Value> = (0..n)
                .map(|i| {
                    json!({"name": format!("c{i}"),
                    "image": "mcr.microsoft.com/windows/nanoserver:ltsc2022",
                    "volumeMounts": mounts})
                })
                .collect();
            let pod = set(
                set(winok(), "/spec/containers", json!(containers)),
                "/spec/volumes",
                json!(volumes),
            );
            let site = crate::model::workload::pod_sites(&pod).remove(0);
            let images = site
                .containers()
                .map(|c| (c, crate::model::image::analyze(c.image().unwrap_or(""))))
                .collect();
            let cfg = cfg();
            let eval = Eval::new(
                &cfg.target,
                &cx,
                crate::model::Operation::Lint,
                crate::model::classify::classify(&site, std::iter::empty(), &cx, &cfg.target),
                images,
            );
            let before = crate::model::work::steps();
            let found = containeruser_volume_root(&site, &eval).len();
            assert_eq!(found, n * n);
            crate::model::work::steps() - before
        };
        let (small, big) = (steps(20), steps(40));
        // n² mounts: four times the mounts may cost about four times the steps, not eight.
        assert!(
            big <= small * 5,
            "{small} steps for 400 mounts, {big} for 1600"
        );
    }
}
