//! WIN0xx: OS identification and scheduling (shared/rules.md §2.1).

use serde_json::{Value, json};

use super::Rule;
use crate::model::classify::{self, Os, Source};
use crate::model::labels::{
    BETA_ARCH_LABEL, BETA_OS_LABEL, BUILD_LABEL, OS_LABELS, WINDOWS_ONLY_NODE_LABELS,
};
use crate::model::meta::{Fact, Mutation, RuleOs};
use crate::model::placement;
use crate::model::schedule;
use crate::model::windows::{self, Build};
use crate::model::workload::PodSite;
use crate::model::{Eval, escape};
use crate::model::{Finding, Fix, FixSafety, RuleMeta, Severity, Taint, ops};

pub fn rules() -> Vec<Rule> {
    vec![
        Rule {
            meta: &WIN001,
            check: missing_os_selector,
        },
        Rule {
            meta: &WIN002,
            check: deprecated_beta_os_label,
        },
        Rule {
            meta: &WIN003,
            check: missing_spec_os,
        },
        Rule {
            meta: &WIN004,
            check: os_signal_conflict,
        },
        Rule {
            meta: &WIN005,
            check: missing_windows_build_selector,
        },
        Rule {
            meta: &WIN006,
            check: windows_build_selector_mismatch,
        },
        Rule {
            meta: &WIN007,
            check: missing_windows_toleration,
        },
        Rule {
            meta: &WIN008,
            check: mixed_os_images,
        },
        Rule {
            meta: &WIN009,
            check: runtimeclass_selector_conflict,
        },
        Rule {
            meta: &WIN010,
            check: selects_no_node,
        },
    ]
}

/// Ops that set `spec.nodeSelector[key] = value`, creating the map when absent.
pub fn node_selector_ops(
    site: &PodSite,
    key: &str,
    value: &str,
) -> Vec<json_patch::PatchOperation> {
    if site.get("/nodeSelector").is_some_and(Value::is_object) {
        vec![ops::add(
            &site.ptr(&format!("/nodeSelector/{}", escape(key))),
            json!(value),
        )]
    } else {
        vec![ops::add(&site.ptr("/nodeSelector"), json!({ key: value }))]
    }
}

/// Pointer of `spec.nodeSelector` if present, else of the spec.
fn selector_ptr(site: &PodSite) -> String {
    if site.get("/nodeSelector").is_some() {
        site.ptr("/nodeSelector")
    } else {
        site.spec_ptr.clone()
    }
}

pub static WIN001: RuleMeta = RuleMeta {
    id: "WIN001",
    name: "missing-os-selector",
    severity: Severity::Error,
    summary: "Windows pod without a hard OS pin (nodeSelector kubernetes.io/os=windows, required affinity or RuntimeClass)",
    docs: r#"## What it does
Checks that a Windows pod is pinned to Windows nodes: `spec.nodeSelector["kubernetes.io/os"]: windows`
(or the legacy `beta.kubernetes.io/os`), a required node affinity whose **every** term requires
`kubernetes.io/os In [windows]`, or a RuntimeClass whose `scheduling.nodeSelector` supplies it.

## Why is this bad?
The scheduler ignores `spec.os` and image names. Without an OS pin a Windows pod can land on a Linux
node, where it fails with `ErrImagePull` ("no matching manifest for linux/amd64") or
`PodOSNotSupported`, and stays stuck.

## Example
```yaml
spec:
  containers:
  - name: web
    image: mcr.microsoft.com/windows/servercore:ltsc2022
```

## Fix
Safe: add `nodeSelector: {kubernetes.io/os: windows}` (`beta.kubernetes.io/os` before Kubernetes 1.14).
The webhook applies the same fix as mutation M1.
"#,
    fix: Some(FixSafety::Safe),
    source: "K-UG, KEP116, seed",
    applies: "all",
    os: RuleOs::Windows,
    context: &[Fact::Nodes],
    mutation: Mutation::placing("nodeSelector"),
};

fn missing_os_selector(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    let p = eval.placement(site);
    let key = eval.target.os_label_key();
    let mut severity = Severity::Error;
    let mut msg = if p.observed() {
        // The cluster's nodes say where the pod can land: a selector on any label that only
        // Windows nodes carry, or taints on every other node, keep it off them.
        let others = p.other_fitting();
        if others.is_empty() {
            return Vec::new();
        }
        let n: usize = others.iter().map(|g| g.count()).sum();
        format!(
            "Windows pod has no OS node selector ({}); the scheduler can place it on {n} node{} that {} not Windows ({}). Add nodeSelector {key}: windows",
            eval.class.reason(),
            if n == 1 { "" } else { "s" },
            if n == 1 { "is" } else { "are" },
            others[0].describe()
        )
    } else if classify::has_os_pin(site, eval.context, Os::Windows)
        || OS_LABELS.iter().any(|k| {
            site.node_selector(k)
                .is_some_and(|v| v.eq_ignore_ascii_case("windows"))
        })
    {
        // (A value in the wrong case pins the pod to no node at all: WIN010.)
        return Vec::new();
    } else if let Some((label, value)) = windows_only_selector(site) {
        severity = Severity::Warning;
        format!(
            "the pod is kept on Windows nodes only by nodeSelector {label}: {value}, a label only Windows nodes carry; add nodeSelector {key}: windows as well, which every Kubernetes node has and every tool reads"
        )
    } else {
        format!(
            "Windows pod has no OS node selector ({}); the scheduler may place it on a Linux node. Add nodeSelector {key}: windows",
            eval.class.reason()
        )
    };
    if classify::affinity_os(site.spec).is_some() {
        msg.push_str(
            " (the required node affinity does not pin every term to windows: terms are ORed)",
        );
    }
    if let Some(note) = p.unobserved_note() {
        msg.push_str(note);
        severity = Severity::Warning;
    }
    let mut f = Finding::new(&WIN001, selector_ptr(site), msg).severity(severity);
    // Never overwrite a conflicting OS key (that is WIN004's business).
    if OS_LABELS.iter().all(|k| site.node_selector(k).is_none()) {
        f = f.with_fix(Fix {
            safety: FixSafety::Safe,
            description: format!("add nodeSelector {key}=windows"),
            ops: node_selector_ops(site, key, "windows"),
        });
    }
    vec![f]
}

/// A `nodeSelector` entry on a label only Windows nodes carry ([`WINDOWS_ONLY_NODE_LABELS`]).
fn windows_only_selector<'a>(site: &PodSite<'a>) -> Option<(&'static str, &'a str)> {
    WINDOWS_ONLY_NODE_LABELS.iter().find_map(|(label, prefix)| {
        site.node_selector(label)
            .filter(|v| v.starts_with(prefix))
            .map(|v| (*label, v))
    })
}

pub static WIN002: RuleMeta = RuleMeta {
    id: "WIN002",
    name: "deprecated-beta-os-label",
    severity: Severity::Warning,
    summary: "Selector on the deprecated beta.kubernetes.io/os or beta.kubernetes.io/arch node label",
    docs: r#"## What it does
Finds `beta.kubernetes.io/os` and `beta.kubernetes.io/arch` in `nodeSelector` and node affinity.

## Why is this bad?
The beta labels are deprecated since Kubernetes 1.14; the API server answers every such pod with a
deprecation warning. The kubelet still sets both labels, so the selector still works.

## Example
```yaml
nodeSelector:
  beta.kubernetes.io/os: windows
```

## Fix
Safe: rename the key to `kubernetes.io/os` (`kubernetes.io/arch`).
"#,
    fix: Some(FixSafety::Safe),
    source: "WARN, KL-LBL",
    applies: "K>=1.14",
    os: RuleOs::Windows,
    context: &[],
    mutation: Mutation::named("betaOsLabel"),
};

fn deprecated_beta_os_label(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    if !eval.target.kubernetes.at_least(1, 14) {
        return Vec::new();
    }
    let mut out = Vec::new();
    for beta in [BETA_OS_LABEL, BETA_ARCH_LABEL] {
        let stable = beta.trim_start_matches("beta.");
        if let Some(v) = site.node_selector(beta) {
            let p = site.ptr(&format!("/nodeSelector/{}", escape(beta)));
            let mut fix_ops = vec![ops::remove(&p)];
            match site.node_selector(stable) {
                None => fix_ops.push(ops::add(
                    &site.ptr(&format!("/nodeSelector/{}", escape(stable))),
                    json!(v),
                )),
                Some(s) if s == v => {}
                Some(_) => fix_ops.clear(),
            }
            let mut f = Finding::new(
                &WIN002,
                p,
                format!(
                    "nodeSelector {beta} is deprecated since Kubernetes 1.14 and draws an API warning on every pod; use {stable}: {v}"
                ),
            );
            if !fix_ops.is_empty() {
                f = f.with_fix(Fix {
                    safety: FixSafety::Safe,
                    description: format!("rename {beta} to {stable}"),
                    ops: fix_ops,
                });
            }
            out.push(f);
        }
    }
    for (base, terms) in [
        (
            "/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution/nodeSelectorTerms",
            None,
        ),
        (
            "/affinity/nodeAffinity/preferredDuringSchedulingIgnoredDuringExecution",
            Some("/preference"),
        ),
    ] {
        let Some(list) = site.get(base).and_then(Value::as_array) else {
            continue;
        };
        for (i, t) in list.iter().enumerate() {
            let term_rel = format!("{base}/{i}{}", terms.unwrap_or(""));
            let term = if terms.is_some() {
                t.get("preference")
            } else {
                Some(t)
            };
            for field in ["matchExpressions", "matchFields"] {
                let exprs = term.and_then(|t| t.get(field)).and_then(Value::as_array);
                for (j, e) in exprs.into_iter().flatten().enumerate() {
                    let key = e.get("key").and_then(Value::as_str).unwrap_or("");
                    if key == BETA_OS_LABEL || key == BETA_ARCH_LABEL {
                        let stable = key.trim_start_matches("beta.");
                        let p = site.ptr(&format!("{term_rel}/{field}/{j}/key"));
                        out.push(
                            Finding::new(
                                &WIN002,
                                p.clone(),
                                format!("node affinity key {key} is deprecated since Kubernetes 1.14; use {stable}"),
                            )
                            .with_fix(Fix {
                                safety: FixSafety::Safe,
                                description: format!("rename {key} to {stable}"),
                                ops: vec![ops::replace(&p, json!(stable))],
                            }),
                        );
                    }
                }
            }
        }
    }
    out
}

pub static WIN003: RuleMeta = RuleMeta {
    id: "WIN003",
    name: "missing-spec-os",
    severity: Severity::Warning,
    summary: "Windows pod without spec.os.name: windows",
    docs: r#"## What it does
Checks that a Windows pod declares `spec.os.name: windows` (Kubernetes 1.24+, 1.23 with the
`IdentifyPodOS` gate).

## Why is this bad?
With `spec.os` set the API server validates the pod as a Windows pod (rejecting Linux-only fields
up front instead of ignoring them), Pod Security Admission exempts it from the Linux-only parts of
the `restricted` profile, and the kubelet refuses it (`PodOSNotSupported`) if it is ever scheduled to a
Linux node.

## Example
```yaml
spec:
  nodeSelector: {kubernetes.io/os: windows}
  containers:
  - name: web
    image: mcr.microsoft.com/windows/servercore:ltsc2022
```

## Fix
Safe, **only when the pod carries none of the Linux-only fields of WIN101–WIN103** (otherwise the API
server would reject the pod, and a Deployment would loop on `FailedCreate`): add
`spec.os: {name: windows}`. The webhook applies it on CREATE (mutation M4).
"#,
    fix: Some(FixSafety::Safe),
    source: "K-UG, VAL",
    applies: "K>=1.24 (1.23 with IdentifyPodOS)",
    os: RuleOs::Windows,
    context: &[],
    mutation: Mutation {
        recorded_as: Some("os"),
        adds_spec_os: true,
        ..Mutation::DEFAULT
    },
};

fn missing_spec_os<'a>(site: &PodSite<'a>, eval: &Eval<'a>) -> Vec<Finding> {
    if !crate::model::pod::spec_os_available(eval.target) || site.get("/os").is_some() {
        return Vec::new();
    }
    let blockers: Vec<String> = eval
        .linux_only_fields(site)
        .iter()
        .map(|f| f.pointer.clone())
        .collect();
    if blockers.is_empty() {
        vec![
            Finding::new(
                &WIN003,
                site.spec_ptr.clone(),
                "Windows pod has no spec.os; add spec.os.name: windows so the API server, Pod Security admission and the kubelet treat it as Windows",
            )
            .with_fix(Fix {
                safety: FixSafety::Safe,
                description: "add spec.os.name=windows".into(),
                ops: vec![ops::add(&site.ptr("/os"), json!({"name": "windows"}))],
            }),
        ]
    } else {
        let names: Vec<String> = blockers
            .iter()
            .map(|p| crate::model::pod::dotted(p))
            .collect();
        vec![Finding::new(
            &WIN003,
            site.spec_ptr.clone(),
            format!(
                "Windows pod has no spec.os; add spec.os.name: windows, after removing the Linux-only fields the API server would then reject: {}",
                names.join(", ")
            ),
        )]
    }
}

pub static WIN004: RuleMeta = RuleMeta {
    id: "WIN004",
    name: "os-signal-conflict",
    severity: Severity::Error,
    summary: "Contradictory OS evidence: spec.os vs selectors, the kubernetes.io/os pod label, or Windows images in a Linux pod",
    docs: r#"## What it does
Compares the OS the pod declares (`spec.os.name`, OS node selectors, required affinity, RuntimeClass)
with the other OS evidence: the `kubernetes.io/os` **pod label** and Windows-only images.

## Why is this bad?
The pod can never start: a Windows image cannot run on a Linux node, the kubelet rejects pods whose
`kubernetes.io/os` label differs from the node OS (`PodOSSelectorNodeLabelDoesNotMatch`), and a pod
whose `spec.os` contradicts its selector is refused by the kubelet (`PodOSNotSupported`).

## Example
```yaml
spec:
  nodeSelector: {kubernetes.io/os: linux}
  containers:
  - name: web
    image: mcr.microsoft.com/windows/servercore:ltsc2022
```

## Fix
Make the evidence agree: fix the selector, the label or the image.
"#,
    fix: None,
    source: "VAL, KL-PRED",
    applies: "all (label check K>=1.24)",
    os: RuleOs::Any,
    context: &[],
    mutation: Mutation::DEFAULT,
};

fn os_signal_conflict(_site: &PodSite, eval: &Eval) -> Vec<Finding> {
    let class = &eval.class;
    let declared = class
        .declared_by(Source::OsField)
        .or_else(|| class.declared_by(Source::Selector));
    let Some(decl) = declared else {
        return Vec::new();
    };
    let mut out = Vec::new();
    // Selectors that contradict spec.os or each other.
    for s in class.signals.iter().filter(|s| {
        matches!(s.source, Source::OsField | Source::Selector)
            && s.strength == classify::Strength::Definite
            && s.os != Os::Unknown
            && s.os != decl.os
    }) {
        out.push(Finding::new(
            &WIN004,
            s.pointer.clone(),
            format!(
                "{} contradicts {}; the pod can never start. Make them agree",
                s.what, decl.what
            ),
        ));
    }
    if eval.target.kubernetes.at_least(1, 24)
        && let Some(s) = class
            .signals
            .iter()
            .find(|s| s.source == Source::Label && s.os != Os::Unknown && s.os != decl.os)
    {
        out.push(Finding::new(
                &WIN004,
                s.pointer.clone(),
                format!(
                    "pod {} contradicts {}; the kubelet rejects the pod on every node (PodOSSelectorNodeLabelDoesNotMatch). Set the label to {} or remove it",
                    s.what,
                    decl.what,
                    decl.os.as_str()
                ),
            ));
    }
    if decl.os == Os::Linux {
        for s in class
            .signals
            .iter()
            .filter(|s| s.source == Source::Image && s.os == Os::Windows)
        {
            out.push(Finding::new(
                &WIN004,
                s.pointer.clone(),
                format!("{} in a pod declared Linux ({}); it cannot run on a Linux node. Pin the pod to Windows or use a Linux image", s.what, decl.what),
            ));
        }
    }
    out
}

/// The single Windows build all (init) containers derive, if they agree and every one is known.
pub fn single_build(eval: &Eval) -> Option<Build> {
    let mut build = None;
    for (c, info) in &eval.images {
        if c.list == "ephemeralContainers" {
            continue;
        }
        let b = super::image_registry::build_of(eval, c, info)?;
        if build.is_some_and(|x| x != b) {
            return None;
        }
        build = Some(b);
    }
    build
}

fn has_build_pin(site: &PodSite) -> bool {
    if site.node_selector(BUILD_LABEL).is_some() {
        return true;
    }
    site.get(
        "/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution/nodeSelectorTerms",
    )
    .and_then(Value::as_array)
    .is_some_and(|terms| {
        !terms.is_empty()
            && terms.iter().all(|t| {
                t.get("matchExpressions")
                    .and_then(Value::as_array)
                    .is_some_and(|es| {
                        es.iter()
                            .any(|e| e.get("key").and_then(Value::as_str) == Some(BUILD_LABEL))
                    })
            })
    })
}

pub static WIN005: RuleMeta = RuleMeta {
    id: "WIN005",
    name: "missing-windows-build-selector",
    severity: Severity::Warning,
    summary: "Pod images derive one Windows build but the pod is not pinned to node.kubernetes.io/windows-build in a cluster with several builds",
    docs: r#"## What it does
When the cluster runs Windows nodes of more than one build (`target.clusterMixedBuilds`, or several
`windowsBuilds`), checks that a pod whose images derive a single Windows build selects the nodes of a
compatible build via the `node.kubernetes.io/windows-build` label (set by the kubelet since 1.17).

## Why is this bad?
Under process isolation the image build must match the host build. Without the pin the scheduler
may pick a node of another build and the container fails to start ("The container operating system
does not match the host operating system").

## Example
```yaml
spec:
  nodeSelector: {kubernetes.io/os: windows}
  containers:
  - name: web
    image: mcr.microsoft.com/windows/servercore:ltsc2019
```

## Fix
Opt-in: add `nodeSelector: {node.kubernetes.io/windows-build: "10.0.17763"}`; where several target
builds can run the image (a WS2022 image on WS2025 hosts) a required node affinity `In` list on every
term instead. The webhook applies it as mutation M2 when the cluster has mixed builds.
"#,
    fix: Some(FixSafety::OptIn),
    source: "K-UG, PR84472",
    applies: "K>=1.17",
    os: RuleOs::Windows,
    context: &[Fact::RuntimeClasses, Fact::Nodes],
    mutation: Mutation {
        recorded_as: Some("windowsBuild"),
        places_pod: true,
        adds_spec_os: false,
        opt_in_when: Some(|target| target.cluster_mixed_builds),
    },
};

fn missing_windows_build_selector(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    // With the cluster's nodes known, the builds that matter are those of the Windows nodes
    // this pod can select; offline, the target's.
    let Some(host_builds) = eval.placement(site).host_builds(eval.target) else {
        return Vec::new();
    };
    let mixed = if host_builds.observed {
        host_builds.builds.len() > 1
    } else {
        eval.target.mixed_builds()
    };
    if !eval.target.kubernetes.at_least(1, 17)
        || !mixed
        || has_build_pin(site)
        || crate::model::pod::is_host_process_pod(site)
    {
        return Vec::new();
    }
    if crate::model::classify::runtime_class_os(site, eval.context).is_some()
        && site
            .str("/runtimeClassName")
            .and_then(|n| eval.context.runtime_classes.get(n))
            .is_some_and(|rc| rc.node_selector.contains_key(BUILD_LABEL))
    {
        return Vec::new();
    }
    let Some(build) = single_build(eval) else {
        return Vec::new();
    };
    let mut hosts = windows::compatible_hosts(
        build,
        &host_builds.builds,
        super::images::isolation(site, eval),
    );
    if hosts.is_empty() {
        // No node this pod can select runs the image: WIN502 reports it. Offline, pin to the
        // image's own build; with the cluster's nodes known, a pin to a build that no node has
        // would only make the pod select no node (and make the webhook drop its other fixes).
        if host_builds.observed {
            return Vec::new();
        }
        hosts.push(build);
    }
    let fix_ops = if hosts.len() == 1 {
        node_selector_ops(site, BUILD_LABEL, &hosts[0].to_string())
    } else {
        affinity_in_ops(
            site,
            BUILD_LABEL,
            &hosts.iter().map(|h| h.to_string()).collect::<Vec<_>>(),
        )
    };
    let values = hosts
        .iter()
        .map(|h| h.to_string())
        .collect::<Vec<_>>()
        .join(", ");
    vec![
        Finding::new(
            &WIN005,
            selector_ptr(site),
            format!(
                "the pod's images are built for Windows {} ({build}) but nothing pins it to nodes of that build; add nodeSelector {BUILD_LABEL}: {values}",
                build.token()
            ),
        )
        .with_fix(Fix { safety: FixSafety::OptIn, description: format!("pin {BUILD_LABEL} to {values}"), ops: fix_ops }),
    ]
}

/// Ops that add `key In values` to every required node-affinity term (terms are ORed), creating
/// the affinity when absent.
fn affinity_in_ops(
    site: &PodSite,
    key: &str,
    values: &[String],
) -> Vec<json_patch::PatchOperation> {
    let expr = json!({"key": key, "operator": "In", "values": values});
    let req = "/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution";
    if let Some(terms) = site
        .get(&format!("{req}/nodeSelectorTerms"))
        .and_then(Value::as_array)
        .filter(|t| !t.is_empty())
    {
        return terms
            .iter()
            .enumerate()
            .map(|(i, t)| {
                if t.get("matchExpressions").is_some_and(Value::is_array) {
                    ops::add(
                        &site.ptr(&format!("{req}/nodeSelectorTerms/{i}/matchExpressions/-")),
                        expr.clone(),
                    )
                } else {
                    ops::add(
                        &site.ptr(&format!("{req}/nodeSelectorTerms/{i}/matchExpressions")),
                        json!([expr.clone()]),
                    )
                }
            })
            .collect();
    }
    let required = json!({"nodeSelectorTerms": [{"matchExpressions": [expr]}]});
    if site.get("/affinity/nodeAffinity").is_some() {
        vec![ops::add(&site.ptr(req), required)]
    } else if site.get("/affinity").is_some() {
        vec![ops::add(
            &site.ptr("/affinity/nodeAffinity"),
            json!({"requiredDuringSchedulingIgnoredDuringExecution": required}),
        )]
    } else {
        vec![ops::add(
            &site.ptr("/affinity"),
            json!({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": required}}),
        )]
    }
}

pub static WIN006: RuleMeta = RuleMeta {
    id: "WIN006",
    name: "windows-build-selector-mismatch",
    severity: Severity::Error,
    summary: "node.kubernetes.io/windows-build selector incompatible with the image build or with every target node build, or carrying a revision",
    docs: r#"## What it does
Checks the `node.kubernetes.io/windows-build` value a pod selects (its own `nodeSelector` or its
RuntimeClass's): it must be `10.0.NNNNN` without a revision, match a build of the target's Windows
nodes, and be able to run the pod's images under its isolation mode.

## Why is this bad?
The kubelet sets the label to `Major.Minor.Build` (never a revision), so a selector with a revision,
or for a build no node has, leaves the pod Pending forever; a build that cannot run the image makes it
fail at container start.

A DaemonSet pinned to a build no node has creates no pod, which is how node agents ship one
DaemonSet per Windows build (New Relic, windows_exporter): that is info. A pod pinned to a build is
checked against that build only (WIN502 stays silent for it offline).

## Example
```yaml
spec:
  nodeSelector:
    node.kubernetes.io/windows-build: 10.0.17763.4737
```

## Fix
Select the build the images are made for, as `10.0.NNNNN`.
"#,
    fix: None,
    source: "KL-LBL, MS-COMPAT",
    applies: "K>=1.17",
    os: RuleOs::Windows,
    context: &[Fact::Nodes],
    mutation: Mutation::DEFAULT,
};

fn windows_build_selector_mismatch(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    if !eval.target.kubernetes.at_least(1, 17) {
        return Vec::new();
    }
    let mut sources: Vec<(String, String, &str)> = Vec::new();
    if let Some(v) = site.node_selector(BUILD_LABEL) {
        sources.push((
            v.to_string(),
            site.ptr("/nodeSelector/node.kubernetes.io~1windows-build"),
            "nodeSelector",
        ));
    }
    if let Some(rc_name) = site.str("/runtimeClassName")
        && let Some(v) = eval
            .context
            .runtime_classes
            .get(rc_name)
            .and_then(|rc| rc.node_selector.get(BUILD_LABEL))
    {
        sources.push((v.clone(), site.ptr("/runtimeClassName"), "RuntimeClass"));
    }
    let mut out = Vec::new();
    for (value, ptr, from) in sources {
        let parts: Vec<&str> = value.split('.').collect();
        if parts.len() > 3 {
            out.push(Finding::new(
                &WIN006,
                ptr,
                format!("{from} {BUILD_LABEL}={value} has a revision; the kubelet sets only Major.Minor.Build. Use {}", parts[..3].join(".")),
            ));
            continue;
        }
        let Some(sel) = windows::parse_build(&value).filter(|_| value.starts_with("10.0.")) else {
            out.push(Finding::new(
                &WIN006,
                ptr,
                format!("{from} {BUILD_LABEL}={value} is not a build label value (10.0.NNNNN)"),
            ));
            continue;
        };
        // With the cluster's nodes observed (and the builds not pinned by the configuration),
        // a build no node runs today is WIN010's warning: a node pool scaled to zero brings
        // such a node when the pod asks for it, so the pod is not denied.
        let observed = eval.placement(site).observed() && !eval.target.pinned.windows_builds;
        if !observed
            && !eval.target.windows_builds.is_empty()
            && !eval.target.windows_builds.contains(&sel)
        {
            let t: Vec<String> = eval
                .target
                .windows_builds
                .iter()
                .map(|b| b.to_string())
                .collect();
            // One DaemonSet per Windows build is how node agents ship (New Relic, Calico,
            // windows_exporter): the one for a build the cluster lacks runs no pod.
            let (outcome, severity) = if is_daemonset(site) {
                (
                    ": the DaemonSet creates no pod there, as intended where one DaemonSet per Windows build is shipped",
                    Severity::Info,
                )
            } else {
                ("; the pod stays Pending", Severity::Error)
            };
            out.push(
                Finding::new(
                    &WIN006,
                    ptr.clone(),
                    format!(
                        "{from} {BUILD_LABEL}={value} matches none of the target's Windows nodes ({}){outcome}",
                        t.join(", ")
                    ),
                )
                .severity(severity),
            );
        }
        // Whatever the target has, the pod runs only on nodes of the selected build.
        if !crate::model::pod::is_host_process_pod(site) {
            let isolation = super::images::isolation(site, eval);
            for (c, info) in &eval.images {
                if let Some(b) = info.build
                    && !windows::compatible(b, sel, isolation)
                {
                    out.push(Finding::new(
                            &WIN006,
                            ptr.clone(),
                            format!(
                                "{from} {BUILD_LABEL}={value} selects Windows {} nodes, but {} image {} is built for {} ({b}); under {} isolation they cannot run it",
                                sel.token(),
                                c.label(),
                                c.image().unwrap_or(""),
                                b.token(),
                                match isolation {
                                    windows::Isolation::Process => "process",
                                    windows::Isolation::Hyperv => "Hyper-V",
                                }
                            ),
                        ));
                    break;
                }
            }
        }
    }
    out
}

pub static WIN007: RuleMeta = RuleMeta {
    id: "WIN007",
    name: "missing-windows-toleration",
    severity: Severity::Error,
    summary: "Windows pod does not tolerate the taint of the cluster's Windows nodes",
    docs: r#"## What it does
When the target says Windows nodes are tainted (`windowsTaints`, default `os=windows:NoSchedule`, the
convention of the Kubernetes Windows user guide), checks that the pod or its RuntimeClass tolerates
every such taint (an `operator: Exists` toleration with an empty key tolerates everything).

## Why is this bad?
A pod that does not tolerate the taint of the only nodes that can run it stays Pending.
A DaemonSet's controller creates no pod at all for a node whose taints its template does not
tolerate (`NodeShouldRunDaemonPod`), so nothing is Pending: the DaemonSet just never runs on the
Windows nodes. That is a warning, and the webhook does not count the toleration it would add at
pod creation for a DaemonSet (its pods are placed before the webhook sees them).

## Example
```yaml
spec:
  nodeSelector: {kubernetes.io/os: windows}
  containers:
  - name: web
    image: mcr.microsoft.com/windows/servercore:ltsc2022
```

## Fix
Safe: add `tolerations: [{key: os, operator: Equal, value: windows, effect: NoSchedule}]` (one per
configured taint). The webhook applies it as mutation M3.
"#,
    fix: Some(FixSafety::Safe),
    source: "K-UG",
    applies: "all",
    os: RuleOs::Windows,
    context: &[Fact::RuntimeClasses, Fact::Nodes],
    mutation: Mutation::placing("tolerations"),
};

fn missing_windows_toleration(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    let p = eval.placement(site);
    let tols = placement::tolerations(site, eval.context);
    let (missing, whose): (Vec<&Taint>, String) = if p.observed() {
        let selected = p.windows_selected();
        if selected.is_empty() || selected.iter().any(|(_, f)| f.fits()) {
            // Selects no Windows node (WIN010), or can land on one.
            return Vec::new();
        }
        // The group that needs the fewest tolerations (the largest one on a tie).
        let (_, missing) = selected
            .iter()
            .map(|(g, _)| (*g, placement::untolerated(g, &tols)))
            .min_by_key(|(g, m)| (m.len(), std::cmp::Reverse(g.count())))
            .expect("a selected group");
        let n = selected.iter().map(|(g, _)| g.count()).sum::<usize>();
        // Every build among them, not only the chosen group's.
        let mut builds: Vec<_> = selected.iter().filter_map(|(g, _)| g.build).collect();
        builds.sort();
        builds.dedup();
        let builds: String = builds.iter().map(|b| format!(", {b}")).collect();
        let whose = format!(
            "The Windows nodes this pod can select ({n} node{}{builds}) are tainted",
            if n == 1 { "" } else { "s" },
        );
        (missing, whose)
    } else {
        let missing = eval
            .target
            .windows_node_taints()
            .iter()
            .filter(|t| !schedule::tolerated(&tols, t))
            .collect();
        (missing, "Windows nodes are tainted".to_string())
    };
    if missing.is_empty() {
        return Vec::new();
    }
    let new_tols: Vec<Value> = missing.iter().map(|t| t.toleration()).collect();
    let fix_ops = if site.get("/tolerations").is_some_and(Value::is_array) {
        new_tols
            .iter()
            .map(|t| ops::add(&site.ptr("/tolerations/-"), t.clone()))
            .collect()
    } else {
        vec![ops::add(&site.ptr("/tolerations"), Value::Array(new_tols))]
    };
    let names: Vec<String> = missing.iter().map(|t| t.to_string()).collect();
    let ptr = if site.get("/tolerations").is_some() {
        site.ptr("/tolerations")
    } else {
        site.spec_ptr.clone()
    };
    let them = if names.len() == 1 { "it" } else { "them" };
    let mut msg = if is_daemonset(site) {
        format!(
            "the DaemonSet creates no pod on Windows nodes: {whose} {} and its pods do not tolerate {them}. Add a toleration",
            names.join(", "),
        )
    } else {
        format!(
            "{whose} {} but the pod does not tolerate {them}; it will stay Pending. Add a toleration",
            names.join(", "),
        )
    };
    let near: Vec<String> = missing
        .iter()
        .filter_map(|t| near_miss(&schedule::pod_tolerations(site.spec), t))
        .collect();
    if !near.is_empty() {
        msg.push_str(&format!(" ({})", near.join("; ")));
    }
    let mut f = Finding::new(&WIN007, ptr, msg).with_fix(Fix {
        safety: FixSafety::Safe,
        description: format!("add toleration for {}", names.join(", ")),
        ops: fix_ops,
    });
    if p.facts == placement::NodeFacts::Configured {
        // Offline the taint is the target's assumption (the user guide's convention).
        f.message.push_str(
            "; if your Windows nodes carry no taint (AKS and EKS add none by default), lint with --windows-taint none (windowsTaints: [] in the configuration), or read the nodes with --cluster",
        );
    }
    if let Some(note) = p.unobserved_note() {
        f.message.push_str(note);
        f = f.severity(Severity::Warning);
    }
    if is_daemonset(site) {
        // No pod of it is ever Pending: its controller creates none for those nodes.
        f = f.severity(Severity::Warning);
    }
    vec![f]
}

/// A DaemonSet's controller creates a pod only for the nodes its template fits (selectors,
/// affinity, taints: `NodeShouldRunDaemonPod`): a node it does not fit gets no pod, so none
/// stays Pending.
fn is_daemonset(site: &PodSite) -> bool {
    site.kind == "DaemonSet"
}

/// What comes of a pod that no node takes ([`is_daemonset`]).
fn unplaced(site: &PodSite) -> &'static str {
    if is_daemonset(site) {
        "the DaemonSet creates no pod"
    } else {
        "the pod stays Pending"
    }
}

/// OS keys a toleration meant for a Windows taint is often written with.
const OS_TAINT_KEYS: &[&str] = &[
    "os",
    "node.kubernetes.io/os",
    "kubernetes.io/os",
    "beta.kubernetes.io/os",
];

/// Why the pod's toleration that was most likely meant for `taint` does not tolerate it: a key,
/// value or effect that differs only by case, another OS key, another effect.
fn near_miss(tolerations: &[schedule::Toleration], taint: &Taint) -> Option<String> {
    let show = |t: &schedule::Toleration| {
        let mut parts = vec![format!("key: {}", t.key)];
        if !t.operator.is_empty() {
            parts.push(format!("operator: {}", t.operator));
        }
        if !t.value.is_empty() {
            parts.push(format!("value: {}", t.value));
        }
        if !t.effect.is_empty() {
            parts.push(format!("effect: {}", t.effect));
        }
        format!("{{{}}}", parts.join(", "))
    };
    let value = taint.value.as_deref().unwrap_or("");
    let os_key = |k: &str| OS_TAINT_KEYS.iter().any(|o| o.eq_ignore_ascii_case(k));
    for t in tolerations.iter().filter(|t| !t.key.is_empty()) {
        let why = if t.key != taint.key && t.key.eq_ignore_ascii_case(&taint.key) {
            format!(
                "its key {} is not the taint's {}: keys are case-sensitive",
                t.key, taint.key
            )
        } else if t.key != taint.key && os_key(&t.key) && os_key(&taint.key) {
            format!("its key {} is not the taint's key {}", t.key, taint.key)
        } else if t.key != taint.key && !value.is_empty() && t.key.eq_ignore_ascii_case(value) {
            format!(
                "its key {} is the taint's value: write key: {}, value: {value}",
                t.key, taint.key
            )
        } else if t.key != taint.key {
            continue;
        } else if !t.effect.is_empty() && t.effect != taint.effect {
            format!(
                "its effect {} does not tolerate a {} taint (leave effect out to tolerate every effect)",
                t.effect, taint.effect
            )
        } else if matches!(t.operator.as_str(), "" | "Equal") && t.value != value {
            if t.value.eq_ignore_ascii_case(value) {
                format!(
                    "its value {} is not the taint's {value}: values are case-sensitive",
                    t.value
                )
            } else {
                format!("its value {} is not the taint's {value}", t.value)
            }
        } else if !matches!(t.operator.as_str(), "" | "Equal" | "Exists") {
            format!(
                "its operator {} is neither Equal nor Exists (operators are case-sensitive)",
                t.operator
            )
        } else {
            continue;
        };
        return Some(format!("the toleration {} does not match: {why}", show(t)));
    }
    None
}

pub static WIN008: RuleMeta = RuleMeta {
    id: "WIN008",
    name: "mixed-os-images",
    severity: Severity::Error,
    summary: "Pod with no declared OS mixes Windows-only and Linux-only images",
    docs: r#"## What it does
Finds pods whose containers mix Windows-only images (`mcr.microsoft.com/windows/*`, `*-nanoserver-*`,
…) with known Linux-only images (`busybox`, `alpine`, `nginx`, …).

## Why is this bad?
All containers of a pod run on one node, so one OS: "You may not deploy Windows and Linux containers in
the same Pod". Whichever node the pod lands on, some of its containers cannot start.

## Example
```yaml
spec:
  containers:
  - name: app
    image: mcr.microsoft.com/windows/servercore:ltsc2022
  - name: sidecar
    image: busybox:1.36
```

## Fix
Split the pod, or use images of one OS.
"#,
    fix: None,
    source: "K-INTRO",
    applies: "all",
    os: RuleOs::Any,
    context: &[],
    mutation: Mutation::DEFAULT,
};

fn mixed_os_images(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    let declared = eval
        .class
        .declared_by(Source::OsField)
        .or_else(|| eval.class.declared_by(Source::Selector));
    if declared.is_some() {
        return Vec::new();
    }
    let win = eval.images.iter().find(|(_, i)| i.windows);
    let lin = eval.images.iter().find(|(_, i)| i.linux);
    match (win, lin) {
        (Some((wc, _)), Some((lc, _))) => vec![Finding::new(
            &WIN008,
            site.ptr(&format!("{}/image", lc.rel())),
            format!(
                "{} uses Linux image {} but {} uses Windows image {}; one pod runs on one OS. Split the pod or use images of one OS",
                lc.label(),
                lc.image().unwrap_or(""),
                wc.label(),
                wc.image().unwrap_or("")
            ),
        )],
        _ => Vec::new(),
    }
}

pub static WIN009: RuleMeta = RuleMeta {
    id: "WIN009",
    name: "runtimeclass-selector-conflict",
    severity: Severity::Error,
    summary: "Pod nodeSelector conflicts with the nodeSelector its RuntimeClass merges in",
    docs: r#"## What it does
When the pod's RuntimeClass is known (a RuntimeClass object in the same input), checks that no key of
the RuntimeClass's `scheduling.nodeSelector` is also in the pod's `nodeSelector` with another value.

## Why is this bad?
RuntimeClass admission merges the RuntimeClass's selector into the pod; "If there is a conflict, the
pod will be rejected".

## Example
```yaml
spec:
  runtimeClassName: windows-2019   # selects node.kubernetes.io/windows-build: 10.0.17763
  nodeSelector:
    node.kubernetes.io/windows-build: 10.0.20348
```

## Fix
Remove the key from the pod, or use a RuntimeClass that agrees.
"#,
    fix: None,
    source: "K-RC",
    applies: "K>=1.16",
    os: RuleOs::Windows,
    context: &[Fact::RuntimeClasses],
    mutation: Mutation::DEFAULT,
};

fn runtimeclass_selector_conflict(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    if !eval.target.kubernetes.at_least(1, 16) {
        return Vec::new();
    }
    let Some(name) = site.str("/runtimeClassName") else {
        return Vec::new();
    };
    let Some(rc) = eval.context.runtime_classes.get(name) else {
        return Vec::new();
    };
    rc.node_selector
        .iter()
        .filter_map(|(k, v)| {
            let pod_v = site.node_selector(k)?;
            (pod_v != v).then(|| {
                Finding::new(
                    &WIN009,
                    site.ptr(&format!("/nodeSelector/{}", escape(k))),
                    format!(
                        "nodeSelector {k}={pod_v} conflicts with RuntimeClass {name:?} ({k}={v}); the API server's RuntimeClass admission rejects {} (\"conflict: runtimeClass.scheduling.nodeSelector[{k}] = {v}; pod.spec.nodeSelector[{k}] = {pod_v}\"). Remove the key from the pod",
                        if site.spec_ptr == "/spec" { "the pod" } else { "every pod the workload creates" }
                    ),
                )
            })
        })
        .collect()
}

pub static WIN010: RuleMeta = RuleMeta {
    id: "WIN010",
    name: "selects-no-node",
    severity: Severity::Error,
    summary: "The pod's node selection matches no Windows node: a label value in the wrong case, a label the target's nodes do not have yet, or none of the cluster's Windows nodes",
    docs: r#"## What it does
Checks that a Windows pod's `nodeSelector` and required node affinity can match a Windows node:

* the OS label's value in the wrong case (`kubernetes.io/os: Windows`): the kubelet writes
  `windows`, and label values are compared exactly, so no node ever matches (error);
* labels the target's Kubernetes does not set yet: `kubernetes.io/os` before 1.14 (only
  `beta.kubernetes.io/os` existed), `node.kubernetes.io/windows-build` before 1.17 (error);
* with the cluster's nodes known (`winlint serve`, `--cluster`, `audit`): selectors that match
  none of its Windows nodes (a warning: a node pool scaled to zero may still bring one).

## Why is this bad?
The API server accepts such a pod; the scheduler finds no node for it and it stays Pending
("0/5 nodes are available: 5 node(s) didn't match Pod's node affinity/selector").

## Example
```yaml
spec:
  nodeSelector:
    kubernetes.io/os: Windows
```

## Fix
Safe for the OS label: write the value in lower case, or use `beta.kubernetes.io/os` on
Kubernetes before 1.14. Otherwise select labels the Windows nodes have
(`kubectl get nodes -l kubernetes.io/os=windows --show-labels`).
"#,
    fix: Some(FixSafety::Safe),
    source: "KL-LBL, PR84472, scheduler",
    applies: "all",
    os: RuleOs::Windows,
    context: &[Fact::Nodes],
    mutation: Mutation::placing("nodeSelector"),
};

fn selects_no_node(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    let mut out = Vec::new();
    let k = eval.target.kubernetes;
    let sel_ptr = |key: &str| site.ptr(&format!("/nodeSelector/{}", escape(key)));
    for key in OS_LABELS {
        let Some(v) = site.node_selector(key) else {
            continue;
        };
        let lower = v.to_ascii_lowercase();
        if v != lower && matches!(lower.as_str(), "windows" | "linux") {
            out.push(
                Finding::new(
                    &WIN010,
                    sel_ptr(key),
                    format!(
                        "nodeSelector {key}: {v} matches no node: the kubelet sets {key}={lower} and label values are case-sensitive; {}. Write {lower}",
                        unplaced(site)
                    ),
                )
                .with_fix(Fix {
                    safety: FixSafety::Safe,
                    description: format!("set nodeSelector {key}={lower}"),
                    ops: vec![ops::replace(&sel_ptr(key), json!(lower))],
                }),
            );
        }
    }
    if !k.at_least(1, 14)
        && let Some(v) = site.node_selector(OS_LABELS[0])
    {
        let mut f = Finding::new(
            &WIN010,
            sel_ptr(OS_LABELS[0]),
            format!(
                "nodeSelector {}: {v} matches no node on Kubernetes {k}: the label exists from 1.14; before that nodes carry only {BETA_OS_LABEL}. Use {BETA_OS_LABEL}: {v}",
                OS_LABELS[0]
            ),
        );
        if site.node_selector(BETA_OS_LABEL).is_none() && eval.fix_possible(site) {
            f = f.with_fix(Fix {
                safety: FixSafety::Safe,
                description: format!("rename nodeSelector {} to {BETA_OS_LABEL}", OS_LABELS[0]),
                ops: vec![
                    ops::remove(&sel_ptr(OS_LABELS[0])),
                    ops::add(&sel_ptr(BETA_OS_LABEL), json!(v)),
                ],
            });
        }
        out.push(f);
    }
    if !k.at_least(1, 17)
        && let Some(v) = site.node_selector(BUILD_LABEL)
    {
        out.push(Finding::new(
            &WIN010,
            sel_ptr(BUILD_LABEL),
            format!(
                "nodeSelector {BUILD_LABEL}: {v} matches no node on Kubernetes {k}: the kubelet sets this label from 1.17; select Windows nodes by {} instead",
                eval.target.os_label_key()
            ),
        ));
    }
    let p = eval.placement(site);
    if out.is_empty() && p.observed() && p.windows_selected().is_empty() {
        let groups = p.windows_groups();
        let n: usize = groups.iter().map(|g| g.count()).sum();
        // The nodeSelector entries no Windows node has, to say what to change.
        let missing: Vec<String> = site
            .spec
            .get("nodeSelector")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .filter(|(key, v)| {
                !groups
                    .iter()
                    .any(|g| g.labels.get(*key).map(String::as_str) == v.as_str())
            })
            .map(|(key, v)| format!("{key}={}", v.as_str().unwrap_or("")))
            .collect();
        let what = if missing.is_empty() {
            "its nodeSelector and required node affinity".to_string()
        } else {
            format!("nodeSelector {}", missing.join(", "))
        };
        let daemon = is_daemonset(site);
        out.push(
            Finding::new(
                &WIN010,
                selector_ptr(site),
                format!(
                    "{what} match{} none of the cluster's {n} Windows node{}; {} until such a node joins",
                    if missing.len() > 1 { "" } else { "es" },
                    if n == 1 { "" } else { "s" },
                    unplaced(site),
                ),
            )
            .severity(if daemon { Severity::Info } else { Severity::Warning }),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::testutil::{cfg, findings, ids, set, unset, winok};
    use serde_json::json;

    fn t05() -> Value {
        json!({"apiVersion":"v1","kind":"Pod","metadata":{"name":"t05"},"spec":{"containers":[{"name":"a","image":"mcr.microsoft.com/windows/servercore:ltsc2022"}]}})
    }

    #[test]
    fn winok_is_clean() {
        assert!(
            ids(&winok(), &cfg()).is_empty(),
            "{:?}",
            ids(&winok(), &cfg())
        );
    }

    #[test]
    fn windows_options_pod_missing_pins() {
        // A pod is Windows by windowsOptions alone (definite), whatever the image says.
        let pod = set(
            t05(),
            "/spec/securityContext",
            json!({"windowsOptions":{"runAsUserName":"ContainerUser"}}),
        );
        let got = ids(&pod, &cfg());
        for id in ["WIN001", "WIN003", "WIN007"] {
            assert!(got.contains(&id), "{got:?}");
        }
    }

    #[test]
    fn win001_fix_creates_selector() {
        let pod = unset(winok(), "/spec/nodeSelector");
        let fs = findings(&pod, &cfg());
        let f = fs.iter().find(|f| f.rule.id == "WIN001").expect("WIN001");
        assert_eq!(f.pointer, "/spec");
        let mut fixed = pod.clone();
        json_patch::patch(&mut fixed, &f.fix.as_ref().unwrap().ops).unwrap();
        assert_eq!(fixed["spec"]["nodeSelector"]["kubernetes.io/os"], "windows");
        assert!(ids(&fixed, &cfg()).is_empty());
    }

    #[test]
    fn win001_legacy_key_before_1_14() {
        let mut c = cfg();
        c.target.kubernetes = crate::model::KubeVersion::new(1, 12);
        let pod = unset(winok(), "/spec/nodeSelector");
        let fs = findings(&pod, &c);
        let f = fs.iter().find(|f| f.rule.id == "WIN001").unwrap();
        let mut fixed = pod.clone();
        json_patch::patch(&mut fixed, &f.fix.as_ref().unwrap().ops).unwrap();
        assert_eq!(
            fixed["spec"]["nodeSelector"]["beta.kubernetes.io/os"],
            "windows"
        );
    }

    #[test]
    fn win001_affinity_terms_must_all_pin() {
        let term = |os: &str| json!({"matchExpressions":[{"key":"kubernetes.io/os","operator":"In","values":[os]}]});
        let aff = |terms: Value| json!({"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":terms}}});
        let pod = set(
            unset(winok(), "/spec/nodeSelector"),
            "/spec/affinity",
            aff(json!([term("windows")])),
        );
        assert!(!ids(&pod, &cfg()).contains(&"WIN001"));
        let pod = set(
            unset(winok(), "/spec/nodeSelector"),
            "/spec/affinity",
            aff(json!([term("windows"), term("linux")])),
        );
        assert!(ids(&pod, &cfg()).contains(&"WIN001"));
    }

    #[test]
    fn win002_renames_beta_key() {
        let pod = set(
            winok(),
            "/spec/nodeSelector",
            json!({"beta.kubernetes.io/os":"windows"}),
        );
        let fs = findings(&pod, &cfg());
        let f = fs.iter().find(|f| f.rule.id == "WIN002").expect("WIN002");
        assert_eq!(f.pointer, "/spec/nodeSelector/beta.kubernetes.io~1os");
        let mut fixed = pod.clone();
        json_patch::patch(&mut fixed, &f.fix.as_ref().unwrap().ops).unwrap();
        assert_eq!(
            fixed["spec"]["nodeSelector"],
            json!({"kubernetes.io/os":"windows"})
        );
        let mut old = cfg();
        old.target.kubernetes = crate::model::KubeVersion::new(1, 12);
        assert!(!ids(&pod, &old).contains(&"WIN002"));
    }

    #[test]
    fn win003_fix_and_guard() {
        let pod = unset(winok(), "/spec/os");
        let fs = findings(&pod, &cfg());
        let f = fs.iter().find(|f| f.rule.id == "WIN003").expect("WIN003");
        assert!(f.fix.is_some());
        let guarded = set(pod, "/spec/securityContext/runAsUser", json!(1000));
        let fs = findings(&guarded, &cfg());
        let f = fs.iter().find(|f| f.rule.id == "WIN003").expect("WIN003");
        assert!(
            f.fix.is_none(),
            "spec.os must not be added while runAsUser is set"
        );
        assert!(
            f.message.contains("spec.securityContext.runAsUser"),
            "{}",
            f.message
        );
    }

    #[test]
    fn win003_not_before_spec_os_exists() {
        let mut c = cfg();
        c.target.kubernetes = crate::model::KubeVersion::new(1, 22);
        assert!(!ids(&unset(winok(), "/spec/os"), &c).contains(&"WIN003"));
    }

    #[test]
    fn win004_conflicts() {
        // T49: Linux selector with a Windows image.
        let pod = json!({"kind":"Pod","spec":{"nodeSelector":{"kubernetes.io/os":"linux"},"containers":[{"name":"a","image":"mcr.microsoft.com/windows/servercore:ltsc2022"}]}});
        // Windows image detection comes from image analysis; assert on the selector/os conflict too.
        let pod2 = set(pod.clone(), "/spec/os", json!({"name":"windows"}));
        assert!(ids(&pod2, &cfg()).contains(&"WIN004"));
        // T56: pod label contradicts spec.os.
        let pod3 = set(
            winok(),
            "/metadata/labels",
            json!({"kubernetes.io/os":"linux"}),
        );
        let fs = findings(&pod3, &cfg());
        let f = fs.iter().find(|f| f.rule.id == "WIN004").expect("WIN004");
        assert_eq!(f.pointer, "/metadata/labels/kubernetes.io~1os");
        // Linux pods without contradictions: nothing.
        let linux = json!({"kind":"Pod","spec":{"os":{"name":"linux"},"nodeSelector":{"kubernetes.io/os":"linux"},"containers":[{"name":"a","image":"nginx"}]}});
        assert!(ids(&linux, &cfg()).is_empty());
    }

    #[test]
    fn win007_tolerations() {
        let pod = unset(winok(), "/spec/tolerations");
        let fs = findings(&pod, &cfg());
        let f = fs.iter().find(|f| f.rule.id == "WIN007").expect("WIN007");
        let mut fixed = pod.clone();
        json_patch::patch(&mut fixed, &f.fix.as_ref().unwrap().ops).unwrap();
        assert!(ids(&fixed, &cfg()).is_empty());
        // tolerate-everything
        let all = set(
            unset(winok(), "/spec/tolerations"),
            "/spec/tolerations",
            json!([{"operator":"Exists"}]),
        );
        assert!(!ids(&all, &cfg()).contains(&"WIN007"));
        // no taints configured
        let mut c = cfg();
        c.target.windows_taints.clear();
        assert!(!ids(&pod, &c).contains(&"WIN007"));
    }

    #[test]
    fn win009_and_win006_runtimeclass() {
        let mut cx = crate::model::Context::default();
        cx.add(&json!({"apiVersion":"node.k8s.io/v1","kind":"RuntimeClass","metadata":{"name":"windows-2019"},"handler":"h",
            "scheduling":{"nodeSelector":{"kubernetes.io/os":"windows","node.kubernetes.io/windows-build":"10.0.17763"},
            "tolerations":[{"effect":"NoSchedule","key":"os","operator":"Equal","value":"windows"}]}}));
        let pod = json!({"kind":"Pod","spec":{"os":{"name":"windows"},"runtimeClassName":"windows-2019",
            "nodeSelector":{"node.kubernetes.io/windows-build":"10.0.20348"},
            "containers":[{"name":"a","image":"mcr.microsoft.com/windows/servercore:ltsc2022"}]}});
        let mut c = cfg();
        c.target.windows_builds = vec![windows::WS2019, windows::WS2022];
        let r = crate::engine::lint_object(&pod, &c, &cx, crate::model::Operation::Lint);
        let got: Vec<&str> = r.findings.iter().map(|f| f.rule.id).collect();
        assert!(got.contains(&"WIN009"), "{got:?}");
        assert!(
            !got.contains(&"WIN001") && !got.contains(&"WIN007"),
            "RuntimeClass supplies OS pin and toleration: {got:?}"
        );
    }

    #[test]
    fn win006_revision_and_unknown_build() {
        let pod = set(
            winok(),
            "/spec/nodeSelector/node.kubernetes.io~1windows-build",
            json!("10.0.20348.1906"),
        );
        let fs = findings(&pod, &cfg());
        assert!(
            fs.iter()
                .any(|f| f.rule.id == "WIN006" && f.message.contains("revision"))
        );
        let pod = set(
            winok(),
            "/spec/nodeSelector/node.kubernetes.io~1windows-build",
            json!("10.0.17763"),
        );
        assert!(ids(&pod, &cfg()).contains(&"WIN006"));
        let pod = set(
            winok(),
            "/spec/nodeSelector/node.kubernetes.io~1windows-build",
            json!("10.0.20348"),
        );
        assert!(!ids(&pod, &cfg()).contains(&"WIN006"));
    }
}

/// The rules that need node facts, with the cluster's nodes observed.
#[cfg(test)]
mod observed_tests {
    use serde_json::json;

    use crate::model::Severity;
    use crate::rules::testutil::{
        cfg, findings, group, hits, ids, observed, only, set, unset, winok,
    };

    const GKE: &str = "node.kubernetes.io/os=windows:NoSchedule";

    fn linux() -> crate::model::nodes::NodeGroup {
        group("l", "linux", "", &[], &[], 3)
    }

    #[test]
    fn win007_asks_the_taints_of_the_nodes_the_pod_can_select() {
        // GKE's taint, not the configured default: the toleration to add is GKE's.
        let c = observed(
            cfg(),
            vec![group("w", "windows", "10.0.20348", &[GKE], &[], 2), linux()],
        );
        let f = only(&winok(), &c, "WIN007");
        assert_eq!(f.len(), 1, "{f:?}");
        assert!(f[0].message.starts_with("The Windows nodes this pod can select (2 nodes, 10.0.20348) are tainted node.kubernetes.io/os=windows:NoSchedule"), "{}", f[0].message);
        let fixed = crate::rules::testutil::apply(&winok(), &f[0]);
        assert!(only(&fixed, &c, "WIN007").is_empty());
        // Groups of several builds: the message names them all.
        let c2 = observed(
            cfg(),
            vec![
                group("w", "windows", "10.0.20348", &[GKE], &[], 2),
                group("v", "windows", "10.0.17763", &[GKE], &[], 1),
                linux(),
            ],
        );
        let f = only(&winok(), &c2, "WIN007");
        assert!(
            f[0].message.starts_with(
                "The Windows nodes this pod can select (3 nodes, 10.0.17763, 10.0.20348) are tainted"
            ),
            "{}",
            f[0].message
        );
        // Untainted Windows nodes: nothing to tolerate, whatever the configured default says.
        let c = observed(
            cfg(),
            vec![group("w", "windows", "10.0.20348", &[], &[], 2), linux()],
        );
        assert!(only(&unset(winok(), "/spec/tolerations"), &c, "WIN007").is_empty());
        // One tainted and one untainted Windows group: the pod can land on the second.
        let c = observed(
            cfg(),
            vec![
                group("a", "windows", "10.0.20348", &[GKE], &[], 2),
                group("b", "windows", "10.0.20348", &[], &[("pool", "b")], 1),
                linux(),
            ],
        );
        assert!(only(&unset(winok(), "/spec/tolerations"), &c, "WIN007").is_empty());
        // …unless its selector picks the tainted one only.
        let pod = set(
            unset(winok(), "/spec/tolerations"),
            "/spec/nodeSelector/pool",
            json!("a"),
        );
        assert!(
            only(&pod, &c, "WIN007").is_empty(),
            "pool=a selects no node: WIN010's"
        );
        let c = observed(
            cfg(),
            vec![
                group("a", "windows", "10.0.20348", &[GKE], &[("pool", "a")], 2),
                group("b", "windows", "10.0.20348", &[], &[("pool", "b")], 1),
            ],
        );
        assert_eq!(only(&pod, &c, "WIN007").len(), 1);
    }

    /// A build selector that no observed node runs is not WIN006's error but WIN010's warning
    /// (a scale-from-zero ltsc2019 pool brings the node: the pod would run); the same selector
    /// against configured builds, and an image the selected build cannot run, stay errors.
    #[test]
    fn build_selector_of_no_observed_node_is_a_warning() {
        let pod = set(
            winok(),
            "/spec/nodeSelector/node.kubernetes.io~1windows-build",
            json!("10.0.17763"),
        );
        let pod19 = set(
            pod.clone(),
            "/spec/containers/0/image",
            json!("mcr.microsoft.com/windows/servercore:ltsc2019"),
        );
        let c = observed(
            cfg(),
            vec![group("w", "windows", "10.0.20348", &[], &[], 2), linux()],
        );
        assert!(only(&pod19, &c, "WIN006").is_empty());
        let w = only(&pod19, &c, "WIN010");
        assert_eq!(w.len(), 1);
        assert_eq!(w[0].severity, Severity::Warning);
        // Configured builds only (offline): still an error.
        let f = only(&pod19, &cfg(), "WIN006");
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].severity, Severity::Error);
        // Observed, with an ltsc2022 image on the selected ltsc2019 build: never runs.
        let c = observed(
            cfg(),
            vec![group("w", "windows", "10.0.17763", &[], &[], 2), linux()],
        );
        assert_eq!(only(&pod, &c, "WIN006").len(), 1);
    }

    #[test]
    fn win005_does_not_pin_to_a_build_no_observed_node_runs() {
        let mixed = vec![
            group("a", "windows", "10.0.17763", &[GKE], &[], 1),
            group("b", "windows", "10.0.20348", &[GKE], &[], 2),
            linux(),
        ];
        let ws2025 = set(
            winok(),
            "/spec/containers/0/image",
            json!("mcr.microsoft.com/windows/servercore:ltsc2025"),
        );
        // No node runs it: WIN502 says so; a pin to 10.0.26100 would select no node.
        let c = observed(cfg(), mixed.clone());
        assert!(only(&ws2025, &c, "WIN005").is_empty());
        assert_eq!(only(&ws2025, &c, "WIN502").len(), 1);
        // An image one group runs: pinned to that group's build.
        let ws2019 = set(
            winok(),
            "/spec/containers/0/image",
            json!("mcr.microsoft.com/windows/servercore:ltsc2019"),
        );
        let f = only(&ws2019, &c, "WIN005");
        assert_eq!(f.len(), 1, "{f:?}");
        assert!(f[0].message.ends_with(": 10.0.17763"), "{}", f[0].message);
    }

    #[test]
    fn no_windows_node_observed_means_warnings_not_denials() {
        let c = observed(cfg(), vec![linux()]);
        let pod = unset(winok(), "/spec/tolerations");
        let f = only(&pod, &c, "WIN007");
        assert_eq!(f[0].severity, Severity::Warning);
        assert!(
            f[0].message
                .contains("no Windows node is in the cluster yet"),
            "{}",
            f[0].message
        );
        let old = set(
            winok(),
            "/spec/containers/0/image",
            json!("mcr.microsoft.com/windows/servercore:ltsc2019"),
        );
        assert_eq!(hits(&old, &c, "WIN502")[0].0, Severity::Warning);
    }

    #[test]
    fn win502_judges_by_the_builds_the_pod_can_land_on() {
        let old = set(
            winok(),
            "/spec/containers/0/image",
            json!("mcr.microsoft.com/windows/servercore:ltsc2019"),
        );
        let tol =
            json!([{"key": "os", "operator": "Equal", "value": "windows", "effect": "NoSchedule"}]);
        let ws22 = group(
            "n",
            "windows",
            "10.0.20348",
            &["os=windows:NoSchedule"],
            &[],
            3,
        );
        let ws19 = group(
            "o",
            "windows",
            "10.0.17763",
            &["os=windows:NoSchedule"],
            &[],
            1,
        );
        let c = observed(cfg(), vec![ws22.clone(), linux()]);
        let f = only(
            &set(old.clone(), "/spec/tolerations", tol.clone()),
            &c,
            "WIN502",
        );
        assert_eq!(f.len(), 1);
        assert!(
            f[0].message.contains(
                "the Windows nodes this pod can select (3 nodes) run 10.0.20348 (ltsc2022)"
            ),
            "{}",
            f[0].message
        );
        // A ltsc2019 node joins: admitted.
        let c = observed(cfg(), vec![ws22.clone(), ws19.clone(), linux()]);
        assert!(only(&old, &c, "WIN502").is_empty());
        // …but not when the pod pins itself to the 2022 nodes.
        let pinned = set(
            old.clone(),
            "/spec/nodeSelector/node.kubernetes.io~1windows-build",
            json!("10.0.20348"),
        );
        assert_eq!(only(&pinned, &c, "WIN502").len(), 1);
        // A selected group of unknown build: nothing certain to say.
        let c = observed(cfg(), vec![group("u", "windows", "", &[], &[], 1), linux()]);
        assert!(only(&old, &c, "WIN502").is_empty());
    }

    #[test]
    fn win502_names_a_hyperv_runtime_class_that_can_run_the_image() {
        let old = set(
            winok(),
            "/spec/containers/0/image",
            json!("mcr.microsoft.com/windows/servercore:ltsc2019"),
        );
        let c = observed(
            cfg(),
            vec![
                group(
                    "n",
                    "windows",
                    "10.0.20348",
                    &["os=windows:NoSchedule"],
                    &[],
                    3,
                ),
                linux(),
            ],
        );
        let mut cx = crate::model::Context::default();
        cx.add(
            &json!({"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass",
            "metadata": {"name": "hyperv"}, "handler": "runhcs-wcow-hypervisor",
            "scheduling": {"nodeSelector": {"kubernetes.io/os": "windows"}}}),
        );
        let f: Vec<_> = crate::engine::lint_object(&old, &c, &cx, crate::model::Operation::Lint)
            .findings
            .into_iter()
            .filter(|f| f.rule.id == "WIN502")
            .collect();
        assert!(
            f[0].message
                .ends_with("or run it under Hyper-V isolation with runtimeClassName: hyperv"),
            "{}",
            f[0].message
        );
    }

    #[test]
    fn win001_asks_whether_the_pod_can_land_on_another_os() {
        let pod = unset(winok(), "/spec/nodeSelector");
        let win = group(
            "w",
            "windows",
            "10.0.20348",
            &["os=windows:NoSchedule"],
            &[("agentpool", "win")],
            2,
        );
        let c = observed(cfg(), vec![win.clone(), linux()]);
        let f = only(&pod, &c, "WIN001");
        assert_eq!(f[0].severity, Severity::Error);
        assert!(
            f[0].message
                .contains("can place it on 3 nodes that are not Windows (linux"),
            "{}",
            f[0].message
        );
        // A selector on a label only the Windows nodes carry pins it.
        let pool = set(
            pod.clone(),
            "/spec/nodeSelector",
            json!({"agentpool": "win"}),
        );
        assert!(only(&pool, &c, "WIN001").is_empty());
        // Linux nodes tainted against it (RKE1 taints its Linux nodes): it cannot land there.
        let c = observed(
            cfg(),
            vec![
                win,
                group("l", "linux", "", &["cattle.io/os=linux:NoSchedule"], &[], 3),
            ],
        );
        assert!(only(&pod, &c, "WIN001").is_empty());
    }

    #[test]
    fn win010_selectors_that_match_no_windows_node() {
        let c = observed(
            cfg(),
            vec![
                group(
                    "w",
                    "windows",
                    "10.0.20348",
                    &["os=windows:NoSchedule"],
                    &[("agentpool", "win")],
                    2,
                ),
                linux(),
            ],
        );
        let pod = set(winok(), "/spec/nodeSelector/agentpool", json!("windows"));
        let f = only(&pod, &c, "WIN010");
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].severity, Severity::Warning);
        assert!(
            f[0].message.starts_with(
                "nodeSelector agentpool=windows matches none of the cluster's 2 Windows nodes"
            ),
            "{}",
            f[0].message
        );
        assert!(ids(&winok(), &c).is_empty(), "{:?}", ids(&winok(), &c));
    }

    #[test]
    fn win603_only_where_its_pods_can_reach_windows_nodes() {
        let ds = json!({"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "fluent-bit"},
            "spec": {"template": {"spec": {"containers": [{"name": "fb", "image": "fluent/fluent-bit:2.2"}]}}}});
        let tainted = observed(
            cfg(),
            vec![
                group(
                    "w",
                    "windows",
                    "10.0.20348",
                    &["os=windows:NoSchedule"],
                    &[],
                    2,
                ),
                linux(),
            ],
        );
        assert!(findings(&ds, &tainted).is_empty());
        let open = observed(
            cfg(),
            vec![group("w", "windows", "10.0.20348", &[], &[], 2), linux()],
        );
        assert_eq!(ids(&ds, &open), ["WIN603"]);
        let all = set(
            ds,
            "/spec/template/spec/tolerations",
            json!([{"operator": "Exists"}]),
        );
        assert_eq!(ids(&all, &tainted), ["WIN603"]);
    }
}
