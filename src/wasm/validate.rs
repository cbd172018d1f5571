//! `@toolmark/bridge-wasm/protocol`'s `validateMessage`, and the constants
//! the build writes out as plain JS (`protocolVersion`, `protocolSchemas`:
//! js/build/build.mjs). A part of its own (Cargo feature `protocol`): an
//! app that validates messages loads it, the README's app does not.

use crate::prelude::*;
use js_sys::Object;
use wasm_bindgen::prelude::*;

use super::error::Failure;
use super::host;
use super::values;
use crate::protocol::{self, to_json, Direction, Written, BAD_DIRECTION};

/// `PROTOCOL_VERSION`.
#[wasm_bindgen(js_name = protocolVersion)]
pub fn protocol_version() -> u8 {
    protocol::PROTOCOL_VERSION
}

/// Freezes `value` and everything in it.
fn deep_freeze(value: &JsValue) {
    if value.is_object() {
        let object = Object::from(value.clone());
        for key in Object::keys(&object).iter() {
            if let Ok(child) = js_sys::Reflect::get(&object, &key) {
                deep_freeze(&child);
            }
        }
        Object::freeze(&object);
    }
}

/// `protocolSchemas`: `{ pageToAgent, agentToPage }`, the published JSON
/// Schemas, frozen.
#[wasm_bindgen(js_name = protocolSchemas)]
pub fn protocol_schemas() -> JsValue {
    let schemas = values::parse_text(&protocol_schemas_text());
    deep_freeze(&schemas);
    schemas
}

/// The published schemas as one JSON text, `{"pageToAgent": …,
/// "agentToPage": …}`.
pub fn protocol_schemas_text() -> String {
    let mut text = String::from("{\"pageToAgent\":");
    text.push_str(protocol::schemas::PAGE_TO_AGENT);
    text.push_str(",\"agentToPage\":");
    text.push_str(protocol::schemas::AGENT_TO_PAGE);
    text.push('}');
    text
}

/// `validateMessage` on the JSON text of a value: `None` when valid, else
/// the JSON text of the `[{ path, message }]` errors.
pub fn validate_message_text(text: &str, direction: &str) -> Result<Option<String>, &'static str> {
    let direction = Direction::parse(direction).ok_or(BAD_DIRECTION)?;
    Ok(protocol::validate_written(Written::Text(text), direction)
        .err()
        .map(|issues| to_json(&issues)))
}

/// `validateMessage(value, 'toPage' | 'toAgent')`: `{ ok: true, message }`
/// or `{ ok: false, errors }`. The value is judged as it travels: its JSON
/// copy, so getters and prototypes do not count.
#[wasm_bindgen(js_name = validateMessage)]
pub fn validate_message(value: JsValue, direction: JsValue) -> Result<JsValue, JsValue> {
    let direction = direction
        .as_string()
        .and_then(|direction| Direction::parse(&direction))
        .ok_or_else(|| Failure::misuse(BAD_DIRECTION))?;
    let written = js_sys::JSON::stringify(&value)
        .map(|text| JsValue::from(text).as_string())
        .map_err(|error| host::string(&host::get(&error, "message")));
    let written = match &written {
        Ok(Some(text)) => Written::Text(text),
        Ok(None) => Written::Nothing,
        Err(reason) => Written::Threw(reason),
    };
    let answer = match protocol::validate_written(written, direction) {
        Ok(text) => host::object(&[
            ("ok", &JsValue::TRUE),
            ("message", &values::parse_text(text)),
        ]),
        Err(issues) => host::object(&[
            ("ok", &JsValue::FALSE),
            ("errors", &values::issues(&issues)),
        ]),
    };
    Ok(answer.into())
}
