// npm run size: raw, gzip (level 9) and brotli (quality 11) sizes of every
// file shipped in pkg/, the total of what the size budget counts (every
// shipped .js except the React and the slim entry's), and beside
// it the peer a user would pick instead, @mcp-b/global's self-contained
// script (a devDependency, measured the same way in the same run).
//
//   node js/build/size.mjs [--twiggy]
//
// Then what an app ships, three ways: small apps bundled against pkg/ by
// esbuild (minified, ESM, browser platform), the inlined module included:
// in-page only, `bridge` + `websocketTransport`, and every entry's exports;
// and the slim entry's bundle with the bare .wasm it loads.
// And the size of the boundary's source: lines in src/wasm/ (all .rs) and
// the `#[wasm_bindgen_test]` tests in the repository.
//
// --twiggy adds the module's 20 largest functions and its size by crate:
// it rebuilds a copy of the module with names (wasm-opt with the build's
// passes and -g, on target/bindgen's output of `npm run build`) and reads
// it with twiggy (`cargo install twiggy`). Then what each part of the code
// costs gzipped, the unit of the size budget: the module's gzip bytes that
// go when that part's function bodies are replaced by `unreachable` (read
// and written by binaryen's JS API, the module as shipped otherwise).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { build, buildSync } from 'esbuild';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { compressedSizes } from './compressed.mjs';
import { WASM_OPT_FEATURES, WASM_OPT_LEVEL, WASM_OPT_ORDER, wasmOptBin } from './toolchain.mjs';
import { WASM_OPT_SHORT_NAMES } from './short-names.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const pkg = join(root, 'pkg');

function walk(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? walk(path) : [path];
  });
}

const sizes = (path, file) => sizesOf(readFileSync(path), file);
const sizesOf = (data, file) => ({ file, ...compressedSizes(data) });
const rows = walk(pkg).sort().map((path) => sizes(path, relative(pkg, path)));

// The inline entries' files: the slim entry (slim*.js, wasm/slim-module.js and
// the bare .wasm) is the alternative to them, not an addition.
const sum = (list, key) => list.reduce((total, row) => total + row[key], 0);
const pad = (value, width) => String(value).padStart(width);
const width = Math.max(...rows.map((row) => row.file.length), 28);

console.log(`${'file'.padEnd(width)} ${pad('raw', 9)} ${pad('gzip', 9)} ${pad('brotli', 9)}`);
for (const row of rows) {
  console.log(`${row.file.padEnd(width)} ${pad(row.raw, 9)} ${pad(row.gzip, 9)} ${pad(row.brotli, 9)}`);
}
console.log(`${'total (all files)'.padEnd(width)} ${pad(sum(rows, 'raw'), 9)} ${pad(sum(rows, 'gzip'), 9)} ${pad(sum(rows, 'brotli'), 9)}`);
const kb = (bytes) => (bytes / 1000).toFixed(1);

const readme = await appSizes();
console.log(`\nbudget: the README app ships ${kb(readme.gzip)} KB gzip of 100 KB`);
const peerFile = join(root, 'node_modules', '@mcp-b', 'global', 'dist', 'index.iife.js');
if (existsSync(peerFile)) {
  const { version } = JSON.parse(readFileSync(join(root, 'node_modules', '@mcp-b', 'global', 'package.json'), 'utf8'));
  const peer = sizes(peerFile, `peer: @mcp-b/global ${version} dist/index.iife.js`);
  console.log(`${peer.file} ${pad(peer.raw, 9)} ${pad(peer.gzip, 9)} ${pad(peer.brotli, 9)}`);
  console.log(`the README app against the peer: ${kb(readme.gzip)} KB / ${kb(peer.gzip)} KB = ${(readme.gzip / peer.gzip).toFixed(2)}×`);
} else {
  console.log('peer: @mcp-b/global is not installed (npm ci installs it)');
}
sourceCounts();

// binaryen's JS API (a large module) only for --twiggy.
if (process.argv.includes('--twiggy')) twiggy((await import('binaryen')).default);

/**
 * The apps: each imports the names it uses through the package's `exports`
 * (pkg/ linked as node_modules/@toolmark/bridge-wasm) and keeps them alive.
 */
async function appSizes() {
  const manifest = JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8'));
  // Every entry with JavaScript, its export names read from the entry file.
  const entries = Object.entries(manifest.exports)
    .filter(([, target]) => typeof target === 'object' && target.default?.endsWith('.js'))
    .map(([subpath, target]) => ({ specifier: `@toolmark/bridge-wasm${subpath.slice(1)}`, names: exportNames(join(pkg, target.default)) }));
  const apps = [
    ['in-page only (createToolmark, bridge, createInPageChannel)', {
      '@toolmark/bridge-wasm': ['createToolmark'], '@toolmark/bridge-wasm/bridge': ['bridge'],
      '@toolmark/bridge-wasm/bridge/in-page': ['createInPageChannel'],
    }],
    ['bridge + websocketTransport (and createToolmark)', {
      '@toolmark/bridge-wasm': ['createToolmark'], '@toolmark/bridge-wasm/bridge': ['bridge'],
      '@toolmark/bridge-wasm/bridge/websocket': ['websocketTransport'],
    }],
    ['the demo\'s imports (bridge, websocketTransport, formTools)', {
      '@toolmark/bridge-wasm': ['createToolmark', 'formTools'], '@toolmark/bridge-wasm/bridge': ['bridge'],
      '@toolmark/bridge-wasm/bridge/websocket': ['websocketTransport'],
    }],
    ['constants only (PROTOCOL_VERSION, protocolSchemas)', { '@toolmark/bridge-wasm/protocol': ['PROTOCOL_VERSION', 'protocolSchemas'] }],
    ['everything (every entry\'s exports; react itself external)',
      Object.fromEntries(entries.filter(({ specifier }) => !/\/(slim|inline)$/.test(specifier)).map(({ specifier, names }) => [specifier, names]))],
    ['inline: createToolmark, bridge, websocketTransport (every part, in hex)', {
      '@toolmark/bridge-wasm/inline': ['createToolmark', 'bridge', 'websocketTransport'],
    }],
    ['slim: initialize, createToolmark, bridge, websocketTransport (+ the .wasm below)', {
      '@toolmark/bridge-wasm/slim': ['initialize', 'createToolmark', 'bridge', 'websocketTransport'],
    }],
  ];
  const dir = mkdtempSync(join(tmpdir(), 'toolmark-apps-'));
  try {
    mkdirSync(join(dir, 'node_modules', '@toolmark'), { recursive: true });
    symlinkSync(pkg, join(dir, 'node_modules', '@toolmark', 'bridge-wasm'), 'dir');
    const appWidth = Math.max(...apps.map(([label]) => label.length));
    console.log(`\n${'what an app ships (esbuild, minified, ESM, browser; + the parts it fetches)'.padEnd(appWidth)} ${pad('raw', 9)} ${pad('gzip', 9)} ${pad('brotli', 9)}  parts`);
    let readme;
    for (const [label, imports] of apps) {
      let n = 0;
      const lines = Object.entries(imports).map(([specifier, names]) =>
        `import { ${names.map((name) => `${name} as n${n++}`).join(', ')} } from '${specifier}';`);
      lines.push(`globalThis.app = [${Array.from({ length: n }, (_, i) => `n${i}`).join(', ')}];`);
      writeFileSync(join(dir, 'app.js'), lines.join('\n'));
      const { outputFiles } = await build({
        entryPoints: [join(dir, 'app.js')], bundle: true, minify: true, format: 'esm', platform: 'browser',
        write: false, outfile: join(dir, 'out.js'), external: ['react'], legalComments: 'none', logLevel: 'error',
      });
      // The parts the bundle fetches (each gzip on its own, as a server sends them).
      const parts = [...new Set([...outputFiles[0].text.matchAll(/new URL\("\.\/([\w-]+\.wasm)"/g)].map((match) => match[1]))].sort();
      const files = [sizesOf(Buffer.from(outputFiles[0].contents), label), ...parts.map((part) => sizes(join(pkg, 'wasm', part), part))];
      const row = { file: label, raw: sum(files, 'raw'), gzip: sum(files, 'gzip'), brotli: sum(files, 'brotli') };
      console.log(`${row.file.padEnd(appWidth)} ${pad(row.raw, 9)} ${pad(row.gzip, 9)} ${pad(row.brotli, 9)}  ${parts.join(' ')}`);
      readme ??= label.startsWith('bridge + websocketTransport') ? row : undefined;
    }
    const bare = join(pkg, 'slim', 'toolmark_bridge.wasm');
    if (existsSync(bare)) {
      const row = sizes(bare, 'slim: the bare module, slim/toolmark_bridge.wasm');
      console.log(`${row.file.padEnd(appWidth)} ${pad(row.raw, 9)} ${pad(row.gzip, 9)} ${pad(row.brotli, 9)}`);
    }
    return readme;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function exportNames(file) {
  const { metafile } = buildSync({ entryPoints: [file], bundle: false, write: false, metafile: true, format: 'esm' });
  return Object.values(metafile.outputs)[0].exports;
}

/** Lines of src/wasm/ (every .rs, recursive) and `#[wasm_bindgen_test]` tests in the repository. */
function sourceCounts() {
  const rust = (dir) => walk(dir).filter((path) => path.endsWith('.rs'));
  const lines = rust(join(root, 'src', 'wasm')).reduce((total, path) => total + readFileSync(path, 'utf8').split('\n').length - 1, 0);
  const skip = new Set(['node_modules', 'target', 'pkg', '.git']);
  const everyRs = (dir) => readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    if (skip.has(entry.name)) return [];
    const path = join(dir, entry.name);
    return entry.isDirectory() ? everyRs(path) : entry.name.endsWith('.rs') ? [path] : [];
  });
  const tests = everyRs(root).reduce((total, path) => total + (readFileSync(path, 'utf8').match(/#\[wasm_bindgen_test(?:\(.*?\))?\]/g) ?? []).length, 0);
  console.log(`\nsrc/wasm/: ${lines} lines of Rust; #[wasm_bindgen_test] tests in the repository: ${tests}`);
}

/**
 * The module's 20 largest items and its size by crate, from a copy built
 * with names. An item's crate is the first path segment of its name (of T
 * for `<T as Trait>…` and `drop_in_place<T>`); the `#[wasm_bindgen]`
 * exports' shims (their Rust bodies inlined) and data segments apart. The
 * names section itself is not shipped and is left out.
 */
function twiggy(binaryen) {
  // The README app's part.
  const input = join(root, 'target', 'bindgen', 'parts', 'toolmark', 'toolmark_bg.wasm');
  if (!existsSync(input)) throw new Error('no target/bindgen/parts/toolmark/toolmark_bg.wasm: npm run build first');
  const dir = mkdtempSync(join(tmpdir(), 'toolmark-size-'));
  try {
    const named = join(dir, 'named.wasm');
    // The build's passes, with names, then its short import and export names.
    execFileSync(wasmOptBin, [...WASM_OPT_LEVEL, ...WASM_OPT_ORDER, '-g', ...WASM_OPT_FEATURES, input, '-o', named]);
    execFileSync(wasmOptBin, [...WASM_OPT_SHORT_NAMES, '-g', ...WASM_OPT_FEATURES, named, '-o', named], { stdio: 'ignore' });
    const csv = execFileSync('twiggy', ['top', '-n', '100000', '-f', 'csv', named], { encoding: 'utf8', maxBuffer: 64 << 20 });
    const items = csv.trim().split('\n').slice(1).map((line) => {
      const at = line.lastIndexOf(',', line.lastIndexOf(',', line.lastIndexOf(',') - 1) - 1);
      const name = line.slice(0, line.lastIndexOf(',', at - 1)).replace(/^"|"$/g, '').replace(/""/g, '"');
      return { name, bytes: Number(line.slice(line.lastIndexOf(',', at - 1) + 1, at)) };
    }).filter((item) => !/" subsection$|^custom section 'name' headers$/.test(item.name));
    const total = items.reduce((sum, item) => sum + item.bytes, 0);
    const short = (name) => name.replace(/\[[0-9a-f]{16}\]/g, '');
    console.log(`\ntwiggy: the 20 largest items (shallow bytes; ${total} bytes in all, without the names section)`);
    for (const item of items.slice(0, 20)) console.log(`${pad(item.bytes, 8)}  ${short(item.name).slice(0, 150)}`);
    // Functions by the crate of their part ([partOf]); the rest by what
    // it is.
    const crateOf = (name) => {
      if (name.startsWith('data segment')) return '(data segments)';
      if (/ shim/.test(name) && !name.includes('::')) return '(#[wasm_bindgen] exports, bodies inlined)';
      if (/^(?:type|import|export|table|global|memory|elem|custom section|wasm magic)\b|section headers$/.test(name)) {
        return '(module structure: types, imports, tables, exports)';
      }
      const part = partOf(name);
      return part.startsWith('(') ? part : part.split('::')[0];
    };
    const byCrate = new Map();
    for (const item of items) byCrate.set(crateOf(item.name), (byCrate.get(crateOf(item.name)) ?? 0) + item.bytes);
    console.log('\ntwiggy: by crate (shallow bytes)');
    for (const [crate, bytes] of [...byCrate].sort((a, b) => b[1] - a[1]).slice(0, 20)) {
      console.log(`${pad(bytes, 8)}  ${crate}`);
    }
    gzipByPart(binaryen, readFileSync(named));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The part of the module a function's name places it in: a module of this
 * crate (a submodule of the larger ones), or another crate; a type's drop
 * glue and trait impls go with the type, a generic `T`'s with the trait.
 */
function partOf(name) {
  const bare = name.replace(/^(?:<|&|mut |dyn |\()+/, '');
  const dropped = bare.match(/^core(?:\[\w+\])?::ptr::drop_in_place<(?:<|&|mut |\()*(.*)$/);
  const path = dropped ? dropped[1] : bare;
  const ours = path.match(/^toolmark_bridge::(\w+)(?:::([a-z_]\w*))?/);
  if (ours) {
    // This crate's modules, and the submodules of the larger ones.
    const split = ['schema', 'wasm', 'protocol', 'lifecycle', 'transport'].includes(ours[1]) && ours[2];
    return `toolmark_bridge::${ours[1]}${split ? `::${ours[2]}` : ''}`;
  }
  // A type named without its crate (a generic `T`, a primitive, a slice or
  // array): its trait's crate, or core's for the primitives' own methods.
  const unnamed = path.match(/^(?:\w+|\[[^\]]*\])(?: as (?:<|&|mut )*([A-Za-z_]\w*)|>::)/);
  const crate = unnamed ? (unnamed[1] ?? 'core') : path.match(/^([A-Za-z_]\w*)(?:\[\w+\])?::/)?.[1];
  if (!crate) return "(wasm-bindgen's generated functions)";
  return ['str', 'u8', 'u16', 'u32', 'u64', 'usize', 'i32', 'i64', 'f64', 'char', 'bool'].includes(crate) ? 'core' : crate;
}

/**
 * The gzip bytes (level 9, Node's zlib) each part of `module`'s code costs
 * ([partOf]), read and written with `binaryen`'s JS API: the module with
 * that part's function bodies replaced by `unreachable`, against the module
 * as it is, both without names. The parts
 * share what gzip finds repeated, so the column adds up to less than the
 * whole; data segments are apart (not code).
 */
function gzipByPart(binaryen, module) {
  const mod = binaryen.readBinary(module);
  try {
    mod.setFeatures(binaryen.Features.All);
    const gzipped = () => gzipSync(mod.emitBinary(), { level: 9 }).length;
    const whole = gzipped();
    const parts = new Map();
    for (let i = 0; i < mod.getNumFunctions(); i++) {
      const func = mod.getFunctionByIndex(i);
      const { name, module: imported } = binaryen.getFunctionInfo(func);
      if (imported) continue;
      const part = partOf(name);
      (parts.get(part) ?? parts.set(part, []).get(part)).push(func);
    }
    const rows = [];
    for (const [part, funcs] of parts) {
      const bodies = funcs.map((func) => binaryen.getFunctionInfo(func).body);
      for (const func of funcs) binaryen.Function.setBody(func, mod.unreachable());
      rows.push({ part, gzip: whole - gzipped(), functions: funcs.length });
      funcs.forEach((func, k) => binaryen.Function.setBody(func, bodies[k]));
    }
    console.log(`\ngzip by part (bytes the module loses gzipped without the part's code; ${whole} bytes gzip in all, without names)`);
    for (const row of rows.sort((a, b) => b.gzip - a.gzip).slice(0, 30)) {
      console.log(`${pad(row.gzip, 8)}  ${row.part} (${row.functions} functions)`);
    }
  } finally {
    mod.dispose();
  }
}
