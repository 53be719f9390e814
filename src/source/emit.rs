//! Writing YAML: the one place that decides how a string is written so that it reads back as the
//! same string, by Kubernetes (YAML 1.1, `sigs.k8s.io/yaml`) and by YAML 1.2 tools alike. The
//! editor ([`crate::textedit`]) writes scalars into a user's file with it.

use serde_json::Value;

use super::resolve_plain;

pub(crate) fn key_text(k: &str, flow: bool) -> String {
    if k.contains(':') || needs_quotes(k, flow) {
        json_string(k)
    } else {
        k.to_owned()
    }
}

pub(crate) fn scalar_text(s: &str, flow: bool) -> String {
    if needs_quotes(s, flow) {
        json_string(s)
    } else {
        s.to_owned()
    }
}

/// A single-quoted scalar, when `s` needs no escape sequence (only `'` is doubled).
pub(crate) fn single_quoted(s: &str) -> Option<String> {
    if s.chars().any(|c| c.is_control() || is_special(c)) {
        return None;
    }
    Some(format!("'{}'", s.replace('\'', "''")))
}

/// Characters YAML wants escaped (C1 controls, line and paragraph separators, BOM, …).
pub(crate) fn is_special(c: char) -> bool {
    matches!(
        c,
        '\u{7f}'..='\u{9f}' | '\u{2028}' | '\u{2029}' | '\u{feff}' | '\u{fffe}' | '\u{ffff}'
    )
}

/// A double-quoted scalar that is valid JSON and valid YAML (non-printable characters escaped).
pub(crate) fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20
                || matches!(
                    c,
                    '\u{7f}'
                        ..='\u{9f}'
                            | '\u{2028}'
                            | '\u{2029}'
                            | '\u{feff}'
                            | '\u{fffe}'
                            | '\u{ffff}'
                ) =>
            {
                out.push_str(&format!("\\u{:04x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Whether a string must be quoted to read back as the same string, by Kubernetes (YAML 1.1)
/// and by YAML 1.2 tools alike. Errs on the side of quoting.
pub fn needs_quotes(s: &str, flow: bool) -> bool {
    let Some(first) = s.chars().next() else {
        return true;
    };
    let last = s.chars().next_back().unwrap_or(first);
    // `-` starts a plain scalar unless a blank follows it (`-Command`, `--v=2`; not `- x`).
    let dash_plain = first == '-' && s[1..].starts_with(|c: char| !c.is_whitespace());
    if ("-?:,[]{}#&*!|>'\"%@`".contains(first) && !dash_plain) || first.is_whitespace() {
        return true;
    }
    if last.is_whitespace() || last == ':' {
        return true;
    }
    if s.contains(": ") || s.contains(" #") || s.contains(":\t") || s.contains("\t#") {
        return true;
    }
    if s.chars().any(|c| {
        (c as u32) < 0x20
            || matches!(
                c,
                '\u{7f}'
                    ..='\u{9f}' | '\u{2028}' | '\u{2029}' | '\u{feff}' | '\u{fffe}' | '\u{ffff}'
            )
    }) {
        return true;
    }
    if flow && s.contains([',', '[', ']', '{', '}']) {
        return true;
    }
    if resolve_plain(s) != Value::String(s.to_owned()) {
        return true;
    }
    let lower = s.to_ascii_lowercase();
    if matches!(
        lower.as_str(),
        "y" | "n" | "yes" | "no" | "true" | "false" | "on" | "off" | "null" | "~" | "<<" | "="
    ) || lower
        .trim_start_matches(['+', '-'])
        .trim_start_matches('.')
        .starts_with("inf")
        || lower.trim_start_matches('.').starts_with("nan")
    {
        return true;
    }
    // Number-like: versions (10.0.20348), dates, sexagesimals (1:20), hex, exponents.
    let numeric_start = first.is_ascii_digit()
        || (matches!(first, '+' | '-' | '.') && s[1..].starts_with(|c: char| c.is_ascii_digit()));
    if numeric_start
        && s.chars()
            .all(|c| c.is_ascii_hexdigit() || "xXoO._:+-".contains(c))
    {
        return true;
    }
    false
}
