//! Certificates that do not churn, on a real kube-apiserver (tests/k8s_support): `serve
//! --certificates-secret` creates its CA and serving certificate in a Secret, sets the caBundle
//! of its webhook configurations, and re-issues the serving certificate before it expires
//! (here: a 6 s validity, so every ~4 s) while pods keep being admitted through the API server
//! (failurePolicy Fail: a refused handshake would fail a request): 0 failures. A Secret whose
//! ca.crt and ca.key no longer pair (one key edited) is reported on the next pass and left
//! alone: no caBundle that does not verify the served certificate, no re-issue loop; deleting
//! it repairs it. Skips without `KUBEBUILDER_ASSETS`, except under `CI=true`.

mod k8s_support;

use k8s_support::{Guard, Webhook, cluster, eventually, metric};
use serde_json::{Value, json};

fn b64(v: &Value) -> Vec<u8> {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD
        .decode(v.as_str().unwrap_or_default())
        .unwrap_or_default()
}

/// `serve` managing its certificates in the Secret `certs-{name}` of `default` (a pass every
/// 0.3 s) and the caBundles of its configurations, plus `extra` flags.
fn managed(c: &Guard, extra: &[&str]) -> Webhook {
    let mut args = vec![
        "--webhook-configuration",
        "{name}",
        "--certificates-secret",
        "certs-{name}",
        "--certificates-namespace",
        "default",
        "--certificates-name",
        "127.0.0.1",
        "--certificates-check-interval",
        "0.3",
        "--cert-reload-interval",
        "0.2",
    ];
    args.extend(extra);
    Webhook::watching(c, None, None, &args)
}

fn serve_manages_its_certificates_and_rotates_them_under_load() {
    let Some(c) = cluster() else { return };
    // A serving certificate of 6 s: re-issued every ~4 s.
    let wh = managed(&c, &["--certificates-validity", "6"]);
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

fn b64_encode(b: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(b)
}

/// The caBundles of both configurations named `name`.
fn ca_bundles(c: &Guard, name: &str) -> Vec<Vec<u8>> {
    [
        "validatingwebhookconfiguration",
        "mutatingwebhookconfiguration",
    ]
    .into_iter()
    .map(|kind| {
        b64(&c.get(kind, None, name).ok().json()["webhooks"][0]["clientConfig"]["caBundle"])
    })
    .collect()
}

/// The count of controller passes with `outcome` in `metrics`.
fn passes(metrics: &str, outcome: &str) -> f64 {
    metric(
        metrics,
        &format!("winlint_certificate_controller_passes_total{{outcome=\"{outcome}\"}}"),
    )
    .unwrap_or(0.0)
}

fn a_broken_certificate_secret_is_reported_at_once_and_left_alone() {
    let Some(c) = cluster() else { return };
    // The minute check of the caBundles never runs again after the start: what the metrics and
    // /readyz say below comes from the controller's own passes.
    let wh = managed(&c, &["--ca-bundle-check-interval", "3600"]);
    let name = format!("winlint-{}", wh.id);
    let secret_name = format!("certs-{name}");
    let secret = || c.get("secret", Some("default"), &secret_name).ok().json();
    let original = secret();
    let ca = b64(&original["data"]["ca.crt"]);
    let ca_key = b64(&original["data"]["ca.key"]);
    eventually("the caBundles name the Secret's CA", || {
        match ca_bundles(&c, &name).iter().all(|b| *b == ca) {
            true => Ok(()),
            false => Err("a caBundle differs".into()),
        }
    });
    let ns = c.unique("brokencerts");
    wh.namespace(&ns, &[]);
    let mut n = 0;
    let mut admitted = || {
        n += 1;
        let out = c.dry_run_create(&json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": format!("p{n}"), "namespace": ns},
            "spec": {"containers": [{"name": "a", "image": "busybox"}]}}));
        // failurePolicy Fail: a refused handshake fails the request.
        assert!(
            out.success,
            "the API server could not call the webhook: {}",
            out.stderr
        );
    };
    admitted();
    let other = winlint::certs::issue::new_ca(std::time::Duration::from_secs(3600)).unwrap();
    let set = |key: &str, value: &[u8]| {
        let patch = json!({"data": {key: b64_encode(value)}});
        c.kubectl(
            &[
                "patch",
                "secret",
                &secret_name,
                "-n",
                "default",
                "--type=merge",
                "-p",
                &patch.to_string(),
            ],
            None,
        )
        .ok();
    };
    // Wait for `passes` more passes of `outcome` after `metrics`; the metrics then.
    let more = |metrics: &str, outcome: &str, passes_more: f64| {
        let from = passes(metrics, outcome);
        eventually(&format!("{passes_more} more {outcome} passes"), || {
            let m = wh.get("/metrics").1;
            match passes(&m, outcome) >= from + passes_more {
                true => Ok(m),
                false => Err(m),
            }
        })
    };
    let served = || std::fs::read(wh.dir.join("tls.crt")).unwrap();
    // Wait for the broken Secret to be reported; the metrics then.
    let broken = || {
        eventually("the broken Secret reported", || {
            let m = wh.get("/metrics").1;
            match metric(&m, "winlint_certificates_secret_broken") {
                Some(1.0) => Ok(m),
                _ => Err(m),
            }
        })
    };

    // 1. ca.key replaced (ca.crt still verifies the serving certificate): reported on the
    // next pass, kept serving, nothing issued over many passes.
    let before = wh.get("/metrics").1;
    let issued = passes(&before, "issued") + passes(&before, "created");
    set("ca.key", other.key.as_bytes());
    let m = broken();
    let (code, ready) = wh.get("/readyz");
    assert_eq!(code, 200, "{ready}");
    assert!(ready.contains("ca.crt and ca.key do not pair"), "{ready}");
    assert!(
        ready.contains("still verifies under its ca.crt and is kept"),
        "{ready}"
    );
    let m = more(&m, "broken", 5.0);
    assert_eq!(passes(&m, "issued") + passes(&m, "created"), issued, "{m}");
    let rv = secret()["metadata"]["resourceVersion"].clone();
    assert_eq!(ca_bundles(&c, &name), [ca.clone(), ca.clone()]);
    admitted();

    // 2. The pair restored: usable again, said at once.
    set("ca.key", &ca_key);
    eventually("the Secret usable again", || {
        let m = wh.get("/metrics").1;
        let r = wh.get("/readyz").1;
        match metric(&m, "winlint_certificates_secret_broken") {
            Some(0.0) if !r.contains("certificates:") => Ok(()),
            _ => Err(format!("{r}\n{m}")),
        }
    });

    // 3. ca.crt replaced by another CA (the attack): its caBundle would not verify the served
    // certificate, so it is not injected; the leaf is not re-issued in a loop.
    let before = wh.get("/metrics").1;
    let issued = passes(&before, "issued") + passes(&before, "created");
    set("ca.crt", other.cert.as_bytes());
    let m = broken();
    let ready = wh.get("/readyz").1;
    assert!(ready.contains("ca.crt and ca.key do not pair"), "{ready}");
    assert!(ready.contains("nothing is changed"), "{ready}");
    let rv_tampered = secret()["metadata"]["resourceVersion"].clone();
    assert_ne!(rv_tampered, rv);
    let m = more(&m, "broken", 5.0);
    assert_eq!(passes(&m, "issued") + passes(&m, "created"), issued, "{m}");
    // The Secret untouched, the caBundles still the CA that verifies what is served.
    assert_eq!(secret()["metadata"]["resourceVersion"], rv_tampered);
    for b in ca_bundles(&c, &name) {
        assert_eq!(b, ca);
        winlint::certs::verify::verify(&b, &served(), "127.0.0.1").unwrap();
    }
    assert!(winlint::certs::verify::verify(other.cert.as_bytes(), &served(), "127.0.0.1").is_err());
    admitted();
    let log = wh.log_text();
    assert_eq!(
        log.matches("ca.crt and ca.key do not pair").count(),
        2,
        "logged once per problem, not per pass: {log}"
    );

    // 4. Meanwhile a stale caBundle re-applied: the controller does not overwrite it with the
    // Secret's ca.crt, and the mismatch shows on its next pass (not at the minute check).
    let vwc = "validatingwebhookconfiguration";
    let mut v = c.get(vwc, None, &name).ok().json();
    v["webhooks"][0]["clientConfig"]["caBundle"] = b64_encode(other.cert.as_bytes()).into();
    c.kubectl(&["replace", "-f", "-"], Some(&v.to_string()))
        .ok();
    let label = format!(
        "winlint_ca_bundle_mismatch{{configuration=\"ValidatingWebhookConfiguration/{name}\"}}"
    );
    eventually("the mismatch reported", || {
        let m = wh.get("/metrics").1;
        let r = wh.get("/readyz").1;
        match metric(&m, &label) {
            Some(1.0) if r.contains("the API server cannot verify this webhook") => Ok(()),
            _ => Err(format!("{r}\n{m}")),
        }
    });

    // 5. The operator deletes the Secret: a new CA, its caBundles, all clear.
    c.delete("secret", Some("default"), &secret_name).ok();
    let new_ca = eventually("the Secret recreated", || {
        let s = c.get("secret", Some("default"), &secret_name);
        match s.success {
            true => Ok(b64(&s.json()["data"]["ca.crt"])),
            false => Err(s.stderr),
        }
    });
    assert_ne!(new_ca, ca);
    eventually("all clear", || {
        let m = wh.get("/metrics").1;
        let r = wh.get("/readyz").1;
        let bundles = ca_bundles(&c, &name);
        match (
            metric(&m, "winlint_certificates_secret_broken"),
            metric(&m, &label),
        ) {
            (Some(0.0), Some(0.0))
                if r.starts_with("ready")
                    && !r.contains("certificates:")
                    && !r.contains("cannot verify")
                    && bundles.iter().all(|b| *b == new_ca) =>
            {
                Ok(())
            }
            _ => Err(format!("{r}\n{m}")),
        }
    });
    eventually("the new certificate served", || {
        winlint::certs::verify::verify(&new_ca, &served(), "127.0.0.1").map_err(|e| e.0)
    });
    eventually("admitted through the new caBundle", || {
        n += 1;
        let out = c.dry_run_create(&json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": format!("q{n}"), "namespace": ns},
            "spec": {"containers": [{"name": "a", "image": "busybox"}]}}));
        match out.success {
            true => Ok(()),
            false => Err(out.stderr),
        }
    });
}

/// The tests (libtest-mimic: a test that lacks an outside tool is reported ignored, with how
/// to get it; tests/skip_support).
fn main() {
    use k8s_support::skip_support::{run, test};
    run(vec![
        test(
            "serve_manages_its_certificates_and_rotates_them_under_load",
            serve_manages_its_certificates_and_rotates_them_under_load,
        ),
        test(
            "a_broken_certificate_secret_is_reported_at_once_and_left_alone",
            a_broken_certificate_secret_is_reported_at_once_and_left_alone,
        ),
    ]);
}
