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

use crate::prelude::*;
use serde_json::{Map, Value};

use super::manifest::with_extra;
use super::result::Issue;
use super::schemas;
use super::values::list;
use crate::ids::{is_valid_llm_name, is_valid_tool_name};
use crate::schema::{CompiledSchema, PatternMatcher};

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

/// What a cached schema checks: its place in the cache and how it is
/// built. Each slot names its own builder, so a module that never checks
/// a page → agent message (the registry's) carries none of that schema.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Slot {
    index: usize,
    build: fn() -> Option<CompiledSchema>,
}

impl Slot {
    /// Agent → page messages (`agent-to-page.json`).
    pub(crate) const TO_PAGE: Slot = Slot {
        index: 0,
        build: || compile(schemas::AGENT_TO_PAGE),
    };
    /// Page → agent messages (`page-to-agent.json`).
    pub(crate) const TO_AGENT: Slot = Slot {
        index: 1,
        build: || compile(schemas::PAGE_TO_AGENT),
    };
    /// `page-to-agent.json`'s `#/$defs/hints`.
    pub(crate) const HINTS: Slot = Slot {
        index: 2,
        build: || definitions(r##"{"$ref":"#/$defs/hints"}"##),
    };
    /// An array of `page-to-agent.json`'s `#/$defs/fieldChange`.
    pub(crate) const FIELD_CHANGES: Slot = Slot {
        index: 3,
        build: || definitions(r##"{"type":"array","items":{"$ref":"#/$defs/fieldChange"}}"##),
    };
    /// An array of `page-to-agent.json`'s `#/$defs/issue`.
    pub(crate) const ISSUES: Slot = Slot {
        index: 4,
        build: || definitions(r##"{"type":"array","items":{"$ref":"#/$defs/issue"}}"##),
    };
}

const SLOTS: usize = 5;

/// `root`'s keywords over `page-to-agent.json`'s definitions of what a page
/// hands in (`None` only if it could not be compiled, which a unit test
/// rules out: then every check says "protocol schema unavailable").
fn definitions(root: &str) -> Option<CompiledSchema> {
    let mut doc = crate::json_value::parse(schemas::PAGE_TO_AGENT_DEFINITIONS).ok()?;
    let Ok(Value::Object(root)) = crate::json_value::parse(root) else {
        return None;
    };
    doc.as_object_mut()?.extend(root);
    CompiledSchema::compile(&doc).ok()
}

/// The schema of `slot`, compiled on first use and kept for the process
/// (compiling costs ~0.1–0.4 ms natively, several times a validation).
#[cfg(feature = "std")]
fn cached(slot: Slot) -> Option<&'static CompiledSchema> {
    use std::sync::OnceLock;
    static CACHE: [OnceLock<Option<CompiledSchema>>; SLOTS] = [const { OnceLock::new() }; SLOTS];
    CACHE.get(slot.index)?.get_or_init(slot.build).as_ref()
}

/// The schema of `slot`, compiled on first use and kept for the module.
#[cfg(not(feature = "std"))]
fn cached(slot: Slot) -> Option<&'static CompiledSchema> {
    use core::cell::Cell;
    struct Cache([Cell<Option<&'static CompiledSchema>>; SLOTS]);
    // SAFETY: without std the crate is built only for wasm32-unknown-unknown
    // without the atomics feature (`npm run build`), which has one thread; the
    // cells hold shared references to leaked, immutable schemas.
    unsafe impl Sync for Cache {}
    static CACHE: Cache = Cache([const { Cell::new(None) }; SLOTS]);
    let cell = CACHE.0.get(slot.index)?;
    if cell.get().is_none() {
        cell.set((slot.build)().map(|schema| &*Box::leak(Box::new(schema))));
    }
    cell.get()
}

#[cfg(all(not(feature = "std"), target_feature = "atomics"))]
compile_error!("the no-std schema cache assumes one thread (wasm32 without atomics)");

// The validator caps its issues as an `invalid` result does, so that
// `validateMessage` and tool results say "N more issues not shown" alike.
const _: () = assert!(crate::schema::MAX_ISSUES == super::result::MAX_REPORTED_ISSUES);

/// The issues of `value` against the schema of `slot` (empty when valid), at
/// most [`crate::schema::MAX_ISSUES`]: past it the last one counts the rest.
pub(crate) fn issues(slot: Slot, value: &Value) -> Vec<Issue> {
    let Some(schema) = cached(slot) else {
        return vec![Issue {
            path: String::new(),
            message: "protocol schema unavailable".into(),
        }];
    };
    Issue::from_schema(schema.validate(value, &ProtocolPatterns))
}

/// Compiles a published schema with its `oneOf`s split (module docs).
fn compile(text: &str) -> Option<CompiledSchema> {
    let mut doc = crate::json_value::parse(text).ok()?;
    let map = doc.as_object_mut()?;
    split_one_of(map, "type")?;
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

/// The object without its `oneOf`, the other keys in their order
/// (`Map::remove` would move the last key into its place).
/// Rebuilt through a `Vec` and collected as `with_extra` collects (one
/// instance of that code; `Map::retain` keeps indexmap's `retain_in_order`).
fn drop_one_of(map: &mut Map<String, Value>) {
    let kept: Vec<(String, Value)> = core::mem::take(map)
        .into_iter()
        .filter(|(key, _)| key != "oneOf")
        .collect();
    *map = kept.into_iter().collect();
}

/// The object's `oneOf` replaced by its [`split`] as `allOf`.
fn split_one_of(map: &mut Map<String, Value>, key: &str) -> Option<()> {
    let all_of = split(map.get("oneOf")?, key)?;
    drop_one_of(map);
    map.insert("allOf".into(), all_of);
    Some(())
}

/// An object of `entries`, in their order (the manifest's builder: one
/// instance of the map's collecting code).
fn object(entries: Vec<(&str, Value)>) -> Value {
    with_extra(entries, &Map::new())
}

/// `oneOf: [{$ref: R}, …]` keyed on `key` as an `allOf` of `if`/`then`.
/// Built as values (not `json!`, which serializes each part into a value
/// and would keep serde_json's value serializer in the module).
fn split(one_of: &Value, key: &str) -> Option<Value> {
    let branches = list(one_of, |branch| {
        let target = branch.get("$ref")?.as_str()?;
        let mut pointer = String::from(target);
        pointer.push_str("/properties/");
        pointer.push_str(key);
        let reference = object(vec![("$ref", Value::String(pointer))]);
        Some(object(vec![
            (
                "if",
                object(vec![
                    ("type", Value::String("object".into())),
                    ("required", Value::Array(vec![Value::String(key.into())])),
                    ("properties", object(vec![(key, reference)])),
                ]),
            ),
            ("then", branch.clone()),
        ]))
    })?;
    Some(Value::Array(branches))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::codes::Direction;
    use serde_json::json;

    #[test]
    fn every_schema_compiles() {
        let slots = [
            Slot::TO_PAGE,
            Slot::TO_AGENT,
            Slot::HINTS,
            Slot::FIELD_CHANGES,
            Slot::ISSUES,
        ];
        for (index, slot) in slots.into_iter().enumerate() {
            assert_eq!(slot.index, index);
            assert!((slot.build)().is_some(), "{slot:?}");
            assert!(cached(slot).is_some(), "{slot:?}");
        }
        assert_eq!(slots.len(), SLOTS);
    }

    #[test]
    fn split_builds_the_if_then_pairs() {
        let odd = json!([{"$ref": "#/a\"b"}, {"$ref": "x", "y": [1.5]}]);
        // As text: the key order counts too (`Map`'s `==` ignores it).
        assert_eq!(
            split(&odd, "k\"").map(|v| v.to_string()),
            Some(
                json!([
                    {"if": {"type": "object", "required": ["k\""],
                            "properties": {"k\"": {"$ref": "#/a\"b/properties/k\""}}},
                     "then": {"$ref": "#/a\"b"}},
                    {"if": {"type": "object", "required": ["k\""],
                            "properties": {"k\"": {"$ref": "x/properties/k\""}}},
                     "then": {"$ref": "x", "y": [1.5]}},
                ])
                .to_string()
            )
        );
        for text in [schemas::PAGE_TO_AGENT, schemas::AGENT_TO_PAGE] {
            let doc: Value = serde_json::from_str(text).unwrap_or_default();
            assert!(split(&doc["oneOf"], "type").is_some());
        }
        for bad in [json!({}), json!([{}]), json!([{"$ref": 1}]), json!([1])] {
            assert_eq!(split(&bad, "type"), None);
        }
    }

    #[test]
    fn drop_one_of_keeps_the_other_keys_in_order() {
        let mut doc = json!({"a": 1, "oneOf": [], "b": 2, "c": {"oneOf": 3}});
        if let Some(map) = doc.as_object_mut() {
            drop_one_of(map);
        }
        assert_eq!(doc.to_string(), r#"{"a":1,"b":2,"c":{"oneOf":3}}"#);
    }

    /// A manifest of 10,000 `{}` tools (30 KB) fails four required
    /// properties per tool: 40,000 issues, of which 99 are returned and the
    /// rest counted (issue 22, item 1).
    #[test]
    fn a_hostile_manifest_gets_capped_issues() {
        let manifest = json!({
            "protocol": 1, "type": "manifest", "clientId": "5742fe13-f99c-4397-b3ca-88ea6f540ffb",
            "rev": 1, "tools": vec![json!({}); 10_000],
        });
        let found = crate::protocol::validate(&manifest, Direction::ToAgent).unwrap_err();
        assert_eq!(found.len(), crate::schema::MAX_ISSUES);
        assert_eq!(found[0].path, "tools.0.name");
        let last = found
            .last()
            .map(|issue| (issue.path.as_str(), issue.message.as_str()));
        assert_eq!(last, Some(("", "39901 more issues not shown")));
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
