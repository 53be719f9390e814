//! Names as apimachinery validates them (`k8s.io/apimachinery/pkg/util/validation`): DNS-1123
//! labels and subdomains, qualified names (label keys) and label values, with the API server's
//! messages. One place for every rule that judges a name: the API family (WIN8xx: container,
//! object and label names) and the gMSA rules (WIN106, WIN110: `gmsaCredentialSpecName`).

/// The API server's regex of a DNS-1123 label, quoted in messages.
const DNS1123_LABEL_FMT: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
/// The regex of a qualified name's name part and of a label value.
const QUALIFIED_NAME_FMT: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";

/// One label of DNS-1123: lower-case alphanumerics or '-', alphanumeric at both ends (its
/// length is each caller's: 63 for a label, 253 for a whole subdomain).
fn is_dns1123_label(v: &str) -> bool {
    let b = v.as_bytes();
    let alnum = |c: u8| c.is_ascii_lowercase() || c.is_ascii_digit();
    !b.is_empty()
        && alnum(b[0])
        && alnum(b[b.len() - 1])
        && b.iter().all(|&c| alnum(c) || c == b'-')
}

/// `IsDNS1123Label`: at most 63 lower-case alphanumerics or '-', alphanumeric at both ends.
pub fn dns1123_label_errors(v: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if v.len() > 63 {
        errs.push("must be no more than 63 characters".to_string());
    }
    if !is_dns1123_label(v) {
        errs.push(format!(
            "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (regex '{DNS1123_LABEL_FMT}')"
        ));
    }
    errs
}

/// `IsDNS1123Subdomain`: at most 253 characters, DNS-1123 labels joined by '.'.
pub fn dns1123_subdomain_errors(v: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if v.len() > 253 {
        errs.push("must be no more than 253 characters".to_string());
    }
    if !v.split('.').all(is_dns1123_label) {
        errs.push(
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
                .to_string(),
        );
    }
    errs
}

/// The name part of a qualified name, or a non-empty label value: alphanumeric at both ends,
/// `-`, `_`, `.` inside, at most 63 characters.
fn is_qualified_name_part(v: &str) -> bool {
    let b = v.as_bytes();
    let alnum = |c: &u8| c.is_ascii_alphanumeric();
    !b.is_empty()
        && b.len() <= 63
        && alnum(&b[0])
        && alnum(&b[b.len() - 1])
        && b.iter()
            .all(|c| alnum(c) || matches!(c, b'-' | b'_' | b'.'))
}

/// `IsQualifiedName` (label keys): `[prefix/]name`, the prefix a DNS-1123 subdomain.
pub fn qualified_name_errors(key: &str) -> Vec<String> {
    let (prefix, name) = match key.split_once('/') {
        Some((p, n)) => (Some(p), n),
        None => (None, key),
    };
    let mut errs = Vec::new();
    if name.contains('/') {
        errs.push("a qualified name must consist of an optional DNS subdomain prefix and a name, separated by one '/'".to_string());
        return errs;
    }
    if !is_qualified_name_part(name) {
        errs.push(format!(
            "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character, at most 63 characters (regex '{QUALIFIED_NAME_FMT}')"
        ));
    }
    if let Some(p) = prefix {
        if p.is_empty() {
            errs.push("prefix part must be non-empty".to_string());
        } else {
            errs.extend(
                dns1123_subdomain_errors(p)
                    .into_iter()
                    .map(|e| format!("prefix part {e}")),
            );
        }
    }
    errs
}

/// `IsValidLabelValue`: empty, or a qualified name's name part.
pub fn label_value_errors(v: &str) -> Vec<String> {
    if v.is_empty() || is_qualified_name_part(v) {
        return Vec::new();
    }
    vec![format!(
        "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character, at most 63 characters (regex '{QUALIFIED_NAME_FMT}')"
    )]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn syntax_as_apimachinery_decides_it() {
        for ok in ["a", "web-1", "0abc", &"a".repeat(63)] {
            assert!(dns1123_label_errors(ok).is_empty(), "{ok}");
        }
        for bad in ["", "Web", "web_1", "-a", "a-", "a.b", &"a".repeat(64)] {
            assert!(!dns1123_label_errors(bad).is_empty(), "{bad}");
        }
        for ok in ["app", "app.kubernetes.io/name", "A_b.c-D", "k8s.io/x"] {
            assert!(qualified_name_errors(ok).is_empty(), "{ok}");
        }
        for bad in [
            "",
            "/x",
            "a/b/c",
            "_a",
            "a b",
            "Example.com/x",
            &"a".repeat(64),
        ] {
            assert!(!qualified_name_errors(bad).is_empty(), "{bad}");
        }
        for ok in ["", "v1.2", "Windows_2022", "a"] {
            assert!(label_value_errors(ok).is_empty(), "{ok}");
        }
        for bad in ["a b", "-a", "a/b", "1.0+", &"v".repeat(64)] {
            assert!(!label_value_errors(bad).is_empty(), "{bad}");
        }
        for ok in ["a", "example.com", "gmsa-webapp01", "a.b-c.d"] {
            assert!(dns1123_subdomain_errors(ok).is_empty(), "{ok}");
        }
        for bad in ["", "Web", "a..b", ".a", "a.", "a_b", &"a".repeat(254)] {
            assert!(!dns1123_subdomain_errors(bad).is_empty(), "{bad}");
        }
    }
}
