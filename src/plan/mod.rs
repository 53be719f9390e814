//! `winlint plan` (issue 27): which Windows workloads survive moving the Windows nodes to another
//! build (and Kubernetes version, platform, isolation), and what to change for the rest.
//!
//! * [`verdict`]: one container's image against one planned build (the registry's manifest list
//!   or the name, through the model's containerd matcher); the tag or base image to move to;
//! * [`pins`]: node selection that selects no node after the move (the scheduler's predicate on
//!   the nodes as they will be);
//! * [`lifecycle`]: the platforms' support and retirement dates, from `src/model/lifecycle.yaml`;
//! * [`report`]: the plan as grouped text, JSON and Markdown;
//! * [`fleet`]: several clusters' plans and the summary over them.
//!
//! This module is pure: the command line (`cli/plan.rs`) reads the inputs, the cluster and the
//! registry and hands the objects, the context and the two targets here.

pub mod api;
pub mod fix;
pub mod fleet;
pub mod lifecycle;
pub mod pins;
pub mod report;
pub mod verdict;

use serde::Serialize;
use serde_json::Value;

use crate::model::classify::classify;
use crate::model::image::{self, ImageInfo};
use crate::model::platform::Platform;
use crate::model::pod::is_host_process;
use crate::model::windows::{Build, Isolation};
use crate::model::workload::pod_sites;
use crate::model::{Context, Eval, Operation, Runtime, Target};

/// What happens to a workload or container with the move, most urgent first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// Its node selection selects no node after the move: Pending.
    PinBreaks,
    /// No image of it runs on the planned build: build one.
    Rebuild,
    /// It needs Hyper-V isolation, which the platform does not run.
    NeedsHyperv,
    /// The API server of the planned Kubernetes version refuses it ([`api`]).
    ApiChanges,
    /// A tag of it runs on the planned build: change the reference.
    Retag,
    /// Neither the registry nor the name tells.
    Unknown,
    /// It runs on the planned build unchanged.
    RunsAsIs,
}

impl Verdict {
    pub const ALL: [Verdict; 7] = [
        Verdict::PinBreaks,
        Verdict::Rebuild,
        Verdict::NeedsHyperv,
        Verdict::ApiChanges,
        Verdict::Retag,
        Verdict::Unknown,
        Verdict::RunsAsIs,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Verdict::PinBreaks => "pin-breaks",
            Verdict::Rebuild => "rebuild",
            Verdict::NeedsHyperv => "needs-hyperv",
            Verdict::ApiChanges => "api-changes",
            Verdict::Retag => "retag",
            Verdict::Unknown => "unknown",
            Verdict::RunsAsIs => "runs-as-is",
        }
    }

    pub fn parse(s: &str) -> Option<Verdict> {
        Verdict::ALL.into_iter().find(|v| v.name() == s)
    }

    /// The workload does not run after the move until it is changed.
    pub fn blocks(self) -> bool {
        matches!(
            self,
            Verdict::PinBreaks | Verdict::Rebuild | Verdict::NeedsHyperv | Verdict::ApiChanges
        )
    }
}

/// The move being planned.
pub struct Move {
    /// The nodes now: the configured target (offline) or the cluster's facts (`--cluster`).
    pub now: Target,
    /// The nodes after the move (`--to`, `--kubernetes`, `--isolation`), their node groups the
    /// current ones moved ([`pins::moved`]).
    pub after: Target,
    /// The planned Windows builds.
    pub to: Vec<Build>,
    pub platform: Option<Platform>,
    /// `YYYY-MM-DD`.
    pub as_of: String,
}

impl Move {
    /// The move from `now` to `to`: the node groups of both are set (observed ones kept, else
    /// the configured target's), so that the scheduler's predicate can be asked of each.
    pub fn new(now: Target, mut after: Target, to: Vec<Build>, as_of: String) -> Move {
        let groups = now
            .nodes
            .as_deref()
            .map(<[_]>::to_vec)
            .unwrap_or_else(|| crate::model::placement::configured_windows_nodes(&now));
        let now = pins::with_nodes(&now, groups.clone());
        after.windows_builds = to.clone();
        let after = pins::with_nodes(&after, pins::moved(&groups, &to));
        Move {
            platform: after.platform,
            now,
            after,
            to,
            as_of,
        }
    }
}

/// One pod-level change (a pin, the isolation).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PodItem {
    pub verdict: Verdict,
    pub evidence: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub change: Option<String>,
}

/// One container's plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ContainerPlan {
    /// `container "web"`, `init container "setup"`.
    pub container: String,
    pub image: String,
    pub verdict: Verdict,
    /// The planned build this judgement is for (the worst one when the pod faces several).
    pub build: String,
    pub evidence: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub change: Option<String>,
    /// A retag's rewrite for `plan --fix` ([`fix::ImageFix`]): the reference to write, or why
    /// none is written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<fix::ImageFix>,
    /// The pointer of its `image` in the object.
    #[serde(skip)]
    pub pointer: String,
}

/// One workload's plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WorkloadPlan {
    /// `namespace/Kind/name`.
    pub object: String,
    pub file: String,
    pub verdict: Verdict,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub pod: Vec<PodItem>,
    pub containers: Vec<ContainerPlan>,
}

/// The plan of one object: `None` when it holds no Windows pod (Linux or unknown OS pods are
/// not moved).
pub fn plan_object(object: &Value, file: &str, mv: &Move, cx: &Context) -> Option<WorkloadPlan> {
    let mut pod = Vec::new();
    let mut containers = Vec::new();
    let mut windows = false;
    let namespace = object
        .pointer("/metadata/namespace")
        .and_then(Value::as_str);
    for site in pod_sites(object) {
        let images: Vec<_> = site
            .containers()
            .map(|c| (c, image::analyze(c.image().unwrap_or(""))))
            .collect();
        let class = classify(&site, images.iter().map(|(_, i)| i), cx, &mv.now);
        if !class.is_windows() {
            continue;
        }
        windows = true;
        let after = Eval::new(&mv.after, cx, Operation::Lint, class, images.clone())
            .in_namespace(namespace);
        let placement = after.placement(&site);
        // The planned builds this pod can land on; all of them when its pin breaks (what it
        // faces once the pin is fixed).
        let hosts = placement
            .host_builds(&mv.after)
            .map(|h| h.builds)
            .filter(|b| !b.is_empty())
            .unwrap_or_else(|| mv.to.clone());
        for b in pins::broken(&site, cx, &mv.now, &mv.after, &mv.to) {
            pod.push(PodItem {
                verdict: Verdict::PinBreaks,
                evidence: b.evidence,
                change: Some(b.change),
            });
        }
        pod.extend(api::changes(
            object,
            &site,
            cx,
            mv.now.kubernetes,
            mv.after.kubernetes,
        ));
        let hyperv_offered = mv.platform.and_then(lifecycle::hyperv).map(|(h, _)| h);
        let mut iso = after.isolation(&site);
        if iso == Isolation::Hyperv
            && let Some(p) = mv.platform
            && let Some((false, source)) = lifecycle::hyperv(p)
        {
            let how = match site.str("/runtimeClassName") {
                Some(rc) => format!("runtimeClassName {rc} runs it under Hyper-V isolation"),
                None => "the planned isolation is Hyper-V".to_string(),
            };
            pod.push(PodItem {
                verdict: Verdict::NeedsHyperv,
                evidence: format!("{how}; {} runs none ({source})", p.name().to_ascii_uppercase()),
                change: Some(
                    "run it under process isolation (drop the Hyper-V runtimeClassName); its images must then match the planned build (see its containers)"
                        .into(),
                ),
            });
            iso = Isolation::Process;
        }
        let now_hosts = Eval::new(
            &mv.now,
            cx,
            Operation::Lint,
            after.class.clone(),
            images.clone(),
        );
        let now_builds = now_hosts.host_builds(&site);
        let now_iso = now_hosts.isolation(&site);
        for (c, info) in &images {
            containers.push(plan_container(
                &site,
                c,
                info,
                &hosts,
                iso,
                (&now_builds, now_iso),
                hyperv_offered,
                mv,
                &after,
            ));
        }
    }
    if !windows {
        return None;
    }
    let verdict = pod
        .iter()
        .map(|p| p.verdict)
        .chain(containers.iter().map(|c| c.verdict))
        .min()
        .unwrap_or(Verdict::Unknown);
    let kind = object.get("kind").and_then(Value::as_str).unwrap_or("?");
    let name = object
        .pointer("/metadata/name")
        .or_else(|| object.pointer("/metadata/generateName"))
        .and_then(Value::as_str)
        .unwrap_or("");
    let kind_name = format!("{kind}/{name}");
    Some(WorkloadPlan {
        object: crate::report::object_name(namespace, &kind_name),
        file: file.to_string(),
        verdict,
        pod,
        containers,
    })
}

#[allow(clippy::too_many_arguments)]
fn plan_container(
    site: &crate::model::PodSite,
    c: &crate::model::ContainerRef,
    info: &ImageInfo,
    hosts: &[Build],
    iso: Isolation,
    (now_builds, now_iso): (&[Build], Isolation),
    hyperv_offered: Option<bool>,
    mv: &Move,
    eval: &Eval,
) -> ContainerPlan {
    let image = c.image().unwrap_or("");
    let lookup = |r: &str| eval.context.image_facts(r, eval.namespace);
    let facts = |relaxed| verdict::Facts {
        image,
        info,
        registry: eval.context.image_facts(image, eval.namespace),
        lookup: &lookup,
        host_process: is_host_process(site, c),
        relaxed,
        hyperv_offered,
    };
    let after = facts(mv.after.runtime == Runtime::Containerd);
    let mut worst: Option<(Build, verdict::Judgement)> = None;
    let mut retags = Vec::new();
    for &b in hosts {
        let j = verdict::judge(&after, b, iso);
        retags.extend(j.retag.clone());
        if worst.as_ref().is_none_or(|(_, w)| j.verdict < w.verdict) {
            worst = Some((b, j));
        }
    }
    let (build, mut j) = worst.unwrap_or_else(|| {
        (
            Build(0),
            verdict::Judgement {
                verdict: Verdict::Unknown,
                evidence: "no planned Windows build".into(),
                change: None,
                retag: None,
            },
        )
    });
    // Already broken now: the move is not what breaks it.
    if matches!(j.verdict, Verdict::Retag | Verdict::Rebuild) && !now_builds.is_empty() {
        let now = facts(mv.now.runtime == Runtime::Containerd);
        if now_builds
            .iter()
            .map(|&b| verdict::judge(&now, b, now_iso).verdict)
            .all(|v| matches!(v, Verdict::Retag | Verdict::Rebuild))
        {
            j.evidence.push_str(
                " (it does not run on the current nodes either: winlint lint reports it)",
            );
        }
    }
    let fix = (j.verdict == Verdict::Retag).then(|| {
        let judge = |reference: &str, written: &str, host: Build| {
            let info = image::analyze(written);
            let f = verdict::Facts {
                image: written,
                info: &info,
                registry: lookup(reference),
                ..facts(mv.after.runtime == Runtime::Containerd)
            };
            verdict::judge(&f, host, iso).verdict
        };
        fix::choose(image, &retags, hosts, &judge)
    });
    ContainerPlan {
        container: c.label(),
        image: image.to_string(),
        verdict: j.verdict,
        build: build.to_string(),
        evidence: j.evidence,
        change: j.change,
        fix,
        pointer: site.container_ptr(c, "/image"),
    }
}
