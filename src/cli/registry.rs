//! `--registry`: the CLI looks its images up before linting (issue 18). Off by default (a
//! pre-commit hook must not need a network); facts by digest are kept on disk between runs
//! (`--registry-cache`, default `$XDG_CACHE_HOME/winlint/registry`), so a rerun costs one HEAD
//! per tag. Credentials come from a docker config (`--registry-config`, default the user's);
//! a credential helper it names is reported, never run.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;

use clap::Args;

use crate::model::context::ImageFactsSource;
use crate::registry::source::resolve_all;
use crate::registry::{
    Credentials, Keyring, Limits, RegistryClient, RegistryMetrics, Resolver, Settings,
};

#[derive(Args, Debug, Default, Clone)]
pub struct RegistryArgs {
    /// Look each image up in its registry (platforms and Windows builds of its manifest
    /// list) instead of judging it by its name only.
    #[arg(long)]
    pub registry: bool,
    /// Docker config with registry credentials (`auths`); default `$DOCKER_CONFIG/config.json`
    /// or ~/.docker/config.json. Credential helpers are never run.
    #[arg(long, value_name = "FILE", requires = "registry")]
    pub registry_config: Option<PathBuf>,
    /// Where facts are kept by digest between runs; default $XDG_CACHE_HOME/winlint/registry.
    #[arg(long, value_name = "DIR", requires = "registry")]
    pub registry_cache: Option<PathBuf>,
    /// Tests only: read every image from this loopback registry (`127.0.0.1:PORT`), repository
    /// `<registry>/<repository>` (tests/realworld_registry.rs resolves the corpus this way).
    #[arg(long, value_name = "ADDR", requires = "registry", hide = true)]
    pub registry_mirror: Option<String>,
}

/// Look `references` up. The notes say what could not be looked up (the linter then judges
/// those images by their names) and which credential helpers were not run.
pub fn image_facts(
    args: &RegistryArgs,
    references: &BTreeSet<String>,
) -> Result<(Arc<dyn ImageFactsSource>, Vec<String>), String> {
    let mut notes = Vec::new();
    let keyring = match &args.registry_config {
        Some(p) => Keyring::from_file(p).map_err(|e| format!("--registry-config {e}"))?,
        None => match Keyring::default_file().filter(|p| p.is_file()) {
            Some(p) => Keyring::from_file(&p).map_err(|e| e.to_string())?,
            None => Keyring::default(),
        },
    };
    for h in &keyring.helpers {
        notes.push(format!(
            "registry: the docker config names a credential helper ({h}); winlint never runs one"
        ));
    }
    let settings = Settings {
        disk: args
            .registry_cache
            .clone()
            .or_else(crate::registry::disk::default_dir),
        ..Settings::default()
    };
    let mut client = RegistryClient::new(Limits::default(), Credentials::new(keyring));
    if let Some(m) = &args.registry_mirror {
        client = client.with_mirror(m)?;
    }
    let resolver = Resolver::new(client, settings, RegistryMetrics::default());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("registry: cannot start a runtime: {e}"))?;
    let (facts, failed) = rt.block_on(resolve_all(&resolver, references));
    for (r, e) in failed {
        notes.push(format!("registry: {r}: {e} (judged by its name)"));
    }
    Ok((Arc::new(facts), notes))
}

/// With `--registry`, look `references` up and hand the facts to `cx` (notes on stderr); an
/// unusable `--registry-config` is the error.
pub fn attach(
    args: &RegistryArgs,
    references: &BTreeSet<String>,
    cx: &mut crate::model::Context,
) -> Result<(), String> {
    if !args.registry {
        return Ok(());
    }
    let (facts, notes) = image_facts(args, references)?;
    for n in notes {
        eprintln!("winlint: {n}");
    }
    cx.images = Some(facts);
    Ok(())
}
