//! A closed stdout (`winlint … | head`) and a Ctrl-C during `--fix` (src/process.rs).
//!
//! The closed reader is deterministic: the read end of the pipe is closed before winlint starts,
//! so its first write to stdout fails with EPIPE, whatever the size of the output.

mod cli_support;

use std::path::Path;
use std::process::{Command, Stdio};

use cli_support::{bin, root};

/// Run winlint with a stdout whose reader is already gone; returns (exit code, stderr).
fn with_closed_stdout(args: &[&str], stdin: Option<&[u8]>) -> (Option<i32>, String) {
    #[allow(clippy::incompatible_msrv)] // tests run on the CI toolchain (1.95)
    let (reader, writer) = std::io::pipe().expect("pipe");
    drop(reader);
    let mut child = Command::new(bin())
        .args(args)
        .current_dir(root())
        .env("NO_COLOR", "1")
        .env("RUST_BACKTRACE", "1")
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(writer)
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn winlint");
    if let Some(bytes) = stdin {
        use std::io::Write;
        let mut pipe = child.stdin.take().expect("stdin");
        pipe.write_all(bytes).expect("write stdin");
    }
    let out = child.wait_with_output().expect("wait");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn informational_commands_end_quietly_with_status_0() {
    for args in [
        &["explain", "WIN403"][..],
        &["explain", "env-name-invalid"],
        &["rules"],
        &["rules", "-o", "json"],
        &["rules", "-o", "markdown"],
        &["manifests"],
        &["--help"],
        &["--version"],
    ] {
        let (code, stderr) = with_closed_stdout(args, None);
        assert_eq!(code, Some(0), "winlint {args:?}: {stderr}");
        assert_eq!(stderr, "", "winlint {args:?} must be quiet");
    }
}

#[test]
fn a_lint_keeps_its_verdict_when_the_reader_goes_away() {
    // testdata/examples holds error findings (exit 1); windows-good.yaml is clean (exit 0).
    for (args, want) in [
        (&["testdata/examples/"][..], 1),
        (&["-o", "json", "testdata/examples/"], 1),
        (&["-o", "sarif", "testdata/examples/"], 1),
        (&["-o", "github", "testdata/examples/"], 1),
        (&["-o", "codequality", "testdata/examples/"], 1),
        (&["--diff", "testdata/examples/"], 1),
        (&["testdata/examples/windows-good.yaml"], 0),
        (&["testdata/cli/bad/"], 2),
    ] {
        let (code, stderr) = with_closed_stdout(args, None);
        assert_eq!(code, Some(want), "winlint {args:?}: {stderr}");
        assert_eq!(stderr, "", "winlint {args:?} must be quiet");
    }
}

#[test]
fn stdin_fix_with_a_closed_stdout_still_reports_on_stderr() {
    let input = std::fs::read(root().join("testdata/examples/iis-deployment.yaml")).unwrap();
    let (code, stderr) = with_closed_stdout(&["--fix", "-"], Some(&input));
    assert_eq!(code, Some(1), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(
        stderr.contains("WIN502"),
        "the report goes to stderr: {stderr}"
    );
}

/// Files in `dir` other than `keep`.
fn strays(dir: &Path, keep: &str) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != keep)
        .collect()
}

/// A SIGINT raised between writing the temporary file and renaming it (the hook in
/// `cli::write`, `src/cli/write.rs`) is held until the rename is done: the file is wholly fixed, no temporary
/// file is left, and the process still ends on the signal.
#[test]
fn ctrl_c_between_write_and_rename_leaves_the_whole_file_and_no_temp_file() {
    use std::os::unix::process::ExitStatusExt;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("iis.yaml");
    let original = std::fs::read(root().join("testdata/examples/iis-deployment.yaml")).unwrap();
    std::fs::write(&file, &original).unwrap();
    // The expected result: the same fix without a signal, in another directory.
    let reference = tempfile::tempdir().unwrap();
    let ref_file = reference.path().join("iis.yaml");
    std::fs::write(&ref_file, &original).unwrap();
    let status = Command::new(bin())
        .args(["--fix", ref_file.to_str().unwrap()])
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(1));
    let fixed = std::fs::read_to_string(&ref_file).unwrap();
    assert_ne!(
        fixed.as_bytes(),
        original,
        "the example has fixable findings"
    );

    let mut cmd = Command::new(bin());
    cmd.args(["--fix", file.to_str().unwrap()])
        .env("WINLINT_TEST_SIGINT_BEFORE_RENAME", "1");
    sigint_default(&mut cmd);
    let out = cmd.output().unwrap();
    assert_eq!(
        out.status.signal(),
        Some(libc_sigint()),
        "the process ends on the signal: {out:?}"
    );
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        fixed,
        "the whole fix landed"
    );
    assert_eq!(strays(dir.path(), "iis.yaml"), Vec::<String>::new());
}

fn libc_sigint() -> i32 {
    libc::SIGINT
}

/// The child starts with SIGINT at its default action and unblocked, whatever this test process
/// inherited: a shell starts a background job (`cargo test &`) with SIGINT ignored, and exec
/// keeps an ignored disposition and the signal mask, so the raised SIGINT would then do nothing
/// and the test would depend on how it was started. winlint itself rightly keeps an inherited
/// `SIG_IGN` (a background `winlint --fix` must not die on the terminal's Ctrl-C).
fn sigint_default(cmd: &mut Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: only signal(2), sigemptyset, sigaddset and sigprocmask between fork and exec, all
    // async-signal-safe; nothing is allocated.
    unsafe {
        cmd.pre_exec(|| {
            if libc::signal(libc::SIGINT, libc::SIG_DFL) == libc::SIG_ERR {
                return Err(std::io::Error::last_os_error());
            }
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, libc::SIGINT);
            if libc::sigprocmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut()) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}
