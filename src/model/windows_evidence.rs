//! Windows evidence beyond the image name and the OS fields (issue 19): what in a pod spec only
//! makes sense on a Windows node. [`classify`](super::classify) weighs it with the rest.
//!
//! How strong each kind is, and why:
//!
//! * **Definite**: an extended resource that only Windows nodes advertise ([`WINDOWS_RESOURCES`]).
//!   The scheduler places the pod only on a node that advertises it (NodeResourcesFit), so it can
//!   land nowhere else: as good as a selector, and the webhook may mutate such a pod.
//! * **Probable**: a path that exists only on Windows (a drive letter `C:\`, a UNC share
//!   `\\server\share`, a named pipe `\\.\pipe\x`) as a `hostPath`, a `mountPath`, or the program a
//!   container starts; a FlexVolume driver that is a Windows script (`*.cmd`, `*.ps1`: the
//!   Windows FlexVolume plugins of microsoft/K8s-Storage-Plugins). A Linux kubelet or runtime would
//!   refuse or misread each of them, so the author meant Windows; but they do not keep the pod off
//!   Linux nodes. Rules fire; the webhook mutates only under `mutation.probable`.
//! * Not evidence: a Windows path among a container's other arguments (a Linux tool may be given
//!   one to pass on), CSI drivers (`smb.csi.k8s.io`, `disk.csi.azure.com`, `file.csi.azure.com`
//!   have Linux node plugins too).

use super::workload::PodSite;

/// How strong one piece of Windows evidence is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Weight {
    /// Keeps the pod off every other node (the scheduler enforces it).
    Definite,
    /// Meant for Windows, but does not keep the pod off other nodes.
    Probable,
}

/// Extended resources that only Windows nodes advertise, with the device plugin that does.
pub const WINDOWS_RESOURCES: &[(&str, &str)] = &[
    (
        "microsoft.com/directx",
        "the DirectX device plugin for Windows (k8s-directx-device-plugin)",
    ),
    (
        "directx.microsoft.com/display",
        "the DirectX device plugin for Windows (TensorWorks DirectX-Device-Plugins)",
    ),
    (
        "directx.microsoft.com/compute",
        "the DirectX MCDM device plugin for Windows (TensorWorks DirectX-Device-Plugins)",
    ),
];

/// One piece of Windows evidence: its weight, what it is (for messages) and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Evidence {
    pub weight: Weight,
    pub what: String,
    /// JSON pointer within the object.
    pub pointer: String,
}

/// A path that exists only on Windows: a drive letter (`C:\x`, `c:/x`, `C:`), a UNC share or a
/// device or pipe path (`\\server\share`, `\\.\pipe\x`, `\\?\C:\x`).
pub fn windows_only_path(p: &str) -> bool {
    let b = p.as_bytes();
    let drive = b.len() >= 2
        && b[0].is_ascii_alphabetic()
        && b[1] == b':'
        && (b.len() == 2 || b[2] == b'\\' || b[2] == b'/');
    drive || (p.starts_with(r"\\") && p.len() > 2)
}

/// A program only Windows runs: a Windows path, or a name with a Windows executable suffix.
fn windows_program(p: &str) -> bool {
    let l = p.to_ascii_lowercase();
    windows_only_path(p)
        || [".exe", ".cmd", ".bat", ".ps1"]
            .iter()
            .any(|s| l.ends_with(s) && l.len() > s.len())
}

/// The Windows evidence of a pod site, in spec order.
pub fn evidence(site: &PodSite) -> Vec<Evidence> {
    let mut out = Vec::new();
    for c in site.containers() {
        for kind in ["limits", "requests"] {
            let Some(res) = c.value["resources"][kind].as_object() else {
                continue;
            };
            for (name, _plugin) in WINDOWS_RESOURCES {
                if res.contains_key(*name) {
                    out.push(Evidence {
                        weight: Weight::Definite,
                        what: format!(
                            "{} requests {name}, a resource only Windows nodes advertise",
                            c.label()
                        ),
                        pointer: site.ptr(&format!(
                            "{}/resources/{kind}/{}",
                            c.rel(),
                            super::pointer::escape(name)
                        )),
                    });
                }
            }
        }
        for (i, m) in c.value["volumeMounts"]
            .as_array()
            .into_iter()
            .flatten()
            .enumerate()
        {
            if let Some(p) = m["mountPath"].as_str().filter(|p| windows_only_path(p)) {
                out.push(Evidence {
                    weight: Weight::Probable,
                    what: format!("{} mounts at the Windows path {p}", c.label()),
                    pointer: site.ptr(&format!("{}/volumeMounts/{i}/mountPath", c.rel())),
                });
            }
        }
        // The program the container starts: command[0], else args[0] only when there is no
        // command (then args[0] is an argument of the image's entrypoint: not evidence).
        if let Some(p) = c.value["command"][0]
            .as_str()
            .filter(|p| windows_program(p))
        {
            out.push(Evidence {
                weight: Weight::Probable,
                what: format!("{} runs the Windows program {p}", c.label()),
                pointer: site.ptr(&format!("{}/command/0", c.rel())),
            });
        }
    }
    for (i, v) in site.volumes() {
        if let Some(p) = v["hostPath"]["path"]
            .as_str()
            .filter(|p| windows_only_path(p))
        {
            out.push(Evidence {
                weight: Weight::Probable,
                what: format!("hostPath {p}, a Windows path"),
                pointer: site.ptr(&format!("/volumes/{i}/hostPath/path")),
            });
        }
        if let Some(d) = v["flexVolume"]["driver"].as_str().filter(|d| {
            let l = d.to_ascii_lowercase();
            l.ends_with(".cmd") || l.ends_with(".ps1")
        }) {
            out.push(Evidence {
                weight: Weight::Probable,
                what: format!("FlexVolume driver {d}, a Windows script"),
                pointer: site.ptr(&format!("/volumes/{i}/flexVolume/driver")),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::workload::pod_sites;
    use serde_json::{Value, json};

    fn of(spec: Value) -> Vec<(Weight, String)> {
        let pod = json!({"kind": "Pod", "metadata": {"name": "p"}, "spec": spec});
        let sites = pod_sites(&pod);
        evidence(&sites[0])
            .into_iter()
            .map(|e| (e.weight, e.pointer))
            .collect()
    }

    #[test]
    fn windows_paths() {
        for p in [
            r"C:\data",
            "c:/data",
            "C:",
            r"\\server\share",
            r"\\.\pipe\docker_engine",
        ] {
            assert!(windows_only_path(p), "{p}");
        }
        for p in [
            "/data", "data", "C", "Cx:/", "c:data", r"\\", "", "1:/x", "http://x",
        ] {
            assert!(!windows_only_path(p), "{p}");
        }
    }

    #[test]
    fn evidence_by_kind() {
        let got = of(json!({
            "containers": [{
                "name": "a", "image": "x",
                "command": [r"C:\app\run.exe"],
                "args": [r"D:\logs"],
                "resources": {"limits": {"microsoft.com/directx": 1}},
                "volumeMounts": [{"name": "v", "mountPath": "/data"}, {"name": "w", "mountPath": r"C:\data"}]
            }],
            "volumes": [
                {"name": "v", "hostPath": {"path": "/var/log"}},
                {"name": "w", "hostPath": {"path": r"\\.\pipe\containerd-containerd"}},
                {"name": "f", "flexVolume": {"driver": "microsoft.com/smb.cmd"}},
                {"name": "g", "flexVolume": {"driver": "example.com/lvm"}},
                {"name": "s", "csi": {"driver": "smb.csi.k8s.io"}}
            ]
        }));
        assert_eq!(
            got,
            vec![
                (
                    Weight::Definite,
                    "/spec/containers/0/resources/limits/microsoft.com~1directx".to_string()
                ),
                (
                    Weight::Probable,
                    "/spec/containers/0/volumeMounts/1/mountPath".to_string()
                ),
                (Weight::Probable, "/spec/containers/0/command/0".to_string()),
                (
                    Weight::Probable,
                    "/spec/volumes/1/hostPath/path".to_string()
                ),
                (
                    Weight::Probable,
                    "/spec/volumes/2/flexVolume/driver".to_string()
                ),
            ]
        );
        // A Windows path among the arguments alone, a Linux program, a CSI driver: nothing.
        assert!(
            of(json!({"containers": [{"name": "a", "image": "x",
                "command": ["/bin/agent", r"--target=C:\x"], "args": [r"C:\y"]}],
                "volumes": [{"name": "s", "csi": {"driver": "disk.csi.azure.com"}}]}))
            .is_empty()
        );
    }
}
