//! WIN209 `dns-clusterfirstwithhostnet`.

use crate::model::Eval;
use crate::model::meta::{Mutation, RuleOs};
use crate::model::workload::PodSite;
use crate::model::{Finding, RuleMeta, Severity};
use crate::rules::Rule;
use crate::rules::hostprocess::common::host_process_pod;

/// WIN209 in the registry.
pub const RULE: Rule = Rule {
    meta: &WIN209,
    check: dns_clusterfirstwithhostnet,
};

pub static WIN209: RuleMeta = RuleMeta {
    id: "WIN209",
    name: "dns-clusterfirstwithhostnet",
    severity: Severity::Warning,
    summary: "dnsPolicy: ClusterFirstWithHostNet on a Windows pod that is not a HostProcess pod",
    docs: r#"## What it does
Finds `spec.dnsPolicy: ClusterFirstWithHostNet` on Windows pods without HostProcess containers.

## Why is this bad?
Windows does not support the `ClusterFirstWithHostNet` DNS policy for ordinary pods (they do not use
the host network); only HostProcess pods run in the host network, where the policy makes sense.

## Example
```yaml
spec:
  os: {name: windows}
  dnsPolicy: ClusterFirstWithHostNet
```

## Fix
Use `dnsPolicy: ClusterFirst` (the default) or `Default`.
"#,
    fix: None,
    source: "K-INTRO",
    applies: "all",
    os: RuleOs::Windows,
    context: &[],
    mutation: Mutation::DEFAULT,
};

pub(crate) fn dns_clusterfirstwithhostnet(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    if site.str("/dnsPolicy") != Some("ClusterFirstWithHostNet") || host_process_pod(site, eval) {
        return Vec::new();
    }
    vec![Finding::new(
        &WIN209,
        site.ptr("/dnsPolicy"),
        "dnsPolicy ClusterFirstWithHostNet is not supported for Windows pods that are not HostProcess pods; use ClusterFirst (the default)",
    )]
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    use crate::rules::hostprocess::common::tests::hpc;
    use crate::rules::testutil::{cfg, ids, only, set, winok};

    #[test]
    fn t48_dns_cluster_first_with_host_net() {
        let pod = set(winok(), "/spec/dnsPolicy", json!("ClusterFirstWithHostNet"));
        assert_eq!(ids(&pod, &cfg()), ["WIN209"]);
        let f = &only(&pod, &cfg(), "WIN209")[0];
        assert_eq!(f.pointer, "/spec/dnsPolicy");
        assert_eq!(f.severity, Severity::Warning);
        // HostProcess pods use the host network: fine.
        let hp = set(hpc(), "/spec/dnsPolicy", json!("ClusterFirstWithHostNet"));
        assert!(ids(&hp, &cfg()).is_empty());
        assert!(
            only(
                &set(winok(), "/spec/dnsPolicy", json!("ClusterFirst")),
                &cfg(),
                "WIN209"
            )
            .is_empty()
        );
    }
}
