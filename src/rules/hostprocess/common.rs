//! WIN2xx: HostProcess containers and host networking (shared/rules.md §2.3). The API checks
//! follow kubernetes/kubernetes `validateWindowsHostProcessPod`; the rest follows the HostProcess
//! task page (K-HPC), Pod Security (K-PSS) and KEP-3503 (Windows hostNetwork).
//!
//! What several rules of the family share.

use crate::model::Eval;
use crate::model::Finding;
use crate::model::pod::{self};
use crate::model::workload::{ContainerRef, PodSite};
use serde_json::Value;

/// A HostProcess pod on a target whose API server keeps the field (see
/// [`pod::host_process_available`]; elsewhere WIN203 reports the request instead).
pub(crate) fn host_process_pod(site: &PodSite, eval: &Eval) -> bool {
    pod::host_process_available(eval.target) && pod::is_host_process_pod(site)
}

/// The HostProcess containers of a [`host_process_pod`] (none elsewhere; the containers are not
/// walked then).
pub(crate) fn host_process_containers<'s, 'a>(
    site: &'s PodSite<'a>,
    eval: &Eval,
) -> impl Iterator<Item = ContainerRef<'a>> + 's {
    host_process_pod(site, eval)
        .then(|| site.containers())
        .into_iter()
        .flatten()
        .filter(|c| pod::is_host_process(site, c))
}

pub(crate) fn host_network(site: &PodSite) -> bool {
    site.get("/hostNetwork").and_then(Value::as_bool) == Some(true)
}

/// Push `f` unless a finding at the same pointer is already there (one finding per field).
pub(crate) fn push_once(out: &mut Vec<Finding>, f: Finding) {
    if !out.iter().any(|x| x.pointer == f.pointer) {
        out.push(f);
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use serde_json::json;

    use crate::rules::testutil::{cfg, ids_in, set, unset};

    /// The WIN2xx rules (other modules' rules are asserted by their tests).
    pub(crate) const OWN: &[&str] = &["WIN2"];

    /// T14: HostProcess without hostNetwork.
    pub(crate) fn t14() -> Value {
        json!({"apiVersion":"v1","kind":"Pod","metadata":{"name":"hpc"},"spec":{
            "os":{"name":"windows"},
            "nodeSelector":{"kubernetes.io/os":"windows"},
            "tolerations":[{"key":"os","operator":"Equal","value":"windows","effect":"NoSchedule"}],
            "securityContext":{"windowsOptions":{"hostProcess":true,"runAsUserName":"NT AUTHORITY\\SYSTEM"}},
            "containers":[{"name":"a","image":"mcr.microsoft.com/windows/nanoserver:ltsc2022"}]}})
    }

    pub(crate) fn hpc() -> Value {
        set(t14(), "/spec/hostNetwork", json!(true))
    }

    #[test]
    fn no_hostprocess_rule_on_linux_pods() {
        let linux = json!({"kind":"Pod","metadata":{"name":"l"},"spec":{"os":{"name":"linux"},"hostNetwork":true,
            "dnsPolicy":"ClusterFirstWithHostNet","containers":[{"name":"a","image":"nginx:1.25"}]}});
        assert!(ids_in(&linux, &cfg(), OWN).is_empty());
        let unknown = unset(linux, "/spec/os");
        assert!(ids_in(&unknown, &cfg(), OWN).is_empty());
    }

    #[test]
    fn mv5_hostprocess_pod_has_no_linux_only_fields() {
        // The M4 guard lets the webhook add spec.os to a HostProcess pod without Linux-only fields.
        let pod = unset(hpc(), "/spec/os");
        let s = &crate::model::workload::pod_sites(&pod)[0];
        assert!(pod::linux_only_fields(s, &cfg().target).is_empty());
    }
}
