//! What the two machine models share, the proptest's (`tests/machine_model.rs`)
//! and the fuzz driver's (`tests/support/machine_drive.rs`): the spec's
//! bounds, written down once from the spec (not taken from the crate), what
//! every message the page sends must be, and the page's answered-id memory
//! as the spec states it.

use std::collections::{HashSet, VecDeque};

use serde_json::Value;
use toolmark_bridge::protocol::{validate, Direction};

/// Spec rule 5: pending calls per scope.
pub const MAX_PENDING_PER_SCOPE: usize = 32;
/// Spec: pending deferred confirmations per page.
pub const MAX_PENDING_CONFIRMATIONS: usize = 100;
/// Spec rule 2: answered-id memory.
pub const ANSWERED_ID_MEMORY: usize = 1000;

/// A message the page sent: JSON, valid against the page-to-agent schema,
/// carrying the page's `clientId`; `Err` says how it is not.
pub fn sent_message(text: &str, client_id: &str) -> Result<Value, String> {
    let message: Value =
        serde_json::from_str(text).map_err(|e| format!("sent non-JSON ({e}): {text}"))?;
    if let Err(issues) = validate(&message, Direction::ToAgent) {
        return Err(format!(
            "sent a message that fails the page-to-agent schema: {issues:?}\n{text}"
        ));
    }
    if message["clientId"].as_str() != Some(client_id) {
        return Err(format!(
            "sent with a clientId other than {client_id:?}: {text}"
        ));
    }
    Ok(message)
}

/// The page's answered-id memory (rule 2: the last 1000 ids it answered,
/// on any of its bridges), as a plain queue and set of the ids themselves.
#[derive(Debug, Default)]
pub struct AnsweredModel {
    order: VecDeque<String>,
    known: HashSet<String>,
}

impl AnsweredModel {
    pub fn len(&self) -> usize {
        self.order.len()
    }

    pub fn contains(&self, id: &str) -> bool {
        self.known.contains(id)
    }

    /// Remembers an answered id, forgetting the oldest beyond the memory
    /// (a remembered id keeps its place).
    pub fn remember(&mut self, id: &str) {
        if self.known.contains(id) {
            return;
        }
        if self.order.len() >= ANSWERED_ID_MEMORY {
            if let Some(old) = self.order.pop_front() {
                self.known.remove(&old);
            }
        }
        self.order.push_back(id.to_owned());
        self.known.insert(id.to_owned());
    }
}
