// @toolmark/bridge-wasm/protocol: the protocol constant and the published
// JSON Schemas as plain JS (./constants.js, written by the build from the
// core's own), and validateMessage, the core's. The package has no side
// effects a bundler must keep, so an app that uses only the constants ships
// no WebAssembly. JS because an entry point is a module.
export { PROTOCOL_VERSION, protocolSchemas } from './constants.js';
export { validateMessage } from './validate.js';
