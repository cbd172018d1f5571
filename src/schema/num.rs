//! Numeric comparison, `multipleOf`, and JSON value equality (`const`,
//! `enum`, `uniqueItems`) by canonical forms, without hashing.
//!
//! JSON numbers reach us as [`Number`]: an `u64`, an `i64` or a finite
//! `f64` with the text it was written as. Integers are compared exactly (by
//! sign and magnitude), floats against integers exactly too, so
//! `9007199254740993 > 9007199254740992.0` holds; `multipleOf` works on the
//! written decimals.

use super::len_u64;
use crate::json::{is_whole, trunc, Number, Value};
use crate::vecmap::heap_sort;

use core::cmp::Ordering;
use core::num::NonZeroU128;

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

/// A number as the decimal it was written as: its significant digits (values
/// 0–9, without leading or trailing zeros; none for zero) and the power of
/// ten they are multiplied by, sign dropped. Integers are their own digits;
/// a float's come from its text (`0.0075`: `[7, 5]` and −4; `1.50E2`: `[1, 5]`
/// and 1), whatever their count. Exponents saturate (`1e-99999999999999999999`
/// keeps its one digit and an exponent of about `i64::MIN`).
fn decimal(n: &Number) -> (Vec<u8>, i64) {
    // An integer is read from its decimal text too (the JSON writer's);
    // a float's text is as written. One pass: the sign, the mantissa's
    // digits (leading zeros skipped; each after the point shifts the
    // exponent down), the exponent's sign and digits.
    let mut text = String::new();
    n.write(&mut text);
    let mut digits = Vec::with_capacity(text.len());
    let (mut in_exponent, mut negative, mut fraction) = (false, false, false);
    // The exponent as written, the digits after the point, the trailing
    // zeros (each below the text's length: no overflow).
    let (mut e, mut after_point, mut trailing) = (0i64, 0i64, 0i64);
    for b in text.bytes() {
        match b {
            b'e' | b'E' => in_exponent = true,
            // The number's own sign is dropped.
            b'-' => negative = in_exponent,
            b'+' => {}
            b'.' => fraction = true,
            _ if in_exponent => {
                e = e
                    .saturating_mul(10)
                    .saturating_add(i64::from(b.wrapping_sub(b'0')));
            }
            _ => {
                after_point += i64::from(fraction);
                let d = b.wrapping_sub(b'0');
                if d != 0 || !digits.is_empty() {
                    digits.push(d);
                }
            }
        }
    }
    // Trailing zeros dropped, each shifting the exponent up.
    while digits.last() == Some(&0) {
        digits.pop();
        trailing += 1;
    }
    let e = if negative { -e } else { e };
    // Down by the digits after the point, then up by the trailing zeros,
    // saturating in that order (as one step per digit would).
    let exponent = if digits.is_empty() {
        0
    } else {
        e.saturating_sub(after_point).saturating_add(trailing)
    };
    (digits, exponent)
}

/// The limit on a `multipleOf`'s significant digits as one number, so that
/// `r × 10 + 9` stays below 2^128 for any remainder `r` (37 digits always fit).
const DIVISOR_LIMIT: u128 = 1 << 124;

/// `x mod m` for `x < 10 m` (`m > 0`), by subtraction: no `u128` division
/// in the wasm.
fn reduce(mut x: u128, m: NonZeroU128) -> u128 {
    while x >= m.get() {
        x -= m.get();
    }
    x
}

/// `a × b mod m` for `a, b < m < 2^127`, by doubling: nothing overflows.
fn mul_mod(mut a: u128, mut b: u128, m: NonZeroU128) -> u128 {
    let mut product = 0;
    while b > 0 {
        if b & 1 == 1 {
            product = reduce(product + a, m);
        }
        a = reduce(a << 1, m);
        b >>= 1;
    }
    product
}

fn pow10_mod(mut e: u64, m: NonZeroU128) -> u128 {
    let mut result = reduce(1, m);
    let mut base = reduce(10, m);
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
/// `0.0075` is a multiple of `0.0001`, `1e308` is not a multiple of
/// `0.123456789` (no overflow to infinity, no tolerance), and
/// `0.30000000000000000000000000000000000000001` is not a multiple of `0.1`
/// (however many digits `x` has: it is read digit by digit).
///
/// The divisor's significant digits must fit in 2^124 (37 digits always do).
/// Past that, the fallback: `x` counts as a multiple only when it is 0 or has
/// the divisor's very digits (`x = m × 10^k`, `k ≥ 0`).
pub(crate) fn is_multiple_of(x: &Number, m: &Number) -> bool {
    if let (Num::Int(a), Num::Int(b)) = (num(x), num(m)) {
        // The sign does not change divisibility.
        return magnitude(a).checked_rem(magnitude(b)) == Some(0);
    }
    let ((a, p), (b, q)) = (decimal(x), decimal(m));
    if a.is_empty() {
        return true;
    }
    if b.is_empty() || p < q {
        // x/m = a / (b × 10^(q-p)): a has no trailing zeros, so 10^(q-p)
        // does not divide it.
        return false;
    }
    // x/m = a × 10^(p-q) / b
    // b's digits as one number while below the limit (then `reduce` by it
    // never overflows).
    let mut divisor = 0u128;
    for &d in &b {
        divisor = divisor * 10 + u128::from(d);
        if divisor >= DIVISOR_LIMIT {
            return a == b;
        }
    }
    let Some(divisor) = NonZeroU128::new(divisor) else {
        return a == b;
    };
    let mut remainder = 0;
    for &d in &a {
        remainder = reduce(remainder * 10 + u128::from(d), divisor);
    }
    let k = u64::try_from(p.saturating_sub(q)).unwrap_or(u64::MAX);
    mul_mod(remainder, pow10_mod(k, divisor), divisor) == 0
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
    use crate::json::testing::json;

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

    /// `decimal` as a `u128` mantissa (when it fits) and an exponent.
    fn decimal_u128(n: &Number) -> Option<(u128, i64)> {
        let (digits, e) = decimal(n);
        let m = digits
            .iter()
            .try_fold(0u128, |m, &d| m.checked_mul(10)?.checked_add(u128::from(d)))?;
        Some((m, e))
    }

    /// The number parsed from `text`.
    fn parsed(text: &str) -> Number {
        n(crate::json::parse(text).unwrap())
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

    /// Floats written with their shortest round-trip digits (as JavaScript's
    /// `JSON.stringify` writes them) keep exactly those digits, in any of
    /// Rust's notations (`{:e}`, `{:?}`, and `{}` with all its zeros).
    #[test]
    fn float_digits_are_the_written_ones() {
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
        let check = |f: f64| {
            let want = decimal_via_lower_exp(f);
            for text in [format!("{f:e}"), format!("{f:?}"), format!("{f}")] {
                let number = parsed(&text);
                assert_eq!(
                    number.as_f64().map(f64::to_bits),
                    Some(f.to_bits()),
                    "{text}"
                );
                assert_eq!(decimal_u128(&number), want, "{text}");
            }
        };
        for f in special {
            check(f);
        }
        // 1149636667324797.25 lies halfway between two shortest candidates:
        // each text keeps its own digits, though both are the same double.
        let tie = 4_598_546_669_299_189.0 / 4.0;
        let (low, high) = (parsed("1149636667324797.2"), parsed("1149636667324797.3"));
        assert_eq!(low.as_f64(), Some(tie));
        assert_eq!(high.as_f64(), Some(tie));
        assert_eq!(decimal_u128(&low), Some((11496366673247972, -1)));
        assert_eq!(decimal_u128(&high), Some((11496366673247973, -1)));
        // Trailing and leading zeros and exponents in every spelling.
        assert_eq!(decimal_u128(&parsed("1.50E2")), Some((15, 1)));
        assert_eq!(decimal_u128(&parsed("-0.00750e+1")), Some((75, -3)));
        assert_eq!(decimal_u128(&parsed("100.0")), Some((1, 2)));
        assert_eq!(decimal_u128(&parsed("-0.0e5")), Some((0, 0)));
        assert_eq!(
            decimal_u128(&parsed("18446744073709551616")),
            Some((18446744073709551616, 0))
        );
        // Integers: their own digits, sign dropped.
        assert_eq!(decimal_u128(&parsed("0")), Some((0, 0)));
        assert_eq!(decimal_u128(&parsed("-1200")), Some((12, 2)));
        assert_eq!(
            decimal_u128(&parsed("-9223372036854775808")),
            Some((9223372036854775808, 0))
        );
        assert_eq!(
            decimal_u128(&parsed("18446744073709551615")),
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

    /// `decimal` as written before its one-pass form: sign stripped, split
    /// at the `e`, the exponent read, then the mantissa's digits.
    fn decimal_in_two_passes(n: &Number) -> Option<(Vec<u8>, i64)> {
        let mut text = String::new();
        n.write(&mut text);
        let text = text.strip_prefix('-').unwrap_or(&text);
        let (mantissa, exponent) = match text.bytes().position(|b| b | 0x20 == b'e') {
            Some(at) => (text.get(..at)?, text.get(at + 1..)?),
            None => (text, ""),
        };
        let mut negative = false;
        let mut e = 0i64;
        for b in exponent.bytes() {
            match b {
                b'-' => negative = true,
                b'+' => {}
                digit => {
                    e = e
                        .saturating_mul(10)
                        .saturating_add(i64::from(digit.wrapping_sub(b'0')));
                }
            }
        }
        let mut exponent = if negative { -e } else { e };
        let mut fraction = false;
        let mut digits = Vec::new();
        for b in mantissa.bytes() {
            if b == b'.' {
                fraction = true;
                continue;
            }
            if fraction {
                exponent = exponent.saturating_sub(1);
            }
            let d = b.wrapping_sub(b'0');
            if d != 0 || !digits.is_empty() {
                digits.push(d);
            }
        }
        while digits.last() == Some(&0) {
            digits.pop();
            exponent = exponent.saturating_add(1);
        }
        if digits.is_empty() {
            exponent = 0;
        }
        Some((digits, exponent))
    }

    #[test]
    fn decimal_in_one_pass_as_in_two() {
        let mut texts: Vec<String> = [
            "0",
            "-0",
            "0.0",
            "-0.000e5",
            "1",
            "-1",
            "10",
            "100.0",
            "0.0075",
            "1.50E2",
            "-0.00750e+1",
            "18446744073709551615",
            "-9223372036854775808",
            "18446744073709551616",
            "1e-99999999999999999999",
            "1.000e-99999999999999999999",
            "1000e99999999999999999999",
            "0.001e99999999999999999999",
            "123.456E-7",
            "9223372036854775807e1",
            "1e9223372036854775807",
            "1.0e-9223372036854775807",
            "10.00e-9223372036854775808",
        ]
        .iter()
        .map(|t| t.to_string())
        .collect();
        let mut state = 0x1234_5678_9abc_def1u64;
        for _ in 0..20_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let digits = |k: u64| -> String {
                (0..k)
                    .map(|i| char::from(b'0' + ((state >> (i % 60)) % 10) as u8))
                    .collect()
            };
            let int = digits(1 + state % 6);
            let frac = digits(state % 5);
            let exp = [
                "",
                "e5",
                "E-3",
                "e+21",
                "e-400",
                "e99999999999999999999",
                "E-99999999999999999999",
            ][(state % 7) as usize];
            let sign = if state & 1 == 0 { "" } else { "-" };
            let int = int.trim_start_matches('0');
            let int = if int.is_empty() { "0" } else { int };
            let frac = if frac.is_empty() {
                String::new()
            } else {
                format!(".{frac}")
            };
            texts.push(format!("{sign}{int}{frac}{exp}"));
        }
        let mut checked = 0;
        for text in &texts {
            let Ok(Value::Number(number)) = crate::json::parse(text) else {
                continue;
            };
            assert_eq!(
                Some(decimal(&number)),
                decimal_in_two_passes(&number),
                "{text}"
            );
            checked += 1;
        }
        assert!(checked > 10_000, "{checked}");
    }

    /// Lexemes with more significant digits than a `u128` holds: no panic,
    /// and an exact answer while the divisor fits (see `is_multiple_of` for
    /// the fallback past it).
    #[test]
    fn long_lexemes() {
        let m = |x: &str, y: &str| is_multiple_of(&parsed(x), &parsed(y));
        let long = "0.30000000000000000000000000000000000000001";
        assert!(decimal_u128(&parsed(long)).is_none());
        assert!(!m(long, "0.1"));
        assert!(!m(long, "3"));
        assert!(m(long, "1e-41"));
        assert!(m(long, "0.00000000000000000000000000000000000000001"));
        assert!(!m(long, "2e-41"));
        assert!(m("0.30000000000000000000000000000000000000000", "0.1"));
        // 0.111…1 (1000 ones): the repunit R(1000) is a multiple of 11, not of 3.
        let ones = format!("0.{}", "1".repeat(1000));
        assert!(m(&ones, "1e-1000"));
        assert!(m(&ones, "11e-1000"));
        assert!(!m(&ones, "3e-1000"));
        assert!(!m(&ones, "1e-999"));
        let big = format!("{}e-990", "7".repeat(1000));
        assert!(m(&big, "7e-990"));
        assert!(!m(&big, "0.5"));
        // A divisor of 37 significant digits is still exact.
        let d37 = format!("0.{}", "9".repeat(37));
        assert!(m(&format!("{}.{}", "9".repeat(37), "0"), &d37));
        assert!(m(&"9".repeat(19), &format!("0.{}", "9".repeat(19))));
        // Past that, the fallback: only 0 and the divisor's own digits.
        assert!(m(long, long));
        assert!(m("0", long));
        assert!(m("30000000000000000000000000000000000000001e5", long));
        assert!(!m("0.60000000000000000000000000000000000000002", long));
        assert!(!m("0.03000000000000000000000000000000000000001", long));
        // Saturating exponents.
        assert!(!m("1e-99999999999999999999999", "0.5"));
        assert!(m("0e99999999999999999999999", "0.5"));
        assert!(m("1.5", "1e-99999999999999999999999"));
        assert_eq!(
            compare(&parsed(long), &parsed("0.3")),
            Some(Ordering::Equal)
        );
    }

    /// `is_multiple_of` as first written, with `u128` / `i128` remainders:
    /// the reference for the subtraction-based one.
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
        let ((a, p), (b, q)) = (decimal(x), decimal(m));
        if a.is_empty() {
            return true;
        }
        if b.is_empty() || p < q {
            return false;
        }
        let divisor = b
            .iter()
            .try_fold(0u128, |n, &d| n.checked_mul(10)?.checked_add(u128::from(d)))
            .filter(|&d| d < DIVISOR_LIMIT)
            .and_then(NonZeroU128::new);
        let Some(divisor) = divisor else {
            return a == b;
        };
        let mul_mod = |mut a: u128, mut b: u128| {
            let mut product = 0;
            while b > 0 {
                if b & 1 == 1 {
                    product = (product + a) % divisor;
                }
                a = (a << 1) % divisor;
                b >>= 1;
            }
            product
        };
        let remainder = a
            .iter()
            .fold(0u128, |r, &d| (r * 10 + u128::from(d)) % divisor);
        let mut k = u64::try_from(p.saturating_sub(q)).unwrap_or(u64::MAX);
        let (mut result, mut base) = (1 % divisor, 10 % divisor);
        while k > 0 {
            if k & 1 == 1 {
                result = mul_mod(result, base);
            }
            base = mul_mod(base, base);
            k >>= 1;
        }
        mul_mod(remainder, result) == 0
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
            if let Ok(Value::Number(y)) = crate::json::parse(&format!("{m}0")) {
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
        let number = |text: &str| crate::json::parse(text).unwrap();
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
                crate::json::obj(entries.into_iter().take(len).collect())
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
        let forward: Value =
            crate::json::obj(keys.iter().map(|k| (k.as_str(), Value::from(1))).collect());
        let backward: Value = crate::json::obj(
            keys.iter()
                .rev()
                .map(|k| (k.as_str(), crate::json::parse("1.0").unwrap()))
                .collect(),
        );
        assert!(json_eq(&forward, &backward));
        assert_eq!(
            find_duplicate(&[json!(0), forward.clone(), backward]),
            Some((1, 2))
        );
        let mut other = keys.clone();
        other[49_999] = "x".into();
        let other = crate::json::obj(other.iter().map(|k| (k.as_str(), Value::from(1))).collect());
        assert!(!json_eq(&forward, &other));
    }

    /// Values nested past the limit equal nothing (not even themselves).
    #[test]
    fn too_deep_values_are_unequal() {
        let mut deep = json!(1);
        for _ in 0..=MAX_VALUE_DEPTH {
            deep = Value::Array(vec![deep]);
        }
        assert!(!json_eq(&deep, &deep.clone()));
        assert_eq!(find_duplicate(&[deep.clone(), deep]), None);
    }
}
