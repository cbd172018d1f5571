//! JSON Schema draft 2020-12 validation for tool inputs.
//!
//! A tool's `inputSchema` is compiled once with [`CompiledSchema::compile`]
//! (all `$id` base URIs, `$anchor`s, `$dynamicAnchor`s and JSON-pointer
//! references are resolved to node indexes up front), then every call's input
//! is checked with [`CompiledSchema::validate`], which returns the failures
//! as [`SchemaIssue`]s with dotted instance paths (`""`, `email`,
//! `items.0.name`).
//!
//! Coverage: the whole 2020-12 vocabulary (core, applicator, unevaluated,
//! validation; `format` and `content*` as annotations only) except remote
//! references: a `$ref` whose target is neither inside the schema document
//! nor one of the bundled draft 2020-12 meta-schemas
//! (`https://json-schema.org/draft/2020-12/schema` and its `meta/*`
//! vocabularies, compiled in only when referenced) is a
//! [`SchemaError::RemoteRef`] at compile time.
//!
//! Regular expressions (`pattern`, `patternProperties`) are evaluated by an
//! injected [`PatternMatcher`]. [`pattern::LinearPatterns`] (the shipped
//! module's) decides the patterns it can translate exactly in time linear
//! in the input and answers every other one with an error; the registry
//! refuses those at registration ([`CompiledSchema::patterns`]).
//!
//! This code runs inside the page's WebAssembly bridge and must never panic:
//! no `unwrap`, no indexing, bounded recursion: nested schema evaluations are
//! limited to [`MAX_EVAL_DEPTH`] and all the work of one validation (schema
//! evaluations and the work of each keyword over the instance) to
//! [`MAX_EVAL_STEPS`]; at most [`MAX_ISSUES`] issues are collected, the rest
//! counted; schema compilation uses explicit work lists (no recursion) and
//! rejects schemas nested deeper than [`MAX_SCHEMA_DEPTH`]; value
//! comparisons (`const`, `enum`, `uniqueItems`) stop at 512 levels.
#![deny(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::unreachable,
    clippy::todo,
    clippy::unimplemented,
    clippy::indexing_slicing,
    clippy::string_slice
)]

mod compile;
mod equal;
mod eval;
mod meta;
mod num;
pub mod pattern;
mod uri;

// Native only: the unit tests match patterns with the regex crate.
#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests;

use crate::json_value;
use crate::prelude::*;
use crate::vecmap::VecMap;
use core::fmt;
pub(crate) use num::is_whole;
use serde_json::{Number, Value};

/// Maximum number of nested (object) schema evaluations, e.g. through
/// `properties` → `$ref` → `properties` → ... . Deeper evaluation stops with
/// an issue instead of overflowing the stack; a cyclic `{"$ref": "#"}` ends
/// here.
pub const MAX_EVAL_DEPTH: usize = 256;

/// Maximum JSON nesting of a subschema inside the schema document
/// (`/properties/a/items` is 3 levels). Deeper schemas are a
/// [`SchemaError::TooDeep`].
pub const MAX_SCHEMA_DEPTH: usize = 512;

/// The work budget of one `validate` / `is_valid` call, in steps: a step is
/// one schema evaluation, or keyword work over the instance of about the
/// same cost (see `Work`: bytes scanned, compared, hashed or matched by a
/// pattern; values compared; names looked up). Guards against exponential
/// schemas (nested `anyOf` of refs...) and large hostile instances hanging
/// the page; exceeded, validation stops with an issue.
pub const MAX_EVAL_STEPS: usize = 1_000_000;

/// The most issues one `validate` call returns. Past it the rest are only
/// counted: the first `MAX_ISSUES - 1` are returned, then `{ path: "",
/// message: "39901 more issues not shown" }` (as an `invalid` tool result
/// caps its issues, `protocol::MAX_REPORTED_ISSUES`).
pub const MAX_ISSUES: usize = 100;

/// Work units per step ([`MAX_EVAL_STEPS`]): one schema evaluation costs
/// this many; a byte scanned, compared, hashed or copied costs one (see
/// `eval.rs` and `equal.rs` for the other charges), so that a budget spent on
/// any mix of them takes about as long as one spent on evaluations.
const UNITS_PER_STEP: usize = 64;

/// Work units for building a value from its text ([`build_units`]): per
/// value or key, per array or object besides, per key besides (a map
/// entry), per byte. Measured on a fresh page in Chromium, where the first
/// large value also grows the module's memory and compiles the code that
/// reads and checks it (`node benches/inbound-worst.mjs`): 200,000 small
/// integers take about 26 ms to build, 50,000 keys 19 ms, 40,000
/// `{"a":1}` 25 ms, 64M units of evaluations about 15 ms; the charges are
/// set so that the heaviest text within the budget, built and validated,
/// keeps its frame under 50 ms (an `enum` of objects over 4,000 of them
/// took 53 ms at 576 units an item).
const BUILD_UNITS_PER_ITEM: usize = 1024;
const BUILD_UNITS_PER_CONTAINER: usize = 1024;
const BUILD_UNITS_PER_KEY: usize = 1024;

/// What building the value of `text` costs, in work units.
fn build_units(text: &str) -> usize {
    let json_value::Census {
        items,
        containers,
        keys,
    } = json_value::Census::of(text);
    items
        .saturating_mul(BUILD_UNITS_PER_ITEM)
        .saturating_add(containers.saturating_mul(BUILD_UNITS_PER_CONTAINER))
        .saturating_add(keys.saturating_mul(BUILD_UNITS_PER_KEY))
        .saturating_add(text.len())
}

/// The budget was spent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct OutOfBudget;

/// The work done by one validation, in units ([`UNITS_PER_STEP`]).
#[derive(Debug)]
struct Work {
    spent: usize,
    limit: usize,
}

impl Work {
    /// One validation's budget: [`MAX_EVAL_STEPS`] steps.
    fn new() -> Work {
        Work::with_limit(MAX_EVAL_STEPS.saturating_mul(UNITS_PER_STEP))
    }

    fn with_limit(limit: usize) -> Work {
        Work { spent: 0, limit }
    }

    /// For the app's own values (an `enum`'s table, built at compile time).
    fn unlimited() -> Work {
        Work::with_limit(usize::MAX)
    }

    /// Adds `units`; past the limit, `OutOfBudget` (and every later charge too).
    fn charge(&mut self, units: usize) -> Result<(), OutOfBudget> {
        self.spent = self.spent.saturating_add(units);
        if self.spent > self.limit {
            Err(OutOfBudget)
        } else {
            Ok(())
        }
    }

    #[cfg(test)]
    fn spent(&self) -> usize {
        self.spent
    }
}

/// Appends a segment to an issue path: `.segment`, or `segment` to the
/// empty path (the validator's paths, and a Standard Schema's by the
/// boundary).
pub fn push_path_segment(path: &mut String, segment: &str) {
    if !path.is_empty() {
        path.push('.');
    }
    path.push_str(segment);
}

/// An ECMA-262 regex matcher (`u` flag), injected: in WebAssembly it is
/// [`pattern::LinearPatterns`]; natively tests also use the `regex` crate.
pub trait PatternMatcher {
    /// Ok(true) when `text` matches `pattern` (unanchored search, like
    /// RegExp.prototype.test). Err(message) when the pattern is not a valid regex.
    fn is_match(&self, pattern: &str, text: &str) -> Result<bool, String>;

    /// The work one match of `pattern` may do per byte of text, in states
    /// visited, when the matcher knows it: counted repetition makes it far
    /// more than the pattern's bytes (`a{40000}` visits up to 40,000 states
    /// per byte). The validator charges for the larger of the two; 0 when
    /// unknown.
    fn work_per_byte(&self, _pattern: &str) -> usize {
        0
    }
}

/// One validation failure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaIssue {
    /// Dotted instance path: `""` for the root, `email`, `items.0.name`.
    pub path: String,
    /// Short English message, e.g. `must be string`.
    pub message: String,
}

/// Why a schema could not be compiled. `location` fields are JSON Pointers
/// into the schema document written as URI fragments (`#`, `#/properties/a`);
/// inside a bundled meta-schema, after its URI
/// (`https://json-schema.org/draft/2020-12/meta/core#/$defs/anchorString`).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SchemaError {
    /// A schema (root or subschema) is neither an object nor a boolean.
    NotASchema { location: String },
    /// A keyword has a value of the wrong type or range.
    InvalidKeyword {
        location: String,
        keyword: String,
        reason: String,
    },
    /// A `$ref` / `$dynamicRef` points outside the schema document and the
    /// bundled draft 2020-12 meta-schemas; remote references are not
    /// supported.
    RemoteRef {
        location: String,
        reference: String,
        uri: String,
    },
    /// A `$ref` / `$dynamicRef` names a document that exists but a fragment
    /// (JSON pointer or anchor) that does not.
    UnresolvedRef {
        location: String,
        reference: String,
        reason: String,
    },
    /// Two schemas declare the same `$id`.
    DuplicateId { location: String, uri: String },
    /// Two schemas in one resource declare the same `$anchor` / `$dynamicAnchor`.
    DuplicateAnchor { location: String, anchor: String },
    /// Subschemas are nested deeper than [`MAX_SCHEMA_DEPTH`] JSON levels.
    TooDeep { location: String },
}

impl SchemaError {
    /// The error as English text (what `Display` writes), built from
    /// each variant's template pieces and fields in one loop.
    pub fn message(&self) -> String {
        const NONE: &String = &String::new();
        // The template's pieces go around the fields, in order.
        let (template, fields): (&[&str], [&String; 3]) = match self {
            SchemaError::NotASchema { location } => (
                &["schema at ", " must be an object or a boolean"],
                [location, NONE, NONE],
            ),
            SchemaError::InvalidKeyword {
                location,
                keyword,
                reason,
            } => (&["invalid \"", "\" at ", ": "], [keyword, location, reason]),
            SchemaError::RemoteRef {
                location,
                reference,
                uri,
            } => (
                &[
                    "unsupported remote reference \"",
                    "\" at ",
                    " (resolves to ",
                    ", which is not inside the schema document)",
                ],
                [reference, location, uri],
            ),
            SchemaError::UnresolvedRef {
                location,
                reference,
                reason,
            } => (
                &["cannot resolve reference \"", "\" at ", ": "],
                [reference, location, reason],
            ),
            SchemaError::DuplicateId { location, uri } => {
                (&["duplicate $id \"", "\" at "], [uri, location, NONE])
            }
            SchemaError::DuplicateAnchor { location, anchor } => {
                (&["duplicate anchor \"", "\" at "], [anchor, location, NONE])
            }
            // `MAX_SCHEMA_DEPTH` spelled out (a unit test pins it).
            SchemaError::TooDeep { location } => (
                &["schema at ", " is nested deeper than 512 levels"],
                [location, NONE, NONE],
            ),
        };
        let mut text = String::new();
        for (i, piece) in template.iter().enumerate() {
            text.push_str(piece);
            if let Some(field) = fields.get(i) {
                text.push_str(field);
            }
        }
        text
    }
}

impl fmt::Display for SchemaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message())
    }
}

impl core::error::Error for SchemaError {}

fn len_u64(n: usize) -> u64 {
    u64::try_from(n).unwrap_or(u64::MAX)
}

/// `prefix`, then `n` and the noun: `(one, many)`, its singular and plural
/// (`1 item`, `2 items`).
fn count_message(prefix: &str, n: u64, (one, many): (&str, &str)) -> String {
    format!("{prefix}{n} {}", if n == 1 { one } else { many })
}

/// A schema compiled for repeated validation. Immutable; cheap to share.
#[derive(Debug, Clone)]
pub struct CompiledSchema {
    nodes: Vec<Node>,
    /// Per schema resource: its `$dynamicAnchor` names → node index.
    dynamic_anchors: Vec<VecMap<String, usize>>,
    root: usize,
}

impl CompiledSchema {
    /// Compile a draft 2020-12 schema (an object or a boolean).
    pub fn compile(schema: &Value) -> Result<CompiledSchema, SchemaError> {
        compile::compile(schema)
    }

    /// Validate `instance`; an empty result means valid. Issues come in a
    /// deterministic order (keyword order, then instance order).
    pub fn validate(&self, instance: &Value, matcher: &dyn PatternMatcher) -> Vec<SchemaIssue> {
        eval::validate(self, instance, matcher)
    }

    /// Validate the value the JSON text `text` holds (a call's input, kept
    /// as text). Building that value is charged to the same budget first,
    /// from a count of what it holds ([`json_value::Census`]: per item,
    /// per array or object, per byte): a text whose value alone would
    /// spend the budget is refused as out of budget without being built.
    pub fn validate_text(&self, text: &str, matcher: &dyn PatternMatcher) -> Vec<SchemaIssue> {
        let mut work = Work::new();
        if work.charge(build_units(text)).is_err() {
            return vec![SchemaIssue {
                path: String::new(),
                message: eval::STEPS_MESSAGE.to_owned(),
            }];
        }
        match json_value::parse(text) {
            Ok(instance) => eval::validate_within(self, &instance, matcher, work),
            Err(_) => vec![SchemaIssue {
                path: String::new(),
                message: "is not JSON text".to_owned(),
            }],
        }
    }

    /// `validate(..).is_empty()`, but stops at the first failure and does not
    /// build messages.
    pub fn is_valid(&self, instance: &Value, matcher: &dyn PatternMatcher) -> bool {
        eval::is_valid(self, instance, matcher)
    }

    /// Whether every instance is valid: the schema is `true`, or an object
    /// whose keywords assert nothing (`{}`, annotations only). The registry
    /// then keeps a call's input as text, unparsed ([`crate::protocol::JsonText`]).
    pub fn accepts_everything(&self) -> bool {
        match self.nodes.get(self.root) {
            Some(Node::Bool(valid)) => *valid,
            Some(Node::Obj(obj)) => obj.keywords.is_empty(),
            None => false,
        }
    }

    /// Every regex of its `pattern` and `patternProperties` keywords (the
    /// registry checks each against the page's matcher up front).
    pub fn patterns(&self) -> impl Iterator<Item = &str> {
        self.nodes
            .iter()
            .filter_map(|node| match node {
                Node::Obj(obj) => Some(obj.keywords.iter()),
                Node::Bool(_) => None,
            })
            .flatten()
            .flat_map(|keyword| {
                let (single, keyed) = match keyword {
                    Keyword::Pattern(pattern, _) => (Some(pattern.as_str()), &[][..]),
                    Keyword::Properties { patterns, .. } => (None, patterns.as_slice()),
                    _ => (None, &[][..]),
                };
                single
                    .into_iter()
                    .chain(keyed.iter().map(|(pattern, _)| pattern.as_str()))
            })
    }
}

/// A compiled schema: `true`, `false`, or an object's keywords.
#[derive(Debug, Clone)]
enum Node {
    Bool(bool),
    Obj(ObjNode),
}

#[derive(Debug, Clone)]
struct ObjNode {
    /// Schema resource (`$id` scope) this schema belongs to; index into
    /// `CompiledSchema::dynamic_anchors`.
    resource: usize,
    /// Has `unevaluatedItems` / `unevaluatedProperties`: collects annotations.
    has_unevaluated: bool,
    /// Keywords in evaluation order (`unevaluated*` last).
    keywords: Vec<Keyword>,
}

/// JSON type bits for the `type` keyword.
mod types {
    pub(super) const NULL: u8 = 1;
    pub(super) const BOOLEAN: u8 = 2;
    pub(super) const OBJECT: u8 = 4;
    pub(super) const ARRAY: u8 = 8;
    pub(super) const NUMBER: u8 = 16;
    pub(super) const STRING: u8 = 32;
    pub(super) const INTEGER: u8 = 64;
}

#[derive(Debug, Clone)]
enum Keyword {
    /// `$ref` (never an anchor) and `$dynamicRef`.
    Ref {
        target: usize,
        /// Set when the static target carries a matching `$dynamicAnchor`:
        /// then the outermost resource in the dynamic scope with that
        /// anchor wins.
        anchor: Option<String>,
    },
    Type {
        mask: u8,
        /// `must be string or null`.
        message: String,
    },
    /// `enum`, or `const` (its one value). With more than
    /// [`equal::LINEAR_ENUM`] values, `table` holds their hashes
    /// ([`equal::hash_table`]).
    Enum {
        values: Vec<Value>,
        table: Option<Vec<(u64, usize)>>,
        message: &'static str,
    },
    /// `maximum` (0), `exclusiveMaximum` (1), `minimum` (2),
    /// `exclusiveMinimum` (3), `multipleOf` (4), with the message.
    Bound(u8, Number, String),
    /// `maxLength` (0), `minLength` (1), `maxItems` (2), `minItems` (3),
    /// `maxProperties` (4), `minProperties` (5): even kinds are maxima,
    /// `kind / 2` picks what is counted (characters, items, properties).
    /// With the limit and the message.
    Size(u8, u64, String),
    /// The pattern and the message.
    Pattern(String, String),
    UniqueItems,
    Items {
        prefix: Vec<usize>,
        rest: Option<usize>,
    },
    Contains {
        schema: usize,
        min: u64,
        max: Option<u64>,
    },
    /// `required` (one group, no condition) or `dependentRequired` (per
    /// group the property whose presence requires the names).
    Required(Vec<(Option<String>, Vec<String>)>),
    Properties {
        /// `properties` (unique names, from a JSON object), sorted by name
        /// for a binary search.
        properties: Vec<(String, usize)>,
        patterns: Vec<(String, usize)>,
        additional: Option<usize>,
    },
    PropertyNames(usize),
    DependentSchemas(Vec<(String, usize)>),
    AllOf(Vec<usize>),
    /// `anyOf` (`one` false) / `oneOf`.
    Of {
        one: bool,
        subs: Vec<usize>,
    },
    Not(usize),
    If {
        condition: usize,
        then: Option<usize>,
        otherwise: Option<usize>,
    },
    /// `unevaluatedItems` (`side` [`eval::ITEMS`]) / `unevaluatedProperties`
    /// ([`eval::PROPS`]).
    Unevaluated {
        side: u8,
        schema: usize,
    },
}
