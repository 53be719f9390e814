//! Work on the blocking pool that the handler can stop waiting for (issue 30, item 1).
//!
//! The engine stops itself at its deadline (`model::deadline`), but only where it checks: a
//! loop without a check runs on, and a handler that awaited it answered only when it ended,
//! after the API server had gone and failed open. Every evaluation therefore runs as a
//! [`Job`], and the handler waits for it only until its answer deadline: an answer on time
//! that does not depend on what the evaluation does. What the job holds (its evaluation slot,
//! the body and its bytes) is moved into it and released when it really ends, so that the
//! overload limits still count an evaluation nobody waits for any more.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::task::JoinHandle;
use tokio::time::Instant;

/// A function running on the blocking pool.
pub(super) struct Job<T> {
    task: JoinHandle<T>,
    /// Set when the handler stopped waiting: the job then logs when it ends.
    overtaken: Arc<AtomicBool>,
}

/// What became of a [`Job`] waited for until a deadline.
#[derive(Debug)]
pub(super) enum Waited<T> {
    Done(T),
    /// The function panicked (a bug: the rules' own panics are caught inside the engine).
    Panicked(String),
    /// The deadline passed first; the job goes on alone.
    Overtaken,
}

impl<T: Send + 'static> Job<T> {
    /// Run `f` on the blocking pool, together with `held` (dropped when `f` returns). `what`
    /// names the job in the log line of an overtaken job's end.
    pub(super) fn spawn<H: Send + 'static>(
        what: &'static str,
        held: H,
        f: impl FnOnce() -> T + Send + 'static,
    ) -> Job<T> {
        let overtaken = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&overtaken);
        let started = Instant::now();
        let task = tokio::task::spawn_blocking(move || {
            let out = f();
            drop(held);
            if flag.load(Ordering::Acquire) {
                tracing::warn!(
                    uid = "",
                    millis = started.elapsed().as_millis() as u64,
                    "{what} ended after the webhook had answered without it"
                );
            }
            out
        });
        Job { task, overtaken }
    }

    /// Wait for the job until `deadline`.
    pub(super) async fn wait_until(mut self, deadline: Instant) -> Waited<T> {
        match tokio::time::timeout_at(deadline, &mut self.task).await {
            Ok(Ok(v)) => Waited::Done(v),
            Ok(Err(e)) => Waited::Panicked(e.to_string()),
            Err(_) => {
                self.overtaken.store(true, Ordering::Release);
                Waited::Overtaken
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;
    use std::time::Duration;
    use tokio::sync::Semaphore;

    /// The handler's answer does not wait for a function that ignores its deadline, and what
    /// the job holds stays held until the function really ends.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_job_past_its_deadline_is_overtaken_and_keeps_what_it_holds() {
        let slots = Arc::new(Semaphore::new(1));
        let slot = Arc::clone(&slots).acquire_owned().await.unwrap();
        let (release, released) = mpsc::channel::<()>();
        let (ended_tx, ended_rx) = mpsc::channel::<()>();
        let job = Job::spawn("a stuck evaluation", slot, move || {
            // Stuck until the test lets it go: no deadline check inside.
            released.recv().unwrap();
            ended_tx.send(()).unwrap();
            7
        });
        let waited = job
            .wait_until(Instant::now() + Duration::from_millis(50))
            .await;
        assert!(matches!(waited, Waited::Overtaken), "{waited:?}");
        assert_eq!(slots.available_permits(), 0, "the slot is still held");
        release.send(()).unwrap();
        tokio::task::spawn_blocking(move || ended_rx.recv().unwrap())
            .await
            .unwrap();
        // The permit is dropped right after `f` returns, on the job's thread.
        let permit = tokio::time::timeout(Duration::from_secs(10), slots.acquire())
            .await
            .expect("the slot is given back when the job ends");
        drop(permit);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_job_that_ends_in_time_gives_its_value() {
        let job = Job::spawn("an evaluation", (), || 7);
        let waited = job
            .wait_until(Instant::now() + Duration::from_secs(30))
            .await;
        assert!(matches!(waited, Waited::Done(7)), "{waited:?}");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_panicking_job_is_reported() {
        let prev = std::panic::take_hook();
        std::panic::set_hook(Box::new(|_| {}));
        let job = Job::spawn("an evaluation", (), || -> u8 { panic!("a bug") });
        let waited = job
            .wait_until(Instant::now() + Duration::from_secs(30))
            .await;
        std::panic::set_hook(prev);
        assert!(matches!(waited, Waited::Panicked(_)), "{waited:?}");
    }
}
