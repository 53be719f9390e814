//! WIN503 `image-build-unknown`.

use crate::model::Eval;
use crate::model::image::ImageInfo;
use crate::model::meta::{Area, Mutation, Reads, RuleOs};
use crate::model::pod::is_host_process;
use crate::model::workload::{ContainerRef, PodSite};
use crate::model::{Finding, RuleMeta, Severity};
use crate::rules::Rule;
use crate::rules::images::common::describe;
use crate::rules::images::common::describe_builds;
use crate::rules::images::common::image_builds;
use crate::rules::images::common::image_ptr;
use crate::rules::images::common::images;
use crate::rules::images::common::known_alternatives;
use crate::rules::images::image_registry;

/// WIN503 in the registry.
pub const RULE: Rule = Rule {
    meta: &WIN503,
    check: image_build_unknown,
};

// ---------------------------------------------------------------------------------------------
// WIN503

pub static WIN503: RuleMeta = RuleMeta {
    id: "WIN503",
    name: "image-build-unknown",
    severity: Severity::Info,
    summary: "Windows pod images whose Windows build nothing tells (one finding per pod)",
    docs: r#"## What it does
Reports, once per pod, the images whose Windows build can be derived neither from the reference
(no build token such as `ltsc2022`, `1809`, `10.0.17763` in the tag; or a digest-only reference)
nor from what winlint knows about the repository. Bare numbers such as `:1809` count as build
tokens only in Microsoft base-image repositories.

Not reported: images known to be multi-OS manifest lists, which containerd resolves per node build
(`registry.k8s.io/sig-storage/*`, `registry.k8s.io/e2e-test-images/*`,
`registry.k8s.io/csi-secrets-store/*`, `mcr.microsoft.com/oss/kubernetes-csi/*`,
`registry.k8s.io/pause`, `mcr.microsoft.com/windows/servercore/iis:latest`,
`mcr.microsoft.com/dotnet/framework/*:4.8`, `mcr.microsoft.com/dotnet/framework/samples`, the
unsuffixed tags of Docker official images such as `golang`, …); `:latest` and untagged images
(WIN501); known Linux-only images (WIN507); HostProcess containers (no build requirement).

With `--registry` (CLI) or `registry.mode` (webhook) an image whose registry lists its Windows
builds is not reported; one whose Windows entries carry no `os.version` is (`registry:`): every
Windows node pulls it, and its build cannot be checked.

## Why is this bad?
winlint, the webhook's `windows-build` pin and the scheduler cannot match such an image to nodes.
A Windows image that is not a manifest list runs only on nodes of the build it was built on, so
the mismatch shows only when the pod starts.

## Example
```yaml
containers:
- name: web
  image: contoso.azurecr.io/web:1.4.2     # single-OS image? built on which Windows?
```

## Fix
Publish Windows images as a manifest list with one entry per Windows build of your nodes (each
entry carries its `os.version`, e.g. 10.0.17763 and 10.0.20348): containerd pulls the entry that
matches the node, and one tag serves every node build. `docker buildx imagetools create` or
`crane index append` assemble such a list from per-build images. When you pin by digest, keep the
tag next to it (`…:1.4.2@sha256:…`).
"#,
    fix: None,
    source: "IIS, DNF",
    applies: "all",
    os: RuleOs::Windows,
    default_on: true,
    reads: Reads::of(&[Area::Placement, Area::Containers, Area::PodSecurityContext]),
    mutation: Mutation::DEFAULT,
};

pub(crate) fn image_build_unknown(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    // With the registry's facts an image's builds are known, unless its Windows entries carry
    // no os.version (pulled everywhere, unverifiable): those are said apart.
    let unverifiable: Vec<(&ContainerRef, &str)> = images(eval)
        .filter(|(c, ..)| !is_host_process(site, c))
        .filter(|(c, ..)| {
            image_registry::facts(eval, c).is_some_and(|f| image_registry::unverifiable(&f))
        })
        .map(|(c, img, _)| (c, img))
        .collect();
    let unknown: Vec<(&ContainerRef, &str, &ImageInfo)> = images(eval)
        .filter(|(c, _, i)| {
            // An invalid reference pulls nothing: WIN509 reports it, not its unknown build.
            i.build.is_none()
                && i.invalid.is_none()
                && i.known.is_none()
                && !i.linux
                && !i.latest
                && !is_host_process(site, c)
                && image_registry::facts(eval, c).is_none()
        })
        .collect();
    if unknown.is_empty()
        && let Some(&(first, _)) = unverifiable.first()
    {
        let names: Vec<String> = unverifiable
            .iter()
            .map(|(c, img)| format!("{} image {img}", c.label()))
            .collect();
        return vec![Finding::new(
            &WIN503,
            image_ptr(site, first),
            format!(
                "registry: the Windows entries of {} carry no os.version, so every Windows node pulls them and winlint cannot check their build against the target nodes' {}; publish os.version in the manifest list (buildx and crane copy it from the base image)",
                names.join(", "),
                describe_builds(&eval.host_builds(site))
            ),
        )];
    }
    let Some(&(first, _, _)) = unknown.first() else {
        return Vec::new();
    };
    let hosts = eval.host_builds(site);
    let nodes = describe_builds(&hosts);
    let os_versions = image_builds(&hosts)
        .iter()
        .map(|b| b.to_string())
        .collect::<Vec<_>>()
        .join(", ");
    let digest_only = |i: &ImageInfo| {
        i.reference
            .as_ref()
            .is_some_and(|r| r.tag.is_none() && r.digest.is_some())
    };
    let names: Vec<String> = unknown
        .iter()
        .map(|(c, img, _)| format!("{} image {img}", c.label()))
        .collect();
    let pinned: Vec<&str> = unknown
        .iter()
        .filter(|(.., i)| digest_only(i))
        .map(|(_, img, _)| *img)
        .collect();
    let lists = format!(
        "A Windows image that is not a manifest list runs only on nodes of the build it was built on: use (or publish) images as manifest lists with one entry per Windows build of your nodes (os.version {os_versions}; containerd pulls the entry that matches each node), or images built for {}",
        describe(&image_builds(&hosts), " or ")
    );
    let msg = if unknown.len() == 1 && pinned.len() == 1 {
        let info = unknown[0].2;
        let example = match known_alternatives(info, &hosts).first() {
            Some(s) if !s.or_later => format!(
                "{}@{}",
                s.image,
                info.reference
                    .as_ref()
                    .and_then(|r| r.digest.as_deref())
                    .unwrap_or("")
            ),
            _ => "name:tag@sha256:…".to_string(),
        };
        format!(
            "{} is pinned by digest only, so winlint cannot check its Windows build against the target nodes' {nodes}; keep a tag that names the build next to the digest ({example})",
            names[0]
        )
    } else {
        let subject = if unknown.len() == 1 {
            format!(
                "{} names no Windows build, and winlint does not know which builds it has images for, so it cannot check it",
                names[0]
            )
        } else {
            format!(
                "the Windows builds of {} images are not known ({}), so winlint cannot check them",
                unknown.len(),
                names.join(", ")
            )
        };
        let digests = if pinned.is_empty() {
            String::new()
        } else {
            format!(
                ". For the images pinned by digest only ({}), keep the tag next to the digest",
                pinned.join(", ")
            )
        };
        format!("{subject} against the target nodes' {nodes}. {lists}{digests}")
    };
    vec![Finding::new(&WIN503, image_ptr(site, first), msg)]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::images::common::tests::DIGEST;

    use crate::rules::testutil::{cfg, ids, only, set, winok};
    use serde_json::Value;
    use serde_json::json;

    use crate::rules::images::common::tests::message;
    use crate::rules::images::common::tests::with_image;

    /// A pod with `images` as its containers (`c0`, `c1`, …), declared Windows.
    pub(crate) fn pod_of(images: &[&str]) -> Value {
        let containers: Vec<Value> = images
            .iter()
            .enumerate()
            .map(|(n, i)| json!({"name": format!("c{n}"), "image": i}))
            .collect();
        set(winok(), "/spec/containers", json!(containers))
    }

    #[test]
    fn win503_once_per_pod_naming_every_image() {
        let pod = pod_of(&[
            "registry.k8s.io/sig-storage/livenessprobe:v2.15.0",
            "contoso/agent:1.0",
            "contoso/sidecar:2.1",
        ]);
        let fs = only(&pod, &cfg(), "WIN503");
        assert_eq!(fs.len(), 1, "{fs:?}");
        // At the first image concerned, naming each of them, advising manifest lists.
        assert_eq!(fs[0].pointer, "/spec/containers/1/image");
        let m = &fs[0].message;
        assert!(
            m.contains("container \"c1\" image contoso/agent:1.0"),
            "{m}"
        );
        assert!(
            m.contains("container \"c2\" image contoso/sidecar:2.1"),
            "{m}"
        );
        assert!(!m.contains("livenessprobe"), "{m}");
        assert!(m.contains("manifest list"), "{m}");
        assert!(m.contains("os.version 10.0.20348"), "{m}");
        assert!(!m.contains("tag Windows images with"), "{m}");
        assert_eq!(fs[0].severity, Severity::Info);
    }

    #[test]
    fn win503_silent_for_known_lists_latest_and_linux() {
        for image in [
            // Multi-OS manifest lists resolved per node build.
            "registry.k8s.io/sig-storage/csi-node-driver-registrar:v2.13.0",
            "k8s.gcr.io/sig-storage/livenessprobe:v2.7.0",
            "registry.k8s.io/e2e-test-images/agnhost:2.47",
            "registry.k8s.io/csi-secrets-store/driver:v1.4.7",
            "mcr.microsoft.com/oss/kubernetes-csi/livenessprobe:v2.10.0",
            "mcr.microsoft.com/oss/kubernetes-csi/azurefile-csi:v1.28.9",
            "gcr.io/k8s-staging-sig-storage/smbplugin:canary",
            "registry.k8s.io/pause:3.9",
            "mcr.microsoft.com/oss/kubernetes/pause:3.9",
            "mcr.microsoft.com/dotnet/framework/sdk:4.8",
            "mcr.microsoft.com/dotnet/framework/samples:aspnetapp",
            "mcr.microsoft.com/windows/servercore/iis:windowsservercore",
            "mcr.microsoft.com/dotnet/aspnet:7.0",
            "golang:1.22",
            // :latest (WIN501 says it) and Linux-only images (WIN507).
            "contoso/app",
            "mcr.microsoft.com/windows/servercore:latest",
            "nginx:1.27",
            "mcr.microsoft.com/dotnet/aspnet:8.0",
            // Builds known from the reference or the table.
            "contoso/app:1.0-ltsc2022",
            "redis:3.0-nanoserver",
        ] {
            assert!(
                !ids(&with_image(image), &cfg()).contains(&"WIN503"),
                "{image}"
            );
        }
        for image in ["contoso/app:1.2", "e2eteam/pause:3.1", "calico/porter:1809"] {
            assert!(
                ids(&with_image(image), &cfg()).contains(&"WIN503"),
                "{image}"
            );
        }
        // Digest only: the advice is to keep the tag.
        let pinned = with_image(&format!("mcr.microsoft.com/windows/servercore@{DIGEST}"));
        let m = message(&pinned, &cfg(), "WIN503");
        assert!(m.contains("pinned by digest only"), "{m}");
        assert!(
            m.ends_with(&format!(
                "keep a tag that names the build next to the digest (mcr.microsoft.com/windows/servercore:ltsc2022@{DIGEST})"
            )),
            "{m}"
        );
        assert!(
            !ids(
                &with_image(&format!(
                    "mcr.microsoft.com/windows/servercore:ltsc2022@{DIGEST}"
                )),
                &cfg()
            )
            .contains(&"WIN503")
        );
    }
}
