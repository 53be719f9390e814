//! WIN409 `runasnonroot-admin`.

use crate::model::Eval;
use crate::model::image;
use crate::model::image_user::effective_user;
use crate::model::meta::{Area, Mutation, Reads, Recorded, RuleOs};
use crate::model::pod::{effective_run_as_non_root, effective_run_as_user_name, is_host_process};
use crate::model::workload::{ContainerRef, PodSite};
use crate::model::{Finding, Fix, FixSafety, RuleMeta, Severity, ops};
use crate::rules::Rule;
use serde_json::json;

/// WIN409 in the registry.
pub const RULE: Rule = Rule {
    meta: &WIN409,
    check: runasnonroot_admin,
};

// ---------------------------------------------------------------------------------------------
// WIN409

/// Whether an image not otherwise known is, by its name, built on Server Core, Server or the
/// full Windows image (`*servercore*`, .NET Framework): such images usually set no `User` and
/// run as ContainerAdministrator. Nano Server names are not; a reference that does not parse is
/// not either (the kubelet refuses it before any user matters).
pub fn named_after_admin_base(image: &str) -> bool {
    let Some(r) = image::parse(image) else {
        return false;
    };
    let repo = r.repository.as_str();
    let tag = r.tag.as_deref().unwrap_or("").to_ascii_lowercase();
    if repo.contains("nanoserver") || tag.contains("nanoserver") {
        return false;
    }
    repo.contains("servercore")
        || tag.contains("servercore")
        || repo.contains("dotnet/framework/")
        || (r.registry == "mcr.microsoft.com" && matches!(repo, "windows" | "windows/server"))
}

pub static WIN409: RuleMeta = RuleMeta {
    id: "WIN409",
    name: "runasnonroot-admin",
    severity: Severity::Error,
    summary: "runAsNonRoot: true with the ContainerAdministrator user (the kubelet refuses to start it)",
    docs: r#"## What it does
For every container with effective `runAsNonRoot: true` (its own `securityContext`, else the
pod's), the user it runs as, decided the way the kubelet decides it: its effective
`windowsOptions.runAsUserName`, else the image config's `User` (from the registry with
`--registry`: a single manifest's config, or for a manifest list the config of the Windows entry
the nodes' build pulls; else from the user's `images:` in `winlint.yaml`, else from winlint's
table of known images):

* that user is `ContainerAdministrator` (any case) → **error**: the kubelet refuses to start the
  container;
* no `runAsUserName` and an image that sets no `User` (Server Core, Server, Windows, IIS, .NET
  Framework and the official images' `windowsservercore` tags) → **warning**: the container
  starts, as ContainerAdministrator, and `runAsNonRoot` is not enforced;
* no `runAsUserName` and an unknown image whose name says Server Core → **info** (the same, if
  its Dockerfile sets no `USER`).

Nano Server images run as `ContainerUser` and are fine. HostProcess containers are left to
WIN204.

## Why is this bad?
The kubelet's `verifyRunAsNonRoot` on Windows (`pkg/kubelet/kuberuntime/security_context_windows.go`)
compares `runAsUserName`, or without it the image's user, with `ContainerAdministrator`
(`strings.EqualFold`): equal, the container never starts ("container's runAsUserName
(ContainerAdministrator) which will be regarded as root identity and will break non-root
policy"). An image that sets no user passes the check although its containers run as
ContainerAdministrator (kubernetes/kubernetes#112469): the policy the pod asks for silently
does not hold.

## Example
```yaml
securityContext:
  runAsNonRoot: true
  windowsOptions: {runAsUserName: ContainerAdministrator}
```

## Fix
If the application runs without administrator rights, set `windowsOptions.runAsUserName:
ContainerUser` (the opt-in fix of the error); if it needs them (IIS, most .NET Framework
applications), drop `runAsNonRoot`, which cannot hold for it.

## Severity
`error` where the kubelet refuses the container for certain (`runAsUserName` or the image's
`USER` is ContainerAdministrator); `warning` where a known image sets no `USER`
(`runAsNonRoot` is not enforced); `info` where an unknown image's name says Server Core.
"#,
    fix: Some(FixSafety::OptIn),
    source: "KL-SC",
    applies: "all",
    os: RuleOs::Windows,
    default_on: true,
    reads: Reads::of(&[Area::Containers, Area::PodSecurityContext]),
    mutation: Mutation::named(Recorded::RunAsUserName),
};

/// Ops that set `securityContext.windowsOptions.runAsUserName` of container `c`, creating the
/// objects on the way.
pub(crate) fn set_container_user_ops(
    site: &PodSite,
    c: &ContainerRef,
    user: &str,
) -> Vec<json_patch::PatchOperation> {
    let sc = c.value.get("securityContext").filter(|v| v.is_object());
    let wo = sc
        .and_then(|s| s.get("windowsOptions"))
        .filter(|v| v.is_object());
    let op = match (sc, wo) {
        (_, Some(_)) => ops::add(
            &site.container_ptr(c, "/securityContext/windowsOptions/runAsUserName"),
            json!(user),
        ),
        (Some(_), None) => ops::add(
            &site.container_ptr(c, "/securityContext/windowsOptions"),
            json!({"runAsUserName": user}),
        ),
        (None, None) => ops::add(
            &site.container_ptr(c, "/securityContext"),
            json!({"windowsOptions": {"runAsUserName": user}}),
        ),
    };
    vec![op]
}

pub(crate) fn runasnonroot_admin(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    let mut out: Vec<Finding> = Vec::new();
    for c in site.containers() {
        if is_host_process(site, &c) {
            continue;
        }
        let Some(rnr) = effective_run_as_non_root(site, &c).filter(|e| e.value) else {
            continue;
        };
        if let Some(user) = effective_run_as_user_name(site, &c) {
            // The kubelet compares runAsUserName alone when it is set.
            if !user.value.eq_ignore_ascii_case("ContainerAdministrator")
                || out.iter().any(|f| f.pointer == user.pointer)
            {
                continue;
            }
            let mut f = Finding::new(
                &WIN409,
                user.pointer.clone(),
                format!(
                    "{} runs as {:?} with runAsNonRoot: true; the kubelet regards ContainerAdministrator as root and refuses to start the container. {CHOICES}",
                    c.label(),
                    user.value
                ),
            );
            if eval.fix_possible(site) {
                f = f.with_fix(Fix {
                    safety: FixSafety::OptIn,
                    description: format!(
                        "set runAsUserName to ContainerUser at {}",
                        crate::model::pod::dotted(&user.pointer)
                    ),
                    ops: vec![ops::replace(&user.pointer, json!("ContainerUser"))],
                });
            }
            out.push(f);
            continue;
        }
        let image = c.image().unwrap_or("");
        let info = eval
            .images
            .iter()
            .find(|(r, _)| r.list == c.list && r.index == c.index)
            .map(|(_, i)| i);
        let at = crate::model::pod::dotted(&rnr.pointer);
        let f = match effective_user(site, &c, eval, info) {
            Some(u) if u.is_container_administrator() => {
                let mut f = Finding::new(
                    &WIN409,
                    site.container_ptr(&c, "/image"),
                    format!(
                        "{} sets runAsNonRoot: true ({at}) without runAsUserName, and image {image} runs as {:?} ({}); the kubelet regards ContainerAdministrator as root and refuses to start the container. {CHOICES}",
                        c.label(),
                        u.name,
                        u.why(),
                    ),
                );
                if eval.fix_possible(site) {
                    f = f.with_fix(Fix {
                        safety: FixSafety::OptIn,
                        description: format!("set runAsUserName: ContainerUser in {}", c.label()),
                        ops: set_container_user_ops(site, &c, "ContainerUser"),
                    });
                }
                f
            }
            Some(u) if u.unset() => Finding::new(
                &WIN409,
                site.container_ptr(&c, "/image"),
                format!(
                    "{}: runAsNonRoot: true ({at}) is not enforced: image {image} names no user ({}), so the container runs as ContainerAdministrator and the kubelet, which checks only a user that is set, starts it. {CHOICES}",
                    c.label(),
                    u.why(),
                ),
            )
            .severity(Severity::Warning),
            Some(_) => continue,
            None if named_after_admin_base(image) => Finding::new(
                &WIN409,
                site.container_ptr(&c, "/image"),
                format!(
                    "{} sets runAsNonRoot: true ({at}), and image {image} is built on Server Core by its name: unless its Dockerfile sets USER, it runs as ContainerAdministrator and runAsNonRoot is not enforced (with USER ContainerAdministrator the kubelet refuses it). Declare its user in winlint.yaml images: or lint with --registry to know. {CHOICES}",
                    c.label(),
                ),
            )
            .severity(Severity::Info),
            None => continue,
        };
        out.push(f);
    }
    out
}

/// The two real choices, for every message: neither breaks an application that needs
/// administrator rights without saying so.
const CHOICES: &str = "Set windowsOptions.runAsUserName: ContainerUser if the application runs without administrator rights; if it needs them, drop runAsNonRoot";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::lint_object;
    use crate::model::{Context, Operation};
    use crate::rules::identity::common::tests::WIN34;
    use crate::rules::testutil::{
        cfg, fixed, hit, hits, ids_in, only, second_container, set, winok,
    };
    use serde_json::json;

    #[test]
    fn t44_runasnonroot_containeradministrator() {
        let pod = set(
            winok(),
            "/spec/securityContext",
            json!({"runAsNonRoot":true,"windowsOptions":{"runAsUserName":"containeradministrator"}}),
        );
        assert_eq!(ids_in(&pod, &cfg(), WIN34), vec!["WIN409"]);
        assert_eq!(
            hits(&pod, &cfg(), "WIN409"),
            hit(
                Severity::Error,
                "/spec/securityContext/windowsOptions/runAsUserName"
            )
        );
        let f = fixed(&pod, &cfg(), "WIN409");
        assert_eq!(
            f["spec"]["securityContext"]["windowsOptions"]["runAsUserName"],
            "ContainerUser"
        );
        assert_eq!(ids_in(&f, &cfg(), WIN34), Vec::<&str>::new());
        // One finding for the pod-level field even with several containers.
        let two = second_container(pod.clone(), "mcr.microsoft.com/windows/nanoserver:ltsc2022");
        assert_eq!(hits(&two, &cfg(), "WIN409").len(), 1);
        // A container-level user overrides the pod's.
        let own_user = set(
            pod.clone(),
            "/spec/containers/0/securityContext",
            json!({"windowsOptions":{"runAsUserName":"ContainerUser"}}),
        );
        assert!(hits(&own_user, &cfg(), "WIN409").is_empty());
        // A container-level runAsNonRoot: false overrides the pod's.
        let off = set(
            pod,
            "/spec/containers/0/securityContext",
            json!({"runAsNonRoot":false}),
        );
        assert!(hits(&off, &cfg(), "WIN409").is_empty());
    }

    #[test]
    fn win409_image_that_sets_no_user_is_a_warning_without_fix() {
        let pod = set(
            winok(),
            "/spec/securityContext",
            json!({"runAsNonRoot":true}),
        );
        // Server Core sets no User: the kubelet starts the container as ContainerAdministrator
        // (verifyRunAsNonRoot compares only a user that is set; kubernetes/kubernetes#112469).
        assert_eq!(
            hits(&pod, &cfg(), "WIN409"),
            hit(Severity::Warning, "/spec/containers/0/image")
        );
        let m = &only(&pod, &cfg(), "WIN409")[0];
        assert!(m.message.contains("not enforced"), "{}", m.message);
        assert!(m.message.contains("drop runAsNonRoot"), "{}", m.message);
        // No fix: ContainerUser would break an application that needs administrator rights.
        assert!(m.fix.is_none());
        for image in [
            "mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2022",
            "mcr.microsoft.com/dotnet/framework/aspnet:4.8-windowsservercore-ltsc2022",
            "mcr.microsoft.com/windows/server:ltsc2025",
            "MCR.microsoft.com:443/windows/servercore:ltsc2022",
            "python:3.12-windowsservercore-ltsc2022",
        ] {
            let p = set(pod.clone(), "/spec/containers/0/image", json!(image));
            assert_eq!(
                hits(&p, &cfg(), "WIN409"),
                hit(Severity::Warning, "/spec/containers/0/image"),
                "{image}"
            );
        }
        // An image only named after it: an info naming the assumption.
        let derived = set(
            pod.clone(),
            "/spec/containers/0/image",
            json!("contoso.azurecr.io/shop/web-servercore:1.2"),
        );
        assert_eq!(
            hits(&derived, &cfg(), "WIN409"),
            hit(Severity::Info, "/spec/containers/0/image")
        );
        // Nano Server runs as ContainerUser; an unknown image says nothing.
        for image in [
            "mcr.microsoft.com/windows/nanoserver:ltsc2022",
            "contoso.azurecr.io/app:1.0-ltsc2019",
        ] {
            let p = set(pod.clone(), "/spec/containers/0/image", json!(image));
            assert!(hits(&p, &cfg(), "WIN409").is_empty(), "{image}");
        }
        // runAsUserName decides alone when set.
        let user = set(
            pod.clone(),
            "/spec/securityContext/windowsOptions",
            json!({"runAsUserName":"ContainerUser"}),
        );
        assert!(hits(&user, &cfg(), "WIN409").is_empty());
        // HostProcess containers are WIN204's business.
        let hp = set(
            pod.clone(),
            "/spec/securityContext/windowsOptions",
            json!({"hostProcess":true,"runAsUserName":"NT AUTHORITY\\SYSTEM"}),
        );
        assert!(hits(&hp, &cfg(), "WIN409").is_empty());
        assert!(named_after_admin_base("contoso/app:1.0-windowsservercore"));
        assert!(!named_after_admin_base(
            "mcr.microsoft.com/dotnet/aspnet:8.0-nanoserver-ltsc2022"
        ));
        assert!(!named_after_admin_base("contoso/app:1.0-ltsc2019"));
    }

    /// A Windows pod with `runAsNonRoot: true` and no user, running `image`.
    fn non_root(image: &str) -> serde_json::Value {
        let pod = set(
            winok(),
            "/spec/securityContext",
            json!({"runAsNonRoot":true}),
        );
        set(pod, "/spec/containers/0/image", json!(image))
    }

    #[test]
    fn win409_image_user_container_administrator_is_an_error() {
        let pod = non_root("registry.k8s.io/e2e-test-images/busybox:1.36.1-1");
        // The e2e busybox image sets USER ContainerAdministrator (test/images/busybox/
        // Dockerfile_windows): the kubelet refuses it.
        assert_eq!(
            hits(&pod, &cfg(), "WIN409"),
            hit(Severity::Error, "/spec/containers/0/image")
        );
        let f = fixed(&pod, &cfg(), "WIN409");
        assert_eq!(
            f["spec"]["containers"][0]["securityContext"],
            json!({"windowsOptions":{"runAsUserName":"ContainerUser"}})
        );
        assert!(hits(&f, &cfg(), "WIN409").is_empty());
        // Existing container securityContext / windowsOptions objects are kept.
        let sc = set(
            pod.clone(),
            "/spec/containers/0/securityContext",
            json!({"windowsOptions":{"gmsaCredentialSpecName":"gmsa"}}),
        );
        let f = fixed(&sc, &cfg(), "WIN409");
        assert_eq!(
            f["spec"]["containers"][0]["securityContext"]["windowsOptions"],
            json!({"gmsaCredentialSpecName":"gmsa","runAsUserName":"ContainerUser"})
        );
        // Fixes are not offered when an existing Pod is updated (its spec is immutable).
        let upd = lint_object(&pod, &cfg(), &Context::default(), Operation::Update);
        assert!(upd.findings.iter().all(|f| f.fix.is_none()));
    }

    #[test]
    fn win409_declared_and_registry_users() {
        use crate::model::image_contents::parse_entries;
        use crate::model::image_facts::{ImageFacts, ImageFactsMap};
        use std::sync::Arc;
        let pod = non_root("contoso.azurecr.io/shop/web:1.2");
        assert!(hits(&pod, &cfg(), "WIN409").is_empty());
        // winlint.yaml images: says what the registry would.
        let mut c = cfg();
        c.target.images =
            parse_entries("- match: contoso.azurecr.io/shop/*\n  user: ContainerAdministrator\n")
                .expect("entries")
                .into();
        assert_eq!(
            hits(&pod, &c, "WIN409"),
            hit(Severity::Error, "/spec/containers/0/image")
        );
        assert!(
            only(&pod, &c, "WIN409")[0]
                .message
                .contains("winlint.yaml images")
        );
        // The registry's config User wins over the table (Server Core rebuilt with USER
        // ContainerUser).
        let sc = set(
            pod.clone(),
            "/spec/containers/0/image",
            json!("mcr.microsoft.com/windows/servercore:ltsc2022"),
        );
        let facts = |user: &str| ImageFacts {
            digest: "sha256:0".into(),
            list: false,
            platforms: vec![],
            user: Some(user.into()),
        };
        for (user, want) in [
            ("ContainerUser", vec![]),
            (
                "containeradministrator",
                hit(Severity::Error, "/spec/containers/0/image"),
            ),
        ] {
            let mut map = ImageFactsMap::new();
            map.insert(
                "mcr.microsoft.com/windows/servercore:ltsc2022".into(),
                Arc::new(facts(user)),
            );
            let cx = Context {
                images: Some(Arc::new(map)),
                ..Context::default()
            };
            let got: Vec<_> = lint_object(&sc, &cfg(), &cx, Operation::Lint)
                .findings
                .into_iter()
                .filter(|f| f.rule.id == "WIN409")
                .map(|f| (f.severity, f.pointer))
                .collect();
            assert_eq!(got, want, "{user}");
        }
    }
}
