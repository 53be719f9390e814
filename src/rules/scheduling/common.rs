//! WIN0xx: OS identification and scheduling (shared/rules.md §2.1).
//!
//! What several rules of the family share.

use crate::model::escape;
use crate::model::ops;
use crate::model::workload::PodSite;
use serde_json::{Value, json};

/// Ops that set `spec.nodeSelector[key] = value`, creating the map when absent.
pub fn node_selector_ops(
    site: &PodSite,
    key: &str,
    value: &str,
) -> Vec<json_patch::PatchOperation> {
    if site.get("/nodeSelector").is_some_and(Value::is_object) {
        vec![ops::add(
            &site.ptr(&format!("/nodeSelector/{}", escape(key))),
            json!(value),
        )]
    } else {
        vec![ops::add(&site.ptr("/nodeSelector"), json!({ key: value }))]
    }
}

/// Pointer of `spec.nodeSelector` if present, else of the spec.
pub(crate) fn selector_ptr(site: &PodSite) -> String {
    if site.get("/nodeSelector").is_some() {
        site.ptr("/nodeSelector")
    } else {
        site.spec_ptr.clone()
    }
}

/// A DaemonSet's controller creates a pod only for the nodes its template fits (selectors,
/// affinity, taints: `NodeShouldRunDaemonPod`): a node it does not fit gets no pod, so none
/// stays Pending.
pub(crate) fn is_daemonset(site: &PodSite) -> bool {
    site.kind == "DaemonSet"
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::model::Severity;
    use crate::rules::testutil::{
        assert_says, cfg, findings, group, ids, observed, only, set, winok,
    };
    use serde_json::json;

    pub(crate) fn t05() -> Value {
        json!({"apiVersion":"v1","kind":"Pod","metadata":{"name":"t05"},"spec":{"containers":[{"name":"a","image":"mcr.microsoft.com/windows/servercore:ltsc2022"}]}})
    }

    #[test]
    fn winok_is_clean() {
        assert!(
            ids(&winok(), &cfg()).is_empty(),
            "{:?}",
            ids(&winok(), &cfg())
        );
    }

    #[test]
    fn windows_options_pod_missing_pins() {
        // A pod is Windows by windowsOptions alone (definite), whatever the image says.
        let pod = set(
            t05(),
            "/spec/securityContext",
            json!({"windowsOptions":{"runAsUserName":"ContainerUser"}}),
        );
        let got = ids(&pod, &cfg());
        for id in ["WIN001", "WIN003", "WIN007"] {
            assert!(got.contains(&id), "{got:?}");
        }
    }

    pub(crate) const GKE: &str = "node.kubernetes.io/os=windows:NoSchedule";

    pub(crate) fn linux() -> crate::model::nodes::NodeGroup {
        group("l", "linux", "", &[], &[], 3)
    }

    /// Observed nodes: two ltsc2022 Windows nodes `w0`, `w1` tainted `taint`, three Linux ones.
    pub(crate) fn windows_and_linux(taint: &str) -> crate::config::Config {
        observed(
            cfg(),
            vec![
                group("w", "windows", "10.0.20348", &[taint], &[], 2),
                linux(),
            ],
        )
    }

    /// A build selector that no observed node runs is not WIN006's error but WIN010's warning
    /// (a scale-from-zero ltsc2019 pool brings the node: the pod would run); the same selector
    /// against configured builds, and an image the selected build cannot run, stay errors.
    #[test]
    fn build_selector_of_no_observed_node_is_a_warning() {
        let pod = set(
            winok(),
            "/spec/nodeSelector/node.kubernetes.io~1windows-build",
            json!("10.0.17763"),
        );
        let pod19 = set(
            pod.clone(),
            "/spec/containers/0/image",
            json!("mcr.microsoft.com/windows/servercore:ltsc2019"),
        );
        let c = observed(
            cfg(),
            vec![group("w", "windows", "10.0.20348", &[], &[], 2), linux()],
        );
        assert!(only(&pod19, &c, "WIN006").is_empty());
        let w = only(&pod19, &c, "WIN010");
        assert_eq!(w.len(), 1);
        assert_eq!(w[0].severity, Severity::Warning);
        // Configured builds only (offline): still an error.
        let f = only(&pod19, &cfg(), "WIN006");
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].severity, Severity::Error);
        // Observed, with an ltsc2022 image on the selected ltsc2019 build: never runs.
        let c = observed(
            cfg(),
            vec![group("w", "windows", "10.0.17763", &[], &[], 2), linux()],
        );
        assert_eq!(only(&pod, &c, "WIN006").len(), 1);
    }

    #[test]
    fn win502_judges_by_the_builds_the_pod_can_land_on() {
        let old = set(
            winok(),
            "/spec/containers/0/image",
            json!("mcr.microsoft.com/windows/servercore:ltsc2019"),
        );
        let tol =
            json!([{"key": "os", "operator": "Equal", "value": "windows", "effect": "NoSchedule"}]);
        let ws22 = group(
            "n",
            "windows",
            "10.0.20348",
            &["os=windows:NoSchedule"],
            &[],
            3,
        );
        let ws19 = group(
            "o",
            "windows",
            "10.0.17763",
            &["os=windows:NoSchedule"],
            &[],
            1,
        );
        let c = observed(cfg(), vec![ws22.clone(), linux()]);
        let f = only(
            &set(old.clone(), "/spec/tolerations", tol.clone()),
            &c,
            "WIN502",
        );
        assert_eq!(f.len(), 1);
        assert_says(
            &f[0],
            "the Windows nodes this pod can select (3 nodes) run 10.0.20348 (ltsc2022)",
        );
        // A ltsc2019 node joins: admitted.
        let c = observed(cfg(), vec![ws22.clone(), ws19.clone(), linux()]);
        assert!(only(&old, &c, "WIN502").is_empty());
        // …but not when the pod pins itself to the 2022 nodes.
        let pinned = set(
            old.clone(),
            "/spec/nodeSelector/node.kubernetes.io~1windows-build",
            json!("10.0.20348"),
        );
        assert_eq!(only(&pinned, &c, "WIN502").len(), 1);
        // A selected group of unknown build: nothing certain to say.
        let c = observed(cfg(), vec![group("u", "windows", "", &[], &[], 1), linux()]);
        assert!(only(&old, &c, "WIN502").is_empty());
    }

    #[test]
    fn win502_names_a_hyperv_runtime_class_that_can_run_the_image() {
        let old = set(
            winok(),
            "/spec/containers/0/image",
            json!("mcr.microsoft.com/windows/servercore:ltsc2019"),
        );
        let c = observed(
            cfg(),
            vec![
                group(
                    "n",
                    "windows",
                    "10.0.20348",
                    &["os=windows:NoSchedule"],
                    &[],
                    3,
                ),
                linux(),
            ],
        );
        let mut cx = crate::model::Context::default();
        cx.add(
            &json!({"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass",
            "metadata": {"name": "hyperv"}, "handler": "runhcs-wcow-hypervisor",
            "scheduling": {"nodeSelector": {"kubernetes.io/os": "windows"}}}),
        );
        let f: Vec<_> = crate::engine::lint_object(&old, &c, &cx, crate::model::Operation::Lint)
            .findings
            .into_iter()
            .filter(|f| f.rule.id == "WIN502")
            .collect();
        assert!(
            f[0].message
                .ends_with("or run it under Hyper-V isolation with runtimeClassName: hyperv"),
            "{}",
            f[0].message
        );
    }

    #[test]
    fn win603_only_where_its_pods_can_reach_windows_nodes() {
        let ds = json!({"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "fluent-bit"},
            "spec": {"selector": {"matchLabels": {"app": "fb"}}, "template": {"metadata": {"labels": {"app": "fb"}},
                "spec": {"containers": [{"name": "fb", "image": "fluent/fluent-bit:2.2"}]}}}});
        let tainted = windows_and_linux("os=windows:NoSchedule");
        assert!(findings(&ds, &tainted).is_empty());
        let open = observed(
            cfg(),
            vec![group("w", "windows", "10.0.20348", &[], &[], 2), linux()],
        );
        assert_eq!(ids(&ds, &open), ["WIN603"]);
        let all = set(
            ds,
            "/spec/template/spec/tolerations",
            json!([{"operator": "Exists"}]),
        );
        assert_eq!(ids(&all, &tainted), ["WIN603"]);
    }
}
