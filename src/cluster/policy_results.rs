//! The audit as `wgpolicyk8s.io/v1alpha2` PolicyReports, the
//! format of the Kubernetes Policy working group that Policy Reporter and the Kyverno UI read
//! (CRDs: testdata/policy-report/crd/, vendored from kubernetes-sigs/wg-policy-prototypes).
//!
//! One PolicyReport named [`REPORT_NAME`] per namespace holding audited objects; one
//! ClusterPolicyReport of the same name for what is not in one namespace (the kinds
//! `audit -A` could not list, and with `--policy-report=apply` the reports that could not be
//! written: [`with_failures`]). Both carry the label [`MANAGED_BY`], by which
//! `--policy-report=apply` finds its own reports again to delete the stale ones.
//!
//! A report holds at most [`PART_BYTES`] of results, measured as serialized while it is built:
//! a namespace with more is split into parts named `winlint`, `winlint-2`, `winlint-3`, …,
//! each with the summary of its own results (Policy Reporter adds reports up). The API server
//! takes at most 3 MiB in one request and etcd stores at most 1.5 MiB in one object: one
//! namespace with many findings (a tenant's thousands of pods) would otherwise make its report
//! too large to write at all.
//!
//! # Results
//!
//! Each finding is one result: `source: winlint`, `policy` the rule's name
//! (`missing-windows-toleration`, as Kyverno names its policies), `rule` its code (`WIN007`),
//! `resources` the audited object (apiVersion, kind, namespace, name, uid), `message` the
//! finding's, `properties` the field (`pointer`), the `fix` and the rule's `docs` page.
//! Severities are mapped by what they mean for the workload, in the vocabulary of the CRD
//! (`warn`: "non-scored policies whose requirements were not met"):
//!
//! | winlint  | result | severity | scored | why |
//! |----------|--------|----------|--------|-----|
//! | error    | fail   | high     | true   | the pod will not run (stays Pending, fails to start) or is denied |
//! | warning  | warn   | medium   | false  | it runs, but something will go wrong (admitted with a warning) |
//! | info     | warn   | info     | false  | advice; nothing fails |
//!
//! An object with no finding is one `pass` result of policy `winlint` (winlint does not record
//! which rules ran on an object, so it does not claim one pass per rule); a rule exempted by
//! the `winlint.io/ignore` annotation is a `skip` (with the `winlint.io/ignore-reason`); a kind
//! that could not be listed is an `error` without resources. `summary` counts the results.
//! Timestamps are whole seconds ([`now_seconds`]: `SOURCE_DATE_EPOCH` when set, so that a run
//! can be reproduced).

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::model::{Finding, Severity};

use super::audit::Scope;
use super::client::ClusterError;
pub use super::policy_report::{API_VERSION, MANAGED_BY, REPORT_NAME};
use super::policy_report::{Applied, Failure};

/// The most bytes of serialized results in one report: a third of etcd's 1.5 MiB object limit,
/// which leaves room for the metadata, the summary and the API server's own fields.
pub const PART_BYTES: usize = 512 * 1024;
/// The `source` of every result.
pub const SOURCE: &str = "winlint";
/// The `category` of every result (Policy Reporter groups by it).
pub const CATEGORY: &str = "Windows workloads";

/// `result`, `severity` and `scored` of a finding of severity `s` (the table above).
pub fn result_of(s: Severity) -> (&'static str, &'static str, bool) {
    match s {
        Severity::Error => ("fail", "high", true),
        Severity::Warning => ("warn", "medium", false),
        Severity::Info => ("warn", "info", false),
    }
}

/// Now, in whole seconds since the epoch: `SOURCE_DATE_EPOCH` when it is set and a number
/// (the reproducible-builds convention, which tests use), else the system clock.
pub fn now_seconds() -> i64 {
    std::env::var("SOURCE_DATE_EPOCH")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or_else(|| crate::model::date::epoch_seconds() as i64)
}

/// The reports of one audit, built as the objects are judged.
#[derive(Debug)]
pub struct PolicyReports {
    timestamp: Value,
    /// Results by namespace.
    namespaces: BTreeMap<String, Vec<Value>>,
    /// Results of the ClusterPolicyReport.
    cluster: Vec<Value>,
}

/// The `ObjectReference` of an audited object.
fn reference(object: &Value) -> Value {
    let mut r = serde_json::Map::new();
    for (key, pointer) in [
        ("apiVersion", "/apiVersion"),
        ("kind", "/kind"),
        ("namespace", "/metadata/namespace"),
        ("name", "/metadata/name"),
        ("uid", "/metadata/uid"),
    ] {
        if let Some(s) = object.pointer(pointer).and_then(Value::as_str) {
            r.insert(key.into(), s.into());
        }
    }
    Value::Object(r)
}

impl PolicyReports {
    /// Reports whose results are dated `now` (seconds since the epoch).
    pub fn new(now: i64) -> PolicyReports {
        PolicyReports {
            timestamp: json!({"seconds": now, "nanos": 0}),
            namespaces: BTreeMap::new(),
            cluster: Vec::new(),
        }
    }

    fn result(&self, policy: &str, rule: Option<&str>, result: &str, message: &str) -> Value {
        let mut r = json!({"source": SOURCE, "policy": policy});
        if let Some(rule) = rule {
            r["rule"] = rule.into();
        }
        r["category"] = CATEGORY.into();
        r["timestamp"] = self.timestamp.clone();
        r["result"] = result.into();
        r["message"] = message.into();
        r
    }

    /// One audited object: its findings (`fail`/`warn`, or one `pass` when there are none)
    /// and the rules its `winlint.io/ignore` annotation exempted (`skip`).
    pub fn object(
        &mut self,
        object: &Value,
        findings: &[Finding],
        exempted: &[&str],
        ignore_reason: Option<&str>,
    ) {
        let namespace = object["metadata"]["namespace"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let subject = reference(object);
        let mut out = Vec::new();
        for f in findings {
            let (result, severity, scored) = result_of(f.severity);
            let mut r = self.result(f.rule.name, Some(f.rule.id), result, &f.message);
            r["severity"] = severity.into();
            r["scored"] = scored.into();
            r["resources"] = json!([subject]);
            let mut props = json!({"pointer": f.pointer, "docs": f.rule.docs_url()});
            if let Some(fix) = &f.fix {
                props["fix"] = fix.description.clone().into();
            }
            r["properties"] = props;
            out.push(r);
        }
        let mut skipped: Vec<&str> = exempted.to_vec();
        skipped.sort_unstable();
        skipped.dedup();
        for id in skipped {
            let name = crate::rules::find(id).map_or(id, |r| r.meta.name);
            let why = match ignore_reason {
                Some(reason) => format!("exempted by winlint.io/ignore: {reason}"),
                None => "exempted by winlint.io/ignore".to_string(),
            };
            let mut r = self.result(name, Some(id), "skip", &why);
            r["resources"] = json!([subject]);
            out.push(r);
        }
        if findings.is_empty() {
            let mut r = self.result(
                SOURCE,
                None,
                "pass",
                "winlint found nothing wrong with this object",
            );
            r["scored"] = true.into();
            r["resources"] = json!([subject]);
            out.push(r);
        }
        self.namespaces.entry(namespace).or_default().extend(out);
    }

    /// Something that could not be judged (a kind that could not be listed): an `error` in the
    /// report of `namespace`, or in the ClusterPolicyReport when `None`.
    pub fn error(&mut self, namespace: Option<&str>, what: &str, message: &str) {
        let r = self.result(SOURCE, Some("list"), "error", &format!("{what}: {message}"));
        match namespace {
            Some(ns) => self.namespaces.entry(ns.to_string()).or_default().push(r),
            None => self.cluster.push(r),
        }
    }

    /// The reports: the PolicyReports of each namespace (by name, split into parts of at most
    /// [`PART_BYTES`] of results), then the ClusterPolicyReport when it has results.
    pub fn finish(self) -> Vec<Value> {
        let mut out = Vec::new();
        for (ns, results) in self.namespaces {
            out.extend(parts("PolicyReport", Some(&ns), results, PART_BYTES));
        }
        if !self.cluster.is_empty() {
            out.extend(parts("ClusterPolicyReport", None, self.cluster, PART_BYTES));
        }
        out
    }
}

/// The name of part `i` (from 0) of a report.
fn part_name(i: usize) -> String {
    match i {
        0 => REPORT_NAME.to_string(),
        i => format!("{REPORT_NAME}-{}", i + 1),
    }
}

/// `results` as reports of at most `budget` bytes of serialized results each (but one result
/// larger than that, alone); one report when there are none.
fn parts(kind: &str, namespace: Option<&str>, results: Vec<Value>, budget: usize) -> Vec<Value> {
    let mut groups: Vec<Vec<Value>> = vec![Vec::new()];
    let mut bytes = 0;
    for r in results {
        // Its bytes in the array, with the comma.
        let size = serde_json::to_vec(&r).map_or(0, |v| v.len()) + 1;
        let current = groups.last_mut().expect("never empty");
        if !current.is_empty() && bytes + size > budget {
            groups.push(Vec::new());
            bytes = 0;
        }
        bytes += size;
        groups.last_mut().expect("never empty").push(r);
    }
    groups
        .into_iter()
        .enumerate()
        .map(|(i, results)| report(kind, namespace, &part_name(i), results))
        .collect()
}

/// `result: count` of a summary, the non-zero ones (`12 fail, 3 warn`).
fn counted(summary: &Value) -> String {
    let parts: Vec<String> = ["fail", "warn", "error", "pass", "skip"]
        .into_iter()
        .filter_map(|k| match summary[k].as_u64() {
            Some(n) if n > 0 => Some(format!("{n} {k}")),
            _ => None,
        })
        .collect();
    if parts.is_empty() {
        "no results".into()
    } else {
        parts.join(", ")
    }
}

/// What failed, one line: `PolicyReport ns/winlint-2 not written (812 fail, 3 warn): why`.
pub fn failure_line(f: &Failure) -> String {
    match &f.summary {
        Some(summary) => format!(
            "{} not written ({}): {}",
            f.report,
            counted(summary),
            f.message
        ),
        None => format!("{} not deleted: {}", f.report, f.message),
    }
}

/// The ClusterPolicyReport of an `-A` run (`cluster`: the parts [`PolicyReports::finish`]
/// built, if any) with one `error` result per report that could not be written (its results
/// counted in the message) or stale report that could not be deleted; in parts as
/// [`PolicyReports::finish`] makes them, none when there is nothing to say.
pub fn with_failures(cluster: &[Value], failed: &[Failure], now: i64) -> Vec<Value> {
    let mut results: Vec<Value> = cluster
        .iter()
        .filter_map(|c| c["results"].as_array())
        .flatten()
        .cloned()
        .collect();
    let stamp = PolicyReports::new(now);
    for f in failed {
        let mut r = stamp.result(SOURCE, Some("report"), "error", &failure_line(f));
        r["properties"] = json!({"report": f.report});
        results.push(r);
    }
    if results.is_empty() {
        return Vec::new();
    }
    parts("ClusterPolicyReport", None, results, PART_BYTES)
}

/// Write `reports` ([`PolicyReports::finish`]'s) into the cluster: each PolicyReport on its own,
/// winlint's stale ones of `scope` deleted, then with [`Scope::AllNamespaces`] the
/// ClusterPolicyReport with what failed ([`with_failures`], dated `now`). What `winlint audit
/// --policy-report=apply` and `winlint serve`'s audit loop both do. `Err` only when the CRDs
/// are not installed (see [`super::policy_report::apply`]).
pub async fn write(
    client: &kube::Client,
    scope: &Scope,
    reports: Vec<Value>,
    now: i64,
) -> Result<Applied, ClusterError> {
    let (cluster_reports, namespaced): (Vec<_>, Vec<_>) = reports
        .into_iter()
        .partition(|r| r["kind"] == "ClusterPolicyReport");
    super::policy_report::apply(client, scope, &namespaced, |failed| {
        with_failures(&cluster_reports, failed, now)
    })
    .await
}

fn report(kind: &str, namespace: Option<&str>, name: &str, results: Vec<Value>) -> Value {
    let mut summary = json!({"pass": 0, "fail": 0, "warn": 0, "error": 0, "skip": 0});
    for r in &results {
        if let Some(k) = r["result"].as_str()
            && let Some(n) = summary[k].as_u64()
        {
            summary[k] = (n + 1).into();
        }
    }
    let mut metadata = json!({"name": name});
    if let Some(ns) = namespace {
        metadata["namespace"] = ns.into();
    }
    metadata["labels"] = json!({MANAGED_BY.0: MANAGED_BY.1});
    json!({
        "apiVersion": API_VERSION,
        "kind": kind,
        "metadata": metadata,
        "summary": summary,
        "results": results,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Fix;
    use crate::rules;

    fn object(ns: &str, name: &str) -> Value {
        json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": ns, "uid": format!("uid-{name}")}})
    }

    #[test]
    fn findings_become_results_and_clean_objects_pass() {
        let mut reports = PolicyReports::new(1_700_000_000);
        let win007 = rules::find("WIN007").unwrap().meta;
        let error = Finding::new(win007, "/spec/template/spec", "not tolerated").with_fix(Fix {
            safety: crate::model::FixSafety::Safe,
            description: "add a toleration".into(),
            ops: vec![],
        });
        let warning = Finding::new(win007, "/spec", "w").severity(Severity::Warning);
        let info = Finding::new(win007, "/spec", "i").severity(Severity::Info);
        reports.object(&object("b", "iis"), &[error, warning, info], &[], None);
        reports.object(
            &object("a", "ok"),
            &[],
            &["WIN101", "WIN101"],
            Some("legacy"),
        );
        reports.error(None, "jobs in all namespaces", "forbidden");
        let out = reports.finish();
        let kinds: Vec<(&str, &str)> = out
            .iter()
            .map(|r| {
                (
                    r["kind"].as_str().unwrap(),
                    r["metadata"]["namespace"].as_str().unwrap_or("-"),
                )
            })
            .collect();
        assert_eq!(
            kinds,
            [
                ("PolicyReport", "a"),
                ("PolicyReport", "b"),
                ("ClusterPolicyReport", "-")
            ]
        );
        let a = &out[0];
        assert_eq!(
            a["summary"],
            json!({"pass": 1, "fail": 0, "warn": 0, "error": 0, "skip": 1})
        );
        assert_eq!(a["results"][0]["result"], "skip");
        assert_eq!(a["results"][0]["rule"], "WIN101");
        assert_eq!(
            a["results"][0]["message"],
            "exempted by winlint.io/ignore: legacy"
        );
        assert_eq!(a["metadata"]["labels"][MANAGED_BY.0], "winlint");
        let b = &out[1];
        assert_eq!(
            b["summary"],
            json!({"pass": 0, "fail": 1, "warn": 2, "error": 0, "skip": 0})
        );
        let fail = &b["results"][0];
        assert_eq!(fail["policy"], "missing-windows-toleration");
        assert_eq!(fail["severity"], "high");
        assert_eq!(fail["scored"], true);
        assert_eq!(fail["properties"]["fix"], "add a toleration");
        assert_eq!(
            fail["resources"][0],
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "b",
                "name": "iis", "uid": "uid-iis"})
        );
        assert_eq!(
            fail["timestamp"],
            json!({"seconds": 1_700_000_000, "nanos": 0})
        );
        assert_eq!(
            (&b["results"][1]["result"], &b["results"][2]["severity"]),
            (&json!("warn"), &json!("info"))
        );
        assert_eq!(out[2]["summary"]["error"], 1);
        assert!(out[2]["metadata"].get("namespace").is_none());
    }

    #[test]
    fn a_namespace_with_many_results_is_split_under_the_budget() {
        let mut reports = PolicyReports::new(1_700_000_000);
        let win007 = rules::find("WIN007").unwrap().meta;
        let findings: Vec<Finding> = (0..40)
            .map(|i| Finding::new(win007, "/spec", format!("finding {i} {}", "x".repeat(100))))
            .collect();
        for i in 0..50 {
            reports.object(&object("big", &format!("d{i}")), &findings, &[], None);
        }
        reports.object(&object("small", "d"), &[], &[], None);
        let all = reports.namespaces["big"].clone();
        let total: usize = all
            .iter()
            .map(|r| serde_json::to_vec(r).unwrap().len() + 1)
            .sum();
        let budget = 64 * 1024;
        let parts = parts("PolicyReport", Some("big"), all.clone(), budget);
        assert!(
            parts.len() >= total.div_ceil(budget) && parts.len() > 1,
            "{total}"
        );
        let mut joined = Vec::new();
        for (i, p) in parts.iter().enumerate() {
            let name = if i == 0 {
                "winlint".to_string()
            } else {
                format!("winlint-{}", i + 1)
            };
            assert_eq!(p["metadata"]["name"], name);
            assert_eq!(p["metadata"]["namespace"], "big");
            let results = p["results"].as_array().unwrap();
            assert!(serde_json::to_vec(results).unwrap().len() <= budget + 1);
            assert_eq!(p["summary"]["fail"], results.len() as u64);
            joined.extend(results.iter().cloned());
        }
        assert_eq!(joined, all, "every result once, in order");
        // The real budget: the 2 000 results of 50 objects are split too, "small" is one report.
        let out = reports.finish();
        let names: Vec<(&str, &str)> = out
            .iter()
            .map(|r| {
                (
                    r["metadata"]["namespace"].as_str().unwrap(),
                    r["metadata"]["name"].as_str().unwrap(),
                )
            })
            .collect();
        assert_eq!(names.last(), Some(&("small", "winlint")));
        assert!(names.len() > 2, "{names:?}");
        for r in &out {
            assert!(serde_json::to_vec(&r["results"]).unwrap().len() <= PART_BYTES + 1);
        }
    }

    #[test]
    fn reports_not_written_are_errors_of_the_cluster_report() {
        let failed = [
            Failure {
                report: "PolicyReport team/winlint".into(),
                summary: Some(json!({"pass": 0, "fail": 12, "warn": 3, "error": 0, "skip": 0})),
                message: "namespace team is being terminated".into(),
            },
            Failure {
                report: "PolicyReport old/winlint".into(),
                summary: None,
                message: "forbidden".into(),
            },
        ];
        assert!(with_failures(&[], &[], 1).is_empty());
        let mut reports = PolicyReports::new(1);
        reports.error(None, "jobs in all namespaces", "forbidden");
        let listed = reports.finish();
        let out = with_failures(&listed, &failed, 1);
        assert_eq!(out.len(), 1);
        let r = &out[0];
        assert_eq!(r["kind"], "ClusterPolicyReport");
        assert_eq!(r["summary"]["error"], 3);
        assert_eq!(
            r["results"][1]["message"],
            "PolicyReport team/winlint not written (12 fail, 3 warn): namespace team is being \
             terminated"
        );
        assert_eq!(
            r["results"][1]["properties"]["report"],
            "PolicyReport team/winlint"
        );
        assert_eq!(
            r["results"][2]["message"],
            "PolicyReport old/winlint not deleted: forbidden"
        );
    }
}
