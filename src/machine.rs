//! The bridge core: a sans-IO state machine (in the style of quinn-proto and
//! str0m) for the registry, calls, scopes and deferred confirmations.
//!
//! # Inputs
//! Method calls that carry the current time in ms where time matters:
//! registry commands ([`Toolmark::register`], [`Toolmark::unregister`],
//! [`Toolmark::create_scope`], [`Toolmark::dispose_scope`]), bridges
//! ([`Toolmark::attach`], [`Toolmark::detach`], [`Toolmark::handle_inbound`]
//! with the inbound message text), page calls ([`Toolmark::call`],
//! [`Toolmark::abort`], [`Toolmark::confirm`], [`Toolmark::undo`]), what JS
//! reports back about the work it was asked to do
//! ([`Toolmark::handle_outcome`], [`Toolmark::handle_validated`],
//! [`Toolmark::handle_prepared`], [`Toolmark::handle_state`],
//! [`Toolmark::handle_restored`]) and [`Toolmark::handle_timeout`].
//!
//! # Outputs, and the drain order
//! After any input, drain in this order, each until it returns `None`:
//! 1. [`Toolmark::poll_transmit`]: outbound message text, per bridge, in
//!    send order (a `result` carrying `needs_confirmation` always comes out
//!    before that confirmation's `confirmed`);
//! 2. [`Toolmark::poll_event`]: error events, completions of page calls,
//!    changes of the pending-confirmation list;
//! 3. [`Toolmark::poll_action`]: work for JS: runs to start, validations,
//!    summaries and form state to read, runs to abort, restorers to run or
//!    drop, transports to close;
//! 4. [`Toolmark::poll_timeout`]: the next deadline; call
//!    [`Toolmark::handle_timeout`] when it is reached.
//!
//! Messages go out first so that nothing a page callback does in reaction
//! to an event can overtake them. The machine reads no clock, does no IO and
//! takes its randomness from the injected [`RandomSource`].

use crate::prelude::*;
use serde::Serialize;
use serde_json::Value;

use crate::confirmations::{
    AnsweredIds, Confirmation, Confirmations, Requester, UndoStore, ANSWERED_ID_MEMORY,
    DEFAULT_CONFIRM_EXPIRY_MS,
};
use crate::ids::{new_id, RandomSource};
use crate::policy::{Caller, ConfigIssue, ConfirmMode, Decision, Policy};
use crate::protocol::codes::{error_message, refused_message};
use crate::protocol::{
    check_agent_to_page, parse_json, parse_value, peek_client_id, AgentToPage, CancelledBy,
    Changed, Confirmed, ErrorEventCode, FieldChange, Issue, Manifest, PageToAgent, ProtocolV1,
    RefusedCode, Rejection, ResultMessage, ToolManifestSummary, ToolResult,
    DEFAULT_MAX_MESSAGE_BYTES,
};
use crate::registry::{Registry, RegistryError, ScopeId, Tool, ToolDef, ToolKey, Validator};
use crate::scheduling::{CallKey, MAX_PENDING_PER_SCOPE};
use crate::schema::PatternMatcher;
use crate::vecmap::Queue;

/// Default time a tool gets to settle after its call is aborted.
pub const DEFAULT_ABORT_GRACE_MS: u64 = 3_000;
/// Default tool budget (visible tools; dev-mode warning only).
pub const DEFAULT_TOOL_BUDGET: usize = 40;
/// Abandoned runs remembered to report `late_result`.
const ABANDONED_MEMORY: usize = 1000;
/// What FieldChange values of sensitive paths become.
pub const REDACTED: &str = "[redacted]";

/// Options of `createToolmark`.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// Misconfiguration is an `Err` (thrown as `ToolmarkError`) instead of an event.
    pub dev: bool,
    pub tool_budget: usize,
    pub confirm_expiry_ms: u64,
    pub abort_grace_ms: u64,
    /// The `policy` option as JSON (`null` when absent).
    pub policy: Value,
    /// The `confirmMode` option as JSON (`null` when absent).
    pub confirm_mode: Value,
    /// The page gave an inline confirmation handler (for `ctx.confirm` by a human).
    pub inline_confirm: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            dev: false,
            tool_budget: DEFAULT_TOOL_BUDGET,
            confirm_expiry_ms: DEFAULT_CONFIRM_EXPIRY_MS,
            abort_grace_ms: DEFAULT_ABORT_GRACE_MS,
            policy: Value::Null,
            confirm_mode: Value::Null,
            inline_confirm: false,
        }
    }
}

/// `onChange` of a bridge.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum OnChange {
    Manifest,
    Changed,
}

/// Options of `bridge(...)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BridgeOptions {
    pub on_change: OnChange,
    pub max_message_bytes: usize,
}

impl Default for BridgeOptions {
    fn default() -> Self {
        BridgeOptions {
            on_change: OnChange::Manifest,
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
        }
    }
}

/// An attached bridge (one transport).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct BridgeId(pub u32);

/// One piece of work handed to JS; its answer names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct RunId(pub u64);

/// A page-side request (`tm.call`, `tm.confirmPending`, `tm.undo`), completed
/// by [`Event::Completed`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct Handle(pub u64);

/// How a tool run settled, as JS saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Returned a value: its JSON text (`JSON.stringify`), `None` for `undefined`.
    Ok(Option<String>),
    /// Threw or rejected (the detail goes to the `tool_threw` event only).
    Threw(String),
    /// Returned something JSON cannot carry.
    NotSerializable(String),
    /// Rejected because its signal was aborted.
    Aborted,
}

/// What JS's validation of a Standard Schema input said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Validated {
    /// Valid; `Some` carries the JSON text of the (possibly transformed) value.
    Valid(Option<String>),
    Invalid(Vec<Issue>),
    Threw(String),
}

/// What a tool's `summary` / `changes` / form state gave for a confirmation.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Prepared {
    pub summary: Option<String>,
    pub changes: Option<Vec<FieldChange>>,
    pub state: Option<String>,
}

/// Work for JS. As JSON (the glue's): `{kind, …}`, the fields camelCase.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(
    tag = "kind",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum Action {
    /// Call the tool's `run(input, ctx)`; take its `snapshot(input)` first
    /// when asked, and keep the restorer under `run` (`call_id` is
    /// `ctx.callId`: runs can share it, see [`UndoStore`]). With
    /// `validated`, the input is the value JS kept from that validation run
    /// (a Standard Schema's live value, e.g. a `Date`), used and forgotten;
    /// `input` is its JSON copy.
    Run {
        run: RunId,
        tool: ToolKey,
        name: String,
        input: String,
        caller: Caller,
        call_id: String,
        snapshot: bool,
        #[serde(skip_serializing_if = "Option::is_none")]
        validated: Option<RunId>,
    },
    /// Validate the input with the tool's Standard Schema; answer with
    /// [`Toolmark::handle_validated`].
    Validate {
        run: RunId,
        tool: ToolKey,
        input: String,
    },
    /// Compute what a confirmation shows; answer with [`Toolmark::handle_prepared`].
    /// `validated` as in [`Action::Run`], but the value stays kept.
    Prepare {
        run: RunId,
        tool: ToolKey,
        input: String,
        summary: bool,
        changes: bool,
        state: bool,
        #[serde(skip_serializing_if = "Option::is_none")]
        validated: Option<RunId>,
    },
    /// Read the form state again at approval; answer with [`Toolmark::handle_state`].
    ReadState {
        run: RunId,
        tool: ToolKey,
        input: String,
    },
    /// Abort the run's `AbortSignal`.
    Abort { run: RunId },
    /// Run the restorer kept for run `restorer`; answer with
    /// [`Toolmark::handle_restored`] for `run`.
    Restore { run: RunId, restorer: RunId },
    /// Forget the restorer kept for that run.
    DropRestorer { run: RunId },
    /// Forget the value kept from that validation run: no run will use it.
    /// (Every `Validated::Valid(Some(_))` answer is followed by exactly one
    /// `Run` naming it or one of these.)
    ForgetValidated { run: RunId },
    /// Close the bridge's transport.
    Close { bridge: BridgeId },
}

/// Something the page should hear about. As JSON (the glue's): `{kind, …}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum Event {
    /// A page-side error event (spec codes).
    Error {
        code: ErrorEventCode,
        message: String,
        tool: Option<String>,
    },
    /// A page request finished.
    Completed { handle: Handle, result: ToolResult },
    /// The pending-confirmation list changed.
    #[serde(rename = "pending")]
    PendingChanged,
    /// The registry revision changed.
    #[serde(rename = "rev")]
    RevChanged { rev: u64 },
}

/// A message to send on a bridge's transport.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transmit {
    pub bridge: BridgeId,
    pub text: String,
}

/// A pending confirmation as the page shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PendingView {
    pub confirm_id: String,
    pub tool: String,
    pub summary: String,
    pub expires_at: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub changes: Option<Vec<FieldChange>>,
}

/// A misconfiguration, as thrown in dev mode.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ToolmarkError {
    pub code: ErrorEventCode,
    pub message: String,
}

impl From<RegistryError> for ToolmarkError {
    fn from(e: RegistryError) -> Self {
        ToolmarkError {
            code: e.code,
            message: e.message,
        }
    }
}

impl From<ConfigIssue> for ToolmarkError {
    fn from(e: ConfigIssue) -> Self {
        ToolmarkError {
            code: e.code,
            message: e.message,
        }
    }
}

impl core::fmt::Display for ToolmarkError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl core::error::Error for ToolmarkError {}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Origin {
    /// A `call` from a bridge, answered by a `result` with the call's
    /// `call_id` (a bridge call's id is its call id).
    Bridge(BridgeId),
    /// A page request.
    Local(Handle),
}

#[derive(Debug, Clone)]
struct Approval {
    confirm_id: String,
    requester: Requester,
    state: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// Waiting in its scope's lane.
    Queued,
    /// Started (the lane's active call), nothing asked of JS right now.
    Active,
    Validating(RunId),
    Preparing(RunId),
    ReadingState(RunId),
    Running(RunId),
    Aborting {
        run: RunId,
        deadline: u64,
    },
}

impl Stage {
    fn run(self) -> Option<RunId> {
        match self {
            Stage::Queued | Stage::Active => None,
            Stage::Validating(run)
            | Stage::Preparing(run)
            | Stage::ReadingState(run)
            | Stage::Running(run)
            | Stage::Aborting { run, .. } => Some(run),
        }
    }
}

#[derive(Debug, Clone)]
struct Call {
    key: CallKey,
    origin: Origin,
    tool: ToolKey,
    tool_name: String,
    scope: ScopeId,
    caller: Caller,
    call_id: String,
    input: Value,
    rev: Option<u64>,
    stage: Stage,
    approval: Option<Approval>,
    /// Its run took a snapshot (decided at start: the tool may be gone by the end).
    snapshot: bool,
    /// The validation run whose value JS keeps for this call's run.
    validated: Option<RunId>,
}

/// Items found by a key, in the order they were added. Keys only grow, so
/// that is key order and a new item goes at the end.
#[derive(Debug)]
struct KeyedList<T> {
    list: Vec<T>,
}

impl<T> Default for KeyedList<T> {
    fn default() -> Self {
        KeyedList { list: Vec::new() }
    }
}

trait Keyed {
    type Key: PartialEq;
    fn key(&self) -> Self::Key;
}

impl<T: Keyed> KeyedList<T> {
    fn index(&self, key: T::Key) -> Option<usize> {
        for (index, item) in self.list.iter().enumerate() {
            if item.key() == key {
                return Some(index);
            }
        }
        None
    }

    fn contains(&self, key: T::Key) -> bool {
        self.index(key).is_some()
    }

    fn get(&self, key: T::Key) -> Option<&T> {
        self.list.get(self.index(key)?)
    }

    fn get_mut(&mut self, key: T::Key) -> Option<&mut T> {
        let index = self.index(key)?;
        self.list.get_mut(index)
    }

    /// Takes an item out, keeping the rest in key order.
    fn remove(&mut self, key: T::Key) -> Option<T> {
        let index = self.index(key)?;
        (index < self.list.len()).then(|| self.list.remove(index))
    }
}

/// The calls being handled, in key order, which is arrival order: a scope's
/// lane is its calls in this order (see [`Toolmark::pump`]).
type Calls = KeyedList<Call>;

impl Keyed for Call {
    type Key = CallKey;
    fn key(&self) -> CallKey {
        self.key
    }
}

#[derive(Debug)]
struct BridgeState {
    id: BridgeId,
    options: BridgeOptions,
}

/// The attached bridges in id order, so they are told of a new revision in
/// that order without a sort.
type Bridges = KeyedList<BridgeState>;

impl Keyed for BridgeState {
    type Key = BridgeId;
    fn key(&self) -> BridgeId {
        self.id
    }
}

/// A restorer running for `tm.undo`.
#[derive(Debug)]
struct Restore {
    run: RunId,
    handle: Handle,
    call_id: String,
}

/// The page's Toolmark core. See the module docs for inputs, outputs and
/// the drain order.
pub struct Toolmark {
    config: Config,
    policy: Policy,
    rng: Box<dyn RandomSource>,
    matcher: Box<dyn PatternMatcher>,
    client_id: String,
    registry: Registry,
    bridges: Bridges,
    calls: Calls,
    restores: Vec<Restore>,
    abandoned: Queue<(RunId, String)>,
    confirmations: Confirmations,
    /// Rule 2's answered-id memory: the page's, shared by all its bridges.
    answered: AnsweredIds,
    undo: UndoStore,
    budget_warned_rev: Option<u64>,
    next_bridge: u32,
    next_call: u64,
    next_run: u64,
    next_handle: u64,
    transmits: Queue<Transmit>,
    events: Queue<Event>,
    actions: Queue<Action>,
}

impl core::fmt::Debug for Toolmark {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Toolmark")
            .field("client_id", &self.client_id)
            .field("rev", &self.registry.rev())
            .field("tools", &self.registry.len())
            .field("calls", &self.calls.list.len())
            .field("pending_confirmations", &self.confirmations.len())
            .finish_non_exhaustive()
    }
}

fn error_result(message: &str) -> ToolResult {
    ToolResult::Error {
        message: message.to_owned(),
    }
}

/// Why a tool's calls by the agent cannot be confirmed (`missing_confirm_handler`).
fn no_confirmation_path(tool: &str) -> String {
    format!(
        "tool '{tool}' needs a human's confirmation for caller inapp, and confirmMode.inapp is 'none'"
    )
}

/// A FieldChange path is sensitive when it is a declared path or below one.
fn is_sensitive(path: &str, sensitive: &[String]) -> bool {
    sensitive.iter().any(|s| {
        path == s
            || path
                .strip_prefix(s.as_str())
                .is_some_and(|rest| rest.starts_with('.'))
    })
}

fn redact(mut changes: Vec<FieldChange>, sensitive: &[String]) -> Vec<FieldChange> {
    for change in &mut changes {
        if is_sensitive(&change.path, sensitive) {
            let hide = |v: &mut Option<Value>| {
                if v.is_some() {
                    *v = Some(Value::String(REDACTED.into()));
                }
            };
            hide(&mut change.before);
            hide(&mut change.after);
        }
    }
    changes
}

impl Toolmark {
    /// A refusal at the current revision.
    fn refused(&self, code: RefusedCode, message: &str) -> ToolResult {
        ToolResult::refused(code, message, self.registry.rev())
    }

    /// Creates the core and mints the page's `clientId`. Bad `policy` or
    /// `confirmMode` entries are `Err` in dev mode, else error events.
    pub fn new(
        config: Config,
        mut rng: Box<dyn RandomSource>,
        matcher: Box<dyn PatternMatcher>,
    ) -> Result<Toolmark, ToolmarkError> {
        let (policy, issues) = Policy::from_options(&config.policy, &config.confirm_mode);
        if config.dev {
            if let Some(issue) = issues.first() {
                return Err(issue.clone().into());
            }
        }
        let client_id = new_id(rng.as_mut()).map_err(|e| ToolmarkError {
            code: ErrorEventCode::TransportFailed,
            message: e.message(),
        })?;
        let mut machine = Toolmark {
            config,
            policy,
            rng,
            matcher,
            client_id,
            registry: Registry::new(),
            bridges: Bridges::default(),
            calls: Calls::default(),
            restores: Vec::new(),
            abandoned: Queue::new(),
            confirmations: Confirmations::default(),
            answered: AnsweredIds::new(ANSWERED_ID_MEMORY),
            undo: UndoStore::default(),
            budget_warned_rev: None,
            next_bridge: 0,
            next_call: 0,
            next_run: 0,
            next_handle: 0,
            transmits: Queue::new(),
            events: Queue::new(),
            actions: Queue::new(),
        };
        for issue in issues {
            machine.error_event(issue.code, issue.message, None);
        }
        Ok(machine)
    }

    // ----- queries -------------------------------------------------------

    /// This page load's id: every agent → page message must carry it.
    pub fn client_id(&self) -> &str {
        &self.client_id
    }

    pub fn rev(&self) -> u64 {
        self.registry.rev()
    }

    /// The manifest entries visible to `caller`, sorted by name.
    pub fn manifest(&self, caller: Caller) -> Vec<ToolManifestSummary> {
        let mut entries = Vec::new();
        for tool in self.registry.tools() {
            if self.policy.visible(caller, &tool.def.hints) {
                entries.push(tool.summary());
            }
        }
        entries
    }

    /// The pending deferred confirmations, oldest first.
    pub fn pending_confirmations(&self) -> Vec<PendingView> {
        let mut views = Vec::new();
        for c in self.confirmations.iter() {
            views.push(PendingView {
                confirm_id: c.confirm_id.clone(),
                tool: c.tool_name.clone(),
                summary: c.summary.clone(),
                expires_at: c.expires_at,
                changes: c.changes.clone(),
            });
        }
        views
    }

    /// Calls the machine is handling (queued, or with JS), for bounds checks.
    pub fn calls_in_flight(&self) -> usize {
        self.calls.list.len()
    }

    /// The most pending calls on any one scope.
    pub fn max_pending_per_scope(&self) -> usize {
        let mut max = 0;
        for call in &self.calls.list {
            max = max.max(self.pending(call.scope));
        }
        max
    }

    /// Pending calls on the scope of the named tool (`None` for no such tool).
    pub fn scope_pending(&self, tool: &str) -> Option<usize> {
        self.registry.by_name(tool).map(|t| self.pending(t.scope))
    }

    /// Pending calls on a scope: queued plus active (rule 5's count).
    fn pending(&self, scope: ScopeId) -> usize {
        let mut count = 0;
        for call in &self.calls.list {
            if call.scope == scope {
                count += 1;
            }
        }
        count
    }

    pub fn pending_confirmation_count(&self) -> usize {
        self.confirmations.len()
    }

    /// Answered ids the page remembers (at most 1000, for all its bridges).
    pub fn answered_ids(&self) -> usize {
        self.answered.len()
    }

    /// Bytes the answered-id memory holds, for bounds checks.
    pub fn answered_memory_bytes(&self) -> usize {
        self.answered.held_bytes()
    }

    // ----- outputs -------------------------------------------------------

    pub fn poll_transmit(&mut self) -> Option<Transmit> {
        self.transmits.pop_front()
    }

    pub fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }

    pub fn poll_action(&mut self) -> Option<Action> {
        self.actions.pop_front()
    }

    /// The next time [`Toolmark::handle_timeout`] must be called.
    pub fn poll_timeout(&self) -> Option<u64> {
        let mut next = self.confirmations.next_expiry();
        for call in &self.calls.list {
            if let Stage::Aborting { deadline, .. } = call.stage {
                next = Some(next.map_or(deadline, |n| n.min(deadline)));
            }
        }
        next
    }

    // ----- registry ------------------------------------------------------

    /// In dev mode an `Err` to throw; otherwise the problem becomes an
    /// event and `Ok(None)` says nothing happened.
    fn misconfigured<T>(
        &mut self,
        error: RegistryError,
        tool: Option<String>,
    ) -> Result<Option<T>, ToolmarkError> {
        if self.config.dev {
            Err(error.into())
        } else {
            self.error_event(error.code, error.message, tool);
            Ok(None)
        }
    }

    /// Registers a tool in a scope (`ScopeId::ROOT` for the registry itself).
    pub fn register(
        &mut self,
        scope: ScopeId,
        def: ToolDef,
        now: u64,
    ) -> Result<Option<ToolKey>, ToolmarkError> {
        let tool_name = def.name.clone();
        // (A tool to confirm is visible: only `hide` is not.)
        let needs_path = self.policy.decide(Caller::Inapp, &def.hints) == Decision::Confirm
            && self.policy.confirm_mode() == ConfirmMode::None;
        if self.config.dev && needs_path {
            return Err(ToolmarkError {
                code: ErrorEventCode::MissingConfirmHandler,
                message: no_confirmation_path(&tool_name),
            });
        }
        let (key, warnings) = match self.registry.register(scope, def, self.config.dev) {
            Ok(registered) => registered,
            Err(error) => return self.misconfigured(error, Some(tool_name)),
        };
        let full_name = self
            .registry
            .by_key(key)
            .map(|t| t.name.clone())
            .unwrap_or(tool_name);
        for warning in warnings {
            self.error_event(warning.code, warning.message, Some(full_name.clone()));
        }
        if needs_path {
            self.error_event(
                ErrorEventCode::MissingConfirmHandler,
                {
                    let mut message = no_confirmation_path(&full_name);
                    message.push_str(": its calls are refused not_allowed");
                    message
                },
                Some(full_name),
            );
        }
        self.revised(now);
        Ok(Some(key))
    }

    /// Unregisters a tool; unknown or already removed keys are ignored.
    pub fn unregister(&mut self, key: ToolKey, now: u64) {
        if self.registry.unregister(key) {
            self.revised(now);
        }
    }

    /// Creates a child scope.
    pub fn create_scope(
        &mut self,
        parent: ScopeId,
        name: &str,
    ) -> Result<Option<ScopeId>, ToolmarkError> {
        match self.registry.create_scope(parent, name) {
            Ok(scope) => Ok(Some(scope)),
            Err(error) => self.misconfigured(error, None),
        }
    }

    /// Disposes a scope and its descendants (one revision if tools went).
    pub fn dispose_scope(&mut self, scope: ScopeId, now: u64) -> Result<(), ToolmarkError> {
        match self.registry.dispose_scope(scope) {
            Ok(0) => Ok(()),
            Ok(_) => {
                self.revised(now);
                Ok(())
            }
            Err(error) => self.misconfigured(error, None).map(|_: Option<()>| ()),
        }
    }

    /// After every change of the tool set: tell the bridges, check the budget,
    /// and start what can start (queued calls may now find their tool gone).
    fn revised(&mut self, now: u64) {
        let rev = self.registry.rev();
        self.events.push_back(Event::RevChanged { rev });
        // In id order, as `bridges` is; sending changes no bridge.
        let mut index = 0;
        while let Some(state) = self.bridges.list.get(index) {
            let (bridge, on_change) = (state.id, state.options.on_change);
            index += 1;
            match on_change {
                OnChange::Manifest => self.send_manifest(bridge),
                OnChange::Changed => self.send(
                    bridge,
                    PageToAgent::Changed(Changed {
                        protocol: ProtocolV1,
                        client_id: self.client_id.clone(),
                        rev,
                    }),
                ),
            }
        }
        let visible = self.manifest(Caller::Inapp).len();
        if self.config.dev
            && visible > self.config.tool_budget
            && self.budget_warned_rev != Some(rev)
        {
            self.budget_warned_rev = Some(rev);
            self.error_event(
                ErrorEventCode::ToolBudgetExceeded,
                format!(
                    "{} tools are visible to the agent, over the budget of {}",
                    &(visible as u64).to_string(),
                    &(self.config.tool_budget as u64).to_string()
                ),
                None,
            );
        }
        self.pump(now);
    }

    // ----- bridges -------------------------------------------------------

    /// Attaches a bridge and sends its first manifest (possibly empty).
    pub fn attach(&mut self, options: BridgeOptions) -> BridgeId {
        let id = BridgeId(self.next_bridge);
        self.next_bridge = self.next_bridge.saturating_add(1);
        let state = BridgeState { id, options };
        // Only once the ids have run out (saturated) is the id taken: a
        // map's insert replaced that bridge's state, so this does too.
        match self.bridges.get_mut(id) {
            Some(slot) => *slot = state,
            None => self.bridges.list.push(state),
        }
        self.send_manifest(id);
        id
    }

    /// Detaches a bridge: its queued calls are dropped, its running calls
    /// aborted (their results are no longer sent), its transport closed.
    pub fn detach(&mut self, bridge: BridgeId, now: u64) {
        if self.bridges.remove(bridge).is_none() {
            return;
        }
        // Its calls go now, in key order: nobody is left to answer them. A
        // running one is aborted and its outcome ignored (not `late_result`);
        // only a run (running or aborting) has a restorer to drop.
        let mut index = 0;
        while let Some(call) = self.calls.list.get(index) {
            if call.origin != Origin::Bridge(bridge) {
                index += 1;
                continue;
            }
            let Some(call) = self.remove_call(call.key) else {
                break;
            };
            if let Stage::Running(run) = call.stage {
                self.actions.push_back(Action::Abort { run });
            }
            if let (true, Some(run)) = (call.snapshot, call.stage.run()) {
                self.actions.push_back(Action::DropRestorer { run });
            }
        }
        self.actions.push_back(Action::Close { bridge });
        self.pump(now);
    }

    fn send(&mut self, bridge: BridgeId, message: PageToAgent) {
        if self.bridges.contains(bridge) {
            self.transmits.push_back(Transmit {
                bridge,
                text: message.to_json(),
            });
        }
    }

    fn send_manifest(&mut self, bridge: BridgeId) {
        let message = PageToAgent::Manifest(Manifest {
            protocol: ProtocolV1,
            client_id: self.client_id.clone(),
            rev: self.registry.rev(),
            tools: self.manifest(Caller::Inapp),
        });
        self.send(bridge, message);
    }

    /// Rule 8: bounded, parsed, filtered by clientId, then validated.
    pub fn handle_inbound(&mut self, bridge: BridgeId, text: &str, now: u64) {
        let Some(state) = self.bridges.get(bridge) else {
            return;
        };
        let value = match parse_json(text, state.options.max_message_bytes) {
            Ok(value) => value,
            Err(rejection) => return self.invalid_message(&rejection),
        };
        if peek_client_id(&value).is_some_and(|id| id != self.client_id) {
            return; // Rule 1: another page's message, ignored silently.
        }
        match check_agent_to_page(&value) {
            Ok(AgentToPage::Call(call)) => {
                self.inbound_call(bridge, call.id, call.tool, call.input, call.rev, now)
            }
            Ok(AgentToPage::Describe(describe)) => {
                self.inbound_describe(bridge, describe.id, &describe.tool)
            }
            Ok(AgentToPage::Cancel(cancel)) => self.inbound_cancel(bridge, &cancel.id, now),
            // An empty id could not be answered in a valid `result`: dropped.
            Err(Rejection::UnsupportedProtocol {
                id: Some(id),
                client_id: Some(client_id),
            }) if client_id == self.client_id && !id.is_empty() => {
                // Rule 4: answered, once.
                if !self.is_duplicate(&id) {
                    self.answer_bridge(
                        bridge,
                        &id,
                        error_result(error_message::UNSUPPORTED_PROTOCOL),
                    );
                }
            }
            Err(rejection) => self.invalid_message(&rejection),
        }
    }

    fn invalid_message(&mut self, rejection: &Rejection) {
        self.error_event(ErrorEventCode::InvalidMessage, rejection.message(), None);
    }

    /// Rule 2, per page: in flight on any of its bridges, or among the
    /// page's last 1000 answered ids. (Two bridges receiving one call: the
    /// first delivery runs and is answered on its bridge, the second is a
    /// duplicate; an answered id stays one after its bridge detached.)
    fn is_duplicate(&self, id: &str) -> bool {
        self.answered.contains(id)
            || self
                .calls
                .list
                .iter()
                .any(|c| matches!(c.origin, Origin::Bridge(_)) && c.call_id == id)
    }

    /// The call in flight from `bridge` under `id`. (No per-bridge id map:
    /// a call's origin names its bridge, its call id is the bridge's id, and
    /// a linear scan is what a map lookup was.)
    fn bridge_call(&self, bridge: BridgeId, id: &str) -> Option<CallKey> {
        for call in &self.calls.list {
            if call.origin == Origin::Bridge(bridge) && call.call_id == id {
                return Some(call.key);
            }
        }
        None
    }

    fn answer_bridge(&mut self, bridge: BridgeId, id: &str, result: ToolResult) {
        self.answered.insert(id);
        self.send(
            bridge,
            PageToAgent::Result(ResultMessage {
                protocol: ProtocolV1,
                client_id: self.client_id.clone(),
                id: id.to_owned(),
                result,
            }),
        );
    }

    /// Rule 6: an unknown tool is `stale` when the caller's rev is older than
    /// ours (the tool is gone), else `unknown_tool`.
    fn missing_tool(&self, rev: Option<u64>) -> ToolResult {
        let current = self.registry.rev();
        if rev.is_some_and(|rev| rev < current) {
            self.refused(
                RefusedCode::Stale,
                "The tool is gone: use the latest manifest",
            )
        } else {
            self.refused(RefusedCode::UnknownTool, "No such tool")
        }
    }

    /// The answer to a call whose tool was unregistered after it was accepted.
    fn tool_gone(&self, call: &Call) -> ToolResult {
        match call.approval {
            Some(_) => self.gone_since_confirmation(),
            None => self.missing_tool(call.rev),
        }
    }

    fn gone_since_confirmation(&self) -> ToolResult {
        self.refused(
            RefusedCode::Stale,
            "The tool is gone since confirmation was requested",
        )
    }

    fn inbound_describe(&mut self, bridge: BridgeId, id: String, tool: &str) {
        if self.is_duplicate(&id) {
            return;
        }
        let entry = self
            .registry
            .by_name(tool)
            .filter(|t| self.policy.visible(Caller::Inapp, &t.def.hints))
            .map(Tool::manifest);
        let result = match entry {
            Some(entry) => ToolResult::Ok {
                data: Some(entry.to_value()),
            },
            None => self.refused(RefusedCode::UnknownTool, "No such tool"),
        };
        self.answer_bridge(bridge, &id, result);
    }

    fn inbound_cancel(&mut self, bridge: BridgeId, id: &str, now: u64) {
        if let Some(key) = self.bridge_call(bridge, id) {
            self.cancel_call(key, now);
        }
    }

    // ----- calls ---------------------------------------------------------

    /// Checks a new call against the registry, policy and lane bound; `Err`
    /// is the refusal to answer with.
    fn admit(
        &self,
        name: &str,
        caller: Caller,
        rev: Option<u64>,
    ) -> Result<(ToolKey, ScopeId), ToolResult> {
        let tool = self
            .registry
            .by_name(name)
            .filter(|t| self.policy.visible(caller, &t.def.hints))
            .ok_or_else(|| self.missing_tool(rev))?;
        match self.policy.decide(caller, &tool.def.hints) {
            Decision::Deny | Decision::Hide => {
                return Err(self.refused(
                    RefusedCode::NotAllowed,
                    "The caller's policy does not allow this tool",
                ))
            }
            Decision::Confirm if self.policy.confirm_mode() == ConfirmMode::None => {
                return Err(self.refused(
                    RefusedCode::NotAllowed,
                    "This tool needs a human's confirmation and there is no confirmation path",
                ))
            }
            _ => {}
        }
        if self.pending(tool.scope) >= MAX_PENDING_PER_SCOPE {
            return Err(self.refused(
                RefusedCode::Busy,
                "The tool's scope already has 32 pending calls",
            ));
        }
        Ok((tool.key, tool.scope))
    }

    fn inbound_call(
        &mut self,
        bridge: BridgeId,
        id: String,
        tool: String,
        input: Value,
        rev: Option<u64>,
        now: u64,
    ) {
        if self.is_duplicate(&id) {
            return;
        }
        match self.admit(&tool, Caller::Inapp, rev) {
            Err(result) => self.answer_bridge(bridge, &id, result),
            Ok((key, scope)) => {
                self.enqueue(
                    Origin::Bridge(bridge),
                    key,
                    tool,
                    scope,
                    Caller::Inapp,
                    id,
                    input,
                    rev,
                    None,
                );
                self.pump(now);
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn enqueue(
        &mut self,
        origin: Origin,
        tool: ToolKey,
        tool_name: String,
        scope: ScopeId,
        caller: Caller,
        call_id: String,
        input: Value,
        rev: Option<u64>,
        approval: Option<Approval>,
    ) -> CallKey {
        let key = CallKey(self.next_call);
        self.next_call += 1;
        self.calls.list.push(Call {
            key,
            origin,
            tool,
            tool_name,
            scope,
            caller,
            call_id,
            input,
            rev,
            stage: Stage::Queued,
            approval,
            snapshot: false,
            validated: None,
        });
        key
    }

    fn new_handle(&mut self) -> Handle {
        let handle = Handle(self.next_handle);
        self.next_handle += 1;
        handle
    }

    fn complete(&mut self, handle: Handle, result: ToolResult) {
        self.events.push_back(Event::Completed { handle, result });
    }

    /// `tm.call(name, input, { caller, rev })`: completes with the result.
    pub fn call(
        &mut self,
        name: &str,
        input_json: &str,
        caller: Caller,
        rev: Option<u64>,
        now: u64,
    ) -> Handle {
        let handle = self.new_handle();
        let input = match parse_value(input_json) {
            Ok(input) => input,
            Err(_) => {
                self.complete(
                    handle,
                    ToolResult::Invalid {
                        issues: vec![Issue {
                            path: String::new(),
                            message: "input must be JSON".into(),
                        }],
                    },
                );
                return handle;
            }
        };
        let call_id = match new_id(self.rng.as_mut()) {
            Ok(id) => id,
            Err(error) => {
                self.error_event(
                    ErrorEventCode::ToolThrew,
                    error.message(),
                    Some(name.into()),
                );
                self.complete(handle, error_result(error_message::TOOL_FAILED));
                return handle;
            }
        };
        match self.admit(name, caller, rev) {
            Err(result) => self.complete(handle, result),
            Ok((key, scope)) => {
                self.enqueue(
                    Origin::Local(handle),
                    key,
                    name.to_owned(),
                    scope,
                    caller,
                    call_id,
                    input,
                    rev,
                    None,
                );
                self.pump(now);
            }
        }
        handle
    }

    /// The `signal` of a page call was aborted.
    pub fn abort(&mut self, handle: Handle, now: u64) {
        let mut found = None;
        for c in &self.calls.list {
            if c.origin == Origin::Local(handle) {
                found = Some(c.key);
                break;
            }
        }
        if let Some(key) = found {
            self.cancel_call(key, now);
        }
    }

    /// `cancel`: a queued call is answered `cancelled signal` at once; a
    /// running one is aborted and gets the grace period to settle.
    fn cancel_call(&mut self, key: CallKey, now: u64) {
        let deadline = now.saturating_add(self.config.abort_grace_ms);
        let Some(call) = self.calls.get_mut(key) else {
            return;
        };
        match call.stage {
            Stage::Running(run) => {
                call.stage = Stage::Aborting { run, deadline };
                self.actions.push_back(Action::Abort { run });
            }
            Stage::Aborting { .. } => {}
            _ => {
                self.finish(
                    key,
                    ToolResult::Cancelled {
                        by: CancelledBy::Signal,
                    },
                    now,
                );
            }
        }
    }

    /// Starts queued calls on every idle lane, until nothing more can start.
    fn pump(&mut self, now: u64) {
        while let Some(key) = self.next_to_start() {
            self.set_stage(key, Stage::Active);
            self.start(key, now);
        }
    }

    /// The call to start next, if any. A scope's lane is its calls in key
    /// (arrival) order and runs one at a time: its oldest call is the active
    /// one once started, so the lane is idle with work while that call is
    /// still queued. Idle lanes start smallest scope first.
    fn next_to_start(&self) -> Option<CallKey> {
        let mut next: Option<&Call> = None;
        for (index, call) in self.calls.list.iter().enumerate() {
            if call.stage != Stage::Queued || next.is_some_and(|n| n.scope <= call.scope) {
                continue;
            }
            let mut heads_lane = true;
            for earlier in self.calls.list.get(..index).unwrap_or_default() {
                if earlier.scope == call.scope {
                    heads_lane = false;
                    break;
                }
            }
            if heads_lane {
                next = Some(call);
            }
        }
        next.map(|call| call.key)
    }

    fn new_run(&mut self) -> RunId {
        let run = RunId(self.next_run);
        self.next_run += 1;
        run
    }

    fn input_text(call: &Call) -> String {
        crate::protocol::to_json(&call.input)
    }

    /// A call reaches the front of its lane.
    fn start(&mut self, key: CallKey, now: u64) {
        let Some(call) = self.calls.get(key) else {
            return;
        };
        let Some(tool) = self.registry.by_key(call.tool) else {
            // Unregistered while the call waited.
            return self.finish(key, self.tool_gone(call), now);
        };
        if call.approval.is_some() {
            if tool.def.has_state {
                let input = Self::input_text(call);
                let tool = call.tool;
                let run = self.new_run();
                self.set_stage(key, Stage::ReadingState(run));
                self.actions
                    .push_back(Action::ReadState { run, tool, input });
                return;
            }
            return self.start_run(key, now);
        }
        match &tool.input {
            Validator::Any => self.validated(key, now),
            Validator::Json(schema) => {
                let issues = schema.validate(&call.input, self.matcher.as_ref());
                if issues.is_empty() {
                    self.validated(key, now)
                } else {
                    let issues = Issue::from_schema(issues);
                    self.finish(key, ToolResult::invalid(issues), now)
                }
            }
            Validator::External => {
                let input = Self::input_text(call);
                let tool = call.tool;
                let run = self.new_run();
                self.set_stage(key, Stage::Validating(run));
                self.actions
                    .push_back(Action::Validate { run, tool, input });
            }
        }
    }

    fn set_stage(&mut self, key: CallKey, stage: Stage) {
        if let Some(call) = self.calls.get_mut(key) {
            call.stage = stage;
        }
    }

    /// Valid input: confirm first, or run.
    fn validated(&mut self, key: CallKey, now: u64) {
        let Some(call) = self.calls.get(key) else {
            return;
        };
        let Some(tool) = self.registry.by_key(call.tool) else {
            return self.finish(key, self.missing_tool(call.rev), now);
        };
        if self.policy.decide(call.caller, &tool.def.hints) != Decision::Confirm {
            return self.start_run(key, now);
        }
        let def = &tool.def;
        if def.has_summary || def.has_changes || def.has_state {
            let (summary, changes, state) = (def.has_summary, def.has_changes, def.has_state);
            let input = Self::input_text(call);
            let (tool, validated) = (call.tool, call.validated);
            let run = self.new_run();
            self.set_stage(key, Stage::Preparing(run));
            self.actions.push_back(Action::Prepare {
                run,
                tool,
                input,
                summary,
                changes,
                state,
                validated,
            });
        } else {
            self.request_confirmation(key, Prepared::default(), now);
        }
    }

    /// Only a registered tool ever runs: one gone by now answers the call instead.
    fn start_run(&mut self, key: CallKey, now: u64) {
        let Some(call) = self.calls.get(key) else {
            return;
        };
        let Some(snapshot) = self.registry.by_key(call.tool).map(|t| t.def.has_snapshot) else {
            return self.finish(key, self.tool_gone(call), now);
        };
        let (tool, name, input, caller, call_id) = (
            call.tool,
            call.tool_name.clone(),
            Self::input_text(call),
            call.caller,
            call.call_id.clone(),
        );
        let run = self.new_run();
        self.set_stage(key, Stage::Running(run));
        // The run uses up the kept value (JS forgets it as it starts).
        let mut validated = None;
        if let Some(call) = self.calls.get_mut(key) {
            call.snapshot = snapshot;
            validated = call.validated.take();
        }
        self.actions.push_back(Action::Run {
            run,
            tool,
            name,
            input,
            caller,
            call_id,
            snapshot,
            validated,
        });
    }

    /// Step 1 of deferred confirmation: store it and answer `needs_confirmation`.
    fn request_confirmation(&mut self, key: CallKey, prepared: Prepared, now: u64) {
        let Some(call) = self.calls.get(key) else {
            return;
        };
        let Some(tool) = self.registry.by_key(call.tool) else {
            return self.finish(key, self.missing_tool(call.rev), now);
        };
        let summary = prepared.summary.unwrap_or_else(|| {
            tool.def
                .title
                .clone()
                .unwrap_or_else(|| format!("Run {}", tool.name))
        });
        let changes = prepared
            .changes
            .map(|changes| redact(changes, &tool.def.sensitive));
        let requester = match call.origin {
            Origin::Bridge(bridge) => Requester::Bridge(bridge.0),
            Origin::Local(_) => Requester::Local,
        };
        let (tool_key, tool_name, call_id, input, validated) = (
            call.tool,
            tool.name.clone(),
            call.call_id.clone(),
            call.input.clone(),
            call.validated,
        );
        let confirm_id = match new_id(self.rng.as_mut()) {
            Ok(id) => id,
            Err(error) => {
                self.error_event(ErrorEventCode::ToolThrew, error.message(), Some(tool_name));
                return self.finish(key, error_result(error_message::TOOL_FAILED), now);
            }
        };
        let evicted = self.confirmations.add(Confirmation {
            confirm_id: confirm_id.clone(),
            tool: tool_key,
            tool_name,
            call_id,
            input,
            summary: summary.clone(),
            changes: changes.clone(),
            state: prepared.state,
            requester,
            expires_at: now.saturating_add(self.config.confirm_expiry_ms),
            validated,
        });
        // The kept value passes to the confirmation, for the approved run.
        if let Some(call) = self.calls.get_mut(key) {
            call.validated = None;
        }
        if let Some(evicted) = evicted {
            self.expire(evicted);
        }
        self.finish(
            key,
            ToolResult::NeedsConfirmation {
                confirm_id,
                summary,
                changes,
            },
            now,
        );
        self.events.push_back(Event::PendingChanged);
    }

    /// A confirmation expired, was evicted: its requester hears `confirmation_expired`.
    fn expire(&mut self, confirmation: Confirmation) {
        self.forget_validated(confirmation.validated);
        let result = self.refused(
            RefusedCode::ConfirmationExpired,
            refused_message::CONFIRMATION_EXPIRED,
        );
        self.send_confirmed(&confirmation.requester, &confirmation.confirm_id, result);
    }

    /// The `confirmed` of a confirmation a bridge call created: to that
    /// bridge, or, when it has been detached since, to every bridge attached
    /// now (the server binds the confirmId to the page's clientId, not to a
    /// transport). With no bridge attached it is dropped: a later bridge
    /// does not get it, the page's pending list and events still moved on,
    /// and the server treats the confirmId as expired (spec, Navigation).
    fn send_confirmed(&mut self, requester: &Requester, confirm_id: &str, result: ToolResult) {
        let Requester::Bridge(requester) = *requester else {
            return;
        };
        let message = PageToAgent::Confirmed(Confirmed {
            protocol: ProtocolV1,
            client_id: self.client_id.clone(),
            confirm_id: confirm_id.to_owned(),
            result,
        });
        let requester = BridgeId(requester);
        if self.bridges.contains(requester) {
            return self.send(requester, message);
        }
        let text = message.to_json();
        for state in &self.bridges.list {
            self.transmits.push_back(Transmit {
                bridge: state.id,
                text: text.clone(),
            });
        }
    }

    /// `tm.confirmPending(confirmId, approve)`: completes with the final result,
    /// which also goes to the requesting bridge as `confirmed`.
    pub fn confirm(&mut self, confirm_id: &str, approve: bool, now: u64) -> Handle {
        let handle = self.new_handle();
        // A late timer must not let an expired confirmation through.
        self.expire_due(now);
        // Rule 5 holds for approved runs too. A busy scope refuses the
        // approval but keeps the confirmation pending: the human can retry.
        let busy_scope = self
            .confirmations
            .get(confirm_id)
            .and_then(|c| self.registry.by_key(c.tool))
            .is_some_and(|t| self.pending(t.scope) >= MAX_PENDING_PER_SCOPE);
        if approve && busy_scope {
            let result = self.refused(
                RefusedCode::Busy,
                "The tool's scope already has 32 pending calls; the confirmation is still pending",
            );
            self.complete(handle, result);
            return handle;
        }
        let Some(confirmation) = self.confirmations.take(confirm_id) else {
            let result = self.refused(
                RefusedCode::ConfirmationExpired,
                refused_message::CONFIRMATION_EXPIRED,
            );
            self.complete(handle, result);
            return handle;
        };
        self.events.push_back(Event::PendingChanged);
        let scope = self.registry.by_key(confirmation.tool).map(|t| t.scope);
        let result = match scope {
            Some(scope) if approve => {
                // The approved run waits its turn on the scope like any call.
                let key = self.enqueue(
                    Origin::Local(handle),
                    confirmation.tool,
                    confirmation.tool_name,
                    scope,
                    Caller::Human,
                    confirmation.call_id,
                    confirmation.input,
                    None,
                    Some(Approval {
                        confirm_id: confirmation.confirm_id,
                        requester: confirmation.requester,
                        state: confirmation.state,
                    }),
                );
                if let Some(call) = self.calls.get_mut(key) {
                    call.validated = confirmation.validated;
                }
                self.pump(now);
                return handle;
            }
            // Declined.
            _ if !approve => ToolResult::Cancelled {
                by: CancelledBy::Operator,
            },
            // Approved, but the tool was unregistered meanwhile.
            _ => self.gone_since_confirmation(),
        };
        // Not run: the answer goes to the requesting bridge too.
        self.forget_validated(confirmation.validated);
        self.send_confirmed(&confirmation.requester, confirm_id, result.clone());
        self.complete(handle, result);
        handle
    }

    /// `tm.undo(callId)`: runs the restorer kept for that call, once.
    pub fn undo(&mut self, call_id: &str) -> Handle {
        let handle = self.new_handle();
        if let Some(restorer) = self.undo.take(call_id) {
            let run = self.new_run();
            self.restores.push(Restore {
                run,
                handle,
                call_id: call_id.to_owned(),
            });
            self.actions.push_back(Action::Restore { run, restorer });
        } else {
            let result = self.refused(
                RefusedCode::UndoUnavailable,
                "No restorer for this call (never registered, already used or evicted)",
            );
            self.complete(handle, result);
        }
        handle
    }

    /// `ctx.confirm` was used by a run: true when its caller has an inline
    /// confirmation path (a human, with the page's handler).
    pub fn ctx_confirm(&mut self, run: RunId) -> bool {
        let Some((_, call)) = self.call_for(run) else {
            return false;
        };
        if call.caller == Caller::Human && self.config.inline_confirm {
            return true;
        }
        let (caller, tool) = (call.caller, call.tool_name.clone());
        self.error_event(
            ErrorEventCode::CtxConfirmUnavailable,
            format!(
                "ctx.confirm is not available to caller {}: it has no inline confirmation path",
                caller.as_str()
            ),
            Some(tool),
        );
        false
    }

    // ----- answers from JS ----------------------------------------------

    /// The call whose current stage waits for `run` (no run→call map: the
    /// stage names its run, and a linear scan is what a map lookup was).
    fn call_for(&self, run: RunId) -> Option<(CallKey, &Call)> {
        for call in &self.calls.list {
            if call.stage.run() == Some(run) {
                return Some((call.key, call));
            }
        }
        None
    }

    /// A tool run settled.
    pub fn handle_outcome(&mut self, run: RunId, outcome: Outcome, now: u64) {
        let Some((key, call)) = self.call_for(run) else {
            return self.late(run, &outcome);
        };
        if !matches!(call.stage, Stage::Running(_) | Stage::Aborting { .. }) {
            return;
        }
        let tool_name = call.tool_name.clone();
        let call_id = call.call_id.clone();
        let tool = self.registry.by_key(call.tool);
        let snapshot = call.snapshot;
        let result = match outcome {
            Outcome::Ok(text) => match text.as_deref().map(parse_value) {
                None => ToolResult::Ok { data: None },
                Some(Ok(data)) => {
                    if self.config.dev {
                        if let Some(Validator::Json(schema)) = tool.and_then(|t| t.output.as_ref())
                        {
                            let issues = schema.validate(&data, self.matcher.as_ref());
                            if let Some(first) = issues.first() {
                                let message = format!(
                                    "output of '{}' fails its output schema at '{}': {}",
                                    tool_name, first.path, first.message
                                );
                                self.error_event(
                                    ErrorEventCode::OutputInvalid,
                                    message,
                                    Some(tool_name.clone()),
                                );
                            }
                        }
                    }
                    ToolResult::Ok { data: Some(data) }
                }
                Some(Err(rejection)) => {
                    self.error_event(
                        ErrorEventCode::TransportFailed,
                        rejection.message(),
                        Some(tool_name.clone()),
                    );
                    error_result(error_message::NOT_SERIALIZABLE)
                }
            },
            Outcome::Threw(detail) => {
                self.error_event(ErrorEventCode::ToolThrew, detail, Some(tool_name.clone()));
                error_result(error_message::TOOL_FAILED)
            }
            Outcome::NotSerializable(detail) => {
                self.error_event(
                    ErrorEventCode::TransportFailed,
                    format!("result of '{tool_name}' is not serializable: {detail}"),
                    Some(tool_name.clone()),
                );
                error_result(error_message::NOT_SERIALIZABLE)
            }
            Outcome::Aborted => ToolResult::Cancelled {
                by: CancelledBy::Signal,
            },
        };
        if snapshot {
            if matches!(result, ToolResult::Ok { .. }) {
                for forgotten in self.undo.insert(&call_id, run) {
                    self.actions
                        .push_back(Action::DropRestorer { run: forgotten });
                }
            } else {
                self.actions.push_back(Action::DropRestorer { run });
            }
        }
        self.finish(key, result, now);
    }

    /// An outcome for a run no call waits for: `late_result` when the run was
    /// abandoned after its grace period.
    fn late(&mut self, run: RunId, outcome: &Outcome) {
        let Some(index) = self.abandoned.iter().position(|(r, _)| *r == run) else {
            return;
        };
        let Some((_, tool)) = self.abandoned.remove(index) else {
            return;
        };
        let status = match outcome {
            Outcome::Ok(_) => "returned",
            Outcome::Threw(_) => "threw",
            Outcome::NotSerializable(_) => "returned an unserializable value",
            Outcome::Aborted => "was aborted",
        };
        self.error_event(
            ErrorEventCode::LateResult,
            format!("tool '{tool}' {status} after its call was abandoned"),
            Some(tool),
        );
    }

    /// A tool's function threw: details to the `tool_threw` event, the call
    /// gets the generic "Tool failed".
    fn tool_failed(&mut self, key: CallKey, tool_name: String, detail: String, now: u64) {
        self.error_event(ErrorEventCode::ToolThrew, detail, Some(tool_name));
        self.finish(key, error_result(error_message::TOOL_FAILED), now)
    }

    /// The call waiting for this answer from JS, if it is in `stage`, and
    /// its tool's name (the next stage replaces the run).
    fn take_step(&mut self, run: RunId, stage: Stage) -> Option<(CallKey, String)> {
        let (key, call) = self.call_for(run)?;
        if call.stage != stage {
            return None;
        }
        Some((key, call.tool_name.clone()))
    }

    /// A Standard Schema validation finished.
    /// With `Valid(Some(_))` JS keeps the value itself under `run` until a
    /// `Run` uses it or `ForgetValidated` says no run will.
    pub fn handle_validated(&mut self, run: RunId, validated: Validated, now: u64) {
        let kept = matches!(validated, Validated::Valid(Some(_))).then_some(run);
        let Some((key, tool_name)) = self.take_step(run, Stage::Validating(run)) else {
            return self.forget_validated(kept);
        };
        match validated {
            Validated::Valid(text) => {
                if let Some(text) = text {
                    match parse_value(&text) {
                        Ok(value) => {
                            if let Some(call) = self.calls.get_mut(key) {
                                call.input = value;
                                call.validated = kept;
                            }
                        }
                        Err(rejection) => {
                            self.forget_validated(kept);
                            return self.tool_failed(key, tool_name, rejection.message(), now);
                        }
                    }
                }
                self.set_stage(key, Stage::Active);
                self.validated(key, now);
            }
            Validated::Invalid(issues) => self.finish(key, ToolResult::invalid(issues), now),
            Validated::Threw(detail) => self.tool_failed(key, tool_name, detail, now),
        }
    }

    /// A tool's `summary` / `changes` / form state for a confirmation.
    pub fn handle_prepared(&mut self, run: RunId, prepared: Result<Prepared, String>, now: u64) {
        let Some((key, tool_name)) = self.take_step(run, Stage::Preparing(run)) else {
            return;
        };
        match prepared {
            Ok(prepared) => self.request_confirmation(key, prepared, now),
            Err(detail) => self.tool_failed(key, tool_name, detail, now),
        }
    }

    /// The form state read again at approval: a change means `refused stale`.
    pub fn handle_state(&mut self, run: RunId, state: Result<Option<String>, String>, now: u64) {
        let Some((key, tool_name)) = self.take_step(run, Stage::ReadingState(run)) else {
            return;
        };
        let expected = self
            .calls
            .get(key)
            .and_then(|c| c.approval.as_ref())
            .and_then(|a| a.state.clone());
        match state {
            Ok(state) if state == expected => self.start_run(key, now),
            Ok(_) => {
                let result = self.refused(RefusedCode::Stale, refused_message::FORM_CHANGED);
                self.finish(key, result, now)
            }
            Err(detail) => self.tool_failed(key, tool_name, detail, now),
        }
    }

    /// A restorer ran (for `tm.undo`).
    pub fn handle_restored(&mut self, run: RunId, restored: Result<(), String>) {
        let Some(index) = self.restores.iter().position(|r| r.run == run) else {
            return;
        };
        if index >= self.restores.len() {
            return;
        }
        let Restore {
            handle, call_id, ..
        } = self.restores.swap_remove(index);
        let result = match restored {
            Ok(()) => ToolResult::Ok { data: None },
            Err(detail) => {
                self.error_event(
                    ErrorEventCode::ToolThrew,
                    format!("restorer of call {call_id} threw: {detail}"),
                    None,
                );
                error_result(error_message::TOOL_FAILED)
            }
        };
        self.complete(handle, result);
    }

    /// Deadlines: expired confirmations, and aborted runs out of grace.
    pub fn handle_timeout(&mut self, now: u64) {
        self.expire_due(now);
        // Aborted runs out of grace, in key order. Each is abandoned: its
        // outcome, if it ever comes, is `late_result`. (What an answer
        // starts is never aborting, so the search goes on from the start.)
        while let Some(call) = self
            .calls
            .list
            .iter()
            .find(|c| matches!(c.stage, Stage::Aborting { deadline, .. } if deadline <= now))
        {
            let Some(mut call) = self.remove_call(call.key) else {
                break;
            };
            if let Stage::Aborting { run, .. } = call.stage {
                if self.abandoned.len() >= ABANDONED_MEMORY {
                    self.abandoned.pop_front();
                }
                self.abandoned
                    .push_back((run, core::mem::take(&mut call.tool_name)));
                if call.snapshot {
                    self.actions.push_back(Action::DropRestorer { run });
                }
            }
            self.answer(
                call,
                ToolResult::Cancelled {
                    by: CancelledBy::Signal,
                },
                now,
            );
        }
    }

    /// Confirmations expired at `now` are taken out and reported.
    fn expire_due(&mut self, now: u64) {
        let mut expired_any = false;
        while let Some(confirmation) = self.confirmations.take_expired(now) {
            self.expire(confirmation);
            expired_any = true;
        }
        if expired_any {
            self.events.push_back(Event::PendingChanged);
        }
    }

    /// Takes a call out, which frees its place in its lane.
    fn remove_call(&mut self, key: CallKey) -> Option<Call> {
        let call = self.calls.remove(key)?;
        // A value kept for a run that never came.
        self.forget_validated(call.validated);
        Some(call)
    }

    fn forget_validated(&mut self, validated: Option<RunId>) {
        if let Some(run) = validated {
            self.actions.push_back(Action::ForgetValidated { run });
        }
    }

    /// The one answer of a call: to its bridge or page request, plus the
    /// `confirmed` of an approved confirmation. Frees the lane.
    fn finish(&mut self, key: CallKey, result: ToolResult, now: u64) {
        if let Some(call) = self.remove_call(key) {
            self.answer(call, result, now);
        }
    }

    /// The answer of a call already taken out (see [`Toolmark::finish`]).
    fn answer(&mut self, call: Call, result: ToolResult, now: u64) {
        if let Some(approval) = &call.approval {
            self.send_confirmed(&approval.requester, &approval.confirm_id, result.clone());
        }
        match call.origin {
            Origin::Bridge(bridge) => self.answer_bridge(bridge, &call.call_id, result),
            Origin::Local(handle) => self.complete(handle, result),
        }
        self.pump(now);
    }

    fn error_event(&mut self, code: ErrorEventCode, message: String, tool: Option<String>) {
        self.events.push_back(Event::Error {
            code,
            message,
            tool,
        });
    }
}
