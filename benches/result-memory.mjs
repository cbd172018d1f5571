// node benches/result-memory.mjs [pkgDir] [--result-bytes N] [--rounds R] [--shape string|array] [--path agent|page|both]:
// the module's WebAssembly memory after tool results of N bytes of JSON
// (default 64 MiB), R of them (default 5) one after another, through the
// in-page channel (an agent's call: the `result` message) and through
// `tm.call` (a page call: the result handed to JS). `string` is one string
// of N characters; `array` is an array of short strings and numbers of
// about N bytes of JSON. WebAssembly memory never shrinks, so the figure is
// the high-water mark; it is printed in MiB and as a multiple of N (what one
// result costs the module). `--path` runs one of the two paths alone (in a
// fresh process, its own high-water). Asserts nothing.
import { resolve } from 'node:path';
import { loadPackage, memoryProbe } from './support/package.mjs';

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const at = args.indexOf(name);
  return at === -1 ? fallback : args[at + 1];
};
const resultBytes = Number(option('--result-bytes', 64 * 1048576));
const rounds = Number(option('--rounds', 5));
const shape = option('--shape', 'string');
const only = option('--path', 'both');
const dir = args.find((a, i) => !a.startsWith('--') && !args[i - 1]?.startsWith('--')) || 'pkg';
const pkg = await loadPackage(dir);
const { createToolmark, bridge, createInPageChannel } = pkg;
const bytes = memoryProbe(pkg);
const mib = (n) => (n / 1048576).toFixed(1);

// The result, made once: what the tool returns every time.
const value = (() => {
  if (shape === 'string') return 'x'.repeat(resultBytes - 2);
  const items = [];
  let size = 2;
  for (let i = 0; size < resultBytes; i++) {
    const item = i % 2 ? `item ${i}` : i;
    size += JSON.stringify(item).length + 1;
    items.push(item);
  }
  return items;
})();
const written = JSON.stringify(value).length;

const tm = createToolmark({ onError: (e) => console.error(e.code, e.message) });
tm.register({ name: 'big', description: 'A large result', hints: { readOnly: true }, run: () => value });
const { transport, agent } = createInPageChannel();
tm.use(bridge({ transport }));
while (agent.tools.length < 1) await new Promise((r) => setImmediate(r));

const start = bytes();
const rows = [];
for (const [path, call] of [
  ['agent', 'agent call (result message)', () => agent.call('big', {})],
  ['page', 'page call (tm.call)', () => tm.call('big', {})],
].filter(([key]) => only === 'both' || only === key).map(([, path, call]) => [path, call])) {
  const marks = [];
  for (let round = 0; round < rounds; round++) {
    const result = await call();
    if (result.status !== 'ok') throw new Error(`${path}: ${JSON.stringify(result).slice(0, 200)}`);
    marks.push(mib(bytes()));
  }
  rows.push(`${path}: ${marks.join(' ')} MiB`);
}
const end = bytes();
console.log(`${resolve(dir)}: ${rounds} results of ${mib(written)} MiB of JSON (${shape}) per path`);
console.log(`memory before ${mib(start)} MiB; after each result:`);
for (const row of rows) console.log(`  ${row}`);
console.log(`high-water ${mib(end)} MiB = ${((end - start) / written).toFixed(2)} × the result above the start`);
