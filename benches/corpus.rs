//! CLI-throughput helper (issue 4), a bench binary without harness:
//!
//! * `corpus gen DIR [N] [SEED]`: write N (default 10 000) mixed manifests (Linux and Windows,
//!   every pod-bearing kind plus Services/ConfigMaps, 1–8 documents per file) under DIR;
//! * `corpus parse DIR`: read and load every `.yaml` file with winlint's own loader
//!   (`winlint::source::load_bytes`: saphyr + source map), nothing else: the parse floor;
//! * `corpus lint DIR`: load + context + `lint_object` of every document, as the CLI does, but
//!   without formatting output (to split the CLI's cost into engine and reporting);
//! * `corpus review N [mutate|validate] [BYTES]`: `Webhook::review` N times on the generated
//!   CREATE review of BYTES (default 5 000), for instruction counts under callgrind;
//! * no arguments (`cargo bench --bench corpus`): generate into a temp dir, run parse and lint
//!   in-process and print resources/s and the ratio.
//!
//! `scripts/cli-throughput.sh` runs the release `winlint` binary against `corpus parse` under
//! `/usr/bin/time -v` for peak RSS.

use std::path::{Path, PathBuf};
use std::time::Instant;

// The allocator of the `winlint` binary (src/main.rs): the parse floor pays what the CLI pays.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use winlint::config::Config;
use winlint::engine;
use winlint::model::Context;
use winlint::model::Operation;

mod support;

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = walkdir::WalkDir::new(dir)
        .into_iter()
        .flatten()
        .filter(|e| e.file_type().is_file())
        .map(|e| e.into_path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml" || x == "yml"))
        .collect();
    out.sort();
    out
}

/// Load every file; (resources, bytes).
fn parse(dir: &Path) -> (usize, usize) {
    let (mut n, mut bytes) = (0, 0);
    for p in files(dir) {
        let b = std::fs::read(&p).unwrap();
        bytes += b.len();
        match winlint::source::load_bytes(&b) {
            Ok(docs) => n += docs.iter().filter(|d| !d.value.is_null()).count(),
            Err(e) => eprintln!("{}: {e}", p.display()),
        }
    }
    (n, bytes)
}

/// Load + lint every file (context per file, as the CLI builds it from the same input);
/// (resources, findings).
fn lint(dir: &Path) -> (usize, usize) {
    let config = Config::default();
    let (mut n, mut findings) = (0, 0);
    for p in files(dir) {
        let b = std::fs::read(&p).unwrap();
        let Ok(docs) = winlint::source::load_bytes(&b) else {
            continue;
        };
        let mut cx = Context::default();
        for d in &docs {
            cx.add(&d.value);
        }
        for d in docs.iter().filter(|d| !d.value.is_null()) {
            n += 1;
            findings += engine::lint_object(&d.value, &config, &cx, Operation::Lint)
                .findings
                .len();
        }
    }
    (n, findings)
}

fn timed<T>(what: &str, f: impl FnOnce() -> T) -> (T, f64) {
    let t = Instant::now();
    let r = f();
    let s = t.elapsed().as_secs_f64();
    eprintln!("{what}: {s:.3} s");
    (r, s)
}

fn main() {
    // `cargo bench` passes `--bench`; ignore flags.
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    match args.first().map(String::as_str) {
        Some("gen") => {
            let dir = PathBuf::from(args.get(1).expect("corpus gen DIR [N] [SEED]"));
            let n = args.get(2).map_or(10_000, |s| s.parse().expect("N"));
            let seed = args.get(3).map_or(4, |s| s.parse().expect("SEED"));
            let (files, resources) = support::write_corpus(&dir, n, seed);
            println!(
                "wrote {resources} resources in {files} files under {}",
                dir.display()
            );
        }
        Some("parse") => {
            let dir = PathBuf::from(args.get(1).expect("corpus parse DIR"));
            let ((n, bytes), s) = timed("parse", || parse(&dir));
            println!(
                "parse: {n} resources, {bytes} bytes in {s:.3} s = {:.0} resources/s, {:.1} MB/s",
                n as f64 / s,
                bytes as f64 / s / 1e6
            );
        }
        Some("lint") => {
            let dir = PathBuf::from(args.get(1).expect("corpus lint DIR"));
            let ((n, f), s) = timed("lint", || lint(&dir));
            println!(
                "lint: {n} resources, {f} findings in {s:.3} s = {:.0} resources/s",
                n as f64 / s
            );
        }
        Some("review") => {
            // Instructions per admission request without TLS or HTTP (issue 16): run under
            // callgrind with N=1 and N=21; the difference / 20 is one `Webhook::review`.
            let n: usize = args.get(1).map_or(1, |s| s.parse().expect("N"));
            let endpoint = match args.get(2).map(String::as_str) {
                Some("validate") => winlint::admission::Endpoint::Validate,
                _ => winlint::admission::Endpoint::Mutate,
            };
            let size = args.get(3).map_or(5_000, |s| s.parse().expect("BYTES"));
            let body = support::review(size, false);
            let webhook = winlint::admission::Webhook::new(Config::default());
            let mut bytes = 0;
            for _ in 0..n {
                bytes += webhook.review(&body, endpoint).unwrap().body.len();
            }
            println!("review: {n} x {} B -> {bytes} B", body.len());
        }
        Some(other) if !other.is_empty() => {
            eprintln!(
                "usage: corpus gen DIR [N] [SEED] | parse DIR | lint DIR | review N [mutate|validate] [BYTES]"
            );
            std::process::exit(2);
        }
        _ => {
            let tmp = tempfile::tempdir().unwrap();
            let (files, resources) = support::write_corpus(tmp.path(), 10_000, 4);
            println!("corpus: {resources} resources in {files} files");
            // Warm the page cache, then measure.
            parse(tmp.path());
            let ((n, _), tp) = timed("parse", || parse(tmp.path()));
            let ((m, f), tl) = timed("lint", || lint(tmp.path()));
            assert_eq!(n, m);
            println!(
                "parse only : {:>8.0} resources/s ({tp:.3} s)\nload + lint: {:>8.0} resources/s ({tl:.3} s, {f} findings)\nratio lint/parse: {:.2}x",
                n as f64 / tp,
                m as f64 / tl,
                tl / tp
            );
        }
    }
}
