//! Tool results (`result.result`, `confirmed.result`) and their parts.

use super::check::{Checker, Obj};
use super::codes::{CancelledBy, RefusedCode};
use crate::json::{obj, Value};
use crate::prelude::*;

/// One problem found in a value: a dotted path (`""` for the root,
/// `items.0.name`) and a short message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Issue {
    pub path: String,
    pub message: String,
}

/// One field a tool would change: absent `before`/`after` mean "no value".
#[derive(Debug, Clone, PartialEq)]
pub struct FieldChange {
    pub path: String,
    pub before: Option<Value>,
    pub after: Option<Value>,
}

impl Issue {
    /// `{path, message}`.
    pub fn to_value(&self) -> Value {
        obj(vec![
            ("path", self.path.as_str().into()),
            ("message", self.message.as_str().into()),
        ])
    }
}

impl FieldChange {
    /// `{path, before?, after?}` (absent ones left out).
    pub fn to_value(&self) -> Value {
        let mut entries = vec![("path", self.path.as_str().into())];
        if let Some(before) = &self.before {
            entries.push(("before", before.clone()));
        }
        if let Some(after) = &self.after {
            entries.push(("after", after.clone()));
        }
        obj(entries)
    }
}

/// The outcome of a tool call: plain JSON, never an exception.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolResult {
    Ok {
        /// Absent means "no value"; `Some(Value::Null)` is an explicit `null`.
        data: Option<Value>,
    },
    Invalid {
        issues: Vec<Issue>,
    },
    Refused {
        code: RefusedCode,
        message: String,
        /// Only for `unknown_tool` and `stale`: the page's current revision.
        rev: Option<u64>,
    },
    NeedsConfirmation {
        confirm_id: String,
        summary: String,
        changes: Option<Vec<FieldChange>>,
    },
    Cancelled {
        by: CancelledBy,
    },
    Error {
        message: String,
    },
}

const STATUSES: &[&str] = &[
    "ok",
    "invalid",
    "refused",
    "needs_confirmation",
    "cancelled",
    "error",
];

impl ToolResult {
    /// The `status` string.
    pub fn status(&self) -> &'static str {
        match self {
            ToolResult::Ok { .. } => "ok",
            ToolResult::Invalid { .. } => "invalid",
            ToolResult::Refused { .. } => "refused",
            ToolResult::NeedsConfirmation { .. } => "needs_confirmation",
            ToolResult::Cancelled { .. } => "cancelled",
            ToolResult::Error { .. } => "error",
        }
    }

    /// The result as a JSON value: `status` first, then the variant's fields
    /// in declaration order (`confirmId` camelCase), absent options left out.
    pub fn to_value(&self) -> Value {
        let mut entries = vec![("status", self.status().into())];
        match self {
            ToolResult::Ok { data } => {
                if let Some(data) = data {
                    entries.push(("data", data.clone()));
                }
            }
            ToolResult::Invalid { issues } => {
                let issues = issues.iter().map(Issue::to_value).collect();
                entries.push(("issues", Value::Array(issues)));
            }
            ToolResult::Refused { code, message, rev } => {
                entries.push(("code", code.as_str().into()));
                entries.push(("message", message.as_str().into()));
                if let Some(rev) = rev {
                    entries.push(("rev", (*rev).into()));
                }
            }
            ToolResult::NeedsConfirmation {
                confirm_id,
                summary,
                changes,
            } => {
                entries.push(("confirmId", confirm_id.as_str().into()));
                entries.push(("summary", summary.as_str().into()));
                if let Some(changes) = changes {
                    let changes = changes.iter().map(FieldChange::to_value).collect();
                    entries.push(("changes", Value::Array(changes)));
                }
            }
            ToolResult::Cancelled { by } => entries.push(("by", by.as_str().into())),
            ToolResult::Error { message } => entries.push(("message", message.as_str().into())),
        }
        obj(entries)
    }

    /// A refusal carrying `rev` exactly when its code calls for one.
    pub fn refused(code: RefusedCode, message: impl Into<String>, current_rev: u64) -> Self {
        ToolResult::Refused {
            code,
            message: message.into(),
            rev: code.carries_rev().then_some(current_rev),
        }
    }

    /// Checks a value against the `toolResult` schema and builds the result.
    pub(crate) fn check(value: &Value, path: &str, c: &mut Checker) -> Option<ToolResult> {
        let obj = c.object(value, path)?;
        let status = obj.one_of(
            "status",
            |s| STATUSES.iter().position(|known| *known == s),
            c,
        )?;
        let before = c.issues.len();
        let result = match status {
            0 => {
                obj.deny_unknown(&["status", "data"], c);
                ToolResult::Ok {
                    data: obj.map.get("data").cloned(),
                }
            }
            1 => {
                obj.deny_unknown(&["status", "issues"], c);
                let items = obj.array("issues", c)?;
                let issues = items
                    .iter()
                    .enumerate()
                    .filter_map(|(i, item)| check_issue(item, &join_index(&obj, "issues", i), c))
                    .collect::<Vec<_>>();
                ToolResult::Invalid { issues }
            }
            2 => check_refused(&obj, c)?,
            3 => {
                obj.deny_unknown(&["status", "confirmId", "summary", "changes"], c);
                let confirm_id = obj.string("confirmId", true, c);
                let summary = obj.string("summary", false, c);
                let changes = match obj.opt_array("changes", c) {
                    Ok(Some(items)) => Some(
                        items
                            .iter()
                            .enumerate()
                            .filter_map(|(i, item)| {
                                check_field_change(item, &join_index(&obj, "changes", i), c)
                            })
                            .collect::<Vec<_>>(),
                    ),
                    Ok(None) => None,
                    Err(()) => None,
                };
                ToolResult::NeedsConfirmation {
                    confirm_id: confirm_id?,
                    summary: summary?,
                    changes,
                }
            }
            4 => {
                obj.deny_unknown(&["status", "by"], c);
                ToolResult::Cancelled {
                    by: obj.one_of("by", CancelledBy::parse, c)?,
                }
            }
            _ => {
                obj.deny_unknown(&["status", "message"], c);
                ToolResult::Error {
                    message: obj.string("message", false, c)?,
                }
            }
        };
        (c.issues.len() == before).then_some(result)
    }
}

fn join_index(obj: &Obj<'_>, key: &str, index: usize) -> String {
    format!("{}.{index}", obj.path_of(key))
}

fn check_refused(obj: &Obj<'_>, c: &mut Checker) -> Option<ToolResult> {
    obj.deny_unknown(&["status", "code", "message", "rev"], c);
    let code = obj.one_of("code", RefusedCode::parse, c);
    let message = obj.string("message", false, c);
    let rev = obj.opt_rev("rev", c).ok()?;
    let code = code?;
    if rev.is_some() && !code.carries_rev() {
        // Schema: `rev` only for unknown_tool / stale.
        c.fail(&obj.path_of("rev"), "must NOT be present for this code");
        return None;
    }
    if rev.is_none() && code.carries_rev() {
        c.fail(&obj.path_of("rev"), "must have required property 'rev'");
        return None;
    }
    Some(ToolResult::Refused {
        code,
        message: message?,
        rev,
    })
}

pub(crate) fn check_issue(value: &Value, path: &str, c: &mut Checker) -> Option<Issue> {
    let obj = c.object(value, path)?;
    obj.deny_unknown(&["path", "message"], c);
    let issue_path = obj.string("path", false, c);
    let message = obj.string("message", false, c);
    Some(Issue {
        path: issue_path?,
        message: message?,
    })
}

pub(crate) fn check_field_change(
    value: &Value,
    path: &str,
    c: &mut Checker,
) -> Option<FieldChange> {
    let obj = c.object(value, path)?;
    obj.deny_unknown(&["path", "before", "after"], c);
    Some(FieldChange {
        path: obj.string("path", false, c)?,
        before: obj.map.get("before").cloned(),
        after: obj.map.get("after").cloned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::testing::{json, serde};

    #[test]
    fn results_serialize_to_the_spec_shapes() {
        let cases = [
            (ToolResult::Ok { data: None }, json!({"status": "ok"})),
            (
                ToolResult::Ok {
                    data: Some(Value::Null),
                },
                json!({"status": "ok", "data": null}),
            ),
            (
                ToolResult::Invalid {
                    issues: vec![Issue {
                        path: "email".into(),
                        message: "Invalid email".into(),
                    }],
                },
                json!({"status": "invalid", "issues": [{"path": "email", "message": "Invalid email"}]}),
            ),
            (
                ToolResult::refused(RefusedCode::UnknownTool, "No such tool", 8),
                json!({"status": "refused", "code": "unknown_tool", "message": "No such tool", "rev": 8}),
            ),
            (
                ToolResult::refused(RefusedCode::Busy, "busy", 8),
                json!({"status": "refused", "code": "busy", "message": "busy"}),
            ),
            (
                ToolResult::NeedsConfirmation {
                    confirm_id: "c1".into(),
                    summary: "Submit".into(),
                    changes: Some(vec![FieldChange {
                        path: "email".into(),
                        before: None,
                        after: Some(json!("[redacted]")),
                    }]),
                },
                json!({"status": "needs_confirmation", "confirmId": "c1", "summary": "Submit",
                       "changes": [{"path": "email", "after": "[redacted]"}]}),
            ),
            (
                ToolResult::Cancelled {
                    by: CancelledBy::Signal,
                },
                json!({"status": "cancelled", "by": "signal"}),
            ),
            (
                ToolResult::Error {
                    message: "Tool failed".into(),
                },
                json!({"status": "error", "message": "Tool failed"}),
            ),
        ];
        for (result, expected) in cases {
            assert_eq!(result.to_value(), expected);
            assert_eq!(
                result.to_value().to_string(),
                serde_json::to_string(&serde(&expected)).unwrap()
            );
            let mut c = Checker::default();
            assert_eq!(ToolResult::check(&expected, "result", &mut c), Some(result));
            assert!(c.issues.is_empty());
        }
    }

    fn issues_of(value: Value) -> Vec<Issue> {
        let mut c = Checker::default();
        assert_eq!(ToolResult::check(&value, "result", &mut c), None);
        c.issues
    }

    #[test]
    fn bad_results_are_rejected_with_paths() {
        assert_eq!(
            issues_of(json!({"status": "done"})),
            vec![Issue {
                path: "result.status".into(),
                message: "must be equal to one of the allowed values".into()
            }]
        );
        assert_eq!(
            issues_of(json!({"status": "ok", "extra": 1}))[0].path,
            "result.extra"
        );
        assert_eq!(
            issues_of(json!({"status": "refused", "code": "busy", "message": "m", "rev": 1}))[0]
                .path,
            "result.rev"
        );
        assert_eq!(
            issues_of(json!({"status": "refused", "code": "stale", "message": "m"}))[0].message,
            "must have required property 'rev'"
        );
        assert_eq!(
            issues_of(json!({"status": "invalid", "issues": [{"path": 1, "message": "m"}]}))[0]
                .path,
            "result.issues.0.path"
        );
        assert_eq!(
            issues_of(json!({"status": "needs_confirmation", "confirmId": "", "summary": "s"}))[0]
                .path,
            "result.confirmId"
        );
        assert_eq!(
            issues_of(json!({"status": "cancelled", "by": "user"}))[0].path,
            "result.by"
        );
        assert_eq!(issues_of(json!([]))[0].message, "must be object");
    }
}
