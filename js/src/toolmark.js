// createToolmark: the page's registry, a class of the core (src/wasm/registry.rs).
// JS only because an entry point is a module: it names the core's export.
import { wasm } from './internal.js';

export const createToolmark = wasm.createToolmark;
