//! Issue 30, item 1: the body-rate floor must never cut the API server's own requests. Under
//! 500 concurrent pod creates through a real kube-apiserver on 2 cores, the loaded API server
//! sent some webhook bodies more than a second after their headers; the floor (counted from
//! the headers then) cut them: 89 creates failed under `failurePolicy: Fail` and 3 pods were
//! admitted unevaluated. Here the same load runs through the test API server and every
//! admission is evaluated: no create fails for the webhook, and winlint counts no request it
//! did not evaluate (slow body, timeout, overload, abandoned). `WINLINT_LOAD_PODS` sets the
//! number of creates (500). Skips without `KUBEBUILDER_ASSETS`, except under `CI=true`.

mod k8s_support;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use futures::StreamExt;
use k8s_openapi::api::core::v1::Pod;
use k8s_support::{Webhook, cluster, env_or};
use kube::api::{Api, PostParams};
use serde_json::json;

/// A ~5 KB pod: half Windows (an IIS image, no selector: the webhook mutates it), half Linux.
fn pod(i: usize) -> Pod {
    let windows = i.is_multiple_of(2);
    let image = if windows {
        "mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2022"
    } else {
        "nginx:1.27"
    };
    let env: Vec<_> = (0..60)
        .map(|k| json!({"name": format!("SETTING_{k}"), "value": format!("value-{i}-{k}")}))
        .collect();
    serde_json::from_value(json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": format!("p{i}"), "labels": {"app": "load", "n": i.to_string()}},
        "spec": {"containers": [{"name": "app", "image": image, "env": env,
            "ports": [{"containerPort": 80}],
            "resources": {"limits": {"cpu": "500m", "memory": "512Mi"}}}]}}))
    .unwrap()
}

/// `winlint_admission_requests_total` per outcome, from the metrics text.
fn outcomes(metrics: &str) -> BTreeMap<String, f64> {
    let mut out = BTreeMap::new();
    for l in metrics
        .lines()
        .filter(|l| l.starts_with("winlint_admission_requests_total{"))
    {
        let outcome = l
            .split("outcome=\"")
            .nth(1)
            .and_then(|r| r.split('"').next())
            .unwrap_or("?");
        let n: f64 = l.rsplit(' ').next().unwrap().parse().unwrap();
        *out.entry(outcome.to_string()).or_default() += n;
    }
    out
}

fn concurrent_creates_through_the_api_server_are_all_evaluated() {
    let Some(c) = cluster() else { return };
    let n = env_or("WINLINT_LOAD_PODS", 500);
    let wh = Webhook::start_with_policy(&c, None, &["--metrics-listen", "127.0.0.1:0"], "Fail");
    let ns = c.unique("load");
    wh.namespace(&ns, &[]);
    let rt = k8s_support::runtime();
    let client = k8s_support::client(&rt, &c.kubeconfig);
    let pods: Api<Pod> = Api::namespaced(client, &ns);
    let started = Instant::now();
    let (failures, throttled) = rt.block_on(async {
        let results: Vec<(Option<String>, u32)> = futures::stream::iter(0..n)
            .map(|i| {
                let pods = pods.clone();
                async move {
                    let p = pod(i);
                    let mut throttled = 0;
                    loop {
                        match pods.create(&PostParams::default(), &p).await {
                            Ok(_) => return (None, throttled),
                            // The API server's own inflight limit (not the webhook): retried,
                            // as client-go does.
                            Err(kube::Error::Api(e)) if e.code == 429 && throttled < 50 => {
                                throttled += 1;
                                tokio::time::sleep(Duration::from_millis(200)).await;
                            }
                            Err(e) => return (Some(format!("p{i}: {e}")), throttled),
                        }
                    }
                }
            })
            .buffer_unordered(n)
            .collect()
            .await;
        let throttled: u32 = results.iter().map(|r| r.1).sum();
        let failures: Vec<String> = results.into_iter().filter_map(|r| r.0).collect();
        (failures, throttled)
    });
    let took = started.elapsed();
    eprintln!(
        "{n} concurrent creates in {took:.2?} ({:.0}/s), {throttled} retried after HTTP 429",
        n as f64 / took.as_secs_f64()
    );
    assert!(
        failures.is_empty(),
        "{} failed: {failures:#?}",
        failures.len()
    );
    let (_, metrics) = wh.get("/metrics");
    let by_outcome = outcomes(&metrics);
    eprintln!("winlint_admission_requests_total by outcome: {by_outcome:?}");
    for unevaluated in [
        "slow_body",
        "timeout",
        "overloaded",
        "abandoned",
        "too_large",
        "bad_request",
    ] {
        assert_eq!(
            by_outcome.get(unevaluated).copied().unwrap_or(0.0),
            0.0,
            "{unevaluated}: {by_outcome:?}"
        );
    }
    // Every create was judged by both webhooks.
    let judged: f64 = by_outcome.values().sum();
    assert!(
        judged >= 2.0 * n as f64,
        "{judged} < 2 x {n}: {by_outcome:?}"
    );
    // Spot-check what was stored: a Windows pod carries the webhook's pins.
    let stored = c.get("pod", Some(&ns), "p0").ok().json();
    assert_eq!(
        stored["spec"]["nodeSelector"]["kubernetes.io/os"], "windows",
        "{stored:#}"
    );
}

/// The tests (libtest-mimic: a test that lacks an outside tool is reported ignored, with how
/// to get it; tests/skip_support).
fn main() {
    use k8s_support::skip_support::{run, test};
    run(vec![test(
        "concurrent_creates_through_the_api_server_are_all_evaluated",
        concurrent_creates_through_the_api_server_are_all_evaluated,
    )]);
}
