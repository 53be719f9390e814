//! WIN304 `mount-propagation`.

use crate::model::Eval;
use crate::model::meta::{Area, Mutation, Reads, Recorded, RuleOs};
use crate::model::pod;
use crate::model::workload::Lookup;
use crate::model::workload::PodSite;
use crate::model::{Finding, Fix, FixSafety, RuleMeta, Severity, ops};
use crate::rules::Rule;
use crate::rules::volumes::common::mount_path;
use crate::rules::volumes::common::mount_ptr;
use crate::rules::volumes::common::mounts;
use serde_json::Value;

/// WIN304 in the registry.
pub const RULE: Rule = Rule {
    meta: &WIN304,
    check: mount_propagation,
};

// ---------------------------------------------------------------------------------------------
// WIN304

pub static WIN304: RuleMeta = RuleMeta {
    id: "WIN304",
    name: "mount-propagation",
    severity: Severity::Warning,
    summary: "volumeMounts[].mountPropagation HostToContainer/Bidirectional (Windows has no mount propagation; Bidirectional needs a privileged container)",
    docs: r#"## What it does
Flags `volumeMounts[].mountPropagation` in every container; `None` is fine.

* `Bidirectional` in a container that is not `privileged: true`: **error**. The API server rejects it
  on any pod: "spec.containers[0].volumeMounts.mountPropagation: Forbidden: Bidirectional mount
  propagation is available only to privileged containers" (measured on 1.32).
* `Bidirectional` in a privileged container, and `HostToContainer`: **warning**. The API server
  admits them (a privileged container is itself rejected once the pod declares
  `spec.os.name: windows`, WIN103), and the Windows kubelet runs the mount without propagation.

## Why is this bad?
Windows containers have no mount propagation ("You cannot enable mountPropagation"): whatever the
manifest asks for, mounts made on the host after the container started do not appear in it, and
the container's mounts never reach the host. Node agents written for Linux (CSI node plugins)
rely on it.

## Example
```yaml
containers:
- name: app
  volumeMounts:
  - {name: data, mountPath: 'C:\data', mountPropagation: Bidirectional}
```

## Fix
Safe for `HostToContainer`: delete the field (Windows behaves as `None` anyway). `Bidirectional`
has no Windows equivalent: remove it and redesign how the host and the container share mounts (on
Windows, CSI node plugins use csi-proxy or run as HostProcess containers).

## Severity
`warning` for a propagation Windows ignores; `error` for `Bidirectional` on a container that is
not privileged, which the API server rejects.
"#,
    fix: Some(FixSafety::Safe),
    source: "K-INTRO, KEP116, VAL, issue-9 research §1.2 (measured on kube-apiserver 1.32)",
    applies: "all",
    os: RuleOs::Windows,
    default_on: true,
    reads: Reads::of(&[Area::Containers, Area::Volumes]),
    mutation: Mutation::named(Recorded::MountPropagation),
};

pub(crate) fn mount_propagation(site: &PodSite, _eval: &Eval) -> Vec<Finding> {
    let mut out = Vec::new();
    for (c, i, m) in mounts(site) {
        let Some(mode) = m.get("mountPropagation").and_then(Value::as_str) else {
            continue;
        };
        let p = mount_ptr(site, &c, i, "mountPropagation");
        let path = mount_path(m).unwrap_or("");
        match mode {
            "HostToContainer" => out.push(
                Finding::new(
                    &WIN304,
                    p.clone(),
                    format!(
                        "{} mounts {path:?} with mountPropagation: HostToContainer; the API server admits it, but Windows has no mount propagation: mounts made on the host later do not appear in the container. Delete the field",
                        c.label()
                    ),
                )
                .with_fix(Fix {
                    safety: FixSafety::Safe,
                    description: format!("delete mountPropagation of {path:?}"),
                    ops: vec![ops::remove(&p)],
                }),
            ),
            "Bidirectional" => {
                let privileged = c.value.lookup("/securityContext/privileged")
                    == Some(&Value::Bool(true));
                out.push(if privileged {
                    Finding::new(
                        &WIN304,
                        p,
                        format!(
                            "{} mounts {path:?} with mountPropagation: Bidirectional; the API server admits it for this privileged container, but Windows has no mount propagation: the mount is private. Remove it",
                            c.label()
                        ),
                    )
                } else {
                    Finding::new(
                        &WIN304,
                        p.clone(),
                        format!(
                            "{} mounts {path:?} with mountPropagation: Bidirectional, which the API server rejects for a container that is not privileged ({}); Windows has no mount propagation anyway. Remove it",
                            c.label(),
                            crate::model::api_fields::forbidden(
                                &pod::dotted(&site.ptr(&format!("{}/volumeMounts/mountPropagation", c.rel()))),
                                "Bidirectional mount propagation is available only to privileged containers"
                            )
                        ),
                    )
                    .severity(Severity::Error)
                });
            }
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    use crate::rules::testutil::{cfg, findings, fixed, hits, ids_in, only, set, unset};
    use crate::rules::volumes::common::tests::OWN;
    use crate::rules::volumes::common::tests::pod_with;

    #[test]
    fn t23_mount_propagation() {
        let mk = |mode: &str| {
            pod_with(
                json!({"name":"data","emptyDir":{}}),
                json!({"name":"data","mountPath":r"C:\data","mountPropagation":mode}),
            )
        };
        let bi = mk("Bidirectional");
        assert_eq!(ids_in(&bi, &cfg(), OWN), vec!["WIN304"]);
        let p = "/spec/containers/0/volumeMounts/0/mountPropagation".to_string();
        assert_eq!(
            hits(&bi, &cfg(), "WIN304"),
            vec![(Severity::Error, p.clone())]
        );
        assert!(findings(&bi, &cfg())[0].fix.is_none());
        // The server's words, with its path (no index after volumeMounts).
        assert!(
            only(&bi, &cfg(), "WIN304")[0].message.contains(
                "(\"spec.containers[0].volumeMounts.mountPropagation: Forbidden: Bidirectional mount propagation is available only to privileged containers\")"
            )
        );
        // A privileged container may ask for it (the API server admits it): a warning; the
        // privileged field itself is WIN103's.
        let privileged = set(
            unset(bi.clone(), "/spec/os"),
            "/spec/containers/0/securityContext/privileged",
            json!(true),
        );
        assert_eq!(hits(&privileged, &cfg(), "WIN304")[0].0, Severity::Warning);
        let h2c = mk("HostToContainer");
        assert_eq!(hits(&h2c, &cfg(), "WIN304"), vec![(Severity::Warning, p)]);
        let f = fixed(&h2c, &cfg(), "WIN304");
        assert_eq!(
            f["spec"]["containers"][0]["volumeMounts"][0],
            json!({"name":"data","mountPath":r"C:\data"})
        );
        assert!(hits(&mk("None"), &cfg(), "WIN304").is_empty());
    }
}
