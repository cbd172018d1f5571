//! `websocketTransport(options)`: the web-sys-style driver of the policy in
//! [`crate::transport::websocket`]. It owns the JS side and nothing else:
//! the socket, its four listeners, the reconnect timer, the `onOpen` call
//! and the transport's subscribers; every decision is the policy's.
//!
//! - **Listeners**: `open`, `message`, `close` and `error` are `Closure`s
//!   kept with the socket ([`Socket`]) and removed with
//!   `removeEventListener` at its `close` event (for a socket this side
//!   closed, [`Action::Close`], too), then freed; none is forgotten. The
//!   `error` one does nothing (a `close` follows) but is needed: the `ws`
//!   package throws an `error` event nobody listens to.
//! - **Frames**: `binaryType = 'arraybuffer'`; a text frame's `length` is
//!   read on the JS string before it is copied into wasm memory, so a frame
//!   the policy would drop unread (over the limit, a stale socket's) never
//!   is ([`WebSocketPolicy::reads`]); the policy drops binary, oversized
//!   and non-JSON frames. A frame's text crosses once, at its exact UTF-8
//!   length ([`frame_text`]).
//! - **Subscribers**: a bridge ([`subscribe_raw`]) gets each frame's text
//!   as it came (the Rust parser reads it; no `JSON.parse`, no
//!   `JSON.stringify`); a JS `onMessage` callback gets `JSON.parse(text)`,
//!   parsed once per frame for all of them.
//! - **Lifetime**: while the transport runs, its socket's listeners and its
//!   timer hold it (as a JS transport's closures would); the stop (close(),
//!   a terminal close code, a rejecting `onOpen`) drops the timer and the
//!   subscribers, and a socket this side closed keeps its listeners only
//!   until its `close` event. Then nothing holds the transport: it is
//!   freed with its JS object. [`LIVE`] counts the running transports,
//!   [`SOCKETS`] the sockets with listeners attached.
//! - **Re-entrancy**: no `RefCell` borrow is held while JS runs; an action
//!   queued while the actions are carried out (a subscriber that sends)
//!   is carried out by the same loop, in order.

use crate::prelude::*;
use alloc::rc::{Rc, Weak};
use core::cell::{Cell, RefCell};
use core::sync::atomic::{AtomicU32, Ordering};
use js_sys::{Array, Function, JsString};
use wasm_bindgen::convert::TryFromJsValue;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::host::{self, get, Callback};
use crate::transport::websocket::{
    Action, ConfigError, ConnId, Frame, SendAfterStop, WebSocketConfig, WebSocketPolicy,
};

/// Transports created and not stopped yet.
static LIVE: AtomicU32 = AtomicU32::new(0);
/// Inbound frames lost to the bounds on frames held while `onOpen` is
/// pending, by every transport (the policy counts its own).
static HELD_DROPPED: AtomicU32 = AtomicU32::new(0);
/// Sockets whose listeners are attached (the current ones and those
/// closing).
static SOCKETS: AtomicU32 = AtomicU32::new(0);

/// The method a bridge looks for ([`subscribe_raw`]): it returns another
/// JS handle of the same transport, which the bridge takes over.
const RAW_HANDLE: &str = "__toolmarkRawHandle";

#[wasm_bindgen]
extern "C" {
    /// The global `URL` class (for `url instanceof URL`).
    #[wasm_bindgen(js_name = URL)]
    type JsUrl;

    /// The global `TextEncoder`.
    type TextEncoder;

    #[wasm_bindgen(constructor, catch)]
    fn new() -> Result<TextEncoder, JsValue>;

    /// `encoder.encode(text)`: the UTF-8 bytes in a new `Uint8Array` of
    /// exactly their length, outside wasm memory.
    #[wasm_bindgen(method)]
    fn encode(this: &TextEncoder, text: &JsString) -> js_sys::Uint8Array;
}

/// A text frame's UTF-8 bytes, made outside wasm memory
/// (`TextEncoder#encode`, which turns a lone surrogate into U+FFFD as the
/// glue's `encodeInto` does); `None` if the host has no `TextEncoder`
/// (then the glue's string passing is taken).
///
/// The glue's string passing allocates the UTF-16 length, grows to three
/// bytes a unit at the first non-ASCII character and shrinks to fit, each
/// step a fresh block with this module's allocator (up to 6 bytes a unit
/// at once for a frame that is 2 bytes a unit); these bytes are measured
/// first and copied into one block of their size ([`frame_text`]) only if
/// the policy takes them.
fn frame_bytes(text: &JsString) -> Option<js_sys::Uint8Array> {
    Some(TextEncoder::new().ok()?.encode(text))
}

/// The frame's text in wasm memory, copied once.
fn frame_text(bytes: &js_sys::Uint8Array) -> Option<String> {
    String::from_utf8(bytes.to_vec()).ok()
}

fn type_error(error: ConfigError) -> JsValue {
    js_sys::TypeError::new(error.message()).into()
}

/// A subscriber to inbound frames.
#[derive(Clone)]
enum Subscriber {
    /// A bridge: the frame's text.
    Raw(Rc<dyn Fn(&str)>),
    /// A JS `onMessage` callback: `JSON.parse(text)`.
    Js(Function),
}

/// A socket event listener, by event type. The boundary's one closure type
/// ([`Callback`]), so that the module has one invoke shim for all.
type Listener = (&'static str, Callback);

/// The current socket and the listeners it holds.
struct Socket {
    conn: ConnId,
    ws: JsValue,
    listeners: Vec<Listener>,
}

impl Socket {
    fn new(conn: ConnId, ws: JsValue, listeners: Vec<Listener>) -> Socket {
        SOCKETS.fetch_add(1, Ordering::Relaxed);
        Socket {
            conn,
            ws,
            listeners,
        }
    }
}

impl Drop for Socket {
    fn drop(&mut self) {
        SOCKETS.fetch_sub(1, Ordering::Relaxed);
        if let Some(remove) = host::method(&self.ws, "removeEventListener") {
            for (kind, listener) in &self.listeners {
                let _ = remove.call2(&self.ws, &JsValue::from_str(kind), listener.as_ref());
            }
        }
    }
}

/// The armed reconnect timer.
struct Timer {
    at: u64,
    handle: Option<JsValue>,
    /// Kept until the timer is replaced or the transport stops.
    #[allow(dead_code)]
    callback: Callback,
}

impl Drop for Timer {
    fn drop(&mut self) {
        if let Some(handle) = &self.handle {
            host::clear_timeout(handle);
        }
    }
}

#[derive(Default)]
struct Io {
    socket: Option<Socket>,
    /// Sockets this side closed, kept with their listeners until their
    /// `close` event: the `ws` package emits an `error` event after a
    /// close while connecting, and throws when nobody listens.
    closing: Vec<Socket>,
    timer: Option<Timer>,
    subscribers: Vec<(u32, Subscriber)>,
    next_subscriber: u32,
    /// Counted in [`LIVE`] (from the first socket to the stop).
    live: bool,
}

struct Driver {
    policy: RefCell<WebSocketPolicy>,
    io: RefCell<Io>,
    url: JsValue,
    protocols: Option<JsValue>,
    constructor: Function,
    /// Dropped once the transport stops: an `onOpen` that refers to its
    /// own transport would otherwise keep both alive for good.
    on_open: RefCell<Option<Function>>,
    pumping: Cell<bool>,
}

fn now() -> u64 {
    host::now_ms(None)
}

impl Driver {
    fn with_policy<R>(&self, f: impl FnOnce(&mut WebSocketPolicy) -> R) -> Option<R> {
        self.policy.try_borrow_mut().ok().map(|mut p| f(&mut p))
    }

    fn with_io<R: Default>(&self, f: impl FnOnce(&mut Io) -> R) -> R {
        self.io
            .try_borrow_mut()
            .map(|mut io| f(&mut io))
            .unwrap_or_default()
    }

    /// Carries out the policy's actions until there are none, then arms the
    /// timer. A call made while that runs leaves its actions to it.
    fn pump(self: &Rc<Self>) {
        if self.pumping.replace(true) {
            return;
        }
        while let Some(action) = self.with_policy(WebSocketPolicy::poll_action).flatten() {
            self.perform(action);
        }
        self.pumping.set(false);
        if self.with_policy(|p| p.is_stopped()).unwrap_or(true) {
            if let Ok(mut on_open) = self.on_open.try_borrow_mut() {
                on_open.take();
            }
        }
        self.arm_timer();
    }

    fn perform(self: &Rc<Self>, action: Action) {
        match action {
            Action::Connect { conn } => {
                if self.connect(conn).is_err() {
                    self.with_policy(|p| p.handle_connect_failed(conn, now()));
                }
            }
            Action::CallOnOpen { conn } => self.call_on_open(conn),
            Action::Send { conn, text } => {
                let ws = self.with_io(|io| {
                    io.socket
                        .as_ref()
                        .filter(|s| s.conn == conn)
                        .map(|s| s.ws.clone())
                });
                if let Some(ws) = ws {
                    if let Some(send) = host::method(&ws, "send") {
                        let _ = send.call1(&ws, &JsValue::from_str(&text));
                    }
                }
            }
            Action::Deliver { text } => self.deliver(&text),
            Action::Close { conn, code } => {
                let socket = self.with_io(|io| match &io.socket {
                    Some(s) if s.conn == conn => io.socket.take(),
                    _ => None,
                });
                if let Some(socket) = socket {
                    let ws = socket.ws.clone();
                    self.with_io(|io| io.closing.push(socket));
                    if let Some(close) = host::method(&ws, "close") {
                        let _ = match code {
                            Some(code) => close.call1(&ws, &JsValue::from(code)),
                            None => close.call0(&ws),
                        };
                    }
                }
            }
            Action::Stopped { .. } => {
                let (socket, timer, subscribers, live) = self.with_io(|io| {
                    (
                        io.socket.take(),
                        io.timer.take(),
                        core::mem::take(&mut io.subscribers),
                        core::mem::replace(&mut io.live, false),
                    )
                });
                drop((socket, timer, subscribers));
                if live {
                    LIVE.fetch_sub(1, Ordering::Relaxed);
                }
            }
        }
    }

    /// `new WebSocket(url, protocols?)` with its listeners attached.
    fn connect(self: &Rc<Self>, conn: ConnId) -> Result<(), JsValue> {
        let args = Array::new();
        args.push(&self.url);
        if let Some(protocols) = &self.protocols {
            args.push(protocols);
        }
        let ws = js_sys::Reflect::construct(&self.constructor, &args)?;
        // Binary frames are dropped anyway; a Blob read would reorder events.
        let _ = js_sys::Reflect::set(
            &ws,
            &JsValue::from_str("binaryType"),
            &JsValue::from_str("arraybuffer"),
        );
        let mut listeners: Vec<Listener> = Vec::new();
        let driver = self.clone();
        listeners.push((
            "open",
            host::callback(move |_event, _| {
                driver.with_policy(|p| p.handle_open(conn, now()));
                driver.pump();
                Ok(JsValue::UNDEFINED)
            }),
        ));
        let driver = self.clone();
        listeners.push((
            "message",
            host::callback(move |event, _| {
                let data = get(&event, "data");
                let frame = match data.dyn_ref::<JsString>() {
                    Some(text) => {
                        let units = usize::try_from(text.length()).unwrap_or(usize::MAX);
                        if driver.with_policy(|p| p.reads(conn, units)) != Some(true) {
                            Frame::Unread { units, bytes: None }
                        } else if let Some(bytes) = frame_bytes(text) {
                            let len = usize::try_from(bytes.length()).unwrap_or(usize::MAX);
                            if driver.with_policy(|p| p.holds(len)) == Some(true) {
                                // (Never invalid: the encoder writes UTF-8.)
                                frame_text(&bytes).map_or(Frame::Binary, Frame::Text)
                            } else {
                                Frame::Unread {
                                    units,
                                    bytes: Some(len),
                                }
                            }
                        } else {
                            Frame::Text(String::from(text))
                        }
                    }
                    None => Frame::Binary,
                };
                let lost = driver.with_policy(|p| {
                    let before = p.held_dropped();
                    p.handle_message(conn, frame);
                    p.held_dropped().saturating_sub(before)
                });
                let lost = u32::try_from(lost.unwrap_or(0)).unwrap_or(u32::MAX);
                HELD_DROPPED.fetch_add(lost, Ordering::Relaxed);
                driver.pump();
                Ok(JsValue::UNDEFINED)
            }),
        ));
        let driver = self.clone();
        listeners.push((
            "close",
            host::callback(move |event, _| {
                let code = get(&event, "code")
                    .as_f64()
                    .filter(|c| (0.0..=f64::from(u16::MAX)).contains(c))
                    .map_or(1005, |c| c as u16);
                driver.with_policy(|p| p.handle_close(conn, code, now()));
                // This socket is done: its listeners go (freed once this call returns).
                let socket = driver.with_io(|io| {
                    let closing = core::mem::take(&mut io.closing);
                    let (done, rest): (Vec<Socket>, Vec<Socket>) =
                        closing.into_iter().partition(|s| s.conn == conn);
                    io.closing = rest;
                    let current = match &io.socket {
                        Some(s) if s.conn == conn => io.socket.take(),
                        _ => None,
                    };
                    (done, current)
                });
                drop(socket);
                driver.pump();
                Ok(JsValue::UNDEFINED)
            }),
        ));
        listeners.push(("error", host::callback(|_, _| Ok(JsValue::UNDEFINED))));
        if let Some(add) = host::method(&ws, "addEventListener") {
            for (kind, listener) in &listeners {
                let _ = add.call2(&ws, &JsValue::from_str(kind), listener.as_ref());
            }
        }
        let old = self.with_io(|io| {
            if !io.live {
                io.live = true;
                LIVE.fetch_add(1, Ordering::Relaxed);
            }
            io.socket.replace(Socket::new(conn, ws, listeners))
        });
        drop(old);
        Ok(())
    }

    /// `onOpen(socket)`, settled as `await` would; a throw or a rejection
    /// stops the transport.
    fn call_on_open(self: &Rc<Self>, conn: ConnId) {
        let ws = self.with_io(|io| {
            io.socket
                .as_ref()
                .filter(|s| s.conn == conn)
                .map(|s| s.ws.clone())
        });
        let on_open = self.on_open.try_borrow().ok().and_then(|f| f.clone());
        let (Some(on_open), Some(ws)) = (on_open, ws) else {
            self.with_policy(|p| p.handle_on_open(conn, Err(()), now()));
            return;
        };
        let driver = self.clone();
        let settle = move |settled: Result<(), ()>| {
            driver.with_policy(|p| p.handle_on_open(conn, settled, now()));
            driver.pump();
        };
        match on_open.call1(&JsValue::UNDEFINED, &ws) {
            Err(_) => settle(Err(())),
            Ok(returned) => {
                // As `await` would: one callback for both outcomes (bound to
                // `true` and `false`), freed with the two bound functions.
                let settle = Cell::new(Some(settle));
                let settled: Function = host::callback(move |fulfilled, _| {
                    if let Some(settle) = settle.take() {
                        settle(if fulfilled.is_truthy() {
                            Ok(())
                        } else {
                            Err(())
                        });
                    }
                    Ok(JsValue::UNDEFINED)
                })
                .into_js_value()
                .unchecked_into();
                let promise: JsValue = js_sys::Promise::resolve(&returned).into();
                if let Some(then) = host::method(&promise, "then") {
                    let _ = then.call2(
                        &promise,
                        &settled.bind1(&JsValue::NULL, &JsValue::TRUE),
                        &settled.bind1(&JsValue::NULL, &JsValue::FALSE),
                    );
                }
            }
        }
    }

    fn deliver(&self, text: &str) {
        let subscribers: Vec<Subscriber> =
            self.with_io(|io| io.subscribers.iter().map(|(_, s)| s.clone()).collect());
        let mut parsed: Option<JsValue> = None;
        for subscriber in subscribers {
            match subscriber {
                Subscriber::Raw(sink) => sink(text),
                Subscriber::Js(callback) => {
                    let message = match &parsed {
                        Some(message) => message.clone(),
                        None => {
                            let Ok(message) = js_sys::JSON::parse(text) else {
                                continue;
                            };
                            parsed = Some(message.clone());
                            message
                        }
                    };
                    let _ = callback.call1(&JsValue::UNDEFINED, &message);
                }
            }
        }
    }

    /// One timer at the policy's deadline, replacing an earlier one.
    fn arm_timer(self: &Rc<Self>) {
        let Some(at) = self.with_policy(|p| p.poll_timeout()) else {
            return;
        };
        if self.with_io(|io| io.timer.as_ref().map(|t| t.at)) == at {
            return;
        }
        let old = self.with_io(|io| io.timer.take());
        drop(old);
        let Some(at) = at else { return };
        let driver = self.clone();
        let callback = host::callback(move |_, _| {
            // Fired: forgotten first, so a timer that fires a little early
            // by `Date.now()` (Node's timers run on another clock) is armed
            // again for the same deadline instead of being taken as armed.
            let fired = driver.with_io(|io| io.timer.take());
            driver.with_policy(|p| p.handle_timeout(now()));
            driver.pump();
            drop(fired);
            Ok(JsValue::UNDEFINED)
        });
        #[allow(clippy::cast_precision_loss)]
        let delay = (at.saturating_sub(now()) as f64).min(2_147_483_647.0);
        // Not `host::set_timeout`, which `unref()`s in Node: a transport
        // waiting to reconnect keeps the process alive, as its socket does.
        let handle =
            host::set_timeout_kept(callback.as_ref().unchecked_ref(), &JsValue::from_f64(delay));
        self.with_io(|io| {
            io.timer = Some(Timer {
                at,
                handle,
                callback,
            })
        });
    }

    fn subscribe(self: &Rc<Self>, subscriber: Subscriber) -> JsValue {
        let stopped = self.with_policy(|p| p.is_stopped()).unwrap_or(true);
        let id = self.with_io(|io| {
            io.next_subscriber = io.next_subscriber.wrapping_add(1);
            if !stopped {
                io.subscribers.push((io.next_subscriber, subscriber));
            }
            io.next_subscriber
        });
        let weak: Weak<Driver> = Rc::downgrade(self);
        host::js_function(move || {
            if let Some(driver) = weak.upgrade() {
                driver.with_io(|io| io.subscribers.retain(|(s, _)| *s != id));
            }
        })
        .into()
    }
}

/// What `websocketTransport` returns: `send`, `onMessage`, `close`.
#[wasm_bindgen]
pub struct WebSocketTransport {
    driver: Rc<Driver>,
}

/// `websocketTransport({ url, protocols?, maxDelayMs?, terminalCloseCodes?, onOpen?, WebSocket? })`.
#[wasm_bindgen(js_name = websocketTransport)]
pub fn websocket_transport(options: JsValue) -> Result<WebSocketTransport, JsValue> {
    let url = get(&options, "url");
    if !url.is_string() && !url.has_type::<JsUrl>() {
        return Err(type_error(ConfigError::Url));
    }
    let mut constructor = get(&options, "WebSocket");
    if constructor.is_undefined() {
        constructor = get(&host::global(), "WebSocket");
    }
    let Some(constructor) = host::function(constructor) else {
        return Err(type_error(ConfigError::NoWebSocket));
    };
    let max_delay = get(&options, "maxDelayMs");
    let max_delay = match (max_delay.is_undefined(), max_delay.as_f64()) {
        (true, _) => None,
        (false, Some(ms)) => Some(ms),
        (false, None) => return Err(type_error(ConfigError::MaxDelay)),
    };
    let codes = get(&options, "terminalCloseCodes");
    // Copied by guarded calls (a revoked proxy, a throwing trap: refused as
    // not an array), then read from the plain copy.
    let codes: Option<Vec<f64>> = if codes.is_undefined() {
        None
    } else if let Some(codes) = host::array_copy(&codes) {
        Some(
            codes
                .iter()
                .map(|c| c.as_f64().unwrap_or(f64::NAN))
                .collect(),
        )
    } else {
        return Err(type_error(ConfigError::TerminalCloseCodes));
    };
    let on_open = get(&options, "onOpen");
    let on_open = if on_open.is_undefined() {
        None
    } else {
        Some(host::function(on_open).ok_or_else(|| type_error(ConfigError::OnOpen))?)
    };
    let config =
        WebSocketConfig::new(max_delay, codes.as_deref(), on_open.is_some()).map_err(type_error)?;
    let protocols = host::present(get(&options, "protocols"));
    let driver = Rc::new(Driver {
        policy: RefCell::new(WebSocketPolicy::new(config)),
        io: RefCell::new(Io::default()),
        url,
        protocols,
        constructor,
        on_open: RefCell::new(on_open),
        pumping: Cell::new(false),
    });
    // The first socket: a constructor that throws now (a bad url or
    // protocol list) is a configuration error, thrown as it is.
    if let Some(Action::Connect { conn }) = driver.with_policy(|p| p.poll_action()).flatten() {
        driver.connect(conn)?;
    }
    driver.pump();
    Ok(WebSocketTransport { driver })
}

impl Driver {
    /// Sends `text` as a frame, or buffers it until the socket is ready.
    fn send_text(self: &Rc<Self>, text: String) -> Result<(), JsValue> {
        if self.with_policy(|p| p.is_stopped()).unwrap_or(true) {
            return Err(js_sys::Error::new(SendAfterStop.message()).into());
        }
        let sent = self.with_policy(|p| p.send(text));
        if let Some(Err(error)) = sent {
            return Err(js_sys::Error::new(error.message()).into());
        }
        self.pump();
        Ok(())
    }
}

#[wasm_bindgen]
impl WebSocketTransport {
    /// Sends `message` as a JSON text frame, or buffers it until the socket
    /// is ready (at most 100, oldest evicted). Throws once stopped.
    pub fn send(&self, message: JsValue) -> Result<(), JsValue> {
        if self.driver.with_policy(|p| p.is_stopped()).unwrap_or(true) {
            return Err(js_sys::Error::new(SendAfterStop.message()).into());
        }
        let text = js_sys::JSON::stringify(&message)?;
        let Some(text) = JsValue::from(text).as_string() else {
            return Err(js_sys::TypeError::new(
                "websocketTransport: message is not JSON-serializable",
            )
            .into());
        };
        self.driver.send_text(text)
    }

    /// Calls `callback(message)` with each inbound message; returns its unsubscribe.
    #[wasm_bindgen(js_name = onMessage, unchecked_return_type = "() => void")]
    pub fn on_message(&self, callback: JsValue) -> Result<JsValue, JsValue> {
        let Some(callback) = host::function(callback) else {
            return Err(js_sys::TypeError::new(
                "websocketTransport: onMessage(callback) needs a function",
            )
            .into());
        };
        Ok(self.driver.subscribe(Subscriber::Js(callback)))
    }

    /// Stops for good: closes the socket (code 1000), cancels a pending
    /// reconnect, drops the buffer and the subscribers.
    pub fn close(&self) {
        self.driver.with_policy(WebSocketPolicy::close);
        self.driver.pump();
    }

    /// Another JS handle of this transport, for [`subscribe_raw`].
    #[wasm_bindgen(js_name = __toolmarkRawHandle, skip_typescript)]
    pub fn raw_handle(&self) -> WebSocketTransport {
        WebSocketTransport {
            driver: self.driver.clone(),
        }
    }

    /// For the tests: `{ transports, sockets, memoryBytes, heldDropped }`:
    /// the running transports, the sockets with listeners attached, the
    /// size of wasm memory, the inbound frames lost to the bounds on held
    /// frames.
    #[wasm_bindgen(js_name = __stats, skip_typescript)]
    pub fn stats() -> JsValue {
        let memory = get(&get(&wasm_bindgen::memory(), "buffer"), "byteLength");
        host::object(&[
            ("transports", &JsValue::from(LIVE.load(Ordering::Relaxed))),
            ("sockets", &JsValue::from(SOCKETS.load(Ordering::Relaxed))),
            ("memoryBytes", &memory),
            (
                "heldDropped",
                &JsValue::from(HELD_DROPPED.load(Ordering::Relaxed)),
            ),
        ])
        .into()
    }
}

/// Subscribes `sink` to the frames' text when `transport` is a
/// `websocketTransport`; returns the unsubscribe (`None`: some other
/// transport, to be subscribed with `onMessage`).
pub(super) fn subscribe_raw(transport: &JsValue, sink: Rc<dyn Fn(&str)>) -> Option<JsValue> {
    Some(raw_driver(transport)?.subscribe(Subscriber::Raw(sink)))
}

/// The core's message text straight to the frame when `transport` is a
/// `websocketTransport` (no `JSON.parse` for `send` and `JSON.stringify`
/// in it); `None` for any other transport.
pub(super) fn raw_sender(transport: &JsValue) -> Option<super::driver::RawSend> {
    let driver = raw_driver(transport)?;
    Some(Rc::new(move |text: String| driver.send_text(text)))
}

fn raw_driver(transport: &JsValue) -> Option<Rc<Driver>> {
    let handle = host::method(transport, RAW_HANDLE)?.call0(transport).ok()?;
    let handle = WebSocketTransport::try_from_js_value(handle).ok()?;
    Some(handle.driver.clone())
}
