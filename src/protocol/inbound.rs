//! Inbound parsing: text → bounded, parsed, validated message, in the order
//! the spec gives. Every failure is a typed [`Rejection`], never a panic.
//!
//! 1. UTF-8 byte length of the text over `max_message_bytes` → [`Rejection::TooLarge`]
//! 2. nesting deeper than [`MAX_DEPTH`], found by a scan without recursion → [`Rejection::TooDeep`]
//! 3. not JSON (serde_json's verdict: a lone surrogate escape such as
//!    `"\ud800"` is malformed too) → [`Rejection::Malformed`]
//! 4. `protocol` other than 1 → [`Rejection::UnsupportedProtocol`] (keeps a string `id` and `clientId`)
//! 5. a known `type` of the other direction → [`Rejection::WrongDirection`]
//! 6. an unknown top-level property → [`Rejection::UnknownProperty`]
//! 7. bad field types or ranges (also a missing or unknown `type`) → [`Rejection::Invalid`]:
//!    the published JSON Schema of the direction, run by the crate's own
//!    validator (`validation.rs`), reports the issues
//!
//! Steps 1–3 are [`parse_json`]; the bridge then filters by `clientId`
//! ([`peek_client_id`]) before steps 4–7 ([`check_agent_to_page`]).

use crate::prelude::*;
use serde_json::{Map, Value};

use super::codes::Direction;
use super::message::{self, AgentToPage, PageToAgent};
use super::result::Issue;
use super::validation::{issues, Slot};

/// Default `maxMessageBytes`: 1 MiB of UTF-8.
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 1_048_576;
/// Deepest nesting of arrays and objects accepted; the top-level object is depth 1.
pub const MAX_DEPTH: usize = 64;

/// Why an inbound message was not accepted.
#[derive(Debug, Clone, PartialEq)]
pub enum Rejection {
    TooLarge {
        bytes: usize,
        limit: usize,
    },
    TooDeep {
        limit: usize,
    },
    Malformed {
        reason: String,
    },
    /// `protocol` is missing or not 1. `id` and `client_id` are kept when they
    /// are strings, so the bridge can answer "unsupported protocol" (rule 4).
    UnsupportedProtocol {
        id: Option<String>,
        client_id: Option<String>,
    },
    WrongDirection {
        message_type: String,
    },
    UnknownProperty {
        name: String,
    },
    Invalid {
        issues: Vec<Issue>,
    },
    /// A transport handed over a value `JSON.stringify` cannot write (a
    /// cycle, a BigInt, a throwing getter, `undefined` or a function).
    NotJson,
}

impl Rejection {
    /// The rejection as `{ path, message }` items (for `validateMessage`).
    pub fn issues(&self) -> Vec<Issue> {
        let (path, message) = match self {
            Rejection::Invalid { issues } => return issues.clone(),
            Rejection::UnknownProperty { name } => {
                (name.as_str(), "must NOT have additional properties".into())
            }
            Rejection::UnsupportedProtocol { .. } => ("protocol", "must be equal to 1".into()),
            Rejection::WrongDirection { message_type } => (
                "type",
                format!("'{message_type}' does not travel in this direction"),
            ),
            other => ("", other.message()),
        };
        vec![Issue {
            path: path.to_owned(),
            message,
        }]
    }

    /// What went wrong, in words (what `Display` writes; the bridge's
    /// `invalid_message` event text).
    pub fn message(&self) -> String {
        self.to_string()
    }
}

impl core::fmt::Display for Rejection {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Rejection::TooLarge { bytes, limit } => {
                write!(
                    f,
                    "message of {bytes} bytes exceeds maxMessageBytes {limit}"
                )
            }
            Rejection::TooDeep { limit } => write!(f, "message nested deeper than {limit}"),
            Rejection::Malformed { reason } => write!(f, "malformed JSON: {reason}"),
            Rejection::UnsupportedProtocol { .. } => f.write_str("unsupported protocol"),
            Rejection::WrongDirection { message_type } => {
                write!(f, "message type '{message_type}' travels the other way")
            }
            Rejection::UnknownProperty { name } => write!(f, "unknown property '{name}'"),
            Rejection::NotJson => f.write_str(
                "message is not JSON: JSON.stringify gave no text (a cycle, a BigInt, a throwing getter, undefined or a function)",
            ),
            Rejection::Invalid { issues } => {
                f.write_str("invalid message:")?;
                for issue in issues {
                    let path = if issue.path.is_empty() {
                        "(root)"
                    } else {
                        &issue.path
                    };
                    write!(f, " {path}: {};", issue.message)?;
                }
                Ok(())
            }
        }
    }
}

/// Steps 1–3: size, depth, JSON.
pub fn parse_json(text: &str, max_message_bytes: usize) -> Result<Value, Rejection> {
    if text.len() > max_message_bytes {
        return Err(Rejection::TooLarge {
            bytes: text.len(),
            limit: max_message_bytes,
        });
    }
    if nesting_exceeds(text.as_bytes(), MAX_DEPTH) {
        return Err(Rejection::TooDeep { limit: MAX_DEPTH });
    }
    parse_value(text)
}

/// Step 3 alone: JSON text to a value, parsed once by serde_json, with no
/// size or depth limit of ours (serde_json still refuses nesting past 127).
/// A lone surrogate escape (`\ud800`: JavaScript strings may hold one, and
/// `JSON.stringify` writes it so) is malformed, as serde_json has it.
pub fn parse_value(text: &str) -> Result<Value, Rejection> {
    serde_json::from_str::<Value>(text).map_err(|error| Rejection::Malformed {
        reason: error.to_string(),
    })
}

/// True when arrays/objects nest deeper than `max` (strings are skipped).
/// A flat scan: hostile input cannot grow the stack.
pub fn nesting_exceeds(bytes: &[u8], max: usize) -> bool {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for &byte in bytes {
        if in_string {
            match (escaped, byte) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'{' | b'[' => {
                depth += 1;
                if depth > max {
                    return true;
                }
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    false
}

/// The message's `clientId` when it is a string (rule 8 filters on it before validating).
pub fn peek_client_id(value: &Value) -> Option<&str> {
    value.get("clientId")?.as_str()
}

fn invalid(path: &str, message: &str) -> Rejection {
    Rejection::Invalid {
        issues: vec![Issue {
            path: path.to_owned(),
            message: message.to_owned(),
        }],
    }
}

/// Steps 4–7 (step 7 by the published schema of `direction`): the
/// message's object and `type` when it is valid.
fn check_message(
    value: &Value,
    direction: Direction,
) -> Result<(&Map<String, Value>, &str), Rejection> {
    let Some(map) = value.as_object() else {
        return Err(invalid("", "must be object"));
    };
    let protocol_ok = map
        .get("protocol")
        .and_then(Value::as_f64)
        .is_some_and(|p| p == f64::from(super::PROTOCOL_VERSION));
    if !protocol_ok {
        let string = |key: &str| map.get(key).and_then(Value::as_str).map(str::to_owned);
        return Err(Rejection::UnsupportedProtocol {
            id: string("id"),
            client_id: string("clientId"),
        });
    }
    let message_type = map.get("type").and_then(Value::as_str).unwrap_or("");
    let known = match message::message_type(message_type) {
        Some((travels, _)) if travels != direction => {
            return Err(Rejection::WrongDirection {
                message_type: message_type.to_owned(),
            });
        }
        Some((_, known)) => known,
        None => {
            return Err(invalid(
                "type",
                if map.contains_key("type") {
                    "must be equal to one of the allowed values"
                } else {
                    "must have required property 'type'"
                },
            ));
        }
    };
    for name in map.keys() {
        if !known.contains(&name.as_str()) {
            return Err(Rejection::UnknownProperty { name: name.clone() });
        }
    }
    // Agent → page messages are the bridge's every inbound message: most
    // are well formed, and the shape check costs a fraction of the
    // validator's run (docs/benchmarks.md, "The in-page call path, second pass").
    if direction == Direction::ToPage && message::agent_to_page_in_shape(map, message_type) {
        return Ok((map, message_type));
    }
    let issues = issues(Slot::from(direction), value);
    if !issues.is_empty() {
        return Err(Rejection::Invalid { issues });
    }
    Ok((map, message_type))
}

/// Steps 4–7 for agent → page messages. The message is made of `value`'s
/// own fields (its `input` is not copied).
pub fn check_agent_to_page(value: Value) -> Result<AgentToPage, Rejection> {
    // The three agent → page types, as the check found them.
    let message_type = match check_message(&value, Direction::ToPage)?.1 {
        "call" => "call",
        "describe" => "describe",
        _ => "cancel",
    };
    let Value::Object(map) = value else {
        return Err(invalid("", "must be object"));
    };
    message::agent_to_page(map, message_type).ok_or_else(|| invalid("", "invalid message"))
}

/// Steps 4–7 for page → agent messages.
pub fn check_page_to_agent(value: &Value) -> Result<PageToAgent, Rejection> {
    let (map, message_type) = check_message(value, Direction::ToAgent)?;
    message::page_to_agent(map, message_type).ok_or_else(|| invalid("", "invalid message"))
}

/// All steps for an agent → page message given as text.
pub fn parse_agent_to_page(text: &str, max_message_bytes: usize) -> Result<AgentToPage, Rejection> {
    check_agent_to_page(parse_json(text, max_message_bytes)?)
}

/// All steps for a page → agent message given as text.
pub fn parse_page_to_agent(text: &str, max_message_bytes: usize) -> Result<PageToAgent, Rejection> {
    check_page_to_agent(&parse_json(text, max_message_bytes)?)
}

/// `validateMessage`: does `value` match the published schema of `direction`?
pub fn validate(value: &Value, direction: Direction) -> Result<(), Vec<Issue>> {
    check_message(value, direction)
        .map(|_| ())
        .map_err(|rejection| rejection.issues())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The shape shortcut of agent → page messages accepts only what the
    /// published schema accepts, and takes every well-formed message past
    /// the validator: every combination of these field values, each field
    /// also absent, for each message type.
    #[test]
    fn the_agent_to_page_shortcut_accepts_only_what_the_schema_accepts() {
        let values = [
            None,
            Some(json!("")),
            Some(json!("x")),
            Some(json!(0)),
            Some(json!(7.0)),
            Some(json!(-1)),
            Some(json!(1.5)),
            Some(json!(-0.0)),
            Some(json!(1e300)),
            Some(Value::Null),
            Some(json!({})),
        ];
        let (mut shortcut, mut valid) = (0, 0);
        for (message_type, fields) in [
            ("call", &["clientId", "id", "rev", "tool", "input"][..]),
            ("describe", &["clientId", "id", "tool"][..]),
            ("cancel", &["clientId", "id"][..]),
        ] {
            let combinations = values.len().pow(u32::try_from(fields.len()).unwrap_or(0));
            for mut n in 0..combinations {
                let mut map = Map::new();
                map.insert("protocol".into(), json!(1));
                map.insert("type".into(), json!(message_type));
                for field in fields {
                    if let Some(value) = &values[n % values.len()] {
                        map.insert((*field).into(), value.clone());
                    }
                    n /= values.len();
                }
                let in_shape = message::agent_to_page_in_shape(&map, message_type);
                let by_schema = issues(Slot::ToPage, &Value::Object(map.clone())).is_empty();
                assert!(!in_shape || by_schema, "shortcut accepts {map:?}");
                assert_eq!(in_shape, by_schema, "{map:?}");
                shortcut += usize::from(in_shape);
                valid += usize::from(by_schema);
            }
        }
        assert_eq!(shortcut, valid);
        assert!(valid > 0);
    }

    #[test]
    fn messages_and_issues_keep_their_texts() {
        let issue = |path: &str, message: &str| Issue {
            path: path.into(),
            message: message.into(),
        };
        let cases = [
            Rejection::TooLarge {
                bytes: 1_048_577,
                limit: DEFAULT_MAX_MESSAGE_BYTES,
            },
            Rejection::TooLarge {
                bytes: usize::MAX,
                limit: 0,
            },
            Rejection::TooDeep { limit: MAX_DEPTH },
            parse_value("[1,")
                .err()
                .unwrap_or(Rejection::TooDeep { limit: 0 }),
            Rejection::UnsupportedProtocol {
                id: Some("i".into()),
                client_id: None,
            },
            Rejection::WrongDirection {
                message_type: "result".into(),
            },
            Rejection::UnknownProperty { name: "x".into() },
            Rejection::Invalid { issues: vec![] },
            Rejection::Invalid {
                issues: vec![issue("", "must be object"), issue("a.0", "must be string")],
            },
        ];
        // The texts as `Display` wrote them with `write!` before.
        let texts = [
            "message of 1048577 bytes exceeds maxMessageBytes 1048576".to_string(),
            format!("message of {} bytes exceeds maxMessageBytes 0", usize::MAX),
            "message nested deeper than 64".into(),
            "malformed JSON: EOF while parsing a value at line 1 column 3".into(),
            "unsupported protocol".into(),
            "message type 'result' travels the other way".into(),
            "unknown property 'x'".into(),
            "invalid message:".into(),
            "invalid message: (root): must be object; a.0: must be string;".into(),
        ];
        for (rejection, text) in cases.iter().zip(&texts) {
            assert_eq!(&rejection.message(), text);
            assert_eq!(&rejection.to_string(), text);
        }
        let issues: Vec<Vec<Issue>> = cases.iter().map(Rejection::issues).collect();
        assert_eq!(issues[0], [issue("", &texts[0])]);
        assert_eq!(issues[3], [issue("", &texts[3])]);
        assert_eq!(issues[4], [issue("protocol", "must be equal to 1")]);
        assert_eq!(
            issues[5],
            [issue("type", "'result' does not travel in this direction")]
        );
        assert_eq!(
            issues[6],
            [issue("x", "must NOT have additional properties")]
        );
        assert_eq!(issues[7], []);
        assert_eq!(issues[8].len(), 2);
    }
}
