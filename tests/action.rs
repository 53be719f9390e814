//! The GitHub Action: action.yml and scripts/action.sh, run here as GitHub would run them (the
//! inputs as INPUT_* variables, GITHUB_OUTPUT and GITHUB_STEP_SUMMARY as files), with the
//! winlint under test instead of a cargo-installed one.

mod cli_support;
mod http_support;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use cli_support::{bin, root};
use http_support::FileServer;
use serde_json::Value;

struct Action {
    status: i32,
    stdout: String,
    stderr: String,
    outputs: BTreeMap<String, String>,
    summary: String,
}

fn action(sub: &str, env: &[(&str, &str)], cwd: &Path) -> Action {
    let tmp = tempfile::tempdir().unwrap();
    let output = tmp.path().join("output");
    let summary = tmp.path().join("summary");
    let mut cmd = Command::new("bash");
    cmd.arg(root().join("scripts/action.sh"))
        .arg(sub)
        .current_dir(cwd)
        .env("GITHUB_ACTION_PATH", root())
        .env("GITHUB_OUTPUT", &output)
        .env("GITHUB_STEP_SUMMARY", &summary)
        .env("RUNNER_OS", "Linux")
        .env("RUNNER_ARCH", "X64")
        .env("WINLINT_BIN", bin())
        .env("NO_COLOR", "1");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("run bash");
    let outputs = std::fs::read_to_string(&output)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    Action {
        status: out.status.code().expect("exit code"),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        outputs,
        summary: std::fs::read_to_string(&summary).unwrap_or_default(),
    }
}

#[test]
fn run_annotates_writes_sarif_and_outputs_and_fails_on_findings() {
    let tmp = tempfile::tempdir().unwrap();
    let sarif = tmp.path().join("reports/winlint.sarif");
    let a = action(
        "run",
        &[
            (
                "INPUT_PATHS",
                "testdata/examples/iis-deployment.yaml\n  testdata/examples/windows-good.yaml",
            ),
            ("INPUT_ARGS", "--windows-build ltsc2022 --fail-on error"),
            ("INPUT_SARIF_FILE", sarif.to_str().unwrap()),
            ("INPUT_ANNOTATIONS", "true"),
        ],
        &root(),
    );
    assert_eq!(a.status, 1, "{}\n{}", a.stdout, a.stderr);
    assert!(
        a.stdout.lines().any(|l| l.starts_with(
            "::error file=testdata/examples/iis-deployment.yaml,line=15,col=5,title=WIN001 missing-os-selector::"
        )),
        "{}",
        a.stdout
    );
    let summary = "2 errors, 4 warnings, 2 info in 2 files (2 objects, 2 pod templates checked); 2 fixable with --fix";
    assert_eq!(a.outputs["exit-code"], "1");
    assert_eq!(a.outputs["summary"], summary);
    assert_eq!(a.outputs["sarif-file"], sarif.to_str().unwrap());
    let s: Value = serde_json::from_str(&std::fs::read_to_string(&sarif).unwrap()).unwrap();
    assert_eq!(s["runs"][0]["results"].as_array().unwrap().len(), 8);
    assert!(a.summary.starts_with("### winlint failed"), "{}", a.summary);
    assert!(a.summary.contains(summary), "{}", a.summary);
}

#[test]
fn run_passes_on_clean_input_and_prints_text_without_annotations() {
    let a = action(
        "run",
        &[
            ("INPUT_PATHS", "testdata/examples/windows-good.yaml"),
            ("INPUT_ANNOTATIONS", "false"),
        ],
        &root(),
    );
    assert_eq!(a.status, 0, "{}\n{}", a.stdout, a.stderr);
    assert!(!a.stdout.contains("::"), "{}", a.stdout);
    assert_eq!(a.outputs["exit-code"], "0");
    assert!(!a.outputs.contains_key("sarif-file"));
    assert!(a.summary.starts_with("### winlint passed"), "{}", a.summary);
}

#[test]
fn run_reports_usage_errors_with_status_2() {
    let a = action(
        "run",
        &[
            ("INPUT_PATHS", "testdata/examples/"),
            ("INPUT_ARGS", "--windows-build nonsense"),
        ],
        &root(),
    );
    assert_eq!(a.status, 2);
    assert_eq!(a.outputs["exit-code"], "2");
    assert!(a.stderr.contains("--windows-build"), "{}", a.stderr);
    assert!(a.summary.contains("usage error"), "{}", a.summary);
}

/// A fake `cargo` that records its arguments and installs a fake winlint where told.
fn fake_cargo(dir: &Path) -> PathBuf {
    let bin = dir.join("fakebin");
    std::fs::create_dir_all(&bin).unwrap();
    write_executable(
        &bin.join("cargo"),
        "#!/bin/sh\necho \"$@\" >> \"$FAKE_CARGO_LOG\"\nwhile [ $# -gt 0 ]; do [ \"$1\" = --root ] && root=$2; shift; done\n\
         mkdir -p \"$root/bin\"\nprintf '#!/bin/sh\\necho winlint 0.0.0-fake\\n' > \"$root/bin/winlint\"\nchmod +x \"$root/bin/winlint\"\n",
    );
    bin
}

/// A script at `path` that the shell can run (a stand-in for a tool on PATH).
fn write_executable(path: &Path, body: &str) {
    std::fs::write(path, body).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn install_builds_from_the_action_checkout_once() {
    let tmp = tempfile::tempdir().unwrap();
    let fakebin = fake_cargo(tmp.path());
    let log = tmp.path().join("cargo.log");
    let install_root = tmp.path().join("install");
    let path = format!("{}:/usr/bin:/bin", fakebin.display());
    let env = [
        ("PATH", path.as_str()),
        ("FAKE_CARGO_LOG", log.to_str().unwrap()),
        ("WINLINT_ROOT", install_root.to_str().unwrap()),
    ];
    let a = action("install", &env, tmp.path());
    assert_eq!(a.status, 0, "{}\n{}", a.stdout, a.stderr);
    assert_eq!(
        std::fs::read_to_string(&log).unwrap(),
        format!(
            "install --locked --path {} --root {}\n",
            root().display(),
            install_root.display()
        )
    );
    // A cache hit: the binary is there, cargo is not run again.
    let a = action("install", &env, tmp.path());
    assert_eq!(a.status, 0);
    assert!(a.stdout.contains("winlint from the cache"), "{}", a.stdout);
    assert_eq!(std::fs::read_to_string(&log).unwrap().lines().count(), 1);
    // Without cargo: a clear annotation.
    let empty = tmp.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let other = tmp.path().join("other");
    let a = action(
        "install",
        &[
            ("PATH", &format!("{}:/bin", empty.display())),
            ("WINLINT_ROOT", other.to_str().unwrap()),
        ],
        tmp.path(),
    );
    assert_eq!(a.status, 2);
    assert!(
        a.stdout
            .contains("::error title=winlint action::cargo not found"),
        "{}",
        a.stdout
    );
}

/// A release as scripts/dist.sh lays it out, under `<dir>/<tag>/`: a stand-in binary for
/// x86_64 and the SHA256SUMS of it (or of something else, when `tampered`).
fn fake_release(dir: &Path, tag: &str, tampered: bool) {
    let rel = dir.join(tag);
    std::fs::create_dir_all(&rel).unwrap();
    let name = "winlint-x86_64-unknown-linux-musl";
    let body = "#!/bin/sh\necho winlint 9.9.9-released\n";
    std::fs::write(rel.join(name), body).unwrap();
    let hex = sha256_hex(if tampered {
        b"other bytes"
    } else {
        body.as_bytes()
    });
    std::fs::write(
        rel.join("SHA256SUMS"),
        format!("0000  winlint-aarch64-unknown-linux-musl\n{hex}  {name}\n"),
    )
    .unwrap();
}

/// On its release tag the Action downloads the release binary and checks it against the
/// release's SHA256SUMS; cargo is not run. A mismatch fails without falling back; a ref that is
/// not the release tag, or a release without the binary, builds with cargo.
#[test]
fn install_downloads_the_release_binary_of_its_tag_and_verifies_it() {
    let tmp = tempfile::tempdir().unwrap();
    let fakebin = fake_cargo(tmp.path());
    let log = tmp.path().join("cargo.log");
    let tag = format!("v{}", env!("CARGO_PKG_VERSION"));
    let good = tmp.path().join("good");
    fake_release(&good, &tag, false);
    let bad = tmp.path().join("bad");
    fake_release(&bad, &tag, true);
    let empty = tmp.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let path = format!("{}:/usr/bin:/bin", fakebin.display());
    let install = |dir: &Path, reference: &str, install_root: &str| {
        let server = FileServer::start(dir);
        let install_root = tmp.path().join(install_root);
        let a = action(
            "install",
            &[
                ("PATH", path.as_str()),
                ("FAKE_CARGO_LOG", log.to_str().unwrap()),
                ("WINLINT_ROOT", install_root.to_str().unwrap()),
                ("ACTION_REF", reference),
                ("INPUT_RELEASE_BASE_URL", server.base.as_str()),
            ],
            tmp.path(),
        );
        let bin = install_root.join("bin/winlint");
        (a, server.requests(), bin)
    };
    let cargo_runs = || {
        std::fs::read_to_string(&log)
            .map(|l| l.lines().count())
            .unwrap_or(0)
    };

    let (a, requests, bin) = install(&good, &tag, "good");
    assert_eq!(a.status, 0, "{}\n{}", a.stdout, a.stderr);
    assert!(a.stdout.contains("winlint 9.9.9-released"), "{}", a.stdout);
    assert_eq!(
        requests,
        [
            format!("/{tag}/SHA256SUMS"),
            format!("/{tag}/winlint-x86_64-unknown-linux-musl")
        ]
    );
    assert!(bin.exists());
    assert_eq!(
        cargo_runs(),
        0,
        "cargo ran although the release binary was there"
    );

    let (a, _, bin) = install(&bad, &tag, "bad");
    assert_eq!(a.status, 2, "{}\n{}", a.stdout, a.stderr);
    assert!(
        a.stdout.contains(
            "::error title=winlint::winlint-x86_64-unknown-linux-musl from http://127.0.0.1:"
        ) && a.stdout.contains("does not match its SHA256SUMS"),
        "{}",
        a.stdout
    );
    assert!(
        !bin.exists(),
        "a binary that fails its checksum is not installed"
    );
    assert_eq!(
        cargo_runs(),
        0,
        "a checksum mismatch never falls back to a build"
    );

    let (a, requests, _) = install(&good, "main", "branch");
    assert_eq!(a.status, 0, "{}\n{}", a.stdout, a.stderr);
    assert!(a.stdout.contains("is not the release tag"), "{}", a.stdout);
    assert!(requests.is_empty(), "{requests:?}");
    assert_eq!(cargo_runs(), 1);

    let (a, _, _) = install(&empty, &tag, "missing");
    assert_eq!(a.status, 0, "{}\n{}", a.stdout, a.stderr);
    assert!(a.stdout.contains("could not download"), "{}", a.stdout);
    assert_eq!(cargo_runs(), 2);
}

#[test]
fn the_cache_key_follows_the_sources_and_the_ref() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("action");
    std::fs::create_dir_all(src.join("src")).unwrap();
    std::fs::write(src.join("Cargo.toml"), "[package]\n").unwrap();
    std::fs::write(src.join("Cargo.lock"), "").unwrap();
    std::fs::write(src.join("src/main.rs"), "fn main() {}\n").unwrap();
    let key = |reference: &str| {
        let a = action(
            "key",
            &[
                ("GITHUB_ACTION_PATH", src.to_str().unwrap()),
                ("ACTION_REF", reference),
            ],
            tmp.path(),
        );
        assert_eq!(a.status, 0, "{}", a.stderr);
        a.outputs["key"].clone()
    };
    let k1 = key("v1.2.0");
    assert!(k1.starts_with("winlint-Linux-X64-v1.2.0-"), "{k1}");
    assert_eq!(k1, key("v1.2.0"), "stable");
    assert_ne!(k1, key("main"));
    assert_eq!(key("feature/x").split('-').nth(3), Some("feature_x"));
    std::fs::write(src.join("src/main.rs"), "fn main() { }\n").unwrap();
    assert_ne!(k1, key("v1.2.0"), "a source change is a new build");
}

/// action.yml declares what its steps use, and runs the script's subcommands.
#[test]
fn action_yml_is_consistent_with_the_script() {
    let text = std::fs::read_to_string(root().join("action.yml")).unwrap();
    let doc = &winlint::source::load(&text).unwrap()[0].value;
    assert_eq!(doc["runs"]["using"], "composite");
    let inputs: BTreeSet<String> = doc["inputs"].as_object().unwrap().keys().cloned().collect();
    let script = std::fs::read_to_string(root().join("scripts/action.sh")).unwrap();
    let mut used = BTreeSet::new();
    for step in doc["runs"]["steps"].as_array().unwrap() {
        if let Some(run) = step["run"].as_str() {
            let sub = run.rsplit(' ').next().unwrap();
            assert!(
                script.contains(&format!("  {sub}) cmd_{sub} ;;")),
                "no subcommand {sub}"
            );
            assert_eq!(step["shell"], "bash");
        }
        for (k, v) in step["env"].as_object().into_iter().flatten() {
            let v = v.as_str().unwrap();
            if let Some(name) = v
                .strip_prefix("${{ inputs.")
                .and_then(|r| r.strip_suffix(" }}"))
            {
                assert!(inputs.contains(name), "{k}: undeclared input {name}");
                used.insert(name.to_string());
                assert!(script.contains(k), "the script does not read {k}");
            }
        }
        if let Some(dir) = step["working-directory"].as_str() {
            used.insert(
                dir.trim_start_matches("${{ inputs.")
                    .trim_end_matches(" }}")
                    .into(),
            );
        }
    }
    assert_eq!(used, inputs, "every input is used");
    for (name, o) in doc["outputs"].as_object().unwrap() {
        assert!(
            script.contains(&format!("output {name} ")),
            "output {name} is never written"
        );
        assert!(o["value"].as_str().unwrap().contains("steps.run.outputs"));
    }
}

fn sha256_hex(bytes: &[u8]) -> String {
    let sum = ring::digest::digest(&ring::digest::SHA256, bytes);
    sum.as_ref().iter().map(|b| format!("{b:02x}")).collect()
}

/// A release with a stand-in binary per asset (each says its own name) and their SHA256SUMS.
fn fake_release_of(dir: &Path, tag: &str, assets: &[&str]) {
    let rel = dir.join(tag);
    std::fs::create_dir_all(&rel).unwrap();
    let mut sums = String::new();
    for name in assets {
        let body = format!("#!/bin/sh\necho winlint {name}\n");
        std::fs::write(rel.join(name), &body).unwrap();
        sums.push_str(&format!("{}  {name}\n", sha256_hex(body.as_bytes())));
    }
    std::fs::write(rel.join("SHA256SUMS"), sums).unwrap();
}

/// The release asset for each runner GitHub has (RUNNER_OS, RUNNER_ARCH) and for what uname says
/// in Git Bash, macOS and Linux: installed under the name the OS runs (`winlint.exe` on
/// Windows), checked against SHA256SUMS; x86_64 where Windows on Arm or Rosetta 2 runs it and
/// the release has no native build; a build with cargo where there is no binary at all.
#[test]
fn install_picks_the_release_binary_for_each_os_and_arch() {
    let candidates = |os: &str, arch: &str| {
        let out = Command::new("bash")
            .arg("-c")
            .arg(". scripts/release-binary.sh; release_candidates \"$1\" \"$2\"")
            .args(["-", os, arch])
            .current_dir(root())
            .env_remove("RUNNER_OS")
            .env_remove("RUNNER_ARCH")
            .output()
            .unwrap();
        assert!(out.status.success());
        String::from_utf8(out.stdout).unwrap()
    };
    let linux_x64 = "winlint-x86_64-unknown-linux-musl\n";
    let win_x64 = "winlint-x86_64-pc-windows-gnu.exe\n";
    let mac_arm = "winlint-aarch64-apple-darwin\nwinlint-x86_64-apple-darwin\n";
    for (os, arch, want) in [
        ("Linux", "X64", linux_x64),
        ("Linux", "x86_64", linux_x64),
        ("Linux", "ARM64", "winlint-aarch64-unknown-linux-musl\n"),
        ("Linux", "aarch64", "winlint-aarch64-unknown-linux-musl\n"),
        ("Windows", "X64", win_x64),
        ("MINGW64_NT-10.0-26100", "x86_64", win_x64),
        ("MSYS_NT-10.0-26100", "x86_64", win_x64),
        (
            "Windows",
            "ARM64",
            "winlint-aarch64-pc-windows-gnullvm.exe\nwinlint-x86_64-pc-windows-gnu.exe\n",
        ),
        ("macOS", "ARM64", mac_arm),
        ("Darwin", "arm64", mac_arm),
        ("macOS", "X64", "winlint-x86_64-apple-darwin\n"),
        ("Darwin", "x86_64", "winlint-x86_64-apple-darwin\n"),
        ("Windows", "X86", ""),
        ("FreeBSD", "amd64", ""),
    ] {
        assert_eq!(candidates(os, arch), want, "{os}/{arch}");
    }

    let tmp = tempfile::tempdir().unwrap();
    let fakebin = fake_cargo(tmp.path());
    let log = tmp.path().join("cargo.log");
    let tag = format!("v{}", env!("CARGO_PKG_VERSION"));
    let all = tmp.path().join("all");
    fake_release_of(
        &all,
        &tag,
        &[
            "winlint-x86_64-unknown-linux-musl",
            "winlint-aarch64-unknown-linux-musl",
            "winlint-x86_64-pc-windows-gnu.exe",
            "winlint-aarch64-pc-windows-gnullvm.exe",
            "winlint-aarch64-apple-darwin",
            "winlint-x86_64-apple-darwin",
        ],
    );
    let x86_only = tmp.path().join("x86-only");
    fake_release_of(
        &x86_only,
        &tag,
        &[
            "winlint-x86_64-pc-windows-gnu.exe",
            "winlint-x86_64-apple-darwin",
        ],
    );
    let path = format!("{}:/usr/bin:/bin", fakebin.display());
    let install = |release: &Path, os: &str, arch: &str, name: &str| {
        let server = FileServer::start(release);
        let install_root = tmp.path().join(name);
        let a = action(
            "install",
            &[
                ("PATH", path.as_str()),
                ("FAKE_CARGO_LOG", log.to_str().unwrap()),
                ("WINLINT_ROOT", install_root.to_str().unwrap()),
                ("ACTION_REF", tag.as_str()),
                ("INPUT_RELEASE_BASE_URL", server.base.as_str()),
                ("RUNNER_OS", os),
                ("RUNNER_ARCH", arch),
            ],
            tmp.path(),
        );
        (a, server.requests(), install_root)
    };
    for (n, (release, os, arch, asset, installed)) in [
        (
            &all,
            "Linux",
            "X64",
            "winlint-x86_64-unknown-linux-musl",
            "winlint",
        ),
        (
            &all,
            "Linux",
            "ARM64",
            "winlint-aarch64-unknown-linux-musl",
            "winlint",
        ),
        (
            &all,
            "Windows",
            "X64",
            "winlint-x86_64-pc-windows-gnu.exe",
            "winlint.exe",
        ),
        (
            &all,
            "Windows",
            "ARM64",
            "winlint-aarch64-pc-windows-gnullvm.exe",
            "winlint.exe",
        ),
        (
            &all,
            "macOS",
            "ARM64",
            "winlint-aarch64-apple-darwin",
            "winlint",
        ),
        (
            &all,
            "macOS",
            "X64",
            "winlint-x86_64-apple-darwin",
            "winlint",
        ),
        (
            &x86_only,
            "Windows",
            "ARM64",
            "winlint-x86_64-pc-windows-gnu.exe",
            "winlint.exe",
        ),
        (
            &x86_only,
            "macOS",
            "ARM64",
            "winlint-x86_64-apple-darwin",
            "winlint",
        ),
    ]
    .into_iter()
    .enumerate()
    {
        let (a, requests, install_root) = install(release, os, arch, &format!("root{n}"));
        assert_eq!(a.status, 0, "{os}/{arch}: {}\n{}", a.stdout, a.stderr);
        assert_eq!(
            requests,
            [format!("/{tag}/SHA256SUMS"), format!("/{tag}/{asset}")],
            "{os}/{arch}"
        );
        assert!(
            a.stdout.contains(&format!("winlint {asset}")),
            "{os}/{arch}: {}",
            a.stdout
        );
        assert_eq!(
            std::fs::read(install_root.join("bin").join(installed)).unwrap(),
            std::fs::read(release.join(&tag).join(asset)).unwrap(),
            "{os}/{arch}"
        );
    }
    assert!(
        !log.exists(),
        "cargo ran although a release binary was there"
    );

    // On Windows the cached binary is found as `winlint.exe`: no second download.
    let (a, requests, _) = install(&all, "Windows", "X64", "root2");
    assert_eq!(a.status, 0, "{}\n{}", a.stdout, a.stderr);
    assert!(a.stdout.contains("winlint from the cache"), "{}", a.stdout);
    assert!(requests.is_empty(), "{requests:?}");

    // No binary for the platform: built with cargo, nothing downloaded.
    let (a, requests, _) = install(&all, "FreeBSD", "X64", "freebsd");
    assert_eq!(a.status, 0, "{}\n{}", a.stdout, a.stderr);
    assert!(
        a.stdout.contains("no release binary for FreeBSD/X64"),
        "{}",
        a.stdout
    );
    assert!(requests.is_empty());
    assert_eq!(std::fs::read_to_string(&log).unwrap().lines().count(), 1);
}

/// On a Windows runner the `sarif-file` output is a Windows path (Git Bash's `pwd` says
/// /d/a/repo; upload-sarif, a Node program, needs D:\a\repo): it goes through cygpath -w, here a
/// stand-in that marks what it was given. On Linux the path is left as it is.
#[test]
fn the_sarif_output_is_a_windows_path_on_windows() {
    let tmp = tempfile::tempdir().unwrap();
    let fakebin = tmp.path().join("fakebin");
    std::fs::create_dir_all(&fakebin).unwrap();
    write_executable(
        &fakebin.join("cygpath"),
        "#!/bin/sh\n[ \"$1\" = -w ] || exit 2\nprintf 'D:%s\\n' \"$2\" | tr / '\\\\'\n",
    );
    let sarif = tmp.path().join("reports/winlint.sarif");
    let path = format!("{}:/usr/bin:/bin", fakebin.display());
    let run = |os: &str| {
        action(
            "run",
            &[
                ("PATH", path.as_str()),
                ("RUNNER_OS", os),
                ("INPUT_PATHS", "testdata/examples/windows-good.yaml"),
                ("INPUT_SARIF_FILE", sarif.to_str().unwrap()),
            ],
            &root(),
        )
    };
    let a = run("Windows");
    assert_eq!(a.status, 0, "{}\n{}", a.stdout, a.stderr);
    assert_eq!(
        a.outputs["sarif-file"],
        format!("D:{}", sarif.display()).replace('/', "\\")
    );
    assert!(sarif.exists());
    let a = run("Linux");
    assert_eq!(a.outputs["sarif-file"], sarif.to_str().unwrap());
}
