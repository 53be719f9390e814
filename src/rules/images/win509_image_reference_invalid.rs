//! WIN509 `image-reference-invalid`.

use crate::model::Eval;
use crate::model::meta::{Area, Mutation, Reads, RuleOs};
use crate::model::workload::PodSite;
use crate::model::{Finding, RuleMeta, Severity};
use crate::rules::Rule;
use crate::rules::images::common::image_ptr;

/// WIN509 in the registry.
pub const RULE: Rule = Rule {
    meta: &WIN509,
    check: image_reference_invalid,
};

// ---------------------------------------------------------------------------------------------
// WIN509

pub static WIN509: RuleMeta = RuleMeta {
    id: "WIN509",
    name: "image-reference-invalid",
    severity: Severity::Error,
    summary: "Image reference the kubelet cannot parse (InvalidImageName): the container never starts",
    docs: r#"## What it does
Checks every container's `image` (init and ephemeral containers too) against the grammar the
kubelet parses it with before every pull: distribution's `ParseNormalizedNamed`
(github.com/distribution/reference), called by the kubelet's image manager. It reports, with
distribution's own error, a reference with whitespace or characters no reference has (a
placeholder such as `< Registry Name >.azurecr.io/...`), an upper-case repository path
(`mcr.microsoft.com/Windows/ServerCore`), a tag that is not 1 to 128 of letters, digits, `_`,
`.` and `-`, a repository path over 255 characters, a bare 64-hex image ID, and a digest that
is not `sha256`, `sha384` or `sha512` with 64, 96 or 128 lower-case hex digits.

An unrendered template (`{{ .Values.image }}`, `${IMAGE}`) is not reported: it is filled in
before it reaches a cluster. A missing or empty `image` is the API server's to reject.

What can still be read from an invalid reference (its tag, its repository path) feeds the other
image rules, which judge the image the author meant: `windowsservercore-ltsc2019` is still an
ltsc2019 image (WIN502 on ltsc2022 nodes). Nothing is pulled, looked up or suggested from it.

## Why is this bad?
The API server accepts the pod (it checks only that `image` has no surrounding whitespace), the
scheduler places it, and the kubelet fails the container with `InvalidImageName` ("Failed to
apply default image tag ... couldn't parse image reference"), for ever: the pod never runs.

## Example
```yaml
containers:
- name: iis
  image: < Registry Name >.azurecr.io/windows/servercore/iis:windowsservercore-ltsc2019
```

## Fix
Write the registry, repository and tag the image was pushed under, in lower case (the tag may
hold upper case): `myregistry.azurecr.io/windows/servercore/iis:windowsservercore-ltsc2022`.
"#,
    fix: None,
    source: "kubelet pkg/kubelet/images/image_manager.go; github.com/distribution/reference",
    applies: "all",
    os: RuleOs::Any,
    default_on: true,
    reads: Reads::of(&[Area::Containers]),
    mutation: Mutation::DEFAULT,
};

fn image_reference_invalid(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    eval.images
        .iter()
        .filter_map(|(c, i)| {
            let e = i.invalid.as_ref().filter(|e| !e.template)?;
            let image = c.image().filter(|s| !s.is_empty())?;
            let read = match &i.reference {
                Some(r) if i.windows || i.build.is_some() => format!(
                    "; the other image rules judge what it names ({}/{}{})",
                    r.registry,
                    r.repository,
                    r.tag.as_deref().map(|t| format!(":{t}")).unwrap_or_default()
                ),
                _ => String::new(),
            };
            Some(Finding::new(
                &WIN509,
                image_ptr(site, c),
                format!(
                    "{} image {image:?} does not parse: {e}; the kubelet fails the container with InvalidImageName and the pod never runs. Write the registry, repository and tag it was pushed under{read}",
                    c.label()
                ),
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use crate::model::windows::WS2022;
    use crate::rules::images::common::tests::{message, target, with_image};
    use crate::rules::testutil::{cfg, ids};

    const PLACEHOLDER: &str =
        "< Registry Name >.azurecr.io/windows/servercore/iis:windowsservercore-ltsc2019";

    #[test]
    fn win509_reports_what_the_kubelet_cannot_parse() {
        let c = cfg();
        for (image, fires) in [
            (PLACEHOLDER, true),
            ("mcr.microsoft.com/Windows/servercore:ltsc2022", true),
            ("mcr.microsoft.com/windows/servercore:ltsc 2022", true),
            ("mcr.microsoft.com/windows/servercore@sha256:abc", true),
            ("mcr.microsoft.com/windows/servercore:ltsc2022", false),
            ("Contoso.azurecr.io/app:LTSC2022", false),
            ("{{ .Values.image }}", false),
            (
                "mcr.microsoft.com/windows/servercore:{{ .Values.tag }}",
                false,
            ),
            ("${REGISTRY}/app:1.0", false),
            ("", false),
        ] {
            assert_eq!(
                ids(&with_image(image), &c).contains(&"WIN509"),
                fires,
                "{image:?}"
            );
        }
        let m = message(&with_image(PLACEHOLDER), &c, "WIN509");
        assert!(
            m.contains("InvalidImageName") && m.contains("whitespace"),
            "{m}"
        );
    }

    /// The readable tag still feeds the build rules: an ltsc2019 image on ltsc2022 nodes.
    #[test]
    fn the_readable_tag_still_feeds_win502() {
        let got = ids(&with_image(PLACEHOLDER), &target(&[WS2022]));
        assert!(
            got.contains(&"WIN509") && got.contains(&"WIN502"),
            "{got:?}"
        );
        let m = message(&with_image(PLACEHOLDER), &target(&[WS2022]), "WIN509");
        assert!(
            m.contains("windows/servercore/iis:windowsservercore-ltsc2019"),
            "{m}"
        );
    }
}
