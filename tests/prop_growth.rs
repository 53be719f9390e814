//! Linear in the size of the pod (issue 15, item 2): work grows no faster than n log n in the
//! number of containers, env vars, volumes and mounts, for the CLI (lint, and `--fix` on text)
//! and the webhook (`/validate` and `/mutate` on an AdmissionReview body).
//!
//! Work is counted, not timed: the evaluation's steps (`winlint::model::work`: pointer lookups
//! and container visits, what every rule does per container) and the bytes allocated (a counting
//! global allocator in this test binary: copying the text or the object per finding shows
//! there). For pods of n, 2n, 4n and 8n containers the exponent k of `work ~ n^k` is fitted by
//! least squares; it must stay below 1.2 (n log n over this range fits about 1.1; a quadratic
//! walk, as the one this test was written for, fits 1.6 to 2).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use serde_json::{Value, json};

use winlint::admission::{Endpoint, Webhook};
use winlint::config::Config;
use winlint::model::{Context, Operation, work};

/// Counts the bytes allocated on each thread (the tests' own threads run one at a time per
/// measurement, and only the measuring thread's count is read).
struct Counting;

thread_local! {
    static ALLOCATED: Cell<u64> = const { Cell::new(0) };
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = ALLOCATED.try_with(|a| a.set(a.get() + layout.size() as u64));
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let _ = ALLOCATED.try_with(|a| a.set(a.get() + new_size as u64));
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// (steps, bytes allocated) by `f` on this thread.
fn measure(f: impl FnOnce()) -> (u64, u64) {
    let (s0, a0) = (work::steps(), ALLOCATED.with(Cell::get));
    f();
    (work::steps() - s0, ALLOCATED.with(Cell::get) - a0)
}

/// A Windows pod of `n` containers, each with what rules look at per container: a Linux-only
/// securityContext field (runAsUser, seLinuxOptions: WIN103, fixable), env vars, a mount of its
/// own volume with a Linux path (WIN30x), resources.
fn pod(n: usize) -> Value {
    let containers: Vec<Value> = (0..n)
        .map(|i| {
            json!({
                "name": format!("c{i}"),
                "image": "mcr.microsoft.com/windows/servercore:ltsc2022",
                "env": [{"name": format!("A{i}"), "value": "x"}, {"name": format!("B{i}"), "value": "y"}],
                "securityContext": {"runAsUser": 1000, "seLinuxOptions": {"level": "s0"}},
                "volumeMounts": [{"name": format!("v{i}"), "mountPath": format!("/data/{i}")}],
                "resources": {"limits": {"memory": "1Gi", "cpu": "1"}},
            })
        })
        .collect();
    let volumes: Vec<Value> = (0..n)
        .map(|i| json!({"name": format!("v{i}"), "emptyDir": {}}))
        .collect();
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "big", "namespace": "default"},
        "spec": {
            "os": {"name": "windows"},
            "nodeSelector": {"kubernetes.io/os": "windows"},
            "tolerations": [{"key": "os", "value": "windows", "effect": "NoSchedule"}],
            "containers": containers,
            "volumes": volumes,
        }
    })
}

/// The pod as a YAML file's text (block style, as people write it).
fn yaml(n: usize) -> String {
    let mut s = String::from(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: big\nspec:\n  os:\n    name: windows\n  \
         nodeSelector:\n    kubernetes.io/os: windows\n  tolerations:\n  - key: os\n    value: \
         windows\n    effect: NoSchedule\n  containers:\n",
    );
    for i in 0..n {
        s.push_str(&format!(
            "  - name: c{i}\n    image: mcr.microsoft.com/windows/servercore:ltsc2022\n    env:\n    \
             - name: A{i}\n      value: x\n    - name: B{i}\n      value: y\n    securityContext:\n      \
             runAsUser: 1000\n      seLinuxOptions:\n        level: s0\n    volumeMounts:\n    - name: \
             v{i}\n      mountPath: /data/{i}\n    resources:\n      limits:\n        memory: 1Gi\n        \
             cpu: \"1\"\n"
        ));
    }
    s.push_str("  volumes:\n");
    for i in 0..n {
        s.push_str(&format!("  - name: v{i}\n    emptyDir: {{}}\n"));
    }
    s
}

fn review(object: &Value) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": "0b9a3c4e-growth",
            "kind": {"group": "", "version": "v1", "kind": "Pod"},
            "resource": {"group": "", "version": "v1", "resource": "pods"},
            "namespace": "default",
            "operation": "CREATE",
            "userInfo": {"username": "growth"},
            "object": object,
            "dryRun": false,
        }
    }))
    .unwrap()
}

const SIZES: [usize; 4] = [50, 100, 200, 400];
const MAX_EXPONENT: f64 = 1.2;

/// Least-squares slope of log(work) against log(n).
fn exponent(points: &[(usize, u64)]) -> f64 {
    let xy: Vec<(f64, f64)> = points
        .iter()
        .map(|&(n, w)| ((n as f64).ln(), (w.max(1) as f64).ln()))
        .collect();
    let m = xy.len() as f64;
    let (sx, sy) = xy.iter().fold((0.0, 0.0), |(a, b), (x, y)| (a + x, b + y));
    let sxx: f64 = xy.iter().map(|(x, _)| x * x).sum();
    let sxy: f64 = xy.iter().map(|(x, y)| x * y).sum();
    (m * sxy - sx * sy) / (m * sxx - sx * sx)
}

/// Measure `run` on `input(n)` for every size (the input is made outside the measurement) and
/// assert both counts grow at most as n^MAX_EXPONENT.
fn assert_linear<T>(what: &str, input: impl Fn(usize) -> T, run: impl Fn(&T, usize)) {
    // Warm up once (lazy statics, thread-locals).
    run(&input(SIZES[0]), SIZES[0]);
    let counts: Vec<(usize, (u64, u64))> = SIZES
        .iter()
        .map(|&n| {
            let i = input(n);
            (n, measure(|| run(&i, n)))
        })
        .collect();
    let steps: Vec<(usize, u64)> = counts.iter().map(|&(n, (s, _))| (n, s)).collect();
    let bytes: Vec<(usize, u64)> = counts.iter().map(|&(n, (_, b))| (n, b)).collect();
    let (ks, kb) = (exponent(&steps), exponent(&bytes));
    eprintln!("{what}: steps {steps:?} (k = {ks:.2}), bytes {bytes:?} (k = {kb:.2})");
    assert!(
        steps.iter().all(|&(_, s)| s > 0),
        "{what}: no steps counted"
    );
    assert!(
        ks < MAX_EXPONENT,
        "{what}: steps grow as n^{ks:.2}: {steps:?}"
    );
    assert!(
        kb < MAX_EXPONENT,
        "{what}: allocated bytes grow as n^{kb:.2}: {bytes:?}"
    );
}

/// The default policy, with WIN103's opt-in fix (remove the Linux-only fields) on: every
/// container then has a fix to make.
fn config() -> Config {
    let mut cfg = Config::default();
    cfg.policy.fix_opt_in.insert("WIN103".to_string());
    cfg
}

#[test]
fn cli_lint_is_linear_in_containers() {
    let (cfg, cx) = (config(), Context::default());
    assert_linear("lint", yaml, |text, n| {
        let docs = winlint::source::load(text).unwrap();
        let rep = winlint::engine::lint_object(&docs[0].value, &cfg, &cx, Operation::Lint);
        // Every container's two Linux-only fields (and more) are found.
        assert!(rep.findings.len() >= 2 * n, "{}", rep.findings.len());
    });
}

#[test]
fn cli_fix_is_linear_in_containers() {
    let (cfg, cx) = (config(), Context::default());
    assert_linear("--fix", yaml, |text, _| {
        let fixed = winlint::cli::fix_text(text, &cfg, &cx).unwrap();
        let text = fixed.text.expect("the pod has safe fixes");
        assert!(!text.contains("runAsUser"), "runAsUser is removed");
    });
}

#[test]
fn webhook_is_linear_in_containers() {
    let webhook = Webhook::new(config());
    for endpoint in [Endpoint::Validate, Endpoint::Mutate] {
        assert_linear(
            endpoint.as_str(),
            |n| review(&pod(n)),
            |body, n| {
                let out = webhook.review(body, endpoint).unwrap();
                if endpoint == Endpoint::Mutate {
                    // A removal of each container's runAsUser (and seLinuxOptions).
                    use base64::Engine as _;
                    let r: Value = serde_json::from_slice(&out.body).unwrap();
                    let patch = r["response"]["patch"].as_str().unwrap_or("");
                    let patch = base64::engine::general_purpose::STANDARD
                        .decode(patch)
                        .unwrap();
                    let patch = String::from_utf8(patch).unwrap();
                    assert_eq!(patch.matches("runAsUser").count(), n, "{patch}");
                }
            },
        );
    }
}
