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
//! paths of at most [`MAX_PATH_LENGTH`] UTF-8 bytes and refuses a value
//! that contains itself and a key that is empty, has a dot or is one of
//! [`FORBIDDEN`]. Past a bound: `invalid_path`.

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

/// Longest path: UTF-16 code units of a path argument, UTF-8 bytes of a
/// path `flatten` writes (the protocol's message limit; no real path is
/// near it).
pub const MAX_PATH_LENGTH: usize = 1 << 20;

/// Most values (containers and leaves) one `flatten` visits: a value that
/// shares its parts (`a = {x: b, y: b}`, `b = {x: c, y: c}`, …) has
/// exponentially many paths.
pub const MAX_FLATTEN_VALUES: usize = 100_000;

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

/// `pathRules()`: `{ maxSegments, maxValues, maxPathBytes, forbidden }`,
/// the limits and refused keys `flatten` applies.
#[wasm_bindgen(js_name = pathRules)]
pub fn path_rules() -> JsValue {
    let forbidden: Array = FORBIDDEN.iter().map(|s| JsValue::from_str(s)).collect();
    #[allow(clippy::cast_precision_loss)]
    let number = |n: usize| JsValue::from_f64(n as f64);
    host::object(&[
        ("maxSegments", &number(MAX_PATH_SEGMENTS)),
        ("maxValues", &number(MAX_FLATTEN_VALUES)),
        ("maxPathBytes", &number(MAX_PATH_LENGTH)),
        ("forbidden", &forbidden),
    ])
    .into()
}
