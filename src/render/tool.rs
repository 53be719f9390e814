//! Running a rendering tool: found on PATH, run in a process group of its own, within a time
//! limit and an output cap, offline unless asked.
//!
//! * **Time.** A tool that runs longer than the limit is killed with everything it started (the
//!   whole process group): rendering a chart or an overlay takes well under a second.
//! * **Leftovers.** When the tool exits, its process group is killed too: a child it left behind
//!   holding its stdout would otherwise keep winlint waiting for the end of that output forever.
//! * **Output.** Its stdout is kept up to the cap (`--max-input-bytes`, like any input); one byte
//!   more and it is killed: a runaway template cannot balloon winlint. Its stderr (the message of
//!   a failure) is kept up to [`STDERR_CAP`] and the rest read and dropped.
//! * **Network.** Without `--allow-remote` the tool runs with its HTTP(S) proxies pointed at a
//!   closed local port and git restricted to local repositories, so a remote resource fails fast
//!   instead of being fetched (kustomizations naming one are refused before that, see
//!   `kustomize::render`).

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// The default of `--render-timeout`, in seconds.
pub const DEFAULT_TIME_LIMIT_SECS: u64 = 60;

/// Enough of a tool's stderr to say why it failed.
pub const STDERR_CAP: u64 = 64 << 10;

/// The environment of a tool run without network: every proxy variable HTTP clients (Go's
/// net/http in helm and kustomize, git's libcurl) read, pointed at port 9 of loopback (discard:
/// nothing listens, the connection is refused at once); git allowed its local transport only.
const OFFLINE_ENV: &[(&str, &str)] = &[
    ("HTTP_PROXY", "http://127.0.0.1:9"),
    ("HTTPS_PROXY", "http://127.0.0.1:9"),
    ("ALL_PROXY", "http://127.0.0.1:9"),
    ("http_proxy", "http://127.0.0.1:9"),
    ("https_proxy", "http://127.0.0.1:9"),
    ("all_proxy", "http://127.0.0.1:9"),
    ("GIT_ALLOW_PROTOCOL", "file"),
];

/// How a tool may run.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub time: Duration,
    /// Most bytes of stdout kept; more is an error.
    pub output: u64,
    /// Whether it may reach the network.
    pub network: bool,
}

/// `name` in a directory of `$PATH`, if it is an executable file there.
#[cfg(unix)]
pub fn on_path(name: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| {
            std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

/// `name.exe` (Windows runs programs by that suffix; helm and kubectl ship as .exe there) in a
/// directory of `%PATH%`.
#[cfg(not(unix))]
pub fn on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(format!("{name}.exe")))
        .find(|p| std::fs::metadata(p).is_ok_and(|m| m.is_file()))
}

/// What a tool run gave.
pub struct Ran {
    pub success: bool,
    pub stdout: Vec<u8>,
    pub stderr: String,
}

/// What a reader thread sends: which stream, its bytes, whether it passed its cap.
struct Drained {
    stdout: bool,
    bytes: Vec<u8>,
    over: bool,
}

/// Read `r` to its end keeping at most `cap` bytes. stdout stops one byte past the cap (the
/// tool is then killed); stderr is drained to its end.
fn reader(mut r: impl Read + Send + 'static, stdout: bool, cap: u64, tx: mpsc::Sender<Drained>) {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = (&mut r).take(cap.saturating_add(1)).read_to_end(&mut bytes);
        let over = bytes.len() as u64 > cap;
        if over && !stdout {
            bytes.truncate(cap as usize);
            let _ = std::io::copy(&mut r, &mut std::io::sink());
        }
        let _ = tx.send(Drained {
            stdout,
            bytes,
            over: over && stdout,
        });
    });
}

/// SIGKILL to every process of the group `pgid` (the tool and what it started).
#[cfg(unix)]
fn kill_group(pgid: u32) {
    // SAFETY: kill(2) with a negative pid signals a process group; no memory is involved.
    unsafe {
        libc::kill(-(pgid as libc::pid_t), libc::SIGKILL);
    }
}

/// Windows has no process groups to signal: `run` kills the tool itself (`Child::kill`,
/// TerminateProcess); what it started is not followed.
#[cfg(not(unix))]
fn kill_group(_pgid: u32) {}

/// Run `program args` in `cwd` (stdin closed) within `limits`. `Err`: it could not be started,
/// it was killed at the time limit, or it printed more than the cap.
pub fn run(
    program: &Path,
    args: &[String],
    cwd: Option<&Path>,
    limits: Limits,
) -> Result<Ran, String> {
    let mut cmd = Command::new(program);
    cmd.args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    if !limits.network {
        cmd.envs(OFFLINE_ENV.iter().copied())
            .env_remove("NO_PROXY")
            .env_remove("no_proxy");
    }
    if let Some(d) = cwd {
        cmd.current_dir(d);
    }
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", program.display()))?;
    let pgid = child.id();
    let (tx, rx) = mpsc::channel();
    reader(
        child.stdout.take().expect("piped stdout"),
        true,
        limits.output,
        tx.clone(),
    );
    reader(
        child.stderr.take().expect("piped stderr"),
        false,
        STDERR_CAP,
        tx,
    );
    let deadline = Instant::now() + limits.time;
    let (mut status, mut stdout, mut stderr) = (None, None, None);
    let stop = |child: &mut std::process::Child| {
        kill_group(pgid);
        let _ = child.kill();
        let _ = child.wait();
    };
    while status.is_none() || stdout.is_none() || stderr.is_none() {
        match rx.recv_timeout(Duration::from_millis(5)) {
            Ok(r) if r.over => {
                stop(&mut child);
                return Err(format!(
                    "{} printed more than {} bytes (--max-input-bytes) and was stopped",
                    program.display(),
                    limits.output
                ));
            }
            Ok(r) if r.stdout => stdout = Some(r.bytes),
            Ok(r) => stderr = Some(r.bytes),
            Err(_) => {}
        }
        if status.is_none() {
            match child.try_wait() {
                Ok(Some(s)) => {
                    // Whatever it left running (holding its output open, or not) goes with it.
                    kill_group(pgid);
                    status = Some(s);
                }
                Ok(None) => {}
                Err(e) => {
                    stop(&mut child);
                    return Err(format!("waiting for {}: {e}", program.display()));
                }
            }
        }
        if Instant::now() > deadline {
            stop(&mut child);
            return Err(format!(
                "{} did not finish within {} s and was stopped with the processes it started \
                 (--render-timeout)",
                program.display(),
                limits.time.as_secs()
            ));
        }
    }
    let (Some(status), Some(stdout), Some(stderr)) = (status, stdout, stderr) else {
        unreachable!("the loop ends when all three are here")
    };
    Ok(Ran {
        success: status.success(),
        stdout,
        stderr: String::from_utf8_lossy(&stderr).trim_end().to_string(),
    })
}

/// A local directory as an argument of a rendering tool: absolute (`./` before a relative one
/// when the working directory cannot be read). A path is a path: kustomize reads `http:/h:1/x`
/// or `github.com/o/r` as a URL or a repository before it looks at the disk, helm `oci:/x` as
/// a registry, and both a name starting with `-` as an option.
pub(super) fn local_arg(dir: &Path) -> String {
    match std::path::absolute(dir) {
        Ok(abs) => abs.display().to_string(),
        Err(_) if dir.is_relative() => format!("./{}", dir.display()),
        Err(_) => dir.display().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_local_directory_is_an_absolute_path() {
        let arg = local_arg(Path::new("http:/127.0.0.1:18081"));
        assert!(arg.starts_with('/'), "{arg}");
        assert!(arg.ends_with("/http:/127.0.0.1:18081"), "{arg}");
        assert!(local_arg(Path::new("-k")).starts_with('/'));
        assert_eq!(local_arg(Path::new("/k/overlay")), "/k/overlay");
    }

    fn sh(script: &str, limits: Limits) -> Result<Ran, String> {
        run(
            Path::new("/bin/sh"),
            &["-c".into(), script.into()],
            None,
            limits,
        )
    }

    const LIMITS: Limits = Limits {
        time: Duration::from_secs(30),
        output: 1 << 20,
        network: false,
    };

    #[test]
    fn output_and_status_are_kept() {
        let r = sh("echo out; echo err >&2; exit 3", LIMITS).unwrap();
        assert!(!r.success);
        assert_eq!(r.stdout, b"out\n");
        assert_eq!(r.stderr, "err");
    }

    #[test]
    fn a_child_left_holding_stdout_is_killed_with_the_tool() {
        let r = sh("echo out; sleep 600 & exit 0", LIMITS).unwrap();
        assert!(r.success);
        assert_eq!(r.stdout, b"out\n");
    }

    #[test]
    fn output_past_the_cap_stops_the_tool() {
        let e = sh("yes", LIMITS).err().unwrap();
        assert!(e.contains("printed more than 1048576 bytes"), "{e}");
    }

    #[test]
    fn the_network_is_off_unless_allowed() {
        let r = sh("echo $HTTPS_PROXY $GIT_ALLOW_PROTOCOL", LIMITS).unwrap();
        assert_eq!(r.stdout, b"http://127.0.0.1:9 file\n");
    }
}
