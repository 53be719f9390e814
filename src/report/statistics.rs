//! `--statistics`: the findings counted per rule, per severity and (audit) per namespace, for
//! the text report and the JSON one.

use std::collections::BTreeMap;
use std::io::Write;

use anstyle::Style;
use serde_json::{Value, json};

use super::{FixState, Located};
use crate::model::{RuleMeta, Severity};

/// The counts, kept as the findings stream past (a few entries per rule and namespace).
#[derive(Debug, Clone, Default)]
pub struct Statistics {
    /// Per rule and severity (a rule's severity can differ between findings: a finding resting
    /// on an assumed taint is a warning, `rules:` in the config overrides).
    rules: BTreeMap<(&'static str, Severity), RuleCount>,
    /// Per namespace: errors, warnings, info. Objects without one are under `None`.
    namespaces: BTreeMap<Option<String>, [usize; 3]>,
}

#[derive(Debug, Clone, Default)]
struct RuleCount {
    name: &'static str,
    /// The rule (its documentation page, for `-o html`); set by the first finding counted.
    meta: Option<&'static RuleMeta>,
    count: usize,
    fixable: usize,
}

/// A row of the per-rule table ([`Statistics::rules`]).
#[derive(Debug, Clone, Copy)]
pub struct RuleRow {
    pub rule: &'static RuleMeta,
    /// The findings' severity (a rule's findings may differ: the rows are per rule and severity).
    pub severity: Severity,
    pub count: usize,
    pub fixable: usize,
}

fn slot(s: Severity) -> usize {
    match s {
        Severity::Error => 0,
        Severity::Warning => 1,
        Severity::Info => 2,
    }
}

const SEVERITIES: [Severity; 3] = [Severity::Error, Severity::Warning, Severity::Info];

impl Statistics {
    pub fn add(&mut self, l: &Located) {
        let f = &l.finding;
        let r = self.rules.entry((f.rule.id, f.severity)).or_default();
        r.name = f.rule.name;
        r.meta = Some(f.rule);
        r.count += 1;
        r.fixable += usize::from(l.fix == FixState::Fixable);
        match self.namespaces.get_mut(&l.namespace) {
            Some(n) => n[slot(f.severity)] += 1,
            None => {
                let mut n = [0; 3];
                n[slot(f.severity)] = 1;
                self.namespaces.insert(l.namespace.clone(), n);
            }
        }
    }

    /// The rules, most findings first, then by ID and severity.
    fn rule_rows(&self) -> Vec<(&'static str, Severity, &RuleCount)> {
        let mut rows: Vec<_> = self.rules.iter().map(|(&(id, s), c)| (id, s, c)).collect();
        rows.sort_by(|a, b| {
            (b.2.count.cmp(&a.2.count))
                .then(a.0.cmp(b.0))
                .then(b.1.cmp(&a.1))
        });
        rows
    }

    fn per_severity(&self) -> [usize; 3] {
        let mut n = [0; 3];
        for (&(_, s), c) in &self.rules {
            n[slot(s)] += c.count;
        }
        n
    }

    /// The namespaces, most errors first (then warnings, info), then by name.
    fn namespace_rows(&self) -> Vec<(&Option<String>, &[usize; 3])> {
        let mut rows: Vec<_> = self.namespaces.iter().collect();
        rows.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        rows
    }

    /// The per-rule rows, in the order of the text and JSON tables, for a report that lays
    /// them out itself (`-o html`).
    pub fn rules(&self) -> Vec<RuleRow> {
        (self.rule_rows().into_iter())
            .filter_map(|(_, severity, c)| {
                Some(RuleRow {
                    rule: c.meta?,
                    severity,
                    count: c.count,
                    fixable: c.fixable,
                })
            })
            .collect()
    }

    /// The per-namespace rows (errors, warnings, info), in the text and JSON tables' order.
    pub fn namespaces(&self) -> Vec<(Option<&str>, [usize; 3])> {
        (self.namespace_rows().into_iter())
            .map(|(n, c)| (n.as_deref(), *c))
            .collect()
    }

    /// The findings counted: errors, warnings, info.
    pub fn severities(&self) -> [usize; 3] {
        self.per_severity()
    }

    /// The tables of the text report; `namespaces`: `winlint audit`'s per-namespace table too.
    pub fn write_text(&self, namespaces: bool, out: &mut dyn Write) -> std::io::Result<()> {
        let bold = Style::new().bold();
        let rows = self.rule_rows();
        let name_w = rows
            .iter()
            .map(|r| r.2.name.len())
            .max()
            .unwrap_or(0)
            .max(4);
        writeln!(
            out,
            "{bold}{:>5}  {:<6}  {:<name_w$}  {:<8}  FIXABLE{bold:#}",
            "COUNT", "RULE", "NAME", "SEVERITY"
        )?;
        for (id, s, c) in &rows {
            writeln!(
                out,
                "{:>5}  {id:<6}  {:<name_w$}  {:<8}  {:>7}",
                c.count,
                c.name,
                s.as_str(),
                c.fixable
            )?;
        }
        writeln!(out)?;
        writeln!(out, "{bold}{:>5}  SEVERITY{bold:#}", "COUNT")?;
        let per = self.per_severity();
        for s in SEVERITIES {
            writeln!(out, "{:>5}  {}", per[slot(s)], s.as_str())?;
        }
        if namespaces {
            let label = |n: &Option<String>| n.clone().unwrap_or_else(|| "(none)".into());
            let ns_rows = self.namespace_rows();
            let ns_w = ns_rows.iter().map(|r| label(r.0).len()).max().unwrap_or(0);
            let ns_w = ns_w.max("NAMESPACE".len());
            writeln!(out)?;
            writeln!(
                out,
                "{bold}{:<ns_w$}  {:>6}  {:>8}  {:>4}{bold:#}",
                "NAMESPACE", "ERRORS", "WARNINGS", "INFO"
            )?;
            for (n, c) in ns_rows {
                writeln!(
                    out,
                    "{:<ns_w$}  {:>6}  {:>8}  {:>4}",
                    label(n),
                    c[0],
                    c[1],
                    c[2]
                )?;
            }
        }
        Ok(())
    }

    /// The `statistics` object of the JSON report.
    pub fn to_json(&self, namespaces: bool) -> Value {
        let rules: Vec<Value> = self
            .rule_rows()
            .into_iter()
            .map(|(id, s, c)| {
                json!({"rule": id, "name": c.name, "severity": s, "count": c.count, "fixable": c.fixable})
            })
            .collect();
        let per = self.per_severity();
        let mut v = json!({
            "rules": rules,
            "severities": {"error": per[0], "warning": per[1], "info": per[2]},
        });
        if namespaces {
            v["namespaces"] = self
                .namespace_rows()
                .into_iter()
                .map(|(n, c)| json!({"namespace": n, "errors": c[0], "warnings": c[1], "info": c[2]}))
                .collect();
        }
        v
    }
}
