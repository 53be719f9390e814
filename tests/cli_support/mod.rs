//! Shared helpers of the CLI integration tests (`tests/cli*.rs`): run the real `winlint` binary
//! with `NO_COLOR=1`, a kill timeout (a hang fails the test instead of blocking CI) and optionally
//! an address-space limit (unbounded memory fails the test instead of swapping the runner), and
//! find lines and columns in fixture text so location assertions are computed, not copied.

#![allow(dead_code)]

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

// One file for every support module: a test binary may load it more than once (the copies
// share nothing that matters: tests/skip_support).
#[allow(clippy::duplicate_mod)]
#[path = "../skip_support/mod.rs"]
pub mod skip_support;

/// Generous upper bound on one run; never an assertion about speed, only a guard against hangs.
pub const KILL_AFTER: Duration = Duration::from_secs(120);

pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_winlint")
}

/// The crate root (where `testdata/` is).
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A finished run.
#[derive(Debug)]
pub struct Out {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
    /// Raw stdout, for byte-level checks (escape codes).
    pub stdout_bytes: Vec<u8>,
}

impl Out {
    /// The exit code; panics (with the output) when the process died from a signal.
    pub fn code(&self) -> i32 {
        match self.status.code() {
            Some(c) => c,
            None => panic!(
                "winlint was killed by a signal ({:?})\n{}",
                self.status, self
            ),
        }
    }

    /// Parse stdout as JSON.
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e})\n{self}"))
    }

    /// The process ended by itself with an exit code and did not panic.
    pub fn assert_clean_exit(&self) {
        let _ = self.code();
        assert!(
            !self.stderr.contains("panicked") && !self.stdout.contains("panicked"),
            "winlint panicked\n{self}"
        );
        assert!(
            !self.stderr.contains("memory allocation") && !self.stderr.contains("stack overflow"),
            "winlint ran out of memory or stack\n{self}"
        );
    }

    pub fn assert_code(&self, want: i32) {
        self.assert_clean_exit();
        assert_eq!(self.code(), want, "unexpected exit code\n{self}");
    }
}

impl std::fmt::Display for Out {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let cut = |s: &str| -> String {
            if s.len() > 8000 {
                let mut end = 8000;
                while !s.is_char_boundary(end) {
                    end -= 1;
                }
                format!("{}… ({} bytes)", &s[..end], s.len())
            } else {
                s.to_string()
            }
        };
        write!(
            f,
            "--- status: {:?}\n--- stdout:\n{}\n--- stderr:\n{}",
            self.status,
            cut(&self.stdout),
            cut(&self.stderr)
        )
    }
}

/// One invocation of the binary.
#[derive(Default, Clone)]
pub struct Run {
    args: Vec<String>,
    stdin: Option<Vec<u8>>,
    cwd: Option<PathBuf>,
    env: Vec<(String, String)>,
    env_remove: Vec<String>,
    mem_limit_mib: Option<u64>,
    kill_after: Option<Duration>,
    via: Vec<String>,
    program: Option<Vec<String>>,
}

impl Run {
    pub fn new<S: AsRef<str>>(args: &[S]) -> Self {
        Run {
            args: args.iter().map(|s| s.as_ref().to_string()).collect(),
            ..Run::default()
        }
    }
    pub fn arg(mut self, a: impl AsRef<str>) -> Self {
        self.args.push(a.as_ref().to_string());
        self
    }
    pub fn stdin(mut self, bytes: impl Into<Vec<u8>>) -> Self {
        self.stdin = Some(bytes.into());
        self
    }
    pub fn cwd(mut self, dir: impl AsRef<Path>) -> Self {
        self.cwd = Some(dir.as_ref().to_path_buf());
        self
    }
    pub fn env(mut self, k: &str, v: &str) -> Self {
        self.env.push((k.into(), v.into()));
        self
    }
    /// Run without `key` in the environment.
    pub fn env_remove(mut self, key: &str) -> Self {
        self.env_remove.push(key.into());
        self
    }
    /// Run without `NO_COLOR` in the environment.
    pub fn without_no_color(mut self) -> Self {
        self.env_remove.push("NO_COLOR".into());
        self
    }
    /// Cap the address space (`ulimit -v`): an unbounded allocation fails the run.
    pub fn mem_limit_mib(mut self, mib: u64) -> Self {
        self.mem_limit_mib = Some(mib);
        self
    }

    /// Run the binary through a wrapper command (e.g. `setpriv --reuid=65534 …`).
    pub fn via<S: AsRef<str>>(mut self, wrapper: &[S]) -> Self {
        self.via = wrapper.iter().map(|s| s.as_ref().to_string()).collect();
        self
    }

    /// Run this command line instead of the binary (the binary's path is `bin()`), e.g.
    /// `script` to give winlint a terminal.
    pub fn program<S: AsRef<str>>(mut self, argv: &[S]) -> Self {
        self.program = Some(argv.iter().map(|s| s.as_ref().to_string()).collect());
        self
    }

    /// A longer kill timeout than [`KILL_AFTER`] (for the 50 MB input on a debug build).
    pub fn kill_after(mut self, d: Duration) -> Self {
        self.kill_after = Some(d);
        self
    }

    pub fn run(self) -> Out {
        let kill_after = self.kill_after.unwrap_or(KILL_AFTER);
        let argv: Vec<String> = match &self.program {
            Some(p) => p.clone(),
            None => {
                let mut v = self.via.clone();
                v.push(bin().to_string());
                v
            }
        };
        let mut cmd = match self.mem_limit_mib {
            Some(mib) => {
                let mut c = Command::new("sh");
                c.arg("-c")
                    .arg(format!("ulimit -v {} && exec \"$0\" \"$@\"", mib * 1024))
                    .args(&argv);
                c
            }
            None => {
                let mut c = Command::new(&argv[0]);
                c.args(&argv[1..]);
                c
            }
        };
        cmd.args(&self.args)
            .current_dir(self.cwd.unwrap_or_else(root))
            .env("NO_COLOR", "1")
            .env_remove("CLICOLOR_FORCE")
            .env("RUST_BACKTRACE", "0")
            .stdin(if self.stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for k in &self.env_remove {
            cmd.env_remove(k);
        }
        for (k, v) in &self.env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().expect("spawn winlint");
        let writer = self.stdin.map(|bytes| {
            let mut pipe = child.stdin.take().expect("stdin pipe");
            std::thread::spawn(move || {
                // The process may stop reading (e.g. on a usage error): ignore broken pipes.
                let _ = pipe.write_all(&bytes);
            })
        });
        let mut out_pipe = child.stdout.take().expect("stdout pipe");
        let mut err_pipe = child.stderr.take().expect("stderr pipe");
        let out_t = std::thread::spawn(move || {
            let mut v = Vec::new();
            let _ = out_pipe.read_to_end(&mut v);
            v
        });
        let err_t = std::thread::spawn(move || {
            let mut v = Vec::new();
            let _ = err_pipe.read_to_end(&mut v);
            v
        });
        let start = Instant::now();
        let status = loop {
            if let Some(s) = child.try_wait().expect("wait for winlint") {
                break s;
            }
            if start.elapsed() > kill_after {
                let _ = child.kill();
                let _ = child.wait();
                panic!(
                    "winlint {:?} did not finish within {kill_after:?}: hang",
                    self.args
                );
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        if let Some(w) = writer {
            let _ = w.join();
        }
        let stdout_bytes = out_t.join().expect("stdout reader");
        let stderr = String::from_utf8_lossy(&err_t.join().expect("stderr reader")).into_owned();
        Out {
            status,
            stdout: String::from_utf8_lossy(&stdout_bytes).into_owned(),
            stderr,
            stdout_bytes,
        }
    }
}

/// `winlint ARGS` in the crate root.
pub fn winlint<S: AsRef<str>>(args: &[S]) -> Out {
    Run::new(args).run()
}

/// `winlint ARGS` with `input` on stdin.
pub fn winlint_stdin<S: AsRef<str>>(args: &[S], input: impl Into<Vec<u8>>) -> Out {
    Run::new(args).stdin(input).run()
}

/// An external tool for a test: `$env` when set, else the first of `names` that runs `probe`.
/// `None` (the test skips, with a message) when there is none, but under `CI=true`, where a
/// missing tool fails the test.
pub fn ci_tool(env: &str, names: &[&str], probe: &[&str], what: &str) -> Option<String> {
    let candidates: Vec<String> = match std::env::var(env) {
        Ok(p) if !p.is_empty() => vec![p],
        _ => names.iter().map(|s| s.to_string()).collect(),
    };
    for c in candidates {
        let ok = std::process::Command::new(&c)
            .args(probe)
            .output()
            .is_ok_and(|o| o.status.success());
        if ok {
            return Some(c);
        }
    }
    skip_support::skip(
        &format!("{what} not found (set {env} or put it on PATH)"),
        how_to_get(env),
    )
}

/// How a user gets the tool `env` names, from their own checkout.
fn how_to_get(env: &str) -> &'static str {
    match env {
        "WINLINT_HELM" | "WINLINT_KUBECTL" | "WINLINT_KUSTOMIZE" => skip_support::GET_HELM,
        _ => skip_support::GET_APT,
    }
}

/// Compare `actual` with the golden file `rel` (under the crate root), or write it when
/// `WINLINT_BLESS` is set.
pub fn golden(rel: &str, actual: &str) {
    let path = root().join(rel);
    if std::env::var_os("WINLINT_BLESS").is_some() {
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (run with WINLINT_BLESS=1)", path.display()));
    assert!(
        expected == actual,
        "{} differs (WINLINT_BLESS=1 rewrites it):\n{}",
        path.display(),
        similar::TextDiff::from_lines(expected.as_str(), actual).unified_diff()
    );
}

/// Read a file under the crate root.
pub fn fixture(rel: &str) -> String {
    std::fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// 1-based number of the only line of `text` containing `needle` (panics if 0 or several).
pub fn line_of(text: &str, needle: &str) -> usize {
    let hits: Vec<usize> = text
        .lines()
        .enumerate()
        .filter(|(_, l)| l.contains(needle))
        .map(|(i, _)| i + 1)
        .collect();
    assert_eq!(hits.len(), 1, "{needle:?} must occur on exactly one line");
    hits[0]
}

/// 1-based number of the `nth` (0-based) line containing `needle`.
pub fn nth_line_of(text: &str, needle: &str, nth: usize) -> usize {
    text.lines()
        .enumerate()
        .filter(|(_, l)| l.contains(needle))
        .map(|(i, _)| i + 1)
        .nth(nth)
        .unwrap_or_else(|| panic!("{needle:?} occurs fewer than {} times", nth + 1))
}

/// 1-based character column of `needle` on line `line` (1-based) of `text`.
pub fn column_of(text: &str, line: usize, needle: &str) -> usize {
    let l = text.lines().nth(line - 1).expect("line exists");
    let byte = l
        .find(needle)
        .unwrap_or_else(|| panic!("{needle:?} not on line {line}: {l:?}"));
    l[..byte].chars().count() + 1
}

/// The findings of a JSON report.
pub fn findings(report: &Value) -> &Vec<Value> {
    report["findings"].as_array().expect("findings array")
}

/// `rule pointer` of every finding, for messages.
pub fn brief(report: &Value) -> String {
    findings(report)
        .iter()
        .map(|f| {
            format!(
                "{}:{}:{} {} {} {}",
                f["file"].as_str().unwrap_or("?"),
                f["line"],
                f["column"],
                f["rule"].as_str().unwrap_or("?"),
                f["pointer"].as_str().unwrap_or("?"),
                f["message"].as_str().unwrap_or("?")
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The only finding of `rule` whose pointer ends with `suffix`.
pub fn the_finding<'a>(report: &'a Value, rule: &str, pointer: &str) -> &'a Value {
    let hits: Vec<&Value> = findings(report)
        .iter()
        .filter(|f| f["rule"] == rule && f["pointer"] == pointer)
        .collect();
    assert_eq!(
        hits.len(),
        1,
        "expected one {rule} at {pointer}; findings:\n{}",
        brief(report)
    );
    hits[0]
}

/// Whether the process runs as root (file permissions then do not stop writes).
pub fn is_root() -> bool {
    // No libc dependency: ask the kernel through procfs.
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .and_then(|l| l.split_whitespace().nth(2).map(|e| e == "0"))
        })
        .unwrap_or(false)
}
