//! The GMSACredentialSpec names of the cluster (the CRD of kubernetes-sigs/windows-gmsa,
//! `windows.k8s.io/v1`, resource `gmsacredentialspecs`, cluster-scoped), for WIN110.
//!
//! An optional fact: a cluster without the CRD (404), or RBAC that does not allow the list
//! (403), gives no names at all, never an error, and never holds up the other facts. Only the
//! names are read (metadata lists and watches): the specs themselves are not winlint's business.

use std::collections::BTreeSet;

use futures::StreamExt;
use futures::stream::BoxStream;
use kube::api::{Api, ApiResource, DynamicObject};
use kube::core::{GroupVersionKind, PartialObjectMeta};
use kube::runtime::WatchStreamExt;
use kube::runtime::watcher::{self, Event};

use super::client::{ClusterError, ErrorKind, list_paged_each};
use crate::model::context::GMSA_GROUP;

/// The resource the windows-gmsa webhook reads (`crdAPIGroup`, `crdAPIVersion`,
/// `crdResourceName` of its kube_client.go).
pub fn resource() -> ApiResource {
    ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk(GMSA_GROUP, "v1", "GMSACredentialSpec"),
        "gmsacredentialspecs",
    )
}

/// `Api<PartialObjectMeta<_>>` makes metadata-only requests (lists and watches): no spec
/// crosses the wire.
fn metadata_api(client: &kube::Client) -> Api<PartialObjectMeta<DynamicObject>> {
    Api::all_with(client.clone(), &resource())
}

/// Whether an error means "no facts here" rather than a failure: the CRD is not installed
/// (404) or the client may not list it (403).
pub fn absent(e: &ClusterError) -> bool {
    matches!(e.kind, ErrorKind::NotFound | ErrorKind::Forbidden)
}

/// The names, read once (paged metadata lists): `None` without the CRD or the right to list
/// it; other errors (unreachable, 5xx) are errors, as for the other facts.
pub async fn read_names(
    client: &kube::Client,
    page_size: u32,
) -> Result<Option<BTreeSet<String>>, ClusterError> {
    let mut names = BTreeSet::new();
    let listed = list_paged_each(
        &metadata_api(client),
        page_size,
        "gmsacredentialspecs",
        |o| {
            names.extend(o.metadata.name);
            Ok(())
        },
    )
    .await;
    match listed {
        Ok(()) => Ok(Some(names)),
        Err(e) if absent(&e) => {
            tracing::debug!(uid = "", "no GMSACredentialSpec facts: {e}");
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

/// A metadata watch of the names, each event reduced to the name.
pub fn watch_names(
    client: &kube::Client,
    cfg: watcher::Config,
) -> BoxStream<'static, Result<Event<String>, watcher::Error>> {
    watcher::watcher(metadata_api(client), cfg)
        .default_backoff()
        .map(|r| {
            r.map(|ev| {
                let name = |o: &PartialObjectMeta<DynamicObject>| {
                    o.metadata.name.clone().unwrap_or_default()
                };
                match ev {
                    Event::Init => Event::Init,
                    Event::InitApply(o) => Event::InitApply(name(&o)),
                    Event::InitDone => Event::InitDone,
                    Event::Apply(o) => Event::Apply(name(&o)),
                    Event::Delete(o) => Event::Delete(name(&o)),
                }
            })
        })
        .boxed()
}

/// The live store of the names: `None` until a complete list arrives, and again when the CRD
/// goes away or the list is refused (a stale set would report names that now exist).
#[derive(Debug, Default)]
pub struct GmsaStore {
    names: Option<BTreeSet<String>>,
    init: Option<BTreeSet<String>>,
    /// The last absence logged, so that a missing CRD is one line, not one per retry.
    logged: Option<ErrorKind>,
}

impl GmsaStore {
    pub fn names(&self) -> Option<&BTreeSet<String>> {
        self.names.as_ref()
    }

    /// Apply one watch event or error; `true` when the facts changed.
    pub fn apply(&mut self, r: Result<Event<String>, ClusterError>) -> bool {
        match r {
            Ok(Event::Init) => {
                self.init = Some(BTreeSet::new());
                false
            }
            Ok(Event::InitApply(n)) => {
                self.init.get_or_insert_default().insert(n);
                false
            }
            Ok(Event::InitDone) => {
                let new = self.init.take().unwrap_or_default();
                if self.logged.take().is_some() {
                    tracing::info!(uid = "", "GMSACredentialSpecs listed: {}", new.len());
                }
                let changed = self.names.as_ref() != Some(&new);
                self.names = Some(new);
                changed
            }
            Ok(Event::Apply(n)) => self.names.as_mut().is_some_and(|s| s.insert(n)),
            Ok(Event::Delete(n)) => self.names.as_mut().is_some_and(|s| s.remove(&n)),
            Err(e) => {
                if e.kind == ErrorKind::Gone {
                    return false; // the watcher lists again at once
                }
                if self.logged.as_ref() != Some(&e.kind) {
                    let what = if absent(&e) {
                        "no GMSACredentialSpec facts (WIN110 stays silent)"
                    } else {
                        "GMSACredentialSpec facts dropped until the watch recovers"
                    };
                    tracing::info!(uid = "", "{e}: {what}");
                    self.logged = Some(e.kind.clone());
                }
                self.init = None;
                self.names.take().is_some()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(kind: ErrorKind) -> Result<Event<String>, ClusterError> {
        Err(ClusterError {
            kind,
            doing: "watching gmsacredentialspecs".into(),
            message: "x".into(),
        })
    }

    #[test]
    fn the_store_knows_names_only_after_a_complete_list() {
        let mut s = GmsaStore::default();
        assert!(!s.apply(Ok(Event::Init)));
        assert!(!s.apply(Ok(Event::InitApply("a".into()))));
        assert_eq!(s.names(), None, "half a list is no facts");
        assert!(s.apply(Ok(Event::InitDone)));
        assert_eq!(s.names().unwrap().len(), 1);
        assert!(s.apply(Ok(Event::Apply("b".into()))));
        assert!(
            !s.apply(Ok(Event::Apply("b".into()))),
            "an update changes no name"
        );
        assert!(s.apply(Ok(Event::Delete("a".into()))));
        assert_eq!(
            s.names().unwrap().iter().collect::<Vec<_>>(),
            [&"b".to_string()]
        );
        // 410 is routine; the CRD deleted (404) or RBAC revoked (403): no facts.
        assert!(!s.apply(err(ErrorKind::Gone)));
        assert!(s.names().is_some());
        assert!(s.apply(err(ErrorKind::NotFound)));
        assert_eq!(s.names(), None);
        assert!(!s.apply(err(ErrorKind::NotFound)));
        // Installed again: listed again.
        s.apply(Ok(Event::Init));
        assert!(s.apply(Ok(Event::InitDone)));
        assert_eq!(s.names().map(BTreeSet::len), Some(0));
    }

    #[test]
    fn the_resource_is_the_webhooks() {
        let r = resource();
        assert_eq!(r.api_version, "windows.k8s.io/v1");
        assert_eq!(r.plural, "gmsacredentialspecs");
        assert_eq!(r.kind, "GMSACredentialSpec");
    }
}
