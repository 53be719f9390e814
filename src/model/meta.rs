//! A rule's static description: its identity and documentation, and everything a front end needs
//! to know about it (which pods it runs on, how the webhook treats its fix).

use serde::Serialize;

/// How bad a finding is. Ordered: `Info < Warning < Error`.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Info,
    Warning,
    Error,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

impl std::str::FromStr for Severity {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.to_ascii_lowercase().as_str() {
            "info" => Ok(Severity::Info),
            "warning" | "warn" => Ok(Severity::Warning),
            "error" => Ok(Severity::Error),
            other => Err(format!(
                "unknown severity {other:?} (expected info, warning or error)"
            )),
        }
    }
}

/// Whether a fix may be applied without asking.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FixSafety {
    /// The webhook may apply it silently and `winlint --fix` applies it by default.
    Safe,
    /// Applied only when the policy (`fix.optIn` / `--fix-opt-in`) names the rule.
    OptIn,
}

/// Static description of a rule.
#[derive(Debug)]
pub struct RuleMeta {
    /// Stable ID, e.g. `WIN403`.
    pub id: &'static str,
    /// Stable kebab-case name, e.g. `env-name-invalid`.
    pub name: &'static str,
    /// Default severity (some rules pick another one per target; the finding carries the real one).
    pub severity: Severity,
    /// One line: what the rule checks.
    pub summary: &'static str,
    /// Markdown: `## What it does`, `## Why is this bad?`, `## Example`, `## Fix` sections.
    pub docs: &'static str,
    /// The fix the rule offers, if any.
    pub fix: Option<FixSafety>,
    /// Where the rule comes from (keys of shared/rules.md §0).
    pub source: &'static str,
    /// When the rule applies, in words ("K≥1.23", "W≤1709", "all").
    pub applies: &'static str,
}
