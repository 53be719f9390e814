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
//!    handler returns an error or a well-formed AdmissionReview whose patch applies;
//! 6. over random cluster contexts (node groups, RuntimeClasses, labelled namespaces), targets
//!    and mutation policies: the mutation's last lint (`Mutated::after`, `Guarded::after`), when
//!    given, is exactly a fresh full lint of the mutated object;
//! 7. the webhook end to end on CREATE: `/validate`'s verdict, judged findings and warnings are
//!    those of `/mutate`'s patch applied and linted in full, where the design judges by the
//!    pods (the documented exceptions are in the property).
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

    /// 4. Not Windows → only any-OS rules; Linux → no patch but the Linux guard's pin
    /// (`linuxGuard: auto`: the Linux OS selector and its record in `winlint.io/mutated`).
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
            let guard = cfg.policy.mutation.linux_guard;
            let webhook = Webhook::new(cfg);
            let out = webhook.review(&review("CREATE", &obj, None), Endpoint::Mutate).unwrap();
            let resp: Value = serde_json::from_slice(&out.body).unwrap();
            if let Some(patch) = decoded_patch(&resp) {
                prop_assert!(guard == LinuxGuard::Auto, "Linux pod patched: {}", resp);
                let mut patched = obj.clone();
                prop_assert!(json_patch::patch(&mut patched, &patch).is_ok(), "webhook patch does not apply");
                for op in &patch.0 {
                    let path = op.path().as_str();
                    let pins_linux = path.contains("/nodeSelector")
                        && patched.pointer(path).is_some_and(|v| {
                            v == "linux" || v.get("kubernetes.io/os").is_some_and(|os| os == "linux")
                        });
                    let records = path.starts_with("/metadata/annotations")
                        || path.ends_with("/template/metadata/annotations");
                    prop_assert!(pins_linux || records, "Linux guard changed {}: {}", path, resp);
                }
            }
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
    let Ok(_) = fixer.fix(&mut doc, Some(&report), &|_| false);
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

// ---------------------------------------------------------------------------------------------
// The re-lint after mutation (issue 16): the mutation's last lint and the webhook's verdict
// against a full lint of the mutated object, over random cluster contexts
// ---------------------------------------------------------------------------------------------
//
// `/validate` judges a workload template on CREATE by the lint the mutation made last
// (`Guarded::after` through `Mutated::after`, `engine::judge::as_pods`) instead of linting the
// mutated copy again. Anything that makes that lint cheaper (re-running only some rules and
// carrying the others' findings over) must give exactly the full lint, or the webhook admits a
// pod it should deny or denies one that runs. The strategies below aim at what a carry-over gets
// wrong: pods whose OS classification or placement changes when the mutation adds a
// nodeSelector, `spec.os`, a RuntimeClass, labels or tolerations (Windows-probable pods,
// OS-unknown pods, Linux pods with multi-OS images, exemption annotations), findings that point
// into the arrays a patch appends to, and clusters where the mutation makes a pod select no node
// or another node group.

use std::sync::Arc;
use winlint::config::{HyperV, LinuxGuard};
use winlint::engine::judge::MutationConfigs;
use winlint::model::nodes::{NodeGroup, NodeOs, Taint};
use winlint::model::platform::Platform;
use winlint::model::{Severity, windows};

use std::collections::BTreeMap;
use winlint::model::image_facts::{ImageFacts, ImageFactsMap, Platform as ImagePlatform};

/// Node group shapes: (name, OS, build, taints, labels). Windows groups of three builds, with
/// the conventional taint, GKE's, a team's, or none (AKS/EKS); Linux groups with and without a
/// taint of their own.
/// (name, OS, build, taints, labels) of a node group.
type GroupShape = (
    &'static str,
    &'static str,
    &'static str,
    &'static [&'static str],
    &'static [(&'static str, &'static str)],
);

const GROUPS: &[GroupShape] = &[
    ("lin", "linux", "", &[], &[]),
    (
        "linfra",
        "linux",
        "",
        &["dedicated=infra:NoSchedule"],
        &[("disktype", "ssd")],
    ),
    (
        "w19",
        "windows",
        "10.0.17763",
        &["os=windows:NoSchedule"],
        &[],
    ),
    (
        "w22",
        "windows",
        "10.0.20348",
        &["os=windows:NoSchedule"],
        &[("disktype", "ssd")],
    ),
    (
        "w22g",
        "windows",
        "10.0.20348",
        &["node.kubernetes.io/os=windows:NoSchedule"],
        &[],
    ),
    (
        "w25",
        "windows",
        "10.0.26100",
        &[],
        &[("kubernetes.azure.com/os-sku", "Windows2025")],
    ),
    (
        "wgpu",
        "windows",
        "10.0.20348",
        &["sku=gpu:NoSchedule"],
        &[("sku", "gpu")],
    ),
    ("wnob", "windows", "", &[], &[]),
];

/// A node group as the kubelet labels it (`rules::testutil::group`, which is crate-private).
fn node_group(i: usize, n: usize) -> NodeGroup {
    let (name, os, build, taints, labels) = GROUPS[i];
    let mut l: std::collections::BTreeMap<String, String> = labels
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    l.insert("kubernetes.io/os".into(), os.into());
    l.insert("beta.kubernetes.io/os".into(), os.into());
    if !build.is_empty() {
        l.insert("node.kubernetes.io/windows-build".into(), build.into());
    }
    NodeGroup {
        os: NodeOs::parse(os),
        build: windows::parse_build(build),
        revision: None,
        taints: taints.iter().map(|t| Taint::parse(t).unwrap()).collect(),
        labels: l,
        runtime: Some("containerd://1.7.20".into()),
        nodes: (0..n)
            .map(|k| (format!("{name}{k}"), Some(format!("{name}{k}"))))
            .collect(),
    }
}

/// Observed nodes: none known (offline target), a cluster with no node at all, or 1-3 groups.
fn node_groups() -> impl Strategy<Value = Option<Vec<NodeGroup>>> {
    prop_oneof![
        2 => Just(None),
        1 => Just(Some(Vec::new())),
        5 => prop::collection::vec((0..GROUPS.len(), 1usize..3), 1..4)
            .prop_map(|g| Some(g.into_iter().map(|(i, n)| node_group(i, n)).collect())),
    ]
}

/// RuntimeClasses: Hyper-V ones (scheduled on Windows, unscheduled, pinned to a guest build),
/// a process-isolation one pinned to a build, a Linux sandbox.
fn runtime_classes() -> Vec<Value> {
    let rc = |name: &str, handler: &str, scheduling: Value| {
        let mut v = json!({"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass",
            "metadata": {"name": name}, "handler": handler});
        if !scheduling.is_null() {
            v["scheduling"] = scheduling;
        }
        v
    };
    let win_tol =
        json!([{"key": "os", "operator": "Equal", "value": "windows", "effect": "NoSchedule"}]);
    vec![
        rc(
            "runhcs-wcow-hypervisor",
            "runhcs-wcow-hypervisor",
            json!({"nodeSelector": {"kubernetes.io/os": "windows"}, "tolerations": win_tol}),
        ),
        rc("windows-hyperv", "runhcs-wcow-hypervisor", Value::Null),
        rc(
            "hv-2019",
            "runhcs-wcow-hypervisor-17763",
            json!({"nodeSelector": {"kubernetes.io/os": "windows",
                "node.kubernetes.io/windows-build": "10.0.17763"}}),
        ),
        rc(
            "runhcs-wcow-process",
            "runhcs-wcow-process",
            json!({"nodeSelector": {"kubernetes.io/os": "windows",
                "node.kubernetes.io/windows-build": "10.0.20348"}, "tolerations": win_tol}),
        ),
        rc(
            "gvisor",
            "runsc",
            json!({"nodeSelector": {"kubernetes.io/os": "linux"}}),
        ),
    ]
}

const NAMESPACES: &[&str] = &["default", "web", "kube-system"];

fn namespace_labels() -> impl Strategy<Value = Vec<(&'static str, &'static str)>> {
    prop::collection::vec(
        prop::sample::select(
            &[
                ("winlint.io/default-os", "windows"),
                ("winlint.io/default-os", "windows"),
                ("pod-security.kubernetes.io/enforce", "restricted"),
                ("pod-security.kubernetes.io/enforce", "baseline"),
                ("pod-security.kubernetes.io/enforce", "privileged"),
                ("winlint.io/enforcement", "warn"),
                ("team", "web"),
            ][..],
        ),
        0..3,
    )
}

/// The cluster facts: some RuntimeClasses, labelled namespaces.
fn context() -> impl Strategy<Value = Context> {
    (
        prop::sample::subsequence((0..5).collect::<Vec<usize>>(), 0..=5),
        prop::collection::vec(namespace_labels(), NAMESPACES.len()),
        prop::option::weighted(0.05, prop::sample::select(NAMESPACES)),
    )
        .prop_map(|(rcs, labels, exempt)| {
            let mut cx = Context::default();
            let all = runtime_classes();
            for i in rcs {
                cx.add(&all[i]);
            }
            for (ns, l) in NAMESPACES.iter().zip(labels) {
                let mut map: Map<String, Value> = l
                    .into_iter()
                    .map(|(k, v)| (k.to_string(), v.into()))
                    .collect();
                if exempt == Some(*ns) {
                    map.insert("winlint.io/ignore".into(), "true".into());
                }
                cx.add(&json!({"apiVersion": "v1", "kind": "Namespace",
                    "metadata": {"name": ns, "labels": map}}));
            }
            cx
        })
}

/// A target and a policy: Kubernetes minors around every gate the mutation depends on
/// (RuntimeClass scheduling 1.16, Hyper-V RuntimeClass 1.21, spec.os 1.23-1.25), Windows
/// builds, platform, observed nodes, every mutation switch, opt-in fixes (WIN005's build pin,
/// the Linux-only-field strips), a rule turned off or made an error, warn-mode enforcement.
fn cluster_config() -> impl Strategy<Value = Config> {
    let target = (
        prop::sample::select(&[19u32, 20, 21, 22, 23, 24, 25, 28, 30, 33, 34][..]),
        prop::sample::subsequence(vec!["10.0.17763", "10.0.20348", "10.0.26100"], 1..=3),
        any::<bool>(),
        prop::option::of(prop::sample::select(&Platform::ALL[..])),
        node_groups(),
        pick(&[
            "runhcs-wcow-hypervisor",
            "windows-hyperv",
            "hv-2019",
            "missing",
        ]),
    );
    let mutation = (
        any::<bool>(),
        prop::sample::select(&[HyperV::Off, HyperV::On, HyperV::Auto][..]),
        any::<bool>(),
        prop::sample::select(&[LinuxGuard::Auto, LinuxGuard::On, LinuxGuard::Off][..]),
        any::<bool>(),
    );
    let policy = (
        prop::sample::subsequence(
            vec!["WIN005", "WIN101", "WIN102", "WIN103", "WIN402"],
            0..=5,
        ),
        prop::option::weighted(
            0.2,
            (
                0..rules::all().len(),
                prop::option::of(prop::sample::select(
                    &[Severity::Error, Severity::Warning, Severity::Info][..],
                )),
            ),
        ),
        prop::option::weighted(0.9, Just(())),
    );
    (target, mutation, policy).prop_map(
        |(
            (minor, builds, mixed, platform, nodes, hv_class),
            (strip, hyperv, label, guard, probable),
            (opt_in, override_rule, safe),
        )| {
            let mut c = Config::default();
            c.target.kubernetes = KubeVersion::new(1, minor);
            c.target.windows_builds = builds
                .iter()
                .filter_map(|b| windows::parse_build(b))
                .collect();
            c.target.cluster_mixed_builds = mixed;
            if let Some(p) = platform {
                c.target.set_platform(p);
            }
            c.target.nodes = nodes.map(Into::into);
            c.target.hyperv_runtime_class = hv_class.as_str().unwrap().to_string();
            let m = &mut c.policy.mutation;
            m.strip_linux_only_fields = strip;
            m.hyperv = hyperv;
            m.pod_os_label = label;
            m.linux_guard = guard;
            m.probable = probable;
            c.policy.fix_opt_in = opt_in.into_iter().map(str::to_string).collect();
            if let Some((i, sev)) = override_rule {
                c.policy
                    .overrides
                    .insert(rules::all()[i].meta.id.to_string(), sev);
            }
            c.policy.safe_fixes = safe.is_some();
            c
        },
    )
}

/// What the adversarial overlay writes into the pod site: (in the metadata?, key, value).
type Overlay = Vec<(bool, &'static str, Value)>;

fn overlay() -> impl Strategy<Value = Overlay> {
    let entry = prop_oneof![
        // Selectors that pick one node group, a build, a hostname, or nothing that exists.
        (
            Just(false),
            Just("nodeSelector"),
            prop_oneof![
                Just(
                    json!({"kubernetes.io/os": "windows", "node.kubernetes.io/windows-build": "10.0.17763"})
                ),
                Just(json!({"node.kubernetes.io/windows-build": "10.0.20348"})),
                Just(json!({"kubernetes.io/hostname": "w190"})),
                Just(json!({"kubernetes.io/hostname": "lin0"})),
                Just(json!({"disktype": "ssd"})),
                Just(json!({"sku": "gpu"})),
                Just(json!({"kubernetes.azure.com/os-sku": "Windows2025"})),
                Just(json!({"kubernetes.io/os": "linux"})),
                Just(json!({})),
            ]
        ),
        (
            Just(false),
            Just("runtimeClassName"),
            pick(&[
                "windows-hyperv",
                "hv-2019",
                "runhcs-wcow-hypervisor",
                "runhcs-wcow-process",
                "gvisor",
                "missing"
            ])
        ),
        (
            Just(false),
            Just("tolerations"),
            prop_oneof![
                Just(json!([])),
                Just(
                    json!([{"key": "sku", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}])
                ),
                Just(
                    json!([{"key": "os", "operator": "Equal", "value": "windows", "effect": "NoSchedule"},
                        {"key": "dedicated", "operator": "Exists"}])
                ),
                Just(
                    json!([{"key": "node.kubernetes.io/os", "operator": "Equal", "value": "windows"}])
                ),
            ]
        ),
        (
            Just(false),
            Just("affinity"),
            prop_oneof![
                Just(
                    json!({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [
                    {"key": "node.kubernetes.io/windows-build", "operator": "In", "values": ["10.0.17763", "10.0.20348"]}]}]}}})
                ),
                Just(
                    json!({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [
                    {"key": "kubernetes.io/os", "operator": "In", "values": ["windows"]}]},
                    {"matchExpressions": [{"key": "disktype", "operator": "In", "values": ["ssd"]}]}]}}})
                ),
                Just(
                    json!({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchFields": [
                    {"key": "metadata.name", "operator": "In", "values": ["w220"]}]}]}}})
                ),
            ]
        ),
        (
            Just(false),
            Just("containers"),
            prop::collection::vec(
                (
                    pick(&["app", "side"]),
                    pick(&[
                        // Windows-only (probable Windows without a selector), multi-OS, Linux-only.
                        "mcr.microsoft.com/windows/servercore:ltsc2019",
                        "mcr.microsoft.com/windows/servercore:ltsc2022",
                        "mcr.microsoft.com/windows/nanoserver:ltsc2025",
                        "mcr.microsoft.com/dotnet/runtime:8.0",
                        "registry.k8s.io/pause:3.9",
                        "mcr.microsoft.com/dotnet/framework/aspnet:4.8",
                        "redis:7.2",
                        "nginx:1.27",
                        "contoso.azurecr.io/app:1.0",
                    ])
                )
                    .prop_map(|(n, i)| json!({"name": n, "image": i})),
                1..3
            )
            .prop_map(Value::from)
        ),
        (
            Just(true),
            Just("annotations"),
            prop_oneof![
                pick(&[
                    "WIN001",
                    "WIN003",
                    "WIN007",
                    "WIN011",
                    "WIN502",
                    "WIN001,WIN007",
                    "WIN003,WIN102",
                    "all",
                    "linux-pod-can-land-on-windows"
                ])
                .prop_map(|r| json!({"winlint.io/ignore": r})),
                Just(
                    json!({"winlint.io/ignore": "WIN001", "winlint.io/ignore-reason": "pinned by the node pool"})
                ),
                Just(json!({"experimental.windows.kubernetes.io/isolation-type": "hyperv"})),
            ]
        ),
        (
            Just(true),
            Just("labels"),
            prop_oneof![
                Just(json!({"kubernetes.io/os": "windows"})),
                Just(json!({"kubernetes.io/os": "linux"})),
                Just(json!({"app": "web"})),
            ]
        ),
    ];
    prop::collection::vec(entry, 0..4)
}

/// `object()` with the overlay written into its pod site (a workload's template), and its
/// namespace (the API server sets the request's namespace on the object before admission).
fn adversarial_object() -> impl Strategy<Value = Value> {
    (object(), overlay(), prop::sample::select(NAMESPACES)).prop_map(|(mut obj, overlay, ns)| {
        obj["metadata"]["namespace"] = ns.into();
        let Some((_, tpl)) = workload::pod_kind(&obj) else {
            return obj;
        };
        for (meta, key, value) in overlay {
            let at = format!("{tpl}/{}", if meta { "metadata" } else { "spec" });
            let Some(map) = obj.pointer_mut(&at).and_then(Value::as_object_mut) else {
                continue;
            };
            match (map.get_mut(key), &value) {
                // Merge maps (a selector or annotation next to the ones generated).
                (Some(Value::Object(old)), Value::Object(new)) => {
                    old.extend(new.iter().map(|(k, v)| (k.clone(), v.clone())))
                }
                _ => {
                    map.insert(key.to_string(), value);
                }
            }
        }
        obj
    })
}

fn create_lint(obj: &Value, cfg: &Config, cx: &Context, op: Operation) -> engine::ObjectReport {
    engine::lint_object(obj, cfg, cx, op)
}

/// `after` (when given) is exactly a fresh full lint of `object` as mutated: findings (rule,
/// severity, pointer, message, fix, order), exemptions and classes, compared by their Debug.
fn same_as_fresh_lint(
    what: &str,
    after: &Option<engine::ObjectReport>,
    object: &Value,
    cfg: &Config,
    cx: &Context,
    op: Operation,
) -> Result<(), TestCaseError> {
    if let Some(after) = after {
        let fresh = create_lint(object, cfg, cx, op);
        let (a, f) = (format!("{after:?}"), format!("{fresh:?}"));
        if a != f {
            // Said compactly: the findings of each side, then the classes when they differ.
            let brief = |r: &engine::ObjectReport| {
                let mut s: Vec<String> = r
                    .findings
                    .iter()
                    .map(|x| {
                        format!(
                            "  {} {:?} {} fix={} {}",
                            x.rule.id,
                            x.severity,
                            x.pointer,
                            x.fix.is_some(),
                            x.message.chars().take(100).collect::<String>()
                        )
                    })
                    .collect();
                s.push(format!(
                    "  classes {:?}, suppressed {}, exempted {:?}",
                    r.classes
                        .iter()
                        .map(|c| (c.os, c.strength))
                        .collect::<Vec<_>>(),
                    r.suppressed,
                    r.exempted
                ));
                s.join("\n")
            };
            return Err(TestCaseError::fail(format!(
                "{what} ({op:?}): the mutation's last lint is not the mutated object's full lint\n\
                 --- after (the mutation's last lint):\n{}\n--- fresh lint_object:\n{}\n--- mutated object:\n{}",
                brief(after),
                brief(&fresh),
                serde_json::to_string(object).unwrap()
            )));
        }
    }
    Ok(())
}

/// Property 6's first half: the mutation as `/validate` calls it (the template's own lint
/// reused) and as `/mutate` calls it gives the same object, its patch, and a last lint that is
/// a fresh full lint, in a plain and a `default-os=windows` namespace.
fn both_mutations_relint(obj: &Value, cfg: &Config, cx: &Context) -> Result<(), TestCaseError> {
    let configs = MutationConfigs::new(cfg);
    let report = create_lint(obj, cfg, cx, Operation::Create);
    for probable in [false, true] {
        let mcfg = configs.for_namespace(probable);
        // As /validate calls it (the template's own lint reused) …
        let mut linted = obj.clone();
        let m = mutation::mutate_linted(&mut linted, mcfg, cx, &report);
        same_as_fresh_lint(
            "mutate_linted",
            &m.after,
            &linted,
            cfg,
            cx,
            Operation::Create,
        )?;
        let mut replay = obj.clone();
        prop_assert!(
            json_patch::patch(&mut replay, &m.patch).is_ok(),
            "patch does not apply"
        );
        prop_assert_eq!(&replay, &linted, "the patch is not the mutation");
        // … and as /mutate calls it: the same mutation.
        let mut with = obj.clone();
        let w = mutation::mutate_with(&mut with, mcfg, cx);
        same_as_fresh_lint("mutate_with", &w.after, &with, cfg, cx, Operation::Create)?;
        if !m.patch.is_empty() {
            prop_assert_eq!(&with, &linted, "mutate_with and mutate_linted differ");
        }
    }
    Ok(())
}

/// The errors a lint denies by: rule IDs of its error findings.
fn error_ids(findings: &[Finding]) -> Vec<&'static str> {
    findings
        .iter()
        .filter(|f| f.severity == Severity::Error)
        .map(|f| f.rule.id)
        .collect()
}

proptest! {
    #![proptest_config(pt_config())]

    /// 6. The mutation's last lint (`Mutated::after`, `Guarded::after`), whenever it is given,
    /// is a fresh full lint of the mutated object; the fixer's guard holds against that full
    /// lint (no error by rule the original did not have).
    #[test]
    fn mutation_after_is_the_full_relint(
        obj in adversarial_object(),
        cfg in cluster_config(),
        cx in context(),
    ) {
        both_mutations_relint(&obj, &cfg, &cx)?;
        let configs = MutationConfigs::new(&cfg);
        // The fixer's guard directly, on CREATE, and on UPDATE of a workload (an updated
        // Pod gets no fix).
        let ops: &[Operation] = if workload::pod_kind(&obj).is_some_and(|(k, _)| k != "Pod") {
            &[Operation::Create, Operation::Update]
        } else {
            &[Operation::Create]
        };
        for &op in ops {
            let mcfg = configs.for_namespace(cfg.policy.mutation.probable);
            let report = create_lint(&obj, mcfg, &cx, op);
            let fixer = Fixer { config: mcfg, context: &cx, operation: op, options: FixOptions::WEBHOOK };
            let mut fixed = obj.clone();
            let g = fixer.fix_guarded(&mut fixed, &report);
            same_as_fresh_lint("fix_guarded", &g.after, &fixed, mcfg, &cx, op)?;
            prop_assert_eq!(g.patch.is_empty(), g.after.is_none());
            if !g.patch.is_empty() {
                let before = error_ids(&report.findings);
                let now = error_ids(&create_lint(&fixed, mcfg, &cx, op).findings);
                let new: Vec<_> = now.iter().filter(|id| !before.contains(id)).collect();
                prop_assert!(new.is_empty(), "the guarded fixes added errors {:?} to\n{}", new, fixed);
            }
        }
    }
}

/// A CREATE review of `object` in its own namespace (the request's and the object's agree, as
/// the API server makes them).
fn create_review(object: &Value) -> Vec<u8> {
    let mut v: Value = serde_json::from_slice(&review("CREATE", object, None)).unwrap();
    v["request"]["namespace"] = object["metadata"]["namespace"].clone();
    serde_json::to_vec(&v).unwrap()
}

/// The warning lines `/validate` gives for `findings` (its warning findings, one line each;
/// the no-Windows-node note said once, first), as `admission::warnings` words them.
/// Each within the room that the object's name (`out`'s) leaves, without that name.
fn warning_lines(findings: &[Finding], out: &winlint::admission::Outcome) -> Vec<String> {
    use winlint::admission::warnings::{finding_line_within, label, room_after};
    use winlint::model::placement::UNOBSERVED_NOTE;
    let name = if out.generated {
        format!("{}*", out.name)
    } else {
        out.name.clone()
    };
    let room = room_after(&label(&out.kind, &out.namespace, &name));
    let mut out: Vec<String> = Vec::new();
    for f in findings.iter().filter(|f| f.severity == Severity::Warning) {
        let line = match f.message.split_once(UNOBSERVED_NOTE) {
            Some((a, b)) => finding_line_within(f.rule.id, &format!("{a}{b}"), f, room),
            None => finding_line_within(f.rule.id, &f.message, f, room),
        };
        if !out.contains(&line) {
            out.push(line);
        }
    }
    out
}

/// The lines of `/validate`'s warnings that stand for warning findings (not winlint's own
/// notes, what the pod mutation will add, or warn mode's would-deny lines).
fn finding_warnings(resp: &Value) -> Vec<String> {
    resp["response"]["warnings"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(winlint::admission::warnings::unnamed)
        .filter(|w| {
            !w.starts_with("winlint:")
                && !w.starts_with(winlint::admission::WOULD_DENY)
                && !w.contains("the mutating webhook will")
        })
        .map(str::to_string)
        .collect()
}

fn ids_severities(findings: &[Finding]) -> Vec<(&'static str, Severity)> {
    findings.iter().map(|f| (f.rule.id, f.severity)).collect()
}

proptest! {
    #![proptest_config(pt_config())]

    /// 7. The webhook end to end on CREATE, against an oracle made of public functions:
    /// `/mutate`'s patch applied to the object, then a full `lint_object`, whose errors decide.
    /// A Pod reaches `/validate` as `/mutate` left it; a workload as written, judged by the
    /// pods it will create. The oracle differs from the webhook by design only where the
    /// webhook judges a template as written (no error as written: its pods are admitted
    /// either way; no mutation can take its errors away) and for a DaemonSet's placement
    /// findings (its controller places its pods by the template as written): there the
    /// verdicts must still agree.
    #[test]
    fn webhook_verdict_is_the_full_lint_of_the_mutated_object(
        obj in adversarial_object(),
        cfg in cluster_config(),
        cx in context(),
    ) {
        use winlint::admission::Decision;
        let ns = obj["metadata"]["namespace"].as_str().unwrap().to_string();
        let labels = cx.namespaces.get(&ns).cloned().unwrap_or_default();
        let exempt = labels.get("winlint.io/ignore").is_some_and(|v| v == "true");
        let warn = labels.get("winlint.io/enforcement").is_some_and(|v| v == "warn");
        let cx = Arc::new(cx);
        // /mutate patches workloads only with `mutation.workloads`: on, to get the patch the
        // pods of a template will get (nothing else reads the switch).
        let mut mutate_all = cfg.clone();
        mutate_all.policy.mutation.workloads = true;
        let mutator = Webhook::with_context(mutate_all, cx.clone());
        let validator = Webhook::with_context(cfg.clone(), cx.clone());
        let out = mutator.review(&create_review(&obj), Endpoint::Mutate).unwrap();
        prop_assert!(out.error.is_none(), "/mutate failed: {:?}", out.error);
        let mresp: Value = serde_json::from_slice(&out.body).unwrap();
        let mut patched = obj.clone();
        if let Some(p) = decoded_patch(&mresp) {
            prop_assert!(json_patch::patch(&mut patched, &p).is_ok());
        }
        let is_pod = obj["kind"] == "Pod";
        let validated = if is_pod { &patched } else { &obj };
        let v = validator.review(&create_review(validated), Endpoint::Validate).unwrap();
        prop_assert!(v.error.is_none(), "/validate failed: {:?}", v.error);
        let resp: Value = serde_json::from_slice(&v.body).unwrap();
        if exempt {
            prop_assert!(patched == obj && v.allowed && v.findings.is_empty());
            return Ok(());
        }
        // The oracle.
        let full = engine::lint_object(&patched, &cfg, &cx, Operation::Create).findings;
        let as_written = engine::lint_object(&obj, &cfg, &cx, Operation::Create).findings;
        let oracle: Vec<Finding> = if obj["kind"] == "DaemonSet" {
            let places = |f: &Finding| f.rule.mutation.places_pod;
            full.iter().filter(|f| !places(f)).chain(as_written.iter().filter(|f| places(f))).cloned().collect()
        } else {
            full.clone()
        };
        // What /validate judges by (`engine::judge::as_pods`, its documented rule): a Pod as
        // /mutate left it; a template with errors as written that a mutation can take away
        // (the webhook's fix of an error, not a DaemonSet's placing one, or Hyper-V
        // isolation) by the pods it will create, that is the oracle; any other template as
        // written.
        let written_errors = error_ids(&as_written);
        let daemon = obj["kind"] == "DaemonSet";
        let mcfg = MutationConfigs::new(&cfg);
        let mcfg = mcfg.for_namespace(labels.get("winlint.io/default-os").is_some_and(|v| v == "windows"));
        let removable = mcfg.policy.mutation.hyperv != HyperV::Off
            || as_written.iter().any(|f| {
                f.severity == Severity::Error
                    && f.rule.mutation.recorded_as.is_some()
                    && !(daemon && f.rule.mutation.places_pod)
                    && fix::fix_allowed(f, mcfg)
            });
        let as_pods = is_pod || (!written_errors.is_empty() && removable && patched != obj);
        let judged: &[Finding] = if as_pods { &oracle } else { &as_written };
        prop_assert_eq!(&v.findings, &ids_severities(judged),
            "/validate did not judge by {}\nmutated: {}",
            if as_pods { "the full lint of the mutated object" } else { "the object as written" }, patched);
        let errors = error_ids(judged);
        let oracle_errors = error_ids(&oracle);
        // The mutation never gives a pod an error it did not have (/validate would refuse
        // the pod the webhook made), except by its steps (Hyper-V, the OS label, the Linux
        // guard), which `Fixer::fix_guarded` does not guard: see
        // `regression_mutation_steps_add_errors`.
        let added: Vec<_> = oracle_errors.iter().filter(|id| !written_errors.contains(id)).collect();
        let step = out.patched.iter().any(|n| mutation::STEPS.iter().any(|s| s.name == n));
        prop_assert!(added.is_empty() || step,
            "the mutation ({:?}) added errors {:?}\nmutated: {}", out.patched, added, patched);
        // Where /validate judges a template as written, its verdict can differ from the
        // oracle's by design (not the re-lint: no mutated lint is used). Known cases, in the
        // report and the regression tests below: a template without errors whose mutation
        // adds one (a step); a DaemonSet, whose pods are placed by its template as written;
        // a mutation that takes an error away without being the fix of an error (WIN402's
        // Hyper-V RuntimeClass silencing WIN502; `spec.os` silencing WIN004; the pin to
        // Windows turning WIN008 into WIN507, a warning).
        if !is_pod {
            // UPDATE of a workload (a template edited, here to itself): judged the same way,
            // by its lint on UPDATE (`as_pods` mutates with `mutate_with` then; the pod
            // mutation's patch is the one /mutate gives on CREATE).
            let mut up: Value = serde_json::from_slice(&create_review(&obj)).unwrap();
            up["request"]["operation"] = "UPDATE".into();
            up["request"]["oldObject"] = obj.clone();
            let u = validator
                .review(&serde_json::to_vec(&up).unwrap(), Endpoint::Validate)
                .unwrap();
            prop_assert!(u.error.is_none(), "/validate failed on UPDATE: {:?}", u.error);
            let full_u = engine::lint_object(&patched, &cfg, &cx, Operation::Update).findings;
            let written_u = engine::lint_object(&obj, &cfg, &cx, Operation::Update).findings;
            let oracle_u: Vec<Finding> = if daemon {
                let places = |f: &Finding| f.rule.mutation.places_pod;
                full_u.iter().filter(|f| !places(f)).chain(written_u.iter().filter(|f| places(f))).cloned().collect()
            } else {
                full_u
            };
            let removable_u = mcfg.policy.mutation.hyperv != HyperV::Off
                || written_u.iter().any(|f| {
                    f.severity == Severity::Error
                        && f.rule.mutation.recorded_as.is_some()
                        && !(daemon && f.rule.mutation.places_pod)
                        && fix::fix_allowed(f, mcfg)
                });
            let as_pods_u = !error_ids(&written_u).is_empty() && removable_u && patched != obj;
            let judged_u = if as_pods_u { &oracle_u } else { &written_u };
            prop_assert_eq!(&u.findings, &ids_severities(judged_u),
                "/validate on UPDATE did not judge by {}\nmutated: {}",
                if as_pods_u { "the full lint of the mutated object" } else { "the object as written" }, patched);
            // The template's errors were there before the edit: warned, never denied.
            prop_assert!(u.allowed);
        }
        // The verdict and what it says.
        prop_assert_eq!(v.allowed, errors.is_empty() || warn,
            "allowed {} with errors {:?} (warn mode {})", v.allowed, errors, warn);
        if warn {
            prop_assert_eq!(&v.would_deny, &errors);
        } else {
            prop_assert_eq!(v.decision == Decision::Denied, !errors.is_empty());
        }
        let expected = warning_lines(judged, &v);
        let said = finding_warnings(&resp);
        if said.len() < expected.len() {
            // Cut to MAX_WARNINGS or the API server's size budget: what is said comes first.
            prop_assert_eq!(&said[..], &expected[..said.len()]);
        } else {
            prop_assert_eq!(&said, &expected, "/validate's warnings");
        }
    }
}

/// The admission verdict of `object` (CREATE, in its namespace) and its judged findings.
fn validate(cfg: &Config, cx: &Context, object: &Value) -> (bool, Vec<(&'static str, Severity)>) {
    let w = Webhook::with_context(cfg.clone(), Arc::new(cx.clone()));
    let out = w
        .review(&create_review(object), Endpoint::Validate)
        .unwrap();
    (out.allowed, out.findings)
}

/// `object` as `/mutate` patches it (workloads too), and what it recorded.
fn mutated_by_webhook(cfg: &Config, cx: &Context, object: &Value) -> (Value, Vec<String>) {
    let mut cfg = cfg.clone();
    cfg.policy.mutation.workloads = true;
    let w = Webhook::with_context(cfg, Arc::new(cx.clone()));
    let out = w.review(&create_review(object), Endpoint::Mutate).unwrap();
    let resp: Value = serde_json::from_slice(&out.body).unwrap();
    let mut patched = object.clone();
    if let Some(p) = decoded_patch(&resp) {
        json_patch::patch(&mut patched, &p).unwrap();
    }
    (patched, out.patched)
}

/// Found by `webhook_verdict_is_the_full_lint_of_the_mutated_object` (2026-11-27): a DaemonSet
/// whose image (1809) runs on no node of the target (20348, 26100) under process isolation is
/// denied with `mutation.hyperv: false` (WIN502) but admitted with `auto` when the cluster has
/// no Hyper-V RuntimeClass (Hyper-V cannot help): `auto` makes every error "removable", so the
/// template is judged on the mutated copy, where WIN005's build pin (a placing mutation, which
/// moves none of a DaemonSet's pods) silences WIN502. Its pods land on 20348/26100 nodes and
/// never start. Expected: denied, as with `hyperv: false`. Fixed in WIN005: no pin to a build
/// the target does not have (a Deployment's pods would wait, Pending, on it); WIN502 stands.
#[test]
fn regression_daemonset_admitted_by_a_build_pin_its_pods_do_not_get() {
    let ds = json!({"apiVersion": "apps/v1", "kind": "DaemonSet",
        "metadata": {"name": "agent", "namespace": "default"},
        "spec": {"selector": {"matchLabels": {"app": "agent"}}, "template": {"metadata": {"labels": {"app": "agent"}},
            "spec": {"nodeSelector": {"kubernetes.io/os": "windows"},
                "tolerations": [{"key": "os", "operator": "Equal", "value": "windows", "effect": "NoSchedule"}],
                "containers": [{"name": "agent", "image": "mcr.microsoft.com/powershell:lts-nanoserver-1809"}]}}}});
    let mut cfg = Config::default();
    cfg.target.windows_builds = ["10.0.20348", "10.0.26100"]
        .iter()
        .filter_map(|b| windows::parse_build(b))
        .collect();
    cfg.target.cluster_mixed_builds = true;
    let cx = Context::default();
    assert!(!validate(&cfg, &cx, &ds).0, "denied with hyperv: false");
    cfg.policy.mutation.hyperv = HyperV::Auto;
    let (allowed, findings) = validate(&cfg, &cx, &ds);
    assert!(!allowed, "admitted with hyperv: auto: {findings:?}");
    // A Deployment's pods would be moved by the pin, to nodes of a build the target lacks.
    let mut dep = ds.clone();
    dep["kind"] = "Deployment".into();
    let (allowed, findings) = validate(&cfg, &cx, &dep);
    assert!(
        !allowed,
        "Deployment admitted with hyperv: auto: {findings:?}"
    );
}

/// `/mutate`'s patch of `pod` gives it no error (by rule) its lint as written did not have.
fn assert_mutation_adds_no_error(cfg: &Config, cx: &Context, pod: &Value) {
    let errors =
        |o: &Value| error_ids(&engine::lint_object(o, cfg, cx, Operation::Create).findings);
    let (patched, changed) = mutated_by_webhook(cfg, cx, pod);
    let added: Vec<_> = errors(&patched)
        .into_iter()
        .filter(|id| !errors(pod).contains(id))
        .collect();
    assert!(added.is_empty(), "{changed:?} added {added:?}: {patched}");
}

/// Found by the same property: the mutation steps are not guarded as the rules' fixes are
/// (`Fixer::fix_guarded`: no error the pod did not have). `mutation.hyperv: true` with a
/// configured Hyper-V RuntimeClass whose scheduling pins a build no node has (10.0.17763 on a
/// 10.0.20348 target) gives every Windows pod that class: WIN006, an error the pod did not
/// have, so `/validate` denies the pod `/mutate` made (it would have run without the class).
/// Likewise `mutation.podOSLabel` labels `kubernetes.io/os=windows` a pod (Windows by its
/// windowsOptions) whose required affinity keeps it off Windows nodes: WIN004 (conflicting OS
/// pins) is new. Expected: a step that would add an error is not applied (fixed: the steps are
/// guarded as the fixes are, `engine::fix::adds_error`).
#[test]
fn regression_mutation_steps_add_errors() {
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "namespace": "default"},
        "spec": {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [{"key": "kubernetes.io/os", "operator": "NotIn", "values": ["windows"]}]}]}}},
            "securityContext": {"windowsOptions": {}},
            "containers": [{"name": "app"}]}});
    let mut cfg = Config::default();
    cfg.policy.safe_fixes = false;
    cfg.policy.mutation.pod_os_label = true;
    let cx = Context::default();
    assert_mutation_adds_no_error(&cfg, &cx, &pod);
    // hyperv: true, the configured class pins 10.0.17763, the nodes run 10.0.20348.
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "namespace": "default"},
        "spec": {"containers": [{"name": "app", "image": "mcr.microsoft.com/windows/nanoserver:ltsc2022"}]}});
    let mut cfg = Config::default();
    cfg.policy.mutation.hyperv = HyperV::On;
    cfg.target.hyperv_runtime_class = "hv-2019".into();
    let mut cx = Context::default();
    cx.add(&runtime_classes()[2]);
    assert_mutation_adds_no_error(&cfg, &cx, &pod);
}

/// Found 2026-11-27: a Pod that mixes a Windows image with a Linux-only one runs nowhere
/// (WIN008, an error), but `/mutate` placed it on Windows nodes and declared it Windows (WIN001,
/// WIN007, WIN003), after which WIN008 gave way to WIN507 (a warning) and `/validate`, which
/// judges a Pod as `/mutate` left it, admitted it. `winlint --fix` did the same to the file. The
/// engine now offers no fix that settles the pod's OS while such a finding stands
/// (`engine::withhold_os_fixes`), so both leave the pod as written.
#[test]
fn regression_mixed_os_pod_is_not_made_windows_by_the_mutation() {
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "namespace": "default"},
        "spec": {"containers": [
            {"name": "iis", "image": "mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2022"},
            {"name": "proxy", "image": "docker.io/library/nginx:1.27-alpine"}]}});
    let cfg = Config::default();
    let cx = Context::default();
    let written = error_ids(&engine::lint_object(&pod, &cfg, &cx, Operation::Create).findings);
    assert!(written.contains(&"WIN008"), "{written:?}");
    let (patched, changed) = mutated_by_webhook(&cfg, &cx, &pod);
    let (allowed, findings) = validate(&cfg, &cx, &patched);
    assert!(
        !allowed,
        "{changed:?} made it admissible: {findings:?}: {patched}"
    );
}

// ---------------------------------------------------------------------------------------------
// Adversarial cases around `engine::withhold_os_fixes` (2026-11-27): a pod with an image that
// cannot run on Windows must not be made a Windows pod by anything the webhook does, nor be
// admitted because of what it did.
// ---------------------------------------------------------------------------------------------

/// A Pod mixing IIS (Windows-only) with nginx (Linux-only): it runs nowhere (WIN008).
fn mixed_pod() -> Value {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "namespace": "default"},
        "spec": {"containers": [
            {"name": "iis", "image": "mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2022"},
            {"name": "proxy", "image": "docker.io/library/nginx:1.27-alpine"}]}})
}

/// `pod`'s template as a Deployment's.
fn as_deployment(pod: &Value) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": pod["metadata"]["name"], "namespace": pod["metadata"]["namespace"]},
        "spec": {"selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}, "annotations": pod["metadata"].get("annotations").cloned().unwrap_or(json!({}))},
                "spec": pod["spec"]}}})
}

/// The webhook's verdict on `object` on CREATE: a Pod as `/mutate` leaves it, a workload as
/// written (judged by its pods). With what `/mutate` recorded and the object `/validate` saw.
fn webhook_verdict(
    cfg: &Config,
    cx: &Context,
    object: &Value,
) -> (bool, Vec<(&'static str, Severity)>, Vec<String>, Value) {
    let (patched, changed) = mutated_by_webhook(cfg, cx, object);
    let seen = if object["kind"] == "Pod" {
        patched.clone()
    } else {
        object.clone()
    };
    let (allowed, findings) = validate(cfg, cx, &seen);
    (allowed, findings, changed, patched)
}

/// `pod` is denied, and so is a Deployment of it (judged by its pods: the same mutation, on a
/// copy).
fn assert_denied_as_pod_and_deployment(cfg: &Config, cx: &Context, pod: &Value) {
    for obj in [pod.clone(), as_deployment(pod)] {
        let (allowed, findings, changed, patched) = webhook_verdict(cfg, cx, &obj);
        assert!(
            !allowed,
            "{}: {changed:?} made it admissible: {findings:?}: {patched}",
            obj["kind"]
        );
    }
}

/// `mutation.hyperv: true` gives every Windows pod the configured Hyper-V RuntimeClass, a step
/// after the rules' fixes that `withhold_os_fixes` does not cover. The RuntimeClass is an OS
/// pin (a Selector signal: the pod now declares Windows), so WIN008 gives way to WIN507 (a
/// warning) and `/validate` admits a pod that runs nowhere: the bug of
/// `regression_mixed_os_pod_is_not_made_windows_by_the_mutation`, through a step. Found by
/// the adversarial review of 8a6c458; fixed: `mutation::mutate_linted` runs no Windows step on
/// a withheld pod.
#[test]
fn adversary_hyperv_step_does_not_make_a_mixed_pod_windows() {
    let mut cfg = Config::default();
    cfg.policy.mutation.hyperv = HyperV::On;
    // The configured class, as the cluster has it: it schedules onto Windows nodes.
    let mut cx = Context::default();
    cx.add(&runtime_classes()[0]);
    assert_denied_as_pod_and_deployment(&cfg, &cx, &mixed_pod());
}

/// Same through `hyperv: auto`: an ltsc2019 image on ltsc2022 nodes needs Hyper-V isolation,
/// and the cluster has a Hyper-V RuntimeClass that schedules onto Windows nodes.
#[test]
fn adversary_hyperv_auto_does_not_make_a_mixed_pod_windows() {
    let mut cfg = Config::default();
    cfg.policy.mutation.hyperv = HyperV::Auto;
    cfg.target.windows_builds = windows::parse_build("10.0.20348").into_iter().collect();
    let mut cx = Context::default();
    cx.add(&runtime_classes()[0]);
    let mut pod = mixed_pod();
    pod["spec"]["containers"][0]["image"] = "mcr.microsoft.com/windows/servercore:ltsc2019".into();
    assert_denied_as_pod_and_deployment(&cfg, &cx, &pod);
}

/// WIN402's opt-in fix replaces the legacy Hyper-V annotation with `runtimeClassName`: an OS
/// pin too, though the rule's mutation is not marked `places_pod`. Fixed: a fix recorded as
/// `runtimeClassName` settles the OS (`Mutation::settles_os`), so the engine withholds it.
#[test]
fn adversary_win402_fix_does_not_make_a_mixed_pod_windows() {
    let mut cfg = Config::default();
    cfg.policy.fix_opt_in.insert("WIN402".into());
    let mut cx = Context::default();
    cx.add(&runtime_classes()[0]);
    let mut pod = mixed_pod();
    pod["metadata"]["annotations"] =
        json!({"experimental.windows.kubernetes.io/isolation-type": "hyperv"});
    assert_denied_as_pod_and_deployment(&cfg, &cx, &pod);
}

/// A context whose registry knows `refs`, each published for `platforms` (`os` or
/// `os@10.0.N.M`).
fn registry_context(refs: &[(&str, &[&str])]) -> Context {
    let mut map: ImageFactsMap = BTreeMap::new();
    for (i, (r, platforms)) in refs.iter().enumerate() {
        let platforms = platforms
            .iter()
            .map(|p| {
                let (os, version) = p.split_once('@').map_or((*p, None), |(o, v)| (o, Some(v)));
                ImagePlatform {
                    os: os.into(),
                    architecture: "amd64".into(),
                    variant: None,
                    os_version: version.map(str::to_string),
                    os_features: vec![],
                    digest: None,
                    user: None,
                }
            })
            .collect();
        map.insert(
            winlint::model::image::fact_key(r).into_owned(),
            Arc::new(ImageFacts {
                digest: format!("sha256:{i:064}"),
                list: true,
                platforms,
                user: None,
            }),
        );
    }
    Context {
        images: Some(Arc::new(map)),
        ..Context::default()
    }
}

/// With the registry's facts (`registry.mode`), an image no name heuristic knows can be
/// Linux-only. WIN507 leaves an undeclared pod with a Windows image to WIN008, but WIN008 read
/// the names only: such a pod (IIS + a Linux-only proxy of the team's registry) had no finding
/// that says it runs nowhere, so nothing was withheld; `/mutate` placed it, WIN507 (registry:
/// an error) appeared, the fixer's guard took every fix back, and `/validate` denied the pod
/// as written for WIN001 alone (no OS selector: advice that leads to WIN507), or, with WIN001
/// exempted by its author, admitted it. Fixed: WIN008 asks the registry as WIN507 does.
#[test]
fn adversary_registry_linux_only_image_in_a_mixed_pod() {
    let cfg = Config::default();
    let cx = registry_context(&[
        ("contoso.azurecr.io/proxy:1.0", &["linux"]),
        (
            "mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2022",
            &["windows@10.0.20348.1"],
        ),
    ]);
    let mut pod = mixed_pod();
    pod["spec"]["containers"][1]["image"] = "contoso.azurecr.io/proxy:1.0".into();
    let (allowed, findings, changed, patched) = webhook_verdict(&cfg, &cx, &pod);
    assert!(
        !allowed,
        "{changed:?}: admitted with {findings:?}: {patched}"
    );
    assert!(
        findings.contains(&("WIN008", Severity::Error)),
        "{findings:?}"
    );
    let (allowed, findings, _, _) = webhook_verdict(&cfg, &cx, &as_deployment(&pod));
    assert!(!allowed, "Deployment admitted with {findings:?}");
    pod["metadata"]["annotations"] = json!({"winlint.io/ignore": "WIN001"});
    let (allowed, findings, changed, patched) = webhook_verdict(&cfg, &cx, &pod);
    assert!(
        !allowed,
        "WIN001 exempted: {changed:?}: admitted with {findings:?}: {patched}"
    );
}

/// The other way round: the registry lists a Windows entry for an image whose name the
/// heuristics call Linux-only. WIN507 trusts the registry; WIN008 must too, or `/validate`
/// denies a pod that runs (on Windows nodes).
#[test]
fn adversary_registry_windows_entry_clears_a_linux_name() {
    let cfg = Config::default();
    let cx = registry_context(&[
        (
            "docker.io/library/nginx:1.27-alpine",
            &["linux", "windows@10.0.20348.1"],
        ),
        (
            "mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2022",
            &["windows@10.0.20348.1"],
        ),
    ]);
    let (allowed, findings, changed, patched) = webhook_verdict(&cfg, &cx, &mixed_pod());
    assert!(allowed, "{changed:?}: denied with {findings:?}: {patched}");
}

/// Property 8's invariants on one object: see `withheld_pods_keep_their_os_and_their_denial`.
fn withheld_invariants(obj: &Value, cfg: &Config, cx: &Context) -> Result<(), TestCaseError> {
    let ns = obj["metadata"]["namespace"].as_str().unwrap().to_string();
    let labels = cx.namespaces.get(&ns).cloned().unwrap_or_default();
    if labels.get("winlint.io/ignore").is_some_and(|v| v == "true") {
        return Ok(());
    }
    let warn = labels
        .get("winlint.io/enforcement")
        .is_some_and(|v| v == "warn");
    let probable = labels
        .get("winlint.io/default-os")
        .is_some_and(|v| v == "windows");
    let configs = MutationConfigs::new(cfg);
    let mcfg = configs.for_namespace(probable);
    let report = engine::lint_object(obj, mcfg, cx, Operation::Create);
    if report.withheld.first() != Some(&true) {
        return Ok(());
    }
    let declared =
        |r: &engine::ObjectReport| r.classes.first().and_then(|c| c.declared().map(|s| s.os));
    let (patched, changed) = mutated_by_webhook(cfg, cx, obj);
    let after = engine::lint_object(&patched, cfg, cx, Operation::Create);
    prop_assert_eq!(
        declared(&after),
        declared(&report),
        "{:?} settled the OS of a withheld pod: {}",
        changed,
        patched
    );
    let cannot_run = |findings: &[Finding]| -> Vec<&'static str> {
        findings
            .iter()
            .filter(|f| f.severity == Severity::Error && f.rule.mutation.image_cannot_run)
            .map(|f| f.rule.id)
            .collect()
    };
    let written = engine::lint_object(obj, cfg, cx, Operation::Create);
    let before = cannot_run(&written.findings);
    let now = cannot_run(&after.findings);
    prop_assert!(
        before.iter().all(|id| now.contains(id)),
        "{:?} took away {:?} (left {:?}): {}",
        changed,
        before,
        now,
        patched
    );
    if !before.is_empty() && !warn {
        let seen = if obj["kind"] == "Pod" { &patched } else { obj };
        let (allowed, findings) = validate(cfg, cx, seen);
        prop_assert!(
            !allowed,
            "{:?}: admitted with {:?}: {}",
            changed,
            findings,
            patched
        );
    }
    Ok(())
}

/// Images the registry strategy knows facts for: the overlay's and a few of `IMAGES`.
const FACT_IMAGES: &[&str] = &[
    "nginx:1.27",
    "nginx:1.25",
    "busybox:latest",
    "redis:7.2",
    "contoso.azurecr.io/app:1.0",
    "ghcr.io/example/app:v1.2.3",
    "mcr.microsoft.com/dotnet/runtime:8.0",
    "registry.k8s.io/pause:3.9",
    "mcr.microsoft.com/windows/servercore:ltsc2019",
    "mcr.microsoft.com/windows/servercore:ltsc2022",
];

/// What a registry may say of an image: Linux only, one Windows build, Linux and another
/// Windows build, Windows without `os.version`, no platform at all.
const FACT_PLATFORMS: &[&[&str]] = &[
    &["linux"],
    &["windows@10.0.20348.1"],
    &["linux", "windows@10.0.17763.1"],
    &["windows"],
    &[],
];

/// `context()` with the registry's facts (`registry.mode`) for some of `FACT_IMAGES`.
fn context_with_registry() -> impl Strategy<Value = Context> {
    (
        context(),
        prop::collection::vec((0..FACT_IMAGES.len(), 0..FACT_PLATFORMS.len()), 0..5),
    )
        .prop_map(|(mut cx, facts)| {
            let refs: Vec<(&str, &[&str])> = facts
                .into_iter()
                .map(|(i, p)| (FACT_IMAGES[i], FACT_PLATFORMS[p]))
                .collect();
            cx.images = registry_context(&refs).images;
            cx
        })
}

proptest! {
    #![proptest_config(pt_config())]

    /// 8. A pod site whose OS fixes the engine withholds (`ObjectReport::withheld`: an image
    /// that cannot run on Windows, its own fix not applied) keeps the OS it declares through
    /// `/mutate` (no fix, no step settles it: the pod is left as written as far as its OS
    /// goes), and the errors that say its image cannot run survive the mutation, so
    /// `/validate` denies it (a Pod as `/mutate` left it, a workload by its pods) unless the
    /// namespace only warns.
    #[test]
    fn withheld_pods_keep_their_os_and_their_denial(
        obj in adversarial_object(),
        cfg in cluster_config(),
        cx in context(),
    ) {
        withheld_invariants(&obj, &cfg, &cx)?;
    }

    /// 9. Property 8 and property 6's re-lint with the registry's facts: images Linux-only,
    /// Windows or both whatever their names (WIN008, WIN507 and the build rules decide by
    /// them), so the incremental lint carries findings the registry decided.
    #[test]
    fn registry_facts_keep_the_relint_and_the_withholding(
        obj in adversarial_object(),
        cfg in cluster_config(),
        cx in context_with_registry(),
    ) {
        withheld_invariants(&obj, &cfg, &cx)?;
        both_mutations_relint(&obj, &cfg, &cx)?;
    }
}

/// `pod`'s template in each pod-bearing kind (a Pod itself first).
fn in_every_kind(pod: &Value) -> Vec<Value> {
    let dep = as_deployment(pod);
    let mut out = vec![pod.clone(), dep.clone()];
    for kind in ["DaemonSet", "StatefulSet", "ReplicaSet"] {
        let mut o = dep.clone();
        o["kind"] = kind.into();
        out.push(o);
    }
    let tpl = dep["spec"]["template"].clone();
    out.push(
        json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": dep["metadata"],
        "spec": {"template": tpl}}),
    );
    out.push(
        json!({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": dep["metadata"],
        "spec": {"schedule": "* * * * *", "jobTemplate": {"spec": {"template": tpl}}}}),
    );
    out
}

/// The mixed-OS pod in every kind, in a plain namespace and in one labelled
/// `winlint.io/default-os=windows` (probable pods mutated), with a Linux-only image in a
/// container, an init container, or the certain Linux-only tag (WIN507 would be an error),
/// under every Hyper-V policy: denied on CREATE, and `/mutate` declares no OS.
#[test]
fn adversary_mixed_pods_are_denied_in_every_kind_and_namespace() {
    let mut init = mixed_pod();
    let proxy = init["spec"]["containers"][1].clone();
    init["spec"]["containers"] = json!([init["spec"]["containers"][0]]);
    init["spec"]["initContainers"] = json!([proxy]);
    let mut certain = mixed_pod();
    certain["spec"]["containers"][1]["image"] = "mcr.microsoft.com/dotnet/aspnet:8.0".into();
    let mut cx = Context::default();
    cx.add(&runtime_classes()[0]);
    cx.add(&json!({"apiVersion": "v1", "kind": "Namespace",
        "metadata": {"name": "web", "labels": {"winlint.io/default-os": "windows"}}}));
    for hyperv in [HyperV::Off, HyperV::On, HyperV::Auto] {
        let mut cfg = Config::default();
        cfg.policy.mutation.hyperv = hyperv;
        cfg.policy.fix_opt_in.insert("WIN402".into());
        for pod in [mixed_pod(), init.clone(), certain.clone()] {
            for ns in ["default", "web"] {
                let mut pod = pod.clone();
                pod["metadata"]["namespace"] = ns.into();
                for obj in in_every_kind(&pod) {
                    let (allowed, findings, changed, patched) = webhook_verdict(&cfg, &cx, &obj);
                    assert!(
                        !allowed,
                        "{hyperv:?} {ns} {}: {changed:?} admitted with {findings:?}: {patched}",
                        obj["kind"]
                    );
                    let site = &workload::pod_sites(&patched)[0];
                    assert!(
                        site.str("/os/name").is_none()
                            && site.get("/nodeSelector").is_none()
                            && site.get("/runtimeClassName").is_none(),
                        "{hyperv:?} {ns} {}: {changed:?} settled the OS: {patched}",
                        obj["kind"]
                    );
                }
            }
        }
    }
}

/// `winlint.io/ignore: WIN008` is the pod author's word that the mix is meant (the exemption
/// policy decides whether it may be given). Nothing withholds the OS fixes then, but placing
/// the pod on Windows would add WIN507's error (a Linux-only image beside a Windows one: the
/// same fact WIN008 reported), so the mutation's guard leaves it as written and `/validate`
/// denies it for WIN001 (no OS selector). Exempting WIN507 too is the author's full word: the
/// mutation makes it a Windows pod and it is admitted.
#[test]
fn adversary_exempting_the_mix_takes_win008_and_win507() {
    let cfg = Config::default();
    let cx = Context::default();
    let mut pod = mixed_pod();
    pod["metadata"]["annotations"] = json!({"winlint.io/ignore": "WIN008"});
    let (allowed, findings, changed, patched) = webhook_verdict(&cfg, &cx, &pod);
    assert!(!allowed, "{changed:?}: {findings:?}: {patched}");
    assert!(
        findings.contains(&("WIN001", Severity::Error)),
        "{findings:?}"
    );
    assert!(patched["spec"].get("os").is_none(), "{patched}");
    pod["metadata"]["annotations"] = json!({"winlint.io/ignore": "WIN008,WIN507"});
    let (allowed, findings, changed, patched) = webhook_verdict(&cfg, &cx, &pod);
    assert!(allowed, "{changed:?}: {findings:?}: {patched}");
    assert_eq!(patched["spec"]["os"]["name"], "windows");
}

/// WIN507's opt-in fix allowed: the Linux-only tag is replaced in the same pass as the placing
/// fixes (nothing is withheld: the image's own fix is applied), and the pod `/mutate` makes is
/// a Windows pod with the Windows tag that `/validate` admits; `winlint --fix`'s fixer makes
/// the same object. With a second Linux-only image that has no fix the pod is left unplaced
/// (withheld) and denied.
#[test]
fn adversary_win507_fix_and_placing_in_one_pass() {
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "namespace": "default"},
        "spec": {"securityContext": {"windowsOptions": {"runAsUserName": "ContainerUser"}},
            "containers": [{"name": "app", "image": "mcr.microsoft.com/dotnet/aspnet:8.0"}]}});
    let mut cfg = Config::default();
    cfg.policy.fix_opt_in.insert("WIN507".into());
    let cx = Context::default();
    let (allowed, findings, changed, patched) = webhook_verdict(&cfg, &cx, &pod);
    assert!(allowed, "{changed:?}: {findings:?}: {patched}");
    let spec = &patched["spec"];
    assert_eq!(
        spec["containers"][0]["image"],
        "mcr.microsoft.com/dotnet/aspnet:8.0-nanoserver-ltsc2022"
    );
    assert_eq!(
        spec["nodeSelector"]["kubernetes.io/os"], "windows",
        "{patched}"
    );
    assert_eq!(spec["os"]["name"], "windows", "{patched}");
    let mut fixed = pod.clone();
    fix_in_place(&mut fixed, &cfg);
    fixed["metadata"] = patched["metadata"].clone();
    assert_eq!(fixed, patched, "--fix and /mutate differ");
    // A busybox sidecar has no fix: nothing settles the OS, the pod is denied.
    let mut two = pod.clone();
    two["spec"]["containers"]
        .as_array_mut()
        .unwrap()
        .push(json!({"name": "side", "image": "busybox:1.36"}));
    let (allowed, findings, changed, patched) = webhook_verdict(&cfg, &cx, &two);
    assert!(!allowed, "{changed:?}: {findings:?}: {patched}");
    assert!(
        patched["spec"].get("nodeSelector").is_none() && patched["spec"].get("os").is_none(),
        "{patched}"
    );
}

/// Found by the adversarial review of 8a6c458: the pod of
/// `regression_mixed_os_pod_is_not_made_windows_by_the_mutation` (IIS + nginx, which runs
/// nowhere) was admitted when its author added the one line the mutation no longer adds,
/// `nodeSelector: {kubernetes.io/os: windows}` (or, with the tolerations and `spec.os`, the
/// whole Windows pinning). A declared OS silences WIN008 (its summary: "no declared OS"), and
/// WIN507, which then reported nginx, was a warning for the Docker Hub names. The same two
/// images were an error undeclared and a warning declared, so a user could shape the object
/// into admission. WIN507 is now an error for a regular or init container next to a
/// Windows-only image (the evidence WIN008 calls certain), a warning for an ephemeral one.
#[test]
fn adversary_declared_mixed_pod_is_denied() {
    let cfg = Config::default();
    let cx = Context::default();
    let mut pod = mixed_pod();
    pod["spec"]["nodeSelector"] = json!({"kubernetes.io/os": "windows"});
    assert_denied_as_pod_and_deployment(&cfg, &cx, &pod);
    pod["spec"]["os"] = json!({"name": "windows"});
    pod["spec"]["tolerations"] =
        json!([{"key": "os", "operator": "Equal", "value": "windows", "effect": "NoSchedule"}]);
    assert_denied_as_pod_and_deployment(&cfg, &cx, &pod);
}

/// `winlint --fix` on a `List` holding the mixed-OS pod (with the legacy Hyper-V annotation,
/// WIN402's fix opted in) and a Windows pod with no OS selector: the fixes are withheld for
/// the first item only (one site each), the second is placed. Fails before 8274d58 (WIN402's
/// fix made the first item a Windows pod in the file too).
#[test]
fn adversary_cli_fix_of_a_list_withholds_per_item() {
    let yaml = "apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Pod
  metadata:
    name: mixed
    annotations:
      experimental.windows.kubernetes.io/isolation-type: hyperv
  spec:
    containers:
    - name: iis
      image: mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2022
    - name: proxy
      image: nginx:1.27
- apiVersion: v1
  kind: Pod
  metadata:
    name: iis
  spec:
    containers:
    - name: iis
      image: mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2022
";
    let mut cfg = Config::default();
    cfg.policy.fix_opt_in.insert("WIN402".into());
    let out = winlint::cli::fix_text(yaml, &cfg, &Context::default()).expect("fixes");
    let text = out.text.expect("the second pod is fixed");
    let (mixed, iis) = text.split_once("name: iis\n  spec:").expect("both items");
    assert!(
        !mixed.contains("nodeSelector")
            && !mixed.contains("runtimeClassName")
            && !mixed.contains("os:")
            && mixed.contains("isolation-type: hyperv"),
        "the mixed pod was changed:\n{text}"
    );
    assert!(iis.contains("kubernetes.io/os: windows"), "{text}");
}
