//! JSON pointer tokens (RFC 6901: `~` ↔ `~0`, `/` ↔ `~1`), by the `jsonptr` crate that
//! json-patch applies our patches with, so that the pointers we write and the ones it reads
//! are escaped by the same code. The one place winlint escapes or unescapes a token.

use std::borrow::Cow;

use json_patch::jsonptr::Token;

/// Escape one token (`kubernetes.io/os` → `kubernetes.io~1os`); borrowed when nothing to escape.
pub fn escape(token: &str) -> Cow<'_, str> {
    if token.contains(['~', '/']) {
        Cow::Owned(Token::new(token).encoded().to_string())
    } else {
        Cow::Borrowed(token)
    }
}

/// Unescape one token (`kubernetes.io~1os` → `kubernetes.io/os`). A token that is not valid
/// RFC 6901 (a `~` not followed by `0` or `1`) is taken as it is written.
pub fn unescape(token: &str) -> Cow<'_, str> {
    if !token.contains('~') {
        return Cow::Borrowed(token);
    }
    match Token::from_encoded(token) {
        Ok(t) => Cow::Owned(t.decoded().into_owned()),
        Err(_) => Cow::Borrowed(token),
    }
}

/// `path` relative to `parent`, both JSON pointers: `""` when they are the same, `/rest` when
/// `path` is below `parent`, `None` when it is elsewhere (`/spec/os` is not below `/spec/o`).
pub fn relative<'p>(path: &'p str, parent: &str) -> Option<&'p str> {
    let rel = path.strip_prefix(parent)?;
    (rel.is_empty() || rel.starts_with('/')).then_some(rel)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_round_trip() {
        assert_eq!(escape("x/y~z"), "x~1y~0z");
        assert_eq!(unescape("x~1y~0z"), "x/y~z");
        assert_eq!(escape("kubernetes.io/os"), "kubernetes.io~1os");
        assert!(matches!(escape("plain"), Cow::Borrowed("plain")));
        // `~01` is `~` then `1`, not `/`: the order of the two replacements matters.
        assert_eq!(unescape("~01"), "~1");
        assert_eq!(unescape("a~2b"), "a~2b");
    }

    /// A pointer is relative to itself (`""`) and to its ancestors, not to a pointer that is
    /// only a prefix of its text.
    #[test]
    fn relative_pointers() {
        assert_eq!(relative("/spec/os", "/spec/os"), Some(""));
        assert_eq!(relative("/spec/os/name", "/spec"), Some("/os/name"));
        assert_eq!(relative("/spec/os", ""), Some("/spec/os"));
        assert_eq!(relative("/spec/os", "/spec/o"), None);
        assert_eq!(relative("/metadata", "/spec"), None);
    }
}
