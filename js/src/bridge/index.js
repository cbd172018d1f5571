// bridge({ transport, onChange?, caller?, maxMessageBytes? }): the plugin
// tm.use attaches; the core checks and drives it (src/wasm/bridge.rs).
// JS because an entry point is a module: it names the core's export.
import { wasm } from '../internal.js';
import { endOnlyThroughApi } from '../api-ends.js';

endOnlyThroughApi(wasm.Bridge);
export const bridge = wasm.bridge;
