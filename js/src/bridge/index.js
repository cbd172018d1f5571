// bridge({ transport, onChange?, caller?, maxMessageBytes? }): the plugin
// tm.use attaches; the core checks and drives it (src/wasm/bridge.rs).
// JS because an entry point is a module: it names the core's export.
import { wasm } from '../internal.js';

export const bridge = wasm.bridge;
