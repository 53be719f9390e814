//! WIN504 `legacy-dockerhub-microsoft`.

use crate::model::Eval;
use crate::model::known_images::Successor;
use crate::model::meta::{Area, Mutation, Reads, RuleOs};
use crate::model::workload::PodSite;
use crate::model::{Finding, RuleMeta, Severity};
use crate::rules::Rule;
use crate::rules::images::common::describe;
use crate::rules::images::common::image_builds;
use crate::rules::images::common::image_ptr;
use crate::rules::images::common::images;
use crate::rules::images::common::instead;
use crate::rules::images::common::known_alternatives;

/// WIN504 in the registry.
pub const RULE: Rule = Rule {
    meta: &WIN504,
    check: legacy_dockerhub_microsoft,
};

// ---------------------------------------------------------------------------------------------
// WIN504

pub static WIN504: RuleMeta = RuleMeta {
    id: "WIN504",
    name: "legacy-dockerhub-microsoft",
    severity: Severity::Warning,
    summary: "Image from the retired Docker Hub microsoft/* repositories",
    docs: r#"## What it does
Finds images from Docker Hub's `microsoft/` organisation (`microsoft/windowsservercore`,
`microsoft/nanoserver`, `microsoft/iis`, `microsoft/aspnet`, `microsoft/dotnet-framework`, …).

## Why is this bad?
Microsoft moved its container images to the Microsoft Container Registry (`mcr.microsoft.com`)
in 2018–2019; the Docker Hub repositories are deprecated and receive no updates, so these images
lack years of security fixes and have no tags for current Windows builds (never
`microsoft/windowsservercore:ltsc2022` or `microsoft/iis:windowsservercore-ltsc2022`).

## Example
```yaml
containers:
- name: web
  image: microsoft/iis:windowsservercore-1709
```

## Fix
Use the MCR successor, with a tag that exists for your nodes' build (winlint names it):
`mcr.microsoft.com/windows/servercore` (for `microsoft/windowsservercore`),
`mcr.microsoft.com/windows/nanoserver`, `mcr.microsoft.com/windows/servercore/iis`,
`mcr.microsoft.com/dotnet/framework/{runtime,sdk,aspnet,wcf}`, `mcr.microsoft.com/dotnet/{runtime,aspnet,sdk}`,
`mcr.microsoft.com/powershell`. SQL Server on Windows containers (`microsoft/mssql-server-windows-*`)
was discontinued: there is no Windows successor.
"#,
    fix: None,
    source: "MS-COMPAT, seed",
    applies: "all",
    os: RuleOs::Windows,
    default_on: true,
    reads: Reads::of(&[Area::Placement, Area::Containers]),
    mutation: Mutation::DEFAULT,
};

pub(crate) fn legacy_dockerhub_microsoft(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    let hosts = eval.host_builds(site);
    images(eval)
        .filter_map(|(c, img, i)| {
            let advice = match i.legacy_dockerhub? {
                Successor::Repo(repo) if known_alternatives(i, &hosts).is_empty() => format!(
                    "its successor is {repo} (winlint knows no tag there for {})",
                    describe(&image_builds(&hosts), " or ")
                ),
                Successor::Repo(_) => instead(i, &hosts),
                Successor::Discontinued => "Microsoft discontinued SQL Server on Windows containers, so there is no Windows successor (mcr.microsoft.com/mssql/server is Linux-only)".to_string(),
                Successor::Unknown => "look for its successor on mcr.microsoft.com".to_string(),
            };
            Some(Finding::new(
                &WIN504,
                image_ptr(site, c),
                format!(
                    "{} image {img} comes from Docker Hub's microsoft/ repositories, which Microsoft deprecated when it moved its images to mcr.microsoft.com (no updates since): {advice}",
                    c.label()
                ),
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use crate::model::windows;
    use crate::model::windows::Build;

    use crate::model::KubeVersion;

    use crate::model::windows::{WS2016, WS2019, WS2022, WS2025};

    use crate::rules::images::common::tests::message;
    use crate::rules::images::common::tests::target;
    use crate::rules::images::common::tests::with_image;
    use crate::rules::testutil::{cfg, ids, set, winok};
    use serde_json::json;

    #[test]
    fn win504_legacy_docker_hub() {
        let pod = with_image("microsoft/iis:windowsservercore-1709");
        let c = target(&[windows::V1709]);
        assert_eq!(ids(&pod, &c), ["WIN504"]);
        assert!(message(&pod, &c, "WIN504").contains("mcr.microsoft.com/windows/servercore/iis"));
        // Implicit latest: Docker Hub's microsoft/iis had images for 2016, 1709 and 1803 only,
        // so on Windows Server 2022 nodes it is a certain WIN502 (and WIN501 stays quiet).
        assert_eq!(
            ids(&with_image("microsoft/iis"), &cfg()),
            ["WIN502", "WIN504"]
        );
        assert_eq!(ids(&with_image("microsoft/iis"), &c), ["WIN501", "WIN504"]);
        assert_eq!(ids(&winok(), &cfg()), Vec::<&str>::new());
    }

    #[test]
    fn win504_names_the_successor_with_a_tag_that_exists() {
        let cases: &[(&str, &[Build], &str)] = &[
            (
                "microsoft/windowsservercore:1709",
                &[WS2022],
                "use mcr.microsoft.com/windows/servercore:ltsc2022",
            ),
            (
                "microsoft/nanoserver:sac2016",
                &[WS2019, WS2022],
                "use mcr.microsoft.com/windows/nanoserver:1809 or mcr.microsoft.com/windows/nanoserver:ltsc2022",
            ),
            (
                "microsoft/aspnet:4.7.1-windowsservercore-1709",
                &[WS2025],
                "use mcr.microsoft.com/dotnet/framework/aspnet:4.8.1-windowsservercore-ltsc2025",
            ),
            (
                "microsoft/dotnet:2.1-aspnetcore-runtime",
                &[WS2022],
                "its successor is mcr.microsoft.com/dotnet/aspnet (winlint knows no tag there for 10.0.20348 (ltsc2022))",
            ),
            (
                "microsoft/mssql-server-windows-developer:2017-latest",
                &[WS2022],
                "there is no Windows successor (mcr.microsoft.com/mssql/server is Linux-only)",
            ),
            (
                "microsoft/contoso-tool:1.0",
                &[WS2022],
                "look for its successor on mcr.microsoft.com",
            ),
        ];
        for (image, builds, want) in cases {
            let m = message(&with_image(image), &target(builds), "WIN504");
            assert!(m.ends_with(want), "{image}: {m}");
        }
    }

    #[test]
    fn t26_t33_images_on_legacy_targets() {
        // The image half of T26/T33: the legacy Docker Hub names are the only image finding.
        let legacy = |builds: &[Build], image: &str| {
            let mut c = target(builds);
            c.target.kubernetes = KubeVersion::new(1, 9);
            let pod = set(
                with_image(image),
                "/spec/containers/1",
                json!({"name":"b","image":image}),
            );
            ids(&pod, &c)
                .into_iter()
                .filter(|id| id.starts_with("WIN5"))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            legacy(&[windows::V1709], "microsoft/windowsservercore:1709"),
            ["WIN504"]
        );
        assert_eq!(
            legacy(&[WS2016], "microsoft/windowsservercore:ltsc2016"),
            ["WIN504"]
        );
    }
}
