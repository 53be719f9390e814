//! WIN505 `tag-case`.

use crate::model::Eval;
use crate::model::meta::{Area, Mutation, Reads, RuleOs};
use crate::model::workload::PodSite;
use crate::model::{Finding, RuleMeta, Severity};
use crate::rules::Rule;
use crate::rules::images::common::image_ptr;
use crate::rules::images::common::images;

/// WIN505 in the registry.
pub const RULE: Rule = Rule {
    meta: &WIN505,
    check: tag_case,
};

// ---------------------------------------------------------------------------------------------
// WIN505

pub static WIN505: RuleMeta = RuleMeta {
    id: "WIN505",
    name: "tag-case",
    severity: Severity::Warning,
    summary: "Windows OS token in an image tag spelled with the wrong case (20h2, LTSC2019)",
    docs: r#"## What it does
Finds Windows OS tokens in the tags of Microsoft images (`mcr.microsoft.com/*`, Docker Hub
`microsoft/*`) and Docker official images whose case differs from the published spelling:
`20H2`, `ltsc2019`, `sac2016`, `windowsservercore`, `servercore`, `nanoserver`. Other registries'
tags are whatever their owners pushed, so they are not checked.

## Why is this bad?
Registry tags are case-sensitive: `servercore:20h2` does not exist (the tag is `20H2`), so the pull
fails with "not found" although the tag looks right to a human, and to Windows, which ignores
case almost everywhere else.

## Example
```yaml
containers:
- name: app
  image: mcr.microsoft.com/windows/servercore:20h2
```

## Fix
Spell the token as published: `mcr.microsoft.com/windows/servercore:20H2`.
"#,
    fix: None,
    source: "MS-LIFE, IIS",
    applies: "all",
    os: RuleOs::Windows,
    default_on: true,
    reads: Reads::of(&[Area::Containers]),
    mutation: Mutation::DEFAULT,
};

pub(crate) fn tag_case(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    images(eval)
        .filter_map(|(c, img, i)| {
            let (found, canonical) = i.case_mismatch.as_ref()?;
            let r = i.reference.as_ref()?;
            let known_spelling = r.registry == "mcr.microsoft.com"
                || (r.registry == "docker.io"
                    && (r.repository.starts_with("microsoft/")
                        || r.repository.starts_with("library/")));
            if !known_spelling {
                return None;
            }
            let tag = r.tag.as_deref()?;
            Some(Finding::new(
                &WIN505,
                image_ptr(site, c),
                format!(
                    "{} image {img}: the tag spells {found} where the registry publishes {canonical}; tags are case-sensitive, so the pull fails (not found). Use {}:{}",
                    c.label(),
                    r.familiar(),
                    tag.replacen(found.as_str(), canonical, 1)
                ),
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use crate::model::windows;

    use crate::model::windows::{WS2019, WS2022};

    use crate::rules::images::common::tests::message;
    use crate::rules::images::common::tests::target;
    use crate::rules::images::common::tests::with_image;
    use crate::rules::testutil::ids;

    #[test]
    fn win505_only_where_the_spelling_is_known() {
        let c = target(&[windows::V20H2, WS2019, WS2022]);
        for (image, fires) in [
            ("mcr.microsoft.com/windows/servercore:20h2", true),
            ("mcr.microsoft.com/windows/servercore:20H2", false),
            ("mcr.microsoft.com/windows/servercore:LTSC2019", true),
            ("python:3.12-WindowsServerCore-ltsc2022", true),
            ("microsoft/iis:NanoServer-sac2016", true),
            ("contoso/app:1.0-LTSC2019", false),
        ] {
            assert_eq!(
                ids(&with_image(image), &c).contains(&"WIN505"),
                fires,
                "{image}"
            );
        }
        let m = message(
            &with_image("mcr.microsoft.com/windows/servercore:20h2"),
            &c,
            "WIN505",
        );
        assert!(
            m.contains("Use mcr.microsoft.com/windows/servercore:20H2"),
            "{m}"
        );
    }
}
