//! The Helm chart `charts/winlint`, checked without Helm (not installable from the registries
//! this project uses): values.yaml is valid against values.schema.json, every `.Values.…` the
//! templates use exists, the template actions are balanced, the rendered `config` is a valid
//! `winlint.yaml`, and the webhook settings match the catalogue and `winlint manifests`.
//! When `helm` is on PATH, `helm lint` and `helm template` run too and the rendered objects
//! are parsed as Kubernetes types.

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::{Value, json};

fn read(rel: &str) -> String {
    let p = chart().join(rel);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

#[path = "yaml_support/mod.rs"]
mod yaml_support;

mod skip_support;
use yaml_support::yaml_docs;

mod chart_support;
use chart_support::{chart, helm, helm_template};

fn values() -> Value {
    yaml_docs(&read("values.yaml")).remove(0)
}

fn schema() -> Value {
    serde_json::from_str(&read("values.schema.json")).expect("values.schema.json is JSON")
}

/// The subset of JSON Schema the chart's schema uses (type, enum, properties,
/// additionalProperties, required, items, minimum, maximum, exclusiveMinimum, minLength,
/// pattern). Returns the violations.
fn validate(v: &Value, s: &Value, at: &str, out: &mut Vec<String>) {
    if let Some(t) = s.get("type") {
        let types: Vec<&str> = match t {
            Value::String(x) => vec![x.as_str()],
            Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
            _ => vec![],
        };
        let ok = types.iter().any(|t| match *t {
            "object" => v.is_object(),
            "array" => v.is_array(),
            "string" => v.is_string(),
            "boolean" => v.is_boolean(),
            "integer" => v.is_i64() || v.is_u64(),
            "number" => v.is_number(),
            "null" => v.is_null(),
            _ => false,
        });
        if !ok {
            out.push(format!("{at}: {v} is not {types:?}"));
            return;
        }
    }
    if let Some(e) = s.get("enum").and_then(Value::as_array)
        && !e.contains(v)
    {
        out.push(format!("{at}: {v} not in {e:?}"));
    }
    if let (Some(n), Some(min)) = (v.as_f64(), s.get("minimum").and_then(Value::as_f64))
        && n < min
    {
        out.push(format!("{at}: {n} < {min}"));
    }
    if let (Some(n), Some(max)) = (v.as_f64(), s.get("maximum").and_then(Value::as_f64))
        && n > max
    {
        out.push(format!("{at}: {n} > {max}"));
    }
    if let (Some(n), Some(min)) = (
        v.as_f64(),
        s.get("exclusiveMinimum").and_then(Value::as_f64),
    ) && n <= min
    {
        out.push(format!("{at}: {n} <= {min}"));
    }
    if let Some(st) = v.as_str() {
        if let Some(min) = s.get("minLength").and_then(Value::as_u64)
            && (st.chars().count() as u64) < min
        {
            out.push(format!("{at}: shorter than {min}"));
        }
        if let Some(p) = s.get("pattern").and_then(Value::as_str)
            && !regex::Regex::new(p).unwrap().is_match(st)
        {
            out.push(format!("{at}: {st:?} does not match {p}"));
        }
    }
    if let Some(m) = v.as_object() {
        let props = s.get("properties").and_then(Value::as_object);
        for r in s
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if !m.contains_key(r.as_str().unwrap()) {
                out.push(format!("{at}: required {r} missing"));
            }
        }
        for (k, val) in m {
            let sub = props.and_then(|p| p.get(k));
            match (sub, s.get("additionalProperties")) {
                (Some(sub), _) => validate(val, sub, &format!("{at}.{k}"), out),
                (None, Some(Value::Bool(false))) => out.push(format!("{at}: unknown key {k:?}")),
                (None, Some(sub @ Value::Object(_))) => {
                    validate(val, sub, &format!("{at}.{k}"), out)
                }
                _ => {}
            }
        }
    }
    if let (Some(a), Some(items)) = (v.as_array(), s.get("items")) {
        for (i, x) in a.iter().enumerate() {
            validate(x, items, &format!("{at}[{i}]"), out);
        }
    }
}

fn template_files() -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = std::fs::read_dir(chart().join("templates"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read_to_string(&p).unwrap(),
            )
        })
        .collect();
    out.sort();
    out
}

fn chart_metadata() {
    let c = yaml_docs(&read("Chart.yaml")).remove(0);
    assert_eq!(c["apiVersion"], "v2");
    assert_eq!(c["name"], "winlint");
    assert!(c["version"].is_string() && c["appVersion"].is_string());
}

fn values_are_valid_against_the_schema() {
    let mut errs = Vec::new();
    validate(&values(), &schema(), "values", &mut errs);
    assert!(errs.is_empty(), "{errs:#?}");
    // The validator is not vacuous.
    let mut bad = values();
    bad["webhook"]["timeoutSeconds"] = 30.into();
    bad["webhook"]["failurePolicy"] = "Maybe".into();
    bad["surprise"] = true.into();
    let mut errs = Vec::new();
    validate(&bad, &schema(), "values", &mut errs);
    assert_eq!(errs.len(), 3, "{errs:#?}");
}

fn templates_only_use_defined_values() {
    let vals = values();
    let re = regex::Regex::new(r"\.Values((?:\.[A-Za-z_][A-Za-z0-9_]*)+)").unwrap();
    let mut missing = BTreeSet::new();
    let mut used = 0;
    for (name, text) in template_files() {
        for cap in re.captures_iter(&text) {
            used += 1;
            let path = &cap[1];
            let mut cur = &vals;
            for key in path.split('.').skip(1) {
                match cur.get(key) {
                    Some(v) => cur = v,
                    None => {
                        missing.insert(format!("{name}: .Values{path}"));
                        break;
                    }
                }
            }
        }
    }
    assert!(used > 20);
    assert!(missing.is_empty(), "{missing:#?}");
}

fn template_actions_are_balanced() {
    let open = regex::Regex::new(r"\{\{-?[ ]*(if|range|with|define)[ (]").unwrap();
    let end = regex::Regex::new(r"\{\{-?[ ]*end[ ]*-?\}\}").unwrap();
    for (name, text) in template_files() {
        assert_eq!(
            text.matches("{{").count(),
            text.matches("}}").count(),
            "{name}: unbalanced braces"
        );
        assert_eq!(
            open.find_iter(&text).count(),
            end.find_iter(&text).count(),
            "{name}: if/range/with/define vs end"
        );
    }
}

fn the_config_values_are_a_valid_winlint_yaml() {
    let mut cfg = values()["config"].clone();
    // What the chart fills in from .Capabilities.KubeVersion.
    cfg["target"]["kubernetesVersion"] = "1.32".into();
    let text = serde_json::to_string(&cfg).unwrap();
    let c = winlint::config::Config::from_yaml(&text, "values.yaml config").unwrap();
    assert_eq!(
        c.target.kubernetes,
        winlint::config::KubeVersion::new(1, 32)
    );
    let helpers = read("templates/_helpers.tpl");
    assert!(helpers.contains(".Capabilities.KubeVersion"));
}

fn webhook_settings_match_the_catalogue_and_winlint_manifests() {
    let wh = read("templates/webhooks.yaml");
    let helpers = read("templates/_helpers.tpl");
    for needle in [
        "sideEffects: None",
        "matchPolicy: Equivalent",
        "reinvocationPolicy: IfNeeded",
        "failurePolicy: {{ $.Values.webhook.failurePolicy }}",
        "timeoutSeconds: {{ $.Values.webhook.timeoutSeconds }}",
        "admissionReviewVersions: [\"v1\", \"v1beta1\"]",
        "genCA",
        "genSignedCert",
        "cert-manager.io/inject-ca-from",
    ] {
        assert!(wh.contains(needle), "webhooks.yaml lacks {needle}");
    }
    // `winlint audit` and `--cluster` find the pod webhook by its name.
    let name = format!("- name: {}", winlint::cluster::webhooks::MUTATING_WEBHOOK);
    assert!(wh.contains(&name), "webhooks.yaml lacks {name}");
    assert_eq!(
        wh.matches("include \"winlint.namespaceSelector\"").count(),
        2
    );
    for needle in [
        "kubernetes.io/metadata.name",
        "\"kube-system\" .Release.Namespace",
        "winlint.io/ignore",
    ] {
        assert!(helpers.contains(needle), "namespaceSelector lacks {needle}");
    }
    // timeoutSeconds ≤ 5 is enforced by the schema.
    assert_eq!(
        schema()["properties"]["webhook"]["properties"]["timeoutSeconds"]["maximum"],
        5
    );
    // The resources each webhook sees are the ones `winlint manifests` uses.
    let res_re = regex::Regex::new(r"resources: \[([^\]]*)\]").unwrap();
    let (mutating, validating) = wh
        .split_once("kind: ValidatingWebhookConfiguration")
        .unwrap();
    let resources = |text: &str| -> BTreeSet<String> {
        res_re
            .captures_iter(text)
            .flat_map(|c| {
                c[1].split(',')
                    .map(|s| s.trim().trim_matches('"').to_string())
                    .collect::<Vec<_>>()
            })
            .collect()
    };
    let from_rules = |rules: Value| -> BTreeSet<String> {
        rules
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|r| r["resources"].as_array().unwrap().clone())
            .map(|s| s.as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(
        resources(validating),
        from_rules(winlint::manifests::validating_rules())
    );
    // Mutating: pods only, unless mutation.workloads (a values switch) adds the templates.
    let (pods_only, _) = mutating.split_once("config.mutation.workloads }}").unwrap();
    assert_eq!(
        resources(pods_only),
        from_rules(winlint::manifests::mutating_rules())
    );
    assert!(pods_only.contains("operations: [\"CREATE\"]"));
}

fn deployment_is_hardened() {
    let d = read("templates/deployment.yaml");
    for needle in [
        "kubernetes.io/os: linux",
        "runAsNonRoot: true",
        "readOnlyRootFilesystem: true",
        "allowPrivilegeEscalation: false",
        "drop: [\"ALL\"]",
        "type: RuntimeDefault",
        "topologySpreadConstraints:",
        "whenUnsatisfiable: ScheduleAnyway",
        "path: /readyz",
        "path: /healthz",
        "resources:",
        "replicas: {{ .Values.replicaCount }}",
    ] {
        assert!(d.contains(needle), "deployment.yaml lacks {needle}");
    }
    assert_eq!(values()["replicaCount"], 2);
    assert!(read("templates/pdb.yaml").contains("kind: PodDisruptionBudget"));
    assert!(read("templates/servicemonitor.yaml").contains("kind: ServiceMonitor"));
    assert!(read("templates/networkpolicy.yaml").contains("kind: NetworkPolicy"));
    assert!(read("templates/certificate.yaml").contains("kind: Certificate"));
}

/// The live cluster facts' RBAC: a ClusterRole with get/list/watch on exactly nodes, namespaces
/// and runtimeclasses, bound to the webhook's ServiceAccount, both behind `clusterFacts.enabled`
/// (which also mounts the token and drops `--cluster-facts=off`).
fn cluster_facts_rbac_is_read_only_and_switchable() {
    let rbac = read("templates/rbac.yaml");
    assert!(rbac.contains("{{- if .Values.clusterFacts.enabled }}"));
    for needle in [
        "kind: ClusterRole\n",
        "kind: ClusterRoleBinding",
        "resources: [\"nodes\", \"namespaces\"]",
        "apiGroups: [\"node.k8s.io\"]",
        "resources: [\"runtimeclasses\"]",
        "apiGroups: [\"windows.k8s.io\"]\n    resources: [\"gmsacredentialspecs\"]\n    verbs: [\"list\", \"watch\"]",
        "kind: ServiceAccount",
    ] {
        assert!(rbac.contains(needle), "rbac.yaml lacks {needle}");
    }
    assert_eq!(
        rbac.matches("verbs: [\"get\", \"list\", \"watch\"]")
            .count(),
        2
    );
    let d = read("templates/deployment.yaml");
    // The token is mounted for the facts, the certificate controller or the pull secrets.
    assert!(d.contains(
        "automountServiceAccountToken: {{ or .Values.clusterFacts.enabled (eq .Values.certificates.mode \"controller\") (eq (include \"winlint.pullSecrets\" .) \"true\") .Values.leaderElection.enabled }}"
    ));
    assert!(d.contains("--cluster-facts=off"));
    assert_eq!(values()["clusterFacts"]["enabled"], true);
}

/// The rendered ConfigMap's `winlint.yaml`, parsed.
fn rendered_config(docs: &[Value]) -> winlint::config::Config {
    let cm = docs.iter().find(|d| d["kind"] == "ConfigMap").unwrap();
    winlint::config::Config::from_yaml(
        cm["data"]["winlint.yaml"].as_str().unwrap(),
        "rendered winlint.yaml",
    )
    .expect("the rendered winlint.yaml is valid")
}

/// Deserialize as `T` and check that no field was dropped (k8s-openapi ignores unknown ones).
fn typed<T: serde::de::DeserializeOwned + serde::Serialize>(v: &Value) -> T {
    fn strip(v: &Value) -> Value {
        match v {
            Value::Object(m) => Value::Object(
                m.iter()
                    .filter(|(_, v)| !v.is_null())
                    .map(|(k, v)| (k.clone(), strip(v)))
                    .collect(),
            ),
            Value::Array(a) => Value::Array(a.iter().map(strip).collect()),
            other => other.clone(),
        }
    }
    let t: T = serde_json::from_value(v.clone())
        .unwrap_or_else(|e| panic!("{} does not parse: {e}", v["kind"]));
    assert_eq!(
        strip(&serde_json::to_value(&t).unwrap()),
        strip(v),
        "{} has fields its type does not know",
        v["kind"]
    );
    t
}

/// With Helm (PATH or `$WINLINT_HELM`): lint, render the default and the optional variants,
/// parse every object as its Kubernetes type, and check that the Helm-generated caBundle
/// verifies the generated serving certificate for the Service name.
fn helm_template_when_helm_is_available() {
    use k8s_openapi::api::admissionregistration::v1::{
        MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
    };
    let Some(helm) = helm() else { return };
    let lint = std::process::Command::new(&helm)
        .args(["lint", "--strict"])
        .arg(chart())
        .output()
        .unwrap();
    assert!(
        lint.status.success(),
        "{}",
        String::from_utf8_lossy(&lint.stdout)
    );
    let docs = helm_template(&helm, &[]);
    let kinds: BTreeSet<&str> = docs.iter().map(|d| d["kind"].as_str().unwrap()).collect();
    for k in [
        "Deployment",
        "Service",
        "ServiceAccount",
        "ConfigMap",
        "Secret",
        "PodDisruptionBudget",
        "MutatingWebhookConfiguration",
        "ValidatingWebhookConfiguration",
        "ClusterRole",
        "ClusterRoleBinding",
    ] {
        assert!(kinds.contains(k), "{k} not rendered: {kinds:?}");
    }
    let mut secret_crt = Vec::new();
    let mut ca_bundles = Vec::new();
    for d in &docs {
        match d["kind"].as_str().unwrap() {
            "Deployment" => {
                let dep: k8s_openapi::api::apps::v1::Deployment = typed(d);
                let pod = dep.spec.unwrap().template.spec.unwrap();
                // The live cluster facts read the API server with the ServiceAccount's token.
                assert_eq!(pod.automount_service_account_token, Some(true));
                let args = pod.containers[0].args.clone().unwrap();
                assert!(
                    args.contains(&"--cluster-facts-timeout=30".to_string()),
                    "{args:?}"
                );
                // The continuous audit is on by default.
                for a in ["--audit=on", "--audit-interval=600"] {
                    assert!(args.contains(&a.to_string()), "{args:?}");
                }
            }
            "ClusterRole" if d["metadata"]["name"] == "winlint-audit" => {
                let r: k8s_openapi::api::rbac::v1::ClusterRole = typed(d);
                // The audit reads the workloads (list only) and writes only the reports.
                for rule in r.rules.unwrap() {
                    let writes = rule.api_groups == Some(vec!["wgpolicyk8s.io".to_string()]);
                    let verbs: Vec<String> = if writes {
                        ["get", "list", "create", "patch", "delete"]
                            .map(String::from)
                            .to_vec()
                    } else {
                        vec!["list".to_string()]
                    };
                    assert_eq!(rule.verbs, verbs, "{d}");
                }
            }
            "ClusterRole" => {
                let r: k8s_openapi::api::rbac::v1::ClusterRole = typed(d);
                // Exactly get/list/watch on nodes, namespaces and runtimeclasses, as
                // `winlint manifests` grants.
                assert_eq!(
                    serde_json::to_value(r.rules.unwrap()).unwrap(),
                    winlint::manifests::cluster_facts_rules()
                );
            }
            "ClusterRoleBinding" => {
                let b: k8s_openapi::api::rbac::v1::ClusterRoleBinding = typed(d);
                assert_eq!(b.role_ref.kind, "ClusterRole");
                assert!(
                    ["winlint", "winlint-audit"].contains(&b.role_ref.name.as_str()),
                    "{d}"
                );
                assert_eq!(b.metadata.name.as_deref(), Some(b.role_ref.name.as_str()));
                let s = &b.subjects.unwrap()[0];
                assert_eq!(
                    (s.kind.as_str(), s.name.as_str(), s.namespace.as_deref()),
                    ("ServiceAccount", "winlint", Some("winlint-system"))
                );
            }
            "Service" => {
                typed::<k8s_openapi::api::core::v1::Service>(d);
            }
            // The leader election's (replicas_elect_a_leader_and_spread_over_nodes).
            "Role" => {
                typed::<k8s_openapi::api::rbac::v1::Role>(d);
            }
            "RoleBinding" => {
                typed::<k8s_openapi::api::rbac::v1::RoleBinding>(d);
            }
            "ServiceAccount" => {
                typed::<k8s_openapi::api::core::v1::ServiceAccount>(d);
            }
            "PodDisruptionBudget" => {
                typed::<k8s_openapi::api::policy::v1::PodDisruptionBudget>(d);
            }
            "ConfigMap" => {
                let cm: k8s_openapi::api::core::v1::ConfigMap = typed(d);
                let text = &cm.data.unwrap()["winlint.yaml"];
                let cfg = winlint::config::Config::from_yaml(text, "rendered winlint.yaml")
                    .expect("the rendered winlint.yaml is valid");
                // With live facts the target pins nothing the cluster says (its version, its
                // nodes' builds and taints), and the pod mutating webhook is registered.
                assert!(!text.contains("kubernetesVersion"), "{text}");
                let p = &cfg.target.pinned;
                assert!(
                    !p.kubernetes
                        && !p.windows_builds
                        && !p.windows_taints
                        && !p.cluster_mixed_builds,
                    "{text}"
                );
                assert!(cfg.policy.pod_mutation);
                assert_eq!(
                    cfg.policy.mutation.linux_guard,
                    winlint::config::LinuxGuard::Auto,
                    "{text}"
                );
            }
            "Secret" => {
                let s: k8s_openapi::api::core::v1::Secret = typed(d);
                secret_crt = s.data.unwrap()["tls.crt"].0.clone();
            }
            "MutatingWebhookConfiguration" => {
                let m: MutatingWebhookConfiguration = typed(d);
                for w in m.webhooks.unwrap() {
                    assert_eq!(w.side_effects, "None");
                    assert_eq!(w.reinvocation_policy.as_deref(), Some("IfNeeded"));
                    ca_bundles.push(w.client_config.ca_bundle.clone().unwrap().0);
                }
            }
            "ValidatingWebhookConfiguration" => {
                let v: ValidatingWebhookConfiguration = typed(d);
                for w in v.webhooks.unwrap() {
                    assert!(w.timeout_seconds.unwrap() <= 5);
                    let names = w
                        .namespace_selector
                        .clone()
                        .unwrap()
                        .match_expressions
                        .unwrap()[0]
                        .values
                        .clone()
                        .unwrap();
                    assert_eq!(names, ["kube-system", "winlint-system"]);
                    ca_bundles.push(w.client_config.ca_bundle.clone().unwrap().0);
                }
            }
            other => panic!("unexpected kind {other}"),
        }
    }
    assert_eq!(
        ca_bundles.len(),
        2,
        "one mutating and one validating webhook"
    );
    // The webhooks are exactly those of `winlint manifests` (names, paths, selectors, rules,
    // policies), caBundle aside.
    let strip_ca = |mut v: Value| {
        for w in v["webhooks"].as_array_mut().unwrap() {
            w["clientConfig"]
                .as_object_mut()
                .unwrap()
                .remove("caBundle");
        }
        v["webhooks"].clone()
    };
    let ours = winlint::manifests::webhook_configurations(
        winlint::manifests::NAME,
        winlint::manifests::DEFAULT_NAMESPACE,
        "Ignore",
        |path| {
            json!({"service": {"name": "winlint", "namespace": "winlint-system", "path": path,
                               "port": 443}})
        },
    );
    for kind in [
        "MutatingWebhookConfiguration",
        "ValidatingWebhookConfiguration",
    ] {
        let rendered = docs.iter().find(|d| d["kind"] == kind).unwrap().clone();
        let expected = ours.iter().find(|d| d["kind"] == kind).unwrap().clone();
        assert_eq!(
            strip_ca(rendered),
            strip_ca(expected),
            "{kind}: chart and manifests differ"
        );
    }
    for ca in &ca_bundles {
        verify(ca, &secret_crt, "winlint.winlint-system.svc");
    }

    // Variants: cert-manager, ServiceMonitor, NetworkPolicy, no mutation, workload mutation.
    let docs = helm_template(
        &helm,
        &[
            "certificates.mode=cert-manager",
            "metrics.serviceMonitor.enabled=true",
            "networkPolicy.enabled=true",
            "networkPolicy.apiServerCIDRs={10.0.0.0/8}",
            "webhook.excludeNamespaces={monitoring}",
        ],
    );
    let kinds: Vec<&str> = docs.iter().map(|d| d["kind"].as_str().unwrap()).collect();
    for k in ["Certificate", "Issuer", "ServiceMonitor", "NetworkPolicy"] {
        assert!(kinds.contains(&k), "{k} not rendered: {kinds:?}");
    }
    assert!(!kinds.contains(&"Secret"), "cert-manager makes the Secret");
    for d in &docs {
        match d["kind"].as_str().unwrap() {
            "NetworkPolicy" => {
                let np: k8s_openapi::api::networking::v1::NetworkPolicy = typed(d);
                // The cluster facts reach the API server, and nothing else.
                let egress = np.spec.unwrap().egress.unwrap();
                assert_eq!(egress.len(), 1);
                let ports: Vec<_> = egress[0]
                    .ports
                    .clone()
                    .unwrap()
                    .into_iter()
                    .map(|p| p.port.unwrap())
                    .collect();
                assert_eq!(ports.len(), 2, "{ports:?}");
                let to = egress[0].to.clone().unwrap();
                assert_eq!(to[0].ip_block.as_ref().unwrap().cidr, "10.0.0.0/8");
            }
            "ValidatingWebhookConfiguration" => {
                let v: ValidatingWebhookConfiguration = typed(d);
                let w = &v.webhooks.unwrap()[0];
                assert!(w.client_config.ca_bundle.is_none());
                assert!(
                    v.metadata.annotations.unwrap()["cert-manager.io/inject-ca-from"]
                        .starts_with("winlint-system/")
                );
                let names = w
                    .namespace_selector
                    .clone()
                    .unwrap()
                    .match_expressions
                    .unwrap()[0]
                    .values
                    .clone()
                    .unwrap();
                assert!(names.contains(&"monitoring".to_string()));
            }
            _ => {}
        }
    }
    // The API server's client certificate verified against a mounted CA.
    let docs = helm_template(&helm, &["clientCA.configMapName=apiserver-ca"]);
    let d = docs.iter().find(|d| d["kind"] == "Deployment").unwrap();
    let dep: k8s_openapi::api::apps::v1::Deployment = typed(d);
    let pod = dep.spec.unwrap().template.spec.unwrap();
    let args = pod.containers[0].args.clone().unwrap();
    assert!(
        args.contains(&"--client-ca=/client-ca/ca.crt".to_string()),
        "{args:?}"
    );
    let vol = pod
        .volumes
        .unwrap()
        .into_iter()
        .find(|v| v.name == "client-ca")
        .unwrap();
    assert_eq!(vol.config_map.unwrap().name, "apiserver-ca");
    let docs = helm_template(&helm, &["webhook.mutate=false"]);
    assert!(
        docs.iter()
            .all(|d| d["kind"] != "MutatingWebhookConfiguration")
    );
    // ... and the config says so: /validate then judges workload templates as written.
    let cfg = rendered_config(&docs);
    assert!(!cfg.policy.pod_mutation);
    // Cluster facts and leader election off: no RBAC, no token, `--cluster-facts=off`, the
    // install-time version as the target's, and no egress at all.
    let docs = helm_template(
        &helm,
        &[
            "clusterFacts.enabled=false",
            "leaderElection.enabled=false",
            "networkPolicy.enabled=true",
        ],
    );
    assert!(
        docs.iter()
            .all(|d| !d["kind"].as_str().unwrap().starts_with("ClusterRole")),
        "RBAC rendered with the cluster facts off"
    );
    let d = docs.iter().find(|d| d["kind"] == "Deployment").unwrap();
    let dep: k8s_openapi::api::apps::v1::Deployment = typed(d);
    let pod = dep.spec.unwrap().template.spec.unwrap();
    assert_eq!(pod.automount_service_account_token, Some(false));
    let args = pod.containers[0].args.clone().unwrap();
    assert!(
        args.contains(&"--cluster-facts=off".to_string()),
        "{args:?}"
    );
    let cfg = rendered_config(&docs);
    assert!(cfg.target.pinned.kubernetes && cfg.target.kubernetes.at_least(1, 20));
    let np = docs.iter().find(|d| d["kind"] == "NetworkPolicy").unwrap();
    assert_eq!(np["spec"]["egress"], json!([]));
    // Pull secrets (registry lookups on): a Role with `get` on exactly those Secrets of the
    // release namespace, the token mounted even without the cluster facts, the namespace
    // passed, egress to the API server, DNS and the registries; the config carries the names.
    let docs = helm_template(
        &helm,
        &[
            "clusterFacts.enabled=false",
            "leaderElection.enabled=false",
            "networkPolicy.enabled=true",
            "config.registry.mode=background",
            "config.registry.pullSecrets={regcred,acr}",
            "config.registry.pullSecretsDefaultNamespaces={team-a,build-*}",
            "config.registry.allowGlobKeys=true",
        ],
    );
    let role = docs
        .iter()
        .find(|d| d["kind"] == "Role" && d["metadata"]["name"] == "winlint-pull-secrets")
        .expect("the pull-secrets Role");
    let role: k8s_openapi::api::rbac::v1::Role = typed(role);
    assert_eq!(role.metadata.namespace.as_deref(), Some("winlint-system"));
    let rule = &role.rules.unwrap()[0];
    assert_eq!(
        rule.resource_names.clone().unwrap(),
        vec!["regcred".to_string(), "acr".to_string()]
    );
    assert_eq!(rule.verbs, vec!["get"]);
    assert!(
        docs.iter()
            .any(|d| d["kind"] == "RoleBinding" && d["roleRef"]["name"] == "winlint-pull-secrets")
    );
    let d = docs.iter().find(|d| d["kind"] == "Deployment").unwrap();
    let dep: k8s_openapi::api::apps::v1::Deployment = typed(d);
    let pod = dep.spec.unwrap().template.spec.unwrap();
    assert_eq!(pod.automount_service_account_token, Some(true));
    let args = pod.containers[0].args.clone().unwrap();
    assert!(
        args.contains(&"--pull-secrets-namespace=winlint-system".to_string()),
        "{args:?}"
    );
    let cfg = rendered_config(&docs);
    assert_eq!(cfg.policy.registry.pull_secrets, vec!["regcred", "acr"]);
    assert_eq!(
        cfg.policy.registry.pull_secrets_default_namespaces,
        vec!["team-a", "build-*"]
    );
    assert!(cfg.policy.registry.allow_glob_keys);
    let np = docs.iter().find(|d| d["kind"] == "NetworkPolicy").unwrap();
    let egress = np["spec"]["egress"].to_string();
    for port in ["443", "6443", "53"] {
        assert!(egress.contains(&format!("\"port\":{port}")), "{egress}");
    }
    // Lookups off (the default): no Role for the secrets, whatever is listed.
    let docs = helm_template(&helm, &["config.registry.pullSecrets={regcred}"]);
    assert!(
        docs.iter()
            .all(|d| d["metadata"]["name"] != "winlint-pull-secrets")
    );
    assert_eq!(
        rendered_config(&docs).policy.registry.mode,
        winlint::config::RegistryMode::Off
    );
    // A configured build list pins the builds even with live facts.
    let docs = helm_template(&helm, &["config.target.windowsBuilds={ltsc2019,ltsc2022}"]);
    let cfg = rendered_config(&docs);
    assert!(cfg.target.pinned.windows_builds);
    assert_eq!(cfg.target.windows_builds.len(), 2);
    // linuxGuard: the words (helm renders "on"/"off" quoted) and the old booleans.
    for (value, want) in [
        ("off", winlint::config::LinuxGuard::Off),
        ("on", winlint::config::LinuxGuard::On),
        ("true", winlint::config::LinuxGuard::On),
        ("false", winlint::config::LinuxGuard::Off),
    ] {
        let docs = helm_template(&helm, &[&format!("config.mutation.linuxGuard={value}")]);
        assert_eq!(
            rendered_config(&docs).policy.mutation.linux_guard,
            want,
            "{value}"
        );
    }
    let docs = helm_template(&helm, &["config.mutation.workloads=true"]);
    let m = docs
        .iter()
        .find(|d| d["kind"] == "MutatingWebhookConfiguration")
        .unwrap();
    let m: MutatingWebhookConfiguration = typed(m);
    assert_eq!(m.webhooks.unwrap()[0].rules.clone().unwrap().len(), 3);
    // The schema rejects what it should.
    let bad = std::process::Command::new(&helm)
        .args(["template", "x", "--set", "webhook.timeoutSeconds=30"])
        .arg(chart())
        .output()
        .unwrap();
    assert!(!bad.status.success());
}

fn verify(ca_pem: &[u8], cert_pem: &[u8], name: &str) {
    use rustls::client::danger::ServerCertVerifier;
    use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
    use rustls_pki_types::pem::PemObject;
    let mut roots = rustls::RootCertStore::empty();
    for c in CertificateDer::pem_slice_iter(ca_pem) {
        roots.add(c.unwrap()).unwrap();
    }
    let v = rustls::client::WebPkiServerVerifier::builder_with_provider(
        std::sync::Arc::new(roots),
        std::sync::Arc::new(rustls::crypto::ring::default_provider()),
    )
    .build()
    .unwrap();
    let chain: Vec<CertificateDer> = CertificateDer::pem_slice_iter(cert_pem)
        .map(|c| c.unwrap())
        .collect();
    v.verify_server_cert(
        &chain[0],
        &chain[1..],
        &ServerName::try_from(name.to_string()).unwrap(),
        &[],
        UnixTime::now(),
    )
    .expect("the Helm-generated caBundle verifies the serving certificate");
}

/// The server's request budget is derived from the webhooks' timeoutSeconds (issue 15): 80 %
/// of it, so a request it cannot evaluate in time is still answered per webhook.onError
/// before the API server gives up.
fn request_timeout_follows_the_webhook_timeout() {
    let Some(helm) = helm() else { return };
    for (seconds, expected) in [("5", "--request-timeout=4"), ("3", "--request-timeout=2.4")] {
        let docs = helm_template(&helm, &[&format!("webhook.timeoutSeconds={seconds}")]);
        let args = docs
            .iter()
            .find(|d| d["kind"] == "Deployment")
            .map(|d| d["spec"]["template"]["spec"]["containers"][0]["args"].to_string())
            .unwrap();
        assert!(args.contains(expected), "{seconds}: {args}");
        let timeouts: Vec<&Value> = docs
            .iter()
            .filter(|d| {
                d["kind"]
                    .as_str()
                    .is_some_and(|k| k.ends_with("WebhookConfiguration"))
            })
            .flat_map(|d| d["webhooks"].as_array().unwrap())
            .map(|w| &w["timeoutSeconds"])
            .collect();
        assert!(!timeouts.is_empty());
        assert!(
            timeouts
                .iter()
                .all(|t| t.as_u64().map(|n| n.to_string()).as_deref() == Some(seconds)),
            "{timeouts:?}"
        );
    }
}

/// The PodDisruptionBudget is rendered only when it cannot block a node drain: with one replica
/// and minAvailable 1 it would forbid the only eviction (drains and cluster upgrades stall).
fn the_pdb_never_blocks_a_drain() {
    let Some(helm) = helm() else { return };
    let pdb = |sets: &[&str]| -> Option<Value> {
        helm_template(&helm, sets)
            .into_iter()
            .find(|d| d["kind"] == "PodDisruptionBudget")
            .map(|d| {
                typed::<k8s_openapi::api::policy::v1::PodDisruptionBudget>(&d);
                d["spec"].clone()
            })
    };
    // The default: one replica of two may always go.
    let spec = pdb(&[]).expect("2 replicas: a PodDisruptionBudget");
    assert_eq!(spec["maxUnavailable"], 1);
    assert!(spec.get("minAvailable").is_none(), "{spec}");
    let min_only = "podDisruptionBudget.maxUnavailable=null";
    let spec = pdb(&[min_only]).expect("2 replicas, minAvailable 1");
    assert_eq!(spec["minAvailable"], 1);
    assert!(
        pdb(&["replicaCount=1", min_only]).is_none(),
        "1 replica, minAvailable 1"
    );
    assert!(
        pdb(&[
            "replicaCount=3",
            "podDisruptionBudget.minAvailable=3",
            min_only
        ])
        .is_none()
    );
    let spec = pdb(&["replicaCount=1", "podDisruptionBudget.maxUnavailable=1"])
        .expect("maxUnavailable always lets one go");
    assert_eq!(spec["maxUnavailable"], 1);
    assert!(spec.get("minAvailable").is_none(), "{spec}");
    assert!(pdb(&["podDisruptionBudget.enabled=false"]).is_none());
    // maxUnavailable 0 would block every drain: the schema refuses it.
    let bad = std::process::Command::new(&helm)
        .args([
            "template",
            "x",
            "--set",
            "podDisruptionBudget.maxUnavailable=0",
        ])
        .arg(chart())
        .output()
        .unwrap();
    assert!(!bad.status.success());
}

/// The architectures `scripts/dist.sh` builds by default, as kubernetes.io/arch names.
fn dist_architectures() -> Vec<String> {
    let script =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/dist.sh"))
            .unwrap();
    let line = script
        .lines()
        // `${WINLINT_DIST_ARCHS-…}`: the default unless set (set but empty builds no Linux binary).
        .find_map(|l| l.strip_prefix("archs=\"${WINLINT_DIST_ARCHS-"))
        .expect("dist.sh sets archs");
    line.trim_end_matches("}\"")
        .split_whitespace()
        .map(|a| match a {
            "x86_64" => "amd64".to_string(),
            "aarch64" => "arm64".to_string(),
            other => panic!("unknown architecture {other}"),
        })
        .collect()
}

/// Replicas go only to Linux nodes of an architecture the image has: by default the ones the
/// release builds, values-driven, and a user's own nodeAffinity replaces the rule.
fn pods_are_placed_on_the_architectures_of_the_image() {
    assert_eq!(dist_architectures(), ["amd64", "arm64"]);
    assert_eq!(
        values()["image"]["architectures"],
        json!(dist_architectures())
    );
    let Some(helm) = helm() else { return };
    let pod = |sets: &[&str]| {
        let docs = helm_template(&helm, sets);
        let d = docs.iter().find(|d| d["kind"] == "Deployment").unwrap();
        let dep: k8s_openapi::api::apps::v1::Deployment = typed(d);
        dep.spec.unwrap().template.spec.unwrap()
    };
    let arch_values = |p: &k8s_openapi::api::core::v1::PodSpec| -> Option<Vec<String>> {
        let terms = p
            .affinity
            .as_ref()?
            .node_affinity
            .as_ref()?
            .required_during_scheduling_ignored_during_execution
            .as_ref()?
            .node_selector_terms
            .clone();
        assert_eq!(terms.len(), 1);
        let e = &terms[0].match_expressions.as_ref().unwrap()[0];
        assert_eq!(
            (e.key.as_str(), e.operator.as_str()),
            ("kubernetes.io/arch", "In")
        );
        e.values.clone()
    };
    let p = pod(&[]);
    assert_eq!(
        p.node_selector.as_ref().unwrap()["kubernetes.io/os"],
        "linux"
    );
    assert_eq!(arch_values(&p), Some(dist_architectures()));
    // Spread over nodes (a preference), not a pod anti-affinity.
    assert_eq!(p.topology_spread_constraints.map(|t| t.len()), Some(1));
    assert!(p.affinity.unwrap().pod_anti_affinity.is_none());
    let p = pod(&["image.architectures={arm64}"]);
    assert_eq!(arch_values(&p), Some(vec!["arm64".to_string()]));
    // A user's affinity without nodeAffinity keeps the rule; with one, theirs is used.
    let p = pod(&["affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution=null"]);
    assert_eq!(arch_values(&p), Some(dist_architectures()));
    let p = pod(&[
        "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].key=pool",
        "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].operator=Exists",
    ]);
    let terms = p
        .affinity
        .unwrap()
        .node_affinity
        .unwrap()
        .required_during_scheduling_ignored_during_execution
        .unwrap()
        .node_selector_terms;
    assert_eq!(terms[0].match_expressions.as_ref().unwrap()[0].key, "pool");
    // An architecture the release does not build is refused.
    let bad = std::process::Command::new(&helm)
        .args(["template", "x", "--set", "image.architectures={s390x}"])
        .arg(chart())
        .output()
        .unwrap();
    assert!(!bad.status.success());
}

/// The image the chart and `winlint manifests` deploy is the one the release publishes:
/// ghcr.io/winlint/winlint tagged with the crate's version (scripts/dist.sh tags the OCI index
/// with it; release.yml pushes it there).
fn the_image_reference_is_what_the_release_publishes() {
    let version = env!("CARGO_PKG_VERSION");
    let c = yaml_docs(&read("Chart.yaml")).remove(0);
    assert_eq!(c["appVersion"], version, "Chart.yaml appVersion");
    assert_eq!(values()["image"]["repository"], "ghcr.io/winlint/winlint");
    assert_eq!(values()["image"]["tag"], "", "the tag follows appVersion");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_winlint"))
        .args(["manifests", "--namespace", "winlint-system"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let docs = yaml_docs(&String::from_utf8(out.stdout).unwrap());
    let dep = docs.iter().find(|d| d["kind"] == "Deployment").unwrap();
    let image = &dep["spec"]["template"]["spec"]["containers"][0]["image"];
    assert_eq!(image, &json!(format!("ghcr.io/winlint/winlint:{version}")));
    let release = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join(".github/workflows/release.yml"),
    )
    .unwrap();
    assert!(
        release.contains("IMAGE: ghcr.io/winlint/winlint"),
        "release.yml"
    );
    let dist =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/dist.sh"))
            .unwrap();
    assert!(dist.contains("\"org.opencontainers.image.ref.name\":\"$version\""));
}

/// `certificates.mode=controller`: no Secret and no caBundle in the templates (serve creates
/// and injects them), so `helm template` renders the same bytes every time; the RBAC names the
/// one Secret and the two webhook configurations; the certificate lands in an emptyDir.
fn controller_certificates_render_stably() {
    let Some(helm) = helm() else { return };
    let sets = ["certificates.mode=controller"];
    let docs = helm_template(&helm, &sets);
    assert_eq!(
        docs,
        helm_template(&helm, &sets),
        "helm template is not stable"
    );
    assert!(!docs.iter().any(|d| d["kind"] == "Secret"));
    for d in docs.iter().filter(|d| {
        d["kind"]
            .as_str()
            .is_some_and(|k| k.ends_with("WebhookConfiguration"))
    }) {
        assert!(
            d["webhooks"][0]["clientConfig"].get("caBundle").is_none(),
            "{d}"
        );
    }
    let role = docs
        .iter()
        .find(|d| d["kind"] == "Role" && d["metadata"]["name"] == "winlint-certificates")
        .expect("the certificates Role");
    assert_eq!(role["rules"][0]["resourceNames"], json!(["winlint-tls"]));
    let cluster_role = docs
        .iter()
        .find(|d| d["kind"] == "ClusterRole" && d["metadata"]["name"] == "winlint-certificates")
        .expect("the certificates ClusterRole");
    assert_eq!(
        cluster_role["rules"][0]["resourceNames"],
        json!(["winlint"])
    );
    let deploy = docs.iter().find(|d| d["kind"] == "Deployment").unwrap();
    let spec = &deploy["spec"]["template"]["spec"];
    let args = container_args(deploy);
    for a in [
        "--certificates-secret=winlint-tls",
        "--certificates-namespace=winlint-system",
        "--certificates-name=winlint.winlint-system.svc",
        "--webhook-configuration=winlint",
    ] {
        assert!(args.contains(&a), "{a} not in {args:?}");
    }
    assert_eq!(spec["automountServiceAccountToken"], true);
    let tls = spec["volumes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["name"] == "tls")
        .unwrap();
    assert!(tls.get("emptyDir").is_some(), "{tls}");
}

/// High availability (issue 29): two replicas spread over nodes (a preference), a leader
/// election Lease the ServiceAccount may get/update by name and create, the pod's name as its
/// holder identity; `leaderElection.enabled=false` drops the flags and the Role.
fn replicas_elect_a_leader_and_spread_over_nodes() {
    let Some(helm) = helm() else { return };
    let docs = helm_template(&helm, &[]);
    let deploy = docs.iter().find(|d| d["kind"] == "Deployment").unwrap();
    assert_eq!(deploy["spec"]["replicas"], 2);
    let spec = &deploy["spec"]["template"]["spec"];
    let spread = &spec["topologySpreadConstraints"][0];
    assert_eq!(spread["topologyKey"], "kubernetes.io/hostname", "{spread}");
    assert_eq!(spread["whenUnsatisfiable"], "ScheduleAnyway", "{spread}");
    assert_eq!(
        spread["labelSelector"]["matchLabels"],
        deploy["spec"]["selector"]["matchLabels"]
    );
    let c = &spec["containers"][0];
    let args = container_args(deploy);
    for a in [
        "--leader-elect",
        "--lease-name=winlint",
        "--lease-namespace=winlint-system",
        "--lease-duration=15",
        "--lease-renew-deadline=10",
        "--lease-retry-period=2",
    ] {
        assert!(args.contains(&a), "{a} not in {args:?}");
    }
    assert_eq!(
        c["env"][0],
        json!({"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}})
    );
    assert_eq!(spec["automountServiceAccountToken"], true);
    let role = docs
        .iter()
        .find(|d| d["kind"] == "Role" && d["metadata"]["name"] == "winlint-leader-election")
        .expect("the leader election Role");
    assert_eq!(role["metadata"]["namespace"], "winlint-system");
    assert_eq!(
        role["rules"],
        json!([
            {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"],
             "resourceNames": ["winlint"], "verbs": ["get", "update"]},
            {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"],
             "verbs": ["create"]}
        ])
    );
    assert!(docs.iter().any(|d| d["kind"] == "RoleBinding"
        && d["roleRef"]["name"] == "winlint-leader-election"
        && d["subjects"][0]["name"] == "winlint"));

    let off = helm_template(&helm, &["leaderElection.enabled=false"]);
    assert!(
        !off.iter()
            .any(|d| d["metadata"]["name"] == "winlint-leader-election")
    );
    let deploy = off.iter().find(|d| d["kind"] == "Deployment").unwrap();
    let args = container_args(deploy);
    assert!(!args.contains(&"--leader-elect"), "{args:?}");
}

/// The winlint container's arguments in a rendered Deployment.
fn container_args(deploy: &Value) -> Vec<&str> {
    deploy["spec"]["template"]["spec"]["containers"][0]["args"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect()
}

/// NOTES.txt tells how to wait for readiness and how to see admission at work, and never
/// claims that winlint validates before it is ready.
fn notes_tell_how_to_wait_and_check_admission() {
    let notes = read("templates/NOTES.txt");
    for needle in [
        "rollout status deployment/",
        "--dry-run=server",
        "only\nonce a replica is ready",
        "admitted unchecked",
    ] {
        assert!(notes.contains(needle), "NOTES.txt lacks {needle:?}");
    }
    assert!(!notes.contains("winlint is validating"), "{notes}");
}

/// The tests (libtest-mimic: a test that lacks an outside tool is reported ignored, with how
/// to get it; tests/skip_support).
fn main() {
    use skip_support::{run, test};
    run(vec![
        test("chart_metadata", chart_metadata),
        test(
            "values_are_valid_against_the_schema",
            values_are_valid_against_the_schema,
        ),
        test(
            "templates_only_use_defined_values",
            templates_only_use_defined_values,
        ),
        test(
            "template_actions_are_balanced",
            template_actions_are_balanced,
        ),
        test(
            "the_config_values_are_a_valid_winlint_yaml",
            the_config_values_are_a_valid_winlint_yaml,
        ),
        test(
            "webhook_settings_match_the_catalogue_and_winlint_manifests",
            webhook_settings_match_the_catalogue_and_winlint_manifests,
        ),
        test("deployment_is_hardened", deployment_is_hardened),
        test(
            "cluster_facts_rbac_is_read_only_and_switchable",
            cluster_facts_rbac_is_read_only_and_switchable,
        ),
        test(
            "helm_template_when_helm_is_available",
            helm_template_when_helm_is_available,
        ),
        test(
            "request_timeout_follows_the_webhook_timeout",
            request_timeout_follows_the_webhook_timeout,
        ),
        test("the_pdb_never_blocks_a_drain", the_pdb_never_blocks_a_drain),
        test(
            "pods_are_placed_on_the_architectures_of_the_image",
            pods_are_placed_on_the_architectures_of_the_image,
        ),
        test(
            "the_image_reference_is_what_the_release_publishes",
            the_image_reference_is_what_the_release_publishes,
        ),
        test(
            "controller_certificates_render_stably",
            controller_certificates_render_stably,
        ),
        test(
            "replicas_elect_a_leader_and_spread_over_nodes",
            replicas_elect_a_leader_and_spread_over_nodes,
        ),
        test(
            "notes_tell_how_to_wait_and_check_admission",
            notes_tell_how_to_wait_and_check_admission,
        ),
    ]);
}
