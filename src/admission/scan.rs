//! Cheap scans of a raw AdmissionReview body, before parsing or instead of it (issue 15).
//!
//! * [`within_value_budget`]: a parsed JSON value costs 32 bytes or more however short its
//!   text (`1,` is two bytes): an 8 MiB array of small numbers parsed to more than 600 MB.
//!   Real objects spend 17–22 bytes per value (the captured reviews of testdata/admission), so
//!   a body is parsed only when it averages at least [`MIN_BYTES_PER_VALUE`] bytes per
//!   value; then the parse costs a small constant times the body.
//! * [`identity`]: the `request.uid` and `apiVersion` of a body that will not be evaluated
//!   (too large, too slow, too many values, no room): enough to answer it per
//!   `webhook.onError` instead of with an HTTP error the API server maps to its
//!   failurePolicy.

/// The fewest bytes per JSON value (object, array, member or element) a body may average.
pub const MIN_BYTES_PER_VALUE: usize = 6;
/// Values every body may have whatever its size (small reviews are dense in braces).
const VALUE_ALLOWANCE: usize = 4096;

/// Whether `body` has at most `body.len() / MIN_BYTES_PER_VALUE + 4096` values, counted as
/// the `{`, `[`, `,` and `:` outside strings (an upper bound of values and keys). Stops
/// counting at the budget; one pass, no allocation.
pub fn within_value_budget(body: &[u8]) -> bool {
    let budget = body.len() / MIN_BYTES_PER_VALUE + VALUE_ALLOWANCE;
    let (mut n, mut in_string, mut escaped) = (0usize, false, false);
    for &b in body {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
        } else {
            match b {
                b'"' => in_string = true,
                b'{' | b'[' | b',' | b':' => {
                    n += 1;
                    if n > budget {
                        return false;
                    }
                }
                _ => {}
            }
        }
    }
    true
}

/// The `apiVersion` and `request.uid` of a review, from the first 64 KiB of its text (the API
/// server writes both first). `None` without a uid.
pub fn identity(body: &[u8]) -> Option<(String, String)> {
    let head = &body[..body.len().min(64 * 1024)];
    let text = String::from_utf8_lossy(head);
    let api = string_member(&text, "apiVersion")
        .filter(|v| v == "admission.k8s.io/v1beta1")
        .unwrap_or_else(|| "admission.k8s.io/v1".to_string());
    let request = text.find("\"request\"")?;
    let uid = string_member(&text[request..], "uid").filter(|u| !u.is_empty())?;
    Some((api, uid))
}

/// The first `"key": "value"` in `text` with a plain value (no escapes: a uid never has
/// them), skipping whitespace around the colon.
fn string_member(text: &str, key: &str) -> Option<String> {
    let at = text.find(&format!("\"{key}\""))? + key.len() + 2;
    let rest = text[at..].trim_start().strip_prefix(':')?.trim_start();
    let rest = rest.strip_prefix('"')?;
    let end = rest.find('"')?;
    let v = &rest[..end];
    (!v.contains('\\') && v.len() <= 256).then(|| v.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn captured_reviews_are_within_the_budget() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/admission");
        let mut seen = 0;
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            if name.ends_with(".json") && !name.ends_with(".meta.json") {
                assert!(within_value_budget(&std::fs::read(&p).unwrap()), "{name}");
                seen += 1;
            }
        }
        assert!(seen > 10);
    }

    #[test]
    fn an_array_of_small_numbers_is_over_the_budget() {
        let mut body = br#"{"request":{"uid":"u","object":{"x":["#.to_vec();
        body.extend(std::iter::repeat_n(&b"1,"[..], 100_000).flatten());
        body.extend(br#"1]}}}"#);
        assert!(!within_value_budget(&body));
        // The same count of values as long strings is fine; commas inside strings do not count.
        let s = format!(r#"{{"x":"{}"}}"#, ",".repeat(200_000));
        assert!(within_value_budget(s.as_bytes()));
    }

    #[test]
    fn identity_reads_uid_and_api_version_from_the_head() {
        let body = br#"{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1beta1","request":{"uid" : "abc-1","object":{"metadata":{"uid":"other"}}"#;
        assert_eq!(
            identity(body),
            Some(("admission.k8s.io/v1beta1".into(), "abc-1".into()))
        );
        assert_eq!(identity(br#"{"request":{"object":{}}}"#), None);
        assert_eq!(identity(b"garbage"), None);
    }
}
