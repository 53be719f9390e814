//! Inputs that are not manifests until a tool renders them: Helm charts (`helm template`) and
//! Kustomize directories (`kustomize build` / `kubectl kustomize`).
//!
//! **Discovery.** A directory holding `Chart.yaml`, given on the command line or met while
//! walking one, is a chart: nothing under it is linted as a file (templates are not YAML,
//! `values.yaml` is no manifest, `charts/` holds subcharts that the parent renders). A directory
//! holding `kustomization.yaml`, `kustomization.yml` or `Kustomization` is a kustomization: the
//! files and directories it builds from (`resources`, `patches`, generators' files, …) are not
//! linted as files, and a kustomization found while walking that another one builds from (a base
//! of an overlay) is linted through that overlay only. Files that no kustomization uses are
//! linted as files.
//!
//! **Rendering.** Each chart is rendered with its default values, then once per `ci/*.yaml`
//! values file (as chart-testing installs it), each an input of its own; each kustomization once.
//! The tool's stdout is the input's text; a tool that fails gives an input error with its
//! stderr; a missing tool gives one error per chart or kustomization. The other inputs are still
//! linted either way.
//!
//! **Places.** A finding in rendered output is placed at the file that produced its object:
//! the template named by helm's `# Source:` comment, or (without `originAnnotations`) the
//! kustomization file. It has no line: the rendered lines are not the template's, and a line of
//! one put on the other would be false. Its object, JSON pointer and how it was rendered say
//! where it is.

mod helm;
mod kustomize;
mod tool;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use clap::Args;

use crate::report::InputError;
use crate::source::Document;

/// The rendering flags of `winlint lint`.
#[derive(Args, Debug, Clone, Default)]
pub struct RenderArgs {
    /// helm for charts (directories with Chart.yaml); default: helm on PATH.
    #[arg(long, value_name = "PATH", env = "WINLINT_HELM")]
    pub helm: Option<PathBuf>,
    /// Values file for every chart (helm template -f), repeatable; a chart's ci/*.yaml come after.
    #[arg(long = "helm-values", value_name = "FILE")]
    pub helm_values: Vec<PathBuf>,
    /// Value for every chart (helm template --set), repeatable.
    #[arg(long = "helm-set", value_name = "KEY=VALUE")]
    pub helm_set: Vec<String>,
    /// kustomize or kubectl for kustomizations; default: kustomize, else kubectl, on PATH.
    #[arg(long, value_name = "PATH", env = "WINLINT_KUSTOMIZE")]
    pub kustomize: Option<PathBuf>,
    /// Let helm and kustomize reach the network (a kustomization's remote resources, git bases);
    /// without it they run offline and a kustomization naming a remote resource is not built.
    #[arg(long)]
    pub allow_remote: bool,
    /// Seconds a rendering tool may run before it is killed with the processes it started.
    #[arg(long, value_name = "SECONDS", default_value_t = tool::DEFAULT_TIME_LIMIT_SECS,
        value_parser = clap::value_parser!(u64).range(1..))]
    pub render_timeout: u64,
    /// Most bytes of a tool's output (set from `--max-input-bytes`).
    #[arg(skip)]
    pub output_cap: u64,
}

impl RenderArgs {
    fn limits(&self) -> tool::Limits {
        tool::Limits {
            time: std::time::Duration::from_secs(self.render_timeout),
            output: self.output_cap,
            network: self.allow_remote,
        }
    }
}

/// A directory a tool renders.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// A Helm chart (holds `Chart.yaml`).
    Chart(PathBuf),
    /// A Kustomize directory; the path of its kustomization file.
    Kustomization(PathBuf),
}

impl Source {
    /// The chart's directory or the kustomization's file.
    pub fn path_mut(&mut self) -> &mut PathBuf {
        match self {
            Source::Chart(p) | Source::Kustomization(p) => p,
        }
    }
}

/// The kustomization file names kustomize looks for, in its order.
pub const KUSTOMIZATION_FILES: [&str; 3] =
    ["kustomization.yaml", "kustomization.yml", "Kustomization"];

/// What directory `dir` is for rendering, if anything.
pub fn source_of(dir: &Path) -> Option<Source> {
    if dir.join("Chart.yaml").is_file() {
        return Some(Source::Chart(dir.to_path_buf()));
    }
    kustomization_file(dir).map(Source::Kustomization)
}

/// The kustomization file of `dir`, if it has one (the first of [`KUSTOMIZATION_FILES`]).
fn kustomization_file(dir: &Path) -> Option<PathBuf> {
    KUSTOMIZATION_FILES
        .iter()
        .map(|f| dir.join(f))
        .find(|f| f.is_file())
}

/// For a file named on the command line: the kustomization that applies it as a patch (in its
/// directory or above, see `kustomize::patch_user`). A patch is linted through its
/// kustomization, never alone.
pub fn patch_of(file: &Path) -> Option<Source> {
    let k = kustomize::patch_user(file)?;
    // Named as the user names files: relative to the working directory when under it.
    let k = std::env::current_dir()
        .and_then(std::fs::canonicalize)
        .ok()
        .and_then(|cwd| k.strip_prefix(cwd).ok().map(Path::to_path_buf))
        .unwrap_or(k);
    Some(Source::Kustomization(k))
}

/// For a file being edited (`winlint lsp`): the chart or kustomization that renders it, as
/// `winlint DIR` renders it. A file anywhere under a chart (its templates, `values*.yaml`,
/// `Chart.yaml`, `ci/`) belongs to the outermost chart above it (a subchart under `charts/` is
/// rendered by its parent); else a kustomization file belongs to itself, and any other file to
/// the nearest kustomization in its directory or above that builds from it (a resource, a
/// patch, a generator's file, through the bases it names). The search stops at the repository
/// root (the first directory holding `.git`).
pub fn source_of_file(file: &Path) -> Option<Source> {
    let dirs: Vec<&Path> = file
        .ancestors()
        .skip(1)
        .take(32)
        .scan(false, |past_root, d| {
            let here = (!*past_root).then_some(d);
            *past_root = *past_root || d.join(".git").exists();
            here
        })
        .collect();
    if let Some(chart) = dirs.iter().rev().find(|d| d.join("Chart.yaml").is_file()) {
        return Some(Source::Chart(chart.to_path_buf()));
    }
    // Named as the file is (the editor's path), compared canonically.
    let canon = canonical(file);
    dirs.iter().find_map(|d| {
        let k = kustomization_file(d)?;
        let u = kustomize::uses(&k);
        (u.files.contains(&canon) || u.dirs.iter().any(|x| canon.starts_with(x)))
            .then_some(Source::Kustomization(k))
    })
}

/// Whether kustomize or kubectl is here to build kustomizations.
pub fn can_build_kustomizations(args: &RenderArgs) -> bool {
    kustomize::Tool::find(args).is_some()
}

/// The result of walking one directory given on the command line.
#[derive(Debug, Default)]
pub struct Walk {
    /// Manifest files (sorted), before kustomizations' sources are taken out.
    pub files: Vec<PathBuf>,
    /// Charts and kustomizations, with whether the directory was the one given.
    pub sources: Vec<(Source, bool)>,
}

/// Walk `root` (recursively, sorted, following links, hidden entries skipped) for manifests,
/// charts and kustomizations.
/// `is_manifest` says which files are manifests.
pub fn walk(root: &Path, is_manifest: fn(&Path) -> bool, errors: &mut Vec<InputError>) -> Walk {
    let mut w = Walk::default();
    // Hidden entries (`.git`, `.github`, `.terraform`, an editor's `.#x.yaml`) are not the
    // manifests: skipped below the root; a hidden directory named on the command line is walked.
    let mut it = walkdir::WalkDir::new(root)
        .follow_links(true)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| e.depth() == 0 || !e.file_name().as_encoded_bytes().starts_with(b"."));
    while let Some(entry) = it.next() {
        match entry {
            Ok(e) if e.file_type().is_dir() => match source_of(e.path()) {
                Some(s @ Source::Chart(_)) => {
                    w.sources.push((s, e.depth() == 0));
                    it.skip_current_dir();
                }
                // A kustomization's directory may hold other manifests (and kustomizations):
                // the walk goes on, and its sources are taken out afterwards.
                Some(s) => w.sources.push((s, e.depth() == 0)),
                None => {}
            },
            Ok(e) if e.file_type().is_file() && is_manifest(e.path()) => {
                w.files.push(e.into_path())
            }
            Ok(_) => {}
            Err(e) => errors.push(InputError {
                file: e.path().unwrap_or(root).display().to_string(),
                line: 0,
                column: 0,
                message: e.to_string(),
            }),
        }
    }
    w
}

/// The sources of a run, once every directory is walked: which to render, and which files the
/// kustomizations use (not linted as files).
#[derive(Debug, Default)]
pub struct Plan {
    pub sources: Vec<Source>,
    used_files: BTreeSet<PathBuf>,
    used_dirs: BTreeSet<PathBuf>,
}

impl Plan {
    /// `found`: every source found, with whether it was given on the command line.
    pub fn new(found: &[(Source, bool)]) -> Plan {
        let mut plan = Plan::default();
        let mut uses = Vec::new();
        for (s, _) in found {
            if let Source::Kustomization(file) = s {
                let u = kustomize::uses(file);
                plan.used_files.extend(u.files.iter().cloned());
                plan.used_dirs.extend(u.dirs.iter().cloned());
                uses.push(u);
            }
        }
        let mut seen = BTreeSet::new();
        for (s, given) in found {
            let dir = match s {
                Source::Chart(d) => d.clone(),
                Source::Kustomization(f) => f.parent().unwrap_or(Path::new(".")).to_path_buf(),
            };
            let canon = canonical(&dir);
            if !seen.insert(canon.clone()) {
                continue;
            }
            // A base met while walking is rendered through the overlays that use it.
            if matches!(s, Source::Kustomization(_)) && !given && plan.used_dirs.contains(&canon) {
                continue;
            }
            plan.sources.push(s.clone());
        }
        plan
    }

    /// Whether a file found while walking is used by a kustomization of the run.
    pub fn is_used(&self, file: &Path) -> bool {
        let c = canonical(file);
        self.used_files.contains(&c) || self.used_dirs.iter().any(|d| c.starts_with(d))
    }
}

fn canonical(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
}

/// How an input's objects were made.
#[derive(Debug, Clone)]
pub struct Rendered {
    /// The command, as short as it stays clear: `helm template`,
    /// `helm template -f ci/windows-values.yaml`, `kubectl kustomize`.
    pub label: String,
    how: How,
}

#[derive(Debug, Clone)]
enum How {
    /// Chart directory (as given) and the chart's name (the first part of `# Source:` paths).
    Helm { dir: PathBuf, name: String },
    /// The kustomization file (as given).
    Kustomize { file: PathBuf },
}

impl Rendered {
    /// The file each document of the rendered `text` comes from (see the module doc).
    pub fn doc_files(&self, text: &str, docs: &[Document]) -> Vec<String> {
        docs.iter()
            .map(|d| match &self.how {
                How::Helm { dir, name } => {
                    let piece = text.get(d.text_range.0..d.text_range.1).unwrap_or("");
                    helm::source_file(dir, name, piece)
                }
                How::Kustomize { file } => kustomize::origin_file(file, &d.value),
            })
            .collect()
    }

    /// The chart or kustomization directory, for messages.
    pub fn what(&self) -> String {
        match &self.how {
            How::Helm { dir, .. } => format!("chart {}", dir.display()),
            How::Kustomize { file } => format!(
                "kustomization {}",
                file.parent().unwrap_or(Path::new(".")).display()
            ),
        }
    }
}

/// One rendered input.
#[derive(Debug)]
pub struct Output {
    /// The input's name in messages and in report order: the chart or kustomization directory,
    /// or the `ci/` values file.
    pub name: String,
    pub bytes: Vec<u8>,
    pub rendered: Rendered,
}

/// Render every source of the plan; failures go to `errors`.
pub fn render(
    plan: &Plan,
    args: &RenderArgs,
    kube_version: &str,
    errors: &mut Vec<InputError>,
) -> Vec<Output> {
    let mut out = Vec::new();
    let mut kustomize_tool = None;
    for s in &plan.sources {
        match s {
            Source::Chart(dir) => helm::render(dir, args, kube_version, &mut out, errors),
            Source::Kustomization(file) => {
                let tool = kustomize_tool.get_or_insert_with(|| kustomize::Tool::find(args));
                kustomize::render(file, tool.as_ref(), args, &mut out, errors);
            }
        }
    }
    out
}

fn input_error(place: &Path, message: String) -> InputError {
    InputError {
        file: place.display().to_string(),
        line: 0,
        column: 0,
        message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifests(p: &Path) -> bool {
        p.extension().is_some_and(|e| e == "yaml")
    }

    #[test]
    fn charts_are_not_walked_into_and_kustomizations_keep_unused_files() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path();
        let write = |rel: &str, text: &str| {
            let p = r.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        };
        write("chart/Chart.yaml", "name: c\nversion: 0.1.0\n");
        write("chart/values.yaml", "a: 1\n");
        write("chart/templates/d.yaml", "kind: {{ .Values.k }}\n");
        write("k/base/kustomization.yaml", "resources: [d.yaml]\n");
        write("k/base/d.yaml", "kind: Deployment\n");
        write(
            "k/overlay/kustomization.yaml",
            "resources: [../base]\npatches:\n- path: p.yaml\n",
        );
        write("k/overlay/p.yaml", "kind: Deployment\n");
        write("k/overlay/unused.yaml", "kind: Pod\n");
        write("plain.yaml", "kind: Pod\n");
        let mut errors = Vec::new();
        let w = walk(r, manifests, &mut errors);
        assert!(errors.is_empty(), "{errors:?}");
        let plan = Plan::new(&w.sources);
        let rel = |p: &Path| p.strip_prefix(r).unwrap().display().to_string();
        let files: Vec<String> = w
            .files
            .iter()
            .filter(|f| !plan.is_used(f))
            .map(|f| rel(f))
            .collect();
        // The kustomization files, the base's resources, the overlay's patch: used.
        assert_eq!(files, ["k/overlay/unused.yaml", "plain.yaml"]);
        let sources: Vec<String> = plan
            .sources
            .iter()
            .map(|s| match s {
                Source::Chart(d) => format!("chart {}", rel(d)),
                Source::Kustomization(f) => format!("kustomization {}", rel(f)),
            })
            .collect();
        // The base is built through the overlay only.
        assert_eq!(
            sources,
            ["chart chart", "kustomization k/overlay/kustomization.yaml"]
        );
        // Given on the command line, a base is built on its own too.
        let w = walk(&r.join("k/base"), manifests, &mut errors);
        assert_eq!(Plan::new(&w.sources).sources.len(), 1);
    }
}
