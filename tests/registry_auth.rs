//! A registry client that a tenant cannot turn against the webhook (issue 30, item 4): against
//! small loopback fakes (tests/registry_support's `Fake`, which records every request with its
//! `Authorization` header), no tool needed.
//!
//! * a glob key's password never goes to a token realm on another host (the attack: a pod names
//!   a host under `*.azurecr.io` whose 401 points the realm elsewhere over plain HTTP); an
//!   exact key's goes where the registry says, as the kubelet sends it;
//! * a redirect or a realm to the metadata service or a private address is refused before any
//!   connection, also from a registry that is itself on loopback, and from a public registry
//!   to loopback; a refusal does not back the registry off;
//! * a pod of a namespace that no pull secret serves never reads the facts another namespace's
//!   secret found: its verdict is the name's, and its text does not name the image's platforms.
//!
//! All traffic stays on 127.0.0.1: the refused URLs are never connected to.

mod registry_support;

use std::sync::Arc;

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use registry_support::{Fake, OCI_INDEX, OCI_MANIFEST, Reply, windows_20348_index};
use serde_json::json;
use winlint::admission::{Endpoint, Webhook};
use winlint::config::Config;
use winlint::model::Context;
use winlint::registry::client::sha256;
use winlint::registry::http::{Class, Http, HttpError, Origin};
use winlint::registry::keyring::Reader;
use winlint::registry::pull_secrets::{SecretPolicy, add_secret};
use winlint::registry::source::Background;
use winlint::registry::{
    Credentials, Keyring, Limits, LookupError, RegistryClient, RegistryMetrics, Resolver, Settings,
};

const AUTH: &str = "Basic cm9ib3Q6czNjcmV0"; // robot:s3cret

fn resolver(ring: Keyring) -> Resolver {
    Resolver::new(
        RegistryClient::new(Limits::default(), Credentials::new(ring)),
        Settings::default(),
        RegistryMetrics::default(),
    )
}

/// A pull secret `name` holding robot:s3cret for `key`, annotated with `namespaces`, read
/// into a keyring under `policy`.
fn ring_of(name: &str, key: &str, namespaces: Option<&str>, policy: &SecretPolicy) -> Keyring {
    let config = json!({"auths": {key: {"username": "robot", "password": "s3cret"}}});
    let mut s = Secret {
        type_: Some("kubernetes.io/dockerconfigjson".into()),
        data: Some(
            [(
                ".dockerconfigjson".to_string(),
                ByteString(config.to_string().into_bytes()),
            )]
            .into(),
        ),
        ..Secret::default()
    };
    s.metadata.name = Some(name.into());
    s.metadata.annotations =
        namespaces.map(|n| [("winlint.io/namespaces".to_string(), n.to_string())].into());
    let mut ring = Keyring::default();
    add_secret(&mut ring, &s, policy).unwrap();
    ring
}

fn team_a() -> Reader {
    Reader::Namespace("team-a".into())
}

/// The realm host the fake registry's 401 names: another server (`other`) that hands a token
/// to anyone and records the Authorization of each request.
fn registry_pointing_the_realm_at(other: &str) -> Fake {
    let realm = format!(r#"Bearer realm="http://{other}/token",service="evil""#);
    Fake::start(move |req, _| match req.auth.as_deref() {
        Some("Bearer tok") => windows_20348_index(),
        _ => Reply::Full(
            401,
            vec![("WWW-Authenticate".into(), realm.clone())],
            vec![],
        ),
    })
}

fn token_server() -> Fake {
    Fake::start(|req, _| {
        if req.path.starts_with("/token") {
            Reply::Full(200, vec![], br#"{"token":"tok"}"#.to_vec())
        } else {
            Reply::Full(404, vec![], vec![])
        }
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_glob_key_never_sends_the_password_to_a_realm_on_another_host() {
    let other = token_server();
    let reg = registry_pointing_the_realm_at(&other.addr);
    let port = reg.addr.rsplit_once(':').unwrap().1;
    let image = format!("{}/team/app:1", reg.addr);
    // The administrator allowed glob keys; the key `127.0.0.*:PORT` matches the registry the pod
    // names, and the secret serves the pod's namespace.
    let open = SecretPolicy {
        default_namespaces: vec![],
        allow_glob_keys: true,
    };
    let ring = ring_of("acr", &format!("127.0.0.*:{port}"), Some("team-a"), &open);
    assert_eq!(ring.len(), 1);
    let f = resolver(ring).resolve_for(&image, &team_a()).await.unwrap();
    // The lookup went on anonymously (a public token): the fact is one anyone may read.
    assert!(!f.platforms.is_empty());
    let at_other = other.requests();
    assert!(!at_other.is_empty(), "the anonymous token was asked");
    assert!(
        at_other.iter().all(|(_, auth)| auth.is_none()),
        "the glob key's password went to the realm's host: {at_other:?}"
    );

    // An exact key: the registry the administrator named chooses its realm (Docker Hub's is
    // auth.docker.io), and the kubelet sends the credential there; so does winlint.
    let other = token_server();
    let reg = registry_pointing_the_realm_at(&other.addr);
    let ring = ring_of("exact", &reg.addr, Some("team-a"), &open);
    let image = format!("{}/team/app:1", reg.addr);
    resolver(ring).resolve_for(&image, &team_a()).await.unwrap();
    assert!(
        other
            .requests()
            .iter()
            .any(|(_, auth)| auth.as_deref() == Some(AUTH)),
        "{:?}",
        other.requests()
    );

    // A glob key whose realm is on the registry's own host gets the credential (ACR, GHCR).
    let reg = Fake::start(|req, addr| {
        if req.path.starts_with("/token") {
            let tok = if req.auth.as_deref() == Some(AUTH) {
                "tok"
            } else {
                "anon"
            };
            return Reply::Full(200, vec![], format!(r#"{{"token":"{tok}"}}"#).into_bytes());
        }
        match req.auth.as_deref() {
            Some("Bearer tok") => windows_20348_index(),
            _ => Reply::Full(
                401,
                vec![(
                    "WWW-Authenticate".into(),
                    format!(r#"Bearer realm="http://{addr}/token",service="acr""#),
                )],
                vec![],
            ),
        }
    });
    let port = reg.addr.rsplit_once(':').unwrap().1;
    let ring = ring_of("acr", &format!("127.0.0.*:{port}"), Some("team-a"), &open);
    let image = format!("{}/team/app:1", reg.addr);
    resolver(ring).resolve_for(&image, &team_a()).await.unwrap();
    assert!(
        reg.requests()
            .iter()
            .any(|(l, a)| l.contains("/token") && a.as_deref() == Some(AUTH)),
        "{:?}",
        reg.requests()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redirects_and_realms_to_metadata_or_private_addresses_are_refused_before_connecting() {
    let reg = Fake::start(|req, _| {
        let to = |loc: &str| Reply::Full(307, vec![("Location".into(), loc.into())], vec![]);
        let p = req.path.as_str();
        if p.starts_with("/v2/meta-http/") {
            to("http://169.254.169.254/latest/meta-data/iam/security-credentials/")
        } else if p.starts_with("/v2/meta-https/") {
            to("https://169.254.169.254/latest/meta-data/")
        } else if p.starts_with("/v2/private/") {
            to("https://10.0.0.1/blobs/x")
        } else if p.starts_with("/v2/ula/") {
            to("https://[fd00:ec2::254]/latest/")
        } else if p.starts_with("/v2/realm/") {
            Reply::Full(
                401,
                vec![(
                    "WWW-Authenticate".into(),
                    r#"Bearer realm="http://169.254.169.254/latest/api/token""#.into(),
                )],
                vec![],
            )
        } else {
            windows_20348_index()
        }
    });
    let r = resolver(Keyring::default());
    for (repo, says) in [
        (
            "meta-http",
            "a redirect to http://169.254.169.254/latest/meta-data/iam/security-credentials/ refused: only HTTPS is followed",
        ),
        (
            "meta-https",
            "refused: a link-local address, and the registry's is loopback",
        ),
        (
            "private",
            "https://10.0.0.1/blobs/x refused: a private address",
        ),
        ("ula", "refused: a private address"),
    ] {
        let e = r
            .resolve(&format!("{}/{repo}/app:1", reg.addr))
            .await
            .unwrap_err();
        match &e {
            LookupError::Http(HttpError::Refused(m)) => assert!(m.contains(says), "{m}"),
            other => panic!("{repo}: not refused before connecting: {other:?}"),
        }
        assert!(!e.transient(), "a refusal is no reason to back off");
    }
    let e = r
        .resolve(&format!("{}/realm/app:1", reg.addr))
        .await
        .unwrap_err();
    assert!(
        matches!(&e, LookupError::Auth(m) if m.contains("the token realm http://169.254.169.254/latest/api/token refused")),
        "{e:?}"
    );
    // The registry is not backed off: its next image is looked up.
    let f = r.resolve(&format!("{}/ok/app:1", reg.addr)).await.unwrap();
    assert!(!f.platforms.is_empty());
    let metrics = {
        let mut reg = prometheus_client::registry::Registry::default();
        r.metrics().register(&mut reg);
        let mut s = String::new();
        prometheus_client::encoding::text::encode(&mut s, &reg).unwrap();
        s
    };
    assert!(metrics.contains(r#"reason="refused""#), "{metrics}");
}

/// A registry that is not on loopback (the origin says public; the fake answers on 127.0.0.1
/// all the same) may send the client neither to loopback by address or by name, nor over
/// plain HTTP; the target server is never connected to.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_public_registry_cannot_redirect_to_loopback() {
    let target = Fake::start(|_, _| windows_20348_index());
    let t = target.addr.clone();
    let port = t.rsplit_once(':').unwrap().1.to_string();
    let reg = Fake::start(move |req, _| {
        let loc = match req.path.as_str() {
            "/ip" => format!("https://{t}/v2/"),
            "/name" => format!("https://localhost:{port}/v2/"),
            "/v6" => format!("https://[::ffff:127.0.0.1]:{port}/v2/"),
            _ => format!("http://{t}/v2/"),
        };
        Reply::Full(307, vec![("Location".into(), loc)], vec![])
    });
    let http = Http::new(Limits::default());
    let public = Origin {
        plain_http: true,
        class: Class::Public,
    };
    for path in ["/ip", "/name", "/v6", "/plain"] {
        let url = format!("http://{}{path}", reg.addr);
        let e = http
            .request(&public, hyper::Method::GET, &url, &[], None)
            .await
            .unwrap_err();
        assert!(matches!(e, HttpError::Refused(_)), "{path}: {e:?}");
    }
    assert!(target.requests().is_empty(), "{:?}", target.requests());
}

/// A registry answering with a single Windows 17763 list only to robot:s3cret.
fn private_registry() -> Fake {
    Fake::start(|req, _| {
        if req.auth.as_deref() != Some(AUTH) {
            return Reply::Full(
                401,
                vec![("WWW-Authenticate".into(), r#"Basic realm="r""#.into())],
                vec![],
            );
        }
        let body = json!({"schemaVersion": 2, "mediaType": OCI_INDEX,
            "manifests": [{"mediaType": OCI_MANIFEST,
                "digest": format!("sha256:{}", "2".repeat(64)), "size": 1,
                "platform": {"os": "windows", "architecture": "amd64",
                    "os.version": "10.0.17763.5329"}}]})
        .to_string()
        .into_bytes();
        let digest = sha256(&body);
        Reply::Full(
            200,
            vec![
                ("Content-Type".into(), OCI_INDEX.into()),
                ("Docker-Content-Digest".into(), digest),
            ],
            body,
        )
    })
}

fn review(uid: &str, namespace: &str, image: &str) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
        "request": {"uid": uid, "kind": {"group": "", "version": "v1", "kind": "Pod"},
            "resource": {"group": "", "version": "v1", "resource": "pods"},
            "operation": "CREATE", "namespace": namespace,
            "object": {"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": "win"},
                "spec": {"os": {"name": "windows"},
                    "nodeSelector": {"kubernetes.io/os": "windows"},
                    "tolerations": [{"key": "os", "operator": "Equal", "value": "windows",
                        "effect": "NoSchedule"}],
                    "containers": [{"name": "a", "image": image}]}}}
    }))
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_namespace_never_reads_facts_only_another_namespaces_secret_could_read() {
    let reg = private_registry();
    let image = format!("{}/team-a/app:1", reg.addr);
    let ring = ring_of(
        "team-a-pull",
        &reg.addr,
        Some("team-a"),
        &SecretPolicy::default(),
    );
    let resolver = resolver(ring);
    // team-a's lookup (as sync mode makes it) finds the private image: one 17763 build.
    let f = resolver.resolve_for(&image, &team_a()).await.unwrap();
    assert_eq!(f.windows_builds().len(), 1);
    // team-b's is its own, with no credential: refused; team-a's facts are not its.
    let team_b = Reader::Namespace("team-b".into());
    assert!(matches!(
        resolver.resolve_for(&image, &team_b).await,
        Err(LookupError::Auth(_))
    ));
    assert!(resolver.peek_for(&image, &team_b).is_none());
    assert!(resolver.peek_for(&image, &team_a()).is_some());
    assert!(
        resolver
            .peek_for(&image, &Reader::Namespace(String::new()))
            .is_none()
    );
    // team-b's refusal did not fail team-a's next lookup.
    assert!(resolver.resolve_for(&image, &team_a()).await.is_ok());

    let config = Config::from_yaml("target:\n  windowsBuilds: [ltsc2022]\n", "t").unwrap();
    let cx = Context {
        images: Some(Arc::new(Background(resolver.clone()))),
        ..Context::default()
    };
    let webhook = Webhook::with_context(config, Arc::new(cx));
    let verdict = |uid: &str, ns: &str| {
        let out = webhook
            .review(&review(uid, ns, &image), Endpoint::Validate)
            .unwrap();
        String::from_utf8(out.body).unwrap()
    };
    let a = verdict("a", "team-a");
    assert!(
        a.contains("WIN502") && a.contains("registry:") && a.contains("17763"),
        "{a}"
    );
    for ns in ["team-b", "team-a-other", ""] {
        let b = verdict("b", ns);
        assert!(
            !b.contains("17763") && !b.contains("registry:") && !b.contains("WIN502"),
            "namespace {ns:?} read team-a's facts: {b}"
        );
        assert!(b.contains(r#""allowed":true"#), "judged by the name: {b}");
    }
}

/// The two switches of winlint.yaml (and the chart's config.registry), off by default.
#[test]
fn the_administrators_switches_parse_and_default_to_closed() {
    let c = Config::from_yaml(
        "registry:\n  mode: sync\n  pullSecrets: [a]\n  pullSecretsDefaultNamespaces: ['*']\n  allowGlobKeys: true\n",
        "t",
    )
    .unwrap();
    assert!(c.policy.registry.allow_glob_keys);
    assert_eq!(c.policy.registry.pull_secrets_default_namespaces, ["*"]);
    let c = Config::from_yaml("registry:\n  mode: sync\n", "t").unwrap();
    assert!(!c.policy.registry.allow_glob_keys);
    assert!(c.policy.registry.pull_secrets_default_namespaces.is_empty());
}
