// JSON semantics for values crossing the bridge (spec: Tool results).

const NOT_JSON = Symbol('not JSON');

class NotSerializable extends Error {}

function strict(key, value) {
  // Called after toJSON: what is left must be JSON-safe. Undefined properties
  // are dropped by JSON.stringify itself.
  switch (typeof value) {
    case 'function':
    case 'symbol':
      throw new NotSerializable(`${typeof value} at "${key}"`);
    case 'bigint':
      throw new NotSerializable(`bigint at "${key}"`);
    case 'number':
      if (!Number.isFinite(value)) throw new NotSerializable(`${value} at "${key}"`);
      return value;
    default:
      return value;
  }
}

/**
 * The JSON text of a tool's return value: `undefined` for "no value", or
 * NOT_JSON with the reason when it is not JSON-safe (cycles, BigInt,
 * functions, non-finite numbers).
 */
export function resultText(value) {
  if (value === undefined) return { text: undefined };
  try {
    const text = JSON.stringify(value, strict);
    return { text };
  } catch (error) {
    return { text: NOT_JSON, reason: String(error && error.message) };
  }
}

export { NOT_JSON };

/** Copies a value once (getters and prototypes do not survive); undefined when it cannot be. */
export function copyText(value) {
  try {
    return JSON.stringify(value);
  } catch {
    return undefined;
  }
}
