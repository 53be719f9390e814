//! The command line and a live cluster: `winlint --cluster FILES` (the target's facts read once
//! from the cluster of the kubeconfig) and `winlint audit` (the workloads that run in the
//! cluster now, linted with those facts, each Pod reported once, under its top owner).
//!
//! Both read with [`crate::cluster`] (paged lists, no call per object) on a one-thread runtime,
//! and report through [`crate::report`] like the linter: an audited object's place is
//! `namespace/Kind/name` and the JSON pointer of the finding
//! ([`Located::cluster_namespace`]).

use std::collections::BTreeSet;
use std::future::Future;

use clap::{Args, ValueEnum};

use super::args::{ColorChoice, FailOn, Format, TargetArgs};
use super::output::{Sink, exit_code};
use crate::cluster::judge::{AsPods, Judge};
use crate::cluster::{self, ClusterArgs, ClusterError, ClusterFacts, ErrorKind, Origin, Scope};
use crate::config::Config;
use crate::model::Context;
use crate::model::workload;
use crate::process::EXIT_USAGE;
use crate::report::policy_report::{self, PolicyReports};
use crate::report::{self, AuditSummary, ClusterSummary, FixState, InputError, Located, Summary};
use serde_json::Value;

/// The rights the facts need (a 403 names them).
const FACTS_RBAC: &str = "the cluster's facts need list on nodes, namespaces and \
     runtimeclasses.node.k8s.io";
/// The rights `winlint audit` needs besides the facts'.
const AUDIT_RBAC: &str = "winlint audit needs list on pods, replicationcontrollers, \
     deployments, replicasets, statefulsets, daemonsets, jobs and cronjobs";

/// The rights `--policy-report=apply` needs besides the audit's.
const POLICY_REPORT_RBAC: &str = "winlint audit --policy-report=apply needs get, list, create, \
     patch and delete on policyreports.wgpolicyk8s.io (and clusterpolicyreports with -A)";

/// Output formats of `winlint audit`: those of the linter but GitLab's Code Quality, whose
/// issues must name a file and a line.
#[derive(Copy, Clone, Debug, ValueEnum, PartialEq, Eq)]
pub enum AuditFormat {
    Text,
    Json,
    Sarif,
    /// GitHub Actions workflow commands (annotations on the run, not on files).
    Github,
    /// One self-contained HTML page: summary, per namespace, per rule, findings per object.
    Html,
}

/// What `--policy-report` does with the reports.
#[derive(Copy, Clone, Debug, ValueEnum, PartialEq, Eq)]
pub enum PolicyReportMode {
    /// Write them to stdout as YAML (for `kubectl apply -f -`) instead of the report.
    Print,
    /// Create or update them in the cluster (server-side apply) and delete winlint's stale
    /// ones; the report is printed as usual.
    Apply,
}

/// `winlint audit [-n NS | -A]`
#[derive(Args, Debug)]
pub struct AuditArgs {
    /// Namespace to audit (default: the namespace of the kubeconfig context, as kubectl).
    #[arg(short, long, value_name = "NS", conflicts_with = "all_namespaces")]
    namespace: Option<String>,
    /// Audit every namespace.
    #[arg(short = 'A', long)]
    all_namespaces: bool,
    #[command(flatten)]
    cluster: ClusterArgs,
    /// Flags and --config override the cluster's facts.
    #[command(flatten)]
    target: TargetArgs,
    /// Output format.
    #[arg(short, long, value_enum, default_value_t = AuditFormat::Text)]
    output: AuditFormat,
    /// Lowest severity that makes the exit code 1.
    #[arg(long, value_enum, default_value_t = FailOn::Error)]
    fail_on: FailOn,
    /// Colour: auto (terminal and NO_COLOR unset), always, never.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto)]
    color: ColorChoice,
    #[command(flatten)]
    view: report::ViewArgs,
    #[command(flatten)]
    registry: super::registry::RegistryArgs,
    /// Judge workloads by the pods winlint's mutating webhook gives them, as `/validate` does,
    /// even when the webhook is not found in the cluster (by default: when it is).
    #[arg(long)]
    assume_webhook: bool,
    /// Write the audit as wgpolicyk8s.io/v1alpha2 PolicyReports (one per namespace; a
    /// ClusterPolicyReport for what -A could not list), as Policy Reporter and the Kyverno UI
    /// read them: `print` (alone: --policy-report) or `apply`.
    #[arg(long, value_enum, value_name = "HOW", num_args = 0..=1, require_equals = true,
          default_missing_value = "print")]
    policy_report: Option<PolicyReportMode>,
}

/// The configuration and context with a cluster's facts, and what the report says of them.
pub struct ClusterTarget {
    pub config: Config,
    pub context: Context,
    pub summary: ClusterSummary,
}

impl ClusterTarget {
    fn new(cfg: &Config, facts: &ClusterFacts, origin: &Origin) -> ClusterTarget {
        let config = cluster::effective::apply(cfg, facts);
        let summary = ClusterSummary {
            context: origin.context.clone(),
            server: origin.server.clone(),
            facts: cluster::effective::describe(&config.target, facts),
        };
        ClusterTarget {
            context: cluster::effective::context(facts),
            config,
            summary,
        }
    }
}

/// Run `f` to completion on a one-thread runtime (the CLI waits for each answer anyway).
fn block_on<F: Future>(f: F) -> Result<F::Output, String> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map(|rt| rt.block_on(f))
        .map_err(|e| format!("cannot start the runtime that talks to the cluster: {e}"))
}

/// One line for an error talking to the cluster; a 403 names the rights `rbac`.
fn one_line(e: &ClusterError, rbac: &str) -> String {
    match e.kind {
        ErrorKind::Forbidden => format!("{} ({rbac})", e.without_hint()),
        _ => e.to_string(),
    }
}

/// The cluster of `source` and its facts, read once (`--cluster`, `audit`, `plan --cluster`).
/// `Err` is the line to print (unreachable, refused credentials, RBAC, no kubeconfig).
async fn connect_and_read(
    source: &cluster::ClientSource,
) -> Result<(kube::Client, Origin, ClusterFacts), String> {
    let (client, origin) = cluster::connect(source)
        .await
        .map_err(|e| one_line(&e, FACTS_RBAC))?;
    let facts = cluster::read_once(&client, cluster::PAGE_SIZE)
        .await
        .map_err(|e| one_line(&e, FACTS_RBAC))?;
    Ok((client, origin, facts))
}

/// `winlint --cluster`: `cfg` with the facts of the cluster of `args`, read once. `Err` is the
/// line to print (unreachable, refused credentials, RBAC, no kubeconfig).
pub fn target(args: &ClusterArgs, cfg: &Config) -> Result<ClusterTarget, String> {
    block_on(async {
        let (client, origin, facts) = connect_and_read(&args.client_source()).await?;
        let mut target = ClusterTarget::new(cfg, &facts, &origin);
        // A file's namespace is not known to be the one it lands in: the webhook's
        // namespaceSelector is not applied here.
        if let Some(AsPods { why, .. }) = webhook_judging(&client, false).await {
            eprintln!("winlint: judging workloads by the pods they create: {why}");
            target.config.policy.judge_as_pods = true;
        }
        Ok(target)
    })?
}

/// What the audit read from the cluster.
struct Read {
    target: ClusterTarget,
    scope: Scope,
    inventory: cluster::Inventory,
    /// Why and where workloads are judged by their pods (winlint's mutating webhook found, or
    /// assumed), or `None`: as written.
    as_pods: Option<AsPods>,
}

/// Whether to judge workloads as the pods winlint's mutating webhook makes of them
/// ([`cluster::judge::webhook_judging`]). A cluster that does not let us look is judged as
/// written, and says so.
async fn webhook_judging(client: &kube::Client, assume: bool) -> Option<AsPods> {
    cluster::judge::webhook_judging(client, assume)
        .await
        .unwrap_or_else(|why| {
            eprintln!(
                "winlint: judging workloads as written: {why}, so whether winlint's mutating webhook is registered is unknown (--assume-webhook judges them by their pods)"
            );
            None
        })
}

fn read(args: &AuditArgs, cfg: &Config) -> Result<Read, String> {
    block_on(async {
        let (client, origin, facts) = connect_and_read(&args.cluster.client_source()).await?;
        let scope = if args.all_namespaces {
            Scope::AllNamespaces
        } else {
            Scope::Namespace(
                args.namespace
                    .clone()
                    .unwrap_or_else(|| origin.namespace.clone()),
            )
        };
        let inventory = cluster::list_workloads(&client, &scope, cluster::PAGE_SIZE)
            .await
            .map_err(|e| one_line(&e, AUDIT_RBAC))?;
        Ok(Read {
            target: ClusterTarget::new(cfg, &facts, &origin),
            scope,
            inventory,
            as_pods: webhook_judging(&client, args.assume_webhook).await,
        })
    })?
}

/// What `winlint plan --cluster` reads: the target with the cluster's facts and, when
/// `workloads`, the running workloads (top owners, as `audit` lists them) of the namespace
/// (`None`: the kubeconfig context's) or of all; the kinds it could not list, as errors.
pub struct PlanRead {
    /// The cluster's name in a fleet report: its kubeconfig context, else its server.
    pub name: String,
    pub target: ClusterTarget,
    pub objects: Vec<(String, Value)>,
    pub skipped: Vec<InputError>,
}

pub(super) fn plan_read(
    args: &ClusterArgs,
    cfg: &Config,
    workloads: bool,
    namespace: Option<String>,
    all: bool,
) -> Result<PlanRead, String> {
    block_on(async {
        let (client, origin, facts) = connect_and_read(&args.client_source()).await?;
        let name = (origin.context.clone()).unwrap_or_else(|| origin.server.clone());
        let (mut objects, mut not_listed) = (Vec::new(), Vec::new());
        if workloads {
            let scope = if all {
                Scope::AllNamespaces
            } else {
                Scope::Namespace(namespace.unwrap_or_else(|| origin.namespace.clone()))
            };
            let inventory = cluster::list_workloads(&client, &scope, cluster::PAGE_SIZE)
                .await
                .map_err(|e| one_line(&e, AUDIT_RBAC))?;
            not_listed = inventory.skipped.iter().map(|(_, e)| skipped(e)).collect();
            let source = format!("cluster {name}");
            objects = (inventory.objects.into_iter())
                .map(|o| (source.clone(), o.object))
                .collect();
        }
        Ok(PlanRead {
            name,
            target: ClusterTarget::new(cfg, &facts, &origin),
            objects,
            skipped: not_listed,
        })
    })?
}

/// A kind the audit could not list, as an error of the report: the objects of that kind are
/// missing from it (their Pods are reported as themselves or under a lower owner).
fn skipped(e: &ClusterError) -> InputError {
    let message = match e.kind {
        ErrorKind::Forbidden => format!("forbidden: {} ({AUDIT_RBAC})", e.message),
        ErrorKind::NotFound => format!("this API server does not serve it: {}", e.message),
        _ => e.message.clone(),
    };
    InputError {
        file: e
            .doing
            .strip_prefix("listing ")
            .unwrap_or(&e.doing)
            .to_string(),
        line: 0,
        column: 0,
        message,
    }
}

/// `winlint audit`: list, lint each top owner once, report; the exit code.
pub fn audit(args: AuditArgs) -> i32 {
    let text_or_json = matches!(
        args.output,
        AuditFormat::Text | AuditFormat::Json | AuditFormat::Html
    );
    if let Err(e) = args.view.check(text_or_json) {
        eprintln!("winlint: {e}");
        return EXIT_USAGE;
    }
    let cfg = match args.target.to_config() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("winlint: {e}");
            return EXIT_USAGE;
        }
    };
    let Read {
        mut target,
        scope,
        inventory,
        as_pods,
    } = match read(&args, &cfg) {
        Ok(r) => r,
        Err(line) => {
            eprintln!("winlint: {line}");
            return EXIT_USAGE;
        }
    };
    // --registry: the running workloads' images, looked up before linting.
    if args.registry.registry {
        let mut images = BTreeSet::new();
        for o in &inventory.objects {
            crate::registry::source::image_references(&o.object, &mut images);
        }
        if let Err(e) = super::registry::attach(&args.registry, &images, &mut target.context) {
            eprintln!("winlint: {e}");
            return EXIT_USAGE;
        }
    }
    let errors: Vec<InputError> = inventory.skipped.iter().map(|(_, e)| skipped(e)).collect();
    let mut sink = Sink::new(
        match args.output {
            AuditFormat::Text => Format::Text,
            AuditFormat::Json => Format::Json,
            AuditFormat::Sarif => Format::Sarif,
            AuditFormat::Github => Format::Github,
            AuditFormat::Html => Format::Html,
        },
        &args.view,
    );
    if let Some(a) = &as_pods {
        eprintln!(
            "winlint: judging workloads by the pods they create: {}",
            a.why
        );
    }
    // The namespaces the webhook skips (its namespaceSelector) are judged as written.
    let judge = Judge::new(&target.config, &target.context, as_pods);
    let mut summary = Summary::default();
    let mut audit = AuditSummary::default();
    let mut namespaces = BTreeSet::new();
    let mut counts = args.view.counts();
    let mut policy = args
        .policy_report
        .map(|_| PolicyReports::new(policy_report::now_seconds()));
    if let Some(p) = &mut policy {
        // What could not be listed is an `error` of the namespace audited, or of the cluster.
        let ns = match &scope {
            Scope::Namespace(ns) => Some(ns.as_str()),
            Scope::AllNamespaces => None,
        };
        for e in &errors {
            p.error(ns, &e.file, &e.message);
        }
    }
    for o in &inventory.objects {
        namespaces.insert(o.namespace.as_str());
        summary.objects += 1;
        audit.cluster_pods += if o.kind == "Pod" { 1 } else { o.pods.len() };
        summary.pods += workload::pod_sites(&o.object).len();
        // Pods the scheduler cannot place: the scheduler's word on the findings that explain it.
        let mut rep = judge.judge(&o.object, &o.namespace);
        Judge::with_pending(&mut rep.findings, &o.pending);
        if let Some(p) = &mut policy {
            p.object(
                &o.object,
                &rep.findings,
                &rep.exempted,
                rep.ignore_reason.as_deref(),
            );
        }
        summary.suppressed += rep.suppressed;
        let place = report::object_name(Some(&o.namespace), &format!("{}/{}", o.kind, o.name));
        if let Some(r) = rep.ignore_reason.filter(|_| rep.suppressed > 0) {
            summary.ignore_reasons.push(format!("{place}: {r}"));
        }
        if let Some(r) = &rep.exemption_refused {
            eprintln!("winlint: note: {place}: {r}");
        }
        let mut found: Vec<Located> = rep
            .findings
            .into_iter()
            .map(|f| Located {
                file: place.clone(),
                line: 0,
                column: 0,
                pointer: f.pointer.clone(),
                object: format!("{}/{}", o.kind, o.name),
                namespace: Some(o.namespace.clone()),
                finding: f,
                // Nothing edits the cluster.
                fix: FixState::None,
                not_fixed: None,
                rendered: None,
                cluster_namespace: Some(o.namespace.clone()),
            })
            .collect();
        found.sort_by(|a, b| (&a.pointer, a.finding.rule.id).cmp(&(&b.pointer, b.finding.rule.id)));
        for l in found {
            if counts.add(&l) {
                sink.push(l);
            }
        }
    }
    audit.namespaces = namespaces.len();
    summary.audit = Some(audit);
    summary.cluster = Some(target.summary);
    let reports = policy.map(PolicyReports::finish);
    let written = match (args.policy_report, reports) {
        (Some(PolicyReportMode::Print), Some(reports)) => {
            // stdout is the YAML stream alone: what could not be listed is in it as `error`
            // results, and said on stderr.
            for e in &errors {
                eprintln!("winlint: {}: {}", e.file, e.message);
            }
            drop(sink);
            write_stdout(&crate::source::emit::to_yaml(&reports))
        }
        (Some(PolicyReportMode::Apply), Some(reports)) => {
            match apply_reports(&args.cluster, &scope, reports) {
                Err(line) => {
                    eprintln!("winlint: {line}");
                    return EXIT_USAGE;
                }
                // Some reports not written: the others were, the report is printed, and the
                // exit code says it (as for what could not be listed).
                Ok(failed) if !failed.is_empty() => {
                    for f in &failed {
                        eprintln!("winlint: {f}");
                    }
                    let written = sink.finish(&counts, &errors, &summary, args.color);
                    exit_code(written, &errors, &counts, args.fail_on);
                    return EXIT_USAGE;
                }
                Ok(_) => sink.finish(&counts, &errors, &summary, args.color),
            }
        }
        _ => sink.finish(&counts, &errors, &summary, args.color),
    };
    exit_code(written, &errors, &counts, args.fail_on)
}

fn write_stdout(text: &str) -> std::io::Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()
}

/// `--policy-report=apply`: write `reports` into the cluster, delete winlint's stale ones, and
/// say so on stderr; what failed (one line each: the rest was written) is returned, and with
/// `-A` named in the ClusterPolicyReport. `Err`: nothing could be written (no connection, no
/// CRDs). A new client: the one that listed lived on the runtime that is gone.
fn apply_reports(
    args: &ClusterArgs,
    scope: &Scope,
    reports: Vec<serde_json::Value>,
) -> Result<Vec<String>, String> {
    block_on(async {
        let (client, _) = cluster::connect(&args.client_source())
            .await
            .map_err(|e| one_line(&e, POLICY_REPORT_RBAC))?;
        let now = policy_report::now_seconds();
        let done = policy_report::write(&client, scope, reports, now)
            .await
            .map_err(|e| one_line(&e, POLICY_REPORT_RBAC))?;
        let mut line = format!(
            "winlint: policy reports applied: {}",
            if done.written.is_empty() {
                "none".into()
            } else {
                done.written.join(", ")
            }
        );
        if !done.deleted.is_empty() {
            line.push_str(&format!(
                "; stale ones deleted: {}",
                done.deleted.join(", ")
            ));
        }
        eprintln!("{line}");
        Ok(done
            .failed
            .iter()
            .map(policy_report::failure_line)
            .collect())
    })?
}
