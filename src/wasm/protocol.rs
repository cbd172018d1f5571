//! The free helpers `newId` and `llmName`, and the ids' random source.

use crate::prelude::*;
use wasm_bindgen::prelude::*;

use super::error::Failure;
use super::host;
use crate::ids::{self, RandomError, RandomSource};
use crate::machine::ToolmarkError as CoreError;

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

impl RandomSource for CryptoRandom {
    fn fill(&mut self, buf: &mut [u8]) -> Result<(), RandomError> {
        if buf.len() > POOL / 4 {
            return host::web_crypto(buf);
        }
        RANDOM_POOL.with(|pool| {
            let Ok(mut pool) = pool.try_borrow_mut() else {
                return host::web_crypto(buf);
            };
            if POOL - pool.next < buf.len() {
                host::web_crypto(&mut pool.bytes)?;
                pool.next = 0;
            }
            let start = pool.next;
            let end = start + buf.len();
            let Some(taken) = pool.bytes.get_mut(start..end) else {
                return host::web_crypto(buf);
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
        .map_err(|error| Failure::from(CoreError::no_random("newId", &error)).into())
}

/// `llmName(name)`: `.` → `__`, long names truncated and hashed.
#[wasm_bindgen(js_name = llmName)]
pub fn llm_name_of(name: JsValue) -> Result<String, JsValue> {
    match name.as_string() {
        Some(name) => Ok(ids::llm_name(&name)),
        None => Err(Failure::misuse("llmName: name must be a string").into()),
    }
}
