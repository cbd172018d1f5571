// The cargo and wasm-opt invocations of `npm run build`, shared with
// `npm run size -- --twiggy` and benches/wasm-opt-levels.mjs (which measures
// the choices). binaryen comes from npm (Debian's is too old).
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { homedir } from 'node:os';
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

// The optimization passes: -O1 gives the smallest module by gzip (2% under
// -Oz, though 6% larger raw: -Oz's size passes make code that compresses
// worse; benches/wasm-opt-levels.mjs, docs/benchmarks.md "Package size").
// Then the control flow rebuilt (`--flatten --rereloop`) and the arguments
// every caller passes alike removed (`--dae-optimizing`), each followed by
// -O1 again: the README app's module 1.2 KB smaller gzipped. Last, the
// functions of at most 6 bytes inlined where they are called, and no
// others (`--inlining-optimizing` with binaryen's defaults inlines every
// function with one caller: 6.4 KB larger): every part 0.2-0.8 KB smaller
// gzipped, and an eighth fewer functions for the engine to compile.
export const WASM_OPT_INLINE_TINY = [
  '--inlining-optimizing', '--one-caller-inline-max-function-size=0', '--always-inline-max-function-size=6',
];
export const WASM_OPT_LEVEL = ['-O1', '--flatten', '--rereloop', '-O1', '--dae-optimizing', '-O1', ...WASM_OPT_INLINE_TINY];

// Functions in the order of their names: the copies of one generic and the
// parts of one module sit together, so gzip finds their likeness (the
// README app's module 1.4 KB smaller gzipped; docs/benchmarks.md).
export const WASM_OPT_ORDER = ['--reorder-functions-by-name'];

export const WASM_OPT_PASSES = [...WASM_OPT_LEVEL, ...WASM_OPT_ORDER, ...WASM_OPT_STRIP];

/**
 * The crates' source paths (kept in the module for panic locations) made
 * relative to the registry, std's sources and the crate: shorter, and the
 * same on every machine. std's paths are `/rustc/<commit>/library/…`, or
 * its sources in the sysroot when rustup's `rust-src` is installed. A
 * stable rustc flag, for `target.<wasm32>.rustflags`.
 */
function remapFlags() {
  const cargoHome = process.env.CARGO_HOME || join(homedir(), '.cargo');
  const registry = join(cargoHome, 'registry', 'src');
  const sysroot = execFileSync('rustc', ['--print', 'sysroot'], { encoding: 'utf8' }).trim();
  const commit = execFileSync('rustc', ['-vV'], { encoding: 'utf8' }).match(/^commit-hash: (\w+)$/m)?.[1];
  const remaps = [
    `${root}/=`,
    `${join(sysroot, 'lib', 'rustlib', 'src', 'rust')}/=`,
    ...(commit ? [`/rustc/${commit}/=`] : []),
    ...(existsSync(registry) ? readdirSync(registry).map((index) => `${join(registry, index)}/=`) : []),
  ];
  return remaps.map((remap) => `"--remap-path-prefix=${remap}"`);
}

/**
 * `cargo build` of the shipped module (stable Rust; the release profile of
 * Cargo.toml) into `targetDir`, with `extra` cargo arguments (`remap: false`:
 * the source paths as they are, for benches/wasm-opt-levels.mjs).
 */
export function cargoBuildArgs(targetDir, extra = [], { remap = true } = {}) {
  return ['build', '--lib', '--release', '--target', 'wasm32-unknown-unknown', '--target-dir', targetDir,
    ...(remap ? ['--config', `target.wasm32-unknown-unknown.rustflags = [${remapFlags().join(', ')}]`] : []), ...extra];
}
