//! Drives the transports' origin and URL rules with arbitrary text against
//! the WHATWG URL standard (the `url` crate): nothing panics, and whatever
//! the rules accept, the standard agrees with.
#![no_main]

#[path = "../../tests/support/transport_check.rs"]
mod transport_check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| transport_check::check_transport(data));
