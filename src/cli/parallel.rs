//! An ordered parallel map for the CLI's inputs: `work` runs on up to `jobs` threads, `consume`
//! sees every result on the calling thread in input order, so what the CLI prints is the same
//! bytes as a run on one thread. Workers run at most [`WINDOW_PER_JOB`] results per thread
//! ahead of the consumer: memory holds a bounded number of inputs' texts and findings at once
//! (each read under `--max-input-bytes`), never the whole tree's.
//!
//! `std::thread::scope` rather than rayon: rayon is not in Cargo.lock (it would add rayon,
//! rayon-core and crossbeam-* to the build for one loop), and its `par_iter().map().collect()`
//! holds every result until the last one is done, where the report must stream in order.

use std::collections::BTreeMap;
use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};

/// How many results each worker may finish ahead of the consumer.
const WINDOW_PER_JOB: usize = 2;

/// The default number of threads: the cores this process may use.
pub fn default_jobs() -> usize {
    std::thread::available_parallelism().map_or(1, NonZeroUsize::get)
}

/// `consume(i, work(&items[i]))` for every `i` in order. With one job or one item, everything
/// runs on the calling thread and no thread is started. Otherwise `jobs - 1` threads are
/// started and the calling thread is the last of the `jobs`: when the result it must consume
/// next is not in, it works on the next item itself rather than sleeping. A consumer that only
/// waited made one thread more than the cores (it woke for every result to write it), and the
/// hand-offs cost 30 000 futex calls on the 10 000-object corpus (BENCHMARKS.md §11).
pub fn ordered_map<T: Sync, R: Send>(
    items: &[T],
    jobs: usize,
    work: impl Fn(&T) -> R + Sync,
    mut consume: impl FnMut(usize, R),
) {
    let jobs = jobs.min(items.len());
    if jobs <= 1 {
        for (i, item) in items.iter().enumerate() {
            consume(i, work(item));
        }
        return;
    }
    let window = jobs * WINDOW_PER_JOB;
    let next = AtomicUsize::new(0);
    let state = Mutex::new(State {
        done: BTreeMap::new(),
        consumed: 0,
        failed: false,
    });
    let (ready, room) = (Condvar::new(), Condvar::new());
    let guard = || FailGuard {
        state: &state,
        ready: &ready,
        room: &room,
    };
    std::thread::scope(|s| {
        for _ in 1..jobs {
            s.spawn(|| {
                // A worker that panics says so, or the consumer would wait for its result.
                let _guard = guard();
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= items.len() {
                        return;
                    }
                    {
                        let mut st = state.lock().unwrap_or_else(|e| e.into_inner());
                        while i >= st.consumed + window && !st.failed {
                            st = room.wait(st).unwrap_or_else(|e| e.into_inner());
                        }
                        if st.failed {
                            return;
                        }
                    }
                    let r = work(&items[i]);
                    let mut st = state.lock().unwrap_or_else(|e| e.into_inner());
                    st.done.insert(i, r);
                    ready.notify_one();
                }
            });
        }
        // The calling thread panicking in `work` or `consume` stops the workers too (they
        // would wait for room in the window), and the scope re-raises its panic.
        let _guard = guard();
        for i in 0..items.len() {
            let r = loop {
                let mut st = state.lock().unwrap_or_else(|e| e.into_inner());
                if let Some(r) = st.done.remove(&i) {
                    st.consumed = i + 1;
                    room.notify_all();
                    break Some(r);
                }
                if st.failed {
                    break None;
                }
                // Not in: claim the next item within the window and work on it here, else
                // wait (the result waited for is then being made by a worker).
                let j = next.load(Ordering::Relaxed);
                if j < items.len()
                    && j < st.consumed + window
                    && next
                        .compare_exchange(j, j + 1, Ordering::Relaxed, Ordering::Relaxed)
                        .is_ok()
                {
                    drop(st);
                    let r = work(&items[j]);
                    if j == i {
                        let mut st = state.lock().unwrap_or_else(|e| e.into_inner());
                        st.consumed = i + 1;
                        room.notify_all();
                        break Some(r);
                    }
                    state
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .done
                        .insert(j, r);
                    continue;
                }
                if j >= items.len() || j >= st.consumed + window {
                    drop(ready.wait(st).unwrap_or_else(|e| e.into_inner()));
                }
            };
            // A worker panicked: leave, and the scope's join re-raises its panic.
            let Some(r) = r else { return };
            consume(i, r);
        }
    });
}

struct State<R> {
    /// Results finished and not yet consumed, by index.
    done: BTreeMap<usize, R>,
    /// Results consumed so far (the next index the consumer waits for).
    consumed: usize,
    /// A worker panicked: everyone stops.
    failed: bool,
}

struct FailGuard<'a, R> {
    state: &'a Mutex<State<R>>,
    ready: &'a Condvar,
    room: &'a Condvar,
}

impl<R> Drop for FailGuard<'_, R> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.state.lock().unwrap_or_else(|e| e.into_inner()).failed = true;
            self.ready.notify_all();
            self.room.notify_all();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_arrive_in_input_order_whatever_the_jobs() {
        let items: Vec<u64> = (0..200).collect();
        for jobs in [1, 2, 3, 8] {
            let mut seen = Vec::new();
            ordered_map(
                &items,
                jobs,
                |&x| {
                    // Uneven work, so later items often finish first.
                    if x % 7 == 0 {
                        std::thread::sleep(std::time::Duration::from_micros(300));
                    }
                    x * 2
                },
                |i, r| seen.push((i, r)),
            );
            let want: Vec<(usize, u64)> = items.iter().map(|&x| (x as usize, x * 2)).collect();
            assert_eq!(seen, want, "jobs={jobs}");
        }
    }

    #[test]
    fn workers_stay_within_the_window_of_the_consumer() {
        let items: Vec<usize> = (0..100).collect();
        let started = AtomicUsize::new(0);
        let jobs = 3;
        ordered_map(
            &items,
            jobs,
            |_| started.fetch_add(1, Ordering::SeqCst),
            |i, _| {
                // Items started, counted when item i is consumed: at most the window past it.
                let s = started.load(Ordering::SeqCst);
                assert!(s <= i + 1 + jobs * WINDOW_PER_JOB, "{s} started at {i}");
                std::thread::sleep(std::time::Duration::from_micros(50));
            },
        );
    }

    #[test]
    fn the_caller_is_one_of_the_jobs() {
        let items: Vec<usize> = (0..300).collect();
        for jobs in [2, 3] {
            // Threads other than the caller that ran work: only jobs - 1 are started.
            let started = Mutex::new(std::collections::BTreeSet::new());
            let caller = std::thread::current().id();
            ordered_map(
                &items,
                jobs,
                |&x| {
                    let me = std::thread::current().id();
                    if me != caller {
                        started.lock().unwrap().insert(format!("{me:?}"));
                    }
                    if x % 5 == 0 {
                        std::thread::sleep(std::time::Duration::from_micros(100));
                    }
                },
                // The results are consumed on the calling thread.
                |_, ()| assert_eq!(std::thread::current().id(), caller),
            );
            let n = started.into_inner().unwrap().len();
            assert!(
                n < jobs,
                "{n} started threads ran the work with jobs={jobs}"
            );
        }
    }

    #[test]
    fn a_panicking_consumer_stops_the_workers_instead_of_hanging() {
        let items: Vec<usize> = (0..100).collect();
        let r = std::panic::catch_unwind(|| {
            ordered_map(&items, 3, |&x| x, |i, _| assert!(i != 3, "boom"))
        });
        assert!(r.is_err());
    }

    #[test]
    fn a_panicking_worker_panics_the_caller_instead_of_hanging() {
        let items: Vec<usize> = (0..50).collect();
        let r = std::panic::catch_unwind(|| {
            ordered_map(
                &items,
                2,
                |&x| {
                    assert!(x != 5, "boom");
                    x
                },
                |_, _| {},
            )
        });
        assert!(r.is_err());
    }
}
