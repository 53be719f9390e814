//! `winlint lint`: the run. Pass 1 reads the context objects (RuntimeClasses, namespaces, …) of
//! every input; pass 2 reads, parses, fixes and lints each input on all cores ([`parallel`]),
//! and the findings stream to the [`Sink`] in report order.

use std::collections::BTreeSet;
use std::io::Write;

use serde_json::Value;

use crate::config::{Config, rule_id};
use crate::engine::fix::{NotFixed, ObjectLint, fix_allowed, prefix_op};
use crate::engine::{self};
use crate::model::Context;
use crate::model::Operation;
use crate::model::workload::{self, objects};
use crate::report::{self, FixState, InputError, Located, Summary};
use crate::source::{self, Document};

use super::args::{Format, LintArgs};
use super::collect::{Input, collect_inputs};
use super::fix::{diff_name, fix_loaded, not_fixed_reason, with_bom};
use super::output::{Sink, exit_code, write_styled};
use super::prescan::{context_values, image_references, may_hold_context};
use super::{cluster, parallel, registry, write};
use crate::process::EXIT_USAGE;

pub(super) fn object_label(v: &Value) -> String {
    let kind = v.get("kind").and_then(Value::as_str).unwrap_or("?");
    let name = v
        .pointer("/metadata/name")
        .or_else(|| v.pointer("/metadata/generateName"))
        .and_then(Value::as_str)
        .unwrap_or("");
    format!("{kind}/{name}")
}

pub(super) fn load_error(name: &str, e: source::LoadError) -> InputError {
    InputError {
        file: name.to_string(),
        line: e.line,
        column: e.column,
        message: e.message,
    }
}

/// Whether `--fix` has run on the documents linted, and the fixes it said it could not make.
#[derive(Clone, Copy)]
pub(super) enum Fixed<'a> {
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
pub(super) fn lint_docs(
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
            // An exemption the policy refused: said, or the user wonders why it had no effect.
            if let Some(r) = &rep.exemption_refused {
                let (line, _) = doc.map.locate(&prefix);
                let _ = writeln!(stderr, "{name}:{line}: note: {}: {r}", object_label(obj));
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
pub(super) struct Pass2 {
    summary: Summary,
    errors: Vec<(usize, InputError)>,
    ignore_reasons: Vec<(usize, String)>,
    diffs: Vec<(usize, String)>,
}

/// Pass 2's work on one input, made on any thread and reported on the main one, in order.
#[derive(Default)]
pub(super) struct Linted {
    pub(super) findings: Vec<Located>,
    /// The counts of `summary` (its other fields are the run's).
    summary: Summary,
    pub(super) errors: Vec<InputError>,
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
pub(super) fn lint_input(input: &Input, args: &LintArgs, cfg: &Config, cx: &Context) -> Linted {
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
    // GMSACredentialSpecs are context for the pods of their own input only (see
    // Context::with_gmsa_specs_of).
    let own = cx.with_gmsa_specs_of(docs.iter().flat_map(|d| objects(&d.value)).map(|(_, o)| o));
    let cx = own.as_ref().unwrap_or(cx);
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

pub(super) fn lint(args: LintArgs) -> i32 {
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
    if let Err(e) = args.view.check(matches!(
        args.output,
        Format::Text | Format::Json | Format::Html
    )) {
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

    // Pass 1: objects of the CONTEXT_KINDS anywhere in the input are context for the pods. Only the documents that can hold one are parsed here, without
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
