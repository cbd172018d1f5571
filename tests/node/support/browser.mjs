// Real headless Chromium (Debian's /usr/bin/chromium) through playwright-core,
// and a static file server on loopback for the pages it loads.
import { createServer } from 'node:http';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { gzipSync } from 'node:zlib';
import { extname, join, normalize } from 'node:path';
import { after, before } from 'node:test';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

/** The repository: its pages load the package from /pkg/ and test dependencies from /node_modules/. */
export const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
export const BLANK_PAGE = '<!doctype html><title>blank</title>';

/** The content type of each kind of file the test servers send. */
export const CONTENT_TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.json': 'application/json',
  '.wasm': 'application/wasm',
  '.css': 'text/css',
};

/**
 * Serves `root` on 127.0.0.1; `pages` maps extra paths to HTML strings (sent
 * as UTF-8) or to `{ type, body }` (sent with exactly that content-type).
 * `production: true` serves files as a static host in production does:
 * gzip (compressed once, when first asked for) to a client that accepts it,
 * and cacheable for an hour.
 */
export async function serve(root, pages = {}, { production = false } = {}) {
  const gzipped = new Map();
  const send = (req, res, type, body, path) => {
    const headers = { 'content-type': type };
    if (production) {
      headers['cache-control'] = 'public, max-age=3600';
      if (/\bgzip\b/.test(req.headers['accept-encoding'] ?? '')) {
        if (!gzipped.has(path)) gzipped.set(path, gzipSync(body, { level: 9 }));
        body = gzipped.get(path);
        headers['content-encoding'] = 'gzip';
      }
    }
    res.writeHead(200, headers);
    res.end(body);
  };
  const server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    if (pages[path] !== undefined) {
      const { type, body } = typeof pages[path] === 'string' ? { type: CONTENT_TYPES['.html'], body: pages[path] } : pages[path];
      send(req, res, type, body, path);
      return;
    }
    const file = normalize(join(root, path));
    if (!file.startsWith(root)) {
      res.writeHead(403).end();
      return;
    }
    try {
      if (!statSync(file).isFile()) throw new Error('not a file');
      send(req, res, CONTENT_TYPES[extname(file)] || 'application/octet-stream', readFileSync(file), path);
    } catch {
      res.writeHead(404).end();
    }
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  return { url: `http://127.0.0.1:${port}`, close: () => new Promise((r) => server.close(r)) };
}

/**
 * Chromium (headless, a persistent profile at `profile`) with the unpacked
 * extensions in `extensions` (folders) loaded: Chromium's new headless mode
 * loads extensions. Returns playwright's BrowserContext.
 */
export function launchWithExtensions(profile, extensions) {
  const list = extensions.join(',');
  return chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    ignoreDefaultArgs: ['--disable-extensions'],
    args: [
      '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
      '--disable-sync', '--no-first-run', '--disable-quic',
      `--disable-extensions-except=${list}`, `--load-extension=${list}`,
    ],
  });
}

/** Launches headless Chromium with a fresh profile; `close()` removes it. */
export async function launchChromium({ args = [] } = {}) {
  const profile = mkdtempSync(join(tmpdir(), 'toolmark-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: [
      '--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic',
      ...args,
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

/**
 * Chromium and a page server for the tests of one file: started in a `before` hook (after the
 * file's earlier ones), stopped in an `after` hook. `root` and `pages` are as for serve(), by
 * default the repository and /blank.html; `pages` may be a function, called in that hook.
 * `open(path)` opens a new page at that path of the server.
 */
export function chromiumWithServer({ root = REPO_ROOT, pages = { '/blank.html': BLANK_PAGE } } = {}) {
  const session = {
    server: undefined,
    browser: undefined,
    async open(path = '/blank.html') {
      const page = await session.browser.newPage();
      await page.goto(`${session.server.url}${path}`);
      return page;
    },
  };
  before(async () => {
    session.server = await serve(root, typeof pages === 'function' ? await pages() : pages);
    session.browser = await launchChromium();
  });
  after(async () => {
    await session.browser?.close();
    await session.server?.close();
  });
  return session;
}
