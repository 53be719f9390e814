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
    let mut pod = base();
    pod["spec"]["containers"] = json!(containers);
    pod["spec"]["volumes"] = json!(volumes);
    pod
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

// ---------------------------------------------------------------------------------------------
// Every list of a pod (issue 30, item 2): each grown alone, inside one container where it is a
// container's list, for lint, --fix, /validate and /mutate, CREATE and UPDATE.

/// The pod every dimension grows from: pinned to Windows, one container "app" with a fixable
/// Linux-only field (WIN103's opt-in fix is on in [`config`]), so that --fix and /mutate always
/// have something to do.
fn base() -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "big", "namespace": "default"},
        "spec": {
            "os": {"name": "windows"},
            "nodeSelector": {"kubernetes.io/os": "windows"},
            "tolerations": [{"key": "os", "value": "windows", "effect": "NoSchedule"}],
            "containers": [{
                "name": "app",
                "image": "mcr.microsoft.com/windows/servercore:ltsc2022",
                "securityContext": {"runAsUser": 1000},
            }],
        }
    })
}

/// `base()` with `value` at `pointer` (a PodSpec field or container 0's).
fn with(pointer: &str, value: Value) -> Value {
    let mut pod = base();
    let (parent, key) = pointer.rsplit_once('/').unwrap();
    pod.pointer_mut(parent).unwrap()[key] = value;
    pod
}

fn items(n: usize, item: impl Fn(usize) -> Value) -> Value {
    Value::Array((0..n).map(item).collect())
}

const APP: &str = "/spec/containers/0";

/// A pod with `n` items of one list.
type Generator = fn(usize) -> Value;

/// One generator per dimension: a pod with `n` items of one list and everything else as in
/// [`base`]. The items are varied the way rules care about (findings, fixes, lookalikes), so
/// that every rule that reads the list has work per item.
const DIMENSIONS: &[(&str, Generator)] = &[
    ("containers", pod),
    ("initContainers", |n| {
        with(
            "/spec/initContainers",
            items(n, |i| {
                json!({"name": format!("i{i}"), "image": "mcr.microsoft.com/windows/nanoserver:ltsc2022",
                       "command": ["cmd", "/c", "echo"], "securityContext": {"runAsGroup": 1}})
            }),
        )
    }),
    ("ephemeralContainers", |n| {
        with(
            "/spec/ephemeralContainers",
            items(n, |i| {
                json!({"name": format!("e{i}"), "image": "mcr.microsoft.com/windows/servercore:ltsc2019",
                       "targetContainerName": "app", "securityContext": {"runAsUser": 1}})
            }),
        )
    }),
    ("volumes", |n| {
        with(
            "/spec/volumes",
            items(n, |i| match i % 4 {
                0 => json!({"name": format!("v{i}"), "emptyDir": {}}),
                1 => json!({"name": format!("v{i}"), "emptyDir": {"medium": "Memory"}}),
                2 => {
                    json!({"name": format!("v{i}"), "secret": {"secretName": format!("s{i}"), "defaultMode": 256}})
                }
                _ => {
                    json!({"name": format!("v{i}"), "hostPath": {"path": format!("/var/lib/{i}")}})
                }
            }),
        )
    }),
    ("volumeMounts", |n| {
        // n volumes and n mounts in one container (the adversarial pod's shape): Linux paths
        // (WIN308, fixable), Windows paths, case-only twins (WIN309), pipes at a directory
        // (WIN311), subPaths.
        let mut pod = with(
            "/spec/volumes",
            items(n, |i| match i % 4 {
                3 => {
                    json!({"name": format!("v{i}"), "hostPath": {"path": format!("\\\\.\\pipe\\p{i}")}})
                }
                _ => json!({"name": format!("v{i}"), "emptyDir": {}}),
            }),
        );
        pod["spec"]["containers"][0]["volumeMounts"] = items(n, |i| match i % 4 {
            0 => json!({"name": format!("v{i}"), "mountPath": format!("/data/{i}")}),
            1 => json!({"name": format!("v{i}"), "mountPath": format!("C:\\data\\{i}")}),
            2 => {
                json!({"name": format!("v{i}"), "mountPath": format!("c:\\DATA\\{}", i - 1), "subPath": "x"})
            }
            _ => json!({"name": format!("v{i}"), "mountPath": format!("C:\\pipe{i}")}),
        });
        pod
    }),
    ("env", |n| {
        with(
            &format!("{APP}/env"),
            items(n, |i| match i % 4 {
                0 => json!({"name": format!("VAR_{i}"), "value": "x"}),
                1 => json!({"name": format!("var_{}", i - 1), "value": "y"}),
                2 => {
                    json!({"name": format!("REF_{i}"), "value": format!("$(VAR_{}) http://svc{i}.ns", i - 2)})
                }
                _ => {
                    json!({"name": format!("bad.{i}"), "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}})
                }
            }),
        )
    }),
    ("envFrom", |n| {
        with(
            &format!("{APP}/envFrom"),
            items(n, |i| match i % 3 {
                0 => {
                    json!({"configMapRef": {"name": format!("cm{i}")}, "prefix": format!("P{i}_")})
                }
                1 => {
                    json!({"secretRef": {"name": format!("s{i}")}, "prefix": format!("p{}_", i - 1)})
                }
                _ => json!({"configMapRef": {"name": format!("cm{i}")}, "prefix": "1-bad."}),
            }),
        )
    }),
    ("ports", |n| {
        with(
            &format!("{APP}/ports"),
            items(n, |i| {
                json!({"name": format!("p{i}"), "containerPort": 1000 + i,
                       "protocol": if i % 2 == 0 { "UDP" } else { "TCP" }, "hostPort": 2000 + i})
            }),
        )
    }),
    ("command/args", |n| {
        let mut pod = with(
            &format!("{APP}/command"),
            json!(["powershell.exe", "-Command"]),
        );
        pod["spec"]["containers"][0]["args"] =
            items(n, |i| json!(format!("Write-Host svc{i}.ns /tmp/{i}")));
        pod["spec"]["containers"][0]["livenessProbe"] =
            json!({"exec": {"command": items(n, |i| json!(format!("arg{i}")))}});
        pod
    }),
    ("tolerations", |n| {
        with(
            "/spec/tolerations",
            items(n, |i| match i % 3 {
                0 => json!({"key": format!("k{i}"), "operator": "Exists", "effect": "NoSchedule"}),
                1 => {
                    json!({"key": "os", "operator": "Equal", "value": format!("w{i}"), "effect": "NoExecute"})
                }
                _ => {
                    json!({"key": "node.kubernetes.io/windows-build", "value": format!("10.0.{i}"), "effect": "NoSchedule"})
                }
            }),
        )
    }),
    ("nodeAffinity terms", |n| {
        let term = |i: usize| {
            json!({"matchExpressions": [
                {"key": "kubernetes.io/os", "operator": "In", "values": ["windows"]},
                {"key": "node.kubernetes.io/windows-build", "operator": "In", "values": [format!("10.0.{i}")]},
            ]})
        };
        with(
            "/spec/affinity",
            json!({"nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": items(n, term)},
                "preferredDuringSchedulingIgnoredDuringExecution":
                    items(n, |i| json!({"weight": 1 + i % 100, "preference": term(i)})),
            }}),
        )
    }),
    ("nodeAffinity values", |n| {
        with(
            "/spec/affinity",
            json!({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                {"matchExpressions": [
                    {"key": "kubernetes.io/os", "operator": "In", "values": items(n, |i| if i == 0 { json!("windows") } else { json!(format!("os{i}")) })},
                    {"key": "node.kubernetes.io/windows-build", "operator": "NotIn", "values": items(n, |i| json!(format!("10.0.{i}")))},
                ]}
            ]}}}),
        )
    }),
    ("podAffinity terms", |n| {
        let term = |i: usize| {
            json!({"topologyKey": format!("zone{i}"), "labelSelector": {"matchExpressions": [
                {"key": "app", "operator": "In", "values": [format!("a{i}")]}]}})
        };
        with(
            "/spec/affinity",
            json!({"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": items(n, term)},
                   "podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution":
                       items(n, |i| json!({"weight": 1, "podAffinityTerm": term(i)}))}}),
        )
    }),
    ("topologySpreadConstraints", |n| {
        with(
            "/spec/topologySpreadConstraints",
            items(n, |i| {
                json!({"maxSkew": 1, "topologyKey": format!("zone{i}"), "whenUnsatisfiable": "DoNotSchedule",
                       "labelSelector": {"matchLabels": {"app": format!("a{i}")}}})
            }),
        )
    }),
    ("hostAliases", |n| {
        with(
            "/spec/hostAliases",
            items(
                n,
                |i| json!({"ip": format!("10.0.{}.{}", i / 250, i % 250), "hostnames": [format!("h{i}"), format!("h{i}.local")]}),
            ),
        )
    }),
    ("imagePullSecrets", |n| {
        with(
            "/spec/imagePullSecrets",
            items(n, |i| json!({"name": format!("s{i}")})),
        )
    }),
    ("resourceClaims", |n| {
        let mut pod = with(
            "/spec/resourceClaims",
            items(
                n,
                |i| json!({"name": format!("r{i}"), "resourceClaimName": format!("c{i}")}),
            ),
        );
        pod["spec"]["containers"][0]["resources"] =
            json!({"claims": items(n, |i| json!({"name": format!("r{i}")}))});
        pod
    }),
];

/// A value as block-style YAML (as people write it; strings double-quoted, JSON's escapes are
/// YAML's).
fn to_yaml(v: &Value) -> String {
    fn scalar(v: &Value) -> String {
        match v {
            Value::Object(m) if m.is_empty() => "{}".into(),
            Value::Array(a) if a.is_empty() => "[]".into(),
            other => other.to_string(),
        }
    }
    fn block(v: &Value, indent: usize, out: &mut String) {
        let pad = " ".repeat(indent);
        match v {
            Value::Object(m) if !m.is_empty() => {
                for (k, val) in m {
                    let key = if k
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || "./-_".contains(c))
                    {
                        k.clone()
                    } else {
                        Value::from(k.as_str()).to_string()
                    };
                    match val {
                        Value::Object(m) if !m.is_empty() => {
                            out.push_str(&format!("{pad}{key}:\n"));
                            block(val, indent + 2, out);
                        }
                        Value::Array(a) if !a.is_empty() => {
                            out.push_str(&format!("{pad}{key}:\n"));
                            block(val, indent, out);
                        }
                        _ => out.push_str(&format!("{pad}{key}: {}\n", scalar(val))),
                    }
                }
            }
            Value::Array(a) if !a.is_empty() => {
                for item in a {
                    match item {
                        Value::Object(m) if !m.is_empty() => {
                            let mut inner = String::new();
                            block(item, indent + 2, &mut inner);
                            out.push_str(&format!("{pad}- {}", &inner[indent + 2..]));
                        }
                        Value::Array(l) if !l.is_empty() => {
                            out.push_str(&format!("{pad}- {item}\n"));
                        }
                        _ => out.push_str(&format!("{pad}- {}\n", scalar(item))),
                    }
                }
            }
            _ => out.push_str(&format!("{pad}{}\n", scalar(v))),
        }
    }
    let mut out = String::new();
    block(v, 0, &mut out);
    out
}

/// An AdmissionReview of `object`; on UPDATE the old object is the same pod with container 0
/// on another image (so that /validate judges both and finds errors in the old one).
fn review_of(object: &Value, operation: &str) -> Vec<u8> {
    let mut r: Value = serde_json::from_slice(&review(object)).unwrap();
    r["request"]["operation"] = json!(operation);
    if operation == "UPDATE" {
        let mut old = object.clone();
        old["spec"]["containers"][0]["image"] =
            json!("mcr.microsoft.com/windows/servercore:ltsc2019");
        r["request"]["oldObject"] = old;
    }
    serde_json::to_vec(&r).unwrap()
}

const MODES: &[&str] = &[
    "lint",
    "--fix",
    "/validate CREATE",
    "/validate UPDATE",
    "/mutate CREATE",
    "/mutate UPDATE",
];

/// The input of `mode` for `pod`: YAML text for the CLI, an AdmissionReview for the webhook.
fn input_of(mode: &str, pod: &Value) -> Vec<u8> {
    match mode {
        "lint" | "--fix" => to_yaml(pod).into_bytes(),
        m => review_of(pod, m.rsplit(' ').next().unwrap()),
    }
}

fn run_mode(mode: &str, input: &[u8], cfg: &Config, cx: &Context, webhook: &Webhook) {
    match mode {
        "lint" => {
            let text = std::str::from_utf8(input).unwrap();
            let docs = winlint::source::load(text).unwrap();
            let rep = winlint::engine::lint_object(&docs[0].value, cfg, cx, Operation::Lint);
            assert!(!rep.findings.is_empty());
        }
        "--fix" => {
            let text = std::str::from_utf8(input).unwrap();
            let fixed = winlint::cli::fix_text(text, cfg, cx).unwrap();
            let text = fixed.text.expect("the pod has safe fixes");
            assert!(!text.contains("runAsUser: 1000"), "runAsUser is removed");
        }
        m => {
            let endpoint = if m.starts_with("/validate") {
                Endpoint::Validate
            } else {
                Endpoint::Mutate
            };
            let out = webhook.review(input, endpoint).unwrap();
            let r: Value = serde_json::from_slice(&out.body).unwrap();
            assert!(r["response"]["allowed"].is_boolean(), "{r}");
        }
    }
}

/// Growth exponents of one (dimension, mode): steps and bytes allocated.
fn exponents(
    make: Generator,
    mode: &str,
    cfg: &Config,
    cx: &Context,
    webhook: &Webhook,
) -> [f64; 2] {
    let input = |n: usize| input_of(mode, &make(n));
    run_mode(mode, &input(DIM_SIZES[0]), cfg, cx, webhook);
    let mut points = Vec::new();
    for &n in &DIM_SIZES {
        let i = input(n);
        let (s, b) = measure(|| run_mode(mode, &i, cfg, cx, webhook));
        points.push((n, s, b));
    }
    let k = |f: fn(&(usize, u64, u64)) -> u64| {
        exponent(&points.iter().map(|p| (p.0, f(p))).collect::<Vec<_>>())
    };
    [k(|p| p.1), k(|p| p.2)]
}

const DIM_SIZES: [usize; 4] = [100, 200, 400, 800];

/// [`config`] with observed nodes (a tainted Windows Server 2022 group and a Linux group), so
/// that the scheduler's predicate runs: every toleration, term and value against each group.
fn config_with_nodes() -> Config {
    use winlint::model::nodes::{NodeGroup, NodeOs};
    let group = |os: &str, build: &str, taints: &[&str]| {
        let mut labels = std::collections::BTreeMap::new();
        labels.insert("kubernetes.io/os".to_string(), os.to_string());
        if !build.is_empty() {
            labels.insert(
                "node.kubernetes.io/windows-build".to_string(),
                build.to_string(),
            );
        }
        NodeGroup {
            os: NodeOs::parse(os),
            build: winlint::model::windows::parse_build(build),
            revision: None,
            taints: taints
                .iter()
                .map(|t| winlint::model::Taint::parse(t).unwrap())
                .collect(),
            labels,
            runtime: Some("containerd://1.7.20".into()),
            nodes: (0..3)
                .map(|i| (format!("{os}{i}"), Some(format!("{os}{i}"))))
                .collect(),
        }
    };
    let mut cfg = config();
    cfg.target.nodes = Some(
        vec![
            group("windows", "10.0.20348", &["os=windows:NoSchedule"]),
            group("linux", "", &[]),
        ]
        .into(),
    );
    cfg
}

/// The table: one row per dimension, one column per mode, each cell the `steps/bytes`
/// exponents (0.00: the list costs no steps per item). Fails on any exponent of 1.2 or more
/// (after printing the table: `cargo test --test prop_growth every_dimension -- --nocapture`;
/// `GROWTH_ONLY=env` measures the dimensions whose name contains `env`).
#[test]
fn every_dimension_is_linear() {
    let (cfg, cx) = (config_with_nodes(), Context::default());
    let webhook = Webhook::new(config_with_nodes());
    let only = std::env::var("GROWTH_ONLY").unwrap_or_default();
    let mut table = format!("{:<26}", "dimension (steps/bytes)");
    for m in MODES {
        table.push_str(&format!(" | {m:<16}"));
    }
    table.push('\n');
    let mut failed = Vec::new();
    for (dim, make) in DIMENSIONS {
        if !only.is_empty() && !dim.contains(only.as_str()) {
            continue;
        }
        table.push_str(&format!("{dim:<26}"));
        for mode in MODES {
            let [ks, kb] = exponents(*make, mode, &cfg, &cx, &webhook);
            table.push_str(&format!(" | {ks:>4.2}/{kb:<4.2}{:7}", ""));
            if ks >= MAX_EXPONENT || kb >= MAX_EXPONENT {
                failed.push(format!("{dim} {mode}: steps n^{ks:.2}, bytes n^{kb:.2}"));
            }
        }
        table.push('\n');
    }
    eprintln!("growth exponents, n = {DIM_SIZES:?} items of one list:\n{table}");
    assert!(failed.is_empty(), "super-linear: {failed:#?}");
}
