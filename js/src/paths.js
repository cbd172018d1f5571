// Path helpers: dotted paths (`items.0.name`) into plain objects and arrays.
import { ToolmarkError } from './errors.js';

const FORBIDDEN = new Set(['__proto__', 'prototype', 'constructor']);

function segments(path) {
  if (typeof path !== 'string') throw new ToolmarkError('invalid_path', `path must be a string, not ${typeof path}`);
  if (path === '') return [];
  const parts = path.split('.');
  for (const part of parts) {
    if (part === '') throw new ToolmarkError('invalid_path', `path "${path}" has an empty segment`);
    if (FORBIDDEN.has(part)) throw new ToolmarkError('invalid_path', `path "${path}" uses the unsafe segment "${part}"`);
  }
  return parts;
}

const own = (object, key) => Object.prototype.hasOwnProperty.call(object, key);

/** The value at `path`, or undefined. */
export function getPath(value, path) {
  let current = value;
  for (const part of segments(path)) {
    if (current === null || typeof current !== 'object' || !own(current, part)) return undefined;
    current = current[part];
  }
  return current;
}

/** Sets the value at `path`, creating plain objects (or arrays for numeric segments) on the way. */
export function setPath(target, path, value) {
  const parts = segments(path);
  if (parts.length === 0) throw new ToolmarkError('invalid_path', 'setPath needs a non-empty path');
  if (target === null || typeof target !== 'object') throw new ToolmarkError('invalid_path', 'setPath needs an object target');
  let current = target;
  for (let i = 0; i < parts.length - 1; i++) {
    const part = parts[i];
    if (!own(current, part) || current[part] === null || typeof current[part] !== 'object') {
      current[part] = /^\d+$/.test(parts[i + 1]) ? [] : {};
    }
    current = current[part];
  }
  current[parts[parts.length - 1]] = value;
  return target;
}

/** `{ "a.b": 1, "c.0": 2 }` from `{ a: { b: 1 }, c: [2] }`: leaves only. */
export function flatten(value, prefix = '') {
  const out = {};
  const walk = (node, path) => {
    if (node !== null && typeof node === 'object' && (Array.isArray(node) || Object.getPrototypeOf(node) === Object.prototype || Object.getPrototypeOf(node) === null)) {
      const keys = Object.keys(node);
      if (keys.length === 0 && path) out[path] = node;
      for (const key of keys) {
        if (key === '' || key.includes('.') || FORBIDDEN.has(key)) {
          throw new ToolmarkError('invalid_path', `key "${key}" cannot be part of a dotted path`);
        }
        walk(node[key], path ? `${path}.${key}` : key);
      }
    } else if (path) {
      out[path] = node;
    }
  };
  if (prefix) segments(prefix);
  walk(value, prefix);
  return out;
}
