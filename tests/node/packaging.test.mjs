// Packaging: the `npm pack` tarball of pkg/, installed from the tarball into
// throwaway projects like a user would, and one app (tests/packaging/app/main.js)
// run in plain Node, bundled by Vite 8, Vite 7, webpack 5, esbuild, rspack and Parcel
// (no plugins, no loaders) and by Rollup (its resolve and JSON plugins), or loaded
// through a plain import map, in Chromium, and inside a Manifest V3 extension page.
//
// Needs the npm registry (one `npm install` per project, all in parallel while
// the tarball is checked). TOOLMARK_KEEP_PACKAGING=1 keeps the temp dir.
// First, offline: the README's install steps word for word (npm pack ./pkg,
// npm install <tarball> into a fresh project), then require() and import of
// the installed package, under this Node and under the oldest Node its
// `engines` allows (installed by .ci/setup into target/node-<version>).
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import {
  cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, statSync, writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync, gzipSync } from 'node:zlib';
import { launchChromium, launchWithExtensions, serve } from './support/browser.mjs';
import { npmInstall } from './support/bundlers.mjs';

const root = fileURLToPath(new URL('../../', import.meta.url));
const pkgDir = join(root, 'pkg');
const fixtures = join(root, 'tests', 'packaging');
const appSource = join(fixtures, 'app', 'main.js');

// Exact versions, so that a run today and a run next month test the same thing.
const VERSIONS = {
  vite8: '8.4.0', // needs Node ^20.19 || >=22.12
  vite7: '7.3.8',
  webpack: '5.113.0',
  webpackCli: '6.0.1', // 7.x pulls rechoir@1, which wants Node >= 22.15
  esbuild: '0.28.2',
  rollup: '4.69.3',
  rollupResolve: '16.0.3',
  rollupJson: '6.1.0',
  // Rollup's one documented line for the package's modules (new URL(…, import.meta.url)).
  rollupAssets: '2.3.3',
  rspackCli: '2.2.8',
  rspackCore: '2.3.4',
  parcel: '2.16.4',
};

const TIMEOUT = 240_000;
const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

// Children must not inherit this run's npm context (`npm test` sets these): each
// throwaway project is its own root.
const childEnv = Object.fromEntries(
  Object.entries(process.env).filter(
    ([key]) =>
      !/^(npm_package_|npm_lifecycle_|npm_command$|npm_config_(local_prefix|prefix|global_prefix|user_agent)$|init_cwd$)/i.test(key),
  ),
);

function run(file, args, { cwd, timeout = 120_000 } = {}) {
  return new Promise((resolve, reject) => {
    execFile(file, args, { cwd, env: childEnv, timeout, maxBuffer: 64 << 20 }, (error, stdout, stderr) => {
      if (error) {
        error.message = `${[file, ...args].join(' ')} (in ${cwd}) failed: ${error.message}\n--- stdout\n${stdout}\n--- stderr\n${stderr}`;
        reject(error);
      } else {
        resolve({ stdout, stderr });
      }
    });
  });
}

/** A project's installed CLI, run with this Node (its `bin` is a JS file). */
function runBin(dir, name, args) {
  return run(process.execPath, [realpathSync(join(dir, 'node_modules', '.bin', name)), ...args], { cwd: dir });
}

/** The files of an npm tarball (paths without the `package/` prefix) and their bytes. */
function readTarball(path) {
  const data = gunzipSync(readFileSync(path));
  const files = new Map();
  let offset = 0;
  let longName;
  while (offset + 512 <= data.length) {
    const header = data.subarray(offset, offset + 512);
    if (header.every((byte) => byte === 0)) break;
    const text = (start, end) => header.subarray(start, end).toString('utf8').replace(/\0.*$/s, '');
    const size = parseInt(text(124, 136).trim() || '0', 8);
    const type = text(156, 157) || '0';
    const prefix = text(345, 500);
    const body = data.subarray(offset + 512, offset + 512 + size);
    let name = longName ?? (prefix ? `${prefix}/${text(0, 100)}` : text(0, 100));
    longName = undefined;
    if (type === 'L') longName = body.toString('utf8').replace(/\0.*$/s, '');
    else if (type === '0' || type === '7') files.set(name.replace(/^package\//, ''), Buffer.from(body));
    offset += 512 + Math.ceil(size / 512) * 512;
  }
  return files;
}

/** Every string target of an exports map (conditions and subpaths flattened). */
/** esbuild's one documented line: the package's modules beside its output. */
function copyParts(project, out) {
  const parts = join(project, 'node_modules', '@toolmark', 'bridge-wasm', 'wasm');
  for (const file of readdirSync(parts)) if (file.endsWith('.wasm')) cpSync(join(parts, file), join(out, file));
}

function exportTargets(exportsField) {
  if (typeof exportsField === 'string') return [exportsField];
  if (Array.isArray(exportsField)) return exportsField.flatMap(exportTargets);
  if (exportsField && typeof exportsField === 'object') return Object.values(exportsField).flatMap(exportTargets);
  return [];
}

/** Files reachable from `entries` through relative imports (`.js` → `.d.ts` for declarations). */
function reachable(files, entries, { declarations }) {
  const seen = new Set();
  const missing = [];
  const queue = [...entries];
  while (queue.length) {
    const file = queue.pop();
    if (seen.has(file)) continue;
    if (!files.has(file)) {
      missing.push(file);
      continue;
    }
    seen.add(file);
    const source = files.get(file).toString('utf8');
    for (const [, spec] of source.matchAll(/(?:\bfrom|\bimport)\s*\(?\s*['"](\.\.?\/[^'"]+)['"]/g)) {
      let target = new URL(spec, `file:///${file}`).pathname.slice(1);
      if (declarations && target.endsWith('.js')) target = `${target.slice(0, -3)}.d.ts`;
      queue.push(target);
    }
  }
  return { seen, missing };
}

function walk(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? walk(path) : [path];
  });
}

/** Raw and gzip size of every file of a build output, for the record. */
function sizes(t, label, dir, filter = /\.(js|mjs|wasm)$/) {
  let total = 0;
  for (const path of walk(dir).filter((p) => filter.test(p)).sort()) {
    const data = readFileSync(path);
    const gzip = gzipSync(data, { level: 9 }).length;
    total += data.length;
    t.diagnostic(`${label}: ${relative(dir, path)} ${data.length} B raw, ${gzip} B gzip`);
  }
  assert.ok(total > 0, `${label}: no output in ${dir}`);
}

/** The round-trip summary written by tests/packaging/app/main.js. */
function checkSummary(s, env) {
  assert.equal(s.failed, undefined, `the app threw: ${s.failed}`);
  assert.equal(s.env, env);
  assert.match(s.id, UUID_V4);
  assert.equal(s.llmName, 'demo__greet');
  assert.deepEqual(s.tools, ['demo.delete', 'demo.greet']);
  assert.deepEqual(s.ok, { status: 'ok', data: { greeting: 'Hello, Ann!' } });
  assert.equal(s.invalid.status, 'invalid');
  assert.ok(s.invalid.issues.some((issue) => issue.path === 'name'), JSON.stringify(s.invalid));
  assert.equal(s.needs.status, 'needs_confirmation');
  assert.match(s.needs.confirmId, UUID_V4);
  assert.equal(s.needs.summary, 'Delete x?');
  assert.equal(s.pendingBefore, 1);
  assert.equal(s.deletedBefore, 0, 'the consequential tool did not run before approval');
  assert.equal(s.deletedAfter, 1);
  assert.equal(s.pendingAfter, 0);
  assert.deepEqual(s.final, { status: 'ok', data: { deleted: 'x' } });
  assert.equal(s.confirmed.type, 'confirmed');
  assert.equal(s.confirmed.confirmId, s.needs.confirmId);
  assert.deepEqual(s.confirmed.result, s.final);
  assert.equal(s.received[0], 'manifest');
  assert.equal(s.received.filter((type) => type === 'result').length, 3);
  assert.equal(s.received.filter((type) => type === 'confirmed').length, 1);
  assert.ok(s.received.indexOf('confirmed') > s.received.lastIndexOf('result'), s.received.join(','));
  assert.equal(s.allValid, true, JSON.stringify(s.invalidMessages));
  assert.equal(s.badIsRejected, true);
  assert.equal(s.schemaId, 'urn:toolmark:protocol:v1:page-to-agent');
  assert.equal(s.schemaSame, true, 'the JSON subpath and protocolSchemas.pageToAgent agree');
  assert.deepEqual(s.errors, []);
}

// ---------------------------------------------------------------------------

/** The shell lines of the README's "Install and use" section, comments dropped. */
function readmeInstallCommands() {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const start = readme.indexOf('\n## Install and use\n');
  assert.ok(start >= 0, 'README has no "## Install and use" section');
  const section = readme.slice(start, readme.indexOf('\n```js', start));
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)]
    .flatMap(([, block]) => block.split('\n'))
    .map((line) => line.replace(/#.*$/, '').trim())
    .filter(Boolean);
}

/** What a CommonJS and an ES module user of the installed package see, as JSON. */
const REQUIRE_CHECK = `
const { createToolmark, newId } = require('@toolmark/bridge-wasm');
const { bridge } = require('@toolmark/bridge-wasm/bridge');
const { createInPageChannel } = require('@toolmark/bridge-wasm/bridge/in-page');
const { PROTOCOL_VERSION } = require('@toolmark/bridge-wasm/protocol');
const tm = createToolmark();
tm.register({ name: 'greet', description: 'Greets', run: ({ name }) => ({ text: 'hello ' + name }) });
const { transport, agent } = createInPageChannel();
tm.use(bridge({ transport }));
agent.call('greet', { name: 'Ann' }).then((result) => {
  console.log(JSON.stringify({ id: newId().length, version: PROTOCOL_VERSION, result }));
});
`;
const IMPORT_CHECK = `
import { createToolmark, newId } from '@toolmark/bridge-wasm';
import { bridge } from '@toolmark/bridge-wasm/bridge';
import { createInPageChannel } from '@toolmark/bridge-wasm/bridge/in-page';
import { PROTOCOL_VERSION } from '@toolmark/bridge-wasm/protocol';
const tm = createToolmark();
tm.register({ name: 'greet', description: 'Greets', run: ({ name }) => ({ text: 'hello ' + name }) });
const { transport, agent } = createInPageChannel();
tm.use(bridge({ transport }));
const result = await agent.call('greet', { name: 'Ann' });
console.log(JSON.stringify({ id: newId().length, version: PROTOCOL_VERSION, result }));
`;

async function checkRequireAndImport(node, dir) {
  for (const file of ['require-check.cjs', 'import-check.mjs']) {
    const { stdout, stderr } = await run(node, [file], { cwd: dir, timeout: 30_000 });
    assert.deepEqual(JSON.parse(stdout.trim()), { id: 36, version: 1, result: { status: 'ok', data: { text: 'hello Ann' } } }, `${file}: ${stdout}`);
    assert.doesNotMatch(stderr, /Warning|Error/, `${file} printed: ${stderr}`);
  }
}

/** The lowest version `engines.node` allows (`^20.19.0 || >=22.12.0` → 20.19.0). */
function lowestNode(range) {
  const versions = [...range.matchAll(/(\d+)\.(\d+)\.(\d+)/g)].map((m) => m.slice(1).map(Number));
  assert.ok(versions.length > 0, `engines.node ${range} names no version`);
  versions.sort((a, b) => a[0] - b[0] || a[1] - b[1] || a[2] - b[2]);
  return versions[0].join('.');
}

describe("packaging: the README's install steps, offline, under this Node and the oldest supported", { timeout: TIMEOUT }, () => {
  let work;
  let project;
  let manifest;

  before(async () => {
    assert.ok(existsSync(join(pkgDir, 'package.json')), 'pkg/ is not built: run `npm run build` first');
    work = mkdtempSync(join(tmpdir(), 'toolmark-readme-install-'));
    manifest = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8'));
  });

  after(() => {
    if (work && !process.env.TOOLMARK_KEEP_PACKAGING) rmSync(work, { recursive: true, force: true });
  });

  test('npm pack ./pkg, then npm install <tarball> in a fresh project (the README, word for word)', async () => {
    const commands = readmeInstallCommands();
    const tarballName = `toolmark-bridge-wasm-${manifest.version}.tgz`;
    assert.deepEqual(commands, ['npm run build', 'npm pack ./pkg', `npm install /path/to/${tarballName}`]);
    // `npm run build` made pkg/ already (the test runs against it); the rest as written.
    const { stdout } = await run('npm', ['pack', './pkg', '--pack-destination', work, '--json'], { cwd: root });
    const [packed] = JSON.parse(stdout);
    assert.equal(packed.filename, tarballName, 'the file name the README gives');
    project = join(work, 'app');
    mkdirSync(project);
    // A fresh project as `npm init -y` makes it: CommonJS by default.
    writeFileSync(join(project, 'package.json'), `${JSON.stringify({ name: 'app', version: '1.0.0', private: true }, null, 2)}\n`);
    await run('npm', ['install', join(work, packed.filename), '--offline', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: project });
    const installed = JSON.parse(readFileSync(join(project, 'node_modules', '@toolmark', 'bridge-wasm', 'package.json'), 'utf8'));
    assert.equal(installed.name, '@toolmark/bridge-wasm', 'installed under its published name');
    const dependencies = JSON.parse(readFileSync(join(project, 'package.json'), 'utf8')).dependencies;
    assert.match(dependencies['@toolmark/bridge-wasm'], /^file:/);
    writeFileSync(join(project, 'require-check.cjs'), REQUIRE_CHECK);
    writeFileSync(join(project, 'import-check.mjs'), IMPORT_CHECK);
    await checkRequireAndImport(process.execPath, project);
  });

  test('require() and import under the oldest Node that engines allows', async (t) => {
    assert.ok(project, 'the install test ran first');
    const version = lowestNode(manifest.engines.node);
    const binaryPackage = `node-${process.platform}-${process.arch}`;
    const node = join(root, 'target', `node-${version}`, 'node_modules', binaryPackage, 'bin', 'node');
    if (!existsSync(node)) {
      t.skip(`Node ${version} is not installed at ${relative(root, node)}: bash .ci/setup --tests installs it (npm's ${binaryPackage}@${version})`);
      return;
    }
    const { stdout } = await run(node, ['--version'], { cwd: project });
    assert.equal(stdout.trim(), `v${version}`);
    await checkRequireAndImport(node, project);
  });
});

describe('packaging: the npm tarball under Node, Vite, webpack, esbuild, Rollup, rspack, Parcel, an import map and MV3', { timeout: TIMEOUT }, () => {
  let work;
  let tarball;
  let browser;
  const projects = {}; // name → { dir, installed: Promise }
  const servers = [];

  const PROJECTS = {
    node: [],
    vite8: [`vite@${VERSIONS.vite8}`],
    vite7: [`vite@${VERSIONS.vite7}`],
    webpack: [`webpack@${VERSIONS.webpack}`, `webpack-cli@${VERSIONS.webpackCli}`],
    esbuild: [`esbuild@${VERSIONS.esbuild}`],
    rollup: [`rollup@${VERSIONS.rollup}`, `@rollup/plugin-node-resolve@${VERSIONS.rollupResolve}`, `@rollup/plugin-json@${VERSIONS.rollupJson}`, `@web/rollup-plugin-import-meta-assets@${VERSIONS.rollupAssets}`],
    rspack: [`@rspack/cli@${VERSIONS.rspackCli}`, `@rspack/core@${VERSIONS.rspackCore}`],
    parcel: [`parcel@${VERSIONS.parcel}`],
  };

  before(async () => {
    assert.ok(existsSync(join(pkgDir, 'package.json')), 'pkg/ is not built: run `npm run build` first');
    work = mkdtempSync(join(tmpdir(), 'toolmark-packaging-'));
    const { stdout } = await run('npm', ['pack', pkgDir, '--pack-destination', work, '--json'], { cwd: work });
    const [packed] = JSON.parse(stdout);
    tarball = join(work, packed.filename);

    // One `npm install` per project, all at once; each test awaits its own.
    for (const [name, deps] of Object.entries(PROJECTS)) {
      const dir = join(work, name);
      mkdirSync(join(dir, 'src'), { recursive: true });
      writeFileSync(join(dir, 'package.json'), `${JSON.stringify({ name: `toolmark-packaging-${name}`, private: true, type: 'module' }, null, 2)}\n`);
      cpSync(appSource, join(dir, 'src', 'main.js'));
      const installed = npmInstall([tarball, ...deps, '--save-exact', '--ignore-scripts', '--prefer-offline'], { cwd: dir, timeout: 150_000 });
      installed.catch(() => {}); // reported by the test that awaits it
      projects[name] = { dir, installed };
    }
  });

  after(async () => {
    await Promise.allSettled(Object.values(projects).map((p) => p.installed));
    await browser?.close();
    // Only now: Chromium keeps its keep-alive sockets until it exits, and close() waits for them.
    await Promise.all(servers.map((server) => server.close()));
    if (work && !process.env.TOOLMARK_KEEP_PACKAGING) rmSync(work, { recursive: true, force: true });
  });

  async function project(name) {
    await projects[name].installed;
    return projects[name].dir;
  }

  /** Loads `path` from `dir` over 127.0.0.1 in Chromium and returns the app's summary. */
  async function runInChromium(dir, path, pages = {}) {
    browser ??= await launchChromium();
    const server = await serve(dir, pages);
    servers.push(server);
    const page = await browser.newPage();
    try {
      await page.goto(`${server.url}${path}`);
      await page.waitForFunction(() => document.title === 'done', null, { timeout: 20_000 }).catch((error) => {
        throw new Error(`${error.message}; page errors: ${page.errors.map(String).join('; ')}`);
      });
      const summary = await page.evaluate(() => window.result);
      assert.deepEqual(page.errors, []);
      return summary;
    } finally {
      await page.close();
    }
  }

  test('the tarball: every exports target, nothing stray, the right name', async (t) => {
    const files = readTarball(tarball);
    const names = [...files.keys()].sort();
    const manifest = JSON.parse(files.get('package.json').toString('utf8'));
    t.diagnostic(`tarball: ${readFileSync(tarball).length} B, ${names.length} files, ${[...files.values()].reduce((n, b) => n + b.length, 0)} B unpacked`);

    assert.equal(manifest.name, '@toolmark/bridge-wasm');
    assert.equal(manifest.type, 'module');

    // Every file the exports map (and main/types/sideEffects) names is packed.
    const targets = [...exportTargets(manifest.exports), manifest.main, manifest.types, ...(manifest.sideEffects || [])]
      .filter(Boolean)
      .map((target) => target.replace(/^\.\//, ''));
    for (const target of targets) {
      if (target.includes('*')) {
        // A pattern export (the parts, `./wasm/*.wasm`): it matches packed files.
        const [before, after] = target.split('*');
        assert.ok(names.some((name) => name.startsWith(before) && name.endsWith(after)), `exports name ${target}, which matches nothing in the tarball`);
      } else {
        assert.ok(files.has(target), `exports/main/types name ${target}, not in the tarball`);
      }
    }
    for (const subpath of [
      '.', './bridge', './bridge/echo', './bridge/websocket', './bridge/post-message', './bridge/in-page',
      './protocol', './protocol/v1/page-to-agent.json', './protocol/v1/agent-to-page.json', './react',
    ]) {
      assert.ok(subpath in manifest.exports, `exports map lacks ${subpath} (API.md)`);
    }
    for (const [subpath, entry] of Object.entries(manifest.exports)) {
      if (typeof entry === 'object') assert.ok(entry.types && entry.default, `${subpath}: types and default`);
    }

    // Nothing stray: only runtime JS (and the browser files' source maps), declarations, the schemas, the modules (the
    // parts, and the whole module the slim entry loads), package.json, README/LICENSE.
    for (const name of names) {
      assert.doesNotMatch(name, /\.rs$|(?<!\.js)\.map$|\.tgz$|(^|\/)(tests?|__tests__|src|target|node_modules|fuzz|examples)\/|\.(test|spec)\.|tsconfig|Cargo|^\./, `stray file ${name}`);
      if (name.endsWith('.js.map')) assert.ok(files.has(name.slice(0, -'.map'.length)), `${name} without its file`);
      assert.match(name, /^(package\.json|README\.md|LICENSE|.+\.js|.+\.js\.map|.+\.d\.ts|protocol\/v1\/[a-z-]+\.json|wasm\/[a-z-]+\.wasm|slim\/toolmark_bridge\.wasm)$/, `unexpected file ${name}`);
    }
    // …and every .js / .d.ts is used: reachable from an entry point.
    const defaults = exportTargets(Object.values(manifest.exports).map((e) => (typeof e === 'object' ? [e.node, e.default].filter(Boolean) : e)))
      .map((target) => target.replace(/^\.\//, ''))
      .filter((target) => target.endsWith('.js'));
    const types = Object.values(manifest.exports)
      .filter((e) => typeof e === 'object')
      .map((e) => e.types.replace(/^\.\//, ''));
    const js = reachable(files, defaults, { declarations: false });
    const dts = reachable(files, types, { declarations: true });
    assert.deepEqual(js.missing, [], 'relative imports of the JS that are not packed');
    assert.deepEqual(dts.missing, [], 'relative imports of the declarations that have no packed .d.ts');
    assert.deepEqual(names.filter((n) => n.endsWith('.js') && !js.seen.has(n)), [], 'packed JS that nothing imports');
    assert.deepEqual(names.filter((n) => n.endsWith('.d.ts') && !dts.seen.has(n)), [], 'packed declarations that nothing references');

    if (!files.has('LICENSE')) {
      t.diagnostic(`note: no LICENSE in the tarball although package.json says "license": "${manifest.license}" and "files" lists LICENSE (no pkg-template/LICENSE)`);
    }
  });

  test('Node ESM, straight from the installed package (no bundler)', async (t) => {
    const dir = await project('node');
    // The JSON subpath on its own, with an import attribute, as a user would.
    writeFileSync(
      join(dir, 'schema.js'),
      [
        "import schema from '@toolmark/bridge-wasm/protocol/v1/page-to-agent.json' with { type: 'json' };",
        "import agentToPage from '@toolmark/bridge-wasm/protocol/v1/agent-to-page.json' with { type: 'json' };",
        "import pkg from '@toolmark/bridge-wasm/package.json' with { type: 'json' };",
        'console.log(JSON.stringify({ pageToAgent: schema.$id, agentToPage: agentToPage.$id, schema: schema.$schema, name: pkg.name }));',
        '',
      ].join('\n'),
    );
    const schema = JSON.parse((await run(process.execPath, ['schema.js'], { cwd: dir, timeout: 30_000 })).stdout);
    assert.deepEqual(schema, {
      pageToAgent: 'urn:toolmark:protocol:v1:page-to-agent',
      agentToPage: 'urn:toolmark:protocol:v1:agent-to-page',
      schema: 'https://json-schema.org/draft/2020-12/schema',
      name: '@toolmark/bridge-wasm',
    });

    const started = Date.now();
    // A 30 s cap: the process must also exit on its own (no timers left behind).
    const { stdout } = await run(process.execPath, ['src/main.js'], { cwd: dir, timeout: 30_000 });
    t.diagnostic(`node: round trip and exit in ${Date.now() - started} ms`);
    checkSummary(JSON.parse(stdout.trim().split('\n').pop()), 'node');
  });

  for (const name of ['vite8', 'vite7']) {
    test(`Vite ${VERSIONS[name]}: vite build, in Chromium`, async (t) => {
      const dir = await project(name);
      writeFileSync(
        join(dir, 'index.html'),
        '<!doctype html><html><head><meta charset="utf-8"><title>loading</title></head>' +
          '<body><script type="module" src="/src/main.js"></script></body></html>\n',
      );
      const { stdout, stderr } = await runBin(dir, 'vite', ['build', '--logLevel', 'warn']);
      for (const line of `${stdout}\n${stderr}`.split('\n').filter((l) => l.trim())) t.diagnostic(`${name}: ${line}`);
      sizes(t, name, join(dir, 'dist'));
      checkSummary(await runInChromium(join(dir, 'dist'), '/index.html'), 'browser');
    });
  }

  test(`webpack ${VERSIONS.webpack} (production, default output, no plugins/loaders), in Chromium`, async (t) => {
    const dir = await project('webpack');
    const { stdout } = await runBin(dir, 'webpack', ['--mode', 'production', '--entry', './src/main.js', '--no-color']);
    const warnings = stdout.split('\n').filter((line) => /^WARNING/.test(line));
    for (const warning of warnings) t.diagnostic(`webpack: ${warning}`);
    assert.ok(!warnings.some((w) => !/size limit|performance recommendations/.test(w)), `webpack warnings: ${stdout}`);
    sizes(t, 'webpack', join(dir, 'dist'));
    const summary = await runInChromium(join(dir, 'dist'), '/index.html', {
      '/index.html': '<!doctype html><title>loading</title><script src="/main.js"></script>',
    });
    checkSummary(summary, 'browser');
  });

  // The other bundlers of the matrix, each as a user would run it: Rollup with
  // the usual resolve plugin (and its JSON plugin, for the app's JSON import),
  // rspack and Parcel with no configuration.
  test(`Rollup ${VERSIONS.rollup} (node-resolve, json and import-meta-assets plugins), in Chromium`, async (t) => {
    const dir = await project('rollup');
    await runBin(dir, 'rollup', ['src/main.js', '-p', '@rollup/plugin-node-resolve', '-p', '@rollup/plugin-json', '-p', '@web/rollup-plugin-import-meta-assets', '-f', 'es', '-d', 'dist', '--silent']);
    sizes(t, 'rollup', join(dir, 'dist'));
    checkSummary(await runInChromium(join(dir, 'dist'), '/index.html', {
      '/index.html': '<!doctype html><title>loading</title><script type="module" src="/main.js"></script>',
    }), 'browser');
  });

  test(`rspack ${VERSIONS.rspackCore} (production, no configuration), in Chromium`, async (t) => {
    const dir = await project('rspack');
    await runBin(dir, 'rspack', ['build', '--mode', 'production', '--entry', './src/main.js']);
    sizes(t, 'rspack', join(dir, 'dist'));
    checkSummary(await runInChromium(join(dir, 'dist'), '/index.html', {
      '/index.html': '<!doctype html><title>loading</title><script src="/main.js"></script>',
    }), 'browser');
  });

  test(`Parcel ${VERSIONS.parcel} (parcel build index.html, no configuration), in Chromium`, async (t) => {
    const dir = await project('parcel');
    writeFileSync(join(dir, 'index.html'), '<!doctype html><html><head><title>loading</title></head><body><script type="module" src="./src/main.js"></script></body></html>\n');
    await runBin(dir, 'parcel', ['build', 'index.html', '--no-source-maps', '--no-cache', '--dist-dir', 'dist', '--log-level', 'warn']);
    sizes(t, 'parcel', join(dir, 'dist'));
    checkSummary(await runInChromium(join(dir, 'dist'), '/index.html'), 'browser');
  });

  test('a plain import map (no bundler): the installed package served as it is, in Chromium', async () => {
    const dir = await project('node');
    const base = '/node_modules/@toolmark/bridge-wasm';
    const imports = {
      '@toolmark/bridge-wasm': `${base}/index.js`,
      '@toolmark/bridge-wasm/bridge': `${base}/bridge/index.js`,
      '@toolmark/bridge-wasm/bridge/in-page': `${base}/bridge/in-page.js`,
      '@toolmark/bridge-wasm/protocol': `${base}/protocol/index.js`,
      '@toolmark/bridge-wasm/protocol/v1/page-to-agent.json': `${base}/protocol/v1/page-to-agent.json`,
    };
    const html = '<!doctype html><title>loading</title>' +
      `<script type="importmap">${JSON.stringify({ imports })}</script><script type="module" src="/src/main.js"></script>`;
    checkSummary(await runInChromium(dir, '/index-importmap.html', { '/index-importmap.html': html }), 'browser');
  });

  // Issue 30: the protocol's constants are plain JS; an app that uses only
  // them ships no WebAssembly, whichever bundler builds it.
  const CONSTANTS_APP = `import { PROTOCOL_VERSION, protocolSchemas } from '@toolmark/bridge-wasm/protocol';
window.result = { version: PROTOCOL_VERSION, ids: [protocolSchemas.pageToAgent.$id, protocolSchemas.agentToPage.$id], frozen: Object.isFrozen(protocolSchemas.pageToAgent) };
document.title = 'done';
`;
  const CONSTANTS_MAX_GZIP = 2048;
  const constantsBuilds = {
    vite8: async (dir) => {
      writeFileSync(join(dir, 'constants', 'index.html'), '<!doctype html><title>loading</title><script type="module" src="./app.js"></script>\n');
      await runBin(dir, 'vite', ['build', 'constants', '--outDir', '../dist-constants', '--emptyOutDir', '--logLevel', 'warn']);
      return { html: null };
    },
    webpack: async (dir) => {
      await runBin(dir, 'webpack', ['--mode', 'production', '--entry', './constants/app.js', '--output-path', 'dist-constants', '--no-color']);
      return { html: '<!doctype html><title>loading</title><script src="/main.js"></script>' };
    },
    esbuild: async (dir) => {
      await runBin(dir, 'esbuild', ['constants/app.js', '--bundle', '--format=esm', '--minify', '--outfile=dist-constants/app.js', '--log-level=warning']);
      return { html: '<!doctype html><title>loading</title><script type="module" src="/app.js"></script>' };
    },
  };
  for (const [name, build] of Object.entries(constantsBuilds)) {
    test(`${name}: an app of the protocol constants alone ships no WebAssembly, at most 2 KB gzip, and runs`, async (t) => {
      const dir = await project(name);
      mkdirSync(join(dir, 'constants'), { recursive: true });
      writeFileSync(join(dir, 'constants', 'app.js'), CONSTANTS_APP);
      const { html } = await build(dir);
      const out = join(dir, 'dist-constants');
      const files = walk(out).filter((path) => /\.(js|mjs)$/.test(path));
      assert.ok(files.length > 0, 'no output');
      const code = files.map((path) => readFileSync(path, 'utf8')).join('\n');
      // Vite emits the asset of every `new URL(…, import.meta.url)` it reads, before it
      // drops the module that names it: such a file may sit in the output, but nothing
      // the page loads names it.
      for (const wasm of walk(out).filter((path) => path.endsWith('.wasm'))) {
        assert.ok(!code.includes(basename(wasm)), `the app's JS loads ${basename(wasm)}`);
        t.diagnostic(`${name}: ${basename(wasm)} emitted, and named by no JS of the app`);
      }
      assert.ok(!/\.wasm\b/.test(code), 'the app\'s JS names a .wasm');
      assert.ok(!code.includes('0061736d'), 'the inlined module (hex) was bundled');
      const gzip = gzipSync(Buffer.from(code), { level: 9 }).length;
      t.diagnostic(`${name}: constants-only app ${Buffer.byteLength(code)} B raw, ${gzip} B gzip`);
      assert.ok(gzip <= CONSTANTS_MAX_GZIP, `${gzip} B gzip`);
      const result = await runInChromium(out, '/index.html', html ? { '/index.html': html } : {});
      assert.deepEqual(result, {
        version: 1,
        ids: ['urn:toolmark:protocol:v1:page-to-agent', 'urn:toolmark:protocol:v1:agent-to-page'],
        frozen: true,
      });
    });
  }

  test(`esbuild ${VERSIONS.esbuild} (--bundle --format=esm, and --minify), in Chromium`, async (t) => {
    const dir = await project('esbuild');
    await runBin(dir, 'esbuild', ['src/main.js', '--bundle', '--format=esm', '--outfile=dist/app.js', '--log-level=warning']);
    await runBin(dir, 'esbuild', ['src/main.js', '--bundle', '--format=esm', '--minify', '--outfile=dist/app.min.js', '--log-level=warning']);
    copyParts(dir, join(dir, 'dist'));
    sizes(t, 'esbuild', join(dir, 'dist'));
    for (const file of ['app.js', 'app.min.js']) {
      const summary = await runInChromium(join(dir, 'dist'), '/index.html', {
        '/index.html': `<!doctype html><title>loading</title><script type="module" src="/${file}"></script>`,
      });
      checkSummary(summary, 'browser');
    }
  });

  test('Manifest V3 extension: its page (esbuild bundle of the default entries) and its service worker (/inline), headless Chromium', async (t) => {
    const dir = await project('esbuild');
    const bundle = join(dir, 'dist', 'app.js');
    if (!existsSync(bundle)) {
      await runBin(dir, 'esbuild', ['src/main.js', '--bundle', '--format=esm', '--outfile=dist/app.js', '--log-level=warning']);
    }
    // The extension as a user would ship it: it allows 'wasm-unsafe-eval' in its CSP.
    const wasmExt = join(work, 'extension');
    cpSync(join(fixtures, 'extension'), wasmExt, { recursive: true });
    cpSync(bundle, join(wasmExt, 'app.js'));
    copyParts(dir, wasmExt);
    // The same extension with Chrome's default MV3 CSP ("script-src 'self'; object-src 'self';").
    const defaultExt = join(work, 'extension-default-csp');
    cpSync(wasmExt, defaultExt, { recursive: true });
    const manifest = JSON.parse(readFileSync(join(wasmExt, 'manifest.json'), 'utf8'));
    assert.equal(manifest.manifest_version, 3);
    delete manifest.content_security_policy;
    manifest.name += ' (default CSP)';
    manifest.background.service_worker = 'sw-default-csp.js';
    cpSync(join(defaultExt, 'sw.js'), join(defaultExt, 'sw-default-csp.js'));
    writeFileSync(join(defaultExt, 'manifest.json'), JSON.stringify(manifest, null, 2));
    // The background service worker of the extension that allows WebAssembly runs
    // the package too: through /inline, since a service worker may not await on import.
    writeFileSync(join(dir, 'src', 'sw.js'), `${readFileSync(join(wasmExt, 'sw.js'), 'utf8')}
import { createToolmark, bridge, createInPageChannel } from '@toolmark/bridge-wasm/inline';
const tm = createToolmark();
tm.register({ name: 'ping', description: 'Answers pong', run: () => ({ pong: true }) });
const { transport, agent } = createInPageChannel();
tm.use(bridge({ transport }));
self.result = agent.call('ping', {}).catch((error) => ({ error: String(error) }));
`);
    await runBin(dir, 'esbuild', ['src/sw.js', '--bundle', '--format=iife', `--outfile=${join(wasmExt, 'sw.js')}`, '--log-level=warning']);

    const profile = mkdtempSync(join(tmpdir(), 'toolmark-extension-'));
    const context = await launchWithExtensions(profile, [wasmExt, defaultExt]);
    try {
      const ids = {};
      const deadline = Date.now() + 15_000;
      while (!(ids['sw.js'] && ids['sw-default-csp.js'])) {
        for (const worker of context.serviceWorkers()) {
          const url = new URL(worker.url());
          if (url.protocol === 'chrome-extension:') ids[url.pathname.slice(1)] = url.host;
        }
        if (ids['sw.js'] && ids['sw-default-csp.js']) break;
        assert.ok(Date.now() < deadline, `extension service workers did not start: ${JSON.stringify(ids)}`);
        await context.waitForEvent('serviceworker', { timeout: 1000 }).catch(() => {});
      }
      t.diagnostic(`extension ids: ${JSON.stringify(ids)}`);
      const worker = context.serviceWorkers().find((w) => new URL(w.url()).host === ids['sw.js']);
      assert.deepEqual(await worker.evaluate(() => self.result), { status: 'ok', data: { pong: true } });

      const page = await context.newPage();
      const errors = [];
      page.on('pageerror', (error) => errors.push(error));
      await page.goto(`chrome-extension://${ids['sw.js']}/page.html`);
      await page.waitForFunction(() => document.title === 'done', null, { timeout: 20_000 }).catch((error) => {
        throw new Error(`${error.message}; page errors: ${errors.map(String).join('; ')}`);
      });
      checkSummary(await page.evaluate(() => window.result), 'browser');
      assert.deepEqual(errors, []);

      // Without 'wasm-unsafe-eval' Chrome refuses to compile the module: extensions
      // must declare it (documented here, since the default policy cannot load it).
      const blocked = await context.newPage();
      const blockedError = blocked.waitForEvent('pageerror', { timeout: 20_000 });
      await blocked.goto(`chrome-extension://${ids['sw-default-csp.js']}/page.html`);
      const error = await blockedError;
      assert.match(String(error), /WebAssembly/);
      assert.match(String(error), /Content Security Polic/);
      assert.equal(await blocked.title(), 'loading');
      t.diagnostic(`default MV3 CSP: ${String(error).split('\n')[0]}`);
    } finally {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    }
  });
});
