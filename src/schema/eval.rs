//! Instance evaluation against a [`CompiledSchema`].
//!
//! Two modes share one code path: with an issue sink every failure is
//! reported (with a dotted instance path); without one, evaluation stops at
//! the first failure. Annotations for `unevaluatedItems` /
//! `unevaluatedProperties` are collected only below schemas that use them.
//!
//! Messages are `&str` pieces assembled by one function,
//! [`Evaluator::report`], only when there is a sink: no `format!` per
//! message, no closure per message (each costs code in the wasm module).
//! The fixed messages of the keywords without subschemas (`must be string`,
//! `must be <= 5`, ...) are built once, when the schema is compiled.
//!
//! All the work is charged to one [`Work`] budget: each schema evaluation
//! one step, and the work a keyword does over the instance by its size
//! (bytes scanned or matched, names looked up, values compared, children
//! walked), so that no instance, however built, costs more than the budget.
//! Issues are collected up to [`MAX_ISSUES`], the rest counted.

use super::equal;
use super::num;
use super::{
    count_message, len_u64, push_path_segment, types, CompiledSchema, Keyword, Node, ObjNode,
    OutOfBudget, PatternMatcher, SchemaIssue, Work, MAX_EVAL_DEPTH, MAX_ISSUES, UNITS_PER_STEP,
};
use crate::prelude::*;
use core::cmp::Ordering;
use serde_json::{Map, Number, Value};

type Sink<'x> = Option<&'x mut Collected>;

/// The issues collected, up to [`MAX_ISSUES`], and how many more were found.
#[derive(Debug, Default)]
struct Collected {
    list: Vec<SchemaIssue>,
    more: usize,
}

impl Collected {
    /// Issues found so far, collected or counted.
    fn found(&self) -> usize {
        self.list.len().saturating_add(self.more)
    }

    /// Room for one more issue; else it is counted.
    fn has_room(&mut self) -> bool {
        if self.list.len() < MAX_ISSUES {
            return true;
        }
        self.more = self.more.saturating_add(1);
        false
    }
}

// The charges below are work units ([`UNITS_PER_STEP`] a step), measured
// against a schema evaluation in the shipped module (`node
// benches/validate-worst.mjs`: a budget spent on any one of them takes
// about as long as one spent on evaluations).

/// Each keyword a node applies, besides its own work: a node of a few
/// keywords that recurse (`anyOf` over `$ref`s and `properties`) costs
/// several times a bare evaluation (the `validate` fuzz target's
/// `items`/`anyOf`/`$ref`/`const` finding: 170 ms in Chromium before).
const KEYWORD_UNITS: usize = 64;
/// Looking up one name in an object or a schema's list, besides its bytes.
const LOOKUP_UNITS: usize = 32;
/// One pattern match, besides its input's bytes: the engine's set-up per
/// search (about 300 ns natively for a short key; the `validate` fuzz
/// target's time oracle found 100k keys under two `patternProperties` at
/// 256 units taking over 100 ms).
const MATCH_UNITS: usize = 1024;
/// Per byte of a pattern's input, and per state of the pattern's program
/// more (the engine visits each byte with every state alive; the
/// pattern's bytes when the matcher does not say, or when more).
const MATCH_UNITS_PER_BYTE: usize = 128;
const MATCH_UNITS_PER_BYTE_AND_PATTERN_BYTE: usize = 8;

/// `format!("schema evaluation exceeded {MAX_EVAL_STEPS} steps")`, spelled
/// out (a unit test pins it to the constant).
pub(super) const STEPS_MESSAGE: &str = "schema evaluation exceeded 1000000 steps";
/// `format!("schema evaluation exceeded the maximum depth of {MAX_EVAL_DEPTH} (cyclic $ref?)")`.
pub(super) const DEPTH_MESSAGE: &str =
    "schema evaluation exceeded the maximum depth of 256 (cyclic $ref?)";

/// [`Annotations`] bits: an item, a property.
pub(super) const ITEMS: u8 = 1;
pub(super) const PROPS: u8 = 2;

/// Evaluated items / properties of one instance location.
#[derive(Debug, Default)]
struct Annotations {
    /// [`ITEMS`]: every item evaluated; [`PROPS`]: every property.
    all: u8,
    /// The same bits per position (item index, or property by position).
    marks: Vec<u8>,
}

impl Annotations {
    /// Marks item or property (`side`) `i` evaluated.
    fn mark(&mut self, side: u8, i: usize) {
        while self.marks.len() <= i {
            self.marks.push(0);
        }
        if let Some(m) = self.marks.get_mut(i) {
            *m |= side;
        }
    }

    fn merge(&mut self, other: Annotations) {
        self.all |= other.all;
        for (i, &side) in other.marks.iter().enumerate() {
            if side != 0 {
                self.mark(side, i);
            }
        }
    }
}

struct Evaluator<'s> {
    schema: &'s CompiledSchema,
    matcher: &'s dyn PatternMatcher,
    depth: usize,
    work: Work,
    /// Set when a limit was hit; evaluation unwinds and reports only this.
    abort: Option<SchemaIssue>,
    /// Dynamic scope: resources entered, outermost first.
    scope: Vec<usize>,
    /// Current instance path (maintained only while reporting issues).
    path: String,
}

fn issue(path: String, message: &str) -> SchemaIssue {
    SchemaIssue {
        path,
        message: message.to_owned(),
    }
}

pub(super) fn validate(
    schema: &CompiledSchema,
    instance: &Value,
    matcher: &dyn PatternMatcher,
) -> Vec<SchemaIssue> {
    validate_within(schema, instance, matcher, Work::new())
}

/// [`validate`] with what is left of a budget of which some was spent
/// before (building the instance).
pub(super) fn validate_within(
    schema: &CompiledSchema,
    instance: &Value,
    matcher: &dyn PatternMatcher,
    work: Work,
) -> Vec<SchemaIssue> {
    let mut ev = Evaluator::new(schema, matcher);
    ev.work = work;
    let mut collected = Collected::default();
    let valid = ev.eval(schema.root, instance, Some(&mut collected), None);
    let Collected {
        list: mut issues,
        more,
    } = collected;
    // A limit hit: that issue alone.
    if let Some(abort) = ev.abort {
        return vec![abort];
    }
    if valid {
        issues.clear();
    } else if issues.is_empty() {
        issues.push(issue(String::new(), "is invalid"));
    } else if more > 0 {
        // The last collected issue makes room for the count (two or more).
        issues.pop();
        let mut message = int_text(more.saturating_add(1));
        message.push_str(" more issues not shown");
        issues.push(issue(String::new(), &message));
    }
    issues
}

pub(super) fn is_valid(
    schema: &CompiledSchema,
    instance: &Value,
    matcher: &dyn PatternMatcher,
) -> bool {
    let mut ev = Evaluator::new(schema, matcher);
    let valid = ev.eval(schema.root, instance, None, None);
    valid && ev.abort.is_none()
}

/// The work units `validate` spends on `instance` (tests: what each keyword
/// charges).
#[cfg(all(test, not(target_arch = "wasm32")))]
pub(super) fn work_spent(
    schema: &CompiledSchema,
    instance: &Value,
    matcher: &dyn PatternMatcher,
) -> usize {
    let mut ev = Evaluator::new(schema, matcher);
    let mut collected = Collected::default();
    ev.eval(schema.root, instance, Some(&mut collected), None);
    ev.work.spent()
}

/// The children of an array (by index) or an object (by key), one loop for both.
enum Children<'v> {
    Items(core::iter::Enumerate<core::slice::Iter<'v, Value>>),
    Props(core::iter::Enumerate<serde_json::map::Iter<'v>>),
}

impl<'v> Children<'v> {
    fn of(inst: &'v Value) -> Option<Children<'v>> {
        match inst {
            Value::Array(a) => Some(Children::Items(a.iter().enumerate())),
            Value::Object(o) => Some(Children::Props(o.iter().enumerate())),
            _ => None,
        }
    }

    /// (position, key for objects, value).
    fn next(&mut self) -> Option<(usize, Option<&'v String>, &'v Value)> {
        match self {
            Children::Items(it) => it.next().map(|(i, v)| (i, None, v)),
            Children::Props(it) => it.next().map(|(i, (k, v))| (i, Some(k), v)),
        }
    }
}

/// `n` in decimal.
fn int_text(n: usize) -> String {
    let mut text = String::new();
    text.push_str(&len_u64(n).to_string());
    text
}

/// `n` Unicode scalar values in `s` (`chars().count()`, without core's
/// counter in the wasm): every byte but UTF-8 continuation bytes.
fn char_count(s: &str) -> usize {
    s.bytes().filter(|&b| b & 0xc0 != 0x80).count()
}

impl<'s> Evaluator<'s> {
    fn new(schema: &'s CompiledSchema, matcher: &'s dyn PatternMatcher) -> Self {
        Evaluator {
            schema,
            matcher,
            depth: 0,
            work: Work::new(),
            abort: None,
            scope: Vec::new(),
            path: String::new(),
        }
    }

    /// The current path, or its child `key` (a property, possibly missing).
    fn path_to(&self, key: Option<&str>) -> String {
        let mut path = self.path.clone();
        if let Some(key) = key {
            push_path_segment(&mut path, key);
        }
        path
    }

    /// Report at the current path, or at its child `key`; the message (its
    /// pieces in order) is assembled only with a sink that has room.
    #[inline(never)]
    fn report(&mut self, sink: &mut Sink<'_>, key: Option<&str>, pieces: &[&str]) {
        let Some(s) = sink else {
            return;
        };
        if !s.has_room() {
            return;
        }
        let mut message = String::new();
        for piece in pieces {
            message.push_str(piece);
        }
        let path = self.path_to(key);
        if self.spend(path.len().saturating_add(message.len())) {
            s.list.push(SchemaIssue { path, message });
        }
    }

    fn set_abort(&mut self, message: &str) {
        if self.abort.is_none() {
            self.abort = Some(issue(self.path.clone(), message));
        }
    }

    /// Charges `units` of work; past the budget, sets the abort and false.
    fn spend(&mut self, units: usize) -> bool {
        let charge = self.work.charge(units);
        self.charged(charge).is_some()
    }

    /// `result` of a charged computation; out of budget, sets the abort.
    fn charged<T>(&mut self, result: Result<T, OutOfBudget>) -> Option<T> {
        match result {
            Ok(value) => Some(value),
            Err(OutOfBudget) => {
                self.set_abort(STEPS_MESSAGE);
                None
            }
        }
    }

    /// Evaluate node `idx` against `inst`. Annotations are written into `ann`
    /// (when given) whether or not the node is valid: callers that need
    /// "valid only" semantics (`anyOf`, `if`...) pass a fresh set.
    fn eval(
        &mut self,
        idx: usize,
        inst: &Value,
        mut sink: Sink<'_>,
        ann: Option<&mut Annotations>,
    ) -> bool {
        if self.abort.is_some() {
            return false;
        }
        if !self.spend(UNITS_PER_STEP) {
            return false;
        }
        let schema = self.schema;
        let node = match schema.nodes.get(idx) {
            Some(Node::Obj(o)) => o,
            Some(Node::Bool(true)) => return true,
            Some(Node::Bool(false)) => {
                self.report(&mut sink, None, &["is not allowed"]);
                return false;
            }
            None => {
                self.set_abort("internal error: unknown schema node");
                return false;
            }
        };
        if self.depth >= MAX_EVAL_DEPTH {
            self.set_abort(DEPTH_MESSAGE);
            return false;
        }
        self.depth = self.depth.saturating_add(1);
        let pushed = self.scope.last() != Some(&node.resource);
        if pushed {
            self.scope.push(node.resource);
        }
        let valid = if node.has_unevaluated {
            let mut local = Annotations::default();
            let valid = self.eval_keywords(node, inst, sink, Some(&mut local));
            if let Some(a) = ann {
                self.merge(a, local);
            }
            valid
        } else {
            self.eval_keywords(node, inst, sink, ann)
        };
        if pushed {
            self.scope.pop();
        }
        self.depth = self.depth.saturating_sub(1);
        valid
    }

    fn eval_keywords(
        &mut self,
        node: &'s ObjNode,
        inst: &Value,
        mut sink: Sink<'_>,
        mut ann: Option<&mut Annotations>,
    ) -> bool {
        let mut valid = true;
        for kw in &node.keywords {
            if !self.spend(KEYWORD_UNITS) {
                return false;
            }
            if !self.eval_keyword(kw, inst, sink.as_deref_mut(), ann.as_deref_mut()) {
                valid = false;
                if sink.is_none() || self.abort.is_some() {
                    break;
                }
            }
        }
        valid
    }

    /// `other`'s annotations added to `into`, the work charged.
    fn merge(&mut self, into: &mut Annotations, other: Annotations) {
        if self.spend(other.marks.len()) {
            into.merge(other);
        }
    }

    /// Evaluate `idx` against a child location: property `key`, or item `i`
    /// when `key` is `None`. A key's bytes are charged by the caller (which
    /// looked it up).
    fn eval_at(
        &mut self,
        i: usize,
        key: Option<&str>,
        idx: usize,
        inst: &Value,
        sink: Sink<'_>,
    ) -> bool {
        if sink.is_none() {
            return self.eval(idx, inst, None, None);
        }
        let len = self.enter(i, key);
        let valid = self.eval(idx, inst, sink, None);
        self.path.truncate(len);
        valid
    }

    /// Appends a child to the path; returns the length to truncate back to.
    fn enter(&mut self, i: usize, key: Option<&str>) -> usize {
        let len = self.path.len();
        push_path_segment(&mut self.path, key.unwrap_or(""));
        if key.is_none() {
            self.path.push_str(itoa::Buffer::new().format(i));
        }
        len
    }

    fn is_false(&self, idx: usize) -> bool {
        matches!(self.schema.nodes.get(idx), Some(Node::Bool(false)))
    }

    /// Dispatch one keyword. Kept thin: it sits on the recursion path
    /// (node → keyword → subschema), so everything that builds messages or
    /// holds locals lives in out-of-line helpers, keeping stack frames small.
    fn eval_keyword(
        &mut self,
        kw: &'s Keyword,
        inst: &Value,
        mut sink: Sink<'_>,
        ann: Option<&mut Annotations>,
    ) -> bool {
        match (kw, inst) {
            (Keyword::Ref { target, anchor }, _) => {
                let dest = self.dynamic_target(*target, anchor.as_deref());
                self.eval(dest, inst, sink, ann)
            }
            (Keyword::Items { prefix, rest }, Value::Array(a)) => {
                self.eval_items(a, prefix, *rest, sink, ann)
            }
            (Keyword::Contains { schema, min, max }, Value::Array(a)) => {
                self.eval_contains(a, *schema, *min, *max, sink, ann)
            }
            (
                Keyword::Properties {
                    properties,
                    patterns,
                    additional,
                },
                Value::Object(o),
            ) => self.eval_properties(o, properties, patterns, *additional, sink, ann),
            (Keyword::PropertyNames(s), Value::Object(o)) => self.eval_property_names(o, *s, sink),
            (Keyword::DependentSchemas(deps), Value::Object(o)) => {
                self.eval_dependent_schemas(o, deps, inst, sink, ann)
            }
            (Keyword::AllOf(subs), _) => self.eval_all_of(subs, inst, sink, ann),
            (Keyword::Of { one, subs }, _) => self.eval_of(*one, subs, inst, sink, ann),
            (Keyword::Not(s), _) => {
                !self.eval(*s, inst, None, None)
                    || self.fail(&mut sink, None, &["must NOT be valid"])
            }
            (
                Keyword::If {
                    condition,
                    then,
                    otherwise,
                },
                _,
            ) => self.eval_if(*condition, *then, *otherwise, inst, sink, ann),
            (Keyword::Unevaluated { side, schema }, Value::Array(_) | Value::Object(_))
                if (*side == PROPS) == matches!(inst, Value::Object(_)) =>
            {
                self.eval_unevaluated(inst, *schema, *side, sink, ann)
            }
            (
                Keyword::Items { .. }
                | Keyword::Contains { .. }
                | Keyword::Properties { .. }
                | Keyword::PropertyNames(_)
                | Keyword::DependentSchemas(_)
                | Keyword::Unevaluated { .. },
                _,
            ) => true,
            _ => self.check_leaf(kw, inst, &mut sink),
        }
    }

    fn dynamic_target(&mut self, target: usize, anchor: Option<&str>) -> usize {
        let Some(name) = anchor else {
            return target;
        };
        // One lookup per resource in scope (a wrong target is never
        // evaluated: out of budget, `eval` stops first).
        if !self.spend(self.scope.len().saturating_mul(LOOKUP_UNITS)) {
            return target;
        }
        for r in &self.scope {
            if let Some(&n) = self
                .schema
                .dynamic_anchors
                .get(*r)
                .and_then(|m| m.get(name))
            {
                return n;
            }
        }
        target
    }

    fn eval_dependent_schemas(
        &mut self,
        obj: &Map<String, Value>,
        deps: &[(String, usize)],
        inst: &Value,
        mut sink: Sink<'_>,
        mut ann: Option<&mut Annotations>,
    ) -> bool {
        let mut valid = true;
        for (name, s) in deps {
            if !self.spend(LOOKUP_UNITS.saturating_add(name.len())) {
                return false;
            }
            if obj.contains_key(name.as_str())
                && !self.eval(*s, inst, sink.as_deref_mut(), ann.as_deref_mut())
            {
                valid = false;
                if sink.is_none() {
                    break;
                }
            }
        }
        valid
    }

    fn eval_all_of(
        &mut self,
        subs: &[usize],
        inst: &Value,
        mut sink: Sink<'_>,
        mut ann: Option<&mut Annotations>,
    ) -> bool {
        let mut valid = true;
        for s in subs {
            if !self.eval(*s, inst, sink.as_deref_mut(), ann.as_deref_mut()) {
                valid = false;
                if sink.is_none() {
                    break;
                }
            }
        }
        valid
    }

    /// `anyOf` (`one` false) or `oneOf` (`one` true).
    fn eval_of(
        &mut self,
        one: bool,
        subs: &[usize],
        inst: &Value,
        mut sink: Sink<'_>,
        mut ann: Option<&mut Annotations>,
    ) -> bool {
        let mut first: Option<usize> = None;
        let mut chosen = Annotations::default();
        let want = ann.is_some();
        for (i, s) in subs.iter().enumerate() {
            let mut sub = Annotations::default();
            if !self.eval(*s, inst, None, want.then_some(&mut sub)) {
                continue;
            }
            if one {
                if let Some(f) = first {
                    let (f, i) = (int_text(f), int_text(i));
                    return self.fail(
                        &mut sink,
                        None,
                        &[
                            "must match exactly one schema in oneOf, but matches schemas ",
                            &f,
                            " and ",
                            &i,
                        ],
                    );
                }
                chosen = sub;
            } else {
                match ann.as_deref_mut() {
                    Some(a) => self.merge(a, sub),
                    None => {
                        first = Some(i);
                        break;
                    }
                }
            }
            first = Some(i);
        }
        if first.is_none() {
            let message = if one {
                "must match exactly one schema in oneOf"
            } else {
                "must match a schema in anyOf"
            };
            return self.fail(&mut sink, None, &[message]);
        }
        if let Some(a) = ann {
            self.merge(a, chosen);
        }
        true
    }

    fn eval_if(
        &mut self,
        condition: usize,
        then: Option<usize>,
        otherwise: Option<usize>,
        inst: &Value,
        sink: Sink<'_>,
        mut ann: Option<&mut Annotations>,
    ) -> bool {
        if then.is_none() && otherwise.is_none() && ann.is_none() {
            return true;
        }
        let mut sub = Annotations::default();
        let want = ann.is_some();
        let branch = if self.eval(condition, inst, None, want.then_some(&mut sub)) {
            if let Some(a) = ann.as_deref_mut() {
                self.merge(a, sub);
            }
            then
        } else {
            otherwise
        };
        match branch {
            Some(b) => self.eval(b, inst, sink, ann),
            None => true,
        }
    }

    fn eval_items(
        &mut self,
        items: &[Value],
        prefix: &[usize],
        rest: Option<usize>,
        mut sink: Sink<'_>,
        mut ann: Option<&mut Annotations>,
    ) -> bool {
        let mut valid = true;
        for (i, item) in items.iter().enumerate() {
            let s = match prefix.get(i) {
                Some(&s) => {
                    if let Some(a) = ann.as_deref_mut() {
                        a.mark(ITEMS, i);
                    }
                    s
                }
                None => {
                    let Some(rest) = rest else {
                        break;
                    };
                    if i == prefix.len() {
                        if let Some(a) = ann.as_deref_mut() {
                            a.all |= ITEMS;
                        }
                        if self.is_false(rest) {
                            let message = count_message(
                                "must NOT have more than ",
                                len_u64(i),
                                ("item", "items"),
                            );
                            return self.fail(&mut sink, None, &[&message]);
                        }
                    }
                    rest
                }
            };
            if !self.eval_at(i, None, s, item, sink.as_deref_mut()) {
                valid = false;
                if sink.is_none() {
                    return false;
                }
            }
        }
        valid
    }

    fn eval_contains(
        &mut self,
        items: &[Value],
        schema: usize,
        min: u64,
        max: Option<u64>,
        mut sink: Sink<'_>,
        mut ann: Option<&mut Annotations>,
    ) -> bool {
        let exhaustive = max.is_some() || ann.is_some();
        if min == 0 && !exhaustive {
            return true;
        }
        let mut found = 0u64;
        for (i, item) in items.iter().enumerate() {
            if self.eval(schema, item, None, None) {
                found = found.saturating_add(1);
                if let Some(a) = ann.as_deref_mut() {
                    a.mark(ITEMS, i);
                }
                if !exhaustive && found >= min {
                    return true;
                }
            }
            if self.abort.is_some() {
                return false;
            }
        }
        let (word, limit) = match max {
            _ if found < min => ("must contain at least ", min),
            Some(max) if found > max => ("must contain at most ", max),
            _ => return true,
        };
        let message = count_message(word, limit, ("valid item", "valid items"));
        self.fail(&mut sink, None, &[&message])
    }

    fn eval_properties(
        &mut self,
        obj: &Map<String, Value>,
        properties: &[(String, usize)],
        patterns: &[(String, usize)],
        additional: Option<usize>,
        mut sink: Sink<'_>,
        mut ann: Option<&mut Annotations>,
    ) -> bool {
        let mut valid = true;
        let mut bad_patterns: Vec<usize> = Vec::new();
        let additional_false = additional.is_some_and(|s| self.is_false(s));
        for (i, (key, value)) in obj.iter().enumerate() {
            // The key looked up, and copied into the path when evaluated.
            if !self.spend(LOOKUP_UNITS.saturating_add(key.len().saturating_mul(2))) {
                return false;
            }
            let mut matched = false;
            let found = properties.binary_search_by(|(name, _)| name.as_str().cmp(key));
            if let Some(&(_, s)) = found.ok().and_then(|at| properties.get(at)) {
                matched = true;
                if !self.eval_at(i, Some(key), s, value, sink.as_deref_mut()) {
                    valid = false;
                    if sink.is_none() {
                        return false;
                    }
                }
            }
            for (pi, (pattern, s)) in patterns.iter().enumerate() {
                if !self.spend_match(pattern, key) {
                    return false;
                }
                match self.matcher.is_match(pattern, key) {
                    Ok(true) => {
                        matched = true;
                        if !self.eval_at(i, Some(key), *s, value, sink.as_deref_mut()) {
                            valid = false;
                            if sink.is_none() {
                                return false;
                            }
                        }
                    }
                    Ok(false) => {}
                    Err(e) => {
                        valid = false;
                        if sink.is_none() {
                            return false;
                        }
                        if !bad_patterns.contains(&pi) {
                            bad_patterns.push(pi);
                            self.report_bad_pattern(&mut sink, pattern, &e);
                        }
                    }
                }
            }
            if matched || additional.is_some() {
                if let Some(a) = ann.as_deref_mut() {
                    a.mark(PROPS, i);
                }
            }
            let Some(s) = additional.filter(|_| !matched) else {
                continue;
            };
            if additional_false {
                valid = false;
                if sink.is_none() {
                    return false;
                }
                self.report(
                    &mut sink,
                    Some(key),
                    &["must NOT have additional properties"],
                );
            } else if !self.eval_at(i, Some(key), s, value, sink.as_deref_mut()) {
                valid = false;
                if sink.is_none() {
                    return false;
                }
            }
        }
        valid
    }

    fn report_bad_pattern(&mut self, sink: &mut Sink<'_>, pattern: &str, error: &str) {
        self.report(sink, None, &["invalid pattern \"", pattern, "\": ", error]);
    }

    /// Charges one match of `pattern` against `text`.
    fn spend_match(&mut self, pattern: &str, text: &str) -> bool {
        let per_byte = pattern
            .len()
            .max(self.matcher.work_per_byte(pattern))
            .saturating_mul(MATCH_UNITS_PER_BYTE_AND_PATTERN_BYTE)
            .saturating_add(MATCH_UNITS_PER_BYTE);
        self.spend(MATCH_UNITS.saturating_add(text.len().saturating_mul(per_byte)))
    }

    /// Each name is evaluated as a string; its issues are reported at the
    /// property, their messages prefixed with the name.
    fn eval_property_names(
        &mut self,
        obj: &Map<String, Value>,
        schema: usize,
        mut sink: Sink<'_>,
    ) -> bool {
        let mut valid = true;
        for key in obj.keys() {
            // The key copied as a string value.
            if !self.spend(key.len()) {
                return false;
            }
            let name = Value::String(key.clone());
            let (start, found_before) = sink
                .as_deref()
                .map_or((0, 0), |s| (s.list.len(), s.found()));
            // An evaluation that reports an issue fails.
            if self.eval(schema, &name, sink.as_deref_mut(), None) {
                continue;
            }
            valid = false;
            if sink.is_none() {
                return false;
            }
            if sink.as_deref().is_some_and(|s| s.found() == found_before) {
                self.report(&mut sink, None, &["is invalid"]);
            }
            let path = self.path_to(Some(key));
            let Some(s) = sink.as_deref_mut() else {
                return false;
            };
            let renamed = s.list.get_mut(start..).unwrap_or_default();
            let bytes = renamed
                .iter()
                .map(|found| found.message.len())
                .sum::<usize>();
            if !self.spend(
                bytes.saturating_add(
                    renamed
                        .len()
                        .saturating_mul(path.len().saturating_add(key.len())),
                ),
            ) {
                return false;
            }
            for found in renamed {
                let mut message = String::from("property name '");
                message.push_str(key);
                message.push_str("' ");
                message.push_str(&found.message);
                found.message = message;
                found.path.clone_from(&path);
            }
        }
        valid
    }

    /// `unevaluatedItems` (`side` [`ITEMS`]) / `unevaluatedProperties`
    /// ([`PROPS`]) on an array / object `inst`.
    fn eval_unevaluated(
        &mut self,
        inst: &Value,
        schema: usize,
        side: u8,
        mut sink: Sink<'_>,
        ann: Option<&mut Annotations>,
    ) -> bool {
        let mut empty = Annotations::default();
        let ann = match ann {
            Some(a) => a,
            None => &mut empty,
        };
        if ann.all & side != 0 {
            return true;
        }
        let schema_false = self.is_false(schema);
        let mut valid = true;
        let mut children = Children::of(inst);
        while let Some((i, key, value)) = children.as_mut().and_then(Children::next) {
            // A child skipped costs a unit; one evaluated, its key's bytes too.
            if !self.spend(1) {
                return false;
            }
            if ann.marks.get(i).is_some_and(|m| m & side != 0) {
                continue;
            }
            let key = key.map(String::as_str);
            if !self.spend(key.map_or(0, str::len)) {
                return false;
            }
            let ok = if schema_false {
                if sink.is_some() {
                    let len = self.enter(i, key);
                    let message = if side == PROPS {
                        "must NOT have unevaluated properties"
                    } else {
                        "must NOT have unevaluated items"
                    };
                    self.report(&mut sink, None, &[message]);
                    self.path.truncate(len);
                }
                false
            } else {
                self.eval_at(i, key, schema, value, sink.as_deref_mut())
            };
            if !ok {
                valid = false;
                if sink.is_none() {
                    return false;
                }
            }
        }
        ann.all |= side;
        valid
    }

    /// Reports at the current path or its child `key`; false.
    fn fail(&mut self, sink: &mut Sink<'_>, key: Option<&str>, pieces: &[&str]) -> bool {
        self.report(sink, key, pieces);
        false
    }

    /// Check a keyword that does not apply subschemas.
    #[inline(never)]
    fn check_leaf(&mut self, kw: &Keyword, inst: &Value, sink: &mut Sink<'_>) -> bool {
        let message: &str = match (kw, inst) {
            (Keyword::Type { mask, message }, _) => {
                if type_matches(*mask, inst) {
                    return true;
                }
                message
            }
            (
                Keyword::Enum {
                    values,
                    table,
                    message,
                },
                _,
            ) => {
                let member = equal::is_member(inst, values, table.as_deref(), &mut self.work);
                match self.charged(member) {
                    Some(true) => return true,
                    Some(false) => message,
                    None => return false,
                }
            }
            (Keyword::Bound(kind, m, message), Value::Number(n)) => {
                if !bound_fails(*kind, n, m) {
                    return true;
                }
                message
            }
            (Keyword::Size(kind, limit, message), _) => {
                // Even kinds are maxima; kind / 2: 0 strings, 1 arrays, 2 objects.
                let len = match (kind / 2, inst) {
                    (0, Value::String(s)) => {
                        if !self.spend(s.len()) {
                            return false;
                        }
                        char_count(s)
                    }
                    (1, Value::Array(a)) => a.len(),
                    (2, Value::Object(o)) => o.len(),
                    _ => return true,
                };
                let len = len_u64(len);
                if kind & 1 == 0 && len <= *limit || kind & 1 == 1 && len >= *limit {
                    return true;
                }
                message
            }
            (Keyword::Pattern(pattern, message), Value::String(s)) => {
                if !self.spend_match(pattern, s) {
                    return false;
                }
                match self.matcher.is_match(pattern, s) {
                    Ok(true) => return true,
                    Ok(false) => message,
                    Err(e) => {
                        self.report_bad_pattern(sink, pattern, &e);
                        return false;
                    }
                }
            }
            (Keyword::UniqueItems, Value::Array(a)) => {
                let duplicate = equal::find_duplicate(a, &mut self.work);
                let Some(found) = self.charged(duplicate) else {
                    return false;
                };
                let Some((i, j)) = found else {
                    return true;
                };
                let (i, j) = (int_text(i), int_text(j));
                return self.fail(
                    sink,
                    None,
                    &[
                        "must NOT have duplicate items (items ",
                        &i,
                        " and ",
                        &j,
                        " are identical)",
                    ],
                );
            }
            (Keyword::Required(groups), Value::Object(o)) => {
                let mut valid = true;
                for (condition, required) in groups {
                    let looked_up = condition.as_ref().map_or(0, String::len);
                    if !self.spend(LOOKUP_UNITS.saturating_add(looked_up)) {
                        return false;
                    }
                    if condition
                        .as_ref()
                        .is_some_and(|c| !o.contains_key(c.as_str()))
                    {
                        continue;
                    }
                    for r in required {
                        if !self.spend(LOOKUP_UNITS.saturating_add(r.len())) {
                            return false;
                        }
                        if o.contains_key(r.as_str()) {
                            continue;
                        }
                        valid = false;
                        if sink.is_none() {
                            return false;
                        }
                        let pieces = match condition {
                            None => ["must have required property '", r, "'", "", ""],
                            Some(c) => [
                                "must have property '",
                                r,
                                "' when property '",
                                c,
                                "' is present",
                            ],
                        };
                        self.report(sink, Some(r), &pieces);
                    }
                }
                return valid;
            }
            _ => return true,
        };
        self.fail(sink, None, &[message])
    }
}

/// `maximum` (0), `exclusiveMaximum` (1), `minimum` (2), `exclusiveMinimum`
/// (3) or `multipleOf` (4) `m` fails for `n`.
fn bound_fails(kind: u8, n: &Number, m: &Number) -> bool {
    if kind == 4 {
        return !num::is_multiple_of(n, m);
    }
    let bad = if kind < 2 {
        Ordering::Greater
    } else {
        Ordering::Less
    };
    let exclusive = kind & 1 == 1;
    match num::compare(n, m) {
        Some(o) => o == bad || (exclusive && o == Ordering::Equal),
        None => exclusive,
    }
}

fn type_matches(mask: u8, inst: &Value) -> bool {
    let bit = match inst {
        Value::Null => types::NULL,
        Value::Bool(_) => types::BOOLEAN,
        Value::Object(_) => types::OBJECT,
        Value::Array(_) => types::ARRAY,
        Value::String(_) => types::STRING,
        Value::Number(n) => {
            if mask & types::NUMBER != 0 {
                return true;
            }
            return mask & types::INTEGER != 0 && num::is_integer(n);
        }
    };
    mask & bit != 0
}
