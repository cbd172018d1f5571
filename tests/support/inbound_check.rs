//! The checks the `inbound` fuzz target makes on one input, shared with
//! `tests/fuzz_regressions.rs` so kept inputs replay exactly as fuzzed.

use serde_json::Value;
use toolmark_bridge::json_value;
use toolmark_bridge::protocol::{
    check_agent_to_page, check_page_to_agent, parse_agent_to_page, parse_for_page, parse_json,
    peek_client_id, validate, Direction, DEFAULT_MAX_MESSAGE_BYTES,
};

/// The page id `parse_for_page` is asked for (the seeds' `clientId`).
const PAGE: &str = "page-1";

/// Never panics on its own account; asserts the parser's invariants: the
/// first byte picks a size limit (so the size check is reached too), the
/// text read straight into a message gives what the `Value` path gives,
/// rejections included, the typed parser and `validate` agree, and an
/// accepted message serialized again is accepted again.
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
