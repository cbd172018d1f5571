//! `getPath`, `setPath`, `flatten`: dotted paths (`items.0.name`) into
//! plain objects and arrays. Unsafe or malformed paths are a
//! `ToolmarkError('invalid_path')`; `__proto__`, `prototype` and
//! `constructor` are never walked or written.

use crate::prelude::*;
use js_sys::{Array, Object, Reflect};
use wasm_bindgen::prelude::*;

use super::error::Failure;
use super::host;

const FORBIDDEN: [&str; 3] = ["__proto__", "prototype", "constructor"];

fn invalid(message: String) -> Failure {
    Failure::toolmark("invalid_path", message)
}

fn segments(path: &JsValue) -> Result<Vec<String>, Failure> {
    let Some(path) = path.as_string() else {
        let kind = host::string(&path.js_typeof());
        return Err(invalid(format!("path must be a string, not {}", &kind)));
    };
    if path.is_empty() {
        return Ok(Vec::new());
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

fn own(object: &JsValue, key: &str) -> bool {
    object.is_object() && Object::has_own(&Object::from(object.clone()), &JsValue::from_str(key))
}

/// The value at `path`, or undefined.
#[wasm_bindgen(js_name = getPath)]
pub fn get_path(value: JsValue, path: JsValue) -> Result<JsValue, JsValue> {
    let mut current = value;
    for part in segments(&path)? {
        if !own(&current, &part) {
            return Ok(JsValue::UNDEFINED);
        }
        current = host::get(&current, &part);
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
        if !own(&current, part) || !host::get(&current, part).is_object() {
            let fresh: JsValue = if is_index(next) {
                Array::new().into()
            } else {
                Object::new().into()
            };
            put(&current, part, &fresh)?;
        }
        current = host::get(&current, part);
    }
    put(&current, last, &value)?;
    Ok(target)
}

/// Arrays and plain objects (prototype `Object.prototype` or `null`) are
/// walked into; everything else is a leaf.
fn is_container(node: &JsValue) -> bool {
    if !node.is_object() {
        return false;
    }
    if Array::is_array(node) {
        return true;
    }
    let proto: JsValue = Object::get_prototype_of(node).into();
    proto.is_null() || proto == JsValue::from(Object::get_prototype_of(&Object::new().into()))
}

fn walk(out: &Object, node: &JsValue, path: &str) -> Result<(), JsValue> {
    if is_container(node) {
        let keys = Object::keys(&Object::from(node.clone()));
        if keys.length() == 0 && !path.is_empty() {
            put(out, path, node)?;
        }
        for key in keys.iter() {
            let key = host::string(&key);
            if key.is_empty() || key.contains('.') || FORBIDDEN.contains(&key.as_str()) {
                let message = format!("key \"{}\" cannot be part of a dotted path", &key);
                return Err(invalid(message).into());
            }
            let child = host::get(node, &key);
            let child_path = if path.is_empty() {
                key
            } else {
                format!("{}.{}", path, &key)
            };
            walk(out, &child, &child_path)?;
        }
    } else if !path.is_empty() {
        put(out, path, node)?;
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
    walk(&out, &value, &prefix)?;
    Ok(out.into())
}
