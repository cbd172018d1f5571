//! A JSON object: [`Map`], its entries in insertion order.

use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;
use core::mem;

use super::Value;
use crate::vecmap::heap_sort;

/// Objects up to this size look for a repeated key pairwise (no allocation);
/// bigger ones sort their keys, so a hostile object stays O(n log n).
const PAIRWISE_LIMIT: usize = 16;

/// A JSON object: entries with unique keys, in insertion order (a key
/// inserted again keeps its first place and takes the new value).
///
/// Lookups scan the entries: objects on the bridge's paths are small, and
/// where a hostile one may be large (parsing, collecting), duplicate keys
/// are found by sorting instead ([`Map::from_entries`]).
#[derive(Clone, Default)]
pub struct Map {
    entries: Vec<(String, Value)>,
}

impl Map {
    pub fn new() -> Map {
        Map::default()
    }

    pub fn with_capacity(capacity: usize) -> Map {
        Map {
            entries: Vec::with_capacity(capacity),
        }
    }

    /// The entries, a repeated key keeping its first position and its last
    /// value (what inserting them one by one gives), in O(n log n).
    pub fn from_entries(entries: Vec<(String, Value)>) -> Map {
        if entries.len() <= PAIRWISE_LIMIT && !has_repeated_key(&entries) {
            return Map { entries };
        }
        // (key, index) sorted: each key's entries side by side, in input order.
        let mut order: Vec<(&[u8], usize)> = Vec::with_capacity(entries.len());
        for (i, (key, _)) in entries.iter().enumerate() {
            order.push((key.as_bytes(), i));
        }
        heap_sort(&mut order);
        // Per entry: the index of the first entry with its key.
        let mut first_of = vec![0; entries.len()];
        let mut prev: Option<(&[u8], usize)> = None;
        for &(key, i) in &order {
            let first = match prev {
                Some((k, first)) if k == key => first,
                _ => i,
            };
            prev = Some((key, first));
            if let Some(slot) = first_of.get_mut(i) {
                *slot = first;
            }
        }
        drop(order);
        // One pass in input order: an entry with a new key is kept (and
        // `first_of` of it becomes its place in `kept`), a repeated key's
        // value replaces the kept one's, so the last one stays.
        let mut kept: Vec<(String, Value)> = Vec::with_capacity(entries.len());
        for (i, (key, value)) in entries.into_iter().enumerate() {
            let first = first_of.get(i).copied().unwrap_or(i);
            if first == i {
                if let Some(slot) = first_of.get_mut(i) {
                    *slot = kept.len();
                }
                kept.push((key, value));
            } else if let Some((_, slot)) = first_of.get(first).and_then(|&at| kept.get_mut(at)) {
                *slot = value;
            }
        }
        Map { entries: kept }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    fn position(&self, key: &str) -> Option<usize> {
        self.entries.iter().position(|(k, _)| k == key)
    }

    pub fn get(&self, key: &str) -> Option<&Value> {
        self.entries.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    pub fn get_mut(&mut self, key: &str) -> Option<&mut Value> {
        self.entries
            .iter_mut()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v)
    }

    pub fn contains_key(&self, key: &str) -> bool {
        self.position(key).is_some()
    }

    /// Adds an entry at the end, or replaces the value of the key in its
    /// place; returns the value replaced.
    pub fn insert(&mut self, key: String, value: Value) -> Option<Value> {
        match self.get_mut(&key) {
            Some(slot) => Some(mem::replace(slot, value)),
            None => {
                self.entries.push((key, value));
                None
            }
        }
    }

    /// Takes an entry out; the others keep their order.
    pub fn remove(&mut self, key: &str) -> Option<Value> {
        let at = self.position(key)?;
        Some(self.entries.remove(at).1)
    }

    pub fn clear(&mut self) {
        self.entries.clear();
    }

    pub fn retain(&mut self, mut keep: impl FnMut(&String, &mut Value) -> bool) {
        self.entries.retain_mut(|(k, v)| keep(k, v));
    }

    pub fn iter(&self) -> Iter<'_> {
        Iter(self.entries.iter())
    }

    pub fn iter_mut(&mut self) -> IterMut<'_> {
        IterMut(self.entries.iter_mut())
    }

    pub fn keys(&self) -> impl DoubleEndedIterator<Item = &String> + ExactSizeIterator + '_ {
        self.entries.iter().map(|(k, _)| k)
    }

    pub fn values(&self) -> impl DoubleEndedIterator<Item = &Value> + ExactSizeIterator + '_ {
        self.entries.iter().map(|(_, v)| v)
    }

    pub fn values_mut(
        &mut self,
    ) -> impl DoubleEndedIterator<Item = &mut Value> + ExactSizeIterator + '_ {
        self.entries.iter_mut().map(|(_, v)| v)
    }
}

/// True when two entries share a key (pairwise: for small objects only).
fn has_repeated_key(entries: &[(String, Value)]) -> bool {
    for (i, (key, _)) in entries.iter().enumerate() {
        for (k, _) in entries.get(..i).unwrap_or_default() {
            if k == key {
                return true;
            }
        }
    }
    false
}

/// Like serde_json's (and a map's): the same keys with equal values, in any
/// order. Pairwise while the keys line up, then by lookup (quadratic only for
/// big objects in different orders; the schema's equality is `schema::num`'s).
impl PartialEq for Map {
    fn eq(&self, other: &Map) -> bool {
        if self.len() != other.len() {
            return false;
        }
        let mut pairs = self.entries.iter().zip(&other.entries);
        for ((k, v), (k2, v2)) in pairs.by_ref() {
            if k != k2 {
                return self
                    .iter()
                    .all(|(k, v)| other.get(k).is_some_and(|v2| v == v2));
            }
            if v != v2 {
                return false;
            }
        }
        true
    }
}

impl core::fmt::Debug for Map {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl FromIterator<(String, Value)> for Map {
    fn from_iter<I: IntoIterator<Item = (String, Value)>>(entries: I) -> Map {
        Map::from_entries(entries.into_iter().collect())
    }
}

impl Extend<(String, Value)> for Map {
    fn extend<I: IntoIterator<Item = (String, Value)>>(&mut self, entries: I) {
        let mut all = mem::take(&mut self.entries);
        all.extend(entries);
        *self = Map::from_entries(all);
    }
}

impl IntoIterator for Map {
    type Item = (String, Value);
    type IntoIter = vec::IntoIter<(String, Value)>;

    fn into_iter(self) -> Self::IntoIter {
        self.entries.into_iter()
    }
}

impl<'a> IntoIterator for &'a Map {
    type Item = (&'a String, &'a Value);
    type IntoIter = Iter<'a>;

    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

impl<'a> IntoIterator for &'a mut Map {
    type Item = (&'a String, &'a mut Value);
    type IntoIter = IterMut<'a>;

    fn into_iter(self) -> IterMut<'a> {
        self.iter_mut()
    }
}

/// The entries of a [`Map`], in order.
#[derive(Clone)]
pub struct Iter<'a>(core::slice::Iter<'a, (String, Value)>);

impl<'a> Iterator for Iter<'a> {
    type Item = (&'a String, &'a Value);

    fn next(&mut self) -> Option<Self::Item> {
        self.0.next().map(|(k, v)| (k, v))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.0.size_hint()
    }
}

impl DoubleEndedIterator for Iter<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        self.0.next_back().map(|(k, v)| (k, v))
    }
}

impl ExactSizeIterator for Iter<'_> {}

/// The entries of a [`Map`], in order, values mutable.
pub struct IterMut<'a>(core::slice::IterMut<'a, (String, Value)>);

impl<'a> Iterator for IterMut<'a> {
    type Item = (&'a String, &'a mut Value);

    fn next(&mut self) -> Option<Self::Item> {
        self.0.next().map(|(k, v)| (&*k, v))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.0.size_hint()
    }
}

impl DoubleEndedIterator for IterMut<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        self.0.next_back().map(|(k, v)| (&*k, v))
    }
}

impl ExactSizeIterator for IterMut<'_> {}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::format;
    use alloc::string::ToString;

    /// What inserting the entries one by one gives: the reference.
    fn inserted(entries: &[(String, Value)]) -> Vec<(String, Value)> {
        let mut map = Map::new();
        for (key, value) in entries {
            map.insert(key.clone(), value.clone());
        }
        map.into_iter().collect()
    }

    #[test]
    fn from_entries_is_inserting_one_by_one() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        for len in 0..120 {
            for spread in [1, 3, 20, 200] {
                let entries: Vec<(String, Value)> = (0..len)
                    .map(|i| {
                        state ^= state << 13;
                        state ^= state >> 7;
                        state ^= state << 17;
                        (format!("k{}", state % spread), Value::from(i))
                    })
                    .collect();
                let want = inserted(&entries);
                let got: Vec<_> = Map::from_entries(entries.clone()).into_iter().collect();
                assert_eq!(got, want, "{entries:?}");
                let collected: Map = entries.into_iter().collect();
                assert_eq!(collected.into_iter().collect::<Vec<_>>(), want);
            }
        }
    }

    #[test]
    fn a_map_keeps_insertion_order() {
        let mut map = Map::new();
        assert!(map.is_empty());
        for key in ["z", "a", "m"] {
            assert_eq!(map.insert(key.into(), Value::from(key)), None);
        }
        assert_eq!(
            map.insert("a".into(), Value::from(1)),
            Some(Value::from("a"))
        );
        assert_eq!(
            map.keys().map(String::as_str).collect::<Vec<_>>(),
            ["z", "a", "m"]
        );
        assert_eq!(map.get("a"), Some(&Value::from(1)));
        assert!(map.contains_key("m") && !map.contains_key("q"));
        if let Some(v) = map.get_mut("m") {
            *v = Value::Null;
        }
        assert_eq!(map.remove("z"), Some(Value::from("z")));
        assert_eq!(map.remove("z"), None);
        assert_eq!(
            map.keys().map(String::as_str).collect::<Vec<_>>(),
            ["a", "m"]
        );
        map.extend([
            ("b".to_string(), Value::from(2)),
            ("a".to_string(), Value::from(3)),
        ]);
        assert_eq!(
            Value::Object(map.clone()).to_string(),
            r#"{"a":3,"m":null,"b":2}"#
        );
        map.retain(|k, _| k != "m");
        assert_eq!(map.len(), 2);
        for (_, v) in map.iter_mut() {
            *v = Value::Bool(true);
        }
        assert!(map.values().all(|v| *v == true));
        assert_eq!(map.iter().next_back().map(|(k, _)| k.as_str()), Some("b"));
        map.clear();
        assert!(map.is_empty());
    }

    #[test]
    fn maps_are_equal_whatever_their_order() {
        let ab: Map = [("a", 1), ("b", 2)]
            .into_iter()
            .map(|(k, v)| (k.to_string(), Value::from(v)))
            .collect();
        let ba: Map = [("b", 2), ("a", 1)]
            .into_iter()
            .map(|(k, v)| (k.to_string(), Value::from(v)))
            .collect();
        let ac: Map = [("a", 1), ("c", 2)]
            .into_iter()
            .map(|(k, v)| (k.to_string(), Value::from(v)))
            .collect();
        assert_eq!(ab, ba);
        assert_ne!(ab, ac);
        assert_ne!(ab, Map::new());
        assert_eq!(format!("{ab:?}"), r#"{"a": Number(1), "b": Number(2)}"#);
    }
}
