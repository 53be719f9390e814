//! WIN501 `image-untagged-or-latest`.

use crate::model::Eval;
use crate::model::meta::{Area, Mutation, Reads, RuleOs};
use crate::model::pod::is_host_process;
use crate::model::workload::PodSite;
use crate::model::{Finding, RuleMeta, Severity};
use crate::rules::Rule;
use crate::rules::images::common::describe;
use crate::rules::images::common::image_builds;
use crate::rules::images::common::image_ptr;
use crate::rules::images::common::images;
use crate::rules::images::common::instead;
use crate::rules::images::common::known_alternatives;
use crate::rules::images::common::mismatch;

/// WIN501 in the registry.
pub const RULE: Rule = Rule {
    meta: &WIN501,
    check: image_untagged_or_latest,
};

// ---------------------------------------------------------------------------------------------
// WIN501

pub static WIN501: RuleMeta = RuleMeta {
    id: "WIN501",
    name: "image-untagged-or-latest",
    severity: Severity::Error,
    summary: "Image without a tag or digest, or tagged :latest (error for Microsoft base-OS images)",
    docs: r#"## What it does
Finds container images with no tag and no digest (which means `:latest`) or with the tag `latest`.
For the Microsoft base-OS repositories (`mcr.microsoft.com/windows/servercore`, `…/nanoserver`,
`…/server`, `mcr.microsoft.com/windows`, and the Docker Hub `microsoft/windowsservercore` and
`microsoft/nanoserver`) this is an error; for other images a warning. A digest pins the image, so
`name:latest@sha256:…` is not reported.

Not reported: HostProcess containers (they run on the host, so the image's Windows build does not
matter; `:latest` there is ordinary tag hygiene, not a Windows problem), containers with
`imagePullPolicy: Never` (the image is never pulled: it is built on or imported to each node, as
the AWS gMSA samples do, so the tag names what that node has; except the Microsoft base images,
whose `latest` no node of today has), known Linux-only images
(WIN507), and `:latest` tags known to have no image for the nodes' build (WIN502 reports those:
Docker Hub's `microsoft/iis` has images for Windows Server 2016, 1709 and 1803 only).

## Why is this bad?
A Windows container only runs on a host whose build matches the image's (process isolation), so
the image build must be chosen on purpose. Microsoft stopped publishing the `latest` tag for its
Windows base images on April 16, 2019: `servercore:latest` does not exist and the pull fails.
For other images `latest` resolves to whatever was pushed last, possibly for another Windows
build or another OS, and changes under a running Deployment.

## Example
```yaml
containers:
- name: app
  image: mcr.microsoft.com/windows/servercore      # implicit :latest
```

## Fix
Use a tag of an image built for your nodes' Windows build: for Microsoft's images winlint names one
that exists (`mcr.microsoft.com/windows/servercore:ltsc2022`,
`mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2022`); for other images, a version
tag (or a digest) of an image built for that build, ideally a manifest list with one entry per
Windows build.

## Severity
`error` for an untagged or `latest` Microsoft base image, which Microsoft stopped publishing in
2019 (the pull fails); `warning` for any other image, whose `latest` changes with every push.
"#,
    fix: None,
    source: "MS-COMPAT, seed",
    applies: "all",
    os: RuleOs::Windows,
    default_on: true,
    reads: Reads::HOSTS.and(Reads::of(&[Area::Containers, Area::PodSecurityContext])),
    mutation: Mutation::DEFAULT,
};

pub(crate) fn image_untagged_or_latest(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    let hosts = eval.host_builds(site);
    let iso = eval.isolation(site);
    images(eval)
        .filter(|(c, _, i)| {
            i.latest
                && !i.linux
                && !is_host_process(site, c)
                // Never pulled: the image is put on each node by hand (built there, or
                // imported), so the tag names what is on that node; but no node of today has
                // a Microsoft base image tagged latest (it was never published after 2019).
                && (i.ms_base
                    || c.value.get("imagePullPolicy").and_then(serde_json::Value::as_str)
                        != Some("Never"))
                && mismatch(i, &hosts, iso).is_none()
        })
        .map(|(c, img, i)| {
            let r = i.reference.as_ref().expect("parsed");
            let how = if r.tag.is_none() {
                "has no tag (so :latest)"
            } else {
                "uses the :latest tag"
            };
            let f = |msg: String| Finding::new(&WIN501, image_ptr(site, c), msg);
            let builds = describe(&image_builds(&hosts), " or ");
            let known = !known_alternatives(i, &hosts).is_empty();
            if i.ms_base {
                f(format!(
                    "{} image {img} {how}, which Microsoft stopped publishing for its Windows base images on April 16, 2019: the pull fails. Name the nodes' Windows build: {}",
                    c.label(),
                    instead(i, &hosts)
                ))
                .severity(Severity::Error)
            } else if i.list_builds().is_some() {
                // A known list with an entry for the nodes (else WIN502 reports it).
                f(format!(
                    "{} image {img} {how}: today it has an image for the nodes' Windows build ({builds}), but what it resolves to changes with every push. Pin a tag: {}",
                    c.label(),
                    instead(i, &hosts)
                ))
                .severity(Severity::Warning)
            } else {
                let pin = if known {
                    format!("pin a tag that exists for it: {}", instead(i, &hosts))
                } else {
                    format!(
                        "pin a version tag (or a digest) of an image built for {builds}, ideally a manifest list with one entry per Windows build"
                    )
                };
                f(format!(
                    "{} image {img} {how}: what it resolves to changes with every push, and nothing in the reference says it has an image for the nodes' Windows build ({builds}); {pin}",
                    c.label(),
                ))
                .severity(Severity::Warning)
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::images::common::tests::DIGEST;

    use crate::rules::images::common::tests::with_image;
    use crate::rules::testutil::{cfg, findings};

    #[test]
    fn win501_severity_by_repository() {
        // (image, severity) — nothing for pinned images or Linux-only ones (WIN507's business).
        let cases: &[(&str, Option<Severity>)] = &[
            (
                "mcr.microsoft.com/windows/servercore",
                Some(Severity::Error),
            ),
            (
                "mcr.microsoft.com/windows/server:latest",
                Some(Severity::Error),
            ),
            ("mcr.microsoft.com/windows", Some(Severity::Error)),
            ("microsoft/windowsservercore", Some(Severity::Error)),
            ("microsoft/nanoserver:latest", Some(Severity::Error)),
            (
                "mcr.microsoft.com/windows/servercore/iis",
                Some(Severity::Warning),
            ),
            ("contoso/app", Some(Severity::Warning)),
            ("contoso/app:latest", Some(Severity::Warning)),
            ("contoso/app:1.0-ltsc2022", None),
            ("mcr.microsoft.com/windows/servercore:ltsc2022", None),
            ("mcr.microsoft.com/windows/servercore:latest@DIGEST", None),
            ("mcr.microsoft.com/windows/servercore@DIGEST", None),
        ];
        for (image, want) in cases {
            let pod = with_image(&image.replace("DIGEST", DIGEST));
            let got = findings(&pod, &cfg())
                .into_iter()
                .find(|f| f.rule.id == "WIN501")
                .map(|f| f.severity);
            assert_eq!(got, *want, "{image}");
        }
    }
}
