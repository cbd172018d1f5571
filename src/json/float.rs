//! Decimal digits to the nearest `f64`, exactly: [`to_f64`].

use alloc::vec;
use alloc::vec::Vec;

/// Significant digits kept; any nonzero digit after them counts as "a bit
/// more" (a double's halfway point has at most 767 significant digits).
const MAX_DIGITS: usize = 800;

/// The decimal `int.frac × 10^exponent` (`digits` as ASCII: the `int_len`
/// digits of `int`, then those of `frac` after a `.` if any) correctly rounded
/// to the nearest `f64` (ties to even; infinity when too big), like
/// `str::parse::<f64>`, but without core's float parser and its tables
/// (~18 KB of wasm): exact small cases by one float operation, the rest by
/// exact big-integer division.
pub(super) fn to_f64(digits: &[u8], int_len: usize, exponent: i32) -> f64 {
    // value = 0.d1d2d3… × 10^point, d1 nonzero; `big` holds the kept digits.
    let mut point = i64::try_from(int_len).unwrap_or(i64::MAX);
    let mut big = Big(Vec::new());
    let mut small = 0u64;
    let mut kept = 0usize;
    let mut sticky = false;
    // Digits go into `big` nine at a time: `chunk` holds them, `scale` is
    // 10^(their count).
    let mut chunk = 0u32;
    let mut scale = 1u32;
    for &byte in digits {
        let digit = byte.wrapping_sub(b'0');
        if digit > 9 {
            continue; // the point
        }
        if kept == 0 && digit == 0 {
            point -= 1;
        } else if kept < MAX_DIGITS {
            kept += 1;
            small = small.wrapping_mul(10).wrapping_add(u64::from(digit));
            chunk = chunk * 10 + u32::from(digit);
            scale *= 10;
            if scale == 1_000_000_000 {
                big.mul_add(scale, chunk);
                (chunk, scale) = (0, 1);
            }
        } else {
            sticky |= digit != 0;
        }
    }
    big.mul_add(scale, chunk);
    let magnitude = point.saturating_add(i64::from(exponent));
    if kept == 0 || magnitude < -325 {
        return 0.0;
    }
    if magnitude > 310 {
        return f64::INFINITY;
    }
    // value = big × 10^e
    let e = magnitude - i64::try_from(kept).unwrap_or(0);
    if kept <= 15 && (-22..=22).contains(&e) {
        // Both exact (< 2^53 and 10^22), so one rounding: the correct one.
        let mut power = 1.0;
        for _ in 0..e.unsigned_abs() {
            power *= 10.0;
        }
        #[allow(clippy::cast_precision_loss)]
        let small = small as f64;
        return if e < 0 { small / power } else { small * power };
    }
    let (mut num, mut den) = (big, Big(vec![1]));
    if e < 0 {
        den.mul_pow10(e.unsigned_abs());
    } else {
        num.mul_pow10(e.unsigned_abs());
    }
    // Scale so the quotient has 56 or 57 bits: value = q × 2^-shift.
    let shift = 56 - (num.bits() - den.bits());
    if shift < 0 {
        den.shl(shift.unsigned_abs());
    } else {
        num.shl(shift.unsigned_abs());
    }
    den.shl(56);
    let mut q = 0u64;
    for _ in 0..57 {
        q <<= 1;
        if num.is_ge(&den) {
            num.sub(&den);
            q |= 1;
        }
        den.shr1();
    }
    sticky |= !num.0.is_empty();
    // Keep 53 bits, or fewer where the result is subnormal (lowest bit 2^-1074).
    let len = i64::from(64 - q.leading_zeros());
    let drop = (len - 53).max(shift - 1074);
    if drop >= 64 {
        return 0.0;
    }
    let rest = q & ((1u64 << drop) - 1);
    let half = 1u64 << (drop - 1);
    let mut mantissa = q >> drop;
    if rest > half || (rest == half && (sticky || mantissa & 1 == 1)) {
        mantissa += 1;
    }
    // mantissa ≤ 2^53 and the power of two are exact, so is their product
    // (or it overflows to infinity, as it should).
    let scale = drop - shift;
    #[allow(clippy::cast_sign_loss)]
    let power = if scale >= -1022 {
        f64::from_bits(((scale + 1023) as u64) << 52)
    } else {
        f64::from_bits(1u64 << (scale + 1074))
    };
    #[allow(clippy::cast_precision_loss)]
    let mantissa = mantissa as f64;
    mantissa * power
}

/// A non-negative big integer, 32-bit limbs from the least significant,
/// without high zero limbs.
struct Big(Vec<u32>);

impl Big {
    /// self = self × m + a.
    fn mul_add(&mut self, m: u32, a: u32) {
        let mut carry = u64::from(a);
        for limb in &mut self.0 {
            let v = u64::from(*limb) * u64::from(m) + carry;
            *limb = v as u32;
            carry = v >> 32;
        }
        if carry > 0 {
            self.0.push(carry as u32);
        }
    }

    /// self = self × 10^n, by up to 10^9 at a time.
    fn mul_pow10(&mut self, mut n: u64) {
        while n > 0 {
            let mut power = 1;
            while n > 0 && power < 1_000_000_000 {
                power *= 10;
                n -= 1;
            }
            self.mul_add(power, 0);
        }
    }

    fn bits(&self) -> i64 {
        let unused = self.0.last().map_or(0, |l| l.leading_zeros());
        i64::try_from(self.0.len() * 32).unwrap_or(0) - i64::from(unused)
    }

    fn shl(&mut self, n: u64) {
        let (limbs, bits) = ((n / 32) as usize, (n % 32) as u32);
        if bits > 0 {
            self.mul_add(1 << bits, 0);
        }
        // Whole limbs as zeros in front, one at a time (at most some 40,
        // over short numbers): less code than building a new vector.
        for _ in 0..limbs {
            self.0.insert(0, 0);
        }
    }

    fn shr1(&mut self) {
        let mut carry = 0;
        for limb in self.0.iter_mut().rev() {
            let low = *limb & 1;
            *limb = (*limb >> 1) | (carry << 31);
            carry = low;
        }
        self.trim();
    }

    /// self ≥ other (a plain loop: `Iterator::cmp` is its own code in the
    /// wasm).
    fn is_ge(&self, other: &Big) -> bool {
        if self.0.len() != other.0.len() {
            return self.0.len() > other.0.len();
        }
        for (mine, theirs) in self.0.iter().zip(&other.0).rev() {
            if mine != theirs {
                return mine > theirs;
            }
        }
        true
    }

    /// self -= other, for other ≤ self.
    fn sub(&mut self, other: &Big) {
        let mut borrow = false;
        let mut theirs = other.0.iter();
        for limb in &mut self.0 {
            let (v, b1) = limb.overflowing_sub(theirs.next().copied().unwrap_or(0));
            let (v, b2) = v.overflowing_sub(u32::from(borrow));
            *limb = v;
            borrow = b1 || b2;
        }
        self.trim();
    }

    fn trim(&mut self) {
        while self.0.last() == Some(&0) {
            self.0.pop();
        }
    }
}

/// 2^52: from here on every `f64` is a whole number.
const WHOLE_FROM: f64 = 4_503_599_627_370_496.0;

/// `f.trunc()` without std (core has no float rounding on stable Rust):
/// below 2^52 in magnitude the cast to `i64` and back is exact and drops
/// the fraction; from 2^52 on a float has no fraction. NaN stays NaN.
pub fn trunc(f: f64) -> f64 {
    if f.abs() < WHOLE_FROM {
        // |f| < 2^52: fits i64, and the integral part is exact in f64.
        #[allow(clippy::cast_possible_truncation, clippy::cast_precision_loss)]
        let whole = (f as i64) as f64;
        // Keep the sign of -0.5 → -0.0, as `trunc` does.
        if whole == 0.0 && f.is_sign_negative() {
            -0.0
        } else {
            whole
        }
    } else {
        f
    }
}

/// A finite float without a fractional part (`f.fract() == 0.0`).
pub fn is_whole(f: f64) -> bool {
    f.is_finite() && trunc(f) == f
}

#[cfg(test)]
mod rounding_tests {
    use super::{is_whole, trunc};

    #[test]
    fn trunc_and_is_whole_agree_with_std() {
        let cases = [
            0.0,
            -0.0,
            0.5,
            -0.5,
            1.0,
            -1.0,
            1.5,
            -1.5,
            2.999_999,
            1e15 + 0.5,
            4_503_599_627_370_495.5,
            4_503_599_627_370_496.0,
            9.007_199_254_740_993e15,
            1e300,
            -1e300,
            f64::MIN_POSITIVE,
            f64::MAX,
            f64::MIN,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ];
        for f in cases {
            assert_eq!(trunc(f).to_bits(), f.trunc().to_bits(), "trunc({f})");
            assert_eq!(
                is_whole(f),
                f.is_finite() && f.fract() == 0.0,
                "is_whole({f})"
            );
        }
        assert!(trunc(f64::NAN).is_nan());
        assert!(!is_whole(f64::NAN));
    }
}
