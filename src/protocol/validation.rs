//! Protocol messages checked by the crate's own JSON Schema validator
//! against the published schemas (`schemas.rs`), so `validateMessage` and
//! the bridge's inbound checks agree with them by construction.
//!
//! Each schema is compiled with two `oneOf`s rewritten for precise issues:
//! the root's (over the message types, keyed on `type`) and `toolResult`'s
//! (over the statuses, keyed on `status`) become an `allOf` of
//! `if: {type: object, required: [key], properties: {key: <branch's>}}` /
//! `then: <branch>` pairs. Every branch pins its key with a `const` of its
//! own, so an object with a known key value matches the `oneOf` exactly when
//! it matches that one branch, and the branch's own issues (`tool: must be
//! string`) are reported instead of "must match exactly one schema in
//! oneOf". `toolResult` itself still requires `status` from its enum; the
//! root's `type` is checked before the schema runs (`inbound.rs`), which
//! only validates objects with a known `type` of its direction.

use crate::ids::{is_valid_llm_name, is_valid_tool_name};
use crate::json::{obj, Map, Value};
use crate::prelude::*;
use crate::schema::{CompiledSchema, PatternMatcher};

use super::codes::Direction;
use super::result::Issue;
use super::schemas;

/// The two `pattern`s of the published schemas, matched without a regex
/// engine (exactly what the ECMA-262 patterns accept); any other pattern is
/// an error, so a schema change cannot pass unnoticed.
pub(crate) struct ProtocolPatterns;

impl PatternMatcher for ProtocolPatterns {
    fn is_match(&self, pattern: &str, text: &str) -> Result<bool, String> {
        match pattern {
            "^[A-Za-z0-9_.-]{1,128}$" => Ok(is_valid_tool_name(text)),
            "^[a-zA-Z0-9_-]{1,64}$" => Ok(is_valid_llm_name(text)),
            _ => Err("not a protocol pattern".into()),
        }
    }
}

/// The published schema of one direction, compiled (see the module docs).
#[derive(Debug, Clone)]
pub struct MessageSchema(CompiledSchema);

impl MessageSchema {
    /// Compiles the schema of `direction`; `None` only if the published
    /// schema could not be compiled (a unit test rules that out).
    pub fn new(direction: Direction) -> Option<MessageSchema> {
        let text = match direction {
            Direction::ToPage => schemas::AGENT_TO_PAGE,
            Direction::ToAgent => schemas::PAGE_TO_AGENT,
        };
        compile(text, None).map(MessageSchema)
    }

    /// The issues of `value` (empty when valid).
    pub(crate) fn issues(&self, value: &Value) -> Vec<Issue> {
        issues(&self.0, value)
    }
}

/// The schema's issues as protocol issues.
pub(crate) fn issues(schema: &CompiledSchema, value: &Value) -> Vec<Issue> {
    schema
        .validate(value, &ProtocolPatterns)
        .into_iter()
        .map(|issue| Issue {
            path: issue.path,
            message: issue.message,
        })
        .collect()
}

/// Compiles a published schema with its `oneOf`s split (module docs); with
/// `root`, the root's `oneOf` is replaced by `root`'s keywords instead.
pub(crate) fn compile(text: &str, root: Option<Value>) -> Option<CompiledSchema> {
    let mut doc = crate::json::parse(text).ok()?;
    let map = doc.as_object_mut()?;
    let one_of = map.remove("oneOf")?;
    match root {
        Some(Value::Object(root)) => {
            for (key, value) in root {
                map.insert(key, value);
            }
        }
        _ => {
            map.insert("allOf".into(), split(&one_of, "type")?);
        }
    }
    if let Some(result) = map
        .get_mut("$defs")
        .and_then(|defs| defs.as_object_mut())
        .and_then(|defs| defs.get_mut("toolResult"))
        .and_then(Value::as_object_mut)
    {
        let one_of = result.remove("oneOf")?;
        result.insert("allOf".into(), split(&one_of, "status")?);
    }
    CompiledSchema::compile(&doc).ok()
}

/// `oneOf: [{$ref: R}, …]` keyed on `key` as an `allOf` of `if`/`then`.
fn split(one_of: &Value, key: &str) -> Option<Value> {
    let branches = one_of.as_array()?.iter().map(|branch| {
        let target = branch.get("$ref")?.as_str()?;
        let pinned = obj(vec![("$ref", format!("{target}/properties/{key}").into())]);
        let mut properties = Map::new();
        properties.insert(key.into(), pinned);
        let condition = obj(vec![
            ("type", "object".into()),
            ("required", Value::Array(vec![key.into()])),
            ("properties", Value::Object(properties)),
        ]);
        Some(obj(vec![("if", condition), ("then", branch.clone())]))
    });
    branches.collect::<Option<Vec<_>>>().map(Value::Array)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_published_schemas_compile() {
        assert!(MessageSchema::new(Direction::ToPage).is_some());
        assert!(MessageSchema::new(Direction::ToAgent).is_some());
    }

    #[test]
    fn protocol_patterns_match_the_schema_patterns() {
        let p = ProtocolPatterns;
        assert_eq!(
            p.is_match("^[A-Za-z0-9_.-]{1,128}$", "signup.fill"),
            Ok(true)
        );
        assert_eq!(p.is_match("^[A-Za-z0-9_.-]{1,128}$", "a b"), Ok(false));
        assert_eq!(p.is_match("^[A-Za-z0-9_.-]{1,128}$", ""), Ok(false));
        assert_eq!(
            p.is_match("^[a-zA-Z0-9_-]{1,64}$", "signup__fill"),
            Ok(true)
        );
        assert_eq!(p.is_match("^[a-zA-Z0-9_-]{1,64}$", "a.b"), Ok(false));
        assert!(p.is_match("^a$", "a").is_err());
    }
}
