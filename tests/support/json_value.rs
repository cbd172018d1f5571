//! serde_json's values and `json!` literals as the crate's own
//! (`toolmark_bridge::json`), by way of their text, and back: the tests
//! write their literals with serde_json's `json!`, the crate has no serde.
//! Declared with `#[macro_use]`, the module's `json!` (the crate's values)
//! is in scope after it.
#![allow(dead_code)]

use toolmark_bridge::json::{parse, to_text, Value};

/// A serde_json value as the crate's own (floats keep serde_json's digits).
pub fn own(value: &serde_json::Value) -> Value {
    parse(&value.to_string()).unwrap_or_else(|e| panic!("{value}: {e}"))
}

/// The crate's value as serde_json's.
pub fn serde(value: &Value) -> serde_json::Value {
    serde_json::from_str(&to_text(value)).unwrap_or_else(|e| panic!("{value}: {e}"))
}

/// `serde_json::json!`, as the crate's own value. Interpolated expressions
/// must be serde_json-serializable (turn a crate value into one with
/// [`serde`]).
#[allow(unused_macros)]
macro_rules! json {
    ($($json:tt)+) => {
        ::toolmark_bridge::json::parse(&::serde_json::json!($($json)+).to_string())
            .unwrap_or_else(|e| panic!("json! literal: {e}"))
    };
}
