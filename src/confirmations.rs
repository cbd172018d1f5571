//! Deferred confirmations (at most [`MAX_PENDING_CONFIRMATIONS`] per page,
//! oldest expired first), the answered-id memory and the undo store.

use crate::prelude::*;
use crate::protocol::FieldChange;
use crate::registry::ToolKey;
use crate::vecmap::Queue;
use serde_json::Value;

/// Spec: at most 100 pending deferred confirmations per page.
pub const MAX_PENDING_CONFIRMATIONS: usize = 100;
/// Spec: default expiry of a deferred confirmation.
pub const DEFAULT_CONFIRM_EXPIRY_MS: u64 = 600_000;
/// Spec: the last 1000 answered call/describe ids are remembered.
pub const ANSWERED_ID_MEMORY: usize = 1000;
/// The undo store keeps the last 100 restorers.
pub const UNDO_STORE: usize = 100;

/// Where the call that created a confirmation came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Requester {
    /// A bridge: its `confirmed` goes back there.
    Bridge(u32),
    /// `tm.call` in the page: no `confirmed` message.
    Local,
}

/// A pending deferred confirmation.
#[derive(Debug, Clone, PartialEq)]
pub struct Confirmation {
    pub confirm_id: String,
    pub tool: ToolKey,
    pub tool_name: String,
    /// The call id of the requesting call (the restorer of the approved run
    /// is kept under it).
    pub call_id: String,
    pub input: Value,
    pub summary: String,
    pub changes: Option<Vec<FieldChange>>,
    /// The form state read at request time, compared at approval.
    pub state: Option<String>,
    pub requester: Requester,
    pub expires_at: u64,
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

    pub fn is_empty(&self) -> bool {
        self.pending.is_empty()
    }
}

/// A bounded set that forgets its oldest entry first: one `Vec` in
/// insertion order, searched linearly (a separate membership set would hold
/// every entry twice and cost its own code).
#[derive(Debug)]
pub struct RecentSet {
    order: Vec<String>,
    capacity: usize,
}

impl RecentSet {
    pub fn new(capacity: usize) -> RecentSet {
        RecentSet {
            order: Vec::new(),
            capacity,
        }
    }

    fn position(&self, id: &str) -> Option<usize> {
        for (index, entry) in self.order.iter().enumerate() {
            if entry == id {
                return Some(index);
            }
        }
        None
    }

    /// Inserts; returns the entry forgotten to make room, if any.
    pub fn insert(&mut self, id: String) -> Option<String> {
        if self.contains(&id) {
            return None;
        }
        let forgotten = if self.order.len() >= self.capacity && !self.order.is_empty() {
            Some(self.order.remove(0))
        } else {
            None
        };
        self.order.push(id);
        forgotten
    }

    pub fn contains(&self, id: &str) -> bool {
        self.position(id).is_some()
    }

    /// Removes an entry; true when it was there.
    pub fn remove(&mut self, id: &str) -> bool {
        match self.position(id) {
            Some(index) if index < self.order.len() => {
                self.order.remove(index);
                true
            }
            _ => false,
        }
    }

    pub fn len(&self) -> usize {
        self.order.len()
    }

    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn confirmation(id: &str, expires_at: u64) -> Confirmation {
        Confirmation {
            confirm_id: id.into(),
            tool: ToolKey(0),
            tool_name: "t".into(),
            call_id: format!("call-{id}"),
            input: Value::Null,
            summary: String::new(),
            changes: None,
            state: None,
            requester: Requester::Local,
            expires_at,
        }
    }

    #[test]
    fn the_101st_confirmation_evicts_the_oldest() {
        let mut store = Confirmations::default();
        for i in 0..100 {
            assert_eq!(store.add(confirmation(&i.to_string(), 10)), None);
        }
        let evicted = store.add(confirmation("100", 10));
        assert_eq!(evicted.map(|c| c.confirm_id), Some("0".to_string()));
        assert_eq!(store.len(), 100);
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
    fn recent_set_forgets_the_oldest() {
        let mut set = RecentSet::new(3);
        for id in ["a", "b", "c"] {
            assert_eq!(set.insert(id.into()), None);
        }
        assert_eq!(set.insert("a".into()), None, "already there");
        assert_eq!(set.insert("d".into()), Some("a".into()));
        assert!(!set.contains("a"));
        assert!(set.contains("d"));
        assert!(set.remove("b"));
        assert!(!set.remove("b"));
        assert_eq!(set.len(), 2);
    }
}
