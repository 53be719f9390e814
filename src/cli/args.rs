//! The command line's arguments: the subcommands, `lint`'s flags and the target and policy
//! flags ([`TargetArgs`], also read by `audit` and by tests that build a configuration as the
//! command line would).

use std::path::{Path, PathBuf};

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::config::{Config, ConfigError, rule_id};
use crate::model::windows::{self, Isolation};
use crate::model::{KubeVersion, Runtime, Taint};
use crate::report::{self};

use super::{cluster, input, registry};

#[derive(Parser, Debug)]
#[command(
    name = "winlint",
    version,
    about = "Find the Windows pods Kubernetes accepts but Windows cannot run",
    long_about = "Lints Kubernetes manifests (files, directories, - for stdin) for Windows workloads in mixed Linux/Windows clusters.\n\nExit codes: 0 no error findings, 1 error findings (--fail-on warning: warnings too), 2 usage error or unreadable input.",
    args_conflicts_with_subcommands = true
)]
pub(super) struct Cli {
    #[command(subcommand)]
    pub(super) command: Option<Command>,
    #[command(flatten)]
    pub(super) lint: LintArgs,
}

#[derive(Subcommand, Debug)]
pub(super) enum Command {
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
    /// Plan a move of the Windows nodes (--to ltsc2025): what each workload needs.
    Plan(super::plan::PlanArgs),
    /// Run the HTTPS admission webhook.
    Serve(crate::server::ServeArgs),
    /// Print install manifests for the admission webhook.
    Manifests(crate::manifests::ManifestsArgs),
    /// Run the Language Server (LSP on stdin/stdout): findings, quick fixes and rule help in an
    /// editor.
    Lsp(LspArgs),
}

/// `winlint lsp`: the target, policy and rendering flags of `lint`, for every buffer (a
/// `winlint.yaml` found from each file's directory still applies, as for `winlint FILE`).
#[derive(Args, Debug)]
pub(super) struct LspArgs {
    #[command(flatten)]
    pub(super) target: TargetArgs,
    /// How a saved file's chart or kustomization is rendered, as `winlint DIR` renders it.
    #[command(flatten)]
    pub(super) render: crate::render::RenderArgs,
}

#[derive(Copy, Clone, Debug, ValueEnum, PartialEq, Eq)]
pub(super) enum RulesFormat {
    Text,
    Json,
    Markdown,
}

#[derive(Copy, Clone, Debug, ValueEnum, PartialEq, Eq)]
pub(super) enum Format {
    Text,
    Json,
    Sarif,
    /// GitHub Actions workflow commands (annotations).
    Github,
    /// GitLab Code Quality JSON.
    Codequality,
    /// One self-contained HTML page: summary, per namespace, per rule, findings per object.
    Html,
}

#[derive(Copy, Clone, Debug, ValueEnum, PartialEq, Eq)]
pub(super) enum FailOn {
    Error,
    Warning,
    Info,
    Never,
}

#[derive(Copy, Clone, Debug, ValueEnum, PartialEq, Eq)]
pub(super) enum ColorChoice {
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
            t.windows_revisions =
                windows::revisions(self.windows_builds.iter().flat_map(|s| s.split(',')));
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
pub(super) struct LintArgs {
    /// Files or directories (recursive *.yaml, *.yml, *.json); - reads stdin.
    #[arg(value_name = "PATH")]
    pub(super) paths: Vec<PathBuf>,
    #[command(flatten)]
    pub(super) target: TargetArgs,
    #[command(flatten)]
    pub(super) render: crate::render::RenderArgs,
    /// Output format.
    #[arg(short, long, value_enum, default_value_t = Format::Text)]
    pub(super) output: Format,
    /// Lowest severity that makes the exit code 1.
    #[arg(long, value_enum, default_value_t = FailOn::Error)]
    pub(super) fail_on: FailOn,
    /// Apply safe fixes (and the opt-in fixes of --fix-opt-in / the config) to the files.
    #[arg(long)]
    pub(super) fix: bool,
    /// Show the fixes as a unified diff instead of writing them.
    #[arg(long)]
    pub(super) diff: bool,
    /// Also apply this rule's opt-in fix (ID or name), repeatable.
    #[arg(long, value_name = "RULE")]
    pub(super) fix_opt_in: Vec<String>,
    /// Colour: auto (terminal and NO_COLOR unset), always, never.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto)]
    pub(super) color: ColorChoice,
    #[command(flatten)]
    pub(super) view: report::ViewArgs,
    /// Take the target's facts from the cluster, read once: Kubernetes version, Windows builds,
    /// taints and runtime of the Windows nodes, RuntimeClasses, namespace labels. Flags and
    /// --config still override.
    #[arg(long)]
    pub(super) cluster: bool,
    #[command(flatten)]
    pub(super) cluster_args: crate::cluster::ClusterArgs,
    /// Largest input read, in bytes (a file, stdin, a pipe, a tool's output); a larger one is an
    /// input error.
    #[arg(long, value_name = "BYTES", default_value_t = input::DEFAULT_MAX_INPUT_BYTES,
        value_parser = clap::value_parser!(u64).range(1..))]
    pub(super) max_input_bytes: u64,
    /// --fix may write a file that a symlink leads to outside the directory it was found in (or
    /// outside a named file's directory), and a file with more than one hard link (in place:
    /// every name of it changes).
    #[arg(long)]
    pub(super) fix_follow_symlinks: bool,
    #[command(flatten)]
    pub(super) registry: registry::RegistryArgs,
    /// Threads that read and lint inputs (default: the cores available). The output is the
    /// same whatever the number; --fix without --diff writes files from one thread.
    #[arg(long, short = 'j', value_name = "N",
        value_parser = clap::value_parser!(u16).range(1..))]
    pub(super) jobs: Option<u16>,
}
