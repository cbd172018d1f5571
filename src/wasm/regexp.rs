//! `pattern` / `patternProperties` through JS `RegExp` (ECMA-262, `u` flag),
//! so no regex engine ships in the wasm. Compiled patterns are cached.

use crate::prelude::*;
use core::cell::RefCell;

use wasm_bindgen::prelude::*;

use crate::schema::PatternMatcher;
use crate::vecmap::VecMap;

// Declared here rather than taken from js-sys: js-sys's `RegExp::new` lets
// a SyntaxError through, and a throw through the module would leave it
// mid-call.
#[wasm_bindgen]
extern "C" {
    /// A JS `RegExp`.
    type RegExp;

    /// `RegExp(pattern, flags)` (the same as `new RegExp`), with its
    /// SyntaxError caught (a throw through the module would leave it
    /// mid-call).
    #[wasm_bindgen(catch, js_namespace = globalThis, js_name = RegExp)]
    fn try_regexp(pattern: &str, flags: &str) -> Result<RegExp, JsValue>;

    /// `regexp.test(text)`.
    #[wasm_bindgen(method)]
    fn test(this: &RegExp, text: &str) -> bool;

    /// Whatever `RegExp` threw.
    type Thrown;

    /// Its `message` (a string for a SyntaxError).
    #[wasm_bindgen(method, getter, structural)]
    fn message(this: &Thrown) -> JsValue;
}

/// Most distinct patterns kept compiled (tool schemas use a handful).
const CACHE_LIMIT: usize = 256;

/// `pattern` / `patternProperties` through JS `RegExp` (ECMA-262, `u` flag
/// only: no `g` or `y`, so `test()` keeps no state), so no regex engine
/// ships in the wasm. Compiled patterns are cached.
#[derive(Default)]
pub struct JsRegExp {
    cache: RefCell<VecMap<String, Result<RegExp, String>>>,
}

fn compile(pattern: &str) -> Result<RegExp, String> {
    try_regexp(pattern, "u").map_err(|error| {
        error
            .unchecked_into::<Thrown>()
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
        if cache.get(pattern).is_none() {
            // A new pattern: make room if the cache is full.
            if cache.len() >= CACHE_LIMIT {
                cache.clear();
            }
            cache.insert(pattern.to_owned(), compile(pattern));
        }
        match cache.get(pattern) {
            Some(Ok(re)) => Ok(re.test(text)),
            Some(Err(message)) => Err(message.clone()),
            None => compile(pattern).map(|re| re.test(text)),
        }
    }
}
