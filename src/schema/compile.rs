//! Schema compilation: resource / anchor discovery, reference resolution and
//! keyword parsing into [`Node`]s.
//!
//! Nothing here recurses on the schema's shape: the scan for `$id` /
//! `$anchor` / `$dynamicAnchor` uses an explicit stack and subschemas are
//! compiled from a work list, so arbitrarily deep or cyclic schemas cannot
//! overflow the stack.

use super::equal;
use super::meta;
use super::uri::{self, DEFAULT_BASE};
use super::{
    count_message, len_u64, CompiledSchema, Keyword, Node, ObjNode, SchemaError, MAX_SCHEMA_DEPTH,
};
use crate::prelude::*;
use crate::vecmap::{heap_sort, VecMap};
use serde_json::{Map, Number, Value};

/// A schema resource: a document root or a subschema with `$id`; or an
/// anchor, named by its resource's URI, `#` and its name (no `$id` has a
/// `#`, so the two never collide in `Compiler::by_uri`).
struct Resource {
    /// Absolute URI without fragment (an anchor: with its name).
    uri: String,
    /// JSON pointer of the resource's root (the anchor's schema) in the
    /// document.
    pointer: String,
}

struct Compiler<'a> {
    root: &'a Value,
    /// The bundled meta-schemas parsed so far (see [`meta`]).
    bundled: &'a meta::Loaded,
    resources: Vec<Resource>,
    /// Per resource: `$dynamicAnchor` name → node index (an anchor there
    /// is dynamic).
    dynamic: Vec<VecMap<String, usize>>,
    by_uri: VecMap<String, usize>,
    /// Scanned schema location (pointer) → resource index.
    resource_at: VecMap<String, usize>,
    nodes: Vec<Node>,
    node_at: VecMap<String, usize>,
    /// Pointers of reserved nodes still to compile (their index in `node_at`).
    work: Vec<String>,
}

/// Errors are boxed inside: results stay small to move around.
type Error = Box<SchemaError>;

/// A pointer as a URI fragment (prefixed with the document's URI in a
/// bundled meta-schema), for error messages.
fn loc(pointer: &str) -> String {
    meta::location(pointer)
}

fn child_pointer(parent: &str, token: &str) -> String {
    let mut s = format!("{parent}/");
    uri::escape_token(&mut s, token);
    s
}

fn index_pointer(parent: &str, i: usize) -> String {
    let mut s = format!("{parent}/");
    s.push_str(&len_u64(i).to_string());
    s
}

/// Which [`SchemaError`] [`error`] builds.
#[derive(Clone, Copy)]
enum Why {
    NotASchema,
    TooDeep,
    /// `a` the keyword, `b` the reason.
    InvalidKeyword,
    /// `a` the reference, `b` the URI.
    RemoteRef,
    /// `a` the reference, `b` the reason.
    UnresolvedRef,
    /// `a` the URI.
    DuplicateId,
    /// `a` the anchor.
    DuplicateAnchor,
}

/// The error `why` at the schema at `pointer`, with its texts `a` and `b`
/// (unused ones empty): one constructor for every error site.
#[inline(never)]
fn error(why: Why, pointer: &str, a: &str, b: &str) -> Error {
    let location = loc(pointer);
    let (a, b) = (a.to_owned(), b.to_owned());
    Box::new(match why {
        Why::NotASchema => SchemaError::NotASchema { location },
        Why::TooDeep => SchemaError::TooDeep { location },
        Why::InvalidKeyword => SchemaError::InvalidKeyword {
            location,
            keyword: a,
            reason: b,
        },
        Why::RemoteRef => SchemaError::RemoteRef {
            location,
            reference: a,
            uri: b,
        },
        Why::UnresolvedRef => SchemaError::UnresolvedRef {
            location,
            reference: a,
            reason: b,
        },
        Why::DuplicateId => SchemaError::DuplicateId { location, uri: a },
        Why::DuplicateAnchor => SchemaError::DuplicateAnchor {
            location,
            anchor: a,
        },
    })
}

fn invalid(pointer: &str, keyword: &str, reason: &str) -> Error {
    error(Why::InvalidKeyword, pointer, keyword, reason)
}

/// Words and comparison signs of [`Keyword::Bound`] / [`Keyword::Size`] by
/// their index (see [`KEYWORDS`]).
const BOUND_MESSAGES: [&str; 5] = [
    "must be <= ",
    "must be < ",
    "must be >= ",
    "must be > ",
    "must be multiple of ",
];
const SIZE_WORDS: [(&str, &str); 3] = [
    ("character", "characters"),
    ("item", "items"),
    ("property", "properties"),
];

/// Keywords with subschemas, as the scan visits them: a single subschema
/// (0), an array (1) or an object (2) of subschemas.
const SUBSCHEMAS: [(&str, u8); 19] = [
    ("additionalProperties", 0),
    ("propertyNames", 0),
    ("items", 0),
    ("contains", 0),
    ("not", 0),
    ("if", 0),
    ("then", 0),
    ("else", 0),
    ("unevaluatedItems", 0),
    ("unevaluatedProperties", 0),
    ("allOf", 1),
    ("anyOf", 1),
    ("oneOf", 1),
    ("prefixItems", 1),
    ("$defs", 2),
    ("definitions", 2),
    ("properties", 2),
    ("patternProperties", 2),
    ("dependentSchemas", 2),
];

/// How a keyword compiles (see [`KEYWORDS`]).
#[derive(Clone, Copy)]
enum Kind {
    Ref,
    DynamicRef,
    Type,
    Const,
    Enum,
    /// [`Keyword::Bound`] of that kind.
    Bound(u8),
    /// [`Keyword::Size`] of that kind.
    Size(u8),
    Pattern,
    UniqueItems,
    /// `prefixItems` with `items` (compiled whether or not `prefixItems` is there).
    Items,
    /// With `minContains` / `maxContains`.
    Contains,
    Required,
    DependentRequired,
    /// `properties` with `patternProperties` and `additionalProperties`
    /// (compiled whether or not `properties` is there).
    Properties,
    DependentSchemas,
    /// `allOf` (0), `anyOf` (1), `oneOf` (2).
    Of(u8),
    /// With `then` / `else`.
    If,
    /// `propertyNames` (0), `not` (1), `unevaluatedItems` (2),
    /// `unevaluatedProperties` (3).
    Single(u8),
}

/// The keywords compiled, in evaluation order (`unevaluated*` last).
const KEYWORDS: [(&str, Kind); 32] = [
    ("$ref", Kind::Ref),
    ("$dynamicRef", Kind::DynamicRef),
    ("type", Kind::Type),
    ("const", Kind::Const),
    ("enum", Kind::Enum),
    ("multipleOf", Kind::Bound(4)),
    ("maximum", Kind::Bound(0)),
    ("exclusiveMaximum", Kind::Bound(1)),
    ("minimum", Kind::Bound(2)),
    ("exclusiveMinimum", Kind::Bound(3)),
    ("maxLength", Kind::Size(0)),
    ("minLength", Kind::Size(1)),
    ("pattern", Kind::Pattern),
    ("maxItems", Kind::Size(2)),
    ("minItems", Kind::Size(3)),
    ("uniqueItems", Kind::UniqueItems),
    ("prefixItems", Kind::Items),
    ("contains", Kind::Contains),
    ("maxProperties", Kind::Size(4)),
    ("minProperties", Kind::Size(5)),
    ("required", Kind::Required),
    ("dependentRequired", Kind::DependentRequired),
    ("properties", Kind::Properties),
    ("propertyNames", Kind::Single(0)),
    ("dependentSchemas", Kind::DependentSchemas),
    ("allOf", Kind::Of(0)),
    ("anyOf", Kind::Of(1)),
    ("oneOf", Kind::Of(2)),
    ("not", Kind::Single(1)),
    ("if", Kind::If),
    ("unevaluatedItems", Kind::Single(2)),
    ("unevaluatedProperties", Kind::Single(3)),
];

pub(super) fn compile(schema: &Value) -> Result<CompiledSchema, SchemaError> {
    compile_boxed(schema).map_err(|e| *e)
}

fn compile_boxed(schema: &Value) -> Result<CompiledSchema, Error> {
    let bundled = meta::Loaded::default();
    let mut c = Compiler {
        root: schema,
        bundled: &bundled,
        resources: Vec::new(),
        dynamic: Vec::new(),
        by_uri: VecMap::new(),
        resource_at: VecMap::new(),
        nodes: Vec::new(),
        node_at: VecMap::new(),
        work: Vec::new(),
    };
    c.add_resource(DEFAULT_BASE, String::new());
    c.scan(schema, String::new(), 0)?;
    let root = c.reserve("")?;
    while let Some(pointer) = c.work.pop() {
        c.compile_node(&pointer)?;
    }
    Ok(CompiledSchema {
        nodes: c.nodes,
        dynamic_anchors: c.dynamic,
        root,
    })
}

impl<'a> Compiler<'a> {
    fn lookup(&self, pointer: &str) -> Option<&'a Value> {
        let (doc, pointer) = meta::split_pointer(pointer);
        let bundled: &'a meta::Loaded = self.bundled;
        let mut v = match doc {
            Some(k) => bundled.get(k)?.get()?,
            None => self.root,
        };
        let mut rest = pointer.strip_prefix('/');
        if rest.is_none() && !pointer.is_empty() {
            return None;
        }
        while let Some(r) = rest {
            let (token, after) = uri::next_token(r);
            v = match v {
                Value::Object(m) => m.get(token.as_str())?,
                Value::Array(a) => a.get(uri::array_index(&token)?)?,
                _ => return None,
            };
            rest = after;
        }
        Some(v)
    }

    /// Node index for the schema at `pointer`, compiled later from the work list.
    fn reserve(&mut self, pointer: &str) -> Result<usize, Error> {
        if let Some(&idx) = self.node_at.get(pointer) {
            return Ok(idx);
        }
        // A subschema the scan did not visit (reached through a JSON pointer
        // into an unknown keyword): register its identifiers now.
        // (`get`, not `contains_key`: one lookup function per map type.)
        if self.resource_at.get(pointer).is_none() {
            let parent = self.nearest_scanned_resource(pointer);
            if let Some(v) = self.lookup(pointer) {
                self.scan(v, pointer.to_string(), parent)?;
            }
        }
        let idx = self.nodes.len();
        self.nodes.push(Node::Bool(false));
        self.node_at.insert(pointer.to_string(), idx);
        self.work.push(pointer.to_string());
        Ok(idx)
    }

    /// A new resource with absolute URI `uri` rooted at `pointer`: its index.
    fn add_resource(&mut self, uri: &str, pointer: String) -> usize {
        let res = self.resources.len();
        self.resources.push(Resource {
            uri: uri.to_string(),
            pointer,
        });
        self.dynamic.push(VecMap::new());
        self.by_uri.insert(uri.to_string(), res);
        res
    }

    fn nearest_scanned_resource(&self, pointer: &str) -> usize {
        let mut p = pointer;
        loop {
            if let Some(&r) = self.resource_at.get(p) {
                return r;
            }
            match uri::last_slash(p) {
                Some(i) => p = p.get(..i).unwrap_or(""),
                None => return 0,
            }
        }
    }

    fn resource_uri(&self, res: usize) -> &str {
        self.resources
            .get(res)
            .map_or(DEFAULT_BASE, |r| r.uri.as_str())
    }

    /// Register `$id`s and anchors of the schema at `start` and all its
    /// subschemas (known applicator keywords only).
    fn scan(&mut self, start: &'a Value, pointer: String, parent: usize) -> Result<(), Error> {
        let mut stack: Vec<(&'a Value, String, usize)> = vec![(start, pointer, parent)];
        while let Some((value, pointer, parent)) = stack.pop() {
            if self.resource_at.get(pointer.as_str()).is_some() {
                continue;
            }
            if pointer.bytes().filter(|&b| b == b'/').count() > MAX_SCHEMA_DEPTH {
                return Err(error(Why::TooDeep, &pointer, "", ""));
            }
            let Value::Object(map) = value else {
                self.resource_at.insert(pointer, parent);
                continue;
            };
            let mut res = parent;
            if let Some(id) = map.get("$id") {
                let Value::String(id) = id else {
                    return Err(invalid(&pointer, "$id", "must be a string"));
                };
                let resolved = uri::resolve(self.resource_uri(parent), id);
                let (doc, fragment) = uri::split_fragment(&resolved);
                if fragment.is_some_and(|f| !f.is_empty()) {
                    return Err(invalid(
                        &pointer,
                        "$id",
                        "must not contain a non-empty fragment",
                    ));
                }
                if let Some(&existing) = self.by_uri.get(doc) {
                    let same = self
                        .resources
                        .get(existing)
                        .is_some_and(|r| r.pointer == pointer);
                    if !same {
                        return Err(error(Why::DuplicateId, &pointer, doc, ""));
                    }
                    res = existing;
                } else {
                    res = self.add_resource(doc, pointer.clone());
                }
            }
            self.resource_at.insert(pointer.clone(), res);
            for (keyword, dynamic) in [("$anchor", false), ("$dynamicAnchor", true)] {
                let Some(anchor) = map.get(keyword) else {
                    continue;
                };
                let Value::String(name) = anchor else {
                    return Err(invalid(&pointer, keyword, "must be a string"));
                };
                self.add_anchor(res, name, &pointer, dynamic)?;
            }
            for (keyword, shape) in SUBSCHEMAS {
                let Some(sub) = map.get(keyword) else {
                    continue;
                };
                let base = child_pointer(&pointer, keyword);
                match (shape, sub) {
                    (0, _) => stack.push((sub, base, res)),
                    (1, Value::Array(subs)) => {
                        for (i, sub) in subs.iter().enumerate() {
                            stack.push((sub, index_pointer(&base, i), res));
                        }
                    }
                    (2, Value::Object(subs)) => {
                        for (name, sub) in subs {
                            stack.push((sub, child_pointer(&base, name), res));
                        }
                    }
                    _ => {}
                }
            }
        }
        Ok(())
    }

    fn add_anchor(
        &mut self,
        res: usize,
        name: &str,
        pointer: &str,
        dynamic: bool,
    ) -> Result<(), Error> {
        let key = format!("{}#{}", self.resource_uri(res), name);
        let was_dynamic = self.dynamic.get(res).is_some_and(|d| d.get(name).is_some());
        match self
            .by_uri
            .get(key.as_str())
            .and_then(|&a| self.resources.get(a))
        {
            Some(a) if a.pointer != pointer => {
                return Err(error(Why::DuplicateAnchor, pointer, name, ""));
            }
            Some(_) if was_dynamic || !dynamic => return Ok(()),
            // Known, now dynamic too.
            Some(_) => {}
            None => {
                self.add_resource(&key, pointer.to_owned());
            }
        }
        if dynamic {
            let node = self.reserve(pointer)?;
            if let Some(d) = self.dynamic.get_mut(res) {
                d.insert(name.to_owned(), node);
            }
        }
        Ok(())
    }

    /// Resolve a reference made from resource `res`. Returns the target's
    /// pointer and, for plain-name fragments, whether that anchor is a
    /// `$dynamicAnchor` (with its name).
    #[inline(never)]
    fn resolve_ref(
        &mut self,
        reference: &str,
        res: usize,
        pointer: &str,
    ) -> Result<(String, Option<String>), Error> {
        let resolved = uri::resolve(self.resource_uri(res), reference);
        let (doc, fragment) = uri::split_fragment(&resolved);
        // A bundled meta-schema the schema does not define itself: parse and
        // scan it now (its resources and anchors join the others).
        if self.by_uri.get(doc).is_none() {
            if let Some(k) = meta::index(doc) {
                let bundled: &'a meta::Loaded = self.bundled;
                if let Some(value) = meta::load(bundled, k) {
                    self.scan(value, meta::prefix(k), 0)?;
                }
            }
        }
        let Some((r, target)) = self
            .by_uri
            .get(doc)
            .and_then(|&r| Some((r, self.resources.get(r)?)))
        else {
            return Err(error(Why::RemoteRef, pointer, reference, &resolved));
        };
        let fragment = uri::percent_decode(fragment.unwrap_or(""));
        if fragment.is_empty() {
            return Ok((target.pointer.clone(), None));
        }
        let reason = if let Some(rest) = fragment.strip_prefix('/') {
            let mut p = target.pointer.clone();
            let mut rest = Some(rest);
            while let Some(r) = rest {
                let (token, after) = uri::next_token(r);
                p = child_pointer(&p, &token);
                rest = after;
            }
            if self.lookup(&p).is_some() {
                return Ok((p, None));
            }
            format!("no value at #{fragment}")
        } else {
            let key = format!("{doc}#{fragment}");
            match self
                .by_uri
                .get(key.as_str())
                .and_then(|&a| self.resources.get(a))
            {
                Some(anchor) => {
                    let dynamic = self
                        .dynamic
                        .get(r)
                        .is_some_and(|d| d.get(fragment.as_str()).is_some());
                    return Ok((anchor.pointer.clone(), dynamic.then_some(fragment)));
                }
                None => format!("no anchor named \"{fragment}\""),
            }
        };
        Err(error(Why::UnresolvedRef, pointer, reference, &reason))
    }

    /// Compile the schema at `pointer` into its reserved node.
    fn compile_node(&mut self, pointer: &str) -> Result<(), Error> {
        let node = match self.lookup(pointer) {
            Some(Value::Bool(b)) => Node::Bool(*b),
            Some(Value::Object(map)) => self.compile_object(map, pointer)?,
            _ => return Err(error(Why::NotASchema, pointer, "", "")),
        };
        if let Some(slot) = self
            .node_at
            .get(pointer)
            .and_then(|&idx| self.nodes.get_mut(idx))
        {
            *slot = node;
        }
        Ok(())
    }

    fn compile_object(
        &mut self,
        map: &'a Map<String, Value>,
        pointer: &str,
    ) -> Result<Node, Error> {
        let res = self.nearest_scanned_resource(pointer);
        let mut kws: Vec<Keyword> = Vec::new();
        for (name, kind) in KEYWORDS {
            self.compile_keyword(map, pointer, res, name, kind, &mut kws)?;
        }
        // `unevaluated*` compile last (see `KEYWORDS`).
        let has_unevaluated = matches!(kws.last(), Some(Keyword::Unevaluated { .. }));
        Ok(Node::Obj(ObjNode {
            resource: res,
            has_unevaluated,
            keywords: kws,
        }))
    }

    /// Compile keyword `name` of the schema `map` at `p` (`None`: absent or
    /// without effect).
    #[inline(never)]
    fn compile_keyword(
        &mut self,
        map: &'a Map<String, Value>,
        p: &str,
        res: usize,
        name: &str,
        kind: Kind,
        kws: &mut Vec<Keyword>,
    ) -> Result<(), Error> {
        let value = map.get(name);
        let kw = match (kind, value) {
            (Kind::Items, _) => {
                let prefix = match value {
                    Some(v) => self.schema_array(v, p, name)?,
                    None => Vec::new(),
                };
                if let Some(Value::Array(_)) = map.get("items") {
                    return Err(invalid(
                        p,
                        "items",
                        "must be a schema (the array form is draft-07; use \"prefixItems\")",
                    ));
                }
                let rest = self.single(map, p, "items")?;
                if prefix.is_empty() && rest.is_none() {
                    return Ok(());
                }
                Keyword::Items { prefix, rest }
            }
            (Kind::Properties, _) => {
                let mut properties = self.schema_map(value, p, name)?;
                // Looked up by binary search (`eval_properties`).
                heap_sort(&mut properties);
                let patterns =
                    self.schema_map(map.get("patternProperties"), p, "patternProperties")?;
                let additional = self.single(map, p, "additionalProperties")?;
                if properties.is_empty() && patterns.is_empty() && additional.is_none() {
                    return Ok(());
                }
                Keyword::Properties {
                    properties,
                    patterns,
                    additional,
                }
            }
            (_, None) => return Ok(()),
            (Kind::Ref | Kind::DynamicRef, Some(v)) => {
                let Value::String(r) = v else {
                    return Err(invalid(p, name, "must be a string"));
                };
                let (target, anchor) = self.resolve_ref(r, res, p)?;
                Keyword::Ref {
                    target: self.reserve(&target)?,
                    // A `$ref` always goes to its static target.
                    anchor: anchor.filter(|_| matches!(kind, Kind::DynamicRef)),
                }
            }
            (Kind::Type, Some(v)) => return compile_type(v, p, kws),
            (Kind::Const | Kind::Enum, Some(v)) => {
                let constant = matches!(kind, Kind::Const);
                let values = match v {
                    _ if constant => core::slice::from_ref(v),
                    Value::Array(values) => values.as_slice(),
                    _ => return Err(invalid(p, name, "must be an array")),
                };
                check_value_depth(v, p, name)?;
                Keyword::Enum {
                    values: values.to_vec(),
                    table: (values.len() > equal::LINEAR_ENUM).then(|| equal::hash_table(values)),
                    message: if constant {
                        "must be equal to constant"
                    } else {
                        "must be equal to one of the allowed values"
                    },
                }
            }
            (Kind::Bound(k), Some(v)) => {
                let n = number(v, p, name)?;
                // `multipleOf`
                if k == 4 && n.as_f64().is_none_or(|f| f <= 0.0) {
                    return Err(invalid(p, name, "must be a number greater than 0"));
                }
                let prefix = BOUND_MESSAGES.get(usize::from(k)).copied().unwrap_or("");
                let message = format!("{prefix}{n}");
                Keyword::Bound(k, n, message)
            }
            (Kind::Size(k), Some(v)) => {
                let limit = count(v, p, name)?;
                let text = if k & 1 == 0 {
                    "must NOT have more than "
                } else {
                    "must NOT have fewer than "
                };
                let word = SIZE_WORDS
                    .get(usize::from(k / 2))
                    .copied()
                    .unwrap_or_default();
                Keyword::Size(k, limit, count_message(text, limit, word))
            }
            (Kind::Pattern, Some(v)) => {
                let Value::String(s) = v else {
                    return Err(invalid(p, name, "must be a string"));
                };
                Keyword::Pattern(s.clone(), format!("must match pattern \"{s}\""))
            }
            (Kind::UniqueItems, Some(v)) => {
                let Value::Bool(b) = v else {
                    return Err(invalid(p, name, "must be a boolean"));
                };
                if !*b {
                    return Ok(());
                }
                Keyword::UniqueItems
            }
            (Kind::Contains, Some(_)) => {
                let schema = self.reserve(&child_pointer(p, name))?;
                let min = match map.get("minContains") {
                    Some(v) => count(v, p, "minContains")?,
                    None => 1,
                };
                let max = match map.get("maxContains") {
                    Some(v) => Some(count(v, p, "maxContains")?),
                    None => None,
                };
                Keyword::Contains { schema, min, max }
            }
            (Kind::Required, Some(v)) => {
                let names = string_array(v, p, name)?;
                if names.is_empty() {
                    return Ok(());
                }
                Keyword::Required(vec![(None, names)])
            }
            (Kind::DependentRequired, Some(v)) => {
                let Value::Object(deps) = v else {
                    return Err(invalid(p, name, "must be an object"));
                };
                let mut list = Vec::new();
                for (dep, reqs) in deps {
                    list.push((Some(dep.clone()), string_array(reqs, p, name)?));
                }
                Keyword::Required(list)
            }
            (Kind::DependentSchemas, Some(_)) => {
                let dependent = self.schema_map(value, p, name)?;
                if dependent.is_empty() {
                    return Ok(());
                }
                Keyword::DependentSchemas(dependent)
            }
            (Kind::Of(k), Some(v)) => {
                let subs = self.schema_array(v, p, name)?;
                match k {
                    0 => Keyword::AllOf(subs),
                    k => Keyword::Of { one: k == 2, subs },
                }
            }
            (Kind::If, Some(_)) => {
                let condition = self.reserve(&child_pointer(p, name))?;
                let then = self.single(map, p, "then")?;
                let otherwise = self.single(map, p, "else")?;
                Keyword::If {
                    condition,
                    then,
                    otherwise,
                }
            }
            (Kind::Single(k), Some(_)) => {
                let s = self.reserve(&child_pointer(p, name))?;
                match k {
                    0 => Keyword::PropertyNames(s),
                    1 => Keyword::Not(s),
                    // `ITEMS` (1) and `PROPS` (2).
                    k => Keyword::Unevaluated {
                        side: k - 1,
                        schema: s,
                    },
                }
            }
        };
        kws.push(kw);
        Ok(())
    }

    fn single(
        &mut self,
        map: &Map<String, Value>,
        pointer: &str,
        keyword: &str,
    ) -> Result<Option<usize>, Error> {
        if !map.contains_key(keyword) {
            return Ok(None);
        }
        self.reserve(&child_pointer(pointer, keyword)).map(Some)
    }

    fn schema_array(
        &mut self,
        value: &Value,
        pointer: &str,
        keyword: &str,
    ) -> Result<Vec<usize>, Error> {
        let Value::Array(items) = value else {
            return Err(invalid(pointer, keyword, "must be an array of schemas"));
        };
        let base = child_pointer(pointer, keyword);
        let mut out = Vec::with_capacity(items.len());
        for i in 0..items.len() {
            out.push(self.reserve(&index_pointer(&base, i))?);
        }
        Ok(out)
    }

    fn schema_map(
        &mut self,
        value: Option<&Value>,
        pointer: &str,
        keyword: &str,
    ) -> Result<Vec<(String, usize)>, Error> {
        let Some(value) = value else {
            return Ok(Vec::new());
        };
        let Value::Object(entries) = value else {
            return Err(invalid(pointer, keyword, "must be an object of schemas"));
        };
        let base = child_pointer(pointer, keyword);
        let mut out = Vec::with_capacity(entries.len());
        for name in entries.keys() {
            out.push((name.clone(), self.reserve(&child_pointer(&base, name))?));
        }
        Ok(out)
    }
}

/// `const` / `enum` values are cloned into the compiled schema, and
/// `Value::clone` / `drop` recurse: refuse values nested deeper than
/// [`MAX_SCHEMA_DEPTH`] (measured without recursion).
fn check_value_depth(v: &Value, pointer: &str, keyword: &str) -> Result<(), Error> {
    let mut stack: Vec<(&Value, usize)> = vec![(v, 0)];
    while let Some((v, depth)) = stack.pop() {
        if depth > MAX_SCHEMA_DEPTH {
            return Err(error(
                Why::TooDeep,
                &child_pointer(pointer, keyword),
                "",
                "",
            ));
        }
        let next = depth.saturating_add(1);
        match v {
            Value::Array(items) => {
                for item in items {
                    stack.push((item, next));
                }
            }
            Value::Object(m) => {
                for item in m.values() {
                    stack.push((item, next));
                }
            }
            _ => {}
        }
    }
    Ok(())
}

fn number(v: &Value, pointer: &str, keyword: &str) -> Result<Number, Error> {
    match v {
        Value::Number(n) => Ok(n.clone()),
        _ => Err(invalid(pointer, keyword, "must be a number")),
    }
}

/// A non-negative integer (`2.0` accepted); values beyond `u64` saturate.
fn count(v: &Value, pointer: &str, keyword: &str) -> Result<u64, Error> {
    if let Value::Number(n) = v {
        if let Some(u) = n.as_u64() {
            return Ok(u);
        }
        if let Some(f) = n.as_f64().filter(|&f| f >= 0.0 && super::is_whole(f)) {
            // Saturating float-to-int conversion (no UB, no panic).
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            let u = f as u64;
            return Ok(u);
        }
    }
    Err(invalid(pointer, keyword, "must be a non-negative integer"))
}

fn string_array(v: &Value, pointer: &str, keyword: &str) -> Result<Vec<String>, Error> {
    if let Value::Array(items) = v {
        let mut out = Vec::with_capacity(items.len());
        for item in items {
            let Value::String(s) = item else {
                break;
            };
            out.push(s.clone());
        }
        // All strings.
        if out.len() == items.len() {
            return Ok(out);
        }
    }
    Err(invalid(pointer, keyword, "must be an array of strings"))
}

fn wrong_type(pointer: &str) -> Error {
    invalid(pointer, "type", "must be a string or an array of strings")
}

/// The `type` names by their bit's position in [`types`].
const TYPE_NAMES: [&str; 7] = [
    "null", "boolean", "object", "array", "number", "string", "integer",
];

#[inline(never)]
fn compile_type(v: &Value, pointer: &str, kws: &mut Vec<Keyword>) -> Result<(), Error> {
    // A string is a list of one name.
    let names = match v {
        Value::String(_) => core::slice::from_ref(v),
        Value::Array(items) => items.as_slice(),
        _ => &[],
    };
    if names.is_empty() && !matches!(v, Value::Array(_)) {
        return Err(wrong_type(pointer));
    }
    let mut mask = 0u8;
    let mut text = String::from("must be ");
    for item in names {
        let Value::String(name) = item else {
            return Err(wrong_type(pointer));
        };
        // The type's bit is `1 << its index` (see `types`).
        let Some(bit) = TYPE_NAMES.iter().position(|t| t == name) else {
            let mut reason = String::from("unknown type \"");
            reason.push_str(name);
            reason.push('"');
            return Err(invalid(pointer, "type", &reason));
        };
        let bit = 1u8 << bit;
        if mask != 0 {
            text.push_str(" or ");
        }
        mask |= bit;
        text.push_str(name);
    }
    kws.push(Keyword::Type {
        mask,
        message: text,
    });
    Ok(())
}
