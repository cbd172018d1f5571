// node benches/call-load.mjs [pkgDir]: 1800 bridge calls through the in-page
// channel with inputs and results from 10 bytes to 600 KB, in 6 rounds;
// prints the wall time and the process RSS after each round. It exercises
// the module's allocator (Rust's default, dlmalloc) with a mixed load: memory
// should settle after the first round, not climb. Prints numbers, asserts
// only that every call answered ok.
import { pathToFileURL } from 'node:url';
import { resolve } from 'node:path';

const dir = pathToFileURL(resolve(process.argv[2] || 'pkg') + '/').href;
const { createToolmark } = await import(`${dir}index.js`);
const { bridge } = await import(`${dir}bridge/index.js`);
const { createInPageChannel } = await import(`${dir}bridge/in-page.js`);

const tm = createToolmark();
tm.register({
  name: 'echo',
  description: 'Echoes its input',
  inputSchema: { type: 'object', properties: { s: { type: 'string' }, k: { type: 'array' } } },
  hints: { readOnly: true },
  run: (input) => ({ n: input.s.length, s: input.s, k: input.k }),
});
const { transport, agent } = createInPageChannel();
tm.use(bridge({ transport }));
while (!agent.clientId) await new Promise((r) => setImmediate(r));

const started = performance.now();
for (let round = 0; round < 6; round++) {
  for (let i = 0; i < 300; i++) {
    const size = [10, 1000, 50_000, 300_000][(i * 7 + round) % 4];
    const k = Array.from({ length: size / 100 }, (_, j) => j * 1.5);
    const result = await agent.call('echo', { s: 'x'.repeat(size), k });
    if (result.status !== 'ok' || result.data.n !== size) {
      throw new Error(`call ${round}/${i}: ${JSON.stringify(result).slice(0, 200)}`);
    }
  }
  const ms = (performance.now() - started).toFixed(0);
  console.log(`round ${round}: ${ms} ms so far, RSS ${(process.memoryUsage().rss / 1e6).toFixed(1)} MB`);
}
