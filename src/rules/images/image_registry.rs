//! What the image rules ask of the registry's facts (issue 18), in one place: WIN502, WIN503,
//! WIN507 and WIN508 (this family) and WIN005 (scheduling) use the facts when the front end
//! has them (`--registry`, `serve` with `registry.mode`) and the image-name heuristics when it
//! does not; their messages say which (`registry:` vs the name).

use std::sync::Arc;

use crate::model::image::ImageInfo;
use crate::model::image_contents::{self, Origin};
use crate::model::image_facts::{HostVerdict, ImageFacts};
use crate::model::windows::{Build, Isolation};
use crate::model::{ContainerRef, Eval};

/// The facts of a container's image: the registry's when they were looked up, else the
/// platforms the user declares for it in `winlint.yaml` `images:` (`os`, `builds`), built as
/// the registry would publish them, so that offline CI judges a private image as the registry
/// would (issue 26). Messages name which through [`source`].
pub fn facts(eval: &Eval, c: &ContainerRef) -> Option<Arc<ImageFacts>> {
    let image = c.image()?;
    eval.context
        .image_facts(image, eval.namespace)
        .or_else(|| Some(Arc::new(declared(eval, image)?.1)))
}

/// The declared entry of `image` (the user's `images:`, not winlint's table) and its facts.
fn declared(eval: &Eval, image: &str) -> Option<(String, ImageFacts)> {
    let r = crate::model::image::parse(image)?;
    let known =
        image_contents::lookup(&eval.target.images, &r).filter(|k| k.origin == Origin::Config)?;
    Some((known.why(), known.entry.declared_facts()?))
}

/// Where [`facts`] come from, for a message: `registry`, or `winlint.yaml images: "PATTERN"`.
pub fn source(eval: &Eval, c: &ContainerRef) -> String {
    let image = c.image().unwrap_or_default();
    match eval.context.image_facts(image, eval.namespace) {
        Some(_) => "registry".into(),
        None => declared(eval, image).map_or_else(|| "registry".into(), |(why, _)| why),
    }
}

/// How winlint knows a container's image is Linux-only ([`linux_only`]).
pub enum LinuxOnly {
    /// The registry lists its platforms and none is Windows.
    Registry(Arc<ImageFacts>),
    /// The image-name heuristics (`ImageInfo::linux`): the registry was not asked.
    ByName,
}

/// Whether a container's image is Linux-only: the registry decides when it was asked (no
/// Windows entry among the platforms it lists, whatever the name; a name the heuristics call
/// Linux-only is not when it lists one), else the image-name heuristics. The one answer WIN507,
/// WIN008 and WIN011 give.
pub fn linux_only(eval: &Eval, c: &ContainerRef, info: &ImageInfo) -> Option<LinuxOnly> {
    match facts(eval, c) {
        Some(f) if !f.has_windows() && !f.platforms.is_empty() => Some(LinuxOnly::Registry(f)),
        Some(_) => None,
        None => info.linux.then_some(LinuxOnly::ByName),
    }
}

/// The Windows build a container's image is for: the registry's, when it publishes exactly
/// one Windows build (several: each node pulls its own, so no one build; none, or entries
/// without `os.version`: none), else the one its name tells.
pub fn build_of(eval: &Eval, c: &ContainerRef, info: &ImageInfo) -> Option<Build> {
    match facts(eval, c) {
        Some(f) => single_windows_build(&f),
        None => info.build,
    }
}

fn single_windows_build(f: &ImageFacts) -> Option<Build> {
    if f.windows().any(|p| p.build().is_none()) {
        return None;
    }
    match f.windows_builds().as_slice() {
        [b] => Some(*b),
        _ => None,
    }
}

/// The registry's answer for hosts of `hosts`: `Some(builds)` when the image publishes Windows
/// entries and no host pulls and runs any of them (the builds it publishes), `None` when some
/// host does, when an entry carries no `os.version` (unverifiable), or when it has no Windows
/// entry at all (WIN507 reports that). The LTSC window applies (containerd 1.6.23+/1.7.7+).
pub fn no_host_runs(f: &ImageFacts, hosts: &[Build], iso: Isolation) -> Option<Vec<Build>> {
    if hosts.is_empty() || !f.has_windows() {
        return None;
    }
    let runs = hosts.iter().any(|&h| {
        matches!(
            f.on_host(h, iso, true),
            HostVerdict::Runs(_) | HostVerdict::Unverifiable
        )
    });
    (!runs).then(|| f.windows_builds())
}

/// `linux/amd64, linux/arm64/v8, windows/amd64 10.0.17763.5329`: the platforms, for a message.
pub fn platforms(f: &ImageFacts) -> String {
    if f.platforms.is_empty() {
        return "no platforms".into();
    }
    f.platforms
        .iter()
        .map(|p| {
            let mut s = format!("{}/{}", p.os, p.architecture);
            if let Some(v) = &p.variant {
                s.push('/');
                s.push_str(v);
            }
            if let Some(v) = &p.os_version {
                s.push(' ');
                s.push_str(v);
            }
            s
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Every Windows entry lacks `os.version`: the image is pulled on every Windows node and its
/// build cannot be checked (WIN503 says so, as info).
pub fn unverifiable(f: &ImageFacts) -> bool {
    f.has_windows() && f.windows().all(|p| p.build().is_none())
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::sync::Arc;

    use serde_json::{Value, json};

    use crate::config::Config;
    use crate::engine::lint_object;
    use crate::model::image_facts::{ImageFacts, ImageFactsMap, Platform};
    use crate::model::windows::{WS2019, WS2022, WS2025};
    use crate::model::{Context, Finding, Operation, Severity};
    use crate::rules::testutil::{assert_says, cfg, set, winok};

    fn platform(os: &str, version: Option<&str>) -> Platform {
        Platform {
            os: os.into(),
            architecture: "amd64".into(),
            variant: None,
            os_version: version.map(str::to_string),
            os_features: vec![],
            digest: None,
            user: None,
        }
    }

    /// A context whose registry knows `images`: reference → (list?, platforms).
    fn context(images: &[(&str, bool, Vec<Platform>)]) -> Context {
        let mut map: ImageFactsMap = BTreeMap::new();
        for (i, (r, list, p)) in images.iter().enumerate() {
            map.insert(
                crate::model::image::fact_key(r).into_owned(),
                Arc::new(ImageFacts {
                    digest: format!("sha256:{i:064}"),
                    list: *list,
                    platforms: p.clone(),
                    user: None,
                }),
            );
        }
        Context {
            images: Some(Arc::new(map)),
            ..Context::default()
        }
    }

    fn run(obj: &Value, c: &Config, cx: &Context, id: &str) -> Vec<Finding> {
        lint_object(obj, c, cx, Operation::Lint)
            .findings
            .into_iter()
            .filter(|f| f.rule.id == id)
            .collect()
    }

    fn target(builds: &[crate::model::windows::Build]) -> Config {
        let mut c = cfg();
        c.target.windows_builds = builds.to_vec();
        c
    }

    const APP: &str = "contoso.azurecr.io/web:1.4.2";

    #[test]
    fn a_registry_list_of_1809_only_is_win502_on_ltsc2022_nodes() {
        let pod = set(winok(), "/spec/containers/0/image", json!(APP));
        let cx = context(&[(APP, true, vec![platform("windows", Some("10.0.17763.1"))])]);
        let f = run(&pod, &target(&[WS2022]), &cx, "WIN502");
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].severity, Severity::Error);
        assert_says(&f[0], "registry:");
        // Offline, by name alone, the same image is unknown (WIN503), not WIN502.
        assert!(run(&pod, &target(&[WS2022]), &Context::default(), "WIN502").is_empty());
        assert_eq!(
            run(&pod, &target(&[WS2022]), &Context::default(), "WIN503").len(),
            1
        );
        assert!(run(&pod, &target(&[WS2022]), &cx, "WIN503").is_empty());
    }

    #[test]
    fn a_multi_build_list_runs_on_each_and_ltsc2022_on_ws2025() {
        let pod = set(winok(), "/spec/containers/0/image", json!(APP));
        let cx = context(&[(
            APP,
            true,
            vec![
                platform("linux", None),
                platform("windows", Some("10.0.17763.1")),
                platform("windows", Some("10.0.20348.1")),
            ],
        )]);
        for hosts in [&[WS2019][..], &[WS2022], &[WS2025], &[WS2019, WS2022]] {
            let c = target(hosts);
            for id in ["WIN502", "WIN503", "WIN507", "WIN508"] {
                assert!(run(&pod, &c, &cx, id).is_empty(), "{id} on {hosts:?}");
            }
        }
    }

    #[test]
    fn a_name_the_heuristics_call_windows_is_linux_only_per_the_registry() {
        let pod = set(winok(), "/spec/containers/0/image", json!(APP));
        let cx = context(&[(APP, true, vec![platform("linux", None)])]);
        let f = run(&pod, &target(&[WS2022]), &cx, "WIN507");
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].severity, Severity::Error);
        assert!(
            f[0].message
                .contains("registry: it has no Windows entry (linux/amd64)")
        );
        // The registry also clears a name the heuristics call Linux-only.
        let pod = set(winok(), "/spec/containers/0/image", json!("nginx:1.27"));
        assert_eq!(run(&pod, &cfg(), &Context::default(), "WIN507").len(), 1);
        let cx = context(&[(
            "nginx:1.27",
            true,
            vec![
                platform("linux", None),
                platform("windows", Some("10.0.20348.1")),
            ],
        )]);
        assert!(run(&pod, &cfg(), &cx, "WIN507").is_empty());
    }

    #[test]
    fn hyperv_pulls_a_list_by_the_host_build_but_runs_an_older_single_image() {
        let pod = set(winok(), "/spec/containers/0/image", json!(APP));
        let mut c = target(&[WS2022]);
        c.target.isolation = crate::model::windows::Isolation::Hyperv;
        let old = vec![platform("windows", Some("10.0.17763.1"))];
        let list = context(&[(APP, true, old.clone())]);
        let f = run(&pod, &c, &list, "WIN502");
        assert_eq!(f.len(), 1, "a list of older builds does not pull");
        let single = context(&[(APP, false, old)]);
        assert!(run(&pod, &c, &single, "WIN502").is_empty());
    }

    #[test]
    fn entries_without_os_version_are_unverifiable_info() {
        let pod = set(winok(), "/spec/containers/0/image", json!(APP));
        let cx = context(&[(APP, true, vec![platform("windows", None)])]);
        let f = run(&pod, &target(&[WS2022]), &cx, "WIN503");
        assert_eq!(f.len(), 1);
        assert!(f[0].message.starts_with("registry:"), "{}", f[0].message);
        assert!(run(&pod, &target(&[WS2022]), &cx, "WIN502").is_empty());
    }

    #[test]
    fn registry_builds_feed_win508() {
        let pod = set(
            winok(),
            "/spec/initContainers",
            json!([{"name": "init", "image": APP}]),
        );
        let cx = context(&[(APP, false, vec![platform("windows", Some("10.0.17763.1"))])]);
        // servercore:ltsc2022 beside a single 1809 image: no node runs both.
        let f = run(&pod, &target(&[WS2022]), &cx, "WIN508");
        assert_eq!(f.len(), 1);
        assert_says(&f[0], "(10.0.17763, registry)");
    }
}
