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
    use crate::prelude::*;

    #[test]
    fn sort_small_sorts() {
        let mut v = vec![5, 1, 4, 1, 3];
        sort_small(&mut v);
        assert_eq!(v, [1, 1, 3, 4, 5]);
        let mut empty: Vec<u8> = vec![];
        sort_small(&mut empty);
        assert!(empty.is_empty());
    }
}
