//! `formTools(form, { scope, sensitive?, title? })`: the driver of
//! [`crate::forms`]. It reads the form's controls (`<input>`, `<select>`
//! and its options, `<textarea>`) into [`Control`]s every time a tool runs,
//! hands them to the core, applies the [`Step`]s it returns (property
//! writes, `input` and `change` events), and registers the tools the core
//! defines with the scope; every decision (which elements are fields, their
//! kinds and values, what a write sets, the schema and texts, which fields
//! are sensitive, redaction, the form state of the stale rule) is the
//! core's.
//!
//! - **Reads**: every property (`tagName`, `name`, `type`, `value`,
//!   `checked`, `options`…) is read and written as a plain, guarded
//!   property access, so the `FormElementLike` objects of a page without a
//!   DOM work too, and a getter that throws reads as absent.
//! - **Sensitivity** is observed at every read of the form (a tool's run,
//!   the confirmation's changes, the form state), so a field seen as a
//!   password once stays redacted after a show-password button; and,
//!   where the host has `MutationObserver`, at every change of a control's
//!   `type` or `autocomplete` in the form (or of a control outside it
//!   joined by its `form` attribute) and every control added to or removed
//!   from it, so one rendered later and shown as text (re-typed, or
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
use crate::forms::{self, form_state, Choice, Control, Field, FormPolicy, Step, Wanted};
use crate::machine::ToolmarkError;

/// `target[key] = value`, through the setter its prototype defines when
/// it has one: a framework that wraps the property on the element (React's
/// value tracker) then sees the change when the events fire, as after a
/// person's edit. A setter that throws is ignored.
fn set_prop(target: &JsValue, key: &str, value: &JsValue) {
    if !target.is_object() {
        return;
    }
    let key = JsValue::from_str(key);
    let setter = js_sys::Reflect::get_prototype_of(target)
        .and_then(|prototype| js_sys::Reflect::get_own_property_descriptor(&prototype, &key))
        .ok()
        .and_then(|descriptor| host::function(get(&descriptor, "set")));
    let _ = match setter {
        Some(set) => set.call1(target, value),
        None => js_sys::Reflect::set(target, &key, value).map(JsValue::from),
    };
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

/// `target[key]` when it is a string, else `""` (as `target.type || ''`).
fn text(target: &JsValue, key: &str) -> String {
    get(target, key).as_string().unwrap_or_default()
}

/// `Boolean(target[key])`.
fn flag(target: &JsValue, key: &str) -> bool {
    get(target, key).is_truthy()
}

/// `element.matches(':disabled')` (a control in a disabled `<fieldset>`
/// is too, and the form does not submit it); for an object that is no
/// `Element`, its `disabled`.
fn disabled(element: &JsValue) -> bool {
    match element.dyn_ref::<Element>() {
        Some(element) => element.matches(":disabled").unwrap_or(true),
        None => flag(element, "disabled"),
    }
}

/// One field control of the form, and a select's options: what a
/// [`Step`] is applied to.
struct Ctl {
    element: JsValue,
    options: Vec<JsValue>,
}

impl Ctl {
    /// Reads the control's properties now (a select's options with them)
    /// into `control`.
    fn read(&mut self, control: &mut Control) {
        let element = &self.element;
        self.options = if control.select {
            host::array_from(&get(element, "options"))
                .map(|options| options.iter().collect())
                .unwrap_or_default()
        } else {
            Vec::new()
        };
        control.options.clear();
        for option in &self.options {
            control.options.push(Choice {
                value: text(option, "value"),
                selected: flag(option, "selected"),
                default_selected: flag(option, "defaultSelected"),
            });
        }
        control.autocomplete = attribute(element, "autocomplete");
        control.value = text(element, "value");
        control.default_value = text(element, "defaultValue");
        control.checked = flag(element, "checked");
        control.default_checked = flag(element, "defaultChecked");
        control.multiple = flag(element, "multiple");
        control.required = flag(element, "required");
        control.read_only = flag(element, "readOnly");
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

/// JS's `Number(text)`.
fn js_number(text: &str) -> f64 {
    text.parse::<js_sys::Number>()
        .map_or(f64::NAN, |n| n.value_of())
}

/// The form's field controls now, and the fields the core makes of them.
fn controls(form: &JsValue) -> (Vec<Ctl>, Vec<Field>) {
    let elements = host::array_from(&get(form, "elements")).unwrap_or_default();
    let mut ctls = Vec::new();
    let mut fields = Vec::new();
    for element in elements.iter() {
        let tag = text(&element, "tagName");
        let name = text(&element, "name");
        let input_type = text(&element, "type");
        if !forms::is_field_control(&tag, &name, disabled(&element), &input_type) {
            continue;
        }
        let mut control = Control {
            input_type,
            select: tag.eq_ignore_ascii_case("select"),
            element: ctls.len(),
            ..Control::default()
        };
        let mut ctl = Ctl {
            element,
            options: Vec::new(),
        };
        ctl.read(&mut control);
        ctls.push(ctl);
        forms::add_control(&mut fields, name, control);
    }
    forms::read_values(&mut fields, js_number);
    (ctls, fields)
}

/// `value` as JS converts it for a write.
fn wanted(value: &JsValue) -> Wanted {
    Wanted {
        truthy: value.is_truthy(),
        nullish: value.is_undefined() || value.is_null(),
        text: host::string(value),
        items: host::array_copy(value).map(|items| {
            let mut texts = Vec::new();
            for item in items.iter() {
                texts.push(host::string(&item));
            }
            texts
        }),
    }
}

/// The field's controls read again (a listener of a write may have
/// changed them).
fn read_again(ctls: &mut [Ctl], field: &mut Field) {
    for control in &mut field.controls {
        if let Some(ctl) = ctls.get_mut(control.element) {
            ctl.read(control);
        }
    }
}

/// Writes `value` to `field`: its controls read again, the core's steps
/// applied; whether the field took the value ([`forms::took`]).
fn write(ctls: &mut [Ctl], field: &mut Field, value: &JsValue) -> bool {
    let kind = field.kind();
    let wanted = wanted(value);
    read_again(ctls, field);
    for step in forms::write(kind, &field.controls, &wanted) {
        let (at, key, value) = match step {
            Step::Value(at, value) => (at, "value", JsValue::from_str(&value)),
            Step::Checked(at, on) => (at, "checked", on.into()),
            Step::Click(at, on) => {
                if let Some(ctl) = ctls.get(at) {
                    match host::method(&ctl.element, "click") {
                        Some(click) => {
                            let _ = click.call0(&ctl.element);
                        }
                        None => {
                            set_prop(&ctl.element, "checked", &on.into());
                            ctl.fire();
                        }
                    }
                }
                continue;
            }
            Step::Selected(at, option, on) => {
                if let Some(option) = ctls.get(at).and_then(|c| c.options.get(option)) {
                    set_prop(option, "selected", &on.into());
                }
                continue;
            }
            Step::Events(at) => {
                if let Some(ctl) = ctls.get(at) {
                    ctl.fire();
                }
                continue;
            }
        };
        if let Some(ctl) = ctls.get(at) {
            set_prop(&ctl.element, key, &value);
        }
    }
    read_again(ctls, field);
    forms::took(kind, &field.controls, &wanted)
}

/// `Object.entries(input)` as names and values; none for a non-object.
fn entries(input: &JsValue) -> Result<Vec<(String, JsValue)>, JsValue> {
    if !input.is_object() {
        return Ok(Vec::new());
    }
    let mut pairs = Vec::new();
    for entry in host::entries(input)?.iter() {
        let entry = Array::from(&entry);
        pairs.push((host::string(&entry.get(0)), entry.get(1)));
    }
    Ok(pairs)
}

/// A core value as a JS value (its JSON text and one `JSON.parse`).
fn js(value: &impl serde::Serialize) -> JsValue {
    values::parse_text(&serde_json::to_string(value).unwrap_or_default())
}

/// The controls at or under `node` (added to or removed from the form):
/// their name, `type` and `autocomplete`, for the policy to judge.
fn controls_under(node: &JsValue, mut seen: impl FnMut(&str, &str, &str)) {
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
        seen(
            &text(&control, "name"),
            &text(&control, "type"),
            &attribute(&control, "autocomplete"),
        );
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
    /// The form's controls and fields now, after the policy has seen which
    /// are sensitive.
    fn read(&self) -> (Vec<Ctl>, Vec<Field>) {
        let (ctls, fields) = controls(&self.element);
        let watch = self.watch.take();
        let observer = watch.as_ref().map(|(observer, _)| observer.clone());
        self.watch.set(watch);
        if let Some(observer) = observer {
            self.changed(&observer.take_records());
        }
        self.with_policy(|policy| policy.observe(&fields));
        (ctls, fields)
    }

    /// Mutation records: of `type` / `autocomplete`, a control whose old
    /// value made it sensitive makes its field sensitive; of the form's
    /// children, so does a sensitive control added or removed (a password
    /// input replaced by a text input of the same name is not re-typed).
    fn changed(&self, records: &JsValue) {
        // Each read before the policy is taken: a page's getter may call a tool.
        let mut seen = |name: &str, input_type: &str, autocomplete: &str| {
            self.with_policy(|policy| policy.observe_control(name, input_type, autocomplete));
        };
        let records = host::array_from(records).unwrap_or_default();
        for record in records.iter() {
            let record: MutationRecord = record.unchecked_into();
            if record.type_() == "childList" {
                for nodes in [get(&record, "addedNodes"), get(&record, "removedNodes")] {
                    for node in host::array_from(&nodes).unwrap_or_default().iter() {
                        controls_under(&node, &mut seen);
                    }
                }
                continue;
            }
            let Some(target) = record.target() else {
                continue;
            };
            if get(&target, "form") != self.element {
                continue;
            }
            let name = text(&target, "name");
            let attribute = record.attribute_name().unwrap_or_default();
            let old = record.old_value().unwrap_or_default();
            self.with_policy(|policy| policy.observe_change(&name, &attribute, &old));
        }
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
            .is_err()
        {
            return;
        }
        // A control outside the form joined to it by its `form` attribute:
        // its `type` and `autocomplete` changes anywhere in the form's
        // document (or shadow root), kept for this form's controls only.
        let root = call(&self.element, "getRootNode", &JsValue::UNDEFINED);
        // (Observing the form itself again would replace its options.)
        if let Some(root) = root
            .dyn_ref::<web_sys::Node>()
            .filter(|_| root != self.element)
        {
            options.set_child_list(false);
            let _ = observer.observe_with_options(root, &options);
        }
        self.watch.set(Some((observer, callback)));
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
        let (mut ctls, mut fields) = self.read();
        Ok(match op {
            Op::Fill => {
                let (mut filled, mut not_taken) = (Vec::new(), Vec::new());
                for (name, value) in entries(&input)? {
                    let field = forms::field_named(&mut fields, &name);
                    if let Some(field) = field.filter(|f| f.is_fillable()) {
                        if write(&mut ctls, field, &value) {
                            filled.push(name);
                        } else {
                            not_taken.push(name);
                        }
                    }
                }
                js(&forms::fill_answer(filled, not_taken))
            }
            Op::Snapshot => {
                let keys: Vec<String> =
                    entries(&input)?.into_iter().map(|(name, _)| name).collect();
                let mut before = Vec::new();
                for field in forms::filled(&fields, &keys) {
                    let value = field.value.as_ref().map_or(JsValue::UNDEFINED, js);
                    before.push((field.name.clone(), value));
                }
                tool_fn(self, Op::Restore(before))
            }
            Op::Restore(before) => {
                for field in &mut fields {
                    if let Some(value) = forms::value_before(before, field) {
                        let _ = write(&mut ctls, field, value);
                    }
                }
                JsValue::UNDEFINED
            }
            Op::Read => js(&Value::Object(self.with_policy(|p| p.read(&fields)))),
            Op::Summary(summary) => summary.clone(),
            Op::Changes => js(&self.with_policy(|p| p.changes(&fields))),
            Op::State => form_state(&fields, &self.key).into(),
            Op::Submit => {
                // requestSubmit() on a form failing its constraints (a
                // `required` field left empty…) submits nothing: the
                // person is shown what is missing, the agent told.
                let invalid = forms::invalid_fields(&fields, |control| {
                    let element = &ctls.get(control.element)?.element;
                    let valid = host::method(element, "checkValidity")?
                        .call0(element)
                        .ok()?;
                    valid.is_falsy().then(|| text(element, "validationMessage"))
                });
                let form = &self.element;
                let submits = forms::submits(
                    &invalid,
                    get(form, "isConnected") != JsValue::FALSE,
                    call(form, "checkValidity", &JsValue::UNDEFINED) != JsValue::FALSE,
                );
                if submits {
                    let submit = host::method(form, "requestSubmit")
                        .ok_or_else(|| Failure::misuse("formTools: form.requestSubmit is gone"))?;
                    submit.call0(form)?;
                } else {
                    call(form, "reportValidity", &JsValue::UNDEFINED);
                }
                js(&forms::submit_answer(&invalid, submits))
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

/// The form's label in its tools' texts (see [`forms::label`]).
fn label_of(form: &JsValue, options: &JsValue, scope: &JsValue) -> String {
    let title = Some(get(options, "title"))
        .filter(JsValue::is_truthy)
        .map(|title| host::string(&title));
    // `name` and `id` as strings only: a control named `name` shadows
    // `form.name`, and the attribute is read then.
    let property = |key: &str| {
        get(form, key)
            .as_string()
            .unwrap_or_else(|| attribute(form, key))
    };
    let [aria, name, id] = [
        attribute(form, "aria-label"),
        property("name"),
        property("id"),
    ];
    let scope = host::present(get(scope, "name")).map(|name| host::string(&name));
    forms::label(title.as_deref(), &[&aria, &name, &id], scope.as_deref()).into()
}

/// `formTools(form, options)`: registers `<scope>.fill`, `.read` and
/// `.submit` for the form; returns the function that unregisters them.
#[wasm_bindgen(js_name = formTools)]
pub fn form_tools(form: JsValue, options: JsValue) -> Result<Function, JsValue> {
    let scope = get(&options, "scope");
    let register = get(&scope, "register");
    let sensitive = get(&options, "sensitive");
    let declared = forms::arguments(forms::Arguments {
        elements: values::given(&get(&form, "elements")),
        request_submit: values::given(&get(&form, "requestSubmit")),
        register: values::given(&register),
        sensitive: values::given(&sensitive),
        sensitive_paths: values::given_list(&sensitive, host::string),
    })
    .map_err(Failure::misuse)?;
    let register: Function = register.unchecked_into();
    let mut key = [0u8; 32];
    host::web_crypto(&mut key)
        .map_err(|error| Failure::from(ToolmarkError::no_random("formTools", &error)))?;
    let element = form;
    let label = label_of(&element, &options, &scope);
    let form = Rc::new(Form {
        element,
        policy: Cell::new(FormPolicy::new(declared)),
        key,
        watch: Cell::new(None),
    });
    form.watch();
    let (_, fields) = form.read();
    let sensitive = form.with_policy(|policy| policy.sensitive_paths(&fields));
    let [fill, read, submit] = forms::tools(&label, &fields, sensitive);
    let [fill, read, submit]: [Object; 3] = [
        js(&fill).unchecked_into(),
        js(&read).unchecked_into(),
        js(&submit).unchecked_into(),
    ];
    host::set(&fill, "snapshot", &tool_fn(&form, Op::Snapshot));
    host::set(&fill, "run", &tool_fn(&form, Op::Fill));
    host::set(&read, "run", &tool_fn(&form, Op::Read));
    let summary = forms::summary(&label).into();
    host::set(&submit, "summary", &tool_fn(&form, Op::Summary(summary)));
    host::set(&submit, "changes", &tool_fn(&form, Op::Changes));
    host::set_form_state(&submit, &tool_fn(&form, Op::State));
    host::set(&submit, "run", &tool_fn(&form, Op::Submit));

    let mut offs = Vec::with_capacity(3);
    for def in [fill, read, submit] {
        match register.call1(&scope, &def) {
            Ok(off) => offs.push(off),
            Err(error) => {
                // Refused (a tool of that name in dev mode): none of them stays.
                unregister(&form, &offs);
                return Err(error);
            }
        }
    }
    Ok(host::js_function(move || unregister(&form, &offs)))
}

/// The form's tools unregistered (each `register` answer called) and its
/// observer disconnected.
fn unregister(form: &Form, offs: &[JsValue]) {
    form.unwatch();
    for off in offs {
        if let Some(off) = off.dyn_ref::<Function>() {
            let _ = off.call0(&JsValue::NULL);
        }
    }
}
