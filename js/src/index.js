// @toolmark/bridge-wasm: the page side of the Toolmark bridge protocol.
import { helper } from './internal.js';

export { createToolmark } from './toolmark.js';
export { ToolmarkError } from './errors.js';
export { getPath, setPath, flatten } from './paths.js';
export { formTools } from './forms.js';

/** An RFC 4122 v4 UUID from crypto.getRandomValues (never Math.random). */
export function newId() {
  return helper('newId');
}

/** The LLM-facing name of a tool name: `.` → `__`, long names truncated and hashed. */
export function llmName(name) {
  if (typeof name !== 'string') throw new TypeError('llmName: name must be a string');
  return helper('llmName', name);
}
