//! WIN507 `linux-image-in-windows-pod`.

use crate::model::Eval;
use crate::model::image::ImageInfo;
use crate::model::known_images::{self, Platforms};
use crate::model::meta::{Area, Mutation, Reads, Recorded, RuleOs};
use crate::model::windows::Build;
use crate::model::workload::ContainerRef;
use crate::model::workload::PodSite;
use crate::model::{Finding, Fix, FixSafety, RuleMeta, Severity, ops};
use crate::rules::Rule;
use crate::rules::images::common::image_builds;
use crate::rules::images::common::image_ptr;
use crate::rules::images::common::images;
use crate::rules::images::common::instead;
use crate::rules::images::common::known_alternatives;
use crate::rules::images::image_registry::{self, LinuxOnly};
use serde_json::json;

/// WIN507 in the registry.
pub const RULE: Rule = Rule {
    meta: &WIN507,
    check: linux_image_in_windows_pod,
};

// ---------------------------------------------------------------------------------------------
// WIN507

pub static WIN507: RuleMeta = RuleMeta {
    id: "WIN507",
    name: "linux-image-in-windows-pod",
    severity: Severity::Warning,
    summary: "Image with no Windows variant (busybox, alpine, nginx, dotnet/aspnet:8.0, pause:3.1, …) in a Windows pod",
    docs: r#"## What it does
Finds images that have no Windows image in a pod that is Windows:

* tags known to be Linux-only, reported as **errors** because the pull certainly fails:
  `mcr.microsoft.com/dotnet/{runtime,aspnet,sdk}` without a Windows suffix from .NET 8 on
  (`8.0`, `9.0`, `10.0`, `latest`, `8.0-alpine`: since .NET 8 the plain tags are Linux-only; the
  Windows images are `8.0-nanoserver-ltsc2022`, `8.0-windowsservercore-ltsc2022`, …; `6.0` and
  `7.0` still included Nano Server), and `registry.k8s.io/pause` before 3.4;
* Docker official images that exist for Linux only (`busybox`, `alpine`, `ubuntu`, `debian`,
  `centos`, `fedora`, `nginx`, and a few other distributions) and any `*-alpine` tag of an
  official image, `gcr.io/distroless/*`, and the Linux-only `registry.k8s.io` images (control plane,
  CoreDNS, ingress-nginx, metrics-server, …), reported as warnings, and as errors in a regular or
  init container of a pod that also has a Windows-only image (no node runs both: the pod runs
  nowhere, as WIN008 says of such a pod when it declares no OS).

Name heuristics hold only for Docker Hub official images (`busybox`, `docker.io/library/nginx`):
other repositories publish Windows images under such names (`e2eteam/nginx:1.14-alpine`, the
Kubernetes e2e test images `registry.k8s.io/e2e-test-images/*`, `gcr.io/kubernetes-e2e-test-images/*`),
so an image not on these lists is never called Linux-only. A pod whose OS is not declared (no
`spec.os`, no OS selector) and that also has a Windows image is reported by WIN008 instead.

With `--registry` (CLI) or `registry.mode` (webhook) the registry decides whatever the name: an
image whose manifest has no Windows entry is an error (`registry:`), and a name these lists call
Linux-only is not reported when its registry lists a Windows entry.

## Why is this bad?
The container cannot start on a Windows node: the pull finds no `windows/amd64` image ("no matching
manifest for windows/amd64 10.0.20348 in the manifest list entries"). The usual sources are
`kubectl debug` adding a `busybox` ephemeral container to a Windows pod, and `dotnet/aspnet:8.0`
taken from a Linux sample.

## Example
```yaml
containers:
- name: web
  image: mcr.microsoft.com/dotnet/aspnet:8.0     # Linux-only since .NET 8
ephemeralContainers:
- name: debugger
  image: busybox:1.36
```

## Fix
Use the Windows tag that exists for the nodes' build (`mcr.microsoft.com/dotnet/aspnet:8.0-nanoserver-ltsc2022`,
`registry.k8s.io/pause:3.6 or later`; opt-in fix when there is exactly one), or a Windows image
such as `mcr.microsoft.com/windows/nanoserver:ltsc2022`
(`kubectl debug -it POD --image=mcr.microsoft.com/windows/nanoserver:ltsc2022`).

## Severity
`warning` for an image judged Linux-only by its name; `error` where the registry or winlint's
table of known images says it has no Windows entry, or it runs beside Windows containers in the
pod (the pull fails with "no matching manifest for windows/amd64").
"#,
    fix: Some(FixSafety::OptIn),
    source: "K-INTRO, dotnet/dotnet-docker#4492, pause CHANGELOG",
    applies: "all",
    os: RuleOs::Windows,
    default_on: true,
    reads: Reads::of(&[Area::Placement, Area::Containers, Area::Evidence]),
    mutation: Mutation {
        image_cannot_run: true,
        ..Mutation::named(Recorded::Image)
    },
};

pub(crate) fn linux_image_in_windows_pod(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    // WIN008 covers a pod with undeclared OS mixing Windows and Linux images; report here what
    // it does not, so one image is not reported twice.
    let declared = eval.class.declared().is_some();
    if !declared && eval.images.iter().any(|(_, i)| i.windows) {
        return Vec::new();
    }
    let hosts = eval.host_builds(site);
    let nanoserver = image_builds(&hosts)
        .into_iter()
        .filter_map(|b| known_images::image_for("mcr.microsoft.com", "windows/nanoserver", None, b))
        .map(|s| s.to_string())
        .next()
        .unwrap_or_else(|| "mcr.microsoft.com/windows/nanoserver:ltsc2022".to_string());
    let mut out = Vec::new();
    for (c, img, i) in images(eval) {
        match image_registry::linux_only(eval, c, i) {
            Some(LinuxOnly::Registry(f)) => out.push(
                Finding::new(
                    &WIN507,
                    image_ptr(site, c),
                    format!(
                        "{} uses {img}: {}: it has no Windows entry ({}), so on a Windows node the pull fails with \"no matching manifest for windows/amd64\"; {}",
                        c.label(),
                        image_registry::source(eval, c),
                        image_registry::platforms(&f),
                        instead(i, &hosts)
                    ),
                )
                .severity(Severity::Error),
            ),
            Some(LinuxOnly::ByName) => {
                out.push(linux_by_name(site, eval, c, img, i, &hosts, &nanoserver))
            }
            None => {}
        }
    }
    out
}

/// WIN507 from the image's name: the table's Linux-only tags (certain: error) and the
/// heuristics for official Linux images (warning).
fn linux_by_name(
    site: &PodSite,
    eval: &Eval,
    c: &ContainerRef,
    img: &str,
    i: &ImageInfo,
    hosts: &[Build],
    nanoserver: &str,
) -> Finding {
    let ptr = image_ptr(site, c);
    if let Some(Platforms::LinuxOnly(why)) = i.known {
        // Certain: the table knows this tag has no Windows image.
        let alternatives = known_alternatives(i, hosts);
        let mut f = Finding::new(
            &WIN507,
            ptr.clone(),
            format!(
                "{} uses {img}, which has no Windows image ({}): on a Windows node the pull fails with \"no matching manifest for windows/amd64\"; {}",
                c.label(),
                why.why(),
                instead(i, hosts)
            ),
        )
        .severity(Severity::Error);
        if let [only] = alternatives.as_slice()
            && !only.or_later
            && eval.fix_possible(site)
        {
            f = f.with_fix(Fix {
                safety: FixSafety::OptIn,
                description: format!("use {}", only.image),
                ops: vec![ops::replace(&ptr, json!(only.image))],
            });
        }
        return f;
    }
    let debug = if c.list == "ephemeralContainers" {
        format!(" (kubectl debug --image={nanoserver})")
    } else {
        String::new()
    };
    // Next to a Windows-only image the pod runs on no node at all, whatever OS it declares:
    // the certainty WIN008 reports as an error when the OS is not declared. (An ephemeral
    // container, typically `kubectl debug`, fails alone: a warning.)
    let beside = eval
        .images
        .iter()
        .find(|(other, info)| info.windows && other.list != "ephemeralContainers")
        .filter(|_| c.list != "ephemeralContainers");
    let nowhere = beside.map_or(String::new(), |(other, _)| {
        format!(
            "; {} uses the Windows image {}, so no node runs both: split the pod",
            other.label(),
            other.image().unwrap_or("")
        )
    });
    let f = Finding::new(
        &WIN507,
        ptr,
        format!(
            "{} uses {img}, a Linux-only image, in a Windows pod: Windows nodes cannot run it (the pull finds no windows/amd64 image). Use a Windows image such as {nanoserver}{debug}{nowhere}",
            c.label()
        ),
    );
    if beside.is_some() {
        f.severity(Severity::Error)
    } else {
        f
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::model::windows::{WS2019, WS2022};

    use crate::rules::images::common::tests::message;
    use crate::rules::images::common::tests::sev;
    use crate::rules::images::common::tests::target;
    use crate::rules::images::common::tests::with_image;
    use crate::rules::testutil::{assert_says, cfg, findings, fixed, ids, only, set, winok};
    use serde_json::json;

    #[test]
    fn t13_points_at_the_ephemeral_image() {
        let pod = set(
            winok(),
            "/spec/ephemeralContainers",
            json!([{"name":"debugger","image":"busybox:1.36"}]),
        );
        let fs = findings(&pod, &cfg());
        let f = fs.iter().find(|f| f.rule.id == "WIN507").expect("WIN507");
        assert_eq!(f.pointer, "/spec/ephemeralContainers/0/image");
        assert_eq!(f.severity, Severity::Warning);
        assert_says(f, "kubectl debug");
    }

    #[test]
    fn win507_linux_images() {
        for (image, fires) in [
            ("busybox:1.36", true),
            ("nginx:1.27", true),
            ("python:3.12-alpine", true),
            ("nginx:1.14-alpine", true),
            ("docker.io/library/nginx:1.14-alpine", true),
            ("registry.k8s.io/kube-apiserver:v1.30.0", true),
            ("nginx:1.27-windowsservercore-ltsc2022", false),
            ("registry.k8s.io/pause:3.9", false),
            ("registry.k8s.io/e2e-test-images/agnhost:2.47", false),
            ("golang:1.22", false),
            // Name heuristics only for Docker Hub official images: these are Windows builds.
            ("e2eteam/nginx:1.14-alpine", false),
            ("e2eteam/busybox:1.29", false),
            (
                "k8sprow.azurecr.io/kubernetes-e2e-test-images/nginx:1.14-alpine",
                false,
            ),
            (
                "gcr.io/kubernetes-e2e-test-images/httpd:2.4.38-alpine",
                false,
            ),
            ("registry.k8s.io/e2e-test-images/nginx:1.14-4", false),
            ("registry.k8s.io/e2e-test-images/busybox:1.29-4", false),
            ("contoso/app:1.0-alpine", false),
            ("quay.io/busybox:1", false),
        ] {
            let pod = set(
                winok(),
                "/spec/containers/1",
                json!({"name":"side","image":image}),
            );
            assert_eq!(ids(&pod, &cfg()).contains(&"WIN507"), fires, "{image}");
        }
    }

    #[test]
    fn win507_certain_linux_tags_are_errors_with_the_windows_tag() {
        // .NET 8+: the plain tags are Linux-only; the pull fails on Windows.
        let pod = with_image("mcr.microsoft.com/dotnet/aspnet:8.0");
        let fs = only(&pod, &cfg(), "WIN507");
        assert_eq!(fs.len(), 1, "{fs:?}");
        assert_eq!(fs[0].severity, Severity::Error);
        assert!(
            fs[0]
                .message
                .contains("no matching manifest for windows/amd64")
        );
        assert!(
            fs[0]
                .message
                .ends_with("use mcr.microsoft.com/dotnet/aspnet:8.0-nanoserver-ltsc2022"),
            "{}",
            fs[0].message
        );
        let fix = fs[0].fix.as_ref().expect("opt-in fix");
        assert_eq!(fix.safety, FixSafety::OptIn);
        assert_eq!(
            fixed(&pod, &cfg(), "WIN507")["spec"]["containers"][0]["image"],
            json!("mcr.microsoft.com/dotnet/aspnet:8.0-nanoserver-ltsc2022")
        );
        // Two node builds: both tags named, no fix (which one is the user's call).
        let two = only(&pod, &target(&[WS2019, WS2022]), "WIN507");
        assert!(two[0].fix.is_none());
        assert!(two[0].message.ends_with(
            "use mcr.microsoft.com/dotnet/aspnet:8.0-nanoserver-1809 or mcr.microsoft.com/dotnet/aspnet:8.0-nanoserver-ltsc2022"
        ), "{}", two[0].message);
        for image in [
            "mcr.microsoft.com/dotnet/sdk:9.0",
            "mcr.microsoft.com/dotnet/runtime:10.0",
            "mcr.microsoft.com/dotnet/aspnet",
            "mcr.microsoft.com/dotnet/aspnet:latest",
            "mcr.microsoft.com/dotnet/aspnet:8.0-alpine",
        ] {
            assert_eq!(
                sev(&with_image(image), &cfg(), "WIN507"),
                Severity::Error,
                "{image}"
            );
        }
        // ≤ 7.0 plain tags are multi-OS; suffixed tags are Windows.
        for image in [
            "mcr.microsoft.com/dotnet/aspnet:7.0",
            "mcr.microsoft.com/dotnet/aspnet:6.0",
            "mcr.microsoft.com/dotnet/aspnet:8.0-nanoserver-ltsc2022",
            "mcr.microsoft.com/dotnet/aspnet:8.0-windowsservercore-ltsc2022",
        ] {
            assert!(ids(&with_image(image), &cfg()).is_empty(), "{image}");
        }
        // pause before 3.4 is Linux-only.
        let m = message(&with_image("registry.k8s.io/pause:3.1"), &cfg(), "WIN507");
        assert!(m.ends_with("use registry.k8s.io/pause:3.6 or later"), "{m}");
        assert_eq!(
            sev(&with_image("k8s.gcr.io/pause:3.2"), &cfg(), "WIN507"),
            Severity::Error
        );
        // The heuristic list stays a warning, and suggests a Nano Server tag that exists.
        let m = message(&with_image("busybox:1.36"), &target(&[WS2019]), "WIN507");
        assert!(
            m.contains("mcr.microsoft.com/windows/nanoserver:1809"),
            "{m}"
        );
        assert_eq!(
            sev(&with_image("busybox:1.36"), &cfg(), "WIN507"),
            Severity::Warning
        );
    }

    #[test]
    fn win507_leaves_undeclared_mixed_pods_to_win008() {
        // No spec.os, no selector, a Windows image beside busybox: WIN008's case.
        let pod = json!({"apiVersion":"v1","kind":"Pod","metadata":{"name":"m"},"spec":{
            "tolerations":[{"key":"os","operator":"Equal","value":"windows","effect":"NoSchedule"}],
            "containers":[{"name":"a","image":"mcr.microsoft.com/windows/servercore:ltsc2022"},
                          {"name":"b","image":"busybox:1.36"}]}});
        assert!(!ids(&pod, &cfg()).contains(&"WIN507"));
        // Declared Windows by spec.os: WIN507.
        let declared = set(pod, "/spec/os", json!({"name":"windows"}));
        assert!(ids(&declared, &cfg()).contains(&"WIN507"));
        // Windows by windowsOptions only, with only a Linux image: WIN008 cannot fire, WIN507 does.
        let opts = json!({"apiVersion":"v1","kind":"Pod","metadata":{"name":"o"},"spec":{
            "securityContext":{"windowsOptions":{"runAsUserName":"ContainerUser"}},
            "containers":[{"name":"b","image":"busybox:1.36"}]}});
        assert!(ids(&opts, &cfg()).contains(&"WIN507"));
    }
}
