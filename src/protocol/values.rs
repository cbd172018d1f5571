//! Checked conversions of plain JSON values the page hands in (hints,
//! FieldChanges, validation issues) into protocol types, checked against
//! the page → agent schema's `hints`, `fieldChange` and `issue` definitions.

use crate::prelude::*;
use serde_json::Value;

use super::manifest::{Hints, HINT_KEYS};
use super::result::{FieldChange, Issue};
use super::validation::{issues, Slot};

/// An array's items, each built by `item`: `None` when `value` is not an
/// array or `item` fails on one of them.
pub(crate) fn list<T>(value: &Value, item: impl Fn(&Value) -> Option<T>) -> Option<Vec<T>> {
    value.as_array()?.iter().map(item).collect()
}

/// Checks `value` against the schema of `slot`.
fn check(value: &Value, slot: Slot) -> Result<(), Vec<Issue>> {
    let found = issues(slot, value);
    if found.is_empty() {
        Ok(())
    } else {
        Err(found)
    }
}

fn failed(message: &str) -> Vec<Issue> {
    vec![Issue {
        path: String::new(),
        message: message.to_owned(),
    }]
}

/// The value built by `build` once `check` passed.
fn built<T>(value: &Value, build: impl Fn(&Value) -> Option<T>) -> Result<T, Vec<Issue>> {
    build(value).ok_or_else(|| failed("invalid value"))
}

/// Tool hints (`{ readOnly?, consequential?, destructive?, untrustedContent? }`, unknown kept).
pub fn hints_from_value(value: &Value) -> Result<Hints, Vec<Issue>> {
    // Hints the definition accepts need no schema (which a page's first
    // `register` would otherwise compile and run): the test
    // `plain_hints_are_what_the_definition_accepts` holds the two equal.
    if !is_plain_hints(value) {
        check(value, Slot::HINTS)?;
    }
    built(value, Hints::from_value)
}

/// An object whose known hints, where present, are booleans: exactly what
/// page → agent's `hints` definition accepts.
fn is_plain_hints(value: &Value) -> bool {
    value.as_object().is_some_and(|map| {
        HINT_KEYS
            .iter()
            .all(|key| map.get(*key).is_none_or(Value::is_boolean))
    })
}

/// `[{ path, before?, after? }]`.
pub fn field_changes_from_value(value: &Value) -> Result<Vec<FieldChange>, Vec<Issue>> {
    check(value, Slot::FIELD_CHANGES)?;
    built(value, |v| list(v, FieldChange::from_value))
}

/// `[{ path, message }]`.
pub fn issues_from_value(value: &Value) -> Result<Vec<Issue>, Vec<Issue>> {
    check(value, Slot::ISSUES)?;
    built(value, |v| list(v, Issue::from_value))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn plain_hints_are_what_the_definition_accepts() {
        let values = [
            json!(true),
            json!(1),
            json!("x"),
            json!(null),
            json!([]),
            json!({}),
        ];
        let mut checked = 0;
        for key in HINT_KEYS.iter().copied().chain(["other"]) {
            for first in &values {
                for second_key in HINT_KEYS.iter().copied().chain(["extra"]) {
                    for second in &values {
                        let hints = json!({ key: first.clone(), second_key: second.clone() });
                        assert_eq!(
                            is_plain_hints(&hints),
                            issues(Slot::HINTS, &hints).is_empty(),
                            "{hints}"
                        );
                        checked += 1;
                    }
                }
            }
        }
        for other in &values {
            assert_eq!(
                is_plain_hints(other),
                issues(Slot::HINTS, other).is_empty(),
                "{other}"
            );
        }
        assert_eq!(checked, 5 * 6 * 5 * 6);
    }

    #[test]
    fn conversions_check_their_input() {
        assert!(hints_from_value(&json!({"readOnly": true, "x": 1})).is_ok());
        assert!(hints_from_value(&json!({"readOnly": "yes"})).is_err());
        assert!(hints_from_value(&json!(null)).is_err());
        assert_eq!(
            field_changes_from_value(&json!([{"path": "a", "after": 1}])).ok(),
            Some(vec![FieldChange {
                path: "a".into(),
                before: None,
                after: Some(json!(1))
            }])
        );
        assert_eq!(
            field_changes_from_value(&json!([{"path": 1}]))
                .err()
                .map(|e| e[0].path.clone()),
            Some("0.path".to_string())
        );
        assert!(issues_from_value(&json!([{"path": "", "message": "m"}])).is_ok());
        assert!(issues_from_value(&json!({})).is_err());
    }
}
