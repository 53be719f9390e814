//! `winlint serve` behind a real kube-apiserver 1.32 (tests/k8s_support): the webhooks of
//! `winlint manifests --url` registered by URL, pods created with kubectl, and what the API
//! server answered and stored. Skips (and says why) without `KUBEBUILDER_ASSETS`, except under
//! `CI=true`.

mod k8s_support;

use std::sync::OnceLock;
use std::time::Instant;

use k8s_support::{Webhook, cluster};
use serde_json::{Value, json};

/// One `winlint serve` with the default configuration for this binary's tests.
fn webhook(c: &k8s_support::Guard) -> &'static Webhook {
    static WH: OnceLock<Webhook> = OnceLock::new();
    WH.get_or_init(|| {
        let t = Instant::now();
        let wh = Webhook::start(c, None, &[]);
        eprintln!("winlint serve registered and called in {:.2?}", t.elapsed());
        wh
    })
}

fn pod(ns: &str, name: &str, image: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"containers": [{"name": "app", "image": image}]}})
}

fn has_windows_toleration(spec: &Value) -> bool {
    spec["tolerations"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|t| t["key"] == "os" && t["value"] == "windows" && t["effect"] == "NoSchedule")
}

fn windows_pod_without_selectors_is_mutated_and_stored() {
    let Some(c) = cluster() else { return };
    let t = Instant::now();
    let wh = webhook(&c);
    let ns = c.unique("mutate");
    wh.namespace(&ns, &[]);
    let created = c
        .create(&pod(
            &ns,
            "iis",
            "mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2022",
        ))
        .ok();
    // What the API server stored, read back: not just the create response.
    let stored = c.get("pod", Some(&ns), "iis").ok().json();
    for v in [created.json(), stored] {
        let spec = &v["spec"];
        assert_eq!(spec["nodeSelector"]["kubernetes.io/os"], "windows", "{v:#}");
        assert!(has_windows_toleration(spec), "{v:#}");
        assert_eq!(spec["os"]["name"], "windows", "{v:#}");
    }
    eprintln!("test took {:.2?}", t.elapsed());
}

fn ltsc2019_image_on_the_default_target_is_denied_with_win502() {
    let Some(c) = cluster() else { return };
    let t = Instant::now();
    let wh = webhook(&c);
    let ns = c.unique("deny");
    wh.namespace(&ns, &[]);
    let out = c
        .create(&pod(
            &ns,
            "old",
            "mcr.microsoft.com/windows/servercore:ltsc2019",
        ))
        .err();
    assert!(out.stderr.contains("denied the request"), "{out:#?}");
    assert!(out.stderr.contains("WIN502"), "{out:#?}");
    // Nothing stored.
    let get = c.get("pod", Some(&ns), "old").err();
    assert!(
        get.stderr.contains("NotFound") || get.stderr.contains("not found"),
        "{get:#?}"
    );
    eprintln!("test took {:.2?}", t.elapsed());
}

fn linux_pod_is_stored_untouched() {
    let Some(c) = cluster() else { return };
    let t = Instant::now();
    let wh = webhook(&c);
    let ns = c.unique("linux");
    wh.namespace(&ns, &[]);
    c.create(&pod(&ns, "web", "nginx:1.27")).ok();
    let stored = c.get("pod", Some(&ns), "web").ok().json();
    let spec = &stored["spec"];
    assert!(spec.get("nodeSelector").is_none(), "{stored:#}");
    assert!(spec.get("os").is_none(), "{stored:#}");
    assert!(!has_windows_toleration(spec), "{stored:#}");
    assert!(
        stored["metadata"]["annotations"]
            .as_object()
            .is_none_or(|a| !a.keys().any(|k| k.starts_with("winlint.io/"))),
        "{stored:#}"
    );
    // The webhook did see it (the namespace is served): the log names the pod.
    assert!(
        wh.log_text().contains("\"web\""),
        "winlint never saw the pod"
    );
    eprintln!("test took {:.2?}", t.elapsed());
}

fn server_side_dry_run_shows_the_same_and_stores_nothing() {
    let Some(c) = cluster() else { return };
    let t = Instant::now();
    let wh = webhook(&c);
    let ns = c.unique("dryrun");
    wh.namespace(&ns, &[]);

    let win = c
        .dry_run_create(&pod(
            &ns,
            "win",
            "mcr.microsoft.com/windows/nanoserver:ltsc2022",
        ))
        .ok()
        .json();
    assert_eq!(
        win["spec"]["nodeSelector"]["kubernetes.io/os"], "windows",
        "{win:#}"
    );
    assert!(has_windows_toleration(&win["spec"]), "{win:#}");
    assert_eq!(win["spec"]["os"]["name"], "windows", "{win:#}");

    let denied = c
        .dry_run_create(&pod(
            &ns,
            "old",
            "mcr.microsoft.com/windows/nanoserver:ltsc2019",
        ))
        .err();
    assert!(denied.stderr.contains("WIN502"), "{denied:#?}");

    let linux = c.dry_run_create(&pod(&ns, "web", "nginx:1.27")).ok().json();
    assert!(linux["spec"].get("nodeSelector").is_none(), "{linux:#}");

    // A dry run stores nothing.
    let listed = c
        .kubectl(&["get", "pods", "-n", &ns, "-o", "json"], None)
        .ok()
        .json();
    assert_eq!(listed["items"], json!([]), "{listed:#}");
    // And winlint was told it was a dry run.
    assert!(
        wh.log_text()
            .lines()
            .any(|l| l.contains("\"win\"") && l.contains("\"dry_run\":true")),
        "{}",
        wh.log_text()
    );
    eprintln!("test took {:.2?}", t.elapsed());
}

/// The tests (libtest-mimic: a test that lacks an outside tool is reported ignored, with how
/// to get it; tests/skip_support).
fn main() {
    use k8s_support::skip_support::{run, test};
    run(vec![
        test(
            "windows_pod_without_selectors_is_mutated_and_stored",
            windows_pod_without_selectors_is_mutated_and_stored,
        ),
        test(
            "ltsc2019_image_on_the_default_target_is_denied_with_win502",
            ltsc2019_image_on_the_default_target_is_denied_with_win502,
        ),
        test(
            "linux_pod_is_stored_untouched",
            linux_pod_is_stored_untouched,
        ),
        test(
            "server_side_dry_run_shows_the_same_and_stores_nothing",
            server_side_dry_run_shows_the_same_and_stores_nothing,
        ),
    ]);
}
