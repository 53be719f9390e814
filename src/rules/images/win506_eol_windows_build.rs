//! WIN506 `eol-windows-build`.

use crate::model::Eval;
use crate::model::meta::{Area, Mutation, Reads, RuleOs};
use crate::model::windows::{Build, Channel};
use crate::model::workload::PodSite;
use crate::model::{Finding, RuleMeta, Severity};
use crate::rules::Rule;
use crate::rules::images::common::image_ptr;
use crate::rules::images::common::images;
use crate::rules::images::common::today;

/// WIN506 in the registry.
pub const RULE: Rule = Rule {
    meta: &WIN506,
    check: eol_windows_build,
};

// ---------------------------------------------------------------------------------------------
// WIN506

pub static WIN506: RuleMeta = RuleMeta {
    id: "WIN506",
    name: "eol-windows-build",
    severity: Severity::Info,
    summary: "Image or target Windows build past end of support (--check-eol)",
    docs: r#"## What it does
Only with `--check-eol` (`target.checkEol`). Reports images whose derived Windows build, and target
node builds, are past their end of support: Semi-Annual Channel releases (1709 … 20H2) past their
end of servicing, LTSC releases past mainstream support (Windows Server 2016 since 2022-01-11,
2019 since 2024-01-09). Dates come from Microsoft's base image lifecycle page; today's date is the
system clock's (UTC) or `target.today`.

## Why is this bad?
Out-of-support SAC images get no security updates at all; LTSC images past mainstream support get
security fixes only, until extended support ends. Either way, the move to a newer build (which, under
process isolation, means new nodes too) is better planned than forced.

## Example
```yaml
containers:
- name: app
  image: mcr.microsoft.com/windows/servercore:20H2   # out of support since 2022-08-09
```

## Fix
Move to a supported LTSC image and nodes (`ltsc2022`, `ltsc2025`).
"#,
    fix: None,
    source: "MS-LIFE",
    applies: "date-based (--check-eol)",
    os: RuleOs::Windows,
    default_on: true,
    reads: Reads::of(&[Area::Placement, Area::Containers]),
    mutation: Mutation::DEFAULT,
};

/// Why `b` is past end of support on `today` (`YYYY-MM-DD`), if it is.
pub(crate) fn eol_note(b: Build, today: &str) -> Option<String> {
    let end = b.mainstream_end().filter(|end| *end < today)?;
    Some(match b.channel() {
        Some(Channel::Ltsc) => format!(
            "whose mainstream support ended on {end} (security fixes only, until extended support ends)"
        ),
        _ => {
            format!("a Semi-Annual Channel release out of support since {end} (no security fixes)")
        }
    })
}

pub(crate) fn eol_windows_build(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    if !eval.target.check_eol {
        return Vec::new();
    }
    let today = today(eval);
    let mut out = Vec::new();
    let mut reported: Vec<Build> = Vec::new();
    for (c, img, i) in images(eval) {
        let Some(b) = i.build else { continue };
        let Some(note) = eol_note(b, &today) else {
            continue;
        };
        reported.push(b);
        out.push(Finding::new(
            &WIN506,
            image_ptr(site, c),
            format!(
                "{} image {img} is built for {}, {note}; move to a supported LTSC image (ltsc2022 or ltsc2025) and nodes",
                c.label(),
                b.named()
            ),
        ));
    }
    for b in eval.host_builds(site) {
        if reported.contains(&b) {
            continue;
        }
        if let Some(note) = eol_note(b, &today) {
            out.push(Finding::new(
                &WIN506,
                site.spec_ptr.clone(),
                format!(
                    "the target nodes run {}, {note}; plan the move to supported LTSC nodes and images",
                    b.named()
                ),
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::windows;

    use crate::model::windows::{WS2019, WS2022};

    use crate::rules::testutil::{assert_says, findings, ids, winok};

    use crate::rules::images::common::tests::IMG;

    use crate::rules::images::common::tests::target;
    use crate::rules::images::common::tests::with_image;

    #[test]
    fn win506_dates_and_targets() {
        let mut c = target(&[WS2019]);
        c.target.check_eol = true;
        c.target.today = Some("2025-06-01".into());
        let pod = with_image("mcr.microsoft.com/windows/servercore:ltsc2019");
        // Image and target are the same EOL build: one finding, at the image.
        let fs: Vec<Finding> = findings(&pod, &c)
            .into_iter()
            .filter(|f| f.rule.id == "WIN506")
            .collect();
        assert_eq!(fs.len(), 1, "{fs:?}");
        assert_eq!(fs[0].pointer, IMG);
        assert_eq!(fs[0].severity, Severity::Info);
        assert!(
            fs[0]
                .message
                .contains("mainstream support ended on 2024-01-09")
        );
        // Before the date: nothing.
        c.target.today = Some("2023-12-31".into());
        assert!(!ids(&pod, &c).contains(&"WIN506"));
        // Off by default.
        let mut off = target(&[WS2019]);
        off.target.today = Some("2030-01-01".into());
        assert!(!ids(&pod, &off).contains(&"WIN506"));
        // An EOL target build with a current image: reported once, at the pod spec.
        let mut mixed = target(&[windows::V1709, WS2022]);
        mixed.target.check_eol = true;
        mixed.target.today = Some("2025-06-01".into());
        let fs: Vec<Finding> = findings(&winok(), &mixed)
            .into_iter()
            .filter(|f| f.rule.id == "WIN506")
            .collect();
        assert_eq!(fs.len(), 1, "{fs:?}");
        assert_eq!(fs[0].pointer, "/spec");
        assert_says(&fs[0], "Semi-Annual Channel");
        // The system clock is used without target.today (20H2 ended in 2022).
        let mut clock = target(&[windows::V20H2]);
        clock.target.check_eol = true;
        let sac = with_image("mcr.microsoft.com/windows/servercore:20H2");
        assert!(ids(&sac, &clock).contains(&"WIN506"));
    }
}
