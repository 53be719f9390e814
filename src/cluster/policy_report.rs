//! `winlint audit --policy-report=apply`: the reports `crate::report::policy_report` builds
//! written into the cluster by server-side apply (field manager `winlint`, forced: the reports
//! are winlint's alone), and the stale ones deleted: a report labelled
//! `app.kubernetes.io/managed-by=winlint` in the audited scope that this run did not write (a
//! namespace that no longer holds any audited object) is deleted, so that no dashboard shows
//! findings of workloads that are gone. A namespace whose objects are all clean keeps its
//! report, with `pass` results.
//!
//! RBAC: `get`, `list`, `create`, `patch`, `delete` on `policyreports.wgpolicyk8s.io` (and on
//! `clusterpolicyreports.wgpolicyk8s.io` for `-A`).

use std::collections::BTreeSet;

use kube::api::{Api, ApiResource, DeleteParams, DynamicObject, ListParams, Patch, PatchParams};
use serde_json::Value;

use super::audit::Scope;
use super::client::{ClusterError, ErrorKind};
/// The apiVersion of both kinds.
pub const API_VERSION: &str = "wgpolicyk8s.io/v1alpha2";
/// The name of every report winlint writes (one per namespace, one cluster-wide).
pub const REPORT_NAME: &str = "winlint";
/// The label of every report winlint writes, by which [`apply`] finds the stale ones.
pub const MANAGED_BY: (&str, &str) = ("app.kubernetes.io/managed-by", "winlint");

/// The field manager of the server-side applies.
pub const FIELD_MANAGER: &str = "winlint";

/// What [`apply`] did: `namespace/name` (or `name` for the cluster report) written and deleted.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Applied {
    pub written: Vec<String>,
    pub deleted: Vec<String>,
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

/// A 404 on the reports' API: their CRD is not installed (a server-side apply creates a missing
/// report, and its namespace holds audited objects, so nothing else is missing). The API server
/// answers `404 page not found` there, which says nothing to a user.
fn explain(e: ClusterError) -> ClusterError {
    if e.kind == ErrorKind::NotFound || e.message.starts_with("404 ") {
        return ClusterError::new(
            e.kind,
            e.doing,
            format!(
                "{}: the {API_VERSION} CRDs are not installed (Kyverno and Policy Reporter \
                 install them; or kubectl apply the CRDs of kubernetes-sigs/wg-policy-prototypes, \
                 policy-report/crd/v1alpha2)",
                e.message
            ),
        );
    }
    e
}

/// Apply `reports` (those `report::policy_report::PolicyReports::finish` builds) and delete
/// winlint's reports of `scope` that are not among them; the ClusterPolicyReport is pruned only
/// for [`Scope::AllNamespaces`] (an audit of one namespace says nothing of the rest).
pub async fn apply(
    client: &kube::Client,
    scope: &Scope,
    reports: &[Value],
) -> Result<Applied, ClusterError> {
    let params = PatchParams::apply(FIELD_MANAGER).force();
    let mut done = Applied::default();
    let mut kept: BTreeSet<(String, String, String)> = BTreeSet::new();
    for r in reports {
        let kind = r["kind"].as_str().unwrap_or_default();
        let name = r["metadata"]["name"].as_str().unwrap_or_default();
        let ns = r["metadata"]["namespace"].as_str();
        let ar = resource(kind);
        let api: Api<DynamicObject> = match ns {
            Some(ns) => Api::namespaced_with(client.clone(), ns, &ar),
            None => Api::all_with(client.clone(), &ar),
        };
        let place = match ns {
            Some(ns) => format!("{ns}/{name}"),
            None => name.to_string(),
        };
        api.patch(name, &params, &Patch::Apply(r))
            .await
            .map_err(|e| {
                explain(ClusterError::from_kube(
                    format!("applying {kind} {place}"),
                    &e,
                ))
            })?;
        kept.insert((kind.into(), ns.unwrap_or_default().into(), name.into()));
        done.written.push(format!("{kind} {place}"));
    }
    let selector = format!("{}={}", MANAGED_BY.0, MANAGED_BY.1);
    let mut kinds = vec![("PolicyReport", scope.clone())];
    if *scope == Scope::AllNamespaces {
        kinds.push(("ClusterPolicyReport", Scope::AllNamespaces));
    }
    for (kind, scope) in kinds {
        let ar = resource(kind);
        let api: Api<DynamicObject> = match &scope {
            Scope::Namespace(ns) => Api::namespaced_with(client.clone(), ns, &ar),
            Scope::AllNamespaces => Api::all_with(client.clone(), &ar),
        };
        // winlint's reports are one per namespace: one page holds them.
        let listed = api
            .list_metadata(&ListParams::default().labels(&selector))
            .await
            .map_err(|e| {
                explain(ClusterError::from_kube(
                    format!("listing {}", ar.plural),
                    &e,
                ))
            })?;
        for o in listed.items {
            let name = o.metadata.name.unwrap_or_default();
            let ns = o.metadata.namespace.unwrap_or_default();
            if kept.contains(&(kind.to_string(), ns.clone(), name.clone())) {
                continue;
            }
            let place = if ns.is_empty() {
                name.clone()
            } else {
                format!("{ns}/{name}")
            };
            let api: Api<DynamicObject> = if ns.is_empty() {
                Api::all_with(client.clone(), &ar)
            } else {
                Api::namespaced_with(client.clone(), &ns, &ar)
            };
            match api.delete(&name, &DeleteParams::default()).await {
                Ok(_) => done.deleted.push(format!("{kind} {place}")),
                // Deleted meanwhile (another audit): what was wanted.
                Err(kube::Error::Api(s)) if s.code == 404 => {}
                Err(e) => {
                    return Err(ClusterError::from_kube(
                        format!("deleting the stale {kind} {place}"),
                        &e,
                    ));
                }
            }
        }
    }
    Ok(done)
}
