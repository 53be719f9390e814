//! Rolling out behind a real kube-apiserver (tests/k8s_support): warn mode admits the pod the
//! default mode denies and the client (kubectl) prints the denial as `Warning:` lines, counted
//! in `winlint_would_deny_total`; and `serve --webhook-configuration` reads its own
//! registration and says when its caBundle does not verify the serving certificate (the state
//! in which the API server fails open); a rewritten `--config` switches warn to deny without a
//! restart, and `helm install` works after `winlint manifests --url` (issue 29). Skips without `KUBEBUILDER_ASSETS`, except under
//! `CI=true`.

mod k8s_support;

use std::path::Path;

use k8s_support::yaml_support::yaml_docs;
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

/// Issue 29 item 3: the enforcement changes without a restart. The webhook's `--config` file is
/// rewritten under the running process (as the kubelet updates a ConfigMap volume): the pod
/// warn mode admitted is then denied through the API server, and a broken file keeps deny.
fn rewriting_the_config_switches_warn_to_deny_without_a_restart() {
    let Some(c) = cluster() else { return };
    c.create_node(&Node::windows(&c.unique("w22"), "10.0.20348"));
    let mut wh = serve(
        &c,
        Some("webhook:\n  enforcement: warn\n"),
        &["--config-reload-interval", "0.2"],
    );
    let ns = c.unique("reload");
    wh.namespace(&ns, &[]);
    let admitted = c.dry_run_create(&pod(&ns, "iis"));
    assert!(admitted.success, "warn mode admits: {}", admitted.stderr);
    let pid = wh.pid();
    let file = wh.dir.join("winlint.yaml");
    // Written beside and renamed over, as an editor or the kubelet's atomic writer does.
    let replace = |text: &str| {
        let tmp = wh.dir.join("winlint.yaml.new");
        std::fs::write(&tmp, text).unwrap();
        std::fs::rename(&tmp, &file).unwrap();
    };
    replace("webhook:\n  enforcement: deny\n");
    let denied = eventually("the API server's verdict turns to deny", || {
        let out = c.dry_run_create(&pod(&ns, "iis"));
        if out.success {
            Err(format!("still admitted: {:?}", out.warnings))
        } else {
            Ok(out)
        }
    });
    assert!(denied.stderr.contains("WIN502"), "{}", denied.stderr);
    replace("webhook:\n  enforcement: [warn\n");
    eventually("the broken file is refused", || {
        let text = wh.get("/metrics").1;
        match metric(&text, "winlint_config_reload_total{result=\"error\"}") {
            Some(n) if n >= 1.0 => Ok(()),
            other => Err(format!("{other:?}")),
        }
    });
    let still = c.dry_run_create(&pod(&ns, "iis"));
    assert!(!still.success, "deny stays in force: {:?}", still.warnings);
    assert!(
        wh.running() && wh.pid() == pid,
        "the same process throughout"
    );
    let log = wh.log_text();
    assert!(
        // The parser meets the unclosed sequence at the end of the text, line 3.
        log.contains("configuration not reloaded") && log.contains("winlint.yaml:3: invalid YAML"),
        "{log}"
    );
}

/// Issue 29 item 3: `winlint manifests --url` (trying winlint with `serve` outside the cluster)
/// registers configurations of its own name, so that `helm install winlint` afterwards does
/// not fail on objects Helm does not own; a configuration of the chart's name does make it
/// fail (the check is real). helm's server-side dry run: the API server is asked, nothing is
/// installed. Needs helm (`$WINLINT_HELM`): skips locally without it, fails under `CI=true`.
fn helm_install_works_after_the_dev_registration() {
    let Some(c) = cluster() else { return };
    let helm = std::env::var("WINLINT_HELM").unwrap_or_else(|_| "helm".into());
    let has_helm = std::process::Command::new(&helm)
        .arg("version")
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        has_helm || std::env::var("CI").as_deref() != Ok("true"),
        "CI=true and helm ({helm}) cannot run (WINLINT_HELM)"
    );
    if !has_helm {
        eprintln!(
            "skipped: helm not found (bash charts/winlint/ci/install-helm.sh DIR; or set WINLINT_HELM)"
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_winlint"))
        .args(["manifests", "--url", "https://127.0.0.1:9", "--cert-dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Registered as printed (names kept), narrowed to a label no namespace has: parallel
    // tests' pods never meet this URL.
    let id = c.unique("dev");
    let narrow = |mut doc: Value| {
        for w in doc["webhooks"].as_array_mut().unwrap() {
            w["namespaceSelector"]["matchExpressions"]
                .as_array_mut()
                .unwrap()
                .push(
                    json!({"key": "envtest.winlint.io/webhook", "operator": "In",
                    "values": [id]}),
                );
        }
        doc
    };
    let docs: Vec<Value> = yaml_docs(&String::from_utf8(out.stdout).unwrap())
        .into_iter()
        .map(narrow)
        .collect();
    assert_eq!(docs.len(), 2);
    for d in &docs {
        assert_eq!(d["metadata"]["name"], winlint::manifests::DEV_NAME, "{d}");
        c.apply(d).ok();
    }
    let dry_run = || {
        std::process::Command::new(&helm)
            .args(["install", "winlint"])
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("charts/winlint"))
            .args(["--namespace", winlint::manifests::DEFAULT_NAMESPACE])
            .args(["--dry-run=server", "--kubeconfig"])
            .arg(&c.kubeconfig)
            .output()
            .unwrap()
    };
    let ok = dry_run();
    assert!(
        ok.status.success(),
        "helm install after the dev registration: {}",
        String::from_utf8_lossy(&ok.stderr)
    );
    // The control: what the dev registration was named before (the chart's name).
    let mut clash = docs[1].clone();
    clash["metadata"]["name"] = winlint::manifests::NAME.into();
    c.apply(&clash).ok();
    let failed = dry_run();
    c.delete(
        "validatingwebhookconfiguration",
        None,
        winlint::manifests::NAME,
    );
    for d in &docs {
        c.delete(
            &d["kind"].as_str().unwrap().to_lowercase(),
            None,
            winlint::manifests::DEV_NAME,
        );
    }
    let stderr = String::from_utf8_lossy(&failed.stderr);
    assert!(
        !failed.status.success() && stderr.contains("exists"),
        "a configuration of the chart's name makes helm install fail: {stderr}"
    );
}

/// The tests (libtest-mimic: a test that lacks an outside tool is reported ignored, with how
/// to get it; tests/skip_support).
fn main() {
    use k8s_support::skip_support::{run, test};
    run(vec![
        test(
            "warn_mode_creates_the_pod_and_the_client_sees_the_warning",
            warn_mode_creates_the_pod_and_the_client_sees_the_warning,
        ),
        test(
            "a_stale_ca_bundle_is_reported_in_the_log_the_metric_and_readyz",
            a_stale_ca_bundle_is_reported_in_the_log_the_metric_and_readyz,
        ),
        test(
            "rewriting_the_config_switches_warn_to_deny_without_a_restart",
            rewriting_the_config_switches_warn_to_deny_without_a_restart,
        ),
        test(
            "helm_install_works_after_the_dev_registration",
            helm_install_works_after_the_dev_registration,
        ),
    ]);
}
