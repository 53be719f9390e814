//! `winlint rules` and `winlint explain`: the rule catalogue, as a table (text, Markdown, JSON)
//! and one rule's documentation page.

use std::io::Write;

use serde_json::Value;

use crate::model::FixSafety;
use crate::rules;

use super::args::RulesFormat;
use crate::process::{EXIT_OK, EXIT_USAGE};

pub(super) fn list_rules(format: RulesFormat) -> i32 {
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
                    serde_json::json!({"id": m.id, "name": m.name, "severity": m.severity,
                        "severities": m.severities(), "severity_note": m.severity_note(),
                        "fix": m.fix, "summary": m.summary, "applies": m.applies, "source": crate::model::citations::public(m.source)})
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
                    m.severity_label().replace('|', "\\|"),
                    fix_str(m.fix),
                    m.applies,
                    m.summary.replace('|', "\\|")
                ));
            }
            write!(out, "{s}")
        }
        RulesFormat::Text => {
            let w = all.iter().map(|r| r.meta.name.len()).max().unwrap_or(10);
            // `warning|error` where the severity varies (`winlint explain` says when).
            let sw = all
                .iter()
                .map(|r| r.meta.severity_label().len())
                .max()
                .unwrap_or(8)
                .max(8);
            let mut s = format!(
                "{:<7} {:<w$} {:<sw$} {:<6} SUMMARY\n",
                "ID", "NAME", "SEVERITY", "FIX"
            );
            for r in all {
                let m = r.meta;
                s.push_str(&format!(
                    "{:<7} {:<w$} {:<sw$} {:<6} {}\n",
                    m.id,
                    m.name,
                    m.severity_label(),
                    fix_str(m.fix),
                    m.summary
                ));
            }
            write!(out, "{s}")
        }
    };
    crate::process::finish_output(res, EXIT_OK)
}

pub(super) fn explain(key: &str) -> i32 {
    let Some(r) = rules::find(key) else {
        eprintln!("winlint: unknown rule {key:?} (see `winlint rules`)");
        return EXIT_USAGE;
    };
    let text = r.meta.page();
    crate::process::finish_output(crate::process::print_stdout(&text), EXIT_OK)
}
