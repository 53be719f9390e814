//! Reports: `text` (people), `json` (machines), `sarif` (code-scanning UIs). The CI formats
//! (`github`, `codequality`) are in [`github`] and [`codequality`].

pub mod ci;
pub mod codequality;
pub mod github;

pub use codequality::CodeQualityReport;
pub use github::GithubReport;

use std::io::Write;

use anstyle::{AnsiColor, Style};
use serde::Serialize;
use serde_json::{Value, json};

use crate::model::{Finding, FixSafety, Severity};
use crate::rules;

/// A finding placed in a file.
#[derive(Debug, Clone)]
pub struct Located {
    pub file: String,
    pub line: usize,
    pub column: usize,
    /// JSON pointer into the document (`/items/0/spec/…` for List items).
    pub pointer: String,
    /// `Deployment/web`, for context.
    pub object: String,
    pub finding: Finding,
    pub fix: FixState,
    /// Why `--fix` did not make the fix ([`FixState::NotFixed`]).
    pub not_fixed: Option<String>,
    /// How the object was made when it is not written in `file` as it is: `helm template`,
    /// `helm template -f ci/windows-values.yaml`, `kubectl kustomize`. `file` is then the
    /// template (or the kustomization) and `line`/`column` are 0: the rendered lines are not the
    /// lines of the file, so the finding is placed by `object` and `pointer` only.
    pub rendered: Option<String>,
    /// Set when the object was read from a cluster (`winlint audit`), not from a file: its
    /// namespace. `file` is then the object's place, `namespace/Kind/name`, and `line` and
    /// `column` are 0: the finding is placed by `pointer` alone.
    pub cluster_namespace: Option<String>,
}

/// What `--fix` does with a finding's fix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FixState {
    /// No fix, or one the policy does not apply.
    None,
    /// The policy would apply its fix with `--fix`.
    Fixable,
    /// `--fix` ran and could not apply the fix (rendered output, a value shared through a YAML
    /// alias with another place): it has to be edited by hand; [`Located::not_fixed`] says why.
    NotFixed,
}

/// A file or document that could not be read or parsed.
#[derive(Debug, Clone)]
pub struct InputError {
    pub file: String,
    pub line: usize,
    pub column: usize,
    pub message: String,
}

/// Counters for the summary line.
#[derive(Debug, Clone, Default)]
pub struct Summary {
    pub files: usize,
    pub objects: usize,
    pub pods: usize,
    pub suppressed: usize,
    pub ignore_reasons: Vec<String>,
    /// The target's facts were read from this cluster (`--cluster`, `winlint audit`).
    pub cluster: Option<ClusterSummary>,
    /// `winlint audit`: the objects are the cluster's workloads, not files' (`files` is 0).
    pub audit: Option<AuditSummary>,
    /// The configuration file found (not named by `--config`): `./.winlint.yaml`, `../winlint.yaml`.
    pub config: Option<String>,
}

/// Which cluster the target's facts came from, and what they say.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ClusterSummary {
    /// The kubeconfig context; `None` in a pod (its ServiceAccount's cluster).
    pub context: Option<String>,
    pub server: String,
    /// The target's facts, for people: `Kubernetes 1.32`, `1 Windows node (ltsc2022)`, …
    pub facts: Vec<String>,
}

/// What `winlint audit` looked at besides the objects.
#[derive(Debug, Clone, Default, Serialize)]
pub struct AuditSummary {
    /// The namespaces holding the objects audited.
    pub namespaces: usize,
    /// The Pods in the cluster (any phase) the objects account for: their own, and standalone Pods.
    pub cluster_pods: usize,
}

pub struct Report<'a> {
    pub findings: &'a [Located],
    pub errors: &'a [InputError],
    pub summary: &'a Summary,
}

/// Totals over the findings, kept while they stream past.
#[derive(Debug, Clone, Copy, Default)]
pub struct Counts {
    pub errors: usize,
    pub warnings: usize,
    pub info: usize,
    pub fixable: usize,
    pub not_fixed: usize,
}

impl Counts {
    pub fn add(&mut self, l: &Located) {
        match l.finding.severity {
            Severity::Error => self.errors += 1,
            Severity::Warning => self.warnings += 1,
            Severity::Info => self.info += 1,
        }
        self.fixable += usize::from(l.fix == FixState::Fixable);
        self.not_fixed += usize::from(l.fix == FixState::NotFixed);
    }

    pub fn total(&self) -> usize {
        self.errors + self.warnings + self.info
    }
}

fn plural(n: usize, word: &str) -> String {
    if n == 1 || word == "info" {
        format!("{n} {word}")
    } else {
        format!("{n} {word}s")
    }
}

/// The text report, built as the findings arrive (in report order):
/// `file:line:col: severity WIN403 env-name-invalid: message`, grouped by file, after the input
/// errors, then a summary line. It holds formatted lines only, a few hundred bytes per finding;
/// the text is styled, see [`strip_styles`].
#[derive(Default)]
pub struct TextReport {
    lines: Vec<u8>,
    last_file: Option<String>,
}

impl TextReport {
    pub fn push(&mut self, l: &Located) {
        // Writing to a Vec cannot fail.
        let _ = self.write_finding(l);
    }

    fn write_finding(&mut self, l: &Located) -> std::io::Result<()> {
        let out = &mut self.lines;
        match &mut self.last_file {
            Some(f) if *f == l.file => {}
            Some(f) => {
                writeln!(out)?;
                f.clone_from(&l.file);
            }
            None => self.last_file = Some(l.file.clone()),
        }
        let bold = Style::new().bold();
        let sev = l.finding.severity;
        let color = match sev {
            Severity::Error => AnsiColor::Red,
            Severity::Warning => AnsiColor::Yellow,
            Severity::Info => AnsiColor::Cyan,
        };
        let st = Style::new().fg_color(Some(color.into())).bold();
        match (&l.rendered, &l.cluster_namespace) {
            // No line: the place is the template and the object in it.
            (Some(how), _) => write!(out, "{bold}{}: {} ({how}):{bold:#}", l.file, l.object)?,
            // An object in the cluster: `ns/Kind/name: /pointer:`.
            (None, Some(_)) => write!(out, "{bold}{}: {}:{bold:#}", l.file, l.pointer)?,
            (None, None) => write!(out, "{bold}{}:{}:{}:{bold:#}", l.file, l.line, l.column)?,
        }
        write!(
            out,
            " {st}{}{st:#} {bold}{}{bold:#} {}: {}",
            sev.as_str(),
            l.finding.rule.id,
            l.finding.rule.name,
            l.finding.message
        )?;
        let tag = match (l.fix, &l.not_fixed) {
            (FixState::None, _) => None,
            (FixState::Fixable, _) => Some("fixable".into()),
            (FixState::NotFixed, None) => Some("not fixed".into()),
            (FixState::NotFixed, Some(why)) => Some(format!("not fixed: {why}")),
        };
        if let Some(tag) = tag {
            let dim = Style::new().dimmed();
            write!(out, " {dim}[{tag}]{dim:#}")?;
        }
        writeln!(out)
    }

    /// The whole report: the input errors, the findings, the summary line; `counts` are those
    /// of the findings pushed.
    pub fn finish(self, counts: &Counts, errors: &[InputError], summary: &Summary) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.lines.len() + 256);
        // Writing to a Vec cannot fail.
        let _ = text_head(errors, &mut out);
        out.extend_from_slice(&self.lines);
        let _ = text_tail(counts, errors, summary, &mut out);
        out
    }
}

fn text_head(errors: &[InputError], out: &mut dyn Write) -> std::io::Result<()> {
    let bold = Style::new().bold();
    for e in errors {
        let red = Style::new().fg_color(Some(AnsiColor::Red.into())).bold();
        let place = match (e.line, e.column) {
            (0, _) => e.file.clone(),
            (l, 0) => format!("{}:{l}", e.file),
            (l, c) => format!("{}:{l}:{c}", e.file),
        };
        writeln!(
            out,
            "{bold}{place}:{bold:#} {red}error{red:#} {}",
            e.message
        )?;
    }
    Ok(())
}

fn text_tail(
    c: &Counts,
    errors: &[InputError],
    summary: &Summary,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let bold = Style::new().bold();
    if c.total() > 0 || !errors.is_empty() {
        writeln!(out)?;
    }
    writeln!(out, "{bold}{}{bold:#}", summary_line(c, errors, summary))
}

/// The summary line of the text report (also the last line of `-o github`).
pub fn summary_line(c: &Counts, errors: &[InputError], summary: &Summary) -> String {
    let counts = format!(
        "{}, {}, {}",
        plural(c.errors, "error"),
        plural(c.warnings, "warning"),
        plural(c.info, "info"),
    );
    let mut line = match &summary.audit {
        None => format!(
            "{counts} in {} ({}, {} checked)",
            plural(summary.files, "file"),
            plural(summary.objects, "object"),
            plural(summary.pods, "pod template")
        ),
        Some(a) => format!(
            "{counts} in {} of {} ({} in the cluster, {} checked)",
            plural(summary.objects, "object"),
            plural(a.namespaces, "namespace"),
            plural(a.cluster_pods, "pod"),
            plural(summary.pods, "pod template")
        ),
    };
    if !errors.is_empty() {
        line.push_str(&match summary.audit {
            None => format!("; {} could not be read", plural(errors.len(), "input")),
            Some(_) => format!("; {} could not be listed", plural(errors.len(), "kind")),
        });
    }
    if c.fixable > 0 {
        line.push_str(&format!("; {} fixable with --fix", c.fixable));
    }
    if c.not_fixed > 0 {
        line.push_str(&format!(
            "; {} not fixed by --fix (why is on each): fix by hand",
            c.not_fixed
        ));
    }
    if summary.suppressed > 0 {
        line.push_str(&format!(
            "; {} suppressed by winlint.io/ignore",
            summary.suppressed
        ));
        if !summary.ignore_reasons.is_empty() {
            line.push_str(&format!(" ({})", summary.ignore_reasons.join("; ")));
        }
    }
    if let Some(c) = &summary.config {
        line.push_str(&format!("; configuration {c} (found)"));
    }
    if let Some(cl) = &summary.cluster {
        let context = match &cl.context {
            Some(c) => format!("context {c} at "),
            None => String::new(),
        };
        line.push_str(&format!(
            "; target from the cluster ({context}{}): {}",
            cl.server,
            cl.facts.join(", ")
        ));
    }
    line
}

/// `styled` without its SGR sequences (`ESC [ digits/; m`, what the reports write), when that is
/// all that stripping ANSI escapes would remove: every other byte is printable ASCII or a
/// newline. `None` otherwise: then the text must go through anstream's stripper, which also
/// drops control characters and escapes that come from the input (file names, messages).
pub fn strip_styles(styled: &[u8]) -> Option<Vec<u8>> {
    // No early exit: the check vectorises.
    let ascii = styled
        .iter()
        .fold(true, |ok, &b| ok & matches!(b, b' '..=b'~' | b'\n' | 0x1b));
    if !ascii {
        return None;
    }
    let text = std::str::from_utf8(styled).ok()?;
    let mut out = Vec::with_capacity(styled.len());
    let mut pieces = text.split('\x1b');
    out.extend_from_slice(pieces.next()?.as_bytes());
    for piece in pieces {
        let rest = piece.strip_prefix('[')?;
        let params = rest.find(|c: char| !(c.is_ascii_digit() || c == ';'))?;
        out.extend_from_slice(rest[params..].strip_prefix('m')?.as_bytes());
    }
    Some(out)
}

/// One finding of the JSON report, in the contract's key order.
#[derive(Serialize)]
struct LocatedJson<'a> {
    rule: &'static str,
    name: &'static str,
    severity: Severity,
    /// The three are absent for an object in the cluster, which has `namespace` instead.
    #[serde(skip_serializing_if = "Option::is_none")]
    file: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    line: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    column: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    namespace: Option<&'a str>,
    pointer: &'a str,
    object: &'a str,
    /// How the object was made (`helm template`, `kubectl kustomize`); absent for files.
    #[serde(skip_serializing_if = "Option::is_none")]
    rendered: Option<&'a str>,
    message: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    fix: Option<FixJson<'a>>,
}

#[derive(Serialize)]
struct FixJson<'a> {
    safety: FixSafety,
    description: &'a str,
    applied_by_fix: bool,
    /// `--fix` ran and could not apply it.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    not_fixed: bool,
    /// Why, when `--fix` said.
    #[serde(skip_serializing_if = "Option::is_none")]
    not_fixed_reason: Option<&'a str>,
    patch: &'a [json_patch::PatchOperation],
}

impl<'a> LocatedJson<'a> {
    fn new(l: &'a Located) -> Self {
        let in_file = l.cluster_namespace.is_none();
        LocatedJson {
            rule: l.finding.rule.id,
            name: l.finding.rule.name,
            severity: l.finding.severity,
            file: in_file.then_some(l.file.as_str()),
            line: in_file.then_some(l.line),
            column: in_file.then_some(l.column),
            namespace: l.cluster_namespace.as_deref(),
            pointer: &l.pointer,
            object: &l.object,
            rendered: l.rendered.as_deref(),
            message: &l.finding.message,
            fix: l.finding.fix.as_ref().map(|fix| FixJson {
                safety: fix.safety,
                description: &fix.description,
                applied_by_fix: l.fix == FixState::Fixable,
                not_fixed: l.fix == FixState::NotFixed,
                not_fixed_reason: l
                    .not_fixed
                    .as_deref()
                    .filter(|_| l.fix == FixState::NotFixed),
                patch: &fix.ops,
            }),
        }
    }
}

/// `serde_json`'s `PrettyFormatter` (two-space indent, the same bytes) starting `level` levels
/// down, so that an item is written straight into its place in the report.
struct Pretty {
    level: usize,
    has_value: bool,
}

impl Pretty {
    fn at(level: usize) -> Self {
        Pretty {
            level,
            has_value: false,
        }
    }

    fn newline<W: ?Sized + Write>(&self, w: &mut W, first: bool) -> std::io::Result<()> {
        const SPACES: &[u8] = &[b' '; 64];
        w.write_all(if first { b"\n" } else { b",\n" })?;
        let mut n = 2 * self.level;
        while n > 0 {
            let k = n.min(SPACES.len());
            w.write_all(&SPACES[..k])?;
            n -= k;
        }
        Ok(())
    }

    fn begin<W: ?Sized + Write>(&mut self, w: &mut W, open: &[u8]) -> std::io::Result<()> {
        self.level += 1;
        self.has_value = false;
        w.write_all(open)
    }

    fn end<W: ?Sized + Write>(&mut self, w: &mut W, close: &[u8]) -> std::io::Result<()> {
        self.level -= 1;
        if self.has_value {
            // The closing bracket on a line of its own: a newline without a comma.
            self.newline(w, true)?;
        }
        w.write_all(close)
    }
}

impl serde_json::ser::Formatter for Pretty {
    fn begin_array<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.begin(w, b"[")
    }
    fn end_array<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.end(w, b"]")
    }
    fn begin_array_value<W: ?Sized + Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.newline(w, first)
    }
    fn end_array_value<W: ?Sized + Write>(&mut self, _w: &mut W) -> std::io::Result<()> {
        self.has_value = true;
        Ok(())
    }
    fn begin_object<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.begin(w, b"{")
    }
    fn end_object<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.end(w, b"}")
    }
    fn begin_object_key<W: ?Sized + Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.newline(w, first)
    }
    fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        w.write_all(b": ")
    }
    fn end_object_value<W: ?Sized + Write>(&mut self, _w: &mut W) -> std::io::Result<()> {
        self.has_value = true;
        Ok(())
    }
}

/// The JSON contract, `{"findings": […], "errors": […], "summary": {…}}` pretty-printed, written
/// as the findings arrive (in report order): memory does not grow with their number. The bytes
/// are those of `serde_json::to_string_pretty` of the whole report and a newline.
pub struct JsonReport<W: Write> {
    out: W,
    items: usize,
    /// The first write error; nothing more is written after it.
    failed: Option<std::io::Error>,
}

impl<W: Write> JsonReport<W> {
    pub fn new(out: W) -> Self {
        JsonReport {
            out,
            items: 0,
            failed: None,
        }
    }

    pub fn push(&mut self, l: &Located) {
        let first = self.items == 0;
        self.items += 1;
        if self.failed.is_none()
            && let Err(e) = self.write_finding(l, first)
        {
            self.failed = Some(e);
        }
    }

    fn write_finding(&mut self, l: &Located, first: bool) -> std::io::Result<()> {
        self.out.write_all(if first {
            b"{\n  \"findings\": [\n    "
        } else {
            b",\n    "
        })?;
        // An item of the array sits two levels down.
        let mut ser = serde_json::Serializer::with_formatter(&mut self.out, Pretty::at(2));
        LocatedJson::new(l).serialize(&mut ser)?;
        Ok(())
    }

    /// Close the findings array and write the errors and the summary; `c` are the counts of the
    /// findings pushed.
    pub fn finish(
        mut self,
        c: &Counts,
        errors: &[InputError],
        summary: &Summary,
    ) -> std::io::Result<()> {
        if let Some(e) = self.failed.take() {
            return Err(e);
        }
        self.out.write_all(if self.items == 0 {
            b"{\n  \"findings\": [],\n"
        } else {
            b"\n  ],\n"
        })?;
        let mut rest = json!({
            "errors": errors.iter().map(|e| json!({"file": e.file, "line": e.line, "column": e.column, "message": e.message})).collect::<Vec<_>>(),
            "summary": {
                "errors": c.errors,
                "warnings": c.warnings,
                "info": c.info,
                "fixable": c.fixable,
                "not_fixed": c.not_fixed,
                "files": summary.files,
                "objects": summary.objects,
                "pods": summary.pods,
                "suppressed": summary.suppressed,
                "ignore_reasons": summary.ignore_reasons,
                "input_errors": errors.len(),
            }
        });
        // Only when set: the reports of files stay as they were.
        if let Some(a) = &summary.audit {
            rest["summary"]["namespaces"] = json!(a.namespaces);
            rest["summary"]["cluster_pods"] = json!(a.cluster_pods);
        }
        if let Some(cl) = &summary.cluster {
            rest["summary"]["cluster"] = json!(cl);
        }
        if let Some(c) = &summary.config {
            rest["summary"]["config"] = json!(c);
        }
        let rest = serde_json::to_string_pretty(&rest).unwrap_or_default();
        // `rest` is `{\n  "errors": …}`: its entries follow the findings' at the same level.
        self.out
            .write_all(rest.strip_prefix("{\n").unwrap_or(&rest).as_bytes())?;
        self.out.write_all(b"\n")?;
        self.out.flush()
    }
}

fn sarif_level(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "note",
    }
}

/// SARIF 2.1.0 with every rule's help text and real regions, in the subset GitHub code
/// scanning reads (docs.github.com, "SARIF support for code scanning"): every rule has
/// `shortDescription`, `fullDescription` and `help` (text and markdown) and the recommended
/// `tags`, `precision` and `problem.severity`; relative paths are URI references against
/// `%SRCROOT%`, the directory winlint ran in (`originalUriBaseIds`, and
/// `invocations[0].workingDirectory`, which code scanning uses to make absolute URIs relative);
/// columns count Unicode code points. Every result carries `fingerprints["winlint/v1"]`, its
/// identity (file, rule, object, JSON pointer: see [`ci::Fingerprints`]), which
/// does not change when lines move. A result in rendered output has no region (its lines are
/// not the template's) and also carries that identity as `partialFingerprints`'
/// `primaryLocationLineHash`, the only key code scanning uses, since the upload action can only
/// compute one from a line; for results with a line the action computes it from the line's text.
/// No `automationDetails`: the category belongs to the upload (`category` of
/// `github/codeql-action/upload-sarif`), so that two winlint runs can be told apart.
pub fn sarif_value(r: &Report) -> Value {
    let all = rules::all();
    let rule_objs: Vec<Value> = all
        .iter()
        .map(|rule| {
            let m = rule.meta;
            json!({
                "id": m.id,
                "name": m.name,
                "shortDescription": {"text": m.summary},
                "fullDescription": {"text": m.summary},
                "help": {"text": m.docs, "markdown": m.docs},
                "defaultConfiguration": {"level": sarif_level(m.severity)},
                "properties": {
                    "tags": ["kubernetes", "windows"],
                    "precision": "very-high",
                    "problem.severity": match m.severity {
                        Severity::Error => "error",
                        Severity::Warning => "warning",
                        Severity::Info => "recommendation",
                    },
                    "source": m.source, "applies": m.applies, "fix": m.fix.map(|f| match f { FixSafety::Safe => "safe", FixSafety::OptIn => "opt-in" })},
            })
        })
        .collect();
    let mut prints = ci::Fingerprints::default();
    let results: Vec<Value> = r
        .findings
        .iter()
        .map(|l| {
            let idx = all.iter().position(|x| x.meta.id == l.finding.rule.id).unwrap_or(0);
            let print = prints.of(l);
            let mut physical = json!({"artifactLocation": sarif_artifact(&l.file)});
            let mut message = l.finding.message.clone();
            match &l.rendered {
                None => {
                    physical["region"] =
                        json!({"startLine": l.line.max(1), "startColumn": l.column.max(1)});
                }
                Some(how) => message = format!("{} ({how}): {message}", l.object),
            }
            let location = match &l.cluster_namespace {
                None => json!({
                    "physicalLocation": physical,
                    "logicalLocations": [{"fullyQualifiedName": format!("{}{}", l.object, l.pointer), "kind": "object"}]
                }),
                // An object in the cluster has no file: a logical location only (SARIF 2.1.0
                // §3.28: both are optional), named `namespace/Kind/name/pointer`.
                Some(ns) => json!({
                    "logicalLocations": [{
                        "name": l.pointer.rsplit('/').next().filter(|n| !n.is_empty()).unwrap_or(&l.object),
                        "fullyQualifiedName": format!("{}{}", l.file, l.pointer),
                        "kind": "object",
                    }],
                    "message": {"text": format!("{} in namespace {ns} of the cluster, at {}", l.object, if l.pointer.is_empty() { "/" } else { &l.pointer })},
                }),
            };
            let mut result = json!({
                "ruleId": l.finding.rule.id,
                "ruleIndex": idx,
                "level": sarif_level(l.finding.severity),
                "message": {"text": message},
                "locations": [location],
                "fingerprints": {"winlint/v1": print},
            });
            if l.rendered.is_some() {
                result["partialFingerprints"] =
                    json!({"primaryLocationLineHash": format!("{}:1", &print[..16])});
            }
            result
        })
        .collect();
    let notifications: Vec<Value> = r
        .errors
        .iter()
        .map(|e| {
            if r.summary.audit.is_some() {
                // `winlint audit`: what could not be listed, no file.
                return json!({
                    "level": "error",
                    "message": {"text": format!("{}: {}", e.file, e.message)},
                });
            }
            let mut physical = json!({"artifactLocation": sarif_artifact(&e.file)});
            if e.line > 0 {
                physical["region"] = json!({"startLine": e.line, "startColumn": e.column.max(1)});
            }
            json!({
                "level": "error",
                "message": {"text": e.message},
                "locations": [{"physicalLocation": physical}]
            })
        })
        .collect();
    let mut invocation = json!({"executionSuccessful": r.errors.is_empty(), "toolExecutionNotifications": notifications});
    let mut run = json!({
        "tool": {"driver": {
            "name": "winlint",
            "version": env!("CARGO_PKG_VERSION"),
            "semanticVersion": env!("CARGO_PKG_VERSION"),
            "informationUri": "https://github.com/winlint/winlint",
            "rules": rule_objs
        }},
        "columnKind": "unicodeCodePoints",
    });
    if let Some(root) = cwd_uri() {
        run["originalUriBaseIds"] = json!({"%SRCROOT%": {"uri": root}});
        invocation["workingDirectory"] = json!({"uri": root});
    }
    run["invocations"] = json!([invocation]);
    if let Some(cl) = &r.summary.cluster {
        run["properties"] = json!({"cluster": cl});
    }
    run["results"] = Value::Array(results);
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [run]
    })
}

/// The working directory as a `file:` URI ending in `/`, the base of relative paths.
fn cwd_uri() -> Option<String> {
    let dir = std::env::current_dir().ok()?;
    let path = dir.to_str()?.replace('\\', "/");
    let encoded = percent_encoding::utf8_percent_encode(&path, URI_PATH).to_string();
    let sep = if encoded.ends_with('/') { "" } else { "/" };
    let lead = if encoded.starts_with('/') { "" } else { "/" };
    Some(format!("file://{lead}{encoded}{sep}"))
}

/// An `artifactLocation`: a relative path is a URI reference against `%SRCROOT%`.
fn sarif_artifact(file: &str) -> Value {
    let uri = sarif_uri(file);
    if uri.starts_with("file:") || file == "<stdin>" {
        json!({"uri": uri})
    } else {
        json!({"uri": uri, "uriBaseId": "%SRCROOT%"})
    }
}

/// Characters a URI path may carry as they are (RFC 3986 unreserved, plus `/`).
const URI_PATH: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~')
    .remove(b'/');

/// A URI reference for a file: relative paths stay relative (SARIF consumers resolve them
/// against the checkout), percent-encoded; `-` becomes `stdin`.
fn sarif_uri(file: &str) -> String {
    if file == "<stdin>" {
        return "stdin".into();
    }
    let path = file.replace('\\', "/");
    let encoded = percent_encoding::utf8_percent_encode(&path, URI_PATH).to_string();
    if path.starts_with('/') {
        format!("file://{encoded}")
    } else {
        encoded
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strip_styles_removes_only_our_styles() {
        let bold = Style::new().bold();
        let red = Style::new().fg_color(Some(AnsiColor::Red.into())).bold();
        let styled = format!("{bold}a.yaml:1:2:{bold:#} {red}error{red:#} x: y [ok]\n\nz\n");
        let plain = strip_styles(styled.as_bytes()).expect("only our styles");
        assert_eq!(
            String::from_utf8(plain).unwrap(),
            anstream::adapter::strip_str(&styled).to_string()
        );
        // Anything else goes through anstream's stripper.
        for other in ["a\x1b]0;t\x07b\n", "tab\there\n", "é\n", "\x1b[1", "\x1bc"] {
            assert_eq!(strip_styles(other.as_bytes()), None, "{other:?}");
        }
    }

    /// A finding of `winlint audit`: an object in the cluster, placed by namespace, kind, name
    /// and pointer in every format, never by a file.
    #[test]
    fn objects_in_the_cluster_have_no_file() {
        let finding = Finding::new(
            rules::find("WIN007").unwrap().meta,
            "/spec/template/spec/tolerations",
            "not tolerated",
        );
        let l = Located {
            file: "prod/Deployment/iis".into(),
            line: 0,
            column: 0,
            pointer: "/spec/template/spec/tolerations".into(),
            object: "Deployment/iis".into(),
            finding,
            fix: FixState::None,
            not_fixed: None,
            rendered: None,
            cluster_namespace: Some("prod".into()),
        };
        let summary = Summary {
            objects: 1,
            pods: 1,
            audit: Some(AuditSummary {
                namespaces: 1,
                cluster_pods: 3,
            }),
            cluster: Some(ClusterSummary {
                context: Some("kind-win".into()),
                server: "https://127.0.0.1:6443".into(),
                facts: vec!["Kubernetes 1.32".into()],
            }),
            ..Summary::default()
        };
        let mut counts = Counts::default();
        counts.add(&l);
        let errors = [InputError {
            file: "jobs in namespace prod".into(),
            line: 0,
            column: 0,
            message: "forbidden: no".into(),
        }];

        let mut text = TextReport::default();
        text.push(&l);
        let text = strip_styles(&text.finish(&counts, &errors, &summary)).unwrap();
        assert_eq!(
            String::from_utf8(text).unwrap(),
            "jobs in namespace prod: error forbidden: no\n\
             prod/Deployment/iis: /spec/template/spec/tolerations: error WIN007 \
             missing-windows-toleration: not tolerated\n\n\
             1 error, 0 warnings, 0 info in 1 object of 1 namespace (3 pods in the cluster, 1 pod \
             template checked); 1 kind could not be listed; target from the cluster (context \
             kind-win at https://127.0.0.1:6443): Kubernetes 1.32\n"
        );

        let mut buf = Vec::new();
        let mut json = JsonReport::new(&mut buf);
        json.push(&l);
        json.finish(&counts, &errors, &summary).unwrap();
        let v: Value = serde_json::from_slice(&buf).unwrap();
        let f = &v["findings"][0];
        assert!(f.get("file").is_none() && f.get("line").is_none(), "{f}");
        assert_eq!(f["namespace"], "prod");
        assert_eq!(f["object"], "Deployment/iis");
        assert_eq!(f["pointer"], "/spec/template/spec/tolerations");
        assert_eq!(v["summary"]["cluster_pods"], 3);
        assert_eq!(v["summary"]["cluster"]["context"], "kind-win");

        let report = Report {
            findings: std::slice::from_ref(&l),
            errors: &errors,
            summary: &summary,
        };
        let sarif = sarif_value(&report);
        let run = &sarif["runs"][0];
        let loc = &run["results"][0]["locations"][0];
        assert!(loc.get("physicalLocation").is_none(), "{loc}");
        assert_eq!(
            loc["logicalLocations"][0],
            json!({"name": "tolerations", "kind": "object",
                "fullyQualifiedName": "prod/Deployment/iis/spec/template/spec/tolerations"})
        );
        let note = &run["invocations"][0]["toolExecutionNotifications"][0];
        assert!(note.get("locations").is_none(), "{note}");
        assert_eq!(
            note["message"]["text"],
            "jobs in namespace prod: forbidden: no"
        );
        assert_eq!(
            run["properties"]["cluster"]["server"],
            "https://127.0.0.1:6443"
        );

        let mut buf = Vec::new();
        let mut gh = GithubReport::new(&mut buf);
        gh.push(&l);
        gh.finish(&counts, &errors, &summary).unwrap();
        let gh = String::from_utf8(buf).unwrap();
        let lines: Vec<&str> = gh.lines().collect();
        assert_eq!(
            lines[..2],
            [
                "::error title=WIN007 missing-windows-toleration::prod/Deployment/iis: \
                 /spec/template/spec/tolerations: not tolerated",
                "::error title=winlint could not list these objects::jobs in namespace prod: \
                 forbidden: no",
            ]
        );
    }

    #[test]
    fn pretty_at_a_level_is_serde_json_pretty_indented() {
        let v = json!({"a": [], "b": {}, "c": [1, {"d": [[]], "e": "x\ny"}], "f": {"g": null}});
        let mut got = Vec::new();
        let mut ser = serde_json::Serializer::with_formatter(&mut got, Pretty::at(2));
        v.serialize(&mut ser).unwrap();
        let want = serde_json::to_string_pretty(&v)
            .unwrap()
            .replace('\n', "\n    ");
        assert_eq!(String::from_utf8(got).unwrap(), want);
    }
}
