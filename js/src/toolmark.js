// createToolmark: the page's registry, a class of the core (src/wasm/registry.rs).
// JS only because an entry point is a module: it names the core's export.
import { wasm } from './internal.js';
import { endOnlyThroughApi } from './api-ends.js';

endOnlyThroughApi(wasm.Toolmark, wasm.Scope, wasm.Events, wasm.PluginLink);
export const createToolmark = wasm.createToolmark;
