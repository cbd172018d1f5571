// Internal: the instantiated module. JS because loading is. The build bundles
// each of the package's modules (Cargo.toml's features) with its own loader
// in place of this file (js/build/build.mjs): the default entries stream
// the module file and instantiate it before the first import resolves, so
// users never call init().
export { wasm } from './wasm/loader.js';
