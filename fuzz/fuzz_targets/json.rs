//! Drives the crate's JSON parser with arbitrary text and holds it to
//! serde_json (with `float_roundtrip`, after the old lone-surrogate
//! pre-pass): same value, key order, number kinds and float bits, or the
//! same error text.
#![no_main]

#[path = "../../tests/support/json_check.rs"]
mod json_check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| json_check::check_json(data));
