// @toolmark/bridge-wasm: the page side of the Toolmark bridge protocol.
// JS because an entry point is a module: it names the core's exports.
import { wasm } from './internal.js';

export { createToolmark } from './toolmark.js';
export { ToolmarkError } from './errors.js';
export { formTools } from './forms.js';

/** An RFC 4122 v4 UUID from crypto.getRandomValues (never Math.random). */
export const newId = wasm.newId;

/** The LLM-facing name of a tool name: `.` → `__`, long names truncated and hashed. */
export const llmName = wasm.llmName;

export { getPath, setPath, flatten } from './paths.js';
