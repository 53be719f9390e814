//! WIN311 `named-pipe-mismatch`.

use crate::model::Eval;
use crate::model::meta::{Area, Mutation, Reads, RuleOs};
use crate::model::paths::kubelet_pipe_path;
use crate::model::workload::Lookup;
use crate::model::workload::PodSite;
use crate::model::{Finding, RuleMeta, Severity};
use crate::rules::Rule;
use crate::rules::volumes::common::mount_path;
use crate::rules::volumes::common::mount_ptr;
use crate::rules::volumes::common::mounts;
use crate::rules::volumes::common::volume_type;
use serde_json::Value;

/// WIN311 in the registry.
pub const RULE: Rule = Rule {
    meta: &WIN311,
    check: named_pipe_mismatch,
};

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
    default_on: true,
    reads: Reads::of(&[Area::Containers, Area::Volumes]),
    mutation: Mutation::DEFAULT,
};

pub(crate) fn named_pipe_mismatch(site: &PodSite, _eval: &Eval) -> Vec<Finding> {
    let mut out = Vec::new();
    for (c, i, m) in mounts(site) {
        let Some(path) = mount_path(m) else { continue };
        let name = m.get("name").and_then(Value::as_str).unwrap_or("");
        let Some((_, vol)) = site.volume(name) else {
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    use crate::rules::testutil::{cfg, hit, hits, ids_in};
    use crate::rules::volumes::common::tests::OWN;
    use crate::rules::volumes::common::tests::pod_with;

    /// Steps of work of WIN311 on a pod of one container with `n` pipe volumes, each mounted
    /// at a directory (a finding each), run within `deadline`.
    fn run(n: usize, deadline: Option<std::time::Instant>) -> (Option<usize>, u64) {
        use crate::model::{Context, deadline, work};
        let volumes: Vec<_> = (0..n)
            .map(|i| json!({"name": format!("v{i}"), "hostPath": {"path": format!(r"\\.\pipe\p{i}")}}))
            .collect();
        let mounts: Vec<_> = (0..n)
            .map(|i| json!({"name": format!("v{i}"), "mountPath": format!(r"C:\p{i}")}))
            .collect();
        let pod = pod_with(json!(null), json!(null));
        let pod = crate::rules::testutil::set(pod, "/spec/volumes", json!(volumes));
        let pod =
            crate::rules::testutil::set(pod, "/spec/containers/0/volumeMounts", json!(mounts));
        let site = crate::model::workload::pod_sites(&pod).remove(0);
        let (cfg, cx) = (cfg(), Context::default());
        let eval = Eval::new(
            &cfg.target,
            &cx,
            crate::model::Operation::Lint,
            crate::model::classify::classify(&site, std::iter::empty(), &cx, &cfg.target),
            Vec::new(),
        );
        let before = work::steps();
        let found = deadline::within(deadline, || named_pipe_mismatch(&site, &eval).len());
        (found.ok(), work::steps() - before)
    }

    #[test]
    fn linear_in_mounts_and_volumes() {
        // A volume looked up by name per mount: one step each, not a scan of the volumes.
        let (found, small) = run(1_000, None);
        assert_eq!(found, Some(1_000));
        let (found, big) = run(4_000, None);
        assert_eq!(found, Some(4_000));
        assert!(
            big <= small * 5,
            "{small} steps for 1 000 mounts, {big} for 4 000"
        );
    }

    #[test]
    fn a_passed_deadline_stops_the_loop_over_one_containers_mounts() {
        // Past its deadline the rule stops within a few hundred of one container's 20 000
        // mounts (the deadline ticks per item), not after them.
        let past = std::time::Instant::now() - std::time::Duration::from_millis(1);
        let (found, steps) = run(20_000, Some(past));
        assert_eq!(found, None, "the rule ran to its end");
        assert!(steps < 1_000, "{steps} steps after the deadline");
        let (found, steps) = run(20_000, None);
        assert_eq!(found, Some(20_000));
        assert!(steps >= 20_000, "{steps}");
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
            hit(
                Severity::Warning,
                "/spec/containers/0/volumeMounts/0/mountPath"
            )
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
}
