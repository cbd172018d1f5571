// Internal: the instantiated core. The build generates ./wasm/ (glue and the
// inlined module) and instantiates it synchronously on import, so users never
// call init(). Use it as \`wasm.newId()\`, \`new wasm.WasmToolmark(...)\`.
export { wasm } from './wasm/loader.js';
