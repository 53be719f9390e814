//! WIN409 `runasnonroot-admin`.

use crate::model::Eval;
use crate::model::image;
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

/// Whether the image is one of Microsoft's own images whose default user is published as
/// `ContainerAdministrator` (Server Core, Server, Windows, IIS, .NET Framework): then the
/// kubelet's refusal is certain (`verifyRunAsNonRoot`, security_context_windows.go, compares the
/// image's user with ContainerAdministrator). An image merely named after them may set another
/// `USER`. Judged on the reference's normal form, whatever its spelling.
fn microsoft_admin_image(image: &str) -> bool {
    let Some(r) = image::parse(image) else {
        return false;
    };
    let repo = r.repository.as_str();
    match r.registry.as_str() {
        "mcr.microsoft.com" => {
            matches!(
                repo,
                "windows/servercore" | "windows/servercore/iis" | "windows/server" | "windows"
            ) || repo.starts_with("dotnet/framework/")
        }
        "docker.io" => matches!(repo, "microsoft/windowsservercore" | "microsoft/iis"),
        _ => false,
    }
}

/// Whether the image's default user is `ContainerAdministrator`: Windows Server Core, Server and
/// the full Windows base images and images built on them (`*windowsservercore*`, .NET Framework).
/// Nano Server's default user is `ContainerUser`; anything else is unknown (`false`), as is a
/// reference that does not parse (the kubelet refuses it before any user matters).
pub fn image_default_user_is_admin(image: &str) -> bool {
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
pod's):

* effective `windowsOptions.runAsUserName` equal to `ContainerAdministrator` (any case) →
  **error**;
* no `runAsUserName` at all and a Server Core / Server / Windows based image, whose default user
  is `ContainerAdministrator` → **warning**. Nano Server images run as `ContainerUser` and are
  fine.

HostProcess containers are left to WIN204.

## Why is this bad?
The kubelet's `verifyRunAsNonRoot` on Windows treats `ContainerAdministrator` as root: the
container never starts ("container's runAsUserName (ContainerAdministrator) which will be
regarded as root identity and will break non-root policy").

## Example
```yaml
securityContext:
  runAsNonRoot: true
  windowsOptions: {runAsUserName: ContainerAdministrator}
```

## Fix
Opt-in: set `windowsOptions.runAsUserName: ContainerUser` (check that the application can run
without administrator rights).

## Severity
`error` where the kubelet refuses the container for certain (it runs as ContainerAdministrator);
`warning` where that depends on what winlint cannot see (an image's own `USER`).
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
        match effective_run_as_user_name(site, &c) {
            Some(user) if user.value.eq_ignore_ascii_case("ContainerAdministrator") => {
                if out.iter().any(|f| f.pointer == user.pointer) {
                    continue;
                }
                let mut f = Finding::new(
                    &WIN409,
                    user.pointer.clone(),
                    format!(
                        "{} runs as {:?} with runAsNonRoot: true; the kubelet regards ContainerAdministrator as root and refuses to start the container. Use runAsUserName: ContainerUser, or drop runAsNonRoot",
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
            }
            Some(_) => {}
            None => {
                let image = c.image().unwrap_or("");
                if !image_default_user_is_admin(image) {
                    continue;
                }
                let mut f = Finding::new(
                    &WIN409,
                    site.container_ptr(&c, "/image"),
                    format!(
                        "{} sets runAsNonRoot: true ({}) without runAsUserName, and image {image} runs as ContainerAdministrator by default{}; the kubelet will refuse to start it. Set windowsOptions.runAsUserName: ContainerUser",
                        c.label(),
                        crate::model::pod::dotted(&rnr.pointer),
                        if microsoft_admin_image(image) {
                            ""
                        } else {
                            " (judged by its name: unless its Dockerfile sets another USER)"
                        },
                    ),
                )
                // The refusal is certain for Microsoft's own images; for one named after them it
                // depends on a USER winlint cannot see.
                .severity(if microsoft_admin_image(image) {
                    Severity::Error
                } else {
                    Severity::Warning
                });
                if eval.fix_possible(site) {
                    f = f.with_fix(Fix {
                        safety: FixSafety::OptIn,
                        description: format!("set runAsUserName: ContainerUser in {}", c.label()),
                        ops: set_container_user_ops(site, &c, "ContainerUser"),
                    });
                }
                out.push(f);
            }
        }
    }
    out
}

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
    fn win409_servercore_default_user_error_and_fix() {
        let pod = set(
            winok(),
            "/spec/securityContext",
            json!({"runAsNonRoot":true}),
        );
        // Microsoft's Server Core image runs as ContainerAdministrator: the kubelet's refusal
        // is certain (verifyRunAsNonRoot, security_context_windows.go).
        assert_eq!(
            hits(&pod, &cfg(), "WIN409"),
            hit(Severity::Error, "/spec/containers/0/image")
        );
        // An image only named after it may set another USER: a warning that says so.
        let derived = set(
            pod.clone(),
            "/spec/containers/0/image",
            json!("contoso.azurecr.io/shop/web-servercore:1.2"),
        );
        assert_eq!(
            hits(&derived, &cfg(), "WIN409"),
            hit(Severity::Warning, "/spec/containers/0/image")
        );
        assert!(
            only(&derived, &cfg(), "WIN409")[0]
                .message
                .contains("judged by its name")
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
        // HostProcess containers are WIN204's business.
        let hp = set(
            pod.clone(),
            "/spec/securityContext/windowsOptions",
            json!({"hostProcess":true,"runAsUserName":"NT AUTHORITY\\SYSTEM"}),
        );
        assert!(hits(&hp, &cfg(), "WIN409").is_empty());
        // Fixes are not offered when an existing Pod is updated (its spec is immutable).
        let upd = lint_object(&pod, &cfg(), &Context::default(), Operation::Update);
        assert!(upd.findings.iter().all(|f| f.fix.is_none()));
        assert!(image_default_user_is_admin(
            "mcr.microsoft.com/dotnet/framework/aspnet:4.8-windowsservercore-ltsc2022"
        ));
        assert!(image_default_user_is_admin(
            "mcr.microsoft.com/windows/server:ltsc2025"
        ));
        assert!(!image_default_user_is_admin(
            "mcr.microsoft.com/dotnet/aspnet:8.0-nanoserver-ltsc2022"
        ));
        assert!(!image_default_user_is_admin("contoso/app:1.0-ltsc2019"));
        // Every spelling of Microsoft's images is Microsoft's (the normal form of the reference).
        for spelling in [
            "mcr.microsoft.com:443/windows/servercore:ltsc2022",
            "MCR.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2022",
            "mcr.microsoft.com:443/dotnet/framework/aspnet:4.8",
            "docker.io/microsoft/iis:windowsservercore-1803",
            "registry-1.docker.io:443/microsoft/windowsservercore:1809",
        ] {
            assert!(image_default_user_is_admin(spelling), "{spelling}");
            assert!(microsoft_admin_image(spelling), "{spelling}");
        }
        assert!(!microsoft_admin_image(
            "contoso.io/windows/servercore:ltsc2022"
        ));
        assert!(!microsoft_admin_image(
            "mcr.microsoft.com:8443/windows/servercore:ltsc2022"
        ));
    }
}
