//! The plan as people act on it: grouped text (blocked workloads first, each with its change),
//! JSON, Markdown for a pull-request comment, and one HTML page.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;

use super::lifecycle::{Notice, Weight};
use super::{Verdict, WorkloadPlan};
use crate::report::printable;

/// The whole plan.
#[derive(Debug, Clone, Serialize)]
pub struct Plan {
    /// `10.0.20348 (ltsc2022)`, the current Windows builds.
    pub from: Vec<String>,
    pub to: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub platform: Option<String>,
    pub kubernetes_from: String,
    pub kubernetes_to: String,
    pub isolation: String,
    pub as_of: String,
    /// `configured` or `cluster`.
    pub facts: String,
    /// With `--registry`: the manifest lists decided.
    pub registry: bool,
    pub lifecycle: Vec<Notice>,
    /// Workloads per verdict.
    pub counts: BTreeMap<Verdict, usize>,
    /// Objects with pods that are not Windows (not moved).
    pub not_windows: usize,
    /// Most urgent first, then by name.
    pub workloads: Vec<WorkloadPlan>,
    pub errors: Vec<String>,
}

impl Plan {
    /// Sort the workloads (most urgent first, then by object and file) and count them.
    pub fn finish(&mut self) {
        self.workloads
            .sort_by(|a, b| (a.verdict, &a.object, &a.file).cmp(&(b.verdict, &b.object, &b.file)));
        self.counts = Verdict::ALL.iter().map(|&v| (v, 0)).collect();
        for w in &self.workloads {
            *self.counts.entry(w.verdict).or_default() += 1;
        }
        self.lifecycle.sort_by_key(|n| n.weight);
    }

    pub(crate) fn blocked(&self) -> usize {
        self.workloads.iter().filter(|w| w.verdict.blocks()).count()
    }

    fn counts_line(&self) -> String {
        let counts: Vec<String> = Verdict::ALL
            .iter()
            .map(|v| format!("{} {}", v.name(), self.counts.get(v).copied().unwrap_or(0)))
            .collect();
        format!(
            "{} Windows workload(s): {} blocked; {}; {} not Windows (not moved)",
            self.workloads.len(),
            self.blocked(),
            counts.join(", "),
            self.not_windows
        )
    }

    pub(crate) fn heading(&self) -> String {
        let platform = self
            .platform
            .as_deref()
            .map(|p| format!(", platform {p}"))
            .unwrap_or_default();
        let kube = if self.kubernetes_from == self.kubernetes_to {
            self.kubernetes_to.clone()
        } else {
            format!("{} → {}", self.kubernetes_from, self.kubernetes_to)
        };
        format!(
            "Windows {} → {}{platform}, Kubernetes {kube}, {} isolation, {} facts{}, as of {}",
            self.from.join(", "),
            self.to.join(", "),
            self.isolation,
            self.facts,
            if self.registry { " + registry" } else { "" },
            self.as_of
        )
    }

    pub fn json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a plan serializes") + "\n"
    }

    pub fn text(&self) -> String {
        let mut o = String::new();
        let _ = writeln!(o, "winlint plan: {}", self.heading());
        if !self.lifecycle.is_empty() {
            let _ = writeln!(o, "\nNode pools:");
            for n in &self.lifecycle {
                let _ = writeln!(
                    o,
                    "  {:<8} {:<7} {}\n           source: {}",
                    weight(n.weight),
                    n.pool,
                    n.message,
                    n.source
                );
            }
        }
        let mut last = None;
        for w in &self.workloads {
            if last != Some(w.verdict) {
                let _ = writeln!(
                    o,
                    "\n== {} ({}) ==",
                    w.verdict.name(),
                    self.counts.get(&w.verdict).copied().unwrap_or(0)
                );
                last = Some(w.verdict);
            }
            let _ = writeln!(o, "{}  ({})", printable(&w.object), printable(&w.file));
            for p in &w.pod {
                let _ = writeln!(o, "  pod: {}: {}", p.verdict.name(), printable(&p.evidence));
                if let Some(c) = &p.change {
                    let _ = writeln!(o, "    change: {}", printable(c));
                }
            }
            for c in &w.containers {
                let _ = writeln!(
                    o,
                    "  {} {}: {} on {}",
                    c.container,
                    printable(&c.image),
                    c.verdict.name(),
                    c.build
                );
                let _ = writeln!(o, "    why: {}", printable(&c.evidence));
                if let Some(ch) = &c.change {
                    let _ = writeln!(o, "    change: {}", printable(ch));
                }
            }
        }
        for e in &self.errors {
            let _ = writeln!(o, "\nerror: {}", printable(e));
        }
        let _ = writeln!(o, "\n{}", self.counts_line());
        o
    }

    pub fn markdown(&self) -> String {
        let mut o = String::new();
        let _ = writeln!(o, "### winlint plan\n\n{}\n", md(&self.heading()));
        let _ = writeln!(o, "| verdict | workloads |\n|---|---:|");
        for v in Verdict::ALL {
            let _ = writeln!(
                o,
                "| {}{} | {} |",
                if v.blocks() { "⛔ " } else { "" },
                v.name(),
                self.counts.get(&v).copied().unwrap_or(0)
            );
        }
        let _ = writeln!(o, "\n{}\n", md(&self.counts_line()));
        if !self.lifecycle.is_empty() {
            let _ = writeln!(o, "#### Node pools\n");
            for n in &self.lifecycle {
                let _ = writeln!(
                    o,
                    "- **{}** ({}): {} ([source]({}))",
                    weight(n.weight),
                    n.pool,
                    md(&n.message),
                    n.source.split_whitespace().next().unwrap_or("")
                );
            }
            o.push('\n');
        }
        let changes: Vec<&WorkloadPlan> = self
            .workloads
            .iter()
            .filter(|w| w.verdict != Verdict::RunsAsIs)
            .collect();
        if !changes.is_empty() {
            let _ = writeln!(
                o,
                "#### What to change\n\n| verdict | workload | what | change |\n|---|---|---|---|"
            );
            for w in changes {
                for p in &w.pod {
                    let _ = writeln!(
                        o,
                        "| {} | `{}` | {} | {} |",
                        p.verdict.name(),
                        md(&w.object),
                        md(&p.evidence),
                        md(p.change.as_deref().unwrap_or(""))
                    );
                }
                for c in w
                    .containers
                    .iter()
                    .filter(|c| c.verdict != Verdict::RunsAsIs)
                {
                    let _ = writeln!(
                        o,
                        "| {} | `{}` | {} `{}`: {} | {} |",
                        c.verdict.name(),
                        md(&w.object),
                        md(&c.container),
                        md(&c.image),
                        md(&c.evidence),
                        md(c.change.as_deref().unwrap_or(""))
                    );
                }
            }
        }
        for e in &self.errors {
            let _ = writeln!(o, "\n> error: {}", md(e));
        }
        o
    }
}

impl Plan {
    /// One self-contained page (the style of `-o html`, `report/html.css`; nothing loaded, every
    /// text escaped): the counts by verdict as cards, the node pools, then the workloads, blocked
    /// first, each with its changes.
    pub fn html(&self) -> String {
        let mut o = html_start("winlint plan");
        self.html_body(&mut o, "");
        o.push_str("</body>\n</html>\n");
        o
    }

    /// The page's body below its title: summary, cards, node pools, workloads, errors; the
    /// sections' ids start with `id` (a fleet's page holds one body per cluster).
    pub(crate) fn html_body(&self, o: &mut String, id: &str) {
        use crate::report::html::escape;
        let _ = write!(
            o,
            "<p class=\"summary\">{}</p>\n\
             <p class=\"summary\">{}</p>\n<section id=\"{id}overview\">\n<div class=\"cards\">\n",
            escape(&self.heading()),
            escape(&self.counts_line())
        );
        for v in Verdict::ALL {
            let class = if v.blocks() {
                "error"
            } else if v == Verdict::RunsAsIs {
                "score"
            } else {
                "warning"
            };
            let _ = writeln!(
                o,
                "<div class=\"card {class}\"><span class=\"n\">{}</span>{}</div>",
                self.counts.get(&v).copied().unwrap_or(0),
                v.name()
            );
        }
        o.push_str("</div>\n</section>\n");
        if !self.lifecycle.is_empty() {
            let _ = writeln!(o, "<section id=\"{id}pools\">\n<h2>Node pools</h2>\n<ul>");
            for n in &self.lifecycle {
                let _ = writeln!(
                    o,
                    "<li><b>{}</b> ({}): {} <span class=\"note\">{}</span></li>",
                    weight(n.weight),
                    n.pool,
                    escape(&n.message),
                    escape(&n.source)
                );
            }
            o.push_str("</ul>\n</section>\n");
        }
        let _ = writeln!(o, "<section id=\"{id}workloads\">\n<h2>Workloads</h2>");
        for w in &self.workloads {
            let _ = write!(
                o,
                "<article class=\"object\">\n<h3>{} {}</h3>\n<p class=\"where\">{}</p>\n<ol>\n",
                w.verdict.name(),
                escape(&w.object),
                escape(&w.file)
            );
            let item = |o: &mut String, head: String, why: &str, change: Option<&str>| {
                let _ = write!(
                    o,
                    "<li class=\"finding\"><p>{head}</p><p>{}</p>",
                    escape(why)
                );
                if let Some(c) = change {
                    let _ = write!(o, "<p class=\"fix\"><b>change:</b> {}</p>", escape(c));
                }
                o.push_str("</li>\n");
            };
            for p in &w.pod {
                item(
                    o,
                    format!("<span class=\"rule\">{}</span> pod", p.verdict.name()),
                    &p.evidence,
                    p.change.as_deref(),
                );
            }
            for c in &w.containers {
                item(
                    o,
                    format!(
                        "<span class=\"rule\">{}</span> {} <code>{}</code> <span class=\"at\">on {}</span>",
                        c.verdict.name(),
                        escape(&c.container),
                        escape(&c.image),
                        escape(&c.build)
                    ),
                    &c.evidence,
                    c.change.as_deref(),
                );
            }
            o.push_str("</ol>\n</article>\n");
        }
        o.push_str("</section>\n");
        for e in &self.errors {
            let _ = writeln!(o, "<p class=\"note\">error: {}</p>", escape(e));
        }
    }
}

/// A page's head with the report's style, the body opened with its `title` as heading.
pub(crate) fn html_start(title: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <title>{title}</title>\n<style>\n{}</style>\n</head>\n<body>\n<h1>{title}</h1>\n",
        include_str!("../report/html.css")
    )
}

fn weight(w: Weight) -> &'static str {
    match w {
        Weight::Blocking => "blocking",
        Weight::Warning => "warning",
        Weight::Info => "info",
    }
}

/// Text for a Markdown table cell: pipes escaped, line breaks and backticks defused.
pub(crate) fn md(s: &str) -> String {
    printable(s)
        .replace('|', "\\|")
        .replace('`', "'")
        .replace('<', "&lt;")
}
