//! A transport's connection state ([`crate::transport::status`]) as a JS
//! object and back, and the `onStatus` subscribers every transport driver
//! keeps. It converts; what a state means is the core's.

use crate::prelude::*;
use js_sys::Function;
use wasm_bindgen::prelude::*;

use super::host::{self, get};
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

/// A transport's `onStatus` subscribers, in the order they subscribed.
#[derive(Default)]
pub struct Subscribers {
    list: Vec<(u32, Function)>,
    next: u32,
}

impl Subscribers {
    /// Adds `callback`; returns its id for [`Subscribers::remove`].
    pub fn add(&mut self, callback: Function) -> u32 {
        self.next = self.next.wrapping_add(1);
        self.list.push((self.next, callback));
        self.next
    }

    /// Removes a subscriber, returned to be dropped after the borrow.
    pub fn remove(&mut self, id: u32) -> Option<(u32, Function)> {
        let at = self.list.iter().position(|(s, _)| *s == id)?;
        Some(self.list.remove(at))
    }

    pub fn snapshot(&self) -> Vec<(u32, Function)> {
        self.list.clone()
    }

    pub fn contains(&self, id: u32) -> bool {
        self.list.iter().any(|(s, _)| *s == id)
    }

    pub fn clear(&mut self) -> Vec<(u32, Function)> {
        core::mem::take(&mut self.list)
    }
}

/// Calls each subscriber of `snapshot` still subscribed (`still`) with
/// the state; one that throws is reported as uncaught and stops no other.
pub fn notify(snapshot: Vec<(u32, Function)>, status: &Status, still: impl Fn(u32) -> bool) {
    if snapshot.is_empty() {
        return;
    }
    let value = to_js(status);
    for (id, callback) in snapshot {
        if !still(id) {
            continue;
        }
        if let Err(error) = callback.call1(&JsValue::UNDEFINED, &value) {
            host::report_uncaught(&error);
        }
    }
}
