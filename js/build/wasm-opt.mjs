// The wasm-opt invocation of `npm run build`, shared with `npm run size --
// --twiggy` and benches/wasm-opt-levels.mjs (which measures the choices).
// binaryen comes from npm (Debian's is too old).
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

export const wasmOptBin = join(root, 'node_modules', '.bin', 'wasm-opt');

// What rustc's wasm32 target enables by default.
export const WASM_OPT_FEATURES = [
  '--enable-bulk-memory', '--enable-nontrapping-float-to-int', '--enable-sign-ext',
  '--enable-mutable-globals', '--enable-reference-types', '--enable-multivalue',
];

// Sections no host reads: names and DWARF, the producers list, the target
// features the module was built with.
export const WASM_OPT_STRIP = ['--strip-debug', '--strip-producers', '--strip-target-features'];

// The optimization passes (the smallest module by gzip: docs/benchmarks.md,
// "Package size").
export const WASM_OPT_LEVEL = ['-Oz'];

export const WASM_OPT_PASSES = [...WASM_OPT_LEVEL, ...WASM_OPT_STRIP];
