//! `webmcp({ modelContext? })`: the plugin that offers the registry to
//! WebMCP browser agents (API.md, "WebMCP"). Attached, it registers every
//! tool visible to caller `inapp` with the model context's `registerTool`,
//! one `AbortController` per registration, and after every registry
//! revision re-registers what changed and aborts what is gone. Each
//! `execute` is a held page call of the core ([`Machine::call_held`]): the
//! same lanes, busy limit, validation and `inapp` policy as a bridge call,
//! and for a tool that needs a human it waits in the page's pending list
//! and resolves with the outcome, since a browser agent has no protocol for
//! `needs_confirmation`.
//!
//! [`Machine::call_held`]: crate::machine::Toolmark::call_held

use crate::prelude::*;
use alloc::rc::{Rc, Weak};
use core::cell::RefCell;
use js_sys::Function;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::AbortController;

use super::driver::{settled, spawn, Shared};
use super::error::{report, Failure};
use super::host::{self, get, js_function, present};
use super::registry::abort_on;
use super::values;
use crate::policy::Caller;
use crate::protocol::{to_json, ErrorEventCode, ToolManifest};

/// A WebMCP plugin, for one `tm.use`.
#[wasm_bindgen]
pub struct WebMcp {
    /// The model context given in the options; else looked up on attach.
    model_context: Option<JsValue>,
}

/// `webmcp(options?)`.
#[wasm_bindgen]
pub fn webmcp(options: JsValue) -> Result<WebMcp, JsValue> {
    let options = present(options).unwrap_or(JsValue::UNDEFINED);
    if !options.is_undefined() && !options.is_object() {
        return Err(Failure::misuse("webmcp: options must be an object").into());
    }
    let model_context = present(get(&options, "modelContext"));
    if let Some(context) = &model_context {
        if host::method(context, "registerTool").is_none() {
            return Err(Failure::misuse(
                "webmcp: modelContext must have registerTool(tool, options)",
            )
            .into());
        }
    }
    Ok(WebMcp { model_context })
}

/// `document.modelContext`, else the earlier `navigator.modelContext`.
fn found_model_context() -> Option<JsValue> {
    let global = host::global();
    ["document", "navigator"].into_iter().find_map(|owner| {
        present(get(&get(&global, owner), "modelContext"))
            .filter(|context| host::method(context, "registerTool").is_some())
    })
}

/// One registered tool: what it was registered with, and its controller.
struct Registration {
    name: String,
    /// The entry's JSON text: a changed entry is registered again.
    entry: String,
    controller: AbortController,
}

struct Registrations {
    shared: Weak<Shared>,
    context: JsValue,
    register: Function,
    live: RefCell<Vec<Registration>>,
}

impl WebMcp {
    /// Registers the tools and follows the registry; returns `dispose()`.
    /// With no model context it attaches nothing.
    pub(super) fn attach(self, shared: &Rc<Shared>) -> Result<Function, Failure> {
        let Some(context) = self.model_context.or_else(found_model_context) else {
            return Ok(js_function(|| {}));
        };
        let Some(register) = host::method(&context, "registerTool") else {
            return Ok(js_function(|| {}));
        };
        let registrations = Rc::new(Registrations {
            shared: Rc::downgrade(shared),
            context,
            register,
            live: RefCell::new(Vec::new()),
        });
        let follow = registrations.clone();
        let listener: JsValue = js_function(move || follow.sync()).into();
        shared.host(|h| h.rev_listeners.add(listener.clone()))?;
        registrations.sync();
        let weak = Rc::downgrade(shared);
        let detach = move || -> Result<(), Failure> {
            if let Some(shared) = weak.upgrade() {
                shared.host(|h| h.rev_listeners.remove(&listener))?;
            }
            let gone = core::mem::take(&mut *registrations.live.borrow_mut());
            for registration in gone {
                registration.controller.abort();
            }
            Ok(())
        };
        Ok(host::callback(move |_, _| {
            detach()?;
            Ok(JsValue::UNDEFINED)
        })
        .into_js_value()
        .unchecked_into())
    }
}

impl Registrations {
    /// Brings the registrations in line with the tools visible to `inapp`.
    fn sync(self: &Rc<Self>) {
        let Some(shared) = self.shared.upgrade() else {
            return;
        };
        let entries = match shared.with_core(|core| core.manifest_entries(Caller::Inapp)) {
            Ok(entries) => entries,
            Err(failure) => return report(failure),
        };
        let texts: Vec<String> = entries.iter().map(|e| to_json(&e.to_value())).collect();
        // Gone or changed: aborted (a changed one is registered again below).
        let stale: Vec<Registration> = {
            let mut live = self.live.borrow_mut();
            let mut stale = Vec::new();
            let mut index = 0;
            while index < live.len() {
                let current = live.get(index).is_some_and(|r| {
                    entries
                        .iter()
                        .zip(&texts)
                        .any(|(e, t)| e.summary.name == r.name && *t == r.entry)
                });
                if current {
                    index += 1;
                } else {
                    stale.push(live.swap_remove(index));
                }
            }
            stale
        };
        for registration in stale {
            registration.controller.abort();
        }
        for (entry, text) in entries.iter().zip(texts) {
            let registered = self
                .live
                .borrow()
                .iter()
                .any(|r| r.name == entry.summary.name);
            if !registered {
                self.register_tool(&shared, entry, text);
            }
        }
    }

    fn register_tool(self: &Rc<Self>, shared: &Rc<Shared>, entry: &ToolManifest, text: String) {
        let name = entry.summary.name.clone();
        let controller = match AbortController::new() {
            Ok(controller) => controller,
            Err(error) => {
                let message = format!(
                    "webmcp: {name} not registered: new AbortController() failed: {}",
                    &host::detail(&error)
                );
                return shared.failed(ErrorEventCode::TransportFailed, message, Some(name));
            }
        };
        let hints = &entry.summary.hints;
        let flag = |hint: Option<bool>| JsValue::from_bool(hint == Some(true));
        let annotations = host::object(&[
            ("readOnlyHint", &flag(hints.read_only)),
            ("untrustedContentHint", &flag(hints.untrusted_content)),
            (
                "consequentialHint",
                &JsValue::from_bool(
                    hints.consequential == Some(true) || hints.destructive == Some(true),
                ),
            ),
        ]);
        let untrusted = hints.untrusted_content == Some(true);
        let execute = execute_fn(Rc::downgrade(shared), name.clone(), untrusted);
        let tool = host::object(&[
            ("name", &JsValue::from_str(&name)),
            (
                "description",
                &JsValue::from_str(&entry.summary.description),
            ),
            (
                "inputSchema",
                &values::parse_text(&to_json(&entry.input_schema)),
            ),
            ("annotations", &annotations),
            ("execute", &execute),
        ]);
        if let Some(title) = &entry.summary.title {
            host::set(&tool, "title", &JsValue::from_str(title));
        }
        let options = host::object(&[("signal", &controller.signal())]);
        self.live.borrow_mut().push(Registration {
            name: name.clone(),
            entry: text,
            controller,
        });
        match self.register.call2(&self.context, &tool, &options) {
            Err(error) => rejected(shared, &name, &error),
            // A later rejection, awaited by the boundary's executor as a
            // tool's promise is (a throwing `then` rejects too).
            Ok(returned) if host::thenable(&returned) => {
                let weak = Rc::downgrade(shared);
                spawn(async move {
                    if let Err(error) = settled(Ok(returned)).await {
                        if let Some(shared) = weak.upgrade() {
                            rejected(&shared, &name, &error);
                        }
                    }
                });
            }
            Ok(_) => {}
        }
    }
}

/// A registration the model context refused (duplicate name, permissions
/// policy, insecure context): an `error` event, the page goes on.
fn rejected(shared: &Rc<Shared>, name: &str, error: &JsValue) {
    // An abort of our own controller (the tool went meanwhile) is no failure.
    if get(error, "name").as_string().as_deref() == Some("AbortError") {
        return;
    }
    let message = format!(
        "webmcp: registerTool({name}) was rejected: {}",
        &host::detail(error)
    );
    shared.failed(ErrorEventCode::TransportFailed, message, Some(name.into()));
}

/// The tool's `execute(input, { signal })`: a held page call as caller
/// `inapp`, resolving with its `ToolResult` (wrapped with the spec's note
/// for a tool marked `untrustedContent`).
fn execute_fn(shared: Weak<Shared>, name: String, untrusted: bool) -> JsValue {
    host::callback(move |input, options| {
        let Some(shared) = shared.upgrade() else {
            return Err(js_sys::Error::new("webmcp: the registry is gone").into());
        };
        let input = values::call_input(&input);
        let now = shared.now();
        let (handle, promise) = shared.request(untrusted, |core| {
            core.call_held(&name, &input, Caller::Inapp, now)
        })?;
        if let Some(signal) = present(get(&options, "signal")) {
            // Not an AbortSignal: the call runs uncancellable, as without one.
            let _ = abort_on(&shared, handle, &signal);
        }
        Ok(promise.into())
    })
    .into_js_value()
}
