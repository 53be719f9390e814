//! What `winlint` reads (src/cli/input.rs): every input once, whatever it is (a FIFO, a process
//! substitution, `/dev/stdin`), never more than `--max-input-bytes`, and no hidden directory
//! unless it is named.

mod cli_support;

use std::io::Write;
use std::path::Path;

use cli_support::{Run, bin, fixture, root};

/// A Windows deployment with error findings.
const BAD: &str = "testdata/examples/iis-deployment.yaml";

/// The summary of a JSON report: (objects, errors).
fn objects_and_errors(out: &cli_support::Out) -> (u64, u64) {
    let r = out.json();
    let s = &r["summary"];
    (
        s["objects"].as_u64().unwrap_or(0),
        s["errors"].as_u64().unwrap_or(0),
    )
}

/// The findings of BAD linted as a file: what every other way of giving it must report.
fn reference() -> (u64, u64) {
    let out = Run::new(&["-o", "json", BAD]).run();
    out.assert_code(1);
    let r = objects_and_errors(&out);
    assert!(r.0 >= 1 && r.1 >= 1, "{out}");
    r
}

#[test]
fn dev_stdin_is_read_once() {
    // `cat f | winlint /dev/stdin`: the pipe read twice linted an empty second read and passed.
    let out = Run::new(&["-o", "json", "/dev/stdin"])
        .stdin(fixture(BAD))
        .run();
    out.assert_code(1);
    assert_eq!(objects_and_errors(&out), reference(), "{out}");
}

#[test]
fn a_fifo_is_read_once() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("manifests.yaml");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success(), "mkfifo");
    let text = fixture(BAD);
    let path = fifo.clone();
    // The writer blocks until winlint opens the FIFO, writes it all, and closes it.
    let writer = std::thread::spawn(move || {
        let mut f = std::fs::OpenOptions::new().write(true).open(path).unwrap();
        f.write_all(text.as_bytes()).unwrap();
    });
    let out = Run::new(&["-o", "json", fifo.to_str().unwrap()]).run();
    writer.join().unwrap();
    out.assert_code(1);
    assert_eq!(objects_and_errors(&out), reference(), "{out}");
}

#[test]
fn a_process_substitution_is_read_once() {
    // `winlint <(helm template …)`, through a real bash.
    let script = format!(
        "exec {} -o json <(cat {})",
        bin(),
        root().join(BAD).display()
    );
    let out = Run::new::<&str>(&[])
        .program(&["bash", "-c", &script])
        .run();
    out.assert_code(1);
    assert_eq!(objects_and_errors(&out), reference(), "{out}");
}

#[test]
fn fix_refuses_to_write_back_to_a_pipe() {
    let out = Run::new(&["--fix", "/dev/stdin"]).stdin(fixture(BAD)).run();
    out.assert_code(2);
    assert!(
        out.stdout.contains("not a regular file") && out.stdout.contains("winlint --fix -"),
        "says why and what to do instead\n{out}"
    );
}

#[test]
fn an_input_past_the_cap_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.yaml");
    std::fs::write(&big, fixture(BAD)).unwrap();
    let small = dir.path().join("small.yaml");
    std::fs::write(&small, "kind: ConfigMap\n").unwrap();
    let out = Run::new(&[
        "--max-input-bytes",
        "100",
        big.to_str().unwrap(),
        small.to_str().unwrap(),
    ])
    .run();
    out.assert_code(2);
    assert!(
        out.stdout.contains(&format!("{}:", big.display()))
            && out.stdout.contains("larger than 100 bytes")
            && out.stdout.contains("--max-input-bytes"),
        "{out}"
    );
    // The other input is still linted.
    assert!(out.stdout.contains("in 1 file"), "{out}");

    // The same on stdin.
    let out = Run::new(&["--max-input-bytes", "100", "-"])
        .stdin(fixture(BAD))
        .run();
    out.assert_code(2);
    assert!(
        out.stdout.contains("<stdin>") && out.stdout.contains("larger than 100 bytes"),
        "{out}"
    );
}

#[test]
fn an_endless_input_stops_at_the_default_cap() {
    // /dev/zero grew until the OOM killer; now the read stops at 64 MiB + 1 byte. The address
    // space cap turns unbounded growth into a failure instead of swapping the runner.
    let out = Run::new(&["/dev/zero"]).mem_limit_mib(1024).run();
    out.assert_code(2);
    assert!(
        out.stdout.contains("/dev/zero") && out.stdout.contains("larger than 64 MiB"),
        "{out}"
    );
}

fn write(dir: &Path, rel: &str, text: &str) {
    let p = dir.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

#[test]
fn hidden_directories_are_walked_only_when_named() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "app/deploy.yaml", &fixture(BAD));
    write(d, "app/.git/objects/old.yaml", &fixture(BAD));
    write(d, "app/.github/workflow.yaml", "on: push\n");
    write(d, "app/.hidden.yaml", &fixture(BAD));
    let out = Run::new(&["-o", "json", d.join("app").to_str().unwrap()]).run();
    out.assert_code(1);
    let r = out.json();
    assert_eq!(r["summary"]["files"], 1, "{out}");
    // Named, a hidden directory is walked.
    let out = Run::new(&["-o", "json", d.join("app/.git").to_str().unwrap()]).run();
    out.assert_code(1);
    assert_eq!(out.json()["summary"]["files"], 1, "{out}");
}
