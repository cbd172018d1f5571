// formTools(form, { scope, sensitive?, title? }): the core's form driver
// (src/wasm/forms.rs). JS because an entry point is a module.
import { wasm } from './internal.js';

export const formTools = wasm.formTools;
