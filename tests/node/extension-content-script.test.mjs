// A real unpacked MV3 extension in headless Chromium whose content script
// (a classic script: `@toolmark/bridge-wasm/inline`, bundled by esbuild)
// runs the bridge on two pages of a local site: one without a Content
// Security Policy, where a call goes through, and one whose policy lacks
// 'wasm-unsafe-eval', where Chromium refuses WebAssembly without a reason
// and the package says what happened and where to run the bridge instead
// (and, in the page's MAIN world, where Chromium gives its reason, the same).
// (The extension's own page and background worker: tests/node/packaging.test.mjs.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { launchWithExtensions } from './support/browser.mjs';

const pkg = fileURLToPath(new URL('../../pkg/', import.meta.url));

const CONTENT_SCRIPT = `
(async () => {
  const root = document.documentElement;
  try {
    const { createToolmark, bridge, createInPageChannel } = await import(${JSON.stringify(join(pkg, 'inline.js'))});
    const tm = createToolmark();
    tm.register({ name: 'ping', description: 'Answers pong', run: () => ({ pong: true }) });
    const { transport, agent } = createInPageChannel();
    tm.use(bridge({ transport }));
    root.dataset.result = JSON.stringify(await agent.call('ping', {}));
  } catch (error) {
    root.dataset.error = JSON.stringify({ message: String(error.message), cause: String(error.cause) });
  }
})();
`;

/**
 * Runs `body(context, site)` with a real unpacked extension whose content
 * script is `script` (bundled as a classic script), `contentScripts` its
 * manifest's entries (`js: ['content.js']` added), on a local site answering
 * each request with `respond(req, res)`.
 */
async function withExtension({ script, contentScripts, respond }, body) {
  const dir = mkdtempSync(join(tmpdir(), 'toolmark-content-script-'));
  const server = createServer(respond);
  let context;
  try {
    const extension = join(dir, 'extension');
    await build({
      stdin: { contents: script, resolveDir: pkg, loader: 'js' },
      bundle: true, format: 'iife', outfile: join(extension, 'content.js'), logLevel: 'error',
    });
    writeFileSync(join(extension, 'manifest.json'), JSON.stringify({
      manifest_version: 3,
      name: 'Toolmark bridge-wasm content script test',
      version: '0.0.1',
      content_scripts: contentScripts.map((entry) => ({ ...entry, js: ['content.js'], run_at: 'document_idle' })),
    }));
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    context = await launchWithExtensions(join(dir, 'profile'), [extension]);
    await body(context, `http://127.0.0.1:${server.address().port}`);
  } finally {
    await context?.close();
    server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

test('an MV3 content script: a call on a page without a CSP; the refusal explained on a page without wasm-unsafe-eval, in either world', { timeout: 120_000 }, async () => {
  const respond = (req, res) => {
    const strict = req.url.startsWith('/strict');
    res.writeHead(200, { 'content-type': 'text/html', ...(strict ? { 'content-security-policy': "script-src 'self'" } : {}) });
    res.end('<!doctype html><title>a site</title><p>A page of a site.</p>');
  };
  const contentScripts = [
    { matches: ['http://127.0.0.1/*'], exclude_matches: ['http://127.0.0.1/*/main'] },
    { matches: ['http://127.0.0.1/*/main'], world: 'MAIN' },
  ];
  await withExtension({ script: CONTENT_SCRIPT, contentScripts, respond }, async (context, site) => {
    const outcome = async (path) => {
      const page = await context.newPage();
      await page.goto(`${site}${path}`);
      await page.waitForFunction(() => document.documentElement.dataset.result || document.documentElement.dataset.error, null, { timeout: 30_000 });
      const { result, error } = await page.evaluate(() => ({ ...document.documentElement.dataset }));
      return { result: result && JSON.parse(result), error: error && JSON.parse(error) };
    };

    assert.deepEqual(await outcome('/open'), { result: { status: 'ok', data: { pong: true } }, error: undefined });

    const { result, error } = await outcome('/strict');
    assert.equal(result, undefined);
    assert.match(error.message, /refused without a reason, as Chromium refuses it in an extension's content script/);
    assert.match(error.message, /extension page, an offscreen document or the background service worker/);
    assert.match(error.cause, /^CompileError: WebAssembly\.\w+\(\):\s*$/);

    // The same script in the page's MAIN world: Chromium gives its reason there,
    // and the hint says what the extension can do (not its manifest's policy).
    const main = await context.newPage();
    await main.goto(`${site}/strict/main`);
    await main.waitForFunction(() => document.documentElement.dataset.error, null, { timeout: 30_000 });
    const inMain = JSON.parse(await main.evaluate(() => document.documentElement.dataset.error));
    assert.match(inMain.message, /Content Security Policy blocks WebAssembly\. Allow it with 'wasm-unsafe-eval' in script-src\./);
    assert.match(inMain.message, /the extension cannot change: run the bridge in an extension page, an offscreen document or the background service worker/);
    assert.doesNotMatch(inMain.message, /extension_pages/);
    assert.match(inMain.cause, /^CompileError: .*Content Security Policy/);
  });
});

// The content script's bridge and an agent in the page, over postMessage on
// the window they share: the transport hears its own posts there too.
const SHARED_WINDOW_SCRIPT = `
(async () => {
  const root = document.documentElement;
  try {
    const { createToolmark, bridge, postMessageTransport } = await import(${JSON.stringify(join(pkg, 'inline.js'))});
    const errors = [];
    const tm = createToolmark();
    tm.events.on('error', (error) => {
      errors.push(error);
      root.dataset.errors = JSON.stringify(errors);
    });
    tm.register({ name: 'ping', description: 'Answers pong', run: () => ({ pong: true }) });
    tm.use(bridge({ transport: postMessageTransport({ target: window, targetOrigin: location.origin, allowedOrigins: [location.origin] }) }));
    root.dataset.errors = '[]';
  } catch (error) {
    root.dataset.errors = JSON.stringify([{ message: String(error.message) }]);
  }
})();
`;

// The agent: calls ping on the first manifest, then describes it, so that the
// bridge has heard its manifest and first result come back before the last answer.
const PAGE_AGENT = `<!doctype html><title>a site</title><script>
window.answers = [];
addEventListener('message', (event) => {
  const message = event.data?.toolmark === 1 ? event.data.message : undefined;
  const post = (m) => postMessage({ toolmark: 1, message: { protocol: 1, clientId: message.clientId, ...m } }, location.origin);
  if (message?.type === 'manifest' && answers.length === 0) post({ type: 'call', id: 'c1', tool: 'ping', input: {} });
  if (message?.type === 'result') {
    answers.push(message.result);
    if (message.id === 'c1') post({ type: 'describe', id: 'd1', tool: 'ping' });
  }
});
</script>`;

test('an MV3 content script and its page over postMessage on their one window: a call and a describe, and no error for the bridge\'s own posts it hears', { timeout: 120_000 }, async () => {
  const respond = (req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(PAGE_AGENT);
  };
  const contentScripts = [{ matches: ['http://127.0.0.1/*'] }];
  await withExtension({ script: SHARED_WINDOW_SCRIPT, contentScripts, respond }, async (context, site) => {
    const page = await context.newPage();
    await page.goto(`${site}/`);
    await page.waitForFunction(() => window.answers.length === 2, null, { timeout: 30_000 });
    assert.deepEqual(await page.evaluate(() => window.answers.map((answer) => answer.status)), ['ok', 'ok']);
    assert.deepEqual(await page.evaluate(() => window.answers[0]), { status: 'ok', data: { pong: true } });
    assert.deepEqual(JSON.parse(await page.evaluate(() => document.documentElement.dataset.errors)), []);
  });
});
