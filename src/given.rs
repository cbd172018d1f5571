//! A value the page gave for an option or a definition field, as the
//! boundary read it off a JS object: the option rules (in the modules that
//! own each option) decide over these plain values, so they are tested
//! natively and the boundary only reads properties.

use crate::prelude::*;
use serde_json::Value;

/// One property's value, by its JS type.
#[derive(Debug, Clone, PartialEq)]
pub enum Given {
    Undefined,
    Null,
    Text(String),
    Number(f64),
    Function,
    /// An object that is not a function (an array too).
    Object,
    /// A boolean, a symbol or a BigInt.
    Other,
}

impl Given {
    /// `undefined` or `null`: what most options take as "not given".
    pub fn is_absent(&self) -> bool {
        matches!(self, Given::Undefined | Given::Null)
    }
}

/// A structured property (`hints`, `sensitive`): absent (`undefined` or
/// `null`), or what its `JSON.stringify` text parses to.
#[derive(Debug, Clone, PartialEq)]
pub enum GivenJson {
    Absent,
    Json(Value),
    /// `JSON.stringify` gave no text or threw (a function, a BigInt, a cycle).
    NotJson,
}

/// A value the core takes as JSON text, as `JSON.stringify` wrote it.
#[derive(Debug, Clone, PartialEq)]
pub enum GivenText {
    Undefined,
    Json(String),
    /// `JSON.stringify` gave no text or threw (a function, a BigInt, a cycle).
    NotJson,
}

/// An array option, copied entry by entry.
#[derive(Debug, Clone, PartialEq)]
pub enum GivenList<T> {
    Undefined,
    Items(Vec<T>),
    /// Not an array (`null` too), or one whose reading threw.
    NotList,
}

/// A value `JSON.stringify` would drop or write as `null`: where a value
/// must be JSON (a tool's result, a validated input) it is refused instead
/// of silently changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotJson {
    NaN,
    Infinity,
    NegativeInfinity,
    Function,
    Symbol,
    BigInt,
}

impl NotJson {
    /// A number JSON cannot write.
    pub fn number(n: f64) -> Option<NotJson> {
        if n.is_nan() {
            Some(NotJson::NaN)
        } else if n == f64::INFINITY {
            Some(NotJson::Infinity)
        } else if n == f64::NEG_INFINITY {
            Some(NotJson::NegativeInfinity)
        } else {
            None
        }
    }

    /// Why the value under `key` (its property name, `""` at the top) is
    /// refused: `NaN at "price"`.
    pub fn reason(self, key: &str) -> String {
        let what = match self {
            NotJson::NaN => "NaN",
            NotJson::Infinity => "Infinity",
            NotJson::NegativeInfinity => "-Infinity",
            NotJson::Function => "function",
            NotJson::Symbol => "symbol",
            NotJson::BigInt => "bigint",
        };
        format!("{what} at \"{key}\"")
    }
}

/// An options argument: absent (`undefined`, `null`) or an object that is
/// not a function; anything else is `refusal`.
pub fn options_object<E>(given: &Given, refusal: E) -> Result<(), E> {
    match given {
        Given::Undefined | Given::Null | Given::Object => Ok(()),
        _ => Err(refusal),
    }
}

/// An optional callback: `undefined` is not given (`false`), a function is
/// (`true`); anything else, `null` too, is `refusal`.
pub fn optional_function<E>(given: &Given, refusal: E) -> Result<bool, E> {
    match given {
        Given::Undefined => Ok(false),
        Given::Function => Ok(true),
        _ => Err(refusal),
    }
}

/// A JS number as an HTTP status or a WebSocket close code (an unsigned
/// short, a fraction truncated); `None` outside 0..=65535, and for NaN.
pub fn status_code(n: f64) -> Option<u16> {
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    (0.0..=f64::from(u16::MAX)).contains(&n).then_some(n as u16)
}

/// A required text: anything else is `refusal`.
pub fn text(given: Given, refusal: &'static str) -> Result<String, &'static str> {
    match given {
        Given::Text(text) => Ok(text),
        _ => Err(refusal),
    }
}

/// A count option (ms, or a number of tools): a whole number `>= 0`;
/// absent, and (as JSON has it) non-finite, means `default`.
pub fn count(given: &Given, default: u64, refusal: &'static str) -> Result<u64, &'static str> {
    match given {
        Given::Undefined | Given::Null => Ok(default),
        Given::Number(n) if !n.is_finite() => Ok(default),
        Given::Number(n) => whole(*n).ok_or(refusal),
        _ => Err(refusal),
    }
}

/// `n` when it is a whole number `>= 0` (`as` saturates: one past
/// `u64::MAX` is `u64::MAX`); `None` for a fraction, a negative, NaN or an
/// infinity.
pub fn whole(n: f64) -> Option<u64> {
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    (n >= 0.0 && crate::schema::is_whole(n)).then_some(n as u64)
}

/// An optional text: absent is `None`, any other non-text is `refusal`.
pub fn optional_text(given: Given, refusal: &'static str) -> Result<Option<String>, &'static str> {
    match given {
        Given::Undefined | Given::Null => Ok(None),
        Given::Text(text) => Ok(Some(text)),
        _ => Err(refusal),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NO: &str = "no";

    #[test]
    fn count_takes_whole_numbers_from_zero() {
        assert_eq!(count(&Given::Number(0.0), 7, NO), Ok(0));
        assert_eq!(count(&Given::Number(-0.0), 7, NO), Ok(0));
        assert_eq!(count(&Given::Number(1.0), 7, NO), Ok(1));
        assert_eq!(count(&Given::Number(600_000.0), 7, NO), Ok(600_000));
        assert_eq!(count(&Given::Number(1e300), 7, NO), Ok(u64::MAX));
    }

    #[test]
    fn count_defaults_when_absent_or_not_finite() {
        for given in [
            Given::Undefined,
            Given::Null,
            Given::Number(f64::NAN),
            Given::Number(f64::INFINITY),
            Given::Number(f64::NEG_INFINITY),
        ] {
            assert_eq!(count(&given, 7, NO), Ok(7), "{given:?}");
        }
    }

    #[test]
    fn count_refuses_fractions_negatives_and_non_numbers() {
        for given in [
            Given::Number(1.5),
            Given::Number(0.5),
            Given::Number(-1.0),
            Given::Text(String::from("5")),
            Given::Other,
        ] {
            assert_eq!(count(&given, 7, NO), Err(NO), "{given:?}");
        }
    }

    #[test]
    fn optional_text_is_none_when_absent_and_refuses_non_text() {
        assert_eq!(optional_text(Given::Undefined, NO), Ok(None));
        assert_eq!(optional_text(Given::Null, NO), Ok(None));
        assert_eq!(
            optional_text(Given::Text(String::new()), NO),
            Ok(Some(String::new()))
        );
        assert_eq!(optional_text(Given::Number(1.0), NO), Err(NO));
        assert_eq!(optional_text(Given::Other, NO), Err(NO));
    }

    #[test]
    fn text_refuses_everything_but_text() {
        assert_eq!(
            text(Given::Text(String::from("a")), NO),
            Ok(String::from("a"))
        );
        assert_eq!(text(Given::Text(String::new()), NO), Ok(String::new()));
        for given in [
            Given::Undefined,
            Given::Null,
            Given::Number(1.0),
            Given::Other,
        ] {
            assert_eq!(text(given, NO), Err(NO));
        }
    }

    #[test]
    fn optional_function_is_undefined_or_a_function() {
        assert_eq!(optional_function(&Given::Undefined, NO), Ok(false));
        assert_eq!(optional_function(&Given::Function, NO), Ok(true));
        for given in [
            Given::Null,
            Given::Text(String::from("f")),
            Given::Number(0.0),
            Given::Other,
        ] {
            assert_eq!(optional_function(&given, NO), Err(NO), "{given:?}");
        }
    }

    #[test]
    fn status_codes_are_unsigned_shorts() {
        assert_eq!(status_code(0.0), Some(0));
        assert_eq!(status_code(404.0), Some(404));
        assert_eq!(status_code(1000.9), Some(1000));
        assert_eq!(status_code(65535.0), Some(65535));
        for n in [-1.0, 65535.5, 65536.0, f64::NAN, f64::INFINITY] {
            assert_eq!(status_code(n), None, "{n}");
        }
    }

    #[test]
    fn numbers_json_cannot_write_are_named_with_their_key() {
        assert_eq!(NotJson::number(f64::NAN), Some(NotJson::NaN));
        assert_eq!(NotJson::number(f64::INFINITY), Some(NotJson::Infinity));
        assert_eq!(
            NotJson::number(f64::NEG_INFINITY),
            Some(NotJson::NegativeInfinity)
        );
        for n in [0.0, -0.0, 1.5, f64::MAX, f64::MIN, f64::MIN_POSITIVE] {
            assert_eq!(NotJson::number(n), None, "{n}");
        }
        assert_eq!(NotJson::NaN.reason("price"), "NaN at \"price\"");
        assert_eq!(NotJson::NegativeInfinity.reason("t"), "-Infinity at \"t\"");
        assert_eq!(NotJson::Function.reason(""), "function at \"\"");
        assert_eq!(NotJson::Symbol.reason("s"), "symbol at \"s\"");
        assert_eq!(NotJson::BigInt.reason("n"), "bigint at \"n\"");
        assert_eq!(NotJson::Infinity.reason("0"), "Infinity at \"0\"");
    }

    #[test]
    fn options_are_absent_or_an_object() {
        for given in [Given::Undefined, Given::Null, Given::Object] {
            assert_eq!(options_object(&given, NO), Ok(()), "{given:?}");
        }
        for given in [
            Given::Function,
            Given::Text(String::from("{}")),
            Given::Number(1.0),
            Given::Other,
        ] {
            assert_eq!(options_object(&given, NO), Err(NO), "{given:?}");
        }
    }

    #[test]
    fn absent_is_undefined_or_null() {
        assert!(Given::Undefined.is_absent());
        assert!(Given::Null.is_absent());
        assert!(!Given::Text(String::new()).is_absent());
        assert!(!Given::Number(0.0).is_absent());
        assert!(!Given::Object.is_absent());
        assert!(!Given::Other.is_absent());
    }
}
