//! JSON value equality for `const`, `enum` and `uniqueItems`, compared
//! structurally with the work charged to the validation's [`Work`] budget.
//!
//! Two values are equal when JSON Schema says so: numbers by value (`1`,
//! `1.0` and `1e0` are one, see [`num::compare`]), strings by their
//! characters, arrays item by item, objects as unordered sets of entries.
//! Values nested deeper than [`MAX_VALUE_DEPTH`] equal nothing, not even
//! themselves: the safe direction for all three keywords.
//!
//! Large `enum`s and `uniqueItems` look values up by a structural hash (equal
//! values hash alike: numbers by value, objects whatever their key order), so
//! neither compares every pair: an `enum` compares an instance with the
//! members of its hash only, and `uniqueItems` compares each item only with
//! the earlier distinct values of its hash. Colliding values that differ
//! (rare by chance, possible on purpose: the hash's seed is fixed) cost a
//! comparison each, charged to the budget like every other comparison.

use crate::prelude::*;
use core::cmp::Ordering;
use core::hash::{BuildHasher, Hasher};
use foldhash::fast::FixedState;
use serde_json::Value;

use super::num::{self, Num, TWO_POW_64};
use super::{OutOfBudget, Work};
use crate::vecmap::heap_sort;
use hashbrown::HashMap;

/// Maximum nesting followed by [`equal`]; deeper values compare as unequal
/// (never as equal).
pub(super) const MAX_VALUE_DEPTH: usize = 512;

/// Nesting hashed by [`hash`] (it recurses; agent messages nest at most 64
/// levels): deeper values add only their type and size, so equal values still
/// hash alike, and values that differ only that deep collide and are compared.
const HASH_DEPTH: usize = 64;

/// Work units per value visited by [`equal`] or [`hash`] (bytes of strings
/// and keys are charged on top, one unit each).
const VALUE_UNITS: usize = 8;

/// Work units of one lookup in [`find_duplicate`]'s table.
const LOOKUP_UNITS: usize = 32;

/// `enum`s of more values than this are looked up by hash; smaller ones (and
/// `const`) are compared member by member.
pub(super) const LINEAR_ENUM: usize = 8;

/// The hasher's seed: fixed, so that a compiled schema's hashes stay valid
/// and the core draws no randomness.
const SEED: u64 = 0x243f_6a88_85a3_08d3;

/// JSON Schema equality of `a` and `b`, charged to `work`. Walks both
/// values with a list of pairs still to compare (no recursion).
pub(super) fn equal(a: &Value, b: &Value, work: &mut Work) -> Result<bool, OutOfBudget> {
    let mut pending: Vec<(&Value, &Value, usize)> = Vec::new();
    let (mut a, mut b, mut depth) = (a, b, 0usize);
    loop {
        if depth > MAX_VALUE_DEPTH {
            return Ok(false);
        }
        work.charge(VALUE_UNITS)?;
        let next = depth + 1;
        let same = match (a, b) {
            (Value::Null, Value::Null) => true,
            (Value::Bool(x), Value::Bool(y)) => x == y,
            (Value::Number(x), Value::Number(y)) => num::compare(x, y) == Some(Ordering::Equal),
            (Value::String(x), Value::String(y)) => {
                x.len() == y.len() && {
                    work.charge(x.len())?;
                    x == y
                }
            }
            (Value::Array(x), Value::Array(y)) => {
                x.len() == y.len() && {
                    work.charge(x.len())?;
                    for (p, q) in x.iter().zip(y) {
                        pending.push((p, q, next));
                    }
                    true
                }
            }
            (Value::Object(x), Value::Object(y)) => {
                x.len() == y.len() && {
                    for (key, p) in x {
                        // The lookup hashes the key and compares it.
                        work.charge(VALUE_UNITS.saturating_add(key.len().saturating_mul(2)))?;
                        let Some(q) = y.get(key) else {
                            return Ok(false);
                        };
                        pending.push((p, q, next));
                    }
                    true
                }
            }
            _ => false,
        };
        if !same {
            return Ok(false);
        }
        match pending.pop() {
            Some((x, y, d)) => (a, b, depth) = (x, y, d),
            None => return Ok(true),
        }
    }
}

/// A structural hash of `value`: equal values (by [`equal`]) hash alike.
pub(super) fn hash(value: &Value, work: &mut Work) -> Result<u64, OutOfBudget> {
    hash_at(value, work, 0)
}

fn hash_at(value: &Value, work: &mut Work, depth: usize) -> Result<u64, OutOfBudget> {
    let mut h = FixedState::with_seed(SEED).build_hasher();
    work.charge(VALUE_UNITS)?;
    let next = depth + 1;
    if depth >= HASH_DEPTH {
        let (tag, size) = match value {
            Value::Array(items) => (7, items.len()),
            Value::Object(map) => (8, map.len()),
            _ => (0, 0),
        };
        if tag != 0 {
            h.write_u8(tag);
            h.write_usize(size);
            return Ok(h.finish());
        }
    }
    match value {
        Value::Null => h.write_u8(0),
        Value::Bool(b) => h.write_u8(1 + u8::from(*b)),
        Value::Number(n) => match num::num(n) {
            Num::Int((sign, k)) => {
                h.write_u8(3 + u8::from(sign));
                h.write_u64(k);
            }
            // An integral float below 2^64 in magnitude equals that integer
            // (larger ones equal no integer, and equal floats have equal bits).
            Num::Float(f) if f.abs() < TWO_POW_64 && num::is_whole(f) => {
                let (sign, k) = num::float_key(f);
                h.write_u8(3 + u8::from(sign));
                h.write_u64(k);
            }
            Num::Float(f) => {
                h.write_u8(5);
                h.write_u64(f.to_bits());
            }
        },
        Value::String(s) => {
            work.charge(s.len())?;
            h.write_u8(6);
            h.write(s.as_bytes());
            h.write_usize(s.len());
        }
        Value::Array(items) => {
            h.write_u8(7);
            h.write_usize(items.len());
            for item in items {
                h.write_u64(hash_at(item, work, next)?);
            }
        }
        Value::Object(map) => {
            // Entries hashed one by one and summed: the key order does not count.
            let mut sum = 0u64;
            for (key, item) in map {
                work.charge(key.len())?;
                let mut entry = FixedState::with_seed(SEED).build_hasher();
                entry.write(key.as_bytes());
                entry.write_usize(key.len());
                entry.write_u64(hash_at(item, work, next)?);
                sum = sum.wrapping_add(entry.finish());
            }
            h.write_u8(8);
            h.write_usize(map.len());
            h.write_u64(sum);
        }
    }
    Ok(h.finish())
}

/// `values`' hashes with their positions, sorted: the lookup table of a
/// large `enum`, built when the schema is compiled (the app's values, not
/// charged to any validation).
pub(super) fn hash_table(values: &[Value]) -> Vec<(u64, usize)> {
    let mut unlimited = Work::unlimited();
    let mut table = Vec::with_capacity(values.len());
    for (i, v) in values.iter().enumerate() {
        table.push((hash(v, &mut unlimited).unwrap_or(0), i));
    }
    heap_sort(&mut table);
    table
}

/// Whether `inst` equals one of `values`. With a `table` (from
/// [`hash_table`]) only the values of `inst`'s hash are compared; without,
/// each value in turn.
pub(super) fn is_member(
    inst: &Value,
    values: &[Value],
    table: Option<&[(u64, usize)]>,
    work: &mut Work,
) -> Result<bool, OutOfBudget> {
    let Some(table) = table else {
        for v in values {
            if equal(inst, v, work)? {
                return Ok(true);
            }
        }
        return Ok(false);
    };
    let h = hash(inst, work)?;
    let start = table.partition_point(|&(t, _)| t < h);
    for &(t, i) in table.get(start..).unwrap_or_default() {
        if t != h {
            break;
        }
        if let Some(v) = values.get(i) {
            if equal(inst, v, work)? {
                return Ok(true);
            }
        }
    }
    Ok(false)
}

/// The first pair `(i, j)`, `i < j`, of equal items (smallest `j`, then `i`).
///
/// The items are visited in order; a table maps each hash to the first item
/// of the last distinct value seen with it, and each such item links to the
/// one before it (the distinct values of one hash, newest first). An item is
/// compared only with those: once when no hashes collide, so the work is
/// linear in the items' size, whatever their order.
pub(super) fn find_duplicate(
    items: &[Value],
    work: &mut Work,
) -> Result<Option<(usize, usize)>, OutOfBudget> {
    let mut newest: HashMap<u64, usize, FixedState> =
        HashMap::with_capacity_and_hasher(items.len(), FixedState::with_seed(SEED));
    // Per item: the first item of the value with its hash seen before its own.
    let mut older: Vec<Option<usize>> = Vec::with_capacity(items.len());
    for (j, item) in items.iter().enumerate() {
        let h = hash(item, work)?;
        work.charge(LOOKUP_UNITS)?;
        let mut link = newest.get(&h).copied();
        while let Some(i) = link {
            if let Some(first) = items.get(i) {
                if equal(first, item, work)? {
                    return Ok(Some((i, j)));
                }
            }
            link = older.get(i).copied().flatten();
        }
        older.push(newest.insert(h, j));
    }
    Ok(None)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;
    use serde_json::json;

    fn eq(a: &Value, b: &Value) -> bool {
        equal(a, b, &mut Work::unlimited()).unwrap()
    }

    fn dup(items: &[Value]) -> Option<(usize, usize)> {
        find_duplicate(items, &mut Work::unlimited()).unwrap()
    }

    /// The equality as a plain pairwise recursion: the reference.
    fn eq_depth(a: &Value, b: &Value, depth: usize) -> bool {
        if depth > MAX_VALUE_DEPTH {
            return false;
        }
        let next = depth.saturating_add(1);
        match (a, b) {
            (Value::Null, Value::Null) => true,
            (Value::Bool(x), Value::Bool(y)) => x == y,
            (Value::Number(x), Value::Number(y)) => num::compare(x, y) == Some(Ordering::Equal),
            (Value::String(x), Value::String(y)) => x == y,
            (Value::Array(x), Value::Array(y)) => {
                x.len() == y.len() && x.iter().zip(y).all(|(p, q)| eq_depth(p, q, next))
            }
            (Value::Object(x), Value::Object(y)) => {
                x.len() == y.len()
                    && x.iter()
                        .all(|(k, v)| y.get(k).is_some_and(|w| eq_depth(v, w, next)))
            }
            _ => false,
        }
    }

    #[test]
    fn duplicates() {
        let many: Vec<Value> = (0..40).map(|i| json!({ "a": i })).collect();
        assert_eq!(dup(&many), None);
        let mut with_dup = many.clone();
        with_dup.push(json!({ "a": 3.0 }));
        assert_eq!(dup(&with_dup), Some((3, 40)));
        assert_eq!(dup(&[json!(1), json!(true)]), None);
        assert_eq!(dup(&[json!([1]), json!([1.0])]), Some((0, 1)));
        assert_eq!(dup(&[json!(2), json!(1), json!(2), json!(1)]), Some((0, 2)));
        assert_eq!(dup(&[json!(2), json!(1), json!(1), json!(2)]), Some((1, 2)));
        assert_eq!(
            dup(&[json!({"a": 1, "b": [2]}), json!({"b": [2.0], "a": 1e0})]),
            Some((0, 1))
        );
    }

    /// Values from a small pool: numbers spelled several ways, strings,
    /// arrays and objects with their keys in either order.
    fn pool_value(state: &mut u64, depth: usize) -> Value {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        let pick = *state % if depth < 3 { 14 } else { 10 };
        let number = |text: &str| serde_json::from_str::<Value>(text).unwrap();
        match pick {
            0 => Value::Null,
            1 => Value::Bool(*state & 16 == 0),
            2 => number(["1", "1.0", "1e0", "10e-1", "0.1e1"][(*state >> 8) as usize % 5]),
            3 => number(["0", "-0", "0.0", "-0.0", "0e5"][(*state >> 8) as usize % 5]),
            4 => number(["-1", "-1.0", "2", "1.5", "15e-1"][(*state >> 8) as usize % 5]),
            5 => number(
                [
                    "18446744073709551615",
                    "18446744073709551616",
                    "1.8446744073709552e19",
                ][(*state >> 8) as usize % 3],
            ),
            6 => number(
                ["-9223372036854775808", "-9223372036854775809", "1e300"]
                    [(*state >> 8) as usize % 3],
            ),
            7 => Value::from(["", "a", "b", "ab"][(*state >> 8) as usize % 4]),
            8 => json!({}),
            9 => json!([]),
            10 | 11 => {
                let len = (*state >> 8) as usize % 3;
                Value::Array((0..len).map(|_| pool_value(state, depth + 1)).collect())
            }
            _ => {
                let (a, b) = (pool_value(state, depth + 1), pool_value(state, depth + 1));
                let entries = if *state & 32 == 0 {
                    vec![("a", a), ("b", b)]
                } else {
                    vec![("b", b), ("a", a)]
                };
                let len = (*state >> 8) as usize % 3;
                Value::Object(
                    entries
                        .into_iter()
                        .take(len)
                        .map(|(k, v)| (k.to_owned(), v))
                        .collect(),
                )
            }
        }
    }

    /// Equality agrees with the pairwise reference, equal values hash
    /// alike, membership by table agrees with membership by scan, and the
    /// duplicate found is the one a pairwise search finds.
    #[test]
    fn structural_equality_is_the_reference_equality() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut equal_pairs = 0;
        let mut work = Work::unlimited();
        for _ in 0..3000 {
            let items: Vec<Value> = (0..6).map(|_| pool_value(&mut state, 0)).collect();
            let table = hash_table(&items[..3]);
            let mut want = None;
            for (j, b) in items.iter().enumerate() {
                for (i, a) in items.iter().enumerate() {
                    let reference = eq_depth(a, b, 0);
                    assert_eq!(eq(a, b), reference, "{a} vs {b}");
                    if reference {
                        assert_eq!(hash(a, &mut work), hash(b, &mut work), "{a} vs {b}");
                    }
                    equal_pairs += usize::from(reference && i != j);
                    if reference && i < j && want.is_none() {
                        want = Some((i, j));
                    }
                }
                let scanned = is_member(b, &items[..3], None, &mut work).unwrap();
                let looked_up = is_member(b, &items[..3], Some(&table), &mut work).unwrap();
                assert_eq!(scanned, items[..3].iter().any(|a| eq_depth(b, a, 0)), "{b}");
                assert_eq!(looked_up, scanned, "{b}");
            }
            assert_eq!(dup(&items), want, "{items:?}");
        }
        assert!(
            equal_pairs > 1000,
            "the pool makes equal pairs: {equal_pairs}"
        );
    }

    /// Values nested past the limit equal nothing (not even themselves);
    /// a leaf exactly `MAX_VALUE_DEPTH` deep still compares.
    #[test]
    fn too_deep_values_are_unequal() {
        let mut deep = json!(1);
        for _ in 0..MAX_VALUE_DEPTH {
            deep = Value::Array(vec![deep]);
        }
        assert!(eq(&deep, &deep.clone()));
        assert_eq!(dup(&[deep.clone(), deep.clone()]), Some((0, 1)));
        deep = Value::Array(vec![deep]);
        assert!(!eq(&deep, &deep.clone()));
        assert_eq!(dup(&[deep.clone(), deep]), None);
    }

    /// Many items, big objects in different key orders: linear-ish work.
    #[test]
    fn big_inputs_cost_work_in_proportion() {
        let many: Vec<Value> = (0..200_000u64).map(Value::from).collect();
        let mut work = Work::unlimited();
        assert_eq!(find_duplicate(&many, &mut work), Ok(None));
        // A hash and a lookup each, no comparison: no two hashes collide.
        assert_eq!(work.spent(), 200_000 * (VALUE_UNITS + LOOKUP_UNITS));
        let keys: Vec<String> = (0..50_000).map(|i| format!("k{i}")).collect();
        let forward = Value::Object(keys.iter().map(|k| (k.clone(), json!(1))).collect());
        let backward = Value::Object(keys.iter().rev().map(|k| (k.clone(), json!(1.0))).collect());
        assert!(eq(&forward, &backward));
        assert_eq!(dup(&[json!(0), forward.clone(), backward]), Some((1, 2)));
        let mut other = keys.clone();
        other[49_999] = "x".into();
        let other = Value::Object(other.iter().map(|k| (k.clone(), json!(1))).collect());
        assert!(!eq(&forward, &other));
    }

    /// Distinct numbers hash apart (an integral float hashes as its
    /// integer, and only those): no comparison is charged.
    #[test]
    fn distinct_numbers_hash_apart() {
        let mut many: Vec<Value> = (0..50_000u64).map(Value::from).collect();
        #[allow(clippy::cast_precision_loss)]
        many.extend((0..50_000u64).map(|i| json!(i as f64 + 0.5)));
        many.extend([
            json!(u64::MAX),
            json!(18_446_744_073_709_551_616.0_f64),
            json!(-1),
            json!(-1.5),
        ]);
        let mut work = Work::unlimited();
        assert_eq!(find_duplicate(&many, &mut work), Ok(None));
        assert_eq!(work.spent(), many.len() * (VALUE_UNITS + LOOKUP_UNITS));
        assert_eq!(dup(&[json!(3), json!(-3.0), json!(3.0)]), Some((0, 2)));
    }

    /// A hash reads the first 64 levels of a value: deeper ones cost nothing.
    #[test]
    fn hashing_reads_64_levels() {
        let wraps: [fn(Value) -> Value; 2] = [|v| json!([v]), |v| json!({ "a": v })];
        for wrap in wraps {
            let mut deep = json!(1);
            for _ in 0..200 {
                deep = wrap(deep);
            }
            let mut work = Work::unlimited();
            assert!(hash(&deep, &mut work).is_ok());
            assert!(work.spent() <= (HASH_DEPTH + 1) * (VALUE_UNITS + 1));
        }
    }

    /// Every comparison is charged: a budget too small for the work stops it.
    #[test]
    fn comparisons_are_charged() {
        let a = Value::String("x".repeat(10_000));
        let mut work = Work::unlimited();
        assert_eq!(equal(&a, &a.clone(), &mut work), Ok(true));
        assert!(work.spent() >= 10_000);
        let mut small = Work::with_limit(5_000);
        assert_eq!(equal(&a, &a.clone(), &mut small), Err(OutOfBudget));
        // Different lengths: no bytes compared.
        let mut work = Work::unlimited();
        assert_eq!(equal(&a, &json!("y"), &mut work), Ok(false));
        assert_eq!(work.spent(), VALUE_UNITS);
        let items: Vec<Value> = (0..1000).map(|i| json!([i, "abc"])).collect();
        let mut small = Work::with_limit(1000);
        assert_eq!(find_duplicate(&items, &mut small), Err(OutOfBudget));
    }
}
