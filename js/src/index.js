// @toolmark/bridge-wasm: the page side of the Toolmark bridge protocol.
// JS because an entry point is a module: it names the core's exports.
export { createToolmark } from './toolmark.js';
export { ToolmarkError } from './errors.js';
export { formTools } from './forms.js';
export { newId, llmName } from './ids.js';
export { getPath, setPath, flatten } from './paths.js';
