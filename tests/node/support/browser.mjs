// Real headless Chromium (Debian's /usr/bin/chromium) through playwright-core,
// and a static file server on loopback for the pages it loads.
import { createServer } from 'node:http';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { extname, join, normalize } from 'node:path';
import { chromium } from 'playwright-core';

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.json': 'application/json',
  '.wasm': 'application/wasm',
};

/**
 * Serves `root` on 127.0.0.1; `pages` maps extra paths to HTML strings (sent
 * as UTF-8) or to `{ type, body }` (sent with exactly that content-type).
 */
export async function serve(root, pages = {}) {
  const server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    if (pages[path] !== undefined) {
      const { type, body } = typeof pages[path] === 'string' ? { type: TYPES['.html'], body: pages[path] } : pages[path];
      res.writeHead(200, { 'content-type': type });
      res.end(body);
      return;
    }
    const file = normalize(join(root, path));
    if (!file.startsWith(root)) {
      res.writeHead(403).end();
      return;
    }
    try {
      if (!statSync(file).isFile()) throw new Error('not a file');
      res.writeHead(200, { 'content-type': TYPES[extname(file)] || 'application/octet-stream' });
      res.end(readFileSync(file));
    } catch {
      res.writeHead(404).end();
    }
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  return { url: `http://127.0.0.1:${port}`, close: () => new Promise((r) => server.close(r)) };
}

/** Launches headless Chromium with a fresh profile; `close()` removes it. */
export async function launchChromium() {
  const profile = mkdtempSync(join(tmpdir(), 'toolmark-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: [
      '--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic',
    ],
  });
  return {
    context,
    async newPage() {
      const page = await context.newPage();
      const errors = [];
      page.on('pageerror', (error) => errors.push(error));
      page.errors = errors;
      return page;
    },
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
