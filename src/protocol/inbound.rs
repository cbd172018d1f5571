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
//!
//! An agent → page text ([`parse_for_page`], [`parse_agent_to_page`]) is
//! first read by serde property by property into its message type (no
//! `Value` map for the message itself, each property's value one `Value`);
//! that reading accepts only a message the steps above would accept as it
//! is. Anything else — a wrong field, a duplicate key, a
//! `rev` of `7.0`, text that is not JSON — takes steps 3–7 on a `Value`,
//! which decide and say why.

use crate::prelude::*;
use serde::de::{self, DeserializeSeed, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value};

use super::codes::Direction;
use super::json_text::{member_text, Checked, CheckedVisitor};
use super::message::{self, AgentToPage, Call, Cancel, Describe, PageToAgent, ProtocolV1};
use super::result::Issue;
use super::validation::{issues, Slot};
use crate::json_value::string_end;

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
    /// Longer than the limit in UTF-16 units, so at least as many UTF-8
    /// bytes: refused unread (the bytes are never counted).
    TooLong {
        units: usize,
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
            Rejection::TooLong { units, limit } => {
                write!(
                    f,
                    "message of at least {units} bytes exceeds maxMessageBytes {limit}"
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

/// Steps 1–2: size and depth.
fn check_bounds(text: &str, max_message_bytes: usize) -> Result<(), Rejection> {
    if text.len() > max_message_bytes {
        return Err(Rejection::TooLarge {
            bytes: text.len(),
            limit: max_message_bytes,
        });
    }
    if nesting_exceeds(text.as_bytes(), MAX_DEPTH) {
        return Err(Rejection::TooDeep { limit: MAX_DEPTH });
    }
    Ok(())
}

/// Steps 1–3: size, depth, JSON.
pub fn parse_json(text: &str, max_message_bytes: usize) -> Result<Value, Rejection> {
    check_bounds(text, max_message_bytes)?;
    parse_value(text)
}

/// The properties an agent → page message may have, in [`Wire`]'s order
/// (`input` last: it is read as text, the others as `Value`s).
const PROPERTIES: [&str; 7] = ["protocol", "type", "clientId", "id", "tool", "rev", "input"];
const INPUT: usize = 6;

/// An agent → page message's properties as read, each `None` when absent
/// (all of them for a text that is not an object); `odd` when it repeats a
/// property or has one not in [`PROPERTIES`].
///
/// Read by hand rather than by `#[derive(Deserialize)]` on typed fields:
/// the derived reading makes serde_json build its type-mismatch errors,
/// whose texts format floats, and that made the shipped module 31 KB
/// larger (381263 → 412622 bytes after wasm-opt). Here every value is
/// read as a [`Scalar`], and nothing is refused by an error (an error's
/// text is parsed for its position: 2.5 KB more): an odd message is read
/// to its end and marked. `input` is read and checked as `Value`'s reading
/// would, but never built: the call keeps its text (see
/// [`super::JsonText`]).
#[derive(Default)]
struct Wire {
    values: [Option<Scalar>; INPUT],
    input: bool,
    odd: bool,
}

/// A property of [`Wire`] other than `input`: a string, a non-negative
/// integer, or any other value (read to its end and checked as `Value`'s
/// reading would, [`Checked`], and not kept), which leaves the message to
/// steps 3–7. Not a `Value`: the registry's module then needs no
/// `Value` reading of serde_json's beside its own (`json_value`).
enum Scalar {
    Text(String),
    Count(u64),
    Other,
}

impl<'de> Deserialize<'de> for Scalar {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ScalarVisitor)
    }
}

struct ScalarVisitor;

impl<'de> Visitor<'de> for ScalarVisitor {
    type Value = Scalar;

    fn expecting(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<Scalar, E> {
        Ok(Scalar::Text(text.to_owned()))
    }
    fn visit_u64<E: de::Error>(self, count: u64) -> Result<Scalar, E> {
        Ok(Scalar::Count(count))
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Scalar, E> {
        Ok(Scalar::Other)
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Scalar, E> {
        Ok(Scalar::Other)
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Scalar, E> {
        Ok(Scalar::Other)
    }
    fn visit_unit<E: de::Error>(self) -> Result<Scalar, E> {
        Ok(Scalar::Other)
    }
    fn visit_seq<A: de::SeqAccess<'de>>(self, seq: A) -> Result<Scalar, A::Error> {
        CheckedVisitor.visit_seq(seq).map(|_| Scalar::Other)
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Scalar, A::Error> {
        CheckedVisitor.visit_map(map).map(|_| Scalar::Other)
    }
}

/// Which of [`PROPERTIES`] a key names, if any.
struct PropertyName;

impl<'de> DeserializeSeed<'de> for PropertyName {
    type Value = Option<usize>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Option<usize>, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl Visitor<'_> for PropertyName {
    type Value = Option<usize>;

    fn expecting(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("a property name")
    }

    fn visit_str<E: de::Error>(self, key: &str) -> Result<Option<usize>, E> {
        Ok(PROPERTIES.iter().position(|name| *name == key))
    }
}

struct WireVisitor;

impl<'de> Visitor<'de> for WireVisitor {
    type Value = Wire;

    fn expecting(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("an agent → page message")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Wire, A::Error> {
        let mut wire = Wire::default();
        while let Some(index) = map.next_key_seed(PropertyName)? {
            if index == Some(INPUT) {
                map.next_value::<Checked>()?;
                wire.odd |= core::mem::replace(&mut wire.input, true);
                continue;
            }
            let value = map.next_value::<Scalar>()?;
            match index.and_then(|i| wire.values.get_mut(i)) {
                Some(slot @ None) => *slot = Some(value),
                _ => wire.odd = true,
            }
        }
        Ok(wire)
    }

    // The rest have no properties, so they are no message; said without
    // serde's default error (which describes the value it got, floats
    // included). An array's items are left unread, which serde_json then
    // refuses as it would any unread input.
    fn visit_bool<E>(self, _: bool) -> Result<Wire, E> {
        Ok(Wire::default())
    }
    fn visit_i64<E>(self, _: i64) -> Result<Wire, E> {
        Ok(Wire::default())
    }
    fn visit_u64<E>(self, _: u64) -> Result<Wire, E> {
        Ok(Wire::default())
    }
    fn visit_f64<E>(self, _: f64) -> Result<Wire, E> {
        Ok(Wire::default())
    }
    fn visit_str<E>(self, _: &str) -> Result<Wire, E> {
        Ok(Wire::default())
    }
    fn visit_unit<E>(self) -> Result<Wire, E> {
        Ok(Wire::default())
    }
    fn visit_seq<A: de::SeqAccess<'de>>(self, _: A) -> Result<Wire, A::Error> {
        Ok(Wire::default())
    }
}

impl<'de> Deserialize<'de> for Wire {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(WireVisitor)
    }
}

/// The message `text` holds when it reads whole into [`Wire`] and has its
/// type's fields and no other, in the shape `agent_to_page_in_shape` asks
/// for, `protocol` and `rev` written as integers: what steps 3–7 would
/// build from it. `None` leaves the verdict to them.
fn read_agent_to_page(text: &str) -> Option<AgentToPage> {
    let Wire {
        values: [protocol, kind, client_id, id, tool, rev],
        input,
        odd: false,
    } = serde_json::from_str(text).ok()?
    else {
        return None;
    };
    if !matches!(protocol?, Scalar::Count(version) if version == u64::from(super::PROTOCOL_VERSION))
    {
        return None;
    }
    let named = |value: Option<Scalar>| match value {
        Some(Scalar::Text(text)) if !text.is_empty() => Some(text),
        _ => None,
    };
    let (client_id, id) = (named(client_id)?, named(id)?);
    let Scalar::Text(kind) = kind? else {
        return None;
    };
    Some(match (kind.as_str(), rev, input) {
        ("call", rev, true) => AgentToPage::Call(Call {
            protocol: ProtocolV1,
            client_id,
            id,
            rev: match rev {
                None => None,
                Some(Scalar::Count(rev)) => Some(rev),
                Some(_) => return None,
            },
            tool: named(tool)?,
            // `None` for a key written with escapes: the steps on a `Value` take it.
            input: member_text(text, "input")?,
        }),
        ("describe", None, false) => AgentToPage::Describe(Describe {
            protocol: ProtocolV1,
            client_id,
            id,
            tool: named(tool)?,
        }),
        ("cancel", None, false) if tool.is_none() => AgentToPage::Cancel(Cancel {
            protocol: ProtocolV1,
            client_id,
            id,
        }),
        _ => return None,
    })
}

/// Step 3 alone: JSON text to a value, parsed once by serde_json, with no
/// size or depth limit of ours (serde_json still refuses nesting past 127).
/// A lone surrogate escape (`\ud800`: JavaScript strings may hold one, and
/// `JSON.stringify` writes it so) is malformed, as serde_json has it.
pub fn parse_value(text: &str) -> Result<Value, Rejection> {
    crate::json_value::parse(text).map_err(|error| Rejection::Malformed {
        reason: error.to_string(),
    })
}

/// Whether `text` is JSON by serde_json's syntax, read without building a
/// value (serde's `IgnoredAny`), or nests deeper than [`MAX_DEPTH`]
/// (serde_json gives up past 127 levels; the bridge reports those as
/// `invalid_message`).
pub fn is_json_text(text: &str) -> bool {
    serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok()
        || nesting_exceeds(text.as_bytes(), MAX_DEPTH)
}

/// True when arrays/objects nest deeper than `max` (strings are skipped).
/// A flat scan: hostile input cannot grow the stack.
pub fn nesting_exceeds(bytes: &[u8], max: usize) -> bool {
    let mut depth = 0usize;
    let mut at = 0;
    while let Some(&byte) = bytes.get(at) {
        match byte {
            // A string that runs to the end holds the rest: nothing nests.
            b'"' => match string_end(bytes, at) {
                Some(end) => at = end,
                None => return false,
            },
            b'{' | b'[' => {
                depth += 1;
                if depth > max {
                    return true;
                }
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
        at += 1;
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

/// Steps 4–7 (step 7 by the published schema of `direction`, `schema`'s):
/// the message's object and `type` when it is valid. The caller names the
/// schema, so a module that checks one direction carries only its schema.
fn check_message(
    value: &Value,
    direction: Direction,
    schema: Slot,
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
    // validator's run.
    if direction == Direction::ToPage && message::agent_to_page_in_shape(map, message_type) {
        return Ok((map, message_type));
    }
    let issues = issues(schema, value);
    if !issues.is_empty() {
        return Err(Rejection::Invalid { issues });
    }
    Ok((map, message_type))
}

/// Steps 4–7 for agent → page messages. The message is made of `value`'s
/// own fields (its `input` is not copied).
pub fn check_agent_to_page(value: Value) -> Result<AgentToPage, Rejection> {
    // The three agent → page types, as the check found them.
    let message_type = match check_message(&value, Direction::ToPage, Slot::TO_PAGE)?.1 {
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
    let (map, message_type) = check_message(value, Direction::ToAgent, Slot::TO_AGENT)?;
    message::page_to_agent(map, message_type).ok_or_else(|| invalid("", "invalid message"))
}

/// All steps for an agent → page message given as text.
pub fn parse_agent_to_page(text: &str, max_message_bytes: usize) -> Result<AgentToPage, Rejection> {
    check_bounds(text, max_message_bytes)?;
    match read_agent_to_page(text) {
        Some(message) => Ok(message),
        None => check_agent_to_page(parse_value(text)?),
    }
}

/// All steps for an agent → page text arriving at the page whose id is
/// `client_id`, with rule 1 between steps 3 and 4: `Ok(None)` for a message
/// carrying another page's string `clientId`, ignored silently.
pub fn parse_for_page(
    text: &str,
    max_message_bytes: usize,
    client_id: &str,
) -> Result<Option<AgentToPage>, Rejection> {
    check_bounds(text, max_message_bytes)?;
    if let Some(message) = read_agent_to_page(text) {
        return Ok((message.client_id() == client_id).then_some(message));
    }
    let value = parse_value(text)?;
    if peek_client_id(&value).is_some_and(|id| id != client_id) {
        return Ok(None);
    }
    check_agent_to_page(value).map(Some)
}

/// All steps for a page → agent message given as text.
pub fn parse_page_to_agent(text: &str, max_message_bytes: usize) -> Result<PageToAgent, Rejection> {
    check_page_to_agent(&parse_json(text, max_message_bytes)?)
}

/// `validateMessage`: does `value` match the published schema of `direction`?
pub fn validate(value: &Value, direction: Direction) -> Result<(), Vec<Issue>> {
    let schema = match direction {
        Direction::ToPage => Slot::TO_PAGE,
        Direction::ToAgent => Slot::TO_AGENT,
    };
    check_message(value, direction, schema)
        .map(|_| ())
        .map_err(|rejection| rejection.issues())
}

/// `validateMessage`'s refusal of a direction other than `'toPage'` and
/// `'toAgent'`.
pub const BAD_DIRECTION: &str = "validateMessage: direction must be 'toPage' or 'toAgent'";

/// The longest JSON text `validateMessage` reads, in UTF-8 bytes: the
/// value it builds takes several times the text's size in the module's
/// memory, which cannot grow past 4 GiB (running out traps the module).
pub const MAX_VALIDATED_BYTES: usize = 16 << 20;

/// The deepest nesting `validateMessage` reads: serde_json's limit.
pub const MAX_VALIDATED_DEPTH: usize = 127;

/// A value `validateMessage` is handed, as `JSON.stringify` writes it: the
/// value is judged as it would travel.
#[derive(Debug, Clone, Copy)]
pub enum Written<'a> {
    /// Its JSON text.
    Text(&'a str),
    /// `JSON.stringify` threw (a BigInt, a cycle): the error's message.
    Threw(&'a str),
    /// `JSON.stringify` wrote nothing (`undefined`, a function, a symbol).
    Nothing,
    /// A text longer than [`MAX_VALIDATED_BYTES`] (seen from its length in
    /// UTF-16 units, each at least a byte), not copied into the module.
    TooLong,
}

/// Whether `validateMessage` reads a JSON text of `units` UTF-16 units;
/// if not, it is [`Written::TooLong`].
pub fn validation_reads(units: usize) -> bool {
    units <= MAX_VALIDATED_BYTES
}

/// The `\uXXXX` escape at `at`, when it is one of a surrogate.
fn surrogate_escape(bytes: &[u8], at: usize) -> Option<u16> {
    if bytes.get(at..at + 2)? != b"\\u" {
        return None;
    }
    let mut unit = 0u16;
    for &digit in bytes.get(at + 2..at + 6)? {
        unit = unit << 4 | u16::try_from(char::from(digit).to_digit(16)?).ok()?;
    }
    (0xD800..=0xDFFF).contains(&unit).then_some(unit)
}

/// `text` with each lone surrogate escape (`"\ud83c"`, as `JSON.stringify`
/// writes half a pair, which serde_json refuses) written `\ufffd`; `None`
/// when it has none. The published schemas constrain strings only by ASCII
/// patterns, `const`s and `minLength`, which tell neither apart from the
/// other, so the verdict stays theirs.
fn lone_surrogates_replaced(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out: Option<String> = None;
    let (mut at, mut copied) = (0, 0);
    while let Some(&byte) = bytes.get(at) {
        if byte != b'\\' {
            at += 1;
            continue;
        }
        match surrogate_escape(bytes, at) {
            Some(0xD800..=0xDBFF)
                if matches!(surrogate_escape(bytes, at + 6), Some(0xDC00..=0xDFFF)) =>
            {
                at += 12;
            }
            Some(_) => {
                let out = out.get_or_insert_with(|| String::with_capacity(text.len()));
                out.push_str(text.get(copied..at)?);
                out.push_str("\\ufffd");
                at += 6;
                copied = at;
            }
            // Any other escape: the escaped character skipped with it.
            None => at += 2,
        }
    }
    let mut out = out?;
    out.push_str(text.get(copied..)?);
    Some(out)
}

/// `validateMessage` on a value as JSON writes it: its text when it
/// matches the published schema of `direction`, else its issues.
pub fn validate_written(written: Written<'_>, direction: Direction) -> Result<&str, Vec<Issue>> {
    let not_json = |message: String| {
        vec![Issue {
            path: String::new(),
            message,
        }]
    };
    let text = match written {
        Written::Text(text) => text,
        Written::Threw(reason) => return Err(not_json(format!("must be JSON: {reason}"))),
        Written::Nothing => return Err(not_json("must be object".into())),
        Written::TooLong => return Err(not_json(too_long())),
    };
    if text.len() > MAX_VALIDATED_BYTES {
        return Err(not_json(too_long()));
    }
    if nesting_exceeds(text.as_bytes(), MAX_VALIDATED_DEPTH) {
        return Err(not_json(format!(
            "nested deeper than {MAX_VALIDATED_DEPTH}: not validated"
        )));
    }
    let replaced = lone_surrogates_replaced(text);
    let value =
        parse_value(replaced.as_deref().unwrap_or(text)).map_err(|rejection| rejection.issues())?;
    validate(&value, direction).map(|()| text)
}

fn too_long() -> String {
    format!("longer than {MAX_VALIDATED_BYTES} bytes of JSON: not validated")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Every message of `message_type` whose `fields` each take one of
    /// `values` (`None`: the field absent), `protocol` 1.
    fn combinations<'a>(
        message_type: &'a str,
        fields: &'a [&str],
        values: &'a [Option<Value>],
    ) -> impl Iterator<Item = Map<String, Value>> + 'a {
        let count = values.len().pow(u32::try_from(fields.len()).unwrap_or(0));
        (0..count).map(move |mut n| {
            let mut map = Map::new();
            map.insert("protocol".into(), json!(1));
            map.insert("type".into(), json!(message_type));
            for field in fields {
                if let Some(value) = &values[n % values.len()] {
                    map.insert((*field).into(), value.clone());
                }
                n /= values.len();
            }
            map
        })
    }

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
            for map in combinations(message_type, fields, &values) {
                let in_shape = message::agent_to_page_in_shape(&map, message_type);
                let by_schema = issues(Slot::TO_PAGE, &Value::Object(map.clone())).is_empty();
                assert!(!in_shape || by_schema, "shortcut accepts {map:?}");
                assert_eq!(in_shape, by_schema, "{map:?}");
                shortcut += usize::from(in_shape);
                valid += usize::from(by_schema);
            }
        }
        assert_eq!(shortcut, valid);
        assert!(valid > 0);
    }

    /// The direct reading builds exactly what the `Value` path builds, or
    /// leaves the message to it: every combination of the shortcut test's
    /// field values, plus the properties a message type must not have.
    #[test]
    fn the_direct_reading_builds_what_the_value_path_builds() {
        let values = [
            None,
            Some(json!("")),
            Some(json!("x")),
            Some(json!(7.0)),
            Some(json!(-1)),
            Some(json!(1e300)),
            Some(Value::Null),
            Some(json!({"a": [0, "\u{e9}"]})),
        ];
        let (mut read, mut valid) = (0, 0);
        let fields = ["clientId", "id", "rev", "tool", "input"];
        for message_type in ["call", "describe", "cancel", "result"] {
            for map in combinations(message_type, &fields, &values) {
                let text = Value::Object(map.clone()).to_string();
                // A `rev` written as a float (`7.0`, `1e300`) is the one
                // valid field the direct reading leaves to the `Value` path.
                let float_rev = map.get("rev").is_some_and(Value::is_f64);
                let by_value = check_agent_to_page(Value::Object(map));
                let direct = read_agent_to_page(&text);
                assert_eq!(
                    direct.is_some(),
                    by_value.is_ok() && !float_rev,
                    "read directly: {text}"
                );
                match direct {
                    Some(message) => {
                        assert_eq!(Ok(&message), by_value.as_ref(), "{text}");
                        read += 1;
                    }
                    None => assert_eq!(parse_agent_to_page(&text, usize::MAX), by_value),
                }
                valid += usize::from(by_value.is_ok());
            }
        }
        assert!(read > 0 && read < valid, "{read} of {valid}");
        for text in [
            r#"{"protocol":1,"type":"cancel","clientId":"p","id":"i","id":"j"}"#,
            r#"{"protocol":1,"type":"call","clientId":"p","id":"i","tool":"t","input":1,"input":2}"#,
            r#"{"protocol":1.0,"type":"cancel","clientId":"p","id":"i"}"#,
            r#"{"protocol":1,"type":"call","clientId":"p","id":"i","tool":"t","input":{}} x"#,
            r#"[{"protocol":1,"type":"cancel","clientId":"p","id":"i"}]"#,
            "1",
            "-1.5",
            r#""cancel""#,
            "null",
            "true",
        ] {
            assert!(read_agent_to_page(text).is_none(), "{text}");
        }
        assert_eq!(
            parse_for_page(
                r#"{"protocol":1,"type":"cancel","clientId":"q","id":"i"}"#,
                99,
                "p"
            ),
            Ok(None)
        );
        assert_eq!(
            parse_for_page(r#"{"protocol":2,"clientId":"q","id":"i"}"#, 99, "p"),
            Ok(None)
        );
        // No string `clientId`: validation decides.
        assert!(matches!(
            parse_for_page(
                r#"{"protocol":1,"type":"cancel","clientId":7,"id":"i"}"#,
                99,
                "p"
            ),
            Err(Rejection::Invalid { .. })
        ));
        assert!(matches!(
            parse_for_page(
                r#"{"protocol":1,"type":"cancel","clientId":"p","id":"i"}"#,
                99,
                "p"
            ),
            Ok(Some(AgentToPage::Cancel(_)))
        ));
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
            Rejection::TooLong {
                units: 5_000_000,
                limit: DEFAULT_MAX_MESSAGE_BYTES,
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
            "message of at least 5000000 bytes exceeds maxMessageBytes 1048576".into(),
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
        assert_eq!(issues[9], [issue("", &texts[9])]);
    }

    #[test]
    fn validate_message_judges_a_value_as_json_writes_it() {
        let call = r#"{"protocol":1,"type":"call","clientId":"c","id":"1","tool":"t","input":{}}"#;
        assert_eq!(
            validate_written(Written::Text(call), Direction::ToPage),
            Ok(call)
        );
        let wrong_way = validate_written(Written::Text(call), Direction::ToAgent).unwrap_err();
        assert!(!wrong_way.is_empty());
        let issue = |message: &str| {
            vec![Issue {
                path: String::new(),
                message: message.into(),
            }]
        };
        assert_eq!(
            validate_written(
                Written::Threw("BigInt value can't be serialized in JSON"),
                Direction::ToPage
            ),
            Err(issue(
                "must be JSON: BigInt value can't be serialized in JSON"
            ))
        );
        assert_eq!(
            validate_written(Written::Nothing, Direction::ToAgent),
            Err(issue("must be object"))
        );
        assert_eq!(
            validate_written(Written::Text("not json"), Direction::ToPage),
            Err(parse_value("not json").unwrap_err().issues())
        );
    }

    #[test]
    fn validate_message_reads_lone_surrogates_as_the_schemas_do() {
        let cancel = |client_id: &str, id: &str| {
            format!(r#"{{"protocol":1,"type":"cancel","clientId":"{client_id}","id":"{id}"}}"#)
        };
        for (client_id, id) in [
            (r"p\ud800", r"\udc00x"),
            (r"\udbff", r"x\ud800\ud800"),
            (r"p\ud83d\ude00", "x"),
            (r"\\ud800", r"\\\udc00"),
        ] {
            let text = cancel(client_id, id);
            assert_eq!(
                validate_written(Written::Text(&text), Direction::ToPage),
                Ok(text.as_str()),
                "{text}"
            );
        }
        // Still judged: an empty id is refused with its issue, not as malformed.
        let empty_id = cancel(r"\ud800", "");
        let issues = validate_written(Written::Text(&empty_id), Direction::ToPage).unwrap_err();
        assert!(issues.iter().any(|issue| issue.path == "id"), "{issues:?}");
        assert_eq!(lone_surrogates_replaced(r#""\ud83d\ude00 \n""#), None);
        assert_eq!(
            lone_surrogates_replaced(r#""a\udc00\ud83d\ude00\ud83d""#).as_deref(),
            Some(r#""a\ufffd\ud83d\ude00\ufffd""#)
        );
    }

    #[test]
    fn validate_message_refuses_what_it_cannot_read_saying_why() {
        let issue = |message: String| {
            Err(vec![Issue {
                path: String::new(),
                message,
            }])
        };
        let too_long = format!("longer than {MAX_VALIDATED_BYTES} bytes of JSON: not validated");
        assert_eq!(
            validate_written(Written::TooLong, Direction::ToAgent),
            issue(too_long.clone())
        );
        assert!(validation_reads(MAX_VALIDATED_BYTES));
        assert!(!validation_reads(MAX_VALIDATED_BYTES + 1));
        let long = format!(r#"{{"padding":"{}"}}"#, "x".repeat(MAX_VALIDATED_BYTES));
        assert_eq!(
            validate_written(Written::Text(&long), Direction::ToAgent),
            issue(too_long)
        );
        // A text of exactly the limit is read.
        let call = |input: &str| {
            format!(
                r#"{{"protocol":1,"type":"call","clientId":"c","id":"1","tool":"t","input":"{input}"}}"#
            )
        };
        let at_limit = call(&"x".repeat(MAX_VALIDATED_BYTES - call("").len()));
        assert_eq!(at_limit.len(), MAX_VALIDATED_BYTES);
        assert_eq!(
            validate_written(Written::Text(&at_limit), Direction::ToPage),
            Ok(at_limit.as_str())
        );
        let nested = |depth: usize| {
            format!(
                r#"{{"protocol":1,"type":"call","clientId":"c","id":"1","tool":"t","input":{}1{}}}"#,
                "[".repeat(depth - 1),
                "]".repeat(depth - 1)
            )
        };
        assert_eq!(
            validate_written(
                Written::Text(&nested(MAX_VALIDATED_DEPTH)),
                Direction::ToPage
            ),
            Ok(nested(MAX_VALIDATED_DEPTH).as_str())
        );
        assert_eq!(
            validate_written(
                Written::Text(&nested(MAX_VALIDATED_DEPTH + 1)),
                Direction::ToPage
            ),
            issue(format!(
                "nested deeper than {MAX_VALIDATED_DEPTH}: not validated"
            ))
        );
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod proptests {
    use super::*;
    use proptest::prelude::*;

    /// A JS string as `JSON.stringify` writes it: a lone surrogate as its
    /// lowercase escape, a pair as its character, `"`, `\` and control
    /// characters escaped.
    fn stringified(units: &[u16]) -> String {
        let mut out = String::from("\"");
        for unit in char::decode_utf16(units.iter().copied()) {
            match unit {
                Ok('"') => out.push_str("\\\""),
                Ok('\\') => out.push_str("\\\\"),
                Ok(c) if u32::from(c) < 0x20 => out.push_str(&format!("\\u{:04x}", u32::from(c))),
                Ok(c) => out.push(c),
                Err(lone) => out.push_str(&format!("\\u{:04x}", lone.unpaired_surrogate())),
            }
        }
        out.push('"');
        out
    }

    proptest! {
        /// The string validated is the page's with each half of a pair
        /// read as U+FFFD, as `String::from_utf16_lossy` reads it: the
        /// pairs, escapes and every other character stay.
        #[test]
        fn a_written_string_is_read_with_its_lone_surrogates_as_replacement_characters(
            units in proptest::collection::vec(
                prop_oneof![
                    4 => 0x20u16..0x7f,
                    1 => 0u16..0x20,
                    2 => 0xd800u16..0xe000,
                    1 => any::<u16>(),
                ],
                0..40,
            )
        ) {
            let text = stringified(&units);
            let replaced = lone_surrogates_replaced(&text);
            let read = replaced.as_deref().unwrap_or(&text);
            prop_assert_eq!(read.len(), text.len());
            let value: Value = serde_json::from_str(read).expect("read as JSON");
            prop_assert_eq!(value, Value::String(String::from_utf16_lossy(&units)));
        }
    }
}
