//! The checks the `inbound` fuzz target makes on one input, shared with
//! `tests/fuzz_regressions.rs` so kept inputs replay exactly as fuzzed.

use serde_json::Value;
use toolmark_bridge::json_value;
use toolmark_bridge::protocol::{
    check_agent_to_page, check_page_to_agent, parse_agent_to_page, parse_for_page, parse_json,
    parse_value, peek_client_id, validate, validate_written, validation_reads, Direction, Issue,
    Rejection, Written, DEFAULT_MAX_MESSAGE_BYTES, MAX_VALIDATED_BYTES, MAX_VALIDATED_DEPTH,
};

/// The page id `parse_for_page` is asked for (the seeds' `clientId`).
const PAGE: &str = "page-1";

/// Never panics on its own account; asserts the parser's invariants: the
/// first byte picks a size limit (so the size check is reached too), the
/// text read straight into a message gives what the `Value` path gives,
/// rejections included, the typed parser and `validate` agree, and an
/// accepted message serialized again is accepted again; and
/// `validateMessage` reads the same text as [`check_validate_written`] says.
pub fn check_inbound(data: &[u8]) {
    let Some((&limit_byte, rest)) = data.split_first() else {
        return;
    };
    let limit = if limit_byte < 16 {
        usize::from(limit_byte) * 8
    } else {
        DEFAULT_MAX_MESSAGE_BYTES
    };
    let text = String::from_utf8_lossy(rest);
    check_json_value(&text);
    check_validate_written(&text);
    let parsed = parse_json(&text, limit);
    let by_value = parsed.clone().and_then(check_agent_to_page);
    assert_eq!(parse_agent_to_page(&text, limit), by_value, "{text}");
    let for_page = match &parsed {
        Ok(value) if peek_client_id(value).is_some_and(|id| id != PAGE) => Ok(None),
        _ => by_value.map(Some),
    };
    assert_eq!(parse_for_page(&text, limit, PAGE), for_page, "{text}");
    let Ok(value) = parsed else {
        return;
    };
    for direction in [Direction::ToPage, Direction::ToAgent] {
        let verdict = validate(&value, direction);
        let typed = match direction {
            Direction::ToPage => check_agent_to_page(value.clone()).map(|m| m.to_json()),
            Direction::ToAgent => check_page_to_agent(&value).map(|m| m.to_json()),
        };
        assert_eq!(verdict.is_ok(), typed.is_ok());
        if let Ok(json) = typed {
            assert!(
                serde_json::from_str::<serde_json::Value>(&json).is_ok(),
                "{json}"
            );
            let again = serde_json::from_str::<serde_json::Value>(&json).unwrap_or_default();
            assert!(
                validate(&again, direction).is_ok(),
                "re-serialized message rejected: {json}"
            );
        }
    }
}

/// `validateMessage` on `text` as `JSON.stringify` wrote it (half a
/// surrogate pair escaped alone, `"\ud800"`, as it writes one): the text
/// itself when valid; refused for nesting exactly when it nests past 127
/// (serde_json's own limit, so a valid message is never refused for it);
/// otherwise the verdict of the value read with each lone surrogate as
/// U+FFFD, which [`lone_surrogates_as_replacement`] works out on its own,
/// walking the JSON strings.
fn check_validate_written(text: &str) {
    // A text `validateMessage` reads by its bytes is never refused by its
    // UTF-16 length, measured first (each unit at least a byte).
    let units = text.encode_utf16().count();
    assert!(validation_reads(units) || text.len() > MAX_VALIDATED_BYTES);
    let too_deep = Err(vec![Issue {
        path: String::new(),
        message: format!("nested deeper than {MAX_VALIDATED_DEPTH}: not validated"),
    }]);
    let read = lone_surrogates_as_replacement(text);
    for direction in [Direction::ToPage, Direction::ToAgent] {
        let verdict = validate_written(Written::Text(text), direction);
        if let Ok(returned) = verdict {
            assert!(std::ptr::eq(returned, text), "{text}");
        }
        match parse_value(&read) {
            Ok(value) => assert_eq!(
                verdict.map(|_| ()),
                validate(&value, direction),
                "{text}\nread as {read}"
            ),
            Err(Rejection::Malformed { reason }) if reason.contains("recursion limit") => {
                assert_eq!(verdict, too_deep, "{text}");
            }
            Err(rejection) if verdict == too_deep => {
                // Past the first error nothing is JSON; only the brackets count.
                let opened = text.bytes().filter(|b| matches!(b, b'[' | b'{')).count();
                assert!(opened > MAX_VALIDATED_DEPTH, "{text}: {rejection:?}");
            }
            Err(rejection) => assert_eq!(verdict, Err(rejection.issues()), "{text}"),
        }
    }
}

/// `text` with each `\uXXXX` escape in a JSON string that is half of a
/// surrogate pair with no other half beside it written `\ufffd` (the same
/// length, so a parse error is reported where it was): the string JS
/// holds, read as `String::from_utf16_lossy` reads it. Each run of
/// `\uXXXX` escapes is decoded as UTF-16 by the standard library.
fn lone_surrogates_as_replacement(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let (mut at, mut copied, mut in_string) = (0, 0, false);
    while let Some(&byte) = bytes.get(at) {
        match (in_string, byte) {
            (false, b'"') => in_string = true,
            (true, b'"') => in_string = false,
            (true, b'\\') => {
                let mut run = Vec::new();
                let mut end = at;
                while let Some(unit) = unicode_escape(bytes, end) {
                    run.push((end, unit));
                    end += 6;
                }
                if run.is_empty() {
                    // Another escape: its character is skipped with it.
                    at += 2;
                    continue;
                }
                let mut index = 0;
                for decoded in char::decode_utf16(run.iter().map(|&(_, unit)| unit)) {
                    match decoded {
                        Ok(c) => index += c.len_utf16(),
                        Err(_) => {
                            let start = run[index].0;
                            out.push_str(&text[copied..start]);
                            out.push_str("\\ufffd");
                            copied = start + 6;
                            index += 1;
                        }
                    }
                }
                at = end;
                continue;
            }
            _ => {}
        }
        at += 1;
    }
    out.push_str(&text[copied..]);
    out
}

/// The unit of the `\uXXXX` escape at `at`, if one is there.
fn unicode_escape(bytes: &[u8], at: usize) -> Option<u16> {
    if bytes.get(at..at + 2)? != b"\\u" {
        return None;
    }
    let hex = bytes.get(at + 2..at + 6)?;
    if !hex.iter().all(u8::is_ascii_hexdigit) {
        return None;
    }
    u16::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok()
}

/// `json_value::parse` reads what serde_json reads (and, beyond it, only
/// numbers within a unit in the last place of the largest double), to the
/// same value but for each number's last bits, and what it reads it writes
/// back to a text it reads to the same value.
fn check_json_value(text: &str) {
    let ours = json_value::parse(text);
    let serde = serde_json::from_str::<Value>(text);
    assert_eq!(
        ours.is_ok(),
        serde.is_ok() || json_value::reads_near_the_largest_double(text),
        "{text}"
    );
    assert_eq!(
        toolmark_bridge::protocol::JsonText::parse(text).is_ok(),
        ours.is_ok(),
        "{text}"
    );
    let Ok(ours) = ours else {
        return;
    };
    if let Ok(serde) = serde {
        assert!(alike(&ours, &serde), "{text}: {ours} against {serde}");
    }
    let again = json_value::parse(&ours.to_string());
    assert_eq!(again.as_ref().ok(), Some(&ours), "{text}");
}

/// Equal but for numbers, which may differ in their last bits.
fn alike(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_f64(), y.as_f64()) {
            (Some(x), Some(y)) => x == y || (x - y).abs() <= x.abs().max(y.abs()) * 1e-15,
            _ => false,
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| alike(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y)
                    .all(|((k, x), (l, y))| k == l && alike(x, y))
        }
        _ => a == b,
    }
}
