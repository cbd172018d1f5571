//! Numeric comparison, `multipleOf`, and JSON value equality / hashing.
//!
//! JSON numbers reach us as `serde_json::Number`: an `u64`, an `i64` or a
//! finite `f64`. Integers are compared exactly (as `i128`), floats against
//! integers exactly too, so `9007199254740993 > 9007199254740992.0` holds.

use serde_json::{Number, Value};
use std::cmp::Ordering;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

/// Maximum nesting followed by [`json_eq`] and [`value_hash`]; deeper values
/// compare as unequal (never as equal), which is the safe direction for
/// `enum` / `const` / `uniqueItems`.
const MAX_VALUE_DEPTH: usize = 512;

#[derive(Debug, Clone, Copy)]
enum Num {
    Int(i128),
    Float(f64),
}

fn num(n: &Number) -> Num {
    if let Some(u) = n.as_u64() {
        Num::Int(i128::from(u))
    } else if let Some(i) = n.as_i64() {
        Num::Int(i128::from(i))
    } else {
        Num::Float(n.as_f64().unwrap_or(f64::NAN))
    }
}

/// 2^127 as f64 (exact).
const TWO_POW_127: f64 = 170_141_183_460_469_231_731_687_303_715_884_105_728.0;

fn cmp_int_float(i: i128, f: f64) -> Option<Ordering> {
    if f.is_nan() {
        return None;
    }
    if f >= TWO_POW_127 {
        return Some(Ordering::Less);
    }
    if f < -TWO_POW_127 {
        return Some(Ordering::Greater);
    }
    let t = f.trunc();
    // |t| < 2^127, integral: the conversion is exact.
    #[allow(clippy::cast_possible_truncation)]
    let ti = t as i128;
    match i.cmp(&ti) {
        Ordering::Equal => {
            if f > t {
                Some(Ordering::Less)
            } else if f < t {
                Some(Ordering::Greater)
            } else {
                Some(Ordering::Equal)
            }
        }
        other => Some(other),
    }
}

/// Exact numeric comparison of two JSON numbers (`None` only for NaN, which
/// JSON cannot carry).
pub(crate) fn compare(a: &Number, b: &Number) -> Option<Ordering> {
    match (num(a), num(b)) {
        (Num::Int(x), Num::Int(y)) => Some(x.cmp(&y)),
        (Num::Float(x), Num::Float(y)) => x.partial_cmp(&y),
        (Num::Int(x), Num::Float(y)) => cmp_int_float(x, y),
        (Num::Float(x), Num::Int(y)) => cmp_int_float(y, x).map(Ordering::reverse),
    }
}

/// JSON Schema "integer": any number with a zero fractional part (1.0 included).
pub(crate) fn is_integer(n: &Number) -> bool {
    match num(n) {
        Num::Int(_) => true,
        Num::Float(f) => f.is_finite() && f.fract() == 0.0,
    }
}

/// The decimal expansion of a number: `(mantissa, exponent)` with value
/// `mantissa * 10^exponent`, mantissa without trailing zeros (sign dropped).
/// Floats use the shortest representation that round-trips, i.e. the digits
/// the JSON text most likely had.
fn decimal(n: Num) -> Option<(u128, i64)> {
    let (mut mantissa, mut exp) = match n {
        Num::Int(i) => (i.unsigned_abs(), 0i64),
        Num::Float(f) => {
            if !f.is_finite() {
                return None;
            }
            // serde_json's shortest round-trip formatting (in the module
            // already for output; `{:e}` would bring core's own, ~15 KB of wasm):
            // `123.0`, `0.001`, `1.5e-7` or `1e300`.
            let text = Number::from_f64(f.abs())?.to_string();
            let (digits, e) = text.split_once('e').unwrap_or((&text, "0"));
            let e: i64 = e.parse().ok()?;
            let (int_part, frac_part) = digits.split_once('.').unwrap_or((digits, ""));
            let all: String = format!("{int_part}{frac_part}");
            let m: u128 = all.parse().ok()?;
            let frac_len = i64::try_from(frac_part.len()).ok()?;
            (m, e.checked_sub(frac_len)?)
        }
    };
    if mantissa == 0 {
        return Some((0, 0));
    }
    while mantissa % 10 == 0 {
        mantissa /= 10;
        exp = exp.checked_add(1)?;
    }
    Some((mantissa, exp))
}

fn mul_mod(a: u128, b: u128, m: u128) -> u128 {
    // Callers guarantee a, b < m < 2^64, so the product fits in u128.
    a.checked_mul(b)
        .map_or(1, |p| p.checked_rem(m).unwrap_or(1))
}

fn pow10_mod(mut e: u64, m: u128) -> u128 {
    let mut result = 1u128.checked_rem(m).unwrap_or(0);
    let mut base = 10u128.checked_rem(m).unwrap_or(0);
    while e > 0 {
        if e & 1 == 1 {
            result = mul_mod(result, base, m);
        }
        base = mul_mod(base, base, m);
        e >>= 1;
    }
    result
}

/// `x` is a multiple of `m` (`m > 0`, checked at compile time).
///
/// Integers are checked exactly. Otherwise both numbers are taken as the
/// decimals they were written as and divisibility is decided exactly, so
/// `0.0075` is a multiple of `0.0001` and `1e308` is not a multiple of
/// `0.123456789` (no overflow to infinity, no tolerance).
pub(crate) fn is_multiple_of(x: &Number, m: &Number) -> bool {
    let (nx, nm) = (num(x), num(m));
    if let (Num::Int(a), Num::Int(b)) = (nx, nm) {
        return a.checked_rem(b) == Some(0);
    }
    let (Some((a, p)), Some((b, q))) = (decimal(nx), decimal(nm)) else {
        return false;
    };
    if a == 0 {
        return true;
    }
    if b == 0 {
        return false;
    }
    if p >= q {
        // x/m = a * 10^(p-q) / b
        let Ok(k) = u64::try_from(p.saturating_sub(q)) else {
            return false;
        };
        if b > u128::from(u64::MAX) {
            return false;
        }
        let r = mul_mod(a.checked_rem(b).unwrap_or(1), pow10_mod(k, b), b);
        r == 0
    } else {
        // x/m = a / (b * 10^(q-p)); a has no trailing zeros so this is an
        // integer only if b * 10^(q-p) divides a.
        let Ok(k) = u32::try_from(q.saturating_sub(p)) else {
            return false;
        };
        match 10u128.checked_pow(k).and_then(|t| t.checked_mul(b)) {
            Some(d) => a.checked_rem(d) == Some(0),
            None => false,
        }
    }
}

fn eq_depth(a: &Value, b: &Value, depth: usize) -> bool {
    if depth > MAX_VALUE_DEPTH {
        return false;
    }
    let next = depth.saturating_add(1);
    match (a, b) {
        (Value::Null, Value::Null) => true,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::Number(x), Value::Number(y)) => compare(x, y) == Some(Ordering::Equal),
        (Value::String(x), Value::String(y)) => x == y,
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| eq_depth(p, q, next))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| eq_depth(v, w, next)))
        }
        _ => false,
    }
}

/// JSON equality: numbers by value (1 == 1.0), objects ignore key order.
pub(crate) fn json_eq(a: &Value, b: &Value) -> bool {
    eq_depth(a, b, 0)
}

fn hash_into(v: &Value, h: &mut DefaultHasher, depth: usize) {
    if depth > MAX_VALUE_DEPTH {
        0xdeu8.hash(h);
        return;
    }
    let next = depth.saturating_add(1);
    match v {
        Value::Null => 0u8.hash(h),
        Value::Bool(b) => {
            1u8.hash(h);
            b.hash(h);
        }
        Value::Number(n) => {
            2u8.hash(h);
            // Equal numbers map to the same f64 (an equal float is the exact
            // integer value); normalise -0.0.
            #[allow(clippy::cast_precision_loss)]
            let f = match num(n) {
                Num::Int(i) => i as f64,
                Num::Float(f) => f,
            };
            let f = if f == 0.0 { 0.0 } else { f };
            f.to_bits().hash(h);
        }
        Value::String(s) => {
            3u8.hash(h);
            s.hash(h);
        }
        Value::Array(a) => {
            4u8.hash(h);
            a.len().hash(h);
            for item in a {
                hash_into(item, h, next);
            }
        }
        Value::Object(o) => {
            5u8.hash(h);
            o.len().hash(h);
            // Order-independent combination of the entries.
            let mut acc = 0u64;
            for (k, item) in o {
                let mut eh = DefaultHasher::new();
                k.hash(&mut eh);
                hash_into(item, &mut eh, next);
                acc = acc.wrapping_add(eh.finish());
            }
            acc.hash(h);
        }
    }
}

fn value_hash(v: &Value) -> u64 {
    let mut h = DefaultHasher::new();
    hash_into(v, &mut h, 0);
    h.finish()
}

/// The first pair `(i, j)`, `i < j`, of equal items (smallest `j`, then `i`).
pub(crate) fn find_duplicate(items: &[Value]) -> Option<(usize, usize)> {
    if items.len() <= 16 {
        for (j, b) in items.iter().enumerate() {
            for (i, a) in items.iter().enumerate().take(j) {
                if json_eq(a, b) {
                    return Some((i, j));
                }
            }
        }
        return None;
    }
    let mut keyed: Vec<(u64, usize)> = items
        .iter()
        .enumerate()
        .map(|(i, v)| (value_hash(v), i))
        .collect();
    crate::vecmap::heap_sort(&mut keyed);
    let mut best: Option<(usize, usize)> = None;
    for (pos, &(h, i)) in keyed.iter().enumerate() {
        for &(h2, j) in keyed.iter().skip(pos.saturating_add(1)) {
            if h2 != h {
                break;
            }
            // i < j because ties are sorted by index.
            let (Some(a), Some(b)) = (items.get(i), items.get(j)) else {
                continue;
            };
            if json_eq(a, b) {
                let candidate = (i, j);
                best = match best {
                    Some((bi, bj)) if (bj, bi) <= (j, i) => Some((bi, bj)),
                    _ => Some(candidate),
                };
                break;
            }
        }
    }
    best
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn n(v: Value) -> Number {
        match v {
            Value::Number(n) => n,
            _ => Number::from(0),
        }
    }

    #[test]
    fn multiples() {
        let m = |x: Value, y: Value| is_multiple_of(&n(x), &n(y));
        assert!(m(json!(10), json!(2)));
        assert!(!m(json!(7), json!(2)));
        assert!(m(json!(4.5), json!(1.5)));
        assert!(!m(json!(35), json!(1.5)));
        assert!(m(json!(0.0075), json!(0.0001)));
        assert!(!m(json!(0.00751), json!(0.0001)));
        assert!(!m(json!(1e308), json!(0.123456789)));
        assert!(m(json!(12391239123u64), json!(1e-8)));
        assert!(m(json!(1e308), json!(1e300)));
        assert!(!m(json!(1e-300), json!(1e300)));
        assert!(m(json!(0), json!(0.5)));
        assert!(m(json!(-6), json!(3)));
        assert!(m(json!(u64::MAX), json!(5)));
    }

    #[test]
    fn comparisons() {
        let c = |x: Value, y: Value| compare(&n(x), &n(y)).unwrap();
        assert_eq!(c(json!(1), json!(1.0)), Ordering::Equal);
        assert_eq!(
            c(json!(9007199254740993u64), json!(9007199254740992.0)),
            Ordering::Greater
        );
        assert_eq!(c(json!(-3), json!(-2.5)), Ordering::Less);
        assert_eq!(c(json!(-2), json!(-2.5)), Ordering::Greater);
        assert_eq!(c(json!(u64::MAX), json!(1e300)), Ordering::Less);
        assert_eq!(c(json!(i64::MIN), json!(-1e300)), Ordering::Greater);
        assert!(is_integer(&n(json!(1.0))));
        assert!(!is_integer(&n(json!(1.5))));
    }

    /// `decimal` as first written, with core's `{:e}` shortest formatting.
    fn decimal_via_lower_exp(f: f64) -> Option<(u128, i64)> {
        let text = format!("{:e}", f.abs());
        let (digits, e) = text.split_once('e')?;
        let e: i64 = e.parse().ok()?;
        let (int_part, frac_part) = digits.split_once('.').unwrap_or((digits, ""));
        let mut m: u128 = format!("{int_part}{frac_part}").parse().ok()?;
        let mut e = e - i64::try_from(frac_part.len()).ok()?;
        if m == 0 {
            return Some((0, 0));
        }
        while m % 10 == 0 {
            m /= 10;
            e += 1;
        }
        Some((m, e))
    }

    #[test]
    fn float_digits_are_the_shortest_round_trip_ones() {
        let special = [
            0.0,
            -0.0,
            1.0,
            0.1,
            0.3,
            1.5e-7,
            123.0,
            1e21,
            1e22,
            1e23,
            5e-324,
            f64::MIN_POSITIVE,
            f64::MAX,
            9007199254740993.0,
            0.30000000000000004,
            1e-7,
            1e16,
            1e15,
            123456.789e-20,
        ];
        // The two agree but where the float lies exactly halfway between two
        // shortest candidates: `{:e}` rounds the half up, serde_json (like
        // JavaScript's Number::toString, which wrote the JSON) picks the even one.
        let check = |f: f64| {
            let ours = decimal(Num::Float(f));
            let core = decimal_via_lower_exp(f);
            if ours != core {
                assert!(ours.is_some() && core.is_some(), "{f:e}");
                let ((m, e), (n, _)) = (ours.unwrap(), core.unwrap());
                let exact = format!("{:.1100}", f.abs());
                let exact = exact.trim_start_matches(['0', '.']).trim_end_matches('0');
                let digits = exact.replace('.', "");
                assert!(
                    m % 2 == 0 && n == m + 1 && digits == format!("{m}5") && e < 0,
                    "{f:e}: {ours:?} vs {core:?}"
                );
            }
        };
        for f in special {
            check(f);
        }
        // 1149636667324797.25: "…797.2" and "…797.3" are equally close.
        let tie = 4_598_546_669_299_189.0 / 4.0;
        check(tie);
        assert_eq!(decimal(Num::Float(tie)), Some((11496366673247972, -1)));
        // A fixed-seed walk over bit patterns: every exponent, varied mantissas.
        let mut state = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..1_000_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let f = f64::from_bits(state);
            if f.is_finite() {
                check(f);
            }
        }
    }

    #[test]
    fn duplicates() {
        let many: Vec<Value> = (0..40).map(|i| json!({ "a": i })).collect();
        assert_eq!(find_duplicate(&many), None);
        let mut dup = many.clone();
        dup.push(json!({ "a": 3.0 }));
        assert_eq!(find_duplicate(&dup), Some((3, 40)));
        assert_eq!(find_duplicate(&[json!(1), json!(true)]), None);
        assert_eq!(find_duplicate(&[json!([1]), json!([1.0])]), Some((0, 1)));
    }
}
