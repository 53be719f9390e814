//! What kubectl shows of the webhook's answers (issue 20 §4): every warning the webhook gives
//! fits what the API server passes on unchanged (`winlint::admission::warnings`: at most 256
//! runes each, one line, at most 3072 in all) and keeps its remedy whole.
//!
//! Run over every captured review of `testdata/admission/` (the reviews behind the golden
//! answers of `tests/admission-golden/`), and over every rule golden case's input
//! (`testdata/rules/*/*/input.yaml`) sent as a CREATE review, under the default configuration
//! and under one whose Windows taint is configured (WIN007 an error), through `/validate` and
//! `/mutate`.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use winlint::admission::warnings::{BUDGET_CHARS, MAX_WARNING_CHARS, remedy, unnamed};
use winlint::admission::{Endpoint, Webhook};
use winlint::config::Config;
use winlint::engine::{self, mutation};
use winlint::model::{Context, Finding, Operation};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn files(dir: &Path, keep: &dyn Fn(&str) -> bool, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            files(&p, keep, out);
        } else if keep(p.file_name().unwrap().to_str().unwrap()) {
            out.push(p);
        }
    }
}

fn review(object: &Value, op: &str) -> Vec<u8> {
    let kind = object["kind"].as_str().unwrap_or("Pod");
    serde_json::to_vec(&json!({
        "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
        "request": {"uid": "u", "kind": {"group": "", "version": "v1", "kind": kind},
            "resource": {"group": "", "version": "v1", "resource": "pods"},
            "operation": op, "namespace": "default", "object": object}}))
    .unwrap()
}

/// Every review to send: (name, body).
fn reviews() -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut captured = Vec::new();
    files(
        &root().join("testdata/admission"),
        &|n| n.ends_with(".json") && !n.ends_with(".meta.json"),
        &mut captured,
    );
    assert!(captured.len() >= 40, "the captured reviews");
    for p in captured {
        out.push((p.display().to_string(), std::fs::read(&p).unwrap()));
    }
    let mut inputs = Vec::new();
    files(
        &root().join("testdata/rules"),
        &|n| n == "input.yaml",
        &mut inputs,
    );
    assert!(inputs.len() > 100, "the rule golden cases");
    for p in inputs {
        let bytes = std::fs::read(&p).unwrap();
        let Ok(objects) = winlint::source::load_bytes_values(&bytes) else {
            continue; // a case of bad input
        };
        for (i, o) in objects.iter().enumerate() {
            if o.is_object()
                && winlint::model::workload::is_pod_kind(o["kind"].as_str().unwrap_or(""))
            {
                out.push((format!("{}#{i}", p.display()), review(o, "CREATE")));
            }
        }
    }
    out
}

/// The findings a warning may come from: the object's as written (on CREATE, and on UPDATE
/// where fixes that cannot be applied are dropped) and as its pods will be (after the pod
/// mutation), under `config`.
fn findings(object: &Value, config: &Config) -> Vec<Finding> {
    let cx = Context::default();
    let mut all = engine::lint_object(object, config, &cx, Operation::Create).findings;
    all.extend(engine::lint_object(object, config, &cx, Operation::Update).findings);
    let mut pods = object.clone();
    mutation::mutate_with(&mut pods, config, &cx);
    all.extend(engine::lint_object(&pods, config, &cx, Operation::Create).findings);
    all
}

/// The default configuration with its Windows taint configured, not assumed (WIN007 an error).
fn tainted() -> Config {
    let mut c = Config::default();
    c.target.pinned.windows_taints = true;
    c
}

#[test]
fn every_warning_fits_the_api_server_and_keeps_its_remedy() {
    let mut failures = Vec::new();
    let mut seen = 0;
    let mut shortened = 0;
    for (name, body) in reviews() {
        let request: Value = serde_json::from_slice(&body).unwrap();
        let object = &request["request"]["object"];
        for config in [Config::default(), tainted()] {
            let webhook = Webhook::new(config.clone());
            let candidates = findings(object, &config);
            for endpoint in [Endpoint::Validate, Endpoint::Mutate] {
                let out = webhook.review(&body, endpoint).unwrap();
                let answer: Value = serde_json::from_slice(&out.body).unwrap();
                let warnings: Vec<&str> = answer["response"]["warnings"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|w| w.as_str().unwrap())
                    .collect();
                let total: usize = warnings.iter().map(|w| w.chars().count()).sum();
                if total > BUDGET_CHARS {
                    failures.push(format!("{name}: {total} runes of warnings"));
                }
                let kind = object["kind"].as_str().unwrap_or("");
                for w in warnings {
                    seen += 1;
                    if w.chars().count() > MAX_WARNING_CHARS || w.chars().any(char::is_control) {
                        failures.push(format!("{name}: too long or not one line: {w}"));
                    }
                    // Named by its object, so that kubectl's deduplication of identical texts
                    // across objects cannot merge two objects' warnings.
                    if !w.starts_with(&format!("{kind} ")) && !w.starts_with(&format!("{kind}:")) {
                        failures.push(format!("{name}: not named by its {kind}: {w}"));
                    }
                    if let Some(m) = internal_text(w) {
                        failures.push(format!("{name}: internal text {m:?}: {w}"));
                    }
                    let w = unnamed(w);
                    let Some((head, _)) = w.split_once(": ") else {
                        continue;
                    };
                    let id = head.rsplit(' ').next().unwrap();
                    if !id.starts_with("WIN") || w.contains("mutating webhook") {
                        continue;
                    }
                    let whole = candidates.iter().any(|f| {
                        f.rule.id == id && w.ends_with(f.message.lines().next().unwrap_or(""))
                    });
                    if whole {
                        continue;
                    }
                    shortened += 1;
                    let kept = candidates
                        .iter()
                        .any(|f| f.rule.id == id && w.ends_with(&remedy(f)));
                    if !kept {
                        failures.push(format!("{name}: remedy lost: {w}"));
                    }
                }
            }
        }
    }
    assert!(seen > 250, "only {seen} warnings seen");
    assert!(
        shortened > 20,
        "only {shortened} warnings needed shortening"
    );
    failures.dedup();
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// What a user must never read in a warning, a finding's message or fix, or a rule's page: the
/// project's own references (its issues, research notes, catalogue codes, module paths) and
/// debug renderings of facts (`taints [...]`, a runtime's `containerd://` version).
fn internal_text(text: &str) -> Option<String> {
    static RE: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(concat!(
            r"containerd://|taints \[|\bissue[- ]?\d|\bissues? #\d|§|shared/|rules\.md|",
            r"\b(crate|model|engine|admission|rules|cluster|registry)::|\bsrc/(model|engine|rules|admission|cli|cluster|server)/|",
            r"\bseed\b|\b(K|KL|MS|E2E)-[A-Z0-9]+\b|\bVAL(-T)?\b|\bKEP\d+\b|\bPR\d+\b|\bTODO\b|\bFIXME\b"
        ))
        .unwrap()
    });
    RE.find(text).map(|m| m.as_str().to_string())
}

/// Every rule's page (`winlint explain`, SARIF's help) and every finding's message and fix on the
/// rule golden inputs and captured reviews, with the cluster's nodes observed (the messages that
/// describe them) and offline: none holds internal text.
#[test]
fn no_internal_text_in_rule_pages_or_messages() {
    let mut failures = Vec::new();
    for rule in winlint::rules::all() {
        let page = rule.meta.page();
        for line in page.lines() {
            if let Some(m) = internal_text(line) {
                failures.push(format!("{} page: {m:?}: {line}", rule.meta.id));
            }
        }
    }
    // Observed nodes: two tainted ltsc2022 Windows nodes, three Linux ones.
    let observed = {
        use winlint::model::nodes::{NodeGroup, NodeOs};
        let group = |name: &str, os: &str, build: &str, taint: Option<&str>, n: usize| {
            let mut labels = std::collections::BTreeMap::from([
                ("kubernetes.io/os".to_string(), os.to_string()),
                ("beta.kubernetes.io/os".to_string(), os.to_string()),
            ]);
            if !build.is_empty() {
                labels.insert("node.kubernetes.io/windows-build".into(), build.into());
            }
            NodeGroup {
                os: NodeOs::parse(os),
                build: winlint::model::windows::parse_build(build),
                revision: None,
                taints: taint
                    .map(|t| winlint::model::Taint::parse(t).unwrap())
                    .into_iter()
                    .collect(),
                labels,
                runtime: Some("containerd://1.7.20".into()),
                nodes: (0..n)
                    .map(|k| (format!("{name}{k}"), Some(format!("{name}{k}"))))
                    .collect(),
            }
        };
        let mut c = tainted();
        c.target.nodes = Some(
            vec![
                group(
                    "w",
                    "windows",
                    "10.0.20348",
                    Some("os=windows:NoSchedule"),
                    2,
                ),
                group("l", "linux", "", None, 3),
            ]
            .into(),
        );
        c
    };
    let mut seen = 0;
    for (name, body) in reviews() {
        let request: Value = serde_json::from_slice(&body).unwrap();
        let object = &request["request"]["object"];
        for config in [Config::default(), tainted(), observed.clone()] {
            for f in findings(object, &config) {
                seen += 1;
                let fix = f.fix.as_ref().map_or("", |x| x.description.as_str());
                for text in [f.message.as_str(), fix] {
                    if let Some(m) = internal_text(text) {
                        failures.push(format!("{name}: {}: {m:?}: {text}", f.rule.id));
                    }
                }
            }
        }
    }
    assert!(seen > 500, "only {seen} findings seen");
    failures.sort();
    failures.dedup();
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

fn answer(webhook: &Webhook, object: &Value, endpoint: Endpoint) -> Value {
    let out = webhook.review(&review(object, "CREATE"), endpoint).unwrap();
    serde_json::from_slice(&out.body).unwrap()
}

fn warnings_of(answer: &Value) -> Vec<String> {
    answer["response"]["warnings"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|w| w.as_str().unwrap().to_string())
        .collect()
}

fn patched(object: &Value, answer: &Value) -> Value {
    use base64::Engine as _;
    let mut out = object.clone();
    if let Some(p) = answer["response"]["patch"].as_str() {
        let bytes = base64::engine::general_purpose::STANDARD.decode(p).unwrap();
        let patch: json_patch::Patch = serde_json::from_slice(&bytes).unwrap();
        json_patch::patch(&mut out, &patch).unwrap();
    }
    out
}

fn pod(spec: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
        "spec": spec})
}

fn workload(kind: &str, spec: Value) -> Value {
    json!({"apiVersion": "apps/v1", "kind": kind, "metadata": {"name": "w", "namespace": "default"},
        "spec": {"selector": {"matchLabels": {"app": "w"}},
            "template": {"metadata": {"labels": {"app": "w"}}, "spec": spec}}})
}

/// Denied, and no warning promises what its pods would get (none will be created).
fn denied_without_promises(a: &Value) {
    assert_eq!(a["response"]["allowed"], false, "{a}");
    assert!(
        !warnings_of(a)
            .iter()
            .any(|w| w.contains("mutating webhook")),
        "{a}"
    );
}

const SERVERCORE: &str = "mcr.microsoft.com/windows/servercore:ltsc2022";

/// A mutation that changes what the pod may do, or rewrites what its author wrote, is said in
/// a warning of `/mutate`; one that only places the pod is recorded, not said.
#[test]
fn mutations_that_change_posture_or_rewrite_values_are_said() {
    let w = Webhook::new(Config::default());
    let hpc = pod(json!({
        "securityContext": {"windowsOptions": {"hostProcess": true,
            "runAsUserName": "NT AUTHORITY\\SYSTEM"}},
        "nodeSelector": {"kubernetes.io/os": "windows"},
        "containers": [{"name": "a", "image": SERVERCORE}]}));
    let a = answer(&w, &hpc, Endpoint::Mutate);
    assert_eq!(patched(&hpc, &a)["spec"]["hostNetwork"], true, "{a}");
    let said = warnings_of(&a);
    assert!(
        said.iter()
            .any(|w| unnamed(w) == "WIN201: the mutating webhook did: set spec.hostNetwork=true"),
        "{said:?}"
    );
    // Only what changed posture: the toleration and spec.os it also got are not said.
    assert_eq!(said.len(), 1, "{said:?}");

    let cased = pod(json!({"nodeSelector": {"kubernetes.io/os": "Windows"},
        "containers": [{"name": "a", "image": SERVERCORE}]}));
    let a = answer(&w, &cased, Endpoint::Mutate);
    assert_eq!(
        patched(&cased, &a)["spec"]["nodeSelector"]["kubernetes.io/os"],
        "windows",
        "{a}"
    );
    let said = warnings_of(&a);
    assert!(
        said.iter().any(
            |s| unnamed(s).starts_with("WIN010: the mutating webhook did:")
                && s.contains("windows")
        ),
        "{said:?}"
    );

    // The fresh pod that only gets its selector, toleration and spec.os hears nothing.
    let plain = pod(json!({"containers": [{"name": "a", "image": SERVERCORE}]}));
    let a = answer(&w, &plain, Endpoint::Mutate);
    assert!(a["response"]["patch"].is_string(), "{a}");
    assert!(warnings_of(&a).is_empty(), "{a}");
}

/// A Linux-only image in a pod pinned to Windows: the pod is not given the Windows
/// toleration (it would be scheduled where it can never start); it is left as written.
#[test]
fn a_linux_image_is_not_tolerated_onto_windows_nodes() {
    let w = Webhook::new(Config::default());
    let busybox = pod(json!({"nodeSelector": {"kubernetes.io/os": "windows"},
        "containers": [{"name": "a", "image": "busybox:1.36"}]}));
    let after = patched(&busybox, &answer(&w, &busybox, Endpoint::Mutate));
    assert!(after["spec"].get("tolerations").is_none(), "{after}");
    // A Windows image in the same pod is tolerated (the mutation is not switched off).
    let iis = pod(json!({"nodeSelector": {"kubernetes.io/os": "windows"},
        "containers": [{"name": "a", "image": SERVERCORE}]}));
    let after = patched(&iis, &answer(&w, &iis, Endpoint::Mutate));
    assert!(after["spec"]["tolerations"].is_array(), "{after}");

    // Its Deployment, where the taint is known: denied for the toleration it lacks, not
    // admitted on the promise of one its pods will not get.
    let deployment = workload("Deployment", busybox["spec"].clone());
    let a = answer(&Webhook::new(tainted()), &deployment, Endpoint::Validate);
    denied_without_promises(&a);
}

/// A denied workload creates no pod: no warning says what its pods would get (the unpinned
/// Windows DaemonSet was told "the mutating webhook adds nodeSelector" above a denial for that
/// selector). Denials link each rule's documentation page.
#[test]
fn a_denial_is_not_contradicted_and_links_the_rule_page() {
    let w = Webhook::new(Config::default());
    let daemonset = workload(
        "DaemonSet",
        json!({"containers": [{"name": "a", "image": SERVERCORE}]}),
    );
    let a = answer(&w, &daemonset, Endpoint::Validate);
    denied_without_promises(&a);
    let message = a["response"]["status"]["message"].as_str().unwrap();
    assert!(
        message.contains(
            "(fix: see https://github.com/winlint/winlint/blob/main/docs/rules/WIN001.md)"
        ) || message
            .contains("; see https://github.com/winlint/winlint/blob/main/docs/rules/WIN001.md)"),
        "{message}"
    );
    assert!(!message.contains("winlint explain"), "{message}");

    // A Deployment whose toleration the pods would get but whose ltsc2019 image no node runs:
    // denied for the image, and not told of the toleration.
    let deployment = workload(
        "Deployment",
        json!({"nodeSelector": {"kubernetes.io/os": "windows"},
            "containers": [{"name": "a",
                "image": "mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2019"}]}),
    );
    let a = answer(&Webhook::new(tainted()), &deployment, Endpoint::Validate);
    denied_without_promises(&a);
    assert!(
        a["response"]["status"]["message"]
            .as_str()
            .unwrap()
            .contains("- WIN502"),
        "{a}"
    );
}

/// A Windows pod spec, placed and tolerated as the default target wants.
fn placed(security: Value, container: Value) -> Value {
    json!({"os": {"name": "windows"},
        "nodeSelector": {"kubernetes.io/os": "windows"},
        "tolerations": [{"key": "os", "operator": "Equal", "value": "windows",
            "effect": "NoSchedule"}],
        "securityContext": security,
        "containers": [container]})
}

/// Issue 26: `runAsNonRoot: true` on Server Core (IIS, .NET Framework) without `runAsUserName`.
/// The image config sets no `User`, so the kubelet's `verifyRunAsNonRoot`
/// (pkg/kubelet/kuberuntime/security_context_windows.go) has nothing to compare and starts the
/// container (kubernetes/kubernetes#112469): admitted, with a warning that `runAsNonRoot` is not
/// enforced, and never mutated to ContainerUser (that breaks applications that need
/// administrator rights). With `runAsUserName: ContainerAdministrator` the kubelet refuses it:
/// denied.
#[test]
fn runasnonroot_is_denied_only_where_the_kubelet_refuses_it() {
    let w = Webhook::new(Config::default());
    for image in [
        SERVERCORE,
        "mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2022",
        "mcr.microsoft.com/dotnet/framework/aspnet:4.8-windowsservercore-ltsc2022",
    ] {
        let s = placed(
            json!({"runAsNonRoot": true}),
            json!({"name": "web", "image": image}),
        );
        for object in [pod(s.clone()), workload("Deployment", s.clone())] {
            let a = answer(&w, &object, Endpoint::Validate);
            assert_eq!(a["response"]["allowed"], true, "{image}: {a}");
            let said = warnings_of(&a);
            assert!(
                said.iter()
                    .any(|w| unnamed(w).starts_with("WIN409") && w.contains("not enforced")),
                "{image}: {said:?}"
            );
        }
        let object = pod(s);
        let a = answer(&w, &object, Endpoint::Mutate);
        assert_eq!(a["response"]["allowed"], true, "{a}");
        let after = patched(&object, &a);
        assert!(
            !after.to_string().contains("runAsUserName"),
            "{image}: {after}"
        );
    }
    let refused = placed(
        json!({"runAsNonRoot": true,
            "windowsOptions": {"runAsUserName": "ContainerAdministrator"}}),
        json!({"name": "web", "image": SERVERCORE}),
    );
    let a = answer(&w, &pod(refused), Endpoint::Validate);
    assert_eq!(a["response"]["allowed"], false, "{a}");
    assert!(
        a["response"]["status"]["message"]
            .as_str()
            .unwrap()
            .contains("WIN409"),
        "{a}"
    );
}

/// Issue 26: Linux programs in the e2e busybox images, which bring them on Windows, are
/// admitted without a WIN413 warning; a whole command line in one element is never found,
/// whatever the image brings.
#[test]
fn linux_programs_in_busybox_images_are_admitted_silently() {
    let w = Webhook::new(Config::default());
    let busybox = |command: Value| {
        pod(placed(
            json!({}),
            json!({"name": "busybox", "image": "registry.k8s.io/e2e-test-images/busybox:1.29-4",
                "command": command}),
        ))
    };
    let a = answer(
        &w,
        &busybox(json!(["/bin/sleep", "10000"])),
        Endpoint::Validate,
    );
    assert_eq!(a["response"]["allowed"], true, "{a}");
    assert!(
        !warnings_of(&a)
            .iter()
            .any(|w| unnamed(w).starts_with("WIN413")),
        "{a}"
    );
    let a = answer(&w, &busybox(json!(["sleep 10000"])), Endpoint::Validate);
    assert_eq!(a["response"]["allowed"], false, "{a}");
}
