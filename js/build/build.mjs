// npm run build: compiles the crate to WebAssembly and assembles pkg/.
//
// 1. cargo build --release --target wasm32-unknown-unknown
// 2. wasm-bindgen --target web (the CLI version must equal the pinned crate)
// 3. wasm-opt -Oz (binaryen from npm; Debian's is too old), then short
//    import and export names, the glue rewritten to match
// 4. the module is inlined (hex: ASCII only) and instantiated synchronously, so
//    `import` is enough: no init() call, no fetch, no bundler plugin
// 5. js/src copied in; the shim's modules and the glue bundled into core.js
//    (the entry files re-export it), schemas emitted from the Rust source of
//    truth, package.json from pkg-template/
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync, existsSync } from 'node:fs';
import { build, buildSync, transformSync } from 'esbuild';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { homedir } from 'node:os';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const pkg = join(root, 'pkg');
const bindgenOut = join(root, 'target', 'bindgen');
const crateName = 'toolmark_bridge';

function run(cmd, args, opts = {}) {
  console.error(`$ ${cmd} ${args.join(' ')}`);
  execFileSync(cmd, args, { stdio: 'inherit', cwd: root, ...opts });
}

function pinnedBindgenVersion() {
  const lock = readFileSync(join(root, 'Cargo.lock'), 'utf8');
  const match = lock.match(/name = "wasm-bindgen"\nversion = "([^"]+)"/);
  if (!match) throw new Error('wasm-bindgen not found in Cargo.lock');
  return match[1];
}

// --js-only: reassemble pkg/ from js/src and the last compiled module (no
// Rust rebuild), for shim work.
const jsOnly = process.argv.includes('--js-only');

/**
 * Minifies every shipped .js in place (not the inlined module, one string
 * already). Non-ASCII characters become escapes (esbuild's default charset),
 * so every file reads the same in any charset. Declarations keep the documentation.
 */
function minifyShippedJs(dir = pkg) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) {
      minifyShippedJs(path);
    } else if (name.endsWith('.js') && name !== 'bytes.js') {
      const { code } = transformSync(readFileSync(path, 'utf8'), {
        loader: 'js',
        format: 'esm',
        minify: true,
        legalComments: 'none',
        target: 'es2020',
      });
      writeFileSync(path, code);
    }
  }
}

/**
 * The entry points that need the core: their modules, the shim's internal
 * modules and the wasm-bindgen glue become one bundle, `core.js`, and each
 * entry file a one-line re-export of it. One file compresses as one text
 * (the budget counts gzip per file): 1.7 KB less than a file per module.
 * The other transports and the React hook import nothing of ours and stay apart;
 * the inlined module stays in `wasm/bytes.js`.
 */
const CORE_ENTRIES = ['index.js', 'bridge/index.js', 'bridge/in-page.js', 'bridge/post-message.js', 'bridge/websocket.js', 'bridge/echo.js', 'protocol/index.js', 'webmcp/index.js'];
const BUNDLED_AWAY = ['toolmark.js', 'errors.js', 'context.js', 'strict-json.js', 'forms.js', 'paths.js', 'internal.js',
  'wasm/loader.js', `wasm/${crateName}.js`];

function exportNames(entry) {
  const { metafile } = buildSync({
    entryPoints: [join(pkg, entry)], bundle: false, write: false, metafile: true, format: 'esm',
  });
  return Object.values(metafile.outputs)[0].exports;
}

async function bundleCore() {
  const owner = new Map();
  const reexports = CORE_ENTRIES.map((entry) => {
    const names = exportNames(entry);
    for (const name of names) {
      if (owner.has(name)) throw new Error(`${name} is exported by both ${owner.get(name)} and ${entry}`);
      owner.set(name, entry);
    }
    return { entry, names };
  });
  await build({
    stdin: {
      contents: reexports.map(({ entry, names }) => `export { ${names.join(', ')} } from './${entry}';`).join('\n'),
      resolveDir: pkg,
      loader: 'js',
    },
    bundle: true,
    format: 'esm',
    minify: true,
    legalComments: 'none',
    target: 'es2020',
    outfile: join(pkg, 'core.js'),
    plugins: [{
      name: 'module-bytes-apart',
      setup(build) {
        build.onResolve({ filter: /\/bytes\.js$/ }, () => ({ path: './wasm/bytes.js', external: true }));
      },
    }],
  });
  for (const { entry, names } of reexports) {
    const core = relative(dirname(join(pkg, entry)), join(pkg, 'core.js')).replace(/^(?!\.)/, './');
    writeFileSync(join(pkg, entry), `export { ${names.join(', ')} } from '${core}';\n`);
  }
  for (const file of BUNDLED_AWAY) rmSync(join(pkg, file));
}

// Its own target directory: the shipped build's flags differ from the tests'.
const shippedTarget = join(root, 'target', 'shipped');
const rawWasm = join(bindgenOut, `${crateName}_bg.wasm`);
const optWasm = join(bindgenOut, `${crateName}_opt.wasm`);
const shippedWasm = join(bindgenOut, `${crateName}_shipped.wasm`);
const namesFile = join(bindgenOut, 'minified-names.json');
if (jsOnly) {
  if (!existsSync(shippedWasm) || !existsSync(namesFile)) throw new Error('no compiled module yet: npm run build');
} else {
  // 1. compile
  // The crates' source paths (kept in the module for panic locations) made
  // relative to the registry, std's sources and the crate: shorter, and the
  // same on every machine.
  const cargoHome = process.env.CARGO_HOME || join(homedir(), '.cargo');
  const registry = join(cargoHome, 'registry', 'src');
  const sysroot = execFileSync('rustc', ['--print', 'sysroot'], { encoding: 'utf8' }).trim();
  const remaps = [
    `${root}/=`,
    // std's own sources, when std is compiled with the module (below).
    `${join(sysroot, 'lib', 'rustlib', 'src', 'rust')}/=`,
    ...(existsSync(registry) ? readdirSync(registry).map((index) => `${join(registry, index)}/=`) : []),
  ];
  const rustflags = remaps.map((remap) => `"--remap-path-prefix=${remap}"`).join(', ');
  // The standard library is compiled with the module (rustup's `rust-src`,
  // which .ci/setup adds): `optimize_for_size` picks std's small code paths
  // and `-Cpanic=immediate-abort` drops the panic machinery and its messages
  // (a panic traps either way). 6.0 KB less of the budget line
  // (docs/benchmarks.md, "The standard library built for size").
  // `-Zlocation-detail=none`: the panic locations (file, line, column) that
  // calls still pass are left empty, so no source path is kept for a panic
  // that only traps (0.8 KB of the budget line). These are
  // unstable cargo and rustc flags, opened on a stable toolchain by
  // RUSTC_BOOTSTRAP=1 for this one build; without rust-src the build says so
  // and uses the prebuilt std.
  const buildStd = existsSync(join(sysroot, 'lib', 'rustlib', 'src', 'rust', 'library', 'std'));
  const flags = [rustflags];
  const cargoArgs = ['build', '--lib', '--release', '--target', 'wasm32-unknown-unknown', '--target-dir', shippedTarget];
  if (buildStd) {
    flags.push('"-Zunstable-options"', '"-Cpanic=immediate-abort"', '"-Zlocation-detail=none"');
    cargoArgs.push('-Zbuild-std=std,panic_abort', '-Zbuild-std-features=optimize_for_size');
  } else {
    console.error('build: no rust-src (rustup component add rust-src): std is not rebuilt for size, the module is about 12 KB larger');
  }
  run('cargo', [...cargoArgs, '--config', `target.wasm32-unknown-unknown.rustflags = [${flags.join(', ')}]`],
    buildStd ? { env: { ...process.env, RUSTC_BOOTSTRAP: '1' } } : {});

  // 2. bindgen, with a version check: a mismatch fails at runtime otherwise
  const want = pinnedBindgenVersion();
  const have = execFileSync('wasm-bindgen', ['--version'], { encoding: 'utf8' }).trim().split(' ')[1];
  if (have !== want) {
    throw new Error(`wasm-bindgen CLI ${have} does not match the pinned crate ${want}: cargo install --locked wasm-bindgen-cli --version ${want}`);
  }
  rmSync(bindgenOut, { recursive: true, force: true });
  // --omit-default-module-path: no `new URL('…_bg.wasm', import.meta.url)`
  // default for bundlers to follow (the module is inlined, no such file ships);
  // --encode-into always: every supported host has TextEncoder#encodeInto.
  // The generated .d.ts stays in target/bindgen (tests/node/declarations.test.mjs
  // checks the package's declarations against it); it does not ship.
  run('wasm-bindgen', [
    '--target', 'web', '--omit-default-module-path', '--encode-into', 'always',
    '--out-dir', bindgenOut, '--out-name', crateName,
    join(shippedTarget, 'wasm32-unknown-unknown', 'release', `${crateName}.wasm`),
  ]);

  // 3. optimize for size (features: what rustc's wasm32 target enables by default).
  //    --low-memory-unused: rustc lays the stack out first (data from 1 MiB up),
  //    so nothing lives in the low 1 KiB and constant offsets may fold into
  //    loads and stores; --flatten --rereloop rebuilds the control flow of
  //    the once-optimized code, which the second -Oz then shrinks further
  //    (1.1% smaller); --gufa (whole-module flow analysis) and a last -Oz
  //    take another 0.4% of the gzipped module; --converge repeats it all
  //    until it stops gaining. --strip-target-features: the custom section
  //    that lists the features the module was built with (151 bytes; no
  //    host reads it).
  //    See docs/benchmarks.md, "Package size".
  const wasmOpt = join(root, 'node_modules', '.bin', 'wasm-opt');
  const features = [
    '--enable-bulk-memory', '--enable-nontrapping-float-to-int', '--enable-sign-ext',
    '--enable-mutable-globals', '--enable-reference-types', '--enable-multivalue',
  ];
  run(wasmOpt, [
    '--low-memory-unused', '-Oz', '--flatten', '--rereloop', '-Oz', '--gufa', '-Oz', '--converge',
    '--strip-debug', '--strip-producers', '--strip-target-features', ...features,
    rawWasm, '-o', optWasm,
  ]);

  // 3b. short import, export and module names. wasm-bindgen names each
  //     import `__wbg_<name>_<16 hex digits>` and some exports after their
  //     full Rust paths (the closure shims' run to 300 characters); each
  //     name is in the module and again in the glue, and the hashes do not
  //     compress. binaryen renames them all (one module, `a`) and prints the
  //     old and new names, by which the glue is rewritten below (module
  //     −8.4 KB raw, budget −5.2 KB gzip: docs/benchmarks.md, "Package size").
  const names = execFileSync(wasmOpt, ['--minify-imports-and-exports-and-modules', ...features, optWasm, '-o', shippedWasm], {
    encoding: 'utf8',
  });
  writeFileSync(namesFile, names);
}

/**
 * The glue with the module's minified names (step 3b): `wasm.<export>`
 * read by its new name, and the import object one module, `a`, whose keys
 * are the new names (the snippets' imports taken from their namespaces).
 * Every name must be found exactly where the glue is expected to have it,
 * or the build fails: a glue of another shape is not patched by guess.
 */
function renameInGlue(glue, { imports, exports }) {
  const exported = new Map(exports);
  let out = glue.replace(/\bwasm\.([A-Za-z_$][\w$]*)/g, (_, name) => {
    if (!exported.has(name)) throw new Error(`wasm-bindgen glue reads wasm.${name}, which the module does not export`);
    return `wasm.${exported.get(name)}`;
  });
  // Keyed by the path as wasm-bindgen wrote it, which is the module's import name.
  const namespaces = new Map([...out.matchAll(/^import \* as (import\d+) from (['"])(.*?)\2/gm)].map((m) => [m[3], m[1]]));
  const header = '    const import0 = {\n        __proto__: null,\n';
  if (out.split(header).length !== 2) throw new Error('wasm-bindgen glue changed: no single `const import0 = {` found');
  const fromSnippets = [];
  for (const [module, name, short] of imports) {
    if (module === `./${crateName}_bg.js`) {
      const key = new RegExp(`^(\\s+)${name.replace(/\$/g, '\\$')}:`, 'gm');
      let found = 0;
      out = out.replace(key, (_, indent) => {
        found += 1;
        return `${indent}${short}:`;
      });
      if (found !== 1) throw new Error(`wasm-bindgen glue changed: import ${name} defined ${found} times`);
    } else {
      const namespace = namespaces.get(module);
      if (!namespace) throw new Error(`wasm-bindgen glue changed: no namespace import of ${module}`);
      fromSnippets.push(`        ${short}: ${namespace}.${name},\n`);
    }
  }
  out = out.replace(header, () => header + fromSnippets.join(''));
  const tables = /return \{\n        __proto__: null,\n(?:        "[^"]+": import\d+,\n)+    \};/;
  if (!tables.test(out)) throw new Error('wasm-bindgen glue changed: no import object by module found');
  return out.replace(tables, 'return { __proto__: null, a: import0 };');
}

// 4. assemble pkg/
rmSync(pkg, { recursive: true, force: true });
mkdirSync(join(pkg, 'wasm'), { recursive: true });
cpSync(join(root, 'js', 'src'), pkg, { recursive: true });

// The core imports ToolmarkError from js/src/errors.js (src/wasm/error.rs),
// and the run context and the strict
// `JSON.stringify` from their files;
// wasm-bindgen copies each into snippets/. The glue imports the package's
// own files instead (bundled into core.js), so there is one ToolmarkError
// class and `instanceof` holds.
const snippetImport = /from (['"])\.\/snippets\/[^'"]*\/js\/src\/([\w-]+)\.js\1/g;
const rawGlue = readFileSync(join(bindgenOut, `${crateName}.js`), 'utf8');
const snippets = [...rawGlue.matchAll(snippetImport)].map((match) => match[2]);
for (const name of ['errors', 'context', 'strict-json']) {
  if (!snippets.includes(name)) throw new Error(`wasm-bindgen glue changed: no import of the ${name}.js snippet found`);
}
const glue = renameInGlue(rawGlue, JSON.parse(readFileSync(namesFile, 'utf8'))).replace(snippetImport, "from '../$2.js'");
if (glue.includes('import.meta.url')) throw new Error('wasm-bindgen glue resolves a .wasm URL: bundlers would follow it');
writeFileSync(join(pkg, 'wasm', `${crateName}.js`), glue);

const bytes = readFileSync(shippedWasm);
writeFileSync(join(pkg, 'wasm', 'bytes.js'), inlineModule(bytes));
// The module's exports as the glue names them (its class and functions; not
// initSync or the async default loader, which the shim never uses).
const exported = [...glue.matchAll(/^export (?:class|function) (\w+)/gm)].map((match) => match[1]);
for (const name of ['Toolmark', 'Scope', 'Events', 'Bridge', 'createToolmark', 'bridge']) {
  if (!exported.includes(name)) throw new Error(`wasm-bindgen glue changed: no \`export ${name}\` found`);
}
writeFileSync(
  join(pkg, 'wasm', 'loader.js'),
  `// Generated by js/build/build.mjs: decodes the inlined module (hex) and instantiates it synchronously.
import { hex } from './bytes.js';
import { initSync, ${exported.join(', ')} } from './${crateName}.js';

// A hex digit's value: '0'-'9' are 0x30-0x39, 'a'-'f' 0x61-0x66.
const digit = (c) => (c & 15) + (c >> 6) * 9;

function decode() {
  // Native (Chrome 140+, Firefox 133+, Safari 18.2+, Node 25+).
  if (typeof Uint8Array.fromHex === 'function') return Uint8Array.fromHex(hex);
  // Node before 25.
  if (typeof Buffer === 'function') return Buffer.from(hex, 'hex');
  // Older browsers, workers and extension pages.
  const out = new Uint8Array(hex.length >> 1);
  for (let i = 0, j = 0; i < out.length; i++, j += 2) out[i] = (digit(hex.charCodeAt(j)) << 4) | digit(hex.charCodeAt(j + 1));
  return out;
}

try {
  initSync({ module: decode() });
} catch (error) {
  if (/wasm-eval|unsafe-eval/.test(String(error && error.message))) {
    throw new Error(
      "@toolmark/bridge-wasm: this page's Content Security Policy blocks WebAssembly. Allow it with " +
        "'wasm-unsafe-eval' in script-src (in an MV3 extension: \\"content_security_policy\\": " +
        "{ \\"extension_pages\\": \\"script-src 'self' 'wasm-unsafe-eval'; object-src 'self';\\" }).",
      { cause: error },
    );
  }
  throw error;
}

// Defined here (not re-exported), so no bundler can keep the functions and
// drop the module that initializes them; named one by one (not the glue's
// namespace), so bundlers leave the glue's unused async loader out.
export const wasm = { ${exported.join(', ')} };
`,
);

/**
 * The module as a JS string in hex: ASCII only, so the file means the same
 * whatever charset a page decodes it in (a classic script on a page that
 * declares none is read as windows-1252). Hex keeps each byte in two whole
 * characters, so gzip still finds the module's repeats: 12% over the bare
 * module's gzip, where base64 costs 29% (docs/benchmarks.md, "Inlined module").
 */
function inlineModule(wasm) {
  return `// Generated by js/build/build.mjs: the WebAssembly module in hex (see loader.js).\nexport const hex = "${wasm.toString('hex')}";\n`;
}

// 5. package.json, README, schemas
const manifest = JSON.parse(readFileSync(join(root, 'pkg-template', 'package.json'), 'utf8'));
writeFileSync(join(pkg, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
for (const file of ['README.md', 'LICENSE']) {
  const from = join(root, 'pkg-template', file);
  if (existsSync(from)) cpSync(from, join(pkg, file));
}

await bundleCore();
minifyShippedJs();
assertAsciiJs();

/**
 * Every shipped .js is pure ASCII: a classic script on a page that declares
 * no charset is decoded as windows-1252, where any other byte changes meaning.
 */
function assertAsciiJs(dir = pkg) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) {
      assertAsciiJs(path);
    } else if (name.endsWith('.js')) {
      const at = readFileSync(path).findIndex((byte) => byte > 0x7e || (byte < 0x20 && byte !== 0x0a));
      if (at !== -1) throw new Error(`${relative(pkg, path)} is not printable ASCII at byte ${at}`);
    }
  }
}

const { protocolSchemas } = await import(pathToFileURL(join(pkg, 'protocol', 'index.js')).href);
mkdirSync(join(pkg, 'protocol', 'v1'), { recursive: true });
writeFileSync(join(pkg, 'protocol', 'v1', 'page-to-agent.json'), `${JSON.stringify(protocolSchemas.pageToAgent, null, 2)}\n`);
writeFileSync(join(pkg, 'protocol', 'v1', 'agent-to-page.json'), `${JSON.stringify(protocolSchemas.agentToPage, null, 2)}\n`);

console.error(`built pkg/ (${bytes.length} bytes of wasm, ${existsSync(rawWasm) ? readFileSync(rawWasm).length : 0} before wasm-opt)`);
