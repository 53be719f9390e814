//! `winlint lsp` with a real client: Debian's Neovim, headless, with its built-in LSP client
//! (`tests/lsp_neovim/session.lua`) opens a Windows pod without an OS selector, reads winlint's
//! diagnostics, applies the WIN001 quick fix as a user would (a workspace edit on the buffer,
//! sent back as didChange) and reads the diagnostics again. Without `nvim` (Debian package
//! `neovim`) the test skips locally and fails under CI=true (.ci/run installs it).

mod cli_support;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use cli_support::ci_tool;
use serde_json::Value;

const POD: &str = include_str!("../testdata/lsp/windows-pod.yaml");

fn neovim_shows_the_findings_and_applies_a_quick_fix() {
    let Some(nvim) = ci_tool(
        "WINLINT_NVIM",
        &["nvim"],
        &["--version"],
        "Neovim (Debian package neovim: apt-get install neovim)",
    ) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join(".git")).unwrap();
    let file = dir.path().join("pod.yaml");
    std::fs::write(&file, POD).unwrap();
    let out = dir.path().join("result.json");
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/lsp_neovim/session.lua");
    let mut child = Command::new(nvim)
        .args(["--headless", "-u", "NONE", "-i", "NONE", "-n", "-c"])
        .arg(format!("luafile {script}"))
        .env("WINLINT_BIN", env!("CARGO_BIN_EXE_winlint"))
        .env("LSP_FILE", &file)
        .env("LSP_OUT", &out)
        .env("XDG_STATE_HOME", dir.path())
        .env("XDG_DATA_HOME", dir.path())
        .current_dir(dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("nvim starts");
    // The script waits at most 60 s per step and then quits; past this, Neovim hangs.
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(300) {
            let _ = child.kill();
            panic!("nvim did not quit");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let seen = std::fs::read_to_string(&out).expect("the script's result");
    let r: Value = serde_json::from_str(&seen).expect("JSON");
    assert_eq!(r["error"], "", "{r:#}");
    let before: Vec<&str> = (r["before"].as_array().unwrap().iter())
        .map(|c| c.as_str().unwrap())
        .collect();
    // No winlint.yaml: the default target, its assumed os=windows taint (WIN007) included.
    assert_eq!(before, ["WIN001", "WIN003", "WIN007"], "{r:#}");
    assert!(
        r["applied"].as_str().unwrap().starts_with("WIN001"),
        "{r:#}"
    );
    let after: Vec<&str> = (r["after"].as_array().unwrap().iter())
        .map(|c| c.as_str().unwrap())
        .collect();
    assert!(
        !after.contains(&"WIN001") && after.contains(&"WIN003"),
        "{r:#}"
    );
    let text = r["text"].as_str().unwrap();
    assert!(
        text.contains("nodeSelector:\n    kubernetes.io/os: windows"),
        "{text}"
    );
}

/// The tests (libtest-mimic: a test that lacks an outside tool is reported ignored, with how
/// to get it; tests/skip_support).
fn main() {
    use cli_support::skip_support::{run, test};
    run(vec![test(
        "neovim_shows_the_findings_and_applies_a_quick_fix",
        neovim_shows_the_findings_and_applies_a_quick_fix,
    )]);
}
