//! `pathSegments` and `pathRules` for the path helpers' JS walks
//! (`js/src/paths.js`); the rules are the core's ([`crate::paths`]).

use crate::prelude::*;
use js_sys::{Array, JsString};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::error::Failure;
use super::host;
use crate::paths::{
    self, FORBIDDEN, MAX_FLATTEN_OUTPUT_BYTES, MAX_FLATTEN_PATH_BYTES, MAX_FLATTEN_VALUES,
    MAX_PATH_SEGMENTS,
};
use crate::protocol::ThrownErrorCode;

fn invalid(message: String) -> Failure {
    Failure::toolmark(ThrownErrorCode::InvalidPath, message)
}

/// `pathSegments(path)`: the segments of a valid, safe path (none for
/// `''`); a `ToolmarkError('invalid_path')` for any other.
#[wasm_bindgen(js_name = pathSegments)]
pub fn path_segments(path: JsValue) -> Result<Array, JsValue> {
    let length = path
        .dyn_ref::<JsString>()
        .map(|text| text.length() as usize);
    paths::argument(length, || host::string(&path.js_typeof())).map_err(invalid)?;
    let text = path.as_string().unwrap_or_default();
    // A lone surrogate is read as U+FFFD: the text then differs from the
    // page's string (compared only when it holds a U+FFFD).
    let replaced = text
        .as_bytes()
        .windows(3)
        .any(|w| w == "\u{FFFD}".as_bytes());
    let well_formed = !replaced || JsValue::from_str(&text) == path;
    Ok(paths::read_segments(&text, well_formed)
        .map_err(invalid)?
        .into_iter()
        .map(JsValue::from_str)
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
