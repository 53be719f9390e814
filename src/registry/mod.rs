//! Image facts from registries (issue 18): the I/O half. The pure half (the facts, manifest
//! parsing, containerd's matcher) is `model::image_facts`; rules read facts through
//! `Context::image_facts` and never wait for a network.
//!
//! * `http`: bounded HTTP (timeouts, body cap, redirect limit, no credentials across hosts;
//!   redirects and token realms checked against the registry's address class, after DNS);
//! * `keyring`: credentials (docker config, pull secrets; never a credential helper) matched
//!   to an image the kubelet's way, each with the namespaces it serves; `auth`: the `401`
//!   challenges;
//! * `pull_secrets`: `serve`'s credentials, read from Secrets of its namespace by name, scoped
//!   by their `winlint.io/namespaces` annotation;
//! * `client`: one lookup (manifest, config, Basic/Bearer);
//! * `resolver`: the caches (digest → facts bounded, tag → digest with a TTL), single-flight,
//!   backoff, every entry under its reader's key (a namespace reads only its credentials' facts); `disk`: facts by digest between CLI runs; `metrics`: `winlint_registry_*`;
//! * `source`: what the engine is handed (a resolved map for the CLI, the cache for `serve`).

pub mod auth;
pub mod client;
pub mod disk;
pub mod http;
pub mod keyring;
pub mod metrics;
pub mod pull_secrets;
pub mod resolver;
pub mod serve;
pub mod source;

pub use client::{LookupError, RegistryClient};
pub use http::Limits;
pub use keyring::{Credential, Credentials, Keyring};
pub use metrics::RegistryMetrics;
pub use resolver::{Resolver, Settings};
