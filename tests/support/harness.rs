//! A page with one bridge around the sans-IO core, a simulated clock and a
//! seeded random source, for native scenario and model tests.
#![allow(dead_code)]

use serde_json::{json, Value};
use toolmark_bridge::machine::{
    Action, BridgeId, BridgeOptions, Config, Event, Handle, Outcome, Output, RunId, RunOrder,
    Toolmark,
};
use toolmark_bridge::protocol::{ErrorEventCode, ToolResult};
use toolmark_bridge::registry::{ScopeId, ToolDef, ToolKey};
use toolmark_bridge::schema::PatternMatcher;

#[path = "seeded_random.rs"]
mod seeded_random;
pub use seeded_random::SeededRandom;

/// ECMA-ish patterns through the regex crate (tests only).
pub struct RegexPatterns;

impl PatternMatcher for RegexPatterns {
    fn is_match(&self, pattern: &str, text: &str) -> Result<bool, String> {
        regex::Regex::new(pattern)
            .map(|re| re.is_match(text))
            .map_err(|e| e.to_string())
    }
}

pub struct Page {
    pub tm: Toolmark,
    pub bridge: BridgeId,
    pub now: u64,
    /// Every message sent on `bridge`, in order, as JSON.
    pub sent: Vec<Value>,
    /// Every message sent on any bridge, in order, with its bridge.
    pub sent_all: Vec<(BridgeId, Value)>,
    pub events: Vec<Event>,
    pub actions: Vec<Action>,
    /// The deadline the last drain ended with.
    pub deadline: Option<u64>,
}

impl Page {
    pub fn new() -> Page {
        Page::with_config(Config::default())
    }

    pub fn with_config(config: Config) -> Page {
        Page::with_options(config, BridgeOptions::default())
    }

    pub fn with_options(config: Config, options: BridgeOptions) -> Page {
        let mut tm = Toolmark::new(
            config,
            Box::new(SeededRandom::new(7)),
            Box::new(RegexPatterns),
        )
        .unwrap_or_else(|e| panic!("core: {e}"));
        let bridge = tm.attach(options);
        let mut page = Page {
            tm,
            bridge,
            now: 1_000,
            sent: Vec::new(),
            sent_all: Vec::new(),
            events: Vec::new(),
            actions: Vec::new(),
            deadline: None,
        };
        page.drain();
        page
    }

    pub fn client_id(&self) -> String {
        self.tm.client_id().to_owned()
    }

    /// Drains every output, in the documented order, and keeps the
    /// deadline it ends with.
    pub fn drain(&mut self) {
        loop {
            match self.tm.poll_output() {
                Output::Transmit(t) => {
                    let message = serde_json::from_str::<Value>(&t.text)
                        .unwrap_or_else(|e| panic!("sent non-JSON {e}"));
                    if t.bridge == self.bridge {
                        self.sent.push(message.clone());
                    }
                    self.sent_all.push((t.bridge, message));
                }
                Output::Event(e) => self.events.push(e),
                Output::Action(a) => self.actions.push(a),
                Output::Timeout(deadline) => {
                    self.deadline = deadline;
                    return;
                }
            }
        }
    }

    /// The next deadline, after draining what is queued.
    pub fn deadline(&mut self) -> Option<u64> {
        self.drain();
        self.deadline
    }

    pub fn register(&mut self, def: ToolDef) -> ToolKey {
        let key = self
            .tm
            .register(ScopeId::ROOT, def, self.now)
            .unwrap_or_else(|e| panic!("register: {e}"))
            .unwrap_or_else(|| panic!("register rejected: {:?}", self.tm.poll_output()));
        self.drain();
        key
    }

    /// A new scope under the root.
    pub fn scope(&mut self, name: &str) -> ScopeId {
        self.tm
            .create_scope(ScopeId::ROOT, name)
            .unwrap_or_else(|e| panic!("create_scope: {e}"))
            .live()
            .unwrap_or_else(|| panic!("create_scope rejected"))
    }

    pub fn register_in(&mut self, scope: ScopeId, def: ToolDef) -> ToolKey {
        let key = self
            .tm
            .register(scope, def, self.now)
            .unwrap_or_else(|e| panic!("register: {e}"))
            .unwrap_or_else(|| panic!("register rejected"));
        self.drain();
        key
    }

    /// Attaches another bridge (`bridge` stays the page's main one).
    pub fn attach(&mut self, options: BridgeOptions) -> BridgeId {
        let bridge = self.tm.attach(options);
        self.drain();
        bridge
    }

    /// Detaches the main bridge and attaches a new one in its place (same page).
    pub fn reattach(&mut self) {
        self.tm.detach(self.bridge, self.now);
        self.drain();
        self.bridge = self.tm.attach(BridgeOptions::default());
        self.drain();
    }

    /// Every message sent on `bridge`.
    pub fn sent_on(&self, bridge: BridgeId) -> Vec<Value> {
        self.sent_all
            .iter()
            .filter(|(b, _)| *b == bridge)
            .map(|(_, m)| m.clone())
            .collect()
    }

    pub fn inbound_on(&mut self, bridge: BridgeId, message: Value) {
        self.tm
            .handle_inbound(bridge, &message.to_string(), self.now);
        self.drain();
    }

    pub fn call_on(&mut self, bridge: BridgeId, id: &str, tool: &str, input: Value) {
        let message = json!({"protocol": 1, "type": "call", "clientId": self.client_id(),
                             "id": id, "tool": tool, "input": input});
        self.inbound_on(bridge, message);
    }

    pub fn describe_on(&mut self, bridge: BridgeId, id: &str, tool: &str) {
        let message = json!({"protocol": 1, "type": "describe", "clientId": self.client_id(),
                             "id": id, "tool": tool});
        self.inbound_on(bridge, message);
    }

    pub fn inbound(&mut self, message: Value) {
        self.inbound_text(&message.to_string());
    }

    pub fn inbound_text(&mut self, text: &str) {
        self.tm.handle_inbound(self.bridge, text, self.now);
        self.drain();
    }

    pub fn call(&mut self, id: &str, tool: &str, input: Value) {
        let message = json!({"protocol": 1, "type": "call", "clientId": self.client_id(),
                             "id": id, "tool": tool, "input": input});
        self.inbound(message);
    }

    pub fn call_rev(&mut self, id: &str, tool: &str, input: Value, rev: u64) {
        let message = json!({"protocol": 1, "type": "call", "clientId": self.client_id(),
                             "id": id, "tool": tool, "input": input, "rev": rev});
        self.inbound(message);
    }

    pub fn describe(&mut self, id: &str, tool: &str) {
        let message = json!({"protocol": 1, "type": "describe", "clientId": self.client_id(),
                             "id": id, "tool": tool});
        self.inbound(message);
    }

    pub fn cancel(&mut self, id: &str) {
        let message =
            json!({"protocol": 1, "type": "cancel", "clientId": self.client_id(), "id": id});
        self.inbound(message);
    }

    pub fn advance(&mut self, ms: u64) {
        self.now += ms;
        self.tm.handle_timeout(self.now);
        self.drain();
    }

    /// Takes the `Run` actions started so far: (run, tool name, input, caller, call id).
    pub fn take_runs(&mut self) -> Vec<(RunId, String, Value, String, String)> {
        let mut runs = Vec::new();
        self.actions.retain(|a| match a {
            Action::Run(RunOrder {
                run,
                name,
                input,
                caller,
                call_id,
                ..
            }) => {
                runs.push((
                    *run,
                    name.clone(),
                    serde_json::from_str::<Value>(input).unwrap_or(Value::Null),
                    caller.as_str().to_owned(),
                    call_id.clone(),
                ));
                false
            }
            _ => true,
        });
        runs
    }

    pub fn settle(&mut self, run: RunId, outcome: Outcome) {
        self.tm.handle_outcome(run, outcome, self.now);
        self.drain();
    }

    /// A run's `snapshot` settled: whether the run goes on.
    pub fn snapshot_taken(&mut self, run: RunId) -> bool {
        let goes_on = self.tm.handle_snapshot_taken(run, true, self.now);
        self.drain();
        goes_on
    }

    pub fn ok(&mut self, run: RunId, data: Value) {
        self.settle(run, Outcome::Ok(Some(data.to_string())));
    }

    /// Every `result` sent for `id`.
    pub fn results_for(&self, id: &str) -> Vec<Value> {
        self.sent
            .iter()
            .filter(|m| m["type"] == "result" && m["id"] == id)
            .map(|m| m["result"].clone())
            .collect()
    }

    /// The single result for `id` (fails unless exactly one was sent).
    pub fn result(&self, id: &str) -> Value {
        let results = self.results_for(id);
        assert_eq!(
            results.len(),
            1,
            "results for {id}: {results:?}\nsent: {:#?}",
            self.sent
        );
        results[0].clone()
    }

    pub fn confirmed_for(&self, confirm_id: &str) -> Vec<Value> {
        self.sent
            .iter()
            .filter(|m| m["type"] == "confirmed" && m["confirmId"] == confirm_id)
            .map(|m| m["result"].clone())
            .collect()
    }

    /// Every error event's code and message, in order.
    pub fn errors(&self) -> Vec<(ErrorEventCode, String)> {
        self.events
            .iter()
            .filter_map(|e| match e {
                Event::Error { code, message, .. } => Some((*code, message.clone())),
                _ => None,
            })
            .collect()
    }

    pub fn error_codes(&self) -> Vec<ErrorEventCode> {
        self.errors().into_iter().map(|(code, _)| code).collect()
    }

    pub fn completed(&self, handle: Handle) -> Option<ToolResult> {
        self.events.iter().find_map(|e| match e {
            Event::Completed { handle: h, result } if *h == handle => Some(result.clone()),
            _ => None,
        })
    }

    pub fn manifests(&self) -> Vec<Value> {
        self.sent
            .iter()
            .filter(|m| m["type"] == "manifest")
            .cloned()
            .collect()
    }
}

pub fn tool(name: &str) -> ToolDef {
    ToolDef::new(name, format!("The {name} tool"))
}

pub fn consequential(name: &str) -> ToolDef {
    let mut def = tool(name);
    def.hints.consequential = Some(true);
    def
}
