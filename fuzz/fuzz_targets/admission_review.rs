//! AdmissionReview decoding and answering: for any bytes, an error (HTTP 400) or a
//! well-formed AdmissionReview for the request's UID, in the request's apiVersion, whose
//! patch (if any) is base64 JSON that applies to the request object.
#![no_main]
use base64::Engine as _;
use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use std::sync::OnceLock;
use winlint::admission::{Endpoint, Webhook};

fn webhook() -> &'static Webhook {
    static W: OnceLock<Webhook> = OnceLock::new();
    W.get_or_init(|| Webhook::new(winlint::config::Config::default()))
}

fuzz_target!(|data: &[u8]| {
    for ep in [Endpoint::Mutate, Endpoint::Validate] {
        let Ok(out) = webhook().review(data, ep) else {
            continue;
        };
        let req: Value = serde_json::from_slice(data).expect("accepted input is JSON");
        let resp: Value = serde_json::from_slice(&out.body).expect("answer is JSON");
        assert_eq!(resp["kind"], "AdmissionReview");
        assert_eq!(resp["apiVersion"], req["apiVersion"]);
        assert_eq!(resp["response"]["uid"], req["request"]["uid"]);
        assert!(resp["response"]["allowed"].is_boolean());
        if let Some(p) = resp["response"].get("patch") {
            assert_eq!(resp["response"]["patchType"], "JSONPatch");
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(p.as_str().expect("patch is a string"))
                .expect("patch is base64");
            let patch: json_patch::Patch =
                serde_json::from_slice(&bytes).expect("patch is a JSON Patch");
            let mut obj = req["request"]["object"].clone();
            json_patch::patch(&mut obj, &patch).expect("patch applies to the object");
        }
    }
});
