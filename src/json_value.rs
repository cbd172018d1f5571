//! JSON text to a [`Value`], every number the double `JSON.parse` gives.
//!
//! serde_json reads the text: its grammar, its limits, its errors. Its
//! own conversion of a number is exact when the number has at most 15
//! significant digits and a power of ten within ±22 (one correctly rounded
//! product or quotient of two exact doubles); any other number (a double
//! written in 17 digits, as `JSON.stringify` writes most of them) is
//! converted again from its text by the platform's correctly rounded
//! conversion: the page's `parseFloat` in the module, `str::parse`
//! natively. serde_json's `float_roundtrip` does the same in Rust with
//! tables and big-number code that cost the module 9.1 KB gzip
//! (docs/benchmarks.md).
//!
//! The numbers are matched to their texts by order: serde_json visits
//! every number once, in the order of the text, and [`NumberTexts`] walks
//! the same text outside its strings. A value built here (rather than by
//! `Value`'s own reading) sees the numbers of a repeated key too.

use crate::prelude::*;
use core::cell::RefCell;
use core::fmt;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

/// The value `text` holds, each number as `JSON.parse` has it; serde_json's
/// error when `text` is not one JSON value.
pub fn parse(text: &str) -> Result<Value, serde_json::Error> {
    match read(text, text) {
        Err(error) => match finite_past_range(text) {
            // serde_json's own conversion overflows for a number within a
            // unit in the last place of the largest double; `JSON.parse`
            // rounds it to that double. Read again with such numbers
            // written `0`, their values taken from their texts.
            Some(readable) => read(&readable, text).map_err(|_| error),
            None => Err(error),
        },
        ok => ok,
    }
}

/// Whether [`parse`] reads `text`, which serde_json alone refuses: some
/// number within a unit in the last place of the largest double.
pub fn reads_near_the_largest_double(text: &str) -> bool {
    finite_past_range(text).is_some_and(|readable| read(&readable, text).is_ok())
}

/// `readable` read by serde_json, its numbers taken from `numbers`, the
/// same text but for numbers written `0`.
fn read(readable: &str, numbers: &str) -> Result<Value, serde_json::Error> {
    let texts = RefCell::new(NumberTexts {
        bytes: numbers.as_bytes(),
        at: 0,
    });
    let mut deserializer = serde_json::Deserializer::from_str(readable);
    let value = ExactValue(&texts).deserialize(&mut deserializer)?;
    deserializer.end()?;
    Ok(value)
}

/// `text` with every number that serde_json's conversion overflows but
/// `JSON.parse` takes (a finite double of magnitude 10^308 or more)
/// written `0`; `None` when there is none.
fn finite_past_range(text: &str) -> Option<String> {
    let mut texts = NumberTexts {
        bytes: text.as_bytes(),
        at: 0,
    };
    let mut readable = String::new();
    let mut copied = 0;
    while let Some(number) = texts.next() {
        let end = texts.at;
        let start = end - number.len();
        let decimal = Decimal::of(number);
        if decimal.digits > 0 && decimal.magnitude() >= 308 && platform_decimal(number).is_finite()
        {
            readable.push_str(text.get(copied..start)?);
            readable.push('0');
            copied = end;
        }
    }
    if copied == 0 {
        return None;
    }
    readable.push_str(text.get(copied..)?);
    Some(readable)
}

/// The index of the quote that closes the string opening at `at`, `None`
/// when it runs to the end.
pub(crate) fn string_end(bytes: &[u8], at: usize) -> Option<usize> {
    let mut escaped = false;
    for (index, &byte) in bytes.iter().enumerate().skip(at + 1) {
        match (escaped, byte) {
            (true, _) => escaped = false,
            (false, b'\\') => escaped = true,
            (false, b'"') => return Some(index),
            _ => {}
        }
    }
    None
}

/// The texts of the numbers of a JSON text that serde_json has read (or
/// is reading), in order: the runs of number characters outside strings.
struct NumberTexts<'t> {
    bytes: &'t [u8],
    at: usize,
}

impl<'t> NumberTexts<'t> {
    fn next(&mut self) -> Option<&'t str> {
        while let Some(&byte) = self.bytes.get(self.at) {
            match byte {
                b'"' => self.at = string_end(self.bytes, self.at)? + 1,
                b'-' | b'0'..=b'9' => {
                    let start = self.at;
                    while matches!(
                        self.bytes.get(self.at),
                        Some(b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9')
                    ) {
                        self.at += 1;
                    }
                    // ASCII only, so the slice is on character boundaries.
                    return core::str::from_utf8(self.bytes.get(start..self.at)?).ok();
                }
                _ => self.at += 1,
            }
        }
        None
    }
}

/// A number's text read for its size: significant digits and the power of
/// ten of its last one.
struct Decimal {
    /// Digits from the first non-zero one on (trailing zeros counted).
    digits: usize,
    /// The power of ten of the last digit, saturated.
    exponent: i64,
}

impl Decimal {
    fn of(text: &str) -> Decimal {
        let (mantissa, exponent) = match text.find(['e', 'E']) {
            Some(at) => (
                text.get(..at).unwrap_or(""),
                text.get(at + 1..).unwrap_or(""),
            ),
            None => (text, ""),
        };
        let mut written: i64 = 0;
        for byte in exponent.bytes().filter(u8::is_ascii_digit) {
            written = written
                .saturating_mul(10)
                .saturating_add(i64::from(byte - b'0'));
        }
        if exponent.starts_with('-') {
            written = -written;
        }
        let fraction = mantissa.find('.').map_or(0, |dot| mantissa.len() - dot - 1);
        let digits = mantissa
            .bytes()
            .filter(u8::is_ascii_digit)
            .skip_while(|&byte| byte == b'0')
            .count();
        Decimal {
            digits,
            exponent: written.saturating_sub(i64::try_from(fraction).unwrap_or(i64::MAX)),
        }
    }

    /// The power of ten of the first significant digit.
    fn magnitude(&self) -> i64 {
        self.exponent
            .saturating_add(i64::try_from(self.digits).unwrap_or(i64::MAX))
            .saturating_sub(1)
    }

    /// Whether serde_json's own conversion is exact: the digits an exact
    /// double (below 10^15 < 2^53) and the power of ten one too.
    fn converted_exactly(&self) -> bool {
        self.digits <= 15 && (-22..=22).contains(&self.exponent)
    }
}

/// The correctly rounded double of a JSON number's text: the page's own
/// conversion in the module (`JSON.parse`'s, without tables in the
/// module), std's elsewhere.
#[cfg(target_arch = "wasm32")]
fn platform_decimal(text: &str) -> f64 {
    js_sys::parse_float(text)
}

#[cfg(not(target_arch = "wasm32"))]
fn platform_decimal(text: &str) -> f64 {
    text.parse().unwrap_or(f64::NAN)
}

/// A [`Value`] built from serde_json's visits, each number checked
/// against its text.
#[derive(Clone, Copy)]
struct ExactValue<'a, 't>(&'a RefCell<NumberTexts<'t>>);

impl ExactValue<'_, '_> {
    /// The number serde_json read as `read`, as `JSON.parse` has it.
    fn number<E: de::Error>(self, read: Number) -> Result<Value, E> {
        let text = self.0.borrow_mut().next().unwrap_or("");
        let decimal = Decimal::of(text);
        let plain_integer = !text.contains(['.', 'e', 'E']);
        if (read.is_f64() && decimal.converted_exactly()) || (!read.is_f64() && plain_integer) {
            return Ok(Value::Number(read));
        }
        match Number::from_f64(platform_decimal(text)) {
            Some(number) => Ok(Value::Number(number)),
            None => Err(E::custom("number out of range")),
        }
    }
}

impl<'de> DeserializeSeed<'de> for ExactValue<'_, '_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ExactValue<'_, '_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E: de::Error>(self, value: bool) -> Result<Value, E> {
        Ok(Value::Bool(value))
    }
    fn visit_i64<E: de::Error>(self, value: i64) -> Result<Value, E> {
        self.number(Number::from(value))
    }
    fn visit_u64<E: de::Error>(self, value: u64) -> Result<Value, E> {
        self.number(Number::from(value))
    }
    fn visit_f64<E: de::Error>(self, value: f64) -> Result<Value, E> {
        match Number::from_f64(value) {
            Some(number) => self.number(number),
            None => Err(E::custom("number out of range")),
        }
    }
    fn visit_str<E: de::Error>(self, value: &str) -> Result<Value, E> {
        Ok(Value::String(value.into()))
    }
    fn visit_string<E: de::Error>(self, value: String) -> Result<Value, E> {
        Ok(Value::String(value))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(self)? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut members = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let value = map.next_value_seed(self)?;
            members.insert(key, value);
        }
        Ok(Value::Object(members))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use super::*;

    /// Every number of `text` (one number) as the correctly rounded double.
    fn exact(text: &str) -> f64 {
        text.parse().unwrap()
    }

    fn parsed(text: &str) -> f64 {
        parse(text).unwrap().as_f64().unwrap()
    }

    /// xorshift64: the doubles of random bit patterns.
    fn doubles(count: usize) -> impl Iterator<Item = f64> {
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        core::iter::repeat_with(move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            f64::from_bits(x)
        })
        .filter(|f| f.is_finite())
        .take(count)
    }

    #[test]
    fn every_double_reads_back_as_written_in_each_form() {
        for f in doubles(200_000) {
            for text in [format!("{f:e}"), format!("{f:?}"), format!("{f:.17e}")] {
                assert_eq!(parsed(&text).to_bits(), exact(&text).to_bits(), "{text}");
            }
        }
    }

    /// What [`Decimal::converted_exactly`] trusts, serde_json's fast path
    /// (one product or quotient of the digits and a power of ten) gives
    /// correctly rounded. (Native test builds enable `float_roundtrip`
    /// through a dev-dependency, so this is checked here by hand; the
    /// module's reading is checked against `JSON.parse` in tests/wasm.rs.)
    #[test]
    fn the_fast_path_it_trusts_is_exact() {
        let mut x: u64 = 7;
        for _ in 0..200_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let significand = x % 1_000_000_000_000_000;
            let power = i32::try_from((x >> 40) % 23).unwrap();
            let exponent = if x & 1 == 0 { power } else { -power };
            let text = format!("{significand}e{exponent}");
            assert!(Decimal::of(&text).converted_exactly(), "{text}");
            let ten: f64 = format!("1e{power}").parse().unwrap();
            #[allow(clippy::cast_precision_loss)]
            let fast = if exponent >= 0 {
                significand as f64 * ten
            } else {
                significand as f64 / ten
            };
            assert_eq!(fast.to_bits(), exact(&text).to_bits(), "{text}");
        }
        for text in ["1234567890123456", "1e23", "1e-23", "0.1234567890123456"] {
            assert!(!Decimal::of(text).converted_exactly(), "{text}");
        }
        assert!(Decimal::of("0.000000000000000000001").converted_exactly());
        assert!(Decimal::of("-120.50e-3").converted_exactly());
    }

    #[test]
    fn long_and_edge_numbers_are_correctly_rounded() {
        for text in [
            "0.30000000000000004",
            "9007199254740993",
            "9007199254740993.0",
            "18446744073709551616",
            "-18446744073709551617",
            "123456789012345678901234567890",
            "1.00000000000000011102230246251565404236316680908203125",
            "1.00000000000000011102230246251565404236316680908203124",
            "2.2250738585072011e-308",
            "2.2250738585072014e-308",
            "4.9406564584124654e-324",
            "2.4703282292062328e-324",
            "2.4703282292062327e-324",
            "1.7976931348623157e308",
            "-1.7976931348623157e308",
            "1.7976931348623158e308",
            "1.7976931348623158079e308",
            "0.000000000000000000000000000000000000000000001",
            "1e-400",
            "-0",
            "-0.0",
            "0e999999999999999999999",
            "1e22",
            "1e23",
            "123456789012345e-22",
            "1234567890123456e-22",
        ] {
            assert_eq!(parsed(text).to_bits(), exact(text).to_bits(), "{text}");
        }
    }

    #[test]
    fn numbers_beyond_the_largest_double_are_out_of_range() {
        for text in ["1.7976931348623159e308", "1e309", "-1e400", "[1e309]"] {
            assert!(parse(text).is_err(), "{text}");
            assert!(!reads_near_the_largest_double(text), "{text}");
        }
        // Within its unit in the last place, the largest double.
        let text = r#"{"a":[1.7976931348623158e308,0.1]}"#;
        assert!(reads_near_the_largest_double(text));
        assert_eq!(
            parse(text).unwrap(),
            serde_json::json!({"a": [f64::MAX, 0.1]})
        );
    }

    #[test]
    fn numbers_meet_their_texts_in_strings_keys_and_repeated_keys() {
        let text = r#"{"-1.5e3":"0.1 \"2.5\" -7","a":[0.30000000000000004,{"b":1e-7}],"a":[5e-324,"\\",0.1000000000000000055511151231257827],"c":-0}"#;
        let value = parse(text).unwrap();
        assert_eq!(value["a"][0].as_f64(), Some(5e-324));
        assert_eq!(value["a"][1], "\\");
        assert_eq!(value["a"][2].as_f64(), Some(0.1));
        assert_eq!(value["-1.5e3"], "0.1 \"2.5\" -7");
        // The repeated key keeps its first place, as `JSON.parse` has it.
        let keys: Vec<&String> = value.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["-1.5e3", "a", "c"]);
    }

    #[test]
    fn reads_what_serde_json_reads_and_refuses_what_it_refuses() {
        for text in [
            "null",
            " [1, 2.5, \"é\", true, {}] ",
            r#""\ud83d\ude00""#,
            "12345678901234567890",
        ] {
            assert_eq!(
                parse(text).unwrap(),
                serde_json::from_str::<Value>(text).unwrap()
            );
        }
        for text in ["", "[1,", "01", "1.", "-", r#""\ud800""#, "[1] 2", "nan"] {
            assert!(parse(text).is_err(), "{text}");
        }
    }
}
