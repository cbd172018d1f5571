//! Test support: serde_json's values (and its `json!` literals) as the
//! crate's own, and back, by way of their text.

use super::{parse, to_text, Value};

/// A serde_json value as the crate's own (floats keep serde_json's digits).
pub(crate) fn own(value: &serde_json::Value) -> Value {
    parse(&value.to_string()).unwrap_or_else(|e| panic!("{value}: {e}"))
}

/// The crate's value as serde_json's.
pub(crate) fn serde(value: &Value) -> serde_json::Value {
    serde_json::from_str(&to_text(value)).unwrap_or_else(|e| panic!("{value}: {e}"))
}

/// `serde_json::json!`, as the crate's own [`Value`].
macro_rules! json {
    ($($json:tt)+) => {
        $crate::json::testing::own(&::serde_json::json!($($json)+))
    };
}

pub(crate) use json;
