//! The GMSACredentialSpec facts (src/cluster/gmsa.rs) and WIN110 against a real kube-apiserver
//! 1.32 (tests/k8s_support), with the CRD of kubernetes-sigs/windows-gmsa vendored in
//! testdata/crds/gmsa-crd.yaml: without the CRD there are no facts and no error (the one-shot
//! read, the live watch, `serve`'s readiness); once installed, the names are read once and
//! followed live (create, delete), and `winlint serve` warns about a pod naming a spec the
//! cluster lacks; a client without the right to list them gets no facts, not an error.
//! Skips (and says why) without `KUBEBUILDER_ASSETS`, except under `CI=true`.
//!
//! The CRD is cluster-wide: one test walks the phases in order (this binary has its own API
//! server, so no other test file sees it).

mod k8s_support;

use std::collections::BTreeSet;

use k8s_support::{CONVERGE, SPARE_USERS, Webhook, client, cluster, eventually, runtime};
use serde_json::{Value, json};
use winlint::cluster::{ClusterWatch, WatchOptions, read_once};

const CRD: &str = include_str!("../testdata/crds/gmsa-crd.yaml");
const IIS_2022: &str = "mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2022";

fn credspec(name: &str) -> Value {
    json!({"apiVersion": "windows.k8s.io/v1", "kind": "GMSACredentialSpec",
        "metadata": {"name": name},
        "credspec": {"CmsPlugins": ["ActiveDirectory"],
            "DomainJoinConfig": {"DnsName": "contoso.com", "DnsTreeName": "contoso.com",
                "Guid": "244818ae-87ac-4fcd-92ec-e79e5252348a", "MachineAccountName": "webapp1",
                "NetBiosName": "CONTOSO", "Sid": "S-1-5-21-2126449477-2524075714-3094792973"},
            "ActiveDirectoryConfig": {"GroupManagedServiceAccounts": [
                {"Name": "webapp1", "Scope": "CONTOSO"}]}}})
}

/// A Windows pod in `ns` whose pod-level windowsOptions name `spec`.
fn pod(ns: &str, name: &str, spec: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": ns},
        "spec": {"os": {"name": "windows"}, "nodeSelector": {"kubernetes.io/os": "windows"},
            "securityContext": {"windowsOptions": {"gmsaCredentialSpecName": spec}},
            "containers": [{"name": "iis", "image": IIS_2022}]}})
}

/// The WIN110 warnings `winlint serve` gives a dry-run create of `p` (which must be admitted:
/// WIN110 is a warning).
fn win110_warnings(c: &k8s_support::Guard, p: &Value) -> Vec<String> {
    let out = c.dry_run_create(p).ok();
    out.warnings
        .into_iter()
        .filter(|w| w.starts_with("WIN110"))
        .collect()
}

fn names(v: &[&str]) -> Option<BTreeSet<String>> {
    Some(v.iter().map(|s| s.to_string()).collect())
}

fn gmsa_credential_spec_facts_with_and_without_the_crd() {
    let Some(c) = cluster() else { return };
    let rt = runtime();
    let admin = client(&rt, &c.kubeconfig);

    // 1. No CRD: no facts, and nothing fails.
    let facts = rt
        .block_on(read_once(&admin, 500))
        .expect("facts without the CRD");
    assert_eq!(facts.gmsa_credential_specs, None);
    let w = {
        let _g = rt.enter();
        ClusterWatch::start(admin.clone(), WatchOptions::default())
    };
    assert!(rt.block_on(w.wait_synced(CONVERGE)), "{:#?}", w.status());
    assert!(w.status().healthy(), "an absent CRD is no failure");
    let wh = Webhook::watching(&c, None, None, &[]);
    let ns = c.unique("gmsa");
    wh.namespace(&ns, &[]);
    eventually("serve logs that it has no GMSACredentialSpec facts", || {
        let log = wh.log_text();
        if log.contains("no GMSACredentialSpec facts (WIN110 stays silent)") {
            Ok(())
        } else {
            Err(log)
        }
    });
    assert_eq!(wh.get("/readyz"), (200, "ready: live cluster facts".into()));
    assert!(win110_warnings(&c, &pod(&ns, "before", "webapp01")).is_empty());

    // 2. The CRD and one spec: read once, and followed live.
    c.kubectl(&["apply", "-f", "-"], Some(CRD)).ok();
    c.kubectl(
        &[
            "wait",
            "--for=condition=established",
            "--timeout=60s",
            "crd/gmsacredentialspecs.windows.k8s.io",
        ],
        None,
    )
    .ok();
    c.create(&credspec("webapp1")).ok();
    let facts = rt.block_on(read_once(&admin, 500)).expect("facts");
    assert_eq!(facts.gmsa_credential_specs, names(&["webapp1"]));
    eventually("the watch lists the spec", || {
        match w.facts().gmsa_credential_specs.clone() {
            n if n == names(&["webapp1"]) => Ok(()),
            other => Err(format!("{other:?}")),
        }
    });
    assert!(w.status().healthy());

    // 3. serve warns about the name the cluster lacks, and admits the pod.
    let warned = eventually("serve warns about webapp01", || {
        match win110_warnings(&c, &pod(&ns, "typo", "webapp01")).pop() {
            Some(w) => Ok(w),
            None => Err("no WIN110 warning yet".into()),
        }
    });
    assert!(
        warned.ends_with("Use \"webapp1\" or create GMSACredentialSpec \"webapp01\"")
            && warned.contains("does not exist"),
        "{warned}"
    );
    assert!(win110_warnings(&c, &pod(&ns, "right", "webapp1")).is_empty());

    // 4. Deleted: the watch follows, and the name is reported.
    c.delete("gmsacredentialspecs.windows.k8s.io", None, "webapp1")
        .ok();
    eventually("the watch drops the spec", || {
        match w.facts().gmsa_credential_specs.clone() {
            n if n == names(&[]) => Ok(()),
            other => Err(format!("{other:?}")),
        }
    });
    eventually("serve warns about webapp1 once deleted", || {
        if win110_warnings(&c, &pod(&ns, "gone", "webapp1")).is_empty() {
            Err("no WIN110 warning yet".into())
        } else {
            Ok(())
        }
    });

    // 5. A client that may list the other facts but not these: no facts, no error.
    let (user, token) = SPARE_USERS[0];
    c.grant_facts_reader(user);
    let restricted = client(&rt, &c.kubeconfig_for(user, token));
    // RBAC bindings reach the authorizer asynchronously: wait for the granted lists first.
    let facts = eventually("the restricted user's facts", || {
        rt.block_on(read_once(&restricted, 500))
            .map_err(|e| e.to_string())
    });
    assert_eq!(facts.gmsa_credential_specs, None, "403 is no facts");
}

/// The tests (libtest-mimic: a test that lacks an outside tool is reported ignored, with how
/// to get it; tests/skip_support).
fn main() {
    use k8s_support::skip_support::{run, test};
    run(vec![test(
        "gmsa_credential_spec_facts_with_and_without_the_crd",
        gmsa_credential_spec_facts_with_and_without_the_crd,
    )]);
}
