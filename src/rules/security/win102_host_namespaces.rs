//! WIN102 `host-namespaces`.

use crate::model::Eval;
use crate::model::meta::{Mutation, Reads, Recorded, RuleOs};
use crate::model::pod::{FieldPlace, FieldValue};
use crate::model::workload::PodSite;
use crate::model::{Finding, FixSafety, RuleMeta, Severity};
use crate::rules::Rule;
use crate::rules::security::common::linux_only_findings;

/// WIN102 in the registry.
pub const RULE: Rule = Rule {
    meta: &WIN102,
    check: host_namespaces,
};

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

## Severity
`error` where the API server rejects the field (the pod declares `spec.os.name: windows` and the
target validates it); `warning` where the field is kept and ignored on Windows; `info` for a
neutral value (what Pod Security asks of Linux pods: harmless) and for a field a disabled
feature gate makes the API server drop.
"#,
    fix: Some(FixSafety::Safe),
    source: "VAL, issue-9 research §1.2 (measured on kube-apiserver 1.32)",
    applies: "K>=1.24, 1.23 with IdentifyPodOS (error with spec.os.name: windows; hostUsers from 1.33); any (warning/info)",
    os: RuleOs::Windows,
    default_on: true,
    reads: Reads::LINUX_ONLY_FIELDS,
    mutation: Mutation::named(Recorded::LinuxOnlyFields),
};

pub(crate) fn host_namespaces<'a>(site: &PodSite<'a>, eval: &Eval<'a>) -> Vec<Finding> {
    linux_only_findings(&WIN102, FieldPlace::HostNamespaces, site, eval, |f| {
        (f.class == FieldValue::Neutral).then_some(FixSafety::Safe)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    use crate::engine::lint_object;
    use crate::model::Context;
    use crate::model::Operation;

    use crate::rules::security::common::tests::OWN;
    use crate::rules::testutil::{apply, cfg, ids, ids_in, only, set, winok};

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
    fn no_fix_on_pod_update() {
        let pod = set(winok(), "/spec/shareProcessNamespace", json!(false));
        let r = lint_object(&pod, &cfg(), &Context::default(), Operation::Update);
        let f = r.findings.iter().find(|f| f.rule.id == "WIN102").unwrap();
        assert!(f.fix.is_none());
    }
}
