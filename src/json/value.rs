//! A JSON value: [`Value`].

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use super::{Map, Number};

/// Any JSON value. Compared like serde_json's `Value` (objects regardless of
/// key order, `1 != 1.0`); JSON Schema's equality is `schema::num`'s.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum Value {
    #[default]
    Null,
    Bool(bool),
    Number(Number),
    String(String),
    Array(Vec<Value>),
    Object(Map),
}

/// What [`Value::get`] and `value[..]` look up: an object's key (`&str`,
/// `String`) or an array's index (`usize`).
pub trait Key: private::Sealed {
    #[doc(hidden)]
    fn lookup<'v>(&self, value: &'v Value) -> Option<&'v Value>;
}

mod private {
    pub trait Sealed {}
    impl Sealed for usize {}
    impl Sealed for str {}
    impl Sealed for alloc::string::String {}
    impl<T: Sealed + ?Sized> Sealed for &T {}
}

impl Key for usize {
    fn lookup<'v>(&self, value: &'v Value) -> Option<&'v Value> {
        value.as_array()?.get(*self)
    }
}

impl Key for str {
    fn lookup<'v>(&self, value: &'v Value) -> Option<&'v Value> {
        value.as_object()?.get(self)
    }
}

impl Key for String {
    fn lookup<'v>(&self, value: &'v Value) -> Option<&'v Value> {
        self.as_str().lookup(value)
    }
}

impl<T: Key + ?Sized> Key for &T {
    fn lookup<'v>(&self, value: &'v Value) -> Option<&'v Value> {
        (**self).lookup(value)
    }
}

static NULL: Value = Value::Null;

/// `value["key"]`, `value[0]`: like [`Value::get`], but `null` when there is
/// nothing there (never a panic).
impl<K: Key> core::ops::Index<K> for Value {
    type Output = Value;

    fn index(&self, key: K) -> &Value {
        key.lookup(self).unwrap_or(&NULL)
    }
}

impl Value {
    /// An object's value at a key, or an array's item at an index.
    pub fn get<K: Key>(&self, key: K) -> Option<&Value> {
        key.lookup(self)
    }

    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    pub fn is_boolean(&self) -> bool {
        matches!(self, Value::Bool(_))
    }

    pub fn is_number(&self) -> bool {
        matches!(self, Value::Number(_))
    }

    pub fn is_string(&self) -> bool {
        matches!(self, Value::String(_))
    }

    pub fn is_array(&self) -> bool {
        matches!(self, Value::Array(_))
    }

    pub fn is_object(&self) -> bool {
        matches!(self, Value::Object(_))
    }

    pub fn is_u64(&self) -> bool {
        self.as_number().is_some_and(Number::is_u64)
    }

    pub fn is_i64(&self) -> bool {
        self.as_number().is_some_and(Number::is_i64)
    }

    pub fn is_f64(&self) -> bool {
        self.as_number().is_some_and(Number::is_f64)
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }

    pub fn as_number(&self) -> Option<&Number> {
        match self {
            Value::Number(n) => Some(n),
            _ => None,
        }
    }

    pub fn as_u64(&self) -> Option<u64> {
        self.as_number()?.as_u64()
    }

    pub fn as_i64(&self) -> Option<i64> {
        self.as_number()?.as_i64()
    }

    pub fn as_f64(&self) -> Option<f64> {
        self.as_number()?.as_f64()
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_array(&self) -> Option<&Vec<Value>> {
        match self {
            Value::Array(items) => Some(items),
            _ => None,
        }
    }

    pub fn as_array_mut(&mut self) -> Option<&mut Vec<Value>> {
        match self {
            Value::Array(items) => Some(items),
            _ => None,
        }
    }

    pub fn as_object(&self) -> Option<&Map> {
        match self {
            Value::Object(map) => Some(map),
            _ => None,
        }
    }

    pub fn as_object_mut(&mut self) -> Option<&mut Map> {
        match self {
            Value::Object(map) => Some(map),
            _ => None,
        }
    }

    /// Takes the value out, leaving `null`.
    pub fn take(&mut self) -> Value {
        core::mem::take(self)
    }
}

/// Compact JSON text, as [`super::to_text`] writes it.
impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&super::to_text(self))
    }
}

// Comparisons with plain Rust values, as serde_json has them: a string
// equals a string value, a number a number of that value.

impl PartialEq<str> for Value {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == Some(other)
    }
}

impl PartialEq<&str> for Value {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == Some(*other)
    }
}

impl PartialEq<String> for Value {
    fn eq(&self, other: &String) -> bool {
        self.as_str() == Some(other.as_str())
    }
}

impl PartialEq<bool> for Value {
    fn eq(&self, other: &bool) -> bool {
        self.as_bool() == Some(*other)
    }
}

impl PartialEq<f64> for Value {
    fn eq(&self, other: &f64) -> bool {
        self.as_f64() == Some(*other)
    }
}

macro_rules! eq_integer {
    ($($t:ty => $as:ident: $wide:ty)*) => {$(
        impl PartialEq<$t> for Value {
            fn eq(&self, other: &$t) -> bool {
                self.$as() == Some(<$wide>::from(*other))
            }
        }
    )*};
}

eq_integer! {
    u8 => as_u64: u64
    u16 => as_u64: u64
    u32 => as_u64: u64
    u64 => as_u64: u64
    i8 => as_i64: i64
    i16 => as_i64: i64
    i32 => as_i64: i64
    i64 => as_i64: i64
}

impl PartialEq<usize> for Value {
    fn eq(&self, other: &usize) -> bool {
        self.as_u64()
            .is_some_and(|n| u64::try_from(*other) == Ok(n))
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Value {
        Value::Bool(b)
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::String(s.into())
    }
}

impl From<String> for Value {
    fn from(s: String) -> Value {
        Value::String(s)
    }
}

impl From<&String> for Value {
    fn from(s: &String) -> Value {
        Value::String(s.clone())
    }
}

impl From<Number> for Value {
    fn from(n: Number) -> Value {
        Value::Number(n)
    }
}

impl From<Map> for Value {
    fn from(map: Map) -> Value {
        Value::Object(map)
    }
}

impl<T: Into<Value>> From<Vec<T>> for Value {
    fn from(items: Vec<T>) -> Value {
        Value::Array(items.into_iter().map(Into::into).collect())
    }
}

/// `None` is `null`.
impl<T: Into<Value>> From<Option<T>> for Value {
    fn from(value: Option<T>) -> Value {
        value.map_or(Value::Null, Into::into)
    }
}

macro_rules! from_integer {
    ($($t:ty)*) => {$(
        impl From<$t> for Value {
            fn from(n: $t) -> Value {
                Value::Number(n.into())
            }
        }
    )*};
}

from_integer!(u8 u16 u32 u64 usize i8 i16 i32 i64 isize);

impl<T: Into<Value>> FromIterator<T> for Value {
    fn from_iter<I: IntoIterator<Item = T>>(items: I) -> Value {
        Value::Array(items.into_iter().map(Into::into).collect())
    }
}

/// An object with these entries in this order (a repeated key keeps its
/// first place and its last value, as [`Map::insert`] does).
pub fn obj(entries: Vec<(&str, Value)>) -> Value {
    let mut owned = Vec::with_capacity(entries.len());
    for (key, value) in entries {
        owned.push((String::from(key), value));
    }
    Value::Object(Map::from_entries(owned))
}

/// The items of an array, each built by `item`.
/// A plain loop: `collect::<Option<Vec<_>>>()` costs an adapter
/// instantiation per use in the wasm.
pub fn list<T>(value: &Value, item: impl Fn(&Value) -> Option<T>) -> Option<Vec<T>> {
    let items = value.as_array()?;
    let mut out = Vec::with_capacity(items.len());
    for x in items {
        out.push(item(x)?);
    }
    Some(out)
}

/// An array of `item(x)` for each `x`: a plain loop, where `map().collect()`
/// costs an iterator instantiation per element type in the wasm.
pub fn array_of<T>(items: &[T], item: fn(&T) -> Value) -> Value {
    let mut values = Vec::with_capacity(items.len());
    for x in items {
        values.push(item(x));
    }
    Value::Array(values)
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;
    use alloc::vec;

    #[test]
    fn lookups_never_panic() {
        let value = obj(vec![
            ("a", Value::from(vec![1u8, 2])),
            ("s", "text".into()),
            ("n", Value::from(Option::<u64>::None)),
        ]);
        assert_eq!(value["a"][1], 2u64);
        assert_eq!(value.get("a").and_then(|a| a.get(0)), Some(&Value::from(1)));
        assert!(value["a"][9].is_null());
        assert!(value["missing"]["deeper"][0].is_null());
        assert!(value[0].is_null());
        assert!(Value::from("x")["a"].is_null());
        assert_eq!(value["s"], "text");
        assert_eq!(value[&"s".to_string()], "text");
        assert!(value["n"].is_null());
        assert_eq!(value.to_string(), r#"{"a":[1,2],"s":"text","n":null}"#);
    }

    #[test]
    fn accessors_and_comparisons() {
        let n = Value::from(-3i32);
        assert!(n.is_number() && n.is_i64() && !n.is_u64() && !n.is_f64());
        assert_eq!(
            (n.as_i64(), n.as_u64(), n.as_f64()),
            (Some(-3), None, Some(-3.0))
        );
        assert_eq!(n, -3i64);
        assert_ne!(n, 3u64);
        let f = super::super::parse("2.50").unwrap_or_default();
        assert!(f.is_f64() && f == 2.5 && super::super::to_text(&f) == "2.50");
        assert_ne!(f, Value::from(2u8));
        assert_eq!(Value::from(true), true);
        assert_eq!(Value::from(7usize), 7usize);
        let mut v = Value::from(vec!["a", "b"]);
        assert!(v.is_array() && !v.is_object() && !v.is_string() && !v.is_boolean());
        if let Some(items) = v.as_array_mut() {
            items.push(Value::Null);
        }
        assert_eq!(v.take().as_array().map(Vec::len), Some(3));
        assert!(v.is_null());
        let collected: Value = [1u8, 2].into_iter().collect();
        assert_eq!(collected.to_string(), "[1,2]");
        assert_eq!(
            obj(vec![("a", 1.into()), ("a", 2.into())]).to_string(),
            r#"{"a":2}"#
        );
    }
}
