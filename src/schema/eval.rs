//! Instance evaluation against a [`CompiledSchema`].
//!
//! Two modes share one code path: with an issue sink every failure is
//! reported (with a dotted instance path); without one, evaluation stops at
//! the first failure. Annotations for `unevaluatedItems` /
//! `unevaluatedProperties` are collected only below schemas that use them.

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
    fn mark_prop(&mut self, i: usize) {
        if !self.all_props {
            set_bit(&mut self.props, i);
        }
    }
    fn mark_item(&mut self, i: usize) {
        if !self.all_items {
            set_bit(&mut self.items, i);
        }
    }
    fn prop(&self, i: usize) -> bool {
        self.all_props || self.props.get(i).copied().unwrap_or(false)
    }
    fn item(&self, i: usize) -> bool {
        self.all_items || self.items.get(i).copied().unwrap_or(false)
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

fn plural(n: u64, word: &str) -> String {
    if n == 1 {
        format!("{n} {word}")
    } else {
        format!("{n} {word}s")
    }
}

fn len_u64(n: usize) -> u64 {
    u64::try_from(n).unwrap_or(u64::MAX)
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

    /// Report at the current path; the message is built only with a sink.
    fn report(&self, sink: &mut Sink<'_>, message: impl FnOnce() -> String) {
        if let Some(s) = sink {
            s.push(SchemaIssue {
                path: self.path.clone(),
                message: message(),
            });
        }
    }

    /// Report at the path of (possibly missing) property `key`.
    fn report_key(&self, sink: &mut Sink<'_>, key: &str, message: impl FnOnce() -> String) {
        if let Some(s) = sink {
            let path = if self.path.is_empty() {
                key.to_string()
            } else {
                format!("{}.{key}", self.path)
            };
            s.push(SchemaIssue {
                path,
                message: message(),
            });
        }
    }

    fn set_abort(&mut self, message: String) {
        if self.abort.is_none() {
            self.abort = Some(SchemaIssue {
                path: self.path.clone(),
                message,
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
            self.set_abort(format!("schema evaluation exceeded {MAX_EVAL_STEPS} steps"));
            return false;
        }
        let schema = self.schema;
        let node = match schema.nodes.get(idx) {
            Some(Node::Obj(o)) => o,
            Some(Node::Bool(true)) => return true,
            Some(Node::Bool(false)) => {
                self.report(&mut sink, || "is not allowed".to_string());
                return false;
            }
            None => {
                self.set_abort("internal error: unknown schema node".to_string());
                return false;
            }
        };
        if self.depth >= MAX_EVAL_DEPTH {
            self.set_abort(format!(
                "schema evaluation exceeded the maximum depth of {MAX_EVAL_DEPTH} (cyclic $ref?)"
            ));
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

    /// Evaluate `idx` against a child location (`key` of an object).
    fn eval_at_key(&mut self, key: &str, idx: usize, inst: &Value, sink: Sink<'_>) -> bool {
        if sink.is_none() {
            return self.eval(idx, inst, None, None);
        }
        let len = self.path.len();
        if len > 0 {
            self.path.push('.');
        }
        self.path.push_str(key);
        let valid = self.eval(idx, inst, sink, None);
        self.path.truncate(len);
        valid
    }

    /// Evaluate `idx` against a child location (index `i` of an array).
    fn eval_at_index(&mut self, i: usize, idx: usize, inst: &Value, sink: Sink<'_>) -> bool {
        if sink.is_none() {
            return self.eval(idx, inst, None, None);
        }
        let len = self.path.len();
        if len > 0 {
            self.path.push('.');
        }
        let _ = write!(self.path, "{i}");
        let valid = self.eval(idx, inst, sink, None);
        self.path.truncate(len);
        valid
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
        sink: Sink<'_>,
        ann: Option<&mut Annotations>,
    ) -> bool {
        match (kw, inst) {
            (Keyword::Ref(target), _) => self.eval(*target, inst, sink, ann),
            (Keyword::DynamicRef { target, anchor }, _) => {
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
            (Keyword::AnyOf(subs), _) => self.eval_any_of(subs, inst, sink, ann),
            (Keyword::OneOf(subs), _) => self.eval_one_of(subs, inst, sink, ann),
            (Keyword::Not(s), _) => self.eval_not(*s, inst, sink),
            (
                Keyword::If {
                    condition,
                    then,
                    otherwise,
                },
                _,
            ) => self.eval_if(*condition, *then, *otherwise, inst, sink, ann),
            (Keyword::UnevaluatedItems(s), Value::Array(a)) => {
                self.eval_unevaluated_items(a, *s, sink, ann)
            }
            (Keyword::UnevaluatedProperties(s), Value::Object(o)) => {
                self.eval_unevaluated_properties(o, *s, sink, ann)
            }
            (
                Keyword::Items { .. }
                | Keyword::Contains { .. }
                | Keyword::Properties { .. }
                | Keyword::PropertyNames(_)
                | Keyword::DependentSchemas(_)
                | Keyword::UnevaluatedItems(_)
                | Keyword::UnevaluatedProperties(_),
                _,
            ) => true,
            _ => match check_leaf(kw, inst, self.matcher, sink.is_some()) {
                Leaf::Valid => true,
                Leaf::Invalid(message) => {
                    let mut sink = sink;
                    self.report(&mut sink, || message);
                    false
                }
                Leaf::Missing(messages) => {
                    let mut sink = sink;
                    for (key, message) in messages {
                        self.report_key(&mut sink, &key, || message);
                    }
                    false
                }
            },
        }
    }

    fn dynamic_target(&self, target: usize, anchor: Option<&str>) -> usize {
        let Some(name) = anchor else {
            return target;
        };
        let schema = self.schema;
        self.scope
            .iter()
            .find_map(|r| {
                schema
                    .dynamic_anchors
                    .get(*r)
                    .and_then(|m| m.get(name))
                    .copied()
            })
            .unwrap_or(target)
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

    fn eval_any_of(
        &mut self,
        subs: &[usize],
        inst: &Value,
        mut sink: Sink<'_>,
        mut ann: Option<&mut Annotations>,
    ) -> bool {
        let mut any = false;
        for s in subs {
            let mut sub = Annotations::default();
            let want = ann.is_some();
            if self.eval(*s, inst, None, want.then_some(&mut sub)) {
                any = true;
                match ann.as_deref_mut() {
                    Some(a) => a.merge(sub),
                    None => break,
                }
            }
        }
        if !any {
            self.report(&mut sink, || "must match a schema in anyOf".to_string());
        }
        any
    }

    fn eval_one_of(
        &mut self,
        subs: &[usize],
        inst: &Value,
        mut sink: Sink<'_>,
        ann: Option<&mut Annotations>,
    ) -> bool {
        let mut first: Option<usize> = None;
        let mut second: Option<usize> = None;
        let mut chosen = Annotations::default();
        let want = ann.is_some();
        for (i, s) in subs.iter().enumerate() {
            let mut sub = Annotations::default();
            if self.eval(*s, inst, None, want.then_some(&mut sub)) {
                if first.is_none() {
                    first = Some(i);
                    chosen = sub;
                } else {
                    second = Some(i);
                    break;
                }
            }
        }
        match (first, second) {
            (Some(_), None) => {
                if let Some(a) = ann {
                    a.merge(chosen);
                }
                true
            }
            (None, _) => {
                self.report(&mut sink, || {
                    "must match exactly one schema in oneOf".to_string()
                });
                false
            }
            (Some(i), Some(j)) => {
                self.report(&mut sink, || {
                    format!(
                        "must match exactly one schema in oneOf, but matches schemas {i} and {j}"
                    )
                });
                false
            }
        }
    }

    fn eval_not(&mut self, s: usize, inst: &Value, mut sink: Sink<'_>) -> bool {
        if self.eval(s, inst, None, None) {
            self.report(&mut sink, || "must NOT be valid".to_string());
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
        for (i, (item, s)) in items.iter().zip(prefix).enumerate() {
            if let Some(a) = ann.as_deref_mut() {
                a.mark_item(i);
            }
            if !self.eval_at_index(i, *s, item, sink.as_deref_mut()) {
                valid = false;
                if sink.is_none() {
                    return false;
                }
            }
        }
        let Some(rest) = rest else {
            return valid;
        };
        if items.len() <= prefix.len() {
            return valid;
        }
        if let Some(a) = ann {
            a.all_items = true;
        }
        if self.is_false(rest) {
            self.report(&mut sink, || {
                format!(
                    "must NOT have more than {}",
                    plural(len_u64(prefix.len()), "item")
                )
            });
            return false;
        }
        for (i, item) in items.iter().enumerate().skip(prefix.len()) {
            if !self.eval_at_index(i, rest, item, sink.as_deref_mut()) {
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
                    a.mark_item(i);
                }
                if !exhaustive && found >= min {
                    return true;
                }
            }
            if self.abort.is_some() {
                return false;
            }
        }
        if found < min {
            self.report(&mut sink, || {
                format!("must contain at least {}", plural(min, "valid item"))
            });
            return false;
        }
        if let Some(max) = max {
            if found > max {
                self.report(&mut sink, || {
                    format!("must contain at most {}", plural(max, "valid item"))
                });
                return false;
            }
        }
        true
    }

    fn eval_properties(
        &mut self,
        obj: &Map,
        properties: &crate::vecmap::VecMap<String, usize>,
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
            if let Some(&s) = properties.get(key) {
                matched = true;
                if !self.eval_at_key(key, s, value, sink.as_deref_mut()) {
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
                        if !self.eval_at_key(key, *s, value, sink.as_deref_mut()) {
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
                            self.report(&mut sink, || {
                                format!("invalid pattern \"{pattern}\": {e}")
                            });
                        }
                    }
                }
            }
            if matched {
                if let Some(a) = ann.as_deref_mut() {
                    a.mark_prop(i);
                }
                continue;
            }
            let Some(s) = additional else {
                continue;
            };
            if let Some(a) = ann.as_deref_mut() {
                a.mark_prop(i);
            }
            if additional_false {
                valid = false;
                if sink.is_none() {
                    return false;
                }
                self.report_key(&mut sink, key, || {
                    "must NOT have additional properties".to_string()
                });
            } else if !self.eval_at_key(key, s, value, sink.as_deref_mut()) {
                valid = false;
                if sink.is_none() {
                    return false;
                }
            }
        }
        valid
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
                    self.report_key(&mut sink, key, || {
                        format!("property name '{key}' {}", issue.message)
                    });
                }
            }
        }
        valid
    }

    fn eval_unevaluated_items(
        &mut self,
        items: &[Value],
        schema: usize,
        mut sink: Sink<'_>,
        ann: Option<&mut Annotations>,
    ) -> bool {
        let mut empty = Annotations::default();
        let ann = match ann {
            Some(a) => a,
            None => &mut empty,
        };
        if ann.all_items {
            return true;
        }
        let schema_false = self.is_false(schema);
        let mut valid = true;
        for (i, item) in items.iter().enumerate() {
            if ann.item(i) {
                continue;
            }
            let ok = if schema_false {
                if sink.is_some() {
                    let len = self.path.len();
                    if len > 0 {
                        self.path.push('.');
                    }
                    let _ = write!(self.path, "{i}");
                    self.report(&mut sink, || "must NOT have unevaluated items".to_string());
                    self.path.truncate(len);
                }
                false
            } else {
                self.eval_at_index(i, schema, item, sink.as_deref_mut())
            };
            if !ok {
                valid = false;
                if sink.is_none() {
                    return false;
                }
            }
        }
        ann.all_items = true;
        valid
    }

    fn eval_unevaluated_properties(
        &mut self,
        obj: &Map,
        schema: usize,
        mut sink: Sink<'_>,
        ann: Option<&mut Annotations>,
    ) -> bool {
        let mut empty = Annotations::default();
        let ann = match ann {
            Some(a) => a,
            None => &mut empty,
        };
        if ann.all_props {
            return true;
        }
        let schema_false = self.is_false(schema);
        let mut valid = true;
        for (i, (key, value)) in obj.iter().enumerate() {
            if ann.prop(i) {
                continue;
            }
            let ok = if schema_false {
                self.report_key(&mut sink, key, || {
                    "must NOT have unevaluated properties".to_string()
                });
                false
            } else {
                self.eval_at_key(key, schema, value, sink.as_deref_mut())
            };
            if !ok {
                valid = false;
                if sink.is_none() {
                    return false;
                }
            }
        }
        ann.all_props = true;
        valid
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

/// Outcome of a keyword that does not apply subschemas.
enum Leaf {
    Valid,
    /// Failure reported at the current path.
    Invalid(String),
    /// Failures reported at the paths of (missing) properties.
    Missing(Vec<(String, String)>),
}

/// Check a keyword that does not apply subschemas. Messages are built only
/// when `messages` is set (otherwise `Invalid` carries an empty string).
#[inline(never)]
fn check_leaf(kw: &Keyword, inst: &Value, matcher: &dyn PatternMatcher, messages: bool) -> Leaf {
    let fail = |make: &dyn Fn() -> String| {
        if messages {
            Leaf::Invalid(make())
        } else {
            Leaf::Invalid(String::new())
        }
    };
    let cmp = |n: &Number, m: &Number| num::compare(n, m);
    match (kw, inst) {
        (Keyword::Type { mask, names }, _) => {
            if type_matches(*mask, inst) {
                Leaf::Valid
            } else {
                fail(&|| format!("must be {names}"))
            }
        }
        (Keyword::Const(c), _) => {
            if num::json_eq(inst, c) {
                Leaf::Valid
            } else {
                fail(&|| "must be equal to constant".to_string())
            }
        }
        (Keyword::Enum(values), _) => {
            if values.iter().any(|v| num::json_eq(inst, v)) {
                Leaf::Valid
            } else {
                fail(&|| "must be equal to one of the allowed values".to_string())
            }
        }
        (Keyword::MultipleOf(m), Value::Number(n)) if !num::is_multiple_of(n, m) => {
            fail(&|| format!("must be multiple of {m}"))
        }
        (Keyword::Maximum(m), Value::Number(n)) if cmp(n, m) == Some(Ordering::Greater) => {
            fail(&|| format!("must be <= {m}"))
        }
        (Keyword::ExclusiveMaximum(m), Value::Number(n)) if cmp(n, m) != Some(Ordering::Less) => {
            fail(&|| format!("must be < {m}"))
        }
        (Keyword::Minimum(m), Value::Number(n)) if cmp(n, m) == Some(Ordering::Less) => {
            fail(&|| format!("must be >= {m}"))
        }
        (Keyword::ExclusiveMinimum(m), Value::Number(n))
            if cmp(n, m) != Some(Ordering::Greater) =>
        {
            fail(&|| format!("must be > {m}"))
        }
        (Keyword::MaxLength(max), Value::String(s)) if len_u64(s.chars().count()) > *max => {
            fail(&|| format!("must NOT have more than {}", plural(*max, "character")))
        }
        (Keyword::MinLength(min), Value::String(s)) if len_u64(s.chars().count()) < *min => {
            fail(&|| format!("must NOT have fewer than {}", plural(*min, "character")))
        }
        (Keyword::Pattern(pattern), Value::String(s)) => match matcher.is_match(pattern, s) {
            Ok(true) => Leaf::Valid,
            Ok(false) => fail(&|| format!("must match pattern \"{pattern}\"")),
            Err(e) => fail(&|| format!("invalid pattern \"{pattern}\": {e}")),
        },
        (Keyword::MaxItems(max), Value::Array(a)) if len_u64(a.len()) > *max => {
            fail(&|| format!("must NOT have more than {}", plural(*max, "item")))
        }
        (Keyword::MinItems(min), Value::Array(a)) if len_u64(a.len()) < *min => {
            fail(&|| format!("must NOT have fewer than {}", plural(*min, "item")))
        }
        (Keyword::UniqueItems, Value::Array(a)) => match num::find_duplicate(a) {
            Some((i, j)) => {
                fail(&|| format!("must NOT have duplicate items (items {i} and {j} are identical)"))
            }
            None => Leaf::Valid,
        },
        (Keyword::MaxProperties(max), Value::Object(o)) if len_u64(o.len()) > *max => {
            fail(&|| format!("must NOT have more than {}", plural(*max, "property")))
        }
        (Keyword::MinProperties(min), Value::Object(o)) if len_u64(o.len()) < *min => {
            fail(&|| format!("must NOT have fewer than {}", plural(*min, "property")))
        }
        (Keyword::Required(names), Value::Object(o)) => {
            let mut missing = Vec::new();
            for name in names.iter().filter(|n| !o.contains_key(n.as_str())) {
                if !messages {
                    return Leaf::Invalid(String::new());
                }
                missing.push((
                    name.clone(),
                    format!("must have required property '{name}'"),
                ));
            }
            if missing.is_empty() {
                Leaf::Valid
            } else {
                Leaf::Missing(missing)
            }
        }
        (Keyword::DependentRequired(deps), Value::Object(o)) => {
            let mut missing = Vec::new();
            for (name, required) in deps.iter().filter(|(n, _)| o.contains_key(n.as_str())) {
                for r in required.iter().filter(|r| !o.contains_key(r.as_str())) {
                    if !messages {
                        return Leaf::Invalid(String::new());
                    }
                    missing.push((
                        r.clone(),
                        format!("must have property '{r}' when property '{name}' is present"),
                    ));
                }
            }
            if missing.is_empty() {
                Leaf::Valid
            } else {
                Leaf::Missing(missing)
            }
        }
        _ => Leaf::Valid,
    }
}
