//! Throughput and latency of `/validate` and `/mutate` for a typical Windows pod (the captured
//! IIS pod, 001/002) over TLS keep-alive, client and server in one process on this machine.
//! Not a pass/fail test (no timed assertions): run it explicitly and read the numbers:
//!
//! ```text
//! cargo test --release --test webhook_load -- --ignored --nocapture
//! ```

mod registry_support;
mod webhook_support;

use std::time::{Duration, Instant};

use webhook_support::*;

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "load measurement; run with --ignored --nocapture"]
async fn keepalive_latency_and_throughput() {
    let c = certs();
    let server = start(args(&c)).await;
    for (path, file) in [("/validate", "002.json"), ("/mutate", "001.json")] {
        let body = std::fs::read(captures_dir().join(file)).unwrap();
        // Latency: one keep-alive connection, sequential requests.
        let mut client = Client::connect(server.addr, &c.tls.ca_pem, false).await;
        for _ in 0..200 {
            client.post(path, body.clone()).await.unwrap();
        }
        let n = 5_000;
        let mut lat = Vec::with_capacity(n);
        for _ in 0..n {
            let t = Instant::now();
            let (status, _) = client.post(path, body.clone()).await.unwrap();
            lat.push(t.elapsed());
            assert_eq!(status, 200);
        }
        lat.sort();
        // Throughput: 4 keep-alive connections in parallel for a fixed number of requests.
        let per = 2_500;
        let t = Instant::now();
        let mut tasks = Vec::new();
        for _ in 0..4 {
            let (addr, ca, body) = (server.addr, c.tls.ca_pem.clone(), body.clone());
            tasks.push(tokio::spawn(async move {
                let mut cl = Client::connect(addr, &ca, false).await;
                for _ in 0..per {
                    assert_eq!(cl.post(path, body.clone()).await.unwrap().0, 200);
                }
            }));
        }
        for t in tasks {
            t.await.unwrap();
        }
        let secs = t.elapsed().as_secs_f64();
        println!(
            "{path}: body {} B; sequential p50 {:?} p99 {:?} ({} requests); 4 connections {:.0} req/s",
            body.len(),
            percentile(&lat, 0.50),
            percentile(&lat, 0.99),
            n,
            (4 * per) as f64 / secs
        );
    }
    server.shutdown();
    server.wait().await;
}

/// Cluster facts of `nodes` Nodes (10 pools: 4 ltsc2019, 4 ltsc2022 of which half tainted
/// `os=windows:NoSchedule`, 2 Linux, over 10 zones, as `k8s_support::create_scale_objects`
/// creates them on the real API server) and `namespaces` Namespaces enforcing Pod Security
/// baseline.
fn scale_facts(nodes: usize, namespaces: usize) -> std::sync::Arc<winlint::cluster::ClusterFacts> {
    use k8s_openapi::api::core::v1::{Namespace, Node};
    let nodes: Vec<Node> = (0..nodes)
        .map(|i| {
            let pool = i % 10;
            let (os, build) = match pool {
                0..4 => ("windows", "10.0.17763"),
                4..8 => ("windows", "10.0.20348"),
                _ => ("linux", ""),
            };
            let mut labels = serde_json::json!({"kubernetes.io/os": os,
                "kubernetes.io/arch": "amd64", "kubernetes.io/hostname": format!("scale-{i:05}"),
                "agentpool": format!("pool{pool}"),
                "topology.kubernetes.io/zone": format!("zone-{}", i / 10 % 10)});
            if !build.is_empty() {
                labels["node.kubernetes.io/windows-build"] = build.into();
            }
            let taints = if os == "windows" && pool % 2 == 0 {
                serde_json::json!([{"key": "os", "value": "windows", "effect": "NoSchedule"}])
            } else {
                serde_json::json!([])
            };
            serde_json::from_value(serde_json::json!({
                "metadata": {"name": format!("scale-{i:05}"), "labels": labels},
                "spec": {"taints": taints},
                "status": {"nodeInfo": {"operatingSystem": os, "architecture": "amd64",
                    "kernelVersion": if os == "windows" { format!("{build}.2582") } else { "6.1.0".into() },
                    "osImage": "x", "containerRuntimeVersion": "containerd://1.7.20",
                    "kubeletVersion": "v1.32.0", "kubeProxyVersion": "v1.32.0",
                    "machineID": "", "systemUUID": "", "bootID": ""}}}))
            .unwrap()
        })
        .collect();
    let nss: Vec<Namespace> = (0..namespaces)
        .map(|i| {
            serde_json::from_value(serde_json::json!({"metadata": {
                "name": format!("scale-ns-{i:05}"),
                "labels": {"team": format!("t{}", i % 50),
                    "pod-security.kubernetes.io/enforce": "baseline"}}}))
            .unwrap()
        })
        .collect();
    std::sync::Arc::new(winlint::cluster::ClusterFacts::derive(
        &nodes,
        &[],
        &nss,
        None,
    ))
}

/// `/validate` latency on every captured `/validate` review (testdata/admission), sequential
/// on one keep-alive connection, with the configured facts and then with the live facts of a
/// 5 000-node / 2 000-namespace cluster swapped in (the request path reads the snapshot only).
/// A measurement, no timed assertion:
///
/// ```text
/// cargo test --release --test webhook_load -- --ignored --nocapture cluster_facts
/// ```
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "load measurement; run with --ignored --nocapture"]
async fn validate_latency_with_and_without_cluster_facts() {
    let c = certs();
    let server = start(args(&c)).await;
    let mut bodies = Vec::new();
    for e in std::fs::read_dir(captures_dir()).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        if !name.ends_with(".json") || name.ends_with(".meta.json") {
            continue;
        }
        let meta = std::fs::read_to_string(p.with_extension("meta.json")).unwrap();
        if meta.contains("\"path\": \"/validate") {
            bodies.push(std::fs::read(&p).unwrap());
        }
    }
    assert!(!bodies.is_empty());
    let mut client = Client::connect(server.addr, &c.tls.ca_pem, false).await;
    let rounds = 200;
    let mut run = async |label: &str| {
        for b in &bodies {
            client.post("/validate", b.clone()).await.unwrap();
        }
        let mut lat = Vec::with_capacity(rounds * bodies.len());
        for _ in 0..rounds {
            for b in &bodies {
                let t = Instant::now();
                let (status, _) = client.post("/validate", b.clone()).await.unwrap();
                lat.push(t.elapsed());
                assert_eq!(status, 200);
            }
        }
        lat.sort();
        println!(
            "/validate, {label}: p50 {:?} p99 {:?} ({} requests over {} captured reviews)",
            percentile(&lat, 0.50),
            percentile(&lat, 0.99),
            lat.len(),
            bodies.len()
        );
    };
    run("configured facts").await;
    let (nodes, namespaces) = (5_000, 2_000);
    let t = Instant::now();
    server.state.apply_facts(scale_facts(nodes, namespaces));
    println!(
        "facts of {nodes} nodes / {namespaces} namespaces derived and applied in {:.2?}",
        t.elapsed()
    );
    run("live facts of 5 000 nodes / 2 000 namespaces").await;
    server.shutdown();
    server.wait().await;
}

/// The captured reviews (`testdata/admission`) with every image moved to `registry` (the
/// original reference as the repository path), by the path they were sent to.
fn captured_with_images_at(registry: &str) -> Vec<(String, Vec<u8>)> {
    fn rewrite(v: &mut serde_json::Value, registry: &str) {
        match v {
            serde_json::Value::Object(m) => {
                for (k, x) in m.iter_mut() {
                    match x {
                        serde_json::Value::String(s) if k == "image" => {
                            *s = format!("{registry}/{s}");
                        }
                        _ => rewrite(x, registry),
                    }
                }
            }
            serde_json::Value::Array(a) => a.iter_mut().for_each(|x| rewrite(x, registry)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    for e in std::fs::read_dir(captures_dir()).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        if !name.ends_with(".json") || name.ends_with(".meta.json") {
            continue;
        }
        let meta: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(p.with_extension("meta.json")).unwrap())
                .unwrap();
        let path = meta["path"].as_str().unwrap();
        let path = path.split('?').next().unwrap();
        let path = if path.starts_with("/mutate") {
            "/mutate"
        } else {
            "/validate"
        };
        let Ok(mut v) = serde_json::from_slice::<serde_json::Value>(&std::fs::read(&p).unwrap())
        else {
            continue;
        };
        rewrite(&mut v, registry);
        out.push((path.to_string(), serde_json::to_vec(&v).unwrap()));
    }
    out.sort();
    out
}

/// `registry.mode: background` against `off` on the captured reviews (issue 18: the registry
/// must not make the webhook slower): the same bodies, their images moved to a loopback fake
/// registry that answers every manifest with a Windows 20348 index. Background with the
/// registry up is measured after one warm-up pass (the facts are cached; later requests read
/// them); with the registry down every image stays a miss (heuristics, lookups refused and
/// backed off).
///
/// ```text
/// cargo test --release --test webhook_load -- --ignored --nocapture registry_modes
/// ```
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "load measurement; run with --ignored --nocapture"]
async fn latency_with_registry_modes() {
    let fake = registry_support::Fake::start(|_, _| registry_support::windows_20348_index());
    // A port nothing listens on: the registry is down.
    let down = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().to_string()
    };
    let rounds = 100;
    for (label, mode, registry) in [
        ("off", "off", fake.addr.clone()),
        (
            "background, registry up (facts cached)",
            "background",
            fake.addr.clone(),
        ),
        ("background, registry down", "background", down.clone()),
        ("off (again)", "off", fake.addr.clone()),
    ] {
        let bodies = captured_with_images_at(&registry);
        let c = certs();
        let cfg = c.dir.path().join("winlint.yaml");
        std::fs::write(&cfg, format!("registry:\n  mode: \"{mode}\"\n")).unwrap();
        let mut a = args(&c);
        a.config = Some(cfg);
        let server = start(a).await;
        let mut client = Client::connect(server.addr, &c.tls.ca_pem, false).await;
        // Warm-up: first sight of every image (background queues the lookups), then a pause
        // for them to land.
        for (path, b) in &bodies {
            client.post(path, b.clone()).await.unwrap();
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
        for (path, b) in &bodies {
            client.post(path, b.clone()).await.unwrap();
        }
        let mut lat: std::collections::BTreeMap<&str, Vec<Duration>> = Default::default();
        for _ in 0..rounds {
            for (path, b) in &bodies {
                let t = Instant::now();
                let (status, _) = client.post(path, b.clone()).await.unwrap();
                lat.entry(path.as_str()).or_default().push(t.elapsed());
                assert_eq!(status, 200);
            }
        }
        let metrics = server.state.metrics.render();
        let count = |name: &str| -> u64 {
            metrics
                .lines()
                .filter(|l| l.starts_with(name))
                .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
                .sum::<f64>() as u64
        };
        for (path, mut l) in lat {
            l.sort();
            println!(
                "{path}, registry {label}: p50 {:?} p99 {:?} ({} requests over {} captured reviews)",
                percentile(&l, 0.50),
                percentile(&l, 0.99),
                l.len(),
                l.len() / rounds
            );
        }
        println!(
            "  registry {label}: lookups {}, cache hits {}, failures {}",
            count("winlint_registry_lookups_total"),
            count("winlint_registry_cache_hits_total"),
            count("winlint_registry_failures_total")
        );
        server.shutdown();
        server.wait().await;
    }
}
