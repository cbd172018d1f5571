// Internal: the instantiated core. The build generates ./wasm/ (glue and the
// inlined module) and instantiates it synchronously here, so users never call init().
export * from './wasm/loader.js';
