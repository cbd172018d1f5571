//! Glue for the bridge core: `WasmToolmark` wraps [`Toolmark`] for the JS
//! shim. An agent's message (`handleInbound`) and a tool's outcome
//! (`handleOutcome`) cross as their own text; every other input arrives
//! through `dispatch`, an operation number and the JSON array of its
//! arguments; its `drain` operation hands every output back at once, in the
//! core's documented order, as one JSON text.

use crate::prelude::*;
use wasm_bindgen::prelude::*;

use serde::Serialize;
use serde_json::{Map, Value};

use super::protocol::CryptoRandom;
use super::JsRegExp;
use crate::machine::{
    Action, BridgeId, BridgeOptions, Config, Event, Handle, OnChange, Outcome, Prepared, RunId,
    Toolmark, ToolmarkError, Validated,
};
use crate::policy::Caller;
use crate::protocol::{
    field_changes_from_value, hints_from_value, issues_from_value, parse_value, to_json, ToolMode,
    DEFAULT_MAX_MESSAGE_BYTES,
};
use crate::registry::{SchemaSpec, ScopeId, ToolDef, ToolKey};
use crate::schema::is_whole;

fn js_error(message: &str) -> JsError {
    JsError::new(message)
}

/// Parses JSON text from the shim into an object (these few fields read
/// plainly).
fn object(text: &str, what: &str) -> Result<Map<String, Value>, JsError> {
    match parse_value(text) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(js_error(&format!("{what}: must be an object"))),
        Err(e) => Err(js_error(&format!("{}: {}", what, &e.message()))),
    }
}

fn opt_string(map: &Map<String, Value>, key: &str, what: &str) -> Result<Option<String>, JsError> {
    match map.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(not_a_string(key, what)),
    }
}

/// A string field that must be there (absent, `null` or not a string: the
/// same error).
fn string(map: &Map<String, Value>, key: &str, what: &str) -> Result<String, JsError> {
    match map.get(key) {
        Some(Value::String(s)) => Ok(s.clone()),
        _ => Err(not_a_string(key, what)),
    }
}

fn not_a_string(key: &str, what: &str) -> JsError {
    js_error(&format!("{what}: {key} must be a string"))
}

fn flag(map: &Map<String, Value>, key: &str) -> bool {
    map.get(key).and_then(Value::as_bool).unwrap_or(false)
}

/// Milliseconds from JS (`Date.now()` or an injected clock) as the core's u64.
fn ms(now: f64) -> u64 {
    if now.is_finite() && now > 0.0 {
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let whole = now as u64;
        whole
    } else {
        0
    }
}

/// A non-negative whole-number option, or its default when absent.
fn count(map: &Map<String, Value>, key: &str, default: u64) -> Result<u64, JsError> {
    match map.get(key) {
        None | Some(Value::Null) => Ok(default),
        Some(v) => v
            .as_f64()
            .filter(|n| *n >= 0.0 && is_whole(*n))
            .map(ms)
            .ok_or_else(|| {
                js_error(&format!(
                    "createToolmark: {key} must be a whole number >= 0"
                ))
            }),
    }
}

/// `{"error": {code, message}}`.
fn error_json(error: &ToolmarkError) -> String {
    #[derive(Serialize)]
    struct Wrapped<'a> {
        error: &'a ToolmarkError,
    }
    to_json(&Wrapped { error })
}

/// `{"<key>": n}`.
fn number_json(key: &str, n: u64) -> String {
    format!("{{\"{key}\":{n}}}")
}

const REJECTED_JSON: &str = "{\"rejected\":true}";

/// `{ kind: "json" | "external", schema? }` from the shim.
fn schema_spec(map: &Map<String, Value>, key: &str) -> Option<SchemaSpec> {
    let spec = map.get(key)?.as_object()?;
    let schema = spec.get("schema").filter(|s| !s.is_null()).cloned();
    Some(match spec.get("kind").and_then(Value::as_str) {
        Some("external") => SchemaSpec::External { json: schema },
        _ => SchemaSpec::Json(schema.unwrap_or(Value::Bool(true))),
    })
}

fn tool_def(text: &str) -> Result<ToolDef, JsError> {
    const WHAT: &str = "tool definition";
    let def = object(text, WHAT)?;
    let name = string(&def, "name", WHAT)?;
    let description = string(&def, "description", WHAT)?;
    let hints = match def.get("hints") {
        None | Some(Value::Null) => Default::default(),
        Some(hints) => hints_from_value(hints)
            .map_err(|_| js_error("tool definition: hints must hold booleans"))?,
    };
    let mode = match opt_string(&def, "mode", WHAT)?.as_deref() {
        None => None,
        Some("stepwise") => Some(ToolMode::Stepwise),
        Some(other) => {
            return Err(js_error(&format!(
                "tool definition: unknown mode '{other}'"
            )))
        }
    };
    // `None` for a value that is not an array of strings.
    let sensitive = match def.get("sensitive") {
        None | Some(Value::Null) => Some(Vec::new()),
        Some(paths) => paths.as_array().and_then(|paths| {
            paths
                .iter()
                .map(|p| p.as_str().map(str::to_owned))
                .collect()
        }),
    }
    .ok_or_else(|| js_error("tool definition: sensitive must be an array of paths"))?;
    Ok(ToolDef {
        name,
        title: opt_string(&def, "title", WHAT)?,
        description,
        input_schema: schema_spec(&def, "inputSchema"),
        output_schema: schema_spec(&def, "outputSchema"),
        hints,
        mode,
        sensitive,
        has_summary: flag(&def, "hasSummary"),
        has_changes: flag(&def, "hasChanges"),
        has_snapshot: flag(&def, "hasSnapshot"),
        has_state: flag(&def, "hasState"),
    })
}

fn caller(text: &str) -> Result<Caller, JsError> {
    Caller::parse(text).ok_or_else(|| js_error(&format!("unknown caller '{text}'")))
}

/// The operations `dispatch` multiplexes, numbered as the shim's `OP_*`
/// constants (js/src/toolmark.js): a number crosses and is matched more
/// cheaply than a name.
mod ops {
    pub const REV: u32 = 0;
    pub const REGISTER: u32 = 1;
    pub const UNREGISTER: u32 = 2;
    pub const CREATE_SCOPE: u32 = 3;
    pub const DISPOSE_SCOPE: u32 = 4;
    pub const ATTACH: u32 = 5;
    pub const DETACH: u32 = 6;
    pub const CALL: u32 = 7;
    pub const ABORT: u32 = 8;
    pub const CONFIRM: u32 = 9;
    pub const UNDO: u32 = 10;
    pub const CTX_CONFIRM: u32 = 11;
    pub const HANDLE_VALIDATED: u32 = 12;
    pub const HANDLE_PREPARED: u32 = 13;
    pub const HANDLE_STATE: u32 = 14;
    pub const HANDLE_RESTORED: u32 = 15;
    pub const HANDLE_TIMEOUT: u32 = 16;
    pub const MANIFEST: u32 = 17;
    pub const PENDING_CONFIRMATIONS: u32 = 18;
    pub const DRAIN: u32 = 19;
}

/// The core, for the JS shim.
#[wasm_bindgen]
pub struct WasmToolmark {
    core: Toolmark,
}

#[wasm_bindgen]
impl WasmToolmark {
    /// `config`: `{ dev?, toolBudget?, confirmExpiryMs?, abortGraceMs?, policy?, confirmMode?, inlineConfirm? }`.
    /// Throws `{"error": {code, message}}` text in dev mode for a bad policy.
    #[wasm_bindgen(constructor)]
    pub fn new(config: &str) -> Result<WasmToolmark, JsError> {
        let input = object(config, "createToolmark options")?;
        let defaults = Config::default();
        let config = Config {
            dev: flag(&input, "dev"),
            tool_budget: usize::try_from(count(&input, "toolBudget", defaults.tool_budget as u64)?)
                .unwrap_or(usize::MAX),
            confirm_expiry_ms: count(&input, "confirmExpiryMs", defaults.confirm_expiry_ms)?,
            abort_grace_ms: count(&input, "abortGraceMs", defaults.abort_grace_ms)?,
            policy: input.get("policy").cloned().unwrap_or(Value::Null),
            confirm_mode: input.get("confirmMode").cloned().unwrap_or(Value::Null),
            inline_confirm: flag(&input, "inlineConfirm"),
        };
        Toolmark::new(config, Box::new(CryptoRandom), Box::<JsRegExp>::default())
            .map(|core| WasmToolmark { core })
            .map_err(|e| js_error(&error_json(&e)))
    }

    /// Every other input, multiplexed through one export (each export costs
    /// wasm-bindgen glue on both sides): `op` is the method's number (see
    /// [`ops`]), `args` the JSON array of its arguments; returns the JSON text
    /// of its result.
    pub fn dispatch(&mut self, op: u32, args: &str) -> Result<String, JsError> {
        let args = match serde_json::from_str::<Value>(args) {
            Ok(Value::Array(args)) => args,
            _ => return Err(js_error("dispatch: args must be a JSON array")),
        };
        let num = |i: usize| args.get(i).and_then(Value::as_f64).unwrap_or(0.0);
        let opt_num = |i: usize| args.get(i).and_then(Value::as_f64);
        let id = |i: usize| u32::try_from(ms(num(i))).unwrap_or(u32::MAX);
        let text = |i: usize| args.get(i).and_then(Value::as_str).unwrap_or("");
        let opt_text = |i: usize| args.get(i).and_then(Value::as_str).map(str::to_owned);
        let flag = |i: usize| args.get(i).and_then(Value::as_bool).unwrap_or(false);
        Ok(match op {
            ops::REV => (self.rev()).to_string(),
            ops::REGISTER => self.register(id(0), text(1), num(2))?,
            ops::UNREGISTER => {
                self.unregister(id(0), num(1));
                "null".into()
            }
            ops::CREATE_SCOPE => self.create_scope(id(0), text(1)),
            ops::DISPOSE_SCOPE => self.dispose_scope(id(0), num(1)),
            ops::ATTACH => self.attach(text(0), opt_num(1))?.to_string(),
            ops::DETACH => {
                self.detach(id(0), num(1));
                "null".into()
            }
            ops::CALL => self
                .call(text(0), text(1), text(2), opt_num(3), num(4))?
                .to_string(),
            ops::ABORT => {
                self.abort(num(0), num(1));
                "null".into()
            }
            ops::CONFIRM => self.confirm(text(0), flag(1), num(2)).to_string(),
            ops::UNDO => self.undo(text(0)).to_string(),
            ops::CTX_CONFIRM => String::from(if self.ctx_confirm(num(0)) {
                "true"
            } else {
                "false"
            }),
            ops::HANDLE_VALIDATED => {
                self.handle_validated(num(0), text(1), opt_text(2), num(3));
                "null".into()
            }
            ops::HANDLE_PREPARED => {
                self.handle_prepared(num(0), opt_text(1), opt_text(2), num(3));
                "null".into()
            }
            ops::HANDLE_STATE => {
                self.handle_state(num(0), opt_text(1), opt_text(2), num(3));
                "null".into()
            }
            ops::HANDLE_RESTORED => {
                self.handle_restored(num(0), opt_text(1));
                "null".into()
            }
            ops::HANDLE_TIMEOUT => {
                self.handle_timeout(num(0));
                "null".into()
            }
            ops::MANIFEST => self.manifest(text(0))?,
            ops::PENDING_CONFIRMATIONS => self.pending_confirmations(),
            ops::DRAIN => self.drain(),
            _ => return Err(js_error("dispatch: unknown operation")),
        })
    }

    // The two inputs that carry the big texts (an agent's message, a tool's
    // result) are exports of their own: through `dispatch` each text would
    // be escaped into the argument array and parsed out of it again.

    #[wasm_bindgen(js_name = handleInbound)]
    pub fn handle_inbound(&mut self, bridge: u32, text: &str, now: f64) {
        self.core.handle_inbound(BridgeId(bridge), text, ms(now));
    }

    /// `kind`: "ok" (with `text`: JSON, or undefined), "threw", "notSerializable", "aborted".
    #[wasm_bindgen(js_name = handleOutcome)]
    pub fn handle_outcome(&mut self, run: f64, kind: &str, text: Option<String>, now: f64) {
        let outcome = match kind {
            "ok" => Outcome::Ok(text),
            "threw" => Outcome::Threw(text.unwrap_or_default()),
            "notSerializable" => Outcome::NotSerializable(text.unwrap_or_default()),
            _ => Outcome::Aborted,
        };
        self.core.handle_outcome(RunId(ms(run)), outcome, ms(now));
    }
}

/// The inputs `dispatch` multiplexes (plain Rust: callable from the wasm tests).
impl WasmToolmark {
    /// Everything the core has to say, in its drain order:
    /// `{"transmits": [[bridge, text]…], "events": […], "actions": […], "timeout": ms|null}`.
    pub fn drain(&mut self) -> String {
        #[derive(Serialize)]
        struct Drain {
            transmits: Vec<(BridgeId, String)>,
            events: Vec<Event>,
            actions: Vec<Action>,
            timeout: Option<u64>,
        }
        let mut drain = Drain {
            transmits: Vec::new(),
            events: Vec::new(),
            actions: Vec::new(),
            timeout: None,
        };
        while let Some(t) = self.core.poll_transmit() {
            drain.transmits.push((t.bridge, t.text));
        }
        while let Some(e) = self.core.poll_event() {
            drain.events.push(e);
        }
        while let Some(a) = self.core.poll_action() {
            drain.actions.push(a);
        }
        drain.timeout = self.core.poll_timeout();
        to_json(&drain)
    }

    pub fn client_id(&self) -> String {
        self.core.client_id().to_owned()
    }

    pub fn rev(&self) -> u64 {
        self.core.rev()
    }

    /// JSON: `{"key": n}`, `{"rejected": true}` (reported as an event), or `{"error": {code, message}}` (dev).
    pub fn register(&mut self, scope: u32, def: &str, now: f64) -> Result<String, JsError> {
        let def = tool_def(def)?;
        Ok(match self.core.register(ScopeId(scope), def, ms(now)) {
            Ok(Some(key)) => number_json("key", key.0.into()),
            Ok(None) => REJECTED_JSON.into(),
            Err(error) => error_json(&error),
        })
    }

    pub fn unregister(&mut self, key: u32, now: f64) {
        self.core.unregister(ToolKey(key), ms(now));
    }

    /// JSON: `{"scope": n}`, `{"rejected": true}` or `{"error": …}`.
    pub fn create_scope(&mut self, parent: u32, name: &str) -> String {
        match self.core.create_scope(ScopeId(parent), name) {
            Ok(Some(scope)) => number_json("scope", scope.0.into()),
            Ok(None) => REJECTED_JSON.into(),
            Err(error) => error_json(&error),
        }
    }

    /// JSON: `{}` or `{"error": …}`.
    pub fn dispose_scope(&mut self, scope: u32, now: f64) -> String {
        match self.core.dispose_scope(ScopeId(scope), ms(now)) {
            Ok(()) => "{}".into(),
            Err(error) => error_json(&error),
        }
    }

    /// `onChange`: "manifest" | "changed"; `maxMessageBytes`: a positive integer or undefined.
    pub fn attach(
        &mut self,
        on_change: &str,
        max_message_bytes: Option<f64>,
    ) -> Result<u32, JsError> {
        let on_change = match on_change {
            "manifest" => OnChange::Manifest,
            "changed" => OnChange::Changed,
            other => {
                return Err(js_error(&format!(
                    "bridge: onChange must be 'manifest' or 'changed', not '{other}'"
                )))
            }
        };
        let max_message_bytes = match max_message_bytes {
            None => DEFAULT_MAX_MESSAGE_BYTES,
            Some(n) if n >= 1.0 && is_whole(n) => usize::try_from(ms(n)).unwrap_or(usize::MAX),
            Some(_) => {
                return Err(js_error(
                    "bridge: maxMessageBytes must be a positive integer",
                ))
            }
        };
        Ok(self
            .core
            .attach(BridgeOptions {
                on_change,
                max_message_bytes,
            })
            .0)
    }

    pub fn detach(&mut self, bridge: u32, now: f64) {
        self.core.detach(BridgeId(bridge), ms(now));
    }

    pub fn call(
        &mut self,
        name: &str,
        input: &str,
        caller_name: &str,
        rev: Option<f64>,
        now: f64,
    ) -> Result<u64, JsError> {
        let caller = caller(caller_name)?;
        let rev = rev.map(ms);
        Ok(self.core.call(name, input, caller, rev, ms(now)).0)
    }

    pub fn abort(&mut self, handle: f64, now: f64) {
        self.core.abort(Handle(ms(handle)), ms(now));
    }

    pub fn confirm(&mut self, confirm_id: &str, approve: bool, now: f64) -> u64 {
        self.core.confirm(confirm_id, approve, ms(now)).0
    }

    pub fn undo(&mut self, call_id: &str) -> u64 {
        self.core.undo(call_id).0
    }

    pub fn ctx_confirm(&mut self, run: f64) -> bool {
        self.core.ctx_confirm(RunId(ms(run)))
    }

    /// `kind`: "valid" (`text`: the value's JSON or undefined), "invalid" (`text`: issues JSON), "threw".
    pub fn handle_validated(&mut self, run: f64, kind: &str, text: Option<String>, now: f64) {
        let validated = match kind {
            "valid" => Validated::Valid(text),
            "invalid" => {
                let issues = text
                    .as_deref()
                    .and_then(|t| serde_json::from_str::<Value>(t).ok())
                    .and_then(|v| issues_from_value(&v).ok());
                match issues {
                    Some(issues) => Validated::Invalid(issues),
                    None => Validated::Threw("validator returned malformed issues".into()),
                }
            }
            _ => Validated::Threw(text.unwrap_or_default()),
        };
        self.core
            .handle_validated(RunId(ms(run)), validated, ms(now));
    }

    /// `prepared`: JSON `{summary?, changes?, state?}`; `threw`: the error text when it threw.
    pub fn handle_prepared(
        &mut self,
        run: f64,
        prepared: Option<String>,
        threw: Option<String>,
        now: f64,
    ) {
        let result = match (threw, prepared) {
            (Some(detail), _) => Err(detail),
            (None, text) => prepared_from(text.as_deref()),
        };
        self.core.handle_prepared(RunId(ms(run)), result, ms(now));
    }

    /// `state`: the form state text (or undefined); `threw`: error text.
    pub fn handle_state(
        &mut self,
        run: f64,
        state: Option<String>,
        threw: Option<String>,
        now: f64,
    ) {
        let result = match threw {
            Some(detail) => Err(detail),
            None => Ok(state),
        };
        self.core.handle_state(RunId(ms(run)), result, ms(now));
    }

    pub fn handle_restored(&mut self, run: f64, threw: Option<String>) {
        self.core
            .handle_restored(RunId(ms(run)), threw.map_or(Ok(()), Err));
    }

    pub fn handle_timeout(&mut self, now: f64) {
        self.core.handle_timeout(ms(now));
    }

    /// JSON array of the manifest entries visible to `caller`.
    pub fn manifest(&self, caller_name: &str) -> Result<String, JsError> {
        Ok(to_json(&self.core.manifest(caller(caller_name)?)))
    }

    /// JSON array of `{confirmId, tool, summary, expiresAt, changes?}`.
    pub fn pending_confirmations(&self) -> String {
        to_json(&self.core.pending_confirmations())
    }
}

fn prepared_from(text: Option<&str>) -> Result<Prepared, String> {
    let Some(text) = text else {
        return Ok(Prepared::default());
    };
    let value = parse_value(text).map_err(|e| e.message())?;
    let summary = match value.get("summary") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => return Err("summary() must return a string".into()),
    };
    let changes = match value.get("changes") {
        None | Some(Value::Null) => None,
        Some(changes) => Some(
            field_changes_from_value(changes)
                .map_err(|_| String::from("changes() must return [{ path, before?, after? }]"))?,
        ),
    };
    let state = match value.get("state") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(other) => Some(to_json(other)),
    };
    Ok(Prepared {
        summary,
        changes,
        state,
    })
}
