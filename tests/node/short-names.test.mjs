// The build's short import and export names (js/build/short-names.mjs): the
// glue renamed to match binaryen's list, and nothing else in it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { renameGlue } from '../../js/build/short-names.mjs';

const GLUE = `import * as import1 from "./snippets/x/context.js"
export class Bridge {
    free() { wasm.__wbg_bridge_free(this.__wbg_ptr, 0); }
}
export function bridge(options) {
    const plugin = { bridge: options.bridge, memory: 1 };
    return wasm.bridge(plugin.bridge, wasm.memory.buffer);
}
function __wbg_get_imports() {
    const import0 = {
        __proto__: null,
        __wbg_now_463ac581d2fc7ea3: function() { return Date.now(); },
        "__wbg_quoted_0123456789abcdef": function() {},
        __wbg_gone_0123456789abcdef: function() {},
        __wbindgen_init_externref_table,
    };
    return {
        __proto__: null,
        "./toolmark_bg.js": import0,
        "./snippets/x/context.js": import1,
    };
}
let wasmModule, wasmInstance, wasm;
`;

const NAMES = {
  imports: [
    ['./toolmark_bg.js', '__wbg_now_463ac581d2fc7ea3', 'a'],
    ['./toolmark_bg.js', '__wbg_quoted_0123456789abcdef', 'b'],
    ['./toolmark_bg.js', '__wbindgen_init_externref_table', 'c'],
    ['./snippets/x/context.js', 'abortRun', 'd'],
  ],
  exports: [['__wbg_bridge_free', 'e'], ['bridge', 'f'], ['memory', 'g']],
};

/** The renamed glue's import object and a call of `bridge`, run against stand-in exports. */
function load(text) {
  const body = text.replace(/^import .*$/m, '').replace(/^export /gm, '');
  const factory = new Function('import1', '__wbindgen_init_externref_table', `${body}
    return { imports: __wbg_get_imports(), bridge, setWasm: (value) => { wasm = value; } };`);
  return factory({ abortRun: 'abortRun' }, 'init');
}

test('imports: every module under one name, each key as the list says; exports: each wasm.<name> as the list says', () => {
  const renamed = renameGlue(GLUE, NAMES, 'a');
  const glue = load(renamed);
  assert.deepEqual(Object.keys(glue.imports), ['a']);
  assert.deepEqual(Object.keys(glue.imports.a).sort(), ['__wbg_gone_0123456789abcdef', 'a', 'b', 'c', 'd']);
  assert.equal(typeof glue.imports.a.a(), 'number');
  assert.equal(glue.imports.a.c, 'init');
  assert.equal(glue.imports.a.d, 'abortRun');
  const seen = [];
  glue.setWasm({ f: (...args) => seen.push(args), g: { buffer: 'memory' }, e: () => {} });
  glue.bridge({ bridge: 'option' });
  // The plugin object's own `bridge` and `memory` keys are not the module's exports: unchanged.
  assert.deepEqual(seen, [['option', 'memory']]);
  assert.match(renamed, /const plugin = \{ bridge: options\.bridge, memory: 1 \};/);
});

test('a glue that reads an export the module does not have, or has imports of an unknown shape, is refused', () => {
  assert.throws(() => renameGlue(GLUE.replace('wasm.memory.buffer', 'wasm.other'), NAMES, 'a'), /reads wasm\.other, which the module does not export/);
  assert.throws(() => renameGlue(GLUE.replace('"./toolmark_bg.js": import0', '"./toolmark_bg.js": makeImports()'), NAMES, 'a'), /are not named/);
  assert.throws(() => renameGlue(GLUE.replace('function __wbg_get_imports', 'function getImports'), NAMES, 'a'), /no function __wbg_get_imports/);
});

test('a JS module imported twice (wasm-bindgen’s whole-module glue) gives its keys once, and its second import goes', () => {
  const twice = GLUE
    .replace('import * as import1 from "./snippets/x/context.js"\n', 'import * as import1 from "./snippets/x/context.js"\nimport * as import2 from "./snippets/x/context.js"\n')
    .replace('"./snippets/x/context.js": import1,\n', '"./snippets/x/context.js": import1,\n        "./snippets/x/context.js": import2,\n');
  const renamed = renameGlue(twice, NAMES, 'a');
  assert.doesNotMatch(renamed, /import2/);
  assert.equal(renamed.match(/"d": import1\["abortRun"\]/g).length, 1);
  const glue = load(renamed);
  assert.deepEqual(Object.keys(glue.imports.a).sort(), ['__wbg_gone_0123456789abcdef', 'a', 'b', 'c', 'd']);
  assert.equal(glue.imports.a.d, 'abortRun');
});
