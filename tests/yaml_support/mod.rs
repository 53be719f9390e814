//! Test support shared by the chart and manifests tests and src/manifests.rs' unit tests: an
//! independent YAML reader (saphyr's own loader, YAML 1.2 core schema) to check winlint's
//! output with something other than winlint's loader. Empty documents are dropped.

use serde_json::{Value, json};

/// Load a YAML stream with an independent reader (saphyr) into JSON values.
pub fn yaml_docs(text: &str) -> Vec<Value> {
    use saphyr::{LoadableYamlNode, Scalar, Yaml};
    fn conv(y: &Yaml) -> Value {
        match y {
            Yaml::Value(Scalar::Null) => Value::Null,
            Yaml::Value(Scalar::Boolean(b)) => (*b).into(),
            Yaml::Value(Scalar::Integer(i)) => (*i).into(),
            Yaml::Value(Scalar::FloatingPoint(f)) => json!(f.into_inner()),
            Yaml::Value(Scalar::String(s)) => s.to_string().into(),
            Yaml::Sequence(s) => s.iter().map(conv).collect(),
            Yaml::Mapping(m) => Value::Object(
                m.iter()
                    .map(|(k, v)| (k.as_str().expect("string key").to_string(), conv(v)))
                    .collect(),
            ),
            other => panic!("unexpected YAML node {other:?}"),
        }
    }
    Yaml::load_from_str(text)
        .expect("valid YAML")
        .iter()
        .map(conv)
        .filter(|v| !v.is_null())
        .collect()
}
