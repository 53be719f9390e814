//! Pods the scheduler could not place (issue 20 §1): a Pod in phase `Pending` whose
//! `PodScheduled` condition is `False` carries the scheduler's reason and message
//! (`Unschedulable`: "0/3 nodes are available: 1 node(s) had untolerated taint {os: windows},
//! …"). `winlint audit` joins it to the findings of its top owner that explain it: what winlint
//! predicts ("it will stay Pending") next to what the scheduler says now.

use serde_json::Value;

use crate::model::{Finding, Severity};

/// One Pod the scheduler has not placed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pending {
    pub pod: String,
    /// `lastTransitionTime` of the condition (RFC 3339), empty when absent.
    pub since: String,
    /// `Unschedulable`, `SchedulingGated`, …
    pub reason: String,
    pub message: String,
}

/// The `PodScheduled=False` condition of a Pending Pod, if it has one.
pub fn of_pod(pod: &Value) -> Option<Pending> {
    if pod["status"]["phase"] != "Pending" {
        return None;
    }
    let c = pod["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == "PodScheduled" && c["status"] == "False")?;
    let s = |k: &str| c[k].as_str().unwrap_or_default().to_string();
    Some(Pending {
        pod: pod["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
        since: s("lastTransitionTime"),
        reason: s("reason"),
        message: s("message"),
    })
}

/// What a Pod keeps of its status when only its owner is reported: a Pending Pod its phase and
/// its `PodScheduled` condition, any other nothing (the rest of a Pod is dropped at once:
/// 10 000 Pods).
pub fn keep(pod_status: &Value) -> Value {
    if pod_status["phase"] != "Pending" {
        return Value::Null;
    }
    let scheduled: Vec<&Value> = pod_status["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|c| c["type"] == "PodScheduled")
        .collect();
    serde_json::json!({"phase": pod_status["phase"], "conditions": scheduled})
}

/// One line for the Pods of an object: `pod web-1 (and 2 more) Pending since T: reason:
/// message` (the earliest, whose message the others usually repeat).
pub fn note(pending: &[Pending]) -> Option<String> {
    let first = pending
        .iter()
        .min_by(|a, b| (&a.since, &a.pod).cmp(&(&b.since, &b.pod)))?;
    let more = match pending.len() {
        1 => String::new(),
        n => format!(" (and {} more)", n - 1),
    };
    let since = if first.since.is_empty() {
        String::new()
    } else {
        format!(" since {}", first.since)
    };
    let why = match (first.reason.as_str(), first.message.as_str()) {
        ("", "") => "not scheduled".to_string(),
        (r, "") => r.to_string(),
        ("", m) => m.to_string(),
        (r, m) => format!("{r}: {m}"),
    };
    Some(format!("Pod {}{more} is Pending{since}: {why}", first.pod))
}

/// Whether a finding of this rule explains a Pod the scheduler cannot place: its fix changes
/// where the pod can land (a selector, a toleration, a build pin: [`Mutation::places_pod`]).
///
/// [`Mutation::places_pod`]: crate::model::meta::Mutation::places_pod
fn places(f: &Finding) -> bool {
    f.rule.mutation.places_pod
}

/// Add the scheduler's word ([`note`]) to the findings that explain `pending`: those whose rule
/// places the pod ([`places`]), else the errors (winlint says the pod will not run); the
/// finding's message ends with `. Now: …`. `false` when no finding explains them (the Pods wait
/// for something winlint does not judge: resources, volumes, gates).
pub fn attach(findings: &mut [Finding], pending: &[Pending]) -> bool {
    let Some(note) = note(pending) else {
        return false;
    };
    let mut explained = false;
    let any_placing = findings.iter().any(places);
    for f in findings.iter_mut() {
        let explains = if any_placing {
            places(f)
        } else {
            f.severity == Severity::Error
        };
        if explains {
            let m = f.message.trim_end();
            let stop = if m.ends_with(['.', '!', '?']) {
                ""
            } else {
                "."
            };
            f.message = format!("{m}{stop} Now: {note}");
            explained = true;
        }
    }
    explained
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules;
    use serde_json::json;

    fn pod(name: &str, phase: &str, status: &str, since: &str) -> Value {
        json!({"metadata": {"name": name}, "status": {"phase": phase, "conditions": [
            {"type": "Initialized", "status": "True"},
            {"type": "PodScheduled", "status": status, "reason": "Unschedulable",
             "lastTransitionTime": since,
             "message": "0/2 nodes are available: 1 node(s) had untolerated taint {os: windows}."}]}})
    }

    #[test]
    fn only_unscheduled_pending_pods_count() {
        assert_eq!(of_pod(&pod("a", "Running", "False", "t")), None);
        assert_eq!(of_pod(&pod("a", "Pending", "True", "t")), None);
        assert_eq!(of_pod(&json!({"status": {"phase": "Pending"}})), None);
        let p = of_pod(&pod("a", "Pending", "False", "2026-01-01T00:00:00Z")).unwrap();
        assert_eq!(p.reason, "Unschedulable");
        // What is kept of an owned Pod is enough to find it again.
        let kept = json!({"metadata": {"name": "a"},
            "status": keep(&pod("a", "Pending", "False", "t")["status"])});
        assert_eq!(kept["status"]["conditions"].as_array().unwrap().len(), 1);
        assert_eq!(of_pod(&kept).unwrap().pod, "a");
        assert_eq!(
            keep(&pod("a", "Running", "True", "t")["status"]),
            Value::Null
        );
    }

    #[test]
    fn the_placing_findings_get_the_schedulers_message() {
        let pending = [
            of_pod(&pod("web-2", "Pending", "False", "2026-01-01T00:00:09Z")).unwrap(),
            of_pod(&pod("web-1", "Pending", "False", "2026-01-01T00:00:00Z")).unwrap(),
        ];
        let win007 = rules::find("WIN007").unwrap().meta;
        let win101 = rules::find("WIN101").unwrap().meta;
        let mut findings = vec![
            Finding::new(win007, "/spec", "Not tolerated; it will stay Pending."),
            Finding::new(win101, "/spec", "Other.").severity(Severity::Error),
        ];
        assert!(attach(&mut findings, &pending));
        assert_eq!(
            findings[0].message,
            "Not tolerated; it will stay Pending. Now: Pod web-1 (and 1 more) is Pending since \
             2026-01-01T00:00:00Z: Unschedulable: 0/2 nodes are available: 1 node(s) had \
             untolerated taint {os: windows}."
        );
        assert_eq!(findings[1].message, "Other.");
        // Without a placing finding, the errors explain it; without errors, nothing does.
        let mut errors = vec![Finding::new(win101, "/spec", "E.").severity(Severity::Error)];
        assert!(attach(&mut errors, &pending[..1]));
        assert!(
            errors[0]
                .message
                .starts_with("E. Now: Pod web-2 is Pending")
        );
        let mut warnings = vec![Finding::new(win101, "/spec", "W.").severity(Severity::Warning)];
        assert!(!attach(&mut warnings, &pending));
        assert_eq!(warnings[0].message, "W.");
    }
}
