//! The inputs of `winlint lint`: the paths given expanded into [`Input`]s (directories walked,
//! `-` for stdin, Kustomize patches linted through their kustomization, charts and
//! kustomizations rendered after the files). Reading them is [`super::input`]'s.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::report::InputError;

use super::input;

/// One input: a name for messages and its bytes.
pub(super) struct Input {
    pub(super) name: String,
    /// `None` for stdin and rendered output.
    pub(super) path: Option<PathBuf>,
    /// The tree `--fix` may write in: the directory walked, or a named file's directory.
    pub(super) tree: PathBuf,
    /// Stdin's bytes, a pipe's or a device's named as a file (read once, see [`input`]), or a
    /// chart's or kustomization's rendered output; regular files are read when needed, so
    /// memory holds one file at a time.
    pub(super) bytes: Option<Vec<u8>>,
    /// How the bytes were rendered (`None` for files and stdin).
    pub(super) rendered: Option<crate::render::Rendered>,
}

impl Input {
    pub(super) fn is_stdin(&self) -> bool {
        self.path.is_none() && self.rendered.is_none()
    }

    pub(super) fn read(&self, cap: u64) -> Result<std::borrow::Cow<'_, [u8]>, input::ReadError> {
        match (&self.bytes, &self.path) {
            (Some(b), _) => Ok(std::borrow::Cow::Borrowed(b)),
            (None, Some(p)) => input::read_file(p, cap).map(std::borrow::Cow::Owned),
            (None, None) => Ok(std::borrow::Cow::Borrowed(&[])),
        }
    }
}

/// Expand the paths: directories recursively (sorted), `-` for stdin; charts and
/// kustomizations rendered (see [`crate::render`]), after the files.
pub(super) fn collect_inputs(
    paths: &[PathBuf],
    render: &crate::render::RenderArgs,
    kube_version: &str,
    cap: u64,
    errors: &mut Vec<InputError>,
) -> Vec<Input> {
    let mut out = Vec::new();
    let mut seen = BTreeSet::new();
    let walks: Vec<Option<crate::render::Walk>> = paths
        .iter()
        .map(|p| {
            (p.as_os_str() != "-" && p.is_dir())
                .then(|| crate::render::walk(p, is_manifest, errors))
        })
        .collect();
    // A Kustomize patch named on the command line (a pre-commit hook passes changed files) is
    // linted through the kustomization that applies it.
    let patches: Vec<Option<crate::render::Source>> = paths
        .iter()
        .zip(&walks)
        .map(|(p, w)| {
            (w.is_none() && p.as_os_str() != "-")
                .then(|| crate::render::patch_of(p))
                .flatten()
        })
        .collect();
    let buildable =
        patches.iter().any(Option::is_some) && crate::render::can_build_kustomizations(render);
    let found: Vec<_> = walks
        .iter()
        .flatten()
        .flat_map(|w| w.sources.iter().cloned())
        .chain(
            patches
                .iter()
                .flatten()
                .filter(|_| buildable)
                .map(|s| (s.clone(), true)),
        )
        .collect();
    let plan = crate::render::Plan::new(&found);
    for ((p, walk), patch) in paths.iter().zip(walks).zip(patches) {
        if let Some(crate::render::Source::Kustomization(k)) = patch {
            let dir = k.parent().unwrap_or(Path::new("."));
            if buildable {
                eprintln!(
                    "{}: note: a patch of the kustomization {}: linted through it",
                    p.display(),
                    dir.display()
                );
            } else {
                eprintln!(
                    "{}: note: a patch of the kustomization {}: not linted alone, and neither kustomize nor kubectl is here to build it; pipe `kubectl kustomize {}` into `winlint -`",
                    p.display(),
                    dir.display(),
                    dir.display()
                );
            }
            continue;
        }
        if p.as_os_str() == "-" {
            match input::read_capped(std::io::stdin().lock(), cap) {
                Ok(bytes) => out.push(Input {
                    name: "<stdin>".into(),
                    path: None,
                    tree: PathBuf::new(),
                    bytes: Some(bytes),
                    rendered: None,
                }),
                Err(e) => errors.push(InputError {
                    file: "<stdin>".into(),
                    line: 0,
                    column: 0,
                    message: e.to_string(),
                }),
            }
            continue;
        }
        if let Some(walk) = walk {
            for f in walk.files.into_iter().filter(|f| !plan.is_used(f)) {
                if seen.insert(std::fs::canonicalize(&f).unwrap_or_else(|_| f.clone())) {
                    read_file(&f, p, cap, &mut out, errors);
                }
            }
        } else if seen.insert(std::fs::canonicalize(p).unwrap_or_else(|_| p.clone())) {
            let dir = p.parent().filter(|d| !d.as_os_str().is_empty());
            read_file(p, dir.unwrap_or(Path::new(".")), cap, &mut out, errors);
        }
    }
    out.extend(
        crate::render::render(&plan, render, kube_version, errors)
            .into_iter()
            .map(|r| Input {
                name: r.name,
                path: None,
                tree: PathBuf::new(),
                bytes: Some(r.bytes),
                rendered: Some(r.rendered),
            }),
    );
    out
}

pub(super) fn is_manifest(p: &Path) -> bool {
    matches!(
        p.extension().and_then(|e| e.to_str()),
        Some("yaml" | "yml" | "json")
    )
}

/// A file named or found in the directory `tree`: a regular file is read when linted; anything
/// else (a pipe, `/dev/stdin`, `<(…)`) now, the one time it can be read.
pub(super) fn read_file(
    p: &Path,
    tree: &Path,
    cap: u64,
    out: &mut Vec<Input>,
    errors: &mut Vec<InputError>,
) {
    let bytes = match input::open(p, cap) {
        Ok(input::Opened::File) => None,
        Ok(input::Opened::Stream(b)) => Some(b),
        Err(e) => {
            errors.push(InputError {
                file: p.display().to_string(),
                line: 0,
                column: 0,
                message: e.to_string(),
            });
            return;
        }
    };
    out.push(Input {
        name: p.display().to_string(),
        path: Some(p.to_path_buf()),
        tree: tree.to_path_buf(),
        bytes,
        rendered: None,
    });
}
