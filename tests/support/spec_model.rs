//! One model of the spec's rules, driven by both machine tests: the
//! proptest (`tests/machine_model.rs`, which generates operations) and the
//! `machine` fuzz target's driver (`tests/support/machine_drive.rs`, which
//! decodes bytes). Both build [`Input`]s and hand them to
//! [`SpecModel::apply`], which feeds the core, drains every output in the
//! documented order and checks it, then the bounds; at the end both answer
//! all work, run the clock past every deadline and call
//! [`SpecModel::settled`].
//!
//! The bounds are written down once from the spec (not taken from the
//! crate). What the model checks after every input:
//!
//! - every transmitted text is JSON, passes `validate(_, ToAgent)`, carries
//!   the page's `clientId` and goes to an attached bridge; manifests are
//!   sorted by name and list only registered tools; `rev` never goes back
//!   nor runs ahead of the core's;
//! - a `result` answers an id the bridge received and still owes (rules 1,
//!   2 and 4 and the size limit, worked out from the inbound text), and no
//!   id gets two among the page's last 1000 results;
//! - a `confirmed` comes after the `result` carrying its
//!   `needs_confirmation`, on the same bridge (or, that one gone, on those
//!   attached then), at most once per bridge, and never asks again;
//! - page requests complete at most once, `needs_confirmation` only for
//!   calls (never for held calls, which complete with the outcome); handles, tool keys, bridge ids, run ids and confirmIds are
//!   never reused;
//! - pending calls per scope <= 32, pending confirmations <= 100, answered
//!   ids <= 1000 and exactly the spec's answered-id memory;
//! - a `Run` is for a registered tool under its name, with its snapshot
//!   flag, with input its JSON Schema accepts, and for caller inapp only
//!   where the policy allows; `Validate` / `Prepare` / `ReadState` match
//!   the tool's definition; validated values and restorers are used,
//!   restored or dropped only while JS keeps them.
//!
//! The proptest also predicts each step's exact results beside this model.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};

use serde_json::Value;
pub use toolmark_bridge::input::{Input, Reply};
use toolmark_bridge::machine::{
    Action, BridgeId, BridgeOptions, Event, Handle, Output, PrepareOrder, RunId, RunOrder,
    SignalUse, Toolmark, Transmit, Validated,
};
use toolmark_bridge::policy::{Caller, Decision, Policy};
use toolmark_bridge::protocol::{
    check_agent_to_page, parse_json, peek_client_id, validate, AgentToPage, CancelledBy, Direction,
    Hints, Rejection, ToolResult,
};
use toolmark_bridge::registry::{SchemaSpec, ScopeId, ScopeMade, ToolDef, ToolKey};
use toolmark_bridge::schema::{CompiledSchema, PatternMatcher};

/// Spec rule 5: pending calls per scope.
pub const MAX_PENDING_PER_SCOPE: usize = 32;
/// Spec: pending deferred confirmations per page.
pub const MAX_PENDING_CONFIRMATIONS: usize = 100;
/// Spec rule 2: answered-id memory.
pub const ANSWERED_ID_MEMORY: usize = 1000;

/// A message the page sent: JSON, valid against the page-to-agent schema,
/// carrying the page's `clientId`; `Err` says how it is not.
pub fn sent_message(text: &str, client_id: &str) -> Result<Value, String> {
    let message: Value =
        serde_json::from_str(text).map_err(|e| format!("sent non-JSON ({e}): {text}"))?;
    if let Err(issues) = validate(&message, Direction::ToAgent) {
        return Err(format!(
            "sent a message that fails the page-to-agent schema: {issues:?}\n{text}"
        ));
    }
    if message["clientId"].as_str() != Some(client_id) {
        return Err(format!(
            "sent with a clientId other than {client_id:?}: {text}"
        ));
    }
    Ok(message)
}

/// The page's answered-id memory (rule 2: the last 1000 ids it answered,
/// on any of its bridges), as a plain queue and set of the ids themselves.
#[derive(Debug, Default)]
pub struct AnsweredModel {
    order: VecDeque<String>,
    known: HashSet<String>,
}

impl AnsweredModel {
    pub fn len(&self) -> usize {
        self.order.len()
    }

    pub fn contains(&self, id: &str) -> bool {
        self.known.contains(id)
    }

    /// Remembers an answered id, forgetting the oldest beyond the memory
    /// (a remembered id keeps its place).
    pub fn remember(&mut self, id: &str) {
        if self.known.contains(id) {
            return;
        }
        if self.order.len() >= ANSWERED_ID_MEMORY {
            if let Some(old) = self.order.pop_front() {
                self.known.remove(&old);
            }
        }
        self.order.push_back(id.to_owned());
        self.known.insert(id.to_owned());
    }
}

// ----- the shared model: inputs, outputs and the checks after every step ----

/// What the proptest reads of a reply (the fuzz driver reads none).
#[allow(dead_code)]
pub trait ReplyParts {
    fn handle(&self) -> Handle;
    fn bridge(&self) -> BridgeId;
}

impl ReplyParts for Reply {
    fn handle(&self) -> Handle {
        match self {
            Reply::Handle(handle) => *handle,
            other => panic!("no handle in {other:?}"),
        }
    }

    fn bridge(&self) -> BridgeId {
        match self {
            Reply::Bridge(bridge) => *bridge,
            other => panic!("no bridge in {other:?}"),
        }
    }
}

/// Everything one input produced, drained in the documented order
/// (transmits, events, actions); each item already passed the checks.
#[derive(Debug, Default)]
pub struct Drained {
    pub transmits: Vec<Transmit>,
    pub events: Vec<Event>,
    pub actions: Vec<Action>,
    /// The deadline `poll_output` ended with.
    pub deadline: Option<u64>,
}

/// What the model knows of a registered tool.
#[derive(Debug)]
pub struct ToolInfo {
    pub name: String,
    pub scope: ScopeId,
    pub hints: Hints,
    pub schema: Option<CompiledSchema>,
    pub external: bool,
    /// Its output schema is a Standard Schema (checked in JS, in dev mode).
    pub external_output: bool,
    pub has_summary: bool,
    pub has_changes: bool,
    pub has_state: bool,
    pub has_snapshot: bool,
}

/// Per attached bridge: the ids it owes a result for.
#[derive(Debug)]
pub struct BridgeOwed {
    pub max_message_bytes: usize,
    pub owed: HashSet<String>,
    pub last_rev: Option<u64>,
}

/// What a page request was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RequestKind {
    Call,
    HeldCall,
    /// A page call whose signal had aborted before it was made.
    AbortedCall,
    Confirm,
    Undo,
}

/// What the model does with a reply, taken from the input the core consumed.
enum Then {
    Nothing,
    Register(ToolInfo),
    Unregister(ToolKey),
    CreateScope(ScopeId, String),
    DisposeScope(ScopeId),
    Attach(BridgeOptions),
    Detach(BridgeId),
    Issued(RequestKind),
    /// A snapshot that gave no restorer.
    NoRestorer(RunId),
}

macro_rules! ensure {
    ($cond:expr, $($arg:tt)+) => {
        if !$cond {
            return Err(format!($($arg)+));
        }
    };
}

/// The spec's rules as one model of the page: what it must owe and may
/// send for the inputs it was given. [`SpecModel::apply`] feeds an input to
/// the core, drains every output and checks it; [`SpecModel::settled`]
/// checks that nothing is left once all work is answered and every
/// deadline passed. `Err` says which rule broke.
pub struct SpecModel {
    pub client_id: String,
    /// Dev mode: a Standard Schema output is checked before the outcome.
    dev: bool,
    policy: Policy,
    patterns: Box<dyn PatternMatcher>,
    // registry mirror
    pub tools: BTreeMap<ToolKey, ToolInfo>,
    pub gone_keys: Vec<ToolKey>,
    pub scopes: BTreeMap<ScopeId, (Option<ScopeId>, String)>,
    // bridges
    pub bridges: BTreeMap<BridgeId, BridgeOwed>,
    pub detached: Vec<BridgeId>,
    /// The bridge the input being drained detached: its transport is
    /// closed once, in that input's outputs.
    closing: Option<BridgeId>,
    /// The last 1000 results the page sent, on any bridge (rule 2 is per page),
    /// and the ids of detached bridges' calls that settled since.
    pub recent: AnsweredModel,
    /// Ids a detached bridge was owed whose calls were still running:
    /// in flight for the page until they settle (rules 2 and 5), then
    /// remembered as answered though no result goes out.
    pub orphans: Vec<String>,
    // work and requests
    runs_seen: BTreeSet<u64>,
    pub run_list: Vec<RunId>,
    pub call_ids: Vec<String>,
    /// Validations handed out and not answered yet.
    validations: HashSet<RunId>,
    /// Runs that took a snapshot and whose restorer JS still keeps (by run).
    restorers: HashSet<RunId>,
    /// Validation runs whose value JS keeps (answered `Valid(Some(_))`).
    validated_values: HashSet<RunId>,
    pub handles: BTreeMap<Handle, RequestKind>,
    completed: HashSet<Handle>,
    // confirmations
    needs: HashMap<String, BridgeId>,
    confirmed: HashSet<(String, BridgeId)>,
    pub confirm_ids: Vec<String>,
}

impl SpecModel {
    /// A model of a fresh core built with `policy` / `confirm_mode` (the
    /// options as given) that validates patterns with `patterns`.
    pub fn new(
        tm: &Toolmark,
        policy: &Value,
        confirm_mode: &Value,
        patterns: Box<dyn PatternMatcher>,
    ) -> SpecModel {
        let mut scopes = BTreeMap::new();
        scopes.insert(ScopeId::ROOT, (None, String::new()));
        SpecModel {
            client_id: tm.client_id().to_owned(),
            dev: tm.is_dev(),
            policy: Policy::from_options(policy, confirm_mode).0,
            patterns,
            tools: BTreeMap::new(),
            gone_keys: Vec::new(),
            scopes,
            bridges: BTreeMap::new(),
            detached: Vec::new(),
            closing: None,
            recent: AnsweredModel::default(),
            orphans: Vec::new(),
            runs_seen: BTreeSet::new(),
            run_list: Vec::new(),
            call_ids: Vec::new(),
            validations: HashSet::new(),
            restorers: HashSet::new(),
            validated_values: HashSet::new(),
            handles: BTreeMap::new(),
            completed: HashSet::new(),
            needs: HashMap::new(),
            confirmed: HashSet::new(),
            confirm_ids: Vec::new(),
        }
    }

    /// Feeds `input` to the core at `now`, drains and checks every output,
    /// then the bounds; returns what the core replied and what it produced.
    pub fn apply(
        &mut self,
        tm: &mut Toolmark,
        input: Input,
        now: u64,
    ) -> Result<(Reply, Drained), String> {
        let reply = self.feed(tm, input, now)?;
        let drained = self.drain(tm)?;
        Ok((reply, drained))
    }

    fn feed(&mut self, tm: &mut Toolmark, input: Input, now: u64) -> Result<Reply, String> {
        // What the model takes from the input before the core takes it (the
        // input itself goes to the core: an inbound text is not copied).
        let then = match &input {
            Input::Register { scope, def } => Then::Register(self.tool_info(*scope, def)?),
            Input::Unregister(key) => Then::Unregister(*key),
            Input::CreateScope { parent, name } => Then::CreateScope(*parent, name.clone()),
            Input::DisposeScope(scope) => Then::DisposeScope(*scope),
            Input::Attach(options) => Then::Attach(*options),
            Input::Detach(bridge) => Then::Detach(*bridge),
            Input::Inbound { bridge, text } | Input::InboundFrame { bridge, text } => {
                self.note_inbound(*bridge, text);
                Then::Nothing
            }
            Input::Validated(run, validated) => {
                // The driver keeps every value it answers with, asked for
                // or not (a late or repeated answer too); the core must
                // then forget the ones no run takes.
                self.validations.remove(run);
                if matches!(validated, Validated::Valid(Some(_))) {
                    self.validated_values.insert(*run);
                }
                Then::Nothing
            }
            Input::SnapshotTaken {
                run,
                restorer: false,
            } => Then::NoRestorer(*run),
            Input::Call { .. } => Then::Issued(RequestKind::Call),
            Input::HeldCall { .. } => Then::Issued(RequestKind::HeldCall),
            Input::PageCall { call, .. } => Then::Issued(match (call.signal, call.held) {
                (SignalUse::Abort, _) => RequestKind::AbortedCall,
                (_, true) => RequestKind::HeldCall,
                (_, false) => RequestKind::Call,
            }),
            Input::Confirm { .. } => Then::Issued(RequestKind::Confirm),
            Input::Undo(_) => Then::Issued(RequestKind::Undo),
            _ => Then::Nothing,
        };
        let reply = tm.handle_input(input, now);
        match (then, &reply) {
            (Then::Register(info), Reply::Registered(Ok(Some(key)))) => {
                ensure!(
                    !self.tools.contains_key(key) && !self.gone_keys.contains(key),
                    "tool key {key:?} reused"
                );
                self.tools.insert(*key, info);
            }
            (Then::Unregister(key), _) if self.tools.remove(&key).is_some() => {
                self.gone_keys.push(key);
            }
            (Then::CreateScope(parent, name), Reply::ScopeCreated(Ok(ScopeMade::Live(scope)))) => {
                let prefix = match self.scopes.get(&parent) {
                    Some((_, p)) if !p.is_empty() => format!("{p}.{name}"),
                    _ => name,
                };
                self.scopes.insert(*scope, (Some(parent), prefix));
            }
            (Then::DisposeScope(scope), _)
                if scope != ScopeId::ROOT && self.scopes.contains_key(&scope) =>
            {
                let doomed: Vec<ToolKey> = self
                    .tools
                    .iter()
                    .filter(|(_, t)| self.is_within(t.scope, scope))
                    .map(|(k, _)| *k)
                    .collect();
                for key in doomed {
                    self.tools.remove(&key);
                    self.gone_keys.push(key);
                }
            }
            (Then::Attach(options), Reply::Bridge(bridge)) => self.attached(*bridge, options)?,
            (Then::Detach(bridge), _) => {
                if let Some(model) = self.bridges.remove(&bridge) {
                    self.detached.push(bridge);
                    self.closing = Some(bridge);
                    // (The core says which are still running: a run's
                    // stage is not the spec's to model.)
                    self.orphans
                        .extend(model.owed.into_iter().filter(|id| tm.is_call_in_flight(id)));
                }
            }
            (Then::Issued(kind), Reply::Handle(handle)) => self.issued(*handle, kind)?,
            // Its run goes on with no restorer: the core must never
            // restore or drop one for it.
            (Then::NoRestorer(run), Reply::GoesOn(true)) => {
                self.restorers.remove(&run);
            }
            _ => {}
        }
        Ok(reply)
    }

    /// What the model knows of a tool `def` registers in `scope`.
    fn tool_info(&self, scope: ScopeId, def: &ToolDef) -> Result<ToolInfo, String> {
        let (schema, external) = match &def.input_schema {
            Some(SchemaSpec::Json(v)) => (CompiledSchema::compile(v).ok(), false),
            Some(SchemaSpec::External { .. }) => (None, true),
            // Refused at registration (registry.rs's own tests): not generated.
            Some(SchemaSpec::NotJson) => {
                return Err(String::from("the model has no schema JSON cannot write"))
            }
            None => (None, false),
        };
        Ok(ToolInfo {
            name: match self.scopes.get(&scope) {
                Some((_, prefix)) if !prefix.is_empty() => format!("{prefix}.{}", def.name),
                _ => def.name.clone(),
            },
            scope,
            hints: def.hints.clone(),
            schema,
            external,
            external_output: matches!(def.output_schema, Some(SchemaSpec::External { .. })),
            has_summary: def.has_summary,
            has_changes: def.has_changes,
            has_state: def.has_state,
            has_snapshot: def.has_snapshot,
        })
    }

    /// A bridge attached outside [`SpecModel::apply`] (a harness that
    /// attaches its first bridge itself).
    pub fn attached(&mut self, bridge: BridgeId, options: BridgeOptions) -> Result<(), String> {
        ensure!(
            !self.bridges.contains_key(&bridge) && !self.detached.contains(&bridge),
            "bridge id {bridge:?} reused"
        );
        self.bridges.insert(
            bridge,
            BridgeOwed {
                max_message_bytes: options.max_message_bytes,
                owed: HashSet::new(),
                last_rev: None,
            },
        );
        Ok(())
    }

    fn issued(&mut self, handle: Handle, kind: RequestKind) -> Result<(), String> {
        ensure!(
            self.handles.insert(handle, kind).is_none(),
            "handle {handle:?} issued twice"
        );
        Ok(())
    }

    fn is_within(&self, mut scope: ScopeId, ancestor: ScopeId) -> bool {
        loop {
            if scope == ancestor {
                return true;
            }
            match self.scopes.get(&scope).and_then(|(parent, _)| *parent) {
                Some(parent) => scope = parent,
                None => return false,
            }
        }
    }

    /// Works out what the page owes for inbound text, before the core gets
    /// it: the same steps the spec gives (bounded, parsed, filtered,
    /// checked); rules 1, 2 and 4 and the size limit.
    fn note_inbound(&mut self, bridge: BridgeId, text: &str) {
        let Some(max_message_bytes) = self.bridges.get(&bridge).map(|m| m.max_message_bytes) else {
            return;
        };
        let owed = match parse_json(text, max_message_bytes) {
            Err(_) => None,
            Ok(value) if peek_client_id(&value).is_some_and(|id| id != self.client_id) => None,
            Ok(value) => match check_agent_to_page(value) {
                Ok(AgentToPage::Call(call)) => Some(call.id),
                Ok(AgentToPage::Describe(describe)) => Some(describe.id),
                Ok(AgentToPage::Cancel(_)) => None,
                Err(Rejection::UnsupportedProtocol {
                    id: Some(id),
                    client_id: Some(client_id),
                    // Rule 4, but an empty id cannot be answered in a valid `result`.
                }) if client_id == self.client_id && !id.is_empty() => Some(id),
                Err(_) => None,
            },
        };
        let duplicate = |id: &String| {
            self.recent.contains(id)
                || self.orphans.contains(id)
                || self.bridges.values().any(|m| m.owed.contains(id))
        };
        if let Some(id) = owed.filter(|id| !duplicate(id)) {
            if let Some(model) = self.bridges.get_mut(&bridge) {
                model.owed.insert(id);
            }
        }
    }

    /// (The fuzz driver's floods only; the proptest checks each in full.)
    #[allow(dead_code)]
    /// A describe whose result only its id is checked for (a flood's fast
    /// path: same shape as the previous, fully checked one). The caller
    /// knows it fits and is owed; every other output is checked in full.
    pub fn apply_light_describe(
        &mut self,
        tm: &mut Toolmark,
        bridge: BridgeId,
        id: &str,
        text: &str,
        now: u64,
    ) -> Result<Drained, String> {
        if let Some(model) = self.bridges.get_mut(&bridge) {
            model.owed.insert(id.to_owned());
        }
        tm.handle_inbound(bridge, text, now);
        let prefix = format!(
            r#"{{"type":"result","protocol":1,"clientId":"{}","id":"{id}","#,
            self.client_id
        );
        self.drain_expecting(tm, Some((bridge, id, &prefix)))
    }

    /// Drains every output in the documented order and checks each one,
    /// then the bounds.
    pub fn drain(&mut self, tm: &mut Toolmark) -> Result<Drained, String> {
        self.drain_expecting(tm, None)
    }

    /// As [`SpecModel::drain`]; with `light`, the result on that bridge
    /// starting with that prefix is only checked for its id.
    fn drain_expecting(
        &mut self,
        tm: &mut Toolmark,
        light: Option<(BridgeId, &str, &str)>,
    ) -> Result<Drained, String> {
        let mut drained = Drained::default();
        // A detached bridge's call that settled: answered on no bridge,
        // remembered (settled before anything it let start was answered).
        let (settled, running): (Vec<String>, Vec<String>) = core::mem::take(&mut self.orphans)
            .into_iter()
            .partition(|id| !tm.is_call_in_flight(id));
        self.orphans = running;
        for id in settled {
            self.recent.remember(&id);
        }
        loop {
            match tm.poll_output() {
                Output::Transmit(transmit) => {
                    match light {
                        Some((bridge, id, prefix))
                            if transmit.bridge == bridge && transmit.text.starts_with(prefix) =>
                        {
                            self.note_result(bridge, id, &transmit.text)?;
                        }
                        _ => self.check_transmit(tm, transmit.bridge, &transmit.text)?,
                    }
                    drained.transmits.push(transmit);
                }
                Output::Event(event) => {
                    self.check_event(tm, &event)?;
                    drained.events.push(event);
                }
                Output::Action(action) => {
                    self.check_action(&action)?;
                    drained.actions.push(action);
                }
                Output::Timeout(deadline) => {
                    drained.deadline = deadline;
                    break;
                }
            }
        }
        if let Some(bridge) = self.closing.take() {
            return Err(format!(
                "{bridge:?} was detached and its transport not closed"
            ));
        }
        ensure!(
            tm.max_pending_per_scope() <= MAX_PENDING_PER_SCOPE,
            "{} pending calls on one scope",
            tm.max_pending_per_scope()
        );
        ensure!(
            tm.pending_confirmation_count() <= MAX_PENDING_CONFIRMATIONS,
            "{} pending confirmations",
            tm.pending_confirmation_count()
        );
        ensure!(
            tm.answered_ids() <= ANSWERED_ID_MEMORY,
            "{} answered ids remembered",
            tm.answered_ids()
        );
        ensure!(
            tm.answered_ids() == self.recent.len(),
            "the core remembers {} answered ids, the spec {}",
            tm.answered_ids(),
            self.recent.len()
        );
        Ok(drained)
    }

    /// Once every piece of work is answered and every deadline passed: the
    /// core must owe nothing.
    pub fn settled(&self, tm: &Toolmark) -> Result<(), String> {
        ensure!(
            tm.calls_in_flight() == 0,
            "{} calls left after settling",
            tm.calls_in_flight()
        );
        ensure!(
            self.orphans.is_empty(),
            "detached calls never settled: {:?}",
            self.orphans
        );
        ensure!(
            self.validated_values.is_empty(),
            "validated values JS keeps for nothing: {:?}",
            self.validated_values
        );
        ensure!(tm.max_pending_per_scope() == 0, "lanes left busy");
        ensure!(
            tm.pending_confirmation_count() == 0,
            "{} confirmations left",
            tm.pending_confirmation_count()
        );
        for handle in self.handles.keys() {
            ensure!(
                self.completed.contains(handle),
                "page request {handle:?} ({:?}) never completed",
                self.handles.get(handle)
            );
        }
        for (bridge, model) in &self.bridges {
            ensure!(
                model.owed.is_empty(),
                "bridge {bridge:?} never answered {:?}",
                model.owed
            );
        }
        for (confirm_id, bridge) in &self.needs {
            if self.bridges.contains_key(bridge) {
                ensure!(
                    self.confirmed.contains(&(confirm_id.clone(), *bridge)),
                    "confirmation {confirm_id} of attached bridge {bridge:?} never confirmed"
                );
            }
        }
        Ok(())
    }

    /// One sent text: see the module's rules for transmits.
    pub fn check_transmit(
        &mut self,
        tm: &Toolmark,
        bridge: BridgeId,
        text: &str,
    ) -> Result<(), String> {
        let value = sent_message(text, &self.client_id)?;
        let current_rev = tm.rev();
        ensure!(
            self.bridges.contains_key(&bridge),
            "message for a bridge that is not attached ({bridge:?}): {text}"
        );
        match value["type"].as_str() {
            Some("manifest") | Some("changed") => {
                let Some(model) = self.bridges.get_mut(&bridge) else {
                    return Ok(());
                };
                let rev = value["rev"].as_u64().unwrap_or(u64::MAX);
                ensure!(rev <= current_rev, "rev {rev} ahead of {current_rev}");
                ensure!(
                    model.last_rev.is_none_or(|last| rev >= last),
                    "rev went back on {bridge:?}: {text}"
                );
                model.last_rev = Some(rev);
                if let Some(tools) = value["tools"].as_array() {
                    let names: Vec<&str> =
                        tools.iter().filter_map(|t| t["name"].as_str()).collect();
                    ensure!(
                        names.windows(2).all(|w| w.first() < w.get(1)),
                        "manifest not sorted by name: {names:?}"
                    );
                    if rev == current_rev {
                        for name in names {
                            ensure!(
                                self.tools.values().any(|t| t.name == name),
                                "manifest lists unregistered tool {name}"
                            );
                        }
                    }
                }
            }
            Some("result") => {
                let id = value["id"].as_str().unwrap_or_default().to_owned();
                self.note_result(bridge, &id, text)?;
                if value["result"]["status"] == "needs_confirmation" {
                    let confirm_id = value["result"]["confirmId"]
                        .as_str()
                        .unwrap_or_default()
                        .to_owned();
                    ensure!(
                        self.needs.insert(confirm_id.clone(), bridge).is_none(),
                        "confirmId {confirm_id} handed out twice"
                    );
                    self.confirm_ids.push(confirm_id);
                }
            }
            Some("confirmed") => {
                let confirm_id = value["confirmId"].as_str().unwrap_or_default().to_owned();
                let requester = self.needs.get(&confirm_id).copied();
                ensure!(
                    requester.is_some(),
                    "confirmed {confirm_id} without an earlier needs_confirmation result: {text}"
                );
                // On the requesting bridge, or (gone) on the bridges attached now.
                ensure!(
                    requester == Some(bridge)
                        || requester.is_some_and(|r| !self.bridges.contains_key(&r)),
                    "confirmed {confirm_id} on {bridge:?}, not its requesting bridge {requester:?}: {text}"
                );
                ensure!(
                    self.confirmed.insert((confirm_id.clone(), bridge)),
                    "second confirmed for {confirm_id} on {bridge:?}: {text}"
                );
                ensure!(
                    value["result"]["status"] != "needs_confirmation",
                    "an approval asked for confirmation again: {text}"
                );
            }
            other => return Err(format!("unexpected message type {other:?}: {text}")),
        }
        Ok(())
    }

    /// A `result` for `id` went out on `bridge`: it must be owed, and not
    /// among the page's last 1000 results (on any bridge).
    fn note_result(&mut self, bridge: BridgeId, id: &str, text: &str) -> Result<(), String> {
        let Some(model) = self.bridges.get_mut(&bridge) else {
            return Err(format!(
                "result for a bridge that is not attached ({bridge:?}): {text}"
            ));
        };
        ensure!(
            !self.recent.contains(id),
            "second result for id {id:?} within the page's last {ANSWERED_ID_MEMORY}: {text}"
        );
        ensure!(
            model.owed.remove(id),
            "result for id {id:?} that {bridge:?} is not owed: {text}"
        );
        self.recent.remember(id);
        Ok(())
    }

    fn check_event(&mut self, tm: &Toolmark, event: &Event) -> Result<(), String> {
        match event {
            Event::Completed { handle, result } => {
                let kind = self.handles.get(handle).copied();
                ensure!(kind.is_some(), "completion of unknown handle {handle:?}");
                ensure!(
                    self.completed.insert(*handle),
                    "page request {handle:?} completed twice"
                );
                if kind == Some(RequestKind::AbortedCall) {
                    ensure!(
                        *result
                            == ToolResult::Cancelled {
                                by: CancelledBy::Signal
                            },
                        "a page call whose signal had aborted answered {result:?}"
                    );
                }
                if let ToolResult::NeedsConfirmation { confirm_id, .. } = result {
                    ensure!(
                        kind == Some(RequestKind::Call),
                        "needs_confirmation for a {kind:?} request"
                    );
                    ensure!(
                        !self.needs.contains_key(confirm_id)
                            && !self.confirm_ids.contains(confirm_id),
                        "confirmId {confirm_id} handed out twice"
                    );
                    self.confirm_ids.push(confirm_id.clone());
                }
            }
            Event::RevChanged { rev } => {
                ensure!(*rev <= tm.rev(), "RevChanged {rev} ahead");
            }
            // A transport's state is told for an attached bridge only
            // (the sequences themselves: tests/machine_rules/).
            Event::Status { bridge, .. } => {
                ensure!(
                    self.bridges.contains_key(bridge),
                    "a transport state for {bridge:?}, which is not attached"
                );
            }
            Event::Error { .. } | Event::PendingChanged => {}
        }
        Ok(())
    }

    fn fresh_run(&mut self, run: RunId) -> Result<(), String> {
        ensure!(self.runs_seen.insert(run.0), "run id {run:?} reused");
        self.run_list.push(run);
        Ok(())
    }

    fn check_action(&mut self, action: &Action) -> Result<(), String> {
        match action {
            Action::Run(RunOrder {
                run,
                tool,
                name,
                input,
                caller,
                call_id,
                snapshot,
                check_output,
                validated,
            }) => {
                self.fresh_run(*run)?;
                if let Some(value) = validated {
                    ensure!(
                        self.validated_values.remove(value),
                        "run {run:?} uses the value of validation {value:?}, which JS does not keep"
                    );
                }
                let Some(info) = self.tools.get(tool) else {
                    return Err(format!("run of unregistered tool {tool:?} ({name})"));
                };
                ensure!(
                    info.name == *name,
                    "run names the wrong tool: {name} for {}",
                    info.name
                );
                ensure!(*snapshot == info.has_snapshot, "snapshot flag of {name}");
                ensure!(
                    *check_output == (self.dev && info.external_output),
                    "output check flag of {name} (dev {})",
                    self.dev
                );
                if *caller == Caller::Inapp {
                    let decision = self.policy.decide(Caller::Inapp, &info.hints);
                    ensure!(
                        decision == Decision::Allow,
                        "ran {name} for the agent against policy ({decision:?})"
                    );
                }
                let value: Value = serde_json::from_str(input)
                    .map_err(|e| format!("run input is not JSON ({e}): {input}"))?;
                if let Some(schema) = &info.schema {
                    let issues = schema.validate(&value, self.patterns.as_ref());
                    ensure!(
                        issues.is_empty(),
                        "ran {name} with input its schema rejects: {input} {issues:?}"
                    );
                }
                if *snapshot {
                    self.restorers.insert(*run);
                }
                self.call_ids.push(call_id.clone());
            }
            Action::Validate { run, tool, input } => {
                self.fresh_run(*run)?;
                let info = self.tools.get(tool);
                ensure!(
                    info.is_some_and(|t| t.external),
                    "validation for a tool without a Standard Schema: {tool:?}"
                );
                ensure!(
                    serde_json::from_str::<Value>(input).is_ok(),
                    "validation input is not JSON: {input}"
                );
                self.validations.insert(*run);
            }
            Action::Prepare(PrepareOrder {
                run,
                tool,
                input,
                summary,
                changes,
                state,
                validated,
            }) => {
                self.fresh_run(*run)?;
                if let Some(value) = validated {
                    ensure!(
                        self.validated_values.contains(value),
                        "prepare {run:?} uses the value of validation {value:?}, which JS does not keep"
                    );
                }
                let Some(info) = self.tools.get(tool) else {
                    return Err(format!("prepare for unregistered tool {tool:?}"));
                };
                ensure!(
                    (*summary, *changes, *state)
                        == (info.has_summary, info.has_changes, info.has_state),
                    "prepare of {} asks for (summary, changes, state) {:?}, the tool has {:?}",
                    info.name,
                    (summary, changes, state),
                    (info.has_summary, info.has_changes, info.has_state)
                );
                ensure!(
                    serde_json::from_str::<Value>(input).is_ok(),
                    "prepare input is not JSON: {input}"
                );
            }
            Action::ReadState { run, tool, input } => {
                self.fresh_run(*run)?;
                ensure!(
                    self.tools.get(tool).is_some_and(|t| t.has_state),
                    "form state read for {tool:?}"
                );
                ensure!(
                    serde_json::from_str::<Value>(input).is_ok(),
                    "form state input is not JSON: {input}"
                );
            }
            Action::Restore { run, restorer } => {
                self.fresh_run(*run)?;
                ensure!(
                    self.restorers.remove(restorer),
                    "restore of {restorer:?}'s restorer: no snapshot, or already restored or dropped"
                );
            }
            Action::Abort { run } => {
                ensure!(self.runs_seen.contains(&run.0), "abort of unknown {run:?}");
            }
            Action::DropRestorer { run } => {
                ensure!(
                    self.restorers.remove(run),
                    "drop of {run:?}'s restorer: no snapshot, or already restored or dropped"
                );
            }
            Action::ForgetValidated { run } => {
                ensure!(
                    self.validated_values.remove(run),
                    "forget of validation {run:?}'s value, which JS does not keep"
                );
            }
            Action::Close { bridge } => {
                ensure!(
                    !self.bridges.contains_key(bridge),
                    "close of attached bridge {bridge:?}"
                );
                ensure!(
                    self.closing.take() == Some(*bridge),
                    "close of {bridge:?}, which this input did not detach (detaching one \
                     that is detached already changes nothing)"
                );
            }
        }
        Ok(())
    }
}
