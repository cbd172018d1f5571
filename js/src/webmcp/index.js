// webmcp({ modelContext? }): the plugin that offers the registry to WebMCP
// browser agents; the core registers, follows and drives it (src/wasm/webmcp.rs).
// JS because an entry point is a module: it names the core's export.
import { wasm } from '../internal.js';
import { endOnlyThroughApi } from '../api-ends.js';

endOnlyThroughApi(wasm.WebMcp);
export const webmcp = wasm.webmcp;
