//! Kubernetes resource quantities (`512Mi`, `1.5Gi`, `100m`, `1e3`), parsed per the API's
//! grammar and compared exactly (`512Mi` < `1Gi` < `1100M`; `1e3` = `1k`), with no floating point
//! (big integers).

use std::cmp::Ordering;

use serde_json::Value;

/// `sign · mantissa · 10^exp10 · 2^exp2`, mantissa as little-endian base-2³² digits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Quantity {
    negative: bool,
    mantissa: Vec<u32>,
    exp10: i32,
    exp2: u32,
}

/// Largest decimal exponent accepted (a guard against `1e999999999`; real quantities are
/// far smaller).
const MAX_EXP: i32 = 200;

/// Parse a quantity per the Kubernetes grammar: `[+-]<digits>[.<digits>]<suffix>` with
/// suffix `Ki|Mi|Gi|Ti|Pi|Ei`, `n|u|m|""|k|M|G|T|P|E`, or `e<int>` / `E<int>`.
pub fn parse(s: &str) -> Option<Quantity> {
    let (negative, rest) = match s.as_bytes().first()? {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    let num_end = rest
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(rest.len());
    let (num, suffix) = rest.split_at(num_end);
    let (int, frac) = match num.split_once('.') {
        Some((i, f)) => (i, f),
        None => (num, ""),
    };
    if (int.is_empty() && frac.is_empty()) || frac.contains('.') {
        return None;
    }
    let (mut exp10, exp2): (i32, u32) = match suffix {
        "" => (0, 0),
        "n" => (-9, 0),
        "u" => (-6, 0),
        "m" => (-3, 0),
        "k" => (3, 0),
        "M" => (6, 0),
        "G" => (9, 0),
        "T" => (12, 0),
        "P" => (15, 0),
        "E" => (18, 0),
        "Ki" => (0, 10),
        "Mi" => (0, 20),
        "Gi" => (0, 30),
        "Ti" => (0, 40),
        "Pi" => (0, 50),
        "Ei" => (0, 60),
        s if s.starts_with(['e', 'E']) => {
            let e = &s[1..];
            let digits = e.strip_prefix(['+', '-']).unwrap_or(e);
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            (e.parse::<i32>().ok().filter(|x| x.abs() <= MAX_EXP)?, 0)
        }
        _ => return None,
    };
    exp10 -= i32::try_from(frac.len()).ok().filter(|l| *l <= MAX_EXP)?;
    let mut mantissa = vec![0u32];
    for b in int.bytes().chain(frac.bytes()) {
        mul_add(&mut mantissa, 10, u32::from(b - b'0'));
    }
    Some(Quantity {
        negative,
        mantissa,
        exp10,
        exp2,
    })
}

fn mul_add(n: &mut Vec<u32>, m: u32, add: u32) {
    let mut carry = u64::from(add);
    for d in n.iter_mut() {
        let v = u64::from(*d) * u64::from(m) + carry;
        *d = v as u32;
        carry = v >> 32;
    }
    if carry > 0 {
        n.push(carry as u32);
    }
}

fn trim(n: &[u32]) -> &[u32] {
    let len = n.iter().rposition(|d| *d != 0).map_or(0, |p| p + 1);
    &n[..len]
}

fn cmp_mag(a: &[u32], b: &[u32]) -> Ordering {
    let (a, b) = (trim(a), trim(b));
    a.len()
        .cmp(&b.len())
        .then_with(|| a.iter().rev().cmp(b.iter().rev()))
}

fn scaled(q: &Quantity, exp10: i32, exp2: u32) -> Vec<u32> {
    let mut n = q.mantissa.clone();
    for _ in 0..(q.exp10 - exp10) {
        mul_add(&mut n, 10, 0);
    }
    for _ in 0..(q.exp2 - exp2) {
        mul_add(&mut n, 2, 0);
    }
    n
}

impl Quantity {
    fn is_zero(&self) -> bool {
        trim(&self.mantissa).is_empty()
    }
}

impl PartialOrd for Quantity {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Quantity {
    fn cmp(&self, other: &Self) -> Ordering {
        let sign = |q: &Quantity| {
            if q.is_zero() {
                0
            } else if q.negative {
                -1
            } else {
                1
            }
        };
        let (sa, sb) = (sign(self), sign(other));
        if sa != sb || sa == 0 {
            return sa.cmp(&sb);
        }
        let e10 = self.exp10.min(other.exp10);
        let e2 = self.exp2.min(other.exp2);
        let mag = cmp_mag(&scaled(self, e10, e2), &scaled(other, e10, e2));
        if sa < 0 { mag.reverse() } else { mag }
    }
}

/// A quantity as written in a manifest: a string, or a bare JSON number.
pub fn of_value(v: &Value) -> Option<(Quantity, String)> {
    let s = match v {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        _ => return None,
    };
    parse(&s).map(|q| (q, s))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantities() {
        let q = |s: &str| parse(s).unwrap_or_else(|| panic!("{s}"));
        assert!(q("512Mi") < q("1Gi"));
        assert!(q("1G") < q("1Gi"));
        assert!(q("1100M") > q("1Gi"));
        assert_eq!(q("1e3").cmp(&q("1k")), Ordering::Equal);
        assert_eq!(q("1.5Gi").cmp(&q("1536Mi")), Ordering::Equal);
        assert_eq!(q(".5").cmp(&q("500m")), Ordering::Equal);
        assert_eq!(q("5.").cmp(&q("5")), Ordering::Equal);
        assert_eq!(q("1E").cmp(&q("1000P")), Ordering::Equal);
        assert_eq!(q("100n").cmp(&q("0.1u")), Ordering::Equal);
        assert_eq!(q("-1").cmp(&q("0")), Ordering::Less);
        assert_eq!(q("-2").cmp(&q("-1")), Ordering::Less);
        assert_eq!(q("0Gi").cmp(&q("-0")), Ordering::Equal);
        assert_eq!(q("1Ei").cmp(&q("1152921504606846976")), Ordering::Equal);
        assert_eq!(q("+1e-3").cmp(&q("1m")), Ordering::Equal);
        for bad in [
            "", "Mi", "1.2.3", "1 Gi", "1gi", "1e", "1e+", "1x", "1e9999", ".",
        ] {
            assert!(parse(bad).is_none(), "{bad}");
        }
    }
}
