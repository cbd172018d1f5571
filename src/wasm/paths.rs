//! The decisions of `getPath`, `setPath` and `flatten` (dotted paths,
//! `items.0.name`), whose walks are JS (`js/src/paths.js`: property reads
//! and writes, which from here were a crossing each). Unsafe or malformed
//! paths are a `ToolmarkError('invalid_path')`; `__proto__`, `prototype`
//! and `constructor` are never walked or written.
//!
//! Bounds, whatever the value (an agent can build a deep draft with one
//! long path): a path has at most [`MAX_PATH_SEGMENTS`] segments and
//! [`MAX_PATH_LENGTH`] characters; `flatten` walks at most
//! [`MAX_PATH_SEGMENTS`] levels and [`MAX_FLATTEN_VALUES`] values, writes
//! paths of at most [`MAX_FLATTEN_PATH_BYTES`] UTF-8 bytes and at most
//! [`MAX_FLATTEN_OUTPUT_BYTES`] in all, and refuses a value that contains
//! itself and a key that is empty, has a dot or is one of [`FORBIDDEN`].
//! Past a bound: `invalid_path`. With these, `flatten`'s time is linear in
//! its output, whatever the input.

use crate::prelude::*;
use js_sys::{Array, JsString};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::error::Failure;
use super::host;

/// Segments never walked or written, keys `flatten` refuses.
pub const FORBIDDEN: [&str; 3] = ["__proto__", "prototype", "constructor"];

/// Most segments in a path, and deepest nesting `flatten` walks.
pub const MAX_PATH_SEGMENTS: usize = 1000;

/// Longest path argument, in UTF-16 code units (the protocol's message
/// limit; no real path is near it). The paths `flatten` writes are shorter
/// still: [`MAX_FLATTEN_PATH_BYTES`].
pub const MAX_PATH_LENGTH: usize = 1 << 20;

/// Longest path `flatten` writes, in UTF-8 bytes (so at most as many
/// UTF-16 units): V8 hashes a string of more than 16,383 units by its
/// length alone, so an object whose keys are longer collides on every
/// insertion of keys of one length, and building it is quadratic.
pub const MAX_FLATTEN_PATH_BYTES: usize = 16_000;

/// Most bytes one `flatten` output holds: every path's UTF-8 bytes plus
/// each string leaf's (any other leaf counts 8). Four times the protocol's
/// message limit: paths repeat their prefixes, so the output of a 1 MiB
/// input is larger than the input.
pub const MAX_FLATTEN_OUTPUT_BYTES: usize = 4 * 1_048_576;

/// Most values (containers and leaves) one `flatten` visits: a value that
/// shares its parts (`a = {x: b, y: b}`, `b = {x: c, y: c}`, …) has
/// exponentially many paths, and an object of many keys is slow for a JS
/// engine to build (100,000 keys took Chromium 60–140 ms in a fresh page;
/// 20,000 keep `flatten` well under 50 ms).
pub const MAX_FLATTEN_VALUES: usize = 20_000;

fn invalid(message: String) -> Failure {
    Failure::toolmark(crate::protocol::ThrownErrorCode::InvalidPath, message)
}

fn segments(path: &JsValue) -> Result<Vec<String>, Failure> {
    if !path.is_string() {
        let kind = host::string(&path.js_typeof());
        return Err(invalid(format!("path must be a string, not {}", &kind)));
    }
    let length = path.unchecked_ref::<JsString>().length() as usize;
    if length > MAX_PATH_LENGTH {
        return Err(invalid(format!(
            "path is longer than {} characters",
            MAX_PATH_LENGTH
        )));
    }
    let path = path.as_string().unwrap_or_default();
    if path.is_empty() {
        return Ok(Vec::new());
    }
    if path.split('.').count() > MAX_PATH_SEGMENTS {
        return Err(invalid(format!(
            "path has more than {} segments",
            MAX_PATH_SEGMENTS
        )));
    }
    let parts: Vec<String> = path.split('.').map(str::to_owned).collect();
    for part in &parts {
        if part.is_empty() {
            return Err(invalid(format!("path \"{}\" has an empty segment", &path)));
        }
        if FORBIDDEN.contains(&part.as_str()) {
            return Err(invalid(format!(
                "path \"{}\" uses the unsafe segment \"{}\"",
                &path, part
            )));
        }
    }
    Ok(parts)
}

/// `pathSegments(path)`: the segments of a valid, safe path (none for
/// `''`); a `ToolmarkError('invalid_path')` for any other.
#[wasm_bindgen(js_name = pathSegments)]
pub fn path_segments(path: JsValue) -> Result<Array, JsValue> {
    Ok(segments(&path)?
        .iter()
        .map(|s| JsValue::from_str(s))
        .collect())
}

/// `pathRules()`: `{ maxSegments, maxValues, maxPathBytes,
/// maxOutputBytes, forbidden }`, the limits and refused keys `flatten`
/// applies.
#[wasm_bindgen(js_name = pathRules)]
pub fn path_rules() -> JsValue {
    let forbidden: Array = FORBIDDEN.iter().map(|s| JsValue::from_str(s)).collect();
    #[allow(clippy::cast_precision_loss)]
    let number = |n: usize| JsValue::from_f64(n as f64);
    host::object(&[
        ("maxSegments", &number(MAX_PATH_SEGMENTS)),
        ("maxValues", &number(MAX_FLATTEN_VALUES)),
        ("maxPathBytes", &number(MAX_FLATTEN_PATH_BYTES)),
        ("maxOutputBytes", &number(MAX_FLATTEN_OUTPUT_BYTES)),
        ("forbidden", &forbidden),
    ])
    .into()
}
