//! The page's functions the core asks for, from [`Action`](crate::machine::Action)s:
//! a tool's `snapshot` and `run` (with its `ctx`), the dev-mode output
//! check, a Standard Schema's `validate`, `summary` / `changes` / the form
//! state, and restorers. Each answer goes back to the core, then the driver
//! drains.
//!
//! A function that throws or rejects is an answer too (`tool_threw`,
//! "Tool failed"): every call into JS is checked, none unwrapped.

use crate::prelude::*;
use alloc::rc::Rc;
use js_sys::Function;
use wasm_bindgen::prelude::*;

use super::{Run, RunContext, Shared, ToolFns};
use crate::machine::{Outcome, RunId, Validated};
use crate::policy::Caller;
use crate::registry::ToolKey;
use crate::wasm::host::{self, get, present};
use crate::wasm::values::{self, Safe};

impl Shared {
    pub(super) fn finish_run(self: &Rc<Self>, run: RunId, outcome: Outcome) {
        self.host_mut(|h| h.runs.remove(&run.0));
        let now = self.now();
        self.with_core(|core| core.handle_outcome(run, outcome, now));
        self.drain();
    }

    pub(super) fn start_run(
        self: &Rc<Self>,
        run: RunId,
        key: ToolKey,
        input: JsValue,
        caller: Caller,
        call_id: String,
        snapshot: bool,
    ) {
        let tool = self.tool(key);
        let name = tool
            .as_ref()
            .map(|t| t.full_name.clone())
            .unwrap_or_default();
        #[allow(clippy::cast_precision_loss)]
        let id = run.0 as f64;
        let confirm = self
            .callback(|c| c.confirm.as_ref().clone())
            .unwrap_or(JsValue::UNDEFINED);
        let resolve = self
            .callback(|c| c.files_resolve.as_ref().clone())
            .unwrap_or(JsValue::UNDEFINED);
        let caller = match caller {
            Caller::Inapp => &host::INAPP,
            Caller::Human => &host::HUMAN,
        };
        let context =
            caller.with(|caller| RunContext::new(id, caller, &call_id, &confirm, &resolve));
        self.host_mut(|h| {
            h.runs.insert(
                run.0,
                Run {
                    context: context.clone(),
                    aborted: false,
                    tool: name,
                },
            )
        });
        let Some(tool) = tool else {
            return self.finish_run(run, Outcome::Threw("tool definition missing".into()));
        };
        let shared = self.clone();
        self.later(move || {
            match tool.snapshot.clone().filter(|_| snapshot) {
                None => shared.call_run(&tool, run, &input, &context),
                Some(take) => {
                    shared.host_mut(|h| h.snapshotting.push(run.0));
                    let taken = take.call1(&JsValue::NULL, &input);
                    let this = shared.clone();
                    shared.settle(taken, move |restorer| match restorer {
                        Err(error) => this.run_failed(run, &error),
                        Ok(restorer) => {
                            // Not wanted any more when the core dropped it meanwhile.
                            let wanted = this.host_mut(|h| {
                                let before = h.snapshotting.len();
                                h.snapshotting.retain(|r| *r != run.0);
                                h.snapshotting.len() != before
                            });
                            if let (true, Some(restorer)) = (wanted, host::function(restorer)) {
                                this.host_mut(|h| h.restorers.insert(run.0, restorer));
                            }
                            this.call_run(&tool, run, &input, &context);
                        }
                    });
                }
            }
        });
    }

    /// A run's `snapshot` or `run` threw or rejected: `aborted` when the
    /// core had aborted it, else `tool_threw`.
    fn run_failed(self: &Rc<Self>, run: RunId, error: &JsValue) {
        let aborted = self.host_mut(|h| h.runs.get(&run.0).is_some_and(|r| r.aborted));
        let outcome = if aborted {
            Outcome::Aborted
        } else {
            Outcome::Threw(host::detail(error))
        };
        self.finish_run(run, outcome);
    }

    /// `run(input, ctx)` (after the snapshot, when one was asked for), then
    /// the dev-mode output check. The `ctx` is made with the run (before
    /// its snapshot), so an abort meanwhile reaches its `signal`.
    fn call_run(
        self: &Rc<Self>,
        tool: &Rc<ToolFns>,
        run: RunId,
        input: &JsValue,
        context: &RunContext,
    ) {
        let returned = tool.run.call2(&JsValue::NULL, input, context);
        let shared = self.clone();
        let tool = tool.clone();
        self.settle(returned, move |value| match value {
            Err(error) => shared.run_failed(run, &error),
            Ok(value) => {
                let this = shared.clone();
                let checked = value.clone();
                shared.check_output(&tool, &checked, move || {
                    let outcome = match this.strict.text(&value, true) {
                        Safe::Absent => Outcome::Ok(None),
                        Safe::Text(text) => Outcome::Ok(Some(text)),
                        Safe::Unsafe(reason) => Outcome::NotSerializable(reason),
                    };
                    this.finish_run(run, outcome);
                });
            }
        });
    }

    /// `ctx.confirm(message)`: the page's `onConfirm` for a human caller;
    /// otherwise `false` (the core says why, `ctx_confirm_unavailable`).
    pub(super) fn ctx_confirm(self: &Rc<Self>, run: &JsValue, message: &JsValue) -> JsValue {
        let run = RunId(host::whole_ms(run.as_f64().unwrap_or(-1.0)));
        let allowed = self
            .with_core(|core| core.ctx_confirm(run))
            .unwrap_or(false);
        let on_confirm = match (&self.on_confirm, allowed) {
            (Some(on_confirm), true) => on_confirm.clone(),
            _ => {
                self.drain();
                return js_sys::Promise::resolve(&JsValue::FALSE).into();
            }
        };
        let tool = self
            .host_mut(|h| h.runs.get(&run.0).map(|r| r.tool.clone()))
            .unwrap_or_default();
        let message = present(message.clone()).map_or_else(String::new, |m| host::string(&m));
        let request = host::object(&[
            ("tool", &JsValue::from_str(&tool)),
            ("message", &JsValue::from_str(&message)),
        ]);
        let answer = on_confirm.call1(&JsValue::NULL, &request);
        let mut answer = Some(answer);
        js_sys::Promise::new(&mut |resolve, reject| {
            let Some(answer) = answer.take() else { return };
            let shared = self.clone();
            self.later(move || {
                shared.settle(answer, move |approved| {
                    let _ = match approved {
                        Ok(approved) => {
                            resolve.call1(&JsValue::NULL, &JsValue::from_bool(approved.is_truthy()))
                        }
                        Err(error) => reject.call1(&JsValue::NULL, &error),
                    };
                });
            });
        })
        .into()
    }

    /// Dev only: a Standard Schema `outputSchema` checks the tool's value
    /// (the core checks JSON Schema ones); a failure is an `output_invalid`
    /// event, the value still goes out.
    pub(super) fn check_output(
        self: &Rc<Self>,
        tool: &Rc<ToolFns>,
        value: &JsValue,
        next: impl FnOnce() + 'static,
    ) {
        let Some(schema) = tool.output_standard.as_ref().filter(|_| self.dev) else {
            return next();
        };
        let standard = get(schema, "~standard");
        let validated = match host::method(&standard, "validate") {
            Some(validate) => validate.call1(&standard, value),
            None => Err(js_sys::TypeError::new("~standard.validate is not a function").into()),
        };
        let shared = self.clone();
        let tool = tool.clone();
        self.settle(validated, move |validated| {
            let problem = match validated {
                Ok(result) => match values::standard_issues(&result).as_deref() {
                    Some([first, ..]) => format!(" at '{}': {}", &first.path, &first.message),
                    _ => return next(),
                },
                Err(error) => format!(": its validator threw ({})", &host::detail(&error)),
            };
            let message = format!(
                "output of '{}' fails its output schema{}",
                &tool.full_name, &problem
            );
            shared.emit_error("output_invalid", &message, Some(&tool.full_name));
            next();
        });
    }

    /// A Standard Schema input: `~standard.validate(input)`; the validated
    /// value replaces the input.
    pub(super) fn validate(self: &Rc<Self>, run: RunId, key: ToolKey, input: String) {
        let tool = self.tool(key);
        let shared = self.clone();
        self.later(move || {
            let schema = tool.and_then(|t| t.input_standard.clone());
            let standard = schema
                .as_ref()
                .map_or(JsValue::UNDEFINED, |s| get(s, "~standard"));
            let Some(validate) = host::method(&standard, "validate") else {
                let threw =
                    Validated::Threw("TypeError: ~standard.validate is not a function".into());
                return shared.validated(run, threw);
            };
            let input = values::parse_text(&input);
            let returned = validate.call1(&standard, &input);
            let this = shared.clone();
            shared.settle(returned, move |result| {
                let validated = match result {
                    Err(error) => Validated::Threw(host::detail(&error)),
                    Ok(result) => match values::standard_issues(&result) {
                        Some(issues) => Validated::Invalid(issues),
                        // One that is not JSON-safe must not fall back to the raw input.
                        None => {
                            let value = get(&result, "value");
                            match this.strict.text(&value, false) {
                                Safe::Absent => Validated::Valid(None),
                                Safe::Text(text) => {
                                    // Kept for the run (the core has its JSON copy); the
                                    // core names it in the run or forgets it.
                                    this.host_mut(|h| h.validated.insert(run.0, value));
                                    Validated::Valid(Some(text))
                                }
                                Safe::Unsafe(reason) => Validated::Threw(format!(
                                    "validated input is not JSON-safe: {}",
                                    &reason
                                )),
                            }
                        }
                    },
                };
                this.validated(run, validated);
            });
        });
    }

    /// A validation's answer to the core.
    fn validated(self: &Rc<Self>, run: RunId, validated: Validated) {
        let now = self.now();
        self.with_core(|core| core.handle_validated(run, validated, now));
        self.drain();
    }

    /// What a confirmation shows: `summary(input)`, `changes(input)`, the
    /// form state; called synchronously.
    pub(super) fn prepare(
        self: &Rc<Self>,
        run: RunId,
        key: ToolKey,
        input: &JsValue,
        summary: bool,
        changes: bool,
        state: bool,
    ) {
        let tool = self.tool(key);
        let call = |wanted: bool, f: Option<&Function>| -> Result<JsValue, JsValue> {
            if !wanted {
                return Ok(JsValue::UNDEFINED);
            }
            match f {
                Some(f) => f.call1(&JsValue::NULL, input),
                None => Err(js_sys::TypeError::new("tool definition missing").into()),
            }
        };
        let tool = tool.as_deref();
        let prepared = call(summary, tool.and_then(|t| t.summary.as_ref()))
            .and_then(|s| Ok((s, call(changes, tool.and_then(|t| t.changes.as_ref()))?)))
            .and_then(|(s, c)| Ok((s, c, call(state, tool.and_then(|t| t.state.as_ref()))?)))
            .map_err(|error| host::detail(&error))
            .and_then(|(s, c, f)| values::prepared(s, c, f));
        let now = self.now();
        self.with_core(|core| core.handle_prepared(run, prepared, now));
        self.drain();
    }

    /// The form state again, at approval.
    pub(super) fn read_state(self: &Rc<Self>, run: RunId, key: ToolKey, input: &str) {
        let input = values::parse_text(input);
        let state = match self.tool(key).and_then(|t| t.state.clone()) {
            Some(state) => state.call1(&JsValue::NULL, &input),
            None => Err(js_sys::TypeError::new("tool definition missing").into()),
        };
        let state = match state {
            Ok(value) if value.is_undefined() => Ok(None),
            Ok(value) => Ok(Some(host::string(&value))),
            Err(error) => Err(host::detail(&error)),
        };
        let now = self.now();
        self.with_core(|core| core.handle_state(run, state, now));
        self.drain();
    }

    /// The restorer kept for run `restorer`, for the undo run `run`.
    pub(super) fn restore(self: &Rc<Self>, run: RunId, restorer: RunId) {
        let restorer = self.host_mut(|h| h.restorers.remove(&restorer.0));
        let shared = self.clone();
        self.later(move || {
            let this = shared.clone();
            let done = move |restored: Result<(), String>| {
                shared.with_core(|core| core.handle_restored(run, restored));
                shared.drain();
            };
            match restorer {
                Some(restorer) => {
                    let returned = restorer.call0(&JsValue::NULL);
                    this.settle(returned, move |restored| {
                        done(restored.map(|_| ()).map_err(|error| host::detail(&error)));
                    });
                }
                None => done(Err("Error: restorer missing".into())),
            }
        });
    }
}
