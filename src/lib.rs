//! winlint: find the Windows pods Kubernetes accepts but Windows cannot run.
//!
//! One engine ([`engine`]) with three front ends: the offline linter (`winlint FILES`), the
//! admission webhook (`winlint serve`) and the pre-commit hook (the same CLI).

pub mod admission;
pub mod classify;
pub mod cli;
pub mod cluster;
pub mod config;
pub mod engine;
pub mod image;
pub mod manifests;
pub mod process;
pub mod render;
pub mod report;
pub mod report_formats;
pub mod rules;
pub mod server;
pub mod source;
pub mod textedit;
pub mod windows;
pub mod workload;
pub mod yaml_compat;
