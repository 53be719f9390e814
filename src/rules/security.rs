//! WIN101–WIN104, WIN107: Linux security settings and Windows pods (shared/rules.md §2.2): the
//! fields the API server forbids on Windows pods, windowsOptions on Linux pods, Pod Security
//! "restricted". Field lists and messages follow kubernetes/kubernetes
//! `pkg/apis/core/validation/validation.go`: `validateWindows` and `validateLinux`. (Who the
//! containers run as, `runAsUserName` and gMSA, is in `identity.rs`.)

use serde_json::json;

use super::Rule;
use crate::model::Eval;
use crate::model::KubeVersion;
use crate::model::labels::{PSA_ENFORCE_LABEL, PSA_ENFORCE_VERSION_LABEL};
use crate::model::meta::{Fact, Mutation, RuleOs};
use crate::model::pod::{self, FieldPlace, FieldValue, LinuxOnlyField};
use crate::model::workload::Lookup;
use crate::model::workload::PodSite;
use crate::model::{Finding, Fix, FixSafety, RuleMeta, Severity, ops};

pub fn rules() -> Vec<Rule> {
    vec![
        Rule {
            meta: &WIN101,
            check: pod_securitycontext_linux_only,
        },
        Rule {
            meta: &WIN102,
            check: host_namespaces,
        },
        Rule {
            meta: &WIN103,
            check: container_securitycontext_linux_only,
        },
        Rule {
            meta: &WIN104,
            check: windowsoptions_on_linux_pod,
        },
        Rule {
            meta: &WIN107,
            check: psa_restricted_windows,
        },
    ]
}

// ---------------------------------------------------------------------------------------------
// WIN101–WIN103: validateWindows

/// What to do about one Linux-only field, by field and value.
fn advice(f: &LinuxOnlyField) -> &'static str {
    let is_true = f.value.as_bool() == Some(true);
    match f.field {
        "runAsUser" | "runAsGroup" => {
            "remove it; Windows has no Linux user/group IDs: use securityContext.windowsOptions.runAsUserName (e.g. ContainerUser) to choose the user"
        }
        "fsGroup" | "fsGroupChangePolicy" | "supplementalGroups" | "supplementalGroupsPolicy" => {
            "remove it; Windows has no Linux group IDs (volume ownership is not changed on Windows; use NTFS ACLs)"
        }
        "seLinuxOptions" | "seLinuxChangePolicy" => "remove it; SELinux does not exist on Windows",
        "seccompProfile" => "remove it; seccomp does not exist on Windows",
        "appArmorProfile" => "remove it; AppArmor does not exist on Windows",
        "sysctls" => "remove them; Linux sysctls do not exist on Windows",
        "procMount" => "remove it; /proc does not exist on Windows",
        "allowPrivilegeEscalation" => "remove it; it has no effect on Windows",
        "capabilities" if f.class == FieldValue::Intent => {
            "Linux capabilities do not exist on Windows and cannot be granted; remove it (a HostProcess pod is the Windows way to get host access)"
        }
        "capabilities" => "remove it; Linux capabilities do not exist on Windows",
        "privileged" if is_true => {
            "Windows has no privileged containers; remove it, or run a HostProcess pod (windowsOptions.hostProcess: true with hostNetwork: true) if it needs host access"
        }
        "readOnlyRootFilesystem" if is_true => {
            "Windows cannot mount a container's root filesystem read-only; remove it (protect files with ACLs in the image instead)"
        }
        "privileged" | "readOnlyRootFilesystem" => "remove it (false is the default)",
        "hostPID" => {
            "Windows pods cannot share the host's process namespace; remove it (a HostProcess pod runs among the host's processes)"
        }
        "hostIPC" => "Windows pods cannot share the host's IPC namespace; remove it",
        "shareProcessNamespace" if is_true => {
            "the containers of a Windows pod cannot share a process namespace; remove it"
        }
        "shareProcessNamespace" => "remove it (false is the default)",
        "hostUsers" if f.value.as_bool() == Some(false) => {
            "user namespaces do not exist on Windows; remove it"
        }
        "hostUsers" => "remove it (true is the default)",
        _ => "remove it",
    }
}

/// The finding for one Linux-only field: severity by `spec.os`, message with advice, and the fix
/// with the given safety (none when `safety` is `None`).
fn linux_only_finding(
    meta: &'static RuleMeta,
    site: &PodSite,
    eval: &Eval,
    f: &LinuxOnlyField,
    safety: Option<FixSafety>,
) -> Finding {
    let sev = eval.forbidden_field_severity(site);
    let path = pod::dotted(&f.pointer);
    let who = f
        .container
        .map(|c| format!(" ({})", c.label()))
        .unwrap_or_default();
    let why = if sev == Severity::Error {
        "the API server rejects the pod because spec.os.name is windows"
    } else {
        "ignored on Windows, and the API server rejects it once spec.os.name is windows"
    };
    let mut finding = Finding::new(
        meta,
        f.pointer.clone(),
        format!(
            "{path}{who} cannot be set for a Windows pod ({why}); {}",
            advice(f)
        ),
    )
    .severity(sev);
    if let Some(safety) = safety.filter(|_| eval.fix_possible(site)) {
        finding = finding.with_fix(Fix {
            safety,
            description: format!("remove {path}"),
            ops: vec![ops::remove(&f.pointer)],
        });
    }
    finding
}

fn linux_only_findings<'a>(
    meta: &'static RuleMeta,
    place: FieldPlace,
    site: &PodSite<'a>,
    eval: &Eval<'a>,
    safety: impl Fn(&LinuxOnlyField) -> Option<FixSafety>,
) -> Vec<Finding> {
    eval.linux_only_fields(site)
        .iter()
        .filter(|f| f.place == place)
        .map(|f| linux_only_finding(meta, site, eval, f, safety(f)))
        .collect()
}

pub static WIN101: RuleMeta = RuleMeta {
    id: "WIN101",
    name: "pod-securitycontext-linux-only",
    severity: Severity::Error,
    summary: "Linux-only field in spec.securityContext of a Windows pod (runAsUser, fsGroup, seccompProfile, …)",
    docs: r#"## What it does
Finds the pod-level security settings the API server forbids for Windows pods (`validateWindows`):
`spec.securityContext.seLinuxOptions`, `.seccompProfile`, `.fsGroup`, `.fsGroupChangePolicy`,
`.sysctls` (non-empty), `.runAsUser`, `.runAsGroup`, `.supplementalGroups`,
`.supplementalGroupsPolicy` (Kubernetes ≥ 1.31), `.seLinuxChangePolicy` (≥ 1.32) and
`.appArmorProfile` (≥ 1.30). Presence counts, not value. Only `runAsNonRoot` and `windowsOptions`
are allowed in a Windows pod's securityContext.

Severity: **error** when `spec.os.name: windows` (the API server rejects the pod: "cannot be set for a
windows pod"); **warning** when `spec.os` is unset (the API server accepts the pod, Windows ignores the
field, and the pod can never be given `spec.os`).

## Why is this bad?
The settings mean nothing on Windows: the kubelet logs "Windows container does not support
SecurityContext.RunAsUser" and carries on. Worse, they block `spec.os.name: windows`, and with it the
API server's Windows validation, the Pod Security exemptions (WIN107) and the kubelet's OS check.

## Example
```yaml
spec:
  os: {name: windows}
  securityContext:
    runAsUser: 1000        # rejected
  containers:
  - name: web
    image: mcr.microsoft.com/windows/servercore:ltsc2022
```

## Fix
Opt-in (`--fix-opt-in WIN101`): remove the field. It has no effect on Windows, but it changes the
manifest; to choose the user on Windows use `securityContext.windowsOptions.runAsUserName`. The
webhook's `stripLinuxOnlyFields` policy removes these fields before adding `spec.os` and records
them in the annotation `winlint.io/stripped`.
"#,
    fix: Some(FixSafety::OptIn),
    source: "VAL, K-INTRO",
    applies: "K>=1.23 (error with spec.os.name: windows); any (warning)",
    os: RuleOs::Windows,
    context: &[],
    mutation: Mutation::DEFAULT,
};

fn pod_securitycontext_linux_only<'a>(site: &PodSite<'a>, eval: &Eval<'a>) -> Vec<Finding> {
    linux_only_findings(&WIN101, FieldPlace::PodSecurityContext, site, eval, |_| {
        Some(FixSafety::OptIn)
    })
}

pub static WIN102: RuleMeta = RuleMeta {
    id: "WIN102",
    name: "host-namespaces",
    severity: Severity::Error,
    summary: "hostPID/hostIPC: true, shareProcessNamespace or hostUsers on a Windows pod",
    docs: r#"## What it does
Finds the host-namespace settings the API server forbids for Windows pods: `spec.hostPID: true`,
`spec.hostIPC: true`, `spec.shareProcessNamespace` (any value) and `spec.hostUsers` (any value;
Kubernetes ≥ 1.25). `hostPID`/`hostIPC` are plain booleans, so only `true` is rejected; the other two
are rejected whenever present, even with their default value.

Severity: error with `spec.os.name: windows`, warning without.

## Why is this bad?
Windows containers have no Linux PID/IPC/user namespaces to share; the API server rejects the pod
("cannot be set for a windows pod") once it is declared Windows, and ignores the settings otherwise.

## Example
```yaml
spec:
  os: {name: windows}
  shareProcessNamespace: false   # rejected, although false is the default
```

## Fix
Safe: delete the neutral values `shareProcessNamespace: false` and `hostUsers: true` (they are the
defaults, so nothing changes on any OS). `hostPID: true`, `hostIPC: true`,
`shareProcessNamespace: true` and `hostUsers: false` ask for something Windows cannot provide: no
automatic fix; remove them by hand (a HostProcess pod is the Windows way to reach the host).
"#,
    fix: Some(FixSafety::Safe),
    source: "VAL",
    applies: "K>=1.23 (error with spec.os.name: windows); any (warning)",
    os: RuleOs::Windows,
    context: &[],
    mutation: Mutation::DEFAULT,
};

fn host_namespaces<'a>(site: &PodSite<'a>, eval: &Eval<'a>) -> Vec<Finding> {
    linux_only_findings(&WIN102, FieldPlace::HostNamespaces, site, eval, |f| {
        (f.class == FieldValue::Neutral).then_some(FixSafety::Safe)
    })
}

pub static WIN103: RuleMeta = RuleMeta {
    id: "WIN103",
    name: "container-securitycontext-linux-only",
    severity: Severity::Error,
    summary: "Linux-only field in a container's securityContext of a Windows pod (privileged, capabilities, allowPrivilegeEscalation, …)",
    docs: r#"## What it does
Finds the container security settings the API server forbids for Windows pods, in init, regular
and ephemeral containers: `securityContext.seLinuxOptions`, `.seccompProfile`, `.capabilities`,
`.readOnlyRootFilesystem`, `.privileged`, `.allowPrivilegeEscalation`, `.procMount`, `.runAsUser`,
`.runAsGroup` and `.appArmorProfile` (Kubernetes ≥ 1.30). Presence counts, not value:
`privileged: false` and `allowPrivilegeEscalation: false` are rejected too.

Severity: error with `spec.os.name: windows`, warning without.

## Why is this bad?
Charts hardened for the Pod Security `restricted` profile set `allowPrivilegeEscalation: false`,
`capabilities.drop: [ALL]` and `seccompProfile: RuntimeDefault` everywhere. On Windows they mean
nothing, and once the pod declares `spec.os.name: windows` the API server rejects it ("cannot be set
for a windows pod"); a Deployment then loops on `FailedCreate`. `kubectl debug` profiles that set
`privileged: true` fail the same way on Windows pods.

## Example
```yaml
spec:
  os: {name: windows}
  containers:
  - name: web
    image: mcr.microsoft.com/windows/servercore:ltsc2022
    securityContext:
      allowPrivilegeEscalation: false   # rejected
```

## Fix
Delete neutral values: `privileged: false`, `allowPrivilegeEscalation: false`,
`readOnlyRootFilesystem: false`, `capabilities` that only drop, `seccompProfile`/`appArmorProfile`
of type `RuntimeDefault`, `procMount: Default`.

* **Safe** when the pod declares `spec.os.name: windows`: the pod is rejected as it stands, and Pod
  Security admission (≥ 1.25) exempts Windows-declared pods from the checks these values satisfy, so
  deleting them loses nothing.
* **Opt-in** (`--fix-opt-in WIN103`) when `spec.os` is unset: there the values may be what lets the
  pod pass a `restricted` namespace, so they may only go together with adding `spec.os` (mutation M4
  with `stripLinuxOnlyFields`).

Other values Windows ignores (`runAsUser`, `seLinuxOptions`, …) are removed only on opt-in.
`privileged: true`, `capabilities.add` and `readOnlyRootFilesystem: true` express intent Windows
cannot meet: no automatic fix (drop them, or use a HostProcess pod for host access).
"#,
    fix: Some(FixSafety::OptIn),
    source: "VAL, K-INTRO, K-PSS",
    applies: "K>=1.23 (error with spec.os.name: windows); any (warning)",
    os: RuleOs::Windows,
    context: &[],
    mutation: Mutation::DEFAULT,
};

fn container_securitycontext_linux_only<'a>(site: &PodSite<'a>, eval: &Eval<'a>) -> Vec<Finding> {
    let declared = eval.os_declared_windows(site) && pod::spec_os_available(eval.target);
    linux_only_findings(
        &WIN103,
        FieldPlace::ContainerSecurityContext,
        site,
        eval,
        |f| match f.class {
            FieldValue::Neutral if declared => Some(FixSafety::Safe),
            FieldValue::Neutral | FieldValue::NoEffect => Some(FixSafety::OptIn),
            FieldValue::Intent => None,
        },
    )
}

// ---------------------------------------------------------------------------------------------
// WIN104: validateLinux

pub static WIN104: RuleMeta = RuleMeta {
    id: "WIN104",
    name: "windowsoptions-on-linux-pod",
    severity: Severity::Error,
    summary: "securityContext.windowsOptions on a pod with spec.os.name: linux",
    docs: r#"## What it does
On pods that declare `spec.os.name: linux`, finds `spec.securityContext.windowsOptions` and every
container's `securityContext.windowsOptions` (`validateLinux`). This rule runs on Linux pods.

## Why is this bad?
The API server rejects the pod: "windows options cannot be set for a linux pod". Usually a Windows
pod template was copied and its `spec.os` was not changed, or a Linux pod inherited Windows settings
from a shared Helm value.

## Example
```yaml
spec:
  os: {name: linux}
  securityContext:
    windowsOptions: {runAsUserName: ContainerUser}
```

## Fix
Remove `windowsOptions`, or, if the pod is meant for Windows, set `spec.os.name: windows`.
"#,
    fix: None,
    source: "VAL",
    applies: "K>=1.24 (1.23 with IdentifyPodOS)",
    os: RuleOs::Any,
    context: &[],
    mutation: Mutation::DEFAULT,
};

fn windowsoptions_on_linux_pod(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    if site.str("/os/name") != Some("linux") || !pod::spec_os_available(eval.target) {
        return Vec::new();
    }
    let msg = |p: &str| {
        format!(
            "{} cannot be set for a linux pod (the API server rejects the pod: \"windows options cannot be set for a linux pod\"); remove it, or set spec.os.name: windows if this is a Windows pod",
            pod::dotted(p)
        )
    };
    let mut out = Vec::new();
    if site.get("/securityContext/windowsOptions").is_some() {
        let p = site.ptr("/securityContext/windowsOptions");
        out.push(Finding::new(&WIN104, p.clone(), msg(&p)));
    }
    for c in site.containers() {
        if c.value
            .lookup("/securityContext/windowsOptions")
            .is_some_and(|v| !v.is_null())
        {
            let p = site.ptr(&format!("{}/securityContext/windowsOptions", c.rel()));
            out.push(Finding::new(&WIN104, p.clone(), msg(&p)));
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// WIN107: Pod Security restricted

/// The namespace's labels, when the object names its namespace and the namespace is known.
pub fn namespace_labels<'e>(
    site: &PodSite,
    eval: &'e Eval,
) -> Option<&'e std::collections::BTreeMap<String, String>> {
    eval.context.namespaces.get(site.namespace?)
}

pub static WIN107: RuleMeta = RuleMeta {
    id: "WIN107",
    name: "psa-restricted-windows",
    severity: Severity::Warning,
    summary: "Windows pod in a Pod Security 'restricted' namespace without spec.os.name: windows, or without runAsNonRoot: true",
    docs: r#"## What it does
Only when the pod's namespace is known (a Namespace object in the same input, or the cluster for the
webhook) and it is labelled `pod-security.kubernetes.io/enforce: restricted`:

* the Windows pod lacks `spec.os.name: windows`. Since Kubernetes 1.25 the restricted profile skips
  its seccomp, capabilities and allowPrivilegeEscalation checks only for pods that declare Windows;
  without it the pod is rejected unless it carries those Linux-only fields, which are meaningless on
  Windows and forbidden once `spec.os` is set (WIN101–WIN103);
* a container's effective `runAsNonRoot` is not `true`: restricted requires it for Windows pods too;
* the namespace pins `pod-security.kubernetes.io/enforce-version` below v1.25, whose restricted
  profile has no Windows exemption at all.

## Why is this bad?
Pod Security admission rejects the pod (or every pod of a workload), or the chart must carry Linux
settings that block `spec.os`.

## Example
```yaml
apiVersion: v1
kind: Namespace
metadata:
  name: web
  labels: {pod-security.kubernetes.io/enforce: restricted}
---
apiVersion: v1
kind: Pod
metadata: {name: iis, namespace: web}
spec:
  nodeSelector: {kubernetes.io/os: windows}
  containers:
  - name: iis
    image: mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2022
```

## Fix
Safe: add `spec.os: {name: windows}` — only when the pod has no WIN101–WIN103 field (the same guard
as WIN003 and mutation M4), and not on an update of a Pod. Set `runAsNonRoot: true` (with a
non-administrator user such as `ContainerUser`, see WIN409) by hand.
"#,
    fix: Some(FixSafety::Safe),
    source: "PSA, K-PSS",
    applies: "K>=1.25",
    os: RuleOs::Windows,
    context: &[Fact::NamespaceLabels],
    mutation: Mutation {
        recorded_as: Some("os"),
        adds_spec_os: true,
        ..Mutation::DEFAULT
    },
};

fn psa_restricted_windows<'a>(site: &PodSite<'a>, eval: &Eval<'a>) -> Vec<Finding> {
    if !eval.target.kubernetes.at_least(1, 25) {
        return Vec::new();
    }
    let Some(labels) = namespace_labels(site, eval) else {
        return Vec::new();
    };
    if labels.get(PSA_ENFORCE_LABEL).map(String::as_str) != Some("restricted") {
        return Vec::new();
    }
    let ns = site.namespace.unwrap_or_default();
    let mut out = Vec::new();
    let pinned = labels
        .get(PSA_ENFORCE_VERSION_LABEL)
        .filter(|v| v.as_str() != "latest")
        .and_then(|v| KubeVersion::parse(v).map(|k| (v, k)));
    if let Some((v, _)) = pinned.filter(|(_, k)| !k.at_least(1, 25)) {
        out.push(Finding::new(
            &WIN107,
            site.spec_ptr.clone(),
            format!(
                "namespace {ns:?} enforces Pod Security \"restricted\" at version {v}, which predates the Windows exemptions of v1.25: a Windows pod cannot satisfy it (the seccomp, capabilities and allowPrivilegeEscalation fields it demands are forbidden on Windows pods). Set {PSA_ENFORCE_VERSION_LABEL} to v1.25 or later (or latest)"
            ),
        ));
    } else if !eval.os_declared_windows(site) {
        let blockers = eval.linux_only_fields(site);
        let mut msg = format!(
            "namespace {ns:?} enforces Pod Security \"restricted\", which exempts Windows pods from its seccomp, capabilities and allowPrivilegeEscalation checks only when they declare spec.os.name: windows; without it the pod is rejected unless it carries those Linux-only fields. Set spec.os.name: windows"
        );
        if !blockers.is_empty() {
            let names: Vec<String> = blockers.iter().map(|f| pod::dotted(&f.pointer)).collect();
            msg.push_str(&format!(
                ", after removing the Linux-only fields the API server would then reject: {}",
                names.join(", ")
            ));
        }
        let mut f = Finding::new(&WIN107, site.spec_ptr.clone(), msg);
        if blockers.is_empty() && pod::spec_os_available(eval.target) && eval.fix_possible(site) {
            f = f.with_fix(Fix {
                safety: FixSafety::Safe,
                description: "add spec.os.name=windows".into(),
                ops: vec![ops::add(&site.ptr("/os"), json!({"name": "windows"}))],
            });
        }
        out.push(f);
    }
    // runAsNonRoot: true for every container (pod-level or each container).
    let mut missing: Vec<(String, Vec<String>)> = Vec::new();
    for c in site.containers() {
        let pointer = match pod::effective_run_as_non_root(site, &c) {
            Some(e) if e.value => continue,
            Some(e) => e.pointer,
            None if site.get("/securityContext").is_some() => site.ptr("/securityContext"),
            None => site.spec_ptr.clone(),
        };
        match missing.iter_mut().find(|(p, _)| *p == pointer) {
            Some((_, names)) => names.push(c.label()),
            None => missing.push((pointer, vec![c.label()])),
        }
    }
    for (pointer, names) in missing {
        out.push(Finding::new(
            &WIN107,
            pointer,
            format!(
                "namespace {ns:?} enforces Pod Security \"restricted\", which requires runAsNonRoot: true for Windows pods too; {} not. Set spec.securityContext.runAsNonRoot: true with a non-administrator user (windowsOptions.runAsUserName: ContainerUser)",
                if names.len() == 1 {
                    format!("{} does", names[0])
                } else {
                    format!("{} do", names.join(", "))
                }
            ),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use crate::engine::lint_object;
    use crate::model::Context;
    use crate::model::Operation;
    use crate::rules::testutil::{apply, at, cfg, ids, ids_in, only, set, unset, winok};
    use serde_json::Value;

    /// The WIN1xx rules (other modules' rules may fire beside them).
    const OWN: &[&str] = &["WIN1"];

    fn with_container_sc(obj: Value, list: &str, sc: Value) -> Value {
        set(
            obj,
            &format!("/spec/{list}"),
            json!([{"name":"x","image":"mcr.microsoft.com/windows/servercore:ltsc2022","securityContext":sc}]),
        )
    }

    #[test]
    fn t04_winok_clean() {
        assert!(ids_in(&winok(), &cfg(), OWN).is_empty());
    }

    #[test]
    fn t02_linux_pod_hardened_for_restricted() {
        let pod = json!({"kind":"Pod","metadata":{"name":"l"},"spec":{"os":{"name":"linux"},"nodeSelector":{"kubernetes.io/os":"linux"},
            "securityContext":{"runAsUser":1000,"runAsNonRoot":true,"seccompProfile":{"type":"RuntimeDefault"}},
            "containers":[{"name":"a","image":"nginx","securityContext":{"allowPrivilegeEscalation":false,"capabilities":{"drop":["ALL"]}}}]}});
        assert!(ids_in(&pod, &cfg(), OWN).is_empty());
        // Same without any OS evidence: still nothing.
        let pod = unset(unset(pod, "/spec/os"), "/spec/nodeSelector");
        assert!(ids_in(&pod, &cfg(), OWN).is_empty());
    }

    #[test]
    fn t07_pod_run_as_user_error() {
        let pod = set(winok(), "/spec/securityContext/runAsUser", json!(1000));
        assert_eq!(ids(&pod, &cfg()), ["WIN101"]);
        let f = &only(&pod, &cfg(), "WIN101")[0];
        assert_eq!(f.severity, Severity::Error);
        assert_eq!(f.pointer, "/spec/securityContext/runAsUser");
        assert!(
            f.message.starts_with(
                "spec.securityContext.runAsUser cannot be set for a Windows pod (the API server rejects the pod because spec.os.name is windows)"
            ),
            "{}",
            f.message
        );
        assert!(f.message.contains("windowsOptions.runAsUserName"));
        assert_eq!(f.fix.as_ref().unwrap().safety, FixSafety::OptIn);
        let fixed = apply(&pod, f);
        assert_eq!(fixed["spec"]["securityContext"], json!({}));
        assert!(ids(&fixed, &cfg()).is_empty());
    }

    #[test]
    fn t09_without_spec_os_is_warning() {
        let pod = set(
            unset(winok(), "/spec/os"),
            "/spec/securityContext/runAsUser",
            json!(1000),
        );
        assert_eq!(ids_in(&pod, &cfg(), OWN), ["WIN101"]);
        let f = &only(&pod, &cfg(), "WIN101")[0];
        assert_eq!(f.severity, Severity::Warning);
        assert!(
            f.message.contains("once spec.os.name is windows"),
            "{}",
            f.message
        );
    }

    #[test]
    fn win101_every_field_and_version_gates() {
        let sc = json!({"seLinuxOptions":{"level":"s0"},"seccompProfile":{"type":"RuntimeDefault"},"fsGroup":2000,
            "fsGroupChangePolicy":"OnRootMismatch","sysctls":[{"name":"net.core.somaxconn","value":"1024"}],
            "runAsUser":1000,"runAsGroup":3000,"supplementalGroups":[4000],"supplementalGroupsPolicy":"Strict",
            "seLinuxChangePolicy":"Recursive","appArmorProfile":{"type":"RuntimeDefault"},
            "runAsNonRoot":true,"windowsOptions":{"runAsUserName":"ContainerUser"}});
        let pod = set(winok(), "/spec/securityContext", sc);
        let ptrs = |c: &Config| -> Vec<String> {
            only(&pod, c, "WIN101")
                .into_iter()
                .map(|f| f.pointer)
                .collect()
        };
        assert_eq!(ptrs(&at(34)).len(), 11);
        let p30 = ptrs(&cfg());
        assert_eq!(p30.len(), 9, "{p30:?}");
        assert!(p30.contains(&"/spec/securityContext/appArmorProfile".to_string()));
        let p29 = ptrs(&at(29));
        assert_eq!(p29.len(), 8);
        assert!(!p29.iter().any(|p| p.ends_with("appArmorProfile")));
        // Before spec.os exists every finding is a warning.
        assert!(
            only(&pod, &at(22), "WIN101")
                .iter()
                .all(|f| f.severity == Severity::Warning)
        );
        // Empty sysctls are allowed; null counts as absent.
        let pod = set(
            winok(),
            "/spec/securityContext",
            json!({"sysctls":[],"runAsUser":null,"runAsNonRoot":true}),
        );
        assert!(ids_in(&pod, &cfg(), OWN).is_empty());
    }

    #[test]
    fn win101_in_a_deployment_points_into_the_template() {
        let dep = json!({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},
            "spec":{"template":{"metadata":{},"spec":winok()["spec"].clone()}}});
        let dep = set(
            dep,
            "/spec/template/spec/securityContext/fsGroup",
            json!(2000),
        );
        let f = &only(&dep, &cfg(), "WIN101")[0];
        assert_eq!(f.pointer, "/spec/template/spec/securityContext/fsGroup");
        assert!(
            f.message
                .starts_with("spec.template.spec.securityContext.fsGroup cannot")
        );
        let fixed = apply(&dep, f);
        assert!(only(&fixed, &cfg(), "WIN101").is_empty());
    }

    #[test]
    fn t10_share_process_namespace_false_safe_fix() {
        let pod = set(winok(), "/spec/shareProcessNamespace", json!(false));
        assert_eq!(ids(&pod, &cfg()), ["WIN102"]);
        let f = &only(&pod, &cfg(), "WIN102")[0];
        assert_eq!(f.pointer, "/spec/shareProcessNamespace");
        assert_eq!(f.severity, Severity::Error);
        assert_eq!(f.fix.as_ref().unwrap().safety, FixSafety::Safe);
        let fixed = apply(&pod, f);
        assert!(fixed["spec"].get("shareProcessNamespace").is_none());
        assert!(ids(&fixed, &cfg()).is_empty());
        // true: reported, no fix.
        let pod = set(winok(), "/spec/shareProcessNamespace", json!(true));
        let f = &only(&pod, &cfg(), "WIN102")[0];
        assert!(f.fix.is_none());
    }

    #[test]
    fn t11_host_users_true() {
        let pod = set(winok(), "/spec/hostUsers", json!(true));
        assert_eq!(ids(&pod, &cfg()), ["WIN102"]);
        let f = &only(&pod, &cfg(), "WIN102")[0];
        assert_eq!(f.pointer, "/spec/hostUsers");
        assert_eq!(f.fix.as_ref().unwrap().safety, FixSafety::Safe);
        assert_eq!(apply(&pod, f), winok());
        // hostUsers: false asks for user namespaces: no fix.
        let pod = set(winok(), "/spec/hostUsers", json!(false));
        assert!(only(&pod, &cfg(), "WIN102")[0].fix.is_none());
        // The field does not exist before 1.25: not reported.
        assert!(only(&pod, &at(24), "WIN102").is_empty());
    }

    #[test]
    fn win102_host_pid_ipc_only_when_true() {
        let pod = set(
            set(winok(), "/spec/hostPID", json!(false)),
            "/spec/hostIPC",
            json!(false),
        );
        assert!(ids_in(&pod, &cfg(), OWN).is_empty());
        let pod = set(
            set(winok(), "/spec/hostPID", json!(true)),
            "/spec/hostIPC",
            json!(true),
        );
        let fs = only(&pod, &cfg(), "WIN102");
        let ptrs: Vec<&str> = fs.iter().map(|f| f.pointer.as_str()).collect();
        assert_eq!(ptrs, ["/spec/hostPID", "/spec/hostIPC"]);
        assert!(fs.iter().all(|f| f.fix.is_none()));
    }

    #[test]
    fn t08_allow_privilege_escalation_false_is_deleted() {
        let pod = set(
            winok(),
            "/spec/containers/0/securityContext",
            json!({"allowPrivilegeEscalation": false}),
        );
        assert_eq!(ids(&pod, &cfg()), ["WIN103"]);
        let f = &only(&pod, &cfg(), "WIN103")[0];
        assert_eq!(f.severity, Severity::Error);
        assert_eq!(
            f.pointer,
            "/spec/containers/0/securityContext/allowPrivilegeEscalation"
        );
        assert!(f.message.contains("container \"app\""), "{}", f.message);
        let fix = f.fix.as_ref().unwrap();
        assert_eq!(
            fix.safety,
            FixSafety::Safe,
            "spec.os is windows: deleting loses nothing"
        );
        let fixed = apply(&pod, f);
        assert_eq!(fixed["spec"]["containers"][0]["securityContext"], json!({}));
        assert!(ids(&fixed, &cfg()).is_empty());
    }

    #[test]
    fn win103_neutral_values_without_spec_os_are_opt_in() {
        let pod = set(
            unset(winok(), "/spec/os"),
            "/spec/containers/0/securityContext",
            json!({"allowPrivilegeEscalation": false, "seccompProfile": {"type":"RuntimeDefault"}}),
        );
        let fs = only(&pod, &cfg(), "WIN103");
        assert_eq!(fs.len(), 2);
        for f in &fs {
            assert_eq!(f.severity, Severity::Warning);
            assert_eq!(f.fix.as_ref().unwrap().safety, FixSafety::OptIn);
        }
    }

    #[test]
    fn t12_init_container_capabilities() {
        let pod = with_container_sc(
            winok(),
            "initContainers",
            json!({"capabilities":{"drop":["ALL"]}}),
        );
        assert_eq!(ids(&pod, &cfg()), ["WIN103"]);
        let fs = only(&pod, &cfg(), "WIN103");
        assert_eq!(fs.len(), 1);
        assert_eq!(
            fs[0].pointer,
            "/spec/initContainers/0/securityContext/capabilities"
        );
        assert_eq!(fs[0].fix.as_ref().unwrap().safety, FixSafety::Safe);
        let fixed = apply(&pod, &fs[0]);
        assert_eq!(
            fixed["spec"]["initContainers"][0]["securityContext"],
            json!({})
        );
        // capabilities.add: intent Windows cannot meet, no fix.
        let pod = with_container_sc(
            winok(),
            "initContainers",
            json!({"capabilities":{"add":["NET_ADMIN"],"drop":["ALL"]}}),
        );
        assert!(only(&pod, &cfg(), "WIN103")[0].fix.is_none());
    }

    #[test]
    fn t13_ephemeral_privileged() {
        let pod = set(
            winok(),
            "/spec/ephemeralContainers",
            json!([{"name":"debugger","image":"busybox:1.36","securityContext":{"privileged":true}}]),
        );
        assert_eq!(ids_in(&pod, &cfg(), OWN), ["WIN103"]);
        let f = &only(&pod, &cfg(), "WIN103")[0];
        assert_eq!(
            f.pointer,
            "/spec/ephemeralContainers/0/securityContext/privileged"
        );
        assert_eq!(f.severity, Severity::Error);
        assert!(
            f.fix.is_none(),
            "privileged: true is intent, never stripped silently"
        );
        assert!(f.message.contains("HostProcess"), "{}", f.message);
    }

    #[test]
    fn t55_read_only_root_filesystem_without_spec_os() {
        let pod = set(
            unset(winok(), "/spec/os"),
            "/spec/containers/0/securityContext/readOnlyRootFilesystem",
            json!(true),
        );
        assert_eq!(ids_in(&pod, &cfg(), OWN), ["WIN103"]);
        let f = &only(&pod, &cfg(), "WIN103")[0];
        assert_eq!(f.severity, Severity::Warning);
        assert!(f.fix.is_none());
    }

    #[test]
    fn win103_every_container_field() {
        let sc = json!({"seLinuxOptions":{"level":"s0"},"seccompProfile":{"type":"Localhost","localhostProfile":"p.json"},
            "capabilities":{"drop":["ALL"]},"readOnlyRootFilesystem":false,"privileged":false,"allowPrivilegeEscalation":true,
            "procMount":"Default","runAsUser":1000,"runAsGroup":1000,"appArmorProfile":{"type":"Unconfined"},
            "runAsNonRoot":true,"windowsOptions":{"runAsUserName":"ContainerUser"}});
        let pod = set(winok(), "/spec/containers/0/securityContext", sc);
        let fs = only(&pod, &cfg(), "WIN103");
        let got: Vec<(&str, Option<FixSafety>)> = fs
            .iter()
            .map(|f| {
                (
                    f.pointer.rsplit('/').next().unwrap(),
                    f.fix.as_ref().map(|x| x.safety),
                )
            })
            .collect();
        use FixSafety::*;
        assert_eq!(
            got,
            [
                ("appArmorProfile", Some(OptIn)),
                ("seLinuxOptions", Some(OptIn)),
                ("seccompProfile", Some(OptIn)),
                ("capabilities", Some(Safe)),
                ("readOnlyRootFilesystem", Some(Safe)),
                ("privileged", Some(Safe)),
                ("allowPrivilegeEscalation", Some(OptIn)),
                ("procMount", Some(Safe)),
                ("runAsUser", Some(OptIn)),
                ("runAsGroup", Some(OptIn)),
            ]
        );
        // Applying every fix leaves only the allowed fields.
        let mut fixed = pod.clone();
        for f in &fs {
            json_patch::patch(&mut fixed, &f.fix.as_ref().unwrap().ops).unwrap();
        }
        assert_eq!(
            fixed["spec"]["containers"][0]["securityContext"],
            json!({"runAsNonRoot":true,"windowsOptions":{"runAsUserName":"ContainerUser"}})
        );
        assert!(ids(&fixed, &cfg()).is_empty());
    }

    #[test]
    fn no_fix_on_pod_update() {
        let pod = set(winok(), "/spec/shareProcessNamespace", json!(false));
        let r = lint_object(&pod, &cfg(), &Context::default(), Operation::Update);
        let f = r.findings.iter().find(|f| f.rule.id == "WIN102").unwrap();
        assert!(f.fix.is_none());
    }

    #[test]
    fn t50_windows_options_on_linux_pod() {
        let pod = json!({"kind":"Pod","metadata":{"name":"l"},"spec":{"os":{"name":"linux"},
            "securityContext":{"windowsOptions":{"runAsUserName":"ContainerUser"}},
            "containers":[{"name":"a","image":"nginx:1.25"}]}});
        assert_eq!(ids_in(&pod, &cfg(), OWN), ["WIN104"]);
        let f = &only(&pod, &cfg(), "WIN104")[0];
        assert_eq!(f.pointer, "/spec/securityContext/windowsOptions");
        assert_eq!(f.severity, Severity::Error);
        assert!(
            f.message
                .contains("windows options cannot be set for a linux pod")
        );
        // Container-level too.
        let pod = set(
            unset(pod, "/spec/securityContext"),
            "/spec/containers/0/securityContext/windowsOptions",
            json!({"hostProcess":false}),
        );
        let f = &only(&pod, &cfg(), "WIN104")[0];
        assert_eq!(
            f.pointer,
            "/spec/containers/0/securityContext/windowsOptions"
        );
        // Before spec.os exists the API server does not validate by OS.
        assert!(only(&pod, &at(22), "WIN104").is_empty());
        // Windows pods with windowsOptions: not this rule.
        let win = set(
            winok(),
            "/spec/securityContext/windowsOptions",
            json!({"runAsUserName":"ContainerUser"}),
        );
        assert!(ids_in(&win, &cfg(), OWN).is_empty());
    }

    fn ns(name: &str, labels: Value) -> Value {
        json!({"apiVersion":"v1","kind":"Namespace","metadata":{"name":name,"labels":labels}})
    }

    fn lint_in(obj: &Value, c: &Config, namespace: Option<Value>, op: Operation) -> Vec<Finding> {
        let mut cx = Context::default();
        if let Some(n) = namespace {
            cx.add(&n);
        }
        lint_object(obj, c, &cx, op).findings
    }

    fn restricted_pod() -> Value {
        let p = set(winok(), "/metadata/namespace", json!("web"));
        set(p, "/spec/securityContext/runAsNonRoot", json!(true))
    }

    #[test]
    fn win107_restricted_namespace_without_spec_os() {
        let restricted = ns("web", json!({PSA_ENFORCE_LABEL: "restricted"}));
        let pod = unset(restricted_pod(), "/spec/os");
        let fs: Vec<Finding> = lint_in(&pod, &cfg(), Some(restricted.clone()), Operation::Lint)
            .into_iter()
            .filter(|f| f.rule.id == "WIN107")
            .collect();
        assert_eq!(fs.len(), 1);
        assert_eq!(fs[0].pointer, "/spec");
        assert_eq!(fs[0].severity, Severity::Warning);
        assert_eq!(fs[0].fix.as_ref().unwrap().safety, FixSafety::Safe);
        let fixed = apply(&pod, &fs[0]);
        assert_eq!(fixed["spec"]["os"], json!({"name":"windows"}));
        assert!(
            lint_in(&fixed, &cfg(), Some(restricted.clone()), Operation::Lint)
                .iter()
                .all(|f| f.rule.id != "WIN107")
        );
        // Linux-only fields present: no fix (the API server would reject spec.os).
        let guarded = set(
            pod.clone(),
            "/spec/containers/0/securityContext/allowPrivilegeEscalation",
            json!(false),
        );
        let f = lint_in(&guarded, &cfg(), Some(restricted.clone()), Operation::Lint)
            .into_iter()
            .find(|f| f.rule.id == "WIN107")
            .unwrap();
        assert!(f.fix.is_none());
        assert!(
            f.message.contains("allowPrivilegeEscalation"),
            "{}",
            f.message
        );
        // No fix when a Pod is updated (spec.os is immutable).
        let f = lint_in(&pod, &cfg(), Some(restricted.clone()), Operation::Update)
            .into_iter()
            .find(|f| f.rule.id == "WIN107")
            .unwrap();
        assert!(f.fix.is_none());
        // Not before 1.25.
        assert!(
            lint_in(&pod, &at(24), Some(restricted), Operation::Lint)
                .iter()
                .all(|f| f.rule.id != "WIN107")
        );
    }

    #[test]
    fn win107_only_on_known_restricted_namespaces() {
        let pod = unset(restricted_pod(), "/spec/os");
        let none = |n: Option<Value>, p: &Value| {
            lint_in(p, &cfg(), n, Operation::Lint)
                .iter()
                .all(|f| f.rule.id != "WIN107")
        };
        assert!(
            none(None, &pod),
            "unknown namespace labels: never on a guess"
        );
        assert!(none(
            Some(ns("web", json!({PSA_ENFORCE_LABEL: "baseline"}))),
            &pod
        ));
        assert!(none(
            Some(ns("other", json!({PSA_ENFORCE_LABEL: "restricted"}))),
            &pod
        ));
        // A pod that does not name its namespace is not matched to one.
        assert!(none(
            Some(ns("default", json!({PSA_ENFORCE_LABEL: "restricted"}))),
            &unset(pod, "/metadata/namespace")
        ));
        // With spec.os and runAsNonRoot the restricted profile is satisfied.
        assert!(none(
            Some(ns("web", json!({PSA_ENFORCE_LABEL: "restricted"}))),
            &restricted_pod()
        ));
    }

    #[test]
    fn win107_requires_run_as_non_root() {
        let restricted = ns("web", json!({PSA_ENFORCE_LABEL: "restricted"}));
        let pod = unset(restricted_pod(), "/spec/securityContext/runAsNonRoot");
        let fs: Vec<Finding> = lint_in(&pod, &cfg(), Some(restricted.clone()), Operation::Lint)
            .into_iter()
            .filter(|f| f.rule.id == "WIN107")
            .collect();
        assert_eq!(fs.len(), 1);
        assert!(
            fs[0].message.contains("runAsNonRoot: true"),
            "{}",
            fs[0].message
        );
        assert_eq!(fs[0].pointer, "/spec/securityContext");
        assert!(fs[0].fix.is_none());
        // A container that overrides with false is pointed at.
        let pod = set(
            restricted_pod(),
            "/spec/containers/0/securityContext/runAsNonRoot",
            json!(false),
        );
        let f = lint_in(&pod, &cfg(), Some(restricted), Operation::Lint)
            .into_iter()
            .find(|f| f.rule.id == "WIN107")
            .unwrap();
        assert_eq!(f.pointer, "/spec/containers/0/securityContext/runAsNonRoot");
    }

    #[test]
    fn win107_pinned_old_policy_version() {
        let old = ns(
            "web",
            json!({PSA_ENFORCE_LABEL: "restricted", PSA_ENFORCE_VERSION_LABEL: "v1.24"}),
        );
        let fs: Vec<Finding> = lint_in(&restricted_pod(), &cfg(), Some(old), Operation::Lint)
            .into_iter()
            .filter(|f| f.rule.id == "WIN107")
            .collect();
        assert_eq!(fs.len(), 1);
        assert!(fs[0].message.contains("v1.24"), "{}", fs[0].message);
        let latest = ns(
            "web",
            json!({PSA_ENFORCE_LABEL: "restricted", PSA_ENFORCE_VERSION_LABEL: "latest"}),
        );
        assert!(
            lint_in(&restricted_pod(), &cfg(), Some(latest), Operation::Lint)
                .iter()
                .all(|f| f.rule.id != "WIN107")
        );
    }
}
