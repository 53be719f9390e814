//! The rule registry and the rule modules.
//!
//! A rule is a pure function of a [`PodSite`] and an [`Eval`] context that returns [`Finding`]s,
//! plus its [`RuleMeta`]: documentation (the single source for `winlint rules`, `winlint
//! explain` and the SARIF rule descriptions) and everything a front end needs to know about it.

use crate::model::{Eval, Finding, PodSite, RuleMeta};

pub mod env;
pub mod hostprocess;
pub mod identity;
pub mod images;
pub mod kinds;
pub mod legacy;
pub mod resources;
pub mod scheduling;
pub mod security;
pub mod volumes;

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
        v.extend(identity::rules());
        v.extend(env::rules());
        v.extend(resources::rules());
        v.extend(legacy::rules());
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

/// Test helpers for rule modules: lint a JSON object and list what fired.
#[cfg(test)]
pub mod testutil {
    use serde_json::{Value, json};

    use crate::config::Config;
    use crate::engine::lint_object;
    use crate::model::Context;
    use crate::model::Finding;
    use crate::model::KubeVersion;
    use crate::model::Operation;

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
        c.target.windows_builds = vec![crate::model::windows::V1709];
        c.target.windows_taints = Vec::new();
        c.target.runtime = crate::model::Runtime::Docker;
        c
    }

    /// (severity, pointer) of the findings of one rule.
    pub fn hits(obj: &Value, cfg: &Config, id: &str) -> Vec<(crate::model::Severity, String)> {
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

    /// [`ids`] of the rules whose IDs start with one of `prefixes` (`["WIN3", "WIN4"]`: a
    /// module's own rules; other modules' rules are asserted by their tests).
    pub fn ids_in(obj: &Value, cfg: &Config, prefixes: &[&str]) -> Vec<&'static str> {
        ids(obj, cfg)
            .into_iter()
            .filter(|id| prefixes.iter().any(|p| id.starts_with(p)))
            .collect()
    }

    /// The findings of one rule.
    pub fn only(obj: &Value, cfg: &Config, id: &str) -> Vec<Finding> {
        findings(obj, cfg)
            .into_iter()
            .filter(|f| f.rule.id == id)
            .collect()
    }

    /// The [`cfg`] target at Kubernetes `1.minor`.
    pub fn at(minor: u32) -> Config {
        let mut c = cfg();
        c.target.kubernetes = KubeVersion::new(1, minor);
        c
    }

    /// `obj` with the fix of finding `f` applied.
    pub fn apply(obj: &Value, f: &Finding) -> Value {
        let mut out = obj.clone();
        json_patch::patch(&mut out, &f.fix.as_ref().expect("a fix").ops).expect("fix applies");
        out
    }

    /// `obj` with the fix of the first finding of rule `id` applied.
    pub fn fixed(obj: &Value, cfg: &Config, id: &str) -> Value {
        let f = only(obj, cfg, id).into_iter().next().expect("finding");
        apply(obj, &f)
    }

    /// A [`hits`] result of one finding.
    pub fn hit(
        sev: crate::model::Severity,
        pointer: &str,
    ) -> Vec<(crate::model::Severity, String)> {
        vec![(sev, pointer.to_string())]
    }

    /// `pod` with a second container running `image`.
    pub fn second_container(pod: Value, image: &str) -> Value {
        set(
            pod,
            "/spec/containers/1",
            json!({"name":"side","image":image}),
        )
    }

    /// Whether a finding of rule `id` offers a fix.
    pub fn has_fix(obj: &Value, cfg: &Config, id: &str) -> bool {
        findings(obj, cfg)
            .iter()
            .any(|f| f.rule.id == id && f.fix.is_some())
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
