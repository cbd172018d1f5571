//! Per-scope lanes (rule 5): calls on one scope run one at a time in
//! arrival order (FIFO); lanes run in parallel. A lane holds at most
//! [`MAX_PENDING_PER_SCOPE`] pending calls, the active one included; one
//! more is refused `busy`. The page also bounds the input its calls hold
//! across every scope ([`MAX_HELD_INPUT_BYTES`]): a call that would take
//! the total past it is refused `busy` too.
//!
//! A lane's front call is its active one once started. The lanes decide
//! which call starts next; the machine starts it.

use crate::vecmap::Queue;

use crate::prelude::*;
use crate::registry::ScopeId;

/// Rule 5: more than this many pending calls on one scope → `refused busy`.
pub const MAX_PENDING_PER_SCOPE: usize = 32;

/// Most bytes of input text the calls in flight may hold together, across
/// scopes (waiting in a lane or for a human's confirmation): one scope's
/// worth of calls at the default `maxMessageBytes` (32 × 1 MiB). The
/// module's memory never shrinks, so a burst of large calls would cost the
/// page that memory until it reloads.
pub const MAX_HELD_INPUT_BYTES: usize = 32 * 1_048_576;

/// Whether a call holding `incoming` bytes of input must be refused `busy`
/// when the calls in flight hold `held`. A call is always taken when none
/// holds anything, so a bridge whose `maxMessageBytes` is above the bound
/// still runs its calls one at a time.
pub fn over_input_budget(held: usize, incoming: usize) -> bool {
    held > 0 && held.saturating_add(incoming) > MAX_HELD_INPUT_BYTES
}

/// A call being handled by the machine; keys only grow (arrival order).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CallKey(pub u64);

#[derive(Debug)]
struct Lane {
    scope: ScopeId,
    calls: Queue<CallKey>,
    /// The front call has started.
    active: bool,
}

/// The lanes with pending calls, in scope order (an empty lane goes).
#[derive(Debug, Default)]
pub struct Lanes {
    lanes: Vec<Lane>,
}

impl Lanes {
    fn lane(&self, scope: ScopeId) -> Option<&Lane> {
        self.lanes.iter().find(|lane| lane.scope == scope)
    }

    /// Pending calls on a scope: queued plus active (rule 5's count).
    pub fn pending(&self, scope: ScopeId) -> usize {
        self.lane(scope).map_or(0, |lane| lane.calls.len())
    }

    /// Rule 5: the scope's lane cannot take another call.
    pub fn is_busy(&self, scope: ScopeId) -> bool {
        self.pending(scope) >= MAX_PENDING_PER_SCOPE
    }

    /// The most pending calls on any one scope.
    pub fn max_pending(&self) -> usize {
        self.lanes.iter().map(|l| l.calls.len()).max().unwrap_or(0)
    }

    /// Queues a call at the back of its scope's lane.
    pub fn push(&mut self, scope: ScopeId, key: CallKey) {
        let at = self.lanes.partition_point(|lane| lane.scope < scope);
        match self.lanes.get_mut(at) {
            Some(lane) if lane.scope == scope => lane.calls.push_back(key),
            _ => self.lanes.insert(
                at,
                Lane {
                    scope,
                    calls: Queue::from(vec![key]),
                    active: false,
                },
            ),
        }
    }

    /// Takes a call out of its lane, wherever it is: the active one frees
    /// the lane for the next.
    pub fn remove(&mut self, scope: ScopeId, key: CallKey) {
        let Some(at) = self.lanes.iter().position(|lane| lane.scope == scope) else {
            return;
        };
        let Some(lane) = self.lanes.get_mut(at) else {
            return;
        };
        let Some(index) = lane.calls.iter().position(|k| *k == key) else {
            return;
        };
        lane.calls.remove(index);
        if index == 0 {
            lane.active = false;
        }
        if lane.calls.is_empty() {
            self.lanes.remove(at);
        }
    }

    /// The call to start next, marked active: the front of the first idle
    /// lane with work, smallest scope first.
    pub fn next_to_start(&mut self) -> Option<CallKey> {
        let lane = self
            .lanes
            .iter_mut()
            .find(|lane| !lane.active && !lane.calls.is_empty())?;
        lane.active = true;
        lane.calls.front().copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: ScopeId = ScopeId(1);
    const B: ScopeId = ScopeId(2);

    #[test]
    fn a_lane_runs_one_call_at_a_time_in_arrival_order() {
        let mut lanes = Lanes::default();
        lanes.push(A, CallKey(0));
        lanes.push(A, CallKey(1));
        assert_eq!(lanes.next_to_start(), Some(CallKey(0)));
        assert_eq!(lanes.next_to_start(), None, "the lane is busy");
        lanes.remove(A, CallKey(0));
        assert_eq!(lanes.next_to_start(), Some(CallKey(1)));
        lanes.remove(A, CallKey(1));
        assert_eq!(lanes.pending(A), 0);
        assert_eq!(lanes.next_to_start(), None);
    }

    #[test]
    fn lanes_run_in_parallel_smallest_scope_first() {
        let mut lanes = Lanes::default();
        lanes.push(B, CallKey(0));
        lanes.push(A, CallKey(1));
        assert_eq!(lanes.next_to_start(), Some(CallKey(1)));
        assert_eq!(lanes.next_to_start(), Some(CallKey(0)));
        assert_eq!(lanes.max_pending(), 1);
    }

    #[test]
    fn a_queued_call_taken_out_keeps_the_active_one() {
        let mut lanes = Lanes::default();
        for key in 0..3 {
            lanes.push(A, CallKey(key));
        }
        assert_eq!(lanes.next_to_start(), Some(CallKey(0)));
        lanes.remove(A, CallKey(1));
        assert_eq!(lanes.next_to_start(), None);
        lanes.remove(A, CallKey(0));
        assert_eq!(lanes.next_to_start(), Some(CallKey(2)));
        lanes.remove(B, CallKey(2));
        lanes.remove(A, CallKey(9));
        assert_eq!(lanes.pending(A), 1);
    }

    #[test]
    fn input_past_the_page_budget_is_busy() {
        assert!(!over_input_budget(0, MAX_HELD_INPUT_BYTES + 1));
        assert!(!over_input_budget(1, MAX_HELD_INPUT_BYTES - 1));
        assert!(over_input_budget(1, MAX_HELD_INPUT_BYTES));
        assert!(!over_input_budget(MAX_HELD_INPUT_BYTES, 0));
        assert!(over_input_budget(MAX_HELD_INPUT_BYTES, 1));
        assert!(over_input_budget(usize::MAX, usize::MAX));
    }

    #[test]
    fn the_33rd_pending_call_on_a_scope_is_busy() {
        let mut lanes = Lanes::default();
        for key in 0..MAX_PENDING_PER_SCOPE as u64 {
            assert!(!lanes.is_busy(A));
            lanes.push(A, CallKey(key));
        }
        assert!(lanes.is_busy(A) && !lanes.is_busy(B));
        assert_eq!(lanes.max_pending(), MAX_PENDING_PER_SCOPE);
    }
}
