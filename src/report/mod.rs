//! Reports, one module per format: [`text`] (people), [`html`] (an overview in a browser),
//! [`json`] (machines), [`sarif`] (code-scanning UIs), [`github`] and [`codequality`] (CI). What they share is here: a finding
//! placed ([`Located`]), the input errors, the summary's counters.

pub mod ci;
pub mod codequality;
pub mod github;
pub mod grouped;
pub mod html;
pub mod json;
pub mod policy_report;
pub mod sarif;
pub mod statistics;
pub mod text;
pub mod view;

pub use codequality::CodeQualityReport;
pub use github::GithubReport;
pub use html::HtmlReport;
pub use json::JsonReport;
pub use sarif::sarif_value;
pub use statistics::Statistics;
pub use text::{TextReport, strip_styles, summary_line};
pub use view::{TextLayout, ViewArgs};

use serde::Serialize;

use crate::model::{Finding, Severity};

/// A finding placed in a file.
#[derive(Debug, Clone)]
pub struct Located {
    pub file: String,
    pub line: usize,
    pub column: usize,
    /// JSON pointer into the document (`/items/0/spec/…` for List items).
    pub pointer: String,
    /// `Deployment/web` (kind and name; the namespace is [`Located::namespace`]). Part of the
    /// finding's identity in CI fingerprints ([`ci::Fingerprints`]): kept as it was.
    pub object: String,
    /// The object's namespace: `metadata.namespace` as the manifest writes it (`None` when it
    /// does not: the namespace kubectl would apply is not known here, and `default` would be a
    /// guess), or the namespace in the cluster (`winlint audit`).
    pub namespace: Option<String>,
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

impl Located {
    /// The object as every report names it: `namespace/Kind/name`, or `Kind/name` when the
    /// manifest gives no namespace ([`object_name`]).
    pub fn object_name(&self) -> String {
        object_name(self.namespace.as_deref(), &self.object)
    }
}

/// `s` with its control characters written as escapes (`\n`, `\r`, `\t`, `\u{1b}`): what a
/// text report prints of a manifest, a file name or a tool's message. A manifest's strings may
/// hold line breaks, carriage returns and terminal escapes; printed raw they would forge lines of
/// the report (in GitHub Actions, `::error …` workflow commands) or drive the terminal.
/// Every C0 and C1 control and DEL is escaped; other text is kept as it is.
pub fn printable(s: &str) -> std::borrow::Cow<'_, str> {
    use std::fmt::Write as _;
    if !s.chars().any(char::is_control) {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    std::borrow::Cow::Owned(out)
}

/// `namespace/Kind/name`, or `Kind/name` without a namespace: the one form the linter and
/// `winlint audit` print (kube-linter prints `namespace/name Kind`; this one reads as a path and
/// is what `kubectl get` takes as `Kind/name` once the namespace is cut off).
pub fn object_name(namespace: Option<&str>, kind_name: &str) -> String {
    match namespace {
        Some(ns) if !ns.is_empty() => format!("{ns}/{kind_name}"),
        _ => kind_name.to_string(),
    }
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

/// Totals over the findings, kept while they stream past: all of them (the summary line and the
/// exit code count every finding), and what `--severity` and `--statistics` need.
#[derive(Debug, Clone, Default)]
pub struct Counts {
    pub errors: usize,
    pub warnings: usize,
    pub info: usize,
    pub fixable: usize,
    pub not_fixed: usize,
    /// The findings `--severity` leaves out of the report.
    pub hidden: usize,
    /// The lowest severity shown (`--severity`); `None` shows every finding.
    pub shown_from: Option<Severity>,
    /// `--statistics`: the counts of the findings shown.
    pub statistics: Option<Statistics>,
}

impl Counts {
    /// Counters that show findings from `min` up, and keep statistics if asked.
    pub fn showing(min: Severity, statistics: bool) -> Counts {
        Counts {
            shown_from: (min > Severity::Info).then_some(min),
            statistics: statistics.then(Statistics::default),
            ..Counts::default()
        }
    }

    /// Count a finding; whether the report shows it.
    pub fn add(&mut self, l: &Located) -> bool {
        match l.finding.severity {
            Severity::Error => self.errors += 1,
            Severity::Warning => self.warnings += 1,
            Severity::Info => self.info += 1,
        }
        self.fixable += usize::from(l.fix == FixState::Fixable);
        self.not_fixed += usize::from(l.fix == FixState::NotFixed);
        if self.shown_from.is_some_and(|min| l.finding.severity < min) {
            self.hidden += 1;
            return false;
        }
        if let Some(s) = &mut self.statistics {
            s.add(l);
        }
        true
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

#[cfg(test)]
mod tests {
    #[test]
    fn printable_escapes_every_control_character() {
        use super::printable;
        assert!(matches!(
            printable("ns/Pod/web: C:\\Windows é"),
            std::borrow::Cow::Borrowed(_)
        ));
        assert_eq!(
            printable("a\nb\r\tc\x1b[31md\u{9b}e\x7f\0"),
            "a\\nb\\r\\tc\\u{1b}[31md\\u{9b}e\\u{7f}\\u{0}"
        );
    }

    use super::*;
    use crate::rules;
    use serde_json::{Value, json};

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
            namespace: Some("prod".into()),
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
        // Grouped, the object is the header and the pointer is under the rule.
        let mut grouped = TextReport::with_layout(TextLayout::Grouped { width: 40 });
        grouped.push(&l);
        let grouped = strip_styles(&grouped.finish(&counts, &[], &summary)).unwrap();
        let grouped = String::from_utf8(grouped).unwrap();
        assert!(
            grouped.starts_with(
                "prod/Deployment/iis\n  error WIN007 missing-windows-toleration\n    at \
                 /spec/template/spec/tolerations\n    not tolerated\n\n"
            ),
            "{grouped}"
        );

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
}
