//! `-o html`: one self-contained page for people who look at an overview rather than a log
//! (`winlint FILES -o html > report.html`, `winlint audit -A -o html`): the summary line, the
//! counts per severity and a score, the tables per namespace and per rule (the `--statistics`
//! counts, [`Statistics`]), the input errors, then the findings per object (the grouped text
//! layout's objects, [`super::grouped`]) with the message, the place and the fix on a line of
//! its own. Each rule ID links to its documentation page, the one webhook denials name.
//!
//! The page loads nothing: the style is inline, there is no script and no web font, so it reads
//! the same from a CI artefact, a mail attachment or a file on a machine without a network.
//! The output is a function of the findings alone (no time, no version), so a golden file can
//! pin it. Every piece of text is escaped ([`escape`]): object names, messages and paths come
//! from the manifests or the cluster and may hold markup.

use std::collections::BTreeSet;
use std::io::Write;

use super::grouped::{fix_tag, group_header};
use super::{Counts, InputError, Located, Statistics, Summary};
use crate::model::Severity;

/// The HTML report: the findings are formatted as they arrive (in report order, grouped per
/// object) and written after the summary and the tables, which need all of them.
pub struct HtmlReport<W: Write> {
    out: W,
    /// The counts of the tables, kept as `--statistics` keeps them (the findings shown).
    stats: Statistics,
    /// The findings' markup, one `<article>` per object.
    body: String,
    /// The header of the object whose article is open.
    header: Option<String>,
    /// The objects with an error finding (for the score; `--severity` never hides errors).
    failing: BTreeSet<String>,
}

impl<W: Write> HtmlReport<W> {
    pub fn new(out: W) -> Self {
        HtmlReport {
            out,
            stats: Statistics::default(),
            body: String::new(),
            header: None,
            failing: BTreeSet::new(),
        }
    }

    pub fn push(&mut self, l: &Located) {
        self.stats.add(l);
        let header = group_header(l);
        if l.finding.severity == Severity::Error {
            self.failing.insert(header.clone());
        }
        if self.header.as_deref() != Some(header.as_str()) {
            if self.header.is_some() {
                self.body.push_str("</ol>\n</article>\n");
            }
            self.body.push_str("<article class=\"object\">\n");
            self.body.push_str(&format!(
                "<h3>{}</h3>\n<p class=\"where\">{}</p>\n<ol>\n",
                escape(&l.object_name()),
                escape(&where_from(l))
            ));
            self.header = Some(header);
        }
        self.body.push_str(&finding(l));
    }

    /// Write the page: head, overview, tables, input errors, findings.
    pub fn finish(
        mut self,
        counts: &Counts,
        errors: &[InputError],
        summary: &Summary,
    ) -> std::io::Result<()> {
        let mut page = String::with_capacity(self.body.len() + 8192);
        page.push_str(HEAD);
        page.push_str("<header>\n<h1>winlint report</h1>\n");
        page.push_str(&format!(
            "<p class=\"summary\">{}</p>\n</header>\n<main>\n",
            escape(&super::summary_line(counts, errors, summary))
        ));
        overview(&mut page, counts, summary, self.failing.len());
        namespaces(&mut page, &self.stats, summary.audit.is_some());
        rules(&mut page, &self.stats);
        input_errors(&mut page, errors, summary.audit.is_some());
        page.push_str("<section id=\"findings\">\n<h2>Findings per object</h2>\n");
        if self.header.is_some() {
            self.body.push_str("</ol>\n</article>\n");
            page.push_str(&self.body);
        } else {
            page.push_str("<p class=\"none\">No findings.</p>\n");
        }
        page.push_str("</section>\n</main>\n");
        page.push_str(&format!(
            "<footer>\n<p>Made by winlint. Each rule's page: <a href=\"{0}\">{0}</a>.</p>\n\
             </footer>\n</body>\n</html>\n",
            escape(crate::model::meta::DOCS_BASE_URL)
        ));
        self.out.write_all(page.as_bytes())?;
        self.out.flush()
    }
}

/// Where the object was read: its file, the template and how it was rendered, or the cluster.
fn where_from(l: &Located) -> String {
    match (&l.rendered, &l.cluster_namespace) {
        (Some(how), _) => format!("{} ({how})", l.file),
        (None, Some(_)) => "in the cluster".to_string(),
        (None, None) => l.file.clone(),
    }
}

/// One finding: severity, rule (linked), place; the message; the fix on its own line.
fn finding(l: &Located) -> String {
    let f = &l.finding;
    let sev = f.severity.as_str();
    // A line of a file where there is one; in rendered output and the cluster, the field.
    let place = if l.rendered.is_none() && l.cluster_namespace.is_none() {
        format!("{}:{}:{}", l.file, l.line, l.column)
    } else if l.pointer.is_empty() {
        "/".to_string()
    } else {
        l.pointer.clone()
    };
    let mut s = format!(
        "<li class=\"finding {sev}\">\n<p class=\"head\"><span class=\"sev\">{sev}</span> \
         <a class=\"rule\" href=\"{}\">{}</a> <span class=\"rname\">{}</span> \
         <span class=\"at\">at <code>{}</code></span></p>\n<p class=\"msg\">{}</p>\n",
        escape(&f.rule.docs_url()),
        escape(f.rule.id),
        escape(f.rule.name),
        escape(&place),
        escape(&f.message)
    );
    if let Some(fix) = &f.fix {
        let tag = fix_tag(l, fix);
        let tag = match tag.is_empty() {
            true => String::new(),
            false => format!(" <span class=\"tag\">{}</span>", escape(&tag)),
        };
        s.push_str(&format!(
            "<p class=\"fix\"><b>fix:</b> {}{tag}</p>\n",
            escape(&fix.description)
        ));
    }
    s.push_str("</li>\n");
    s
}

/// The counts per severity (all findings, as the summary line and the exit code count them),
/// and the share of workloads without an error.
fn overview(page: &mut String, c: &Counts, summary: &Summary, failing: usize) {
    page.push_str("<section id=\"overview\">\n<h2>Overview</h2>\n<div class=\"cards\">\n");
    for (n, sev, words) in [
        (c.errors, "error", "errors"),
        (c.warnings, "warning", "warnings"),
        (c.info, "info", "info"),
    ] {
        let word = if n == 1 { sev } else { words };
        page.push_str(&format!(
            "<div class=\"card {sev}\"><span class=\"n\">{n}</span> {word}</div>\n"
        ));
    }
    // The workloads checked are the pod templates the summary line counts (one per workload):
    // `summary.objects` also counts the ConfigMaps, Services, … of the input, which no rule
    // checks and which would raise the score.
    let checked = summary.pods;
    if checked > 0 {
        let passing = checked.saturating_sub(failing);
        page.push_str(&format!(
            "<div class=\"card score\"><span class=\"n\">{}%</span> workloads without errors \
             ({passing} of {checked})</div>\n",
            passing * 100 / checked
        ));
    }
    page.push_str("</div>\n");
    if checked > 0 {
        page.push_str(
            "<p class=\"note\">Score: the workloads checked (pod templates) that have no error \
             finding, in per cent of those checked (rounded down). Warnings and info do not lower \
             it. It is not Polaris's score, which weighs the checks each object passes.</p>\n",
        );
    }
    if c.hidden > 0 {
        page.push_str(&format!(
            "<p class=\"note\">{} findings below --severity are counted above but not listed \
             below.</p>\n",
            c.hidden
        ));
    }
    page.push_str("</section>\n");
}

/// The findings shown, per namespace (the manifests' `metadata.namespace`, or the cluster's).
fn namespaces(page: &mut String, stats: &Statistics, audit: bool) {
    let rows = stats.namespaces();
    if rows.is_empty() {
        return;
    }
    page.push_str(
        "<section id=\"namespaces\">\n<h2>Per namespace</h2>\n<table>\n<thead><tr>\
         <th>Namespace</th><th class=\"num\">Errors</th><th class=\"num\">Warnings</th>\
         <th class=\"num\">Info</th></tr></thead>\n<tbody>\n",
    );
    for (ns, c) in rows {
        let label = match ns {
            Some(n) => escape(n),
            // A manifest that names none: kubectl's namespace is not known here.
            None if !audit => "<i>(not given)</i>".to_string(),
            None => "<i>(cluster-scoped)</i>".to_string(),
        };
        page.push_str(&format!(
            "<tr><td>{label}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>\
             <td class=\"num\">{}</td></tr>\n",
            c[0], c[1], c[2]
        ));
    }
    page.push_str("</tbody>\n</table>\n</section>\n");
}

/// The findings shown, per rule and severity, most first; each rule links to its page.
fn rules(page: &mut String, stats: &Statistics) {
    let rows = stats.rules();
    if rows.is_empty() {
        return;
    }
    page.push_str(
        "<section id=\"rules\">\n<h2>Per rule</h2>\n<table>\n<thead><tr>\
         <th class=\"num\">Count</th><th>Rule</th><th>Name</th><th>Severity</th>\
         <th class=\"num\">Fixable</th></tr></thead>\n<tbody>\n",
    );
    for r in rows {
        let sev = r.severity.as_str();
        page.push_str(&format!(
            "<tr><td class=\"num\">{}</td><td><a href=\"{}\">{}</a></td><td>{}</td>\
             <td class=\"{sev}\">{sev}</td><td class=\"num\">{}</td></tr>\n",
            r.count,
            escape(&r.rule.docs_url()),
            escape(r.rule.id),
            escape(r.rule.name),
            r.fixable
        ));
    }
    page.push_str("</tbody>\n</table>\n</section>\n");
}

/// What could not be read (lint) or listed (audit).
fn input_errors(page: &mut String, errors: &[InputError], audit: bool) {
    if errors.is_empty() {
        return;
    }
    let title = match audit {
        true => "Could not be listed",
        false => "Could not be read",
    };
    page.push_str(&format!(
        "<section id=\"errors\">\n<h2>{title}</h2>\n<ul>\n"
    ));
    for e in errors {
        let place = match e.line {
            0 => e.file.clone(),
            _ => format!("{}:{}:{}", e.file, e.line, e.column),
        };
        page.push_str(&format!(
            "<li><code>{}</code>: {}</li>\n",
            escape(&place),
            escape(&e.message)
        ));
    }
    page.push_str("</ul>\n</section>\n");
}

/// `s` as HTML text or a double- or single-quoted attribute value: the five characters that
/// can end either or start markup are replaced by entities, the rest is kept (the page is
/// UTF-8). Not for other contexts (a script, a style, an unquoted attribute, a URL's scheme):
/// the page puts text in none of them. No crate in the lock file escapes HTML, and a new one
/// for five `match` arms would cost more than it saves.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The page's head and style: system fonts, severity colours that also carry a word (never the
/// colour alone). The Content-Security-Policy allows the inline style and nothing else: should
/// markup from a manifest ever slip past [`escape`], the browser would still run no script and
/// load nothing.
const HEAD: &str = concat!(
    r#"<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="winlint">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<title>winlint report</title>
<style>
"#,
    include_str!("html.css"),
    r#"</style>
</head>
<body>
"#
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Finding, Fix, FixSafety};
    use crate::report::{AuditSummary, ClusterSummary, FixState};
    use crate::rules;

    /// A finding of `winlint audit` on `ns/Kind/name`: placed by the pointer, never fixable.
    fn audited(ns: &str, kind_name: &str, rule: &str, pointer: &str, message: &str) -> Located {
        let meta = rules::find(rule).unwrap().meta;
        Located {
            file: format!("{ns}/{kind_name}"),
            line: 0,
            column: 0,
            pointer: pointer.into(),
            object: kind_name.into(),
            namespace: Some(ns.into()),
            finding: Finding::new(meta, pointer, message),
            fix: FixState::None,
            not_fixed: None,
            rendered: None,
            cluster_namespace: Some(ns.into()),
        }
    }

    /// `winlint audit -A -o html` as the report layer receives it (the records
    /// src/cli/cluster.rs makes; tests/k8s_audit.rs runs the real thing against an API
    /// server): the namespaces' table, objects named `namespace/Kind/name` and placed by
    /// pointer, what could not be listed. The golden file is testdata/html/audit.html
    /// (`WINLINT_BLESS=1` rewrites it).
    #[test]
    fn audit_records_make_the_namespace_breakdown() {
        let mut findings = [
            audited(
                "prod",
                "Deployment/iis",
                "WIN007",
                "/spec/template/spec",
                "The Windows nodes this pod can select are tainted os=windows:NoSchedule but \
                 the pod does not tolerate it; it will stay Pending. Add a toleration",
            ),
            audited(
                "prod",
                "Deployment/iis",
                "WIN003",
                "/spec/template/spec",
                "Windows pod has no spec.os",
            ),
            audited(
                "prod",
                "Pod/debug",
                "WIN003",
                "",
                "Windows pod has no spec.os",
            ),
            audited(
                "shop",
                "CronJob/report",
                "WIN001",
                "/spec/jobTemplate/spec/template/spec",
                "Windows pod has no OS node selector",
            ),
        ];
        // Nothing edits the cluster: the fix is said, without a --fix tag.
        findings[0].finding.fix = Some(Fix {
            safety: FixSafety::Safe,
            description: "add toleration for os=windows:NoSchedule".into(),
            ops: vec![],
        });
        let summary = Summary {
            objects: 5,
            pods: 5,
            audit: Some(AuditSummary {
                namespaces: 3,
                cluster_pods: 9,
            }),
            cluster: Some(ClusterSummary {
                context: Some("kind-win".into()),
                server: "https://127.0.0.1:6443".into(),
                facts: vec!["Kubernetes 1.32".into(), "1 Windows node (ltsc2022)".into()],
            }),
            ..Summary::default()
        };
        let errors = [InputError {
            file: "jobs in namespace prod".into(),
            line: 0,
            column: 0,
            message: "forbidden: jobs.batch is forbidden".into(),
        }];
        let mut counts = Counts::default();
        let mut out = Vec::new();
        let mut html = HtmlReport::new(&mut out);
        for l in &findings {
            assert!(counts.add(l));
            html.push(l);
        }
        html.finish(&counts, &errors, &summary).unwrap();
        let page = String::from_utf8(out).unwrap();

        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/html/audit.html");
        if std::env::var_os("WINLINT_BLESS").is_some() {
            std::fs::write(path, &page).unwrap();
        }
        let expected = std::fs::read_to_string(path).unwrap();
        assert!(expected == page, "{path} differs:\n{page}");

        // What the golden file must show, said here so a blessed mistake fails.
        for want in [
            // Most errors first, then by name: prod (WIN007 is an error, WIN003 twice a
            // warning), then shop.
            "<tr><td>prod</td><td class=\"num\">1</td><td class=\"num\">2</td><td class=\"num\">0</td></tr>\n\
             <tr><td>shop</td><td class=\"num\">1</td><td class=\"num\">0</td><td class=\"num\">0</td></tr>",
            "<h3>prod/Deployment/iis</h3>\n<p class=\"where\">in the cluster</p>",
            "<span class=\"at\">at <code>/spec/template/spec</code></span>",
            "Add a toleration</p>\n<p class=\"fix\"><b>fix:</b> add toleration for \
             os=windows:NoSchedule</p>",
            // The pod's own spec is the whole object: its pointer is the root.
            "<span class=\"at\">at <code>/</code></span>",
            "<li><code>jobs in namespace prod</code>: forbidden: jobs.batch is forbidden</li>",
            // prod/Deployment/iis and shop/CronJob/report have an error: 3 of the 5 do not.
            "<span class=\"n\">60%</span> workloads without errors (3 of 5)",
            "context kind-win at https://127.0.0.1:6443",
        ] {
            assert!(page.contains(want), "{want:?} not in\n{page}");
        }
        // Each object once, in report order.
        assert_eq!(page.matches("<article class=\"object\">").count(), 3);
    }

    /// Rendered input (a chart, a kustomization): the object is in the template, whose lines
    /// are not the rendered ones; the header names the template and how it was rendered, the
    /// finding is placed by its pointer.
    #[test]
    fn rendered_objects_name_the_template_and_the_field() {
        let mut l = audited(
            "web",
            "Deployment/iis",
            "WIN003",
            "/spec/template/spec",
            "m",
        );
        l.file = "charts/iis/templates/deployment.yaml".into();
        l.cluster_namespace = None;
        l.rendered = Some("helm template".into());
        let mut out = Vec::new();
        let mut html = HtmlReport::new(&mut out);
        html.push(&l);
        let mut counts = Counts::default();
        counts.add(&l);
        html.finish(&counts, &[], &Summary::default()).unwrap();
        let page = String::from_utf8(out).unwrap();
        assert!(
            page.contains(
                "<h3>web/Deployment/iis</h3>\n<p class=\"where\">\
                 charts/iis/templates/deployment.yaml (helm template)</p>"
            ),
            "{page}"
        );
        assert!(
            page.contains("at <code>/spec/template/spec</code>"),
            "{page}"
        );
        // No object counted: no score.
        assert!(!page.contains("card score"), "{page}");
    }

    #[test]
    fn escape_replaces_what_can_start_markup_or_end_an_attribute() {
        assert_eq!(
            escape(r#"<script>alert("x" & 'y')</script>"#),
            "&lt;script&gt;alert(&quot;x&quot; &amp; &#39;y&#39;)&lt;/script&gt;"
        );
        // Already escaped text is escaped again: it is text, not markup.
        assert_eq!(escape("&lt;"), "&amp;lt;");
        // Everything else is kept, multi-byte characters whole.
        assert_eq!(
            escape("ns/Deployment/iis — 日本 ✓"),
            "ns/Deployment/iis — 日本 ✓"
        );
        assert_eq!(escape(""), "");
    }
}
