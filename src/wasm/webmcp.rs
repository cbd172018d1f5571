//! `webmcp({ modelContext? })`: the plugin that offers the registry to
//! WebMCP browser agents (API.md, "WebMCP"), a part of its own (`webmcp`,
//! Cargo.toml): an app that never imports it does not ship it. Attached, it
//! registers every tool visible to caller `inapp` with the model context's
//! `registerTool`, one `AbortController` per registration, and after every
//! registry revision re-registers what changed and aborts what is gone
//! (which ones, and the annotations: [`crate::webmcp`]).
//! Each `execute` is a held page call of the core ([`Machine::call_held`]):
//! the same lanes, busy limit, validation and `inapp` policy as a bridge
//! call, and for a tool that needs a human it waits in the page's pending
//! list and resolves with the outcome, since a browser agent has no protocol
//! for `needs_confirmation`; it lives as long as its registration (an
//! aborted registration cancels its calls). It reaches the registry only through the
//! [`RegistryLink`] `tm.use` hands it (the registry may be another module).
//!
//! [`Machine::call_held`]: crate::machine::Toolmark::call_held

use crate::prelude::*;
use alloc::rc::Rc;
use core::cell::{Cell, RefCell};
use js_sys::Function;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::AbortController;

use super::error::Failure;
use super::host::{self, get, js_function, present};
use super::values;
use crate::webmcp::{self, Annotations, ContextChoice, RegistrationFailure};

#[wasm_bindgen]
extern "C" {
    /// The registry's side of an attached plugin: `PluginLink` of
    /// src/wasm/registry.rs, reached through JS.
    pub type RegistryLink;

    /// The manifest entries visible to `inapp`, each as its JSON text;
    /// `undefined` once the registry is gone.
    #[wasm_bindgen(method, catch, js_name = inappEntries)]
    fn inapp_entries(this: &RegistryLink) -> Result<JsValue, JsValue>;

    /// Calls `listener` after every registry revision; returns its unsubscribe.
    #[wasm_bindgen(method, catch, js_name = onRevision)]
    fn on_revision(this: &RegistryLink, listener: &JsValue) -> Result<Function, JsValue>;

    /// A held page call as caller `inapp`, cancelled by `signal` or by
    /// `registration` (the signal of the registration it came through):
    /// its promise.
    #[wasm_bindgen(method, catch, js_name = callHeld)]
    fn call_held(
        this: &RegistryLink,
        name: &str,
        input: &JsValue,
        untrusted: bool,
        signal: &JsValue,
        registration: &JsValue,
    ) -> Result<JsValue, JsValue>;

    /// An `error` event (`transport_failed`) for that tool.
    #[wasm_bindgen(method)]
    fn failed(this: &RegistryLink, message: &str, tool: &str);
}

/// A WebMCP plugin, for one `tm.use`.
#[wasm_bindgen]
pub struct WebMcp {
    /// The model context given in the options and its `registerTool`;
    /// else looked up on attach.
    model_context: Option<(JsValue, Function)>,
    attached: Cell<bool>,
}

/// `webmcp(options?)`.
#[wasm_bindgen]
pub fn webmcp(options: JsValue) -> Result<WebMcp, JsValue> {
    let model_context = get(&options, "modelContext");
    let register_tool = get(&model_context, "registerTool");
    let choice = webmcp::options(
        &values::given(&options),
        &values::given(&model_context),
        &values::given(&register_tool),
    )
    .map_err(Failure::misuse)?;
    Ok(WebMcp {
        model_context: (choice == ContextChoice::Given)
            .then(|| (model_context, register_tool.unchecked_into())),
        attached: Cell::new(false),
    })
}

/// The host's model context ([`webmcp::CONTEXT_OWNERS`]) and its
/// `registerTool`.
fn found_model_context() -> Option<(JsValue, Function)> {
    let global = host::global();
    webmcp::CONTEXT_OWNERS.into_iter().find_map(|owner| {
        let context = get(&get(&global, owner), "modelContext");
        let register_tool = get(&context, "registerTool");
        webmcp::usable(&values::given(&context), &values::given(&register_tool))
            .then(|| (context, register_tool.unchecked_into()))
    })
}

/// One registered tool: what it was registered with, and its controller.
struct Registration {
    /// The entry's JSON text (its name in it): a changed entry is
    /// registered again.
    entry: String,
    controller: AbortController,
}

struct Registrations {
    link: RegistryLink,
    context: JsValue,
    register: Function,
    live: RefCell<Vec<Registration>>,
    /// A sync is under way further up the stack (a `registerTool` that
    /// changed the registry), and whether another must follow it.
    syncing: Cell<bool>,
    again: Cell<bool>,
    /// Detached: nothing is registered any more, also by a sync under way
    /// when `registerTool` detached.
    detached: Cell<bool>,
}

#[wasm_bindgen]
impl WebMcp {
    /// Called by `tm.use` with the registry's link (not part of the API):
    /// registers the tools and follows the registry; returns `dispose()`.
    /// With no model context it attaches nothing.
    #[wasm_bindgen(js_name = attachToRegistry)]
    pub fn attach_to_registry(&self, link: RegistryLink) -> Result<Function, JsValue> {
        if self.attached.replace(true) {
            return Err(Failure::misuse(crate::machine::NOT_A_PLUGIN).into());
        }
        let Some((context, register)) = self.model_context.clone().or_else(found_model_context)
        else {
            return Ok(js_function(|| {}));
        };
        let registrations = Rc::new(Registrations {
            link,
            context,
            register,
            live: RefCell::new(Vec::new()),
            syncing: Cell::new(false),
            again: Cell::new(false),
            detached: Cell::new(false),
        });
        let follow = registrations.clone();
        let listener: JsValue = js_function(move || follow.sync()).into();
        let unsubscribe = registrations.link.on_revision(&listener)?;
        registrations.sync();
        Ok(host::callback(move |_, _| {
            registrations.detached.set(true);
            unsubscribe.call0(&JsValue::UNDEFINED)?;
            let gone = core::mem::take(&mut *registrations.live.borrow_mut());
            for registration in gone {
                registration.controller.abort();
            }
            Ok(JsValue::UNDEFINED)
        })
        .into_js_value()
        .unchecked_into())
    }
}

impl Registrations {
    /// The JSON texts of the tools visible to `inapp` now (an entry's text
    /// holds its name, and names are unique, so equal texts are the same
    /// tool unchanged); `None` once the registry is gone.
    fn entries(&self) -> Option<Vec<String>> {
        let texts = match self.link.inapp_entries() {
            Ok(texts) => texts,
            Err(error) => {
                host::throw_in_microtask(error);
                return None;
            }
        };
        let texts: js_sys::Array = texts.dyn_into().ok()?;
        Some(texts.iter().filter_map(|text| text.as_string()).collect())
    }

    /// Brings the registrations in line with the tools visible to `inapp`,
    /// once more after each sync during which the registry changed (asked
    /// for from inside it, it only marks that).
    fn sync(self: &Rc<Self>) {
        if self.syncing.replace(true) {
            self.again.set(true);
            return;
        }
        loop {
            self.again.set(false);
            self.sync_once();
            if !self.again.get() {
                break;
            }
        }
        self.syncing.set(false);
    }

    /// One pass of [`Self::sync`] ([`webmcp::sync`]); only an entry
    /// registered anew is parsed.
    fn sync_once(self: &Rc<Self>) {
        let Some(mut entries) = self.entries() else {
            return;
        };
        let plan = {
            let live = self.live.borrow();
            let registered: Vec<&str> = live.iter().map(|r| r.entry.as_str()).collect();
            webmcp::sync(&registered, &entries)
        };
        let stale: Vec<Registration> = {
            let mut live = self.live.borrow_mut();
            let mut stale = Vec::new();
            for i in plan.stale {
                if i < live.len() {
                    stale.push(live.swap_remove(i));
                }
            }
            stale
        };
        for registration in stale {
            registration.controller.abort();
        }
        for i in plan.new {
            if self.detached.get() {
                return;
            }
            if let Some(text) = entries.get_mut(i) {
                self.register_tool(core::mem::take(text));
            }
        }
    }

    fn register_tool(self: &Rc<Self>, text: String) {
        let value = values::parse_text(&text);
        let Some(name) = get(&value, "name").as_string() else {
            return;
        };
        let controller = match AbortController::new() {
            Ok(controller) => controller,
            Err(error) => {
                let message =
                    RegistrationFailure::NoController.message(&name, &host::detail(&error));
                return self.link.failed(&message, &name);
            }
        };
        let hints = get(&value, "hints");
        let hinted = Annotations::of(|key| get(&hints, key) == JsValue::TRUE);
        let annotations = host::object(&[
            ("readOnlyHint", &JsValue::from_bool(hinted.read_only)),
            (
                "untrustedContentHint",
                &JsValue::from_bool(hinted.untrusted_content),
            ),
            (
                "consequentialHint",
                &JsValue::from_bool(hinted.consequential),
            ),
        ]);
        let execute = execute_fn(
            self.clone(),
            name.clone(),
            hinted.untrusted_content,
            controller.signal().into(),
        );
        let input_schema = get(&value, "inputSchema");
        let input_schema = match webmcp::object_schema(input_schema.as_bool()) {
            Some(object) => values::parse_text(object),
            None => input_schema,
        };
        let tool = host::object(&[
            ("name", &JsValue::from_str(&name)),
            ("description", &get(&value, "description")),
            ("inputSchema", &input_schema),
            ("annotations", &annotations),
            ("execute", &execute),
        ]);
        if let Some(title) = present(get(&value, "title")) {
            host::set(&tool, "title", &title);
        }
        let options = host::object(&[("signal", &controller.signal())]);
        self.live.borrow_mut().push(Registration {
            entry: text,
            controller,
        });
        match self.register.call2(&self.context, &tool, &options) {
            Err(error) => self.rejected(&name, &error),
            Ok(returned) => {
                // As `await` would: a later rejection of a thenable, or a
                // `then` (or a promise's `constructor`) that throws when read.
                let adopted = match host::thenable(&returned) {
                    Ok(false) => return,
                    Ok(true) => host::promise_resolve(&returned),
                    Err(thrown) => Err(thrown),
                };
                let adopted: JsValue = match adopted {
                    Ok(adopted) => adopted.into(),
                    Err(thrown) => return self.rejected(&name, &thrown),
                };
                let this = self.clone();
                let on_rejected = Closure::once_into_js(move |error: JsValue| {
                    this.rejected(&name, &error);
                });
                if let Some(catch) = host::method(&adopted, "catch") {
                    let _ = catch.call1(&adopted, &on_rejected);
                }
            }
        }
    }

    /// A registration the model context refused (duplicate name, permissions
    /// policy, insecure context): an `error` event, the page goes on.
    fn rejected(&self, name: &str, error: &JsValue) {
        let Some(failure) =
            RegistrationFailure::rejected(get(error, "name").as_string().as_deref())
        else {
            return;
        };
        self.link
            .failed(&failure.message(name, &host::detail(error)), name);
    }
}

/// The tool's `execute(input, { signal })`: a held page call as caller
/// `inapp`, resolving with its `ToolResult` (wrapped with the spec's note
/// for a tool marked `untrustedContent`). It lives as long as its
/// registration: once that is aborted, a call under way is cancelled and
/// a new one is cancelled before anything runs.
fn execute_fn(
    registrations: Rc<Registrations>,
    name: String,
    untrusted: bool,
    registration: JsValue,
) -> JsValue {
    host::callback(move |input, options| {
        let signal = get(&options, "signal");
        (registrations.link).call_held(&name, &input, untrusted, &signal, &registration)
    })
    .into_js_value()
}
