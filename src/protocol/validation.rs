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
use crate::json::{
    write_key, write_separator, write_str_member, write_string, write_value, Map, Value,
};
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

/// What a cached schema checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Slot {
    /// Agent → page messages (`agent-to-page.json`).
    ToPage,
    /// Page → agent messages (`page-to-agent.json`).
    ToAgent,
    /// `page-to-agent.json`'s `#/$defs/hints`.
    Hints,
    /// An array of `page-to-agent.json`'s `#/$defs/fieldChange`.
    FieldChanges,
    /// An array of `page-to-agent.json`'s `#/$defs/issue`.
    Issues,
}

const SLOTS: usize = 5;

impl From<Direction> for Slot {
    fn from(direction: Direction) -> Slot {
        match direction {
            Direction::ToPage => Slot::ToPage,
            Direction::ToAgent => Slot::ToAgent,
        }
    }
}

/// Compiles the schema of `slot` (`None` only if the published schema could
/// not be compiled, which a unit test rules out).
fn build(slot: Slot) -> Option<CompiledSchema> {
    let root = match slot {
        Slot::ToPage => return compile(schemas::AGENT_TO_PAGE, None),
        Slot::ToAgent => return compile(schemas::PAGE_TO_AGENT, None),
        Slot::Hints => r##"{"$ref":"#/$defs/hints"}"##,
        Slot::FieldChanges => r##"{"type":"array","items":{"$ref":"#/$defs/fieldChange"}}"##,
        Slot::Issues => r##"{"type":"array","items":{"$ref":"#/$defs/issue"}}"##,
    };
    compile(schemas::PAGE_TO_AGENT, crate::json::parse(root).ok())
}

/// The schema of `slot`, compiled on first use and kept for the process
/// (compiling costs ~0.1–0.4 ms natively, several times a validation).
fn cached(slot: Slot) -> Option<&'static CompiledSchema> {
    use std::sync::OnceLock;
    static CACHE: [OnceLock<Option<CompiledSchema>>; SLOTS] = [const { OnceLock::new() }; SLOTS];
    CACHE
        .get(slot as usize)?
        .get_or_init(|| build(slot))
        .as_ref()
}

/// The issues of `value` against the schema of `slot` (empty when valid).
pub(crate) fn issues(slot: Slot, value: &Value) -> Vec<Issue> {
    let Some(schema) = cached(slot) else {
        return vec![Issue {
            path: String::new(),
            message: "protocol schema unavailable".into(),
        }];
    };
    Issue::from_schema(schema.validate(value, &ProtocolPatterns))
}

/// Compiles a published schema with its `oneOf`s split (module docs); with
/// `root`, the root's `oneOf` is replaced by `root`'s keywords instead.
fn compile(text: &str, root: Option<Value>) -> Option<CompiledSchema> {
    let mut doc = crate::json::parse(text).ok()?;
    let map = doc.as_object_mut()?;
    match root {
        Some(Value::Object(root)) => {
            map.get("oneOf")?;
            drop_one_of(map);
            for (key, value) in root {
                map.insert(key, value);
            }
        }
        _ => split_one_of(map, "type")?,
    }
    if let Some(result) = map
        .get_mut("$defs")
        .and_then(|defs| defs.as_object_mut())
        .and_then(|defs| defs.get_mut("toolResult"))
        .and_then(Value::as_object_mut)
    {
        split_one_of(result, "status")?;
    }
    CompiledSchema::compile(&doc).ok()
}

/// The object without its `oneOf` (`Map::remove` would be its own code in
/// the wasm only for this).
fn drop_one_of(map: &mut Map) {
    map.retain(|key, _| key != "oneOf");
}

/// The object's `oneOf` replaced by its [`split`] as `allOf`.
fn split_one_of(map: &mut Map, key: &str) -> Option<()> {
    let all_of = split(map.get("oneOf")?, key)?;
    drop_one_of(map);
    map.insert("allOf".into(), all_of);
    Some(())
}

/// `oneOf: [{$ref: R}, …]` keyed on `key` as an `allOf` of `if`/`then`:
/// written as JSON text and parsed (less code than building the values).
fn split(one_of: &Value, key: &str) -> Option<Value> {
    let mut text = String::from("[");
    for branch in one_of.as_array()? {
        let target = branch.get("$ref")?.as_str()?;
        write_separator(&mut text);
        text.push_str("{\"if\":{\"type\":\"object\",\"required\":[");
        write_string(&mut text, key);
        text.push_str("],\"properties\":{");
        write_key(&mut text, key);
        text.push('{');
        write_str_member(&mut text, "$ref", &format!("{}/properties/{}", target, key));
        text.push_str("}}},\"then\":");
        write_value(&mut text, branch);
        text.push('}');
    }
    text.push(']');
    crate::json::parse(&text).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_schema_compiles() {
        for slot in [
            Slot::ToPage,
            Slot::ToAgent,
            Slot::Hints,
            Slot::FieldChanges,
            Slot::Issues,
        ] {
            assert!(build(slot).is_some(), "{slot:?}");
            assert!(cached(slot).is_some(), "{slot:?}");
        }
    }

    /// `split` as it was, building the values: the oracle.
    fn split_by_values(one_of: &Value, key: &str) -> Option<Value> {
        use crate::json::{list, obj, Map};
        let branches = list(one_of, |branch| {
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
        branches.map(Value::Array)
    }

    #[test]
    fn split_builds_the_if_then_pairs() {
        for (text, key) in [
            (schemas::PAGE_TO_AGENT, "type"),
            (schemas::AGENT_TO_PAGE, "type"),
        ] {
            let doc = crate::json::parse(text).unwrap_or_default();
            let one_of = &doc["oneOf"];
            assert!(split(one_of, key).is_some());
            assert_eq!(split(one_of, key), split_by_values(one_of, key));
            let one_of = &doc["$defs"]["toolResult"]["oneOf"];
            assert_eq!(split(one_of, "status"), split_by_values(one_of, "status"));
        }
        let odd = crate::json::parse(r##"[{"$ref":"#/a\"b"},{"$ref":"x","y":[1.50]}]"##)
            .unwrap_or_default();
        assert!(split(&odd, "k\"").is_some());
        assert_eq!(split(&odd, "k\""), split_by_values(&odd, "k\""));
        for bad in ["{}", "[{}]", r#"[{"$ref":1}]"#, "[1]"] {
            let bad = crate::json::parse(bad).unwrap_or_default();
            assert_eq!(split(&bad, "type"), None);
            assert_eq!(split_by_values(&bad, "type"), None);
        }
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
