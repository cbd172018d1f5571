//! WebAssembly glue: converts between JS and the core, decides nothing.
//! Compiled only for `wasm32`; the JS shim in `js/` wraps these exports.
//! Values cross as JSON text (one `JSON.parse` on the JS side), which keeps
//! the glue small and copies everything the page hands in.

mod core;
mod protocol;

use crate::prelude::*;
use ::core::cell::RefCell;

use wasm_bindgen::prelude::*;

use crate::schema::PatternMatcher;
use crate::vecmap::VecMap;

pub use self::core::WasmToolmark;
pub use self::protocol::*;

/// lol_alloc's free-list allocator (0.5 KB of code; dlmalloc, std's, is
/// 7.2 KB: docs/benchmarks.md).
// SAFETY: the module is built for wasm32-unknown-unknown without the atomics
// feature (checked below): one thread.
#[global_allocator]
static ALLOCATOR: lol_alloc::AssumeSingleThreaded<lol_alloc::FreeListAllocator> =
    unsafe { lol_alloc::AssumeSingleThreaded::new(lol_alloc::FreeListAllocator::new()) };

#[cfg(target_feature = "atomics")]
compile_error!("the allocator assumes one thread (wasm32 without atomics)");

/// A refusal, returned where a result's JSON text would be: `!` and the
/// message (no JSON text starts with `!`). The shim throws it as an `Error`,
/// as a `JsError` was before, without the externref path a `JsError` takes.
fn refused(message: &str) -> String {
    format!("!{message}")
}

// Declared here rather than taken from js-sys: linking js-sys brings its
// futures support along (JSPI task wakers and closure shims the module keeps
// in its function table: 1.2 KB of the gzipped package), which nothing here
// uses.
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
