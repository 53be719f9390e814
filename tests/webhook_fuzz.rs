//! The admission handler never panics and always answers either HTTP 400 (`BadRequest`) or a
//! well-formed AdmissionReview, whatever the bytes: random bytes, and captured reviews with a
//! random node replaced by a random JSON value. Patches always apply to the request object.

use std::sync::OnceLock;

use base64::Engine as _;
use proptest::prelude::*;
use serde_json::Value;
use winlint::admission::{Endpoint, Webhook};
use winlint::config::Config;

fn webhook() -> &'static Webhook {
    static W: OnceLock<Webhook> = OnceLock::new();
    W.get_or_init(|| {
        let mut c = Config::default();
        c.policy.mutation.workloads = true;
        c.policy.mutation.pod_os_label = true;
        c.policy.mutation.hyperv = winlint::config::HyperV::On;
        Webhook::new(c)
    })
}

fn captures() -> &'static Vec<Value> {
    static C: OnceLock<Vec<Value>> = OnceLock::new();
    C.get_or_init(|| {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/admission");
        let mut names: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter(|n| n.ends_with(".json") && !n.ends_with(".meta.json"))
            .collect();
        names.sort();
        names
            .iter()
            .map(|n| serde_json::from_slice(&std::fs::read(dir.join(n)).unwrap()).unwrap())
            .collect()
    })
}

fn pointers(v: &Value, at: String, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                let p = format!("{at}/{}", k.replace('~', "~0").replace('/', "~1"));
                out.push(p.clone());
                pointers(x, p, out);
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                let p = format!("{at}/{i}");
                out.push(p.clone());
                pointers(x, p, out);
            }
        }
        _ => {}
    }
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        "[a-zA-Z0-9:/~._ -]{0,12}".prop_map(Value::from),
        Just(Value::from("windows")),
        Just(Value::from("mcr.microsoft.com/windows/servercore:ltsc2022")),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("[a-zA-Z./]{1,8}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Check one answer: Err (→ 400) or a well-formed review whose patch applies.
fn check(body: &[u8], ep: Endpoint) {
    let Ok(out) = webhook().review(body, ep) else {
        return;
    };
    assert_ne!(
        out.error.as_deref(),
        Some("the engine failed on this object"),
        "a rule panicked on {}",
        String::from_utf8_lossy(body)
    );
    let v: Value = serde_json::from_slice(&out.body).expect("the answer is JSON");
    assert_eq!(v["kind"], "AdmissionReview");
    let req: Value = serde_json::from_slice(body).unwrap();
    assert_eq!(v["response"]["uid"], req["request"]["uid"]);
    assert!(v["response"]["allowed"].is_boolean());
    if let Some(p) = v["response"]["patch"].as_str() {
        let bytes = base64::engine::general_purpose::STANDARD.decode(p).unwrap();
        let patch: json_patch::Patch = serde_json::from_slice(&bytes).unwrap();
        let mut obj = req["request"]["object"].clone();
        json_patch::patch(&mut obj, &patch).expect("the patch applies to the object");
    }
    for w in v["response"]["warnings"].as_array().into_iter().flatten() {
        assert!(w.as_str().unwrap().chars().count() <= winlint::admission::MAX_WARNING_CHARS);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        check(&bytes, Endpoint::Validate);
        check(&bytes, Endpoint::Mutate);
    }

    #[test]
    fn mutated_captures_never_panic(
        which in any::<prop::sample::Index>(),
        at in any::<prop::sample::Index>(),
        value in json_value(),
    ) {
        let mut review = which.get(captures()).clone();
        let mut ptrs = Vec::new();
        pointers(&review, String::new(), &mut ptrs);
        let p = at.get(&ptrs).clone();
        if let Some(slot) = review.pointer_mut(&p) {
            *slot = value;
        }
        let body = serde_json::to_vec(&review).unwrap();
        check(&body, Endpoint::Validate);
        check(&body, Endpoint::Mutate);
    }
}
