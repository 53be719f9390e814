//! The webhook's mutation (shared/rules.md §3): which pods are mutated, the rules' fixes through
//! the [`Fixer`] (M1 = WIN001, M3 = WIN007, M4 = WIN003, M2 = WIN005 when the rule's metadata
//! opts it in), then the mutation steps that are not fixes of a finding ([`STEPS`]: M5 Hyper-V,
//! M6 the pod OS label, the Linux guard `on`), then M7, the `winlint.io/mutated` audit annotation
//! naming what changed (each rule's [`Mutation::recorded_as`](crate::model::meta::Mutation)).
//!
//! * Which pods: Windows-definite pods; Windows-probable pods when the evidence is a
//!   Windows-only image (such a pod cannot run anywhere else; MV1) or `mutation.probable`.
//!   OS-unknown pods get only the steps for them (the Linux guard `on`).
//! * `mutation.linuxGuard: auto` (the default) applies WIN011's fix to a pod that is not
//!   Windows: its images have no Windows variant and it can land on a Windows node ([`pin_linux`]).
//! * The fixes go through [`Fixer::fix_guarded`]: a patch that would add an error the object
//!   did not have (a pod the API server would reject) is retried without `spec.os`, then dropped.

use json_patch::PatchOperation;
use serde_json::Value;

use super::fix::{FixOptions, Fixer, Rollback, adds_error, apply_fix};
use super::{ObjectReport, lint_object};
use crate::config::{Config, HyperV, LinuxGuard, MutationPolicy};
use crate::model::classify::{Os, Source, Strength};
use crate::model::image;
use crate::model::labels::{
    BETA_ARCH_LABEL, BETA_OS_LABEL, HYPERV_ANNOTATION, MUTATED_ANNOTATION, OS_LABEL, OS_LABELS,
};
use crate::model::meta::Recorded;
use crate::model::placement::{self, Placement};
use crate::model::pod::{effective_run_as_user_name, host_process_requests, linux_only_fields};
use crate::model::windows::{self, Build, Isolation};
use crate::model::workload::{self, Lookup, PodSite};
use crate::model::{Context, Operation, Severity, Target, escape, ops};
use crate::rules::env::common::is_strict_env_name;
use crate::rules::scheduling::win005_missing_windows_build_selector::has_build_pin;

/// The pods a mutation step is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepPods {
    /// The Windows pods the webhook mutates (after the rules' fixes).
    Windows,
    /// Pods whose OS is unknown.
    UnknownOs,
}

/// A mutation that is not the fix of a finding: the policy turns it on, it applies to one kind
/// of pod, and what it changed is recorded under `name`.
pub struct Step {
    /// The name recorded in `winlint.io/mutated`.
    pub name: &'static str,
    /// What it does, for the docs.
    pub summary: &'static str,
    pub pods: StepPods,
    /// Whether the mutation policy turns it on.
    pub enabled: fn(&MutationPolicy) -> bool,
    /// Its operations against the object as the fixes and earlier steps left it (none: nothing
    /// to do for this pod), knowing the target and the context (RuntimeClasses).
    pub ops: fn(&PodSite, &Target, &Context) -> Vec<PatchOperation>,
    /// Whether a pod shows what the step writes: an entry of `winlint.io/mutated` naming the
    /// step is kept only while it does ([`shows`]).
    pub shows: fn(&PodSite, &Target) -> bool,
}

/// The steps, in the order they run.
pub const STEPS: &[Step] = &[
    Step {
        name: "runtimeClassName",
        summary: "M5: request Hyper-V isolation with the target's Hyper-V RuntimeClass (K>=1.21)",
        pods: StepPods::Windows,
        enabled: |p| p.hyperv == HyperV::On,
        ops: hyperv_runtime_class,
        shows: |site, target| shows(Recorded::RuntimeClassName, site, target),
    },
    Step {
        name: "runtimeClassName",
        summary: "M5 auto: a Hyper-V RuntimeClass for a pod whose images no Windows node it can select runs under process isolation, when one can (K>=1.21)",
        pods: StepPods::Windows,
        enabled: |p| p.hyperv == HyperV::Auto,
        ops: hyperv_where_needed,
        shows: |site, target| shows(Recorded::RuntimeClassName, site, target),
    },
    Step {
        name: "isolation",
        summary: "M5: request Hyper-V isolation with the legacy annotation (1.10<=K<1.21, one container)",
        pods: StepPods::Windows,
        enabled: |p| p.hyperv == HyperV::On,
        ops: hyperv_annotation,
        shows: |site, _| site.annotation(HYPERV_ANNOTATION) == Some("hyperv"),
    },
    Step {
        name: "osLabel",
        summary: "M6: the pod label kubernetes.io/os=windows (the kubelet refuses a pod whose label differs from the node OS)",
        pods: StepPods::Windows,
        enabled: |p| p.pod_os_label,
        ops: pod_os_label,
        shows: |site, _| site.label(OS_LABEL) == Some("windows"),
    },
    Step {
        name: "linuxGuard",
        summary: "linuxGuard on: pin every OS-unknown pod to Linux nodes (nodeSelector kubernetes.io/os=linux); auto applies WIN011's fix instead",
        pods: StepPods::UnknownOs,
        enabled: |p| p.linux_guard == LinuxGuard::On,
        ops: linux_guard,
        shows: |site, target| shows(Recorded::LinuxGuard, site, target),
    },
];

/// M5 is never for HostProcess or hostNetwork pods, nor for pods pinned to Linux.
fn hyperv_allowed(site: &PodSite) -> bool {
    site.get("/hostNetwork").and_then(Value::as_bool) != Some(true)
        && host_process_requests(site).is_empty()
        && site.node_selector(OS_LABEL) != Some("linux")
}

fn hyperv_runtime_class(site: &PodSite, target: &Target, _: &Context) -> Vec<PatchOperation> {
    if !target.kubernetes.at_least(1, 21)
        || !hyperv_allowed(site)
        || site.get("/runtimeClassName").is_some()
    {
        return Vec::new();
    }
    vec![ops::add(
        &site.ptr("/runtimeClassName"),
        target.hyperv_runtime_class.clone().into(),
    )]
}

fn hyperv_where_needed(site: &PodSite, target: &Target, context: &Context) -> Vec<PatchOperation> {
    if !target.kubernetes.at_least(1, 21)
        || !hyperv_allowed(site)
        || site.get("/runtimeClassName").is_some()
    {
        return Vec::new();
    }
    let builds: Vec<Build> = site
        .containers()
        .filter(|c| c.list != "ephemeralContainers")
        .filter_map(|c| image::analyze(c.image()?).build)
        .collect();
    if builds.is_empty() {
        return Vec::new();
    }
    let placement = Placement::of(site, target, context);
    let Some(hosts) = placement.host_builds(target) else {
        return Vec::new();
    };
    let runs = |&h: &Build| {
        builds
            .iter()
            .all(|&b| windows::compatible(b, h, Isolation::Process))
    };
    if hosts.builds.iter().any(runs) {
        return Vec::new();
    }
    match placement::hyperv_runtime_class_for(site, target, context, &builds) {
        Some(rc) => vec![ops::add(&site.ptr("/runtimeClassName"), rc.into())],
        None => Vec::new(),
    }
}

fn hyperv_annotation(site: &PodSite, target: &Target, _: &Context) -> Vec<PatchOperation> {
    let k = target.kubernetes;
    let containers = site
        .get("/containers")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    if k.at_least(1, 21)
        || !k.at_least(1, 10)
        || !hyperv_allowed(site)
        || containers != 1
        || site
            .meta
            .lookup(&format!("/annotations/{}", escape(HYPERV_ANNOTATION)))
            .is_some()
    {
        return Vec::new();
    }
    set_entry(
        site.object,
        &site.meta_ptr("/annotations"),
        HYPERV_ANNOTATION,
        "hyperv",
    )
}

fn pod_os_label(site: &PodSite, _: &Target, _: &Context) -> Vec<PatchOperation> {
    if site
        .meta
        .lookup(&format!("/labels/{}", escape(OS_LABEL)))
        .is_some()
    {
        return Vec::new();
    }
    set_entry(site.object, &site.meta_ptr("/labels"), OS_LABEL, "windows")
}

fn linux_guard(site: &PodSite, _: &Target, _: &Context) -> Vec<PatchOperation> {
    if site
        .spec
        .lookup(&format!("/nodeSelector/{}", escape(OS_LABEL)))
        .is_some()
    {
        return Vec::new();
    }
    set_entry(site.object, &site.ptr("/nodeSelector"), OS_LABEL, "linux")
}

fn set_entry(object: &Value, map_ptr: &str, key: &str, value: &str) -> Vec<PatchOperation> {
    ops::set_entry(object, map_ptr, key, value.into())
        .into_iter()
        .collect()
}

/// What the mutation of one object did.
#[derive(Debug, Default)]
pub struct Mutated {
    /// The patch against the original object (empty: leave it alone).
    pub patch: Vec<PatchOperation>,
    /// The names of what changed, as recorded in `winlint.io/mutated` by this call.
    pub changed: Vec<String>,
    /// The rules whose fixes are in the patch.
    pub rules: Vec<&'static str>,
    /// Every finding of the object before mutation (rule ID, severity).
    pub findings: Vec<(&'static str, Severity)>,
    /// The findings whose fix pinned the pod to Linux nodes (`mutation.linuxGuard: auto`, WIN011):
    /// the pod's author did not ask for the move, so the admission warnings say why, each within
    /// what the API server passes on (the front end words them).
    pub pins: Vec<crate::model::Finding>,
    /// What the user is told of the fixes applied ([`notices`]): `(rule ID, fix description)`,
    /// one per fix that rewrites or removes a value the user wrote or changes the pod's
    /// security posture.
    pub notices: Vec<(&'static str, String)>,
    /// The lint (on CREATE) of the object as mutated, when the fixer's last pass made it and
    /// nothing the rules read changed after it (no step applied; the `winlint.io/mutated`
    /// record is outside every pod site, in a workload's own metadata, which no rule reads):
    /// `/validate` judges a template by it without linting the mutated copy again.
    pub after: Option<ObjectReport>,
}

/// The applied fixes of `findings` that the user must hear of: a fix that replaces or removes
/// what the user wrote (a `kubernetes.io/os: Windows` made `windows`, a Linux-only field
/// taken out, an env name renamed), or one that changes what the pod may do on its node
/// ([`Recorded::changes_posture`](crate::model::meta::Recorded::changes_posture): a HostProcess
/// pod given `hostNetwork: true`). Additions that only place the pod (a selector, a
/// toleration, `spec.os`) are recorded in `winlint.io/mutated` and not repeated.
fn notices(
    findings: &[crate::model::Finding],
    applied: &[&'static crate::model::RuleMeta],
    config: &Config,
) -> Vec<(&'static str, String)> {
    let mut out: Vec<(&'static str, String)> = Vec::new();
    for f in findings {
        let Some(fix) = &f.fix else { continue };
        if !applied.iter().any(|r| r.id == f.rule.id) || !super::fix::fix_allowed(f, config) {
            continue;
        }
        let rewrites = fix
            .ops
            .iter()
            .any(|op| matches!(op, PatchOperation::Replace(_) | PatchOperation::Remove(_)));
        let posture = f
            .rule
            .mutation
            .recorded_as
            .is_some_and(|r| r.changes_posture());
        let notice = (f.rule.id, fix.description.clone());
        if (rewrites || posture) && !out.contains(&notice) {
            out.push(notice);
        }
    }
    out
}

/// Whether the mutation recorded as `name` changes which nodes a pod can land on (a rule's
/// [`Mutation::places_pod`](crate::model::meta::Mutation::places_pod)).
pub fn places_pod(name: &str) -> bool {
    crate::rules::all()
        .iter()
        .any(|r| r.meta.mutation.places_pod && r.meta.mutation.name() == Some(name))
}

/// Plan the mutation of `object` (a pod-bearing kind) under `config` (the webhook's mutation
/// configuration), patching `object` in place on the way (no copy is made).
pub fn mutate(object: &mut Value, config: &Config) -> Mutated {
    mutate_with(object, config, &Context::default())
}

/// [`mutate`] knowing the cluster's context (its RuntimeClasses, namespace labels).
pub fn mutate_with(object: &mut Value, config: &Config, context: &Context) -> Mutated {
    let mut m = plan(object, config, context);
    if m.patch.is_empty() {
        disown(object, &config.target, &mut m.patch);
    }
    m
}

/// The mutation itself ([`mutate_with`] without owning the annotation when nothing changed).
fn plan(object: &mut Value, config: &Config, context: &Context) -> Mutated {
    let report = lint_object(object, config, context, Operation::Create);
    mutate_linted(object, config, context, &report)
}

/// [`mutate_with`] given `report`, the object's lint on CREATE under a configuration whose
/// target and rule overrides are `config`'s (the findings do not depend on the fix policy):
/// `/validate` has just linted the template and does not lint it a second time.
pub fn mutate_linted(
    object: &mut Value,
    config: &Config,
    context: &Context,
    report: &ObjectReport,
) -> Mutated {
    let mut m = Mutated {
        findings: report
            .findings
            .iter()
            .map(|f| (f.rule.id, f.severity))
            .collect(),
        ..Mutated::default()
    };
    if workload::pod_kind(object).is_none() {
        return m;
    }
    // lint_object classified the site already (same images, same context).
    let Some(class) = report.classes.first() else {
        return m;
    };
    let policy = &config.policy.mutation;
    let image_evidence = class.signals.iter().any(|s| {
        s.os == Os::Windows && s.source == Source::Image && s.strength >= Strength::Probable
    });
    let windows = class.os == Os::Windows
        && (class.strength == Strength::Definite
            || (class.strength == Strength::Probable && (image_evidence || policy.probable)));
    if !windows && policy.linux_guard == LinuxGuard::Auto {
        pin_linux(object, report, &mut m);
    }
    let pods = if windows {
        StepPods::Windows
    } else if class.os == Os::Unknown {
        StepPods::UnknownOs
    } else {
        if !m.patch.is_empty() {
            record(object, &config.target, &m.changed, &mut m.patch);
        }
        return m;
    };
    if pods == StepPods::Windows {
        let fixer = Fixer {
            config,
            context,
            operation: Operation::Create,
            options: FixOptions::WEBHOOK,
        };
        let guarded = fixer.fix_guarded(object, report);
        m.patch = guarded.patch;
        m.after = guarded.after;
        m.notices = notices(&report.findings, &guarded.applied, config);
        for rule in guarded.applied {
            m.rules.push(rule.id);
            // fix_guarded applies only the fixes of rules that have a mutation name.
            let name = rule.mutation.name().unwrap_or(rule.name).to_string();
            if !m.changed.contains(&name) {
                m.changed.push(name);
            }
        }
    }
    // A pod whose OS fixes the engine withholds (an image that cannot run on Windows,
    // `engine::withhold_os_fixes`) is left as written: the Windows steps would settle its OS
    // all the same (a Hyper-V RuntimeClass pins Windows nodes and declares the OS, after which
    // WIN008 gives way to WIN507, a warning) and `/validate` would admit a pod that runs
    // nowhere. Judged on the lint of the object as the fixes left it.
    let withheld = m.after.as_ref().unwrap_or(report).withheld.first() == Some(&true);
    for step in STEPS
        .iter()
        .filter(|s| s.pods == pods && (s.enabled)(policy))
        .filter(|s| !(withheld && s.pods == StepPods::Windows))
    {
        super::deadline::check();
        let step_ops = match workload::pod_sites(object).first() {
            Some(site) => (step.ops)(site, &config.target, context),
            None => continue,
        };
        let (len, mut undo) = (m.patch.len(), Rollback::default());
        if !apply_fix(object, &step_ops, &mut m.patch, &mut undo) || m.patch.len() == len {
            continue;
        }
        // The guard the rules' fixes have (`Fixer::fix_guarded`), for the steps too: a step
        // that adds an error the pod did not have (the OS label on a pod whose affinity keeps
        // it off Windows: WIN004; a configured Hyper-V class that pins a build no node has:
        // WIN006) would make `/validate` deny the pod `/mutate` made. It is taken back.
        let after = lint_object(object, config, context, Operation::Create);
        if adds_error(&report.findings, &after.findings) {
            undo.apply(object);
            m.patch.truncate(len);
            continue;
        }
        m.changed.push(step.name.to_string());
        // The lint of the object as the step left it: `/validate` need not lint it again.
        m.after = Some(after);
    }
    if m.after.is_some() && workload::pod_kind(object).is_some_and(|(_, tpl)| tpl.is_empty()) {
        // A Pod: the record below lands in the pod's own annotations.
        m.after = None;
    }
    if !m.patch.is_empty() {
        record(object, &config.target, &m.changed, &mut m.patch);
    }
    m
}

/// `mutation.linuxGuard: auto`: WIN011's fix, the one code path that decides which pod is
/// pinned to Linux nodes (its images have no Windows variant, it has no OS pin, and it can land
/// on a Windows node of the target). Each pin is kept in [`Mutated::pins`] (an admission
/// warning).
fn pin_linux(object: &mut Value, report: &ObjectReport, m: &mut Mutated) {
    let guard = &crate::rules::scheduling::win011_linux_pod_can_land_on_windows::WIN011;
    for f in report.findings.iter().filter(|f| f.rule.id == guard.id) {
        let Some(fix) = &f.fix else { continue };
        if apply(object, &fix.ops, &mut m.patch) {
            m.rules.push(f.rule.id);
            let name = Recorded::LinuxGuard.as_str().to_string();
            if !m.changed.contains(&name) {
                m.changed.push(name);
            }
            m.pins.push(f.clone());
        }
    }
}

/// Whether the pod shows what the mutation recorded as `r` writes. `winlint.io/mutated` is a
/// record of what winlint did, and the webhook cannot tell an entry of its own earlier
/// invocation (reinvocation) from one the pod's author wrote (issue 30: a user's `linuxGuard`
/// on a pod with no Linux pin was kept). So an entry is kept only while the pod shows the
/// mutation's effect: an addition is present (`linuxGuard`: the `kubernetes.io/os: linux`
/// selector), a correction leaves nothing to correct (`envNames`: every name valid). A record
/// that matches the pod is then at worst a true description of it; one the pod contradicts
/// goes. A replaced image is any image, so `image` cannot be checked and stays.
fn shows(r: Recorded, site: &PodSite, target: &Target) -> bool {
    match r {
        Recorded::BetaOsLabel => [BETA_OS_LABEL, BETA_ARCH_LABEL]
            .iter()
            .all(|l| site.node_selector(l).is_none()),
        Recorded::EmptyDirMedium => site
            .volumes()
            .all(|(_, v)| v.pointer("/emptyDir/medium").and_then(Value::as_str) != Some("Memory")),
        Recorded::EnvNames => site.containers().all(|c| {
            workload::items(c.value, "env").all(|e| {
                e.get("name")
                    .and_then(Value::as_str)
                    .is_none_or(is_strict_env_name)
            })
        }),
        Recorded::HostNetwork => site.get("/hostNetwork").and_then(Value::as_bool) == Some(true),
        Recorded::Image => true,
        Recorded::LinuxGuard => site.node_selector(OS_LABEL) == Some("linux"),
        Recorded::LinuxOnlyFields => !linux_only_fields(site, target).iter().any(|f| f.rejected),
        Recorded::MountPropagation => site.containers().all(|c| {
            workload::items(c.value, "volumeMounts").all(|m| {
                m.get("mountPropagation")
                    .and_then(Value::as_str)
                    .is_none_or(|p| p == "None")
            })
        }),
        Recorded::NodeSelector => OS_LABELS
            .iter()
            .any(|l| site.node_selector(l) == Some("windows")),
        Recorded::Os => site.str("/os/name") == Some("windows"),
        Recorded::RunAsUserName => site
            .containers()
            .any(|c| effective_run_as_user_name(site, &c).is_some_and(|u| !u.value.is_empty())),
        Recorded::RuntimeClassName => site
            .get("/runtimeClassName")
            .is_some_and(|v| v.as_str() != Some("")),
        Recorded::Tolerations => site
            .get("/tolerations")
            .and_then(Value::as_array)
            .is_some_and(|t| !t.is_empty()),
        Recorded::WindowsBuild => has_build_pin(site),
    }
}

/// Whether the entry `name` of `winlint.io/mutated` is one winlint could have written for
/// the pod as it is: the name of a rule's fix or of a step, whose effect the pod shows.
fn own_entry(name: &str, site: &PodSite, target: &Target) -> bool {
    let step = STEPS
        .iter()
        .any(|s| s.name == name && (s.shows)(site, target));
    step || crate::rules::all().iter().any(|r| {
        r.meta.fix.is_some()
            && r.meta.mutation.name().unwrap_or(r.meta.name) == name
            && r.meta
                .mutation
                .recorded_as
                .is_none_or(|rec| shows(rec, site, target))
    })
}

/// The entries of `winlint.io/mutated` winlint could have written (issue 15: a value set by
/// the pod's author was kept as if winlint had mutated the pod): names of its mutations whose
/// effect the pod shows ([`shows`]); an earlier invocation's record (reinvocation) stays.
/// `None` when the object has no such annotation; the flag says whether anything was dropped.
fn own_entries(object: &Value, target: &Target) -> Option<(Vec<String>, bool)> {
    let value = object
        .get("metadata")?
        .get("annotations")?
        .get(MUTATED_ANNOTATION)?;
    let all: Vec<String> = value
        .as_str()
        .unwrap_or("")
        .split(',')
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect();
    let sites = workload::pod_sites(object);
    let kept: Vec<String> = match sites.first() {
        Some(site) => all
            .iter()
            .filter(|n| own_entry(n, site, target))
            .cloned()
            .collect(),
        None => Vec::new(),
    };
    let changed = kept.len() != all.len() || !value.is_string();
    Some((kept, changed))
}

/// A call that changes nothing still owns the annotation: what winlint could not have
/// written is taken out (the annotation is removed when nothing is left).
fn disown(object: &mut Value, target: &Target, patch: &mut Vec<PatchOperation>) {
    let Some((kept, true)) = own_entries(object, target) else {
        return;
    };
    let ptr = format!("/metadata/annotations/{}", escape(MUTATED_ANNOTATION));
    let op: PatchOperation = if kept.is_empty() {
        serde_json::from_value(serde_json::json!({"op": "remove", "path": ptr}))
    } else {
        serde_json::from_value(
            serde_json::json!({"op": "replace", "path": ptr, "value": kept.join(",")}),
        )
    }
    .expect("a valid operation");
    apply(object, &[op], patch);
}

/// Apply `step_ops` to `object` (all or nothing) and append them to `patch`; whether any did.
fn apply(object: &mut Value, step_ops: &[PatchOperation], patch: &mut Vec<PatchOperation>) -> bool {
    let len = patch.len();
    apply_fix(object, step_ops, patch, &mut Rollback::default()) && patch.len() > len
}

/// M7: the audit annotation, merged with what an earlier invocation recorded.
fn record(
    object: &mut Value,
    target: &Target,
    changed: &[String],
    patch: &mut Vec<PatchOperation>,
) {
    let mut all: Vec<String> = own_entries(object, target)
        .map(|(k, _)| k)
        .unwrap_or_default();
    for c in changed {
        if !all.contains(c) {
            all.push(c.clone());
        }
    }
    let op = ops::set_entry(
        object,
        "/metadata/annotations",
        MUTATED_ANNOTATION,
        all.join(",").into(),
    );
    apply(object, &op.into_iter().collect::<Vec<_>>(), patch);
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::rules::testutil::{cfg, group, observed, set, winok};

    fn hyperv_class(cx: &mut Context, name: &str, handler: &str) {
        cx.add(
            &json!({"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass",
            "metadata": {"name": name}, "handler": handler,
            "scheduling": {"nodeSelector": {"kubernetes.io/os": "windows"}}}),
        );
    }

    /// `winlint.io/mutated` is the webhook's: a pod author's value is not kept as a record of
    /// what winlint did; names of winlint's own mutations (an earlier invocation) are.
    #[test]
    fn the_mutated_annotation_is_owned_by_the_webhook() {
        let ann = |o: &Value| o["metadata"]["annotations"][MUTATED_ANNOTATION].clone();
        // Windows pod, mutated: the forged entry goes, what winlint did is recorded.
        let mut pod = json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "p", "annotations": {MUTATED_ANNOTATION: "approved-by-security"}},
            "spec": {"containers": [{"name": "c", "image": "mcr.microsoft.com/windows/servercore:ltsc2022"}]}});
        let m = mutate(&mut pod, &Config::default());
        assert!(!m.patch.is_empty());
        let v = ann(&pod);
        assert!(!v.as_str().unwrap().contains("approved"), "{v}");
        assert!(v.as_str().unwrap().contains("nodeSelector"), "{v}");
        // A pod winlint leaves alone: the forged annotation is removed.
        let mut linux = json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "l", "annotations": {MUTATED_ANNOTATION: "nodeSelector,approved"}},
            "spec": {"nodeSelector": {"kubernetes.io/os": "linux"},
                     "containers": [{"name": "c", "image": "nginx"}]}});
        let m = mutate(&mut linux, &Config::default());
        // winlint's `nodeSelector` entry is a `kubernetes.io/os: windows` selector; this pod
        // contradicts it, so the entry is the author's and goes with the rest.
        assert_eq!(ann(&linux), Value::Null, "{:?}", m.patch);
        let mut forged = json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "l", "annotations": {MUTATED_ANNOTATION: "approved"}},
            "spec": {"nodeSelector": {"kubernetes.io/os": "linux"},
                     "containers": [{"name": "c", "image": "nginx"}]}});
        mutate(&mut forged, &Config::default());
        assert_eq!(ann(&forged), Value::Null);
        // Reinvocation: the record of the first call is kept as it is.
        let first = ann(&pod);
        mutate(&mut pod, &Config::default());
        assert_eq!(ann(&pod), first);
    }

    /// An entry stays only while the pod shows what that mutation writes (issue 30: a
    /// user-written `linuxGuard` on a pod with no Linux pin was kept as winlint's record).
    #[test]
    fn a_recorded_mutation_stays_only_while_the_pod_shows_it() {
        let ann = |o: &Value| o["metadata"]["annotations"][MUTATED_ANNOTATION].clone();
        let pod = |annotation: &str, spec: Value| {
            json!({"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": "p", "annotations": {MUTATED_ANNOTATION: annotation}},
                "spec": spec})
        };
        // Forged: no Linux pin, no Windows selector, no toleration, no spec.os.
        let mut forged = pod(
            "linuxGuard,nodeSelector,tolerations,os,runtimeClassName,osLabel",
            json!({"containers": [{"name": "c", "image": "example.com/app:1"}]}),
        );
        let m = mutate(&mut forged, &Config::default());
        assert_eq!(ann(&forged), Value::Null, "{:?}", m.patch);
        // The same entries on a pod that shows each effect: a true record, kept (this is
        // what a reinvocation sees).
        let effects = json!({
            "os": {"name": "windows"},
            "nodeSelector": {"kubernetes.io/os": "windows"},
            "tolerations": [{"key": "os", "value": "windows", "effect": "NoSchedule"}],
            "containers": [{"name": "c", "image": "mcr.microsoft.com/windows/nanoserver:ltsc2022"}]});
        let mut shown = pod("nodeSelector,tolerations,os", effects.clone());
        mutate(&mut shown, &Config::default());
        assert_eq!(ann(&shown), "nodeSelector,tolerations,os");
        // A Linux pin recorded by the guard, the pin still there: kept; the pin gone: dropped.
        let linux = |selector: Value| {
            pod(
                "linuxGuard",
                json!({"nodeSelector": selector, "containers": [{"name": "c", "image": "nginx"}]}),
            )
        };
        let mut pinned = linux(json!({"kubernetes.io/os": "linux"}));
        mutate(&mut pinned, &Config::default());
        assert_eq!(ann(&pinned), "linuxGuard");
        let mut unpinned = linux(json!({"disk": "ssd"}));
        mutate(&mut unpinned, &Config::default());
        assert_eq!(ann(&unpinned), Value::Null);
        // A correction: `envNames` stays only when no name is left to correct.
        let env = |name: &str| {
            let mut spec = effects.clone();
            spec["containers"][0]["env"] = json!([{"name": name, "value": "1"}]);
            pod("nodeSelector,tolerations,os,envNames", spec)
        };
        let mut fixed = env("Logging__Level");
        mutate(&mut fixed, &Config::default());
        assert_eq!(ann(&fixed), "nodeSelector,tolerations,os,envNames");
    }

    /// `mutation.linuxGuard`: `auto` (the default) pins a pod to Linux exactly when WIN011
    /// reports it (Linux-only images, a Windows node it can land on), and says so; `on` pins
    /// every OS-unknown pod; `off` none.
    #[test]
    fn linux_guard_auto_pins_what_win011_reports() {
        let pod = |image: &str| {
            json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                "spec": {"containers": [{"name": "c", "image": image}]}})
        };
        let aks = |guard: LinuxGuard| {
            let mut c = cfg();
            c.target.set_platform(crate::model::platform::Platform::Aks);
            c.policy.mutation.linux_guard = guard;
            c
        };
        let run = |obj: &Value, c: &Config| {
            let mut o = obj.clone();
            let m = mutate(&mut o, c);
            (o, m)
        };
        let (o, m) = run(&pod("redis:7.2"), &aks(LinuxGuard::Auto));
        assert_eq!(
            o["spec"]["nodeSelector"],
            json!({"kubernetes.io/os": "linux"})
        );
        assert_eq!(
            o["metadata"]["annotations"][MUTATED_ANNOTATION],
            "linuxGuard"
        );
        assert_eq!(m.rules, ["WIN011"]);
        assert_eq!(m.pins.len(), 1);
        assert!(
            m.pins[0]
                .message
                .starts_with("redis:7.2 is a Linux-only image"),
            "{}",
            m.pins[0].message
        );
        // spec.os.name linux (a Linux pod by its own word) is pinned too.
        let declared = set(pod("nginx:1.27"), "/spec/os", json!({"name": "linux"}));
        let (o, _) = run(&declared, &aks(LinuxGuard::Auto));
        assert_eq!(o["spec"]["nodeSelector"]["kubernetes.io/os"], "linux");
        // Multi-OS and unknown images: never.
        for image in [
            "registry.k8s.io/pause:3.9",
            "mcr.microsoft.com/dotnet/runtime:7.0",
            "contoso.azurecr.io/app:1.0",
        ] {
            let (o, m) = run(&pod(image), &aks(LinuxGuard::Auto));
            assert!(m.patch.is_empty(), "{image}: {:?}", m.patch);
            assert!(o["spec"].get("nodeSelector").is_none());
        }
        // Tainted Windows nodes (the assumed default, or configured): nothing.
        let mut tainted = cfg();
        tainted.policy.mutation.linux_guard = LinuxGuard::Auto;
        assert!(run(&pod("redis:7.2"), &tainted).1.patch.is_empty());
        tainted
            .target
            .set_platform(crate::model::platform::Platform::Gke);
        assert!(run(&pod("redis:7.2"), &tainted).1.patch.is_empty());
        // off: nothing; on: every OS-unknown pod, the unknown image included, without a note.
        assert!(
            run(&pod("redis:7.2"), &aks(LinuxGuard::Off))
                .1
                .patch
                .is_empty()
        );
        let (o, m) = run(&pod("contoso.azurecr.io/app:1.0"), &aks(LinuxGuard::On));
        assert_eq!(o["spec"]["nodeSelector"]["kubernetes.io/os"], "linux");
        assert_eq!(m.changed, ["linuxGuard"]);
        // A Windows pod is never pinned to Linux.
        let (o, _) = run(&winok(), &aks(LinuxGuard::Auto));
        assert_eq!(o["spec"]["nodeSelector"]["kubernetes.io/os"], "windows");
    }

    /// `mutation.hyperv: auto` gives a Hyper-V RuntimeClass only to a pod that needs it to run,
    /// and only one that can run it (issue 8 §3).
    #[test]
    fn hyperv_auto_only_where_it_makes_the_pod_runnable() {
        let ws22 = group(
            "n",
            "windows",
            "10.0.20348",
            &["os=windows:NoSchedule"],
            &[],
            2,
        );
        let linux = group("l", "linux", "", &[], &[], 2);
        let mut c = observed(cfg(), vec![ws22, linux]);
        c.policy.mutation.hyperv = HyperV::Auto;
        let mut cx = Context::default();
        hyperv_class(&mut cx, "windows-hyperv", "runhcs-wcow-hypervisor");
        hyperv_class(&mut cx, "runhcs-process", "runhcs-wcow-process");
        let old = set(
            winok(),
            "/spec/containers/0/image",
            json!("mcr.microsoft.com/windows/servercore:ltsc2019"),
        );
        let run = |pod: &Value, cx: &Context| {
            let mut obj = pod.clone();
            let m = mutate_with(&mut obj, &c, cx);
            (obj, m.changed)
        };
        let (obj, changed) = run(&old, &cx);
        assert_eq!(obj["spec"]["runtimeClassName"], "windows-hyperv");
        assert!(
            changed.contains(&"runtimeClassName".to_string()),
            "{changed:?}"
        );
        // The mutated pod is admitted: WIN502 judges it under Hyper-V isolation.
        let report = lint_object(&obj, &c, &cx, Operation::Create);
        assert!(
            report.findings.iter().all(|f| f.rule.id != "WIN502"),
            "{:?}",
            report.findings
        );
        // A pod that runs as it is: nothing.
        let (obj, _) = run(&winok(), &cx);
        assert!(obj["spec"].get("runtimeClassName").is_none());
        // No Hyper-V class in the cluster: nothing (WIN502 denies it).
        let mut none = Context::default();
        hyperv_class(&mut none, "runhcs-process", "runhcs-wcow-process");
        let (obj, _) = run(&old, &none);
        assert!(obj["spec"].get("runtimeClassName").is_none());
        // A class whose utility VM is pinned to another build cannot run it.
        let mut pinned = Context::default();
        hyperv_class(&mut pinned, "hv-2004", "runhcs-wcow-hypervisor-19041");
        let (obj, _) = run(&old, &pinned);
        assert!(obj["spec"].get("runtimeClassName").is_none());
        // Never for HostProcess or hostNetwork pods.
        let hpc = set(old.clone(), "/spec/hostNetwork", json!(true));
        let (obj, _) = run(&hpc, &cx);
        assert!(obj["spec"].get("runtimeClassName").is_none());
        // A newer image than every node: Hyper-V cannot help either.
        let newer = set(
            winok(),
            "/spec/containers/0/image",
            json!("mcr.microsoft.com/windows/servercore:ltsc2025"),
        );
        let (obj, _) = run(&newer, &cx);
        assert!(obj["spec"].get("runtimeClassName").is_none());
    }
}
