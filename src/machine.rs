//! The bridge core: a sans-IO state machine (in the style of quinn-proto and
//! str0m). [`Toolmark`] is the router: it owns one of each concern's state
//! and hands every input to the module that decides it:
//!
//! | module | owns |
//! |---|---|
//! | [`crate::registry`] | tools, scopes, revisions, compiled schemas |
//! | [`crate::policy`] | who may call what, and what needs a human |
//! | [`crate::bridges`] | attached bridges and their options, the `clientId` filter (rule 1), the answered-id memory (rule 2) |
//! | [`crate::lifecycle`] | a call from admission to its one answer: through [`crate::lanes`] (per-scope queues, the busy limit (rule 5), which call starts next), [`crate::lifecycle::calls`] (calls in flight and their stages, abandoned runs) and [`crate::lifecycle::confirmations`] (deferred confirmations (≤ 100, expiry), the undo store) |
//! | [`crate::outputs`] | the three output queues |
//!
//! # Inputs
//! Method calls that carry the current time in ms where time matters:
//! registry commands ([`Toolmark::register`], [`Toolmark::unregister`],
//! [`Toolmark::create_scope`], [`Toolmark::dispose_scope`]), bridges
//! ([`Toolmark::attach`], [`Toolmark::detach`], [`Toolmark::handle_inbound`]
//! with the inbound message text), page calls ([`Toolmark::call`],
//! [`Toolmark::abort`], [`Toolmark::confirm`], [`Toolmark::undo`]), what JS
//! reports back about the work it was asked to do
//! ([`Toolmark::handle_outcome`], [`Toolmark::handle_output_checked`],
//! [`Toolmark::handle_validated`], [`Toolmark::handle_prepared`],
//! [`Toolmark::handle_state`], [`Toolmark::handle_restored`],
//! [`Toolmark::handle_failure`]) and [`Toolmark::handle_timeout`]. Each is
//! also one [`crate::input::Input`] value, which [`Toolmark::handle_input`]
//! takes: the proptest and the machine fuzzer drive the core that way.
//!
//! # Outputs, and the drain order
//! After any input, call [`Toolmark::poll_output`] until it returns
//! [`Output::Timeout`]. It enforces the drain order itself:
//! 1. [`Output::Transmit`]: outbound message text, per bridge, in send
//!    order (a `result` carrying `needs_confirmation` always comes out
//!    before that confirmation's `confirmed`);
//! 2. [`Output::Event`]: error events, completions of page calls, changes
//!    of the pending-confirmation list and of the revision;
//! 3. [`Output::Action`]: work for JS: runs to start, validations,
//!    summaries and form state to read, runs to abort, restorers to run or
//!    drop, transports to close;
//! 4. [`Output::Timeout`], last, when nothing else is queued: the next
//!    deadline; call [`Toolmark::handle_timeout`] when it is reached.
//!
//! Messages go out first so that nothing a page callback does in reaction
//! to an event can overtake them: an input made while the loop runs (a
//! callback calling back in) queues its outputs, and the next
//! `poll_output` hands out its messages before the events still queued.
//! The machine reads no clock, does no IO and takes its randomness from the
//! injected [`RandomSource`].

use crate::given::{self, Given};
use crate::prelude::*;
use serde_json::Value;

use crate::bridges::Bridges;
pub use crate::bridges::{BridgeId, BridgeOptions, OnChange};
use crate::ids::{new_id, RandomError, RandomSource};
use crate::lifecycle::calls::PageRequest;
pub use crate::lifecycle::calls::{
    GivenSignal, Outcome, PageCall, Prepared, RefusedCallOption, SignalUse, Unprepared, Validated,
};
pub use crate::lifecycle::confirmations::{PendingView, DEFAULT_CONFIRM_EXPIRY_MS};
use crate::lifecycle::{CallLife, Env, Settings};
use crate::outputs::Outputs;
pub use crate::outputs::{
    Action, Event, Handle, Output, PrepareOrder, RunId, RunOrder, Topic, Transmit,
};
use crate::policy::{Caller, ConfigIssue, ConfirmMode, Decision, Policy};
use crate::protocol::codes::error_message;
use crate::protocol::Issue;
use crate::protocol::{
    inbound::is_json_text, parse_for_page, AgentToPage, Changed, ErrorEventCode, Manifest,
    PageToAgent, ProtocolV1, RefusedCode, Rejection, ThrownErrorCode, ToolManifest,
    ToolManifestSummary, ToolResult, ToolmarkErrorCode,
};
use crate::registry::{Registry, RegistryError, ScopeId, ScopeMade, Tool, ToolDef, ToolKey};
use crate::schema::PatternMatcher;
use crate::transport::status::Status;

/// Default time a tool gets to settle after its call is aborted.
pub const DEFAULT_ABORT_GRACE_MS: u64 = 3_000;
/// Default tool budget (visible tools; dev-mode warning only).
pub const DEFAULT_TOOL_BUDGET: usize = 40;
/// What FieldChange values of sensitive paths become.
pub const REDACTED: &str = "[redacted]";

/// `tm.use`'s refusal of what is not a plugin, or a plugin used twice.
pub const NOT_A_PLUGIN: &str =
    "use: not a Toolmark plugin (expected bridge(...) or webmcp(...), each attached once)";

/// A person's answer to a confirmation (`confirmPending`'s `approve`, what
/// `onConfirm` resolves with) as JS gave it: `Some` for a boolean. Only
/// `true` approves, so a value that merely reads as true (`'false'`,
/// `'no'`, `1`) never runs a consequential tool.
pub fn approves(answer: Option<bool>) -> bool {
    answer == Some(true)
}

/// `confirmPending`'s refusal of an `approve` that is no boolean (the
/// confirmation stays pending).
pub const APPROVE_NOT_BOOLEAN: &str = "confirmPending: approve must be true or false";

/// `confirmPending`'s `approve`: the boolean, or its refusal.
pub fn approve_given(answer: Option<bool>) -> Result<bool, &'static str> {
    answer.ok_or(APPROVE_NOT_BOOLEAN)
}

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

// `createToolmark`'s counts as the page gave them: whole numbers >= 0;
// absent, and (as JSON has it) non-finite, is the default.
impl Config {
    pub fn tool_budget_from(given: &Given) -> Result<usize, &'static str> {
        let budget = given::count(
            given,
            DEFAULT_TOOL_BUDGET as u64,
            "createToolmark: toolBudget must be a whole number >= 0",
        )?;
        Ok(usize::try_from(budget).unwrap_or(usize::MAX))
    }

    pub fn confirm_expiry_ms_from(given: &Given) -> Result<u64, &'static str> {
        given::count(
            given,
            DEFAULT_CONFIRM_EXPIRY_MS,
            "createToolmark: confirmExpiryMs must be a whole number >= 0",
        )
    }

    pub fn abort_grace_ms_from(given: &Given) -> Result<u64, &'static str> {
        given::count(
            given,
            DEFAULT_ABORT_GRACE_MS,
            "createToolmark: abortGraceMs must be a whole number >= 0",
        )
    }
}

/// A misconfiguration, as thrown in dev mode, or what the host lacks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolmarkError {
    pub code: ToolmarkErrorCode,
    pub message: String,
}

impl From<RegistryError> for ToolmarkError {
    fn from(e: RegistryError) -> Self {
        ToolmarkError {
            code: e.code.into(),
            message: e.message,
        }
    }
}

impl From<ConfigIssue> for ToolmarkError {
    fn from(e: ConfigIssue) -> Self {
        ToolmarkError {
            code: e.code.into(),
            message: e.message,
        }
    }
}

impl ToolmarkError {
    /// `api` got no random bytes: the host lacks Web Crypto
    /// (docs/protocol.md's `host_unsupported`), for `createToolmark` and
    /// `newId` alike.
    pub fn no_random(api: &str, error: &RandomError) -> ToolmarkError {
        let mut message = String::from(api);
        message.push_str(": ");
        message.push_str(&error.message());
        ToolmarkError {
            code: ThrownErrorCode::HostUnsupported.into(),
            message,
        }
    }
}

impl core::fmt::Display for ToolmarkError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{}: {}", self.code.as_str(), self.message)
    }
}

impl core::error::Error for ToolmarkError {}

/// The page's Toolmark core. See the module docs for inputs, outputs and
/// the drain order. It owns the call lifecycle and the state it lends to
/// it (registry, policy, bridges, outputs…), and routes each input to the
/// module that decides it.
pub struct Toolmark {
    config: Config,
    life: CallLife,
    env: Env,
    budget_warned_rev: Option<u64>,
}

impl core::fmt::Debug for Toolmark {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Toolmark")
            .field("client_id", &self.env.bridges.client_id())
            .field("rev", &self.env.registry.rev())
            .field("tools", &self.env.registry.len())
            .field("calls", &self.life.calls_in_flight())
            .field(
                "pending_confirmations",
                &self.life.pending_confirmation_count(),
            )
            .finish_non_exhaustive()
    }
}

/// Why a tool's calls by the agent cannot be confirmed (`missing_confirm_handler`).
fn no_confirmation_path(tool: &str) -> String {
    format!(
        "tool '{tool}' needs a human's confirmation for caller inapp, and confirmMode.inapp is 'none'"
    )
}

impl Toolmark {
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
        let client_id = new_id(rng.as_mut())
            .map_err(|error| ToolmarkError::no_random("createToolmark", &error))?;
        let settings = Settings {
            dev: config.dev,
            confirm_expiry_ms: config.confirm_expiry_ms,
            abort_grace_ms: config.abort_grace_ms,
            inline_confirm: config.inline_confirm,
        };
        let mut machine = Toolmark {
            config,
            life: CallLife::default(),
            env: Env {
                registry: Registry::new(),
                policy,
                settings,
                rng,
                matcher,
                bridges: Bridges::new(client_id),
                out: Outputs::default(),
            },
            budget_warned_rev: None,
        };
        for issue in issues {
            machine.env.out.error(issue.code, issue.message, None);
        }
        Ok(machine)
    }

    // ----- queries -------------------------------------------------------

    /// This page load's id: every agent → page message must carry it.
    pub fn client_id(&self) -> &str {
        self.env.bridges.client_id()
    }

    pub fn rev(&self) -> u64 {
        self.env.registry.rev()
    }

    /// Whether the page is in dev mode (`createToolmark({ dev })`).
    pub fn is_dev(&self) -> bool {
        self.env.settings.dev
    }

    /// The manifest entries visible to `caller`, sorted by name.
    pub fn manifest(&self, caller: Caller) -> Vec<ToolManifestSummary> {
        let mut entries = Vec::new();
        for tool in self.env.registry.tools() {
            if self.env.policy.visible(caller, &tool.def.hints) {
                entries.push(tool.summary());
            }
        }
        entries
    }

    /// The full entries (with their schemas) visible to `caller`, sorted by name.
    pub fn manifest_entries(&self, caller: Caller) -> Vec<ToolManifest> {
        let mut entries = Vec::new();
        for tool in self.env.registry.tools() {
            if self.env.policy.visible(caller, &tool.def.hints) {
                entries.push(tool.manifest());
            }
        }
        entries
    }

    /// Calls the machine is handling (queued, or with JS), for bounds checks.
    pub fn calls_in_flight(&self) -> usize {
        self.life.calls_in_flight()
    }

    /// Bytes of input text held by the calls in flight and the pending
    /// confirmations (bounded by [`crate::lanes::MAX_HELD_INPUT_BYTES`]).
    pub fn held_input_bytes(&self) -> usize {
        self.life.held_input_bytes()
    }

    /// The most pending calls on any one scope.
    pub fn max_pending_per_scope(&self) -> usize {
        self.life.max_pending_per_scope()
    }

    /// Pending calls on the scope of the named tool (`None` for no such tool).
    pub fn scope_pending(&self, tool: &str) -> Option<usize> {
        self.env
            .registry
            .by_name(tool)
            .map(|t| self.life.scope_pending(t.scope))
    }

    pub fn pending_confirmation_count(&self) -> usize {
        self.life.pending_confirmation_count()
    }

    /// Rule 2's in-flight half: a call under `id` from a bridge (attached
    /// or not) has not settled yet.
    pub fn is_call_in_flight(&self, id: &str) -> bool {
        self.life.is_call_in_flight(id)
    }

    /// Answered ids the page remembers (at most 1000, for all its bridges).
    pub fn answered_ids(&self) -> usize {
        self.env.bridges.answered_ids().len()
    }

    /// Bytes the answered-id memory holds, for bounds checks.
    pub fn answered_memory_bytes(&self) -> usize {
        self.env.bridges.answered_ids().held_bytes()
    }

    // ----- outputs -------------------------------------------------------

    /// The next output, in the drain order (module docs); when nothing is
    /// queued, [`Output::Timeout`] with the next time
    /// [`Toolmark::handle_timeout`] must be called.
    pub fn poll_output(&mut self) -> Output {
        self.env
            .out
            .pop()
            .unwrap_or_else(|| Output::Timeout(self.life.next_deadline()))
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
            self.env.out.error(error.code, error.message, tool);
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
        let needs_path = self.env.policy.decide(Caller::Inapp, &def.hints) == Decision::Confirm
            && self.env.policy.confirm_mode() == ConfirmMode::None;
        if self.config.dev && needs_path {
            return Err(ToolmarkError {
                code: ErrorEventCode::MissingConfirmHandler.into(),
                message: no_confirmation_path(&tool_name),
            });
        }
        let matcher = self.env.matcher.as_ref();
        let (key, warnings) = match self
            .env
            .registry
            .register(scope, def, self.config.dev, matcher)
        {
            Ok(registered) => registered,
            Err(error) => return self.misconfigured(error, Some(tool_name)),
        };
        let full_name = self
            .env
            .registry
            .by_key(key)
            .map(|t| t.name.clone())
            .unwrap_or(tool_name);
        for warning in warnings {
            self.env
                .out
                .error(warning.code, warning.message, Some(full_name.clone()));
        }
        if needs_path {
            self.env.out.error(
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
        if self.env.registry.unregister(key) {
            self.revised(now);
        }
    }

    /// Creates a child scope. A refused one is an `Err` in dev mode;
    /// otherwise an error event, and a [`ScopeMade::Refused`] scope that
    /// keeps its name ([`Toolmark::scope_prefix`]) and refuses what is done
    /// in it.
    pub fn create_scope(
        &mut self,
        parent: ScopeId,
        name: &str,
    ) -> Result<ScopeMade, ToolmarkError> {
        match self.env.registry.create_scope(parent, name) {
            Ok(scope) => Ok(ScopeMade::Live(scope)),
            Err(error) => {
                self.misconfigured::<()>(error, None)?;
                Ok(ScopeMade::Refused(
                    self.env.registry.refuse_scope(parent, name),
                ))
            }
        }
    }

    /// Disposes a scope and its descendants (one revision if tools went);
    /// returns the keys of the tools removed, whose functions the driver
    /// lets go (none when the scope is refused outside dev mode).
    pub fn dispose_scope(
        &mut self,
        scope: ScopeId,
        now: u64,
    ) -> Result<Vec<ToolKey>, ToolmarkError> {
        match self.env.registry.dispose_scope(scope) {
            Ok(removed) => {
                if !removed.is_empty() {
                    self.revised(now);
                }
                Ok(removed)
            }
            Err(error) => self
                .misconfigured(error, None)
                .map(|_: Option<()>| Vec::new()),
        }
    }

    /// A scope's full dotted prefix (`""` for the root), `None` for one
    /// this registry never made.
    pub fn scope_prefix(&self, scope: ScopeId) -> Option<&str> {
        self.env.registry.scope_prefix(scope)
    }

    /// After every change of the tool set: tell the bridges, check the budget,
    /// and start what can start (queued calls may now find their tool gone).
    fn revised(&mut self, now: u64) {
        let rev = self.env.registry.rev();
        self.env.out.event(Event::RevChanged { rev });
        // In id order; sending changes no bridge.
        for (bridge, on_change) in self.env.bridges.attached() {
            match on_change {
                OnChange::Manifest => self.send_manifest(bridge),
                OnChange::Changed => self.env.send(
                    bridge,
                    PageToAgent::Changed(Changed {
                        protocol: ProtocolV1,
                        client_id: self.env.bridges.client_id().to_owned(),
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
            self.env.out.error(
                ErrorEventCode::ToolBudgetExceeded,
                format!(
                    "{} tools are visible to the agent, over the budget of {}",
                    &(visible as u64).to_string(),
                    &(self.config.tool_budget as u64).to_string()
                ),
                None,
            );
        }
        self.life.pump(&mut self.env, now);
    }

    // ----- bridges -------------------------------------------------------

    /// Attaches a bridge and sends its first manifest (possibly empty).
    pub fn attach(&mut self, options: BridgeOptions) -> BridgeId {
        let id = self.env.bridges.attach(options);
        self.send_manifest(id);
        id
    }

    /// Detaches a bridge: its queued calls are dropped, its running calls
    /// aborted (their results are no longer sent; each keeps its id and its
    /// scope until it settles or its grace period ends, see
    /// `drop_calls_of`), its transport closed.
    pub fn detach(&mut self, bridge: BridgeId, now: u64) {
        if !self.env.bridges.detach(bridge) {
            return;
        }
        self.life.drop_calls_of(&mut self.env, bridge, now);
        self.env.out.action(Action::Close { bridge });
        self.life.pump(&mut self.env, now);
    }

    fn send_manifest(&mut self, bridge: BridgeId) {
        let message = PageToAgent::Manifest(Manifest {
            protocol: ProtocolV1,
            client_id: self.env.bridges.client_id().to_owned(),
            rev: self.env.registry.rev(),
            tools: self.manifest(Caller::Inapp),
        });
        self.env.send(bridge, message);
    }

    /// Rule 8: bounded, parsed, filtered by clientId, then validated.
    pub fn handle_inbound(&mut self, bridge: BridgeId, text: &str, now: u64) {
        self.inbound(bridge, text, false, now);
    }

    /// A WebSocket text frame for `bridge`, unread by its transport: as
    /// [`Toolmark::handle_inbound`], but a frame that is not JSON text is
    /// dropped silently, whatever its size (the spec: "Non-JSON, binary and
    /// oversized frames are dropped", before the bridge's own limit). So
    /// the text is read once, by the bridge; only a text it refuses as
    /// too large or malformed is read again for its JSON syntax.
    pub fn handle_inbound_frame(&mut self, bridge: BridgeId, text: &str, now: u64) {
        self.inbound(bridge, text, true, now);
    }

    fn inbound(&mut self, bridge: BridgeId, text: &str, frame: bool, now: u64) {
        let Some(options) = self.env.bridges.options(bridge) else {
            return;
        };
        // Rule 1: another page's message (`Ok(None)`) is ignored silently.
        match parse_for_page(
            text,
            options.max_message_bytes,
            self.env.bridges.client_id(),
        ) {
            Ok(None) => {}
            Ok(Some(AgentToPage::Call(call))) => {
                self.life.inbound_call(&mut self.env, bridge, call, now)
            }
            Ok(Some(AgentToPage::Describe(describe))) => {
                self.inbound_describe(bridge, describe.id, &describe.tool)
            }
            Ok(Some(AgentToPage::Cancel(cancel))) => {
                self.life
                    .cancel_from_bridge(&mut self.env, bridge, &cancel.id, now)
            }
            // An empty id could not be answered in a valid `result`: dropped.
            Err(Rejection::UnsupportedProtocol {
                id: Some(id),
                client_id: Some(client_id),
            }) if client_id == self.env.bridges.client_id() && !id.is_empty() => {
                // Rule 4: answered, once.
                if !self.life.is_duplicate(&self.env.bridges, &id) {
                    let result = ToolResult::error(error_message::UNSUPPORTED_PROTOCOL);
                    self.env.answer_bridge(bridge, &id, result);
                }
            }
            Err(Rejection::TooLarge { .. } | Rejection::Malformed { .. })
                if frame && !is_json_text(text) => {}
            Err(rejection) => self.invalid_message(&rejection),
        }
    }

    /// Whether a message of `units` UTF-16 units (its `JSON.stringify`
    /// text) is read for `bridge`: one longer than the bridge's limit in
    /// units is longer in UTF-8 bytes too, so it is refused unread
    /// ([`Toolmark::handle_inbound_unread`]) and never copied into wasm
    /// memory. `false` for a bridge that is not attached.
    pub fn inbound_reads(&self, bridge: BridgeId, units: usize) -> bool {
        self.env
            .bridges
            .options(bridge)
            .is_some_and(|options| units <= options.max_message_bytes)
    }

    /// A message [`Toolmark::inbound_reads`] left unread: dropped with an
    /// `invalid_message` event, as one over the limit in bytes is (before
    /// the clientId filter: its size is all that is known of it).
    pub fn handle_inbound_unread(&mut self, bridge: BridgeId, units: usize) {
        if let Some(options) = self.env.bridges.options(bridge) {
            let limit = options.max_message_bytes;
            if units > limit {
                self.invalid_message(&Rejection::TooLong { units, limit });
            }
        }
    }

    /// A message the transport handed over that has no JSON text (see
    /// [`Rejection::NotJson`]): dropped with an `invalid_message` event, as
    /// malformed text is.
    pub fn handle_inbound_not_json(&mut self, bridge: BridgeId) {
        if self.env.bridges.options(bridge).is_some() {
            self.invalid_message(&Rejection::NotJson);
        }
    }

    fn invalid_message(&mut self, rejection: &Rejection) {
        self.env
            .out
            .error(ErrorEventCode::InvalidMessage, rejection.message(), None);
    }

    fn inbound_describe(&mut self, bridge: BridgeId, id: String, tool: &str) {
        let env = &mut self.env;
        if self.life.is_duplicate(&env.bridges, &id) {
            return;
        }
        let entry = env
            .registry
            .by_name(tool)
            .filter(|t| env.policy.visible(Caller::Inapp, &t.def.hints))
            .map(Tool::manifest);
        let result = match entry {
            Some(entry) => ToolResult::Ok {
                data: Some(entry.to_value().into()),
            },
            None => env.refused(RefusedCode::UnknownTool, "No such tool"),
        };
        env.answer_bridge(bridge, &id, result);
    }

    /// A failure the page's JS reported (a transport's `send` or `close`,
    /// a WebMCP registration): an error event, queued with the others.
    pub fn handle_failure(&mut self, code: ErrorEventCode, message: String, tool: Option<String>) {
        self.env.out.error(code, message, tool);
    }

    /// A connection state the bridge's transport reported: a `status`
    /// event, and a `transport_failed` error event when it ends an attempt
    /// that never opened ([`crate::transport::status`]). Ignored once the
    /// bridge detached.
    pub fn handle_transport_status(&mut self, bridge: BridgeId, status: Status) {
        let Some(failed_attempt) = self.env.bridges.observe_status(bridge, &status) else {
            return;
        };
        self.env.out.event(Event::Status { bridge, status });
        if let Some(message) = failed_attempt {
            self.env
                .out
                .error(ErrorEventCode::TransportFailed, message, None);
        }
    }

    /// A state the bridge's transport reported that describes none (an
    /// unknown `state`, a field of the wrong type): a `transport_failed`
    /// event saying what it must be. Ignored once the bridge detached.
    pub fn handle_unreadable_status(&mut self, bridge: BridgeId) {
        if self.env.bridges.options(bridge).is_some() {
            self.env.out.error(
                ErrorEventCode::TransportFailed,
                String::from(
                    "bridge: the transport's status (transport.status or onStatus) is not \
                     connecting, open, reconnecting or closed",
                ),
                None,
            );
        }
    }

    /// Whether an aborted run is in its grace period: its call is answered
    /// at a deadline at the latest, so a host that exits once only timers
    /// are left (Node) keeps its timer alive meanwhile. A confirmation's
    /// expiry holds no host: the person may never come.
    pub fn awaits_grace(&self) -> bool {
        self.life.awaits_grace()
    }

    /// Deadlines: expired confirmations, and aborted runs out of grace.
    pub fn handle_timeout(&mut self, now: u64) {
        self.life.handle_timeout(&mut self.env, now);
    }

    // ----- calls, confirmations, undo -----------------------------------

    /// `tm.call(name, input, { caller, rev })`: completes with the result.
    pub fn call(
        &mut self,
        name: &str,
        input_json: &str,
        caller: Caller,
        rev: Option<u64>,
        now: u64,
    ) -> Handle {
        let request = PageRequest {
            name,
            input_json,
            caller,
            rev,
            held: false,
        };
        self.life.call(&mut self.env, request, now)
    }

    /// A page call held through a deferred confirmation (a WebMCP
    /// `execute`, whose agent has no protocol for `needs_confirmation`):
    /// like [`Toolmark::call`], but a tool that needs a human completes only
    /// when the confirmation ends: with the approved run's result,
    /// `cancelled operator` when rejected, `refused confirmation_expired`
    /// when it expires, `cancelled signal` when aborted meanwhile.
    pub fn call_held(&mut self, name: &str, input_json: &str, caller: Caller, now: u64) -> Handle {
        let request = PageRequest {
            name,
            input_json,
            caller,
            rev: None,
            held: true,
        };
        self.life.call(&mut self.env, request, now)
    }

    /// `tm.call`, or WebMCP's `execute` (`call.held`), as the page gave it.
    /// One whose signal had aborted already completes `cancelled signal` at
    /// once, with nothing looked up, validated or run (as `fetch` refuses an
    /// aborted signal); else as [`Toolmark::call`] or [`Toolmark::call_held`].
    pub fn page_call(&mut self, name: &str, call: &PageCall, now: u64) -> Handle {
        match (call.signal, call.held) {
            (SignalUse::Abort, _) => self.life.aborted_request(&mut self.env),
            (_, true) => self.call_held(name, &call.input_json, call.caller, now),
            (_, false) => self.call(name, &call.input_json, call.caller, call.rev, now),
        }
    }

    /// The `signal` of a page call was aborted. A held call is cancelled in
    /// whichever stage it is: its own run, its pending confirmation (taken
    /// out of the pending list), or the approved run.
    pub fn abort(&mut self, handle: Handle, now: u64) {
        self.life.abort(&mut self.env, handle, now)
    }

    /// `tm.confirmPending(confirmId, approve)`: completes with the final result,
    /// which also goes to the requesting bridge as `confirmed`.
    pub fn confirm(&mut self, confirm_id: &str, approve: bool, now: u64) -> Handle {
        self.life.confirm(&mut self.env, confirm_id, approve, now)
    }

    /// `tm.undo(callId)`: runs the restorer kept for that call, once.
    pub fn undo(&mut self, call_id: &str) -> Handle {
        self.life.undo(&mut self.env, call_id)
    }

    /// The pending deferred confirmations, oldest first.
    pub fn pending_confirmations(&self) -> Vec<PendingView> {
        self.life.pending_confirmations()
    }

    /// `ctx.confirm` was used by a run: the tool to name when its caller
    /// has an inline confirmation path (a human, with the page's handler).
    pub fn ctx_confirm(&mut self, run: RunId) -> Option<String> {
        self.life.ctx_confirm(&mut self.env, run)
    }

    /// The person's answer to that `ctx.confirm`, as JS gave it (`Some`
    /// for a boolean): whether it approves ([`approves`], while the run
    /// still runs).
    pub fn ctx_confirmed(&self, run: RunId, answer: Option<bool>) -> bool {
        self.life.ctx_confirmed(run, answer)
    }

    /// A run's `snapshot` settled, `restorer` whether it returned a
    /// function: `true` when JS keeps that restorer under the run (if any)
    /// and calls `run`; `false` when the call was cancelled meanwhile:
    /// neither, and the run is over (settled here as aborted). `false` too,
    /// changing nothing, for a run that asked for no snapshot or is over. A
    /// snapshot that returned no restorer gives its call no undo.
    pub fn handle_snapshot_taken(&mut self, run: RunId, restorer: bool, now: u64) -> bool {
        self.life
            .handle_snapshot_taken(&mut self.env, run, restorer, now)
    }

    /// JS has no functions for the tool of `run` (it was unregistered
    /// after the core asked for the run, validation, preparation or form
    /// state and before JS started it): the call is answered as one whose
    /// tool is gone (`stale` / `unknown_tool`, or `stale` after approval),
    /// not run.
    pub fn handle_tool_gone(&mut self, run: RunId, now: u64) {
        self.life.handle_tool_gone(&mut self.env, run, now)
    }

    /// A tool run settled.
    pub fn handle_outcome(&mut self, run: RunId, outcome: Outcome, now: u64) {
        self.life.handle_outcome(&mut self.env, run, outcome, now)
    }

    /// Dev mode: what the tool's Standard Schema `outputSchema` (which
    /// only JS can run) said of the value the run returned, before its
    /// outcome: an `output_invalid` event for the first issue, or for a
    /// validator that threw (`Err`, its detail). The value still goes out.
    /// (JSON Schema outputs are checked in [`Toolmark::handle_outcome`].)
    pub fn handle_output_checked(&mut self, run: RunId, checked: Result<Vec<Issue>, String>) {
        self.life.handle_output_checked(&mut self.env, run, checked)
    }

    /// A Standard Schema validation finished.
    /// With `Valid(Some(_))` JS keeps the value itself under `run` until a
    /// `Run` uses it or `ForgetValidated` says no run will.
    pub fn handle_validated(&mut self, run: RunId, validated: Validated, now: u64) {
        self.life
            .handle_validated(&mut self.env, run, validated, now)
    }

    /// A tool's `summary` / `changes` / form state for a confirmation.
    pub fn handle_prepared(
        &mut self,
        run: RunId,
        prepared: Result<Prepared, Unprepared>,
        now: u64,
    ) {
        self.life.handle_prepared(&mut self.env, run, prepared, now)
    }

    /// The form state read again at approval: a change means `refused stale`.
    pub fn handle_state(&mut self, run: RunId, state: Result<Option<String>, String>, now: u64) {
        self.life.handle_state(&mut self.env, run, state, now)
    }

    /// A restorer ran (for `tm.undo`).
    pub fn handle_restored(&mut self, run: RunId, restored: Result<(), String>) {
        self.life.handle_restored(&mut self.env, run, restored)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_boolean_answers_a_confirmation_and_only_true_approves() {
        assert!(approves(Some(true)));
        assert!(!approves(Some(false)));
        assert!(!approves(None));
        assert_eq!(approve_given(Some(true)), Ok(true));
        assert_eq!(approve_given(Some(false)), Ok(false));
        assert_eq!(approve_given(None), Err(APPROVE_NOT_BOOLEAN));
    }

    #[test]
    fn counts_default_when_absent_or_not_finite() {
        assert_eq!(Config::tool_budget_from(&Given::Undefined), Ok(40));
        assert_eq!(Config::tool_budget_from(&Given::Null), Ok(40));
        assert_eq!(
            Config::confirm_expiry_ms_from(&Given::Number(f64::INFINITY)),
            Ok(600_000)
        );
        assert_eq!(
            Config::abort_grace_ms_from(&Given::Number(f64::NAN)),
            Ok(3_000)
        );
        let defaults = Config::default();
        assert_eq!(defaults.tool_budget, DEFAULT_TOOL_BUDGET);
        assert_eq!(defaults.confirm_expiry_ms, DEFAULT_CONFIRM_EXPIRY_MS);
        assert_eq!(defaults.abort_grace_ms, DEFAULT_ABORT_GRACE_MS);
    }

    #[test]
    fn counts_take_whole_numbers_from_zero() {
        assert_eq!(Config::tool_budget_from(&Given::Number(0.0)), Ok(0));
        assert_eq!(
            Config::tool_budget_from(&Given::Number(1e300)),
            Ok(usize::MAX)
        );
        assert_eq!(Config::confirm_expiry_ms_from(&Given::Number(1.0)), Ok(1));
        assert_eq!(Config::abort_grace_ms_from(&Given::Number(0.0)), Ok(0));
    }

    #[test]
    fn each_count_refuses_with_its_own_name() {
        let refused = Given::Number(1.5);
        assert_eq!(
            Config::tool_budget_from(&refused),
            Err("createToolmark: toolBudget must be a whole number >= 0")
        );
        assert_eq!(
            Config::confirm_expiry_ms_from(&Given::Number(-1.0)),
            Err("createToolmark: confirmExpiryMs must be a whole number >= 0")
        );
        assert_eq!(
            Config::abort_grace_ms_from(&Given::Text(String::from("5"))),
            Err("createToolmark: abortGraceMs must be a whole number >= 0")
        );
    }
}
