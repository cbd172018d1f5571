//! The driver: the core ([`machine::Toolmark`]) and the JS it reaches, in
//! one [`Shared`] state behind an `Rc`: the app's tool functions, the runs'
//! `AbortController`s, restorers, attached transports, waiting promises,
//! listeners and the timer for the core's next deadline.
//!
//! Re-entrancy: a tool, a listener or a transport's `send` may call back
//! into the registry synchronously. No `RefCell` borrow is ever held while
//! JS runs: [`Shared::drain`] takes everything the core produced in its
//! documented order (transmits, events, actions, the next deadline),
//! releases the core, then hands it out; an input that arrives meanwhile
//! asks for another round (`again`) instead of draining inside the drain.
//!
//! The page functions the core asks for (runs, validations, summaries,
//! restorers) are called by `runs`.

mod runs;

use crate::prelude::*;
use alloc::rc::Rc;
use core::cell::{Cell, RefCell};
use js_sys::{Function, JsString, Symbol};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::error::Failure;
use super::host::{self, Callback};
use super::values;
use crate::machine::{Action, BridgeId, Event, Handle, Toolmark as Machine, Transmit};
use crate::registry::{ScopeId, ToolKey};
use crate::vecmap::VecMap;

/// The definition hook `formTools` gives its submit tool: the form state
/// the core compares at approval (`stale`).
pub const STATE_KEY: &str = "toolmark.bridge-wasm.state";

/// The app's functions of one registered tool.
pub struct ToolFns {
    pub run: Function,
    pub summary: Option<Function>,
    pub changes: Option<Function>,
    pub snapshot: Option<Function>,
    pub state: Option<Function>,
    /// The Standard Schemas, validated by their own `~standard.validate`.
    pub input_standard: Option<JsValue>,
    pub output_standard: Option<JsValue>,
    pub full_name: String,
    pub scope: ScopeId,
}

struct Run {
    /// The run's `ctx` (js/src/context.js).
    context: RunContext,
    /// Whether the core aborted it: a rejection is then `aborted`.
    aborted: bool,
    tool: String,
}

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
    /// The `onMessage` callback, only kept: dropped (freed) with the entry
    /// when the bridge closes.
    #[allow(dead_code)]
    pub callback: Callback,
    /// What `onMessage` returned: the transport's unsubscribe.
    pub off: JsValue,
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
    fn snapshot(&self) -> Vec<Function> {
        self.0
            .iter()
            .filter_map(|l| l.clone().dyn_into().ok())
            .collect()
    }
}

#[derive(Default)]
pub struct Host {
    pub tools: VecMap<u32, Rc<ToolFns>>,
    /// Each scope's parent (for forgetting the functions of nested scopes).
    pub scope_parents: VecMap<u32, u32>,
    runs: VecMap<u64, Run>,
    /// Restorers by the run that took the snapshot (unique per page; runs
    /// can share a call id).
    restorers: VecMap<u64, Function>,
    /// Calls whose `snapshot()` has not resolved yet, and their run.
    snapshotting: Vec<u64>,
    /// A Standard Schema's validated values (a `Date` stays a `Date`), by
    /// validation run, until the run they are for starts: the core names
    /// them in `Run` / `Prepare` actions, or says `ForgetValidated`.
    validated: VecMap<u64, JsValue>,
    pub bridges: VecMap<u32, BridgeEntry>,
    /// Each request's `resolve`, and whether its result is handed out
    /// wrapped as untrusted content.
    completions: VecMap<u64, (Function, bool)>,
    pub error_listeners: Listeners,
    pub pending_listeners: Listeners,
    /// Called after every registry revision (the WebMCP registrations).
    pub rev_listeners: Listeners,
    timer: Option<JsValue>,
    /// The steps of runs, validations and restorers waiting for the next
    /// microtask (see [`Shared::later`]).
    jobs: Vec<Job>,
}

impl Drop for Host {
    /// A registry freed by the collector with its next deadline armed: the
    /// timer would fire into the freed callback (which throws). Its bridges
    /// still attached are closed as a detach closes them: a transport that
    /// kept calling the freed `onMessage` callback would throw on the next
    /// agent message.
    fn drop(&mut self) {
        if let Some(timer) = self.timer.take() {
            host::clear_timeout(&timer);
        }
        let bridges = core::mem::take(&mut self.bridges);
        for entry in bridges.values() {
            // Nobody is left to tell of a failure.
            if let Some(off) = host::function(entry.off.clone()) {
                let _ = off.call0(&JsValue::NULL);
            }
            if let Some(close) = host::method(&entry.transport, "close") {
                let _ = close.call0(&entry.transport);
            }
        }
    }
}

/// A step of the driver's work, run in a microtask.
type Job = Box<dyn FnOnce()>;

/// What a JS function returned or threw, once settled.
pub type Settled = Result<JsValue, JsValue>;

/// Callbacks made once per registry and handed to JS many times.
struct Callbacks {
    timer: Callback,
    jobs: Callback,
    confirm: Callback,
    files_resolve: Callback,
    send_failed: Callback,
}

/// Rounds of jobs one job microtask runs (see [`Shared::run_jobs`]).
const JOB_ROUNDS: usize = 64;

pub struct Shared {
    core: RefCell<Machine>,
    pub host: RefCell<Host>,
    clock: Option<Function>,
    on_confirm: Option<Function>,
    dev: bool,
    pub state_symbol: Symbol,
    draining: Cell<bool>,
    again: Cell<bool>,
    /// The job microtask is running: a job queued meanwhile runs in it too.
    running_jobs: Cell<bool>,
    callbacks: RefCell<Option<Callbacks>>,
    /// The strict `JSON.stringify` of tool results and validated inputs.
    pub strict: values::Strict,
}

impl Shared {
    pub fn new(
        core: Machine,
        clock: Option<Function>,
        on_confirm: Option<Function>,
        dev: bool,
        on_error: Option<Function>,
    ) -> Rc<Shared> {
        let shared = Rc::new(Shared {
            core: RefCell::new(core),
            host: RefCell::new(Host::default()),
            clock,
            on_confirm,
            dev,
            state_symbol: Symbol::for_(STATE_KEY),
            draining: Cell::new(false),
            again: Cell::new(false),
            running_jobs: Cell::new(false),
            callbacks: RefCell::new(None),
            strict: values::Strict::new(),
        });
        if let Some(on_error) = on_error {
            shared.host_mut(|h| h.error_listeners.add(on_error.into()));
        }
        let weak = Rc::downgrade(&shared);
        let callbacks = Callbacks {
            timer: host::callback({
                let weak = weak.clone();
                move |_, _| {
                    if let Some(shared) = weak.upgrade() {
                        shared.host_mut(|h| h.timer = None);
                        let now = shared.now();
                        shared.with_core(|core| core.handle_timeout(now));
                        shared.drain();
                    }
                    Ok(JsValue::UNDEFINED)
                }
            }),
            jobs: host::callback({
                let weak = weak.clone();
                move |_, _| {
                    if let Some(shared) = weak.upgrade() {
                        shared.run_jobs();
                    }
                    Ok(JsValue::UNDEFINED)
                }
            }),
            confirm: host::callback({
                let weak = weak.clone();
                move |run, message| {
                    Ok(match weak.upgrade() {
                        Some(shared) => shared.ctx_confirm(&run, &message),
                        None => js_sys::Promise::resolve(&JsValue::FALSE).into(),
                    })
                }
            }),
            files_resolve: host::callback(|_, _| {
                Err(Failure::toolmark(
                    "files_not_configured",
                    "ctx.files.resolve: file support lands in M2",
                )
                .into())
            }),
            send_failed: host::callback(move |error, _| {
                if let Some(shared) = weak.upgrade() {
                    shared.send_failed(&error);
                }
                Ok(JsValue::UNDEFINED)
            }),
        };
        if let Ok(mut slot) = shared.callbacks.try_borrow_mut() {
            *slot = Some(callbacks);
        }
        shared
    }

    pub fn now(&self) -> u64 {
        host::now_ms(self.clock.as_ref())
    }

    /// Runs `f` on the core. The core is never borrowed while JS runs, so
    /// it is always free here; `None` would mean a bug, not a panic.
    pub fn with_core<R>(&self, f: impl FnOnce(&mut Machine) -> R) -> Option<R> {
        self.core.try_borrow_mut().ok().map(|mut core| f(&mut core))
    }

    pub fn host_mut<R: Default>(&self, f: impl FnOnce(&mut Host) -> R) -> R {
        self.host
            .try_borrow_mut()
            .map(|mut host| f(&mut host))
            .unwrap_or_default()
    }

    fn callback<R>(&self, f: impl FnOnce(&Callbacks) -> R) -> Option<R> {
        self.callbacks.try_borrow().ok()?.as_ref().map(f)
    }

    /// Runs `job` in a microtask: the jobs queued until it runs run in that
    /// one microtask, in order, and so do the jobs they queue (within
    /// [`JOB_ROUNDS`]).
    pub fn later(&self, job: impl FnOnce() + 'static) {
        self.queue(Box::new(job));
    }

    fn queue(&self, job: Job) {
        let first = self.host_mut(|h| {
            h.jobs.push(job);
            h.jobs.len() == 1
        });
        if first && !self.running_jobs.get() {
            self.schedule_jobs();
        }
    }

    fn schedule_jobs(&self) {
        if let Some(run) = self.callback(|c| c.jobs.as_ref().unchecked_ref::<Function>().clone()) {
            host::queue_microtask(&run);
        }
    }

    /// The job microtask: the jobs queued so far, in order, then those they
    /// queued, for up to [`JOB_ROUNDS`] rounds (the next run of a lane
    /// starts in the microtask its predecessor finished in, as
    /// `spawn_local`'s queue runs what is spawned meanwhile); what is left
    /// after that waits for the next microtask, so other work gets a turn.
    fn run_jobs(&self) {
        self.running_jobs.set(true);
        for _ in 0..JOB_ROUNDS {
            let jobs = self.host_mut(|h| core::mem::take(&mut h.jobs));
            if jobs.is_empty() {
                break;
            }
            for job in jobs {
                job();
            }
        }
        self.running_jobs.set(false);
        if self.host_mut(|h| !h.jobs.is_empty()) {
            self.schedule_jobs();
        }
    }

    /// Runs `next` with what a JS function returned (or threw), settled as
    /// `await` would: a thenable is followed (`next` is queued as a job when
    /// it settles); a plain value or a throw goes to `next` at once.
    pub fn settle(self: &Rc<Self>, returned: Settled, next: impl FnOnce(Settled) + 'static) {
        match returned {
            Ok(value) if host::thenable(&value) => self.follow(&value, Box::new(next)),
            settled => next(settled),
        }
    }

    /// `next` in the microtask after the thenable `value` settles.
    fn follow(self: &Rc<Self>, value: &JsValue, next: Box<dyn FnOnce(Settled)>) {
        let promise: JsValue = match host::promise_resolve(value) {
            Ok(promise) => promise.into(),
            // As `await` has it: the throw rejects.
            Err(error) => return self.later(move || next(Err(error))),
        };
        let shared = self.clone();
        let next = Cell::new(Some(next));
        // One callback for both outcomes (bound to `true` and `false`);
        // freed by the JS garbage collector with the two bound functions.
        let settled: Function = host::callback(move |fulfilled, value| {
            if let Some(next) = next.take() {
                let settled = if fulfilled.is_truthy() {
                    Ok(value)
                } else {
                    Err(value)
                };
                shared.later(move || next(settled));
            }
            Ok(JsValue::UNDEFINED)
        })
        .into_js_value()
        .unchecked_into();
        if let Some(then) = host::method(&promise, "then") {
            let _ = then.call2(
                &promise,
                &settled.bind1(&JsValue::NULL, &JsValue::TRUE),
                &settled.bind1(&JsValue::NULL, &JsValue::FALSE),
            );
        }
    }

    /// Hands out everything the core produced, in the drain order
    /// (`poll_transmit`, `poll_event`, `poll_action`, `poll_timeout`),
    /// until an input made meanwhile has nothing more to add.
    pub fn drain(self: &Rc<Self>) {
        if self.draining.replace(true) {
            self.again.set(true);
            return;
        }
        loop {
            self.again.set(false);
            let Some((transmits, events, actions, timeout)) = self.with_core(|core| {
                let mut transmits = Vec::new();
                while let Some(t) = core.poll_transmit() {
                    transmits.push(t);
                }
                let mut events = Vec::new();
                while let Some(e) = core.poll_event() {
                    events.push(e);
                }
                let mut actions = Vec::new();
                while let Some(a) = core.poll_action() {
                    actions.push(a);
                }
                (transmits, events, actions, core.poll_timeout())
            }) else {
                break;
            };
            for transmit in transmits {
                self.transmit(transmit);
            }
            for event in events {
                self.event(event);
            }
            for action in actions {
                self.perform(action);
            }
            self.schedule(timeout);
            if !self.again.get() {
                break;
            }
        }
        self.draining.set(false);
    }

    fn schedule(&self, deadline: Option<u64>) {
        if let Some(timer) = self.host_mut(|h| h.timer.take()) {
            host::clear_timeout(&timer);
        }
        let Some(deadline) = deadline else { return };
        #[allow(clippy::cast_precision_loss)]
        let delay = (deadline.saturating_sub(self.now()) as f64).min(2_147_483_647.0);
        let Some(callback) =
            self.callback(|c| c.timer.as_ref().unchecked_ref::<Function>().clone())
        else {
            return;
        };
        let handle = host::set_timeout(&callback, delay);
        self.host_mut(|h| h.timer = handle);
    }

    /// An `error` event to every listener (`onError` first); a listener
    /// that throws is skipped over.
    pub fn emit_error(&self, code: &str, message: &str, tool: Option<&str>) {
        let listeners = self.host_mut(|h| h.error_listeners.snapshot());
        if listeners.is_empty() {
            return;
        }
        let event = host::object(&[
            ("code", &JsValue::from_str(code)),
            ("message", &JsValue::from_str(message)),
        ]);
        if let Some(tool) = tool {
            host::set(&event, "tool", &JsValue::from_str(tool));
        }
        for listener in listeners {
            let _ = listener.call1(&JsValue::NULL, &event);
        }
    }

    fn send_failed(&self, error: &JsValue) {
        let message = format!("transport.send failed: {}", &host::detail(error));
        self.emit_error("transport_failed", &message, None);
    }

    fn transmit(&self, transmit: Transmit) {
        let Some((transport, send)) = self.host_mut(|h| {
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
                    if let Some(on_failure) = self.callback(|c| c.send_failed.as_ref().clone()) {
                        let _ = then.call2(&sent, &JsValue::UNDEFINED, &on_failure);
                    }
                }
            }
        }
    }

    fn event(&self, event: Event) {
        match event {
            Event::Error {
                code,
                message,
                tool,
            } => self.emit_error(code.as_str(), &message, tool.as_deref()),
            Event::Completed { handle, result } => {
                if let Some((resolve, untrusted)) =
                    self.host_mut(|h| h.completions.remove(&handle.0))
                {
                    let value = if untrusted {
                        values::untrusted_result(&result)
                    } else {
                        values::result(&result)
                    };
                    let _ = resolve.call1(&JsValue::NULL, &value);
                }
            }
            Event::PendingChanged => {
                for listener in self.host_mut(|h| h.pending_listeners.snapshot()) {
                    let _ = listener.call0(&JsValue::NULL);
                }
            }
            Event::RevChanged { .. } => {
                for listener in self.host_mut(|h| h.rev_listeners.snapshot()) {
                    let _ = listener.call0(&JsValue::NULL);
                }
            }
        }
    }

    fn tool(&self, key: ToolKey) -> Option<Rc<ToolFns>> {
        self.host_mut(|h| h.tools.get(&key.0).cloned())
    }

    fn perform(self: &Rc<Self>, action: Action) {
        match action {
            Action::Run {
                run,
                tool,
                input,
                caller,
                call_id,
                snapshot,
                validated,
                ..
            } => {
                // The validated value itself when one was kept (used once), else the core's JSON.
                let input = self
                    .host_mut(|h| validated.and_then(|v| h.validated.remove(&v.0)))
                    .unwrap_or_else(|| values::parse_text(&input));
                self.start_run(run, tool, input, caller, call_id, snapshot);
            }
            Action::Validate { run, tool, input } => self.validate(run, tool, input),
            Action::Prepare {
                run,
                tool,
                input,
                summary,
                changes,
                state,
                validated,
            } => {
                // As for a run, but the value stays kept for the run to come.
                let input = self
                    .host_mut(|h| validated.and_then(|v| h.validated.get(&v.0).cloned()))
                    .unwrap_or_else(|| values::parse_text(&input));
                self.prepare(run, tool, &input, summary, changes, state);
            }
            Action::ReadState { run, tool, input } => self.read_state(run, tool, &input),
            Action::Abort { run } => {
                let context = self.host_mut(|h| {
                    h.runs.get_mut(&run.0).map(|r| {
                        r.aborted = true;
                        r.context.clone()
                    })
                });
                if let Some(context) = context {
                    abort_run(&context);
                }
            }
            Action::Restore { run, restorer } => self.restore(run, restorer),
            Action::DropRestorer { run } => self.host_mut(|h| {
                h.restorers.remove(&run.0);
                // Dropped before its snapshot resolved: it must not be kept afterwards.
                h.snapshotting.retain(|r| *r != run.0);
            }),
            Action::ForgetValidated { run } => self.host_mut(|h| {
                h.validated.remove(&run.0);
            }),
            Action::Close { bridge } => self.close(bridge),
        }
    }

    /// A bridge closed: the transport's listener removed, `close()` called,
    /// the callback freed.
    fn close(&self, bridge: BridgeId) {
        let Some(entry) = self.host_mut(|h| h.bridges.remove(&bridge.0)) else {
            return;
        };
        let mut failure = None;
        if let Some(off) = host::function(entry.off.clone()) {
            failure = off.call0(&JsValue::NULL).err();
        }
        if failure.is_none() {
            if let Some(close) = host::method(&entry.transport, "close") {
                failure = close.call0(&entry.transport).err();
            }
        }
        if let Some(error) = failure {
            let message = format!("transport.close failed: {}", &host::detail(&error));
            self.emit_error("transport_failed", &message, None);
        }
        drop(entry);
    }

    /// As [`Shared::request`], for a tool marked `untrustedContent`: the
    /// result comes wrapped with the spec's note.
    pub fn request_untrusted(self: &Rc<Self>, handle: Handle) -> js_sys::Promise {
        self.completion(handle, true)
    }

    /// A promise for a page request (`call`, `confirmPending`, `undo`),
    /// resolved when the core completes `handle`.
    pub fn request(self: &Rc<Self>, handle: Handle) -> js_sys::Promise {
        self.completion(handle, false)
    }

    fn completion(self: &Rc<Self>, handle: Handle, untrusted: bool) -> js_sys::Promise {
        let promise = js_sys::Promise::new(&mut |resolve, _reject| {
            self.host_mut(|h| h.completions.insert(handle.0, (resolve, untrusted)));
        });
        self.drain();
        promise
    }

    /// The app's functions of every tool in `scope` and its nested scopes
    /// are let go (the core has disposed of them).
    pub fn forget_scope(&self, scope: ScopeId) {
        self.host_mut(|h| {
            let mut gone = vec![scope.0];
            loop {
                let before = gone.len();
                for (child, parent) in h.scope_parents.iter() {
                    if gone.contains(parent) && !gone.contains(child) {
                        gone.push(*child);
                    }
                }
                if gone.len() == before {
                    break;
                }
            }
            let keys: Vec<u32> = h
                .tools
                .iter()
                .filter(|(_, tool)| gone.contains(&tool.scope.0))
                .map(|(key, _)| *key)
                .collect();
            for key in keys {
                h.tools.remove(&key);
            }
        });
    }
}
