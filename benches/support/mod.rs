//! Generators shared by the benches: AdmissionReviews of a given size and a corpus of mixed
//! manifests. Deterministic (a small xorshift, no `rand`), so every run measures the same input.
#![allow(dead_code)]

use serde_json::{Value, json};

/// xorshift64*: deterministic, dependency-free.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    pub fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
    pub fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len())]
    }
}

pub const WINDOWS_IMAGES: &[&str] = &[
    "mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2022",
    "mcr.microsoft.com/windows/servercore:ltsc2019",
    "mcr.microsoft.com/windows/nanoserver:ltsc2022",
    "mcr.microsoft.com/dotnet/framework/aspnet:4.8-windowsservercore-ltsc2022",
    "mcr.microsoft.com/dotnet/aspnet:8.0-nanoserver-ltsc2022",
    "mcr.microsoft.com/powershell:lts-nanoserver-1809",
    "python:3.12-windowsservercore-ltsc2022",
];

pub const LINUX_IMAGES: &[&str] = &[
    "nginx:1.25",
    "docker.io/library/redis:7-alpine",
    "busybox:1.36",
    "ghcr.io/example/api:v2.3.1",
    "registry.k8s.io/pause:3.10",
    "quay.io/prometheus/node-exporter:v1.8.2",
    "postgres:16",
];

/// A Windows container with `env` environment variables.
fn windows_container(i: usize, env: usize) -> Value {
    let env: Vec<Value> = (0..env)
        .map(|e| json!({"name": format!("APP_SETTING_{i}_{e:05}"), "value": format!("value-{e:08}-for-container-{i}")}))
        .collect();
    json!({
        "name": format!("app-{i}"),
        "image": WINDOWS_IMAGES[i % WINDOWS_IMAGES.len()],
        "imagePullPolicy": "IfNotPresent",
        "ports": [{"containerPort": 80 + i, "protocol": "TCP"}],
        "env": env,
        "resources": {"limits": {"cpu": "1", "memory": "1Gi"}, "requests": {"cpu": "250m", "memory": "256Mi"}},
        "securityContext": {"windowsOptions": {"runAsUserName": "ContainerUser"}},
        "volumeMounts": [
            {"name": "kube-api-access-x7k2p", "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "readOnly": true},
            {"name": "logs", "mountPath": "C:\\logs"}
        ],
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File"
    })
}

/// A Windows Pod as the API server sends it (ServiceAccount admission done), missing the
/// toleration so `/mutate` has work to do, with `containers` containers of `env` variables.
pub fn windows_pod(containers: usize, env: usize, label: &str) -> Value {
    json!({
        "kind": "Pod",
        "apiVersion": "v1",
        "metadata": {
            "name": "iis-7d9f8",
            "generateName": "iis-",
            "namespace": "web",
            "uid": "a3e0c2de-5f1b-4d4e-9d62-1c2c3f4a5b6c",
            "creationTimestamp": null,
            "labels": {"app": "iis", "tier": label, "pod-template-hash": "7d9f8"},
            "annotations": {"kubernetes.io/psp": "eks.privileged"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "iis-7d9f8", "uid": "b1", "controller": true, "blockOwnerDeletion": true}]
        },
        "spec": {
            "volumes": [
                {"name": "logs", "emptyDir": {}},
                {"name": "kube-api-access-x7k2p", "projected": {"defaultMode": 420, "sources": [
                    {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                    {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
                    {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}}
                ]}}
            ],
            "containers": (0..containers).map(|i| windows_container(i, env)).collect::<Vec<_>>(),
            "restartPolicy": "Always",
            "terminationGracePeriodSeconds": 30,
            "dnsPolicy": "ClusterFirst",
            "nodeSelector": {"kubernetes.io/os": "windows"},
            "serviceAccountName": "default",
            "serviceAccount": "default",
            "securityContext": {},
            "schedulerName": "default-scheduler",
            "tolerations": [
                {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
                {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}
            ],
            "priority": 0,
            "enableServiceLinks": true,
            "preemptionPolicy": "PreemptLowerPriority"
        },
        "status": {}
    })
}

/// An AdmissionReview request whose pod is about `target` bytes: CREATE (object) or UPDATE
/// (object + oldObject, each about `target`, as the API server sends both in full).
pub fn review(target: usize, update: bool) -> Vec<u8> {
    // ~70 bytes per env var; 1 container up to 5 KB, then up to 10 containers.
    let containers = if target <= 8_000 { 2 } else { 10 };
    let base = serde_json::to_vec(&windows_pod(containers, 0, "a"))
        .unwrap()
        .len();
    let env = target.saturating_sub(base) / (containers * 72);
    let object = windows_pod(containers, env, "frontend");
    let mut req = json!({
        "uid": "705ab4f5-6393-11e8-b7cc-42010a800002",
        "kind": {"group": "", "version": "v1", "kind": "Pod"},
        "resource": {"group": "", "version": "v1", "resource": "pods"},
        "requestKind": {"group": "", "version": "v1", "kind": "Pod"},
        "requestResource": {"group": "", "version": "v1", "resource": "pods"},
        "name": "iis-7d9f8",
        "namespace": "web",
        "operation": if update { "UPDATE" } else { "CREATE" },
        "userInfo": {"username": "system:serviceaccount:kube-system:replicaset-controller", "groups": ["system:serviceaccounts", "system:authenticated"]},
        "object": object,
        "oldObject": null,
        "dryRun": false,
        "options": {"kind": if update { "UpdateOptions" } else { "CreateOptions" }, "apiVersion": "meta.k8s.io/v1"}
    });
    if update {
        req["oldObject"] = windows_pod(containers, env, "backend");
    }
    serde_json::to_vec(&json!({
        "kind": "AdmissionReview",
        "apiVersion": "admission.k8s.io/v1",
        "request": req
    }))
    .unwrap()
}

/// The real AdmissionReviews captured from a kube-apiserver: (name, endpoint path, body).
pub fn real_reviews() -> Vec<(String, String, Vec<u8>)> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/admission");
    let mut out = Vec::new();
    let entries = std::fs::read_dir(&dir).expect("testdata/admission holds the captured reviews");
    let mut paths: Vec<_> = entries.flatten().map(|e| e.path()).collect();
    paths.sort();
    for p in paths {
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        let Some(stem) = name.strip_suffix(".json") else {
            continue;
        };
        if stem.ends_with(".meta") {
            continue;
        }
        let meta: Value = std::fs::read(p.with_file_name(format!("{stem}.meta.json")))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or(Value::Null);
        let path = meta["path"].as_str().unwrap_or("/validate");
        let path = path.split('?').next().unwrap_or(path).to_string();
        out.push((stem.to_string(), path, std::fs::read(&p).unwrap()));
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Manifest corpus
// ---------------------------------------------------------------------------------------------

const KINDS: &[(&str, &str)] = &[
    ("Deployment", "apps/v1"),
    ("StatefulSet", "apps/v1"),
    ("DaemonSet", "apps/v1"),
    ("ReplicaSet", "apps/v1"),
    ("Job", "batch/v1"),
    ("CronJob", "batch/v1"),
    ("Pod", "v1"),
    ("PodTemplate", "v1"),
    ("ReplicationController", "v1"),
];

fn yaml_container(r: &mut Rng, windows: bool, i: usize) -> String {
    let image = if windows {
        r.pick(WINDOWS_IMAGES)
    } else {
        r.pick(LINUX_IMAGES)
    };
    let mut s = format!("- name: c{i}\n  image: {image}\n");
    s.push_str("  ports:\n  - containerPort: 8080\n    protocol: TCP\n");
    if r.chance(60) {
        s.push_str("  env:\n");
        for e in 0..r.below(6) + 1 {
            let name = if windows && r.chance(20) {
                format!("Logging:LogLevel:Item{e}")
            } else {
                format!("SETTING_{e}")
            };
            s.push_str(&format!("  - name: {name}\n    value: \"v{e}\"\n"));
        }
    }
    if r.chance(50) {
        s.push_str("  resources:\n    requests:\n      cpu: 100m\n      memory: 128Mi\n    limits:\n      memory: 256Mi\n");
    }
    if windows {
        if r.chance(30) {
            s.push_str(
                "  securityContext:\n    windowsOptions:\n      runAsUserName: ContainerUser\n",
            );
        } else if r.chance(15) {
            s.push_str("  securityContext:\n    runAsUser: 1000\n    privileged: false\n");
        }
        if r.chance(40) {
            s.push_str("  volumeMounts:\n  - name: data\n    mountPath: C:\\data\n");
        }
    } else {
        if r.chance(50) {
            s.push_str("  securityContext:\n    runAsNonRoot: true\n    allowPrivilegeEscalation: false\n    capabilities:\n      drop: [\"ALL\"]\n    readOnlyRootFilesystem: true\n");
        }
        if r.chance(40) {
            s.push_str("  volumeMounts:\n  - name: data\n    mountPath: /data\n");
        }
    }
    s
}

fn indent(text: &str, n: usize) -> String {
    let pad = " ".repeat(n);
    text.lines()
        .map(|l| {
            if l.is_empty() {
                String::new()
            } else {
                format!("{pad}{l}")
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

fn yaml_pod_spec(r: &mut Rng, windows: bool) -> String {
    let mut s = String::new();
    if windows {
        match r.below(4) {
            0 => s.push_str("nodeSelector:\n  kubernetes.io/os: windows\n"),
            1 => s.push_str("nodeSelector:\n  kubernetes.io/os: windows\ntolerations:\n- key: os\n  operator: Equal\n  value: windows\n  effect: NoSchedule\n"),
            2 => s.push_str("os:\n  name: windows\nnodeSelector:\n  kubernetes.io/os: windows\n  node.kubernetes.io/windows-build: 10.0.20348\n"),
            _ => {} // image evidence only
        }
        if r.chance(10) {
            s.push_str("hostNetwork: true\nsecurityContext:\n  windowsOptions:\n    hostProcess: true\n    runAsUserName: \"NT AUTHORITY\\\\SYSTEM\"\n");
        }
    } else {
        if r.chance(50) {
            s.push_str("nodeSelector:\n  kubernetes.io/os: linux\n");
        }
        if r.chance(40) {
            s.push_str("securityContext:\n  runAsNonRoot: true\n  fsGroup: 2000\n  seccompProfile:\n    type: RuntimeDefault\n");
        }
    }
    s.push_str("containers:\n");
    for i in 0..r.below(3) + 1 {
        s.push_str(&yaml_container(r, windows, i));
    }
    if r.chance(50) {
        s.push_str("volumes:\n");
        if windows {
            match r.below(3) {
                0 => s.push_str("- name: data\n  emptyDir: {}\n"),
                1 => s.push_str("- name: data\n  hostPath:\n    path: C:\\var\\data\n    type: DirectoryOrCreate\n"),
                _ => s.push_str("- name: data\n  secret:\n    secretName: app-tls\n    defaultMode: 0400\n"),
            }
        } else {
            match r.below(3) {
                0 => s.push_str("- name: data\n  emptyDir: {}\n"),
                1 => s.push_str("- name: data\n  persistentVolumeClaim:\n    claimName: data\n"),
                _ => {
                    s.push_str("- name: data\n  configMap:\n    name: app\n    defaultMode: 0644\n")
                }
            }
        }
    }
    s
}

/// One resource as YAML (no leading `---`). About 1 in 3 is Windows.
pub fn yaml_resource(r: &mut Rng, n: usize) -> String {
    let windows = r.chance(35);
    let (kind, api) = *r.pick(KINDS);
    let name = format!("{}-{n}", if windows { "win" } else { "app" });
    let mut s = format!(
        "apiVersion: {api}\nkind: {kind}\nmetadata:\n  name: {name}\n  namespace: team-{}\n  labels:\n    app: {name}\n",
        n % 17
    );
    let spec = yaml_pod_spec(r, windows);
    let template = format!(
        "metadata:\n  labels:\n    app: {name}\nspec:\n{}",
        indent(&spec, 2)
    );
    match kind {
        "Pod" => s.push_str(&format!("spec:\n{}", indent(&spec, 2))),
        "PodTemplate" => s.push_str(&format!("template:\n{}", indent(&template, 2))),
        "CronJob" => s.push_str(&format!(
            "spec:\n  schedule: \"*/5 * * * *\"\n  jobTemplate:\n    spec:\n      template:\n{}",
            indent(&template, 8)
        )),
        "Job" => s.push_str(&format!(
            "spec:\n  backoffLimit: 2\n  template:\n{}",
            indent(&template, 4)
        )),
        _ => s.push_str(&format!(
            "spec:\n  replicas: 2\n  selector:\n    matchLabels:\n      app: {name}\n  template:\n{}",
            indent(&template, 4)
        )),
    }
    s
}

/// Also a few non-pod objects (Service, ConfigMap) the linter must skip.
pub fn yaml_other(r: &mut Rng, n: usize) -> String {
    if r.chance(50) {
        format!(
            "apiVersion: v1\nkind: Service\nmetadata:\n  name: svc-{n}\nspec:\n  selector:\n    app: app-{n}\n  ports:\n  - port: 80\n    targetPort: 8080\n"
        )
    } else {
        format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-{n}\ndata:\n  appsettings.json: |\n    {{\"Logging\": {{\"LogLevel\": {{\"Default\": \"Information\"}}}}}}\n"
        )
    }
}

/// Write `resources` manifests (≈90 % pod-bearing, ≈10 % Service/ConfigMap) into `dir`, 1–8
/// documents per file. Returns (files, resources).
pub fn write_corpus(dir: &std::path::Path, resources: usize, seed: u64) -> (usize, usize) {
    std::fs::create_dir_all(dir).unwrap();
    let mut r = Rng::new(seed);
    let (mut n, mut files) = (0, 0);
    while n < resources {
        let docs = (r.below(8) + 1).min(resources - n);
        let mut text = String::new();
        for d in 0..docs {
            if d > 0 || r.chance(30) {
                text.push_str("---\n");
            }
            if r.chance(10) {
                text.push_str(&yaml_other(&mut r, n));
            } else {
                text.push_str(&yaml_resource(&mut r, n));
            }
            n += 1;
        }
        let sub = dir.join(format!("team-{:02}", files % 20));
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::write(sub.join(format!("m{files:05}.yaml")), text).unwrap();
        files += 1;
    }
    (files, n)
}
