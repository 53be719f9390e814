//! Throughput and latency of `/validate` and `/mutate` for a typical Windows pod (the captured
//! IIS pod, 001/002) over TLS keep-alive, client and server in one process on this machine.
//! Not a pass/fail test (no timed assertions): run it explicitly and read the numbers:
//!
//! ```text
//! cargo test --release --test webhook_load -- --ignored --nocapture
//! ```

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
