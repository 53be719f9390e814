//! WIN410 `udp-userspace-proxy`.

use crate::model::Eval;
use crate::model::meta::{Area, Mutation, Reads, RuleOs};
use crate::model::workload::{PodSite, items};
use crate::model::{Finding, RuleMeta, Severity};
use crate::rules::Rule;
use serde_json::Value;

/// WIN410 in the registry.
pub const RULE: Rule = Rule {
    meta: &WIN410,
    check: udp_userspace_proxy,
};

// ---------------------------------------------------------------------------------------------
// WIN410, WIN411

pub static WIN410: RuleMeta = RuleMeta {
    id: "WIN410",
    name: "udp-userspace-proxy",
    severity: Severity::Warning,
    summary: "UDP container ports with the userspace kube-proxy of Kubernetes ≤ 1.13 (netsh portproxy is TCP-only)",
    docs: r#"## What it does
On Kubernetes ≤ 1.13 targets, reports container ports with `protocol: UDP`.

## Why is this bad?
The early Windows kube-proxy (Kubernetes 1.9-1.13) ran in userspace mode on `netsh portproxy`, which forwards TCP
only: Services cannot reach UDP ports of Windows pods.

## Example
```yaml
ports:
- {containerPort: 53, protocol: UDP}
```

## Fix
Use TCP, or move to Kubernetes 1.14+ (kernel-mode kube-proxy on Windows).
"#,
    fix: None,
    source: "seed",
    applies: "K≤1.13 (userspace kube-proxy)",
    os: RuleOs::Windows,
    default_on: true,
    reads: Reads::of(&[Area::Containers]),
    mutation: Mutation::DEFAULT,
};

pub(crate) fn udp_userspace_proxy(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    if eval.target.kubernetes.at_least(1, 14) {
        return Vec::new();
    }
    let mut out = Vec::new();
    for c in site.containers() {
        for (i, port) in items(c.value, "ports").enumerate() {
            if port.get("protocol").and_then(Value::as_str) != Some("UDP") {
                continue;
            }
            out.push(Finding::new(
                &WIN410,
                site.container_ptr(&c, &format!("/ports/{i}/protocol")),
                format!(
                    "{} exposes UDP port {}; the userspace kube-proxy of Kubernetes {} on Windows forwards TCP only (netsh portproxy), so Services cannot reach it",
                    c.label(),
                    port.get("containerPort").map(Value::to_string).unwrap_or_default(),
                    eval.target.kubernetes
                ),
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::testutil::{at, hit, hits, legacy, set, winok};
    use serde_json::json;

    #[test]
    fn win410_udp_before_1_14() {
        let pod = set(
            winok(),
            "/spec/containers/0/ports",
            json!([{"containerPort":80,"protocol":"TCP"},{"containerPort":53,"protocol":"UDP"}]),
        );
        assert_eq!(
            hits(&pod, &legacy(), "WIN410"),
            hit(Severity::Warning, "/spec/containers/0/ports/1/protocol")
        );
        assert!(hits(&pod, &at(14), "WIN410").is_empty());
    }
}
