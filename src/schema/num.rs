//! Numeric comparison, `multipleOf`, and JSON value equality (`const`,
//! `enum`, `uniqueItems`) by canonical forms, without hashing.
//!
//! JSON numbers reach us as serde_json's [`Number`]: an `u64`, an `i64` or
//! a finite `f64`. Integers are compared exactly (by sign and magnitude),
//! floats against integers exactly too, so `9007199254740993 >
//! 9007199254740992.0` holds; `multipleOf` works on the decimals the numbers
//! print as (a float's shortest round-trip decimal: `0.0075`, as written).

use crate::prelude::*;
use serde_json::{Number, Value};

use super::len_u64;
use crate::vecmap::heap_sort;

use core::cmp::Ordering;

/// Maximum nesting followed by [`json_eq`] and [`find_duplicate`]; deeper values
/// compare as unequal (never as equal), which is the safe direction for
/// `enum` / `const` / `uniqueItems`.
const MAX_VALUE_DEPTH: usize = 512;

/// An integer's order key: `(true, n)` for `n ≥ 0`, `(false, !|n|)` below
/// zero, so that keys compare as the integers do (no `i128` in the wasm).
type Key = (bool, u64);

fn int_key(negative: bool, magnitude: u64) -> Key {
    if negative && magnitude != 0 {
        (false, !magnitude)
    } else {
        (true, magnitude)
    }
}

/// The magnitude of the integer with key `k`.
fn magnitude(k: Key) -> u64 {
    if k.0 {
        k.1
    } else {
        !k.1
    }
}

#[derive(Debug, Clone, Copy)]
enum Num {
    Int(Key),
    Float(f64),
}

fn num(n: &Number) -> Num {
    if let Some(u) = n.as_u64() {
        Num::Int((true, u))
    } else if let Some(i) = n.as_i64() {
        Num::Int(int_key(true, i.unsigned_abs()))
    } else {
        Num::Float(n.as_f64().unwrap_or(f64::NAN))
    }
}

/// `f` without its fraction, toward zero (`f64::trunc` is std's).
fn trunc(f: f64) -> f64 {
    // From 2^52 on (and for NaN and the infinities) every double is whole.
    if f.is_nan() || f.abs() >= 4_503_599_627_370_496.0 {
        return f;
    }
    // |f| < 2^52: the conversion is exact.
    #[allow(clippy::cast_possible_truncation, clippy::cast_precision_loss)]
    let t = f as i64 as f64;
    t
}

/// `f` is a finite whole number.
pub(crate) fn is_whole(f: f64) -> bool {
    f.is_finite() && trunc(f) == f
}

/// 2^64 as f64 (exact).
const TWO_POW_64: f64 = 18_446_744_073_709_551_616.0;

/// The key of integral `t` with |t| < 2^64 (`-0.0` is 0).
fn float_key(t: f64) -> Key {
    // |t| < 2^64, integral: the conversion is exact.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    int_key(t < 0.0, t.abs() as u64)
}

fn cmp_int_float(i: Key, f: f64) -> Option<Ordering> {
    if f.is_nan() {
        return None;
    }
    // Integers are below 2^64 in magnitude.
    if f >= TWO_POW_64 {
        return Some(Ordering::Less);
    }
    if f <= -TWO_POW_64 {
        return Some(Ordering::Greater);
    }
    let t = trunc(f);
    Some(i.cmp(&float_key(t)).then(if f > t {
        Ordering::Less
    } else if f < t {
        Ordering::Greater
    } else {
        Ordering::Equal
    }))
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
        Num::Float(f) => is_whole(f),
    }
}

/// A number as the decimal it prints as (serde_json's `Display`: an
/// integer's digits, a float's shortest round-trip decimal, `0.0075`,
/// `1e+300`): its significant digits as one integer, without trailing
/// zeros (0 for zero), and the power of ten it is multiplied by, sign
/// dropped (`0.0075`: 75 and −4; `150.0`: 15 and 1). The digits always fit
/// a `u64`: an integer is one, a float has at most 17 significant digits
/// (`None`, never reached, if they did not).
fn decimal(n: &Number) -> Option<(u64, i64)> {
    // One pass: the mantissa's digits (each after the point shifts the
    // exponent down; zeros are multiplied in only once a nonzero digit
    // follows them, so trailing ones never are), then the exponent's sign
    // and digits (a handful: the text is serde_json's).
    let (mut digits, mut zeros, mut shift) = (0u64, 0u32, 0i64);
    let (mut fraction, mut in_exponent, mut negative, mut e) = (false, false, false, 0i64);
    for b in n.to_string().bytes() {
        match b {
            b'e' | b'E' => in_exponent = true,
            b'-' => negative = in_exponent,
            b'.' => fraction = true,
            b'0'..=b'9' if in_exponent => e = e * 10 + i64::from(b - b'0'),
            b'0'..=b'9' => {
                shift -= i64::from(fraction);
                if b == b'0' {
                    zeros += 1;
                } else {
                    digits = digits
                        .checked_mul(10u64.checked_pow(zeros + 1)?)?
                        .checked_add(u64::from(b - b'0'))?;
                    zeros = 0;
                }
            }
            _ => {} // `+`
        }
    }
    if digits == 0 {
        return Some((0, 0));
    }
    let e = if negative { -e } else { e };
    Some((digits, e + shift + i64::from(zeros)))
}

/// `x` is a multiple of `m` (`m > 0`, checked at compile time).
///
/// Integers are checked exactly. Otherwise both numbers are taken as the
/// decimals they print as (see [`decimal`]) and divisibility is decided
/// exactly, so `0.0075` is a multiple of `0.0001` and `1e308` is not a
/// multiple of `0.123456789` (no overflow to infinity, no tolerance).
pub(crate) fn is_multiple_of(x: &Number, m: &Number) -> bool {
    if let (Num::Int(a), Num::Int(b)) = (num(x), num(m)) {
        // The sign does not change divisibility.
        return magnitude(a).checked_rem(magnitude(b)) == Some(0);
    }
    let (Some((a, p)), Some((b, q))) = (decimal(x), decimal(m)) else {
        return false;
    };
    if a == 0 {
        return true;
    }
    if b == 0 || p < q {
        // x/m = a / (b × 10^(q-p)): a has no trailing zeros, so 10^(q-p)
        // does not divide it.
        return false;
    }
    // x/m = a × 10^(p-q) / b: the remainder of a × 10^(p-q) by b, by
    // squaring.
    let (mut remainder, mut base) = (a % b, 10 % b);
    let mut k = p - q;
    while k > 0 {
        if k & 1 == 1 {
            remainder = mul_mod(remainder, base, b);
        }
        base = mul_mod(base, base, b);
        k >>= 1;
    }
    remainder == 0
}

/// `a × b mod m` for `a, b < m`, by doubling: sums below 2^65, no 128-bit
/// division in the wasm.
fn mul_mod(a: u64, mut b: u64, m: u64) -> u64 {
    let (mut a, mut product, m) = (u128::from(a), 0u128, u128::from(m));
    while b > 0 {
        if b & 1 == 1 {
            product += a;
            if product >= m {
                product -= m;
            }
        }
        a <<= 1;
        if a >= m {
            a -= m;
        }
        b >>= 1;
    }
    // Below m < 2^64.
    u64::try_from(product).unwrap_or(0)
}

/// Appends the canonical form of `value`: bytes that are the same for two
/// values exactly when JSON Schema calls them equal (numbers by value, so
/// `1`, `1.0` and `1e0` are one; objects whatever their key order, their
/// entries sorted by key). Every part is tagged and strings and containers
/// are length-prefixed, so no two values run together. False (with `out`
/// partly written) when the value nests deeper than [`MAX_VALUE_DEPTH`].
fn canonical(value: &Value, out: &mut Vec<u8>, depth: usize) -> bool {
    if depth > MAX_VALUE_DEPTH {
        return false;
    }
    let next = depth + 1;
    let (tag, word) = match value {
        Value::Null => (0, 0),
        Value::Bool(b) => (1 + u8::from(*b), 0),
        Value::Number(n) => match num(n) {
            Num::Int((sign, k)) => (3 + u8::from(sign), k),
            // An integral float below 2^64 in magnitude is that integer
            // (larger ones equal no integer, and equal floats have equal bits).
            Num::Float(f) if f.abs() < TWO_POW_64 && is_whole(f) => {
                let (sign, k) = float_key(f);
                (3 + u8::from(sign), k)
            }
            Num::Float(f) => (5, f.to_bits()),
        },
        Value::String(s) => (6, len_u64(s.len())),
        Value::Array(items) => (7, len_u64(items.len())),
        Value::Object(map) => (8, len_u64(map.len())),
    };
    out.push(tag);
    out.extend_from_slice(&word.to_be_bytes());
    match value {
        Value::String(s) => out.extend_from_slice(s.as_bytes()),
        Value::Array(items) => return items.iter().all(|item| canonical(item, out, next)),
        Value::Object(map) => {
            // Plain pushes, no `collect`: each collect is its own code.
            let mut values: Vec<&Value> = Vec::with_capacity(map.len());
            let mut order: Vec<(&[u8], usize)> = Vec::with_capacity(map.len());
            for (i, (key, item)) in map.iter().enumerate() {
                order.push((key.as_bytes(), i));
                values.push(item);
            }
            heap_sort(&mut order);
            for (key, i) in order {
                out.extend_from_slice(&len_u64(key.len()).to_be_bytes());
                out.extend_from_slice(key);
                match values.get(i) {
                    Some(item) if canonical(item, out, next) => {}
                    _ => return false,
                }
            }
        }
        _ => {}
    }
    true
}

/// JSON equality: numbers by value (1 == 1.0), objects ignore key order.
/// Every value compares by its canonical form (one code path; a scalar's
/// form never fails, and numbers' forms agree with `compare`, see the
/// tests): O(n log n) in the size of containers, whatever the key orders
/// (never quadratic on hostile input).
pub(crate) fn json_eq(a: &Value, b: &Value) -> bool {
    let (mut x, mut y) = (Vec::new(), Vec::new());
    canonical(a, &mut x, 0) && canonical(b, &mut y, 0) && x == y
}

/// The first pair `(i, j)`, `i < j`, of equal items (smallest `j`, then `i`).
///
/// The items' canonical forms are sorted (with their indexes), so equal
/// items end up side by side: O(n log n) comparisons, no hashing, whatever
/// the input (a hostile array of a megabyte costs no quadratic time).
pub(crate) fn find_duplicate(items: &[Value]) -> Option<(usize, usize)> {
    let mut bytes = Vec::new();
    let mut spans = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let start = bytes.len();
        if canonical(item, &mut bytes, 0) {
            spans.push((start, bytes.len(), i));
        } else {
            // Too deep: equal to nothing.
            bytes.truncate(start);
        }
    }
    let mut forms: Vec<(&[u8], usize)> = Vec::with_capacity(spans.len());
    for &(start, end, i) in &spans {
        forms.push((bytes.get(start..end).unwrap_or_default(), i));
    }
    heap_sort(&mut forms);
    // Within a run of equal forms the indexes ascend: its first two are its
    // smallest pair.
    let mut best: Option<(usize, usize)> = None;
    for pair in forms.windows(2) {
        if let [(a, i), (b, j)] = pair {
            if a == b && best.is_none_or(|(bi, bj)| (*j, *i) < (bj, bi)) {
                best = Some((*i, *j));
            }
        }
    }
    best
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The equality as first written, pair by pair: the reference.
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
        // Decimals as they print, however long the text was.
        assert!(m(json!(0.3), json!(0.1)));
        let long = parsed("0.30000000000000000000000000000000000000001");
        assert!(is_multiple_of(&long, &parsed("0.1")));
        assert!(!is_multiple_of(&long, &parsed("0.2")));
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

    /// The number parsed from `text`.
    fn parsed(text: &str) -> Number {
        n(serde_json::from_str::<Value>(text).unwrap())
    }

    /// A float's shortest round-trip digits by core's `{:e}` formatting.
    fn decimal_via_lower_exp(f: f64) -> Option<(u64, i64)> {
        let text = format!("{:e}", f.abs());
        let (digits, e) = text.split_once('e')?;
        let e: i64 = e.parse().ok()?;
        let (int_part, frac_part) = digits.split_once('.').unwrap_or((digits, ""));
        let mut m: u64 = format!("{int_part}{frac_part}").parse().ok()?;
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

    /// A float's decimal is its shortest round-trip digits (as JavaScript's
    /// `JSON.stringify` writes them), whichever notation the text used
    /// (`{:e}`, `{:?}`, and `{}` with all its zeros).
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
            1e15,
            1e16,
            1e21,
            1e22,
            1e23,
            5e-324,
            f64::MIN_POSITIVE,
            f64::MAX,
            9007199254740993.0,
            0.30000000000000004,
            1e-7,
            123456.789e-20,
        ];
        // As many digits as core's shortest form, and they are the double
        // (where two shortest forms tie, core's and serde_json's may differ).
        let check = |f: f64| {
            let (want, _) = decimal_via_lower_exp(f).unwrap();
            for text in [format!("{f:e}"), format!("{f:?}"), format!("{f}")] {
                let number = parsed(&text);
                assert_eq!(
                    number.as_f64().map(f64::to_bits),
                    Some(f.to_bits()),
                    "{text}"
                );
                let (m, e) = decimal(&number).unwrap();
                assert_eq!(m.to_string().len(), want.to_string().len(), "{text}");
                assert_eq!(
                    format!("{m}e{e}").parse::<f64>().ok(),
                    Some(f.abs()),
                    "{text}"
                );
            }
        };
        for f in special {
            check(f);
        }
        // The double's digits, not the text's: two texts of one double
        // have one decimal; of two shortest forms at equal distance, the
        // even one (as JavaScript's `Number#toString` picks).
        let (low, high) = (parsed("1149636667324797.2"), parsed("1149636667324797.3"));
        assert_eq!(decimal(&low), Some((11496366673247972, -1)));
        assert_eq!(decimal(&high), decimal(&low));
        assert_eq!(decimal(&parsed("1.50E2")), Some((15, 1)));
        assert_eq!(decimal(&parsed("-0.00750e+1")), Some((75, -3)));
        assert_eq!(decimal(&parsed("100.0")), Some((1, 2)));
        assert_eq!(decimal(&parsed("-0.0e5")), Some((0, 0)));
        assert_eq!(
            decimal(&parsed("18446744073709551616")),
            Some((18446744073709552, 3))
        );
        assert_eq!(
            decimal(&parsed("0.30000000000000000000000000000000000000001")),
            Some((3, -1))
        );
        // Integers: their own digits, sign dropped.
        assert_eq!(decimal(&parsed("0")), Some((0, 0)));
        assert_eq!(decimal(&parsed("-1200")), Some((12, 2)));
        assert_eq!(
            decimal(&parsed("-9223372036854775808")),
            Some((9223372036854775808, 0))
        );
        assert_eq!(
            decimal(&parsed("18446744073709551615")),
            Some((18446744073709551615, 0))
        );
        // A fixed-seed walk over bit patterns: every exponent, varied mantissas.
        let mut state = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..200_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let f = f64::from_bits(state);
            if f.is_finite() {
                check(f);
            }
        }
    }

    /// `is_multiple_of` by plain means: the reference. Integers with `i128`
    /// remainders; decimals by multiplying the remainder by ten once per
    /// power.
    fn is_multiple_of_by_division(x: &Number, m: &Number) -> bool {
        if let (Num::Int(a), Num::Int(b)) = (num(x), num(m)) {
            let signed = |k: Key| -> i128 {
                if k.0 {
                    i128::from(k.1)
                } else {
                    -i128::from(!k.1)
                }
            };
            return signed(a).checked_rem(signed(b)) == Some(0);
        }
        let ((a, p), (b, q)) = (decimal(x).unwrap(), decimal(m).unwrap());
        if a == 0 {
            return true;
        }
        if b == 0 || p < q {
            return false;
        }
        let b = u128::from(b);
        let mut remainder = u128::from(a) % b;
        for _ in 0..p - q {
            remainder = remainder * 10 % b;
        }
        remainder == 0
    }

    /// Random decimals and integers, divisors of up to 40 digits.
    #[test]
    fn multiples_agree_with_division() {
        let mut state = 0x5851_f42d_4c95_7f2du64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let text = |next: &mut dyn FnMut() -> u64| -> String {
            let r = next();
            match r % 4 {
                0 => format!("{}", (r >> 8) % 1000),
                1 => format!("-{}", next()),
                2 => format!("{}", next()),
                _ => {
                    let digits = 1 + (r >> 8) % 40;
                    let mut t: String = (0..digits)
                        .map(|_| char::from(b'0' + (next() % 10) as u8))
                        .collect();
                    t.insert(0, '1');
                    let e = (next() % 60) as i64 - 30;
                    format!("{t}e{e}")
                }
            }
        };
        let mut multiples = 0;
        for _ in 0..20_000 {
            let (x, m) = (parsed(&text(&mut next)), parsed(&text(&mut next)));
            if m.as_f64().is_none_or(|f| f <= 0.0) {
                continue;
            }
            let want = is_multiple_of_by_division(&x, &m);
            multiples += usize::from(want);
            assert_eq!(is_multiple_of(&x, &m), want, "{x} / {m}");
            // And m with a 0 appended (a multiple of m when m is written
            // without an exponent).
            if let Ok(Value::Number(y)) = serde_json::from_str::<Value>(&format!("{m}0")) {
                assert_eq!(
                    is_multiple_of(&y, &m),
                    is_multiple_of_by_division(&y, &m),
                    "{y} / {m}"
                );
            }
        }
        assert!(multiples > 50, "the inputs include multiples: {multiples}");
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
        assert_eq!(
            find_duplicate(&[json!(2), json!(1), json!(2), json!(1)]),
            Some((0, 2))
        );
        assert_eq!(
            find_duplicate(&[json!(2), json!(1), json!(1), json!(2)]),
            Some((1, 2))
        );
    }

    /// Values from a small pool: numbers spelled several ways, strings,
    /// arrays and objects with their keys in either order.
    fn pool_value(state: &mut u64, depth: usize) -> Value {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        let pick = *state % if depth < 3 { 14 } else { 10 };
        let number = |text: &str| serde_json::from_str::<Value>(text).unwrap();
        match pick {
            0 => Value::Null,
            1 => Value::Bool(*state & 16 == 0),
            2 => number(["1", "1.0", "1e0", "10e-1", "0.1e1"][(*state >> 8) as usize % 5]),
            3 => number(["0", "-0", "0.0", "-0.0", "0e5"][(*state >> 8) as usize % 5]),
            4 => number(["-1", "-1.0", "2", "1.5", "15e-1"][(*state >> 8) as usize % 5]),
            5 => number(
                [
                    "18446744073709551615",
                    "18446744073709551616",
                    "1.8446744073709552e19",
                ][(*state >> 8) as usize % 3],
            ),
            6 => number(
                ["-9223372036854775808", "-9223372036854775809", "1e300"]
                    [(*state >> 8) as usize % 3],
            ),
            7 => Value::from(["", "a", "b", "ab"][(*state >> 8) as usize % 4]),
            8 => json!({}),
            9 => json!([]),
            10 | 11 => {
                let len = (*state >> 8) as usize % 3;
                Value::Array((0..len).map(|_| pool_value(state, depth + 1)).collect())
            }
            _ => {
                let (a, b) = (pool_value(state, depth + 1), pool_value(state, depth + 1));
                let entries = if *state & 32 == 0 {
                    vec![("a", a), ("b", b)]
                } else {
                    vec![("b", b), ("a", a)]
                };
                let len = (*state >> 8) as usize % 3;
                Value::Object(
                    entries
                        .into_iter()
                        .take(len)
                        .map(|(k, v)| (k.to_owned(), v))
                        .collect(),
                )
            }
        }
    }

    /// The canonical forms agree with the pairwise reference, and the
    /// duplicate found is the one a pairwise search finds.
    #[test]
    fn canonical_equality_is_the_reference_equality() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut equal_pairs = 0;
        for _ in 0..3000 {
            let items: Vec<Value> = (0..6).map(|_| pool_value(&mut state, 0)).collect();
            let mut want = None;
            for (j, b) in items.iter().enumerate() {
                for (i, a) in items.iter().enumerate() {
                    let reference = eq_depth(a, b, 0);
                    assert_eq!(json_eq(a, b), reference, "{a} vs {b}");
                    equal_pairs += usize::from(reference && i != j);
                    if reference && i < j && want.is_none() {
                        want = Some((i, j));
                    }
                }
            }
            assert_eq!(find_duplicate(&items), want, "{items:?}");
        }
        assert!(
            equal_pairs > 1000,
            "the pool makes equal pairs: {equal_pairs}"
        );
    }

    /// Hostile sizes stay fast: many items, big objects in different orders.
    #[test]
    fn big_inputs_are_not_quadratic() {
        let many: Vec<Value> = (0..200_000u64).map(Value::from).collect();
        assert_eq!(find_duplicate(&many), None);
        let keys: Vec<String> = (0..50_000).map(|i| format!("k{i}")).collect();
        let forward = Value::Object(keys.iter().map(|k| (k.clone(), json!(1))).collect());
        let backward = Value::Object(keys.iter().rev().map(|k| (k.clone(), json!(1.0))).collect());
        assert!(json_eq(&forward, &backward));
        assert_eq!(
            find_duplicate(&[json!(0), forward.clone(), backward]),
            Some((1, 2))
        );
        let mut other = keys.clone();
        other[49_999] = "x".into();
        let other = Value::Object(other.iter().map(|k| (k.clone(), json!(1))).collect());
        assert!(!json_eq(&forward, &other));
    }

    /// Values nested past the limit equal nothing (not even themselves);
    /// a leaf exactly `MAX_VALUE_DEPTH` deep still compares.
    #[test]
    fn too_deep_values_are_unequal() {
        let mut deep = json!(1);
        for _ in 0..MAX_VALUE_DEPTH {
            deep = Value::Array(vec![deep]);
        }
        assert!(json_eq(&deep, &deep.clone()));
        assert_eq!(find_duplicate(&[deep.clone(), deep.clone()]), Some((0, 1)));
        deep = Value::Array(vec![deep]);
        assert!(!json_eq(&deep, &deep.clone()));
        assert_eq!(find_duplicate(&[deep.clone(), deep]), None);
    }
}
