//! `postMessageTransport(options)`: the driver of the policy in
//! [`crate::transport::post_message`]. It owns the JS side (the target
//! window, the event source and the `message` listeners); which origins and
//! events are accepted is the policy's.
//!
//! - **Inbound**: per `onMessage` callback one listener on `source`; an
//!   event is read only when `event.source === target` and its `origin` is
//!   allowed, then its `data` must be the envelope (checked on the JS value,
//!   [`EnvelopeShape`]) and the callback gets `data.message` as it came;
//!   but when `target` is `source` (the window the transport listens on),
//!   a page → agent message is its own post heard back, and ignored
//!   ([`echoes_own_post`]).
//! - **Outbound**: `target.postMessage({ toolmark: 1, message }, targetOrigin)`.
//! - **Listeners**: its unsubscribe and `close()` remove each with
//!   `removeEventListener`; one a source still calls after that (one that
//!   dispatches to the listeners an event began with) ignores the event,
//!   and the collector frees it once the source lets go.
//! - **Re-entrancy**: a `RefCell` is borrowed only around Rust code, never
//!   while JS runs, so a callback may `send`, unsubscribe or `close`; a
//!   listener removed or closed while an event is dispatched ignores it. A
//!   subscriber that throws is reported as the host reports an uncaught
//!   error ([`host::report_uncaught`]), as the three Rust transports do.
//! - **Status**: `open` until `close()` or until the target window is found
//!   closed (`target.closed === true`: before each send, and every
//!   second while an `onStatus` subscriber is there); then the listeners
//!   are removed as `close()` removes them.
//! - **Globals**: the default `source` is `globalThis` (a page, a worker,
//!   an extension page); nothing else global is used.

use crate::prelude::*;
use alloc::rc::{Rc, Weak};
use core::cell::{Cell, RefCell};
use js_sys::Function;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::error::thrown;
use super::host::{self, get};
use super::status::{self, Subscribers};
use super::values;
use crate::given::Given;
use crate::protocol::ThrownErrorCode;
use crate::timer;
use crate::transport::post_message::{
    echoes_own_post, ConfigError, EnvelopeShape, MessageSource, PostMessageOptions,
    PostMessagePolicy, Sender, ENVELOPE_VERSION,
};

fn type_error(error: &ConfigError) -> JsValue {
    thrown(error.thrown_code(), &error.message())
}

/// An option value as the policy reads it: a string or a `URL` as its text
/// (a `URL`'s always has a path, so the refusal names it), anything else as
/// its `JSON.stringify` (which is never a serialized origin).
fn origin_text(value: &JsValue) -> String {
    match values::given_url(value) {
        Given::Text(text) => text,
        _ => values::copy_text(value).unwrap_or_else(|| String::from("undefined")),
    }
}

struct Driver {
    policy: RefCell<PostMessagePolicy>,
    target: JsValue,
    source: JsValue,
    /// `target === source`: the transport hears its own posts.
    to_own_window: bool,
    listeners: RefCell<Vec<(u32, Function)>>,
    next_listener: Cell<u32>,
    statuses: Rc<Subscribers>,
    /// The armed check of the target window, if any.
    check: RefCell<Option<JsValue>>,
}

impl Driver {
    /// Stops after `close()` or a target found closed: the listeners
    /// removed, the check cleared, the state told, the subscribers dropped.
    fn stopped(&self) {
        let listeners = core::mem::take(&mut *self.listeners.borrow_mut());
        self.remove(listeners);
        if let Some(check) = self.check.borrow_mut().take() {
            host::clear_timeout(&check);
        }
        let state = self.policy.borrow_mut().poll_status();
        if let Some(state) = state {
            self.statuses.tell(&state);
        }
        self.statuses.clear();
    }

    /// Whether the target window of a running transport is found closed
    /// (then the transport stops).
    fn target_gone(&self) -> bool {
        if self.policy.borrow().is_closed() || get(&self.target, "closed") != JsValue::TRUE {
            return false;
        }
        self.policy.borrow_mut().handle_target_closed();
        self.stopped();
        true
    }

    /// The next check of the target window, when the policy wants one and
    /// none is armed.
    fn arm_check(self: &Rc<Self>) {
        if self.check.borrow().is_some() {
            return;
        }
        let watched = self.statuses.is_watched();
        let window = get(&self.target, "closed").as_bool().is_some();
        let now = host::now_ms(None);
        let Some(at) = self.policy.borrow().next_check(now, watched, window) else {
            return;
        };
        let weak = Rc::downgrade(self);
        let callback = host::callback(move |_, _| {
            if let Some(driver) = weak.upgrade() {
                driver.check.borrow_mut().take();
                if !driver.target_gone() {
                    driver.arm_check();
                }
            }
            Ok(JsValue::UNDEFINED)
        })
        .into_js_value();
        let delay = timer::delay_ms(at, now);
        *self.check.borrow_mut() = host::set_timeout(callback.unchecked_ref(), delay);
    }

    /// `source.removeEventListener('message', listener)` for each.
    fn remove(&self, listeners: Vec<(u32, Function)>) {
        if let Some(remove) = host::method(&self.source, "removeEventListener") {
            for (_, listener) in &listeners {
                let _ = remove.call2(&self.source, &JsValue::from_str("message"), listener);
            }
        }
    }

    /// The message of an event the policy accepts, or `None`.
    fn accept(&self, event: &JsValue) -> Option<JsValue> {
        let origin = get(event, "origin").as_string()?;
        let sender = Sender {
            delivered: get(event, "isTrusted").as_bool() != Some(false),
            from_target: get(event, "source") == self.target,
            origin: &origin,
        };
        if !self.policy.borrow().accepts_sender(&sender) {
            return None;
        }
        // A page script can dispatch a `MessageEvent` whose data is
        // anything, a proxy too: its shape is read by guarded calls, and
        // data whose reading throws is dropped.
        let data = get(event, "data");
        let plain = data.is_object() && !host::is_array(&data).unwrap_or(true);
        let own =
            |key: &str| plain && host::has_own(&data, &JsValue::from_str(key)).unwrap_or(false);
        let version = own(EnvelopeShape::VERSION_KEY)
            .then(|| get(&data, EnvelopeShape::VERSION_KEY).as_f64())
            .flatten();
        if !EnvelopeShape::holds(plain, version, own(EnvelopeShape::MESSAGE_KEY)) {
            return None;
        }
        let message = get(&data, EnvelopeShape::MESSAGE_KEY);
        let own = self.to_own_window
            && echoes_own_post(true, get(&message, "type").as_string().as_deref());
        (!own).then_some(message)
    }
}

/// What `postMessageTransport` returns: `send`, `onMessage`, `close`.
#[wasm_bindgen]
pub struct PostMessageTransport {
    driver: Rc<Driver>,
}

/// `postMessageTransport({ target, targetOrigin, allowedOrigins, source? })`.
#[wasm_bindgen(js_name = postMessageTransport)]
pub fn post_message_transport(options: JsValue) -> Result<PostMessageTransport, JsValue> {
    let target = get(&options, "target");
    let source = get(&options, "source");
    let global = host::global();
    let listens = |on: &JsValue| {
        ["addEventListener", "removeEventListener"].map(|key| values::given(&get(on, key)))
    };
    let given = PostMessageOptions {
        target_post_message: values::given(&get(&target, "postMessage")),
        target_origin: origin_text(&get(&options, "targetOrigin")),
        allowed_origins: values::given_list(&get(&options, "allowedOrigins"), origin_text),
        source_listens: listens(&source),
        global_listens: listens(&global),
        source: values::given(&source),
    };
    let (policy, from) = PostMessagePolicy::from_options(&given).map_err(|e| type_error(&e))?;
    let source = match from {
        MessageSource::Given => source,
        MessageSource::Global => global,
    };
    let to_own_window = target == source;
    Ok(PostMessageTransport {
        driver: Rc::new(Driver {
            policy: RefCell::new(policy),
            target,
            source,
            to_own_window,
            listeners: RefCell::new(Vec::new()),
            next_listener: Cell::new(0),
            statuses: Rc::default(),
            check: RefCell::new(None),
        }),
    })
}

#[wasm_bindgen]
impl PostMessageTransport {
    /// Posts `{ toolmark: 1, message }` to the target with the exact
    /// `targetOrigin`. Throws once closed.
    pub fn send(&self, message: JsValue) -> Result<(), JsValue> {
        self.driver.target_gone();
        let origin = {
            let policy = self.driver.policy.borrow();
            if let Err(error) = policy.check_send() {
                return Err(thrown(error.thrown_code(), error.message()));
            }
            JsValue::from_str(policy.target_origin())
        };
        #[allow(clippy::cast_precision_loss)]
        let version = JsValue::from_f64(ENVELOPE_VERSION as f64);
        let envelope = host::object(&[
            (EnvelopeShape::VERSION_KEY, &version),
            (EnvelopeShape::MESSAGE_KEY, &message),
        ]);
        let target = &self.driver.target;
        let Some(post) = host::method(target, "postMessage") else {
            return Err(type_error(&ConfigError::Target));
        };
        post.call2(target, &envelope, &origin)?;
        Ok(())
    }

    /// Calls `callback(message)` with each accepted message; returns its unsubscribe.
    #[wasm_bindgen(js_name = onMessage, unchecked_return_type = "() => void")]
    pub fn on_message(&self, callback: JsValue) -> Result<JsValue, JsValue> {
        let driver = &self.driver;
        let Some(callback) = host::function(callback) else {
            return Err(thrown(
                ThrownErrorCode::InvalidArgument,
                "postMessageTransport: onMessage(callback) needs a function",
            ));
        };
        if driver.policy.borrow().is_closed() {
            return Ok(host::js_function(|| {}).into());
        }
        // Strong: while it is attached, the source's listener keeps the
        // transport alive, as a JS closure would (until close or unsubscribe).
        let owner = driver.clone();
        let id = driver.next_listener.get().wrapping_add(1);
        driver.next_listener.set(id);
        let listener: Function = host::callback(move |event, _| {
            if !owner.listeners.borrow().iter().any(|(l, _)| *l == id) {
                return Ok(JsValue::UNDEFINED);
            }
            if let Some(message) = owner.accept(&event) {
                host::call_reporting(&callback, &message);
            }
            Ok(JsValue::UNDEFINED)
        })
        .into_js_value()
        .unchecked_into();
        if let Some(add) = host::method(&driver.source, "addEventListener") {
            add.call2(&driver.source, &JsValue::from_str("message"), &listener)?;
        }
        driver.listeners.borrow_mut().push((id, listener));
        let weak: Weak<Driver> = Rc::downgrade(driver);
        Ok(host::js_function(move || {
            let Some(driver) = weak.upgrade() else { return };
            let removed = {
                let mut listeners = driver.listeners.borrow_mut();
                let at = listeners.iter().position(|(l, _)| *l == id);
                at.map(|at| listeners.remove(at))
            };
            if let Some(listener) = removed {
                driver.remove(vec![listener]);
            }
        })
        .into())
    }

    /// The connection state now: `open`, or `closed` (terminal) after
    /// `close()` or once the target window is found closed.
    #[wasm_bindgen(getter)]
    pub fn status(&self) -> JsValue {
        self.driver.target_gone();
        status::to_js(self.driver.policy.borrow().status())
    }

    /// Calls `callback(status)` with each new connection state; returns its
    /// unsubscribe. While one is subscribed, a target window is checked
    /// every second.
    #[wasm_bindgen(js_name = onStatus, unchecked_return_type = "() => void")]
    pub fn on_status(&self, callback: JsValue) -> Result<Function, JsValue> {
        let off = self.driver.statuses.subscribe(
            callback,
            self.driver.policy.borrow().is_closed(),
            "postMessageTransport: onStatus(callback) needs a function",
        )?;
        self.driver.arm_check();
        Ok(off)
    }

    /// Stops sending and accepting; removes every listener.
    pub fn close(&self) {
        self.driver.policy.borrow_mut().close();
        self.driver.stopped();
    }
}
