//! Every object of every file of the real-world corpus (`testdata/realworld/windows` and
//! `linux`) through `winlint serve` with default settings, registered on a real kube-apiserver
//! 1.32 (tests/k8s_support), on realistic cluster shapes built from Nodes as plain objects; and
//! every workload's pods created as its controller would create them. What the API server must
//! answer, per object and shape, is written down in `testdata/realworld/webhook.yaml`, where each
//! denial says why it is right (issue 8: a webhook that denies a pod that would have run is the
//! worst bug this product can have).
//!
//! Each file gets a fresh namespace per shape; the cluster-scoped objects of the corpus
//! (RuntimeClasses, a GMSACredentialSpec, a Calico IPAMConfig, with minimal CRDs for the last
//! two; Namespaces, ClusterRoles, ClusterRoleBindings and StorageClasses) are created once, before the first shape. Pods of a Deployment, StatefulSet, Job or
//! CronJob are its template as a Pod (a StatefulSet's claim volumes added); a DaemonSet's pods
//! are made as the DaemonSet controller makes them: one per node whose labels and taints the
//! template (plus the tolerations that controller adds) fits, pinned to it by
//! `matchFields metadata.name`; a DaemonSet that fits no node creates no pod: it "selects no
//! node" (one DaemonSet per node pool or build is how agents ship) or "runs nowhere" (it
//! selects nodes whose taints it does not tolerate: a warning must say so).
//!
//! Skips (and says why) without `KUBEBUILDER_ASSETS`, except under `CI=true`.
//! `WINLINT_CORPUS_PRINT=1 cargo test --test k8s_corpus -- --nocapture` prints every verdict
//! and every warning per shape.

mod k8s_support;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use k8s_support::{
    Cluster, Node, Webhook, cluster, daemon_tolerations, eventually, wait_windows_nodes,
    windows_builds,
};
use serde::Deserialize;
use serde_json::{Value, json};

const BUILD_2019: &str = "10.0.17763";
const BUILD_2022: &str = "10.0.20348";
const BUILD_2025: &str = "10.0.26100";

/// The cluster shapes: (name, nodes). Names are those of webhook.yaml's `shapes`.
fn shapes() -> Vec<(&'static str, Vec<Node>)> {
    const GKE: &str = "node.kubernetes.io/os=windows:NoSchedule";
    let aks = |name: &str, build: &str, sku: &str, pool: &str| {
        Node::windows(name, build)
            .label("kubernetes.azure.com/os-sku", sku)
            .label("agentpool", pool)
    };
    vec![
        (
            "tainted",
            vec![
                Node::linux("linux-1"),
                Node::windows("win22-1", BUILD_2022).taint("os=windows:NoSchedule"),
            ],
        ),
        (
            "gke",
            vec![
                Node::linux("linux-1").label("cloud.google.com/gke-nodepool", "default-pool"),
                Node::windows("win19-1", BUILD_2019)
                    .label("cloud.google.com/gke-nodepool", "win2019")
                    .label("cloud.google.com/gke-os-distribution", "windows_ltsc")
                    .taint(GKE),
                Node::windows("win22-1", BUILD_2022)
                    .label("cloud.google.com/gke-nodepool", "win2022")
                    .label("cloud.google.com/gke-os-distribution", "windows_ltsc")
                    .taint(GKE),
            ],
        ),
        (
            "aks",
            vec![
                Node::linux("linux-1")
                    .label("kubernetes.azure.com/os-sku", "Ubuntu")
                    .label("agentpool", "nodepool1"),
                aks("win22-1", BUILD_2022, "Windows2022", "npwin"),
                aks("win25-1", BUILD_2025, "Windows2025", "npws25"),
            ],
        ),
    ]
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Expected {
    /// Shape name → what it is (documentation; the names must be those of [`shapes`]).
    shapes: BTreeMap<String, String>,
    /// `windows/FILE.yaml` → `Kind/name` → verdict (one for every shape) or shape → verdict.
    files: BTreeMap<String, BTreeMap<String, Verdicts>>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Verdicts {
    Same(String),
    PerShape(BTreeMap<String, String>),
}

impl Verdicts {
    fn for_shape(&self, shape: &str) -> Option<&str> {
        match self {
            Verdicts::Same(v) => Some(v),
            Verdicts::PerShape(m) => m.get(shape).map(String::as_str),
        }
    }
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn load_expected() -> Expected {
    let path = root().join("testdata/realworld/webhook.yaml");
    let text = std::fs::read_to_string(&path).expect("read webhook.yaml");
    let mut docs = winlint::source::load(&text).unwrap_or_else(|e| panic!("webhook.yaml: {e:?}"));
    assert_eq!(docs.len(), 1, "webhook.yaml: one YAML document");
    serde_json::from_value(docs.remove(0).value).unwrap_or_else(|e| panic!("webhook.yaml: {e}"))
}

/// Every corpus file: (`windows/NAME.yaml`, its objects, or why it cannot be read).
fn corpus() -> Vec<(String, Result<Vec<Value>, String>)> {
    let mut out = Vec::new();
    for dir in ["windows", "linux"] {
        let mut files: Vec<PathBuf> =
            std::fs::read_dir(root().join("testdata/realworld").join(dir))
                .unwrap()
                .map(|e| e.unwrap().path())
                .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
                .collect();
        files.sort();
        for p in files {
            let name = format!("{dir}/{}", p.file_name().unwrap().to_string_lossy());
            // Empty documents (a trailing `---`) are skipped, as kubectl skips them.
            let objects = winlint::source::load_bytes_values(&std::fs::read(&p).unwrap())
                .map(|docs| docs.into_iter().filter(|d| !d.is_null()).collect())
                .map_err(|e| format!("line {}: {}", e.line, e.message));
            out.push((name, objects));
        }
    }
    out
}

fn kind(o: &Value) -> &str {
    o["kind"].as_str().unwrap_or("")
}

fn object_name(o: &Value) -> String {
    format!(
        "{}/{}",
        kind(o),
        o["metadata"]["name"].as_str().unwrap_or("")
    )
}

fn cluster_scoped(kind: &str) -> bool {
    matches!(
        kind,
        "RuntimeClass"
            | "GMSACredentialSpec"
            | "IPAMConfig"
            | "Namespace"
            | "ClusterRole"
            | "ClusterRoleBinding"
            | "StorageClass"
    )
}

/// Minimal CRDs for the custom resources that travel with corpus files.
fn crds() -> Value {
    let crd = |group: &str, kind: &str, plural: &str| {
        json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            // `*.k8s.io` groups need it; windows-gmsa's own CRD carries one.
            "metadata": {"name": format!("{plural}.{group}"), "annotations": {
                "api-approved.kubernetes.io": "https://github.com/kubernetes/enhancements/pull/1111"}},
            "spec": {"group": group, "scope": "Cluster",
                "names": {"kind": kind, "plural": plural, "singular": kind.to_lowercase(),
                    "listKind": format!("{kind}List")},
                "versions": [{"name": "v1", "served": true, "storage": true,
                    "schema": {"openAPIV3Schema": {"type": "object",
                        "x-kubernetes-preserve-unknown-fields": true}}}]}})
    };
    json!({"apiVersion": "v1", "kind": "List", "items": [
        crd("windows.k8s.io", "GMSACredentialSpec", "gmsacredentialspecs"),
        crd("crd.projectcalico.org", "IPAMConfig", "ipamconfigs"),
    ]})
}

/// The verdict of one create: `admitted`, `denied WIN…[,WIN…]` (winlint's validating or
/// mutating webhook refused it) or `rejected` (the API server itself refused it).
fn verdict(out: &k8s_support::Kubectl) -> String {
    if out.success {
        return "admitted".into();
    }
    if out.stderr.contains("denied the request") && out.stderr.contains("winlint") {
        let mut rules: Vec<String> = out
            .stderr
            .lines()
            .filter_map(|l| l.trim_start().strip_prefix("- WIN"))
            .map(|l| format!("WIN{}", &l[..3]))
            .collect();
        rules.sort();
        rules.dedup();
        return format!("denied {}", rules.join(","));
    }
    "rejected".into()
}

/// The winlint warnings of a create (admission warnings, not kubectl's deprecation notes).
fn winlint_warnings(out: &k8s_support::Kubectl) -> Vec<String> {
    out.warnings
        .iter()
        .filter(|w| w.starts_with("WIN") || w.starts_with("winlint"))
        .cloned()
        .collect()
}

/// What the API server said when it refused a create (`what`: the object or a pod), one line.
fn refusal(out: &k8s_support::Kubectl, what: &str) -> Vec<String> {
    if out.success {
        return vec![];
    }
    vec![format!(
        "({what}) {}",
        out.stderr.trim().replace('\n', " | ")
    )]
}

/// `kind` of a toleration matches `taint` (key=value:Effect form of [`Node::taints`]).
fn tolerates(tolerations: &[Value], taint: &str) -> bool {
    let (kv, effect) = taint.rsplit_once(':').unwrap();
    let (key, value) = kv.split_once('=').unwrap_or((kv, ""));
    tolerations.iter().any(|t| {
        let tkey = t["key"].as_str().unwrap_or("");
        let op = t["operator"].as_str().unwrap_or("Equal");
        let teffect = t["effect"].as_str().unwrap_or("");
        (teffect.is_empty() || teffect == effect)
            && (tkey.is_empty() && op == "Exists"
                || tkey == key && (op == "Exists" || t["value"].as_str().unwrap_or("") == value))
    })
}

fn label_expr_matches(labels: &BTreeMap<String, String>, e: &Value) -> bool {
    let key = e["key"].as_str().unwrap_or("");
    let values: Vec<&str> = e["values"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let got = labels.get(key).map(String::as_str);
    let num = |s: &str| s.parse::<i64>().ok();
    match e["operator"].as_str().unwrap_or("") {
        "In" => got.is_some_and(|g| values.contains(&g)),
        "NotIn" => got.is_none_or(|g| !values.contains(&g)),
        "Exists" => got.is_some(),
        "DoesNotExist" => got.is_none(),
        "Gt" => {
            matches!((got.and_then(num), values.first().and_then(|v| num(v))), (Some(g), Some(v)) if g > v)
        }
        "Lt" => {
            matches!((got.and_then(num), values.first().and_then(|v| num(v))), (Some(g), Some(v)) if g < v)
        }
        _ => false,
    }
}

/// Whether a pod of `spec` fits `node` by the predicates the DaemonSet controller and the
/// scheduler share: `nodeName`, the nodeSelector, the required node affinity (labels and the
/// `metadata.name` field) and the NoSchedule/NoExecute taints (the nodes here are ready and
/// have room).
fn fits(spec: &Value, node: &Node) -> bool {
    if spec["nodeName"].as_str().is_some_and(|n| n != node.name) {
        return false;
    }
    let labels: BTreeMap<String, String> = node.labels.iter().cloned().collect();
    let fields = BTreeMap::from([("metadata.name".to_string(), node.name.clone())]);
    let selector_ok = spec["nodeSelector"]
        .as_object()
        .into_iter()
        .flatten()
        .all(|(k, v)| labels.get(k).map(String::as_str) == v.as_str());
    let terms = &spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
        ["nodeSelectorTerms"];
    let affinity_ok = terms.as_array().is_none_or(|terms| {
        terms.iter().any(|t| {
            let all = |key: &str, of: &BTreeMap<String, String>| {
                t[key]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .all(|e| label_expr_matches(of, e))
            };
            all("matchExpressions", &labels) && all("matchFields", &fields)
        })
    });
    let tolerations = spec["tolerations"].as_array().cloned().unwrap_or_default();
    let taints_ok = node.taints.iter().all(|t| tolerates(&tolerations, t));
    selector_ok && affinity_ok && taints_ok
}

/// A pod's verdict, with `, fits no node` when it was admitted (as stored: after the
/// mutating webhook) yet no node of the shape can take it: admitted, it would never run. A
/// pod with `spec.os` counts only nodes of that OS (the kubelet refuses the others).
fn scheduled(verdict: String, created: &k8s_support::Kubectl, nodes: &[Node]) -> String {
    if !created.success {
        return verdict;
    }
    let pod = created.json();
    let os = pod["spec"]["os"]["name"].as_str();
    let runs = |n: &&Node| {
        os.is_none_or(|os| {
            n.labels
                .iter()
                .any(|(k, v)| k == "kubernetes.io/os" && v == os)
        })
    };
    if nodes.iter().filter(runs).any(|n| fits(&pod["spec"], n)) {
        verdict
    } else {
        format!("{verdict}, fits no node")
    }
}

/// A workload's pod template.
fn template(workload: &Value) -> &Value {
    match kind(workload) {
        "CronJob" => &workload["spec"]["jobTemplate"]["spec"]["template"],
        _ => &workload["spec"]["template"],
    }
}

/// The pods a workload's controller creates: (where, pod). Empty for a DaemonSet that fits no
/// node.
fn controller_pods(stored: &Value, ns: &str, nodes: &[Node]) -> Vec<(String, Value)> {
    let template = template(stored);
    let mut p = json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"generateName": "pod-", "namespace": ns},
        "spec": template["spec"].clone()});
    for k in ["labels", "annotations"] {
        if template["metadata"][k].is_object() {
            p["metadata"][k] = template["metadata"][k].clone();
        }
    }
    // A StatefulSet's controller adds a volume per claim template.
    for claim in stored["spec"]["volumeClaimTemplates"]
        .as_array()
        .into_iter()
        .flatten()
    {
        let claim = claim["metadata"]["name"].as_str().unwrap();
        let vol = json!({"name": claim, "persistentVolumeClaim": {"claimName": claim}});
        match p["spec"]["volumes"].as_array_mut() {
            Some(v) => v.push(vol),
            None => p["spec"]["volumes"] = json!([vol]),
        }
    }
    if kind(stored) != "DaemonSet" {
        return vec![("pod".into(), p)];
    }
    let mut spec = p["spec"].clone();
    let mut tolerations = spec["tolerations"].as_array().cloned().unwrap_or_default();
    tolerations.extend(daemon_tolerations(&spec));
    spec["tolerations"] = tolerations.into();
    nodes
        .iter()
        .filter(|n| fits(&spec, n))
        .map(|n| {
            let mut p = p.clone();
            p["spec"] = spec.clone();
            p["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] = json!({
                "nodeSelectorTerms": [{"matchFields": [
                    {"key": "metadata.name", "operator": "In", "values": [n.name]}]}]});
            (n.name.clone(), p)
        })
        .collect()
}

/// One object's observed verdict, in webhook.yaml's words: the object's, then its pods' when
/// they differ (`; pods <verdict>`, per node for a DaemonSet whose nodes disagree, `; runs
/// nowhere` for a DaemonSet that fits no node).
fn combine(object: &str, pods: Option<(Vec<(String, String)>, bool)>) -> String {
    let Some((pods, selects)) = pods else {
        return object.to_string();
    };
    if pods.is_empty() {
        return if selects {
            format!("{object}; runs nowhere")
        } else {
            format!("{object}; selects no node")
        };
    }
    let distinct: BTreeSet<&str> = pods.iter().map(|(_, v)| v.as_str()).collect();
    if distinct.len() == 1 {
        let v = *distinct.first().unwrap();
        if v == object {
            object.to_string()
        } else {
            format!("{object}; pods {v}")
        }
    } else {
        let per: Vec<String> = pods.iter().map(|(n, v)| format!("{n} {v}")).collect();
        format!("{object}; pods {}", per.join(", "))
    }
}

struct Observed {
    file: String,
    object: String,
    verdict: String,
    warnings: Vec<String>,
    /// The API server's answer to a refused create (printed with `WINLINT_CORPUS_PRINT=1`).
    refusals: Vec<String>,
}

/// Send one corpus file through the webhook in namespace `ns`.
fn run_file(
    c: &Cluster,
    wh: &Webhook,
    ns: &str,
    file: &str,
    objects: &Result<Vec<Value>, String>,
    nodes: &[Node],
) -> Vec<Observed> {
    let objects = match objects {
        Ok(o) => o,
        // kubectl refuses such a file as a whole, as winlint's loader does.
        Err(e) => {
            return vec![Observed {
                file: file.to_string(),
                object: "(file)".into(),
                verdict: "unreadable".into(),
                warnings: vec![],
                refusals: vec![e.clone()],
            }];
        }
    };
    wh.namespace(ns, &[]);
    // The ServiceAccounts the workloads name (no controller-manager here, and the
    // ServiceAccount admission plugin refuses a pod whose account does not exist).
    let mut accounts = BTreeSet::new();
    for o in objects {
        for spec in [
            &o["spec"],
            &o["spec"]["template"]["spec"],
            &o["spec"]["jobTemplate"]["spec"]["template"]["spec"],
        ] {
            for k in ["serviceAccountName", "serviceAccount"] {
                if let Some(sa) = spec[k].as_str().filter(|s| *s != "default") {
                    accounts.insert(sa.to_string());
                }
            }
        }
    }
    // An account the file defines itself is created with the file's objects (before its
    // workloads, as a file lists it).
    for o in objects.iter().filter(|o| kind(o) == "ServiceAccount") {
        if let Some(name) = o["metadata"]["name"].as_str() {
            accounts.remove(name);
        }
    }
    for sa in accounts {
        c.create(&json!({"apiVersion": "v1", "kind": "ServiceAccount",
            "metadata": {"name": sa, "namespace": ns}}))
            .ok();
    }
    let mut out = Vec::new();
    for o in objects.iter().filter(|o| !cluster_scoped(kind(o))) {
        let mut o = o.clone();
        o["metadata"]["namespace"] = ns.into();
        let created = c.create(&o);
        let object = if kind(&o) == "Pod" {
            scheduled(verdict(&created), &created, nodes)
        } else if created.success
            && created.json()["metadata"]["annotations"]
                .get("winlint.io/mutated")
                .is_some()
        {
            // Workloads are stored as written by default (GitOps tools would fight a rewrite).
            "admitted, mutated".into()
        } else {
            verdict(&created)
        };
        let mut warnings = winlint_warnings(&created);
        let mut refusals = refusal(&created, "object");
        let workload = kind(&o) != "Pod" && winlint::model::workload::is_pod_kind(kind(&o));
        let pods = workload.then(|| {
            // Stored when admitted (defaults filled in); the object as sent otherwise.
            let stored = if created.success {
                created.json()
            } else {
                o.clone()
            };
            // Whether its selector and affinity pick some node, whatever the taints.
            let mut any_taint = template(&stored)["spec"].clone();
            any_taint["tolerations"] = json!([{"operator": "Exists"}]);
            let selects = nodes.iter().any(|n| fits(&any_taint, n));
            let pods = controller_pods(&stored, ns, nodes)
                .into_iter()
                .map(|(at, p)| {
                    let made = c.create(&p);
                    for w in winlint_warnings(&made) {
                        warnings.push(format!("(pod on {at}) {w}"));
                    }
                    refusals.extend(refusal(&made, &format!("pod on {at}")));
                    (at, scheduled(verdict(&made), &made, nodes))
                })
                .collect();
            (pods, selects)
        });
        out.push(Observed {
            file: file.to_string(),
            object: object_name(&o),
            verdict: combine(&object, pods),
            warnings,
            refusals,
        });
    }
    let _ = c.kubectl(&["delete", "namespace", ns, "--wait=false"], None);
    out
}

/// Make the cluster's Nodes exactly `nodes` and wait until the webhook evaluates with them.
fn nodes_are(c: &Cluster, wh: &Webhook, nodes: &[Node]) {
    c.kubectl(&["delete", "nodes", "--all", "--wait=false"], None)
        .ok();
    wait_windows_nodes(wh, &BTreeMap::new());
    for n in nodes {
        c.create_node(n);
    }
    wait_windows_nodes(wh, &windows_builds(nodes));
}

/// The whole corpus on every shape, judged against testdata/realworld/webhook.yaml.
fn the_realworld_corpus_through_the_webhook_on_three_cluster_shapes() {
    let Some(c) = cluster() else { return };
    let t = Instant::now();
    let expected = load_expected();
    let shapes = shapes();
    assert_eq!(
        expected
            .shapes
            .keys()
            .map(String::as_str)
            .collect::<Vec<_>>(),
        {
            let mut s: Vec<&str> = shapes.iter().map(|(n, _)| *n).collect();
            s.sort();
            s
        },
        "webhook.yaml's shapes are those of the test"
    );
    let corpus = corpus();
    c.apply(&crds()).ok();
    eventually("the corpus CRDs are served", || {
        let out = c.kubectl(&["get", "gmsacredentialspecs,ipamconfigs"], None);
        if out.success { Ok(()) } else { Err(out.stderr) }
    });
    let kc = c.kubeconfig.display().to_string();
    let wh = Webhook::start(
        &c,
        None,
        &["--kubeconfig", &kc, "--metrics-listen", "127.0.0.1:0"],
    );

    // Cluster-scoped objects: once, before every shape (a RuntimeClass is a cluster fact).
    let mut cluster_wide: Vec<Observed> = Vec::new();
    for (file, objects) in &corpus {
        let objects = objects.as_deref().unwrap_or_default();
        for o in objects.iter().filter(|o| cluster_scoped(kind(o))) {
            let created = c.create(o);
            cluster_wide.push(Observed {
                file: file.clone(),
                object: object_name(o),
                verdict: verdict(&created),
                warnings: winlint_warnings(&created),
                refusals: refusal(&created, "object"),
            });
        }
    }

    let print = std::env::var("WINLINT_CORPUS_PRINT").is_ok_and(|v| v == "1");
    let mut failures = Vec::new();
    let mut counts: BTreeMap<&str, BTreeMap<String, usize>> = BTreeMap::new();
    for (s, (shape, nodes)) in shapes.iter().enumerate() {
        let ts = Instant::now();
        nodes_are(&c, &wh, nodes);
        let next = AtomicUsize::new(0);
        let results = Mutex::new(Vec::new());
        std::thread::scope(|scope| {
            for _ in 0..3 {
                scope.spawn(|| {
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some((file, objects)) = corpus.get(i) else {
                            break;
                        };
                        let ns = format!("corpus-{s}-{i}-{}", std::process::id() % 100_000);
                        let got = run_file(&c, &wh, &ns, file, objects, nodes);
                        results.lock().unwrap().extend(got);
                    }
                });
            }
        });
        let mut results = results.into_inner().unwrap();
        results.extend(cluster_wide.iter().map(|o| Observed {
            file: o.file.clone(),
            object: o.object.clone(),
            verdict: o.verdict.clone(),
            warnings: o.warnings.clone(),
            refusals: o.refusals.clone(),
        }));
        results.sort_by(|a, b| (&a.file, &a.object).cmp(&(&b.file, &b.object)));
        let mut seen = BTreeSet::new();
        for r in &results {
            seen.insert((r.file.clone(), r.object.clone()));
            let word = r.verdict.split([' ', ';']).next().unwrap().to_string();
            *counts.entry(shape).or_default().entry(word).or_default() += 1;
            let want = expected
                .files
                .get(&r.file)
                .and_then(|f| f.get(&r.object))
                .and_then(|v| v.for_shape(shape));
            if want != Some(r.verdict.as_str()) {
                failures.push(format!(
                    "{shape}: {} {}: want {}, got {}\n    warnings: {:?}",
                    r.file,
                    r.object,
                    want.unwrap_or("(nothing written)"),
                    r.verdict,
                    r.warnings
                ));
            }
            // Admitted although it will run nowhere: the user must be told.
            let nowhere = r.verdict.contains("runs nowhere") || r.verdict.contains("fits no node");
            let told = r.warnings.iter().any(|w| {
                ["WIN006", "WIN007", "WIN010"]
                    .iter()
                    .any(|id| w.starts_with(id))
            });
            if r.verdict.starts_with("admitted") && nowhere && !told {
                failures.push(format!(
                    "{shape}: {} {}: {}, without a warning that says so: {:?}",
                    r.file, r.object, r.verdict, r.warnings
                ));
            }
            // Where Windows nodes are untainted (aks), a Linux control whose images have no
            // Windows variant and that has no OS pin can land on them: WIN011 says so and the
            // Linux guard pins its pods (issue 18). Nothing else, and nowhere else.
            let linux_guard = |w: &String| {
                *shape == "aks"
                    && (w.starts_with("WIN011:")
                        || w.contains("WIN011: linuxGuard pinned it to Linux:"))
            };
            if r.file.starts_with("linux/") && !r.warnings.iter().all(linux_guard) {
                failures.push(format!(
                    "{shape}: {} {}: a Linux control got winlint warnings: {:?}",
                    r.file, r.object, r.warnings
                ));
            }
            if print {
                eprintln!("{shape}\t{}\t{}\t{}", r.file, r.object, r.verdict);
                for w in &r.warnings {
                    eprintln!("{shape}\t\t\t  warning: {w}");
                }
                for w in &r.refusals {
                    eprintln!("{shape}\t\t\t  refused: {w}");
                }
            }
        }
        for (file, objects) in &expected.files {
            for (object, v) in objects {
                if v.for_shape(shape).is_some() && !seen.contains(&(file.clone(), object.clone())) {
                    failures.push(format!(
                        "{shape}: {file} {object}: written down, not in the corpus"
                    ));
                }
            }
        }
        eprintln!(
            "shape {shape}: {} objects in {:.1?}: {:?}",
            results.len(),
            ts.elapsed(),
            counts[shape]
        );
    }
    assert!(
        wh.log_text().lines().all(|l| !l.contains("panicked")),
        "{}",
        wh.log_text()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    eprintln!(
        "the corpus on {} shapes in {:.1?}",
        shapes.len(),
        t.elapsed()
    );
}

/// The tests (libtest-mimic: a test that lacks an outside tool is reported ignored, with how
/// to get it; tests/skip_support).
fn main() {
    use k8s_support::skip_support::{run, test};
    run(vec![test(
        "the_realworld_corpus_through_the_webhook_on_three_cluster_shapes",
        the_realworld_corpus_through_the_webhook_on_three_cluster_shapes,
    )]);
}
