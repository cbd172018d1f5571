// How much of the module an app would ship if the module held only what the
// app's imports reach (issue 23 item 6, "pay for what you import"): a
// measurement of what a split could gain, not a build. The JS and the module
// as one graph for wasm-metadce: each top-level declaration of wasm-bindgen's
// glue (target/bindgen, as written) and each function of its import object
// reaches the declarations and wasm exports its text names; the module's code
// reaches its imports. From the glue functions an app uses (and initSync),
// metadce keeps what is reachable and removes the rest; then the build's
// wasm-opt passes run. A class keeps all its methods (any may be called), so
// the figure is what one module per app could be at most, before any
// restructuring.
//
//   node benches/split-floor.mjs        (after npm run build)
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { WASM_OPT_FEATURES, WASM_OPT_PASSES, wasmOptBin } from '../js/build/toolchain.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const bindgen = join(root, 'target', 'bindgen');
const glue = join(bindgen, 'toolmark_bridge.js');
const input = join(bindgen, 'toolmark_bridge_bg.wasm');
const work = join(root, 'target', 'split-floor');
mkdirSync(work, { recursive: true });
const metadce = join(root, 'node_modules', '.bin', 'wasm-metadce');

// The glue's own exports each app's public names come from (the shim's
// entries read these: js/src).
const APPS = {
  'everything (every glue export)': null,
  'in-page only (createToolmark, bridge, createInPageChannel)': ['createToolmark', 'bridge', 'createInPageChannel'],
  'bridge + websocketTransport (and createToolmark)': ['createToolmark', 'bridge', 'websocketTransport'],
  'protocol only (protocolVersion, protocolSchemas, validateMessage)': ['protocolVersion', 'protocolSchemas', 'validateMessage'],
};

const gz = (data) => gzipSync(data, { level: 9 }).length;
const glueText = readFileSync(glue, 'utf8');
const allExports = [...glueText.matchAll(/^export (?:class|function) (\w+)/gm)].map((m) => m[1]);
// The wasm exports the module has (wasm-bindgen's intrinsics among them).
const wasmExports = JSON.parse(execFileSync(process.execPath, ['-e', `
  const m = new WebAssembly.Module(require('fs').readFileSync(${JSON.stringify(input)}));
  console.log(JSON.stringify(WebAssembly.Module.exports(m).map((e) => e.name)));`], { encoding: 'utf8' }));

// The glue's top-level declarations (functions, classes, consts) and the
// import object's functions, each with the wasm exports and the
// declarations its text names.
const lines = glueText.split('\n');
const units = new Map();
const imports = new Map();
{
  let current = null;
  let inImports = false;
  for (const line of lines) {
    const top = line.match(/^(?:export )?(?:async )?(?:class|function|const|let) ([\w$]+)/);
    const entry = line.match(/^ {8}([\w$]+): function/);
    if (top) {
      inImports = top[1] === '__wbg_get_imports';
      current = { name: top[1], text: '', kind: 'unit' };
      units.set(top[1], current);
    } else if (inImports && entry) {
      current = { name: entry[1], text: '', kind: 'import' };
      imports.set(entry[1], current);
    } else if (inImports && /^ {4}\};/.test(line)) {
      current = null;
    }
    if (current) current.text += `${line}\n`;
  }
  units.get('__wbg_get_imports').text = '';
}
const reaches = (text) => [
  ...[...units.keys()].filter((name) => new RegExp(`(^|[^\\w$.])${name.replace(/\$/g, '\\$')}([^\\w$]|$)`).test(text)).map((name) => `unit:${name}`),
  ...wasmExports.filter((name) => text.includes(`wasm.${name}`)).map((name) => `export:${name}`),
];
const wasmImports = JSON.parse(execFileSync(process.execPath, ['-e', `
  const m = new WebAssembly.Module(require('fs').readFileSync(${JSON.stringify(input)}));
  console.log(JSON.stringify(WebAssembly.Module.imports(m).map((e) => [e.module, e.name])));`], { encoding: 'utf8' }));
const baseGraph = [
  ...[...units.values()].map((unit) => ({ name: `unit:${unit.name}`, reaches: reaches(unit.text).filter((r) => r !== `unit:${unit.name}`) })),
  ...wasmImports.map(([module, name]) => ({ name: `import:${module}:${name}`, import: [module, name], reaches: imports.has(name) ? reaches(imports.get(name).text) : [] })),
  ...wasmExports.map((name) => ({ name: `export:${name}`, export: name })),
];

const rows = [];
for (const [label, names] of Object.entries(APPS)) {
  const used = names ?? allExports;
  const roots = ['unit:initSync', 'export:memory', ...used.map((name) => `unit:${name}`)];
  const graph = [{ name: 'outside', root: true, reaches: roots }, ...baseGraph];
  const graphFile = join(work, 'graph.json');
  writeFileSync(graphFile, JSON.stringify(graph));
  const dce = join(work, 'dce.wasm');
  const out = join(work, 'out.wasm');
  const report = execFileSync(metadce, [input, '--graph-file', graphFile, '-o', dce, ...WASM_OPT_FEATURES], { encoding: 'utf8', maxBuffer: 64 << 20 });
  const unused = new Set(report.split('\n').filter((line) => line.startsWith('unused: ')).map((line) => line.slice(8)));
  execFileSync(wasmOptBin, [...WASM_OPT_PASSES, ...WASM_OPT_FEATURES, dce, '-o', out]);
  const wasm = readFileSync(out);
  const keptExports = wasmExports.filter((name) => !unused.has(`export:${name}`)).length;
  const keptUnits = [...units.keys()].filter((name) => !unused.has(`unit:${name}`));
  const glueKept = keptUnits.map((name) => units.get(name).text).join('') +
    wasmImports.filter(([module, name]) => !unused.has(`import:${module}:${name}`) && imports.has(name)).map(([, name]) => imports.get(name).text).join('');
  rows.push({ label, exports: `${keptExports}/${wasmExports.length}`, raw: wasm.length, gzip: gz(wasm), glue: gz(Buffer.from(glueKept)) });
  console.error(`measured ${label}`);
}

const pad = (value, width) => String(value).padStart(width);
const width = Math.max(...rows.map((row) => row.label.length));
console.log(`${'app'.padEnd(width)} ${pad('exports', 9)} ${pad('.wasm', 8)} ${pad('gzip', 7)} ${pad('vs all', 7)} ${pad('glue gzip', 9)}`);
for (const row of rows) {
  console.log(`${row.label.padEnd(width)} ${pad(row.exports, 9)} ${pad(row.raw, 8)} ${pad(row.gzip, 7)} ${pad((row.gzip / rows[0].gzip).toFixed(3), 7)} ${pad(row.glue, 9)}`);
}
