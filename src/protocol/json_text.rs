//! [`JsonText`]: a JSON value kept as its text. A call's input is held this
//! way from the message that brought it until its run starts: a parsed
//! `Value` takes five to eight times the bytes of its text (a `String` or
//! map entry per item), and a call may wait behind 31 others in its scope.
//! It is parsed when a JSON Schema checks it, and JS parses the text itself
//! for the tool (`JSON.parse`, the cheapest correct way to make JS objects).
//!
//! serde_json's `RawValue` would hold such text too, but its feature adds
//! raw-value paths to every `Value` reading and writing: 13.5 KB gzip on the
//! shipped module. Here serde_json reads and checks the text (`Checked`);
//! `member_span` only finds where a member's value sits in a message
//! serde_json has already read whole.

use crate::prelude::*;
use core::fmt;
use core::ops::Range;
use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::{Serialize, Serializer};
use serde_json::Value;

use super::inbound::Rejection;
use crate::json_value::{self, string_end};

/// JSON text that parses into a `Value`: [`json_value::parse`] reads it
/// (so no lone surrogate escape, no number out of `f64`'s range), and its
/// meaning is the `Value` it parses to. Two texts are equal when
/// their values are (`"\u00e9"` and `"é"` are).
#[derive(Clone)]
pub struct JsonText(Box<str>);

impl JsonText {
    /// `text` when it is one JSON value (whitespace around it allowed),
    /// read as [`json_value::parse`] would, without building a value; else
    /// why not, as serde_json says it ([`Rejection::Malformed`]).
    pub fn parse(text: &str) -> Result<JsonText, Rejection> {
        match serde_json::from_str::<Checked>(text) {
            Err(error) if !json_value::reads_near_the_largest_double(text) => {
                Err(Rejection::Malformed {
                    reason: error.to_string(),
                })
            }
            _ => Ok(JsonText(text.into())),
        }
    }

    /// The text of `value`.
    pub fn of(value: &Value) -> JsonText {
        JsonText(super::to_json(value).into())
    }

    /// `null`.
    pub fn null() -> JsonText {
        JsonText("null".into())
    }

    /// The value the text holds. The text was read as a `Value` reads, so
    /// the parse succeeds; `null` would stand in for a failure.
    pub fn value(&self) -> Value {
        json_value::parse(&self.0).unwrap_or(Value::Null)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Bytes of the text (what the call holds).
    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The text, for JS (which parses it for the tool).
    pub fn into_string(self) -> String {
        self.0.into()
    }
}

impl fmt::Debug for JsonText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq for JsonText {
    fn eq(&self, other: &JsonText) -> bool {
        self.as_str() == other.as_str() || self.value() == other.value()
    }
}

/// A text and the value it holds compare by meaning (tests compare an
/// input with `json!(…)`).
impl PartialEq<Value> for JsonText {
    fn eq(&self, other: &Value) -> bool {
        self.value() == *other
    }
}

/// Written as the value it holds (the page never sends an agent's message:
/// tests and the fuzzer write them).
impl Serialize for JsonText {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.value().serialize(serializer)
    }
}

/// The value of the top-level member `name` of `message`, a JSON object
/// text that serde_json has read whole and whose members it has checked:
/// its text, `None` when no member's key is written `name` without escapes.
pub(crate) fn member_text(message: &str, name: &str) -> Option<JsonText> {
    let span = member_span(message.as_bytes(), name.as_bytes())?;
    message.get(span).map(|text| JsonText(text.into()))
}

fn skip_whitespace(bytes: &[u8], mut at: usize) -> usize {
    while matches!(bytes.get(at), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        at += 1;
    }
    at
}

/// Where the value starting at `at` ends (exclusive).
fn value_end(bytes: &[u8], at: usize) -> Option<usize> {
    match bytes.get(at)? {
        b'"' => string_end(bytes, at).map(|end| end + 1),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut index = at;
            while let Some(&byte) = bytes.get(index) {
                match byte {
                    b'"' => index = string_end(bytes, index)?,
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth = depth.saturating_sub(1);
                        if depth == 0 {
                            return Some(index + 1);
                        }
                    }
                    _ => {}
                }
                index += 1;
            }
            None
        }
        _ => {
            let rest = bytes.get(at..)?;
            let length = rest
                .iter()
                .position(|b| matches!(b, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r'))
                .unwrap_or(rest.len());
            Some(at + length)
        }
    }
}

/// The span of the top-level member `name`'s value in the object `bytes`.
fn member_span(bytes: &[u8], name: &[u8]) -> Option<Range<usize>> {
    let mut at = skip_whitespace(bytes, 0);
    if bytes.get(at) != Some(&b'{') {
        return None;
    }
    loop {
        at = skip_whitespace(bytes, at + 1);
        if bytes.get(at) != Some(&b'"') {
            return None;
        }
        let key_end = string_end(bytes, at)?;
        let key = bytes.get(at + 1..key_end)?;
        at = skip_whitespace(bytes, key_end + 1);
        if bytes.get(at) != Some(&b':') {
            return None;
        }
        let start = skip_whitespace(bytes, at + 1);
        let end = value_end(bytes, start)?;
        if key == name {
            return Some(start..end);
        }
        at = skip_whitespace(bytes, end);
        if bytes.get(at) != Some(&b',') {
            return None;
        }
    }
}

/// One JSON value read to its end, every string decoded and every number
/// converted as `Value`'s reading does (the same errors), nothing kept.
pub(crate) struct Checked;

impl<'de> Deserialize<'de> for Checked {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Checked, D::Error> {
        deserializer.deserialize_any(CheckedVisitor)
    }
}

pub(crate) struct CheckedVisitor;

impl<'de> Visitor<'de> for CheckedVisitor {
    type Value = Checked;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Checked, E> {
        Ok(Checked)
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Checked, E> {
        Ok(Checked)
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Checked, E> {
        Ok(Checked)
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Checked, E> {
        Ok(Checked)
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<Checked, E> {
        Ok(Checked)
    }
    fn visit_unit<E: de::Error>(self) -> Result<Checked, E> {
        Ok(Checked)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Checked, A::Error> {
        while seq.next_element::<Checked>()?.is_some() {}
        Ok(Checked)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Checked, A::Error> {
        while map.next_key::<Checked>()?.is_some() {
            map.next_value::<Checked>()?;
        }
        Ok(Checked)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn accepts_what_value_accepts_and_keeps_the_text() {
        for text in [
            r#"{"a":[1,2.5,"é",null,true],"b":{}}"#,
            " [ 1 , 2 ] ",
            r#""\ud83d\ude00""#,
            "12345678901234567890",
            "-0",
            "1e308",
            r#"{"a":1,"a":2}"#,
        ] {
            let parsed = JsonText::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(parsed.as_str(), text);
            assert_eq!(parsed.value(), serde_json::from_str::<Value>(text).unwrap());
        }
    }

    #[test]
    fn refuses_what_value_refuses() {
        for text in [
            r#""\ud800""#,
            r#"{"\udc00":1}"#,
            "1e400",
            "[1,]",
            "{} {}",
            "",
            "nul",
            r#"{"a" 1}"#,
        ] {
            assert!(serde_json::from_str::<Value>(text).is_err(), "{text}");
            let refused = JsonText::parse(text).map(|_| ()).map_err(|e| e.to_string());
            let by_value = serde_json::from_str::<Value>(text)
                .map(|_| ())
                .map_err(|e| format!("malformed JSON: {e}"));
            assert_eq!(refused, by_value, "{text}");
        }
    }

    #[test]
    fn a_member_is_found_by_its_key_as_written() {
        let message = r#" { "a" : [1, {"input": 2}, "]"] , "x\"input" :"}" ,
            "input" : { "b": [ "\\", {} ] } , "c": -1.5e3 } "#;
        let text = |name| member_text(message, name).map(JsonText::into_string);
        assert_eq!(text("input").as_deref(), Some(r#"{ "b": [ "\\", {} ] }"#));
        assert_eq!(text("a").as_deref(), Some(r#"[1, {"input": 2}, "]"]"#));
        assert_eq!(text("c").as_deref(), Some("-1.5e3"));
        assert_eq!(text("x\\\"input").as_deref(), Some(r#""}""#));
        assert_eq!(text("b"), None);
        assert_eq!(member_text(r#"{"\u0069nput": 1}"#, "input"), None);
        assert_eq!(member_text("[1]", "input"), None);
        assert_eq!(
            member_text(r#"{"input": 7}"#, "input").unwrap().as_str(),
            "7"
        );
    }

    #[test]
    fn of_a_value_round_trips() {
        let value = json!({"b": [1, {"c": "d"}], "a": 2.5});
        let text = JsonText::of(&value);
        assert_eq!(text.as_str(), r#"{"b":[1,{"c":"d"}],"a":2.5}"#);
        assert_eq!(text, value);
        assert_eq!(text.len(), text.as_str().len());
        assert_eq!(JsonText::null().into_string(), "null");
        let escaped = JsonText::parse(r#"{ "a": "\u00e9" }"#).unwrap();
        assert_eq!(escaped, JsonText::parse(r#"{"a":"é"}"#).unwrap());
        assert_ne!(escaped, JsonText::parse(r#"{"a":"e"}"#).unwrap());
    }
}
