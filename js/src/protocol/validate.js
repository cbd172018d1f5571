// validateMessage: the core's (src/wasm/protocol.rs). A file of its own so
// that the protocol entry's constants (./constants.js, plain JS written by
// the build) bring no WebAssembly into an app that uses only them.
import { wasm } from '../internal.js';

/**
 * Validates a protocol message. `'toPage'` checks agent → page messages,
 * `'toAgent'` page → agent ones.
 */
export const validateMessage = wasm.validateMessage;
