// getPath, setPath, flatten: dotted paths (`items.0.name`) into plain objects
// and arrays. JS because their work is property reads and writes on the
// page's objects: in wasm each one was a crossing (per segment, per key), and
// here it is a plain property access (docs/benchmarks.md, "Path helpers").
// The decisions stay in the core (src/wasm/paths.rs): which paths are valid
// and safe (`pathSegments`, one call per path) and the limits and refused
// keys `flatten` applies (`pathRules`, read once). A page's proxy trap or
// getter that throws makes the helper throw that error.
import { ToolmarkError } from './errors.js';
import { wasm } from './internal.js';

const { hasOwn } = Object;

// Read on the first flatten, not on import: the slim entry imports this
// before its module is instantiated.
let rules;
function pathRules() {
  if (rules === undefined) {
    const { forbidden, ...limits } = wasm.pathRules();
    rules = { ...limits, refused: new Set(forbidden) };
  }
  return rules;
}

const LONE_SURROGATE = /\p{Cs}/u;
const isObject = (value) => value !== null && typeof value === 'object';
const invalid = (message) => new ToolmarkError('invalid_path', message);

/** The value at `path`, or undefined. */
export function getPath(value, path) {
  let current = value;
  for (const part of wasm.pathSegments(path)) {
    if (!isObject(current) || !hasOwn(current, part)) return undefined;
    current = current[part];
  }
  return current;
}

/** `target[key] = value`; a refusal (a frozen object, a read-only property) is `invalid_path`. */
function put(target, key, value) {
  if (!Reflect.set(target, key, value)) {
    throw new ToolmarkError('invalid_path', `setPath: cannot assign to property '${key}' (a frozen object or a read-only property on the path)`);
  }
}

/** An array index as JS writes one (`0`, `12`; not `007` or past 2³² − 2): a key an array keeps in JSON. */
const isIndex = (segment) => /^(?:0|[1-9]\d{0,9})$/.test(segment) && Number(segment) < 4294967295;

/**
 * Sets the value at `path`, creating plain objects (or arrays for array
 * index segments) on the way; returns `target`.
 */
export function setPath(target, path, value) {
  const parts = wasm.pathSegments(path);
  if (parts.length === 0) throw invalid('setPath needs a non-empty path');
  if (!isObject(target)) throw invalid('setPath needs an object target');
  let current = target;
  for (let i = 0; i < parts.length - 1; i++) {
    const part = parts[i];
    if (!hasOwn(current, part) || !isObject(current[part])) {
      put(current, part, isIndex(parts[i + 1]) ? [] : {});
    }
    current = current[part];
  }
  put(current, parts[parts.length - 1], value);
  return target;
}

/** Arrays and plain objects (prototype Object.prototype or null) are walked into. */
function isContainer(node) {
  if (!isObject(node)) return false;
  if (Array.isArray(node)) return true;
  const proto = Object.getPrototypeOf(node);
  return proto === null || proto === Object.prototype;
}

/** UTF-8 bytes of `text` as the core counts them (a lone surrogate as U+FFFD). */
function utf8Length(text) {
  let bytes = text.length;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0x80) continue;
    if (unit < 0x800) bytes += 1;
    else if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length
      && text.charCodeAt(i + 1) >= 0xdc00 && text.charCodeAt(i + 1) <= 0xdfff) {
      bytes += 2; // the pair: 4 bytes for 2 units
      i++;
    } else bytes += 2;
  }
  return bytes;
}

/** What a leaf adds to the output's bytes besides its path (`maxOutputBytes`). */
const leafBytes = (node) => (typeof node === 'string' ? utf8Length(node) : 8);

/**
 * `{ "a.b": 1, "c.0": 2 }` from `{ a: { b: 1 }, c: [2] }`: leaves only, keys
 * prefixed with `prefix`. Walks without recursion, depth first in key order,
 * within the core's limits; a value that contains itself is refused. The
 * limits on each path and on the whole output keep it linear in its output:
 * keys short enough for V8 to hash by content (longer ones collide), and a
 * bounded total.
 */
export function flatten(value, prefix) {
  const { maxSegments, maxValues, maxPathBytes, maxOutputBytes, refused } = pathRules();
  let root = '';
  // The prefix's segments count toward each path's: a path flatten writes
  // is one getPath and setPath take.
  let rootDepth = 0;
  if (typeof prefix === 'string' && prefix !== '') {
    rootDepth = wasm.pathSegments(prefix).length; // checked as a path
    root = prefix;
  } else if (prefix) {
    wasm.pathSegments(prefix); // throws: not a string
  }
  const rootBytes = utf8Length(root);
  if (rootBytes > maxPathBytes) throw invalid(`a path is longer than ${maxPathBytes} bytes`);
  const out = {};
  const ancestors = new Set();
  let visited = 0;
  let outputBytes = 0;
  // The containers being walked, innermost last: each with its keys (all
  // checked when it was entered), the next key's index, its path, the
  // path's UTF-8 length and its depth.
  const frames = [];

  /** Writes a leaf, or enters a container (a new frame). */
  const visit = (node, path, bytes, depth) => {
    if (++visited > maxValues) throw invalid(`value has more than ${maxValues} parts`);
    const container = isContainer(node);
    if (container && ancestors.has(node)) throw invalid(`value at "${path}" contains itself`);
    const keys = container ? Object.keys(node) : undefined;
    if (!container || keys.length === 0) {
      if (path === '') return;
      outputBytes += bytes + leafBytes(node);
      if (outputBytes > maxOutputBytes) {
        throw invalid(`the flattened value is larger than ${maxOutputBytes} bytes (paths and values)`);
      }
      out[path] = node;
      return;
    }
    if (depth >= maxSegments) throw invalid(`value is nested deeper than ${maxSegments} levels`);
    const keyBytes = new Array(keys.length);
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i];
      // A lone surrogate (`\p{Cs}` matches only those in a `u` pattern): no
      // path names such a key exactly (pathSegments refuses it).
      if (key === '' || key.includes('.') || refused.has(key) || LONE_SURROGATE.test(key)) {
        throw invalid(`key "${key}" cannot be part of a dotted path`);
      }
      keyBytes[i] = utf8Length(key);
      if ((path === '' ? 0 : bytes + 1) + keyBytes[i] > maxPathBytes) {
        throw invalid(`a path is longer than ${maxPathBytes} bytes`);
      }
    }
    ancestors.add(node);
    frames.push({ node, keys, keyBytes, next: 0, path, bytes, depth });
  };

  visit(value, root, rootBytes, rootDepth);
  while (frames.length > 0) {
    const frame = frames[frames.length - 1];
    if (frame.next === frame.keys.length) {
      frames.pop();
      ancestors.delete(frame.node);
      continue;
    }
    const i = frame.next++;
    const key = frame.keys[i];
    if (frame.path === '') visit(frame.node[key], key, frame.keyBytes[i], frame.depth + 1);
    else visit(frame.node[key], `${frame.path}.${key}`, frame.bytes + 1 + frame.keyBytes[i], frame.depth + 1);
  }
  return out;
}
