// No shipped .js names a Node global that browser bundlers polyfill: Parcel
// installs a `buffer` polyfill into the app (and edits its package.json) for
// a `typeof Buffer`; webpack 4 and Browserify do the same for `process`,
// `global`, `__dirname` and the rest. A reference counts only when the name
// is free (not a local, parameter or property): esbuild's `define` replaces
// exactly those, so each is replaced by a marker and the marker looked for.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { transformSync } from 'esbuild';

const pkg = fileURLToPath(new URL('../../pkg/', import.meta.url));

const NODE_GLOBALS = ['Buffer', 'process', 'global', '__dirname', '__filename', 'require', 'module', 'exports', 'setImmediate', 'clearImmediate'];
const marker = (name) => `__node_global_${name}__`;
const define = Object.fromEntries(NODE_GLOBALS.map((name) => [name, marker(name)]));

/** The Node globals a module's source names as free identifiers. */
function freeNodeGlobals(source) {
  const { code } = transformSync(source, { loader: 'js', format: 'esm', define, logLevel: 'silent' });
  return NODE_GLOBALS.filter((name) => code.includes(marker(name)));
}

function shippedJs(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return shippedJs(path);
    return name.endsWith('.js') ? [path] : [];
  });
}

test('the finder sees free Node globals and only those', () => {
  assert.deepEqual(freeNodeGlobals('export const f = () => typeof Buffer === "function" && Buffer.from("00", "hex");'), ['Buffer']);
  assert.deepEqual(freeNodeGlobals('export const g = global.x ?? process.env.X ?? require("y") ?? __dirname;').sort(),
    ['__dirname', 'global', 'process', 'require']);
  assert.deepEqual(freeNodeGlobals('export function f(process) { const Buffer = 1; return { process, global: Buffer }.global + a.require; }'), []);
});

test('no shipped .js of pkg/ names a Node global', () => {
  const files = shippedJs(pkg);
  assert.ok(files.length > 5, 'pkg/ is built (npm run build)');
  const found = files
    .map((path) => ({ file: relative(pkg, path), names: freeNodeGlobals(readFileSync(path, 'utf8')) }))
    .filter(({ names }) => names.length > 0);
  assert.deepEqual(found, []);
});
