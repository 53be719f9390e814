//! WIN804 `container-port-invalid`.

use std::collections::HashSet;

use serde_json::Value;

use crate::model::Eval;
use crate::model::meta::{Area, Mutation, Reads, RuleOs};
use crate::model::workload::{self, PodSite};
use crate::model::{Finding, RuleMeta, Severity};
use crate::rules::Rule;
use crate::rules::api::common::{port_name_errors, refuses};

/// WIN804 in the registry.
pub const RULE: Rule = Rule {
    meta: &WIN804,
    check: container_port_invalid,
};

pub static WIN804: RuleMeta = RuleMeta {
    id: "WIN804",
    name: "container-port-invalid",
    severity: Severity::Error,
    summary: "Container port out of 1–65535, port name not an IANA service name or repeated, unknown protocol (the API server refuses it)",
    docs: r#"## What it does
Checks every `ports` entry of the containers and init containers as Kubernetes 1.32's
`validateContainerPorts` does:

* `containerPort` is required and between 1 and 65535; `hostPort`, when set, too;
* `name`, when set, is an IANA service name (`IsValidPortName`: at most 15 characters of `a-z`,
  `0-9` and `-`, at least one letter, no `-` at either end or twice in a row) and unique among
  the container's ports;
* `protocol` is `TCP`, `UDP` or `SCTP` (upper case; absent means `TCP`).

## Why is this bad?
The API server refuses the object. A StatefulSet is the exception: the API server does not
validate its template's pod spec (`ValidatePodTemplateSpecForStatefulSet`), so it accepts the
StatefulSet and refuses every pod the StatefulSet controller creates from it (`FailedCreate`). Port names longer than 15 characters (`metrics-exporter`),
with upper case (`HTTP`) or `_`, and lower-case protocols are the usual cases.

## Example
```yaml
ports:
- name: windows_exporter
  containerPort: 9182
  protocol: tcp
```

## Fix
`name: win-exporter`, `protocol: TCP`, ports within 1–65535.
"#,
    fix: None,
    source: "Kubernetes API validation (core)",
    applies: "all",
    os: RuleOs::Any,
    default_on: true,
    reads: Reads::of(&[Area::Containers]),
    mutation: Mutation::DEFAULT,
};

const PROTOCOLS: &[&str] = &["TCP", "UDP", "SCTP"];

fn container_port_invalid(site: &PodSite, _eval: &Eval) -> Vec<Finding> {
    let mut out = Vec::new();
    for c in site.containers() {
        if c.list == "ephemeralContainers" {
            continue;
        }
        let mut names = HashSet::new();
        for (i, port) in workload::items(c.value, "ports").enumerate() {
            let at = |field: &str| site.container_ptr(&c, &format!("/ports/{i}/{field}"));
            let mut report = |field: &str, what: String| {
                out.push(Finding::new(
                    &WIN804,
                    at(field),
                    format!("{} port {i}: {what}; {}", c.label(), refuses(site)),
                ))
            };
            match port.get("containerPort") {
                None | Some(Value::Null) => {
                    report("containerPort", "containerPort is required".into())
                }
                Some(v) if !in_range(v) => report(
                    "containerPort",
                    format!("containerPort {v} is not between 1 and 65535, inclusive"),
                ),
                _ => {}
            }
            if let Some(v) = port.get("hostPort").filter(|v| !v.is_null())
                && v.as_i64() != Some(0)
                && !in_range(v)
            {
                report(
                    "hostPort",
                    format!("hostPort {v} is not between 1 and 65535, inclusive"),
                );
            }
            if let Some(name) = port.get("name").and_then(Value::as_str)
                && !name.is_empty()
            {
                let errs = port_name_errors(name);
                if !errs.is_empty() {
                    report(
                        "name",
                        format!(
                            "port name {name:?} is not an IANA service name ({})",
                            errs.join("; ")
                        ),
                    );
                } else if !names.insert(name) {
                    report(
                        "name",
                        format!("port name {name:?} is used twice (\"Duplicate value\")"),
                    );
                }
            }
            if let Some(p) = port.get("protocol").and_then(Value::as_str)
                && !p.is_empty()
                && !PROTOCOLS.contains(&p)
            {
                report(
                    "protocol",
                    format!(
                        "protocol {p:?} is not one of \"TCP\", \"UDP\", \"SCTP\" (\"Unsupported value\")"
                    ),
                );
            }
        }
    }
    out
}

/// 1–65535 (a JSON integer; a string or a fraction fails decoding and is not judged here).
fn in_range(v: &Value) -> bool {
    match v.as_i64() {
        Some(n) => (1..=65535).contains(&n),
        None => !v.is_number(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::testutil::{cfg, hit, hits, set, winok};
    use serde_json::json;

    fn ports(p: Value) -> Value {
        set(winok(), "/spec/containers/0/ports", p)
    }

    #[test]
    fn win804_ports_as_the_api_server_checks_them() {
        let ok = ports(
            json!([{"name": "http", "containerPort": 80, "protocol": "TCP"},
                              {"containerPort": 443, "hostPort": 0}]),
        );
        assert!(hits(&ok, &cfg(), "WIN804").is_empty());
        for (p, field) in [
            (json!([{"containerPort": 0}]), "containerPort"),
            (json!([{"containerPort": 70000}]), "containerPort"),
            (json!([{"name": "http"}]), "containerPort"),
            (
                json!([{"containerPort": 80, "hostPort": 70000}]),
                "hostPort",
            ),
            (json!([{"containerPort": 80, "name": "HTTP"}]), "name"),
            (
                json!([{"containerPort": 80, "name": "windows-exporter"}]),
                "name",
            ),
            (
                json!([{"containerPort": 80, "protocol": "tcp"}]),
                "protocol",
            ),
        ] {
            assert_eq!(
                hits(&ports(p.clone()), &cfg(), "WIN804"),
                hit(
                    Severity::Error,
                    &format!("/spec/containers/0/ports/0/{field}")
                ),
                "{p}"
            );
        }
        let twice = ports(json!([{"name": "http", "containerPort": 80},
                                 {"name": "http", "containerPort": 81}]));
        assert_eq!(
            hits(&twice, &cfg(), "WIN804"),
            hit(Severity::Error, "/spec/containers/0/ports/1/name")
        );
    }
}
