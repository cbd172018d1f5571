// createInPageChannel(): both ends of a bridge in one realm, in the core
// (src/wasm/in_page.rs). JS because an entry point is a module.
import { wasm } from '../internal.js';

export const createInPageChannel = wasm.createInPageChannel;
