//! Every input the core takes, as one value (str0m's `handle_input`):
//! [`Toolmark::handle_input`] hands each to the named method it stands for
//! and returns what that method returned. The proptest and the fuzzer drive
//! the core through it, so both exercise the same inputs the boundary makes
//! through the named methods; the boundary calls those directly (it holds
//! borrowed text, and this enum owns its values).

use crate::prelude::*;

use crate::bridges::{BridgeId, BridgeOptions};
use crate::lifecycle::calls::{Outcome, PageCall, Prepared, Unprepared, Validated};
use crate::machine::{Toolmark, ToolmarkError};
use crate::outputs::{Handle, RunId};
use crate::policy::Caller;
use crate::protocol::{ErrorEventCode, Issue};
use crate::registry::{ScopeId, ScopeMade, ToolDef, ToolKey};
use crate::transport::status::Status;

/// One input to the core, with what its method takes besides the time.
#[derive(Debug, Clone)]
pub enum Input {
    /// [`Toolmark::register`].
    Register { scope: ScopeId, def: Box<ToolDef> },
    /// [`Toolmark::unregister`].
    Unregister(ToolKey),
    /// [`Toolmark::create_scope`].
    CreateScope { parent: ScopeId, name: String },
    /// [`Toolmark::dispose_scope`].
    DisposeScope(ScopeId),
    /// [`Toolmark::attach`].
    Attach(BridgeOptions),
    /// [`Toolmark::detach`].
    Detach(BridgeId),
    /// [`Toolmark::handle_inbound`]: a message's text from a transport
    /// that delivers values.
    Inbound { bridge: BridgeId, text: String },
    /// [`Toolmark::handle_inbound_frame`]: a text frame as it arrived.
    InboundFrame { bridge: BridgeId, text: String },
    /// [`Toolmark::handle_inbound_not_json`].
    InboundNotJson(BridgeId),
    /// [`Toolmark::handle_inbound_unread`]: a message's length in UTF-16
    /// units, over the limit.
    InboundUnread { bridge: BridgeId, units: usize },
    /// [`Toolmark::call`].
    Call {
        name: String,
        input: String,
        caller: Caller,
        rev: Option<u64>,
    },
    /// [`Toolmark::call_held`]: a page call held through a confirmation
    /// (WebMCP's `execute`).
    HeldCall {
        name: String,
        input: String,
        caller: Caller,
    },
    /// [`Toolmark::page_call`].
    PageCall { name: String, call: PageCall },
    /// [`Toolmark::abort`].
    Abort(Handle),
    /// [`Toolmark::confirm`].
    Confirm { confirm_id: String, approve: bool },
    /// [`Toolmark::undo`].
    Undo(String),
    /// [`Toolmark::handle_outcome`].
    Outcome(RunId, Outcome),
    /// [`Toolmark::handle_snapshot_taken`]: whether the snapshot returned
    /// a restorer.
    SnapshotTaken { run: RunId, restorer: bool },
    /// [`Toolmark::handle_tool_gone`].
    ToolGone(RunId),
    /// [`Toolmark::handle_output_checked`].
    OutputChecked(RunId, Result<Vec<Issue>, String>),
    /// [`Toolmark::handle_validated`].
    Validated(RunId, Validated),
    /// [`Toolmark::handle_prepared`].
    Prepared(RunId, Result<Prepared, Unprepared>),
    /// [`Toolmark::handle_state`].
    State(RunId, Result<Option<String>, String>),
    /// [`Toolmark::handle_restored`].
    Restored(RunId, Result<(), String>),
    /// [`Toolmark::ctx_confirm`].
    CtxConfirm(RunId),
    /// [`Toolmark::ctx_confirmed`]: the person's answer, `Some` for a
    /// boolean.
    CtxConfirmed { run: RunId, answer: Option<bool> },
    /// [`Toolmark::handle_failure`].
    Failure {
        code: ErrorEventCode,
        message: String,
        tool: Option<String>,
    },
    /// [`Toolmark::handle_transport_status`].
    TransportStatus(BridgeId, Status),
    /// [`Toolmark::handle_unreadable_status`].
    UnreadableStatus(BridgeId),
    /// [`Toolmark::handle_timeout`] at the input's time.
    Timeout,
}

/// What the method an [`Input`] stands for returned.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    None,
    Registered(Result<Option<ToolKey>, ToolmarkError>),
    ScopeCreated(Result<ScopeMade, ToolmarkError>),
    /// The keys of the tools the disposal removed.
    Disposed(Result<Vec<ToolKey>, ToolmarkError>),
    Bridge(BridgeId),
    Handle(Handle),
    /// [`Toolmark::ctx_confirm`]'s answer (the run may ask), and
    /// [`Toolmark::ctx_confirmed`]'s (the answer approves).
    Inline(bool),
    /// [`Toolmark::handle_snapshot_taken`]'s answer: the run goes on.
    GoesOn(bool),
}

impl Toolmark {
    /// `input` at time `now` (ms): the same as calling its method. Drain
    /// [`Toolmark::poll_output`] afterwards, as after any input.
    pub fn handle_input(&mut self, input: Input, now: u64) -> Reply {
        match input {
            Input::Register { scope, def } => Reply::Registered(self.register(scope, *def, now)),
            Input::Unregister(key) => {
                self.unregister(key, now);
                Reply::None
            }
            Input::CreateScope { parent, name } => {
                Reply::ScopeCreated(self.create_scope(parent, &name))
            }
            Input::DisposeScope(scope) => Reply::Disposed(self.dispose_scope(scope, now)),
            Input::Attach(options) => Reply::Bridge(self.attach(options)),
            Input::Detach(bridge) => {
                self.detach(bridge, now);
                Reply::None
            }
            Input::Inbound { bridge, text } => {
                self.handle_inbound(bridge, &text, now);
                Reply::None
            }
            Input::InboundFrame { bridge, text } => {
                self.handle_inbound_frame(bridge, &text, now);
                Reply::None
            }
            Input::InboundNotJson(bridge) => {
                self.handle_inbound_not_json(bridge);
                Reply::None
            }
            Input::InboundUnread { bridge, units } => {
                self.handle_inbound_unread(bridge, units);
                Reply::None
            }
            Input::Call {
                name,
                input,
                caller,
                rev,
            } => Reply::Handle(self.call(&name, &input, caller, rev, now)),
            Input::HeldCall {
                name,
                input,
                caller,
            } => Reply::Handle(self.call_held(&name, &input, caller, now)),
            Input::PageCall { name, call } => Reply::Handle(self.page_call(&name, &call, now)),
            Input::Abort(handle) => {
                self.abort(handle, now);
                Reply::None
            }
            Input::Confirm {
                confirm_id,
                approve,
            } => Reply::Handle(self.confirm(&confirm_id, approve, now)),
            Input::Undo(call_id) => Reply::Handle(self.undo(&call_id)),
            Input::Outcome(run, outcome) => {
                self.handle_outcome(run, outcome, now);
                Reply::None
            }
            Input::SnapshotTaken { run, restorer } => {
                Reply::GoesOn(self.handle_snapshot_taken(run, restorer, now))
            }
            Input::ToolGone(run) => {
                self.handle_tool_gone(run, now);
                Reply::None
            }
            Input::OutputChecked(run, checked) => {
                self.handle_output_checked(run, checked);
                Reply::None
            }
            Input::Validated(run, validated) => {
                self.handle_validated(run, validated, now);
                Reply::None
            }
            Input::Prepared(run, prepared) => {
                self.handle_prepared(run, prepared, now);
                Reply::None
            }
            Input::State(run, state) => {
                self.handle_state(run, state, now);
                Reply::None
            }
            Input::Restored(run, restored) => {
                self.handle_restored(run, restored);
                Reply::None
            }
            Input::CtxConfirm(run) => Reply::Inline(self.ctx_confirm(run).is_some()),
            Input::CtxConfirmed { run, answer } => Reply::Inline(self.ctx_confirmed(run, answer)),
            Input::Failure {
                code,
                message,
                tool,
            } => {
                self.handle_failure(code, message, tool);
                Reply::None
            }
            Input::TransportStatus(bridge, status) => {
                self.handle_transport_status(bridge, status);
                Reply::None
            }
            Input::UnreadableStatus(bridge) => {
                self.handle_unreadable_status(bridge);
                Reply::None
            }
            Input::Timeout => {
                self.handle_timeout(now);
                Reply::None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::RandomSource;
    use crate::machine::{Config, Output};
    use crate::schema::pattern::LinearPatterns;

    struct Counter(u8);

    impl RandomSource for Counter {
        fn fill(&mut self, buf: &mut [u8]) -> Result<(), crate::ids::RandomError> {
            for byte in buf {
                self.0 = self.0.wrapping_add(1);
                *byte = self.0;
            }
            Ok(())
        }
    }

    fn core() -> Toolmark {
        Toolmark::new(
            Config::default(),
            Box::new(Counter(0)),
            Box::new(LinearPatterns::new()),
        )
        .unwrap()
    }

    fn drain(tm: &mut Toolmark) -> Vec<Output> {
        let mut out = Vec::new();
        loop {
            match tm.poll_output() {
                Output::Timeout(_) => return out,
                output => out.push(output),
            }
        }
    }

    #[test]
    fn an_input_does_what_its_method_does_and_returns_what_it_returns() {
        let (mut by_input, mut by_method) = (core(), core());
        let def = || ToolDef::new("echo", "Echoes");
        let registered = by_input.handle_input(
            Input::Register {
                scope: ScopeId::ROOT,
                def: Box::new(def()),
            },
            5,
        );
        assert_eq!(
            registered,
            Reply::Registered(by_method.register(ScopeId::ROOT, def(), 5))
        );
        let options = BridgeOptions::default();
        assert_eq!(
            by_input.handle_input(Input::Attach(options), 6),
            Reply::Bridge(by_method.attach(options))
        );
        let call = Input::Call {
            name: String::from("echo"),
            input: String::from("{}"),
            caller: Caller::Human,
            rev: None,
        };
        assert_eq!(
            by_input.handle_input(call, 7),
            Reply::Handle(by_method.call("echo", "{}", Caller::Human, None, 7))
        );
        let scope = by_input.handle_input(
            Input::CreateScope {
                parent: ScopeId::ROOT,
                name: String::from("s"),
            },
            8,
        );
        assert_eq!(
            scope,
            Reply::ScopeCreated(by_method.create_scope(ScopeId::ROOT, "s"))
        );
        assert_eq!(by_input.handle_input(Input::Timeout, 9), Reply::None);
        by_method.handle_timeout(9);
        assert_eq!(drain(&mut by_input), drain(&mut by_method));
        assert_eq!(by_input.rev(), by_method.rev());
    }
}
