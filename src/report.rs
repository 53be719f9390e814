//! Reports: `text` (people), `json` (machines), `sarif` (code-scanning UIs).

use std::io::Write;

use anstyle::{AnsiColor, Style};
use serde_json::{Value, json};

use crate::rules::{self, Finding, FixSafety, Severity};

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
    /// The policy would apply its fix with `--fix`.
    pub fixable: bool,
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
}

pub struct Report<'a> {
    pub findings: &'a [Located],
    pub errors: &'a [InputError],
    pub summary: &'a Summary,
}

fn count(findings: &[Located], s: Severity) -> usize {
    findings.iter().filter(|f| f.finding.severity == s).count()
}

fn plural(n: usize, word: &str) -> String {
    if n == 1 || word == "info" {
        format!("{n} {word}")
    } else {
        format!("{n} {word}s")
    }
}

/// `file:line:col: severity WIN403 env-name-invalid: message`, grouped by file, then a summary.
pub fn text(r: &Report, out: &mut dyn Write) -> std::io::Result<()> {
    let bold = Style::new().bold();
    let dim = Style::new().dimmed();
    for e in r.errors {
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
    let mut last_file: Option<&str> = None;
    for l in r.findings {
        if last_file.is_some_and(|f| f != l.file) {
            writeln!(out)?;
        }
        last_file = Some(&l.file);
        let sev = l.finding.severity;
        let color = match sev {
            Severity::Error => AnsiColor::Red,
            Severity::Warning => AnsiColor::Yellow,
            Severity::Info => AnsiColor::Cyan,
        };
        let st = Style::new().fg_color(Some(color.into())).bold();
        let fix = if l.fixable {
            format!(" {dim}[fixable]{dim:#}")
        } else {
            String::new()
        };
        writeln!(
            out,
            "{bold}{}:{}:{}:{bold:#} {st}{}{st:#} {bold}{}{bold:#} {}: {}{fix}",
            l.file,
            l.line,
            l.column,
            sev.as_str(),
            l.finding.rule.id,
            l.finding.rule.name,
            l.finding.message
        )?;
    }
    let (e, w, i) = (
        count(r.findings, Severity::Error),
        count(r.findings, Severity::Warning),
        count(r.findings, Severity::Info),
    );
    let fixable = r.findings.iter().filter(|l| l.fixable).count();
    if !r.findings.is_empty() || !r.errors.is_empty() {
        writeln!(out)?;
    }
    let mut line = format!(
        "{}, {}, {} in {} ({}, {} checked)",
        plural(e, "error"),
        plural(w, "warning"),
        plural(i, "info"),
        plural(r.summary.files, "file"),
        plural(r.summary.objects, "object"),
        plural(r.summary.pods, "pod template")
    );
    if !r.errors.is_empty() {
        line.push_str(&format!(
            "; {} could not be read",
            plural(r.errors.len(), "input")
        ));
    }
    if fixable > 0 {
        line.push_str(&format!("; {fixable} fixable with --fix"));
    }
    if r.summary.suppressed > 0 {
        line.push_str(&format!(
            "; {} suppressed by winlint.io/ignore",
            r.summary.suppressed
        ));
        if !r.summary.ignore_reasons.is_empty() {
            line.push_str(&format!(" ({})", r.summary.ignore_reasons.join("; ")));
        }
    }
    writeln!(out, "{bold}{line}{bold:#}")
}

fn located_json(l: &Located) -> Value {
    let mut v = json!({
        "rule": l.finding.rule.id,
        "name": l.finding.rule.name,
        "severity": l.finding.severity,
        "file": l.file,
        "line": l.line,
        "column": l.column,
        "pointer": l.pointer,
        "object": l.object,
        "message": l.finding.message,
    });
    if let Some(fix) = &l.finding.fix {
        v["fix"] = json!({
            "safety": fix.safety,
            "description": fix.description,
            "applied_by_fix": l.fixable,
            "patch": fix.ops,
        });
    }
    v
}

/// The JSON contract: `{"findings": […], "errors": […], "summary": {…}}`.
pub fn json_value(r: &Report) -> Value {
    json!({
        "findings": r.findings.iter().map(located_json).collect::<Vec<_>>(),
        "errors": r.errors.iter().map(|e| json!({"file": e.file, "line": e.line, "column": e.column, "message": e.message})).collect::<Vec<_>>(),
        "summary": {
            "errors": count(r.findings, Severity::Error),
            "warnings": count(r.findings, Severity::Warning),
            "info": count(r.findings, Severity::Info),
            "fixable": r.findings.iter().filter(|l| l.fixable).count(),
            "files": r.summary.files,
            "objects": r.summary.objects,
            "pods": r.summary.pods,
            "suppressed": r.summary.suppressed,
            "ignore_reasons": r.summary.ignore_reasons,
            "input_errors": r.errors.len(),
        }
    })
}

fn sarif_level(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "note",
    }
}

/// SARIF 2.1.0 with every rule's help text and real regions.
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
                "properties": {"source": m.source, "applies": m.applies, "fix": m.fix.map(|f| match f { FixSafety::Safe => "safe", FixSafety::OptIn => "opt-in" })},
            })
        })
        .collect();
    let results: Vec<Value> = r
        .findings
        .iter()
        .map(|l| {
            let idx = all.iter().position(|x| x.meta.id == l.finding.rule.id).unwrap_or(0);
            json!({
                "ruleId": l.finding.rule.id,
                "ruleIndex": idx,
                "level": sarif_level(l.finding.severity),
                "message": {"text": l.finding.message},
                "locations": [{
                    "physicalLocation": {
                        "artifactLocation": {"uri": sarif_uri(&l.file)},
                        "region": {"startLine": l.line.max(1), "startColumn": l.column.max(1)}
                    },
                    "logicalLocations": [{"fullyQualifiedName": format!("{}{}", l.object, l.pointer), "kind": "object"}]
                }],
            })
        })
        .collect();
    let notifications: Vec<Value> = r
        .errors
        .iter()
        .map(|e| {
            json!({
                "level": "error",
                "message": {"text": e.message},
                "locations": [{"physicalLocation": {"artifactLocation": {"uri": sarif_uri(&e.file)}, "region": {"startLine": e.line.max(1), "startColumn": e.column.max(1)}}}]
            })
        })
        .collect();
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "winlint",
                "version": env!("CARGO_PKG_VERSION"),
                "informationUri": "https://github.com/winlint/winlint",
                "rules": rule_objs
            }},
            "invocations": [{"executionSuccessful": r.errors.is_empty(), "toolExecutionNotifications": notifications}],
            "results": results
        }]
    })
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
