//! Drives the inbound parser with arbitrary text: it must never panic, and
//! whatever it accepts must serialize back to a message it accepts again.
#![no_main]

#[path = "../../tests/support/inbound_check.rs"]
mod inbound_check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| inbound_check::check_inbound(data));
