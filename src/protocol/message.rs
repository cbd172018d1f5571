//! One Rust type per protocol message, in both directions.

use crate::prelude::*;
use serde::{Serialize, Serializer};
use serde_json::{Map, Value};

use super::codes::Direction;
use super::json_text::JsonText;
use super::manifest::ToolManifestSummary;
use super::result::{Data, ToolResult};
use super::values::list;

/// The `protocol` field: always the number 1.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ProtocolV1;

impl Serialize for ProtocolV1 {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_u8(super::PROTOCOL_VERSION)
    }
}

/// Page → agent: the tool list visible to caller `inapp`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename = "manifest", rename_all = "camelCase")]
pub struct Manifest {
    pub protocol: ProtocolV1,
    pub client_id: String,
    pub rev: u64,
    pub tools: Vec<ToolManifestSummary>,
}

/// Page → agent: the registry changed (`onChange: 'changed'` mode).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename = "changed", rename_all = "camelCase")]
pub struct Changed {
    pub protocol: ProtocolV1,
    pub client_id: String,
    pub rev: u64,
}

/// Page → agent: the one answer to a `call` or `describe`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename = "result", rename_all = "camelCase")]
pub struct ResultMessage {
    pub protocol: ProtocolV1,
    pub client_id: String,
    pub id: String,
    pub result: ToolResult,
}

/// Page → agent: the final outcome of a deferred confirmation.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename = "confirmed", rename_all = "camelCase")]
pub struct Confirmed {
    pub protocol: ProtocolV1,
    pub client_id: String,
    pub confirm_id: String,
    pub result: ToolResult,
}

/// Agent → page: run a tool as caller `inapp`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename = "call", rename_all = "camelCase")]
pub struct Call {
    pub protocol: ProtocolV1,
    pub client_id: String,
    pub id: String,
    /// The manifest revision the agent saw, if it says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rev: Option<u64>,
    pub tool: String,
    /// Held as its text: see [`JsonText`].
    pub input: JsonText,
}

/// Agent → page: fetch a tool's full manifest entry.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename = "describe", rename_all = "camelCase")]
pub struct Describe {
    pub protocol: ProtocolV1,
    pub client_id: String,
    pub id: String,
    pub tool: String,
}

/// Agent → page: abort the in-flight call `id` (never answered itself).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename = "cancel", rename_all = "camelCase")]
pub struct Cancel {
    pub protocol: ProtocolV1,
    pub client_id: String,
    pub id: String,
}

/// Every page → agent message: on the wire, `type` first (each message
/// type writes its own: `untagged` here writes no second one), then the
/// message's fields in declaration order as camelCase, absent options left
/// out.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum PageToAgent {
    Manifest(Manifest),
    Changed(Changed),
    Result(ResultMessage),
    Confirmed(Confirmed),
}

/// Every agent → page message (the wire shape as [`PageToAgent`]'s).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum AgentToPage {
    Call(Call),
    Describe(Describe),
    Cancel(Cancel),
}

impl PageToAgent {
    pub fn client_id(&self) -> &str {
        match self {
            PageToAgent::Manifest(m) => &m.client_id,
            PageToAgent::Changed(m) => &m.client_id,
            PageToAgent::Result(m) => &m.client_id,
            PageToAgent::Confirmed(m) => &m.client_id,
        }
    }

    /// The message as JSON text. An `ok` result's data, most of the text
    /// of a large result, is copied once into a buffer of the exact size:
    /// serde_json writes the message around a `null` (the data is the last
    /// member of the result, the result the last of the message), and the
    /// data's text takes that `null`'s place. Written whole, the text would
    /// grow by doublings, each holding two buffers at once beside the data.
    pub fn to_json(&self) -> String {
        let hollow = |result: &ToolResult| match result {
            ToolResult::Ok { data: Some(_) } => Some(ToolResult::Ok {
                data: Some(Data::null()),
            }),
            _ => None,
        };
        let (hollow, data) = match self {
            PageToAgent::Result(m) => (
                hollow(&m.result).map(|result| {
                    PageToAgent::Result(ResultMessage {
                        protocol: ProtocolV1,
                        client_id: m.client_id.clone(),
                        id: m.id.clone(),
                        result,
                    })
                }),
                &m.result,
            ),
            PageToAgent::Confirmed(m) => (
                hollow(&m.result).map(|result| {
                    PageToAgent::Confirmed(Confirmed {
                        protocol: ProtocolV1,
                        client_id: m.client_id.clone(),
                        confirm_id: m.confirm_id.clone(),
                        result,
                    })
                }),
                &m.result,
            ),
            PageToAgent::Manifest(_) | PageToAgent::Changed(_) => (None, &NO_DATA),
        };
        let (Some(hollow), ToolResult::Ok { data: Some(data) }) = (hollow, data) else {
            return to_json(self);
        };
        let around = to_json(&hollow);
        let Some(before) = around.strip_suffix("null}}") else {
            return to_json(self);
        };
        let data = data.text();
        let mut text = String::with_capacity(before.len() + data.len() + 2);
        text.push_str(before);
        text.push_str(data);
        text.push_str("}}");
        text
    }
}

/// A result without data, for the messages that carry none.
const NO_DATA: ToolResult = ToolResult::Ok { data: None };

impl PageToAgent {
    /// The message as JSON text, as [`PageToAgent::to_json`] writes it,
    /// taking an `ok` result's data text as the buffer: when it has room
    /// for the rest of the message (the driver brings large results in with
    /// some), the message is written around it in place, and a large result
    /// is held once, never twice.
    pub fn into_json(mut self) -> String {
        let taken = self
            .data_slot()
            .and_then(Option::as_mut)
            .map(|data| core::mem::replace(data, Data::null()));
        let Some(data) = taken else {
            return to_json(&self);
        };
        let around = to_json(&self);
        let Some(before) = around.strip_suffix("null}}") else {
            if let Some(slot) = self.data_slot() {
                *slot = Some(data);
            }
            return to_json(&self);
        };
        let mut text = data.into_text();
        if text.capacity() - text.len() >= before.len() + 2 {
            text.insert_str(0, before);
            text.push_str("}}");
            return text;
        }
        let mut whole = String::with_capacity(before.len() + text.len() + 2);
        whole.push_str(before);
        whole.push_str(&text);
        whole.push_str("}}");
        whole
    }

    /// The `data` of a `result` or `confirmed` message's `ok` result.
    fn data_slot(&mut self) -> Option<&mut Option<Data>> {
        let result = match self {
            PageToAgent::Result(m) => &mut m.result,
            PageToAgent::Confirmed(m) => &mut m.result,
            PageToAgent::Manifest(_) | PageToAgent::Changed(_) => return None,
        };
        match result {
            ToolResult::Ok { data } => Some(data),
            _ => None,
        }
    }
}

impl AgentToPage {
    pub fn client_id(&self) -> &str {
        match self {
            AgentToPage::Call(m) => &m.client_id,
            AgentToPage::Describe(m) => &m.client_id,
            AgentToPage::Cancel(m) => &m.client_id,
        }
    }

    /// The message as JSON text.
    pub fn to_json(&self) -> String {
        to_json(self)
    }
}

/// A value as JSON text (serializing the crate's types cannot fail: every
/// map key is a string). Used for every JSON text the crate writes, so
/// serde_json's serializer is in the module once (`Value`'s `Display` would
/// be a second one).
pub(crate) fn to_json(value: &impl Serialize) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

/// A message type's direction and its allowed top-level properties (one
/// table for the type, direction and property checks of `inbound.rs`).
pub(crate) fn message_type(name: &str) -> Option<(Direction, &'static [&'static str])> {
    const TYPES: &[(&str, Direction, &[&str])] = &[
        (
            "manifest",
            Direction::ToAgent,
            &["protocol", "type", "clientId", "rev", "tools"],
        ),
        (
            "changed",
            Direction::ToAgent,
            &["protocol", "type", "clientId", "rev"],
        ),
        (
            "result",
            Direction::ToAgent,
            &["protocol", "type", "clientId", "id", "result"],
        ),
        (
            "confirmed",
            Direction::ToAgent,
            &["protocol", "type", "clientId", "confirmId", "result"],
        ),
        (
            "call",
            Direction::ToPage,
            &["protocol", "type", "clientId", "id", "rev", "tool", "input"],
        ),
        (
            "describe",
            Direction::ToPage,
            &["protocol", "type", "clientId", "id", "tool"],
        ),
        (
            "cancel",
            Direction::ToPage,
            &["protocol", "type", "clientId", "id"],
        ),
    ];
    for &(type_name, direction, known) in TYPES {
        if type_name == name {
            return Some((direction, known));
        }
    }
    None
}

/// A string field.
pub(crate) fn string(map: &Map<String, Value>, key: &str) -> Option<String> {
    map.get(key)?.as_str().map(str::to_owned)
}

/// A JSON Schema `integer` with `minimum: 0`: any finite number ≥ 0 without a
/// fractional part (so `7.0` counts); values past `u64::MAX` saturate.
pub(crate) fn non_negative_integer(value: &Value) -> Option<u64> {
    let number = value.as_number()?;
    if let Some(n) = number.as_u64() {
        return Some(n);
    }
    if number.is_i64() {
        return None; // a negative integer
    }
    let float = number.as_f64()?;
    if float >= 0.0 && crate::schema::is_whole(float) {
        // `as` saturates for floats beyond u64::MAX, which is what we want.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        Some(float as u64)
    } else {
        None
    }
}

/// A `rev` field.
pub(crate) fn rev(map: &Map<String, Value>, key: &str) -> Option<u64> {
    non_negative_integer(map.get(key)?)
}

/// An optional `rev` field: `Err` when present but not a revision.
pub(crate) fn opt_rev(map: &Map<String, Value>, key: &str) -> Result<Option<u64>, ()> {
    match map.get(key) {
        None => Ok(None),
        Some(value) => non_negative_integer(value).map(Some).ok_or(()),
    }
}

/// Builds a page → agent message from an object the schema accepted (plain
/// extraction; `None` only if it does not have the shape after all).
pub(crate) fn page_to_agent(map: &Map<String, Value>, message_type: &str) -> Option<PageToAgent> {
    let client_id = string(map, "clientId")?;
    let result = || ToolResult::from_value(map.get("result")?);
    Some(match message_type {
        "manifest" => PageToAgent::Manifest(Manifest {
            protocol: ProtocolV1,
            client_id,
            rev: rev(map, "rev")?,
            tools: list(map.get("tools")?, ToolManifestSummary::from_value)?,
        }),
        "changed" => PageToAgent::Changed(Changed {
            protocol: ProtocolV1,
            client_id,
            rev: rev(map, "rev")?,
        }),
        "result" => PageToAgent::Result(ResultMessage {
            protocol: ProtocolV1,
            client_id,
            id: string(map, "id")?,
            result: result()?,
        }),
        _ => PageToAgent::Confirmed(Confirmed {
            protocol: ProtocolV1,
            client_id,
            confirm_id: string(map, "confirmId")?,
            result: result()?,
        }),
    })
}

/// A field moved out of `map` (`null` left in its place).
fn take(map: &mut Map<String, Value>, key: &str) -> Option<Value> {
    map.get_mut(key).map(Value::take)
}

/// A string field moved out of `map`.
fn take_string(map: &mut Map<String, Value>, key: &str) -> Option<String> {
    match take(map, key)? {
        Value::String(text) => Some(text),
        _ => None,
    }
}

/// Builds an agent → page message from an object the schema accepted,
/// moving its fields out rather than copying them (an `input` may be a
/// megabyte).
pub(crate) fn agent_to_page(
    mut map: Map<String, Value>,
    message_type: &str,
) -> Option<AgentToPage> {
    let client_id = take_string(&mut map, "clientId")?;
    let id = take_string(&mut map, "id")?;
    Some(match message_type {
        "call" => {
            let tool = take_string(&mut map, "tool")?;
            let rev = opt_rev(&map, "rev").ok()?;
            let input = JsonText::of(&take(&mut map, "input")?);
            AgentToPage::Call(Call {
                protocol: ProtocolV1,
                client_id,
                id,
                rev,
                tool,
                input,
            })
        }
        "describe" => AgentToPage::Describe(Describe {
            protocol: ProtocolV1,
            client_id,
            id,
            tool: take_string(&mut map, "tool")?,
        }),
        _ => AgentToPage::Cancel(Cancel {
            protocol: ProtocolV1,
            client_id,
            id,
        }),
    })
}

/// Whether an agent → page object, its `protocol`, `type` and property
/// names already checked, has the rest of its published schema's shape:
/// `clientId`, `id` (and `tool`) non-empty strings, `input` present, `rev`
/// absent or a whole number of at least 0. A shortcut past the validator,
/// taken only when this says yes: it must accept nothing the schema
/// refuses (a no runs the validator, which says why).
pub(crate) fn agent_to_page_in_shape(map: &Map<String, Value>, message_type: &str) -> bool {
    let named = |key: &str| {
        map.get(key)
            .and_then(Value::as_str)
            .is_some_and(|s| !s.is_empty())
    };
    if !(named("clientId") && named("id")) {
        return false;
    }
    match message_type {
        "call" => named("tool") && map.contains_key("input") && opt_rev(map, "rev").is_ok(),
        "describe" => named("tool"),
        "cancel" => true,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_result_with_data_is_written_as_serde_json_writes_it() {
        let data = |text: &str| Some(Data::from_json(text.into()).expect("JSON"));
        let results = [
            ToolResult::Ok { data: None },
            ToolResult::Ok { data: data("null") },
            ToolResult::Ok {
                data: data(r#"{"a": [1, "\u00e9"], "b": {}}"#),
            },
            ToolResult::Ok {
                data: data("[[[]]]"),
            },
            ToolResult::Error {
                message: "Tool failed".into(),
            },
        ];
        for result in results {
            let messages = [
                PageToAgent::Result(ResultMessage {
                    protocol: ProtocolV1,
                    client_id: "c\"1".into(),
                    id: "id\u{1}\u{e9}".into(),
                    result: result.clone(),
                }),
                PageToAgent::Confirmed(Confirmed {
                    protocol: ProtocolV1,
                    client_id: "c1".into(),
                    confirm_id: "k\n".into(),
                    result,
                }),
            ];
            for message in messages {
                let text = message.to_json();
                assert_eq!(message.clone().into_json(), text);
                let parsed: Value = serde_json::from_str(&text).expect("JSON");
                assert_eq!(parsed, serde_json::to_value(&message).expect("JSON"));
                let (PageToAgent::Result(ResultMessage { result, .. })
                | PageToAgent::Confirmed(Confirmed { result, .. })) = &message
                else {
                    unreachable!()
                };
                if let ToolResult::Ok { data: Some(data) } = result {
                    // The data's text as it is, in one buffer of the exact size.
                    assert!(
                        text.ends_with(&format!(r#""data":{}}}}}"#, data.text())),
                        "{text}"
                    );
                    assert_eq!(text.capacity(), text.len(), "{text}");
                } else {
                    assert_eq!(text, serde_json::to_string(&message).expect("JSON"));
                }
            }
        }
    }

    #[test]
    fn a_rev_is_a_whole_number_of_at_least_0() {
        for (value, rev) in [
            (json!(7), Some(7)),
            (json!(7.0), Some(7)),
            (json!(0), Some(0)),
            (json!(1e300), Some(u64::MAX)),
            (json!(-1), None),
            (json!(-7.0), None),
            (json!(7.5), None),
            (json!("7"), None),
        ] {
            assert_eq!(non_negative_integer(&value), rev, "{value}");
        }
    }
}
