//! A cooperative deadline for one evaluation (issue 15): the webhook must stop working on a
//! request when its answer is due, or `--max-concurrency` and the byte budget bound nothing
//! (the CPU of a timed-out request outlived its 408 by tens of seconds).
//!
//! The deadline is a thread-local set around one evaluation by [`within`]; the engine calls
//! [`check`] between pod sites, rules and fix passes, and the pod-site iterators call [`tick`]
//! per container and per item of every list (`workload::each`/`items`: mounts, env vars,
//! volumes, tolerations …; a rule that is slow on one container's huge list stops inside it,
//! not after it). Past the deadline, `check` unwinds with
//! the [`Exceeded`] payload (through `resume_unwind`: no panic message) back to `within`,
//! which returns `Err(Exceeded)`. Without a deadline (the CLI) `check` does nothing. The
//! evaluation is pure (no locks or I/O held across a check), so unwinding out of it leaves
//! nothing half-done.

use std::cell::Cell;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::time::Instant;

thread_local! {
    static DEADLINE: Cell<Option<Instant>> = const { Cell::new(None) };
    static TICKS: Cell<u32> = const { Cell::new(0) };
}

/// The evaluation passed its deadline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Exceeded;

/// Run `f` with `deadline` in force on this thread (`None`: no deadline). Other panics pass
/// through unchanged.
pub fn within<T>(deadline: Option<Instant>, f: impl FnOnce() -> T) -> Result<T, Exceeded> {
    let outer = DEADLINE.with(|d| d.replace(deadline));
    let r = catch_unwind(AssertUnwindSafe(f));
    DEADLINE.with(|d| d.set(outer));
    match r {
        Ok(v) => Ok(v),
        Err(p) if p.is::<Exceeded>() => Err(Exceeded),
        Err(p) => resume_unwind(p),
    }
}

/// Unwind to [`within`] when the deadline has passed.
pub fn check() {
    if DEADLINE
        .with(Cell::get)
        .is_some_and(|d| Instant::now() >= d)
    {
        resume_unwind(Box::new(Exceeded));
    }
}

/// [`check`] every 256th call: for per-item loops, where reading the clock each time would
/// cost more than the item.
pub fn tick() {
    let due = TICKS.with(|t| {
        let n = t.get().wrapping_add(1);
        t.set(n);
        n % 256 == 0
    });
    if due {
        check();
    }
}

/// Like `catch_unwind` for a part of an evaluation that may panic (a rule's bug): `None` on
/// a panic, but a passed deadline keeps unwinding to [`within`].
pub fn catch<T>(f: impl FnOnce() -> T) -> Option<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(v) => Some(v),
        Err(p) if p.is::<Exceeded>() => resume_unwind(p),
        Err(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn no_deadline_runs_to_the_end() {
        assert_eq!(
            within(None, || {
                check();
                7
            }),
            Ok(7)
        );
        check(); // outside any evaluation: nothing
    }

    #[test]
    fn a_passed_deadline_stops_at_the_next_check() {
        let mut steps = 0;
        let past = Instant::now() - Duration::from_millis(1);
        let r = within(Some(past), || {
            steps += 1;
            check();
            steps += 1;
        });
        assert_eq!((r, steps), (Err(Exceeded), 1));
        check(); // the deadline does not outlive its evaluation
    }

    #[test]
    fn tick_checks_now_and_then() {
        let past = Instant::now() - Duration::from_millis(1);
        let mut n = 0;
        let r = within(Some(past), || {
            for _ in 0..1000 {
                n += 1;
                tick();
            }
        });
        assert_eq!(r, Err(Exceeded));
        assert!(n <= 256, "{n}");
    }

    #[test]
    fn catch_keeps_the_deadline_and_absorbs_other_panics() {
        let past = Instant::now() - Duration::from_millis(1);
        let r = within(Some(past), || catch(check).is_some());
        assert_eq!(r, Err(Exceeded));
        let prev = std::panic::take_hook();
        std::panic::set_hook(Box::new(|_| {}));
        let r = within(None, || catch(|| panic!("a rule's bug")));
        std::panic::set_hook(prev);
        assert_eq!(r, Ok(None::<()>));
    }
}
