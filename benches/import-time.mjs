// node benches/import-time.mjs [pkgDir ...] [--runs N] [--node-only]:
// start-up, each run in a fresh Node process (a fresh page in Chromium), the
// packages' runs interleaved so machine load falls on each alike:
// - "newId": ms from `import()` of index.js (Node: index.node.js, as the
//   `node` condition resolves it) to its first newId() (the parts read,
//   compiled and instantiated);
// - "manifest": ms from `import()` of index.js and bridge/ to the first
//   manifest an in-page agent receives (one tool registered);
// - "decode" and "compile": the inline entry's module, hex → bytes and
//   `new WebAssembly.Module(bytes)` alone, in a process that has not
//   compiled it yet (V8 shares compiled modules within a process).
// In headless Chromium the same, plus the peer @mcp-b/webmcp-polyfill:
// `import()` to its tool listed by getTools() (initialize, registerTool), the
// baseline of the ratio. Prints the median, min and max, asserts nothing.
import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const args = process.argv.slice(2);
const nodeOnly = args.includes('--node-only');
const at = args.indexOf('--runs');
const runs = at === -1 ? 21 : Number(args.splice(at, 2)[1]);
const dirs = args.filter((a) => !a.startsWith('--'));
if (dirs.length === 0) dirs.push('pkg');

const url = (dir, file) => JSON.stringify(pathToFileURL(resolve(dir, file)).href);
const scripts = {
  newId: (dir) => `
    const start = performance.now();
    const { newId } = await import(${url(dir, 'index.node.js')});
    newId();
    console.log(performance.now() - start);`,
  manifest: (dir) => `
    const start = performance.now();
    const [{ createToolmark }, { bridge }, { createInPageChannel }] = await Promise.all([
      import(${url(dir, 'index.node.js')}), import(${url(dir, 'bridge/index.node.js')}), import(${url(dir, 'bridge/in-page.node.js')})]);
    const tm = createToolmark();
    tm.register({ name: 'echo', description: 'Echoes', hints: { readOnly: true }, run: (input) => input });
    const { transport, agent } = createInPageChannel();
    agent.onMessage((m) => {
      if (m.type === 'manifest') { console.log(performance.now() - start); process.exit(0); }
    });
    tm.use(bridge({ transport }));`,
  decode: (dir) => `
    const { hex } = await import(${url(dir, 'wasm/bytes.js')});
    const start = performance.now();
    const bytes = Buffer.from(hex, 'hex');
    console.log(performance.now() - start);`,
  compile: (dir) => `
    const { hex } = await import(${url(dir, 'wasm/bytes.js')});
    const bytes = Buffer.from(hex, 'hex');
    const start = performance.now();
    new WebAssembly.Module(bytes);
    console.log(performance.now() - start);`,
};

const median = (list) => [...list].sort((a, b) => a - b)[list.length >> 1];
const line = (label, list, base) =>
  `${label}: median ${median(list).toFixed(1)} ms, min ${Math.min(...list).toFixed(1)}, max ${Math.max(...list).toFixed(1)} (${list.length} runs)` +
  (base ? `, ×${(median(list) / base).toFixed(2)}` : '');

console.log(`Node ${process.version}, ${runs} fresh processes per figure`);
for (const [what, script] of Object.entries(scripts)) {
  const times = dirs.map(() => []);
  for (let run = 0; run < runs; run++) {
    dirs.forEach((dir, i) => {
      times[i].push(Number(execFileSync(process.execPath, ['--input-type=module', '-e', script(dir)], { encoding: 'utf8' })));
    });
  }
  const base = median(times[0]);
  dirs.forEach((dir, i) => console.log(line(`${dir} ${what}`, times[i], dirs.length > 1 && base)));
}

if (!nodeOnly) {
  const { openBenchPage } = await import('./support/chromium.mjs');
  const bench = await openBenchPage();
  const pageRuns = Math.min(runs, 11);
  try {
    const inPage = {
      ours: async (dir) => {
        const start = performance.now();
        const [{ createToolmark }, { bridge }, { createInPageChannel }] = await Promise.all([
          import(`/${dir}/index.js`), import(`/${dir}/bridge/index.js`), import(`/${dir}/bridge/in-page.js`)]);
        const tm = createToolmark();
        tm.register({ name: 'echo', description: 'Echoes', hints: { readOnly: true }, run: (input) => input });
        const { transport, agent } = createInPageChannel();
        const manifest = new Promise((r) => agent.onMessage((m) => m.type === 'manifest' && r()));
        tm.use(bridge({ transport }));
        await manifest;
        const total = performance.now() - start;
        const { hex } = await import(`/${dir}/wasm/bytes.js`);
        let t = performance.now();
        const bytes = Uint8Array.fromHex(hex);
        const decode = performance.now() - t;
        t = performance.now();
        await WebAssembly.compile(bytes);
        return { manifest: total, decode, compile: performance.now() - t };
      },
      peer: async () => {
        const start = performance.now();
        const { initializeWebMCPPolyfill } = await import('/node_modules/@mcp-b/webmcp-polyfill/dist/index.js');
        initializeWebMCPPolyfill();
        document.modelContext.registerTool({ name: 'echo', description: 'Echoes', execute: (input) => input });
        const tools = await document.modelContext.getTools();
        if (!tools.some((t) => t.name === 'echo')) throw new Error('peer tool not listed');
        return { listed: performance.now() - start };
      },
    };
    const results = { peer: [], ...Object.fromEntries(dirs.map((d) => [d, []])) };
    for (let run = 0; run < pageRuns; run++) {
      for (const who of ['peer', ...dirs]) {
        const page = await bench.newPage();
        results[who].push(await page.evaluate(who === 'peer' ? inPage.peer : inPage.ours, who));
        await page.close();
      }
    }
    const peer = median(results.peer.map((r) => r.listed));
    console.log(`\nChromium ${bench.version} (headless), a fresh page per run (same browser: its HTTP and code caches are warm after run 1)`);
    console.log(line('peer @mcp-b/webmcp-polyfill import → tool listed', results.peer.map((r) => r.listed)));
    for (const dir of dirs) {
      console.log(line(`${dir} import → first manifest (× the peer)`, results[dir].map((r) => r.manifest), peer));
      console.log(line(`${dir} decode (Uint8Array.fromHex)`, results[dir].map((r) => r.decode)));
      console.log(line(`${dir} compile (WebAssembly.compile, after the import compiled it once)`, results[dir].map((r) => r.compile)));
    }
  } finally {
    await bench.close();
  }
}
