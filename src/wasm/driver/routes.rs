//! Which `onMessage` callbacks are attached bridges' own: a WebSocket
//! transport of this module hands such a callback a frame's text, not the
//! message object the bridge would write back into text
//! (docs/benchmarks.md, "One transport interface").

use crate::prelude::*;
use alloc::rc::Weak;
use core::cell::RefCell;
use js_sys::Function;
use wasm_bindgen::prelude::*;

use super::Shared;
use crate::machine::BridgeId;
use crate::wasm::error::report;

/// Where a bridge's `onMessage` callback delivers: the core behind it.
#[derive(Clone)]
pub struct TextRoute {
    pub shared: Weak<Shared>,
    pub bridge: BridgeId,
}

impl TextRoute {
    /// A WebSocket frame's text, unread by its transport: the core drops it
    /// if it is not JSON, as the transport would.
    pub fn deliver_frame(&self, text: &str) {
        let Some(shared) = self.shared.upgrade() else {
            return;
        };
        let now = shared.now();
        if let Err(failure) = shared.input(|core| core.handle_inbound_frame(self.bridge, text, now))
        {
            report(failure);
        }
    }
}

std::thread_local! {
    /// The attached bridges' callbacks, each with its route.
    static ROUTES: RefCell<Vec<(Function, TextRoute)>> = const { RefCell::new(Vec::new()) };
}

/// The route of `callback` when it is an attached bridge's own.
pub fn text_route(callback: &Function) -> Option<TextRoute> {
    ROUTES.with(|routes| {
        let routes = routes.try_borrow().ok()?;
        let (_, route) = routes
            .iter()
            .find(|(known, _)| js_sys::Object::is(known, callback))?;
        Some(route.clone())
    })
}

/// A bridge attached: its callback routes to `route`.
pub fn remember(callback: &Function, route: TextRoute) {
    ROUTES.with(|routes| {
        if let Ok(mut routes) = routes.try_borrow_mut() {
            routes.push((callback.clone(), route));
        }
    });
}

/// The bridge closed: its callback no longer routes.
pub fn forget(callback: &JsValue) {
    ROUTES.with(|routes| {
        if let Ok(mut routes) = routes.try_borrow_mut() {
            routes.retain(|(known, _)| !js_sys::Object::is(known, callback));
        }
    });
}
