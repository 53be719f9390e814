//! Image facts against real parts (issue 18): images built as OCI layouts and pushed with
//! skopeo to Debian's docker-registry on 127.0.0.1 (anonymous and Basic auth), the Bearer flow
//! and the faults through a loopback server. `registry_support` says how they start and skip.

mod registry_support;

use std::collections::BTreeSet;
use std::sync::atomic::Ordering;
use std::time::Duration;

use base64::Engine;
use registry_support::{Fake, Layout, Plat, Registry, Reply, entry, tools, windows_20348_index};
use serde_json::json;
use winlint::model::image_facts::{HostVerdict, ImageFacts};
use winlint::registry::http::HttpError;
use winlint::registry::{
    Credentials, Keyring, Limits, LookupError, RegistryClient, RegistryMetrics, Resolver, Settings,
};
use winlint::windows::{Build, Isolation, WS2019, WS2022, WS2025};

fn limits() -> Limits {
    Limits {
        connect: Duration::from_secs(2),
        read: Duration::from_secs(2),
        max_body: 4 << 20,
        max_redirects: 5,
    }
}

fn resolver_with(keyring: Keyring, settings: Settings) -> Resolver {
    Resolver::new(
        RegistryClient::new(limits(), Credentials::new(keyring)),
        settings,
        RegistryMetrics::default(),
    )
}

fn resolver() -> Resolver {
    resolver_with(Keyring::default(), Settings::default())
}

const LINUX: Plat = Plat {
    os: "linux",
    arch: "amd64",
    version: None,
};
const LINUX_ARM: Plat = Plat {
    os: "linux",
    arch: "arm64",
    version: None,
};
const W1809: Plat = Plat {
    os: "windows",
    arch: "amd64",
    version: Some("10.0.17763.5329"),
};
const W2022: Plat = Plat {
    os: "windows",
    arch: "amd64",
    version: Some("10.0.20348.2340"),
};
const WANY: Plat = Plat {
    os: "windows",
    arch: "amd64",
    version: None,
};

/// The test images, in one layout: tag → what it is.
fn images() -> Layout {
    let mut l = Layout::new();
    let entries = |l: &Layout, ps: &[&Plat]| -> Vec<serde_json::Value> {
        ps.iter().map(|p| entry(&l.manifest(p), p)).collect()
    };
    let multi = l.index(entries(&l, &[&LINUX, &W1809, &W2022]));
    l.tag(&multi, "multi");
    let single = l.manifest(&W2022);
    l.tag(&single, "single-ltsc2022");
    let linux = l.index(entries(&l, &[&LINUX, &LINUX_ARM]));
    l.tag(&linux, "linux");
    let win = entry(&l.manifest(&W2022), &W2022);
    let att = l.attestation(&win);
    let attested = l.index(vec![win, att]);
    l.tag(&attested, "attested");
    let anywhere = l.index(entries(&l, &[&WANY]));
    l.tag(&anywhere, "anywhere");
    l
}

fn builds(f: &ImageFacts) -> Vec<Build> {
    f.windows_builds()
}

async fn platform_lists_from_a_real_registry() {
    if tools().is_none() {
        return;
    }
    let reg = Registry::start(None);
    let layout = images();
    for tag in ["multi", "single-ltsc2022", "linux", "attested", "anywhere"] {
        reg.push(layout.dir.path(), tag, "app", false);
    }
    reg.push(layout.dir.path(), "multi", "app-docker", true);
    let r = resolver();
    let get = |t: &str| {
        let r = r.clone();
        let reference = format!("{}/{t}", reg.host);
        async move { r.resolve(&reference).await.unwrap() }
    };
    let p = Isolation::Process;

    // A multi-OS index: linux + windows 17763 + 20348; each host pulls its own build, a WS2025
    // host the ltsc2022 entry (the LTSC window), an old runtime on WS2025 none.
    let multi = get("app:multi").await;
    assert!(multi.list && multi.has_linux());
    assert_eq!(builds(&multi), vec![WS2019, WS2022]);
    assert_eq!(multi.on_host(WS2019, p, true), HostVerdict::Runs(WS2019));
    assert_eq!(multi.on_host(WS2022, p, true), HostVerdict::Runs(WS2022));
    assert_eq!(multi.on_host(WS2025, p, true), HostVerdict::Runs(WS2022));
    assert_eq!(multi.on_host(WS2025, p, false), HostVerdict::NoMatch);
    let w = multi.windows().next().unwrap();
    assert_eq!(w.os_version.as_deref(), Some("10.0.17763.5329"));

    // The same as a Docker manifest list (v2s2, as MCR serves): the same platforms.
    let docker = get("app-docker:multi").await;
    assert_ne!(
        docker.digest, multi.digest,
        "skopeo converted the media types"
    );
    // The entries' digests differ (skopeo converted them too); the platforms do not.
    let bare = |f: &ImageFacts| -> Vec<_> {
        f.platforms
            .iter()
            .cloned()
            .map(|mut p| {
                p.digest = None;
                p
            })
            .collect()
    };
    assert_eq!(bare(&docker), bare(&multi));
    // The Windows entries' configs were read for their User (issue 26), the Linux ones not.
    let users: Vec<(&str, Option<&str>)> = multi
        .platforms
        .iter()
        .map(|p| (p.os.as_str(), p.user.as_deref()))
        .collect();
    assert_eq!(
        users,
        vec![
            ("linux", None),
            ("windows", Some("ContainerUser")),
            ("windows", Some("ContainerUser"))
        ]
    );
    assert_eq!(docker.user_for(&[WS2022]).as_deref(), Some("ContainerUser"));

    // A single Windows manifest: the build is only in its config.
    let single = get("app:single-ltsc2022").await;
    assert!(!single.list);
    // Its config also names the default user (WIN315); a list's entries' configs are not read.
    assert_eq!(single.user.as_deref(), Some("ContainerUser"));
    assert_eq!(multi.user, None);
    assert_eq!(builds(&single), vec![WS2022]);
    assert_eq!(single.on_host(WS2019, p, true), HostVerdict::NoMatch);
    assert_eq!(
        single.on_host(WS2025, Isolation::Hyperv, true),
        HostVerdict::Runs(WS2022)
    );

    // Linux only: no Windows entry, the pull fails on every Windows host.
    let linux = get("app:linux").await;
    assert!(!linux.has_windows());
    assert_eq!(linux.on_host(WS2022, p, true), HostVerdict::NoWindows);

    // Attestation entries are not platforms.
    let attested = get("app:attested").await;
    assert_eq!(attested.platforms.len(), 1, "{:?}", attested.platforms);
    assert_eq!(builds(&attested), vec![WS2022]);

    // An entry without os.version runs anywhere; its build cannot be checked.
    let anywhere = get("app:anywhere").await;
    assert_eq!(anywhere.on_host(WS2019, p, true), HostVerdict::Unverifiable);

    // By digest: the same facts; a digest that is not there is a fact (404).
    let by_digest = get(&format!("app@{}", multi.digest)).await;
    assert_eq!(by_digest.platforms, multi.platforms);
    let missing = format!("{}/app@sha256:{}", reg.host, "0".repeat(64));
    assert_eq!(r.resolve(&missing).await, Err(LookupError::NotFound));
    let missing_tag = format!("{}/app:nope", reg.host);
    assert_eq!(r.resolve(&missing_tag).await, Err(LookupError::NotFound));
}

async fn basic_auth_with_a_docker_config() {
    if tools().is_none() {
        return;
    }
    let reg = Registry::start(Some(("winlint", "s3cret")));
    let layout = images();
    reg.push(layout.dir.path(), "multi", "private", false);
    let reference = format!("{}/private:multi", reg.host);

    // Anonymous: unauthorized, and the error is remembered (a fact, not a registry fault).
    let anon = resolver();
    assert!(matches!(
        anon.resolve(&reference).await,
        Err(LookupError::Auth(_))
    ));

    // A docker config with `auth` (base64 user:password), as `docker login` writes it; a
    // credential helper is named but never run.
    let dir = tempfile::tempdir().unwrap();
    let auth = base64::engine::general_purpose::STANDARD.encode("winlint:s3cret");
    let cfg = json!({"auths": {(format!("http://{}", reg.host)): {"auth": auth}},
        "credHelpers": {"gcr.io": "gcloud"}});
    std::fs::write(dir.path().join("config.json"), cfg.to_string()).unwrap();
    let ring = Keyring::from_file(&dir.path().join("config.json")).unwrap();
    assert_eq!(ring.helpers, vec!["credHelpers gcr.io: gcloud"]);
    let r = resolver_with(ring, Settings::default());
    let f = r.resolve(&reference).await.unwrap();
    assert_eq!(f.windows_builds(), vec![WS2019, WS2022]);

    // username/password and a wrong password.
    let bad = Keyring::from_json(
        json!({"auths": {(reg.host.clone()): {"username": "winlint", "password": "no"}}})
            .to_string()
            .as_bytes(),
    )
    .unwrap();
    let r = resolver_with(bad, Settings::default());
    assert!(matches!(
        r.resolve(&reference).await,
        Err(LookupError::Auth(_))
    ));
}

async fn the_bearer_token_flow() {
    let basic = format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode("robot:pw")
    );
    let expect_basic = basic.clone();
    let fake = Fake::start(move |req, addr| {
        if req.path.starts_with("/token?") {
            // The realm gets the service, the repository scope and the keyring's credentials.
            let ok = req.path.contains("service=fake")
                && req.path.contains("scope=repository%3Ateam%2Fapp%3Apull")
                && req.auth.as_deref() == Some(&expect_basic);
            return if ok {
                Reply::Full(
                    200,
                    vec![],
                    br#"{"token":"tok-1","expires_in":300}"#.to_vec(),
                )
            } else {
                Reply::Full(401, vec![], vec![])
            };
        }
        if req.auth.as_deref() != Some("Bearer tok-1") {
            let challenge = format!(
                r#"Bearer realm="http://{addr}/token",service="fake",scope="repository:team/app:pull""#
            );
            return Reply::Full(401, vec![("WWW-Authenticate".into(), challenge)], vec![]);
        }
        windows_20348_index()
    });
    let mut ring = Keyring::default();
    ring.insert(
        &fake.addr,
        winlint::registry::Credential {
            username: "robot".into(),
            password: "pw".into(),
        },
    );
    let r = resolver_with(ring, Settings::default());
    let f = r
        .resolve(&format!("{}/team/app:1", fake.addr))
        .await
        .unwrap();
    assert_eq!(f.windows_builds(), vec![WS2022]);
    // A second tag of the same repository reuses the token: no second /token request.
    r.resolve(&format!("{}/team/app:2", fake.addr))
        .await
        .unwrap();
    let reqs = fake.requests();
    let tokens = reqs.iter().filter(|(l, _)| l.contains("/token?")).count();
    assert_eq!(tokens, 1, "{reqs:?}");
    assert!(
        reqs.iter()
            .filter(|(l, _)| l.contains("/token?"))
            .all(|(_, a)| a.as_deref() == Some(&basic))
    );
}

/// Every credential the keyring matches is tried, most specific key first, then an anonymous
/// token: a refused `HOST/team` credential falls through to the `HOST` one, and a public
/// repository is read anonymously when every matched credential is refused.
async fn every_matching_credential_is_tried_then_anonymous() {
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    let good = good_basic();
    let fake = Fake::start(move |req, addr| {
        if req.path.starts_with("/token?") {
            let public = req.path.contains("public%2Fapp");
            return match req.auth.as_deref() {
                Some(a) if a == good => {
                    Reply::Full(200, vec![], br#"{"token":"tok-good"}"#.to_vec())
                }
                None if public => Reply::Full(200, vec![], br#"{"token":"tok-anon"}"#.to_vec()),
                _ => Reply::Full(401, vec![], vec![]),
            };
        }
        match req.auth.as_deref() {
            Some("Bearer tok-good") | Some("Bearer tok-anon") => windows_20348_index(),
            _ => {
                let challenge = format!(r#"Bearer realm="http://{addr}/token",service="fake""#);
                Reply::Full(401, vec![("WWW-Authenticate".into(), challenge)], vec![])
            }
        }
    });
    let cred = |p: &str| winlint::registry::Credential {
        username: "robot".into(),
        password: p.into(),
    };
    let mut ring = Keyring::default();
    ring.insert(&format!("{}/team", fake.addr), cred("stale"));
    ring.insert(&format!("http://{}/v2/", fake.addr), cred("good"));
    let r = resolver_with(ring, Settings::default());
    r.resolve(&format!("{}/team/app:1", fake.addr))
        .await
        .unwrap();
    let tokens: Vec<Option<String>> = fake
        .requests()
        .into_iter()
        .filter(|(l, _)| l.contains("/token?"))
        .map(|(_, a)| a)
        .collect();
    assert_eq!(
        tokens,
        vec![
            Some(format!("Basic {}", b64("robot:stale"))),
            Some(good_basic())
        ],
        "the specific key first, then the host's"
    );

    let mut stale_only = Keyring::default();
    stale_only.insert(&fake.addr, cred("stale"));
    let r = resolver_with(stale_only, Settings::default());
    r.resolve(&format!("{}/public/app:1", fake.addr))
        .await
        .unwrap();
    assert!(matches!(
        r.resolve(&format!("{}/team/other:1", fake.addr)).await,
        Err(LookupError::Auth(_))
    ));
}

fn good_basic() -> String {
    format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode("robot:good")
    )
}

/// A resolver against a fake that answers `reply` to everything: the lookup's error and the
/// requests the fake saw after two lookups of the same image.
async fn fault(
    reply: impl Fn() -> Reply + Send + Sync + 'static,
) -> (LookupError, LookupError, Fake) {
    let fake = Fake::start(move |_, _| reply());
    let r = resolver();
    let reference = format!("{}/x:1", fake.addr);
    let first = r.resolve(&reference).await.unwrap_err();
    let second = r.resolve(&reference).await.unwrap_err();
    (first, second, fake)
}

async fn faults_are_bounded_and_back_off() {
    // A registry that hangs: the read timeout ends the wait; the registry is backed off.
    let (e, again, fake) = fault(|| Reply::Hang).await;
    assert!(
        matches!(e, LookupError::Http(HttpError::Timeout(..))),
        "{e}"
    );
    assert!(matches!(again, LookupError::Backoff(_)), "{again}");
    assert_eq!(fake.requests().len(), 1);

    // 429 with Retry-After: backed off for at least that long.
    let (e, again, fake) =
        fault(|| Reply::Full(429, vec![("Retry-After".into(), "120".into())], vec![])).await;
    assert_eq!(
        e,
        LookupError::Throttled {
            retry_after: Some(Duration::from_secs(120))
        }
    );
    assert!(matches!(again, LookupError::Backoff(d) if d > Duration::from_secs(100)));
    assert_eq!(fake.requests().len(), 1);

    // 500: a registry fault, backed off.
    let (e, again, _) = fault(|| Reply::Full(500, vec![], b"oops".to_vec())).await;
    assert!(matches!(e, LookupError::Status { status: 500, .. }), "{e}");
    assert!(matches!(again, LookupError::Backoff(_)));

    // Garbage JSON: a fact about the image, remembered (no second request), not backed off.
    let (e, again, fake) = fault(|| {
        Reply::Full(
            200,
            vec![(
                "Content-Type".into(),
                "application/vnd.oci.image.index.v1+json".into(),
            )],
            b"{\"manifests\": [ nope".to_vec(),
        )
    })
    .await;
    assert!(matches!(e, LookupError::Manifest(_)), "{e}");
    assert_eq!(again, e);
    assert_eq!(fake.requests().len(), 1);

    // A 100 MB manifest: cut at the 4 MiB cap while streaming.
    let (e, _, fake) = fault(|| Reply::Endless(100 << 20)).await;
    assert_eq!(
        e,
        LookupError::Http(HttpError::TooLarge(
            winlint::model::image_facts::MAX_MANIFEST_BYTES
        ))
    );
    let sent = fake.seen.bytes_sent.load(Ordering::SeqCst);
    assert!(sent < 32 << 20, "the client read on: {sent} bytes sent");

    // A redirect loop: ends at the limit (1 request + 5 redirects).
    let fake = Fake::start(|req, addr| {
        Reply::Full(
            307,
            vec![("Location".into(), format!("http://{addr}{}", req.path))],
            vec![],
        )
    });
    let e = resolver()
        .resolve(&format!("{}/x:1", fake.addr))
        .await
        .unwrap_err();
    assert_eq!(e, LookupError::Http(HttpError::Redirects(5)));
    assert_eq!(fake.requests().len(), 6);
}

async fn credentials_stay_on_their_host_across_a_redirect() {
    let storage = Fake::start(|_, _| windows_20348_index());
    let target = storage.addr.clone();
    let home = Fake::start(move |req, _| {
        if req.auth.is_none() {
            return Reply::Full(
                401,
                vec![("WWW-Authenticate".into(), r#"Basic realm="r""#.into())],
                vec![],
            );
        }
        Reply::Full(
            307,
            vec![("Location".into(), format!("http://{target}{}", req.path))],
            vec![],
        )
    });
    let mut ring = Keyring::default();
    ring.insert(
        &home.addr,
        winlint::registry::Credential {
            username: "u".into(),
            password: "p".into(),
        },
    );
    let f = resolver_with(ring, Settings::default())
        .resolve(&format!("{}/x:1", home.addr))
        .await
        .unwrap();
    assert_eq!(f.windows_builds(), vec![WS2022]);
    assert!(home.requests().iter().any(|(_, a)| a.is_some()));
    let at_storage = storage.requests();
    assert!(!at_storage.is_empty());
    assert!(
        at_storage.iter().all(|(_, a)| a.is_none()),
        "{at_storage:?}"
    );
}

/// 1 000 pods naming 5 tags, all at once: one lookup per tag (single-flight), the rest hits;
/// after the TTL, one HEAD per tag and no GET (the digest did not move).
async fn a_replay_costs_one_lookup_per_tag_per_ttl() {
    let fake = Fake::start(|_, _| {
        // Slow enough that the concurrent askers overlap the first lookup.
        std::thread::sleep(Duration::from_millis(20));
        windows_20348_index()
    });
    let tags: Vec<String> = (0..5).map(|i| format!("{}/app:{i}", fake.addr)).collect();
    let pods: Vec<String> = (0..1000).map(|i| tags[i % 5].clone()).collect();
    let replay = |r: Resolver| {
        let pods = pods.clone();
        async move {
            futures::future::join_all(pods.iter().map(|p| {
                let r = r.clone();
                async move { r.resolve(p).await.unwrap() }
            }))
            .await
        }
    };
    let r = resolver();
    replay(r.clone()).await;
    assert_eq!(r.metrics().lookup_count(), 5);
    let gets = |f: &Fake| {
        f.requests()
            .iter()
            .filter(|(l, _)| l.starts_with("GET"))
            .count()
    };
    assert_eq!(gets(&fake), 5);
    // The first round: 5 lookups; the other 995 joined one in flight or, once it was done,
    // hit the cache (how many of each depends on timing). The same 1 000 pods again within the
    // TTL: all from memory.
    let first_hits = r.metrics().cache_hits.get();
    replay(r.clone()).await;
    assert_eq!(r.metrics().lookup_count(), 5);
    let hits = r.metrics().cache_hits.get();
    assert_eq!(hits - first_hits, 1000);
    println!(
        "replay: 2 x 1000 pods, 5 tags: {} lookups, {hits} cache hits ({:.2}% of 2000 answered \
         without a request)",
        r.metrics().lookup_count(),
        (2000 - r.metrics().lookup_count()) as f64 / 20.0
    );

    // TTL 0: every resolve is a lookup, but a HEAD answers it from the digest cache.
    let settings = Settings {
        tag_ttl: Duration::ZERO,
        ..Settings::default()
    };
    let r = resolver_with(Keyring::default(), settings);
    for t in &tags {
        r.resolve(t).await.unwrap();
    }
    let before = fake.requests().len();
    for t in &tags {
        r.resolve(t).await.unwrap();
    }
    let after: Vec<_> = fake.requests()[before..].to_vec();
    assert_eq!(after.len(), 5, "{after:?}");
    assert!(
        after.iter().all(|(l, _)| l.starts_with("HEAD")),
        "{after:?}"
    );
}

async fn the_disk_cache_saves_the_get_between_runs() {
    let fake = Fake::start(|_, _| windows_20348_index());
    let dir = tempfile::tempdir().unwrap();
    let settings = || Settings {
        disk: Some(dir.path().to_path_buf()),
        ..Settings::default()
    };
    let reference = format!("{}/app:1", fake.addr);
    let first = resolver_with(Keyring::default(), settings());
    first.resolve(&reference).await.unwrap();
    let n = fake.requests().len();
    // A new run: one HEAD, the facts from disk.
    let second = resolver_with(Keyring::default(), settings());
    let f = second.resolve(&reference).await.unwrap();
    assert_eq!(f.windows_builds(), vec![WS2022]);
    let new: Vec<_> = fake.requests()[n..].to_vec();
    assert_eq!(new.len(), 1, "{new:?}");
    assert!(new[0].0.starts_with("HEAD"));
    let mut refs = BTreeSet::new();
    refs.insert(reference);
    let (facts, failed) = winlint::registry::source::resolve_all(&second, &refs).await;
    assert_eq!((facts.len(), failed.len()), (1, 0));
}

/// Lookup latency against the local registry (printed; not asserted).
async fn lookup_latency_against_the_local_registry() {
    if tools().is_none() {
        return;
    }
    let reg = Registry::start(None);
    let layout = images();
    reg.push(layout.dir.path(), "multi", "app", false);
    reg.push(layout.dir.path(), "single-ltsc2022", "app", false);
    let mut cold = Vec::new();
    for _ in 0..20 {
        for t in ["multi", "single-ltsc2022"] {
            let r = resolver();
            let start = std::time::Instant::now();
            r.resolve(&format!("{}/app:{t}", reg.host)).await.unwrap();
            cold.push(start.elapsed());
        }
    }
    cold.sort();
    println!(
        "cold lookups against docker-registry on loopback: p50 {:?}, max {:?} (n={})",
        cold[cold.len() / 2],
        cold[cold.len() - 1],
        cold.len()
    );
}

/// `winlint --registry` on a manifest: the facts change the findings, and say so.
fn the_cli_looks_images_up_with_registry() {
    if tools().is_none() {
        return;
    }
    let reg = Registry::start(None);
    let layout = images();
    reg.push(layout.dir.path(), "single-ltsc2022", "web", false);
    reg.push(layout.dir.path(), "linux", "tool", false);
    reg.push(layout.dir.path(), "multi", "multi", false);
    let dir = tempfile::tempdir().unwrap();
    let pod = format!(
        "apiVersion: v1\nkind: Pod\nmetadata: {{name: p}}\nspec:\n  os: {{name: windows}}\n  \
         nodeSelector: {{kubernetes.io/os: windows}}\n  tolerations: [{{key: os, operator: Equal, \
         value: windows, effect: NoSchedule}}]\n  containers:\n  - {{name: web, image: {h}/web:single-ltsc2022}}\n  \
         - {{name: tool, image: {h}/tool:linux}}\n  - {{name: multi, image: {h}/multi:multi}}\n",
        h = reg.host
    );
    std::fs::write(dir.path().join("pod.yaml"), pod).unwrap();
    let run = |extra: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_winlint"))
            .args(["--windows-build", "ltsc2019", "--color", "never"])
            .args(extra)
            .arg(dir.path().join("pod.yaml"))
            .env("DOCKER_CONFIG", dir.path().join("docker"))
            .output()
            .unwrap();
        (
            String::from_utf8_lossy(&out.stdout).to_string(),
            String::from_utf8_lossy(&out.stderr).to_string(),
        )
    };
    let cache = dir.path().join("cache");
    let cache_arg = cache.to_str().unwrap();
    let t = std::time::Instant::now();
    let (offline, _) = run(&[]);
    let offline_time = t.elapsed();
    assert!(!offline.contains("registry:"), "{offline}");
    let t = std::time::Instant::now();
    let (online, err) = run(&["--registry", "--registry-cache", cache_arg]);
    let cold_time = t.elapsed();
    assert!(err.is_empty(), "{err}");
    // The single ltsc2022 image cannot run on ltsc2019 nodes; the Linux-only one has no
    // Windows entry; the multi-OS list has a 1809 entry: no finding.
    assert!(
        online.contains("WIN502")
            && online.contains("registry: it is a single image built for 10.0.20348"),
        "{online}"
    );
    assert!(
        online.contains("WIN507") && online.contains("registry: it has no Windows entry"),
        "{online}"
    );
    assert!(!online.contains("multi:multi"), "{online}");
    assert_eq!(std::fs::read_dir(&cache).unwrap().count(), 3);
    // Again, from the disk cache (one HEAD per tag): the same report.
    let t = std::time::Instant::now();
    let (again, _) = run(&["--registry", "--registry-cache", cache_arg]);
    let warm_time = t.elapsed();
    assert_eq!(again, online);
    println!(
        "winlint on 3 images (not asserted): offline {offline_time:?}, --registry cold cache \
         {cold_time:?}, warm cache {warm_time:?}"
    );
    drop(reg);
    // The registry is gone: each image is judged by its name, with a note.
    let (down, err) = run(&["--registry", "--registry-cache", cache_arg]);
    assert!(err.contains("judged by its name"), "{err}");
    assert!(!down.contains("registry:"), "{down}");
}

/// The user of a manifest list's Windows entry (issue 26 item 2): the kubelet's `runAsNonRoot`
/// check reads the config of the entry the node pulls. `winlint --registry` reads it: a list
/// whose Windows entry runs as ContainerAdministrator makes WIN409 an error, one whose entry
/// sets no `User` a warning (not enforced), one with ContainerUser nothing; offline, none of
/// these private images is known.
fn the_user_of_a_lists_windows_entry_decides_win409() {
    if tools().is_none() {
        return;
    }
    let reg = Registry::start(None);
    let mut l = Layout::new();
    let linux = entry(&l.manifest(&LINUX), &LINUX);
    for (tag, user) in [
        ("admin", Some("ContainerAdministrator")),
        ("nouser", None),
        ("user", Some("ContainerUser")),
    ] {
        let win = entry(&l.manifest_as(&W2022, user), &W2022);
        let old = entry(&l.manifest_as(&W1809, Some("ContainerUser")), &W1809);
        let list = l.index(vec![linux.clone(), old, win]);
        l.tag(&list, tag);
    }
    for tag in ["admin", "nouser", "user"] {
        reg.push(l.dir.path(), tag, "shop/app", true);
    }
    let dir = tempfile::tempdir().unwrap();
    let pod = format!(
        "apiVersion: v1\nkind: Pod\nmetadata: {{name: p}}\nspec:\n  os: {{name: windows}}\n  \
         nodeSelector: {{kubernetes.io/os: windows}}\n  tolerations: [{{key: os, operator: Equal, \
         value: windows, effect: NoSchedule}}]\n  securityContext: {{runAsNonRoot: true}}\n  \
         containers:\n  - {{name: a, image: {h}/shop/app:admin}}\n  \
         - {{name: b, image: {h}/shop/app:nouser}}\n  - {{name: c, image: {h}/shop/app:user}}\n",
        h = reg.host
    );
    std::fs::write(dir.path().join("pod.yaml"), pod).unwrap();
    let win409 = |extra: &[&str]| -> Vec<(String, String)> {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_winlint"))
            .args(["--windows-build", "ltsc2022", "-o", "json"])
            .args(extra)
            .arg(dir.path().join("pod.yaml"))
            .env("DOCKER_CONFIG", dir.path().join("docker"))
            .output()
            .unwrap();
        let report: serde_json::Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
        report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["rule"] == "WIN409")
            .map(|f| {
                (
                    f["pointer"].as_str().unwrap_or_default().to_string(),
                    f["severity"].as_str().unwrap_or_default().to_string(),
                )
            })
            .collect()
    };
    assert_eq!(
        win409(&[]),
        vec![],
        "offline the private images are unknown"
    );
    assert_eq!(
        win409(&["--registry"]),
        vec![
            ("/spec/containers/0/image".to_string(), "error".to_string()),
            (
                "/spec/containers/1/image".to_string(),
                "warning".to_string()
            ),
        ]
    );
    // On ltsc2019 nodes the pull picks the 1809 entry, which runs as ContainerUser.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_winlint"))
        .args(["--windows-build", "ltsc2019", "--registry", "-o", "json"])
        .arg(dir.path().join("pod.yaml"))
        .env("DOCKER_CONFIG", dir.path().join("docker"))
        .output()
        .unwrap();
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        !report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["rule"] == "WIN409"),
        "{report}"
    );
}

/// The tests (libtest-mimic: a test that lacks an outside tool is reported ignored, with how
/// to get it; tests/skip_support).
fn main() {
    use registry_support::skip_support::{multi_thread, run, test};
    run(vec![
        test("platform_lists_from_a_real_registry", || {
            multi_thread(platform_lists_from_a_real_registry())
        }),
        test("basic_auth_with_a_docker_config", || {
            multi_thread(basic_auth_with_a_docker_config())
        }),
        test("the_bearer_token_flow", || {
            multi_thread(the_bearer_token_flow())
        }),
        test("every_matching_credential_is_tried_then_anonymous", || {
            multi_thread(every_matching_credential_is_tried_then_anonymous())
        }),
        test("faults_are_bounded_and_back_off", || {
            multi_thread(faults_are_bounded_and_back_off())
        }),
        test("credentials_stay_on_their_host_across_a_redirect", || {
            multi_thread(credentials_stay_on_their_host_across_a_redirect())
        }),
        test("a_replay_costs_one_lookup_per_tag_per_ttl", || {
            multi_thread(a_replay_costs_one_lookup_per_tag_per_ttl())
        }),
        test("the_disk_cache_saves_the_get_between_runs", || {
            multi_thread(the_disk_cache_saves_the_get_between_runs())
        }),
        test("lookup_latency_against_the_local_registry", || {
            multi_thread(lookup_latency_against_the_local_registry())
        }),
        test(
            "the_cli_looks_images_up_with_registry",
            the_cli_looks_images_up_with_registry,
        ),
        test(
            "the_user_of_a_lists_windows_entry_decides_win409",
            the_user_of_a_lists_windows_entry_decides_win409,
        ),
    ]);
}
