//! Glue for the free helpers (`newId`, `llmName`, `PROTOCOL_VERSION`,
//! `validateMessage`, `protocolSchemas`), all through one export.

use crate::prelude::*;
use wasm_bindgen::prelude::*;

use super::refused;
use crate::ids::{self, RandomError, RandomSource};
use crate::protocol::{self, to_json, Direction};

/// `crypto.getRandomValues`, through getrandom's `wasm_js` backend.
pub struct CryptoRandom;

impl RandomSource for CryptoRandom {
    fn fill(&mut self, buf: &mut [u8]) -> Result<(), RandomError> {
        // The backend's one error is `WEB_CRYPTO`; its text is written here
        // (getrandom's `Display` would bring every backend's error texts).
        getrandom::fill(buf).map_err(|_| RandomError("Web Crypto API is unavailable".into()))
    }
}

/// The free helpers, multiplexed through one export (each export costs
/// wasm-bindgen glue on both sides): `op` names the helper, `text` is its
/// argument ("" for none). Returns the JSON text of the result, or a refusal
/// (see [`refused`]).
#[wasm_bindgen]
pub fn helper(op: &str, text: &str) -> String {
    match op {
        "newId" => match new_id() {
            Ok(id) => to_json(&id),
            Err(message) => refused(&message),
        },
        "llmName" => to_json(&llm_name(text)),
        "version" => protocol_version().to_string(),
        "schemas" => protocol_schemas_text(),
        direction => match validate_message_text(text, direction) {
            Ok(Some(errors)) => errors,
            Ok(None) => "null".into(),
            Err(message) => refused(message),
        },
    }
}

/// `newId()`: an RFC 4122 v4 UUID from `crypto.getRandomValues`.
pub fn new_id() -> Result<String, String> {
    ids::new_id(&mut CryptoRandom).map_err(|error| error.message())
}

/// `llmName(name)`.
pub fn llm_name(name: &str) -> String {
    ids::llm_name(name)
}

/// `PROTOCOL_VERSION`.
pub fn protocol_version() -> u8 {
    protocol::PROTOCOL_VERSION
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
    let direction = Direction::parse(direction).ok_or("direction must be 'toPage' or 'toAgent'")?;
    let issues = match protocol::parse_value(text) {
        Ok(value) => protocol::validate(&value, direction).err(),
        Err(rejection) => Some(rejection.issues()),
    };
    Ok(issues.map(|issues| to_json(&issues)))
}
