//! Per-scope lanes: calls on one scope run one at a time in arrival order
//! (FIFO); lanes run in parallel. A lane holds at most
//! [`MAX_PENDING_PER_SCOPE`] pending calls (the active one included).
//! The machine keeps no lane structure: a scope's lane is its calls in key
//! order (`Toolmark::pump` in `machine.rs`).

/// Rule 5: more than this many pending calls on one scope → `refused busy`.
pub const MAX_PENDING_PER_SCOPE: usize = 32;

/// A call being handled by the machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CallKey(pub u64);
