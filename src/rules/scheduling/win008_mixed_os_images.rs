//! WIN008 `mixed-os-images`.

use crate::model::Eval;
use crate::model::image::ImageInfo;
use crate::model::meta::{Area, Mutation, Reads, RuleOs};
use crate::model::workload::ContainerRef;
use crate::model::workload::PodSite;
use crate::model::{Finding, RuleMeta, Severity};
use crate::rules::Rule;
use crate::rules::images::image_registry::{self, LinuxOnly};

/// WIN008 in the registry.
pub const RULE: Rule = Rule {
    meta: &WIN008,
    check: mixed_os_images,
};

pub static WIN008: RuleMeta = RuleMeta {
    id: "WIN008",
    name: "mixed-os-images",
    severity: Severity::Error,
    summary: "Pod with no declared OS mixes Windows-only and Linux-only images",
    docs: r#"## What it does
Finds pods whose containers mix Windows-only images (`mcr.microsoft.com/windows/*`, `*-nanoserver-*`,
…) with known Linux-only images (`busybox`, `alpine`, `nginx`, …). With `--registry` (CLI) or
`registry.mode` (webhook) the registry decides which images are Linux-only, as for WIN507: one
with no Windows entry is, whatever its name; a name the lists call Linux-only is not when its
registry lists a Windows entry.

## Why is this bad?
All containers of a pod run on one node, so one OS: "You may not deploy Windows and Linux containers in
the same Pod". Whichever node the pod lands on, some of its containers cannot start.

## Example
```yaml
spec:
  containers:
  - name: app
    image: mcr.microsoft.com/windows/servercore:ltsc2022
  - name: sidecar
    image: busybox:1.36
```

## Fix
Split the pod, or use images of one OS.
"#,
    fix: None,
    source: "K-INTRO",
    applies: "all",
    os: RuleOs::Any,
    default_on: true,
    reads: Reads::of(&[Area::Evidence, Area::Containers]),
    // No fix of its own; while it stands, no fix places the pod or declares it Windows.
    mutation: Mutation {
        image_cannot_run: true,
        ..Mutation::DEFAULT
    },
};

pub(crate) fn mixed_os_images(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    if eval.class.declared().is_some() {
        return Vec::new();
    }
    let win = eval.images.iter().find(|(_, i)| i.windows);
    let lin = eval
        .images
        .iter()
        .filter(|(_, i)| !i.windows)
        .find_map(|(c, i)| linux_only(eval, c, i).map(|how| (c, how)));
    match (win, lin) {
        (Some((wc, _)), Some((lc, how))) => vec![Finding::new(
            &WIN008,
            site.ptr(&format!("{}/image", lc.rel())),
            format!(
                "{} uses Linux image {}{how} but {} uses Windows image {}; one pod runs on one OS. Split the pod or use images of one OS",
                lc.label(),
                lc.image().unwrap_or(""),
                wc.label(),
                wc.image().unwrap_or("")
            ),
        )],
        _ => Vec::new(),
    }
}

/// Whether the container's image is Linux-only ([`image_registry::linux_only`], as WIN507
/// decides, which leaves undeclared pods with a Windows image to this rule), and how that is
/// known, for the message (`""`: by its name).
fn linux_only(eval: &Eval, c: &ContainerRef, info: &ImageInfo) -> Option<String> {
    Some(match image_registry::linux_only(eval, c, info)? {
        LinuxOnly::Registry(f) => format!(
            " ({}: {}, no Windows entry)",
            image_registry::source(eval, c),
            image_registry::platforms(&f)
        ),
        LinuxOnly::ByName => String::new(),
    })
}
