//! WIN401, WIN402, WIN410, WIN411: limits of legacy platforms (shared/rules.md §2.5): one
//! container per pod on Windows Server 2016, the pre-1.21 Hyper-V annotation, the pre-1.14
//! userspace kube-proxy and UDP, the Docker runtime's termination grace period.

use serde_json::{Value, json};

use super::Rule;
use crate::model::Runtime;
use crate::model::labels::HYPERV_ANNOTATION;
use crate::model::meta::{Mutation, RuleOs};
use crate::model::windows;
use crate::model::workload::{PodSite, list};
use crate::model::{Eval, escape};
use crate::model::{Finding, Fix, FixSafety, RuleMeta, Severity, ops};

pub fn rules() -> Vec<Rule> {
    vec![
        Rule {
            meta: &WIN401,
            check: multi_container_ws2016,
        },
        Rule {
            meta: &WIN402,
            check: hyperv_annotation,
        },
        Rule {
            meta: &WIN410,
            check: udp_userspace_proxy,
        },
        Rule {
            meta: &WIN411,
            check: termination_grace_docker,
        },
    ]
}

// ---------------------------------------------------------------------------------------------
// WIN401, WIN402 (legacy platform limits)

pub static WIN401: RuleMeta = RuleMeta {
    id: "WIN401",
    name: "multi-container-ws2016",
    severity: Severity::Error,
    summary: "More than one container per pod on Windows Server 2016 nodes",
    docs: r#"## What it does
When the target has Windows Server 2016 (10.0.14393) nodes, reports pods with more than one
container (error) and pods with init containers (warning).

## Why is this bad?
"Only Windows Server 1709 or later versions support running multiple containers in a Pod": on
WS2016 the containers of a pod cannot share the pod's network namespace, so the pod fails.

## Example
```yaml
spec:
  containers:
  - {name: web, image: microsoft/iis:windowsservercore-ltsc2016}
  - {name: logger, image: microsoft/windowsservercore:ltsc2016}
```

## Fix
Split the containers into separate pods, or move to Windows Server 1709/2019 or newer nodes.
"#,
    fix: None,
    source: "seed, K-OLD11",
    applies: "W=14393",
    os: RuleOs::Windows,
    context: &[],
    mutation: Mutation::DEFAULT,
};

fn multi_container_ws2016(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    if !eval.target.windows_builds.contains(&windows::WS2016) {
        return Vec::new();
    }
    let mut out = Vec::new();
    let n = list(site.spec, "containers").len();
    if n > 1 {
        out.push(Finding::new(
            &WIN401,
            site.ptr("/containers"),
            format!(
                "pod has {n} containers, but Windows Server 2016 (10.0.14393) runs only one container per pod; split them into separate pods or use 1709/2019+ nodes"
            ),
        ));
    }
    if !list(site.spec, "initContainers").is_empty() {
        out.push(
            Finding::new(
                &WIN401,
                site.ptr("/initContainers"),
                "pod has init containers, but Windows Server 2016 (10.0.14393) supports only one container per pod; init containers may fail there. Move the init step into the image or use 1709/2019+ nodes",
            )
            .severity(Severity::Warning),
        );
    }
    out
}

pub static WIN402: RuleMeta = RuleMeta {
    id: "WIN402",
    name: "hyperv-annotation",
    severity: Severity::Warning,
    summary: "experimental.windows.kubernetes.io/isolation-type: hyperv (ignored, single-container only, or removed)",
    docs: r#"## What it does
Checks the annotation `experimental.windows.kubernetes.io/isolation-type: hyperv`:

* Kubernetes < 1.10: not implemented, ignored → warning;
* 1.10–1.20: needs the kubelet gate `HyperVContainer=true` (warning when the target does not
  enable it) and supports exactly one container → **error** with more than one;
* ≥ 1.21: removed, no effect → warning.

## Why is this bad?
The pod silently runs with process isolation (the image build must then match the host), or is
rejected for having several containers.

## Example
```yaml
metadata:
  annotations:
    experimental.windows.kubernetes.io/isolation-type: hyperv
```

## Fix
Kubernetes ≥ 1.21, opt-in: replace the annotation with `runtimeClassName` of the configured
Hyper-V RuntimeClass (handler `runhcs-wcow-hypervisor`, containerd ≥ 1.7).
"#,
    fix: Some(FixSafety::OptIn),
    source: "PR58751, PR95505, PR97141, WT, E2E-HV",
    applies: "all (error K1.10–1.20 with >1 container)",
    os: RuleOs::Windows,
    context: &[],
    mutation: Mutation::named("runtimeClassName"),
};

fn hyperv_annotation(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    if site.annotation(HYPERV_ANNOTATION) != Some("hyperv") {
        return Vec::new();
    }
    let k = eval.target.kubernetes;
    let p = site.meta_ptr(&format!("/annotations/{}", escape(HYPERV_ANNOTATION)));
    let n = list(site.spec, "containers").len();
    if !k.at_least(1, 10) {
        return vec![Finding::new(
            &WIN402,
            p,
            format!(
                "the Hyper-V isolation annotation is ignored before Kubernetes 1.10 (target {k}); the pod runs with process isolation, so its image must match the host build"
            ),
        )];
    }
    if !k.at_least(1, 21) {
        if n > 1 {
            return vec![
                Finding::new(
                    &WIN402,
                    p,
                    format!(
                        "Hyper-V isolation via annotation supports exactly one container per pod on Kubernetes 1.10-1.20, this pod has {n}; split the pod or remove the annotation"
                    ),
                )
                .severity(Severity::Error),
            ];
        }
        if !eval.target.gate("HyperVContainer") {
            return vec![Finding::new(
                &WIN402,
                p,
                "the Hyper-V isolation annotation only works with the kubelet feature gate HyperVContainer=true, which the target does not enable; without it the pod runs with process isolation",
            )];
        }
        return Vec::new();
    }
    let rc = &eval.target.hyperv_runtime_class;
    let mut f = Finding::new(
        &WIN402,
        p.clone(),
        format!(
            "the Hyper-V isolation annotation was removed in Kubernetes 1.21 and has no effect on {k}; the pod runs with process isolation. Use runtimeClassName: {rc} (handler runhcs-wcow-hypervisor, containerd 1.7+)"
        ),
    );
    let current = site.str("/runtimeClassName");
    if eval.fix_possible(site) && site.spec.is_object() && current.is_none_or(|c| c == rc) {
        let mut fix_ops = vec![ops::remove(&p)];
        if current.is_none() {
            fix_ops.push(ops::add(&site.ptr("/runtimeClassName"), json!(rc)));
        }
        f = f.with_fix(Fix {
            safety: FixSafety::OptIn,
            description: format!("replace the Hyper-V annotation with runtimeClassName {rc}"),
            ops: fix_ops,
        });
    }
    vec![f]
}

// ---------------------------------------------------------------------------------------------
// WIN410, WIN411

pub static WIN410: RuleMeta = RuleMeta {
    id: "WIN410",
    name: "udp-userspace-proxy",
    severity: Severity::Warning,
    summary: "UDP container ports with the userspace kube-proxy of Kubernetes ≤ 1.13 (netsh portproxy is TCP-only)",
    docs: r#"## What it does
On Kubernetes ≤ 1.13 targets, reports container ports with `protocol: UDP`.

## Why is this bad?
The seed-era Windows kube-proxy ran in userspace mode on `netsh portproxy`, which forwards TCP
only: Services cannot reach UDP ports of Windows pods.

## Example
```yaml
ports:
- {containerPort: 53, protocol: UDP}
```

## Fix
Use TCP, or move to Kubernetes 1.14+ (kernel-mode kube-proxy on Windows).
"#,
    fix: None,
    source: "seed",
    applies: "K≤1.13 (userspace kube-proxy)",
    os: RuleOs::Windows,
    context: &[],
    mutation: Mutation::DEFAULT,
};

fn udp_userspace_proxy(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    if eval.target.kubernetes.at_least(1, 14) {
        return Vec::new();
    }
    let mut out = Vec::new();
    for c in site.containers() {
        for (i, port) in list(c.value, "ports").iter().enumerate() {
            if port.get("protocol").and_then(Value::as_str) != Some("UDP") {
                continue;
            }
            out.push(Finding::new(
                &WIN410,
                site.container_ptr(&c, &format!("/ports/{i}/protocol")),
                format!(
                    "{} exposes UDP port {}; the userspace kube-proxy of Kubernetes {} on Windows forwards TCP only (netsh portproxy), so Services cannot reach it",
                    c.label(),
                    port.get("containerPort").map(Value::to_string).unwrap_or_default(),
                    eval.target.kubernetes
                ),
            ));
        }
    }
    out
}

/// The API server's default `terminationGracePeriodSeconds`.
const DEFAULT_GRACE: i64 = 30;

pub static WIN411: RuleMeta = RuleMeta {
    id: "WIN411",
    name: "termination-grace-docker",
    severity: Severity::Info,
    summary: "terminationGracePeriodSeconds is not honoured on Windows with the Docker runtime",
    docs: r#"## What it does
With the Docker runtime, reports `spec.terminationGracePeriodSeconds` when set to a value other
than the API server's default (30).

## Why is this bad?
Docker on Windows sends `CTRL_SHUTDOWN_EVENT` and kills the container after its own timeout
(5 seconds by registry default), whatever the pod asks for: graceful shutdown longer than that
does not happen.

## Example
```yaml
spec:
  terminationGracePeriodSeconds: 120
```

## Fix
Use containerd (which honours the grace period), or make shutdown complete within 5 seconds.
"#,
    fix: None,
    source: "K-INTRO, KEP116",
    applies: "runtime=docker",
    os: RuleOs::Windows,
    context: &[],
    mutation: Mutation::DEFAULT,
};

fn termination_grace_docker(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    if eval.target.runtime != Runtime::Docker {
        return Vec::new();
    }
    let Some(g) = site
        .get("/terminationGracePeriodSeconds")
        .and_then(Value::as_i64)
    else {
        return Vec::new();
    };
    if g == DEFAULT_GRACE {
        return Vec::new();
    }
    vec![Finding::new(
        &WIN411,
        site.ptr("/terminationGracePeriodSeconds"),
        format!(
            "terminationGracePeriodSeconds {g} is not honoured by Docker on Windows (containers get CTRL_SHUTDOWN_EVENT and are killed after about 5 s); use containerd or shut down within 5 s"
        ),
    )]
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    use crate::rules::testutil::{
        at, cfg, fixed, has_fix, hit, hits, ids_in, legacy, second_container, set, unset, winok,
    };

    /// The WIN3xx/WIN4xx rules (other modules' rules are asserted by their tests).
    const OWN: &[&str] = &["WIN3", "WIN4"];

    fn t33_pod() -> Value {
        json!({"apiVersion":"v1","kind":"Pod","metadata":{"name":"two"},"spec":{
            "nodeSelector":{"beta.kubernetes.io/os":"windows"},
            "containers":[
                {"name":"a","image":"microsoft/windowsservercore:ltsc2016"},
                {"name":"b","image":"microsoft/windowsservercore:ltsc2016"}]}})
    }

    fn hyperv(pod: Value) -> Value {
        set(
            pod,
            "/metadata/annotations",
            json!({HYPERV_ANNOTATION: "hyperv"}),
        )
    }

    #[test]
    fn t33_two_containers_on_ws2016() {
        let mut t = legacy();
        t.target.windows_builds = vec![windows::WS2016];
        // Expected [WIN401, WIN504]; WIN504 belongs to the image rules.
        assert_eq!(ids_in(&t33_pod(), &t, OWN), vec!["WIN401"]);
        assert_eq!(
            hits(&t33_pod(), &t, "WIN401"),
            hit(Severity::Error, "/spec/containers")
        );
        // 1709 runs several containers per pod.
        assert!(hits(&t33_pod(), &legacy(), "WIN401").is_empty());
        // Init containers: warning.
        let init = set(
            unset(t33_pod(), "/spec/containers/1"),
            "/spec/initContainers",
            json!([{"name":"i","image":"microsoft/windowsservercore:ltsc2016"}]),
        );
        let init = set(
            init,
            "/spec/containers",
            json!([{"name":"a","image":"microsoft/windowsservercore:ltsc2016"}]),
        );
        assert_eq!(
            hits(&init, &t, "WIN401"),
            hit(Severity::Warning, "/spec/initContainers")
        );
    }

    #[test]
    fn t34_two_containers_modern() {
        let pod = second_container(winok(), "mcr.microsoft.com/windows/servercore:ltsc2022");
        assert_eq!(ids_in(&pod, &cfg(), OWN), Vec::<&str>::new());
    }

    #[test]
    fn t35_hyperv_annotation() {
        let pod = hyperv(
            json!({"apiVersion":"v1","kind":"Pod","metadata":{"name":"hv"},"spec":{
            "nodeSelector":{"beta.kubernetes.io/os":"windows"},
            "containers":[
                {"name":"a","image":"mcr.microsoft.com/windows/servercore:1803"},
                {"name":"b","image":"mcr.microsoft.com/windows/servercore:1803"}]}}),
        );
        let mut t = at(12);
        t.target.windows_builds = vec![windows::V1803];
        t.target.windows_taints = Vec::new();
        let p = "/metadata/annotations/experimental.windows.kubernetes.io~1isolation-type";
        assert_eq!(ids_in(&pod, &t, OWN), vec!["WIN402"]);
        assert_eq!(hits(&pod, &t, "WIN402"), hit(Severity::Error, p));
        // Same annotation on WINOK with two containers, default target: removed → warning.
        let modern = hyperv(second_container(
            winok(),
            "mcr.microsoft.com/windows/servercore:ltsc2022",
        ));
        assert_eq!(ids_in(&modern, &cfg(), OWN), vec!["WIN402"]);
        assert_eq!(hits(&modern, &cfg(), "WIN402"), hit(Severity::Warning, p));
    }

    #[test]
    fn win402_versions_and_fix() {
        let one = hyperv(winok());
        let p = "/metadata/annotations/experimental.windows.kubernetes.io~1isolation-type";
        // < 1.10: ignored.
        assert_eq!(hits(&one, &at(9), "WIN402"), hit(Severity::Warning, p));
        // 1.10–1.20, one container: needs the kubelet gate.
        assert_eq!(hits(&one, &at(12), "WIN402"), hit(Severity::Warning, p));
        let mut gate = at(12);
        gate.target
            .feature_gates
            .insert("HyperVContainer".into(), true);
        assert!(hits(&one, &gate, "WIN402").is_empty());
        assert!(!has_fix(&one, &at(12), "WIN402"));
        // ≥ 1.21: opt-in replacement by the Hyper-V RuntimeClass.
        let f = fixed(&one, &cfg(), "WIN402");
        assert_eq!(f["spec"]["runtimeClassName"], "runhcs-wcow-hypervisor");
        assert_eq!(f["metadata"]["annotations"], json!({}));
        // Another RuntimeClass already chosen: no fix.
        let other = set(one.clone(), "/spec/runtimeClassName", json!("windows-2019"));
        assert!(!has_fix(&other, &cfg(), "WIN402"));
        // Not "hyperv": nothing.
        let proc = set(
            winok(),
            "/metadata/annotations",
            json!({HYPERV_ANNOTATION: "process"}),
        );
        assert!(hits(&proc, &cfg(), "WIN402").is_empty());
        // Deployment template: pointer into the template metadata.
        let dep = json!({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},
            "spec":{"template":{"metadata":one["metadata"].clone(),"spec":one["spec"].clone()}}});
        assert_eq!(
            hits(&dep, &cfg(), "WIN402")[0].1,
            "/spec/template/metadata/annotations/experimental.windows.kubernetes.io~1isolation-type"
        );
        let fd = fixed(&dep, &cfg(), "WIN402");
        assert_eq!(
            fd["spec"]["template"]["spec"]["runtimeClassName"],
            "runhcs-wcow-hypervisor"
        );
    }

    #[test]
    fn win410_udp_before_1_14() {
        let pod = set(
            winok(),
            "/spec/containers/0/ports",
            json!([{"containerPort":80,"protocol":"TCP"},{"containerPort":53,"protocol":"UDP"}]),
        );
        assert_eq!(
            hits(&pod, &legacy(), "WIN410"),
            hit(Severity::Warning, "/spec/containers/0/ports/1/protocol")
        );
        assert!(hits(&pod, &at(14), "WIN410").is_empty());
    }

    #[test]
    fn win411_grace_with_docker() {
        let pod = set(winok(), "/spec/terminationGracePeriodSeconds", json!(120));
        let mut docker = cfg();
        docker.target.runtime = Runtime::Docker;
        assert_eq!(
            hits(&pod, &docker, "WIN411"),
            hit(Severity::Info, "/spec/terminationGracePeriodSeconds")
        );
        assert!(hits(&pod, &cfg(), "WIN411").is_empty());
        // The API server's default is not the user's choice.
        let dflt = set(winok(), "/spec/terminationGracePeriodSeconds", json!(30));
        assert!(hits(&dflt, &docker, "WIN411").is_empty());
    }
}
