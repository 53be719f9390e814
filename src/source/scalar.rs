//! Scalar resolution as Kubernetes does it: YAML 1.1 as go-yaml v2 / `sigs.k8s.io/yaml` resolve
//! plain scalars (`yes` a boolean, `0644` octal, `0x1F` hex), quoted and
//! tagged scalars, and mapping keys as strings.

use saphyr_parser::{ScalarStyle, Tag};
use serde_json::Value;

/// Resolve a plain scalar the way Kubernetes does (go-yaml v2's resolve table).
pub fn resolve_plain(s: &str) -> Value {
    match s {
        "" | "~" | "null" | "Null" | "NULL" => return Value::Null,
        "y" | "Y" | "yes" | "Yes" | "YES" | "true" | "True" | "TRUE" | "on" | "On" | "ON" => {
            return Value::Bool(true);
        }
        "n" | "N" | "no" | "No" | "NO" | "false" | "False" | "FALSE" | "off" | "Off" | "OFF" => {
            return Value::Bool(false);
        }
        _ => {}
    }
    match s.as_bytes()[0] {
        b'0'..=b'9' | b'+' | b'-' => {
            let plain: std::borrow::Cow<'_, str> = if s.contains('_') {
                s.replace('_', "").into()
            } else {
                s.into()
            };
            if let Some(v) = go_parse_int(&plain) {
                return v;
            }
            if is_yaml_float(&plain)
                && let Some(v) = plain.parse::<f64>().ok().and_then(float_value)
            {
                return v;
            }
            Value::String(s.to_owned())
        }
        b'.' => {
            if is_yaml_float(s)
                && let Some(v) = s.parse::<f64>().ok().and_then(float_value)
            {
                return v;
            }
            Value::String(s.to_owned())
        }
        _ => Value::String(s.to_owned()),
    }
}

/// A float as JSON: integral values become integers (Go's `json.Marshal` of `float64(1)` is
/// `1`, which is what the API server sees); NaN and infinities are not JSON (`None`).
pub(super) fn float_value(f: f64) -> Option<Value> {
    if !f.is_finite() {
        return None;
    }
    if f.fract() == 0.0 && f.abs() < 9_007_199_254_740_992.0 {
        return Some(Value::from(f as i64));
    }
    serde_json::Number::from_f64(f).map(Value::Number)
}

/// Go's `strconv.ParseInt(s, 0, 64)`, falling back to `ParseUint(s, 0, 64)`.
pub(super) fn go_parse_int(s: &str) -> Option<Value> {
    let b = s.as_bytes();
    let (neg, signed, rest) = match b.first()? {
        b'-' => (true, true, &b[1..]),
        b'+' => (false, true, &b[1..]),
        _ => (false, false, b),
    };
    let (radix, digits) = if rest.len() > 1 && rest[0] == b'0' {
        match rest[1] {
            b'x' | b'X' => (16, &rest[2..]),
            b'o' | b'O' => (8, &rest[2..]),
            b'b' | b'B' => (2, &rest[2..]),
            _ => (8, &rest[1..]),
        }
    } else {
        (10, rest)
    };
    if digits.is_empty() {
        return None;
    }
    let mut mag: u64 = 0;
    for &d in digits {
        let v = (d as char).to_digit(radix)?;
        mag = mag.checked_mul(radix as u64)?.checked_add(v as u64)?;
    }
    if neg {
        if mag <= i64::MAX as u64 + 1 {
            return Some(Value::from((mag as i64).wrapping_neg()));
        }
        return None;
    }
    if mag <= i64::MAX as u64 {
        Some(Value::from(mag as i64))
    } else if !signed {
        Some(Value::from(mag))
    } else {
        None
    }
}

/// `^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$` (go-yaml v2's float syntax).
pub(super) fn is_yaml_float(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    if matches!(b.first(), Some(b'-' | b'+')) {
        i += 1;
    }
    let digits = |i: &mut usize| {
        let s = *i;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        *i - s
    };
    if b.get(i) == Some(&b'.') {
        i += 1;
        if digits(&mut i) == 0 {
            return false;
        }
    } else {
        if digits(&mut i) == 0 {
            return false;
        }
        if b.get(i) == Some(&b'.') {
            i += 1;
            digits(&mut i);
        }
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'-' | b'+')) {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == b.len()
}

pub(super) fn resolve_scalar(v: &str, style: ScalarStyle, tag: Option<&Tag>) -> Value {
    if let Some(tag) = tag
        && tag.is_yaml_core_schema()
    {
        match tag.suffix.as_str() {
            "str" | "binary" | "timestamp" => return Value::String(v.to_owned()),
            "null" => return Value::Null,
            "bool" | "int" | "float" => return resolve_plain(v),
            _ => {}
        }
    }
    match style {
        ScalarStyle::Plain => resolve_plain(v),
        _ => Value::String(v.to_owned()),
    }
}

/// The string form of a scalar key (`true: x` has key `"true"`, `0x10: y` has key `"16"`).
pub(super) fn key_string(v: Value, raw: &str) -> String {
    match v {
        Value::String(s) => s,
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::Null => raw.to_owned(),
        _ => raw.to_owned(),
    }
}
