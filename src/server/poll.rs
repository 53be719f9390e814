//! Files re-read on an interval and acted on when their content changes: the serving
//! certificate (`certs`) and the configuration (`config_reload`). One mechanism for both.
//!
//! Polling, not file events: a Secret or ConfigMap volume is updated by the kubelet's atomic
//! writer, which writes a new timestamped directory and swaps the `..data` symlink to it
//! (kubernetes/pkg/volume/util/atomic_writer.go); an inotify watch on the file sees the old
//! inode and event watchers fire several times per swap. Reading the content and comparing a
//! hash sees each swap once, whatever the volume's layout, and costs a read per interval.

use std::hash::{Hash, Hasher};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;

/// The hash of the files' contents, in order (not cryptographic: it only detects a change).
pub(super) fn content_hash(parts: &[&[u8]]) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for p in parts {
        p.hash(&mut h);
    }
    h.finish()
}

/// What a change handler says about the contents it was given.
pub(super) enum Seen {
    /// Done with this content (applied, or refused and reported): act again only when the
    /// content changes.
    Settled,
    /// Try again on the next tick (files caught half-written, as a certificate whose key is
    /// not there yet).
    Retry,
}

/// Every `interval` until `shutdown`, read `paths` (on the blocking pool) and call `on_change`
/// with their contents when their hash differs from the last settled one (`settled` at start:
/// the hash of what is in use). Unreadable files (a swap in progress, a missing key) are
/// skipped until the next tick.
pub(super) fn spawn_poll(
    paths: Vec<PathBuf>,
    interval: Duration,
    mut shutdown: watch::Receiver<bool>,
    settled: u64,
    on_change: impl Fn(Vec<Vec<u8>>) -> Seen + Send + Sync + 'static,
) {
    let on_change = Arc::new(on_change);
    let paths = Arc::new(paths);
    tokio::spawn(async move {
        let mut last = settled;
        loop {
            tokio::select! {
                _ = tokio::time::sleep(interval) => {}
                _ = shutdown.wait_for(|s| *s) => return,
            }
            let (f, p) = (Arc::clone(&on_change), Arc::clone(&paths));
            let step = tokio::task::spawn_blocking(move || {
                let contents = p
                    .iter()
                    .map(std::fs::read)
                    .collect::<Result<Vec<_>, _>>()
                    .ok()?;
                let hash = content_hash(&contents.iter().map(Vec::as_slice).collect::<Vec<_>>());
                if hash == last {
                    return None;
                }
                Some((hash, f(contents)))
            })
            .await;
            if let Ok(Some((hash, Seen::Settled))) = step {
                last = hash;
            }
        }
    });
}
