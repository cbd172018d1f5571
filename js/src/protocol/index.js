// @toolmark/bridge-wasm/protocol: the protocol constant, validation and schemas.
import { helper } from '../internal.js';

export const PROTOCOL_VERSION = helper('version');

function deepFreeze(value) {
  if (value && typeof value === 'object') {
    for (const key of Object.keys(value)) deepFreeze(value[key]);
    Object.freeze(value);
  }
  return value;
}

/** The published JSON Schemas (draft 2020-12), the same objects as protocol/v1/*.json. */
export const protocolSchemas = deepFreeze(helper('schemas'));

/**
 * Validates a protocol message. `'toPage'` checks agent → page messages,
 * `'toAgent'` page → agent ones. The value is judged as it travels: its JSON
 * copy (JSON.stringify semantics), so getters and prototypes do not count.
 */
export function validateMessage(value, direction) {
  if (direction !== 'toPage' && direction !== 'toAgent') {
    throw new TypeError("validateMessage: direction must be 'toPage' or 'toAgent'");
  }
  let text;
  try {
    text = JSON.stringify(value);
  } catch (error) {
    return { ok: false, errors: [{ path: '', message: `must be JSON: ${error && error.message}` }] };
  }
  if (text === undefined) {
    return { ok: false, errors: [{ path: '', message: 'must be object' }] };
  }
  const errors = helper(direction, text);
  if (errors === null) return { ok: true, message: JSON.parse(text) };
  return { ok: false, errors };
}
