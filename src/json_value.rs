//! JSON text to a [`Value`], every number the double `JSON.parse` gives.
//!
//! serde_json reads the text: its grammar, its limits, its errors. Its
//! own conversion of a number is exact when the number has at most 15
//! significant digits and a power of ten within ±22 (one correctly rounded
//! product or quotient of two exact doubles), or is an integer of at most
//! 18 digits; any other number (a double written in 17 digits, as
//! `JSON.stringify` writes most of them) is converted again from its text
//! by the platform's correctly rounded conversion: the page's `JSON.parse`
//! in the module, all such numbers of a text in one call, `str::parse`
//! natively. serde_json's `float_roundtrip` does the same in Rust with
//! tables and big-number code that cost the module 7.0 KB gzip
//! (docs/benchmarks.md, "serde_json's build").
//!
//! The numbers are matched to their texts by order: serde_json visits
//! every number once, in the order of the text, and `NumberTexts` walks
//! the same text outside its strings, once, before serde_json reads it. A
//! value built here (rather than by `Value`'s own reading) sees the
//! numbers of a repeated key too.

use crate::prelude::*;
use core::cell::Cell;
use core::fmt;
use core::ops::Range;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

/// Why a text is not read as a value.
#[derive(Debug)]
pub enum ParseError {
    /// serde_json's error: not one JSON value.
    Json(serde_json::Error),
    /// A number beyond the largest double (`JSON.parse` makes it
    /// `Infinity`, which JSON cannot hold). Told apart by a flag, not by a
    /// serde error: `de::Error::custom` is serde_json's one path to 4 KB of
    /// error formatting in the module.
    OutOfRange,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParseError::Json(error) => fmt::Display::fmt(error, f),
            ParseError::OutOfRange => f.write_str("number out of range"),
        }
    }
}

/// The value `text` holds, each number as `JSON.parse` has it; why not when
/// `text` is not one JSON value.
pub fn parse(text: &str) -> Result<Value, ParseError> {
    let converted = Converted::of(text);
    match read(text, &converted) {
        Err(error) => match converted.readable_past_range(text) {
            // serde_json's own conversion overflows for a number within a
            // unit in the last place of the largest double; `JSON.parse`
            // rounds it to that double. Read again with such numbers
            // written `0`, their values the converted ones.
            Some(readable) => read(&readable, &converted).map_err(|_| error),
            None => Err(error),
        },
        ok => ok,
    }
}

/// Whether [`parse`] reads `text`, which serde_json alone refuses: some
/// number within a unit in the last place of the largest double.
pub fn reads_near_the_largest_double(text: &str) -> bool {
    let converted = Converted::of(text);
    converted
        .readable_past_range(text)
        .is_some_and(|readable| read(&readable, &converted).is_ok())
}

/// `readable` read by serde_json, the numbers of `converted` in their
/// places.
fn read(readable: &str, converted: &Converted) -> Result<Value, ParseError> {
    let place = Place {
        converted,
        seen: Cell::new(0),
        next: Cell::new(0),
        out_of_range: Cell::new(false),
    };
    let mut deserializer = serde_json::Deserializer::from_str(readable);
    let value = ExactValue(&place)
        .deserialize(&mut deserializer)
        .map_err(ParseError::Json)?;
    deserializer.end().map_err(ParseError::Json)?;
    if place.out_of_range.get() {
        return Err(ParseError::OutOfRange);
    }
    Ok(value)
}

/// The numbers of a text that serde_json's own conversion may round wrong,
/// converted by the platform: for each, its place among the text's
/// numbers, its span, its double, and whether it is an integer of at most
/// 20 digits (one serde_json may keep exactly as `u64` or `i64`).
struct Converted {
    numbers: Vec<(usize, Range<usize>, f64, bool)>,
}

impl Converted {
    fn of(text: &str) -> Converted {
        let mut texts = NumberTexts {
            bytes: text.as_bytes(),
            at: 0,
        };
        let mut spans = Vec::new();
        let mut list = String::from("[");
        let mut place = 0;
        while let Some((span, decimal)) = texts.next() {
            if !decimal.converted_exactly() {
                if !spans.is_empty() {
                    list.push(',');
                }
                list.push_str(text.get(span.clone()).unwrap_or("0"));
                spans.push((place, span, decimal.integer && decimal.digits <= 20));
            }
            place += 1;
        }
        list.push(']');
        let doubles = if spans.is_empty() {
            Vec::new()
        } else {
            platform_decimals(&list)
        };
        Converted {
            numbers: spans
                .into_iter()
                .enumerate()
                .map(|(i, (place, span, integer))| {
                    let double = doubles.get(i).copied().unwrap_or(f64::NAN);
                    (place, span, double, integer)
                })
                .collect(),
        }
    }

    /// The text with every number that serde_json's conversion overflows
    /// but `JSON.parse` takes (a finite double of magnitude 10^308 or
    /// more) written `0`; `None` when there is none.
    fn readable_past_range(&self, text: &str) -> Option<String> {
        let mut readable = String::new();
        let mut copied = 0;
        for (_, span, double, _) in &self.numbers {
            if double.is_finite() && double.abs() >= 1e308 {
                readable.push_str(text.get(copied..span.start)?);
                readable.push('0');
                copied = span.end;
            }
        }
        if copied == 0 {
            return None;
        }
        readable.push_str(text.get(copied..)?);
        Some(readable)
    }
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

/// What [`parse`] builds from a JSON text, counted without building it:
/// read in one pass over the bytes outside strings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Census {
    /// Values and keys: the first value, and one after each `,` and `:`
    /// and after each `[` or `{` but an empty one's. Exact for a text
    /// that is one JSON value.
    pub items: usize,
    /// Arrays and objects (`[` and `{`).
    pub containers: usize,
    /// Keys (a `:` each).
    pub keys: usize,
}

impl Census {
    pub fn of(text: &str) -> Census {
        let bytes = text.as_bytes();
        let mut census = Census {
            items: 1,
            containers: 0,
            keys: 0,
        };
        let mut at = 0;
        while let Some(&byte) = bytes.get(at) {
            match byte {
                b'"' => {
                    at = string_end(bytes, at).unwrap_or(bytes.len());
                }
                b',' => census.items = census.items.saturating_add(1),
                b':' => {
                    census.items = census.items.saturating_add(1);
                    census.keys = census.keys.saturating_add(1);
                }
                b'[' | b'{' => {
                    census.containers = census.containers.saturating_add(1);
                    let next = bytes.get(at + 1..).unwrap_or_default();
                    let first = next
                        .iter()
                        .find(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'));
                    if !matches!(first, Some(b']' | b'}')) {
                        census.items = census.items.saturating_add(1);
                    }
                }
                _ => {}
            }
            at += 1;
        }
        census
    }
}

/// The spans of the numbers of a JSON text that serde_json reads, in
/// order (the runs of number characters outside strings), each read for
/// its size on the way.
struct NumberTexts<'t> {
    bytes: &'t [u8],
    at: usize,
}

impl NumberTexts<'_> {
    fn next(&mut self) -> Option<(Range<usize>, Decimal)> {
        while let Some(&byte) = self.bytes.get(self.at) {
            match byte {
                b'"' => self.at = string_end(self.bytes, self.at)? + 1,
                b'-' | b'0'..=b'9' => {
                    let start = self.at;
                    let decimal = self.number();
                    return Some((start..self.at, decimal));
                }
                _ => self.at += 1,
            }
        }
        None
    }

    /// The number starting here, read to its end in one pass.
    fn number(&mut self) -> Decimal {
        let (mut digits, mut fraction, mut written) = (0usize, 0i64, 0i64);
        let (mut in_fraction, mut in_exponent, mut negative_exponent) = (false, false, false);
        loop {
            match self.bytes.get(self.at) {
                Some(&digit @ b'0'..=b'9') => {
                    if in_exponent {
                        written = written
                            .saturating_mul(10)
                            .saturating_add(i64::from(digit - b'0'));
                    } else {
                        if digits > 0 || digit != b'0' {
                            digits += 1;
                        }
                        if in_fraction {
                            fraction = fraction.saturating_add(1);
                        }
                    }
                }
                Some(b'.') => in_fraction = true,
                Some(b'e' | b'E') => in_exponent = true,
                Some(b'-') => negative_exponent = in_exponent,
                Some(b'+') => {}
                _ => break,
            }
            self.at += 1;
        }
        if negative_exponent {
            written = -written;
        }
        Decimal {
            digits,
            exponent: written.saturating_sub(fraction),
            integer: !in_fraction && !in_exponent,
        }
    }
}

/// A number's text read for its size: significant digits and the power of
/// ten of its last one.
struct Decimal {
    /// Digits from the first non-zero one on (trailing zeros counted).
    digits: usize,
    /// The power of ten of the last digit, saturated.
    exponent: i64,
    /// Written without a fraction or an exponent.
    integer: bool,
}

impl Decimal {
    /// Whether serde_json's own conversion is exact: an integer it keeps
    /// as one (at most 18 digits: within `i64` and `u64`), or the digits an
    /// exact double (below 10^15 < 2^53) and the power of ten one too.
    fn converted_exactly(&self) -> bool {
        (self.integer && self.digits <= 18)
            || (self.digits <= 15 && (-22..=22).contains(&self.exponent))
    }
}

/// The correctly rounded doubles of `list`, `[n,n,…]` of JSON numbers: the
/// page's own `JSON.parse` in the module (no tables in the module, one call
/// for the whole list), std's elsewhere.
#[cfg(target_arch = "wasm32")]
fn platform_decimals(list: &str) -> Vec<f64> {
    js_sys::JSON::parse(list)
        .map(|array| js_sys::Float64Array::new(&array).to_vec())
        .unwrap_or_default()
}

#[cfg(not(target_arch = "wasm32"))]
fn platform_decimals(list: &str) -> Vec<f64> {
    let inner = list
        .strip_prefix('[')
        .and_then(|l| l.strip_suffix(']'))
        .unwrap_or("");
    inner
        .split(',')
        .map(|number| number.parse().unwrap_or(f64::NAN))
        .collect()
}

/// Where a reading is among the converted numbers.
struct Place<'a> {
    converted: &'a Converted,
    /// Numbers visited so far.
    seen: Cell<usize>,
    /// The first converted number not yet visited.
    next: Cell<usize>,
    /// A number beyond the largest double was visited.
    out_of_range: Cell<bool>,
}

/// A [`Value`] built from serde_json's visits, each converted number in
/// its place.
#[derive(Clone, Copy)]
struct ExactValue<'a>(&'a Place<'a>);

impl ExactValue<'_> {
    /// The number serde_json read as `read`, as `JSON.parse` has it; an
    /// integer serde_json keeps as one (within `u64` or `i64`) stays exact,
    /// as the validator compares integers.
    fn number<E: de::Error>(self, read: Option<Number>) -> Result<Value, E> {
        let place = self.0;
        let seen = place.seen.get();
        place.seen.set(seen + 1);
        let next = place.next.get();
        let number = match place.converted.numbers.get(next) {
            Some((at, _, double, integer)) if *at == seen => {
                place.next.set(next + 1);
                match read {
                    Some(read) if *integer && !read.is_f64() => Some(read),
                    _ => Number::from_f64(*double),
                }
            }
            _ => read,
        };
        Ok(number.map_or_else(
            || {
                place.out_of_range.set(true);
                Value::Null
            },
            Value::Number,
        ))
    }
}

impl<'de> DeserializeSeed<'de> for ExactValue<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ExactValue<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E: de::Error>(self, value: bool) -> Result<Value, E> {
        Ok(Value::Bool(value))
    }
    fn visit_i64<E: de::Error>(self, value: i64) -> Result<Value, E> {
        self.number(Some(Number::from(value)))
    }
    fn visit_u64<E: de::Error>(self, value: u64) -> Result<Value, E> {
        self.number(Some(Number::from(value)))
    }
    fn visit_f64<E: de::Error>(self, value: f64) -> Result<Value, E> {
        self.number(Number::from_f64(value))
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

    impl Decimal {
        fn of(text: &str) -> Decimal {
            let mut texts = NumberTexts {
                bytes: text.as_bytes(),
                at: 0,
            };
            texts.next().unwrap().1
        }
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
    fn a_census_bounds_what_a_parse_builds() {
        let census = |text| {
            let Census {
                items,
                containers,
                keys,
            } = Census::of(text);
            (items, containers, keys)
        };
        assert_eq!(census("0"), (1, 0, 0));
        assert_eq!(
            census(r#""a,b:[{""#),
            (1, 0, 0),
            "inside a string nothing counts"
        );
        assert_eq!(
            census(r#""a\\"[""#),
            (2, 1, 0),
            "the string ends after an escaped backslash"
        );
        assert_eq!(census("[1,2,3]"), (4, 1, 0));
        assert_eq!(census(r#"{"a":1,"b":[true,null]}"#), (7, 2, 2));
        assert_eq!(census("[[1],[2]]"), (5, 3, 0));
        assert_eq!(census("[ ]"), (1, 1, 0));
        assert_eq!(census("[{},{ },[]]"), (4, 4, 0));
        assert_eq!(census(r#"{"k\"":"v,"}"#), (3, 1, 1));
        // Every value and key of a text, built and counted.
        for text in [
            r#"{"a":[1,{"b":"c"},[]],"d":{},"e":"f:g,h"}"#,
            "[0,0,0,0]",
            r#" { "x" : [ [ [ ] ] ] } "#,
        ] {
            fn built(value: &Value) -> usize {
                1 + match value {
                    Value::Array(items) => items.iter().map(built).sum(),
                    Value::Object(map) => map.values().map(|v| 1 + built(v)).sum(),
                    _ => 0,
                }
            }
            let value = parse(text).unwrap();
            assert_eq!(built(&value), Census::of(text).items, "{text}");
        }
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
        for text in ["1234567890123456789", "1e23", "1e-23", "0.1234567890123456"] {
            assert!(!Decimal::of(text).converted_exactly(), "{text}");
        }
        assert!(Decimal::of("0.000000000000000000001").converted_exactly());
        assert!(Decimal::of("-120.50e-3").converted_exactly());
        assert!(Decimal::of("-123456789012345678").converted_exactly());
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

    /// The second reading, which serde_json needs only without
    /// `float_roundtrip` (the module), so driven here by hand.
    #[test]
    fn numbers_past_serde_jsons_range_are_read_again_as_zeros() {
        let text = r#"[1.7976931348623158e308,-17976931348623158e292,12,0.1]"#;
        let converted = Converted::of(text);
        let readable = converted.readable_past_range(text).unwrap();
        assert_eq!(readable, "[0,0,12,0.1]");
        assert_eq!(
            read(&readable, &converted).unwrap(),
            serde_json::json!([f64::MAX, -f64::MAX, 12, 0.1])
        );
        let huge = format!("[{}]", "9".repeat(309));
        assert!(Converted::of(&huge).readable_past_range(&huge).is_none());
    }

    /// The spans found are the numbers outside strings, each read to its
    /// end (signs of the exponent included) for its digits and power of ten.
    #[test]
    fn number_texts_are_the_numbers_outside_strings_read_whole() {
        let text = r#"{"k1":"2 \"3\" 4","n":[-1.5e+3,2E-2,0.00120,"-5",7]}"#;
        let mut texts = NumberTexts {
            bytes: text.as_bytes(),
            at: 0,
        };
        let mut found = Vec::new();
        while let Some((span, decimal)) = texts.next() {
            found.push((
                &text[span],
                decimal.digits,
                decimal.exponent,
                decimal.integer,
            ));
        }
        assert_eq!(
            found,
            [
                ("-1.5e+3", 2, 2, false),
                ("2E-2", 1, -2, false),
                ("0.00120", 3, -5, false),
                ("7", 1, 0, true),
            ]
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
