//! Protocol v1 messages as the server sees them: page → agent messages
//! parsed from hostile text, agent → page messages built for sending.

use serde_json::{json, Map, Value};

/// Largest inbound frame the server reads (the page's own default limit).
pub const MAX_INBOUND_BYTES: usize = 1_048_576;
/// Longest id (clientId, call id, confirmId) the server accepts from a page.
const MAX_ID_CHARS: usize = 256;

/// One entry of a page's summary manifest, as far as the server uses it.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolSummary {
    pub name: String,
    pub description: String,
    pub read_only: bool,
    pub consequential: bool,
    pub destructive: bool,
    pub untrusted_content: bool,
}

/// The latest manifest a page sent.
#[derive(Clone, Debug, PartialEq)]
pub struct Manifest {
    pub rev: u64,
    pub tools: Vec<ToolSummary>,
}

impl Manifest {
    pub fn tool(&self, name: &str) -> Option<&ToolSummary> {
        self.tools.iter().find(|tool| tool.name == name)
    }
}

/// A page → agent message that passed the server's checks.
#[derive(Clone, Debug, PartialEq)]
pub enum Inbound {
    Manifest {
        client_id: String,
        manifest: Manifest,
    },
    Changed {
        client_id: String,
        rev: u64,
    },
    Result {
        client_id: String,
        id: String,
        result: Value,
    },
    Confirmed {
        client_id: String,
        confirm_id: String,
        result: Value,
    },
}

impl Inbound {
    pub fn client_id(&self) -> &str {
        match self {
            Inbound::Manifest { client_id, .. }
            | Inbound::Changed { client_id, .. }
            | Inbound::Result { client_id, .. }
            | Inbound::Confirmed { client_id, .. } => client_id,
        }
    }
}

/// Parses one inbound frame. Top-level messages are strict (unknown
/// properties reject the message); manifest entries and hints are open.
pub fn parse_inbound(text: &str) -> Result<Inbound, &'static str> {
    if text.len() > MAX_INBOUND_BYTES {
        return Err("message too large");
    }
    let value: Value = serde_json::from_str(text).map_err(|_| "not JSON")?;
    let Value::Object(object) = value else {
        return Err("not an object");
    };
    if object.get("protocol").and_then(Value::as_u64) != Some(1) {
        return Err("unsupported protocol");
    }
    let kind = object
        .get("type")
        .and_then(Value::as_str)
        .ok_or("missing type")?;
    let allowed: &[&str] = match kind {
        "manifest" => &["protocol", "type", "clientId", "rev", "tools"],
        "changed" => &["protocol", "type", "clientId", "rev"],
        "result" => &["protocol", "type", "clientId", "id", "result"],
        "confirmed" => &["protocol", "type", "clientId", "confirmId", "result"],
        _ => return Err("unknown type"),
    };
    if object.keys().any(|key| !allowed.contains(&key.as_str())) {
        return Err("unknown property");
    }
    let client_id = id_field(&object, "clientId")?;
    match kind {
        "manifest" => {
            let rev = rev_field(&object)?;
            let entries = object
                .get("tools")
                .and_then(Value::as_array)
                .ok_or("tools is not an array")?;
            let tools = entries
                .iter()
                .map(tool_summary)
                .collect::<Result<Vec<_>, _>>()?;
            Ok(Inbound::Manifest {
                client_id,
                manifest: Manifest { rev, tools },
            })
        }
        "changed" => Ok(Inbound::Changed {
            client_id,
            rev: rev_field(&object)?,
        }),
        "result" => Ok(Inbound::Result {
            client_id,
            id: id_field(&object, "id")?,
            result: tool_result(&object)?,
        }),
        _ => Ok(Inbound::Confirmed {
            client_id,
            confirm_id: id_field(&object, "confirmId")?,
            result: tool_result(&object)?,
        }),
    }
}

fn id_field(object: &Map<String, Value>, key: &str) -> Result<String, &'static str> {
    match object.get(key).and_then(Value::as_str) {
        Some(id) if !id.is_empty() && id.chars().count() <= MAX_ID_CHARS => Ok(id.to_owned()),
        _ => Err("bad id"),
    }
}

fn rev_field(object: &Map<String, Value>) -> Result<u64, &'static str> {
    object.get("rev").and_then(Value::as_u64).ok_or("bad rev")
}

fn tool_summary(entry: &Value) -> Result<ToolSummary, &'static str> {
    let name = entry
        .get("name")
        .and_then(Value::as_str)
        .filter(|name| valid_tool_name(name))
        .ok_or("bad tool name")?;
    let description = entry
        .get("description")
        .and_then(Value::as_str)
        .ok_or("bad tool description")?;
    let hints = entry
        .get("hints")
        .and_then(Value::as_object)
        .ok_or("bad hints")?;
    let hint = |key: &str| hints.get(key).and_then(Value::as_bool).unwrap_or(false);
    Ok(ToolSummary {
        name: name.to_owned(),
        description: description.to_owned(),
        read_only: hint("readOnly"),
        consequential: hint("consequential"),
        destructive: hint("destructive"),
        untrusted_content: hint("untrustedContent"),
    })
}

/// `^[A-Za-z0-9_.-]{1,128}$`
pub fn valid_tool_name(name: &str) -> bool {
    (1..=128).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}

const STATUSES: [&str; 6] = [
    "ok",
    "invalid",
    "refused",
    "needs_confirmation",
    "cancelled",
    "error",
];

fn tool_result(object: &Map<String, Value>) -> Result<Value, &'static str> {
    let result = object.get("result").ok_or("missing result")?;
    let status = result
        .get("status")
        .and_then(Value::as_str)
        .ok_or("result without status")?;
    if !STATUSES.contains(&status) {
        return Err("unknown result status");
    }
    if status == "needs_confirmation" {
        match result.get("confirmId").and_then(Value::as_str) {
            Some(id) if !id.is_empty() && id.chars().count() <= MAX_ID_CHARS => {}
            _ => return Err("bad confirmId"),
        }
    }
    Ok(result.clone())
}

/// The result's `status`, or "" for a value without one.
pub fn status(result: &Value) -> &str {
    result.get("status").and_then(Value::as_str).unwrap_or("")
}

pub fn call_message(
    client_id: &str,
    id: &str,
    rev: Option<u64>,
    tool: &str,
    input: &Value,
) -> String {
    let mut message = json!({ "protocol": 1, "type": "call", "clientId": client_id, "id": id });
    if let (Some(rev), Some(object)) = (rev, message.as_object_mut()) {
        object.insert("rev".into(), rev.into());
    }
    if let Some(object) = message.as_object_mut() {
        object.insert("tool".into(), tool.into());
        object.insert("input".into(), input.clone());
    }
    message.to_string()
}

pub fn describe_message(client_id: &str, id: &str, tool: &str) -> String {
    json!({ "protocol": 1, "type": "describe", "clientId": client_id, "id": id, "tool": tool })
        .to_string()
}

pub fn cancel_message(client_id: &str, id: &str) -> String {
    json!({ "protocol": 1, "type": "cancel", "clientId": client_id, "id": id }).to_string()
}

/// A fresh call id: a v4 UUID from the OS random generator (122 random bits).
pub fn new_id() -> String {
    uuid::Uuid::new_v4().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strict_top_level_open_entries() {
        let ok = r#"{"protocol":1,"type":"manifest","clientId":"c","rev":2,"tools":[{"name":"signup.fill","llmName":"signup__fill","description":"Fill","hints":{"untrustedContent":true},"future":1}]}"#;
        let Ok(Inbound::Manifest { manifest, .. }) = parse_inbound(ok) else {
            panic!("manifest rejected");
        };
        assert_eq!(manifest.rev, 2);
        assert!(manifest.tools[0].untrusted_content);
        let extra = r#"{"protocol":1,"type":"changed","clientId":"c","rev":2,"x":1}"#;
        assert_eq!(parse_inbound(extra), Err("unknown property"));
        let v2 = r#"{"protocol":2,"type":"changed","clientId":"c","rev":2}"#;
        assert_eq!(parse_inbound(v2), Err("unsupported protocol"));
        let bad_status = r#"{"protocol":1,"type":"result","clientId":"c","id":"i","result":{"status":"timeout"}}"#;
        assert_eq!(parse_inbound(bad_status), Err("unknown result status"));
        let no_confirm_id = r#"{"protocol":1,"type":"result","clientId":"c","id":"i","result":{"status":"needs_confirmation"}}"#;
        assert_eq!(parse_inbound(no_confirm_id), Err("bad confirmId"));
    }

    #[test]
    fn call_ids_are_v4_uuids() {
        let id = uuid::Uuid::parse_str(&new_id()).expect("uuid");
        assert_eq!(id.get_version_num(), 4);
        assert_ne!(new_id(), new_id());
    }

    #[test]
    fn outbound_messages() {
        assert_eq!(
            call_message("c", "i", Some(3), "signup.fill", &json!({})),
            r#"{"protocol":1,"type":"call","clientId":"c","id":"i","rev":3,"tool":"signup.fill","input":{}}"#
        );
        assert_eq!(
            cancel_message("c", "i"),
            r#"{"protocol":1,"type":"cancel","clientId":"c","id":"i"}"#
        );
    }
}
