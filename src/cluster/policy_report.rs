//! `winlint audit --policy-report=apply`: the reports `crate::report::policy_report` builds
//! written into the cluster by server-side apply (field manager `winlint`, forced: the reports
//! are winlint's alone), and the stale ones deleted: a report labelled
//! `app.kubernetes.io/managed-by=winlint` in the audited scope that this run did not write (a
//! namespace that no longer holds any audited object, a split part the namespace no longer
//! needs, a report whose write failed) is deleted, so that no dashboard shows findings of
//! workloads that are gone. A namespace whose objects are all clean keeps its report, with
//! `pass` results.
//!
//! One report's failure does not stop the others: every PolicyReport is written (a namespace
//! being deleted, a quota, an admission policy or an RBAC rule of one namespace refuses only
//! that namespace's), every stale one is deleted, and what failed is returned
//! ([`Applied::failed`]); with `-A` the ClusterPolicyReport, written last, names it (the cluster
//! administrator sees it), and the CLI says it on stderr and in its exit code. Only the CRDs'
//! absence stops the run at once (every write would fail the same way).
//!
//! RBAC: `get`, `list`, `create`, `patch`, `delete` on `policyreports.wgpolicyk8s.io` (and on
//! `clusterpolicyreports.wgpolicyk8s.io` for `-A`).

use std::collections::BTreeSet;

use kube::api::{Api, ApiResource, DeleteParams, DynamicObject, ListParams, Patch, PatchParams};
use serde_json::Value;

use super::audit::Scope;
use super::client::ClusterError;
/// The apiVersion of both kinds.
pub const API_VERSION: &str = "wgpolicyk8s.io/v1alpha2";
/// The name of every report winlint writes (one per namespace, one cluster-wide).
pub const REPORT_NAME: &str = "winlint";
/// The label of every report winlint writes, by which [`apply`] finds the stale ones.
pub const MANAGED_BY: (&str, &str) = ("app.kubernetes.io/managed-by", "winlint");

/// The field manager of the server-side applies.
pub const FIELD_MANAGER: &str = "winlint";

/// What [`apply`] did: `Kind namespace/name` (or `Kind name` for the cluster report) written
/// and deleted, and what failed.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Applied {
    pub written: Vec<String>,
    pub deleted: Vec<String>,
    pub failed: Vec<Failure>,
}

/// A report not written, or a stale one not deleted.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    /// `Kind namespace/name`.
    pub report: String,
    /// The `summary` of a report not written (what its results would have said); `None` for
    /// a stale report not deleted.
    pub summary: Option<Value>,
    /// Why it failed, one line (the API server's message).
    pub message: String,
}

fn resource(kind: &str) -> ApiResource {
    let (group, version) = API_VERSION.split_once('/').expect("group/version");
    ApiResource {
        group: group.into(),
        version: version.into(),
        api_version: API_VERSION.into(),
        kind: kind.into(),
        plural: format!("{}s", kind.to_ascii_lowercase()),
    }
}

/// `e` (made of `source`) saying what to install when the CRDs are missing: the API server
/// answers `404 page not found` there, which says nothing to a user.
fn explain(e: ClusterError, source: &kube::Error) -> ClusterError {
    if !crds_missing(source) {
        return e;
    }
    ClusterError::new(
        e.kind,
        e.doing,
        format!(
            "{}: the {API_VERSION} CRDs are not installed (Kyverno and Policy Reporter install \
             them; or kubectl apply the CRDs of kubernetes-sigs/wg-policy-prototypes, \
             policy-report/crd/v1alpha2)",
            e.message
        ),
    )
}

/// `Kind namespace/name` of a report.
fn place(kind: &str, namespace: &str, name: &str) -> String {
    if namespace.is_empty() {
        format!("{kind} {name}")
    } else {
        format!("{kind} {namespace}/{name}")
    }
}

/// The CRDs are not installed: the API server answers `404 page not found` (not a Status of a
/// missing object or namespace), and every write would fail the same way.
fn crds_missing(e: &kube::Error) -> bool {
    matches!(e, kube::Error::Api(s) if s.code == 404 && s.reason != "NotFound")
}

/// Server-side apply of one report: its place, or the failure.
async fn write(client: &kube::Client, r: &Value) -> Result<String, Result<Failure, ClusterError>> {
    let kind = r["kind"].as_str().unwrap_or_default();
    let name = r["metadata"]["name"].as_str().unwrap_or_default();
    let ns = r["metadata"]["namespace"].as_str();
    let ar = resource(kind);
    let api: Api<DynamicObject> = match ns {
        Some(ns) => Api::namespaced_with(client.clone(), ns, &ar),
        None => Api::all_with(client.clone(), &ar),
    };
    let place = place(kind, ns.unwrap_or_default(), name);
    let params = PatchParams::apply(FIELD_MANAGER).force();
    match api.patch(name, &params, &Patch::Apply(r)).await {
        Ok(_) => Ok(place),
        Err(e) => {
            let err = explain(ClusterError::from_kube(format!("applying {place}"), &e), &e);
            Err(if crds_missing(&e) {
                Err(err)
            } else {
                Ok(Failure {
                    report: place,
                    summary: Some(r["summary"].clone()),
                    message: err.message,
                })
            })
        }
    }
}

/// Delete winlint's reports of `kind` in `scope` that are not in `kept`.
async fn prune(
    client: &kube::Client,
    kind: &str,
    scope: &Scope,
    kept: &BTreeSet<String>,
    done: &mut Applied,
) {
    let ar = resource(kind);
    let api: Api<DynamicObject> = match scope {
        Scope::Namespace(ns) => Api::namespaced_with(client.clone(), ns, &ar),
        Scope::AllNamespaces => Api::all_with(client.clone(), &ar),
    };
    let selector = format!("{}={}", MANAGED_BY.0, MANAGED_BY.1);
    // winlint's reports are a few per namespace: one page holds them.
    let listed = match api
        .list_metadata(&ListParams::default().labels(&selector))
        .await
    {
        Ok(l) => l,
        Err(e) => {
            let e = explain(
                ClusterError::from_kube(format!("listing {}", ar.plural), &e),
                &e,
            );
            done.failed.push(Failure {
                report: format!("any stale {kind}"),
                summary: None,
                message: e.message,
            });
            return;
        }
    };
    for o in listed.items {
        let name = o.metadata.name.unwrap_or_default();
        let ns = o.metadata.namespace.unwrap_or_default();
        let place = place(kind, &ns, &name);
        if kept.contains(&place) {
            continue;
        }
        let api: Api<DynamicObject> = if ns.is_empty() {
            Api::all_with(client.clone(), &ar)
        } else {
            Api::namespaced_with(client.clone(), &ns, &ar)
        };
        match api.delete(&name, &DeleteParams::default()).await {
            Ok(_) => done.deleted.push(place),
            // Deleted meanwhile (another audit): what was wanted.
            Err(kube::Error::Api(s)) if s.code == 404 => {}
            Err(e) => done.failed.push(Failure {
                message: ClusterError::from_kube("", &e).message,
                report: place,
                summary: None,
            }),
        }
    }
}

/// Apply the PolicyReports `reports` (those `report::policy_report::PolicyReports::finish`
/// builds, but the ClusterPolicyReport), each on its own, and delete winlint's stale reports of
/// `scope`; then, for [`Scope::AllNamespaces`] only (an audit of one namespace says nothing of
/// the rest), the ClusterPolicyReport (in parts) `cluster` returns for what failed so far (none:
/// a stale one is deleted). `Err` only when the CRDs are not installed.
pub async fn apply(
    client: &kube::Client,
    scope: &Scope,
    reports: &[Value],
    cluster: impl FnOnce(&[Failure]) -> Vec<Value>,
) -> Result<Applied, ClusterError> {
    let mut done = Applied::default();
    let mut kept = BTreeSet::new();
    write_all(client, reports, &mut kept, &mut done).await?;
    prune(client, "PolicyReport", scope, &kept, &mut done).await;
    if *scope == Scope::AllNamespaces {
        let reports = cluster(&done.failed);
        write_all(client, &reports, &mut kept, &mut done).await?;
        prune(client, "ClusterPolicyReport", scope, &kept, &mut done).await;
    }
    Ok(done)
}

/// [`write`] each of `reports`, the written ones into `kept` and `done`, the failed ones into
/// `done`.
async fn write_all(
    client: &kube::Client,
    reports: &[Value],
    kept: &mut BTreeSet<String>,
    done: &mut Applied,
) -> Result<(), ClusterError> {
    for r in reports {
        match write(client, r).await {
            Ok(place) => {
                kept.insert(place.clone());
                done.written.push(place);
            }
            Err(Ok(failure)) => done.failed.push(failure),
            Err(Err(e)) => return Err(e),
        }
    }
    Ok(())
}
