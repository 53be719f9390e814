//! A broken webhook is visible: a client that does not trust the serving certificate (an API
//! server with a stale caBundle) is counted in `winlint_tls_handshake_errors_total{reason=
//! "unknown_ca"}` (and logged, at most once a minute).

mod webhook_support;

use webhook_support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_distrusts_the_certificate_is_counted() {
    let c = certs();
    let server = start(args(&c)).await;
    // Another CA: what a re-run of `winlint manifests --url` used to leave registered.
    let stale = winlint::manifests::generate_tls(&["127.0.0.1".into()], 1).unwrap();
    for _ in 0..3 {
        let r = tls_connect(server.addr, client_config(&[&stale.ca_pem], &[b"h2"], None)).await;
        assert!(
            r.is_err(),
            "the stale CA must not verify the serving certificate"
        );
    }
    // A trusting client still gets through.
    tls_connect(server.addr, client_config(&[&c.tls.ca_pem], &[b"h2"], None))
        .await
        .expect("trusted handshake");
    let m = server.metrics_addr.unwrap();
    let want = "winlint_tls_handshake_errors_total{reason=\"unknown_ca\"} 3";
    // The server reads the client's alert in the connection's own task: wait for the count
    // (bounded by a number of polls, not a time assertion).
    let mut text = String::new();
    for _ in 0..200 {
        text = plain_get(m, "/metrics").await.1;
        if text.lines().any(|l| l == want) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert!(text.lines().any(|l| l == want), "{want} not in\n{text}");
    server.shutdown();
    server.wait().await;
}
