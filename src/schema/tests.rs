//! Unit tests for the schema module (the official suite runs in
//! `tests/schema_suite.rs`).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use super::*;
use crate::prelude::*;
use serde_json::{json, Map};

/// A matcher for unit tests: the `regex` crate, no ECMA translation.
struct Re;

impl PatternMatcher for Re {
    fn is_match(&self, pattern: &str, text: &str) -> Result<bool, String> {
        regex::Regex::new(pattern)
            .map(|r| r.is_match(text))
            .map_err(|e| e.to_string())
    }
}

fn issues(schema: Value, instance: Value) -> Vec<(String, String)> {
    let compiled = CompiledSchema::compile(&schema).expect("schema compiles");
    let found = compiled.validate(&instance, &Re);
    assert_eq!(
        found.is_empty(),
        compiled.is_valid(&instance, &Re),
        "validate and is_valid disagree"
    );
    pairs(found)
}

/// Issues as (path, message) pairs.
fn pairs(found: Vec<SchemaIssue>) -> Vec<(String, String)> {
    found.into_iter().map(|i| (i.path, i.message)).collect()
}

fn one(path: &str, message: &str) -> Vec<(String, String)> {
    vec![(path.to_string(), message.to_string())]
}

/// Run `f` on a thread with a small stack: 1 MiB is the default stack of
/// `wasm32-unknown-unknown`, and debug builds use far bigger frames than the
/// size-optimised release build that ships.
fn with_small_stack(f: impl FnOnce() + Send + 'static) {
    std::thread::Builder::new()
        .stack_size(1024 * 1024)
        .spawn(f)
        .unwrap()
        .join()
        .unwrap();
}

#[test]
fn issue_paths_join_segments_with_dots() {
    let mut path = String::new();
    for segment in ["items", "0", "name"] {
        push_path_segment(&mut path, segment);
    }
    assert_eq!(path, "items.0.name");
    let mut root = String::new();
    push_path_segment(&mut root, "");
    assert_eq!(root, "");
    push_path_segment(&mut root, "x");
    assert_eq!(root, "x");
}

#[test]
fn dotted_issue_paths() {
    let schema = json!({
        "type": "object",
        "properties": {
            "items": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": { "name": { "type": "string" } }
                }
            }
        }
    });
    assert_eq!(
        issues(schema.clone(), json!({ "items": [{ "name": 1 }] })),
        one("items.0.name", "must be string")
    );
    assert_eq!(
        issues(
            schema.clone(),
            json!({ "items": [{ "name": "a" }, { "name": null }] })
        ),
        one("items.1.name", "must be string")
    );
    assert_eq!(issues(schema.clone(), json!([])), one("", "must be object"));
    assert!(issues(schema, json!({ "items": [] })).is_empty());
}

#[test]
fn required_and_additional_properties_messages() {
    let schema = json!({
        "type": "object",
        "required": ["email", "address"],
        "properties": {
            "email": { "type": "string" },
            "address": {
                "type": "object",
                "required": ["street"],
                "properties": { "street": { "type": "string" } },
                "additionalProperties": false
            }
        },
        "additionalProperties": false
    });
    assert_eq!(
        issues(schema.clone(), json!({})),
        vec![
            ("email".into(), "must have required property 'email'".into()),
            (
                "address".into(),
                "must have required property 'address'".into()
            ),
        ]
    );
    assert_eq!(
        issues(
            schema.clone(),
            json!({ "email": "a@b.c", "address": { "zip": "1" }, "extra": 1 })
        ),
        vec![
            (
                "address.street".into(),
                "must have required property 'street'".into()
            ),
            (
                "address.zip".into(),
                "must NOT have additional properties".into()
            ),
            ("extra".into(), "must NOT have additional properties".into()),
        ]
    );
    assert_eq!(
        issues(
            json!({ "dependentRequired": { "a": ["b"] } }),
            json!({ "a": 1 })
        ),
        one("b", "must have property 'b' when property 'a' is present")
    );
}

#[test]
fn keyword_messages() {
    let cases = [
        (json!({ "minimum": 3 }), json!(2), "must be >= 3"),
        (json!({ "maximum": 3 }), json!(4), "must be <= 3"),
        (json!({ "exclusiveMinimum": 3 }), json!(3), "must be > 3"),
        (json!({ "exclusiveMaximum": 3 }), json!(3.0), "must be < 3"),
        (
            json!({ "multipleOf": 2 }),
            json!(3),
            "must be multiple of 2",
        ),
        (
            json!({ "minLength": 2 }),
            json!("é"),
            "must NOT have fewer than 2 characters",
        ),
        (
            json!({ "maxLength": 1 }),
            json!("ab"),
            "must NOT have more than 1 character",
        ),
        (
            json!({ "pattern": "^a" }),
            json!("ba"),
            "must match pattern \"^a\"",
        ),
        (
            json!({ "minItems": 1 }),
            json!([]),
            "must NOT have fewer than 1 item",
        ),
        (
            json!({ "maxItems": 0 }),
            json!([1]),
            "must NOT have more than 0 items",
        ),
        (
            json!({ "uniqueItems": true }),
            json!([1, 2, 1.0]),
            "must NOT have duplicate items (items 0 and 2 are identical)",
        ),
        (
            json!({ "contains": { "type": "string" } }),
            json!([1]),
            "must contain at least 1 valid item",
        ),
        (
            json!({ "contains": true, "maxContains": 1 }),
            json!([1, 2]),
            "must contain at most 1 valid item",
        ),
        (
            json!({ "minProperties": 1 }),
            json!({}),
            "must NOT have fewer than 1 property",
        ),
        (
            json!({ "maxProperties": 2 }),
            json!({ "a": 1, "b": 2, "c": 3 }),
            "must NOT have more than 2 properties",
        ),
        (
            json!({ "maxLength": 2 }),
            json!("abc"),
            "must NOT have more than 2 characters",
        ),
        (
            json!({ "type": ["string", "null"] }),
            json!(1),
            "must be string or null",
        ),
        (json!({ "type": "integer" }), json!(1.5), "must be integer"),
        (json!({ "const": 1 }), json!(2), "must be equal to constant"),
        (
            json!({ "enum": [1, "a"] }),
            json!("b"),
            "must be equal to one of the allowed values",
        ),
        (
            json!({ "anyOf": [{ "type": "string" }, { "type": "null" }] }),
            json!(1),
            "must match a schema in anyOf",
        ),
        (
            json!({ "oneOf": [{ "type": "string" }] }),
            json!(1),
            "must match exactly one schema in oneOf",
        ),
        (
            json!({ "oneOf": [true, {}] }),
            json!(1),
            "must match exactly one schema in oneOf, but matches schemas 0 and 1",
        ),
        (json!({ "not": {} }), json!(1), "must NOT be valid"),
        (json!(false), json!(1), "is not allowed"),
        (
            json!({ "items": false }),
            json!([1]),
            "must NOT have more than 0 items",
        ),
    ];
    for (schema, instance, message) in cases {
        assert_eq!(
            issues(schema.clone(), instance),
            one("", message),
            "{schema}"
        );
    }
    assert_eq!(
        issues(
            json!({ "propertyNames": { "maxLength": 2 } }),
            json!({ "abc": 1 })
        ),
        one(
            "abc",
            "property name 'abc' must NOT have more than 2 characters"
        )
    );
    assert_eq!(
        issues(json!({ "unevaluatedProperties": false }), json!({ "a": 1 })),
        one("a", "must NOT have unevaluated properties")
    );
    assert_eq!(
        issues(
            json!({ "prefixItems": [true], "unevaluatedItems": false }),
            json!([1, 2])
        ),
        one("1", "must NOT have unevaluated items")
    );
    // then/else spill their issues; the `if` condition does not.
    assert_eq!(
        issues(
            json!({
                "if": { "properties": { "country": { "const": "US" } } },
                "then": { "required": ["zip"] }
            }),
            json!({ "country": "US" })
        ),
        one("zip", "must have required property 'zip'")
    );
}

#[test]
fn all_failures_reported_in_order() {
    let schema = json!({
        "type": "object",
        "properties": {
            "a": { "type": "string", "minLength": 3, "pattern": "^x" },
            "b": { "type": "integer", "minimum": 0 }
        },
        "required": ["c"]
    });
    assert_eq!(
        issues(schema, json!({ "b": -1.5, "a": "y" })),
        vec![
            ("c".into(), "must have required property 'c'".into()),
            ("b".into(), "must be integer".into()),
            ("b".into(), "must be >= 0".into()),
            ("a".into(), "must NOT have fewer than 3 characters".into()),
            ("a".into(), "must match pattern \"^x\"".into()),
        ]
    );
}

#[test]
fn cyclic_refs_do_not_overflow() {
    with_small_stack(|| {
        let schemas = [
            json!({ "$ref": "#" }),
            json!({ "$defs": { "a": { "$ref": "#/$defs/b" }, "b": { "$ref": "#/$defs/a" } }, "$ref": "#/$defs/a" }),
            json!({ "allOf": [{ "$ref": "#" }] }),
            json!({ "not": { "$ref": "#" } }),
            // Exponential without the abort: every level doubles.
            json!({ "anyOf": [{ "$ref": "#" }, { "$ref": "#" }] }),
            json!({ "$dynamicAnchor": "x", "anyOf": [{ "$dynamicRef": "#x" }, { "$dynamicRef": "#x" }] }),
        ];
        for schema in schemas {
            let compiled = CompiledSchema::compile(&schema).unwrap();
            let found = compiled.validate(&json!({ "a": 1 }), &Re);
            assert_eq!(found.len(), 1, "{schema}: {found:?}");
            assert!(found[0].message.contains("maximum depth"), "{found:?}");
            assert!(!compiled.is_valid(&json!(1), &Re));
        }
        // A legitimately recursive schema still works.
        let tree = json!({
            "type": "object",
            "properties": { "children": { "type": "array", "items": { "$ref": "#" } } },
            "unevaluatedProperties": false
        });
        let compiled = CompiledSchema::compile(&tree).unwrap();
        let mut deep = json!({});
        for _ in 0..20 {
            deep = json!({ "children": [deep] });
        }
        assert!(compiled.is_valid(&deep, &Re));
        deep = json!({ "children": [deep], "oops": 1 });
        assert_eq!(
            compiled.validate(&deep, &Re),
            vec![SchemaIssue {
                path: "oops".into(),
                message: "must NOT have unevaluated properties".into()
            }]
        );
    });
}

#[test]
fn invalid_pattern_is_an_issue() {
    assert_eq!(
        issues(json!({ "pattern": "(" }), json!("x"))[0]
            .1
            .split(':')
            .next(),
        Some("invalid pattern \"(\"")
    );
    let found = issues(
        json!({ "patternProperties": { "(": true, "^a": { "type": "string" } } }),
        json!({ "a": 1, "b": 2 }),
    );
    assert_eq!(found.len(), 2, "{found:?}");
    assert_eq!(found[0].0, "");
    assert!(found[0].1.starts_with("invalid pattern \"(\""));
    assert_eq!(found[1], ("a".to_string(), "must be string".to_string()));
    // Non-strings are not checked against `pattern`.
    assert!(issues(json!({ "pattern": "(" }), json!(1)).is_empty());
}

#[test]
fn huge_numbers() {
    let big: Value = serde_json::from_str::<Value>("1e308").unwrap();
    assert!(issues(json!({ "type": "integer" }), big.clone()).is_empty());
    assert_eq!(
        issues(json!({ "multipleOf": 0.123456789 }), big.clone()),
        one("", "must be multiple of 0.123456789")
    );
    assert!(issues(json!({ "multipleOf": 1e300 }), big.clone()).is_empty());
    assert_eq!(issues(json!({ "maximum": u64::MAX }), big.clone()).len(), 1);
    assert!(issues(json!({ "minimum": i64::MIN }), json!(-1e300)).len() == 1);
    assert!(issues(json!({ "maximum": 1e300 }), json!(u64::MAX)).is_empty());
    assert_eq!(
        issues(
            json!({ "exclusiveMaximum": 9007199254740992.0 }),
            json!(9007199254740993u64)
        ),
        one("", "must be < 9007199254740992.0")
    );
    assert!(issues(json!({ "multipleOf": 3 }), json!(u64::MAX)).is_empty());
    assert!(issues(json!({ "multipleOf": 1e-300 }), json!(1e-300)).is_empty());
    assert!(issues(json!({ "multipleOf": 7 }), json!(i64::MIN)).len() == 1);
    assert!(issues(json!({ "maxLength": 1e300 }), json!("abc")).is_empty());
    assert!(issues(json!({ "const": 1 }), json!(1.0)).is_empty());
    assert!(issues(
        json!({ "enum": [[1.0, { "a": 2 }]] }),
        json!([1, { "a": 2.0 }])
    )
    .is_empty());
}

fn nested_arrays(depth: usize) -> Value {
    let mut v = json!("leaf");
    for _ in 0..depth {
        v = Value::Array(vec![v]);
    }
    v
}

/// Build deep values on a thread with a big stack (values drop recursively),
/// evaluate them on a 1 MiB one.
fn with_deep_values(build: fn() -> Vec<Value>, check: fn(&[Value])) {
    std::thread::Builder::new()
        .stack_size(64 * 1024 * 1024)
        .spawn(move || {
            let values = alloc::sync::Arc::new(build());
            let shared = alloc::sync::Arc::clone(&values);
            with_small_stack(move || check(&shared));
            drop(values);
        })
        .unwrap()
        .join()
        .unwrap();
}

/// `{ key: inner }`, built without `json!` (which would serialize `inner`
/// again, recursively).
fn wrap(key: &str, inner: Value) -> Value {
    Value::Object(Map::from_iter([(key.to_string(), inner)]))
}

/// A schema of `depth` nested `items`.
fn nested_items_schema(depth: usize) -> Value {
    let mut schema = json!({ "type": "string" });
    for _ in 0..depth {
        schema = wrap("items", schema);
    }
    schema
}

/// A `const` whose value nests `depth` objects.
fn deep_object_const(depth: usize) -> Value {
    let mut value = json!(1);
    for _ in 0..depth {
        value = wrap("a", value);
    }
    wrap("const", value)
}

#[test]
fn depth_limits_hold_at_the_boundary() {
    // On a big stack throughout: a compiled schema 512 deep drops recursively
    // (the small-stack guarantees are `deeply_nested_schemas`' business).
    let run = || {
        let schemas = [
            nested_items_schema(MAX_SCHEMA_DEPTH),
            nested_items_schema(MAX_SCHEMA_DEPTH + 1),
            wrap("const", nested_arrays(MAX_SCHEMA_DEPTH)),
            wrap("const", nested_arrays(MAX_SCHEMA_DEPTH + 1)),
            deep_object_const(MAX_SCHEMA_DEPTH),
            deep_object_const(MAX_SCHEMA_DEPTH + 1),
        ];
        for pair in schemas.chunks(2) {
            let [at_limit, over] = pair else {
                panic!("pairs");
            };
            assert!(CompiledSchema::compile(at_limit).is_ok());
            assert!(matches!(
                CompiledSchema::compile(over),
                Err(SchemaError::TooDeep { .. })
            ));
        }
    };
    std::thread::Builder::new()
        .stack_size(64 * 1024 * 1024)
        .spawn(run)
        .unwrap()
        .join()
        .unwrap();
}

#[test]
fn deeply_nested_instance() {
    with_deep_values(
        || {
            vec![
                nested_arrays(5_000),
                Value::Object(Map::from_iter([(
                    "const".to_string(),
                    nested_arrays(5_000),
                )])),
                Value::Object(Map::from_iter([("const".to_string(), nested_arrays(400))])),
                Value::Array((0..20).map(|_| nested_arrays(600)).collect()),
            ]
        },
        |values| {
            let [deep, too_deep_const, const_schema, many] = values else {
                panic!("four values");
            };
            // Recursion through the instance stops at the evaluation depth limit.
            let compiled = CompiledSchema::compile(&json!({ "items": { "$ref": "#" } })).unwrap();
            let found = compiled.validate(deep, &Re);
            assert_eq!(found.len(), 1);
            assert!(found[0].message.contains("maximum depth"), "{found:?}");
            assert!(found[0].path.starts_with("0.0.0."));
            assert!(!compiled.is_valid(deep, &Re));
            // Keywords that do not recurse into the instance are fine.
            let flat = CompiledSchema::compile(&json!({ "type": "array", "minItems": 1 })).unwrap();
            assert!(flat.validate(deep, &Re).is_empty());
            // Value comparisons (const / enum / uniqueItems) are bounded too.
            assert!(matches!(
                CompiledSchema::compile(too_deep_const),
                Err(SchemaError::TooDeep { ref location }) if location == "#/const"
            ));
            let same = CompiledSchema::compile(const_schema).unwrap();
            assert!(!same.is_valid(deep, &Re));
            assert!(same.is_valid(&const_schema["const"], &Re));
            let unique = CompiledSchema::compile(&json!({ "uniqueItems": true })).unwrap();
            assert!(unique.is_valid(many, &Re));
            // Shallow recursion is fine.
            let shallow = nested_arrays(50);
            let strings = CompiledSchema::compile(&json!({
                "anyOf": [{ "type": "string" }, { "type": "array", "items": { "$ref": "#" } }]
            }))
            .unwrap();
            assert!(strings.is_valid(&shallow, &Re));
            assert!(strings.validate(&shallow, &Re).is_empty());
        },
    );
}

#[test]
fn deeply_nested_schemas() {
    fn nested_items(depth: usize) -> Value {
        let mut schema = json!({ "type": "string" });
        for _ in 0..depth {
            // Not `json!`: it would serialize (recursively) the nested value.
            schema = Value::Object(Map::from_iter([("items".to_string(), schema)]));
        }
        schema
    }
    with_deep_values(
        || vec![nested_items(5_000), nested_items(300), nested_arrays(400)],
        |values| {
            let [too_deep, deep, instance] = values else {
                panic!("three values");
            };
            assert!(matches!(
                CompiledSchema::compile(too_deep),
                Err(SchemaError::TooDeep { .. })
            ));
            let compiled = CompiledSchema::compile(deep).unwrap();
            let found = compiled.validate(instance, &Re);
            assert!(found[0].message.contains("maximum depth"), "{found:?}");
            let shallow =
                CompiledSchema::compile(&json!({ "items": { "items": { "type": "string" } } }))
                    .unwrap();
            assert!(shallow.is_valid(&nested_arrays(2), &Re));
        },
    );
}

#[test]
fn compile_errors() {
    let err = |s: Value| CompiledSchema::compile(&s).unwrap_err();
    assert!(matches!(err(json!(1)), SchemaError::NotASchema { .. }));
    assert!(matches!(
        err(json!({ "properties": { "a": 1 } })),
        SchemaError::NotASchema { ref location } if location == "#/properties/a"
    ));
    // Bundled are the draft 2020-12 meta-schemas only.
    for uri in [
        "https://json-schema.org/draft/2019-09/schema",
        "https://json-schema.org/draft/2020-12/hyper-schema",
        "https://json-schema.org/draft/2020-12/meta/hyper-schema",
        "http://json-schema.org/draft/2020-12/schema",
    ] {
        assert!(matches!(
            err(json!({ "$ref": uri })),
            SchemaError::RemoteRef { uri: ref u, .. } if u == uri
        ));
    }
    assert!(matches!(
        err(json!({ "$ref": "other.json" })),
        SchemaError::RemoteRef { .. }
    ));
    assert!(matches!(
        err(json!({ "$ref": "#/$defs/missing" })),
        SchemaError::UnresolvedRef { .. }
    ));
    assert!(matches!(
        err(json!({ "$ref": "#nope" })),
        SchemaError::UnresolvedRef { .. }
    ));
    assert!(matches!(
        err(json!({ "type": "strin" })),
        SchemaError::InvalidKeyword { .. }
    ));
    assert!(matches!(
        err(json!({ "items": [{ "type": "string" }] })),
        SchemaError::InvalidKeyword { ref keyword, .. } if keyword == "items"
    ));
    assert!(matches!(
        err(json!({ "required": "a" })),
        SchemaError::InvalidKeyword { .. }
    ));
    assert!(matches!(
        err(json!({ "minLength": -1 })),
        SchemaError::InvalidKeyword { .. }
    ));
    assert!(matches!(
        err(json!({ "multipleOf": 0 })),
        SchemaError::InvalidKeyword { .. }
    ));
    assert!(matches!(
        err(json!({ "$defs": { "a": { "$id": "x" }, "b": { "$id": "x" } } })),
        SchemaError::DuplicateId { .. }
    ));
    // `$id` may end in an empty fragment, never a non-empty one.
    assert!(CompiledSchema::compile(&json!({ "$id": "https://example.com/s.json#" })).is_ok());
    assert!(matches!(
        err(json!({ "$id": "https://example.com/s.json#part" })),
        SchemaError::InvalidKeyword { ref keyword, .. } if keyword == "$id"
    ));
    // An anchor names one place in its resource; the same name in another
    // resource is another anchor.
    assert!(matches!(
        err(json!({ "$defs": { "a": { "$anchor": "x" }, "b": { "$anchor": "x" } } })),
        SchemaError::DuplicateAnchor { ref anchor, .. } if anchor == "x"
    ));
    assert!(CompiledSchema::compile(&json!({
        "$ref": "#x",
        "$defs": {
            "a": { "$anchor": "x", "type": "string" },
            "b": { "$id": "b.json", "$anchor": "x", "type": "number" }
        }
    }))
    .is_ok());
    // A plain and a dynamic anchor of one name on one schema are one place.
    assert!(CompiledSchema::compile(&json!({
        "$ref": "#x",
        "$defs": { "a": { "$anchor": "x", "$dynamicAnchor": "x", "type": "string" } }
    }))
    .is_ok());
    let text = err(json!({ "$ref": "https://example.com/s.json" })).to_string();
    assert!(text.contains("unsupported remote reference"), "{text}");
    // Unreferenced, unknown and annotation keywords are not compiled.
    assert!(CompiledSchema::compile(&json!({
        "x-unknown": { "type": 5 },
        "format": "email",
        "contentMediaType": "application/json",
        "$defs": { "unused": { "type": "string" } },
        "definitions": { "legacy": { "minimum": 1 } },
        "properties": { "n": { "$ref": "#/definitions/legacy" } }
    }))
    .is_ok());
}

#[test]
fn refs_ids_and_anchors() {
    let schema = json!({
        "$id": "https://example.com/tool.json",
        "type": "object",
        "properties": {
            "email": { "$ref": "#email" },
            "address": { "$ref": "address.json" },
            "tags": { "$ref": "#/$defs/tags" }
        },
        "$defs": {
            "email": { "$anchor": "email", "type": "string", "format": "email" },
            "address": {
                "$id": "address.json",
                "type": "object",
                "required": ["street"],
                "properties": { "street": { "$ref": "#/$defs/line" } },
                "$defs": { "line": { "type": "string", "minLength": 1 } }
            },
            "tags": { "type": "array", "items": { "type": "string" }, "uniqueItems": true }
        }
    });
    assert!(issues(
        schema.clone(),
        json!({ "email": "not-checked-format", "address": { "street": "x" }, "tags": ["a"] })
    )
    .is_empty());
    assert_eq!(
        issues(
            schema,
            json!({ "email": 1, "address": { "street": "" }, "tags": ["a", 2] })
        ),
        vec![
            ("email".into(), "must be string".into()),
            (
                "address.street".into(),
                "must NOT have fewer than 1 character".into()
            ),
            ("tags.1".into(), "must be string".into()),
        ]
    );
}

/// A schema with `$anchor` and `$dynamicAnchor` of one name is a dynamic
/// anchor too: a `$dynamicRef` to it looks for the outermost one.
#[test]
fn an_anchor_that_is_also_dynamic_is_found_dynamically() {
    let schema = json!({
        "$id": "https://example.com/root",
        "$ref": "list",
        "$defs": {
            "items": { "$dynamicAnchor": "items", "type": "string" },
            "list": {
                "$id": "list",
                "type": "array",
                "items": { "$dynamicRef": "#items" },
                "$defs": {
                    "items": { "$anchor": "items", "$dynamicAnchor": "items", "type": "number" }
                }
            }
        }
    });
    assert!(issues(schema.clone(), json!(["a"])).is_empty());
    assert_eq!(issues(schema, json!([1])), one("0", "must be string"));
}

#[test]
fn compiled_schema_is_reusable_and_shareable() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<CompiledSchema>();
    let compiled = CompiledSchema::compile(&json!({ "type": "integer" })).unwrap();
    for i in 0..3 {
        assert!(compiled.is_valid(&json!(i), &Re));
        assert!(!compiled.is_valid(&json!("x"), &Re));
    }
}

/// The abort messages are spelled out in `eval.rs`; they name the limits.
#[test]
fn limit_messages_name_the_limits() {
    assert_eq!(
        eval::STEPS_MESSAGE,
        format!("schema evaluation exceeded {MAX_EVAL_STEPS} steps")
    );
    assert_eq!(
        eval::DEPTH_MESSAGE,
        format!("schema evaluation exceeded the maximum depth of {MAX_EVAL_DEPTH} (cyclic $ref?)")
    );
}

/// The step budget allows exactly `MAX_EVAL_STEPS` steps: `items: true`
/// over `n` items takes `n + 2` (the array and its one keyword, then each
/// item, a `true` schema with no keywords).
#[test]
fn the_step_budget_holds_at_its_boundary() {
    let schema = json!({ "items": true });
    let at_limit = Value::Array(vec![Value::Null; MAX_EVAL_STEPS - 2]);
    assert!(issues(schema.clone(), at_limit).is_empty());
    let over = Value::Array(vec![Value::Null; MAX_EVAL_STEPS - 1]);
    // The last item is the step past the budget, and the abort says where.
    let last = (MAX_EVAL_STEPS - 2).to_string();
    assert_eq!(issues(schema, over), one(&last, eval::STEPS_MESSAGE));
}

/// A call's input is validated from its text, and building its value is
/// charged to the same budget first: within it, the issues are those of the
/// built value; a text whose value alone would spend the budget is refused
/// at the root, unbuilt; and what the building spent is not there for the
/// evaluation.
#[test]
fn a_text_pays_for_its_value_out_of_the_same_budget() {
    let compiled = CompiledSchema::compile(&json!({ "items": { "type": "integer" } })).unwrap();
    for text in ["[1,2,\"x\"]", "[]", r#"{"a":1}"#, "[1.5, 2.0]", " [ ] "] {
        let value = crate::json_value::parse(text).unwrap();
        assert_eq!(
            compiled.validate_text(text, &Re),
            compiled.validate(&value, &Re),
            "{text}"
        );
    }
    assert_eq!(
        compiled.validate_text("nul", &Re),
        vec![SchemaIssue {
            path: String::new(),
            message: "is not JSON text".into()
        }]
    );
    // 1 MiB of zeros: about 540M units to build, over the 64M of the budget.
    let zeros = format!("[{}0]", "0,".repeat(524_287));
    assert_eq!(
        pairs(compiled.validate_text(&zeros, &Re)),
        one("", eval::STEPS_MESSAGE)
    );
    // 60,000 nulls: building costs about 62M units and evaluating them
    // under `items: true` 3.8M, each within the budget alone, not together.
    let nulls = format!("[{}null]", "null,".repeat(59_999));
    let items_true = CompiledSchema::compile(&json!({ "items": true })).unwrap();
    let value = crate::json_value::parse(&nulls).unwrap();
    assert!(build_units(&nulls) < MAX_EVAL_STEPS * UNITS_PER_STEP);
    assert!(items_true.validate(&value, &Re).is_empty());
    let found = pairs(items_true.validate_text(&nulls, &Re));
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].1, eval::STEPS_MESSAGE);
    assert!(!found[0].0.is_empty(), "stopped at an item, after building");
}

/// `unevaluatedItems` looks only at arrays and `unevaluatedProperties`
/// only at objects, whatever the other holds.
#[test]
fn unevaluated_keywords_ignore_the_other_container() {
    assert!(issues(json!({ "unevaluatedItems": false }), json!({ "a": 1 })).is_empty());
    assert!(issues(json!({ "unevaluatedProperties": false }), json!([1, 2])).is_empty());
    assert_eq!(
        issues(json!({ "unevaluatedItems": false }), json!([1])),
        one("0", "must NOT have unevaluated items")
    );
}

/// `SchemaError::message` spells `MAX_SCHEMA_DEPTH` out, and writes what the
/// `format!`-based `Display` wrote.
#[test]
fn error_messages_as_formatted() {
    let l = || "#/a".to_string();
    let s = |t: &str| t.to_string();
    let cases = [
        (
            SchemaError::NotASchema { location: l() },
            "schema at #/a must be an object or a boolean".to_string(),
        ),
        (
            SchemaError::InvalidKeyword {
                location: l(),
                keyword: s("type"),
                reason: s("r"),
            },
            "invalid \"type\" at #/a: r".to_string(),
        ),
        (
            SchemaError::RemoteRef {
                location: l(),
                reference: s("x"),
                uri: s("u"),
            },
            "unsupported remote reference \"x\" at #/a (resolves to u, which is not inside the schema document)".to_string(),
        ),
        (
            SchemaError::UnresolvedRef {
                location: l(),
                reference: s("x"),
                reason: s("r"),
            },
            "cannot resolve reference \"x\" at #/a: r".to_string(),
        ),
        (
            SchemaError::DuplicateId {
                location: l(),
                uri: s("u"),
            },
            "duplicate $id \"u\" at #/a".to_string(),
        ),
        (
            SchemaError::DuplicateAnchor {
                location: l(),
                anchor: s("n"),
            },
            "duplicate anchor \"n\" at #/a".to_string(),
        ),
        (
            SchemaError::TooDeep { location: l() },
            format!("schema at #/a is nested deeper than {MAX_SCHEMA_DEPTH} levels"),
        ),
    ];
    for (error, want) in cases {
        assert_eq!(error.message(), want);
        assert_eq!(error.to_string(), want);
    }
}

const META: &str = "https://json-schema.org/draft/2020-12/schema";

/// The bundled draft 2020-12 metaschema validates schemas.
#[test]
fn bundled_metaschema() {
    let meta = CompiledSchema::compile(&json!({ "$ref": META })).unwrap();
    let valid = |v: Value| meta.is_valid(&v, &Re) && meta.validate(&v, &Re).is_empty();
    for schema in [
        json!(true),
        json!({}),
        json!({
            "$id": "https://example.com/s",
            "type": ["object", "null"],
            "properties": { "a": { "type": "string", "minLength": 1, "format": "email" } },
            "required": ["a"],
            "$defs": { "n": { "$anchor": "n", "type": "integer", "minimum": 0 } },
            "additionalProperties": { "$ref": "#n" },
            "x-unknown": 1
        }),
    ] {
        assert!(valid(schema.clone()), "{schema}");
    }
    for schema in [
        json!({ "type": 12 }),
        json!({ "type": "strin" }),
        json!(12),
        json!({ "minLength": -1 }),
        json!({ "required": "a" }),
        json!({ "$defs": { "a": { "type": 1 } } }),
        json!({ "properties": { "a": { "items": [true] } } }),
        json!({ "$anchor": "1bad" }),
        json!({ "$id": "https://example.com/s#frag" }),
    ] {
        assert!(!valid(schema.clone()), "{schema}");
    }
    let found = issues(json!({ "$ref": META }), json!({ "type": 12 }));
    assert!(found.iter().all(|(path, _)| path == "type"), "{found:?}");
    assert!(!found.is_empty());

    // With a fragment, into one vocabulary.
    let simple = json!({ "$ref": "https://json-schema.org/draft/2020-12/meta/validation#/$defs/simpleTypes" });
    assert!(issues(simple.clone(), json!("integer")).is_empty());
    assert_eq!(
        issues(simple, json!("strin")),
        one("", "must be equal to one of the allowed values")
    );
    // `$dynamicRef` too; `#meta` is the metaschema's dynamic anchor.
    let dynamic = CompiledSchema::compile(
        &json!({ "$dynamicRef": "https://json-schema.org/draft/2020-12/meta/core#meta" }),
    )
    .unwrap();
    // The core vocabulary alone: it checks `$anchor`, not `type`, also in
    // `$defs` (its `$dynamicRef: "#meta"` lands on itself).
    assert!(dynamic.is_valid(&json!({ "type": 1 }), &Re));
    assert!(dynamic.is_valid(&json!({ "$defs": { "a": { "type": 1 } } }), &Re));
    assert!(!dynamic.is_valid(&json!({ "$defs": { "a": { "$anchor": "1bad" } } }), &Re));
}

/// A schema extending the metaschema through `$dynamicAnchor: meta` is
/// where the metaschema's `$dynamicRef: "#meta"` lands: its
/// `unevaluatedProperties: false` applies to every subschema.
#[test]
fn bundled_metaschema_extended_by_dynamic_anchor() {
    let strict = CompiledSchema::compile(&json!({
        "$id": "https://example.com/strict-meta",
        "$dynamicAnchor": "meta",
        "$ref": META,
        "unevaluatedProperties": false
    }))
    .unwrap();
    let plain = CompiledSchema::compile(&json!({ "$ref": META })).unwrap();
    let nested_typo = json!({ "properties": { "a": { "typo": "string" } } });
    let nested_ok = json!({ "properties": { "a": { "type": "string" } } });
    assert!(plain.is_valid(&nested_typo, &Re));
    assert!(!strict.is_valid(&nested_typo, &Re));
    assert!(!strict.validate(&nested_typo, &Re).is_empty());
    assert!(strict.is_valid(&nested_ok, &Re));
    assert!(!strict.is_valid(&json!({ "typo": 1 }), &Re));
    // Without the anchor the nested schemas get the plain metaschema.
    let shallow = CompiledSchema::compile(&json!({
        "$ref": META,
        "unevaluatedProperties": false
    }))
    .unwrap();
    assert!(shallow.is_valid(&nested_typo, &Re));
    assert!(!shallow.is_valid(&json!({ "typo": 1 }), &Re));
}

/// The bundled documents are parsed and compiled only when referenced, and
/// only those referenced; errors inside them name the document.
#[test]
fn bundled_metaschemas_load_lazily() {
    let nodes = |s: Value| CompiledSchema::compile(&s).unwrap().nodes.len();
    assert_eq!(nodes(json!({ "$schema": META, "type": "string" })), 1);
    let content = nodes(json!({ "$ref": "https://json-schema.org/draft/2020-12/meta/content" }));
    let all = nodes(json!({ "$ref": META }));
    assert!(content < 10 && all > 50, "{content} {all}");
    // The document being compiled may define a bundled URI itself: it wins.
    assert_eq!(
        issues(
            json!({
                "$ref": "https://json-schema.org/draft/2020-12/meta/core",
                "$defs": { "own": { "$id": "https://json-schema.org/draft/2020-12/meta/core", "type": "string" } }
            }),
            json!(1)
        ),
        one("", "must be string")
    );
    let err = |s: Value| CompiledSchema::compile(&s).unwrap_err();
    assert_eq!(
        err(
            json!({ "$ref": "https://json-schema.org/draft/2020-12/meta/core#/$defs/anchorString/type" })
        ),
        SchemaError::NotASchema {
            location: "https://json-schema.org/draft/2020-12/meta/core#/$defs/anchorString/type"
                .to_string()
        }
    );
    assert!(matches!(
        err(json!({ "properties": { "a": { "$ref": "https://json-schema.org/draft/2020-12/schema#/nope" } } })),
        SchemaError::UnresolvedRef { ref location, .. } if location == "#/properties/a"
    ));
}

/// Every bundled document parses, has the `$id` it is bundled under and
/// compiles on its own.
#[test]
fn bundled_documents_parse() {
    for name in [
        "schema",
        "meta/core",
        "meta/applicator",
        "meta/unevaluated",
        "meta/validation",
        "meta/meta-data",
        "meta/format-annotation",
        "meta/content",
    ] {
        let uri = format!("https://json-schema.org/draft/2020-12/{name}");
        let k = meta::index(&uri).unwrap();
        let loaded = meta::Loaded::default();
        let doc = meta::load(&loaded, k).unwrap();
        assert_eq!(doc["$id"], uri.as_str());
        assert_eq!(doc["$dynamicAnchor"], "meta");
        assert!(CompiledSchema::compile(&json!({ "$ref": uri })).is_ok());
    }
    assert_eq!(meta::index("https://json-schema.org/draft/2020-12/"), None);
    assert_eq!(meta::split_pointer("3/a"), (Some(3), "/a"));
    assert_eq!(meta::split_pointer("/a"), (None, "/a"));
}

/// A schema nested deeper than the metaschema can follow within
/// `MAX_EVAL_DEPTH` (several evaluations per level), checked on a
/// wasm-sized stack: an issue, no overflow. (200 levels: far more than
/// the 128 that `serde_json::from_str` parses; a 2000-level `json!` value
/// alone overflows this stack in a debug build.)
#[test]
fn bundled_metaschema_on_deep_schemas() {
    with_small_stack(|| {
        let meta = CompiledSchema::compile(&json!({ "$ref": META })).unwrap();
        let mut deep = json!({ "type": "string" });
        for _ in 0..200 {
            deep = json!({ "not": deep });
        }
        assert!(!meta.is_valid(&deep, &Re));
        let found = meta.validate(&deep, &Re);
        assert!(
            found.iter().any(|i| i.message.contains("maximum depth")),
            "{found:?}"
        );
        let mut fine = json!({ "type": "string" });
        for _ in 0..20 {
            fine = json!({ "items": fine });
        }
        assert!(meta.is_valid(&fine, &Re));
    });
}

/// `n` empty objects.
fn empties(n: usize) -> Value {
    Value::Array(vec![json!({}); n])
}

/// Past `MAX_ISSUES` issues the rest are counted: the first `MAX_ISSUES - 1`
/// in order, then how many more there were (issue 22, item 1: 10,000 `{}`
/// against four required names are 40,000 issues).
#[test]
fn issues_are_capped_and_the_rest_counted() {
    let schema =
        json!({ "type": "array", "items": { "type": "object", "required": ["a", "b", "c", "d"] } });
    let found = issues(schema.clone(), empties(10_000));
    assert_eq!(found.len(), MAX_ISSUES);
    let mut want = Vec::new();
    for i in 0..25 {
        for name in ["a", "b", "c", "d"] {
            want.push((
                format!("{i}.{name}"),
                format!("must have required property '{name}'"),
            ));
        }
    }
    want.truncate(MAX_ISSUES - 1);
    want.push((String::new(), "39901 more issues not shown".to_owned()));
    assert_eq!(found, want);
    // Exactly `MAX_ISSUES` are all shown; one more and two are counted.
    let all = issues(schema.clone(), empties(MAX_ISSUES / 4));
    assert_eq!(all.len(), MAX_ISSUES);
    assert_eq!(all.last().unwrap().0, format!("{}.d", MAX_ISSUES / 4 - 1));
    let five_more = issues(
        json!({ "items": { "type": "string" } }),
        json!(vec![0; 104]),
    );
    assert_eq!(five_more.len(), MAX_ISSUES);
    assert_eq!(
        five_more[98],
        ("98".to_owned(), "must be string".to_owned())
    );
    assert_eq!(
        five_more[99],
        (String::new(), "5 more issues not shown".to_owned())
    );
}

/// `propertyNames` rewrites the issues its names found; past the cap they
/// are counted all the same.
#[test]
fn property_name_issues_are_capped() {
    let names: Map<String, Value> = (0..300).map(|i| (format!("name{i}"), json!(1))).collect();
    let found = issues(
        json!({ "propertyNames": { "maxLength": 2 } }),
        Value::Object(names),
    );
    assert_eq!(found.len(), MAX_ISSUES);
    assert_eq!(
        found[0],
        (
            "name0".to_owned(),
            "property name 'name0' must NOT have more than 2 characters".to_owned()
        )
    );
    assert_eq!(
        found[99],
        (String::new(), "201 more issues not shown".to_owned())
    );
}

/// The work `validate` charges for `instance`.
fn work(schema: &Value, instance: &Value) -> usize {
    let compiled = CompiledSchema::compile(schema).expect("schema compiles");
    eval::work_spent(&compiled, instance, &Re)
}

/// The extra work of instance `big` over `small`, at least `at_least`.
fn charges(schema: Value, small: Value, big: Value, at_least: usize) {
    let (a, b) = (work(&schema, &small), work(&schema, &big));
    assert!(
        b >= a + at_least,
        "{schema}: {a} → {b}, want {at_least} more"
    );
}

/// Every keyword's work over the instance is charged to the budget, by its
/// size: bytes scanned, matched, hashed and compared, names looked up,
/// children walked (besides the step each schema evaluation costs).
#[test]
fn keyword_work_over_the_instance_is_charged() {
    let n = 10_000;
    let text = |len: usize| Value::String("a".repeat(len));
    let object = |len: usize| -> Value {
        Value::Object((0..len).map(|i| (format!("key{i}"), json!(i))).collect())
    };
    // Characters counted: a unit per byte.
    charges(json!({ "maxLength": 1 }), text(n), text(2 * n), n);
    // A pattern: per byte and pattern byte.
    charges(json!({ "pattern": "^a*$" }), text(n), text(2 * n), n * 128);
    let long = "^(?:a|b|c|d|e|f)*$";
    let by_pattern = |pattern: &str| work(&json!({ "pattern": pattern }), &text(n));
    assert!(by_pattern(long) >= by_pattern("^a*$") + n * 8 * (long.len() - 4));
    // `const`: the bytes compared; a large `enum`: the bytes hashed.
    let same = work(&json!({ "const": "a".repeat(2 * n) }), &text(2 * n));
    assert!(same >= work(&json!({ "const": "a".repeat(n) }), &text(n)) + n);
    let zones: Vec<String> = (0..600).map(|i| format!("Zone/{i}")).collect();
    charges(json!({ "enum": zones }), text(n), text(2 * n), n);
    // `uniqueItems`: a hash and a lookup per item.
    let ints = |len: u64| Value::Array((0..len).map(Value::from).collect());
    charges(
        json!({ "uniqueItems": true }),
        ints(1_000),
        ints(2_000),
        1_000 * 40,
    );
    // `required`: a lookup per name, present or not.
    let names = |len: usize| -> Vec<String> { (0..len).map(|i| format!("n{i}")).collect() };
    let required = |len| work(&json!({ "required": names(len) }), &json!({}));
    assert!(required(2 * n) >= required(n) + n * 32);
    // `properties`: a lookup per key; each pattern: a match per key.
    charges(
        json!({ "properties": { "x": true } }),
        object(n),
        object(2 * n),
        n * 32,
    );
    let patterns = json!({ "patternProperties": { "^x": true, "^y": true } });
    charges(patterns, object(n), object(2 * n), 2 * n * 256);
    // `propertyNames`: each key copied as a string value.
    charges(
        json!({ "propertyNames": true }),
        object(n),
        object(2 * n),
        n * 4,
    );
    // `unevaluatedProperties`: each child walked.
    charges(
        json!({ "unevaluatedProperties": true }),
        object(n),
        object(2 * n),
        n,
    );
}

/// Work over the instance alone exhausts the budget: few schema
/// evaluations, each keyword's work past `MAX_EVAL_STEPS` steps.
#[test]
fn keyword_work_exhausts_the_budget() {
    let over = |schema: Value, instance: Value| {
        assert_eq!(issues(schema, instance), one("", eval::STEPS_MESSAGE));
    };
    // A pattern over a 1 MiB string.
    over(
        json!({ "pattern": "^a+$" }),
        Value::String("a".repeat(1 << 20)),
    );
    // 2,000 required names on each of 1,000 objects.
    let names: Vec<String> = (0..2_000).map(|i| format!("name_{i}")).collect();
    let schema = json!({ "items": { "required": names } });
    let found = issues(schema, empties(1_000));
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].1, eval::STEPS_MESSAGE);
    // 20 patterns over 100,000 keys (matched by prefix: the test's regex
    // matcher would compile each pattern for each key).
    struct Prefix;
    impl PatternMatcher for Prefix {
        fn is_match(&self, pattern: &str, text: &str) -> Result<bool, String> {
            Ok(text.starts_with(pattern.trim_start_matches('^')))
        }
    }
    let patterns: Map<String, Value> = (0..20).map(|i| (format!("^p{i}"), json!(true))).collect();
    let keys: Map<String, Value> = (0..100_000).map(|i| (format!("k{i}"), json!(i))).collect();
    let schema = CompiledSchema::compile(&json!({ "patternProperties": patterns })).unwrap();
    let found = schema.validate(&Value::Object(keys), &Prefix);
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].message, eval::STEPS_MESSAGE);
    // Under the budget, the same keywords answer as before.
    assert!(issues(
        json!({ "pattern": "^a+$" }),
        Value::String("a".repeat(1000))
    )
    .is_empty());
}

/// `enum`, `const` and `uniqueItems` compare structurally: numbers by
/// value, objects whatever their key order, arrays in order; a large
/// `enum` (looked up by hash) answers as a small one (compared in turn).
#[test]
fn enum_const_and_unique_items_compare_structurally() {
    let objects: Vec<Value> = (0..100)
        .map(|i| json!({ "id": i, "tags": ["a", i % 7], "price": { "amount": i, "unit": "EUR" } }))
        .collect();
    let big = json!({ "enum": objects });
    let small = json!({ "enum": objects[..5] });
    for (instance, member) in [
        (
            json!({ "price": { "unit": "EUR", "amount": 3.0 }, "tags": ["a", 3], "id": 3 }),
            true,
        ),
        (
            json!({ "id": 3e0, "tags": ["a", 3.0], "price": { "amount": 3, "unit": "EUR" } }),
            true,
        ),
        (
            json!({ "id": 3, "tags": [3, "a"], "price": { "amount": 3, "unit": "EUR" } }),
            false,
        ),
        (
            json!({ "id": 3, "tags": ["a", 3], "price": { "amount": 3 } }),
            false,
        ),
        (
            json!({ "id": 3, "tags": ["a", 3], "price": { "amount": 3, "unit": "EUR" }, "x": 1 }),
            false,
        ),
        (
            json!({ "id": 3.5, "tags": ["a", 3], "price": { "amount": 3, "unit": "EUR" } }),
            false,
        ),
    ] {
        let want = if member {
            Vec::new()
        } else {
            one("", "must be equal to one of the allowed values")
        };
        assert_eq!(issues(big.clone(), instance.clone()), want, "{instance}");
        assert_eq!(issues(small.clone(), instance.clone()), want, "{instance}");
    }
    assert!(issues(
        json!({ "const": { "a": [1, { "b": null }] } }),
        json!({ "a": [1.0, { "b": null }] })
    )
    .is_empty());
    assert_eq!(
        issues(json!({ "const": 0 }), json!(false)),
        one("", "must be equal to constant")
    );
    // The first duplicate: the smallest second index, then the first.
    let unique = json!({ "uniqueItems": true });
    assert_eq!(
        issues(
            unique.clone(),
            json!([{ "a": 1, "b": 2 }, 7, 8, 7.0, { "b": 2, "a": 1.0 }])
        ),
        one(
            "",
            "must NOT have duplicate items (items 1 and 3 are identical)"
        )
    );
    assert_eq!(
        issues(
            unique.clone(),
            json!([{ "a": 1, "b": 2 }, 7, 8, { "b": 2, "a": 1.0 }, 7.0])
        ),
        one(
            "",
            "must NOT have duplicate items (items 0 and 3 are identical)"
        )
    );
    assert!(issues(unique.clone(), json!([1, "1", [1], { "1": 1 }, true, null])).is_empty());
    let distinct: Vec<Value> = (0..100_000).map(|i| json!([i, "x"])).collect();
    assert!(issues(unique.clone(), Value::Array(distinct.clone())).is_empty());
    let mut repeated = distinct;
    repeated.push(json!([99_999.0, "x"]));
    assert_eq!(
        issues(unique, Value::Array(repeated)),
        one(
            "",
            "must NOT have duplicate items (items 99999 and 100000 are identical)"
        )
    );
}

/// The JSON text of an array of `make(i)` items, as long as it takes to
/// reach `bytes` (the hostile inputs of tests/node/support/hostile-validation-cases.mjs).
fn array_text(bytes: usize, make: impl Fn(usize) -> Value) -> String {
    let mut text = String::from("[");
    let mut i = 0;
    while text.len() + 1 < bytes {
        if i > 0 {
            text.push(',');
        }
        text.push_str(&make(i).to_string());
        i += 1;
    }
    text.push(']');
    text
}

/// What `validate_text` answers for `schema` over `text`, as (path, message) pairs.
fn text_issues(schema: &Value, text: &str) -> Vec<(String, String)> {
    let compiled = CompiledSchema::compile(schema).expect("schema compiles");
    pairs(compiled.validate_text(text, &Re))
}

/// The validator's worst cases as an agent sends them (a call's input
/// text): large inputs of enum members and distinct items stay within the
/// budget and are valid; inputs whose value alone would spend it are refused
/// at the root, unbuilt; work past it is refused where it ran out.
#[test]
fn hostile_inputs_are_answered_within_the_budget_or_refused_by_it() {
    const MIB: usize = 1 << 20;
    let zones: Vec<String> = (0..600)
        .map(|i| format!("Area_{}/City_Name_{i}", i % 12))
        .collect();
    // `amount` written as JS writes it: whole numbers without a fraction.
    let object = |i: usize| {
        let amount = if i % 2 == 0 {
            json!(i / 2 * 7)
        } else {
            json!(i as f64 * 3.5)
        };
        json!({ "id": i, "name": format!("item {i}"), "tags": ["a", format!("t{}", i % 7)], "price": { "amount": amount, "currency": "EUR" } })
    };
    let objects: Vec<Value> = (0..100).map(object).collect();
    let small = |i: usize| json!({ "k": i % 10, "v": [i, "x"] });
    let required_abcd =
        json!({ "type": "array", "items": { "type": "object", "required": ["a", "b", "c", "d"] } });

    let zone_enum = json!({ "type": "array", "items": { "enum": zones } });
    let zone_text = array_text(MIB, |i| json!(zones[(i * 7919) % zones.len()]));
    assert_eq!(text_issues(&zone_enum, &zone_text), []);
    let object_enum = json!({ "type": "array", "items": { "enum": objects } });
    let object_text = |bytes| array_text(bytes, |i| objects[(i * 31) % objects.len()].clone());
    assert_eq!(text_issues(&object_enum, &object_text(200 * 1024)), []);
    let unique = json!({ "uniqueItems": true });
    assert_eq!(text_issues(&unique, &array_text(100 * 1024, small)), []);

    let strings = json!({ "type": "array", "items": { "type": "string" } });
    for (name, schema, text) in [
        (
            "required × 40,000 {}",
            &required_abcd,
            empties(40_000).to_string(),
        ),
        (
            "enum of 100 objects, 1 MiB of them",
            &object_enum,
            object_text(MIB),
        ),
        (
            "uniqueItems, 1 MiB of distinct objects",
            &unique,
            array_text(MIB, small),
        ),
        (
            "items string, 1 MiB of 0s",
            &strings,
            array_text(MIB, |_| json!(0)),
        ),
    ] {
        assert_eq!(
            text_issues(schema, &text),
            one("", eval::STEPS_MESSAGE),
            "{name}"
        );
    }

    // A chain of `anyOf`s, two refs each to the next: 2^40 paths, all failing.
    let mut defs = Map::new();
    for i in 0..40 {
        let next = if i + 1 < 40 {
            json!({ "$ref": format!("#/$defs/d{}", i + 1) })
        } else {
            json!(false)
        };
        defs.insert(format!("d{i}"), json!({ "anyOf": [next, next] }));
    }
    let chain = json!({ "$defs": defs, "$ref": "#/$defs/d0" });
    assert_eq!(text_issues(&chain, "1"), one("", eval::STEPS_MESSAGE));
    let names: Vec<String> = (0..20_000).map(|i| format!("name_{i}")).collect();
    let many_required = json!({ "type": "array", "items": { "required": names } });
    let found = text_issues(&many_required, &empties(1_000).to_string());
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].1, eval::STEPS_MESSAGE);
    assert!(
        !found[0].0.is_empty() && found[0].0.bytes().all(|b| b.is_ascii_digit()),
        "at the item where it ran out: {:?}",
        found[0].0
    );
}
