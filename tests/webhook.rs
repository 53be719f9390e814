//! Replays the AdmissionReviews captured from a real kube-apiserver (1.32) against
//! `winlint serve` over real TLS (HTTP/1.1 keep-alive and h2) and checks every answer against
//! the readable golden files in `tests/admission-golden/NNN.json`.
//!
//! The server runs with the default configuration (target: Kubernetes 1.34, Windows Server 2022
//! hosts, process isolation, taint `os=windows:NoSchedule` assumed, so WIN007 only warns). Golden fields:
//! * `allowed`, `denied_rules` and `warning_rules` (sorted rule IDs);
//! * `patch_effect`: what the decoded patch does to `request.object` (`json_patch::diff` of
//!   before and after), `null` when there is no patch;
//! * `mutated`: the `winlint.io/mutated` audit annotation after patching.
//!
//! To re-create the golden files after an intended change: `WINLINT_BLESS=1 cargo test --test
//! webhook`, then review the diff.

mod webhook_support;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use base64::Engine as _;
use serde_json::{Value, json};
use webhook_support::*;

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/admission-golden")
}

/// Every captured review: (NNN, request body, recorded path without query).
fn captures() -> Vec<(String, Vec<u8>, String)> {
    let mut out = Vec::new();
    let dir = captures_dir();
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".json") && !n.ends_with(".meta.json"))
        .collect();
    names.sort();
    for n in names {
        let id = n.trim_end_matches(".json").to_string();
        let body = std::fs::read(dir.join(&n)).unwrap();
        let meta: Value =
            serde_json::from_slice(&std::fs::read(dir.join(format!("{id}.meta.json"))).unwrap())
                .unwrap();
        let path = meta["path"].as_str().unwrap().to_string();
        out.push((id, body, path));
    }
    assert!(
        out.len() >= 40,
        "expected the captured reviews in {}",
        dir.display()
    );
    out
}

fn rule_of(warning: &str) -> String {
    let line = winlint::admission::warnings::unnamed(warning);
    line.split(':').next().unwrap_or("").to_string()
}

/// What the answer means, in the golden file's shape; also asserts the invariants every answer
/// must satisfy.
fn summarize(request: &Value, path: &str, answer: &Value) -> Value {
    let req = &request["request"];
    let resp = &answer["response"];
    assert_eq!(answer["apiVersion"], request["apiVersion"]);
    assert_eq!(resp["uid"], req["uid"]);
    let allowed = resp["allowed"].as_bool().unwrap();
    let warnings: Vec<&str> = resp["warnings"]
        .as_array()
        .map(|a| a.iter().map(|w| w.as_str().unwrap()).collect())
        .unwrap_or_default();
    for w in &warnings {
        assert!(
            w.chars().count() <= winlint::admission::MAX_WARNING_CHARS,
            "warning too long: {w}"
        );
        let kind = req["kind"]["kind"].as_str().unwrap_or("");
        assert!(w.starts_with(kind), "named by its object: {w}");
        let w = winlint::admission::warnings::unnamed(w);
        assert!(w.starts_with("WIN") || w.starts_with("winlint"), "{w}");
    }
    let warning_rules: BTreeSet<String> = warnings
        .iter()
        .map(|w| rule_of(winlint::admission::warnings::unnamed(w)))
        .collect();
    let mut denied_rules = BTreeSet::new();
    if !allowed {
        assert_eq!(resp["status"]["code"], 403);
        let msg = resp["status"]["message"].as_str().unwrap();
        for line in msg.lines().filter(|l| l.starts_with("- WIN")) {
            denied_rules.insert(line[2..8].to_string());
            assert!(line.contains("fix:"), "denial lines name the fix: {line}");
        }
        assert!(!denied_rules.is_empty(), "denial lists rule IDs: {msg}");
    }
    let op = req["operation"].as_str().unwrap();
    let mut patch_effect = Value::Null;
    let mut mutated = Value::Null;
    if let Some(p) = resp.get("patch") {
        assert_eq!(path, "/mutate", "only the mutating webhook patches");
        assert_eq!(op, "CREATE", "UPDATE is never mutated (MV9)");
        assert!(req.get("subResource").is_none_or(Value::is_null));
        assert_eq!(resp["patchType"], "JSONPatch");
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(p.as_str().unwrap())
            .unwrap();
        let patch: json_patch::Patch = serde_json::from_slice(&bytes).unwrap();
        let before = req["object"].clone();
        let mut after = before.clone();
        json_patch::patch(&mut after, &patch).expect("the patch applies to request.object");
        // Never produce a pod the API server would reject: no error the object did not have.
        let cfg = winlint::config::Config::default();
        let errors = |o: &Value| -> BTreeSet<&'static str> {
            winlint::engine::lint_object(
                o,
                &cfg,
                &winlint::model::Context::default(),
                winlint::model::Operation::Create,
            )
            .findings
            .iter()
            .filter(|f| f.severity == winlint::model::Severity::Error)
            .map(|f| f.rule.id)
            .collect()
        };
        assert!(
            errors(&after).is_subset(&errors(&before)),
            "patch adds errors"
        );
        if after.pointer("/spec/os/name") == Some(&json!("windows"))
            && before.pointer("/spec/os").is_none()
        {
            // M4 guard: no Linux-only security field next to the injected spec.os.
            let sc = after
                .pointer("/spec/securityContext")
                .cloned()
                .unwrap_or(json!({}));
            for f in [
                "runAsUser",
                "runAsGroup",
                "fsGroup",
                "seccompProfile",
                "seLinuxOptions",
            ] {
                assert!(sc.get(f).is_none(), "spec.os injected next to {f}");
            }
        }
        mutated = after
            .pointer("/metadata/annotations/winlint.io~1mutated")
            .cloned()
            .expect("M7: the audit annotation is set whenever something changed");
        patch_effect = serde_json::to_value(json_patch::diff(&before, &after)).unwrap();
    }
    json!({
        "path": path,
        "operation": op,
        "kind": req["kind"]["kind"],
        "name": req["name"],
        "allowed": allowed,
        "denied_rules": denied_rules,
        "warning_rules": warning_rules,
        "patch_effect": patch_effect,
        "mutated": mutated,
    })
}

async fn replay(h2: bool) {
    let c = certs();
    let server = start(args(&c)).await;
    let mut client = Client::connect(server.addr, &c.tls.ca_pem, h2).await;
    let bless = std::env::var_os("WINLINT_BLESS").is_some();
    let mut failures = Vec::new();
    for (id, body, full_path) in captures() {
        let path = full_path.split('?').next().unwrap().to_string();
        let request: Value = serde_json::from_slice(&body).unwrap();
        // The recorded path, query included (`?timeout=10s`), on one keep-alive connection.
        let (status, resp) = client.post(&full_path, body).await.unwrap();
        assert_eq!(status, 200, "{id}: {}", String::from_utf8_lossy(&resp));
        let answer = parse_review(&resp, request["request"]["uid"].as_str().unwrap());
        let got = summarize(&request, &path, &answer);
        let gpath = golden_dir().join(format!("{id}.json"));
        if bless && !h2 {
            std::fs::create_dir_all(golden_dir()).unwrap();
            std::fs::write(&gpath, serde_json::to_string_pretty(&got).unwrap() + "\n").unwrap();
            continue;
        }
        let want: Value = serde_json::from_slice(
            &std::fs::read(&gpath).unwrap_or_else(|e| panic!("{}: {e}", gpath.display())),
        )
        .unwrap();
        if got != want {
            failures.push(format!(
                "{id}: got\n{}\nwant\n{}",
                serde_json::to_string_pretty(&got).unwrap(),
                serde_json::to_string_pretty(&want).unwrap()
            ));
        }
    }
    server.shutdown();
    server.wait().await;
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn captured_reviews_http1_keepalive() {
    replay(false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn captured_reviews_h2() {
    replay(true).await;
}

/// The catalogue's mutation vectors that the captures do not cover, through the server.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mutation_vectors() {
    let c = certs();
    let server = start(args(&c)).await;
    let mut client = Client::connect(server.addr, &c.tls.ca_pem, false).await;
    let mut post = async |path: &str, pod: Value, op: &str| -> Value {
        let uid = format!("mv-{}", pod["metadata"]["name"].as_str().unwrap());
        let body = json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "request": {"uid": uid, "kind": {"group": "", "version": "v1", "kind": "Pod"},
                "resource": {"group": "", "version": "v1", "resource": "pods"},
                "operation": op, "namespace": "default", "object": pod}});
        let (status, resp) = client
            .post(path, serde_json::to_vec(&body).unwrap())
            .await
            .unwrap();
        assert_eq!(status, 200);
        parse_review(&resp, &uid)
    };
    let apply = |pod: &Value, answer: &Value| -> Option<Value> {
        let b64 = answer["response"]["patch"].as_str()?;
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(b64)
            .unwrap();
        let patch: json_patch::Patch = serde_json::from_slice(&bytes).unwrap();
        let mut out = pod.clone();
        json_patch::patch(&mut out, &patch).unwrap();
        Some(out)
    };
    let pod = |name: &str, spec: Value| json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec});
    let windows_toleration =
        json!({"key": "os", "operator": "Equal", "value": "windows", "effect": "NoSchedule"});

    // MV1: T05 (Windows image only) → M1 + M3 + M4 + M7.
    let t05 = pod(
        "t05",
        json!({"containers": [{"name": "a", "image": "mcr.microsoft.com/windows/servercore:ltsc2022"}]}),
    );
    let a = post("/mutate", t05.clone(), "CREATE").await;
    let p = apply(&t05, &a).expect("MV1: a patch");
    assert_eq!(p["spec"]["nodeSelector"]["kubernetes.io/os"], "windows");
    assert!(
        p["spec"]["tolerations"]
            .as_array()
            .unwrap()
            .contains(&windows_toleration)
    );
    assert_eq!(p["spec"]["os"]["name"], "windows");
    let mutated = p["metadata"]["annotations"]["winlint.io/mutated"]
        .as_str()
        .unwrap();
    for m in ["nodeSelector", "tolerations", "os"] {
        assert!(mutated.split(',').any(|x| x == m), "{mutated}");
    }
    // With an existing nodeSelector the key is added by itself, escaped (`~1`).
    let mut with_sel = t05.clone();
    with_sel["metadata"]["name"] = "t05-sel".into();
    with_sel["spec"]["nodeSelector"] = json!({"disk": "ssd"});
    let a = post("/mutate", with_sel.clone(), "CREATE").await;
    let raw = base64::engine::general_purpose::STANDARD
        .decode(a["response"]["patch"].as_str().unwrap())
        .unwrap();
    assert!(
        String::from_utf8(raw)
            .unwrap()
            .contains("/spec/nodeSelector/kubernetes.io~1os"),
        "{a}"
    );
    let p = apply(&with_sel, &a).unwrap();
    assert_eq!(
        p["spec"]["nodeSelector"],
        json!({"disk": "ssd", "kubernetes.io/os": "windows"})
    );

    // MV2: T05 + spec.securityContext.runAsUser → M1 + M3, no spec.os (guard).
    let mut mv2 = t05.clone();
    mv2["metadata"]["name"] = "mv2".into();
    mv2["spec"]["securityContext"] = json!({"runAsUser": 1000});
    let a = post("/mutate", mv2.clone(), "CREATE").await;
    let p = apply(&mv2, &a).expect("MV2: a patch");
    assert_eq!(p["spec"]["nodeSelector"]["kubernetes.io/os"], "windows");
    assert!(
        p["spec"].get("os").is_none(),
        "MV2: spec.os must not be injected"
    );
    let v = post("/validate", p.clone(), "CREATE").await;
    assert_eq!(v["response"]["allowed"], true, "{v}");
    let warned: BTreeSet<String> = v["response"]["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| rule_of(w.as_str().unwrap()))
        .collect();
    assert!(
        warned.contains("WIN101") && warned.contains("WIN003"),
        "{warned:?}"
    );

    // MV3: T01 Linux pod → no patch.
    let t01 = pod(
        "t01",
        json!({"containers": [{"name": "web", "image": "nginx:1.25"}]}),
    );
    let a = post("/mutate", t01.clone(), "CREATE").await;
    assert!(a["response"].get("patch").is_none());

    // MV9: UPDATE → no patch.
    let a = post("/mutate", t05.clone(), "UPDATE").await;
    assert!(a["response"].get("patch").is_none());

    // T07: WINOK + runAsUser → denied with WIN101.
    let mut t07 = pod(
        "t07",
        json!({"os": {"name": "windows"}, "nodeSelector": {"kubernetes.io/os": "windows"},
            "tolerations": [windows_toleration],
            "securityContext": {"runAsUser": 1000},
            "containers": [{"name": "a", "image": "mcr.microsoft.com/windows/servercore:ltsc2022"}]}),
    );
    let v = post("/validate", t07.clone(), "CREATE").await;
    assert_eq!(v["response"]["allowed"], false);
    assert_eq!(v["response"]["status"]["code"], 403);
    let msg = v["response"]["status"]["message"].as_str().unwrap();
    assert!(
        msg.contains("WIN101") && msg.contains("pod-securitycontext-linux-only"),
        "{msg}"
    );
    // …unless exempted by annotation.
    t07["metadata"]["annotations"] = json!({"winlint.io/ignore": "WIN101"});
    let v = post("/validate", t07, "CREATE").await;
    assert_eq!(v["response"]["allowed"], true, "{v}");

    server.shutdown();
    server.wait().await;
}

/// `--config`: per-rule severity overrides and `fix.safe: false` change the answers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn config_file_overrides_severities_and_fixes() {
    let c = certs();
    let cfg = c.dir.path().join("winlint.yaml");
    std::fs::write(
        &cfg,
        "rules:\n  WIN007: \"off\"\n  image-build-incompatible: warning\nfix:\n  safe: false\n",
    )
    .unwrap();
    let mut a = args(&c);
    a.config = Some(cfg);
    let server = start(a).await;
    let mut client = Client::connect(server.addr, &c.tls.ca_pem, false).await;
    let dir = captures_dir();
    // 002: denied by default (WIN502; WIN007 warns on the assumed taint); here WIN007 is off
    // and WIN502 a warning.
    let (status, body) = client
        .post("/validate", std::fs::read(dir.join("002.json")).unwrap())
        .await
        .unwrap();
    assert_eq!(status, 200);
    let v: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(v["response"]["allowed"], true, "{v}");
    let warned: BTreeSet<String> = v["response"]["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| rule_of(w.as_str().unwrap()))
        .collect();
    assert!(
        warned.contains("WIN502") && !warned.contains("WIN007"),
        "{warned:?}"
    );
    // 001: no safe fixes → no patch.
    let (_, body) = client
        .post("/mutate", std::fs::read(dir.join("001.json")).unwrap())
        .await
        .unwrap();
    let v: Value = serde_json::from_slice(&body).unwrap();
    assert!(v["response"].get("patch").is_none(), "{v}");
    server.shutdown();
    server.wait().await;
}

/// The namespace's Pod Security level comes from the cluster facts: WIN107 applies in a
/// namespace that enforces "restricted" only, on `/validate` and on the path an older
/// registration calls (`/validate/pss/{level}`, answered as `/validate`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pod_security_level_from_the_cluster_facts() {
    let c = certs();
    let server = start(args(&c)).await;
    let mut client = Client::connect(server.addr, &c.tls.ca_pem, true).await;
    let rules = |v: &Value| -> BTreeSet<String> {
        v["response"]["warnings"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|w| rule_of(w.as_str().unwrap()))
            .collect()
    };
    // A Windows pod without spec.os, in namespace "default".
    let body = windows_review("pss");
    let (status, before) = client.post("/validate", body.clone()).await.unwrap();
    assert_eq!(status, 200);
    let before = parse_review(&before, "pss");
    assert!(!rules(&before).contains("WIN107"), "{before}");
    server.state.apply_facts(facts(&[(
        "default",
        &[("pod-security.kubernetes.io/enforce", "restricted")],
    )]));
    for path in [
        "/validate",
        "/validate/pss/restricted?timeout=10s",
        "/validate/pss/whatever",
    ] {
        let (status, after) = client.post(path, body.clone()).await.unwrap();
        assert_eq!(status, 200, "{path}");
        let after = parse_review(&after, "pss");
        assert!(rules(&after).contains("WIN107"), "{path}: {after}");
    }
    // Another namespace, no level: no WIN107.
    let other = String::from_utf8(body.clone())
        .unwrap()
        .replace("\"default\"", "\"apps\"");
    let (_, v) = client.post("/validate", other.into_bytes()).await.unwrap();
    assert!(!rules(&parse_review(&v, "pss")).contains("WIN107"));
    // The facts in use show in /metrics and /readyz.
    let m = server.metrics_addr.unwrap();
    let (_, text) = plain_get(m, "/metrics").await;
    for line in [
        "winlint_cluster_windows_nodes{build=\"10.0.20348\"} 1",
        "winlint_cluster_facts_synced 1",
        "winlint_cluster_facts_rebuilds_total 1",
    ] {
        assert!(text.lines().any(|l| l == line), "{line} not in\n{text}");
    }
    assert_eq!(
        plain_get(m, "/readyz").await,
        (200, "ready: live cluster facts".to_string())
    );
    server.shutdown();
    server.wait().await;
}

/// A namespace labelled `winlint.io/default-os=windows` (known from the cluster facts) gets
/// pods that are only probably Windows mutated too; elsewhere they are left alone. The path of
/// an older registration (`/mutate/windows-namespace`) is answered as `/mutate`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn windows_namespaces_mutate_probable_pods() {
    let c = certs();
    let server = start(args(&c)).await;
    server.state.apply_facts(facts(&[
        ("apps", &[("winlint.io/default-os", "windows")]),
        ("plain", &[]),
    ]));
    let mut client = Client::connect(server.addr, &c.tls.ca_pem, false).await;
    // Probable only: the pod label kubernetes.io/os=windows, an image with no OS evidence.
    let review = |ns: &str| {
        serde_json::to_vec(&json!({
            "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "request": {"uid": "prob", "kind": {"group": "", "version": "v1", "kind": "Pod"},
                "resource": {"group": "", "version": "v1", "resource": "pods"},
                "operation": "CREATE", "namespace": ns,
                "object": {"apiVersion": "v1", "kind": "Pod",
                    "metadata": {"name": "p", "namespace": ns,
                                 "labels": {"kubernetes.io/os": "windows"}},
                    "spec": {"containers": [{"name": "a", "image": "registry.contoso.com/app:1.0"}]}}}
        }))
        .unwrap()
    };
    let (_, plain) = client.post("/mutate", review("plain")).await.unwrap();
    let plain = parse_review(&plain, "prob");
    assert!(plain["response"].get("patch").is_none(), "{plain}");
    let (_, legacy) = client
        .post("/mutate/windows-namespace?timeout=10s", review("plain"))
        .await
        .unwrap();
    let legacy = parse_review(&legacy, "prob");
    assert!(legacy["response"].get("patch").is_none(), "{legacy}");
    let (status, ns) = client.post("/mutate", review("apps")).await.unwrap();
    assert_eq!(status, 200);
    let ns = parse_review(&ns, "prob");
    let b64 = ns["response"]["patch"].as_str().expect("a patch");
    let patch: json_patch::Patch = serde_json::from_slice(
        &base64::engine::general_purpose::STANDARD
            .decode(b64)
            .unwrap(),
    )
    .unwrap();
    let mut pod = json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "p", "namespace": "apps", "labels": {"kubernetes.io/os": "windows"}},
        "spec": {"containers": [{"name": "a", "image": "registry.contoso.com/app:1.0"}]}});
    json_patch::patch(&mut pod, &patch).unwrap();
    assert_eq!(pod["spec"]["nodeSelector"]["kubernetes.io/os"], "windows");
    server.shutdown();
    server.wait().await;
}
