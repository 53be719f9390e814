//! WIN701: contracts of managed platforms with Windows pods, beyond the scheduler's (issue 19):
//! what a platform's own admission webhooks and controllers require of a pod spec.
//!
//! What several rules of the family share (nothing yet: one rule).
