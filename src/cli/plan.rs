//! `winlint plan FILES --to ltsc2025`: the inputs the linter reads (files, directories, stdin,
//! charts and kustomizations, through [`collect_inputs`]), or the workloads running in the
//! cluster (`--cluster`), judged for a move of the Windows nodes ([`crate::plan`]).

use std::collections::BTreeSet;
use std::path::PathBuf;

use clap::builder::TypedValueParser as _;
use clap::{Args, ValueEnum};
use serde_json::Value;

use crate::cluster::ClusterArgs;
use crate::model::date::today_utc;
use crate::model::workload::objects;
use crate::model::{Context, KubeVersion};
use crate::plan::fleet::{ClusterPlan, Fleet};
use crate::plan::report::Plan;
use crate::plan::{Move, Verdict, lifecycle, plan_object};
use crate::process::{EXIT_FINDINGS, EXIT_OK, EXIT_USAGE};
use crate::source;

use super::collect::collect_inputs;
use super::{TargetArgs, cluster, input, registry};

#[derive(Copy, Clone, Debug, ValueEnum, PartialEq, Eq)]
pub(super) enum PlanFormat {
    /// Grouped: blocked workloads first, each with its change.
    Text,
    Json,
    /// For a pull-request comment.
    Markdown,
    /// One self-contained page.
    Html,
}

/// `winlint plan`
#[derive(Args, Debug)]
pub struct PlanArgs {
    /// Files or directories (recursive *.yaml, *.yml, *.json), charts, kustomizations; - reads
    /// stdin. With --cluster and no path: the workloads running in the cluster.
    #[arg(value_name = "PATH")]
    paths: Vec<PathBuf>,
    /// The planned Windows build of the nodes, repeatable: ltsc2025, 10.0.26100, ltsc2022.
    #[arg(long = "to", value_name = "BUILD", required = true)]
    to: Vec<String>,
    /// The planned Kubernetes version (default: the current one, --kubernetes-version or the
    /// cluster's); above the current one, the api-changes verdict says what its API server
    /// refuses (src/model/api_changes.yaml).
    #[arg(long = "kubernetes", value_name = "X.Y")]
    kubernetes: Option<String>,
    /// The date the platforms' lifecycles are read at (YYYY-MM-DD; default today, UTC).
    #[arg(long, value_name = "DATE")]
    as_of: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = PlanFormat::Text)]
    format: PlanFormat,
    /// Verdicts that make the exit code 1 (comma-separated): pin-breaks, rebuild,
    /// needs-hyperv, api-changes, retag, unknown (default: none; the exit code is 0 whatever the plan).
    #[arg(long, value_name = "VERDICTS", value_delimiter = ',')]
    fail_on: Vec<String>,
    /// The current state (Windows builds, taints, RuntimeClasses) from the cluster; without
    /// paths, the workloads running there too. Implied by several --context or --kubeconfig.
    #[arg(long)]
    cluster: bool,
    /// Kubeconfig file (default: $KUBECONFIG, else ~/.kube/config; in a pod without either,
    /// its ServiceAccount). Repeatable: each file's current context is a cluster of the fleet.
    #[arg(long, value_name = "PATH", env = "KUBECONFIG",
          value_parser = clap::builder::OsStringValueParser::new().map(PathBuf::from))]
    kubeconfig: Vec<PathBuf>,
    /// Kubeconfig context (default: its current context). Repeatable: each is a cluster of the
    /// fleet, planned against its own facts, and the report sums them up.
    #[arg(long, value_name = "NAME")]
    context: Vec<String>,
    /// With --cluster and no path: the namespace whose workloads are planned (default: the
    /// kubeconfig context's).
    #[arg(short, long, value_name = "NS", conflicts_with = "all_namespaces")]
    namespace: Option<String>,
    /// With --cluster and no path: every namespace.
    #[arg(short = 'A', long)]
    all_namespaces: bool,
    /// The current state: --windows-build, --kubernetes-version, --platform, --isolation
    /// (which is also the planned isolation), --config.
    #[command(flatten)]
    target: TargetArgs,
    #[command(flatten)]
    render: crate::render::RenderArgs,
    #[command(flatten)]
    registry: registry::RegistryArgs,
    /// Rewrite every retag's image reference in the input files to the tag (and digest, when
    /// the reference pins one) the plan names, one that runs on every planned build; then plan
    /// the files as fixed. Charts, kustomizations and stdin are not written (--diff shows them).
    #[arg(long)]
    fix: bool,
    /// Print --fix's change as a patch instead of the plan; nothing is written.
    #[arg(long)]
    diff: bool,
    /// --fix may write a file through a symlink that leads out of its tree, or with hard links.
    #[arg(long)]
    fix_follow_symlinks: bool,
    /// Largest input read, in bytes.
    #[arg(long, value_name = "BYTES", default_value_t = input::DEFAULT_MAX_INPUT_BYTES,
        value_parser = clap::value_parser!(u64).range(1..))]
    max_input_bytes: u64,
}

/// The objects to plan, each with the name of where it came from.
type Objects = Vec<(String, Value)>;

pub(super) fn plan(args: PlanArgs) -> i32 {
    match run(&args) {
        Ok((out, errors, fail)) => {
            if let Err(e) = crate::process::print_stdout(&out) {
                eprintln!("winlint: cannot write: {e}");
                return EXIT_USAGE;
            }
            if errors {
                EXIT_USAGE
            } else if fail {
                EXIT_FINDINGS
            } else {
                EXIT_OK
            }
        }
        Err(e) => {
            eprintln!("winlint: {e}");
            EXIT_USAGE
        }
    }
}

/// What every cluster of a run is planned with.
struct Options {
    fail_on: BTreeSet<Verdict>,
    to: Vec<crate::model::windows::Build>,
    as_of: String,
}

impl PlanArgs {
    /// The clusters to read: one per --context (in the one kubeconfig), or one per
    /// --kubeconfig (at its current context), each once, in the order given.
    fn clusters(&self) -> Result<Vec<ClusterArgs>, String> {
        if self.kubeconfig.len() > 1 && self.context.len() > 1 {
            return Err(
                "several --kubeconfig and several --context: give several of one \
                 (contexts of one kubeconfig, or each kubeconfig at its current context)"
                    .into(),
            );
        }
        let files: Vec<Option<PathBuf>> = match self.kubeconfig.as_slice() {
            [] => vec![None],
            k => k.iter().cloned().map(Some).collect(),
        };
        let contexts: Vec<Option<String>> = match self.context.as_slice() {
            [] => vec![None],
            c => c.iter().cloned().map(Some).collect(),
        };
        let mut out: Vec<ClusterArgs> = Vec::new();
        for kubeconfig in &files {
            for context in &contexts {
                let c = ClusterArgs {
                    kubeconfig: kubeconfig.clone(),
                    context: context.clone(),
                };
                if !out.contains(&c) {
                    out.push(c);
                }
            }
        }
        Ok(out)
    }
}

/// The report, whether it holds errors, whether `--fail-on` fails it.
fn run(args: &PlanArgs) -> Result<(String, bool, bool), String> {
    let opts = options(args)?;
    let clusters = args.clusters()?;
    let render_one = |plan: &Plan| match args.format {
        PlanFormat::Text => plan.text(),
        PlanFormat::Json => plan.json(),
        PlanFormat::Markdown => plan.markdown(),
        PlanFormat::Html => plan.html(),
    };
    if clusters.len() == 1 {
        let cluster = args.cluster.then(|| &clusters[0]);
        let (_, plan, diff) = plan_one(args, &opts, cluster)?;
        let fail = (plan.workloads.iter()).any(|w| opts.fail_on.contains(&w.verdict));
        let out = diff.unwrap_or_else(|| render_one(&plan));
        return Ok((out, !plan.errors.is_empty(), fail));
    }
    // A fleet: each cluster against its own facts; one that cannot be read is reported, the
    // others planned.
    let mut plans = Vec::new();
    for c in &clusters {
        let (mut cluster, plan, error) = match plan_one(args, &opts, Some(c)) {
            Ok((name, plan, _)) => (name, Some(plan), None),
            Err(e) => (asked_name(c), None, Some(e)),
        };
        // Several kubeconfigs may each call their cluster by the same context name.
        if let (true, Some(path)) = (args.kubeconfig.len() > 1, &c.kubeconfig) {
            cluster = format!("{cluster} ({})", path.display());
        }
        plans.push(ClusterPlan {
            cluster,
            plan,
            error,
        });
    }
    let fleet = Fleet::new(plans);
    let out = match args.format {
        PlanFormat::Text => fleet.text(),
        PlanFormat::Json => fleet.json(),
        PlanFormat::Markdown => fleet.markdown(),
        PlanFormat::Html => fleet.html(),
    };
    let fail = fleet.any(|v| opts.fail_on.contains(&v));
    Ok((out, fleet.has_errors(), fail))
}

/// A cluster that could not be read, named as it was asked for.
fn asked_name(c: &ClusterArgs) -> String {
    match (&c.context, &c.kubeconfig) {
        (Some(context), _) => context.clone(),
        (None, Some(_)) => "its current context".into(),
        (None, None) => "the current context".into(),
    }
}

fn options(args: &PlanArgs) -> Result<Options, String> {
    let fail_on = (args.fail_on.iter())
        .filter(|s| !s.is_empty())
        .map(|s| {
            Verdict::parse(s.trim()).ok_or_else(|| {
                format!("--fail-on {s}: not a verdict (pin-breaks, rebuild, needs-hyperv, api-changes, retag, unknown, runs-as-is)")
            })
        })
        .collect::<Result<BTreeSet<_>, _>>()?;
    let to = (args.to.iter())
        .flat_map(|s| s.split(','))
        .map(|s| {
            crate::model::windows::parse_build(s)
                .ok_or_else(|| format!("--to {s}: not a Windows build (ltsc2025, 10.0.26100)"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let as_of = match &args.as_of {
        Some(d) if is_date(d) => d.clone(),
        Some(d) => return Err(format!("--as-of {d}: not a date (YYYY-MM-DD)")),
        None => today_utc(),
    };
    if args.paths.is_empty() && !args.cluster && args.clusters()?.len() == 1 {
        return Err("no input; give files, directories or - for stdin, or --cluster".into());
    }
    if (args.fix || args.diff) && args.paths.is_empty() {
        return Err(
            "--fix and --diff rewrite files: give the files, directories or - to fix".into(),
        );
    }
    // Files are fixed once, against one target: a fleet plans the same files against several.
    if (args.fix || args.diff) && args.clusters()?.len() > 1 {
        return Err("--fix and --diff plan against one cluster: give one --context".into());
    }
    Ok(Options { fail_on, to, as_of })
}

/// One plan: against `cluster`'s facts (and its running workloads without paths), else the
/// configured target; the cluster's name.
fn plan_one(
    args: &PlanArgs,
    opts: &Options,
    cluster: Option<&ClusterArgs>,
) -> Result<(String, Plan, Option<String>), String> {
    let Options { to, as_of, .. } = opts;
    let mut cfg = args.target.to_config().map_err(|e| e.to_string())?;
    let mut errors = Vec::new();
    let mut name = String::new();
    let (mut cx, from_cluster, objects) = if let Some(c) = cluster {
        let read = cluster::plan_read(
            c,
            &cfg,
            args.paths.is_empty(),
            args.namespace.clone(),
            args.all_namespaces,
        )?;
        cfg = read.target.config;
        errors.extend(read.skipped);
        name = read.name;
        (read.target.context, true, read.objects)
    } else {
        (Context::default(), false, Vec::new())
    };
    let (mut objects, inputs) = if args.paths.is_empty() {
        (objects, Vec::new())
    } else {
        read_inputs(args, &cfg.target.kubernetes.to_string(), &mut errors)
    };
    // Context objects of the inputs (RuntimeClasses, namespaces) add to the cluster's.
    for (_, v) in &objects {
        for (_, o) in crate::model::workload::objects(v) {
            cx.add(o);
        }
    }
    let now = cfg.target.clone();
    let mut after = now.clone();
    if let Some(k) = &args.kubernetes {
        after.kubernetes = KubeVersion::parse(k)
            .ok_or_else(|| format!("--kubernetes {k}: not a version (1.35)"))?;
    }
    // --registry: every image, and the tags it could move to, looked up before planning.
    if args.registry.registry {
        let mut images = BTreeSet::new();
        for (_, v) in &objects {
            for (_, o) in objects_of(v) {
                crate::registry::source::image_references(o, &mut images);
            }
        }
        let candidates: Vec<String> = images
            .iter()
            .flat_map(|r| {
                let info = crate::model::image::analyze(r);
                to.iter()
                    .flat_map(|&b| crate::plan::verdict::candidates(&info, b))
                    .collect::<Vec<_>>()
            })
            .collect();
        images.extend(candidates);
        registry::attach(&args.registry, &images, &mut cx)?;
    }
    let mv = Move::new(now, after, to.clone(), as_of.clone());
    let diff = (args.fix || args.diff).then(|| {
        let o = super::plan_fix::Options {
            diff: args.diff,
            follow_symlinks: args.fix_follow_symlinks,
            cap: args.max_input_bytes,
        };
        let fixed = super::plan_fix::fix(&inputs, &mv, &cx, &o);
        for n in &fixed.notes {
            eprintln!("{n}");
        }
        errors.extend(fixed.errors);
        // The plan judges the files as written.
        for (name, values) in fixed.fixed {
            let mut values = values.into_iter();
            for (_, v) in objects.iter_mut().filter(|(f, _)| *f == name) {
                if let Some(new) = values.next() {
                    *v = new;
                }
            }
        }
        fixed.diff
    });
    let mut workloads = Vec::new();
    let mut not_windows = 0;
    for (file, v) in &objects {
        for (_, o) in objects_of(v) {
            let kind = o.get("kind").and_then(Value::as_str).unwrap_or("");
            if !crate::model::workload::is_pod_kind(kind) {
                continue;
            }
            match plan_object(o, file, &mv, &cx) {
                Some(w) => workloads.push(w),
                None => not_windows += 1,
            }
        }
    }
    let mut lifecycle = Vec::new();
    if let Some(p) = mv.platform {
        for &b in &mv.now.windows_builds {
            lifecycle.extend(lifecycle::notices(
                p,
                b,
                mv.now.kubernetes,
                as_of,
                "current",
            ));
        }
        for &b in to {
            lifecycle.extend(lifecycle::notices(
                p,
                b,
                mv.after.kubernetes,
                as_of,
                "planned",
            ));
        }
    }
    let named = |b: &crate::model::windows::Build| format!("{b} ({})", b.token());
    let mut plan = Plan {
        from: mv.now.windows_builds.iter().map(named).collect(),
        to: to.iter().map(named).collect(),
        platform: mv.platform.map(|p| p.name().to_string()),
        kubernetes_from: mv.now.kubernetes.to_string(),
        kubernetes_to: mv.after.kubernetes.to_string(),
        isolation: match mv.after.isolation {
            crate::model::windows::Isolation::Process => "process".into(),
            crate::model::windows::Isolation::Hyperv => "hyperv".into(),
        },
        as_of: as_of.clone(),
        facts: if from_cluster {
            "cluster"
        } else {
            "configured"
        }
        .into(),
        registry: args.registry.registry,
        lifecycle,
        counts: Default::default(),
        not_windows,
        workloads,
        errors: errors
            .iter()
            .map(|e: &crate::report::InputError| match e.line {
                0 => format!("{}: {}", e.file, e.message),
                l => format!("{}:{l}: {}", e.file, e.message),
            })
            .collect(),
    };
    plan.finish();
    Ok((name, plan, diff.filter(|_| args.diff)))
}

fn objects_of(v: &Value) -> Vec<(String, &Value)> {
    objects(v)
}

fn is_date(d: &str) -> bool {
    let b = d.as_bytes();
    b.len() == 10
        && b[4] == b'-'
        && b[7] == b'-'
        && b.iter()
            .enumerate()
            .all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit())
}

/// The inputs' objects, read as the linter reads them (one code path: [`collect_inputs`]).
fn read_inputs(
    args: &PlanArgs,
    kube: &str,
    errors: &mut Vec<crate::report::InputError>,
) -> (Objects, Vec<super::collect::Input>) {
    let mut render = args.render.clone();
    render.output_cap = args.max_input_bytes;
    let inputs = collect_inputs(&args.paths, &render, kube, args.max_input_bytes, errors);
    let mut out = Vec::new();
    for input in &inputs {
        let bytes = match input.read(args.max_input_bytes) {
            Ok(b) => b,
            Err(e) => {
                errors.push(crate::report::InputError {
                    file: input.name.clone(),
                    line: 0,
                    column: 0,
                    message: e.to_string(),
                });
                continue;
            }
        };
        match source::load_bytes_values(&bytes) {
            Ok(values) => out.extend(values.into_iter().map(|v| (input.name.clone(), v))),
            Err(e) => errors.push(super::lint::load_error(&input.name, e)),
        }
    }
    (out, inputs)
}
