// node benches/startup.mjs [--runs N] [--plain] [pkgDir]: how fast a page is ready, in
// headless Chromium, for the same small app on this package and on its two
// peers, each bundled by esbuild (minified, ESM) into a page of its own (ours
// fetches its module, toolmark.wasm, and compiles it while it streams):
// - ours: createToolmark, one tool, bridge over the in-page channel; ready
//   when the agent end has the first manifest;
// - @mcp-b/global: initializeWebModelContext, one registerTool; ready when
//   getTools() lists it;
// - @mcp-b/webmcp-polyfill: initializeWebMCPPolyfill, one registerTool;
//   ready when getTools() lists it.
// Each figure is ms from the page's navigation start (so the script's
// download, parse, compile and run) to ready: "cold" in a fresh browser
// profile each run (no HTTP or code cache), "warm" the same page loaded
// again in that browser. The apps' runs are interleaved. Prints medians and
// the ratios to each peer (of the medians, and the median of each run's
// own ratio); asserts nothing.
import { copyFileSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { launchChromium, serve } from '../tests/node/support/browser.mjs';

const args = process.argv.slice(2);
// --plain: every file sent as it is, uncacheable; by default as a production
// static host sends it (gzip, cacheable for an hour: "warm" then loads from
// the HTTP cache, and V8 may reuse the compiled code).
const production = !args.includes('--plain');
if (!production) args.splice(args.indexOf('--plain'), 1);
const at = args.indexOf('--runs');
const runs = at === -1 ? 7 : Number(args.splice(at, 2)[1]);
const pkg = resolve(args[0] || 'pkg');
const root = fileURLToPath(new URL('../', import.meta.url));

// The page says it is ready on its console: the harness waits for that
// message and runs no script in the page until then (a polling
// waitForFunction evaluates Playwright's injected script in the page while
// it loads, about 10 ms of its main thread).
const READY = "performance.mark('ready'); console.log('ready');";
const APPS = {
  ours: `
    import { createToolmark } from '${pkg}/index.js';
    import { bridge } from '${pkg}/bridge/index.js';
    import { createInPageChannel } from '${pkg}/bridge/in-page.js';
    const tm = createToolmark();
    tm.register({ name: 'echo', description: 'Echoes', hints: { readOnly: true }, run: (input) => input });
    const { transport, agent } = createInPageChannel();
    agent.onMessage((m) => { if (m.type === 'manifest' && m.tools.length) { ${READY} } });
    tm.use(bridge({ transport }));`,
  inline: `
    import { createToolmark, bridge, createInPageChannel } from '${pkg}/inline.js';
    const tm = createToolmark();
    tm.register({ name: 'echo', description: 'Echoes', hints: { readOnly: true }, run: (input) => input });
    const { transport, agent } = createInPageChannel();
    agent.onMessage((m) => { if (m.type === 'manifest' && m.tools.length) { ${READY} } });
    tm.use(bridge({ transport }));`,
  global: `
    import { initializeWebModelContext } from '@mcp-b/global';
    initializeWebModelContext();
    const context = document.modelContext ?? navigator.modelContext;
    await context.registerTool({ name: 'echo', description: 'Echoes', inputSchema: { type: 'object' }, execute: async (input) => ({ content: [{ type: 'text', text: JSON.stringify(input) }] }) });
    if ((await context.getTools()).some((t) => t.name === 'echo')) { ${READY} }`,
  polyfill: `
    import { initializeWebMCPPolyfill } from '@mcp-b/webmcp-polyfill';
    initializeWebMCPPolyfill();
    await document.modelContext.registerTool({ name: 'echo', description: 'Echoes', execute: (input) => input });
    if ((await document.modelContext.getTools()).some((t) => t.name === 'echo')) { ${READY} }`,
};

const out = mkdtempSync(join(tmpdir(), 'toolmark-startup-'));
const pages = {};
for (const [name, source] of Object.entries(APPS)) {
  const bundled = await build({
    stdin: { contents: source, resolveDir: root, loader: 'js' },
    bundle: true, format: 'esm', minify: true, platform: 'browser', write: false, logLevel: 'error',
  });
  writeFileSync(join(out, `${name}.js`), bundled.outputFiles[0].contents);
  pages[`/${name}.html`] = `<!doctype html><title>loading</title><script type="module" src="/${name}.js"></script>`;
}
// esbuild's one line for the package: its modules beside the bundle (each
// page fetches the ones it imports).
for (const file of readdirSync(join(pkg, 'wasm'))) if (file.endsWith('.wasm')) copyFileSync(join(pkg, 'wasm', file), join(out, file));
const server = await serve(out, pages, { production });

/** ms from navigation start to the app's `ready` mark. */
async function load(page, name) {
  const ready = page.waitForEvent('console', { predicate: (message) => message.text() === 'ready', timeout: 20_000 });
  await page.goto(`${server.url}/${name}.html`, { waitUntil: 'commit' });
  await ready;
  return page.evaluate(() => performance.getEntriesByName('ready')[0].startTime);
}

const times = Object.fromEntries(Object.keys(APPS).map((name) => [name, { cold: [], warm: [] }]));
// One load of each page first, unmeasured: the server compresses each file
// when first asked for it, which no measured run should pay.
{
  const browser = await launchChromium();
  try {
    const page = await browser.newPage();
    for (const name of Object.keys(APPS)) await load(page, name);
  } finally {
    await browser.close();
  }
}
try {
  for (let run = 0; run < runs; run++) {
    for (const name of Object.keys(APPS)) {
      const browser = await launchChromium();
      try {
        const page = await browser.newPage();
        times[name].cold.push(await load(page, name));
        times[name].warm.push(await load(page, name));
      } finally {
        await browser.close();
      }
    }
  }
} finally {
  await server.close();
  rmSync(out, { recursive: true, force: true });
}

const median = (list) => [...list].sort((a, b) => a - b)[list.length >> 1];
console.log(`Chromium (headless), navigation start → ready, median of ${runs} (a fresh profile per run), files served ${production ? 'gzip, cacheable' : 'plain, uncacheable'}`);
for (const cache of ['cold', 'warm']) {
  const line = Object.entries(times)
    .map(([name, t]) => `${name} ${median(t[cache]).toFixed(1)} ms`)
    .join(', ');
  const ours = median(times.ours[cache]);
  // Each run's own ratio (its loads follow one another, so the machine's
  // load at that moment is in both), then their median.
  const paired = (peer) => median(times.ours[cache].map((t, run) => t / times[peer][cache][run])).toFixed(2);
  console.log(`${cache}: ${line}; ours × global ${(ours / median(times.global[cache])).toFixed(2)}, × polyfill ${(ours / median(times.polyfill[cache])).toFixed(2)}; per run: × global ${paired('global')}, × polyfill ${paired('polyfill')}`);
}
