//! `formTools(form, { scope, sensitive?, title? })`: the driver of
//! [`crate::forms`]. It reads the form's controls (`<input>`, `<select>`
//! and its options, `<textarea>`) into [`Field`]s every time a tool runs,
//! writes values back with `input` and `change` events, and registers the
//! three tools with the scope; every decision (which elements are fields,
//! which fields are sensitive, redaction, the form state of the stale rule)
//! is the [`FormPolicy`]'s and [`form_state`]'s.
//!
//! - **Fields**: the `<input>`, `<select>` and `<textarea>` elements of
//!   `form.elements` that [`forms::is_field_control`] takes (other elements
//!   carry no submitted value). Every property (`tagName`, `name`, `type`,
//!   `value`, `checked`, `options`…) is read and written as a plain,
//!   guarded property access, so the `FormElementLike` objects of a page
//!   without a DOM work too, and a getter that throws reads as absent.
//! - **Sensitivity** is observed at every read of the form (a tool's run,
//!   the confirmation's changes, the form state), so a field seen as a
//!   password once stays redacted after a show-password button; and,
//!   where the host has `MutationObserver`, at every change of a control's
//!   `type` or `autocomplete` in the form and every control added to or
//!   removed from it, so one rendered later and shown as text (re-typed, or
//!   replaced by a text input of the same name) before any tool ran is too.
//! - **The form state** is [`form_state`] under a 32-byte key from
//!   `crypto.getRandomValues`, minted per `formTools()` call: a digest of
//!   every value, so no password waits in memory for the confirmation.
//! - **Lifetime**: the tools' functions are closures freed by the JS
//!   garbage collector with the definitions the registry keeps; the form
//!   is held by them, never by a global.
//! - **Re-entrancy**: the policy and the observer are `Cell`s, taken out
//!   only for Rust work, never while JS (an event listener, the scope's
//!   `register`) runs.

use crate::prelude::*;
use alloc::rc::Rc;
use core::cell::Cell;
use js_sys::{Array, Function, Object};
use serde_json::Value;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{Element, Event, EventInit, MutationObserver, MutationObserverInit, MutationRecord};

use super::error::Failure;
use super::host::{self, get};
use super::values;
use crate::forms::{self, form_state, Control, Field, FormPolicy};
use crate::protocol::ThrownErrorCode;

/// `target[key]` (`undefined` when reading it throws).
fn prop(target: &JsValue, key: &str) -> JsValue {
    get(target, key)
}

/// `target[key] = value`; a setter that throws is ignored.
fn set_prop(target: &JsValue, key: &str, value: &JsValue) {
    if target.is_object() {
        let _ = js_sys::Reflect::set(target, &JsValue::from_str(key), value);
    }
}

/// `target.name(argument)` when `target` has that method; what it returned,
/// `undefined` when it has none or throws.
fn call(target: &JsValue, name: &str, argument: &JsValue) -> JsValue {
    host::method(target, name)
        .and_then(|f| f.call1(target, argument).ok())
        .unwrap_or(JsValue::UNDEFINED)
}

/// `target.getAttribute(name)` as a string, `""` when absent.
fn attribute(target: &JsValue, name: &str) -> String {
    call(target, "getAttribute", &JsValue::from_str(name))
        .as_string()
        .unwrap_or_default()
}

/// One control of a field: an `<input>`, a `<select>` or a `<textarea>`.
/// Read and written through its properties (`value`, `checked`, …), each a
/// guarded property access: a `FormElementLike` object of a page without a
/// DOM works too, and a getter or setter that throws never throws through
/// the module.
struct Ctl {
    element: JsValue,
    select: bool,
    /// `type`, lowercased.
    input_type: String,
}

impl Ctl {
    fn value(&self) -> String {
        text(&self.element, "value")
    }

    /// The value the page loaded with (a select's is its options').
    fn default_value(&self) -> String {
        if self.select {
            String::new()
        } else {
            text(&self.element, "defaultValue")
        }
    }

    fn set_value(&self, value: &str) {
        set_prop(&self.element, "value", &JsValue::from_str(value));
    }

    fn checked(&self, initial: bool) -> bool {
        let key = if initial { "defaultChecked" } else { "checked" };
        prop(&self.element, key).is_truthy()
    }

    fn set_checked(&self, checked: bool) {
        set_prop(&self.element, "checked", &JsValue::from_bool(checked));
    }

    fn multiple(&self) -> bool {
        prop(&self.element, "multiple").is_truthy()
    }

    /// The select's options (none for other controls).
    fn options(&self) -> Vec<JsValue> {
        if !self.select {
            return Vec::new();
        }
        host::array_from(&prop(&self.element, "options"))
            .map(|options| options.iter().collect())
            .unwrap_or_default()
    }

    /// `input`, then `change`, both bubbling, as a user's edit fires them.
    fn fire(&self) {
        let init = EventInit::new();
        init.set_bubbles(true);
        for kind in ["input", "change"] {
            if let Ok(event) = Event::new_with_event_init_dict(kind, &init) {
                call(&self.element, "dispatchEvent", &event);
            }
        }
    }
}

/// An option's `selected` (`defaultSelected` for the initial value).
fn selected(option: &JsValue, initial: bool) -> bool {
    let key = if initial {
        "defaultSelected"
    } else {
        "selected"
    };
    prop(option, key).is_truthy()
}

/// An option's `value`.
fn option_value(option: &JsValue) -> String {
    text(option, "value")
}

/// How a field's value is read and written.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Checkbox,
    Radio,
    Select,
    SelectMultiple,
    Number,
    Text,
}

/// The controls sharing a name.
struct Group {
    name: String,
    controls: Vec<Ctl>,
    kind: Kind,
}

impl Group {
    fn first(&self) -> Option<&Ctl> {
        self.controls.first()
    }
}

/// `target[key]` when it is a string, else `""` (as `target.type || ''`).
fn text(target: &JsValue, key: &str) -> String {
    get(target, key).as_string().unwrap_or_default()
}

fn kind_of(controls: &[Ctl]) -> Kind {
    let Some(first) = controls.first() else {
        return Kind::Text;
    };
    if first.select {
        return if first.multiple() {
            Kind::SelectMultiple
        } else {
            Kind::Select
        };
    }
    match first.input_type.as_str() {
        "checkbox" if controls.len() == 1 => Kind::Checkbox,
        "radio" => Kind::Radio,
        "number" | "range" => Kind::Number,
        _ => Kind::Text,
    }
}

/// The form's fields now, in document order of their first control.
fn groups(form: &JsValue) -> Vec<Group> {
    let elements = host::array_from(&prop(form, "elements")).unwrap_or_default();
    let mut groups: Vec<Group> = Vec::new();
    for element in elements.iter() {
        let tag = text(&element, "tagName");
        let select = tag.eq_ignore_ascii_case("select");
        if !select && !tag.eq_ignore_ascii_case("input") && !tag.eq_ignore_ascii_case("textarea") {
            continue;
        }
        let name = text(&element, "name");
        let input_type = text(&element, "type").to_ascii_lowercase();
        if !forms::is_field_control(&name, get(&element, "disabled").is_truthy(), &input_type) {
            continue;
        }
        let control = Ctl {
            element,
            select,
            input_type,
        };
        match groups.iter_mut().find(|g| g.name == name) {
            Some(group) => group.controls.push(control),
            None => groups.push(Group {
                name,
                controls: vec![control],
                kind: Kind::Text,
            }),
        }
    }
    for group in &mut groups {
        group.kind = kind_of(&group.controls);
    }
    groups
}

/// A JS number as JSON: whole numbers as integers, NaN as `null` (what
/// `JSON.stringify` writes).
fn number(n: f64) -> Value {
    const SAFE: f64 = 9_007_199_254_740_991.0;
    if n.fract() == 0.0 && n.abs() <= SAFE {
        #[allow(clippy::cast_possible_truncation)]
        let whole = n as i64;
        Value::from(whole)
    } else {
        serde_json::Number::from_f64(n).map_or(Value::Null, Value::Number)
    }
}

/// A field's value now (`initial`: the one the page loaded with); `None`
/// for no value (an empty text, no radio checked).
fn read(group: &Group, initial: bool) -> Option<Value> {
    let first = group.first()?;
    let raw = match group.kind {
        Kind::Checkbox => return Some(Value::Bool(first.checked(initial))),
        Kind::Radio => {
            let checked = group.controls.iter().find(|c| c.checked(initial))?;
            return Some(Value::String(checked.value()));
        }
        Kind::Select | Kind::SelectMultiple if initial || group.kind == Kind::SelectMultiple => {
            let mut chosen = Vec::new();
            for option in first.options() {
                if selected(&option, initial) {
                    chosen.push(Value::String(option_value(&option)));
                }
            }
            if group.kind == Kind::SelectMultiple {
                return Some(Value::Array(chosen));
            }
            return chosen.into_iter().next();
        }
        _ if initial => first.default_value(),
        _ => first.value(),
    };
    if raw.is_empty() {
        None
    } else if group.kind == Kind::Number {
        Some(number(
            raw.parse::<js_sys::Number>()
                .map_or(f64::NAN, |n| n.value_of()),
        ))
    } else {
        Some(Value::String(raw))
    }
}

/// Writes `value`, converted as JS converts it (`Boolean(v)`, `String(v)`),
/// and fires the events.
fn write(group: &Group, value: &JsValue) {
    let Some(first) = group.first() else {
        return;
    };
    match group.kind {
        Kind::Checkbox => first.set_checked(value.is_truthy()),
        Kind::Radio => {
            let wanted = host::string(value);
            for control in &group.controls {
                control.set_checked(control.value() == wanted);
            }
            for control in &group.controls {
                control.fire();
            }
            return;
        }
        Kind::SelectMultiple => {
            let mut wanted = Vec::new();
            match host::array_copy(value) {
                Some(items) => {
                    for item in items.iter() {
                        wanted.push(host::string(&item));
                    }
                }
                None => wanted.push(host::string(value)),
            }
            for option in first.options() {
                let on = wanted.contains(&option_value(&option));
                set_prop(&option, "selected", &JsValue::from_bool(on));
            }
        }
        _ if value.is_undefined() || value.is_null() => first.set_value(""),
        _ => first.set_value(&host::string(value)),
    }
    first.fire();
}

fn fields(groups: &[Group]) -> Vec<Field> {
    let mut fields = Vec::with_capacity(groups.len());
    for group in groups {
        let mut controls = Vec::with_capacity(group.controls.len());
        for control in &group.controls {
            controls.push(Control {
                input_type: control.input_type.clone(),
                autocomplete: attribute(&control.element, "autocomplete"),
            });
        }
        fields.push(Field {
            name: group.name.clone(),
            controls,
            value: read(group, false),
            default: read(group, true),
        });
    }
    fields
}

/// The fill tool's schema of one field.
fn schema_of(group: &Group) -> Object {
    let listed = Array::new();
    let typed = |name: &str| host::object(&[("type", &JsValue::from_str(name))]);
    match group.kind {
        Kind::Checkbox => return typed("boolean"),
        Kind::Number => return typed("number"),
        Kind::Text => {
            let schema = typed("string");
            // A `required` control cannot be filled empty (the page's own
            // constraint, said in the schema the agent reads).
            if group
                .controls
                .iter()
                .any(|c| prop(&c.element, "required").is_truthy())
            {
                host::set(&schema, "minLength", &JsValue::from_f64(1.0));
            }
            return schema;
        }
        Kind::Radio => {
            for control in &group.controls {
                listed.push(&control.value().into());
            }
        }
        Kind::Select | Kind::SelectMultiple => {
            for option in group.first().map(Ctl::options).unwrap_or_default() {
                listed.push(&option_value(&option).into());
            }
        }
    }
    let listed = host::object(&[("enum", &listed)]);
    if group.kind == Kind::SelectMultiple {
        let array = typed("array");
        host::set(&array, "items", &listed);
        return array;
    }
    listed
}

/// The fields whose controls fail their constraints (`checkValidity()`
/// false), each as `{ path: name, message: the browser's validationMessage }`.
fn invalid_fields(groups: &[Group]) -> Array {
    let invalid = Array::new();
    for group in groups {
        let failing = group.controls.iter().find(|c| {
            host::method(&c.element, "checkValidity")
                .and_then(|check| check.call0(&c.element).ok())
                .is_some_and(|valid| valid.is_falsy())
        });
        if let Some(control) = failing {
            let message = text(&control.element, "validationMessage");
            invalid.push(&host::object(&[
                ("path", &JsValue::from_str(&group.name)),
                ("message", &JsValue::from_str(&message)),
            ]));
        }
    }
    invalid
}

/// A JSON value as a JS value (its text and one `JSON.parse`).
fn js(value: &Value) -> JsValue {
    values::parse_text(&serde_json::to_string(value).unwrap_or_default())
}

/// The sensitive controls at or under `node` (added to or removed from the
/// form), as fields seen sensitive.
fn sensitive_under(node: &JsValue, seen: &mut Vec<Field>) {
    let Some(element) = node.dyn_ref::<Element>() else {
        return;
    };
    let mut controls = vec![element.clone()];
    let under = host::method(element, "querySelectorAll")
        .and_then(|all| all.call1(element, &"input, select, textarea".into()).ok());
    if let Some(under) = under {
        for control in host::array_from(&under).unwrap_or_default().iter() {
            if let Ok(control) = control.dyn_into::<Element>() {
                controls.push(control);
            }
        }
    }
    for control in controls {
        let name = text(&control, "name");
        let sensitive = Control::new(
            &text(&control, "type"),
            &attribute(&control, "autocomplete"),
        );
        if !name.is_empty() && sensitive.is_sensitive() {
            seen.push(Field {
                name,
                controls: vec![sensitive],
                value: None,
                default: None,
            });
        }
    }
}

/// What a tool function of the form does.
enum Op {
    Fill,
    /// `fill`'s snapshot: returns a [`Op::Restore`].
    Snapshot,
    /// Writes these values back (a field not in the list gets none).
    Restore(Vec<(String, JsValue)>),
    Read,
    Summary(JsValue),
    Changes,
    State,
    Submit,
}

/// One `formTools()` call's form and sensitivity memory.
struct Form {
    element: JsValue,
    policy: Cell<FormPolicy>,
    /// The form state's key.
    key: [u8; 32],
    /// Where the host has `MutationObserver`: the `type` and
    /// `autocomplete` changes in the form between two uses, so a password
    /// rendered after `formTools()` and shown as text before any tool ran
    /// is known sensitive. Disconnected on dispose and on drop.
    watch: Cell<Option<(MutationObserver, host::Callback)>>,
}

impl Drop for Form {
    fn drop(&mut self) {
        self.unwatch();
    }
}

impl Form {
    /// The fields now, after the policy has seen which are sensitive.
    fn fields(&self, groups: &[Group]) -> Vec<Field> {
        let watch = self.watch.take();
        let observer = watch.as_ref().map(|(observer, _)| observer.clone());
        self.watch.set(watch);
        if let Some(observer) = observer {
            self.changed(&observer.take_records());
        }
        let fields = fields(groups);
        self.with_policy(|policy| policy.observe(&fields));
        fields
    }

    /// Mutation records: of `type` / `autocomplete`, a control whose old
    /// value made it sensitive makes its field sensitive; of the form's
    /// children, so does a sensitive control added or removed (a password
    /// input replaced by a text input of the same name is not re-typed).
    fn changed(&self, records: &JsValue) {
        let mut seen = Vec::new();
        let records = host::array_from(records).unwrap_or_default();
        for record in records.iter() {
            let record: MutationRecord = record.unchecked_into();
            if record.type_() == "childList" {
                for nodes in [get(&record, "addedNodes"), get(&record, "removedNodes")] {
                    for node in host::array_from(&nodes).unwrap_or_default().iter() {
                        sensitive_under(&node, &mut seen);
                    }
                }
                continue;
            }
            let old = record.old_value().unwrap_or_default();
            let control = match record.attribute_name().as_deref() {
                Some("type") => Control::new(&old, ""),
                _ => Control::new("", &old),
            };
            if control.is_sensitive() {
                seen.push(Field {
                    name: record
                        .target()
                        .map(|t| text(&t, "name"))
                        .unwrap_or_default(),
                    controls: vec![control],
                    value: None,
                    default: None,
                });
            }
        }
        self.with_policy(|policy| policy.observe(&seen));
    }

    fn watch(self: &Rc<Self>) {
        let form = Rc::downgrade(self);
        let callback = host::callback(move |records, _| {
            if let Some(form) = form.upgrade() {
                form.changed(&records);
            }
            Ok(JsValue::UNDEFINED)
        });
        let Ok(observer) = MutationObserver::new(callback.as_ref().unchecked_ref()) else {
            return;
        };
        let options = MutationObserverInit::new();
        options.set_subtree(true);
        options.set_child_list(true);
        options.set_attribute_old_value(true);
        let filter: Array = ["type", "autocomplete"]
            .iter()
            .map(|a| JsValue::from_str(a))
            .collect();
        options.set_attribute_filter(&filter);
        if observer
            .observe_with_options(self.element.unchecked_ref(), &options)
            .is_ok()
        {
            self.watch.set(Some((observer, callback)));
        }
    }

    fn unwatch(&self) {
        if let Some((observer, _)) = self.watch.take() {
            observer.disconnect();
        }
    }

    /// `f` on the sensitivity memory (Rust only: no JS runs in `f`).
    fn with_policy<R>(&self, f: impl FnOnce(&mut FormPolicy) -> R) -> R {
        let mut policy = self.policy.take();
        let answer = f(&mut policy);
        self.policy.set(policy);
        answer
    }

    fn run(self: &Rc<Self>, op: &Op, input: JsValue) -> Result<JsValue, JsValue> {
        let groups = groups(&self.element);
        let fields = self.fields(&groups);
        Ok(match op {
            Op::Fill => {
                let filled = Array::new();
                if input.is_object() {
                    for entry in host::entries(&input)?.iter() {
                        let entry = Array::from(&entry);
                        let name = host::string(&entry.get(0));
                        if let Some(group) = groups.iter().find(|g| g.name == name) {
                            write(group, &entry.get(1));
                            filled.push(&name.into());
                        }
                    }
                }
                host::object(&[("filled", &filled)]).into()
            }
            Op::Snapshot => {
                let mut before = Vec::with_capacity(fields.len());
                for field in fields {
                    let value = field.value.as_ref().map_or(JsValue::UNDEFINED, js);
                    before.push((field.name, value));
                }
                tool_fn(self, Op::Restore(before))
            }
            Op::Restore(before) => {
                for group in &groups {
                    let value = before.iter().find(|(name, _)| *name == group.name);
                    write(group, value.map_or(&JsValue::UNDEFINED, |(_, v)| v));
                }
                JsValue::UNDEFINED
            }
            Op::Read => js(&Value::Object(self.with_policy(|p| p.read(&fields)))),
            Op::Summary(summary) => summary.clone(),
            Op::Changes => {
                let out = Array::new();
                for change in self.with_policy(|p| p.changes(&fields)) {
                    let entry = host::object(&[("path", &change.path.into())]);
                    for (key, value) in [("before", change.before), ("after", change.after)] {
                        if let Some(value) = value {
                            host::set(&entry, key, &js(&value));
                        }
                    }
                    out.push(&entry);
                }
                out.into()
            }
            Op::State => form_state(&fields, &self.key).into(),
            Op::Submit => {
                // requestSubmit() on a form failing its constraints (a
                // `required` field left empty…) submits nothing: say so,
                // with the fields at fault as issues (a thrown error would
                // reach the agent as a bare "Tool failed"), and show the
                // person what is missing.
                let invalid = invalid_fields(&groups);
                if invalid.length() > 0 {
                    call(&self.element, "reportValidity", &JsValue::UNDEFINED);
                    return Ok(host::object(&[
                        ("submitted", &JsValue::FALSE),
                        ("invalid", &invalid),
                    ])
                    .into());
                }
                let submit = host::method(&self.element, "requestSubmit")
                    .ok_or_else(|| Failure::misuse("formTools: form.requestSubmit is gone"))?;
                submit.call0(&self.element)?;
                host::object(&[("submitted", &JsValue::TRUE)]).into()
            }
        })
    }
}

/// A JS function doing `op` with its first argument (freed by the JS
/// garbage collector with it). One closure type for all of them: one
/// instantiation of the closure glue.
fn tool_fn(form: &Rc<Form>, op: Op) -> JsValue {
    let form = form.clone();
    host::callback(move |input, _| form.run(&op, input)).into_js_value()
}

/// `options.title || form's aria-label || form.name || form.id || (scope.name ?? 'the')`.
fn label_of(form: &JsValue, options: &JsValue, scope: &JsValue) -> String {
    let title = get(options, "title");
    if title.is_truthy() {
        return host::string(&title);
    }
    // `name` and `id` as strings only: a control named `name` shadows
    // `form.name`, and the attribute is read then.
    let attribute = |key: &str| attribute(form, key);
    let property = |key: &str| get(form, key).as_string().unwrap_or_else(|| attribute(key));
    for label in [attribute("aria-label"), property("name"), property("id")] {
        if !label.is_empty() {
            return label;
        }
    }
    match host::present(get(scope, "name")) {
        Some(name) => host::string(&name),
        None => "the".into(),
    }
}

/// The parts, joined.
fn phrase(parts: &[&str]) -> JsValue {
    let mut text = String::new();
    for part in parts {
        text.push_str(part);
    }
    text.into()
}

/// A tool definition: name, title, description, hints, inputSchema.
fn tool(
    name: &str,
    title: &JsValue,
    description: &JsValue,
    hints: &Object,
    input: &Object,
) -> Object {
    host::object(&[
        ("name", &JsValue::from_str(name)),
        ("title", title),
        ("description", description),
        ("hints", hints),
        ("inputSchema", input),
    ])
}

/// `{ type: 'object', properties, additionalProperties: false }`.
fn closed_schema(properties: &Object) -> Object {
    host::object(&[
        ("type", &JsValue::from_str("object")),
        ("properties", properties),
        ("additionalProperties", &JsValue::FALSE),
    ])
}

/// `formTools(form, options)`: registers `<scope>.fill`, `.read` and
/// `.submit` for the form; returns the function that unregisters them.
#[wasm_bindgen(js_name = formTools)]
pub fn form_tools(form: JsValue, options: JsValue) -> Result<Function, JsValue> {
    if !get(&form, "elements").is_object() || !get(&form, "requestSubmit").is_function() {
        return Err(Failure::misuse("formTools: form must be an HTMLFormElement").into());
    }
    let scope = get(&options, "scope");
    let register = host::method(&scope, "register").ok_or_else(|| {
        Failure::misuse("formTools: options.scope must be a scope (tm.scope('name'))")
    })?;
    let mut declared = Vec::new();
    if let Some(paths) = host::present(get(&options, "sensitive")) {
        let Some(paths) = host::array_copy(&paths) else {
            return Err(
                Failure::misuse("formTools: options.sensitive must be an array of paths").into(),
            );
        };
        for path in paths.iter() {
            declared.push(host::string(&path));
        }
    }
    let mut key = [0u8; 32];
    getrandom::fill(&mut key)
        .map_err(|_| Failure::toolmark(ThrownErrorCode::HostUnsupported, "formTools: Web Crypto API is unavailable (crypto.getRandomValues): run it where globalThis.crypto is"))?;
    let element = form;
    let label = label_of(&element, &options, &scope);
    let form = Rc::new(Form {
        element,
        policy: Cell::new(FormPolicy::new(declared)),
        key,
        watch: Cell::new(None),
    });
    form.watch();
    let groups = groups(&form.element);
    let fields = form.fields(&groups);
    let properties = Object::new();
    for group in &groups {
        host::set(&properties, &group.name, &schema_of(group));
    }
    let no_input = closed_schema(&Object::new());
    let label = label.as_str();

    let fill = tool(
        "fill",
        &phrase(&["Fill ", label, " form"]),
        &phrase(&[
            "Fill fields of the ",
            label,
            " form. Input: an object of field name to value; fields left out keep their value.",
        ]),
        &Object::new(),
        &closed_schema(&properties),
    );
    host::set(&fill, "snapshot", &tool_fn(&form, Op::Snapshot));
    host::set(&fill, "run", &tool_fn(&form, Op::Fill));

    let read = tool(
        "read",
        &phrase(&["Read ", label, " form"]),
        &phrase(&[
            "Read the current values of the ",
            label,
            " form (sensitive fields are redacted).",
        ]),
        &host::object(&[
            ("readOnly", &JsValue::TRUE),
            ("untrustedContent", &JsValue::TRUE),
        ]),
        &no_input,
    );
    host::set(&read, "run", &tool_fn(&form, Op::Read));

    let submit = tool(
        "submit",
        &phrase(&["Submit ", label, " form"]),
        &phrase(&[
            "Submit the ",
            label,
            " form as it is filled now. A human confirms first.",
        ]),
        &host::object(&[("consequential", &JsValue::TRUE)]),
        &no_input,
    );
    let sensitive = Array::new();
    for path in form.with_policy(|policy| policy.sensitive_paths(&fields)) {
        sensitive.push(&path.into());
    }
    host::set(&submit, "sensitive", &sensitive);
    let summary = phrase(&["Submit the ", label, " form"]);
    host::set(&submit, "summary", &tool_fn(&form, Op::Summary(summary)));
    host::set(&submit, "changes", &tool_fn(&form, Op::Changes));
    host::set_form_state(&submit, &tool_fn(&form, Op::State));
    host::set(&submit, "run", &tool_fn(&form, Op::Submit));

    let mut offs = Vec::with_capacity(3);
    for def in [fill, read, submit] {
        offs.push(register.call1(&scope, &def)?);
    }
    Ok(host::js_function(move || {
        form.unwatch();
        for off in &offs {
            if let Some(off) = off.dyn_ref::<Function>() {
                let _ = off.call0(&JsValue::NULL);
            }
        }
    }))
}
