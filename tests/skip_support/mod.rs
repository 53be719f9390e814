//! Tests that need an outside tool (envtest's kube-apiserver and etcd, kube-scheduler, helm,
//! kubectl, docker-registry and skopeo, Chromium, …) are reported as **ignored**, with the reason
//! and how to get the tool, when it is missing, and never as `ok`; under `CI=true` a missing
//! tool fails the test (`.ci/run` installs them all).
//!
//! libtest has no way for a running test to say "skipped" on stable Rust, so the test binaries
//! that hold such tests run on [libtest-mimic](https://docs.rs/libtest-mimic) instead
//! (`harness = false` in Cargo.toml): the same output, filters and flags as `cargo test`, and a
//! test can end as ignored at run time (`Completion::Ignored`). Such a file has no `#[test]`
//! attribute (it would compile to nothing: `tests/architecture.rs` refuses it); its `main` lists
//! its tests:
//!
//! ```ignore
//! fn main() {
//!     k8s_support::skip_support::run(vec![
//!         test("a_plain_test", a_plain_test),
//!         test("an_async_test", || multi_thread(an_async_test())),
//!         test("a_measurement", a_measurement).with_ignored_flag(true),
//!     ]);
//! }
//! ```
//!
//! The tool helpers (`k8s_support::cluster`, `cli_support::ci_tool`, `registry_support::tools`,
//! …) call [`skip`]: under that harness it unwinds to the test's runner with a marked payload
//! (`resume_unwind`: no panic message), which reports the test as ignored with the reason; a
//! test file still on libtest gets the old behaviour (a message, `None`, the test returns).
//! After the run, each binary prints one line per reason: `N skipped: …; run … to get it`.
//!
//! This file is included by several support modules (`#[path]`): the copies share nothing but
//! the payload's marker and one environment variable, so it does not matter which copy a test
//! file's `main` calls.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::sync::Mutex;

pub use libtest_mimic::Trial;

/// The marker of a skip's unwinding payload (a `String`).
const MARK: &str = "winlint-test-skipped: ";
/// Set by [`run`]: the tests of this process run under the skipping harness.
const HARNESS_VAR: &str = "WINLINT_TEST_SKIPPING_HARNESS";

/// How to get the tools, from a user's own checkout (scripts/test-tools.sh).
pub const GET_ENVTEST: &str = "run `eval \"$(scripts/test-tools.sh envtest)\"` to get kube-apiserver, etcd and \
     kubectl 1.32 into target/k8s-assets (or point KUBEBUILDER_ASSETS at setup-envtest's folder)";
pub const GET_HELM: &str = "run `eval \"$(scripts/test-tools.sh helm)\"` to get helm and kubectl into \
     target/ci-tools (or set WINLINT_HELM / WINLINT_KUBECTL)";
pub const GET_APT: &str = "run `scripts/test-tools.sh apt` (apt-get install docker-registry skopeo \
     apache2-utils chromium util-linux)";

static SKIPPED: Mutex<BTreeMap<String, usize>> = Mutex::new(BTreeMap::new());

/// `CI=true` (or `1`): a missing tool is a failure.
pub fn ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true" || v == "1")
}

/// This test cannot run: `why` (what is missing), `get` (how to get it). Under `CI=true` a
/// panic; under the skipping harness the test ends here, reported as ignored; else (a test
/// file still on libtest) a message and `None`, for the test to return.
pub fn skip<T>(why: &str, get: &str) -> Option<T> {
    assert!(
        !ci(),
        "CI=true and this test cannot run: {why} ({get}; .ci/run installs it)"
    );
    let reason = format!("{why}; {get}");
    if std::env::var_os(HARNESS_VAR).is_some() {
        std::panic::resume_unwind(Box::new(format!("{MARK}{reason}")));
    }
    eprintln!("skipping: {reason}");
    None
}

/// One test: `f` runs; a [`skip`] inside it makes the test ignored, with the reason.
pub fn test(name: &'static str, f: fn()) -> Trial {
    Trial::ignorable_test(name, move || match std::panic::catch_unwind(f) {
        Ok(()) => Ok(libtest_mimic::Completion::Completed),
        Err(payload) => match payload
            .downcast_ref::<String>()
            .and_then(|s| s.strip_prefix(MARK))
        {
            Some(reason) => {
                *SKIPPED
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .entry(reason.to_string())
                    .or_default() += 1;
                Ok(libtest_mimic::Completion::ignored_with(reason))
            }
            // A real failure: libtest-mimic reports it (the panic hook has printed it).
            None => std::panic::resume_unwind(payload),
        },
    })
}

/// The body of an async test on a multi-threaded runtime of 2 workers (what
/// `#[tokio::test(flavor = "multi_thread", worker_threads = 2)]` made).
pub fn multi_thread(f: impl std::future::Future<Output = ()>) {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime")
        .block_on(f)
}

/// The test binary's `main`: runs `tests` with libtest's arguments and output, then one line
/// per skip reason with its count; exits with libtest's status.
pub fn run(tests: Vec<Trial>) -> ! {
    // SAFETY: the first thing `main` does, before any other thread exists.
    unsafe { std::env::set_var(HARNESS_VAR, "1") };
    let args = libtest_mimic::Arguments::from_args();
    let conclusion = libtest_mimic::run(&args, tests);
    for (reason, n) in SKIPPED.lock().unwrap_or_else(|e| e.into_inner()).iter() {
        println!("{n} skipped: {reason}");
    }
    conclusion.exit()
}
