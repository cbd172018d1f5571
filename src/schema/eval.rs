//! Instance evaluation against a [`CompiledSchema`].
//!
//! Two modes share one code path: with an issue sink every failure is
//! reported (with a dotted instance path); without one, evaluation stops at
//! the first failure. Annotations for `unevaluatedItems` /
//! `unevaluatedProperties` are collected only below schemas that use them.
//!
//! Messages are given as [`Part`] lists and assembled by one function,
//! [`Evaluator::report`], only when there is a sink: no `format!` per
//! message, no closure per message (each costs code in the wasm module).

use super::num;
use super::{
    types, CompiledSchema, Keyword, Node, ObjNode, PatternMatcher, SchemaIssue, MAX_EVAL_DEPTH,
    MAX_EVAL_STEPS,
};
use crate::json::{Map, Number, Value};
use crate::prelude::*;
use core::cmp::Ordering;
use core::fmt::Write as _;

type Sink<'x> = Option<&'x mut Vec<SchemaIssue>>;

/// `format!("schema evaluation exceeded {MAX_EVAL_STEPS} steps")`, spelled
/// out (a unit test pins it to the constant).
pub(super) const STEPS_MESSAGE: &str = "schema evaluation exceeded 1000000 steps";
/// `format!("schema evaluation exceeded the maximum depth of {MAX_EVAL_DEPTH} (cyclic $ref?)")`.
pub(super) const DEPTH_MESSAGE: &str =
    "schema evaluation exceeded the maximum depth of 256 (cyclic $ref?)";

/// One piece of an issue message.
#[derive(Clone, Copy)]
enum Part<'a> {
    Text(&'a str),
    Int(u64),
    Number(&'a Number),
    /// `1 item`, `2 items`.
    Count(u64, &'a str),
}

use Part::{Count, Int, Text};

/// Words and comparison signs of [`Keyword::Bound`] / [`Keyword::Size`] by
/// their index (see `compile.rs`).
const BOUND_MESSAGES: [&str; 5] = [
    "must be <= ",
    "must be < ",
    "must be >= ",
    "must be > ",
    "must be multiple of ",
];
const SIZE_WORDS: [&str; 3] = ["character", "item", "property"];

/// Evaluated properties / items of one instance location (by position).
#[derive(Debug, Default)]
struct Annotations {
    all_props: bool,
    props: Vec<bool>,
    all_items: bool,
    items: Vec<bool>,
}

fn set_bit(bits: &mut Vec<bool>, i: usize) {
    if bits.len() <= i {
        bits.resize(i.saturating_add(1), false);
    }
    if let Some(b) = bits.get_mut(i) {
        *b = true;
    }
}

fn merge_bits(into: &mut Vec<bool>, from: Vec<bool>) {
    if into.len() < from.len() {
        into.resize(from.len(), false);
    }
    for (a, b) in into.iter_mut().zip(from) {
        *a |= b;
    }
}

impl Annotations {
    /// Marks property (`props`) or item `i` evaluated.
    fn mark(&mut self, props: bool, i: usize) {
        let (all, bits) = self.side(props);
        if !*all {
            set_bit(bits, i);
        }
    }
    fn side(&mut self, props: bool) -> (&mut bool, &mut Vec<bool>) {
        if props {
            (&mut self.all_props, &mut self.props)
        } else {
            (&mut self.all_items, &mut self.items)
        }
    }
    fn merge(&mut self, other: Annotations) {
        self.all_props |= other.all_props;
        self.all_items |= other.all_items;
        if !self.all_props {
            merge_bits(&mut self.props, other.props);
        }
        if !self.all_items {
            merge_bits(&mut self.items, other.items);
        }
    }
}

struct Evaluator<'s> {
    schema: &'s CompiledSchema,
    matcher: &'s dyn PatternMatcher,
    depth: usize,
    steps: usize,
    /// Set when a limit was hit; evaluation unwinds and reports only this.
    abort: Option<SchemaIssue>,
    /// Dynamic scope: resources entered, outermost first.
    scope: Vec<usize>,
    /// Current instance path (maintained only while reporting issues).
    path: String,
}

pub(super) fn validate(
    schema: &CompiledSchema,
    instance: &Value,
    matcher: &dyn PatternMatcher,
) -> Vec<SchemaIssue> {
    let mut ev = Evaluator::new(schema, matcher);
    let mut issues = Vec::new();
    let valid = ev.eval(schema.root, instance, Some(&mut issues), None);
    if let Some(abort) = ev.abort {
        return vec![abort];
    }
    if !valid && issues.is_empty() {
        issues.push(SchemaIssue {
            path: String::new(),
            message: "is invalid".to_string(),
        });
    }
    if valid {
        issues.clear();
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

fn len_u64(n: usize) -> u64 {
    u64::try_from(n).unwrap_or(u64::MAX)
}

/// The children of an array (by index) or an object (by key), one loop for both.
enum Children<'v> {
    Items(core::iter::Enumerate<core::slice::Iter<'v, Value>>),
    Props(core::iter::Enumerate<crate::json::Iter<'v>>),
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

impl<'s> Evaluator<'s> {
    fn new(schema: &'s CompiledSchema, matcher: &'s dyn PatternMatcher) -> Self {
        Evaluator {
            schema,
            matcher,
            depth: 0,
            steps: 0,
            abort: None,
            scope: Vec::new(),
            path: String::new(),
        }
    }

    /// Report at the current path, or at its child `key` (a property, possibly
    /// missing); the message is assembled only with a sink.
    #[inline(never)]
    fn report(&self, sink: &mut Sink<'_>, key: Option<&str>, parts: &[Part<'_>]) {
        let Some(s) = sink else {
            return;
        };
        let mut path = self.path.clone();
        if let Some(key) = key {
            if !path.is_empty() {
                path.push('.');
            }
            path.push_str(key);
        }
        let mut message = String::new();
        for part in parts {
            match *part {
                Text(t) => message.push_str(t),
                Int(n) => {
                    let _ = write!(message, "{n}");
                }
                Part::Number(n) => n.write(&mut message),
                Count(n, word) => {
                    let _ = write!(message, "{n} {word}");
                    if n != 1 {
                        // "properties", not "propertys".
                        if word.ends_with('y') {
                            message.pop();
                            message.push_str("ie");
                        }
                        message.push('s');
                    }
                }
            }
        }
        s.push(SchemaIssue { path, message });
    }

    fn set_abort(&mut self, message: &str) {
        if self.abort.is_none() {
            self.abort = Some(SchemaIssue {
                path: self.path.clone(),
                message: message.to_string(),
            });
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
        self.steps = self.steps.saturating_add(1);
        if self.steps > MAX_EVAL_STEPS {
            self.set_abort(STEPS_MESSAGE);
            return false;
        }
        let schema = self.schema;
        let node = match schema.nodes.get(idx) {
            Some(Node::Obj(o)) => o,
            Some(Node::Bool(true)) => return true,
            Some(Node::Bool(false)) => {
                self.report(&mut sink, None, &[Text("is not allowed")]);
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
                a.merge(local);
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
            if !self.eval_keyword(kw, inst, sink.as_deref_mut(), ann.as_deref_mut()) {
                valid = false;
                if sink.is_none() || self.abort.is_some() {
                    break;
                }
            }
        }
        valid
    }

    /// Evaluate `idx` against a child location: property `key`, or item `i`
    /// when `key` is `None`.
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
        if len > 0 {
            self.path.push('.');
        }
        match key {
            Some(key) => self.path.push_str(key),
            None => {
                let _ = write!(self.path, "{i}");
            }
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
            (Keyword::Not(s), _) => self.eval_not(*s, inst, sink),
            (
                Keyword::If {
                    condition,
                    then,
                    otherwise,
                },
                _,
            ) => self.eval_if(*condition, *then, *otherwise, inst, sink, ann),
            (Keyword::Unevaluated { props, schema }, Value::Array(_) | Value::Object(_))
                if *props == matches!(inst, Value::Object(_)) =>
            {
                self.eval_unevaluated(inst, *schema, *props, sink, ann)
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

    fn dynamic_target(&self, target: usize, anchor: Option<&str>) -> usize {
        let Some(name) = anchor else {
            return target;
        };
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
        obj: &Map,
        deps: &[(String, usize)],
        inst: &Value,
        mut sink: Sink<'_>,
        mut ann: Option<&mut Annotations>,
    ) -> bool {
        let mut valid = true;
        for (name, s) in deps {
            if obj.contains_key(name)
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
                    self.report(
                        &mut sink,
                        None,
                        &[
                            Text("must match exactly one schema in oneOf, but matches schemas "),
                            Int(len_u64(f)),
                            Text(" and "),
                            Int(len_u64(i)),
                        ],
                    );
                    return false;
                }
                chosen = sub;
            } else {
                match ann.as_deref_mut() {
                    Some(a) => a.merge(sub),
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
            self.report(&mut sink, None, &[Text(message)]);
            return false;
        }
        if let Some(a) = ann {
            a.merge(chosen);
        }
        true
    }

    fn eval_not(&mut self, s: usize, inst: &Value, mut sink: Sink<'_>) -> bool {
        if self.eval(s, inst, None, None) {
            self.report(&mut sink, None, &[Text("must NOT be valid")]);
            false
        } else {
            true
        }
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
                a.merge(sub);
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
                        a.mark(false, i);
                    }
                    s
                }
                None => {
                    let Some(rest) = rest else {
                        break;
                    };
                    if i == prefix.len() {
                        if let Some(a) = ann.as_deref_mut() {
                            a.all_items = true;
                        }
                        if self.is_false(rest) {
                            self.report(
                                &mut sink,
                                None,
                                &[Text("must NOT have more than "), Count(len_u64(i), "item")],
                            );
                            return false;
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
                    a.mark(false, i);
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
        self.report(&mut sink, None, &[Text(word), Count(limit, "valid item")]);
        false
    }

    fn eval_properties(
        &mut self,
        obj: &Map,
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
            let mut matched = false;
            if let Some(&(_, s)) = properties.iter().find(|(name, _)| name == key) {
                matched = true;
                if !self.eval_at(i, Some(key), s, value, sink.as_deref_mut()) {
                    valid = false;
                    if sink.is_none() {
                        return false;
                    }
                }
            }
            for (pi, (pattern, s)) in patterns.iter().enumerate() {
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
            if matched {
                if let Some(a) = ann.as_deref_mut() {
                    a.mark(true, i);
                }
                continue;
            }
            let Some(s) = additional else {
                continue;
            };
            if let Some(a) = ann.as_deref_mut() {
                a.mark(true, i);
            }
            if additional_false {
                valid = false;
                if sink.is_none() {
                    return false;
                }
                self.report(
                    &mut sink,
                    Some(key),
                    &[Text("must NOT have additional properties")],
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

    fn report_bad_pattern(&self, sink: &mut Sink<'_>, pattern: &str, error: &str) {
        self.report(
            sink,
            None,
            &[
                Text("invalid pattern \""),
                Text(pattern),
                Text("\": "),
                Text(error),
            ],
        );
    }

    fn eval_property_names(&mut self, obj: &Map, schema: usize, mut sink: Sink<'_>) -> bool {
        let mut valid = true;
        for key in obj.keys() {
            let name = Value::String(key.clone());
            if sink.is_none() {
                if !self.eval(schema, &name, None, None) {
                    return false;
                }
                continue;
            }
            let mut inner = Vec::new();
            if !self.eval(schema, &name, Some(&mut inner), None) {
                valid = false;
                if inner.is_empty() {
                    inner.push(SchemaIssue {
                        path: String::new(),
                        message: "is invalid".to_string(),
                    });
                }
                for issue in inner {
                    self.report(
                        &mut sink,
                        Some(key),
                        &[
                            Text("property name '"),
                            Text(key),
                            Text("' "),
                            Text(&issue.message),
                        ],
                    );
                }
            }
        }
        valid
    }

    /// `unevaluatedItems` (`props` false) / `unevaluatedProperties` (`props`
    /// true) on an array / object `inst`.
    fn eval_unevaluated(
        &mut self,
        inst: &Value,
        schema: usize,
        props: bool,
        mut sink: Sink<'_>,
        ann: Option<&mut Annotations>,
    ) -> bool {
        let mut empty = Annotations::default();
        let ann = match ann {
            Some(a) => a,
            None => &mut empty,
        };
        let (all, bits) = ann.side(props);
        if *all {
            return true;
        }
        let schema_false = self.is_false(schema);
        let mut valid = true;
        let mut children = Children::of(inst);
        while let Some((i, key, value)) = children.as_mut().and_then(Children::next) {
            if bits.get(i).copied().unwrap_or(false) {
                continue;
            }
            let key = key.map(String::as_str);
            let ok = if schema_false {
                if sink.is_some() {
                    let len = self.enter(i, key);
                    let message = if props {
                        "must NOT have unevaluated properties"
                    } else {
                        "must NOT have unevaluated items"
                    };
                    self.report(&mut sink, None, &[Text(message)]);
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
        *all = true;
        valid
    }

    /// Reports at the current path; false.
    fn fail(&self, sink: &mut Sink<'_>, parts: &[Part<'_>]) -> bool {
        self.report(sink, None, parts);
        false
    }

    /// Check a keyword that does not apply subschemas.
    #[inline(never)]
    fn check_leaf(&self, kw: &Keyword, inst: &Value, sink: &mut Sink<'_>) -> bool {
        match (kw, inst) {
            (Keyword::Type { mask, names }, _) => {
                type_matches(*mask, inst) || self.fail(sink, &[Text("must be "), Text(names)])
            }
            (Keyword::Enum { values, constant }, _) => {
                let message = if *constant {
                    "must be equal to constant"
                } else {
                    "must be equal to one of the allowed values"
                };
                values.iter().any(|v| num::json_eq(inst, v)) || self.fail(sink, &[Text(message)])
            }
            (Keyword::Bound(kind, m), Value::Number(n)) => {
                // 0 maximum, 1 exclusiveMaximum, 2 minimum, 3 exclusiveMinimum,
                // 4 multipleOf.
                let failed = if *kind == 4 {
                    !num::is_multiple_of(n, m)
                } else {
                    let bad = if *kind < 2 {
                        Ordering::Greater
                    } else {
                        Ordering::Less
                    };
                    let exclusive = kind & 1 == 1;
                    match num::compare(n, m) {
                        Some(o) => o == bad || (exclusive && o == Ordering::Equal),
                        None => exclusive,
                    }
                };
                let text = BOUND_MESSAGES
                    .get(usize::from(*kind))
                    .copied()
                    .unwrap_or("");
                !failed || self.fail(sink, &[Text(text), Part::Number(m)])
            }
            (Keyword::Size(kind, limit), _) => {
                // Even kinds are maxima; kind / 2: 0 strings, 1 arrays, 2 objects.
                let len = match (kind / 2, inst) {
                    (0, Value::String(s)) => s.chars().count(),
                    (1, Value::Array(a)) => a.len(),
                    (2, Value::Object(o)) => o.len(),
                    _ => return true,
                };
                let len = len_u64(len);
                let max = kind & 1 == 0;
                let (failed, text) = if max {
                    (len > *limit, "must NOT have more than ")
                } else {
                    (len < *limit, "must NOT have fewer than ")
                };
                let word = SIZE_WORDS.get(usize::from(kind / 2)).copied().unwrap_or("");
                !failed || self.fail(sink, &[Text(text), Count(*limit, word)])
            }
            (Keyword::Pattern(pattern), Value::String(s)) => {
                match self.matcher.is_match(pattern, s) {
                    Ok(true) => true,
                    Ok(false) => self.fail(
                        sink,
                        &[Text("must match pattern \""), Text(pattern), Text("\"")],
                    ),
                    Err(e) => {
                        self.report_bad_pattern(sink, pattern, &e);
                        false
                    }
                }
            }
            (Keyword::UniqueItems, Value::Array(a)) => match num::find_duplicate(a) {
                Some((i, j)) => self.fail(
                    sink,
                    &[
                        Text("must NOT have duplicate items (items "),
                        Int(len_u64(i)),
                        Text(" and "),
                        Int(len_u64(j)),
                        Text(" are identical)"),
                    ],
                ),
                None => true,
            },
            (Keyword::Required(names), Value::Object(o)) => {
                let mut valid = true;
                for name in names {
                    if !o.contains_key(name) {
                        valid = false;
                        if sink.is_none() {
                            break;
                        }
                        self.report(
                            sink,
                            Some(name),
                            &[Text("must have required property '"), Text(name), Text("'")],
                        );
                    }
                }
                valid
            }
            (Keyword::DependentRequired(deps), Value::Object(o)) => {
                let mut valid = true;
                for (name, required) in deps {
                    if !o.contains_key(name) {
                        continue;
                    }
                    for r in required {
                        if !o.contains_key(r) {
                            valid = false;
                            if sink.is_none() {
                                return false;
                            }
                            self.report(
                                sink,
                                Some(r),
                                &[
                                    Text("must have property '"),
                                    Text(r),
                                    Text("' when property '"),
                                    Text(name),
                                    Text("' is present"),
                                ],
                            );
                        }
                    }
                }
                valid
            }
            _ => true,
        }
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
