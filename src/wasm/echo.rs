//! `echoTransport(options)`: the driver of the policy in
//! [`crate::transport::echo`]. It owns the JS side (the app's Laravel Echo
//! instance and its channel, the listeners, `headers()` and `fetch`); every
//! decision is the policy's.
//!
//! - **In**: `echo.private(channel)` at construction, then per `onMessage`
//!   one listener given to `channel.listen(event, listener)`, removed with
//!   `channel.stopListening(event, listener)` on unsubscribe or close; one
//!   called after that (Pusher calls the listeners an event began with)
//!   delivers nothing, and the collector frees it once Echo lets go. While
//!   listening, a listener holds the transport (as a JS transport's
//!   closures would); close breaks that.
//!   Close leaves `private-{channel}` with `echo.leaveChannel`, or the
//!   channel with `echo.leave` where that is all there is, when the policy
//!   says so ([`ChannelHolds`]): Echo shares one subscription per channel,
//!   so the last transport holding it leaves it, and none leaves a channel
//!   the app had joined first (found in `echo.connector.channels`).
//! - **Out**: each `send` reads `headers()`, asks the policy for the
//!   request and calls `fetch(url, init)` (the `fetch` option, else
//!   `globalThis.fetch` looked up at that send, so pages, workers,
//!   extensions and Node work alike); `init` is a `RequestInit` with the
//!   headers as a record, the shape the `fetch` option's declaration
//!   promises. The returned promise rejects with an `Error` for a
//!   network error (its `cause` is fetch's) or a non-2xx status, which the
//!   bridge reports as `transport_failed`.
//! - **Status**: the channel's `subscribed` and `error` callbacks and
//!   `echo.connector.onConnectionChange` (Laravel Echo 2; older Echos
//!   tell only the subscription) are reported to the policy, whose states
//!   `onStatus` subscribers are told; those callbacks hold the transport
//!   weakly and are freed by the collector with Echo's hold on them. Close
//!   removes the connection listener.
//! - **Re-entrancy**: a `RefCell` is borrowed only around Rust code, never
//!   while JS runs, so a callback may `send`, unsubscribe or `close`. A
//!   subscriber that throws stops neither the others (Pusher calls the
//!   listeners in one loop) nor the connection: its error is reported as
//!   the host reports an uncaught one ([`host::report_uncaught`]).

use crate::prelude::*;
use alloc::rc::Rc;
use core::cell::{Cell, RefCell};
use js_sys::{Array, Function, Object, Promise, Reflect};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::RequestInit;

use super::error::thrown;
use super::host::{self, get};
use super::status::{self, Subscribers};
use super::values;
use crate::given::status_code;
use crate::protocol::ThrownErrorCode;
use crate::transport::echo::{
    is_wrapped, response_outcome, ChannelHolds, ConfigError, EchoConnection, EchoOptions,
    EchoPolicy, SendFailure,
};

std::thread_local! {
    /// The channels this module's transports hold, by the channel object
    /// `echo.private(channel)` returned.
    static HOLDS: RefCell<ChannelHolds<JsValue>> = const { RefCell::new(ChannelHolds::new()) };
}

fn type_error(error: ConfigError) -> JsValue {
    thrown(error.thrown_code(), &error.message())
}

fn send_error(failure: &SendFailure) -> js_sys::Object {
    thrown(failure.thrown_code(), &failure.message()).unchecked_into()
}

/// One `onMessage` subscriber: its callback and the listener Echo holds.
struct Listener {
    id: u32,
    callback: Function,
    listener: Function,
}

struct Driver {
    policy: RefCell<EchoPolicy>,
    echo: JsValue,
    /// What `echo.private(channel)` returned.
    channel: JsValue,
    event: JsValue,
    headers: Option<Function>,
    /// `None`: `globalThis.fetch`, looked up at each send.
    fetch: Option<Function>,
    listeners: RefCell<Vec<Listener>>,
    next_listener: Cell<u32>,
    statuses: Rc<Subscribers>,
    /// What `onConnectionChange` returned.
    off_connection: RefCell<Option<Function>>,
}

impl Driver {
    /// Tells the `onStatus` subscribers every state the policy queued.
    fn tell(&self) {
        loop {
            let Some(state) = self.policy.borrow_mut().poll_status() else {
                return;
            };
            self.statuses.tell(&state);
        }
    }

    /// Echo's reports to the policy: the channel's `subscribed` and
    /// `error`, the connection's changes.
    fn watch(self: &Rc<Self>) {
        let subscribed = self.channel.clone();
        if get(&get(&subscribed, "subscription"), "subscribed").is_truthy() {
            self.policy.borrow_mut().handle_subscribed();
        }
        let weak = Rc::downgrade(self);
        let on = move |f: fn(&Driver, JsValue)| {
            let weak = weak.clone();
            host::callback(move |value, _| {
                if let Some(driver) = weak.upgrade() {
                    f(&driver, value);
                    driver.tell();
                }
                Ok(JsValue::UNDEFINED)
            })
            .into_js_value()
        };
        let on_subscribed = on(|d, _| d.policy.borrow_mut().handle_subscribed());
        let on_error = on(|d, error| {
            let status = get(&error, "status").as_f64().and_then(status_code);
            d.policy.borrow_mut().handle_subscription_error(status);
        });
        let on_connection = on(|d, name| {
            if let Some(connection) = name.as_string().as_deref().and_then(EchoConnection::parse) {
                d.policy.borrow_mut().handle_connection(connection);
            }
        });
        for (method, callback) in [("subscribed", &on_subscribed), ("error", &on_error)] {
            if let Some(f) = host::method(&self.channel, method) {
                let _ = f.call1(&self.channel, callback);
            }
        }
        let connector = get(&self.echo, "connector");
        if let Some(f) = host::method(&self.echo, "connectionStatus") {
            if let Ok(name) = f.call0(&self.echo) {
                let pusher = get(&get(&connector, "pusher"), "connection");
                let first = EchoConnection::first(
                    name.as_string().as_deref(),
                    get(&pusher, "state").as_string().as_deref(),
                );
                if let Some(connection) = first {
                    self.policy.borrow_mut().handle_connection(connection);
                }
            }
        }
        if let Some(f) = host::method(&connector, "onConnectionChange") {
            if let Ok(off) = f.call1(&connector, &on_connection) {
                *self.off_connection.borrow_mut() = host::function(off);
            }
        }
        self.tell();
    }

    fn is_closed(&self) -> bool {
        self.policy.borrow().is_closed()
    }

    fn channel_call(&self, method: &str, listener: &JsValue) -> Result<JsValue, JsValue> {
        match host::method(&self.channel, method) {
            Some(f) => f.call2(&self.channel, &self.event, listener),
            None => Err(thrown(ThrownErrorCode::InvalidArgument, "echoTransport: the channel from echo.private(channel) has no listen and stopListening")),
        }
    }

    /// A broadcast: its message to subscriber `id`.
    fn deliver(&self, id: u32, payload: &JsValue) {
        let callback = self
            .listeners
            .borrow()
            .iter()
            .find(|l| l.id == id)
            .map(|l| l.callback.clone());
        let Some(callback) = callback else {
            return;
        };
        // The payload's shape is read by guarded calls (the app's Echo may
        // hand over anything, a proxy too); one whose reading throws is
        // dropped.
        let message_key = JsValue::from_str("message");
        let wrapped = if payload.is_object() {
            let shape = host::is_array(payload).and_then(|array| {
                Ok(!array
                    && is_wrapped(
                        true,
                        host::has_own(payload, &message_key)?,
                        host::has_own(payload, &JsValue::from_str("protocol"))?,
                    ))
            });
            match shape {
                Ok(wrapped) => wrapped,
                Err(_) => return,
            }
        } else {
            false
        };
        let message = if wrapped {
            match Reflect::get(payload, &message_key) {
                Ok(message) => message,
                Err(_) => return,
            }
        } else {
            payload.clone()
        };
        host::call_reporting(&callback, &message);
    }

    fn subscribe(self: &Rc<Self>, callback: Function) -> Result<JsValue, JsValue> {
        if self.is_closed() {
            return Ok(host::js_function(|| {}).into());
        }
        let id = self.next_listener.get().wrapping_add(1);
        self.next_listener.set(id);
        let driver = self.clone();
        let listener: Function = host::callback(move |payload, _| {
            driver.deliver(id, &payload);
            Ok(JsValue::UNDEFINED)
        })
        .into_js_value()
        .unchecked_into();
        self.channel_call("listen", &listener)?;
        self.listeners.borrow_mut().push(Listener {
            id,
            callback,
            listener,
        });
        let weak = Rc::downgrade(self);
        Ok(host::js_function(move || {
            if let Some(driver) = weak.upgrade() {
                driver.unsubscribe(id);
            }
        })
        .into())
    }

    fn unsubscribe(&self, id: u32) {
        let listener = {
            let mut listeners = self.listeners.borrow_mut();
            let at = listeners.iter().position(|l| l.id == id);
            at.map(|at| listeners.remove(at))
        };
        if let Some(listener) = listener {
            let _ = self.channel_call("stopListening", &listener.listener);
        }
    }

    fn close(&self) {
        if !self.policy.borrow_mut().close() {
            return;
        }
        let off = self.off_connection.borrow_mut().take();
        if let Some(off) = off {
            let _ = off.call0(&JsValue::NULL);
        }
        self.tell();
        self.statuses.clear();
        let listeners = core::mem::take(&mut *self.listeners.borrow_mut());
        for listener in &listeners {
            let _ = self.channel_call("stopListening", &listener.listener);
        }
        drop(listeners);
        let leaves = HOLDS
            .try_with(|holds| {
                holds
                    .try_borrow_mut()
                    .is_ok_and(|mut holds| holds.release(&self.channel))
            })
            .unwrap_or(false);
        if !leaves {
            return;
        }
        let (private_name, name) = {
            let policy = self.policy.borrow();
            (
                JsValue::from_str(&policy.leave_channel_name()),
                JsValue::from_str(policy.channel()),
            )
        };
        if let Some(leave) = host::method(&self.echo, "leaveChannel") {
            let _ = leave.call1(&self.echo, &private_name);
        } else if let Some(leave) = host::method(&self.echo, "leave") {
            let _ = leave.call1(&self.echo, &name);
        }
    }

    /// Everything up to the `fetch` call; its promise, mapped by the policy.
    fn send(&self, message: &JsValue) -> Result<Promise, JsValue> {
        if self.is_closed() {
            return Err(send_error(&SendFailure::Closed).into());
        }
        let body = JsValue::from(js_sys::JSON::stringify(message)?)
            .as_string()
            .ok_or_else(|| send_error(&SendFailure::NotJson))?;
        let mut app_headers: Vec<(String, String)> = Vec::new();
        if let Some(headers) = &self.headers {
            let record = headers.call0(&JsValue::UNDEFINED)?;
            if record.is_object() {
                for entry in host::entries(&record)?.iter() {
                    let entry: &Array = entry.unchecked_ref();
                    app_headers.push((host::string(&entry.get(0)), host::string(&entry.get(1))));
                }
            }
        }
        let (url, init) = {
            let policy = self.policy.borrow();
            let request = policy
                .request(body, &app_headers)
                .map_err(|f| JsValue::from(send_error(&f)))?;
            let headers = Object::new();
            for (name, value) in &request.headers {
                host::set(&headers, name, &JsValue::from_str(value));
            }
            let init = RequestInit::new();
            init.set_method(request.method);
            // As the policy's request says (`RequestInit`'s setters take
            // web-sys enums; the strings are the same values).
            host::set(
                &init,
                "credentials",
                &JsValue::from_str(request.credentials),
            );
            host::set(&init, "redirect", &JsValue::from_str(request.redirect));
            init.set_headers_record_from_str_to_str(&headers);
            init.set_body(&JsValue::from_str(&request.body));
            (String::from(request.url), init)
        };
        let global = host::global();
        let (fetch, this) = match &self.fetch {
            Some(fetch) => (fetch.clone(), JsValue::UNDEFINED),
            None => (
                host::method(&global, "fetch")
                    .ok_or_else(|| JsValue::from(send_error(&SendFailure::NoFetch)))?,
                global,
            ),
        };
        let sent = fetch.call2(&this, &JsValue::from_str(&url), &init)?;
        let settled: Function = host::callback(move |fulfilled, value| {
            let status = if fulfilled.is_truthy() {
                host::present(value.clone())
                    .and_then(|response| get(&response, "status").as_f64())
                    .and_then(status_code)
            } else {
                None
            };
            response_outcome(&url, status)
                .map(|()| JsValue::UNDEFINED)
                .map_err(|failure| {
                    let error = send_error(&failure);
                    if !fulfilled.is_truthy() {
                        host::set(&error, "cause", &value);
                    }
                    error.into()
                })
        })
        .into_js_value()
        .unchecked_into();
        let sent: JsValue = Promise::resolve(&sent).into();
        let then = host::method(&sent, "then").ok_or(JsValue::UNDEFINED)?;
        let chained = then.call2(
            &sent,
            &settled.bind1(&JsValue::NULL, &JsValue::TRUE),
            &settled.bind1(&JsValue::NULL, &JsValue::FALSE),
        )?;
        Ok(chained.unchecked_into())
    }
}

/// What `echoTransport` returns: `send`, `onMessage`, `close`.
#[wasm_bindgen]
pub struct EchoTransport {
    driver: Rc<Driver>,
}

/// `echoTransport({ echo, channel, event?, postUrl?, headers?, fetch? })`.
#[wasm_bindgen(js_name = echoTransport)]
pub fn echo_transport(options: JsValue) -> Result<EchoTransport, JsValue> {
    let echo = get(&options, "echo");
    let private = get(&echo, "private");
    let headers = get(&options, "headers");
    let fetch = get(&options, "fetch");
    let page_href = get(&get(&host::global(), "location"), "href").as_string();
    let given = EchoOptions {
        echo_private: values::given(&private),
        channel: values::given(&get(&options, "channel")),
        event: values::given(&get(&options, "event")),
        post_url: values::given_url(&get(&options, "postUrl")),
        headers: values::given(&headers),
        fetch: values::given(&fetch),
    };
    let policy = EchoPolicy::from_options(&given, page_href.as_deref()).map_err(type_error)?;
    // Private channels only: the server authorizes them.
    let private: &Function = private.unchecked_ref();
    let joined = get(
        &get(&get(&echo, "connector"), "channels"),
        &policy.leave_channel_name(),
    )
    .is_object();
    let subscription = private.call1(&echo, &JsValue::from_str(policy.channel()))?;
    let _ = HOLDS.try_with(|holds| {
        if let Ok(mut holds) = holds.try_borrow_mut() {
            holds.hold(subscription.clone(), joined);
        }
    });
    let event = JsValue::from_str(policy.event());
    let driver = Rc::new(Driver {
        policy: RefCell::new(policy),
        echo,
        channel: subscription,
        event,
        headers: host::function(headers),
        fetch: host::function(fetch),
        listeners: RefCell::new(Vec::new()),
        next_listener: Cell::new(0),
        statuses: Rc::default(),
        off_connection: RefCell::new(None),
    });
    driver.watch();
    Ok(EchoTransport { driver })
}

#[wasm_bindgen]
impl EchoTransport {
    /// POSTs `message` as JSON; rejects on a network error or a non-2xx
    /// status (the bridge reports `transport_failed`), and once closed.
    pub fn send(&self, message: JsValue) -> Promise {
        self.driver
            .send(&message)
            .unwrap_or_else(|error| Promise::reject(&error))
    }

    /// Calls `callback(message)` with each broadcast's message (a
    /// `{ message }` payload unwrapped); returns its unsubscribe.
    #[wasm_bindgen(js_name = onMessage, unchecked_return_type = "() => void")]
    pub fn on_message(&self, callback: JsValue) -> Result<JsValue, JsValue> {
        let Some(callback) = host::function(callback) else {
            return Err(thrown(
                ThrownErrorCode::InvalidArgument,
                "echoTransport: onMessage(callback) needs a function",
            ));
        };
        self.driver.subscribe(callback)
    }

    /// The connection state now: `connecting` until the private channel is
    /// subscribed, then `open`; `closed` when Echo loses its connection or
    /// the subscription is refused, terminal after `close()`.
    #[wasm_bindgen(getter)]
    pub fn status(&self) -> JsValue {
        status::to_js(self.driver.policy.borrow().status())
    }

    /// Calls `callback(status)` with each new connection state; returns
    /// its unsubscribe.
    #[wasm_bindgen(js_name = onStatus, unchecked_return_type = "() => void")]
    pub fn on_status(&self, callback: JsValue) -> Result<Function, JsValue> {
        self.driver.statuses.subscribe(
            callback,
            self.driver.is_closed(),
            "echoTransport: onStatus(callback) needs a function",
        )
    }

    /// Stops for good: stops listening, leaves the channel, ends sending.
    pub fn close(&self) {
        self.driver.close();
    }
}
