// npm run build: compiles the crate to WebAssembly and assembles pkg/.
//
// For each part (PARTS below: a Cargo feature each) and for the whole module:
// 1. cargo build --release --target wasm32-unknown-unknown (stable Rust, the
//    release profile of Cargo.toml)
// 2. wasm-bindgen --target web (the CLI version must equal the pinned crate)
// 3. wasm-opt (binaryen from npm; the passes in js/build/toolchain.mjs),
//    then short import and export names, in the module and its glue
//    (js/build/short-names.mjs)
// Then:
// 4. each part's glue and the shim files that call it bundled into
//    wasm/<part>.js (browsers: streams wasm/<part>.wasm before the importer
//    runs) and wasm/<part>.node.js (Node: reads it synchronously); the entry
//    files re-export them (package.json's `node` and `default` conditions)
// 5. the whole module inlined (hex) for /inline and bare for /slim
// 6. schemas and the protocol constants emitted from the Rust source of
//    truth, package.json from pkg-template/
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync, existsSync } from 'node:fs';
import { build, buildSync, transformSync } from 'esbuild';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { shortenNames } from './short-names.mjs';
import { cargoBuildArgs, WASM_OPT_FEATURES, WASM_OPT_PASSES, wasmOptBin } from './toolchain.mjs';

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
 * Minifies every shipped .js for browsers in place, each with its source map
 * (`<file>.js.map`); not the inlined module (one string already) nor the
 * protocol constants (written compact, and a minifier would drop their pure
 * annotation). Non-ASCII characters become escapes (esbuild's default charset),
 * so every file reads the same in any charset. Declarations keep the documentation.
 */
function minifyShippedJs(dir = pkg) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) {
      minifyShippedJs(path);
    } else if (name.endsWith('.js') && name !== 'bytes.js' && name !== 'constants.js') {
      // Node's files (`*.node.js`) stay readable: no app ships them, and
      // Node prints an uncaught error's source line. (The others keep their
      // one long line: bundlers find `new URL('…', import.meta.url)` only
      // when it is not broken across lines.)
      const node = name.endsWith('.node.js');
      const { code, map } = transformSync(readFileSync(path, 'utf8'), {
        loader: 'js',
        format: 'esm',
        minify: !node,
        legalComments: 'none',
        // `ToolmarkError` keeps its name as a class (error.constructor.name).
        keepNames: name === 'errors.js',
        // The default entries' module bundles await their module on import.
        target: /^wasm\/[\w-]+\.js$/.test(relative(pkg, path)) && !name.includes('glue') ? 'es2022' : 'es2020',
        // A browser file's map leads a stack to the readable file it was
        // minified from (carried in the map: nothing else to fetch).
        ...(node ? {} : { sourcemap: 'external', sourcefile: name.replace(/\.js$/, '.readable.js'), sourcesContent: true }),
      });
      if (node) {
        writeFileSync(path, code);
      } else {
        writeFileSync(path, `${code}//# sourceMappingURL=${name}.map\n`);
        writeFileSync(`${path}.map`, map);
      }
    }
  }
}

/**
 * The package's modules (Cargo.toml's features): each is built on its own,
 * and bundled with the shim files that call it into `wasm/<name>.js`
 * (browsers: streams `wasm/<name>.wasm`) and `wasm/<name>.node.js` (Node:
 * reads it). An app loads the modules of what it imports: the README's app
 * only `toolmark`. `full` has every feature, for the `/inline` and `/slim`
 * entries (one module each, the whole API).
 */
const PARTS = {
  toolmark: ['toolmark.js', 'ids.js', 'bridge/index.js', 'bridge/in-page.js', 'bridge/websocket.js'],
  echo: ['bridge/echo.js'],
  'post-message': ['bridge/post-message.js'],
  forms: ['forms.js'],
  protocol: ['protocol/validate.js'],
  paths: ['paths.js'],
  webmcp: ['webmcp/index.js'],
};
const FULL = 'toolmark_bridge';
// Files shared by every bundle as they are: one ToolmarkError class for all
// modules (`instanceof` holds), and the protocol constants.
const SHARED = { ToolmarkError: 'errors.js', PROTOCOL_VERSION: 'protocol/constants.js', protocolSchemas: 'protocol/constants.js' };
const SHIMS = Object.values(PARTS).flat();
const BUNDLED_AWAY = [...SHIMS, 'internal.js', 'api-ends.js', 'context.js', 'strict-json.js', 'unicode-property.js', 'wasm-csp.js'];

function exportNames(entry) {
  const { metafile } = buildSync({
    entryPoints: [join(pkg, entry)], bundle: false, write: false, metafile: true, format: 'esm',
  });
  return Object.values(metafile.outputs)[0].exports;
}

// A wasm-bindgen snippet path: `./snippets/<crate>-<hash>/js/src/<name>.js`.
const SNIPPET = /^\.\/snippets\/[^/]+\/js\/src\/([\w-]+)\.js$/;

/** The public entries: the `.js` files package.json's exports name. */
function entryFiles(manifest) {
  return Object.values(manifest.exports)
    .map((target) => (typeof target === 'object' ? target.default : target))
    .filter((file) => file.endsWith('.js') && !file.startsWith('./slim') && !file.startsWith('./inline') && !file.startsWith('./react/'))
    .map((file) => file.slice(2));
}

async function bundleCore(manifest) {
  // Which module each name of the shim files comes from.
  const owner = new Map();
  const shimNames = new Map();
  for (const [part, shims] of Object.entries(PARTS)) {
    for (const shim of shims) {
      const names = exportNames(shim);
      shimNames.set(shim, names);
      for (const name of names) {
        if (owner.has(name)) throw new Error(`${name} is exported by two shim files`);
        owner.set(name, part);
      }
    }
  }
  const reexports = (shims) => shims.map((shim) => `export { ${shimNames.get(shim).join(', ')} } from './${shim}';`).join('\n');
  for (const [part, shims] of Object.entries(PARTS)) {
    for (const platform of ['browser', 'node']) {
      await bundleEntries(reexports(shims), `wasm/${part}${platform === 'node' ? '.node' : ''}.js`, join(pkg, 'wasm', `loader-${part}.${platform}.js`), platform === 'browser' ? 'es2022' : 'es2020');
    }
  }
  // The whole API on the full module: `/inline` (the module in hex,
  // instantiated on import) and the slim entry's core (its loader's
  // `instantiate`, which `initialize` calls with the module it compiled).
  const everything = reexports(SHIMS);
  await bundleEntries(everything, 'inline-core.js', join(pkg, 'wasm', 'loader-inline.js'));
  await bundleEntries(`${everything}\nexport { instantiate } from './wasm/slim-loader.js';`, 'slim-core.js', join(pkg, 'wasm', 'slim-loader.js'));

  // Each entry re-exports its names from the modules' bundles (and the
  // shared files), once for browsers and once for Node (`.node.js`).
  const entries = entryFiles(manifest).map((entry) => ({ entry, names: exportNames(entry) }));
  for (const { entry, names } of entries) {
    for (const node of [false, true]) {
      const from = new Map();
      for (const name of names) {
        const file = owner.has(name) ? `wasm/${owner.get(name)}${node ? '.node' : ''}.js` : SHARED[name];
        if (!file) throw new Error(`${entry} exports ${name}, which no shim file or shared file has`);
        from.set(file, [...(from.get(file) ?? []), name]);
      }
      const lines = [...from].map(([file, list]) => {
        const path = relative(dirname(join(pkg, entry)), join(pkg, file)).replace(/^(?!\.)/, './');
        return `export { ${list.join(', ')} } from '${path}';`;
      });
      writeFileSync(join(pkg, node ? entry.replace(/\.js$/, '.node.js') : entry), `${lines.join('\n')}\n`);
    }
  }
  const inlineNames = [...new Set(entries.flatMap(({ names }) => names))];
  writeFileSync(join(pkg, 'inline.js'), `export { ${inlineNames.filter((name) => owner.has(name)).join(', ')} } from './inline-core.js';
${[...new Set(inlineNames.filter((name) => !owner.has(name)).map((name) => SHARED[name]))].map((file) => `export { ${inlineNames.filter((name) => SHARED[name] === file).join(', ')} } from './${file}';`).join('\n')}
`);
  await bundleSlimEntry(entries, owner);
  writeFileSync(join(pkg, 'inline.d.ts'), `// @toolmark/bridge-wasm/inline: the whole API, with the module (every part)
// inlined in the JS and instantiated synchronously on import: for hosts that
// cannot fetch a file of the package or await on import (a service worker, a
// content script whose page forbids fetching it). It ships the module as hex
// (12% more gzip than the file the other entries stream).
${entries.map(({ entry }) => `export * from './${entry}';`).join('\n')}
`);
  for (const file of [...BUNDLED_AWAY, 'wasm/slim-loader.js', 'wasm/loader-inline.js', `wasm/${FULL}.js`, ...Object.keys(PARTS).flatMap((part) => [`wasm/loader-${part}.browser.js`, `wasm/loader-${part}.node.js`])]) {
    if (!entries.some(({ entry }) => entry === file)) rmSync(join(pkg, file), { force: true });
  }
  for (const name of readdirSync(join(pkg, 'wasm'))) {
    if (name.startsWith('glue-')) rmSync(join(pkg, 'wasm', name));
  }
}

/**
 * Bundles `contents` (re-exports of shim files) into `outfile`, with `loader`
 * in place of wasm/loader.js. Not minified here: minifyShippedJs minifies the
 * browsers' files once, with their maps; Node's stay readable (no app ships
 * them, and an error's source line is readable).
 */
async function bundleEntries(contents, outfile, loader, target = 'es2020') {
  await build({
    stdin: { contents, resolveDir: pkg, loader: 'js' },
    bundle: true,
    format: 'esm',
    // Minified once, with its map, by minifyShippedJs.
    minify: false,
    legalComments: 'none',
    target,
    outfile: join(pkg, outfile),
    plugins: [{
      name: 'module-apart',
      setup(build) {
        build.onResolve({ filter: /\/bytes\.js$/ }, () => ({ path: './wasm/bytes.js', external: true }));
        build.onResolve({ filter: /^node:/ }, ({ path }) => ({ path, external: true }));
        build.onResolve({ filter: /\/wasm\/loader\.js$/ }, () => ({ path: loader }));
      },
    }, {
      // The shared files stay files of their own (SHARED), imported by every bundle.
      name: 'shared-files',
      setup(build) {
        build.onResolve({ filter: /(^|\/)(errors|protocol\/constants|constants)\.js$/ }, ({ path, resolveDir }) => {
          const file = path.match(SNIPPET) ? join(pkg, 'errors.js') : join(resolveDir, path);
          const out = relative(dirname(join(pkg, outfile)), file).replace(/^(?!\.)/, './');
          return { path: out, external: true };
        });
      },
    }, {
      // The core imports ToolmarkError from js/src/errors.js (src/wasm/error.rs),
      // and the run context, the in-page agent's messages and the strict
      // `JSON.stringify` from their files; wasm-bindgen's glue imports each
      // from its copy in snippets/: the package's own files, so there is one
      // ToolmarkError class and `instanceof` holds.
      name: 'snippets-as-package-files',
      setup(build) {
        build.onResolve({ filter: SNIPPET }, ({ path }) => {
          const name = path.match(SNIPPET)[1];
          const file = join(pkg, `${name}.js`);
          if (!existsSync(file)) throw new Error(`wasm-bindgen glue imports the snippet ${path}, which js/src does not have`);
          // Shared as files of their own: one ToolmarkError class, and one
          // WeakMap of form states for the registry and formTools.
          if (name === 'errors' || name === 'form-state') return { path: relative(dirname(join(pkg, outfile)), file).replace(/^(?!\.)/, './'), external: true };
          return { path: file };
        });
      },
    }],
  });
}

/**
 * A fingerprint of a compiled module's exports and imports (kinds and names,
 * sorted): FNV-1a over their text. Also written into the slim loader as it is.
 */
function moduleShape(module) {
  const names = [
    ...WebAssembly.Module.exports(module).map((e) => `e ${e.kind} ${e.name}`),
    ...WebAssembly.Module.imports(module).map((i) => `i ${i.kind} ${i.module} ${i.name}`),
  ].sort().join('\n');
  let hash = 0x811c9dc5;
  for (let i = 0; i < names.length; i++) hash = Math.imul(hash ^ names.charCodeAt(i), 0x01000193) >>> 0;
  return hash;
}

/**
 * `slim.js`: every core entry's exports, bound once `initialize(source)` has
 * compiled the bare module and slim-core.js's `instantiate` has checked and
 * instantiated it; before, each function export throws, saying so (values
 * are undefined). Its declarations re-export the entries' declarations.
 */
async function bundleSlimEntry(entries, owner) {
  const core = await import(pathToFileURL(join(pkg, 'inline-core.js')).href);
  const names = [...new Set(entries.flatMap(({ names }) => names))].filter((name) => owner.has(name));
  const functions = names.filter((name) => typeof core[name] === 'function');
  const values = names.filter((name) => typeof core[name] !== 'function');
  const shared = [...new Set(Object.values(SHARED))].map((file) =>
    `export { ${Object.keys(SHARED).filter((name) => SHARED[name] === file).join(', ')} } from './${file}';`).join('\n');
  const source = `import { loadFailed, unavailable } from './wasm-csp.js';
import { ToolmarkError } from './errors.js';
${shared}

const notReady = (name) => function () {
  throw new ToolmarkError('not_initialized', '@toolmark/bridge-wasm/slim: ' + name + ' used before initialize() resolved: await initialize(source) first');
};
${functions.map((name) => `export let ${name} = notReady('${name}');`).join('\n')}
${values.map((name) => `export let ${name};`).join('\n')}

let started;

export function initialize(source) {
  started ??= load(source).catch((error) => {
    started = undefined;
    throw error;
  });
  return started;
}

// Importing slim-core.js instantiates nothing (an ES module whose evaluation
// threw stays failed for good); its instantiate() checks the module and
// leaves nothing behind when it throws, so a failure here is as if
// initialize had never been called.
async function load(source) {
  const [module, core] = await Promise.all([compile(source), import('./slim-core.js')]);
  core.instantiate(module);
  ${names.map((name) => `${name} = core.${name};`).join('\n  ')}
}

async function compile(source) {
  // What it was given, for the error: a URL, a Response's URL, the bytes.
  let given = 'its argument';
  try {
    source = await source;
    if (source instanceof WebAssembly.Module) return source;
    if (typeof source === 'string' || source instanceof URL) source = await fetch(given = source);
    if (typeof Response === 'function' && source instanceof Response) {
      given = source.url || 'the Response given';
      if (!source.ok) throw unavailable('@toolmark/bridge-wasm/slim: fetching the module failed: HTTP ' + source.status + ' at ' + source.url + ': serve the file exported as "@toolmark/bridge-wasm/toolmark_bridge.wasm" there');
      // Streaming compiles while the bytes arrive; it needs the module's MIME type.
      if (typeof WebAssembly.compileStreaming === 'function' && (source.headers.get('content-type') || '').startsWith('application/wasm')) {
        return await WebAssembly.compileStreaming(source);
      }
      return await WebAssembly.compile(await source.arrayBuffer());
    }
    given = 'the bytes given';
    return await WebAssembly.compile(source);
  } catch (error) {
    throw loadFailed(error, '@toolmark/bridge-wasm/slim: initialize() loading ' + given, 'serve or pass the file exported as "@toolmark/bridge-wasm/toolmark_bridge.wasm"');
  }
}
`;
  await build({
    stdin: { contents: source, resolveDir: pkg, loader: 'js' },
    bundle: true,
    format: 'esm',
    // Minified once, with its map, by minifyShippedJs.
    minify: false,
    legalComments: 'none',
    target: 'es2020',
    outfile: join(pkg, 'slim.js'),
    plugins: [{
      name: 'core-apart',
      setup(build) {
        build.onResolve({ filter: /^\.\/(slim-core|errors|protocol\/constants)\.js$/ }, ({ path }) => ({ path, external: true }));
      },
    }],
  });
  writeFileSync(join(pkg, 'slim.d.ts'), `// @toolmark/bridge-wasm/slim: the same API as the other entries, with the
// module (every part) loaded from its own file (slim/toolmark_bridge.wasm, exported as
// "@toolmark/bridge-wasm/toolmark_bridge.wasm") by \`initialize\`, for apps
// that stream-compile and cache it. Every function is usable once the
// promise \`initialize\` returns has resolved (one called before throws);
// ToolmarkError, PROTOCOL_VERSION and protocolSchemas are there from the start.
${entries.map(({ entry }) => `export * from './${entry}';`).join('\n')}

/**
 * Compiles and instantiates the module; once. \`source\`: a
 * \`WebAssembly.Module\`, the module's URL (a string or \`URL\`, fetched), a
 * fetch \`Response\` or a promise of one (compiled while it streams when served
 * as \`application/wasm\`), or the module's bytes (\`ArrayBuffer\` or a typed
 * array). A module that is not this version's \`toolmark_bridge.wasm\` (without
 * the exports the package calls, or with other exports and imports) is
 * refused before it is instantiated. A second call returns the first call's
 * promise; after any failure the entry is as if never initialized, and a
 * call tries again.
 */
export function initialize(source: object | string | PromiseLike<object>): Promise<void>;
`);
}

// Its own target directory: the shipped build's flags differ from the tests'.
const shippedTarget = join(root, 'target', 'shipped');
const cargoWasm = join(shippedTarget, 'wasm32-unknown-unknown', 'release', `${crateName}.wasm`);
// The files cargo read for the last build (its dep-info, Makefile syntax).
const cargoDepInfo = join(shippedTarget, 'wasm32-unknown-unknown', 'release', `${crateName}.d`);

// What wasm-bindgen and wasm-opt make of a module depends on besides it.
const postTools = createHash('sha256')
  .update(JSON.stringify([pinnedBindgenVersion(), jsOnly ? '' : execFileSync(wasmOptBin, ['--version'], { encoding: 'utf8' }), WASM_OPT_PASSES, WASM_OPT_FEATURES]))
  .update(readFileSync(join(root, 'js', 'build', 'short-names.mjs')))
  .digest('hex');

/** The source files listed by cargo's dep-info for the module it built last. */
function cargoSources() {
  const first = readFileSync(cargoDepInfo, 'utf8').split('\n', 1)[0];
  const deps = first.slice(first.indexOf(': ') + 2);
  return deps.split(/(?<!\\) /).filter(Boolean).map((file) => file.replaceAll('\\ ', ' '));
}

/** A file's path and contents into `hash` (one that is gone, as such). */
function hashFile(hash, file) {
  hash.update(`\0${file}\0`).update(existsSync(file) ? readFileSync(file) : '(none)');
}

// What every part is made from besides its own sources: rustc, the cargo
// environment, the manifests, the lock file, the cargo config and the tools
// after cargo; read once a build, when a part is first checked.
let commonInputs;
function partsCommonInputs() {
  if (commonInputs === undefined) {
    const hash = createHash('sha256').update(execFileSync('rustc', ['-vV'], { encoding: 'utf8' }));
    hash.update(JSON.stringify(Object.entries(process.env).filter(([key]) => /^(CARGO|RUST)/.test(key)).sort()));
    for (const file of [join(root, 'Cargo.toml'), join(root, 'Cargo.lock'), join(root, '.cargo', 'config.toml')]) {
      hashFile(hash, file);
    }
    commonInputs = hash.update(postTools).digest('hex');
  }
  return commonInputs;
}

/**
 * Everything a part's shipped module is made from: the cargo command (its
 * features, its flags), what every part is made from, and the crate's
 * source files as cargo listed them (a file gone counts as changed).
 */
function sourcesDigest(cargoArgs, files) {
  const hash = createHash('sha256').update(JSON.stringify(cargoArgs)).update(partsCommonInputs());
  for (const file of files) {
    hashFile(hash, file);
  }
  return hash.digest('hex');
}

/**
 * One module: cargo with `features` (none: the default, every feature),
 * wasm-bindgen and wasm-opt into `outDir`; returns its glue and its module.
 */
function compileModule(features, outDir, name) {
  // The glue wasm-bindgen wrote stays as written (benches/split-floor.mjs reads it).
  const out = { glue: join(outDir, `${name}_shipped.js`), wasm: join(outDir, `${name}_shipped.wasm`) };
  if (jsOnly) {
    if (!existsSync(out.wasm) || !existsSync(out.glue)) throw new Error('no compiled module yet: npm run build');
    return out;
  }
  // The parts share one target directory, where cargo rebuilds the crate
  // whenever the features differ from the last build's (a cdylib's
  // artifacts are not kept per feature set): a part none of whose sources
  // changed since it was built is not compiled again.
  const cargoArgs = cargoBuildArgs(shippedTarget, features ? ['--no-default-features', '--features', features] : []);
  const sources = join(outDir, 'sources.json');
  if (existsSync(sources) && existsSync(out.wasm) && existsSync(out.glue)) {
    const last = JSON.parse(readFileSync(sources, 'utf8'));
    if (sourcesDigest(cargoArgs, last.files) === last.digest) {
      console.error(`build: ${name}: no source changed since it was built: cargo, wasm-bindgen and wasm-opt skipped`);
      return out;
    }
  }
  // 1. compile (stable Rust; the release profile in Cargo.toml)
  run('cargo', cargoArgs);
  // wasm-bindgen and wasm-opt take most of a rebuild; skipped when cargo's
  // output and the tools after it are those of the last successful build
  // (its stamp).
  const stamp = join(outDir, 'stamp');
  const inputs = createHash('sha256').update(readFileSync(cargoWasm)).update(postTools).digest('hex');
  if (existsSync(stamp) && readFileSync(stamp, 'utf8') === inputs && existsSync(out.wasm) && existsSync(out.glue)) {
    console.error(`build: ${name}: the compiled module is unchanged: wasm-bindgen and wasm-opt skipped`);
  } else {
    bindgenAndOptimize(outDir, name, out);
    writeFileSync(stamp, inputs);
  }
  const files = cargoSources();
  writeFileSync(sources, JSON.stringify({ files, digest: sourcesDigest(cargoArgs, files) }));
  return out;
}

function bindgenAndOptimize(outDir, name, shipped) {
  // 2. bindgen, with a version check: a mismatch fails at runtime otherwise
  const want = pinnedBindgenVersion();
  const have = execFileSync('wasm-bindgen', ['--version'], { encoding: 'utf8' }).trim().split(' ')[1];
  if (have !== want) {
    throw new Error(`wasm-bindgen CLI ${have} does not match the pinned crate ${want}: cargo install --locked wasm-bindgen-cli --version ${want}`);
  }
  for (const file of existsSync(outDir) ? readdirSync(outDir) : []) {
    if (statSync(join(outDir, file)).isFile() || file === 'snippets') rmSync(join(outDir, file), { recursive: true });
  }
  // --omit-default-module-path: no `new URL('…_bg.wasm', import.meta.url)`
  // default for bundlers to follow (the module is passed in by the loader);
  // --encode-into always: every supported host has TextEncoder#encodeInto.
  // The generated .d.ts stays in target/bindgen (tests/node/declarations.test.mjs
  // checks the package's declarations against it); it does not ship.
  run('wasm-bindgen', [
    '--target', 'web', '--omit-default-module-path', '--encode-into', 'always',
    '--out-dir', outDir, '--out-name', name, cargoWasm,
  ]);

  // 3. optimize for size: the passes measured smallest by gzip
  //    (benches/wasm-opt-levels.mjs; docs/benchmarks.md, "Package size").
  run(wasmOptBin, [...WASM_OPT_PASSES, ...WASM_OPT_FEATURES, join(outDir, `${name}_bg.wasm`), '-o', shipped.wasm]);
  //    then short names, in the module and its glue alike
  writeFileSync(shipped.glue, shortenNames(shipped.wasm, readFileSync(join(outDir, `${name}.js`), 'utf8')));
}

const full = compileModule(null, bindgenOut, crateName);
const parts = Object.fromEntries(Object.keys(PARTS).map((part) =>
  [part, compileModule(part, join(bindgenOut, 'parts', part), part.replace('-', '_'))]));
const glueFile = full.glue;
const shippedWasm = full.wasm;

// 4. assemble pkg/
rmSync(pkg, { recursive: true, force: true });
mkdirSync(join(pkg, 'wasm'), { recursive: true });
cpSync(join(root, 'js', 'src'), pkg, { recursive: true });

// The glue as wasm-bindgen wrote it (bundled into core.js; its snippet
// imports resolved to the package's own files there: bundleCore).
const glue = readFileSync(glueFile, 'utf8');
if (glue.includes('import.meta.url')) throw new Error('wasm-bindgen glue resolves a .wasm URL: bundlers would follow it');
// One addition: `forget()`, for the slim loader. The glue's initSync keeps the
// instance's exports before running its start function and, once kept,
// returns them without instantiating again; a start that threw would leave
// them there, broken, for every later call.
const glueState = 'let wasmModule, wasmInstance, wasm;';
if (!glue.includes(`\n${glueState}\n`)) throw new Error(`wasm-bindgen glue changed: no \`${glueState}\` to reset after a failed instantiation`);
writeFileSync(join(pkg, 'wasm', `${crateName}.js`), `${glue}
// Added by js/build/build.mjs: back to not instantiated (the slim loader, after a failure).
export function forget() {
  wasmModule = wasmInstance = wasm = undefined;
}
`);

const bytes = readFileSync(shippedWasm);
writeFileSync(join(pkg, 'wasm', 'bytes.js'), inlineModule(bytes));
// The bare module, for the slim entry.
mkdirSync(join(pkg, 'slim'));
writeFileSync(join(pkg, 'slim', `${crateName}.wasm`), bytes);
for (const [part, { glue: partGlue, wasm: partWasm }] of Object.entries(parts)) writePartLoaders(part, partGlue, partWasm);

/**
 * A module of the default entries: the file itself, and its two loaders.
 * Browsers: fetched from beside the bundle (`new URL(…, import.meta.url)`,
 * which bundlers follow and emit as an asset), compiled while it streams,
 * instantiated before the importing module runs (top-level await). Node
 * (and Deno, Bun): read from the package, synchronously, so `require()`
 * works.
 */
function writePartLoaders(part, partGlue, partWasm) {
  const glueText = readFileSync(partGlue, 'utf8');
  if (glueText.includes('import.meta.url')) throw new Error('wasm-bindgen glue resolves a .wasm URL: bundlers would follow it');
  writeFileSync(join(pkg, 'wasm', `glue-${part}.js`), glueText);
  writeFileSync(join(pkg, 'wasm', `${part}.wasm`), readFileSync(partWasm));
  const names = [...glueText.matchAll(/^export (?:class|function) (\w+)/gm)].map((match) => match[1]);
  const syncImports = `import { initSync, ${names.join(', ')} } from './glue-${part}.js';`;
  const exported = `export const wasm = { ${names.join(', ')} };`;
  writeFileSync(join(pkg, 'wasm', `loader-${part}.browser.js`), `import { loadFailed, unavailable } from '../wasm-csp.js';
import init, { initSync, ${names.join(', ')} } from './glue-${part}.js';

// Relative to the bundle this loader is in (wasm/${part}.js), which the
// module file sits beside.
const url = new URL('./${part}.wasm', import.meta.url);
const todo = 'serve wasm/${part}.wasm of the package at that URL (a bundler that does not emit it needs it copied beside its output), or import @toolmark/bridge-wasm/inline';

async function load() {
  // A file: URL outside a browser (this file imported by path in Node, Deno,
  // Electron): read from disk. Named through globalThis, so that no bundler
  // takes it for Node's \`process\` and adds a polyfill.
  const fs = url.protocol === 'file:' ? globalThis.process?.getBuiltinModule?.('node:fs') : undefined;
  if (fs) return initSync({ module: fs.readFileSync(url) });
  const response = await fetch(url);
  if (!response.ok) throw unavailable('@toolmark/bridge-wasm: fetching its module ' + url + ' failed (HTTP ' + response.status + '): ' + todo);
  // wasm-bindgen's loader: compiled and instantiated while it streams
  // (served as application/wasm; otherwise from its bytes, with a warning).
  return init({ module_or_path: response });
}

// Any failure (no WebAssembly, the fetch, compiling, instantiating) is a
// module_unavailable naming the URL, the host's error as its cause.
try {
  await load();
} catch (error) {
  throw loadFailed(error, '@toolmark/bridge-wasm: loading its module ' + url, todo);
}

${exported}
`);
  writeFileSync(join(pkg, 'wasm', `loader-${part}.node.js`), `import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { loadFailed } from '../wasm-csp.js';
${syncImports}

const url = new URL('./${part}.wasm', import.meta.url);
try {
  initSync({ module: readFileSync(url) });
} catch (error) {
  throw loadFailed(error, '@toolmark/bridge-wasm: loading its module ' + fileURLToPath(url), 'install the package again (wasm/${part}.wasm is one of its files)');
}

${exported}
`);
}
// The module's exports as the glue names them (its class and functions; not
// initSync or the async default loader, which the shim never uses).
const exported = [...glue.matchAll(/^export (?:class|function) (\w+)/gm)].map((match) => match[1]);
for (const name of ['Toolmark', 'Scope', 'Events', 'Bridge', 'createToolmark', 'bridge']) {
  if (!exported.includes(name)) throw new Error(`wasm-bindgen glue changed: no \`export ${name}\` found`);
}
writeFileSync(
  join(pkg, 'wasm', 'loader-inline.js'),
  `// Generated by js/build/build.mjs: decodes the inlined module (hex) and instantiates it synchronously.
import { hex } from './bytes.js';
import { loadFailed } from '../wasm-csp.js';
import { initSync, ${exported.join(', ')} } from './${crateName}.js';

// A hex digit's value: '0'-'9' are 0x30-0x39, 'a'-'f' 0x61-0x66.
const digit = (c) => (c & 15) + (c >> 6) * 9;

function decode() {
  // Native (Chrome 140+, Firefox 133+, Safari 18.2+, Node 25+).
  if (typeof Uint8Array.fromHex === 'function') return Uint8Array.fromHex(hex);
  // Older hosts. Not Node's Buffer: naming it makes browser bundlers
  // (Parcel) add a polyfill to the app.
  const out = new Uint8Array(hex.length >> 1);
  for (let i = 0, j = 0; i < out.length; i++, j += 2) out[i] = (digit(hex.charCodeAt(j)) << 4) | digit(hex.charCodeAt(j + 1));
  return out;
}

try {
  initSync({ module: decode() });
} catch (error) {
  throw loadFailed(error, '@toolmark/bridge-wasm/inline: loading its module (wasm/bytes.js)', 'install the package again');
}

// Defined here (not re-exported), so no bundler can keep the functions and
// drop the module that initializes them; named one by one (not the glue's
// namespace), so bundlers leave the glue's unused async loader out.
export const wasm = { ${exported.join(', ')} };
`,
);
// The exports the glue calls (`wasm.name`), with their kinds: the slim loader
// refuses a module without them before instantiating it.
const shippedModule = new WebAssembly.Module(bytes);
const kinds = new Map(WebAssembly.Module.exports(shippedModule).map(({ name, kind }) => [name, kind]));
const needed = [...new Set([...glue.matchAll(/\bwasm\.(\w+)/g)].map((match) => match[1]))].sort();
for (const name of needed) {
  if (!kinds.has(name)) throw new Error(`wasm-bindgen glue calls wasm.${name}, which the module does not export`);
}
writeFileSync(
  join(pkg, 'wasm', 'slim-loader.js'),
  `// Generated by js/build/build.mjs: instantiates the module the slim entry's
// initialize() compiled, when initialize calls instantiate(), not on import:
// an ES module whose evaluation threw stays failed for good, so nothing here
// runs at evaluation that can fail.
import { loadFailed } from '../wasm-csp.js';
import { ToolmarkError } from '../errors.js';
import { initSync, forget, ${exported.join(', ')} } from './${crateName}.js';

// The exports the glue calls, with their kinds (read from its output): a
// module without one would fail inside the glue, or work wrongly.
const NEEDED = ${JSON.stringify(Object.fromEntries(needed.map((name) => [name, kinds.get(name)])))};

// This version's module has exactly these exports and imports (their
// fingerprint): another version's may have every export the glue calls and
// still not be the module this glue was made for.
const SHAPE = ${moduleShape(shippedModule)};
${moduleShape.toString()}

const refuse = (why) => new ToolmarkError('invalid_argument', '@toolmark/bridge-wasm/slim: the module given to initialize() is not the toolmark_bridge.wasm of this version of the package (' + why + '): pass the module exported as "@toolmark/bridge-wasm/toolmark_bridge.wasm"');

/** Checks \`module\` and instantiates it; when it throws, the glue is as before. */
export function instantiate(module) {
  const has = new Map(WebAssembly.Module.exports(module).map(({ name, kind }) => [name, kind]));
  const missing = Object.keys(NEEDED).filter((name) => has.get(name) !== NEEDED[name]);
  if (missing.length > 0) {
    const some = missing.slice(0, 3).join(', ') + (missing.length > 3 ? ', ...' : '');
    throw refuse('it lacks ' + missing.length + ' of the ' + Object.keys(NEEDED).length + ' exports the package calls, ' + some);
  }
  if (moduleShape(module) !== SHAPE) throw refuse('its exports and imports differ');
  try {
    initSync({ module });
  } catch (error) {
    forget();
    throw loadFailed(error, '@toolmark/bridge-wasm/slim: instantiating the module given to initialize()', 'pass the module exported as "@toolmark/bridge-wasm/toolmark_bridge.wasm"');
  }
}

export const wasm = { ${exported.join(', ')} };
`,
);

/**
 * The module as a JS string in hex: ASCII only, so the file means the same
 * whatever charset a page decodes it in (a classic script on a page that
 * declares none is read as windows-1252). Hex keeps each byte in two whole
 * characters, so gzip still finds the module's repeats (its cost over the
 * bare module: benches/wasm-opt-levels.mjs, docs/benchmarks.md "Package size").
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

await writeProtocolConstants();
await bundleCore(manifest);
minifyShippedJs();
assertAsciiJs();

/**
 * `protocol/constants.js`: the protocol constant and the published JSON
 * Schemas as plain JS, read from the module itself (its glue, instantiated
 * here in Node), so the two cannot differ and an app that imports only them
 * ships no WebAssembly.
 */
async function writeProtocolConstants() {
  const glue = await import(pathToFileURL(glueFile).href);
  glue.initSync({ module: bytes });
  const text = (value) => JSON.stringify(value).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  writeFileSync(
    join(pkg, 'protocol', 'constants.js'),
    `// Generated by js/build/build.mjs from the module (src/wasm/protocol.rs): no WebAssembly needed.
/** \`protocol: 1\`. */
export const PROTOCOL_VERSION = ${text(glue.protocolVersion())};

// Deep-frozen, as shared objects should be; pure, so a bundler drops it when unused.
const freeze = (value) => {
  if (value !== null && typeof value === 'object') {
    for (const item of Object.values(value)) freeze(item);
    Object.freeze(value);
  }
  return value;
};

/** The published JSON Schemas (draft 2020-12), the same objects as protocol/v1/*.json. */
export const protocolSchemas = /* @__PURE__ */ freeze(${text(JSON.parse(glue.protocolSchemas()))});
`,
  );
}

/**
 * Every shipped .js a browser may load is pure ASCII: a classic script on a
 * page that declares no charset is decoded as windows-1252, where any other
 * byte changes meaning. (Node reads its `*.node.js` files as UTF-8.)
 */
function assertAsciiJs(dir = pkg) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) {
      assertAsciiJs(path);
    } else if (name.endsWith('.js') && !name.endsWith('.node.js')) {
      const at = readFileSync(path).findIndex((byte) => byte > 0x7e || (byte < 0x20 && byte !== 0x0a));
      if (at !== -1) throw new Error(`${relative(pkg, path)} is not printable ASCII at byte ${at}`);
    }
  }
}

const { PROTOCOL_VERSION, protocolSchemas } = await import(pathToFileURL(join(pkg, 'protocol', 'index.node.js')).href);
if (PROTOCOL_VERSION !== 1) throw new Error(`protocol/constants.js says PROTOCOL_VERSION ${PROTOCOL_VERSION}`);
mkdirSync(join(pkg, 'protocol', 'v1'), { recursive: true });
writeFileSync(join(pkg, 'protocol', 'v1', 'page-to-agent.json'), `${JSON.stringify(protocolSchemas.pageToAgent, null, 2)}\n`);
writeFileSync(join(pkg, 'protocol', 'v1', 'agent-to-page.json'), `${JSON.stringify(protocolSchemas.agentToPage, null, 2)}\n`);

console.error(`built pkg/ (${Object.keys(parts).map((part) => `${part}.wasm ${statSync(join(pkg, 'wasm', `${part}.wasm`)).size}`).join(', ')}, every part ${bytes.length} bytes)`);
