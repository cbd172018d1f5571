// Internal: the instantiated core. JS because loading is: the build generates
// ./wasm/ (glue and the inlined module) and instantiates it synchronously on
// import, so users never call init().
export { wasm } from './wasm/loader.js';
