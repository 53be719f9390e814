//! WIN206 `hostprocess-pipe-or-socket-mount`.

use crate::model::Eval;
use crate::model::meta::{Area, Mutation, Reads, RuleOs};
use crate::model::paths::host_pipe_path;
use crate::model::workload::Lookup;
use crate::model::workload::PodSite;
use crate::model::{Finding, RuleMeta, Severity};
use crate::rules::Rule;
use crate::rules::hostprocess::common::host_process_pod;
use serde_json::Value;

/// WIN206 in the registry.
pub const RULE: Rule = Rule {
    meta: &WIN206,
    check: hostprocess_pipe_or_socket_mount,
};

pub(crate) fn is_unix_socket(path: &str, host_path_type: Option<&str>) -> bool {
    host_path_type == Some("Socket") || path.to_ascii_lowercase().ends_with(".sock")
}

pub static WIN206: RuleMeta = RuleMeta {
    id: "WIN206",
    name: "hostprocess-pipe-or-socket-mount",
    severity: Severity::Warning,
    summary: "HostProcess pod mounts a named pipe or Unix domain socket",
    docs: r#"## What it does
In HostProcess pods, finds `hostPath` volumes that are named pipes (`\\.\pipe\…`) or Unix domain
sockets (`type: Socket`, `*.sock`), and volume mounts at a named-pipe path.

## Why is this bad?
"Named pipe mounts and Unix domain sockets are not supported" for HostProcess containers; they run
on the host and reach pipes and sockets directly by their host path.

## Example
```yaml
spec:
  hostNetwork: true
  securityContext:
    windowsOptions: {hostProcess: true, runAsUserName: 'NT AUTHORITY\SYSTEM'}
  containers:
  - name: agent
    image: mcr.microsoft.com/windows/nanoserver:ltsc2022
    volumeMounts:
    - {name: containerd, mountPath: '\\.\pipe\containerd-containerd'}
  volumes:
  - name: containerd
    hostPath: {path: '\\.\pipe\containerd-containerd'}
```

## Fix
Drop the volume and its mounts; open `\\.\pipe\containerd-containerd` (or the socket) by its host
path from the container.
"#,
    fix: None,
    source: "K-HPC",
    applies: "K>=1.22 (where the HostProcess field is kept)",
    os: RuleOs::Windows,
    default_on: true,
    reads: Reads::of(&[Area::Containers, Area::PodSecurityContext, Area::Volumes]),
    mutation: Mutation::DEFAULT,
};

pub(crate) fn hostprocess_pipe_or_socket_mount(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    if !host_process_pod(site, eval) {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut reported_volumes: Vec<&str> = Vec::new();
    for (i, v) in site.volumes() {
        let Some(path) = v.lookup("/hostPath/path").and_then(Value::as_str) else {
            continue;
        };
        let ty = v.lookup("/hostPath/type").and_then(Value::as_str);
        let what = if host_pipe_path(path) {
            "named pipe"
        } else if is_unix_socket(path, ty) {
            "Unix domain socket"
        } else {
            continue;
        };
        let name = v.get("name").and_then(Value::as_str).unwrap_or("");
        reported_volumes.push(name);
        out.push(Finding::new(
            &WIN206,
            site.ptr(&format!("/volumes/{i}/hostPath/path")),
            format!(
                "volume {name:?} mounts the {what} {path} into a HostProcess pod; HostProcess containers do not support {what} mounts. Drop the volume and its mounts and use {path} directly by its host path"
            ),
        ));
    }
    for c in site.containers() {
        let mounts = c.value.get("volumeMounts").and_then(Value::as_array);
        for (j, m) in mounts.into_iter().flatten().enumerate() {
            let Some(mp) = m.get("mountPath").and_then(Value::as_str) else {
                continue;
            };
            let vol = m.get("name").and_then(Value::as_str).unwrap_or("");
            if host_pipe_path(mp) && !reported_volumes.contains(&vol) {
                out.push(Finding::new(
                    &WIN206,
                    site.ptr(&format!("{}/volumeMounts/{j}/mountPath", c.rel())),
                    format!(
                        "{} mounts volume {vol:?} at the named pipe path {mp}; HostProcess containers do not support named pipe mounts. Drop the mount and use the pipe by its host path",
                        c.label()
                    ),
                ));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    use crate::rules::hostprocess::common::tests::OWN;
    use crate::rules::hostprocess::common::tests::hpc;
    use crate::rules::testutil::{cfg, ids_in, only, set, winok};

    #[test]
    fn t16_pipe_mount() {
        let pod = set(
            hpc(),
            "/spec/volumes",
            json!([{"name":"containerd","hostPath":{"path":"\\\\.\\pipe\\containerd-containerd"}}]),
        );
        let pod = set(
            pod,
            "/spec/containers/0/volumeMounts",
            json!([{"name":"containerd","mountPath":"\\\\.\\pipe\\containerd-containerd"}]),
        );
        assert_eq!(ids_in(&pod, &cfg(), OWN), ["WIN206"]);
        let fs = only(&pod, &cfg(), "WIN206");
        assert_eq!(fs.len(), 1);
        assert_eq!(fs[0].pointer, "/spec/volumes/0/hostPath/path");
        assert_eq!(fs[0].severity, Severity::Warning);
        // Unix sockets too.
        let pod = set(
            hpc(),
            "/spec/volumes",
            json!([{"name":"s","hostPath":{"path":"C:\\var\\run\\agent.sock"}},
                   {"name":"t","hostPath":{"path":"C:\\run\\x","type":"Socket"}},
                   {"name":"d","hostPath":{"path":"C:\\data"}}]),
        );
        assert_eq!(only(&pod, &cfg(), "WIN206").len(), 2);
        // T17: the same pipe mount in an ordinary Windows pod is fine (for this rule).
        let pod = set(
            winok(),
            "/spec/volumes",
            json!([{"name":"docker","hostPath":{"path":"\\\\.\\pipe\\docker_engine"}}]),
        );
        assert!(only(&pod, &cfg(), "WIN206").is_empty());
    }
}
