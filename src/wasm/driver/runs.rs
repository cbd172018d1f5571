//! The page's functions the core asks for, from [`Action`](crate::machine::Action)s:
//! a tool's `snapshot` and `run` (with its `ctx`), a Standard Schema's
//! `validate` (of the input, and in dev mode of the output), `summary` /
//! `changes` / the form state, and restorers. Each answer goes back to the
//! core as an input.
//!
//! Runs, validations and restorers are futures [`spawn`]ed: each starts in
//! a microtask after the flush that asked for it, and a promise one returns is awaited as
//! `await` would ([`settled`]). A function that throws or rejects is an
//! answer too (`tool_threw`, "Tool failed"): every call into JS is checked,
//! none unwrapped.

use crate::prelude::*;
use alloc::rc::Rc;
use js_sys::{Function, Promise};
use wasm_bindgen::prelude::*;

use super::{settled, spawn, RunContext, Shared};
use crate::machine::{
    Outcome, PrepareOrder, RunId, RunOrder, Toolmark as Machine, Unprepared, Validated,
};
use crate::policy::Caller;
use crate::registry::ToolKey;
use crate::wasm::error::report;
use crate::wasm::host::{self, get, present};
use crate::wasm::values::{self, Safe, ToolFns};

/// `schema['~standard'].validate(value)`, settled.
async fn standard_validate(schema: Option<&JsValue>, value: &JsValue) -> super::Settled {
    let standard = schema.map_or(JsValue::UNDEFINED, |s| get(s, "~standard"));
    let returned = match host::method(&standard, "validate") {
        Some(validate) => validate.call1(&standard, value),
        None => Err(js_sys::TypeError::new("~standard.validate is not a function").into()),
    };
    settled(returned).await
}

impl Shared {
    /// An answer from JS to the core; a core in use (module docs) is
    /// reported, as nobody called for it.
    fn answer(self: &Rc<Self>, f: impl FnOnce(&mut Machine)) {
        if let Err(failure) = self.input(f) {
            report(failure);
        }
    }

    fn finish_run(self: &Rc<Self>, run: RunId, outcome: Outcome) {
        let _ = self.host(|h| h.runs.remove(&run.0));
        let now = self.now();
        self.answer(|core| core.handle_outcome(run, outcome, now));
    }

    /// The functions of `key`'s tool, or the core told that they are gone
    /// (unregistered since it asked for `run`).
    fn tool_of(self: &Rc<Self>, run: RunId, key: ToolKey) -> Option<Rc<ToolFns>> {
        let tool = self.tool(key);
        if tool.is_none() {
            let now = self.now();
            self.answer(|core| core.handle_tool_gone(run, now));
        }
        tool
    }

    /// The run `order` starts, with `input` the value the driver made of
    /// its input (the kept validated value, or the JSON copy).
    pub(super) fn start_run(self: &Rc<Self>, order: RunOrder, input: JsValue) {
        let RunOrder {
            run,
            tool: key,
            caller,
            call_id,
            snapshot,
            check_output,
            ..
        } = order;
        #[allow(clippy::cast_precision_loss)]
        let id = run.0 as f64;
        let caller = match caller {
            Caller::Inapp => &host::INAPP,
            Caller::Human => &host::HUMAN,
        };
        let context = caller.with(|caller| {
            RunContext::new(id, caller, &call_id, &self.confirm, &self.files_resolve)
        });
        if let Err(failure) = self.host(|h| h.runs.insert(run.0, context.clone())) {
            return report(failure);
        }
        spawn(
            self.clone()
                .run(key, run, input, context, snapshot, check_output),
        );
    }

    /// `snapshot(input)` when one is asked for, then `run(input, ctx)`,
    /// then the output check the core asked for. The `ctx` is made with the
    /// run (before its snapshot), so an abort meanwhile reaches its `signal`.
    /// The tool's functions are looked up when it starts: one unregistered
    /// since the flush that asked for it is not run.
    async fn run(
        self: Rc<Self>,
        key: ToolKey,
        run: RunId,
        input: JsValue,
        context: RunContext,
        snapshot: bool,
        check_output: bool,
    ) {
        let Some(tool) = self.tool_of(run, key) else {
            let _ = self.host(|h| h.runs.remove(&run.0));
            return;
        };
        if let Some(take) = tool.snapshot.as_ref().filter(|_| snapshot) {
            let restorer = match settled(take.call1(&JsValue::NULL, &input)).await {
                Ok(restorer) => restorer,
                Err(error) => return self.run_failed(run, &error),
            };
            let restorer = host::function(restorer);
            let now = self.now();
            let kept = restorer.is_some();
            match self.with_core(|core| core.handle_snapshot_taken(run, kept, now)) {
                Ok(true) => {
                    if let Some(restorer) = restorer {
                        if let Err(failure) = self.host(|h| h.restorers.insert(run.0, restorer)) {
                            report(failure);
                        }
                    }
                }
                Ok(false) => {
                    let _ = self.host(|h| h.runs.remove(&run.0));
                    return self.flush();
                }
                Err(busy) => report(busy),
            }
        }
        let value = match settled(tool.run.call2(&JsValue::NULL, &input, &context)).await {
            Ok(value) => value,
            Err(error) => return self.run_failed(run, &error),
        };
        if let Some(schema) = tool.output_standard.as_ref().filter(|_| check_output) {
            let checked = match standard_validate(Some(schema), &value).await {
                Ok(result) => Ok(values::standard_issues(&result).unwrap_or_default()),
                Err(error) => Err(host::detail(&error)),
            };
            self.answer(|core| core.handle_output_checked(run, checked));
        }
        let outcome = match self.strict.text(&value, "data", true) {
            Safe::Absent => Outcome::Ok(None),
            Safe::Text(text) => Outcome::Ok(Some(text)),
            Safe::Unsafe(reason) => Outcome::NotSerializable(reason),
        };
        self.finish_run(run, outcome);
    }

    /// A run's `snapshot` or `run` threw or rejected (the core reads a
    /// throw of a run it aborted as its abort).
    fn run_failed(self: &Rc<Self>, run: RunId, error: &JsValue) {
        self.finish_run(run, Outcome::Threw(host::detail(error)));
    }

    /// `ctx.confirm(message)`: the page's `onConfirm` for a running run of
    /// a human caller, its answer as the core reads it (`false` once the
    /// run was aborted); otherwise `false` (the core says why,
    /// `ctx_confirm_unavailable`).
    pub(super) fn ctx_confirm(self: &Rc<Self>, run: &JsValue, message: &JsValue) -> JsValue {
        let run = RunId(host::whole_ms(run.as_f64().unwrap_or(-1.0)));
        let tool = match self.input(|core| core.ctx_confirm(run)) {
            Ok(tool) => tool,
            Err(failure) => return Promise::reject(&failure.into()).into(),
        };
        let (Some(on_confirm), Some(tool)) = (&self.on_confirm, tool) else {
            return Promise::resolve(&JsValue::FALSE).into();
        };
        let message = present(message.clone()).map_or_else(String::new, |m| host::string(&m));
        let request = host::object(&[
            ("tool", &JsValue::from_str(&tool)),
            ("message", &JsValue::from_str(&message)),
        ]);
        let answer = on_confirm.call1(&JsValue::NULL, &request);
        let mut settle = None;
        let promise = Promise::new(&mut |resolve, reject| settle = Some((resolve, reject)));
        if let Some((resolve, reject)) = settle {
            let shared = Rc::downgrade(self);
            spawn(async move {
                let _ = match settled(answer).await {
                    Ok(answer) => {
                        let approved = shared.upgrade().is_some_and(|shared| {
                            shared
                                .with_core(|core| core.ctx_confirmed(run, answer.as_bool()))
                                .unwrap_or_else(|busy| {
                                    report(busy);
                                    false
                                })
                        });
                        resolve.call1(&JsValue::NULL, &JsValue::from_bool(approved))
                    }
                    Err(error) => reject.call1(&JsValue::NULL, &error),
                };
            });
        }
        promise.into()
    }

    /// A Standard Schema input: `~standard.validate(input)`; the validated
    /// value replaces the input.
    pub(super) fn validate(self: &Rc<Self>, run: RunId, key: ToolKey, input: String) {
        let Some(tool) = self.tool_of(run, key) else {
            return;
        };
        let schema = tool.input_standard.clone();
        let shared = self.clone();
        spawn(async move {
            let input = values::parse_text(&input);
            let validated = match standard_validate(schema.as_ref(), &input).await {
                Err(error) => Validated::Threw(host::detail(&error)),
                Ok(result) => match values::standard_issues(&result) {
                    Some(issues) => Validated::Invalid(issues),
                    // One that is not JSON-safe must not fall back to the raw input.
                    None => {
                        let value = get(&result, "value");
                        match shared.strict.text(&value, "input", false) {
                            Safe::Absent => Validated::Valid(None),
                            Safe::Text(text) => {
                                // Kept for the run (the core has its JSON copy); the
                                // core names it in the run or forgets it.
                                match shared.host(|h| h.validated.insert(run.0, value)) {
                                    Ok(_) => Validated::Valid(Some(text)),
                                    Err(failure) => return report(failure),
                                }
                            }
                            Safe::Unsafe(reason) => Validated::NotJson(reason),
                        }
                    }
                },
            };
            let now = shared.now();
            shared.answer(|core| core.handle_validated(run, validated, now));
        });
    }

    /// What a confirmation shows: `summary(input)`, `changes(input)`, the
    /// form state; called synchronously.
    pub(super) fn prepare(self: &Rc<Self>, order: &PrepareOrder, input: &JsValue) {
        let &PrepareOrder {
            run,
            tool,
            summary,
            changes,
            state,
            ..
        } = order;
        let Some(tool) = self.tool_of(run, tool) else {
            return;
        };
        // (The core asks only for what the definition has.)
        let call = |wanted: bool, f: Option<&Function>| match f.filter(|_| wanted) {
            Some(f) => f.call1(&JsValue::NULL, input),
            None => Ok(JsValue::UNDEFINED),
        };
        let prepared = call(summary, tool.summary.as_ref())
            .and_then(|s| Ok((s, call(changes, tool.changes.as_ref())?)))
            .and_then(|(s, c)| Ok((s, c, call(state, tool.state.as_ref())?)))
            .map_err(|error| Unprepared::Threw(host::detail(&error)))
            .and_then(|(s, c, f)| values::prepared(&self.strict, s, c, f));
        let now = self.now();
        self.answer(|core| core.handle_prepared(run, prepared, now));
    }

    /// The form state again, at approval.
    pub(super) fn read_state(self: &Rc<Self>, run: RunId, key: ToolKey, input: &str) {
        let Some(tool) = self.tool_of(run, key) else {
            return;
        };
        let input = values::parse_text(input);
        // (The core asks only for a definition with a form state.)
        let state = match &tool.state {
            Some(state) => state.call1(&JsValue::NULL, &input),
            None => Ok(JsValue::UNDEFINED),
        };
        let state = match state {
            Ok(value) if value.is_undefined() => Ok(None),
            Ok(value) => Ok(Some(host::string(&value))),
            Err(error) => Err(host::detail(&error)),
        };
        let now = self.now();
        self.answer(|core| core.handle_state(run, state, now));
    }

    /// The restorer kept for run `restorer`, for the undo run `run`.
    pub(super) fn restore(self: &Rc<Self>, run: RunId, restorer: RunId) {
        let restorer = self
            .host(|h| h.restorers.remove(&restorer.0))
            .ok()
            .flatten();
        let shared = self.clone();
        spawn(async move {
            let restored = match restorer {
                Some(restorer) => settled(restorer.call0(&JsValue::NULL))
                    .await
                    .map(|_| ())
                    .map_err(|error| host::detail(&error)),
                None => Err("Error: restorer missing".into()),
            };
            shared.answer(|core| core.handle_restored(run, restored));
        });
    }
}
