//! Who a Windows container runs as: `windowsOptions.runAsUserName` (the container's over the
//! pod's), else the image's default user, from the registry's facts (the config's `User`) or,
//! without them, from what Microsoft and the Docker official images publish.
//!
//! The user matters beyond the kubelet's `runAsNonRoot` check (WIN409): `ContainerUser` is a
//! member of `BUILTIN\Users` only, and the filesystems a pod mounts grant that group less than
//! they grant administrators (WIN315).

use super::context::Context;
use super::image::{ImageInfo, ImageRef};
use super::pod::effective_run_as_user_name;
use super::workload::{ContainerRef, PodSite};

/// Where the user of a container comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UserSource {
    /// `windowsOptions.runAsUserName` at this JSON pointer (the container's or the pod's).
    RunAsUserName(String),
    /// The image config's `User`, as the registry served it.
    Registry,
    /// What winlint knows about the image (the reason, for the message).
    KnownImage(&'static str),
}

/// The user a container runs as, and how winlint knows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EffectiveUser {
    pub name: String,
    pub source: UserSource,
}

impl EffectiveUser {
    /// `ContainerUser`, compared as Windows compares account names (without case).
    pub fn is_container_user(&self) -> bool {
        self.name.eq_ignore_ascii_case("ContainerUser")
    }

    /// How the user was found, for a message: "runAsUserName at …", "the image's default user
    /// (registry)", "the image's default user (…)".
    pub fn why(&self) -> String {
        match &self.source {
            UserSource::RunAsUserName(at) => format!("runAsUserName at {at}"),
            UserSource::Registry => "the image's default user, from its registry config".into(),
            UserSource::KnownImage(why) => format!("the image's default user: {why}"),
        }
    }
}

/// The user container `c` runs as; `None` when neither the pod nor the registry nor winlint's
/// knowledge of the image says.
pub fn effective_user(
    site: &PodSite,
    c: &ContainerRef,
    context: &Context,
    image: Option<&ImageInfo>,
) -> Option<EffectiveUser> {
    if let Some(u) = effective_run_as_user_name(site, c) {
        return Some(EffectiveUser {
            name: u.value.to_string(),
            source: UserSource::RunAsUserName(u.pointer),
        });
    }
    let reference = c.image()?;
    if let Some(user) = context
        .image_facts(reference, site.namespace)
        .and_then(|f| f.user.clone())
    {
        return Some(EffectiveUser {
            name: user,
            source: UserSource::Registry,
        });
    }
    let r = image.and_then(|i| i.reference.as_ref())?;
    known_default_user(r).map(|(name, why)| EffectiveUser {
        name: name.into(),
        source: UserSource::KnownImage(why),
    })
}

/// A repository whose Windows images run as `user` by default: registry, repository, the tag
/// substring that selects the Windows variant (`""`: every tag), the user, and the source.
struct KnownUser {
    registry: &'static str,
    repository: &'static str,
    tag_contains: &'static str,
    user: &'static str,
    why: &'static str,
}

/// Images whose default user is published. Nano Server has run as `ContainerUser` since 1709
/// (the legacy `microsoft/nanoserver` 2016 images ran as ContainerAdministrator, so they are
/// not listed); the images Microsoft and the Docker official images build on it switch to
/// ContainerAdministrator for `setx /M PATH` and back (`USER ContainerUser`). Server Core and
/// the images built on it run as ContainerAdministrator (WIN409 knows those).
const KNOWN_USERS: &[KnownUser] = &[
    KnownUser {
        registry: "mcr.microsoft.com",
        repository: "windows/nanoserver",
        tag_contains: "",
        user: "ContainerUser",
        why: "Nano Server runs as ContainerUser",
    },
    KnownUser {
        registry: "mcr.microsoft.com",
        repository: "dotnet/runtime",
        tag_contains: "nanoserver",
        user: "ContainerUser",
        why: ".NET's Nano Server images run as ContainerUser",
    },
    KnownUser {
        registry: "mcr.microsoft.com",
        repository: "dotnet/aspnet",
        tag_contains: "nanoserver",
        user: "ContainerUser",
        why: ".NET's Nano Server images run as ContainerUser",
    },
    KnownUser {
        registry: "mcr.microsoft.com",
        repository: "dotnet/sdk",
        tag_contains: "nanoserver",
        user: "ContainerUser",
        why: ".NET's Nano Server images run as ContainerUser",
    },
    KnownUser {
        registry: "mcr.microsoft.com",
        repository: "dotnet/core/runtime",
        tag_contains: "nanoserver",
        user: "ContainerUser",
        why: ".NET's Nano Server images run as ContainerUser",
    },
    KnownUser {
        registry: "mcr.microsoft.com",
        repository: "dotnet/core/aspnet",
        tag_contains: "nanoserver",
        user: "ContainerUser",
        why: ".NET's Nano Server images run as ContainerUser",
    },
    KnownUser {
        registry: "mcr.microsoft.com",
        repository: "dotnet/core/sdk",
        tag_contains: "nanoserver",
        user: "ContainerUser",
        why: ".NET's Nano Server images run as ContainerUser",
    },
    KnownUser {
        registry: "mcr.microsoft.com",
        repository: "powershell",
        tag_contains: "nanoserver",
        user: "ContainerUser",
        why: "PowerShell's Nano Server images run as ContainerUser",
    },
    // Docker official images (docker-library repo-info: `USER ContainerAdministrator`,
    // `RUN setx /m PATH …`, `USER ContainerUser`).
    KnownUser {
        registry: "docker.io",
        repository: "library/golang",
        tag_contains: "nanoserver",
        user: "ContainerUser",
        why: "the official golang Nano Server images run as ContainerUser",
    },
    KnownUser {
        registry: "docker.io",
        repository: "library/openjdk",
        tag_contains: "nanoserver",
        user: "ContainerUser",
        why: "the official openjdk Nano Server images run as ContainerUser",
    },
    KnownUser {
        registry: "docker.io",
        repository: "library/mongo",
        tag_contains: "nanoserver",
        user: "ContainerUser",
        why: "the official mongo Nano Server images run as ContainerUser",
    },
];

/// The default user winlint knows for an image reference (tags compared without case).
pub fn known_default_user(r: &ImageRef) -> Option<(&'static str, &'static str)> {
    let tag = r.tag.as_deref().unwrap_or("").to_ascii_lowercase();
    KNOWN_USERS
        .iter()
        .find(|k| {
            r.registry.eq_ignore_ascii_case(k.registry)
                && r.repository.eq_ignore_ascii_case(k.repository)
                && tag.contains(k.tag_contains)
        })
        .map(|k| (k.user, k.why))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(image: &str) -> Option<&'static str> {
        known_default_user(&crate::model::image::parse(image).expect("reference")).map(|(u, _)| u)
    }

    #[test]
    fn nano_server_images_run_as_container_user() {
        for image in [
            "mcr.microsoft.com/windows/nanoserver:ltsc2022",
            "mcr.microsoft.com/windows/nanoserver:1809",
            "mcr.microsoft.com/dotnet/aspnet:8.0-nanoserver-ltsc2022",
            "mcr.microsoft.com/dotnet/core/runtime:3.1-nanoserver-1809",
            "mcr.microsoft.com/powershell:lts-nanoserver-ltsc2022",
            "golang:1.22-nanoserver-ltsc2022",
            "docker.io/library/mongo:7.0-nanoserver",
        ] {
            assert_eq!(user(image), Some("ContainerUser"), "{image}");
        }
    }

    #[test]
    fn other_images_are_unknown() {
        for image in [
            // Server Core runs as ContainerAdministrator; .NET's servercore tags too.
            "mcr.microsoft.com/windows/servercore:ltsc2022",
            "mcr.microsoft.com/dotnet/aspnet:8.0-windowsservercore-ltsc2022",
            // A multi-OS tag: which entry a Windows node pulls is not read from the name.
            "mcr.microsoft.com/dotnet/aspnet:8.0",
            // The 2016 Nano Server ran as ContainerAdministrator.
            "microsoft/nanoserver:10.0.14393.2068",
            // Someone else's image named after it.
            "contoso/nanoserver:ltsc2022",
        ] {
            assert_eq!(user(image), None, "{image}");
        }
    }
}
