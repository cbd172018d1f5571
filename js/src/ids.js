// newId, llmName: the core's (src/wasm/protocol.rs). JS because an entry
// point is a module: it names the core's exports.
import { wasm } from './internal.js';

/** An RFC 4122 v4 UUID from crypto.getRandomValues (never Math.random). */
export const newId = wasm.newId;

/** The LLM-facing name of a tool name: `.` → `__`, long names truncated and hashed. */
export const llmName = wasm.llmName;
