//! `winlint serve` with live cluster facts behind a real kube-apiserver 1.32 (tests/k8s_support):
//! the webhook watches the test API server (`--kubeconfig`, the harness's admin kubeconfig, or a
//! restricted one), Nodes, RuntimeClasses and labelled Namespaces are created as API objects,
//! then Pods and workloads modelled on testdata/realworld/windows are created with kubectl, and
//! the tests assert what the API server answered and stored: mutations, denials, warnings, as the
//! facts change (the whole real-world corpus, on three cluster shapes, is tests/k8s_corpus.rs); and
//! the faults of issue 8 §6 (API server unreachable at start, RBAC forbidden,
//! watch dropped mid-stream). Skips (and says why) without `KUBEBUILDER_ASSETS`, except under
//! `CI=true`.
//!
//! Nodes are cluster-wide: every test sets the whole node list it needs ([`nodes_are`]) under
//! one lock, and waits until each of its webhooks evaluates with exactly those nodes (read from
//! `winlint_cluster_windows_nodes`), so tests never see each other's nodes.

mod k8s_support;

use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard};
use std::time::Instant;

use k8s_support::{
    Guard, Node, Proxy, SPARE_USERS, Webhook, cluster, eventually, metric, wait_windows_nodes,
    windows_builds, windows_nodes,
};
use serde_json::{Value, json};

const IIS_2022: &str = "mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2022";
const IIS_2019: &str = "mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2019";
const BUILD_2019: &str = "10.0.17763";
const BUILD_2022: &str = "10.0.20348";
/// The warning that says what the pod mutating webhook will add to a workload's pods.
const AT_POD_CREATION: &str = "winlint: at pod creation the mutating webhook adds";

/// `winlint serve` watching the test API server with `kubeconfig` (the admin's when `None`),
/// metrics on a free port, plus `config` and `extra` flags.
fn serve(
    c: &Guard,
    kubeconfig: Option<&std::path::Path>,
    config: Option<&str>,
    extra: &[&str],
) -> Webhook {
    Webhook::watching(c, kubeconfig, config, extra)
}

/// Node lists are cluster-wide: one test at a time sets them.
static NODES: Mutex<()> = Mutex::new(());

/// Make the cluster's Nodes exactly `nodes` and wait until every webhook of `whs` evaluates
/// with them (its Windows nodes per build, read from its metrics, are those of `nodes`, from a
/// complete snapshot). Hold the returned guard for the whole test.
fn nodes_are(c: &Guard, whs: &[&Webhook], nodes: &[Node]) -> MutexGuard<'static, ()> {
    let guard = NODES.lock().unwrap_or_else(|e| e.into_inner());
    c.kubectl(&["delete", "nodes", "--all", "--wait=false"], None)
        .ok();
    // Every webhook sees the empty list first, so that counts that happen to match the new
    // list cannot be the old one's.
    for wh in whs {
        wait_windows_nodes(wh, &BTreeMap::new());
    }
    for n in nodes {
        c.create_node(n);
    }
    let want = windows_builds(nodes);
    for wh in whs {
        wait_windows_nodes(wh, &want);
    }
    guard
}

/// Wait until `/readyz` answers 200 `ready: {facts}` (`configured facts`, `live cluster facts`).
fn ready_with(wh: &Webhook, facts: &str) {
    let want = format!("ready: {facts}");
    eventually(&format!("ready with {facts}"), || match wh.get("/readyz") {
        (200, b) if b == want => Ok(()),
        other => Err(format!("{other:?}")),
    });
}

/// Create an ltsc2022 IIS pod `name` in `ns`: the tolerations it was stored with.
fn created_pod_tolerations(c: &Guard, ns: &str, name: &str) -> Vec<String> {
    let p = c.create(&pod(ns, name, IIS_2022)).ok().json();
    tolerations(&p["spec"])
}

fn deployment(ns: &str, name: &str, image: &str) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}},
                "spec": {"nodeSelector": {"kubernetes.io/os": "windows"},
                    "containers": [{"name": "iis", "image": image,
                        "ports": [{"containerPort": 80}]}]}}}})
}

fn pod(ns: &str, name: &str, image: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"containers": [{"name": "app", "image": image}]}})
}

/// The tolerations of a pod spec as `key=value:Effect` (`key:Effect` without a value), without
/// the `not-ready`/`unreachable` ones the DefaultTolerationSeconds admission plugin adds.
fn tolerations(spec: &Value) -> Vec<String> {
    spec["tolerations"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|t| t.get("tolerationSeconds").is_none())
        .map(|t| {
            let key = t["key"].as_str().unwrap_or("");
            let effect = t["effect"].as_str().unwrap_or("");
            match t["value"].as_str() {
                Some(v) => format!("{key}={v}:{effect}"),
                None => format!("{key}:{effect}"),
            }
        })
        .collect()
}

/// The rule IDs of a denial message (`- WIN502 …` lines).
fn denied_rules(stderr: &str) -> Vec<String> {
    let mut v: Vec<String> = stderr
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("- WIN"))
        .map(|l| format!("WIN{}", &l[..3]))
        .collect();
    v.sort();
    v.dedup();
    v
}

/// Issue 8's first finding: a fresh install refused a plain IIS Deployment pinned to Windows
/// for WIN007, although the pod webhook adds that toleration to its pods. Now it is admitted,
/// stored as written, with a warning that says what its pods will get; its Pod is mutated; the
/// ltsc2019 variant is denied for WIN502 alone while only ltsc2022 nodes exist; and without the
/// pod mutating webhook (`webhook.mutate: false`) the template is judged as written.
fn fresh_install_admits_a_windows_deployment_judged_by_its_pods() {
    let Some(c) = cluster() else { return };
    let t = Instant::now();
    let wh = serve(&c, None, None, &[]);
    let no_pod_webhook = serve(&c, None, Some("webhook:\n  mutate: false\n"), &[]);
    let _nodes = nodes_are(
        &c,
        &[&wh, &no_pod_webhook],
        &[
            Node::linux("fresh-linux-1"),
            Node::windows("fresh-win22-1", BUILD_2022).taint("os=windows:NoSchedule"),
            Node::windows("fresh-win22-2", BUILD_2022).taint("os=windows:NoSchedule"),
        ],
    );
    let ns = c.unique("fresh");
    wh.namespace(&ns, &[]);

    let created = c.create(&deployment(&ns, "iis", IIS_2022)).ok();
    assert!(
        created
            .warnings
            .iter()
            .any(|w| w.starts_with(AT_POD_CREATION)
                && w.contains("tolerations")
                && w.contains("os")),
        "{created:#?}"
    );
    // Stored as written: workloads are not mutated.
    let stored = c.get("deployment", Some(&ns), "iis").ok().json();
    let spec = &stored["spec"]["template"]["spec"];
    assert!(tolerations(spec).is_empty(), "{stored:#}");
    assert!(spec.get("os").is_none(), "{stored:#}");
    assert!(
        stored["metadata"]["annotations"]
            .as_object()
            .is_none_or(|a| !a.contains_key("winlint.io/mutated")),
        "{stored:#}"
    );

    // Its pod, created as the ReplicaSet controller would: mutated exactly so.
    let mut p = pod(&ns, "iis-pod", IIS_2022);
    p["spec"] = deployment(&ns, "iis", IIS_2022)["spec"]["template"]["spec"].clone();
    c.create(&p).ok();
    let stored = c.get("pod", Some(&ns), "iis-pod").ok().json();
    assert_eq!(
        tolerations(&stored["spec"]),
        ["os=windows:NoSchedule"],
        "{stored:#}"
    );
    assert_eq!(stored["spec"]["os"]["name"], "windows", "{stored:#}");

    // An ltsc2019 image where only ltsc2022 nodes run: denied, for WIN502 only.
    let denied = c.create(&deployment(&ns, "iis-2019", IIS_2019)).err();
    assert_eq!(denied_rules(&denied.stderr), ["WIN502"], "{denied:#?}");
    assert!(denied.stderr.contains("10.0.20348"), "{denied:#?}");

    // No pod mutating webhook: the template is judged as written.
    let ns2 = c.unique("fresh-nomutate");
    no_pod_webhook.namespace(&ns2, &[]);
    let denied = c.create(&deployment(&ns2, "iis", IIS_2022)).err();
    assert_eq!(denied_rules(&denied.stderr), ["WIN007"], "{denied:#?}");

    // The log says which facts are in use.
    let log = wh.log_text();
    assert!(
        log.contains("evaluating with live cluster facts")
            && log.contains("Windows taints [os=windows:NoSchedule]"),
        "{log}"
    );
    eprintln!("test took {:.2?}", t.elapsed());
}

/// A probable-only Windows pod: the pod label `kubernetes.io/os=windows`, an image of unknown OS.
fn probable_pod(ns: &str, name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": ns, "labels": {"kubernetes.io/os": "windows"}},
        "spec": {"containers": [{"name": "app", "image": "registry.contoso.com/app:1.0"}]}})
}

/// The namespace facts come from the watch, and follow it: the Pod Security level (WIN107 on a
/// Deployment in a `restricted` namespace, also after a namespace is labelled live),
/// `winlint.io/default-os=windows` (a probable pod is mutated there, not elsewhere), and the
/// exempt label (`webhook.exemptNamespaceLabel`: nothing evaluated).
fn namespace_facts_come_from_the_watch() {
    let Some(c) = cluster() else { return };
    let t = Instant::now();
    let wh = serve(&c, None, None, &[]);
    let exempting = serve(
        &c,
        None,
        Some("webhook:\n  exemptNamespaceLabel: envtest.winlint.io/exempt\n"),
        &[],
    );
    let _nodes = nodes_are(
        &c,
        &[&wh, &exempting],
        &[
            Node::linux("ns-linux-1"),
            Node::windows("ns-win22-1", BUILD_2022).taint("os=windows:NoSchedule"),
        ],
    );
    let win107 = |out: &k8s_support::Kubectl| out.warnings.iter().any(|w| w.starts_with("WIN107"));

    // Pod Security "restricted": WIN107 (no runAsNonRoot) on the Deployment.
    let restricted = c.unique("ns-restricted");
    wh.namespace(
        &restricted,
        &[("pod-security.kubernetes.io/enforce", "restricted")],
    );
    let plain = c.unique("ns-plain");
    wh.namespace(&plain, &[]);
    let out = eventually("WIN107 in the restricted namespace", || {
        let out = c.dry_run_create(&deployment(&restricted, "iis", IIS_2022));
        if out.success && win107(&out) {
            Ok(out)
        } else {
            Err(format!("{out:#?}"))
        }
    });
    assert!(
        out.warnings.iter().any(|w| w.starts_with(AT_POD_CREATION)),
        "{out:#?}"
    );
    let out = c.dry_run_create(&deployment(&plain, "iis", IIS_2022)).ok();
    assert!(!win107(&out), "{out:#?}");
    // Labelled live: the next request knows.
    c.kubectl(
        &[
            "label",
            "namespace",
            &plain,
            "pod-security.kubernetes.io/enforce=restricted",
        ],
        None,
    )
    .ok();
    eventually("WIN107 once the namespace is labelled", || {
        let out = c.dry_run_create(&deployment(&plain, "iis", IIS_2022));
        if out.success && win107(&out) {
            Ok(())
        } else {
            Err(format!("{out:#?}"))
        }
    });

    // winlint.io/default-os=windows: probable pods are mutated there only.
    let windows_ns = c.unique("ns-default-os");
    wh.namespace(&windows_ns, &[("winlint.io/default-os", "windows")]);
    let other = c.unique("ns-other");
    wh.namespace(&other, &[]);
    let mutated = eventually("a probable pod mutated in the default-os namespace", || {
        let out = c.dry_run_create(&probable_pod(&windows_ns, "p"));
        let v = if out.success { out.json() } else { Value::Null };
        if v["spec"]["nodeSelector"]["kubernetes.io/os"] == "windows" {
            Ok(v)
        } else {
            Err(format!("{out:#?}"))
        }
    });
    assert_eq!(tolerations(&mutated["spec"]), ["os=windows:NoSchedule"]);
    // Elsewhere it is not mutated, so the validating webhook finds it without selector and
    // toleration.
    let untouched = c.dry_run_create(&probable_pod(&other, "p")).err();
    assert_eq!(
        denied_rules(&untouched.stderr),
        ["WIN001", "WIN007"],
        "{untouched:#?}"
    );

    // The exempt label of the configuration: nothing evaluated, not even an ltsc2019 image.
    let exempt = c.unique("ns-exempt");
    exempting.namespace(&exempt, &[("envtest.winlint.io/exempt", "true")]);
    let judged = c.unique("ns-judged");
    exempting.namespace(&judged, &[]);
    let denied = c.create(&deployment(&judged, "iis", IIS_2019)).err();
    assert_eq!(denied_rules(&denied.stderr), ["WIN502"], "{denied:#?}");
    let admitted = eventually("the exempt namespace is known", || {
        let out = c.create(&deployment(&exempt, "iis", IIS_2019));
        if out.success {
            Ok(out)
        } else {
            Err(format!("{out:#?}"))
        }
    });
    assert!(
        !admitted
            .warnings
            .iter()
            .any(|w| w.starts_with("WIN") || w.starts_with("winlint")),
        "{admitted:#?}"
    );
    eprintln!("test took {:.2?}", t.elapsed());
}

/// Issue 8 §6: the API server unreachable at start, then reachable, then the watch dropped
/// mid-stream. The webhook answers all along: with the configured facts until the first sync
/// (and `/readyz` says so after `--cluster-facts-timeout`), then with the cluster's, and while
/// the watch is down with the last good ones. Clear logs, metrics, no panic.
fn unreachable_at_start_then_dropped_mid_stream_keeps_the_last_good_facts() {
    let Some(c) = cluster() else { return };
    let t = Instant::now();
    let rt = k8s_support::runtime();
    let proxy = Proxy::new(c.port);
    let kc = c.kubeconfig_with_server(
        &c.unique("proxy"),
        &format!("https://127.0.0.1:{}", proxy.port),
    );
    // GKE's Windows taint: the toleration winlint adds tells which facts it used.
    let _nodes = nodes_are(
        &c,
        &[],
        &[
            Node::linux("drop-linux-1"),
            Node::windows("drop-win22-1", BUILD_2022)
                .taint("node.kubernetes.io/os=windows:NoSchedule"),
        ],
    );
    let mut wh = serve(&c, Some(&kc), None, &["--cluster-facts-timeout", "2"]);
    let ns = c.unique("drop");
    wh.namespace(&ns, &[]);
    let toleration_of = |name: &str| created_pod_tolerations(&c, &ns, name);

    // Unreachable: ready with the configured facts once the wait ran out, and says why.
    ready_with(&wh, "configured facts");
    let log = wh.log_text();
    assert!(
        log.contains("cluster facts not synced after") && log.contains("API server unreachable"),
        "{log}"
    );
    let m = wh.get("/metrics").1;
    assert_eq!(metric(&m, "winlint_cluster_facts_synced"), Some(0.0), "{m}");
    assert!(
        metric(&m, "winlint_cluster_watch_errors_total{resource=\"nodes\"}").unwrap_or(0.0) > 0.0,
        "{m}"
    );
    assert_eq!(toleration_of("before-sync"), ["os=windows:NoSchedule"]);

    // Reachable: the cluster's facts, by themselves.
    proxy.start(&rt);
    wait_windows_nodes(&wh, &BTreeMap::from([(BUILD_2022.to_string(), 1)]));
    assert_eq!(
        wh.get("/readyz"),
        (200, "ready: live cluster facts".to_string())
    );
    assert_eq!(
        toleration_of("synced"),
        ["node.kubernetes.io/os=windows:NoSchedule"]
    );

    // Dropped mid-stream: the last good facts stay in use; the log and the metrics say so.
    proxy.cut();
    eventually("the drop is noticed", || {
        let m = wh.get("/metrics").1;
        if metric(&m, "winlint_cluster_facts_healthy") == Some(0.0) {
            Ok(())
        } else {
            Err(m)
        }
    });
    assert!(
        wh.log_text()
            .contains("retrying with backoff, keeping the last facts"),
        "{}",
        wh.log_text()
    );
    assert_eq!(
        toleration_of("dropped"),
        ["node.kubernetes.io/os=windows:NoSchedule"]
    );
    assert_eq!(wh.get("/readyz").0, 200);

    // Back: healthy again.
    proxy.start(&rt);
    eventually("recovery", || {
        let m = wh.get("/metrics").1;
        if metric(&m, "winlint_cluster_facts_healthy") == Some(1.0) {
            Ok(())
        } else {
            Err(m)
        }
    });
    assert!(wh.running(), "winlint serve exited: {}", wh.log_text());
    assert!(!wh.log_text().contains("panicked"), "{}", wh.log_text());
    proxy.cut();
    eprintln!("test took {:.2?}", t.elapsed());
}

/// `/readyz` waits for the first complete sync (here the API server is out of reach until the
/// test lets it through, and the wait's bound is far away): not ready, and says why, while the
/// webhook already answers; ready with the live facts once they arrive, with the snapshot's
/// objects in the metrics. `--cluster-facts=off` keeps the offline behaviour on the same
/// cluster: ready at once, the configured toleration, no watch.
fn readyz_waits_for_the_first_sync_and_facts_off_stays_offline() {
    let Some(c) = cluster() else { return };
    let rt = k8s_support::runtime();
    let proxy = Proxy::new(c.port);
    let kc = c.kubeconfig_with_server(
        &c.unique("wait"),
        &format!("https://127.0.0.1:{}", proxy.port),
    );
    let _nodes = nodes_are(
        &c,
        &[],
        &[
            Node::linux("wait-linux-1"),
            Node::windows("wait-win22-1", BUILD_2022)
                .taint("node.kubernetes.io/os=windows:NoSchedule"),
        ],
    );
    let wh = serve(&c, Some(&kc), None, &["--cluster-facts-timeout", "3600"]);
    let off = Webhook::start(
        &c,
        None,
        &["--cluster-facts", "off", "--metrics-listen", "127.0.0.1:0"],
    );
    assert_eq!(
        wh.get("/readyz"),
        (
            503,
            "waiting for the first sync of the cluster facts".to_string()
        )
    );
    let ns = c.unique("wait");
    wh.namespace(&ns, &[]);
    // Not ready, yet it answers (the API server called it to register): configured facts.
    assert_eq!(
        created_pod_tolerations(&c, &ns, "early"),
        ["os=windows:NoSchedule"]
    );

    proxy.start(&rt);
    ready_with(&wh, "live cluster facts");
    assert_eq!(
        created_pod_tolerations(&c, &ns, "synced"),
        ["node.kubernetes.io/os=windows:NoSchedule"]
    );
    let m = wh.get("/metrics").1;
    assert_eq!(
        metric(&m, "winlint_cluster_objects{resource=\"nodes\"}"),
        Some(2.0),
        "{m}"
    );
    assert!(
        metric(&m, "winlint_cluster_objects{resource=\"namespaces\"}").unwrap_or(0.0) >= 1.0,
        "{m}"
    );

    // Facts off: ready at once with the configured facts; the configured toleration.
    assert_eq!(
        off.get("/readyz"),
        (200, "ready: configured facts".to_string())
    );
    let ns_off = c.unique("wait-off");
    off.namespace(&ns_off, &[]);
    assert_eq!(
        created_pod_tolerations(&c, &ns_off, "offline"),
        ["os=windows:NoSchedule"]
    );
    let m = off.get("/metrics").1;
    assert!(windows_nodes(&m).is_empty(), "{m}");
    assert!(!m.contains("winlint_cluster_objects{"), "{m}");
    assert!(
        off.log_text()
            .contains("cluster facts off (--cluster-facts=off)"),
        "{}",
        off.log_text()
    );
    proxy.cut();
}

/// Issue 8 §6: a user without the RBAC. The webhook serves with the configured facts, says
/// which rights it needs; once the ClusterRole of `winlint manifests` is bound, it recovers
/// by itself and judges with the cluster's facts (here: untainted Windows nodes, so no
/// toleration is added any more).
fn rbac_forbidden_serves_configured_facts_then_recovers_when_granted() {
    let Some(c) = cluster() else { return };
    let t = Instant::now();
    let (user, token) = SPARE_USERS[1];
    let kc = c.kubeconfig_for(user, token);
    let _nodes = nodes_are(
        &c,
        &[],
        &[
            Node::linux("rbac-linux-1"),
            Node::windows("rbac-win22-1", BUILD_2022),
        ],
    );
    let mut wh = serve(&c, Some(&kc), None, &["--cluster-facts-timeout", "2"]);
    let ns = c.unique("rbac");
    wh.namespace(&ns, &[]);
    let toleration_of = |name: &str| created_pod_tolerations(&c, &ns, name);
    ready_with(&wh, "configured facts");
    let log = wh.log_text();
    assert!(log.contains("watching nodes: forbidden"), "{log}");
    assert!(
        log.contains(
            "winlint needs get, list and watch on nodes, namespaces and runtimeclasses.node.k8s.io"
        ),
        "{log}"
    );
    let m = wh.get("/metrics").1;
    assert_eq!(metric(&m, "winlint_cluster_facts_synced"), Some(0.0), "{m}");
    assert_eq!(
        metric(&m, "winlint_cluster_facts_healthy"),
        Some(0.0),
        "{m}"
    );
    assert_eq!(toleration_of("forbidden"), ["os=windows:NoSchedule"]);

    // Granted exactly what `winlint manifests` grants.
    let role = c.unique("winlint-facts");
    c.apply(
        &json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
        "metadata": {"name": role}, "rules": winlint::manifests::cluster_facts_rules()}),
    )
    .ok();
    c.apply(
        &json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
        "metadata": {"name": role},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}]}),
    )
    .ok();
    wait_windows_nodes(&wh, &BTreeMap::from([(BUILD_2022.to_string(), 1)]));
    ready_with(&wh, "live cluster facts");
    assert!(toleration_of("granted").is_empty());
    assert!(
        wh.log_text().contains("recovered after"),
        "{}",
        wh.log_text()
    );
    assert!(wh.running(), "winlint serve exited: {}", wh.log_text());
    c.delete("clusterrolebinding", None, &role).ok();
    eprintln!("test took {:.2?}", t.elapsed());
}

// ---------------------------------------------------------------------------------------------
// Facts that change the verdict. The first two pass with the cluster-wide target the facts give
// (cluster::effective); the node-aware rules of branch `nodes` (WIN007/WIN502/WIN508/WIN001
// asking which node groups a pod can select, no Windows node observed → a warning, not a
// denial, `mutation.hyperv: auto`) must keep them passing and enable the two ignored ones.

/// Add an ltsc2019 node: an ltsc2019 pod is admitted; remove it: denied again.
fn an_ltsc2019_pod_runs_while_an_ltsc2019_node_exists() {
    let Some(c) = cluster() else { return };
    let wh = serve(&c, None, None, &[]);
    let _nodes = nodes_are(
        &c,
        &[&wh],
        &[
            Node::linux("n19-linux-1"),
            Node::windows("n19-win22-1", BUILD_2022).taint("os=windows:NoSchedule"),
        ],
    );
    let ns = c.unique("n19");
    wh.namespace(&ns, &[]);
    let denied = c.dry_run_create(&pod(&ns, "old", IIS_2019)).err();
    assert_eq!(denied_rules(&denied.stderr), ["WIN502"], "{denied:#?}");

    c.create_node(&Node::windows("n19-win19-1", BUILD_2019).taint("os=windows:NoSchedule"));
    wait_windows_nodes(
        &wh,
        &BTreeMap::from([(BUILD_2019.to_string(), 1), (BUILD_2022.to_string(), 1)]),
    );
    let admitted = c.create(&pod(&ns, "old", IIS_2019)).ok().json();
    assert_eq!(tolerations(&admitted["spec"]), ["os=windows:NoSchedule"]);
    // It can only land on the ltsc2019 node: pinned there.
    assert_eq!(
        admitted["spec"]["nodeSelector"]["node.kubernetes.io/windows-build"], BUILD_2019,
        "{admitted:#}"
    );

    c.delete("node", None, "n19-win19-1").ok();
    wait_windows_nodes(&wh, &BTreeMap::from([(BUILD_2022.to_string(), 1)]));
    let denied = c.dry_run_create(&pod(&ns, "old-again", IIS_2019)).err();
    assert_eq!(denied_rules(&denied.stderr), ["WIN502"], "{denied:#?}");
}

/// GKE taints its Windows nodes `node.kubernetes.io/os=windows:NoSchedule`: that is the
/// toleration winlint adds (and the one a workload's pods will get), not the configured default.
fn gke_windows_taint_is_the_toleration_added() {
    let Some(c) = cluster() else { return };
    let wh = serve(&c, None, None, &[]);
    let _nodes = nodes_are(
        &c,
        &[&wh],
        &[
            Node::linux("gke-linux-1"),
            Node::windows("gke-win22-1", BUILD_2022)
                .taint("node.kubernetes.io/os=windows:NoSchedule"),
        ],
    );
    let ns = c.unique("gke");
    wh.namespace(&ns, &[]);
    let p = c.create(&pod(&ns, "iis", IIS_2022)).ok().json();
    assert_eq!(
        tolerations(&p["spec"]),
        ["node.kubernetes.io/os=windows:NoSchedule"],
        "{p:#}"
    );
    let d = c.create(&deployment(&ns, "iis", IIS_2022)).ok();
    assert!(
        d.warnings
            .iter()
            .any(|w| w.starts_with(AT_POD_CREATION) && w.contains("tolerations")),
        "{d:#?}"
    );
}

/// Issue 8 end to end, on a GKE-style cluster: Windows node groups tainted
/// `node.kubernetes.io/os=windows:NoSchedule` (two ltsc2022 nodes, one ltsc2019 node) and a
/// Linux node, default settings. A plain Deployment pinned to Windows with an ltsc2022 IIS image
/// is admitted (judged as its pods after mutation), stored as written, and its pods get the
/// cluster's own toleration; an ltsc2019 image is admitted because an ltsc2019 node exists, and
/// its pods are pinned to that build; a pod that no node can run (a Windows Server 2025 image)
/// is denied with a message that names the nodes it could select and their builds.
fn issue8_gke_cluster_with_ltsc2019_and_ltsc2022_groups() {
    let Some(c) = cluster() else { return };
    const GKE: &str = "node.kubernetes.io/os=windows:NoSchedule";
    let wh = serve(&c, None, None, &[]);
    let _nodes = nodes_are(
        &c,
        &[&wh],
        &[
            Node::linux("i8-linux-1"),
            Node::windows("i8-win22-1", BUILD_2022).taint(GKE),
            Node::windows("i8-win22-2", BUILD_2022).taint(GKE),
            Node::windows("i8-win19-1", BUILD_2019).taint(GKE),
        ],
    );
    let ns = c.unique("i8");
    wh.namespace(&ns, &[]);

    // Workloads: admitted, stored as written, the warning says what the pods get.
    for (name, image) in [("iis-2022", IIS_2022), ("iis-2019", IIS_2019)] {
        let out = c.create(&deployment(&ns, name, image)).ok();
        assert!(
            out.warnings
                .iter()
                .any(|w| w.starts_with(AT_POD_CREATION) && w.contains("tolerations")),
            "{name}: {out:#?}"
        );
        let stored = out.json();
        assert!(
            tolerations(&stored["spec"]["template"]["spec"]).is_empty(),
            "{stored:#}"
        );
    }

    // Their pods, as the ReplicaSet controller creates them: the cluster's toleration.
    let pod_of = |name: &str, image: &str| {
        let mut p = pod(&ns, &format!("{name}-pod"), image);
        p["spec"] = deployment(&ns, name, image)["spec"]["template"]["spec"].clone();
        c.create(&p).ok().json()
    };
    let p22 = pod_of("iis-2022", IIS_2022);
    assert_eq!(tolerations(&p22["spec"]), [GKE], "{p22:#}");
    let p19 = pod_of("iis-2019", IIS_2019);
    assert_eq!(tolerations(&p19["spec"]), [GKE], "{p19:#}");
    // Only the ltsc2019 node can run it: pinned to that build.
    assert_eq!(
        p19["spec"]["nodeSelector"]["node.kubernetes.io/windows-build"], BUILD_2019,
        "{p19:#}"
    );

    // A Windows Server 2025 image: no node of this cluster runs it. Denied, naming the nodes.
    let ws2025 = "mcr.microsoft.com/windows/servercore:ltsc2025";
    for o in [pod(&ns, "new", ws2025), deployment(&ns, "new", ws2025)] {
        let denied = c.dry_run_create(&o).err();
        assert_eq!(denied_rules(&denied.stderr), ["WIN502"], "{denied:#?}");
        assert!(
            denied.stderr.contains("3 nodes")
                && denied.stderr.contains(BUILD_2019)
                && denied.stderr.contains(BUILD_2022),
            "{denied:#?}"
        );
    }
}

/// No Windows node observed: the rules that need node facts do not deny; a warning says why.
fn no_windows_node_means_a_warning_not_a_denial() {
    let Some(c) = cluster() else { return };
    let wh = serve(&c, None, None, &[]);
    let _nodes = nodes_are(&c, &[&wh], &[Node::linux("none-linux-1")]);
    let ns = c.unique("none");
    wh.namespace(&ns, &[]);
    for o in [pod(&ns, "old", IIS_2019), deployment(&ns, "old", IIS_2019)] {
        let out = c.dry_run_create(&o);
        assert!(out.success, "{out:#?}");
        assert!(
            out.warnings
                .iter()
                .any(|w| w.to_lowercase().contains("no windows node")),
            "{out:#?}"
        );
    }
}

/// `mutation.hyperv: auto` with a Hyper-V RuntimeClass: a pod whose image no selectable node
/// can run under process isolation (ltsc2019 image, ltsc2022 nodes) gets that class and is
/// admitted; a HostProcess pod never does.
fn hyperv_auto_admits_with_the_hyperv_runtime_class() {
    let Some(c) = cluster() else { return };
    let rc = c.unique("hyperv");
    c.create_runtime_class(
        &rc,
        "runhcs-wcow-hypervisor",
        &[
            ("kubernetes.io/os", "windows"),
            ("node.kubernetes.io/windows-build", BUILD_2022),
        ],
        json!([{"key": "os", "operator": "Equal", "value": "windows", "effect": "NoSchedule"}]),
    );
    let wh = serve(&c, None, Some("mutation:\n  hyperv: auto\n"), &[]);
    let _nodes = nodes_are(
        &c,
        &[&wh],
        &[
            Node::linux("hv-linux-1"),
            Node::windows("hv-win22-1", BUILD_2022).taint("os=windows:NoSchedule"),
        ],
    );
    let ns = c.unique("hv");
    wh.namespace(&ns, &[]);
    let p = c.create(&pod(&ns, "old", IIS_2019)).ok().json();
    assert_eq!(p["spec"]["runtimeClassName"], rc.as_str(), "{p:#}");
    let d = c.create(&deployment(&ns, "old", IIS_2019)).ok();
    assert!(
        d.warnings
            .iter()
            .any(|w| w.starts_with(AT_POD_CREATION) && w.contains("runtimeClassName")),
        "{d:#?}"
    );
    // A HostProcess pod never gets Hyper-V isolation.
    let mut hp = pod(&ns, "hp", "mcr.microsoft.com/windows/nanoserver:ltsc2022");
    hp["spec"]["hostNetwork"] = true.into();
    hp["spec"]["securityContext"] = json!({"windowsOptions": {"hostProcess": true,
        "runAsUserName": "NT AUTHORITY\\SYSTEM"}});
    let out = c.dry_run_create(&hp);
    if out.success {
        assert!(
            out.json()["spec"].get("runtimeClassName").is_none(),
            "{out:#?}"
        );
    }
}

/// Measurement, not an assertion on speed: `winlint serve` against 5 000 Nodes and 2 000
/// Namespaces: time from start to the first complete sync in use (the serve log's own figure,
/// and /readyz as a client sees it), and the process's memory against the same serve without
/// cluster facts. Run alone (it creates cluster-wide objects the other tests would see):
///
/// `KUBEBUILDER_ASSETS=$PWD/target/k8s-assets cargo test --release --test k8s_facts --
///  --ignored --nocapture scale`
fn scale_first_sync_through_serve() {
    let Some(c) = cluster() else { return };
    let _nodes = NODES.lock().unwrap_or_else(|e| e.into_inner());
    let (nodes, namespaces) = (
        k8s_support::env_or("SCALE_NODES", 5000),
        k8s_support::env_or("SCALE_NAMESPACES", 2000),
    );
    let rt = k8s_support::runtime();
    let admin = k8s_support::client(&rt, &c.kubeconfig);
    let t = Instant::now();
    rt.block_on(k8s_support::create_scale_objects(&admin, nodes, namespaces));
    eprintln!(
        "created {nodes} nodes and {namespaces} namespaces in {:.1?}",
        t.elapsed()
    );

    let kib = |pid: u32, field: &str| -> u64 {
        let s = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
        s.lines()
            .find_map(|l| l.strip_prefix(field))
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
            .unwrap()
    };
    let off = Webhook::start(
        &c,
        None,
        &["--cluster-facts", "off", "--metrics-listen", "127.0.0.1:0"],
    );
    let t = Instant::now();
    let on = serve(&c, None, None, &["--cluster-facts-timeout", "600"]);
    let started = t.elapsed();
    ready_with(&on, "live cluster facts");
    let ready = t.elapsed();
    let logged = on
        .log_text()
        .lines()
        .find(|l| l.contains("cluster facts in use"))
        .map(str::to_string)
        .unwrap_or_default();
    let m = on.get("/metrics").1;
    // The same requests through both, so both have served alike.
    let ns = c.unique("scale");
    on.namespace(&ns, &[]);
    c.dry_run_create(&pod(&ns, "p", IIS_2022));
    eprintln!(
        "winlint serve with {nodes} nodes / {namespaces} namespaces: {logged}\n\
         start → registered and called {started:.2?}, → /readyz live {ready:.2?}\n\
         RSS with facts {} KiB (peak {} KiB), without {} KiB (peak {} KiB)\n\
         windows nodes: {:?}",
        kib(on.pid(), "VmRSS:"),
        kib(on.pid(), "VmHWM:"),
        kib(off.pid(), "VmRSS:"),
        kib(off.pid(), "VmHWM:"),
        windows_nodes(&m)
    );
}

/// A Deployment of `image` without an OS pin, as a Linux chart writes it.
fn linux_deployment(ns: &str, name: &str, image: &str) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "app", "image": image}]}}}})
}

/// Create the pod of `deployment` as the ReplicaSet controller would (envtest runs no
/// controllers): what the API server stored, and the warnings of the answer.
fn create_template_pod(
    c: &Guard,
    ns: &str,
    name: &str,
    deployment: &Value,
) -> (Value, Vec<String>) {
    let mut p = pod(ns, name, "");
    p["metadata"]["labels"] = deployment["spec"]["template"]["metadata"]["labels"].clone();
    p["spec"] = deployment["spec"]["template"]["spec"].clone();
    let out = c.create(&p).ok();
    let stored = c.get("pod", Some(ns), name).ok().json();
    (stored, out.warnings)
}

/// Issue 18 item 4 on an AKS/EKS-style cluster (untainted Windows nodes), default settings
/// (`mutation.linuxGuard: auto`): a redis Deployment's pod is pinned to Linux nodes, recorded
/// and said in a warning; a multi-OS image's pod and an unknown image's pod are left unpinned;
/// and once the Windows nodes are tainted, nothing is pinned.
fn linux_guard_auto_pins_linux_only_pods_on_untainted_windows_nodes() {
    let Some(c) = cluster() else { return };
    let wh = serve(&c, None, None, &[]);
    let nodes = nodes_are(
        &c,
        &[&wh],
        &[
            Node::linux("lg-linux-1"),
            Node::windows("lg-win22-1", BUILD_2022),
        ],
    );
    let ns = c.unique("lg");
    wh.namespace(&ns, &[]);

    let redis = linux_deployment(&ns, "cache", "redis:7.2");
    let created = c.create(&redis).ok();
    assert!(
        created.warnings.iter().any(|w| w.contains("WIN011")),
        "{created:#?}"
    );
    let (stored, warnings) = create_template_pod(&c, &ns, "cache-pod", &redis);
    assert_eq!(
        stored["spec"]["nodeSelector"],
        json!({"kubernetes.io/os": "linux"}),
        "{stored:#}"
    );
    assert_eq!(
        stored["metadata"]["annotations"]["winlint.io/mutated"], "linuxGuard",
        "{stored:#}"
    );
    assert!(
        warnings
            .iter()
            .any(|w| w.starts_with("WIN011: linuxGuard pinned it to Linux: redis:7.2")),
        "{warnings:#?}"
    );

    for (name, image) in [
        ("multi", "registry.k8s.io/pause:3.9"),
        ("unknown", "contoso.azurecr.io/shop/api:1.4.2"),
    ] {
        let d = linux_deployment(&ns, name, image);
        let (stored, _) = create_template_pod(&c, &ns, &format!("{name}-pod"), &d);
        assert!(stored["spec"].get("nodeSelector").is_none(), "{stored:#}");
    }
    drop(nodes);

    let _nodes = nodes_are(
        &c,
        &[&wh],
        &[
            Node::linux("lg-linux-1"),
            Node::windows("lg-win22-1", BUILD_2022).taint("os=windows:NoSchedule"),
        ],
    );
    let (stored, _) = create_template_pod(&c, &ns, "cache-pod-tainted", &redis);
    assert!(stored["spec"].get("nodeSelector").is_none(), "{stored:#}");
}

/// The tests (libtest-mimic: a test that lacks an outside tool is reported ignored, with how
/// to get it; tests/skip_support).
fn main() {
    use k8s_support::skip_support::{run, test};
    run(vec![
        test(
            "fresh_install_admits_a_windows_deployment_judged_by_its_pods",
            fresh_install_admits_a_windows_deployment_judged_by_its_pods,
        ),
        test(
            "namespace_facts_come_from_the_watch",
            namespace_facts_come_from_the_watch,
        ),
        test(
            "unreachable_at_start_then_dropped_mid_stream_keeps_the_last_good_facts",
            unreachable_at_start_then_dropped_mid_stream_keeps_the_last_good_facts,
        ),
        test(
            "readyz_waits_for_the_first_sync_and_facts_off_stays_offline",
            readyz_waits_for_the_first_sync_and_facts_off_stays_offline,
        ),
        test(
            "rbac_forbidden_serves_configured_facts_then_recovers_when_granted",
            rbac_forbidden_serves_configured_facts_then_recovers_when_granted,
        ),
        test(
            "an_ltsc2019_pod_runs_while_an_ltsc2019_node_exists",
            an_ltsc2019_pod_runs_while_an_ltsc2019_node_exists,
        ),
        test(
            "gke_windows_taint_is_the_toleration_added",
            gke_windows_taint_is_the_toleration_added,
        ),
        test(
            "issue8_gke_cluster_with_ltsc2019_and_ltsc2022_groups",
            issue8_gke_cluster_with_ltsc2019_and_ltsc2022_groups,
        ),
        test(
            "no_windows_node_means_a_warning_not_a_denial",
            no_windows_node_means_a_warning_not_a_denial,
        ),
        test(
            "hyperv_auto_admits_with_the_hyperv_runtime_class",
            hyperv_auto_admits_with_the_hyperv_runtime_class,
        ),
        // Run with --ignored: measurement: creates 5 000 Nodes and 2 000 Namespaces.
        test(
            "scale_first_sync_through_serve",
            scale_first_sync_through_serve,
        )
        .with_ignored_flag(true),
        test(
            "linux_guard_auto_pins_linux_only_pods_on_untainted_windows_nodes",
            linux_guard_auto_pins_linux_only_pods_on_untainted_windows_nodes,
        ),
    ]);
}
