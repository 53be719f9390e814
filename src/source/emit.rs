//! Writing YAML: the one place that decides how a string is written so that it reads back as the
//! same string, by Kubernetes (YAML 1.1, `sigs.k8s.io/yaml`) and by YAML 1.2 tools alike. The
//! editor ([`crate::textedit`]) writes scalars into a user's file with it; [`to_yaml`] writes
//! whole documents (`winlint manifests`).

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

/// Serialize values as a multi-document YAML stream (block style; strings double-quoted
/// where needed, JSON escapes are valid YAML).
pub fn to_yaml(docs: &[Value]) -> String {
    let mut out = String::new();
    for d in docs {
        out.push_str("---\n");
        emit(&mut out, d, 0, false);
    }
    out
}

fn scalar(v: &Value) -> String {
    match v {
        Value::String(s) if s.contains('\n') => block_literal(s),
        Value::String(s) if plain_ok(s) => s.clone(),
        Value::String(s) => serde_json::to_string(s).expect("string serializes"),
        Value::Null => "null".into(),
        other => other.to_string(),
    }
}

fn block_literal(s: &str) -> String {
    // Marker; the caller indents the lines.
    format!("\u{0}{s}")
}

/// Whether a string can be written unquoted and read back as the same string (YAML 1.1 and
/// 1.2 resolution both considered).
fn plain_ok(s: &str) -> bool {
    if s.is_empty() || s.trim() != s {
        return false;
    }
    let lower = s.to_ascii_lowercase();
    if matches!(
        lower.as_str(),
        "null" | "~" | "true" | "false" | "yes" | "no" | "on" | "off" | "y" | "n"
    ) {
        return false;
    }
    let first = s.chars().next().unwrap_or(' ');
    if first.is_ascii_digit() || matches!(first, '-' | '+' | '.') {
        return false;
    }
    s.chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/'))
}

fn emit(out: &mut String, v: &Value, indent: usize, _in_list: bool) {
    let pad = " ".repeat(indent);
    match v {
        Value::Object(m) if !m.is_empty() => {
            for (k, val) in m {
                let key = scalar(&Value::String(k.clone()));
                out.push_str(&pad);
                out.push_str(&key);
                out.push(':');
                child(out, val, indent);
            }
        }
        Value::Array(a) if !a.is_empty() => {
            for val in a {
                out.push_str(&pad);
                out.push('-');
                child(out, val, indent);
            }
        }
        Value::Object(_) => out.push_str(&format!("{pad}{{}}\n")),
        Value::Array(_) => out.push_str(&format!("{pad}[]\n")),
        other => {
            out.push_str(&pad);
            out.push_str(&scalar(other));
            out.push('\n');
        }
    }
}

fn child(out: &mut String, val: &Value, indent: usize) {
    match val {
        Value::Object(m) if !m.is_empty() => {
            out.push('\n');
            emit(out, val, indent + 2, false);
        }
        Value::Array(a) if !a.is_empty() => {
            out.push('\n');
            emit(out, val, indent + 2, true);
        }
        Value::Object(_) => out.push_str(" {}\n"),
        Value::Array(_) => out.push_str(" []\n"),
        other => {
            let s = scalar(other);
            if let Some(text) = s.strip_prefix('\u{0}') {
                let chomp = if text.ends_with('\n') { "" } else { "-" };
                out.push_str(&format!(" |{chomp}\n"));
                let pad = " ".repeat(indent + 2);
                for line in text.lines() {
                    if line.is_empty() {
                        out.push('\n');
                    } else {
                        out.push_str(&pad);
                        out.push_str(line);
                        out.push('\n');
                    }
                }
            } else {
                out.push(' ');
                out.push_str(&s);
                out.push('\n');
            }
        }
    }
}
