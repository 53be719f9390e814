//! A fleet's plan (`winlint plan --cluster --context a --context b`): each cluster planned
//! against its own facts ([`Plan`]), and a summary over them: the workloads per verdict per
//! cluster and in total, the blocked workloads of every cluster first. Text, JSON, Markdown
//! and one HTML page, as for one cluster.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;

use super::Verdict;
use super::report::{Plan, html_start, md};
use crate::report::printable;

/// One cluster of the fleet: its plan, or why it could not be planned.
#[derive(Debug, Clone, Serialize)]
pub struct ClusterPlan {
    /// Its kubeconfig context (else its server, else the kubeconfig asked for).
    pub cluster: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plan: Option<Plan>,
    /// The cluster could not be read (unreachable, refused credentials, RBAC).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// One blocked workload of the fleet, for the summary.
#[derive(Debug, Clone, Serialize)]
pub struct Blocked {
    pub cluster: String,
    pub object: String,
    pub verdict: Verdict,
    /// The first change it needs (its cluster's section has them all).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub change: Option<String>,
}

/// The whole fleet's plan.
#[derive(Debug, Clone, Serialize)]
pub struct Fleet {
    /// Workloads per verdict over every cluster planned.
    pub total: BTreeMap<Verdict, usize>,
    /// Workloads per verdict per cluster (the clusters planned).
    pub counts: BTreeMap<String, BTreeMap<Verdict, usize>>,
    /// Every blocked workload, most urgent first, then by cluster and object.
    pub blocked: Vec<Blocked>,
    /// In the order the clusters were given.
    pub clusters: Vec<ClusterPlan>,
}

impl Fleet {
    /// The summary of `clusters`, each plan already [`Plan::finish`]ed.
    pub fn new(clusters: Vec<ClusterPlan>) -> Fleet {
        let mut total: BTreeMap<Verdict, usize> = Verdict::ALL.iter().map(|&v| (v, 0)).collect();
        let mut counts = BTreeMap::new();
        let mut blocked = Vec::new();
        for c in &clusters {
            let Some(plan) = &c.plan else { continue };
            for (&v, &n) in &plan.counts {
                *total.entry(v).or_default() += n;
            }
            counts.insert(c.cluster.clone(), plan.counts.clone());
            for w in plan.workloads.iter().filter(|w| w.verdict.blocks()) {
                let change = (w.pod.iter().filter_map(|p| p.change.clone()))
                    .chain(w.containers.iter().filter_map(|c| c.change.clone()))
                    .next();
                blocked.push(Blocked {
                    cluster: c.cluster.clone(),
                    object: w.object.clone(),
                    verdict: w.verdict,
                    change,
                });
            }
        }
        blocked.sort_by(|a, b| {
            (a.verdict, &a.cluster, &a.object).cmp(&(b.verdict, &b.cluster, &b.object))
        });
        Fleet {
            total,
            counts,
            blocked,
            clusters,
        }
    }

    /// Plans of the clusters that could be read.
    fn plans(&self) -> impl Iterator<Item = (&str, &Plan)> {
        (self.clusters.iter()).filter_map(|c| c.plan.as_ref().map(|p| (c.cluster.as_str(), p)))
    }

    /// Some cluster could not be read, or some input not planned.
    pub fn has_errors(&self) -> bool {
        self.clusters
            .iter()
            .any(|c| c.error.is_some() || c.plan.as_ref().is_some_and(|p| !p.errors.is_empty()))
    }

    /// Some workload of the fleet has one of `verdicts`.
    pub fn any(&self, verdicts: impl Fn(Verdict) -> bool) -> bool {
        self.plans()
            .any(|(_, p)| p.workloads.iter().any(|w| verdicts(w.verdict)))
    }

    /// The rows of the summary table: (cluster, counts per verdict in [`Verdict::ALL`] order,
    /// blocked, workloads) or (cluster, error), then the total.
    fn rows(&self) -> Vec<(String, Result<Vec<usize>, String>)> {
        let row = |counts: &BTreeMap<Verdict, usize>| {
            let mut r: Vec<usize> = Verdict::ALL
                .iter()
                .map(|v| counts.get(v).copied().unwrap_or(0))
                .collect();
            let blocked: usize = (Verdict::ALL.iter().zip(&r))
                .filter(|(v, _)| v.blocks())
                .map(|(_, n)| n)
                .sum();
            let all: usize = r.iter().sum();
            r.extend([blocked, all]);
            r
        };
        let mut rows: Vec<_> = (self.clusters.iter())
            .map(|c| {
                let cells = match (&c.plan, &c.error) {
                    (Some(p), _) => Ok(row(&p.counts)),
                    (None, e) => Err(e.clone().unwrap_or_default()),
                };
                (c.cluster.clone(), cells)
            })
            .collect();
        rows.push(("total".into(), Ok(row(&self.total))));
        rows
    }

    fn columns() -> Vec<&'static str> {
        let mut c: Vec<&str> = Verdict::ALL.iter().map(|v| v.name()).collect();
        c.extend(["blocked", "workloads"]);
        c
    }

    fn summary_line(&self) -> String {
        let planned = self.plans().count();
        let workloads: usize = self.total.values().sum();
        let unread = self.clusters.len() - planned;
        format!(
            "{} cluster(s){}: {workloads} Windows workload(s), {} blocked",
            planned,
            match unread {
                0 => String::new(),
                n => format!(" ({n} not read)"),
            },
            self.blocked.len()
        )
    }

    pub fn json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a fleet's plan serializes") + "\n"
    }

    pub fn text(&self) -> String {
        let mut o = format!("winlint plan: a fleet, {}\n\n", self.summary_line());
        let width = (self.clusters.iter().map(|c| c.cluster.chars().count()))
            .chain([7])
            .max()
            .unwrap_or(7);
        let _ = write!(o, "{:<width$}", "cluster");
        for c in Self::columns() {
            let _ = write!(o, "  {c:>w$}", w = c.len().max(3));
        }
        o.push('\n');
        for (name, cells) in self.rows() {
            let _ = write!(o, "{:<width$}", printable(&name));
            match cells {
                Ok(cells) => {
                    for (c, n) in Self::columns().into_iter().zip(cells) {
                        let _ = write!(o, "  {n:>w$}", w = c.len().max(3));
                    }
                }
                Err(e) => {
                    let _ = write!(o, "  not read: {}", printable(&e));
                }
            }
            o.push('\n');
        }
        if !self.blocked.is_empty() {
            let _ = writeln!(o, "\nBlocked ({}):", self.blocked.len());
            for b in &self.blocked {
                let _ = writeln!(
                    o,
                    "  {:<12} {}  {}",
                    b.verdict.name(),
                    printable(&b.cluster),
                    printable(&b.object)
                );
                if let Some(c) = &b.change {
                    let _ = writeln!(o, "    change: {}", printable(c));
                }
            }
        }
        for (name, plan) in self.plans() {
            let _ = write!(o, "\n######## cluster {} ########\n", printable(name));
            o.push_str(&plan.text());
        }
        o
    }

    pub fn markdown(&self) -> String {
        let mut o = format!(
            "### winlint plan: a fleet\n\n{}\n\n",
            md(&self.summary_line())
        );
        let columns = Self::columns();
        let _ = writeln!(
            o,
            "| cluster | {} |\n|---|{}",
            columns.join(" | "),
            "---:|".repeat(columns.len())
        );
        for (name, cells) in self.rows() {
            let cells = match cells {
                Ok(cells) => cells
                    .iter()
                    .map(usize::to_string)
                    .collect::<Vec<_>>()
                    .join(" | "),
                Err(e) => format!("not read: {}", md(&e)),
            };
            let _ = writeln!(o, "| `{}` | {cells} |", md(&name));
        }
        if !self.blocked.is_empty() {
            let _ = writeln!(
                o,
                "\n#### Blocked\n\n| verdict | cluster | workload | change |\n|---|---|---|---|"
            );
            for b in &self.blocked {
                let _ = writeln!(
                    o,
                    "| ⛔ {} | `{}` | `{}` | {} |",
                    b.verdict.name(),
                    md(&b.cluster),
                    md(&b.object),
                    md(b.change.as_deref().unwrap_or(""))
                );
            }
        }
        for (name, plan) in self.plans() {
            let _ = write!(
                o,
                "\n<details><summary>cluster <code>{}</code>: {} blocked</summary>\n\n{}\n</details>\n",
                crate::report::html::escape(name),
                plan.blocked(),
                plan.markdown()
            );
        }
        o
    }

    /// One page: the summary table, the blocked workloads, then one section per cluster
    /// (the page of [`Plan::html`] without its head).
    pub fn html(&self) -> String {
        use crate::report::html::escape;
        let mut o = html_start("winlint plan: fleet");
        let _ = write!(
            o,
            "<p class=\"summary\">{}</p>\n<section id=\"fleet\">\n<h2>Clusters</h2>\n<table>\n<tr><th>cluster</th>",
            escape(&self.summary_line())
        );
        for c in Self::columns() {
            let _ = write!(o, "<th>{c}</th>");
        }
        o.push_str("</tr>\n");
        for (i, (name, cells)) in self.rows().into_iter().enumerate() {
            let link = match self.clusters.get(i) {
                Some(c) if c.plan.is_some() => {
                    format!("<a href=\"#cluster-{i}\">{}</a>", escape(&name))
                }
                _ => escape(&name),
            };
            let _ = write!(o, "<tr><td>{link}</td>");
            match cells {
                Ok(cells) => {
                    for n in cells {
                        let _ = write!(o, "<td class=\"num\">{n}</td>");
                    }
                }
                Err(e) => {
                    let _ = write!(
                        o,
                        "<td colspan=\"{}\">not read: {}</td>",
                        Self::columns().len(),
                        escape(&e)
                    );
                }
            }
            o.push_str("</tr>\n");
        }
        o.push_str("</table>\n</section>\n");
        if !self.blocked.is_empty() {
            o.push_str("<section id=\"blocked\">\n<h2>Blocked</h2>\n<ol>\n");
            for b in &self.blocked {
                let _ = write!(
                    o,
                    "<li class=\"finding blocked\"><p><span class=\"rule\">{}</span> {} <code>{}</code></p>",
                    b.verdict.name(),
                    escape(&b.cluster),
                    escape(&b.object)
                );
                if let Some(c) = &b.change {
                    let _ = write!(o, "<p class=\"fix\"><b>change:</b> {}</p>", escape(c));
                }
                o.push_str("</li>\n");
            }
            o.push_str("</ol>\n</section>\n");
        }
        for (i, c) in self.clusters.iter().enumerate() {
            let Some(plan) = &c.plan else { continue };
            let _ = writeln!(
                o,
                "<section class=\"cluster\" id=\"cluster-{i}\">\n<h2>cluster {}</h2>",
                escape(&c.cluster)
            );
            plan.html_body(&mut o, &format!("cluster-{i}-"));
            o.push_str("</section>\n");
        }
        o.push_str("</body>\n</html>\n");
        o
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{ContainerPlan, WorkloadPlan};

    fn workload(object: &str, verdict: Verdict) -> WorkloadPlan {
        WorkloadPlan {
            object: object.into(),
            file: "cluster x".into(),
            verdict,
            pod: vec![],
            containers: vec![ContainerPlan {
                container: "container \"c\"".into(),
                image: "example.com/a:1".into(),
                verdict,
                build: "10.0.26100".into(),
                evidence: "why".into(),
                change: Some(format!("change {object}")),
                fix: None,
                pointer: String::new(),
            }],
        }
    }

    fn plan(workloads: Vec<WorkloadPlan>) -> Plan {
        let mut p = Plan {
            from: vec!["10.0.17763 (ltsc2019)".into()],
            to: vec!["10.0.26100 (ltsc2025)".into()],
            platform: None,
            kubernetes_from: "1.32".into(),
            kubernetes_to: "1.32".into(),
            isolation: "process".into(),
            as_of: "2026-11-29".into(),
            facts: "cluster".into(),
            registry: false,
            lifecycle: vec![],
            counts: Default::default(),
            not_windows: 0,
            workloads,
            errors: vec![],
        };
        p.finish();
        p
    }

    fn fleet() -> Fleet {
        let one = |cluster: &str, plan| ClusterPlan {
            cluster: cluster.into(),
            plan: Some(plan),
            error: None,
        };
        Fleet::new(vec![
            one(
                "b",
                plan(vec![
                    workload("ns/Deployment/ok", Verdict::RunsAsIs),
                    workload("ns/Deployment/rb", Verdict::Rebuild),
                ]),
            ),
            ClusterPlan {
                cluster: "<gone>".into(),
                plan: None,
                error: Some("connection refused".into()),
            },
            one(
                "a",
                plan(vec![
                    workload("ns/Deployment/pin", Verdict::PinBreaks),
                    workload("ns/Deployment/re", Verdict::Retag),
                ]),
            ),
        ])
    }

    #[test]
    fn sums_per_cluster_and_lists_the_blocked_first() {
        let f = fleet();
        let total: Vec<usize> = Verdict::ALL.iter().map(|v| f.total[v]).collect();
        assert_eq!(total, [1, 1, 0, 0, 1, 0, 1]);
        assert_eq!(f.counts.len(), 2);
        let blocked: Vec<(&str, &str)> = (f.blocked.iter())
            .map(|b| (b.cluster.as_str(), b.object.as_str()))
            .collect();
        assert_eq!(
            blocked,
            [("a", "ns/Deployment/pin"), ("b", "ns/Deployment/rb")]
        );
        assert_eq!(
            f.blocked[0].change.as_deref(),
            Some("change ns/Deployment/pin")
        );
        assert!(f.has_errors());
        assert!(f.any(|v| v == Verdict::Retag));
        assert!(!f.any(|v| v == Verdict::NeedsHyperv));
    }

    #[test]
    fn every_format_shows_the_summary_before_the_clusters() {
        let f = fleet();
        let text = f.text();
        assert!(
            text.contains("2 cluster(s) (1 not read): 4 Windows workload(s), 2 blocked"),
            "{text}"
        );
        assert!(
            text.contains("<gone>   not read: connection refused"),
            "{text}"
        );
        let at = |s: &str, what: &str| s.find(what).unwrap_or_else(|| panic!("{what} in {s}"));
        assert!(at(&text, "Blocked (2):") < at(&text, "######## cluster b"));
        assert!(at(&text, "######## cluster b") < at(&text, "######## cluster a"));
        let md = f.markdown();
        assert!(
            md.contains("| `b` | 0 | 1 | 0 | 0 | 0 | 0 | 1 | 1 | 2 |"),
            "{md}"
        );
        assert!(
            md.contains("| `total` | 1 | 1 | 0 | 0 | 1 | 0 | 1 | 2 | 4 |"),
            "{md}"
        );
        let html = f.html();
        assert!(!html.contains("<gone>"), "{html}");
        assert!(html.contains("&lt;gone&gt;"), "{html}");
        // One body per planned cluster, its sections' ids its own.
        assert!(html.contains("id=\"cluster-0-overview\""), "{html}");
        assert!(html.contains("id=\"cluster-2-workloads\""), "{html}");
        assert!(at(&html, "id=\"blocked\"") < at(&html, "id=\"cluster-0\""));
        let json: serde_json::Value = serde_json::from_str(&f.json()).unwrap();
        assert_eq!(json["clusters"][1]["error"], "connection refused");
        assert_eq!(json["total"]["pin-breaks"], 1);
    }
}
