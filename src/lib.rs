//! winlint: find the Windows pods Kubernetes accepts but Windows cannot run.
//!
//! One engine ([`engine`]) with three front ends: the offline linter (`winlint FILES`), the
//! admission webhook (`winlint serve`) and the pre-commit hook (the same CLI). The layers, each
//! using only those below it (CONTRIBUTING.md has the map; `tests/architecture.rs` checks it):
//!
//! * front ends: [`cli`], [`lsp`] (the Language Server), [`report`], [`admission`], [`server`], [`manifests`];
//! * [`engine`]: lint an object, and the one fixer;
//! * [`config`]: the target and the policy, from `winlint.yaml` and flags;
//! * [`rules`]: the registry and the rule modules;
//! * [`model`]: the vocabulary (findings, rule metadata, pod sites, the evaluation context,
//!   target, Windows builds, images, classification); [`source`] and [`textedit`]: YAML
//!   documents with source maps and surgical edits.

pub mod admission;
pub mod certs;
pub mod cli;
pub mod cluster;
pub mod config;
pub mod engine;
pub mod lsp;
pub mod manifests;
pub mod model;
pub mod plan;
pub mod process;
pub mod registry;
pub mod render;
pub mod report;
pub mod rules;
pub mod server;
pub mod source;
pub mod textedit;

/// Windows builds, at the path they had before [`model`] held them.
pub use model::windows;
