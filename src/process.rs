//! How the process meets its surroundings: a reader that stops reading (`winlint … | head`)
//! and a signal (Ctrl-C) while `--fix` replaces a file.
//!
//! **Closed stdout.** Rust ignores `SIGPIPE`, so a write to a closed pipe is an
//! [`std::io::ErrorKind::BrokenPipe`] error (and `print!` panics on it). winlint writes through
//! [`finish_output`]: a broken pipe ends the output quietly, as ripgrep and bat do, with the exit
//! status the command would have had anyway. For `rules`, `explain` and `manifests` that is 0;
//! for a lint it is still the verdict on the manifests (0, 1 or 2), which every input was linted
//! for before the report was written: `winlint k8s/ | head` under `set -o pipefail` fails
//! exactly when the manifests do.
//!
//! **Signals during a write.** `cli::write` (`--fix`) writes a temporary
//! file beside the target and renames it over the target. Between the two, a default-action
//! signal (Ctrl-C, `kill`) would end the process before the temporary file is removed: the
//! target is intact, but a stray `.tmpXXXXXX` stays behind. [`without_interruption`] holds
//! `SIGINT`, `SIGTERM`, `SIGHUP` and `SIGQUIT` blocked for that short section (create, write,
//! fsync, rename: no waiting on anything but the disk); a signal that arrives meanwhile stays
//! pending and takes effect the moment the section ends, with its default action. So the file is
//! either the old one or the whole new one, no temporary file is left, and the process still ends
//! on the signal (status 130 in a shell for Ctrl-C).

use std::io;

/// Exit codes: no error findings.
pub const EXIT_OK: i32 = 0;
/// Error findings (or warnings with `--fail-on warning`).
pub const EXIT_FINDINGS: i32 = 1;
/// Usage error, unreadable input, invalid YAML/JSON, an output that could not be written.
pub const EXIT_USAGE: i32 = 2;

/// The exit code for a command whose output was written with result `res`: `ok` when it was
/// written or the reader went away (quietly), [`EXIT_USAGE`] with a message for any
/// other write error (a full disk, a closed descriptor).
pub fn finish_output(res: io::Result<()>, ok: i32) -> i32 {
    match res {
        Ok(()) => ok,
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => ok,
        Err(e) => {
            eprintln!("winlint: cannot write output: {e}");
            EXIT_USAGE
        }
    }
}

/// Write `text` to stdout; a closed stdout is not an error (see [`finish_output`]).
pub fn print_stdout(text: &str) -> io::Result<()> {
    use io::Write;
    let mut out = io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}

/// The signals whose default action ends the process and that a user or a supervisor sends to
/// stop a run.
#[cfg(unix)]
const DEFERRED: [libc::c_int; 4] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT];

/// Run `f` with the [`DEFERRED`] signals blocked; a signal that arrives meanwhile is delivered
/// when `f` returns (and, with its default action, ends the process there).
#[cfg(unix)]
pub fn without_interruption<T>(f: impl FnOnce() -> T) -> T {
    // SAFETY: sigset_t is plain data, initialised by sigemptyset before use; pthread_sigmask
    // only changes this thread's signal mask and restores the previous one below.
    let old = unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for s in DEFERRED {
            libc::sigaddset(&mut set, s);
        }
        let mut old: libc::sigset_t = std::mem::zeroed();
        if libc::pthread_sigmask(libc::SIG_BLOCK, &set, &mut old) != 0 {
            None
        } else {
            Some(old)
        }
    };
    let out = f();
    if let Some(old) = old {
        // SAFETY: restores the mask saved above.
        unsafe {
            libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
        }
    }
    out
}

/// Test hook: with `WINLINT_TEST_SIGINT_BEFORE_RENAME` set, raise `SIGINT` at this point (between
/// writing the temporary file and renaming it), so that a test can check what a Ctrl-C at the
/// worst moment leaves behind. Does nothing otherwise.
#[cfg(unix)]
pub fn test_signal_before_rename() {
    if std::env::var_os("WINLINT_TEST_SIGINT_BEFORE_RENAME").is_some() {
        // SAFETY: raise has no memory-safety preconditions.
        unsafe {
            libc::raise(libc::SIGINT);
        }
    }
}

/// Windows has no signal mask: Ctrl-C runs a handler thread (Rust installs none, so the
/// console ends the process), so `f` runs as it is; what `--fix` writes is still a new file
/// renamed over the old one, never a half-written file.
#[cfg(not(unix))]
pub fn without_interruption<T>(f: impl FnOnce() -> T) -> T {
    f()
}

/// The Unix test hook's stand-in: there is no SIGINT to raise.
#[cfg(not(unix))]
pub fn test_signal_before_rename() {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broken_pipe_is_the_ok_status_and_other_errors_are_usage_errors() {
        assert_eq!(finish_output(Ok(()), 0), 0);
        assert_eq!(
            finish_output(Err(io::Error::from(io::ErrorKind::BrokenPipe)), 1),
            1
        );
        assert_eq!(
            finish_output(Err(io::Error::from(io::ErrorKind::StorageFull)), 0),
            EXIT_USAGE
        );
    }

    #[cfg(unix)]
    #[test]
    fn without_interruption_restores_the_mask() {
        let mask = || unsafe {
            let mut cur: libc::sigset_t = std::mem::zeroed();
            libc::pthread_sigmask(libc::SIG_BLOCK, std::ptr::null(), &mut cur);
            libc::sigismember(&cur, libc::SIGINT)
        };
        let before = mask();
        let inside = without_interruption(mask);
        assert_eq!(inside, 1, "SIGINT is blocked inside");
        assert_eq!(mask(), before, "the mask is restored");
    }
}
