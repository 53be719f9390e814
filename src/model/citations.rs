//! A rule's `source` as a user reads it (`winlint explain`, `winlint rules -o json`, SARIF): the
//! short codes the rules catalogue cites its upstream sources by (`K-INTRO`, `VAL`, `KL-PRED`)
//! spelt out as the public documents they stand for, and the project's own notes (its issues,
//! its research notes, the seed list) left out: a user can open neither.

/// Each code of the catalogue's source table, and the public document it names.
const CODES: &[(&str, &str)] = &[
    (
        "K-INTRO",
        "Kubernetes docs: Windows containers in Kubernetes",
    ),
    (
        "K-UG",
        "Kubernetes docs: Guide for scheduling Windows containers",
    ),
    ("K-STOR", "Kubernetes docs: Windows storage"),
    ("K-NET", "Kubernetes docs: Windows networking"),
    ("K-HPC", "Kubernetes docs: Create a Windows HostProcess Pod"),
    ("K-RC", "Kubernetes docs: Runtime Class"),
    ("K-PSS", "Kubernetes docs: Pod Security Standards"),
    ("K-EX", "Kubernetes docs: Windows examples"),
    (
        "K-OLD11",
        "Kubernetes 1.11 docs: Using Windows Server Containers",
    ),
    ("KEP116", "KEP-116 Windows node support"),
    ("KEP3503", "KEP-3503 Windows host networking"),
    (
        "KEP4369",
        "KEP-4369 relaxed environment variable validation",
    ),
    (
        "VAL-T",
        "kubernetes pkg/apis/core/validation/validation_test.go",
    ),
    ("VAL", "kubernetes pkg/apis/core/validation/validation.go"),
    (
        "PSA",
        "kubernetes staging/src/k8s.io/pod-security-admission/policy",
    ),
    ("KL-PRED", "kubelet pkg/kubelet/lifecycle/predicate.go"),
    ("KL-LBL", "kubelet pkg/kubelet/kubelet_node_status.go"),
    (
        "KL-SC",
        "kubelet pkg/kubelet/kuberuntime/security_context_windows.go",
    ),
    ("KL-PATH", "kubernetes pkg/volume/util/util.go"),
    ("WARN", "kubernetes pkg/api/pod/warnings.go"),
    ("PR84472", "kubernetes/kubernetes#84472"),
    ("PR58751", "kubernetes/kubernetes#58751"),
    ("PR95505", "kubernetes/kubernetes#95505"),
    ("PR97141", "kubernetes/kubernetes#97141"),
    (
        "WT",
        "kubernetes-sigs/windows-testing hyper-v-mutating-webhook",
    ),
    ("E2E-HV", "kubernetes test/e2e/windows/hyperv.go"),
    (
        "MS-COMPAT",
        "Microsoft docs: Windows container version compatibility",
    ),
    (
        "MS-LIFE",
        "Microsoft docs: Windows container base image lifecycles",
    ),
    ("MS-PORT", "Microsoft docs: Windows container portability"),
    ("IIS", "microsoft/iis-docker"),
    ("DNF", "microsoft/dotnet-framework-docker"),
];

/// `source` with its codes spelt out and the project's own notes left out (`issue 18`,
/// `issue-9 research §1.2`, `seed`), each document once; `-` when nothing public is left.
pub fn public(source: &str) -> String {
    let mut out: Vec<String> = Vec::new();
    for item in items(source) {
        let item = item.trim();
        let lower = item.to_ascii_lowercase();
        if item.is_empty()
            || lower == "seed"
            || lower.starts_with("issue")
            || lower.starts_with("research")
            || lower.starts_with('§')
            || lower == "scheduler"
            || lower == "kubelet"
        {
            continue;
        }
        let spelt = match CODES.iter().find(|(code, _)| {
            item.strip_prefix(code)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with(' '))
        }) {
            Some((code, doc)) => format!("{doc}{}", &item[code.len()..]),
            None => item.to_string(),
        };
        if !out.contains(&spelt) {
            out.push(spelt);
        }
    }
    if out.is_empty() {
        "-".to_string()
    } else {
        out.join("; ")
    }
}

/// The items of a source list: split at the commas and semicolons outside parentheses.
fn items(source: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    for (i, c) in source.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' | ';' if depth == 0 => {
                out.push(&source[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&source[start..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_spelt_out_and_own_notes_dropped() {
        assert_eq!(
            public("issue 18, ingress-nginx#7480, kubernetes#94366, Azure/AKS#1905"),
            "ingress-nginx#7480; kubernetes#94366; Azure/AKS#1905"
        );
        assert_eq!(
            public("VAL, K-INTRO, issue-9 research §1.2 (measured on kube-apiserver 1.32)"),
            "kubernetes pkg/apis/core/validation/validation.go; Kubernetes docs: Windows containers in Kubernetes"
        );
        assert_eq!(
            public("K-INTRO (resource management)"),
            "Kubernetes docs: Windows containers in Kubernetes (resource management)"
        );
        // VAL-T is not VAL followed by text.
        assert!(public("VAL-T").contains("validation_test.go"));
        assert_eq!(
            public("Kubernetes API validation (core, apps, batch)"),
            "Kubernetes API validation (core, apps, batch)"
        );
        assert_eq!(public("seed"), "-");
    }
}
