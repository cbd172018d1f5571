//! A transport's connection state ([`crate::transport::status`]) as a JS
//! object and back, and the `onStatus` subscribers every transport driver
//! keeps. It converts; what a state means is the core's.

use crate::prelude::*;
use alloc::rc::{Rc, Weak};
use core::cell::{Cell, RefCell};
use js_sys::Function;
use wasm_bindgen::prelude::*;

use super::error::thrown;
use super::host::{self, get};
use crate::protocol::ThrownErrorCode;
use crate::transport::status::{Status, StatusParts};

/// `{ state, attempt?, delayMs?, code?, reason?, terminal? }`.
pub fn to_js(status: &Status) -> JsValue {
    let out = host::object(&[("state", &JsValue::from_str(status.state()))]);
    match status {
        Status::Connecting { attempt } => host::set(&out, "attempt", &JsValue::from(*attempt)),
        Status::Open => {}
        Status::Reconnecting { attempt, delay_ms } => {
            host::set(&out, "attempt", &JsValue::from(*attempt));
            if let Some(ms) = delay_ms {
                #[allow(clippy::cast_precision_loss)]
                host::set(&out, "delayMs", &JsValue::from_f64(*ms as f64));
            }
        }
        Status::Closed {
            code,
            reason,
            terminal,
        } => {
            if let Some(code) = code {
                host::set(&out, "code", &JsValue::from(*code));
            }
            host::set(&out, "reason", &JsValue::from_str(reason));
            host::set(&out, "terminal", &JsValue::from_bool(*terminal));
        }
    }
    out.into()
}

/// A state an app's transport reported, if it describes one.
pub fn from_js(value: &JsValue) -> Option<Status> {
    Status::from_parts(StatusParts {
        state: get(value, "state").as_string(),
        attempt: get(value, "attempt").as_f64(),
        delay_ms: get(value, "delayMs").as_f64(),
        code: get(value, "code").as_f64(),
        reason: get(value, "reason").as_string(),
        terminal: get(value, "terminal").as_bool(),
    })
}

/// A transport's subscribers (its `onStatus` ones, and the WebSocket
/// driver's `onMessage` ones), in the order they subscribed. A `RefCell`
/// borrowed only around Rust code, never while a subscriber runs, so one
/// may subscribe, unsubscribe or close from its callback.
#[derive(Default)]
pub struct Subscribers {
    list: RefCell<Vec<(u32, Function)>>,
    next: Cell<u32>,
}

impl Subscribers {
    /// `onStatus(callback)` / `onMessage(callback)`: subscribes it unless
    /// the transport has `stopped`; returns its unsubscribe, which holds
    /// the list weakly. `refusal` is the error text for a callback that is
    /// not a function.
    pub fn subscribe(
        self: &Rc<Self>,
        callback: JsValue,
        stopped: bool,
        refusal: &'static str,
    ) -> Result<Function, JsValue> {
        let Some(callback) = host::function(callback) else {
            return Err(thrown(ThrownErrorCode::InvalidArgument, refusal));
        };
        if stopped {
            return Ok(host::js_function(|| {}));
        }
        let id = self.next.get().wrapping_add(1);
        self.next.set(id);
        self.list.borrow_mut().push((id, callback));
        let weak: Weak<Subscribers> = Rc::downgrade(self);
        Ok(host::js_function(move || {
            let Some(list) = weak.upgrade() else { return };
            let gone = {
                let mut list = list.list.borrow_mut();
                list.iter()
                    .position(|(s, _)| *s == id)
                    .map(|at| list.remove(at))
            };
            drop(gone);
        }))
    }

    /// Whether anyone is subscribed (postMessage watches its target then).
    #[cfg(feature = "post-message")]
    pub fn is_watched(&self) -> bool {
        !self.list.borrow().is_empty()
    }

    /// `visit` with each subscriber still subscribed when its turn comes.
    pub fn each(&self, mut visit: impl FnMut(&Function)) {
        let snapshot = self.list.borrow().clone();
        for (id, callback) in snapshot {
            if self.list.borrow().iter().any(|(s, _)| *s == id) {
                visit(&callback);
            }
        }
    }

    /// Calls each subscriber with the state; one that throws is reported
    /// as uncaught and stops no other.
    pub fn tell(&self, status: &Status) {
        if self.list.borrow().is_empty() {
            return;
        }
        let value = to_js(status);
        self.each(|callback| host::call_reporting(callback, &value));
    }

    /// Drops every subscriber (the transport stopped).
    pub fn clear(&self) {
        let gone = core::mem::take(&mut *self.list.borrow_mut());
        drop(gone);
    }
}
