//! Inbound parsing, natively: every rejection, in the spec's order, and the limits.

//! The messages are built as serde_json values (they are sent as text);
//! those handed to the crate as values are made its own with `own`.

use serde_json::{json, Value};
use toolmark_bridge::protocol::*;

const LIMIT: usize = DEFAULT_MAX_MESSAGE_BYTES;

fn call() -> Value {
    json!({"protocol": 1, "type": "call", "clientId": "page-1", "id": "call-1",
           "rev": 3, "tool": "signup.fill", "input": {"email": "a@b.c"}})
}

fn parse(value: &Value) -> Result<AgentToPage, Rejection> {
    parse_agent_to_page(&value.to_string(), LIMIT)
}

fn nested(depth: usize) -> String {
    // `depth` containers in all: the top-level object plus depth-1 arrays.
    format!(
        "{{\"protocol\":1,\"type\":\"call\",\"clientId\":\"c\",\"id\":\"i\",\"tool\":\"t\",\"input\":{}{}}}",
        "[".repeat(depth - 1),
        "]".repeat(depth - 1)
    )
}

#[test]
fn a_valid_call_parses_into_its_type() {
    let Ok(AgentToPage::Call(call)) = parse(&call()) else {
        panic!("call should parse")
    };
    assert_eq!(call.client_id, "page-1");
    assert_eq!(call.id, "call-1");
    assert_eq!(call.rev, Some(3));
    assert_eq!(call.tool, "signup.fill");
    assert_eq!(call.input, json!({"email": "a@b.c"}));
}

#[test]
fn describe_and_cancel_parse() {
    let describe =
        json!({"protocol": 1, "type": "describe", "clientId": "p", "id": "d", "tool": "x"});
    assert!(matches!(parse(&describe), Ok(AgentToPage::Describe(d)) if d.tool == "x"));
    let cancel = json!({"protocol": 1, "type": "cancel", "clientId": "p", "id": "d"});
    assert!(matches!(parse(&cancel), Ok(AgentToPage::Cancel(c)) if c.id == "d"));
    for message in [call(), describe, cancel] {
        let client_id = message["clientId"].clone();
        let parsed = parse(&message).map(|m| m.client_id().to_owned());
        assert_eq!(parsed.ok().map(Value::from), Some(client_id));
    }
}

#[test]
fn size_is_checked_first_in_utf8_bytes() {
    let text = call().to_string();
    assert!(parse_agent_to_page(&text, text.len()).is_ok());
    assert_eq!(
        parse_agent_to_page(&text, text.len() - 1),
        Err(Rejection::TooLarge {
            bytes: text.len(),
            limit: text.len() - 1
        })
    );
    // "é" is one UTF-16 unit but two UTF-8 bytes: the limit counts bytes.
    let mut wide = call();
    wide["input"] = json!("é".repeat(10));
    let text = wide.to_string();
    assert_eq!(text.len(), text.chars().count() + 10);
    assert!(matches!(
        parse_agent_to_page(&text, text.chars().count()),
        Err(Rejection::TooLarge { .. })
    ));
    // Too large wins over everything else, even malformed and too deep.
    assert!(matches!(
        parse_agent_to_page(&"[".repeat(100), 10),
        Err(Rejection::TooLarge { .. })
    ));
    // Default limit: 1 MiB.
    let big = format!("\"{}\"", "x".repeat(LIMIT));
    assert!(matches!(
        parse_agent_to_page(&big, LIMIT),
        Err(Rejection::TooLarge { .. })
    ));
}

#[test]
fn depth_64_is_accepted_and_65_is_not() {
    assert!(parse_agent_to_page(&nested(64), LIMIT).is_ok());
    assert_eq!(
        parse_agent_to_page(&nested(65), LIMIT),
        Err(Rejection::TooDeep { limit: 64 })
    );
    // Checked before parsing: unbalanced, malformed nesting is still "too deep",
    // and a megabyte of brackets does not recurse.
    let brackets = "[".repeat(LIMIT);
    assert_eq!(
        parse_agent_to_page(&brackets, LIMIT),
        Err(Rejection::TooDeep { limit: 64 })
    );
    // Brackets inside strings do not count, nor do escaped quotes end a string.
    let in_string = format!("{{\"a\":\"\\\"{}\"}}", "[".repeat(200));
    assert!(matches!(
        parse_agent_to_page(&in_string, LIMIT),
        Err(Rejection::UnsupportedProtocol { .. })
    ));
    // The string ends after its escapes: nesting after it counts again.
    let after_escape = format!(
        "{{\"s\":\"a\\\\b\\\"c\",\"d\":{}{}}}",
        "[".repeat(64),
        "]".repeat(64)
    );
    assert_eq!(
        parse_agent_to_page(&after_escape, LIMIT),
        Err(Rejection::TooDeep { limit: 64 })
    );
    // Depth is nesting, not a count of brackets: 100 siblings are depth 2.
    let siblings = format!("{{\"a\":[{}]}}", vec!["[]"; 100].join(","));
    assert!(matches!(
        parse_agent_to_page(&siblings, LIMIT),
        Err(Rejection::UnsupportedProtocol { .. })
    ));
}

#[test]
fn malformed_json_is_rejected() {
    for text in [
        "",
        "{",
        "{\"a\":}",
        "nul",
        "{\"a\":1,}",
        "\"\\x\"",
        "1e400",
        "{'a':1}",
    ] {
        assert!(
            matches!(
                parse_agent_to_page(text, LIMIT),
                Err(Rejection::Malformed { .. })
            ),
            "{text:?}"
        );
    }
}

#[test]
fn other_protocols_keep_string_id_and_client_id() {
    let mut v = call();
    v["protocol"] = json!(2);
    assert_eq!(
        parse(&v),
        Err(Rejection::UnsupportedProtocol {
            id: Some("call-1".into()),
            client_id: Some("page-1".into())
        })
    );
    v["id"] = json!(7);
    v.as_object_mut().map(|o| o.remove("clientId"));
    assert_eq!(
        parse(&v),
        Err(Rejection::UnsupportedProtocol {
            id: None,
            client_id: None
        })
    );
    for protocol in [json!("1"), json!(null), json!(true), json!(1.5), json!(0)] {
        let mut v = call();
        v["protocol"] = protocol;
        assert!(matches!(
            parse(&v),
            Err(Rejection::UnsupportedProtocol { .. })
        ));
    }
    let mut missing = call();
    missing.as_object_mut().map(|o| o.remove("protocol"));
    assert!(matches!(
        parse(&missing),
        Err(Rejection::UnsupportedProtocol { .. })
    ));
    // 1.0 is the number 1.
    assert!(parse_agent_to_page(
        &call()
            .to_string()
            .replace("\"protocol\":1", "\"protocol\":1.0"),
        LIMIT
    )
    .is_ok());
}

#[test]
fn protocol_is_checked_before_direction_and_properties() {
    let v = json!({"protocol": 2, "type": "result", "clientId": "p", "id": "i", "bogus": 1});
    assert!(matches!(
        parse(&v),
        Err(Rejection::UnsupportedProtocol { .. })
    ));
}

#[test]
fn wrong_direction_is_its_own_rejection() {
    for t in ["manifest", "changed", "result", "confirmed"] {
        let v = json!({"protocol": 1, "type": t, "clientId": "p", "id": "i"});
        assert_eq!(
            parse(&v),
            Err(Rejection::WrongDirection {
                message_type: t.into()
            })
        );
    }
    let v = json!({"protocol": 1, "type": "call", "clientId": "p", "id": "i", "tool": "t", "input": {}});
    assert!(matches!(
        parse_page_to_agent(&v.to_string(), LIMIT),
        Err(Rejection::WrongDirection { .. })
    ));
}

#[test]
fn unknown_top_level_properties_are_rejected_before_field_types() {
    let mut v = call();
    v["extra"] = json!(1);
    v["id"] = json!(5);
    assert_eq!(
        parse(&v),
        Err(Rejection::UnknownProperty {
            name: "extra".into()
        })
    );
    // Unknown properties inside `input` are the tool's business.
    let mut v = call();
    v["input"] = json!({"anything": {"goes": [1, null]}});
    assert!(parse(&v).is_ok());
}

fn invalid_paths(v: &Value) -> Vec<String> {
    match parse(v) {
        Err(Rejection::Invalid { issues }) => issues.into_iter().map(|i| i.path).collect(),
        other => panic!("expected Invalid, got {other:?}"),
    }
}

#[test]
fn field_types_and_ranges() {
    let cases: Vec<(&str, Value, &str)> = vec![
        ("id", json!(1), "id"),
        ("id", json!(""), "id"),
        ("clientId", json!(null), "clientId"),
        ("tool", json!(""), "tool"),
        ("tool", json!(["t"]), "tool"),
        ("rev", json!(-1), "rev"),
        ("rev", json!(1.5), "rev"),
        ("rev", json!("3"), "rev"),
        ("type", json!("subscribe"), "type"),
        ("type", json!(3), "type"),
    ];
    for (key, bad, path) in cases {
        let mut v = call();
        v[key] = bad.clone();
        assert_eq!(invalid_paths(&v), vec![path.to_string()], "{key} = {bad}");
    }
    for key in ["clientId", "id", "tool", "input", "type"] {
        let mut v = call();
        v.as_object_mut().map(|o| o.remove(key));
        assert_eq!(invalid_paths(&v), vec![key.to_string()], "missing {key}");
    }
    // `rev` is optional; `input` may be any JSON, including null.
    let mut v = call();
    v.as_object_mut().map(|o| o.remove("rev"));
    v["input"] = json!(null);
    assert!(parse(&v).is_ok());
    // All field problems are reported together.
    let mut v = call();
    v["id"] = json!(1);
    v["tool"] = json!(2);
    assert_eq!(
        invalid_paths(&v),
        vec!["id".to_string(), "tool".to_string()]
    );
    assert_eq!(invalid_paths(&json!([1])), vec![String::new()]);
    assert_eq!(invalid_paths(&json!("call")), vec![String::new()]);
}

#[test]
fn integer_revisions_follow_json_schema() {
    let text = call().to_string().replace("\"rev\":3", "\"rev\":7.0");
    assert!(
        matches!(parse_agent_to_page(&text, LIMIT), Ok(AgentToPage::Call(c)) if c.rev == Some(7))
    );
    let text = call().to_string().replace("\"rev\":3", "\"rev\":1e300");
    assert!(
        matches!(parse_agent_to_page(&text, LIMIT), Ok(AgentToPage::Call(c)) if c.rev == Some(u64::MAX))
    );
    let text = call().to_string().replace("\"rev\":3", "\"rev\":-0");
    assert!(parse_agent_to_page(&text, LIMIT).is_ok());
    let text = call().to_string().replace("\"rev\":3", "\"rev\":-1e300");
    assert!(matches!(
        parse_agent_to_page(&text, LIMIT),
        Err(Rejection::Invalid { .. })
    ));
    let text = call()
        .to_string()
        .replace("\"rev\":3", "\"rev\":18446744073709551616");
    assert!(parse_agent_to_page(&text, LIMIT).is_ok());
}

#[test]
fn lone_surrogates_are_malformed() {
    // serde_json rejects a lone surrogate escape: the message is dropped
    // (`invalid_message`), never answered.
    for lone in ["a\\ud800b", "b\\udc00c", "\\ud800\\ud800"] {
        let text = call().to_string().replace("call-1", lone);
        assert!(
            matches!(
                parse_agent_to_page(&text, LIMIT),
                Err(Rejection::Malformed { .. })
            ),
            "{text}"
        );
    }
    // A surrogate pair is one character.
    let text = call().to_string().replace("call-1", "c\\ud83d\\ude00");
    assert!(
        matches!(parse_agent_to_page(&text, LIMIT), Ok(AgentToPage::Call(c)) if c.id == "c\u{1f600}")
    );
    // An escaped backslash before "ud800" is not an escape.
    let text = call().to_string().replace("call-1", "\\\\ud800");
    assert!(
        matches!(parse_agent_to_page(&text, LIMIT), Ok(AgentToPage::Call(c)) if c.id == "\\ud800")
    );
}

#[test]
fn peek_client_id_only_reads_strings() {
    assert_eq!(peek_client_id(&call()), Some("page-1"));
    assert_eq!(peek_client_id(&json!({"clientId": 5})), None);
    assert_eq!(peek_client_id(&json!([])), None);
}

#[test]
fn page_to_agent_messages_round_trip() {
    let messages = [
        json!({"protocol": 1, "type": "manifest", "clientId": "p", "rev": 0, "tools": []}),
        json!({"protocol": 1, "type": "manifest", "clientId": "p", "rev": 7, "tools": [
            {"name": "signup.fill", "llmName": "signup__fill", "description": "Fill", "hints": {"consequential": true}}
        ]}),
        json!({"protocol": 1, "type": "changed", "clientId": "p", "rev": 8}),
        json!({"protocol": 1, "type": "result", "clientId": "p", "id": "i", "result": {"status": "ok"}}),
        json!({"protocol": 1, "type": "confirmed", "clientId": "p", "confirmId": "c",
               "result": {"status": "refused", "code": "confirmation_expired",
                          "message": "The confirmation expired or was already used"}}),
    ];
    for value in messages {
        let parsed = parse_page_to_agent(&value.to_string(), LIMIT);
        let Ok(parsed) = parsed else {
            panic!("{value} should parse: {parsed:?}")
        };
        let back: Value = serde_json::from_str(&parsed.to_json()).unwrap_or_default();
        assert_eq!(back, value);
        assert_eq!(parsed.client_id(), "p");
        assert_eq!(validate(&value, Direction::ToAgent), Ok(()));
        assert!(validate(&value, Direction::ToPage).is_err());
    }
}

#[test]
fn validate_reports_issues_with_paths() {
    let bad = json!({"protocol": 1, "type": "manifest", "clientId": "p", "rev": 1,
                     "tools": [{"name": "ok", "llmName": "ok", "description": "d", "hints": {"readOnly": 1}}]});
    assert_eq!(
        validate(&bad, Direction::ToAgent),
        Err(vec![Issue {
            path: "tools.0.hints.readOnly".into(),
            message: "must be boolean".into()
        }])
    );
    let other_protocol = json!({"protocol": 2});
    assert_eq!(
        validate(&other_protocol, Direction::ToPage),
        Err(vec![Issue {
            path: "protocol".into(),
            message: "must be equal to 1".into()
        }])
    );
}

#[test]
fn field_issues_are_the_schema_validators_precise_ones() {
    let issue = |path: &str, message: &str| Issue {
        path: path.into(),
        message: message.into(),
    };
    let invalid = |v: &Value, direction: Direction| validate(v, direction).err();
    let mut v = call();
    v["tool"] = json!("");
    v["rev"] = json!(1.5);
    v.as_object_mut().map(|o| o.remove("clientId"));
    assert_eq!(
        invalid(&v, Direction::ToPage),
        Some(vec![
            issue("clientId", "must have required property 'clientId'"),
            issue("rev", "must be integer"),
            issue("tool", "must NOT have fewer than 1 character"),
        ])
    );
    // Inside a result: the branch of its status, not "must match exactly one schema in oneOf".
    let result = json!({"protocol": 1, "type": "result", "clientId": "p", "id": "i",
                        "result": {"status": "invalid", "issues": [{"path": 1, "message": "m"}]}});
    assert_eq!(
        invalid(&result, Direction::ToAgent),
        Some(vec![issue("result.issues.0.path", "must be string")])
    );
    let manifest = json!({"protocol": 1, "type": "manifest", "clientId": "p", "rev": 1,
                          "tools": [{"name": "a b", "llmName": "a", "description": "d", "hints": {}}]});
    assert_eq!(
        invalid(&manifest, Direction::ToAgent),
        Some(vec![issue(
            "tools.0.name",
            "must match pattern \"^[A-Za-z0-9_.-]{1,128}$\""
        )])
    );
    let no_status = json!({"protocol": 1, "type": "confirmed", "clientId": "p", "confirmId": "c",
                           "result": []});
    assert_eq!(
        invalid(&no_status, Direction::ToAgent),
        Some(vec![issue("result", "must be object")])
    );
}
