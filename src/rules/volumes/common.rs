//! WIN3xx: volumes and mounts (shared/rules.md §2.4, WIN314 in "Rules added").
//!
//! Everything here skips what the platform itself injects into every pod before admission
//! webhooks see it: the ServiceAccount token volume (`kube-api-access-*` projected volume, or the
//! legacy `<sa>-token-xxxxx` Secret volume) and its mounts, and the API server defaults
//! (`defaultMode: 420`, `terminationMessagePath: /dev/termination-log`). A user cannot act on
//! those, so flagging them would put a finding on every Windows pod of a cluster.
//!
//! What several rules of the family share.

use crate::model::Eval;
use crate::model::windows;
use crate::model::workload::Lookup;
use crate::model::workload::{ContainerRef, PodSite, items};
use serde_json::Value;
use std::collections::HashSet;

// ---------------------------------------------------------------------------------------------
// Helpers

/// Where the ServiceAccount admission plugin mounts the token volume in every container.
pub const SA_MOUNT_PATH: &str = "/var/run/secrets/kubernetes.io/serviceaccount";

/// The volume source key of a volume (`emptyDir`, `secret`, …): its first key that is not `name`.
pub fn volume_type(v: &Value) -> Option<&str> {
    v.as_object()?
        .iter()
        .find(|(k, v)| k.as_str() != "name" && !v.is_null())
        .map(|(k, _)| k.as_str())
}

pub(crate) fn vol_name(v: &Value) -> &str {
    v.get("name").and_then(Value::as_str).unwrap_or("")
}

/// Every volume mount of every container: (container, index in `volumeMounts`, mount).
pub(crate) fn mounts<'a>(
    site: &PodSite<'a>,
) -> impl Iterator<Item = (ContainerRef<'a>, usize, &'a Value)> + 'a {
    site.containers().flat_map(|c| {
        items(c.value, "volumeMounts")
            .enumerate()
            .map(move |(i, m)| (c, i, m))
    })
}

pub(crate) fn mount_path(m: &Value) -> Option<&str> {
    m.get("mountPath").and_then(Value::as_str)
}

pub(crate) fn mount_ptr(site: &PodSite, c: &ContainerRef, i: usize, field: &str) -> String {
    site.ptr(&format!("{}/volumeMounts/{i}/{field}", c.rel()))
}

/// Is volume `v` the ServiceAccount token volume the API server injects into every pod?
///
/// * `kube-api-access-<suffix>`: a projected volume whose sources are only the bound
///   `serviceAccountToken`, the `kube-root-ca.crt` ConfigMap and the `downwardAPI` namespace file
///   (Kubernetes ≥ 1.21/1.22, BoundServiceAccountTokenVolume);
/// * the legacy token Secret volume (Kubernetes < 1.24): a `secret` volume named after its
///   Secret `<serviceaccount>-token-<5 chars>`, mounted only at the ServiceAccount mount path.
///
/// A user-written projected volume with a `secret` source, or any other name, is not injected.
pub fn is_injected_volume(site: &PodSite, v: &Value) -> bool {
    let name = vol_name(v);
    let keys: Vec<&str> = v
        .as_object()
        .map(|m| m.keys().map(String::as_str).collect())
        .unwrap_or_default();
    if name.starts_with("kube-api-access-") && name.len() > "kube-api-access-".len() {
        let Some(sources) = v.lookup("/projected/sources").and_then(Value::as_array) else {
            return false;
        };
        if keys.iter().any(|k| *k != "name" && *k != "projected") {
            return false;
        }
        let mut token = false;
        for s in sources {
            let Some(obj) = s.as_object() else {
                return false;
            };
            for (k, val) in obj {
                match k.as_str() {
                    "serviceAccountToken" => token = true,
                    "configMap"
                        if val.get("name").and_then(Value::as_str) == Some("kube-root-ca.crt") => {}
                    "downwardAPI" => {}
                    _ => return false,
                }
            }
        }
        return token;
    }
    if let Some(secret) = v.get("secret") {
        let secret_name = secret.get("secretName").and_then(Value::as_str);
        let Some((sa, suffix)) = name.rsplit_once("-token-") else {
            return false;
        };
        if secret_name != Some(name)
            || sa.is_empty()
            || suffix.len() != 5
            || !suffix
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
            || keys.iter().any(|k| *k != "name" && *k != "secret")
        {
            return false;
        }
        // Mounted, and only where the kubelet mounts it (the site's index: a walk over every
        // mount per such volume is volumes × mounts).
        return site.mounted_only_at(name, SA_MOUNT_PATH);
    }
    false
}

/// Names of the injected volumes of the pod (their mounts are skipped too).
pub(crate) fn injected_names<'a>(site: &PodSite<'a>) -> HashSet<&'a str> {
    site.volumes()
        .filter(|(_, v)| is_injected_volume(site, v))
        .map(|(_, v)| vol_name(v))
        .collect()
}

/// Is a mount one of the injected ServiceAccount mounts?
pub(crate) fn is_injected_mount(m: &Value, injected: &HashSet<&str>) -> bool {
    m.get("name")
        .and_then(Value::as_str)
        .is_some_and(|n| injected.contains(n))
}

/// Does the target include a Windows build that cannot mount Secret/ConfigMap volumes
/// (≤ 10.0.16299, i.e. WS2016 and 1709)?
pub fn legacy_volume_builds(eval: &Eval) -> bool {
    eval.target
        .windows_builds
        .iter()
        .any(|b| *b <= windows::V1709)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::model::KubeVersion;
    use crate::model::Severity;
    use crate::rules::testutil::{cfg, fixed, hit, hits, ids, ids_in, legacy, set, winok};
    use serde_json::{Value, json};

    /// The WIN3xx/WIN4xx rules (other modules' rules are asserted by their tests).
    pub(crate) const OWN: &[&str] = &["WIN3", "WIN4"];

    /// The vector target with WIN308 (off by default) enabled.
    pub(crate) fn cfg308() -> crate::config::Config {
        let mut c = cfg();
        c.policy.overrides.remove("WIN308");
        c
    }

    /// WINOK with one volume mounted by the container.
    pub(crate) fn pod_with(vol: Value, mount: Value) -> Value {
        let p = set(winok(), "/spec/volumes", json!([vol]));
        set(p, "/spec/containers/0/volumeMounts", json!([mount]))
    }

    pub(crate) fn empty_dir_at(path: &str) -> Value {
        pod_with(
            json!({"name":"data","emptyDir":{}}),
            json!({"name":"data","mountPath":path}),
        )
    }

    /// The seed-era pod of T26: beta OS selector, Docker Hub 1709 image, no spec.os.
    pub(crate) fn legacy_pod(vol: Value) -> Value {
        json!({"apiVersion":"v1","kind":"Pod","metadata":{"name":"legacy"},"spec":{
            "nodeSelector":{"beta.kubernetes.io/os":"windows"},
            "containers":[{"name":"app","image":"microsoft/windowsservercore:1709",
                "volumeMounts":[{"name":"secrets","mountPath":"C:\\secrets"}]}],
            "volumes":[vol]}})
    }

    /// What a real API server injects into every pod (BoundServiceAccountTokenVolume).
    pub(crate) fn kube_api_access_pod() -> Value {
        let vol = json!({"name":"kube-api-access-7xk2p","projected":{"defaultMode":420,"sources":[
            {"serviceAccountToken":{"expirationSeconds":3607,"path":"token"}},
            {"configMap":{"name":"kube-root-ca.crt","items":[{"key":"ca.crt","path":"ca.crt"}]}},
            {"downwardAPI":{"items":[{"fieldRef":{"apiVersion":"v1","fieldPath":"metadata.namespace"},"path":"namespace"}]}}]}});
        let mount =
            json!({"name":"kube-api-access-7xk2p","mountPath":SA_MOUNT_PATH,"readOnly":true});
        pod_with(vol, mount)
    }

    #[test]
    fn injected_kube_api_access_volume_gives_nothing() {
        let pod = kube_api_access_pod();
        assert_eq!(ids_in(&pod, &cfg(), OWN), Vec::<&str>::new());
        let mut k134 = cfg();
        k134.target.kubernetes = KubeVersion::new(1, 34);
        assert_eq!(ids_in(&pod, &k134, OWN), Vec::<&str>::new());
        // Also in a Deployment template.
        let dep = json!({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},
            "spec":{"template":{"metadata":{},"spec":pod["spec"].clone()}}});
        assert_eq!(ids_in(&dep, &cfg(), OWN), Vec::<&str>::new());
        // The platform injects it on every target, legacy builds included.
        let mut old = legacy();
        old.target.kubernetes = KubeVersion::new(1, 22);
        assert_eq!(ids_in(&pod, &old, OWN), Vec::<&str>::new());
    }

    #[test]
    fn lookalike_of_the_injected_volume_is_flagged() {
        // A user-written projected volume named like the injected one, with a secret source.
        let pod = set(
            kube_api_access_pod(),
            "/spec/volumes/0/projected/sources/3",
            json!({"secret":{"name":"db"}}),
        );
        assert_eq!(
            hits(&pod, &cfg(), "WIN314"),
            hit(
                Severity::Warning,
                "/spec/volumes/0/projected/sources/3/secret"
            )
        );
        assert_eq!(hits(&pod, &cfg308(), "WIN308").len(), 1);
    }

    // --- §6 vectors -------------------------------------------------------------------------

    #[test]
    fn t16_hostprocess_pipe_mount_is_not_a_volume_finding() {
        let pod = json!({"apiVersion":"v1","kind":"Pod","metadata":{"name":"hp"},"spec":{
            "os":{"name":"windows"},"nodeSelector":{"kubernetes.io/os":"windows"},
            "tolerations":[{"key":"os","operator":"Equal","value":"windows","effect":"NoSchedule"}],
            "hostNetwork":true,
            "securityContext":{"windowsOptions":{"hostProcess":true,"runAsUserName":"NT AUTHORITY\\SYSTEM"}},
            "volumes":[{"name":"pipe","hostPath":{"path":"\\\\.\\pipe\\containerd-containerd"}}],
            "containers":[{"name":"a","image":"mcr.microsoft.com/windows/nanoserver:ltsc2022",
                "volumeMounts":[{"name":"pipe","mountPath":"\\\\.\\pipe\\containerd-containerd"}]}]}});
        assert_eq!(ids_in(&pod, &cfg(), OWN), Vec::<&str>::new());
    }

    #[test]
    fn t17_docker_pipe_gives_nothing() {
        let pipe = r"\\.\pipe\docker_engine";
        let pod = pod_with(
            json!({"name":"docker","hostPath":{"path":pipe}}),
            json!({"name":"docker","mountPath":pipe}),
        );
        assert_eq!(ids(&pod, &cfg()), Vec::<&str>::new());
    }

    #[test]
    fn t19_lowercase_drive_is_fine() {
        assert_eq!(
            ids_in(&empty_dir_at(r"c:\data"), &cfg(), OWN),
            Vec::<&str>::new()
        );
    }

    #[test]
    fn t26_secret_volume_legacy() {
        let pod = legacy_pod(json!({"name":"secrets","secret":{"secretName":"db"}}));
        // Expected [WIN302, WIN504]; WIN504 belongs to the image rules.
        assert_eq!(ids_in(&pod, &legacy(), OWN), vec!["WIN302"]);
        assert_eq!(
            hits(&pod, &legacy(), "WIN302"),
            hit(Severity::Error, "/spec/volumes/0/secret")
        );
        // configMap, downwardAPI likewise; the seed K1.9 allow-list does not add WIN301.
        for ty in ["configMap", "downwardAPI"] {
            let p = legacy_pod(json!({"name":"secrets", ty: {}}));
            assert_eq!(ids_in(&p, &legacy(), OWN), vec!["WIN302"], "{ty}");
        }
        // WS2016 (14393) is ≤1709 too.
        let mut ws2016 = legacy();
        ws2016.target.windows_builds = vec![windows::WS2016];
        assert_eq!(ids_in(&pod, &ws2016, OWN), vec!["WIN302"]);
    }

    #[test]
    fn t27_secret_volume_modern_is_cleartext_warning() {
        // rules.md §6 T27 says [] — written before WIN314 was added; the binding product
        // decision ("secret volumes: WIN302 … and WIN314 on modern targets") wins.
        let pod = pod_with(
            json!({"name":"secrets","secret":{"secretName":"db"}}),
            json!({"name":"secrets","mountPath":r"C:\secrets"}),
        );
        assert_eq!(ids_in(&pod, &cfg(), OWN), vec!["WIN314"]);
        assert_eq!(
            hits(&pod, &cfg(), "WIN314"),
            hit(Severity::Warning, "/spec/volumes/0/secret")
        );
        // Mixed 1709 + 2022 target: WIN302 applies instead, never both.
        let mut mixed = cfg();
        mixed.target.windows_builds = vec![windows::V1709, windows::WS2022];
        assert_eq!(ids_in(&pod, &mixed, OWN), vec!["WIN302"]);
        // 1803 (K1.12): Secret volumes mount, WIN314 applies.
        let mut t1803 = cfg();
        t1803.target.kubernetes = KubeVersion::new(1, 12);
        t1803.target.windows_builds = vec![windows::V1803];
        assert_eq!(ids_in(&pod, &t1803, OWN), vec!["WIN314"]);
        // configMap volumes are not secret.
        let cm = pod_with(
            json!({"name":"cfg","configMap":{"name":"cfg"}}),
            json!({"name":"cfg","mountPath":r"C:\cfg"}),
        );
        assert_eq!(ids_in(&cm, &cfg(), OWN), Vec::<&str>::new());
    }

    #[test]
    fn t28_projected_secret_and_token() {
        let vol = json!({"name":"secrets","projected":{"sources":[
            {"secret":{"name":"db"}},
            {"serviceAccountToken":{"path":"token","expirationSeconds":3600}}]}});
        let pod = legacy_pod(vol.clone());
        assert_eq!(ids_in(&pod, &legacy(), OWN), vec!["WIN302"]);
        assert_eq!(
            hits(&pod, &legacy(), "WIN302"),
            hit(Severity::Error, "/spec/volumes/0/projected")
        );
        // Default target: the secret source is written in clear text (see t27 on the vector).
        let modern = pod_with(vol, json!({"name":"secrets","mountPath":r"C:\secrets"}));
        assert_eq!(ids_in(&modern, &cfg(), OWN), vec!["WIN314"]);
        assert_eq!(
            hits(&modern, &cfg(), "WIN314"),
            hit(
                Severity::Warning,
                "/spec/volumes/0/projected/sources/0/secret"
            )
        );
        // A user-written projected token volume (no secret) is fine on modern targets.
        let tok = set(
            modern,
            "/spec/volumes/0/projected/sources",
            json!([{"serviceAccountToken":{"path":"token"}}]),
        );
        assert_eq!(ids_in(&tok, &cfg(), OWN), Vec::<&str>::new());
    }

    #[test]
    fn nothing_on_linux_pods() {
        let linux = json!({"apiVersion":"v1","kind":"Pod","metadata":{"name":"l"},"spec":{
            "volumes":[{"name":"s","secret":{"secretName":"x","defaultMode":256}},{"name":"n","nfs":{"server":"a","path":"/"}},
                {"name":"m","emptyDir":{"medium":"Memory"}}],
            "containers":[{"name":"a","image":"nginx:1.25","volumeMounts":[
                {"name":"s","mountPath":"/s","mountPropagation":"HostToContainer","subPath":"x"}]}]}});
        assert_eq!(ids_in(&linux, &cfg(), OWN), Vec::<&str>::new());
        assert_eq!(ids_in(&linux, &legacy(), OWN), Vec::<&str>::new());
    }

    #[test]
    fn no_fixes_when_a_pod_is_updated() {
        use crate::engine::lint_object;
        use crate::model::Context;
        use crate::model::Operation;
        let pod = pod_with(
            json!({"name":"data","emptyDir":{"medium":"Memory"}}),
            json!({"name":"data","mountPath":"/data","mountPropagation":"HostToContainer"}),
        );
        let cfg = cfg308();
        let r = lint_object(&pod, &cfg, &Context::default(), Operation::Update);
        let mut got: Vec<&str> = r.findings.iter().map(|f| f.rule.id).collect();
        got.sort();
        assert_eq!(got, vec!["WIN303", "WIN304", "WIN308"]);
        assert!(r.findings.iter().all(|f| f.fix.is_none()));
        // Workload templates stay fixable.
        let dep = json!({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},
            "spec":{"template":{"metadata":{},"spec":pod["spec"].clone()}}});
        let r = lint_object(&dep, &cfg, &Context::default(), Operation::Update);
        assert_eq!(r.findings.iter().filter(|f| f.fix.is_some()).count(), 3);
        let f = fixed(&dep, &cfg, "WIN308");
        assert_eq!(
            f["spec"]["template"]["spec"]["containers"][0]["volumeMounts"][0]["mountPath"],
            "C:/data"
        );
    }
}
