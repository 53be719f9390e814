//! The *api-changes* verdict: what the API server of the planned Kubernetes version refuses in a
//! Windows workload, from the table `src/model/api_changes.yaml` (a source per row): API
//! versions no longer served (the workload's own, and its RuntimeClass's) and PodSpec fields
//! refused on a pod that declares `spec.os.name: windows`. Judged only when the move changes
//! the Kubernetes version (`--kubernetes` above the current one).

use std::sync::OnceLock;

use serde::Deserialize;
use serde_json::Value;

use super::{PodItem, Verdict};
use crate::model::workload::PodSite;
use crate::model::{Context, KubeVersion};

/// The table.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Table {
    pub apis: Vec<ApiRow>,
    pub fields: Vec<FieldRow>,
}

/// An API version no longer served.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ApiRow {
    pub kinds: Vec<String>,
    pub api_version: String,
    pub removed: String,
    #[serde(rename = "use")]
    pub use_instead: String,
    pub source: String,
}

/// A PodSpec field refused on a Windows pod from some version.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FieldRow {
    pub field: String,
    pub refused_from: String,
    pub before: String,
    pub source: String,
    #[serde(default)]
    pub sources: Vec<String>,
}

/// The table, parsed once.
pub fn table() -> &'static Table {
    static TABLE: OnceLock<Table> = OnceLock::new();
    TABLE.get_or_init(|| {
        parse(include_str!("../model/api_changes.yaml"))
            .expect("src/model/api_changes.yaml is a valid table")
    })
}

/// A table from YAML text.
pub fn parse(text: &str) -> Result<Table, String> {
    let doc = crate::source::load_first_value(text)?;
    let t: Table = serde_json::from_value(doc).map_err(|e| e.to_string())?;
    for v in (t.apis.iter().map(|r| &r.removed)).chain(t.fields.iter().map(|r| &r.refused_from)) {
        KubeVersion::parse(v).ok_or_else(|| format!("{v}: not a Kubernetes version"))?;
    }
    Ok(t)
}

fn version(s: &str) -> KubeVersion {
    KubeVersion::parse(s).expect("checked by parse")
}

/// What the move from Kubernetes `now` to `after` makes the API server refuse in the pod site
/// `site` of `object`: the rows whose version lies after `now`, up to `after` (what `now`
/// already refuses is the linter's: WIN604, WIN101-WIN103, WIN109).
pub fn changes(
    object: &Value,
    site: &PodSite,
    cx: &Context,
    now: KubeVersion,
    after: KubeVersion,
) -> Vec<PodItem> {
    if after <= now {
        return Vec::new();
    }
    let mut out = Vec::new();
    let api = object
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or("");
    let t = table();
    if let Some(r) = removed(t, site.kind, api, now, after) {
        out.push(PodItem {
            verdict: Verdict::ApiChanges,
            evidence: format!(
                "{} in {api} is not served from {} ({}): Kubernetes {after} refuses the object",
                site.kind, r.removed, r.source,
            ),
            change: Some(format!("write it as {}", r.use_instead)),
        });
    }
    if let Some(name) = site.str("/runtimeClassName")
        && let Some(rc) = cx.runtime_classes.get(name)
        && let Some(r) = removed(t, "RuntimeClass", &rc.api_version, now, after)
    {
        out.push(PodItem {
            verdict: Verdict::ApiChanges,
            evidence: format!(
                "its RuntimeClass {name} is written in {}, not served from {} ({}): Kubernetes {after} refuses the RuntimeClass, and then this pod (RuntimeClass not found)",
                rc.api_version, r.removed, r.source,
            ),
            change: Some(format!("write the RuntimeClass as {}", r.use_instead)),
        });
    }
    let windows = site.str("/os/name") == Some("windows");
    for r in t.fields.iter().filter(|_| windows) {
        let from = version(&r.refused_from);
        let rel = format!("/{}", r.field.replace('.', "/"));
        if !(now < from && from <= after) || site.get(&rel).is_none() {
            continue;
        }
        out.push(PodItem {
            verdict: Verdict::ApiChanges,
            evidence: format!(
                "{}.{} is set on a pod with spec.os.name windows: from {} the API server refuses it ({}), so Kubernetes {after} refuses the workload; on {now} it is {}",
                site.spec_ptr.trim_start_matches('/').replace('/', "."),
                r.field,
                r.refused_from,
                r.source,
                r.before,
            ),
            change: Some(format!(
                "remove {}: Windows pods do not use it",
                r.field
            )),
        });
    }
    out
}

/// The row of `kind` in `api` when the move from `now` to `after` removes it (an object already
/// refused on `now` is no change of the move: `winlint lint` reports it, WIN604).
fn removed<'t>(
    t: &'t Table,
    kind: &str,
    api: &str,
    now: KubeVersion,
    after: KubeVersion,
) -> Option<&'t ApiRow> {
    t.apis.iter().find(|r| {
        let from = version(&r.removed);
        r.api_version == api && r.kinds.iter().any(|k| k == kind) && now < from && from <= after
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::workload::pod_sites;
    use serde_json::json;

    fn v(s: &str) -> KubeVersion {
        KubeVersion::parse(s).unwrap()
    }

    #[test]
    fn the_table_parses_and_every_row_has_a_source() {
        let t = table();
        assert!(!t.apis.is_empty() && !t.fields.is_empty());
        for s in (t.apis.iter().map(|r| &r.source)).chain(t.fields.iter().map(|r| &r.source)) {
            assert!(s.starts_with("https://"), "{s}");
        }
        assert!(
            parse("apis: []\nfields: [{field: x, refused_from: soon, before: b, source: s}]")
                .is_err()
        );
    }

    #[test]
    fn a_field_refused_from_1_33_on_a_windows_pod_only_and_only_across_the_move() {
        let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
            "spec": {"os": {"name": "windows"}, "hostUsers": true,
                "securityContext": {"supplementalGroupsPolicy": "Merge"},
                "containers": [{"name": "c", "image": "x"}]}});
        let site = &pod_sites(&pod)[0];
        let cx = Context::default();
        let items = changes(&pod, site, &cx, v("1.32"), v("1.35"));
        assert_eq!(items.len(), 2, "{items:?}");
        assert!(
            items[0]
                .evidence
                .contains("spec.securityContext.supplementalGroupsPolicy")
        );
        assert!(
            items[0].evidence.contains("on 1.32 it is dropped"),
            "{items:?}"
        );
        // No move of the Kubernetes version, or a version before the change: nothing.
        assert!(changes(&pod, site, &cx, v("1.35"), v("1.35")).is_empty());
        assert!(changes(&pod, site, &cx, v("1.31"), v("1.32")).is_empty());
        // Without spec.os.name windows, validateWindows does not run.
        let mut linuxish = pod.clone();
        linuxish["spec"]["os"] = Value::Null;
        let site = &pod_sites(&linuxish)[0];
        assert!(changes(&linuxish, site, &cx, v("1.32"), v("1.35")).is_empty());
    }

    #[test]
    fn a_version_the_move_removes_is_refused_one_already_gone_is_the_linters() {
        let d = json!({"apiVersion": "batch/v1beta1", "kind": "CronJob",
            "metadata": {"name": "d"},
            "spec": {"jobTemplate": {"spec": {"template": {"spec": {
                "containers": [{"name": "c", "image": "x"}]}}}}}});
        let site = &pod_sites(&d)[0];
        let items = changes(&d, site, &Context::default(), v("1.24"), v("1.26"));
        assert_eq!(items.len(), 1);
        assert!(
            items[0].evidence.contains("not served from 1.25"),
            "{items:?}"
        );
        assert_eq!(items[0].change.as_deref(), Some("write it as batch/v1"));
        assert!(changes(&d, site, &Context::default(), v("1.25"), v("1.35")).is_empty());
    }
}
