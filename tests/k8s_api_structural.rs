//! Differential test of the API family (WIN8xx, issue 26 item 5) against a real kube-apiserver
//! 1.32 (tests/k8s_support): "0 errors" must mean that the API server accepts the object.
//!
//! The workload objects of the real-world corpus (`testdata/realworld/{windows,linux}`) and of
//! the golden cases (`testdata/rules/*/*/input.yaml`) are sent as they are, and the real-world
//! ones again with each structural mutation of [`mutations`] (a selector that no longer selects
//! the template, an image dropped, a container name used twice, port 0 and 70000, a quantity that
//! does not parse, a request above its limit, a label value with a space, a restartPolicy the
//! kind refuses, …, and near misses the server accepts). Each is created with a server-side dry
//! run (`POST …?dryRun=All`) and linted at the 1.32 target:
//!
//! * the server rejects the object exactly when winlint reports an error of a rule that says
//!   the API server refuses it (the WIN8xx family and [`API_RULES`], those of
//!   tests/k8s_api_fields.rs);
//! * for a mutation, a WIN8xx error points at a field the server names (`details.causes[].field`),
//!   or the server could not decode the object at all (a quantity, a label value that is no
//!   string).
//!
//! Counts are printed. Skips (and says why) without `KUBEBUILDER_ASSETS`, except under `CI=true`.

mod k8s_support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use k8s_support::{ADMIN_TOKEN, cluster, dotted, golden_inputs, https_request};
use serde_json::{Value, json};
use winlint::config::{Config, KubeVersion};
use winlint::engine;
use winlint::model::workload;
use winlint::model::{Context, Finding, Operation, Severity};

/// The rules outside the family whose errors claim that the API server rejects the pod (as in
/// tests/k8s_api_fields.rs).
const API_RULES: &[&str] = &[
    "WIN009", "WIN101", "WIN102", "WIN103", "WIN104", "WIN105", "WIN106", "WIN201", "WIN202",
    "WIN203", "WIN304", "WIN403", "WIN404", "WIN412", "WIN604",
];

/// (kind, apiVersion, REST path of the collection under a namespace).
const KINDS: &[(&str, &str, &str)] = &[
    ("Pod", "v1", "/api/v1/namespaces/{ns}/pods"),
    ("PodTemplate", "v1", "/api/v1/namespaces/{ns}/podtemplates"),
    (
        "ReplicationController",
        "v1",
        "/api/v1/namespaces/{ns}/replicationcontrollers",
    ),
    (
        "Deployment",
        "apps/v1",
        "/apis/apps/v1/namespaces/{ns}/deployments",
    ),
    (
        "ReplicaSet",
        "apps/v1",
        "/apis/apps/v1/namespaces/{ns}/replicasets",
    ),
    (
        "DaemonSet",
        "apps/v1",
        "/apis/apps/v1/namespaces/{ns}/daemonsets",
    ),
    (
        "StatefulSet",
        "apps/v1",
        "/apis/apps/v1/namespaces/{ns}/statefulsets",
    ),
    ("Job", "batch/v1", "/apis/batch/v1/namespaces/{ns}/jobs"),
    (
        "CronJob",
        "batch/v1",
        "/apis/batch/v1/namespaces/{ns}/cronjobs",
    ),
];

fn config() -> Config {
    let mut c = Config::default();
    c.target.kubernetes = KubeVersion::new(1, 32);
    c
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The workload objects of `files` in a served API version: (label, object, RuntimeClasses of
/// the file).
fn objects(files: &[PathBuf]) -> Vec<(String, Value, Vec<Value>)> {
    let mut out = Vec::new();
    for file in files {
        let Ok(values) = winlint::source::load_bytes_values(&std::fs::read(file).unwrap()) else {
            continue;
        };
        let label = file
            .strip_prefix(root().join("testdata"))
            .unwrap_or(file)
            .display()
            .to_string();
        let runtime_classes: Vec<Value> = values
            .iter()
            .filter(|v| v["kind"] == "RuntimeClass")
            .cloned()
            .collect();
        for (i, v) in values.into_iter().enumerate() {
            let (kind, version) = (
                v["kind"].as_str().unwrap_or(""),
                v["apiVersion"].as_str().unwrap_or(""),
            );
            if KINDS.iter().any(|(k, a, _)| *k == kind && *a == version)
                && v["metadata"].is_object()
            {
                out.push((
                    format!("{label} #{i} {kind}"),
                    v.clone(),
                    runtime_classes.clone(),
                ));
            }
        }
    }
    out
}

fn yaml_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .collect();
    files.sort();
    files
}

/// The pointer of the first pod site's PodSpec and pod metadata of `object`.
fn site_ptrs(object: &Value) -> Option<(String, String)> {
    let sites = workload::pod_sites(object);
    let s = sites.first()?;
    Some((s.spec_ptr.clone(), s.meta_ptr.clone()))
}

/// `object` with `value` at `ptr` (objects created on the way; `Null` removes).
fn set(mut object: Value, ptr: &str, value: Value) -> Value {
    let parts: Vec<String> = ptr
        .trim_start_matches('/')
        .split('/')
        .map(|p| p.replace("~1", "/").replace("~0", "~"))
        .collect();
    let mut cur = &mut object;
    for (i, part) in parts.iter().enumerate() {
        let last = i + 1 == parts.len();
        if cur.is_array() {
            let items = cur.as_array_mut().unwrap();
            let n: usize = part.parse().expect("an index");
            if last {
                if n >= items.len() {
                    items.push(value);
                } else {
                    items[n] = value;
                }
                return object;
            }
            cur = &mut items[n];
            continue;
        }
        if !cur.is_object() {
            *cur = json!({});
        }
        let map = cur.as_object_mut().unwrap();
        if last {
            if value.is_null() {
                map.remove(part);
            } else {
                map.insert(part.clone(), value);
            }
            return object;
        }
        cur = map.entry(part.clone()).or_insert_with(|| json!({}));
    }
    object
}

/// One mutation: its name, whether the server must reject what it makes, and the function
/// (object, PodSpec pointer, pod metadata pointer) → mutated object (`None`: not applicable).
type Mutate = fn(&Value, &str, &str) -> Option<Value>;

fn with_label_selector(object: &Value) -> bool {
    matches!(
        object["kind"].as_str(),
        Some("Deployment" | "ReplicaSet" | "DaemonSet" | "StatefulSet")
    )
}

fn job_like(object: &Value) -> bool {
    matches!(object["kind"].as_str(), Some("Job" | "CronJob"))
}

fn container0(spec: &str) -> String {
    format!("{spec}/containers/0")
}

/// The structural mutations: (name, the server must reject it, mutate).
fn mutations() -> Vec<(&'static str, bool, Mutate)> {
    vec![
        ("template labels not selected", true, |o, _, m| {
            // A ReplicationController without a selector gets the template's labels as one.
            let rc_selects = o["kind"] == "ReplicationController"
                && o["spec"]["selector"]
                    .as_object()
                    .is_some_and(|m| !m.is_empty());
            (with_label_selector(o) || rc_selects).then(|| {
                set(
                    o.clone(),
                    &format!("{m}/labels"),
                    json!({"winlint-mutated": "yes"}),
                )
            })
        }),
        ("selector dropped", true, |o, _, _| {
            with_label_selector(o).then(|| set(o.clone(), "/spec/selector", Value::Null))
        }),
        ("selector empty", true, |o, _, _| {
            with_label_selector(o).then(|| set(o.clone(), "/spec/selector", json!({})))
        }),
        ("selector expression In without values", true, |o, _, _| {
            // `ValidateLabelSelectorRequirement`: In and NotIn need values, whatever the labels.
            with_label_selector(o).then(|| {
                set(
                    o.clone(),
                    "/spec/selector/matchExpressions",
                    json!([{"key": "winlint-mutated", "operator": "In", "values": []}]),
                )
            })
        }),
        (
            "selector expression NotIn without values",
            true,
            |o, _, _| {
                // Would select every pod if it parsed; it does not.
                with_label_selector(o).then(|| {
                    set(
                        o.clone(),
                        "/spec/selector/matchExpressions",
                        json!([{"key": "winlint-mutated", "operator": "NotIn"}]),
                    )
                })
            },
        ),
        ("template label added (still selected)", false, |o, _, m| {
            Some(set(
                o.clone(),
                &format!("{m}/labels/winlint-extra"),
                json!("v1.2_x"),
            ))
        }),
        ("image dropped", true, |o, s, _| {
            Some(set(
                o.clone(),
                &format!("{}/image", container0(s)),
                Value::Null,
            ))
        }),
        ("image empty", true, |o, s, _| {
            Some(set(
                o.clone(),
                &format!("{}/image", container0(s)),
                json!(""),
            ))
        }),
        ("no containers", true, |o, s, _| {
            Some(set(o.clone(), &format!("{s}/containers"), json!([])))
        }),
        ("container name used twice", true, |o, s, _| {
            let c = o.pointer(&container0(s))?.clone();
            let mut c2 = c.clone();
            c2["ports"] = json!([]);
            Some(set(o.clone(), &format!("{s}/containers/999"), c2))
        }),
        ("init container named as a container", true, |o, s, _| {
            let name = o.pointer(&format!("{}/name", container0(s)))?.clone();
            Some(set(
                o.clone(),
                &format!("{s}/initContainers"),
                json!([{"name": name, "image": "busybox:1.36"}]),
            ))
        }),
        ("container name with upper case and _", true, |o, s, _| {
            Some(set(
                o.clone(),
                &format!("{}/name", container0(s)),
                json!("Web_App"),
            ))
        }),
        ("container name of 63 characters", false, |o, s, _| {
            Some(set(
                o.clone(),
                &format!("{}/name", container0(s)),
                json!("c".repeat(63)),
            ))
        }),
        ("containerPort 0", true, |o, s, _| {
            Some(set(
                o.clone(),
                &format!("{}/ports", container0(s)),
                json!([{"containerPort": 0}]),
            ))
        }),
        ("containerPort 70000", true, |o, s, _| {
            Some(set(
                o.clone(),
                &format!("{}/ports", container0(s)),
                json!([{"containerPort": 70000}]),
            ))
        }),
        ("containerPort missing", true, |o, s, _| {
            Some(set(
                o.clone(),
                &format!("{}/ports", container0(s)),
                json!([{"name": "http"}]),
            ))
        }),
        ("hostPort 70000", true, |o, s, _| {
            Some(set(
                o.clone(),
                &format!("{}/ports", container0(s)),
                json!([{"containerPort": 80, "hostPort": 70000}]),
            ))
        }),
        ("port name of 16 characters", true, |o, s, _| {
            Some(set(
                o.clone(),
                &format!("{}/ports", container0(s)),
                json!([{"containerPort": 9182, "name": "windows-exporter"}]),
            ))
        }),
        ("port name used twice", true, |o, s, _| {
            Some(set(
                o.clone(),
                &format!("{}/ports", container0(s)),
                json!([{"containerPort": 80, "name": "http"},
                       {"containerPort": 81, "name": "http"}]),
            ))
        }),
        ("protocol in lower case", true, |o, s, _| {
            Some(set(
                o.clone(),
                &format!("{}/ports", container0(s)),
                json!([{"containerPort": 80, "protocol": "tcp"}]),
            ))
        }),
        ("ports at their limits (near miss)", false, |o, s, _| {
            Some(set(
                o.clone(),
                &format!("{}/ports", container0(s)),
                json!([{"containerPort": 65535, "name": "a-b-c-d-e-f-g-h", "protocol": "SCTP"},
                       {"containerPort": 1, "hostPort": 0, "protocol": "UDP"}]),
            ))
        }),
        ("quantity 512MB", true, |o, s, _| {
            Some(set(
                o.clone(),
                &format!("{}/resources", container0(s)),
                json!({"requests": {"memory": "512MB"}}),
            ))
        }),
        ("negative cpu", true, |o, s, _| {
            Some(set(
                o.clone(),
                &format!("{}/resources", container0(s)),
                json!({"limits": {"cpu": "-1"}}),
            ))
        }),
        ("request above limit", true, |o, s, _| {
            Some(set(
                o.clone(),
                &format!("{}/resources", container0(s)),
                json!({"requests": {"memory": "2Gi", "cpu": "1"}, "limits": {"memory": "1Gi", "cpu": "2"}}),
            ))
        }),
        (
            "request equal to limit in other units (near miss)",
            false,
            |o, s, _| {
                Some(set(
                    o.clone(),
                    &format!("{}/resources", container0(s)),
                    json!({"requests": {"memory": "1024Mi", "cpu": "1000m"}, "limits": {"memory": "1Gi", "cpu": 1}}),
                ))
            },
        ),
        ("label value with a space", true, |o, _, _| {
            Some(set(o.clone(), "/metadata/labels/winlint-bad", json!("a b")))
        }),
        ("label value 64 characters", true, |o, _, m| {
            Some(set(
                o.clone(),
                &format!("{m}/labels/winlint-long"),
                json!("v".repeat(64)),
            ))
        }),
        ("label value a number", true, |o, _, _| {
            Some(set(o.clone(), "/metadata/labels/winlint-num", json!(1.5)))
        }),
        ("label key with two slashes", true, |o, _, _| {
            Some(set(o.clone(), "/metadata/labels/a~1b~1c", json!("x")))
        }),
        ("name with upper case", true, |o, _, _| {
            Some(set(o.clone(), "/metadata/name", json!("Bad_Name")))
        }),
        ("CronJob jobTemplate with a selector", true, |o, _, _| {
            (o["kind"] == "CronJob").then(|| {
                set(
                    o.clone(),
                    "/spec/jobTemplate/spec/selector",
                    json!({"matchLabels": {"app": "x"}}),
                )
            })
        }),
        (
            "CronJob jobTemplate label value with a space",
            false,
            |o, _, _| {
                // Not validated with the CronJob (`ValidateJobTemplateSpec`): winlint says nothing.
                (o["kind"] == "CronJob").then(|| {
                    set(
                        o.clone(),
                        "/spec/jobTemplate/metadata/labels/winlint-bad",
                        json!("a b"),
                    )
                })
            },
        ),
        ("CronJob name of 53 characters", true, |o, _, _| {
            (o["kind"] == "CronJob")
                .then(|| set(o.clone(), "/metadata/name", json!("c".repeat(53))))
        }),
        ("restartPolicy OnFailure", false, |o, s, _| {
            let mut v = set(o.clone(), &format!("{s}/restartPolicy"), json!("OnFailure"));
            if !job_like(o) && o["kind"] != "Pod" && o["kind"] != "PodTemplate" {
                // Refused by controllers: the server must reject it.
                v["metadata"]["annotations"]["winlint.test/expect"] = json!("reject");
            }
            Some(v)
        }),
        ("restartPolicy Always", false, |o, s, _| {
            let mut v = set(o.clone(), &format!("{s}/restartPolicy"), json!("Always"));
            if job_like(o) {
                v["metadata"]["annotations"]["winlint.test/expect"] = json!("reject");
            }
            Some(v)
        }),
        ("restartPolicy removed", false, |o, s, _| {
            let mut v = set(o.clone(), &format!("{s}/restartPolicy"), Value::Null);
            if job_like(o) {
                v["metadata"]["annotations"]["winlint.test/expect"] = json!("reject");
            }
            Some(v)
        }),
        ("restartPolicy Sometimes", true, |o, s, _| {
            Some(set(
                o.clone(),
                &format!("{s}/restartPolicy"),
                json!("Sometimes"),
            ))
        }),
    ]
}

/// The server's answer to a dry-run create: accepted, the fields its causes name, its message.
struct Answer {
    accepted: bool,
    fields: Vec<String>,
    message: String,
}

fn dry_run(c: &k8s_support::Guard, ns: &str, object: &Value) -> Answer {
    let kind = object["kind"].as_str().unwrap_or("");
    let (_, _, path) = KINDS.iter().find(|(k, _, _)| *k == kind).expect("a kind");
    let path = format!("{}?dryRun=All", path.replace("{ns}", ns));
    let (status, body) = https_request(
        c.port,
        "POST",
        &path,
        Some(&object.to_string()),
        &c.ca_pem,
        ADMIN_TOKEN,
    )
    .unwrap_or_else(|e| panic!("POST {path}: {e}"));
    let body = dechunk(&body);
    let status_json: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
    let fields = status_json["details"]["causes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["field"].as_str().map(str::to_string))
        .collect();
    Answer {
        accepted: (200..300).contains(&status),
        fields,
        message: status_json["message"]
            .as_str()
            .map(str::to_string)
            .unwrap_or_else(|| format!("HTTP {status}")),
    }
}

/// A chunked body's data (the server chunks large answers).
fn dechunk(body: &str) -> String {
    if body.trim_start().starts_with('{') {
        return body.to_string();
    }
    let mut out = String::new();
    let mut rest = body;
    while let Some((size, tail)) = rest.split_once("\r\n") {
        let Ok(n) = usize::from_str_radix(size.trim(), 16) else {
            break;
        };
        if n == 0 || tail.len() < n {
            break;
        }
        out.push_str(&tail[..n]);
        rest = tail[n..].trim_start_matches("\r\n");
    }
    out
}

/// The first pod a StatefulSet controller creates: the template as a Pod, its claims as volumes.
fn statefulset_pod(set: &Value) -> Value {
    let name = set["metadata"]["name"].as_str().unwrap_or("set");
    let mut pod = json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": set["spec"]["template"]["metadata"].clone(),
        "spec": set["spec"]["template"]["spec"].clone()});
    pod["metadata"]["name"] = json!(format!("{name}-0"));
    pod["metadata"]["namespace"] = set["metadata"]["namespace"].clone();
    for claim in set["spec"]["volumeClaimTemplates"]
        .as_array()
        .into_iter()
        .flatten()
    {
        let claim_name = claim["metadata"]["name"].as_str().unwrap_or("");
        let volume = json!({"name": claim_name,
            "persistentVolumeClaim": {"claimName": format!("{claim_name}-{name}-0")}});
        match pod["spec"]["volumes"].as_array_mut() {
            Some(v) => v.push(volume),
            None => pod["spec"]["volumes"] = json!([volume]),
        }
    }
    pod
}

/// A field as the API server writes it, in winlint's spelling: a map key in brackets
/// (`limits[cpu]`) as a member (`limits.cpu`), a template's `labels` under its `metadata`.
fn normal(field: &str) -> String {
    let mut out = String::new();
    let mut rest = field;
    while let Some(open) = rest.find('[') {
        let Some(close) = rest[open..].find(']') else {
            break;
        };
        let key = &rest[open + 1..open + close];
        out.push_str(&rest[..open]);
        if key.parse::<usize>().is_ok() {
            out.push_str(&format!("[{key}]"));
        } else {
            out.push('.');
            out.push_str(key);
        }
        rest = &rest[open + close + 1..];
    }
    out.push_str(rest);
    out.replace("template.labels", "template.metadata.labels")
        .replace("template.annotations", "template.metadata.annotations")
}

/// Whether winlint's field and a field the server names are the same place, or one holds the
/// other (`metadata.labels` for a label's value, a container for its name).
fn related(ours: &str, theirs: &str) -> bool {
    let within = |a: &str, b: &str| {
        a == b || a.starts_with(&format!("{b}.")) || a.starts_with(&format!("{b}["))
    };
    within(ours, theirs) || within(theirs, ours)
}

/// The errors that claim the server rejects the object.
fn verdict(findings: &[Finding], kind: &str) -> Vec<Finding> {
    findings
        .iter()
        .filter(|f| {
            f.severity == Severity::Error
                && (f.rule.id.starts_with("WIN8")
                    || API_RULES.contains(&f.rule.id)
                    || (f.rule.id == "WIN007"
                        && f.message.contains("which the API server refuses")))
        })
        // A RuntimeClass refused (WIN009's admission, WIN604's unserved version) refuses the
        // pods, not the workload that creates them.
        .filter(|f| {
            kind == "Pod"
                || !(f.rule.id == "WIN009"
                    || (f.rule.id == "WIN604" && f.pointer.ends_with("/runtimeClassName")))
        })
        .cloned()
        .collect()
}

#[derive(Default)]
struct Tally {
    rejected: usize,
    admitted: usize,
    per_mutation: BTreeMap<&'static str, (usize, usize)>,
    problems: Vec<String>,
}

/// Make what the pod-level admission plugins look up exist (ServiceAccounts, RuntimeClasses,
/// PriorityClasses): their refusals are not structural. A cluster-scoped object another file
/// already made differently stays as it is (best effort: `apply` may fail).
fn prepare(c: &k8s_support::Guard, ns: &str, object: &Value, runtime_classes: &[Value]) {
    for rc in runtime_classes
        .iter()
        .filter(|r| r["apiVersion"] == "node.k8s.io/v1")
    {
        let _ = c.apply(rc);
    }
    for site in workload::pod_sites(object) {
        if let Some(sa) = site.str("/serviceAccountName") {
            let _ = c.apply(&json!({"apiVersion": "v1", "kind": "ServiceAccount",
                "metadata": {"name": sa, "namespace": ns}}));
        }
        if let Some(rc) = site.str("/runtimeClassName")
            && !runtime_classes.iter().any(|r| r["metadata"]["name"] == rc)
        {
            let _ = c.apply(
                &json!({"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass",
                "metadata": {"name": rc}, "handler": rc}),
            );
        }
        if let Some(pc) = site.str("/priorityClassName")
            && !pc.starts_with("system-")
        {
            let _ = c.apply(
                &json!({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                "metadata": {"name": pc}, "value": 1000}),
            );
        }
    }
}

/// Lint and dry-run `object`; `expect`: the server must reject (`Some(true)`) or admit
/// (`Some(false)`) it (a mutation), `None` for an object as written. Returns whether the server
/// accepted it.
fn compare(
    c: &k8s_support::Guard,
    ns: &str,
    name: &str,
    object: &Value,
    context: &Context,
    expect: Option<bool>,
    t: &Mutex<Tally>,
) -> bool {
    let mut object = object.clone();
    object["metadata"]["namespace"] = json!(ns);
    let report = engine::lint_object(&object, &config(), context, Operation::Lint);
    let kind = object["kind"].as_str().unwrap_or("");
    let errors = verdict(&report.findings, kind);
    let mut answer = dry_run(c, ns, &object);
    if kind == "StatefulSet" && answer.accepted {
        // The API server does not validate a StatefulSet's pod spec: its pods are refused.
        let pod = dry_run(c, ns, &statefulset_pod(&object));
        if !pod.accepted {
            answer = Answer {
                accepted: false,
                fields: pod
                    .fields
                    .iter()
                    .map(|f| format!("spec.template.{f}"))
                    .collect(),
                message: format!("its pod: {}", pod.message),
            };
        }
    }
    let says = |f: &Finding| format!("{} {} {}", f.rule.id, f.pointer, f.message);
    let mut t = t.lock().unwrap();
    if let Some(reject) = expect
        && reject == answer.accepted
    {
        t.problems.push(format!(
            "{name}: the mutation was meant to be {}, the server {} it ({})",
            if reject { "rejected" } else { "admitted" },
            if answer.accepted {
                "admitted"
            } else {
                "rejected"
            },
            answer.message
        ));
    }
    match (answer.accepted, errors.is_empty()) {
        (true, true) => t.admitted += 1,
        (true, false) => t.problems.push(format!(
            "{name}: the server admits it, winlint reports errors: {:?}",
            errors.iter().map(says).collect::<Vec<_>>()
        )),
        (false, true) => t.problems.push(format!(
            "{name}: the server rejects it ({}), winlint reports no API error",
            answer.message
        )),
        (false, false) => {
            t.rejected += 1;
            // A mutation's WIN8xx errors name a field the server names, unless the server could
            // not decode the object (no causes).
            if expect.is_some() && !answer.fields.is_empty() {
                for f in errors.iter().filter(|f| f.rule.id.starts_with("WIN8")) {
                    let ours = dotted(&f.pointer);
                    if !answer
                        .fields
                        .iter()
                        .any(|theirs| related(&ours, &normal(theirs)))
                    {
                        t.problems.push(format!(
                            "{name}: winlint's field {ours} ({}) is not among the server's {:?}: {}",
                            f.rule.id, answer.fields, answer.message
                        ));
                    }
                }
            }
        }
    }
    answer.accepted
}

/// The objects as written, then the real-world ones mutated.
fn api_family_matches_the_api_servers_dry_run() {
    let Some(c) = cluster() else { return };
    let ns = c.unique("structural");
    c.create_namespace(&ns, &[]);
    let mut realworld = yaml_files(&root().join("testdata/realworld/windows"));
    realworld.extend(yaml_files(&root().join("testdata/realworld/linux")));
    let realworld = objects(&realworld);
    let golden = objects(&golden_inputs());
    let t = Mutex::new(Tally::default());

    let mut accepted = Vec::new();
    for (name, object, runtime_classes) in realworld.iter().chain(golden.iter()) {
        prepare(&c, &ns, object, runtime_classes);
        let mut context = Context::default();
        for rc in runtime_classes {
            context.add(rc);
        }
        let ok = compare(&c, &ns, name, object, &context, None, &t);
        if ok && name.starts_with("realworld/") {
            accepted.push((name, object, context));
        }
    }
    let (as_written_rejected, as_written_admitted) = {
        let t = t.lock().unwrap();
        (t.rejected, t.admitted)
    };

    // Each mutation on each real-world object the server accepts as written.
    let jobs: Vec<(String, Value, &Context, bool, &'static str)> = accepted
        .iter()
        .flat_map(|(name, object, context)| {
            let (spec, meta) = site_ptrs(object).expect("a pod site");
            mutations().into_iter().filter_map(move |(m, reject, f)| {
                let v = f(object, &spec, &meta)?;
                let reject =
                    reject || v["metadata"]["annotations"]["winlint.test/expect"] == "reject";
                Some((format!("{name} [{m}]"), v, context, reject, m))
            })
        })
        .collect();
    let next = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some((name, v, context, reject, m)) = jobs.get(i) else {
                        break;
                    };
                    let ok = compare(&c, &ns, name, v, context, Some(*reject), &t);
                    let mut t = t.lock().unwrap();
                    let e = t.per_mutation.entry(m).or_default();
                    if ok {
                        e.1 += 1;
                    } else {
                        e.0 += 1;
                    }
                }
            });
        }
    });
    let t = t.into_inner().unwrap();
    eprintln!(
        "as written: {} objects ({} real-world, {} golden): {} rejected, {} admitted",
        realworld.len() + golden.len(),
        realworld.len(),
        golden.len(),
        as_written_rejected,
        as_written_admitted
    );
    eprintln!(
        "mutated: {} objects from {} accepted real-world objects",
        jobs.len(),
        accepted.len()
    );
    for (m, (rejected, admitted)) in &t.per_mutation {
        eprintln!("  {m}: {rejected} rejected, {admitted} admitted");
    }
    eprintln!(
        "in all: {} rejected, {} admitted, {} disagreements",
        t.rejected,
        t.admitted,
        t.problems.len()
    );
    assert!(
        t.problems.is_empty(),
        "winlint and kube-apiserver 1.32 disagree ({}):\n{}",
        t.problems.len(),
        t.problems.join("\n")
    );
    assert!(
        accepted.len() >= 50,
        "only {} accepted objects",
        accepted.len()
    );
    assert!(t.rejected >= 500, "only {} rejections compared", t.rejected);
}

fn helpers() {
    assert_eq!(
        dotted("/spec/template/spec/containers/0/ports/1/name"),
        "spec.template.spec.containers[0].ports[1].name"
    );
    assert!(related("metadata.labels.app", "metadata.labels"));
    assert!(related("spec.containers[0]", "spec.containers[0].name"));
    assert!(!related(
        "spec.containers[0].name",
        "spec.containers[1].name"
    ));
    assert_eq!(
        normal("spec.template.spec.containers[0].resources.limits[cpu]"),
        "spec.template.spec.containers[0].resources.limits.cpu"
    );
    assert_eq!(
        normal("spec.template.labels"),
        "spec.template.metadata.labels"
    );
    assert_eq!(dechunk("5\r\n{\"a\":\r\n2\r\n1}\r\n0\r\n\r\n"), "{\"a\":1}");
    let o = set(json!({"a": [{"b": 1}]}), "/a/0/c~1d", json!(2));
    assert_eq!(o["a"][0]["c/d"], 2);
    let o = set(o, "/a/0/b", Value::Null);
    assert!(o["a"][0].get("b").is_none());
}

/// The tests (libtest-mimic: a test that lacks an outside tool is reported ignored, with how
/// to get it; tests/skip_support).
fn main() {
    use k8s_support::skip_support::{run, test};
    run(vec![
        test(
            "api_family_matches_the_api_servers_dry_run",
            api_family_matches_the_api_servers_dry_run,
        ),
        test("helpers", helpers),
    ]);
}
