//! The driver: the core ([`machine::Toolmark`]) and the JS it reaches, in
//! one [`Shared`] state behind an `Rc`: the app's tool functions, the runs'
//! `ctx`s, restorers, attached transports, waiting promises, listeners and
//! the timer for the core's next deadline.
//!
//! # The loop, and re-entrancy
//! Every input borrows the core, changes it and lets it go; then
//! [`Shared::flush`] hands out what it queued, one [`Output`] at a time, in
//! the order `poll_output` enforces, and arms the timer for the deadline
//! it ends with. No borrow of the core or of the [`Host`] is ever held
//! while JS runs (a borrow is taken for Rust work only), so a tool, a
//! listener or a transport's `send` may call back into the registry at any
//! point: the input is made at once and its outputs join the queue, which
//! the flush already running hands out next (a flush never nests). The one
//! JS the core itself calls is `crypto.getRandomValues`; a page that
//! replaces it with one calling back in gets [`Busy`].
//!
//! The page functions the core asks for (runs, validations, summaries,
//! restorers) are called by `runs`; a promise one returns is awaited in a
//! future polled by `tasks`, the one executor.

pub mod routes;
mod runs;
mod tasks;

pub use tasks::spawn;

use crate::prelude::*;
use alloc::rc::{Rc, Weak};
use core::cell::{Cell, RefCell};
use js_sys::{Function, JsString, Promise};
use wasm_bindgen::prelude::*;

use super::error::{report, Busy, Failure};
use super::host;
use super::values::{self, ToolFns};
use crate::bridges::TransportCall;
use crate::machine::{Action, BridgeId, Event, Handle, Output, Toolmark as Machine, Transmit};
use crate::protocol::{ErrorEventCode, ThrownErrorCode};
use crate::registry::ToolKey;
use crate::timer::{self, Arm, Rearm};
use crate::vecmap::VecMap;

#[wasm_bindgen(module = "/js/src/context.js")]
extern "C" {
    /// A run's `ctx`.
    #[derive(Clone)]
    type RunContext;

    #[wasm_bindgen(constructor)]
    fn new(
        run: f64,
        caller: &JsString,
        call_id: &str,
        confirm: &JsValue,
        resolve: &JsValue,
    ) -> RunContext;

    /// Aborts the ctx's `signal`.
    #[wasm_bindgen(js_name = abortRun)]
    fn abort_run(context: &RunContext);
}

/// An attached transport.
pub struct BridgeEntry {
    pub transport: JsValue,
    pub send: Function,
    /// The `onMessage` callback: freed by the collector once the transport
    /// lets go of it, so a transport calling it after the bridge closed (a
    /// dispatch over the subscribers it had) reaches a core that drops what
    /// a closed bridge is given.
    pub callback: Function,
    /// What `onMessage` returned: the transport's unsubscribe.
    pub off: JsValue,
    /// What `onStatus` returned, for a transport that has it.
    pub off_status: JsValue,
}

/// Listeners with `Set` semantics: added once, removed by identity.
#[derive(Default)]
pub struct Listeners(Vec<JsValue>);

impl Listeners {
    pub fn add(&mut self, listener: JsValue) {
        if !self.0.contains(&listener) {
            self.0.push(listener);
        }
    }
    pub fn remove(&mut self, listener: &JsValue) {
        self.0.retain(|l| l != listener);
    }
    /// The listeners now (called outside the borrow: one may unsubscribe).
    fn snapshot(&self) -> Vec<JsValue> {
        self.0.clone()
    }
    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// How a page request completes: its promise's `resolve`, whether its
/// result is handed out wrapped as untrusted content, and the `abort`
/// listener on its signal (the signal and the listener), removed then: a
/// signal that outlives its calls keeps none of their listeners.
struct Completion {
    resolve: Function,
    untrusted: bool,
    listened: Vec<(JsValue, Function)>,
}

#[derive(Default)]
pub struct Host {
    pub tools: VecMap<u32, Rc<ToolFns>>,
    /// Each run's `ctx` (js/src/context.js).
    runs: VecMap<u64, RunContext>,
    /// Restorers by the run that took the snapshot (unique per page; runs
    /// can share a call id).
    restorers: VecMap<u64, Function>,
    /// A Standard Schema's validated values (a `Date` stays a `Date`), by
    /// validation run, until the run they are for starts: the core names
    /// them in `Run` / `Prepare` actions, or says `ForgetValidated`.
    validated: VecMap<u64, JsValue>,
    pub bridges: VecMap<u32, BridgeEntry>,
    /// Each request's completion, by handle.
    completions: VecMap<u64, Completion>,
    pub error_listeners: Listeners,
    /// `tm.events.on('status')`: the bridges' transports' connection states.
    pub status_listeners: Listeners,
    pub pending_listeners: Listeners,
    /// Called after every registry revision (the WebMCP registrations).
    pub rev_listeners: Listeners,
    /// The armed `setTimeout`, the deadline it is for, and whether it keeps
    /// a Node process alive.
    timer: Option<(JsValue, u64, bool)>,
}

impl Drop for Host {
    /// A registry freed by the collector with its next deadline armed: the
    /// timer would fire into the freed callback (which throws). Its bridges
    /// still attached are closed as a detach closes them, and their routes
    /// forgotten (the table would keep their callbacks for good).
    fn drop(&mut self) {
        if let Some((timer, _, _)) = self.timer.take() {
            host::clear_timeout(&timer);
        }
        let bridges = core::mem::take(&mut self.bridges);
        for entry in bridges.values() {
            routes::forget(&entry.callback);
            // Nobody is left to tell of a failure.
            let _ = entry.shut();
        }
    }
}

impl BridgeEntry {
    /// Unsubscribes the transport's `onStatus` and `onMessage` and calls its
    /// `close()`, each even if one before it threw; what each call gave.
    fn shut(&self) -> [(TransportCall, Option<Settled>); 3] {
        let unsubscribe =
            |off: &JsValue| host::function(off.clone()).map(|f| f.call0(&JsValue::NULL));
        [
            (
                TransportCall::OnStatusUnsubscribe,
                unsubscribe(&self.off_status),
            ),
            (TransportCall::OnMessageUnsubscribe, unsubscribe(&self.off)),
            (
                TransportCall::Close,
                host::method(&self.transport, "close").map(|f| f.call0(&self.transport)),
            ),
        ]
    }
}

/// What a JS function returned or threw, once settled.
pub type Settled = Result<JsValue, JsValue>;

/// What a JS function returned (or threw), settled as `await` settles it:
/// a thenable is followed (a `then` or a promise's `constructor` that
/// throws when read rejects); a plain value or a throw is the answer as it is.
pub async fn settled(returned: Settled) -> Settled {
    let value = returned?;
    if !host::thenable(&value)? {
        return Ok(value);
    }
    let promise = host::promise_resolve(&value)?;
    js_sys::futures::JsFuture::from(promise).await
}

pub struct Shared {
    core: RefCell<Machine>,
    host: RefCell<Host>,
    clock: Option<Function>,
    on_confirm: Option<Function>,
    /// A flush is handing out outputs (further up the stack).
    flushing: Cell<bool>,
    /// Functions made once per registry and handed to JS many times, each
    /// freed by the collector with its last holder: a run's `ctx` or a
    /// send's promise may outlive the registry, and then gets what a
    /// registry that is gone answers.
    timer: Function,
    confirm: Function,
    files_resolve: Function,
    send_failed: Function,
    /// The strict `JSON.stringify` of tool results and validated inputs.
    pub strict: values::Strict,
}

/// A function of `shared`'s that answers `gone` once the registry is gone.
fn bound(
    weak: &Weak<Shared>,
    gone: fn() -> JsValue,
    f: impl Fn(&Rc<Shared>, JsValue, JsValue) -> Result<JsValue, JsValue> + 'static,
) -> Function {
    let weak = weak.clone();
    host::callback(move |a, b| match weak.upgrade() {
        Some(shared) => f(&shared, a, b),
        None => Ok(gone()),
    })
    .into_js_value()
    .unchecked_into()
}

impl Shared {
    pub fn new(
        core: Machine,
        clock: Option<Function>,
        on_confirm: Option<Function>,
        on_error: Option<Function>,
    ) -> Rc<Shared> {
        let mut host = Host::default();
        if let Some(on_error) = on_error {
            host.error_listeners.add(on_error.into());
        }
        Rc::new_cyclic(|weak| Shared {
            core: RefCell::new(core),
            host: RefCell::new(host),
            clock,
            on_confirm,
            flushing: Cell::new(false),
            timer: bound(
                weak,
                || JsValue::UNDEFINED,
                |shared, _, _| {
                    shared.host(|h| h.timer = None)?;
                    let now = shared.now();
                    shared.input(|core| core.handle_timeout(now))?;
                    Ok(JsValue::UNDEFINED)
                },
            ),
            // As for a run that has ended: `false`.
            confirm: bound(
                weak,
                || Promise::resolve(&JsValue::FALSE).into(),
                |shared, run, message| Ok(shared.ctx_confirm(&run, &message)),
            ),
            files_resolve: host::callback(|_, _| {
                Err(Failure::toolmark(
                    ThrownErrorCode::FilesNotConfigured,
                    "ctx.files.resolve: file support lands in M2",
                )
                .into())
            })
            .into_js_value()
            .unchecked_into(),
            send_failed: bound(
                weak,
                || JsValue::UNDEFINED,
                |shared, error, _| {
                    shared.send_failed(&error);
                    Ok(JsValue::UNDEFINED)
                },
            ),
            strict: values::Strict::new(),
        })
    }

    pub fn now(&self) -> u64 {
        host::now_ms(self.clock.as_ref())
    }

    /// Runs `f` on the core; [`Busy`] when the core is in use further up
    /// the stack (module docs).
    #[inline(always)]
    pub fn with_core<R>(&self, f: impl FnOnce(&mut Machine) -> R) -> Result<R, Busy> {
        let mut core = self.core.try_borrow_mut().map_err(|_| Busy)?;
        Ok(f(&mut core))
    }

    /// An input: `f` on the core, then its outputs handed out.
    pub fn input<R>(self: &Rc<Self>, f: impl FnOnce(&mut Machine) -> R) -> Result<R, Busy> {
        let answer = self.with_core(f)?;
        self.flush();
        Ok(answer)
    }

    /// Runs `f` on the host state. `f` is Rust only (no JS runs in it), so
    /// the state is free unless the core is busy in the same way.
    #[inline(always)]
    pub fn host<R>(&self, f: impl FnOnce(&mut Host) -> R) -> Result<R, Busy> {
        let mut host = self.host.try_borrow_mut().map_err(|_| Busy)?;
        Ok(f(&mut host))
    }

    /// Hands out the core's outputs one at a time, as `poll_output` orders
    /// them, until it returns the next deadline, for which the timer is
    /// armed. An input made by the JS called meanwhile queues its outputs in
    /// the core and this loop hands them out: a flush asked for during a
    /// flush returns at once. (A flush that finds the core in use stops: its
    /// user further up the stack flushes when it is done.)
    pub fn flush(self: &Rc<Self>) {
        if self.flushing.replace(true) {
            return;
        }
        while let Ok(output) = self.with_core(Machine::poll_output) {
            match output {
                Output::Transmit(transmit) => self.transmit(transmit),
                Output::Event(event) => self.event(event),
                Output::Action(action) => self.perform(action),
                Output::Timeout(deadline) => {
                    self.schedule(deadline);
                    break;
                }
            }
        }
        self.flushing.set(false);
    }

    /// Arms the timer for `deadline` (unless it already is), keeping a
    /// Node process alive for it while the core awaits a grace period.
    fn schedule(&self, deadline: Option<u64>) {
        let Ok(armed) = self.host(|h| h.timer.take()) else {
            return;
        };
        let kept = self.with_core(|core| core.awaits_grace()).unwrap_or(false);
        // A timer that holds the process when it should not, or the other
        // way round, is replaced.
        let armed = match armed {
            Some((timer, _, was_kept)) if was_kept != kept => {
                host::clear_timeout(&timer);
                None
            }
            armed => armed,
        };
        match timer::rearm(armed.as_ref().map(|(_, at, _)| *at), deadline, self.now()) {
            Rearm::Keep => {
                let _ = self.host(|h| h.timer = armed);
            }
            Rearm::Replace { arm } => {
                if let Some((timer, _, _)) = armed {
                    host::clear_timeout(&timer);
                }
                let Some(Arm { deadline, delay_ms }) = arm else {
                    return;
                };
                let callback = &self.timer;
                let delay = JsValue::from_f64(delay_ms);
                let armed = if kept {
                    host::set_timeout_kept(callback, &delay)
                } else {
                    host::set_timeout(callback, delay_ms)
                };
                if let Some(handle) = armed {
                    let _ = self.host(|h| h.timer = Some((handle, deadline, kept)));
                }
            }
        }
    }

    /// A failure JS reported (a transport's `send` or `close`, a WebMCP
    /// registration): an error event through the core's queue.
    pub fn failed(self: &Rc<Self>, code: ErrorEventCode, message: String, tool: Option<String>) {
        if let Err(failure) = self.input(|core| core.handle_failure(code, message, tool)) {
            report(failure);
        }
    }

    fn send_failed(self: &Rc<Self>, error: &JsValue) {
        let message = TransportCall::Send.failed(&host::detail(error));
        self.failed(ErrorEventCode::TransportFailed, message, None);
    }

    fn transmit(self: &Rc<Self>, transmit: Transmit) {
        let Ok(Some((transport, send))) = self.host(|h| {
            h.bridges
                .get(&transmit.bridge.0)
                .map(|b| (b.transport.clone(), b.send.clone()))
        }) else {
            return;
        };
        let message = values::parse_text(&transmit.text);
        match send.call1(&transport, &message) {
            Err(error) => self.send_failed(&error),
            Ok(sent) => {
                if let Some(then) = host::method(&sent, "then") {
                    let _ = then.call2(&sent, &JsValue::UNDEFINED, &self.send_failed);
                }
            }
        }
    }

    /// Calls each listener `pick` names with `argument`, each still
    /// listening when its turn comes (an earlier one may unsubscribe it);
    /// one that throws is reported as uncaught (as a transport's
    /// subscribers are) and does not keep the others from hearing.
    fn notify(&self, pick: fn(&Host) -> &Listeners, argument: &JsValue) {
        let listeners = self.host(|h| pick(h).snapshot()).unwrap_or_default();
        for listener in listeners {
            if !matches!(self.host(|h| pick(h).0.contains(&listener)), Ok(true)) {
                continue;
            }
            if let Some(listener) = host::function(listener) {
                if let Err(error) = listener.call1(&JsValue::NULL, argument) {
                    host::report_uncaught(&error);
                }
            }
        }
    }

    fn event(&self, event: Event) {
        let unheard =
            |pick: fn(&Host) -> &Listeners| self.host(|h| pick(h).is_empty()).unwrap_or(true);
        match event {
            Event::Error {
                code,
                message,
                tool,
            } => {
                if unheard(|h| &h.error_listeners) {
                    return;
                }
                let event = host::object(&[
                    ("code", &JsValue::from_str(code.as_str())),
                    ("message", &JsValue::from_str(&message)),
                ]);
                if let Some(tool) = tool {
                    host::set(&event, "tool", &JsValue::from_str(&tool));
                }
                self.notify(|h| &h.error_listeners, &event);
            }
            Event::Completed { handle, result } => {
                let Ok(Some(completion)) = self.host(|h| h.completions.remove(&handle.0)) else {
                    return;
                };
                let Completion {
                    resolve,
                    untrusted,
                    listened,
                } = completion;
                for (signal, listener) in listened {
                    if let Some(remove) = host::method(&signal, "removeEventListener") {
                        let _ = remove.call2(&signal, &JsValue::from_str("abort"), &listener);
                    }
                }
                let value = if untrusted {
                    values::untrusted_result(&result)
                } else {
                    values::result(&result)
                };
                let _ = resolve.call1(&JsValue::NULL, &value);
            }
            Event::Status { status, .. } => {
                if !unheard(|h| &h.status_listeners) {
                    self.notify(|h| &h.status_listeners, &super::status::to_js(&status));
                }
            }
            Event::PendingChanged => {
                self.notify(|h| &h.pending_listeners, &JsValue::UNDEFINED);
            }
            Event::RevChanged { .. } => {
                self.notify(|h| &h.rev_listeners, &JsValue::UNDEFINED);
            }
        }
    }

    fn tool(&self, key: ToolKey) -> Option<Rc<ToolFns>> {
        self.host(|h| h.tools.get(&key.0).cloned()).ok().flatten()
    }

    /// The value kept from a validation run (taken, or only looked at),
    /// else the core's JSON copy of the input.
    fn input_value(
        &self,
        validated: Option<crate::machine::RunId>,
        take: bool,
        json: &str,
    ) -> JsValue {
        let kept = validated.and_then(|v| {
            self.host(|h| {
                if take {
                    h.validated.remove(&v.0)
                } else {
                    h.validated.get(&v.0).cloned()
                }
            })
            .ok()
            .flatten()
        });
        kept.unwrap_or_else(|| values::parse_text(json))
    }

    fn perform(self: &Rc<Self>, action: Action) {
        match action {
            Action::Run(order) => {
                // The validated value itself when one was kept (used once).
                let input = self.input_value(order.validated, true, &order.input);
                self.start_run(order, input);
            }
            Action::Validate { run, tool, input } => self.validate(run, tool, input),
            Action::Prepare(order) => {
                // As for a run, but the value stays kept for the run to come.
                let input = self.input_value(order.validated, false, &order.input);
                self.prepare(&order, &input);
            }
            Action::ReadState { run, tool, input } => self.read_state(run, tool, &input),
            Action::Abort { run } => {
                let context = self.host(|h| h.runs.get(&run.0).cloned());
                if let Ok(Some(context)) = context {
                    abort_run(&context);
                }
            }
            Action::Restore { run, restorer } => self.restore(run, restorer),
            Action::DropRestorer { run } => {
                let _ = self.host(|h| h.restorers.remove(&run.0));
            }
            Action::ForgetValidated { run } => {
                let _ = self.host(|h| h.validated.remove(&run.0));
            }
            Action::Close { bridge } => self.close(bridge),
        }
    }

    /// A bridge closed: the transport's `onStatus` and `onMessage`
    /// unsubscribed, `close()` called (each even if one before it threw:
    /// disposing unsubscribes and closes), the callback's route forgotten.
    fn close(self: &Rc<Self>, bridge: BridgeId) {
        let Ok(Some(entry)) = self.host(|h| h.bridges.remove(&bridge.0)) else {
            return;
        };
        routes::forget(&entry.callback);
        for (call, made) in entry.shut() {
            if let Some(Err(error)) = made {
                let message = call.failed(&host::detail(&error));
                self.failed(ErrorEventCode::TransportFailed, message, None);
            }
        }
        drop(entry);
    }

    /// A page request (`call`, `confirmPending`, `undo`) made by `f`: a
    /// promise resolved with its result when the core completes it
    /// (wrapped with the spec's note for an `untrustedContent` tool). The
    /// promise's `resolve` is kept before the outputs are handed out, so a
    /// request the core completes at once is not missed. `listened`: the
    /// signal and the `abort` listener added for it, removed when it
    /// completes.
    pub fn request(
        self: &Rc<Self>,
        untrusted: bool,
        listened: Vec<(JsValue, Function)>,
        f: impl FnOnce(&mut Machine) -> Handle,
    ) -> Result<(Handle, Promise), Busy> {
        let handle = self.with_core(f)?;
        Ok((handle, self.completion(handle, untrusted, listened)?))
    }

    /// The promise of request `handle`, its `resolve` kept for the core's
    /// completion; then the outputs handed out. Apart from [`Self::request`]
    /// so that each of its callers does not carry a copy.
    fn completion(
        self: &Rc<Self>,
        handle: Handle,
        untrusted: bool,
        listened: Vec<(JsValue, Function)>,
    ) -> Result<Promise, Busy> {
        let mut resolve = None;
        let promise = Promise::new(&mut |r, _| resolve = Some(r));
        if let Some(resolve) = resolve {
            let completion = Completion {
                resolve,
                untrusted,
                listened,
            };
            self.host(|h| h.completions.insert(handle.0, completion))?;
        }
        self.flush();
        Ok(promise)
    }

    /// The app's functions of the tools the core removed are let go.
    pub fn forget_tools(&self, keys: &[ToolKey]) -> Result<(), Busy> {
        self.host(|h| {
            for key in keys {
                h.tools.remove(&key.0);
            }
        })
    }
}
