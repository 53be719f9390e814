//! WIN313 `termination-message-file`.

use crate::model::Eval;
use crate::model::Runtime;
use crate::model::meta::{Area, Mutation, Reads, RuleOs};
use crate::model::workload::PodSite;
use crate::model::{Finding, RuleMeta, Severity};
use crate::rules::Rule;
use serde_json::Value;

/// WIN313 in the registry.
pub const RULE: Rule = Rule {
    meta: &WIN313,
    check: termination_message_file,
};

/// The kubelet's (API-defaulted) termination message path.
pub(crate) const DEFAULT_TERMINATION_MESSAGE_PATH: &str = "/dev/termination-log";

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
    default_on: true,
    reads: Reads::of(&[Area::Containers]),
    mutation: Mutation::DEFAULT,
};

pub(crate) fn termination_message_file(site: &PodSite, eval: &Eval) -> Vec<Finding> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    use crate::rules::testutil::{cfg, hit, hits, set, winok};

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
            hit(Severity::Info, "/spec/containers/0/terminationMessagePath")
        );
        assert!(hits(&pod, &cfg(), "WIN313").is_empty());
        let dflt = set(
            winok(),
            "/spec/containers/0/terminationMessagePath",
            json!("/dev/termination-log"),
        );
        assert!(hits(&dflt, &docker, "WIN313").is_empty());
    }
}
