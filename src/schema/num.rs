//! Numeric comparison and `multipleOf` (value equality, built on
//! [`compare`], is in `equal.rs`).
//!
//! JSON numbers reach us as serde_json's [`Number`]: an `u64`, an `i64` or
//! a finite `f64`. Integers are compared exactly (by sign and magnitude),
//! floats against integers exactly too, so `9007199254740993 >
//! 9007199254740992.0` holds; `multipleOf` works on the decimals the numbers
//! print as (a float's shortest round-trip decimal: `0.0075`, as written).

use crate::prelude::*;
use serde_json::Number;

use core::cmp::Ordering;

/// An integer's order key: `(true, n)` for `n ≥ 0`, `(false, !|n|)` below
/// zero, so that keys compare as the integers do (no `i128` in the wasm).
pub(super) type Key = (bool, u64);

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
pub(super) enum Num {
    Int(Key),
    Float(f64),
}

pub(super) fn num(n: &Number) -> Num {
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
pub(super) const TWO_POW_64: f64 = 18_446_744_073_709_551_616.0;

/// The key of integral `t` with |t| < 2^64 (`-0.0` is 0).
pub(super) fn float_key(t: f64) -> Key {
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

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

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
}
