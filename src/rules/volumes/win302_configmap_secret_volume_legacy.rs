//! WIN302 `configmap-secret-volume-legacy`.

use crate::model::Eval;
use crate::model::meta::{Area, Mutation, Reads, RuleOs};
use crate::model::windows;
use crate::model::workload::PodSite;
use crate::model::{Finding, RuleMeta, Severity};
use crate::rules::Rule;
use crate::rules::volumes::common::is_injected_volume;
use crate::rules::volumes::common::legacy_volume_builds;
use crate::rules::volumes::common::vol_name;
use crate::rules::volumes::common::volume_type;

/// WIN302 in the registry.
pub const RULE: Rule = Rule {
    meta: &WIN302,
    check: configmap_secret_volume_legacy,
};

pub(crate) fn legacy_builds_text(eval: &Eval) -> String {
    eval.target
        .windows_builds
        .iter()
        .filter(|b| **b <= windows::V1709)
        .map(|b| b.token())
        .collect::<Vec<_>>()
        .join(", ")
}

// ---------------------------------------------------------------------------------------------
// WIN302

pub static WIN302: RuleMeta = RuleMeta {
    id: "WIN302",
    name: "configmap-secret-volume-legacy",
    severity: Severity::Error,
    summary: "Secret/ConfigMap/downwardAPI/projected volume on Windows Server 1709 or older",
    docs: r#"## What it does
Flags `spec.volumes[*].secret`, `.configMap`, `.downwardAPI` and `.projected` (any source, including
`serviceAccountToken`) when the target has a Windows build ≤ 10.0.16299 (WS2016, 1709).

## Why is this bad?
"Secrets and ConfigMaps can only be used as environment variables — known issue with versions 1709
and earlier … fixed by upgrading to version 1803." These volumes are written by the kubelet's
atomic writer through symlinks that those Windows builds cannot follow inside a container; the pod
fails to start. downwardAPI and projected volumes use the same mechanism.

## Example
```yaml
spec:
  volumes:
  - name: creds
    secret: {secretName: db}
```

## Fix
Consume the data as environment variables (`env[].valueFrom.secretKeyRef` / `configMapKeyRef`, or
`envFrom`), or move the nodes to Windows Server 1803 or newer.
"#,
    fix: None,
    source: "seed, K-OLD11",
    applies: "W≤1709 (any K)",
    os: RuleOs::Windows,
    default_on: true,
    reads: Reads::of(&[Area::Volumes]),
    mutation: Mutation::DEFAULT,
};

pub(crate) fn configmap_secret_volume_legacy(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    if !legacy_volume_builds(eval) {
        return Vec::new();
    }
    let builds = legacy_builds_text(eval);
    let mut out = Vec::new();
    for (i, v) in site.volumes() {
        let Some(ty) = volume_type(v) else { continue };
        if !matches!(ty, "secret" | "configMap" | "downwardAPI" | "projected")
            || is_injected_volume(site, v)
        {
            continue;
        }
        let advice = match ty {
            "secret" => "use env[].valueFrom.secretKeyRef or envFrom.secretRef instead",
            "configMap" => "use env[].valueFrom.configMapKeyRef or envFrom.configMapRef instead",
            "downwardAPI" => "use env[].valueFrom.fieldRef instead",
            _ => "use env[].valueFrom / envFrom for its sources instead",
        };
        out.push(Finding::new(
            &WIN302,
            site.ptr(&format!("/volumes/{i}/{ty}")),
            format!(
                "volume {:?} is a `{ty}` volume, which Windows Server {builds} cannot mount (fixed in 1803); {advice}, or upgrade the nodes to 1803 or newer",
                vol_name(v)
            ),
        ));
    }
    out
}
