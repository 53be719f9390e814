//! `winlint serve` reads registry credentials from a pull secret of its own namespace (issue 18)
//! behind a real kube-apiserver (tests/k8s_support) and a real `docker-registry` with htpasswd
//! Basic auth (tests/registry_support). The image's facts are readable only with the secret:
//! before it exists the lookup is refused and the pod is judged by its name; once it is created
//! (serve re-reads it by name) the fact is found and a single-build 17763 image is denied on
//! ltsc2022 nodes. serve runs as a user whose only right is `get` on that one Secret, as the
//! chart grants. The secret serves the namespace its `winlint.io/namespaces` annotation names
//! (issue 30): a pod of another namespace naming the same image is judged by the name, and its
//! answer says nothing the secret read. Skips (and says why) without `KUBEBUILDER_ASSETS` or the registry tools, except
//! under `CI=true`.

mod k8s_support;
mod registry_support;

use std::time::{Duration, Instant};

use base64::Engine;
use k8s_support::{SPARE_USERS, Webhook, cluster};
use registry_support::{Layout, Plat, Registry, tools};
use serde_json::{Value, json};

fn windows_pod(name: &str, ns: &str, image: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"os": {"name": "windows"},
            "nodeSelector": {"kubernetes.io/os": "windows"},
            "tolerations": [{"key": "os", "operator": "Equal", "value": "windows",
                "effect": "NoSchedule"}],
            "containers": [{"name": "app", "image": image}]}})
}

fn a_pull_secret_of_its_namespace_unlocks_the_facts_of_a_private_image() {
    let Some(c) = cluster() else { return };
    if tools().is_none() {
        return;
    }
    // A private registry holding one image: a single Windows 17763 manifest (the build only in
    // its config), which no ltsc2022 node runs.
    let reg = Registry::start(Some(("robot", "s3cret")));
    let mut layout = Layout::new();
    let single = layout.manifest(&Plat {
        os: "windows",
        arch: "amd64",
        version: Some("10.0.17763.5329"),
    });
    layout.tag(&single, "1809");
    reg.push(layout.dir.path(), "1809", "team/app", false);
    let image = format!("{}/team/app:1809", reg.host);

    // winlint's namespace, and a user with `get` on exactly the Secret `regcred` there.
    let own = c.unique("winlint");
    c.create_namespace(&own, &[]);
    let (user, token) = SPARE_USERS[0];
    c.apply(&json!({"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
         "metadata": {"name": "pull-secrets", "namespace": own},
         "rules": [{"apiGroups": [""], "resources": ["secrets"],
                    "resourceNames": ["regcred"], "verbs": ["get"]}]},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
         "metadata": {"name": "pull-secrets", "namespace": own},
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                     "name": "pull-secrets"},
         "subjects": [{"kind": "User", "name": user}]}]}))
        .ok();
    let kc = c.kubeconfig_for("pull-secrets", token);
    let t = Instant::now();
    while c
        .kubectl_as(
            &kc,
            &["auth", "can-i", "get", "secret/regcred", "-n", &own],
            None,
        )
        .stdout
        .trim()
        != "yes"
    {
        assert!(t.elapsed() < Duration::from_secs(60), "RBAC never applied");
        std::thread::sleep(Duration::from_millis(200));
    }
    assert_eq!(
        c.kubectl_as(&kc, &["auth", "can-i", "list", "secrets", "-n", &own], None)
            .stdout
            .trim(),
        "no",
        "serve needs no list of Secrets"
    );

    // The loopback registry is named in `metricRegistries`, so its failures carry its own
    // `registry` label (any registry not named is counted as `other`).
    let config = format!(
        "target:\n  windowsBuilds: [ltsc2022]\nregistry:\n  mode: sync\n  \
         syncBudgetMs: 1000\n  pullSecrets: [regcred]\n  metricRegistries: [\"{}\"]\n",
        reg.host
    );
    let kc_arg = kc.display().to_string();
    let wh = Webhook::start(
        &c,
        Some(&config),
        &[
            "--kubeconfig",
            &kc_arg,
            "--cluster-facts",
            "off",
            "--pull-secrets-namespace",
            &own,
            "--pull-secrets-interval",
            "0.5",
            "--metrics-listen",
            "127.0.0.1:0",
        ],
    );
    let apps = c.unique("apps");
    wh.namespace(&apps, &[]);
    let others = c.unique("others");
    wh.namespace(&others, &[]);

    // No secret yet: the registry refuses the anonymous lookup; the pod is judged by its name
    // (build unknown: admitted) and the refusal is counted.
    let out = c.dry_run_create(&windows_pod("before", &apps, &image));
    assert!(out.success, "admitted by the name: {}", out.stderr);
    let (_, metrics) = wh.get("/metrics");
    let refused = format!(
        "winlint_registry_failures_total{{registry=\"{}\",reason=\"unauthorized\"}}",
        reg.host
    );
    assert!(metrics.contains(&refused), "{metrics}");
    assert!(
        wh.log_text().contains("registry.pullSecrets: Secret"),
        "the missing secret is logged: {}",
        wh.log_text()
    );

    // The pull secret appears in winlint's namespace: the next reading uses it, the refusal is
    // forgotten, and the fact (a single 17763 image) denies the pod on ltsc2022 nodes.
    let auth = base64::engine::general_purpose::STANDARD.encode("robot:s3cret");
    let docker_config = json!({"auths": {(reg.host.clone()): {"auth": auth}}}).to_string();
    c.create(
        &json!({"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/dockerconfigjson",
        "metadata": {"name": "regcred", "namespace": own,
            "annotations": {"winlint.io/namespaces": apps}},
        "data": {".dockerconfigjson":
            base64::engine::general_purpose::STANDARD.encode(docker_config)}}),
    )
    .ok();
    let t = Instant::now();
    let denied = loop {
        let out = c.dry_run_create(&windows_pod("after", &apps, &image));
        if !out.success {
            break out.stderr;
        }
        // Below the minute a refusal is remembered: only the new credentials' generation can
        // have sent the lookup again in time.
        assert!(
            t.elapsed() < Duration::from_secs(30),
            "the pull secret never reached the lookups: {}",
            wh.log_text()
        );
        std::thread::sleep(Duration::from_millis(250));
    };
    assert!(
        denied.contains("WIN502") && denied.contains("registry:") && denied.contains("17763"),
        "{denied}"
    );
    assert!(
        wh.log_text()
            .contains("registry.pullSecrets: 1 credential(s) from regcred"),
        "{}",
        wh.log_text()
    );

    // Another team's namespace, which the secret does not serve: the same image is judged by
    // its name (admitted), and the answer names none of the facts the secret read.
    let out = c.dry_run_create(&windows_pod("other-team", &others, &image));
    assert!(out.success, "judged by the name: {}", out.stderr);
    let said = format!("{}{}", out.stdout, out.stderr);
    assert!(
        !said.contains("17763") && !said.contains("registry:"),
        "another namespace read the secret's facts: {said}"
    );
}

/// The tests (libtest-mimic: a test that lacks an outside tool is reported ignored, with how
/// to get it; tests/skip_support).
fn main() {
    use k8s_support::skip_support::{run, test};
    run(vec![test(
        "a_pull_secret_of_its_namespace_unlocks_the_facts_of_a_private_image",
        a_pull_secret_of_its_namespace_unlocks_the_facts_of_a_private_image,
    )]);
}
