// The bundler matrix of issue 30: the apps of tests/packaging/bundlers/apps/
// built by each bundler (its config in tests/packaging/bundlers/<bundler>/),
// served over HTTP and run in Chromium, and the size of everything each
// output ships. Used by tests/node/bundlers.test.mjs and benches/bundlers.mjs.
//
// It makes no assumption about how the package loads its module: it counts
// every emitted .js/.mjs file and every other file the page fetched,
// so an inlined module and one fetched as its own file are measured alike.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, realpathSync, renameSync, rmSync, statSync, writeFileSync,
} from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { extname, join, normalize, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { WebSocketServer } from 'ws';
import { compressedSizes } from '../../../js/build/compressed.mjs';
import { CONTENT_TYPES } from './browser.mjs';

export const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
export const FIXTURES = join(REPO_ROOT, 'tests', 'packaging', 'bundlers');

/**
 * Issue 30's size figures, gzip -9 of everything an app ships, in bytes (KB
 * = 1000 bytes, as in docs/benchmarks.md and `npm run size`), asserted by
 * tests/node/bundlers.test.mjs.
 */
export const SIZE_LIMITS = Object.freeze({
  /** An app of PROTOCOL_VERSION and protocolSchemas alone (what its page loads). */
  constantsGzip: 2_000,
  /** The README's app, on the default path, in every bundler: all it emits or loads (the goal stays 100 KB). */
  readmeGzip: 150_000,
});

// Exact versions, so that a run today and a run next month build the same way.
export const VERSIONS = Object.freeze({
  vite: '8.4.1',
  webpack: '5.113.0',
  'webpack-cli': '6.0.1', // 7.x needs rechoir@1, which wants Node >= 22.15
  '@rspack/core': '2.3.4',
  '@rspack/cli': '2.2.8',
  rollup: '4.69.3',
  '@rollup/plugin-node-resolve': '16.0.3',
  '@rollup/plugin-commonjs': '29.0.3',
  '@rollup/plugin-json': '6.1.0',
  '@rollup/plugin-replace': '6.0.3',
  '@rollup/plugin-terser': '1.0.2',
  // For Rollup's extra line when the module is a file loaded through new URL(…, import.meta.url).
  '@web/rollup-plugin-import-meta-assets': '2.3.3',
  esbuild: '0.28.2',
  parcel: '2.16.4',
  // What the apps import besides the package: the peer, and React for the React hook.
  '@mcp-b/global': '5.1.0',
  react: '19.3.1',
  'react-dom': '19.3.1',
  // The peer's dependencies use Node's `Buffer` global, for which Parcel adds this
  // polyfill, installing it itself mid-build (it runs with --no-autoinstall here).
  buffer: '6.0.3',
});

export const APPS = ['readme', 'constants', 'in-page', 'everything', 'peer'];

/** Where the app's bundle is loaded from the page the harness writes (Vite and Parcel write their own). */
const SCRIPT = {
  module: '<script type="module" src="./main.js"></script>',
  // webpack's and Rspack's default output is a classic script; its publicPath 'auto' reads document.currentScript.
  classic: '<script defer src="./main.js"></script>',
};

/**
 * Each bundler: its label, the command that builds app `app` (run in its
 * project folder with TOOLMARK_APP=app; `bin(name)` is the project's CLI),
 * the file holding its one documented extra line, and the page it needs
 * (`html`: null when the bundler writes the page from apps/<app>/index.html).
 */
export const BUNDLERS = {
  vite: {
    label: `Vite ${VERSIONS.vite}`,
    config: 'vite.config.mjs',
    command: (bin) => [bin('vite'), 'build', '--config', 'vite.config.mjs'],
    html: null,
  },
  webpack: {
    label: `webpack ${VERSIONS.webpack}`,
    config: 'webpack.config.mjs',
    command: (bin) => [bin('webpack'), '--config', 'webpack.config.mjs', '--no-color'],
    html: SCRIPT.classic,
  },
  rspack: {
    label: `Rspack ${VERSIONS['@rspack/core']}`,
    config: 'rspack.config.mjs',
    command: (bin) => [bin('rspack'), 'build', '--config', 'rspack.config.mjs'],
    html: SCRIPT.classic,
  },
  rollup: {
    label: `Rollup ${VERSIONS.rollup}`,
    config: 'rollup.config.mjs',
    command: (bin) => [bin('rollup'), '--config', 'rollup.config.mjs', '--silent'],
    html: SCRIPT.module,
  },
  esbuild: {
    label: `esbuild ${VERSIONS.esbuild}`,
    config: 'build.mjs',
    command: () => ['build.mjs'],
    html: SCRIPT.module,
  },
  parcel: {
    label: `Parcel ${VERSIONS.parcel}`,
    config: '.parcelrc',
    command: (bin, app) => [
      bin('parcel'), 'build', `apps/${app}/index.html`, '--dist-dir', `dist/${app}`, '--no-autoinstall', '--log-level', 'warn',
    ],
    html: null,
  },
  importmap: {
    label: 'import map (no bundler)',
    config: 'importmap.mjs',
    command: null, // the page and its import map are written by buildApp
    html: SCRIPT.module,
  },
};

/** Apps a bundler cannot run, and why (recorded, not failed). */
export const UNSUPPORTED = {
  importmap: {
    everything: 'React ships CommonJS only: a page without a bundler cannot import it',
  },
};

// Children must not inherit this run's npm context (`npm test` sets these): each
// project is its own root.
const childEnv = Object.fromEntries(
  Object.entries(process.env).filter(
    ([key]) =>
      !/^(npm_package_|npm_lifecycle_|npm_command$|npm_config_(local_prefix|prefix|global_prefix|user_agent)$|init_cwd$|NODE_ENV$)/i.test(key),
  ),
);

// At most this many `npm install`s at once: they share one cache, and a
// registry mirror may drop a request when many run at a time.
const INSTALLS_AT_ONCE = 3;
const INSTALL_ATTEMPTS = 3;
let installing = 0;
const waitingToInstall = [];

/**
 * `npm install <args> --no-audit --no-fund --loglevel=error` in `cwd`, tried
 * up to INSTALL_ATTEMPTS times: a failed try (a dropped download, a cache race
 * between installs) is retried after a pause, and the last failure carries
 * the tail of npm's own debug log, which `--loglevel=error` keeps off stderr.
 */
export async function npmInstall(args, { cwd, timeout = 180_000 }) {
  // A finished install hands its place to the next waiting one directly,
  // so one starting meanwhile cannot take it too.
  if (installing >= INSTALLS_AT_ONCE) await new Promise((resolve) => waitingToInstall.push(resolve));
  else installing += 1;
  try {
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await run('npm', ['install', ...args, '--no-audit', '--no-fund', '--loglevel=error'], { cwd, timeout });
      } catch (error) {
        const log = /A complete log of this run can be found in: (\S+)/.exec(error.message)?.[1];
        if (log && existsSync(log)) {
          error.message += `\n--- ${log} (last 40 lines)\n${readFileSync(log, 'utf8').split('\n').slice(-40).join('\n')}`;
        }
        if (attempt === INSTALL_ATTEMPTS) throw error;
        console.log(`# npm install in ${cwd} failed (try ${attempt} of ${INSTALL_ATTEMPTS}), trying again: ${error.message.split('\n')[0]}`);
        await new Promise((resolve) => setTimeout(resolve, 2000 * attempt));
      }
    }
  } finally {
    const next = waitingToInstall.shift();
    if (next) next();
    else installing -= 1;
  }
}

export function run(file, args, { cwd, env = {}, timeout = 180_000 } = {}) {
  return new Promise((resolve, reject) => {
    execFile(file, args, { cwd, env: { ...childEnv, ...env }, timeout, maxBuffer: 64 << 20 }, (error, stdout, stderr) => {
      if (error) {
        error.message = `${[file, ...args].join(' ')} (in ${cwd}) failed: ${error.message}\n--- stdout\n${stdout}\n--- stderr\n${stderr}`;
        error.stdout = stdout;
        error.stderr = stderr;
        reject(error);
      } else {
        resolve({ stdout, stderr });
      }
    });
  });
}

/**
 * The bundlers' node_modules, installed once per set of versions (and
 * platform and Node ABI, for their native parts) under
 * target/bundlers-<key>/ and reused by later runs. TOOLMARK_BUNDLERS_CACHE=0
 * installs afresh into the run's folder instead.
 */
async function bundlerModules(log) {
  const deps = Object.entries(VERSIONS).map(([name, version]) => `${name}@${version}`);
  const flags = ['--save-exact', '--ignore-scripts', '--prefer-offline'];
  const key = createHash('sha256')
    .update(JSON.stringify([VERSIONS, process.platform, process.arch, process.versions.modules]))
    .digest('hex')
    .slice(0, 12);
  const cache = join(REPO_ROOT, 'target', `bundlers-${key}`);
  if (process.env.TOOLMARK_BUNDLERS_CACHE === '0') return { deps, flags, cache: null };
  if (!existsSync(join(cache, 'node_modules', '.package-lock.json'))) {
    log(`installing the bundlers into ${relative(REPO_ROOT, cache)} (once per set of versions)`);
    mkdirSync(join(REPO_ROOT, 'target'), { recursive: true });
    const staging = mkdtempSync(join(REPO_ROOT, 'target', 'bundlers-staging-'));
    try {
      writeFileSync(join(staging, 'package.json'), `${JSON.stringify({ name: 'toolmark-bundlers', private: true }, null, 2)}\n`);
      await npmInstall([...deps, ...flags], { cwd: staging, timeout: 300_000 });
      // A concurrent run may have won: keep the first one complete.
      try {
        renameSync(staging, cache);
      } catch (error) {
        if (!existsSync(join(cache, 'node_modules', '.package-lock.json'))) throw error;
      }
      // One set of versions kept (about 270 MB each): the others are stale.
      for (const name of readdirSync(join(REPO_ROOT, 'target'))) {
        if (/^bundlers-[0-9a-f]{12}$/.test(name) && name !== `bundlers-${key}`) {
          rmSync(join(REPO_ROOT, 'target', name), { recursive: true, force: true });
        }
      }
    } finally {
      rmSync(staging, { recursive: true, force: true });
    }
  }
  return { deps, flags, cache };
}

/**
 * A throwaway project: `npm pack pkgDir`, the bundlers (hard links to the
 * cache, else a fresh install) and the tarball installed into a temp folder,
 * one subfolder per bundler with its config and a copy of the apps.
 * `close()` removes it (kept when TOOLMARK_KEEP_BUNDLERS=1).
 */
export async function prepareProject({ pkgDir, bundlers = Object.keys(BUNDLERS), log = () => {} }) {
  if (!existsSync(join(pkgDir, 'package.json'))) throw new Error(`${pkgDir} has no package.json: build it first (npm run build)`);
  const work = mkdtempSync(join(tmpdir(), 'toolmark-bundlers-'));
  try {
    const { stdout } = await run('npm', ['pack', pkgDir, '--pack-destination', work, '--json'], { cwd: work });
    const tarball = join(work, JSON.parse(stdout)[0].filename);
    const { deps, flags, cache } = await bundlerModules(log);
    if (cache) {
      for (const file of ['package.json', 'package-lock.json']) cpSync(join(cache, file), join(work, file));
      // Hard links: a copy of 270 MB in a fraction of a second. Installing the tarball adds
      // new files, except npm's record of the tree, which it rewrites in place: that one is
      // copied, so the cache's stays as installed.
      await run('cp', ['-al', join(cache, 'node_modules'), join(work, 'node_modules')]).catch(() =>
        run('cp', ['-R', join(cache, 'node_modules'), join(work, 'node_modules')]),
      );
      const record = join(work, 'node_modules', '.package-lock.json');
      rmSync(record);
      cpSync(join(cache, 'node_modules', '.package-lock.json'), record);
      await npmInstall([tarball, ...flags], { cwd: work });
    } else {
      writeFileSync(join(work, 'package.json'), `${JSON.stringify({ name: 'toolmark-bundlers', private: true }, null, 2)}\n`);
      await npmInstall([tarball, ...deps, ...flags], { cwd: work, timeout: 300_000 });
    }
    // Parcel takes the folder of the nearest lockfile for the project root and reads its
    // settings from that package.json: without one, each bundler's folder is its own root.
    rmSync(join(work, 'package-lock.json'), { force: true });
    for (const bundler of bundlers) {
      // <bundler>-base: the same config without this package's extra line, for the peer.
      for (const [folder, extra] of [[bundler, true], [`${bundler}-base`, false]]) {
        const dir = join(work, folder);
        cpSync(join(FIXTURES, bundler), dir, { recursive: true });
        cpSync(join(FIXTURES, 'apps'), join(dir, 'apps'), { recursive: true });
        if (!existsSync(join(dir, 'package.json'))) {
          writeFileSync(join(dir, 'package.json'), `${JSON.stringify({ name: `toolmark-bundlers-${folder}`, private: true }, null, 2)}\n`);
        }
        if (!extra) {
          const config = join(dir, BUNDLERS[bundler].config);
          writeFileSync(config, readFileSync(config, 'utf8').replace(EXTRA, '$1$3'));
        }
      }
    }
    const installed = JSON.parse(readFileSync(join(work, 'node_modules', '@toolmark', 'bridge-wasm', 'package.json'), 'utf8'));
    return {
      work,
      tarball,
      package: installed,
      nodeModules: join(work, 'node_modules'),
      close() {
        if (!process.env.TOOLMARK_KEEP_BUNDLERS) rmSync(work, { recursive: true, force: true });
      },
    };
  } catch (error) {
    rmSync(work, { recursive: true, force: true });
    throw error;
  }
}

// A bundler config's slot for the package's one extra line: the markers and what is between them.
const EXTRA = /(toolmark:extra-begin[^\n]*\n)([\s\S]*?)(^[^\n]*toolmark:extra-end)/m;

/** The lines between `toolmark:extra-begin` and `toolmark:extra-end` in a bundler's config that are not comments. */
export function extraLines(bundler) {
  const text = readFileSync(join(FIXTURES, bundler, BUNDLERS[bundler].config), 'utf8');
  const match = EXTRA.exec(text);
  if (!match) throw new Error(`${bundler}: ${BUNDLERS[bundler].config} has no toolmark:extra-begin … toolmark:extra-end`);
  return match[2]
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('//'));
}

function walk(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? walk(path) : [path];
  });
}

/** The packages a page without a bundler loads for `file`: those it imports, and their dependencies. */
function packagesOf(project, file) {
  const source = readFileSync(file, 'utf8');
  const queue = [...source.matchAll(/(?:\bfrom|\bimport)\s*['"]((?:@[^/'"]+\/)?[^./'"][^/'"]*)/g)].map((m) => m[1]);
  const names = new Set();
  while (queue.length) {
    const name = queue.pop();
    if (names.has(name) || !existsSync(join(project.nodeModules, name, 'package.json'))) continue;
    names.add(name);
    queue.push(...Object.keys(JSON.parse(readFileSync(join(project.nodeModules, name, 'package.json'), 'utf8')).dependencies ?? {}));
  }
  return [...names];
}

/** The page of an app whose bundler does not write one: apps/<app>/index.html with `script` in place of its module script. */
function pageWith(dir, app, script) {
  const html = readFileSync(join(dir, 'apps', app, 'index.html'), 'utf8');
  const tag = '<script type="module" src="./main.js"></script>';
  if (!html.includes(tag)) throw new Error(`apps/${app}/index.html lacks ${tag}`);
  return html.replace(tag, script);
}

/**
 * Builds app `app` with `bundler` in project `project` (from prepareProject):
 * { out, log, warnings, files } where `out` is the folder to serve, `log`
 * the bundler's output lines, `warnings` those that warn, `files` the
 * emitted .js/.mjs/.wasm files. Throws with the bundler's output when it fails.
 */
export async function buildApp(project, bundler, app) {
  const spec = BUNDLERS[bundler];
  // The peer does not use this package: its bundler config is the one without the extra line.
  const dir = join(project.work, app === 'peer' ? `${bundler}-base` : bundler);
  const out = join(dir, 'dist', app);
  let stdout = '';
  let stderr = '';
  if (bundler === 'importmap') {
    const { importMap } = await import(join(dir, spec.config));
    mkdirSync(out, { recursive: true });
    cpSync(join(dir, 'apps', app), out, { recursive: true });
    const map = importMap(
      packagesOf(project, join(out, 'main.js')).map((name) => ({
        pkg: JSON.parse(readFileSync(join(project.nodeModules, name, 'package.json'), 'utf8')),
        base: `/node_modules/${name}/`,
      })),
    );
    const tag = `<script type="importmap">${JSON.stringify(map)}</script>\n${SCRIPT.module}`;
    writeFileSync(join(out, 'index.html'), pageWith(dir, app, tag));
  } else {
    const bin = (name) => realpathSync(join(project.nodeModules, '.bin', name));
    const [file, ...args] = spec.command(bin, app);
    ({ stdout, stderr } = await run(process.execPath, [file, ...args], { cwd: dir, env: { TOOLMARK_APP: app } }));
    if (spec.html) writeFileSync(join(out, 'index.html'), pageWith(dir, app, spec.html));
  }
  const log = `${stdout}\n${stderr}`.split('\n').filter((line) => line.trim());
  return {
    out,
    log,
    warnings: log.filter((line) => /warn|\(!\)|⚠/i.test(line)),
    files: walk(out).filter((path) => /\.(js|mjs|wasm)$/.test(path)),
  };
}


/**
 * Serves `out` on 127.0.0.1 (and /node_modules/ from the project's, for the
 * import map) and records every file it sends: { url, fetched, close() }.
 */
export async function serveOutput(project, out) {
  const fetched = new Set();
  const server = createServer((req, res) => {
    let path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    if (path === '/favicon.ico') {
      res.writeHead(204).end(); // Chromium asks for it: not the app's
      return;
    }
    if (path.endsWith('/')) path += 'index.html';
    const base = path.startsWith('/node_modules/') ? project.work : out;
    const file = normalize(join(base, path));
    if (!file.startsWith(base + sep)) {
      res.writeHead(403).end();
      return;
    }
    try {
      if (!statSync(file).isFile()) throw new Error('not a file');
      const body = readFileSync(file);
      fetched.add(file);
      res.writeHead(200, { 'content-type': CONTENT_TYPES[extname(file)] || 'application/octet-stream' });
      res.end(body);
    } catch {
      res.writeHead(404).end();
    }
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  server.on('connection', (socket) => socket.unref());
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    fetched,
    close: () =>
      new Promise((resolve) => {
        server.close(resolve);
        server.closeAllConnections();
      }),
  };
}

/**
 * A `ws` WebSocket server playing the agent: records the page's messages
 * and answers nothing by itself. { url, messages, next(type, ms), send(socket, message), close() }
 */
export async function startAgent() {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise((resolve) => wss.once('listening', resolve));
  const messages = [];
  const waiting = new Set();
  wss.on('connection', (socket) => {
    socket.on('message', (data, isBinary) => {
      if (isBinary) return;
      let message;
      try {
        message = JSON.parse(data.toString());
      } catch {
        return;
      }
      messages.push({ socket, message });
      for (const waiter of waiting) waiter();
    });
  });
  return {
    url: `ws://127.0.0.1:${wss.address().port}`,
    messages,
    /** The first message of `type` from index `from` on: { socket, message, index }; rejects after `ms`. */
    next(type, { from = 0, ms = 15_000 } = {}) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const index = messages.findIndex((m, i) => i >= from && m.message.type === type);
          if (index < 0) return;
          waiting.delete(check);
          clearTimeout(timer);
          resolve({ ...messages[index], index });
        };
        const timer = setTimeout(() => {
          waiting.delete(check);
          reject(new Error(`no ${type} message from the page in ${ms} ms (got: ${messages.map((m) => m.message.type).join(', ') || 'none'})`));
        }, ms);
        waiting.add(check);
        check();
      });
    },
    send(socket, message) {
      socket.send(JSON.stringify(message));
    },
    async close() {
      for (const socket of wss.clients) socket.terminate();
      await new Promise((resolve) => wss.close(resolve));
    },
  };
}

/**
 * Opens `path` of a served output in a fresh page of `browser` (from
 * launchChromium) and collects what goes wrong: uncaught errors, console
 * errors, failed requests and HTTP errors, in `page.problems`.
 */
export async function openPage(browser, server, path) {
  const page = await browser.newPage();
  const problems = [];
  page.problems = problems;
  page.on('pageerror', (error) => problems.push(`uncaught: ${error.stack || error}`));
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(`console.error: ${message.text()}`);
  });
  page.on('requestfailed', (request) => problems.push(`request failed: ${request.url()} ${request.failure()?.errorText}`));
  page.on('response', (response) => {
    if (response.status() >= 400) problems.push(`HTTP ${response.status()}: ${response.url()}`);
  });
  await page.goto(`${server.url}${path}`);
  return page;
}

/** Raw, gzip -9 and brotli 11 size of each file, and their sums. */
export function measure(files) {
  const rows = [...new Set(files)].sort().map((file) => ({ file, ...compressedSizes(readFileSync(file)) }));
  const sum = (key) => rows.reduce((total, row) => total + row[key], 0);
  return { files: rows, raw: sum('raw'), gzip: sum('gzip'), brotli: sum('brotli') };
}

/**
 * What an app ships: every emitted .js/.mjs file, every emitted .wasm file
 * its page fetched (a page loads the package's modules of what it imports;
 * a module copied beside the output and never fetched adds nothing to the
 * page), and every other non-HTML file its page fetched.
 */
export function shipped(build, fetched) {
  return [
    ...build.files.filter((file) => !file.endsWith('.wasm') || fetched.has(file)),
    ...[...fetched].filter((file) => !file.endsWith('.html')),
  ];
}

/**
 * The names an app of the package can import, entry by entry (the exports
 * map's JS entries, alternate forms left out), read by importing the
 * installed package in this Node.
 */
export async function exportedNames(project, alternate = ['./slim', './inline']) {
  const pkg = project.package;
  const root = join(project.nodeModules, '@toolmark', 'bridge-wasm');
  const names = {};
  for (const [subpath, target] of Object.entries(pkg.exports)) {
    const file = typeof target === 'string' ? target : target.default;
    if (alternate.includes(subpath) || !file.endsWith('.js')) continue;
    if (subpath === './react') {
      names[subpath] = ['usePendingConfirmations']; // importing it needs React
      continue;
    }
    names[subpath] = Object.keys(await import(join(root, file))).sort();
  }
  return names;
}

/** The names the everything app imports, subpath by subpath (`@toolmark/bridge-wasm/x` → `./x`). */
export function importedNames(app = 'everything') {
  const source = readFileSync(join(FIXTURES, 'apps', app, 'main.js'), 'utf8');
  const names = {};
  for (const [, list, spec] of source.matchAll(/import\s*\{([^}]*)\}\s*from\s*'@toolmark\/bridge-wasm(\/[^']*)?'/g)) {
    names[`.${spec ?? ''}`] = list
      .split(',')
      .map((name) => name.trim().split(/\s+as\s+/)[0])
      .filter(Boolean)
      .sort();
  }
  for (const [, spec] of source.matchAll(/import\s+\w+\s+from\s*'@toolmark\/bridge-wasm(\/[^']*\.json)'/g)) names[`.${spec}`] = ['default'];
  return names;
}

/** KB = 1000 bytes, as in docs/benchmarks.md. */
export const kb = (bytes) => (bytes / 1000).toFixed(1);
