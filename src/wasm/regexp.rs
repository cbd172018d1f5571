//! `pattern` / `patternProperties` through JS `RegExp` (ECMA-262, `u` flag),
//! so no regex engine ships in the wasm. Compiled patterns are cached.

use std::cell::RefCell;
use std::collections::HashMap;

use wasm_bindgen::prelude::*;

use crate::schema::PatternMatcher;

#[wasm_bindgen]
extern "C" {
    /// `new RegExp(pattern, flags)`, with its SyntaxError caught.
    #[wasm_bindgen(catch, js_namespace = globalThis, js_name = RegExp)]
    fn try_regexp(pattern: &str, flags: &str) -> Result<js_sys::RegExp, JsValue>;
}

/// Most distinct patterns kept compiled (tool schemas use a handful).
const CACHE_LIMIT: usize = 256;

/// A `PatternMatcher` backed by JS `RegExp` with the `u` flag only (no `g`
/// or `y`, so `test()` keeps no state).
#[derive(Default)]
pub struct JsRegExp {
    cache: RefCell<HashMap<String, Result<js_sys::RegExp, String>>>,
}

fn compile(pattern: &str) -> Result<js_sys::RegExp, String> {
    try_regexp(pattern, "u").map_err(|error| {
        js_sys::Error::from(error)
            .message()
            .as_string()
            .unwrap_or_else(|| "invalid regular expression".into())
    })
}

impl PatternMatcher for JsRegExp {
    fn is_match(&self, pattern: &str, text: &str) -> Result<bool, String> {
        let Ok(mut cache) = self.cache.try_borrow_mut() else {
            return compile(pattern).map(|re| re.test(text));
        };
        if cache.len() >= CACHE_LIMIT && !cache.contains_key(pattern) {
            cache.clear();
        }
        let entry = cache
            .entry(pattern.to_owned())
            .or_insert_with(|| compile(pattern));
        match entry {
            Ok(re) => Ok(re.test(text)),
            Err(message) => Err(message.clone()),
        }
    }
}
