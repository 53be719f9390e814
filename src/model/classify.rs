//! Is this pod Windows, Linux or unknown, and why (shared/rules.md §4).
//!
//! No Windows rule may fire on a pod that is not classified Windows: a false positive on the
//! Linux majority of a cluster is the worst bug winlint can ship.

use serde_json::Value;

use super::context::Context;
use super::image::ImageInfo;
use super::labels::{BUILD_LABEL, HYPERV_ANNOTATION, OS_LABEL, OS_LABELS};
use super::reads::{Area, Reads};
use super::target::Target;
use super::windows_evidence::Weight;
use super::workload::Lookup;
use super::workload::PodSite;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Os {
    Windows,
    Linux,
    Unknown,
}

impl Os {
    fn parse(s: &str) -> Os {
        match s {
            "windows" => Os::Windows,
            "linux" => Os::Linux,
            _ => Os::Unknown,
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Os::Windows => "windows",
            Os::Linux => "linux",
            Os::Unknown => "unknown",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Strength {
    Weak,
    Probable,
    Definite,
}

/// Where a piece of OS evidence comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// `spec.os.name`
    OsField,
    /// `nodeSelector`, required node affinity, or the RuntimeClass's scheduling.
    Selector,
    /// `metadata.labels["kubernetes.io/os"]`
    Label,
    /// Container images.
    Image,
    /// Everything else (windowsOptions, annotations, tolerations, commands).
    Other,
}

/// The part of a pod a signal is read from, in the order [`classify`] reads them:
/// [`classify_since`] reads again only the parts a patch touched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    OsField,
    /// The OS and build labels of `nodeSelector`.
    NodeSelector,
    Affinity,
    RuntimeClass,
    /// `spec.securityContext.windowsOptions`.
    PodWindowsOptions,
    /// The containers' `securityContext.windowsOptions`.
    ContainerWindowsOptions,
    /// [`windows_evidence`](super::windows_evidence): Windows paths, resources and drivers.
    WindowsEvidence,
    /// The Hyper-V isolation annotation.
    Annotation,
    /// The pod's `kubernetes.io/os` label.
    Label,
    Images,
    Tolerations,
}

impl Part {
    /// Every part, in the order they are read (and their signals listed).
    const ALL: [Part; 11] = [
        Part::OsField,
        Part::NodeSelector,
        Part::Affinity,
        Part::RuntimeClass,
        Part::PodWindowsOptions,
        Part::ContainerWindowsOptions,
        Part::WindowsEvidence,
        Part::Annotation,
        Part::Label,
        Part::Images,
        Part::Tolerations,
    ];

    /// The areas of the pod the part is read from (besides the context and target, which a
    /// patch does not change). The annotation is outside every area: only a change that
    /// touches everything ([`Reads::ALL`]) reaches it.
    fn reads(self) -> Reads {
        let of = |areas: &[Area]| Reads::of(areas);
        match self {
            Part::OsField => of(&[Area::Os]),
            Part::NodeSelector => of(&[Area::NodeSelector]),
            Part::Affinity => of(&[Area::Affinity]),
            Part::RuntimeClass => of(&[Area::RuntimeClass]),
            Part::PodWindowsOptions => of(&[Area::PodSecurityContext]),
            Part::ContainerWindowsOptions | Part::Images => of(&[Area::Containers]),
            Part::WindowsEvidence => of(&[Area::Containers, Area::Volumes]),
            Part::Annotation => Reads::NONE,
            Part::Label => of(&[Area::Labels]),
            Part::Tolerations => of(&[Area::Tolerations]),
        }
    }
}

/// One piece of OS evidence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signal {
    pub os: Os,
    pub strength: Strength,
    pub source: Source,
    /// Where it was read from.
    pub part: Part,
    /// Human description: `nodeSelector kubernetes.io/os=windows`.
    pub what: String,
    /// Pointer into the object where the evidence is.
    pub pointer: String,
}

/// The verdict with its evidence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Classification {
    pub os: Os,
    pub strength: Strength,
    pub signals: Vec<Signal>,
}

impl Classification {
    /// Windows, definite or probable: the Windows rules apply.
    pub fn is_windows(&self) -> bool {
        self.os == Os::Windows && self.strength >= Strength::Probable
    }
    pub fn is_linux(&self) -> bool {
        self.os == Os::Linux && self.strength >= Strength::Probable
    }
    /// The strongest evidence for the verdict, for messages.
    pub fn reason(&self) -> &str {
        self.signals
            .iter()
            .filter(|s| s.os == self.os)
            .max_by_key(|s| s.strength)
            .map(|s| s.what.as_str())
            .unwrap_or("no OS evidence")
    }
    /// The OS a given kind of evidence declares, if it declares exactly one.
    pub fn declared_by(&self, source: Source) -> Option<&Signal> {
        let mut it = self.signals.iter().filter(|s| {
            s.source == source && s.strength >= Strength::Probable && s.os != Os::Unknown
        });
        let first = it.next()?;
        Some(first)
    }
    /// What the pod itself declares its OS by: `spec.os`, else its OS node selector (images
    /// and other evidence are guesses, not declarations).
    pub fn declared(&self) -> Option<&Signal> {
        self.declared_by(Source::OsField)
            .or_else(|| self.declared_by(Source::Selector))
    }
}

/// The OS that a set of required node-affinity terms pins, if every term pins one and the same.
/// Returns (os, pins_every_term); `None` when no term names an OS.
pub fn affinity_os(spec: &Value) -> Option<(Os, bool)> {
    let terms = spec
        .lookup("/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution/nodeSelectorTerms")?
        .as_array()?;
    let mut seen: Option<Os> = None;
    let mut all = !terms.is_empty();
    let mut conflicting = false;
    for term in terms {
        let os = term_os(term);
        match os {
            Some(o) => {
                if seen.is_some_and(|s| s != o) {
                    conflicting = true;
                }
                seen.get_or_insert(o);
            }
            None => all = false,
        }
    }
    if conflicting {
        return Some((Os::Unknown, false));
    }
    seen.map(|o| (o, all))
}

/// The OS one nodeSelectorTerm requires (`In` with values all equal to one OS).
fn term_os(term: &Value) -> Option<Os> {
    let exprs = term.get("matchExpressions")?.as_array()?;
    for e in exprs {
        let key = e.get("key").and_then(Value::as_str).unwrap_or("");
        if !OS_LABELS.contains(&key) {
            continue;
        }
        let op = e.get("operator").and_then(Value::as_str).unwrap_or("");
        let vals: Vec<&str> = e
            .get("values")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        if op == "In" && !vals.is_empty() {
            let first = Os::parse(vals[0]);
            if vals.iter().all(|v| Os::parse(v) == first) && first != Os::Unknown {
                return Some(first);
            }
        }
    }
    None
}

/// Does the pod carry a hard pin to `os`: nodeSelector (stable or beta key), every required
/// affinity term, or a RuntimeClass that supplies it?
pub fn has_os_pin(site: &PodSite, cx: &Context, os: Os) -> bool {
    if OS_LABELS
        .iter()
        .any(|k| site.node_selector(k).map(Os::parse) == Some(os))
    {
        return true;
    }
    if affinity_os(site.spec) == Some((os, true)) {
        return true;
    }
    // `NotIn [windows]` in every term keeps a pod on Linux nodes, `NotIn [linux]` on Windows
    // nodes (in a two-OS cluster: the kubelet labels every node with its OS; the real
    // scheduler, tests/k8s_scheduler.rs, binds a `NotIn [linux]` pod on Windows nodes only).
    let other = match os {
        Os::Linux => Some("windows"),
        Os::Windows => Some("linux"),
        _ => None,
    };
    if other.is_some_and(|o| affinity_not_in(site.spec, o)) {
        return true;
    }
    runtime_class_os(site, cx) == Some(os)
}

/// The OS the pod's RuntimeClass pins (from context objects), if known.
pub fn runtime_class_os(site: &PodSite, cx: &Context) -> Option<Os> {
    let rc = cx.runtime_classes.get(site.str("/runtimeClassName")?)?;
    OS_LABELS
        .iter()
        .find_map(|k| rc.node_selector.get(*k))
        .map(|v| Os::parse(v))
}

/// Classify a pod site. `images` are the analyses of `site.containers()`, in that order.
pub fn classify<'i>(
    site: &PodSite,
    images: impl IntoIterator<Item = &'i ImageInfo>,
    cx: &Context,
    target: &Target,
) -> Classification {
    classify_since(site, images, cx, target, None)
}

/// [`classify`] of a pod site after a patch, given `since`: the site's classification before
/// the patch and the areas the patch touched ([`super::reads::touched`]). The signals of the
/// parts the patch did not touch are the same ([`Part::reads`]) and are kept; the others are
/// read again. The result equals [`classify`]'s (`engine::reads_check` checks it).
pub fn classify_since<'i>(
    site: &PodSite,
    images: impl IntoIterator<Item = &'i ImageInfo>,
    cx: &Context,
    target: &Target,
    since: Option<(&Classification, Reads)>,
) -> Classification {
    let mut images = Some(images);
    let mut sig = Vec::new();
    for part in Part::ALL {
        match since {
            Some((was, touched)) if !part.reads().sees(touched) => {
                sig.extend(was.signals.iter().filter(|s| s.part == part).cloned());
            }
            _ => read_part(part, site, &mut images, cx, target, &mut sig),
        }
    }
    verdict(sig)
}

/// Read the signals of one part of `site` into `sig`.
fn read_part<'i, I: IntoIterator<Item = &'i ImageInfo>>(
    part: Part,
    site: &PodSite,
    images: &mut Option<I>,
    cx: &Context,
    target: &Target,
    sig: &mut Vec<Signal>,
) {
    let mut push = |os: Os, strength: Strength, source: Source, what: String, pointer: String| {
        sig.push(Signal {
            os,
            strength,
            source,
            part,
            what,
            pointer,
        })
    };
    match part {
        Part::OsField => {
            if let Some(name) = site.str("/os/name") {
                push(
                    Os::parse(name),
                    Strength::Definite,
                    Source::OsField,
                    format!("spec.os.name={name}"),
                    site.ptr("/os/name"),
                );
            }
        }
        Part::NodeSelector => {
            for key in OS_LABELS {
                if let Some(v) = site.node_selector(key) {
                    let p = site.ptr(&format!("/nodeSelector/{}", super::pointer::escape(key)));
                    push(
                        Os::parse(v),
                        Strength::Definite,
                        Source::Selector,
                        format!("nodeSelector {key}={v}"),
                        p,
                    );
                }
            }
            if site.node_selector(BUILD_LABEL).is_some() {
                let p = site.ptr("/nodeSelector/node.kubernetes.io~1windows-build");
                push(
                    Os::Windows,
                    Strength::Definite,
                    Source::Selector,
                    format!("nodeSelector {BUILD_LABEL}"),
                    p,
                );
            }
        }
        Part::Affinity => match affinity_os(site.spec) {
            Some((os, true)) if os != Os::Unknown => push(
                os,
                Strength::Definite,
                Source::Selector,
                format!(
                    "required node affinity kubernetes.io/os In [{}]",
                    os.as_str()
                ),
                site.ptr("/affinity/nodeAffinity"),
            ),
            _ => {
                if affinity_not_in(site.spec, "linux") {
                    push(
                        Os::Windows,
                        Strength::Probable,
                        Source::Selector,
                        "required node affinity kubernetes.io/os NotIn [linux]".into(),
                        site.ptr("/affinity/nodeAffinity"),
                    );
                }
                if affinity_not_in(site.spec, "windows") {
                    push(
                        Os::Linux,
                        Strength::Probable,
                        Source::Selector,
                        "required node affinity kubernetes.io/os NotIn [windows]".into(),
                        site.ptr("/affinity/nodeAffinity"),
                    );
                }
            }
        },
        Part::RuntimeClass => {
            if let Some(name) = site.str("/runtimeClassName") {
                let p = site.ptr("/runtimeClassName");
                match runtime_class_os(site, cx) {
                    Some(os) => push(
                        os,
                        Strength::Definite,
                        Source::Selector,
                        format!("RuntimeClass {name:?} selects {}", os.as_str()),
                        p,
                    ),
                    None if !cx.runtime_classes.contains_key(name) => {
                        let n = name.to_ascii_lowercase();
                        if n.starts_with("windows")
                            || n.starts_with("runhcs-wcow")
                            || n == target.hyperv_runtime_class
                        {
                            push(
                                Os::Windows,
                                Strength::Probable,
                                Source::Selector,
                                format!("RuntimeClass name {name:?}"),
                                p,
                            );
                        }
                    }
                    None => {}
                }
            }
        }
        Part::PodWindowsOptions => {
            if site.get("/securityContext/windowsOptions").is_some() {
                push(
                    Os::Windows,
                    Strength::Definite,
                    Source::Other,
                    "spec.securityContext.windowsOptions".into(),
                    site.ptr("/securityContext/windowsOptions"),
                );
            }
        }
        Part::ContainerWindowsOptions => {
            for c in site.containers() {
                if c.value
                    .lookup("/securityContext/windowsOptions")
                    .is_some_and(|v| !v.is_null())
                {
                    push(
                        Os::Windows,
                        Strength::Definite,
                        Source::Other,
                        format!("{} securityContext.windowsOptions", c.label()),
                        site.ptr(&format!("{}/securityContext/windowsOptions", c.rel())),
                    );
                }
            }
        }
        Part::WindowsEvidence => {
            // Paths, resources and drivers that only make sense on Windows (windows_evidence.rs says
            // why each has its strength).
            for e in super::windows_evidence::evidence(site) {
                let strength = match e.weight {
                    Weight::Definite => Strength::Definite,
                    Weight::Probable => Strength::Probable,
                };
                push(Os::Windows, strength, Source::Other, e.what, e.pointer);
            }
        }
        Part::Annotation => {
            if site.annotation(HYPERV_ANNOTATION).is_some() {
                push(
                    Os::Windows,
                    Strength::Probable,
                    Source::Other,
                    "annotation experimental.windows.kubernetes.io/isolation-type".into(),
                    site.meta_ptr("/annotations"),
                );
            }
        }
        Part::Label => {
            if let Some(v) = site.label(OS_LABEL) {
                push(
                    Os::parse(v),
                    Strength::Probable,
                    Source::Label,
                    format!("label kubernetes.io/os={v}"),
                    site.meta_ptr("/labels/kubernetes.io~1os"),
                );
            }
        }
        Part::Images => {
            for (c, info) in site.containers().zip(images.take().into_iter().flatten()) {
                let p = site.ptr(&format!("{}/image", c.rel()));
                let img = c.image().unwrap_or("");
                if info.windows {
                    push(
                        Os::Windows,
                        Strength::Probable,
                        Source::Image,
                        format!("Windows image {img}"),
                        p,
                    );
                } else if info.linux {
                    push(
                        Os::Linux,
                        Strength::Weak,
                        Source::Image,
                        format!("Linux image {img}"),
                        p,
                    );
                }
            }
        }
        Part::Tolerations => {
            if tolerates_windows_taint(site, target) {
                push(
                    Os::Windows,
                    Strength::Weak,
                    Source::Other,
                    "toleration for the Windows taint".into(),
                    site.ptr("/tolerations"),
                );
            }
        }
    }
}

/// The verdict of the signals: the strongest non-contradicted evidence.
fn verdict(sig: Vec<Signal>) -> Classification {
    // Verdict: the strongest non-contradicted evidence. spec.os decides when present, then
    // selectors, then the rest.
    let pick = |src: &[Source], min: Strength| -> Option<(Os, Strength)> {
        let mut best: Option<(Os, Strength)> = None;
        for s in sig
            .iter()
            .filter(|s| src.contains(&s.source) && s.strength >= min && s.os != Os::Unknown)
        {
            match best {
                None => best = Some((s.os, s.strength)),
                Some((o, st)) if o == s.os && s.strength > st => best = Some((o, s.strength)),
                _ => {}
            }
        }
        best
    };
    let verdict = pick(&[Source::OsField], Strength::Definite)
        .or_else(|| pick(&[Source::Selector], Strength::Definite))
        .or_else(|| pick(&[Source::Other], Strength::Definite))
        // The pod's own `kubernetes.io/os` label is the weakest probable evidence: it says what
        // its author believed, an image says what the containers are. It decides only when
        // nothing else probable is there, so a label never hides a Windows image (WIN004 reports
        // the two disagreeing).
        .or_else(|| probable(&sig, |s| s.source != Source::Label))
        .or_else(|| probable(&sig, |s| s.source == Source::Label));
    let (os, strength) = verdict.unwrap_or((Os::Unknown, Strength::Weak));
    Classification {
        os,
        strength,
        signals: sig,
    }
}

/// The OS that the probable signals chosen by `which` agree on; `None` when there are none.
/// When they disagree the verdict is unknown (and final: weaker evidence does not break a tie).
fn probable(sig: &[Signal], which: impl Fn(&Signal) -> bool) -> Option<(Os, Strength)> {
    let mut it = sig
        .iter()
        .filter(|s| which(s) && s.strength == Strength::Probable && s.os != Os::Unknown);
    let first = it.next()?.os;
    if it.any(|s| s.os != first) {
        return Some((Os::Unknown, Strength::Weak));
    }
    Some((first, Strength::Probable))
}

/// Whether every required node-affinity term excludes `os` (`kubernetes.io/os NotIn [os]`):
/// the usual way agents keep off the other OS's nodes.
fn affinity_not_in(spec: &Value, os: &str) -> bool {
    let Some(terms) = spec
        .lookup("/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution/nodeSelectorTerms")
        .and_then(Value::as_array)
    else {
        return false;
    };
    !terms.is_empty()
        && terms.iter().all(|t| {
            t.get("matchExpressions")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .any(|e| {
                    OS_LABELS.contains(&e.get("key").and_then(Value::as_str).unwrap_or(""))
                        && e.get("operator").and_then(Value::as_str) == Some("NotIn")
                        && e.get("values")
                            .and_then(Value::as_array)
                            .is_some_and(|v| v.iter().any(|x| x == os))
                })
        })
}

/// Whether the pod (or its RuntimeClass) tolerates every configured Windows taint.
pub fn tolerates_windows_taint(site: &PodSite, target: &Target) -> bool {
    let tols = super::schedule::pod_tolerations(site.spec);
    !target.windows_node_taints().is_empty()
        && target
            .windows_node_taints()
            .iter()
            .all(|taint| super::schedule::tolerated(&tols, taint))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::workload::pod_sites;
    use serde_json::json;

    fn class_of(pod: Value, images: &[ImageInfo]) -> Classification {
        let sites = pod_sites(&pod);
        classify(&sites[0], images, &Context::default(), &Target::default())
    }

    #[test]
    fn os_field_is_definite() {
        let c = class_of(
            json!({"kind":"Pod","spec":{"os":{"name":"windows"},"containers":[]}}),
            &[],
        );
        assert!(c.is_windows());
        assert_eq!(c.strength, Strength::Definite);
    }

    #[test]
    fn selector_linux_is_linux() {
        let c = class_of(
            json!({"kind":"Pod","spec":{"nodeSelector":{"kubernetes.io/os":"linux"},"containers":[]}}),
            &[],
        );
        assert!(c.is_linux());
    }

    #[test]
    fn a_pod_label_never_hides_a_windows_image() {
        let windows = ImageInfo {
            windows: true,
            ..ImageInfo::default()
        };
        let pod = |label: &str| {
            json!({"kind":"Pod","metadata":{"labels":{"kubernetes.io/os": label}},
                "spec":{"containers":[{"name":"a","image":"mcr.microsoft.com/windows/servercore:ltsc2022"}]}})
        };
        // The image says Windows, the pod's own label Linux: the image wins.
        let c = class_of(pod("linux"), std::slice::from_ref(&windows));
        assert!(c.is_windows(), "{c:?}");
        assert_eq!(
            c.reason(),
            "Windows image mcr.microsoft.com/windows/servercore:ltsc2022"
        );
        assert!(class_of(pod("windows"), std::slice::from_ref(&windows)).is_windows());
        // Alone, the label is still the pod's author's word.
        let c = class_of(pod("linux"), &[ImageInfo::default()]);
        assert!(c.is_linux(), "{c:?}");
    }

    #[test]
    fn nothing_is_unknown() {
        let c = class_of(
            json!({"kind":"Pod","spec":{"containers":[{"name":"a","image":"nginx"}]}}),
            &[ImageInfo::default()],
        );
        assert_eq!(c.os, Os::Unknown);
        assert!(!c.is_windows());
    }

    #[test]
    fn windows_image_is_probable() {
        let img = ImageInfo {
            windows: true,
            ..Default::default()
        };
        let c = class_of(
            json!({"kind":"Pod","spec":{"containers":[{"name":"a","image":"x"}]}}),
            &[img],
        );
        assert!(c.is_windows());
        assert_eq!(c.strength, Strength::Probable);
    }

    /// Windows evidence beyond the image (windows_evidence.rs): a resource only Windows nodes
    /// advertise is definite, a Windows path probable, and a selector still decides.
    #[test]
    fn windows_by_resources_and_paths() {
        let pod = |extra: Value| {
            let mut p = json!({"kind":"Pod","spec":{"containers":[{"name":"a","image":"x"}]}});
            for (k, v) in extra.as_object().unwrap() {
                p["spec"]["containers"][0][k] = v.clone();
            }
            p
        };
        let c = class_of(
            pod(json!({"resources": {"limits": {"microsoft.com/directx": "1"}}})),
            &[ImageInfo::default()],
        );
        assert_eq!((c.os, c.strength), (Os::Windows, Strength::Definite));
        assert!(
            c.reason().contains("microsoft.com/directx"),
            "{}",
            c.reason()
        );
        let mounted = pod(json!({"volumeMounts": [{"name": "v", "mountPath": "C:\\data"}]}));
        let c = class_of(mounted.clone(), &[ImageInfo::default()]);
        assert_eq!((c.os, c.strength), (Os::Windows, Strength::Probable));
        // A Linux image is weak evidence: the path still says Windows.
        let linux = ImageInfo {
            linux: true,
            ..ImageInfo::default()
        };
        assert!(class_of(mounted.clone(), std::slice::from_ref(&linux)).is_windows());
        // A Linux selector decides.
        let mut pinned = mounted;
        pinned["spec"]["nodeSelector"] = json!({"kubernetes.io/os": "linux"});
        assert!(class_of(pinned, &[ImageInfo::default()]).is_linux());
    }

    #[test]
    fn affinity_every_term() {
        let t = |v: &str| json!({"matchExpressions":[{"key":"kubernetes.io/os","operator":"In","values":[v]}]});
        let one = json!({"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[t("windows")]}}}});
        assert_eq!(affinity_os(&one), Some((Os::Windows, true)));
        let two = json!({"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[t("windows"), t("linux")]}}}});
        assert_eq!(affinity_os(&two), Some((Os::Unknown, false)));
    }
}
