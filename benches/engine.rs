//! Engine benches (issue 4): the admission handler bytes-in → bytes-out on the real captured
//! AdmissionReviews and on generated ~5 KB / ~50 KB / ~1.5 MB pods (CREATE, and UPDATE with
//! object + oldObject), against the JSON work any webhook must do (parse the review, serialize
//! an answer); the lint of one manifest (load + lint); image-reference parsing.
//!
//! Allocations per op come from a counting global allocator in this binary (over mimalloc, the
//! allocator the `winlint` binary uses) and are printed (`allocs/op`, `bytes/op`) before
//! criterion's timings.
//!
//! `cargo bench --bench engine` (all), `cargo bench --bench engine -- admission/generated`;
//! `BENCH_NO_ALLOCS=1` skips the allocation report (for `perf record … --profile-time`).

use std::alloc::{GlobalAlloc, Layout};
use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use serde_json::{Value, json};

use winlint::admission::{Endpoint, Webhook};
use winlint::config::Config;
use winlint::engine;
use winlint::model::Context;
use winlint::model::Operation;

mod support;

use mimalloc::MiMalloc as Inner;

struct Counting;

static ALLOCS: AtomicU64 = AtomicU64::new(0);
static BYTES: AtomicU64 = AtomicU64::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Relaxed);
        BYTES.fetch_add(layout.size() as u64, Relaxed);
        unsafe { Inner.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { Inner.dealloc(ptr, layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Relaxed);
        BYTES.fetch_add(layout.size() as u64, Relaxed);
        unsafe { Inner.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Relaxed);
        BYTES.fetch_add(new_size as u64, Relaxed);
        unsafe { Inner.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Allocations and bytes allocated per call of `f` (mean over `n` calls, after one warm-up).
fn allocs_per_op(n: u64, mut f: impl FnMut()) -> (f64, f64) {
    f();
    let (a0, b0) = (ALLOCS.load(Relaxed), BYTES.load(Relaxed));
    for _ in 0..n {
        f();
    }
    let (a1, b1) = (ALLOCS.load(Relaxed), BYTES.load(Relaxed));
    ((a1 - a0) as f64 / n as f64, (b1 - b0) as f64 / n as f64)
}

fn report_allocs(name: &str, n: u64, f: impl FnMut()) {
    if std::env::var_os("BENCH_NO_ALLOCS").is_some() {
        return; // profiling a single bench: skip the allocation report
    }
    let (a, b) = allocs_per_op(n, f);
    println!(
        "allocs {name:<48} {a:>10.1} allocs/op {:>12.1} KiB/op",
        b / 1024.0
    );
}

fn endpoint(path: &str) -> Endpoint {
    if path.starts_with("/mutate") {
        Endpoint::Mutate
    } else {
        Endpoint::Validate
    }
}

/// The transport-independent floor: parse the review and write a minimal answer.
fn json_floor(body: &[u8]) -> Vec<u8> {
    let v: Value = serde_json::from_slice(body).unwrap();
    let uid = v["request"]["uid"].as_str().unwrap_or("");
    serde_json::to_vec(&json!({
        "apiVersion": v["apiVersion"],
        "kind": "AdmissionReview",
        "response": {"uid": uid, "allowed": true},
    }))
    .unwrap()
}

fn generated() -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for (label, size) in [("5KB", 5_000), ("50KB", 50_000), ("1.5MB", 1_500_000)] {
        for update in [false, true] {
            let body = support::review(size, update);
            let op = if update { "update" } else { "create" };
            out.push((format!("{label}-{op}"), body));
        }
    }
    out
}

fn bench_admission(c: &mut Criterion) {
    let webhook = Webhook::new(Config::default());
    let real = support::real_reviews();
    let gen_reviews = generated();

    println!("== allocations per op (counting global allocator) ==");
    for (name, path, body) in &real {
        let ep = endpoint(path);
        report_allocs(&format!("admission/real/{name}{path}"), 200, || {
            black_box(webhook.review(black_box(body), ep).unwrap());
        });
    }
    for (name, body) in &gen_reviews {
        let n = if body.len() > 1_000_000 { 5 } else { 100 };
        for ep in [Endpoint::Mutate, Endpoint::Validate] {
            report_allocs(
                &format!(
                    "admission/generated/{name}/{} ({} B)",
                    ep.as_str(),
                    body.len()
                ),
                n,
                || {
                    black_box(webhook.review(black_box(body), ep).unwrap());
                },
            );
        }
        report_allocs(&format!("json-floor/{name}"), n, || {
            black_box(json_floor(black_box(body)));
        });
    }

    let mut g = c.benchmark_group("admission/real");
    g.warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_millis(800))
        .sample_size(20);
    for (name, path, body) in &real {
        let ep = endpoint(path);
        g.throughput(Throughput::Bytes(body.len() as u64));
        g.bench_function(format!("{name}{path}"), |b| {
            b.iter(|| webhook.review(black_box(body), ep).unwrap())
        });
    }
    g.finish();

    let mut g = c.benchmark_group("admission/generated");
    g.warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .sample_size(20);
    for (name, body) in &gen_reviews {
        g.throughput(Throughput::Bytes(body.len() as u64));
        for ep in [Endpoint::Mutate, Endpoint::Validate] {
            g.bench_function(format!("{name}/{}", ep.as_str()), |b| {
                b.iter(|| webhook.review(black_box(body), ep).unwrap())
            });
        }
        g.bench_function(format!("{name}/json-floor"), |b| {
            b.iter(|| json_floor(black_box(body)))
        });
    }
    g.finish();
}

fn bench_lint(c: &mut Criterion) {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = Config::default();
    let mut g = c.benchmark_group("lint");
    g.warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1))
        .sample_size(30);
    for file in [
        "testdata/examples/iis-deployment.yaml",
        "testdata/examples/hostprocess-daemonset.yaml",
        "testdata/examples/linux-and-agents.yaml",
    ] {
        let Ok(text) = std::fs::read_to_string(root.join(file)) else {
            continue;
        };
        let name = file.rsplit('/').next().unwrap();
        let load_and_lint = |text: &str| {
            let docs = winlint::source::load(text).unwrap();
            let mut cx = Context::default();
            for d in &docs {
                cx.add(&d.value);
            }
            let mut n = 0;
            for d in &docs {
                n += engine::lint_object(&d.value, &config, &cx, Operation::Lint)
                    .findings
                    .len();
            }
            n
        };
        report_allocs(&format!("lint/{name} (load+lint)"), 200, || {
            black_box(load_and_lint(black_box(&text)));
        });
        report_allocs(&format!("lint/{name} (load only)"), 200, || {
            black_box(winlint::source::load(black_box(&text)).unwrap());
        });
        g.throughput(Throughput::Bytes(text.len() as u64));
        g.bench_function(format!("{name}/load+lint"), |b| {
            b.iter(|| load_and_lint(black_box(&text)))
        });
        g.bench_function(format!("{name}/load"), |b| {
            b.iter(|| winlint::source::load(black_box(&text)).unwrap())
        });
    }
    g.finish();
}

fn bench_image(c: &mut Criterion) {
    let refs: Vec<&str> = support::WINDOWS_IMAGES
        .iter()
        .chain(support::LINUX_IMAGES)
        .copied()
        .chain([
            "localhost:5000/team/tool@sha256:1111111111111111111111111111111111111111111111111111111111111111",
            "Mcr.Microsoft.com/Windows/ServerCore:LTSC2019",
            "microsoft/iis:windowsservercore",
            "not a reference",
        ])
        .collect();
    report_allocs(&format!("image/parse ({} refs)", refs.len()), 1000, || {
        for r in &refs {
            black_box(winlint::model::image::parse(black_box(r)));
        }
    });
    report_allocs(
        &format!("image/analyze ({} refs)", refs.len()),
        1000,
        || {
            for r in &refs {
                black_box(winlint::model::image::analyze(black_box(r)));
            }
        },
    );
    let mut g = c.benchmark_group("image");
    g.warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1));
    g.throughput(Throughput::Elements(refs.len() as u64));
    g.bench_function("parse", |b| {
        b.iter(|| {
            for r in &refs {
                black_box(winlint::model::image::parse(black_box(r)));
            }
        })
    });
    g.bench_function("analyze", |b| {
        b.iter(|| {
            for r in &refs {
                black_box(winlint::model::image::analyze(black_box(r)));
            }
        })
    });
    g.finish();
}

criterion_group!(benches, bench_admission, bench_lint, bench_image);
criterion_main!(benches);
