//! What runs in the cluster now, for `winlint audit`: Pods and the workload kinds, listed in
//! pages as `serde_json::Value`s (typed structs drop fields), each controller-owned Pod mapped
//! to its top owner (Pod → ReplicaSet → Deployment, Pod → Job → CronJob, Pod → StatefulSet /
//! DaemonSet / ReplicationController) so that it is reported once, under that owner.

use std::collections::{HashMap, HashSet};

use k8s_openapi::api::apps::v1::{DaemonSet, Deployment, ReplicaSet, StatefulSet};
use k8s_openapi::api::batch::v1::{CronJob, Job};
use k8s_openapi::api::core::v1::{Pod, ReplicationController};
use kube::api::{Api, ApiResource, DynamicObject};
use serde_json::Value;

use super::client::{ClusterError, ErrorKind, list_paged_each};

/// Which namespaces to list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// `-A`
    AllNamespaces,
    /// `-n NS`
    Namespace(String),
}

/// The kinds `winlint audit` lists, tops first (the order objects are reported in within a
/// namespace).
pub const KINDS: &[&str] = &[
    "CronJob",
    "Deployment",
    "StatefulSet",
    "DaemonSet",
    "ReplicationController",
    "Job",
    "ReplicaSet",
    "Pod",
];

fn resource(kind: &str) -> ApiResource {
    match kind {
        "Pod" => ApiResource::erase::<Pod>(&()),
        "ReplicationController" => ApiResource::erase::<ReplicationController>(&()),
        "Deployment" => ApiResource::erase::<Deployment>(&()),
        "ReplicaSet" => ApiResource::erase::<ReplicaSet>(&()),
        "StatefulSet" => ApiResource::erase::<StatefulSet>(&()),
        "DaemonSet" => ApiResource::erase::<DaemonSet>(&()),
        "Job" => ApiResource::erase::<Job>(&()),
        "CronJob" => ApiResource::erase::<CronJob>(&()),
        other => unreachable!("not an audited kind: {other}"),
    }
}

/// One object to lint, with the Pods it accounts for.
#[derive(Debug, Clone, PartialEq)]
pub struct AuditObject {
    pub kind: String,
    pub namespace: String,
    pub name: String,
    /// The whole object (`apiVersion` and `kind` set, `metadata.managedFields` dropped).
    pub object: Value,
    /// Names of the Pods (running now) this object owns, directly or through a ReplicaSet or
    /// Job; empty for a Pod reported as itself.
    pub pods: Vec<String>,
    /// The Pods (its own, or itself) the scheduler has not placed, by name.
    pub pending: Vec<super::pending::Pending>,
}

/// The result of an audit listing.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Inventory {
    /// Top-level objects, by namespace, then [`KINDS`] order, then name.
    pub objects: Vec<AuditObject>,
    /// Kinds that could not be listed (RBAC, API missing) and why: their Pods are then
    /// reported as themselves (or under another owner that could be listed).
    pub skipped: Vec<(String, ClusterError)>,
}

/// List Pods and the workload kinds in `scope`, `page_size` at a time, and keep the top
/// owners. A kind that RBAC forbids or the server lacks is skipped (see
/// [`Inventory::skipped`]); any other error fails the listing.
pub async fn list_workloads(
    client: &kube::Client,
    scope: &Scope,
    page_size: u32,
) -> Result<Inventory, ClusterError> {
    let mut all = Vec::new();
    let mut skipped = Vec::new();
    // The uids of the listed workloads (every kind before Pods in [`KINDS`]).
    let mut owners: HashSet<String> = HashSet::new();
    for kind in KINDS {
        let ar = resource(kind);
        let (api, what) = api_of(client, scope, &ar);
        let listed = list_paged_each(&api, page_size, &what, |o| {
            // A Pod whose controller was listed is never linted (its owner is): keep only
            // what maps it to that owner, not the whole Pod (issue 8: 10 000 Pods).
            if *kind == "Pod"
                && let Some(uid) = controller_of(&o)
                && owners.contains(uid)
            {
                // And whether the scheduler has placed it (issue 20: Pending pods are joined
                // with the findings of their owner).
                let status = o
                    .data
                    .get("status")
                    .map(super::pending::keep)
                    .unwrap_or_default();
                all.push(serde_json::json!({
                    "apiVersion": ar.api_version,
                    "kind": ar.kind,
                    "metadata": {
                        "name": o.metadata.name,
                        "namespace": o.metadata.namespace,
                        "uid": o.metadata.uid,
                        "ownerReferences": o.metadata.owner_references,
                    },
                    "status": status,
                }));
                return Ok(());
            }
            let v = object_value(&o, &ar, &what)?;
            if *kind != "Pod"
                && let Some(uid) = v["metadata"]["uid"].as_str()
            {
                owners.insert(uid.to_string());
            }
            all.push(v);
            Ok(())
        })
        .await;
        skip_or_fail(listed, kind, &mut skipped)?;
    }
    Ok(Inventory {
        objects: top_owners(all),
        skipped,
    })
}

/// The API of `ar` in `scope`, and what listing it is called in errors.
fn api_of(client: &kube::Client, scope: &Scope, ar: &ApiResource) -> (Api<DynamicObject>, String) {
    let api: Api<DynamicObject> = match scope {
        Scope::AllNamespaces => Api::all_with(client.clone(), ar),
        Scope::Namespace(ns) => Api::namespaced_with(client.clone(), ns, ar),
    };
    let what = format!(
        "{}{}",
        ar.plural,
        match scope {
            Scope::AllNamespaces => " in all namespaces".to_string(),
            Scope::Namespace(ns) => format!(" in namespace {ns}"),
        }
    );
    (api, what)
}

/// A listed object as the rules read it: `apiVersion` and `kind` set, `managedFields` dropped.
fn object_value(o: &DynamicObject, ar: &ApiResource, what: &str) -> Result<Value, ClusterError> {
    let mut v = serde_json::to_value(o).map_err(|e| {
        ClusterError::new(ErrorKind::Other, format!("reading {what}"), e.to_string())
    })?;
    v["apiVersion"] = ar.api_version.clone().into();
    v["kind"] = ar.kind.clone().into();
    if let Some(m) = v["metadata"].as_object_mut() {
        m.remove("managedFields");
    }
    Ok(v)
}

/// A kind that RBAC forbids or the server lacks is skipped (into `skipped`); any other error
/// fails the listing.
fn skip_or_fail(
    listed: Result<(), ClusterError>,
    kind: &str,
    skipped: &mut Vec<(String, ClusterError)>,
) -> Result<(), ClusterError> {
    match listed {
        Err(e) if matches!(e.kind, ErrorKind::Forbidden | ErrorKind::NotFound) => {
            skipped.push((kind.to_string(), e));
            Ok(())
        }
        other => other,
    }
}

/// The uid of the controller owner of a listed object, if any.
fn controller_of(o: &DynamicObject) -> Option<&str> {
    o.metadata
        .owner_references
        .as_ref()?
        .iter()
        .find(|r| r.controller == Some(true))
        .map(|r| r.uid.as_str())
}

/// A top owner found by [`stream_workloads`]: what the caller made of it when it was listed,
/// and the Pods listed under it.
#[derive(Debug)]
pub struct Top<T> {
    pub kind: &'static str,
    pub namespace: String,
    pub name: String,
    /// What `on_top` returned for it.
    pub value: T,
    /// Its Pods (running now), directly or through a ReplicaSet or Job; 0 for a Pod reported
    /// as itself.
    pub pods: usize,
    /// The Pods (its own, or itself) the scheduler has not placed.
    pub pending: Vec<super::pending::Pending>,
}

/// The result of [`stream_workloads`]: the tops in listing order ([`KINDS`], then the API
/// server's order: namespace, name), and the kinds skipped as in [`Inventory::skipped`].
#[derive(Debug)]
pub struct Streamed<T> {
    pub tops: Vec<Top<T>>,
    pub skipped: Vec<(String, ClusterError)>,
}

/// [`list_workloads`] in bounded memory (issue 29: `serve`'s audit loop on 10 000 Pods): each
/// top owner is handed to `on_top` as its page arrives, its whole JSON alive for that call
/// only; what is kept of it is what `on_top` returns, with the count and the Pending Pods
/// listed under it. Memory: one page of objects, the uids of the workloads (not of the Pods),
/// and what `on_top` keeps.
///
/// An owner is known by the uids of the objects listed before it: [`KINDS`] lists owners
/// first (CronJob, Job, then Pod; Deployment, ReplicaSet, then Pod), so every ownership the
/// controllers make is followed. An object whose controller is of a kind listed after its own
/// (no built-in controller does that) is a top of its own here, where [`top_owners`], which
/// sees everything at once, would put it under that controller.
pub async fn stream_workloads<T>(
    client: &kube::Client,
    scope: &Scope,
    page_size: u32,
    mut on_top: impl FnMut(&Value) -> T,
) -> Result<Streamed<T>, ClusterError> {
    let mut tops: Vec<Top<T>> = Vec::new();
    let mut skipped = Vec::new();
    // The uid of every listed workload (not Pod) → the index of its top in `tops`.
    let mut top_of: HashMap<String, usize> = HashMap::new();
    for kind in KINDS {
        let ar = resource(kind);
        let (api, what) = api_of(client, scope, &ar);
        let listed = list_paged_each(&api, page_size, &what, |o| {
            let owner = controller_of(&o).and_then(|u| top_of.get(u).copied());
            if *kind == "Pod" {
                let pending = o.data.get("status").and_then(|s| {
                    super::pending::of_pod(&serde_json::json!({
                        "metadata": {"name": o.metadata.name},
                        "status": super::pending::keep(s),
                    }))
                });
                if let Some(t) = owner {
                    let top = &mut tops[t];
                    top.pods += 1;
                    top.pending.extend(pending);
                    return Ok(());
                }
                let v = object_value(&o, &ar, &what)?;
                tops.push(top(kind, &o, on_top(&v), pending.into_iter().collect()));
                return Ok(());
            }
            let uid = o.metadata.uid.clone().unwrap_or_default();
            let t = match owner {
                Some(t) => t,
                None => {
                    let v = object_value(&o, &ar, &what)?;
                    tops.push(top(kind, &o, on_top(&v), Vec::new()));
                    tops.len() - 1
                }
            };
            if !uid.is_empty() {
                top_of.insert(uid, t);
            }
            Ok(())
        })
        .await;
        skip_or_fail(listed, kind, &mut skipped)?;
    }
    for t in &mut tops {
        t.pending.sort_by(|a, b| a.pod.cmp(&b.pod));
    }
    Ok(Streamed { tops, skipped })
}

fn top<T>(
    kind: &'static str,
    o: &DynamicObject,
    value: T,
    pending: Vec<super::pending::Pending>,
) -> Top<T> {
    Top {
        kind,
        namespace: o.metadata.namespace.clone().unwrap_or_default(),
        name: o.metadata.name.clone().unwrap_or_default(),
        value,
        pods: 0,
        pending,
    }
}

/// The `uid` of the controller owner of an object, if any.
fn controller_uid(v: &Value) -> Option<&str> {
    v["metadata"]["ownerReferences"]
        .as_array()?
        .iter()
        .find(|r| r["controller"] == true)?["uid"]
        .as_str()
}

/// Keep the objects no listed object controls; count every Pod under its topmost listed
/// controller (by `uid`: names repeat across namespaces and kinds). A Pod whose controller was
/// not listed (a custom resource, a Node for a static Pod) is reported as itself.
pub fn top_owners(objects: Vec<Value>) -> Vec<AuditObject> {
    let by_uid: HashMap<&str, usize> = objects
        .iter()
        .enumerate()
        .filter_map(|(i, v)| v["metadata"]["uid"].as_str().map(|u| (u, i)))
        .collect();
    let mut parents: Vec<Option<usize>> = objects
        .iter()
        .enumerate()
        .map(|(i, v)| {
            controller_uid(v)
                .and_then(|u| by_uid.get(u).copied())
                .filter(|p| *p != i)
        })
        .collect();
    // Bad data can make an ownership cycle: cut it where the walk comes back, so that every
    // chain ends and the cycle's last object becomes a top.
    for i in 0..parents.len() {
        let mut seen = std::collections::HashSet::new();
        let mut j = i;
        while let Some(p) = parents[j] {
            if !seen.insert(j) {
                parents[j] = None;
                break;
            }
            j = p;
        }
    }
    let top = |mut i: usize| -> usize {
        while let Some(p) = parents[i] {
            i = p;
        }
        i
    };
    let mut pods: HashMap<usize, Vec<String>> = HashMap::new();
    let mut pending: HashMap<usize, Vec<super::pending::Pending>> = HashMap::new();
    for (i, v) in objects.iter().enumerate() {
        if v["kind"] == "Pod" {
            let t = top(i);
            if let Some(p) = super::pending::of_pod(v) {
                pending.entry(t).or_default().push(p);
            }
            if t != i {
                pods.entry(t).or_default().push(
                    v["metadata"]["name"]
                        .as_str()
                        .unwrap_or_default()
                        .to_string(),
                );
            }
        }
    }
    let str_of = |v: &Value, p: &str| {
        v.pointer(p)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let mut out: Vec<AuditObject> = objects
        .iter()
        .enumerate()
        .filter(|(i, _)| parents[*i].is_none())
        .map(|(i, v)| AuditObject {
            kind: str_of(v, "/kind"),
            namespace: str_of(v, "/metadata/namespace"),
            name: str_of(v, "/metadata/name"),
            object: v.clone(),
            pods: {
                let mut p = pods.remove(&i).unwrap_or_default();
                p.sort();
                p
            },
            pending: {
                let mut p = pending.remove(&i).unwrap_or_default();
                p.sort_by(|a, b| a.pod.cmp(&b.pod));
                p
            },
        })
        .collect();
    let rank = |k: &str| KINDS.iter().position(|x| *x == k).unwrap_or(KINDS.len());
    out.sort_by(|a, b| {
        (&a.namespace, rank(&a.kind), &a.name).cmp(&(&b.namespace, rank(&b.kind), &b.name))
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(kind: &str, ns: &str, name: &str, uid: &str, owner: Option<&str>) -> Value {
        let mut v = json!({"kind": kind, "metadata": {"name": name, "namespace": ns, "uid": uid}});
        if let Some(o) = owner {
            v["metadata"]["ownerReferences"] =
                json!([{"uid": "not-the-controller"}, {"uid": o, "controller": true}]);
        }
        v
    }

    #[test]
    fn pods_are_reported_under_their_top_owner() {
        let objects = vec![
            obj("Pod", "a", "web-1", "p1", Some("rs1")),
            obj("Pod", "a", "web-2", "p2", Some("rs1")),
            obj("ReplicaSet", "a", "web-abc", "rs1", Some("d1")),
            // an old ReplicaSet of the same Deployment: not reported either
            obj("ReplicaSet", "a", "web-old", "rs0", Some("d1")),
            obj("Deployment", "a", "web", "d1", None),
            obj("Pod", "a", "job-x", "p3", Some("j1")),
            obj("Job", "a", "nightly-123", "j1", Some("cj1")),
            obj("CronJob", "a", "nightly", "cj1", None),
            obj("Pod", "a", "db-0", "p4", Some("ss1")),
            obj("StatefulSet", "a", "db", "ss1", None),
            // a standalone Pod, a static Pod (owned by a Node), one owned by a custom resource
            obj("Pod", "a", "debug", "p5", None),
            obj("Pod", "kube-system", "etcd-node1", "p6", Some("node-uid")),
            obj("Pod", "b", "spark-driver", "p7", Some("crd-uid")),
            // a ReplicaSet owned by something unlisted (e.g. an Argo Rollout) is the top
            obj("ReplicaSet", "b", "rollout-rs", "rs9", Some("rollout-uid")),
            obj("Pod", "b", "rollout-rs-1", "p8", Some("rs9")),
            // same name as a pod elsewhere: uid decides
            obj("Pod", "b", "web-1", "p9", None),
        ];
        let got: Vec<(String, String, String, Vec<String>)> = top_owners(objects)
            .into_iter()
            .map(|o| (o.namespace, o.kind, o.name, o.pods))
            .collect();
        let s = |x: &str| x.to_string();
        assert_eq!(
            got,
            vec![
                (s("a"), s("CronJob"), s("nightly"), vec![s("job-x")]),
                (
                    s("a"),
                    s("Deployment"),
                    s("web"),
                    vec![s("web-1"), s("web-2")]
                ),
                (s("a"), s("StatefulSet"), s("db"), vec![s("db-0")]),
                (s("a"), s("Pod"), s("debug"), vec![]),
                (
                    s("b"),
                    s("ReplicaSet"),
                    s("rollout-rs"),
                    vec![s("rollout-rs-1")]
                ),
                (s("b"), s("Pod"), s("spark-driver"), vec![]),
                (s("b"), s("Pod"), s("web-1"), vec![]),
                (s("kube-system"), s("Pod"), s("etcd-node1"), vec![]),
            ]
        );
    }

    #[test]
    fn ownership_cycles_and_missing_fields_do_not_hang() {
        let objects = vec![
            obj("ReplicaSet", "a", "x", "u1", Some("u2")),
            obj("Deployment", "a", "y", "u2", Some("u1")),
            obj("Pod", "a", "p", "u3", Some("u1")),
            json!({"kind": "Pod", "metadata": {}}),
            json!("not an object"),
        ];
        // The cycle is cut: one of its members is the top and carries the pod; the malformed
        // entries are tops of their own; nothing hangs or panics.
        let got = top_owners(objects);
        assert_eq!(got.len(), 3, "{got:#?}");
        let with_pod: Vec<&AuditObject> = got.iter().filter(|o| !o.pods.is_empty()).collect();
        assert_eq!(with_pod.len(), 1);
        assert_eq!(with_pod[0].pods, ["p"]);
    }
}
