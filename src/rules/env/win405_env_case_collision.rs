//! WIN405 `env-case-collision`.

use crate::model::Eval;
use crate::model::meta::{Area, Mutation, Reads, RuleOs};
use crate::model::workload::{PodSite, items};
use crate::model::{Finding, RuleMeta, Severity};
use crate::rules::Rule;
use serde_json::Value;

/// WIN405 in the registry.
pub const RULE: Rule = Rule {
    meta: &WIN405,
    check: env_case_collision,
};

// ---------------------------------------------------------------------------------------------
// WIN405

pub static WIN405: RuleMeta = RuleMeta {
    id: "WIN405",
    name: "env-case-collision",
    severity: Severity::Warning,
    summary: "Two env vars of one container that differ only in case (Windows env names are case-insensitive)",
    docs: r#"## What it does
Reports `env[].name` entries of a container that equal an earlier entry when case is ignored
(`Path` and `PATH`).

## Why is this bad?
Kubernetes treats the names as different variables; Windows environment names are
case-insensitive, so one value silently overwrites the other — and overriding `PATH` with a
differently-cased `Path` can replace the system search path.

## Example
```yaml
env:
- {name: Path, value: 'C:\app'}
- {name: PATH, value: 'C:\tools'}
```

## Fix
Keep one of the two entries.
"#,
    fix: None,
    source: "Windows semantics",
    applies: "all",
    os: RuleOs::Windows,
    default_on: true,
    reads: Reads::of(&[Area::Containers]),
    mutation: Mutation::DEFAULT,
};

pub(crate) fn env_case_collision(site: &PodSite, _eval: &Eval) -> Vec<Finding> {
    let mut out = Vec::new();
    for c in site.containers() {
        // Case-folded name → its first spelling and the first other one (a finding names the
        // first spelling seen that is not this one: no other spelling is ever named, so none
        // is kept; a list of every spelling was quadratic in 2^k spellings of one k-letter name).
        let mut seen: std::collections::HashMap<String, (&str, Option<&str>)> =
            std::collections::HashMap::new();
        for (i, e) in items(c.value, "env").enumerate() {
            let Some(name) = e.get("name").and_then(Value::as_str) else {
                continue;
            };
            let spellings = seen.entry(name.to_lowercase()).or_insert((name, None));
            let other = match *spellings {
                (first, _) if first != name => Some(first),
                (_, second) => second,
            };
            if let Some(first) = other {
                out.push(Finding::new(
                    &WIN405,
                    site.container_ptr(&c, &format!("/env/{i}/name")),
                    format!(
                        "{} sets env vars {first:?} and {name:?}, which are the same variable on Windows (names are case-insensitive); one overwrites the other. Keep one",
                        c.label()
                    ),
                ));
            }
            if spellings.0 != name && spellings.1.is_none() {
                spellings.1 = Some(name);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    use crate::rules::env::common::tests::OWN;
    use crate::rules::env::common::tests::with_env;
    use crate::rules::testutil::{cfg, hit, hits, ids_in, set};

    #[test]
    fn t32_case_collision() {
        let pod = with_env(json!([{"name":"Path","value":"a"},{"name":"PATH","value":"b"}]));
        assert_eq!(ids_in(&pod, &cfg(), OWN), vec!["WIN405"]);
        assert_eq!(
            hits(&pod, &cfg(), "WIN405"),
            hit(Severity::Warning, "/spec/containers/0/env/1/name")
        );
        // Exact duplicates and different names are not Windows findings.
        let dup = with_env(json!([{"name":"PATH","value":"a"},{"name":"PATH","value":"b"}]));
        assert!(hits(&dup, &cfg(), "WIN405").is_empty());
        // Across containers no collision.
        let two = set(
            with_env(json!([{"name":"Path","value":"a"}])),
            "/spec/containers/1",
            json!({"name":"b","image":"mcr.microsoft.com/windows/servercore:ltsc2022",
                "env":[{"name":"PATH","value":"b"}]}),
        );
        assert!(hits(&two, &cfg(), "WIN405").is_empty());
    }
}
