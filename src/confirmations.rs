//! Deferred confirmations (at most [`MAX_PENDING_CONFIRMATIONS`] per page,
//! oldest expired first), the answered-id memory and the undo store.

use alloc::collections::BTreeSet;
use sha2::{Digest, Sha256};

use crate::json::Value;
use crate::prelude::*;
use crate::protocol::FieldChange;
use crate::registry::ToolKey;
use crate::vecmap::Queue;

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
    /// A bridge: its `confirmed` goes back there (or, once it has been
    /// detached, to the bridges attached then).
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

/// Ids up to this many bytes are remembered as they are; longer ones by
/// their SHA-256 digest (an id's size is bounded only by the message's).
pub const SHORT_ID_BYTES: usize = 64;

/// How an id is remembered: a fixed-size value (no heap of its own), the
/// id itself when short, else its 256-bit digest. The two kinds never
/// compare equal, so a short id cannot meet a long one's digest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum IdKey {
    Short {
        len: u8,
        bytes: [u8; SHORT_ID_BYTES],
    },
    Digest([u8; 32]),
}

impl IdKey {
    pub fn of(id: &str) -> IdKey {
        let text = id.as_bytes();
        let mut bytes = [0; SHORT_ID_BYTES];
        match (bytes.get_mut(..text.len()), u8::try_from(text.len())) {
            (Some(prefix), Ok(len)) => {
                prefix.copy_from_slice(text);
                IdKey::Short { len, bytes }
            }
            _ => IdKey::Digest(Sha256::digest(text).into()),
        }
    }
}

/// Rule 2's answered-id memory: the last `capacity` ids, each held as an
/// [`IdKey`] (so at most `2 × capacity` keys of fixed size, whatever the
/// ids' length), found in O(log n) by an ordered set; a ring in insertion
/// order says which to forget next.
#[derive(Debug)]
pub struct AnsweredIds {
    set: BTreeSet<IdKey>,
    /// Insertion order; once full, `oldest` is the next slot to reuse.
    ring: Vec<IdKey>,
    oldest: usize,
    capacity: usize,
}

impl AnsweredIds {
    pub fn new(capacity: usize) -> AnsweredIds {
        AnsweredIds {
            set: BTreeSet::new(),
            ring: Vec::new(),
            oldest: 0,
            capacity,
        }
    }

    pub fn contains(&self, id: &str) -> bool {
        self.set.contains(&IdKey::of(id))
    }

    /// Remembers an id, forgetting the oldest when full (a known id stays
    /// where it is).
    pub fn insert(&mut self, id: &str) {
        let key = IdKey::of(id);
        if self.capacity == 0 || !self.set.insert(key) {
            return;
        }
        if self.ring.len() < self.capacity {
            self.ring.push(key);
            return;
        }
        if let Some(slot) = self.ring.get_mut(self.oldest) {
            let forgotten = core::mem::replace(slot, key);
            self.set.remove(&forgotten);
        }
        self.oldest = (self.oldest + 1) % self.capacity;
    }

    pub fn len(&self) -> usize {
        self.set.len()
    }

    pub fn is_empty(&self) -> bool {
        self.set.is_empty()
    }

    /// Bytes its keys take: the ring's and the set's (the set's tree nodes
    /// add a few words per node of up to 11 keys).
    pub fn held_bytes(&self) -> usize {
        (self.ring.capacity() + self.set.len()) * core::mem::size_of::<IdKey>()
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
    fn answered_ids_forget_the_oldest_and_keep_long_ids_as_digests() {
        let mut ids = AnsweredIds::new(3);
        let long = |c: &str| c.repeat(SHORT_ID_BYTES + 1);
        for id in ["a", &long("b"), "c"] {
            ids.insert(id);
        }
        ids.insert("a");
        assert_eq!(ids.len(), 3, "already there");
        ids.insert("d");
        assert!(!ids.contains("a"), "the oldest is forgotten");
        assert!(ids.contains(&long("b")) && ids.contains("c") && ids.contains("d"));
        ids.insert(&long("e"));
        ids.insert("f");
        assert!(!ids.contains(&long("b")) && !ids.contains("c"));
        assert_eq!(ids.len(), 3);
        assert!(matches!(IdKey::of(&long("x")), IdKey::Digest(_)));
        assert!(matches!(
            IdKey::of(&"x".repeat(SHORT_ID_BYTES)),
            IdKey::Short { .. }
        ));
        assert_ne!(IdKey::of(""), IdKey::of("\0"));
        let mut none = AnsweredIds::new(0);
        none.insert("a");
        assert!(none.is_empty());
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
