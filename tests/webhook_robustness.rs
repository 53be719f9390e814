//! "Never the reason pods cannot be created": bad input, slow clients, certificate rotation,
//! graceful shutdown, client certificates, concurrency, health and metrics — all against an
//! in-process `winlint serve` on 127.0.0.1 over real TLS. Every loop is bounded in count and
//! time; no assertion depends on how fast this machine is.

mod webhook_support;

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use webhook_support::*;

/// The server still answers a well-formed review on a new connection.
async fn assert_healthy(addr: std::net::SocketAddr, ca: &str) {
    let mut c = Client::connect(addr, ca, false).await;
    let (status, body) = c
        .post("/validate", windows_review("healthy"))
        .await
        .unwrap();
    assert_eq!(status, 200);
    parse_review(&body, "healthy");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_gets_clean_http_errors() {
    let c = certs();
    let server = start(args(&c)).await;
    let ca = c.tls.ca_pem.clone();
    for h2 in [false, true] {
        let mut client = Client::connect(server.addr, &ca, h2).await;
        let good = windows_review("u1");
        let truncated = good[..good.len() / 2].to_vec();
        let wrong_version = String::from_utf8(good.clone())
            .unwrap()
            .replace("admission.k8s.io/v1", "admission.k8s.io/v2")
            .into_bytes();
        let wrong_kind = String::from_utf8(good.clone())
            .unwrap()
            .replace("\"AdmissionReview\"", "\"Pod\"")
            .into_bytes();
        let cases: Vec<(&str, Vec<u8>)> = vec![
            ("garbage", vec![0xff, 0x00, 0x13, 0x37, b'{', b'x']),
            ("empty", Vec::new()),
            ("truncated", truncated),
            ("wrong apiVersion", wrong_version),
            ("wrong kind", wrong_kind),
            (
                "no request",
                br#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}"#.to_vec(),
            ),
        ];
        for (what, body) in cases {
            for path in ["/validate", "/mutate"] {
                let (status, text) = client.post(path, body.clone()).await.unwrap();
                assert_eq!(
                    status,
                    400,
                    "{what} on {path}: {}",
                    String::from_utf8_lossy(&text)
                );
                assert!(!text.is_empty(), "{what}: the 400 says why");
            }
        }
        // The connection survives bad requests.
        let (status, body) = client.post("/mutate", good).await.unwrap();
        assert_eq!(status, 200);
        parse_review(&body, "u1");
        // Unknown path and wrong method.
        assert_eq!(client.post("/nope", b"{}".to_vec()).await.unwrap().0, 404);
        assert_eq!(client.get("/validate").await.unwrap().0, 405);
    }
    // A 20 MB body: not an out-of-memory server. Its uid is readable, so it is answered per
    // webhook.onError (default allow, with a warning naming the limit), not with a 413 the API
    // server would map to its failurePolicy.
    for h2 in [false, true] {
        let mut client = Client::connect(server.addr, &ca, h2).await;
        let mut big = b"{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":\"big\",\"x\":\"".to_vec();
        big.resize(20 * 1024 * 1024, b'a');
        big.extend_from_slice(b"\"}}");
        match client.post("/validate", big).await {
            Ok((status, body)) => {
                assert_eq!(status, 200, "h2={h2}");
                let v = parse_review(&body, "big");
                assert_eq!(v["response"]["allowed"], true);
                assert!(
                    v["response"]["warnings"][0]
                        .as_str()
                        .unwrap()
                        .contains("--max-body-bytes"),
                    "{v}"
                );
            }
            // HTTP/1.1: the server may close the connection while the client is still sending.
            Err(e) => assert!(!h2, "h2 must get the answer: {e}"),
        }
    }
    assert_healthy(server.addr, &ca).await;
    let (_, metrics) = plain_get(server.metrics_addr.unwrap(), "/metrics").await;
    assert!(metrics.contains("outcome=\"bad_request\""), "{metrics}");
    assert!(metrics.contains("outcome=\"too_large\""), "{metrics}");
    server.shutdown();
    server.wait().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_of_several_mib_is_accepted() {
    let c = certs();
    let mut a = args(&c);
    // A body larger than the whole in-flight byte budget still gets through (alone).
    a.max_inflight_bytes = 1024 * 1024;
    let server = start(a).await;
    // An UPDATE carrying a 3 MiB object and a 3 MiB oldObject.
    let pad = "x".repeat(3 * 1024 * 1024);
    let mut v: serde_json::Value = serde_json::from_slice(&windows_review("large")).unwrap();
    v["request"]["operation"] = "UPDATE".into();
    v["request"]["object"]["metadata"]["annotations"] = serde_json::json!({"pad": pad});
    v["request"]["oldObject"] = v["request"]["object"].clone();
    let mut client = Client::connect(server.addr, &c.tls.ca_pem, false).await;
    let (status, body) = client
        .post("/validate", serde_json::to_vec(&v).unwrap())
        .await
        .unwrap();
    assert_eq!(status, 200);
    parse_review(&body, "large");
    server.shutdown();
    server.wait().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_headers_are_cut_off_and_the_server_stays_healthy() {
    let c = certs();
    let mut a = args(&c);
    a.header_timeout = 1.0;
    let server = start(a).await;
    let cfg = client_config(&[&c.tls.ca_pem], &[b"http/1.1"], None);
    let stream = tls_connect(server.addr, cfg).await.unwrap();
    let (mut rd, mut wr) = tokio::io::split(stream);
    let reader = tokio::spawn(async move {
        let mut buf = Vec::new();
        let _ = rd.read_to_end(&mut buf).await;
        buf
    });
    let head = b"POST /validate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nX-Padding: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n";
    let mut sent = 0;
    // One byte every 250 ms; the header never completes on its own (no final CRLF).
    for byte in head.iter() {
        if reader.is_finished() || wr.write_all(&[*byte]).await.is_err() {
            break;
        }
        let _ = wr.flush().await;
        sent += 1;
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let _ = tokio::time::timeout(Duration::from_secs(30), reader).await;
    assert!(
        sent < head.len(),
        "the server kept a connection whose headers trickled in for {sent} bytes"
    );
    assert_healthy(server.addr, &c.tls.ca_pem).await;
    server.shutdown();
    server.wait().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn silent_tls_clients_are_dropped() {
    let c = certs();
    let mut a = args(&c);
    a.handshake_timeout = 1.0;
    let server = start(a).await;
    // A TCP client that never starts the handshake does not block others.
    let mut idle = tokio::net::TcpStream::connect(server.addr).await.unwrap();
    assert_healthy(server.addr, &c.tls.ca_pem).await;
    let mut buf = [0u8; 16];
    let n = tokio::time::timeout(Duration::from_secs(30), idle.read(&mut buf))
        .await
        .expect("the server closes a connection that never handshakes");
    assert!(matches!(n, Ok(0) | Err(_)));
    server.shutdown();
    server.wait().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_versions_and_alpn() {
    let c = certs();
    let server = start(args(&c)).await;
    // TLS 1.2 is accepted, and so is h2.
    let mut roots = rustls::RootCertStore::empty();
    roots.add(der_of(&c.tls.ca_pem)).unwrap();
    let cfg12 = rustls::ClientConfig::builder_with_provider(std::sync::Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_protocol_versions(&[&rustls::version::TLS12])
    .unwrap()
    .with_root_certificates(roots)
    .with_no_client_auth();
    let s12 = tls_connect(server.addr, std::sync::Arc::new(cfg12))
        .await
        .unwrap();
    assert_eq!(
        s12.get_ref().1.protocol_version(),
        Some(rustls::ProtocolVersion::TLSv1_2)
    );
    let cfg = client_config(&[&c.tls.ca_pem], &[b"h2", b"http/1.1"], None);
    let s = tls_connect(server.addr, cfg).await.unwrap();
    assert_eq!(s.get_ref().1.alpn_protocol(), Some(&b"h2"[..]));
    assert_eq!(
        s.get_ref().1.protocol_version(),
        Some(rustls::ProtocolVersion::TLSv1_3)
    );
    // Close the raw connections first: an h2 connection whose client never speaks would hold
    // the graceful shutdown until --shutdown-timeout.
    drop((s12, s));
    server.shutdown();
    server.wait().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn certificate_rotation_without_failed_requests() {
    let c = certs();
    let mut a = args(&c);
    a.cert_reload_interval = 0.1;
    let server = start(a).await;
    let old_leaf = der_of(&c.tls.cert_pem);
    let new = winlint::manifests::generate_tls(&["127.0.0.1".into()], 30).unwrap();
    let new_leaf = der_of(&new.cert_pem);
    let trust = [c.tls.ca_pem.as_str(), new.ca_pem.as_str()];

    // Clients on established connections (HTTP/1.1 keep-alive and h2) keep sending.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut senders = Vec::new();
    for h2 in [false, true] {
        let alpn: &[&[u8]] = if h2 { &[b"h2"] } else { &[b"http/1.1"] };
        let mut client = Client::connect_with(server.addr, client_config(&trust, alpn, None), h2)
            .await
            .unwrap();
        let stop = stop.clone();
        senders.push(tokio::spawn(async move {
            let mut sent = 0u32;
            while !stop.load(std::sync::atomic::Ordering::SeqCst) && sent < 100_000 {
                let uid = format!("rot-{h2}-{sent}");
                let (status, body) = client
                    .post("/validate", windows_review(&uid))
                    .await
                    .unwrap_or_else(|e| panic!("request {sent} failed during rotation: {e}"));
                assert_eq!(status, 200);
                parse_review(&body, &uid);
                sent += 1;
                tokio::task::yield_now().await;
            }
            sent
        }));
    }
    // Rotate like cert-manager would (write new files, then rename over the old ones; the key
    // lands a moment after the certificate, so one poll may see a mismatched pair).
    let tmp_cert = c.dir.path().join("tls.crt.new");
    let tmp_key = c.dir.path().join("tls.key.new");
    std::fs::write(&tmp_cert, &new.cert_pem).unwrap();
    std::fs::write(&tmp_key, &new.key_pem).unwrap();
    std::fs::rename(&tmp_cert, &c.cert).unwrap();
    tokio::time::sleep(Duration::from_millis(150)).await;
    std::fs::rename(&tmp_key, &c.key).unwrap();

    // New connections see the new certificate (bounded wait).
    let mut seen_new = false;
    for _ in 0..300 {
        let s = tls_connect(server.addr, client_config(&trust, &[b"http/1.1"], None))
            .await
            .expect("handshakes keep working during rotation");
        let leaf = peer_cert(&s);
        assert!(leaf == old_leaf || leaf == new_leaf);
        if leaf == new_leaf {
            seen_new = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        seen_new,
        "new connections never saw the rotated certificate"
    );
    // A client that only trusts the new CA can connect and get answers.
    let mut fresh = Client::connect(server.addr, &new.ca_pem, false).await;
    let (status, _) = fresh
        .post("/validate", windows_review("fresh"))
        .await
        .unwrap();
    assert_eq!(status, 200);
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    for s in senders {
        let n = s.await.expect("no request failed during rotation");
        assert!(n > 0);
    }
    let (_, metrics) = plain_get(server.metrics_addr.unwrap(), "/metrics").await;
    assert!(
        metrics.contains("winlint_tls_reloads_total{result=\"ok\"}"),
        "{metrics}"
    );
    server.shutdown();
    server.wait().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_finishes_in_flight_requests() {
    let c = certs();
    let server = start(args(&c)).await;
    let metrics = server.metrics_addr.unwrap();
    assert_eq!(plain_get(metrics, "/readyz").await.0, 200);
    // A request in flight: headers and half of the body sent.
    let body = windows_review("inflight");
    let cfg = client_config(&[&c.tls.ca_pem], &[b"http/1.1"], None);
    let mut s = tls_connect(server.addr, cfg).await.unwrap();
    let head = format!(
        "POST /validate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    s.write_all(head.as_bytes()).await.unwrap();
    s.write_all(&body[..body.len() / 2]).await.unwrap();
    s.flush().await.unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    server.shutdown();
    // The rest of the body arrives after the shutdown began.
    tokio::time::sleep(Duration::from_millis(100)).await;
    s.write_all(&body[body.len() / 2..]).await.unwrap();
    s.flush().await.unwrap();
    let mut resp = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(30), s.read_to_end(&mut resp)).await;
    let text = String::from_utf8_lossy(&resp);
    assert!(text.starts_with("HTTP/1.1 200"), "{text}");
    let json_start = text.find("\r\n\r\n").unwrap() + 4;
    parse_review(&resp[json_start..], "inflight");
    tokio::time::timeout(Duration::from_secs(30), server.wait())
        .await
        .expect("the server stops once in-flight requests are done");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_certificates_when_client_ca_is_set() {
    let c = certs();
    // The API server's client certificate, from its own CA.
    let (client_ca, client_cert, client_key) = client_pki("kube-apiserver");
    let ca_file = c.dir.path().join("client-ca.crt");
    std::fs::write(&ca_file, &client_ca).unwrap();
    let mut a = args(&c);
    a.client_ca = Some(ca_file);
    let server = start(a).await;
    // Without a client certificate: refused.
    let anonymous = Client::connect_with(
        server.addr,
        client_config(&[&c.tls.ca_pem], &[b"http/1.1"], None),
        false,
    )
    .await;
    let refused = match anonymous {
        Err(_) => true,
        Ok(mut cl) => cl.post("/validate", windows_review("anon")).await.is_err(),
    };
    assert!(refused, "a client without a certificate was served");
    // With one signed by the client CA: served.
    let cfg = client_config(
        &[&c.tls.ca_pem],
        &[b"http/1.1"],
        Some((&client_cert, &client_key)),
    );
    let mut cl = Client::connect_with(server.addr, cfg, false).await.unwrap();
    let (status, body) = cl.post("/validate", windows_review("mtls")).await.unwrap();
    assert_eq!(status, 200);
    parse_review(&body, "mtls");
    server.shutdown();
    server.wait().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_clients_and_metrics() {
    let c = certs();
    let mut a = args(&c);
    a.max_concurrency = 4;
    let server = start(a).await;
    let mut tasks = Vec::new();
    for t in 0..16 {
        let (addr, ca) = (server.addr, c.tls.ca_pem.clone());
        tasks.push(tokio::spawn(async move {
            let mut cl = Client::connect(addr, &ca, t % 2 == 0).await;
            for i in 0..20 {
                let uid = format!("c{t}-{i}");
                let path = if i % 2 == 0 { "/mutate" } else { "/validate" };
                let (status, body) = cl.post(path, windows_review(&uid)).await.unwrap();
                assert_eq!(status, 200);
                parse_review(&body, &uid);
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    let m = server.metrics_addr.unwrap();
    assert_eq!(plain_get(m, "/healthz").await.0, 200);
    assert_eq!(plain_get(m, "/readyz").await.0, 200);
    let (status, text) = plain_get(m, "/metrics").await;
    assert_eq!(status, 200);
    for needle in [
        "winlint_admission_requests_total{endpoint=\"mutate\",outcome=\"patched\"} 160",
        "winlint_admission_request_duration_seconds_bucket{",
        "winlint_patches_total{rule=\"WIN001\"} 160",
        "winlint_findings_total{rule=\"WIN001\",severity=\"error\"} 160",
    ] {
        assert!(text.contains(needle), "{needle} missing from\n{text}");
    }
    server.shutdown();
    server.wait().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_keepalive_outlives_the_header_timeout_but_not_the_idle_timeout() {
    let c = certs();
    let mut a = args(&c);
    a.header_timeout = 0.5;
    a.idle_timeout = 3.0;
    let server = start(a).await;
    // Idle for longer than the header timeout: the pooled connection still works (the API
    // server reuses its connections).
    let mut client = Client::connect(server.addr, &c.tls.ca_pem, false).await;
    assert_eq!(
        client
            .post("/validate", windows_review("i1"))
            .await
            .unwrap()
            .0,
        200
    );
    tokio::time::sleep(Duration::from_millis(1200)).await;
    let (status, body) = client
        .post("/validate", windows_review("i2"))
        .await
        .unwrap();
    assert_eq!(status, 200);
    parse_review(&body, "i2");
    // A connection idle past the idle timeout is closed by the server (bounded wait).
    let cfg = client_config(&[&c.tls.ca_pem], &[b"http/1.1"], None);
    let mut s = tls_connect(server.addr, cfg).await.unwrap();
    let mut buf = [0u8; 64];
    let r = tokio::time::timeout(Duration::from_secs(30), s.read(&mut buf))
        .await
        .expect("the server closes an idle connection");
    assert!(matches!(r, Ok(0) | Err(_)), "{r:?}");
    server.shutdown();
    server.wait().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalled_body_gets_408() {
    let c = certs();
    let mut a = args(&c);
    a.request_timeout = 1.0;
    let server = start(a).await;
    let cfg = client_config(&[&c.tls.ca_pem], &[b"http/1.1"], None);
    let mut s = tls_connect(server.addr, cfg).await.unwrap();
    let body = windows_review("stalled");
    let head = format!(
        "POST /validate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    s.write_all(head.as_bytes()).await.unwrap();
    s.write_all(&body[..10]).await.unwrap();
    s.flush().await.unwrap();
    // The rest never comes.
    let mut resp = Vec::new();
    let mut buf = [0u8; 4096];
    for _ in 0..100 {
        match tokio::time::timeout(Duration::from_secs(30), s.read(&mut buf)).await {
            Ok(Ok(n)) if n > 0 => {
                resp.extend_from_slice(&buf[..n]);
                if resp.windows(4).any(|w| w == b"\r\n\r\n") {
                    break;
                }
            }
            _ => break,
        }
    }
    let text = String::from_utf8_lossy(&resp);
    assert!(text.starts_with("HTTP/1.1 408"), "{text}");
    assert_healthy(server.addr, &c.tls.ca_pem).await;
    server.shutdown();
    server.wait().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readiness_fails_during_the_shutdown_delay_while_requests_are_still_served() {
    let c = certs();
    let mut a = args(&c);
    a.shutdown_delay = 3.0;
    let server = start(a).await;
    let m = server.metrics_addr.unwrap();
    let mut client = Client::connect(server.addr, &c.tls.ca_pem, false).await;
    server.shutdown();
    let mut not_ready = false;
    for _ in 0..100 {
        if plain_get(m, "/readyz").await.0 == 503 {
            not_ready = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(not_ready, "/readyz kept saying ready after shutdown began");
    // Still answering on existing and new connections while endpoints drain.
    let (status, _) = client
        .post("/validate", windows_review("late"))
        .await
        .unwrap();
    assert_eq!(status, 200);
    assert_healthy(server.addr, &c.tls.ca_pem).await;
    tokio::time::timeout(Duration::from_secs(60), server.wait())
        .await
        .expect("stops after the delay");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_h2_connections_are_closed_after_the_idle_timeout() {
    let c = certs();
    let mut a = args(&c);
    a.idle_timeout = 1.0;
    let server = start(a).await;
    let mut client = Client::connect(server.addr, &c.tls.ca_pem, true).await;
    assert_eq!(
        client
            .post("/mutate", windows_review("h2"))
            .await
            .unwrap()
            .0,
        200
    );
    let mut closed = false;
    for _ in 0..300 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        if let Client::H2(s) = &client
            && s.is_closed()
        {
            closed = true;
            break;
        }
    }
    assert!(closed, "idle h2 connection never closed");
    server.shutdown();
    server.wait().await;
}
