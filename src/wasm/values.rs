//! Values across the boundary: JS values in, the core's types out, and
//! back; this is the one module that knows how.
//!
//! Structured values cross into the core as JSON text, by `JSON.stringify`
//! (the spec's semantics for what the page hands in: `toJSON`, dropped
//! `undefined`s, refused functions…) and serde_json. Out of it, the core's
//! `Serialize` types become JS values through serde-wasm-bindgen
//! (`json_compatible`), except tool results, the hot path of every call:
//! there serde_json text and one `JSON.parse` measured faster at every
//! size (see [`result`]).

use crate::prelude::*;
use alloc::borrow::Cow;
use alloc::rc::Rc;
use core::cell::Cell;
use js_sys::Function;
use wasm_bindgen::prelude::*;

use super::error::Failure;
use super::host::{self, get, present, Callback};
use crate::given::{Given, GivenJson, GivenList, GivenText, NotJson};
use crate::machine::{Config, GivenSignal, Prepared, Unprepared};
use crate::protocol::{parse_value, to_json, Issue, ToolResult, UNTRUSTED_CONTENT_NOTE};
use crate::registry::field::{self, JsonSchemaOf};
use crate::registry::{SchemaSpec, ToolDef};
use crate::schema::push_path_segment;
use serde::Serialize;
use serde_json::Value;

/// `JSON.stringify(value)`: `None` for `undefined` (no text) or when it throws.
pub fn copy_text(value: &JsValue) -> Option<String> {
    js_sys::JSON::stringify(value)
        .ok()
        .and_then(|text| JsValue::from(text).as_string())
}

/// A page request's `signal` option as found, for the core to judge.
pub fn given_signal(signal: &JsValue) -> GivenSignal {
    if host::present(signal.clone()).is_none() {
        GivenSignal::Absent
    } else if get(signal, "aborted").is_truthy() {
        GivenSignal::Aborted
    } else if host::method(signal, "addEventListener").is_some() {
        GivenSignal::Listenable
    } else {
        GivenSignal::Other
    }
}

/// A property's value by its JS type, for the core's option rules.
pub fn given(value: &JsValue) -> Given {
    if value.is_undefined() {
        Given::Undefined
    } else if value.is_null() {
        Given::Null
    } else if let Some(text) = value.as_string() {
        Given::Text(text)
    } else if let Some(n) = value.as_f64() {
        Given::Number(n)
    } else if value.is_function() {
        Given::Function
    } else if value.is_object() {
        Given::Object
    } else {
        Given::Other
    }
}

#[wasm_bindgen]
extern "C" {
    /// The global `URL` class (for `value instanceof URL`).
    #[wasm_bindgen(js_name = URL)]
    type JsUrl;
}

/// An option that takes a string or a `URL`: a `URL` object is read as
/// its text.
pub fn given_url(value: &JsValue) -> Given {
    if value.has_type::<JsUrl>() {
        Given::Text(host::string(value))
    } else {
        given(value)
    }
}

/// An array option, each entry read by `entry` from a plain copy (a
/// revoked proxy, a throwing trap: not an array).
pub fn given_list<T>(value: &JsValue, entry: impl Fn(&JsValue) -> T) -> GivenList<T> {
    if value.is_undefined() {
        return GivenList::Undefined;
    }
    match host::array_copy(value) {
        Some(items) => GivenList::Items(items.iter().map(|item| entry(&item)).collect()),
        None => GivenList::NotList,
    }
}

/// A value the core takes as JSON text.
pub fn given_text(value: &JsValue) -> GivenText {
    if value.is_undefined() {
        GivenText::Undefined
    } else {
        copy_text(value).map_or(GivenText::NotJson, GivenText::Json)
    }
}

/// `JSON.parse(text)` of text the core wrote (`undefined` if it is not JSON).
pub fn parse_text(text: &str) -> JsValue {
    js_sys::JSON::parse(text).unwrap_or(JsValue::UNDEFINED)
}

/// A JS value as the core's JSON value (through its `JSON.stringify` text).
pub fn to_value(value: &JsValue) -> Option<Value> {
    copy_text(value).and_then(|text| parse_value(&text).ok())
}

#[wasm_bindgen(module = "/js/src/strict-json.js")]
extern "C" {
    /// `JSON.stringify(value)` with a JS replacer that passes the values
    /// JSON writes unchanged and hands every other one to `refuse`.
    /// With `room`, a large text comes with trailing spaces: room for the
    /// message written around it (the core cuts them off, keeping the room).
    #[wasm_bindgen(catch, js_name = strictStringify)]
    fn strict_stringify(
        value: &JsValue,
        refuse: &JsValue,
        room: bool,
        key: &str,
    ) -> Result<JsValue, JsValue>;
}

/// A value that must be JSON-safe (a tool's result, a validated input).
pub enum Safe {
    /// `undefined`: no value.
    Absent,
    /// Its JSON text.
    Text(String),
    /// Not JSON-safe, and why.
    Unsafe(String),
}

/// `JSON.stringify` semantics (`toJSON` honoured, `undefined` properties
/// dropped), except that what JSON cannot carry is refused instead of
/// silently dropped or nulled: functions, symbols, BigInts, non-finite
/// numbers (and cycles, which `JSON.stringify` itself refuses). The
/// replacer is made once per registry and kept; `strictStringify`'s JS
/// replacer calls it only for the values JSON would not write unchanged.
pub struct Strict {
    replacer: Callback,
    /// Why the replacer refused the last value it refused.
    refusal: Rc<Cell<Option<String>>>,
}

impl Strict {
    pub fn new() -> Strict {
        let refusal: Rc<Cell<Option<String>>> = Rc::default();
        let slot = refusal.clone();
        let replacer = host::callback(move |key, value| {
            // Called after toJSON, so `value` is what would be written.
            let refused = match value.as_f64() {
                Some(n) => NotJson::number(n),
                None if value.is_function() => Some(NotJson::Function),
                None if value.is_symbol() => Some(NotJson::Symbol),
                None if value.is_bigint() => Some(NotJson::BigInt),
                None => None,
            };
            match refused {
                None => Ok(value),
                Some(refused) => {
                    let reason = refused.reason(&key.as_string().unwrap_or_default());
                    let error = js_sys::Error::new(&reason).into();
                    slot.set(Some(reason));
                    Err(error)
                }
            }
        });
        Strict { replacer, refusal }
    }

    /// `value` as JSON text, strictly, written as the member `key` of its
    /// message (what a `toJSON` is given); with `room` (a tool result), a
    /// large one with trailing spaces the core writes its message into.
    pub fn text(&self, value: &JsValue, key: &str, room: bool) -> Safe {
        if value.is_undefined() {
            return Safe::Absent;
        }
        self.refusal.set(None);
        match strict_stringify(value, self.replacer.as_ref(), room, key) {
            Ok(text) => match text.as_string() {
                Some(text) => Safe::Text(text),
                None => Safe::Absent,
            },
            Err(error) => Safe::Unsafe(
                self.refusal
                    .take()
                    .unwrap_or_else(|| host::string(&get(&error, "message"))),
            ),
        }
    }
}

/// `typeof value === 'object'` with a `~standard` object: a Standard Schema.
fn is_standard_schema(value: &JsValue) -> bool {
    value.is_object() && get(value, "~standard").is_object()
}

/// The JSON Schema a Standard Schema converts itself to, by the converter
/// the core chooses ([`field::json_schema_of`]), if it can.
fn standard_json_schema(schema: &JsValue, io: &str) -> Option<Value> {
    let target = JsValue::from_str(field::JSON_SCHEMA_TARGET);
    let converter = get(&get(schema, "~standard"), "jsonSchema");
    let standard_for_io = get(&converter, io);
    let mut to_json_schema = JsValue::UNDEFINED;
    let choice = field::json_schema_of(&given(&standard_for_io), || {
        to_json_schema = get(schema, "toJSONSchema");
        given(&to_json_schema)
    });
    let json = match choice? {
        JsonSchemaOf::StandardJsonSchema => {
            let options = host::object(&[("target", &target)]);
            Function::from(standard_for_io)
                .call1(&converter, &options)
                .ok()?
        }
        JsonSchemaOf::ToJsonSchema => {
            let options = host::object(&[("io", &JsValue::from_str(io)), ("target", &target)]);
            Function::from(to_json_schema)
                .call1(schema, &options)
                .ok()?
        }
    };
    to_value(&json)
}

fn schema_spec(schema: JsValue, io: &str) -> (Option<SchemaSpec>, Option<JsValue>) {
    if is_standard_schema(&schema) {
        let json = standard_json_schema(&schema, io);
        return (Some(SchemaSpec::External { json }), Some(schema));
    }
    (field::json_schema(given_json(schema)), None)
}

/// A structured field, absent or as JSON, for the core's rules.
fn given_json(value: JsValue) -> GivenJson {
    match present(value) {
        None => GivenJson::Absent,
        Some(value) => to_value(&value).map_or(GivenJson::NotJson, GivenJson::Json),
    }
}

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
}

/// A tool definition object read once, property by property: the core's
/// view of it (which of the app's functions exist, checked by [`field`]'s
/// rules in that order) and the functions the boundary keeps. One read
/// each, so a getter cannot tell the core one thing and the driver another;
/// a getter that throws refuses the definition with its error, as it is
/// (an unreadable `hints` or `inputSchema` is not an absent one).
#[cfg(feature = "toolmark")]
pub fn tool_def(def: &JsValue, run: Function) -> Result<(ToolDef, ToolFns), JsValue> {
    const KEYS: [&str; 11] = [
        "name",
        "description",
        "hints",
        "mode",
        "sensitive",
        "title",
        "inputSchema",
        "outputSchema",
        "summary",
        "changes",
        "snapshot",
    ];
    let mut read = Vec::with_capacity(KEYS.len());
    for key in KEYS {
        read.push(host::read(def, key)?);
    }
    let state = host::form_state(def);
    checked_def(read, state, run).map_err(|refused| Failure::misuse(refused).into())
}

#[cfg(feature = "toolmark")]
fn checked_def(
    read: Vec<JsValue>,
    state: JsValue,
    run: Function,
) -> Result<(ToolDef, ToolFns), Cow<'static, str>> {
    // In the order of KEYS.
    let mut read = read.into_iter();
    let mut next = || read.next().unwrap_or(JsValue::UNDEFINED);
    let name = field::name(given(&next()))?;
    let description = field::description(given(&next()))?;
    let hints = field::hints(given_json(next()))?;
    let mode = field::mode(given(&next()))?;
    let sensitive = field::sensitive(given_json(next()))?;
    let title = field::title(given(&next()))?;
    let (input_schema, input_standard) = schema_spec(next(), "input");
    let (output_schema, output_standard) = schema_spec(next(), "output");
    let fns = ToolFns {
        run,
        summary: host::function(next()),
        changes: host::function(next()),
        snapshot: host::function(next()),
        state: host::function(state),
        input_standard,
        output_standard,
    };
    let spec = ToolDef {
        name,
        title,
        description,
        input_schema,
        output_schema,
        hints,
        mode,
        sensitive,
        has_summary: fns.summary.is_some(),
        has_changes: fns.changes.is_some(),
        has_snapshot: fns.snapshot.is_some(),
        has_state: fns.state.is_some(),
    };
    Ok((spec, fns))
}

/// The core's configuration from `createToolmark` options; `on_confirm`:
/// the `onConfirm` function read once with the others the driver keeps.
pub fn config(options: &JsValue, on_confirm: Option<&Function>) -> Result<Config, Failure> {
    counted_config(options, on_confirm.is_some()).map_err(Failure::misuse)
}

fn counted_config(options: &JsValue, inline_confirm: bool) -> Result<Config, &'static str> {
    let json = |key: &str| {
        present(get(options, key))
            .and_then(|v| to_value(&v))
            .unwrap_or(Value::Null)
    };
    let read = |key| given(&get(options, key));
    Ok(Config {
        dev: get(options, "dev").is_truthy(),
        tool_budget: Config::tool_budget_from(&read("toolBudget"))?,
        confirm_expiry_ms: Config::confirm_expiry_ms_from(&read("confirmExpiryMs"))?,
        abort_grace_ms: Config::abort_grace_ms_from(&read("abortGraceMs"))?,
        policy: json("policy"),
        confirm_mode: json("confirmMode"),
        inline_confirm,
    })
}

/// What `summary` / `changes` / the form state gave, written as strictly
/// as a result, for the core's rules ([`Prepared::from_text`]).
pub fn prepared(
    strict: &Strict,
    summary: JsValue,
    changes: JsValue,
    state: JsValue,
) -> Result<Prepared, Unprepared> {
    let all = host::object(&[
        ("summary", &summary),
        ("changes", &changes),
        ("state", &state),
    ]);
    match strict.text(&all.into(), "", false) {
        Safe::Unsafe(reason) => Err(Unprepared::NotSerializable(reason)),
        Safe::Text(text) => Prepared::from_text(Some(&text)).map_err(Unprepared::Threw),
        Safe::Absent => Prepared::from_text(None).map_err(Unprepared::Threw),
    }
}

/// A Standard Schema issue path as the protocol writes it ([`push_path_segment`]).
fn issue_path(path: &JsValue) -> String {
    let Some(path) = host::array_copy(path) else {
        return String::new();
    };
    let mut out = String::new();
    for segment in path.iter() {
        let key = if segment.is_object() {
            get(&segment, "key")
        } else {
            segment
        };
        push_path_segment(&mut out, &host::string(&key));
    }
    out
}

/// A Standard Schema result's `issues`, when it has an array of them.
pub fn standard_issues(result: &JsValue) -> Option<Vec<Issue>> {
    let issues = host::array_copy(&get(result, "issues"))?;
    Some(
        issues
            .iter()
            .map(|issue| Issue {
                path: issue_path(&get(&issue, "path")),
                message: host::string(&get(&issue, "message")),
            })
            .collect(),
    )
}

/// A core value as a plain JS value, built by serde-wasm-bindgen (objects,
/// not `Map`s; integers as numbers), as `JSON.parse` of its JSON would be.
pub fn js<T: Serialize>(value: &T) -> JsValue {
    value
        .serialize(&serde_wasm_bindgen::Serializer::json_compatible())
        .unwrap_or(JsValue::UNDEFINED)
}

/// A tool result for JS (`tm.call`, `confirmPending`, `undo`), the hot
/// path of every page call. Its JSON text and one `JSON.parse` against
/// serde-wasm-bindgen 0.6.5's json_compatible serializer, measured on
/// `ToolResult::Ok` of growing data (node 22, a std build of the crate):
/// 138 B 0.0115 vs 0.0175 ms, 1.3 KB 0.031 vs 0.033, 14 KB 0.25 vs 0.30,
/// 476 KB 8.5 vs 10.5 ms. Text is faster at every size, so results take it.
/// An `ok` result's data is parsed from the text it already is (no second
/// copy of it in wasm memory) and put in `{ status, data }`.
pub fn result(result: &ToolResult) -> JsValue {
    match result {
        ToolResult::Ok { data: Some(data) } => {
            // Names made once (host.rs): a `&str` costs a UTF-8 decode per use.
            let out = js_sys::Object::new();
            host::set_by(&out, &host::STATUS, &host::OK.with(|ok| JsValue::from(ok)));
            host::set_by(&out, &host::DATA, &parse_text(data.text()));
            out.into()
        }
        _ => parse_text(&to_json(result)),
    }
}

/// A result of a tool marked `untrustedContent`, wrapped as
/// the spec has servers hand it to a model: `{ untrustedContent: true,
/// note, result }`.
pub fn untrusted_result(result: &ToolResult) -> JsValue {
    host::object(&[
        ("untrustedContent", &JsValue::TRUE),
        ("note", &JsValue::from_str(UNTRUSTED_CONTENT_NOTE)),
        ("result", &self::result(result)),
    ])
    .into()
}
