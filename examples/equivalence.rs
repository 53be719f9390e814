//! Equivalence harness for refactors (`scripts/equivalence.sh`): the webhook's answers, byte
//! for byte, on many objects under several configurations, written to one file that a later
//! build must reproduce exactly.
//!
//! `cargo run --example equivalence -- corpus DIR [N] [SEED]` writes the generated corpus
//! (`benches/support`, as `corpus gen` does) for the CLI part of the script.
//!
//! `cargo run --example equivalence -- webhook OUTDIR [N] [SEED]`: the objects are the N
//! (default 2 000) resources of the generated corpus (`benches/support`, the same generator as
//! `corpus gen`), crafted objects for rare paths, and every object of every manifest under
//! `testdata/` that loads; each is sent as an AdmissionReview (CREATE, and UPDATE with an
//! `oldObject`) to `/validate` and `/mutate`, plainly and in a namespace the cluster facts
//! know labelled (Pod Security `restricted`; `winlint.io/default-os=windows`), under each
//! configuration of
//! [`CONFIGS`]; the 41 captured reviews of `testdata/admission` are answered under each
//! configuration too. For every answer the output holds a header line, the response body and
//! what the server logs and counts about it ([`winlint::admission::Outcome`] without the body):
//! `OUTDIR/answers.txt` for the corpus, crafted and captured reviews, and
//! `OUTDIR/testdata/<content hash>.txt` for each testdata file (so a moved fixture keeps its
//! baseline, and a new one is just new).

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use winlint::admission::{Endpoint, Outcome, Webhook};
use winlint::config::Config;

#[path = "../benches/support/mod.rs"]
mod support;

/// (name, winlint.yaml) of the configurations every object is answered under.
const CONFIGS: &[(&str, &str)] = &[
    ("default", ""),
    ("workloads", "mutation: {workloads: true}"),
    (
        "hyperv-probable-oslabel-guard",
        "mutation: {workloads: true, hyperv: true, probable: true, podOsLabel: true, linuxGuard: true}",
    ),
    (
        "mixed-builds",
        "target: {clusterMixedBuilds: true, windowsBuilds: [ltsc2019, ltsc2022]}\nmutation: {workloads: true}",
    ),
    (
        "optin-WIN403-WIN103",
        "fix: {optIn: [WIN403, WIN103]}\nmutation: {workloads: true}",
    ),
    (
        "legacy-hyperv",
        "target: {kubernetesVersion: \"1.12\", windowsBuilds: [\"1803\"], windowsTaints: []}\nmutation: {workloads: true, hyperv: true, podOsLabel: true}",
    ),
    (
        "no-safe-fixes-1.30",
        "target: {kubernetesVersion: \"1.30\"}\nfix: {safe: false, optIn: [WIN005]}\nmutation: {workloads: true, linuxGuard: true}",
    ),
];

/// The labels the cluster facts know for the request's namespace (`None`: no facts).
type Labels = Option<BTreeMap<String, String>>;

/// The namespace of the requests answered with namespace facts.
const LABELLED_NS: &str = "labelled";

/// The endpoints, as (name, endpoint, the labels of the request's namespace).
fn endpoints() -> Vec<(&'static str, Endpoint, Labels)> {
    let labels = |k: &str, v: &str| Some(BTreeMap::from([(k.to_string(), v.to_string())]));
    vec![
        ("/validate", Endpoint::Validate, None),
        (
            "/validate ns:enforce=restricted",
            Endpoint::Validate,
            labels("pod-security.kubernetes.io/enforce", "restricted"),
        ),
        ("/mutate", Endpoint::Mutate, None),
        (
            "/mutate ns:default-os=windows",
            Endpoint::Mutate,
            labels("winlint.io/default-os", "windows"),
        ),
    ]
}

/// The webhooks of a configuration, one per endpoint of [`endpoints`]: those with namespace
/// labels know [`LABELLED_NS`] with them, as the cluster facts would.
fn hooks(config: &Config) -> Vec<Webhook> {
    endpoints()
        .into_iter()
        .map(|(_, _, labels)| match labels {
            None => Webhook::new(config.clone()),
            Some(l) => {
                let mut cx = winlint::model::Context::default();
                cx.namespaces.insert(LABELLED_NS.into(), l);
                Webhook::with_context(config.clone(), std::sync::Arc::new(cx))
            }
        })
        .collect()
}

/// Every manifest under `dir` that loads, as (key, objects): the key is a hash of the file's
/// bytes, so a file keeps its key (and its baseline) when it is moved or renamed.
fn testdata_files(dir: &Path) -> Vec<(String, Vec<Value>)> {
    let mut out = Vec::new();
    for p in walk(dir) {
        if !p
            .extension()
            .is_some_and(|e| e == "yaml" || e == "yml" || e == "json")
            || p.starts_with(dir.join("admission"))
        {
            continue;
        }
        let Ok(bytes) = std::fs::read(&p) else {
            continue;
        };
        let Ok(values) = winlint::source::load_bytes_values(&bytes) else {
            continue;
        };
        let objects: Vec<Value> = values
            .iter()
            .flat_map(|v| {
                winlint::model::workload::objects(v)
                    .into_iter()
                    .map(|(_, o)| o.clone())
            })
            .collect();
        if !objects.is_empty() {
            out.push((format!("{:016x}", fnv1a(&bytes)), objects));
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out.dedup_by(|a, b| a.0 == b.0);
    out
}

/// FNV-1a, 64 bits: a stable content key (no dependency, same on every machine).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Objects made to reach the webhook's rarer paths: a fix set the API server would reject
/// (retried without the fixes that add `spec.os`, then without fixes), the legacy Hyper-V
/// annotation, HostProcess and hostNetwork pods, a Linux-pinned pod under `linuxGuard`.
fn crafted_objects() -> Vec<(String, Value)> {
    let win = "mcr.microsoft.com/windows/servercore:ltsc2022";
    let pod = |name: &str, meta: Value, spec: Value| {
        let mut p = json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "web"}, "spec": spec});
        if let (Some(m), Value::Object(extra)) = (p["metadata"].as_object_mut(), meta) {
            m.extend(extra);
        }
        p
    };
    let objects = vec![
        pod(
            "label-linux",
            json!({"labels": {"kubernetes.io/os": "linux"}}),
            json!({"containers": [{"name": "a", "image": win}]}),
        ),
        pod(
            "label-linux-tolerated",
            json!({"labels": {"kubernetes.io/os": "linux"}}),
            json!({"tolerations": [{"key": "os", "operator": "Equal", "value": "windows", "effect": "NoSchedule"}],
                "containers": [{"name": "a", "image": win}]}),
        ),
        pod(
            "label-linux-selector",
            json!({"labels": {"kubernetes.io/os": "linux", "app": "x"}}),
            json!({"nodeSelector": {"kubernetes.io/os": "windows"},
                "containers": [{"name": "a", "image": win}]}),
        ),
        pod(
            "share-pns",
            json!({}),
            json!({"shareProcessNamespace": false, "securityContext": {"runAsUser": 1000},
                "containers": [{"name": "a", "image": win, "securityContext": {"privileged": false}}]}),
        ),
        pod(
            "hostprocess",
            json!({}),
            json!({"hostNetwork": true, "securityContext": {"windowsOptions": {"hostProcess": true,
                "runAsUserName": "NT AUTHORITY\\SYSTEM"}},
                "containers": [{"name": "a", "image": win}]}),
        ),
        pod(
            "hostprocess-container",
            json!({}),
            json!({"hostNetwork": true, "containers": [{"name": "a", "image": win,
                "securityContext": {"windowsOptions": {"hostProcess": true, "runAsUserName": "NT AUTHORITY\\SYSTEM"}}}]}),
        ),
        pod(
            "hostprocess-pod-no-containers",
            json!({}),
            json!({"securityContext": {"windowsOptions": {"hostProcess": true}}, "containers": []}),
        ),
        pod(
            "two-containers-1803",
            json!({"annotations": {"keep": "me"}}),
            json!({"containers": [{"name": "a", "image": "mcr.microsoft.com/windows/servercore:1803"},
                {"name": "b", "image": "mcr.microsoft.com/windows/nanoserver:1803"}]}),
        ),
        pod(
            "one-container-1803",
            json!({"annotations": {"winlint.io/mutated": "os,earlier"}}),
            json!({"containers": [{"name": "a", "image": "mcr.microsoft.com/windows/servercore:1803"}]}),
        ),
        pod(
            "linux-pinned-windows-image",
            json!({}),
            json!({"nodeSelector": {"kubernetes.io/os": "linux"}, "containers": [{"name": "a", "image": win}]}),
        ),
        pod(
            "unknown-os",
            json!({"labels": {"app": "x"}}),
            json!({"containers": [{"name": "a", "image": "registry.example/app:1"}]}),
        ),
        pod(
            "unknown-os-selector",
            json!({}),
            json!({"nodeSelector": {"disktype": "ssd"}, "containers": [{"name": "a", "image": "registry.example/app:1"}]}),
        ),
        pod(
            "windows-option-probable",
            json!({}),
            json!({"securityContext": {"windowsOptions": {"runAsUserName": "ContainerUser"}},
                "containers": [{"name": "a", "image": "registry.example/app:1"}]}),
        ),
        pod(
            "runtime-class-set",
            json!({}),
            json!({"runtimeClassName": "windows-2022", "containers": [{"name": "a", "image": win}]}),
        ),
        pod(
            "env-and-udp",
            json!({}),
            json!({"containers": [{"name": "a", "image": win,
                "env": [{"name": "Logging:Level", "value": "x"}, {"name": "1BAD", "value": "y"}],
                "ports": [{"containerPort": 53, "protocol": "UDP"}],
                "securityContext": {"capabilities": {"add": ["NET_ADMIN"]}, "readOnlyRootFilesystem": true}}]}),
        ),
    ];
    objects
        .into_iter()
        .map(|o| {
            (
                format!("crafted/{}", o["metadata"]["name"].as_str().unwrap_or("")),
                o,
            )
        })
        .collect()
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(rd) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

fn corpus_objects(n: usize, seed: u64) -> Vec<(String, Value)> {
    let tmp = std::env::temp_dir().join(format!("winlint-equivalence-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    support::write_corpus(&tmp, n, seed);
    let mut paths = walk(&tmp);
    paths.sort();
    let mut out = Vec::new();
    for p in &paths {
        let bytes = std::fs::read(p).expect("corpus file");
        let values = winlint::source::load_bytes_values(&bytes).expect("corpus loads");
        let rel = p.strip_prefix(&tmp).unwrap_or(p).display().to_string();
        for (i, v) in values.into_iter().enumerate() {
            out.push((format!("corpus/{rel}#{i}"), v));
        }
    }
    let _ = std::fs::remove_dir_all(&tmp);
    out
}

/// The AdmissionReview of `object`; in namespace `ns` (request and objects) when given.
fn review(i: usize, op: &str, object: &Value, old: &Value, ns: Option<&str>) -> Vec<u8> {
    let in_ns = |o: &Value| {
        let mut o = o.clone();
        if let (Some(ns), Some(meta)) = (ns, o.as_object_mut()) {
            let m = meta.entry("metadata").or_insert_with(|| json!({}));
            if let Some(m) = m.as_object_mut() {
                m.insert("namespace".into(), ns.into());
            }
        }
        o
    };
    let (object, old) = (&in_ns(object), &in_ns(old));
    let kind = object.get("kind").cloned().unwrap_or(Value::Null);
    let mut req = json!({
        "uid": format!("uid-{i}"),
        "kind": {"group": "", "version": "v1", "kind": kind},
        "resource": {"group": "", "version": "v1", "resource": "pods"},
        "operation": op,
        "namespace": object.pointer("/metadata/namespace").cloned().unwrap_or("default".into()),
        "name": object.pointer("/metadata/name").cloned().unwrap_or("".into()),
        "object": object,
        "dryRun": false,
    });
    if op == "UPDATE" {
        req["oldObject"] = old.clone();
    }
    serde_json::to_vec(&json!({
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": req,
    }))
    .expect("serializes")
}

fn write_outcome(
    out: &mut impl Write,
    header: &str,
    result: Result<Outcome, winlint::admission::BadRequest>,
) -> std::io::Result<()> {
    writeln!(out, "== {header}")?;
    match result {
        Err(e) => writeln!(out, "bad request: {e}"),
        Ok(o) => {
            out.write_all(&o.body)?;
            writeln!(out)?;
            writeln!(
                out,
                "-- allowed={} decision={} findings={:?} patched={:?} patched_rules={:?} error={:?} name={:?}",
                o.allowed,
                o.decision.as_str(),
                o.findings,
                o.patched,
                o.patched_rules,
                o.error,
                o.name
            )
        }
    }
}

/// An object to answer: (label, object, the `oldObject` of its UPDATE).
type Subject = (String, Value, Value);

/// Answer every object under every configuration on every endpoint, CREATE and UPDATE (whose
/// `oldObject` is `old`), into `out`; returns the number of answers.
fn answer_all(out: &mut impl Write, hooks: &[Webhook], cname: &str, objects: &[Subject]) -> usize {
    let mut answers = 0;
    for (i, (label, object, old)) in objects.iter().enumerate() {
        for op in ["CREATE", "UPDATE"] {
            let plain = review(i, op, object, old, None);
            let labelled = review(i, op, object, old, Some(LABELLED_NS));
            for ((path, ep, labels), hook) in endpoints().into_iter().zip(hooks) {
                let body = if labels.is_some() { &labelled } else { &plain };
                let res = hook.review(body, ep);
                write_outcome(out, &format!("{cname} {path} {op} {label}"), res).expect("write");
                answers += 1;
            }
        }
    }
    answers
}

fn webhook(out_dir: &Path, n: usize, seed: u64) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    // Corpus and crafted objects: an UPDATE's oldObject is the object before it.
    let mut objects: Vec<(String, Value)> = corpus_objects(n, seed);
    objects.extend(crafted_objects());
    let objects: Vec<Subject> = (0..objects.len())
        .map(|i| {
            let (label, o) = &objects[i];
            (
                label.clone(),
                o.clone(),
                objects[i.saturating_sub(1)].1.clone(),
            )
        })
        .collect();
    // Testdata files, one output each: an UPDATE's oldObject is the object itself.
    let files: Vec<(String, Vec<Subject>)> = testdata_files(&root.join("testdata"))
        .into_iter()
        .map(|(key, objs)| {
            let objs = objs
                .into_iter()
                .enumerate()
                .map(|(i, o)| (format!("{key}#{i}"), o.clone(), o))
                .collect();
            (key, objs)
        })
        .collect();
    let captured = support::real_reviews();
    std::fs::create_dir_all(out_dir.join("testdata")).expect("create OUT/testdata");
    let mut out = std::io::BufWriter::new(
        std::fs::File::create(out_dir.join("answers.txt")).expect("create OUT/answers.txt"),
    );
    let mut per_file: Vec<std::io::BufWriter<std::fs::File>> = files
        .iter()
        .map(|(key, _)| {
            let f = std::fs::File::create(out_dir.join("testdata").join(format!("{key}.txt")))
                .expect("create OUT/testdata/KEY.txt");
            std::io::BufWriter::new(f)
        })
        .collect();
    let (mut answers, mut file_answers) = (0usize, 0usize);
    for (cname, yaml) in CONFIGS {
        let config = Config::from_yaml(yaml, cname).expect("config");
        let hooks = hooks(&config);
        let hook = &hooks[0];
        answers += answer_all(&mut out, &hooks, cname, &objects);
        for ((_, objs), w) in files.iter().zip(per_file.iter_mut()) {
            file_answers += answer_all(w, &hooks, cname, objs);
        }
        for (name, path, body) in &captured {
            let ep = if path.starts_with("/mutate") {
                Endpoint::Mutate
            } else {
                Endpoint::Validate
            };
            let res = hook.review(body, ep);
            write_outcome(&mut out, &format!("{cname} {path} captured/{name}"), res)
                .expect("write");
            answers += 1;
        }
    }
    out.flush().expect("flush");
    for w in &mut per_file {
        w.flush().expect("flush");
    }
    let testdata_objects: usize = files.iter().map(|(_, o)| o.len()).sum();
    println!(
        "{answers} answers ({} corpus and crafted objects x 2 operations x 4 endpoints + {} captured reviews, x {} configurations) and {file_answers} answers for {testdata_objects} objects of {} testdata files in {}",
        objects.len(),
        captured.len(),
        CONFIGS.len(),
        files.len(),
        out_dir.display()
    );
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("webhook") => {
            let out = PathBuf::from(args.get(1).expect("webhook OUTDIR [N] [SEED]"));
            let n = args.get(2).map_or(2_000, |s| s.parse().expect("N"));
            let seed = args.get(3).map_or(4, |s| s.parse().expect("SEED"));
            webhook(&out, n, seed);
        }
        Some("corpus") => {
            let dir = PathBuf::from(args.get(1).expect("corpus DIR [N] [SEED]"));
            let n = args.get(2).map_or(10_000, |s| s.parse().expect("N"));
            let seed = args.get(3).map_or(4, |s| s.parse().expect("SEED"));
            let (files, resources) = support::write_corpus(&dir, n, seed);
            println!(
                "wrote {resources} resources in {files} files under {}",
                dir.display()
            );
        }
        _ => {
            eprintln!("usage: equivalence webhook OUTDIR [N] [SEED] | corpus DIR [N] [SEED]");
            std::process::exit(2);
        }
    }
}
