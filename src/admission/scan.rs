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
/// the `{`, `[`, `,` and `:` outside strings (an upper bound of values and keys), leaving out
/// `request.object.metadata.managedFields` and `request.oldObject.metadata.managedFields`:
/// the parse keeps nothing of them (`admission::parse_review`), and they are the densest part
/// of a real object (`{".":{},"f:name":{},"f:value":{}}` per env var: a pod with 5 000 short env
/// vars was denied for them). Stops counting at the budget; one pass, no allocation.
pub fn within_value_budget(body: &[u8]) -> bool {
    let budget = body.len() / MIN_BYTES_PER_VALUE + VALUE_ALLOWANCE;
    let mut n = 0usize;
    let mut scan = Scan::default();
    for &b in body {
        if scan.counts(b) {
            n += 1;
            if n > budget {
                return false;
            }
        }
    }
    true
}

/// What the value after a key of an object on the way to `managedFields` is.
#[derive(Default, Clone, Copy, PartialEq, Eq)]
enum Next {
    #[default]
    Plain,
    /// The next object on the way (`request`, `object`/`oldObject`, `metadata`).
    Deeper,
    /// `managedFields`: not counted.
    Skip,
}

/// The state of [`within_value_budget`]'s scan: strings, and where it is on the way from the
/// review to a `metadata.managedFields` (the objects the parse skips it in, as
/// `admission::At` does).
#[derive(Default)]
struct Scan {
    in_string: bool,
    escaped: bool,
    /// Objects open on the way: the review (1), `request` (2), `object` or `oldObject` (3),
    /// `metadata` (4).
    path: u8,
    /// Containers open off the way, inside the innermost object on it.
    off: usize,
    /// The next string of the innermost object on the way is a key.
    key_next: bool,
    /// The string being read is that key.
    reading_key: bool,
    /// Its bytes (up to 16; an escape or more makes it no key on the way, and so counted).
    key: [u8; 16],
    key_len: usize,
    next: Next,
    /// Inside a skipped value: its open containers.
    skipping: Option<usize>,
}

impl Scan {
    /// Take the next byte; whether it counts as a value.
    fn counts(&mut self, b: u8) -> bool {
        if self.in_string {
            if self.escaped {
                self.escaped = false;
            } else if b == b'\\' {
                self.escaped = true;
                self.key_len = usize::MAX;
            } else if b == b'"' {
                self.in_string = false;
                if std::mem::take(&mut self.reading_key) {
                    self.next = self.member();
                }
            } else if self.reading_key && self.key_len < self.key.len() {
                self.key[self.key_len] = b;
                self.key_len += 1;
            } else {
                self.key_len = usize::MAX;
            }
            return false;
        }
        if let Some(depth) = self.skipping {
            match b {
                b'"' => self.in_string = true,
                b'{' | b'[' => self.skipping = Some(depth + 1),
                b'}' | b']' if depth > 0 => self.skipping = Some(depth - 1),
                // The end of the skipped value: this byte is the object's again.
                b',' | b'}' if depth == 0 => self.skipping = None,
                _ => {}
            }
            if self.skipping.is_some() {
                return false;
            }
        }
        let on_way = self.off == 0 && self.path > 0;
        match b {
            b'"' => {
                self.in_string = true;
                if on_way && std::mem::take(&mut self.key_next) {
                    self.reading_key = true;
                    self.key_len = 0;
                }
                false
            }
            b'{' => {
                if self.off == 0 && (self.path == 0 || self.next == Next::Deeper) {
                    self.path += 1;
                    self.key_next = true;
                    self.next = Next::Plain;
                } else {
                    self.off += 1;
                }
                true
            }
            b'[' => {
                self.off += 1;
                true
            }
            b'}' | b']' => {
                if self.off > 0 {
                    self.off -= 1;
                } else {
                    self.path = self.path.saturating_sub(1);
                    self.next = Next::Plain;
                }
                false
            }
            b',' => {
                if on_way {
                    self.key_next = true;
                    self.next = Next::Plain;
                }
                true
            }
            b':' => {
                if on_way && self.next == Next::Skip {
                    self.skipping = Some(0);
                }
                true
            }
            _ => false,
        }
    }

    /// What the member whose key was just read leads to.
    fn member(&self) -> Next {
        let key = match self.key.get(..self.key_len) {
            Some(k) => k,
            None => return Next::Plain,
        };
        match (self.path, key) {
            (1, b"request") | (2, b"object" | b"oldObject") | (3, b"metadata") => Next::Deeper,
            (4, b"managedFields") => Next::Skip,
            _ => Next::Plain,
        }
    }
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

    /// A review of a pod with `n` env vars named `E0`…, its managedFields at `mf_at`
    /// (`metadata` or elsewhere in the object).
    fn env_review(n: usize, mf_at: &str) -> Vec<u8> {
        let env: Vec<String> = (0..n)
            .map(|i| format!(r#"{{"name":"E{i}","value":"1"}}"#))
            .collect();
        let fields: Vec<String> = (0..n)
            .map(|i| {
                format!(r#""k:{{\"name\":\"E{i}\"}}":{{".":{{}},"f:name":{{}},"f:value":{{}}}}"#)
            })
            .collect();
        let mf = format!(
            r#""managedFields":[{{"manager":"kubectl","operation":"Update","apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{{"f:spec":{{"f:containers":{{"k:{{\"name\":\"c\"}}":{{"f:env":{{{}}}}}}}}}}}}}]"#,
            fields.join(",")
        );
        let (meta_mf, other_mf) = match mf_at {
            "metadata" => (format!(",{mf}"), String::new()),
            _ => (String::new(), format!(",{mf}")),
        };
        let object = format!(
            r#"{{"apiVersion":"v1","kind":"Pod","metadata":{{"name":"p","namespace":"n"{meta_mf}}},"spec":{{"containers":[{{"name":"c","image":"mcr.microsoft.com/windows/servercore:ltsc2022","env":[{}]}}]}}{other_mf}}}"#,
            env.join(",")
        );
        format!(
            r#"{{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","request":{{"uid":"u","operation":"UPDATE","object":{object},"oldObject":{object}}}}}"#
        )
        .into_bytes()
    }

    #[test]
    fn managed_fields_of_the_objects_do_not_count() {
        let body = env_review(5_000, "metadata");
        serde_json::from_slice::<serde_json::Value>(&body).expect("valid JSON");
        assert!(within_value_budget(&body));
        // The same fields anywhere else are parsed, and so counted: over the budget.
        assert!(!within_value_budget(&env_review(5_000, "object")));
        // A managedFields that is not the metadata's of object or oldObject counts.
        let padded = |key: &str| {
            let dense = format!("[{}0]", "0,".repeat(100_000));
            format!(r#"{{"request":{{"object":{{"metadata":{{}},"{key}":{dense}}}}}}}"#)
        };
        assert!(!within_value_budget(padded("managedFields").as_bytes()));
        let escaped = format!(
            r#"{{"request":{{"object":{{"metadata":{{"managedFi\u0065lds":[{}0]}}}}}}}}"#,
            "0,".repeat(100_000)
        );
        assert!(!within_value_budget(escaped.as_bytes()));
        let skipped = format!(
            r#"{{"request":{{"object":{{"metadata":{{"managedFields":[{}0],"x":1}}}}}}}}"#,
            "0,".repeat(100_000)
        );
        assert!(within_value_budget(skipped.as_bytes()));
        // The count goes on after the skipped value.
        let after = format!(
            r#"{{"request":{{"object":{{"metadata":{{"managedFields":[0],"x":[{}0]}}}}}}}}"#,
            "0,".repeat(100_000)
        );
        assert!(!within_value_budget(after.as_bytes()));
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
