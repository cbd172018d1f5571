//! A property-based model test of the bridge core: random sequences of
//! registry changes, inbound messages (valid, duplicate, foreign, invalid,
//! oversized), JS answers (run outcomes, validations, confirmation
//! preparations, form state reads, restorers), page calls, confirmations,
//! undo, clock jumps and bridge detach/attach drive the sans-IO core, and
//! after every single input the whole output is drained and checked against
//! a model of the spec's rules. At the end of each case everything
//! outstanding is settled and the core must be empty, with every accepted
//! call answered exactly once.
//!
//! Every operation is one or more `Input`s handed to the shared model of the
//! spec's rules (`tests/support/spec_model.rs`, `SpecModel`, which the
//! `machine` fuzz driver drives too): it feeds the core, drains and checks
//! every output (JSON, schema, clientId, owed ids, answered-id memory,
//! confirmations, runs, bounds) and at the end checks settling. This file
//! then predicts each step's exact results from the drained outputs.
// Native only: the harness uses the regex crate (the wasm tests are tests/wasm.rs).
#![cfg(not(target_arch = "wasm32"))]

#[macro_use]
mod support {
    pub mod harness;
    pub mod spec_model;
}

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};

use proptest::prelude::*;
use proptest::test_runner::{TestCaseError, TestRunner};
use serde_json::{json, Value};
use support::harness::*;
use support::spec_model::{Drained, Input, Reply, ReplyParts, SpecModel};
use toolmark_bridge::given::GivenText;
use toolmark_bridge::machine::{
    Action, BridgeId, BridgeOptions, Config, Event, GivenSignal, Handle, OnChange, Outcome,
    PageCall, PrepareOrder, Prepared, RunId, RunOrder, SignalUse, Unprepared, Validated,
    DEFAULT_ABORT_GRACE_MS,
};
use toolmark_bridge::policy::Caller;
use toolmark_bridge::protocol::{
    validate, Direction, ErrorEventCode, FieldChange, Issue, DEFAULT_MAX_MESSAGE_BYTES,
};
use toolmark_bridge::registry::{SchemaSpec, ScopeId, ScopeMade, ToolDef, ToolKey};
use toolmark_bridge::transport::status::Status;

// ----- the fixed pools ------------------------------------------------------

/// Call/describe ids: a small pool, so duplicates happen all the time.
const POOL: [&str; 6] = ["i0", "i1", "i2", "i3", "i4", "i5"];
const CONFIRM_EXPIRY: u64 = 600_000;
const GRACE: u64 = DEFAULT_ABORT_GRACE_MS;
const OTHER_CLIENT: &str = "00000000-0000-4000-8000-000000000000";

/// Scope slots: (parent slot, name). Slot 0 is the root.
const SLOTS: [(usize, &str); 4] = [(0, ""), (0, "s"), (0, "r"), (1, "in")];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Schema {
    Any,
    /// A Standard Schema: JS validates (`Action::Validate`).
    External,
    /// `{"type": "object", "required": ["a"]}`, validated in Rust.
    RequiresA,
}

struct ToolSpec {
    slot: usize,
    name: &'static str,
    full: &'static str,
    read_only: bool,
    consequential: bool,
    destructive: bool,
    untrusted: bool,
    summary: bool,
    changes: bool,
    state: bool,
    snapshot: bool,
    schema: Schema,
    /// A Standard Schema output (checked by JS in dev mode).
    output: bool,
}

const fn spec(slot: usize, name: &'static str, full: &'static str) -> ToolSpec {
    ToolSpec {
        slot,
        name,
        full,
        read_only: false,
        consequential: false,
        destructive: false,
        untrusted: false,
        summary: false,
        changes: false,
        state: false,
        snapshot: false,
        schema: Schema::Any,
        output: false,
    }
}

const TOOLS: [ToolSpec; 10] = [
    ToolSpec {
        output: true,
        ..spec(0, "t0", "t0")
    },
    ToolSpec {
        consequential: true,
        ..spec(0, "pay", "pay")
    },
    ToolSpec {
        destructive: true,
        state: true,
        snapshot: true,
        summary: true,
        ..spec(0, "wipe", "wipe")
    },
    ToolSpec {
        snapshot: true,
        schema: Schema::External,
        ..spec(0, "edit", "edit")
    },
    ToolSpec {
        schema: Schema::RequiresA,
        ..spec(0, "form", "form")
    },
    ToolSpec {
        snapshot: true,
        ..spec(1, "a", "s.a")
    },
    ToolSpec {
        consequential: true,
        state: true,
        changes: true,
        snapshot: true,
        ..spec(1, "submit", "s.submit")
    },
    ToolSpec {
        read_only: true,
        untrusted: true,
        ..spec(2, "c", "r.c")
    },
    ToolSpec {
        destructive: true,
        summary: true,
        snapshot: true,
        ..spec(3, "d", "s.in.d")
    },
    ToolSpec {
        consequential: true,
        schema: Schema::External,
        ..spec(3, "v", "s.in.v")
    },
];

/// Names that are never tools (a scope prefix alone, a made-up name).
const UNKNOWN_NAMES: [&str; 2] = ["nope", "s"];
const CALL_TOOLS: usize = TOOLS.len() + UNKNOWN_NAMES.len();

fn tool_name(index: usize) -> &'static str {
    match TOOLS.get(index) {
        Some(t) => t.full,
        None => UNKNOWN_NAMES[(index - TOOLS.len()) % UNKNOWN_NAMES.len()],
    }
}

fn tool_index(name: &str) -> Option<usize> {
    TOOLS.iter().position(|t| t.full == name)
}

fn tool_def(index: usize) -> ToolDef {
    let t = &TOOLS[index];
    let mut def = tool(t.name);
    let on = |b: bool| b.then_some(true);
    def.hints.read_only = on(t.read_only);
    def.hints.consequential = on(t.consequential);
    def.hints.destructive = on(t.destructive);
    def.hints.untrusted_content = on(t.untrusted);
    def.has_summary = t.summary;
    def.has_changes = t.changes;
    def.has_state = t.state;
    def.has_snapshot = t.snapshot;
    def.sensitive = vec!["pw".into()];
    def.input_schema = match t.schema {
        Schema::Any => None,
        Schema::External => Some(SchemaSpec::External {
            json: Some(json!({"type": "object"})),
        }),
        Schema::RequiresA => Some(SchemaSpec::Json(
            json!({"type": "object", "required": ["a"]}),
        )),
    };
    if t.output {
        def.output_schema = Some(SchemaSpec::External {
            json: Some(json!({"type": "object"})),
        });
    }
    def
}

/// Inputs (the last one is not JSON: page calls only).
const INPUTS: [&str; 8] = [
    "{}",
    r#"{"a":1}"#,
    r#"{"a":"x","pw":"hunter2"}"#,
    "5",
    r#""text""#,
    "null",
    r#"[1,{"a":2}]"#,
    "{",
];
const JSON_INPUTS: usize = INPUTS.len() - 1;

// ----- policy oracle ----------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PolicyKind {
    /// No options: consequential/destructive need confirmation.
    Default,
    /// `{"inapp": {"destructive": "hide", "untrustedContent": "deny"}}`.
    HideDestructive,
    /// `{"inapp": {"default": "confirm"}}`: plain tools need confirmation too.
    DefaultConfirm,
    /// `confirmMode: {"inapp": "none"}`: no confirmation path.
    NoConfirmPath,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum D {
    Allow,
    Confirm,
    Deny,
    Hide,
}

impl PolicyKind {
    fn config(self) -> (Value, Value) {
        match self {
            PolicyKind::Default => (Value::Null, Value::Null),
            PolicyKind::HideDestructive => (
                json!({"inapp": {"destructive": "hide", "untrustedContent": "deny"}}),
                Value::Null,
            ),
            PolicyKind::DefaultConfirm => (json!({"inapp": {"default": "confirm"}}), Value::Null),
            PolicyKind::NoConfirmPath => (Value::Null, json!({"inapp": "none"})),
        }
    }

    /// What the agent (`inapp`) gets for a tool, written from the spec, not
    /// from the core's policy code.
    fn inapp(self, index: usize) -> D {
        let t = &TOOLS[index];
        let plain = !t.read_only && !t.consequential && !t.destructive;
        let mut d = D::Allow;
        if t.consequential || t.destructive {
            d = d.max(D::Confirm);
        }
        match self {
            PolicyKind::HideDestructive => {
                if t.destructive {
                    d = d.max(D::Hide);
                }
                if t.untrusted {
                    d = d.max(D::Deny);
                }
            }
            PolicyKind::DefaultConfirm => {
                if plain {
                    d = d.max(D::Confirm);
                }
            }
            PolicyKind::NoConfirmPath => {
                if d == D::Confirm {
                    d = D::Deny;
                }
            }
            PolicyKind::Default => {}
        }
        d
    }

    fn decide(self, index: usize, caller: Caller) -> D {
        match caller {
            Caller::Human => D::Allow,
            Caller::Inapp => self.inapp(index),
        }
    }
}

// ----- operations ---------------------------------------------------------------

/// Picks one of a list that is only known when the operation runs (shrinks
/// towards the first).
#[derive(Debug, Clone, Copy)]
struct Pick(u8);

impl Pick {
    /// Removes the picked run of a list of work handed out, if any.
    fn take(self, runs: &mut Vec<RunId>) -> Option<RunId> {
        (!runs.is_empty()).then(|| runs.remove(self.index(runs.len())))
    }

    fn index(self, len: usize) -> usize {
        usize::from(self.0) % len.max(1)
    }
}

#[derive(Debug, Clone, Copy)]
enum IdSel {
    Pool(usize),
    Fresh,
}

#[derive(Debug, Clone, Copy)]
enum RevSel {
    None,
    Current,
    Old(Pick),
    Future,
}

/// Which bridge an inbound message goes to: an attached one, or any ever
/// attached (detached ones must stay silent).
#[derive(Debug, Clone, Copy)]
enum To {
    Attached(Pick),
    Any(Pick),
}

#[derive(Debug, Clone, Copy)]
enum CancelSel {
    Pool(usize),
    InFlight(Pick),
    /// The id of a call whose tool is running.
    Running(Pick),
}

#[derive(Debug, Clone, Copy)]
enum ConfSel {
    Pending(Pick),
    Known(Pick),
    Unknown,
}

#[derive(Debug, Clone, Copy)]
enum UndoSel {
    Kept(Pick),
    Pool(usize),
    Unknown,
}

#[derive(Debug, Clone, Copy)]
enum Clock {
    Small(u64),
    Grace,
    Expiry,
    Huge(u64),
    /// Time passes but the timer does not fire (a throttled tab).
    Lag(u64),
    ToDeadline,
    JustBeforeDeadline,
}

#[derive(Debug, Clone, Copy)]
enum OutcomeSel {
    OkJson(usize),
    OkNone,
    OkNotJson,
    Threw,
    NotSerializable,
    Aborted,
}

const OK_JSON: [&str; 4] = ["1", r#"{"x":[1,2]}"#, "null", r#""s""#];

#[derive(Debug, Clone)]
enum Op {
    Register(usize),
    Unregister(Pick),
    Recreate(usize),
    Dispose(usize),
    Call {
        to: To,
        id: IdSel,
        tool: usize,
        input: usize,
        rev: RevSel,
    },
    Burst {
        to: To,
        tool: usize,
        n: usize,
    },
    Describe {
        to: To,
        id: IdSel,
        tool: usize,
    },
    Cancel {
        to: To,
        id: CancelSel,
    },
    Foreign {
        to: To,
        kind: u8,
        id: IdSel,
    },
    Protocol2 {
        to: To,
        kind: u8,
        id: IdSel,
    },
    Invalid {
        to: To,
        kind: u8,
        /// Delivered as a WebSocket text frame (`handle_inbound_frame`).
        frame: bool,
    },
    Oversized {
        to: To,
        exact: bool,
    },
    Settle {
        run: Pick,
        outcome: OutcomeSel,
    },
    SettleAgain(Pick),
    /// A run's `snapshot` settled, with or without a restorer.
    Snapshot {
        pick: Pick,
        restorer: bool,
    },
    /// JS has no functions for the tool of a run it was asked for.
    ToolGone(Pick),
    /// JS's check of a run's value against the tool's Standard Schema
    /// output (dev mode).
    OutputChecked {
        pick: Pick,
        kind: u8,
    },
    Validate {
        pick: Pick,
        kind: u8,
    },
    Prepare {
        pick: Pick,
        kind: u8,
    },
    ReadState {
        pick: Pick,
        kind: u8,
    },
    Restore {
        pick: Pick,
        ok: bool,
    },
    /// A run's `ctx.confirm`, then the person's answer to it.
    CtxConfirm {
        pick: Pick,
        answer: Option<bool>,
    },
    PageCall {
        tool: usize,
        human: bool,
        input: usize,
        rev: RevSel,
        /// The `signal` given (0 none, 1 aborted, 2 listenable, 3 no
        /// `AbortSignal`; for a held call, 4: its registration withdrawn).
        signal: u8,
        /// Held through a confirmation (WebMCP's `execute`, caller inapp).
        held: bool,
    },
    PageBurst {
        tool: usize,
        n: usize,
    },
    Abort {
        pick: Pick,
        open: bool,
    },
    Confirm {
        pick: ConfSel,
        approve: bool,
    },
    Undo(UndoSel),
    Clock(Clock),
    /// A state a bridge's transport reported (6: one that describes none).
    Status {
        to: To,
        kind: u8,
    },
    Detach(Pick),
    Attach {
        changed: bool,
        limit: usize,
    },
}

fn id_sel() -> impl Strategy<Value = IdSel> {
    prop_oneof![
        5 => (0..POOL.len()).prop_map(IdSel::Pool),
        1 => Just(IdSel::Fresh),
    ]
}

fn rev_sel() -> impl Strategy<Value = RevSel> {
    prop_oneof![
        3 => Just(RevSel::None),
        2 => Just(RevSel::Current),
        2 => any::<u8>().prop_map(Pick).prop_map(RevSel::Old),
        1 => Just(RevSel::Future),
    ]
}

fn to_sel() -> impl Strategy<Value = To> {
    prop_oneof![
        12 => any::<u8>().prop_map(Pick).prop_map(To::Attached),
        1 => any::<u8>().prop_map(Pick).prop_map(To::Any),
    ]
}

fn outcome_sel() -> impl Strategy<Value = OutcomeSel> {
    prop_oneof![
        4 => (0..OK_JSON.len()).prop_map(OutcomeSel::OkJson),
        2 => Just(OutcomeSel::OkNone),
        1 => Just(OutcomeSel::OkNotJson),
        2 => Just(OutcomeSel::Threw),
        1 => Just(OutcomeSel::NotSerializable),
        2 => Just(OutcomeSel::Aborted),
    ]
}

fn clock_sel() -> impl Strategy<Value = Clock> {
    prop_oneof![
        4 => (1..2_500u64).prop_map(Clock::Small),
        2 => Just(Clock::Grace),
        2 => Just(Clock::Expiry),
        1 => (600_001..2_000_000u64).prop_map(Clock::Huge),
        1 => prop_oneof![1..5_000u64, 590_000..700_000u64].prop_map(Clock::Lag),
        3 => Just(Clock::ToDeadline),
        2 => Just(Clock::JustBeforeDeadline),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        20 => (to_sel(), id_sel(), 0..CALL_TOOLS, 0..JSON_INPUTS, rev_sel())
            .prop_map(|(to, id, tool, input, rev)| Op::Call { to, id, tool, input, rev }),
        2 => (to_sel(), 0..TOOLS.len(), prop_oneof![4 => 1..40usize, 1 => 100..130usize])
            .prop_map(|(to, tool, n)| Op::Burst { to, tool, n }),
        5 => (to_sel(), id_sel(), 0..CALL_TOOLS).prop_map(|(to, id, tool)| Op::Describe { to, id, tool }),
        8 => (
            to_sel(),
            prop_oneof![
                1 => (0..POOL.len()).prop_map(CancelSel::Pool),
                1 => any::<u8>().prop_map(Pick).prop_map(CancelSel::InFlight),
                2 => any::<u8>().prop_map(Pick).prop_map(CancelSel::Running)
            ]
        )
            .prop_map(|(to, id)| Op::Cancel { to, id }),
        2 => (to_sel(), 0..6u8, id_sel()).prop_map(|(to, kind, id)| Op::Foreign { to, kind, id }),
        2 => (to_sel(), 0..4u8, id_sel()).prop_map(|(to, kind, id)| Op::Protocol2 { to, kind, id }),
        3 => (to_sel(), 0..15u8, any::<bool>()).prop_map(|(to, kind, frame)| Op::Invalid { to, kind, frame }),
        1 => (to_sel(), any::<bool>()).prop_map(|(to, exact)| Op::Oversized { to, exact }),
        18 => (any::<u8>().prop_map(Pick), outcome_sel()).prop_map(|(run, outcome)| Op::Settle { run, outcome }),
        2 => any::<u8>().prop_map(Pick).prop_map(Op::SettleAgain),
        4 => (any::<u8>().prop_map(Pick), any::<bool>())
            .prop_map(|(pick, restorer)| Op::Snapshot { pick, restorer }),
        3 => any::<u8>().prop_map(Pick).prop_map(Op::ToolGone),
        2 => (any::<u8>().prop_map(Pick), 0..3u8).prop_map(|(pick, kind)| Op::OutputChecked { pick, kind }),
        4 => (any::<u8>().prop_map(Pick), 0..6u8).prop_map(|(pick, kind)| Op::Validate { pick, kind }),
        5 => (any::<u8>().prop_map(Pick), 0..5u8).prop_map(|(pick, kind)| Op::Prepare { pick, kind }),
        3 => (any::<u8>().prop_map(Pick), 0..4u8).prop_map(|(pick, kind)| Op::ReadState { pick, kind }),
        2 => (any::<u8>().prop_map(Pick), any::<bool>()).prop_map(|(pick, ok)| Op::Restore { pick, ok }),
        1 => (any::<u8>().prop_map(Pick), prop::option::of(any::<bool>()))
            .prop_map(|(pick, answer)| Op::CtxConfirm { pick, answer }),
        8 => (
            (0..CALL_TOOLS, any::<bool>(), 0..INPUTS.len(), rev_sel()),
            prop_oneof![6 => Just(0u8), 1 => Just(1u8), 2 => Just(2u8), 1 => 3..5u8],
            prop::bool::weighted(0.3),
        )
            .prop_map(|((tool, human, input, rev), signal, held)| Op::PageCall {
                tool,
                human,
                input,
                rev,
                signal,
                held,
            }),
        1 => (0..TOOLS.len(), 1..40usize).prop_map(|(tool, n)| Op::PageBurst { tool, n }),
        3 => (any::<u8>().prop_map(Pick), prop::bool::weighted(0.8))
            .prop_map(|(pick, open)| Op::Abort { pick, open }),
        8 => (
            prop_oneof![
                4 => any::<u8>().prop_map(Pick).prop_map(ConfSel::Pending),
                1 => any::<u8>().prop_map(Pick).prop_map(ConfSel::Known),
                1 => Just(ConfSel::Unknown)
            ],
            any::<bool>()
        )
            .prop_map(|(pick, approve)| Op::Confirm { pick, approve }),
        3 => prop_oneof![
            3 => any::<u8>().prop_map(Pick).prop_map(UndoSel::Kept),
            1 => (0..POOL.len()).prop_map(UndoSel::Pool),
            1 => Just(UndoSel::Unknown)
        ]
        .prop_map(Op::Undo),
        6 => clock_sel().prop_map(Op::Clock),
        4 => (0..TOOLS.len()).prop_map(Op::Register),
        2 => any::<u8>().prop_map(Pick).prop_map(Op::Unregister),
        1 => (1..SLOTS.len()).prop_map(Op::Recreate),
        1 => (1..SLOTS.len()).prop_map(Op::Dispose),
        1 => any::<u8>().prop_map(Pick).prop_map(Op::Detach),
        2 => (to_sel(), prop_oneof![3 => Just(0u8), 1 => 1..3u8, 3 => 3..6u8, 1 => Just(6u8)])
            .prop_map(|(to, kind)| Op::Status { to, kind }),
        1 => (any::<bool>(), 0..3usize).prop_map(|(changed, limit)| Op::Attach { changed, limit }),
    ]
}

#[derive(Debug, Clone)]
struct Case {
    dev: bool,
    policy: PolicyKind,
    inline_confirm: bool,
    limit: usize,
    changed: bool,
    initial: u16,
    /// Before this op (modulo the length), 1000 describes with fresh ids flood
    /// the first bridge, so the pool ids fall out of the answered-id memory.
    flood_at: Option<usize>,
    /// Before this op (modulo the length), over 100 calls of `pay` make the
    /// oldest pending confirmations be evicted.
    storm_at: Option<usize>,
    /// Settle the end by letting every deadline pass first (late results),
    /// instead of answering the runs first.
    end_with_timeout: bool,
    ops: Vec<Op>,
}

fn case() -> impl Strategy<Value = Case> {
    (
        any::<bool>(),
        prop_oneof![
            3 => Just(PolicyKind::Default),
            1 => Just(PolicyKind::HideDestructive),
            1 => Just(PolicyKind::DefaultConfirm),
            1 => Just(PolicyKind::NoConfirmPath),
        ],
        any::<bool>(),
        0..3usize,
        prop::bool::weighted(0.2),
        (any::<u16>(), any::<u16>()).prop_map(|(a, b)| a | b),
        (
            prop::option::weighted(0.05, 0..200usize),
            prop::option::weighted(0.1, 0..200usize),
        ),
        any::<bool>(),
        prop::collection::vec(op(), 1..200),
    )
        .prop_map(
            |(
                dev,
                policy,
                inline_confirm,
                limit,
                changed,
                initial,
                (flood_at, storm_at),
                end_with_timeout,
                ops,
            )| {
                Case {
                    dev,
                    policy,
                    inline_confirm,
                    limit,
                    changed,
                    initial,
                    flood_at,
                    storm_at,
                    end_with_timeout,
                    ops,
                }
            },
        )
}

fn limit_of(choice: usize) -> usize {
    match choice {
        0 => 600,
        1 => 2048,
        _ => DEFAULT_MAX_MESSAGE_BYTES,
    }
}

// ----- the model --------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ReqKind {
    /// A `call`; `tool` is the pool index of a tool name (None: not a tool).
    Call {
        tool: Option<usize>,
        rev: Option<u64>,
    },
    Describe,
    Protocol2,
}

#[derive(Debug)]
struct BridgeModel {
    attached: bool,
    limit: usize,
    changed_mode: bool,
    /// Accepted requests not answered yet; once detached, its calls still
    /// running (rules 2 and 5: their ids stay in flight for the page until
    /// they settle or their grace period ends, answered on no bridge).
    in_flight: BTreeMap<String, ReqKind>,
    last_rev: Option<u64>,
    /// The connection attempt its transport last said it is making.
    connecting: Option<u32>,
}

impl BridgeModel {
    fn new(limit: usize, changed_mode: bool) -> BridgeModel {
        BridgeModel {
            attached: true,
            limit,
            changed_mode,
            in_flight: BTreeMap::new(),
            last_rev: None,
            connecting: None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Abort {
    /// Aborted by `cancel` / `abort` / a detach: the grace period runs.
    Grace { deadline: u64, timed_out: bool },
}

#[derive(Debug, Clone)]
struct RunInfo {
    call_id: String,
    tool: usize,
    /// The registration it runs.
    key: ToolKey,
    /// JS started it (its snapshot settled, its value was checked, it
    /// used its ctx): it had the tool's functions.
    js_started: bool,
    /// JS checks its value against the tool's Standard Schema output.
    check_output: bool,
    caller: Caller,
    snapshot: bool,
    /// Its `snapshot` has not settled yet (`SnapshotTaken` still to come).
    snapshot_pending: bool,
    abort: Option<Abort>,
    /// The detached bridge whose call this run is: its answer goes nowhere.
    orphan_of: Option<BridgeId>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum HandleKind {
    Call {
        tool: Option<usize>,
        caller: Caller,
        rev: Option<u64>,
        bad_input: bool,
        /// Held through a confirmation: completes with its outcome.
        held: bool,
    },
    /// A page call whose signal had aborted before it was made.
    AbortedCall,
    Confirm,
    Undo,
}

#[derive(Debug)]
struct HandleInfo {
    kind: HandleKind,
    completed: bool,
}

#[derive(Debug)]
struct ConfInfo {
    requester: Option<BridgeId>,
    /// The registration it was asked for: a tool registered again under
    /// the same name is another tool (the approval is refused stale).
    tool_key: Option<ToolKey>,
    confirmed: bool,
    /// The bridges its `confirmed` went out on.
    confirmed_on: BTreeSet<BridgeId>,
    departed: bool,
    /// A held call's: it completes that call's request, not a bridge's.
    held: bool,
}

/// What one input produced.
#[derive(Debug, Default)]
struct Step {
    transmits: usize,
    events: usize,
    actions: usize,
    results: Vec<(BridgeId, String, Value)>,
    confirmeds: Vec<(BridgeId, String, Value)>,
    completed: Vec<(Handle, Value)>,
    /// The results held calls completed with.
    held_completed: Vec<Value>,
    errors: Vec<ErrorEventCode>,
    /// Each error event: (code, message, tool).
    error_events: Vec<(ErrorEventCode, String, Option<String>)>,
    rev_events: Vec<u64>,
    statuses: Vec<(BridgeId, Status)>,
    announcements: Vec<(BridgeId, Value)>,
    runs: Vec<(RunId, ToolKey, String)>,
    /// (restore run, run whose restorer it runs).
    restores: Vec<(RunId, RunId)>,
    /// Runs whose restorers JS was told to drop.
    drops: Vec<RunId>,
    /// Runs JS was told to abort.
    aborts: Vec<RunId>,
    closes: Vec<BridgeId>,
}

impl RunInfo {
    /// Abandoned after its grace period.
    fn timed_out(&self) -> bool {
        matches!(
            self.abort,
            Some(Abort::Grace {
                timed_out: true,
                ..
            })
        )
    }
}

impl Step {
    fn silent(&self) -> bool {
        self.transmits == 0 && self.events == 0 && self.actions == 0
    }

    fn answers(&self) -> usize {
        self.results.len() + self.confirmeds.len() + self.completed.len()
    }

    fn all_answer_values(&self) -> impl Iterator<Item = &Value> {
        self.results
            .iter()
            .map(|r| &r.2)
            .chain(self.confirmeds.iter().map(|c| &c.2))
            .chain(self.completed.iter().map(|c| &c.1))
    }

    fn late_results(&self) -> usize {
        self.errors
            .iter()
            .filter(|c| **c == ErrorEventCode::LateResult)
            .count()
    }
}

/// Context of an input, for the checks that depend on what it was.
#[derive(Debug, Default)]
struct Ctx {
    detaching: Option<BridgeId>,
    approving: Option<String>,
}

type R<T = ()> = Result<T, TestCaseError>;

/// A run abandoned after its grace period: the run, whether JS holds its
/// restorer, and the attached bridge and id of its call.
type Abandoned = (RunId, bool, Option<(BridgeId, String)>);

struct Model {
    page: Page,
    /// The spec's rules, shared with the fuzz driver: checks every output.
    spec: SpecModel,
    client_id: String,
    policy: PolicyKind,
    inline_confirm: bool,
    bridges: BTreeMap<BridgeId, BridgeModel>,
    /// Pool index → key of the registered tool.
    tools: BTreeMap<usize, ToolKey>,
    /// Keys of tools that are gone (unregistering them again must be a no-op).
    gone_keys: Vec<ToolKey>,
    scopes: [Option<ScopeId>; 4],
    runs: BTreeMap<RunId, RunInfo>,
    settled: Vec<RunId>,
    validates: Vec<RunId>,
    prepares: Vec<RunId>,
    read_states: Vec<RunId>,
    /// The tool each validation, preparation and state read was asked for.
    work_tool: BTreeMap<RunId, ToolKey>,
    restores: BTreeMap<RunId, Handle>,
    handles: BTreeMap<Handle, HandleInfo>,
    confs: BTreeMap<String, ConfInfo>,
    conf_order: Vec<String>,
    pending: Vec<String>,
    /// Handles of `confirm` calls on a live confirmation → its confirmId.
    confirm_handles: BTreeMap<Handle, String>,
    /// Call ids whose restorer should be in the undo store.
    kept: Vec<String>,
    /// Per call id, the last snapshot run that kept its restorer.
    kept_run: BTreeMap<String, RunId>,
    /// Runs that took a snapshot and whose restorer JS still holds (keyed by run).
    restorers: BTreeSet<RunId>,
    /// Validation runs whose value JS keeps (answered `Valid(Some(_))`).
    validated_values: BTreeSet<RunId>,
    fresh: u64,
    busy_approvals: usize,
    /// What the case covered (printed by the test).
    stats: BTreeMap<String, usize>,
}

/// `status` plus `code` / `by` / `message`, for the coverage counts.
fn label(result: &Value) -> String {
    let status = result["status"].as_str().unwrap_or_default();
    let detail = ["code", "by", "message"]
        .iter()
        .find_map(|k| result[*k].as_str())
        .unwrap_or_default();
    format!("{status} {detail}").trim_end().to_owned()
}

fn fail(message: String) -> TestCaseError {
    TestCaseError::fail(message)
}

impl Model {
    fn new(case: &Case) -> R<Model> {
        let (policy, confirm_mode) = case.policy.config();
        let config = Config {
            dev: case.dev,
            policy: policy.clone(),
            confirm_mode: confirm_mode.clone(),
            inline_confirm: case.inline_confirm,
            ..Config::default()
        };
        let limit = limit_of(case.limit);
        let options = BridgeOptions {
            on_change: if case.changed {
                OnChange::Changed
            } else {
                OnChange::Manifest
            },
            max_message_bytes: limit,
        };
        let page = Page::with_options(config, options);
        let client_id = page.client_id();
        // The shared model sees the harness's first attach and its manifest.
        let mut spec = SpecModel::new(&page.tm, &policy, &confirm_mode, Box::new(RegexPatterns));
        spec.attached(page.bridge, options).map_err(fail)?;
        for (bridge, message) in &page.sent_all {
            spec.check_transmit(&page.tm, *bridge, &message.to_string())
                .map_err(fail)?;
        }
        let mut bridges = BTreeMap::new();
        let mut first = BridgeModel::new(limit, case.changed);
        // The attach manifest, drained by the harness.
        prop_assert_eq!(page.sent.len(), 1, "one manifest on attach");
        for message in &page.sent {
            prop_assert!(validate(message, Direction::ToAgent).is_ok(), "{}", message);
            prop_assert_eq!(&message["type"], "manifest");
            prop_assert_eq!(message["rev"].as_u64(), Some(0));
            first.last_rev = Some(0);
        }
        bridges.insert(page.bridge, first);
        let mut model = Model {
            page,
            spec,
            client_id,
            policy: case.policy,
            inline_confirm: case.inline_confirm,
            bridges,
            tools: BTreeMap::new(),
            gone_keys: Vec::new(),
            scopes: [Some(ScopeId::ROOT), None, None, None],
            runs: BTreeMap::new(),
            settled: Vec::new(),
            validates: Vec::new(),
            prepares: Vec::new(),
            read_states: Vec::new(),
            work_tool: BTreeMap::new(),
            restores: BTreeMap::new(),
            handles: BTreeMap::new(),
            confs: BTreeMap::new(),
            conf_order: Vec::new(),
            pending: Vec::new(),
            kept: Vec::new(),
            kept_run: BTreeMap::new(),
            restorers: BTreeSet::new(),
            validated_values: BTreeSet::new(),
            confirm_handles: BTreeMap::new(),
            fresh: 0,
            busy_approvals: 0,
            stats: BTreeMap::new(),
        };
        for slot in 1..SLOTS.len() {
            model.recreate(slot)?;
        }
        for index in 0..TOOLS.len() {
            if case.initial & (1 << index) != 0 {
                model.register(index)?;
            }
        }
        Ok(model)
    }

    fn count(&mut self, key: &str) {
        *self.stats.entry(key.to_owned()).or_default() += 1;
    }

    fn now(&self) -> u64 {
        self.page.now
    }

    // ----- one input, drained and checked --------------------------------------

    /// Runs one input: `f` feeds the core, `pre` records what the input
    /// returned before its outputs are checked.
    fn step(
        &mut self,
        ctx: Ctx,
        input: Input,
        pre: impl FnOnce(&mut Model, &Reply),
    ) -> R<(Reply, Step)> {
        let rev_before = self.page.tm.rev();
        let now = self.now();
        // The shared model feeds the input, drains every output and checks
        // it against the spec's rules; this model then predicts the details.
        let (value, drained) = self
            .spec
            .apply(&mut self.page.tm, input, now)
            .map_err(fail)?;
        pre(self, &value);
        let mut step = Step::default();
        let Drained {
            transmits: texts,
            events,
            actions,
            deadline,
        } = drained;
        self.page.deadline = deadline;
        step.transmits = texts.len();
        step.events = events.len();
        step.actions = actions.len();
        for t in texts {
            self.absorb_transmit(t.bridge, &t.text, &mut step)?;
        }
        for e in events {
            self.absorb_event(e, &mut step)?;
        }
        for a in actions {
            self.absorb_action(a, &ctx, &mut step)?;
        }
        self.check_state(&ctx, &step, rev_before)?;
        // A decided confirmation: the page's result and the requesting
        // bridge's `confirmed` carry the same final result.
        let mut held_decided = 0;
        for (handle, result) in &step.completed {
            let Some(confirm_id) = self.confirm_handles.get(handle) else {
                continue;
            };
            let requester = self.confs.get(confirm_id).and_then(|c| c.requester);
            // A held call's confirmation completes that call with the same
            // final result.
            if self.confs.get(confirm_id).is_some_and(|c| c.held) {
                prop_assert!(
                    step.held_completed.contains(result),
                    "the held call of {} did not complete with its final result {}: {:?}",
                    confirm_id,
                    result,
                    step
                );
                held_decided += 1;
            }
            // On the requesting bridge, or (gone) on every bridge attached now.
            for bridge in self.confirmed_targets(requester) {
                prop_assert!(
                    step.confirmeds
                        .iter()
                        .any(|(b, id, r)| *b == bridge && id == confirm_id && r == result),
                    "confirmed of {} on {:?} does not carry the final result {}: {:?}",
                    confirm_id,
                    bridge,
                    result,
                    step.confirmeds
                );
            }
        }
        for _ in 0..held_decided {
            self.count("held call completed by its confirmation's decision");
        }
        for (_, _, result) in &step.results {
            self.count(&format!("result {}", label(result)));
        }
        for (_, _, result) in &step.confirmeds {
            self.count(&format!("confirmed {}", label(result)));
        }
        for (_, result) in &step.completed {
            self.count(&format!("completed {}", label(result)));
        }
        for code in &step.errors {
            self.count(&format!("event {code}"));
        }
        Ok((value, step))
    }

    fn absorb_transmit(&mut self, bridge: BridgeId, text: &str, step: &mut Step) -> R {
        // Invariant 5 (valid JSON, valid page → agent message, our clientId):
        // checked by the shared model before this.
        let message: Value = serde_json::from_str(text).map_err(|e| fail(e.to_string()))?;
        let Some(b) = self.bridges.get_mut(&bridge) else {
            return Err(fail(format!(
                "sent on an unknown bridge {bridge:?}: {message}"
            )));
        };
        prop_assert!(
            b.attached,
            "sent on detached bridge {:?}: {}",
            bridge,
            message
        );
        match message["type"].as_str().unwrap_or_default() {
            "result" => {
                let id = message["id"].as_str().unwrap_or_default().to_owned();
                let result = message["result"].clone();
                // Invariant 1: answered at most once, and only what was asked.
                let Some(kind) = b.in_flight.remove(&id) else {
                    return Err(fail(format!(
                        "result for id {id:?} on {bridge:?} that is not in flight \
                         (a second answer, or never accepted): {message}"
                    )));
                };
                // (The shared model remembered the id: `spec.recent`.)
                self.check_bridge_result(bridge, kind, &result)?;
                step.results.push((bridge, id, result));
            }
            "confirmed" => {
                let confirm_id = message["confirmId"].as_str().unwrap_or_default().to_owned();
                // Invariant 3: only after its needs_confirmation, at most once.
                let Some(conf) = self.confs.get_mut(&confirm_id) else {
                    return Err(fail(format!(
                        "confirmed before (or without) the result carrying its \
                         needs_confirmation: {message}"
                    )));
                };
                let requester = conf.requester;
                let targets = self.confirmed_targets(requester);
                prop_assert!(
                    targets.contains(&bridge),
                    "confirmed on the wrong bridge {:?} (requester {:?}, attached {:?}): {}",
                    bridge,
                    requester,
                    self.attached(),
                    message
                );
                let Some(conf) = self.confs.get_mut(&confirm_id) else {
                    return Err(fail(format!(
                        "confirmed of an unknown confirmId: {message}"
                    )));
                };
                prop_assert!(
                    conf.confirmed_on.insert(bridge),
                    "a second confirmed on {:?}: {}",
                    bridge,
                    message
                );
                conf.confirmed = true;
                if requester != Some(bridge) {
                    self.count("confirmed on a bridge attached after its own went");
                }
                step.confirmeds
                    .push((bridge, confirm_id, message["result"].clone()));
            }
            "manifest" | "changed" => {
                let rev = message["rev"].as_u64().unwrap_or_default();
                if let Some(last) = b.last_rev {
                    prop_assert!(rev >= last, "rev went back: {} after {}", rev, last);
                }
                if message["type"] == "changed" {
                    prop_assert!(b.changed_mode, "changed in manifest mode");
                } else {
                    prop_assert!(
                        !b.changed_mode || b.last_rev.is_none(),
                        "manifest after attach in changed mode"
                    );
                }
                b.last_rev = Some(rev);
                step.announcements.push((bridge, message));
            }
            other => return Err(fail(format!("unexpected message type {other}"))),
        }
        Ok(())
    }

    /// What a result may be, given what was asked.
    fn check_bridge_result(&mut self, bridge: BridgeId, kind: ReqKind, result: &Value) -> R {
        let status = result["status"].as_str().unwrap_or_default();
        match kind {
            ReqKind::Protocol2 => prop_assert_eq!(
                result,
                &json!({"status": "error", "message": "unsupported protocol"})
            ),
            ReqKind::Describe => prop_assert!(
                status == "ok" || result["code"] == "unknown_tool",
                "describe answered {}",
                result
            ),
            ReqKind::Call { tool, rev } => {
                self.check_call_result(tool, Caller::Inapp, rev, result)?;
                if status == "needs_confirmation" {
                    self.announce(result, Some(bridge))?;
                }
            }
        }
        Ok(())
    }

    fn check_call_result(
        &self,
        tool: Option<usize>,
        caller: Caller,
        rev: Option<u64>,
        result: &Value,
    ) -> R {
        let status = result["status"].as_str().unwrap_or_default();
        if result["issues"][0]["message"] == "input must be JSON" {
            return Ok(());
        }
        let code = result["code"].as_str().unwrap_or_default();
        if status == "refused" {
            // Rule 6: unknown_tool and stale carry the current rev, nothing
            // else does; stale exactly when the call's rev is older.
            let current = self.page.tm.rev();
            if code == "unknown_tool" || code == "stale" {
                prop_assert_eq!(result["rev"].as_u64(), Some(current), "{}", result);
                prop_assert_eq!(
                    code == "stale",
                    rev.is_some_and(|r| r < current),
                    "rule 6: call rev {:?}, current {}: {}",
                    rev,
                    current,
                    result
                );
            } else {
                prop_assert!(result.get("rev").is_none(), "{}", result);
            }
        }
        let Some(tool) = tool else {
            prop_assert!(
                status == "refused" && (code == "unknown_tool" || code == "stale"),
                "a call of no tool answered {}",
                result
            );
            return Ok(());
        };
        if status == "refused" && code == "busy" {
            // Rule 5: its own scope has 32 pending (not some other scope).
            let pending = self.page.tm.scope_pending(TOOLS[tool].full);
            prop_assert!(
                pending.is_some_and(|n| n >= 32),
                "{} refused busy with {:?} pending on its scope",
                TOOLS[tool].full,
                pending
            );
        }
        match self.policy.decide(tool, caller) {
            D::Allow => prop_assert!(
                status != "needs_confirmation",
                "{} ({:?}) needs no confirmation: {}",
                TOOLS[tool].full,
                caller,
                result
            ),
            D::Confirm => prop_assert!(
                status != "ok",
                "{} ran for inapp without a human's approval: {}",
                TOOLS[tool].full,
                result
            ),
            D::Deny => prop_assert!(
                status == "refused" && ["not_allowed", "unknown_tool", "stale"].contains(&code),
                "{} is not allowed for inapp: {}",
                TOOLS[tool].full,
                result
            ),
            D::Hide => prop_assert!(
                status == "refused" && (code == "unknown_tool" || code == "stale"),
                "{} is hidden from inapp: {}",
                TOOLS[tool].full,
                result
            ),
        }
        if status == "needs_confirmation" {
            prop_assert!(
                result["confirmId"]
                    .as_str()
                    .is_some_and(|id| id.len() == 36),
                "confirmId of {}",
                result
            );
            if let Some(changes) = result["changes"].as_array() {
                for change in changes {
                    if change["path"] == "pw" {
                        for side in ["before", "after"] {
                            if !change[side].is_null() {
                                prop_assert_eq!(&change[side], "[redacted]", "{}", result);
                            }
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// A needs_confirmation was handed out.
    fn announce(&mut self, result: &Value, requester: Option<BridgeId>) -> R {
        let confirm_id = result["confirmId"].as_str().unwrap_or_default().to_owned();
        prop_assert!(
            !self.confs.contains_key(&confirm_id),
            "confirmId {} handed out twice",
            confirm_id
        );
        let tool_key = self
            .page
            .tm
            .pending_confirmations()
            .iter()
            .find(|p| p.confirm_id == confirm_id)
            .and_then(|p| tool_index(&p.tool))
            .and_then(|slot| self.tools.get(&slot).copied());
        self.confs.insert(
            confirm_id.clone(),
            ConfInfo {
                requester,
                tool_key,
                confirmed: false,
                confirmed_on: BTreeSet::new(),
                departed: false,
                held: false,
            },
        );
        self.conf_order.push(confirm_id);
        Ok(())
    }

    fn absorb_event(&mut self, event: Event, step: &mut Step) -> R {
        match event {
            Event::Error {
                code,
                message,
                tool,
            } => {
                step.errors.push(code);
                step.error_events.push((code, message, tool));
            }
            Event::Completed { handle, result } => {
                // The result as the page writes it.
                let text = serde_json::to_string(&result).unwrap_or_default();
                let value = serde_json::from_str::<Value>(&text)
                    .map_err(|e| fail(format!("{text}: {e}")))?;
                let Some(info) = self.handles.get_mut(&handle) else {
                    return Err(fail(format!("Completed for unknown handle {handle:?}")));
                };
                prop_assert!(!info.completed, "{:?} completed twice", handle);
                info.completed = true;
                if let HandleKind::Call {
                    tool,
                    caller,
                    rev,
                    bad_input,
                    held,
                } = info.kind
                {
                    if bad_input {
                        prop_assert_eq!(
                            &value,
                            &json!({"status": "invalid", "issues": [{"path": "", "message": "input must be JSON"}]})
                        );
                    }
                    // A held call's outcome may be the run a human approved.
                    let caller = if held { Caller::Human } else { caller };
                    // (Or that run's refusal: `stale` since the confirmation.)
                    let since = value["message"]
                        .as_str()
                        .is_some_and(|m| m.ends_with("since confirmation was requested"));
                    if !(held && since) {
                        self.check_call_result(tool, caller, rev, &value)?;
                    }
                    if held {
                        step.held_completed.push(value.clone());
                    }
                    if value["status"] == "needs_confirmation" {
                        self.announce(&value, None)?;
                    }
                }
                step.completed.push((handle, value));
            }
            Event::RevChanged { rev } => step.rev_events.push(rev),
            Event::Status { bridge, status } => step.statuses.push((bridge, status)),
            Event::PendingChanged => {}
        }
        Ok(())
    }

    fn absorb_action(&mut self, action: Action, ctx: &Ctx, step: &mut Step) -> R {
        match action {
            Action::Run(RunOrder {
                run,
                tool,
                name,
                input,
                caller,
                call_id,
                snapshot,
                // Checked by the shared spec model (its tools' output schemas).
                check_output,
                validated,
            }) => {
                prop_assert!(
                    !self.runs.contains_key(&run) && !self.settled.contains(&run),
                    "run {:?} started twice",
                    run
                );
                if let Some(value) = validated {
                    // Used once: JS forgets it as the run starts.
                    prop_assert!(
                        self.validated_values.remove(&value),
                        "run {:?} uses the value of validation {:?}, which JS does not keep",
                        run,
                        value
                    );
                    self.count("run with the validated value");
                }
                let Some(index) = tool_index(&name) else {
                    return Err(fail(format!("a run of unknown tool {name}")));
                };
                let t = &TOOLS[index];
                // The core never runs a tool for the agent that the policy
                // does not allow directly.
                if caller == Caller::Inapp {
                    prop_assert_eq!(self.policy.inapp(index), D::Allow, "{} ran for inapp", name);
                }
                // Only registered tools ever run.
                let registered = self.tools.get(&index) == Some(&tool);
                prop_assert!(registered, "a run of unregistered tool {}", name);
                prop_assert_eq!(snapshot, t.snapshot, "snapshot flag of {}", name);
                step.runs.push((run, tool, name.clone()));
                let input = serde_json::from_str::<Value>(&input)
                    .map_err(|e| fail(format!("run input not JSON: {e}")))?;
                if t.schema == Schema::RequiresA {
                    prop_assert!(
                        input.get("a").is_some(),
                        "{} ran with invalid input {}",
                        name,
                        input
                    );
                }
                if snapshot {
                    self.restorers.insert(run);
                }
                self.runs.insert(
                    run,
                    RunInfo {
                        call_id,
                        tool: index,
                        key: tool,
                        js_started: false,
                        check_output,
                        caller,
                        snapshot,
                        snapshot_pending: snapshot,
                        abort: None,
                        orphan_of: None,
                    },
                );
            }
            Action::Validate { run, tool, .. } => {
                self.work_tool.insert(run, tool);
                self.validates.push(run)
            }
            Action::Prepare(PrepareOrder {
                run,
                tool,
                validated,
                ..
            }) => {
                self.work_tool.insert(run, tool);
                if let Some(value) = validated {
                    prop_assert!(
                        self.validated_values.contains(&value),
                        "prepare {:?} uses the value of validation {:?}, which JS does not keep",
                        run,
                        value
                    );
                }
                self.prepares.push(run)
            }
            Action::ForgetValidated { run } => {
                prop_assert!(
                    self.validated_values.remove(&run),
                    "forget of validation {:?}'s value, which JS does not keep",
                    run
                );
                self.count("validated value forgotten");
            }
            Action::ReadState { run, tool, .. } => {
                self.work_tool.insert(run, tool);
                self.read_states.push(run)
            }
            Action::Abort { run } => {
                let now = self.now();
                let Some(info) = self.runs.get_mut(&run) else {
                    return Err(fail(format!("Abort of run {run:?} that is not running")));
                };
                prop_assert!(info.abort.is_none(), "run {:?} aborted twice", run);
                let key = if ctx.detaching.is_some() {
                    "abort by detach"
                } else {
                    "abort by cancel/abort"
                };
                *self.stats.entry(key.into()).or_default() += 1;
                let Some(info) = self.runs.get_mut(&run) else {
                    return Err(fail(format!("Abort of run {run:?} that is not running")));
                };
                info.abort = Some(Abort::Grace {
                    deadline: now + GRACE,
                    timed_out: false,
                });
                step.aborts.push(run);
            }
            Action::Restore { run, restorer } => {
                // Each restorer is run or dropped once, and only one JS holds.
                prop_assert!(
                    self.restorers.remove(&restorer),
                    "restore of {:?}'s restorer, which JS does not hold",
                    restorer
                );
                step.restores.push((run, restorer));
            }
            Action::DropRestorer { run } => {
                prop_assert!(
                    self.restorers.remove(&run),
                    "drop of {:?}'s restorer, which JS does not hold",
                    run
                );
                step.drops.push(run);
            }
            Action::Close { bridge } => {
                prop_assert_eq!(
                    ctx.detaching,
                    Some(bridge),
                    "Close of a bridge not detached"
                );
                step.closes.push(bridge);
            }
        }
        Ok(())
    }

    /// The invariants that hold after every input.
    fn check_state(&mut self, ctx: &Ctx, step: &Step, rev_before: u64) -> R {
        let tm = &self.page.tm;
        let rev = tm.rev();
        // The registered tools, as the human (who sees all) sees them.
        let names: BTreeSet<String> = tm
            .manifest(Caller::Human)
            .into_iter()
            .map(|t| t.name)
            .collect();
        self.tools
            .retain(|index, _| names.contains(TOOLS[*index].full));
        // Runs start only for registered tools.
        for (run, key, name) in &step.runs {
            let index = tool_index(name).unwrap_or(usize::MAX);
            prop_assert_eq!(
                self.tools.get(&index),
                Some(key),
                "run {:?} of {} ({:?}) which is not registered",
                run,
                name,
                key
            );
        }
        // Invariant 2 (at most 32 pending per scope, approved runs included)
        // and the bounds of invariant 4: checked by the shared model.
        // A pending confirmation no result handed out is a held call's: it
        // holds that call's request open, and no call.
        let pending = tm.pending_confirmations();
        for view in &pending {
            if self.confs.contains_key(&view.confirm_id) {
                continue;
            }
            let held_open = self
                .handles
                .values()
                .any(|h| !h.completed && matches!(h.kind, HandleKind::Call { held: true, .. }));
            prop_assert!(
                held_open,
                "pending confirmation {} was never handed out",
                view.confirm_id
            );
            let tool_key = tool_index(&view.tool).and_then(|slot| self.tools.get(&slot).copied());
            self.confs.insert(
                view.confirm_id.clone(),
                ConfInfo {
                    requester: None,
                    tool_key,
                    confirmed: false,
                    confirmed_on: BTreeSet::new(),
                    departed: false,
                    held: true,
                },
            );
            self.conf_order.push(view.confirm_id.clone());
            *self
                .stats
                .entry("held call waiting for a confirmation".into())
                .or_default() += 1;
        }
        // Held calls waiting for their confirmation, or for its approved
        // run (the confirmation's request holds that call).
        let waiting_held = self
            .confs
            .iter()
            .filter(|(id, c)| {
                c.held
                    && (pending.iter().any(|p| p.confirm_id == **id)
                        || self.confirm_handles.iter().any(|(h, cid)| {
                            cid == *id && self.handles.get(h).is_some_and(|i| !i.completed)
                        }))
            })
            .count();
        // Invariant 4: bounded, and exactly what is outstanding.
        let open_calls = self
            .handles
            .values()
            .filter(|h| !h.completed && !matches!(h.kind, HandleKind::Undo))
            .count()
            - waiting_held;
        let mut bridge_calls = 0;
        // answered_ids() is the spec's answered-id memory: the shared model.
        for (id, b) in &self.bridges {
            bridge_calls += b.in_flight.len();
            if b.attached {
                for (req, kind) in &b.in_flight {
                    prop_assert!(
                        matches!(kind, ReqKind::Call { .. }),
                        "{} ({:?}) on {:?} was not answered at once",
                        req,
                        kind,
                        id
                    );
                }
            } else {
                for req in b.in_flight.keys() {
                    prop_assert!(
                        self.runs
                            .values()
                            .any(|r| r.call_id == *req && r.orphan_of == Some(*id)),
                        "{} of detached {:?} in flight without a run: {:?}",
                        req,
                        id,
                        self.runs
                    );
                }
            }
        }
        prop_assert_eq!(
            tm.calls_in_flight(),
            bridge_calls + open_calls,
            "calls in flight vs. unanswered bridge calls ({}) and page calls ({})",
            bridge_calls,
            open_calls
        );
        // Confirmations.
        prop_assert_eq!(tm.pending_confirmation_count(), pending.len());
        let now = self.page.now;
        let ids: Vec<String> = pending.iter().map(|p| p.confirm_id.clone()).collect();
        for view in &pending {
            let Some(conf) = self.confs.get(&view.confirm_id) else {
                return Err(fail(format!(
                    "pending confirmation {} was never handed out",
                    view.confirm_id
                )));
            };
            prop_assert!(
                !conf.departed && !conf.confirmed,
                "{} came back",
                view.confirm_id
            );
            if !self.pending.contains(&view.confirm_id) {
                prop_assert_eq!(
                    view.expires_at,
                    now + CONFIRM_EXPIRY,
                    "expiry of a new confirmation"
                );
            }
        }
        let departed: Vec<String> = self
            .pending
            .iter()
            .filter(|id| !ids.contains(id))
            .cloned()
            .collect();
        // Held calls' confirmations that ended unapproved.
        let mut held_ended = 0;
        for id in departed {
            let targets = self.confirmed_targets(self.confs.get(&id).and_then(|c| c.requester));
            let Some(conf) = self.confs.get_mut(&id) else {
                continue;
            };
            conf.departed = true;
            if conf.held && ctx.approving.as_deref() != Some(id.as_str()) {
                held_ended += 1;
            }
            // Rejected, expired or evicted: its confirmed goes out now, on
            // the requesting bridge or (gone) on every bridge attached now.
            // (Approved: when the approved run finishes.)
            if ctx.approving.as_deref() != Some(id.as_str()) {
                for bridge in targets {
                    prop_assert!(
                        conf.confirmed_on.contains(&bridge),
                        "confirmation {} ended without a confirmed on {:?}",
                        id,
                        bridge
                    );
                }
            }
        }
        for (_, confirm_id, _) in &step.confirmeds {
            prop_assert!(!ids.contains(confirm_id), "confirmed while still pending");
        }
        // Each completes its held call now: rejected (`cancelled
        // operator`), expired or evicted (`refused confirmation_expired`),
        // or aborted (`cancelled signal`).
        let ends = [
            json!({"status": "cancelled", "by": "operator"}),
            json!({"status": "cancelled", "by": "signal"}),
        ];
        let ended_now = step
            .held_completed
            .iter()
            .filter(|r| ends.contains(r) || r["code"] == "confirmation_expired")
            .count();
        prop_assert!(
            ended_now >= held_ended,
            "{} held calls' confirmations ended, {} held calls completed: {:?}",
            held_ended,
            ended_now,
            step
        );
        if ids.len() == 100 {
            *self
                .stats
                .entry("100 pending confirmations".into())
                .or_default() += 1;
        }
        self.pending = ids;
        // The next deadline: the earliest expiry or end of an abort grace
        // period.
        let mut deadline = pending.iter().map(|p| p.expires_at).min();
        for info in self.runs.values() {
            if let Some(Abort::Grace {
                deadline: end,
                timed_out: false,
            }) = info.abort
            {
                deadline = Some(deadline.map_or(end, |d| d.min(end)));
            }
        }
        prop_assert_eq!(
            self.page.deadline,
            deadline,
            "the deadline poll_output ends with"
        );
        // Revisions: every attached bridge hears about each one.
        for r in &step.rev_events {
            prop_assert_eq!(*r, rev);
        }
        if rev != rev_before {
            let inapp: Vec<String> = tm
                .manifest(Caller::Inapp)
                .into_iter()
                .map(|t| t.name)
                .collect();
            for (id, b) in &self.bridges {
                if !b.attached {
                    continue;
                }
                let Some((_, last)) = step.announcements.iter().rev().find(|(to, _)| to == id)
                else {
                    return Err(fail(format!("{id:?} did not hear of rev {rev}")));
                };
                prop_assert_eq!(last["rev"].as_u64(), Some(rev));
                if last["type"] == "manifest" {
                    let listed: Vec<&str> = last["tools"]
                        .as_array()
                        .map(|t| t.iter().filter_map(|t| t["name"].as_str()).collect())
                        .unwrap_or_default();
                    prop_assert_eq!(listed, inapp.iter().map(String::as_str).collect::<Vec<_>>());
                }
            }
        }
        Ok(())
    }

    // ----- helpers -------------------------------------------------------------------

    fn attached(&self) -> Vec<BridgeId> {
        self.bridges
            .iter()
            .filter(|(_, b)| b.attached)
            .map(|(id, _)| *id)
            .collect()
    }

    fn target(&self, to: To) -> BridgeId {
        let attached = self.attached();
        let all: Vec<BridgeId> = self.bridges.keys().copied().collect();
        match to {
            To::Attached(i) if !attached.is_empty() => attached[i.index(attached.len())],
            To::Attached(i) | To::Any(i) => all[i.index(all.len())],
        }
    }

    fn id(&mut self, sel: IdSel) -> String {
        match sel {
            IdSel::Pool(i) => POOL[i].to_owned(),
            IdSel::Fresh => {
                self.fresh += 1;
                format!("f{}", self.fresh)
            }
        }
    }

    fn rev(&self, sel: RevSel) -> Option<u64> {
        let current = self.page.tm.rev();
        match sel {
            RevSel::None => None,
            RevSel::Current => Some(current),
            RevSel::Old(i) => Some(i.index(current as usize + 1) as u64),
            RevSel::Future => Some(current + 5),
        }
    }

    /// Rule 2, per page: in flight on any bridge, or among the page's last
    /// 1000 answered ids.
    fn is_duplicate(&self, id: &str) -> bool {
        // Rule 2 per page: answered on any bridge (the shared model's memory),
        // or in flight on any.
        self.spec.recent.contains(id) || self.bridges.values().any(|b| b.in_flight.contains_key(id))
    }

    /// Where the `confirmed` of a bridge's confirmation goes: its bridge,
    /// or, once that is detached, every bridge attached now (none: dropped).
    fn confirmed_targets(&self, requester: Option<BridgeId>) -> Vec<BridgeId> {
        match requester {
            None => Vec::new(),
            Some(bridge) if self.is_attached(bridge) => vec![bridge],
            Some(_) => self.attached(),
        }
    }

    fn is_attached(&self, bridge: BridgeId) -> bool {
        self.bridges.get(&bridge).is_some_and(|b| b.attached)
    }

    fn inbound(&mut self, bridge: BridgeId, text: &str) -> R<Step> {
        let text = text.to_owned();
        self.deliver(Input::Inbound { bridge, text }, bridge)
    }

    /// `text` as a WebSocket frame: as a delivered message, but a frame
    /// that is not JSON text is dropped silently (the spec's frame rule).
    fn frame(&mut self, bridge: BridgeId, text: &str) -> R<Step> {
        let text = text.to_owned();
        self.deliver(Input::InboundFrame { bridge, text }, bridge)
    }

    fn deliver(&mut self, input: Input, bridge: BridgeId) -> R<Step> {
        let (_, step) = self.step(Ctx::default(), input, |_, _| {})?;
        if !self.is_attached(bridge) {
            prop_assert!(step.silent(), "a detached bridge's message had effects");
        }
        Ok(step)
    }

    /// An inbound request (call/describe/protocol 2) with an id: a duplicate
    /// does nothing at all (rule 2); otherwise it is expected to be answered.
    fn request(&mut self, bridge: BridgeId, id: &str, kind: ReqKind, text: &str) -> R<Step> {
        let fresh = self.bridges.get(&bridge).is_some_and(|b| b.attached) && !self.is_duplicate(id);
        if fresh {
            if let Some(b) = self.bridges.get_mut(&bridge) {
                b.in_flight.insert(id.to_owned(), kind);
            }
        }
        let step = self.inbound(bridge, text)?;
        if !fresh {
            prop_assert!(step.silent(), "duplicate id {} was not ignored", id);
            if self.is_attached(bridge) {
                self.count("duplicate ignored");
            }
        }
        Ok(step)
    }

    /// A request that must be answered within its own step, with one
    /// message, unless it is a duplicate or its bridge is detached: the
    /// answer's result, if it was expected.
    fn answered_at_once(
        &mut self,
        bridge: BridgeId,
        id: &str,
        kind: ReqKind,
        text: &str,
        unanswered: &str,
    ) -> R<Option<Value>> {
        let fresh = self.bridges.get(&bridge).is_some_and(|b| b.attached) && !self.is_duplicate(id);
        let step = self.request(bridge, id, kind, text)?;
        if !fresh {
            return Ok(None);
        }
        let result = step
            .results
            .iter()
            .find(|(b, i, _)| *b == bridge && i == id)
            .map(|(_, _, result)| result.clone());
        prop_assert!(result.is_some(), "{}", unanswered);
        prop_assert_eq!(step.transmits, 1);
        Ok(result)
    }

    fn answered_now(&self, bridge: BridgeId, id: &str, step: &Step) -> bool {
        step.results.iter().any(|(b, i, _)| *b == bridge && i == id)
    }

    fn call_message(&self, id: &str, tool: &str, input: Value, rev: Option<u64>) -> Value {
        let mut message = json!({"protocol": 1, "type": "call", "clientId": self.client_id,
                                 "id": id, "tool": tool, "input": input});
        if let (Some(rev), Some(map)) = (rev, message.as_object_mut()) {
            map.insert("rev".into(), rev.into());
        }
        message
    }

    fn inbound_call(
        &mut self,
        to: To,
        id: String,
        tool: usize,
        input: Value,
        rev: Option<u64>,
    ) -> R {
        let bridge = self.target(to);
        let name = tool_name(tool);
        let text = self.call_message(&id, name, input, rev).to_string();
        let known = (tool < TOOLS.len()).then_some(tool);
        let was_fresh =
            self.bridges.get(&bridge).is_some_and(|b| b.attached) && !self.is_duplicate(&id);
        let step = self.request(bridge, &id, ReqKind::Call { tool: known, rev }, &text)?;
        if was_fresh {
            let registered = known.is_some_and(|t| self.tools.contains_key(&t));
            let hidden = known.is_some_and(|t| self.policy.inapp(t) == D::Hide);
            if !registered || hidden {
                prop_assert!(
                    self.answered_now(bridge, &id, &step),
                    "call of a missing tool not answered at once"
                );
                let current = self.page.tm.rev();
                let result = &step
                    .results
                    .iter()
                    .find(|r| r.1 == id)
                    .map(|r| r.2.clone())
                    .unwrap_or_default();
                let stale = rev.is_some_and(|r| r < current);
                prop_assert_eq!(
                    &result["code"],
                    if stale { "stale" } else { "unknown_tool" },
                    "rule 6: {}",
                    result
                );
                prop_assert_eq!(result["rev"].as_u64(), Some(current));
            }
        }
        Ok(())
    }

    // ----- operations ---------------------------------------------------------------

    fn register(&mut self, index: usize) -> R {
        let scope = self.scopes[TOOLS[index].slot].unwrap_or(ScopeId(999));
        let def = tool_def(index);
        let rev_before = self.page.tm.rev();
        let (registered, _) = self.step(
            Ctx::default(),
            Input::Register {
                scope,
                def: Box::new(def),
            },
            |model, registered| {
                if let Reply::Registered(Ok(Some(key))) = registered {
                    model.tools.insert(index, *key);
                }
            },
        )?;
        let added = matches!(registered, Reply::Registered(Ok(Some(_))));
        prop_assert_eq!(self.page.tm.rev(), rev_before + u64::from(added));
        Ok(())
    }

    fn unregister(&mut self, pick: Pick) -> R {
        let mut keys: Vec<ToolKey> = self.tools.values().copied().collect();
        keys.extend(self.gone_keys.iter().copied());
        if keys.is_empty() {
            return Ok(());
        }
        let key = keys[pick.index(keys.len())];
        let live = self.tools.values().any(|k| *k == key);
        let rev_before = self.page.tm.rev();
        self.step(Ctx::default(), Input::Unregister(key), |_, _| {})?;
        prop_assert_eq!(self.page.tm.rev(), rev_before + u64::from(live));
        if !self.gone_keys.contains(&key) {
            self.gone_keys.push(key);
        }
        Ok(())
    }

    fn recreate(&mut self, slot: usize) -> R {
        let (parent_slot, name) = SLOTS[slot];
        let parent = self.scopes[parent_slot].unwrap_or(ScopeId(999));
        let (created, step) = self.step(
            Ctx::default(),
            Input::CreateScope {
                parent,
                name: name.to_owned(),
            },
            |_, _| {},
        )?;
        prop_assert_eq!(step.transmits + step.actions, 0);
        if let Reply::ScopeCreated(Ok(ScopeMade::Live(scope))) = created {
            self.scopes[slot] = Some(scope);
        }
        Ok(())
    }

    fn dispose(&mut self, slot: usize) -> R {
        let Some(scope) = self.scopes[slot] else {
            return Ok(());
        };
        let (_disposed, _) = self.step(Ctx::default(), Input::DisposeScope(scope), |_, _| {})?;
        Ok(())
    }

    fn settle(&mut self, run: RunId, outcome: Outcome) -> R {
        let input = Input::Outcome(run, outcome.clone());
        self.settle_by(run, &outcome, input, None).map(|_| ())
    }

    /// `input` ends `run` as `outcome` would: its call's answer (or its
    /// late_result), and its restorer kept or dropped, if JS holds one.
    /// `answers`: what its call may be answered instead (one of them).
    fn settle_by(
        &mut self,
        run: RunId,
        outcome: &Outcome,
        input: Input,
        answers: Option<Vec<Value>>,
    ) -> R<Reply> {
        let Some(info) = self.runs.remove(&run) else {
            return Ok(Reply::None);
        };
        // JS holds a restorer for it (a snapshot that gave none leaves none).
        let held = self.restorers.contains(&run);
        self.settled.push(run);
        let expected = match outcome {
            Outcome::Ok(None) => json!({"status": "ok"}),
            Outcome::Ok(Some(text)) => match serde_json::from_str::<serde_json::Value>(text) {
                Ok(data) => json!({"status": "ok", "data": data}),
                Err(_) => json!({"status": "error", "message": "Result not serializable"}),
            },
            // Spec: a cancelled call's own result is normally `cancelled
            // signal`; what an aborted run throws is its abort.
            Outcome::Threw(_) if info.abort.is_some() => {
                json!({"status": "cancelled", "by": "signal"})
            }
            Outcome::Threw(_) => json!({"status": "error", "message": "Tool failed"}),
            Outcome::NotSerializable(_) => {
                json!({"status": "error", "message": "Result not serializable"})
            }
            Outcome::Aborted => json!({"status": "cancelled", "by": "signal"}),
        };
        let ok = answers.is_none() && expected["status"] == "ok";
        let expected = answers.unwrap_or_else(|| vec![expected]);
        // A detached bridge's call leaves flight as it settles (in its
        // grace period; after it, it left when abandoned).
        let mut orphan_was_in_flight = false;
        if let (
            Some(bridge),
            None
            | Some(Abort::Grace {
                timed_out: false, ..
            }),
        ) = (info.orphan_of, info.abort)
        {
            orphan_was_in_flight = self
                .bridges
                .get_mut(&bridge)
                .is_some_and(|b| b.in_flight.remove(&info.call_id).is_some());
        }
        let (reply, step) = self.step(Ctx::default(), input, |_, _| {})?;
        let late = step.late_results();
        let answered = step.answers() > 0;
        let expect_answer = |step: &Step| -> R {
            prop_assert!(
                step.all_answer_values().any(|v| expected.contains(v)),
                "run {:?} ({}) settled: expected one of {:?} among the answers, got {:?}",
                run,
                TOOLS[info.tool].full,
                expected,
                step
            );
            prop_assert_eq!(step.late_results(), 0);
            Ok(())
        };
        let timed_out = matches!(
            info.abort,
            Some(Abort::Grace {
                timed_out: true,
                ..
            })
        );
        let orphan_settled = match info.orphan_of {
            Some(bridge) if !timed_out => {
                // Its bridge is gone: settled, answered on no bridge, its id
                // out of flight (the shared model remembers it as answered).
                prop_assert!(
                    step.results.iter().all(|(_, id, _)| *id != info.call_id),
                    "the result of a detached bridge's call was sent: {:?}",
                    step
                );
                prop_assert_eq!(late, 0, "a detached call settling in its grace period");
                prop_assert!(
                    orphan_was_in_flight,
                    "the settled call {} of detached {:?} was not in flight",
                    info.call_id,
                    bridge
                );
                self.count("a detached bridge's call settled");
                true
            }
            _ => false,
        };
        if orphan_settled {
        } else if timed_out {
            prop_assert!(
                late == 1 && !answered,
                "a run settling after its grace period: {:?}",
                step
            );
        } else {
            expect_answer(&step)?;
        }
        // The restorer is the run's own, even if its tool was unregistered
        // meanwhile (none when its snapshot gave none: no drop either).
        if held && (answered || orphan_settled) {
            if ok {
                self.kept.push(info.call_id.clone());
                self.kept_run.insert(info.call_id.clone(), run);
            } else {
                prop_assert!(
                    step.drops.contains(&run),
                    "a failed snapshot run kept its restorer"
                );
            }
        }
        Ok(reply)
    }

    /// A run's `snapshot` settled. While its call runs, the run goes on
    /// (a snapshot that gave no restorer leaves none to keep or drop);
    /// once cancelled, it goes no further: over as aborted (answered
    /// `cancelled signal` in its grace period, `late_result` once
    /// abandoned). Any other run (no snapshot, or over) is left as it is.
    fn snapshot(&mut self, pick: Pick, restorer: bool) -> R {
        // Mostly an abandoned run's if there is one, else a cancelled
        // run's, else any run's.
        let abandoned = |r: &RunInfo| r.timed_out();
        let aborted = |r: &RunInfo| r.abort.is_some();
        let any = |_: &RunInfo| true;
        let tiers: [&dyn Fn(&RunInfo) -> bool; 3] = [&abandoned, &aborted, &any];
        let pending: Vec<RunId> = tiers
            .iter()
            .skip(usize::from(pick.0 % 4 == 3) * 2)
            .map(|tier| {
                self.runs
                    .iter()
                    .filter(|(_, r)| r.snapshot_pending && tier(r))
                    .map(|(run, _)| *run)
                    .collect::<Vec<RunId>>()
            })
            .find(|runs| !runs.is_empty())
            .unwrap_or_default();
        if pending.is_empty() || pick.0 % 5 == 4 {
            // No snapshot to settle: a run without one (not abandoned), a
            // run over, a validation's or preparation's run.
            let other: Vec<RunId> = self
                .runs
                .iter()
                .filter(|(_, r)| !r.snapshot && !r.timed_out())
                .map(|(run, _)| *run)
                .chain(self.settled.iter().copied())
                .chain(self.validates.iter().copied())
                .chain(self.prepares.iter().copied())
                .chain(self.read_states.iter().copied())
                .collect();
            if other.is_empty() {
                return Ok(());
            }
            let run = other[pick.index(other.len())];
            let (reply, step) = self.step(
                Ctx::default(),
                Input::SnapshotTaken { run, restorer },
                |_, _| {},
            )?;
            prop_assert_eq!(reply, Reply::GoesOn(false), "snapshot of {:?}", run);
            prop_assert!(
                step.silent(),
                "a snapshot of {:?}, which asked for none, had effects: {:?}",
                run,
                step
            );
            self.count("snapshot of a run that asked for none");
            return Ok(());
        }
        self.snapshot_taken(pending[pick.index(pending.len())], restorer)
    }

    /// The `snapshot` of `run`, which asked for one, settled.
    fn snapshot_taken(&mut self, run: RunId, restorer: bool) -> R {
        let Some(info) = self.runs.get_mut(&run) else {
            return Ok(());
        };
        info.snapshot_pending = false;
        info.js_started = true;
        let running = info.abort.is_none();
        let timed_out = info.timed_out();
        if !restorer {
            // JS keeps none: the core must neither restore nor drop one.
            self.restorers.remove(&run);
        }
        let input = Input::SnapshotTaken { run, restorer };
        if running {
            let (reply, step) = self.step(Ctx::default(), input, |_, _| {})?;
            prop_assert_eq!(reply, Reply::GoesOn(true), "snapshot of running {:?}", run);
            prop_assert!(step.silent(), "a snapshot had effects: {:?}", step);
            self.count(if restorer {
                "snapshot with a restorer"
            } else {
                "snapshot without a restorer"
            });
            return Ok(());
        }
        let reply = self.settle_by(run, &Outcome::Aborted, input, None)?;
        prop_assert_eq!(reply, Reply::GoesOn(false), "snapshot of aborted {:?}", run);
        self.count(if timed_out {
            "snapshot of an abandoned run"
        } else {
            "snapshot of a run in its grace period"
        });
        Ok(())
    }

    /// A result for a tool that is gone: `refused stale` when the call's
    /// rev is older than the registry's, else `refused unknown_tool`; an
    /// approved call's, `refused stale` since its confirmation.
    fn gone_answers(&self, rev: Option<u64>, approved: bool) -> Vec<Value> {
        let current = self.page.tm.rev();
        let stale = |message: &str| json!({"status": "refused", "code": "stale", "message": message, "rev": current});
        let since = stale("The tool is gone since confirmation was requested");
        let missing = if rev.is_some_and(|r| r < current) {
            stale("The tool is gone: use the latest manifest")
        } else {
            json!({"status": "refused", "code": "unknown_tool", "message": "No such tool", "rev": current})
        };
        if approved {
            vec![since]
        } else {
            vec![missing]
        }
    }

    /// JS found no functions for the tool of a run it was asked for (the
    /// tool was unregistered since): nothing of it runs. A call whose run
    /// or step JS owes is answered as one whose tool is gone; one cancelled
    /// meanwhile, `cancelled signal` (no restorer: no snapshot was taken);
    /// an abandoned or finished one is left as it is.
    /// (The tool of the picked run is unregistered first if it is still
    /// registered: a listener of an earlier output did it before JS
    /// started the run.)
    fn tool_gone(&mut self, pick: Pick) -> R {
        // Runs JS has not started (one time in three, a cancelled one's if
        // there is one), and the validations, preparations and form state
        // reads it owes.
        let cancelled = pick.0 % 3 == 0
            && self
                .runs
                .values()
                .any(|r| !r.js_started && r.abort.is_some());
        let mut owed: Vec<RunId> = self
            .runs
            .iter()
            .filter(|(_, r)| !r.js_started && (!cancelled || r.abort.is_some()))
            .map(|(run, _)| *run)
            .collect();
        if !cancelled {
            owed.extend(
                self.validates
                    .iter()
                    .chain(&self.prepares)
                    .chain(&self.read_states),
            );
        }
        if owed.is_empty() || pick.0 % 5 == 4 {
            if self.settled.is_empty() {
                return Ok(());
            }
            let run = self.settled[pick.index(self.settled.len())];
            let (_, step) = self.step(Ctx::default(), Input::ToolGone(run), |_, _| {})?;
            prop_assert!(step.silent(), "tool gone for {:?}, which is over", run);
            self.count("tool gone for a run that is over");
            return Ok(());
        }
        let run = owed[pick.index(owed.len())];
        let key = match self.runs.get(&run) {
            Some(info) => Some(info.key),
            None => self.work_tool.get(&run).copied(),
        };
        if let Some(key) = key.filter(|k| self.tools.values().any(|t| t == k)) {
            self.step(Ctx::default(), Input::Unregister(key), |_, _| {})?;
            if !self.gone_keys.contains(&key) {
                self.gone_keys.push(key);
            }
        }
        let Some(info) = self.runs.get(&run) else {
            // A validation, preparation or form state read.
            let approved = self.read_states.contains(&run);
            for list in [
                &mut self.validates,
                &mut self.prepares,
                &mut self.read_states,
            ] {
                list.retain(|r| *r != run);
            }
            let answers = self.gone_answers(None, approved);
            let answers = if approved {
                answers
            } else {
                // The call's rev is not known here: either answer.
                let mut both = self.gone_answers(None, false);
                both.extend(self.gone_answers(Some(0), false));
                both
            };
            let (_, step) = self.step(Ctx::default(), Input::ToolGone(run), |_, _| {})?;
            // (Its call may have been cancelled since: then nothing.)
            let answered = step.all_answer_values().any(|v| answers.contains(v));
            prop_assert!(
                answered || step.silent(),
                "tool gone for {:?} (a step JS owed): expected one of {:?}, got {:?}",
                run,
                answers,
                step
            );
            if answered {
                self.count("tool gone before a validation, preparation or state read");
            }
            return Ok(());
        };
        if info.timed_out() {
            self.runs.remove(&run);
            let (_, step) = self.step(Ctx::default(), Input::ToolGone(run), |_, _| {})?;
            prop_assert!(
                step.silent(),
                "tool gone for abandoned {:?} had effects",
                run
            );
            self.count("tool gone for an abandoned run");
            return Ok(());
        }
        // JS took no snapshot: it holds no restorer for the run.
        self.restorers.remove(&run);
        if info.abort.is_some() {
            self.settle_by(run, &Outcome::Aborted, Input::ToolGone(run), None)?;
            self.count("tool gone for a run in its grace period");
            return Ok(());
        }
        // A bridge call's run: its rev is known, so its answer is exact.
        let bridge_rev = self
            .bridges
            .values()
            .filter(|b| b.attached && info.orphan_of.is_none())
            .filter(|_| info.caller == Caller::Inapp && info.call_id.len() != 36)
            .find_map(|b| match b.in_flight.get(&info.call_id) {
                Some(ReqKind::Call { rev, .. }) => Some(*rev),
                _ => None,
            });
        let answers = match bridge_rev {
            Some(rev) => self.gone_answers(rev, false),
            None => {
                let mut any = self.gone_answers(None, false);
                any.extend(self.gone_answers(Some(0), false));
                any.extend(self.gone_answers(None, true));
                any
            }
        };
        self.settle_by(run, &Outcome::Aborted, Input::ToolGone(run), Some(answers))?;
        self.count("tool gone for a run");
        Ok(())
    }

    /// JS checked a run's value against the tool's Standard Schema output
    /// (dev mode): a failure is one `output_invalid` event naming the tool
    /// and the first issue (or what the validator threw), and nothing else;
    /// a pass, or a run abandoned or over, nothing.
    fn output_checked(&mut self, pick: Pick, kind: u8) -> R {
        let checked: Vec<RunId> = self
            .runs
            .iter()
            .filter(|(_, r)| r.check_output)
            .map(|(run, _)| *run)
            .collect();
        let (run, live) = if checked.is_empty() || pick.0 % 5 == 4 {
            if self.settled.is_empty() {
                return Ok(());
            }
            (self.settled[pick.index(self.settled.len())], None)
        } else {
            return self.check_output_of(checked[pick.index(checked.len())], kind);
        };
        self.output_check(run, live, kind)
    }

    /// JS checked the value `run` returned, which it was asked to check.
    fn check_output_of(&mut self, run: RunId, kind: u8) -> R {
        let Some(info) = self.runs.get_mut(&run) else {
            return Ok(());
        };
        info.js_started = true;
        let live = (!info.timed_out()).then(|| TOOLS[info.tool].full);
        self.output_check(run, live, kind)
    }

    /// `live`: the tool's name if the run's call still waits for it.
    fn output_check(&mut self, run: RunId, live: Option<&'static str>, kind: u8) -> R {
        let result = match kind {
            0 => Ok(Vec::new()),
            1 => Ok(vec![
                Issue {
                    path: "x.0".into(),
                    message: "Expected number".into(),
                },
                Issue {
                    path: "y".into(),
                    message: "Required".into(),
                },
            ]),
            _ => Err("TypeError: schema blew up".into()),
        };
        let problem = match &result {
            Ok(issues) if issues.is_empty() => None,
            Ok(_) => Some(" at 'x.0': Expected number"),
            Err(_) => Some(": its validator threw (TypeError: schema blew up)"),
        };
        let (_, step) = self.step(Ctx::default(), Input::OutputChecked(run, result), |_, _| {})?;
        let expected: Vec<(ErrorEventCode, String, Option<String>)> = live
            .zip(problem)
            .map(|(name, problem)| {
                (
                    ErrorEventCode::OutputInvalid,
                    format!("output of '{name}' fails its output schema{problem}"),
                    Some(name.to_owned()),
                )
            })
            .into_iter()
            .collect();
        prop_assert_eq!(&step.error_events, &expected, "output check of {:?}", run);
        prop_assert_eq!(step.transmits + step.actions, 0);
        prop_assert_eq!(step.events, expected.len());
        self.count(match (live, problem) {
            (None, _) => "output check of a run abandoned or over",
            (Some(_), None) => "output check passed",
            (Some(_), Some(_)) => "output check failed",
        });
        Ok(())
    }

    fn settle_again(&mut self, pick: Pick) -> R {
        if self.settled.is_empty() {
            return Ok(());
        }
        let run = self.settled[pick.index(self.settled.len())];
        let (_, step) = self.step(
            Ctx::default(),
            Input::Outcome(run, Outcome::Ok(None)),
            |_, _| {},
        )?;
        prop_assert!(step.silent(), "a second outcome of {:?} had effects", run);
        Ok(())
    }

    fn validate_answer(&mut self, run: RunId, kind: u8) -> R {
        let validated = match kind {
            0 => Validated::Valid(None),
            1 => Validated::Valid(Some(r#"{"a":2}"#.into())),
            2 => Validated::Valid(Some("{bad".into())),
            3 => Validated::Invalid(vec![Issue {
                path: "a".into(),
                message: "Required".into(),
            }]),
            4 => Validated::Threw("schema blew up".into()),
            _ => Validated::NotJson("bigint at \"n\"".into()),
        };
        if matches!(validated, Validated::Valid(Some(_))) {
            self.validated_values.insert(run);
        }
        self.step(Ctx::default(), Input::Validated(run, validated), |_, _| {})?;
        Ok(())
    }

    fn prepare_answer(&mut self, run: RunId, kind: u8) -> R {
        let prepared = match kind {
            0 => Ok(Prepared {
                summary: Some("Do it".into()),
                changes: Some(vec![
                    FieldChange {
                        path: "pw".into(),
                        before: Some(json!("old")),
                        after: Some(json!("new")),
                    },
                    FieldChange {
                        path: "name".into(),
                        before: None,
                        after: Some(json!("Ann")),
                    },
                ]),
                state: Some("s1".into()),
            }),
            1 => Ok(Prepared {
                state: Some("s2".into()),
                ..Prepared::default()
            }),
            2 => Ok(Prepared::default()),
            3 => Err(Unprepared::Threw("summary threw".into())),
            _ => Err(Unprepared::NotSerializable("NaN at key 'after'".into())),
        };
        self.step(Ctx::default(), Input::Prepared(run, prepared), |_, _| {})?;
        Ok(())
    }

    fn read_state_answer(&mut self, run: RunId, kind: u8) -> R {
        let state = match kind {
            0 => Ok(Some("s1".into())),
            1 => Ok(Some("s2".into())),
            2 => Ok(None),
            _ => Err("form gone".into()),
        };
        self.step(Ctx::default(), Input::State(run, state), |_, _| {})?;
        Ok(())
    }

    fn restore_answer(&mut self, run: RunId, ok: bool) -> R {
        let Some(handle) = self.restores.remove(&run) else {
            return Ok(());
        };
        let restored = if ok {
            Ok(())
        } else {
            Err("restorer threw".into())
        };
        let (_, step) = self.step(Ctx::default(), Input::Restored(run, restored), |_, _| {})?;
        prop_assert!(
            step.completed.iter().any(|(h, _)| *h == handle),
            "undo {:?} did not complete",
            handle
        );
        Ok(())
    }

    fn page_call(&mut self, tool: usize, caller: Caller, input: usize, rev: Option<u64>) -> R {
        self.page_call_with(tool, caller, input, rev, 0, false)
    }

    /// `tm.call` with a `signal`, or WebMCP's `execute` (`held`: caller
    /// inapp, no rev, an input JSON cannot write given as `null`).
    fn page_call_with(
        &mut self,
        tool: usize,
        caller: Caller,
        input: usize,
        rev: Option<u64>,
        signal: u8,
        held: bool,
    ) -> R {
        let name = tool_name(tool);
        let known = (tool < TOOLS.len()).then_some(tool);
        let given = match signal {
            1 => GivenSignal::Aborted,
            2 => GivenSignal::Listenable,
            3 if held => GivenSignal::Other,
            _ => GivenSignal::Absent,
        };
        let text = || match INPUTS[input] {
            "{" => GivenText::NotJson,
            json => GivenText::Json(json.to_owned()),
        };
        let (call, caller, rev, bad_input) = if held {
            let call = PageCall::held(text(), given, signal == 4);
            (Some(call), Caller::Inapp, None, false)
        } else if given == GivenSignal::Absent {
            (None, caller, rev, input >= JSON_INPUTS)
        } else {
            let signal = match given {
                GivenSignal::Aborted => SignalUse::Abort,
                _ => SignalUse::Listen { required: true },
            };
            let call = PageCall {
                input_json: INPUTS[input].to_owned(),
                caller,
                rev,
                signal,
                held: false,
            };
            (Some(call), caller, rev, input >= JSON_INPUTS)
        };
        let aborted = call.as_ref().is_some_and(|c| c.signal == SignalUse::Abort);
        let input_value = match call {
            Some(call) => Input::PageCall {
                name: name.to_owned(),
                call,
            },
            None => Input::Call {
                name: name.to_owned(),
                input: INPUTS[input].to_owned(),
                caller,
                rev,
            },
        };
        let in_flight = self.page.tm.calls_in_flight();
        let (reply, step) = self.step(Ctx::default(), input_value, |model, reply| {
            let handle = reply.handle();
            let kind = if aborted {
                HandleKind::AbortedCall
            } else {
                HandleKind::Call {
                    tool: known,
                    caller,
                    rev,
                    bad_input,
                    held,
                }
            };
            model.handles.insert(
                handle,
                HandleInfo {
                    kind,
                    completed: false,
                },
            );
        })?;
        let handle = reply.handle();
        if aborted {
            // Its signal had aborted: `cancelled signal` at once, nothing
            // looked up, validated or run.
            prop_assert_eq!(
                &step.completed,
                &vec![(handle, json!({"status": "cancelled", "by": "signal"}))]
            );
            prop_assert_eq!((step.transmits, step.events, step.actions), (0, 1, 0));
            prop_assert_eq!(self.page.tm.calls_in_flight(), in_flight);
            self.count("page call with an aborted signal");
            return Ok(());
        }
        if held {
            self.count("held call");
        }
        // Nothing but the `confirmed` of a confirmation it evicted.
        prop_assert_eq!(
            step.transmits,
            step.confirmeds.len(),
            "a page call sent a result"
        );
        let missing = !known.is_some_and(|t| self.tools.contains_key(&t));
        if bad_input || missing {
            prop_assert!(
                self.handles.get(&handle).is_some_and(|h| h.completed),
                "a page call with bad input or of a missing tool was not completed at once"
            );
        }
        Ok(())
    }

    fn confirm(&mut self, pick: ConfSel, approve: bool) -> R {
        let confirm_id = match pick {
            ConfSel::Pending(i) if !self.pending.is_empty() => {
                self.pending[i.index(self.pending.len())].clone()
            }
            ConfSel::Known(i) | ConfSel::Pending(i) if !self.conf_order.is_empty() => {
                self.conf_order[i.index(self.conf_order.len())].clone()
            }
            _ => "11111111-2222-4333-8444-555555555555".to_owned(),
        };
        // Pending and not yet expired (time may have passed without the
        // timer firing: then it is expired all the same).
        let now = self.now();
        let pending = self.page.tm.pending_confirmations();
        let was_pending = pending
            .iter()
            .any(|p| p.confirm_id == confirm_id && p.expires_at > now);
        let any_due = pending.iter().any(|p| p.expires_at <= now);
        // Rule 5 holds for approvals: on a full scope the approval is refused
        // busy and the confirmation stays pending.
        let busy = approve
            && was_pending
            && pending
                .iter()
                .find(|p| p.confirm_id == confirm_id)
                .filter(|p| {
                    let registered = tool_index(&p.tool).and_then(|slot| self.tools.get(&slot));
                    let asked_for = self
                        .confs
                        .get(&confirm_id)
                        .and_then(|c| c.tool_key.as_ref());
                    registered.is_some() && registered == asked_for
                })
                .and_then(|p| self.page.tm.scope_pending(&p.tool))
                .is_some_and(|n| n >= 32);
        let was_pending = was_pending && !busy;
        let ctx = Ctx {
            approving: (approve && was_pending).then(|| confirm_id.clone()),
            ..Ctx::default()
        };
        let (reply, step) = self.step(
            ctx,
            Input::Confirm {
                confirm_id: confirm_id.clone(),
                approve,
            },
            |model, reply| {
                let handle = reply.handle();
                model.handles.insert(
                    handle,
                    HandleInfo {
                        kind: HandleKind::Confirm,
                        completed: false,
                    },
                );
                if was_pending {
                    model.confirm_handles.insert(handle, confirm_id.clone());
                }
            },
        )?;
        let handle = reply.handle();
        if busy {
            let result = step
                .completed
                .iter()
                .find(|(h, _)| *h == handle)
                .map(|(_, r)| r);
            prop_assert_eq!(result.map(|r| &r["code"]), Some(&json!("busy")));
            // `confirm` expires what is due first: those `confirmed`s
            // (refused confirmation_expired) may share the step, but the
            // busy approval sends none of its own.
            for (_, id, result) in &step.confirmeds {
                prop_assert!(*id != confirm_id, "a busy approval sent confirmed");
                prop_assert_eq!(
                    &result["code"],
                    &json!("confirmation_expired"),
                    "a busy approval step sent another confirmed: {}",
                    id
                );
            }
            prop_assert!(
                any_due || step.confirmeds.is_empty(),
                "a busy approval sent confirmed with nothing due"
            );
            prop_assert!(
                self.page
                    .tm
                    .pending_confirmations()
                    .iter()
                    .any(|p| p.confirm_id == confirm_id),
                "a busy approval consumed the confirmation"
            );
            self.busy_approvals += 1;
        } else if !was_pending {
            prop_assert!(step.results.is_empty());
            if !any_due {
                prop_assert_eq!(step.transmits, 0, "a used/unknown confirmId sent something");
            }
            let result = step
                .completed
                .iter()
                .find(|(h, _)| *h == handle)
                .map(|(_, r)| r);
            prop_assert_eq!(
                result.map(|r| &r["code"]),
                Some(&json!("confirmation_expired")),
                "confirm of a used/unknown confirmId"
            );
        } else if !approve {
            let result = step
                .completed
                .iter()
                .find(|(h, _)| *h == handle)
                .map(|(_, r)| r);
            prop_assert_eq!(
                result,
                Some(&json!({"status": "cancelled", "by": "operator"}))
            );
        }
        Ok(())
    }

    fn undo(&mut self, pick: UndoSel) -> R {
        let call_id = match pick {
            UndoSel::Kept(i) if !self.kept.is_empty() => {
                self.kept[i.index(self.kept.len())].clone()
            }
            UndoSel::Pool(i) => POOL[i].to_owned(),
            _ => "never-called".to_owned(),
        };
        let (reply, step) = self.step(
            Ctx::default(),
            Input::Undo(call_id.clone()),
            |model, reply| {
                let handle = reply.handle();
                model.handles.insert(
                    handle,
                    HandleInfo {
                        kind: HandleKind::Undo,
                        completed: false,
                    },
                );
            },
        )?;
        let handle = reply.handle();
        prop_assert_eq!(step.transmits, 0);
        let completed = step.completed.iter().any(|(h, _)| *h == handle);
        prop_assert!(
            completed != (step.restores.len() == 1),
            "undo must either be refused or run one restorer: {:?}",
            step
        );
        if let Some((run, restorer)) = step.restores.first() {
            // The latest run kept under that call id, never an older one.
            prop_assert_eq!(
                self.kept_run.remove(&call_id),
                Some(*restorer),
                "undo of {} ran another run's restorer",
                &call_id
            );
            self.restores.insert(*run, handle);
            self.count("restorer run");
            self.kept.retain(|k| *k != call_id);
        }
        Ok(())
    }

    fn abort(&mut self, pick: Pick, open: bool) -> R {
        let mut handles: Vec<Handle> = self
            .handles
            .iter()
            .filter(|(_, h)| !open || !h.completed)
            .map(|(h, _)| *h)
            .collect();
        if handles.is_empty() {
            handles = self.handles.keys().copied().collect();
        }
        if handles.is_empty() {
            return Ok(());
        }
        let handle = handles[pick.index(handles.len())];
        let Some((done, kind)) = self.handles.get(&handle).map(|h| (h.completed, h.kind)) else {
            return Ok(());
        };
        // A page run (a page call's, or an approved one) in its grace period.
        let graced = self.runs.values().any(|r| {
            r.abort.is_some()
                && !r.timed_out()
                && (r.caller == Caller::Human || r.call_id.len() == 36)
        });
        let (_, step) = self.step(Ctx::default(), Input::Abort(handle), |_, _| {})?;
        if done {
            prop_assert!(step.silent(), "abort of a completed call had effects");
            return Ok(());
        }
        if kind == HandleKind::Undo {
            // `tm.undo` takes no signal: its restorer runs on.
            prop_assert!(step.silent(), "abort of an undo had effects: {:?}", step);
            self.count("abort of an undo");
            return Ok(());
        }
        // An open call (a page call's, an approved one): answered
        // `cancelled signal` at once when no tool runs for it yet; its run
        // aborted when it runs (the result follows); nothing more when its
        // run is in its grace period.
        let answer = step.completed.iter().find(|(h, _)| *h == handle);
        if let Some((_, result)) = answer {
            prop_assert_eq!(result, &json!({"status": "cancelled", "by": "signal"}));
            prop_assert!(step.aborts.is_empty(), "{:?}", step);
            self.count("abort of a page call that has not run");
        } else if let [run] = step.aborts[..] {
            let page_run = self
                .runs
                .get(&run)
                .is_some_and(|r| r.caller == Caller::Human || r.call_id.len() == 36);
            prop_assert!(page_run, "abort of {:?} aborted {:?}", handle, run);
            self.count("abort of a running page call");
        } else {
            prop_assert!(
                step.silent() && graced,
                "abort of open {:?} ({:?}) neither answered it nor aborted one run: {:?}",
                handle,
                kind,
                step
            );
            self.count("abort of a page call in its grace period");
        }
        Ok(())
    }

    fn ctx_confirm(&mut self, pick: Pick, answer: Option<bool>) -> R {
        // Tool runs (running, aborted or abandoned), and runs with no `ctx`
        // to confirm with now: tool runs that are over, and the runs of
        // validations, preparations and form state reads JS still owes.
        // (Tool runs are picked from first, two times in three.)
        let mut runs: Vec<(RunId, Caller, bool)> = self
            .runs
            .iter()
            .map(|(id, r)| (*id, r.caller, r.abort.is_none()))
            .collect();
        if runs.is_empty() || pick.0 % 3 == 2 {
            let over = self
                .settled
                .iter()
                .chain(&self.validates)
                .chain(&self.prepares)
                .chain(&self.read_states);
            runs = over.map(|run| (*run, Caller::Human, false)).collect();
            if !runs.is_empty() {
                self.count("ctx.confirm of a run with no ctx now");
            }
        }
        if runs.is_empty() {
            return Ok(());
        }
        let (run, caller, running) = runs[pick.index(runs.len())];
        if let Some(info) = self.runs.get_mut(&run) {
            info.js_started = true;
        }
        let (inline, step) = self.step(Ctx::default(), Input::CtxConfirm(run), |_, _| {})?;
        // An aborted run (in its grace period or abandoned), one that is
        // over and one that is no tool run ask nobody, and say nothing.
        let expected = running && caller == Caller::Human && self.inline_confirm;
        prop_assert_eq!(inline, Reply::Inline(expected));
        prop_assert_eq!(step.transmits + step.actions, 0);
        let unavailable = usize::from(running && !expected);
        prop_assert_eq!(
            step.errors,
            vec![ErrorEventCode::CtxConfirmUnavailable; unavailable]
        );
        let (approved, step) = self.step(
            Ctx::default(),
            Input::CtxConfirmed { run, answer },
            |_, _| {},
        )?;
        prop_assert_eq!(approved, Reply::Inline(running && answer == Some(true)));
        prop_assert!(step.silent(), "an answer to ctx.confirm had effects");
        Ok(())
    }

    fn clock(&mut self, jump: Clock) -> R {
        let now = self.now();
        let deadline = self.page.deadline;
        let target = match jump {
            Clock::Small(ms) => now + ms,
            Clock::Grace => now + GRACE,
            Clock::Expiry => now + CONFIRM_EXPIRY,
            Clock::Huge(ms) => now + ms,
            Clock::Lag(ms) => {
                self.page.now = now + ms;
                self.count("clock lag (no timer)");
                return Ok(());
            }
            Clock::ToDeadline => deadline.unwrap_or(now + 1).max(now),
            Clock::JustBeforeDeadline => deadline.map_or(now + 1, |d| d.saturating_sub(1)).max(now),
        };
        self.page.now = target;
        // Runs abandoned now.
        let mut abandoned: Vec<Abandoned> = Vec::new();
        let (_, step) = self.step(Ctx::default(), Input::Timeout, |model, _| {
            let mut newly = 0;
            let mut orphans = Vec::new();
            for (run, info) in model.runs.iter_mut() {
                if let Some(Abort::Grace {
                    deadline,
                    timed_out,
                }) = &mut info.abort
                {
                    if *deadline <= target && !*timed_out {
                        *timed_out = true;
                        newly += 1;
                        if let Some(bridge) = info.orphan_of {
                            orphans.push((bridge, info.call_id.clone()));
                        }
                        // A bridge call's run (page runs' call ids are UUIDs).
                        let bridge = model
                            .bridges
                            .iter()
                            .find(|(_, b)| b.attached && b.in_flight.contains_key(&info.call_id))
                            .map(|(id, _)| *id)
                            .filter(|_| info.caller == Caller::Inapp && info.call_id.len() != 36)
                            .filter(|_| info.orphan_of.is_none());
                        let held = model.restorers.contains(run);
                        abandoned.push((*run, held, bridge.map(|b| (b, info.call_id.clone()))));
                    }
                }
            }
            // Abandoned, answered on no bridge: out of flight.
            for (bridge, id) in orphans {
                if let Some(b) = model.bridges.get_mut(&bridge) {
                    b.in_flight.remove(&id);
                }
            }
            for _ in 0..newly {
                model.count("run timed out (abort grace)");
            }
        })?;
        prop_assert!(
            self.page.deadline.is_none_or(|t| t > target),
            "a deadline at or before now is left after handle_timeout"
        );
        prop_assert!(self
            .page
            .tm
            .pending_confirmations()
            .iter()
            .all(|p| p.expires_at > target));
        prop_assert_eq!(step.transmits, step.results.len() + step.confirmeds.len());
        // An abandoned run's call is answered `cancelled signal` now, and
        // the restorer of its snapshot (no undo for it) dropped now.
        for (run, held, bridge) in abandoned {
            if held {
                prop_assert!(
                    step.drops.contains(&run),
                    "abandoned {:?} kept its restorer: {:?}",
                    run,
                    step
                );
                self.count("restorer of an abandoned run dropped");
            }
            if let Some((bridge, id)) = bridge {
                prop_assert!(
                    step.results.iter().any(|(b, i, r)| *b == bridge
                        && *i == id
                        && *r == json!({"status": "cancelled", "by": "signal"})),
                    "abandoned call {} on {:?} not answered cancelled signal: {:?}",
                    id,
                    bridge,
                    step
                );
            }
        }
        Ok(())
    }

    /// A transport's state: for an attached bridge, a `status` event, and a
    /// `transport_failed` event when it closes an attempt that never
    /// opened (not by `close()`); one that describes no state, only the
    /// `transport_failed` event. Nothing for a detached bridge, and never
    /// anything for a call.
    fn status(&mut self, to: To, kind: u8) -> R {
        let bridge = self.target(to);
        let attempt = u32::from(kind % 2) + 1;
        let status = match kind {
            0 => Some(Status::Connecting { attempt }),
            1 => Some(Status::Open),
            2 => Some(Status::Reconnecting {
                attempt,
                delay_ms: Some(1000),
            }),
            3 => Some(Status::closed(Some(1006), "gone", false)),
            4 => Some(Status::closed(None, "closed by close()", true)),
            5 => Some(Status::closed(None, "", true)),
            _ => None,
        };
        let attached = self.is_attached(bridge);
        let connecting = self.bridges.get(&bridge).and_then(|b| b.connecting);
        let input = match &status {
            Some(status) => Input::TransportStatus(bridge, status.clone()),
            None => Input::UnreadableStatus(bridge),
        };
        let (_, step) = self.step(Ctx::default(), input, |_, _| {})?;
        prop_assert_eq!(
            step.transmits + step.actions,
            0,
            "a transport state had effects"
        );
        if !attached {
            prop_assert!(
                step.silent(),
                "a detached bridge's transport state was told"
            );
            self.count("transport state of a detached bridge");
            return Ok(());
        }
        let failed = match (&status, connecting) {
            (None, _) => Some(String::from(
                "bridge: the transport's status (transport.status or onStatus) is not \
                 connecting, open, reconnecting or closed",
            )),
            (
                Some(Status::Closed {
                    code,
                    reason,
                    terminal,
                }),
                Some(attempt),
            ) if !(*terminal && reason == "closed by close()") => {
                let mut why = code.map(|c| format!(" (code {c}")).unwrap_or_default();
                if !reason.is_empty() {
                    why.push_str(if why.is_empty() { " (" } else { ": " });
                    why.push_str(reason);
                }
                if !why.is_empty() {
                    why.push(')');
                }
                let next = if *terminal {
                    "not retrying"
                } else {
                    "retrying"
                };
                Some(format!(
                    "transport: connection attempt {attempt} failed{why}; {next}"
                ))
            }
            _ => None,
        };
        let told: Vec<(BridgeId, Status)> = status.iter().map(|s| (bridge, s.clone())).collect();
        prop_assert_eq!(&step.statuses, &told);
        let expected: Vec<(ErrorEventCode, String, Option<String>)> = failed
            .iter()
            .map(|m| (ErrorEventCode::TransportFailed, m.clone(), None))
            .collect();
        prop_assert_eq!(&step.error_events, &expected);
        prop_assert_eq!(step.events, told.len() + expected.len());
        if let (Some(status), Some(b)) = (&status, self.bridges.get_mut(&bridge)) {
            b.connecting = match status {
                Status::Connecting { attempt } => Some(*attempt),
                _ => None,
            };
        }
        self.count(match (&status, failed.is_some()) {
            (None, _) => "unreadable transport state",
            (Some(_), true) => "transport attempt failed",
            (Some(_), false) => "transport state told",
        });
        Ok(())
    }

    fn detach(&mut self, pick: Pick) -> R {
        let attached = self.attached();
        // Mostly an attached bridge; sometimes any ever attached.
        let bridge = if attached.is_empty() || pick.0 % 4 == 3 {
            let all: Vec<BridgeId> = self.bridges.keys().copied().collect();
            all[pick.index(all.len())]
        } else {
            attached[pick.index(attached.len())]
        };
        if !self.is_attached(bridge) {
            // Detached already: nothing to abort, drop or close again.
            let (_, step) = self.step(Ctx::default(), Input::Detach(bridge), |_, _| {})?;
            prop_assert!(
                step.silent(),
                "detaching detached {:?} again had effects: {:?}",
                bridge,
                step
            );
            self.count("detach of a detached bridge");
            return Ok(());
        }
        let ctx = Ctx {
            detaching: Some(bridge),
            ..Ctx::default()
        };
        let (_, step) = self.step(ctx, Input::Detach(bridge), |model, _| {
            let Some(b) = model.bridges.get_mut(&bridge) else {
                return;
            };
            b.attached = false;
            // Its calls that have not run are dropped (never answered):
            // their ids are not in flight any more. Its running ones
            // (aborted now or earlier, within their grace period) keep
            // their ids in flight until they settle. The answered ids stay
            // the page's.
            let mut running = BTreeMap::new();
            for info in model.runs.values_mut() {
                let in_grace = !matches!(
                    info.abort,
                    Some(Abort::Grace {
                        timed_out: true,
                        ..
                    })
                );
                if in_grace && info.orphan_of.is_none() {
                    if let Some(kind) = b.in_flight.remove(&info.call_id) {
                        info.orphan_of = Some(bridge);
                        running.insert(info.call_id.clone(), kind);
                    }
                }
            }
            b.in_flight = running;
        })?;
        prop_assert_eq!(step.closes, vec![bridge]);
        Ok(())
    }

    fn attach(&mut self, changed: bool, limit: usize) -> R {
        if self.attached().len() >= 2 {
            return Ok(());
        }
        let limit = limit_of(limit);
        let options = BridgeOptions {
            on_change: if changed {
                OnChange::Changed
            } else {
                OnChange::Manifest
            },
            max_message_bytes: limit,
        };
        let (reply, step) = self.step(Ctx::default(), Input::Attach(options), |model, reply| {
            model
                .bridges
                .insert(reply.bridge(), BridgeModel::new(limit, changed));
        })?;
        let bridge = reply.bridge();
        prop_assert_eq!(step.transmits, 1, "one manifest on attach");
        let manifest = &step.announcements[0];
        prop_assert_eq!(manifest.0, bridge);
        prop_assert_eq!(&manifest.1["type"], "manifest");
        prop_assert_eq!(manifest.1["rev"].as_u64(), Some(self.page.tm.rev()));
        Ok(())
    }

    fn foreign(&mut self, to: To, kind: u8, id: IdSel) -> R {
        let bridge = self.target(to);
        let id = self.id(id);
        let message = match kind {
            0 => {
                json!({"protocol": 1, "type": "call", "clientId": OTHER_CLIENT, "id": id, "tool": "t0", "input": {}})
            }
            1 => {
                json!({"protocol": 1, "type": "describe", "clientId": OTHER_CLIENT, "id": id, "tool": "t0"})
            }
            2 => json!({"protocol": 1, "type": "bogus", "clientId": OTHER_CLIENT}),
            3 => json!({"protocol": 9, "type": "call", "clientId": OTHER_CLIENT, "id": id}),
            4 => json!({"protocol": 1, "type": "cancel", "clientId": OTHER_CLIENT, "id": id}),
            _ => {
                json!({"protocol": 1, "type": "call", "clientId": OTHER_CLIENT, "id": id, "tool": "t0"})
            }
        };
        let step = self.inbound(bridge, &message.to_string())?;
        // Invariant 7 (rule 1): ignored silently.
        prop_assert!(
            step.silent(),
            "a message for another page had effects: {:?}",
            step
        );
        self.count("ignored: another clientId");
        Ok(())
    }

    fn protocol2(&mut self, to: To, kind: u8, id: IdSel) -> R {
        let bridge = self.target(to);
        let id = self.id(id);
        let cid = self.client_id.clone();
        match kind {
            0 => {
                let text = json!({"protocol": 2, "type": "call", "clientId": cid, "id": id, "tool": "t0", "input": {}})
                    .to_string();
                self.answered_at_once(
                    bridge,
                    &id,
                    ReqKind::Protocol2,
                    &text,
                    "rule 4: not answered",
                )?;
            }
            1 | 2 => {
                let message = if kind == 1 {
                    json!({"protocol": 2, "type": "call", "clientId": cid, "id": 7})
                } else {
                    json!({"protocol": 2, "type": "call", "id": id})
                };
                let step = self.inbound(bridge, &message.to_string())?;
                self.expect_invalid(bridge, &step)?;
            }
            _ => {
                let message =
                    json!({"protocol": 2, "type": "call", "clientId": OTHER_CLIENT, "id": id});
                let step = self.inbound(bridge, &message.to_string())?;
                prop_assert!(step.silent());
            }
        }
        Ok(())
    }

    /// Invariant 7 (rule 8): dropped with one invalid_message event, never answered.
    fn expect_invalid(&self, bridge: BridgeId, step: &Step) -> R {
        if self.is_attached(bridge) {
            prop_assert_eq!(
                step.transmits + step.actions,
                0,
                "an invalid message had effects"
            );
            prop_assert_eq!(&step.errors, &vec![ErrorEventCode::InvalidMessage]);
            prop_assert_eq!(step.events, 1);
        }
        Ok(())
    }

    fn invalid(&mut self, to: To, kind: u8, frame: bool) -> R {
        let bridge = self.target(to);
        let cid = self.client_id.clone();
        let text = match kind {
            0 => "{not json".to_owned(),
            1 => format!("{}{}", "[".repeat(65), "]".repeat(65)),
            2 => json!({"protocol": 1, "type": "call", "clientId": cid, "id": "i0", "tool": "t0"}).to_string(),
            3 => json!({"protocol": 1, "type": "result", "clientId": cid, "id": "i0", "result": {"status": "ok"}}).to_string(),
            4 => json!({"protocol": 1, "type": "cancel", "clientId": cid, "id": "i0", "extra": true}).to_string(),
            5 => json!({"protocol": 1, "type": "call", "clientId": 42, "id": "i0", "tool": "t0", "input": {}}).to_string(),
            6 => json!({"protocol": 1, "type": "call", "clientId": cid, "id": 3, "tool": "t0", "input": {}}).to_string(),
            7 => "42".to_owned(),
            8 => json!({"protocol": 1, "type": "bogus", "clientId": cid}).to_string(),
            9 => json!({"protocol": 1, "type": "call", "clientId": cid, "id": "i1", "tool": "t0", "input": {}, "rev": -1}).to_string(),
            10 => String::new(),
            11 => json!({"protocol": 1, "type": "describe", "clientId": cid, "id": "i2", "tool": 5}).to_string(),
            12 => json!({"protocol": 1, "type": "call", "id": "i3", "tool": "t0", "input": {}}).to_string(),
            13 => json!({"protocol": 2, "type": "call", "clientId": cid, "id": ""}).to_string(),
            _ => json!({"protocol": 1, "type": "call", "clientId": cid, "id": "", "tool": "t0", "input": {}}).to_string(),
        };
        if !frame {
            let step = self.inbound(bridge, &text)?;
            return self.expect_invalid(bridge, &step);
        }
        let step = self.frame(bridge, &text)?;
        // Kinds 0 and 10 are not JSON text; the rest are JSON the bridge refuses.
        if matches!(kind, 0 | 10) {
            prop_assert!(step.silent(), "a frame that is not JSON had effects");
            Ok(())
        } else {
            self.expect_invalid(bridge, &step)
        }
    }

    fn oversized(&mut self, to: To, exact: bool) -> R {
        let bridge = self.target(to);
        let Some(limit) = self.bridges.get(&bridge).map(|b| b.limit) else {
            return Ok(());
        };
        if exact && limit > 4096 {
            return Ok(());
        }
        let id = self.id(IdSel::Fresh);
        let base = self
            .call_message(&id, "t0", json!({"p": ""}), None)
            .to_string();
        let target = if exact { limit } else { limit + 1 };
        let pad = target.saturating_sub(base.len());
        let text = self
            .call_message(&id, "t0", json!({"p": "x".repeat(pad)}), None)
            .to_string();
        prop_assert_eq!(text.len(), target);
        if exact {
            // At the limit: an ordinary call.
            let kind = ReqKind::Call {
                tool: Some(0),
                rev: None,
            };
            self.request(bridge, &id, kind, &text)?;
        } else {
            let step = self.inbound(bridge, &text)?;
            self.expect_invalid(bridge, &step)?;
        }
        Ok(())
    }

    fn cancel(&mut self, to: To, sel: CancelSel) -> R {
        let bridge = self.target(to);
        let id = match sel {
            CancelSel::Pool(i) => POOL[i].to_owned(),
            CancelSel::InFlight(i) => {
                let ids: Vec<String> = self
                    .bridges
                    .get(&bridge)
                    .map(|b| b.in_flight.keys().cloned().collect())
                    .unwrap_or_default();
                if ids.is_empty() {
                    POOL[i.index(POOL.len())].to_owned()
                } else {
                    ids[i.index(ids.len())].clone()
                }
            }
            CancelSel::Running(i) => {
                // Running, or aborted already and in its grace period.
                let ids: Vec<String> = self
                    .runs
                    .values()
                    .filter(|r| !r.timed_out())
                    .map(|r| r.call_id.clone())
                    .filter(|id| {
                        self.bridges
                            .get(&bridge)
                            .is_some_and(|b| b.in_flight.contains_key(id))
                    })
                    .collect();
                if ids.is_empty() {
                    POOL[i.index(POOL.len())].to_owned()
                } else {
                    ids[i.index(ids.len())].clone()
                }
            }
        };
        let in_flight = self
            .bridges
            .get(&bridge)
            .is_some_and(|b| b.in_flight.contains_key(&id));
        // The bridge's call under that id whose tool runs (or ran and was
        // aborted), if any: (its run, whether it was aborted already).
        let run = self
            .runs
            .iter()
            .find(|(_, r)| {
                r.caller == Caller::Inapp
                    && r.call_id == id
                    && r.orphan_of.is_none()
                    && !r.timed_out()
            })
            .map(|(run, r)| (*run, r.abort.is_some()));
        let attached = self.is_attached(bridge);
        let text = json!({"protocol": 1, "type": "cancel", "clientId": self.client_id, "id": id})
            .to_string();
        let step = self.inbound(bridge, &text)?;
        if !in_flight {
            prop_assert!(
                step.silent(),
                "cancel of {} (not in flight) had effects",
                id
            );
            return Ok(());
        }
        if !attached {
            return Ok(());
        }
        let answer = step
            .results
            .iter()
            .find(|(b, i, _)| *b == bridge && *i == id)
            .map(|(_, _, result)| result);
        match run {
            // Running: aborted, its own result still to follow.
            Some((run, false)) => {
                prop_assert_eq!(&step.aborts, &vec![run], "cancel of running {}", id);
                prop_assert!(answer.is_none(), "cancel of running {} answered it", id);
                prop_assert_eq!(step.transmits, 0);
                self.count("cancel of a running call");
            }
            // In its grace period: nothing more (one abort, the deadline kept).
            Some((run, true)) => {
                prop_assert!(
                    step.silent(),
                    "a second cancel of {} ({:?}, in its grace period) had effects: {:?}",
                    id,
                    run,
                    step
                );
                self.count("cancel of a call in its grace period");
            }
            // No tool runs for it yet: answered at once, nothing aborted.
            None => {
                prop_assert_eq!(
                    answer,
                    Some(&json!({"status": "cancelled", "by": "signal"})),
                    "cancel of {}, which has not run",
                    id
                );
                prop_assert!(step.aborts.is_empty(), "{:?}", step);
                self.count("cancel of a call that has not run");
            }
        }
        Ok(())
    }

    /// 1000 describes with fresh ids on the first attached bridge: the oldest
    /// answered ids fall out of its memory (and may be answered again).
    fn flood(&mut self) -> R {
        let Some(&bridge) = self.attached().first() else {
            return Ok(());
        };
        for _ in 0..1000 {
            let id = self.id(IdSel::Fresh);
            let text = json!({"protocol": 1, "type": "describe", "clientId": self.client_id,
                              "id": id, "tool": "t0"})
            .to_string();
            self.request(bridge, &id, ReqKind::Describe, &text)?;
        }
        prop_assert_eq!(self.page.tm.answered_ids(), 1000);
        self.count("flood of 1000 describes");
        Ok(())
    }

    /// 101 to 105 calls of `pay` with fresh ids: more than 100 pending
    /// confirmations, so the oldest are evicted (`confirmation_expired`).
    fn storm(&mut self) -> R {
        if !self.tools.contains_key(&1) {
            self.register(1)?;
        }
        let n = 101 + self.fresh as usize % 5;
        for _ in 0..n {
            if self.attached().is_empty() {
                self.page_call(1, Caller::Inapp, 0, None)?;
            } else {
                let id = self.id(IdSel::Fresh);
                self.inbound_call(To::Attached(Pick(0)), id, 1, json!({}), None)?;
            }
        }
        self.count("storm of calls needing confirmation");
        Ok(())
    }

    fn exec(&mut self, op: &Op) -> R {
        match *op {
            Op::Register(index) => self.register(index),
            Op::Unregister(pick) => self.unregister(pick),
            Op::Recreate(slot) => self.recreate(slot),
            Op::Dispose(slot) => self.dispose(slot),
            Op::Call {
                to,
                id,
                tool,
                input,
                rev,
            } => {
                let id = self.id(id);
                let input = serde_json::from_str::<Value>(INPUTS[input]).unwrap_or(Value::Null);
                let rev = self.rev(rev);
                self.inbound_call(to, id, tool, input, rev)
            }
            Op::Burst { to, tool, n } => {
                for _ in 0..n {
                    let id = self.id(IdSel::Fresh);
                    self.inbound_call(to, id, tool, json!({"a": 1}), None)?;
                }
                Ok(())
            }
            Op::Describe { to, id, tool } => {
                let bridge = self.target(to);
                let id = self.id(id);
                let text = json!({"protocol": 1, "type": "describe", "clientId": self.client_id,
                                  "id": id, "tool": tool_name(tool)})
                .to_string();
                let answer = self.answered_at_once(
                    bridge,
                    &id,
                    ReqKind::Describe,
                    &text,
                    "describe not answered at once",
                )?;
                if let Some(result) = answer {
                    let visible = tool < TOOLS.len()
                        && self.tools.contains_key(&tool)
                        && self.policy.inapp(tool) != D::Hide;
                    if visible {
                        prop_assert_eq!(&result["status"], "ok");
                        prop_assert_eq!(&result["data"]["name"], tool_name(tool));
                        prop_assert!(result["data"].get("inputSchema").is_some());
                    } else {
                        prop_assert_eq!(&result["code"], "unknown_tool");
                        prop_assert_eq!(result["rev"].as_u64(), Some(self.page.tm.rev()));
                    }
                }
                Ok(())
            }
            Op::Cancel { to, id } => self.cancel(to, id),
            Op::Foreign { to, kind, id } => self.foreign(to, kind, id),
            Op::Protocol2 { to, kind, id } => self.protocol2(to, kind, id),
            Op::Invalid { to, kind, frame } => self.invalid(to, kind, frame),
            Op::Oversized { to, exact } => self.oversized(to, exact),
            Op::Settle { run, outcome } => {
                if self.runs.is_empty() {
                    return Ok(());
                }
                let runs: Vec<RunId> = self.runs.keys().copied().collect();
                let run = runs[run.index(runs.len())];
                let outcome = match outcome {
                    OutcomeSel::OkJson(i) => Outcome::Ok(Some(OK_JSON[i].into())),
                    OutcomeSel::OkNone => Outcome::Ok(None),
                    OutcomeSel::OkNotJson => Outcome::Ok(Some("{nope".into())),
                    OutcomeSel::Threw => Outcome::Threw("TypeError: boom".into()),
                    OutcomeSel::NotSerializable => Outcome::NotSerializable("cyclic".into()),
                    OutcomeSel::Aborted => Outcome::Aborted,
                };
                // A value JS checks against the output schema first.
                let check = self.runs.get(&run).is_some_and(|r| r.check_output);
                if check && matches!(outcome, Outcome::Ok(_)) {
                    self.check_output_of(run, (run.0 % 3) as u8)?;
                }
                self.settle(run, outcome)
            }
            Op::SettleAgain(pick) => self.settle_again(pick),
            Op::Snapshot { pick, restorer } => self.snapshot(pick, restorer),
            Op::ToolGone(pick) => self.tool_gone(pick),
            Op::OutputChecked { pick, kind } => self.output_checked(pick, kind),
            Op::Validate { pick, kind } => match pick.take(&mut self.validates) {
                Some(run) => self.validate_answer(run, kind),
                None => Ok(()),
            },
            Op::Prepare { pick, kind } => match pick.take(&mut self.prepares) {
                Some(run) => self.prepare_answer(run, kind),
                None => Ok(()),
            },
            Op::ReadState { pick, kind } => match pick.take(&mut self.read_states) {
                Some(run) => self.read_state_answer(run, kind),
                None => Ok(()),
            },
            Op::Restore { pick, ok } => {
                if self.restores.is_empty() {
                    return Ok(());
                }
                let runs: Vec<RunId> = self.restores.keys().copied().collect();
                self.restore_answer(runs[pick.index(runs.len())], ok)
            }
            Op::CtxConfirm { pick, answer } => self.ctx_confirm(pick, answer),
            Op::PageCall {
                tool,
                human,
                input,
                rev,
                signal,
                held,
            } => {
                let rev = self.rev(rev);
                let caller = if human { Caller::Human } else { Caller::Inapp };
                self.page_call_with(tool, caller, input, rev, signal, held)
            }
            Op::PageBurst { tool, n } => {
                for _ in 0..n {
                    self.page_call(tool, Caller::Human, 1, None)?;
                }
                Ok(())
            }
            Op::Abort { pick, open } => self.abort(pick, open),
            Op::Confirm { pick, approve } => self.confirm(pick, approve),
            Op::Undo(pick) => self.undo(pick),
            Op::Clock(jump) => self.clock(jump),
            Op::Status { to, kind } => self.status(to, kind),
            Op::Detach(pick) => self.detach(pick),
            Op::Attach { changed, limit } => self.attach(changed, limit),
        }
    }

    /// Answers everything, lets every deadline pass, and checks that the core
    /// is empty and every accepted request got exactly one answer.
    fn settle_all(&mut self, timeout_first: bool) -> R {
        if timeout_first {
            self.clock(Clock::Huge(CONFIRM_EXPIRY + GRACE))?;
        }
        for _ in 0..200 {
            let idle = self.runs.is_empty()
                && self.validates.is_empty()
                && self.prepares.is_empty()
                && self.read_states.is_empty()
                && self.restores.is_empty()
                && self.page.deadline.is_none()
                && self.page.tm.calls_in_flight() == 0;
            if idle {
                break;
            }
            for run in std::mem::take(&mut self.validates) {
                self.validate_answer(run, 0)?;
            }
            for run in std::mem::take(&mut self.prepares) {
                self.prepare_answer(run, 1)?;
            }
            for run in std::mem::take(&mut self.read_states) {
                self.read_state_answer(run, 1)?;
            }
            let restores: Vec<RunId> = self.restores.keys().copied().collect();
            for run in restores {
                self.restore_answer(run, true)?;
            }
            let runs: Vec<RunId> = self.runs.keys().copied().collect();
            for run in runs {
                // Half the snapshots still to settle settle now.
                let snapshot = self.runs.get(&run).is_some_and(|r| r.snapshot_pending);
                if snapshot && run.0 % 2 == 0 {
                    self.snapshot_taken(run, run.0 % 4 == 0)?;
                }
                self.settle(run, Outcome::Ok(None))?;
            }
            if self.page.deadline.is_some() {
                self.clock(Clock::Huge(CONFIRM_EXPIRY + GRACE))?;
            }
        }
        // The shared model's end-of-program checks, then this model's own.
        self.spec.settled(&self.page.tm).map_err(fail)?;
        let tm = &self.page.tm;
        prop_assert_eq!(tm.calls_in_flight(), 0, "calls left in flight");
        prop_assert_eq!(tm.max_pending_per_scope(), 0);
        prop_assert_eq!(tm.pending_confirmation_count(), 0);
        prop_assert_eq!(self.page.deadline, None);
        prop_assert!(
            self.validated_values.is_empty(),
            "validated values JS keeps for nothing: {:?}",
            self.validated_values
        );
        // Nothing runs: JS holds only the undo store's restorers.
        prop_assert!(
            self.restorers.len() <= 100,
            "{} restorers held",
            self.restorers.len()
        );
        for (id, b) in &self.bridges {
            prop_assert!(
                b.in_flight.is_empty(),
                "accepted requests never answered on {:?}: {:?}",
                id,
                b.in_flight
            );
        }
        for (handle, info) in &self.handles {
            prop_assert!(
                info.completed,
                "{:?} ({:?}) never completed",
                handle,
                info.kind
            );
        }
        for (confirm_id, conf) in &self.confs {
            if let Some(bridge) = conf.requester {
                if self.is_attached(bridge) {
                    prop_assert!(
                        conf.confirmed,
                        "confirmation {} never got its confirmed",
                        confirm_id
                    );
                }
            }
        }
        Ok(())
    }
}

/// Coverage: (times seen, cases in which it was seen).
type Stats = BTreeMap<String, (usize, usize)>;

fn run_case(case: &Case, stats: &mut Stats) -> R {
    let mut model = Model::new(case)?;
    let at = |when: Option<usize>| when.map(|i| i % case.ops.len().max(1));
    for (i, op) in case.ops.iter().enumerate() {
        if at(case.flood_at) == Some(i) {
            model.flood()?;
        }
        if at(case.storm_at) == Some(i) {
            model.storm()?;
        }
        model.exec(op)?;
    }
    model.settle_all(case.end_with_timeout)?;
    if model.busy_approvals > 0 {
        model.count("approval refused busy on a full scope");
    }
    for (key, n) in model.stats {
        let entry = stats.entry(key).or_default();
        entry.0 += n;
        entry.1 += 1;
    }
    Ok(())
}

/// The model test. Run with `-- --nocapture` to see what the generated
/// cases covered.
#[test]
fn the_core_keeps_the_protocol_rules_under_random_operations() {
    let config = ProptestConfig {
        cases: 256,
        failure_persistence: None,
        ..ProptestConfig::default()
    };
    let mut runner = TestRunner::new(config);
    let stats: RefCell<Stats> = RefCell::new(BTreeMap::new());
    let outcome = runner.run(&case(), |case| {
        let mut mine = BTreeMap::new();
        run_case(&case, &mut mine)?;
        let mut all = stats.borrow_mut();
        for (key, (n, cases)) in mine {
            let entry = all.entry(key).or_default();
            entry.0 += n;
            entry.1 += cases;
        }
        Ok(())
    });
    if let Err(error) = outcome {
        panic!("{error}");
    }
    let stats = stats.into_inner();
    println!("   times  cases  covered");
    for (key, (n, cases)) in &stats {
        println!("{n:>8} {cases:>6}  {key}");
    }
    // The generator must reach the interesting corners, not just run.
    for key in [
        "duplicate ignored",
        "result ok",
        "result needs_confirmation",
        "result refused busy",
        "result refused stale",
        "result refused unknown_tool",
        "result cancelled signal",
        "result error Tool failed",
        "result invalid",
        "confirmed ok",
        "confirmed cancelled operator",
        "confirmed refused confirmation_expired",
        "confirmed refused stale",
        "confirmed on a bridge attached after its own went",
        "event late_result",
        "event invalid_message",
        "ignored: another clientId",
        "run timed out (abort grace)",
        "restorer run",
        "run with the validated value",
        "validated value forgotten",
        "100 pending confirmations",
        "flood of 1000 describes",
        "ctx.confirm of a run with no ctx now",
        "cancel of a running call",
        "cancel of a call in its grace period",
        "cancel of a call that has not run",
        "abort of a page call that has not run",
        "abort of a running page call",
        "detach of a detached bridge",
        "restorer of an abandoned run dropped",
        "snapshot with a restorer",
        "snapshot without a restorer",
        "snapshot of a run in its grace period",
        "snapshot of a run that asked for none",
        "tool gone for a run",
        "tool gone for a run in its grace period",
        "tool gone before a validation, preparation or state read",
        "tool gone for a run that is over",
        "output check passed",
        "output check failed",
        "output check of a run abandoned or over",
        "page call with an aborted signal",
        "held call",
        "held call waiting for a confirmation",
        "held call completed by its confirmation's decision",
        "transport state of a detached bridge",
        "unreadable transport state",
        "transport attempt failed",
        "transport state told",
    ] {
        assert!(stats.contains_key(key), "never covered: {key}");
    }
}

// ----- core bugs found by the model (fixed; kept as regression tests) ------

fn confirm_id_of(page: &Page, id: &str) -> String {
    let result = page.result(id);
    assert_eq!(result["status"], "needs_confirmation", "{result}");
    result["confirmId"].as_str().unwrap_or_default().to_owned()
}

/// An approved call whose tool is unregistered while the page reads its
/// form state is not run (the spec: the page "never runs anything but
/// registered tools"): its `confirmed` is `refused stale` ("The tool is gone
/// since confirmation was requested"). Sequence: register `s.submit`
/// (consequential, has_state) → `call` → `Prepare` answered with state "s2"
/// → approve → dispose its scope → `ReadState` answered "s2".
#[test]
fn a_tool_unregistered_during_an_approvals_state_read_is_not_run() {
    let mut page = Page::new();
    let mut def = consequential("submit");
    def.has_state = true;
    let key = page.register(def);
    page.call("c", "submit", json!({}));
    let Some(Action::Prepare(PrepareOrder { run, .. })) = page.actions.pop() else {
        panic!("prepare expected: {:?}", page.actions)
    };
    let prepared = Prepared {
        state: Some("s2".into()),
        ..Prepared::default()
    };
    page.tm.handle_prepared(run, Ok(prepared), page.now);
    page.drain();
    let confirm_id = confirm_id_of(&page, "c");
    page.tm.confirm(&confirm_id, true, page.now);
    page.drain();
    let Some(Action::ReadState { run, .. }) = page.actions.pop() else {
        panic!("read state expected: {:?}", page.actions)
    };
    page.tm.unregister(key, page.now);
    page.drain();
    page.tm.handle_state(run, Ok(Some("s2".into())), page.now);
    page.drain();
    assert!(
        page.take_runs().is_empty(),
        "ran a tool that is no longer registered"
    );
    assert_eq!(
        page.confirmed_for(&confirm_id),
        [json!({"status": "refused", "code": "stale",
                "message": "The tool is gone since confirmation was requested", "rev": 2})]
    );
}

/// An approval counts against its scope's bound of 32 pending calls (rule
/// 5) like any call: approved while 32 others are pending on that scope, it
/// is not queued as a 33rd. Sequence: `call` of a consequential tool →
/// needs_confirmation; 32 calls of another tool on the same scope (1
/// running, 31 queued); approve.
#[test]
fn an_approval_into_a_full_scope_keeps_it_at_32_pending() {
    let mut page = Page::new();
    page.register(consequential("pay"));
    page.register(tool("t"));
    page.call("p", "pay", json!({}));
    let confirm_id = confirm_id_of(&page, "p");
    for i in 0..32 {
        page.call(&format!("c{i}"), "t", json!({}));
    }
    assert_eq!(page.tm.max_pending_per_scope(), 32);
    page.tm.confirm(&confirm_id, true, page.now);
    page.drain();
    assert!(
        page.tm.max_pending_per_scope() <= 32,
        "{} pending on one scope",
        page.tm.max_pending_per_scope()
    );
}

/// A run that took a snapshot gets `DropRestorer` when it fails, even when
/// its tool was unregistered while it ran: the restorer JS keeps under the
/// call is dropped whatever the registry holds by then. Sequence: register
/// `s.a` (has_snapshot) → `call` (the run starts with `snapshot: true`) →
/// unregister the tool → the run throws.
#[test]
fn a_failed_snapshot_run_whose_tool_is_gone_drops_its_restorer() {
    let mut page = Page::new();
    let mut def = tool("edit");
    def.has_snapshot = true;
    let key = page.register(def);
    page.call("a", "edit", json!({}));
    let runs = page.take_runs();
    assert_eq!(runs.len(), 1);
    assert!(page.actions.is_empty());
    page.tm.unregister(key, page.now);
    page.drain();
    page.settle(runs[0].0, Outcome::Threw("boom".into()));
    assert_eq!(
        page.result("a"),
        json!({"status": "error", "message": "Tool failed"})
    );
    assert!(
        page.actions
            .contains(&Action::DropRestorer { run: runs[0].0 }),
        "restorer of call a leaked: {:?}",
        page.actions
    );
}

/// A call that is running when its bridge detaches gets `Abort` and
/// `DropRestorer`; so does one already aborted by `cancel` and still in its
/// grace period: the detach drops its restorer too, though its later outcome
/// is ignored. Sequence: register `edit` (has_snapshot) → `call a` →
/// `cancel a` → detach.
#[test]
fn a_detach_during_the_abort_grace_period_drops_the_restorer() {
    let mut page = Page::new();
    let mut def = tool("edit");
    def.has_snapshot = true;
    page.register(def);
    page.call("a", "edit", json!({}));
    let run = page.take_runs()[0].0;
    page.cancel("a");
    assert!(page.actions.contains(&Action::Abort { run }));
    page.tm.detach(page.bridge, page.now);
    page.drain();
    page.settle(run, Outcome::Aborted);
    assert_eq!(page.tm.calls_in_flight(), 0);
    assert!(
        page.actions.contains(&Action::DropRestorer { run }),
        "restorer of call a leaked: {:?}",
        page.actions
    );
}

/// An approval refused busy sends no `confirmed` of its own, but `confirm`
/// first expires every confirmation already due, and those `confirmed`
/// messages (refused `confirmation_expired`) go out in the same step: the
/// model allows them. Here the clock jumps by the default expiry, so the
/// first call's confirmation is due when the picked one is approved on a
/// full scope.
#[test]
fn a_busy_approval_step_may_carry_due_expiries() {
    let to = To::Attached(Pick(0));
    let case = Case {
        dev: false,
        policy: PolicyKind::DefaultConfirm,
        inline_confirm: false,
        limit: 0,
        changed: false,
        initial: 65534,
        flood_at: None,
        storm_at: None,
        end_with_timeout: false,
        ops: vec![
            Op::Cancel {
                to,
                id: CancelSel::Pool(0),
            },
            Op::Call {
                to,
                id: IdSel::Pool(0),
                tool: 4,
                input: 1,
                rev: RevSel::None,
            },
            Op::Clock(Clock::Lag(600_000)),
            Op::Call {
                to,
                id: IdSel::Pool(1),
                tool: 8,
                input: 0,
                rev: RevSel::None,
            },
            Op::Prepare {
                pick: Pick(0),
                kind: 0,
            },
            Op::PageBurst { tool: 8, n: 13 },
            Op::Burst { to, tool: 8, n: 19 },
            Op::SettleAgain(Pick(0)),
            Op::Confirm {
                pick: ConfSel::Pending(Pick(67)),
                approve: true,
            },
        ],
    };
    let mut stats = BTreeMap::new();
    if let Err(error) = run_case(&case, &mut stats) {
        panic!("{error}");
    }
    assert!(
        stats.contains_key("approval refused busy on a full scope"),
        "the case no longer reaches a busy approval: {stats:?}"
    );
}

/// The model's rare corner, reached on purpose: a snapshot that settles
/// after its run was cancelled and abandoned (its call answered `cancelled
/// signal` at the end of the grace period) is over as aborted: one
/// `late_result`, `GoesOn(false)`, no second drop of its restorer.
#[test]
fn a_snapshot_settling_after_its_run_was_abandoned_reports_late_result() {
    let to = To::Attached(Pick(0));
    let case = Case {
        dev: false,
        policy: PolicyKind::Default,
        inline_confirm: false,
        limit: 2,
        changed: false,
        initial: 1 << 5,
        flood_at: None,
        storm_at: None,
        end_with_timeout: false,
        ops: vec![
            Op::Call {
                to,
                id: IdSel::Pool(0),
                tool: 5,
                input: 0,
                rev: RevSel::None,
            },
            Op::Cancel {
                to,
                id: CancelSel::Running(Pick(0)),
            },
            Op::Clock(Clock::Grace),
            Op::Snapshot {
                pick: Pick(0),
                restorer: true,
            },
        ],
    };
    let mut stats = BTreeMap::new();
    if let Err(error) = run_case(&case, &mut stats) {
        panic!("{error}");
    }
    for key in [
        "snapshot of an abandoned run",
        "restorer of an abandoned run dropped",
    ] {
        assert!(stats.contains_key(key), "never reached: {key}: {stats:?}");
    }
}
