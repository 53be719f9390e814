//! `-o sarif`: SARIF 2.1.0 for code-scanning UIs.

use serde_json::{Value, json};

use super::{Report, ci};
use crate::model::{FixSafety, Severity};
use crate::rules;

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
                    "source": crate::model::citations::public(m.source), "applies": m.applies, "fix": m.fix.map(|f| match f { FixSafety::Safe => "safe", FixSafety::OptIn => "opt-in" })},
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
                Some(how) => message = format!("{} ({how}): {message}", l.object_name()),
            }
            // The object and the place in it, as audit names them: `namespace/Kind/name/pointer`
            // (`Kind/name/pointer` when the manifest gives no namespace).
            let logical = json!([{
                "name": l.pointer.rsplit('/').next().filter(|n| !n.is_empty()).unwrap_or(&l.object),
                "fullyQualifiedName": format!("{}{}", l.object_name(), l.pointer),
                "kind": "object",
            }]);
            let location = match &l.cluster_namespace {
                None => json!({"physicalLocation": physical, "logicalLocations": logical}),
                // An object in the cluster has no file: a logical location only (SARIF 2.1.0
                // §3.28: both are optional).
                Some(ns) => json!({
                    "logicalLocations": logical,
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
