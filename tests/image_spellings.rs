//! Issue 30 §3: every spelling of an image that containerd pulls from the same place gets the
//! same findings. `mcr.microsoft.com:443/windows/servercore:1809` is pulled from
//! `mcr.microsoft.com` (containerd connects to the port given; 443 is HTTPS's own), yet it got no
//! finding at all, on create and on `kubectl set image`: a way past the webhook.
//!
//! For every object of the corpora (`testdata/realworld/`, `testdata/examples/`), each of its
//! images is respelled in every way that names the same image (`model::image`'s normal form):
//! an explicit `:443` (and `:0443`), the host in upper case, the full `docker.io/library/` form,
//! `index.docker.io`, `registry-1.docker.io` (with `:443`). Each respelled object must get, from
//! the linter (`engine::lint_object`), the findings of the object as written (rule, severity,
//! pointer, fix, and the message and fix operations once the spellings are read back as
//! written), and from the webhook's `/validate` the same answer (allowed, decision, the rule
//! IDs and severities, what was exempted, would deny or be patched, the warnings' rules), on
//! CREATE and on UPDATE the `kubectl set image` way (the old object holds a good image, the new
//! one the spelling), and from `/mutate` the same patch on CREATE. The registry client sees one image too: one lookup, one cache entry, one
//! metric label for every spelling (against a loopback fake registry).

mod registry_support;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use base64::Engine;
use serde_json::{Value, json};
use winlint::admission::{Endpoint, Outcome, Webhook};
use winlint::config::Config;
use winlint::engine;
use winlint::model::image::{self, ImageRef};
use winlint::model::workload::is_pod_kind;
use winlint::model::{Context, Operation};
use winlint::registry::source::{Background, image_references, reader_of, resolve_all};
use winlint::registry::{Credentials, Keyring, Limits, RegistryClient, RegistryMetrics};
use winlint::registry::{Resolver, Settings};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn yaml_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            yaml_files(&p, out);
        } else if p
            .extension()
            .is_some_and(|e| e == "yaml" || e == "yml" || e == "json")
        {
            out.push(p);
        }
    }
}

/// Every object of the corpora that holds a container image: (where, object).
fn corpus() -> Vec<(String, Value)> {
    let mut files = Vec::new();
    for dir in [
        "testdata/realworld/windows",
        "testdata/realworld/linux",
        "testdata/examples",
    ] {
        yaml_files(&root().join(dir), &mut files);
    }
    let mut out = Vec::new();
    for p in files {
        let Ok(objects) = winlint::source::load_bytes_values(&std::fs::read(&p).unwrap()) else {
            continue; // a file the corpus keeps unreadable on purpose
        };
        for (i, o) in objects.into_iter().enumerate() {
            let mut images = Vec::new();
            walk_images(&o, &mut |s| images.push(s.to_string()));
            if o.is_object() && !images.is_empty() {
                let name = p.strip_prefix(root()).unwrap().display().to_string();
                out.push((format!("{name}#{i}"), o));
            }
        }
    }
    out
}

/// Every container's `image` (any `image` string of an object in a `containers`,
/// `initContainers` or `ephemeralContainers` list).
fn walk_images(v: &Value, f: &mut dyn FnMut(&str)) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                if matches!(
                    k.as_str(),
                    "containers" | "initContainers" | "ephemeralContainers"
                ) && let Some(list) = x.as_array()
                {
                    for c in list {
                        if let Some(i) = c.get("image").and_then(Value::as_str) {
                            f(i);
                        }
                    }
                }
                walk_images(x, f);
            }
        }
        Value::Array(a) => a.iter().for_each(|x| walk_images(x, f)),
        _ => {}
    }
}

/// `v` with every container image replaced by `respell(image)` (kept where it gives `None`).
fn with_images(v: &Value, respell: &dyn Fn(&str) -> Option<String>) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, x)| {
                    let x = match (k.as_str(), x.as_array()) {
                        ("containers" | "initContainers" | "ephemeralContainers", Some(list)) => {
                            Value::Array(
                                list.iter()
                                    .map(|c| {
                                        let mut c = with_images(c, respell);
                                        if let Some(s) =
                                            c.get("image").and_then(Value::as_str).and_then(respell)
                                        {
                                            c["image"] = s.into();
                                        }
                                        c
                                    })
                                    .collect(),
                            )
                        }
                        _ => with_images(x, respell),
                    };
                    (k.clone(), x)
                })
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(|x| with_images(x, respell)).collect()),
        other => other.clone(),
    }
}

/// The ways to spell an image that name the same one.
#[derive(Debug, Clone, Copy)]
enum Spelling {
    /// `mcr.microsoft.com:443/…`; Docker Hub's as `registry-1.docker.io:443/library/…`.
    Port443,
    /// `mcr.microsoft.com:0443/…` (Go dials port 443); Docker Hub's via `index.docker.io`.
    Port0443,
    /// The host in upper case (`MCR.MICROSOFT.COM/…`, `DOCKER.IO/library/…`).
    UpperHost,
    /// The normal form's registry and repository (`docker.io/library/nginx:1.25`).
    Full,
    /// Docker Hub's legacy name, `index.docker.io/nginx:1.25`.
    Index,
    /// Docker Hub's API host, `registry-1.docker.io/library/nginx:1.25`.
    Registry1,
}

const SPELLINGS: [Spelling; 6] = [
    Spelling::Port443,
    Spelling::Port0443,
    Spelling::UpperHost,
    Spelling::Full,
    Spelling::Index,
    Spelling::Registry1,
];

/// `image` spelled `how`, or `None` when that spelling does not apply (a reference that does not
/// parse; a registry with a port or on loopback; Docker Hub's names for other registries).
fn respell(image: &str, how: Spelling) -> Option<String> {
    let r = image::parse(image)?;
    let hub = r.registry == "docker.io";
    let (host, port) = match r.registry.rsplit_once(':') {
        Some((h, p)) if p.bytes().all(|b| b.is_ascii_digit()) => (h, Some(p)),
        _ => (r.registry.as_str(), None),
    };
    if image::is_loopback(host) {
        return None;
    }
    let rest = |r: &ImageRef, repository: &str| {
        let mut s = repository.to_string();
        if let Some(t) = &r.tag {
            s = format!("{s}:{t}");
        }
        if let Some(d) = &r.digest {
            s = format!("{s}@{d}");
        }
        s
    };
    let familiar = r.familiar();
    let out = match how {
        Spelling::Port443 if port.is_none() && hub => {
            format!("registry-1.docker.io:443/{}", rest(&r, &r.repository))
        }
        Spelling::Port443 if port.is_none() => format!("{host}:443/{}", rest(&r, &r.repository)),
        Spelling::Port0443 if port.is_none() && hub => {
            format!("index.docker.io:0443/{}", rest(&r, &r.repository))
        }
        Spelling::Port0443 if port.is_none() => {
            format!("{host}:0443/{}", rest(&r, &r.repository))
        }
        Spelling::Port443 | Spelling::Port0443 => return None,
        Spelling::UpperHost => format!(
            "{}/{}",
            r.registry.to_ascii_uppercase(),
            rest(&r, &r.repository)
        ),
        Spelling::Full => format!("{}/{}", r.registry, rest(&r, &r.repository)),
        Spelling::Index if hub => format!("index.docker.io/{}", rest(&r, &familiar)),
        Spelling::Registry1 if hub => {
            format!("registry-1.docker.io/{}", rest(&r, &r.repository))
        }
        Spelling::Index | Spelling::Registry1 => return None,
    };
    // The spelling names the same image, and is another string.
    assert_eq!(image::parse(&out).as_ref(), Some(&r), "{image} as {out}");
    (out != image).then_some(out)
}

/// What changes in a message when an image is respelled: the spellings, read back as written
/// (longest first, so that a spelling holding its original is read back whole).
fn read_back(text: &str, spelled: &BTreeMap<String, String>) -> String {
    let mut pairs: Vec<(&String, &String)> = spelled.iter().collect();
    pairs.sort_by_key(|(s, _)| std::cmp::Reverse(s.len()));
    let mut t = text.to_string();
    for (spelling, original) in pairs {
        t = t.replace(spelling.as_str(), original);
    }
    t
}

/// The linter's findings of `object`, comparable across spellings.
fn lint(object: &Value, spelled: &BTreeMap<String, String>) -> Vec<String> {
    let report = engine::lint_object(
        object,
        &Config::default(),
        &Context::default(),
        Operation::Create,
    );
    let mut out: Vec<String> = report
        .findings
        .iter()
        .map(|f| {
            let fix = f.fix.as_ref().map(|x| {
                let ops = serde_json::to_string(&x.ops).unwrap();
                format!("{:?} {} {}", x.safety, x.description, ops)
            });
            read_back(
                &format!(
                    "{} {:?} {} {} | fix: {fix:?}",
                    f.rule.id, f.severity, f.pointer, f.message
                ),
                spelled,
            )
        })
        .collect();
    out.sort();
    out
}

fn review(object: &Value, old: Option<&Value>) -> Vec<u8> {
    let kind = object["kind"].as_str().unwrap_or("Pod");
    let mut request = json!({"uid": "u", "kind": {"group": "", "version": "v1", "kind": kind},
        "resource": {"group": "", "version": "v1", "resource": "pods"},
        "operation": if old.is_some() { "UPDATE" } else { "CREATE" },
        "namespace": "default", "object": object});
    if let Some(old) = old {
        request["oldObject"] = old.clone();
    }
    serde_json::to_vec(&json!({"apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview", "request": request}))
    .unwrap()
}

/// `/validate`'s answer to `body`, comparable across spellings.
fn validate(webhook: &Webhook, body: &[u8]) -> String {
    answer(webhook, Endpoint::Validate, body, &BTreeMap::new())
}

/// The webhook's answer to `body` at `endpoint`, comparable across spellings: its patch with
/// the spellings read back as written.
fn answer(
    webhook: &Webhook,
    endpoint: Endpoint,
    body: &[u8],
    spelled: &BTreeMap<String, String>,
) -> String {
    let o: Outcome = webhook.review(body, endpoint).unwrap();
    let answer: Value = serde_json::from_slice(&o.body).unwrap();
    let response = &answer["response"];
    // The warnings' rules (their text is shortened to the API server's budget, so its length
    // depends on the spelling's).
    let warnings: Vec<&str> = response["warnings"]
        .as_array()
        .map(|w| {
            w.iter()
                .map(|w| w.as_str().unwrap().split(':').next().unwrap())
                .collect()
        })
        .unwrap_or_default();
    let patch = response["patch"].as_str().map(|p| {
        let bytes = base64::engine::general_purpose::STANDARD.decode(p).unwrap();
        read_back(&String::from_utf8(bytes).unwrap(), spelled)
    });
    format!(
        "allowed {} {:?} code {} findings {:?} exempted {:?} would deny {:?} patched {:?} {:?} error {:?} warnings {warnings:?} patch {patch:?}",
        o.allowed,
        o.decision,
        response["status"]["code"],
        o.findings,
        o.exempted,
        o.would_deny,
        o.patched,
        o.patched_rules,
        o.error,
    )
}

/// The image `kubectl set image` replaces: the old object holds it everywhere. A Windows
/// Server 2022 image (the default target's build) that no corpus object names, so that each
/// UPDATE changes the spec (an UPDATE that leaves it as it was is not warned again).
const GOOD: &str = "mcr.microsoft.com/windows/servercore:10.0.20348.2227";

#[test]
fn every_spelling_of_every_corpus_image_gets_the_same_findings() {
    let webhook = Webhook::new(Config::default());
    let corpus = corpus();
    assert!(corpus.len() >= 100, "the corpus: {} objects", corpus.len());
    let (mut variants, mut images, mut patches) = (0, BTreeSet::new(), 0);
    let mut failures = Vec::new();
    for (name, object) in &corpus {
        let lint_as_written = lint(object, &BTreeMap::new());
        let pod_kind = is_pod_kind(object["kind"].as_str().unwrap_or(""));
        let old = with_images(object, &|_| Some(GOOD.to_string()));
        assert_ne!(&old, object, "{name} names {GOOD}");
        let (create, update, mutate) = match pod_kind {
            true => (
                validate(&webhook, &review(object, None)),
                validate(&webhook, &review(object, Some(&old))),
                answer(
                    &webhook,
                    Endpoint::Mutate,
                    &review(object, None),
                    &BTreeMap::new(),
                ),
            ),
            false => Default::default(),
        };
        patches += usize::from(mutate.contains("patch Some"));
        for how in SPELLINGS {
            let mut spelled = BTreeMap::new();
            walk_images(object, &mut |i| {
                if let Some(s) = respell(i, how) {
                    spelled.insert(s, i.to_string());
                }
            });
            if spelled.is_empty() {
                continue;
            }
            images.extend(spelled.values().cloned());
            variants += 1;
            let variant = with_images(object, &|i| respell(i, how));
            let got = lint(&variant, &spelled);
            if got != lint_as_written {
                failures.push(format!(
                    "{name} {how:?}: lint\n  as written: {lint_as_written:#?}\n  respelled: {got:#?}"
                ));
            }
            if !pod_kind {
                continue;
            }
            let got = validate(&webhook, &review(&variant, None));
            if got != create {
                failures.push(format!(
                    "{name} {how:?}: /validate CREATE\n  as written: {create}\n  respelled:  {got}"
                ));
            }
            let got = validate(&webhook, &review(&variant, Some(&old)));
            if got != update {
                failures.push(format!(
                    "{name} {how:?}: /validate UPDATE\n  as written: {update}\n  respelled:  {got}"
                ));
            }
            let got = answer(
                &webhook,
                Endpoint::Mutate,
                &review(&variant, None),
                &spelled,
            );
            if got != mutate {
                failures.push(format!(
                    "{name} {how:?}: /mutate CREATE\n  as written: {mutate}\n  respelled:  {got}"
                ));
            }
        }
    }
    println!(
        "{} objects, {} images, {variants} respelled objects, {patches} objects patched by /mutate",
        corpus.len(),
        images.len()
    );
    assert!(images.len() >= 100, "{} images respelled", images.len());
    assert!(patches >= 10, "{patches} objects patched by /mutate");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The images: denied on CREATE and on `kubectl set image` from a good image, with the
/// findings of the usual spelling, however the registry is written.
#[test]
fn the_reported_spellings_are_denied_like_the_usual_ones() {
    let webhook = Webhook::new(Config::default());
    let pod = |image: &str, second: Option<&str>| {
        let mut containers = vec![json!({"name": "a", "image": image})];
        if let Some(s) = second {
            containers.push(json!({"name": "b", "image": s}));
        }
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
            "spec": {"os": {"name": "windows"}, "nodeSelector": {"kubernetes.io/os": "windows"},
                "tolerations": [{"key": "os", "operator": "Equal", "value": "windows",
                    "effect": "NoSchedule"}],
                "containers": containers}})
    };
    let old = pod(GOOD, None);
    let cases: &[(&str, &[&str], &str)] = &[
        (
            "mcr.microsoft.com/windows/servercore:1809",
            &[
                "mcr.microsoft.com:443/windows/servercore:1809",
                "MCR.MICROSOFT.COM/windows/servercore:1809",
                "mcr.microsoft.com:0443/windows/servercore:1809",
            ],
            "WIN502",
        ),
        (
            "mcr.microsoft.com/windows/nanoserver:1809",
            &["mcr.microsoft.com:443/windows/nanoserver:1809"],
            "WIN502",
        ),
        (
            "nginx:1.25",
            &[
                "registry-1.docker.io:443/library/nginx:1.25",
                "registry-1.docker.io/library/nginx:1.25",
                "index.docker.io/nginx:1.25",
                "docker.io/library/nginx:1.25",
            ],
            "WIN507",
        ),
    ];
    for (usual, spellings, rule) in cases {
        // A Linux image sits next to the good Windows one (a Windows pod by its other image).
        let object = |i: &str| match *rule {
            "WIN507" => pod(GOOD, Some(i)),
            _ => pod(i, None),
        };
        let create = validate(&webhook, &review(&object(usual), None));
        let update = validate(&webhook, &review(&object(usual), Some(&old)));
        for answer in [&create, &update] {
            assert!(answer.starts_with("allowed false"), "{usual}: {answer}");
            assert!(
                answer.contains(&format!("(\"{rule}\", Error)")),
                "{usual}: {answer}"
            );
        }
        for s in *spellings {
            assert_eq!(
                validate(&webhook, &review(&object(s), None)),
                create,
                "CREATE {s}"
            );
            assert_eq!(
                validate(&webhook, &review(&object(s), Some(&old))),
                update,
                "UPDATE {s}"
            );
        }
    }
}

/// The spellings of the servercore image the registry tests use.
const SERVERCORE_SPELLINGS: [&str; 4] = [
    "mcr.microsoft.com/windows/servercore:ltsc2022",
    "mcr.microsoft.com:443/windows/servercore:ltsc2022",
    "MCR.Microsoft.com/windows/servercore:ltsc2022",
    "mcr.microsoft.com:0443/windows/servercore:ltsc2022",
];

/// A resolver whose lookups go to the loopback fake at `addr` (each registry's repositories
/// under `<registry>/`, the normal form's registry).
fn resolver(addr: &str) -> Resolver {
    let limits = Limits {
        connect: Duration::from_secs(2),
        read: Duration::from_secs(2),
        max_body: 4 << 20,
        max_redirects: 5,
    };
    let client = RegistryClient::new(limits, Credentials::new(Keyring::default()))
        .with_mirror(addr)
        .unwrap();
    Resolver::new(client, Settings::default(), RegistryMetrics::default())
}

/// The resolver's metrics as `/metrics` shows them.
fn metrics_text(r: &Resolver) -> String {
    let mut registry = prometheus_client::registry::Registry::default();
    r.metrics().register(&mut registry);
    let mut s = String::new();
    prometheus_client::encoding::text::encode(&mut s, &registry).unwrap();
    s
}

/// The CLI's and `serve`'s sync path: a pod naming one image four ways is one reference, one
/// lookup (to the registry's own name), one metric label; every spelling reads its facts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_spelling_is_one_lookup_one_fact_one_label() {
    let fake = registry_support::Fake::start(|_, _| registry_support::windows_20348_index());
    let r = resolver(&fake.addr);
    let containers: Vec<Value> = SERVERCORE_SPELLINGS
        .iter()
        .enumerate()
        .map(|(i, s)| json!({"name": format!("c{i}"), "image": s}))
        .collect();
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
        "spec": {"containers": containers}});
    let mut refs = BTreeSet::new();
    image_references(&pod, &mut refs);
    assert_eq!(
        refs.iter().collect::<Vec<_>>(),
        ["mcr.microsoft.com/windows/servercore:ltsc2022"]
    );
    let (facts, failed) = resolve_all(&r, &refs).await;
    assert!(failed.is_empty(), "{failed:?}");
    assert_eq!(r.metrics().lookup_count(), 1);
    let paths: Vec<String> = fake.requests().into_iter().map(|(l, _)| l).collect();
    assert!(
        paths
            .iter()
            .all(|l| l.contains(" /v2/mcr.microsoft.com/windows/servercore/")),
        "{paths:?}"
    );
    let cx = Context {
        images: Some(Arc::new(facts)),
        ..Context::default()
    };
    for s in SERVERCORE_SPELLINGS {
        // The CLI's facts are its user's, whatever the pod's namespace.
        assert!(cx.image_facts(s, None).is_some(), "{s}");
    }
    let text = metrics_text(&r);
    assert!(text.contains("registry=\"mcr.microsoft.com\""), "{text}");
    assert!(!text.contains(":443") && !text.contains("MCR"), "{text}");
}

/// `serve`'s background path: a miss queues the lookup of the normal form; once it is done,
/// every other spelling is a hit, with no second lookup.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_caches_every_spelling_under_one_entry() {
    let fake = registry_support::Fake::start(|_, _| registry_support::windows_20348_index());
    let r = resolver(&fake.addr);
    let cx = Context {
        images: Some(Arc::new(Background(r.clone()))),
        ..Context::default()
    };
    let ns = Some("team-a");
    let reader = reader_of(ns);
    assert!(
        cx.image_facts(SERVERCORE_SPELLINGS[1], ns).is_none(),
        "a miss first"
    );
    // The queued lookup runs in the background: asking for the normal form (as the same
    // namespace) joins it (one lookup in flight per reference and reader) or reads what it left.
    assert!(
        r.in_flight_for("mcr.microsoft.com/windows/servercore:ltsc2022", &reader) || !r.is_empty()
    );
    r.resolve_for("mcr.microsoft.com/windows/servercore:ltsc2022", &reader)
        .await
        .unwrap();
    for s in SERVERCORE_SPELLINGS {
        assert!(cx.image_facts(s, ns).is_some(), "{s}");
    }
    assert_eq!(r.metrics().lookup_count(), 1);
    assert_eq!(r.len().1, 1, "one tag entry for every spelling");
}
