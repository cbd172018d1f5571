//! Drives the linear-time engine of `pattern` (its parser, its plans for
//! the lookahead forms and its NFA search) with arbitrary patterns and
//! texts: nothing may panic, every answer and refusal must be the oracle's
//! (`regex-lite` over the same translation, tests/support/pattern_oracle.rs),
//! and the line-wise lookahead form must agree with its definition.
#![no_main]

#[path = "../../tests/support/pattern_check.rs"]
mod pattern_check;
#[path = "../../tests/support/pattern_oracle.rs"]
mod pattern_oracle;

libfuzzer_sys::fuzz_target!(|data: &[u8]| pattern_check::check_pattern(data));
