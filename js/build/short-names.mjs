// Short import and export names: wasm-bindgen names each import
// `__wbg_<name>_<16 hex digits>` and each export after its Rust item, and
// both the module and its glue spell every name out, where neither a
// minifier nor gzip can shorten it (the hashes do not compress). binaryen's
// `--minify-imports-and-exports-and-modules` renames them in the module
// (every import into one module, "a") and prints the old and new names; the
// glue is then renamed to match here, on its syntax tree (acorn), so that
// nothing but the import object's keys and the `wasm.<export>` accesses
// changes. The README app 3.5 KB smaller gzipped, its module 2.2 KB and
// its glue 1.3 KB (docs/benchmarks.md, "The build's choices").
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { parse } from 'acorn';
import { WASM_OPT_FEATURES, wasmOptBin } from './toolchain.mjs';

/** binaryen's pass that renames them (and prints the old and new names). */
export const WASM_OPT_SHORT_NAMES = ['--minify-imports-and-exports-and-modules'];

/**
 * Renames the imports and exports of the module at `wasmPath` (in place) and
 * returns `glue` (wasm-bindgen's JS for it) renamed to match. Throws when the
 * glue has a shape this does not know, rather than guess.
 */
export function shortenNames(wasmPath, glue) {
  const printed = execFileSync(
    wasmOptBin,
    [...WASM_OPT_SHORT_NAMES, ...WASM_OPT_FEATURES, wasmPath, '-o', wasmPath],
    { encoding: 'utf8', maxBuffer: 16 << 20 },
  );
  const names = JSON.parse(printed);
  const modules = [...new Set(WebAssembly.Module.imports(new WebAssembly.Module(readFileSync(wasmPath))).map((i) => i.module))];
  if (modules.length > 1) throw new Error(`short names: the module imports from ${modules.join(', ')}, not one module`);
  return renameGlue(glue, names, modules[0] ?? 'a');
}

/**
 * `glue` with `names` ({ imports: [[module, name, short]], exports: [[name,
 * short]] }, binaryen's list) applied: each import object's keys, the
 * object of import objects (one, under `module`), and `wasm.<export>`.
 */
export function renameGlue(glue, names, module) {
  const importNames = new Map(names.imports.map(([from, name, short]) => [`${from}\0${name}`, short]));
  const exportNames = new Map(names.exports.map(([name, short]) => [name, short]));
  const tree = parse(glue, { ecmaVersion: 'latest', sourceType: 'module' });
  const edits = [];
  const keyName = (property) => (property.key.type === 'Identifier' ? property.key.name : property.key.value);

  const getImports = tree.body.find((node) => node.type === 'FunctionDeclaration' && node.id.name === '__wbg_get_imports');
  if (!getImports) throw new Error('short names: the glue has no function __wbg_get_imports');
  const objects = new Map(); // `importN` → its object literal
  const statements = getImports.body.body;
  for (const statement of statements) {
    if (statement.type !== 'VariableDeclaration') continue;
    for (const declarator of statement.declarations) {
      if (declarator.init?.type === 'ObjectExpression') objects.set(declarator.id.name, declarator.init);
    }
  }
  const returned = statements.at(-1);
  if (returned?.type !== 'ReturnStatement' || returned.argument.type !== 'ObjectExpression') {
    throw new Error('short names: __wbg_get_imports does not end by returning an object literal');
  }
  const namespaces = new Set(tree.body.flatMap((node) => (node.type === 'ImportDeclaration'
    ? node.specifiers.filter((spec) => spec.type === 'ImportNamespaceSpecifier').map((spec) => spec.local.name)
    : [])));
  // One object literal holds every import (Parcel's minifier refuses the
  // literals spread into one): the glue's own, with the namespace imports'
  // entries added to it.
  let target;
  const added = [];
  const namespaceModules = new Set();
  for (const property of returned.argument.properties) {
    if (property.type !== 'Property') throw new Error('short names: an unexpected entry in the imports object');
    const from = keyName(property);
    if (from === '__proto__') continue;
    if (property.value.type !== 'Identifier') throw new Error(`short names: the imports of ${from} are not named`);
    const held = property.value.name;
    const object = objects.get(held);
    if (object) {
      if (target) throw new Error('short names: more than one object literal of imports');
      target = { held, object };
      for (const entry of object.properties) {
        if (entry.type !== 'Property' || entry.computed) throw new Error(`short names: an unexpected entry in the imports of ${from}`);
        const name = keyName(entry);
        if (name === '__proto__') continue;
        const short = importNames.get(`${from}\0${name}`);
        // Not in the list: an import the optimized module no longer has.
        if (short === undefined) continue;
        if (entry.shorthand) edits.push([entry.start, entry.end, `${JSON.stringify(short)}: ${name}`]);
        else edits.push([entry.key.start, entry.key.end, JSON.stringify(short)]);
      }
    } else if (namespaces.has(held)) {
      // A JS module the wasm imports from directly (`import * as`): its names, one by one.
      // wasm-bindgen may import one such module twice (the whole module's
      // glue: `import1`, `import2` of form-state.js); the second adds
      // nothing but duplicate keys, so it goes, with its import.
      if (namespaceModules.has(from)) {
        const declaration = tree.body.find((node) => node.type === 'ImportDeclaration'
          && node.specifiers.some((spec) => spec.local.name === held));
        edits.push([declaration.start, declaration.end, '']);
        continue;
      }
      namespaceModules.add(from);
      for (const [module, name, short] of names.imports) {
        if (module === from) added.push(`${JSON.stringify(short)}: ${held}[${JSON.stringify(name)}]`);
      }
    } else {
      throw new Error(`short names: the imports of ${from} are neither an object literal of __wbg_get_imports nor a namespace import`);
    }
  }
  if (!target) throw new Error('short names: no object literal of imports');
  const last = target.object.properties.at(-1);
  const tail = last ? /^\s*,/.test(glue.slice(last.end, target.object.end - 1)) : true;
  if (added.length) edits.push([target.object.end - 1, target.object.end - 1, `${tail ? '' : ','} ${added.join(', ')} `]);
  edits.push([
    returned.argument.start,
    returned.argument.end,
    `{ __proto__: null, ${JSON.stringify(module)}: ${target.held} }`,
  ]);

  let accesses = 0;
  visit(tree, (node) => {
    if (node.type !== 'MemberExpression' || node.computed || node.object.type !== 'Identifier' || node.object.name !== 'wasm') return;
    const short = exportNames.get(node.property.name);
    if (short === undefined) throw new Error(`short names: the glue reads wasm.${node.property.name}, which the module does not export`);
    edits.push([node.property.start, node.property.end, short]);
    accesses += 1;
  });
  if (accesses === 0) throw new Error('short names: the glue reads no wasm.<export>');

  let out = glue;
  for (const [start, end, text] of edits.sort((a, b) => b[0] - a[0])) out = out.slice(0, start) + text + out.slice(end);
  return out;
}

function visit(node, see) {
  see(node);
  for (const value of Object.values(node)) {
    if (Array.isArray(value)) {
      for (const item of value) if (item && typeof item.type === 'string') visit(item, see);
    } else if (value && typeof value.type === 'string') {
      visit(value, see);
    }
  }
}
