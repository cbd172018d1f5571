// createToolmark: the page's registry, a class of the core (src/wasm/registry.rs).
// JS only because an entry point is a module: it names the core's export.
import { wasm } from './internal.js';

/** A tool-definition hook formTools uses: the form state compared at approval. */
export const STATE = Symbol.for('toolmark.bridge-wasm.state');

export const createToolmark = wasm.createToolmark;
