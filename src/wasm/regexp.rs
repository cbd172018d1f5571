//! `pattern` / `patternProperties` through JS `RegExp` (ECMA-262, `u` flag),
//! so no regex engine ships in the wasm. Compiled patterns are cached.

use crate::prelude::*;
use core::cell::RefCell;

use wasm_bindgen::prelude::*;

use crate::schema::PatternMatcher;
use crate::vecmap::VecMap;

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
    cache: RefCell<VecMap<String, Result<js_sys::RegExp, String>>>,
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
        if cache.get(pattern).is_none() {
            cache.insert(pattern.to_owned(), compile(pattern));
        }
        match cache.get(pattern) {
            Some(Ok(re)) => Ok(re.test(text)),
            Some(Err(message)) => Err(message.clone()),
            None => compile(pattern).map(|re| re.test(text)),
        }
    }
}
