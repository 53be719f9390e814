//! A YAML emitter for the objects winlint writes (`winlint manifests`, `winlint audit
//! --policy-report`): block style, strings quoted only where a reader would take them for
//! something else. Shared by the front ends that write Kubernetes objects, so it belongs to
//! neither (tests/architecture.rs).

use serde_json::Value;

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
