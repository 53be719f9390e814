//! Certificates that do not churn, on a real kube-apiserver (tests/k8s_support): `serve
//! --certificates-secret` creates its CA and serving certificate in a Secret, sets the caBundle
//! of its webhook configurations, and re-issues the serving certificate before it expires
//! (here: a 6 s validity, so every ~4 s) while pods keep being admitted through the API server
//! (failurePolicy Fail: a refused handshake would fail a request): 0 failures. Skips without
//! `KUBEBUILDER_ASSETS`, except under `CI=true`.

mod k8s_support;

use k8s_support::{Webhook, cluster, eventually, metric};
use serde_json::{Value, json};

fn b64(v: &Value) -> Vec<u8> {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD
        .decode(v.as_str().unwrap_or_default())
        .unwrap_or_default()
}

#[test]
fn serve_manages_its_certificates_and_rotates_them_under_load() {
    let Some(c) = cluster() else { return };
    let wh = Webhook::watching(
        &c,
        None,
        None,
        &[
            "--webhook-configuration",
            "{name}",
            "--certificates-secret",
            "certs-{name}",
            "--certificates-namespace",
            "default",
            "--certificates-name",
            "127.0.0.1",
            "--certificates-validity",
            "6",
            "--certificates-check-interval",
            "0.3",
            "--cert-reload-interval",
            "0.2",
        ],
    );
    let name = format!("winlint-{}", wh.id);
    let secret_name = format!("certs-{name}");
    let secret = || c.get("secret", Some("default"), &secret_name).ok().json();
    // The Secret holds the CA, its key and the serving pair; the caBundles name that CA (the
    // registration of the harness carried another CA: the controller replaced it).
    let s = secret();
    let ca = b64(&s["data"]["ca.crt"]);
    for k in ["ca.key", "tls.crt", "tls.key"] {
        assert!(!b64(&s["data"][k]).is_empty(), "{k} missing: {s}");
    }
    eventually("the caBundles name the Secret's CA", || {
        for kind in [
            "validatingwebhookconfiguration",
            "mutatingwebhookconfiguration",
        ] {
            let v = c.get(kind, None, &name).ok().json();
            let got = b64(&v["webhooks"][0]["clientConfig"]["caBundle"]);
            if got != ca {
                return Err(format!("{kind} still has another caBundle"));
            }
        }
        Ok(())
    });

    // Pods admitted through the API server while the serving certificate rotates.
    let ns = c.unique("certs");
    wh.namespace(&ns, &[]);
    let issued = |s: &Value| s["metadata"]["annotations"]["winlint.io/serving-issued"].clone();
    let first = issued(&secret());
    let mut rotations = std::collections::BTreeSet::new();
    let mut failures = Vec::new();
    let mut n = 0;
    // At least 3 rotations (the certificate lives 6 s and is re-issued at 4 s).
    while rotations.len() < 3 {
        n += 1;
        assert!(n < 400, "no 3 rotations after {n} requests");
        let out = c.dry_run_create(&json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": format!("p{n}"), "namespace": ns},
            "spec": {"containers": [{"name": "a", "image": "busybox"}]}}));
        if !out.success {
            failures.push(out.stderr.clone());
        }
        let now = issued(&secret());
        if now != first {
            rotations.insert(now.to_string());
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {n} requests failed: {failures:?}",
        failures.len()
    );
    // The CA never changed: the caBundle held all along.
    assert_eq!(b64(&secret()["data"]["ca.crt"]), ca);
    // The controller writes the Secret, then the files the reload loop polls: the third
    // rotation seen in the Secret reaches the TLS config (and the counter) a moment later.
    let text = eventually("3 TLS reloads", || {
        let text = wh.get("/metrics").1;
        match metric(&text, "winlint_tls_reloads_total{result=\"ok\"}").unwrap_or(0.0) {
            r if r >= 3.0 => Ok(text),
            _ => Err(text),
        }
    });
    assert_eq!(
        metric(
            &text,
            "winlint_tls_handshake_errors_total{reason=\"unknown_ca\"}"
        ),
        None,
        "{text}"
    );
    eprintln!(
        "{n} requests admitted through {} rotations, 0 failures",
        rotations.len()
    );
}
