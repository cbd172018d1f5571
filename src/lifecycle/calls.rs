//! A call's lifecycle, from a bridge's `call` or a page request to its one
//! answer: admitted (registry, policy, rule 5), queued in its scope's lane,
//! validated (in Rust, or by JS for a Standard Schema), confirmed first
//! when the policy says so (see [`super::confirmations`]), run by JS,
//! aborted with a grace period, answered. `Calls` owns the calls in
//! flight and the runs abandoned after their grace period; the `impl
//! CallLife` below moves a call from stage to stage.

use crate::vecmap::Queue;

use super::{CallLife, Env};
use crate::bridges::{BridgeId, IdKey};
use crate::given::{self, Given, GivenText};
use crate::ids::new_id;
use crate::lanes::{over_input_budget, CallKey};
use crate::outputs::{Action, Handle, KeptValue, PrepareOrder, RunId, RunOrder};
use crate::policy::{Caller, ConfirmMode, Decision};
use crate::prelude::*;
use crate::protocol::codes::{error_message, refused_message};
use crate::protocol::{
    field_changes_from_value, parse_value, to_json, Call as CallMessage, CancelledBy, Data,
    ErrorEventCode, FieldChange, Issue, JsonText, RefusedCode, ToolResult,
};
use crate::registry::{ScopeId, ToolKey, Validator};
use hashbrown::HashSet;
use serde_json::Value;

/// Abandoned runs remembered to report `late_result`.
const ABANDONED_MEMORY: usize = 1000;

/// How a tool run settled, as JS saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Returned a value: its JSON text (`JSON.stringify`), `None` for `undefined`.
    Ok(Option<String>),
    /// Threw or rejected (the detail goes to the `tool_threw` event only).
    /// A run the core aborted that throws ended by its signal: the core
    /// reads it as [`Outcome::Aborted`].
    Threw(String),
    /// Returned something JSON cannot carry.
    NotSerializable(String),
    /// Rejected because its signal was aborted.
    Aborted,
}

/// A result JSON cannot carry: `error "Result not serializable"`, and the
/// `transport_failed` event saying why.
fn not_serializable(env: &mut Env, tool_name: String, detail: &str) -> ToolResult {
    env.out.error(
        ErrorEventCode::TransportFailed,
        format!("result of '{tool_name}' is not serializable: {detail}"),
        Some(tool_name),
    );
    ToolResult::error(error_message::NOT_SERIALIZABLE)
}

/// Why what a confirmation shows (`summary`, `changes`, the form state)
/// could not be had.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unprepared {
    /// A function threw, or gave what its rule refuses: the `tool_threw`
    /// event's detail.
    Threw(String),
    /// One gave what JSON cannot carry (NaN, a BigInt, a cycle…): answered
    /// as a result that is not serializable.
    NotSerializable(String),
}

/// What JS's validation of a Standard Schema input said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Validated {
    /// Valid; `Some` carries the JSON text of the (possibly transformed) value.
    Valid(Option<String>),
    Invalid(Vec<Issue>),
    Threw(String),
    /// Valid, but its value is not JSON-safe, and why
    /// ([`crate::given::NotJson::reason`]): the tool fails rather than run
    /// on the raw input.
    NotJson(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Origin {
    /// A `call` from a bridge, answered by a `result` with the call's
    /// `call_id` (a bridge call's id is its call id).
    Bridge(BridgeId),
    /// A page request.
    Local(Handle),
    /// A page request held through a deferred confirmation (a WebMCP
    /// `execute`): it completes with the human's decision's outcome, never
    /// with `needs_confirmation`.
    Held(Handle),
}

/// Where the call that created a confirmation came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Requester {
    /// A bridge: its `confirmed` goes back there (or, once it has been
    /// detached, to the bridges attached then).
    Bridge(u32),
    /// `tm.call` in the page: no `confirmed` message.
    Local,
    /// A held page request ([`Toolmark::call_held`](crate::machine::Toolmark::call_held)): completed with the
    /// outcome instead of a `confirmed` message.
    Waiting(Handle),
}

/// `tm.call(name, input, { caller, rev, signal })` as the page gave it.
#[derive(Debug, Clone, PartialEq)]
pub struct PageCall {
    /// The input's JSON text: an absent input is `{}`; one JSON cannot write
    /// is `null`, which the tool's input schema then judges.
    pub input_json: String,
    pub caller: Caller,
    /// The registry revision the page saw, for rule 6's stale answer.
    pub rev: Option<u64>,
    pub signal: SignalUse,
    /// Held through a deferred confirmation (WebMCP's `execute`, whose
    /// agent has no protocol for `needs_confirmation`).
    pub held: bool,
}

/// A page request's `signal` option, as the boundary found it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GivenSignal {
    /// `undefined` or `null`.
    Absent,
    /// `signal.aborted` is true.
    Aborted,
    /// Not aborted, with an `addEventListener` method.
    Listenable,
    /// Neither: no `AbortSignal`.
    Other,
}

/// What a page request does with its `signal`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SignalUse {
    None,
    /// Aborted before the request: it completes `cancelled signal` and
    /// nothing is made ([`Toolmark::page_call`](crate::machine::Toolmark::page_call)).
    Abort,
    /// Its `abort` event listened to before the request is made; `required`:
    /// a listener that cannot be added refuses the request (nothing is
    /// made), else the request goes on uncancellable.
    Listen {
        required: bool,
    },
}

impl SignalUse {
    /// A held request's signal (a WebMCP `execute`'s, from the browser's
    /// agent): one that is no `AbortSignal` leaves the call uncancellable
    /// by the agent, as no signal does. `withdrawn`: the registration the
    /// `execute` came from was withdrawn before the call (the tool gone or
    /// changed, the plugin detached), which cancels it as an aborted signal
    /// does, whatever tool has the name now.
    pub fn held(signal: GivenSignal, withdrawn: bool) -> SignalUse {
        match signal {
            _ if withdrawn => SignalUse::Abort,
            GivenSignal::Aborted => SignalUse::Abort,
            GivenSignal::Listenable => SignalUse::Listen { required: false },
            GivenSignal::Absent | GivenSignal::Other => SignalUse::None,
        }
    }
}

/// The option of `tm.call` that [`PageCall::from_given`] refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefusedCallOption {
    /// The options argument itself: not absent and not an object.
    Options,
    /// Not `'human'` or `'inapp'` ([`Caller::unknown`] says so).
    Caller,
    Rev,
    /// No `AbortSignal`, or one whose `addEventListener` threw.
    Signal,
}

impl RefusedCallOption {
    /// The message for the value the page gave, shown as `String(value)`.
    pub fn message(self, shown: &str) -> String {
        match self {
            RefusedCallOption::Options => format!("call: options must be an object (got {shown})"),
            RefusedCallOption::Caller => Caller::unknown("call", shown),
            RefusedCallOption::Rev => {
                format!("call: rev must be a registry revision, a whole number >= 0 (got {shown})")
            }
            RefusedCallOption::Signal => {
                format!("call: signal must be an AbortSignal (got {shown})")
            }
        }
    }
}

impl PageCall {
    /// `options` absent or an object (a caller given as the options, as in
    /// `call(name, input, 'inapp')`, is refused, not run as the default
    /// `'human'`); `caller` absent is `'human'`; `rev` absent is none, else
    /// a whole number `>= 0` (a revision the registry could have had: a
    /// fraction, a negative or a numeric string is refused, not rounded
    /// into one); `signal` absent or an `AbortSignal`, which must take a
    /// listener.
    pub fn from_given(
        input: GivenText,
        options: &Given,
        caller: &Given,
        rev: &Given,
        signal: GivenSignal,
    ) -> Result<PageCall, RefusedCallOption> {
        given::options_object(options, RefusedCallOption::Options)?;
        let caller = Caller::from_given(caller, Caller::Human).ok_or(RefusedCallOption::Caller)?;
        let rev = match rev {
            Given::Undefined | Given::Null => None,
            Given::Number(n) => Some(given::whole(*n).ok_or(RefusedCallOption::Rev)?),
            _ => return Err(RefusedCallOption::Rev),
        };
        let signal = match signal {
            GivenSignal::Absent => SignalUse::None,
            GivenSignal::Aborted => SignalUse::Abort,
            GivenSignal::Listenable => SignalUse::Listen { required: true },
            GivenSignal::Other => return Err(RefusedCallOption::Signal),
        };
        Ok(PageCall {
            input_json: PageCall::input_text(input),
            caller,
            rev,
            signal,
            held: false,
        })
    }

    /// A WebMCP `execute`: the browser's agent calls as `inapp`, held
    /// through a deferred confirmation; its signal as [`SignalUse::held`].
    pub fn held(input: GivenText, signal: GivenSignal, withdrawn: bool) -> PageCall {
        PageCall {
            input_json: PageCall::input_text(input),
            caller: Caller::Inapp,
            rev: None,
            signal: SignalUse::held(signal, withdrawn),
            held: true,
        }
    }

    /// A page call's input as JSON text.
    fn input_text(input: GivenText) -> String {
        match input {
            GivenText::Undefined => String::from("{}"),
            GivenText::Json(text) => text,
            GivenText::NotJson => String::from("null"),
        }
    }
}

/// What a tool's `summary` / `changes` / form state gave for a confirmation.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Prepared {
    pub summary: Option<String>,
    pub changes: Option<Vec<FieldChange>>,
    pub state: Option<String>,
}

impl Prepared {
    /// The JSON text of `{ summary, changes, state }` as the tool's functions
    /// gave them (`None`: JSON cannot carry them): `summary` a string,
    /// `changes` FieldChanges, the state a string or any JSON (as its text);
    /// `null` or absent is none.
    pub fn from_text(text: Option<&str>) -> Result<Prepared, String> {
        let text = text.ok_or_else(|| String::from("summary/changes are not JSON"))?;
        let value = parse_value(text).map_err(|e| e.message())?;
        let summary = match value.get("summary") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(_) => return Err("summary() must return a string".into()),
        };
        let changes =
            match value.get("changes") {
                None | Some(Value::Null) => None,
                Some(changes) => Some(field_changes_from_value(changes).map_err(|_| {
                    String::from("changes() must return [{ path, before?, after? }]")
                })?),
            };
        let state = match value.get("state") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.clone()),
            // `to_json`, not `Value`'s `Display`: one serde_json serializer in the module.
            Some(other) => Some(to_json(other)),
        };
        Ok(Prepared {
            summary,
            changes,
            state,
        })
    }
}

#[derive(Debug, Clone)]
pub(crate) struct Approval {
    pub(crate) confirm_id: String,
    pub(crate) requester: Requester,
    pub(crate) state: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stage {
    /// Waiting in its scope's lane.
    Queued,
    /// Started (the lane's active call), nothing asked of JS right now.
    Active,
    Validating(RunId),
    Preparing(RunId),
    ReadingState(RunId),
    /// Its tool runs in JS; `snapshot`: the run takes one first (decided
    /// at its start, as the tool may be gone by its end); `restorer`: JS
    /// keeps one for it, or will (cleared when its snapshot gave none).
    Running {
        run: RunId,
        snapshot: bool,
        restorer: bool,
    },
    /// Its run was aborted and has until `deadline` to settle.
    Aborting {
        run: RunId,
        deadline: u64,
        snapshot: bool,
        restorer: bool,
    },
}

impl Stage {
    fn run(self) -> Option<RunId> {
        match self {
            Stage::Queued | Stage::Active => None,
            Stage::Validating(run)
            | Stage::Preparing(run)
            | Stage::ReadingState(run)
            | Stage::Running { run, .. }
            | Stage::Aborting { run, .. } => Some(run),
        }
    }
}

/// What an `Active` call asks of JS before its run ([`Calls::ask`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ask {
    /// The input, by the tool's Standard Schema (`Validating`).
    Validate,
    /// What its confirmation shows (`Preparing`).
    Prepare,
    /// The form state again, at approval (`ReadingState`).
    ReadState,
}

/// A call as it was admitted: who asked for which tool, under which id.
#[derive(Debug)]
pub(crate) struct Admitted {
    pub(crate) origin: Origin,
    pub(crate) tool: ToolKey,
    pub(crate) tool_name: String,
    pub(crate) scope: ScopeId,
    pub(crate) caller: Caller,
    pub(crate) call_id: String,
    pub(crate) rev: Option<u64>,
}

/// A call in flight.
#[derive(Debug)]
pub(crate) struct Call {
    pub(crate) key: CallKey,
    pub(crate) admitted: Admitted,
    /// Its input's text; `None` once its run started (JS holds the input).
    pub(crate) input: Option<JsonText>,
    pub(crate) stage: Stage,
    pub(crate) approval: Option<Approval>,
    /// The value JS keeps for this call's run.
    pub(crate) kept: Option<KeptValue>,
}

/// A page request for a call: `tm.call`, or a WebMCP `execute` held
/// through a deferred confirmation.
pub(crate) struct PageRequest<'a> {
    pub(crate) name: &'a str,
    pub(crate) input_json: &'a str,
    pub(crate) caller: Caller,
    pub(crate) rev: Option<u64>,
    /// Held: it completes with the confirmation's outcome ([`Origin::Held`]).
    pub(crate) held: bool,
}

/// An admitted call, before it is queued.
#[derive(Debug)]
pub(crate) struct NewCall {
    pub(crate) admitted: Admitted,
    pub(crate) input: JsonText,
    pub(crate) approval: Option<Approval>,
    /// The value JS keeps for an approved call's run.
    pub(crate) kept: Option<KeptValue>,
}

/// The calls in flight, in key order (which is arrival order), and the
/// run counter (runs are unique per page).
#[derive(Debug, Default)]
pub(crate) struct Calls {
    list: Vec<Call>,
    /// The ids of the calls in `list` that came from a bridge (rule 2's
    /// in-flight half, looked up on every inbound message). One call per
    /// id: a bridge call is added only when its id is in flight nowhere.
    bridge_ids: HashSet<IdKey>,
    next_key: u64,
    next_run: u64,
    /// Bytes of the input texts the calls in `list` hold.
    input_bytes: usize,
    /// Runs abandoned after their grace period, with their tool's name
    /// and whether they took a snapshot first, oldest first (at most
    /// [`ABANDONED_MEMORY`]).
    abandoned: Queue<(RunId, String, bool)>,
}

impl Calls {
    /// A new call, queued.
    pub(crate) fn add(&mut self, new: NewCall) -> CallKey {
        let key = CallKey(self.next_key);
        self.next_key += 1;
        if matches!(new.admitted.origin, Origin::Bridge(_)) {
            self.bridge_ids.insert(IdKey::of(&new.admitted.call_id));
        }
        self.input_bytes += new.input.len();
        self.list.push(Call {
            key,
            admitted: new.admitted,
            input: Some(new.input),
            stage: Stage::Queued,
            approval: new.approval,
            kept: new.kept,
        });
        key
    }

    pub(crate) fn new_run(&mut self) -> RunId {
        let run = RunId(self.next_run);
        self.next_run += 1;
        run
    }

    pub(crate) fn len(&self) -> usize {
        self.list.len()
    }

    /// `list` is in key order: keys only grow, removal keeps the order.
    fn index(&self, key: CallKey) -> Option<usize> {
        self.list.binary_search_by_key(&key, |call| call.key).ok()
    }

    pub(crate) fn get(&self, key: CallKey) -> Option<&Call> {
        self.list.get(self.index(key)?)
    }

    pub(crate) fn get_mut(&mut self, key: CallKey) -> Option<&mut Call> {
        let index = self.index(key)?;
        self.list.get_mut(index)
    }

    /// Takes a call out, keeping the rest in key order.
    pub(crate) fn remove(&mut self, key: CallKey) -> Option<Call> {
        let index = self.index(key)?;
        let call = (index < self.list.len()).then(|| self.list.remove(index))?;
        if matches!(call.admitted.origin, Origin::Bridge(_)) {
            self.bridge_ids.remove(&IdKey::of(&call.admitted.call_id));
        }
        self.input_bytes = self.input_bytes.saturating_sub(Self::held(&call));
        Some(call)
    }

    /// Bytes of the input texts held by the calls in flight.
    pub(crate) fn input_bytes(&self) -> usize {
        self.input_bytes
    }

    /// A Standard Schema's validated value replaces the input, and JS keeps
    /// the live value under `kept` for the run.
    pub(crate) fn replace_input(&mut self, key: CallKey, input: JsonText, kept: Option<KeptValue>) {
        let Some(index) = self.index(key) else {
            return;
        };
        if let Some(call) = self.list.get_mut(index) {
            let old = Self::held(call);
            self.input_bytes = (self.input_bytes + input.len()).saturating_sub(old);
            call.input = Some(input);
            call.kept = kept;
        }
    }

    /// A call's run starts (`Running`, from `Active` or from reading its
    /// form state): the new run, the value JS kept for it (used up) and its
    /// input's text, handed to JS (the call holds none from then on).
    /// `None` from any other stage.
    pub(crate) fn start_running(
        &mut self,
        key: CallKey,
        snapshot: bool,
    ) -> Option<(RunId, Option<KeptValue>, String)> {
        let index = self.index(key)?;
        let from = self.list.get(index)?.stage;
        if !matches!(from, Stage::Active | Stage::ReadingState(_)) {
            return None;
        }
        let run = self.new_run();
        let call = self.list.get_mut(index)?;
        call.stage = Stage::Running {
            run,
            snapshot,
            restorer: snapshot,
        };
        let input = call.input.take().unwrap_or_else(JsonText::null);
        self.input_bytes = self.input_bytes.saturating_sub(input.len());
        Some((run, call.kept.take(), input.into_string()))
    }

    fn held(call: &Call) -> usize {
        call.input.as_ref().map_or(0, JsonText::len)
    }

    /// A call's input (`null` once its run started: nothing asks then).
    pub(crate) fn input(call: &Call) -> JsonText {
        call.input.clone().unwrap_or_else(JsonText::null)
    }

    /// `Queued` → `Active` (its lane's turn), or `Validating` → `Active`
    /// (JS found its input valid); from any other stage, nothing.
    pub(crate) fn activate(&mut self, key: CallKey) {
        if let Some(call) = self.get_mut(key) {
            if matches!(call.stage, Stage::Queued | Stage::Validating(_)) {
                call.stage = Stage::Active;
            }
        }
    }

    /// `Active` → asking JS what `ask` names, under a new run. `None` (and
    /// no run) for a call that is not `Active`.
    pub(crate) fn ask(&mut self, key: CallKey, ask: Ask) -> Option<RunId> {
        let index = self.index(key)?;
        if self.list.get(index)?.stage != Stage::Active {
            return None;
        }
        let run = self.new_run();
        self.list.get_mut(index)?.stage = match ask {
            Ask::Validate => Stage::Validating(run),
            Ask::Prepare => Stage::Preparing(run),
            Ask::ReadState => Stage::ReadingState(run),
        };
        Some(run)
    }

    /// `Running` → `Aborting` until `deadline`: the run to abort. `None`
    /// for a call whose run is not running (an aborting one keeps its
    /// deadline: a repeated cancel does not move it).
    pub(crate) fn abort_run(&mut self, key: CallKey, deadline: u64) -> Option<RunId> {
        let call = self.get_mut(key)?;
        let Stage::Running {
            run,
            snapshot,
            restorer,
        } = call.stage
        else {
            return None;
        };
        call.stage = Stage::Aborting {
            run,
            deadline,
            snapshot,
            restorer,
        };
        Some(run)
    }

    /// The running (or aborting) call's snapshot gave no restorer: none is
    /// kept for it, to use or to drop.
    pub(crate) fn without_restorer(&mut self, key: CallKey) {
        if let Some(call) = self.get_mut(key) {
            if let Stage::Running { restorer, .. } | Stage::Aborting { restorer, .. } =
                &mut call.stage
            {
                *restorer = false;
            }
        }
    }

    /// The call whose current stage waits for `run`.
    pub(crate) fn waiting_for(&self, run: RunId) -> Option<(CallKey, &Call)> {
        let call = self.list.iter().find(|c| c.stage.run() == Some(run))?;
        Some((call.key, call))
    }

    /// The call whose tool runs as `run`, neither aborted nor over: the
    /// one a `ctx` of that run still acts for.
    pub(crate) fn running(&self, run: RunId) -> Option<&Call> {
        self.waiting_for(run)
            .map(|(_, call)| call)
            .filter(|call| matches!(call.stage, Stage::Running { .. }))
    }

    /// The first call, in key order, that `matches`.
    fn first(&self, matches: impl Fn(&Call) -> bool) -> Option<CallKey> {
        self.list.iter().find(|c| matches(c)).map(|c| c.key)
    }

    /// The call in flight from `bridge` under `id`.
    pub(crate) fn by_bridge_id(&self, bridge: BridgeId, id: &str) -> Option<CallKey> {
        self.first(|c| c.admitted.origin == Origin::Bridge(bridge) && c.admitted.call_id == id)
    }

    /// Rule 2's in-flight half: a call under `id` from any bridge.
    pub(crate) fn in_flight_from_a_bridge(&self, id: &IdKey) -> bool {
        self.bridge_ids.contains(id)
    }

    /// The call of a page request.
    pub(crate) fn of_request(&self, handle: Handle) -> Option<CallKey> {
        self.first(|c| {
            c.admitted.origin == Origin::Local(handle) || c.admitted.origin == Origin::Held(handle)
        })
    }

    /// The approved run of the confirmation a held request waits for.
    pub(crate) fn approved_for(&self, handle: Handle) -> Option<CallKey> {
        self.first(|c| {
            c.approval
                .as_ref()
                .is_some_and(|a| a.requester == Requester::Waiting(handle))
        })
    }

    /// The first call from `bridge` at or after `from`, in key order.
    pub(crate) fn first_from(&self, bridge: BridgeId, from: CallKey) -> Option<CallKey> {
        let start = self.list.partition_point(|c| c.key < from);
        self.list
            .get(start..)?
            .iter()
            .find(|c| c.admitted.origin == Origin::Bridge(bridge))
            .map(|c| c.key)
    }

    /// Rule 2's in-flight half for a plain id (tests and models).
    pub(crate) fn is_in_flight_from_a_bridge(&self, id: &str) -> bool {
        self.in_flight_from_a_bridge(&IdKey::of(id))
    }

    /// The first aborted call, in key order, out of grace at `now`.
    pub(crate) fn first_out_of_grace(&self, now: u64) -> Option<CallKey> {
        self.first(|c| matches!(c.stage, Stage::Aborting { deadline, .. } if deadline <= now))
    }

    /// The earliest end of an abort grace period.
    pub(crate) fn next_deadline(&self) -> Option<u64> {
        self.list
            .iter()
            .filter_map(|c| match c.stage {
                Stage::Aborting { deadline, .. } => Some(deadline),
                _ => None,
            })
            .min()
    }

    /// Remembers an abandoned run, forgetting the oldest beyond the memory.
    pub(crate) fn abandon(&mut self, run: RunId, tool: String, snapshot: bool) {
        if self.abandoned.len() >= ABANDONED_MEMORY {
            self.abandoned.pop_front();
        }
        self.abandoned.push_back((run, tool, snapshot));
    }

    /// An abandoned run that took a snapshot first: the one whose
    /// snapshot may still settle.
    pub(crate) fn abandoned_in_snapshot(&self, run: RunId) -> bool {
        self.abandoned
            .iter()
            .any(|(r, _, snapshot)| *r == run && *snapshot)
    }

    /// Takes an abandoned run's tool name out (it reports `late_result` once).
    pub(crate) fn take_abandoned(&mut self, run: RunId) -> Option<String> {
        let index = self.abandoned.iter().position(|(r, _, _)| *r == run)?;
        self.abandoned.remove(index).map(|(_, tool, _)| tool)
    }
}

/// Where an output fails its schema, as the `output_invalid` message says it.
fn problem_at(path: &str, message: &str) -> String {
    format!(" at '{path}': {message}")
}

impl Env {
    /// Rule 6: an unknown tool is `stale` when the caller's rev is older than
    /// ours (the tool is gone), else `unknown_tool`.
    pub(crate) fn missing_tool(&self, rev: Option<u64>) -> ToolResult {
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
    pub(crate) fn tool_gone(&self, call: &Call) -> ToolResult {
        match call.approval {
            Some(_) => self.gone_since_confirmation(),
            None => self.missing_tool(call.admitted.rev),
        }
    }

    pub(crate) fn gone_since_confirmation(&self) -> ToolResult {
        self.refused(
            RefusedCode::Stale,
            "The tool is gone since confirmation was requested",
        )
    }
    /// The one `output_invalid` event: `problem` follows "fails its output schema".
    pub(crate) fn output_invalid(&mut self, tool_name: String, problem: &str) {
        let message = format!("output of '{tool_name}' fails its output schema{problem}");
        self.out
            .error(ErrorEventCode::OutputInvalid, message, Some(tool_name));
    }
}

impl CallLife {
    /// Checks a new call against the registry, policy and lane bound; `Err`
    /// is the refusal to answer with.
    fn admit(
        &self,
        env: &Env,
        name: &str,
        caller: Caller,
        rev: Option<u64>,
        input: &JsonText,
    ) -> Result<(ToolKey, ScopeId), ToolResult> {
        let tool = env
            .registry
            .by_name(name)
            .filter(|t| env.policy.visible(caller, &t.def.hints))
            .ok_or_else(|| env.missing_tool(rev))?;
        match env.policy.decide(caller, &tool.def.hints) {
            Decision::Deny | Decision::Hide => {
                return Err(env.refused(
                    RefusedCode::NotAllowed,
                    "The caller's policy does not allow this tool",
                ))
            }
            Decision::Confirm if env.policy.confirm_mode() == ConfirmMode::None => {
                return Err(env.refused(
                    RefusedCode::NotAllowed,
                    "This tool needs a human's confirmation and there is no confirmation path",
                ))
            }
            _ => {}
        }
        if self.lanes.is_busy(tool.scope) {
            return Err(env.refused(
                RefusedCode::Busy,
                "The tool's scope already has 32 pending calls",
            ));
        }
        if over_input_budget(self.held_input_bytes(), input.len()) {
            return Err(env.refused(
                RefusedCode::Busy,
                "The page already holds 32 MiB of input for pending calls",
            ));
        }
        Ok((tool.key, tool.scope))
    }

    /// A bridge's `call`: a duplicate (rule 2) is dropped, a refusal
    /// answered, an admitted call queued.
    pub(crate) fn inbound_call(
        &mut self,
        env: &mut Env,
        bridge: BridgeId,
        call: CallMessage,
        now: u64,
    ) {
        let CallMessage {
            id,
            tool,
            input,
            rev,
            ..
        } = call;
        if self.is_duplicate(&env.bridges, &id) {
            return;
        }
        match self.admit(env, &tool, Caller::Inapp, rev, &input) {
            Err(result) => env.answer_bridge(bridge, &id, result),
            Ok((key, scope)) => {
                self.enqueue(NewCall {
                    admitted: Admitted {
                        origin: Origin::Bridge(bridge),
                        tool: key,
                        tool_name: tool,
                        scope,
                        caller: Caller::Inapp,
                        call_id: id,
                        rev,
                    },
                    input,
                    approval: None,
                    kept: None,
                });
                self.pump(env, now);
            }
        }
    }

    /// Queues an admitted call in its scope's lane.
    pub(crate) fn enqueue(&mut self, new: NewCall) -> CallKey {
        let scope = new.admitted.scope;
        let key = self.calls.add(new);
        self.lanes.push(scope, key);
        key
    }

    /// A page request's call: queued when admitted, else completed at once.
    pub(crate) fn call(&mut self, env: &mut Env, request: PageRequest<'_>, now: u64) -> Handle {
        let handle = self.new_handle();
        let origin = if request.held {
            Origin::Held(handle)
        } else {
            Origin::Local(handle)
        };
        let PageRequest {
            name,
            input_json,
            caller,
            rev,
            ..
        } = request;
        let input = match JsonText::parse(input_json) {
            Ok(input) => input,
            Err(_) => {
                env.out.complete(
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
        let call_id = match new_id(env.rng.as_mut()) {
            Ok(id) => id,
            Err(error) => {
                env.out.error(
                    ErrorEventCode::ToolThrew,
                    error.message(),
                    Some(name.into()),
                );
                env.out
                    .complete(handle, ToolResult::error(error_message::TOOL_FAILED));
                return handle;
            }
        };
        match self.admit(env, name, caller, rev, &input) {
            Err(result) => env.out.complete(handle, result),
            Ok((key, scope)) => {
                self.enqueue(NewCall {
                    admitted: Admitted {
                        origin,
                        tool: key,
                        tool_name: name.to_owned(),
                        scope,
                        caller,
                        call_id,
                        rev,
                    },
                    input,
                    approval: None,
                    kept: None,
                });
                self.pump(env, now);
            }
        }
        handle
    }

    /// A page request whose signal had aborted before it was made: answered
    /// `cancelled signal` at once, with nothing looked up, validated or run.
    pub(crate) fn aborted_request(&mut self, env: &mut Env) -> Handle {
        let handle = self.new_handle();
        env.out.complete(
            handle,
            ToolResult::Cancelled {
                by: CancelledBy::Signal,
            },
        );
        handle
    }

    /// A page request's signal aborted: its call, its approved run or its
    /// pending confirmation is cancelled.
    pub(crate) fn abort(&mut self, env: &mut Env, handle: Handle, now: u64) {
        if let Some(key) = self.calls.of_request(handle) {
            self.cancel_call(env, key, now);
        } else if let Some(key) = self.calls.approved_for(handle) {
            self.cancel_call(env, key, now);
        } else {
            self.abort_held_confirmation(env, handle);
        }
    }

    /// `cancel`: a queued call is answered `cancelled signal` at once; a
    /// running one is aborted and gets the grace period to settle.
    pub(crate) fn cancel_call(&mut self, env: &mut Env, key: CallKey, now: u64) {
        let deadline = now.saturating_add(env.settings.abort_grace_ms);
        if let Some(run) = self.calls.abort_run(key, deadline) {
            return env.out.action(Action::Abort { run });
        }
        match self.calls.get(key).map(|call| call.stage) {
            None | Some(Stage::Aborting { .. }) => {}
            Some(_) => {
                self.finish(
                    env,
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
    pub(crate) fn pump(&mut self, env: &mut Env, now: u64) {
        while let Some(key) = self.lanes.next_to_start() {
            self.calls.activate(key);
            self.start(env, key, now);
        }
    }

    fn input_text(call: &Call) -> String {
        Calls::input(call).into_string()
    }

    /// A call reaches the front of its lane.
    pub(crate) fn start(&mut self, env: &mut Env, key: CallKey, now: u64) {
        let Some(call) = self.calls.get(key) else {
            return;
        };
        let Some(tool) = env.registry.by_key(call.admitted.tool) else {
            // Unregistered while the call waited.
            return self.finish(env, key, env.tool_gone(call), now);
        };
        if call.approval.is_some() {
            if tool.def.has_state {
                let input = Self::input_text(call);
                let tool = call.admitted.tool;
                if let Some(run) = self.calls.ask(key, Ask::ReadState) {
                    env.out.action(Action::ReadState { run, tool, input });
                }
                return;
            }
            return self.start_run(env, key, now);
        }
        match &tool.input {
            Validator::Any => self.validated(env, key, now),
            Validator::Json(schema) => {
                let input = call.input.as_ref().map_or("null", JsonText::as_str);
                let issues = schema.validate_text(input, env.matcher.as_ref());
                if issues.is_empty() {
                    self.validated(env, key, now)
                } else {
                    let issues = Issue::from_schema(issues);
                    self.finish(env, key, ToolResult::invalid(issues), now)
                }
            }
            Validator::Refused(message) => {
                let issue = Issue {
                    path: String::new(),
                    message: message.clone(),
                };
                self.finish(env, key, ToolResult::invalid(vec![issue]), now)
            }
            Validator::External => {
                let input = Self::input_text(call);
                let tool = call.admitted.tool;
                if let Some(run) = self.calls.ask(key, Ask::Validate) {
                    env.out.action(Action::Validate { run, tool, input });
                }
            }
        }
    }

    /// Valid input: confirm first, or run.
    fn validated(&mut self, env: &mut Env, key: CallKey, now: u64) {
        let Some(call) = self.calls.get(key) else {
            return;
        };
        let Some(tool) = env.registry.by_key(call.admitted.tool) else {
            return self.finish(env, key, env.missing_tool(call.admitted.rev), now);
        };
        if env.policy.decide(call.admitted.caller, &tool.def.hints) != Decision::Confirm {
            return self.start_run(env, key, now);
        }
        let def = &tool.def;
        if def.has_summary || def.has_changes || def.has_state {
            let (summary, changes, state) = (def.has_summary, def.has_changes, def.has_state);
            let input = Self::input_text(call);
            let (tool, validated) = (call.admitted.tool, call.kept.as_ref().map(KeptValue::run));
            let Some(run) = self.calls.ask(key, Ask::Prepare) else {
                return;
            };
            env.out.action(Action::Prepare(PrepareOrder {
                run,
                tool,
                input,
                summary,
                changes,
                state,
                validated,
            }));
        } else {
            self.request_confirmation(env, key, Prepared::default(), now);
        }
    }

    /// Only a registered tool ever runs: one gone by now answers the call instead.
    pub(crate) fn start_run(&mut self, env: &mut Env, key: CallKey, now: u64) {
        let Some(call) = self.calls.get(key) else {
            return;
        };
        let Some((snapshot, check_output)) = env.registry.by_key(call.admitted.tool).map(|t| {
            let external = matches!(t.output, Some(Validator::External));
            (t.def.has_snapshot, env.settings.dev && external)
        }) else {
            return self.finish(env, key, env.tool_gone(call), now);
        };
        let (tool, name, caller, call_id) = (
            call.admitted.tool,
            call.admitted.tool_name.clone(),
            call.admitted.caller,
            call.admitted.call_id.clone(),
        );
        // The run uses up the kept value (JS forgets it as it starts), and
        // the input's text goes to JS: nothing after this reads it.
        let Some((run, kept, input)) = self.calls.start_running(key, snapshot) else {
            return;
        };
        env.out.action(Action::Run(RunOrder {
            run,
            tool,
            name,
            input,
            caller,
            call_id,
            snapshot,
            check_output,
            validated: kept.map(KeptValue::used),
        }));
    }

    /// The tool whose run's `ctx.confirm` may ask a human, or `None`: for a
    /// run that is over or was aborted (nobody is asked to approve what
    /// was cancelled), and with a `ctx_confirm_unavailable` event for a
    /// running one whose caller has no inline confirmation path.
    pub(crate) fn ctx_confirm(&mut self, env: &mut Env, run: RunId) -> Option<String> {
        let call = self.calls.running(run)?;
        if call.admitted.caller == Caller::Human && env.settings.inline_confirm {
            return Some(call.admitted.tool_name.clone());
        }
        let (caller, tool) = (call.admitted.caller, call.admitted.tool_name.clone());
        env.out.error(
            ErrorEventCode::CtxConfirmUnavailable,
            format!(
                "ctx.confirm is not available to caller {}: it has no inline confirmation path",
                caller.as_str()
            ),
            Some(tool),
        );
        None
    }

    /// Whether a person's `answer` to a run's `ctx.confirm` approves: only
    /// `true`, and only while the run still runs (an answer that comes
    /// after its call was cancelled approves nothing).
    pub(crate) fn ctx_confirmed(&self, run: RunId, answer: Option<bool>) -> bool {
        crate::machine::approves(answer) && self.calls.running(run).is_some()
    }

    // ----- answers from JS ----------------------------------------------

    /// A run's `snapshot` settled, `restorer` whether it gave one (a
    /// function): whether the run goes on, only while its call still runs.
    /// A snapshot that gave none leaves nothing to keep or drop: the call
    /// has no undo (`undo_unavailable`). A call cancelled meanwhile
    /// (aborting, or abandoned after its grace period, its
    /// [`Action::DropRestorer`] sent) has its work stopped before it
    /// starts, no `run` and no restorer kept: its run is over here, settled
    /// as aborted. (Any other run, one without a snapshot or over, is left
    /// as it is.)
    pub(crate) fn handle_snapshot_taken(
        &mut self,
        env: &mut Env,
        run: RunId,
        restorer: bool,
        now: u64,
    ) -> bool {
        let Some((key, call)) = self.calls.waiting_for(run) else {
            if self.calls.abandoned_in_snapshot(run) {
                self.handle_outcome(env, run, Outcome::Aborted, now);
            }
            return false;
        };
        let (Stage::Running { snapshot: true, .. } | Stage::Aborting { snapshot: true, .. }) =
            call.stage
        else {
            return false;
        };
        let goes_on = matches!(call.stage, Stage::Running { .. });
        if !restorer {
            self.calls.without_restorer(key);
        }
        if !goes_on {
            self.handle_outcome(env, run, Outcome::Aborted, now);
        }
        goes_on
    }

    /// JS has no functions for the tool of `run`'s call: the tool was
    /// unregistered by JS that ran between the order and its start (a
    /// listener of an earlier output). Nothing of it runs: the call is
    /// answered as one whose tool is gone ([`Env::tool_gone`]), or as
    /// aborted when it was cancelled meanwhile.
    pub(crate) fn handle_tool_gone(&mut self, env: &mut Env, run: RunId, now: u64) {
        let Some((key, call)) = self.calls.waiting_for(run) else {
            return;
        };
        match call.stage {
            Stage::Aborting { .. } => {
                // JS took no snapshot either: it keeps no restorer to drop.
                self.calls.without_restorer(key);
                self.handle_outcome(env, run, Outcome::Aborted, now);
            }
            _ => {
                let result = env.tool_gone(call);
                self.finish(env, key, result, now);
            }
        }
    }

    /// A run's outcome answers its call (`late_result` for an abandoned
    /// run); a snapshot run's restorer is kept on success, dropped otherwise.
    pub(crate) fn handle_outcome(&mut self, env: &mut Env, run: RunId, outcome: Outcome, now: u64) {
        let Some((key, call)) = self.calls.waiting_for(run) else {
            return self.late(env, run, &outcome);
        };
        let (Stage::Running { restorer, .. } | Stage::Aborting { restorer, .. }) = call.stage
        else {
            return;
        };
        let outcome = match outcome {
            // Spec: a cancelled call's own result is normally `cancelled
            // signal`: what an aborted run throws is its abort.
            Outcome::Threw(_) if matches!(call.stage, Stage::Aborting { .. }) => Outcome::Aborted,
            outcome => outcome,
        };
        let tool_name = call.admitted.tool_name.clone();
        let call_id = call.admitted.call_id.clone();
        let tool = env.registry.by_key(call.admitted.tool);
        let result = match outcome {
            // The text is kept as it is (`Data`): one copy of a large result.
            Outcome::Ok(text) => match text.map(Data::from_json) {
                None => ToolResult::Ok { data: None },
                Some(Ok(data)) => {
                    if env.settings.dev {
                        if let Some(Validator::Json(schema)) = tool.and_then(|t| t.output.as_ref())
                        {
                            let problem = match data.to_value() {
                                Ok(value) => schema
                                    .validate(&value, env.matcher.as_ref())
                                    .first()
                                    .map(|first| problem_at(&first.path, &first.message)),
                                Err(reason) => Some(format!(" unchecked: {reason}")),
                            };
                            if let Some(problem) = problem {
                                env.output_invalid(tool_name.clone(), &problem);
                            }
                        }
                    }
                    ToolResult::Ok { data: Some(data) }
                }
                Some(Err(reason)) => {
                    env.out.error(
                        ErrorEventCode::TransportFailed,
                        format!("result of '{tool_name}' is not serializable: {reason}"),
                        Some(tool_name.clone()),
                    );
                    ToolResult::error(error_message::NOT_SERIALIZABLE)
                }
            },
            Outcome::Threw(detail) => {
                env.out
                    .error(ErrorEventCode::ToolThrew, detail, Some(tool_name.clone()));
                ToolResult::error(error_message::TOOL_FAILED)
            }
            Outcome::NotSerializable(detail) => not_serializable(env, tool_name.clone(), &detail),
            Outcome::Aborted => ToolResult::Cancelled {
                by: CancelledBy::Signal,
            },
        };
        if restorer {
            if matches!(result, ToolResult::Ok { .. }) {
                for forgotten in self.undo.insert(&call_id, run) {
                    env.out.action(Action::DropRestorer { run: forgotten });
                }
            } else {
                env.out.action(Action::DropRestorer { run });
            }
        }
        self.finish(env, key, result, now);
    }

    /// A Standard Schema output check, in dev mode: `output_invalid` on failure.
    pub(crate) fn handle_output_checked(
        &mut self,
        env: &mut Env,
        run: RunId,
        checked: Result<Vec<Issue>, String>,
    ) {
        let Some((_, call)) = self.calls.waiting_for(run) else {
            return;
        };
        let tool_name = call.admitted.tool_name.clone();
        let problem = match checked {
            Ok(issues) => match issues.first() {
                Some(first) => problem_at(&first.path, &first.message),
                None => return,
            },
            Err(detail) => format!(": its validator threw ({detail})"),
        };
        env.output_invalid(tool_name, &problem);
    }

    /// An outcome for a run no call waits for: `late_result` when the run was
    /// abandoned after its grace period.
    fn late(&mut self, env: &mut Env, run: RunId, outcome: &Outcome) {
        let Some(tool) = self.calls.take_abandoned(run) else {
            return;
        };
        // Only an aborted run is abandoned: what it throws is its abort.
        let status = match outcome {
            Outcome::Ok(_) => "returned",
            Outcome::NotSerializable(_) => "returned an unserializable value",
            Outcome::Threw(_) | Outcome::Aborted => "was aborted",
        };
        env.out.error(
            ErrorEventCode::LateResult,
            format!("tool '{tool}' {status} after its call was abandoned"),
            Some(tool),
        );
    }

    /// A tool's function threw: details to the `tool_threw` event, the call
    /// gets the generic "Tool failed".
    pub(crate) fn tool_failed(
        &mut self,
        env: &mut Env,
        key: CallKey,
        tool_name: String,
        detail: String,
        now: u64,
    ) {
        env.out
            .error(ErrorEventCode::ToolThrew, detail, Some(tool_name));
        self.finish(env, key, ToolResult::error(error_message::TOOL_FAILED), now)
    }

    /// The call waiting for this answer from JS, if it is in `stage`, and
    /// its tool's name (the next stage replaces the run).
    fn take_step(&mut self, run: RunId, stage: Stage) -> Option<(CallKey, String)> {
        let (key, call) = self.calls.waiting_for(run)?;
        if call.stage != stage {
            return None;
        }
        Some((key, call.admitted.tool_name.clone()))
    }

    /// A Standard Schema validation answers `Validating`: on to `Active`
    /// with the value JS keeps, or the call is answered.
    pub(crate) fn handle_validated(
        &mut self,
        env: &mut Env,
        run: RunId,
        validated: Validated,
        now: u64,
    ) {
        let kept = matches!(validated, Validated::Valid(Some(_))).then(|| KeptValue::kept_by(run));
        let Some((key, tool_name)) = self.take_step(run, Stage::Validating(run)) else {
            return env.out.forget_validated(kept);
        };
        match validated {
            Validated::Valid(text) => {
                if let Some(text) = text {
                    match JsonText::parse(&text) {
                        Ok(value) => self.calls.replace_input(key, value, kept),
                        Err(rejection) => {
                            env.out.forget_validated(kept);
                            return self.tool_failed(env, key, tool_name, rejection.message(), now);
                        }
                    }
                }
                self.calls.activate(key);
                self.validated(env, key, now);
            }
            Validated::Invalid(issues) => self.finish(env, key, ToolResult::invalid(issues), now),
            Validated::Threw(detail) => self.tool_failed(env, key, tool_name, detail, now),
            Validated::NotJson(reason) => {
                let detail = format!("validated input is not JSON-safe: {reason}");
                self.tool_failed(env, key, tool_name, detail, now)
            }
        }
    }

    /// What a confirmation shows answers `Preparing`: the confirmation is requested.
    pub(crate) fn handle_prepared(
        &mut self,
        env: &mut Env,
        run: RunId,
        prepared: Result<Prepared, Unprepared>,
        now: u64,
    ) {
        let Some((key, tool_name)) = self.take_step(run, Stage::Preparing(run)) else {
            return;
        };
        match prepared {
            Ok(prepared) => self.request_confirmation(env, key, prepared, now),
            Err(Unprepared::Threw(detail)) => self.tool_failed(env, key, tool_name, detail, now),
            // What it gives is part of its `needs_confirmation` result.
            Err(Unprepared::NotSerializable(detail)) => {
                let result = not_serializable(env, tool_name, &detail);
                self.finish(env, key, result, now)
            }
        }
    }

    /// The form state at approval answers `ReadingState`: unchanged, the
    /// call runs; changed, it is refused `stale`.
    pub(crate) fn handle_state(
        &mut self,
        env: &mut Env,
        run: RunId,
        state: Result<Option<String>, String>,
        now: u64,
    ) {
        let Some((key, tool_name)) = self.take_step(run, Stage::ReadingState(run)) else {
            return;
        };
        let expected = self
            .calls
            .get(key)
            .and_then(|c| c.approval.as_ref())
            .and_then(|a| a.state.clone());
        match state {
            Ok(state) if state == expected => self.start_run(env, key, now),
            Ok(_) => {
                let result = env.refused(RefusedCode::Stale, refused_message::FORM_CHANGED);
                self.finish(env, key, result, now)
            }
            Err(detail) => self.tool_failed(env, key, tool_name, detail, now),
        }
    }

    /// Aborted runs out of grace at `now`, in key order. Each is
    /// abandoned: its outcome, if it ever comes, is `late_result`. (What an
    /// answer starts is never aborting, so the search goes on from the start.)
    pub(crate) fn abandon_out_of_grace(&mut self, env: &mut Env, now: u64) {
        while let Some(key) = self.calls.first_out_of_grace(now) {
            let Some(mut call) = self.remove_call(env, key) else {
                break;
            };
            if let Stage::Aborting {
                run,
                restorer,
                snapshot,
                ..
            } = call.stage
            {
                self.calls
                    .abandon(run, core::mem::take(&mut call.admitted.tool_name), snapshot);
                if restorer {
                    env.out.action(Action::DropRestorer { run });
                }
            }
            self.answer(
                env,
                call,
                ToolResult::Cancelled {
                    by: CancelledBy::Signal,
                },
                now,
            );
        }
    }

    /// Detaching a bridge. Its calls that have not run go now, in key
    /// order, as nobody is left to answer them. A running one is aborted
    /// and stays, as a cancelled one does, until it settles or its grace
    /// period ends: its id stays in flight for the page (rule 2: the same
    /// id on another bridge is a duplicate, not a second run) and its
    /// scope stays busy (rule 5: one run at a time). Its answer goes to no
    /// bridge, but its id joins the page's answered ids: the tool ran for
    /// it, and a replay must not run it again.
    pub(crate) fn drop_calls_of(&mut self, env: &mut Env, bridge: BridgeId, now: u64) {
        let deadline = now.saturating_add(env.settings.abort_grace_ms);
        let mut next = self.calls.first_from(bridge, CallKey(0));
        while let Some(key) = next {
            next = key
                .0
                .checked_add(1)
                .and_then(|after| self.calls.first_from(bridge, CallKey(after)));
            let Some(stage) = self.calls.get(key).map(|c| c.stage) else {
                break;
            };
            match stage {
                Stage::Running { .. } => {
                    if let Some(run) = self.calls.abort_run(key, deadline) {
                        env.out.action(Action::Abort { run });
                    }
                }
                Stage::Aborting { .. } => {}
                // No tool has run for it (only a snapshot run has a
                // restorer, and only a run takes one).
                Stage::Queued
                | Stage::Active
                | Stage::Validating(_)
                | Stage::Preparing(_)
                | Stage::ReadingState(_) => {
                    self.remove_call(env, key);
                }
            }
        }
    }

    /// Takes a call out, which frees its place in its lane.
    pub(crate) fn remove_call(&mut self, env: &mut Env, key: CallKey) -> Option<Call> {
        let mut call = self.calls.remove(key)?;
        self.lanes.remove(call.admitted.scope, key);
        // A value kept for a run that never came.
        env.out.forget_validated(call.kept.take());
        Some(call)
    }

    /// The one answer of a call: to its bridge or page request, plus the
    /// `confirmed` of an approved confirmation. Frees the lane.
    pub(crate) fn finish(&mut self, env: &mut Env, key: CallKey, result: ToolResult, now: u64) {
        if let Some(call) = self.remove_call(env, key) {
            self.answer(env, call, result, now);
        }
    }

    /// The answer of a call already taken out (see [`CallLife::finish`]).
    pub(crate) fn answer(&mut self, env: &mut Env, call: Call, result: ToolResult, now: u64) {
        if let Some(approval) = &call.approval {
            env.send_confirmed(&approval.requester, &approval.confirm_id, result.clone());
        }
        match call.admitted.origin {
            Origin::Bridge(bridge) => env.answer_bridge(bridge, &call.admitted.call_id, result),
            Origin::Local(handle) | Origin::Held(handle) => env.out.complete(handle, result),
        }
        self.pump(env, now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page_call(
        input: GivenText,
        caller: Given,
        rev: Given,
    ) -> Result<PageCall, RefusedCallOption> {
        PageCall::from_given(input, &Given::Object, &caller, &rev, GivenSignal::Absent)
    }

    #[test]
    fn a_page_call_s_signal_is_absent_or_an_abort_signal_and_a_held_call_s_may_be_anything() {
        let with = |signal| {
            PageCall::from_given(
                GivenText::Undefined,
                &Given::Null,
                &Given::Null,
                &Given::Null,
                signal,
            )
            .map(|call| call.signal)
        };
        assert_eq!(with(GivenSignal::Absent), Ok(SignalUse::None));
        assert_eq!(with(GivenSignal::Aborted), Ok(SignalUse::Abort));
        assert_eq!(
            with(GivenSignal::Listenable),
            Ok(SignalUse::Listen { required: true })
        );
        assert_eq!(with(GivenSignal::Other), Err(RefusedCallOption::Signal));
        assert_eq!(
            RefusedCallOption::Signal.message("[object Object]"),
            "call: signal must be an AbortSignal (got [object Object])"
        );
        assert_eq!(SignalUse::held(GivenSignal::Other, false), SignalUse::None);
        assert_eq!(SignalUse::held(GivenSignal::Absent, false), SignalUse::None);
        assert_eq!(
            SignalUse::held(GivenSignal::Aborted, false),
            SignalUse::Abort
        );
        assert_eq!(
            SignalUse::held(GivenSignal::Listenable, false),
            SignalUse::Listen { required: false }
        );
        for signal in [
            GivenSignal::Absent,
            GivenSignal::Aborted,
            GivenSignal::Listenable,
            GivenSignal::Other,
        ] {
            assert_eq!(SignalUse::held(signal, true), SignalUse::Abort);
        }
        assert_eq!(
            PageCall::held(GivenText::NotJson, GivenSignal::Aborted, false),
            PageCall {
                input_json: String::from("null"),
                caller: Caller::Inapp,
                rev: None,
                signal: SignalUse::Abort,
                held: true,
            }
        );
    }

    #[test]
    fn a_page_call_s_options_are_absent_or_an_object_else_refused_before_their_caller_is_read() {
        let with = |options: Given| {
            PageCall::from_given(
                GivenText::Undefined,
                &options,
                &Given::Undefined,
                &Given::Undefined,
                GivenSignal::Absent,
            )
            .map(|call| call.caller)
        };
        for absent_or_object in [Given::Undefined, Given::Null, Given::Object] {
            assert_eq!(with(absent_or_object), Ok(Caller::Human));
        }
        for other in [
            Given::Text(String::from("inapp")),
            Given::Number(42.0),
            Given::Function,
            Given::Other,
        ] {
            assert_eq!(with(other), Err(RefusedCallOption::Options));
        }
        assert_eq!(
            RefusedCallOption::Options.message("inapp"),
            "call: options must be an object (got inapp)"
        );
    }

    #[test]
    fn a_page_call_is_a_human_s_with_no_rev_unless_its_options_say_otherwise() {
        let json = || GivenText::Json(String::from(r#"{"a":1}"#));
        assert_eq!(
            page_call(json(), Given::Undefined, Given::Null),
            Ok(PageCall {
                input_json: String::from(r#"{"a":1}"#),
                caller: Caller::Human,
                rev: None,
                signal: SignalUse::None,
                held: false,
            })
        );
        let inapp = page_call(
            json(),
            Given::Text(String::from("inapp")),
            Given::Number(7.0),
        )
        .unwrap();
        assert_eq!((inapp.caller, inapp.rev), (Caller::Inapp, Some(7)));
        assert_eq!(
            page_call(json(), Given::Null, Given::Number(0.0))
                .unwrap()
                .rev,
            Some(0)
        );
        assert_eq!(
            page_call(json(), Given::Null, Given::Number(-0.0))
                .unwrap()
                .rev,
            Some(0)
        );
    }

    #[test]
    fn an_absent_input_is_an_empty_object_and_one_json_cannot_write_is_null() {
        let input = |given| {
            page_call(given, Given::Undefined, Given::Undefined)
                .unwrap()
                .input_json
        };
        assert_eq!(input(GivenText::Undefined), "{}");
        assert_eq!(input(GivenText::NotJson), "null");
        assert_eq!(input(GivenText::Json(String::from("[]"))), "[]");
    }

    #[test]
    fn a_rev_the_registry_could_not_have_had_or_an_unknown_caller_is_refused() {
        let json = || GivenText::Json(String::from("{}"));
        for rev in [
            Given::Number(1.5),
            Given::Number(-1.0),
            Given::Number(f64::NAN),
            Given::Number(f64::INFINITY),
            Given::Text(String::from("1")),
            Given::Other,
        ] {
            assert_eq!(
                page_call(json(), Given::Undefined, rev.clone()),
                Err(RefusedCallOption::Rev),
                "{rev:?}"
            );
        }
        for caller in [
            Given::Text(String::from("agent")),
            Given::Number(1.0),
            Given::Other,
        ] {
            assert_eq!(
                page_call(json(), caller, Given::Undefined),
                Err(RefusedCallOption::Caller)
            );
        }
        // The caller is read first.
        assert_eq!(
            page_call(json(), Given::Other, Given::Other),
            Err(RefusedCallOption::Caller)
        );
        assert_eq!(
            RefusedCallOption::Caller.message("agent"),
            "call: unknown caller 'agent'"
        );
        assert_eq!(
            RefusedCallOption::Rev.message("1.5"),
            "call: rev must be a registry revision, a whole number >= 0 (got 1.5)"
        );
    }

    fn add(calls: &mut Calls, origin: Origin, id: &str) -> CallKey {
        calls.add(NewCall {
            admitted: Admitted {
                origin,
                tool: ToolKey(0),
                tool_name: "t".into(),
                scope: ScopeId::ROOT,
                caller: Caller::Inapp,
                call_id: id.into(),
                rev: None,
            },
            input: JsonText::null(),
            approval: None,
            kept: None,
        })
    }

    #[test]
    fn calls_are_found_by_key_origin_and_run() {
        let mut calls = Calls::default();
        let flying = |calls: &Calls, id: &str| calls.in_flight_from_a_bridge(&IdKey::of(id));
        let a = add(&mut calls, Origin::Bridge(BridgeId(0)), "x");
        let b = add(&mut calls, Origin::Local(Handle(7)), "y");
        let c = add(&mut calls, Origin::Bridge(BridgeId(1)), "w");
        assert_eq!((a, b, c), (CallKey(0), CallKey(1), CallKey(2)));
        assert_eq!(calls.by_bridge_id(BridgeId(1), "w"), Some(c));
        assert_eq!(calls.by_bridge_id(BridgeId(0), "w"), None);
        assert_eq!(calls.by_bridge_id(BridgeId(1), "y"), None);
        assert!(flying(&calls, "x") && flying(&calls, "w"));
        assert!(
            !flying(&calls, "y"),
            "a page request's id is not a bridge's"
        );
        assert_eq!(calls.of_request(Handle(7)), Some(b));
        assert_eq!(calls.first_from(BridgeId(0), CallKey(0)), Some(a));
        assert_eq!(calls.first_from(BridgeId(0), CallKey(1)), None);
        assert_eq!(calls.first_from(BridgeId(1), CallKey(1)), Some(c));
        calls.activate(b);
        let (run, _, _) = calls.start_running(b, false).unwrap();
        assert_eq!(calls.waiting_for(run).map(|(k, _)| k), Some(b));
        assert_eq!(calls.new_run(), RunId(1), "runs are unique");
        assert_eq!(calls.remove(a).map(|c| c.key), Some(a));
        assert!(calls.get(a).is_none() && calls.remove(a).is_none());
        assert_eq!(calls.len(), 2);
        assert_eq!(
            calls.get(c).map(|c| c.key),
            Some(c),
            "found after a removal"
        );
        assert_eq!(calls.remove(c).map(|c| c.key), Some(c));
        assert!(!flying(&calls, "x") && !flying(&calls, "w"));
        let long = "z".repeat(100);
        let d = add(&mut calls, Origin::Bridge(BridgeId(0)), &long);
        assert!(flying(&calls, &long) && !flying(&calls, "z"));
        assert_eq!(calls.remove(d).map(|c| c.key), Some(d));
        assert!(!flying(&calls, &long));
        assert_eq!(calls.len(), 1);
    }

    #[test]
    fn the_input_bytes_held_follow_each_input_in_flight() {
        let mut calls = Calls::default();
        let text = |json: &str| JsonText::parse(json).unwrap();
        let a = add(&mut calls, Origin::Local(Handle(0)), "a");
        let b = add(&mut calls, Origin::Local(Handle(1)), "b");
        assert_eq!(calls.input_bytes(), 8, "two nulls");
        calls.replace_input(a, text(r#"{"name":"ada"}"#), None);
        assert_eq!(calls.input_bytes(), 14 + 4);
        calls.replace_input(a, text("[1]"), None);
        assert_eq!(calls.input_bytes(), 3 + 4);
        calls.activate(b);
        calls.start_running(b, false).unwrap();
        assert_eq!(calls.input_bytes(), 3, "a run's input is JS's");
        calls.remove(a);
        assert_eq!(calls.input_bytes(), 0);
    }

    #[test]
    fn grace_deadlines_are_found_in_key_order() {
        let mut calls = Calls::default();
        let a = add(&mut calls, Origin::Local(Handle(0)), "a");
        let b = add(&mut calls, Origin::Local(Handle(1)), "b");
        assert_eq!(calls.next_deadline(), None);
        for (key, deadline) in [(b, 5), (a, 9)] {
            calls.activate(key);
            let (run, _, _) = calls.start_running(key, false).unwrap();
            assert_eq!(calls.abort_run(key, deadline), Some(run));
        }
        assert_eq!(calls.next_deadline(), Some(5));
        assert_eq!(calls.first_out_of_grace(4), None);
        assert_eq!(calls.first_out_of_grace(5), Some(b));
        assert_eq!(calls.first_out_of_grace(9), Some(a));
    }

    #[test]
    fn a_call_moves_only_where_its_stage_allows() {
        let mut calls = Calls::default();
        let key = add(&mut calls, Origin::Local(Handle(0)), "a");
        let stage = |calls: &Calls| calls.get(key).map(|c| c.stage);
        // Queued: not asked, not started, not aborted.
        assert_eq!(calls.ask(key, Ask::Validate), None);
        assert_eq!(calls.abort_run(key, 5), None);
        assert!(calls.start_running(key, false).is_none());
        assert_eq!(stage(&calls), Some(Stage::Queued));
        calls.activate(key);
        assert_eq!(stage(&calls), Some(Stage::Active));
        // Active: asks JS once; a second ask while it waits is refused.
        let run = calls.ask(key, Ask::Validate).unwrap();
        assert_eq!(stage(&calls), Some(Stage::Validating(run)));
        assert_eq!(calls.ask(key, Ask::Prepare), None);
        calls.activate(key);
        assert_eq!(stage(&calls), Some(Stage::Active));
        let reading = calls.ask(key, Ask::ReadState).unwrap();
        assert_eq!(reading, RunId(run.0 + 1), "a refused ask mints no run");
        // From reading the form state, the run starts; only then can it abort.
        let (running, _, input) = calls.start_running(key, true).unwrap();
        assert_eq!(input, "null");
        assert_eq!(
            stage(&calls),
            Some(Stage::Running {
                run: running,
                snapshot: true,
                restorer: true
            })
        );
        calls.activate(key);
        assert_eq!(calls.ask(key, Ask::Prepare), None);
        assert_eq!(calls.abort_run(key, 5), Some(running));
        assert_eq!(calls.abort_run(key, 9), None, "the deadline does not move");
        assert_eq!(
            stage(&calls),
            Some(Stage::Aborting {
                run: running,
                deadline: 5,
                snapshot: true,
                restorer: true
            })
        );
        assert!(calls.start_running(key, false).is_none());
        assert_eq!(calls.next_deadline(), Some(5));
    }

    #[test]
    fn abandoned_runs_report_once_and_the_memory_is_bounded() {
        let mut calls = Calls::default();
        for run in 0..=ABANDONED_MEMORY as u64 {
            calls.abandon(RunId(run), format!("t{run}"), false);
        }
        assert_eq!(calls.take_abandoned(RunId(0)), None, "forgotten");
        assert_eq!(calls.take_abandoned(RunId(1)).as_deref(), Some("t1"));
        assert_eq!(calls.take_abandoned(RunId(1)), None);
    }

    #[test]
    fn prepared_reads_summary_changes_and_state() {
        let prepared = Prepared::from_text(Some(
            r#"{"summary":"Pay 5","changes":[{"path":"a","before":1,"after":2}],"state":{"n":1}}"#,
        ));
        let Ok(prepared) = prepared else {
            panic!("{prepared:?}")
        };
        assert_eq!(prepared.summary.as_deref(), Some("Pay 5"));
        assert_eq!(prepared.changes.as_ref().map(Vec::len), Some(1));
        assert_eq!(prepared.state.as_deref(), Some(r#"{"n":1}"#));
        let texts = Prepared::from_text(Some(r#"{"state":"s"}"#));
        assert_eq!(texts.map(|p| p.state), Ok(Some(String::from("s"))));
    }

    #[test]
    fn prepared_null_or_absent_is_none() {
        assert_eq!(Prepared::from_text(Some("{}")), Ok(Prepared::default()));
        assert_eq!(
            Prepared::from_text(Some(r#"{"summary":null,"changes":null,"state":null}"#)),
            Ok(Prepared::default())
        );
    }

    #[test]
    fn prepared_refuses_what_the_functions_must_not_return() {
        assert_eq!(
            Prepared::from_text(None),
            Err(String::from("summary/changes are not JSON"))
        );
        assert_eq!(
            Prepared::from_text(Some(r#"{"summary":1}"#)),
            Err(String::from("summary() must return a string"))
        );
        for changes in [r#""x""#, r#"[{"nope":1}]"#, "{}"] {
            assert_eq!(
                Prepared::from_text(Some(&format!(r#"{{"changes":{changes}}}"#))),
                Err(String::from(
                    "changes() must return [{ path, before?, after? }]"
                ))
            );
        }
        assert!(Prepared::from_text(Some("{")).is_err());
    }
}
