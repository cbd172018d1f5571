//! `createInPageChannel()`: both ends of a bridge in one JS realm, for a
//! client-side agent loop and tests (API.md, "Bridge and transports"). Not
//! a security boundary: nothing is filtered.
//!
//! - **Delivery** is asynchronous, one microtask per message, like any real
//!   channel; the listeners are those subscribed when it runs. What the
//!   page sends is copied (`JSON.parse(JSON.stringify(message))`); what the
//!   agent sends with `send` is delivered as it is, unvalidated. A throwing
//!   listener stops that delivery and its error is thrown from the next
//!   microtask.
//! - **The agent end's requests** (`call`, `describe`) are written as JSON
//!   when they are made: one that cannot be (an input with a cycle, a
//!   BigInt, a throwing getter or proxy, an input that is a function or a
//!   symbol) rejects at once with a `TypeError` and is neither sent nor
//!   kept waiting, where the page would drop it and never answer. The text
//!   goes to the bridges on the page end as it is (no second
//!   `JSON.stringify` there), so what they read is what was checked.
//! - **Listeners** are JS `Set`s, so subscribing one function twice keeps
//!   it once; an unsubscribe is `Set.prototype.delete` bound to it. A
//!   bridge attached to the page end subscribes in Rust instead
//!   ([`subscribe_raw`]): it gets each agent message before the JS
//!   listeners, without a call into JS.
//! - **The agent end** watches what the page sends before its own
//!   listeners do: the latest manifest's (or `changed`'s) `clientId` and
//!   `rev`, the manifest's tools, the result of each request it made, and
//!   `confirmed` messages. A request with `timeoutMs` rejects with a
//!   `TimeoutError` and sends `cancel` when no result comes in time (rule 3:
//!   a timeout is the agent side's).
//! - **Before the first manifest** the agent end does not know the page's
//!   `clientId`, and a message without it is dropped by the page: a
//!   request (`call`, `describe`) made then waits, in order, and goes out
//!   with the `clientId` of the first manifest (or `changed`). At most
//!   [`MAX_WAITING_FOR_MANIFEST`] wait; one more rejects at once with an
//!   error that says why. A waiting request that times out rejects and
//!   sends nothing; one cancelled resolves `cancelled signal`, the page's
//!   answer to a call cancelled before it ran.
//! - No `RefCell` borrow is held while JS runs.

use crate::prelude::*;
use alloc::rc::{Rc, Weak};
use core::cell::{Cell, RefCell};
use js_sys::{Array, Function, JsString, Map, Object, Promise, Set};
use wasm_bindgen::convert::TryFromJsValue;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::host::{self, get};

#[wasm_bindgen]
extern "C" {
    /// `JSON.parse(text)` of the JS string `JSON.stringify` returned (no
    /// copy through wasm memory; a throw for `undefined`, as in JS).
    #[wasm_bindgen(catch, js_namespace = JSON, js_name = parse)]
    fn parse_json(text: &JsValue) -> Result<JsValue, JsValue>;
}

#[wasm_bindgen(module = "/js/src/agent-messages.js")]
extern "C" {
    /// `{ protocol: 1, type, clientId, id }`.
    #[wasm_bindgen(js_name = agentMessage)]
    fn agent_message(kind: &str, client_id: &JsValue, id: &JsValue) -> Object;

    /// `{ protocol: 1, type: 'call', clientId, id, tool, input }`.
    #[wasm_bindgen(js_name = callMessage)]
    fn call_message(client_id: &JsValue, id: &JsValue, tool: &JsValue, input: &JsValue) -> Object;
}

/// Requests of the agent end kept until the first manifest tells the
/// page's `clientId`.
pub const MAX_WAITING_FOR_MANIFEST: usize = 100;

/// What the agent end learned from the latest manifest or `changed`.
struct Latest {
    client_id: JsValue,
    rev: JsValue,
    tools: JsValue,
}

/// A bridge's receiver of what the agent sends (see [`subscribe_raw`]):
/// the message, and its JSON text when the agent end wrote it (a request).
pub(super) type RawReceiver = Rc<dyn Fn(&JsValue, Option<&JsString>)>;

struct Channel {
    /// `transport.onMessage` callbacks: what the agent sends.
    to_page: Set,
    /// The bridges attached to the page end, by a key for their unsubscribe.
    /// Shared, so a delivery takes the list as it is without a copy;
    /// subscribing while one runs copies it.
    raw_to_page: RefCell<Rc<Vec<(u32, RawReceiver)>>>,
    next_raw: Cell<u32>,
    /// `agent.onMessage` callbacks: what the page sends.
    to_agent: Set,
    /// `agent.onConfirmed` callbacks.
    confirmed: Set,
    /// Request id → its promise's `resolve`, and → its `setTimeout`
    /// handle: JS `Map`s, so a message costs no Rust allocation (the
    /// module's free-list allocator slows down with many live ones) and ids
    /// compare as the JS `Map` does.
    waiting: Map,
    timers: Map,
    /// The entries in `timers`: while there are none (no request with
    /// `timeoutMs` is waiting), a request makes no lookup there.
    timer_count: Cell<u32>,
    /// The delivery tasks to each end, `(message, text?)`: one function
    /// each per channel, bound to each message (no closure per message).
    to_page_task: Function,
    to_agent_task: Function,
    latest: RefCell<Latest>,
    /// Requests made before the first manifest, `(id, message)`, in order;
    /// each message a plain copy of the one checked (`JSON.parse` of its
    /// text), so writing it again with the `clientId` cannot fail.
    before_manifest: RefCell<Vec<(JsValue, Object)>>,
    closed: Cell<bool>,
}

/// `set.add(callback)`; returns `set.delete` bound to it.
fn subscribe(set: &Set, callback: &JsValue) -> JsValue {
    set.add(callback);
    host::method(set, "delete").map_or(JsValue::UNDEFINED, |delete| {
        delete.bind1(set, callback).into()
    })
}

/// Calls every function in `listeners` with `value`.
fn call_each(listeners: &Array, value: &JsValue) -> Result<(), JsValue> {
    for listener in listeners.iter() {
        let listener: &Function = listener.unchecked_ref();
        listener.call1(&JsValue::UNDEFINED, value)?;
    }
    Ok(())
}

impl Channel {
    fn latest(&self, f: impl FnOnce(&Latest) -> JsValue) -> JsValue {
        self.latest
            .try_borrow()
            .map_or(JsValue::UNDEFINED, |latest| f(&latest))
    }

    /// The `resolve` of the waiting request with that id, removed (its
    /// timer with it, not cleared).
    fn take_waiting(&self, id: &JsValue) -> Option<(Function, JsValue)> {
        // A waiting entry is a function, never `undefined`.
        let resolve = self.waiting.get(id);
        if resolve.is_undefined() {
            return None;
        }
        self.waiting.delete(id);
        let timer = self.take_timer(id);
        Some((resolve.unchecked_into(), timer))
    }

    /// The timer of request `id` (`undefined` for none), removed (not cleared).
    fn take_timer(&self, id: &JsValue) -> JsValue {
        if self.timer_count.get() == 0 {
            return JsValue::UNDEFINED;
        }
        let timer = self.timers.get(id);
        if self.timers.delete(id) {
            self.timer_count.set(self.timer_count.get() - 1);
        }
        timer
    }

    /// Keeps `timer` as request `id`'s, or with `None` forgets the one it had.
    fn keep_timer(&self, id: &JsValue, timer: Option<JsValue>) {
        match timer {
            Some(timer) => {
                if self.timer_count.get() == 0 || !self.timers.has(id) {
                    self.timer_count.set(self.timer_count.get() + 1);
                }
                self.timers.set(id, &timer);
            }
            None => drop(self.take_timer(id)),
        }
    }

    /// The agent end's view of a page → agent message (before its listeners).
    fn watch(&self, message: &JsValue) -> Result<(), JsValue> {
        if !message.is_object() {
            return Ok(());
        }
        // Compared with the names as JS strings: no copy into wasm memory.
        let kind = host::field(message, &host::TYPE);
        let is = |name: &'static wasm_bindgen::JsThreadLocal<js_sys::JsString>| {
            name.with(|name| kind == *AsRef::<JsValue>::as_ref(name))
        };
        if is(&host::RESULT) {
            if let Some((resolve, timer)) = self.take_waiting(&host::field(message, &host::ID)) {
                if !timer.is_undefined() {
                    host::clear_timeout(&timer);
                }
                resolve.call1(&JsValue::UNDEFINED, &host::field(message, &host::RESULT))?;
            }
        } else if is(&host::MANIFEST) || is(&host::CHANGED) {
            let client_id = get(message, "clientId");
            let rev = get(message, "rev");
            let tools = is(&host::MANIFEST).then(|| get(message, "tools"));
            if let Ok(mut latest) = self.latest.try_borrow_mut() {
                latest.client_id = client_id.clone();
                latest.rev = rev;
                if let Some(tools) = tools {
                    latest.tools = tools;
                }
            }
            self.send_waiting(&client_id);
        } else if is(&host::CONFIRMED) {
            call_each(&Array::from(&self.confirmed), message)?;
        }
        Ok(())
    }

    /// Queues the delivery of `value` to `to_page`, or (with the agent end's
    /// watch first) to `to_agent`.
    fn deliver(&self, to_agent: bool, value: JsValue) {
        let task = if to_agent {
            &self.to_agent_task
        } else {
            &self.to_page_task
        };
        let bound: JsValue = task.bind1(&JsValue::NULL, &value).into();
        host::queue_microtask(bound.unchecked_ref());
    }

    /// Queues the delivery of a request of the agent end to `to_page`, with
    /// its JSON `text` for the bridges.
    fn deliver_request(&self, message: &JsValue, text: &JsString) {
        let bound: JsValue = self
            .to_page_task
            .bind2(&JsValue::NULL, message, text)
            .into();
        host::queue_microtask(bound.unchecked_ref());
    }

    /// Whether the page's `clientId` is known (a manifest or `changed` came).
    fn knows_page(&self) -> bool {
        !self.latest(|l| l.client_id.clone()).is_undefined()
    }

    /// The requests made before the first manifest, sent in order with the
    /// page's `clientId` now that it is known.
    fn send_waiting(&self, client_id: &JsValue) {
        if client_id.is_undefined() {
            return;
        }
        let waiting = self
            .before_manifest
            .try_borrow_mut()
            .map(|mut waiting| core::mem::take(&mut *waiting))
            .unwrap_or_default();
        for (_, message) in waiting {
            host::set(&message, "clientId", client_id);
            self.deliver(false, message.into());
        }
    }

    /// Takes request `id` out of the requests waiting for the first
    /// manifest; false when it is not there.
    fn unqueue(&self, id: &JsValue) -> bool {
        let Ok(mut waiting) = self.before_manifest.try_borrow_mut() else {
            return false;
        };
        let before = waiting.len();
        waiting.retain(|(waiting_id, _)| waiting_id != id);
        waiting.len() != before
    }

    /// Sends request `message` (whose JSON is `text`) to the page, or keeps
    /// a copy until the first manifest; `Err` when
    /// [`MAX_WAITING_FOR_MANIFEST`] already wait.
    fn send_request(&self, id: &JsValue, message: Object, text: &JsString) -> Result<(), JsValue> {
        if self.knows_page() {
            self.deliver_request(&message, text);
            return Ok(());
        }
        let mut waiting = self
            .before_manifest
            .try_borrow_mut()
            .map_err(|_| JsValue::from(js_sys::Error::new("in-page channel is busy")))?;
        if waiting.len() >= MAX_WAITING_FOR_MANIFEST {
            return Err(js_sys::Error::new(
                "createInPageChannel: no manifest from the page yet (is a bridge attached with tm.use(bridge({ transport }))?) and 100 requests already wait for it",
            )
            .into());
        }
        waiting.push((id.clone(), parse_json(text)?.unchecked_into()));
        Ok(())
    }

    /// One delivery: to the listeners subscribed now (the page end's
    /// bridges first).
    fn run(&self, to_agent: bool, value: &JsValue, text: &JsValue) -> Result<(), JsValue> {
        let listeners = if to_agent {
            &self.to_agent
        } else {
            &self.to_page
        };
        let raw = if to_agent {
            None
        } else {
            self.raw_to_page.try_borrow().ok().map(|raw| raw.clone())
        };
        // Most deliveries have no JS listener: no copy of the set then.
        let now = (listeners.size() > 0).then(|| Array::from(listeners));
        if to_agent {
            self.watch(value)?;
        }
        let text = text.dyn_ref::<JsString>();
        for (_, receiver) in raw.iter().flat_map(|raw| raw.iter()) {
            receiver(value, text);
        }
        now.map_or(Ok(()), |now| call_each(&now, value))
    }

    /// A message of the agent end: `{ protocol: 1, type, clientId, id, … }`.
    fn message(&self, kind: &str, id: &JsValue) -> Object {
        agent_message(kind, &self.latest(|l| l.client_id.clone()), id)
    }

    /// Sends `message` (whose JSON is `text`) and resolves with its result;
    /// with `timeout_ms`, rejects with a `TimeoutError` and sends `cancel`
    /// when none comes in time.
    fn request(
        self: &Rc<Self>,
        kind: &'static str,
        id: JsValue,
        message: Object,
        text: &JsString,
        timeout_ms: JsValue,
    ) -> Promise {
        if let Err(error) = self.send_request(&id, message, text) {
            return Promise::reject(&error);
        }
        Promise::new(&mut |resolve, reject| {
            let timer = (!timeout_ms.is_undefined())
                .then(|| self.start_timer(kind, &id, &timeout_ms, reject))
                .flatten();
            self.waiting.set(&id, &resolve);
            self.keep_timer(&id, timer);
        })
    }

    fn start_timer(
        self: &Rc<Self>,
        kind: &'static str,
        id: &JsValue,
        timeout_ms: &JsValue,
        reject: Function,
    ) -> Option<JsValue> {
        // Taken when it fires: the TimeoutError's stack refers to the timer,
        // the timer to this function, so what it holds must not refer to the
        // error (through `reject` and its promise), or the module's externref
        // table (a GC root) keeps all of it, the channel with it.
        let armed = Cell::new(Some((self.clone(), id.clone(), timeout_ms.clone(), reject)));
        let fire: Function = host::callback(move |_, _| {
            let Some((channel, id, timeout, reject)) = armed.take() else {
                return Ok(JsValue::UNDEFINED);
            };
            drop(channel.take_waiting(&id));
            // Never sent: nothing to cancel.
            if !channel.unqueue(&id) {
                channel.deliver(false, channel.message("cancel", &id).into());
            }
            let mut why = String::from("no result for ");
            for part in [
                kind,
                " ",
                &host::string(&id),
                " within ",
                &host::string(&timeout),
                " ms",
            ] {
                why.push_str(part);
            }
            let error = js_sys::Error::new(&why);
            error.set_name("TimeoutError");
            reject.call1(&JsValue::UNDEFINED, &error)?;
            Ok(JsValue::UNDEFINED)
        })
        .into_js_value()
        .unchecked_into();
        // Not `host::set_timeout`, which `unref()`s in Node: an agent waiting
        // for its result keeps the process alive until the timeout.
        host::set_timeout_kept(&fire, timeout_ms)
    }
}

/// The channel's delivery task to one end, `(message)`. Weak: the channel
/// holds it.
fn delivery_task(channel: Weak<Channel>, to_agent: bool) -> Function {
    host::callback(move |value, text| {
        if let Some(channel) = channel.upgrade() {
            if let Err(error) = channel.run(to_agent, &value, &text) {
                host::throw_in_microtask(error);
            }
        }
        Ok(JsValue::UNDEFINED)
    })
    .into_js_value()
    .unchecked_into()
}

/// The page end: `tm.use(bridge({ transport }))`.
#[wasm_bindgen]
pub struct InPageTransport {
    channel: Rc<Channel>,
}

#[wasm_bindgen]
impl InPageTransport {
    /// Delivers a copy of `message` to the agent end. Throws once closed.
    pub fn send(&self, message: &JsValue) -> Result<(), JsValue> {
        if self.channel.closed.get() {
            return Err(js_sys::Error::new("in-page channel is closed").into());
        }
        let copy = parse_json(&js_sys::JSON::stringify(message)?.into())?;
        self.channel.deliver(true, copy);
        Ok(())
    }

    /// Calls `callback(message)` with each agent → page value; returns its unsubscribe.
    #[wasm_bindgen(js_name = onMessage, unchecked_return_type = "() => void")]
    pub fn on_message(&self, callback: &JsValue) -> JsValue {
        subscribe(&self.channel.to_page, callback)
    }

    /// Another JS handle of this transport, for [`raw_sender`].
    #[wasm_bindgen(js_name = __toolmarkInPageHandle, skip_typescript)]
    pub fn raw_handle(&self) -> InPageTransport {
        InPageTransport {
            channel: self.channel.clone(),
        }
    }

    /// Stops the page end: `send` throws, its subscribers are dropped.
    pub fn close(&self) {
        self.channel.closed.set(true);
        self.channel.to_page.clear();
        if let Ok(mut raw) = self.channel.raw_to_page.try_borrow_mut() {
            *raw = Rc::default();
        }
    }
}

/// The channel whose page end `transport` is, if it is one.
fn channel_of(transport: &JsValue) -> Option<Rc<Channel>> {
    let handle = host::method(transport, "__toolmarkInPageHandle")?
        .call0(transport)
        .ok()?;
    Some(InPageTransport::try_from_js_value(handle).ok()?.channel)
}

/// Subscribes a bridge's `receiver` to what the agent sends when
/// `transport` is this channel's page end: no call into JS per message, as
/// a JS listener's takes. Returns its unsubscribe; `None` for any other
/// transport.
pub(super) fn subscribe_raw(transport: &JsValue, receiver: RawReceiver) -> Option<JsValue> {
    let channel = channel_of(transport)?;
    let key = channel.next_raw.get();
    channel.next_raw.set(key.wrapping_add(1));
    Rc::make_mut(&mut *channel.raw_to_page.try_borrow_mut().ok()?).push((key, receiver));
    let channel = Rc::downgrade(&channel);
    Some(
        host::js_function(move || {
            if let Some(channel) = channel.upgrade() {
                if let Ok(mut raw) = channel.raw_to_page.try_borrow_mut() {
                    Rc::make_mut(&mut raw).retain(|(k, _)| *k != key);
                }
            }
        })
        .into(),
    )
}

/// The core's message text to the agent end when `transport` is this
/// channel's page end: one `JSON.parse` makes the copy (no parse for `send`,
/// then `JSON.stringify` and `JSON.parse` in it).
pub(super) fn raw_sender(transport: &JsValue) -> Option<super::driver::RawSend> {
    let channel = channel_of(transport)?;
    Some(Rc::new(move |text: String| {
        if channel.closed.get() {
            return Err(js_sys::Error::new("in-page channel is closed").into());
        }
        let copy = js_sys::JSON::parse(&text)?;
        channel.deliver(true, copy);
        Ok(())
    }))
}

/// `JSON.stringify(value)`, or why it wrote nothing: its error, or
/// `undefined` for a value JSON leaves out (a function, a symbol).
fn json_text(value: &JsValue) -> Result<JsString, JsValue> {
    js_sys::JSON::stringify(value)?
        .dyn_into::<JsString>()
        .map_err(|_| JsValue::UNDEFINED)
}

/// The `TypeError` for a request that cannot be written as JSON.
fn not_copyable(what: &str, why: &JsValue) -> JsValue {
    let mut message = String::from("createInPageChannel: ");
    message.push_str(what);
    if !why.is_undefined() {
        message.push_str(" (");
        message.push_str(&host::detail(why));
        message.push(')');
    }
    js_sys::TypeError::new(&message).into()
}

/// A `call` message's JSON text, or the `TypeError` that says what in it
/// JSON cannot copy. JSON leaves an input that is a function or a symbol
/// (or whose `toJSON` returns one) out of the message without an error,
/// and the page drops a call without one: refused here too.
fn call_text(message: &Object, input: &JsValue) -> Result<JsString, JsValue> {
    const INPUT: &str = "agent.call: the input is not JSON-copyable";
    if input.is_function() || input.is_symbol() {
        let what = if input.is_function() {
            "a function"
        } else {
            "a symbol"
        };
        return Err(not_copyable(INPUT, &JsValue::from_str(what)));
    }
    if input.is_object() && host::field(input, &host::TO_JSON).is_function() {
        json_text(input).map_err(|why| not_copyable(INPUT, &why))?;
    }
    json_text(message).map_err(|why| match json_text(input) {
        Err(why) => not_copyable(INPUT, &why),
        Ok(_) => not_copyable(
            "agent.call: the tool name, options.id or options.rev is not JSON-copyable",
            &why,
        ),
    })
}

/// The agent end: what a client-side agent loop and tests drive.
#[wasm_bindgen]
pub struct InPageAgent {
    channel: Rc<Channel>,
}

#[wasm_bindgen]
impl InPageAgent {
    /// Delivers the value to the page as is, unvalidated.
    pub fn send(&self, message: JsValue) {
        self.channel.deliver(false, message);
    }

    /// Calls `callback(message)` with each page → agent message; returns its unsubscribe.
    #[wasm_bindgen(js_name = onMessage, unchecked_return_type = "() => void")]
    pub fn on_message(&self, callback: &JsValue) -> JsValue {
        subscribe(&self.channel.to_agent, callback)
    }

    /// From the latest manifest (or `changed`); undefined before the first one.
    #[wasm_bindgen(getter, js_name = clientId)]
    pub fn client_id(&self) -> JsValue {
        self.channel.latest(|l| l.client_id.clone())
    }

    #[wasm_bindgen(getter)]
    pub fn rev(&self) -> JsValue {
        self.channel.latest(|l| l.rev.clone())
    }

    /// The tools of the latest manifest.
    #[wasm_bindgen(getter)]
    pub fn tools(&self) -> JsValue {
        self.channel.latest(|l| l.tools.clone())
    }

    /// Sends a `call` (with `options.id`, or a fresh id) and resolves with
    /// its result. Only an absent input is sent as `{}`; `null` stays null.
    pub fn call(
        &self,
        tool: &JsValue,
        input: &JsValue,
        options: &JsValue,
    ) -> Result<Promise, JsValue> {
        let (id, rev, timeout_ms) = if options.is_undefined() {
            (JsValue::UNDEFINED, JsValue::UNDEFINED, JsValue::UNDEFINED)
        } else {
            (
                get(options, "id"),
                get(options, "rev"),
                get(options, "timeoutMs"),
            )
        };
        let id = if id.is_undefined() {
            JsValue::from(super::protocol::new_id()?)
        } else {
            id
        };
        let input = if input.is_undefined() {
            Object::new().into()
        } else {
            input.clone()
        };
        let client_id = self.channel.latest(|l| l.client_id.clone());
        let message = call_message(&client_id, &id, tool, &input);
        if !rev.is_undefined() {
            host::set(&message, "rev", &rev);
        }
        let text = match call_text(&message, &input) {
            Ok(text) => text,
            Err(error) => return Ok(Promise::reject(&error)),
        };
        Ok(self.channel.request("call", id, message, &text, timeout_ms))
    }

    /// Sends a `describe` with a fresh id and resolves with its result.
    pub fn describe(&self, tool: &JsValue, options: &JsValue) -> Result<Promise, JsValue> {
        let id = JsValue::from(super::protocol::new_id()?);
        let message = self.channel.message("describe", &id);
        host::set(&message, "tool", tool);
        let timeout_ms = get(options, "timeoutMs");
        let text = match json_text(&message) {
            Ok(text) => text,
            Err(why) => {
                return Ok(Promise::reject(&not_copyable(
                    "agent.describe: the tool name is not JSON-copyable",
                    &why,
                )))
            }
        };
        Ok(self
            .channel
            .request("describe", id, message, &text, timeout_ms))
    }

    /// Sends a `cancel` for that call id (never answered). A call still
    /// waiting for the first manifest is not sent at all and resolves
    /// `cancelled signal`, as the page answers a call cancelled before it ran.
    pub fn cancel(&self, id: &JsValue) -> Result<(), JsValue> {
        if self.channel.unqueue(id) {
            if let Some((resolve, timer)) = self.channel.take_waiting(id) {
                if !timer.is_undefined() {
                    host::clear_timeout(&timer);
                }
                let cancelled = host::object(&[
                    ("status", &JsValue::from_str("cancelled")),
                    ("by", &JsValue::from_str("signal")),
                ]);
                resolve.call1(&JsValue::UNDEFINED, &cancelled)?;
            }
            return Ok(());
        }
        self.channel
            .deliver(false, self.channel.message("cancel", id).into());
        Ok(())
    }

    /// Calls `callback(message)` with every `confirmed` message; returns its unsubscribe.
    #[wasm_bindgen(js_name = onConfirmed, unchecked_return_type = "() => void")]
    pub fn on_confirmed(&self, callback: &JsValue) -> JsValue {
        subscribe(&self.channel.confirmed, callback)
    }
}

/// `createInPageChannel()`: `{ transport, agent }`.
#[wasm_bindgen(js_name = createInPageChannel, unchecked_return_type = "{ transport: InPageTransport, agent: InPageAgent }")]
pub fn create_in_page_channel() -> JsValue {
    let empty = || Set::new(&JsValue::UNDEFINED);
    let channel = Rc::new_cyclic(|channel: &Weak<Channel>| Channel {
        to_page: empty(),
        raw_to_page: RefCell::default(),
        next_raw: Cell::new(0),
        to_agent: empty(),
        confirmed: empty(),
        waiting: Map::new(),
        timers: Map::new(),
        timer_count: Cell::new(0),
        to_page_task: delivery_task(channel.clone(), false),
        to_agent_task: delivery_task(channel.clone(), true),
        latest: RefCell::new(Latest {
            client_id: JsValue::UNDEFINED,
            rev: JsValue::UNDEFINED,
            tools: Array::new().into(),
        }),
        before_manifest: RefCell::default(),
        closed: Cell::new(false),
    });
    let transport = InPageTransport {
        channel: channel.clone(),
    };
    let agent = InPageAgent { channel };
    host::object(&[
        ("transport", &JsValue::from(transport)),
        ("agent", &JsValue::from(agent)),
    ])
    .into()
}
