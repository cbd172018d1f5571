//! One Rust type per protocol message, in both directions.

use super::check::{Checker, Obj};
use super::manifest::ToolManifestSummary;
use super::result::ToolResult;
use crate::json::{obj, Value};
use crate::prelude::*;

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
        match self {
            PageToAgent::Manifest(m) => &m.client_id,
            PageToAgent::Changed(m) => &m.client_id,
            PageToAgent::Result(m) => &m.client_id,
            PageToAgent::Confirmed(m) => &m.client_id,
        }
    }

    /// The message as JSON text.
    pub fn to_json(&self) -> String {
        crate::json::to_text(&self.to_value())
    }

    /// The message as a JSON value: the wire shape (`type` first, fields
    /// in declaration order as camelCase, absent options left out).
    pub fn to_value(&self) -> Value {
        let tools = |tools: &[ToolManifestSummary]| {
            Value::Array(tools.iter().map(ToolManifestSummary::to_value).collect())
        };
        match self {
            PageToAgent::Manifest(m) => obj(vec![
                ("type", "manifest".into()),
                ("protocol", PROTOCOL.into()),
                ("clientId", m.client_id.as_str().into()),
                ("rev", m.rev.into()),
                ("tools", tools(&m.tools)),
            ]),
            PageToAgent::Changed(m) => obj(vec![
                ("type", "changed".into()),
                ("protocol", PROTOCOL.into()),
                ("clientId", m.client_id.as_str().into()),
                ("rev", m.rev.into()),
            ]),
            PageToAgent::Result(m) => obj(vec![
                ("type", "result".into()),
                ("protocol", PROTOCOL.into()),
                ("clientId", m.client_id.as_str().into()),
                ("id", m.id.as_str().into()),
                ("result", m.result.to_value()),
            ]),
            PageToAgent::Confirmed(m) => obj(vec![
                ("type", "confirmed".into()),
                ("protocol", PROTOCOL.into()),
                ("clientId", m.client_id.as_str().into()),
                ("confirmId", m.confirm_id.as_str().into()),
                ("result", m.result.to_value()),
            ]),
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

/// The top-level properties allowed for each message type.
pub(crate) fn known_keys(message_type: &str) -> &'static [&'static str] {
    match message_type {
        "manifest" => &["protocol", "type", "clientId", "rev", "tools"],
        "changed" => &["protocol", "type", "clientId", "rev"],
        "result" => &["protocol", "type", "clientId", "id", "result"],
        "confirmed" => &["protocol", "type", "clientId", "confirmId", "result"],
        "call" => &["protocol", "type", "clientId", "id", "rev", "tool", "input"],
        "describe" => &["protocol", "type", "clientId", "id", "tool"],
        "cancel" => &["protocol", "type", "clientId", "id"],
        _ => &[],
    }
}

/// Checks the fields of an object already known to carry `protocol: 1`, a
/// page → agent `type` and no unknown property.
pub(crate) fn check_page_to_agent(
    obj: &Obj<'_>,
    message_type: &str,
    c: &mut Checker,
) -> Option<PageToAgent> {
    let client_id = obj.string("clientId", true, c);
    let message = match message_type {
        "manifest" => {
            let rev = obj.rev("rev", c);
            let tools = obj.array("tools", c).map(|tools| {
                tools
                    .iter()
                    .enumerate()
                    .filter_map(|(i, tool)| {
                        ToolManifestSummary::check(tool, &format!("tools.{i}"), c)
                    })
                    .collect::<Vec<_>>()
            });
            PageToAgent::Manifest(Manifest {
                protocol: ProtocolV1,
                client_id: client_id?,
                rev: rev?,
                tools: tools?,
            })
        }
        "changed" => {
            let rev = obj.rev("rev", c);
            PageToAgent::Changed(Changed {
                protocol: ProtocolV1,
                client_id: client_id?,
                rev: rev?,
            })
        }
        "result" => {
            let id = obj.string("id", true, c);
            let result = obj
                .any("result", c)
                .and_then(|r| ToolResult::check(r, "result", c));
            PageToAgent::Result(ResultMessage {
                protocol: ProtocolV1,
                client_id: client_id?,
                id: id?,
                result: result?,
            })
        }
        _ => {
            let confirm_id = obj.string("confirmId", true, c);
            let result = obj
                .any("result", c)
                .and_then(|r| ToolResult::check(r, "result", c));
            PageToAgent::Confirmed(Confirmed {
                protocol: ProtocolV1,
                client_id: client_id?,
                confirm_id: confirm_id?,
                result: result?,
            })
        }
    };
    Some(message)
}

/// Checks the fields of an object already known to carry `protocol: 1`, an
/// agent → page `type` and no unknown property.
pub(crate) fn check_agent_to_page(
    obj: &Obj<'_>,
    message_type: &str,
    c: &mut Checker,
) -> Option<AgentToPage> {
    let client_id = obj.string("clientId", true, c);
    let id = obj.string("id", true, c);
    let message = match message_type {
        "call" => {
            let rev = obj.opt_rev("rev", c);
            let tool = obj.string("tool", true, c);
            let input = obj.any("input", c);
            AgentToPage::Call(Call {
                protocol: ProtocolV1,
                client_id: client_id?,
                id: id?,
                rev: rev.ok()?,
                tool: tool?,
                input: input?.clone(),
            })
        }
        "describe" => {
            let tool = obj.string("tool", true, c);
            AgentToPage::Describe(Describe {
                protocol: ProtocolV1,
                client_id: client_id?,
                id: id?,
                tool: tool?,
            })
        }
        _ => AgentToPage::Cancel(Cancel {
            protocol: ProtocolV1,
            client_id: client_id?,
            id: id?,
        }),
    };
    Some(message)
}
