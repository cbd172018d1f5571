//! The decisions of `formTools` (fill / read / submit tools for an HTML
//! form), as pure functions over a snapshot of the form's controls that a
//! driver reads from the DOM. No DOM here: the driver reads each field
//! control into a [`Control`] (`type`, `autocomplete`, `value`,
//! `checked`, a select's options…) every time a tool runs, and applies the
//! [`Step`]s a write comes to.
//!
//! # What it decides
//! - **Which elements are fields** ([`is_field_control`], [`add_control`]): an
//!   `<input>`, `<select>` or `<textarea>`, named, enabled, not a button or
//!   a file input; the controls sharing a name are one field.
//! - **Values** ([`Kind`], [`read_values`], [`write()`]): how a field's value is
//!   read from its controls (a checkbox's `checked`, the checked radio's
//!   value, the selected options', a number…) and what writing a value
//!   sets on each control.
//! - **The tools** ([`tools`], [`label`], [`summary`], [`invalid_fields`]):
//!   the fill schema from the fields' kinds, the names, texts and hints,
//!   and the fields a submit is refused for.
//! - **Sensitive fields** ([`FormPolicy`]): a field is sensitive when one
//!   of its controls has `type="password"` or an `autocomplete` token
//!   starting with `cc-` (case-insensitive, any token of the list:
//!   `"shipping cc-number"`), or when its path is an app-declared sensitive
//!   path or below one. This is decided **at every use** (each
//!   [`FormPolicy::read`], [`FormPolicy::changes`],
//!   [`FormPolicy::sensitive_paths`] looks at the controls as they are
//!   now), and **a field stays sensitive once it has been**: the policy
//!   keeps a per-form "ever sensitive" set, so a password field switched to
//!   `type="text"` by a show-password button stays redacted.
//! - **Redaction** ([`FormPolicy::redact_changes`], [`redact_changes`]):
//!   FieldChange `before`/`after` of a sensitive path become
//!   [`REDACTED`] (absent values stay absent). A declared path *inside* a
//!   change's value (`sensitive: ['card.number']`, a change at `card`
//!   whose value is `{ "number": …, "name": … }`) redacts that member only,
//!   in place (`{ "number": "[redacted]", "name": … }`): the rest of the
//!   value stays readable, and nothing below a declared path is ever shown.
//!   Array elements are addressed by their index (`items.0.secret`).
//! - **The stale-form rule** ([`form_state`]): the state kept at request
//!   time is a SHA-256 digest of the full form state (every field's name
//!   and value and every control's value, checked and selected state, in
//!   order, unambiguously encoded), keyed by a per-form
//!   secret the driver mints, and compared with the digest at approval;
//!   any difference is `refused stale`. A digest, not the values
//!   themselves, so no password waits in memory for the confirmation's 600
//!   s; SHA-256, not a 64-bit non-cryptographic fingerprint, which an
//!   agent can collide by appending 7 characters to a free-text field (the
//!   test `forged_collision_of_a_64_bit_fingerprint_is_detected` shows one).
//!
//! # What the driver does
//! Keeps one [`FormPolicy`] per `formTools()` call, with the declared
//! paths, and a random key (16 bytes or more, `crypto.getRandomValues`) for
//! [`form_state`]. Registers the [`tools`] with their functions. On
//! `fill`: reads the field's controls again and applies [`write()`]'s steps.
//! On `read`: the fields, then [`FormPolicy::read`]. On
//! `submit`'s confirmation: [`FormPolicy::changes`] and the registry's
//! `sensitive` list from [`FormPolicy::sensitive_paths`]; the form state
//! from [`form_state`] at request time and again at approval
//! (`Toolmark::handle_state`).

use crate::prelude::*;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::given::{Given, GivenList};
use crate::protocol::{FieldChange, Issue};

/// What sensitive values become.
pub const REDACTED: &str = "[redacted]";

/// One form control (an `<input>`, `<select>`, `<textarea>`) as the driver
/// reads it: every property a decision below looks at.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Control {
    /// The `type` property (`"text"`, `"password"`, `"select-one"`, …).
    pub input_type: String,
    /// The `autocomplete` attribute, `""` when absent.
    pub autocomplete: String,
    /// A `<select>` (its value is its options').
    pub select: bool,
    pub value: String,
    /// `defaultValue`: the value the page loaded with.
    pub default_value: String,
    pub checked: bool,
    pub default_checked: bool,
    pub multiple: bool,
    pub required: bool,
    /// `readOnly`: submitted, but not for a person to edit.
    pub read_only: bool,
    /// A select's options (none for other controls).
    pub options: Vec<Choice>,
    /// Its place in the driver's list of the form's controls, which a
    /// [`Step`] names.
    pub element: usize,
}

/// One `<option>` of a select.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Choice {
    pub value: String,
    pub selected: bool,
    /// `defaultSelected`: selected as the page loaded.
    pub default_selected: bool,
}

impl Control {
    pub fn new(input_type: &str, autocomplete: &str) -> Self {
        Control {
            input_type: input_type.into(),
            autocomplete: autocomplete.into(),
            ..Control::default()
        }
    }

    /// `type="password"`, or an `autocomplete` token starting with `cc-`.
    pub fn is_sensitive(&self) -> bool {
        self.is_type("password")
            || self.autocomplete.split_whitespace().any(|token| {
                token
                    .get(..3)
                    .is_some_and(|prefix| prefix.eq_ignore_ascii_case("cc-"))
            })
    }

    /// `checked` now, or as the page loaded (`initial`).
    fn is_checked(&self, initial: bool) -> bool {
        if initial {
            self.default_checked
        } else {
            self.checked
        }
    }

    /// `value` now, or as the page loaded (`initial`: `defaultValue`).
    fn value_at(&self, initial: bool) -> &String {
        if initial {
            &self.default_value
        } else {
            &self.value
        }
    }

    /// Its `type` is `input_type` (as HTML compares it, ASCII case-blind).
    fn is_type(&self, input_type: &str) -> bool {
        self.input_type.eq_ignore_ascii_case(input_type)
    }
}

impl Choice {
    fn is_selected(&self, initial: bool) -> bool {
        if initial {
            self.default_selected
        } else {
            self.selected
        }
    }
}

/// Control types that carry no field value (`formTools` skips them).
pub const NOT_FIELD_TYPES: [&str; 5] = ["submit", "button", "reset", "image", "file"];

/// Whether a form element is one of the form's fields: an `<input>`,
/// `<select>` or `<textarea>` (other elements carry no submitted value)
/// that has a name, is enabled, and whose `type` is not a button or a file
/// input.
pub fn is_field_control(tag: &str, name: &str, disabled: bool, input_type: &str) -> bool {
    ["input", "select", "textarea"]
        .iter()
        .any(|t| t.eq_ignore_ascii_case(tag))
        && !name.is_empty()
        && !disabled
        && !NOT_FIELD_TYPES
            .iter()
            .any(|t| t.eq_ignore_ascii_case(input_type))
}

/// One named field of the form: the enabled controls sharing a name (a
/// radio group has several), and its values as JSON (`None`: no value,
/// e.g. an empty text input).
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    pub name: String,
    pub controls: Vec<Control>,
    /// The current value.
    pub value: Option<Value>,
    /// The value the page loaded with (`defaultValue`, `defaultChecked`, …).
    pub default: Option<Value>,
}

impl Field {
    /// Whether one of its controls is sensitive now, or it is hidden.
    pub fn is_sensitive_now(&self) -> bool {
        self.controls.iter().any(Control::is_sensitive) || self.is_hidden()
    }

    /// Whether its controls are all `type="hidden"`: a value the page
    /// keeps for the form to submit, often a secret (Laravel's `_token`,
    /// Rails' `authenticity_token`) or a signed id, that no person sees.
    /// It is redacted as a sensitive field and not filled. (A hidden input
    /// beside a checkbox of its name, as Rails writes one, is that box's.)
    pub fn is_hidden(&self) -> bool {
        !self.controls.is_empty() && self.controls.iter().all(|c| c.is_type("hidden"))
    }

    /// How its value is read and written.
    pub fn kind(&self) -> Kind {
        kind_of(&self.controls)
    }

    /// Whether `fill` may write it: not when its controls are all
    /// `readOnly` (a value the page set for the form to submit, such as a
    /// price or an account, that a person cannot edit either). It is read
    /// and shown in changes all the same.
    pub fn is_fillable(&self) -> bool {
        !self.controls.iter().all(|c| c.read_only) && !self.is_hidden()
    }
}

/// How a field's value is read and written, decided by its controls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// One checkbox (after hidden inputs of its name too, as Rails writes
    /// a box that submits `0` unchecked): `true` / `false`.
    Checkbox,
    /// Several checkboxes sharing a name: the checked boxes' values, an
    /// array (what the form submits).
    CheckboxGroup,
    /// The checked radio's value.
    Radio,
    /// The selected option's value.
    Select,
    /// The selected options' values, an array.
    SelectMultiple,
    /// `number` and `range` inputs: a JSON number.
    Number,
    /// Several inputs sharing a name that are no checkboxes, radios or
    /// selects (`to[]`): each one's value, an array of strings.
    TextList,
    /// Any other control: its value, a string.
    Text,
}

fn kind_of(controls: &[Control]) -> Kind {
    let Some(first) = controls.first() else {
        return Kind::Text;
    };
    let is = |t: &str| first.is_type(t);
    let boxes = controls.iter().filter(|c| c.is_type("checkbox")).count();
    let hidden = controls.iter().filter(|c| c.is_type("hidden")).count();
    if first.select {
        if first.multiple {
            Kind::SelectMultiple
        } else {
            Kind::Select
        }
    } else if boxes == 1 && boxes + hidden == controls.len() {
        Kind::Checkbox
    } else if boxes == controls.len() {
        Kind::CheckboxGroup
    } else if is("radio") {
        Kind::Radio
    } else if controls.len() > 1
        && !controls
            .iter()
            .any(|c| c.select || c.is_type("checkbox") || c.is_type("radio"))
    {
        Kind::TextList
    } else if is("number") || is("range") {
        Kind::Number
    } else {
        Kind::Text
    }
}

/// Adds one of the form's field controls, in document order, to the
/// fields: the controls sharing a name are one field, placed at its first
/// control.
pub fn add_control(fields: &mut Vec<Field>, name: String, control: Control) {
    match fields.iter_mut().find(|f| f.name == name) {
        Some(field) => field.controls.push(control),
        None => fields.push(Field {
            name,
            controls: vec![control],
            value: None,
            default: None,
        }),
    }
}

/// Each field's value now and as the page loaded, from its controls.
/// `number` is JS's `Number(text)`, for the numeric fields' text.
pub fn read_values(fields: &mut [Field], number: impl Fn(&str) -> f64) {
    for field in fields {
        let kind = field.kind();
        field.value = read(kind, &field.controls, false, &number);
        field.default = read(kind, &field.controls, true, &number);
    }
}

/// A field's value now (`initial`: as the page loaded); `None` for no
/// value (an empty text, no radio checked, no option selected).
fn read(
    kind: Kind,
    controls: &[Control],
    initial: bool,
    number: impl Fn(&str) -> f64,
) -> Option<Value> {
    let first = controls.first()?;
    let raw = match kind {
        Kind::Checkbox => {
            let checkbox = controls.iter().find(|c| c.is_type("checkbox"))?;
            return Some(Value::Bool(checkbox.is_checked(initial)));
        }
        Kind::CheckboxGroup => {
            let mut checked = Vec::new();
            for control in controls.iter().filter(|c| c.is_checked(initial)) {
                checked.push(Value::String(control.value.clone()));
            }
            return Some(Value::Array(checked));
        }
        Kind::TextList => {
            let mut values = Vec::new();
            for control in controls {
                values.push(Value::String(control.value_at(initial).clone()));
            }
            return Some(Value::Array(values));
        }
        Kind::Radio => {
            let checked = controls.iter().find(|c| c.is_checked(initial))?;
            return Some(Value::String(checked.value.clone()));
        }
        Kind::SelectMultiple => {
            let mut chosen = Vec::new();
            for option in &first.options {
                if option.is_selected(initial) {
                    chosen.push(Value::String(option.value.clone()));
                }
            }
            return Some(Value::Array(chosen));
        }
        // A single select's value now is its own `value`; as loaded, what
        // the browser selected then: the last option selected by default,
        // else the first (a placeholder `""` is no value, as now).
        Kind::Select if initial => {
            let options = &first.options;
            let chosen = options.iter().rev().find(|o| o.default_selected);
            &chosen.or(options.first())?.value
        }
        _ => first.value_at(initial),
    };
    if raw.is_empty() {
        None
    } else if kind == Kind::Number {
        Some(number_value(number(raw)))
    } else {
        Some(Value::String(raw.clone()))
    }
}

/// A JS number as JSON, as `JSON.stringify` writes it: whole numbers as
/// integers, NaN and infinities as `null`.
pub fn number_value(n: f64) -> Value {
    const SAFE: f64 = 9_007_199_254_740_991.0;
    // Within ±SAFE the cast is exact for whole numbers: a round trip that
    // gives `n` back says `n` is whole (NaN never compares equal).
    #[allow(clippy::cast_possible_truncation, clippy::cast_precision_loss)]
    let (whole, back) = (n as i64, n as i64 as f64);
    if (-SAFE..=SAFE).contains(&n) && back == n {
        return Value::from(whole);
    }
    serde_json::Number::from_f64(n).map_or(Value::Null, Value::Number)
}

/// A value a tool writes to a field, as JS converts it (the driver reads
/// these off the JS value).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Wanted {
    /// `Boolean(v)`.
    pub truthy: bool,
    /// `v` is `undefined` or `null`.
    pub nullish: bool,
    /// `String(v)`.
    pub text: String,
    /// `String(item)` of each item, when `v` is an array.
    pub items: Option<Vec<String>>,
}

/// One thing the driver does to write a field, on the control at
/// [`Control::element`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// `control.value = text`.
    Value(usize, String),
    /// `control.checked = on`.
    Checked(usize, bool),
    /// `control.click()`, which makes a checkbox or a radio `on` and fires
    /// its events as a person's click does (a framework such as React
    /// hears a checkbox's change only from its `click`); where the control
    /// has no `click`, `checked = on` and its events.
    Click(usize, bool),
    /// `control.options[option].selected = on`.
    Selected(usize, usize, bool),
    /// `input`, then `change`, bubbling, as a person's edit fires them.
    Events(usize),
}

/// What writing `wanted` to a field of `kind` does to its controls (as
/// read just before: a listener of an earlier write may have changed
/// them), in order: a checkbox is checked when the value is truthy; the
/// radio whose value is `String(v)` is checked and the others unchecked;
/// a multiple select's options whose value is one of the items (or
/// `String(v)`, not an array) are selected, the others not; any other
/// control's value becomes `String(v)` (`""` for `undefined` or `null`).
/// Only what differs is written, and only a control a person's edit would
/// have changed fires its events after, as that edit does: none for a
/// value written again; a checkbox or radio changes by a click (a radio
/// clicked unchecks the others itself), and in a radio group where no
/// radio is wanted each one checked is unchecked with its events.
pub fn write(kind: Kind, controls: &[Control], wanted: &Wanted) -> Vec<Step> {
    let Some(first) = controls.first() else {
        return Vec::new();
    };
    let mut steps = Vec::new();
    let items = match &wanted.items {
        Some(items) => items.as_slice(),
        None => core::slice::from_ref(&wanted.text),
    };
    let changed = match kind {
        Kind::Checkbox => {
            if let Some(checkbox) = controls.iter().find(|c| c.is_type("checkbox")) {
                if checkbox.checked != wanted.truthy {
                    steps.push(Step::Click(checkbox.element, wanted.truthy));
                }
            }
            return steps;
        }
        Kind::CheckboxGroup => {
            for control in controls {
                let on = !wanted.nullish && items.contains(&control.value);
                if control.checked != on {
                    steps.push(Step::Click(control.element, on));
                }
            }
            return steps;
        }
        // The items in order, one per input; the inputs past them emptied.
        Kind::TextList => {
            let items = if wanted.nullish { &[] } else { items };
            for (at, control) in controls.iter().enumerate() {
                let text = items.get(at).map_or("", String::as_str);
                if control.value != text {
                    steps.push(Step::Value(control.element, text.into()));
                    steps.push(Step::Events(control.element));
                }
            }
            return steps;
        }
        Kind::Radio => {
            match controls.iter().find(|c| c.value == wanted.text) {
                Some(wanted) if !wanted.checked => steps.push(Step::Click(wanted.element, true)),
                Some(_) => {}
                None => {
                    for control in controls.iter().filter(|c| c.checked) {
                        steps.push(Step::Checked(control.element, false));
                        steps.push(Step::Events(control.element));
                    }
                }
            }
            return steps;
        }
        Kind::SelectMultiple => {
            for (at, option) in first.options.iter().enumerate() {
                let on = items.contains(&option.value);
                if option.selected != on {
                    steps.push(Step::Selected(first.element, at, on));
                }
            }
            !steps.is_empty()
        }
        _ => {
            let text = if wanted.nullish { "" } else { &wanted.text };
            first.value != text
        }
    };
    if changed {
        match kind {
            Kind::SelectMultiple => {}
            _ if wanted.nullish => steps.push(Step::Value(first.element, String::new())),
            _ => steps.push(Step::Value(first.element, wanted.text.clone())),
        }
        steps.push(Step::Events(first.element));
    }
    steps
}

/// Whether a field holds `wanted` once written (its controls read again):
/// nothing is left to write. A value the browser sanitized (a `date` in
/// another format is `""`, a `range` is clamped) or the page refused (a
/// click prevented, a value put back) was not taken.
pub fn took(kind: Kind, controls: &[Control], wanted: &Wanted) -> bool {
    write(kind, controls, wanted).is_empty()
}

/// Why a field is not in `fill`'s `filled`.
pub const NOT_TAKEN: &str = "The field did not take this value: the browser or the page changed it";

/// What `fill` answers: `{ filled }`, the fields that hold what was
/// written, in the input's order, and, when some did not take their value
/// ([`took`]), `invalid: [{ path, message }]` for those.
pub fn fill_answer(filled: Vec<String>, not_taken: Vec<String>) -> Value {
    let mut answer = Map::new();
    answer.insert("filled".into(), filled.into());
    put_invalid(
        &mut answer,
        not_taken.into_iter().map(|path| (path, NOT_TAKEN)),
    );
    Value::Object(answer)
}

/// `object[key] = value`.
fn set(object: &mut Map<String, Value>, key: &str, value: Value) {
    object.insert(key.into(), value);
}

/// `{ "type": name }`.
fn typed(name: &str) -> Map<String, Value> {
    let mut schema = Map::new();
    set(&mut schema, "type", name.into());
    schema
}

/// The fill tool's schema of one field: a boolean, a number, a string (at
/// least one character when a control is `required`: the page's own
/// constraint, said in the schema the agent reads), or one of the listed
/// radio or option values (an array of them for a multiple select).
fn schema_of(field: &Field) -> Map<String, Value> {
    let mut listed = Vec::new();
    match field.kind() {
        Kind::Checkbox => return typed("boolean"),
        Kind::Number => return typed("number"),
        Kind::TextList => {
            let mut array = typed("array");
            set(&mut array, "items", Value::Object(typed("string")));
            set(&mut array, "maxItems", field.controls.len().into());
            return array;
        }
        Kind::Text => {
            let mut schema = typed("string");
            if field.controls.iter().any(|c| c.required) {
                set(&mut schema, "minLength", 1.into());
            }
            return schema;
        }
        Kind::Radio | Kind::CheckboxGroup => {
            for control in &field.controls {
                listed.push(control.value.clone().into());
            }
        }
        Kind::Select | Kind::SelectMultiple => {
            for option in field.controls.iter().take(1).flat_map(|c| &c.options) {
                listed.push(option.value.clone().into());
            }
        }
    }
    let mut listed_schema = Map::new();
    set(&mut listed_schema, "enum", Value::Array(listed));
    if matches!(field.kind(), Kind::SelectMultiple | Kind::CheckboxGroup) {
        let mut array = typed("array");
        set(&mut array, "items", Value::Object(listed_schema));
        return array;
    }
    listed_schema
}

/// What the form is called in its tools' texts: the `title` option (when
/// truthy), else the first of the form's `aria-label`, `name` and `id`
/// that is not empty, else the scope's name (when present), else `"the"`
/// ("Fill the form").
pub fn label<'a>(title: Option<&'a str>, names: &[&'a str], scope: Option<&'a str>) -> &'a str {
    if let Some(title) = title {
        return title;
    }
    for name in names {
        if !name.is_empty() {
            return name;
        }
    }
    scope.unwrap_or("the")
}

/// The parts, joined.
fn phrase(parts: &[&str]) -> String {
    let mut text = String::new();
    for part in parts {
        text.push_str(part);
    }
    text
}

/// What follows the label to name the form: " form", unless the label
/// says it already ("Sign-up form", "form"), so no text reads "form form".
fn form_noun(label: &str) -> &'static str {
    let names_it = label
        .len()
        .checked_sub(4)
        .and_then(|at| label.as_bytes().split_at_checked(at))
        .is_some_and(|(head, end)| {
            end.eq_ignore_ascii_case(b"form") && (head.is_empty() || head.ends_with(b" "))
        });
    if names_it {
        ""
    } else {
        " form"
    }
}

/// The submit tool's summary for the confirmation.
pub fn summary(label: &str) -> String {
    phrase(&["Submit the ", label, form_noun(label)])
}

/// Each tool: its name, its title's verb, its description around the
/// form's name (the label and [`form_noun`]), its hints.
const TOOLS: [(&str, &str, [&str; 2], &[&str]); 3] = [
    (
        "fill",
        "Fill ",
        [
            "Fill fields of the ",
            ". Input: an object of field name to value; fields left out keep their value.",
        ],
        &[],
    ),
    (
        "read",
        "Read ",
        [
            "Read the current values of the ",
            " (sensitive fields are redacted).",
        ],
        &["readOnly", "untrustedContent"],
    ),
    (
        "submit",
        "Submit ",
        [
            "Submit the ",
            " as it is filled now. A human confirms first.",
        ],
        &["consequential"],
    ),
];

/// The definitions of the form's `fill`, `read` and `submit` tools, without
/// their functions (the driver's): names, texts, hints, input schemas
/// (fill's: an object of the fields, none other; the others: no input, as
/// `{ type: 'object', properties: {}, additionalProperties: false }`), and
/// submit's `sensitive` paths.
pub fn tools(label: &str, fields: &[Field], sensitive: Vec<String>) -> [Value; 3] {
    let mut properties = Map::new();
    for field in fields.iter().filter(|f| f.is_fillable()) {
        set(
            &mut properties,
            &field.name,
            Value::Object(schema_of(field)),
        );
    }
    let mut tools: [Value; 3] = Default::default();
    for (tool, (name, verb, [before, after], hints)) in tools.iter_mut().zip(TOOLS) {
        let mut flags = Map::new();
        for hint in hints {
            set(&mut flags, hint, true.into());
        }
        let mut input = typed("object");
        // The fields are fill's, the first; the others take no input.
        let properties = core::mem::take(&mut properties);
        set(&mut input, "properties", Value::Object(properties));
        set(&mut input, "additionalProperties", false.into());
        let mut definition = Map::new();
        set(&mut definition, "name", name.into());
        let noun = form_noun(label);
        let title = phrase(&[verb, label, noun]);
        set(&mut definition, "title", title.into());
        let description = phrase(&[before, label, noun, after]);
        set(&mut definition, "description", description.into());
        set(&mut definition, "hints", Value::Object(flags));
        set(&mut definition, "inputSchema", Value::Object(input));
        *tool = Value::Object(definition);
    }
    if let Value::Object(submit) = &mut tools[2] {
        set(submit, "sensitive", sensitive.into());
    }
    tools
}

/// The fields whose controls fail the page's constraints: for each field,
/// its first control that `invalid` gives a message for (the driver's
/// `checkValidity()`, false, and the control's `validationMessage`), as an
/// issue at the field's name. Controls after a failing one are not asked.
pub fn invalid_fields(
    fields: &[Field],
    mut invalid: impl FnMut(&Control) -> Option<String>,
) -> Vec<Issue> {
    let mut issues = Vec::new();
    for field in fields {
        if let Some(message) = field.controls.iter().find_map(&mut invalid) {
            issues.push(Issue {
                path: field.name.clone(),
                message,
            });
        }
    }
    issues
}

/// Why a form without invalid fields was not submitted: out of the
/// document, or invalid by a control without a name, its `requestSubmit()`
/// would fire no `submit` event.
pub const NOT_SUBMITTED: &str = "The browser did not submit the form: it is not in the document, or a control without a name fails its constraints";

/// Whether `submit` calls `requestSubmit()`: no field at fault, and the
/// form in the document (`isConnected`) and valid (`checkValidity()`, an
/// unnamed control too), else `requestSubmit()` would fire no `submit`
/// event and the person is shown what is wrong instead.
pub fn submits(invalid: &[Issue], connected: bool, valid: bool) -> bool {
    invalid.is_empty() && connected && valid
}

/// What `submit` answers: `{ submitted: true }` once the form is
/// submitted (`dispatched`: its `submit` event fires), or, for a form
/// failing its constraints ([`invalid_fields`]), `{ submitted: false,
/// invalid: [{ path, message }] }`: nothing was submitted, and the agent
/// is told which fields are at fault (a thrown error would reach it as a
/// bare "Tool failed"); with no field at fault and no `submit` event,
/// `{ submitted: false, reason }` ([`NOT_SUBMITTED`]).
pub fn submit_answer(invalid: &[Issue], dispatched: bool) -> Value {
    let mut answer = Map::new();
    let submitted = invalid.is_empty() && dispatched;
    answer.insert("submitted".into(), Value::Bool(submitted));
    if invalid.is_empty() && !dispatched {
        answer.insert("reason".into(), NOT_SUBMITTED.into());
    }
    put_invalid(
        &mut answer,
        invalid.iter().map(|i| (i.path.clone(), i.message.as_str())),
    );
    Value::Object(answer)
}

/// `answer.invalid = [{ path, message }]`, when there are any. Built as
/// values (as `protocol::manifest` builds entries): `serde_json::to_value`
/// of `Issue`s, their derived serializer, makes forms.wasm 0.4 KB gzip
/// larger.
fn put_invalid<'a>(
    answer: &mut Map<String, Value>,
    issues: impl Iterator<Item = (String, &'a str)>,
) {
    let mut list = Vec::new();
    for (path, message) in issues {
        let mut entry = Map::new();
        entry.insert("path".into(), path.into());
        entry.insert("message".into(), message.into());
        list.push(Value::Object(entry));
    }
    if !list.is_empty() {
        answer.insert("invalid".into(), Value::Array(list));
    }
}

/// `path` is `base` or below it (`base.x`, `base.0.y`).
fn at_or_below(path: &str, base: &str) -> bool {
    path == base
        || path
            .strip_prefix(base)
            .is_some_and(|rest| rest.starts_with('.'))
}

fn child_path(parent: &str, key: &str) -> String {
    if parent.is_empty() {
        key.to_owned()
    } else {
        format!("{parent}.{key}")
    }
}

/// Whether `path` is one of `sensitive` or below one.
pub fn is_sensitive_path<S: AsRef<str>>(path: &str, sensitive: &[S]) -> bool {
    sensitive.iter().any(|s| at_or_below(path, s.as_ref()))
}

/// Redacts `value`, which sits at `path`: all of it when `path` is
/// sensitive, else each member whose path is (recursing only along the
/// sensitive paths that go deeper).
pub fn redact_value<S: AsRef<str>>(path: &str, value: &mut Value, sensitive: &[S]) {
    if is_sensitive_path(path, sensitive) {
        *value = Value::String(REDACTED.into());
        return;
    }
    let deeper = |child: &str| {
        sensitive.iter().any(|s| {
            s.as_ref()
                .strip_prefix(child)
                .is_some_and(|rest| rest.starts_with('.'))
        })
    };
    let visit = |child: String, member: &mut Value| {
        if is_sensitive_path(&child, sensitive) {
            *member = Value::String(REDACTED.into());
        } else if deeper(&child) {
            redact_value(&child, member, sensitive);
        }
    };
    match value {
        Value::Object(members) => {
            for (key, member) in members.iter_mut() {
                visit(child_path(path, key), member);
            }
        }
        Value::Array(items) => {
            for (index, item) in items.iter_mut().enumerate() {
                visit(child_path(path, &index.to_string()), item);
            }
        }
        _ => {}
    }
}

/// FieldChange redaction against a list of sensitive paths (see the
/// module docs): whole values at or below a sensitive path, members inside
/// a value above one.
pub fn redact_changes<S: AsRef<str>>(
    mut changes: Vec<FieldChange>,
    sensitive: &[S],
) -> Vec<FieldChange> {
    for change in &mut changes {
        for value in [&mut change.before, &mut change.after]
            .into_iter()
            .flatten()
        {
            redact_value(&change.path, value, sensitive);
        }
    }
    changes
}

/// Values compared as their `JSON.stringify`s would be: numbers
/// by value (`1` and `1.0` are one JS number), objects in key order.
fn same_json(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x == y || x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same_json(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y)
                    .all(|((kx, vx), (ky, vy))| kx == ky && same_json(vx, vy))
        }
        _ => a == b,
    }
}

fn same_value(a: &Option<Value>, b: &Option<Value>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(a), Some(b)) => same_json(a, b),
        _ => false,
    }
}

/// The field `fill`'s input key names; a key naming none is not written
/// (and not reported filled).
pub fn field_named<'a>(fields: &'a mut [Field], key: &str) -> Option<&'a mut Field> {
    fields.iter_mut().find(|field| field.name == key)
}

/// What `fill`'s snapshot keeps: the fields its input names (`keys`), in
/// the form's order, so that its undo writes back what the fill wrote and
/// leaves alone what a person typed elsewhere since.
pub fn filled<'a>(fields: &'a [Field], keys: &'a [String]) -> impl Iterator<Item = &'a Field> {
    fields
        .iter()
        .filter(move |field| keys.contains(&field.name))
}

/// `fill`'s undo: the value `field` had when `fill`'s snapshot was taken
/// (`before`, by name), to write back; none for a field the fill did not
/// write, or one added since, which undo leaves as it is.
pub fn value_before<'a, T>(before: &'a [(String, T)], field: &Field) -> Option<&'a T> {
    before
        .iter()
        .find(|(name, _)| *name == field.name)
        .map(|(_, value)| value)
}

/// The sensitivity memory of one form. See the module docs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FormPolicy {
    declared: Vec<String>,
    /// The fields seen sensitive, sorted (a `Vec`: smaller code than a
    /// `BTreeSet` in the module, and forms are small).
    ever: Vec<String>,
}

impl FormPolicy {
    /// `declared`: the app's `sensitive` paths.
    pub fn new(declared: Vec<String>) -> Self {
        FormPolicy {
            declared,
            ever: Vec::new(),
        }
    }

    /// Remembers every field that is sensitive now.
    pub fn observe(&mut self, fields: &[Field]) {
        for field in fields {
            if field.is_sensitive_now() {
                self.remember(&field.name);
            }
        }
    }

    /// `name` among the fields seen sensitive (kept sorted, once each).
    fn remember(&mut self, name: &str) {
        if let Err(at) = self.ever.binary_search_by(|known| known.as_str().cmp(name)) {
            self.ever.insert(at, name.into());
        }
    }

    /// Remembers a control seen sensitive outside the fields read: one
    /// added to or removed from the form, with its `type` and
    /// `autocomplete`. A control without a name is no field.
    pub fn observe_control(&mut self, name: &str, input_type: &str, autocomplete: &str) {
        if !name.is_empty() && Control::new(input_type, autocomplete).is_sensitive() {
            self.remember(name);
        }
    }

    /// Remembers a control whose `type` or `autocomplete` attribute
    /// (`attribute`) changed from `old`, if that made it sensitive: a
    /// password shown as text stays sensitive. Other attributes say nothing.
    pub fn observe_change(&mut self, name: &str, attribute: &str, old: &str) {
        match attribute {
            "type" => self.observe_control(name, old, ""),
            "autocomplete" => self.observe_control(name, "", old),
            _ => {}
        }
    }

    /// Every sensitive path so far: the declared ones, then the fields seen
    /// sensitive, in name order (without repeating a declared one).
    pub fn known_sensitive(&self) -> Vec<String> {
        let mut paths = self.declared.clone();
        for name in &self.ever {
            if !paths.contains(name) {
                paths.push(name.clone());
            }
        }
        paths
    }

    /// The registry's `sensitive` list for the submit tool, decided now.
    pub fn sensitive_paths(&mut self, fields: &[Field]) -> Vec<String> {
        self.observe(fields);
        self.known_sensitive()
    }

    /// `read`'s result: every field's current value (fields without one
    /// left out, as JSON drops `undefined`), sensitive ones redacted.
    pub fn read(&mut self, fields: &[Field]) -> Map<String, Value> {
        self.observe(fields);
        let sensitive = self.known_sensitive();
        let mut values = Map::new();
        for field in fields {
            if let Some(value) = &field.value {
                let mut value = value.clone();
                redact_value(&field.name, &mut value, &sensitive);
                values.insert(field.name.clone(), value);
            }
        }
        values
    }

    /// `submit`'s changes: each field whose value differs from its default,
    /// `before` the default and `after` the current value, redacted.
    pub fn changes(&mut self, fields: &[Field]) -> Vec<FieldChange> {
        self.observe(fields);
        let changes = fields
            .iter()
            .filter(|f| !same_value(&f.default, &f.value))
            .map(|f| FieldChange {
                path: f.name.clone(),
                before: f.default.clone(),
                after: f.value.clone(),
            })
            .collect();
        self.redact_changes(changes)
    }

    /// Redacts any changes against this form's sensitive paths so far.
    pub fn redact_changes(&self, changes: Vec<FieldChange>) -> Vec<FieldChange> {
        redact_changes(changes, &self.known_sensitive())
    }
}

/// Domain separation for [`form_state`].
const STATE_CONTEXT: &[u8] = b"toolmark form state v1\0";

fn put(hasher: &mut Sha256, bytes: &[u8]) {
    hasher.update((bytes.len() as u64).to_le_bytes());
    hasher.update(bytes);
}

/// The form state for the stale-form rule: the hex SHA-256 of `key` and
/// every field's name and value in order, then each of its controls'
/// `value`, `checked` and options' `selected` (a field's value reads one
/// control of several: a second `to[]` input, a box of a checkbox group
/// or the checkbox after a hidden input of the same name would otherwise
/// change unseen), each length-prefixed (an absent value is distinct from
/// `null` and from `""`), so two states share a digest only if they are
/// the same state. Equal digests at request and at approval: unchanged.
/// `key` is the driver's per-form secret, so a digest cannot be used to
/// test guesses of a password.
pub fn form_state(fields: &[Field], key: &[u8]) -> String {
    let mut hasher = Sha256::new();
    hasher.update(STATE_CONTEXT);
    put(&mut hasher, key);
    hasher.update((fields.len() as u64).to_le_bytes());
    for field in fields {
        put(&mut hasher, field.name.as_bytes());
        match &field.value {
            None => hasher.update([0u8]),
            Some(value) => {
                hasher.update([1u8]);
                put(
                    &mut hasher,
                    serde_json::to_string(value).unwrap_or_default().as_bytes(),
                );
            }
        }
        hasher.update((field.controls.len() as u64).to_le_bytes());
        for control in &field.controls {
            put(&mut hasher, control.value.as_bytes());
            hasher.update([u8::from(control.checked)]);
            hasher.update((control.options.len() as u64).to_le_bytes());
            for option in &control.options {
                hasher.update([u8::from(option.selected)]);
            }
        }
    }
    let digest = hasher.finalize();
    let mut hex = String::with_capacity(64);
    for byte in digest {
        for nibble in [byte >> 4, byte & 0xF] {
            hex.push(char::from_digit(u32::from(nibble), 16).unwrap_or('0'));
        }
    }
    hex
}

/// What `formTools(form, options)` was given, by JS type: the form's
/// `elements` and `requestSubmit`, `options.scope`'s `register`, and
/// `options.sensitive` (its entries each as `String(entry)`).
pub struct Arguments {
    pub elements: Given,
    pub request_submit: Given,
    pub register: Given,
    pub sensitive: Given,
    pub sensitive_paths: GivenList<String>,
}

/// `formTools`' argument rules, in order: the form's declared sensitive
/// paths (none when `sensitive` is `undefined` or `null`), or the refusal
/// (thrown as `invalid_argument`).
pub fn arguments(given: Arguments) -> Result<Vec<String>, &'static str> {
    if !matches!(
        (&given.elements, &given.request_submit),
        (Given::Object, Given::Function)
    ) {
        return Err("formTools: form must be an HTMLFormElement");
    }
    if !matches!(given.register, Given::Function) {
        return Err("formTools: options.scope must be a scope (tm.scope('name'))");
    }
    if given.sensitive.is_absent() {
        return Ok(Vec::new());
    }
    match given.sensitive_paths {
        GivenList::Items(paths) => Ok(paths),
        GivenList::Undefined | GivenList::NotList => {
            Err("formTools: options.sensitive must be an array of paths")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn field(name: &str, input_type: &str, autocomplete: &str, value: Option<Value>) -> Field {
        Field {
            name: name.into(),
            controls: vec![Control::new(input_type, autocomplete)],
            value,
            default: None,
        }
    }

    fn text(name: &str, value: &str) -> Field {
        field(name, "text", "", Some(json!(value)))
    }

    #[test]
    fn passwords_and_cc_tokens_are_sensitive() {
        for (t, a) in [
            ("password", ""),
            ("PASSWORD", ""),
            ("text", "cc-number"),
            ("text", "CC-Exp"),
            ("text", "shipping cc-name"),
            ("text", "section-pay\tbilling cc-csc"),
            ("tel", "cc-"),
        ] {
            assert!(Control::new(t, a).is_sensitive(), "{t} {a}");
        }
        for (t, a) in [
            ("text", ""),
            ("email", "email"),
            ("text", "nocc-number"),
            ("text", "c-number"),
            ("text", "shipping"),
            ("text", "section-cc-x"),
        ] {
            assert!(!Control::new(t, a).is_sensitive(), "{t} {a}");
        }
        let group = Field {
            name: "g".into(),
            controls: vec![Control::new("text", ""), Control::new("password", "")],
            value: None,
            default: None,
        };
        assert!(group.is_sensitive_now());
    }

    #[test]
    fn buttons_files_unnamed_and_disabled_controls_are_no_fields() {
        assert!(is_field_control("INPUT", "email", false, "email"));
        assert!(is_field_control("select", "plan", false, "select-one"));
        assert!(is_field_control("TEXTAREA", "notes", false, "textarea"));
        assert!(is_field_control("input", "notes", false, ""));
        assert!(!is_field_control("input", "", false, "text"));
        assert!(!is_field_control("input", "email", true, "email"));
        for t in ["submit", "button", "reset", "image", "file", "FILE"] {
            assert!(!is_field_control("input", "x", false, t), "{t}");
        }
        for tag in ["BUTTON", "FIELDSET", "OUTPUT", "OBJECT", ""] {
            assert!(!is_field_control(tag, "x", false, "text"), "{tag}");
        }
    }

    /// The `at`th control of the form, of type `input_type`.
    fn ctl(input_type: &str, at: usize) -> Control {
        Control {
            input_type: input_type.into(),
            element: at,
            ..Control::default()
        }
    }

    /// A select with these options: (value, selected, defaultSelected).
    fn select(multiple: bool, options: &[(&str, bool, bool)], at: usize) -> Control {
        Control {
            select: true,
            multiple,
            options: options
                .iter()
                .map(|&(value, selected, default_selected)| Choice {
                    value: value.into(),
                    selected,
                    default_selected,
                })
                .collect(),
            ..ctl(
                if multiple {
                    "select-multiple"
                } else {
                    "select-one"
                },
                at,
            )
        }
    }

    fn with(control: Control, f: impl FnOnce(&mut Control)) -> Control {
        let mut control = control;
        f(&mut control);
        control
    }

    #[test]
    fn fill_writes_the_field_a_key_names_and_undo_writes_back_only_those() {
        let mut fields = vec![
            field("email", "email", "", None),
            field("plan", "text", "", None),
            field("note", "text", "", None),
        ];
        assert_eq!(
            field_named(&mut fields, "plan").map(|f| f.name.as_str()),
            Some("plan")
        );
        assert!(field_named(&mut fields, "nope").is_none());
        assert!(field_named(&mut fields, "").is_none());
        assert!(
            field_named(&mut fields, "Plan").is_none(),
            "names are exact"
        );
        let keys = [
            String::from("plan"),
            String::from("nope"),
            String::from("email"),
        ];
        let kept: Vec<&str> = filled(&fields, &keys).map(|f| f.name.as_str()).collect();
        assert_eq!(kept, ["email", "plan"], "the fields named, in form order");
        let before = [(String::from("plan"), 1), (String::from("email"), 2)];
        let values: Vec<_> = fields.iter().map(|f| value_before(&before, f)).collect();
        // `note` was not filled (or was added since): left as it is.
        assert_eq!(values, [Some(&2), Some(&1), None]);
    }

    #[test]
    fn a_control_seen_sensitive_added_removed_or_before_a_change_stays_sensitive() {
        let mut policy = FormPolicy::new(vec![]);
        policy.observe_control("pin", "password", "");
        policy.observe_control("card", "text", "cc-number");
        policy.observe_control("", "password", "");
        policy.observe_control("email", "email", "email");
        assert_eq!(policy.known_sensitive(), ["card", "pin"]);

        let mut policy = FormPolicy::new(vec![]);
        policy.observe_change("secret", "type", "password");
        policy.observe_change("exp", "autocomplete", "billing cc-exp");
        policy.observe_change("plain", "type", "text");
        policy.observe_change("odd", "class", "password");
        policy.observe_change("", "type", "password");
        assert_eq!(policy.known_sensitive(), ["exp", "secret"]);
    }

    /// The fields of these controls, with a `Number(text)` that agrees with JS's on the texts
    /// used here.
    fn named(controls: Vec<(&str, Control)>) -> Vec<Field> {
        let mut fields = Vec::new();
        for (name, control) in controls {
            add_control(&mut fields, name.into(), control);
        }
        read_values(&mut fields, |text| text.parse().unwrap_or(f64::NAN));
        fields
    }

    /// The fields of controls of these names and types, in this order.
    fn form_of(controls: &[(&str, &str)]) -> Vec<Field> {
        let mut list = Vec::new();
        for (at, (name, input_type)) in controls.iter().enumerate() {
            list.push((*name, ctl(input_type, at)));
        }
        named(list)
    }

    fn one(control: Control) -> Field {
        named(vec![("f", control)]).remove(0)
    }

    #[test]
    fn the_kind_follows_the_controls() {
        let kind = |controls: Vec<Control>| {
            named(controls.into_iter().map(|c| ("f", c)).collect())
                .remove(0)
                .kind()
        };
        assert_eq!(kind(vec![ctl("checkbox", 0)]), Kind::Checkbox);
        assert_eq!(kind(vec![ctl("CheckBox", 0)]), Kind::Checkbox);
        // Several checkboxes of one name: a group; one after hidden inputs
        // of its name (Rails): a checkbox; mixed with a text input: text.
        assert_eq!(
            kind(vec![ctl("checkbox", 0), ctl("checkbox", 1)]),
            Kind::CheckboxGroup
        );
        assert_eq!(
            kind(vec![ctl("hidden", 0), ctl("checkbox", 1)]),
            Kind::Checkbox
        );
        assert_eq!(kind(vec![ctl("text", 0), ctl("checkbox", 1)]), Kind::Text);
        // Several inputs of one name, none a box, radio or select: a list.
        assert_eq!(kind(vec![ctl("email", 0), ctl("email", 1)]), Kind::TextList);
        assert_eq!(kind(vec![ctl("text", 0)]), Kind::Text);
        assert_eq!(kind(vec![ctl("radio", 0), ctl("radio", 1)]), Kind::Radio);
        assert_eq!(kind(vec![ctl("RADIO", 0), ctl("text", 1)]), Kind::Radio);
        assert_eq!(kind(vec![ctl("text", 0), ctl("radio", 1)]), Kind::Text);
        assert_eq!(kind(vec![select(false, &[], 0)]), Kind::Select);
        assert_eq!(kind(vec![select(true, &[], 0)]), Kind::SelectMultiple);
        // A select is one by its tag, whatever its `type` says.
        assert_eq!(
            kind(vec![
                with(select(false, &[], 0), |c| c.input_type = "number".into())
            ]),
            Kind::Select
        );
        for t in ["number", "range", "Number"] {
            assert_eq!(kind(vec![ctl(t, 0)]), Kind::Number, "{t}");
        }
        for t in ["text", "email", "textarea", "password", "date", ""] {
            assert_eq!(kind(vec![ctl(t, 0)]), Kind::Text, "{t}");
        }
        let empty = Field {
            name: "f".into(),
            controls: Vec::new(),
            value: None,
            default: None,
        };
        assert_eq!(empty.kind(), Kind::Text);
    }

    #[test]
    fn fields_are_the_controls_grouped_by_name_in_document_order() {
        let fields = form_of(&[
            ("size", "radio"),
            ("email", "email"),
            ("size", "radio"),
            ("notes", "textarea"),
            ("size", "radio"),
        ]);
        let shape: Vec<(&str, Vec<usize>)> = fields
            .iter()
            .map(|f| {
                let at = f.controls.iter().map(|c| c.element).collect();
                (f.name.as_str(), at)
            })
            .collect();
        assert_eq!(
            shape,
            [
                ("size", vec![0, 2, 4]),
                ("email", vec![1]),
                ("notes", vec![3])
            ]
        );
    }

    #[test]
    fn values_are_read_by_kind_now_and_as_the_page_loaded() {
        let values = |field: Field| (field.value, field.default);
        let checkbox = with(ctl("checkbox", 0), |c| c.checked = true);
        assert_eq!(
            values(one(checkbox)),
            (Some(json!(true)), Some(json!(false)))
        );
        let unchecked = with(ctl("checkbox", 0), |c| c.default_checked = true);
        assert_eq!(
            values(one(unchecked)),
            (Some(json!(false)), Some(json!(true)))
        );

        let radio = |value: &str, checked: bool, default_checked: bool| {
            with(ctl("radio", 0), |c| {
                c.value = value.into();
                c.checked = checked;
                c.default_checked = default_checked;
            })
        };
        let size = named(vec![
            ("size", radio("s", false, true)),
            ("size", radio("m", true, false)),
            ("size", radio("l", false, false)),
        ]);
        assert_eq!(
            values(size[0].clone()),
            (Some(json!("m")), Some(json!("s")))
        );
        let none = named(vec![("size", radio("s", false, false))]);
        assert_eq!(values(none[0].clone()), (None, None));

        // A single select's value now is its own `value`; as loaded, the
        // option selected by default, else the first; a placeholder `""`
        // is no value either way.
        let plan = with(
            select(false, &[("free", false, true), ("pro", true, false)], 0),
            |c| c.value = "pro".into(),
        );
        assert_eq!(values(one(plan)), (Some(json!("pro")), Some(json!("free"))));
        let no_default = with(
            select(false, &[("a", true, false), ("b", false, false)], 0),
            |c| c.value = "a".into(),
        );
        assert_eq!(
            values(one(no_default)),
            (Some(json!("a")), Some(json!("a")))
        );
        let last_default = select(false, &[("a", false, true), ("b", true, true)], 0);
        assert_eq!(values(one(last_default)).1, Some(json!("b")));
        let placeholder = select(false, &[("", true, true), ("m", false, false)], 0);
        assert_eq!(values(one(placeholder)), (None, None));
        assert_eq!(values(one(select(false, &[], 0))), (None, None));
        let tags = select(
            true,
            &[("a", true, false), ("b", false, false), ("c", true, true)],
            0,
        );
        assert_eq!(
            values(one(tags)),
            (Some(json!(["a", "c"])), Some(json!(["c"])))
        );
        assert_eq!(
            values(one(select(true, &[("a", false, false)], 0))),
            (Some(json!([])), Some(json!([])))
        );

        let text = with(ctl("text", 0), |c| c.default_value = "x".into());
        assert_eq!(values(one(text)), (None, Some(json!("x"))));
        let number = |value: &str| {
            one(with(ctl("number", 0), |c| {
                c.value = value.into();
                c.default_value = "7".into();
            }))
        };
        assert_eq!(values(number("42")), (Some(json!(42)), Some(json!(7))));
        assert_eq!(number("1.5").value, Some(json!(1.5)));
        assert_eq!(number("").value, None);
        assert_eq!(number("abc").value, Some(Value::Null));
        // Checkboxes sharing a name read as the checked boxes' values,
        // now and as loaded; one after a hidden input as its checkedness.
        let tag = |value: &str, checked: bool, default_checked: bool, at: usize| {
            with(ctl("checkbox", at), |c| {
                c.value = value.into();
                c.checked = checked;
                c.default_checked = default_checked;
            })
        };
        let tags = named(vec![
            ("tags", tag("news", false, true, 0)),
            ("tags", tag("offers", true, false, 1)),
            ("tags", tag("events", true, true, 2)),
        ]);
        assert_eq!(
            values(tags[0].clone()),
            (
                Some(json!(["offers", "events"])),
                Some(json!(["news", "events"]))
            )
        );
        let to = named(vec![
            (
                "to[]",
                with(ctl("email", 0), |c| {
                    c.value = "ann@example.com".into();
                    c.default_value = "ann@example.com".into();
                }),
            ),
            ("to[]", ctl("email", 1)),
        ]);
        assert_eq!(
            values(to[0].clone()),
            (
                Some(json!(["ann@example.com", ""])),
                Some(json!(["ann@example.com", ""]))
            )
        );
        let rails = named(vec![
            ("agree", with(ctl("hidden", 0), |c| c.value = "0".into())),
            ("agree", tag("1", true, false, 1)),
        ]);
        assert_eq!(
            values(rails[0].clone()),
            (Some(json!(true)), Some(json!(false)))
        );
    }

    #[test]
    fn numbers_are_json_as_js_writes_them() {
        assert_eq!(number_value(3.0), json!(3));
        assert!(number_value(3.0).is_i64());
        assert!(number_value(-0.0).is_i64());
        assert_eq!(number_value(-0.0), json!(0));
        assert_eq!(number_value(1.5), json!(1.5));
        assert_eq!(number_value(-2.25), json!(-2.25));
        assert_eq!(number_value(f64::NAN), Value::Null);
        assert_eq!(number_value(f64::INFINITY), Value::Null);
        assert_eq!(number_value(f64::NEG_INFINITY), Value::Null);
        let safe = 9_007_199_254_740_991.0;
        assert!(number_value(safe).is_i64());
        assert!(number_value(-safe).is_i64());
        // Beyond 2^53 - 1 a JS number is no exact integer: a float.
        assert!(number_value(safe + 1.0).is_f64());
        assert!(number_value(1e21).is_f64());
    }

    fn wanted(text: &str) -> Wanted {
        Wanted {
            truthy: !text.is_empty(),
            nullish: false,
            text: text.into(),
            items: None,
        }
    }

    #[test]
    fn a_write_sets_what_js_would_set_then_fires_the_events() {
        let checkbox = [ctl("checkbox", 3)];
        assert_eq!(
            write(Kind::Checkbox, &checkbox, &wanted("yes")),
            [Step::Click(3, true)]
        );
        assert_eq!(write(Kind::Checkbox, &checkbox, &wanted("")), []);
        let ticked = [with(ctl("checkbox", 3), |c| c.checked = true)];
        assert_eq!(
            write(Kind::Checkbox, &ticked, &wanted("")),
            [Step::Click(3, false)]
        );

        let group: Vec<Control> = ["news", "offers", "events"]
            .iter()
            .enumerate()
            .map(|(at, v)| {
                with(ctl("checkbox", at), |c| {
                    c.value = (*v).into();
                    c.checked = *v == "news";
                })
            })
            .collect();
        let items = Wanted {
            items: Some(vec!["offers".into(), "events".into()]),
            ..wanted("offers,events")
        };
        assert_eq!(
            write(Kind::CheckboxGroup, &group, &items),
            [
                Step::Click(0, false),
                Step::Click(1, true),
                Step::Click(2, true)
            ]
        );
        assert_eq!(write(Kind::CheckboxGroup, &group, &wanted("news")), []);
        let nothing = Wanted {
            nullish: true,
            ..wanted("null")
        };
        assert_eq!(
            write(Kind::CheckboxGroup, &group, &nothing),
            [Step::Click(0, false)]
        );
        let to = [
            with(ctl("email", 6), |c| c.value = "ann@example.com".into()),
            with(ctl("email", 7), |c| c.value = "old@example.com".into()),
        ];
        let one_item = Wanted {
            items: Some(vec!["ann@example.com".into()]),
            ..wanted("ann@example.com")
        };
        assert_eq!(
            write(Kind::TextList, &to, &one_item),
            [Step::Value(7, String::new()), Step::Events(7)]
        );
        let two = Wanted {
            items: Some(vec!["bo@example.com".into(), "old@example.com".into()]),
            ..wanted("bo@example.com,old@example.com")
        };
        assert_eq!(
            write(Kind::TextList, &to, &two),
            [Step::Value(6, "bo@example.com".into()), Step::Events(6)]
        );
        let rails = [ctl("hidden", 4), ctl("checkbox", 5)];
        assert_eq!(
            write(Kind::Checkbox, &rails, &wanted("yes")),
            [Step::Click(5, true)]
        );

        let radios: Vec<Control> = ["s", "m", "l"]
            .iter()
            .enumerate()
            .map(|(at, v)| {
                with(ctl("radio", at), |c| {
                    c.value = (*v).into();
                    c.checked = *v == "s";
                })
            })
            .collect();
        // A click on `m`, which unchecks `s` itself.
        assert_eq!(
            write(Kind::Radio, &radios, &wanted("m")),
            [Step::Click(1, true)]
        );
        assert_eq!(write(Kind::Radio, &radios, &wanted("s")), []);
        let nothing = Wanted {
            nullish: true,
            ..wanted("undefined")
        };
        assert_eq!(
            write(Kind::Radio, &radios, &nothing),
            [Step::Checked(0, false), Step::Events(0)]
        );

        let tags = [select(
            true,
            &[("a", false, false), ("b", true, false), ("c", false, false)],
            1,
        )];
        let items = Wanted {
            items: Some(vec!["a".into(), "c".into()]),
            ..wanted("a,c")
        };
        assert_eq!(
            write(Kind::SelectMultiple, &tags, &items),
            [
                Step::Selected(1, 0, true),
                Step::Selected(1, 1, false),
                Step::Selected(1, 2, true),
                Step::Events(1),
            ]
        );
        // Not an array: the one option `String(v)` names.
        assert_eq!(
            write(Kind::SelectMultiple, &tags, &wanted("c")),
            [
                Step::Selected(1, 1, false),
                Step::Selected(1, 2, true),
                Step::Events(1),
            ]
        );
        assert_eq!(write(Kind::SelectMultiple, &tags, &wanted("b")), []);

        for (kind, control) in [
            (Kind::Text, ctl("text", 2)),
            (Kind::Number, ctl("number", 2)),
            (Kind::Select, select(false, &[("pro", false, false)], 2)),
        ] {
            assert_eq!(
                write(kind, core::slice::from_ref(&control), &wanted("pro")),
                [Step::Value(2, "pro".into()), Step::Events(2)]
            );
            let cleared = Wanted {
                nullish: true,
                ..wanted("null")
            };
            let pro = with(control, |c| c.value = "pro".into());
            assert_eq!(
                write(kind, core::slice::from_ref(&pro), &cleared),
                [Step::Value(2, String::new()), Step::Events(2)]
            );
            assert_eq!(write(kind, &[pro], &wanted("pro")), [], "written again");
        }
        assert_eq!(write(Kind::Text, &[], &wanted("x")), []);
    }

    /// A sign-up form of every kind of field.
    fn signup() -> Vec<Field> {
        let radio = |value: &str, at| with(ctl("radio", at), |c| c.value = value.into());
        named(vec![
            ("newsletter", ctl("checkbox", 0)),
            ("age", ctl("number", 1)),
            ("email", with(ctl("email", 2), |c| c.required = true)),
            ("note", ctl("textarea", 3)),
            ("size", radio("s", 4)),
            ("size", with(radio("m", 5), |c| c.required = true)),
            (
                "plan",
                select(false, &[("free", true, true), ("pro", false, false)], 6),
            ),
            (
                "tags",
                select(true, &[("a", false, false), ("b", false, false)], 7),
            ),
        ])
    }

    #[test]
    fn the_fill_schema_says_each_fields_values() {
        let [fill, ..] = tools("sign-up", &signup(), Vec::new());
        let schema = &fill["inputSchema"];
        assert_eq!(
            schema,
            &json!({
                "type": "object",
                "properties": {
                    "newsletter": {"type": "boolean"},
                    "age": {"type": "number"},
                    "email": {"type": "string", "minLength": 1},
                    "note": {"type": "string"},
                    "size": {"enum": ["s", "m"]},
                    "plan": {"enum": ["free", "pro"]},
                    "tags": {"type": "array", "items": {"enum": ["a", "b"]}},
                },
                "additionalProperties": false,
            })
        );
        // In document order: the order the agent reads them in.
        let order: Vec<&String> = schema["properties"].as_object().unwrap().keys().collect();
        assert_eq!(
            order,
            ["newsletter", "age", "email", "note", "size", "plan", "tags"]
        );
        // Nor is a hidden one, but a hidden input of a checkbox's name is
        // the box's.
        let mut token = one(ctl("hidden", 12));
        token.name = "_token".into();
        assert!(token.is_hidden() && !token.is_fillable());
        let rails = named(vec![
            ("terms", ctl("hidden", 13)),
            ("terms", ctl("checkbox", 14)),
        ]);
        assert!(!rails[0].is_hidden() && rails[0].is_fillable());
        assert_eq!(rails[0].kind(), Kind::Checkbox);
        // A field whose controls are all read-only is not fill's.
        let mut form = signup();
        form.push(one(with(ctl("text", 9), |c| c.read_only = true)));
        form.push(
            named(vec![
                ("ref", with(ctl("text", 10), |c| c.read_only = true)),
                ("ref", ctl("text", 11)),
            ])
            .remove(0),
        );
        assert!(!form[form.len() - 2].is_fillable());
        assert!(form[form.len() - 1].is_fillable());
        let [fill, ..] = tools("sign-up", &form, Vec::new());
        let names: Vec<&String> = fill["inputSchema"]["properties"]
            .as_object()
            .unwrap()
            .keys()
            .collect();
        assert_eq!(
            names,
            [
                "newsletter",
                "age",
                "email",
                "note",
                "size",
                "plan",
                "tags",
                "ref"
            ]
        );
    }

    #[test]
    fn the_tools_say_what_they_do_to_the_form_named() {
        let [fill, read, submit] = tools("sign-up", &signup(), vec!["email".into()]);
        assert_eq!(fill["name"], "fill");
        assert_eq!(fill["title"], "Fill sign-up form");
        assert_eq!(
            fill["description"],
            "Fill fields of the sign-up form. Input: an object of field name to value; fields left out keep their value."
        );
        assert_eq!(fill["hints"], json!({}));
        assert_eq!(fill.get("sensitive"), None);
        let no_input = json!({"type": "object", "properties": {}, "additionalProperties": false});
        assert_eq!(
            read,
            json!({
                "name": "read",
                "title": "Read sign-up form",
                "description": "Read the current values of the sign-up form (sensitive fields are redacted).",
                "hints": {"readOnly": true, "untrustedContent": true},
                "inputSchema": no_input,
            })
        );
        assert_eq!(
            submit,
            json!({
                "name": "submit",
                "title": "Submit sign-up form",
                "description": "Submit the sign-up form as it is filled now. A human confirms first.",
                "hints": {"consequential": true},
                "inputSchema": no_input,
                "sensitive": ["email"],
            })
        );
        assert_eq!(summary("sign-up"), "Submit the sign-up form");
    }

    #[test]
    fn a_label_that_names_the_form_is_not_followed_by_form_again() {
        let [fill, read, submit] = tools("Sign-up Form", &signup(), Vec::new());
        assert_eq!(fill["title"], "Fill Sign-up Form");
        assert_eq!(
            read["description"],
            "Read the current values of the Sign-up Form (sensitive fields are redacted)."
        );
        assert_eq!(
            submit["description"],
            "Submit the Sign-up Form as it is filled now. A human confirms first."
        );
        assert_eq!(summary("form"), "Submit the form");
        for (label, named) in [
            ("platform", "Submit the platform form"),
            ("signupForm", "Submit the signupForm form"),
            ("orm", "Submit the orm form"),
            ("", "Submit the  form"),
        ] {
            assert_eq!(summary(label), named);
        }
    }

    #[test]
    fn the_label_is_the_title_else_the_forms_own_name_else_the_scopes() {
        let scope = Some("shop");
        assert_eq!(label(Some("Pay"), &["a", "n", "i"], scope), "Pay");
        // A truthy title whose text is empty (`[]`) is still the title.
        assert_eq!(label(Some(""), &["a", "n", "i"], scope), "");
        assert_eq!(label(None, &["a", "n", "i"], scope), "a");
        assert_eq!(label(None, &["", "n", "i"], scope), "n");
        assert_eq!(label(None, &["", "", "i"], scope), "i");
        assert_eq!(label(None, &["", "", ""], scope), "shop");
        assert_eq!(label(None, &["", "", ""], Some("")), "");
        assert_eq!(label(None, &["", "", ""], None), "the");
    }

    #[test]
    fn a_field_took_its_value_when_nothing_is_left_to_write_and_fill_says_which_did_not() {
        let date = |value: &str| [with(ctl("date", 0), |c| c.value = value.into())];
        // The browser sanitized "03/14/2025" to "": not taken.
        assert!(!took(Kind::Text, &date(""), &wanted("03/14/2025")));
        assert!(took(Kind::Text, &date("2025-03-14"), &wanted("2025-03-14")));
        let range = [with(ctl("range", 0), |c| c.value = "10".into())];
        assert!(!took(Kind::Number, &range, &wanted("80")));
        // A click the page prevented: the box is still unchecked.
        assert!(!took(Kind::Checkbox, &[ctl("checkbox", 0)], &wanted("yes")));
        assert_eq!(
            fill_answer(vec!["note".into()], Vec::new()),
            json!({"filled": ["note"]})
        );
        assert_eq!(
            fill_answer(vec!["note".into()], vec!["when".into()]),
            json!({"filled": ["note"], "invalid": [{"path": "when", "message": NOT_TAKEN}]})
        );
    }

    #[test]
    fn invalid_fields_are_each_fields_first_failing_control() {
        let fields = form_of(&[
            ("user", "text"),
            ("size", "radio"),
            ("size", "radio"),
            ("note", "text"),
            ("pin", "text"),
            ("pin", "text"),
        ]);
        let mut asked = Vec::new();
        let failing = [
            (0, "Fill in this field."),
            (2, "Select one."),
            (4, "Too short."),
            (5, "Also."),
        ];
        let issues = invalid_fields(&fields, |control| {
            asked.push(control.element);
            failing
                .iter()
                .find(|(at, _)| *at == control.element)
                .map(|(_, message)| (*message).to_owned())
        });
        assert_eq!(
            serde_json::to_value(&issues).unwrap(),
            json!([
                {"path": "user", "message": "Fill in this field."},
                {"path": "size", "message": "Select one."},
                {"path": "pin", "message": "Too short."},
            ])
        );
        // The control after a failing one of its field is not asked.
        assert_eq!(asked, [0, 1, 2, 3, 4]);
        assert_eq!(invalid_fields(&fields, |_| None), []);
        assert_eq!(
            submit_answer(&issues[..1], false),
            json!({"submitted": false, "invalid": [{"path": "user", "message": "Fill in this field."}]})
        );
        assert!(submits(&[], true, true));
        for (connected, valid) in [(false, true), (true, false)] {
            assert!(!submits(&[], connected, valid));
        }
        assert!(!submits(&issues[..1], true, true));
        assert_eq!(submit_answer(&[], true), json!({"submitted": true}));
        assert_eq!(
            submit_answer(&[], false),
            json!({"submitted": false, "reason": NOT_SUBMITTED})
        );
    }

    #[test]
    fn read_redacts_sensitive_and_declared_fields() {
        let mut policy = FormPolicy::new(vec!["nickname".into()]);
        let fields = [
            text("email", "ann@example.com"),
            field("password", "password", "", Some(json!("hunter2"))),
            field("card", "text", "cc-number", Some(json!("4111"))),
            text("nickname", "anon"),
            field("empty", "password", "", None),
            field("newsletter", "checkbox", "", Some(json!(true))),
        ];
        assert_eq!(
            Value::Object(policy.read(&fields)),
            json!({
                "email": "ann@example.com",
                "password": "[redacted]",
                "card": "[redacted]",
                "nickname": "[redacted]",
                "newsletter": true,
            })
        );
    }

    #[test]
    fn sensitivity_is_decided_at_every_use() {
        let mut policy = FormPolicy::new(Vec::new());
        let mut fields = [text("pin", "1234")];
        assert_eq!(policy.read(&fields).get("pin"), Some(&json!("1234")));
        assert!(policy.sensitive_paths(&fields).is_empty());
        // The page turns it into a password field after formTools().
        fields[0].controls[0].input_type = "password".into();
        assert_eq!(policy.read(&fields).get("pin"), Some(&json!(REDACTED)));
        assert_eq!(policy.sensitive_paths(&fields), ["pin"]);
    }

    #[test]
    fn a_hidden_field_is_read_and_changed_redacted() {
        let mut policy = FormPolicy::new(Vec::new());
        let mut fields = [
            field("_token", "hidden", "", Some(json!("csrf-secret"))),
            field("email", "email", "", Some(json!("a@b.example"))),
        ];
        let read = policy.read(&fields);
        assert_eq!(read.get("_token"), Some(&json!(REDACTED)));
        assert_eq!(read.get("email"), Some(&json!("a@b.example")));
        assert_eq!(policy.sensitive_paths(&fields), ["_token"]);
        fields[0].value = Some(json!("rotated"));
        let changes = policy.changes(&fields);
        let token = changes.iter().find(|c| c.path == "_token").unwrap();
        assert_eq!(token.after, Some(json!(REDACTED)));
        assert!(token.before.as_ref().is_none_or(|v| v == &json!(REDACTED)));
    }

    #[test]
    fn a_field_stays_sensitive_once_it_has_been() {
        let mut policy = FormPolicy::new(Vec::new());
        let mut fields = [field("password", "password", "", Some(json!("hunter2")))];
        assert_eq!(policy.read(&fields).get("password"), Some(&json!(REDACTED)));
        // The show-password button.
        fields[0].controls[0].input_type = "text".into();
        assert!(!fields[0].is_sensitive_now());
        assert_eq!(policy.read(&fields).get("password"), Some(&json!(REDACTED)));
        assert_eq!(policy.sensitive_paths(&fields), ["password"]);
        fields[0].default = None;
        assert_eq!(
            policy.changes(&fields),
            [FieldChange {
                path: "password".into(),
                before: None,
                after: Some(json!(REDACTED))
            }]
        );
        // Another form's policy has not seen it.
        assert_eq!(
            FormPolicy::new(Vec::new()).read(&fields).get("password"),
            Some(&json!("hunter2"))
        );
    }

    #[test]
    fn changes_are_fields_that_differ_from_their_defaults_redacted() {
        let mut policy = FormPolicy::new(Vec::new());
        let mut plan = text("plan", "pro");
        plan.default = Some(json!("free"));
        let mut same = text("size", "s");
        same.default = Some(json!("s"));
        let mut number = field("n", "number", "", Some(json!(1.0)));
        number.default = Some(json!(1));
        let fields = [
            text("email", "bo@example.com"),
            field("password", "password", "", Some(json!("pw"))),
            field("card", "text", "cc-number", Some(json!("4242"))),
            plan,
            same,
            number,
        ];
        assert_eq!(
            serde_json::to_value(policy.changes(&fields)).unwrap(),
            json!([
                {"path": "email", "after": "bo@example.com"},
                {"path": "password", "after": "[redacted]"},
                {"path": "card", "after": "[redacted]"},
                {"path": "plan", "before": "free", "after": "pro"},
            ])
        );
    }

    /// A field is a change when `JSON.stringify` of its value and of its
    /// default differ: numbers by value, arrays item by item, objects
    /// member by member in key order; no value and no default is none.
    #[test]
    fn changes_compare_values_as_their_json_texts() {
        let with_default = |name: &str, default: Option<Value>, value: Option<Value>| Field {
            default,
            ..field(name, "text", "", value)
        };
        let unchanged = [
            with_default("empty", None, None),
            with_default("tags", Some(json!(["a", "b"])), Some(json!(["a", "b"]))),
            with_default("ones", Some(json!([1])), Some(json!([1.0]))),
            with_default(
                "point",
                Some(json!({"x": 1, "y": 2})),
                Some(json!({"x": 1.0, "y": 2})),
            ),
        ];
        assert_eq!(FormPolicy::new(Vec::new()).changes(&unchanged), []);
        let changed = [
            with_default("count", Some(json!(1)), Some(json!(2))),
            with_default("tags", Some(json!(["a"])), Some(json!(["a", "b"]))),
            with_default("more", Some(json!({"x": 1})), Some(json!({"x": 1, "y": 2}))),
            with_default("renamed", Some(json!({"x": 1})), Some(json!({"y": 1}))),
            with_default(
                "reordered",
                Some(json!({"x": 1, "y": 2})),
                Some(json!({"y": 2, "x": 1})),
            ),
            with_default("cleared", Some(json!("a")), None),
        ];
        let paths: Vec<String> = FormPolicy::new(Vec::new())
            .changes(&changed)
            .into_iter()
            .map(|change| change.path)
            .collect();
        assert_eq!(
            paths,
            ["count", "tags", "more", "renamed", "reordered", "cleared"]
        );
    }

    #[test]
    fn a_declared_path_inside_a_parent_value_is_redacted_in_place() {
        let policy = FormPolicy::new(vec!["card.number".into(), "items.1.secret".into()]);
        let changes = vec![
            FieldChange {
                path: "card".into(),
                before: Some(json!({"number": "4111", "name": "Ann"})),
                after: Some(json!({"number": "4242", "name": "Bo", "extra": {"number": 1}})),
            },
            FieldChange {
                path: "card.number".into(),
                before: None,
                after: Some(json!("4242")),
            },
            FieldChange {
                path: "card.number.last4".into(),
                before: Some(json!("1111")),
                after: None,
            },
            FieldChange {
                path: "items".into(),
                before: Some(json!([{"secret": "a"}, {"secret": "b", "label": "x"}])),
                after: Some(json!("not an object")),
            },
            FieldChange {
                path: "".into(),
                before: None,
                after: Some(json!({"card": {"number": "4242"}, "cardnumber": "visible"})),
            },
            FieldChange {
                path: "cards".into(),
                before: None,
                after: Some(json!({"number": "visible"})),
            },
        ];
        assert_eq!(
            serde_json::to_value(policy.redact_changes(changes)).unwrap(),
            json!([
                {"path": "card",
                 "before": {"number": "[redacted]", "name": "Ann"},
                 "after": {"number": "[redacted]", "name": "Bo", "extra": {"number": 1}}},
                {"path": "card.number", "after": "[redacted]"},
                {"path": "card.number.last4", "before": "[redacted]"},
                {"path": "items",
                 "before": [{"secret": "a"}, {"secret": "[redacted]", "label": "x"}],
                 "after": "not an object"},
                {"path": "", "after": {"card": {"number": "[redacted]"}, "cardnumber": "visible"}},
                {"path": "cards", "after": {"number": "visible"}},
            ])
        );
    }

    #[test]
    fn a_key_with_a_dot_is_matched_by_its_full_path() {
        let mut value = json!({"card.number": "4111", "card": {"number": "4242"}});
        redact_value("", &mut value, &["card.number"]);
        assert_eq!(
            value,
            json!({"card.number": "[redacted]", "card": {"number": "[redacted]"}})
        );
    }

    #[test]
    fn read_redacts_a_declared_path_inside_a_field_value() {
        let mut policy = FormPolicy::new(vec!["tags.0".into()]);
        let fields = [field(
            "tags",
            "select-multiple",
            "",
            Some(json!(["secret", "public"])),
        )];
        assert_eq!(
            policy.read(&fields).get("tags"),
            Some(&json!(["[redacted]", "public"]))
        );
    }

    #[test]
    fn the_form_state_changes_with_any_value_and_only_then() {
        let key = b"0123456789abcdef";
        let fields = vec![text("to", "alice@example.com"), text("amount", "100")];
        let state = form_state(&fields, key);
        assert_eq!(state.len(), 64);
        assert!(state.bytes().all(|b| b.is_ascii_hexdigit()));
        assert_eq!(form_state(&fields.clone(), key), state);
        // Another key, another digest for the same state.
        assert_ne!(form_state(&fields, b"another key....."), state);
        let mut changed = fields.clone();
        changed[1].value = Some(json!("101"));
        assert_ne!(form_state(&changed, key), state);
        // Absent, null and "" are three states.
        let mut a = fields.clone();
        a[1].value = None;
        let mut b = fields.clone();
        b[1].value = Some(Value::Null);
        let mut c = fields.clone();
        c[1].value = Some(json!(""));
        let states = [
            form_state(&a, key),
            form_state(&b, key),
            form_state(&c, key),
        ];
        assert!(states[0] != states[1] && states[1] != states[2] && states[0] != states[2]);
        // Boundaries between names and values cannot be shifted.
        let x = [text("ab", "c")];
        let y = [text("a", "bc")];
        assert_ne!(form_state(&x, key), form_state(&y, key));
        // The type of a value counts: "1" is not 1.
        let mut n = fields.clone();
        n[1].value = Some(json!(100));
        assert_ne!(form_state(&n, key), state);
        // Defaults and attributes are not state: only values.
        let mut d = fields.clone();
        d[0].default = Some(json!("x"));
        d[0].controls[0].autocomplete = "email".into();
        d[0].controls[0].default_value = "x".into();
        d[0].controls[0].default_checked = true;
        assert_eq!(form_state(&d, key), state);
    }

    /// A field's value reads one of its controls; the state reads them all.
    #[test]
    fn the_form_state_changes_with_any_control_of_a_field_not_only_the_one_its_value_reads() {
        let key = b"0123456789abcdef";
        let box_of = |value: &str, checked: bool, at: usize| {
            with(ctl("checkbox", at), |c| {
                c.value = value.into();
                c.checked = checked;
            })
        };
        let texts = |second: &str| {
            named(vec![
                (
                    "to[]",
                    with(ctl("text", 0), |c| c.value = "ann@example.com".into()),
                ),
                ("to[]", with(ctl("text", 1), |c| c.value = second.into())),
            ])
        };
        let boxes = |offers: bool| {
            named(vec![
                ("tags", box_of("news", false, 0)),
                ("tags", box_of("offers", offers, 1)),
            ])
        };
        let rails = |ticked: bool| {
            named(vec![
                ("agree", with(ctl("hidden", 0), |c| c.value = "0".into())),
                ("agree", box_of("1", ticked, 1)),
            ])
        };
        let menu = |second: bool| {
            named(vec![(
                "size",
                select(false, &[("s", !second, !second), ("m", second, false)], 0),
            )])
        };
        for (before, after) in [
            (texts(""), texts("mallory@evil.example")),
            (boxes(false), boxes(true)),
            (rails(false), rails(true)),
            (menu(false), menu(true)),
        ] {
            assert_eq!(form_state(&before, key), form_state(&before.clone(), key));
            assert_ne!(
                form_state(&before, key),
                form_state(&after, key),
                "{after:?}"
            );
        }
    }

    /// The digest's 32 bytes as 64 lowercase hex digits, high nibble first:
    /// over a few states every digit shows up in both places.
    #[test]
    fn the_form_state_is_the_digest_in_lowercase_hex() {
        let key = b"0123456789abcdef";
        let mut seen = [[false; 16]; 2];
        for amount in 0..16 {
            let state = form_state(&[text("amount", &amount.to_string())], key);
            assert_eq!(state.len(), 64);
            for (i, digit) in state.chars().enumerate() {
                assert!(!digit.is_ascii_uppercase(), "{state}");
                let value = digit.to_digit(16).unwrap() as usize;
                seen[i % 2][value] = true;
            }
        }
        assert_eq!(seen, [[true; 16]; 2]);
    }

    /// A 64-bit fingerprint as a stale check could take it: two
    /// FNV-1a-style lanes over the UTF-16 code units of
    /// `JSON.stringify(snapshot)`.
    fn fingerprint64(text: &str) -> String {
        let mut a: u32 = 0x811c_9dc5;
        let mut b: u32 = 0x0100_0193 ^ 0x5bd1_e995;
        for c in text.encode_utf16() {
            a = (a ^ u32::from(c)).wrapping_mul(0x0100_0193);
            b = (b ^ u32::from(c)).wrapping_mul(0x0100_0193 ^ 0x2f);
        }
        format!("{a:08x}{b:08x}")
    }

    /// `JSON.stringify` of a snapshot `{ name: value }` (in field
    /// order; serde_json writes these values as JS does).
    fn snapshot_json(fields: &[Field]) -> String {
        let mut values = Map::new();
        for f in fields {
            if let Some(v) = &f.value {
                values.insert(f.name.clone(), v.clone());
            }
        }
        serde_json::to_string(&Value::Object(values)).unwrap()
    }

    /// The agent fills a transfer form, gets `needs_confirmation`, then
    /// refills `to` and `amount` and appends 7 chosen characters to the
    /// memo. The fingerprint cannot tell: its second lane multiplies by
    /// an even number (0x010001bc, a multiple of 4), losing 2 bits of
    /// history per step, so it depends only on the last 15 code units of
    /// the text, which the attack leaves alone; the first lane is
    /// 32 bits, invertible, and a meet-in-the-middle over 93 printable
    /// characters (4 forward, 3 backward) finds the 7 in well under a
    /// second. SHA-256 of the state tells.
    #[test]
    fn forged_collision_of_a_64_bit_fingerprint_is_detected() {
        let form = |to: &str, amount: i64, memo: &str| {
            vec![
                field("to", "email", "", Some(json!(to))),
                field("amount", "number", "", Some(json!(amount))),
                text("memo", memo),
                field("account", "select-one", "", Some(json!("checking"))),
            ]
        };
        let requested = form("alice@example.com", 100, "March rent");
        let forged = form("mallory@evil.example", 9999, "March rent !+&$Em");
        assert_eq!(
            snapshot_json(&requested),
            r#"{"to":"alice@example.com","amount":100,"memo":"March rent","account":"checking"}"#
        );
        assert_eq!(
            snapshot_json(&forged),
            r#"{"to":"mallory@evil.example","amount":9999,"memo":"March rent !+&$Em","account":"checking"}"#
        );
        // The same fingerprint: a rule comparing it would submit the changed form.
        assert_eq!(
            fingerprint64(&snapshot_json(&requested)),
            fingerprint64(&snapshot_json(&forged))
        );
        // The new rule: refused stale.
        let key = [7u8; 32];
        assert_ne!(form_state(&requested, &key), form_state(&forged, &key));
        assert_ne!(form_state(&requested, &[]), form_state(&forged, &[]));
    }

    #[test]
    fn the_second_lane_only_sees_the_last_15_code_units() {
        let lane_b = |text: &str| fingerprint64(text).get(8..).unwrap().to_owned();
        let tail = "123456789abcdef";
        assert_eq!(
            lane_b(&format!("anything{tail}")),
            lane_b(&format!("else entirely{tail}"))
        );
        assert_ne!(
            lane_b(&format!("x{tail}")),
            lane_b(&format!("x{}g", &tail[..14]))
        );
    }

    fn form_arguments(sensitive: Given, sensitive_paths: GivenList<String>) -> Arguments {
        Arguments {
            elements: Given::Object,
            request_submit: Given::Function,
            register: Given::Function,
            sensitive,
            sensitive_paths,
        }
    }

    #[test]
    fn form_tools_takes_a_form_a_scope_and_sensitive_paths_in_that_order() {
        let paths = || GivenList::Items(vec!["card.number".to_owned()]);
        assert_eq!(
            arguments(form_arguments(Given::Object, paths())),
            Ok(vec!["card.number".to_owned()])
        );
        for absent in [Given::Undefined, Given::Null] {
            assert_eq!(
                arguments(form_arguments(absent, GivenList::NotList)),
                Ok(Vec::new())
            );
        }
        let not_form = "formTools: form must be an HTMLFormElement";
        for (elements, request_submit) in [
            (Given::Undefined, Given::Function),
            (Given::Function, Given::Function),
            (Given::Object, Given::Undefined),
            (Given::Object, Given::Object),
        ] {
            let mut given = form_arguments(Given::Text("x".into()), GivenList::NotList);
            (given.elements, given.request_submit, given.register) =
                (elements, request_submit, Given::Undefined);
            assert_eq!(arguments(given), Err(not_form), "the form is checked first");
        }
        for register in [Given::Undefined, Given::Object, Given::Text("f".into())] {
            let mut given = form_arguments(Given::Text("x".into()), GivenList::NotList);
            given.register = register;
            assert_eq!(
                arguments(given),
                Err("formTools: options.scope must be a scope (tm.scope('name'))")
            );
        }
        for (sensitive, list) in [
            (Given::Text("card".into()), GivenList::NotList),
            (Given::Object, GivenList::NotList),
            (Given::Number(1.0), GivenList::NotList),
        ] {
            assert_eq!(
                arguments(form_arguments(sensitive, list)),
                Err("formTools: options.sensitive must be an array of paths")
            );
        }
    }
}
