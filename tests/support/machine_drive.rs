//! The `machine` fuzz target's program interpreter, shared with
//! `tests/fuzz_regressions.rs` so kept inputs replay exactly as fuzzed.
//!
//! The input bytes are a header (configuration and random seed) followed by
//! a program of operations on one [`Toolmark`]: registry changes, bridges,
//! inbound text (arbitrary, or well-formed messages with the right
//! `clientId`), page calls, answers to the work the core hands out (also for
//! stale and unknown runs), and clock moves. Each operation becomes one or
//! more [`Input`]s for the shared model of the spec's rules
//! (`tests/support/spec_model.rs`, which the proptest `tests/machine_model.rs`
//! drives too): it feeds the core, drains the outputs in the documented
//! order and checks them after every input. At the end every piece of
//! outstanding work is answered and the clock run past every deadline, and
//! [`SpecModel::settled`] checks that the core settled everything it owes.
//!
//! The decoder is a plain byte cursor (no `arbitrary`) so that this file
//! compiles in the fuzz crate and in the root crate's tests alike. Reading
//! past the end yields zeros; the program ends when the bytes do.
//!
//! Layout: `[flags, policy, confirmMode, abortGrace, confirmExpiry,
//! budget, seed × 8, rngPeriod]` (flag bits: 1 dev mode, 2 inline
//! confirmation, 4 every n-th id fails to mint with n = rngPeriod % 7 + 2,
//! 8 no bridge at the start), then operations (`op % 32`, see
//! `Driver::step`). In inbound text the two characters `$C` stand for the
//! page's `clientId`, so that hand-written seeds and the fuzzer can address
//! the page.

use serde_json::{json, Map, Value};
use toolmark_bridge::machine::{
    approve_given, Action, BridgeId, BridgeOptions, Config, Handle, OnChange, Outcome, PageCall,
    PrepareOrder, Prepared, RunId, RunOrder, SignalUse, Toolmark, Unprepared, Validated,
};
use toolmark_bridge::policy::Caller;
use toolmark_bridge::protocol::{
    inbound::nesting_exceeds, FieldChange, Hints, Issue, ToolMode, DEFAULT_MAX_MESSAGE_BYTES,
};
use toolmark_bridge::registry::{SchemaSpec, ScopeId, ToolDef, ToolKey};
use toolmark_bridge::schema::pattern::LinearPatterns;
use toolmark_bridge::schema::PatternMatcher;
use toolmark_bridge::transport::status::{Status, StatusParts};

#[path = "seeded_random.rs"]
mod seeded_random;
use seeded_random::SeededRandom;
#[path = "spec_model.rs"]
mod spec_model;
use spec_model::{Drained, Input, Reply, SpecModel};

/// JSON the driver makes up is kept to the inbound depth limit, so that a
/// message wrapping it stays well inside serde_json's default limit of 128
/// when the checker parses it back.
const DRIVER_JSON_DEPTH: usize = 64;
/// Flooded describes per input, all told (keeps executions fast).
const FLOOD_BUDGET: usize = 1_200;
/// Rounds of the final settling phase before it counts as a livelock.
const SETTLE_ROUNDS: usize = 20_000;

/// Interprets `data` as a program on a fresh core: nothing may panic, and
/// the shared [`SpecModel`] checks every input's outputs and, once all work
/// is answered and every deadline passed, that nothing is left in flight
/// or unanswered (its module comment lists the rules). A broken rule panics
/// with the model's message.
pub fn drive_machine(data: &[u8]) {
    let mut cursor = Cursor::new(data);
    let Some(mut driver) = Driver::new(&mut cursor) else {
        return;
    };
    let mut steps = 0usize;
    while !cursor.is_done() && steps < 4_096 {
        driver.step(&mut cursor);
        steps += 1;
    }
    driver.settle();
}

// ----- decoding ------------------------------------------------------------

/// Reads the program; past the end it yields zeros.
struct Cursor<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn new(data: &'a [u8]) -> Self {
        Cursor { data, pos: 0 }
    }

    fn is_done(&self) -> bool {
        self.pos >= self.data.len()
    }

    fn byte(&mut self) -> u8 {
        let byte = self.data.get(self.pos).copied().unwrap_or(0);
        self.pos = self.pos.saturating_add(1);
        byte
    }

    fn below(&mut self, n: usize) -> usize {
        usize::from(self.byte()) % n.max(1)
    }

    fn bool(&mut self) -> bool {
        self.byte() & 1 == 1
    }

    fn u16(&mut self) -> u16 {
        u16::from_le_bytes([self.byte(), self.byte()])
    }

    fn u64(&mut self) -> u64 {
        let mut bytes = [0u8; 8];
        for b in &mut bytes {
            *b = self.byte();
        }
        u64::from_le_bytes(bytes)
    }

    fn bytes(&mut self, len: usize) -> &'a [u8] {
        let start = self.pos.min(self.data.len());
        let end = start.saturating_add(len).min(self.data.len());
        self.pos = self.pos.saturating_add(len);
        self.data.get(start..end).unwrap_or_default()
    }

    /// Up to `max` bytes as (lossy) UTF-8; the length comes first.
    fn text(&mut self, max: usize) -> String {
        let len = self.below(max + 1);
        String::from_utf8_lossy(self.bytes(len)).into_owned()
    }

    fn pick<T: Clone>(&mut self, items: &[T]) -> Option<T> {
        if items.is_empty() {
            return None;
        }
        let i = self.below(items.len());
        items.get(i).cloned()
    }

    fn pick_str(&mut self, items: &[&str]) -> String {
        self.pick(items).unwrap_or_default().to_owned()
    }
}

// ----- injected services ---------------------------------------------------

/// The shipped module's matcher, so the fuzzer drives the linear-time
/// pattern plans and their refusal at registration.
fn patterns() -> Box<dyn PatternMatcher> {
    Box::new(LinearPatterns::new())
}

// ----- value pools -----------------------------------------------------------

const POLICIES: [&str; 6] = [
    "null",
    r#"{"inapp":{"consequential":"deny"}}"#,
    r#"{"inapp":{"default":"confirm","readOnly":"allow"}}"#,
    r#"{"inapp":{"destructive":"hide","untrustedContent":"deny"}}"#,
    r#"{"inapp":{"consequential":"allow","bogus":"allow"},"human":{"x":"deny"}}"#,
    r#"{"inapp":{"default":"hide"}}"#,
];
const CONFIRM_MODES: [&str; 5] = [
    "null",
    r#"{"inapp":"none"}"#,
    r#"{"inapp":"deferred"}"#,
    r#"{"inapp":"inline"}"#,
    r#""none""#,
];
const ABORT_GRACES: [u64; 4] = [3_000, 0, 1, 50];
const CONFIRM_EXPIRIES: [u64; 4] = [600_000, 0, 1, 1_000];
const TOOL_NAMES: [&str; 12] = [
    "a",
    "b",
    "c",
    "form",
    "a.b",
    "a__b",
    "x-y_z.1",
    "",
    "bad name",
    "naïve",
    "submit",
    "llllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllll",
];
const SCOPE_NAMES: [&str; 5] = ["s", "t", "u.v", "", "bad name"];
const JUNK_TOOLS: [&str; 6] = ["nope", "a", "s.a", "", "bad name", "s.t.form"];
const ID_POOL: [&str; 9] = ["1", "2", "3", "4", "5", "6", "7", "8", ""];
const KEYS: [&str; 6] = ["email", "name", "n", "password", "a", "x1"];
const STRINGS: [&str; 6] = ["", "a@b.c", "abc", "a", "xyz", "password"];
const CHANGE_PATHS: [&str; 6] = ["email", "password", "password.x", "passwordx", "a.b", ""];
const STATES: [&str; 3] = ["s1", "s2", ""];
/// `state`s a transport may report: the four, and two that are none.
const STATUS_STATES: [&str; 6] = [
    "connecting",
    "open",
    "reconnecting",
    "closed",
    "Open",
    "closed ",
];

fn schema_pool(i: usize) -> Option<Value> {
    let schema = match i {
        0 => json!({"type": "object", "properties": {"email": {"type": "string", "pattern": "@"}},
                    "required": ["email"], "additionalProperties": false}),
        1 => json!({"type": "string", "pattern": "^a"}),
        2 => json!({"type": "integer", "minimum": 0, "maximum": 10}),
        3 => json!({"type": 5}),
        4 => json!({"$ref": "https://example.com/schema"}),
        5 => json!(true),
        6 => json!(false),
        7 => json!({"pattern": "["}),
        8 => json!({"type": "object", "patternProperties": {"^x": {"type": "number"}},
                    "unevaluatedProperties": false}),
        9 => json!({"anyOf": [{"type": "string", "minLength": 2},
                              {"type": "array", "items": {"$ref": "#"}}]}),
        10 => {
            json!({"type": "object", "properties": {"name": {"type": "string", "pattern": "^[a-z]+$"}}})
        }
        _ => return None,
    };
    Some(schema)
}

/// Text the driver made up, kept within [`DRIVER_JSON_DEPTH`].
fn shallow(text: String) -> String {
    if nesting_exceeds(text.as_bytes(), DRIVER_JSON_DEPTH) {
        "[]".into()
    } else {
        text
    }
}

fn gen_value(cur: &mut Cursor<'_>, depth: usize) -> Value {
    match cur.below(11) {
        0 => Value::Null,
        1 => Value::Bool(cur.bool()),
        2 => json!(i64::from(cur.byte() as i8)),
        // Any finite double, written with its shortest digits (not NaN or inf: null).
        3 => serde_json::from_str::<Value>(&format!("{:e}", f64::from_bits(cur.u64())))
            .unwrap_or(Value::Null),
        4 => Value::String(cur.pick_str(&STRINGS)),
        5 => Value::String(cur.text(16)),
        6 if depth < 4 => {
            let len = cur.below(4);
            Value::Array((0..len).map(|_| gen_value(cur, depth + 1)).collect())
        }
        7 | 8 if depth < 4 => {
            let len = cur.below(4);
            let mut map = Map::new();
            for _ in 0..len {
                let key = cur.pick_str(&KEYS);
                map.insert(key, gen_value(cur, depth + 1));
            }
            Value::Object(map)
        }
        9 => json!({"email": cur.pick_str(&STRINGS)}),
        _ => json!({}),
    }
}

/// JSON text: generated, or raw bytes (possibly not JSON at all).
fn gen_json_text(cur: &mut Cursor<'_>) -> String {
    if cur.below(4) == 0 {
        shallow(cur.text(64))
    } else {
        gen_value(cur, 0).to_string()
    }
}

fn gen_schema(cur: &mut Cursor<'_>) -> Option<SchemaSpec> {
    match cur.below(16) {
        i @ 0..=10 => schema_pool(i).map(SchemaSpec::Json),
        11 => Some(SchemaSpec::External {
            json: Some(json!({"type": "object"})),
        }),
        12 => Some(SchemaSpec::External { json: None }),
        13 => {
            let text = shallow(cur.text(96));
            serde_json::from_str::<Value>(&text)
                .ok()
                .map(SchemaSpec::Json)
        }
        14 => Some(SchemaSpec::Json(gen_value(cur, 0))),
        // A pattern the driver made up: the translation's input.
        15 => Some(SchemaSpec::Json(
            json!({"type": "string", "pattern": cur.text(24)}),
        )),
        _ => None,
    }
}

fn gen_output_schema(cur: &mut Cursor<'_>) -> Option<SchemaSpec> {
    match cur.below(8) {
        0 => Some(SchemaSpec::Json(json!({"type": "object"}))),
        1 => Some(SchemaSpec::Json(json!({"type": "string", "pattern": "z"}))),
        2 => Some(SchemaSpec::Json(json!({"type": 7}))),
        3 => Some(SchemaSpec::External { json: None }),
        _ => None,
    }
}

fn gen_hints(cur: &mut Cursor<'_>) -> Hints {
    let bits = cur.byte();
    let flag = |bit: u8| (bits & (1 << bit) != 0).then_some(true);
    let mut hints = Hints {
        read_only: flag(0),
        consequential: flag(1),
        destructive: flag(2),
        untrusted_content: flag(3),
        ..Hints::default()
    };
    if bits & 0x10 != 0 {
        hints.extra.insert("futureHint".into(), json!(1));
    }
    if bits & 0x20 != 0 && hints.read_only.is_none() {
        hints.read_only = Some(false);
    }
    hints
}

fn gen_changes(cur: &mut Cursor<'_>) -> Vec<FieldChange> {
    let len = cur.below(4);
    (0..len)
        .map(|_| {
            let path = cur.pick_str(&CHANGE_PATHS);
            let before = cur.bool().then(|| gen_value(cur, 1));
            let after = cur.bool().then(|| gen_value(cur, 1));
            FieldChange {
                path,
                before,
                after,
            }
        })
        .collect()
}

fn gen_issues(cur: &mut Cursor<'_>) -> Vec<Issue> {
    let len = cur.below(3);
    (0..len)
        .map(|_| Issue {
            path: cur.pick_str(&KEYS),
            message: cur.text(12),
        })
        .collect()
}

fn gen_state(cur: &mut Cursor<'_>) -> Option<String> {
    match cur.below(4) {
        0 => None,
        _ => Some(cur.pick_str(&STATES)),
    }
}

// ----- the model -----------------------------------------------------------

/// Work handed to JS that waits for an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Work {
    /// A run's `snapshot`, before its `run`.
    Snapshot(RunId),
    Run(RunId),
    Validate(RunId),
    Prepare {
        run: RunId,
        summary: bool,
        changes: bool,
        state: bool,
    },
    ReadState(RunId),
    Restore(RunId),
}

impl Work {
    fn run(self) -> RunId {
        match self {
            Work::Snapshot(run)
            | Work::Run(run)
            | Work::Validate(run)
            | Work::ReadState(run)
            | Work::Restore(run)
            | Work::Prepare { run, .. } => run,
        }
    }
}

/// The program's state: the core, the shared model of the spec's rules
/// (which checks every output), and what the decoder picks from.
struct Driver {
    tm: Toolmark,
    spec: SpecModel,
    now: u64,
    next_fresh_id: u64,
    flooded: usize,
    /// Work handed to JS and not answered yet.
    outstanding: Vec<Work>,
    /// The deadline the last drain ended with.
    deadline: Option<u64>,
}

fn pick_policy(cur: &mut Cursor<'_>, items: &[&str]) -> Value {
    serde_json::from_str::<Value>(&cur.pick_str(items)).unwrap_or(Value::Null)
}

impl Driver {
    fn new(cur: &mut Cursor<'_>) -> Option<Driver> {
        let flags = cur.byte();
        let policy = pick_policy(cur, &POLICIES);
        let confirm_mode = pick_policy(cur, &CONFIRM_MODES);
        let abort_grace_ms = cur.pick(&ABORT_GRACES).unwrap_or(3_000);
        let confirm_expiry_ms = cur.pick(&CONFIRM_EXPIRIES).unwrap_or(600_000);
        let tool_budget = cur.pick(&[40, 2, 0]).unwrap_or(40);
        let seed = cur.u64();
        let period = u64::from(cur.byte() % 7) + 2;
        let config = Config {
            dev: flags & 1 != 0,
            inline_confirm: flags & 2 != 0,
            tool_budget,
            confirm_expiry_ms,
            abort_grace_ms,
            policy: policy.clone(),
            confirm_mode: confirm_mode.clone(),
        };
        let rng = SeededRandom::failing_every(seed, (flags & 4 != 0).then_some(period));
        let mut tm = Toolmark::new(config, Box::new(rng), patterns()).ok()?;
        let mut spec = SpecModel::new(&tm, &policy, &confirm_mode, patterns());
        let drained = spec.drain(&mut tm).unwrap_or_else(|e| panic!("{e}"));
        let mut driver = Driver {
            tm,
            spec,
            now: 1_000,
            next_fresh_id: 0,
            flooded: 0,
            outstanding: Vec::new(),
            deadline: None,
        };
        driver.take_work(drained);
        // Most programs want a bridge; flag bit 3 starts without one.
        if flags & 8 == 0 {
            driver.apply(Input::Attach(BridgeOptions::default()));
        }
        Some(driver)
    }

    /// Feeds one input through the shared model (which checks every
    /// output; a broken rule panics) and keeps the work handed out.
    fn apply(&mut self, input: Input) -> spec_model::Reply {
        let (reply, drained) = self
            .spec
            .apply(&mut self.tm, input, self.now)
            .unwrap_or_else(|e| panic!("{e}"));
        self.take_work(drained);
        reply
    }

    fn take_work(&mut self, drained: Drained) {
        self.deadline = drained.deadline;
        for action in drained.actions {
            let work = match action {
                Action::Run(RunOrder { run, snapshot, .. }) => {
                    if snapshot {
                        Work::Snapshot(run)
                    } else {
                        Work::Run(run)
                    }
                }
                Action::Validate { run, .. } => Work::Validate(run),
                Action::Prepare(PrepareOrder {
                    run,
                    summary,
                    changes,
                    state,
                    ..
                }) => Work::Prepare {
                    run,
                    summary,
                    changes,
                    state,
                },
                Action::ReadState { run, .. } => Work::ReadState(run),
                Action::Restore { run, .. } => Work::Restore(run),
                _ => continue,
            };
            self.outstanding.push(work);
        }
    }

    // ----- choosing ----------------------------------------------------------

    fn pick_scope(&self, cur: &mut Cursor<'_>) -> ScopeId {
        let scopes: Vec<ScopeId> = self.spec.scopes.keys().copied().collect();
        match cur.below(8) {
            0 => ScopeId(u32::from(cur.byte())),
            _ => cur.pick(&scopes).unwrap_or(ScopeId::ROOT),
        }
    }

    fn pick_key(&self, cur: &mut Cursor<'_>) -> ToolKey {
        let keys: Vec<ToolKey> = self.spec.tools.keys().copied().collect();
        match cur.below(6) {
            0 => cur.pick(&self.spec.gone_keys).unwrap_or(ToolKey(999)),
            1 => ToolKey(u32::from(cur.byte())),
            _ => cur.pick(&keys).unwrap_or(ToolKey(0)),
        }
    }

    fn pick_tool_name(&self, cur: &mut Cursor<'_>) -> String {
        let names: Vec<String> = self.spec.tools.values().map(|t| t.name.clone()).collect();
        match cur.below(6) {
            0 => cur.pick_str(&JUNK_TOOLS),
            _ => cur
                .pick(&names)
                .unwrap_or_else(|| cur.pick_str(&JUNK_TOOLS)),
        }
    }

    fn pick_bridge(&self, cur: &mut Cursor<'_>) -> BridgeId {
        let attached: Vec<BridgeId> = self.spec.bridges.keys().copied().collect();
        match cur.below(8) {
            0 => cur.pick(&self.spec.detached).unwrap_or(BridgeId(77)),
            _ => cur.pick(&attached).unwrap_or(BridgeId(0)),
        }
    }

    fn pick_id(&mut self, cur: &mut Cursor<'_>) -> String {
        match cur.below(4) {
            0 => {
                self.next_fresh_id += 1;
                format!("n{}", self.next_fresh_id)
            }
            _ => cur.pick_str(&ID_POOL),
        }
    }

    fn pick_run(&self, cur: &mut Cursor<'_>) -> RunId {
        let pending: Vec<RunId> = self.outstanding.iter().map(|w| w.run()).collect();
        match cur.below(4) {
            0 => RunId(u64::from(cur.byte())),
            1 => cur.pick(&self.spec.run_list).unwrap_or(RunId(0)),
            _ => cur
                .pick(&pending)
                .unwrap_or_else(|| RunId(u64::from(cur.byte()))),
        }
    }

    fn pick_rev(&self, cur: &mut Cursor<'_>) -> Option<u64> {
        let rev = self.tm.rev();
        match cur.below(6) {
            0 => Some(rev),
            1 => Some(rev.saturating_sub(1)),
            2 => Some(0),
            3 => Some(rev + 1),
            _ => None,
        }
    }

    // ----- the program -------------------------------------------------------

    fn step(&mut self, cur: &mut Cursor<'_>) {
        let op = cur.byte();
        // Half of the bytes that answer everything (31 + 128, + 160, …)
        // report a transport state, so earlier programs keep the rest.
        if op % 32 == 31 && op >= 128 {
            return self.transport_status(cur);
        }
        match op % 32 {
            0 | 1 => self.register(cur),
            2 => {
                let key = self.pick_key(cur);
                self.apply(Input::Unregister(key));
            }
            3 => {
                let parent = self.pick_scope(cur);
                let name = match cur.below(4) {
                    0 => cur.text(8),
                    _ => cur.pick_str(&SCOPE_NAMES),
                };
                self.apply(Input::CreateScope { parent, name });
            }
            4 => {
                let scope = self.pick_scope(cur);
                self.apply(Input::DisposeScope(scope));
            }
            5 => {
                let on_change = if cur.bool() {
                    OnChange::Changed
                } else {
                    OnChange::Manifest
                };
                let max_message_bytes = cur
                    .pick(&[DEFAULT_MAX_MESSAGE_BYTES, 64, 200, 0])
                    .unwrap_or(DEFAULT_MAX_MESSAGE_BYTES);
                self.apply(Input::Attach(BridgeOptions {
                    on_change,
                    max_message_bytes,
                }));
            }
            6 => {
                let bridge = self.pick_bridge(cur);
                self.apply(Input::Detach(bridge));
            }
            7 => {
                let bridge = self.pick_bridge(cur);
                let text = cur.text(255).replace("$C", &self.spec.client_id);
                self.inbound(bridge, &text);
            }
            // The same text as a WebSocket frame (a non-JSON one dropped silently).
            8 => {
                let bridge = self.pick_bridge(cur);
                let text = cur.text(255).replace("$C", &self.spec.client_id);
                self.apply(Input::InboundFrame { bridge, text });
            }
            9..=11 => {
                let bridge = self.pick_bridge(cur);
                let id = self.pick_id(cur);
                let tool = self.pick_tool_name(cur);
                let input = gen_value(cur, 0);
                let mut message = json!({"protocol": 1, "type": "call",
                    "clientId": self.spec.client_id, "id": id, "tool": tool, "input": input});
                if let (Some(rev), Some(map)) = (self.pick_rev(cur), message.as_object_mut()) {
                    map.insert("rev".into(), rev.into());
                }
                self.inbound(bridge, &message.to_string());
            }
            12 => {
                let bridge = self.pick_bridge(cur);
                let id = self.pick_id(cur);
                let tool = self.pick_tool_name(cur);
                let message = json!({"protocol": 1, "type": "describe",
                    "clientId": self.spec.client_id, "id": id, "tool": tool});
                self.inbound(bridge, &message.to_string());
            }
            13 => {
                let bridge = self.pick_bridge(cur);
                let id = self.pick_id(cur);
                let message = json!({"protocol": 1, "type": "cancel",
                    "clientId": self.spec.client_id, "id": id});
                self.inbound(bridge, &message.to_string());
            }
            14 => self.odd_inbound(cur),
            15 | 16 => self.page_call(cur),
            17 => {
                let handles: Vec<Handle> = self.spec.handles.keys().copied().collect();
                let handle = match cur.below(4) {
                    0 => Handle(u64::from(cur.byte())),
                    _ => cur.pick(&handles).unwrap_or(Handle(0)),
                };
                self.apply(Input::Abort(handle));
            }
            18 | 19 => {
                let pending: Vec<String> = self
                    .tm
                    .pending_confirmations()
                    .into_iter()
                    .map(|p| p.confirm_id)
                    .collect();
                let confirm_id = match cur.below(5) {
                    0 => cur.text(8),
                    1 => cur.pick(&self.spec.confirm_ids).unwrap_or_default(),
                    _ => cur
                        .pick(&pending)
                        .or_else(|| cur.pick(&self.spec.confirm_ids))
                        .unwrap_or_default(),
                };
                // `confirmPending`'s `approve` as JS gave it: a boolean
                // (`% 4 == 0` rejects, as before), or another value, which
                // the boundary refuses and which never reaches the core.
                let answer = cur.byte();
                let given = (answer % 8 != 7).then_some(answer % 4 != 0);
                let Ok(approve) = approve_given(given) else {
                    return;
                };
                self.apply(Input::Confirm {
                    confirm_id,
                    approve,
                });
            }
            20 => {
                let call_id = match cur.below(4) {
                    0 => cur.text(8),
                    _ => cur.pick(&self.spec.call_ids).unwrap_or_default(),
                };
                self.apply(Input::Undo(call_id));
            }
            21..=24 => {
                if self.outstanding.is_empty() {
                    return;
                }
                let index = cur.below(self.outstanding.len());
                let work = self.outstanding.remove(index);
                self.answer(work, cur);
            }
            25 => self.junk_answer(cur),
            26 => {
                let run = self.pick_run(cur);
                self.apply(Input::CtxConfirm(run));
                let answer = match cur.below(3) {
                    0 => None,
                    n => Some(n == 1),
                };
                self.apply(Input::CtxConfirmed { run, answer });
            }
            27 | 28 => {
                let next = self.deadline;
                let delta = match cur.below(10) {
                    0 => 0,
                    1 => 1,
                    2 => 100,
                    3 => 2_999,
                    4 => 3_000,
                    5 => 600_000,
                    6 => u64::from(cur.u16()),
                    7 => next.map_or(0, |t| t.saturating_sub(self.now).saturating_sub(1)),
                    _ => next.map_or(1, |t| t.saturating_sub(self.now)),
                };
                self.now = self.now.saturating_add(delta);
                self.apply(Input::Timeout);
            }
            29 => self.flood(cur),
            30 => {
                // A burst of calls to one tool: reaches the per-scope bound.
                let bridge = self.pick_bridge(cur);
                let tool = self.pick_tool_name(cur);
                let count = cur.below(40) + 1;
                for _ in 0..count {
                    self.next_fresh_id += 1;
                    let message = json!({"protocol": 1, "type": "call",
                        "clientId": self.spec.client_id, "id": format!("b{}", self.next_fresh_id),
                        "tool": tool, "input": {}});
                    self.inbound(bridge, &message.to_string());
                }
            }
            _ => {
                for work in std::mem::take(&mut self.outstanding) {
                    self.answer_plainly(work);
                }
            }
        }
    }

    fn register(&mut self, cur: &mut Cursor<'_>) {
        let scope = self.pick_scope(cur);
        let name = match cur.below(8) {
            0 => cur.text(10),
            _ => cur.pick_str(&TOOL_NAMES),
        };
        let mut def = ToolDef::new(name.clone(), cur.text(24));
        def.hints = gen_hints(cur);
        let flags = cur.byte();
        def.has_summary = flags & 1 != 0;
        def.has_changes = flags & 2 != 0;
        def.has_snapshot = flags & 4 != 0;
        def.has_state = flags & 8 != 0;
        if flags & 0x10 != 0 {
            def.title = Some(cur.text(12));
        }
        if flags & 0x20 != 0 {
            def.mode = Some(ToolMode::Stepwise);
        }
        if flags & 0x40 != 0 {
            def.sensitive = vec!["password".into()];
        }
        if flags & 0x80 != 0 {
            def.sensitive.push(String::new());
            def.sensitive.push("a".into());
        }
        def.input_schema = gen_schema(cur);
        def.output_schema = gen_output_schema(cur);
        self.apply(Input::Register {
            scope,
            def: Box::new(def),
        });
    }

    fn inbound(&mut self, bridge: BridgeId, text: &str) {
        self.apply(Input::Inbound {
            bridge,
            text: text.to_owned(),
        });
    }

    fn odd_inbound(&mut self, cur: &mut Cursor<'_>) {
        let bridge = self.pick_bridge(cur);
        let id = self.pick_id(cur);
        let tool = self.pick_tool_name(cur);
        let cid = self.spec.client_id.clone();
        let text = match cur.below(10) {
            0 => json!({"protocol": 2, "type": "call", "clientId": cid, "id": id}).to_string(),
            1 => json!({"protocol": "1", "type": "describe", "clientId": cid, "id": id, "tool": tool})
                .to_string(),
            2 => json!({"protocol": 1, "type": "result", "clientId": cid, "id": id,
                        "result": {"status": "ok"}})
            .to_string(),
            3 => json!({"protocol": 1, "type": "call", "clientId": cid, "id": id, "tool": tool,
                        "input": {}, "extra": true})
            .to_string(),
            4 => json!({"protocol": 1, "type": "call", "clientId": cid, "id": id, "tool": tool})
                .to_string(),
            5 => json!({"protocol": 1, "type": "call", "clientId": cid, "id": id, "tool": tool,
                        "input": {}, "rev": cur.pick(&[serde_json::json!(-1), serde_json::json!(1.5),
                                          serde_json::json!(u64::MAX), serde_json::json!("1")])})
            .to_string(),
            6 => json!({"protocol": 2, "id": id}).to_string(),
            7 => {
                let depth = 60 + cur.below(10);
                format!(
                    r#"{{"protocol":1,"type":"call","clientId":"{cid}","id":"{id}","tool":"{tool}","input":{}{}}}"#,
                    "[".repeat(depth),
                    "]".repeat(depth)
                )
            }
            8 => json!({"protocol": 1, "type": "call", "clientId": "00000000-0000-4000-8000-000000000000",
                        "id": id, "tool": tool, "input": {}})
            .to_string(),
            _ => json!({"protocol": 1, "type": "describe", "clientId": cid, "id": id, "tool": tool,
                        "pad": "x".repeat(cur.below(300))})
            .to_string(),
        };
        self.inbound(bridge, &text);
    }

    fn page_call(&mut self, cur: &mut Cursor<'_>) {
        let name = self.pick_tool_name(cur);
        let input = gen_json_text(cur);
        let caller = if cur.bool() {
            Caller::Human
        } else {
            Caller::Inapp
        };
        let rev = self.pick_rev(cur);
        // `% 4 == 0` is the held share `below(4) == 0` was before the
        // aborted page call took 7, so earlier inputs keep their held calls.
        let pick = cur.below(8);
        if pick % 4 == 0 {
            self.apply(Input::HeldCall {
                name,
                input,
                caller,
            });
        } else if pick == 7 {
            // Its signal had aborted before it was made.
            let call = PageCall {
                input_json: input,
                caller,
                rev,
                signal: SignalUse::Abort,
                held: caller == Caller::Inapp,
            };
            self.apply(Input::PageCall { name, call });
        } else {
            self.apply(Input::Call {
                name,
                input,
                caller,
                rev,
            });
        }
    }

    /// Many describes with fresh ids, enough to push ids out of the
    /// 1000-id answered memory. Every 64th result is checked in full; the
    /// others only for their id (full checks of all of them would make
    /// this one operation cost as much as a whole ordinary program).
    fn flood(&mut self, cur: &mut Cursor<'_>) {
        let bridge = self.pick_bridge(cur);
        let count = if cur.below(4) == 0 { 1_050 } else { 20 };
        let count = count.min(FLOOD_BUDGET.saturating_sub(self.flooded));
        self.flooded += count;
        let tool = self.pick_tool_name(cur);
        // A message takes the light way only after the previous full one
        // was answered (same shape, only the id differs) and when it fits.
        let mut light = false;
        for i in 0..count {
            self.next_fresh_id += 1;
            let id = format!("f{}", self.next_fresh_id);
            let message =
                json!({"protocol": 1, "type": "describe", "clientId": self.spec.client_id,
                "id": id, "tool": tool})
                .to_string();
            let fits = self
                .spec
                .bridges
                .get(&bridge)
                .is_some_and(|m| message.len() <= m.max_message_bytes);
            if i % 64 == 0 || !light || !fits {
                self.inbound(bridge, &message);
                light = self.spec.bridges.contains_key(&bridge) && self.spec.recent.contains(&id);
                continue;
            }
            let drained = self
                .spec
                .apply_light_describe(&mut self.tm, bridge, &id, &message, self.now)
                .unwrap_or_else(|e| panic!("{e}"));
            self.take_work(drained);
        }
    }

    // ----- answering work ----------------------------------------------------

    fn answer(&mut self, work: Work, cur: &mut Cursor<'_>) {
        let input = match work {
            // Mostly a restorer; then the run goes on.
            Work::Snapshot(run) => return self.snapshot_taken(run, cur.below(4) != 0),
            Work::Run(run) => {
                let outcome = match cur.below(8) {
                    0 => Outcome::Ok(None),
                    1 => Outcome::Ok(Some(shallow(cur.text(64)))),
                    2 => Outcome::Threw(cur.text(16)),
                    3 => Outcome::NotSerializable(cur.text(16)),
                    4 => Outcome::Aborted,
                    // JS found the tool's functions gone (unregistered since).
                    7 => return self.tool_gone(run),
                    _ => Outcome::Ok(Some(gen_value(cur, 0).to_string())),
                };
                Input::Outcome(run, outcome)
            }
            Work::Validate(run) => {
                let validated = match cur.below(6) {
                    0 => Validated::Valid(None),
                    1 => Validated::Valid(Some(gen_json_text(cur))),
                    2 => Validated::Invalid(gen_issues(cur)),
                    3 => Validated::Threw(cur.text(16)),
                    4 => return self.tool_gone(run),
                    _ => Validated::Valid(Some(gen_value(cur, 0).to_string())),
                };
                Input::Validated(run, validated)
            }
            Work::Prepare {
                run,
                summary,
                changes,
                state,
            } => {
                let pick = cur.byte();
                let prepared = match pick % 6 {
                    // Half of the throws are a summary or changes JSON cannot carry.
                    0 if pick % 12 == 6 => Err(Unprepared::NotSerializable(cur.text(16))),
                    0 => Err(Unprepared::Threw(cur.text(16))),
                    1 => return self.tool_gone(run),
                    _ => {
                        // Mostly what was asked for; sometimes more or less.
                        let loose = cur.below(4) == 0;
                        Ok(Prepared {
                            summary: (summary || loose).then(|| cur.text(24)),
                            changes: (changes || loose).then(|| gen_changes(cur)),
                            state: if state || loose { gen_state(cur) } else { None },
                        })
                    }
                };
                Input::Prepared(run, prepared)
            }
            Work::ReadState(run) => {
                let state = match cur.below(5) {
                    0 => Err(cur.text(16)),
                    1 => return self.tool_gone(run),
                    _ => Ok(gen_state(cur)),
                };
                Input::State(run, state)
            }
            Work::Restore(run) => {
                let restored = if cur.below(4) == 0 {
                    Err(cur.text(16))
                } else {
                    Ok(())
                };
                Input::Restored(run, restored)
            }
        };
        self.apply(input);
    }

    /// A state the bridge's transport reported, read as the boundary reads
    /// `transport.status` and what `onStatus` hands over (`status::from_js`):
    /// each part a value of its type or none, and a state no parts describe
    /// is unreadable.
    fn transport_status(&mut self, cur: &mut Cursor<'_>) {
        let bridge = self.pick_bridge(cur);
        let number = |cur: &mut Cursor<'_>| match cur.below(10) {
            0 => None,
            1 => Some(0.0),
            2 => Some(1.0),
            3 => Some(2.5),
            4 => Some(-1.0),
            5 => Some(f64::NAN),
            6 => Some(f64::INFINITY),
            7 => Some(1e300),
            8 => Some(f64::from(u32::MAX) + 1.0),
            _ => Some(f64::from_bits(cur.u64())),
        };
        let state = match cur.below(8) {
            0 => None,
            1 => Some(cur.text(12)),
            i => STATUS_STATES.get(i - 2).map(|s| (*s).to_owned()),
        };
        let parts = StatusParts {
            state,
            attempt: number(cur),
            delay_ms: number(cur),
            code: number(cur),
            reason: cur.bool().then(|| cur.text(24)),
            terminal: match cur.below(3) {
                0 => None,
                n => Some(n == 1),
            },
        };
        self.apply(match Status::from_parts(parts) {
            Some(status) => Input::TransportStatus(bridge, status),
            None => Input::UnreadableStatus(bridge),
        });
    }

    /// `run`'s snapshot settled, with a `restorer` or not: its run starts
    /// if the core says it goes on.
    fn snapshot_taken(&mut self, run: RunId, restorer: bool) {
        if self.apply(Input::SnapshotTaken { run, restorer }) == Reply::GoesOn(true) {
            self.outstanding.push(Work::Run(run));
        }
    }

    /// JS has no functions for `run`'s tool.
    fn tool_gone(&mut self, run: RunId) {
        self.apply(Input::ToolGone(run));
    }

    /// Any kind of answer to any run: the core must ignore what does not fit.
    fn junk_answer(&mut self, cur: &mut Cursor<'_>) {
        let run = self.pick_run(cur);
        let input = match cur.below(7) {
            5 => Input::ToolGone(run),
            6 => Input::SnapshotTaken {
                run,
                restorer: cur.below(2) == 0,
            },
            0 => {
                let outcome = match cur.below(3) {
                    0 => Outcome::Aborted,
                    1 => Outcome::Ok(Some(shallow(cur.text(32)))),
                    _ => Outcome::Threw(String::new()),
                };
                Input::Outcome(run, outcome)
            }
            1 => Input::Validated(run, Validated::Valid(None)),
            2 => Input::Prepared(run, Ok(Prepared::default())),
            3 => Input::State(run, Ok(gen_state(cur))),
            _ => Input::Restored(run, Ok(())),
        };
        self.apply(input);
    }

    /// The unremarkable answer, for the settling phase.
    fn answer_plainly(&mut self, work: Work) {
        let input = match work {
            Work::Snapshot(run) => return self.snapshot_taken(run, true),
            Work::Run(run) => Input::Outcome(run, Outcome::Ok(None)),
            Work::Validate(run) => Input::Validated(run, Validated::Valid(None)),
            Work::Prepare { run, .. } => Input::Prepared(run, Ok(Prepared::default())),
            Work::ReadState(run) => Input::State(run, Ok(None)),
            Work::Restore(run) => Input::Restored(run, Ok(())),
        };
        self.apply(input);
    }

    /// Answers everything and runs the clock past every deadline; then the
    /// core must owe nothing.
    fn settle(&mut self) {
        let mut rounds = 0;
        loop {
            rounds += 1;
            assert!(rounds < SETTLE_ROUNDS, "the core does not settle");
            if !self.outstanding.is_empty() {
                for work in std::mem::take(&mut self.outstanding) {
                    self.answer_plainly(work);
                }
                continue;
            }
            let Some(deadline) = self.deadline else {
                break;
            };
            self.now = self.now.max(deadline);
            self.apply(Input::Timeout);
        }
        self.spec
            .settled(&self.tm)
            .unwrap_or_else(|e| panic!("{e}"));
    }
}
