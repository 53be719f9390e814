//! `--config` reloaded without a restart (issue 29 item 3): the chart mounts its ConfigMap as a
//! volume, and `helm upgrade` (or `kubectl edit`) changes the file under the running pods.
//!
//! The file is polled as the serving certificate is ([`super::poll`]: the kubelet swaps a
//! `..data` symlink). New content is parsed and validated first, exactly as at start; a file
//! that does not parse or validate keeps the configuration in force, and says why (file and
//! line), counted in `winlint_config_reload_total{result="error"}`, once per content, and
//! `winlint_config_last_reload_successful` is 0 until a valid content is in force. Valid
//! content becomes a new evaluation state through [`AppState::apply_config`], the path the
//! cluster facts take, and the enforcement in force is logged with the file's SHA-256.
//!
//! `registry:` is set up at start (lookups, caches, the pull secrets' reader and its RBAC):
//! a change there is logged and kept for the next start, the rest of the file applies.

use std::path::Path;
use std::sync::Arc;

use tokio::sync::watch;

use crate::config::{Config, ConfigError};

use super::poll::{Seen, content_hash, spawn_poll};
use super::state::LoadedConfig;
use super::{AppState, ServeArgs, ServeError, secs};

/// `--config` (or the built-in defaults), and the content hash the reload compares with.
pub(super) fn load(path: Option<&Path>) -> Result<(LoadedConfig, u64), ServeError> {
    let Some(path) = path else {
        return Ok((LoadedConfig::default(), 0));
    };
    let bytes = std::fs::read(path).map_err(|source| ServeError::Io {
        what: format!("--config {}", path.display()),
        source,
    })?;
    Ok((parse(&bytes, path)?, content_hash(&[&bytes])))
}

/// A configuration file's bytes, parsed and validated as at start.
fn parse(bytes: &[u8], path: &Path) -> Result<LoadedConfig, ConfigError> {
    let name = path.display().to_string();
    let text = std::str::from_utf8(bytes).map_err(|e| ConfigError::Syntax {
        file: name.clone(),
        line: 1 + bytes[..e.valid_up_to()]
            .iter()
            .filter(|b| **b == b'\n')
            .count(),
        message: "not UTF-8".into(),
    })?;
    Ok(LoadedConfig {
        config: Config::from_yaml(text, &name)?,
        path: Some(path.to_path_buf()),
        sha256: Some(crate::model::digest::sha256_hex(&[bytes])),
    })
}

/// Poll `--config` every `--config-reload-interval` and put each valid new content in force.
pub(super) fn spawn(
    args: &ServeArgs,
    state: Arc<AppState>,
    shutdown: watch::Receiver<bool>,
    hash: u64,
) {
    let Some(path) = args.config.clone() else {
        return;
    };
    spawn_poll(
        vec![path.clone()],
        secs(args.config_reload_interval),
        shutdown,
        hash,
        move |files| {
            reload(&state, &files[0], &path);
            Seen::Settled
        },
    );
}

/// One changed content: in force when valid, else reported and the old one kept.
fn reload(state: &AppState, bytes: &[u8], path: &Path) {
    let count = |result: &str| {
        state
            .metrics
            .config_reloads
            .get_or_create(&vec![("result".into(), result.into())])
            .inc();
    };
    let mut loaded = match parse(bytes, path) {
        Ok(l) => l,
        Err(e) => {
            count("error");
            state.metrics.config_last_reload_ok.set(0);
            tracing::warn!(
                uid = "",
                config = %path.display(),
                "configuration not reloaded, keeping the one in force ({}): {e}",
                state.evaluation().config.source()
            );
            return;
        }
    };
    let in_force = &state.evaluation().config.config.policy.registry;
    if &loaded.config.policy.registry != in_force {
        tracing::warn!(
            uid = "",
            config = %path.display(),
            "registry: changed in the file; registry settings are set up at start, so the \
             change takes effect when the pods restart (the rest of the file is in force now)"
        );
        loaded.config.policy.registry = in_force.clone();
    }
    state.apply_config(Arc::new(loaded));
    count("ok");
    state.metrics.config_last_reload_ok.set(1);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_names_the_file_and_line_and_hashes_the_bytes() {
        let p = Path::new("/config/winlint.yaml");
        let l = parse(b"webhook:\n  enforcement: warn\n", p).unwrap();
        assert_eq!(
            l.config.policy.enforcement,
            crate::config::Enforcement::Warn
        );
        // What `sha256sum` prints for the same bytes.
        assert_eq!(
            l.sha256.as_deref(),
            Some("65e7c24b507bb2113f1dbf360551e8231a8b2fb29b0c4f68be968ba37adcbeeb")
        );
        assert_eq!(l.source(), "/config/winlint.yaml (sha256 65e7c24b507b)");
        let e = parse(b"webhook:\n  enforcement: [\n", p).unwrap_err();
        assert!(e.to_string().starts_with("/config/winlint.yaml:"), "{e}");
        let e = parse(b"a: 1\n\xff\n", p).unwrap_err().to_string();
        assert_eq!(e, "/config/winlint.yaml:2: not UTF-8");
    }
}
