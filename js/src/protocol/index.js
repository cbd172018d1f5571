// @toolmark/bridge-wasm/protocol: the protocol constant, validation and schemas,
// all the core's (src/wasm/protocol.rs). JS because an entry point is a module.
import { wasm } from '../internal.js';

export const PROTOCOL_VERSION = wasm.protocolVersion();

/** The published JSON Schemas (draft 2020-12), the same objects as protocol/v1/*.json. */
export const protocolSchemas = wasm.protocolSchemas();

/**
 * Validates a protocol message. `'toPage'` checks agent → page messages,
 * `'toAgent'` page → agent ones.
 */
export const validateMessage = wasm.validateMessage;
