//! Manifest entries: `ToolManifestSummary` (in `manifest` messages) and
//! `ToolManifest` (a `describe` answer). Both accept unknown properties.

use crate::prelude::*;
use serde::{Serialize, Serializer};
use serde_json::{Map, Value};

use super::message::string;

/// Behaviour hints of a tool. Unknown hints are kept for forward compatibility.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Hints {
    pub read_only: Option<bool>,
    pub consequential: Option<bool>,
    pub destructive: Option<bool>,
    pub untrusted_content: Option<bool>,
    pub extra: Map<String, Value>,
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
    pub extra: Map<String, Value>,
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
        with_extra(entries, &self.extra)
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
        with_extra(entries, &self.extra)
    }
}

/// The entry as JSON: `to_value`'s (not a derive with `flatten`, which
/// would write an unknown property that repeats a known one twice; a `Map`
/// keeps one).
impl Serialize for ToolManifestSummary {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.to_value().serialize(serializer)
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

/// An object of `entries` with `extra`'s added after them (`flatten`): a
/// repeated key keeps its first place and takes the last value, as inserting
/// them one by one into a `Map` does.
pub(super) fn with_extra(entries: Vec<(&str, Value)>, extra: &Map<String, Value>) -> Value {
    let mut all = Vec::with_capacity(entries.len() + extra.len());
    for (key, value) in entries {
        all.push((String::from(key), value));
    }
    for (key, value) in extra {
        all.push((key.clone(), value.clone()));
    }
    Value::Object(all.into_iter().collect())
}

const SUMMARY_KEYS: &[&str] = &["name", "llmName", "title", "description", "hints", "mode"];
pub(crate) const HINT_KEYS: &[&str] = &[
    "readOnly",
    "consequential",
    "destructive",
    "untrustedContent",
];

fn extra_of(map: &Map<String, Value>, known: &[&str]) -> Map<String, Value> {
    map.iter()
        .filter(|(key, _)| !known.contains(&key.as_str()))
        .map(|(key, value)| (key.clone(), value.clone()))
        .collect()
}

impl Hints {
    /// Builds hints from a value the `hints` schema accepted (plain extraction).
    pub(crate) fn from_value(value: &Value) -> Option<Hints> {
        let map = value.as_object()?;
        let hint = |key: &str| map.get(key).and_then(Value::as_bool);
        Some(Hints {
            read_only: hint("readOnly"),
            consequential: hint("consequential"),
            destructive: hint("destructive"),
            untrusted_content: hint("untrustedContent"),
            extra: extra_of(map, HINT_KEYS),
        })
    }
}

impl ToolManifestSummary {
    /// Builds an entry from a value the `toolManifestSummary` schema accepted.
    pub(crate) fn from_value(value: &Value) -> Option<Self> {
        let map = value.as_object()?;
        Some(ToolManifestSummary {
            name: string(map, "name")?,
            llm_name: string(map, "llmName")?,
            title: map.get("title").and_then(Value::as_str).map(str::to_owned),
            description: string(map, "description")?,
            hints: Hints::from_value(map.get("hints")?)?,
            mode: map.get("mode").map(|_| ToolMode::Stepwise),
            extra: extra_of(map, SUMMARY_KEYS),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{check_page_to_agent, Issue, PageToAgent, Rejection};
    use serde_json::json;

    /// The entry checked as the only tool of a `manifest` message.
    fn check(entry: &Value) -> Result<ToolManifestSummary, Vec<Issue>> {
        let mut message = json!({"protocol": 1, "type": "manifest", "clientId": "p", "rev": 0});
        if let Some(map) = message.as_object_mut() {
            map.insert("tools".into(), Value::Array(vec![entry.clone()]));
        }
        match check_page_to_agent(&message) {
            Ok(PageToAgent::Manifest(mut m)) => Ok(m.tools.remove(0)),
            Err(Rejection::Invalid { issues }) => Err(issues),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn summary_round_trips_and_keeps_unknown_properties() {
        let wire = json!({
            "name": "signup.fill", "llmName": "signup__fill", "title": "Fill",
            "description": "Fill the form",
            "hints": {"readOnly": false, "futureHint": true},
            "mode": "stepwise", "futureField": [1]
        });
        let summary = check(&wire).unwrap_or_else(|issues| panic!("{issues:?}"));
        assert_eq!(summary.hints.extra.get("futureHint"), Some(&json!(true)));
        assert_eq!(summary.to_value(), wire);
        assert_eq!(summary.to_value().to_string(), wire.to_string());
    }

    #[test]
    fn summary_checks_patterns_and_types() {
        let wire = json!({"name": "bad name", "llmName": "x.y", "description": 1,
                          "hints": {"readOnly": "yes"}, "mode": "wizard"});
        let issues = check(&wire).err().unwrap_or_default();
        let paths: Vec<&str> = issues.iter().map(|i| i.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "tools.0.name",
                "tools.0.llmName",
                "tools.0.description",
                "tools.0.hints.readOnly",
                "tools.0.mode"
            ]
        );
    }

    /// Tool `a`, described `d`, no hints, nothing else.
    fn summary_a() -> ToolManifestSummary {
        ToolManifestSummary {
            name: "a".into(),
            llm_name: "a".into(),
            title: None,
            description: "d".into(),
            hints: Hints::default(),
            mode: None,
            extra: Map::new(),
        }
    }

    #[test]
    fn unknown_properties_that_repeat_known_ones_are_inserted_as_into_a_map() {
        // The oracle: the known entries, then each unknown one inserted.
        let inserted = |known: Value, extra: &Map<String, Value>| {
            let mut map = known.as_object().cloned().unwrap_or_default();
            for (key, value) in extra {
                map.insert(key.clone(), value.clone());
            }
            Value::Object(map)
        };
        let extra = |value: Value| value.as_object().cloned().unwrap_or_default();
        let hints = Hints {
            read_only: Some(true),
            consequential: None,
            destructive: Some(false),
            untrusted_content: None,
            extra: extra(json!({"z": 1, "readOnly": false, "consequential": true})),
        };
        let want = inserted(
            json!({"readOnly": true, "destructive": false}),
            &hints.extra,
        );
        assert_eq!(hints.to_value(), want);
        assert_eq!(
            hints.to_value().to_string(),
            r#"{"readOnly":false,"destructive":false,"z":1,"consequential":true}"#
        );
        let summary = ToolManifestSummary {
            extra: extra(json!({"title": "t", "name": "b", "more": [1]})),
            ..summary_a()
        };
        let want = inserted(
            json!({"name": "a", "llmName": "a", "description": "d", "hints": {}}),
            &summary.extra,
        );
        assert_eq!(summary.to_value(), want);
        assert_eq!(
            summary.to_value().to_string(),
            r#"{"name":"b","llmName":"a","description":"d","hints":{},"title":"t","more":[1]}"#
        );
    }

    #[test]
    fn manifest_entry_serializes_schemas() {
        let entry = ToolManifest {
            summary: summary_a(),
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
