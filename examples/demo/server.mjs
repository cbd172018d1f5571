// Building and starting the demo server (examples/server) with the demo app
// as its static directory; used by main.mjs and the end-to-end tests.
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export const root = fileURLToPath(new URL('../../', import.meta.url));

/** The variables that would make the server use a real model or the Echo mode. */
export const MODE_VARIABLES = [
  'OPENAI_API_KEY', 'OPENAI_MODEL', 'OPENAI_BASE_URL', 'ANTHROPIC_API_KEY', 'ANTHROPIC_MODEL',
  'PUSHER_APP_ID', 'PUSHER_APP_KEY', 'PUSHER_APP_SECRET', 'PUSHER_URL',
];

/**
 * `cargo build -p toolmark-demo-server` (debug, sharing target/ with the
 * tests); returns the binary's path as cargo reports it.
 */
export function buildServer({ quiet = false } = {}) {
  const built = spawnSync('cargo', ['build', '-p', 'toolmark-demo-server', '--message-format=json-render-diagnostics'], {
    cwd: root,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', quiet ? 'pipe' : 'inherit'],
    maxBuffer: 64 * 1024 * 1024,
  });
  if (built.status !== 0) {
    throw new Error(`cargo build -p toolmark-demo-server failed${quiet ? `:\n${built.stderr}` : ''}`);
  }
  for (const line of built.stdout.split('\n')) {
    if (!line.startsWith('{')) continue;
    const message = JSON.parse(line);
    if (message.reason === 'compiler-artifact' && message.target?.name === 'toolmark-demo-server' && message.executable) {
      return message.executable;
    }
  }
  throw new Error('cargo did not report the toolmark-demo-server binary');
}

/**
 * The static directory: examples/demo/app with the built package as pkg/
 * and, for the Echo mode, the browser builds of laravel-echo and pusher-js
 * from node_modules as vendor/.
 */
export function assembleApp(dir = join(root, 'target', 'demo-app')) {
  const pkg = join(root, 'pkg');
  if (!existsSync(join(pkg, 'index.js'))) throw new Error('pkg/ is not built: run `npm run build` first');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  cpSync(join(root, 'examples', 'demo', 'app'), dir, { recursive: true });
  cpSync(pkg, join(dir, 'pkg'), { recursive: true });
  const vendor = [
    ['laravel-echo/dist/echo.js', 'echo.js'],
    ['pusher-js/dist/web/pusher.js', 'pusher.js'],
  ];
  for (const [from, to] of vendor) {
    const file = join(root, 'node_modules', from);
    if (existsSync(file)) cpSync(file, join(dir, 'vendor', to));
  }
  return dir;
}

/**
 * Starts the server on `host` (127.0.0.1 by default; `port` 0: a free one) serving `staticDir`;
 * resolves once it printed its URL. `env` is the whole environment it gets.
 * `lines` collects what it prints after the URL; `exited` resolves with its
 * `{ code, signal }`.
 */
export function startServer({ binary, staticDir, port = 0, host, env = process.env }) {
  const child = spawn(binary, ['--port', String(port), ...(host ? ['--host', host] : []), '--static', staticDir], {
    env,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = [];
  const closed = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  return new Promise((resolve, reject) => {
    const out = createInterface({ input: child.stdout });
    out.on('line', (line) => {
      const url = line.match(/^Toolmark demo server: (http:\/\/\S+)$/)?.[1];
      if (url) {
        resolve({
          url,
          child,
          lines,
          exited: closed,
          close() {
            if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
            return closed;
          },
        });
      } else {
        lines.push(line);
      }
    });
    child.once('error', reject);
    closed.then(({ code, signal }) => reject(new Error(`the server exited (${signal ?? code}) before printing its URL`)));
  });
}
