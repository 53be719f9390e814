//! Objects → pod sites. Every pod-bearing kind reduces to one or more pod sites, so a rule
//! written against a PodSpec covers Pods, Deployments, CronJobs, … alike.

use std::collections::HashMap;

use serde_json::Value;

/// Kinds that carry a pod template, and where their PodSpec lives.
pub const POD_KINDS: &[(&str, &str)] = &[
    ("Pod", ""),
    ("PodTemplate", "/template"),
    ("Deployment", "/spec/template"),
    ("ReplicaSet", "/spec/template"),
    ("StatefulSet", "/spec/template"),
    ("DaemonSet", "/spec/template"),
    ("Job", "/spec/template"),
    ("ReplicationController", "/spec/template"),
    ("CronJob", "/spec/jobTemplate/spec/template"),
];

/// The three lists of containers of a PodSpec.
pub const CONTAINER_LISTS: &[&str] = &["initContainers", "containers", "ephemeralContainers"];

/// One PodSpec inside an object, with the pointers that locate it.
#[derive(Debug, Clone)]
pub struct PodSite<'a> {
    /// The object's kind (`Pod`, `Deployment`, …).
    pub kind: &'a str,
    /// The whole object.
    pub object: &'a Value,
    /// The pod's metadata (the template's metadata for workloads); `Null` when absent.
    pub meta: &'a Value,
    /// Pointer to the pod metadata (`/metadata`, `/spec/template/metadata`).
    pub meta_ptr: String,
    /// The PodSpec; `Null` when absent.
    pub spec: &'a Value,
    /// Pointer to the PodSpec (`/spec`, `/spec/template/spec`, …).
    pub spec_ptr: String,
    /// The namespace of the object, if it says.
    pub namespace: Option<&'a str>,
    /// Whether any container is a HostProcess container, once computed: rules ask it once per
    /// finding, and computing it is a walk over every container (quadratic in big pods).
    pub(crate) host_process_pod: std::sync::OnceLock<bool>,
    /// The volumes by name and the mounts by volume, built once when a rule first asks
    /// ([`PodSite::volume`], [`PodSite::mounted_only_at`]): a lookup per mount by scanning the
    /// volumes is mounts × volumes (12 000 volumes and 9 000 mounts cost seconds).
    pub(crate) volume_index: std::sync::OnceLock<VolumeIndex>,
}

/// [`PodSite`]'s index of its volumes and mounts. Its names are owned: borrowed ones in a
/// `OnceLock` would make `PodSite<'a>` invariant in `'a`.
#[derive(Debug, Clone, Default)]
pub(crate) struct VolumeIndex {
    /// Volume name → the index of the first volume of that name in `spec.volumes`.
    by_name: HashMap<Box<str>, usize>,
    /// Volume name → the one `mountPath` every mount of it has (`None`: mounts disagree, or
    /// one has no `mountPath`). A name no container mounts is absent.
    mounted_at: HashMap<Box<str>, Option<Box<str>>>,
}

/// A container with its place in the pod.
#[derive(Debug, Clone, Copy)]
pub struct ContainerRef<'a> {
    /// `containers`, `initContainers` or `ephemeralContainers`.
    pub list: &'static str,
    pub index: usize,
    pub value: &'a Value,
}

impl ContainerRef<'_> {
    pub fn name(&self) -> &str {
        self.value.get("name").and_then(Value::as_str).unwrap_or("")
    }
    pub fn image(&self) -> Option<&str> {
        self.value.get("image").and_then(Value::as_str)
    }
    /// Relative pointer from the PodSpec: `/containers/0`.
    pub fn rel(&self) -> String {
        format!("/{}/{}", self.list, self.index)
    }
    /// A label for messages: `container "web"`, `init container "setup"`.
    pub fn label(&self) -> String {
        let what = match self.list {
            "initContainers" => "init container",
            "ephemeralContainers" => "ephemeral container",
            _ => "container",
        };
        format!("{what} {:?}", self.name())
    }
}

static NULL: Value = Value::Null;

/// `Value::pointer` without an allocation per token (serde_json unescapes every token into a new
/// `String`; rules look fields up thousands of times per pod). Same results.
pub fn lookup<'v>(value: &'v Value, pointer: &str) -> Option<&'v Value> {
    super::work::step();
    if pointer.is_empty() {
        return Some(value);
    }
    let rest = pointer.strip_prefix('/')?;
    rest.split('/').try_fold(value, |target, token| {
        let token = super::pointer::unescape(token);
        match target {
            Value::Object(map) => map.get(token.as_ref()),
            Value::Array(list) => {
                if token.len() > 1 && token.starts_with('0') || token.starts_with('+') {
                    return None;
                }
                token.parse::<usize>().ok().and_then(|i| list.get(i))
            }
            _ => None,
        }
    })
}

/// [`lookup`] as a method, for chains: `value.lookup("/a/b")` is `value.lookup("/a/b")`
/// without the allocations.
pub trait Lookup {
    fn lookup(&self, pointer: &str) -> Option<&Value>;
}

impl Lookup for Value {
    fn lookup(&self, pointer: &str) -> Option<&Value> {
        lookup(self, pointer)
    }
}

impl<'a> PodSite<'a> {
    /// Pointer to a path relative to the PodSpec: `site.ptr("/nodeSelector")`.
    pub fn ptr(&self, rel: &str) -> String {
        format!("{}{}", self.spec_ptr, rel)
    }
    /// Pointer to a path relative to the pod metadata.
    pub fn meta_ptr(&self, rel: &str) -> String {
        format!("{}{}", self.meta_ptr, rel)
    }
    /// A PodSpec field by relative pointer (`/securityContext/runAsUser`).
    pub fn get(&self, rel: &str) -> Option<&'a Value> {
        lookup(self.spec, rel).filter(|v| !v.is_null())
    }
    pub fn str(&self, rel: &str) -> Option<&'a str> {
        self.get(rel).and_then(Value::as_str)
    }
    /// A pod label.
    pub fn label(&self, key: &str) -> Option<&'a str> {
        self.meta.get("labels")?.get(key)?.as_str()
    }
    /// A pod annotation.
    pub fn annotation(&self, key: &str) -> Option<&'a str> {
        self.meta.get("annotations")?.get(key)?.as_str()
    }
    /// The object's name, for messages.
    pub fn object_name(&self) -> &'a str {
        self.object
            .lookup("/metadata/name")
            .or_else(|| self.object.lookup("/metadata/generateName"))
            .and_then(Value::as_str)
            .unwrap_or("")
    }
    /// Every container, init containers first, then containers, then ephemeral containers.
    pub fn containers(&self) -> impl Iterator<Item = ContainerRef<'a>> + 'a {
        let spec = self.spec;
        CONTAINER_LISTS.iter().flat_map(move |list_name| {
            list(spec, list_name)
                .iter()
                .enumerate()
                .map(move |(index, value)| {
                    super::work::step();
                    // Per container: a webhook request past its deadline stops here.
                    super::deadline::tick();
                    ContainerRef {
                        list: list_name,
                        index,
                        value,
                    }
                })
        })
    }
    /// `spec.volumes` with index (each a step of work and a deadline tick, as [`items`]).
    pub fn volumes(&self) -> impl Iterator<Item = (usize, &'a Value)> + 'a {
        items(self.spec, "volumes").enumerate()
    }
    /// The first volume named `name`, with its index: what the kubelet mounts for a mount of
    /// that name (the API server rejects duplicate names, a manifest may still have them).
    pub fn volume(&self, name: &str) -> Option<(usize, &'a Value)> {
        super::work::step();
        let i = *self.volume_index().by_name.get(name)?;
        Some((i, &list(self.spec, "volumes")[i]))
    }
    /// Whether some container mounts volume `name` and every mount of it is at `path`.
    pub fn mounted_only_at(&self, name: &str, path: &str) -> bool {
        super::work::step();
        self.volume_index()
            .mounted_at
            .get(name)
            .is_some_and(|at| at.as_deref() == Some(path))
    }
    fn volume_index(&self) -> &VolumeIndex {
        self.volume_index.get_or_init(|| {
            let mut ix = VolumeIndex::default();
            for (i, v) in self.volumes() {
                let name = v.get("name").and_then(Value::as_str).unwrap_or("");
                ix.by_name.entry(name.into()).or_insert(i);
            }
            for c in self.containers() {
                for m in items(c.value, "volumeMounts") {
                    let name = m.get("name").and_then(Value::as_str).unwrap_or("");
                    let path = m.get("mountPath").and_then(Value::as_str);
                    match ix.mounted_at.get_mut(name) {
                        Some(at) if at.as_deref() != path => *at = None,
                        Some(_) => {}
                        None => {
                            ix.mounted_at.insert(name.into(), path.map(Into::into));
                        }
                    }
                }
            }
            ix
        })
    }
    /// Pointer to a path relative to container `c`: `site.container_ptr(&c, "/env/0/name")`.
    pub fn container_ptr(&self, c: &ContainerRef, rel: &str) -> String {
        format!("{}{}{rel}", self.spec_ptr, c.rel())
    }
    /// `spec.nodeSelector[key]`.
    pub fn node_selector(&self, key: &str) -> Option<&'a str> {
        self.spec.get("nodeSelector")?.get(key)?.as_str()
    }
}

/// `v[key]` as a slice of values (empty when absent or not an array).
pub fn list<'a>(v: &'a Value, key: &str) -> &'a [Value] {
    v.get(key)
        .and_then(Value::as_array)
        .map(|a| a.as_slice())
        .unwrap_or(&[])
}

/// The items of a list, each counted as a step of work ([`super::work`]) and a tick of the
/// deadline ([`super::deadline::tick`]): what every loop over a pod's list (mounts, env vars,
/// ports, tolerations, terms …) iterates with, so that the growth tests see the work per item
/// and a request past its deadline stops inside one container's list of 100 000 items.
pub fn each<T>(items: &[T]) -> impl DoubleEndedIterator<Item = &T> + ExactSizeIterator + Clone {
    items.iter().inspect(|_| {
        super::work::step();
        super::deadline::tick();
    })
}

/// [`each`] item of `v[key]` (none when absent or not an array).
pub fn items<'a>(
    v: &'a Value,
    key: &str,
) -> impl DoubleEndedIterator<Item = &'a Value> + ExactSizeIterator + Clone + use<'a> {
    each(list(v, key))
}

/// The pod sites of an object (none for kinds that carry no pod).
pub fn pod_sites(object: &Value) -> Vec<PodSite<'_>> {
    let Some((kind, tpl)) = pod_kind(object) else {
        return Vec::new();
    };
    let namespace = object.lookup("/metadata/namespace").and_then(Value::as_str);
    let meta_ptr = format!("{tpl}/metadata");
    let spec_ptr = format!("{tpl}/spec");
    let meta = object.lookup(&meta_ptr).unwrap_or(&NULL);
    let spec = object.lookup(&spec_ptr).unwrap_or(&NULL);
    vec![PodSite {
        kind,
        object,
        meta,
        meta_ptr,
        spec,
        spec_ptr,
        namespace,
        host_process_pod: std::sync::OnceLock::new(),
        volume_index: std::sync::OnceLock::new(),
    }]
}

/// The object's kind and the pointer of its pod template (`""` for a Pod itself), when it is
/// one of the [`POD_KINDS`]: what [`pod_sites`] walks, without building a site.
pub fn pod_kind(object: &Value) -> Option<(&str, &'static str)> {
    let kind = object.get("kind").and_then(Value::as_str)?;
    let (_, tpl) = POD_KINDS.iter().find(|(k, _)| *k == kind)?;
    Some((kind, tpl))
}

/// The objects of a document: the document itself, or the items of a `List`, with the pointer
/// prefix that locates each in the document.
pub fn objects(doc: &Value) -> Vec<(String, &Value)> {
    match doc.get("kind").and_then(Value::as_str) {
        Some(k)
            if k == "List"
                || (k.ends_with("List") && doc.get("items").is_some_and(Value::is_array)) =>
        {
            doc.get("items")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .enumerate()
                .flat_map(|(i, item)| {
                    objects(item)
                        .into_iter()
                        .map(move |(p, v)| (format!("/items/{i}{p}"), v))
                })
                .collect()
        }
        _ if doc.is_object() && !is_patch(doc) => vec![(String::new(), doc)],
        _ => Vec::new(),
    }
}

/// Whether `doc` is a strategic-merge patch (a Kustomize overlay's), not an object: some map in
/// it has a patch directive key (`$patch`, `$retainKeys`, `$setElementOrder/…`,
/// `$deleteFromPrimitiveList/…`), which no API object has. Such a document is a fragment that
/// the base completes: linting it as an object reports what the base has, and fixing it would
/// replace the base's lists (`tolerations` has no merge key).
pub fn is_patch(doc: &Value) -> bool {
    let mut stack = vec![doc];
    while let Some(v) = stack.pop() {
        match v {
            Value::Object(m) => {
                if m.keys().any(|k| {
                    k == "$patch"
                        || k == "$retainKeys"
                        || k.starts_with("$setElementOrder/")
                        || k.starts_with("$deleteFromPrimitiveList/")
                }) {
                    return true;
                }
                stack.extend(m.values());
            }
            Value::Array(a) => stack.extend(a),
            _ => {}
        }
    }
    false
}

/// Whether the kind carries a pod.
pub fn is_pod_kind(kind: &str) -> bool {
    POD_KINDS.iter().any(|(k, _)| *k == kind)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_strategic_merge_patch_is_no_object() {
        let patch = json!({"kind": "DaemonSet", "spec": {"template": {"spec": {
            "containers": [{"name": "a", "volumeMounts": [{"$patch": "replace"}]}]}}}});
        assert!(is_patch(&patch));
        assert!(objects(&patch).is_empty());
        let order =
            json!({"kind": "Pod", "spec": {"$setElementOrder/containers": [{"name": "a"}]}});
        assert!(is_patch(&order));
        // A List keeps its other items.
        let list =
            json!({"kind": "List", "items": [patch, {"kind": "Pod", "metadata": {"name": "p"}}]});
        let got: Vec<String> = objects(&list).into_iter().map(|(p, _)| p).collect();
        assert_eq!(got, ["/items/1"]);
        // A value that only looks like one is data.
        let data = json!({"kind": "ConfigMap", "data": {"k": "$patch: delete"}});
        assert!(!is_patch(&data));
    }

    #[test]
    fn lookup_agrees_with_serde_json_pointer() {
        let v = json!({"a": {"b/c": [10, {"d~e": 1}], "": 2}, "0": 3});
        for p in [
            "",
            "/a",
            "/a/b~1c",
            "/a/b~1c/0",
            "/a/b~1c/1/d~0e",
            "/a/",
            "/0",
            "/a/b~1c/01",
            "/a/b~1c/+1",
            "/x",
            "a",
            "/a/b~1c/9",
        ] {
            assert_eq!(lookup(&v, p), v.pointer(p), "{p}");
        }
    }

    #[test]
    fn every_kind_has_its_spec_pointer() {
        let pod = json!({"kind":"Pod","spec":{"containers":[{"name":"a"}]}});
        assert_eq!(pod_sites(&pod)[0].spec_ptr, "/spec");
        let cj = json!({"kind":"CronJob","spec":{"jobTemplate":{"spec":{"template":{"spec":{"containers":[]}}}}}});
        let s = &pod_sites(&cj)[0];
        assert_eq!(s.spec_ptr, "/spec/jobTemplate/spec/template/spec");
        assert!(s.spec.is_object());
        assert_eq!(
            pod_sites(&json!({"kind":"PodTemplate","template":{"spec":{}}}))[0].spec_ptr,
            "/template/spec"
        );
        assert!(pod_sites(&json!({"kind":"Service"})).is_empty());
        assert!(pod_sites(&json!({"kind":"Deployment"}))[0].spec.is_null());
    }

    #[test]
    fn containers_in_order_with_pointers() {
        let pod = json!({"kind":"Pod","spec":{"containers":[{"name":"a"},{"name":"b"}],"initContainers":[{"name":"i"}]}});
        let s = &pod_sites(&pod)[0];
        let c: Vec<String> = s
            .containers()
            .map(|c| format!("{}{}", s.spec_ptr, c.rel()))
            .collect();
        assert_eq!(
            c,
            [
                "/spec/initContainers/0",
                "/spec/containers/0",
                "/spec/containers/1"
            ]
        );
    }
}
