//! WIN305 `volume-devices`.

use crate::model::Eval;
use crate::model::meta::{Area, Mutation, Reads, RuleOs};
use crate::model::workload::PodSite;
use crate::model::{Finding, RuleMeta, Severity};
use crate::rules::Rule;
use serde_json::Value;

/// WIN305 in the registry.
pub const RULE: Rule = Rule {
    meta: &WIN305,
    check: volume_devices,
};

// ---------------------------------------------------------------------------------------------
// WIN305

pub static WIN305: RuleMeta = RuleMeta {
    id: "WIN305",
    name: "volume-devices",
    severity: Severity::Error,
    summary: "Raw block volumes (volumeDevices) are not supported on Windows",
    docs: r#"## What it does
Flags every `volumeDevices[]` entry of every container.

## Why is this bad?
Raw block volumes (`volumeMode: Block`) are not supported on Windows nodes: the device cannot be
mapped into the container and the pod does not start.

## Example
```yaml
containers:
- name: db
  volumeDevices:
  - {name: blk, devicePath: '\\.\PhysicalDrive1'}
```

## Fix
Use a filesystem volume (`volumeMode: Filesystem`) mounted with `volumeMounts`.
"#,
    fix: None,
    source: "K-INTRO, K-STOR",
    applies: "all",
    os: RuleOs::Windows,
    default_on: true,
    reads: Reads::of(&[Area::Containers]),
    mutation: Mutation::DEFAULT,
};

pub(crate) fn volume_devices(site: &PodSite, _eval: &Eval) -> Vec<Finding> {
    let mut out = Vec::new();
    for c in site.containers() {
        let Some(devs) = c.value.get("volumeDevices").and_then(Value::as_array) else {
            continue;
        };
        for (i, d) in devs.iter().enumerate() {
            let name = d.get("name").and_then(Value::as_str).unwrap_or("");
            out.push(Finding::new(
                &WIN305,
                site.ptr(&format!("{}/volumeDevices/{i}", c.rel())),
                format!(
                    "{} maps raw block volume {name:?}; Windows does not support raw block volumes. Use a filesystem volume with volumeMounts",
                    c.label()
                ),
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    use crate::rules::testutil::{cfg, hit, hits, ids_in, set, winok};
    use crate::rules::volumes::common::tests::OWN;

    #[test]
    fn t24_volume_devices() {
        let pod = set(
            winok(),
            "/spec/volumes",
            json!([{"name":"blk","persistentVolumeClaim":{"claimName":"raw"}}]),
        );
        let pod = set(
            pod,
            "/spec/containers/0/volumeDevices",
            json!([{"name":"blk","devicePath":r"\\.\PhysicalDrive1"}]),
        );
        assert_eq!(ids_in(&pod, &cfg(), OWN), vec!["WIN305"]);
        assert_eq!(
            hits(&pod, &cfg(), "WIN305"),
            hit(Severity::Error, "/spec/containers/0/volumeDevices/0")
        );
    }
}
