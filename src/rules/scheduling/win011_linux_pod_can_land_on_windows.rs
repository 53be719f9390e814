//! WIN011 `linux-pod-can-land-on-windows`.

use crate::model::classify::{self, Os};
use crate::model::image::ImageInfo;
use crate::model::labels::OS_LABEL;
use crate::model::labels::OS_LABELS;
use crate::model::meta::{Area, Mutation, Reads, Recorded, RuleOs};
use crate::model::placement;
use crate::model::schedule;
use crate::model::workload::{ContainerRef, PodSite};
use crate::model::{Eval, Finding, Fix, FixSafety, RuleMeta, Severity};
use crate::rules::Rule;
use crate::rules::images::image_registry::{self, LinuxOnly};
use crate::rules::scheduling::common::{is_daemonset, node_selector_ops, selector_ptr};
use serde_json::Value;

/// WIN011 in the registry.
pub const RULE: Rule = Rule {
    meta: &WIN011,
    check: linux_pod_can_land_on_windows,
};

pub static WIN011: RuleMeta = RuleMeta {
    id: "WIN011",
    name: "linux-pod-can-land-on-windows",
    severity: Severity::Warning,
    summary: "Pod whose images have no Windows variant, without an OS pin, that can land on a Windows node of the target",
    docs: r#"## What it does
Finds pods of every pod-bearing kind (but DaemonSets, see below) that

* have no OS pin: no `kubernetes.io/os` node selector, no required node affinity on it, no
  RuntimeClass whose scheduling supplies one, and no selector on another label that keeps them off
  the Windows nodes;
* can land on a Windows node of the target, by the scheduler's own filters (selectors, required
  node affinity, taints and tolerations): with the cluster's nodes known (`--cluster`, `audit`,
  `winlint serve`), an observed Windows node they fit; offline, the Windows nodes of the
  configured target when they are untainted (`--platform aks|eks`, `--windows-taint none`) or
  their taints are tolerated. When the taint is only winlint's assumption (no `--platform`, no
  `--windows-taint`, no cluster), a pod is reported only when one of its tolerations swallows
  every taint (`operator: Exists` without a key);
* and whose every image (init and app containers) does not run on Windows: with `--registry`
  (CLI) or `registry.mode` (webhook), a manifest that lists no Windows entry; by name, the images
  winlint knows are Linux-only (`nginx`, `redis`, `busybox`, `alpine`, `*-alpine` official tags,
  `gcr.io/distroless/*`, the Linux-only `registry.k8s.io` images, `dotnet/aspnet:8.0`, …).

A multi-OS image (`registry.k8s.io/pause:3.9`, `mcr.microsoft.com/dotnet/runtime:7.0`, a registry
manifest list with a Windows entry) is never reported: such a pod may run on the Windows node. A pod
whose images winlint knows nothing about (an ACR, ghcr or envoy image, without registry look-ups)
and that can land on a Windows node gets an info, without a fix: winlint cannot tell which OS to
pin, so the info says to pin it or to enable registry look-ups (`--registry`; `registry.mode` with
the namespace's pull secrets in the webhook), which turn it into a warning or into nothing. The
webhook does not warn of it.

`spec.os.name: linux` is no pin: the scheduler does not read it; the kubelet of the Windows node
rejects the pod (`PodOSNotSupported`, `pkg/kubelet/lifecycle/predicate.go`), and a controller
recreates it, maybe on the same node. Neither is the pod label `kubernetes.io/os: linux`
(the kubelet rejects it with `PodOSSelectorNodeLabelDoesNotMatch`).

A pod bound to its node by `spec.nodeName` (`kubectl debug node/NAME --image=busybox`, static
placement) skips the scheduler: with the cluster's nodes known, one bound to a Windows node whose
images are Linux-only is an error (it fails there, and nothing moves it; no fix, since no
selector changes a bound pod's node). The kubelet does not refuse it: it compares only
`spec.os.name` and the pod's `kubernetes.io/os` label with the node's
(`pkg/kubelet/lifecycle/predicate.go`), so the pull fails. A Windows pod bound to a Linux node is
WIN001's.

DaemonSets are WIN603's: a DaemonSet targets every node whatever its images, so WIN603 reports
every Linux DaemonSet without an OS pin and this rule none (and never a pod a DaemonSet owns: its
controller picked its node). This rule reports the other kinds, only when the images prove the
pod cannot run on Windows.

## Why is this bad?
On clusters whose Windows nodes are untainted (AKS and EKS by default) the scheduler treats them
like any other node. The pod lands there and sits in `ImagePullBackOff` with `no matching manifest
for windows/amd64`: the most reported mixed-cluster incident (ingress-nginx admission jobs,
cert-manager, Helm hooks, controllers).

## Example
```yaml
kind: Deployment
spec:
  template:
    spec:
      containers:
      - name: cache
        image: redis:7.2
```

## Fix
Safe: add `nodeSelector: {kubernetes.io/os: linux}`. In the webhook, `mutation.linuxGuard: auto`
(the default) applies this fix at pod creation and says so in a warning and in
`winlint.io/mutated` (`linuxGuard`).

## Severity
`warning` for a pod whose images are Linux-only; `error` for one bound by `spec.nodeName` to a
Windows node; `info` (no fix) for one whose images winlint does not know.
"#,
    fix: Some(FixSafety::Safe),
    source: "issue 18, ingress-nginx#7480, kubernetes#94366, Azure/AKS#1905",
    applies: "all",
    os: RuleOs::Any,
    default_on: true,
    reads: Reads::PLACEMENT.and(Reads::of(&[
        Area::Labels,
        Area::Os,
        Area::Containers,
        Area::Evidence,
    ])),
    mutation: Mutation::placing(Recorded::LinuxGuard),
};

pub(crate) fn linux_pod_can_land_on_windows(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    // WIN603 reports DaemonSets; a pod a DaemonSet owns was placed by its controller.
    if is_daemonset(site) || owned_by_daemonset(site) || eval.class.is_windows() {
        return Vec::new();
    }
    if let Some(node) = schedule::node_name(site.spec) {
        return named_windows_node(site, eval, node);
    }
    if classify::has_os_pin(site, eval.context, Os::Linux)
        || classify::has_os_pin(site, eval.context, Os::Windows)
    {
        return Vec::new();
    }
    // The images first: cheap, and most pods stop here.
    let why = match images_on_windows(eval) {
        Images::MayRun => return Vec::new(),
        Images::LinuxOnly(why) => why,
        Images::Unknown(unknown) => return unknown_images(site, eval, &unknown),
    };
    let placement = eval.placement(site);
    let Some(landing) = placement::windows_landing(site, eval.target, eval.context, placement)
    else {
        return Vec::new();
    };
    let key = eval.target.os_label_key();
    let message = format!(
        "{}, and the pod has no OS node selector: it can land on {}, where {}. Add nodeSelector {key}: linux",
        why.join("; "),
        landing.describe(),
        failure(site),
    );
    let mut f = Finding::new(&WIN011, selector_ptr(site), message);
    // Never overwrite an OS key (a value no node has is WIN010's business).
    if OS_LABELS.iter().all(|k| site.node_selector(k).is_none()) {
        f = f.with_fix(Fix {
            safety: FixSafety::Safe,
            description: format!("add nodeSelector {key}=linux"),
            ops: node_selector_ops(site, key, "linux"),
        });
    }
    vec![f]
}

/// A pod bound by `spec.nodeName` (`kubectl debug node/NAME --image=busybox`, static
/// placement) to an observed Windows node whose images cannot run there: no scheduler moves it
/// and no OS pin helps (the kubelet admits a pod without `spec.os` whatever its images,
/// `pkg/kubelet/lifecycle/predicate.go` compares only `spec.os.name` and the pod's OS label with
/// the node's), so it fails on that node: an error, and no fix. Known only with the cluster's
/// nodes (`--cluster`, `audit`, `serve`): offline a node name says nothing.
fn named_windows_node(site: &PodSite, eval: &Eval, node: &str) -> Vec<Finding> {
    let placement = eval.placement(site);
    if !placement.observed() {
        return Vec::new();
    }
    let Some(group) = placement.windows_fitting().into_iter().next() else {
        return Vec::new();
    };
    let Images::LinuxOnly(why) = images_on_windows(eval) else {
        return Vec::new();
    };
    let message = format!(
        "pod bound to Windows node {node} ({}) by spec.nodeName, but {}: {}. Name a Linux node, or use a Windows image (kubectl debug node/{node} --image=mcr.microsoft.com/powershell:lts-nanoserver-ltsc2022)",
        group.describe(),
        why.join("; "),
        failure(site),
    );
    vec![Finding::new(&WIN011, site.ptr("/nodeName"), message).severity(Severity::Error)]
}

fn owned_by_daemonset(site: &PodSite) -> bool {
    site.meta
        .get("ownerReferences")
        .and_then(Value::as_array)
        .is_some_and(|o| o.iter().any(|r| r["kind"] == "DaemonSet"))
}

/// A pod without an OS pin whose images winlint does not know (an ACR, ghcr or envoy image
/// without `--registry`): it may be Linux-only, and it can land on a Windows node of the target.
/// Only an info, without a fix (winlint cannot tell which OS to pin): the user can pin the OS
/// or let winlint look the image up. Said where the user can act: `audit`, `--cluster` and
/// `--platform aks|eks` runs (the webhook does not warn of infos).
fn unknown_images(site: &PodSite, eval: &Eval, unknown: &[String]) -> Vec<Finding> {
    let placement = eval.placement(site);
    let Some(landing) = placement::windows_landing(site, eval.target, eval.context, placement)
    else {
        return Vec::new();
    };
    let (images, is) = match unknown {
        [one] => (format!("image {one}"), "is"),
        many => (format!("images {}", many.join(", ")), "are"),
    };
    let message = format!(
        "{images} {is} unknown to winlint and the pod has no OS node selector: it can land on {}, where a Linux-only image fails to pull. Pin the OS (nodeSelector {}: linux or windows), or enable registry look-ups (--registry; registry.mode in the webhook, with the namespace's pull secrets)",
        landing.describe(),
        eval.target.os_label_key(),
    );
    vec![Finding::new(&WIN011, selector_ptr(site), message).severity(Severity::Info)]
}

/// What the pod's images (init and app containers; ephemeral ones do not decide where a pod
/// lands) say about Windows.
enum Images {
    /// One has a Windows entry or is known to run there.
    MayRun,
    /// None runs on Windows: why, per image.
    LinuxOnly(Vec<String>),
    /// None is known to run on Windows, and these are unknown to winlint (no registry facts,
    /// nothing known of their name).
    Unknown(Vec<String>),
}

fn images_on_windows(eval: &Eval) -> Images {
    let mut why = Vec::new();
    // The images known Linux-only by name alone, said together.
    let mut by_name: Vec<String> = Vec::new();
    let mut unknown: Vec<String> = Vec::new();
    for (c, info) in eval
        .images
        .iter()
        .filter(|(c, _)| c.list != "ephemeralContainers")
    {
        match lacks_windows(eval, c, info) {
            None if is_unknown(eval, c, info) => {
                let image = c.image().unwrap_or_default().to_string();
                if !unknown.contains(&image) {
                    unknown.push(image);
                }
            }
            None => return Images::MayRun,
            Some(Lacks::ByName(image)) if by_name.contains(&image) => {}
            Some(Lacks::ByName(image)) => by_name.push(image),
            Some(Lacks::Because(w)) => why.push(w),
        }
    }
    if !unknown.is_empty() {
        return Images::Unknown(unknown);
    }
    match by_name.as_slice() {
        [] => {}
        [one] => why.insert(0, format!("{one} is a Linux-only image")),
        [all @ .., last] => why.insert(
            0,
            format!("{} and {last} are Linux-only images", all.join(", ")),
        ),
    }
    if why.is_empty() {
        Images::MayRun
    } else {
        Images::LinuxOnly(why)
    }
}

/// An image winlint knows nothing about: no registry facts, and its name tells no OS, no build
/// and no known platforms. A reference that does not parse is WIN509's, not unknown.
fn is_unknown(eval: &Eval, c: &ContainerRef, info: &ImageInfo) -> bool {
    info.reference.is_some()
        && image_registry::facts(eval, c).is_none()
        && !info.windows
        && !info.linux
        && !info.multi
        && info.known.is_none()
        && info.build.is_none()
}

/// How winlint knows an image has no Windows variant.
enum Lacks {
    /// It is on the list of Linux-only images.
    ByName(String),
    /// The registry's platforms, or what winlint knows of the tag.
    Because(String),
}

/// Why one container's image has no Windows variant: the registry's platforms when looked up,
/// else what winlint knows of its name.
fn lacks_windows(eval: &Eval, c: &ContainerRef, info: &ImageInfo) -> Option<Lacks> {
    let image = c.image()?;
    Some(match image_registry::linux_only(eval, c, info)? {
        LinuxOnly::Registry(f) => Lacks::Because(format!(
            "{image} has no Windows entry ({}: {})",
            image_registry::source(eval, c),
            image_registry::platforms(&f)
        )),
        LinuxOnly::ByName => match info.known {
            Some(crate::model::known_images::Platforms::LinuxOnly(w)) => {
                Lacks::Because(format!("{image} has no Windows image ({})", w.why()))
            }
            _ => Lacks::ByName(image.to_string()),
        },
    })
}

/// What happens on the Windows node: the kubelet rejects a pod that declares Linux (by
/// `spec.os.name` or its `kubernetes.io/os` label, `pkg/kubelet/lifecycle/predicate.go`),
/// else the pull fails.
fn failure(site: &PodSite) -> &'static str {
    if site.str("/os/name") == Some("linux") {
        "the kubelet rejects it (PodOSNotSupported: spec.os.name does not steer the scheduler, it only makes the kubelet refuse the pod)"
    } else if site.label(OS_LABEL) == Some("linux") {
        "the kubelet rejects it (PodOSSelectorNodeLabelDoesNotMatch: the pod's kubernetes.io/os label does not steer the scheduler)"
    } else {
        "the pull fails with \"no matching manifest for windows/amd64\" and the pod sits in ImagePullBackOff"
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::sync::Arc;

    use serde_json::{Value, json};

    use crate::config::Config;
    use crate::engine::lint_object;
    use crate::model::image_facts::{ImageFacts, ImageFactsMap, Platform};
    use crate::model::platform::Platform as Cloud;
    use crate::model::{Context, Finding, Operation, Severity};
    use crate::rules::scheduling::common::tests::linux;
    use crate::rules::testutil::{assert_says, cfg, group, observed, only, set};

    fn pod(image: &str) -> Value {
        json!({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},
            "spec":{"containers":[{"name":"c","image":image}]}})
    }

    fn aks() -> Config {
        let mut c = cfg();
        c.target.set_platform(Cloud::Aks);
        c
    }

    fn win011(obj: &Value, c: &Config) -> Vec<Finding> {
        only(obj, c, "WIN011")
    }

    /// The pod `kubectl debug node/NAME --image=busybox` creates (kubectl
    /// `pkg/cmd/debug/debug.go`, `generateNodeDebugPod` and the legacy profile): bound by
    /// `spec.nodeName`, tolerating every taint, in the host's namespaces.
    pub(crate) fn node_debugger(node: &str, image: &str) -> Value {
        json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": format!("node-debugger-{node}-x7k2p"), "namespace": "default"},
            "spec": {"containers": [{"name": "debugger", "image": image, "stdin": true,
                        "tty": true, "terminationMessagePolicy": "File",
                        "volumeMounts": [{"name": "host-root", "mountPath": "/host"}]}],
                     "nodeName": node, "restartPolicy": "Never",
                     "hostIPC": true, "hostNetwork": true, "hostPID": true,
                     "tolerations": [{"operator": "Exists"}],
                     "volumes": [{"name": "host-root", "hostPath": {"path": "/"}}]}})
    }

    #[test]
    fn a_linux_image_bound_to_a_windows_node_is_an_error() {
        let win = group("win", "windows", "10.0.20348", &[], &[], 2);
        let c = observed(cfg(), vec![win, linux()]);
        // kubectl debug node/win0 --image=busybox
        let f = win011(&node_debugger("win0", "busybox"), &c);
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].severity, Severity::Error);
        assert_eq!(f[0].pointer, "/spec/nodeName");
        assert!(f[0].fix.is_none(), "no selector moves a bound pod");
        for part in [
            "win0",
            "Windows Server 2022",
            "busybox",
            "no matching manifest",
        ] {
            assert_says(&f[0], part);
        }
        // Bound to a Linux node: nothing here.
        assert!(win011(&node_debugger("l0", "busybox"), &c).is_empty());
        // A multi-OS or unknown image may run there (a bound pod gets no info: no pin moves it).
        assert!(win011(&node_debugger("win0", "registry.k8s.io/pause:3.9"), &c).is_empty());
        assert!(win011(&node_debugger("win0", "contoso.azurecr.io/tool:1"), &c).is_empty());
        // Offline, a node name says nothing of the node's OS.
        assert!(win011(&node_debugger("win0", "busybox"), &aks()).is_empty());
    }

    #[test]
    fn linux_only_images_on_untainted_windows_nodes() {
        for image in [
            "nginx:1.27",
            "redis:7.2",
            "busybox:1.36",
            "alpine:3.20",
            "mcr.microsoft.com/dotnet/aspnet:8.0",
        ] {
            let f = win011(&pod(image), &aks());
            assert_eq!(f.len(), 1, "{image}");
            assert_eq!(f[0].severity, Severity::Warning);
            assert!(
                f[0].message.contains("untainted") && f[0].message.contains(image),
                "{}",
                f[0].message
            );
            assert_eq!(
                crate::rules::testutil::fixed(&pod(image), &aks(), "WIN011")["spec"]["nodeSelector"],
                json!({"kubernetes.io/os": "linux"})
            );
        }
        // Multi-OS images: never.
        for image in [
            "registry.k8s.io/pause:3.9",
            "mcr.microsoft.com/dotnet/runtime:7.0",
        ] {
            assert!(win011(&pod(image), &aks()).is_empty(), "{image}");
        }
        // One unknown image beside nginx: it may be Linux-only too; an info, not a warning.
        let two = set(
            pod("nginx:1.27"),
            "/spec/containers/1",
            json!({"name":"s","image":"contoso.azurecr.io/app:1.0"}),
        );
        let f = win011(&two, &aks());
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].severity, Severity::Info);
        // A known multi-OS image beside an unknown one: the pod may run on Windows.
        let multi = set(
            pod("registry.k8s.io/pause:3.9"),
            "/spec/containers/1",
            json!({"name":"s","image":"contoso.azurecr.io/app:1.0"}),
        );
        assert!(win011(&multi, &aks()).is_empty());
        // An ephemeral container does not decide where the pod lands.
        let eph = set(
            pod("nginx:1.27"),
            "/spec/ephemeralContainers",
            json!([{"name":"d","image":"contoso.azurecr.io/debug:1"}]),
        );
        assert_eq!(win011(&eph, &aks()).len(), 1);
    }

    /// Issue 29 item 6: images winlint does not know, on untainted Windows nodes: an info per
    /// pod, no fix, that says what the user can do.
    #[test]
    fn unknown_images_on_untainted_windows_nodes_are_an_info() {
        for image in [
            "contoso.azurecr.io/shop/api:1.4.2",
            "ghcr.io/acme/worker:2.0",
            "envoyproxy/envoy:v1.31.0",
        ] {
            let f = win011(&pod(image), &aks());
            assert_eq!(f.len(), 1, "{image}");
            assert_eq!(f[0].severity, Severity::Info);
            assert!(f[0].fix.is_none(), "no OS to pin is known");
            for part in [
                image,
                "unknown to winlint",
                "untainted",
                "Pin the OS",
                "registry look-ups",
            ] {
                assert_says(&f[0], part);
            }
        }
        let unknown = pod("contoso.azurecr.io/shop/api:1.4.2");
        // Pinned, or on a target whose Windows nodes are tainted (not tolerated): nothing.
        let pinned = set(
            unknown.clone(),
            "/spec/nodeSelector",
            json!({"kubernetes.io/os": "linux"}),
        );
        assert!(win011(&pinned, &aks()).is_empty());
        assert!(win011(&unknown, &cfg()).is_empty());
        // Registry facts make it known: the_registry_decides_when_it_was_asked.
    }

    /// Issue 29: images model::known_images knows are not "unknown" on untainted nodes: the .NET
    /// sample has a nanoserver-ltsc2022 entry (silent), a Bitnami `-debian-` tag is Linux (the
    /// warning, saying why).
    #[test]
    fn images_the_table_knows_are_not_unknown() {
        assert!(win011(&pod("mcr.microsoft.com/dotnet/samples:aspnetapp"), &aks()).is_empty());
        let f = win011(
            &pod("docker.io/bitnami/postgresql:16.3.0-debian-12-r19"),
            &aks(),
        );
        assert_eq!(f.len(), 1, "{f:?}");
        assert_ne!(f[0].severity, Severity::Info);
        assert_says(&f[0], "bitnami/minideb");
    }

    #[test]
    fn pins_and_other_selectors_keep_it_off() {
        for (ptr, v) in [
            ("/spec/nodeSelector", json!({"kubernetes.io/os": "linux"})),
            (
                "/spec/nodeSelector",
                json!({"beta.kubernetes.io/os": "linux"}),
            ),
            ("/spec/nodeSelector", json!({"agentpool": "system"})),
            (
                "/spec/nodeSelector",
                json!({"kubernetes.azure.com/os-sku": "Ubuntu"}),
            ),
            ("/spec/nodeName", json!("aks-system-0")),
            (
                "/spec/affinity",
                json!({"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{
                    "nodeSelectorTerms":[{"matchExpressions":[
                        {"key":"kubernetes.io/os","operator":"NotIn","values":["windows"]}]}]}}}),
            ),
        ] {
            let p = set(pod("nginx:1.27"), ptr, v.clone());
            assert!(win011(&p, &aks()).is_empty(), "{ptr} {v}");
        }
        // A selector Windows nodes match too does not keep it off them.
        let arch = set(
            pod("nginx:1.27"),
            "/spec/nodeSelector",
            json!({"kubernetes.io/arch": "amd64"}),
        );
        assert_eq!(win011(&arch, &aks()).len(), 1);
        // spec.os.name linux is no pin: the message says what the kubelet does.
        let os = set(pod("nginx:1.27"), "/spec/os", json!({"name": "linux"}));
        let f = win011(&os, &aks());
        assert_eq!(f.len(), 1);
        assert_says(&f[0], "PodOSNotSupported");
    }

    #[test]
    fn taints_assumed_tainted_or_tolerated() {
        let nginx = pod("nginx:1.27");
        // The default target assumes os=windows:NoSchedule: nothing, and a toleration of that
        // one taint proves nothing about the real nodes.
        assert!(win011(&nginx, &cfg()).is_empty());
        let tol = |t: Value| set(nginx.clone(), "/spec/tolerations", json!([t]));
        let named =
            tol(json!({"key":"os","operator":"Equal","value":"windows","effect":"NoSchedule"}));
        assert!(win011(&named, &cfg()).is_empty());
        // A toleration that swallows every taint: reported.
        let all = tol(json!({"operator":"Exists"}));
        let f = win011(&all, &cfg());
        assert_eq!(f.len(), 1);
        assert_says(&f[0], "tolerates every taint");
        // A configured taint: tolerated by name, reported; not tolerated, nothing.
        let mut gke = cfg();
        gke.target.set_platform(Cloud::Gke);
        assert!(win011(&named, &gke).is_empty());
        let gke_tol = tol(json!({"key":"node.kubernetes.io/os","operator":"Exists"}));
        assert_eq!(win011(&gke_tol, &gke).len(), 1);
        assert_eq!(win011(&all, &gke).len(), 1);
    }

    #[test]
    fn observed_nodes_decide() {
        let untainted = observed(
            cfg(),
            vec![group("w", "windows", "10.0.20348", &[], &[], 2), linux()],
        );
        let f = win011(&pod("nginx:1.27"), &untainted);
        assert_eq!(f.len(), 1);
        assert_says(&f[0], "2 Windows nodes of the cluster");
        let tainted = observed(
            cfg(),
            vec![
                group(
                    "w",
                    "windows",
                    "10.0.20348",
                    &["os=windows:NoSchedule"],
                    &[],
                    2,
                ),
                linux(),
            ],
        );
        assert!(win011(&pod("nginx:1.27"), &tainted).is_empty());
        // No Windows node in the cluster: nothing to land on.
        let none = observed(cfg(), vec![linux()]);
        assert!(win011(&pod("nginx:1.27"), &none).is_empty());
    }

    #[test]
    fn daemonsets_are_win603s() {
        let ds = json!({"apiVersion":"apps/v1","kind":"DaemonSet","metadata":{"name":"d"},
            "spec":{"template":{"spec":{"containers":[{"name":"c","image":"nginx:1.27"}]}}}});
        assert!(win011(&ds, &aks()).is_empty());
        assert_eq!(only(&ds, &aks(), "WIN603").len(), 1);
        let owned = set(
            pod("nginx:1.27"),
            "/metadata/ownerReferences",
            json!([{"apiVersion":"apps/v1","kind":"DaemonSet","name":"d","uid":"u"}]),
        );
        assert!(win011(&owned, &aks()).is_empty());
        let deploy = json!({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},
            "spec":{"template":{"spec":{"containers":[{"name":"c","image":"redis:7.2"}]}}}});
        let f = win011(&deploy, &aks());
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].pointer, "/spec/template/spec");
    }

    #[test]
    fn the_registry_decides_when_it_was_asked() {
        let platform = |os: &str| Platform {
            os: os.into(),
            architecture: "amd64".into(),
            variant: None,
            os_version: (os == "windows").then(|| "10.0.20348.1".to_string()),
            os_features: vec![],
            digest: None,
            user: None,
        };
        let cx = |platforms: Vec<Platform>| {
            let mut map: ImageFactsMap = BTreeMap::new();
            for r in ["nginx:1.27", "contoso.azurecr.io/app:1.0"] {
                map.insert(
                    crate::model::image::fact_key(r).into_owned(),
                    Arc::new(ImageFacts {
                        digest: "sha256:0".into(),
                        list: true,
                        platforms: platforms.clone(),
                        user: None,
                    }),
                );
            }
            Context {
                images: Some(Arc::new(map)),
                ..Context::default()
            }
        };
        let run = |obj: &Value, cx: &Context| -> Vec<Finding> {
            lint_object(obj, &aks(), cx, Operation::Lint)
                .findings
                .into_iter()
                .filter(|f| f.rule.id == "WIN011")
                .collect()
        };
        let linux_only = cx(vec![platform("linux")]);
        let f = run(&pod("contoso.azurecr.io/app:1.0"), &linux_only);
        assert_eq!(f.len(), 1);
        assert_says(&f[0], "registry: linux/amd64");
        // A Windows entry clears even a name the heuristics call Linux-only.
        let multi = cx(vec![platform("linux"), platform("windows")]);
        assert!(run(&pod("nginx:1.27"), &multi).is_empty());
        // Unknown without the registry: an info; looked up, the registry's answer instead.
        let unknown = run(&pod("contoso.azurecr.io/app:1.0"), &Context::default());
        assert_eq!(unknown.len(), 1);
        assert_eq!(unknown[0].severity, Severity::Info);
        assert_eq!(f[0].severity, Severity::Warning);
        assert!(run(&pod("contoso.azurecr.io/app:1.0"), &multi).is_empty());
    }
}
