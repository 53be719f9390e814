//! How registry facts reach the engine: the CLI resolves every image of its input first and
//! hands a map; `serve` hands its cache, which answers from memory and queues a lookup on a
//! miss (the request is judged by the image names meanwhile).

use std::collections::BTreeSet;
use std::sync::Arc;

use serde_json::Value;

use super::client::LookupError;
use super::keyring::Reader;
use super::resolver::Resolver;
use crate::model::context::ImageFactsSource;
use crate::model::image::fact_key;
use crate::model::image_facts::{ImageFacts, ImageFactsMap};
use crate::model::workload::pod_sites;

/// The image references of every container of every pod site of `object`, in normal form
/// (`image::fact_key`): one lookup, one cache entry and one fact for all spellings of an image.
pub fn image_references(object: &Value, out: &mut BTreeSet<String>) {
    for site in pod_sites(object) {
        for c in site.containers() {
            if let Some(i) = c.image() {
                out.insert(fact_key(i).into_owned());
            }
        }
    }
}

/// Resolve `references` for the CLI's user ([`Reader::Anyone`]: every credential), at most the
/// resolver's `max_in_flight` at once, each bounded by its timeouts: the facts found, and the
/// failures by reference. (`serve` resolves per namespace through [`Resolver::queue_for`].)
pub async fn resolve_all(
    resolver: &Resolver,
    references: &BTreeSet<String>,
) -> (ImageFactsMap, Vec<(String, LookupError)>) {
    use futures::StreamExt;
    let lookups = references.iter().map(|r| async move {
        let out = resolver.resolve(r).await;
        (r.clone(), out)
    });
    let results: Vec<_> = futures::stream::iter(lookups)
        .buffer_unordered(resolver.max_in_flight())
        .collect()
        .await;
    let mut facts = ImageFactsMap::new();
    let mut failed = Vec::new();
    for (r, out) in results {
        match out {
            Ok(f) => {
                facts.insert(r, f);
            }
            Err(e) => failed.push((r, e)),
        }
    }
    (facts, failed)
}

/// `serve`'s source: the resolver's memory as the pod's namespace may read it; a miss queues a
/// background lookup with that namespace's credentials.
#[derive(Debug, Clone)]
pub struct Background(pub Resolver);

/// The reader of a pod in `namespace` (`serve`); a pod that names none reads as the namespace
/// `""`, which only a secret serving every namespace (`*`) serves.
pub fn reader_of(namespace: Option<&str>) -> Reader {
    Reader::Namespace(namespace.unwrap_or("").to_string())
}

impl ImageFactsSource for Background {
    fn get(&self, reference: &str, namespace: Option<&str>) -> Option<Arc<ImageFacts>> {
        let reader = reader_of(namespace);
        let f = self.0.peek_for(reference, &reader);
        if f.is_some() {
            self.0.metrics().cache_hits.inc();
        } else {
            self.0.queue_for(reference, &reader);
        }
        f
    }
}
