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

/// A multi-line string as a literal block scalar in block context: its header (`|`, or `|-`
/// without a final line break) and its lines indented by `indent`. `None` when it would
/// not read back the same or reads badly: characters that need escapes, a first line
/// starting with a blank (it would need an indentation indicator), lines ending in blanks
/// (editors strip them), several final line breaks.
pub(crate) fn literal_block(s: &str, indent: usize) -> Option<(&'static str, Vec<String>)> {
    if !s.contains('\n') {
        return None;
    }
    let (body, header) = match s.strip_suffix('\n') {
        Some(b) if b.ends_with('\n') => return None,
        Some(b) => (b, "|"),
        None => (s, "|-"),
    };
    let first = body.split('\n').find(|l| !l.is_empty())?;
    if first.starts_with([' ', '\t'])
        || body.split('\n').any(|l| l.ends_with([' ', '\t']))
        || body
            .chars()
            .any(|c| (c.is_control() && c != '\n' && c != '\t') || is_special(c))
    {
        return None;
    }
    let pad = " ".repeat(indent);
    let lines = body
        .split('\n')
        .map(|l| {
            if l.is_empty() {
                String::new()
            } else {
                format!("{pad}{l}")
            }
        })
        .collect();
    Some((header, lines))
}

/// Characters YAML wants escaped (C1 controls, line and paragraph separators, BOM, …).
fn is_special(c: char) -> bool {
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

/// Serialize values as a multi-document YAML stream: block style, a multi-line string a literal
/// block where [`literal_block`] allows one, any other string plain only when it is a word of
/// [`plain_ok`]'s alphabet and double-quoted ([`json_string`]) otherwise.
///
/// Plainer than the editor's rule ([`needs_quotes`]) would allow: these are install manifests,
/// read by people and by every YAML tool on the way to the cluster (kubectl, kustomize, helm,
/// yq); a quoted `"--listen"` or `"50m"` reads the same in all of them.
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
        Value::String(s) if plain_ok(s) => s.clone(),
        Value::String(s) => json_string(s),
        Value::Null => "null".into(),
        other => other.to_string(),
    }
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
            if let Value::String(s) = other
                && let Some((header, lines)) = literal_block(s, indent + 2)
            {
                out.push(' ');
                out.push_str(header);
                out.push('\n');
                for line in lines {
                    out.push_str(&line);
                    out.push('\n');
                }
            } else {
                out.push(' ');
                out.push_str(&scalar(other));
                out.push('\n');
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// Every string reads back as written, also those a literal block cannot hold: before one
    /// writer served both, `winlint manifests --config` wrote a config whose first line is
    /// indented as a block the API server rejects, dropped its final blank lines and its CRs,
    /// and left U+2028 and C1 controls raw in double quotes.
    #[test]
    fn documents_read_back_as_written() {
        for s in [
            "target: {}\nwebhook:\n  onError: allow\n",
            "no final break\nhere",
            "  # an indented first line\ntarget: {}\n",
            "target: {}\n\n\n",
            "target: {}\r\nwebhook: {}\r\n",
            "a trailing blank \nline\n",
            "tab\there",
            "line\u{2028}separator",
            "del\u{7f} nel\u{85} csi\u{9b}",
            "--listen",
            "50m",
            "yes",
            "",
        ] {
            let v = json!({"data": {"winlint.yaml": s, "list": [s]}});
            let text = to_yaml(std::slice::from_ref(&v));
            let back = crate::source::load_bytes_values(text.as_bytes())
                .unwrap_or_else(|e| panic!("{s:?}: {e}\n{text}"));
            assert_eq!(back, [v], "{s:?}:\n{text}");
        }
    }

    /// A multi-line string the literal rule allows stays a literal block, byte for byte as
    /// before; a string outside the plain alphabet is double-quoted.
    #[test]
    fn literal_blocks_and_quotes() {
        let v = json!({"k": "a: 1\n\nb: 2\n", "l": ["x\ny", "--v=2", "plain-word_1.2/x"]});
        assert_eq!(
            to_yaml(&[v]),
            "---\nk: |\n  a: 1\n\n  b: 2\nl:\n  - |-\n    x\n    y\n  - \"--v=2\"\n  - plain-word_1.2/x\n"
        );
    }
}
