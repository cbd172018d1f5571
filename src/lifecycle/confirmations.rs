//! Deferred confirmations (at most [`MAX_PENDING_CONFIRMATIONS`] per page,
//! oldest expired first; expiry) and the undo store (the last
//! [`UNDO_STORE`] restorers, and those running for `tm.undo`). The `impl
//! CallLife` below asks for a confirmation, answers an approval or a
//! rejection, expires confirmations and runs restorers.

use crate::vecmap::Queue;

use super::calls::{Admitted, Approval, Calls, NewCall, Origin, Prepared, Requester};
use super::{CallLife, Env};
use crate::bridges::{BridgeId, IdKey};
use crate::ids::new_id;
use crate::lanes::CallKey;
use crate::outputs::{Action, Event, Handle, KeptValue, RunId};
use crate::policy::Caller;
use crate::prelude::*;
use crate::protocol::codes::{error_message, refused_message};
use crate::protocol::{
    CancelledBy, Confirmed, ErrorEventCode, FieldChange, JsonText, PageToAgent, ProtocolV1,
    RefusedCode, ToolResult,
};
use crate::registry::ToolKey;
use serde::Serialize;

/// Spec: at most 100 pending deferred confirmations per page.
pub const MAX_PENDING_CONFIRMATIONS: usize = 100;
/// Spec: default expiry of a deferred confirmation.
pub const DEFAULT_CONFIRM_EXPIRY_MS: u64 = 600_000;
/// The undo store keeps the last 100 restorers.
pub const UNDO_STORE: usize = 100;

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

/// A pending deferred confirmation.
#[derive(Debug, PartialEq)]
pub struct Confirmation {
    pub confirm_id: String,
    pub tool: ToolKey,
    pub tool_name: String,
    /// The call id of the requesting call (the restorer of the approved run
    /// is kept under it).
    pub call_id: String,
    pub input: JsonText,
    pub summary: String,
    pub changes: Option<Vec<FieldChange>>,
    /// The form state read at request time, compared at approval.
    pub state: Option<String>,
    pub requester: Requester,
    pub expires_at: u64,
    /// The value JS keeps for the approved run; JS is told to forget it
    /// when the confirmation ends otherwise.
    pub kept: Option<KeptValue>,
}

/// Pending confirmations in creation order.
#[derive(Debug, Default)]
pub struct Confirmations {
    pending: Queue<Confirmation>,
}

impl Confirmations {
    /// Adds one; when 100 are already pending, the oldest is returned to be expired.
    pub fn add(&mut self, confirmation: Confirmation) -> Option<Confirmation> {
        let evicted = if self.pending.len() >= MAX_PENDING_CONFIRMATIONS {
            self.pending.pop_front()
        } else {
            None
        };
        self.pending.push_back(confirmation);
        evicted
    }

    /// A pending confirmation, left in place.
    pub fn get(&self, confirm_id: &str) -> Option<&Confirmation> {
        self.pending.iter().find(|c| c.confirm_id == confirm_id)
    }

    /// Takes a pending confirmation out (single use).
    pub fn take(&mut self, confirm_id: &str) -> Option<Confirmation> {
        let index = self
            .pending
            .iter()
            .position(|c| c.confirm_id == confirm_id)?;
        self.pending.remove(index)
    }

    /// Takes out the oldest confirmation expired at `now`, if any (called
    /// until `None`, it takes them all in creation order).
    pub fn take_expired(&mut self, now: u64) -> Option<Confirmation> {
        let index = self.pending.iter().position(|c| c.expires_at <= now)?;
        self.pending.remove(index)
    }

    pub fn next_expiry(&self) -> Option<u64> {
        let mut next = None;
        for c in self.pending.iter() {
            next = Some(next.map_or(c.expires_at, |n: u64| n.min(c.expires_at)));
        }
        next
    }

    pub fn iter(&self) -> impl Iterator<Item = &Confirmation> {
        self.pending.iter()
    }

    pub fn len(&self) -> usize {
        self.pending.len()
    }

    /// Bytes of the input texts the pending confirmations hold.
    pub fn input_bytes(&self) -> usize {
        self.pending.iter().map(|c| c.input.len()).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.pending.is_empty()
    }
}

/// The undo store: which run's restorer JS keeps for a call id, the last
/// [`UNDO_STORE`] of them. JS keeps restorers by run (unique per page), so
/// two runs under one call id (a replay once the id left the answered-id
/// memory, an approved run) never drop or replace each other's restorer;
/// `tm.undo(callId)` takes the latest run kept under that id.
#[derive(Debug, Default)]
pub struct UndoStore {
    /// (call id, the run whose restorer JS keeps), oldest first.
    kept: Queue<(IdKey, RunId)>,
    /// Restorers running for `tm.undo`: (run, its request, the call id).
    running: Vec<(RunId, Handle, String)>,
}

impl UndoStore {
    /// Keeps `run`'s restorer under `call_id`; returns the runs whose
    /// restorers JS should drop: one replaced under the same call id, the
    /// oldest when the store is full.
    pub fn insert(&mut self, call_id: &str, run: RunId) -> Vec<RunId> {
        let key = IdKey::of(call_id);
        let mut dropped = Vec::new();
        if let Some(index) = self.kept.iter().position(|(k, _)| *k == key) {
            dropped.extend(self.kept.remove(index).map(|(_, run)| run));
        }
        if self.kept.len() >= UNDO_STORE {
            dropped.extend(self.kept.pop_front().map(|(_, run)| run));
        }
        self.kept.push_back((key, run));
        dropped
    }

    /// Takes out the run whose restorer is kept under `call_id` (single use).
    pub fn take(&mut self, call_id: &str) -> Option<RunId> {
        let key = IdKey::of(call_id);
        let index = self.kept.iter().position(|(k, _)| *k == key)?;
        self.kept.remove(index).map(|(_, run)| run)
    }

    /// A restorer starts running for a `tm.undo` request.
    pub fn restoring(&mut self, run: RunId, handle: Handle, call_id: String) {
        self.running.push((run, handle, call_id));
    }

    /// The restorer run `run` finished: its request and call id.
    pub fn restored(&mut self, run: RunId) -> Option<(Handle, String)> {
        let index = self.running.iter().position(|(r, _, _)| *r == run)?;
        let (_, handle, call_id) = self.running.swap_remove(index);
        Some((handle, call_id))
    }

    pub fn len(&self) -> usize {
        self.kept.len()
    }

    pub fn is_empty(&self) -> bool {
        self.kept.is_empty()
    }
}

/// FieldChange redaction by the tool's declared paths: a change at or below
/// one is hidden whole, and one above it (a change at `card` for
/// `card.number`) has that member hidden inside its value.
fn redact(changes: Vec<FieldChange>, sensitive: &[String]) -> Vec<FieldChange> {
    crate::forms::redact_changes(changes, sensitive)
}

impl CallLife {
    /// The pending confirmations as the page shows them.
    pub(crate) fn pending_confirmations(&self) -> Vec<PendingView> {
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

    /// Step 1 of deferred confirmation: store it and answer `needs_confirmation`.
    pub(crate) fn request_confirmation(
        &mut self,
        env: &mut Env,
        key: CallKey,
        prepared: Prepared,
        now: u64,
    ) {
        let Some(call) = self.calls.get(key) else {
            return;
        };
        let Some(tool) = env.registry.by_key(call.admitted.tool) else {
            return self.finish(env, key, env.missing_tool(call.admitted.rev), now);
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
        let requester = match call.admitted.origin {
            Origin::Bridge(bridge) => Requester::Bridge(bridge.0),
            Origin::Local(_) => Requester::Local,
            Origin::Held(handle) => Requester::Waiting(handle),
        };
        let held = matches!(requester, Requester::Waiting(_));
        let (tool_key, tool_name, call_id, input) = (
            call.admitted.tool,
            tool.name.clone(),
            call.admitted.call_id.clone(),
            Calls::input(call),
        );
        let confirm_id = match new_id(env.rng.as_mut()) {
            Ok(id) => id,
            Err(error) => {
                env.out
                    .error(ErrorEventCode::ToolThrew, error.message(), Some(tool_name));
                return self.finish(env, key, ToolResult::error(error_message::TOOL_FAILED), now);
            }
        };
        // The kept value passes to the confirmation, for the approved run.
        let kept = self.calls.get_mut(key).and_then(|call| call.kept.take());
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
            expires_at: now.saturating_add(env.settings.confirm_expiry_ms),
            kept,
        });
        if let Some(evicted) = evicted {
            self.expire(env, evicted);
        }
        if held {
            // The request stays open; the lane is free for the next call.
            if self.remove_call(env, key).is_some() {
                self.pump(env, now);
            }
        } else {
            self.finish(
                env,
                key,
                ToolResult::NeedsConfirmation {
                    confirm_id,
                    summary,
                    changes,
                },
                now,
            );
        }
        env.out.event(Event::PendingChanged);
    }

    /// A held request aborted while its confirmation is pending: the
    /// confirmation goes (nobody waits for it) and the request completes
    /// `cancelled signal`.
    pub(crate) fn abort_held_confirmation(&mut self, env: &mut Env, handle: Handle) {
        let waiting = Requester::Waiting(handle);
        let Some(confirm_id) = self
            .confirmations
            .iter()
            .find(|c| c.requester == waiting)
            .map(|c| c.confirm_id.clone())
        else {
            return;
        };
        if let Some(confirmation) = self.confirmations.take(&confirm_id) {
            env.out.forget_validated(confirmation.kept);
            env.out.complete(
                handle,
                ToolResult::Cancelled {
                    by: CancelledBy::Signal,
                },
            );
            env.out.event(Event::PendingChanged);
        }
    }

    /// A confirmation expired, was evicted: its requester hears `confirmation_expired`.
    pub(crate) fn expire(&mut self, env: &mut Env, confirmation: Confirmation) {
        env.out.forget_validated(confirmation.kept);
        let result = env.refused(
            RefusedCode::ConfirmationExpired,
            refused_message::CONFIRMATION_EXPIRED,
        );
        env.send_confirmed(&confirmation.requester, &confirmation.confirm_id, result);
    }

    /// A human's decision: an approved run is queued like any call; any
    /// other end is the requester's answer at once.
    pub(crate) fn confirm(
        &mut self,
        env: &mut Env,
        confirm_id: &str,
        approve: bool,
        now: u64,
    ) -> Handle {
        let handle = self.new_handle();
        // A late timer must not let an expired confirmation through.
        self.expire_due(env, now);
        // Rule 5 holds for approved runs too. A busy scope refuses the
        // approval but keeps the confirmation pending: the human can retry.
        let busy_scope = self
            .confirmations
            .get(confirm_id)
            .and_then(|c| env.registry.by_key(c.tool))
            .is_some_and(|t| self.lanes.is_busy(t.scope));
        if approve && busy_scope {
            let result = env.refused(
                RefusedCode::Busy,
                "The tool's scope already has 32 pending calls; the confirmation is still pending",
            );
            env.out.complete(handle, result);
            return handle;
        }
        let Some(confirmation) = self.confirmations.take(confirm_id) else {
            let result = env.refused(
                RefusedCode::ConfirmationExpired,
                refused_message::CONFIRMATION_EXPIRED,
            );
            env.out.complete(handle, result);
            return handle;
        };
        env.out.event(Event::PendingChanged);
        let scope = env.registry.by_key(confirmation.tool).map(|t| t.scope);
        let result = match scope {
            Some(scope) if approve => {
                // The approved run waits its turn on the scope like any call.
                self.enqueue(NewCall {
                    admitted: Admitted {
                        origin: Origin::Local(handle),
                        tool: confirmation.tool,
                        tool_name: confirmation.tool_name,
                        scope,
                        caller: Caller::Human,
                        call_id: confirmation.call_id,
                        rev: None,
                    },
                    input: confirmation.input,
                    approval: Some(Approval {
                        confirm_id: confirmation.confirm_id,
                        requester: confirmation.requester,
                        state: confirmation.state,
                    }),
                    kept: confirmation.kept,
                });
                self.pump(env, now);
                return handle;
            }
            // Declined.
            _ if !approve => ToolResult::Cancelled {
                by: CancelledBy::Operator,
            },
            // Approved, but the tool was unregistered meanwhile.
            _ => env.gone_since_confirmation(),
        };
        // Not run: the answer goes to the requesting bridge too.
        env.out.forget_validated(confirmation.kept);
        env.send_confirmed(&confirmation.requester, confirm_id, result.clone());
        env.out.complete(handle, result);
        handle
    }

    /// Runs the restorer kept under a call id, or refuses `undo_unavailable`.
    pub(crate) fn undo(&mut self, env: &mut Env, call_id: &str) -> Handle {
        let handle = self.new_handle();
        if let Some(restorer) = self.undo.take(call_id) {
            let run = self.calls.new_run();
            self.undo.restoring(run, handle, call_id.to_owned());
            env.out.action(Action::Restore { run, restorer });
        } else {
            let result = env.refused(
                RefusedCode::UndoUnavailable,
                "No restorer for this call (never registered, already used or evicted)",
            );
            env.out.complete(handle, result);
        }
        handle
    }

    /// A restorer finished: its `tm.undo` request completes.
    pub(crate) fn handle_restored(
        &mut self,
        env: &mut Env,
        run: RunId,
        restored: Result<(), String>,
    ) {
        let Some((handle, call_id)) = self.undo.restored(run) else {
            return;
        };
        let result = match restored {
            Ok(()) => ToolResult::Ok { data: None },
            Err(detail) => {
                env.out.error(
                    ErrorEventCode::ToolThrew,
                    format!("restorer of call {call_id} threw: {detail}"),
                    None,
                );
                ToolResult::error(error_message::TOOL_FAILED)
            }
        };
        env.out.complete(handle, result);
    }
    /// Confirmations expired at `now` are taken out and reported.
    pub(crate) fn expire_due(&mut self, env: &mut Env, now: u64) {
        let mut expired_any = false;
        while let Some(confirmation) = self.confirmations.take_expired(now) {
            self.expire(env, confirmation);
            expired_any = true;
        }
        if expired_any {
            env.out.event(Event::PendingChanged);
        }
    }
}

impl Env {
    /// The `confirmed` of a confirmation a bridge call created: to that
    /// bridge, or, when it has been detached since, to every bridge attached
    /// now (the server binds the confirmId to the page's clientId, not to a
    /// transport). With no bridge attached it is dropped: a later bridge
    /// does not get it, the page's pending list and events still moved on,
    /// and the server treats the confirmId as expired (spec, Navigation).
    pub(crate) fn send_confirmed(
        &mut self,
        requester: &Requester,
        confirm_id: &str,
        result: ToolResult,
    ) {
        let requester = match *requester {
            Requester::Bridge(requester) => requester,
            Requester::Waiting(handle) => return self.out.complete(handle, result),
            Requester::Local => return,
        };
        let message = PageToAgent::Confirmed(Confirmed {
            protocol: ProtocolV1,
            client_id: self.bridges.client_id().to_owned(),
            confirm_id: confirm_id.to_owned(),
            result,
        });
        let requester = BridgeId(requester);
        if self.bridges.contains(requester) {
            return self.send(requester, message);
        }
        let text = message.into_json();
        for (bridge, _) in self.bridges.attached() {
            self.out.transmit(bridge, text.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::forms::REDACTED;
    use serde_json::Value;

    fn confirmation(id: &str, expires_at: u64) -> Confirmation {
        Confirmation {
            confirm_id: id.into(),
            tool: ToolKey(0),
            tool_name: "t".into(),
            call_id: format!("call-{id}"),
            input: JsonText::null(),
            summary: String::new(),
            changes: None,
            state: None,
            requester: Requester::Local,
            expires_at,
            kept: None,
        }
    }

    #[test]
    fn the_101st_confirmation_evicts_the_oldest() {
        let mut store = Confirmations::default();
        assert!(store.is_empty());
        for i in 0..100 {
            assert_eq!(store.add(confirmation(&i.to_string(), 10)), None);
        }
        let evicted = store.add(confirmation("100", 10));
        assert_eq!(evicted.map(|c| c.confirm_id), Some("0".to_string()));
        assert_eq!(store.len(), 100);
        assert!(!store.is_empty());
        assert!(store.take("0").is_none());
        assert!(store.take("1").is_some());
        assert!(store.take("1").is_none(), "single use");
    }

    #[test]
    fn expiry_takes_only_what_is_due() {
        let mut store = Confirmations::default();
        store.add(confirmation("a", 5));
        store.add(confirmation("b", 9));
        assert_eq!(store.next_expiry(), Some(5));
        store.add(confirmation("c", 4));
        let expired: Vec<String> = core::iter::from_fn(|| store.take_expired(5))
            .map(|c| c.confirm_id)
            .collect();
        assert_eq!(expired, ["a", "c"], "in creation order");
        assert_eq!(store.next_expiry(), Some(9));
    }

    #[test]
    fn the_undo_store_keeps_the_latest_run_per_call_id_and_the_last_100() {
        let mut store = UndoStore::default();
        assert!(store.is_empty());
        assert_eq!(store.insert("a", RunId(1)), []);
        assert!(!store.is_empty());
        assert_eq!(store.insert("a", RunId(2)), [RunId(1)], "replaced");
        for i in 0..99 {
            assert_eq!(store.insert(&format!("c{i}"), RunId(10 + i)), []);
        }
        assert_eq!(store.insert("z", RunId(500)), [RunId(2)], "the oldest goes");
        assert_eq!(store.len(), 100);
        assert_eq!(store.take("a"), None);
        assert_eq!(store.take("z"), Some(RunId(500)));
        assert_eq!(store.take("z"), None, "single use");
        store.restoring(RunId(9), Handle(1), "a".into());
        assert_eq!(store.restored(RunId(8)), None);
        assert_eq!(store.restored(RunId(9)), Some((Handle(1), "a".into())));
        assert_eq!(store.restored(RunId(9)), None, "once");
    }

    #[test]
    fn sensitive_paths_and_those_below_are_redacted() {
        let change = |path: &str| FieldChange {
            path: path.into(),
            before: Some(Value::from(1)),
            after: None,
        };
        let sensitive = ["password".to_string()];
        let changes = redact(
            vec![
                change("password"),
                change("password.x"),
                change("passwordx"),
            ],
            &sensitive,
        );
        let before: Vec<Option<Value>> = changes.into_iter().map(|c| c.before).collect();
        let hidden = Some(Value::from(REDACTED));
        assert_eq!(before, [hidden.clone(), hidden, Some(Value::from(1))]);
    }

    #[test]
    fn a_declared_path_is_redacted_inside_a_change_above_it() {
        let changes = redact(
            vec![FieldChange {
                path: "card".into(),
                before: None,
                after: Some(serde_json::json!({"number": "4242", "name": "Ann"})),
            }],
            &["card.number".to_string()],
        );
        assert_eq!(
            changes[0].after,
            Some(serde_json::json!({"number": REDACTED, "name": "Ann"}))
        );
    }
}
