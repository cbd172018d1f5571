//! Bindings and session state (Security MUSTs 2–5, navigation and reloads).
//!
//! [`SessionStore`] is everything one server instance must agree on with
//! the others; [`MemoryStore`] is the single-instance default.
//!
//! # What a shared store must guarantee
//!
//! Several instances (behind a load balancer, or the Echo path where the
//! page's results arrive by HTTP at any instance) need a shared store, e.g.
//! Redis. Whatever it is, it must give these guarantees, which
//! [`MemoryStore`] gets from one mutex:
//!
//! - **Binding before sending.** [`SessionStore::bind_call`] is durable and
//!   visible to every instance before the call is sent, so a result that
//!   comes back at once, at another instance, finds its binding. In Redis:
//!   `SET call:{id} {binding} NX PX {ttl}` and send only after it replied OK
//!   (`NX` also refuses an id already in use).
//! - **Single use.** Settling a call id or a confirmId is one atomic
//!   compare-and-set: of two instances that receive the same result, exactly
//!   one gets the binding and the other a [`Rejection::DuplicateResult`]
//!   (a Lua script or `WATCH`/`MULTI` that checks the state and the binding
//!   and marks it answered in one step). Expiring at the deadline is the
//!   same compare-and-set from pending to timed out, so a result and the
//!   deadline cannot both win.
//! - **Tombstones outlive the deadline.** An answered or timed-out id stays
//!   known (with its binding) for at least as long as a replay could arrive
//!   (keep it for the call's deadline plus a margin, or for the conversation's
//!   life), so a replay is a duplicate or late, never unknown-then-accepted.
//! - **Mismatches change nothing.** A result whose user, conversation or
//!   clientId differs from the binding is rejected without consuming it.
//! - **Per-key atomicity for pages.** Claiming a clientId for a conversation
//!   and re-binding the conversation to it on a manifest are atomic per key;
//!   a clientId belongs to one user and conversation for its life.
//!
//! Deadlines are [`Instant`]s here; a shared store keeps wall-clock
//! milliseconds instead (instances' clocks agree to well under a deadline).

use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::sync::Mutex;

use tokio::time::Instant;

use crate::protocol::Manifest;

/// The authenticated user and conversation a socket or channel is bound to.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ConvKey {
    pub user: String,
    pub conversation: String,
}

/// A conversation plus the page load (clientId) a message went to or came from.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Binding {
    pub key: ConvKey,
    pub client_id: String,
}

#[derive(Clone, Debug, PartialEq)]
pub enum CallKind {
    /// A `call`; `rev` is the manifest revision the agent was shown and
    /// `untrusted` its entry's `hints.untrustedContent`.
    Call {
        tool: String,
        rev: Option<u64>,
        untrusted: bool,
    },
    Describe {
        tool: String,
    },
}

/// What the server stored for a call id before sending the call.
#[derive(Clone, Debug, PartialEq)]
pub struct CallBinding {
    pub id: String,
    pub binding: Binding,
    pub kind: CallKind,
    pub deadline: Instant,
    /// The LLM tool call this protocol call answers.
    pub tool_use_id: String,
}

/// What the server stored for a confirmId it saw in a `needs_confirmation`.
#[derive(Clone, Debug, PartialEq)]
pub struct ConfirmBinding {
    pub confirm_id: String,
    pub binding: Binding,
    pub call_id: String,
    pub tool: String,
    pub tool_use_id: String,
}

/// Why an inbound message (or a page's claim) was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rejection {
    /// The frame is not a valid page → agent message.
    InvalidMessage(&'static str),
    /// A socket speaks for one clientId; this message carried another.
    ForeignClient,
    /// The clientId belongs to another user or conversation.
    ClientOfAnotherConversation,
    /// A call id the server never issued.
    UnknownCall,
    /// A call id bound to another user, conversation or clientId.
    MismatchedCall,
    /// A second result for an answered id.
    DuplicateResult,
    /// A result after the call's deadline (the agent saw a timeout).
    LateResult,
    /// A fresh id that is already bound (never reused).
    IdInUse,
    /// A confirmId never seen in a `needs_confirmation` for this binding.
    UnknownConfirm,
    /// A confirmId bound to another user, conversation or clientId.
    MismatchedConfirm,
    /// A second `confirmed` for a confirmId.
    DuplicateConfirmed,
    /// A confirmId of a page that is gone.
    ExpiredConfirm,
}

pub trait SessionStore: Send + Sync + 'static {
    /// Claims `client_id` for `key`; refused when it belongs to another
    /// user or conversation.
    fn claim_client(&self, key: &ConvKey, client_id: &str) -> Result<(), Rejection>;
    /// Replaces the latest manifest of the (claimed) clientId and re-binds
    /// the conversation to it. Returns the clientId the conversation was
    /// bound to before, when that was another one.
    fn put_manifest(
        &self,
        binding: &Binding,
        manifest: Manifest,
    ) -> Result<Option<String>, Rejection>;
    /// The clientId the conversation is bound to (the latest manifest's).
    fn active_client(&self, key: &ConvKey) -> Option<String>;
    /// The latest manifest of a clientId.
    fn manifest(&self, client_id: &str) -> Option<Manifest>;
    /// Stores a call's binding; must complete before the call is sent.
    fn bind_call(&self, call: CallBinding) -> Result<(), Rejection>;
    /// Settles a call id with its result: once, before the deadline, and
    /// only from the binding it was sent to.
    fn settle_call(&self, id: &str, from: &Binding, now: Instant)
        -> Result<CallBinding, Rejection>;
    /// Marks a pending call timed out; false when it was settled first.
    fn expire_call(&self, id: &str) -> bool;
    /// Stores a confirmId seen in a `needs_confirmation` result.
    fn bind_confirm(&self, confirm: ConfirmBinding) -> Result<(), Rejection>;
    /// Settles a confirmId with its `confirmed`: once, from its binding.
    fn settle_confirm(&self, confirm_id: &str, from: &Binding)
        -> Result<ConfirmBinding, Rejection>;
    /// The page load is gone: its pending confirmIds expire (returned) and
    /// its manifest is forgotten.
    fn expire_page(&self, client_id: &str) -> Vec<ConfirmBinding>;
}

enum CallState {
    Pending(CallBinding),
    Answered(Binding),
    TimedOut(Binding),
}

enum ConfirmState {
    Pending(ConfirmBinding),
    Used(Binding),
    Expired(Binding),
}

#[derive(Default)]
struct Inner {
    client_owner: HashMap<String, ConvKey>,
    active: HashMap<ConvKey, String>,
    manifests: HashMap<String, Manifest>,
    calls: HashMap<String, CallState>,
    confirms: HashMap<String, ConfirmState>,
}

/// Inserts `state` under `id`, an id never bound before (a tombstone counts).
fn insert_unused<State>(
    map: &mut HashMap<String, State>,
    id: String,
    state: State,
) -> Result<(), Rejection> {
    match map.entry(id) {
        Entry::Occupied(_) => Err(Rejection::IdInUse),
        Entry::Vacant(slot) => {
            slot.insert(state);
            Ok(())
        }
    }
}

/// The in-memory store of one server instance. Tombstones of answered ids
/// are kept for the process's life (a demo's conversations are short).
#[derive(Default)]
pub struct MemoryStore {
    inner: Mutex<Inner>,
}

impl MemoryStore {
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // A panic while holding the lock leaves plain maps behind, still usable.
        self.inner
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

fn claim(inner: &mut Inner, key: &ConvKey, client_id: &str) -> Result<(), Rejection> {
    match inner.client_owner.get(client_id) {
        Some(owner) if owner != key => Err(Rejection::ClientOfAnotherConversation),
        Some(_) => Ok(()),
        None => {
            inner.client_owner.insert(client_id.to_owned(), key.clone());
            Ok(())
        }
    }
}

impl SessionStore for MemoryStore {
    fn claim_client(&self, key: &ConvKey, client_id: &str) -> Result<(), Rejection> {
        claim(&mut self.lock(), key, client_id)
    }

    fn put_manifest(
        &self,
        binding: &Binding,
        manifest: Manifest,
    ) -> Result<Option<String>, Rejection> {
        let mut inner = self.lock();
        claim(&mut inner, &binding.key, &binding.client_id)?;
        inner.manifests.insert(binding.client_id.clone(), manifest);
        let previous = inner
            .active
            .insert(binding.key.clone(), binding.client_id.clone());
        Ok(previous.filter(|previous| *previous != binding.client_id))
    }

    fn active_client(&self, key: &ConvKey) -> Option<String> {
        self.lock().active.get(key).cloned()
    }

    fn manifest(&self, client_id: &str) -> Option<Manifest> {
        self.lock().manifests.get(client_id).cloned()
    }

    fn bind_call(&self, call: CallBinding) -> Result<(), Rejection> {
        let id = call.id.clone();
        insert_unused(&mut self.lock().calls, id, CallState::Pending(call))
    }

    fn settle_call(
        &self,
        id: &str,
        from: &Binding,
        now: Instant,
    ) -> Result<CallBinding, Rejection> {
        let mut inner = self.lock();
        let state = inner.calls.get_mut(id).ok_or(Rejection::UnknownCall)?;
        let (bound, outcome) = match state {
            CallState::Pending(call) => (&call.binding, None),
            CallState::Answered(bound) => (&*bound, Some(Rejection::DuplicateResult)),
            CallState::TimedOut(bound) => (&*bound, Some(Rejection::LateResult)),
        };
        if bound != from {
            return Err(Rejection::MismatchedCall);
        }
        if let Some(rejection) = outcome {
            return Err(rejection);
        }
        let CallState::Pending(call) = std::mem::replace(state, CallState::Answered(from.clone()))
        else {
            return Err(Rejection::UnknownCall);
        };
        if now >= call.deadline {
            *state = CallState::TimedOut(from.clone());
            return Err(Rejection::LateResult);
        }
        Ok(call)
    }

    fn expire_call(&self, id: &str) -> bool {
        let mut inner = self.lock();
        let Some(state) = inner.calls.get_mut(id) else {
            return false;
        };
        let CallState::Pending(call) = state else {
            return false;
        };
        let binding = call.binding.clone();
        *state = CallState::TimedOut(binding);
        true
    }

    fn bind_confirm(&self, confirm: ConfirmBinding) -> Result<(), Rejection> {
        let confirm_id = confirm.confirm_id.clone();
        insert_unused(
            &mut self.lock().confirms,
            confirm_id,
            ConfirmState::Pending(confirm),
        )
    }

    fn settle_confirm(
        &self,
        confirm_id: &str,
        from: &Binding,
    ) -> Result<ConfirmBinding, Rejection> {
        let mut inner = self.lock();
        let state = inner
            .confirms
            .get_mut(confirm_id)
            .ok_or(Rejection::UnknownConfirm)?;
        let (bound, outcome) = match state {
            ConfirmState::Pending(confirm) => (&confirm.binding, None),
            ConfirmState::Used(bound) => (&*bound, Some(Rejection::DuplicateConfirmed)),
            ConfirmState::Expired(bound) => (&*bound, Some(Rejection::ExpiredConfirm)),
        };
        if bound != from {
            return Err(Rejection::MismatchedConfirm);
        }
        if let Some(rejection) = outcome {
            return Err(rejection);
        }
        match std::mem::replace(state, ConfirmState::Used(from.clone())) {
            ConfirmState::Pending(confirm) => Ok(confirm),
            _ => Err(Rejection::UnknownConfirm),
        }
    }

    fn expire_page(&self, client_id: &str) -> Vec<ConfirmBinding> {
        let mut inner = self.lock();
        inner.manifests.remove(client_id);
        let mut expired = Vec::new();
        for state in inner.confirms.values_mut() {
            if let ConfirmState::Pending(confirm) = state {
                if confirm.binding.client_id == client_id {
                    let binding = confirm.binding.clone();
                    if let ConfirmState::Pending(confirm) =
                        std::mem::replace(state, ConfirmState::Expired(binding))
                    {
                        expired.push(confirm);
                    }
                }
            }
        }
        expired.sort_by(|a, b| a.confirm_id.cmp(&b.confirm_id));
        expired
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn key(user: &str) -> ConvKey {
        ConvKey {
            user: user.into(),
            conversation: "c1".into(),
        }
    }

    fn binding(user: &str, client: &str) -> Binding {
        Binding {
            key: key(user),
            client_id: client.into(),
        }
    }

    fn call(id: &str, to: Binding, deadline: Instant) -> CallBinding {
        CallBinding {
            id: id.into(),
            binding: to,
            kind: CallKind::Describe { tool: "t".into() },
            deadline,
            tool_use_id: "u".into(),
        }
    }

    fn manifest(rev: u64) -> Manifest {
        Manifest { rev, tools: vec![] }
    }

    #[test]
    fn latest_manifest_replaced_and_conversation_rebound() {
        let store = MemoryStore::new();
        let ada = key("ada");
        assert_eq!(
            store.put_manifest(&binding("ada", "p1"), manifest(0)),
            Ok(None)
        );
        assert_eq!(
            store.put_manifest(&binding("ada", "p1"), manifest(1)),
            Ok(None)
        );
        assert_eq!(store.manifest("p1"), Some(manifest(1)));
        assert_eq!(
            store.put_manifest(&binding("ada", "p2"), manifest(0)),
            Ok(Some("p1".into()))
        );
        assert_eq!(store.active_client(&ada).as_deref(), Some("p2"));
        // Another user cannot take over p2, nor re-bind ada's conversation.
        assert_eq!(
            store.put_manifest(&binding("bob", "p2"), manifest(5)),
            Err(Rejection::ClientOfAnotherConversation)
        );
        assert_eq!(store.manifest("p2"), Some(manifest(0)));
        assert_eq!(store.active_client(&ada).as_deref(), Some("p2"));
    }

    #[test]
    fn results_single_use_bound_and_before_deadline() {
        let store = MemoryStore::new();
        let now = Instant::now();
        let later = now + Duration::from_secs(5);
        store
            .bind_call(call("a", binding("ada", "p1"), later))
            .unwrap();
        assert_eq!(
            store.bind_call(call("a", binding("ada", "p1"), later)),
            Err(Rejection::IdInUse)
        );
        assert_eq!(
            store.settle_call("x", &binding("ada", "p1"), now),
            Err(Rejection::UnknownCall)
        );
        assert_eq!(
            store.settle_call("a", &binding("bob", "p1"), now),
            Err(Rejection::MismatchedCall)
        );
        assert_eq!(
            store.settle_call("a", &binding("ada", "p2"), now),
            Err(Rejection::MismatchedCall)
        );
        assert!(store.settle_call("a", &binding("ada", "p1"), now).is_ok());
        assert_eq!(
            store.settle_call("a", &binding("ada", "p1"), now),
            Err(Rejection::DuplicateResult)
        );
        assert!(!store.expire_call("a"));

        store
            .bind_call(call("b", binding("ada", "p1"), later))
            .unwrap();
        assert!(store.expire_call("b"));
        assert_eq!(
            store.settle_call("b", &binding("ada", "p1"), now),
            Err(Rejection::LateResult)
        );
        store
            .bind_call(call("c", binding("ada", "p1"), now))
            .unwrap();
        assert_eq!(
            store.settle_call("c", &binding("ada", "p1"), later),
            Err(Rejection::LateResult)
        );
    }

    #[test]
    fn confirm_ids_single_use_and_expire_with_their_page() {
        let store = MemoryStore::new();
        let confirm = |id: &str, client: &str| ConfirmBinding {
            confirm_id: id.into(),
            binding: binding("ada", client),
            call_id: "a".into(),
            tool: "signup.submit".into(),
            tool_use_id: "u".into(),
        };
        store.bind_confirm(confirm("k1", "p1")).unwrap();
        store.bind_confirm(confirm("k2", "p1")).unwrap();
        store.bind_confirm(confirm("k3", "p2")).unwrap();
        assert_eq!(
            store.settle_confirm("k0", &binding("ada", "p1")),
            Err(Rejection::UnknownConfirm)
        );
        assert_eq!(
            store.settle_confirm("k1", &binding("ada", "p2")),
            Err(Rejection::MismatchedConfirm)
        );
        assert!(store.settle_confirm("k1", &binding("ada", "p1")).is_ok());
        assert_eq!(
            store.settle_confirm("k1", &binding("ada", "p1")),
            Err(Rejection::DuplicateConfirmed)
        );
        let expired = store.expire_page("p1");
        assert_eq!(expired, vec![confirm("k2", "p1")]);
        assert_eq!(
            store.settle_confirm("k2", &binding("ada", "p1")),
            Err(Rejection::ExpiredConfirm)
        );
        assert!(store.settle_confirm("k3", &binding("ada", "p2")).is_ok());
    }
}
