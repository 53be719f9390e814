//! The rules' [`Reads`] declarations and the incremental re-lint ([`lint_since`]) against real
//! pods: every pod-bearing object of `testdata/`, patched by the rules' own fixes, by the
//! webhook's fixes, and by perturbations of each area (fields deleted, added, changed).
//!
//! * `declared_reads_hold`: a rule whose declared reads do not overlap what a perturbation
//!   touched ([`touched_since`], the engine's own test) returns the same findings on the
//!   perturbed pod as on the original.
//! * `the_incremental_lint_is_the_full_lint`: after any of those patches, [`lint_since`] is
//!   [`lint_object`] of the patched object, report for report (findings with their fixes and
//!   order, exemptions, classes, runs).

use std::path::{Path, PathBuf};

use json_patch::PatchOperation;
use serde_json::{Value, json};

use super::{ObjectReport, lint_object, lint_since, touched_by, touched_since};
use crate::config::Config;
use crate::model::meta::Reads;
use crate::model::placement::Placement;
use crate::model::reads;
use crate::model::workload::{self, PodSite, objects};
use crate::model::{Context, Finding, Operation, ops};
use crate::rules;
use crate::rules::testutil::{cfg, group, legacy, observed};

/// Every pod-bearing object of `testdata/` (YAML files, sorted), with the context of its file
/// (its other documents: RuntimeClasses, ConfigMaps, namespaces).
pub(crate) fn testdata_objects() -> Vec<(PathBuf, Context, Value)> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        let mut entries: Vec<_> = entries.flatten().map(|e| e.path()).collect();
        entries.sort();
        for p in entries {
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|e| e == "yaml" || e == "yml") {
                out.push(p);
            }
        }
    }
    let mut files = Vec::new();
    walk(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata"),
        &mut files,
    );
    let mut out = Vec::new();
    for file in files {
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        let Ok(docs) = crate::source::load(&text) else {
            continue;
        };
        let mut cx = Context::default();
        for d in &docs {
            cx.add(&d.value);
        }
        for d in &docs {
            for (_, obj) in objects(&d.value) {
                if !workload::pod_sites(obj).is_empty() {
                    out.push((file.clone(), cx.clone(), obj.clone()));
                }
            }
        }
    }
    out
}

/// Targets the rules read differently: the rules.md test vector (1.30), the legacy target
/// (1.9, Windows Server 1709, Docker, untainted), and observed nodes (a tainted Windows Server
/// 2022 group and a Linux group: placement by node facts).
pub(crate) fn targets() -> Vec<(&'static str, Config)> {
    let ws22 = group(
        "w",
        "windows",
        "10.0.20348",
        &["os=windows:NoSchedule"],
        &[],
        2,
    );
    let linux = group("l", "linux", "", &[], &[], 2);
    // Two builds offline: the build-pin rules (WIN005, WIN006) speak only here.
    let mut mixed = cfg();
    mixed.target.windows_builds =
        vec![crate::model::windows::WS2019, crate::model::windows::WS2022];
    vec![
        ("1.30", cfg()),
        ("legacy", legacy()),
        ("observed", observed(cfg(), vec![ws22, linux])),
        ("mixed", mixed),
    ]
}

/// Patches of each area of `site`, as a perturbation test would make them: `(what, ops)`.
/// Each deletes, adds or changes something rules look at (OS pins, Windows-only settings,
/// Linux-only settings, images of the other OS).
fn perturbations(site: &PodSite) -> Vec<(String, Vec<PatchOperation>)> {
    let p = |rel: &str| site.ptr(rel);
    let mut out: Vec<(String, Vec<PatchOperation>)> = Vec::new();
    let mut set = |what: &str, rel: &str, v: Value| {
        out.push((format!("set {what}"), vec![ops::add(&p(rel), v)]));
    };
    set("nodeSelector", "/nodeSelector", json!({}));
    set(
        "nodeSelector",
        "/nodeSelector",
        json!({"kubernetes.io/os": "windows"}),
    );
    set(
        "nodeSelector",
        "/nodeSelector",
        json!({"kubernetes.io/os": "linux"}),
    );
    set(
        "nodeSelector",
        "/nodeSelector",
        json!({"kubernetes.io/os": "windows", "node.kubernetes.io/windows-build": "10.0.17763"}),
    );
    set(
        "nodeSelector",
        "/nodeSelector",
        json!({"beta.kubernetes.io/os": "windows", "disktype": "ssd"}),
    );
    let term = |os: &str| {
        json!({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "kubernetes.io/os", "operator": "In", "values": [os]}]}]}}})
    };
    set("affinity", "/affinity", term("windows"));
    set("affinity", "/affinity", term("linux"));
    // A build pin the placement's own pin does not see (an affinity term, a value that is not a
    // build): a rule that reads the pin itself must declare the fields, not `Area::Placement`.
    set(
        "affinity",
        "/affinity",
        json!({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "node.kubernetes.io/windows-build", "operator": "In", "values": ["10.0.17763"]}]}]}}}),
    );
    set(
        "nodeSelector",
        "/nodeSelector",
        json!({"kubernetes.io/os": "windows", "node.kubernetes.io/windows-build": "ltsc2019"}),
    );
    set("tolerations", "/tolerations", json!([]));
    set(
        "tolerations",
        "/tolerations",
        json!([{"key": "os", "operator": "Equal", "value": "windows", "effect": "NoSchedule"}]),
    );
    set(
        "tolerations",
        "/tolerations",
        json!([{"operator": "Exists"}]),
    );
    set("os", "/os", json!({"name": "windows"}));
    set("os", "/os", json!({"name": "linux"}));
    set(
        "runtimeClassName",
        "/runtimeClassName",
        json!("runhcs-wcow-hypervisor"),
    );
    set(
        "runtimeClassName",
        "/runtimeClassName",
        json!("windows-2019"),
    );
    set("hostNetwork", "/hostNetwork", json!(true));
    set("hostNetwork", "/hostNetwork", json!(false));
    set("hostPID", "/hostPID", json!(true));
    set(
        "shareProcessNamespace",
        "/shareProcessNamespace",
        json!(false),
    );
    set("securityContext", "/securityContext", json!({}));
    set(
        "securityContext",
        "/securityContext",
        json!({"windowsOptions": {"hostProcess": true, "runAsUserName": "NT AUTHORITY\\SYSTEM"}, "runAsNonRoot": true}),
    );
    set(
        "securityContext",
        "/securityContext",
        json!({"runAsUser": 1000, "fsGroup": 2000, "seLinuxOptions": {"level": "s0"},
               "windowsOptions": {"gmsaCredentialSpecName": "Bad_Name", "runAsUserName": "ContainerAdministrator"}}),
    );
    // Fields outside every area: every rule must run again, one that reads no area included.
    set(
        "terminationGracePeriodSeconds",
        "/terminationGracePeriodSeconds",
        json!(30),
    );
    set("dnsPolicy", "/dnsPolicy", json!("ClusterFirstWithHostNet"));
    set("volumes", "/volumes", json!([]));
    set(
        "volumes",
        "/volumes",
        json!([{"name": "sock", "hostPath": {"path": "/var/run/docker.sock"}},
               {"name": "mem", "emptyDir": {"medium": "Memory"}},
               {"name": "cfg", "configMap": {"name": "c", "defaultMode": 420}}]),
    );
    let meta = |rel: &str| site.meta_ptr(rel);
    if site.meta.is_object() {
        for labels in [
            json!({}),
            json!({"kubernetes.io/os": "windows", "app": "x"}),
            json!({"kubernetes.io/os": "linux"}),
        ] {
            out.push((
                "set labels".into(),
                vec![ops::add(&meta("/labels"), labels)],
            ));
        }
    }
    for c in site.containers().filter(|c| c.list == "containers").take(2) {
        let cp = |rel: &str| site.ptr(&format!("{}{rel}", c.rel()));
        let mut set = |what: &str, rel: &str, v: Value| {
            out.push((
                format!("set {} {what}", c.rel()),
                vec![ops::add(&cp(rel), v)],
            ));
        };
        set("image", "/image", json!("nginx:1.27"));
        set(
            "image",
            "/image",
            json!("mcr.microsoft.com/windows/servercore:ltsc2019"),
        );
        set(
            "image",
            "/image",
            json!("mcr.microsoft.com/windows/nanoserver:latest"),
        );
        set(
            "env",
            "/env",
            json!([{"name": "a.b", "value": "x"}, {"name": "PATH", "value": "db"}, {"name": "path", "value": "c:\\"}]),
        );
        set("command", "/command", json!(["/bin/sh", "-c", "sleep 10"]));
        set(
            "volumeMounts",
            "/volumeMounts",
            json!([{"name": "sock", "mountPath": "/var/run/docker.sock", "mountPropagation": "HostToContainer"},
                   {"name": "cfg", "mountPath": "C:\\cfg", "subPath": "a"}]),
        );
        set("securityContext", "/securityContext", json!({}));
        set(
            "securityContext",
            "/securityContext",
            json!({"privileged": true, "runAsNonRoot": true, "capabilities": {"add": ["NET_ADMIN"]},
                   "windowsOptions": {"hostProcess": true, "runAsUserName": "ContainerAdministrator"}}),
        );
        set(
            "resources",
            "/resources",
            json!({"limits": {"memory": "1Gi", "hugepages-2Mi": "1Gi"}, "requests": {"memory": "2Gi"}}),
        );
        set(
            "ports",
            "/ports",
            json!([{"containerPort": 53, "protocol": "UDP"}]),
        );
        if c.value.get("env").is_some() {
            out.push((
                format!("remove {} env", c.rel()),
                vec![ops::remove(&cp("/env"))],
            ));
        }
    }
    for (field, rel) in [
        ("nodeSelector", "/nodeSelector"),
        ("affinity", "/affinity"),
        ("tolerations", "/tolerations"),
        ("os", "/os"),
        ("runtimeClassName", "/runtimeClassName"),
        ("securityContext", "/securityContext"),
        ("volumes", "/volumes"),
        ("initContainers", "/initContainers"),
    ] {
        if site.get(rel).is_some() {
            out.push((format!("remove {field}"), vec![ops::remove(&p(rel))]));
        }
    }
    if site.meta.get("labels").is_some() {
        out.push(("remove labels".into(), vec![ops::remove(&meta("/labels"))]));
    }
    out
}

/// The paths a patch's operations change, for [`lint_since`].
fn paths(patch: &[PatchOperation]) -> Vec<String> {
    patch
        .iter()
        .map(|op| op.path().as_str().to_string())
        .collect()
}

/// `object` patched, or `None` when the patch does not apply.
fn patched(object: &Value, patch: &[PatchOperation]) -> Option<Value> {
    let mut out = object.clone();
    json_patch::patch(&mut out, patch).ok()?;
    Some(out)
}

/// The findings of rule `id` in `report`.
fn of_rule(report: &ObjectReport, id: &str) -> Vec<Finding> {
    report
        .findings
        .iter()
        .filter(|f| f.rule.id == id)
        .cloned()
        .collect()
}

/// `findings` with no fix.
fn without_fix(findings: Vec<Finding>) -> Vec<Finding> {
    findings
        .into_iter()
        .map(|f| Finding { fix: None, ..f })
        .collect()
}

/// A rule's findings do not change when a perturbation touches only areas the rule does not
/// read, on every pod-bearing object of `testdata/` under three targets. The carried-over
/// findings of [`lint_since`] rely on it.
#[test]
fn declared_reads_hold() {
    let (mut compared, mut carried) = (0usize, 0usize);
    let mut wrong: Vec<String> = Vec::new();
    for (file, cx, obj) in testdata_objects() {
        let sites = workload::pod_sites(&obj);
        let site = &sites[0];
        for (target, c) in targets() {
            let before = lint_object(&obj, &c, &cx, Operation::Create);
            for (what, patch) in perturbations(site) {
                let Some(after_obj) = patched(&obj, &patch) else {
                    continue;
                };
                let after = lint_object(&after_obj, &c, &cx, Operation::Create);
                let p = paths(&patch);
                let p: Vec<&str> = p.iter().map(String::as_str).collect();
                let after_sites = workload::pod_sites(&after_obj);
                let Some(touched) = touched_since(
                    &before.classes[0],
                    &after.classes[0],
                    touched_by(&after_sites[0], &p),
                ) else {
                    continue;
                };
                // Where the pod can land, before and after, as the engine compares it (offline
                // only: with observed nodes every placement change counts).
                let placed = |site: &PodSite| Placement::of(site, &c.target, &cx);
                let was = c.target.nodes.is_none().then(|| placed(&sites[0]));
                let now = placed(&after_sites[0]);
                let touched = reads::with_placement(touched, was.as_ref(), || &now);
                compared += 1;
                for rule in rules::all() {
                    if rule.meta.reads.sees(touched) {
                        continue;
                    }
                    carried += 1;
                    let (mut was, mut now) = (
                        of_rule(&before, rule.meta.id),
                        of_rule(&after, rule.meta.id),
                    );
                    // The engine, not the rule, withholds the fixes that settle the OS while an
                    // image cannot run on Windows (`withhold_os_fixes`): a change of that state
                    // changes those fixes whatever the rule reads. `lint_since` re-runs or strips
                    // them (`the_incremental_lint_is_the_full_lint` checks it); here the rule's
                    // own findings are compared.
                    if before.withheld != after.withheld && rule.meta.mutation.settles_os() {
                        (was, now) = (without_fix(was), without_fix(now));
                    }
                    if format!("{was:?}") != format!("{now:?}") {
                        wrong.push(format!(
                            "{} declares {:?} but its findings changed after `{what}` ({touched:?}) on {} ({target}):\n  before {:?}\n  after  {:?}",
                            rule.meta.id,
                            rule.meta.reads,
                            file.display(),
                            was.iter().map(|f| (&f.pointer, &f.message)).collect::<Vec<_>>(),
                            now.iter().map(|f| (&f.pointer, &f.message)).collect::<Vec<_>>(),
                        ));
                    }
                }
            }
        }
    }
    wrong.dedup_by(|a, b| a.split(" on ").next() == b.split(" on ").next());
    assert!(
        wrong.is_empty(),
        "{} declarations too narrow:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
    // The test compares something: many perturbations, most rules carried over by each.
    assert!(
        compared > 10_000 && carried > 200_000,
        "{compared} {carried}"
    );
}

/// After a patch (each fix of each finding alone; every fix the policy allows at once; each
/// perturbation), the incremental lint is the full lint of the patched object, under three
/// targets and the three operations.
#[test]
fn the_incremental_lint_is_the_full_lint() {
    let mut checked = 0usize;
    for (file, cx, obj) in testdata_objects() {
        let sites = workload::pod_sites(&obj);
        let bumps = perturbations(&sites[0]);
        for (target, c) in targets() {
            for op in [Operation::Create, Operation::Update, Operation::Lint] {
                let before = lint_object(&obj, &c, &cx, op);
                let mut patches: Vec<(String, Vec<PatchOperation>)> = before
                    .findings
                    .iter()
                    .filter_map(|f| {
                        Some((format!("{}'s fix", f.rule.id), f.fix.as_ref()?.ops.clone()))
                    })
                    .collect();
                let mut all = obj.clone();
                let mut policy = c.clone();
                policy.policy.safe_fixes = true;
                let (patch, _) = super::fix::apply_fixes(&mut all, &before.findings, &policy);
                patches.push(("every safe fix".into(), patch));
                if op == Operation::Create {
                    patches.extend(bumps.iter().cloned());
                }
                for (what, patch) in patches {
                    let Some(after_obj) = patched(&obj, &patch) else {
                        continue;
                    };
                    let p = paths(&patch);
                    let p: Vec<&str> = p.iter().map(String::as_str).collect();
                    let full = lint_object(&after_obj, &c, &cx, op);
                    let since = lint_since(&after_obj, &c, &cx, op, &before, &p);
                    assert_eq!(
                        format!("{since:?}"),
                        format!("{full:?}"),
                        "after {what} on {} ({target}, {op:?})",
                        file.display()
                    );
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 20_000, "{checked}");
}

/// The declarations are not all [`Reads::ALL`]: the incremental lint has something to carry.
#[test]
fn most_rules_declare_what_they_read() {
    let all = rules::all()
        .iter()
        .filter(|r| r.meta.reads == Reads::ALL)
        .count();
    assert!(all <= 2, "{all} rules read everything");
}
