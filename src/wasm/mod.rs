//! WebAssembly glue: converts between JS and the core, decides nothing.
//! Compiled only for `wasm32`; the JS shim in `js/` wraps these exports.
//! Values cross as JSON text (one `JSON.parse` on the JS side), which keeps
//! the glue small and copies everything the page hands in.

mod alloc;
mod core;
mod protocol;
mod regexp;

use crate::prelude::*;

pub use self::core::WasmToolmark;
pub use self::protocol::*;
pub use self::regexp::JsRegExp;

/// A refusal, returned where a result's JSON text would be: `!` and the
/// message (no JSON text starts with `!`). The shim throws it as an `Error`,
/// as a `JsError` was before, without the externref path a `JsError` takes.
fn refused(message: &str) -> String {
    crate::text::fill("!{}", &[message])
}

#[global_allocator]
static ALLOCATOR: alloc::SizeClasses = alloc::SizeClasses::new();
