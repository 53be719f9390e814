//! Facts about a pod that several rules and the webhook derive the same way.
//!
//! * **Effective security settings** of a container: a container's own `securityContext` value
//!   overrides the pod's `spec.securityContext` value (Kubernetes API semantics for
//!   `runAsNonRoot`, `windowsOptions.runAsUserName`, `windowsOptions.hostProcess`, …). Each
//!   [`Effective`] says which field decided, so a finding can point at it.
//! * **The Linux-only field list** of `validateWindows` (WIN101–WIN103), [`linux_only_fields`]:
//!   the API server rejects a pod that sets `spec.os.name: windows` while carrying any of these
//!   fields, so the rules whose fix adds `spec.os` must not offer it while one is present. They
//!   all ask [`Eval::linux_only_fields`](super::eval::Eval::linux_only_fields).
//! * Small formatting helpers ([`dotted`]).

use serde_json::Value;

use super::api_fields::{self, ApiField, FIELDS, Fate, Place};
use super::target::Target;
use super::workload::{ContainerRef, Lookup, PodSite, lookup};

/// A setting a container has, either its own or inherited from the pod.
#[derive(Debug, Clone, PartialEq)]
pub struct Effective<T> {
    pub value: T,
    /// Pointer (from the object root) to the field that decides the value.
    pub pointer: String,
    /// The value comes from `spec.securityContext` (the container does not set it).
    pub inherited: bool,
}

/// The effective value of a `securityContext` field for container `c`: the container's own
/// `securityContext<rel>` when set (non-null), else the pod's `spec.securityContext<rel>`.
/// `rel` is a JSON pointer relative to a securityContext, e.g. `/windowsOptions/hostProcess`.
pub fn effective_field<'a>(
    site: &PodSite<'a>,
    c: &ContainerRef<'a>,
    rel: &str,
) -> Option<Effective<&'a Value>> {
    // `securityContext` then `rel`: the same lookup as `/securityContext{rel}`, and the
    // pointer strings are only built for a field that is there.
    let in_sc = |holder: &'a Value| {
        holder
            .get("securityContext")
            .and_then(|sc| lookup(sc, rel))
            .filter(|v| !v.is_null())
    };
    if let Some(v) = in_sc(c.value) {
        return Some(Effective {
            value: v,
            pointer: site.ptr(&format!("{}/securityContext{rel}", c.rel())),
            inherited: false,
        });
    }
    in_sc(site.spec).map(|v| Effective {
        value: v,
        pointer: site.ptr(&format!("/securityContext{rel}")),
        inherited: true,
    })
}

fn effective_bool(site: &PodSite, c: &ContainerRef, rel: &str) -> Option<Effective<bool>> {
    let e = effective_field(site, c, rel)?;
    Some(Effective {
        value: e.value.as_bool()?,
        pointer: e.pointer,
        inherited: e.inherited,
    })
}

/// Effective `runAsNonRoot` of container `c` (container value overrides the pod value).
/// `None` when neither sets it. Used by WIN107, WIN204 and WIN409.
pub fn effective_run_as_non_root(site: &PodSite, c: &ContainerRef) -> Option<Effective<bool>> {
    effective_bool(site, c, "/runAsNonRoot")
}

/// Effective `windowsOptions.runAsUserName` of container `c` (container value overrides the pod
/// value). `None` when neither sets it: the image's default user applies (`ContainerAdministrator`
/// for servercore/windows/server images, `ContainerUser` for nanoserver). Used by WIN205 and WIN409.
pub fn effective_run_as_user_name<'a>(
    site: &PodSite<'a>,
    c: &ContainerRef<'a>,
) -> Option<Effective<&'a str>> {
    let e = effective_field(site, c, "/windowsOptions/runAsUserName")?;
    Some(Effective {
        value: e.value.as_str()?,
        pointer: e.pointer,
        inherited: e.inherited,
    })
}

/// Effective `windowsOptions.hostProcess` of container `c`, as `validateWindowsHostProcessPod`
/// computes it: the container's value if set, else the pod's.
pub fn effective_host_process(site: &PodSite, c: &ContainerRef) -> Option<Effective<bool>> {
    effective_bool(site, c, "/windowsOptions/hostProcess")
}

/// Whether container `c` is a HostProcess container (explicitly or inherited): the value of
/// [`effective_host_process`], without building its pointer (rules ask this for every
/// container of every Windows pod).
pub fn is_host_process(site: &PodSite, c: &ContainerRef) -> bool {
    fn field(holder: &Value) -> Option<&Value> {
        holder
            .get("securityContext")
            .and_then(|sc| lookup(sc, "/windowsOptions/hostProcess"))
            .filter(|v| !v.is_null())
    }
    match field(c.value) {
        Some(v) => v.as_bool() == Some(true),
        None => field(site.spec).and_then(Value::as_bool) == Some(true),
    }
}

/// Whether the pod contains any HostProcess container (init, regular or ephemeral). A pod-level
/// `hostProcess: true` with no containers is not a HostProcess pod (the API server counts
/// containers).
pub fn is_host_process_pod(site: &PodSite) -> bool {
    *site
        .host_process_pod
        .get_or_init(|| site.containers().any(|c| is_host_process(site, &c)))
}

/// Pointers of every `windowsOptions.hostProcess: true` field (pod first, then containers).
pub fn host_process_requests(site: &PodSite) -> Vec<String> {
    const HOST_PROCESS: &str = "/securityContext/windowsOptions/hostProcess";
    let mut out = Vec::new();
    if site.get(HOST_PROCESS) == Some(&Value::Bool(true)) {
        out.push(site.ptr(HOST_PROCESS));
    }
    for c in site.containers() {
        if c.value.lookup(HOST_PROCESS) == Some(&Value::Bool(true)) {
            out.push(site.ptr(&format!(
                "{}/securityContext/windowsOptions/hostProcess",
                c.rel()
            )));
        }
    }
    out
}

/// Whether the target's API server keeps `windowsOptions.hostProcess`: Kubernetes 1.22–1.25 with
/// the `WindowsHostProcessContainers` gate (alpha, off, in 1.22; beta, on, from 1.23), always from
/// 1.26 (GA). Before 1.22 the field is unknown (dropped); with the gate off the API server rejects
/// the pod ([`ApiField`] record of `hostProcess`).
pub fn host_process_available(target: &Target) -> bool {
    ApiField::get(Place::WindowsOptions, "hostProcess").fate(target) == Fate::Kept
}

/// Whether the target has `spec.os` (1.24+, or 1.23 with the `IdentifyPodOS` gate); before that
/// the API server drops the field and validates nothing by OS.
pub fn spec_os_available(target: &Target) -> bool {
    api_fields::spec_os_kept(target)
}

/// What removing a Linux-only field from a Windows pod loses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldValue {
    /// A default-equivalent or restricting value that means nothing on Windows (`privileged:
    /// false`, `allowPrivilegeEscalation: false`, `readOnlyRootFilesystem: false`, capabilities
    /// that only drop, `seccompProfile`/`appArmorProfile` `RuntimeDefault`, `procMount: Default`,
    /// `shareProcessNamespace: false`, `hostUsers: true`): deleting it loses nothing.
    Neutral,
    /// A Linux setting Windows ignores (`runAsUser`, `seLinuxOptions`, `sysctls`, …): deleting it
    /// changes nothing on Windows, but it changes the manifest's meaning elsewhere.
    NoEffect,
    /// A request Windows cannot meet (`privileged: true`, `capabilities.add`,
    /// `readOnlyRootFilesystem: true`, `hostPID: true`, `shareProcessNamespace: true`,
    /// `hostUsers: false`, pod-level `resources`): deleting it silently drops what the author
    /// asked for.
    Intent,
}

/// Where a Linux-only field sits in the PodSpec.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldPlace {
    /// `spec.securityContext` (WIN101).
    PodSecurityContext,
    /// `spec.hostPID`, `hostIPC`, `shareProcessNamespace`, `hostUsers` (WIN102).
    HostNamespaces,
    /// A container's `securityContext` (WIN103).
    ContainerSecurityContext,
    /// Pod-level `spec.resources` (WIN412).
    PodResources,
}

/// One field of a PodSpec that `validateWindows` checks on pods that declare
/// `spec.os.name: windows`, as the pod sets it, and what the target's API server does with it.
#[derive(Debug, Clone)]
pub struct LinuxOnlyField<'a> {
    /// Where the field is.
    pub place: FieldPlace,
    /// Pointer from the object root.
    pub pointer: String,
    /// The field name (`runAsUser`, `hostPID`, `capabilities`).
    pub field: &'static str,
    pub value: &'a Value,
    /// The container, for container securityContext fields.
    pub container: Option<ContainerRef<'a>>,
    pub class: FieldValue,
    /// The field's API history.
    pub api: &'static ApiField,
    /// What the target's API server does with it.
    pub fate: Fate,
    /// The target's API server rejects it once the pod declares `spec.os.name: windows`: it
    /// blocks `spec.os`.
    pub rejected: bool,
}

fn profile_type(v: &Value) -> Option<&str> {
    v.get("type").and_then(Value::as_str)
}

fn classify_pod_field(field: &str, v: &Value) -> FieldValue {
    match field {
        "seccompProfile" | "appArmorProfile" if profile_type(v) == Some("RuntimeDefault") => {
            FieldValue::Neutral
        }
        _ => FieldValue::NoEffect,
    }
}

fn classify_spec_field(field: &str, v: &Value) -> FieldValue {
    match (field, v.as_bool()) {
        // Their defaults: nothing is asked for.
        ("shareProcessNamespace", Some(false)) | ("hostUsers", Some(true)) => FieldValue::Neutral,
        _ => FieldValue::Intent,
    }
}

fn classify_container_field(field: &str, v: &Value) -> FieldValue {
    match field {
        "privileged" | "readOnlyRootFilesystem" => match v.as_bool() {
            Some(false) => FieldValue::Neutral,
            _ => FieldValue::Intent,
        },
        "allowPrivilegeEscalation" => match v.as_bool() {
            Some(false) => FieldValue::Neutral,
            _ => FieldValue::NoEffect,
        },
        "capabilities" => {
            let adds = v
                .get("add")
                .and_then(Value::as_array)
                .is_some_and(|a| !a.is_empty());
            if adds {
                FieldValue::Intent
            } else {
                FieldValue::Neutral
            }
        }
        "seccompProfile" | "appArmorProfile" if profile_type(v) == Some("RuntimeDefault") => {
            FieldValue::Neutral
        }
        "procMount" if v.as_str() == Some("Default") => FieldValue::Neutral,
        _ => FieldValue::NoEffect,
    }
}

/// Every field of the pod that `validateWindows` (VAL) checks on a pod that declares
/// `spec.os.name: windows`, with a value that counts ([`ApiField::value_counts`]: presence, not
/// value, for most; `true` for `hostPID`/`hostIPC`; non-empty `sysctls`): pod securityContext
/// fields (WIN101), `hostPID`, `hostIPC`, `shareProcessNamespace`, `hostUsers` (WIN102), container
/// securityContext fields of init, regular and ephemeral containers (WIN103) and pod-level
/// `resources` (WIN412). Each carries what the target's API server does with it ([`Fate`]) and
/// whether it would reject it ([`LinuxOnlyField::rejected`]). `null` counts as absent.
pub fn linux_only_fields<'a>(site: &PodSite<'a>, target: &Target) -> Vec<LinuxOnlyField<'a>> {
    let field = |api: &'static ApiField,
                 place: FieldPlace,
                 pointer: String,
                 value: &'a Value,
                 container: Option<ContainerRef<'a>>,
                 class: FieldValue| {
        let fate = api.fate(target);
        LinuxOnlyField {
            place,
            pointer,
            field: api.name,
            value,
            container,
            class,
            api,
            fate,
            rejected: api.windows_rejects(target),
        }
    };
    let linux = |place: Place| {
        FIELDS
            .iter()
            .filter(move |f| f.place == place && f.windows_rejects_from.is_some())
    };
    let mut out = Vec::new();
    for (api, v) in set_in_security_context(site.spec, Place::PodSecurityContext) {
        if api.value_counts(v) {
            out.push(field(
                api,
                FieldPlace::PodSecurityContext,
                site.ptr(&format!("/securityContext/{}", api.name)),
                v,
                None,
                classify_pod_field(api.name, v),
            ));
        }
    }
    for api in linux(Place::Spec) {
        if let Some(v) = site.spec.get(api.name).filter(|v| api.value_counts(v)) {
            let (place, class) = if api.name == "resources" {
                (FieldPlace::PodResources, FieldValue::Intent)
            } else {
                (FieldPlace::HostNamespaces, classify_spec_field(api.name, v))
            };
            out.push(field(
                api,
                place,
                site.ptr(&format!("/{}", api.name)),
                v,
                None,
                class,
            ));
        }
    }
    for c in site.containers() {
        for (api, v) in set_in_security_context(c.value, Place::ContainerSecurityContext) {
            if api.value_counts(v) {
                out.push(field(
                    api,
                    FieldPlace::ContainerSecurityContext,
                    site.ptr(&format!("{}/securityContext/{}", c.rel(), api.name)),
                    v,
                    Some(c),
                    classify_container_field(api.name, v),
                ));
            }
        }
    }
    out
}

/// The fields of the table at `place` that `which` selects and that the map `fields` (a
/// securityContext, a windowsOptions) sets to a non-null value, in [`FIELDS`] order. It walks
/// the map's own keys, a handful, instead of looking every field of the table up: most maps
/// set few of them or none.
fn set_in(
    fields: Option<&Value>,
    place: Place,
    which: impl Fn(&ApiField) -> bool,
) -> Vec<(&'static ApiField, &Value)> {
    let Some(map) = fields.and_then(Value::as_object) else {
        return Vec::new();
    };
    let mut set: Vec<(usize, &Value)> = map
        .iter()
        .filter(|(_, v)| !v.is_null())
        .filter_map(|(k, v)| {
            let i = FIELDS
                .iter()
                .position(|f| f.place == place && f.name == k && which(f))?;
            Some((i, v))
        })
        .collect();
    set.sort_unstable_by_key(|(i, _)| *i);
    set.into_iter().map(|(i, v)| (&FIELDS[i], v)).collect()
}

/// The Linux-only fields of `place` (rejected on Windows from some version) that the
/// securityContext of `holder` (a pod spec or a container) sets ([`set_in`]).
fn set_in_security_context(holder: &Value, place: Place) -> Vec<(&'static ApiField, &Value)> {
    set_in(holder.get("securityContext"), place, |f| {
        f.windows_rejects_from.is_some()
    })
}

/// A field the target's API server does not have, or drops because its feature gate is off, as
/// a pod sets it (WIN109): the Windows fields (`spec.os`, `windowsOptions` and its fields except
/// `hostProcess`, which WIN203 owns) and the Linux-only fields the target does not know. A
/// `windowsOptions` the target does not know is reported whole, not field by field.
#[derive(Debug, Clone)]
pub struct TargetField<'a> {
    pub pointer: String,
    pub api: &'static ApiField,
    pub fate: Fate,
    pub container: Option<ContainerRef<'a>>,
}

/// The fields of the pod that the target does not know or drops (see [`TargetField`]).
pub fn fields_lost_at_target<'a>(site: &PodSite<'a>, target: &Target) -> Vec<TargetField<'a>> {
    let mut out = Vec::new();
    // The pointer is built only for a field that is lost: most fields checked are kept.
    let mut push = |api: &'static ApiField,
                    pointer: &dyn Fn() -> String,
                    container: Option<ContainerRef<'a>>| {
        let fate = api.fate(target);
        let lost = match fate {
            Fate::Unknown => true,
            // A dropped Linux-only field is harmless on Windows (its own rule says so); a
            // dropped Windows field loses what the author asked for.
            Fate::Dropped { .. } => api.windows_rejects_from.is_none(),
            Fate::GateRejects { .. } | Fate::Kept => false,
        };
        if lost {
            out.push(TargetField {
                pointer: pointer(),
                api,
                fate,
                container,
            });
        }
    };
    if site.spec.get("os").is_some_and(|v| !v.is_null()) {
        push(ApiField::get(Place::Spec, "os"), &|| site.ptr("/os"), None);
    }
    let holders = std::iter::once((site.spec, None, Place::PodSecurityContext)).chain(
        site.containers()
            .map(|c| (c.value, Some(c), Place::ContainerSecurityContext)),
    );
    for (holder, container, place) in holders {
        let Some(sc) = holder.get("securityContext").filter(|v| v.is_object()) else {
            continue;
        };
        let sc_ptr = || match &container {
            Some(c) => site.ptr(&format!("{}/securityContext", c.rel())),
            None => site.ptr("/securityContext"),
        };
        for (api, value) in set_in(Some(sc), place, |_| true) {
            let pointer = || format!("{}/{}", sc_ptr(), api.name);
            if api.name != "windowsOptions" {
                if api.fate(target) == Fate::Unknown && api.value_counts(value) {
                    push(api, &pointer, container);
                }
                continue;
            }
            if api.fate(target) == Fate::Unknown {
                push(api, &pointer, container);
                continue;
            }
            for (w, _) in set_in(Some(value), Place::WindowsOptions, |f| {
                f.name != "hostProcess"
            }) {
                push(w, &|| format!("{}/{}", pointer(), w.name), container);
            }
        }
    }
    for api in FIELDS
        .iter()
        .filter(|f| f.place == Place::Spec && f.windows_rejects_from.is_some())
    {
        if site.spec.get(api.name).is_some_and(|v| api.value_counts(v))
            && api.fate(target) == Fate::Unknown
        {
            push(api, &|| site.ptr(&format!("/{}", api.name)), None);
        }
    }
    out
}

/// A JSON pointer as a dotted field path for messages:
/// `/spec/initContainers/0/securityContext/capabilities` →
/// `spec.initContainers[0].securityContext.capabilities`.
pub fn dotted(pointer: &str) -> String {
    let mut out = String::new();
    for tok in pointer.split('/').skip(1) {
        let tok = super::pointer::unescape(tok);
        if !tok.is_empty() && tok.bytes().all(|b| b.is_ascii_digit()) {
            out.push_str(&format!("[{tok}]"));
        } else {
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(&tok);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::KubeVersion;
    use crate::model::workload::pod_sites;
    use serde_json::json;

    fn pod(spec: Value) -> Value {
        json!({"kind":"Pod","metadata":{"name":"p"},"spec":spec})
    }

    #[test]
    fn dotted_paths() {
        assert_eq!(
            dotted("/spec/initContainers/0/securityContext/capabilities"),
            "spec.initContainers[0].securityContext.capabilities"
        );
        assert_eq!(
            dotted("/spec/nodeSelector/kubernetes.io~1os"),
            "spec.nodeSelector.kubernetes.io/os"
        );
    }

    /// `is_host_process` is `effective_host_process` without the pointer: same answer for every
    /// combination of pod and container values (unset, null, true, false, not a boolean).
    #[test]
    fn is_host_process_is_the_effective_value() {
        let values = [
            None,
            Some(json!(null)),
            Some(json!(true)),
            Some(json!(false)),
            Some(json!("true")),
        ];
        for pod_v in &values {
            for c_v in &values {
                let mut spec = json!({"containers": [{"name": "a"}]});
                if let Some(v) = pod_v {
                    spec["securityContext"] = json!({"windowsOptions": {"hostProcess": v}});
                }
                if let Some(v) = c_v {
                    spec["containers"][0]["securityContext"] =
                        json!({"windowsOptions": {"hostProcess": v}});
                }
                let obj = pod(spec);
                let s = &pod_sites(&obj)[0];
                let c = s.containers().next().unwrap();
                assert_eq!(
                    is_host_process(s, &c),
                    effective_host_process(s, &c).is_some_and(|e| e.value),
                    "pod {pod_v:?}, container {c_v:?}"
                );
            }
        }
    }

    #[test]
    fn container_value_overrides_pod_value() {
        let p = pod(json!({
        "securityContext":{"runAsNonRoot":true,"windowsOptions":{"runAsUserName":"ContainerUser","hostProcess":true}},
        "containers":[
            {"name":"a"},
            {"name":"b","securityContext":{"runAsNonRoot":false,"windowsOptions":{"runAsUserName":"ContainerAdministrator"}}},
            {"name":"c","securityContext":{"runAsNonRoot":null}}
        ]}));
        let s = &pod_sites(&p)[0];
        let cs: Vec<_> = s.containers().collect();
        let a = effective_run_as_non_root(s, &cs[0]).unwrap();
        assert!(a.value && a.inherited);
        assert_eq!(a.pointer, "/spec/securityContext/runAsNonRoot");
        let b = effective_run_as_non_root(s, &cs[1]).unwrap();
        assert!(!b.value && !b.inherited);
        assert_eq!(b.pointer, "/spec/containers/1/securityContext/runAsNonRoot");
        assert!(effective_run_as_non_root(s, &cs[2]).unwrap().inherited);
        assert_eq!(
            effective_run_as_user_name(s, &cs[1]).unwrap().value,
            "ContainerAdministrator"
        );
        assert_eq!(
            effective_run_as_user_name(s, &cs[0]).unwrap().value,
            "ContainerUser"
        );
        assert!(cs.iter().all(|c| is_host_process(s, c)));
        assert!(is_host_process_pod(s));
        let none = pod(json!({"containers":[{"name":"a"}]}));
        let s = &pod_sites(&none)[0];
        let c = s.containers().next().unwrap();
        assert!(effective_run_as_non_root(s, &c).is_none());
        assert!(effective_run_as_user_name(s, &c).is_none());
        assert!(!is_host_process_pod(s));
    }

    #[test]
    fn linux_only_fields_presence_and_versions() {
        let p = pod(json!({
            "hostPID": false, "hostIPC": true, "shareProcessNamespace": false, "hostUsers": true,
            "securityContext":{"runAsUser":1000,"sysctls":[],"appArmorProfile":{"type":"RuntimeDefault"},"runAsNonRoot":true},
            "containers":[{"name":"a","securityContext":{"privileged":false,"capabilities":{"add":["NET_ADMIN"]},"runAsNonRoot":true}}],
            "ephemeralContainers":[{"name":"d","securityContext":{"readOnlyRootFilesystem":true}}]}));
        let s = &pod_sites(&p)[0];
        let mut t = Target::default();
        let got: Vec<(String, FieldValue)> = linux_only_fields(s, &t)
            .into_iter()
            .map(|f| (f.pointer, f.class))
            .collect();
        assert_eq!(
            got,
            vec![
                (
                    "/spec/securityContext/appArmorProfile".into(),
                    FieldValue::Neutral
                ),
                (
                    "/spec/securityContext/runAsUser".into(),
                    FieldValue::NoEffect
                ),
                ("/spec/hostIPC".into(), FieldValue::Intent),
                ("/spec/shareProcessNamespace".into(), FieldValue::Neutral),
                ("/spec/hostUsers".into(), FieldValue::Neutral),
                (
                    "/spec/containers/0/securityContext/capabilities".into(),
                    FieldValue::Intent
                ),
                (
                    "/spec/containers/0/securityContext/privileged".into(),
                    FieldValue::Neutral
                ),
                (
                    "/spec/ephemeralContainers/0/securityContext/readOnlyRootFilesystem".into(),
                    FieldValue::Intent
                ),
            ]
        );
        // Every field says what the target's API server does with it; only the rejected ones
        // block spec.os.
        let fate = |t: &Target, end: &str| {
            linux_only_fields(s, t)
                .into_iter()
                .find(|f| f.pointer.ends_with(end))
                .map(|f| (f.fate, f.rejected))
                .unwrap()
        };
        assert_eq!(fate(&t, "/runAsUser"), (Fate::Kept, true));
        assert_eq!(fate(&t, "/hostUsers"), (Fate::Kept, true));
        t.kubernetes = KubeVersion::new(1, 32);
        assert_eq!(
            fate(&t, "/hostUsers"),
            (
                Fate::Dropped {
                    gate: "UserNamespacesSupport"
                },
                false
            )
        );
        t.kubernetes = KubeVersion::new(1, 24);
        assert_eq!(fate(&t, "/appArmorProfile"), (Fate::Unknown, false));
        assert_eq!(fate(&t, "/hostUsers"), (Fate::Unknown, false));
        assert_eq!(fate(&t, "/runAsUser"), (Fate::Kept, true));
        t.kubernetes = KubeVersion::new(1, 23);
        assert_eq!(fate(&t, "/runAsUser"), (Fate::Kept, false));
    }

    #[test]
    fn allowed_fields_are_not_linux_only() {
        let p = pod(json!({
            "hostPID": false,
            "securityContext":{"runAsNonRoot":true,"windowsOptions":{"runAsUserName":"ContainerUser"},"sysctls":null},
            "containers":[{"name":"a","securityContext":{"runAsNonRoot":true,"privileged":null}}]}));
        let s = &pod_sites(&p)[0];
        assert!(linux_only_fields(s, &Target::default()).is_empty());
    }

    #[test]
    fn host_process_availability() {
        let mut t = Target::default();
        for (minor, want) in [(21, false), (22, false), (23, true), (26, true), (34, true)] {
            t.kubernetes = KubeVersion::new(1, minor);
            assert_eq!(host_process_available(&t), want, "1.{minor}");
        }
        t.kubernetes = KubeVersion::new(1, 22);
        t.feature_gates
            .insert("WindowsHostProcessContainers".into(), true);
        assert!(host_process_available(&t));
    }
}
