//! One Rust type per protocol message, in both directions.

use super::codes::Direction;
use super::manifest::ToolManifestSummary;
use super::result::ToolResult;
use crate::json::{
    is_whole, list, obj, write_array_of, write_key, write_str_member, write_u64_member, Map, Value,
};

/// `protocol: 1` as a JSON value's number.
const PROTOCOL: u8 = super::PROTOCOL_VERSION;

/// The `protocol` field: always the number 1.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ProtocolV1;

/// Page → agent: the tool list visible to caller `inapp`.
#[derive(Debug, Clone, PartialEq)]
pub struct Manifest {
    pub protocol: ProtocolV1,
    pub client_id: String,
    pub rev: u64,
    pub tools: Vec<ToolManifestSummary>,
}

/// Page → agent: the registry changed (`onChange: 'changed'` mode).
#[derive(Debug, Clone, PartialEq)]
pub struct Changed {
    pub protocol: ProtocolV1,
    pub client_id: String,
    pub rev: u64,
}

/// Page → agent: the one answer to a `call` or `describe`.
#[derive(Debug, Clone, PartialEq)]
pub struct ResultMessage {
    pub protocol: ProtocolV1,
    pub client_id: String,
    pub id: String,
    pub result: ToolResult,
}

/// Page → agent: the final outcome of a deferred confirmation.
#[derive(Debug, Clone, PartialEq)]
pub struct Confirmed {
    pub protocol: ProtocolV1,
    pub client_id: String,
    pub confirm_id: String,
    pub result: ToolResult,
}

/// Agent → page: run a tool as caller `inapp`.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    pub protocol: ProtocolV1,
    pub client_id: String,
    pub id: String,
    /// The manifest revision the agent saw, if it says.
    pub rev: Option<u64>,
    pub tool: String,
    pub input: Value,
}

/// Agent → page: fetch a tool's full manifest entry.
#[derive(Debug, Clone, PartialEq)]
pub struct Describe {
    pub protocol: ProtocolV1,
    pub client_id: String,
    pub id: String,
    pub tool: String,
}

/// Agent → page: abort the in-flight call `id` (never answered itself).
#[derive(Debug, Clone, PartialEq)]
pub struct Cancel {
    pub protocol: ProtocolV1,
    pub client_id: String,
    pub id: String,
}

/// Every page → agent message.
#[derive(Debug, Clone, PartialEq)]
pub enum PageToAgent {
    Manifest(Manifest),
    Changed(Changed),
    Result(ResultMessage),
    Confirmed(Confirmed),
}

/// Every agent → page message.
#[derive(Debug, Clone, PartialEq)]
pub enum AgentToPage {
    Call(Call),
    Describe(Describe),
    Cancel(Cancel),
}

impl PageToAgent {
    pub fn client_id(&self) -> &str {
        self.head().1
    }

    /// The message as JSON text, the wire shape: `type` first, fields in
    /// declaration order as camelCase, absent options left out (no `Value`
    /// built but the manifest entries').
    pub fn to_json(&self) -> String {
        let (message_type, client_id) = self.head();
        let mut out = String::from("{");
        write_str_member(&mut out, "type", message_type);
        write_u64_member(&mut out, "protocol", PROTOCOL.into());
        write_str_member(&mut out, "clientId", client_id);
        match self {
            PageToAgent::Manifest(m) => {
                write_u64_member(&mut out, "rev", m.rev);
                write_key(&mut out, "tools");
                write_array_of(&mut out, &m.tools, ToolManifestSummary::write_json);
            }
            PageToAgent::Changed(m) => write_u64_member(&mut out, "rev", m.rev),
            PageToAgent::Result(m) => {
                write_str_member(&mut out, "id", &m.id);
                write_key(&mut out, "result");
                m.result.write_json(&mut out);
            }
            PageToAgent::Confirmed(m) => {
                write_str_member(&mut out, "confirmId", &m.confirm_id);
                write_key(&mut out, "result");
                m.result.write_json(&mut out);
            }
        }
        out.push('}');
        out
    }

    /// The `type` and the `clientId`, which every message has.
    fn head(&self) -> (&'static str, &str) {
        match self {
            PageToAgent::Manifest(m) => ("manifest", &m.client_id),
            PageToAgent::Changed(m) => ("changed", &m.client_id),
            PageToAgent::Result(m) => ("result", &m.client_id),
            PageToAgent::Confirmed(m) => ("confirmed", &m.client_id),
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
        crate::json::to_text(&self.to_value())
    }

    /// The message as a JSON value: the wire shape (`type` first).
    pub fn to_value(&self) -> Value {
        match self {
            AgentToPage::Call(m) => {
                let mut entries = vec![
                    ("type", "call".into()),
                    ("protocol", PROTOCOL.into()),
                    ("clientId", m.client_id.as_str().into()),
                    ("id", m.id.as_str().into()),
                ];
                if let Some(rev) = m.rev {
                    entries.push(("rev", rev.into()));
                }
                entries.push(("tool", m.tool.as_str().into()));
                entries.push(("input", m.input.clone()));
                obj(entries)
            }
            AgentToPage::Describe(m) => obj(vec![
                ("type", "describe".into()),
                ("protocol", PROTOCOL.into()),
                ("clientId", m.client_id.as_str().into()),
                ("id", m.id.as_str().into()),
                ("tool", m.tool.as_str().into()),
            ]),
            AgentToPage::Cancel(m) => obj(vec![
                ("type", "cancel".into()),
                ("protocol", PROTOCOL.into()),
                ("clientId", m.client_id.as_str().into()),
                ("id", m.id.as_str().into()),
            ]),
        }
    }
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
pub(crate) fn string(map: &Map, key: &str) -> Option<String> {
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
    if float >= 0.0 && is_whole(float) {
        // `as` saturates for floats beyond u64::MAX, which is what we want.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        Some(float as u64)
    } else {
        None
    }
}

/// A `rev` field.
pub(crate) fn rev(map: &Map, key: &str) -> Option<u64> {
    non_negative_integer(map.get(key)?)
}

/// An optional `rev` field: `Err` when present but not a revision.
pub(crate) fn opt_rev(map: &Map, key: &str) -> Result<Option<u64>, ()> {
    match map.get(key) {
        None => Ok(None),
        Some(value) => non_negative_integer(value).map(Some).ok_or(()),
    }
}

/// Builds a page → agent message from an object the schema accepted (plain
/// extraction; `None` only if it does not have the shape after all).
pub(crate) fn page_to_agent(map: &Map, message_type: &str) -> Option<PageToAgent> {
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

/// Builds an agent → page message from an object the schema accepted. The
/// fields are looked up before anything is copied, so a missing one drops
/// nothing on its way out.
pub(crate) fn agent_to_page(map: &Map, message_type: &str) -> Option<AgentToPage> {
    let str_field = |key: &str| map.get(key)?.as_str();
    let client_id = str_field("clientId")?;
    let id = str_field("id")?;
    Some(match message_type {
        "call" => {
            let rev = opt_rev(map, "rev").ok()?;
            let tool = str_field("tool")?;
            let input = map.get("input")?;
            AgentToPage::Call(Call {
                protocol: ProtocolV1,
                client_id: client_id.into(),
                id: id.into(),
                rev,
                tool: tool.into(),
                input: input.clone(),
            })
        }
        "describe" => {
            let tool = str_field("tool")?;
            AgentToPage::Describe(Describe {
                protocol: ProtocolV1,
                client_id: client_id.into(),
                id: id.into(),
                tool: tool.into(),
            })
        }
        _ => AgentToPage::Cancel(Cancel {
            protocol: ProtocolV1,
            client_id: client_id.into(),
            id: id.into(),
        }),
    })
}
