//! A JSON number: [`Number`].

use alloc::boxed::Box;
use alloc::string::String;
use core::fmt;

use super::push_u64;

/// A JSON number: a `u64`, a negative `i64`, or a finite `f64` together with
/// the text it was parsed from.
///
/// Floats only come from JSON text (the bridge builds no fractional numbers
/// itself), and they are written back as that text, so no float formatting
/// ships in the wasm and `multipleOf` sees the decimals as written.
#[derive(Clone)]
pub struct Number(N);

#[derive(Clone)]
enum N {
    /// Any integer ≥ 0 that fits.
    PosInt(u64),
    /// Only integers < 0.
    NegInt(i64),
    /// Finite; the text is a JSON number that parses to it (`-0`, `1.50`,
    /// `2E+3`, `18446744073709551616`: as written).
    Float(f64, Box<str>),
}

impl Number {
    /// A float and the JSON number text it was parsed from (the parser's
    /// job: the text must be JSON and must round to `value`).
    pub(crate) fn float(value: f64, text: &str) -> Number {
        Number(N::Float(value, text.into()))
    }

    /// True for an integer that fits a `u64`.
    pub fn is_u64(&self) -> bool {
        matches!(self.0, N::PosInt(_))
    }

    /// True for an integer that fits an `i64`.
    pub fn is_i64(&self) -> bool {
        match self.0 {
            N::PosInt(n) => i64::try_from(n).is_ok(),
            N::NegInt(_) => true,
            N::Float(..) => false,
        }
    }

    /// True for a float (also one with an integral value, like `1.0`).
    pub fn is_f64(&self) -> bool {
        matches!(self.0, N::Float(..))
    }

    pub fn as_u64(&self) -> Option<u64> {
        match self.0 {
            N::PosInt(n) => Some(n),
            _ => None,
        }
    }

    pub fn as_i64(&self) -> Option<i64> {
        match self.0 {
            N::PosInt(n) => i64::try_from(n).ok(),
            N::NegInt(n) => Some(n),
            N::Float(..) => None,
        }
    }

    /// The value as an `f64` (rounded for integers past 2^53); always `Some`.
    pub fn as_f64(&self) -> Option<f64> {
        #[allow(clippy::cast_precision_loss)]
        Some(match self.0 {
            N::PosInt(n) => n as f64,
            N::NegInt(n) => n as f64,
            N::Float(f, _) => f,
        })
    }

    /// A float's text as it was written (`None` for an integer).
    pub fn float_text(&self) -> Option<&str> {
        match &self.0 {
            N::Float(_, text) => Some(text),
            _ => None,
        }
    }

    /// Appends the number as JSON text: integers in decimal, floats as written.
    pub(crate) fn write(&self, out: &mut String) {
        match &self.0 {
            N::PosInt(n) => push_u64(out, *n),
            N::NegInt(n) => {
                out.push('-');
                push_u64(out, n.unsigned_abs());
            }
            N::Float(_, text) => out.push_str(text),
        }
    }
}

/// Like serde_json's: integers equal integers of the same value, floats
/// equal floats of the same value (whatever their text; `0.0 == -0.0`), and
/// an integer never equals a float. (JSON Schema equality, where `1 == 1.0`,
/// is `schema::num`'s.)
impl PartialEq for Number {
    fn eq(&self, other: &Number) -> bool {
        match (&self.0, &other.0) {
            (N::PosInt(a), N::PosInt(b)) => a == b,
            (N::NegInt(a), N::NegInt(b)) => a == b,
            (N::Float(a, _), N::Float(b, _)) => a == b,
            _ => false,
        }
    }
}

impl fmt::Display for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut text = String::new();
        self.write(&mut text);
        f.write_str(&text)
    }
}

/// The JSON text (a `Value` shows as `Number(1.50)`).
impl fmt::Debug for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl From<u64> for Number {
    fn from(n: u64) -> Number {
        Number(N::PosInt(n))
    }
}

impl From<i64> for Number {
    fn from(n: i64) -> Number {
        match u64::try_from(n) {
            Ok(n) => Number(N::PosInt(n)),
            Err(_) => Number(N::NegInt(n)),
        }
    }
}

macro_rules! from_unsigned {
    ($($t:ty)*) => {$(
        impl From<$t> for Number {
            fn from(n: $t) -> Number {
                Number(N::PosInt(n as u64))
            }
        }
    )*};
}

macro_rules! from_signed {
    ($($t:ty)*) => {$(
        impl From<$t> for Number {
            fn from(n: $t) -> Number {
                Number::from(n as i64)
            }
        }
    )*};
}

from_unsigned!(u8 u16 u32 usize);
from_signed!(i8 i16 i32 isize);

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    #[test]
    fn integers_are_written_in_decimal() {
        for (n, text) in [
            (Number::from(0u64), "0"),
            (Number::from(7u8), "7"),
            (Number::from(u64::MAX), "18446744073709551615"),
            (Number::from(-1i64), "-1"),
            (Number::from(i64::MIN), "-9223372036854775808"),
            (Number::from(42i32), "42"),
            (Number::float(-0.0, "-0"), "-0"),
            (Number::float(150.0, "1.50E2"), "1.50E2"),
        ] {
            assert_eq!(n.to_string(), text);
        }
        assert!(Number::from(5i64).is_u64());
        assert_eq!(Number::from(-5i64).as_u64(), None);
        assert_eq!(Number::from(u64::MAX).as_i64(), None);
        assert_eq!(Number::from(3u64).as_f64(), Some(3.0));
        assert_eq!(Number::float(0.5, "0.50").float_text(), Some("0.50"));
        assert_eq!(Number::float(0.0, "0.0"), Number::float(-0.0, "-0"));
        assert_ne!(Number::from(1u64), Number::float(1.0, "1.0"));
    }
}
