//! The `json` fuzz target's check on one input, shared with
//! `tests/json_differential.rs`: the crate's JSON parser must agree with
//! serde_json (built with `float_roundtrip`, so floats are correctly
//! rounded) run on the text after the lone-surrogate pre-pass the bridge
//! used before its own parser: the same value (same key order, same number
//! kinds, same float bits) or the same error text.

use std::borrow::Cow;

use serde_json::Value;

/// What the bridge did before `json`: each lone surrogate escape
/// becomes `\ufffd`, then `serde_json::from_str`.
pub fn oracle(text: &str) -> Result<Value, String> {
    serde_json::from_str(&replace_lone_surrogate_escapes(text)).map_err(|e| e.to_string())
}

/// Panics when the two parsers disagree on `data` (read as UTF-8, lossily).
pub fn check_json(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    check_text(&text);
}

/// Panics when the two parsers disagree on `text`.
pub fn check_text(text: &str) {
    let ours = toolmark_bridge::json::parse(text).map_err(|e| e.to_string());
    let theirs = oracle(text);
    match (&ours, &theirs) {
        (Ok(a), Ok(b)) => {
            // `==` ignores key order and calls 0.0 and -0.0 equal: the text does not.
            assert_eq!(a, b, "values differ for {text:?}");
            assert_eq!(a.to_string(), b.to_string(), "values differ for {text:?}");
            // and the crate writes it back as serde_json does
            let written = toolmark_bridge::json::to_text(a);
            assert_eq!(written, b.to_string(), "texts differ for {text:?}");
        }
        _ => assert_eq!(ours, theirs, "results differ for {text:?}"),
    }
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
