//! The vocabulary every layer shares: what a rule reports ([`Finding`], [`Fix`], [`Severity`]),
//! how a rule is described ([`RuleMeta`]), what it evaluates ([`PodSite`], [`Eval`], [`Target`],
//! [`Context`]) and the Kubernetes and Windows facts it is judged by (Windows builds, image
//! references, OS classification, pod facts, well-known labels, paths, quantities).
//!
//! Nothing here depends on the rules, the configuration file, the engine or a front end
//! (`tests/architecture.rs` checks it).

pub mod api_fields;
pub mod citations;
pub mod classify;
pub mod context;
pub mod date;
pub mod deadline;
pub mod digest;
pub mod eval;
pub mod finding;
pub mod image;
pub mod image_contents;
pub mod image_facts;
pub mod image_user;
pub mod known_images;
pub mod labels;
pub mod meta;
pub mod names;
pub mod nodes;
pub mod paths;
pub mod placement;
pub mod platform;
pub mod pod;
pub mod pointer;
pub mod quantity;
pub mod reads;
pub mod schedule;
pub mod target;
pub mod windows;
pub mod windows_evidence;
pub mod work;
pub mod workload;

pub use context::Context;
pub use eval::{Eval, Operation};
pub use finding::{Finding, Fix, ops};
pub use meta::{FixSafety, RuleMeta, Severity};
pub use pointer::escape;
pub use target::{KubeVersion, Pinned, Runtime, Taint, Target};
pub use workload::{ContainerRef, Lookup, PodSite};
