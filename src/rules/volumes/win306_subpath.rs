//! WIN306 `subpath`.

use crate::model::Eval;
use crate::model::Runtime;
use crate::model::meta::{Area, Mutation, Reads, RuleOs};
use crate::model::pod;
use crate::model::workload::Lookup;
use crate::model::workload::PodSite;
use crate::model::{Finding, RuleMeta, Severity};
use crate::rules::Rule;
use crate::rules::volumes::common::mount_ptr;
use crate::rules::volumes::common::mounts;
use serde_json::Value;

/// WIN306 in the registry.
pub const RULE: Rule = Rule {
    meta: &WIN306,
    check: subpath,
};

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
    default_on: true,
    reads: Reads::of(&[Area::Containers, Area::Volumes, Area::PodSecurityContext]),
    mutation: Mutation::DEFAULT,
};

/// Whether `sub` names a single file of volume `v`: a key (a configMap/secret without `items`
/// projects each key as a file, and keys contain no `/`) or an `items[].path` of a configMap,
/// secret, downwardAPI or projected volume. `None`: what `sub` names cannot be told from the
/// manifest (emptyDir, hostPath, PVC, … or a path the volume does not project).
pub(crate) fn subpath_file_kind(v: &Value, sub: &str) -> Option<&'static str> {
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

pub(crate) fn subpath(site: &PodSite, eval: &Eval) -> Vec<Finding> {
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
            .volume(name)
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    use crate::rules::testutil::{assert_says, cfg, hit, hits, only, set, unset};
    use crate::rules::volumes::common::tests::pod_with;

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
            hit(Severity::Error, "/spec/containers/0/volumeMounts/0/subPath")
        );
        let f = &only(&pod, &docker, "WIN306")[0];
        assert_says(f, "source path must be a directory");
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
}
