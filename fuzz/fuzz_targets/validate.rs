//! Drives the JSON Schema validator and the protocol check with arbitrary
//! schemas and instances grown to an inbound message's size, with a time
//! oracle: any input that takes longer than `VALIDATE_LIMIT_MS` (default
//! 100) is a finding. Build it without a sanitizer so the time is the
//! code's: `cargo fuzz run validate --sanitizer none`.
#![no_main]

use std::sync::OnceLock;
use std::time::Duration;

#[path = "../../tests/support/validate_check.rs"]
mod validate_check;

fn limit() -> Duration {
    static LIMIT: OnceLock<Duration> = OnceLock::new();
    *LIMIT.get_or_init(|| {
        let ms = std::env::var("VALIDATE_LIMIT_MS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(100);
        Duration::from_millis(ms)
    })
}

libfuzzer_sys::fuzz_target!(|data: &[u8]| validate_check::check_validate(data, Some(limit())));
