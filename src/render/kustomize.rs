//! Kustomize: `kustomize build DIR`, or `kubectl kustomize DIR`.

use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};

use serde_json::Value;

use super::{How, Output, RenderArgs, Rendered, input_error, kustomization_file, tool};
use crate::report::InputError;

/// The program and the arguments before the directory.
pub(super) struct Tool {
    program: PathBuf,
    args: Vec<String>,
    label: &'static str,
}

impl Tool {
    /// `--kustomize PATH` (kubectl when its name says so, kustomize otherwise), else
    /// `kustomize` on PATH, else `kubectl` on PATH.
    pub(super) fn find(args: &RenderArgs) -> Option<Tool> {
        let kubectl = |program| Tool {
            program,
            args: vec!["kustomize".into()],
            label: "kubectl kustomize",
        };
        let kustomize = |program| Tool {
            program,
            args: vec!["build".into()],
            label: "kustomize build",
        };
        match &args.kustomize {
            Some(p)
                if p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with("kubectl")) =>
            {
                Some(kubectl(p.clone()))
            }
            Some(p) => Some(kustomize(p.clone())),
            None => tool::on_path("kustomize")
                .map(kustomize)
                .or_else(|| tool::on_path("kubectl").map(kubectl)),
        }
    }
}

/// Build the kustomization whose file is `file`.
pub(super) fn render(
    file: &Path,
    tool: Option<&Tool>,
    render_args: &RenderArgs,
    out: &mut Vec<Output>,
    errors: &mut Vec<InputError>,
) {
    let dir = file.parent().unwrap_or(Path::new("."));
    let Some(t) = tool else {
        errors.push(input_error(
            dir,
            format!(
                "skipped kustomization: neither kustomize nor kubectl found; install one (or \
                 give --kustomize PATH) or pipe `kubectl kustomize {}` into `winlint -`",
                dir.display()
            ),
        ));
        return;
    };
    if !render_args.allow_remote {
        let remote = uses(file).remote;
        if let Some(first) = remote.first() {
            errors.push(input_error(
                dir,
                format!(
                    "skipped kustomization: it fetches {} remote resource(s) ({first}{}); winlint \
                     does not reach the network unless asked: give --allow-remote, or build it \
                     yourself and pipe the output into `winlint -`",
                    remote.len(),
                    if remote.len() > 1 { ", …" } else { "" }
                ),
            ));
            return;
        }
    }
    let mut args = t.args.clone();
    // A path is a path: kustomize reads `http:/h:1/x` or `github.com/o/r` as a URL or a
    // repository before it looks at the disk, and a name starting with `-` as an option. An
    // absolute path is none of those.
    args.push(tool::local_arg(dir));
    match tool::run(&t.program, &args, None, render_args.limits()) {
        Ok(r) if r.success => out.push(Output {
            name: dir.display().to_string(),
            bytes: r.stdout,
            rendered: Rendered {
                label: t.label.to_string(),
                how: How::Kustomize {
                    file: file.to_path_buf(),
                },
            },
        }),
        Ok(r) => errors.push(input_error(
            dir,
            format!("{} failed: {}", t.label, r.stderr),
        )),
        Err(e) => errors.push(input_error(dir, e)),
    }
}

/// What a kustomization builds from, on this disk (canonical paths).
#[derive(Debug, Default)]
pub(super) struct Uses {
    pub files: BTreeSet<PathBuf>,
    /// Directories (resources that are kustomizations, or directories of files).
    pub dirs: BTreeSet<PathBuf>,
    /// References kustomize would fetch from the network (URLs, git repositories), as written.
    pub remote: Vec<String>,
}

/// The local files and directories the kustomization `file` uses (itself included), following
/// the kustomizations it builds on.
pub(super) fn uses(file: &Path) -> Uses {
    let mut u = Uses::default();
    let mut seen = BTreeSet::new();
    collect(file, &mut u, &mut seen);
    u
}

fn collect(file: &Path, u: &mut Uses, seen: &mut BTreeSet<PathBuf>) {
    let canon = std::fs::canonicalize(file).unwrap_or_else(|_| file.to_path_buf());
    if !seen.insert(canon.clone()) {
        return;
    }
    // The kustomization file itself is no manifest.
    u.files.insert(canon);
    let dir = file.parent().unwrap_or(Path::new("."));
    let Some(k) = load(file) else {
        return;
    };
    for r in references(&k) {
        if r.contains('\n') {
            continue;
        }
        // What kustomize fetches over HTTP(S) whatever is on the disk: `http://h:1/x.yaml`
        // names the local directory `http:/h:1/x.yaml` too (`//` is `/`), and is fetched.
        if fetched_whatever_the_disk(&r) {
            u.remote.push(r);
            continue;
        }
        let p = dir.join(&r);
        let Ok(c) = std::fs::canonicalize(&p) else {
            if is_remote(&r) {
                u.remote.push(r);
            }
            continue;
        };
        if c.is_dir() {
            u.dirs.insert(c.clone());
            if let Some(inner) = kustomization_file(&c) {
                collect(&inner, u, seen);
            }
        } else {
            u.files.insert(c);
        }
    }
}

/// Whether kustomize fetches the reference `r` over the network before it looks for a local
/// file of that name: its `IsRemoteFile` is Go's `url.Parse` finding the scheme `http` or
/// `https` (in any case: `http:/x` too), and a reference with `://` or `git@` is a repository.
fn fetched_whatever_the_disk(r: &str) -> bool {
    let scheme = r.split_once(':').map(|(s, _)| s).filter(|s| {
        s.starts_with(|c: char| c.is_ascii_alphabetic())
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
    });
    scheme.is_some_and(|s| s.eq_ignore_ascii_case("http") || s.eq_ignore_ascii_case("https"))
        || r.contains("://")
        || r.starts_with("git@")
}

/// Whether a reference that is no local path is one kustomize fetches: a URL
/// (`https://…/x.yaml`, `ssh://…`), a git address (`git@github.com:org/repo`), or a repository
/// without a scheme, whose first segment is a host (`github.com/org/repo//dir?ref=v1`).
fn is_remote(r: &str) -> bool {
    let host = r.split('/').next().unwrap_or("");
    r.contains("://")
        || r.starts_with("git@")
        || r.contains("?ref=")
        || (host.contains('.') && !host.starts_with('.') && r.contains('/'))
}

/// The kustomization in `file`'s directory or above it (up to the repository root, the first
/// directory holding `.git`) that applies `file` as a patch (`patches`, `patchesStrategicMerge`,
/// `patchesJson6902`). A patch is a fragment of an object that its base completes: it is linted
/// through that kustomization, never alone.
pub(super) fn patch_user(file: &Path) -> Option<PathBuf> {
    let target = std::fs::canonicalize(file).ok()?;
    let mut dir = target.parent();
    for _ in 0..32 {
        let d = dir?;
        if let Some(k) = kustomization_file(d)
            && let Some(v) = load(&k)
            && patches(&v)
                .iter()
                .any(|p| std::fs::canonicalize(d.join(p)).is_ok_and(|c| c == target))
        {
            return Some(k);
        }
        if d.join(".git").exists() {
            return None;
        }
        dir = d.parent();
    }
    None
}

/// The kustomization file `file`, read (`None` when it cannot be read or parsed: kustomize
/// then says why when it builds).
fn load(file: &Path) -> Option<Value> {
    std::fs::read(file)
        .ok()
        .and_then(|b| crate::source::load_bytes_values(&b).ok())
        .and_then(|v| v.into_iter().next())
}

/// The files a kustomization applies as patches.
fn patches(k: &Value) -> Vec<String> {
    let mut out: Vec<String> = k
        .get("patchesStrategicMerge")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .filter(|s| !s.contains('\n'))
        .map(str::to_string)
        .collect();
    for f in ["patches", "patchesJson6902"] {
        for item in k.get(f).and_then(Value::as_array).into_iter().flatten() {
            if let Some(p) = item.get("path").and_then(Value::as_str) {
                out.push(p.to_string());
            }
        }
    }
    out
}

/// The paths a kustomization names: resources, bases, components, patches, generators' files
/// and the other fields that take a file.
fn references(k: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let strings = |v: Option<&Value>, out: &mut Vec<String>| {
        for s in v
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
        {
            out.push(s.to_string());
        }
    };
    for f in [
        "resources",
        "bases",
        "components",
        "crds",
        "configurations",
        "generators",
        "transformers",
        "validators",
    ] {
        strings(k.get(f), &mut out);
    }
    out.extend(patches(k));
    for item in k
        .get("replacements")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if let Some(p) = item.get("path").and_then(Value::as_str) {
            out.push(p.to_string());
        }
    }
    for f in ["configMapGenerator", "secretGenerator"] {
        for g in k.get(f).and_then(Value::as_array).into_iter().flatten() {
            let mut files = Vec::new();
            strings(g.get("files"), &mut files);
            strings(g.get("envs"), &mut files);
            // `key=path` names the key of a file.
            out.extend(
                files
                    .into_iter()
                    .map(|s| s.split_once('=').map_or(s.clone(), |(_, p)| p.to_string())),
            );
            if let Some(e) = g.get("env").and_then(Value::as_str) {
                out.push(e.to_string());
            }
        }
    }
    if let Some(p) = k.pointer("/openapi/path").and_then(Value::as_str) {
        out.push(p.to_string());
    }
    out
}

/// The file an object built by the kustomization `file` comes from: the `path` of its
/// `config.kubernetes.io/origin` annotation (written when the kustomization asks for
/// `buildMetadata: [originAnnotations]`) when that is a file here, else the kustomization file.
pub(super) fn origin_file(file: &Path, object: &Value) -> String {
    let dir = file.parent().unwrap_or(Path::new("."));
    object
        .pointer("/metadata/annotations/config.kubernetes.io~1origin")
        .and_then(Value::as_str)
        .and_then(|o| {
            o.lines()
                .find_map(|l| l.trim().strip_prefix("path:"))
                .map(|p| p.trim().trim_matches(['"', '\'']).to_string())
        })
        .map(|p| normalize(&dir.join(p)))
        .filter(|p| p.is_file())
        .unwrap_or_else(|| file.to_path_buf())
        .display()
        .to_string()
}

/// `a/b/../c` → `a/c`, without touching the file system.
fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir
                if matches!(out.components().next_back(), Some(Component::Normal(_))) =>
            {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn references_cover_the_file_fields() {
        let k = json!({
            "resources": ["d.yaml", "../base", "https://github.com/x/y"],
            "components": ["../comp"],
            "patches": [{"path": "p.yaml"}, {"patch": "inline"}],
            "patchesStrategicMerge": ["sm.yaml"],
            "patchesJson6902": [{"path": "j.yaml"}],
            "configMapGenerator": [{"files": ["k=cfg.json", "plain.txt"], "envs": ["e.env"]}],
            "secretGenerator": [{"env": "s.env"}],
            "openapi": {"path": "schema.json"},
        });
        assert_eq!(
            references(&k),
            [
                "d.yaml",
                "../base",
                "https://github.com/x/y",
                "../comp",
                "sm.yaml",
                "p.yaml",
                "j.yaml",
                "cfg.json",
                "plain.txt",
                "e.env",
                "s.env",
                "schema.json"
            ]
        );
    }

    #[test]
    fn remote_references_are_told_from_local_ones() {
        for r in [
            "https://raw.githubusercontent.com/x/y/main/d.yaml",
            "github.com/kubernetes-sigs/kustomize//examples/helloWorld?ref=v3.3.1",
            "git@github.com:org/repo.git",
            "ssh://git@example.com/repo",
        ] {
            assert!(is_remote(r), "{r}");
        }
        for r in ["../base", "d.yaml", "./x/y.yaml", "overlays/win"] {
            assert!(!is_remote(r), "{r}");
        }
        // Fetched even when a local file of that name exists.
        for r in [
            "http://127.0.0.1:18081/pod.yaml",
            "http:/127.0.0.1:18081/pod.yaml",
            "HTTPS:x",
            "ssh://git@example.com/repo",
            "git@github.com:org/repo.git",
        ] {
            assert!(fetched_whatever_the_disk(r), "{r}");
        }
        for r in [
            "../base",
            "d.yaml",
            "c:/x",
            "http.yaml",
            "./http:/x",
            "1http:/x",
        ] {
            assert!(!fetched_whatever_the_disk(r), "{r}");
        }
    }

    #[test]
    fn paths_normalize_lexically() {
        assert_eq!(
            normalize(Path::new("k/overlays/win/../../base/d.yaml")),
            Path::new("k/base/d.yaml")
        );
        assert_eq!(normalize(Path::new("../x/./y")), Path::new("../x/y"));
    }
}
