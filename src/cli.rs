//! The `winlint` command line: `winlint [lint] FILES`, `rules`, `explain`, `audit`, `serve`,
//! `manifests`. A live cluster (`--cluster`, `audit`) is [`cluster`]'s.

mod cluster;
mod fix;
mod input;
mod output;
mod parallel;
mod registry;
mod write;

use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};

use clap::{Args, Parser, Subcommand, ValueEnum};
use serde_json::Value;

use crate::config::{Config, ConfigError, rule_id};
use crate::engine::fix::{NotFixed, ObjectLint, fix_allowed, prefix_op};
use crate::engine::{self};
use crate::model::Context;
use crate::model::FixSafety;
use crate::model::Operation;
use crate::model::windows::{self, Isolation};
use crate::model::workload::{self, objects};
use crate::model::{KubeVersion, Runtime, Taint};
use crate::report::{self, FixState, InputError, Located, Summary};
use crate::rules;
use crate::source::{self, Document};

/// Exit codes CI can trust.
pub use crate::process::{EXIT_FINDINGS, EXIT_OK, EXIT_USAGE};
pub use fix::{FixError, FixedText, fix_text};
use fix::{diff_name, fix_loaded, not_fixed_reason, with_bom};
use output::{Sink, exit_code, write_styled};

#[derive(Parser, Debug)]
#[command(
    name = "winlint",
    version,
    about = "Find the Windows pods Kubernetes accepts but Windows cannot run",
    long_about = "Lints Kubernetes manifests (files, directories, - for stdin) for Windows workloads in mixed Linux/Windows clusters.\n\nExit codes: 0 no error findings, 1 error findings (--fail-on warning: warnings too), 2 usage error or unreadable input.",
    args_conflicts_with_subcommands = true
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    lint: LintArgs,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Lint manifests (the default command).
    Lint(LintArgs),
    /// List every rule.
    Rules {
        #[arg(short, long, value_enum, default_value_t = RulesFormat::Text)]
        output: RulesFormat,
    },
    /// Show a rule's documentation (by ID or name).
    Explain { rule: String },
    /// Lint the workloads running in the cluster now, with the cluster's facts.
    Audit(cluster::AuditArgs),
    /// Run the HTTPS admission webhook.
    Serve(crate::server::ServeArgs),
    /// Print install manifests for the admission webhook.
    Manifests(crate::manifests::ManifestsArgs),
}

#[derive(Copy, Clone, Debug, ValueEnum, PartialEq, Eq)]
enum RulesFormat {
    Text,
    Json,
    Markdown,
}

#[derive(Copy, Clone, Debug, ValueEnum, PartialEq, Eq)]
enum Format {
    Text,
    Json,
    Sarif,
    /// GitHub Actions workflow commands (annotations).
    Github,
    /// GitLab Code Quality JSON.
    Codequality,
}

#[derive(Copy, Clone, Debug, ValueEnum, PartialEq, Eq)]
enum FailOn {
    Error,
    Warning,
    Info,
    Never,
}

#[derive(Copy, Clone, Debug, ValueEnum, PartialEq, Eq)]
enum ColorChoice {
    Auto,
    Always,
    Never,
}

/// Target and policy flags of `lint` (`serve` reads its target and policy from `--config`).
#[derive(Args, Debug, Clone, Default)]
pub struct TargetArgs {
    /// winlint.yaml with target, rule severities, disabled rules and fix policy (default: the
    /// nearest .winlint.yaml or winlint.yaml from the working directory up to the repository
    /// root).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Do not look for a configuration file (only --config reads one).
    #[arg(long, conflicts_with = "config")]
    pub no_config: bool,
    /// The platform of the cluster: its Windows nodes' default taints (aks and eks: none; gke:
    /// node.kubernetes.io/os=windows:NoSchedule; generic: os=windows:NoSchedule).
    #[arg(long, value_name = "PLATFORM", value_parser = ["aks", "eks", "gke", "generic"])]
    pub platform: Option<String>,
    /// Kubernetes version of the cluster (default 1.34).
    #[arg(long, value_name = "X.Y")]
    pub kubernetes_version: Option<String>,
    /// Windows build of the cluster's nodes, repeatable: ltsc2022, 1709, 20H2, 10.0.20348 (default 10.0.20348).
    #[arg(long = "windows-build", value_name = "BUILD")]
    pub windows_builds: Vec<String>,
    /// Container isolation of the Windows nodes.
    #[arg(long, value_name = "MODE", value_parser = ["process", "hyperv"])]
    pub isolation: Option<String>,
    /// Container runtime of the Windows nodes.
    #[arg(long, value_name = "RUNTIME", value_parser = ["containerd", "docker"])]
    pub runtime: Option<String>,
    /// Feature gate, repeatable: Name=true|false.
    #[arg(long = "feature-gate", value_name = "NAME=BOOL")]
    pub feature_gates: Vec<String>,
    /// Taint of the Windows nodes, repeatable: key=value:Effect (default os=windows:NoSchedule; "none" for none).
    #[arg(long = "windows-taint", value_name = "TAINT")]
    pub windows_taints: Vec<String>,
    /// The cluster runs Windows nodes of several builds (enables WIN005).
    #[arg(long)]
    pub cluster_mixed_builds: bool,
    /// Report end-of-support Windows builds (WIN506).
    #[arg(long)]
    pub check_eol: bool,
    /// Disable a rule (ID or name), repeatable.
    #[arg(long, value_name = "RULE")]
    pub disable: Vec<String>,
    /// Enable a rule that is off by default (WIN308), at its own severity; repeatable.
    #[arg(long, value_name = "RULE")]
    pub enable: Vec<String>,
}

impl TargetArgs {
    /// The configuration file read: `--config`, else the one found from the working directory
    /// (none with `--no-config`).
    pub fn config_file(&self) -> Option<PathBuf> {
        match &self.config {
            Some(p) => Some(p.clone()),
            None if self.no_config => None,
            None => crate::config::discover::find(),
        }
    }

    /// Defaults, then `--config` (or the file found), then flags.
    pub fn to_config(&self) -> Result<Config, ConfigError> {
        self.to_config_from(self.config_file().as_deref())
    }

    /// Defaults, then `file`, then flags.
    pub fn to_config_from(&self, file: Option<&Path>) -> Result<Config, ConfigError> {
        let mut cfg = match file {
            Some(p) => Config::from_file(p)?,
            None => Config::default(),
        };
        let t = &mut cfg.target;
        if let Some(p) = &self.platform {
            t.set_platform(p.parse().map_err(ConfigError::PlatformFlag)?);
        }
        if let Some(v) = &self.kubernetes_version {
            t.pinned.kubernetes = true;
            t.kubernetes = KubeVersion::parse(v)
                .ok_or_else(|| ConfigError::KubernetesVersionFlag(v.clone()))?;
        }
        if !self.windows_builds.is_empty() {
            t.pinned.windows_builds = true;
            t.windows_builds = self
                .windows_builds
                .iter()
                .flat_map(|s| s.split(','))
                .map(|s| {
                    windows::parse_build(s)
                        .ok_or_else(|| ConfigError::WindowsBuildFlag(s.to_string()))
                })
                .collect::<Result<_, _>>()?;
        }
        if let Some(i) = &self.isolation {
            t.pinned.isolation = true;
            t.isolation = if i == "hyperv" {
                Isolation::Hyperv
            } else {
                Isolation::Process
            };
        }
        if let Some(r) = &self.runtime {
            t.pinned.runtime = true;
            t.runtime = if r == "docker" {
                Runtime::Docker
            } else {
                Runtime::Containerd
            };
        }
        for g in &self.feature_gates {
            let (name, val) = g
                .split_once('=')
                .ok_or_else(|| ConfigError::FeatureGateFormat(g.clone()))?;
            let val: bool = val
                .parse()
                .map_err(|_| ConfigError::FeatureGateValue(g.clone()))?;
            t.feature_gates.insert(name.to_string(), val);
        }
        if !self.windows_taints.is_empty() {
            t.pinned.windows_taints = true;
            t.windows_taints = if self.windows_taints.iter().any(|s| s == "none") {
                Vec::new()
            } else {
                self.windows_taints
                    .iter()
                    .map(|s| Taint::parse(s))
                    .collect::<Result<_, _>>()?
            };
        }
        if self.cluster_mixed_builds {
            t.pinned.cluster_mixed_builds = true;
            t.cluster_mixed_builds = true;
        }
        t.check_eol |= self.check_eol;
        for r in &self.enable {
            cfg.policy.overrides.remove(rule_id(r)?);
        }
        for r in &self.disable {
            cfg.policy.overrides.insert(rule_id(r)?.to_string(), None);
        }
        Ok(cfg)
    }
}

#[derive(Args, Debug)]
struct LintArgs {
    /// Files or directories (recursive *.yaml, *.yml, *.json); - reads stdin.
    #[arg(value_name = "PATH")]
    paths: Vec<PathBuf>,
    #[command(flatten)]
    target: TargetArgs,
    #[command(flatten)]
    render: crate::render::RenderArgs,
    /// Output format.
    #[arg(short, long, value_enum, default_value_t = Format::Text)]
    output: Format,
    /// Lowest severity that makes the exit code 1.
    #[arg(long, value_enum, default_value_t = FailOn::Error)]
    fail_on: FailOn,
    /// Apply safe fixes (and the opt-in fixes of --fix-opt-in / the config) to the files.
    #[arg(long)]
    fix: bool,
    /// Show the fixes as a unified diff instead of writing them.
    #[arg(long)]
    diff: bool,
    /// Also apply this rule's opt-in fix (ID or name), repeatable.
    #[arg(long, value_name = "RULE")]
    fix_opt_in: Vec<String>,
    /// Colour: auto (terminal and NO_COLOR unset), always, never.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto)]
    color: ColorChoice,
    #[command(flatten)]
    view: report::ViewArgs,
    /// Take the target's facts from the cluster, read once: Kubernetes version, Windows builds,
    /// taints and runtime of the Windows nodes, RuntimeClasses, namespace labels. Flags and
    /// --config still override.
    #[arg(long)]
    cluster: bool,
    #[command(flatten)]
    cluster_args: crate::cluster::ClusterArgs,
    /// Largest input read, in bytes (a file, stdin, a pipe, a tool's output); a larger one is an
    /// input error.
    #[arg(long, value_name = "BYTES", default_value_t = input::DEFAULT_MAX_INPUT_BYTES,
        value_parser = clap::value_parser!(u64).range(1..))]
    max_input_bytes: u64,
    /// --fix may write a file that a symlink leads to outside the directory it was found in (or
    /// outside a named file's directory).
    #[arg(long)]
    fix_follow_symlinks: bool,
    #[command(flatten)]
    registry: registry::RegistryArgs,
    /// Threads that read and lint inputs (default: the cores available). The output is the
    /// same whatever the number; --fix without --diff writes files from one thread.
    #[arg(long, short = 'j', value_name = "N",
        value_parser = clap::value_parser!(u16).range(1..))]
    jobs: Option<u16>,
}

/// Entry point; returns the exit code.
pub fn main() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { EXIT_USAGE } else { EXIT_OK };
        }
    };
    match cli.command {
        None => lint(cli.lint),
        Some(Command::Lint(a)) => lint(a),
        Some(Command::Rules { output }) => list_rules(output),
        Some(Command::Explain { rule }) => explain(&rule),
        Some(Command::Audit(a)) => cluster::audit(a),
        Some(Command::Serve(a)) => crate::server::serve(a),
        Some(Command::Manifests(a)) => crate::manifests::manifests(a),
    }
}

fn list_rules(format: RulesFormat) -> i32 {
    let all = rules::all();
    let mut out = std::io::stdout().lock();
    let fix_str = |f: Option<FixSafety>| match f {
        Some(FixSafety::Safe) => "safe",
        Some(FixSafety::OptIn) => "opt-in",
        None => "-",
    };
    let res = match format {
        RulesFormat::Json => {
            let v: Vec<Value> = all
                .iter()
                .map(|r| {
                    let m = r.meta;
                    serde_json::json!({"id": m.id, "name": m.name, "severity": m.severity, "fix": m.fix,
                        "summary": m.summary, "applies": m.applies, "source": m.source})
                })
                .collect();
            writeln!(
                out,
                "{}",
                serde_json::to_string_pretty(&v).unwrap_or_default()
            )
        }
        RulesFormat::Markdown => {
            let mut s = String::from(
                "| ID | Name | Severity | Fix | Applies | Checks |\n|---|---|---|---|---|---|\n",
            );
            for r in all {
                let m = r.meta;
                s.push_str(&format!(
                    "| {} | `{}` | {} | {} | {} | {} |\n",
                    m.id,
                    m.name,
                    m.severity.as_str(),
                    fix_str(m.fix),
                    m.applies,
                    m.summary.replace('|', "\\|")
                ));
            }
            write!(out, "{s}")
        }
        RulesFormat::Text => {
            let w = all.iter().map(|r| r.meta.name.len()).max().unwrap_or(10);
            let mut s = format!(
                "{:<7} {:<w$} {:<8} {:<6} SUMMARY\n",
                "ID", "NAME", "SEVERITY", "FIX"
            );
            for r in all {
                let m = r.meta;
                s.push_str(&format!(
                    "{:<7} {:<w$} {:<8} {:<6} {}\n",
                    m.id,
                    m.name,
                    m.severity.as_str(),
                    fix_str(m.fix),
                    m.summary
                ));
            }
            write!(out, "{s}")
        }
    };
    crate::process::finish_output(res, EXIT_OK)
}

fn explain(key: &str) -> i32 {
    let Some(r) = rules::find(key) else {
        eprintln!("winlint: unknown rule {key:?} (see `winlint rules`)");
        return EXIT_USAGE;
    };
    let text = r.meta.page();
    crate::process::finish_output(crate::process::print_stdout(&text), EXIT_OK)
}

/// One input: a name for messages and its bytes.
struct Input {
    name: String,
    /// `None` for stdin and rendered output.
    path: Option<PathBuf>,
    /// The tree `--fix` may write in: the directory walked, or a named file's directory.
    tree: PathBuf,
    /// Stdin's bytes, a pipe's or a device's named as a file (read once, see [`input`]), or a
    /// chart's or kustomization's rendered output; regular files are read when needed, so
    /// memory holds one file at a time.
    bytes: Option<Vec<u8>>,
    /// How the bytes were rendered (`None` for files and stdin).
    rendered: Option<crate::render::Rendered>,
}

impl Input {
    fn is_stdin(&self) -> bool {
        self.path.is_none() && self.rendered.is_none()
    }

    fn read(&self, cap: u64) -> Result<std::borrow::Cow<'_, [u8]>, input::ReadError> {
        match (&self.bytes, &self.path) {
            (Some(b), _) => Ok(std::borrow::Cow::Borrowed(b)),
            (None, Some(p)) => input::read_file(p, cap).map(std::borrow::Cow::Owned),
            (None, None) => Ok(std::borrow::Cow::Borrowed(&[])),
        }
    }
}

/// Kinds whose objects are context for pods (see [`Context::add`]).
const CONTEXT_KINDS: &[&str] = &[
    "RuntimeClass",
    "ConfigMap",
    "Secret",
    "Namespace",
    "HorizontalPodAutoscaler",
];

/// Cheap pre-check: can this text hold a context object at all?
fn may_hold_context(text: &str) -> bool {
    CONTEXT_KINDS.iter().any(|k| text.contains(k))
}

/// The documents of a YAML stream as text: split before every line that starts with the
/// document marker `---` followed by a space, a tab or the line's end. YAML forbids such a line
/// inside any scalar, plain, quoted or block (`c-forbidden`), so in a stream the loader accepts
/// each piece is one document (the first may be empty or hold only comments).
fn document_texts(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        // The next marker line after the first line of `rest`.
        let mut at = 0;
        let end = loop {
            match rest[at..].find('\n') {
                None => break rest.len(),
                Some(nl) => {
                    at += nl + 1;
                    let line = &rest.as_bytes()[at..];
                    if line.starts_with(b"---")
                        && matches!(line.get(3), None | Some(b' ' | b'\t' | b'\r' | b'\n'))
                    {
                        break at;
                    }
                }
            }
        };
        let (doc, tail) = rest.split_at(end);
        rest = tail;
        Some(doc)
    })
}

/// Pass 1's view of one input: the objects of the documents that can hold context. Only those
/// documents are parsed (without source maps); the others (most of a typical input) are left
/// to pass 2. When one of them does not load on its own (say, a `%TAG` directive that belongs to
/// the document before it), the whole stream is loaded, as one file.
fn context_values(text: &str) -> Vec<Value> {
    let mut values = Vec::new();
    for doc in document_texts(text).filter(|d| may_hold_context(d)) {
        match source::load_bytes_values(doc.as_bytes()) {
            Ok(v) => values.extend(v),
            Err(_) => return source::load_bytes_values(text.as_bytes()).unwrap_or_default(),
        }
    }
    values
}

/// The image references of the pods in `text` (for `--registry`): the documents that name an
/// image, parsed without source maps.
fn image_references(text: &str, out: &mut BTreeSet<String>) {
    for doc in document_texts(text).filter(|d| d.contains("image")) {
        for v in source::load_bytes_values(doc.as_bytes()).unwrap_or_default() {
            for (_, o) in objects(&v) {
                crate::registry::source::image_references(o, out);
            }
        }
    }
}

/// Expand the paths: directories recursively (sorted), `-` for stdin; charts and
/// kustomizations rendered (see [`crate::render`]), after the files.
fn collect_inputs(
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

fn is_manifest(p: &Path) -> bool {
    matches!(
        p.extension().and_then(|e| e.to_str()),
        Some("yaml" | "yml" | "json")
    )
}

/// A file named or found in the directory `tree`: a regular file is read when linted; anything
/// else (a pipe, `/dev/stdin`, `<(…)`) now, the one time it can be read.
fn read_file(p: &Path, tree: &Path, cap: u64, out: &mut Vec<Input>, errors: &mut Vec<InputError>) {
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

fn object_label(v: &Value) -> String {
    let kind = v.get("kind").and_then(Value::as_str).unwrap_or("?");
    let name = v
        .pointer("/metadata/name")
        .or_else(|| v.pointer("/metadata/generateName"))
        .and_then(Value::as_str)
        .unwrap_or("");
    format!("{kind}/{name}")
}

fn load_error(name: &str, e: source::LoadError) -> InputError {
    InputError {
        file: name.to_string(),
        line: e.line,
        column: e.column,
        message: e.message,
    }
}

/// Whether `--fix` has run on the documents linted, and the fixes it said it could not make.
#[derive(Clone, Copy)]
enum Fixed<'a> {
    No,
    /// The fixes given up, and why the others were not made (the file could not be fixed).
    Yes(&'a [NotFixed], &'a str),
}

/// Lint loaded documents of one file; pushes located findings, and the object labels of
/// suppressions with an ignore reason. `fixed`: `--fix` has run on these documents, so a
/// finding whose fix the policy allows is one it could not apply (and why, when it said).
/// `rendered`: the documents are a tool's output, with the file each comes from; findings then
/// have no line. `lints`: the fixer's lint of these documents (its first pass on the original,
/// its last on the fixed text), used instead of linting them again.
#[allow(clippy::too_many_arguments)]
fn lint_docs(
    name: &str,
    docs: &[Document],
    lints: Option<Vec<ObjectLint>>,
    rendered: Option<(&crate::render::Rendered, &[String])>,
    fixed: Fixed,
    cfg: &Config,
    cx: &Context,
    findings: &mut Vec<Located>,
    summary: &mut Summary,
    ignore_reasons: &mut Vec<String>,
    stderr: &mut String,
) {
    use std::fmt::Write as _;
    // The fixer's lint of these documents, object by object in the same order, when given.
    let mut lints = lints.into_iter().flatten();
    for (di, doc) in docs.iter().enumerate() {
        if rendered.is_none() && workload::is_patch(&doc.value) {
            // Not an object (crate::model::workload::is_patch): neither linted nor fixed.
            let (line, _) = doc.map.locate("");
            let _ = writeln!(
                stderr,
                "{name}:{line}: note: a strategic-merge patch ($patch directives), not an object: not linted alone; lint the kustomization that applies it"
            );
        }
        for (prefix, obj) in objects(&doc.value) {
            summary.objects += 1;
            let given = lints.next().filter(|l| l.root == di && l.prefix == prefix);
            let kind = obj.get("kind").and_then(Value::as_str).unwrap_or("");
            if !workload::is_pod_kind(kind) {
                continue;
            }
            summary.pods += workload::pod_sites(obj).len();
            let rep = match given {
                Some(l) => engine::judge::judged(obj, cfg, cx, Operation::Lint, l.report),
                None => engine::judge::lint_judged(obj, cfg, cx, Operation::Lint),
            };
            summary.suppressed += rep.suppressed;
            if let Some(r) = rep.ignore_reason.filter(|_| rep.suppressed > 0) {
                ignore_reasons.push(format!("{}: {r}", object_label(obj)));
            }
            if rep.findings.is_empty() {
                continue;
            }
            let label = object_label(obj);
            let namespace = obj
                .pointer("/metadata/namespace")
                .and_then(Value::as_str)
                .filter(|ns| !ns.is_empty())
                .map(str::to_string);
            for mut f in rep.findings {
                let pointer = format!("{prefix}{}", f.pointer);
                if let Some(fix) = f.fix.as_mut() {
                    fix.ops = std::mem::take(&mut fix.ops)
                        .into_iter()
                        .map(|op| prefix_op(&prefix, op))
                        .collect();
                }
                let (file, (line, column)) = match rendered {
                    None => (name.to_string(), doc.map.locate(&pointer)),
                    Some((_, files)) => (files[di].clone(), (0, 0)),
                };
                let (fix, not_fixed) = match (fix_allowed(&f, cfg), fixed) {
                    (false, _) => (FixState::None, None),
                    // --fix cannot edit rendered output.
                    (true, Fixed::No) if rendered.is_some() => (FixState::None, None),
                    (true, Fixed::No) => (FixState::Fixable, None),
                    (true, Fixed::Yes(..)) if rendered.is_some() => (
                        FixState::NotFixed,
                        Some(format!(
                            "--fix cannot edit what {} renders",
                            rendered.map_or("", |(r, _)| r.label.as_str())
                        )),
                    ),
                    (true, Fixed::Yes(given_up, otherwise)) => (
                        FixState::NotFixed,
                        Some(
                            not_fixed_reason(given_up, di, f.rule.id, &pointer)
                                .unwrap_or(match otherwise {
                                    "" => "the finding remains after its fix",
                                    o => o,
                                })
                                .to_string(),
                        ),
                    ),
                };
                findings.push(Located {
                    file,
                    line,
                    column,
                    pointer,
                    object: label.clone(),
                    namespace: namespace.clone(),
                    finding: f,
                    fix,
                    not_fixed,
                    rendered: rendered.map(|(r, _)| r.label.clone()),
                    cluster_namespace: None,
                });
            }
        }
    }
}

/// Pass 2's results besides the findings. Inputs are linted in report order (by name, as the
/// findings are sorted) but errors, ignore reasons and diffs are reported in input order: each
/// carries its input's index.
#[derive(Default)]
struct Pass2 {
    summary: Summary,
    errors: Vec<(usize, InputError)>,
    ignore_reasons: Vec<(usize, String)>,
    diffs: Vec<(usize, String)>,
}

/// Pass 2's work on one input, made on any thread and reported on the main one, in order.
#[derive(Default)]
struct Linted {
    findings: Vec<Located>,
    /// The counts of `summary` (its other fields are the run's).
    summary: Summary,
    errors: Vec<InputError>,
    ignore_reasons: Vec<String>,
    diff: Option<String>,
    /// Its warnings and notes, written to stderr when it is reported (in report order, as a
    /// run on one thread writes them).
    stderr: String,
}

impl Pass2 {
    /// Take input `idx`'s results, its findings onto `findings`.
    fn add(&mut self, idx: usize, l: Linted, findings: &mut Vec<Located>) {
        if !l.stderr.is_empty() {
            let _ = std::io::stderr().lock().write_all(l.stderr.as_bytes());
        }
        findings.extend(l.findings);
        let s = &mut self.summary;
        s.files += l.summary.files;
        s.objects += l.summary.objects;
        s.pods += l.summary.pods;
        s.suppressed += l.summary.suppressed;
        self.errors.extend(l.errors.into_iter().map(|e| (idx, e)));
        (self.ignore_reasons).extend(l.ignore_reasons.into_iter().map(|r| (idx, r)));
        self.diffs.extend(l.diff.map(|d| (idx, d)));
    }
}

/// Pass 2 for one input: read, parse, fix, lint.
fn lint_input(input: &Input, args: &LintArgs, cfg: &Config, cx: &Context) -> Linted {
    use std::fmt::Write as _;
    let mut out = Linted::default();
    let error = |message: String| InputError {
        file: input.name.clone(),
        line: 0,
        column: 0,
        message,
    };
    let bytes = match input.read(args.max_input_bytes) {
        Ok(b) => b,
        Err(e) => {
            out.errors.push(error(e.to_string()));
            return out;
        }
    };
    out.summary.files += 1;
    let mut docs = match source::load_bytes_warned(&bytes) {
        Ok((d, warnings)) => {
            // YAML that kubectl accepts and YAML 1.2 does not (crate::source::kubectl).
            for w in warnings {
                let _ = match &input.rendered {
                    Some(r) => writeln!(
                        out.stderr,
                        "{} ({} output, line {}): warning: {}",
                        input.name, r.label, w.line, w.message
                    ),
                    None => writeln!(
                        out.stderr,
                        "{}:{}: warning: {}",
                        input.name, w.line, w.message
                    ),
                };
            }
            d
        }
        Err(e) => {
            let e = match &input.rendered {
                // Its lines are no file's: say whose output it is.
                Some(r) => error(format!(
                    "{} printed invalid YAML (line {} of its output): {}",
                    r.label, e.line, e.message
                )),
                None => load_error(&input.name, e),
            };
            out.errors.push(e);
            return out;
        }
    };
    // A tool's output: --fix cannot edit it (refused below), and findings have no line.
    let files =
        (input.rendered.as_ref()).map(|r| r.doc_files(&String::from_utf8_lossy(&bytes), &docs));
    let rendered = input.rendered.as_ref().zip(files.as_deref());
    let (mut not_fixed, mut otherwise) = (Vec::new(), String::new());
    // The fixer's lint of the documents linted below, when it has one: each file is linted
    // once as it is and once as fixed, and parsed once each way.
    let mut lints: Option<Vec<ObjectLint>> = None;
    if rendered.is_none() && (args.fix || args.diff) {
        let text = String::from_utf8_lossy(&bytes);
        let bom = text.starts_with('\u{feff}');
        let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
        // The documents' offsets count a byte-order mark the fixer's text does not have.
        let loaded = (!bom).then_some(&docs[..]);
        let mut last = None;
        let fixed = fix_loaded(text, loaded, cfg, cx).map(|f| {
            not_fixed = f.not_fixed;
            lints = f.first;
            last = f.last;
            (f.text, f.docs)
        });
        if args.diff {
            // The diff is the output: why a fix is not in it goes to stderr.
            for n in &not_fixed {
                let (line, column) = docs
                    .get(n.root)
                    .map_or((0, 0), |d| d.map.locate(&n.pointer));
                let _ = writeln!(
                    out.stderr,
                    "{}:{line}:{column}: {} not fixed by --fix: {}",
                    input.name, n.rule, n.reason
                );
            }
        }
        match fixed {
            Ok((Some(fixed), fixed_docs)) => {
                if args.diff {
                    out.diff = Some(
                        similar::TextDiff::from_lines(text, &fixed)
                            .unified_diff()
                            .header(&diff_name("a", &input.name), &diff_name("b", &input.name))
                            .to_string(),
                    );
                } else {
                    let written = match &input.path {
                        Some(path) => write::write_fix(
                            &write::Place {
                                path,
                                tree: &input.tree,
                                follow_symlinks: args.fix_follow_symlinks,
                            },
                            &bytes,
                            &with_bom(&bytes, &fixed),
                        )
                        .map_err(|e| e.0),
                        None => {
                            // stdin: print the fixed manifest instead of the report.
                            crate::process::print_stdout(&fixed).map_err(|e| {
                                format!("the fixed manifest could not be written: {e}")
                            })
                        }
                    };
                    if let Err(e) = written {
                        out.errors
                            .push(error(format!("--fix did not write the file: {e}")));
                        // The findings stay, and this is why (not "the finding remains").
                        otherwise = e;
                    } else {
                        match fixed_docs.map_or_else(|| source::load(&fixed), Ok) {
                            Ok(d) => {
                                docs = d;
                                lints = last;
                            }
                            Err(e) => out.errors.push(load_error(&input.name, e)),
                        }
                    }
                }
            }
            Ok((None, _)) => {
                if input.path.is_none()
                    && !args.diff
                    && let Err(e) = crate::process::print_stdout(text)
                {
                    out.errors.push(error(format!("cannot write: {e}")));
                }
            }
            Err(e) => {
                otherwise = format!("the file could not be fixed: {e}");
                out.errors.push(error(format!("cannot apply fixes: {e}")));
            }
        }
    }
    lint_docs(
        &input.name,
        &docs,
        lints,
        rendered,
        match rendered {
            Some(_) if args.fix || args.diff => Fixed::Yes(&[], ""),
            None if args.fix && !args.diff => Fixed::Yes(&not_fixed, &otherwise),
            _ => Fixed::No,
        },
        cfg,
        cx,
        &mut out.findings,
        &mut out.summary,
        &mut out.ignore_reasons,
        &mut out.stderr,
    );
    let unfixed = (out.findings.iter())
        .filter(|l| l.rendered.is_some() && l.fix == FixState::NotFixed)
        .count();
    if let (Some((r, _)), 1..) = (rendered, unfixed) {
        out.errors.push(error(format!(
            "--fix cannot edit what {} renders: {unfixed} fixable finding(s) in the {} are \
             left; fix its templates or values by hand",
            r.label,
            r.what()
        )));
    }
    out
}

fn lint(args: LintArgs) -> i32 {
    let config_file = args.target.config_file();
    let mut cfg = match args.target.to_config_from(config_file.as_deref()) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("winlint: {e}");
            return EXIT_USAGE;
        }
    };
    for r in &args.fix_opt_in {
        match rule_id(r) {
            Ok(id) => {
                cfg.policy.fix_opt_in.insert(id.to_string());
            }
            Err(e) => {
                eprintln!("winlint: --fix-opt-in: {e}");
                return EXIT_USAGE;
            }
        }
    }
    if let Err(e) = args
        .view
        .check(matches!(args.output, Format::Text | Format::Json))
    {
        eprintln!("winlint: {e}");
        return EXIT_USAGE;
    }
    if args.paths.is_empty() {
        eprintln!("winlint: no input; give files, directories or - for stdin (see winlint --help)");
        return EXIT_USAGE;
    }
    if args.cluster_args.context.is_some() && !args.cluster {
        eprintln!("winlint: --context names the cluster of --cluster: add --cluster");
        return EXIT_USAGE;
    }
    // --cluster: the target's facts and the context (RuntimeClasses, namespace labels) from the
    // cluster; objects in the input add to that context and win over it.
    let (base_context, from_cluster) = if args.cluster {
        match cluster::target(&args.cluster_args, &cfg) {
            Ok(t) => {
                cfg = t.config;
                (t.context, Some(t.summary))
            }
            Err(line) => {
                eprintln!("winlint: {line}");
                return EXIT_USAGE;
            }
        }
    } else {
        (Context::default(), None)
    };
    let mut errors = Vec::new();
    let mut render = args.render.clone();
    render.output_cap = args.max_input_bytes;
    let inputs = collect_inputs(
        &args.paths,
        &render,
        &cfg.target.kubernetes.to_string(),
        args.max_input_bytes,
        &mut errors,
    );

    // Pass 1: RuntimeClass, ConfigMap, Secret, Namespace and HPA objects anywhere in the input
    // are context for the pods. Only the documents that can hold one are parsed here, without
    // source maps. (A file that is not UTF-8 is an error in pass 2.)
    // Inputs are read and parsed on all cores; the context grows in input order.
    let jobs = args.jobs.map_or_else(parallel::default_jobs, usize::from);
    let mut cx = base_context;
    let mut images = BTreeSet::new();
    let pass1 = |input: &Input| {
        let (mut values, mut images) = (Vec::new(), BTreeSet::new());
        let Ok(bytes) = input.read(args.max_input_bytes) else {
            return (values, images);
        };
        let Ok(text) = std::str::from_utf8(&bytes) else {
            return (values, images);
        };
        if args.registry.registry {
            image_references(text, &mut images);
        }
        if may_hold_context(text) {
            values = context_values(text);
        }
        (values, images)
    };
    parallel::ordered_map(&inputs, jobs, pass1, |_, (values, mut found)| {
        images.append(&mut found);
        for v in &values {
            for (_, o) in objects(v) {
                cx.add(o);
            }
        }
    });
    // --registry: the images' facts, looked up before pass 2 (rules never wait on a network).
    if let Err(e) = registry::attach(&args.registry, &images, &mut cx) {
        eprintln!("winlint: {e}");
        return EXIT_USAGE;
    }

    // Pass 2: one file at a time, in report order (findings sort by file name, then place):
    // parse, fix, lint, hand the file's sorted findings to the sink, drop.
    let stdin_fix = args.fix && inputs.iter().any(Input::is_stdin);
    let mut sink = if args.diff {
        Sink::Count
    } else if stdin_fix {
        Sink::Text(report::TextReport::default())
    } else {
        Sink::new(args.output, &args.view)
    };
    let mut order: Vec<usize> = (0..inputs.len()).collect();
    order.sort_by(|&a, &b| inputs[a].name.cmp(&inputs[b].name));
    let mut pass2 = Pass2::default();
    let mut counts = args.view.counts();
    let mut group: Vec<Located> = Vec::new();
    // --fix writes files with the deferred signals blocked on the writing thread only
    // (crate::process::without_interruption); another thread would take a Ctrl-C meanwhile and
    // leave a temporary file behind. So files are written from one thread.
    let jobs = if args.fix && !args.diff { 1 } else { jobs };
    let work = |&idx: &usize| lint_input(&inputs[idx], &args, &cfg, &cx);
    parallel::ordered_map(&order, jobs, work, |pos, linted| {
        let idx = order[pos];
        pass2.add(idx, linted, &mut group);
        // Inputs of the same name are one group of the sort.
        if order
            .get(pos + 1)
            .is_some_and(|&next| inputs[next].name == inputs[idx].name)
        {
            return;
        }
        // One file's findings by place; rendered output spans several files (its templates)
        // and has no lines: by object there.
        group.sort_by(|a, b| {
            (&a.file, a.line, a.column, &a.object, a.finding.rule.id).cmp(&(
                &b.file,
                b.line,
                b.column,
                &b.object,
                b.finding.rule.id,
            ))
        });
        for l in group.drain(..) {
            if counts.add(&l) {
                sink.push(l);
            }
        }
    });
    let Pass2 {
        mut summary,
        errors: mut late_errors,
        ignore_reasons: mut reasons,
        mut diffs,
    } = pass2;
    late_errors.sort_by_key(|(i, _)| *i);
    errors.extend(late_errors.into_iter().map(|(_, e)| e));
    reasons.sort_by_key(|(i, _)| *i);
    summary.ignore_reasons = reasons.into_iter().map(|(_, r)| r).collect();
    summary.cluster = from_cluster;
    // A file found rather than named: say which, so a surprising result has a cause to see.
    summary.config = config_file
        .filter(|_| args.target.config.is_none())
        .map(|p| p.display().to_string());

    let res = match sink {
        Sink::Count => {
            diffs.sort_by_key(|(i, _)| *i);
            let mut o = std::io::stdout().lock();
            diffs.iter().try_for_each(|(_, d)| write!(o, "{d}"))
        }
        // stdin + --fix is a filter: the manifest went to stdout, the report goes to stderr.
        Sink::Text(t) if stdin_fix => write_styled(
            std::io::stderr().lock(),
            anstream::ColorChoice::Never,
            &t.finish(&counts, &errors, &summary),
        ),
        sink => sink.finish(&counts, &errors, &summary, args.color),
    };
    exit_code(res, &errors, &counts, args.fail_on)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn document_texts_split_before_marker_lines_only() {
        let text =
            "a: 1\n---\nb: |\n  ---\n  x\n--- \nc: 3\n---\r\nd: '---'\n----\n---x\n  ---\n---";
        let docs: Vec<&str> = document_texts(text).collect();
        assert_eq!(
            docs,
            [
                "a: 1\n",
                "---\nb: |\n  ---\n  x\n",
                "--- \nc: 3\n",
                "---\r\nd: '---'\n----\n---x\n  ---\n",
                "---",
            ]
        );
        assert_eq!(docs.concat(), text);
        assert_eq!(document_texts("").count(), 0);
        assert_eq!(document_texts("---\n").collect::<Vec<_>>(), ["---\n"]);
    }

    /// Pass 1 finds the same context objects as loading the whole file, on every fixture of the
    /// project that loads (multi-document files, Lists, JSON, anchors, odd YAML).
    #[test]
    fn context_values_match_the_whole_file_on_every_fixture() {
        let is_context = |v: &&Value| {
            v.get("kind")
                .and_then(Value::as_str)
                .is_some_and(|k| CONTEXT_KINDS.contains(&k))
        };
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut checked = 0;
        for entry in walkdir::WalkDir::new(root.join("testdata")) {
            let entry = entry.unwrap();
            let p = entry.path();
            if !is_manifest(p) {
                continue;
            }
            let Ok(text) = std::fs::read_to_string(p) else {
                continue;
            };
            let Ok(whole) = source::load_bytes_values(text.as_bytes()) else {
                continue;
            };
            let expected: Vec<Value> = whole
                .iter()
                .flat_map(|v| objects(v).into_iter().map(|(_, o)| o))
                .filter(is_context)
                .cloned()
                .collect();
            let got: Vec<Value> = context_values(&text)
                .iter()
                .flat_map(|v| objects(v).into_iter().map(|(_, o)| o))
                .filter(is_context)
                .cloned()
                .collect();
            assert_eq!(got, expected, "{}", p.display());
            checked += usize::from(!expected.is_empty());
        }
        assert!(checked >= 3, "only {checked} fixtures hold context objects");
    }

    #[test]
    fn a_broken_pod_document_does_not_hide_its_files_context() {
        let text = "kind: Service\n---\nkind: RuntimeClass\nmetadata: {name: w}\nhandler: h\n\
                    ---\nkind: Pod\nspec: {containers: [\n";
        let v = context_values(text);
        assert_eq!(v.len(), 1, "{v:?}");
        assert_eq!(v[0]["kind"], "RuntimeClass");
        // A context document that does not load gives nothing, as the whole file would.
        assert!(context_values("kind: ConfigMap\ndata: {a: [\n").is_empty());
    }
}
