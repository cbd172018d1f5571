//! The `json` fuzz target's check on one input, shared with
//! `tests/json_differential.rs`: the crate's JSON parser must agree with
//! serde_json (built with `float_roundtrip`, so floats are correctly
//! rounded) run on the text after the lone-surrogate pre-pass the bridge
//! used before its own parser: the same value (same key order, same number
//! kinds, same float bits) or the same error text. And the crate's writer
//! must give back text that reads as the same value, for both parsers, and
//! that is serde_json's text byte for byte where no float is involved (a
//! float is written as the text it was parsed from, not re-formatted).

use std::borrow::Cow;

use toolmark_bridge::json::{parse, to_text, Value};

/// What the bridge did before `json`: each lone surrogate escape
/// becomes `\ufffd`, then `serde_json::from_str`.
pub fn oracle(text: &str) -> Result<serde_json::Value, String> {
    serde_json::from_str(&replace_lone_surrogate_escapes(text)).map_err(|e| e.to_string())
}

/// Panics when the two parsers disagree on `data` (read as UTF-8, lossily).
pub fn check_json(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    check_text(&text);
}

/// Panics when the two parsers disagree on `text`, or the writer is off.
pub fn check_text(text: &str) {
    let ours = parse(text).map_err(|e| e.to_string());
    let theirs = oracle(text);
    match (&ours, &theirs) {
        (Ok(a), Ok(b)) => {
            assert_same(a, b, text);
            check_written(a, b, text);
        }
        _ => assert_eq!(
            ours.map(|_| ()),
            theirs.map(|_| ()),
            "results differ for {text:?}"
        ),
    }
}

/// `to_text(ours)`, for a value serde_json parsed as `theirs` from `text`:
/// read again by either parser it is the same value, and it is serde_json's
/// own text when there is no float in it.
pub fn check_written(ours: &Value, theirs: &serde_json::Value, text: &str) {
    let written = to_text(ours);
    match parse(&written) {
        Ok(again) => assert_same(&again, theirs, &written),
        Err(e) => panic!("{written:?} (written for {text:?}) does not parse: {e}"),
    }
    match oracle(&written) {
        Ok(again) => assert_eq!(
            again.to_string(),
            theirs.to_string(),
            "serde_json reads {written:?} (written for {text:?}) differently"
        ),
        Err(e) => panic!("serde_json rejects {written:?} (written for {text:?}): {e}"),
    }
    if !has_float(theirs) {
        assert_eq!(written, theirs.to_string(), "texts differ for {text:?}");
    }
}

/// Panics unless the values are the same: same kinds, same key order, the
/// same integers, floats with the same bits (so `0.0` is not `-0.0`).
pub fn assert_same(ours: &Value, theirs: &serde_json::Value, text: &str) {
    let mut stack = vec![(ours, theirs)];
    while let Some((a, b)) = stack.pop() {
        let same = match (a, b) {
            (Value::Null, serde_json::Value::Null) => true,
            (Value::Bool(x), serde_json::Value::Bool(y)) => x == y,
            (Value::Number(x), serde_json::Value::Number(y)) => {
                if y.is_u64() {
                    x.as_u64() == y.as_u64()
                } else if y.is_i64() {
                    !x.is_u64() && x.as_i64() == y.as_i64()
                } else {
                    x.is_f64() && x.as_f64().map(f64::to_bits) == y.as_f64().map(f64::to_bits)
                }
            }
            (Value::String(x), serde_json::Value::String(y)) => x == y,
            (Value::Array(x), serde_json::Value::Array(y)) => {
                stack.extend(x.iter().zip(y));
                x.len() == y.len()
            }
            (Value::Object(x), serde_json::Value::Object(y)) => {
                stack.extend(x.values().zip(y.values()));
                x.len() == y.len() && x.keys().eq(y.keys())
            }
            _ => false,
        };
        assert!(same, "values differ for {text:?}: {a} vs {b}");
    }
}

/// True when a float is anywhere in the value.
pub fn has_float(value: &serde_json::Value) -> bool {
    let mut stack = vec![value];
    while let Some(value) = stack.pop() {
        match value {
            serde_json::Value::Number(n) if n.is_f64() => return true,
            serde_json::Value::Array(items) => stack.extend(items),
            serde_json::Value::Object(map) => stack.extend(map.values()),
            _ => {}
        }
    }
    false
}

/// The pre-pass, verbatim from `src/protocol/inbound.rs` before the parser.
pub fn replace_lone_surrogate_escapes(text: &str) -> Cow<'_, str> {
    let bytes = text.as_bytes();
    if !bytes
        .windows(3)
        .any(|w| w.starts_with(b"\\u") && matches!(w.get(2), Some(b'd' | b'D')))
    {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut in_string = false;
    let mut rest = text;
    while let Some(ch) = rest.chars().next() {
        if !in_string {
            if ch == '"' {
                in_string = true;
            }
            out.push(ch);
            rest = rest.get(ch.len_utf8()..).unwrap_or("");
            continue;
        }
        match ch {
            '"' => {
                in_string = false;
                out.push(ch);
                rest = rest.get(1..).unwrap_or("");
            }
            '\\' => {
                if let Some(unit) = escape_unit(rest) {
                    let next = rest.get(6..).unwrap_or("");
                    if (0xD800..0xDC00).contains(&unit) {
                        if escape_unit(next).is_some_and(|low| (0xDC00..0xE000).contains(&low)) {
                            out.push_str(rest.get(..12).unwrap_or(""));
                            rest = rest.get(12..).unwrap_or("");
                        } else {
                            out.push_str("\\ufffd");
                            rest = next;
                        }
                    } else if (0xDC00..0xE000).contains(&unit) {
                        out.push_str("\\ufffd");
                        rest = next;
                    } else {
                        out.push_str(rest.get(..6).unwrap_or(""));
                        rest = next;
                    }
                } else {
                    // Any other escape: copy the backslash and the escaped char.
                    let len = rest.chars().nth(1).map_or(1, |c| 1 + c.len_utf8());
                    out.push_str(rest.get(..len).unwrap_or(rest));
                    rest = rest.get(len..).unwrap_or("");
                }
            }
            _ => {
                out.push(ch);
                rest = rest.get(ch.len_utf8()..).unwrap_or("");
            }
        }
    }
    Cow::Owned(out)
}

/// The UTF-16 unit of a `\uXXXX` escape at the start of `text`.
fn escape_unit(text: &str) -> Option<u32> {
    let hex = text.strip_prefix("\\u")?.get(..4)?;
    if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    u32::from_str_radix(hex, 16).ok()
}
