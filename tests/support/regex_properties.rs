//! Unicode property escapes natively: the `regex` crate's tables stand in
//! for the page's `RegExp` (src/wasm: js/src/unicode-property.js). Its
//! names are looser than ECMA-262's (`\p{greek}` passes), which the tests
//! do not rely on; its Unicode version may differ from the browser's.
//! Shared with src/schema/pattern.rs's unit tests and tests/pattern_engine.rs
//! (hence no crate paths).

extern crate std;
use std::{format, string::String, sync::OnceLock, vec::Vec};

/// Every Unicode scalar value, in order.
fn every_code_point() -> &'static str {
    static ALL: OnceLock<String> = OnceLock::new();
    ALL.get_or_init(|| (0..=0x10_FFFF).filter_map(char::from_u32).collect())
}

/// What a `PropertyRanges` answers for `property`.
pub fn property_ranges(property: &str) -> Option<Vec<(u32, u32)>> {
    let run = regex::Regex::new(&format!("\\p{{{property}}}+")).ok()?;
    let mut ranges = Vec::new();
    for found in run.find_iter(every_code_point()) {
        let mut chars = found.as_str().chars();
        let low = u32::from(chars.next()?);
        let high = chars.next_back().map_or(low, u32::from);
        // The surrogates are not in the text: U+D7FF and U+E000 sit side
        // by side there.
        if low < 0xD800 && high > 0xDFFF {
            ranges.push((low, 0xD7FF));
            ranges.push((0xE000, high));
        } else {
            ranges.push((low, high));
        }
    }
    Some(ranges)
}
