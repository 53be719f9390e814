//! A rule's static description: its identity and documentation, and everything a front end needs
//! to know about it (which pods it runs on, how the webhook treats its fix).

use serde::Serialize;

pub use super::reads::{Area, Reads};
use super::target::Target;

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

/// A severity that is not `info`, `warning` or `error`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown severity {0:?} (expected info, warning or error)")]
pub struct UnknownSeverity(pub String);

impl std::str::FromStr for Severity {
    type Err = UnknownSeverity;
    fn from_str(s: &str) -> Result<Self, UnknownSeverity> {
        match s.to_ascii_lowercase().as_str() {
            "info" => Ok(Severity::Info),
            "warning" | "warn" => Ok(Severity::Warning),
            "error" => Ok(Severity::Error),
            other => Err(UnknownSeverity(other.to_string())),
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
    /// The pods the rule runs on.
    pub os: RuleOs,
    /// Whether the rule runs unless the configuration turns it off. A rule that is off by
    /// default runs only when enabled (`rules: {WIN308: on}` in `winlint.yaml`, `--enable
    /// WIN308`): its findings are right but rarely worth reading on real manifests.
    pub default_on: bool,
    /// How the webhook's mutation treats the rule's fix.
    pub mutation: Mutation,
    /// The parts of the pod the rule reads, directly or through a helper ([`Reads`]): after
    /// the fixer patches a pod, the rule runs again only when the patch touched one of them
    /// (`engine::lint_since`); else its findings are carried over. [`Reads::ALL`] is always
    /// right; a narrower declaration is checked by `engine::reads_check`'s property test.
    pub reads: Reads,
}

/// Where the rules' documentation pages live: `docs/rules/WINxxx.md` of the project's
/// repository, generated from the metadata ([`RuleMeta::page`]; `cargo test --test rule_docs`
/// keeps them in step). Denials link here: cluster users have `kubectl`, not `winlint explain`.
pub const DOCS_BASE_URL: &str = "https://github.com/winlint/winlint/blob/main/docs/rules";

impl RuleMeta {
    /// The first paragraph of the docs' `## Severity` section: when a finding's severity is
    /// not the default. A rule whose severity varies says so there, naming each severity in
    /// backquotes ("`error` when the taint is configured or observed; `warning` when …").
    pub fn severity_note(&self) -> Option<&'static str> {
        let (_, rest) = self.docs.split_once("## Severity\n")?;
        let para = rest.split("\n\n").next()?.trim();
        (!para.is_empty()).then_some(para)
    }

    /// Every severity a finding of the rule can have: the default first, then the others the
    /// `## Severity` section names in backquotes, from the highest down.
    pub fn severities(&self) -> Vec<Severity> {
        let mut out = vec![self.severity];
        if let Some(note) = self.severity_note() {
            for s in [Severity::Error, Severity::Warning, Severity::Info] {
                if note.contains(&format!("`{}`", s.as_str())) && !out.contains(&s) {
                    out.push(s);
                }
            }
        }
        out
    }

    /// The severity as `winlint rules` shows it: `error`, or `error|warning` when it varies.
    pub fn severity_label(&self) -> String {
        self.severities()
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join("|")
    }

    /// The URL of the rule's documentation page.
    pub fn docs_url(&self) -> String {
        format!("{DOCS_BASE_URL}/{}.md", self.id)
    }

    /// The rule's documentation page (Markdown): what `winlint explain` prints and
    /// `docs/rules/WINxxx.md` holds.
    pub fn page(&self) -> String {
        let fix = match self.fix {
            Some(FixSafety::Safe) if self.mutation.recorded_as.is_some() => {
                "safe (applied by --fix, and by the mutating webhook when it creates a pod)"
            }
            Some(FixSafety::Safe) => "safe (applied by --fix; the webhook does not apply it)",
            Some(FixSafety::OptIn) => "opt-in (--fix-opt-in or fix.optIn in the config)",
            None => "none",
        };
        format!(
            "# {} {}\n\n{}\n\n- Severity: {}\n- Applies: {}\n- Fix: {}\n- Source: {}\n\n{}\n",
            self.id,
            self.name,
            self.summary,
            self.severity_label(),
            self.applies,
            fix,
            crate::model::citations::public(self.source),
            self.docs.trim_end()
        )
    }
}

/// The pods a rule runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RuleOs {
    /// Pods classified Windows (definite or probable): most rules.
    Windows,
    /// Every pod, whatever its OS (contradictions, Windows settings on Linux pods, …).
    Any,
}

/// How the webhook's mutation (shared/rules.md §3) treats a rule's fix. The webhook applies the
/// fixes the policy allows, like `winlint --fix`, of the rules that have a mutation name; these
/// fields say what else it must know.
#[derive(Debug, Clone, Copy)]
pub struct Mutation {
    /// The name the webhook records the fix under in the `winlint.io/mutated` annotation (M7):
    /// what it changes, in camelCase (`nodeSelector`, `tolerations`, `os`, …; never a rule ID).
    /// `None`: the webhook never applies the rule's fix (`winlint --fix` still may).
    pub recorded_as: Option<Recorded>,
    /// The fix adds `spec.os`: when the fixed pod would be rejected, the fixer tries again
    /// without these fixes first.
    pub adds_spec_os: bool,
    /// The webhook applies the rule's opt-in fix without `fix.optIn` when this holds for the
    /// target (M2: the Windows-build pin in a cluster of several builds).
    pub opt_in_when: Option<fn(&Target) -> bool>,
    /// The fix changes which nodes the pod can land on (a nodeSelector, a toleration, a build
    /// pin). A DaemonSet's controller places its pods from the template before any exists, so
    /// such a mutation at pod creation moves none of them (`/validate` judges it as written).
    pub places_pod: bool,
    /// A finding of the rule says an image of the pod cannot run on Windows nodes (a
    /// Linux-only image). While one stands and its own fix is not applied, the engine offers no
    /// fix that settles the pod's OS ([`Mutation::settles_os`]) on its pod site: placing it on
    /// Windows nodes would only make it schedulable where it can never start, and declaring it
    /// Windows would turn "this pod runs nowhere" (WIN008, an error) into "a Linux image in a
    /// Windows pod" (WIN507, a warning). The CLI and the webhook then leave the pod as written.
    pub image_cannot_run: bool,
}

impl Mutation {
    /// Not a webhook mutation: the rule has no fix, or the webhook never applies it.
    pub const DEFAULT: Mutation = Mutation {
        recorded_as: None,
        adds_spec_os: false,
        opt_in_when: None,
        places_pod: false,
        image_cannot_run: false,
    };

    /// A webhook mutation recorded as `name` in `winlint.io/mutated`.
    pub const fn named(name: Recorded) -> Mutation {
        Mutation {
            recorded_as: Some(name),
            ..Mutation::DEFAULT
        }
    }

    /// A webhook mutation recorded as `name` that changes where the pod can land
    /// ([`Mutation::places_pod`]).
    pub const fn placing(name: Recorded) -> Mutation {
        Mutation {
            recorded_as: Some(name),
            places_pod: true,
            ..Mutation::DEFAULT
        }
    }

    /// The fix settles where the pod runs: it places the pod ([`Mutation::places_pod`]),
    /// declares its OS ([`Mutation::adds_spec_os`]) or gives it a RuntimeClass
    /// ([`Recorded::RuntimeClassName`], WIN402's Hyper-V class), which pins an OS as a node
    /// selector does (its scheduling, or its Windows handler's name, `model::classify`).
    pub const fn settles_os(&self) -> bool {
        self.places_pod
            || self.adds_spec_os
            || matches!(self.recorded_as, Some(Recorded::RuntimeClassName))
    }

    /// The name recorded in `winlint.io/mutated`, `None` when the webhook never applies the fix.
    pub fn name(&self) -> Option<&'static str> {
        self.recorded_as.map(Recorded::as_str)
    }
}

/// What a rule's fix changes, as the webhook records it in `winlint.io/mutated` (M7): one
/// vocabulary, never a rule ID; [`Recorded::as_str`] is the recorded (camelCase) name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recorded {
    BetaOsLabel,
    EmptyDirMedium,
    EnvNames,
    HostNetwork,
    Image,
    /// A pod with Linux-only images pinned to Linux nodes (WIN011's fix, `mutation.linuxGuard`).
    LinuxGuard,
    LinuxOnlyFields,
    MountPropagation,
    NodeSelector,
    Os,
    RunAsUserName,
    RuntimeClassName,
    Tolerations,
    WindowsBuild,
}

impl Recorded {
    /// The mutation changes what the pod may do on its node, even when it only adds a field
    /// (the host network; the account the containers run as): the webhook says so in a
    /// warning, like a mutation that rewrites or removes a value the user wrote.
    pub const fn changes_posture(self) -> bool {
        matches!(self, Recorded::HostNetwork | Recorded::RunAsUserName)
    }

    /// The name recorded in `winlint.io/mutated`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Recorded::BetaOsLabel => "betaOsLabel",
            Recorded::EmptyDirMedium => "emptyDirMedium",
            Recorded::EnvNames => "envNames",
            Recorded::HostNetwork => "hostNetwork",
            Recorded::Image => "image",
            Recorded::LinuxGuard => "linuxGuard",
            Recorded::LinuxOnlyFields => "linuxOnlyFields",
            Recorded::MountPropagation => "mountPropagation",
            Recorded::NodeSelector => "nodeSelector",
            Recorded::Os => "os",
            Recorded::RunAsUserName => "runAsUserName",
            Recorded::RuntimeClassName => "runtimeClassName",
            Recorded::Tolerations => "tolerations",
            Recorded::WindowsBuild => "windowsBuild",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `winlint rules` and `winlint explain` show a rule's severity as its docs say it varies
    /// (issue 26: WIN001, WIN007 and WIN409 printed as errors only).
    #[test]
    fn severity_as_it_varies() {
        let varies = crate::rules::find("WIN007").expect("WIN007").meta;
        assert_eq!(
            varies.severities(),
            [Severity::Error, Severity::Warning],
            "{:?}",
            varies.severity_note()
        );
        assert_eq!(varies.severity_label(), "error|warning");
        assert!(varies.page().contains("- Severity: error|warning"));
        let fixed = crate::rules::find("WIN003").expect("WIN003").meta;
        assert_eq!(fixed.severity_note(), None);
        assert_eq!(fixed.severity_label(), fixed.severity.as_str());
        for (id, label) in [
            ("WIN001", "error|warning"),
            ("WIN409", "error|warning|info"),
        ] {
            let m = crate::rules::find(id).expect("rule").meta;
            assert_eq!(m.severity_label(), label, "{id}");
        }
    }
}
