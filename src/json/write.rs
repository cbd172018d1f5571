//! A value back to JSON text: [`to_text`].

use alloc::string::String;

use super::Value;

/// A value as compact JSON text: what `serde_json::to_string` writes, but
/// for floats, which are written as they were parsed (`1.50`, `1E3`, `-0`:
/// the same numbers, and no float formatting in the wasm).
/// `tests/json_differential.rs` holds it to serde_json's writer. Recursive,
/// like serde_json's: the values here come from [`super::parse`] (nesting
/// below 128) or are built flat.
pub fn to_text(value: &Value) -> String {
    let mut out = String::new();
    write_value(&mut out, value);
    out
}

/// Appends `value` as compact JSON text (what [`to_text`] returns).
pub fn write_value(out: &mut String, value: &Value) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::Number(n) => n.write(out),
        Value::String(s) => write_string(out, s),
        Value::Array(items) => {
            out.push('[');
            for item in items {
                write_separator(out);
                write_value(out, item);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (key, item) in map {
                write_value_member(out, key, item);
            }
            out.push('}');
        }
    }
}

/// Appends the decimal digits of `n`: the crate's integer writer, for
/// texts built without `core::fmt` (a `format!` or `to_string()` of an
/// integer brings the formatting machinery into the wasm).
pub fn push_u64(out: &mut String, n: u64) {
    if n >= 10 {
        push_u64(out, n / 10);
    }
    out.push(char::from(b'0' + (n % 10) as u8));
}

/// Appends a string literal, escaped as serde_json does: `"` and `\`, the
/// short forms `\b \f \n \r \t`, other control characters as `\u00xx`.
pub fn write_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\0'..='\u{1f}' => {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                let byte = c as usize;
                out.push_str("\\u00");
                for digit in [byte >> 4, byte & 0xf] {
                    out.push(char::from(HEX.get(digit).copied().unwrap_or(b'0')));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

// Output built straight from Rust data: JSON text written member by member,
// with no `Value` tree and no `Map` built just to be written (each field of
// such a tree costs its own construction code in the wasm). The text is what
// `to_text` of the same object gives: the members in the order written.

/// Appends a `,` unless an array or object was just opened (its `[` or `{`
/// is the last byte written; a finished value never ends in one) or nothing
/// was written yet: call it before each item of an array.
pub fn write_separator(out: &mut String) {
    if !matches!(out.as_bytes().last(), None | Some(b'[' | b'{')) {
        out.push(',');
    }
}

/// Starts an object member: the separator, then `"key":`; its value follows.
pub fn write_key(out: &mut String, key: &str) {
    write_separator(out);
    write_string(out, key);
    out.push(':');
}

/// An object member whose value is a string.
pub fn write_str_member(out: &mut String, key: &str, value: &str) {
    write_key(out, key);
    write_string(out, value);
}

/// An object member whose value is a whole number.
pub fn write_u64_member(out: &mut String, key: &str, value: u64) {
    write_key(out, key);
    push_u64(out, value);
}

/// An object member whose value is `true` or `false`.
pub fn write_bool_member(out: &mut String, key: &str, value: bool) {
    write_key(out, key);
    out.push_str(if value { "true" } else { "false" });
}

/// An object member whose value is a JSON value.
pub fn write_value_member(out: &mut String, key: &str, value: &Value) {
    write_key(out, key);
    write_value(out, value);
}

/// An array of `item`'s text for each of `items`.
pub fn write_array_of<T>(out: &mut String, items: &[T], item: fn(&T, &mut String)) {
    out.push('[');
    for x in items {
        write_separator(out);
        item(x, out);
    }
    out.push(']');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::{obj, parse};
    use alloc::vec;

    #[test]
    fn members_written_straight_are_the_value_text() {
        let nested = parse(r#"{"a":[1,-2,2.50,{"b":null}],"c":"\u0001\"é"}"#).unwrap_or_default();
        let mut out = String::from("{");
        write_str_member(&mut out, "s", "x\ny");
        write_u64_member(&mut out, "n", u64::MAX);
        write_value_member(&mut out, "v", &nested);
        write_key(&mut out, "list");
        write_array_of(&mut out, &[0u64, 10, 7], |n, out| push_u64(out, *n));
        write_key(&mut out, "empty");
        write_array_of(&mut out, &[0u8; 0], |_, _| {});
        write_key(&mut out, "nested");
        out.push('[');
        for _ in 0..2 {
            write_separator(&mut out);
            out.push_str("{}");
        }
        out.push(']');
        out.push('}');
        let want = obj(vec![
            ("s", "x\ny".into()),
            ("n", u64::MAX.into()),
            ("v", nested),
            ("list", Value::from(vec![0u64, 10, 7])),
            ("empty", Value::Array(vec![])),
            ("nested", Value::from(vec![obj(vec![]), obj(vec![])])),
        ]);
        assert_eq!(out, to_text(&want));
        assert_eq!(parse(&out).ok(), Some(want));
    }
}
