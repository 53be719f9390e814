//! WIN307 `file-mode-ignored`.

use crate::model::Eval;
use crate::model::meta::{Area, Mutation, Reads, RuleOs};
use crate::model::workload::PodSite;
use crate::model::{Finding, RuleMeta, Severity};
use crate::rules::Rule;
use crate::rules::volumes::common::is_injected_volume;
use crate::rules::volumes::common::vol_name;
use crate::rules::volumes::common::volume_type;
use serde_json::Value;

/// WIN307 in the registry.
pub const RULE: Rule = Rule {
    meta: &WIN307,
    check: file_mode_ignored,
};

/// The API server's default for `defaultMode` of secret/configMap/downwardAPI/projected (0644).
pub(crate) const DEFAULT_MODE: i64 = 420;

// ---------------------------------------------------------------------------------------------
// WIN307

pub static WIN307: RuleMeta = RuleMeta {
    id: "WIN307",
    name: "file-mode-ignored",
    severity: Severity::Info,
    summary: "defaultMode / items[].mode on Secret, ConfigMap, downwardAPI or projected volumes (ignored on Windows)",
    docs: r#"## What it does
Reports `defaultMode` of `secret`, `configMap`, `downwardAPI` and `projected` volumes, and
`items[].mode` (also inside projected sources). `defaultMode: 420` (0644) is the API server's
default and is not reported; nor is the ServiceAccount token volume the API server injects.

## Why is this bad?
Windows has no POSIX file modes: "DefaultMode (due to UID/GID dependency)" is listed as
unsupported. A mode such as `0400` for a private key does not restrict anything on Windows.

## Example
```yaml
volumes:
- name: key
  secret: {secretName: tls, defaultMode: 0400}
```

## Fix
Remove the mode; protect the files with NTFS ACLs inside the image or with `runAsUserName`.
"#,
    fix: None,
    source: "K-STOR",
    applies: "all",
    os: RuleOs::Windows,
    default_on: true,
    reads: Reads::of(&[Area::Containers, Area::Volumes]),
    mutation: Mutation::DEFAULT,
};

pub(crate) fn file_mode_ignored(site: &PodSite, _eval: &Eval) -> Vec<Finding> {
    let mut out = Vec::new();
    let items = |base: &str, src: &Value, out: &mut Vec<Finding>, vname: &str| {
        if let Some(its) = src.get("items").and_then(Value::as_array) {
            for (j, it) in its.iter().enumerate() {
                if let Some(mode) = it.get("mode").filter(|m| !m.is_null()) {
                    out.push(Finding::new(
                        &WIN307,
                        format!("{base}/items/{j}/mode"),
                        format!(
                            "volume {vname:?} item {:?} sets mode {mode}; Windows ignores file modes. Remove it and use NTFS ACLs if the file must be protected",
                            it.get("path").and_then(Value::as_str).unwrap_or("")
                        ),
                    ));
                }
            }
        }
    };
    for (i, v) in site.volumes() {
        let Some(ty) = volume_type(v) else { continue };
        if !matches!(ty, "secret" | "configMap" | "downwardAPI" | "projected")
            || is_injected_volume(site, v)
        {
            continue;
        }
        let vname = vol_name(v);
        let base = site.ptr(&format!("/volumes/{i}/{ty}"));
        let src = &v[ty];
        if let Some(mode) = src.get("defaultMode").filter(|m| !m.is_null())
            && mode.as_i64() != Some(DEFAULT_MODE)
        {
            out.push(Finding::new(
                &WIN307,
                format!("{base}/defaultMode"),
                format!(
                    "volume {vname:?} sets defaultMode {mode}; Windows ignores file modes (no UID/GID). Remove it and use NTFS ACLs if the files must be protected"
                ),
            ));
        }
        if ty == "projected" {
            if let Some(sources) = src.get("sources").and_then(Value::as_array) {
                for (j, s) in sources.iter().enumerate() {
                    for k in ["secret", "configMap", "downwardAPI"] {
                        if let Some(inner) = s.get(k) {
                            items(&format!("{base}/sources/{j}/{k}"), inner, &mut out, vname);
                        }
                    }
                }
            }
        } else {
            items(&base, src, &mut out, vname);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    use crate::rules::testutil::{cfg, hit, hits, set};
    use crate::rules::volumes::common::tests::pod_with;

    #[test]
    fn win307_modes() {
        let pod = pod_with(
            json!({"name":"key","secret":{"secretName":"tls","defaultMode":256,
                "items":[{"key":"tls.key","path":"tls.key","mode":256}]}}),
            json!({"name":"key","mountPath":r"C:\tls"}),
        );
        assert_eq!(
            hits(&pod, &cfg(), "WIN307"),
            vec![
                (
                    Severity::Info,
                    "/spec/volumes/0/secret/defaultMode".to_string()
                ),
                (
                    Severity::Info,
                    "/spec/volumes/0/secret/items/0/mode".to_string()
                ),
            ]
        );
        // The API default 420 alone is not reported.
        let dflt = set(
            pod.clone(),
            "/spec/volumes/0/secret",
            json!({"secretName":"tls","defaultMode":420}),
        );
        assert!(hits(&dflt, &cfg(), "WIN307").is_empty());
        // Projected source items.
        let proj = set(
            pod,
            "/spec/volumes/0",
            json!({"name":"key","projected":{"sources":[{"configMap":{"name":"c","items":[{"key":"k","path":"k","mode":384}]}}]}}),
        );
        assert_eq!(
            hits(&proj, &cfg(), "WIN307"),
            hit(
                Severity::Info,
                "/spec/volumes/0/projected/sources/0/configMap/items/0/mode"
            )
        );
    }
}
