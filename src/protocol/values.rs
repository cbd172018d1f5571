//! Checked conversions of plain JSON values the page hands in (hints,
//! FieldChanges, validation issues) into protocol types.

use crate::json::Value;
use crate::prelude::*;

use super::check::Checker;
use super::manifest::Hints;
use super::result::{check_field_change, check_issue, FieldChange, Issue};

fn list<T>(
    value: &Value,
    item: impl Fn(&Value, &str, &mut Checker) -> Option<T>,
) -> Result<Vec<T>, Vec<Issue>> {
    let mut c = Checker::default();
    let Some(items) = value.as_array() else {
        c.fail("", "must be array");
        return Err(c.issues);
    };
    let out: Vec<T> = items
        .iter()
        .enumerate()
        .filter_map(|(i, v)| item(v, &i.to_string(), &mut c))
        .collect();
    if c.issues.is_empty() {
        Ok(out)
    } else {
        Err(c.issues)
    }
}

/// Tool hints (`{ readOnly?, consequential?, destructive?, untrustedContent? }`, unknown kept).
pub fn hints_from_value(value: &Value) -> Result<Hints, Vec<Issue>> {
    let mut c = Checker::default();
    match Hints::check(value, "", &mut c) {
        Some(hints) if c.issues.is_empty() => Ok(hints),
        _ => Err(c.issues),
    }
}

/// `[{ path, before?, after? }]`.
pub fn field_changes_from_value(value: &Value) -> Result<Vec<FieldChange>, Vec<Issue>> {
    list(value, check_field_change)
}

/// `[{ path, message }]`.
pub fn issues_from_value(value: &Value) -> Result<Vec<Issue>, Vec<Issue>> {
    list(value, check_issue)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::testing::json;

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
