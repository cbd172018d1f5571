//! The free helpers: `newId`, `llmName`, `protocolVersion` (the
//! `PROTOCOL_VERSION` constant), `protocolSchemas`, `validateMessage`.

use crate::prelude::*;
use js_sys::{Array, Object};
use wasm_bindgen::prelude::*;

use super::error::Failure;
use super::host;
use super::values;
use crate::ids::{self, RandomError, RandomSource};
use crate::protocol::{self, to_json, Direction};

/// `crypto.getRandomValues`, through getrandom's `wasm_js` backend, drawn
/// from a pool of `POOL` bytes refilled by one call: in Node one
/// `getRandomValues` per id was 6–10% of an in-page call round trip
/// (`node --cpu-prof`), and the `uuid` npm package pools the same way.
/// A call costs about the same for 256 bytes as for 4096 (3.1 and 3.6 µs
/// in Node), so the pool holds 256 ids: `getRandomValues` went from 2.7%
/// of an in-page call's self time to under 0.2%.
/// Bytes handed out are zeroed in the pool, so none is given twice.
pub struct CryptoRandom;

const POOL: usize = 4096;

struct Pool {
    bytes: [u8; POOL],
    next: usize,
}

std::thread_local! {
    static RANDOM_POOL: core::cell::RefCell<Pool> =
        const { core::cell::RefCell::new(Pool { bytes: [0; POOL], next: POOL }) };
}

fn web_crypto(buf: &mut [u8]) -> Result<(), RandomError> {
    // The backend's one error is `WEB_CRYPTO`; its text is written here,
    // since getrandom's `Display` would bring `core::fmt` and every
    // backend's error texts into the module.
    getrandom::fill(buf).map_err(|_| RandomError("Web Crypto API is unavailable".into()))
}

impl RandomSource for CryptoRandom {
    fn fill(&mut self, buf: &mut [u8]) -> Result<(), RandomError> {
        if buf.len() > POOL / 4 {
            return web_crypto(buf);
        }
        RANDOM_POOL.with(|pool| {
            let Ok(mut pool) = pool.try_borrow_mut() else {
                return web_crypto(buf);
            };
            if POOL - pool.next < buf.len() {
                web_crypto(&mut pool.bytes)?;
                pool.next = 0;
            }
            let start = pool.next;
            let end = start + buf.len();
            let Some(taken) = pool.bytes.get_mut(start..end) else {
                return web_crypto(buf);
            };
            buf.copy_from_slice(taken);
            taken.fill(0);
            pool.next = end;
            Ok(())
        })
    }
}

/// `newId()`: an RFC 4122 v4 UUID from `crypto.getRandomValues`.
#[wasm_bindgen(js_name = newId)]
pub fn new_id() -> Result<String, JsValue> {
    ids::new_id(&mut CryptoRandom)
        .map_err(|error| Failure::misuse(format!("newId: {}", &error.message())).into())
}

/// `llmName(name)`: `.` → `__`, long names truncated and hashed.
#[wasm_bindgen(js_name = llmName)]
pub fn llm_name_of(name: JsValue) -> Result<String, JsValue> {
    match name.as_string() {
        Some(name) => Ok(ids::llm_name(&name)),
        None => Err(Failure::misuse("llmName: name must be a string").into()),
    }
}

/// `llmName` on a Rust string.
pub fn llm_name(name: &str) -> String {
    ids::llm_name(name)
}

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

/// The problems `validateMessage` finds in the JSON text of a value
/// (`None` when valid).
fn validation_issues(
    text: &str,
    direction: &str,
) -> Result<Option<Vec<protocol::Issue>>, &'static str> {
    let direction = Direction::parse(direction).ok_or("direction must be 'toPage' or 'toAgent'")?;
    Ok(match protocol::parse_value(text) {
        Ok(value) => protocol::validate(&value, direction).err(),
        Err(rejection) => Some(rejection.issues()),
    })
}

/// `validateMessage` on the JSON text of a value: `None` when valid, else
/// the JSON text of the `[{ path, message }]` errors.
pub fn validate_message_text(text: &str, direction: &str) -> Result<Option<String>, &'static str> {
    Ok(validation_issues(text, direction)?.map(|issues| to_json(&issues)))
}

fn failed(path: &str, message: &str) -> JsValue {
    let error = host::object(&[
        ("path", &JsValue::from_str(path)),
        ("message", &JsValue::from_str(message)),
    ]);
    let errors = Array::of1(&error);
    host::object(&[("ok", &JsValue::FALSE), ("errors", &errors)]).into()
}

/// `validateMessage(value, 'toPage' | 'toAgent')`: `{ ok: true, message }`
/// or `{ ok: false, errors }`. The value is judged as it travels: its JSON
/// copy, so getters and prototypes do not count.
#[wasm_bindgen(js_name = validateMessage)]
pub fn validate_message(value: JsValue, direction: JsValue) -> Result<JsValue, JsValue> {
    let direction = direction.as_string().unwrap_or_default();
    if Direction::parse(&direction).is_none() {
        return Err(
            Failure::misuse("validateMessage: direction must be 'toPage' or 'toAgent'").into(),
        );
    }
    let text = match js_sys::JSON::stringify(&value) {
        Err(error) => {
            let reason = host::string(&host::get(&error, "message"));
            return Ok(failed("", &format!("must be JSON: {}", &reason)));
        }
        Ok(text) => match JsValue::from(text).as_string() {
            Some(text) => text,
            None => return Ok(failed("", "must be object")),
        },
    };
    match validation_issues(&text, &direction) {
        Ok(None) => Ok(host::object(&[
            ("ok", &JsValue::TRUE),
            ("message", &values::parse_text(&text)),
        ])
        .into()),
        Ok(Some(issues)) => Ok(host::object(&[
            ("ok", &JsValue::FALSE),
            ("errors", &values::issues(&issues)),
        ])
        .into()),
        Err(message) => Err(Failure::misuse(message).into()),
    }
}
