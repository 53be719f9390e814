//! Cluster facts known to the evaluation besides the object: RuntimeClasses, ConfigMap and
//! Secret keys (and ConfigMap values), namespace labels, HorizontalPodAutoscaler targets,
//! StorageClasses, PersistentVolumeClaims and GMSACredentialSpec names.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use serde_json::Value;

use super::image_facts::ImageFacts;
use super::nodes::RuntimeClassFacts;
use super::workload::Lookup;

/// Cluster facts known to the evaluation: objects in the same CLI input, or what the webhook
/// knows. Rules that need a fact fire only when it is here (shared/rules.md "Context-dependent").
#[derive(Debug, Clone, Default)]
pub struct Context {
    pub runtime_classes: HashMap<String, RuntimeClassFacts>,
    /// (namespace, name) → keys, for ConfigMaps and Secrets.
    pub config_maps: HashMap<(String, String), BTreeSet<String>>,
    pub secrets: HashMap<(String, String), BTreeSet<String>>,
    /// (namespace, name) → `data`, for ConfigMaps (WIN415 reads the values a pod uses). Only the
    /// CLI fills it, from the objects of its input; the webhook's cluster facts do not cache
    /// ConfigMaps.
    pub config_map_data: HashMap<(String, String), BTreeMap<String, String>>,
    /// StorageClass name → provisioner (WIN315: does a claim get a disk the node formats).
    pub storage_classes: HashMap<String, String>,
    /// The StorageClass annotated `storageclass.kubernetes.io/is-default-class: "true"`: what a
    /// claim without `storageClassName` gets.
    pub default_storage_class: Option<String>,
    /// (namespace, name) of PersistentVolumeClaims → their `storageClassName` (`None`: not set,
    /// the default class applies; `Some("")`: no class, a pre-bound volume).
    pub claims: HashMap<(String, String), Option<String>>,
    /// namespace → labels.
    pub namespaces: HashMap<String, BTreeMap<String, String>>,
    /// (namespace, kind, name) of workloads a HorizontalPodAutoscaler scales → the HPA's name.
    pub hpa_targets: HashMap<(String, String, String), String>,
    /// What a registry said about the images (issue 18); `None` offline, where rules read the
    /// image names only.
    pub images: Option<Arc<dyn ImageFactsSource>>,
    /// The GMSACredentialSpec resources known; `None` when nothing is known of them (no such
    /// object in the CLI input, or a cluster without the CRD, or one that refuses the list).
    pub gmsa_credential_specs: Option<GmsaSpecs>,
}

/// Names of GMSACredentialSpec resources (`windows.k8s.io`, cluster-scoped: the names are
/// cluster-wide), and whether the set is the cluster's (complete at a moment) or only what the
/// CLI input holds (the cluster may have more).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GmsaSpecs {
    pub names: BTreeSet<String>,
    pub from_cluster: bool,
}

/// The API group of the GMSACredentialSpec CRD of kubernetes-sigs/windows-gmsa.
pub const GMSA_GROUP: &str = "windows.k8s.io";

/// Image facts known to the front end, by the reference's normal form
/// ([`image::fact_key`](super::image::fact_key): `docker.io/library/nginx:1.25` for `nginx:1.25`
/// and every other spelling of it). `get` reads memory only (the CLI resolved its images before
/// linting; `serve` reads its cache and, on a miss, queues a lookup with a non-blocking send):
/// a rule never waits for a registry. `namespace` is the pod's: `serve` answers only with facts
/// the credentials serving that namespace could read (issue 30); the CLI's facts are its user's,
/// whatever the namespace.
pub trait ImageFactsSource: Send + Sync + std::fmt::Debug {
    fn get(&self, reference: &str, namespace: Option<&str>) -> Option<Arc<ImageFacts>>;
}

impl ImageFactsSource for super::image_facts::ImageFactsMap {
    fn get(&self, reference: &str, _namespace: Option<&str>) -> Option<Arc<ImageFacts>> {
        BTreeMap::get(self, reference).cloned()
    }
}

impl Context {
    /// The registry's facts for `reference` as a pod of `namespace` may read them, when the
    /// front end has them. Asked by the reference's normal form
    /// ([`image::fact_key`](super::image::fact_key)): every spelling of an image shares its
    /// facts, and a source is keyed by normal forms only.
    pub fn image_facts(&self, reference: &str, namespace: Option<&str>) -> Option<Arc<ImageFacts>> {
        self.images
            .as_ref()?
            .get(&super::image::fact_key(reference), namespace)
    }

    /// `self` with the GMSACredentialSpecs among `objects` (one CLI input: a file, a chart's or
    /// a kustomization's output) added, or `None` when it holds none. The CLI keeps them to
    /// their own input instead of the context of every input: these resources are commonly
    /// created out of band (the windows-gmsa chart's values, a script after
    /// `New-CredentialSpec`), so one file's spec says nothing about a name in an unrelated file,
    /// while a file that creates specs and names another one holds a likely mistake.
    pub fn with_gmsa_specs_of<'a>(
        &self,
        objects: impl IntoIterator<Item = &'a Value>,
    ) -> Option<Context> {
        let mut own = objects
            .into_iter()
            .filter(|o| o.get("kind").and_then(Value::as_str) == Some("GMSACredentialSpec"))
            .peekable();
        own.peek()?;
        let mut cx = self.clone();
        for o in own {
            cx.add(o);
        }
        Some(cx)
    }

    /// Record the context objects among `objects` (RuntimeClass, ConfigMap, Secret, Namespace).
    /// Objects that do not deserialize as their kind are ignored here (the linter reports
    /// nothing about non-pod kinds).
    pub fn add(&mut self, object: &Value) {
        use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Secret};
        use k8s_openapi::api::node::v1::RuntimeClass;
        let kind = object.get("kind").and_then(Value::as_str).unwrap_or("");
        let ns_name = |m: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta| {
            (
                m.namespace.clone().unwrap_or_else(|| "default".into()),
                m.name.clone().unwrap_or_default(),
            )
        };
        match kind {
            "RuntimeClass" => {
                // node.k8s.io/v1beta1 (served until 1.25) has the v1 shape; k8s-openapi only
                // accepts the v1 apiVersion, so read it as v1. (v1alpha1 nests the handler
                // under spec and is not read.)
                let mut object = object.clone();
                let beta =
                    object.get("apiVersion").and_then(Value::as_str) == Some("node.k8s.io/v1beta1");
                if beta {
                    object["apiVersion"] = "node.k8s.io/v1".into();
                }
                if let Ok(rc) = serde_json::from_value::<RuntimeClass>(object) {
                    let mut rc = RuntimeClassFacts::from_api(&rc);
                    if beta {
                        rc.api_version = "node.k8s.io/v1beta1".into();
                    }
                    self.runtime_classes.insert(rc.name.clone(), rc);
                }
            }
            "ConfigMap" => {
                if let Ok(cm) = serde_json::from_value::<ConfigMap>(object.clone()) {
                    let data = cm.data.unwrap_or_default();
                    let mut keys: BTreeSet<String> = data.keys().cloned().collect();
                    keys.extend(cm.binary_data.unwrap_or_default().into_keys());
                    let at = ns_name(&cm.metadata);
                    self.config_maps.insert(at.clone(), keys);
                    if !data.is_empty() {
                        self.config_map_data.insert(at, data);
                    }
                }
            }
            "Secret" => {
                if let Ok(s) = serde_json::from_value::<Secret>(object.clone()) {
                    let mut keys: BTreeSet<String> =
                        s.data.unwrap_or_default().into_keys().collect();
                    keys.extend(s.string_data.unwrap_or_default().into_keys());
                    self.secrets.insert(ns_name(&s.metadata), keys);
                }
            }
            "Namespace" => {
                if let Ok(n) = serde_json::from_value::<Namespace>(object.clone()) {
                    self.namespaces.insert(
                        n.metadata.name.unwrap_or_default(),
                        n.metadata.labels.unwrap_or_default(),
                    );
                }
            }
            "GMSACredentialSpec" => {
                // v1 and the deprecated v1alpha1 the CRD still serves; another group's kind of
                // the same name is not the one the gMSA webhook reads.
                let group = object
                    .get("apiVersion")
                    .and_then(Value::as_str)
                    .and_then(|v| v.split_once('/'))
                    .map(|(g, _)| g);
                let name = object.lookup("/metadata/name").and_then(Value::as_str);
                if let (Some(GMSA_GROUP), Some(name)) = (group, name) {
                    self.gmsa_credential_specs
                        .get_or_insert_default()
                        .names
                        .insert(name.to_string());
                }
            }
            "StorageClass" => {
                let name = object.lookup("/metadata/name").and_then(Value::as_str);
                let provisioner = object.get("provisioner").and_then(Value::as_str);
                if let (Some(name), Some(provisioner)) = (name, provisioner) {
                    self.storage_classes.insert(name.into(), provisioner.into());
                    let default = object
                        .lookup("/metadata/annotations")
                        .and_then(|a| a.get("storageclass.kubernetes.io/is-default-class"))
                        .and_then(Value::as_str);
                    if default == Some("true") {
                        self.default_storage_class = Some(name.into());
                    }
                }
            }
            "PersistentVolumeClaim" => {
                let ns = object
                    .lookup("/metadata/namespace")
                    .and_then(Value::as_str)
                    .unwrap_or("default");
                if let Some(name) = object.lookup("/metadata/name").and_then(Value::as_str) {
                    let class = object
                        .lookup("/spec/storageClassName")
                        .and_then(Value::as_str)
                        .map(str::to_string);
                    self.claims.insert((ns.into(), name.into()), class);
                }
            }
            "HorizontalPodAutoscaler" => {
                let ns = object
                    .lookup("/metadata/namespace")
                    .and_then(Value::as_str)
                    .unwrap_or("default");
                let name = object
                    .lookup("/metadata/name")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                let kind = object
                    .lookup("/spec/scaleTargetRef/kind")
                    .and_then(Value::as_str);
                let target = object
                    .lookup("/spec/scaleTargetRef/name")
                    .and_then(Value::as_str);
                if let (Some(kind), Some(target)) = (kind, target) {
                    self.hpa_targets
                        .insert((ns.into(), kind.into(), target.into()), name.into());
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_v1beta1_runtime_class_is_read_as_v1() {
        let mut cx = Context::default();
        cx.add(
            &json!({"apiVersion": "node.k8s.io/v1beta1", "kind": "RuntimeClass",
            "metadata": {"name": "windows-2004"}, "handler": "runhcs-wcow-hypervisor-19041",
            "scheduling": {"nodeSelector": {"kubernetes.io/os": "windows"}}}),
        );
        cx.add(
            &json!({"apiVersion": "node.k8s.io/v1alpha1", "kind": "RuntimeClass",
            "metadata": {"name": "alpha"}, "spec": {"runtimeHandler": "h"}}),
        );
        assert_eq!(
            cx.runtime_classes["windows-2004"].handler,
            "runhcs-wcow-hypervisor-19041"
        );
        assert_eq!(
            cx.runtime_classes["windows-2004"].api_version,
            "node.k8s.io/v1beta1"
        );
        assert!(!cx.runtime_classes.contains_key("alpha"));
    }

    #[test]
    fn gmsa_credential_specs_of_the_input() {
        let mut cx = Context::default();
        assert_eq!(cx.gmsa_credential_specs, None);
        let spec = |api: &str, name: &str| {
            json!({"apiVersion": api, "kind": "GMSACredentialSpec", "metadata": {"name": name},
                "credspec": {"CmsPlugins": ["ActiveDirectory"]}})
        };
        cx.add(&spec("example.com/v1", "elsewhere"));
        assert_eq!(
            cx.gmsa_credential_specs, None,
            "another group's kind is not it"
        );
        cx.add(&spec("windows.k8s.io/v1", "webapp1"));
        cx.add(&spec("windows.k8s.io/v1alpha1", "webapp2"));
        let g = cx.gmsa_credential_specs.as_ref().unwrap();
        assert_eq!(
            g.names.iter().map(String::as_str).collect::<Vec<_>>(),
            ["webapp1", "webapp2"]
        );
        assert!(!g.from_cluster);
        // Added to the cluster's facts (`--cluster`): still the cluster's set, plus the input.
        let mut cx = Context {
            gmsa_credential_specs: Some(GmsaSpecs {
                names: ["live".to_string()].into(),
                from_cluster: true,
            }),
            ..Context::default()
        };
        cx.add(&spec("windows.k8s.io/v1", "webapp1"));
        let g = cx.gmsa_credential_specs.unwrap();
        assert!(g.from_cluster && g.names.len() == 2);
        // One input's own specs, on top of a context that has none.
        let pod = json!({"kind": "Pod", "metadata": {"name": "p"}});
        assert!(Context::default().with_gmsa_specs_of([&pod]).is_none());
        let spec = spec("windows.k8s.io/v1", "own");
        let own = Context::default()
            .with_gmsa_specs_of([&pod, &spec])
            .unwrap();
        assert_eq!(own.gmsa_credential_specs.unwrap().names.len(), 1);
    }

    #[test]
    fn runtime_class_context() {
        let mut cx = Context::default();
        cx.add(&json!({"apiVersion":"node.k8s.io/v1","kind":"RuntimeClass","metadata":{"name":"windows-2019"},
            "handler":"example-container-runtime-handler",
            "scheduling":{"nodeSelector":{"kubernetes.io/os":"windows","node.kubernetes.io/windows-build":"10.0.17763"},
            "tolerations":[{"effect":"NoSchedule","key":"os","operator":"Equal","value":"windows"}]}}));
        let rc = &cx.runtime_classes["windows-2019"];
        assert_eq!(rc.node_selector["kubernetes.io/os"], "windows");
        assert_eq!(rc.tolerations[0].key, "os");
    }
}
