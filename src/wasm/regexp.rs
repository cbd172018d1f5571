//! `pattern` / `patternProperties` through JS `RegExp` (ECMA-262, `u` flag):
//! the fallback of `schema::pattern::LinearPatterns` for the patterns
//! regex-lite cannot express (lookaround, backreferences, `\p{…}`, named
//! groups) and the judge of every pattern its translation does not accept.
//! RegExp backtracks: these patterns are not bounded in time
//! (docs/benchmarks.md, "Pattern bound"). Compiled patterns are cached.

use crate::prelude::*;
use core::cell::RefCell;

use js_sys::{Array, Function, Reflect, RegExp};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::host;
use crate::schema::PatternMatcher;
use crate::vecmap::VecMap;

/// Most distinct patterns kept compiled (tool schemas use a handful).
const CACHE_LIMIT: usize = 256;

/// `pattern` / `patternProperties` through JS `RegExp` (ECMA-262, `u` flag
/// only: no `g` or `y`, so `test()` keeps no state). Compiled patterns are
/// cached.
#[derive(Default)]
pub struct JsRegExp {
    cache: RefCell<VecMap<String, Result<RegExp, String>>>,
}

/// `new RegExp(pattern, "u")` by `Reflect.construct`, so its SyntaxError
/// comes back as an `Err` (js-sys's `RegExp::new` would let it throw
/// through the module, leaving it mid-call).
fn compile(pattern: &str) -> Result<RegExp, String> {
    let constructor = Reflect::get(&host::global(), &JsValue::from_str("RegExp"))
        .ok()
        .and_then(|c| c.dyn_into::<Function>().ok())
        .ok_or_else(|| String::from("RegExp is not available"))?;
    let arguments = Array::of2(&JsValue::from_str(pattern), &JsValue::from_str("u"));
    Reflect::construct(&constructor, &arguments)
        .map(JsCast::unchecked_into::<RegExp>)
        .map_err(|error| {
            error
                .dyn_ref::<js_sys::Error>()
                .and_then(|e| e.message().as_string())
                .unwrap_or_else(|| "invalid regular expression".into())
        })
}

impl PatternMatcher for JsRegExp {
    fn is_match(&self, pattern: &str, text: &str) -> Result<bool, String> {
        let Ok(mut cache) = self.cache.try_borrow_mut() else {
            return compile(pattern).map(|re| re.test(text));
        };
        match cache.cached(pattern, CACHE_LIMIT, || compile(pattern)) {
            Some(Ok(re)) => Ok(re.test(text)),
            Some(Err(message)) => Err(message.clone()),
            None => compile(pattern).map(|re| re.test(text)),
        }
    }
}
