//! Manifest entries: `ToolManifestSummary` (in `manifest` messages) and
//! `ToolManifest` (a `describe` answer). Both accept unknown properties.

use super::check::{Checker, Obj};
use crate::ids::{is_valid_llm_name, is_valid_tool_name};
use crate::json::{obj, Map, Value};
use crate::prelude::*;

/// Behaviour hints of a tool. Unknown hints are kept for forward compatibility.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Hints {
    pub read_only: Option<bool>,
    pub consequential: Option<bool>,
    pub destructive: Option<bool>,
    pub untrusted_content: Option<bool>,
    pub extra: Map,
}

/// Tool mode; M1 knows only stepwise wizards.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolMode {
    Stepwise,
}

/// One entry of a `manifest` message.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolManifestSummary {
    pub name: String,
    pub llm_name: String,
    pub title: Option<String>,
    pub description: String,
    pub hints: Hints,
    pub mode: Option<ToolMode>,
    pub extra: Map,
}

/// The full entry a `describe` returns: the summary plus the schemas.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolManifest {
    pub summary: ToolManifestSummary,
    pub input_schema: Value,
    pub output_schema: Option<Value>,
}

impl Hints {
    /// The hints as a JSON value (absent hints left out, unknown ones last).
    pub fn to_value(&self) -> Value {
        let mut entries = Vec::new();
        for (key, hint) in [
            ("readOnly", self.read_only),
            ("consequential", self.consequential),
            ("destructive", self.destructive),
            ("untrustedContent", self.untrusted_content),
        ] {
            if let Some(hint) = hint {
                entries.push((key, hint.into()));
            }
        }
        extend(obj(entries), &self.extra)
    }
}

impl ToolManifestSummary {
    /// The entry as a JSON value: fields in declaration order as camelCase,
    /// absent options left out, unknown properties last.
    pub fn to_value(&self) -> Value {
        let mut entries = vec![
            ("name", self.name.as_str().into()),
            ("llmName", self.llm_name.as_str().into()),
        ];
        if let Some(title) = &self.title {
            entries.push(("title", title.as_str().into()));
        }
        entries.push(("description", self.description.as_str().into()));
        entries.push(("hints", self.hints.to_value()));
        if let Some(ToolMode::Stepwise) = self.mode {
            entries.push(("mode", "stepwise".into()));
        }
        extend(obj(entries), &self.extra)
    }
}

impl ToolManifest {
    /// The entry as a JSON value: the summary's, then the schemas.
    pub fn to_value(&self) -> Value {
        let mut value = self.summary.to_value();
        if let Value::Object(map) = &mut value {
            map.insert("inputSchema".into(), self.input_schema.clone());
            if let Some(schema) = &self.output_schema {
                map.insert("outputSchema".into(), schema.clone());
            }
        }
        value
    }
}

/// `value` (an object) with `extra`'s entries added after its own (`flatten`).
fn extend(mut value: Value, extra: &Map) -> Value {
    if let Value::Object(map) = &mut value {
        for (key, item) in extra {
            map.insert(key.clone(), item.clone());
        }
    }
    value
}

const SUMMARY_KEYS: &[&str] = &["name", "llmName", "title", "description", "hints", "mode"];
const HINT_KEYS: &[&str] = &[
    "readOnly",
    "consequential",
    "destructive",
    "untrustedContent",
];

fn extra_of(obj: &Obj<'_>, known: &[&str]) -> Map {
    obj.map
        .iter()
        .filter(|(key, _)| !known.contains(&key.as_str()))
        .map(|(key, value)| (key.clone(), value.clone()))
        .collect()
}

impl Hints {
    pub(crate) fn check(value: &Value, path: &str, c: &mut Checker) -> Option<Hints> {
        let obj = c.object(value, path)?;
        let read_only = obj.opt_bool("readOnly", c);
        let consequential = obj.opt_bool("consequential", c);
        let destructive = obj.opt_bool("destructive", c);
        let untrusted_content = obj.opt_bool("untrustedContent", c);
        Some(Hints {
            read_only: read_only.ok()?,
            consequential: consequential.ok()?,
            destructive: destructive.ok()?,
            untrusted_content: untrusted_content.ok()?,
            extra: extra_of(&obj, HINT_KEYS),
        })
    }
}

impl ToolManifestSummary {
    pub(crate) fn check(value: &Value, path: &str, c: &mut Checker) -> Option<Self> {
        let obj = c.object(value, path)?;
        let name = obj.string("name", false, c).filter(|name| {
            let ok = is_valid_tool_name(name);
            if !ok {
                c.fail(
                    &obj.path_of("name"),
                    "must match pattern \"^[A-Za-z0-9_.-]{1,128}$\"",
                );
            }
            ok
        });
        let llm_name = obj.string("llmName", false, c).filter(|llm| {
            let ok = is_valid_llm_name(llm);
            if !ok {
                c.fail(
                    &obj.path_of("llmName"),
                    "must match pattern \"^[a-zA-Z0-9_-]{1,64}$\"",
                );
            }
            ok
        });
        let title = obj.opt_string("title", c);
        let description = obj.string("description", false, c);
        let hints = obj
            .any("hints", c)
            .and_then(|hints| Hints::check(hints, &obj.path_of("hints"), c));
        let mode = match obj.map.get("mode") {
            None => Ok(None),
            Some(Value::String(mode)) if mode == "stepwise" => Ok(Some(ToolMode::Stepwise)),
            Some(_) => {
                c.fail(
                    &obj.path_of("mode"),
                    "must be equal to one of the allowed values",
                );
                Err(())
            }
        };
        Some(ToolManifestSummary {
            name: name?,
            llm_name: llm_name?,
            title: title.ok()?,
            description: description?,
            hints: hints?,
            mode: mode.ok()?,
            extra: extra_of(&obj, SUMMARY_KEYS),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::testing::json;

    #[test]
    fn summary_round_trips_and_keeps_unknown_properties() {
        let wire = json!({
            "name": "signup.fill", "llmName": "signup__fill", "title": "Fill",
            "description": "Fill the form",
            "hints": {"readOnly": false, "futureHint": true},
            "mode": "stepwise", "futureField": [1]
        });
        let mut c = Checker::default();
        let summary = ToolManifestSummary::check(&wire, "tools.0", &mut c);
        assert!(c.issues.is_empty(), "{:?}", c.issues);
        let summary = summary.unwrap_or_else(|| panic!("valid summary"));
        assert_eq!(summary.hints.extra.get("futureHint"), Some(&json!(true)));
        assert_eq!(summary.to_value(), wire);
        assert_eq!(summary.to_value().to_string(), wire.to_string());
    }

    #[test]
    fn summary_checks_patterns_and_types() {
        let mut c = Checker::default();
        let wire = json!({"name": "bad name", "llmName": "x.y", "description": 1,
                          "hints": {"readOnly": "yes"}, "mode": "wizard"});
        assert_eq!(ToolManifestSummary::check(&wire, "t", &mut c), None);
        let paths: Vec<&str> = c.issues.iter().map(|i| i.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "t.name",
                "t.llmName",
                "t.description",
                "t.hints.readOnly",
                "t.mode"
            ]
        );
    }

    #[test]
    fn manifest_entry_serializes_schemas() {
        let entry = ToolManifest {
            summary: ToolManifestSummary {
                name: "a".into(),
                llm_name: "a".into(),
                title: None,
                description: "d".into(),
                hints: Hints::default(),
                mode: None,
                extra: Map::new(),
            },
            input_schema: json!({"type": "object"}),
            output_schema: None,
        };
        let with_output = ToolManifest {
            output_schema: Some(json!(true)),
            ..entry.clone()
        };
        assert_eq!(
            entry.to_value().to_string(),
            r#"{"name":"a","llmName":"a","description":"d","hints":{},"inputSchema":{"type":"object"}}"#
        );
        assert_eq!(
            with_output.to_value().to_string(),
            r#"{"name":"a","llmName":"a","description":"d","hints":{},"inputSchema":{"type":"object"},"outputSchema":true}"#
        );
    }
}
