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

fn write_value(out: &mut String, value: &Value) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::Number(n) => n.write(out),
        Value::String(s) => write_string(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_value(out, item);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (key, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_string(out, key);
                out.push(':');
                write_value(out, item);
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

/// A string literal, escaped as serde_json does: `"` and `\`, the short
/// forms `\b \f \n \r \t`, other control characters as `\u00xx`.
fn write_string(out: &mut String, s: &str) {
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
