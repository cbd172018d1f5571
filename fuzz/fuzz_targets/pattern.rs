//! Drives the linear-time plans of `pattern` (the ECMA-262 → regex-lite
//! translation and the lookahead forms) with arbitrary patterns and texts:
//! nothing may panic, what it accepts must compile, and the line-wise
//! lookahead form must agree with its definition.
#![no_main]

#[path = "../../tests/support/pattern_check.rs"]
mod pattern_check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| pattern_check::check_pattern(data));
