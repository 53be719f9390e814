//! WIN312 `linux-hostpath`.

use crate::model::Eval;
use crate::model::meta::{Area, Mutation, Reads, RuleOs};
use crate::model::workload::PodSite;
use crate::model::{Finding, RuleMeta, Severity};
use crate::rules::Rule;
use crate::rules::volumes::common::vol_name;
use serde_json::Value;

/// WIN312 in the registry.
pub const RULE: Rule = Rule {
    meta: &WIN312,
    check: linux_hostpath,
};

// ---------------------------------------------------------------------------------------------
// WIN312

/// Host paths that only exist on Linux nodes (first path components).
/// The Unix sockets of Linux container runtimes and daemons: they do not exist on a Windows node
/// (Docker listens on `\\.\pipe\docker_engine`, containerd on `\\.\pipe\containerd-containerd`).
pub(crate) const LINUX_DAEMON_SOCKETS: &[&str] = &[
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
pub(crate) const LINUX_PSEUDO_DIRS: &[&str] = &["/proc", "/sys", "/dev", "/run", "/var/run"];

/// What a root-relative hostPath is on a Linux node that it cannot be on a Windows one, if
/// anything: a Linux daemon socket, or a kernel/tmpfs tree. Other root-relative paths
/// (`/etc/cni/net.d`, `/var/log`, `/opt/cni/bin`) are ordinary directories of the system drive.
pub(crate) fn linux_only_host_path(p: &str) -> Option<&'static str> {
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
pub(crate) fn own_run_dir(p: &str) -> bool {
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

## Severity
`warning` for a Linux host path (the kubelet mounts an ordinary directory); `error` for a
`CharDevice` or `BlockDevice` type, whose check fails on Windows so that the pod does not start.
"#,
    fix: None,
    source: "K-INTRO, pkg/volume/util/util.go (MakeAbsolutePath), hostutil_windows.go, issue-9 research §4",
    applies: "all",
    os: RuleOs::Windows,
    default_on: true,
    reads: Reads::of(&[Area::Containers, Area::Volumes, Area::PodSecurityContext]),
    mutation: Mutation::DEFAULT,
};

pub(crate) fn linux_hostpath(site: &PodSite, _eval: &Eval) -> Vec<Finding> {
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
            )
            // The kubelet refuses to set the volume up: the pod cannot start (an error, unlike
            // the paths above, which mount an ordinary directory).
            .severity(Severity::Error));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    use crate::rules::testutil::{assert_says, cfg, hit, hits, only, set};
    use crate::rules::volumes::common::tests::pod_with;

    #[test]
    fn win312_linux_hostpaths() {
        let pod = pod_with(
            json!({"name":"sock","hostPath":{"path":"/var/run/docker.sock","type":"Socket"}}),
            json!({"name":"sock","mountPath":r"C:\sock"}),
        );
        // One finding for the socket path; `type: Socket` alone says nothing.
        assert_eq!(
            hits(&pod, &cfg(), "WIN312"),
            hit(Severity::Warning, "/spec/volumes/0/hostPath/path")
        );
        let f = &only(&pod, &cfg(), "WIN312")[0];
        assert_says(f, r"\\.\pipe\docker_engine");
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
                hit(Severity::Error, "/spec/volumes/0/hostPath/type"),
                "{ty}"
            );
        }
    }
}
