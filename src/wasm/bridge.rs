//! `bridge({ transport, onChange?, caller?, maxMessageBytes? })`: the
//! plugin `tm.use` attaches (API.md, "Bridge and transports"). Its options
//! are read here and checked by the core ([`BridgeOptions::from_given`]);
//! attaching subscribes a function to the transport's `onMessage`, which
//! delivers nothing once the bridge closes (the collector frees it when the
//! transport lets go).
//! Every transport, ours and an app's, is used through that public
//! interface (docs/benchmarks.md, "One transport interface"), with one
//! shortcut: the WebSocket transport of this module knows that callback
//! ([`routes::text_route`]) and hands it a frame's text, not the message object
//! that the bridge would write back into text. For a large message that
//! round trip (`JSON.parse`, then `JSON.stringify`) was most of what the
//! frame cost the page (docs/benchmarks.md, "An agent's worst frames").

use crate::prelude::*;
use alloc::rc::{Rc, Weak};
use core::cell::Cell;
use js_sys::Function;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::driver::routes::{self, TextRoute};
use super::driver::{BridgeEntry, Shared};
use super::error::{report, Failure};
use super::host::{self, get, present};
use super::{status, values};
use crate::bridges::{RefusedOption, TransportCall};
use crate::machine::{BridgeId, BridgeOptions};
use crate::protocol::ErrorEventCode;

/// A bridge plugin, for one `tm.use`.
#[wasm_bindgen]
pub struct Bridge {
    transport: JsValue,
    send: Function,
    options: BridgeOptions,
}

/// `bridge(options)`.
#[wasm_bindgen]
pub fn bridge(options: JsValue) -> Result<Bridge, JsValue> {
    let options = present(options).unwrap_or(JsValue::UNDEFINED);
    let transport = get(&options, "transport");
    let send = get(&transport, "send");
    let on_message = get(&transport, "onMessage");
    let caller = get(&options, "caller");
    let on_change = get(&options, "onChange");
    let max_message_bytes = get(&options, "maxMessageBytes");
    let options = BridgeOptions::from_given(
        [&values::given(&send), &values::given(&on_message)],
        &values::given(&caller),
        &values::given(&on_change),
        &values::given(&max_message_bytes),
    )
    .map_err(|refused| {
        let value = match refused {
            RefusedOption::Transport => None,
            RefusedOption::Caller => Some(&caller),
            RefusedOption::OnChange => Some(&on_change),
            RefusedOption::MaxMessageBytes => Some(&max_message_bytes),
        };
        let shown = value.and_then(values::copy_text);
        Failure::misuse(refused.message(shown.as_deref().unwrap_or("undefined")))
    })?;
    Ok(Bridge {
        transport,
        send: send.unchecked_into(),
        options,
    })
}

/// An agent's message from the transport: its JSON text to the core, if
/// the core reads one of its length (wasm memory never shrinks).
fn inbound(weak: &Weak<Shared>, bridge: BridgeId, message: &JsValue) {
    let text = match js_sys::JSON::stringify(message) {
        Ok(text) if JsValue::from(&text).is_string() => text,
        _ => return inbound_not_json(weak, bridge),
    };
    let Some(shared) = weak.upgrade() else { return };
    let units = usize::try_from(text.length()).unwrap_or(usize::MAX);
    let now = shared.now();
    // Copied before the core is borrowed: the copy runs the glue's JS.
    let text = match shared.with_core(|core| core.inbound_reads(bridge, units)) {
        Ok(reads) => reads.then(|| String::from(text)),
        Err(busy) => return report(busy),
    };
    let input = shared.input(|core| match &text {
        Some(text) => core.handle_inbound(bridge, text, now),
        None => core.handle_inbound_unread(bridge, units),
    });
    if let Err(failure) = input {
        report(failure);
    }
}

fn inbound_not_json(weak: &Weak<Shared>, bridge: BridgeId) {
    let Some(shared) = weak.upgrade() else { return };
    if let Err(failure) = shared.input(|core| core.handle_inbound_not_json(bridge)) {
        report(failure);
    }
}

/// The bridge's `onMessage` callback (`messages`) or its `onStatus`
/// callback: one closure type for both.
fn listener(weak: Weak<Shared>, bridge: BridgeId, messages: bool) -> host::Callback {
    host::callback(move |value, _| {
        if messages {
            inbound(&weak, bridge, &value);
        } else {
            status_input(&weak, bridge, &value);
        }
        Ok(JsValue::UNDEFINED)
    })
}

/// A transport state to the core (a `status` event, and `transport_failed`
/// for an attempt that failed); one the core cannot read is an error event.
fn status_input(weak: &Weak<Shared>, bridge: BridgeId, value: &JsValue) {
    let Some(shared) = weak.upgrade() else { return };
    let state = status::from_js(value);
    let input = shared.input(|core| match state {
        Some(state) => core.handle_transport_status(bridge, state),
        None => core.handle_unreadable_status(bridge),
    });
    if let Err(failure) = input {
        report(failure);
    }
}

/// The transport's connection state, for one that has it
/// (`transport.status` now, then `transport.onStatus`).
fn watch_status(shared: &Rc<Shared>, bridge: BridgeId, transport: &JsValue) {
    let Some(on_status) = host::method(transport, "onStatus") else {
        return;
    };
    let weak = Rc::downgrade(shared);
    match host::read(transport, "status") {
        Ok(now) if now.is_undefined() => {}
        Ok(now) => status_input(&weak, bridge, &now),
        Err(error) => {
            let message = TransportCall::Status.failed(&host::detail(&error));
            shared.failed(ErrorEventCode::TransportFailed, message, None);
        }
    }
    // Freed by the collector with the function, once the transport lets go.
    let callback = listener(weak, bridge, false).into_js_value();
    let off = match on_status.call1(transport, &callback) {
        Ok(off) => off,
        Err(error) => {
            let message = TransportCall::OnStatus.failed(&host::detail(&error));
            shared.failed(ErrorEventCode::TransportFailed, message, None);
            return;
        }
    };
    keep_unsubscribe(shared, bridge, off, |entry| &mut entry.off_status);
}

/// Keeps what a subscription returned with the bridge's entry, in `slot`;
/// a bridge detached while subscribing keeps nothing, so it is called at once.
fn keep_unsubscribe(
    shared: &Shared,
    bridge: BridgeId,
    off: JsValue,
    slot: fn(&mut BridgeEntry) -> &mut JsValue,
) {
    let kept = shared.host(|h| match h.bridges.get_mut(&bridge.0) {
        Some(entry) => {
            *slot(entry) = off.clone();
            true
        }
        None => false,
    });
    if !matches!(kept, Ok(true)) {
        if let Some(off) = host::function(off) {
            let _ = off.call0(&JsValue::NULL);
        }
    }
}

impl Bridge {
    /// Attaches to the registry: the core sends the manifest; returns `dispose()`.
    pub(super) fn attach(self, shared: &Rc<Shared>) -> Result<Function, Failure> {
        let id = shared.with_core(|core| core.attach(self.options))?;
        let weak = Rc::downgrade(shared);
        let route = TextRoute {
            shared: weak.clone(),
            bridge: id,
        };
        let function: Function = listener(weak, id, true).into_js_value().unchecked_into();
        routes::remember(&function, route);
        // Kept before subscribing: a transport may hand over messages
        // inside `onMessage`, which the core takes and may answer at once.
        shared.host(|h| {
            h.bridges.insert(
                id.0,
                BridgeEntry {
                    transport: self.transport.clone(),
                    send: self.send.clone(),
                    callback: function.clone(),
                    off: JsValue::UNDEFINED,
                    off_status: JsValue::UNDEFINED,
                },
            )
        })?;
        let subscribed = match host::method(&self.transport, "onMessage") {
            Some(on_message) => on_message.call1(&self.transport, &function),
            None => Err(JsValue::from_str("transport.onMessage is not a function")),
        };
        let off = match subscribed {
            Ok(off) => off,
            Err(error) => {
                // Taken out first: a transport never subscribed is not closed.
                let entry = shared.host(|h| h.bridges.remove(&id.0));
                routes::forget(&function);
                let now = shared.now();
                shared.input(|core| core.detach(id, now))?;
                drop(entry);
                let message = TransportCall::OnMessage.failed(&host::detail(&error));
                return Err(Failure::misuse(message));
            }
        };
        keep_unsubscribe(shared, id, off, |entry| &mut entry.off);
        watch_status(shared, id, &self.transport);
        shared.flush();
        let shared = shared.clone();
        let disposed = Cell::new(false);
        Ok(host::callback(move |_, _| {
            if !disposed.get() {
                let now = shared.now();
                shared.input(|core| core.detach(id, now))?;
                disposed.set(true);
            }
            Ok(JsValue::UNDEFINED)
        })
        .into_js_value()
        .unchecked_into())
    }
}
