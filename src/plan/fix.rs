//! What `winlint plan --fix` writes for a *retag*: one image reference that runs on every
//! planned build the pod faces, in the user's spelling (the registry and repository as written,
//! the tag replaced; the digest replaced when the reference pinned one and the registry listed
//! the new one), or why nothing is written. Pure: `cli/plan_fix.rs` edits and writes the files
//! through `--fix`'s one writer.

use serde::Serialize;

use super::Verdict;
use super::verdict::RetagTo;
use crate::model::image;
use crate::model::windows::Build;

/// A retag's rewrite.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ImageFix {
    /// The reference `--fix` writes.
    To(String),
    /// Why `--fix` writes nothing.
    Refused(String),
}

/// The rewrite of `written` among the tags the verdicts named (`retags`, one per planned
/// build): the first whose reference `judge(reference, written, host)` finds running as is on
/// every build of `hosts`.
pub fn choose(
    written: &str,
    retags: &[RetagTo],
    hosts: &[Build],
    judge: &dyn Fn(&str, &str, Build) -> Verdict,
) -> ImageFix {
    let mut tried: Vec<&RetagTo> = Vec::new();
    for r in retags {
        if !tried.iter().any(|t| t.reference == r.reference) {
            tried.push(r);
        }
    }
    if tried.is_empty() {
        return ImageFix::Refused(
            "the verdict names no tag to write (a current release, whose tags winlint does not know without --registry): change it by hand".into(),
        );
    }
    let mut why = Vec::new();
    let mut unwritable = Vec::new();
    for r in &tried {
        let new = match rewrite(written, r) {
            Ok(n) => n,
            Err(e) => {
                unwritable.push(e);
                continue;
            }
        };
        let fails: Vec<String> = hosts
            .iter()
            .filter(|&&h| judge(&r.reference, &new, h) != Verdict::RunsAsIs)
            .map(|h| format!("{h} ({})", h.token()))
            .collect();
        if fails.is_empty() {
            return ImageFix::To(new);
        }
        why.push(format!(
            "{} does not run on {}",
            r.reference,
            fails.join(", ")
        ));
    }
    if why.is_empty() {
        // No tag could be written at all: the first reason says it.
        return ImageFix::Refused(unwritable.swap_remove(0));
    }
    why.extend(unwritable);
    let builds: Vec<String> = hosts
        .iter()
        .map(|h| format!("{h} ({})", h.token()))
        .collect();
    let all = if hosts.len() > 1 {
        format!(
            "no named tag runs on every planned build the pod lands on ({}): {}; publish a multi-OS manifest list or split the workload per build",
            builds.join(", "),
            why.join("; ")
        )
    } else {
        why.join("; ")
    };
    ImageFix::Refused(all)
}

/// `written` moved to `to`: the user's registry and repository spelling kept when `to` is the
/// same repository (only the tag changes), `to`'s reference otherwise (a successor repository);
/// a digest the user pinned is replaced by the registry's digest of the new tag, and without
/// one nothing is written (a pin is never dropped).
pub fn rewrite(written: &str, to: &RetagTo) -> Result<String, String> {
    let (Some(old), Some(new)) = (image::parse(written), image::parse(&to.reference)) else {
        return Err(format!(
            "{written} or {} does not parse as an image reference",
            to.reference
        ));
    };
    let Some(tag) = new.tag.as_deref() else {
        return Err(format!("{} names no tag", to.reference));
    };
    let pinned = old.digest.is_some();
    let digest = match (&to.digest, pinned) {
        (Some(d), true) => format!("@{d}"),
        (None, true) => {
            return Err(format!(
                "the reference pins a digest and the digest of {} is not known: run plan --fix with --registry",
                to.reference
            ));
        }
        (_, false) => String::new(),
    };
    if (old.registry.as_str(), old.repository.as_str())
        == (new.registry.as_str(), new.repository.as_str())
    {
        Ok(format!("{}:{tag}{digest}", name_part(written)))
    } else {
        Ok(format!("{}{digest}", to.reference))
    }
}

/// The name of a reference as written: without its `:tag` and `@digest`.
fn name_part(written: &str) -> &str {
    let name = written.split('@').next().unwrap_or(written);
    let slash = name.rfind('/').map_or(0, |i| i + 1);
    match name[slash..].rfind(':') {
        Some(i) => &name[..slash + i],
        None => name,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::windows::{WS2022, WS2025};

    const A: &str = "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";

    fn to(reference: &str, digest: Option<&str>) -> RetagTo {
        RetagTo {
            reference: reference.into(),
            digest: digest.map(Into::into),
        }
    }

    #[test]
    fn the_users_spelling_is_kept_and_a_digest_pin_stays_a_pin() {
        let t = to("example.com/app:1.0-ltsc2022", Some("sha256:bb"));
        assert_eq!(
            rewrite("Example.com:443/app:1.0-ltsc2019", &t).unwrap(),
            "Example.com:443/app:1.0-ltsc2022"
        );
        assert_eq!(
            rewrite(&format!("example.com/app:1.0-ltsc2019@{A}"), &t).unwrap(),
            "example.com/app:1.0-ltsc2022@sha256:bb"
        );
        assert_eq!(
            rewrite(
                "localhost:5000/app:1.0-ltsc2019",
                &to("localhost:5000/app:x", None)
            )
            .unwrap(),
            "localhost:5000/app:x"
        );
        // A pin without the new digest: nothing written.
        let e = rewrite(
            &format!("example.com/app:1.0-ltsc2019@{A}"),
            &to("example.com/app:1.0-ltsc2022", None),
        )
        .unwrap_err();
        assert!(e.contains("--registry"), "{e}");
        // A successor repository: its reference.
        assert_eq!(
            rewrite(
                "microsoft/iis:windowsservercore-ltsc2016",
                &to(
                    "mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2022",
                    None
                )
            )
            .unwrap(),
            "mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2022"
        );
    }

    #[test]
    fn several_builds_take_the_tag_that_runs_on_all_or_none() {
        let retags = [
            to("mcr.microsoft.com/windows/servercore:ltsc2022", None),
            to("mcr.microsoft.com/windows/servercore:ltsc2025", None),
        ];
        // containerd: ltsc2022 runs on both.
        let relaxed = |r: &str, _: &str, h: Build| {
            if r.ends_with("ltsc2022") || h == WS2025 {
                Verdict::RunsAsIs
            } else {
                Verdict::Retag
            }
        };
        let image = "mcr.microsoft.com/windows/servercore:ltsc2019";
        assert_eq!(
            choose(image, &retags, &[WS2022, WS2025], &relaxed),
            ImageFix::To("mcr.microsoft.com/windows/servercore:ltsc2022".into())
        );
        // Exact matching: each tag runs on its own build only.
        let exact = |r: &str, _: &str, h: Build| {
            if r.ends_with(&h.image_token()) {
                Verdict::RunsAsIs
            } else {
                Verdict::Retag
            }
        };
        let ImageFix::Refused(why) = choose(image, &retags, &[WS2022, WS2025], &exact) else {
            panic!("fixed")
        };
        assert!(
            why.contains("no named tag runs on every planned build"),
            "{why}"
        );
        assert!(matches!(
            choose(image, &[], &[WS2025], &exact),
            ImageFix::Refused(_)
        ));
    }
}
