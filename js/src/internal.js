// Internal: the instantiated core. The build generates ./wasm/ (glue and the
// inlined module) and instantiates it synchronously on import, so users never
// call init(). Use it as `new wasm.WasmToolmark(...)`; `result` reads what an
// export returns.
import { wasm } from './wasm/loader.js';

export { wasm };

/**
 * What an export returned: the JSON text of its result, parsed, or a refusal
 * (`!` and the message; no JSON text starts with `!`), thrown as an Error.
 */
export function result(text) {
  if (text[0] === '!') throw new Error(text.slice(1));
  return JSON.parse(text);
}

/** Calls a free helper (newId, llmName, version, schemas, toPage/toAgent validation). */
export const helper = (op, text = '') => result(wasm.helper(op, text));
