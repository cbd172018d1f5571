//! A tool result's `data` as `JSON.stringify` wrote it (spec: results are
//! serialized with JSON semantics): deep nesting and lone surrogates go out
//! as written; past the documented depth bound, "Result not serializable"
//! with a `transport_failed` event.
#![cfg(not(target_arch = "wasm32"))]

#[macro_use]
mod support {
    pub mod harness;
}

use serde_json::json;
use support::harness::*;
use toolmark_bridge::machine::Outcome;
use toolmark_bridge::machine::{Event, Output};
use toolmark_bridge::protocol::{
    Data, ErrorEventCode, PageToAgent, ProtocolV1, ResultMessage, ToolResult, MAX_RESULT_DEPTH,
};

/// Calls tool `t` once, settles its run with `text`, and returns the
/// `result` message's text as sent (not parsed: serde_json could not parse
/// every result `JSON.stringify` writes), and the error events.
fn settle_with(text: &str) -> (String, Vec<(ErrorEventCode, String)>) {
    let mut page = Page::new();
    page.register(tool("t"));
    page.call("c1", "t", json!({}));
    let runs = page.take_runs();
    let (run, ..) = runs.first().cloned().expect("one run");
    page.tm
        .handle_outcome(run, Outcome::Ok(Some(text.to_owned())), page.now);
    let mut sent = Vec::new();
    let mut errors = Vec::new();
    loop {
        match page.tm.poll_output() {
            Output::Transmit(t) => sent.push(t.text),
            Output::Event(Event::Error { code, message, .. }) => errors.push((code, message)),
            Output::Timeout(_) => break,
            _ => {}
        }
    }
    assert_eq!(sent.len(), 1, "one result: {sent:?}");
    (sent.remove(0), errors)
}

fn nested(depth: usize) -> String {
    format!("{}1{}", "[".repeat(depth), "]".repeat(depth))
}

#[test]
fn a_result_nested_200_deep_goes_out_as_written() {
    let data = nested(200);
    let (message, errors) = settle_with(&data);
    assert!(errors.is_empty(), "{errors:?}");
    assert!(
        message.contains(&format!(r#""result":{{"status":"ok","data":{data}}}"#)),
        "{message}"
    );
}

#[test]
fn a_result_at_the_depth_bound_goes_out_and_one_deeper_is_not_serializable() {
    let (message, errors) = settle_with(&nested(MAX_RESULT_DEPTH));
    assert!(errors.is_empty(), "{errors:?}");
    assert!(message.contains(&nested(MAX_RESULT_DEPTH)));

    let (message, errors) = settle_with(&nested(MAX_RESULT_DEPTH + 1));
    assert!(
        message.contains(r#""result":{"status":"error","message":"Result not serializable"}"#),
        "{message}"
    );
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0].0, ErrorEventCode::TransportFailed);
    assert!(
        errors[0].1.contains("nested deeper than 1000"),
        "{errors:?}"
    );
}

#[test]
fn lone_surrogates_go_out_escaped_as_json_stringify_wrote_them() {
    // `JSON.stringify('🎉'.slice(0, 1))` and a trailing low surrogate.
    let data = r#"{"text":"cut \ud83c","tail":"\udf89 end"}"#;
    let (message, errors) = settle_with(data);
    assert!(errors.is_empty(), "{errors:?}");
    assert!(message.contains(data), "{message}");
}

#[test]
fn malformed_text_is_still_not_serializable() {
    let (message, errors) = settle_with("{nope");
    assert!(message.contains("Result not serializable"), "{message}");
    assert_eq!(errors[0].0, ErrorEventCode::TransportFailed);
}

#[test]
fn data_keeps_its_text_without_a_copy_and_compares_as_json() {
    let text = String::from(r#"{"a":[1,2]}"#);
    let address = text.as_ptr();
    let data = Data::from_json(text).expect("valid");
    // `from_string` keeps the buffer when the text has no surrounding
    // whitespace and no spare capacity: the result is held once.
    assert_eq!(data.text().as_ptr(), address);
    assert_eq!(data, Data::from(json!({"a": [1, 2]})));
    assert_ne!(data, Data::from(json!({"a": [2, 1]})));
    assert!(Data::from_json(String::from("1 2")).is_err());
}

#[test]
fn a_result_brought_in_with_room_becomes_its_message_in_place() {
    // As the driver brings a large result in: its text, then spaces.
    let data = format!(r#"{{"big":"{}"}}"#, "x".repeat(100_000));
    let text = format!("{data}{}", " ".repeat(256));
    let address = text.as_ptr();
    let data_value = Data::from_json(text).expect("valid");
    assert_eq!(data_value.text(), data);
    let message = PageToAgent::Result(ResultMessage {
        protocol: ProtocolV1,
        client_id: "c1".into(),
        id: "id-1".into(),
        result: ToolResult::Ok {
            data: Some(data_value),
        },
    });
    let expected = message.to_json();
    let written = message.into_json();
    assert_eq!(written, expected);
    assert_eq!(
        written.as_ptr(),
        address,
        "the data's own buffer, not a copy"
    );
    assert!(written.ends_with(&format!(r#""data":{data}}}}}"#)));
}
