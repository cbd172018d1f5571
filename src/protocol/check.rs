//! Structural checks over parsed JSON that collect issues with dotted paths.
//!
//! Every check here mirrors a keyword of the published JSON Schemas
//! (`schemas.rs`); the Node differential test keeps the two in agreement.

use crate::json::{is_whole, Map, Value};
use crate::prelude::*;

use super::result::Issue;

/// Joins a dotted path (`""` is the root).
pub(crate) fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_owned()
    } else {
        format!("{path}.{key}")
    }
}

/// A JSON Schema `integer` with `minimum: 0`: any finite number ≥ 0 without a
/// fractional part (so `7.0` counts); values past `u64::MAX` saturate.
pub(crate) fn non_negative_integer(value: &Value) -> Option<u64> {
    let number = value.as_number()?;
    if let Some(n) = number.as_u64() {
        return Some(n);
    }
    if number.is_i64() {
        return None; // a negative integer
    }
    let float = number.as_f64()?;
    if float >= 0.0 && is_whole(float) {
        // `as` saturates for floats beyond u64::MAX, which is what we want.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        Some(float as u64)
    } else {
        None
    }
}

/// Collects issues while a value is walked.
#[derive(Debug, Default)]
pub(crate) struct Checker {
    pub(crate) issues: Vec<Issue>,
}

impl Checker {
    pub(crate) fn fail(&mut self, path: &str, message: impl Into<String>) {
        self.issues.push(Issue {
            path: path.to_owned(),
            message: message.into(),
        });
    }

    /// `type: object`.
    pub(crate) fn object<'a>(&mut self, value: &'a Value, path: &str) -> Option<Obj<'a>> {
        match value.as_object() {
            Some(map) => Some(Obj {
                map,
                path: path.to_owned(),
            }),
            None => {
                self.fail(path, "must be object");
                None
            }
        }
    }
}

/// An object being checked, with its path.
pub(crate) struct Obj<'a> {
    pub(crate) map: &'a Map,
    pub(crate) path: String,
}

impl<'a> Obj<'a> {
    pub(crate) fn path_of(&self, key: &str) -> String {
        join(&self.path, key)
    }

    /// `additionalProperties: false` against the listed keys.
    pub(crate) fn deny_unknown(&self, known: &[&str], checker: &mut Checker) {
        for key in self.map.keys() {
            if !known.contains(&key.as_str()) {
                checker.fail(&self.path_of(key), "must NOT have additional properties");
            }
        }
    }

    /// The first key not in `known`, if any.
    pub(crate) fn first_unknown(&self, known: &[&str]) -> Option<&'a str> {
        self.map
            .keys()
            .map(String::as_str)
            .find(|key| !known.contains(key))
    }

    fn required(&self, key: &str, checker: &mut Checker) -> Option<&'a Value> {
        let value = self.map.get(key);
        if value.is_none() {
            checker.fail(
                &self.path_of(key),
                format!("must have required property '{key}'"),
            );
        }
        value
    }

    /// `type: string` (with `minLength: 1` when `non_empty`), required.
    pub(crate) fn string(&self, key: &str, non_empty: bool, c: &mut Checker) -> Option<String> {
        let value = self.required(key, c)?;
        self.check_string(key, value, non_empty, c)
    }

    /// `type: string`, optional.
    pub(crate) fn opt_string(&self, key: &str, c: &mut Checker) -> Result<Option<String>, ()> {
        match self.map.get(key) {
            None => Ok(None),
            Some(value) => self.check_string(key, value, false, c).map(Some).ok_or(()),
        }
    }

    fn check_string(
        &self,
        key: &str,
        value: &Value,
        non_empty: bool,
        c: &mut Checker,
    ) -> Option<String> {
        match value.as_str() {
            Some(text) if non_empty && text.is_empty() => {
                c.fail(&self.path_of(key), "must NOT have fewer than 1 characters");
                None
            }
            Some(text) => Some(text.to_owned()),
            None => {
                c.fail(&self.path_of(key), "must be string");
                None
            }
        }
    }

    /// `type: integer, minimum: 0`, required.
    pub(crate) fn rev(&self, key: &str, c: &mut Checker) -> Option<u64> {
        let value = self.required(key, c)?;
        self.check_rev(key, value, c)
    }

    /// `type: integer, minimum: 0`, optional.
    pub(crate) fn opt_rev(&self, key: &str, c: &mut Checker) -> Result<Option<u64>, ()> {
        match self.map.get(key) {
            None => Ok(None),
            Some(value) => self.check_rev(key, value, c).map(Some).ok_or(()),
        }
    }

    fn check_rev(&self, key: &str, value: &Value, c: &mut Checker) -> Option<u64> {
        let rev = non_negative_integer(value);
        if rev.is_none() {
            c.fail(&self.path_of(key), "must be an integer >= 0");
        }
        rev
    }

    /// `type: boolean`, optional.
    pub(crate) fn opt_bool(&self, key: &str, c: &mut Checker) -> Result<Option<bool>, ()> {
        match self.map.get(key) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(_) => {
                c.fail(&self.path_of(key), "must be boolean");
                Err(())
            }
        }
    }

    /// `type: array`, required.
    pub(crate) fn array(&self, key: &str, c: &mut Checker) -> Option<&'a Vec<Value>> {
        let value = self.required(key, c)?;
        self.check_array(key, value, c)
    }

    /// `type: array`, optional.
    pub(crate) fn opt_array(
        &self,
        key: &str,
        c: &mut Checker,
    ) -> Result<Option<&'a Vec<Value>>, ()> {
        match self.map.get(key) {
            None => Ok(None),
            Some(value) => self.check_array(key, value, c).map(Some).ok_or(()),
        }
    }

    fn check_array(&self, key: &str, value: &'a Value, c: &mut Checker) -> Option<&'a Vec<Value>> {
        let array = value.as_array();
        if array.is_none() {
            c.fail(&self.path_of(key), "must be array");
        }
        array
    }

    /// Any JSON, required.
    pub(crate) fn any(&self, key: &str, c: &mut Checker) -> Option<&'a Value> {
        self.required(key, c)
    }

    /// A string from a fixed set, required.
    pub(crate) fn one_of<T>(
        &self,
        key: &str,
        parse: impl Fn(&str) -> Option<T>,
        c: &mut Checker,
    ) -> Option<T> {
        let value = self.required(key, c)?;
        let parsed = value.as_str().and_then(parse);
        if parsed.is_none() {
            c.fail(
                &self.path_of(key),
                "must be equal to one of the allowed values",
            );
        }
        parsed
    }
}
