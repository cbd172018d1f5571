//! The registry's classes as JS sees them (API.md, "Registry"):
//! `createToolmark(options)` → [`Toolmark`], its scopes ([`Scope`]) and
//! `tm.events` ([`Events`]). Each holds the one [`Shared`] state; methods
//! take `&self`, so a tool may call back into the registry while a method
//! of it is running.

use crate::prelude::*;
use alloc::rc::{Rc, Weak};
use core::cell::Cell;
use js_sys::{Function, Promise};
use wasm_bindgen::convert::TryFromJsValue;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::bridge::Bridge;
use super::driver::Shared;
use super::error::{Busy, Failure};
use super::host::{self, get, js_function, present};
use super::properties::HostProperties;
use super::protocol::CryptoRandom;
use super::values::{self, given};
use crate::machine::{Handle, PageCall, RefusedCallOption, SignalUse, Toolmark as Machine, Topic};
use crate::outputs::check_listener;
use crate::policy::Caller;
use crate::protocol::{to_json, ErrorEventCode, ThrownErrorCode};
use crate::registry::{self, ScopeId, ToolKey};
use crate::schema::pattern::LinearPatterns;

/// `createToolmark(options)`: the page's registry.
#[wasm_bindgen(js_name = createToolmark)]
pub fn create_toolmark(options: JsValue) -> Result<Toolmark, JsValue> {
    crate::given::options_object(
        &given(&options),
        "createToolmark: options must be an object",
    )
    .map_err(Failure::misuse)?;
    let options = present(options).unwrap_or_else(|| js_sys::Object::new().into());
    let on_confirm = host::method(&options, "onConfirm");
    let config = values::config(&options, on_confirm.as_ref())?;
    // Linear time for every pattern; registration refuses the rest.
    // `\p{…}` as the page's RegExp enumerates it.
    let patterns = LinearPatterns::with_properties(Box::new(HostProperties));
    let core =
        Machine::new(config, Box::new(CryptoRandom), Box::new(patterns)).map_err(Failure::from)?;
    let shared = Shared::new(
        core,
        host::method(&options, "now"),
        on_confirm,
        host::method(&options, "onError"),
    );
    // Events from the constructor (a bad policy outside dev mode).
    shared.flush();
    Ok(Toolmark { shared })
}

fn register_in(shared: &Rc<Shared>, scope: ScopeId, def: &JsValue) -> Result<Function, JsValue> {
    registry::field::definition(&given(def)).map_err(Failure::misuse)?;
    let run = host::read(def, "run")?;
    registry::field::run(&given(&run)).map_err(Failure::misuse)?;
    let (spec, tool) = values::tool_def(def, run.unchecked_into())?;
    let now = shared.now();
    let registered = shared.with_core(|core| core.register(scope, spec, now))?;
    let key = match registered {
        Err(error) => {
            shared.flush();
            return Err(Failure::from(error).into());
        }
        // Misconfigured outside dev mode: an error event says so.
        Ok(None) => {
            shared.flush();
            return Ok(js_function(|| {}));
        }
        Ok(Some(key)) => key,
    };
    // Kept before the outputs are handed out: a run of it may start then.
    shared.host(|h| h.tools.insert(key.0, Rc::new(tool)))?;
    shared.flush();
    let shared = shared.clone();
    let removed = Cell::new(false);
    Ok(host::callback(move |_, _| {
        if !removed.get() {
            unregister(&shared, key)?;
            removed.set(true);
        }
        Ok(JsValue::UNDEFINED)
    })
    .into_js_value()
    .unchecked_into())
}

fn unregister(shared: &Rc<Shared>, key: ToolKey) -> Result<(), Failure> {
    let now = shared.now();
    shared.with_core(|core| core.unregister(key, now))?;
    shared.host(|h| h.tools.remove(&key.0))?;
    shared.flush();
    Ok(())
}

fn create_scope(shared: &Rc<Shared>, parent: ScopeId, name: &JsValue) -> Result<Scope, Failure> {
    let name = registry::Registry::scope_name(given(name)).map_err(Failure::misuse)?;
    let made = shared.input(|core| core.create_scope(parent, &name))??;
    Ok(Scope {
        shared: shared.clone(),
        id: made.id(),
    })
}

/// A caller option, checked by the core ([`Caller::from_given`]).
fn caller(value: JsValue, default: Caller, what: &str) -> Result<Caller, Failure> {
    Caller::from_given(&values::given(&value), default)
        .ok_or_else(|| Failure::misuse(Caller::unknown(what, &host::string(&value))))
}

/// The registry `createToolmark` returns.
#[wasm_bindgen]
pub struct Toolmark {
    shared: Rc<Shared>,
}

#[wasm_bindgen]
impl Toolmark {
    /// Registry revision, an integer ≥ 0, +1 on every change.
    #[wasm_bindgen(getter)]
    pub fn rev(&self) -> Result<f64, JsValue> {
        #[allow(clippy::cast_precision_loss)]
        let rev = self.shared.with_core(|core| core.rev())? as f64;
        Ok(rev)
    }

    /// Registers a tool under its own name; returns `unregister()`.
    #[wasm_bindgen(unchecked_return_type = "() => void")]
    pub fn register(&self, def: JsValue) -> Result<Function, JsValue> {
        register_in(&self.shared, ScopeId::ROOT, &def)
    }

    /// A scope: its tools are `<name>.<tool>`.
    pub fn scope(&self, name: JsValue) -> Result<Scope, JsValue> {
        Ok(create_scope(&self.shared, ScopeId::ROOT, &name)?)
    }

    /// Calls a tool by its full name; resolves with its `ToolResult`, never rejects.
    pub fn call(
        &self,
        name: JsValue,
        input: JsValue,
        options: JsValue,
    ) -> Result<Promise, JsValue> {
        let (caller, rev) = (get(&options, "caller"), get(&options, "rev"));
        let signal = get(&options, "signal");
        let given_signal = values::given_signal(&signal);
        let call = PageCall::from_given(
            values::given_text(&input),
            &given(&options),
            &given(&caller),
            &given(&rev),
            given_signal,
        )
        .map_err(|refused| {
            let shown = match refused {
                RefusedCallOption::Options => &options,
                RefusedCallOption::Caller => &caller,
                RefusedCallOption::Rev => &rev,
                RefusedCallOption::Signal => &signal,
            };
            Failure::misuse(refused.message(&host::string(shown)))
        })?;
        let name = host::string(&name);
        let shared = &self.shared;
        let now = shared.now();
        let watch = SignalWatch::new(shared, call.signal, &signal)?;
        let listened = watch.listened.clone();
        let (handle, promise) =
            shared.request(false, listened, |core| core.page_call(&name, &call, now))?;
        watch.watched(handle);
        Ok(promise)
    }

    /// Summary entries visible to that caller (default `'inapp'`).
    pub fn manifest(&self, caller_name: JsValue) -> Result<JsValue, JsValue> {
        let caller = caller(caller_name, Caller::Inapp, "manifest")?;
        let list = self.shared.with_core(|core| core.manifest(caller))?;
        Ok(values::js(&list))
    }

    /// The deferred confirmations waiting for a human.
    #[wasm_bindgen(js_name = pendingConfirmations)]
    pub fn pending_confirmations(&self) -> Result<JsValue, JsValue> {
        let pending = self.shared.with_core(|core| core.pending_confirmations())?;
        Ok(values::js(&pending))
    }

    /// `listener()` on every change of `pendingConfirmations()`; returns unsubscribe.
    #[wasm_bindgen(js_name = subscribePending, unchecked_return_type = "() => void")]
    pub fn subscribe_pending(&self, listener: JsValue) -> Result<Function, JsValue> {
        Ok(subscribe(
            &self.shared,
            "subscribePending",
            listener,
            |h| &mut h.pending_listeners,
        )?)
    }

    /// Approves or rejects a deferred confirmation; resolves with the final result.
    #[wasm_bindgen(js_name = confirmPending)]
    pub fn confirm_pending(
        &self,
        confirm_id: JsValue,
        approve: JsValue,
    ) -> Result<Promise, JsValue> {
        let approve = crate::machine::approve_given(approve.as_bool()).map_err(Failure::misuse)?;
        let confirm_id = host::string(&confirm_id);
        let now = self.shared.now();
        Ok(settle(self.shared.request(false, Vec::new(), |core| {
            core.confirm(&confirm_id, approve, now)
        })))
    }

    /// Runs the restorer of that call (`refused undo_unavailable` when there is none).
    pub fn undo(&self, call_id: JsValue) -> Promise {
        let call_id = host::string(&call_id);
        settle(
            self.shared
                .request(false, Vec::new(), |core| core.undo(&call_id)),
        )
    }

    /// `tm.events.on('error', listener)`.
    #[wasm_bindgen(getter)]
    pub fn events(&self) -> Events {
        Events {
            shared: self.shared.clone(),
        }
    }

    /// Attaches a plugin (`bridge(...)`, or one that attaches itself through
    /// a [`PluginLink`]: `webmcp(...)`, a part of its own); returns its
    /// dispose function.
    #[wasm_bindgen(js_name = "use", unchecked_return_type = "() => void")]
    pub fn use_plugin(&self, plugin: JsValue) -> Result<Function, JsValue> {
        let plugin = match Bridge::try_from_js_value(plugin) {
            Ok(bridge) => return Ok(bridge.attach(&self.shared)?),
            Err(plugin) => plugin,
        };
        let Some(attach) = host::method(&plugin, "attachToRegistry") else {
            return Err(Failure::misuse(crate::machine::NOT_A_PLUGIN).into());
        };
        let link = PluginLink {
            shared: Rc::downgrade(&self.shared),
        };
        let dispose = attach.call1(&plugin, &link.into())?;
        dispose.dyn_into().map_err(|_| {
            Failure::misuse("use: the plugin's attachToRegistry did not return a function").into()
        })
    }
}

/// What a plugin of another part (`webmcp`) reaches of the registry, given
/// to its `attachToRegistry` by `tm.use`; not part of the API. Holds the
/// registry weakly: a plugin does not keep it alive.
#[wasm_bindgen]
pub struct PluginLink {
    shared: Weak<Shared>,
}

#[wasm_bindgen]
impl PluginLink {
    /// The manifest entries visible to `inapp`, each as its JSON text;
    /// `undefined` once the registry is gone.
    #[wasm_bindgen(js_name = inappEntries)]
    pub fn inapp_entries(&self) -> Result<JsValue, JsValue> {
        let Some(shared) = self.shared.upgrade() else {
            return Ok(JsValue::UNDEFINED);
        };
        let entries = shared.with_core(|core| core.manifest_entries(Caller::Inapp))?;
        Ok(entries
            .iter()
            .map(|entry| JsValue::from_str(&to_json(&entry.to_value())))
            .collect::<js_sys::Array>()
            .into())
    }

    /// Calls `listener` after every registry revision; returns its unsubscribe.
    #[wasm_bindgen(js_name = onRevision)]
    pub fn on_revision(&self, listener: JsValue) -> Result<Function, JsValue> {
        let Some(shared) = self.shared.upgrade() else {
            return Ok(js_function(|| {}));
        };
        Ok(subscribe(&shared, "onRevision", listener, |h| {
            &mut h.rev_listeners
        })?)
    }

    /// A held page call as caller `inapp` (waiting in the pending list when
    /// the tool needs a human), cancelled by `signal` or by `registration`,
    /// the signal of the registration it came through; its promise resolves
    /// with the `ToolResult`, wrapped with the spec's note when `untrusted`.
    #[wasm_bindgen(js_name = callHeld)]
    pub fn call_held(
        &self,
        name: String,
        input: JsValue,
        untrusted: bool,
        signal: JsValue,
        registration: JsValue,
    ) -> Result<Promise, JsValue> {
        let Some(shared) = self.shared.upgrade() else {
            return Err(Failure::toolmark(
                ThrownErrorCode::RegistryGone,
                "webmcp: the registry is gone (freed): attach webmcp to a registry the page keeps",
            )
            .into());
        };
        let call = PageCall::held(
            values::given_text(&input),
            values::given_signal(&signal),
            get(&registration, "aborted").is_truthy(),
        );
        let now = shared.now();
        let mut watch = SignalWatch::new(&shared, call.signal, &signal)?;
        if call.signal != SignalUse::Abort {
            watch.listen(&registration);
        }
        let listened = watch.listened.clone();
        let (handle, promise) = shared.request(untrusted, listened, |core| {
            core.page_call(&name, &call, now)
        })?;
        watch.watched(handle);
        Ok(promise)
    }

    /// An `error` event (`transport_failed`) for that tool.
    pub fn failed(&self, message: String, tool: String) {
        if let Some(shared) = self.shared.upgrade() {
            shared.failed(ErrorEventCode::TransportFailed, message, Some(tool));
        }
    }
}

/// A request's promise, or one rejected with why it could not be made.
fn settle(request: Result<(Handle, Promise), Busy>) -> Promise {
    match request {
        Ok((_, promise)) => promise,
        Err(busy) => Promise::reject(&busy.into()),
    }
}

/// `method(listener)`: adds it to the listeners `pick` names; returns its
/// unsubscribe.
fn subscribe(
    shared: &Rc<Shared>,
    method: &str,
    listener: JsValue,
    pick: fn(&mut super::driver::Host) -> &mut super::driver::Listeners,
) -> Result<Function, Failure> {
    check_listener(method, &given(&listener), || host::string(&listener))
        .map_err(Failure::misuse)?;
    shared.host(|h| pick(h).add(listener.clone()))?;
    let shared = shared.clone();
    // Let go of on unsubscribe: a listener kept by the unsubscribe function
    // stays alive with it, and if the listener can reach that function,
    // neither is ever collected (the module's externref table is a GC root).
    let listener = Cell::new(Some(listener));
    Ok(host::callback(move |_, _| {
        if let Some(kept) = listener.take() {
            if let Err(failure) = shared.host(|h| pick(h).remove(&kept)) {
                listener.set(Some(kept));
                return Err(failure.into());
            }
        }
        Ok(JsValue::UNDEFINED)
    })
    .into_js_value()
    .unchecked_into())
}

/// A page request's signals (its own, as [`SignalUse`] says, and a WebMCP
/// `execute`'s registration's): the request they are for, once made, is
/// aborted when one of them aborts.
struct SignalWatch {
    made: Rc<Cell<Option<Handle>>>,
    shared: Weak<Shared>,
    /// The signals listened to, and their `abort` listener, which aborts
    /// the request made, if any.
    listened: Vec<(JsValue, Function)>,
}

impl SignalWatch {
    /// Listens to `signal` as `watch` says, before its request is made;
    /// when a required listener cannot be added, the request is refused
    /// and nothing is made.
    fn new(shared: &Rc<Shared>, watch: SignalUse, signal: &JsValue) -> Result<Self, Failure> {
        let mut watching = SignalWatch {
            made: Rc::default(),
            shared: Rc::downgrade(shared),
            listened: Vec::new(),
        };
        if let SignalUse::Listen { required } = watch {
            if !watching.listen(signal) && required {
                let shown = host::string(signal);
                return Err(Failure::misuse(RefusedCallOption::Signal.message(&shown)));
            }
        }
        Ok(watching)
    }

    /// Adds the `abort` listener to `signal`; false when it cannot be added.
    fn listen(&mut self, signal: &JsValue) -> bool {
        let on_abort = match self.listened.first() {
            Some((_, on_abort)) => on_abort.clone(),
            None => {
                let (weak, request) = (self.shared.clone(), self.made.clone());
                host::callback(move |_, _| {
                    if let (Some(shared), Some(handle)) = (weak.upgrade(), request.get()) {
                        let now = shared.now();
                        shared.input(|core| core.abort(handle, now))?;
                    }
                    Ok(JsValue::UNDEFINED)
                })
                .into_js_value()
                .unchecked_into()
            }
        };
        let once = host::object(&[("once", &JsValue::TRUE)]);
        let listened = host::method(signal, "addEventListener").is_some_and(|listen| {
            listen
                .call3(signal, &JsValue::from_str("abort"), &on_abort, &once)
                .is_ok()
        });
        if listened {
            self.listened.push((signal.clone(), on_abort));
        }
        listened
    }

    /// The request is made: aborted (in a microtask) if a signal aborted
    /// while its first outputs were handed out, before its listener could
    /// know the request.
    fn watched(self, handle: Handle) {
        self.made.set(Some(handle));
        if let Some((_, on_abort)) = self
            .listened
            .iter()
            .find(|(signal, _)| get(signal, "aborted").is_truthy())
        {
            host::queue_microtask(on_abort);
        }
    }
}

/// `tm.scope(name)`: registers `<name>.<tool>`; disposing it unregisters everything in it.
#[wasm_bindgen]
pub struct Scope {
    shared: Rc<Shared>,
    id: ScopeId,
}

#[wasm_bindgen]
impl Scope {
    /// Registers `<this name>.<name>`; returns `unregister()`.
    #[wasm_bindgen(unchecked_return_type = "() => void")]
    pub fn register(&self, def: JsValue) -> Result<Function, JsValue> {
        register_in(&self.shared, self.id, &def)
    }

    /// A nested scope: `<this name>.<name>`.
    pub fn scope(&self, name: JsValue) -> Result<Scope, JsValue> {
        Ok(create_scope(&self.shared, self.id, &name)?)
    }

    /// Unregisters every tool of this scope and its nested scopes.
    pub fn dispose(&self) -> Result<(), JsValue> {
        let now = self.shared.now();
        let disposed = self
            .shared
            .with_core(|core| core.dispose_scope(self.id, now))?;
        if let Ok(removed) = &disposed {
            self.shared.forget_tools(removed)?;
        }
        self.shared.flush();
        disposed
            .map(drop)
            .map_err(|error| Failure::from(error).into())
    }

    /// The full dotted prefix, e.g. `signup` or `signup.address`.
    #[wasm_bindgen(getter)]
    pub fn name(&self) -> Result<String, JsValue> {
        let prefix = self
            .shared
            .with_core(|core| core.scope_prefix(self.id).map(str::to_owned))?;
        Ok(prefix.unwrap_or_default())
    }
}

/// `tm.events`.
#[wasm_bindgen]
pub struct Events {
    shared: Rc<Shared>,
}

#[wasm_bindgen]
impl Events {
    /// `on('error' | 'status', listener)`; returns unsubscribe.
    #[wasm_bindgen(unchecked_return_type = "() => void")]
    pub fn on(&self, name: JsValue, listener: JsValue) -> Result<Function, JsValue> {
        let pick: fn(&mut super::driver::Host) -> &mut super::driver::Listeners =
            match Topic::named(&given(&name)) {
                Some(Topic::Error) => |h| &mut h.error_listeners,
                Some(Topic::Status) => |h| &mut h.status_listeners,
                None => return Err(Failure::misuse(Topic::unknown(&host::string(&name))).into()),
            };
        Ok(subscribe(&self.shared, "events.on", listener, pick)?)
    }
}
