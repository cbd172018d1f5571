// node --expose-gc benches/memory.mjs [pkgDir] [--seconds S]: WebAssembly
// memory and JS heap (after two global.gc()) before and after, on one
// registry and bridge per phase:
// 1. calls with unique ids through the in-page channel (batches of 32): a
//    million, or as many as fit in S seconds (default 60);
// 2. ten thousand confirmations created (a consequential tool called by the
//    agent) and expired: the page keeps at most 100 pending (the spec's cap,
//    a new one expires the oldest), the last 100 expire by their timer
//    (confirmExpiryMs 500);
// 3. ten thousand sockets opened and closed: websocketTransport against a
//    `ws` server in this process, 10 at a time, each closed from its own
//    onOpen (which refers to its transport), then the same with an onOpen
//    that does not refer to it (the difference shows what is kept).
// "Before" is after a warm-up of the same work, so first-use allocations
// (the wasm allocator's first pages, JIT code) do not count as growth.
// Prints numbers and whether each is flat within 10%; asserts only answers.
import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { WebSocket, WebSocketServer } from 'ws';

if (typeof globalThis.gc !== 'function') {
  execFileSync(process.execPath, ['--expose-gc', fileURLToPath(import.meta.url), ...process.argv.slice(2)], { stdio: 'inherit' });
  process.exit(0);
}

const args = process.argv.slice(2);
const at = args.indexOf('--seconds');
const seconds = at === -1 ? 60 : Number(args.splice(at, 2)[1]);
const dir = args[0] || 'pkg';
const base = pathToFileURL(resolve(dir) + '/').href;
const { createToolmark } = await import(`${base}index.js`);
const { bridge } = await import(`${base}bridge/index.js`);
const { createInPageChannel } = await import(`${base}bridge/in-page.js`);
const { websocketTransport } = await import(`${base}bridge/websocket.js`);

const tick = () => new Promise((r) => setTimeout(r, 0));
// The WebSocket transport's test hook (a static of its class) gives the
// module's memory size and its live transports and sockets.
const probe = websocketTransport({ url: 'ws://127.0.0.1:9', WebSocket });
probe.close();
const stats = () => probe.constructor.__stats();
async function snapshot() {
  for (let i = 0; i < 3; i++) {
    await tick();
    globalThis.gc();
  }
  return { wasm: stats().memoryBytes, heap: process.memoryUsage().heapUsed };
}

const mb = (bytes) => `${(bytes / 1048576).toFixed(2)} MiB`;
function report(what, before, after) {
  const growth = (k) => (100 * (after[k] - before[k])) / before[k];
  const flat = Math.abs(growth('wasm')) <= 10 && growth('heap') <= 10;
  console.log(`${what}\n  wasm memory ${mb(before.wasm)} → ${mb(after.wasm)} (${growth('wasm').toFixed(1)}%), ` +
    `JS heap ${mb(before.heap)} → ${mb(after.heap)} (${growth('heap').toFixed(1)}%): ${flat ? 'flat within 10%' : 'NOT flat within 10%'}`);
}

function okData(result, i) {
  if (result.status !== 'ok' || result.data.n !== i) throw new Error(`bad answer: ${JSON.stringify(result)}`);
}

console.log(`Node ${process.version}`);

// 1. Calls with unique ids.
{
  const tm = createToolmark();
  tm.register({ name: 'echo', description: 'Echoes a number', hints: { readOnly: true }, run: (input) => ({ n: input.n }) });
  const { transport, agent } = createInPageChannel();
  tm.use(bridge({ transport }));
  while (agent.tools.length < 1) await tick();
  const batch = async (from) => (await Promise.all(Array.from({ length: 32 }, (_, i) => agent.call('echo', { n: from + i })))).forEach((r, i) => okData(r, from + i));
  for (let n = 0; n < 20000; n += 32) await batch(n);
  const before = await snapshot();
  let calls = 0;
  const start = performance.now();
  while (calls < 1e6 && performance.now() - start < seconds * 1000) {
    await batch(calls);
    calls += 32;
  }
  const ms = performance.now() - start;
  report(`calls with unique ids: ${calls} in ${(ms / 1000).toFixed(1)} s${calls < 1e6 ? ' (the time limit, not a million)' : ''}`, before, await snapshot());
}

// 2. Confirmations created and expired.
{
  const tm = createToolmark({ confirmExpiryMs: 500 });
  tm.register({ name: 'pay', description: 'Pays', hints: { consequential: true }, run: () => ({ paid: true }) });
  const { transport, agent } = createInPageChannel();
  tm.use(bridge({ transport }));
  while (agent.tools.length < 1) await tick();
  const round = async (count) => {
    for (let n = 0; n < count; n += 100) {
      const results = await Promise.all(Array.from({ length: 100 }, () => agent.call('pay', {})));
      for (const r of results) if (r.status !== 'needs_confirmation') throw new Error(JSON.stringify(r));
    }
    const pending = tm.pendingConfirmations().length;
    while (tm.pendingConfirmations().length > 0) await new Promise((r) => setTimeout(r, 50));
    return pending;
  };
  await round(1000);
  const before = await snapshot();
  const peak = await round(10000);
  report(`confirmations: 10000 created (${peak} pending at the end, the cap: the others expired as the oldest), all expired`, before, await snapshot());
}

// 3. Sockets opened and closed.
{
  const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise((r) => server.once('listening', r));
  const url = `ws://127.0.0.1:${server.address().port}`;
  let closed = 0;
  let wake = () => {};
  server.on('connection', (socket) => socket.once('close', () => {
    closed++;
    wake();
  }));
  // `count` transports, at most 10 open at a time, each closed from its onOpen.
  const round = async (count, ownReference = true) => {
    const from = closed;
    let started = 0;
    const startOne = () => {
      started++;
      if (ownReference) {
        const transport = websocketTransport({ url, WebSocket, onOpen: () => transport.close() });
      } else {
        const box = {};
        box.transport = websocketTransport({ url, WebSocket, onOpen: () => {
          const { transport } = box;
          delete box.transport;
          transport.close();
        } });
      }
    };
    while (closed - from < count) {
      while (started < count && started - (closed - from) < 10) startOne();
      await new Promise((r) => (wake = r));
    }
  };
  // A warm-up of the same work: transports dropped with their onOpen wait
  // for the collector's finalizers, so the first thousands of them raise
  // the wasm memory's high-water mark once (docs/benchmarks.md, "Memory").
  await round(10000);
  const before = await snapshot();
  const start = performance.now();
  await round(10000);
  const ms = performance.now() - start;
  const after = await snapshot();
  const { transports, sockets } = stats();
  report(`sockets: 10000 opened and closed in ${(ms / 1000).toFixed(1)} s (after 10000 to warm up), onOpen refers to its transport (live after: ${transports} transports, ${sockets} sockets with listeners)`, before, after);
  await round(2000, false);
  const before2 = await snapshot();
  await round(10000, false);
  report('sockets: 10000 more (after 2000 to warm up), onOpen does not refer to its transport', before2, await snapshot());
  server.close();
  process.exit(0);
}
