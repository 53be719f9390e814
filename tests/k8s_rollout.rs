//! Rolling out behind a real kube-apiserver (tests/k8s_support): warn mode admits the pod the
//! default mode denies and the client (kubectl) prints the denial as `Warning:` lines, counted
//! in `winlint_would_deny_total`; and `serve --webhook-configuration` reads its own
//! registration and says when its caBundle does not verify the serving certificate (the state
//! in which the API server fails open). Skips without `KUBEBUILDER_ASSETS`, except under
//! `CI=true`.

mod k8s_support;

use k8s_support::{Guard, Node, Webhook, cluster, eventually, metric};
use serde_json::{Value, json};

const IIS_2019: &str = "mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2019";

/// A Windows pod the default target (ltsc2022 nodes) denies with WIN502.
fn pod(ns: &str, name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"os": {"name": "windows"},
            "nodeSelector": {"kubernetes.io/os": "windows"},
            "tolerations": [{"operator": "Exists"}],
            "containers": [{"name": "app", "image": IIS_2019}]}})
}

fn serve(c: &Guard, config: Option<&str>, extra: &[&str]) -> Webhook {
    Webhook::watching(c, None, config, extra)
}

#[test]
fn warn_mode_creates_the_pod_and_the_client_sees_the_warning() {
    let Some(c) = cluster() else { return };
    // A Windows node of the target's build: node rules judge, and deny, against what is seen.
    c.create_node(&Node::windows(&c.unique("w22"), "10.0.20348"));
    let wh = serve(&c, Some("webhook:\n  enforcement: warn\n"), &[]);
    let warn_ns = c.unique("warn");
    wh.namespace(&warn_ns, &[]);
    let created = c.create(&pod(&warn_ns, "iis"));
    assert!(created.success, "warn mode admits: {}", created.stderr);
    assert!(
        created
            .warnings
            .iter()
            .any(|w| w.starts_with("winlint: warn mode: admitted") && w.contains("would refuse it")),
        "{:?}",
        created.warnings
    );
    assert!(
        created
            .warnings
            .iter()
            .any(|w| w.starts_with("would deny: WIN502: ")),
        "{:?}",
        created.warnings
    );
    // Stored, not just answered.
    c.get("pod", Some(&warn_ns), "iis").ok();
    let text = wh.get("/metrics").1;
    let line = format!("winlint_would_deny_total{{rule=\"WIN502\",namespace=\"{warn_ns}\"}} 1");
    assert!(text.lines().any(|l| l == line), "{line} not in\n{text}");

    // A namespace that insists on deny is denied by the same webhook.
    let deny_ns = c.unique("deny");
    wh.namespace(&deny_ns, &[("winlint.io/enforcement", "deny")]);
    eventually("the namespace label reaches the webhook", || {
        let out = c.dry_run_create(&pod(&deny_ns, "iis"));
        if out.success {
            Err(format!("still admitted: {:?}", out.warnings))
        } else {
            Ok(())
        }
    });
    let denied = c.create(&pod(&deny_ns, "iis"));
    assert!(!denied.success, "{}", denied.stdout);
    assert!(denied.stderr.contains("WIN502"), "{}", denied.stderr);
}

#[test]
fn a_stale_ca_bundle_is_reported_in_the_log_the_metric_and_readyz() {
    let Some(c) = cluster() else { return };
    let wh = serve(
        &c,
        None,
        &[
            "--webhook-configuration",
            "{name}",
            "--ca-bundle-check-interval",
            "0.2",
        ],
    );
    let name = format!("winlint-{}", wh.id);
    let gauge = |kind: &str| {
        let text = wh.get("/metrics").1;
        metric(
            &text,
            &format!("winlint_ca_bundle_mismatch{{configuration=\"{kind}/{name}\"}}"),
        )
    };
    // As registered: the caBundle verifies the certificate.
    eventually("the first check", || {
        match gauge("ValidatingWebhookConfiguration") {
            Some(0.0) => Ok(()),
            other => Err(format!("{other:?}")),
        }
    });
    let (code, body) = wh.get("/readyz");
    assert!(
        code == 200 && !body.contains("cannot verify"),
        "{code} {body}"
    );

    // Register another CA, as a re-run that rotated the certificates once left it.
    let stale = winlint::manifests::generate_tls(&["127.0.0.1".into()], 1).unwrap();
    let b64 = base64_encode(stale.ca_pem.as_bytes());
    for kind in [
        "validatingwebhookconfiguration",
        "mutatingwebhookconfiguration",
    ] {
        let patch =
            json!([{"op": "replace", "path": "/webhooks/0/clientConfig/caBundle", "value": b64}]);
        c.kubectl(
            &[
                "patch",
                kind,
                &name,
                "--type=json",
                "-p",
                &patch.to_string(),
            ],
            None,
        )
        .ok();
    }
    eventually("the mismatch is seen", || {
        match (
            gauge("ValidatingWebhookConfiguration"),
            gauge("MutatingWebhookConfiguration"),
        ) {
            (Some(1.0), Some(1.0)) => Ok(()),
            other => Err(format!("{other:?}")),
        }
    });
    let (code, body) = wh.get("/readyz");
    assert_eq!(
        code, 200,
        "a stale registration is not the pod's fault: {body}"
    );
    assert!(
        body.contains("the API server cannot verify this webhook")
            && body.contains(&format!("ValidatingWebhookConfiguration/{name}")),
        "{body}"
    );
    assert!(
        wh.log_text()
            .contains("does not verify the serving certificate"),
        "{}",
        wh.log_text()
    );
    // The API server now refuses the handshake: the pod is admitted unchecked (fail open is
    // what failurePolicy Ignore would do; these registrations are Fail, so it is refused),
    // and serve counts the refused handshake.
    let ns = c.unique("stale");
    wh.namespace(&ns, &[]);
    let _ = c.dry_run_create(&pod(&ns, "iis"));
    eventually("the refused handshake is counted", || {
        let text = wh.get("/metrics").1;
        match metric(
            &text,
            "winlint_tls_handshake_errors_total{reason=\"unknown_ca\"}",
        ) {
            Some(v) if v >= 1.0 => Ok(()),
            other => Err(format!("{other:?}")),
        }
    });
}

fn base64_encode(b: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(b)
}
