//! The crate's own JSON: a value type ([`Value`], [`Map`], [`Number`]),
//! [`parse`] from text and [`to_text`] back, without serde and serde_json
//! (their share of the WebAssembly module: serde's machinery, indexmap,
//! hashbrown and SipHash for `Map`, zmij and itoa for numbers). Written
//! against `core` and `alloc` only.
//!
//! [`parse`] accepts exactly what `serde_json::from_str::<Value>` accepts and
//! builds the same value, with the same error text (`"{what} at line {l}
//! column {c}"`), with two deliberate differences, both for JavaScript's sake:
//!
//! - a lone UTF-16 surrogate escape (`\ud800` alone, as `JSON.stringify`
//!   writes a string holding one) becomes U+FFFD instead of an error;
//! - numbers with a fraction or an exponent (and integers too big for `u64`)
//!   are correctly rounded to `f64` (like `str::parse`, by a small exact
//!   algorithm here, without core's float parser and its tables), as
//!   `JSON.parse` does, where serde_json without `float_roundtrip` may be
//!   one ulp off.
//!
//! Otherwise: RFC 8259 only (no comments, no trailing commas, no leading
//! zeros, no raw control characters in strings, nothing after the value but
//! whitespace); an integer is a `u64` when it fits, a negative one an `i64`
//! when it fits (`-0` is the float `-0.0`), anything else an `f64`, and a
//! number too big for `f64` (`1e400`) is an error; a duplicate key keeps its
//! first position and its last value (found in O(n log n), so a hostile
//! object with many keys costs no quadratic time). Arrays and objects may
//! nest [`NESTING_LIMIT`]` - 1` deep (serde_json's recursion limit) and are
//! built with an explicit stack, so no input can grow the call stack.
//!
//! A float keeps the text it was parsed from, and [`to_text`] writes it back
//! as that text (integers in decimal, strings escaped as serde_json escapes
//! them): the same number, with no float formatting in the wasm. The bridge
//! makes no fractional numbers of its own; every float comes from JSON text.
//!
//! Output built from Rust data (the glue's answers, messages, results) is
//! written straight to text by [`write_key`], the `write_*_member` functions
//! and [`write_array_of`], with no `Value` built just to be written; numbers
//! by [`push_u64`], the crate's integer writer (no `core::fmt`).
//!
//! `tests/json_differential.rs` and the `json` fuzz target hold [`parse`] to
//! serde_json (with `float_roundtrip`, after the surrogate pre-pass the
//! bridge used before), and [`to_text`] to serde_json's writer.

mod float;
mod map;
mod number;
mod parse;
mod value;
mod write;

#[cfg(test)]
pub(crate) mod testing;

pub use float::{is_whole, trunc};
pub use map::{Iter, IterMut, Map};
pub use number::Number;
pub use parse::{parse, JsonError, NESTING_LIMIT};
pub use value::{array_of, list, obj, Key, Value};
pub use write::{
    push_u64, to_text, write_array_of, write_bool_member, write_key, write_separator,
    write_str_member, write_string, write_u64_member, write_value, write_value_member,
};
