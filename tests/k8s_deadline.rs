//! Issue 30, item 1, through a real kube-apiserver (tests/k8s_support): a pod with thousands of
//! volumes and mounts in one container made the evaluation quadratic, the answer came after the
//! API server had given up, and with `failurePolicy: Ignore` (the chart's default) the API
//! server stored what winlint denies: `kubectl set image` to ltsc2019 on ltsc2022 nodes, and a
//! server-side dry run of a larger pod admitted unmutated. Here both are denied for the right
//! reason (WIN502: the evaluation ran to its end, nothing answered per `webhook.onError`), and
//! winlint's own log says its answer came within the request's budget. Skips without
//! `KUBEBUILDER_ASSETS`, except under `CI=true`.

mod k8s_support;

use k8s_support::{Webhook, cluster};
use serde_json::{Value, json};

const LTSC2022: &str = "mcr.microsoft.com/windows/servercore:ltsc2022";
const LTSC2019: &str = "mcr.microsoft.com/windows/servercore:ltsc2019";

/// A Windows pod pinned to Windows whose one container mounts `mounts` of its `volumes`
/// emptyDir volumes (the shape of the attack: 12 000 volumes and 9 000 mounts are 0.76 MB).
fn dense_pod(ns: &str, name: &str, image: &str, volumes: usize, mounts: usize) -> Value {
    let vols: Vec<Value> = (0..volumes)
        .map(|i| json!({"name": format!("v{i}"), "emptyDir": {}}))
        .collect();
    let mts: Vec<Value> = (0..mounts)
        .map(|i| json!({"name": format!("v{i}"), "mountPath": format!("C:\\m\\{i}")}))
        .collect();
    json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": ns},
        "spec": {
            "os": {"name": "windows"},
            "nodeSelector": {"kubernetes.io/os": "windows"},
            "tolerations": [{"key": "os", "operator": "Equal", "value": "windows",
                "effect": "NoSchedule"}],
            "containers": [{"name": "c", "image": image, "volumeMounts": mts}],
            "volumes": vols}})
}

/// The `micros` of winlint's admission log lines for the object `name`.
fn answer_micros(wh: &Webhook, name: &str) -> Vec<u64> {
    wh.log_text()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["fields"]["name"] == name || v["name"] == name)
        .filter_map(|v| {
            v["fields"]["micros"]
                .as_u64()
                .or_else(|| v["micros"].as_u64())
        })
        .collect()
}

fn a_dense_pod_is_judged_within_the_budget_on_update_and_dry_run() {
    let Some(c) = cluster() else { return };
    let wh = Webhook::start_with_policy(&c, None, &[], "Ignore");
    let ns = c.unique("dense");
    wh.namespace(&ns, &[]);

    let pod = dense_pod(&ns, "p", LTSC2022, 12_000, 9_000);
    assert!(pod.to_string().len() > 700_000, "the attack's size");
    c.create(&pod).ok();

    // `kubectl set image` to a 2019 image on 2022 nodes: denied, and the stored pod keeps its image.
    let set = c
        .kubectl(
            &["set", "image", "-n", &ns, "pod/p", &format!("c={LTSC2019}")],
            None,
        )
        .err();
    assert!(
        set.stderr.contains("denied the request") && set.stderr.contains("WIN502"),
        "{set:#?}"
    );
    let stored = c.get("pod", Some(&ns), "p").ok().json();
    assert_eq!(stored["spec"]["containers"][0]["image"], LTSC2022);

    // A larger pod (1.27 MB in the attack) created with a server-side dry run: denied too.
    let big = dense_pod(&ns, "q", LTSC2019, 20_000, 15_000);
    let dry = c.dry_run_create(&big).err();
    assert!(
        dry.stderr.contains("denied the request") && dry.stderr.contains("WIN502"),
        "{}",
        &dry.stderr[..dry.stderr.len().min(2000)]
    );

    // The budget: 80 % of the registration's timeoutSeconds (5 s).
    // (A debug build on a busy machine may still overtake the larger pod's /mutate, which
    // then admits it unmutated per `webhook.onError`: what /validate decides is what counts.)
    let log = wh.log_text();
    for name in ["p", "q"] {
        let micros = answer_micros(&wh, name);
        assert!(!micros.is_empty(), "{name} was answered: {log:.2000}");
        eprintln!("{name}: answers after {micros:?} µs");
        assert!(micros.iter().all(|&m| m < 4_000_000), "{name}: {micros:?}");
    }
}

/// The tests (libtest-mimic: a test that lacks an outside tool is reported ignored, with how
/// to get it; tests/skip_support).
fn main() {
    use k8s_support::skip_support::{run, test};
    run(vec![test(
        "a_dense_pod_is_judged_within_the_budget_on_update_and_dry_run",
        a_dense_pod_is_judged_within_the_budget_on_update_and_dry_run,
    )]);
}
