//! WIN411 `termination-grace-docker`.

use crate::model::Eval;
use crate::model::Runtime;
use crate::model::meta::{Mutation, Reads, RuleOs};
use crate::model::workload::PodSite;
use crate::model::{Finding, RuleMeta, Severity};
use crate::rules::Rule;
use serde_json::Value;

/// WIN411 in the registry.
pub const RULE: Rule = Rule {
    meta: &WIN411,
    check: termination_grace_docker,
};

/// The API server's default `terminationGracePeriodSeconds`.
pub(crate) const DEFAULT_GRACE: i64 = 30;

pub static WIN411: RuleMeta = RuleMeta {
    id: "WIN411",
    name: "termination-grace-docker",
    severity: Severity::Info,
    summary: "terminationGracePeriodSeconds is not honoured on Windows with the Docker runtime",
    docs: r#"## What it does
With the Docker runtime, reports `spec.terminationGracePeriodSeconds` when set to a value other
than the API server's default (30).

## Why is this bad?
Docker on Windows sends `CTRL_SHUTDOWN_EVENT` and kills the container after its own timeout
(5 seconds by registry default), whatever the pod asks for: graceful shutdown longer than that
does not happen.

## Example
```yaml
spec:
  terminationGracePeriodSeconds: 120
```

## Fix
Use containerd (which honours the grace period), or make shutdown complete within 5 seconds.
"#,
    fix: None,
    source: "K-INTRO, KEP116",
    applies: "runtime=docker",
    os: RuleOs::Windows,
    default_on: true,
    reads: Reads::NONE,
    mutation: Mutation::DEFAULT,
};

pub(crate) fn termination_grace_docker(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    if eval.target.runtime != Runtime::Docker {
        return Vec::new();
    }
    let Some(g) = site
        .get("/terminationGracePeriodSeconds")
        .and_then(Value::as_i64)
    else {
        return Vec::new();
    };
    if g == DEFAULT_GRACE {
        return Vec::new();
    }
    vec![Finding::new(
        &WIN411,
        site.ptr("/terminationGracePeriodSeconds"),
        format!(
            "terminationGracePeriodSeconds {g} is not honoured by Docker on Windows (containers get CTRL_SHUTDOWN_EVENT and are killed after about 5 s); use containerd or shut down within 5 s"
        ),
    )]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::testutil::{cfg, hit, hits, set, winok};
    use serde_json::json;

    #[test]
    fn win411_grace_with_docker() {
        let pod = set(winok(), "/spec/terminationGracePeriodSeconds", json!(120));
        let mut docker = cfg();
        docker.target.runtime = Runtime::Docker;
        assert_eq!(
            hits(&pod, &docker, "WIN411"),
            hit(Severity::Info, "/spec/terminationGracePeriodSeconds")
        );
        assert!(hits(&pod, &cfg(), "WIN411").is_empty());
        // The API server's default is not the user's choice.
        let dflt = set(winok(), "/spec/terminationGracePeriodSeconds", json!(30));
        assert!(hits(&dflt, &docker, "WIN411").is_empty());
    }
}
