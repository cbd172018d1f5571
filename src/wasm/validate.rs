//! `@toolmark/bridge-wasm/protocol`'s `validateMessage`, and the constants
//! the build writes out as plain JS (`protocolVersion`, `protocolSchemas`:
//! js/build/build.mjs). A part of its own (Cargo feature `protocol`): an
//! app that validates messages loads it, the README's app does not.

use crate::prelude::*;
use js_sys::JsString;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::error::Failure;
use super::host;
use super::values;
use crate::protocol::{self, Direction, Written, BAD_DIRECTION};

/// `PROTOCOL_VERSION`.
#[wasm_bindgen(js_name = protocolVersion)]
pub fn protocol_version() -> u8 {
    protocol::PROTOCOL_VERSION
}

/// `protocolSchemas`' JSON text, `{"pageToAgent": …, "agentToPage": …}`:
/// the published JSON Schemas, which the build writes out as a frozen
/// object.
#[wasm_bindgen(js_name = protocolSchemas)]
pub fn protocol_schemas_text() -> String {
    let mut text = String::from("{\"pageToAgent\":");
    text.push_str(protocol::schemas::PAGE_TO_AGENT);
    text.push_str(",\"agentToPage\":");
    text.push_str(protocol::schemas::AGENT_TO_PAGE);
    text.push('}');
    text
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
    let stringified = js_sys::JSON::stringify(&value).map(JsValue::from);
    let reason = stringified.as_ref().err().map(thrown_reason);
    let text = stringified
        .as_ref()
        .ok()
        .and_then(|text| text.dyn_ref::<JsString>());
    let copied;
    let written = match (&reason, text) {
        (Some(reason), _) => Written::Threw(reason),
        (None, None) => Written::Nothing,
        // Measured before it is copied into the module.
        (None, Some(text))
            if !protocol::validation_reads(
                usize::try_from(text.length()).unwrap_or(usize::MAX),
            ) =>
        {
            Written::TooLong
        }
        (None, Some(text)) => {
            copied = String::from(text);
            Written::Text(&copied)
        }
    };
    let answer = match protocol::validate_written(written, direction) {
        Ok(text) => host::object(&[
            ("ok", &JsValue::TRUE),
            ("message", &values::parse_text(text)),
        ]),
        Err(issues) => host::object(&[("ok", &JsValue::FALSE), ("errors", &values::js(&issues))]),
    };
    Ok(answer.into())
}

/// What `JSON.stringify` threw, as a reason: an `Error`'s message, else
/// the thrown value itself (a getter may throw anything).
fn thrown_reason(error: &JsValue) -> String {
    if error.is_instance_of::<js_sys::Error>() {
        host::string(&host::get(error, "message"))
    } else {
        host::string(error)
    }
}
