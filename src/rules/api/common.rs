//! WIN8xx: what the API server's validation refuses in a pod spec and in the workload around it
//! (issue 26 item 5). "0 errors" must mean that the API server accepts the object: winlint
//! already reports some rejections (WIN106, WIN403, WIN604, the Linux-only fields of Windows
//! pods); this family adds the structural checks every pod spec and workload wrapper goes
//! through, whatever the pod's OS, as Kubernetes 1.32 decides them:
//!
//! * `pkg/apis/core/validation/validation.go`: `ValidateObjectMeta` (names, `ValidateLabels`),
//!   `ValidatePodSpec` → `validateContainers` / `validateInitContainers` /
//!   `validateContainerCommon` (name, image, ports, resources), `validateContainerPorts`,
//!   `ValidateResourceRequirements`, `validateRestartPolicy`, `ValidatePodTemplateSpec`,
//!   `ValidateReplicationControllerSpec`, `ValidatePodTemplateSpecForRC`;
//! * `pkg/apis/apps/validation/validation.go`: `ValidateDeploymentSpec`,
//!   `ValidateReplicaSetSpec`, `ValidateDaemonSetSpec`, `ValidateStatefulSetSpec`,
//!   `ValidatePodTemplateSpecForReplicaSet` / `…ForStatefulSet`;
//! * `pkg/apis/batch/validation/validation.go`: `validateJobSpec`, `validateGeneratedSelector`,
//!   `validateCronJobSpec` (and `pkg/registry/batch/job/strategy.go` `generateSelector`).
//!
//! `tests/k8s_api_structural.rs` mutates the corpus's objects and compares these rules with the
//! real API server's server-side dry run.
//!
//! What several rules of the family share: the syntax checks of apimachinery's
//! `util/validation` (`IsDNS1123Label`, `IsQualifiedName`, `IsValidLabelValue`,
//! `IsValidPortName`) with the API server's words, and label selectors matched against labels.

use serde_json::{Map, Value};

use crate::model::schedule::label_requirement_matches;
use crate::model::workload::PodSite;

/// Who refuses a pod spec that fails validation: the API server refuses the object, except a
/// StatefulSet, whose template's pod spec it does not validate (`ValidatePodTemplateSpecForStatefulSet`
/// checks the labels only: "TODO: Add validation for PodSpec"): it refuses each pod the
/// StatefulSet controller creates, and no pod runs.
pub(crate) fn refuses(site: &PodSite) -> String {
    match site.kind {
        "StatefulSet" => "the API server accepts the StatefulSet but refuses every pod its controller creates from it (FailedCreate), so none runs".to_string(),
        kind => format!("the API server refuses the {kind}"),
    }
}

/// `IsValidPortName` (an IANA_SVC_NAME): 1–15 characters of `a-z`, `0-9`, `-`, at least one
/// letter, no `-` at either end nor two in a row.
pub(crate) fn port_name_errors(v: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if v.is_empty() || v.len() > 15 {
        errs.push("must be no more than 15 characters".to_string());
    }
    if !v.bytes().all(is_lower_alnum_or_dash) {
        errs.push("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)".into());
    }
    if v.contains("--") {
        errs.push("must not contain consecutive hyphens".into());
    }
    if !v.bytes().any(|c| c.is_ascii_lowercase()) {
        errs.push("must contain at least one letter (a-z)".into());
    }
    if v.starts_with('-') || v.ends_with('-') {
        errs.push("must not begin or end with a hyphen".into());
    }
    errs
}

fn is_lower_alnum_or_dash(c: u8) -> bool {
    c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'-'
}

/// Whether a `metav1.LabelSelector` (`matchLabels`, `matchExpressions`) selects `labels`, as
/// `LabelSelectorAsSelector` + `Matches` do (the expressions through the scheduler's own
/// [`label_requirement_matches`]). `None`: the selector is malformed (an unknown operator, `In`
/// or `NotIn` without values, `Exists` or `DoesNotExist` with values, a value that is not a
/// string), which the API server's `ValidateLabelSelector` refuses.
pub(crate) fn selector_matches(selector: &Value, labels: &Map<String, Value>) -> Option<bool> {
    let label = |k: &str| labels.get(k).and_then(Value::as_str);
    // Parse everything first, as `LabelSelectorAsSelector` does: a malformed requirement
    // anywhere makes the whole selector malformed, whatever the others match.
    let mut ok = true;
    for (k, v) in selector
        .get("matchLabels")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        ok &= label(k) == Some(v.as_str()?);
    }
    for e in selector
        .get("matchExpressions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        ok &= label_requirement_matches(e, label)?;
    }
    Some(ok)
}

/// Whether a label selector selects everything (no `matchLabels`, no `matchExpressions`).
pub(crate) fn selector_is_empty(selector: &Value) -> bool {
    let empty = |k: &str| match selector.get(k) {
        None | Some(Value::Null) => true,
        Some(Value::Object(m)) => m.is_empty(),
        Some(Value::Array(a)) => a.is_empty(),
        Some(_) => false,
    };
    empty("matchLabels") && empty("matchExpressions")
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn port_names_as_apimachinery_decides_them() {
        for ok in ["http", "metrics-9100", "a1"] {
            assert!(port_name_errors(ok).is_empty(), "{ok}");
        }
        for bad in [
            "",
            "HTTP",
            "9100",
            "a--b",
            "-http",
            "http_alt",
            "abcdefghijklmnop",
        ] {
            assert!(!port_name_errors(bad).is_empty(), "{bad}");
        }
    }

    #[test]
    fn selectors_as_the_api_server_matches_them() {
        let labels = json!({"app": "web", "tier": "front"});
        let l = labels.as_object().unwrap();
        let m = |s: Value| selector_matches(&s, l);
        assert_eq!(m(json!({"matchLabels": {"app": "web"}})), Some(true));
        assert_eq!(m(json!({"matchLabels": {"app": "api"}})), Some(false));
        assert_eq!(m(json!({"matchLabels": {"zone": "a"}})), Some(false));
        let e = |op: &str, v: Value| json!({"matchExpressions": [{"key": "tier", "operator": op, "values": v}]});
        assert_eq!(m(e("In", json!(["front", "back"]))), Some(true));
        assert_eq!(m(e("NotIn", json!(["front"]))), Some(false));
        assert_eq!(m(e("Exists", json!([]))), Some(true));
        assert_eq!(m(e("DoesNotExist", json!([]))), Some(false));
        assert_eq!(m(e("Gt", json!(["1"]))), None);
        // Malformed, refused by the API server whatever the labels: `None`, even where another
        // requirement already fails to match.
        assert_eq!(m(e("In", json!([]))), None);
        assert_eq!(m(e("NotIn", Value::Null)), None);
        assert_eq!(m(e("Exists", json!(["front"]))), None);
        let mixed = json!({"matchLabels": {"app": "api"},
            "matchExpressions": [{"key": "tier", "operator": "In"}]});
        assert_eq!(m(mixed), None);
        assert!(selector_is_empty(&json!({})));
        assert!(selector_is_empty(&json!({"matchLabels": {}})));
        assert!(!selector_is_empty(&json!({"matchLabels": {"a": "b"}})));
    }
}
