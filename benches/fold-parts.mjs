// node benches/fold-parts.mjs [features…]: what a part would cost every app
// if it rode in the main module instead of its own (issue 30: the import
// map's root entry fetches `forms.wasm` and `paths.wasm` because it names
// `formTools` and the path helpers). Each argument is a Cargo feature set
// (default: toolmark, toolmark,paths, toolmark,forms, toolmark,paths,forms),
// built as the package builds a part (cargo, wasm-bindgen, the build's
// wasm-opt passes; short names left out, so every row is ~2.6 KB above the
// shipped part) and measured: raw and gzip -9 of the module and its glue.
// Prints numbers; asserts nothing.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { WASM_OPT_FEATURES, WASM_OPT_PASSES, cargoBuildArgs, wasmOptBin } from '../js/build/toolchain.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const target = join(root, 'target', 'fold-parts');
const sets = process.argv.slice(2);
const gzip = (bytes) => gzipSync(bytes, { level: 9 }).length;
const kb = (bytes) => (bytes / 1000).toFixed(1);

let first;
console.log('| features | .wasm raw | .wasm gzip | glue gzip | gzip vs the first row |');
console.log('|---|---:|---:|---:|---:|');
for (const features of sets.length ? sets : ['toolmark', 'toolmark,paths', 'toolmark,forms', 'toolmark,paths,forms']) {
  execFileSync('cargo', cargoBuildArgs(target, ['--no-default-features', '--features', features]), { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
  const out = join(target, 'bindgen', features.replace(/,/g, '+'));
  mkdirSync(out, { recursive: true });
  execFileSync('wasm-bindgen', ['--target', 'web', '--omit-default-module-path', '--encode-into', 'always', '--out-dir', out, '--out-name', 'part',
    join(target, 'wasm32-unknown-unknown', 'release', 'toolmark_bridge.wasm')]);
  execFileSync(wasmOptBin, [...WASM_OPT_PASSES, ...WASM_OPT_FEATURES, join(out, 'part_bg.wasm'), '-o', join(out, 'part.wasm')]);
  const wasm = readFileSync(join(out, 'part.wasm'));
  const glue = gzip(readFileSync(join(out, 'part.js')));
  const total = gzip(wasm) + glue;
  first ??= total;
  console.log(`| ${features} | ${kb(wasm.length)} | ${kb(gzip(wasm))} | ${kb(glue)} | +${kb(total - first)} |`);
}
