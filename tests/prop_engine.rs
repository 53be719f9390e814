//! Property tests of the engine and the admission handler (issue 4).
//!
//! A strategy builds realistic-ish objects: a random subset of the PodSpec fields the rule
//! catalogue looks at (os, nodeSelector, tolerations, affinity, pod and container
//! securityContext incl. windowsOptions/hostProcess, host namespaces, volumes of many types,
//! env names with `:`/`=`, ports, resources, images from a list of Windows, Linux and multi-OS
//! references) wrapped in every pod-bearing kind. Properties:
//!
//! 1. the engine never panics and its findings are deterministic;
//! 2. applying the allowed fixes, then re-linting, leaves no finding whose fix is allowed, and
//!    applying again changes nothing; the returned patch applied to the original gives the
//!    fixed object;
//! 3. the spec.os guard: once fixes (or the webhook's patch) set `spec.os.name: windows`, the
//!    pod carries no field `rules::util::linux_only_fields` reports;
//! 4. a pod that is not classified Windows gets only the any-OS rules; a Linux pod gets no
//!    patch from `/mutate`;
//! 5. for arbitrary bytes, and for well-formed reviews carrying arbitrary objects, the admission
//!    handler returns an error or a well-formed AdmissionReview whose patch applies.
//!
//! Bounded for CI: 64 cases per property unless `PROPTEST_CASES` says otherwise, small objects,
//! no persistence files. Regression tests for what the properties found are at the end.

use base64::Engine as _;
use proptest::prelude::*;
use proptest::test_runner::Config as PtConfig;
use serde_json::{Map, Value, json};

use winlint::admission::{Endpoint, Webhook};
use winlint::config::{Config, KubeVersion};
use winlint::engine::fix::{self, FixOptions, Fixer, InPlace};
use winlint::engine::{self, mutation};
use winlint::model::Context;
use winlint::model::classify;
use winlint::model::image;
use winlint::model::meta::RuleOs;
use winlint::model::pod::linux_only_fields;
use winlint::model::workload;
use winlint::model::{Finding, Operation};
use winlint::rules;

fn pt_config() -> PtConfig {
    let mut c = PtConfig {
        failure_persistence: None,
        ..PtConfig::default()
    };
    if std::env::var_os("PROPTEST_CASES").is_none() {
        c.cases = 64;
    }
    c
}

// ---------------------------------------------------------------------------------------------
// Strategies
// ---------------------------------------------------------------------------------------------

const IMAGES: &[&str] = &[
    "mcr.microsoft.com/windows/servercore:ltsc2022",
    "mcr.microsoft.com/windows/servercore:ltsc2019",
    "mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2019",
    "mcr.microsoft.com/windows/servercore/iis",
    "mcr.microsoft.com/windows/nanoserver:1809",
    "mcr.microsoft.com/windows/nanoserver:ltsc2022@sha256:0000000000000000000000000000000000000000000000000000000000000000",
    "mcr.microsoft.com/windows:20H2",
    "mcr.microsoft.com/windows/server:ltsc2025",
    "mcr.microsoft.com/dotnet/framework/aspnet:4.8-windowsservercore-ltsc2022",
    "mcr.microsoft.com/dotnet/framework/aspnet:4.8",
    "mcr.microsoft.com/dotnet/aspnet:8.0-nanoserver-ltsc2022",
    "mcr.microsoft.com/powershell:lts-nanoserver-1809",
    "mcr.microsoft.com/oss/kubernetes/pause:3.9",
    "registry.k8s.io/pause:3.10",
    "microsoft/iis:windowsservercore",
    "python:3.12-windowsservercore-1809",
    "golang:1.22-nanoserver-ltsc2022",
    "nginx:1.25",
    "nginx",
    "busybox:latest",
    "alpine:3.20",
    "docker.io/library/redis:7-alpine",
    "ghcr.io/example/app:v1.2.3",
    "localhost:5000/tool@sha256:1111111111111111111111111111111111111111111111111111111111111111",
    "example.com/team/app:ltsc2019",
    "Mcr.Microsoft.com/Windows/ServerCore:LTSC2019",
    "UPPER/case:tag",
    "",
    ":",
    "a@b",
];

fn image_ref() -> impl Strategy<Value = String> {
    prop_oneof![
        8 => prop::sample::select(IMAGES).prop_map(str::to_string),
        1 => "[a-zA-Z0-9:/@._-]{0,40}",
    ]
}

fn env_name() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => prop::sample::select(&[
            "PATH",
            "HTTP_PROXY",
            "ASPNETCORE_URLS",
            "ConnectionStrings:Default",
            "Logging:LogLevel:Default",
            "a=b",
            "1BAD",
            "with space",
            "ProgramFiles(x86)",
            "",
            "é",
            "=C:",
        ][..])
        .prop_map(str::to_string),
        1 => "[A-Za-z_:.=-][A-Za-z0-9_:.=-]{0,12}",
    ]
}

fn b() -> impl Strategy<Value = Value> {
    any::<bool>().prop_map(Value::Bool)
}

/// A JSON object from a random subset of (key, value strategy) fields.
fn fields(choices: Vec<BoxedStrategy<(&'static str, Value)>>, max: usize) -> BoxedStrategy<Value> {
    prop::collection::vec(prop::strategy::Union::new(choices), 0..=max)
        .prop_map(|kv| Value::Object(kv.into_iter().map(|(k, v)| (k.to_string(), v)).collect()))
        .boxed()
}

fn kv<S>(key: &'static str, s: S) -> BoxedStrategy<(&'static str, Value)>
where
    S: Strategy<Value = Value> + 'static,
{
    s.prop_map(move |v| (key, v)).boxed()
}

fn pick(values: &'static [&'static str]) -> impl Strategy<Value = Value> {
    prop::sample::select(values).prop_map(|s| Value::String(s.to_string()))
}

fn profile() -> impl Strategy<Value = Value> {
    pick(&["RuntimeDefault", "Unconfined", "Localhost"]).prop_map(|t| json!({"type": t}))
}

fn windows_options() -> BoxedStrategy<Value> {
    fields(
        vec![
            kv("hostProcess", b()),
            kv(
                "runAsUserName",
                pick(&[
                    "NT AUTHORITY\\SYSTEM",
                    "NT AUTHORITY\\Local service",
                    "ContainerUser",
                    "ContainerAdministrator",
                    "",
                    "a\\b\\c",
                ]),
            ),
            kv("gmsaCredentialSpecName", pick(&["webapp1", ""])),
            kv("gmsaCredentialSpec", pick(&["{}", "not json"])),
        ],
        3,
    )
}

fn pod_security_context() -> BoxedStrategy<Value> {
    fields(
        vec![
            kv("runAsUser", (0i64..2000).prop_map(Value::from)),
            kv("runAsGroup", (0i64..2000).prop_map(Value::from)),
            kv("fsGroup", (0i64..2000).prop_map(Value::from)),
            kv("fsGroupChangePolicy", pick(&["OnRootMismatch", "Always"])),
            kv("supplementalGroups", Just(json!([1000]))),
            kv("seccompProfile", profile()),
            kv("appArmorProfile", profile()),
            kv("seLinuxOptions", Just(json!({"level": "s0:c123,c456"}))),
            kv(
                "sysctls",
                prop_oneof![
                    Just(json!([])),
                    Just(json!([{"name": "net.core.somaxconn", "value": "1024"}]))
                ],
            ),
            kv("runAsNonRoot", b()),
            kv("windowsOptions", windows_options()),
            kv("supplementalGroupsPolicy", pick(&["Merge", "Strict"])),
        ],
        4,
    )
}

fn container_security_context() -> BoxedStrategy<Value> {
    fields(
        vec![
            kv("privileged", b()),
            kv("allowPrivilegeEscalation", b()),
            kv("readOnlyRootFilesystem", b()),
            kv(
                "capabilities",
                prop_oneof![
                    Just(json!({"drop": ["ALL"]})),
                    Just(json!({"add": ["NET_ADMIN"]})),
                    Just(json!({"add": [], "drop": []})),
                ],
            ),
            kv("runAsUser", (0i64..2000).prop_map(Value::from)),
            kv("runAsGroup", (0i64..2000).prop_map(Value::from)),
            kv("runAsNonRoot", b()),
            kv("procMount", pick(&["Default", "Unmasked"])),
            kv("seccompProfile", profile()),
            kv("seLinuxOptions", Just(json!({"type": "spc_t"}))),
            kv("windowsOptions", windows_options()),
        ],
        4,
    )
}

fn mount_path() -> impl Strategy<Value = Value> {
    pick(&[
        "C:\\data",
        "c:/data",
        "C:",
        "/data",
        "/var/run/secrets/kubernetes.io/serviceaccount",
        "\\\\.\\pipe\\containerd-containerd",
        "D:\\logs",
        "relative\\path",
        "/var/runцecrets/x",
        "C:\\данные",
        "\\\\?\\UNCц\\s\\share",
        "",
    ])
}

fn container() -> BoxedStrategy<Value> {
    let env = (
        env_name(),
        prop_oneof![
            Just(json!({"value": "x"})),
            Just(json!({"valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}})),
            Just(json!({"valueFrom": {"configMapKeyRef": {"name": "c", "key": "k"}}})),
            Just(json!({"valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}})),
        ],
    )
        .prop_map(|(name, mut v)| {
            v["name"] = name.into();
            v
        });
    let mount = (
        pick(&["data", "logs", "kube-api-access-abcde", "missing"]),
        mount_path(),
        prop::option::of(b()),
        prop::option::of(pick(&["None", "HostToContainer", "Bidirectional"])),
        prop::option::of(pick(&["sub", "a/b"])),
    )
        .prop_map(|(name, path, ro, prop, sub)| {
            let mut m = json!({"name": name, "mountPath": path});
            if let Some(ro) = ro {
                m["readOnly"] = ro;
            }
            if let Some(p) = prop {
                m["mountPropagation"] = p;
            }
            if let Some(s) = sub {
                m["subPath"] = s;
            }
            m
        });
    let port = (
        1i64..70000,
        prop::option::of(1i64..70000),
        prop::option::of(pick(&["TCP", "UDP", "SCTP"])),
    )
        .prop_map(|(c, h, p)| {
            let mut v = json!({"containerPort": c});
            if let Some(h) = h {
                v["hostPort"] = h.into();
            }
            if let Some(p) = p {
                v["protocol"] = p;
            }
            v
        });
    let resources = prop_oneof![
        Just(json!({})),
        Just(json!({"limits": {"cpu": "500m", "memory": "512Mi"}})),
        Just(json!({"requests": {"cpu": "2"}, "limits": {"hugepages-2Mi": "100Mi"}})),
        Just(json!({"limits": {"memory": "1Gi"}, "requests": {"memory": "2Gi"}})),
    ];
    let rest = fields(
        vec![
            kv(
                "securityContext",
                container_security_context().prop_map(|v| v),
            ),
            kv(
                "env",
                prop::collection::vec(env, 0..4).prop_map(Value::from),
            ),
            kv(
                "volumeMounts",
                prop::collection::vec(mount, 0..3).prop_map(Value::from),
            ),
            kv(
                "ports",
                prop::collection::vec(port, 0..3).prop_map(Value::from),
            ),
            kv("resources", resources),
            kv(
                "command",
                prop_oneof![
                    Just(json!(["cmd", "/c", "ping -t localhost"])),
                    Just(json!(["powershell.exe", "-Command", "Start-Sleep 3600"])),
                    Just(json!(["/bin/sh", "-c", "sleep 3600"])),
                    Just(json!(["bash"])),
                ],
            ),
            kv("workingDir", pick(&["C:\\app", "/app"])),
            kv(
                "lifecycle",
                Just(json!({"preStop": {"exec": {"command": ["/bin/sh", "-c", "sleep 5"]}}})),
            ),
            kv(
                "livenessProbe",
                Just(json!({"exec": {"command": ["cmd", "/c", "exit 0"]}})),
            ),
            kv(
                "terminationMessagePath",
                pick(&["/dev/termination-log", "C:\\t.log"]),
            ),
            kv("tty", b()),
            kv(
                "imagePullPolicy",
                pick(&["Always", "IfNotPresent", "Never"]),
            ),
        ],
        5,
    );
    (
        pick(&["app", "web", "sidecar", "init", "App_1", ""]),
        prop::option::of(image_ref()),
        rest,
    )
        .prop_map(|(name, image, mut c)| {
            c["name"] = name;
            if let Some(i) = image {
                c["image"] = i.into();
            }
            c
        })
        .boxed()
}

fn volume() -> BoxedStrategy<Value> {
    let source = prop_oneof![
        Just(json!({"emptyDir": {}})),
        Just(json!({"emptyDir": {"medium": "Memory", "sizeLimit": "64Mi"}})),
        (
            pick(&[
                "C:\\var\\log",
                "/var/run/docker.sock",
                "\\\\.\\pipe\\containerd-containerd",
                "/var/log",
                "C:\\",
                "\\\\?\\UNCц\\server\\share",
                "\\\\.\\pipeц",
            ]),
            prop::option::of(pick(&["Directory", "DirectoryOrCreate", "Socket", "File"]))
        )
            .prop_map(|(p, t)| {
                let mut h = json!({"path": p});
                if let Some(t) = t {
                    h["type"] = t;
                }
                json!({"hostPath": h})
            }),
        Just(json!({"nfs": {"server": "nfs.example.com", "path": "/exports"}})),
        Just(json!({"configMap": {"name": "cfg", "defaultMode": 420}})),
        Just(
            json!({"configMap": {"name": "cfg", "defaultMode": 256, "items": [{"key": "a", "path": "a", "mode": 384}]}})
        ),
        Just(json!({"secret": {"secretName": "tls", "defaultMode": 256}})),
        Just(json!({"secret": {"secretName": "tls"}})),
        Just(json!({"projected": {"defaultMode": 420, "sources": [
            {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
            {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
            {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}}
        ]}})),
        Just(json!({"persistentVolumeClaim": {"claimName": "data"}})),
        Just(json!({"iscsi": {"targetPortal": "10.0.0.1:3260", "iqn": "iqn.x", "lun": 0}})),
        Just(json!({"cephfs": {"monitors": ["m"]}})),
        Just(json!({"glusterfs": {"endpoints": "g", "path": "p"}})),
        Just(json!({"rbd": {"monitors": ["m"], "image": "i"}})),
        Just(
            json!({"csi": {"driver": "smb.csi.k8s.io", "volumeAttributes": {"source": "//srv/share"}}})
        ),
        Just(json!({"azureFile": {"secretName": "az", "shareName": "s"}})),
        Just(
            json!({"downwardAPI": {"items": [{"path": "labels", "fieldRef": {"fieldPath": "metadata.labels"}}]}})
        ),
        Just(
            json!({"ephemeral": {"volumeClaimTemplate": {"spec": {"accessModes": ["ReadWriteOnce"]}}}})
        ),
    ];
    (
        pick(&["data", "logs", "kube-api-access-abcde", "pipe"]),
        source,
    )
        .prop_map(|(name, mut v)| {
            v["name"] = name;
            v
        })
        .boxed()
}

fn toleration() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(json!({"key": "os", "operator": "Equal", "value": "windows", "effect": "NoSchedule"})),
        Just(json!({"key": "os", "operator": "Exists", "effect": "NoExecute"})),
        Just(json!({"operator": "Exists"})),
        Just(json!({"key": "node.kubernetes.io/os", "value": "windows", "effect": "NoSchedule"})),
        Just(json!({"key": "sku", "value": "gpu", "effect": "NoSchedule"})),
    ]
}

fn node_selector() -> BoxedStrategy<Value> {
    fields(
        vec![
            kv("kubernetes.io/os", pick(&["windows", "linux", "Windows"])),
            kv("beta.kubernetes.io/os", pick(&["windows", "linux"])),
            kv(
                "node.kubernetes.io/windows-build",
                pick(&["10.0.17763", "10.0.20348", "10.0.26100", "bogus"]),
            ),
            kv("disktype", pick(&["ssd"])),
        ],
        3,
    )
}

fn affinity() -> impl Strategy<Value = Value> {
    (pick(&["windows", "linux"]), pick(&["In", "NotIn"])).prop_map(|(os, op)| {
        json!({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [
                {"key": "kubernetes.io/os", "operator": op, "values": [os]}
            ]}]
        }}})
    })
}

fn pod_spec() -> BoxedStrategy<Value> {
    let rest = fields(
        vec![
            kv(
                "os",
                pick(&["windows", "windows", "linux", "Windows", ""])
                    .prop_map(|n| json!({"name": n})),
            ),
            kv("nodeSelector", node_selector()),
            kv(
                "tolerations",
                prop::collection::vec(toleration(), 0..3).prop_map(Value::from),
            ),
            kv("affinity", affinity()),
            kv("securityContext", pod_security_context()),
            kv("hostNetwork", b()),
            kv("hostPID", b()),
            kv("hostIPC", b()),
            kv("shareProcessNamespace", b()),
            kv("hostUsers", b()),
            kv(
                "runtimeClassName",
                pick(&["runhcs-wcow-process", "runhcs-wcow-hypervisor", "gvisor"]),
            ),
            kv(
                "volumes",
                prop::collection::vec(volume(), 0..4).prop_map(Value::from),
            ),
            kv(
                "initContainers",
                prop::collection::vec(container(), 0..2).prop_map(Value::from),
            ),
            kv(
                "ephemeralContainers",
                prop::collection::vec(container(), 0..2).prop_map(Value::from),
            ),
            kv("dnsPolicy", pick(&["ClusterFirst", "Default", "None"])),
            kv("priorityClassName", pick(&["system-node-critical", "high"])),
            kv(
                "terminationGracePeriodSeconds",
                (0i64..120).prop_map(Value::from),
            ),
        ],
        8,
    );
    (
        prop_oneof![
            9 => prop::collection::vec(container(), 1..3).prop_map(Some),
            1 => Just(None),
        ],
        rest,
    )
        .prop_map(|(containers, mut spec)| {
            if let Some(c) = containers {
                spec["containers"] = c.into();
            }
            spec
        })
        .boxed()
}

fn pod_metadata() -> BoxedStrategy<Value> {
    fields(
        vec![
            kv(
                "labels",
                prop_oneof![
                    Just(json!({"app": "web"})),
                    Just(json!({"app": "web", "kubernetes.io/os": "windows"})),
                    Just(json!({"kubernetes.io/os": "linux"})),
                ],
            ),
            kv(
                "annotations",
                prop_oneof![
                    Just(json!({"winlint.io/ignore": "WIN001"})),
                    Just(json!({"winlint.io/ignore": "all", "winlint.io/ignore-reason": "legacy"})),
                    Just(json!({"experimental.windows.kubernetes.io/isolation-type": "hyperv"})),
                    Just(json!({"seccomp.security.alpha.kubernetes.io/pod": "runtime/default"})),
                    Just(json!({"winlint.io/mutated": "nodeSelector"})),
                ],
            ),
        ],
        2,
    )
}

const KINDS: &[(&str, &str)] = &[
    ("Pod", "v1"),
    ("Pod", "v1"),
    ("Pod", "v1"),
    ("Deployment", "apps/v1"),
    ("StatefulSet", "apps/v1"),
    ("DaemonSet", "apps/v1"),
    ("ReplicaSet", "apps/v1"),
    ("Job", "batch/v1"),
    ("CronJob", "batch/v1"),
    ("PodTemplate", "v1"),
    ("ReplicationController", "v1"),
];

/// A pod-bearing object around a generated PodSpec.
fn object() -> BoxedStrategy<Value> {
    (
        prop::sample::select(KINDS),
        pod_metadata(),
        pod_spec(),
        prop::option::of(pick(&["default", "kube-system", "web"])),
        pick(&["web", "iis"]),
    )
        .prop_map(|((kind, api), tpl_meta, spec, ns, name)| {
            let mut meta = json!({"name": name});
            if let Some(ns) = ns {
                meta["namespace"] = ns;
            }
            let template = json!({"metadata": tpl_meta, "spec": spec});
            match kind {
                "Pod" => {
                    let mut m = tpl_meta;
                    if let Some(o) = m.as_object_mut() {
                        o.extend(meta.as_object().cloned().unwrap_or_default());
                    }
                    json!({"apiVersion": api, "kind": kind, "metadata": m, "spec": template["spec"]})
                }
                "PodTemplate" => {
                    json!({"apiVersion": api, "kind": kind, "metadata": meta, "template": template})
                }
                "CronJob" => json!({"apiVersion": api, "kind": kind, "metadata": meta,
                    "spec": {"schedule": "* * * * *", "jobTemplate": {"spec": {"template": template}}}}),
                _ => json!({"apiVersion": api, "kind": kind, "metadata": meta,
                    "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": template}}),
            }
        })
        .boxed()
}

/// Target/policy variants: Kubernetes minor, cluster mixed builds, every opt-in fix allowed.
fn config() -> impl Strategy<Value = Config> {
    (
        prop::sample::select(&[22u32, 23, 24, 25, 30, 34][..]),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(minor, mixed, opt_in_all)| {
            let mut c = Config::default();
            c.target.kubernetes = KubeVersion::new(1, minor);
            c.target.cluster_mixed_builds = mixed;
            if opt_in_all {
                c.policy.fix_opt_in = rules::all().iter().map(|r| r.meta.id.to_string()).collect();
            }
            c
        })
}

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

fn lint(object: &Value, config: &Config, op: Operation) -> Vec<Finding> {
    engine::lint_object(object, config, &Context::default(), op).findings
}

/// Everything a finding says, comparable.
fn fingerprint(findings: &[Finding]) -> Vec<String> {
    findings
        .iter()
        .map(|f| {
            format!(
                "{} {:?} {} {} {:?}",
                f.rule.id,
                f.severity,
                f.pointer,
                f.message,
                f.fix.as_ref().map(|x| (
                    x.safety,
                    &x.description,
                    serde_json::to_string(&x.ops).unwrap()
                ))
            )
        })
        .collect()
}

fn allowed_fixes(findings: &[Finding], config: &Config) -> Vec<String> {
    findings
        .iter()
        .filter(|f| fix::fix_allowed(f, config))
        .map(|f| {
            format!(
                "{} at {}: {}",
                f.rule.id,
                f.pointer,
                f.fix.as_ref().map(|x| x.description.as_str()).unwrap_or("")
            )
        })
        .collect()
}

fn classification(object: &Value, config: &Config) -> Option<classify::Classification> {
    let sites = workload::pod_sites(object);
    let site = sites.first()?;
    let infos: Vec<image::ImageInfo> = site
        .containers()
        .map(|c| image::analyze(c.image().unwrap_or("")))
        .collect();
    Some(classify::classify(
        site,
        &infos,
        &Context::default(),
        &config.target,
    ))
}

fn os_windows(object: &Value) -> bool {
    workload::pod_sites(object)
        .first()
        .is_some_and(|s| s.str("/os/name") == Some("windows"))
}

/// The Linux-only fields left in a pod that declares `spec.os.name: windows`.
fn forbidden_left(object: &Value, config: &Config) -> Vec<String> {
    workload::pod_sites(object)
        .iter()
        .flat_map(|s| linux_only_fields(s, &config.target))
        // What the target's API server would reject (a dropped or unknown field is admitted).
        .filter(|f| f.rejected)
        .map(|f| f.pointer)
        .collect()
}

fn review(op: &str, object: &Value, old: Option<&Value>) -> Vec<u8> {
    let kind = object.get("kind").and_then(Value::as_str).unwrap_or("Pod");
    let mut req = json!({
        "uid": "0b9a3c4e-prop",
        "kind": {"group": "", "version": "v1", "kind": kind},
        "resource": {"group": "", "version": "v1", "resource": "pods"},
        "namespace": "default",
        "operation": op,
        "userInfo": {"username": "prop"},
        "object": object,
        "dryRun": false,
    });
    if let Some(old) = old {
        req["oldObject"] = old.clone();
    }
    serde_json::to_vec(&json!({
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": req,
    }))
    .unwrap()
}

/// Check that `body` is a well-formed AdmissionReview answering `uid`; return its response.
fn well_formed(body: &[u8], api_version: &str, uid: &str) -> Result<Value, String> {
    let v: Value = serde_json::from_slice(body).map_err(|e| format!("not JSON: {e}"))?;
    if v["apiVersion"] != api_version {
        return Err(format!("apiVersion {} != {api_version}", v["apiVersion"]));
    }
    if v["kind"] != "AdmissionReview" {
        return Err(format!("kind {}", v["kind"]));
    }
    let r = &v["response"];
    if r["uid"] != uid {
        return Err(format!("uid {} != {uid}", r["uid"]));
    }
    let Some(allowed) = r["allowed"].as_bool() else {
        return Err("allowed is not a bool".into());
    };
    if !allowed && !r["status"]["message"].is_string() {
        return Err("denied without a status message".into());
    }
    if let Some(w) = r.get("warnings") {
        let ok = w.as_array().is_some_and(|a| a.iter().all(Value::is_string));
        if !ok {
            return Err("warnings is not an array of strings".into());
        }
    }
    if let Some(p) = r.get("patch") {
        if r["patchType"] != "JSONPatch" {
            return Err("patch without patchType JSONPatch".into());
        }
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(p.as_str().ok_or("patch is not a string")?)
            .map_err(|e| format!("patch is not base64: {e}"))?;
        let ops: Value =
            serde_json::from_slice(&bytes).map_err(|e| format!("patch is not JSON: {e}"))?;
        if !ops.is_array() {
            return Err("patch is not a JSON array".into());
        }
    }
    Ok(v)
}

fn decoded_patch(resp: &Value) -> Option<json_patch::Patch> {
    let p = resp["response"]["patch"].as_str()?;
    let bytes = base64::engine::general_purpose::STANDARD.decode(p).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// Arbitrary JSON, small.
fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        b(),
        any::<i64>().prop_map(Value::from),
        (-1e6f64..1e6).prop_map(|f| json!(f)),
        "[a-z/:.~ ]{0,8}".prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
            prop::collection::vec(
                (
                    prop_oneof![
                        "[a-z]{1,6}",
                        prop::sample::select(
                            &[
                                "spec",
                                "containers",
                                "os",
                                "name",
                                "image",
                                "securityContext",
                                "nodeSelector",
                                "volumes",
                                "template",
                                "metadata",
                                "kind",
                            ][..]
                        )
                        .prop_map(str::to_string),
                    ],
                    inner
                ),
                0..4
            )
            .prop_map(|kv| Value::Object(kv.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

// ---------------------------------------------------------------------------------------------
// Properties
// ---------------------------------------------------------------------------------------------

proptest! {
    #![proptest_config(pt_config())]

    /// 1. No panic (called directly: the webhook's catch_unwind would hide one), deterministic.
    #[test]
    fn engine_total_and_deterministic(obj in object(), cfg in config()) {
        for op in [Operation::Lint, Operation::Create, Operation::Update] {
            let a = fingerprint(&lint(&obj, &cfg, op));
            let b = fingerprint(&lint(&obj, &cfg, op));
            prop_assert_eq!(a, b);
        }
        let _ = mutation::mutate(&mut obj.clone(), &cfg);
    }

    /// 2. Fixes converge within the webhook's passes (`FixOptions::WEBHOOK`: a chain such as
    /// runAsUser removed, then spec.os added, then a `hostUsers: true` that only spec.os makes
    /// a finding, takes three fixing passes and a fourth that finds nothing; see
    /// `fixes_converge_in_one_pass` for the strict, single-pass form) and, at the fixed point,
    /// applying again changes nothing; every pass's patch reproduces its fixed object.
    #[test]
    fn fixes_are_idempotent(obj in object(), cfg in config()) {
        let mut current = obj.clone();
        let mut converged = false;
        for _pass in 0..fix::FixOptions::WEBHOOK.max_passes {
            let findings = lint(&current, &cfg, Operation::Lint);
            let mut fixed = current.clone();
            let (patch, _) = fix::apply_fixes(&mut fixed, &findings, &cfg);
            let mut replay = current.clone();
            prop_assert!(json_patch::patch(&mut replay, &patch).is_ok(), "patch does not apply to the original");
            prop_assert_eq!(&replay, &fixed, "patch does not reproduce the fixed object");
            if patch.is_empty() {
                prop_assert_eq!(&fixed, &current);
                converged = true;
                break;
            }
            current = fixed;
        }
        let left = allowed_fixes(&lint(&current, &cfg, Operation::Lint), &cfg);
        prop_assert!(converged && left.is_empty(),
            "fixes do not converge in the webhook's passes: still {:?}\n{}", left, current);
    }

    /// 3. The spec.os guard, for the engine's fixes and for the webhook's patch.
    #[test]
    fn fixes_never_add_os_to_a_pod_with_linux_fields(obj in object(), cfg in config()) {
        let windows = classification(&obj, &cfg).is_some_and(|c| c.is_windows());
        if !windows || os_windows(&obj) {
            return Ok(());
        }
        let findings = lint(&obj, &cfg, Operation::Lint);
        let mut fixed = obj.clone();
        fix::apply_fixes(&mut fixed, &findings, &cfg);
        if os_windows(&fixed) {
            let left = forbidden_left(&fixed, &cfg);
            prop_assert!(left.is_empty(), "spec.os.name=windows added with Linux-only fields {:?}\n{}", left, fixed);
        }
        // The webhook: Pods (workloads are not mutated by default).
        let webhook = Webhook::new(cfg.clone());
        let out = webhook.review(&review("CREATE", &obj, None), Endpoint::Mutate).unwrap();
        let resp: Value = serde_json::from_slice(&out.body).unwrap();
        if let Some(patch) = decoded_patch(&resp) {
            let mut patched = obj.clone();
            prop_assert!(json_patch::patch(&mut patched, &patch).is_ok(), "webhook patch does not apply");
            if os_windows(&patched) {
                let left = forbidden_left(&patched, &cfg);
                prop_assert!(left.is_empty(), "webhook added spec.os.name=windows with Linux-only fields {:?}", left);
            }
        }
    }

    /// 4. Not Windows → only any-OS rules; Linux → no patch.
    #[test]
    fn non_windows_pods_get_no_windows_findings(obj in object(), cfg in config()) {
        let Some(class) = classification(&obj, &cfg) else { return Ok(()) };
        if class.is_windows() {
            return Ok(());
        }
        for op in [Operation::Lint, Operation::Create] {
            for f in lint(&obj, &cfg, op) {
                prop_assert!(f.rule.os == RuleOs::Any,
                    "{} on a pod classified {:?}/{:?}: {}", f.rule.id, class.os, class.strength, f.message);
            }
        }
        if class.is_linux() {
            let mut cfg = cfg.clone();
            cfg.policy.mutation.workloads = true;
            let webhook = Webhook::new(cfg);
            let out = webhook.review(&review("CREATE", &obj, None), Endpoint::Mutate).unwrap();
            let resp: Value = serde_json::from_slice(&out.body).unwrap();
            prop_assert!(resp["response"].get("patch").is_none(), "Linux pod patched: {}", resp);
        }
    }

    /// 5a. Arbitrary bytes: an error or a well-formed AdmissionReview.
    #[test]
    fn admission_total_on_bytes(body in prop::collection::vec(any::<u8>(), 0..512)) {
        let webhook = Webhook::new(Config::default());
        for ep in [Endpoint::Mutate, Endpoint::Validate] {
            if let Ok(out) = webhook.review(&body, ep) {
                let v: Value = serde_json::from_slice(&body).unwrap();
                let api = v["apiVersion"].as_str().unwrap_or("");
                prop_assert!(well_formed(&out.body, api, &out.uid).is_ok());
            }
        }
    }

    /// 5b. Well-formed reviews with arbitrary or generated objects, CREATE/UPDATE/DELETE, v1 and
    /// v1beta1: always a well-formed answer, and the patch applies to the object.
    #[test]
    fn admission_well_formed_on_reviews(
        obj in prop_oneof![3 => object(), 1 => any_json()],
        old in prop::option::of(prop_oneof![3 => object(), 1 => any_json()]),
        op in prop::sample::select(&["CREATE", "UPDATE", "DELETE", "CONNECT"][..]),
        beta in any::<bool>(),
        sub in prop::option::of(pick(&["ephemeralcontainers", "status"])),
        workloads in any::<bool>(),
    ) {
        let mut cfg = Config::default();
        cfg.policy.mutation.workloads = workloads;
        let webhook = Webhook::new(cfg);
        let mut v: Value = serde_json::from_slice(&review(op, &obj, old.as_ref())).unwrap();
        let api = if beta { "admission.k8s.io/v1beta1" } else { "admission.k8s.io/v1" };
        v["apiVersion"] = api.into();
        if let Some(s) = sub {
            v["request"]["subResource"] = s;
        }
        let body = serde_json::to_vec(&v).unwrap();
        for ep in [Endpoint::Mutate, Endpoint::Validate] {
            let out = webhook.review(&body, ep);
            prop_assert!(out.is_ok(), "well-formed review rejected: {:?}", out.err());
            let out = out.unwrap();
            let resp = well_formed(&out.body, api, "0b9a3c4e-prop");
            prop_assert!(resp.is_ok(), "{:?}", resp.err());
            if let Some(patch) = decoded_patch(&resp.unwrap()) {
                let mut patched = obj.clone();
                prop_assert!(json_patch::patch(&mut patched, &patch).is_ok(),
                    "patch does not apply to the request object");
            }
        }
    }
}

proptest! {
    #![proptest_config(pt_config())]

    /// 2 (strict). One run of the fixer leaves no finding whose fix is allowed (it re-lints
    /// between passes; see `regression_win003_appears_after_win102_fix`).
    #[test]
    fn fixes_converge_in_one_fixer_run(obj in object(), cfg in config()) {
        let mut fixed = obj.clone();
        fix_in_place(&mut fixed, &cfg);
        let left = allowed_fixes(&lint(&fixed, &cfg, Operation::Lint), &cfg);
        prop_assert!(left.is_empty(), "fixable findings left after one pass: {:?}\n{}", left, fixed);
    }
}

// ---------------------------------------------------------------------------------------------
// Regression tests for what the properties found
// ---------------------------------------------------------------------------------------------

#[test]
fn real_reviews_are_answered_well_formed() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/admission");
    let entries = std::fs::read_dir(&dir).expect("testdata/admission holds the captured reviews");
    let webhook = Webhook::new(Config::default());
    for e in entries.flatten() {
        let p = e.path();
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        if !name.ends_with(".json") || name.ends_with(".meta.json") {
            continue;
        }
        let body = std::fs::read(&p).unwrap();
        let v: Value = serde_json::from_slice(&body).unwrap();
        let uid = v["request"]["uid"].as_str().unwrap();
        let api = v["apiVersion"].as_str().unwrap();
        for ep in [Endpoint::Mutate, Endpoint::Validate] {
            let out = webhook.review(&body, ep).unwrap();
            let resp = well_formed(&out.body, api, uid).unwrap_or_else(|e| panic!("{name}: {e}"));
            if let Some(patch) = decoded_patch(&resp) {
                let mut obj = v["request"]["object"].clone();
                json_patch::patch(&mut obj, &patch).unwrap_or_else(|e| panic!("{name}: {e}"));
            }
        }
    }
}

/// The fixer on `object` in place (lint operation, the webhook's 4 passes).
fn fix_in_place(object: &mut Value, cfg: &Config) {
    let report = engine::lint_object(object, cfg, &Context::default(), Operation::Lint);
    let fixer = Fixer {
        config: cfg,
        context: &Context::default(),
        operation: Operation::Lint,
        options: FixOptions::WEBHOOK,
    };
    let mut doc = InPlace {
        object,
        patch: Vec::new(),
    };
    let Ok(_) = fixer.fix(&mut doc, Some(&report), &[]);
}

/// One run of the fixer then re-lint: the allowed fixes still offered.
fn left_after_one_pass(obj: &Value, cfg: &Config) -> Vec<String> {
    let mut fixed = obj.clone();
    fix_in_place(&mut fixed, cfg);
    allowed_fixes(&lint(&fixed, cfg, Operation::Lint), cfg)
}

/// Found by `fixes_are_idempotent`: a Windows pod (windowsOptions) with the neutral Linux-only
/// field `shareProcessNamespace: false`. Pass 1 withholds WIN003 (spec.os) because of the field
/// and WIN102's safe fix deletes it; pass 2 then offers WIN003. `winlint --fix` run twice gives
/// two different files; the webhook never adds spec.os to such a pod.
#[test]
fn regression_win003_appears_after_win102_fix() {
    let obj = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
        "spec": {"shareProcessNamespace": false,
                 "containers": [{"name": "app", "securityContext": {"windowsOptions": {}}}]}});
    let mut cfg = Config::default();
    cfg.target.kubernetes = KubeVersion::new(1, 24);
    assert_eq!(left_after_one_pass(&obj, &cfg), Vec::<String>::new());
}

/// A Windows pod whose container mounts `mount_path` from a hostPath volume at `host_path`.
fn pod_with_paths(mount_path: &str, host_path: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
        "spec": {"nodeSelector": {"kubernetes.io/os": "windows"},
                 "volumes": [{"name": "data", "hostPath": {"path": host_path}}],
                 "containers": [{"name": "app", "image": "mcr.microsoft.com/windows/nanoserver:ltsc2022",
                                 "volumeMounts": [{"name": "data", "mountPath": mount_path}]}]}})
}

/// Found by the `admission_review` fuzz target (fuzz/, 2026-11-23): `model::paths::kubelet_pipe_path`
/// (then `rules::volumes::is_named_pipe`) sliced `p[..9]` by bytes, so a path whose 9th byte falls inside a multi-byte character
/// (`/var/runц…`, a damaged service-account mount path) panics ("byte index 9 is not a char
/// boundary"). The webhook's catch_unwind turns it into an onError answer; `winlint FILE` dies.
/// Expected: no panic (the path is simply not a named pipe).
#[test]
fn regression_named_pipe_check_on_non_ascii_path() {
    let cfg = Config::default();
    let obj = pod_with_paths("/var/runцecrets/kubernetes.io/serviceaccount", "C:\\data");
    for op in [Operation::Lint, Operation::Create] {
        let _ = lint(&obj, &cfg, op);
    }
}

/// Same class of bug, found reading the code the fuzzer pointed at:
/// `rules::volumes::is_smb_unc` slices `long[..4]` after `\\?\`, so `\\?\UNCц…` panics.
#[test]
fn regression_unc_check_on_non_ascii_path() {
    let cfg = Config::default();
    let path = "\\\\?\\UNCц\\server\\share";
    let _ = winlint::model::paths::is_smb_unc(path);
    let obj = pod_with_paths(path, path);
    for op in [Operation::Lint, Operation::Create] {
        let _ = lint(&obj, &cfg, op);
    }
}
