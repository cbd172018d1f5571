//! The one error channel from Rust to JS: every failure the boundary throws
//! or rejects with is made here, as a `ToolmarkError` (with its `code`, one
//! of the core's typed codes), for misuse of the API (wrong argument types,
//! unknown option values) a `TypeError`, else an `Error`. A failure with no
//! caller to throw to (a timer's, a promise callback's) is [`report`]ed.

use crate::prelude::*;
use wasm_bindgen::prelude::*;

use super::host;
use crate::machine::ToolmarkError as CoreError;
use crate::protocol::ThrownErrorCode;

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

pub use crate::protocol::ToolmarkErrorCode as Code;

/// Why a call into the boundary failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// A misconfiguration (dev mode) or a thrown-only code: `ToolmarkError`.
    Toolmark { code: Code, message: String },
    /// The API was called with something it does not take: `ToolmarkError`
    /// `invalid_argument`.
    Misuse(String),
}

impl Failure {
    pub fn misuse(message: impl Into<String>) -> Failure {
        Failure::Misuse(message.into())
    }

    pub fn toolmark(code: impl Into<Code>, message: impl Into<String>) -> Failure {
        Failure::Toolmark {
            code: code.into(),
            message: message.into(),
        }
    }
}

/// The registry's state is in use further up the stack: the only JS the
/// core itself calls is `crypto.getRandomValues`, so this is that function
/// (replaced by the page) calling back into the registry. A unit, so the
/// many generic users of the state stay small; it becomes a [`Failure`]
/// where it is thrown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Busy;

impl From<Busy> for Failure {
    fn from(_: Busy) -> Failure {
        Failure::toolmark(
            ThrownErrorCode::ReentrantCall,
            "Toolmark: the registry was called back while it was updating itself \
             (from crypto.getRandomValues); call it again after that returns",
        )
    }
}

impl From<Busy> for JsValue {
    fn from(busy: Busy) -> JsValue {
        Failure::from(busy).into()
    }
}

impl From<CoreError> for Failure {
    fn from(error: CoreError) -> Failure {
        Failure::toolmark(error.code, error.message)
    }
}

impl From<Failure> for JsValue {
    fn from(failure: Failure) -> JsValue {
        match failure {
            Failure::Toolmark { code, message } => {
                JsToolmarkError::new(code.as_str(), &message).into()
            }
            Failure::Misuse(message) => {
                JsToolmarkError::new(ThrownErrorCode::InvalidArgument.as_str(), &message).into()
            }
        }
    }
}

/// A failure nobody called for (a timer's, a settled promise's): thrown
/// from a microtask of its own, where the host reports it as any uncaught
/// error.
pub fn report(failure: impl Into<Failure>) {
    host::throw_in_microtask(failure.into().into());
}

/// A `ToolmarkError` with `code` and `message`, to throw or reject with.
pub fn thrown(code: impl Into<Code>, message: &str) -> JsValue {
    JsToolmarkError::new(code.into().as_str(), message).into()
}
