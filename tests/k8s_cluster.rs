//! The cluster-facts module (src/cluster) against a real kube-apiserver 1.32 (tests/k8s_support):
//! Nodes, RuntimeClasses and Namespaces created as API objects, the live snapshot converging and
//! following changes, RBAC refusals, an unreachable and a dropped API server, the one-shot read
//! and the audit lister. Skips (and says why) without `KUBEBUILDER_ASSETS`, except under
//! `CI=true`.
//!
//! Every test labels its Nodes with its own `envtest.winlint.io/test` value, so the groups of
//! tests running side by side on the shared API server never mix.

mod k8s_support;

use std::collections::BTreeMap;
use std::io::Write;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use k8s_support::{CONVERGE, Node, Proxy, SPARE_USERS, client, cluster, eventually, runtime};
use serde_json::json;
use winlint::cluster::{
    ClientSource, ClusterFacts, ClusterWatch, ErrorKind, Fit, NodeGroup, Scope, WatchOptions,
    list_workloads, read_once,
};
use winlint::config::{KubeVersion, Taint};
use winlint::windows::{WS2019, WS2022};

const TEST_LABEL: &str = "envtest.winlint.io/test";

/// Everything the tests log, to check what an operator would read.
fn logs() -> Arc<Mutex<Vec<u8>>> {
    static LOGS: OnceLock<Arc<Mutex<Vec<u8>>>> = OnceLock::new();
    LOGS.get_or_init(|| {
        let buf = Arc::new(Mutex::new(Vec::new()));
        let b = Arc::clone(&buf);
        let _ = tracing_subscriber::fmt()
            .with_env_filter("winlint=debug,kube=warn")
            .with_ansi(false)
            .with_writer(move || Capture(Arc::clone(&b)))
            .try_init();
        buf
    })
    .clone()
}

struct Capture(Arc<Mutex<Vec<u8>>>);

impl Write for Capture {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn log_text() -> String {
    String::from_utf8_lossy(&logs().lock().unwrap()).into_owned()
}

fn start_watch(rt: &tokio::runtime::Runtime, c: kube::Client, opts: WatchOptions) -> ClusterWatch {
    let _g = rt.enter();
    ClusterWatch::start(c, opts)
}

/// The groups of one test (its label), `os build [taints]: count` sorted, for readable asserts.
fn groups_of(f: &ClusterFacts, test: &str) -> Vec<String> {
    let mut v: Vec<String> = f
        .groups
        .iter()
        .filter(|g| g.labels.get(TEST_LABEL).map(String::as_str) == Some(test))
        .map(describe)
        .collect();
    v.sort();
    v
}

fn describe(g: &NodeGroup) -> String {
    let taints: Vec<String> = g.taints.iter().map(Taint::to_string).collect();
    let build = g.build.map_or_else(|| "-".to_string(), |b| b.token());
    let variant = g.labels.get("variant").map_or("", String::as_str);
    format!(
        "{} {build} {variant} [{}]: {}",
        g.os,
        taints.join(","),
        g.count()
    )
}

fn test_nodes(c: &k8s_support::Guard, test: &str) -> Vec<Node> {
    let n = |name: &str| c.unique(&format!("{test}-{name}"));
    let t = |node: Node| node.label(TEST_LABEL, test);
    vec![
        t(Node::windows(&n("w19t-a"), "10.0.17763").taint("os=windows:NoSchedule")),
        t(Node::windows(&n("w19t-b"), "10.0.17763").taint("os=windows:NoSchedule")),
        t(Node::windows(&n("w19"), "10.0.17763")),
        t(Node::windows(&n("w22t"), "10.0.20348").taint("os=windows:NoSchedule")),
        t(Node::windows(&n("w22-a"), "10.0.20348")),
        t(Node::windows(&n("w22-b"), "10.0.20348")),
        // GKE's Windows taint is a scheduling fact
        t(
            Node::windows(&n("gke"), "10.0.20348")
                .taint("node.kubernetes.io/os=windows:NoSchedule"),
        )
        .label("variant", "gke"),
        t(Node::linux(&n("lin-a"))),
        t(Node::linux(&n("lin-b"))),
        // garbage build label and no nodeInfo at all
        t(Node::windows(&n("garbage"), "foo")).label("variant", "garbage"),
        Node {
            node_info: None,
            ..t(Node::windows(&n("noinfo"), "10.0.17763")).label("variant", "noinfo")
        },
    ]
}

fn expected_groups() -> Vec<String> {
    let mut v: Vec<String> = [
        "linux -  []: 2",
        // the garbage node: its label says foo, its kernelVersion "foo.2582": build unknown
        "windows - garbage []: 1",
        "windows ltsc2019  [os=windows:NoSchedule]: 2",
        "windows ltsc2019  []: 1",
        // no nodeInfo: the label still gives the build
        "windows ltsc2019 noinfo []: 1",
        "windows ltsc2022  [os=windows:NoSchedule]: 1",
        "windows ltsc2022  []: 2",
        "windows ltsc2022 gke [node.kubernetes.io/os=windows:NoSchedule]: 1",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    v.sort();
    v
}

fn live_snapshot_converges_and_follows_changes() {
    let Some(c) = cluster() else { return };
    let test_start = Instant::now();
    let _ = logs();
    let test = c.unique("live");
    let nodes = test_nodes(&c, &test);
    for n in &nodes {
        let stored = c.create_node(n);
        // The API server adds the condition taint to every new Node: it must not reach the facts.
        assert!(
            stored["spec"]["taints"]
                .to_string()
                .contains("node.kubernetes.io/not-ready"),
            "{stored:#}"
        );
    }
    let rc_hv = c.unique("hyperv");
    c.create_runtime_class(
        &rc_hv,
        "runhcs-wcow-hypervisor",
        &[("kubernetes.io/os", "windows")],
        json!([{"key": "os", "operator": "Equal", "value": "windows", "effect": "NoSchedule"}]),
    );
    let rc_proc = c.unique("process");
    c.create_runtime_class(&rc_proc, "runhcs-wcow-process", &[], json!([]));
    let ns = c.unique("apps");
    c.create_namespace(
        &ns,
        &[
            ("pod-security.kubernetes.io/enforce", "restricted"),
            ("winlint.io/default-os", "windows"),
        ],
    );

    let rt = runtime();
    let kc = client(&rt, &c.kubeconfig);
    let t = Instant::now();
    let w = start_watch(
        &rt,
        kc,
        WatchOptions {
            name: test.clone(),
            ..WatchOptions::default()
        },
    );
    assert!(
        rt.block_on(w.wait_synced(CONVERGE)),
        "no first sync: {:#?}",
        w.status()
    );
    eprintln!("first sync in {:.2?}", t.elapsed());
    let f = eventually("the test's node groups", || {
        let f = w.facts();
        let g = groups_of(&f, &test);
        if g == expected_groups() {
            Ok(f)
        } else {
            Err(format!("{g:#?}"))
        }
    });
    assert!(f.synced.all());
    assert_eq!(
        f.server_version.as_ref().unwrap().version,
        KubeVersion::new(1, 32)
    );
    assert!(
        f.windows_builds()
            .is_superset(&[WS2019, WS2022].into_iter().collect())
    );
    // The garbage node is listed with its reason; the one without nodeInfo has a build.
    let garbage = nodes[9].name.clone();
    let why = f.unknown_builds.get(&garbage).expect("garbage node listed");
    assert!(why.contains("\"foo\" is not a Windows build"), "{why}");
    assert!(!f.unknown_builds.contains_key(&nodes[10].name));
    // Hostnames are kept per group.
    let tainted19 = f
        .groups
        .iter()
        .find(|g| {
            g.labels.get(TEST_LABEL) == Some(&test)
                && g.build == Some(WS2019)
                && !g.taints.is_empty()
        })
        .unwrap();
    let mut hosts: Vec<&str> = tainted19.hostnames().collect();
    hosts.sort();
    assert_eq!(hosts, [nodes[0].name.as_str(), nodes[1].name.as_str()]);
    assert_eq!(tainted19.runtime.as_deref(), Some("containerd://1.7.20"));
    // RuntimeClasses and namespaces.
    let hv = &f.runtime_classes[&rc_hv];
    assert!(hv.is_hyperv());
    assert_eq!(hv.node_selector["kubernetes.io/os"], "windows");
    assert!(!f.runtime_classes[&rc_proc].is_hyperv());
    assert_eq!(
        f.namespace_labels(&ns).unwrap()["pod-security.kubernetes.io/enforce"],
        "restricted"
    );
    // The placement of a pod pinned to this test's nodes: only the untainted ltsc2019 node
    // (and the no-nodeInfo one) take an untolerating ltsc2019-pinned pod.
    let spec = json!({"nodeSelector": {TEST_LABEL: test,
        "node.kubernetes.io/windows-build": "10.0.17763"},
        "containers": [{"name": "a", "image": "mcr.microsoft.com/windows/nanoserver:ltsc2019"}]});
    let fits: usize = f
        .placements(&spec)
        .iter()
        .filter_map(|(_, fit)| match fit {
            Fit::Fits { nodes } => Some(*nodes),
            _ => None,
        })
        .sum();
    assert_eq!(fits, 2);
    // With the Hyper-V class the tolerations come from the class: the tainted pair fits too.
    let mut with_rc = spec.clone();
    with_rc["runtimeClassName"] = rc_hv.clone().into();
    let fits_rc: usize = f
        .placements(&with_rc)
        .iter()
        .filter_map(|(_, fit)| match fit {
            Fit::Fits { nodes } => Some(*nodes),
            _ => None,
        })
        .sum();
    assert_eq!(fits_rc, 4);

    // Metrics hooks.
    let m = w.metrics();
    assert!(m.synced && m.healthy, "{m:#?}");
    assert_eq!(m.staleness, Duration::ZERO);
    assert!(
        m.windows_nodes_by_build
            .iter()
            .any(|(b, n)| b == "10.0.17763" && *n >= 4),
        "{m:#?}"
    );
    assert!(
        m.windows_nodes_by_build.iter().any(|(b, _)| b == "unknown"),
        "{m:#?}"
    );

    // Changes: a taint on an untainted ltsc2022 node, a node deleted, a new ltsc2019 node.
    c.kubectl(
        &["taint", "node", &nodes[4].name, "dedicated=iis:NoSchedule"],
        None,
    )
    .ok();
    c.delete("node", None, &nodes[7].name).ok();
    c.delete("node", None, &nodes[8].name).ok();
    c.create_node(
        &Node::windows(&c.unique(&format!("{test}-w19new")), "10.0.17763").label(TEST_LABEL, &test),
    );
    c.delete("runtimeclass", None, &rc_proc).ok();
    let f2 = eventually("the changes", || {
        let f = w.facts();
        let g = groups_of(&f, &test);
        let mut want: Vec<&str> = vec![
            "windows - garbage []: 1",
            "windows ltsc2019  [os=windows:NoSchedule]: 2",
            "windows ltsc2019  []: 2",
            "windows ltsc2019 noinfo []: 1",
            "windows ltsc2022  [dedicated=iis:NoSchedule]: 1",
            "windows ltsc2022  [os=windows:NoSchedule]: 1",
            "windows ltsc2022  []: 1",
            "windows ltsc2022 gke [node.kubernetes.io/os=windows:NoSchedule]: 1",
        ];
        want.sort();
        if g == want && !f.runtime_classes.contains_key(&rc_proc) {
            Ok(f)
        } else {
            Err(format!("{g:#?}"))
        }
    });
    // The Linux group of this test is gone entirely.
    assert!(!groups_of(&f2, &test).iter().any(|g| g.starts_with("linux")));
    // What an operator reads: the changes, not heartbeats.
    let log = log_text();
    assert!(log.contains("cluster facts synced:"), "{log}");
    assert!(
        log.contains("node group taints changed: [] -> [dedicated=iis:NoSchedule]"),
        "{log}"
    );
    assert!(
        log.contains(&format!("RuntimeClass {rc_proc} deleted")),
        "{log}"
    );
    assert!(
        log.contains("Windows node of unknown build") && log.contains(&garbage),
        "{log}"
    );
    // Once by this watch (the other tests' watches see the node too).
    let mine = format!("watch={test}");
    let reports = log
        .lines()
        .filter(|l| l.contains(&mine) && l.contains(&format!("node={garbage}")))
        .count();
    assert_eq!(reports, 1, "the garbage node is reported once: {log}");
    drop(w);
    eprintln!("test took {:.2?}", test_start.elapsed());
}

fn one_shot_read_matches_the_live_facts() {
    let Some(c) = cluster() else { return };
    let test_start = Instant::now();
    let test = c.unique("once");
    for n in test_nodes(&c, &test) {
        c.create_node(&n);
    }
    let rt = runtime();
    let kc = client(&rt, &c.kubeconfig);
    // A page size of 3 makes the read take many pages.
    let f = rt.block_on(read_once(&kc, 3)).expect("one-shot read");
    assert!(f.synced.all());
    assert_eq!(groups_of(&f, &test), expected_groups());
    assert!(f.namespaces.contains_key("default"));
    assert_eq!(f.server_version.unwrap().version, KubeVersion::new(1, 32));
    eprintln!("test took {:.2?}", test_start.elapsed());
}

fn forbidden_client_reports_clearly_keeps_the_last_snapshot_and_recovers() {
    let Some(c) = cluster() else { return };
    let test_start = Instant::now();
    let _ = logs();
    let rt = runtime();

    // No rights at all: a clear error, no sync, no panic.
    let nobody = client(&rt, &c.nobody_kubeconfig);
    let w = start_watch(&rt, nobody.clone(), WatchOptions::default());
    assert!(!rt.block_on(w.wait_synced(Duration::from_secs(3))));
    let st = eventually("a forbidden error", || {
        let st = w.status();
        match st.resource("nodes") {
            Some(r) if r.last_error_kind == Some(ErrorKind::Forbidden) => Ok(st),
            _ => Err(format!("{st:#?}")),
        }
    });
    let msg = st.resource("nodes").unwrap().last_error.clone().unwrap();
    eprintln!("forbidden: {msg}");
    assert!(msg.contains("watching nodes: forbidden"), "{msg}");
    assert!(msg.contains("get, list and watch on nodes"), "{msg}");
    assert!(!st.synced);
    assert!(!w.facts().synced.nodes);
    assert!(log_text().contains("watching nodes: forbidden"));
    drop(w);
    // The one-shot read and the audit lister say so too.
    let e = rt.block_on(read_once(&nobody, 500)).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Forbidden);
    assert!(e.to_string().starts_with("listing nodes: forbidden"), "{e}");

    // Granted, synced, revoked: the watch restarts (5 s server timeout), is refused, keeps the
    // facts; granted again: recovers and sees what changed meanwhile.
    let (user, token) = SPARE_USERS[0];
    let (role, binding) = c.grant_facts_reader(user);
    let test = c.unique("rbac");
    let first = c.unique(&format!("{test}-w22"));
    c.create_node(&Node::windows(&first, "10.0.20348").label(TEST_LABEL, &test));
    let kc = client(&rt, &c.kubeconfig_for(user, token));
    let opts = WatchOptions {
        watch_timeout: Some(5),
        ..WatchOptions::default()
    };
    let w = start_watch(&rt, kc, opts);
    // RBAC bindings reach the authorizer's cache asynchronously: a first 403 is possible.
    assert!(rt.block_on(w.wait_synced(CONVERGE)), "{:#?}", w.status());
    eventually("the granted user's facts", || {
        let g = groups_of(&w.facts(), &test);
        if g == ["windows ltsc2022  []: 1"] {
            Ok(())
        } else {
            Err(format!("{g:?}"))
        }
    });
    c.delete("clusterrolebinding", None, &role).ok();
    let second = c.unique(&format!("{test}-w19"));
    c.create_node(&Node::windows(&second, "10.0.17763").label(TEST_LABEL, &test));
    eventually("the revoked watch is refused", || {
        let st = w.status();
        let r = st.resource("nodes").unwrap();
        if !r.healthy && r.last_error_kind == Some(ErrorKind::Forbidden) {
            Ok(())
        } else {
            Err(format!("{st:#?}"))
        }
    });
    // The last good facts stay (the new node may or may not have arrived before the refusal).
    let kept = groups_of(&w.facts(), &test);
    assert!(
        kept.contains(&"windows ltsc2022  []: 1".to_string()),
        "{kept:?}"
    );
    let m = w.metrics();
    assert!(!m.healthy && m.staleness > Duration::ZERO, "{m:#?}");
    c.apply(&binding).ok();
    eventually("recovery", || {
        let g = groups_of(&w.facts(), &test);
        let healthy = w.status().healthy();
        if healthy && g == ["windows ltsc2019  []: 1", "windows ltsc2022  []: 1"] {
            Ok(())
        } else {
            Err(format!("{g:?} {:#?}", w.status()))
        }
    });
    assert!(log_text().contains("watching nodes recovered after"));
    eprintln!("test took {:.2?}", test_start.elapsed());
}

fn unreachable_then_dropped_api_server_is_retried() {
    let Some(c) = cluster() else { return };
    let test_start = Instant::now();
    let _ = logs();
    let rt = runtime();
    let proxy = Proxy::new(c.port);
    let url = format!("https://127.0.0.1:{}", proxy.port);
    let kc = client(&rt, &c.kubeconfig_with_server(&c.unique("proxy"), &url));
    let test = c.unique("drop");
    let first = c.unique(&format!("{test}-w22"));
    c.create_node(&Node::windows(&first, "10.0.20348").label(TEST_LABEL, &test));

    // Nothing listens yet: errors, retries, a clear log; no facts, no panic.
    let w = start_watch(&rt, kc, WatchOptions::default());
    eventually("unreachable errors", || {
        let st = w.status();
        match st.resource("nodes") {
            Some(r) if r.last_error_kind == Some(ErrorKind::Unreachable) => Ok(()),
            _ => Err(format!("{st:#?}")),
        }
    });
    assert!(!w.is_synced());
    eprintln!(
        "unreachable: {}",
        w.status()
            .resource("nodes")
            .unwrap()
            .last_error
            .as_ref()
            .unwrap()
    );
    let log = log_text();
    assert!(
        log.contains("watching nodes: API server unreachable")
            && log.contains("retrying with backoff, keeping the last facts"),
        "{log}"
    );

    // The server appears: the watch syncs by itself.
    proxy.start(&rt);
    assert!(rt.block_on(w.wait_synced(CONVERGE)), "{:#?}", w.status());
    eventually("facts through the proxy", || {
        let g = groups_of(&w.facts(), &test);
        if g == ["windows ltsc2022  []: 1"] {
            Ok(())
        } else {
            Err(format!("{g:?}"))
        }
    });

    // Dropped mid-stream: the facts stay; back again: they catch up.
    proxy.cut();
    let second = c.unique(&format!("{test}-w19"));
    c.create_node(&Node::windows(&second, "10.0.17763").label(TEST_LABEL, &test));
    eventually("the drop is noticed", || {
        let st = w.status();
        if st.resource("nodes").is_some_and(|r| !r.healthy) {
            Ok(())
        } else {
            Err(format!("{st:#?}"))
        }
    });
    assert_eq!(groups_of(&w.facts(), &test), ["windows ltsc2022  []: 1"]);
    assert!(w.metrics().staleness > Duration::ZERO);
    proxy.start(&rt);
    eventually("catching up after the drop", || {
        let g = groups_of(&w.facts(), &test);
        if w.status().healthy() && g == ["windows ltsc2019  []: 1", "windows ltsc2022  []: 1"] {
            Ok(())
        } else {
            Err(format!("{g:?}"))
        }
    });
    drop(w);
    proxy.cut();
    eprintln!("test took {:.2?}", test_start.elapsed());
}

fn audit_lists_workloads_once_under_their_top_owner() {
    let Some(c) = cluster() else { return };
    let test_start = Instant::now();
    let ns = c.unique("audit");
    c.create_namespace(&ns, &[]);
    // No controller-manager: the ReplicaSets, Jobs and Pods a controller would make are created
    // by hand, owned as the controllers own them.
    let pod_spec = json!({"containers": [{"name": "a", "image": "mcr.microsoft.com/windows/nanoserver:ltsc2022"}],
        "nodeSelector": {"kubernetes.io/os": "windows"}});
    let template = json!({"metadata": {"labels": {"app": "web"}}, "spec": pod_spec});
    let owner = |o: &serde_json::Value| {
        json!([{"apiVersion": o["apiVersion"], "kind": o["kind"], "name": o["metadata"]["name"],
            "uid": o["metadata"]["uid"], "controller": true}])
    };
    let deploy = c
        .create(&json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": ns},
            "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": template}}))
        .ok()
        .json();
    let rs = c
        .create(&json!({"apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {"name": "web-5d9f", "namespace": ns, "ownerReferences": owner(&deploy)},
            "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": template}}))
        .ok()
        .json();
    for p in ["web-5d9f-a", "web-5d9f-b"] {
        c.create(&json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": p, "namespace": ns, "labels": {"app": "web"}, "ownerReferences": owner(&rs)},
            "spec": pod_spec}))
            .ok();
    }
    let job_template = json!({"spec": {"restartPolicy": "Never",
        "containers": [{"name": "a", "image": "mcr.microsoft.com/windows/nanoserver:ltsc2022"}]}});
    let cron = c
        .create(&json!({"apiVersion": "batch/v1", "kind": "CronJob",
            "metadata": {"name": "nightly", "namespace": ns},
            "spec": {"schedule": "0 2 * * *", "jobTemplate": {"spec": {"template": job_template}}}}))
        .ok()
        .json();
    let job = c
        .create(&json!({"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": "nightly-1", "namespace": ns, "ownerReferences": owner(&cron)},
            "spec": {"template": job_template}}))
        .ok()
        .json();
    let job_pod_labels = job["spec"]["template"]["metadata"]["labels"].clone();
    c.create(&json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "nightly-1-x", "namespace": ns, "labels": job_pod_labels,
            "ownerReferences": owner(&job)},
        "spec": job_template["spec"]}))
        .ok();
    c.create(&json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "debug", "namespace": ns}, "spec": pod_spec}))
        .ok();

    let rt = runtime();
    let admin = client(&rt, &c.kubeconfig);
    // Page size 1: every kind takes several pages.
    let inv = rt
        .block_on(list_workloads(&admin, &Scope::Namespace(ns.clone()), 1))
        .expect("audit listing");
    assert!(inv.skipped.is_empty(), "{:#?}", inv.skipped);
    let got: Vec<(String, String, Vec<String>)> = inv
        .objects
        .iter()
        .map(|o| (o.kind.clone(), o.name.clone(), o.pods.clone()))
        .collect();
    let s = |x: &str| x.to_string();
    assert_eq!(
        got,
        vec![
            (s("CronJob"), s("nightly"), vec![s("nightly-1-x")]),
            (
                s("Deployment"),
                s("web"),
                vec![s("web-5d9f-a"), s("web-5d9f-b")]
            ),
            (s("Pod"), s("debug"), vec![]),
        ]
    );
    // Whole objects, as the API server stores them, typed header set, managedFields gone.
    let d = &inv.objects[1].object;
    assert_eq!(d["apiVersion"], "apps/v1");
    assert_eq!(d["kind"], "Deployment");
    assert_eq!(
        d["spec"]["template"]["spec"]["nodeSelector"]["kubernetes.io/os"],
        "windows"
    );
    assert!(d["metadata"].get("managedFields").is_none());
    assert_eq!(d["metadata"]["namespace"], ns.as_str());

    // All namespaces: the same objects are among them.
    let all = rt
        .block_on(list_workloads(&admin, &Scope::AllNamespaces, 500))
        .expect("audit listing");
    let mine: Vec<&str> = all
        .objects
        .iter()
        .filter(|o| o.namespace == ns)
        .map(|o| o.name.as_str())
        .collect();
    assert_eq!(mine, ["nightly", "web", "debug"]);

    // Without rights: every kind skipped with a clear reason, nothing reported, no error.
    let nobody = client(&rt, &c.nobody_kubeconfig);
    let inv = rt
        .block_on(list_workloads(&nobody, &Scope::Namespace(ns.clone()), 500))
        .expect("a forbidden listing is not an error");
    assert!(inv.objects.is_empty());
    assert_eq!(inv.skipped.len(), winlint::cluster::audit::KINDS.len());
    assert!(
        inv.skipped
            .iter()
            .all(|(_, e)| e.kind == ErrorKind::Forbidden)
    );
    let e = inv.skipped[0].1.to_string();
    assert!(
        e.starts_with("listing cronjobs in namespace") && e.contains("forbidden"),
        "{e}"
    );
    assert!(
        !e.contains("runtimeclasses"),
        "the facts' RBAC hint is not for audit: {e}"
    );
    eprintln!("test took {:.2?}", test_start.elapsed());
}

/// Measurement, not an assertion on speed: time to first sync and snapshot memory with 5 000
/// Nodes and 2 000 Namespaces created as API objects.
///
/// `KUBEBUILDER_ASSETS=$PWD/target/k8s-assets cargo test --release --test k8s_cluster --
///  --ignored --nocapture scale`
fn scale_measurement() {
    let Some(c) = cluster() else { return };
    let nodes: usize = std::env::var("SCALE_NODES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5000);
    let namespaces: usize = std::env::var("SCALE_NAMESPACES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2000);
    let rt = runtime();
    let admin = client(&rt, &c.kubeconfig);
    let t = Instant::now();
    rt.block_on(k8s_support::create_scale_objects(&admin, nodes, namespaces));
    eprintln!(
        "created {nodes} nodes and {namespaces} namespaces in {:.1?}",
        t.elapsed()
    );

    let rss = || -> u64 {
        let s = std::fs::read_to_string("/proc/self/statm").unwrap();
        s.split_whitespace().nth(1).unwrap().parse::<u64>().unwrap() * 4096
    };
    let rss0 = rss();
    let t = Instant::now();
    // No debounce: the time is the lists' and the build's, not the wait for more changes.
    let opts = WatchOptions {
        debounce: Duration::from_millis(1),
        ..WatchOptions::default()
    };
    let w = start_watch(&rt, admin.clone(), opts);
    assert!(
        rt.block_on(w.wait_synced(Duration::from_secs(600))),
        "{:#?}",
        w.status()
    );
    let sync = t.elapsed();
    let f = w.facts();
    assert!(f.node_count() >= nodes, "{}", f.node_count());
    assert!(f.namespaces.len() >= namespaces);
    let rss1 = rss();
    // The snapshot's own heap: strings and maps, counted.
    let strings = |m: &BTreeMap<String, String>| -> usize {
        m.iter()
            .map(|(k, v)| k.capacity() + v.capacity() + 64)
            .sum()
    };
    let mut bytes = 0usize;
    for g in &f.groups {
        bytes += strings(&g.labels) + 128;
        for (n, h) in &g.nodes {
            bytes += n.capacity() + h.as_ref().map_or(0, String::capacity) + 64;
        }
    }
    for (n, l) in &f.namespaces {
        bytes += n.capacity() + strings(l) + 64;
    }
    let t = Instant::now();
    let again = ClusterFacts::clone(&f);
    let clone_time = t.elapsed();
    drop(again);
    eprintln!(
        "first sync of {} nodes ({} groups) and {} namespaces: {:.2?}; snapshot ≈ {:.1} MiB \
         (counted), process RSS +{:.1} MiB after the sync (watch buffers included); \
         snapshot clone {:.1?}",
        f.node_count(),
        f.groups.len(),
        f.namespaces.len(),
        sync,
        bytes as f64 / 1048576.0,
        (rss1.saturating_sub(rss0)) as f64 / 1048576.0,
        clone_time
    );
}

fn kubeconfig_context_is_honoured() {
    use base64::Engine as _;
    let Some(c) = cluster() else { return };
    let test_start = Instant::now();
    let ca = base64::engine::general_purpose::STANDARD.encode(&c.ca_pem);
    let dead = k8s_support::free_port();
    // The current context points at a port where nothing listens; `envtest` at the server.
    let text = format!(
        "apiVersion: v1\nkind: Config\nclusters:\n\
         - name: dead\n  cluster:\n    server: https://127.0.0.1:{dead}\n    certificate-authority-data: {ca}\n\
         - name: real\n  cluster:\n    server: {}\n    certificate-authority-data: {ca}\n\
         users:\n- name: admin\n  user:\n    token: {}\n\
         contexts:\n- name: broken\n  context:\n    cluster: dead\n    user: admin\n\
         - name: envtest\n  context:\n    cluster: real\n    user: admin\n\
         current-context: broken\n",
        c.url,
        k8s_support::ADMIN_TOKEN
    );
    let path = c.dir.join(c.unique("kubeconfig-contexts"));
    std::fs::write(&path, text).unwrap();
    let rt = runtime();
    let with = |context: Option<&str>| {
        rt.block_on(winlint::cluster::client(&ClientSource::Kubeconfig {
            path: Some(path.clone()),
            context: context.map(str::to_string),
        }))
    };
    let good = with(Some("envtest")).expect("client for context envtest");
    let f = rt
        .block_on(read_once(&good, 500))
        .expect("read through context envtest");
    assert!(f.synced.all());
    let broken = with(None).expect("client for the current context");
    let e = rt.block_on(read_once(&broken, 500)).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Unreachable, "{e}");
    assert!(
        e.to_string()
            .starts_with("listing nodes: API server unreachable"),
        "{e}"
    );
    let e = with(Some("missing")).err().expect("no such context");
    assert_eq!(e.kind, ErrorKind::Config, "{e}");
    assert!(e.to_string().contains("missing"), "{e}");
    let e = rt
        .block_on(winlint::cluster::client(&ClientSource::Kubeconfig {
            path: Some(c.dir.join("no-such-kubeconfig")),
            context: None,
        }))
        .err()
        .expect("no such kubeconfig");
    assert_eq!(e.kind, ErrorKind::Config, "{e}");
    assert!(e.to_string().contains("no-such-kubeconfig"), "{e}");
    eprintln!("test took {:.2?}", test_start.elapsed());
}

/// The tests (libtest-mimic: a test that lacks an outside tool is reported ignored, with how
/// to get it; tests/skip_support).
fn main() {
    use k8s_support::skip_support::{run, test};
    run(vec![
        test(
            "live_snapshot_converges_and_follows_changes",
            live_snapshot_converges_and_follows_changes,
        ),
        test(
            "one_shot_read_matches_the_live_facts",
            one_shot_read_matches_the_live_facts,
        ),
        test(
            "forbidden_client_reports_clearly_keeps_the_last_snapshot_and_recovers",
            forbidden_client_reports_clearly_keeps_the_last_snapshot_and_recovers,
        ),
        test(
            "unreachable_then_dropped_api_server_is_retried",
            unreachable_then_dropped_api_server_is_retried,
        ),
        test(
            "audit_lists_workloads_once_under_their_top_owner",
            audit_lists_workloads_once_under_their_top_owner,
        ),
        // Run with --ignored: measurement: creates 5 000 Nodes and 2 000 Namespaces.
        test("scale_measurement", scale_measurement).with_ignored_flag(true),
        test(
            "kubeconfig_context_is_honoured",
            kubeconfig_context_is_honoured,
        ),
    ]);
}
