//! Glue for the protocol helpers: `newId`, `llmName`, `validateMessage`, schemas.

use crate::prelude::*;
use wasm_bindgen::prelude::*;

use crate::ids::{self, RandomError, RandomSource};
use crate::protocol::{self, Direction};

/// `crypto.getRandomValues`, through getrandom's `wasm_js` backend.
pub struct CryptoRandom;

impl RandomSource for CryptoRandom {
    fn fill(&mut self, buf: &mut [u8]) -> Result<(), RandomError> {
        // The backend's one error is `WEB_CRYPTO`; its text is written here,
        // since getrandom's `Display` would bring `core::fmt` and every
        // backend's error texts into the module.
        getrandom::fill(buf).map_err(|_| RandomError("Web Crypto API is unavailable".into()))
    }
}

/// `newId()`: an RFC 4122 v4 UUID from `crypto.getRandomValues`.
#[wasm_bindgen(js_name = newId)]
pub fn new_id() -> Result<String, JsError> {
    ids::new_id(&mut CryptoRandom).map_err(|error| {
        // `RandomError`'s `Display`, without `core::fmt`.
        JsError::new(&crate::concat(&["random source failed: ", &error.0]))
    })
}

/// `llmName(name)`.
#[wasm_bindgen(js_name = llmName)]
pub fn llm_name(name: &str) -> String {
    ids::llm_name(name)
}

/// `PROTOCOL_VERSION`.
#[wasm_bindgen(js_name = protocolVersion)]
pub fn protocol_version() -> u8 {
    protocol::PROTOCOL_VERSION
}

/// The published schemas as one JSON text, `{"pageToAgent": …,
/// "agentToPage": …}` (one string crosses more cheaply than an array of
/// them, which needs wasm-bindgen's externref array glue).
#[wasm_bindgen(js_name = protocolSchemasText)]
pub fn protocol_schemas_text() -> String {
    let mut text = String::from("{\"pageToAgent\":");
    text.push_str(protocol::schemas::PAGE_TO_AGENT);
    text.push_str(",\"agentToPage\":");
    text.push_str(protocol::schemas::AGENT_TO_PAGE);
    text.push('}');
    text
}

/// `validateMessage` on the JSON text of a value: returns `null` when valid,
/// else the JSON text of the `[{ path, message }]` errors.
#[wasm_bindgen(js_name = validateMessageText)]
pub fn validate_message_text(text: &str, direction: &str) -> Result<Option<String>, JsError> {
    let direction = Direction::parse(direction)
        .ok_or_else(|| JsError::new("direction must be 'toPage' or 'toAgent'"))?;
    let issues = match protocol::parse_value(text) {
        Ok(value) => protocol::validate(&value, direction).err(),
        Err(rejection) => Some(rejection.issues()),
    };
    Ok(issues.map(|issues| {
        let mut out = String::new();
        crate::json::write_array_of(&mut out, &issues, protocol::Issue::write_json);
        out
    }))
}
