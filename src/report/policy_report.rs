//! `winlint audit --policy-report`: the audit as `wgpolicyk8s.io/v1alpha2` PolicyReports. The
//! builder lives in [`crate::cluster::policy_results`], where `winlint serve`'s audit loop uses
//! the same code (issue 29: one code path for the CLI's audit and the continuous one).

pub use crate::cluster::policy_results::*;
