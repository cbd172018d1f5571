//! The checks the `validate` fuzz target makes on one input, shared with
//! `tests/fuzz_regressions.rs` so kept inputs replay exactly as fuzzed.
//!
//! The agent controls the instance and the app the schema; the fuzzer gets
//! both. A small input is grown to the size an inbound message may have
//! (1 MiB of JSON), so the fuzzer searches for per-byte cost, not for large
//! files it cannot write.

use serde_json::{Map, Value};
use std::time::{Duration, Instant};
use toolmark_bridge::protocol::{validate, Direction};
use toolmark_bridge::schema::pattern::LinearPatterns;
use toolmark_bridge::schema::CompiledSchema;

/// The bridge's default `maxMessageBytes`: what one call's input may reach.
const GROWN_BYTES: usize = 1 << 20;

/// The input is a mode byte, a schema (JSON), a NUL byte and an instance
/// (JSON). The mode's low two bits grow the instance to about 1 MiB: 1 as
/// an array of copies, 2 as an object of copies under distinct keys, 3 a
/// string repeated; bit 2 wraps the result in 60 arrays (the nesting limit
/// is 64). Nothing may panic; with `limit`, validating (issues collected,
/// and valid-or-not alone) and the protocol check of the instance each
/// finish within it.
pub fn check_validate(data: &[u8], limit: Option<Duration>) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let (schema, instance) = match rest.iter().position(|&b| b == 0) {
        Some(i) => (&rest[..i], &rest[i + 1..]),
        None => (rest, &b"null"[..]),
    };
    let Ok(schema) = serde_json::from_slice::<Value>(schema) else {
        return;
    };
    let Ok(instance) = serde_json::from_slice::<Value>(instance) else {
        return;
    };
    let Ok(compiled) = CompiledSchema::compile(&schema) else {
        return;
    };
    let instance = grow(instance, mode);
    let matcher = LinearPatterns::new();
    let timed = |what: &str, work: &mut dyn FnMut()| {
        let start = Instant::now();
        work();
        let took = start.elapsed();
        if let Some(limit) = limit {
            assert!(
                took <= limit,
                "{what} took {took:?} (limit {limit:?}): schema {schema}, mode {mode}"
            );
        }
    };
    let mut issues = 0;
    timed("validate", &mut || {
        issues = compiled.validate(&instance, &matcher).len();
    });
    let mut valid = false;
    timed("is_valid", &mut || {
        valid = compiled.is_valid(&instance, &matcher);
    });
    assert_eq!(valid, issues == 0, "schema {schema}, mode {mode}");
    // From its text (a call's input), building the value is charged to the
    // same budget: valid there only where the value is valid.
    let text = instance.to_string();
    let mut text_issues = 0;
    timed("validate_text", &mut || {
        text_issues = compiled.validate_text(&text, &matcher).len();
    });
    assert!(
        text_issues > 0 || issues == 0,
        "valid as text, invalid as a value: schema {schema}, mode {mode}"
    );
    timed("the protocol check", &mut || {
        let _ = validate(&instance, Direction::ToPage);
        let _ = validate(&instance, Direction::ToAgent);
    });
}

/// The instance grown by `mode` (see [`check_validate`]).
fn grow(instance: Value, mode: u8) -> Value {
    let size = serde_json::to_string(&instance)
        .map_or(1, |t| t.len())
        .max(1);
    let copies = (GROWN_BYTES / (size + 8)).max(1);
    let grown = match mode & 3 {
        1 => Value::Array(vec![instance; copies]),
        2 => Value::Object(
            (0..copies)
                .map(|i| (format!("k{i}"), instance.clone()))
                .collect::<Map<_, _>>(),
        ),
        3 => match &instance {
            Value::String(s) if !s.is_empty() => {
                Value::String(s.repeat((GROWN_BYTES / s.len()).max(1)))
            }
            _ => instance,
        },
        _ => instance,
    };
    if mode & 4 == 0 {
        return grown;
    }
    (0..60).fold(grown, |inner, _| Value::Array(vec![inner]))
}
