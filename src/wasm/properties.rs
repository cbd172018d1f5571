//! Unicode property escapes in `pattern`: the page's own `RegExp`
//! enumerates a property's code points (js/src/unicode-property.js), so the
//! module carries no Unicode tables and `\p{…}` means what it means in the
//! page. The engine caches each property (src/schema/pattern.rs).

use crate::prelude::*;
use crate::schema::pattern::PropertyRanges;
use wasm_bindgen::prelude::*;

#[wasm_bindgen(module = "/js/src/unicode-property.js")]
extern "C" {
    /// The property's ranges as `(low, high)` pairs, flat; `undefined`
    /// when the page's `RegExp` (u flag) has no such property.
    #[wasm_bindgen(catch, js_name = propertyRanges)]
    fn property_ranges(property: &str) -> Result<Option<Vec<u32>>, JsValue>;
}

/// The page's `RegExp` as the engine's [`PropertyRanges`].
pub struct HostProperties;

impl PropertyRanges for HostProperties {
    fn ranges(&self, property: &str) -> Option<Vec<(u32, u32)>> {
        let flat = property_ranges(property).ok()??;
        let mut ranges = Vec::with_capacity(flat.len() / 2);
        let mut rest = flat.as_slice();
        while let [low, high, tail @ ..] = rest {
            ranges.push((*low, *high));
            rest = tail;
        }
        Some(ranges)
    }
}
