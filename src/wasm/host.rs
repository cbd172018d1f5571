//! What the boundary uses of its JS host: property access, calls that may
//! throw, `String(…)`, the clock, timers and microtasks. Every global is
//! looked up on `globalThis` when it is called, so pages, workers,
//! extensions and Node work alike; every call into JS is a `catch` import,
//! so a throwing callback comes back as an `Err`, never as a trap.

use crate::prelude::*;
use js_sys::{Function, JsString, Object, Reflect};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

#[wasm_bindgen(module = "/js/src/form-state.js")]
extern "C" {
    /// Gives a definition the form state `formTools` made for it (the core
    /// compares it at approval: `stale`); kept in that file's WeakMap, which
    /// no tool definition can reach.
    #[wasm_bindgen(js_name = setFormState)]
    pub fn set_form_state(definition: &JsValue, state: &JsValue);

    /// The form state given to `definition`, or `undefined`.
    #[wasm_bindgen(js_name = formState)]
    pub fn form_state(definition: &JsValue) -> JsValue;
}

#[wasm_bindgen]
extern "C" {
    /// `String(value)`: the JS conversion (it may throw, for a symbol's
    /// description never, for an object with a throwing `toString` yes).
    #[wasm_bindgen(catch, js_namespace = globalThis, js_name = String)]
    fn string_of(value: &JsValue) -> Result<JsString, JsValue>;

    /// `Number(value)`.
    #[wasm_bindgen(catch, js_namespace = globalThis, js_name = Number)]
    fn number_of(value: &JsValue) -> Result<JsValue, JsValue>;

    /// `setTimeout(callback, delay)` (an error when the host has none).
    #[wasm_bindgen(catch, js_namespace = globalThis, js_name = setTimeout)]
    fn set_timeout_of(callback: &Function, delay: &JsValue) -> Result<JsValue, JsValue>;

    /// `clearTimeout(handle)`.
    #[wasm_bindgen(catch, js_namespace = globalThis, js_name = clearTimeout)]
    fn clear_timeout_of(handle: &JsValue) -> Result<JsValue, JsValue>;

    /// `queueMicrotask(callback)`.
    #[wasm_bindgen(catch, js_namespace = globalThis, js_name = queueMicrotask)]
    fn queue_microtask_of(callback: &Function) -> Result<JsValue, JsValue>;

    /// `performance.now()` (an error when the host has none).
    #[wasm_bindgen(catch, js_namespace = ["globalThis", "performance"], js_name = now)]
    fn performance_now() -> Result<f64, JsValue>;

    /// `globalThis` itself (every host the package supports has it, so
    /// `js_sys::global()`'s fallbacks to `self`, `window` and `global` are
    /// not needed).
    #[wasm_bindgen(thread_local_v2, js_name = globalThis)]
    static GLOBAL_THIS: JsValue;
}

/// `globalThis`.
pub fn global() -> JsValue {
    GLOBAL_THIS.with(JsValue::clone)
}

// The object operations the boundary applies to app and agent values, as
// `catch` imports: js-sys's own are not, and a proxy's trap or a revoked
// proxy would throw through the module's frames (each such throw leaks
// the module's stack, which then traps for good).
#[wasm_bindgen]
extern "C" {
    /// `Promise.resolve(value)` (it reads a promise's `constructor`).
    #[wasm_bindgen(catch, js_namespace = Promise, js_name = resolve)]
    pub fn promise_resolve(value: &JsValue) -> Result<js_sys::Promise, JsValue>;

    /// `Object.entries(value)`.
    #[wasm_bindgen(catch, js_namespace = Object, js_name = entries)]
    pub fn entries(value: &JsValue) -> Result<js_sys::Array, JsValue>;

    /// `Object.hasOwn(value, key)`.
    #[wasm_bindgen(catch, js_namespace = Object, js_name = hasOwn)]
    pub fn has_own(value: &JsValue, key: &JsValue) -> Result<bool, JsValue>;

    /// `Array.isArray(value)` (it throws for a revoked proxy).
    #[wasm_bindgen(catch, js_namespace = Array, js_name = isArray)]
    pub fn is_array(value: &JsValue) -> Result<bool, JsValue>;

    /// `Array.from(value)`: a plain array, whose length and elements are
    /// then read without running the page's code.
    #[wasm_bindgen(catch, js_namespace = Array, js_name = from)]
    pub fn array_from(value: &JsValue) -> Result<js_sys::Array, JsValue>;
}

/// `Array.from(value)` when `value` is an array, `None` otherwise (or when
/// reading it throws).
pub fn array_copy(value: &JsValue) -> Option<js_sys::Array> {
    if is_array(value).ok()? {
        array_from(value).ok()
    } else {
        None
    }
}

// Property names read on every call, and the callers a run's `ctx` names,
// made once as JS strings (no UTF-8 decode per use, as a `&str` costs).
// rustfmt would drop the values, which Rust has no syntax for in an extern
// block (wasm-bindgen reads them).
#[rustfmt::skip]
#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(thread_local_v2, static_string)]
    static THEN: JsString = "then";
    #[wasm_bindgen(thread_local_v2, static_string)]
    pub static INAPP: JsString = "inapp";
    #[wasm_bindgen(thread_local_v2, static_string)]
    pub static HUMAN: JsString = "human";
    #[wasm_bindgen(thread_local_v2, static_string)]
    pub static STATUS: JsString = "status";
    #[wasm_bindgen(thread_local_v2, static_string)]
    pub static DATA: JsString = "data";
    #[wasm_bindgen(thread_local_v2, static_string)]
    pub static OK: JsString = "ok";
}

/// The one closure type the boundary hands to JS (one invoke shim, one glue
/// wrapper for all): two arguments (`undefined` when JS passes fewer, extra
/// ones ignored), a value back or, as `Err`, a throw.
pub type Callback = Closure<dyn Fn(JsValue, JsValue) -> Result<JsValue, JsValue>>;

/// A [`Callback`].
pub fn callback(f: impl Fn(JsValue, JsValue) -> Result<JsValue, JsValue> + 'static) -> Callback {
    Closure::new(f)
}

/// A JS function that runs `f` and returns `undefined` (its Rust side freed
/// by the JS garbage collector with it).
pub fn js_function(f: impl Fn() + 'static) -> Function {
    callback(move |_, _| {
        f();
        Ok(JsValue::UNDEFINED)
    })
    .into_js_value()
    .unchecked_into()
}

/// `target[key]` (`undefined` for a primitive target), or what its getter
/// threw.
pub fn read(target: &JsValue, key: &str) -> Result<JsValue, JsValue> {
    if !target.is_object() && !target.is_function() {
        return Ok(JsValue::UNDEFINED);
    }
    Reflect::get(target, &JsValue::from_str(key))
}

/// `target[key]`, or `undefined` (for a primitive target, or a throwing getter).
pub fn get(target: &JsValue, key: &str) -> JsValue {
    if !target.is_object() && !target.is_function() {
        return JsValue::UNDEFINED;
    }
    Reflect::get(target, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED)
}

/// `target[key] = value` on an object the boundary made.
pub fn set(target: &Object, key: &str, value: &JsValue) {
    // Defining a property on a plain new object does not throw.
    let _ = Reflect::set(target, &JsValue::from_str(key), value);
}

/// `target[key] = value` on an object the boundary made, for one of the
/// names above.
pub fn set_by(
    target: &Object,
    key: &'static wasm_bindgen::JsThreadLocal<JsString>,
    value: &JsValue,
) {
    let _ = key.with(|key| Reflect::set(target, key, value));
}

/// `target[key]` when it is a function.
pub fn method(target: &JsValue, key: &str) -> Option<Function> {
    get(target, key).dyn_into::<Function>().ok()
}

/// `value` when it is a function.
pub fn function(value: JsValue) -> Option<Function> {
    value.dyn_into::<Function>().ok()
}

/// `value ?? undefined`: `None` for `undefined` and `null`.
pub fn present(value: JsValue) -> Option<JsValue> {
    if value.is_undefined() || value.is_null() {
        None
    } else {
        Some(value)
    }
}

/// `String(value)`, or `fallback` when that throws.
pub fn string(value: &JsValue) -> String {
    if let Some(text) = value.as_string() {
        return text;
    }
    string_of(value).map_or_else(|_| String::from("[object]"), String::from)
}

/// What an error report says about a thrown value: `Name: message` for an
/// `Error`, else `String(value)`. `name` and `message` are read as guarded
/// properties: a proxy of an `Error` passes `instanceof` and may still
/// throw from its `get` trap.
pub fn detail(error: &JsValue) -> String {
    if error.is_instance_of::<js_sys::Error>() {
        let read = |key: &str| Reflect::get(error, &JsValue::from_str(key));
        if let (Ok(name), Ok(message)) = (read("name"), read("message")) {
            let mut out = string(&name);
            out.push_str(": ");
            out.push_str(&string(&message));
            return out;
        }
    }
    string(error)
}

/// A plain object with these properties.
pub fn object(entries: &[(&str, &JsValue)]) -> Object {
    let out = Object::new();
    for (key, value) in entries {
        set(&out, key, value);
    }
    out
}

/// Whether `await` would follow `value` (an object or function with a
/// `then` method), or what reading its `then` threw, which `await` rejects
/// with.
pub fn thenable(value: &JsValue) -> Result<bool, JsValue> {
    if !value.is_object() && !value.is_function() {
        return Ok(false);
    }
    THEN.with(|then| Reflect::get(value, then))
        .map(|then| then.is_function())
}

/// The registry's clock: the `now` option (`Number(now())`), else `Date.now()`.
pub fn now_ms(clock: Option<&Function>) -> u64 {
    let ms = clock
        .and_then(|clock| clock.call0(&JsValue::NULL).ok())
        .map(|value| value.as_f64().unwrap_or_else(|| number(&value)))
        .unwrap_or_else(js_sys::Date::now);
    whole_ms(ms)
}

/// A monotonic clock in ms: `performance.now()`, else `Date.now()`. For
/// deadlines a host timer serves: `setTimeout` waits on a monotonic clock,
/// so a deadline on the wall clock moves with every step of it (set back
/// an hour, a reconnect due in 500 ms would wait an hour).
pub fn monotonic_ms() -> u64 {
    whole_ms(performance_now().unwrap_or_else(|_| js_sys::Date::now()))
}

/// `Number(value)` (NaN when it throws).
fn number(value: &JsValue) -> f64 {
    number_of(value)
        .ok()
        .and_then(|n| n.as_f64())
        .unwrap_or(f64::NAN)
}

/// Milliseconds as the core's u64 (negative and non-finite: 0).
pub fn whole_ms(ms: f64) -> u64 {
    if ms.is_finite() && ms > 0.0 {
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let whole = ms as u64;
        whole
    } else {
        0
    }
}

/// `setTimeout(callback, delay)` on the global object; the handle is
/// `unref()`ed where it has that (Node), so an expiry alone never keeps a
/// process alive.
pub fn set_timeout(callback: &Function, delay_ms: f64) -> Option<JsValue> {
    let handle = set_timeout_kept(callback, &JsValue::from_f64(delay_ms))?;
    if let Some(unref) = method(&handle, "unref") {
        let _ = unref.call0(&handle);
    }
    Some(handle)
}

/// `setTimeout(callback, delay)` on the global object, as it is: in Node a
/// pending one keeps the process alive (`delay` converted by JS, as a page's
/// own call would).
pub fn set_timeout_kept(callback: &Function, delay: &JsValue) -> Option<JsValue> {
    set_timeout_of(callback, delay).ok()
}

/// `clearTimeout(handle)` on the global object.
pub fn clear_timeout(handle: &JsValue) {
    let _ = clear_timeout_of(handle);
}

/// `queueMicrotask(callback)` itself: the driver's executor queues one
/// per busy stretch, not per task (src/wasm/driver/tasks.rs).
pub fn queue_microtask(callback: &Function) {
    let _ = queue_microtask_of(callback);
}

/// An app callback's throw that must not stop the caller's work (a
/// subscriber's, from a transport's dispatch): to the host's `reportError`
/// (browsers, workers), as an uncaught error is; where there is none (Node),
/// to `console.error` (an uncaught throw would end a Node process).
pub fn report_uncaught(error: &JsValue) {
    let global = global();
    if let Some(report) = method(&global, "reportError") {
        if report.call1(&global, error).is_ok() {
            return;
        }
    }
    let console = get(&global, "console");
    if let Some(log) = method(&console, "error") {
        let _ = log.call1(&console, error);
    }
}

/// A subscriber's `callback(value)`, a throw reported as uncaught.
pub fn call_reporting(callback: &Function, value: &JsValue) {
    if let Err(error) = callback.call1(&JsValue::UNDEFINED, value) {
        report_uncaught(&error);
    }
}

/// Throws `error` from a microtask of its own (`queueMicrotask`), where the
/// host reports it as any uncaught error.
pub fn throw_in_microtask(error: JsValue) {
    let error = core::cell::Cell::new(Some(error));
    let thrower = callback(move |_, _| Err(error.take().unwrap_or(JsValue::UNDEFINED)));
    let _ = queue_microtask_of(&thrower.into_js_value().unchecked_into());
}

/// `crypto.getRandomValues`, through getrandom's `wasm_js` backend.
pub fn web_crypto(buf: &mut [u8]) -> Result<(), crate::ids::RandomError> {
    // The backend's one error is `WEB_CRYPTO`; its text is written here,
    // since getrandom's `Display` would bring `core::fmt` and every
    // backend's error texts into the module.
    getrandom::fill(buf)
        .map_err(|_| crate::ids::RandomError("Web Crypto API is unavailable".into()))
}
