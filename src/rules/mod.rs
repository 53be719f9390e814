//! Rule metadata, findings and fixes: the vocabulary every front end shares.
//!
//! A rule is a pure function of a [`PodSite`](crate::workload::PodSite) and an
//! [`Eval`](crate::engine::Eval) context that returns [`Finding`]s. Its documentation
//! ([`RuleMeta::docs`]) lives next to its code and is the single source for `winlint rules`,
//! `winlint explain` and the SARIF rule descriptions.

use serde::Serialize;

use crate::engine::Eval;
use crate::workload::PodSite;

pub mod containers;
pub mod hostprocess;
pub mod images;
pub mod kinds;
pub mod scheduling;
pub mod security;
pub mod util;
pub mod volumes;

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

/// A fix: RFC 6902 operations against the *object* (pointers start at the object root).
///
/// Every operation's parent path must exist in the object the finding was computed on, so the
/// same operations can be applied as a JSONPatch (webhook) or as text edits (`--fix`).
#[derive(Debug, Clone, PartialEq)]
pub struct Fix {
    pub safety: FixSafety,
    /// One line, imperative: "add nodeSelector kubernetes.io/os=windows".
    pub description: String,
    pub ops: Vec<json_patch::PatchOperation>,
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

/// One problem found at one place.
#[derive(Debug, Clone)]
pub struct Finding {
    pub rule: &'static RuleMeta,
    pub severity: Severity,
    /// JSON pointer into the object (e.g. `/spec/template/spec/containers/0/env/1/name`).
    pub pointer: String,
    /// What is wrong and what to do about it.
    pub message: String,
    pub fix: Option<Fix>,
}

impl Finding {
    pub fn new(
        rule: &'static RuleMeta,
        pointer: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Finding {
            rule,
            severity: rule.severity,
            pointer: pointer.into(),
            message: message.into(),
            fix: None,
        }
    }
    pub fn severity(mut self, severity: Severity) -> Self {
        self.severity = severity;
        self
    }
    pub fn with_fix(mut self, fix: Fix) -> Self {
        self.fix = Some(fix);
        self
    }
}

/// A rule's check function.
pub type CheckFn = for<'a> fn(&PodSite<'a>, &Eval<'a>) -> Vec<Finding>;

/// A registered rule: metadata plus the function that checks a pod site.
pub struct Rule {
    pub meta: &'static RuleMeta,
    pub check: CheckFn,
}

/// Every rule, in ID order. The single registry the CLI, the webhook and the docs read.
pub fn all() -> &'static [Rule] {
    static ALL: std::sync::OnceLock<Vec<Rule>> = std::sync::OnceLock::new();
    ALL.get_or_init(|| {
        let mut v: Vec<Rule> = Vec::new();
        v.extend(scheduling::rules());
        v.extend(security::rules());
        v.extend(hostprocess::rules());
        v.extend(volumes::rules());
        v.extend(containers::rules());
        v.extend(images::rules());
        v.extend(kinds::rules());
        v.sort_by_key(|r| r.meta.id);
        v
    })
}

/// Look a rule up by ID (`WIN403`, case-insensitive) or name (`env-name-invalid`).
pub fn find(key: &str) -> Option<&'static Rule> {
    all()
        .iter()
        .find(|r| r.meta.id.eq_ignore_ascii_case(key) || r.meta.name == key)
}

/// Fix-building helpers: RFC 6902 operations from pointer strings.
pub mod ops {
    use json_patch::jsonptr::PointerBuf;
    use json_patch::{AddOperation, PatchOperation, RemoveOperation, ReplaceOperation};
    use serde_json::Value;

    fn ptr(path: &str) -> PointerBuf {
        PointerBuf::parse(path)
            .unwrap_or_else(|e| panic!("invalid JSON pointer {path:?} built by a rule: {e}"))
    }
    pub fn add(path: &str, value: Value) -> PatchOperation {
        PatchOperation::Add(AddOperation {
            path: ptr(path),
            value,
        })
    }
    pub fn remove(path: &str) -> PatchOperation {
        PatchOperation::Remove(RemoveOperation { path: ptr(path) })
    }
    pub fn replace(path: &str, value: Value) -> PatchOperation {
        PatchOperation::Replace(ReplaceOperation {
            path: ptr(path),
            value,
        })
    }
}

/// Test helpers for rule modules: lint a JSON object and list what fired.
#[cfg(test)]
pub mod testutil {
    use serde_json::{Value, json};

    use crate::config::{Config, KubeVersion};
    use crate::engine::{Operation, lint_object};
    use crate::rules::Finding;
    use crate::workload::Context;

    /// The test-vector target of rules.md §6: kubernetes 1.30, otherwise the defaults.
    pub fn cfg() -> Config {
        let mut c = Config::default();
        c.target.kubernetes = KubeVersion::new(1, 30);
        c
    }

    /// The LEGACY target of rules.md §6: Kubernetes 1.9, Windows Server 1709, untainted nodes,
    /// Docker.
    pub fn legacy() -> Config {
        let mut c = cfg();
        c.target.kubernetes = KubeVersion::new(1, 9);
        c.target.windows_builds = vec![crate::windows::V1709];
        c.target.windows_taints = Vec::new();
        c.target.runtime = crate::config::Runtime::Docker;
        c
    }

    /// (severity, pointer) of the findings of one rule.
    pub fn hits(obj: &Value, cfg: &Config, id: &str) -> Vec<(crate::rules::Severity, String)> {
        findings(obj, cfg)
            .into_iter()
            .filter(|f| f.rule.id == id)
            .map(|f| (f.severity, f.pointer))
            .collect()
    }

    /// `WINOK` of rules.md §6: spec.os windows, OS selector, toleration, servercore:ltsc2022.
    pub fn winok() -> Value {
        json!({"apiVersion":"v1","kind":"Pod","metadata":{"name":"ok"},"spec":{
            "os":{"name":"windows"},
            "nodeSelector":{"kubernetes.io/os":"windows"},
            "tolerations":[{"key":"os","operator":"Equal","value":"windows","effect":"NoSchedule"}],
            "containers":[{"name":"app","image":"mcr.microsoft.com/windows/servercore:ltsc2022"}]}})
    }

    /// Set `value` at `pointer` (creating objects on the way).
    pub fn set(mut obj: Value, pointer: &str, value: Value) -> Value {
        let mut cur = &mut obj;
        let toks: Vec<String> = pointer
            .split('/')
            .skip(1)
            .map(|t| t.replace("~1", "/").replace("~0", "~"))
            .collect();
        for (i, t) in toks.iter().enumerate() {
            let last = i + 1 == toks.len();
            if let Value::Array(a) = cur {
                let idx: usize = t.parse().expect("array index");
                while a.len() <= idx {
                    a.push(json!({}));
                }
                if last {
                    a[idx] = value;
                    return obj;
                }
                cur = &mut a[idx];
            } else {
                if !cur.is_object() {
                    *cur = json!({});
                }
                let m = cur.as_object_mut().expect("object");
                if last {
                    m.insert(t.clone(), value);
                    return obj;
                }
                cur = m.entry(t.clone()).or_insert(json!({}));
            }
        }
        obj
    }

    /// Remove the field at `pointer`.
    pub fn unset(mut obj: Value, pointer: &str) -> Value {
        let (parent, key) = pointer.rsplit_once('/').expect("pointer");
        if let Some(Value::Object(m)) = obj.pointer_mut(parent) {
            m.remove(&key.replace("~1", "/").replace("~0", "~"));
        }
        obj
    }

    pub fn findings(obj: &Value, cfg: &Config) -> Vec<Finding> {
        lint_object(obj, cfg, &Context::default(), Operation::Lint).findings
    }

    /// Sorted, deduplicated rule IDs that fired.
    pub fn ids(obj: &Value, cfg: &Config) -> Vec<&'static str> {
        let mut v: Vec<&'static str> = findings(obj, cfg).iter().map(|f| f.rule.id).collect();
        v.sort();
        v.dedup();
        v
    }
}

#[cfg(test)]
mod tests {
    /// The catalogue (shared/rules.md §2 and the "Rules added" table): every ID with its name.
    const CATALOGUE: &[(&str, &str)] = &[
        ("WIN001", "missing-os-selector"),
        ("WIN002", "deprecated-beta-os-label"),
        ("WIN003", "missing-spec-os"),
        ("WIN004", "os-signal-conflict"),
        ("WIN005", "missing-windows-build-selector"),
        ("WIN006", "windows-build-selector-mismatch"),
        ("WIN007", "missing-windows-toleration"),
        ("WIN008", "mixed-os-images"),
        ("WIN009", "runtimeclass-selector-conflict"),
        ("WIN101", "pod-securitycontext-linux-only"),
        ("WIN102", "host-namespaces"),
        ("WIN103", "container-securitycontext-linux-only"),
        ("WIN104", "windowsoptions-on-linux-pod"),
        ("WIN105", "runasusername-invalid"),
        ("WIN106", "gmsa-spec-invalid"),
        ("WIN107", "psa-restricted-windows"),
        ("WIN201", "hostprocess-requires-hostnetwork"),
        ("WIN202", "hostprocess-mixed"),
        ("WIN203", "hostprocess-unavailable"),
        ("WIN204", "hostprocess-runasnonroot"),
        ("WIN205", "hostprocess-user"),
        ("WIN206", "hostprocess-pipe-or-socket-mount"),
        ("WIN207", "hostprocess-needs-privileged-pss"),
        ("WIN208", "hostnetwork-without-hostprocess"),
        ("WIN209", "dns-clusterfirstwithhostnet"),
        ("WIN301", "unsupported-volume-type"),
        ("WIN302", "configmap-secret-volume-legacy"),
        ("WIN303", "emptydir-memory"),
        ("WIN304", "mount-propagation"),
        ("WIN305", "volume-devices"),
        ("WIN306", "subpath"),
        ("WIN307", "file-mode-ignored"),
        ("WIN308", "mountpath-not-windows-style"),
        ("WIN309", "mountpath-case-collision"),
        ("WIN310", "unc-path"),
        ("WIN311", "named-pipe-mismatch"),
        ("WIN312", "linux-hostpath"),
        ("WIN313", "termination-message-file"),
        ("WIN314", "secret-volume-cleartext"),
        ("WIN401", "multi-container-ws2016"),
        ("WIN402", "hyperv-annotation"),
        ("WIN403", "env-name-invalid"),
        ("WIN404", "envfrom-prefix-or-keys"),
        ("WIN405", "env-case-collision"),
        ("WIN406", "resources-ignored-legacy"),
        ("WIN407", "hugepages"),
        ("WIN408", "memory-request-limit"),
        ("WIN409", "runasnonroot-admin"),
        ("WIN410", "udp-userspace-proxy"),
        ("WIN411", "termination-grace-docker"),
        ("WIN501", "image-untagged-or-latest"),
        ("WIN502", "image-build-incompatible"),
        ("WIN503", "image-build-unknown"),
        ("WIN504", "legacy-dockerhub-microsoft"),
        ("WIN505", "tag-case"),
        ("WIN506", "eol-windows-build"),
        ("WIN507", "linux-image-in-windows-pod"),
        ("WIN508", "pod-mixed-windows-builds"),
        ("WIN601", "statefulset-legacy"),
        ("WIN602", "hpa-legacy"),
        ("WIN603", "os-unpinned-daemonset"),
    ];

    #[test]
    fn registry_is_the_catalogue() {
        let got: Vec<(&str, &str)> = super::all()
            .iter()
            .map(|r| (r.meta.id, r.meta.name))
            .collect();
        assert_eq!(got, CATALOGUE);
        for (id, name) in CATALOGUE {
            assert_eq!(super::find(id).map(|r| r.meta.name), Some(*name));
            assert_eq!(super::find(name).map(|r| r.meta.id), Some(*id));
            assert_eq!(
                super::find(&id.to_lowercase()).map(|r| r.meta.id),
                Some(*id)
            );
        }
    }

    /// Every rule's documentation has the sections `winlint explain` and SARIF help rely on.
    #[test]
    fn every_rule_is_documented() {
        for r in super::all() {
            let m = r.meta;
            for section in [
                "## What it does",
                "## Why is this bad?",
                "## Example",
                "## Fix",
            ] {
                assert!(m.docs.contains(section), "{} lacks {section}", m.id);
            }
            assert!(m.docs.contains("```yaml"), "{} has no YAML example", m.id);
            assert!(
                !m.summary.is_empty() && !m.source.is_empty() && !m.applies.is_empty(),
                "{}",
                m.id
            );
        }
    }
}
