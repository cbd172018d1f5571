//! `cargo bench --bench core`: the Rust-only parts of the core, each against
//! a baseline doing the same job in the same run, then the ratios
//! (baseline time / ours: above 1 means ours is faster).
//!
//! - inbound: `parse_agent_to_page` (the size check, the depth scan,
//!   serde_json's parse and the protocol check, as a frame's text meets the
//!   core) against serde_json's parse alone into a `Value`, the floor any
//!   checked parse pays;
//! - validator: a compiled tool input schema against the `jsonschema`
//!   crate's compiled validator of the same schema, for a valid input, an
//!   invalid one (every issue collected) and a 100 KB one;
//! - lanes: 8 scopes × 32 calls queued, started and finished one by one, in
//!   `Lanes` against a `BTreeMap` of `VecDeque`s doing the same.
//!
//! Pass a filter as with any criterion bench (`cargo bench --bench core --
//! lanes`); figures go to docs/benchmarks.md with the command.

use std::collections::{BTreeMap, VecDeque};
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Duration;

use criterion::{BenchmarkId, Criterion};
use serde_json::{json, Value};
use toolmark_bridge::lanes::{CallKey, Lanes};
use toolmark_bridge::protocol::parse_agent_to_page;
use toolmark_bridge::registry::ScopeId;
use toolmark_bridge::schema::{CompiledSchema, PatternMatcher};

const MAX_MESSAGE_BYTES: usize = 1_048_576;
const CLIENT_ID: &str = "5742fe13-f99c-4397-b3ca-88ea6f540ffb";

/// The corpus of benches/support/inbound-corpus.mjs, as text.
fn inbound_corpus() -> Vec<(&'static str, String)> {
    let id = |n: u32| format!("e99aa1ab-09ab-47b7-96ae-{n:012}");
    let call = json!({"protocol": 1, "type": "call", "clientId": CLIENT_ID, "id": id(1), "rev": 3,
        "tool": "signup.fill", "input": {"email": "ada@example.com", "age": 36, "plan": "pro", "newsletter": true}});
    let describe = json!({"protocol": 1, "type": "describe", "clientId": CLIENT_ID, "id": id(2), "tool": "signup.fill"});
    let cancel = json!({"protocol": 1, "type": "cancel", "clientId": CLIENT_ID, "id": id(3)});
    let big = json!({"protocol": 1, "type": "call", "clientId": CLIENT_ID, "id": id(4), "rev": 3,
        "tool": "crm.import", "input": {"rows": rows(100 * 1024)}});
    vec![
        ("small call", call.to_string()),
        ("describe", describe.to_string()),
        ("cancel", cancel.to_string()),
        ("call, 100 KB input", big.to_string()),
    ]
}

/// Form-like records whose JSON text is about `bytes` long.
fn rows(bytes: usize) -> Vec<Value> {
    let mut rows = Vec::new();
    let mut size = 0;
    let mut i = 0u32;
    while size < bytes {
        let row = json!({"id": i, "name": format!("Customer {i}"), "email": format!("c{i}@example.com"),
            "note": "x".repeat(40), "tags": ["a", "b"], "amount": f64::from(i) * 1.25, "active": i % 2 == 0});
        size += row.to_string().len() + 1;
        rows.push(row);
        i += 1;
    }
    rows
}

fn inbound(c: &mut Criterion) {
    let mut group = c.benchmark_group("inbound");
    for (kind, text) in inbound_corpus() {
        assert!(
            parse_agent_to_page(&text, MAX_MESSAGE_BYTES).is_ok(),
            "{kind}"
        );
        group.bench_with_input(BenchmarkId::new("ours", kind), &text, |b, text| {
            b.iter(|| parse_agent_to_page(black_box(text), MAX_MESSAGE_BYTES))
        });
        group.bench_with_input(BenchmarkId::new("baseline", kind), &text, |b, text| {
            b.iter(|| serde_json::from_str::<Value>(black_box(text)))
        });
    }
    group.finish();
}

/// The schemas here have no `pattern`.
struct NoPatterns;

impl PatternMatcher for NoPatterns {
    fn is_match(&self, pattern: &str, _: &str) -> Result<bool, String> {
        Err(format!("no pattern expected here: {pattern}"))
    }
}

fn validator(c: &mut Criterion) {
    let form = json!({
        "type": "object",
        "properties": {
            "email": {"type": "string", "format": "email", "maxLength": 254},
            "age": {"type": "integer", "minimum": 0, "maximum": 150},
            "plan": {"enum": ["free", "pro", "team"]},
            "newsletter": {"type": "boolean"},
            "tags": {"type": "array", "items": {"type": "string", "minLength": 1}, "maxItems": 20, "uniqueItems": true}
        },
        "required": ["email", "plan"],
        "additionalProperties": false
    });
    let import = json!({
        "type": "object",
        "properties": {"rows": {"type": "array", "items": {
            "type": "object",
            "properties": {
                "id": {"type": "integer"}, "name": {"type": "string"}, "email": {"type": "string"},
                "note": {"type": "string", "maxLength": 200}, "tags": {"type": "array", "items": {"type": "string"}},
                "amount": {"type": "number", "minimum": 0}, "active": {"type": "boolean"}
            },
            "required": ["id", "name", "email"]
        }}},
        "required": ["rows"]
    });
    let cases = [
        (
            "valid form",
            &form,
            json!({"email": "ada@example.com", "age": 36, "plan": "pro", "newsletter": true, "tags": ["a", "b"]}),
        ),
        (
            "invalid form (5 issues)",
            &form,
            json!({"age": -1, "plan": "gold", "newsletter": "yes", "tags": ["a", "a"], "extra": 1}),
        ),
        (
            "valid 100 KB import",
            &import,
            json!({"rows": rows(100 * 1024)}),
        ),
    ];
    let mut group = c.benchmark_group("validator");
    for (name, schema, instance) in &cases {
        let ours = match CompiledSchema::compile(schema) {
            Ok(compiled) => compiled,
            Err(error) => panic!("{name}: {}", error.message()),
        };
        let theirs = match jsonschema::draft202012::new(schema) {
            Ok(validator) => validator,
            Err(error) => panic!("{name}: {error}"),
        };
        let ours_issues = ours.validate(instance, &NoPatterns).len();
        let their_issues = theirs.iter_errors(instance).count();
        assert_eq!(
            ours_issues == 0,
            their_issues == 0,
            "{name}: the two disagree"
        );
        group.bench_with_input(BenchmarkId::new("ours", name), instance, |b, instance| {
            b.iter(|| ours.validate(black_box(instance), &NoPatterns).len())
        });
        group.bench_with_input(
            BenchmarkId::new("baseline", name),
            instance,
            |b, instance| b.iter(|| theirs.iter_errors(black_box(instance)).count()),
        );
    }
    group.finish();
}

const SCOPES: u32 = 8;
const PER_SCOPE: u64 = 32;

/// Queues 8 × 32 calls, then starts what can start and finishes the started
/// ones in order until nothing is left; the order calls started in.
fn lanes_round(order: &mut Vec<CallKey>) {
    let mut lanes = Lanes::default();
    for n in 0..u64::from(SCOPES) * PER_SCOPE {
        lanes.push(ScopeId((n % u64::from(SCOPES)) as u32), CallKey(n));
    }
    let mut running = Vec::new();
    loop {
        while let Some(key) = lanes.next_to_start() {
            order.push(key);
            running.push(key);
        }
        if running.is_empty() {
            break;
        }
        for key in running.drain(..) {
            lanes.remove(ScopeId((key.0 % u64::from(SCOPES)) as u32), key);
        }
    }
}

/// The same with a `BTreeMap` of scope → (queue, front started).
fn baseline_round(order: &mut Vec<CallKey>) {
    let mut lanes: BTreeMap<u32, (VecDeque<CallKey>, bool)> = BTreeMap::new();
    for n in 0..u64::from(SCOPES) * PER_SCOPE {
        let lane = lanes.entry((n % u64::from(SCOPES)) as u32).or_default();
        lane.0.push_back(CallKey(n));
    }
    let mut running = Vec::new();
    loop {
        for (scope, (queue, active)) in lanes.iter_mut() {
            if let (false, Some(&key)) = (*active, queue.front()) {
                *active = true;
                order.push(key);
                running.push((*scope, key));
            }
        }
        if running.is_empty() {
            break;
        }
        for (scope, key) in running.drain(..) {
            if let Some((queue, active)) = lanes.get_mut(&scope) {
                queue.retain(|k| *k != key);
                *active = false;
                if queue.is_empty() {
                    lanes.remove(&scope);
                }
            }
        }
    }
}

fn lanes(c: &mut Criterion) {
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    lanes_round(&mut ours);
    baseline_round(&mut theirs);
    assert_eq!(ours, theirs, "the two start calls in different orders");
    let mut group = c.benchmark_group("lanes");
    let name = "8 scopes x 32 calls";
    group.bench_function(BenchmarkId::new("ours", name), |b| {
        let mut order = Vec::with_capacity(256);
        b.iter(|| {
            order.clear();
            lanes_round(&mut order);
            order.len()
        })
    });
    group.bench_function(BenchmarkId::new("baseline", name), |b| {
        let mut order = Vec::with_capacity(256);
        b.iter(|| {
            order.clear();
            baseline_round(&mut order);
            order.len()
        })
    });
    group.finish();
}

/// Criterion's median estimate of one benchmark, in ns, from its output.
fn median_ns(dir: &Path, group: &str, way: &str, name: &str) -> Option<f64> {
    // Criterion's directory names: `/` and other odd characters become `_`.
    let clean = |s: &str| {
        s.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || " -.,()".contains(c) {
                    c
                } else {
                    '_'
                }
            })
            .collect::<String>()
    };
    let path = dir
        .join(group)
        .join(way)
        .join(clean(name))
        .join("new")
        .join("estimates.json");
    let text = std::fs::read_to_string(path).ok()?;
    let estimates: Value = serde_json::from_str(&text).ok()?;
    estimates["median"]["point_estimate"].as_f64()
}

fn main() {
    let mut c = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(2))
        .configure_from_args();
    inbound(&mut c);
    validator(&mut c);
    lanes(&mut c);
    c.final_summary();

    let target =
        std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| PathBuf::from("target"), PathBuf::from);
    let dir = target.join("criterion");
    let names: Vec<(&str, String)> = inbound_corpus()
        .into_iter()
        .map(|(kind, _)| ("inbound", kind.to_owned()))
        .chain(
            [
                "valid form",
                "invalid form (5 issues)",
                "valid 100 KB import",
            ]
            .into_iter()
            .map(|n| ("validator", n.to_owned())),
        )
        .chain([("lanes", "8 scopes x 32 calls".to_owned())])
        .collect();
    println!("\ngroup\tcase\tours (median)\tbaseline (median)\tbaseline / ours");
    for (group, name) in names {
        let (Some(ours), Some(theirs)) = (
            median_ns(&dir, group, "ours", &name),
            median_ns(&dir, group, "baseline", &name),
        ) else {
            continue;
        };
        println!(
            "{group}\t{name}\t{:.0} ns\t{:.0} ns\t{:.2}",
            ours,
            theirs,
            theirs / ours
        );
    }
}
