//! `winlint manifests`: the output parses as Kubernetes objects (k8s-openapi types, with no
//! field the types do not know), the webhook rules and selectors are as specified, and the
//! caBundle verifies the serving certificate it ships with.

use std::sync::Arc;

use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Secret, Service, ServiceAccount};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding};
use rustls::client::danger::ServerCertVerifier;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls_pki_types::pem::PemObject;
use serde::de::DeserializeOwned;
use serde_json::Value;
use winlint::manifests::{ManifestsArgs, render};

#[path = "yaml_support/mod.rs"]
mod yaml_support;
use yaml_support::yaml_docs;

/// Deserialize as `T` and check that nothing was dropped (k8s-openapi ignores unknown fields,
/// so a misspelt field would otherwise pass silently).
fn typed<T: DeserializeOwned + serde::Serialize>(v: &Value) -> T {
    let t: T = serde_json::from_value(v.clone())
        .unwrap_or_else(|e| panic!("{} does not parse: {e}", v["kind"]));
    let back = serde_json::to_value(&t).unwrap();
    assert_eq!(
        strip_nulls(&back),
        strip_nulls(v),
        "{} has fields its type does not know",
        v["kind"]
    );
    t
}

fn strip_nulls(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k.clone(), strip_nulls(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(strip_nulls).collect()),
        other => other.clone(),
    }
}

/// Verify that `ca_pem` (the caBundle) validates `cert_pem` for `name`, as the API server does.
fn verify(ca_pem: &[u8], cert_pem: &[u8], name: &str) -> Result<(), rustls::Error> {
    let mut roots = rustls::RootCertStore::empty();
    for c in CertificateDer::pem_slice_iter(ca_pem) {
        roots.add(c.unwrap()).unwrap();
    }
    let verifier = rustls::client::WebPkiServerVerifier::builder_with_provider(
        Arc::new(roots),
        Arc::new(rustls::crypto::ring::default_provider()),
    )
    .build()
    .unwrap();
    let chain: Vec<CertificateDer> = CertificateDer::pem_slice_iter(cert_pem)
        .map(|c| c.unwrap())
        .collect();
    verifier
        .verify_server_cert(
            &chain[0],
            &chain[1..],
            &ServerName::try_from(name.to_string()).unwrap(),
            &[],
            UnixTime::now(),
        )
        .map(|_| ())
}

fn find<'a>(docs: &'a [Value], kind: &str) -> &'a Value {
    docs.iter()
        .find(|d| d["kind"] == kind)
        .unwrap_or_else(|| panic!("no {kind} in the manifests"))
}

#[test]
fn in_cluster_manifests_parse_and_are_as_specified() {
    let mut args = ManifestsArgs::new();
    args.namespace = "winlint-system".into();
    let text = render(&args).unwrap();
    let docs = yaml_docs(&text);
    let kinds: Vec<&str> = docs.iter().map(|d| d["kind"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        [
            "Namespace",
            "ServiceAccount",
            "ClusterRole",
            "ClusterRoleBinding",
            "ConfigMap",
            "Secret",
            "Deployment",
            "Service",
            "PodDisruptionBudget",
            "MutatingWebhookConfiguration",
            "ValidatingWebhookConfiguration"
        ]
    );
    let ns: Namespace = typed(find(&docs, "Namespace"));
    assert_eq!(ns.metadata.name.as_deref(), Some("winlint-system"));
    let _: ServiceAccount = typed(find(&docs, "ServiceAccount"));
    // The live cluster facts: get/list/watch on exactly nodes, namespaces and runtimeclasses,
    // bound to the webhook's ServiceAccount.
    let role: ClusterRole = typed(find(&docs, "ClusterRole"));
    let mut granted: Vec<(String, String, Vec<String>)> = role
        .rules
        .clone()
        .unwrap()
        .into_iter()
        .flat_map(|r| {
            let groups = r.api_groups.unwrap();
            let verbs = r.verbs.clone();
            r.resources.unwrap().into_iter().flat_map(move |res| {
                let verbs = verbs.clone();
                groups
                    .clone()
                    .into_iter()
                    .map(move |g| (g, res.clone(), verbs.clone()))
            })
        })
        .collect();
    granted.sort();
    let rw = |g: &str, r: &str| {
        (
            g.to_string(),
            r.to_string(),
            vec!["get".to_string(), "list".into(), "watch".into()],
        )
    };
    let get = |r: &str| {
        (
            "admissionregistration.k8s.io".to_string(),
            r.to_string(),
            vec!["get".to_string()],
        )
    };
    assert_eq!(
        granted,
        [
            rw("", "namespaces"),
            rw("", "nodes"),
            get("mutatingwebhookconfigurations"),
            get("validatingwebhookconfigurations"),
            rw("node.k8s.io", "runtimeclasses"),
            (
                "windows.k8s.io".to_string(),
                "gmsacredentialspecs".to_string(),
                vec!["list".to_string(), "watch".into()]
            )
        ]
    );
    // Only its own webhook configurations, by name.
    let own = role.rules.as_ref().unwrap().iter().find(|r| {
        r.api_groups.as_deref() == Some(&["admissionregistration.k8s.io".to_string()][..])
    });
    assert_eq!(
        own.and_then(|r| r.resource_names.clone()),
        Some(vec!["winlint".to_string()])
    );
    let binding: ClusterRoleBinding = typed(find(&docs, "ClusterRoleBinding"));
    assert_eq!(binding.role_ref.name, role.metadata.name.unwrap());
    let subject = &binding.subjects.unwrap()[0];
    assert_eq!(
        (
            subject.kind.as_str(),
            subject.name.as_str(),
            subject.namespace.as_deref()
        ),
        ("ServiceAccount", "winlint", Some("winlint-system"))
    );
    let _: Service = typed(find(&docs, "Service"));
    let _: PodDisruptionBudget = typed(find(&docs, "PodDisruptionBudget"));

    // The ConfigMap's winlint.yaml is a valid config.
    let cm: ConfigMap = typed(find(&docs, "ConfigMap"));
    let cfg_text = &cm.data.unwrap()["winlint.yaml"];
    winlint::config::Config::from_yaml(cfg_text, "winlint.yaml").unwrap();

    // The Deployment: 2 replicas on Linux nodes, hardened, probes on the health endpoints.
    let dep: Deployment = typed(find(&docs, "Deployment"));
    let spec = dep.spec.unwrap();
    assert_eq!(spec.replicas, Some(2));
    let pod = spec.template.spec.unwrap();
    assert_eq!(pod.service_account_name.as_deref(), Some("winlint"));
    assert_eq!(pod.automount_service_account_token, Some(true));
    assert_eq!(pod.node_selector.unwrap()["kubernetes.io/os"], "linux");
    let affinity = pod.affinity.unwrap();
    assert!(affinity.pod_anti_affinity.is_some());
    // Only nodes whose architecture the image has.
    let arch = &affinity
        .node_affinity
        .unwrap()
        .required_during_scheduling_ignored_during_execution
        .unwrap()
        .node_selector_terms[0]
        .match_expressions
        .clone()
        .unwrap()[0];
    assert_eq!(
        (arch.key.as_str(), arch.operator.as_str()),
        ("kubernetes.io/arch", "In")
    );
    assert_eq!(arch.values.clone().unwrap(), ["amd64", "arm64"]);
    let psc = pod.security_context.unwrap();
    assert_eq!(psc.run_as_non_root, Some(true));
    assert_eq!(psc.seccomp_profile.unwrap().type_, "RuntimeDefault");
    let c = &pod.containers[0];
    let sc = c.security_context.clone().unwrap();
    assert_eq!(sc.read_only_root_filesystem, Some(true));
    assert_eq!(sc.allow_privilege_escalation, Some(false));
    assert_eq!(sc.capabilities.unwrap().drop.unwrap(), ["ALL"]);
    let probe_path = |p: &Option<k8s_openapi::api::core::v1::Probe>| {
        p.clone().unwrap().http_get.unwrap().path.unwrap()
    };
    assert_eq!(probe_path(&c.readiness_probe), "/readyz");
    assert_eq!(probe_path(&c.liveness_probe), "/healthz");
    assert!(c.resources.clone().unwrap().requests.is_some());
    let a = c.args.clone().unwrap();
    assert_eq!(a[0], "serve");
    for flag in ["--tls-cert", "--tls-key", "--config", "--metrics-listen"] {
        assert!(a.iter().any(|x| x == flag), "{flag} missing from {a:?}");
    }
    assert!(!a.iter().any(|x| x == "--cluster-facts"), "{a:?}");

    // Webhooks.
    let m: MutatingWebhookConfiguration = typed(find(&docs, "MutatingWebhookConfiguration"));
    let v: ValidatingWebhookConfiguration = typed(find(&docs, "ValidatingWebhookConfiguration"));
    let mws = m.webhooks.unwrap();
    let vws = v.webhooks.unwrap();
    // One webhook each, for every namespace: the namespace's labels (Pod Security level,
    // winlint.io/default-os) come from the cluster facts, not from per-namespace webhooks.
    let path = |cc: &k8s_openapi::api::admissionregistration::v1::WebhookClientConfig| {
        cc.service.clone().unwrap().path.unwrap()
    };
    assert_eq!(
        mws.iter()
            .map(|w| (w.name.clone(), path(&w.client_config)))
            .collect::<Vec<_>>(),
        [("mutate.winlint.io".to_string(), "/mutate".to_string())]
    );
    assert_eq!(
        vws.iter()
            .map(|w| (w.name.clone(), path(&w.client_config)))
            .collect::<Vec<_>>(),
        [("validate.winlint.io".to_string(), "/validate".to_string())]
    );
    let mw = &mws[0];
    let vw = &vws[0];
    assert_eq!(mw.reinvocation_policy.as_deref(), Some("IfNeeded"));
    let mrules = mw.rules.clone().unwrap();
    assert_eq!(mrules.len(), 1);
    assert_eq!(mrules[0].operations.clone().unwrap(), ["CREATE"]);
    assert_eq!(mrules[0].resources.clone().unwrap(), ["pods"]);
    let vrules = vw.rules.clone().unwrap();
    let vres: Vec<String> = vrules
        .iter()
        .flat_map(|r| r.resources.clone().unwrap())
        .collect();
    for r in [
        "pods",
        "pods/ephemeralcontainers",
        "deployments",
        "statefulsets",
        "daemonsets",
        "replicasets",
        "jobs",
        "cronjobs",
    ] {
        assert!(vres.iter().any(|x| x == r), "validating webhook misses {r}");
    }
    for r in &vrules {
        assert_eq!(r.operations.clone().unwrap(), ["CREATE", "UPDATE"]);
    }
    let secret: Secret = typed(find(&docs, "Secret"));
    let data = secret.data.unwrap();
    let cert = &data["tls.crt"].0;
    for (path, cc, sel, side, timeout, policy, mp) in [
        (
            "/mutate",
            &mw.client_config,
            &mw.namespace_selector,
            &mw.side_effects,
            mw.timeout_seconds,
            &mw.failure_policy,
            &mw.match_policy,
        ),
        (
            "/validate",
            &vw.client_config,
            &vw.namespace_selector,
            &vw.side_effects,
            vw.timeout_seconds,
            &vw.failure_policy,
            &vw.match_policy,
        ),
    ] {
        assert_eq!(side, "None");
        assert!(timeout.unwrap() <= 5);
        assert_eq!(policy.as_deref(), Some("Ignore"));
        assert_eq!(mp.as_deref(), Some("Equivalent"));
        let svc = cc.service.clone().unwrap();
        assert_eq!(svc.path.as_deref(), Some(path));
        assert_eq!(svc.namespace, "winlint-system");
        let exprs = sel.clone().unwrap().match_expressions.unwrap();
        let not_in = |key: &str| -> Vec<String> {
            exprs
                .iter()
                .find(|e| e.key == key && e.operator == "NotIn")
                .and_then(|e| e.values.clone())
                .unwrap_or_default()
        };
        let names = not_in("kubernetes.io/metadata.name");
        assert!(names.contains(&"kube-system".to_string()));
        assert!(names.contains(&"winlint-system".to_string()));
        assert_eq!(not_in("winlint.io/ignore"), ["true"]);
        // The caBundle verifies the serving certificate for the Service's name.
        let ca = &cc.ca_bundle.clone().unwrap().0;
        verify(ca, cert, &format!("{}.winlint-system.svc", svc.name))
            .expect("caBundle verifies the serving certificate");
        assert!(verify(ca, cert, "elsewhere.example").is_err());
    }
    // The webhook's own namespace is labelled as exempt too.
    assert_eq!(
        ns.metadata.labels.unwrap()["winlint.io/ignore"],
        "true",
        "belt and braces: the namespace is also excluded by label"
    );
}

/// `--cluster-facts off`: no RBAC, no ServiceAccount token, and `serve --cluster-facts off`.
/// One replica gets no PodDisruptionBudget: minAvailable 1 would forbid its eviction and stall
/// every node drain.
#[test]
fn a_single_replica_gets_no_pdb() {
    let mut args = ManifestsArgs::new();
    args.replicas = 1;
    let docs = yaml_docs(&render(&args).unwrap());
    assert!(docs.iter().all(|d| d["kind"] != "PodDisruptionBudget"));
    let dep: Deployment = typed(find(&docs, "Deployment"));
    assert_eq!(dep.spec.unwrap().replicas, Some(1));
}

#[test]
fn cluster_facts_off_drops_the_rbac() {
    let mut args = ManifestsArgs::new();
    args.cluster_facts = winlint::server::FactsMode::Off;
    let docs = yaml_docs(&render(&args).unwrap());
    assert!(
        docs.iter()
            .all(|d| !d["kind"].as_str().unwrap().starts_with("ClusterRole"))
    );
    let dep: Deployment = typed(find(&docs, "Deployment"));
    let pod = dep.spec.unwrap().template.spec.unwrap();
    assert_eq!(pod.automount_service_account_token, Some(false));
    let a = pod.containers[0].args.clone().unwrap();
    let i = a
        .iter()
        .position(|x| x == "--cluster-facts")
        .expect("--cluster-facts");
    assert_eq!(a[i + 1], "off");
}

/// `registry.pullSecrets` (with lookups on): a Role with `get` on exactly those Secrets of
/// winlint's namespace, the token mounted, the namespace passed; with lookups off, nothing.
#[test]
fn pull_secrets_get_a_role_on_exactly_their_names() {
    use k8s_openapi::api::rbac::v1::{Role, RoleBinding};
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("winlint.yaml");
    let mut args = ManifestsArgs::new();
    args.cluster_facts = winlint::server::FactsMode::Off;
    args.namespace = "wl".into();
    args.config = Some(cfg.clone());
    std::fs::write(
        &cfg,
        "registry:\n  mode: background\n  pullSecrets: [regcred, acr]\n",
    )
    .unwrap();
    let docs = yaml_docs(&render(&args).unwrap());
    let role: Role = typed(find(&docs, "Role"));
    assert_eq!(role.metadata.namespace.as_deref(), Some("wl"));
    let rules = role.rules.unwrap();
    assert_eq!(rules.len(), 1);
    assert_eq!(
        rules[0].resources.as_deref(),
        Some(&["secrets".to_string()][..])
    );
    assert_eq!(
        rules[0].resource_names.as_deref(),
        Some(&["regcred".to_string(), "acr".to_string()][..])
    );
    assert_eq!(rules[0].verbs, vec!["get"]);
    let rb: RoleBinding = typed(find(&docs, "RoleBinding"));
    assert_eq!(rb.role_ref.name, "winlint-pull-secrets");
    let dep: Deployment = typed(find(&docs, "Deployment"));
    let pod = dep.spec.unwrap().template.spec.unwrap();
    assert_eq!(pod.automount_service_account_token, Some(true));
    let a = pod.containers[0].args.clone().unwrap();
    let i = a
        .iter()
        .position(|x| x == "--pull-secrets-namespace")
        .expect("--pull-secrets-namespace");
    assert_eq!(a[i + 1], "wl");

    std::fs::write(
        &cfg,
        "registry:\n  mode: \"off\"\n  pullSecrets: [regcred]\n",
    )
    .unwrap();
    let docs = yaml_docs(&render(&args).unwrap());
    assert!(docs.iter().all(|d| d["kind"] != "Role"));
    std::fs::write(&cfg, "registry:\n  pullSecrets: [Not_A_Name]\n").unwrap();
    let e = render(&args).unwrap_err().to_string();
    assert!(e.contains("Not_A_Name"), "{e}");
}

#[test]
fn each_run_generates_a_fresh_ca() {
    let a = render(&ManifestsArgs::new()).unwrap();
    let b = render(&ManifestsArgs::new()).unwrap();
    let ca = |t: &str| {
        yaml_docs(t).iter().find(|d| d["kind"] == "Secret").unwrap()["data"]["ca.crt"].clone()
    };
    assert_ne!(ca(&a), ca(&b));
}

#[test]
fn config_file_goes_into_the_configmap_and_bad_ones_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("winlint.yaml");
    std::fs::write(
        &good,
        "target:\n  kubernetesVersion: \"1.32\"\n  windowsBuilds: [ltsc2019, ltsc2022]\n",
    )
    .unwrap();
    let mut args = ManifestsArgs::new();
    args.config = Some(good);
    let docs = yaml_docs(&render(&args).unwrap());
    let cm = find(&docs, "ConfigMap");
    assert!(
        cm["data"]["winlint.yaml"]
            .as_str()
            .unwrap()
            .contains("ltsc2019")
    );
    // `webhook.mutate: false`: no mutating webhook is registered (the config tells /validate
    // to judge workload templates as written), in-cluster and with --url.
    let no_mutate = dir.path().join("no-mutate.yaml");
    std::fs::write(&no_mutate, "webhook:\n  mutate: false\n").unwrap();
    args.config = Some(no_mutate.clone());
    let kinds = |docs: &[Value]| -> Vec<String> {
        docs.iter()
            .map(|d| d["kind"].as_str().unwrap().to_string())
            .collect()
    };
    let docs = yaml_docs(&render(&args).unwrap());
    assert!(!kinds(&docs).contains(&"MutatingWebhookConfiguration".to_string()));
    assert!(kinds(&docs).contains(&"ValidatingWebhookConfiguration".to_string()));
    let mut url_args = ManifestsArgs::new();
    url_args.url = Some("https://127.0.0.1:8443".into());
    url_args.cert_dir = dir.path().join("certs");
    url_args.config = Some(no_mutate);
    let docs = yaml_docs(&render(&url_args).unwrap());
    assert_eq!(kinds(&docs), ["ValidatingWebhookConfiguration"]);
    let bad = dir.path().join("bad.yaml");
    std::fs::write(&bad, "target:\n  nonsense: 1\n").unwrap();
    args.config = Some(bad);
    assert!(render(&args).is_err());
}

/// `--url`: only the webhook configurations, pointing at the URL, and a certificate on disk
/// that a real `winlint serve` uses and the caBundle verifies over TLS.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn out_of_cluster_url_mode_end_to_end() {
    let dir = tempfile::tempdir().unwrap();
    // Find a free loopback port for the URL.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("https://127.0.0.1:{port}");
    let mut args = ManifestsArgs::new();
    args.url = Some(url.clone());
    args.cert_dir = dir.path().to_path_buf();
    let docs = yaml_docs(&render(&args).unwrap());
    assert_eq!(docs.len(), 2);
    let m: MutatingWebhookConfiguration = typed(&docs[0]);
    let v: ValidatingWebhookConfiguration = typed(&docs[1]);
    let mcc = m.webhooks.unwrap()[0].client_config.clone();
    let vcc = v.webhooks.unwrap()[0].client_config.clone();
    assert_eq!(mcc.url.as_deref(), Some(format!("{url}/mutate").as_str()));
    assert_eq!(vcc.url.as_deref(), Some(format!("{url}/validate").as_str()));
    assert!(mcc.service.is_none());
    let ca_bundle = mcc.ca_bundle.unwrap().0;
    let cert = std::fs::read(dir.path().join("tls.crt")).unwrap();
    verify(&ca_bundle, &cert, "127.0.0.1").unwrap();

    // Serve with the written files; a client trusting only the caBundle gets answers.
    let serve = winlint::server::ServeArgs::new(
        format!("127.0.0.1:{port}").parse().unwrap(),
        dir.path().join("tls.crt"),
        dir.path().join("tls.key"),
    );
    let server = winlint::server::start(serve).await.unwrap();
    let mut roots = rustls::RootCertStore::empty();
    for c in CertificateDer::pem_slice_iter(&ca_bundle) {
        roots.add(c.unwrap()).unwrap();
    }
    let cfg = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(roots)
    .with_no_client_auth();
    let tcp = tokio::net::TcpStream::connect(server.addr).await.unwrap();
    let tls = tokio_rustls::TlsConnector::from(Arc::new(cfg))
        .connect(ServerName::IpAddress(server.addr.ip().into()), tcp)
        .await
        .expect("the caBundle verifies the served certificate");
    drop(tls);
    server.shutdown();
    server.wait().await;
}

#[test]
fn url_must_be_https() {
    let mut args = ManifestsArgs::new();
    args.url = Some("http://127.0.0.1:8443".into());
    assert!(render(&args).is_err());
}

/// `winlint manifests` derives `--request-timeout` from the webhooks' timeoutSeconds (issue 15).
#[test]
fn request_timeout_is_below_the_webhook_timeout() {
    assert_eq!(winlint::manifests::request_timeout_for(5), "4");
    assert_eq!(
        winlint::manifests::WEBHOOK_TIMEOUT_SECONDS,
        5,
        "the README names 5 s"
    );
}

/// Re-running `--url` keeps the certificates of `--cert-dir` (the registered caBundle stays
/// valid); `--rotate-certs` replaces them; a partial or mismatched directory is an error, not a
/// silent rotation.
#[test]
fn url_mode_keeps_existing_certificates() {
    let dir = tempfile::tempdir().unwrap();
    let mut args = ManifestsArgs::new();
    args.url = Some("https://127.0.0.1:8443".into());
    args.cert_dir = dir.path().to_path_buf();
    let ca_of = |yaml: &str| -> Vec<u8> {
        let docs = yaml_docs(yaml);
        let v: ValidatingWebhookConfiguration = typed(&docs[1]);
        v.webhooks.unwrap()[0]
            .client_config
            .ca_bundle
            .clone()
            .unwrap()
            .0
    };
    let read = |f: &str| std::fs::read(dir.path().join(f)).unwrap();
    let first = render(&args).unwrap();
    let (ca1, cert1) = (read("ca.crt"), read("tls.crt"));
    assert_eq!(ca_of(&first), ca1);

    let again = render(&args).unwrap();
    assert!(again.contains("kept"), "{again}");
    assert_eq!(ca_of(&again), ca1, "the caBundle is the one registered");
    assert_eq!(
        read("tls.crt"),
        cert1,
        "the serving certificate is untouched"
    );

    args.rotate_certs = true;
    let rotated = render(&args).unwrap();
    assert_ne!(read("ca.crt"), ca1);
    assert_eq!(ca_of(&rotated), read("ca.crt"));
    args.rotate_certs = false;

    // Another host: the kept certificate does not name it.
    let mut other = args.clone();
    other.url = Some("https://10.1.2.3:8443".into());
    let e = render(&other).unwrap_err().to_string();
    assert!(
        e.contains("does not verify tls.crt for 10.1.2.3") && e.contains("--rotate-certs"),
        "{e}"
    );

    // A key that is not the certificate's (one file restored from elsewhere).
    let key = read("tls.key");
    let elsewhere = tempfile::tempdir().unwrap();
    let mut a = args.clone();
    a.cert_dir = elsewhere.path().to_path_buf();
    render(&a).unwrap();
    std::fs::copy(elsewhere.path().join("tls.key"), dir.path().join("tls.key")).unwrap();
    let e = render(&args).unwrap_err().to_string();
    assert!(e.contains("tls.key is not the key of tls.crt"), "{e}");
    std::fs::write(dir.path().join("tls.key"), key).unwrap();
    render(&args).unwrap();

    // A partial set.
    std::fs::remove_file(dir.path().join("tls.key")).unwrap();
    let e = render(&args).unwrap_err().to_string();
    assert!(e.contains("has ca.crt, tls.crt but not tls.key"), "{e}");
}

/// Issue 29 item 3: `--enforcement` sets the ConfigMap's `webhook.enforcement` (over the
/// `--config` file's, as the chart's `webhook.enforcement` does), the namespace default is the
/// chart's documented one, and `--url` names its configurations apart from the chart's.
#[test]
fn enforcement_namespace_and_the_dev_registration_name() {
    use winlint::config::{Config, Enforcement};
    let enforcement = |docs: &[Value]| {
        let cm = find(docs, "ConfigMap");
        Config::from_yaml(cm["data"]["winlint.yaml"].as_str().unwrap(), "cm")
            .unwrap()
            .policy
            .enforcement
    };
    let mut args = ManifestsArgs::new();
    assert_eq!(args.namespace, "winlint-system");
    assert_eq!(winlint::manifests::DEFAULT_NAMESPACE, "winlint-system");
    let chart_readme = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("charts/winlint/README.md"),
    )
    .unwrap();
    assert!(
        chart_readme.contains("helm install winlint ./charts/winlint --namespace winlint-system")
    );
    assert_eq!(
        enforcement(&yaml_docs(&render(&args).unwrap())),
        Enforcement::Deny
    );
    args.enforcement = Some("warn".into());
    assert_eq!(
        enforcement(&yaml_docs(&render(&args).unwrap())),
        Enforcement::Warn
    );
    // Over the file's value; the rest of the file is kept.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("winlint.yaml");
    std::fs::write(
        &file,
        "# mine\ntarget:\n  windowsBuilds: [ltsc2019]\nwebhook:\n  enforcement: deny\n  onError: deny\n",
    )
    .unwrap();
    args.config = Some(file);
    let docs = yaml_docs(&render(&args).unwrap());
    assert_eq!(enforcement(&docs), Enforcement::Warn);
    let cm = find(&docs, "ConfigMap");
    let c = Config::from_yaml(cm["data"]["winlint.yaml"].as_str().unwrap(), "cm").unwrap();
    assert_eq!(c.policy.on_error, winlint::config::OnError::Deny);
    assert_eq!(c.target.windows_builds.len(), 1);
    // The in-cluster configurations carry the chart's name; --url's its own.
    for d in docs.iter().filter(|d| {
        d["kind"]
            .as_str()
            .is_some_and(|k| k.ends_with("WebhookConfiguration"))
    }) {
        assert_eq!(d["metadata"]["name"], winlint::manifests::NAME);
    }
    let mut url = ManifestsArgs::new();
    url.url = Some("https://127.0.0.1:8443".into());
    url.cert_dir = dir.path().join("certs");
    let text = render(&url).unwrap();
    let docs = yaml_docs(&text);
    assert_eq!(docs.len(), 2);
    for d in &docs {
        assert_eq!(d["metadata"]["name"], "winlint-dev");
    }
    assert!(text.contains(
        "kubectl delete mutatingwebhookconfiguration,validatingwebhookconfiguration winlint-dev"
    ));
    assert!(text.contains("--webhook-configuration winlint-dev"));
}

/// `--enforcement` is the ConfigMap's: refused with `--url`, which prints no ConfigMap.
#[test]
fn enforcement_flag_is_refused_with_url() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_winlint"))
        .args([
            "manifests",
            "--url",
            "https://127.0.0.1:8443",
            "--enforcement",
            "warn",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--enforcement"));
}
