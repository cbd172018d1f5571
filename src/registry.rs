//! The tool registry: names, scopes, revisions and compiled schemas.
//!
//! Tools live in scopes. The root scope has no prefix; `scope('signup')`
//! makes a child whose tools are named `signup.<name>`. Every change to the
//! set of tools is one revision (`rev` + 1). Calls are serialized per
//! registration scope (see `lanes`).

use crate::given::{self, Given};
use crate::ids::{is_valid_tool_name, llm_name};
use crate::prelude::*;
use crate::protocol::{ErrorEventCode, Hints, ToolManifest, ToolManifestSummary, ToolMode};
use crate::schema::{CompiledSchema, PatternMatcher};
use serde_json::{Map, Value};

/// A scope of this registry; `ScopeId::ROOT` is the registry itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ScopeId(pub u32);

impl ScopeId {
    pub const ROOT: ScopeId = ScopeId(0);
}

/// What creating a scope made. Outside dev mode a scope whose creation
/// was refused still exists for the page that asked (`tm.scope(name)`
/// returns an object): it has its name, and everything done in it is
/// refused as `invalid_scope`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScopeMade {
    Live(ScopeId),
    Refused(ScopeId),
}

impl ScopeMade {
    pub fn id(self) -> ScopeId {
        match self {
            ScopeMade::Live(id) | ScopeMade::Refused(id) => id,
        }
    }

    /// The scope, if its creation was not refused.
    pub fn live(self) -> Option<ScopeId> {
        match self {
            ScopeMade::Live(id) => Some(id),
            ScopeMade::Refused(_) => None,
        }
    }
}

/// A registered tool, for as long as it is registered (never reused).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
pub struct ToolKey(pub u32);

/// How a tool's input (or output) is validated.
#[derive(Debug, Clone, PartialEq)]
pub enum SchemaSpec {
    /// A JSON Schema (draft 2020-12), validated in Rust.
    Json(Value),
    /// A Standard Schema validated by its own `~standard.validate` in JS;
    /// `json` is its JSON Schema for the manifest, when one could be derived.
    External { json: Option<Value> },
    /// A schema JSON cannot write (`JSON.stringify` threw or gave nothing:
    /// a cycle, a BigInt): refused at registration, as a refused pattern is.
    NotJson,
}

/// What an app registers (the functions stay in JS; flags say which exist).
#[derive(Debug, Clone, PartialEq)]
pub struct ToolDef {
    /// The name within its scope; the full name is `<scope prefix>.<name>`.
    pub name: String,
    pub title: Option<String>,
    pub description: String,
    pub input_schema: Option<SchemaSpec>,
    pub output_schema: Option<SchemaSpec>,
    pub hints: Hints,
    pub mode: Option<ToolMode>,
    /// Paths whose values `FieldChange`s report as `"[redacted]"`.
    pub sensitive: Vec<String>,
    pub has_summary: bool,
    pub has_changes: bool,
    pub has_snapshot: bool,
    /// A form-like tool whose state is read at request and at approval
    /// (a change in between makes the approval `refused stale`).
    pub has_state: bool,
}

impl ToolDef {
    /// A definition with just a name and a description.
    pub fn new(name: impl Into<String>, description: impl Into<String>) -> ToolDef {
        ToolDef {
            name: name.into(),
            title: None,
            description: description.into(),
            input_schema: None,
            output_schema: None,
            hints: Hints::default(),
            mode: None,
            sensitive: Vec::new(),
            has_summary: false,
            has_changes: false,
            has_snapshot: false,
            has_state: false,
        }
    }
}

/// A tool definition's fields as the page gave them (API.md, "A tool
/// definition"): each rule takes a field as the boundary read it and gives
/// its value or the message refusing it. The boundary reads them in the
/// order below and stops at the first refusal.
pub mod field {
    use crate::given::{self, Given, GivenJson};
    use crate::prelude::*;
    use crate::protocol::{hints_from_value, Hints, ToolMode};
    use crate::registry::SchemaSpec;

    /// The definition itself: an object, not a function.
    pub fn definition(given: &Given) -> Result<(), &'static str> {
        match given {
            Given::Object => Ok(()),
            _ => Err("register: a tool definition object is required"),
        }
    }

    /// `run`: a function (the boundary keeps it; the core runs by handle).
    pub fn run(given: &Given) -> Result<(), &'static str> {
        match given {
            Given::Function => Ok(()),
            _ => Err("register: run must be a function"),
        }
    }

    /// `name`: a string (its syntax is the registry's `invalid_name`).
    pub fn name(given: Given) -> Result<String, &'static str> {
        given::text(given, "tool definition: name must be a string")
    }

    pub fn description(given: Given) -> Result<String, &'static str> {
        given::text(given, "tool definition: description must be a string")
    }

    /// `hints`: the protocol's hints, booleans; absent is none.
    pub fn hints(given: GivenJson) -> Result<Hints, &'static str> {
        match given {
            GivenJson::Absent => Ok(Hints::default()),
            GivenJson::Json(hints) => {
                hints_from_value(&hints).map_err(|_| "tool definition: hints must hold booleans")
            }
            GivenJson::NotJson => Err("tool definition: hints must hold booleans"),
        }
    }

    /// `mode`: absent, or `'stepwise'`.
    pub fn mode(given: Given) -> Result<Option<ToolMode>, String> {
        match given {
            Given::Undefined | Given::Null => Ok(None),
            Given::Text(mode) if mode == "stepwise" => Ok(Some(ToolMode::Stepwise)),
            Given::Text(other) => Err(format!("tool definition: unknown mode '{}'", other)),
            _ => Err(String::from("tool definition: mode must be a string")),
        }
    }

    /// `sensitive`: an array of path strings; absent is none.
    pub fn sensitive(given: GivenJson) -> Result<Vec<String>, &'static str> {
        let paths = match given {
            GivenJson::Absent => Some(Vec::new()),
            GivenJson::Json(paths) => paths.as_array().and_then(|paths| {
                paths
                    .iter()
                    .map(|p| p.as_str().map(str::to_owned))
                    .collect()
            }),
            GivenJson::NotJson => None,
        };
        paths.ok_or("tool definition: sensitive must be an array of paths")
    }

    pub fn title(given: Given) -> Result<Option<String>, &'static str> {
        given::optional_text(given, "tool definition: title must be a string")
    }

    /// `inputSchema` / `outputSchema` when it is no Standard Schema: absent
    /// is none, anything else a JSON Schema; one JSON cannot write is
    /// refused when the tool registers ([`SchemaSpec::NotJson`]).
    pub fn json_schema(given: GivenJson) -> Option<SchemaSpec> {
        match given {
            GivenJson::Absent => None,
            GivenJson::Json(schema) => Some(SchemaSpec::Json(schema)),
            GivenJson::NotJson => Some(SchemaSpec::NotJson),
        }
    }

    /// How a Standard Schema gives the JSON Schema the manifest shows.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum JsonSchemaOf {
        /// The Standard JSON Schema interface: `~standard.jsonSchema[io]({ target })`.
        StandardJsonSchema,
        /// zod's `schema.toJSONSchema({ io, target })`.
        ToJsonSchema,
    }

    /// The JSON Schema draft asked of a Standard Schema's converter.
    pub const JSON_SCHEMA_TARGET: &str = "draft-2020-12";

    /// The converter a Standard Schema is asked for its JSON Schema: the
    /// Standard interface's method for `io` where it has one (a function),
    /// else zod's `toJSONSchema` where that is a function (read only then),
    /// else none (the tool is listed without a schema).
    pub fn json_schema_of(
        standard_for_io: &Given,
        to_json_schema: impl FnOnce() -> Given,
    ) -> Option<JsonSchemaOf> {
        if matches!(standard_for_io, Given::Function) {
            Some(JsonSchemaOf::StandardJsonSchema)
        } else if matches!(to_json_schema(), Given::Function) {
            Some(JsonSchemaOf::ToJsonSchema)
        } else {
            None
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;
        use serde_json::json;

        fn text(text: &str) -> Given {
            Given::Text(String::from(text))
        }

        #[test]
        fn a_standard_schema_is_asked_by_its_standard_interface_first_then_by_zods_method() {
            let (function, absent) = (|| Given::Function, || Given::Undefined);
            let unread =
                || -> Given { panic!("toJSONSchema read though the Standard interface serves") };
            assert_eq!(
                json_schema_of(&Given::Function, unread),
                Some(JsonSchemaOf::StandardJsonSchema)
            );
            assert_eq!(
                json_schema_of(&Given::Undefined, function),
                Some(JsonSchemaOf::ToJsonSchema)
            );
            assert_eq!(
                json_schema_of(&Given::Object, function),
                Some(JsonSchemaOf::ToJsonSchema)
            );
            assert_eq!(json_schema_of(&Given::Undefined, absent), None);
            assert_eq!(
                json_schema_of(&Given::Object, || Given::Text("f".into())),
                None
            );
        }

        #[test]
        fn a_definition_is_an_object_with_a_run_function() {
            assert_eq!(definition(&Given::Object), Ok(()));
            assert_eq!(run(&Given::Function), Ok(()));
            for given in [
                Given::Undefined,
                Given::Null,
                Given::Function,
                text("tool"),
                Given::Number(1.0),
                Given::Other,
            ] {
                assert_eq!(
                    definition(&given),
                    Err("register: a tool definition object is required"),
                    "{given:?}"
                );
            }
            for given in [
                Given::Undefined,
                Given::Null,
                Given::Object,
                text("run"),
                Given::Other,
            ] {
                assert_eq!(
                    run(&given),
                    Err("register: run must be a function"),
                    "{given:?}"
                );
            }
        }

        #[test]
        fn name_and_description_must_be_strings() {
            assert_eq!(name(text("a.b")), Ok(String::from("a.b")));
            assert_eq!(description(text("")), Ok(String::new()));
            for given in [
                Given::Undefined,
                Given::Null,
                Given::Number(1.0),
                Given::Other,
            ] {
                assert_eq!(
                    name(given.clone()),
                    Err("tool definition: name must be a string")
                );
                assert_eq!(
                    description(given),
                    Err("tool definition: description must be a string")
                );
            }
        }

        #[test]
        fn title_is_optional_text() {
            assert_eq!(title(Given::Undefined), Ok(None));
            assert_eq!(title(Given::Null), Ok(None));
            assert_eq!(title(text("T")), Ok(Some(String::from("T"))));
            assert_eq!(
                title(Given::Number(0.0)),
                Err("tool definition: title must be a string")
            );
        }

        #[test]
        fn mode_is_absent_or_stepwise() {
            assert_eq!(mode(Given::Undefined), Ok(None));
            assert_eq!(mode(Given::Null), Ok(None));
            assert_eq!(mode(text("stepwise")), Ok(Some(ToolMode::Stepwise)));
            assert_eq!(
                mode(text("Stepwise")),
                Err(String::from("tool definition: unknown mode 'Stepwise'"))
            );
            assert_eq!(
                mode(text("")),
                Err(String::from("tool definition: unknown mode ''"))
            );
            assert_eq!(
                mode(Given::Other),
                Err(String::from("tool definition: mode must be a string"))
            );
        }

        #[test]
        fn hints_hold_booleans() {
            assert_eq!(hints(GivenJson::Absent), Ok(Hints::default()));
            let read_only = hints(GivenJson::Json(json!({"readOnly": true})));
            assert_eq!(read_only.map(|h| h.read_only), Ok(Some(true)));
            for refused in [
                GivenJson::Json(json!({"readOnly": 1})),
                GivenJson::Json(json!(1)),
                GivenJson::Json(json!(null)),
                GivenJson::NotJson,
            ] {
                assert_eq!(
                    hints(refused),
                    Err("tool definition: hints must hold booleans")
                );
            }
        }

        #[test]
        fn sensitive_is_an_array_of_path_strings() {
            assert_eq!(sensitive(GivenJson::Absent), Ok(Vec::new()));
            assert_eq!(sensitive(GivenJson::Json(json!([]))), Ok(Vec::new()));
            assert_eq!(
                sensitive(GivenJson::Json(json!(["a", "b.c"]))),
                Ok(vec![String::from("a"), String::from("b.c")])
            );
            for refused in [
                GivenJson::Json(json!(["a", 1])),
                GivenJson::Json(json!("a")),
                GivenJson::Json(json!({"0": "a"})),
                GivenJson::NotJson,
            ] {
                assert_eq!(
                    sensitive(refused),
                    Err("tool definition: sensitive must be an array of paths")
                );
            }
        }
    }
}

/// A validator ready to use.
#[derive(Debug, Clone)]
pub(crate) enum Validator {
    /// No schema (or one that did not compile): any input.
    Any,
    Json(Box<CompiledSchema>),
    External,
    /// A schema with a pattern the matcher refused: every input is
    /// invalid, with this issue message (its author meant some inputs to
    /// be refused, and which ones cannot be decided).
    Refused(String),
}

/// A registered tool.
#[derive(Debug, Clone)]
pub(crate) struct Tool {
    pub(crate) key: ToolKey,
    pub(crate) scope: ScopeId,
    pub(crate) name: String,
    pub(crate) llm_name: String,
    pub(crate) def: ToolDef,
    pub(crate) input: Validator,
    pub(crate) input_json: Value,
    pub(crate) output: Option<Validator>,
    pub(crate) output_json: Option<Value>,
}

impl Tool {
    pub(crate) fn summary(&self) -> ToolManifestSummary {
        ToolManifestSummary {
            name: self.name.clone(),
            llm_name: self.llm_name.clone(),
            title: self.def.title.clone(),
            description: self.def.description.clone(),
            hints: self.def.hints.clone(),
            mode: self.def.mode,
            extra: Map::new(),
        }
    }

    pub(crate) fn manifest(&self) -> ToolManifest {
        ToolManifest {
            summary: self.summary(),
            input_schema: self.input_json.clone(),
            output_schema: self.output_json.clone(),
        }
    }
}

#[derive(Debug, Clone)]
struct Scope {
    parent: Option<ScopeId>,
    prefix: String,
    state: ScopeState,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ScopeState {
    Live,
    Disposed,
    Refused,
}

/// A registration problem: `Err` rejects, a warning registers anyway.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegistryError {
    pub code: ErrorEventCode,
    pub message: String,
}

impl RegistryError {
    fn new(code: ErrorEventCode, message: impl Into<String>) -> Self {
        RegistryError {
            code,
            message: message.into(),
        }
    }
}

/// Tools sorted by name (so manifests come out sorted by name), and scopes.
/// A sorted `Vec` rather than maps: pages have tens of tools, and every map
/// type costs code size in the wasm.
#[derive(Debug, Default)]
pub struct Registry {
    tools: Vec<Tool>,
    /// Indexed by scope id: scopes are never removed (a disposed or a
    /// refused one stays, marked), so a new scope's id is the count so far.
    scopes: Vec<Scope>,
    rev: u64,
    next_key: u32,
}

impl Registry {
    pub fn new() -> Registry {
        Registry {
            scopes: vec![Scope {
                parent: None,
                prefix: String::new(),
                state: ScopeState::Live,
            }],
            ..Registry::default()
        }
    }

    fn scope(&self, scope: ScopeId) -> Option<&Scope> {
        self.scopes.get(scope.0 as usize)
    }

    /// The registry revision: + 1 on every change of the tool set.
    pub fn rev(&self) -> u64 {
        self.rev
    }

    fn live_scope(&self, scope: ScopeId) -> Result<&Scope, RegistryError> {
        let s = self.scope(scope).ok_or_else(|| not_ours(scope))?;
        match s.state {
            ScopeState::Live => Ok(s),
            ScopeState::Disposed => Err(RegistryError::new(
                ErrorEventCode::ScopeDisposed,
                format!("scope '{}' is disposed", s.prefix),
            )),
            ScopeState::Refused => Err(refused(&s.prefix)),
        }
    }

    /// A new scope's id: the count so far.
    fn push_scope(&mut self, scope: Scope) -> ScopeId {
        // (Scopes run out of memory long before ids run out of u32.)
        let id = ScopeId(u32::try_from(self.scopes.len()).unwrap_or(u32::MAX));
        self.scopes.push(scope);
        id
    }

    /// `scope(name)`'s name as the page gave it: a string (its syntax is
    /// [`Registry::create_scope`]'s `invalid_name`); any other value is
    /// refused, not written as `"undefined"` or `"42"`.
    pub fn scope_name(given: Given) -> Result<String, &'static str> {
        given::text(given, "scope: name must be a string")
    }

    /// Creates a child scope; its tools are named `<parent prefix>.<name>.<tool>`.
    pub fn create_scope(&mut self, parent: ScopeId, name: &str) -> Result<ScopeId, RegistryError> {
        let prefix = joined(&self.live_scope(parent)?.prefix, name);
        if name.is_empty() || !is_valid_tool_name(&prefix) {
            return Err(RegistryError::new(
                ErrorEventCode::InvalidName,
                format!("scope name '{name}' does not make a valid tool name prefix ('{prefix}')"),
            ));
        }
        Ok(self.push_scope(Scope {
            parent: Some(parent),
            prefix,
            state: ScopeState::Live,
        }))
    }

    /// A scope whose creation [`Registry::create_scope`] refused, kept for
    /// the page that holds it: named as it would have been (its parent's
    /// prefix, whatever the parent's state, joined with `name`), and
    /// nothing can be registered or created in it, nor can it be disposed.
    pub fn refuse_scope(&mut self, parent: ScopeId, name: &str) -> ScopeId {
        let (parent, prefix) = match self.scope(parent) {
            Some(p) => (Some(parent), joined(&p.prefix, name)),
            None => (None, name.to_owned()),
        };
        self.push_scope(Scope {
            parent,
            prefix,
            state: ScopeState::Refused,
        })
    }

    /// The full dotted prefix of a scope (`""` for the root).
    pub fn scope_prefix(&self, scope: ScopeId) -> Option<&str> {
        self.scope(scope).map(|s| s.prefix.as_str())
    }

    fn is_within(&self, mut scope: ScopeId, ancestor: ScopeId) -> bool {
        loop {
            if scope == ancestor {
                return true;
            }
            match self.scope(scope).and_then(|s| s.parent) {
                Some(parent) => scope = parent,
                None => return false,
            }
        }
    }

    /// Registers a tool. `Ok` carries the key and any warning
    /// (`schema_conversion_failed`: the tool is registered with `inputSchema: {}`);
    /// with `strict`, a warning is an `Err` and nothing is registered.
    /// Every `pattern` of its JSON Schemas is tried on `matcher` first.
    pub fn register(
        &mut self,
        scope: ScopeId,
        def: ToolDef,
        strict: bool,
        matcher: &dyn PatternMatcher,
    ) -> Result<(ToolKey, Vec<RegistryError>), RegistryError> {
        let name = joined(&self.live_scope(scope)?.prefix, &def.name);
        if def.name.is_empty() || !is_valid_tool_name(&name) {
            return Err(RegistryError::new(
                ErrorEventCode::InvalidName,
                format!("tool name '{name}' does not match ^[A-Za-z0-9_.-]{{1,128}}$"),
            ));
        }
        let llm = llm_name(&name);
        let slot = self
            .tools
            .binary_search_by(|t| t.name.as_str().cmp(&name))
            .err();
        let Some(slot) = slot else {
            return Err(RegistryError::new(
                ErrorEventCode::DuplicateName,
                format!("a tool named '{name}' is already registered"),
            ));
        };
        if let Some(other) = self
            .tools
            .iter()
            .find(|t| t.llm_name == llm)
            .map(|t| &t.name)
        {
            return Err(RegistryError::new(
                ErrorEventCode::DuplicateName,
                format!("tool '{name}' has the llmName '{llm}' of the registered tool '{other}'"),
            ));
        }
        let mut warnings = Vec::new();
        let (input, input_json) = compile_spec(
            &name,
            "input",
            def.input_schema.as_ref(),
            matcher,
            &mut warnings,
        );
        let (output, output_json) = match def.output_schema.as_ref() {
            None => (None, None),
            Some(spec) => {
                let (validator, json) =
                    compile_spec(&name, "output", Some(spec), matcher, &mut warnings);
                (Some(validator), Some(json))
            }
        };
        if strict {
            if let Some(warning) = warnings.first() {
                return Err(warning.clone());
            }
        }
        let key = ToolKey(self.next_key);
        self.next_key = self.next_key.saturating_add(1);
        self.tools.insert(
            slot,
            Tool {
                key,
                scope,
                name,
                llm_name: llm,
                def,
                input,
                input_json,
                output,
                output_json,
            },
        );
        self.rev += 1;
        Ok((key, warnings))
    }

    fn remove(&mut self, key: ToolKey) -> bool {
        for (index, tool) in self.tools.iter().enumerate() {
            if tool.key == key {
                self.tools.remove(index);
                return true;
            }
        }
        false
    }

    /// Unregisters a tool; false (and no revision) when it is already gone.
    pub fn unregister(&mut self, key: ToolKey) -> bool {
        let removed = self.remove(key);
        if removed {
            self.rev += 1;
        }
        removed
    }

    /// Disposes a scope and its descendants, unregistering their tools in
    /// one revision. Returns the keys of the tools removed (the driver lets
    /// their functions go).
    pub fn dispose_scope(&mut self, scope: ScopeId) -> Result<Vec<ToolKey>, RegistryError> {
        if scope == ScopeId::ROOT {
            return Err(RegistryError::new(
                ErrorEventCode::InvalidScope,
                "the root scope cannot be disposed",
            ));
        }
        match self.scope(scope) {
            None => return Err(not_ours(scope)),
            Some(s) if s.state == ScopeState::Refused => return Err(refused(&s.prefix)),
            Some(_) => {}
        }
        // Marking changes no parent link, so the walk up stays the same.
        for id in 0..self.scopes.len() {
            if self.is_within(ScopeId(u32::try_from(id).unwrap_or(u32::MAX)), scope) {
                if let Some(entry) = self.scopes.get_mut(id) {
                    if entry.state == ScopeState::Live {
                        entry.state = ScopeState::Disposed;
                    }
                }
            }
        }
        let mut removed = Vec::new();
        let mut index = 0;
        while let Some(tool) = self.tools.get(index) {
            if self.is_within(tool.scope, scope) {
                removed.push(tool.key);
                self.tools.remove(index);
            } else {
                index += 1;
            }
        }
        if !removed.is_empty() {
            self.rev += 1;
        }
        Ok(removed)
    }

    pub(crate) fn by_name(&self, name: &str) -> Option<&Tool> {
        let index = self
            .tools
            .binary_search_by(|t| t.name.as_str().cmp(name))
            .ok()?;
        self.tools.get(index)
    }

    pub(crate) fn by_key(&self, key: ToolKey) -> Option<&Tool> {
        self.tools.iter().find(|t| t.key == key)
    }

    /// All tools, sorted by name.
    pub(crate) fn tools(&self) -> impl Iterator<Item = &Tool> {
        self.tools.iter()
    }

    pub fn len(&self) -> usize {
        self.tools.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }
}

/// The full name of `name` within a scope of `prefix`: `<prefix>.<name>`,
/// or `name` itself in the root scope.
fn joined(prefix: &str, name: &str) -> String {
    if prefix.is_empty() {
        name.to_owned()
    } else {
        format!("{prefix}.{name}")
    }
}

/// `invalid_scope`: the scope's creation was refused.
fn refused(prefix: &str) -> RegistryError {
    RegistryError::new(
        ErrorEventCode::InvalidScope,
        format!("scope '{prefix}' was refused when it was created"),
    )
}

/// `invalid_scope`: no scope of this registry has that id.
fn not_ours(scope: ScopeId) -> RegistryError {
    RegistryError::new(
        ErrorEventCode::InvalidScope,
        format!(
            "scope {} does not belong to this registry",
            &(u64::from(scope.0)).to_string()
        ),
    )
}

/// Compiles a schema spec; a JSON Schema that does not compile is a warning
/// and the tool gets `{}` (accept anything), as production does for a schema
/// that cannot be converted. A schema with a pattern `matcher` refuses is a
/// warning too, and shows `{}`, but accepts nothing: that pattern was meant
/// to refuse some inputs.
fn compile_spec(
    name: &str,
    which: &str,
    spec: Option<&SchemaSpec>,
    matcher: &dyn PatternMatcher,
    warnings: &mut Vec<RegistryError>,
) -> (Validator, Value) {
    let empty = || Value::Object(Map::new());
    match spec {
        None => (Validator::Any, empty()),
        Some(SchemaSpec::External { json }) => {
            let json = json.clone().unwrap_or_else(|| {
                warnings.push(RegistryError::new(
                    ErrorEventCode::SchemaConversionFailed,
                    format!("tool '{}': no JSON Schema could be derived for its {} schema; the manifest shows {}", name, which, "{}"),
                ));
                empty()
            });
            (Validator::External, json)
        }
        Some(SchemaSpec::NotJson) => refused_schema(
            name,
            which,
            "value is not JSON (JSON.stringify threw or gave no text)",
            warnings,
        ),
        Some(SchemaSpec::Json(schema)) => match CompiledSchema::compile(schema) {
            Ok(compiled) => {
                let refused = compiled
                    .patterns()
                    .find_map(|pattern| Some((pattern, matcher.is_match(pattern, "").err()?)));
                let Some((pattern, why)) = refused else {
                    // Nothing to check: the input stays text until its run.
                    if compiled.accepts_everything() {
                        return (Validator::Any, schema.clone());
                    }
                    return (Validator::Json(Box::new(compiled)), schema.clone());
                };
                let refusal = format!("pattern \"{pattern}\" is refused: {why}");
                refused_schema(name, which, &refusal, warnings)
            }
            Err(error) => {
                warnings.push(RegistryError::new(
                    ErrorEventCode::SchemaConversionFailed,
                    format!(
                        "tool '{}': its {} schema does not compile ({}); registered with {}",
                        name,
                        which,
                        &error.message(),
                        "{}"
                    ),
                ));
                (Validator::Any, empty())
            }
        },
    }
}

/// A schema refused at registration: a warning, `{}` in the manifest, and
/// a check that refuses every value (accepting would let through what the
/// schema was meant to refuse).
fn refused_schema(
    name: &str,
    which: &str,
    refusal: &str,
    warnings: &mut Vec<RegistryError>,
) -> (Validator, Value) {
    let consequence = if which == "input" {
        ", and every call is answered invalid"
    } else {
        ""
    };
    warnings.push(RegistryError::new(
        ErrorEventCode::SchemaConversionFailed,
        format!("tool '{name}': its {which} schema's {refusal}; registered with {{}}{consequence}"),
    ));
    let issue = format!("the tool's {which} schema was refused at registration: {refusal}");
    (Validator::Refused(issue), Value::Object(Map::new()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::given::GivenJson;
    use crate::schema::pattern::LinearPatterns;

    fn with_pattern(name: &str, pattern: &str) -> ToolDef {
        let mut def = ToolDef::new(name, "Checks s");
        def.input_schema = Some(SchemaSpec::Json(serde_json::json!({
            "type": "object",
            "properties": {"s": {"type": "string"}},
            "patternProperties": {"^x": {"not": {"pattern": pattern}}},
        })));
        def
    }

    #[test]
    fn a_pattern_without_a_linear_plan_is_refused_at_registration() {
        let matcher = LinearPatterns::new();
        let mut registry = Registry::new();
        let lookbehind = "(?<=a)b";
        // Strict (dev): an error, nothing registered.
        let error = registry
            .register(ScopeId::ROOT, with_pattern("t", lookbehind), true, &matcher)
            .map(|_| ())
            .unwrap_err();
        assert_eq!(error.code, ErrorEventCode::SchemaConversionFailed);
        assert!(
            error
                .message
                .contains("pattern \"(?<=a)b\" is refused: lookbehind"),
            "{}",
            error.message
        );
        assert!(registry.is_empty());
        // Otherwise: registered with `{}`, a warning, and an input check
        // that refuses everything (the pattern sat under a `not`: accepting
        // on an error would let through what it was meant to refuse).
        let (key, warnings) = registry
            .register(
                ScopeId::ROOT,
                with_pattern("t", lookbehind),
                false,
                &matcher,
            )
            .unwrap();
        assert_eq!(warnings, vec![error]);
        let tool = registry.by_key(key).unwrap();
        assert_eq!(tool.input_json, serde_json::json!({}));
        let Validator::Refused(issue) = &tool.input else {
            panic!("{:?}", tool.input)
        };
        assert_eq!(
            issue,
            "the tool's input schema was refused at registration: pattern \"(?<=a)b\" is \
             refused: lookbehind (?<=…) / (?<!…) has no linear-time translation"
        );
        // A pattern with a linear plan compiles as usual.
        let (key, warnings) = registry
            .register(
                ScopeId::ROOT,
                with_pattern("u", "^(?=.*\\d)"),
                true,
                &matcher,
            )
            .unwrap();
        assert!(warnings.is_empty());
        assert!(matches!(
            registry.by_key(key).map(|t| &t.input),
            Some(Validator::Json(_))
        ));
    }

    #[test]
    fn a_schema_json_cannot_write_is_refused_at_registration_and_refuses_every_input() {
        let matcher = LinearPatterns::new();
        let mut registry = Registry::new();
        let mut def = ToolDef::new("t", "Takes anything");
        def.input_schema = field::json_schema(GivenJson::NotJson);
        let error = registry
            .register(ScopeId::ROOT, def.clone(), true, &matcher)
            .map(|_| ())
            .unwrap_err();
        assert_eq!(error.code, ErrorEventCode::SchemaConversionFailed);
        assert_eq!(
            error.message,
            "tool 't': its input schema's value is not JSON (JSON.stringify threw or gave \
             no text); registered with {}, and every call is answered invalid"
        );
        assert!(registry.is_empty());
        let (key, warnings) = registry
            .register(ScopeId::ROOT, def, false, &matcher)
            .unwrap();
        assert_eq!(warnings, vec![error]);
        let tool = registry.by_key(key).unwrap();
        assert_eq!(tool.input_json, serde_json::json!({}));
        assert!(
            matches!(&tool.input, Validator::Refused(_)),
            "{:?}",
            tool.input
        );
        // Absent is no schema; any JSON value is a JSON Schema to compile.
        assert_eq!(field::json_schema(GivenJson::Absent), None);
        assert_eq!(
            field::json_schema(GivenJson::Json(serde_json::json!(true))),
            Some(SchemaSpec::Json(serde_json::json!(true)))
        );
    }

    #[test]
    fn a_schema_that_asserts_nothing_keeps_the_input_as_text() {
        let matcher = LinearPatterns::new();
        let mut registry = Registry::new();
        let cases = [
            (serde_json::json!({}), true),
            (serde_json::json!(true), true),
            (
                serde_json::json!({"title": "t", "description": "d", "$comment": "c"}),
                true,
            ),
            (
                serde_json::json!({"$defs": {"a": {"type": "string"}}}),
                true,
            ),
            (serde_json::json!(false), false),
            (serde_json::json!({"type": "object"}), false),
            (
                serde_json::json!({"$ref": "#/$defs/a", "$defs": {"a": {}}}),
                false,
            ),
            (serde_json::json!({"not": {}}), false),
        ];
        for (i, (schema, any)) in cases.into_iter().enumerate() {
            let mut def = ToolDef::new(format!("t{i}"), "d");
            def.input_schema = Some(SchemaSpec::Json(schema.clone()));
            let (key, warnings) = registry
                .register(ScopeId::ROOT, def, true, &matcher)
                .unwrap();
            assert!(warnings.is_empty(), "{schema}");
            let tool = registry.by_key(key).unwrap();
            assert_eq!(matches!(tool.input, Validator::Any), any, "{schema}");
            assert_eq!(tool.input_json, schema, "the manifest shows it as given");
        }
    }

    #[test]
    fn a_scope_name_is_a_string_and_nothing_else_is_written_as_one() {
        assert_eq!(
            Registry::scope_name(Given::Text(String::from("signup"))),
            Ok(String::from("signup"))
        );
        for other in [
            Given::Undefined,
            Given::Null,
            Given::Number(42.0),
            Given::Other,
            Given::Object,
            Given::Function,
        ] {
            assert_eq!(
                Registry::scope_name(other),
                Err("scope: name must be a string")
            );
        }
    }

    #[test]
    fn scope_names_join_with_dots_and_must_make_a_valid_name_prefix() {
        let mut registry = Registry::new();
        let signup = registry.create_scope(ScopeId::ROOT, "signup").unwrap();
        let address = registry.create_scope(signup, "address").unwrap();
        assert_eq!(registry.scope_prefix(ScopeId::ROOT), Some(""));
        assert_eq!(registry.scope_prefix(signup), Some("signup"));
        assert_eq!(registry.scope_prefix(address), Some("signup.address"));
        assert_eq!(registry.scope_prefix(ScopeId(99)), None);
        registry
            .register(
                address,
                ToolDef::new("fill", "Fills the address"),
                true,
                &LinearPatterns::new(),
            )
            .unwrap();
        assert!(registry.by_name("signup.address.fill").is_some());
        let too_long = "x".repeat(129);
        for (parent, name) in [
            (ScopeId::ROOT, ""),
            (signup, ""),
            (ScopeId::ROOT, "bad name"),
            (signup, "a/b"),
            (ScopeId::ROOT, too_long.as_str()),
        ] {
            assert_eq!(
                registry.create_scope(parent, name).map_err(|e| e.code),
                Err(ErrorEventCode::InvalidName),
                "{name:?}"
            );
        }
    }

    #[test]
    fn a_refused_scope_is_named_after_its_parent_and_refuses_everything_done_in_it() {
        let mut registry = Registry::new();
        let patterns = LinearPatterns::new();
        let signup = registry.create_scope(ScopeId::ROOT, "signup").unwrap();
        let refused = registry.refuse_scope(signup, "bad name");
        let nested = registry.refuse_scope(refused, "x");
        let orphan = registry.refuse_scope(ScopeId(99), "y");
        assert_eq!(registry.scope_prefix(refused), Some("signup.bad name"));
        assert_eq!(registry.scope_prefix(nested), Some("signup.bad name.x"));
        assert_eq!(registry.scope_prefix(orphan), Some("y"));
        let refusal = |prefix: &str| RegistryError {
            code: ErrorEventCode::InvalidScope,
            message: format!("scope '{prefix}' was refused when it was created"),
        };
        let tool = || ToolDef::new("fill", "Fills");
        assert_eq!(
            registry.register(refused, tool(), true, &patterns).err(),
            Some(refusal("signup.bad name"))
        );
        assert_eq!(
            registry.create_scope(refused, "ok"),
            Err(refusal("signup.bad name"))
        );
        assert_eq!(
            registry.dispose_scope(nested),
            Err(refusal("signup.bad name.x"))
        );
        registry.dispose_scope(signup).unwrap();
        assert_eq!(
            registry.register(refused, tool(), true, &patterns).err(),
            Some(refusal("signup.bad name")),
            "still refused, not disposed, once its parent is"
        );
        assert!(registry.is_empty() && registry.rev() == 0);
    }

    #[test]
    fn disposing_a_scope_removes_the_tools_of_its_nested_scopes_and_says_which() {
        let mut registry = Registry::new();
        let patterns = LinearPatterns::new();
        let signup = registry.create_scope(ScopeId::ROOT, "signup").unwrap();
        let address = registry.create_scope(signup, "address").unwrap();
        let other = registry.create_scope(ScopeId::ROOT, "other").unwrap();
        let mut register = |scope, name| {
            registry
                .register(scope, ToolDef::new(name, "A tool"), true, &patterns)
                .unwrap()
                .0
        };
        let top = register(ScopeId::ROOT, "top");
        let submit = register(signup, "submit");
        let street = register(address, "street");
        let kept = register(other, "kept");
        let mut removed = registry.dispose_scope(signup).unwrap();
        removed.sort();
        assert_eq!(removed, [submit, street]);
        let mut names: Vec<&str> = registry.tools().map(|t| t.name.as_str()).collect();
        names.sort_unstable();
        assert_eq!(names, ["other.kept", "top"]);
        assert!(registry.by_key(top).is_some() && registry.by_key(kept).is_some());
        assert_eq!(
            registry.dispose_scope(address),
            Ok(vec![]),
            "a nested scope went with its parent"
        );
    }

    #[test]
    fn a_revision_per_change_of_the_tool_set_and_none_without_one() {
        let mut registry = Registry::new();
        assert!(registry.is_empty());
        let empty = registry.create_scope(ScopeId::ROOT, "empty").unwrap();
        let cart = registry.create_scope(ScopeId::ROOT, "cart").unwrap();
        let (key, _) = registry
            .register(
                cart,
                ToolDef::new("add", "Adds an item"),
                true,
                &LinearPatterns::new(),
            )
            .unwrap();
        let (remove, _) = registry
            .register(
                cart,
                ToolDef::new("remove", "Removes an item"),
                true,
                &LinearPatterns::new(),
            )
            .unwrap();
        assert_eq!(
            (registry.len(), registry.is_empty(), registry.rev()),
            (2, false, 2)
        );
        assert_eq!(registry.dispose_scope(empty), Ok(vec![]));
        assert_eq!(
            registry.rev(),
            2,
            "disposing a scope without tools changes nothing"
        );
        assert!(registry.unregister(key));
        assert!(!registry.unregister(key));
        assert_eq!((registry.len(), registry.rev()), (1, 3));
        assert_eq!(registry.dispose_scope(cart), Ok(vec![remove]));
        assert_eq!(
            (registry.len(), registry.is_empty(), registry.rev()),
            (0, true, 4)
        );
    }
}
