//! A count of the elementary steps of an evaluation on this thread: every JSON pointer looked up
//! ([`super::workload::lookup`]), every container visited ([`super::PodSite::containers`]) and
//! every item of a pod's lists visited ([`super::workload::each`]): what rules do per container
//! and per item. It exists for the growth tests
//! (`tests/prop_growth.rs`): a rule or fixer that walks all containers once per container shows
//! up as quadratic growth of this count, which a test can assert without timing anything. A
//! thread-local cell costs one add per step and no contention between the webhook's threads.

use std::cell::Cell;

thread_local! {
    static STEPS: Cell<u64> = const { Cell::new(0) };
}

/// One step.
#[inline]
pub(crate) fn step() {
    STEPS.with(|s| s.set(s.get().wrapping_add(1)));
}

/// Steps on this thread so far (compare two readings).
pub fn steps() -> u64 {
    STEPS.with(Cell::get)
}
