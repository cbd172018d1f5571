//! The one error channel from Rust to JS: every failure the boundary throws
//! or rejects with is made here, as a `ToolmarkError` (with its `code`) or,
//! for misuse of the API (wrong argument types, unknown option values), a
//! `TypeError`.

use crate::prelude::*;
use wasm_bindgen::prelude::*;

use crate::machine::ToolmarkError as CoreError;

// The class stays JS so that `instanceof ToolmarkError` holds for what the
// paths helpers, forms and this module throw: one class, imported here. The
// build points the glue's import of this file at the package's own
// `errors.js` (js/build/build.mjs).
#[wasm_bindgen(module = "/js/src/errors.js")]
extern "C" {
    #[wasm_bindgen(js_name = ToolmarkError)]
    type JsToolmarkError;

    #[wasm_bindgen(constructor, js_class = ToolmarkError)]
    fn new(code: &str, message: &str) -> JsToolmarkError;
}

/// Why a call into the boundary failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// A misconfiguration (dev mode) or a thrown-only code: `ToolmarkError`.
    Toolmark { code: String, message: String },
    /// The API was called with something it does not take: `TypeError`.
    Misuse(String),
}

impl Failure {
    pub fn misuse(message: impl Into<String>) -> Failure {
        Failure::Misuse(message.into())
    }

    pub fn toolmark(code: &str, message: impl Into<String>) -> Failure {
        Failure::Toolmark {
            code: code.into(),
            message: message.into(),
        }
    }
}

impl From<CoreError> for Failure {
    fn from(error: CoreError) -> Failure {
        Failure::toolmark(error.code.as_str(), error.message)
    }
}

impl From<Failure> for JsValue {
    fn from(failure: Failure) -> JsValue {
        match failure {
            Failure::Toolmark { code, message } => JsToolmarkError::new(&code, &message).into(),
            Failure::Misuse(message) => js_sys::TypeError::new(&message).into(),
        }
    }
}
