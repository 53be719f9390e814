//! WIN2xx: HostProcess containers and host networking (shared/rules.md §2.3). The API checks
//! follow kubernetes/kubernetes `validateWindowsHostProcessPod`; the rest follows the HostProcess
//! task page (K-HPC), Pod Security (K-PSS) and KEP-3503 (Windows hostNetwork).

use serde_json::{Value, json};

use super::Rule;
use crate::model::Eval;
use crate::model::Runtime;
use crate::model::api_fields::{self, ApiField, Fate, Place};
use crate::model::labels::PSA_ENFORCE_LABEL;
use crate::model::meta::{Fact, Mutation, RuleOs};
use crate::model::paths::host_pipe_path;
use crate::model::pod::{self, Effective};
use crate::model::workload::Lookup;
use crate::model::workload::PodSite;
use crate::model::{Finding, Fix, FixSafety, RuleMeta, Severity, ops};

pub fn rules() -> Vec<Rule> {
    vec![
        Rule {
            meta: &WIN201,
            check: hostprocess_requires_hostnetwork,
        },
        Rule {
            meta: &WIN202,
            check: hostprocess_mixed,
        },
        Rule {
            meta: &WIN203,
            check: hostprocess_unavailable,
        },
        Rule {
            meta: &WIN204,
            check: hostprocess_runasnonroot,
        },
        Rule {
            meta: &WIN205,
            check: hostprocess_user,
        },
        Rule {
            meta: &WIN206,
            check: hostprocess_pipe_or_socket_mount,
        },
        Rule {
            meta: &WIN207,
            check: hostprocess_needs_privileged_pss,
        },
        Rule {
            meta: &WIN208,
            check: hostnetwork_without_hostprocess,
        },
        Rule {
            meta: &WIN209,
            check: dns_clusterfirstwithhostnet,
        },
    ]
}

/// A HostProcess pod on a target whose API server keeps the field (see
/// [`pod::host_process_available`]; elsewhere WIN203 reports the request instead).
fn host_process_pod(site: &PodSite, eval: &Eval) -> bool {
    pod::host_process_available(eval.target) && pod::is_host_process_pod(site)
}

fn host_network(site: &PodSite) -> bool {
    site.get("/hostNetwork").and_then(Value::as_bool) == Some(true)
}

/// Push `f` unless a finding at the same pointer is already there (one finding per field).
fn push_once(out: &mut Vec<Finding>, f: Finding) {
    if !out.iter().any(|x| x.pointer == f.pointer) {
        out.push(f);
    }
}

pub static WIN201: RuleMeta = RuleMeta {
    id: "WIN201",
    name: "hostprocess-requires-hostnetwork",
    severity: Severity::Error,
    summary: "HostProcess pod without spec.hostNetwork: true",
    docs: r#"## What it does
Finds pods with a HostProcess container (a container's
`securityContext.windowsOptions.hostProcess: true`, or inherited from
`spec.securityContext.windowsOptions.hostProcess: true`) whose `spec.hostNetwork` is not `true`.

## Why is this bad?
The API server rejects the pod: "hostNetwork must be true if pod contains any hostProcess
containers". HostProcess containers always run in the host's network namespace.

## Example
```yaml
spec:
  securityContext:
    windowsOptions: {hostProcess: true, runAsUserName: 'NT AUTHORITY\SYSTEM'}
  containers:
  - name: agent
    image: mcr.microsoft.com/windows/nanoserver:ltsc2022
```

## Fix
Safe: set `spec.hostNetwork: true` — it only states what a HostProcess pod gets anyway.
"#,
    fix: Some(FixSafety::Safe),
    source: "VAL, K-HPC",
    applies: "K>=1.22 (where the HostProcess field is kept)",
    os: RuleOs::Windows,
    context: &[],
    mutation: Mutation::named("hostNetwork"),
};

fn hostprocess_requires_hostnetwork(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    if !host_process_pod(site, eval) || host_network(site) {
        return Vec::new();
    }
    let pointer = if site.get("/hostNetwork").is_some() {
        site.ptr("/hostNetwork")
    } else {
        site.spec_ptr.clone()
    };
    let mut f = Finding::new(
        &WIN201,
        pointer,
        format!(
            "a pod with HostProcess containers must set hostNetwork: true: the API server rejects the pod ({}); set spec.hostNetwork: true, HostProcess containers always use the host network",
            api_fields::invalid(
                &pod::dotted(&site.ptr("/hostNetwork")),
                &json!(false),
                "hostNetwork must be true if pod contains any hostProcess containers"
            )
        ),
    );
    if eval.fix_possible(site) {
        f = f.with_fix(Fix {
            safety: FixSafety::Safe,
            description: "set spec.hostNetwork=true".into(),
            ops: vec![ops::add(&site.ptr("/hostNetwork"), json!(true))],
        });
    }
    vec![f]
}

pub static WIN202: RuleMeta = RuleMeta {
    id: "WIN202",
    name: "hostprocess-mixed",
    severity: Severity::Error,
    summary: "Pod mixes HostProcess and non-HostProcess containers, or pod and container hostProcess values differ",
    docs: r#"## What it does
Checks, as `validateWindowsHostProcessPod` does, that a container's `windowsOptions.hostProcess`
equals the pod-level value when both are set, and that when any container (init, regular or
ephemeral) is a HostProcess container, all of them are.

## Why is this bad?
The API server rejects the pod: "pod hostProcess value must be identical if both are specified" /
"If pod contains any hostProcess containers then all containers must be HostProcess containers".
A HostProcess container runs on the host, outside any container sandbox, so it cannot share a
pod with isolated containers.

## Example
```yaml
spec:
  hostNetwork: true
  securityContext:
    windowsOptions: {hostProcess: true, runAsUserName: 'NT AUTHORITY\SYSTEM'}
  containers:
  - name: agent
    image: mcr.microsoft.com/windows/nanoserver:ltsc2022
  - name: sidecar
    image: mcr.microsoft.com/windows/nanoserver:ltsc2022
    securityContext:
      windowsOptions: {hostProcess: false}
```

## Fix
Make every container a HostProcess container (set `hostProcess` once, at pod level) or none; move
isolated containers to their own pod.
"#,
    fix: None,
    source: "VAL",
    applies: "K>=1.22 (where the HostProcess field is kept)",
    os: RuleOs::Windows,
    context: &[],
    mutation: Mutation::DEFAULT,
};

fn hostprocess_mixed(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    if !pod::host_process_available(eval.target) {
        return Vec::new();
    }
    let pod_hp = site
        .get("/securityContext/windowsOptions/hostProcess")
        .and_then(Value::as_bool);
    let any_hp = pod::is_host_process_pod(site);
    let mut out = Vec::new();
    for c in site.containers() {
        let own_rel = format!("{}/securityContext/windowsOptions/hostProcess", c.rel());
        let own = c
            .value
            .lookup("/securityContext/windowsOptions/hostProcess")
            .and_then(Value::as_bool);
        if let (Some(p), Some(o)) = (pod_hp, own)
            && p != o
        {
            out.push(Finding::new(
                &WIN202,
                site.ptr(&own_rel),
                format!(
                    "{} sets windowsOptions.hostProcess: {o}, but the pod sets {p}: the API server rejects the pod ({}). Remove the container-level value: all containers of a pod must have the same effective HostProcess value",
                    c.label(),
                    api_fields::invalid(
                        &pod::dotted(&site.ptr(&own_rel)),
                        &json!(o),
                        &format!("pod hostProcess value must be identical if both are specified, was {p}")
                    )
                ),
            ));
            continue;
        }
        if any_hp && !pod::is_host_process(site, &c) {
            let pointer = if own.is_some() {
                site.ptr(&own_rel)
            } else {
                site.ptr(&c.rel())
            };
            out.push(Finding::new(
                &WIN202,
                pointer,
                format!(
                    "{} is not a HostProcess container, but other containers of the pod are: the API server rejects the pod ({}). Make it a HostProcess container or move it to another pod",
                    c.label(),
                    api_fields::invalid(
                        &pod::dotted(&site.spec_ptr),
                        &json!(""),
                        "If pod contains any hostProcess containers then all containers must be HostProcess containers"
                    )
                ),
            ));
        }
    }
    out
}

pub static WIN203: RuleMeta = RuleMeta {
    id: "WIN203",
    name: "hostprocess-unavailable",
    severity: Severity::Error,
    summary: "HostProcess requested where the target cannot run it (K<1.22, the gate off in 1.22-1.25, Docker runtime)",
    docs: r#"## What it does
Finds `windowsOptions.hostProcess: true` when the target cannot honour it:

* Kubernetes < 1.22 (**warning**): the field does not exist. `kubectl` refuses the manifest
  (unknown field); other clients have the field dropped and the pod starts as an ordinary isolated
  container, without host access;
* Kubernetes 1.22–1.25 with the `WindowsHostProcessContainers` feature gate off (alpha and off by
  default in 1.22; beta and on from 1.23, GA in 1.26) (**error**): the API server does not drop the
  field, it rejects the pod (HostProcess was the exception to dropping disabled fields);
* runtime Docker (dockershim, **error**): HostProcess containers need containerd 1.6 or later.

A cluster whose API server runs with `--allow-privileged=false` also rejects them ("spec: Forbidden:
hostProcess containers are disallowed by cluster policy", measured on 1.32); winlint cannot see that
flag.

## Why is this bad?
The workload silently runs without host access, or is never created.

## Example
```yaml
# target: kubernetes 1.21
spec:
  securityContext:
    windowsOptions: {hostProcess: true}
```

## Fix
Upgrade to Kubernetes ≥ 1.23 (HostProcess beta, on by default; GA in 1.26) with containerd ≥ 1.6,
or enable the gate on 1.22 (API server and kubelets).
"#,
    fix: None,
    source: "K-HPC, VAL, kubernetes PR #99576, issue-9 research §1.4",
    applies: "K<1.22 (warning); 1.22-1.25 with the gate off, or runtime docker (error)",
    os: RuleOs::Windows,
    context: &[],
    mutation: Mutation::DEFAULT,
};

fn hostprocess_unavailable(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    let requests = pod::host_process_requests(site);
    if requests.is_empty() {
        return Vec::new();
    }
    let t = eval.target;
    let k = t.kubernetes;
    let (severity, cause) = match ApiField::get(Place::WindowsOptions, "hostProcess").fate(t) {
        Fate::Unknown => (
            Severity::Warning,
            None, // the message depends on the field's path
        ),
        Fate::GateRejects { gate } => (
            Severity::Error,
            Some(format!(
                "the Kubernetes {k} API server rejects the pod: HostProcess containers need the feature gate {gate}, and the {} (with it off, validation fails instead of dropping the field); enable it on the API server and the kubelets",
                api_fields::gate_off_text(t, gate)
            )),
        ),
        _ if t.runtime == Runtime::Docker => (
            Severity::Error,
            Some("the Docker runtime (dockershim) cannot run HostProcess containers: they need containerd 1.6 or later".to_string()),
        ),
        _ => return Vec::new(),
    };
    requests
        .into_iter()
        .map(|p| {
            let path = pod::dotted(&p);
            let msg = match &cause {
                Some(cause) => format!("{path}: true cannot be honoured by the target: {cause}"),
                None => format!(
                    "{path} does not exist in Kubernetes {k} (added in 1.22): {}; the pod would run as an ordinary isolated container, without host access",
                    api_fields::unknown_field_text(t, &path)
                ),
            };
            Finding::new(&WIN203, p, msg).severity(severity)
        })
        .collect()
}

pub static WIN204: RuleMeta = RuleMeta {
    id: "WIN204",
    name: "hostprocess-runasnonroot",
    severity: Severity::Warning,
    summary: "HostProcess container with effective runAsNonRoot: true (admitted, but it restricts nothing)",
    docs: r#"## What it does
Finds HostProcess containers whose effective `runAsNonRoot` (the container's value, else the pod's)
is `true`.

## Why is this bad?
The API server admits the pod (measured on 1.32: this is not an API rule), but the setting does not
do what it says. A HostProcess container runs as the host account named by `runAsUserName`
(`NT AUTHORITY\SYSTEM` is the most privileged account of the node); the kubelet's non-root check
on Windows only refuses the user name `ContainerAdministrator`. The HostProcess documentation
allows `runAsNonRoot` only undefined or `false`: a reviewer reading `runAsNonRoot: true` is misled.

## Example
```yaml
spec:
  hostNetwork: true
  securityContext:
    runAsNonRoot: true
    windowsOptions: {hostProcess: true, runAsUserName: 'NT AUTHORITY\Local service'}
```

## Fix
Remove `runAsNonRoot` (or set it to `false`) for HostProcess pods.
"#,
    fix: None,
    source: "K-HPC, KL-SC, issue-9 research §1.3 (admitted by kube-apiserver 1.32)",
    applies: "K>=1.22 (where the HostProcess field is kept)",
    os: RuleOs::Windows,
    context: &[],
    mutation: Mutation::DEFAULT,
};

fn hostprocess_runasnonroot(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    if !host_process_pod(site, eval) {
        return Vec::new();
    }
    let mut out = Vec::new();
    for c in site.containers().filter(|c| pod::is_host_process(site, c)) {
        if let Some(Effective {
            value: true,
            pointer,
            inherited,
        }) = pod::effective_run_as_non_root(site, &c)
        {
            let who = if inherited {
                "the pod".to_string()
            } else {
                c.label()
            };
            push_once(
                &mut out,
                Finding::new(
                    &WIN204,
                    pointer.clone(),
                    format!(
                        "{} sets runAsNonRoot: true for HostProcess containers: the API server admits it, but it restricts nothing (a HostProcess container runs as the host account in runAsUserName; the kubelet only refuses ContainerAdministrator), and the HostProcess documentation leaves it undefined or false; remove {}",
                        who,
                        pod::dotted(&pointer)
                    ),
                ),
            );
        }
    }
    out
}

/// The accounts the HostProcess documentation lists (compared case-insensitively; Windows
/// spells the service accounts `LOCAL SERVICE` and `NETWORK SERVICE`, the documentation
/// `Local service` and `NetworkService`, so both spellings are accepted).
pub const HOSTPROCESS_USERS: &[&str] = &[
    "NT AUTHORITY\\SYSTEM",
    "NT AUTHORITY\\Local service",
    "NT AUTHORITY\\LocalService",
    "NT AUTHORITY\\NetworkService",
    "NT AUTHORITY\\Network service",
];

pub static WIN205: RuleMeta = RuleMeta {
    id: "WIN205",
    name: "hostprocess-user",
    severity: Severity::Warning,
    summary: "HostProcess container without runAsUserName (warning), or running as an account other than SYSTEM / Local service / NetworkService (info)",
    docs: r#"## What it does
For every HostProcess container, checks the effective `windowsOptions.runAsUserName` (container
value, else pod value):

* unset: **warning**, choose the account explicitly;
* not one of `NT AUTHORITY\SYSTEM`, `NT AUTHORITY\Local service` or `NT AUTHORITY\NetworkService`
  (case-insensitive): **info**. Any other name is valid when it names a local users group of the
  node: the container then runs as a temporary user in that group (KEP-1981); it fails at container
  start only if no such group exists on the node.

## Why is this bad?
HostProcess containers run directly on the host as a host account; the documented default choices
are the three service accounts above, and a local group keeps the container's rights to what the
group may do.

## Example
```yaml
spec:
  hostNetwork: true
  securityContext:
    windowsOptions: {hostProcess: true}
```

## Fix
Set `runAsUserName` to the least-privileged account that works: a local users group made for the
workload, or `NT AUTHORITY\Local service`; `NT AUTHORITY\SYSTEM` only when needed.
"#,
    fix: None,
    source: "K-HPC, KEP-1981",
    applies: "K>=1.22 (where the HostProcess field is kept)",
    os: RuleOs::Windows,
    context: &[],
    mutation: Mutation::DEFAULT,
};

fn hostprocess_user(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    if !host_process_pod(site, eval) {
        return Vec::new();
    }
    let mut out = Vec::new();
    for c in site.containers().filter(|c| pod::is_host_process(site, c)) {
        match pod::effective_run_as_user_name(site, &c) {
            None => {
                let Some(hp) = pod::effective_host_process(site, &c) else {
                    continue;
                };
                let who = if hp.inherited {
                    "HostProcess pod".to_string()
                } else {
                    format!("HostProcess {}", c.label())
                };
                push_once(
                    &mut out,
                    Finding::new(
                        &WIN205,
                        hp.pointer,
                        format!(
                            "{who} sets no windowsOptions.runAsUserName; set it to NT AUTHORITY\\SYSTEM, NT AUTHORITY\\Local service or NT AUTHORITY\\NetworkService"
                        ),
                    ),
                );
            }
            Some(e)
                if !HOSTPROCESS_USERS
                    .iter()
                    .any(|u| u.eq_ignore_ascii_case(e.value)) =>
            {
                push_once(
                    &mut out,
                    Finding::new(
                        &WIN205,
                        e.pointer.clone(),
                        format!(
                            "HostProcess containers run as a host account: {:?} is none of NT AUTHORITY\\SYSTEM, NT AUTHORITY\\Local service and NT AUTHORITY\\NetworkService, so it must name a local users group of the node (the container then runs as a temporary member of it); make sure the group exists on every Windows node",
                            e.value
                        ),
                    )
                    .severity(Severity::Info),
                );
            }
            Some(_) => {}
        }
    }
    out
}

fn is_unix_socket(path: &str, host_path_type: Option<&str>) -> bool {
    host_path_type == Some("Socket") || path.to_ascii_lowercase().ends_with(".sock")
}

pub static WIN206: RuleMeta = RuleMeta {
    id: "WIN206",
    name: "hostprocess-pipe-or-socket-mount",
    severity: Severity::Warning,
    summary: "HostProcess pod mounts a named pipe or Unix domain socket",
    docs: r#"## What it does
In HostProcess pods, finds `hostPath` volumes that are named pipes (`\\.\pipe\…`) or Unix domain
sockets (`type: Socket`, `*.sock`), and volume mounts at a named-pipe path.

## Why is this bad?
"Named pipe mounts and Unix domain sockets are not supported" for HostProcess containers; they run
on the host and reach pipes and sockets directly by their host path.

## Example
```yaml
spec:
  hostNetwork: true
  securityContext:
    windowsOptions: {hostProcess: true, runAsUserName: 'NT AUTHORITY\SYSTEM'}
  containers:
  - name: agent
    image: mcr.microsoft.com/windows/nanoserver:ltsc2022
    volumeMounts:
    - {name: containerd, mountPath: '\\.\pipe\containerd-containerd'}
  volumes:
  - name: containerd
    hostPath: {path: '\\.\pipe\containerd-containerd'}
```

## Fix
Drop the volume and its mounts; open `\\.\pipe\containerd-containerd` (or the socket) by its host
path from the container.
"#,
    fix: None,
    source: "K-HPC",
    applies: "K>=1.22 (where the HostProcess field is kept)",
    os: RuleOs::Windows,
    context: &[],
    mutation: Mutation::DEFAULT,
};

fn hostprocess_pipe_or_socket_mount(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    if !host_process_pod(site, eval) {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut reported_volumes: Vec<&str> = Vec::new();
    for (i, v) in site.volumes() {
        let Some(path) = v.lookup("/hostPath/path").and_then(Value::as_str) else {
            continue;
        };
        let ty = v.lookup("/hostPath/type").and_then(Value::as_str);
        let what = if host_pipe_path(path) {
            "named pipe"
        } else if is_unix_socket(path, ty) {
            "Unix domain socket"
        } else {
            continue;
        };
        let name = v.get("name").and_then(Value::as_str).unwrap_or("");
        reported_volumes.push(name);
        out.push(Finding::new(
            &WIN206,
            site.ptr(&format!("/volumes/{i}/hostPath/path")),
            format!(
                "volume {name:?} mounts the {what} {path} into a HostProcess pod; HostProcess containers do not support {what} mounts. Drop the volume and its mounts and use {path} directly by its host path"
            ),
        ));
    }
    for c in site.containers() {
        let mounts = c.value.get("volumeMounts").and_then(Value::as_array);
        for (j, m) in mounts.into_iter().flatten().enumerate() {
            let Some(mp) = m.get("mountPath").and_then(Value::as_str) else {
                continue;
            };
            let vol = m.get("name").and_then(Value::as_str).unwrap_or("");
            if host_pipe_path(mp) && !reported_volumes.contains(&vol) {
                out.push(Finding::new(
                    &WIN206,
                    site.ptr(&format!("{}/volumeMounts/{j}/mountPath", c.rel())),
                    format!(
                        "{} mounts volume {vol:?} at the named pipe path {mp}; HostProcess containers do not support named pipe mounts. Drop the mount and use the pipe by its host path",
                        c.label()
                    ),
                ));
            }
        }
    }
    out
}

pub static WIN207: RuleMeta = RuleMeta {
    id: "WIN207",
    name: "hostprocess-needs-privileged-pss",
    severity: Severity::Warning,
    summary: "HostProcess pod in a namespace that enforces Pod Security baseline or restricted",
    docs: r#"## What it does
Only when the pod's namespace is known (a Namespace object in the same input, or the cluster for the
webhook): reports HostProcess pods in namespaces labelled
`pod-security.kubernetes.io/enforce: baseline` or `restricted`.

## Why is this bad?
The Pod Security `baseline` profile (and so `restricted`) disallows HostProcess containers: Pod
Security admission rejects the pod (for workloads, every pod the controller creates).

## Example
```yaml
apiVersion: v1
kind: Namespace
metadata:
  name: agents
  labels: {pod-security.kubernetes.io/enforce: baseline}
```

## Fix
Run HostProcess pods in a namespace labelled `pod-security.kubernetes.io/enforce: privileged`
(a dedicated system namespace), or exempt them in the PodSecurity admission configuration.
"#,
    fix: None,
    source: "K-PSS, K-HPC",
    applies: "K>=1.25",
    os: RuleOs::Windows,
    context: &[Fact::NamespaceLabels],
    mutation: Mutation::DEFAULT,
};

fn hostprocess_needs_privileged_pss(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    if !eval.target.kubernetes.at_least(1, 25) || !host_process_pod(site, eval) {
        return Vec::new();
    }
    let Some(ns) = site.namespace else {
        return Vec::new();
    };
    let Some(level) = eval
        .context
        .namespaces
        .get(ns)
        .and_then(|l| l.get(PSA_ENFORCE_LABEL))
        .filter(|l| matches!(l.as_str(), "baseline" | "restricted"))
    else {
        return Vec::new();
    };
    pod::host_process_requests(site)
        .into_iter()
        .map(|p| {
            Finding::new(
                &WIN207,
                p,
                format!(
                    "namespace {ns:?} enforces Pod Security {level:?}, which disallows HostProcess containers: the pod is rejected. Run it in a namespace labelled {PSA_ENFORCE_LABEL}: privileged, or exempt it"
                ),
            )
        })
        .collect()
}

pub static WIN208: RuleMeta = RuleMeta {
    id: "WIN208",
    name: "hostnetwork-without-hostprocess",
    severity: Severity::Warning,
    summary: "spec.hostNetwork: true on a Windows pod that is not a HostProcess pod",
    docs: r#"## What it does
Finds Windows pods with `spec.hostNetwork: true` and no HostProcess container.

## Why is this bad?
Host networking for ordinary Windows containers is not supported: only HostProcess containers run
in the host's network. Kubernetes 1.26–1.32 had an alpha feature for it (KEP-3503, feature gate
`WindowsHostNetwork`; the 1.26–1.32 binaries have it on by default although it is alpha, and it
needs containerd 1.7+ on the nodes); it was withdrawn in 1.33. The API server never rejects the
field: this is about what the nodes do with it. Set `featureGates: {WindowsHostNetwork: true}` in
the target when a 1.26–1.32 cluster relies on the alpha feature on purpose.

## Example
```yaml
spec:
  os: {name: windows}
  hostNetwork: true
  containers:
  - name: web
    image: mcr.microsoft.com/windows/servercore:ltsc2022
```

## Fix
Remove `hostNetwork` and expose the pod through a Service (or `hostPort`), or make it a HostProcess
pod if it must run on the host.
"#,
    fix: None,
    source: "K-NET, KEP3503",
    applies: "all (K 1.26-1.32: unless the target sets the WindowsHostNetwork gate on)",
    os: RuleOs::Windows,
    context: &[],
    mutation: Mutation::DEFAULT,
};

fn hostnetwork_without_hostprocess(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    if !host_network(site) || host_process_pod(site, eval) {
        return Vec::new();
    }
    // A HostProcess request the API server rejects (WIN203): the pod is never created.
    if matches!(
        ApiField::get(Place::WindowsOptions, "hostProcess").fate(eval.target),
        Fate::GateRejects { .. }
    ) && pod::is_host_process_pod(site)
    {
        return Vec::new();
    }
    let k = eval.target.kubernetes;
    let why = if k.at_least(1, 33) {
        format!(
            "host networking for Windows pods (alpha in 1.26-1.32, KEP-3503) was withdrawn in Kubernetes 1.33, so on {k} only HostProcess pods run in the host network"
        )
    } else if k.at_least(1, 26) {
        // The configuration says the cluster uses the alpha feature on purpose.
        if eval.target.gate_setting("WindowsHostNetwork") == Some(true) {
            return Vec::new();
        }
        if eval.target.gate("WindowsHostNetwork") {
            format!(
                "host networking for Windows pods is an alpha feature of Kubernetes {k} (feature gate WindowsHostNetwork, on by default in the 1.26-1.32 binaries) that works only with containerd 1.7+ on the nodes (with an older runtime the pod gets its own network) and was withdrawn in 1.33"
            )
        } else {
            format!(
                "host networking for Windows pods is alpha in Kubernetes {k} and the feature gate WindowsHostNetwork is off, so the pod gets its own network (the feature was withdrawn in 1.33)"
            )
        }
    } else {
        format!(
            "Kubernetes {k} does not support host networking for Windows pods; only HostProcess pods run in the host network"
        )
    };
    vec![Finding::new(
        &WIN208,
        site.ptr("/hostNetwork"),
        format!(
            "spec.hostNetwork: true on a Windows pod without HostProcess containers: {why}. Remove it and use a Service or hostPort, or make the pod a HostProcess pod"
        ),
    )]
}

pub static WIN209: RuleMeta = RuleMeta {
    id: "WIN209",
    name: "dns-clusterfirstwithhostnet",
    severity: Severity::Warning,
    summary: "dnsPolicy: ClusterFirstWithHostNet on a Windows pod that is not a HostProcess pod",
    docs: r#"## What it does
Finds `spec.dnsPolicy: ClusterFirstWithHostNet` on Windows pods without HostProcess containers.

## Why is this bad?
Windows does not support the `ClusterFirstWithHostNet` DNS policy for ordinary pods (they do not use
the host network); only HostProcess pods run in the host network, where the policy makes sense.

## Example
```yaml
spec:
  os: {name: windows}
  dnsPolicy: ClusterFirstWithHostNet
```

## Fix
Use `dnsPolicy: ClusterFirst` (the default) or `Default`.
"#,
    fix: None,
    source: "K-INTRO",
    applies: "all",
    os: RuleOs::Windows,
    context: &[],
    mutation: Mutation::DEFAULT,
};

fn dns_clusterfirstwithhostnet(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    if site.str("/dnsPolicy") != Some("ClusterFirstWithHostNet") || host_process_pod(site, eval) {
        return Vec::new();
    }
    vec![Finding::new(
        &WIN209,
        site.ptr("/dnsPolicy"),
        "dnsPolicy ClusterFirstWithHostNet is not supported for Windows pods that are not HostProcess pods; use ClusterFirst (the default)",
    )]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use crate::engine::lint_object;
    use crate::model::Context;
    use crate::model::Operation;
    use crate::rules::testutil::{at, cfg, ids, ids_in, only, set, unset, winok};

    /// The WIN2xx rules (other modules' rules are asserted by their tests).
    const OWN: &[&str] = &["WIN2"];

    /// T14: HostProcess without hostNetwork.
    fn t14() -> Value {
        json!({"apiVersion":"v1","kind":"Pod","metadata":{"name":"hpc"},"spec":{
            "os":{"name":"windows"},
            "nodeSelector":{"kubernetes.io/os":"windows"},
            "tolerations":[{"key":"os","operator":"Equal","value":"windows","effect":"NoSchedule"}],
            "securityContext":{"windowsOptions":{"hostProcess":true,"runAsUserName":"NT AUTHORITY\\SYSTEM"}},
            "containers":[{"name":"a","image":"mcr.microsoft.com/windows/nanoserver:ltsc2022"}]}})
    }

    fn hpc() -> Value {
        set(t14(), "/spec/hostNetwork", json!(true))
    }

    #[test]
    fn t14_hostprocess_requires_hostnetwork() {
        assert_eq!(ids(&t14(), &cfg()), ["WIN201"]);
        let f = &only(&t14(), &cfg(), "WIN201")[0];
        assert_eq!(f.pointer, "/spec");
        assert_eq!(f.severity, Severity::Error);
        assert!(
            f.message
                .contains("hostNetwork must be true if pod contains any hostProcess containers")
        );
        let fix = f.fix.as_ref().unwrap();
        assert_eq!(fix.safety, FixSafety::Safe);
        let mut fixed = t14();
        json_patch::patch(&mut fixed, &fix.ops).unwrap();
        assert_eq!(fixed, hpc());
        assert!(ids(&fixed, &cfg()).is_empty());
        // hostNetwork: false is replaced.
        let pod = set(t14(), "/spec/hostNetwork", json!(false));
        let f = &only(&pod, &cfg(), "WIN201")[0];
        assert_eq!(f.pointer, "/spec/hostNetwork");
        let mut fixed = pod.clone();
        json_patch::patch(&mut fixed, &f.fix.as_ref().unwrap().ops).unwrap();
        assert_eq!(fixed, hpc());
        // Container-level HostProcess counts too.
        let pod = set(
            unset(t14(), "/spec/securityContext"),
            "/spec/containers/0/securityContext/windowsOptions",
            json!({"hostProcess":true,"runAsUserName":"NT AUTHORITY\\SYSTEM"}),
        );
        assert_eq!(ids(&pod, &cfg()), ["WIN201"]);
    }

    #[test]
    fn win201_no_fix_on_pod_update() {
        let r = lint_object(&t14(), &cfg(), &Context::default(), Operation::Update);
        let f = r.findings.iter().find(|f| f.rule.id == "WIN201").unwrap();
        assert!(f.fix.is_none());
    }

    #[test]
    fn t15_mixed_hostprocess() {
        let pod = set(
            hpc(),
            "/spec/containers/1",
            json!({"name":"b","image":"mcr.microsoft.com/windows/nanoserver:ltsc2022",
                "securityContext":{"windowsOptions":{"hostProcess":false}}}),
        );
        assert_eq!(ids(&pod, &cfg()), ["WIN202"]);
        let fs = only(&pod, &cfg(), "WIN202");
        assert_eq!(fs.len(), 1, "one finding per field");
        assert_eq!(
            fs[0].pointer,
            "/spec/containers/1/securityContext/windowsOptions/hostProcess"
        );
        assert!(
            fs[0].message.contains(
                "pod hostProcess value must be identical if both are specified, was true"
            )
        );
        assert_eq!(fs[0].severity, Severity::Error);
    }

    #[test]
    fn win202_some_but_not_all() {
        // Container-level HostProcess in one container, nothing in the other (an init container).
        let pod = set(
            unset(hpc(), "/spec/securityContext"),
            "/spec/containers/0/securityContext/windowsOptions",
            json!({"hostProcess":true,"runAsUserName":"NT AUTHORITY\\SYSTEM"}),
        );
        let pod = set(
            pod,
            "/spec/initContainers",
            json!([{"name":"init","image":"mcr.microsoft.com/windows/nanoserver:ltsc2022"}]),
        );
        let fs = only(&pod, &cfg(), "WIN202");
        assert_eq!(fs.len(), 1);
        assert_eq!(fs[0].pointer, "/spec/initContainers/0");
        assert!(
            fs[0]
                .message
                .contains("all containers must be HostProcess containers")
        );
        // Pod-level false, container true: the container differs, and the others are not HP.
        let pod = set(
            set(
                pod,
                "/spec/securityContext/windowsOptions/hostProcess",
                json!(false),
            ),
            "/spec/initContainers/0/securityContext/windowsOptions/hostProcess",
            json!(false),
        );
        let ptrs: Vec<String> = only(&pod, &cfg(), "WIN202")
            .into_iter()
            .map(|f| f.pointer)
            .collect();
        assert_eq!(
            ptrs,
            [
                "/spec/initContainers/0/securityContext/windowsOptions/hostProcess",
                "/spec/containers/0/securityContext/windowsOptions/hostProcess"
            ]
        );
    }

    #[test]
    fn win203_per_target() {
        let pod = hpc();
        let f = &only(&pod, &at(21), "WIN203")[0];
        assert_eq!(
            f.pointer,
            "/spec/securityContext/windowsOptions/hostProcess"
        );
        assert!(f.message.contains("added in 1.22"), "{}", f.message);
        // An unknown field: kubectl refuses it, other clients have it dropped (warning).
        assert_eq!(f.severity, Severity::Warning);
        assert!(f.message.contains("--validate=false"), "{}", f.message);
        // The other HostProcess rules do not apply where the field is dropped.
        assert_eq!(ids_in(&t14(), &at(21), OWN), ["WIN203"]);
        // 1.22 with the alpha gate off: the API server rejects the pod (it does not drop it).
        let f = &only(&pod, &at(22), "WIN203")[0];
        assert!(
            f.message.contains(
                "API server rejects the pod: HostProcess containers need the feature gate WindowsHostProcessContainers, and the feature gate WindowsHostProcessContainers is off by default before 1.23"
            ),
            "{}",
            f.message
        );
        assert_eq!(f.severity, Severity::Error);
        let mut gated = at(22);
        gated
            .target
            .feature_gates
            .insert("WindowsHostProcessContainers".into(), true);
        assert!(only(&pod, &gated, "WIN203").is_empty());
        assert_eq!(ids_in(&t14(), &gated, OWN), ["WIN201"]);
        assert!(only(&pod, &at(23), "WIN203").is_empty());
        let mut docker = at(23);
        docker.target.runtime = Runtime::Docker;
        let f = &only(&pod, &docker, "WIN203")[0];
        assert!(f.message.contains("containerd 1.6"), "{}", f.message);
        assert_eq!(f.severity, Severity::Error);
        assert!(only(&winok(), &docker, "WIN203").is_empty());
    }

    #[test]
    fn win204_run_as_non_root() {
        let pod = set(hpc(), "/spec/securityContext/runAsNonRoot", json!(true));
        assert_eq!(ids(&pod, &cfg()), ["WIN204"]);
        let f = &only(&pod, &cfg(), "WIN204")[0];
        assert_eq!(f.pointer, "/spec/securityContext/runAsNonRoot");
        // Admitted by the API server (measured): a warning that says so, not a rejection.
        assert_eq!(f.severity, Severity::Warning);
        assert!(
            f.message.contains("the API server admits it"),
            "{}",
            f.message
        );
        assert!(!f.message.contains("rejects"), "{}", f.message);
        // Container override to false: fine.
        let ok = set(
            pod.clone(),
            "/spec/containers/0/securityContext/runAsNonRoot",
            json!(false),
        );
        assert!(only(&ok, &cfg(), "WIN204").is_empty());
        // false at pod level: fine.
        let ok = set(hpc(), "/spec/securityContext/runAsNonRoot", json!(false));
        assert!(only(&ok, &cfg(), "WIN204").is_empty());
        // Non-HostProcess pods: not this rule.
        let ok = set(winok(), "/spec/securityContext/runAsNonRoot", json!(true));
        assert!(only(&ok, &cfg(), "WIN204").is_empty());
    }

    #[test]
    fn win205_user() {
        for ok in [
            "NT AUTHORITY\\SYSTEM",
            "nt authority\\system",
            "NT AUTHORITY\\Local service",
            "NT AUTHORITY\\LOCAL SERVICE",
            "NT AUTHORITY\\NetworkService",
            "NT AUTHORITY\\NETWORK SERVICE",
        ] {
            let pod = set(
                hpc(),
                "/spec/securityContext/windowsOptions/runAsUserName",
                json!(ok),
            );
            assert!(only(&pod, &cfg(), "WIN205").is_empty(), "{ok}");
        }
        let pod = set(
            hpc(),
            "/spec/securityContext/windowsOptions/runAsUserName",
            json!("ContainerAdministrator"),
        );
        assert_eq!(ids(&pod, &cfg()), ["WIN205"]);
        let f = &only(&pod, &cfg(), "WIN205")[0];
        assert_eq!(
            f.pointer,
            "/spec/securityContext/windowsOptions/runAsUserName"
        );
        // Another name is valid when it names a local users group (KEP-1981): info.
        assert_eq!(f.severity, Severity::Info);
        assert!(f.message.contains("local users group"), "{}", f.message);
        let pod = unset(hpc(), "/spec/securityContext/windowsOptions/runAsUserName");
        let fs = only(&pod, &cfg(), "WIN205");
        assert_eq!(fs.len(), 1);
        assert_eq!(fs[0].severity, Severity::Warning);
        assert_eq!(
            fs[0].pointer,
            "/spec/securityContext/windowsOptions/hostProcess"
        );
        // A container-level user overrides the pod's.
        let pod = set(
            hpc(),
            "/spec/containers/0/securityContext/windowsOptions/runAsUserName",
            json!("ContainerUser"),
        );
        assert_eq!(
            only(&pod, &cfg(), "WIN205")[0].pointer,
            "/spec/containers/0/securityContext/windowsOptions/runAsUserName"
        );
    }

    #[test]
    fn t16_pipe_mount() {
        let pod = set(
            hpc(),
            "/spec/volumes",
            json!([{"name":"containerd","hostPath":{"path":"\\\\.\\pipe\\containerd-containerd"}}]),
        );
        let pod = set(
            pod,
            "/spec/containers/0/volumeMounts",
            json!([{"name":"containerd","mountPath":"\\\\.\\pipe\\containerd-containerd"}]),
        );
        assert_eq!(ids_in(&pod, &cfg(), OWN), ["WIN206"]);
        let fs = only(&pod, &cfg(), "WIN206");
        assert_eq!(fs.len(), 1);
        assert_eq!(fs[0].pointer, "/spec/volumes/0/hostPath/path");
        assert_eq!(fs[0].severity, Severity::Warning);
        // Unix sockets too.
        let pod = set(
            hpc(),
            "/spec/volumes",
            json!([{"name":"s","hostPath":{"path":"C:\\var\\run\\agent.sock"}},
                   {"name":"t","hostPath":{"path":"C:\\run\\x","type":"Socket"}},
                   {"name":"d","hostPath":{"path":"C:\\data"}}]),
        );
        assert_eq!(only(&pod, &cfg(), "WIN206").len(), 2);
        // T17: the same pipe mount in an ordinary Windows pod is fine (for this rule).
        let pod = set(
            winok(),
            "/spec/volumes",
            json!([{"name":"docker","hostPath":{"path":"\\\\.\\pipe\\docker_engine"}}]),
        );
        assert!(only(&pod, &cfg(), "WIN206").is_empty());
    }

    fn lint_in_ns(obj: &Value, c: &Config, labels: Value) -> Vec<Finding> {
        let mut cx = Context::default();
        cx.add(&json!({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"agents","labels":labels}}));
        lint_object(obj, c, &cx, Operation::Lint).findings
    }

    #[test]
    fn win207_namespace_level() {
        let pod = set(hpc(), "/metadata/namespace", json!("agents"));
        let hits = |labels: Value, c: &Config| -> Vec<Finding> {
            lint_in_ns(&pod, c, labels)
                .into_iter()
                .filter(|f| f.rule.id == "WIN207")
                .collect()
        };
        let fs = hits(
            json!({"pod-security.kubernetes.io/enforce":"baseline"}),
            &cfg(),
        );
        assert_eq!(fs.len(), 1);
        assert_eq!(
            fs[0].pointer,
            "/spec/securityContext/windowsOptions/hostProcess"
        );
        assert_eq!(fs[0].severity, Severity::Warning);
        assert_eq!(
            hits(
                json!({"pod-security.kubernetes.io/enforce":"restricted"}),
                &cfg()
            )
            .len(),
            1
        );
        assert!(
            hits(
                json!({"pod-security.kubernetes.io/enforce":"privileged"}),
                &cfg()
            )
            .is_empty()
        );
        assert!(
            hits(
                json!({"pod-security.kubernetes.io/warn":"baseline"}),
                &cfg()
            )
            .is_empty()
        );
        assert!(
            hits(
                json!({"pod-security.kubernetes.io/enforce":"baseline"}),
                &at(24)
            )
            .is_empty()
        );
        // Unknown namespace: never on a guess.
        assert!(only(&pod, &cfg(), "WIN207").is_empty());
    }

    #[test]
    fn t57_hostnetwork_without_hostprocess() {
        let pod = set(winok(), "/spec/hostNetwork", json!(true));
        assert_eq!(ids(&pod, &cfg()), ["WIN208"]);
        let f = &only(&pod, &cfg(), "WIN208")[0];
        assert_eq!(f.pointer, "/spec/hostNetwork");
        assert_eq!(f.severity, Severity::Warning);
        // The 1.26-1.32 binaries have the alpha gate on by default (measured on 1.32).
        assert!(
            f.message
                .contains("WindowsHostNetwork, on by default in the 1.26-1.32 binaries"),
            "{}",
            f.message
        );
        let mut off = cfg();
        off.target
            .feature_gates
            .insert("WindowsHostNetwork".into(), false);
        assert!(
            only(&pod, &off, "WIN208")[0]
                .message
                .contains("WindowsHostNetwork is off")
        );
        assert!(
            only(&pod, &at(34), "WIN208")[0]
                .message
                .contains("withdrawn in Kubernetes 1.33")
        );
        assert!(
            only(&pod, &at(25), "WIN208")[0]
                .message
                .contains("does not support")
        );
        let mut gated = cfg();
        gated
            .target
            .feature_gates
            .insert("WindowsHostNetwork".into(), true);
        assert!(only(&pod, &gated, "WIN208").is_empty());
        // hostNetwork: false, or a HostProcess pod: nothing.
        assert!(
            only(
                &set(winok(), "/spec/hostNetwork", json!(false)),
                &cfg(),
                "WIN208"
            )
            .is_empty()
        );
        assert!(only(&hpc(), &cfg(), "WIN208").is_empty());
    }

    #[test]
    fn t48_dns_cluster_first_with_host_net() {
        let pod = set(winok(), "/spec/dnsPolicy", json!("ClusterFirstWithHostNet"));
        assert_eq!(ids(&pod, &cfg()), ["WIN209"]);
        let f = &only(&pod, &cfg(), "WIN209")[0];
        assert_eq!(f.pointer, "/spec/dnsPolicy");
        assert_eq!(f.severity, Severity::Warning);
        // HostProcess pods use the host network: fine.
        let hp = set(hpc(), "/spec/dnsPolicy", json!("ClusterFirstWithHostNet"));
        assert!(ids(&hp, &cfg()).is_empty());
        assert!(
            only(
                &set(winok(), "/spec/dnsPolicy", json!("ClusterFirst")),
                &cfg(),
                "WIN209"
            )
            .is_empty()
        );
    }

    #[test]
    fn no_hostprocess_rule_on_linux_pods() {
        let linux = json!({"kind":"Pod","metadata":{"name":"l"},"spec":{"os":{"name":"linux"},"hostNetwork":true,
            "dnsPolicy":"ClusterFirstWithHostNet","containers":[{"name":"a","image":"nginx:1.25"}]}});
        assert!(ids_in(&linux, &cfg(), OWN).is_empty());
        let unknown = unset(linux, "/spec/os");
        assert!(ids_in(&unknown, &cfg(), OWN).is_empty());
    }

    #[test]
    fn mv5_hostprocess_pod_has_no_linux_only_fields() {
        // The M4 guard lets the webhook add spec.os to a HostProcess pod without Linux-only fields.
        let pod = unset(hpc(), "/spec/os");
        let s = &crate::model::workload::pod_sites(&pod)[0];
        assert!(pod::linux_only_fields(s, &cfg().target).is_empty());
    }
}
