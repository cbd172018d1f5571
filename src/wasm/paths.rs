//! `getPath`, `setPath`, `flatten`: dotted paths (`items.0.name`) into
//! plain objects and arrays. Unsafe or malformed paths are a
//! `ToolmarkError('invalid_path')`; `__proto__`, `prototype` and
//! `constructor` are never walked or written.
//!
//! Bounds, whatever the value (an agent can build a deep draft with one
//! long path): a path has at most [`MAX_PATH_SEGMENTS`] segments and
//! [`MAX_PATH_LENGTH`] characters; `flatten` walks without recursion, at
//! most [`MAX_PATH_SEGMENTS`] levels and [`MAX_FLATTEN_VALUES`] values, and
//! refuses a value that contains itself. Past a bound: `invalid_path`. A
//! page's proxy trap or getter that throws makes the helper throw that
//! error (every object operation here is a `catch` import).

use crate::prelude::*;
use js_sys::{Array, JsString, Object, Reflect, Set};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::error::Failure;
use super::host;

const FORBIDDEN: [&str; 3] = ["__proto__", "prototype", "constructor"];

/// Most segments in a path, and deepest nesting `flatten` walks.
pub const MAX_PATH_SEGMENTS: usize = 1000;

/// Longest path: UTF-16 code units of a path argument, UTF-8 bytes of a
/// path `flatten` writes (the protocol's message limit; no real path is
/// near it).
pub const MAX_PATH_LENGTH: usize = 1 << 20;

/// Most values (containers and leaves) one `flatten` visits: a value that
/// shares its parts (`a = {x: b, y: b}`, `b = {x: c, y: c}`, …) has
/// exponentially many paths.
pub const MAX_FLATTEN_VALUES: usize = 100_000;

fn invalid(message: String) -> Failure {
    Failure::toolmark(crate::protocol::ThrownErrorCode::InvalidPath, message)
}

fn segments(path: &JsValue) -> Result<Vec<String>, Failure> {
    if !path.is_string() {
        let kind = host::string(&path.js_typeof());
        return Err(invalid(format!("path must be a string, not {}", &kind)));
    }
    let length = path.unchecked_ref::<JsString>().length() as usize;
    if length > MAX_PATH_LENGTH {
        return Err(invalid(format!(
            "path is longer than {} characters",
            MAX_PATH_LENGTH
        )));
    }
    let path = path.as_string().unwrap_or_default();
    if path.is_empty() {
        return Ok(Vec::new());
    }
    if path.split('.').count() > MAX_PATH_SEGMENTS {
        return Err(invalid(format!(
            "path has more than {} segments",
            MAX_PATH_SEGMENTS
        )));
    }
    let parts: Vec<String> = path.split('.').map(str::to_owned).collect();
    for part in &parts {
        if part.is_empty() {
            return Err(invalid(format!("path \"{}\" has an empty segment", &path)));
        }
        if FORBIDDEN.contains(&part.as_str()) {
            return Err(invalid(format!(
                "path \"{}\" uses the unsafe segment \"{}\"",
                &path, part
            )));
        }
    }
    Ok(parts)
}

fn own(object: &JsValue, key: &str) -> Result<bool, JsValue> {
    if !object.is_object() {
        return Ok(false);
    }
    host::has_own(object, &JsValue::from_str(key))
}

fn read(object: &JsValue, key: &str) -> Result<JsValue, JsValue> {
    Reflect::get(object, &JsValue::from_str(key))
}

/// The value at `path`, or undefined.
#[wasm_bindgen(js_name = getPath)]
pub fn get_path(value: JsValue, path: JsValue) -> Result<JsValue, JsValue> {
    let mut current = value;
    for part in segments(&path)? {
        if !own(&current, &part)? {
            return Ok(JsValue::UNDEFINED);
        }
        current = read(&current, &part)?;
    }
    Ok(current)
}

fn is_index(segment: &str) -> bool {
    !segment.is_empty() && segment.bytes().all(|b| b.is_ascii_digit())
}

fn put(target: &JsValue, key: &str, value: &JsValue) -> Result<(), JsValue> {
    match Reflect::set(target, &JsValue::from_str(key), value) {
        Ok(true) => Ok(()),
        Ok(false) => {
            Err(js_sys::TypeError::new(&format!("Cannot assign to property '{}'", key)).into())
        }
        Err(error) => Err(error),
    }
}

/// Sets the value at `path`, creating plain objects (or arrays for numeric
/// segments) on the way; returns `target`.
#[wasm_bindgen(js_name = setPath)]
pub fn set_path(target: JsValue, path: JsValue, value: JsValue) -> Result<JsValue, JsValue> {
    let parts = segments(&path)?;
    let Some((last, walk)) = parts.split_last() else {
        return Err(invalid("setPath needs a non-empty path".into()).into());
    };
    if !target.is_object() {
        return Err(invalid("setPath needs an object target".into()).into());
    }
    let mut current = target.clone();
    for (i, part) in walk.iter().enumerate() {
        let next = parts.get(i + 1).map_or("", String::as_str);
        if !own(&current, part)? || !read(&current, part)?.is_object() {
            let fresh: JsValue = if is_index(next) {
                Array::new().into()
            } else {
                Object::new().into()
            };
            put(&current, part, &fresh)?;
        }
        current = read(&current, part)?;
    }
    put(&current, last, &value)?;
    Ok(target)
}

/// Arrays and plain objects (prototype `Object.prototype` or `null`) are
/// walked into; everything else is a leaf.
fn is_container(node: &JsValue) -> Result<bool, JsValue> {
    if !node.is_object() {
        return Ok(false);
    }
    if host::is_array(node)? {
        return Ok(true);
    }
    let proto = host::prototype_of(node)?;
    Ok(proto.is_null() || proto == JsValue::from(Object::get_prototype_of(&Object::new().into())))
}

/// One step of `flatten`'s walk.
enum Step {
    /// A value at its path, `depth` segments below the root.
    Visit {
        node: JsValue,
        path: String,
        depth: usize,
    },
    /// A container's members are done: it is no longer an ancestor.
    Leave(JsValue),
}

/// Writes the leaves of `value` into `out`, depth first in key order, as a
/// recursive walk would, with an explicit stack.
fn walk(out: &Object, value: JsValue, prefix: String) -> Result<(), JsValue> {
    let ancestors = Set::new(&JsValue::UNDEFINED);
    let mut stack = vec![Step::Visit {
        node: value,
        path: prefix,
        depth: 0,
    }];
    let mut visited = 0usize;
    while let Some(step) = stack.pop() {
        let (node, path, depth) = match step {
            Step::Leave(node) => {
                ancestors.delete(&node);
                continue;
            }
            Step::Visit { node, path, depth } => (node, path, depth),
        };
        visited += 1;
        if visited > MAX_FLATTEN_VALUES {
            let message = format!("value has more than {} parts", MAX_FLATTEN_VALUES);
            return Err(invalid(message).into());
        }
        if !is_container(&node)? {
            if !path.is_empty() {
                put(out, &path, &node)?;
            }
            continue;
        }
        if ancestors.has(&node) {
            let message = format!("value at \"{}\" contains itself", &path);
            return Err(invalid(message).into());
        }
        let keys = host::keys(&node)?;
        if keys.length() == 0 {
            if !path.is_empty() {
                put(out, &path, &node)?;
            }
            continue;
        }
        if depth >= MAX_PATH_SEGMENTS {
            let message = format!("value is nested deeper than {} levels", MAX_PATH_SEGMENTS);
            return Err(invalid(message).into());
        }
        let mut children = Vec::with_capacity(keys.length() as usize);
        for key in keys.iter() {
            let key = host::string(&key);
            if key.is_empty() || key.contains('.') || FORBIDDEN.contains(&key.as_str()) {
                let message = format!("key \"{}\" cannot be part of a dotted path", &key);
                return Err(invalid(message).into());
            }
            let child = read(&node, &key)?;
            let child_path = if path.is_empty() {
                key
            } else {
                format!("{}.{}", &path, &key)
            };
            if child_path.len() > MAX_PATH_LENGTH {
                let message = format!("a path is longer than {} bytes", MAX_PATH_LENGTH);
                return Err(invalid(message).into());
            }
            children.push(Step::Visit {
                node: child,
                path: child_path,
                depth: depth + 1,
            });
        }
        ancestors.add(&node);
        stack.push(Step::Leave(node));
        stack.extend(children.into_iter().rev());
    }
    Ok(())
}

/// `{ "a.b": 1, "c.0": 2 }` from `{ a: { b: 1 }, c: [2] }`: leaves only,
/// keys prefixed with `prefix`.
#[wasm_bindgen]
pub fn flatten(value: JsValue, prefix: JsValue) -> Result<JsValue, JsValue> {
    let prefix = if prefix.is_undefined() {
        String::new()
    } else if prefix.is_truthy() {
        // Checked as a path; a valid one is a string, used as it is.
        segments(&prefix)?;
        prefix.as_string().unwrap_or_default()
    } else {
        prefix.as_string().unwrap_or_default()
    };
    let out = Object::new();
    walk(&out, value, prefix)?;
    Ok(out.into())
}
