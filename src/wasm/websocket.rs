//! `websocketTransport(options)`: the web-sys driver of the policy in
//! [`crate::transport::websocket`]. It owns the JS side and nothing else:
//! the socket, its four listeners, the reconnect timer, the `onOpen` call
//! and the transport's subscribers; every decision is the policy's. The
//! bridge uses it, as any transport, through `send`, `onMessage`, `close`.
//!
//! - **Status**: `transport.status` is the policy's state now;
//!   `onStatus(cb)` subscribers are told each state the policy queues,
//!   before the actions queued with it ([`Driver::pump`]).
//! - **Listeners** (gloo-net's model): `open`, `message`, `close` and
//!   `error` are `Closure`s owned by the [`Socket`] they are attached to;
//!   dropping it removes them with `removeEventListener` before they are
//!   freed, never forgotten. A socket this side closed ([`Action::Close`])
//!   is kept until its `close` event: the `ws` package emits an `error`
//!   after a close while connecting and throws when nobody listens.
//! - **Frames**: `binaryType = 'arraybuffer'`; a text frame's `length` is
//!   read on the JS string before it is copied into wasm memory, so a frame
//!   the policy would drop unread (over the limit, a stale socket's) never
//!   is ([`WebSocketPolicy::reads`]). Each delivered frame is
//!   `JSON.parse`d once for all subscribers.
//! - **Sends**: one whose socket is found closing (its `readyState`, before
//!   its `close` event is handled) goes back to the policy
//!   ([`WebSocketPolicy::handle_unsent`]), not into a socket that drops it.
//! - **Lifetime**: while the transport runs, its socket's listeners and its
//!   timer hold it (as a JS transport's closures would); the stop (close(),
//!   a terminal close code, a rejecting `onOpen`) drops the timer and the
//!   subscribers. [`LIVE`] counts the running transports, [`SOCKETS`] the
//!   sockets with listeners attached.
//! - **Re-entrancy**: a `RefCell` is borrowed only around Rust code, never
//!   while JS runs (what holds JS objects with a `Drop` that calls JS is
//!   taken out first and dropped after), so a subscriber may `send` or
//!   `close` from its callback: the actions that queues are carried out by
//!   the loop already running ([`Driver::pump`]), in order. A subscriber
//!   that throws stops neither the others nor the transport: its error is
//!   reported as the host reports an uncaught one
//!   ([`host::report_uncaught`]).

use crate::prelude::*;
use alloc::rc::Rc;
use core::cell::{Cell, RefCell};
use core::sync::atomic::{AtomicU32, Ordering};
use js_sys::{Array, Function, JsString};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::driver::{routes, settled, spawn};
use super::error::thrown;
use super::host::{self, get, Callback};
use super::status::{self, Subscribers};
use super::values;
use crate::timer::{self, Arm, Rearm};
use crate::transport::websocket::{
    close_code, socket_closing, Action, ConfigError, ConnId, Frame, SendRefused, WebSocketClass,
    WebSocketConfig, WebSocketOptions, WebSocketPolicy,
};

/// Transports created and not stopped yet.
static LIVE: AtomicU32 = AtomicU32::new(0);
/// Inbound frames lost to the bounds on frames held while `onOpen` is
/// pending, by every transport (the policy counts its own).
static HELD_DROPPED: AtomicU32 = AtomicU32::new(0);
/// Sockets whose listeners are attached (the current ones and those
/// closing).
static SOCKETS: AtomicU32 = AtomicU32::new(0);

#[wasm_bindgen]
extern "C" {
    /// The global `TextEncoder`.
    type TextEncoder;

    #[wasm_bindgen(constructor, catch)]
    fn new() -> Result<TextEncoder, JsValue>;

    /// `encoder.encode(text)`: the UTF-8 bytes in a new `Uint8Array` of
    /// exactly their length, outside wasm memory.
    #[wasm_bindgen(method)]
    fn encode(this: &TextEncoder, text: &JsString) -> js_sys::Uint8Array;
}

/// A text frame as the policy reads it. Its UTF-8 bytes are made outside
/// wasm memory (`TextEncoder#encode`, which turns a lone surrogate into
/// U+FFFD as the glue's `encodeInto` does), measured, and copied in once,
/// only if the policy takes them: the glue's string passing would grow
/// and shrink blocks of up to 6 bytes a unit.
fn text_frame(policy: &RefCell<WebSocketPolicy>, conn: ConnId, text: &JsString) -> Frame {
    let units = usize::try_from(text.length()).unwrap_or(usize::MAX);
    if !policy.borrow().reads(conn, units) {
        return Frame::Unread { units, bytes: None };
    }
    let Ok(encoder) = TextEncoder::new() else {
        return Frame::Text(String::from(text));
    };
    let bytes = encoder.encode(text);
    let len = usize::try_from(bytes.length()).unwrap_or(usize::MAX);
    if !policy.borrow().holds(len) {
        return Frame::Unread {
            units,
            bytes: Some(len),
        };
    }
    // (Never invalid: the encoder writes UTF-8.)
    String::from_utf8(bytes.to_vec()).map_or(Frame::Binary, Frame::Text)
}

fn type_error(error: ConfigError) -> JsValue {
    thrown(error.thrown_code(), error.message())
}

/// A socket and the listeners it holds; dropping it detaches them.
struct Socket {
    conn: ConnId,
    ws: JsValue,
    listeners: Vec<(&'static str, Callback)>,
}

impl Socket {
    fn new(conn: ConnId, ws: JsValue, listeners: Vec<(&'static str, Callback)>) -> Socket {
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

/// The armed reconnect timer; dropping it clears it.
struct Timer {
    at: u64,
    handle: Option<JsValue>,
    /// Owned here so that it lives exactly as long as the timer.
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

/// The JS objects of a running transport. Whatever is taken out of it is
/// dropped after the borrow ends (the `Drop`s above call JS).
#[derive(Default)]
struct Io {
    socket: Option<Socket>,
    /// Sockets this side closed, kept with their listeners until their
    /// `close` event.
    closing: Vec<Socket>,
    timer: Option<Timer>,
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
    /// A [`Driver::pump`] is running.
    pumping: Cell<bool>,
    statuses: Rc<Subscribers>,
    /// The `onMessage` subscribers.
    messages: Rc<Subscribers>,
}

/// The policy's clock (the reconnect timer's deadline, how long a
/// connection stayed ready).
fn now() -> u64 {
    host::monotonic_ms()
}

impl Driver {
    fn policy<R>(&self, f: impl FnOnce(&mut WebSocketPolicy) -> R) -> R {
        f(&mut self.policy.borrow_mut())
    }

    fn io<R>(&self, f: impl FnOnce(&mut Io) -> R) -> R {
        f(&mut self.io.borrow_mut())
    }

    /// The socket of `conn` if it is the current one.
    fn socket_of(&self, conn: ConnId) -> Option<JsValue> {
        self.io(|io| {
            io.socket
                .as_ref()
                .filter(|s| s.conn == conn)
                .map(|s| s.ws.clone())
        })
    }

    /// Carries out the policy's actions until there are none, then arms the
    /// timer. Called while it runs (a subscriber that sends or closes), it
    /// returns at once and the running loop carries out the new actions.
    fn pump(self: &Rc<Self>) {
        if self.pumping.replace(true) {
            return;
        }
        loop {
            if let Some(state) = self.policy(WebSocketPolicy::poll_status) {
                self.statuses.tell(&state);
            } else if let Some(action) = self.policy(WebSocketPolicy::poll_action) {
                self.perform(action);
            } else {
                break;
            }
        }
        self.pumping.set(false);
        if self.policy(|p| p.is_stopped()) {
            let on_open = self.on_open.borrow_mut().take();
            drop(on_open);
        }
        self.arm_timer();
    }

    fn perform(self: &Rc<Self>, action: Action) {
        match action {
            Action::Connect { conn } => {
                if self.connect(conn).is_err() {
                    self.policy(|p| p.handle_connect_failed(conn, now()));
                }
            }
            Action::CallOnOpen { conn } => self.call_on_open(conn),
            Action::Send { conn, text } => {
                let Some(ws) = self.socket_of(conn) else {
                    return;
                };
                if socket_closing(get(&ws, "readyState").as_f64()) {
                    self.policy(|p| p.handle_unsent(conn, text));
                    return;
                }
                if let Some(send) = host::method(&ws, "send") {
                    if let Err(error) = send.call1(&ws, &JsValue::from_str(&text)) {
                        host::report_uncaught(&error);
                    }
                }
            }
            Action::Deliver { text } => self.deliver(&text),
            Action::Close { conn, code } => {
                let Some(ws) = self.socket_of(conn) else {
                    return;
                };
                self.io(|io| {
                    if let Some(socket) = io.socket.take() {
                        io.closing.push(socket);
                    }
                });
                if let Some(close) = host::method(&ws, "close") {
                    let _ = match code {
                        Some(code) => close.call1(&ws, &JsValue::from(code)),
                        None => close.call0(&ws),
                    };
                }
            }
            Action::Stopped { .. } => {
                let (socket, timer, live) = self.io(|io| {
                    (
                        io.socket.take(),
                        io.timer.take(),
                        core::mem::replace(&mut io.live, false),
                    )
                });
                drop((socket, timer));
                self.messages.clear();
                self.statuses.clear();
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
        let listener = |on: fn(&Rc<Driver>, ConnId, JsValue)| {
            let driver = self.clone();
            host::callback(move |event, _| {
                on(&driver, conn, event);
                Ok(JsValue::UNDEFINED)
            })
        };
        let listeners = vec![
            ("open", listener(Driver::on_open_event)),
            ("message", listener(Driver::on_message_event)),
            ("close", listener(Driver::on_close_event)),
            // Nothing to do (a `close` follows), but the `ws` package
            // throws an `error` event nobody listens to.
            ("error", host::callback(|_, _| Ok(JsValue::UNDEFINED))),
        ];
        if let Some(add) = host::method(&ws, "addEventListener") {
            for (kind, listener) in &listeners {
                add.call2(&ws, &JsValue::from_str(kind), listener.as_ref())?;
            }
        }
        let old = self.io(|io| {
            if !core::mem::replace(&mut io.live, true) {
                LIVE.fetch_add(1, Ordering::Relaxed);
            }
            io.socket.replace(Socket::new(conn, ws, listeners))
        });
        drop(old);
        Ok(())
    }

    fn on_open_event(self: &Rc<Self>, conn: ConnId, _event: JsValue) {
        self.policy(|p| p.handle_open(conn, now()));
        self.pump();
    }

    fn on_message_event(self: &Rc<Self>, conn: ConnId, event: JsValue) {
        let frame = match get(&event, "data").dyn_ref::<JsString>() {
            Some(text) => text_frame(&self.policy, conn, text),
            None => Frame::Binary,
        };
        let lost = self.policy(|p| {
            let before = p.held_dropped();
            p.handle_message(conn, frame);
            p.held_dropped().saturating_sub(before)
        });
        HELD_DROPPED.fetch_add(u32::try_from(lost).unwrap_or(u32::MAX), Ordering::Relaxed);
        self.pump();
    }

    fn on_close_event(self: &Rc<Self>, conn: ConnId, event: JsValue) {
        let code = close_code(get(&event, "code").as_f64());
        let reason = get(&event, "reason").as_string().unwrap_or_default();
        self.policy(|p| p.handle_close(conn, code, &reason, now()));
        // This socket is done: its listeners go (the one running is freed
        // once it returns).
        let done = self.io(|io| {
            let (done, rest): (Vec<Socket>, Vec<Socket>) = core::mem::take(&mut io.closing)
                .into_iter()
                .partition(|s| s.conn == conn);
            io.closing = rest;
            let current = match &io.socket {
                Some(s) if s.conn == conn => io.socket.take(),
                _ => None,
            };
            (done, current)
        });
        drop(done);
        self.pump();
    }

    /// `onOpen(socket)`, settled as `await` would; a throw or a rejection
    /// stops the transport.
    fn call_on_open(self: &Rc<Self>, conn: ConnId) {
        let on_open = self.on_open.borrow().clone();
        let (Some(on_open), Some(ws)) = (on_open, self.socket_of(conn)) else {
            self.policy(|p| p.handle_on_open(conn, Err(()), now()));
            return;
        };
        let returned = match on_open.call1(&JsValue::UNDEFINED, &ws) {
            Ok(returned) => returned,
            Err(_) => {
                self.policy(|p| p.handle_on_open(conn, Err(()), now()));
                return;
            }
        };
        // Awaited by the boundary's one executor, as the bridge awaits a
        // tool's promise (a throwing `then` or `constructor` rejects).
        let driver = self.clone();
        spawn(async move {
            let opened = settled(Ok(returned)).await.map(drop).map_err(drop);
            driver.policy(|p| p.handle_on_open(conn, opened, now()));
            driver.pump();
        });
    }

    /// `JSON.parse(text)` to each subscriber still subscribed when its turn
    /// comes, while the transport runs (one that unsubscribes another, or
    /// closes, is heeded at once); a bridge of this module gets the text
    /// itself (see `routes::text_route`), which it drops if it is not JSON.
    /// The text is parsed once, when a subscriber first needs the object;
    /// a text that is not JSON reaches no other subscriber (the spec drops
    /// such a frame).
    fn deliver(&self, text: &str) {
        let mut message: Option<Option<JsValue>> = None;
        self.messages.each(|callback| {
            if self.policy(|p| p.is_stopped()) {
                return;
            }
            if let Some(route) = routes::text_route(callback) {
                route.deliver_frame(text);
                return;
            }
            let parsed = message.get_or_insert_with(|| js_sys::JSON::parse(text).ok());
            if let Some(parsed) = parsed {
                host::call_reporting(callback, parsed);
            }
        });
    }

    /// One timer at the policy's deadline, replacing an earlier one.
    fn arm_timer(self: &Rc<Self>) {
        let wanted = self.policy(|p| p.poll_timeout());
        let armed = self.io(|io| io.timer.as_ref().map(|t| t.at));
        let Rearm::Replace { arm } = timer::rearm(armed, wanted, now()) else {
            return;
        };
        let old = self.io(|io| io.timer.take());
        drop(old);
        let Some(Arm { deadline, delay_ms }) = arm else {
            return;
        };
        let driver = self.clone();
        let callback = host::callback(move |_, _| {
            // Fired: forgotten first, so a timer that fires a little early
            // by `Date.now()` (Node's timers run on another clock) is armed
            // again for the same deadline instead of being taken as armed.
            let fired = driver.io(|io| io.timer.take());
            driver.policy(|p| p.handle_timeout(now()));
            driver.pump();
            drop(fired);
            Ok(JsValue::UNDEFINED)
        });
        // Not `host::set_timeout`, which `unref()`s in Node: a transport
        // waiting to reconnect keeps the process alive, as its socket does.
        let handle = host::set_timeout_kept(
            callback.as_ref().unchecked_ref(),
            &JsValue::from_f64(delay_ms),
        );
        let old = self.io(|io| {
            io.timer.replace(Timer {
                at: deadline,
                handle,
                callback,
            })
        });
        drop(old);
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
    let web_socket = get(&options, "WebSocket");
    let global_web_socket = get(&host::global(), "WebSocket");
    let on_open = get(&options, "onOpen");
    let (config, class) = WebSocketConfig::from_options(&WebSocketOptions {
        url: values::given_url(&url),
        web_socket: values::given(&web_socket),
        global_web_socket: values::given(&global_web_socket),
        max_delay_ms: values::given(&get(&options, "maxDelayMs")),
        terminal_close_codes: values::given_list(&get(&options, "terminalCloseCodes"), |code| {
            code.as_f64().unwrap_or(f64::NAN)
        }),
        on_open: values::given(&on_open),
    })
    .map_err(type_error)?;
    let constructor: Function = match class {
        WebSocketClass::Given => web_socket,
        WebSocketClass::Global => global_web_socket,
    }
    .unchecked_into();
    let on_open = host::function(on_open);
    let protocols = host::present(get(&options, "protocols"));
    let driver = Rc::new(Driver {
        policy: RefCell::new(WebSocketPolicy::new(config)),
        io: RefCell::new(Io::default()),
        url,
        protocols,
        constructor,
        on_open: RefCell::new(on_open),
        pumping: Cell::new(false),
        statuses: Rc::default(),
        messages: Rc::default(),
    });
    // The first socket: a constructor that throws now (a bad url or
    // protocol list) is a configuration error, thrown as it is.
    if let Some(Action::Connect { conn }) = driver.policy(WebSocketPolicy::poll_action) {
        driver.connect(conn)?;
    }
    driver.pump();
    Ok(WebSocketTransport { driver })
}

#[wasm_bindgen]
impl WebSocketTransport {
    /// Sends `message` as a JSON text frame, or buffers it until the socket
    /// is ready (at most 100, oldest evicted). Throws once stopped.
    pub fn send(&self, message: JsValue) -> Result<(), JsValue> {
        let refused = |why: SendRefused| thrown(why.thrown_code(), why.message());
        if self.driver.policy(|p| p.is_stopped()) {
            return Err(refused(SendRefused::Stopped));
        }
        let text = js_sys::JSON::stringify(&message)?;
        let text = JsValue::from(text)
            .as_string()
            .ok_or_else(|| refused(SendRefused::NotJson))?;
        self.driver.policy(|p| p.send(text)).map_err(refused)?;
        self.driver.pump();
        Ok(())
    }

    /// Calls `callback(message)` with each inbound message; returns its unsubscribe.
    #[wasm_bindgen(js_name = onMessage, unchecked_return_type = "() => void")]
    pub fn on_message(&self, callback: JsValue) -> Result<Function, JsValue> {
        self.driver.messages.subscribe(
            callback,
            self.driver.policy(|p| p.is_stopped()),
            "websocketTransport: onMessage(callback) needs a function",
        )
    }

    /// The connection state now: `{ state: 'connecting' | 'open' |
    /// 'reconnecting' | 'closed', … }`.
    #[wasm_bindgen(getter)]
    pub fn status(&self) -> JsValue {
        status::to_js(&self.driver.policy(|p| p.status().clone()))
    }

    /// Calls `callback(status)` with each new connection state; returns
    /// its unsubscribe. The last one told is `closed` with `terminal: true`.
    #[wasm_bindgen(js_name = onStatus, unchecked_return_type = "() => void")]
    pub fn on_status(&self, callback: JsValue) -> Result<Function, JsValue> {
        self.driver.statuses.subscribe(
            callback,
            self.driver.policy(|p| p.is_stopped()),
            "websocketTransport: onStatus(callback) needs a function",
        )
    }

    /// Stops for good: closes the socket (code 1000), cancels a pending
    /// reconnect, drops the buffer and the subscribers.
    pub fn close(&self) {
        self.driver.policy(WebSocketPolicy::close);
        self.driver.pump();
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
