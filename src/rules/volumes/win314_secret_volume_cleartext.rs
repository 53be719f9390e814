//! WIN314 `secret-volume-cleartext`.

use crate::model::Eval;
use crate::model::meta::{Area, Mutation, Reads, RuleOs};
use crate::model::workload::Lookup;
use crate::model::workload::PodSite;
use crate::model::{Finding, RuleMeta, Severity};
use crate::rules::Rule;
use crate::rules::volumes::common::is_injected_volume;
use crate::rules::volumes::common::legacy_volume_builds;
use crate::rules::volumes::common::vol_name;
use serde_json::Value;

/// WIN314 in the registry.
pub const RULE: Rule = Rule {
    meta: &WIN314,
    check: secret_volume_cleartext,
};

// ---------------------------------------------------------------------------------------------
// WIN314

pub static WIN314: RuleMeta = RuleMeta {
    id: "WIN314",
    name: "secret-volume-cleartext",
    severity: Severity::Warning,
    summary: "Secret volume on a Windows pod: Windows writes Secret data in clear text to the node's disk",
    docs: r#"## What it does
Flags `spec.volumes[*].secret` and the `secret` sources of `projected` volumes of a Windows pod,
on targets where Windows can mount them (1803 and newer; below, WIN302 applies).

## Why is this bad?
On Linux the kubelet keeps Secret volumes in tmpfs (memory). Windows has no tmpfs: Secret data is
written in clear text to the node's local disk ("Protection for Secret data on nodes"), where
anyone with access to the node or its backups can read it.

## Example
```yaml
spec:
  volumes:
  - name: creds
    secret: {secretName: db}
```

## Fix
Pass the values as environment variables (`env[].valueFrom.secretKeyRef`), protect the node disk
(file ACLs, BitLocker), or use the Secrets Store CSI driver with a Windows provider. A policy may
raise this rule to error.
"#,
    fix: None,
    source: "kubernetes/website windows-security.md",
    applies: "W≥1803",
    os: RuleOs::Windows,
    default_on: true,
    reads: Reads::of(&[Area::Containers, Area::Volumes]),
    mutation: Mutation::DEFAULT,
};

pub(crate) fn secret_volume_cleartext(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    if legacy_volume_builds(eval) {
        return Vec::new();
    }
    const ADVICE: &str = "Use env[].valueFrom.secretKeyRef, protect the node disk (file ACLs, BitLocker), or use the Secrets Store CSI driver";
    let mut out = Vec::new();
    for (i, v) in site.volumes() {
        if is_injected_volume(site, v) {
            continue;
        }
        let name = vol_name(v);
        if let Some(s) = v.get("secret").filter(|s| !s.is_null()) {
            let sname = s.get("secretName").and_then(Value::as_str).unwrap_or(name);
            out.push(Finding::new(
                &WIN314,
                site.ptr(&format!("/volumes/{i}/secret")),
                format!(
                    "volume {name:?} mounts Secret {sname:?}; Windows writes Secret volume data in clear text to the node's local disk (no tmpfs). {ADVICE}"
                ),
            ));
        }
        if let Some(sources) = v.lookup("/projected/sources").and_then(Value::as_array) {
            for (j, src) in sources.iter().enumerate() {
                let Some(s) = src.get("secret").filter(|s| !s.is_null()) else {
                    continue;
                };
                let sname = s.get("name").and_then(Value::as_str).unwrap_or("");
                out.push(Finding::new(
                    &WIN314,
                    site.ptr(&format!("/volumes/{i}/projected/sources/{j}/secret")),
                    format!(
                        "projected volume {name:?} includes Secret {sname:?}; Windows writes it in clear text to the node's local disk (no tmpfs). {ADVICE}"
                    ),
                ));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::model::KubeVersion;
    use crate::rules::testutil::{cfg, ids_in, set};
    use crate::rules::volumes::common::SA_MOUNT_PATH;
    use crate::rules::volumes::common::tests::OWN;
    use crate::rules::volumes::common::tests::pod_with;

    #[test]
    fn injected_legacy_token_secret_gives_nothing() {
        let pod = pod_with(
            json!({"name":"default-token-x7k2p","secret":{"secretName":"default-token-x7k2p","defaultMode":420}}),
            json!({"name":"default-token-x7k2p","mountPath":SA_MOUNT_PATH,"readOnly":true}),
        );
        let mut t = cfg();
        t.target.kubernetes = KubeVersion::new(1, 20);
        assert_eq!(ids_in(&pod, &t, OWN), Vec::<&str>::new());
        // The same Secret mounted somewhere else is the user's doing.
        let user = set(
            pod,
            "/spec/containers/0/volumeMounts/0/mountPath",
            json!("C:\\token"),
        );
        assert_eq!(ids_in(&user, &t, OWN), vec!["WIN314"]);
    }
}
