//! Drives the ECMA-262 → regex-lite translation of `pattern` with arbitrary
//! patterns and texts: nothing may panic, and what it accepts must compile.
#![no_main]

#[path = "../../tests/support/pattern_check.rs"]
mod pattern_check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| pattern_check::check_pattern(data));
