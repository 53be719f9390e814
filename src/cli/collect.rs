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
            (p.as_os_str() != "-" && p.is_dir()).then(|| {
                let mut w = crate::render::walk(p, is_manifest, errors);
                // Charts and kustomizations are named as the walked files are: on Windows
                // `testdata/charts/winapp`, not `testdata/charts\winapp` (Path::join's `\`).
                // Windows compares paths by component, so the plan still finds their files.
                for (s, _) in &mut w.sources {
                    let path = s.path_mut();
                    *path = PathBuf::from(walked_name(p, path, std::path::MAIN_SEPARATOR));
                }
                w
            })
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
                    let before = out.len();
                    read_file(&f, p, cap, &mut out, errors);
                    if let Some(i) = out.get_mut(before) {
                        i.name = walked_name(p, &f, std::path::MAIN_SEPARATOR);
                    }
                }
            }
        } else if seen.insert(std::fs::canonicalize(p).unwrap_or_else(|_| p.clone())) {
            let dir = p.parent().filter(|d| !d.as_os_str().is_empty());
            read_file(p, dir.unwrap_or(Path::new(".")), cap, &mut out, errors);
        }
    }
    out.extend(rendered_inputs(&plan, render, kube_version, errors));
    out
}

/// The plan's charts and kustomizations rendered, each output an input (failures go to
/// `errors`): `winlint DIR`'s and the editor's (`super::editor`) one way.
pub(super) fn rendered_inputs(
    plan: &crate::render::Plan,
    render: &crate::render::RenderArgs,
    kube_version: &str,
    errors: &mut Vec<InputError>,
) -> Vec<Input> {
    crate::render::render(plan, render, kube_version, errors)
        .into_iter()
        .map(|r| Input {
            name: r.name,
            path: None,
            tree: PathBuf::new(),
            bytes: Some(r.bytes),
            rendered: Some(r.rendered),
        })
        .collect()
}

/// The name of a file found by walking the directory `root` given on the command line, written
/// with the separator the user wrote `root` with. On Windows both `/` and `\` separate, and
/// `Path::join` adds `\`: a user who wrote `C:\k8s` reads `C:\k8s\app\pod.yaml`, one who
/// wrote `k8s/` (a script, a CI job, Git Bash) reads `k8s/app/pod.yaml`, not `k8s/app\pod.yaml`,
/// the same names as on Linux. `sep` is the platform's separator (`/` on Unix: then the
/// name is the path as walked).
fn walked_name(root: &Path, file: &Path, sep: char) -> String {
    let root_s = root.to_string_lossy();
    let rel = match file.strip_prefix(root) {
        Ok(rel) if sep != '/' => rel,
        _ => return file.display().to_string(),
    };
    let user_sep = if root_s.contains(sep) || !root_s.contains('/') {
        sep
    } else {
        '/'
    };
    let mut name = root_s.into_owned();
    for c in rel.components() {
        if !name.is_empty() && !name.ends_with(['/', sep]) {
            name.push(user_sep);
        }
        name.push_str(&c.as_os_str().to_string_lossy());
    }
    name
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

#[cfg(test)]
mod tests {
    use super::walked_name;
    use std::path::Path;

    #[test]
    fn walked_names_keep_the_users_separator() {
        let name = |root: &str, rel: &str, sep| {
            walked_name(Path::new(root), &Path::new(root).join(rel), sep)
        };
        // Unix: the path as walked.
        assert_eq!(name("k8s", "app/pod.yaml", '/'), "k8s/app/pod.yaml");
        // Windows (the platform separator `\`, which Path::join adds there).
        assert_eq!(
            name("C:\\k8s", "app/pod.yaml", '\\'),
            "C:\\k8s\\app\\pod.yaml"
        );
        assert_eq!(name("C:\\k8s\\", "pod.yaml", '\\'), "C:\\k8s\\pod.yaml");
        assert_eq!(name("k8s", "app/pod.yaml", '\\'), "k8s\\app\\pod.yaml");
        assert_eq!(
            name("testdata/rules", "WIN001/pod.yaml", '\\'),
            "testdata/rules/WIN001/pod.yaml"
        );
        assert_eq!(name("k8s/", "pod.yaml", '\\'), "k8s/pod.yaml");
    }
}
