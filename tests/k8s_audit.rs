//! `winlint audit` and `winlint --cluster` against a real kube-apiserver 1.32
//! (tests/k8s_support): Nodes, RuntimeClasses and labelled Namespaces created as API objects,
//! the workloads of testdata/audit/ created with the ownerReferences their controllers would
//! set (no controller-manager runs), and the binary run against that server: its exact text and
//! JSON reports (testdata/audit/*.txt, *.json; `WINLINT_BLESS=1` rewrites them), exit codes,
//! `-n` against `-A`, RBAC refusals, and the target facts of `--cluster` against the offline
//! defaults and the flags that pin them. Skips (and says why) without `KUBEBUILDER_ASSETS`,
//! except under `CI=true`.
//!
//! Nodes are cluster-wide and both commands read them all: every test that needs nodes holds
//! [`NODES`] and replaces the nodes of the tests before it ([`with_nodes`]).

mod cli_support;
mod k8s_support;
mod registry_support;

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Mutex, MutexGuard};
use std::time::Instant;

use cli_support::{Out, Run, golden, root};
use k8s_support::{Guard, Node, SPARE_USERS, cluster, env_or};
use serde_json::{Value, json};

/// The label of every Node these tests create.
const TEST_LABEL: &str = "envtest.winlint.io/audit";

/// The RuntimeClass testdata/audit/prod.yaml uses: ltsc2022 nodes, tolerates their taint.
const RUNTIME_CLASS: &str = "audit-win2022";

static NODES: Mutex<()> = Mutex::new(());

/// Hold the node lock, delete the nodes of earlier tests and create `nodes` (labelled as this
/// binary's).
fn with_nodes(c: &Guard, nodes: Vec<Node>) -> MutexGuard<'static, ()> {
    let lock = NODES.lock().unwrap_or_else(|e| e.into_inner());
    c.kubectl(&["delete", "nodes", "-l", TEST_LABEL, "--wait=true"], None)
        .ok();
    for n in nodes {
        c.create_node(&n.label(TEST_LABEL, "yes"));
    }
    lock
}

/// One tainted ltsc2022 Windows node and one Linux node.
fn tainted_ltsc2022(c: &Guard) -> Vec<Node> {
    vec![
        Node::windows(&c.unique("w22"), "10.0.20348").taint("os=windows:NoSchedule"),
        Node::linux(&c.unique("lin")),
    ]
}

/// The RuntimeClass of the ltsc2022 nodes (server-side apply: the first test creates it).
fn runtime_class(c: &Guard) {
    c.apply(
        &json!({"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass",
        "metadata": {"name": RUNTIME_CLASS}, "handler": "runhcs-wcow-process",
        "scheduling": {
            "nodeSelector": {"kubernetes.io/os": "windows",
                "node.kubernetes.io/windows-build": "10.0.20348"},
            "tolerations": [{"key": "os", "operator": "Equal", "value": "windows",
                "effect": "NoSchedule"}]}}),
    )
    .ok();
}

/// Create the objects of `file` (testdata/audit/…) in namespace `ns`, in order, filling each
/// ownerReference's uid from the owner created before it.
fn create_all(c: &Guard, ns: &str, file: &str) {
    let text = std::fs::read_to_string(root().join(file)).unwrap();
    let mut uids: HashMap<(String, String), Value> = HashMap::new();
    let key = |v: &Value| {
        (
            v["kind"].as_str().unwrap().to_string(),
            v["name"].as_str().unwrap().to_string(),
        )
    };
    let docs = winlint::source::load_bytes_values(text.as_bytes()).expect("testdata YAML");
    for mut doc in docs.into_iter().filter(|d| !d.is_null()) {
        doc["metadata"]["namespace"] = ns.into();
        for r in doc["metadata"]["ownerReferences"]
            .as_array_mut()
            .into_iter()
            .flatten()
        {
            r["uid"] = uids
                .get(&key(r))
                .unwrap_or_else(|| panic!("{file}: owner {r} is not created before"))
                .clone();
        }
        let stored = c.create(&doc).ok().json();
        uids.insert(
            key(&json!({"kind": doc["kind"], "name": doc["metadata"]["name"]})),
            stored["metadata"]["uid"].clone(),
        );
    }
}

/// Run winlint with `args` (no `$KUBECONFIG`: each run names its kubeconfig).
fn winlint(args: &[&str]) -> Out {
    let out = Run::new(args).env_remove("KUBECONFIG").run();
    out.assert_clean_exit();
    out
}

fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// `text` with the test's names in placeholders: the server's URL, the namespaces.
fn normal(c: &Guard, text: &str, names: &[(&str, &str)]) -> String {
    let mut t = text.replace(&c.url, "$SERVER");
    for (name, placeholder) in names {
        t = t.replace(name, placeholder);
    }
    t
}

/// The namespaces of testdata/audit/prod.yaml and dev.yaml, created once per binary.
struct World {
    prod: String,
    dev: String,
}

fn world(c: &Guard) -> &'static World {
    static WORLD: std::sync::OnceLock<World> = std::sync::OnceLock::new();
    WORLD.get_or_init(|| {
        runtime_class(c);
        let w = World {
            prod: c.unique("prod"),
            dev: c.unique("dev"),
        };
        c.create_namespace(
            &w.prod,
            &[("pod-security.kubernetes.io/enforce", "baseline")],
        );
        c.create_namespace(&w.dev, &[]);
        create_all(c, &w.prod, "testdata/audit/prod.yaml");
        create_all(c, &w.dev, "testdata/audit/dev.yaml");
        w
    })
}

fn names(w: &World) -> [(&str, &str); 2] {
    [(w.prod.as_str(), "$PROD"), (w.dev.as_str(), "$DEV")]
}

fn audit_reports_each_workload_once_under_its_top_owner() {
    let Some(c) = cluster() else { return };
    let t0 = Instant::now();
    let _nodes = with_nodes(&c, tainted_ltsc2022(&c));
    let w = world(&c);
    let kc = path(&c.kubeconfig);

    // Text: the Deployment stands for its ReplicaSet and Pods, the CronJob for its Job and Pod;
    // standalone Pods are reported as themselves; the ignore annotation is honoured.
    let out = winlint(&["audit", "-n", &w.prod, "--kubeconfig", kc]);
    out.assert_code(1);
    assert_eq!(out.stderr, "");
    golden(
        "testdata/audit/prod.txt",
        &normal(&c, &out.stdout, &names(w)),
    );

    let out = winlint(&["audit", "-n", &w.prod, "--kubeconfig", kc, "-o", "json"]);
    out.assert_code(1);
    let report = out.json();
    golden(
        "testdata/audit/prod.json",
        &normal(&c, &out.stdout, &names(w)),
    );
    // No file: the object and the pointer place each finding.
    for f in report["findings"].as_array().unwrap() {
        assert!(f.get("file").is_none() && f.get("line").is_none(), "{f}");
        assert_eq!(f["namespace"], w.prod.as_str());
    }

    // SARIF: logical locations, no fake file.
    let out = winlint(&["audit", "-n", &w.prod, "--kubeconfig", kc, "-o", "sarif"]);
    out.assert_code(1);
    let sarif = out.json();
    let run = &sarif["runs"][0];
    assert_eq!(run["properties"]["cluster"]["context"], "envtest");
    let results = run["results"].as_array().unwrap();
    assert_eq!(results.len(), report["findings"].as_array().unwrap().len());
    let iis = results
        .iter()
        .find(|r| r["ruleId"] == "WIN007")
        .expect("a WIN007 result");
    let loc = &iis["locations"][0];
    assert!(loc.get("physicalLocation").is_none(), "{loc:#}");
    assert_eq!(
        loc["logicalLocations"][0]["fullyQualifiedName"],
        format!("{}/Deployment/iis/spec/template/spec", w.prod)
    );
    assert_eq!(
        loc["message"]["text"],
        format!(
            "Deployment/iis in namespace {} of the cluster, at /spec/template/spec",
            w.prod
        )
    );

    // GitHub annotations: on the run, the message names the object and the field.
    let out = winlint(&["audit", "-n", &w.prod, "--kubeconfig", kc, "-o", "github"]);
    out.assert_code(1);
    let iis = out.stdout.lines().find(|l| l.contains("/Deployment/iis"));
    assert_eq!(
        normal(&c, iis.unwrap_or_default(), &names(w)),
        "::error title=WIN007 missing-windows-toleration::$PROD/Deployment/iis: \
         /spec/template/spec: The Windows nodes this pod can select (1 node, 10.0.20348) are \
         tainted os=windows:NoSchedule but the pod does not tolerate it; it will stay Pending. Add a toleration"
    );

    // At a terminal: per object, as the linter's (forced). Wide: the messages name the
    // namespace, whose length changes with the run's pid, and would wrap differently; the
    // wrapping is tests/cli_text.rs's.
    let out = Run::new(&[
        "audit",
        "-n",
        &w.prod,
        "--kubeconfig",
        kc,
        "--layout",
        "grouped",
    ])
    .env("COLUMNS", "1000")
    .run();
    out.assert_code(1);
    golden(
        "testdata/audit/prod.grouped.txt",
        &normal(&c, &out.stdout, &names(w)),
    );
    // --statistics: per rule, per severity and per namespace.
    let out = winlint(&["audit", "-n", &w.prod, "--kubeconfig", kc, "--statistics"]);
    out.assert_code(1);
    // The namespace's name (and so its column's width) changes with the test run's pid: the
    // column is made as wide as the placeholder.
    let stats = normal(&c, &out.stdout, &names(w));
    let stats = regex::Regex::new(r"(?m)^(NAMESPACE|\$PROD) +")
        .unwrap()
        .replace_all(&stats, "${1}  ");
    golden("testdata/audit/prod.statistics.txt", &stats);
    // -o html: the linter's page, the objects named and placed as in the text.
    let out = winlint(&["audit", "-n", &w.prod, "--kubeconfig", kc, "-o", "html"]);
    out.assert_code(1);
    golden(
        "testdata/audit/prod.html",
        &normal(&c, &out.stdout, &names(w)),
    );

    // --fail-on as the linter's.
    winlint(&[
        "audit",
        "-n",
        &w.prod,
        "--kubeconfig",
        kc,
        "--fail-on",
        "never",
    ])
    .assert_code(0);
    eprintln!("test took {:.2?}", t0.elapsed());
}

fn audit_one_namespace_or_all() {
    let Some(c) = cluster() else { return };
    let _nodes = with_nodes(&c, tainted_ltsc2022(&c));
    let w = world(&c);
    let kc = path(&c.kubeconfig);
    let findings = |out: &Out, ns: &str| -> Vec<String> {
        out.stdout
            .lines()
            .filter(|l| l.starts_with(&format!("{ns}/")))
            .map(str::to_string)
            .collect()
    };
    let prod = winlint(&["audit", "-n", &w.prod, "--kubeconfig", kc]);
    let dev = winlint(&["audit", "-n", &w.dev, "--kubeconfig", kc]);
    dev.assert_code(1);
    assert_eq!(
        normal(&c, &dev.stdout, &names(w)),
        "$DEV/Pod/scratch: /spec/tolerations: error WIN007 missing-windows-toleration: The Windows nodes \
         this pod can select (1 node, 10.0.20348) are tainted os=windows:NoSchedule but the pod does not tolerate it; it will stay Pending. \
         Add a toleration\n\n\
         1 error, 0 warnings, 0 info in 1 object of 1 namespace (1 pod in the cluster, 1 pod \
         template checked); target from the cluster (context envtest at $SERVER): Kubernetes \
         1.32, 1 Windows node (ltsc2022), Windows taint os=windows:NoSchedule\n"
    );
    assert!(findings(&prod, &w.dev).is_empty());
    assert!(findings(&dev, &w.prod).is_empty());
    // -A: both namespaces, each as with -n.
    let all = winlint(&["audit", "-A", "--kubeconfig", kc]);
    all.assert_code(1);
    assert_eq!(findings(&all, &w.prod), findings(&prod, &w.prod));
    assert_eq!(findings(&all, &w.dev), findings(&dev, &w.dev));
    assert!(!findings(&all, &w.prod).is_empty());
    // --statistics -A: a row per namespace, counting what that namespace's findings are.
    let stats = winlint(&[
        "audit",
        "-A",
        "--kubeconfig",
        kc,
        "--statistics",
        "-o",
        "json",
    ]);
    stats.assert_code(1);
    let stats = stats.json();
    for ns in [&w.prod, &w.dev] {
        let row = stats["statistics"]["namespaces"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["namespace"] == ns.as_str())
            .unwrap_or_else(|| panic!("no row for {ns}: {stats}"));
        let count = |sev: &str| {
            stats["findings"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|f| f["namespace"] == ns.as_str() && f["severity"] == sev)
                .count()
        };
        assert_eq!(row["errors"], count("error"), "{row}");
        assert_eq!(row["warnings"], count("warning"), "{row}");
        assert_eq!(row["info"], count("info"), "{row}");
    }
    // -o html -A: the per-namespace table has both rows, as --statistics counts them.
    let html = winlint(&["audit", "-A", "--kubeconfig", kc, "-o", "html"]);
    html.assert_code(1);
    for ns in [&w.prod, &w.dev] {
        let row = stats["statistics"]["namespaces"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["namespace"] == ns.as_str())
            .unwrap();
        let want = format!(
            "<tr><td>{ns}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>\
             <td class=\"num\">{}</td></tr>",
            row["errors"], row["warnings"], row["info"]
        );
        assert!(html.stdout.contains(&want), "{want} not in\n{html}");
    }
    // Without -n: the context's namespace (none set: default, where nothing runs).
    let none = winlint(&["audit", "--kubeconfig", kc]);
    none.assert_code(0);
    assert!(
        none.stdout.starts_with(
            "0 errors, 0 warnings, 0 info in 0 objects of 0 namespaces (0 pods in the cluster"
        ),
        "{none}"
    );
    // $KUBECONFIG may list several files, merged as kubectl merges them.
    let empty = c.dir.join(c.unique("kubeconfig-empty"));
    std::fs::write(&empty, "apiVersion: v1\nkind: Config\npreferences: {}\n").unwrap();
    let list = format!("{}:{}", path(&empty), kc);
    let merged = Run::new(&["audit", "-n", &w.dev])
        .env("KUBECONFIG", &list)
        .run();
    assert_eq!(merged.stdout, dev.stdout, "{merged}");
    let merged = Run::new(&["audit", "-n", &w.dev, "--kubeconfig", &list])
        .env("KUBECONFIG", &list)
        .run();
    assert_eq!(merged.stdout, dev.stdout, "{merged}");
    // -n and -A exclude each other.
    winlint(&["audit", "-n", "x", "-A", "--kubeconfig", kc]).assert_code(2);
}

fn audit_reports_the_kinds_it_may_not_list() {
    let Some(c) = cluster() else { return };
    let _nodes = with_nodes(&c, tainted_ltsc2022(&c));
    let w = world(&c);
    // bob may read the facts, and list only Pods and Deployments in $PROD.
    let (user, token) = SPARE_USERS[1];
    let facts = c.unique("audit-facts");
    c.apply(&json!({"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
         "metadata": {"name": facts},
         "rules": [{"apiGroups": [""], "resources": ["nodes", "namespaces"], "verbs": ["list"]},
                   {"apiGroups": ["node.k8s.io"], "resources": ["runtimeclasses"],
                    "verbs": ["list"]}]},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
         "metadata": {"name": facts},
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                     "name": facts},
         "subjects": [{"kind": "User", "name": user}]},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
         "metadata": {"name": "audit-some", "namespace": w.prod},
         "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["list"]},
                   {"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["list"]}]},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
         "metadata": {"name": "audit-some", "namespace": w.prod},
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                     "name": "audit-some"},
         "subjects": [{"kind": "User", "name": user}]}]}))
        .ok();
    let bob = c.kubeconfig_for("audit-bob", token);
    // RBAC takes effect asynchronously: wait until bob can list the facts.
    let t = Instant::now();
    while !c.kubectl_as(&bob, &["get", "nodes"], None).success {
        assert!(t.elapsed().as_secs() < 60, "bob never got his rights");
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    // The kinds bob may not list are errors of the report (exit 2), not silently left out;
    // without the ReplicaSets and Jobs their Pods are reported as themselves.
    let out = winlint(&["audit", "-n", &w.prod, "--kubeconfig", path(&bob)]);
    out.assert_code(2);
    // Nor may bob look for winlint's webhook: the workloads are judged as written, and said so.
    assert_eq!(
        out.stderr,
        "winlint: judging workloads as written: not allowed to list \
         mutatingwebhookconfigurations, so whether winlint's mutating webhook is registered is \
         unknown (--assume-webhook judges them by their pods)\n"
    );
    golden(
        "testdata/audit/prod-forbidden.txt",
        &normal(&c, &out.stdout, &names(w)),
    );
    let json = winlint(&[
        "audit",
        "-n",
        &w.prod,
        "--kubeconfig",
        path(&bob),
        "-o",
        "json",
    ]);
    json.assert_code(2);
    let errors = json.json()["errors"].as_array().unwrap().len();
    assert_eq!(errors, 6, "{json}");

    // No right to the facts: one line, exit 2, nothing on stdout.
    let out = winlint(&[
        "audit",
        "-n",
        &w.prod,
        "--kubeconfig",
        path(&c.nobody_kubeconfig),
    ]);
    out.assert_code(2);
    assert_eq!(out.stdout, "");
    assert_eq!(
        out.stderr,
        "winlint: listing nodes: forbidden: nodes is forbidden: User \"nobody\" cannot list \
         resource \"nodes\" in API group \"\" at the cluster scope (the cluster's facts need \
         list on nodes, namespaces and runtimeclasses.node.k8s.io)\n"
    );
    let out = winlint(&[
        "--cluster",
        "--kubeconfig",
        path(&c.nobody_kubeconfig),
        "testdata/audit/deploy.yaml",
    ]);
    out.assert_code(2);
    assert_eq!(out.stdout, "");
    assert!(
        out.stderr
            .starts_with("winlint: listing nodes: forbidden: ")
            && out.stderr.lines().count() == 1,
        "{out}"
    );

    // Credentials the server refuses.
    let out = winlint(&[
        "audit",
        "-A",
        "--kubeconfig",
        path(&c.kubeconfig_for("audit-bad-token", "not-a-token")),
    ]);
    out.assert_code(2);
    assert_eq!(
        out.stderr,
        "winlint: listing nodes: unauthorized: Unauthorized (the credentials were refused: \
         check the kubeconfig user or the ServiceAccount token)\n"
    );
}

/// The errors that need no API server: no kubeconfig, an unknown context, nothing listening.
fn cluster_configuration_errors_are_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let one_line = |out: &Out, start: &str| {
        out.assert_code(2);
        assert_eq!(out.stdout, "", "{out}");
        assert!(
            out.stderr.starts_with(start) && out.stderr.lines().count() == 1,
            "{out}"
        );
    };
    // No kubeconfig anywhere and not in a pod.
    for args in [
        &["audit", "-A"][..],
        &["--cluster", "testdata/audit/deploy.yaml"],
    ] {
        let out = Run::new(args)
            .env_remove("KUBECONFIG")
            .env_remove("KUBERNETES_SERVICE_HOST")
            .env("HOME", home.to_str().unwrap())
            .run();
        one_line(
            &out,
            "winlint: loading the cluster configuration: no usable kubeconfig (",
        );
        assert!(out.stderr.contains("and not in a pod ("), "{out}");
        assert!(out.stderr.contains("pass --kubeconfig PATH"), "{out}");
    }
    // A --kubeconfig that does not exist, also through $KUBECONFIG.
    let missing = dir.path().join("missing.yaml");
    let out = winlint(&["audit", "-A", "--kubeconfig", path(&missing)]);
    one_line(
        &out,
        "winlint: loading the cluster configuration: failed to read kubeconfig from ",
    );
    assert!(out.stderr.contains(path(&missing)), "{out}");
    let out = Run::new(&["audit", "-A"])
        .env("KUBECONFIG", path(&missing))
        .run();
    one_line(&out, "winlint: loading the cluster configuration: ");
    // A server where nothing listens, and a context the kubeconfig does not have.
    let tls = winlint::manifests::generate_tls(&["127.0.0.1".into()], 1).unwrap();
    let dead = k8s_support::free_port();
    let kc = dir.path().join("kubeconfig");
    std::fs::write(
        &kc,
        kubeconfig(&format!("https://127.0.0.1:{dead}"), &tls.ca_pem),
    )
    .unwrap();
    let out = winlint(&["audit", "-A", "--kubeconfig", path(&kc)]);
    one_line(&out, "winlint: listing nodes: API server unreachable: ");
    let out = winlint(&[
        "--cluster",
        "--kubeconfig",
        path(&kc),
        "testdata/audit/deploy.yaml",
    ]);
    one_line(&out, "winlint: listing nodes: API server unreachable: ");
    let out = winlint(&[
        "audit",
        "-A",
        "--kubeconfig",
        path(&kc),
        "--context",
        "nope",
    ]);
    one_line(&out, "winlint: loading the cluster configuration: ");
    assert!(out.stderr.contains("nope"), "{out}");
    // An empty $KUBECONFIG is none (kubectl's reading), and never the linter's problem.
    let out = Run::new(&["testdata/audit/dev.yaml"])
        .env("KUBECONFIG", "")
        .run();
    // Linted offline: WIN007 on the assumed taint, a warning.
    out.assert_code(0);
    assert!(out.stdout.contains("warning WIN007"), "{out}");
    assert_eq!(out.stderr, "", "{out}");
    // --context without --cluster is a usage error, not silently ignored.
    let out = winlint(&["--context", "x", "testdata/audit/deploy.yaml"]);
    one_line(&out, "winlint: --context names the cluster of --cluster");
}

fn kubeconfig(server: &str, ca_pem: &str) -> String {
    use base64::Engine as _;
    let ca = base64::engine::general_purpose::STANDARD.encode(ca_pem);
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: {server}\n    \
         certificate-authority-data: {ca}\nusers:\n- name: u\n  user:\n    token: t\n\
         contexts:\n- name: here\n  context:\n    cluster: c\n    user: u\n\
         current-context: here\n"
    )
}

/// The summary line of a text report (its last line).
fn summary_line(out: &Out) -> &str {
    out.stdout.lines().last().unwrap_or("")
}

fn rules(out: &Out) -> Vec<String> {
    let mut v: Vec<String> = out.json()["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            format!(
                "{} {}",
                f["rule"].as_str().unwrap(),
                f["severity"].as_str().unwrap()
            )
        })
        .collect();
    v.sort();
    v
}

fn cluster_facts_decide_what_the_file_is_judged_against() {
    let Some(c) = cluster() else { return };
    let t0 = Instant::now();
    let w = world(&c);
    let kc = path(&c.kubeconfig);
    let file = "testdata/audit/deploy.yaml";
    // Offline: the default target (1.34, ltsc2022 nodes tainted os=windows:NoSchedule, a taint
    // assumed, so WIN007 is a warning).
    let offline = winlint(&[file, "-o", "json"]);
    assert_eq!(
        rules(&offline),
        ["WIN007 warning", "WIN403 info"],
        "{offline}"
    );

    // The cluster's Windows nodes are not tainted: no WIN007.
    let lock = with_nodes(
        &c,
        vec![
            Node::windows(&c.unique("w22"), "10.0.20348"),
            Node::linux(&c.unique("lin")),
        ],
    );
    let out = winlint(&["--cluster", "--kubeconfig", kc, file]);
    out.assert_code(0);
    assert_eq!(
        normal(&c, &out.stdout, &names(w)),
        "testdata/audit/deploy.yaml:30:11: Deployment/shop: info WIN403 env-name-invalid: container \"shop\" env \
         var name \"ConnectionStrings:Default\" is accepted by Kubernetes 1.32 (relaxed env var \
         validation) but rejected by API servers before 1.32 (1.30-1.31 without the \
         RelaxedEnvironmentVariableValidation gate); rename it to \"ConnectionStrings__Default\" \
         (.NET configuration reads `__` as `:`)\n\n\
         0 errors, 0 warnings, 1 info in 1 file (1 object, 1 pod template checked); target from \
         the cluster (context envtest at $SERVER): Kubernetes 1.32, 1 Windows node (ltsc2022), \
         no Windows taint\n"
    );
    // The context flag names the kubeconfig's context.
    let out = winlint(&[
        "--cluster",
        "--kubeconfig",
        kc,
        "--context",
        "envtest",
        file,
    ]);
    out.assert_code(0);
    // A flag pins a fact: the cluster's version no longer counts (the env name is an error
    // before 1.32) and the summary says which facts are configured.
    let out = winlint(&[
        "--cluster",
        "--kubeconfig",
        kc,
        "--kubernetes-version",
        "1.30",
        file,
    ]);
    out.assert_code(1);
    assert!(
        out.stdout.contains("error WIN403 env-name-invalid"),
        "{out}"
    );
    assert!(
        summary_line(&out)
            .ends_with("Kubernetes 1.30 (configured), 1 Windows node (ltsc2022), no Windows taint"),
        "{out}"
    );
    let cfg = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(
        cfg.path(),
        "target:\n  windowsTaints: [os=windows:NoSchedule]\n  windowsBuilds: [ltsc2019]\n",
    )
    .unwrap();
    let out = winlint(&[
        "--cluster",
        "--kubeconfig",
        kc,
        "--config",
        path(cfg.path()),
        file,
    ]);
    assert!(
        summary_line(&out).ends_with(
            "Kubernetes 1.32, 1 Windows node (ltsc2022), Windows builds ltsc2019 (configured), \
             Windows taint os=windows:NoSchedule (configured)"
        ),
        "{out}"
    );
    drop(lock);

    // GKE's taint, read from the cluster: WIN007 names it, and its fix tolerates it.
    let _lock = with_nodes(
        &c,
        vec![
            Node::windows(&c.unique("gke"), "10.0.20348")
                .taint("node.kubernetes.io/os=windows:NoSchedule"),
            Node::linux(&c.unique("lin")),
        ],
    );
    let out = winlint(&["--cluster", "--kubeconfig", kc, file, "-o", "json"]);
    out.assert_code(1);
    let report = out.json();
    let win007 = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == "WIN007")
        .unwrap_or_else(|| panic!("{out}"));
    assert!(
        win007["message"].as_str().unwrap().contains(
            "are tainted node.kubernetes.io/os=windows:NoSchedule but the pod does not tolerate it"
        ),
        "{win007}"
    );
    assert_eq!(
        win007["fix"]["patch"][0]["value"],
        json!([{"key": "node.kubernetes.io/os", "operator": "Equal", "value": "windows",
            "effect": "NoSchedule"}])
    );
    assert_eq!(report["summary"]["cluster"]["context"], "envtest");
    assert_eq!(report["summary"]["cluster"]["server"], c.url.as_str());

    // The namespace's labels come from the cluster too: a HostProcess pod in $PROD (Pod
    // Security baseline) is WIN207 with --cluster only.
    let hostprocess = format!(
        "apiVersion: v1\nkind: Pod\nmetadata: {{name: hp, namespace: {}}}\nspec:\n  \
         nodeSelector: {{kubernetes.io/os: windows}}\n  hostNetwork: true\n  tolerations: \
         [{{operator: Exists}}]\n  securityContext:\n    windowsOptions: {{hostProcess: true, \
         runAsUserName: 'NT AUTHORITY\\SYSTEM'}}\n  containers:\n  - name: a\n    image: \
         mcr.microsoft.com/oss/kubernetes/windows-host-process-containers-base-image:v1.0.0\n",
        w.prod
    );
    let run = |args: &[&str]| {
        let out = Run::new(args)
            .env_remove("KUBECONFIG")
            .stdin(hostprocess.clone())
            .run();
        out.assert_clean_exit();
        out
    };
    assert!(!rules(&run(&["-", "-o", "json"])).contains(&"WIN207 warning".to_string()));
    assert!(
        rules(&run(&["--cluster", "--kubeconfig", kc, "-", "-o", "json"]))
            .contains(&"WIN207 warning".to_string())
    );
    eprintln!("test took {:.2?}", t0.elapsed());
}

/// With the node-aware rules, WIN007 asks whether some Windows node the pod
/// can select tolerates it: a pool without the taint, selected by the pod, is enough.
fn an_untainted_pool_the_pod_selects_needs_no_toleration() {
    let Some(c) = cluster() else { return };
    let _lock = with_nodes(
        &c,
        vec![
            Node::windows(&c.unique("tainted"), "10.0.20348").taint("os=windows:NoSchedule"),
            Node::windows(&c.unique("open"), "10.0.20348").label("pool", "open"),
            Node::linux(&c.unique("lin")),
        ],
    );
    let pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  nodeSelector: \
               {kubernetes.io/os: windows, pool: open}\n  containers:\n  - name: a\n    image: \
               mcr.microsoft.com/windows/nanoserver:ltsc2022\n";
    let out = Run::new(&[
        "--cluster",
        "--kubeconfig",
        path(&c.kubeconfig),
        "-",
        "-o",
        "json",
    ])
    .env_remove("KUBECONFIG")
    .stdin(pod)
    .run();
    assert!(
        !rules(&out).iter().any(|r| r.starts_with("WIN007")),
        "{out}"
    );
}

/// Measurement, not an assertion on speed: `winlint audit -A` on a cluster holding 10 000 pods'
/// worth of workloads (1 000 Deployments, each with a ReplicaSet and 10 Pods, 50 DaemonSets,
/// 500 standalone Pods), all created as API objects: the binary's wall time and peak RSS, and
/// how the time splits between reading the facts, listing and linting (the library's calls,
/// timed in this process).
///
/// `KUBEBUILDER_ASSETS=$PWD/target/k8s-assets cargo test --release --test k8s_audit --
///  --ignored --nocapture audit_scale`
fn audit_scale_measurement() {
    use futures::StreamExt;
    use kube::api::{Api, DynamicObject, PostParams};
    use kube::discovery::ApiResource;

    let Some(c) = cluster() else { return };
    let _nodes = with_nodes(&c, tainted_ltsc2022(&c));
    let deployments: usize = env_or("SCALE_DEPLOYMENTS", 1000);
    let pods_per: usize = env_or("SCALE_PODS_PER", 10);
    let standalone: usize = env_or("SCALE_STANDALONE", 500);
    let daemonsets: usize = env_or("SCALE_DAEMONSETS", 50);
    let namespaces = 20;
    let rt = k8s_support::runtime();
    let client = k8s_support::client(&rt, &c.kubeconfig);
    let prefix = c.unique("scale");
    let nss: Vec<String> = (0..namespaces)
        .map(|i| format!("{prefix}-{i:02}"))
        .collect();
    for ns in &nss {
        c.create_namespace(ns, &[]);
    }
    let spec = json!({"nodeSelector": {"kubernetes.io/os": "windows"},
        "tolerations": [{"key": "os", "operator": "Equal", "value": "windows", "effect": "NoSchedule"}],
        "containers": [{"name": "web", "image": "mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2022",
            "env": [{"name": "ASPNETCORE_URLS", "value": "http://+:80"}],
            "resources": {"requests": {"cpu": "100m", "memory": "256Mi"}},
            "ports": [{"containerPort": 80}]}]});
    let t = Instant::now();
    let create = |ar: ApiResource, ns: String, obj: Value| {
        let client = client.clone();
        async move {
            let api: Api<DynamicObject> = Api::namespaced_with(client, &ns, &ar);
            let o: DynamicObject = serde_json::from_value(obj).unwrap();
            api.create(&PostParams::default(), &o)
                .await
                .map(|o| o.metadata.uid.unwrap())
                .unwrap_or_else(|e| panic!("create: {e}"))
        }
    };
    let deploy_ar = ApiResource::erase::<k8s_openapi::api::apps::v1::Deployment>(&());
    let rs_ar = ApiResource::erase::<k8s_openapi::api::apps::v1::ReplicaSet>(&());
    let pod_ar = ApiResource::erase::<k8s_openapi::api::core::v1::Pod>(&());
    let ds_ar = ApiResource::erase::<k8s_openapi::api::apps::v1::DaemonSet>(&());
    let owner = |kind: &str, api: &str, name: &str, uid: &str| json!([{"apiVersion": api, "kind": kind, "name": name, "uid": uid, "controller": true}]);
    rt.block_on(async {
        futures::stream::iter(0..deployments)
            .map(|i| {
                let ns = nss[i % namespaces].clone();
                let (deploy_ar, rs_ar, pod_ar) = (deploy_ar.clone(), rs_ar.clone(), pod_ar.clone());
                let spec = spec.clone();
                let create = &create;
                let owner = &owner;
                async move {
                    let name = format!("app-{i:04}");
                    let labels = json!({"app": name});
                    let template = json!({"metadata": {"labels": labels}, "spec": spec});
                    let d = create(deploy_ar, ns.clone(), json!({"apiVersion": "apps/v1", "kind": "Deployment",
                        "metadata": {"name": name, "namespace": ns},
                        "spec": {"replicas": pods_per, "selector": {"matchLabels": labels}, "template": template}})).await;
                    let rs_name = format!("{name}-6b8f9d");
                    let rs = create(rs_ar, ns.clone(), json!({"apiVersion": "apps/v1", "kind": "ReplicaSet",
                        "metadata": {"name": rs_name, "namespace": ns,
                            "ownerReferences": owner("Deployment", "apps/v1", &name, &d)},
                        "spec": {"replicas": pods_per, "selector": {"matchLabels": labels}, "template": template}})).await;
                    futures::stream::iter(0..pods_per)
                        .for_each_concurrent(4, |p| {
                            let pod_ar = pod_ar.clone();
                            let (ns, rs_name, rs, labels, spec) = (ns.clone(), rs_name.clone(), rs.clone(), labels.clone(), spec.clone());
                            async move {
                                create(pod_ar, ns.clone(), json!({"apiVersion": "v1", "kind": "Pod",
                                    "metadata": {"name": format!("{rs_name}-{p:02}"), "namespace": ns, "labels": labels,
                                        "ownerReferences": owner("ReplicaSet", "apps/v1", &rs_name, &rs)},
                                    "spec": spec})).await;
                            }
                        })
                        .await;
                }
            })
            .buffer_unordered(8)
            .for_each(|()| async {})
            .await;
        futures::stream::iter(0..daemonsets)
            .map(|i| {
                let ns = nss[i % namespaces].clone();
                let template = json!({"metadata": {"labels": {"ds": format!("ds-{i}")}}, "spec": spec});
                create(ds_ar.clone(), ns.clone(), json!({"apiVersion": "apps/v1", "kind": "DaemonSet",
                    "metadata": {"name": format!("ds-{i:03}"), "namespace": ns},
                    "spec": {"selector": {"matchLabels": {"ds": format!("ds-{i}")}}, "template": template}}))
            })
            .buffer_unordered(8)
            .for_each(|_| async {})
            .await;
        futures::stream::iter(0..standalone)
            .map(|i| {
                let ns = nss[i % namespaces].clone();
                create(pod_ar.clone(), ns.clone(), json!({"apiVersion": "v1", "kind": "Pod",
                    "metadata": {"name": format!("standalone-{i:04}"), "namespace": ns},
                    "spec": spec}))
            })
            .buffer_unordered(8)
            .for_each(|_| async {})
            .await;
    });
    let pods = deployments * pods_per + standalone;
    eprintln!(
        "created {deployments} Deployments + ReplicaSets, {pods} Pods ({standalone} standalone), \
         {daemonsets} DaemonSets in {namespaces} namespaces in {:.1?}",
        t.elapsed()
    );

    // The binary, as a user runs it: wall time and peak RSS (GNU time).
    let kc = path(&c.kubeconfig);
    for round in 0..3 {
        let out = std::process::Command::new("/usr/bin/time")
            .args(["-f", "%e s wall, %M KiB max RSS"])
            .arg(cli_support::bin())
            .args(["audit", "-A", "--kubeconfig", kc, "-o", "json"])
            .env_remove("KUBECONFIG")
            .output()
            .expect("/usr/bin/time runs winlint");
        let stderr = String::from_utf8_lossy(&out.stderr);
        let report: Value = serde_json::from_slice(&out.stdout).unwrap();
        eprintln!(
            "round {round}: winlint audit -A: {} (exit {:?}; {} objects, {} pods in the cluster, {} findings)",
            stderr.trim(),
            out.status.code(),
            report["summary"]["objects"],
            report["summary"]["cluster_pods"],
            report["findings"].as_array().unwrap().len()
        );
    }

    // The split, with the library's calls in this process.
    rt.block_on(async {
        let t = Instant::now();
        let facts = winlint::cluster::read_once(&client, winlint::cluster::PAGE_SIZE)
            .await
            .unwrap();
        let read = t.elapsed();
        let t = Instant::now();
        let inv = winlint::cluster::list_workloads(
            &client,
            &winlint::cluster::Scope::AllNamespaces,
            winlint::cluster::PAGE_SIZE,
        )
        .await
        .unwrap();
        let list = t.elapsed();
        let cfg = winlint::cluster::effective::apply(&winlint::config::Config::default(), &facts);
        let cx = winlint::cluster::effective::context(&facts);
        let t = Instant::now();
        let mut findings = 0;
        for o in &inv.objects {
            findings +=
                winlint::engine::lint_object(&o.object, &cfg, &cx, winlint::model::Operation::Lint)
                    .findings
                    .len();
        }
        let lint = t.elapsed();
        eprintln!(
            "split: facts {read:.2?}, listing {list:.2?} ({} top objects), linting {lint:.2?} \
             ({findings} findings)",
            inv.objects.len()
        );
    });
}

/// Issue 20 §1: `winlint audit` and the webhook give the same verdict for the same Deployment
/// (an OS selector, no toleration of the Windows nodes' taint), with and without winlint's
/// mutating webhook registered in the cluster. Without it the pods would stay Pending: both
/// say WIN007 (the webhook's `/validate`, configured with `webhook.mutate: false`, denies).
/// With it the pods get the toleration at creation: audit finds the configuration and judges
/// the Deployment by its pods, and both find no error.
fn audit_and_the_webhook_agree_with_and_without_the_mutating_webhook() {
    let Some(c) = cluster() else { return };
    // The webhook configuration is cluster-wide and changes every audit's verdict: it exists
    // only while this test holds the node lock that every audit test holds.
    let _nodes = with_nodes(&c, tainted_ltsc2022(&c));
    let ns = c.unique("verdict");
    c.create_namespace(&ns, &[]);
    let deployment = json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "iis", "namespace": ns},
        "spec": {"selector": {"matchLabels": {"app": "iis"}},
            "template": {"metadata": {"labels": {"app": "iis"}},
                "spec": {"nodeSelector": {"kubernetes.io/os": "windows"},
                    "containers": [{"name": "iis", "image":
                        "mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2022"}]}}}});
    c.create(&deployment).ok();
    let kc = path(&c.kubeconfig);

    // The webhook's verdict, under the cluster's facts as audit reads them.
    let rt = k8s_support::runtime();
    let client = k8s_support::client(&rt, &c.kubeconfig);
    let facts = rt
        .block_on(winlint::cluster::read_once(
            &client,
            winlint::cluster::PAGE_SIZE,
        ))
        .unwrap();
    let webhook_errors = |mutate: bool| -> Vec<String> {
        let mut cfg =
            winlint::cluster::effective::apply(&winlint::config::Config::default(), &facts);
        cfg.policy.pod_mutation = mutate;
        let cx = std::sync::Arc::new(winlint::cluster::effective::context(&facts));
        let webhook = winlint::admission::Webhook::with_context(cfg, cx);
        let body = json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "request": {"uid": "u", "operation": "CREATE", "namespace": ns,
                "kind": {"group": "apps", "version": "v1", "kind": "Deployment"},
                "resource": {"group": "apps", "version": "v1", "resource": "deployments"},
                "object": deployment}});
        let out = webhook
            .review(
                &serde_json::to_vec(&body).unwrap(),
                winlint::admission::Endpoint::Validate,
            )
            .unwrap();
        let answer: Value = serde_json::from_slice(&out.body).unwrap();
        let mut ids: Vec<String> = answer["response"]["status"]["message"]
            .as_str()
            .unwrap_or("")
            .lines()
            .filter_map(|l| l.strip_prefix("- "))
            .map(|l| l[..6].to_string())
            .collect();
        ids.sort();
        assert_eq!(answer["response"]["allowed"], ids.is_empty(), "{answer}");
        ids
    };
    // `winlint --cluster` on the Deployment's manifest judges it as audit does.
    let dir = tempfile::tempdir().unwrap();
    let manifest = dir.path().join("iis.yaml");
    std::fs::write(&manifest, serde_json::to_string(&deployment).unwrap()).unwrap();
    let errors_of = |args: &[&str]| -> (Vec<String>, String) {
        let out = Run::new(args).env_remove("KUBECONFIG").run();
        out.assert_clean_exit();
        let mut ids: Vec<String> = out.json()["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["severity"] == "error")
            .map(|f| f["rule"].as_str().unwrap().to_string())
            .collect();
        ids.sort();
        (ids, out.stderr.clone())
    };
    let lint_errors = || {
        errors_of(&[
            "--cluster",
            "--kubeconfig",
            kc,
            "-o",
            "json",
            path(&manifest),
        ])
    };
    let audit_errors = || errors_of(&["audit", "-n", &ns, "--kubeconfig", kc, "-o", "json"]);

    let (without, stderr) = audit_errors();
    assert_eq!(without, ["WIN007"], "{stderr}");
    assert_eq!(webhook_errors(false), without);
    assert_eq!(stderr, "");
    assert_eq!(lint_errors(), (without.clone(), String::new()));

    // winlint's webhook configuration, as `winlint manifests` and the chart name its webhook,
    // with their namespaceSelector (not kube-system, not namespaces labelled
    // winlint.io/ignore=true). Its URL answers nothing and it fails open: no test creates a Pod
    // while it exists.
    let configuration = c.unique("winlint");
    c.create(&json!({"apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "MutatingWebhookConfiguration", "metadata": {"name": configuration},
        "webhooks": [{"name": winlint::cluster::webhooks::MUTATING_WEBHOOK,
            "clientConfig": {"url": "https://127.0.0.1:9/mutate"},
            "rules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"],
                "resources": ["pods"]}],
            "namespaceSelector": winlint::manifests::namespace_selector("winlint"),
            "failurePolicy": "Ignore", "sideEffects": "None",
            "admissionReviewVersions": ["v1"]}]}))
        .ok();
    let (with, stderr) = audit_errors();
    let (lint_with, lint_stderr) = lint_errors();
    // A namespace the webhook skips gets no mutation: its workloads are judged as written.
    c.kubectl(&["label", "namespace", &ns, "winlint.io/ignore=true"], None)
        .ok();
    let (skipped, skipped_stderr) = audit_errors();
    c.delete("mutatingwebhookconfiguration", None, &configuration)
        .ok();
    c.kubectl(&["label", "namespace", &ns, "winlint.io/ignore-"], None)
        .ok();
    assert_eq!(skipped, without, "{skipped_stderr}");
    assert_eq!(lint_with, with, "{lint_stderr}");
    assert!(
        lint_stderr.contains("judging workloads by the pods they create"),
        "{lint_stderr}"
    );
    assert_eq!(with, Vec::<String>::new(), "{stderr}");
    assert_eq!(webhook_errors(true), with);
    assert!(
        stderr.contains(&format!(
            "judging workloads by the pods they create: winlint's mutating webhook is registered (MutatingWebhookConfiguration {configuration})"
        )),
        "{stderr}"
    );

    // --assume-webhook judges by the pods without looking.
    let out = Run::new(&[
        "audit",
        "-n",
        &ns,
        "--kubeconfig",
        kc,
        "-o",
        "json",
        "--assume-webhook",
    ])
    .env_remove("KUBECONFIG")
    .run();
    assert!(
        !out.json()["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["severity"] == "error"),
        "{out}"
    );
}

/// `winlint audit -A --registry` with a cold and a warm `--registry-cache` (issue 18): SCALE_PODS
/// Windows Pods (default 1 000) naming SCALE_TAGS tags (default 10, each its own single
/// manifest of a 10.0.20348 build: all run on the ltsc2022 node, so no WIN502) of a local
/// `docker-registry`, against this API server. Not a pass/fail test: run it
/// and read the numbers.
///
/// `KUBEBUILDER_ASSETS=… cargo test --release --test k8s_audit -- --ignored --nocapture
///  audit_registry_cache`
fn audit_registry_cache_measurement() {
    use registry_support::{Layout, Plat, Registry};
    let Some(c) = cluster() else { return };
    if registry_support::tools().is_none() {
        return;
    }
    let _nodes = with_nodes(&c, tainted_ltsc2022(&c));
    let tags: usize = env_or("SCALE_TAGS", 10);
    let pods: usize = env_or("SCALE_PODS", 1000);
    let reg = Registry::start(None);
    let mut layout = Layout::new();
    let versions: Vec<String> = (0..tags)
        .map(|t| format!("10.0.20348.{}", 2000 + t))
        .collect();
    for (t, v) in versions.iter().enumerate() {
        let m = layout.manifest(&Plat {
            os: "windows",
            arch: "amd64",
            version: Some(v),
        });
        layout.tag(&m, &format!("v{t}"));
    }
    for t in 0..tags {
        reg.push(layout.dir.path(), &format!("v{t}"), "team/app", false);
    }
    let ns = c.unique("regscale");
    c.create_namespace(&ns, &[]);
    let t = Instant::now();
    let objects: Vec<Value> = (0..pods)
        .map(|i| {
            json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": format!("p-{i:05}"), "namespace": ns},
            "spec": {"nodeSelector": {"kubernetes.io/os": "windows"},
                "tolerations": [{"key": "os", "operator": "Equal", "value": "windows",
                    "effect": "NoSchedule"}],
                "containers": [{"name": "app",
                    "image": format!("{}/team/app:v{}", reg.host, i % tags)}]}})
        })
        .collect();
    for chunk in objects.chunks(250) {
        c.create(&json!({"apiVersion": "v1", "kind": "List", "items": chunk}))
            .ok();
    }
    eprintln!(
        "{pods} Pods over {tags} tags created in {:.1?}",
        t.elapsed()
    );
    let cache = tempfile::tempdir().unwrap();
    let no_docker_config = tempfile::tempdir().unwrap();
    let kc = path(&c.kubeconfig);
    let cache_arg = path(cache.path()).to_string();
    for (label, registry) in [
        ("offline (no --registry)", false),
        ("--registry, cold cache", true),
        ("--registry, warm cache", true),
        ("--registry, warm cache", true),
    ] {
        let mut cmd = std::process::Command::new("/usr/bin/time");
        cmd.args(["-f", "%e s wall, %M KiB max RSS"])
            .arg(cli_support::bin())
            .args(["audit", "-A", "--kubeconfig", kc, "-o", "json"])
            .env_remove("KUBECONFIG")
            .env("DOCKER_CONFIG", no_docker_config.path());
        if registry {
            cmd.args(["--registry", "--registry-cache", &cache_arg]);
        }
        let out = cmd.output().expect("/usr/bin/time runs winlint");
        let stderr = String::from_utf8_lossy(&out.stderr);
        let report: Value = serde_json::from_slice(&out.stdout).unwrap();
        let findings = report["findings"].as_array().unwrap();
        let registry_findings = findings
            .iter()
            .filter(|f| {
                f["message"]
                    .as_str()
                    .is_some_and(|m| m.contains("registry:"))
            })
            .count();
        let mut by_rule = std::collections::BTreeMap::<String, usize>::new();
        for f in findings {
            *by_rule.entry(f["rule"].to_string()).or_default() += 1;
        }
        eprintln!("  {by_rule:?}");
        eprintln!(
            "winlint audit -A {label}: {} (exit {:?}; {} pods, {} findings, {registry_findings} from registry facts)",
            stderr.lines().last().unwrap_or_default(),
            out.status.code(),
            report["summary"]["cluster_pods"],
            report["findings"].as_array().unwrap().len(),
        );
    }
}

/// Issue 29 item 5: `kubectl debug node/<windows node> --image=busybox` (kubectl's own pod:
/// `spec.nodeName`, every taint tolerated) on a cluster whose nodes carry the labels the kubelet
/// sets. With live facts the webhook denies it naming the node's OS and build (WIN011), and the
/// Linux-node counterpart with a Windows image too (WIN001); the same pod created while no
/// webhook is registered is an error of `winlint audit` and a `fail` of its PolicyReport.
fn kubectl_debug_node_binds_a_linux_image_to_a_windows_node() {
    let Some(c) = cluster() else { return };
    let win = c.unique("akswin");
    let lin = c.unique("aksnpl");
    let nodes = vec![Node::windows(&win, "10.0.20348"), Node::linux(&lin)];
    let builds = k8s_support::windows_builds(&nodes);
    let _nodes = with_nodes(&c, nodes);
    let ns = c.unique("debug");
    let debug = |node: &str, image: &str| {
        c.kubectl(
            &[
                "debug",
                &format!("node/{node}"),
                &format!("--image={image}"),
                "-n",
                &ns,
            ],
            None,
        )
    };
    let nano = "mcr.microsoft.com/powershell:lts-nanoserver-ltsc2022";
    {
        let wh = k8s_support::Webhook::watching(&c, None, None, &[]);
        k8s_support::wait_windows_nodes(&wh, &builds);
        wh.namespace(&ns, &[]);
        let denied = debug(&win, "busybox").err();
        for part in [
            "denied the request",
            "WIN011",
            &format!("pod bound to Windows node {win} (Windows Server 2022 (10.0.20348)"),
            "busybox is a Linux-only image",
        ] {
            assert!(denied.stderr.contains(part), "{part}: {denied:#?}");
        }
        let denied = debug(&lin, nano).err();
        for part in [
            "WIN001",
            &format!("names its node, {lin}, which is not Windows (Linux"),
        ] {
            assert!(denied.stderr.contains(part), "{part}: {denied:#?}");
        }
        let pods = c
            .kubectl(&["get", "pods", "-n", &ns, "-o", "name"], None)
            .ok();
        assert_eq!(pods.stdout, "", "nothing was created");
    } // The webhook and its registration gone: kubectl's pod is created as it would be.
    let created = debug(&win, "busybox").ok();
    assert!(
        created.stdout.contains(&format!("on node {win}")),
        "{created:#?}"
    );
    let kc = path(&c.kubeconfig);
    let out = winlint(&["audit", "-n", &ns, "--kubeconfig", kc, "-o", "json"]);
    out.assert_code(1);
    let report = out.json();
    let errors: Vec<&Value> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["severity"] == "error")
        .collect();
    let win011 = errors
        .iter()
        .find(|f| f["rule"] == "WIN011")
        .unwrap_or_else(|| panic!("no WIN011 error: {report:#}"));
    let message = win011["message"].as_str().unwrap();
    assert!(
        message.contains(&format!(
            "Windows node {win} (Windows Server 2022 (10.0.20348)"
        )),
        "{message}"
    );
    assert!(
        win011["object"]
            .as_str()
            .unwrap()
            .contains("node-debugger-"),
        "{win011:#}"
    );
    // The PolicyReport counts the pod as a failure, not a pass.
    c.install_policy_report_crds();
    let applied = winlint(&[
        "audit",
        "-n",
        &ns,
        "--kubeconfig",
        kc,
        "--policy-report=apply",
    ]);
    applied.assert_code(1);
    let reports = c.managed_reports("policyreports.v1alpha2.wgpolicyk8s.io", Some(&ns));
    assert_eq!(reports.len(), 1, "{reports:#?}");
    let r = &reports[0];
    let of_win011: Vec<&Value> = r["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["rule"] == "WIN011")
        .collect();
    assert_eq!(of_win011.len(), 1, "{r:#}");
    assert_eq!(of_win011[0]["result"], "fail", "{r:#}");
    assert!(
        of_win011[0]["resources"][0]["name"]
            .as_str()
            .unwrap()
            .starts_with(&format!("node-debugger-{win}-")),
        "{r:#}"
    );
    assert!(r["summary"]["fail"].as_u64().unwrap() >= 1, "{r:#}");
    assert_eq!(r["summary"]["pass"].as_u64().unwrap_or(0), 0, "{r:#}");
}

/// The tests (libtest-mimic: a test that lacks an outside tool is reported ignored, with how
/// to get it; tests/skip_support).
fn main() {
    use k8s_support::skip_support::{run, test};
    run(vec![
        test(
            "audit_reports_each_workload_once_under_its_top_owner",
            audit_reports_each_workload_once_under_its_top_owner,
        ),
        test("audit_one_namespace_or_all", audit_one_namespace_or_all),
        test(
            "audit_reports_the_kinds_it_may_not_list",
            audit_reports_the_kinds_it_may_not_list,
        ),
        test(
            "cluster_configuration_errors_are_one_line",
            cluster_configuration_errors_are_one_line,
        ),
        test(
            "cluster_facts_decide_what_the_file_is_judged_against",
            cluster_facts_decide_what_the_file_is_judged_against,
        ),
        test(
            "an_untainted_pool_the_pod_selects_needs_no_toleration",
            an_untainted_pool_the_pod_selects_needs_no_toleration,
        ),
        // Run with --ignored: measurement: creates 10 000 Pods' worth of workloads.
        test("audit_scale_measurement", audit_scale_measurement).with_ignored_flag(true),
        test(
            "kubectl_debug_node_binds_a_linux_image_to_a_windows_node",
            kubectl_debug_node_binds_a_linux_image_to_a_windows_node,
        ),
        test(
            "audit_and_the_webhook_agree_with_and_without_the_mutating_webhook",
            audit_and_the_webhook_agree_with_and_without_the_mutating_webhook,
        ),
        // Run with --ignored: measurement: a registry and 1 000 Pods.
        test(
            "audit_registry_cache_measurement",
            audit_registry_cache_measurement,
        )
        .with_ignored_flag(true),
    ]);
}
