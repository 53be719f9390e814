//! WIN209 `dns-clusterfirstwithhostnet`.

use crate::model::Eval;
use crate::model::meta::{Area, Mutation, Reads, RuleOs};
use crate::model::workload::PodSite;
use crate::model::{Finding, RuleMeta, Severity};
use crate::rules::Rule;
use crate::rules::hostprocess::common::host_network;

/// WIN209 in the registry.
pub const RULE: Rule = Rule {
    meta: &WIN209,
    check: dns_clusterfirstwithhostnet,
};

pub static WIN209: RuleMeta = RuleMeta {
    id: "WIN209",
    name: "dns-clusterfirstwithhostnet",
    severity: Severity::Info,
    summary: "dnsPolicy: ClusterFirstWithHostNet on a Windows pod that is not on the host network: the kubelet treats it as ClusterFirst",
    docs: r#"## What it does
Finds `spec.dnsPolicy: ClusterFirstWithHostNet` on Windows pods that are not on the host network
(no `hostNetwork: true`, so no HostProcess pod).

## Why is this bad?
It is not: the kubelet gives such a pod the cluster DNS exactly as for `ClusterFirst`
(`getPodDNSType` in `pkg/kubelet/network/dns/dns.go` returns the cluster DNS type for
`ClusterFirstWithHostNet` whatever the pod's network, and differs from `ClusterFirst` only for a
pod on the host network). The Kubernetes documentation's "not supported on Windows" is about
host-network pods; off the host network the value just says something it does not do, which
misleads the next reader into thinking the pod uses the host network. Advice only.

## Example
```yaml
spec:
  os: {name: windows}
  dnsPolicy: ClusterFirstWithHostNet
```

## Fix
Use `dnsPolicy: ClusterFirst` (the default), which the kubelet applies anyway.
"#,
    fix: None,
    source: "K-INTRO",
    applies: "all",
    os: RuleOs::Windows,
    default_on: true,
    reads: Reads::of(&[Area::HostNamespaces]),
    mutation: Mutation::DEFAULT,
};

pub(crate) fn dns_clusterfirstwithhostnet(site: &PodSite, _eval: &Eval) -> Vec<Finding> {
    // On the host network the value differs from ClusterFirst (which falls back to the node's
    // DNS there): that is the HostProcess pods' business, not advice for this rule.
    if site.str("/dnsPolicy") != Some("ClusterFirstWithHostNet") || host_network(site) {
        return Vec::new();
    }
    vec![Finding::new(
        &WIN209,
        site.ptr("/dnsPolicy"),
        "dnsPolicy ClusterFirstWithHostNet on a pod that is not on the host network is ClusterFirst for the kubelet (the pod gets the cluster DNS either way); write ClusterFirst (the default)",
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
        assert_eq!(f.severity, Severity::Info);
        // HostProcess pods use the host network, where the value is not ClusterFirst: silent.
        let hp = set(hpc(), "/spec/dnsPolicy", json!("ClusterFirstWithHostNet"));
        assert!(ids(&hp, &cfg()).is_empty());
        // hostNetwork without HostProcess (WIN208's finding): not this rule's either.
        let hn = set(
            set(winok(), "/spec/dnsPolicy", json!("ClusterFirstWithHostNet")),
            "/spec/hostNetwork",
            json!(true),
        );
        assert!(only(&hn, &cfg(), "WIN209").is_empty());
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
