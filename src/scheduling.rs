//! Per-scope lanes: calls on one scope run one at a time in arrival order
//! (FIFO); lanes run in parallel. A lane holds at most
//! [`MAX_PENDING_PER_SCOPE`] pending calls (the active one included).

use crate::prelude::*;
use crate::registry::ScopeId;
use crate::vecmap::{Queue, VecMap};

/// Rule 5: more than this many pending calls on one scope → `refused busy`.
pub const MAX_PENDING_PER_SCOPE: usize = 32;

/// A call being handled by the machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CallKey(pub u64);

#[derive(Debug, Default)]
struct Lane {
    active: Option<CallKey>,
    queue: Queue<CallKey>,
}

impl Lane {
    fn pending(&self) -> usize {
        self.queue.len() + usize::from(self.active.is_some())
    }
}

/// All lanes. Empty lanes are dropped, so state stays bounded by the calls.
#[derive(Debug, Default)]
pub struct Lanes {
    lanes: VecMap<ScopeId, Lane>,
}

impl Lanes {
    /// Pending calls on a scope: queued plus active.
    pub fn pending(&self, scope: ScopeId) -> usize {
        self.lanes.get(&scope).map_or(0, Lane::pending)
    }

    /// Queues a call at the back of its scope's lane.
    pub fn push(&mut self, scope: ScopeId, call: CallKey) {
        match self.lanes.get_mut(&scope) {
            Some(lane) => lane.queue.push_back(call),
            None => {
                let mut lane = Lane::default();
                lane.queue.push_back(call);
                self.lanes.insert(scope, lane);
            }
        }
    }

    /// Makes the next queued call active when the lane is idle.
    pub fn start_next(&mut self, scope: ScopeId) -> Option<CallKey> {
        let lane = self.lanes.get_mut(&scope)?;
        if lane.active.is_some() {
            return None;
        }
        let next = lane.queue.pop_front()?;
        lane.active = Some(next);
        Some(next)
    }

    /// The lane's active call is done (or abandoned): the next may start.
    pub fn finish(&mut self, scope: ScopeId, call: CallKey) {
        if let Some(lane) = self.lanes.get_mut(&scope) {
            if lane.active == Some(call) {
                lane.active = None;
            }
            lane.queue.retain(|queued| *queued != call);
            if lane.pending() == 0 {
                self.lanes.remove(&scope);
            }
        }
    }

    /// Scopes that have queued calls and no active one.
    pub fn idle_with_work(&self) -> Vec<ScopeId> {
        let mut scopes = Vec::new();
        for (scope, lane) in self.lanes.iter() {
            if lane.active.is_none() && !lane.queue.is_empty() {
                scopes.push(*scope);
            }
        }
        sort_small(&mut scopes);
        scopes
    }

    pub fn total_pending(&self) -> usize {
        self.lanes.values().map(Lane::pending).sum()
    }

    pub fn max_pending(&self) -> usize {
        self.lanes.values().map(Lane::pending).max().unwrap_or(0)
    }
}

/// Sorts a short list. Insertion sort on purpose: one small loop instead of
/// the standard library's sort machinery, which costs kilobytes of wasm per
/// element type. The lists here (scopes, bridges, overdue calls) are short.
pub fn sort_small<T: Ord>(items: &mut [T]) {
    for i in 1..items.len() {
        let mut j = i;
        while j > 0 && items.get(j - 1) > items.get(j) {
            items.swap(j - 1, j);
            j -= 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sort_small_sorts() {
        let mut v = vec![5, 1, 4, 1, 3];
        sort_small(&mut v);
        assert_eq!(v, [1, 1, 3, 4, 5]);
        let mut empty: Vec<u8> = vec![];
        sort_small(&mut empty);
        assert!(empty.is_empty());
    }

    #[test]
    fn lanes_are_fifo_and_one_at_a_time() {
        let mut lanes = Lanes::default();
        let a = ScopeId(1);
        lanes.push(a, CallKey(1));
        lanes.push(a, CallKey(2));
        assert_eq!(lanes.pending(a), 2);
        assert_eq!(lanes.start_next(a), Some(CallKey(1)));
        assert_eq!(lanes.start_next(a), None, "one at a time");
        lanes.finish(a, CallKey(1));
        assert_eq!(lanes.start_next(a), Some(CallKey(2)));
        lanes.finish(a, CallKey(2));
        assert_eq!(lanes.pending(a), 0);
        assert_eq!(lanes.total_pending(), 0);
    }

    #[test]
    fn lanes_are_independent_and_queued_calls_can_leave() {
        let mut lanes = Lanes::default();
        lanes.push(ScopeId(1), CallKey(1));
        lanes.push(ScopeId(2), CallKey(2));
        lanes.push(ScopeId(2), CallKey(3));
        assert_eq!(lanes.idle_with_work(), vec![ScopeId(1), ScopeId(2)]);
        assert_eq!(lanes.start_next(ScopeId(1)), Some(CallKey(1)));
        assert_eq!(lanes.start_next(ScopeId(2)), Some(CallKey(2)));
        lanes.finish(ScopeId(2), CallKey(3));
        assert_eq!(lanes.pending(ScopeId(2)), 1);
        assert_eq!(lanes.max_pending(), 1);
    }
}
