//! What the machine hands out, queued in the order it happened: messages
//! to send, events for the page, work for JS. [`Outputs::pop`] hands them
//! out in the documented drain order (see [`crate::machine`]).

use crate::vecmap::Queue;
use serde::Serialize;

use crate::bridges::BridgeId;
use crate::given::Given;
use crate::policy::Caller;
use crate::prelude::*;
use crate::protocol::{ErrorEventCode, ToolResult};
use crate::registry::ToolKey;
use crate::transport::status::Status;

/// One piece of work handed to JS; its answer names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct RunId(pub u64);

/// A page-side request (`tm.call`, `tm.confirmPending`, `tm.undo`), completed
/// by [`Event::Completed`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct Handle(pub u64);

/// A value JS keeps from a validation run (a Standard Schema's live value,
/// e.g. a `Date`) for a call's run. It can be neither copied nor cloned,
/// and only the crate makes one, so each ends in one place: the
/// [`Action::Run`] that uses it or the [`Action::ForgetValidated`] that
/// says no run will.
#[derive(Debug, PartialEq, Eq)]
pub struct KeptValue(RunId);

impl KeptValue {
    /// JS keeps the value that validation run `run` answered with.
    pub(crate) fn kept_by(run: RunId) -> KeptValue {
        KeptValue(run)
    }

    /// The validation run it is kept under, for an [`Action::Prepare`]
    /// (the value stays kept).
    pub fn run(&self) -> RunId {
        self.0
    }

    /// A run uses it up: the validation run its [`Action::Run`] names.
    pub(crate) fn used(self) -> RunId {
        self.0
    }
}

/// A tool run to start: call the tool's `run(input, ctx)`; take its
/// `snapshot(input)` first when asked, and keep the restorer under `run`
/// (`call_id` is `ctx.callId`: runs can share it, see
/// [`UndoStore`](crate::lifecycle::confirmations::UndoStore)). With
/// `validated`, the input is the value JS kept from that validation run (a
/// Standard Schema's live value, e.g. a `Date`), used and forgotten;
/// `input` is its JSON copy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunOrder {
    pub run: RunId,
    pub tool: ToolKey,
    /// The tool's full name.
    pub name: String,
    pub input: String,
    pub caller: Caller,
    pub call_id: String,
    pub snapshot: bool,
    /// Check the output with the tool's Standard Schema and answer
    /// [`Toolmark::handle_output_checked`](crate::machine::Toolmark::handle_output_checked)
    /// before the outcome: in dev mode, for such an output schema (a JSON
    /// Schema output is checked by the core itself).
    pub check_output: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub validated: Option<RunId>,
}

/// What a confirmation shows, to compute: the tool's `summary`, `changes`
/// and form state, as asked; answer with
/// [`Toolmark::handle_prepared`](crate::machine::Toolmark::handle_prepared).
/// `validated` as in [`RunOrder`], but the value stays kept.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PrepareOrder {
    pub run: RunId,
    pub tool: ToolKey,
    pub input: String,
    pub summary: bool,
    pub changes: bool,
    pub state: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub validated: Option<RunId>,
}

/// Work for JS. As JSON (the glue's): `{kind, …}`, the fields camelCase.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(
    tag = "kind",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum Action {
    /// Call the tool's `run(input, ctx)` ([`RunOrder`]).
    Run(RunOrder),
    /// Validate the input with the tool's Standard Schema; answer with
    /// [`Toolmark::handle_validated`](crate::machine::Toolmark::handle_validated).
    Validate {
        run: RunId,
        tool: ToolKey,
        input: String,
    },
    /// Compute what a confirmation shows ([`PrepareOrder`]).
    Prepare(PrepareOrder),
    /// Read the form state again at approval; answer with [`Toolmark::handle_state`](crate::machine::Toolmark::handle_state).
    ReadState {
        run: RunId,
        tool: ToolKey,
        input: String,
    },
    /// Abort the run's `AbortSignal`.
    Abort { run: RunId },
    /// Run the restorer kept for run `restorer`; answer with
    /// [`Toolmark::handle_restored`](crate::machine::Toolmark::handle_restored) for `run`.
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
    /// A bridge's transport reported a new connection state.
    Status { bridge: BridgeId, status: Status },
}

/// The events `tm.events.on(name, listener)` subscribes to: the error
/// events and the transports' states of [`Event`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Topic {
    Error,
    Status,
}

impl Topic {
    /// `'error'` or `'status'`; `None` for anything else ([`Topic::unknown`]).
    pub fn named(given: &Given) -> Option<Topic> {
        match given {
            Given::Text(name) if name == "error" => Some(Topic::Error),
            Given::Text(name) if name == "status" => Some(Topic::Status),
            _ => None,
        }
    }

    /// The message refusing an event name, shown as `String(name)`.
    pub fn unknown(shown: &str) -> String {
        format!("events.on: unknown event '{shown}' (known: 'error', 'status')")
    }
}

/// A page listener given to `method` (`subscribePending`, `events.on`):
/// refused unless it is a function, with this message (`shown`: the value
/// as `String(value)`, asked for only then).
pub fn check_listener(
    method: &str,
    listener: &Given,
    shown: impl FnOnce() -> String,
) -> Result<(), String> {
    match listener {
        Given::Function => Ok(()),
        _ => Err(format!(
            "{method}: listener must be a function (got {})",
            shown()
        )),
    }
}

/// A message to send on a bridge's transport.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transmit {
    pub bridge: BridgeId,
    pub text: String,
}

/// One output of [`Toolmark::poll_output`](crate::machine::Toolmark::poll_output),
/// in the drain order: every queued `Transmit`, then every `Event`, then
/// every `Action`; `Timeout` (the next deadline, if any) when none is left.
#[derive(Debug, Clone, PartialEq)]
pub enum Output {
    Transmit(Transmit),
    Event(Event),
    Action(Action),
    /// Nothing else is queued; call
    /// [`Toolmark::handle_timeout`](crate::machine::Toolmark::handle_timeout)
    /// at this time (ms), if any.
    Timeout(Option<u64>),
}

/// The three output queues.
#[derive(Debug, Default)]
pub struct Outputs {
    transmits: Queue<Transmit>,
    events: Queue<Event>,
    actions: Queue<Action>,
}

impl Outputs {
    pub fn transmit(&mut self, bridge: BridgeId, text: String) {
        self.transmits.push_back(Transmit { bridge, text });
    }

    pub fn event(&mut self, event: Event) {
        self.events.push_back(event);
    }

    pub fn error(&mut self, code: ErrorEventCode, message: String, tool: Option<String>) {
        self.event(Event::Error {
            code,
            message,
            tool,
        });
    }

    /// A page request finished.
    pub fn complete(&mut self, handle: Handle, result: ToolResult) {
        self.event(Event::Completed { handle, result });
    }

    pub fn action(&mut self, action: Action) {
        self.actions.push_back(action);
    }

    /// JS forgets the value it kept, if any.
    pub fn forget_validated(&mut self, kept: Option<KeptValue>) {
        if let Some(KeptValue(run)) = kept {
            self.action(Action::ForgetValidated { run });
        }
    }

    /// The next output in the drain order: a message before any event,
    /// an event before any action. `None` when all three queues are empty.
    pub fn pop(&mut self) -> Option<Output> {
        if let Some(transmit) = self.transmits.pop_front() {
            return Some(Output::Transmit(transmit));
        }
        if let Some(event) = self.events.pop_front() {
            return Some(Output::Event(event));
        }
        self.actions.pop_front().map(Output::Action)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_listener_is_a_function() {
        let shown = || String::from("42");
        assert_eq!(check_listener("events.on", &Given::Function, shown), Ok(()));
        for given in [
            Given::Number(42.0),
            Given::Null,
            Given::Undefined,
            Given::Object,
        ] {
            assert_eq!(
                check_listener("subscribePending", &given, shown),
                Err(String::from(
                    "subscribePending: listener must be a function (got 42)"
                ))
            );
        }
    }

    #[test]
    fn the_events_are_error_and_status_by_name_only() {
        let text = |name: &str| Given::Text(String::from(name));
        assert_eq!(Topic::named(&text("error")), Some(Topic::Error));
        assert_eq!(Topic::named(&text("status")), Some(Topic::Status));
        for other in [
            text("Error"),
            text("errors"),
            text(""),
            text("pending"),
            Given::Undefined,
            Given::Other,
        ] {
            assert_eq!(Topic::named(&other), None, "{other:?}");
        }
        assert_eq!(
            Topic::unknown("pending"),
            "events.on: unknown event 'pending' (known: 'error', 'status')"
        );
    }

    fn close(bridge: u32) -> Action {
        Action::Close {
            bridge: BridgeId(bridge),
        }
    }

    #[test]
    fn each_queue_is_first_in_first_out() {
        let mut out = Outputs::default();
        out.transmit(BridgeId(0), "a".into());
        out.transmit(BridgeId(1), "b".into());
        out.event(Event::PendingChanged);
        out.complete(Handle(3), ToolResult::Ok { data: None });
        out.forget_validated(None);
        out.forget_validated(Some(KeptValue::kept_by(RunId(4))));
        out.action(close(0));
        for text in ["a", "b"] {
            assert!(matches!(out.pop(), Some(Output::Transmit(t)) if t.text == text));
        }
        assert_eq!(out.pop(), Some(Output::Event(Event::PendingChanged)));
        assert!(matches!(
            out.pop(),
            Some(Output::Event(Event::Completed { .. }))
        ));
        assert_eq!(
            out.pop(),
            Some(Output::Action(Action::ForgetValidated { run: RunId(4) }))
        );
        assert_eq!(out.pop(), Some(Output::Action(close(0))));
        assert_eq!(out.pop(), None);
    }

    #[test]
    fn messages_come_before_events_and_events_before_actions() {
        // Queued in the opposite order: the drain order is not arrival order.
        let mut out = Outputs::default();
        out.action(close(1));
        out.event(Event::RevChanged { rev: 1 });
        out.transmit(BridgeId(1), "m1".into());
        out.action(close(2));
        out.event(Event::PendingChanged);
        out.transmit(BridgeId(2), "m2".into());
        let kinds: Vec<String> = core::iter::from_fn(|| out.pop())
            .map(|output| match output {
                Output::Transmit(t) => t.text,
                Output::Event(Event::RevChanged { .. }) => "rev".into(),
                Output::Event(_) => "event".into(),
                Output::Action(Action::Close { bridge }) => format!("close {}", bridge.0),
                other => format!("{other:?}"),
            })
            .collect();
        assert_eq!(kinds, ["m1", "m2", "rev", "event", "close 1", "close 2"]);
    }

    #[test]
    fn a_message_queued_between_polls_overtakes_queued_events() {
        let mut out = Outputs::default();
        out.event(Event::PendingChanged);
        out.action(close(0));
        assert_eq!(out.pop(), Some(Output::Event(Event::PendingChanged)));
        // A page callback reacting to that event caused a message.
        out.transmit(BridgeId(0), "late".into());
        assert!(matches!(out.pop(), Some(Output::Transmit(t)) if t.text == "late"));
        assert_eq!(out.pop(), Some(Output::Action(close(0))));
    }

    #[test]
    fn actions_serialize_as_the_glue_reads_them() {
        let text = serde_json::to_string(&Action::Restore {
            run: RunId(1),
            restorer: RunId(2),
        });
        assert_eq!(
            text.ok().as_deref(),
            Some(r#"{"kind":"restore","run":1,"restorer":2}"#)
        );
    }
}
