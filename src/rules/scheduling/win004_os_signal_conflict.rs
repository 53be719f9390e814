//! WIN004 `os-signal-conflict`.

use crate::model::Eval;
use crate::model::classify::{self, Os, Source};
use crate::model::meta::{Area, Mutation, Reads, RuleOs};
use crate::model::workload::PodSite;
use crate::model::{Finding, RuleMeta, Severity};
use crate::rules::Rule;

/// WIN004 in the registry.
pub const RULE: Rule = Rule {
    meta: &WIN004,
    check: os_signal_conflict,
};

pub static WIN004: RuleMeta = RuleMeta {
    id: "WIN004",
    name: "os-signal-conflict",
    severity: Severity::Error,
    summary: "Contradictory OS evidence: spec.os vs selectors, the kubernetes.io/os pod label, or Windows images in a Linux pod",
    docs: r#"## What it does
Compares the OS the pod declares (`spec.os.name`, OS node selectors, required affinity, RuntimeClass)
with the other OS evidence: the `kubernetes.io/os` **pod label** and Windows-only images. When nothing
declares the OS, a Windows image against a `kubernetes.io/os: linux` pod label is reported too: the
pod's own label does not make it Linux (the image decides, and every Windows rule still applies).

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
    default_on: true,
    reads: Reads::of(&[Area::Evidence]),
    mutation: Mutation::DEFAULT,
};

pub(crate) fn os_signal_conflict(_site: &PodSite, eval: &Eval) -> Vec<Finding> {
    let class = &eval.class;
    let Some(decl) = class.declared() else {
        return image_against_label(eval);
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

/// Nothing declares the OS, a Windows image makes the pod Windows, and the pod's own
/// `kubernetes.io/os` label says Linux: the label does not make the pod Linux (the image wins,
/// `model::classify`), but the pod cannot start anywhere.
fn image_against_label(eval: &Eval) -> Vec<Finding> {
    let class = &eval.class;
    let (Some(image), Some(label)) = (
        class
            .declared_by(Source::Image)
            .filter(|s| s.os == Os::Windows && class.os == Os::Windows),
        class
            .declared_by(Source::Label)
            .filter(|s| s.os == Os::Linux),
    ) else {
        return Vec::new();
    };
    if !eval.target.kubernetes.at_least(1, 24) {
        return Vec::new();
    }
    vec![Finding::new(
        &WIN004,
        label.pointer.clone(),
        format!(
            "pod {} contradicts its {}; the pod can start on no node: a Windows node's kubelet rejects it (PodOSSelectorNodeLabelDoesNotMatch), a Linux node cannot run the image. Remove the label (or set it to windows) and pin the pod to Windows",
            label.what, image.what
        ),
    )]
}

#[cfg(test)]
mod tests {

    use serde_json::json;

    use crate::rules::testutil::{cfg, findings, ids, set, winok};

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
    fn a_linux_pod_label_does_not_hide_a_windows_image() {
        // Nothing declares the OS; the label said Linux and hid the image from every rule.
        let pod = json!({"kind":"Pod","metadata":{"labels":{"kubernetes.io/os":"linux"}},
            "spec":{"containers":[{"name":"a","image":"mcr.microsoft.com/windows/servercore:ltsc2022"}]}});
        let got = ids(&pod, &cfg());
        assert!(got.contains(&"WIN004"), "{got:?}");
        // The Windows rules run: the missing OS selector is reported as without the label.
        let unlabelled = set(pod.clone(), "/metadata/labels", json!({}));
        let without: Vec<_> = ids(&unlabelled, &cfg());
        for id in &without {
            assert!(got.contains(id), "{id} hidden by the label: {got:?}");
        }
        let fs = findings(&pod, &cfg());
        let f = fs.iter().find(|f| f.rule.id == "WIN004").unwrap();
        assert_eq!(f.pointer, "/metadata/labels/kubernetes.io~1os");
        // A Linux image with the label: a Linux pod, nothing to say.
        let linux = json!({"kind":"Pod","metadata":{"labels":{"kubernetes.io/os":"linux"}},
            "spec":{"containers":[{"name":"a","image":"nginx"}]}});
        assert!(ids(&linux, &cfg()).is_empty());
    }
}
