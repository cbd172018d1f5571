// node benches/call.mjs [pkgDir] [--node-only]: the round trip of a trivial
// synchronous tool (echo of { n }), side by side, in one process and run:
// per-call median and p99 (calls one at a time), calls per second on one
// scope (batches of 32) and across 8 scopes (8 × 32 per batch), and the
// median's overhead over calling the function directly (awaited).
// Node: the in-page channel (agent.call), and a real WebSocket on loopback
// (a `ws` server in this process as the agent, sending call frames and
// reading result frames; the page side websocketTransport with `ws`'s
// WebSocket). Chromium (headless): the in-page channel, the peer
// @mcp-b/webmcp-polyfill's document.modelContext.executeTool on the same
// tool registered with registerTool, and ours through that same
// executeTool via webmcp(); there median and p99 are of 100-call means
// (performance.now() has 100 µs steps in a page that is not isolated). Prints numbers, asserts only the answers.
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { WebSocket, WebSocketServer } from 'ws';
import { SCOPES, echo, echoSchema, figures, inPageSetup, okData, table } from './support/call-measure.mjs';

const args = process.argv.slice(2);
const nodeOnly = args.includes('--node-only');
const dir = args.find((a) => !a.startsWith('--')) || 'pkg';
const base = pathToFileURL(resolve(dir) + '/').href;
const { createToolmark } = await import(`${base}index.js`);
const { bridge } = await import(`${base}bridge/index.js`);
const { createInPageChannel } = await import(`${base}bridge/in-page.js`);
const { websocketTransport } = await import(`${base}bridge/websocket.js`);

const rows = [];
rows.push({ name: 'direct', ...(await figures(async (s, i) => okData({ status: 'ok', data: await echo({ n: i }) }, i))) });

const { agent } = await inPageSetup({ createToolmark, bridge, createInPageChannel });
rows.push({ name: 'in-page channel', ...(await figures(async (s, i) => okData(await agent.call(`s${s}.echo`, { n: i }), i))) });

// A WebSocket agent: ids from a counter, results matched by id.
const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
await new Promise((r) => server.once('listening', r));
const connected = new Promise((resolveAgent) => {
  server.once('connection', (socket) => {
    const pending = new Map();
    let clientId;
    let next = 0;
    socket.on('message', (data) => {
      const message = JSON.parse(data.toString());
      if (message.type === 'manifest' && message.tools.length === SCOPES && !clientId) {
        clientId = message.clientId;
        resolveAgent((tool, input) => new Promise((done) => {
          const id = `00000000-0000-4000-8000-${String(next++).padStart(12, '0')}`;
          pending.set(id, done);
          socket.send(JSON.stringify({ protocol: 1, type: 'call', clientId, id, tool, input }));
        }));
      } else if (message.type === 'result') {
        const done = pending.get(message.id);
        pending.delete(message.id);
        done(message.result);
      }
    });
  });
});
const wsPage = createToolmark();
for (let s = 0; s < SCOPES; s++) {
  wsPage.scope(`s${s}`).register({ name: 'echo', description: 'Echoes a number', hints: { readOnly: true }, inputSchema: echoSchema, run: echo });
}
const transport = websocketTransport({ url: `ws://127.0.0.1:${server.address().port}`, WebSocket });
wsPage.use(bridge({ transport }));
const wsCall = await connected;
rows.push({ name: 'WebSocket, loopback', ...(await figures(async (s, i) => okData(await wsCall(`s${s}.echo`, { n: i }), i), { count: 5000, warmup: 500 })) });
transport.close();
server.close();

console.log(`Node ${process.version}`);
console.log(table(rows));

if (!nodeOnly) {
  const { openBenchPage } = await import('./support/chromium.mjs');
  const bench = await openBenchPage();
  try {
    const browserRows = await bench.page.evaluate(async (dir) => {
      const m = await import('/benches/support/call-measure.mjs');
      const { initializeWebMCPPolyfill } = await import('/node_modules/@mcp-b/webmcp-polyfill/dist/index.js');
      initializeWebMCPPolyfill();
      const { createToolmark } = await import(`/${dir}/index.js`);
      const { bridge } = await import(`/${dir}/bridge/index.js`);
      const { createInPageChannel } = await import(`/${dir}/bridge/in-page.js`);
      const { webmcp } = await import(`/${dir}/webmcp/index.js`);
      const options = { block: 100 };
      const rows = [];
      rows.push({ name: 'direct', ...(await m.figures(async (s, i) => m.okData({ status: 'ok', data: await m.echo({ n: i }) }, i), options)) });
      const { tm, agent } = await m.inPageSetup({ createToolmark, bridge, createInPageChannel });
      rows.push({ name: 'in-page channel', ...(await m.figures(async (s, i) => m.okData(await agent.call(`s${s}.echo`, { n: i }), i), options)) });

      const context = document.modelContext;
      for (let s = 0; s < m.SCOPES; s++) {
        context.registerTool({ name: `peer${s}_echo`, description: 'Echoes a number', inputSchema: m.echoSchema, annotations: { readOnlyHint: true }, execute: m.echo });
      }
      tm.use(webmcp());
      const tools = await context.getTools();
      const find = (name) => tools.find((t) => t.name === name);
      const peer = Array.from({ length: m.SCOPES }, (_, s) => find(`peer${s}_echo`));
      const ours = Array.from({ length: m.SCOPES }, (_, s) => find(`s${s}.echo`));
      if (peer.includes(undefined) || ours.includes(undefined)) throw new Error(`tools: ${tools.map((t) => t.name)}`);
      const check = (text, i) => {
        const value = JSON.parse(text);
        const n = value?.n ?? value?.structuredContent?.n ?? value?.data?.n ?? JSON.parse(value?.content?.[0]?.text ?? 'null')?.n;
        if (n !== i) throw new Error(`bad answer: ${text}`);
      };
      rows.push({ name: 'peer: polyfill executeTool', ...(await m.figures(async (s, i) => check(await context.executeTool(peer[s], JSON.stringify({ n: i })), i), options)) });
      rows.push({ name: 'ours via webmcp() + executeTool', ...(await m.figures(async (s, i) => check(await context.executeTool(ours[s], JSON.stringify({ n: i })), i), options)) });
      return rows;
    }, dir);
    console.log(`\nChromium ${bench.version} (headless)`);
    console.log(table(browserRows));
  } finally {
    await bench.close();
  }
}
