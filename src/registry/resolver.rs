//! Image facts with a memory: digest → facts (bounded, least recently used out), tag → digest
//! for a TTL (10 minutes by default: a tag is looked up once per TTL however many pods name
//! it), one lookup in flight per reference (later askers wait for it), per-repository backoff
//! after transport failures only (connect errors, timeouts, 5xx, 429), failures that are facts
//! (404, unauthorized, a manifest or config too large or malformed) remembered for a minute (or
//! until the credentials change), and optionally a directory of facts keyed by digest (the
//! CLI's cache between runs: a tag costs one HEAD, a digest nothing).
//!
//! Every map is bounded (`Settings::capacity` entries) and backoff entries expire: the pod
//! author names the registry, so nothing here may grow with the number of names seen.
//!
//! References arrive in normal form (`model::image::fact_key`, done by the callers): every
//! spelling of an image is one key. Every entry in memory but the backoff (facts, tags,
//! failures, lookups in flight) is kept under its reader's key
//! ([`Keyring::reader_key`](super::keyring::Keyring::reader_key): the pull secrets that serve
//! the pod's namespace) as well as its reference or digest ([`scoped`]): a namespace reads only
//! what a lookup with its own credentials found, never facts another team's secret could see,
//! and a refusal met by one namespace does not fail another's lookup (issue 30). The backoff
//! is per repository whoever asks: a transport failure says the registry is unwell, not what a
//! credential may read.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::FutureExt;
use futures::future::{BoxFuture, Shared};

use super::client::{LookupError, RegistryClient};
use super::keyring::Reader;
use super::metrics::RegistryMetrics;
use crate::model::image::{self, ImageRef};
use crate::model::image_facts::ImageFacts;

/// How the resolver remembers and how long it waits.
#[derive(Debug, Clone)]
pub struct Settings {
    /// How long a tag → digest answer is trusted.
    pub tag_ttl: Duration,
    /// How long a failure that is a fact about the image (404, 401) is remembered.
    pub negative_ttl: Duration,
    /// Digests whose facts are kept in memory (and tags whose digest is).
    pub capacity: usize,
    /// The longest one lookup may take, all requests together.
    pub lookup_timeout: Duration,
    /// Facts by digest between runs (the CLI's `--registry-cache`).
    pub disk: Option<PathBuf>,
    /// Background lookups running at once at most (`serve`); further misses are dropped and
    /// asked again by a later request.
    pub max_in_flight: usize,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            tag_ttl: Duration::from_secs(600),
            negative_ttl: Duration::from_secs(60),
            capacity: 4096,
            lookup_timeout: Duration::from_secs(20),
            disk: None,
            max_in_flight: 32,
        }
    }
}

type Lookup = Shared<BoxFuture<'static, Result<Arc<ImageFacts>, LookupError>>>;

#[derive(Default)]
struct State {
    /// [`scoped`] digest → (facts, last use).
    facts: HashMap<String, (Arc<ImageFacts>, u64)>,
    /// [`scoped`] reference → (digest, when learnt).
    tags: HashMap<String, (String, Instant)>,
    /// [`scoped`] reference → (error, when, the credentials' generation it was met under: a refusal
    /// is forgotten when a pull secret changes).
    failed: HashMap<String, (LookupError, Instant, u64)>,
    /// `registry/repository` → (failures in a row, no request before). Per repository: a
    /// tenant's repository that fails leaves the rest of a shared registry alone. Pruned
    /// (see [`BACKOFF_MEMORY`]) and bounded.
    backoff: HashMap<String, (u32, Instant)>,
    /// [`scoped`] reference → its running lookup.
    in_flight: HashMap<String, Lookup>,
    tick: u64,
}

/// The cache and the lookups; cheap to clone (one shared state).
#[derive(Clone)]
pub struct Resolver {
    inner: Arc<Inner>,
}

struct Inner {
    client: RegistryClient,
    settings: Settings,
    state: Mutex<State>,
    metrics: RegistryMetrics,
}

impl std::fmt::Debug for Resolver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Resolver")
            .field("settings", &self.inner.settings)
            .finish()
    }
}

impl Resolver {
    pub fn new(client: RegistryClient, settings: Settings, metrics: RegistryMetrics) -> Self {
        Resolver {
            inner: Arc::new(Inner {
                client,
                settings,
                state: Mutex::new(State::default()),
                metrics,
            }),
        }
    }

    pub fn metrics(&self) -> &RegistryMetrics {
        &self.inner.metrics
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.inner.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// [`Resolver::resolve_for`] the CLI's user (every credential).
    pub async fn resolve(&self, reference: &str) -> Result<Arc<ImageFacts>, LookupError> {
        self.resolve_for(reference, &Reader::Anyone).await
    }

    /// The key of `reader`'s entries (see the module comment).
    fn reader_key(&self, reader: &Reader) -> String {
        self.inner.client.credentials().current().reader_key(reader)
    }

    /// The facts of `reference` for `reader` from memory only: a digest reference, or a tag
    /// whose digest is fresh. Never waits.
    pub fn peek_for(&self, reference: &str, reader: &Reader) -> Option<Arc<ImageFacts>> {
        let r = image::parse(reference)?;
        let rk = self.reader_key(reader);
        let mut st = self.state();
        let digest = match &r.digest {
            Some(d) => d.clone(),
            None => {
                let (d, at) = st.tags.get(&scoped(&rk, reference))?;
                if at.elapsed() > self.inner.settings.tag_ttl {
                    return None;
                }
                d.clone()
            }
        };
        st.tick += 1;
        let tick = st.tick;
        let e = st.facts.get_mut(&scoped(&rk, &digest))?;
        e.1 = tick;
        Some(e.0.clone())
    }

    /// Is a lookup of `reference` for `reader` running?
    pub fn in_flight_for(&self, reference: &str, reader: &Reader) -> bool {
        let key = scoped(&self.reader_key(reader), reference);
        self.state().in_flight.contains_key(&key)
    }

    /// The facts of `reference` for `reader`: memory, else one lookup shared by everyone
    /// asking meanwhile with the same credentials.
    pub async fn resolve_for(
        &self,
        reference: &str,
        reader: &Reader,
    ) -> Result<Arc<ImageFacts>, LookupError> {
        if let Some(f) = self.peek_for(reference, reader) {
            self.inner.metrics.cache_hits.inc();
            return Ok(f);
        }
        self.start(reference, reader).await
    }

    /// Start (or join) the lookup of `reference` for `reader` without waiting for it:
    /// `serve`'s answer to a miss. Dropped when `max_in_flight` lookups run already (a later
    /// request asks again); the count and the insert are under one lock, so concurrent
    /// requests cannot overshoot.
    pub fn queue_for(&self, reference: &str, reader: &Reader) {
        if self.peek_for(reference, reader).is_some() {
            return;
        }
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            return;
        };
        if let Some(lookup) = self.start_within(reference, reader, Some(self.max_in_flight())) {
            rt.spawn(lookup);
        }
    }

    /// The shared lookup of `reference` for `reader`, created when none runs.
    fn start(&self, reference: &str, reader: &Reader) -> Lookup {
        self.start_within(reference, reader, None)
            .expect("an unbounded start always gives a lookup")
    }

    /// The shared lookup of `reference` for `reader` (a remembered failure, the running one,
    /// or a new one); with `limit`, `None` instead of a new lookup when that many run, and
    /// `None` for one running already (its starter polls it).
    fn start_within(
        &self,
        reference: &str,
        reader: &Reader,
        limit: Option<usize>,
    ) -> Option<Lookup> {
        let rk = self.reader_key(reader);
        let key = scoped(&rk, reference);
        let mut st = self.state();
        if let Some((e, at, generation)) = st.failed.get(&key)
            && at.elapsed() < self.inner.settings.negative_ttl
            && *generation == self.inner.client.credentials().generation()
        {
            return Some(futures::future::ready(Err(e.clone())).boxed().shared());
        }
        if let Some(l) = st.in_flight.get(&key) {
            return limit.is_none().then(|| l.clone());
        }
        if limit.is_some_and(|n| st.in_flight.len() >= n) {
            return None;
        }
        let me = self.clone();
        let (owned, reader, k) = (reference.to_string(), reader.clone(), key.clone());
        let lookup = async move {
            let out = me.lookup(&owned, &reader, &rk).await;
            me.state().in_flight.remove(&k);
            out
        }
        .boxed()
        .shared();
        st.in_flight.insert(key, lookup.clone());
        Some(lookup)
    }

    async fn lookup(
        &self,
        reference: &str,
        reader: &Reader,
        rk: &str,
    ) -> Result<Arc<ImageFacts>, LookupError> {
        let key = scoped(rk, reference);
        let r = image::parse(reference).ok_or(LookupError::Reference)?;
        let repo = backoff_key(&r);
        if let Some(wait) = self.backing_off(&repo) {
            return Err(LookupError::Backoff(wait));
        }
        let m = &self.inner.metrics;
        let generation = self.inner.client.credentials().generation();
        let start = Instant::now();
        let out = tokio::time::timeout(
            self.inner.settings.lookup_timeout,
            self.fetch(&key, &r, reader, rk),
        )
        .await
        .unwrap_or_else(|_| {
            Err(LookupError::Http(super::http::HttpError::Timeout(
                self.inner.settings.lookup_timeout,
                "the whole lookup",
            )))
        });
        m.observe(&r.registry, start.elapsed(), out.as_ref().err());
        let mut st = self.state();
        match &out {
            Ok((facts, from_memory)) => {
                st.backoff.remove(&repo);
                st.failed.remove(&key);
                if r.digest.is_none() {
                    st.tags
                        .insert(key.clone(), (facts.digest.clone(), Instant::now()));
                    bound(&mut st.tags, self.inner.settings.capacity, |(_, at)| *at);
                }
                if !from_memory {
                    self.remember(&mut st, rk, facts.clone());
                }
            }
            Err(e) if e.transient() => {
                let n = st.backoff.get(&repo).map_or(0, |b| b.0) + 1;
                let mut delay = Duration::from_secs(1 << n.min(8)).min(Duration::from_secs(300));
                if let LookupError::Throttled {
                    retry_after: Some(ra),
                } = e
                {
                    delay = delay.max((*ra).min(Duration::from_secs(3600)));
                }
                st.backoff.insert(repo, (n, Instant::now() + delay));
                prune_backoff(&mut st.backoff, self.inner.settings.capacity);
            }
            Err(e) => {
                st.failed
                    .insert(key, (e.clone(), Instant::now(), generation));
                bound(
                    &mut st.failed,
                    self.inner.settings.capacity,
                    |(_, at, _)| *at,
                );
            }
        }
        out.map(|(f, _)| f)
    }

    /// The remaining backoff of a repository (`registry/repository`), if any.
    fn backing_off(&self, repo: &str) -> Option<Duration> {
        let st = self.state();
        let (_, until) = st.backoff.get(repo)?;
        until.checked_duration_since(Instant::now())
    }

    /// Repositories with backoff state (expired entries included until pruned): at most
    /// `Settings::capacity`.
    pub fn backoff_len(&self) -> usize {
        self.state().backoff.len()
    }

    /// Lookups running at once at most.
    pub fn max_in_flight(&self) -> usize {
        self.inner.settings.max_in_flight.max(1)
    }

    /// Wait for the running lookups of `references` for `reader` (started by
    /// [`Resolver::queue_for`]); never starts one, so `serve`'s sync mode stays within
    /// `max_in_flight`.
    pub async fn join_running_for(
        &self,
        references: &std::collections::BTreeSet<String>,
        reader: &Reader,
    ) {
        let rk = self.reader_key(reader);
        let running: Vec<Lookup> = {
            let st = self.state();
            references
                .iter()
                .filter_map(|r| st.in_flight.get(&scoped(&rk, r)).cloned())
                .collect()
        };
        futures::future::join_all(running).await;
    }

    /// The requests: a digest reference is fetched once; a tag whose digest was known (a
    /// stale tag entry, or a disk cache) is asked with HEAD first, and costs no GET when the
    /// digest did not move. The flag: the facts came from memory (already counted there).
    /// `key`: the reference under the reader's key `rk`.
    async fn fetch(
        &self,
        key: &str,
        r: &ImageRef,
        reader: &Reader,
        rk: &str,
    ) -> Result<(Arc<ImageFacts>, bool), LookupError> {
        let client = &self.inner.client;
        if let Some(d) = &r.digest {
            if let Some(f) = self.known(rk, d) {
                return Ok(f);
            }
            return Ok((Arc::new(client.facts(r, None, reader).await?), false));
        }
        let seen_before = self.inner.settings.disk.is_some() || self.state().tags.contains_key(key);
        if seen_before && let Some(d) = client.head_digest(r, reader).await? {
            if let Some(f) = self.known(rk, &d) {
                return Ok(f);
            }
            return Ok((Arc::new(client.facts(r, Some(&d), reader).await?), false));
        }
        Ok((Arc::new(client.facts(r, None, reader).await?), false))
    }

    /// Facts by digest from the reader's memory or the disk cache (the CLI's: one reader).
    fn known(&self, rk: &str, digest: &str) -> Option<(Arc<ImageFacts>, bool)> {
        {
            let mut st = self.state();
            st.tick += 1;
            let tick = st.tick;
            if let Some(e) = st.facts.get_mut(&scoped(rk, digest)) {
                e.1 = tick;
                return Some((e.0.clone(), true));
            }
        }
        let f = Arc::new(super::disk::read(
            self.inner.settings.disk.as_deref()?,
            digest,
        )?);
        Some((f, false))
    }

    fn remember(&self, st: &mut State, rk: &str, facts: Arc<ImageFacts>) {
        if let Some(dir) = &self.inner.settings.disk {
            // A cache that cannot be written is only slower next time.
            let _ = super::disk::write(dir, &facts);
        }
        st.tick += 1;
        let tick = st.tick;
        st.facts.insert(scoped(rk, &facts.digest), (facts, tick));
        bound(&mut st.facts, self.inner.settings.capacity, |(_, t)| *t);
    }

    /// Entries in memory: (digests, tags).
    pub fn len(&self) -> (usize, usize) {
        let st = self.state();
        (st.facts.len(), st.tags.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == (0, 0)
    }
}

/// A reference or digest under its reader's key: what every map of [`State`] but the backoff
/// is keyed by.
fn scoped(reader_key: &str, reference: &str) -> String {
    format!("{reader_key}\n{reference}")
}

/// How long a repository's failure count outlives its backoff: a repository failing again
/// within it backs off longer; after it, the entry is dropped (the longest delay is 300 s).
const BACKOFF_MEMORY: Duration = Duration::from_secs(600);

/// The backoff key of an image: its registry and repository.
fn backoff_key(r: &ImageRef) -> String {
    format!("{}/{}", r.registry, r.repository)
}

/// Drop backoff entries whose delay ended more than [`BACKOFF_MEMORY`] ago, then bound the
/// map (those whose delay ends first go first). Runs on each insert: the map only grows there.
fn prune_backoff(map: &mut HashMap<String, (u32, Instant)>, cap: usize) {
    if map.len() <= cap.max(1) {
        return;
    }
    let now = Instant::now();
    map.retain(|_, (_, until)| *until + BACKOFF_MEMORY > now);
    bound(map, cap, |(_, until)| *until);
}

/// While `map` is over `cap`, drop the least recent entries down to 7/8 of `cap` in one pass
/// (one selection, not a scan per entry: 160 000 new names cost 160 000 / (cap / 8) passes).
fn bound<V, K: Ord + Copy>(map: &mut HashMap<String, V>, cap: usize, age: impl Fn(&V) -> K) {
    let cap = cap.max(1);
    if map.len() <= cap {
        return;
    }
    let keep = cap - cap / 8;
    let drop = map.len() - keep;
    let mut ages: Vec<K> = map.values().map(&age).collect();
    let (_, &mut threshold, _) = ages.select_nth_unstable(drop - 1);
    map.retain(|_, v| age(v) > threshold);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bound_drops_the_least_recent() {
        let mut m: HashMap<String, u64> = (0..5).map(|i| (format!("k{i}"), i)).collect();
        bound(&mut m, 3, |v| *v);
        let mut keys: Vec<_> = m.keys().cloned().collect();
        keys.sort();
        assert_eq!(keys, vec!["k2", "k3", "k4"]);
    }
}
