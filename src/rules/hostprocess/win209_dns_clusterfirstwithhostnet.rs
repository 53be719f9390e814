//! WIN209 `dns-clusterfirstwithhostnet`.

use crate::model::Eval;
use crate::model::meta::{Area, Mutation, Reads, RuleOs};
use crate::model::workload::PodSite;
use crate::model::{Finding, RuleMeta, Severity};
use crate::rules::Rule;
use crate::rules::hostprocess::common::{host_network, host_process_pod};

/// WIN209 in the registry.
pub const RULE: Rule = Rule {
    meta: &WIN209,
    check: dns_clusterfirstwithhostnet,
};

pub static WIN209: RuleMeta = RuleMeta {
    id: "WIN209",
    name: "dns-clusterfirstwithhostnet",
    severity: Severity::Info,
    summary: "dnsPolicy: ClusterFirstWithHostNet on a Windows host-network (HostProcess) pod: Windows does not give such a pod the cluster DNS",
    docs: r#"## What it does
Finds `spec.dnsPolicy: ClusterFirstWithHostNet` on Windows HostProcess pods (which are on the
host network), the one place where the value differs from `ClusterFirst`. Off the host network it is silent: the kubelet gives such a pod the cluster DNS
exactly as for `ClusterFirst` (`getPodDNSType` in `pkg/kubelet/network/dns/dns.go` returns the
cluster DNS type for `ClusterFirstWithHostNet` whatever the pod's network), so the two values
are the same pod.

## Why is this bad?
On Linux the value is how a host-network pod keeps the cluster DNS: the kubelet writes the
cluster's nameserver and search list into the pod's `resolv.conf`. Windows has no `resolv.conf`:
containerd hands a pod's DNS settings to Windows containers only through the CNI plugin (the
`dns` capability, `cniNamespaceOpts` in containerd's CRI), and a host-network pod gets no CNI
network. A HostProcess container therefore resolves names with the node's own DNS settings,
whatever `dnsPolicy` says: Service names resolve only if the node's resolver knows the cluster
domain. The Kubernetes documentation says it in one line: "ClusterFirstWithHostNet is not
supported for pods that run on Windows nodes" (DNS for Services and Pods, DNS resolution on
Windows nodes). Advice only: the pod runs.

## Example
```yaml
spec:
  os: {name: windows}
  hostNetwork: true
  dnsPolicy: ClusterFirstWithHostNet
  securityContext:
    windowsOptions: {hostProcess: true, runAsUserName: "NT AUTHORITY\\SYSTEM"}
```

## Fix
Do not rely on the cluster DNS from a HostProcess pod: reach the API server through the
`KUBERNETES_SERVICE_HOST` address, or make sure the node's resolver forwards the cluster domain.
Drop the `dnsPolicy` line if nothing needs it.
"#,
    fix: None,
    source: "K-INTRO; pkg/kubelet/network/dns/dns.go getPodDNSType; containerd CRI cniNamespaceOpts",
    applies: "all",
    os: RuleOs::Windows,
    default_on: true,
    reads: Reads::of(&[
        Area::Containers,
        Area::PodSecurityContext,
        Area::HostNamespaces,
    ]),
    mutation: Mutation::DEFAULT,
};

pub(crate) fn dns_clusterfirstwithhostnet(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    // Off the host network the kubelet treats the value as ClusterFirst (getPodDNSType): the
    // same pod, nothing to report. `hostNetwork` without HostProcess is WIN208's finding.
    if site.str("/dnsPolicy") != Some("ClusterFirstWithHostNet")
        || !host_network(site)
        || !host_process_pod(site, eval)
    {
        return Vec::new();
    }
    vec![Finding::new(
        &WIN209,
        site.ptr("/dnsPolicy"),
        "dnsPolicy ClusterFirstWithHostNet does not give a Windows host-network (HostProcess) pod the cluster DNS: Windows containers get DNS settings only through the CNI plugin, which a host-network pod does not use, so its containers resolve with the node's DNS settings (Kubernetes docs: not supported on Windows nodes); Service names resolve only if the node's resolver knows the cluster domain",
    )]
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    use crate::rules::hostprocess::common::tests::hpc;
    use crate::rules::testutil::{cfg, ids, only, set, winok};

    #[test]
    fn t48_off_the_host_network_it_is_cluster_first() {
        // getPodDNSType: ClusterFirstWithHostNet is the cluster DNS whatever the network, and so
        // is ClusterFirst off the host network: the same pod, silent.
        let pod = set(winok(), "/spec/dnsPolicy", json!("ClusterFirstWithHostNet"));
        assert!(ids(&pod, &cfg()).is_empty());
        assert!(
            only(
                &set(winok(), "/spec/dnsPolicy", json!("ClusterFirst")),
                &cfg(),
                "WIN209"
            )
            .is_empty()
        );
    }

    #[test]
    fn on_the_host_network_windows_does_not_apply_it() {
        let hp = set(hpc(), "/spec/dnsPolicy", json!("ClusterFirstWithHostNet"));
        let f = &only(&hp, &cfg(), "WIN209")[0];
        assert_eq!(f.pointer, "/spec/dnsPolicy");
        assert_eq!(f.severity, Severity::Info);
        assert!(f.message.contains("node's DNS settings"), "{}", f.message);
        // hostNetwork without HostProcess: WIN208's finding, not this rule's.
        let hn = set(
            set(winok(), "/spec/dnsPolicy", json!("ClusterFirstWithHostNet")),
            "/spec/hostNetwork",
            json!(true),
        );
        assert!(only(&hn, &cfg(), "WIN209").is_empty());
        // Other policies on the host network: not this rule's.
        for policy in ["Default", "ClusterFirst", "None"] {
            let p = set(hpc(), "/spec/dnsPolicy", json!(policy));
            assert!(only(&p, &cfg(), "WIN209").is_empty(), "{policy}");
        }
    }
}
