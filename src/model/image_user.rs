//! Who a Windows container runs as: `windowsOptions.runAsUserName` (the container's over the
//! pod's), else the image's default user, from the registry's facts (the config's `User`) or,
//! without them, from what Microsoft and the Docker official images publish.
//!
//! The user matters beyond the kubelet's `runAsNonRoot` check (WIN409): `ContainerUser` is a
//! member of `BUILTIN\Users` only, and the filesystems a pod mounts grant that group less than
//! they grant administrators (WIN315).

use super::eval::Eval;
use super::image::{ImageInfo, ImageRef};
use super::image_contents::{self, Origin};
use super::pod::effective_run_as_user_name;
use super::workload::{ContainerRef, PodSite};

/// Where the user of a container comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UserSource {
    /// `windowsOptions.runAsUserName` at this JSON pointer (the container's or the pod's).
    RunAsUserName(String),
    /// The image config's `User`, as the registry served it.
    Registry,
    /// What winlint knows about the image (the reason, for the message): an entry of
    /// `winlint.yaml`'s `images:` or of winlint's table.
    KnownImage(String),
}

/// The user a container runs as, and how winlint knows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EffectiveUser {
    /// The user; `""` when the image config sets none (the container then runs as
    /// ContainerAdministrator, and the kubelet's `runAsNonRoot` check, which compares a set
    /// user only, lets it start).
    pub name: String,
    pub source: UserSource,
}

impl EffectiveUser {
    /// `ContainerUser`, compared as Windows compares account names (without case).
    pub fn is_container_user(&self) -> bool {
        self.name.eq_ignore_ascii_case("ContainerUser")
    }

    /// `ContainerAdministrator`, compared as the kubelet's `verifyRunAsNonRoot` compares it
    /// (`strings.EqualFold`, no domain prefix removed).
    pub fn is_container_administrator(&self) -> bool {
        self.name.eq_ignore_ascii_case("ContainerAdministrator")
    }

    /// The image config sets no user: the container runs as ContainerAdministrator.
    pub fn unset(&self) -> bool {
        self.name.is_empty()
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

/// The user container `c` runs as; `None` when neither the pod nor the registry nor what
/// winlint knows of the image (the user's `images:`, winlint's table) says.
pub fn effective_user(
    site: &PodSite,
    c: &ContainerRef,
    eval: &Eval,
    image: Option<&ImageInfo>,
) -> Option<EffectiveUser> {
    if let Some(u) = effective_run_as_user_name(site, c) {
        return Some(EffectiveUser {
            name: u.value.to_string(),
            source: UserSource::RunAsUserName(u.pointer),
        });
    }
    let reference = c.image()?;
    // A list's user is that of the entry each Windows host the pod faces pulls.
    if let Some(user) = eval
        .context
        .image_facts(reference, site.namespace)
        .and_then(|f| f.user_for(&eval.host_builds(site)))
    {
        return Some(EffectiveUser {
            name: user,
            source: UserSource::Registry,
        });
    }
    let r = image.and_then(|i| i.reference.as_ref())?;
    let known = image_contents::lookup(&eval.target.images, r)?;
    let name = known.entry.user.clone()?;
    let why = match (known.origin, name.as_str()) {
        (Origin::Config, _) => known.why(),
        (Origin::Known, "") => format!("{} sets no User", r.repository),
        (Origin::Known, u) => format!("{} runs as {u}", r.repository),
    };
    Some(EffectiveUser {
        name,
        source: UserSource::KnownImage(why),
    })
}

/// The default user winlint's table knows for an image reference (`""`: the config sets
/// none).
pub fn known_default_user(r: &ImageRef) -> Option<&'static str> {
    image_contents::lookup(&[], r)?.entry.user.as_deref()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(image: &str) -> Option<&'static str> {
        known_default_user(&crate::model::image::parse(image).expect("reference"))
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
            // A multi-OS tag: which entry a Windows node pulls is not read from the name.
            "mcr.microsoft.com/dotnet/aspnet:8.0",
            // Someone else's image named after it.
            "contoso/nanoserver:ltsc2022",
        ] {
            assert_eq!(user(image), None, "{image}");
        }
        // Server Core sets no User (kubernetes/kubernetes#112469), .NET's servercore tags and
        // the 2016 Nano Server neither: they run as ContainerAdministrator.
        for image in [
            "mcr.microsoft.com/windows/servercore:ltsc2022",
            "mcr.microsoft.com/dotnet/aspnet:8.0-windowsservercore-ltsc2022",
            "microsoft/nanoserver:10.0.14393.2068",
        ] {
            assert_eq!(user(image), Some(""), "{image}");
        }
    }
}
