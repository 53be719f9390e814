//! The CI formats: `-o github` (workflow commands: inline annotations on pull requests) and
//! `-o codequality` (GitLab Code Quality JSON), plus what they share with SARIF: CI paths and the
//! findings' fingerprints. The text, JSON and SARIF reports are in [`crate::report`]; this module holds what the CI
//! formats share with SARIF.
//!
//! No JUnit: it would map findings onto tests that do not exist (a clean object is no test case,
//! a warning is neither a pass nor a failure), and the CI systems that read it have a better
//! reader for lint results: GitLab reads `codequality`, Jenkins (Warnings NG) and Azure DevOps
//! (the SARIF SAST Scans tab) read SARIF, GitHub reads annotations and SARIF.

use std::collections::HashMap;

use crate::report::Located;

/// A file name as CI systems want it: relative to the directory winlint ran in (the checkout),
/// without a leading `./`, with `/` separators. Absolute paths outside that directory stay
/// absolute; stdin is `stdin`.
pub fn ci_path(file: &str) -> String {
    if file == "<stdin>" {
        return "stdin".into();
    }
    let mut p = file.replace('\\', "/");
    if p.starts_with('/')
        && let Some(cwd) = std::env::current_dir().ok().and_then(|d| {
            d.to_str()
                .map(|s| format!("{}/", s.replace('\\', "/").trim_end_matches('/')))
        })
        && let Some(rel) = p.strip_prefix(&cwd)
    {
        p = rel.to_string();
    }
    while let Some(rest) = p.strip_prefix("./") {
        p = rest.trim_start_matches('/').to_string();
    }
    p
}

/// Fingerprints of findings: SHA-256 of the finding's identity, its CI path, rule, object
/// (`Kind/name`), JSON pointer and, for rendered objects, how they were rendered. Not its line:
/// a finding keeps its fingerprint when lines above it are added or removed, and across runs.
/// Findings of the same identity in one report (two objects of the same kind and name in one
/// file) are told apart by their order.
#[derive(Default)]
pub struct Fingerprints {
    seen: HashMap<String, u32>,
}

impl Fingerprints {
    /// The fingerprint of `l` (64 hex digits), the next in report order.
    pub fn of(&mut self, l: &Located) -> String {
        self.next(&[
            &ci_path(&l.file),
            l.finding.rule.id,
            &l.object,
            &l.pointer,
            l.rendered.as_deref().unwrap_or(""),
        ])
    }

    /// The fingerprint of an identity given as fields.
    pub fn next(&mut self, fields: &[&str]) -> String {
        let base = sha256_hex(fields);
        let n = self.seen.entry(base.clone()).or_insert(0);
        *n += 1;
        if *n == 1 {
            base
        } else {
            sha256_hex(&[&base, &n.to_string()])
        }
    }
}

fn sha256_hex(fields: &[&str]) -> String {
    // Each field's length first: fields cannot run into each other.
    let lengths: Vec<[u8; 8]> = fields
        .iter()
        .map(|f| (f.len() as u64).to_le_bytes())
        .collect();
    let mut parts: Vec<&[u8]> = vec![b"winlint/v1"];
    for (f, n) in fields.iter().zip(&lengths) {
        parts.push(n);
        parts.push(f.as_bytes());
    }
    crate::model::digest::sha256_hex(&parts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ci_paths_are_relative_and_slashed() {
        assert_eq!(ci_path("./k8s/a.yaml"), "k8s/a.yaml");
        assert_eq!(ci_path(".//k8s/a.yaml"), "k8s/a.yaml");
        assert_eq!(ci_path("k8s\\a.yaml"), "k8s/a.yaml");
        assert_eq!(ci_path("<stdin>"), "stdin");
        assert_eq!(ci_path("/elsewhere/a.yaml"), "/elsewhere/a.yaml");
        let cwd = std::env::current_dir().unwrap();
        assert_eq!(
            ci_path(cwd.join("k8s/a.yaml").to_str().unwrap()),
            "k8s/a.yaml"
        );
    }

    #[test]
    fn fingerprints_are_stable_distinct_and_counted() {
        let mut a = Fingerprints::default();
        let mut b = Fingerprints::default();
        let one = a.next(&["f.yaml", "WIN001", "Deployment/x", "/spec"]);
        assert_eq!(one.len(), 64);
        assert_eq!(one, b.next(&["f.yaml", "WIN001", "Deployment/x", "/spec"]));
        let again = a.next(&["f.yaml", "WIN001", "Deployment/x", "/spec"]);
        assert_ne!(one, again, "a repeated identity gets its own fingerprint");
        assert_ne!(
            a.next(&["f.yaml", "WIN001", "Deployment/x", "/spe", "c"]),
            a.next(&["f.yaml", "WIN001", "Deployment/x", "/spec", ""]),
            "fields do not run into each other"
        );
    }
}
