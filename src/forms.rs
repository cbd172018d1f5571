//! The decisions of `formTools` (fill / read / submit tools for an HTML
//! form), as pure functions over a description of the form that a driver
//! reads from the DOM. No DOM here: the driver lists the form's named,
//! enabled fields ([`Field`]: name, each control's `type` and
//! `autocomplete`, the current and default values) every time a tool runs,
//! and writes values back itself.
//!
//! # What it decides
//! - **Which elements are fields** ([`is_field_control`]): named, enabled,
//!   not a button or a file input; the controls sharing a name are one field.
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
//!   and value, in order, unambiguously encoded), keyed by a per-form
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
//! [`form_state`]. On `read`: the fields, then [`FormPolicy::read`]. On
//! `submit`'s confirmation: [`FormPolicy::changes`] and the registry's
//! `sensitive` list from [`FormPolicy::sensitive_paths`]; the form state
//! from [`form_state`] at request time and again at approval
//! (`Toolmark::handle_state`).

use crate::prelude::*;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::protocol::FieldChange;

/// What sensitive values become.
pub const REDACTED: &str = "[redacted]";

/// One form control (an `<input>`, `<select>`, `<textarea>`) as the driver
/// reads it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Control {
    /// The `type` property (`"text"`, `"password"`, `"select-one"`, …).
    pub input_type: String,
    /// The `autocomplete` attribute, `""` when absent.
    pub autocomplete: String,
}

impl Control {
    pub fn new(input_type: &str, autocomplete: &str) -> Self {
        Control {
            input_type: input_type.into(),
            autocomplete: autocomplete.into(),
        }
    }

    /// `type="password"`, or an `autocomplete` token starting with `cc-`.
    pub fn is_sensitive(&self) -> bool {
        self.input_type.eq_ignore_ascii_case("password")
            || self.autocomplete.split_whitespace().any(|token| {
                token
                    .get(..3)
                    .is_some_and(|prefix| prefix.eq_ignore_ascii_case("cc-"))
            })
    }
}

/// Control types that carry no field value (`formTools` skips them).
pub const NOT_FIELD_TYPES: [&str; 5] = ["submit", "button", "reset", "image", "file"];

/// Whether a form element is one of the form's fields: it has a name, is
/// enabled, and its `type` is not a button or a file input.
pub fn is_field_control(name: &str, disabled: bool, input_type: &str) -> bool {
    !name.is_empty()
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
    /// Whether one of its controls is sensitive now.
    pub fn is_sensitive_now(&self) -> bool {
        self.controls.iter().any(Control::is_sensitive)
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
                if let Err(at) = self.ever.binary_search(&field.name) {
                    self.ever.insert(at, field.name.clone());
                }
            }
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
/// every field's name and value in order, each length-prefixed (an absent
/// value is distinct from `null` and from `""`), so two states share a
/// digest only if they are the same state. Equal digests at request and at
/// approval: unchanged. `key` is the driver's per-form secret, so a digest
/// cannot be used to test guesses of a password.
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
        assert!(is_field_control("email", false, "email"));
        assert!(is_field_control("plan", false, "select-one"));
        assert!(is_field_control("notes", false, ""));
        assert!(!is_field_control("", false, "text"));
        assert!(!is_field_control("email", true, "email"));
        for t in ["submit", "button", "reset", "image", "file", "FILE"] {
            assert!(!is_field_control("x", false, t), "{t}");
        }
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
        // Controls and defaults are not state: only values.
        let mut d = fields.clone();
        d[0].default = Some(json!("x"));
        d[0].controls[0].autocomplete = "email".into();
        assert_eq!(form_state(&d, key), state);
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
}
