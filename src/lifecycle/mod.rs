//! A call's lifecycle, owned in one place: `CallLife` holds the calls in
//! flight ([`calls`]), the per-scope lanes ([`crate::lanes`]), the pending
//! deferred confirmations and the undo store ([`confirmations`]), and the
//! page requests' handles. It decides every move of a call, from its
//! admission to its one answer, and what a confirmation, an expiry or an
//! undo does.
//!
//! It never sees the machine: each input lends it the `Env`, what it
//! reads (the registry, the policy, the settings, the randomness and the
//! pattern matcher) and where its effects go (the bridges, for the
//! answered-id memory and who is attached; the output queues).

pub mod calls;
pub mod confirmations;

use crate::bridges::{BridgeId, Bridges, IdKey};
use crate::ids::RandomSource;
use crate::lanes::Lanes;
use crate::outputs::{Handle, Outputs};
use crate::policy::Policy;
use crate::prelude::*;
use crate::protocol::{PageToAgent, ProtocolV1, RefusedCode, ResultMessage, ToolResult};
use crate::registry::{Registry, ScopeId};
use crate::schema::PatternMatcher;
use calls::Calls;
use confirmations::{Confirmations, UndoStore};

/// The options of `createToolmark` that the lifecycle reads.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Settings {
    /// Dev mode: JSON Schema outputs are checked.
    pub(crate) dev: bool,
    pub(crate) confirm_expiry_ms: u64,
    pub(crate) abort_grace_ms: u64,
    /// The page gave an inline confirmation handler (for `ctx.confirm` by a human).
    pub(crate) inline_confirm: bool,
}

/// The rest of the machine, as the lifecycle sees it: the machine owns it
/// beside its [`CallLife`] and lends it to every input. (Owned: a set of
/// borrows built per input would add about 1 KB gzip to the shipped
/// module.)
pub(crate) struct Env {
    pub(crate) registry: Registry,
    pub(crate) policy: Policy,
    pub(crate) settings: Settings,
    pub(crate) rng: Box<dyn RandomSource>,
    pub(crate) matcher: Box<dyn PatternMatcher>,
    pub(crate) bridges: Bridges,
    pub(crate) out: Outputs,
}

impl Env {
    /// A refusal at the current revision.
    pub(crate) fn refused(&self, code: RefusedCode, message: &str) -> ToolResult {
        ToolResult::refused(code, message, self.registry.rev())
    }

    /// Queues a message for a bridge still attached.
    pub(crate) fn send(&mut self, bridge: BridgeId, message: PageToAgent) {
        if self.bridges.contains(bridge) {
            self.out.transmit(bridge, message.into_json());
        }
    }

    /// Answers a bridge's message (a call, a `describe`, an unsupported
    /// protocol) and remembers its id as answered (rule 2).
    pub(crate) fn answer_bridge(&mut self, bridge: BridgeId, id: &str, result: ToolResult) {
        self.bridges.answered(id);
        let message = PageToAgent::Result(ResultMessage {
            protocol: ProtocolV1,
            client_id: self.bridges.client_id().to_owned(),
            id: id.to_owned(),
            result,
        });
        self.send(bridge, message);
    }
}

/// The calls in flight, their lanes, the pending confirmations, the undo
/// store and the page requests' handles.
#[derive(Debug, Default)]
pub(crate) struct CallLife {
    calls: Calls,
    lanes: Lanes,
    confirmations: Confirmations,
    undo: UndoStore,
    next_handle: u64,
}

impl CallLife {
    fn new_handle(&mut self) -> Handle {
        let handle = Handle(self.next_handle);
        self.next_handle += 1;
        handle
    }

    /// Calls in flight (queued, or with JS).
    pub(crate) fn calls_in_flight(&self) -> usize {
        self.calls.len()
    }

    pub(crate) fn pending_confirmation_count(&self) -> usize {
        self.confirmations.len()
    }

    /// Bytes of input text held by the calls in flight and the pending
    /// confirmations (bounded by [`crate::lanes::MAX_HELD_INPUT_BYTES`]).
    pub(crate) fn held_input_bytes(&self) -> usize {
        self.calls.input_bytes() + self.confirmations.input_bytes()
    }

    /// The most pending calls on any one scope.
    pub(crate) fn max_pending_per_scope(&self) -> usize {
        self.lanes.max_pending()
    }

    /// Pending calls on a scope: queued plus active (rule 5's count).
    pub(crate) fn scope_pending(&self, scope: ScopeId) -> usize {
        self.lanes.pending(scope)
    }

    /// Rule 2's in-flight half for a plain id.
    pub(crate) fn is_call_in_flight(&self, id: &str) -> bool {
        self.calls.is_in_flight_from_a_bridge(id)
    }

    /// Rule 2, per page: in flight on any of its bridges, or among the
    /// page's last 1000 answered ids. (Two bridges receiving one call: the
    /// first delivery runs and is answered on its bridge, the second is a
    /// duplicate; an answered id stays one after its bridge detached.)
    pub(crate) fn is_duplicate(&self, bridges: &Bridges, id: &str) -> bool {
        // One key for both lookups: a long id's is a SHA-256 digest.
        let key = IdKey::of(id);
        bridges.was_answered(&key) || self.calls.in_flight_from_a_bridge(&key)
    }

    /// The earliest confirmation expiry or end of an abort grace period.
    pub(crate) fn next_deadline(&self) -> Option<u64> {
        match (self.confirmations.next_expiry(), self.calls.next_deadline()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Whether an aborted run is in its grace period.
    pub(crate) fn awaits_grace(&self) -> bool {
        self.calls.next_deadline().is_some()
    }

    /// Deadlines: expired confirmations, and aborted runs out of grace.
    pub(crate) fn handle_timeout(&mut self, env: &mut Env, now: u64) {
        self.expire_due(env, now);
        self.abandon_out_of_grace(env, now);
    }

    /// `cancel` from a bridge: the call it names, if still in flight there.
    pub(crate) fn cancel_from_bridge(
        &mut self,
        env: &mut Env,
        bridge: BridgeId,
        id: &str,
        now: u64,
    ) {
        if let Some(key) = self.calls.by_bridge_id(bridge, id) {
            self.cancel_call(env, key, now);
        }
    }
}
