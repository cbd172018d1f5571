//! Small collections on a plain `Vec`: a map searched linearly, a FIFO
//! queue, and a heapsort.
//!
//! The maps are small (a schema's anchors and resources, the regexp cache:
//! tens, at most a few thousand) and each `HashMap<K, V>` instantiation costs
//! kilobytes of WebAssembly (hashbrown's table code, per key and value type,
//! plus SipHash). A linear scan over a few thousand entries is still cheap.
//! Iteration order is unspecified, as with `HashMap`: removal moves the
//! last entry into the hole.

use crate::prelude::*;
use core::borrow::Borrow;

/// Keys and values in two `Vec`s at the same index: the search runs over
/// the keys alone, so its code is shared by every value type.
#[derive(Debug, Clone)]
pub struct VecMap<K, V> {
    keys: Vec<K>,
    values: Vec<V>,
}

impl<K, V> Default for VecMap<K, V> {
    fn default() -> Self {
        VecMap::EMPTY
    }
}

impl<K, V> VecMap<K, V> {
    /// An empty map (a constant: a `thread_local!` can start with it).
    pub const EMPTY: Self = VecMap {
        keys: Vec::new(),
        values: Vec::new(),
    };
}

impl<K: Eq, V> FromIterator<(K, V)> for VecMap<K, V> {
    /// Like `HashMap`: a repeated key keeps its last value.
    fn from_iter<I: IntoIterator<Item = (K, V)>>(entries: I) -> Self {
        let mut map = VecMap::new();
        for (key, value) in entries {
            map.insert(key, value);
        }
        map
    }
}

/// Where `key` is among `keys`.
fn position<K, Q>(keys: &[K], key: &Q) -> Option<usize>
where
    K: Borrow<Q>,
    Q: Eq + ?Sized,
{
    keys.iter().position(|k| k.borrow() == key)
}

impl<K: Eq, V> VecMap<K, V> {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn len(&self) -> usize {
        self.keys.len()
    }

    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    pub fn get<Q>(&self, key: &Q) -> Option<&V>
    where
        K: Borrow<Q>,
        Q: Eq + ?Sized,
    {
        self.values.get(position(&self.keys, key)?)
    }

    pub fn get_mut<Q>(&mut self, key: &Q) -> Option<&mut V>
    where
        K: Borrow<Q>,
        Q: Eq + ?Sized,
    {
        self.values.get_mut(position(&self.keys, key)?)
    }

    pub fn contains_key<Q>(&self, key: &Q) -> bool
    where
        K: Borrow<Q>,
        Q: Eq + ?Sized,
    {
        position(&self.keys, key).is_some()
    }

    /// Inserts or replaces; returns the value replaced.
    pub fn insert(&mut self, key: K, value: V) -> Option<V> {
        if let Some(slot) = self.get_mut(&key) {
            return Some(core::mem::replace(slot, value));
        }
        self.keys.push(key);
        self.values.push(value);
        None
    }

    pub fn remove<Q>(&mut self, key: &Q) -> Option<V>
    where
        K: Borrow<Q>,
        Q: Eq + ?Sized,
    {
        let at = position(&self.keys, key)?;
        if at >= self.values.len() {
            return None;
        }
        self.keys.swap_remove(at);
        Some(self.values.swap_remove(at))
    }

    pub fn iter(&self) -> impl Iterator<Item = (&K, &V)> {
        self.keys.iter().zip(self.values.iter())
    }

    pub fn keys(&self) -> impl Iterator<Item = &K> {
        self.keys.iter()
    }

    pub fn values(&self) -> impl Iterator<Item = &V> {
        self.values.iter()
    }

    pub fn clear(&mut self) {
        self.keys.clear();
        self.values.clear();
    }
}

/// A FIFO queue as a `Vec` (taking from the front moves the rest), in
/// place of `VecDeque`, whose ring-buffer code costs about a kilobyte of
/// wasm per element type (the core's seven queues on `VecDeque`: 5.5 KB
/// more module). The queues here are short: outputs and a socket's
/// actions drained after every input, lanes of at most 32 calls, at most a
/// few hundred memory entries, a socket's 100 buffered or held texts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Queue<T> {
    items: Vec<T>,
}

impl<V> VecMap<String, V> {
    /// The value kept for `key`, made by `make` when there is none; a map
    /// already holding `limit` values is emptied first (a bounded cache).
    pub fn cached(&mut self, key: &str, limit: usize, make: impl FnOnce() -> V) -> Option<&V> {
        if !self.contains_key(key) {
            if self.len() >= limit {
                self.clear();
            }
            self.insert(key.to_owned(), make());
        }
        self.get(key)
    }
}

impl<T> Default for Queue<T> {
    fn default() -> Self {
        Queue { items: Vec::new() }
    }
}

impl<T> From<Vec<T>> for Queue<T> {
    fn from(items: Vec<T>) -> Self {
        Queue { items }
    }
}

impl<T> Queue<T> {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    pub fn push_back(&mut self, item: T) {
        self.items.push(item);
    }

    pub fn front(&self) -> Option<&T> {
        self.items.first()
    }

    pub fn pop_front(&mut self) -> Option<T> {
        self.remove(0)
    }

    /// Takes out the item at `index`, if there is one.
    pub fn remove(&mut self, index: usize) -> Option<T> {
        (index < self.items.len()).then(|| self.items.remove(index))
    }

    pub fn iter(&self) -> core::slice::Iter<'_, T> {
        self.items.iter()
    }

    pub fn retain(&mut self, keep: impl FnMut(&T) -> bool) {
        self.items.retain(keep);
    }

    pub fn clear(&mut self) {
        self.items.clear();
    }

    /// Takes every item out, front first.
    pub fn drain(&mut self, all: core::ops::RangeFull) -> alloc::vec::Drain<'_, T> {
        self.items.drain(all)
    }
}

/// Sorts in place in O(n log n) with one small loop (not stable): the
/// standard library's sorts cost kilobytes of wasm per element type.
pub fn heap_sort<T: Ord>(items: &mut [T]) {
    let len = items.len();
    for start in (0..len / 2).rev() {
        sift_down(items, start, len);
    }
    for end in (1..len).rev() {
        items.swap(0, end);
        sift_down(items, 0, end);
    }
}

/// Restores the max-heap below `root` in `items[..end]`.
fn sift_down<T: Ord>(items: &mut [T], mut root: usize, end: usize) {
    loop {
        let mut child = 2 * root + 1;
        if child >= end {
            return;
        }
        if child + 1 < end && items.get(child) < items.get(child + 1) {
            child += 1;
        }
        if items.get(root) >= items.get(child) {
            return;
        }
        items.swap(root, child);
        root = child;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cached_makes_each_value_once_and_empties_a_full_map() {
        let mut map: VecMap<String, u32> = VecMap::new();
        let mut made = 0;
        for key in ["a", "b", "a"] {
            map.cached(key, 2, || {
                made += 1;
                made
            });
        }
        assert_eq!((made, map.get("a"), map.get("b")), (2, Some(&1), Some(&2)));
        assert_eq!(map.cached("c", 2, || 9), Some(&9));
        assert_eq!((map.len(), map.get("a")), (1, None), "emptied when full");
    }

    #[test]
    fn map_behaves_like_a_map() {
        let mut map: VecMap<String, u32> = VecMap::new();
        assert!(map.is_empty());
        assert_eq!(map.insert("a".into(), 1), None);
        assert_eq!(map.insert("b".into(), 2), None);
        assert_eq!(map.insert("a".into(), 3), Some(1));
        assert_eq!((map.len(), map.is_empty()), (2, false));
        assert_eq!(map.get("a"), Some(&3));
        assert!(map.contains_key("b"));
        map.insert("c".into(), 6);
        if let Some(v) = map.get_mut("b") {
            *v = 7;
        }
        assert_eq!(map.remove("b"), Some(7));
        assert_eq!(map.remove("b"), None);
        let mut keys: Vec<&String> = map.keys().collect();
        keys.sort();
        assert_eq!(keys, ["a", "c"]);
        assert_eq!(map.values().sum::<u32>(), 9);
        assert_eq!(map.iter().count(), 2);
        map.clear();
        assert!(map.is_empty());
        let map: VecMap<u8, u8> = [(1, 1), (2, 2), (1, 3)].into_iter().collect();
        assert_eq!((map.len(), map.get(&1)), (2, Some(&3)));
    }

    #[test]
    fn queue_is_first_in_first_out() {
        let mut queue: Queue<u32> = Queue::new();
        assert_eq!(queue.pop_front(), None);
        for i in 0..5 {
            queue.push_back(i);
        }
        assert_eq!(queue.pop_front(), Some(0));
        assert_eq!(queue.remove(1), Some(2));
        assert_eq!(queue.remove(9), None);
        queue.retain(|&i| i != 3);
        assert_eq!(queue.iter().copied().collect::<Vec<_>>(), [1, 4]);
        assert_eq!(queue.len(), 2);
        let all: Vec<u32> = queue.drain(..).collect();
        assert_eq!(all, [1, 4]);
        assert!(queue.is_empty());
        let queue: Queue<u32> = vec![7, 8].into();
        assert_eq!(queue.len(), 2);
    }

    #[test]
    fn heap_sort_sorts() {
        let mut state = 12345u64;
        for len in 0..200 {
            let mut items: Vec<(u64, usize)> = (0..len)
                .map(|i| {
                    state = state.wrapping_mul(6364136223846793005).wrapping_add(1);
                    ((state >> 60) % 7, i)
                })
                .collect();
            let mut want = items.clone();
            want.sort();
            heap_sort(&mut items);
            assert_eq!(items, want);
        }
    }
}
