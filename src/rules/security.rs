//! WIN101–WIN104, WIN107: Linux security settings and Windows pods (shared/rules.md §2.2): the
//! fields the API server forbids on Windows pods, windowsOptions on Linux pods, Pod Security
//! "restricted". Field lists and messages follow kubernetes/kubernetes
//! `pkg/apis/core/validation/validation.go`: `validateWindows` and `validateLinux`. (Who the
//! containers run as, `runAsUserName` and gMSA, is in `identity.rs`.)

use serde_json::json;

use super::Rule;
use crate::model::Eval;
use crate::model::KubeVersion;
use crate::model::api_fields::{self, Fate};
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
        Rule {
            meta: &WIN109,
            check: field_newer_than_target,
        },
    ]
}

// ---------------------------------------------------------------------------------------------
// WIN101–WIN103: validateWindows

/// What to do about one Linux-only field, by field and value; `host_process`: the pod is
/// already HostProcess, so it is not told to become one.
fn advice(f: &LinuxOnlyField, host_process: bool) -> &'static str {
    let is_true = f.value.as_bool() == Some(true);
    match f.field {
        "capabilities" | "privileged" | "hostPID" if host_process => {
            "remove it; a HostProcess container already runs on the host with the rights of its runAsUserName account"
        }
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
        "resources" => {
            "pod-level resources are not supported for Windows pods; set requests and limits on each container instead"
        }
        _ => "remove it",
    }
}

/// The severity of a Linux-only field's finding (`None`: not reported by its own rule).
///
/// * the target does not know the field: WIN109's business;
/// * dropped by a disabled feature gate: **info** (admitted, no effect), except a neutral value on
///   a pod without spec.os, which nothing will ever reject;
/// * rejected (the pod declares `spec.os.name: windows` and the target validates the field):
///   **error**;
/// * otherwise the field is kept and ignored on Windows: **warning**, or **info** for a neutral
///   value (what Pod Security asks of Linux pods: harmless, it only blocks spec.os, which WIN003
///   names).
pub(crate) fn linux_only_severity(f: &LinuxOnlyField, declared: bool) -> Option<Severity> {
    let neutral = f.class == FieldValue::Neutral;
    match f.fate {
        Fate::Unknown | Fate::GateRejects { .. } => None,
        Fate::Dropped { .. } => (declared || !neutral).then_some(Severity::Info),
        Fate::Kept if declared && f.rejected => Some(Severity::Error),
        Fate::Kept if neutral => Some(Severity::Info),
        Fate::Kept => Some(Severity::Warning),
    }
}

/// The API server's words when it rejects the field, as measured on 1.32 (research §1.2); pod-level
/// `resources` is rejected only from 1.34, whose words were not measured.
fn forbidden_text(f: &LinuxOnlyField, path: &str) -> String {
    if f.place == FieldPlace::PodResources {
        "kubernetes PR #133046".to_string()
    } else {
        api_fields::forbidden(path, "cannot be set for a windows pod")
    }
}

/// The finding for one Linux-only field (see [`linux_only_severity`]), with advice and the fix of
/// the given safety (none when `safety` is `None`; a dropped field's fix is never more than
/// opt-in: removing it changes nothing on this target).
fn linux_only_finding(
    meta: &'static RuleMeta,
    site: &PodSite,
    eval: &Eval,
    f: &LinuxOnlyField,
    safety: Option<FixSafety>,
) -> Option<Finding> {
    let declared = eval.os_declared_windows(site);
    let sev = linux_only_severity(f, declared)?;
    let k = eval.target.kubernetes;
    let path = pod::dotted(&f.pointer);
    let who = f
        .container
        .map(|c| format!(" ({})", c.label()))
        .unwrap_or_default();
    let quoted = forbidden_text(f, &path);
    let why = match f.fate {
        Fate::Dropped { gate } => {
            let later = match f.api.windows_rejected_by_default_from() {
                Some(m) => format!(
                    "; from Kubernetes 1.{m} the API server rejects it on pods that declare spec.os.name: windows ({quoted})"
                ),
                None => String::new(),
            };
            format!(
                "{path}{who} is dropped by the Kubernetes {k} API server ({}): the field has no effect{later}",
                api_fields::gate_off_text(eval.target, gate)
            )
        }
        _ if sev == Severity::Error => format!(
            "{path}{who} cannot be set for a Windows pod: the API server rejects the pod because spec.os.name is windows ({quoted})"
        ),
        _ if f.api.windows_rejects(eval.target) => format!(
            "{path}{who} has no effect on Windows, and the API server rejects it once the pod declares spec.os.name: windows ({quoted})"
        ),
        _ => format!("{path}{who} has no effect on Windows"),
    };
    let mut advice = advice(f, crate::model::pod::is_host_process_pod(site)).to_string();
    if f.class == FieldValue::Neutral && !declared && f.api.windows_rejects(eval.target) {
        advice.push_str(
            "; if it is there for Pod Security, drop it together with adding spec.os.name: windows, which makes Pod Security (1.25+) skip the checks it satisfies",
        );
    }
    let mut finding =
        Finding::new(meta, f.pointer.clone(), format!("{why}; {advice}")).severity(sev);
    let safety = match (safety, f.fate) {
        (Some(_), Fate::Dropped { .. }) => Some(FixSafety::OptIn),
        (s, _) => s,
    };
    if let Some(safety) = safety.filter(|_| eval.fix_possible(site)) {
        finding = finding.with_fix(Fix {
            safety,
            description: format!("remove {path}"),
            ops: vec![ops::remove(&f.pointer)],
        });
    }
    Some(finding)
}

pub(crate) fn linux_only_findings<'a>(
    meta: &'static RuleMeta,
    place: FieldPlace,
    site: &PodSite<'a>,
    eval: &Eval<'a>,
    safety: impl Fn(&LinuxOnlyField) -> Option<FixSafety>,
) -> Vec<Finding> {
    eval.present_linux_only_fields(site)
        .iter()
        .filter(|f| f.place == place)
        .filter_map(|f| linux_only_finding(meta, site, eval, f, safety(f)))
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
`.sysctls` (non-empty: `sysctls: []` is admitted), `.runAsUser`, `.runAsGroup`,
`.supplementalGroups` (even `[]`), `.supplementalGroupsPolicy`, `.seLinuxChangePolicy` and
`.appArmorProfile`. Presence counts, not value. Only `runAsNonRoot` and `windowsOptions` are
allowed in a Windows pod's securityContext.

Severity, by what the target's API server does (checked against a real kube-apiserver 1.32):

* **error** when the pod declares `spec.os.name: windows` and the target rejects the field:
  Kubernetes ≥ 1.24 (1.23 with `IdentifyPodOS`), and the field's feature gate on —
  `appArmorProfile` from 1.30, `supplementalGroupsPolicy` and `seLinuxChangePolicy` from 1.33
  (`SupplementalGroupsPolicy`, `SELinuxChangePolicy` gates, off by default before). The message
  quotes the server: "spec.securityContext.runAsUser: Forbidden: cannot be set for a windows pod";
* **info** when a disabled feature gate makes the API server drop the field (admitted, no effect;
  e.g. `supplementalGroupsPolicy` on 1.31–1.32): nothing breaks today, it will be rejected once
  the gate is on;
* **warning** when `spec.os` is unset: the API server accepts the pod and Windows ignores the
  field, but the pod can never be given `spec.os`; **info** for a neutral value
  (`seccompProfile`/`appArmorProfile` `RuntimeDefault`, set for Pod Security on purpose): harmless,
  WIN003 names it when it asks for spec.os.

A field the target does not know yet (e.g. `appArmorProfile` before 1.30) is WIN109's.

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
manifest; to choose the user on Windows use `securityContext.windowsOptions.runAsUserName`.
"#,
    fix: Some(FixSafety::OptIn),
    source: "VAL, K-INTRO, issue-9 research §1.2 (measured on kube-apiserver 1.32)",
    applies: "K>=1.24, 1.23 with IdentifyPodOS (error with spec.os.name: windows, per field and gate); any (warning/info)",
    os: RuleOs::Windows,
    context: &[],
    mutation: Mutation::named("linuxOnlyFields"),
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
`spec.hostIPC: true`, `spec.shareProcessNamespace` (any value) and `spec.hostUsers` (any value).
`hostPID`/`hostIPC` are plain booleans, so only `true` is rejected; the other two are rejected
whenever present, even with their default value.

Severity: error with `spec.os.name: windows` where the target rejects the field; `hostUsers` only
from Kubernetes 1.33 (or with `UserNamespacesSupport` on): a 1.25–1.32 API server with default
gates drops it and admits the pod, which is **info**. Without `spec.os`: warning (info for the
neutral `shareProcessNamespace: false` and `hostUsers: true`).

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
    source: "VAL, issue-9 research §1.2 (measured on kube-apiserver 1.32)",
    applies: "K>=1.24, 1.23 with IdentifyPodOS (error with spec.os.name: windows; hostUsers from 1.33); any (warning/info)",
    os: RuleOs::Windows,
    context: &[],
    mutation: Mutation::named("linuxOnlyFields"),
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
`privileged: false`, `allowPrivilegeEscalation: false`, `capabilities: {}` and `procMount: Default`
are rejected too (a disabled `ProcMountType` gate coerces `procMount` to `Default`, it does not drop
it).

Severity: error with `spec.os.name: windows` (Kubernetes ≥ 1.24, 1.23 with `IdentifyPodOS`); without
it warning, or info for the neutral values Pod Security asks of Linux pods (they are harmless on
Windows and only block spec.os, which WIN003 names).

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
    source: "VAL, K-INTRO, K-PSS, issue-9 research §1.2 (measured on kube-apiserver 1.32)",
    applies: "K>=1.24, 1.23 with IdentifyPodOS (error with spec.os.name: windows); any (warning/info)",
    os: RuleOs::Windows,
    context: &[],
    mutation: Mutation::named("linuxOnlyFields"),
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
        let path = pod::dotted(p);
        format!(
            "{path} cannot be set for a linux pod: the API server rejects the pod ({}); remove it, or set spec.os.name: windows if this is a Windows pod",
            api_fields::forbidden(&path, "windows options cannot be set for a linux pod")
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

// ---------------------------------------------------------------------------------------------
// WIN109: fields the target does not have

pub static WIN109: RuleMeta = RuleMeta {
    id: "WIN109",
    name: "field-newer-than-target",
    severity: Severity::Warning,
    summary: "Field the target's API server does not have yet, or drops because its feature gate is off (spec.os, windowsOptions.runAsUserName, appArmorProfile, …)",
    docs: r#"## What it does
Finds fields of a Windows pod that the target's Kubernetes version does not have yet: `spec.os`
(1.23), `securityContext.windowsOptions` (1.14) and its `gmsaCredentialSpecName`/`gmsaCredentialSpec`
(1.14), `runAsUserName` (1.16), `appArmorProfile` (1.30), `seccompProfile` (1.19), `hostUsers`
(1.25), pod-level `resources` (1.32), … — and the Windows fields a disabled feature gate drops
(`runAsUserName` on 1.16, the gMSA fields on 1.14–1.15, `spec.os` on 1.23: their gates were alpha,
off by default). `hostProcess` is WIN203's.

## Why is this bad?
What happens depends on the client. `kubectl` refuses the manifest ("strict decoding error:
unknown field …" from 1.25; its client-side validation before); other clients (Helm, GitOps
controllers, client libraries) have the field dropped by the API server, with a warning from 1.25
and silently before. Either way the setting has no effect: a container meant to run as
`ContainerUser` runs as the image's default user, a gMSA pod runs without its domain identity, a pod
with `spec.os` is not validated as Windows.

## Example
```yaml
# target: kubernetes 1.15
spec:
  securityContext:
    windowsOptions:
      runAsUserName: ContainerUser   # added in 1.16
```

## Fix
Upgrade the cluster, or remove the field and get the behaviour another way (e.g. a `USER` in the
image instead of `runAsUserName`).
"#,
    fix: None,
    source: "issue-9 research §1.1, §1.4 (feature-gate history, measured on kube-apiserver 1.32)",
    applies: "K before the field's release, or its feature gate off",
    os: RuleOs::Windows,
    context: &[],
    mutation: Mutation::DEFAULT,
};

/// What losing the field means, for WIN109's message.
fn lost_consequence(field: &str) -> &'static str {
    match field {
        "os" => {
            "the API server does not validate the pod as Windows and the kubelet does not check its OS"
        }
        "windowsOptions" => {
            "its settings (runAsUserName, gMSA) have no effect: the containers run as the image's default user, without a domain identity"
        }
        "runAsUserName" => "the container runs as the image's default user",
        "gmsaCredentialSpecName" | "gmsaCredentialSpec" => {
            "the container runs without the gMSA domain identity"
        }
        _ => "it would have no effect on Windows anyway; remove it",
    }
}

fn field_newer_than_target(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    let t = eval.target;
    let k = t.kubernetes;
    pod::fields_lost_at_target(site, t)
        .into_iter()
        .map(|f| {
            let path = pod::dotted(&f.pointer);
            let who = f
                .container
                .map(|c| format!(" ({})", c.label()))
                .unwrap_or_default();
            let consequence = lost_consequence(f.api.name);
            let msg = match f.fate {
                Fate::Dropped { gate } => {
                    let kept = crate::model::target::gate_info(gate)
                        .and_then(|g| g.on_by_default_from())
                        .map(|m| format!("; it is kept from Kubernetes 1.{m}"))
                        .unwrap_or_default();
                    format!(
                        "{path}{who} is dropped by the Kubernetes {k} API server ({}): {consequence}{kept}",
                        api_fields::gate_off_text(t, gate)
                    )
                }
                _ => format!(
                    "{path}{who} does not exist in Kubernetes {k} (added in 1.{}): {}; {consequence}",
                    f.api.introduced,
                    api_fields::unknown_field_text(t, &path)
                ),
            };
            Finding::new(&WIN109, f.pointer, msg)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use crate::engine::lint_object;
    use crate::model::Context;
    use crate::model::Operation;
    use crate::rules::testutil::{apply, at, cfg, findings, ids, ids_in, only, set, unset, winok};
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
                "spec.securityContext.runAsUser cannot be set for a Windows pod: the API server rejects the pod because spec.os.name is windows (\"spec.securityContext.runAsUser: Forbidden: cannot be set for a windows pod\")"
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
            f.message
                .contains("rejects it once the pod declares spec.os.name: windows"),
            "{}",
            f.message
        );
        // Before spec.os exists nothing rejects it: it only has no effect.
        let f = &only(&pod, &at(23), "WIN101")[0];
        assert_eq!(f.severity, Severity::Warning);
        assert!(!f.message.contains("rejects"), "{}", f.message);
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
        let sev = |c: &Config| -> Vec<(String, Severity)> {
            only(&pod, c, "WIN101")
                .into_iter()
                .map(|f| {
                    (
                        f.pointer.rsplit('/').next().unwrap().to_string(),
                        f.severity,
                    )
                })
                .collect()
        };
        assert_eq!(ptrs(&at(34)).len(), 11);
        assert!(sev(&at(34)).iter().all(|(_, s)| *s == Severity::Error));
        // 1.32: the gates of supplementalGroupsPolicy and seLinuxChangePolicy are off, the API
        // server drops both (info); 1.31 does not know seLinuxChangePolicy (WIN109's).
        let s32 = sev(&at(32));
        assert_eq!(s32.len(), 11);
        for (field, s) in &s32 {
            let dropped = field == "supplementalGroupsPolicy" || field == "seLinuxChangePolicy";
            assert_eq!(
                *s,
                if dropped {
                    Severity::Info
                } else {
                    Severity::Error
                },
                "{field}"
            );
        }
        let mut gates_on = at(32);
        for g in ["SupplementalGroupsPolicy", "SELinuxChangePolicy"] {
            gates_on.target.feature_gates.insert(g.into(), true);
        }
        assert!(sev(&gates_on).iter().all(|(_, s)| *s == Severity::Error));
        let p30 = ptrs(&cfg());
        assert_eq!(p30.len(), 9, "{p30:?}");
        assert!(p30.contains(&"/spec/securityContext/appArmorProfile".to_string()));
        let p29 = ptrs(&at(29));
        assert_eq!(p29.len(), 8);
        assert!(!p29.iter().any(|p| p.ends_with("appArmorProfile")));
        assert_eq!(ids_in(&pod, &at(29), &["WIN109"]), ["WIN109"]);
        // Before spec.os exists nothing is an error (neutral RuntimeDefault values are info).
        let s22 = sev(&at(22));
        assert!(!s22.is_empty());
        for (field, s) in &s22 {
            let neutral = field == "seccompProfile";
            assert_eq!(
                *s,
                if neutral {
                    Severity::Info
                } else {
                    Severity::Warning
                },
                "{field}"
            );
        }
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
        // 1.33+ (UserNamespacesSupport on by default): rejected, safe deletion of the default.
        let c34 = at(34);
        assert_eq!(ids(&pod, &c34), ["WIN102"]);
        let f = &only(&pod, &c34, "WIN102")[0];
        assert_eq!(f.pointer, "/spec/hostUsers");
        assert_eq!(f.severity, Severity::Error);
        assert_eq!(f.fix.as_ref().unwrap().safety, FixSafety::Safe);
        assert_eq!(apply(&pod, f), winok());
        // 1.30 (the vector target): the gate is off, the API server drops the field and admits
        // the pod (measured on 1.32): info, and its removal is only opt-in.
        assert_eq!(ids(&pod, &cfg()), ["WIN102"]);
        let f = &only(&pod, &cfg(), "WIN102")[0];
        assert_eq!(f.severity, Severity::Info);
        assert!(
            f.message.starts_with(
                "spec.hostUsers is dropped by the Kubernetes 1.30 API server (feature gate UserNamespacesSupport is off by default before 1.33): the field has no effect; from Kubernetes 1.33 the API server rejects it"
            ),
            "{}",
            f.message
        );
        assert_eq!(f.fix.as_ref().unwrap().safety, FixSafety::OptIn);
        // The gate turned on: rejected.
        let mut gates_on = at(32);
        gates_on
            .target
            .feature_gates
            .insert("UserNamespacesSupport".into(), true);
        assert_eq!(only(&pod, &gates_on, "WIN102")[0].severity, Severity::Error);
        // hostUsers: false asks for user namespaces: no fix.
        let pod = set(winok(), "/spec/hostUsers", json!(false));
        assert!(only(&pod, &c34, "WIN102")[0].fix.is_none());
        // The field does not exist before 1.25: WIN109's.
        assert!(only(&pod, &at(24), "WIN102").is_empty());
        assert_eq!(ids_in(&pod, &at(24), OWN), ["WIN109"]);
        // A dropped field does not block spec.os: WIN003 offers it on 1.32.
        let no_os = unset(set(winok(), "/spec/hostUsers", json!(false)), "/spec/os");
        let w003 = only(&no_os, &at(32), "WIN003");
        assert!(w003[0].fix.is_some(), "{}", w003[0].message);
        assert!(only(&no_os, &c34, "WIN003")[0].fix.is_none());
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
        // Values Pod Security asks of Linux pods: harmless on Windows, they only block spec.os.
        for f in &fs {
            assert_eq!(f.severity, Severity::Info);
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

    #[test]
    fn win109_fields_newer_than_the_target() {
        let pod = set(
            set(
                winok(),
                "/spec/securityContext/windowsOptions",
                json!({"runAsUserName": "ContainerUser"}),
            ),
            "/spec/containers/0/securityContext/windowsOptions",
            json!({"gmsaCredentialSpecName": "webapp1", "runAsUserName": "ContainerUser"}),
        );
        let w = |c: &Config| -> Vec<(String, Severity)> {
            only(&pod, c, "WIN109")
                .into_iter()
                .map(|f| (f.pointer, f.severity))
                .collect()
        };
        // 1.9: neither spec.os nor windowsOptions exist; windowsOptions is reported whole.
        let w9 = w(&at(9));
        assert_eq!(
            w9,
            [
                ("/spec/os".to_string(), Severity::Warning),
                (
                    "/spec/securityContext/windowsOptions".to_string(),
                    Severity::Warning
                ),
                (
                    "/spec/containers/0/securityContext/windowsOptions".to_string(),
                    Severity::Warning
                ),
            ]
        );
        let f = &only(&pod, &at(9), "WIN109")[1];
        assert!(
            f.message.starts_with(
                "spec.securityContext.windowsOptions does not exist in Kubernetes 1.9 (added in 1.14): kubectl's client-side validation refuses the manifest"
            ),
            "{}",
            f.message
        );
        // 1.15: windowsOptions exists, gMSA is alpha (off: dropped), runAsUserName does not.
        let ptrs = |c: &Config| -> Vec<String> { w(c).into_iter().map(|(p, _)| p).collect() };
        assert_eq!(
            ptrs(&at(15)),
            [
                "/spec/os",
                "/spec/securityContext/windowsOptions/runAsUserName",
                "/spec/containers/0/securityContext/windowsOptions/gmsaCredentialSpecName",
                "/spec/containers/0/securityContext/windowsOptions/runAsUserName"
            ]
        );
        // 1.16: runAsUserName is alpha and off: dropped.
        let f = &only(&pod, &at(16), "WIN109")[1];
        assert!(
            f.message.starts_with(
                "spec.securityContext.windowsOptions.runAsUserName is dropped by the Kubernetes 1.16 API server (feature gate WindowsRunAsUserName is off by default before 1.17): the container runs as the image's default user; it is kept from Kubernetes 1.17"
            ),
            "{}",
            f.message
        );
        // 1.23: only spec.os (IdentifyPodOS off by default); 1.24: nothing.
        assert_eq!(ptrs(&at(23)), ["/spec/os"]);
        assert!(ptrs(&at(24)).is_empty());
        // A Linux-only field the target does not know: unknown, with the strict-decoding story.
        let aa = set(
            winok(),
            "/spec/containers/0/securityContext/appArmorProfile",
            json!({"type": "RuntimeDefault"}),
        );
        let f = &only(&aa, &at(29), "WIN109")[0];
        assert_eq!(
            f.pointer,
            "/spec/containers/0/securityContext/appArmorProfile"
        );
        assert!(
            f.message.contains(
                "kubectl refuses the manifest (\"strict decoding error: unknown field \\\"spec.containers[0].securityContext.appArmorProfile\\\"\")"
            ),
            "{}",
            f.message
        );
        assert!(only(&aa, &at(29), "WIN103").is_empty());
        assert!(only(&aa, &at(30), "WIN109").is_empty());
        // hostProcess is WIN203's.
        let hp = set(
            winok(),
            "/spec/securityContext/windowsOptions",
            json!({"hostProcess": true}),
        );
        assert!(
            only(&hp, &at(21), "WIN109")
                .iter()
                .all(|f| !f.pointer.contains("hostProcess"))
        );
        assert_eq!(only(&hp, &at(21), "WIN203").len(), 1);
    }

    #[test]
    fn win412_pod_level_resources() {
        let pod = set(
            winok(),
            "/spec/resources",
            json!({"limits": {"cpu": "2", "memory": "4Gi"}}),
        );
        let sev = |c: &Config| only(&pod, c, "WIN412").first().map(|f| f.severity);
        assert_eq!(sev(&at(34)), Some(Severity::Error));
        assert_eq!(sev(&at(33)), Some(Severity::Info));
        assert_eq!(sev(&at(32)), Some(Severity::Info));
        assert_eq!(sev(&at(31)), None);
        assert_eq!(ids_in(&pod, &at(31), &["WIN109"]), ["WIN109"]);
        let f = &only(&pod, &at(32), "WIN412")[0];
        assert!(
            f.message.starts_with(
                "spec.resources is dropped by the Kubernetes 1.32 API server (feature gate PodLevelResources is off by default before 1.34): the field has no effect; from Kubernetes 1.34 the API server rejects it"
            ),
            "{}",
            f.message
        );
        assert!(f.fix.is_none());
        // Without spec.os: not supported on Windows (warning), and it blocks spec.os from 1.34.
        let no_os = unset(pod, "/spec/os");
        assert_eq!(
            only(&no_os, &at(34), "WIN412")[0].severity,
            Severity::Warning
        );
        assert!(only(&no_os, &at(34), "WIN003")[0].fix.is_none());
        assert!(only(&no_os, &at(33), "WIN003")[0].fix.is_some());
    }

    #[test]
    fn win1xx_empty_values_by_the_api_rule() {
        // Admitted: sysctls [], hostPID/hostIPC false. Rejected: supplementalGroups [],
        // capabilities {}, procMount Default (coerced, not dropped, whatever the gate).
        let pod = set(
            set(
                set(
                    winok(),
                    "/spec/securityContext",
                    json!({"sysctls": [], "supplementalGroups": []}),
                ),
                "/spec/hostPID",
                json!(false),
            ),
            "/spec/containers/0/securityContext",
            json!({"capabilities": {}, "procMount": "Default"}),
        );
        let got: Vec<(String, Severity)> = findings(&pod, &at(32))
            .into_iter()
            .filter(|f| f.rule.id.starts_with("WIN1"))
            .map(|f| (f.pointer, f.severity))
            .collect();
        assert_eq!(
            got,
            [
                (
                    "/spec/securityContext/supplementalGroups".to_string(),
                    Severity::Error
                ),
                (
                    "/spec/containers/0/securityContext/capabilities".to_string(),
                    Severity::Error
                ),
                (
                    "/spec/containers/0/securityContext/procMount".to_string(),
                    Severity::Error
                ),
            ]
        );
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
