//! Deferred confirmations (at most [`MAX_PENDING_CONFIRMATIONS`] per page,
//! oldest expired first), the answered-id memory and the undo store.

use sha2::{Digest, Sha256};

use crate::machine::RunId;
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
    /// The validation run whose value JS keeps for the approved run (see
    /// [`crate::machine::Action::Run`]); JS is told to forget it when the
    /// confirmation ends otherwise.
    pub validated: Option<RunId>,
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

/// The undo store: which run's restorer JS keeps for a call id, the last
/// [`UNDO_STORE`] of them. JS keeps restorers by run (unique per page), so
/// two runs under one call id (a replay once the id left the answered-id
/// memory, an approved run) never drop or replace each other's restorer;
/// `tm.undo(callId)` takes the latest run kept under that id.
#[derive(Debug, Default)]
pub struct UndoStore {
    /// (call id, the run whose restorer JS keeps), oldest first.
    kept: Queue<(IdKey, RunId)>,
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

    pub fn len(&self) -> usize {
        self.kept.len()
    }

    pub fn is_empty(&self) -> bool {
        self.kept.is_empty()
    }
}

/// Ids up to this many bytes are remembered as they are; longer ones by
/// their SHA-256 digest (an id's size is bounded only by the message's).
pub const SHORT_ID_BYTES: usize = 64;

/// How an id is remembered: a fixed-size value (no heap of its own), the
/// id itself when short, else its 256-bit digest. The two kinds never
/// compare equal, so a short id cannot meet a long one's digest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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

    /// Where the key starts probing: a digest's first bytes, or the FNV-1a
    /// hash of a short id (ids are the agent's: any spread is fine, the
    /// probes are bounded by the table, not by the hash).
    fn hash(&self) -> usize {
        let (bytes, seed): (&[u8], u64) = match self {
            IdKey::Short { len, bytes } => (
                bytes.get(..usize::from(*len)).unwrap_or_default(),
                0xcbf2_9ce4_8422_2325,
            ),
            IdKey::Digest(digest) => (digest.get(..8).unwrap_or_default(), 0),
        };
        let mut hash = seed;
        for byte in bytes {
            hash = (hash ^ u64::from(*byte)).wrapping_mul(0x0100_0000_01b3);
        }
        hash as usize
    }
}

/// Rule 2's answered-id memory: the last `capacity` ids, each held once as
/// an [`IdKey`] (fixed size, whatever the ids' length) in a ring in
/// insertion order (once full, the oldest slot is reused), and found in
/// O(1) by an open-addressing index (linear probing) of ring slots, at most
/// half full. (Not a `HashSet`/`BTreeSet`: each costs kilobytes of wasm,
/// see `vecmap`.)
#[derive(Debug)]
pub struct AnsweredIds {
    ring: Vec<IdKey>,
    /// Once the ring is full: the slot of the oldest key, reused next.
    oldest: usize,
    capacity: usize,
    /// Ring slot + 1 for each key, 0 for an empty entry; a power of two in
    /// length, made at the first insert.
    index: Vec<u32>,
}

impl AnsweredIds {
    pub fn new(capacity: usize) -> AnsweredIds {
        AnsweredIds {
            ring: Vec::new(),
            oldest: 0,
            capacity,
            index: Vec::new(),
        }
    }

    fn mask(&self) -> usize {
        self.index.len().wrapping_sub(1)
    }

    /// The key in the ring slot an index entry names.
    fn key_at(&self, entry: u32) -> Option<&IdKey> {
        self.ring.get(usize::try_from(entry).ok()?.checked_sub(1)?)
    }

    /// The index entry holding `key`, if it is remembered.
    fn find(&self, key: &IdKey) -> Option<usize> {
        let mask = self.mask();
        let mut at = key.hash() & mask;
        for _ in 0..self.index.len() {
            let entry = *self.index.get(at)?;
            if entry == 0 {
                return None;
            }
            if self.key_at(entry) == Some(key) {
                return Some(at);
            }
            at = (at + 1) & mask;
        }
        None
    }

    /// Puts ring slot `slot` (holding `key`) into the index.
    fn index_slot(&mut self, key: &IdKey, slot: usize) {
        let mask = self.mask();
        let Ok(entry) = u32::try_from(slot + 1) else {
            return;
        };
        let mut at = key.hash() & mask;
        for _ in 0..self.index.len() {
            match self.index.get_mut(at) {
                Some(free @ 0) => {
                    *free = entry;
                    return;
                }
                Some(_) => at = (at + 1) & mask,
                None => return,
            }
        }
    }

    /// Empties index entry `at`, moving later entries of the same probe
    /// run back so that every key stays reachable from its start.
    fn unindex(&mut self, mut at: usize) {
        let mask = self.mask();
        let mut next = at;
        loop {
            if let Some(hole) = self.index.get_mut(at) {
                *hole = 0;
            }
            loop {
                next = (next + 1) & mask;
                let entry = self.index.get(next).copied().unwrap_or(0);
                if entry == 0 {
                    return;
                }
                let home = self.key_at(entry).map_or(next, |k| k.hash() & mask);
                // Stays when its home lies cyclically in (at, next].
                let stays = if at <= next {
                    at < home && home <= next
                } else {
                    at < home || home <= next
                };
                if !stays {
                    if let Some(hole) = self.index.get_mut(at) {
                        *hole = entry;
                    }
                    at = next;
                    break;
                }
            }
        }
    }

    pub fn contains(&self, id: &str) -> bool {
        self.find(&IdKey::of(id)).is_some()
    }

    /// Remembers an id, forgetting the oldest when full (a known id stays
    /// where it is).
    pub fn insert(&mut self, id: &str) {
        let key = IdKey::of(id);
        if self.capacity == 0 || self.find(&key).is_some() {
            return;
        }
        if self.index.is_empty() {
            let size = self.capacity.saturating_mul(2).next_power_of_two();
            self.index = vec![0; size];
        }
        if self.ring.len() < self.capacity {
            self.ring.push(key);
            return self.index_slot(&key, self.ring.len() - 1);
        }
        let slot = self.oldest;
        let Some(forgotten) = self.ring.get(slot).copied() else {
            return;
        };
        if let Some(at) = self.find(&forgotten) {
            self.unindex(at);
        }
        if let Some(place) = self.ring.get_mut(slot) {
            *place = key;
        }
        self.index_slot(&key, slot);
        self.oldest = (slot + 1) % self.capacity;
    }

    pub fn len(&self) -> usize {
        self.ring.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ring.is_empty()
    }

    /// Bytes it holds: the ring's keys and the index.
    pub fn held_bytes(&self) -> usize {
        self.ring.capacity() * core::mem::size_of::<IdKey>()
            + self.index.capacity() * core::mem::size_of::<u32>()
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
            validated: None,
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
    fn answered_ids_agree_with_a_plain_queue() {
        // Small id pools make probe runs collide and wrap; the ring wraps
        // many times over.
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for (capacity, pool) in [(1, 3), (3, 5), (7, 20), (64, 200), (1000, 3000)] {
            let mut ids = AnsweredIds::new(capacity);
            let mut model: alloc::collections::VecDeque<String> = Default::default();
            for step in 0..20_000 {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let n = (state >> 33) as usize % pool;
                let id = if n % 3 == 0 {
                    format!("{n}{}", "L".repeat(SHORT_ID_BYTES))
                } else {
                    format!("id{n}")
                };
                let known = model.contains(&id);
                assert_eq!(
                    ids.contains(&id),
                    known,
                    "{capacity}/{pool} step {step}: {id}"
                );
                if !known {
                    if model.len() == capacity {
                        model.pop_front();
                    }
                    model.push_back(id.clone());
                }
                ids.insert(&id);
                assert_eq!(ids.len(), model.len());
            }
            for id in &model {
                assert!(ids.contains(id), "{capacity}/{pool}: lost {id}");
            }
        }
    }

    #[test]
    fn the_undo_store_keeps_the_latest_run_per_call_id_and_the_last_100() {
        let mut store = UndoStore::default();
        assert_eq!(store.insert("a", RunId(1)), []);
        assert_eq!(store.insert("a", RunId(2)), [RunId(1)], "replaced");
        for i in 0..99 {
            assert_eq!(store.insert(&format!("c{i}"), RunId(10 + i)), []);
        }
        assert_eq!(store.insert("z", RunId(500)), [RunId(2)], "the oldest goes");
        assert_eq!(store.len(), 100);
        assert_eq!(store.take("a"), None);
        assert_eq!(store.take("z"), Some(RunId(500)));
        assert_eq!(store.take("z"), None, "single use");
    }
}
