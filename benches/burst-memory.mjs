// node benches/burst-memory.mjs [pkgDir]: the module's WebAssembly memory
// around a burst of 120 concurrent agent calls of 0.88 MB each
// (`{ v: Array(80000).fill('abcdefgh') }`) over 4 scopes, each under every
// per-message and per-scope limit, their tools waiting until released.
// Prints the memory before, with the calls in flight, and after, and how
// the calls were answered. WebAssembly memory never shrinks: the figure
// with the calls in flight is the burst's high-water. Asserts nothing.
import { loadPackage, memoryProbe, waitingScopes } from './support/package.mjs';

const dir = process.argv[2] || 'pkg';
const pkg = await loadPackage(dir);
const memory = memoryProbe(pkg);
const mib = () => `${(memory() / 1048576).toFixed(1)} MiB`;
const { agent, waiting } = await waitingScopes(pkg, 4, () => 1);
const before = mib();
const input = { v: Array(80_000).fill('abcdefgh') };
const calls = Array.from({ length: 120 }, (_, i) => agent.call(`s${i % 4}.t`, input));
while (waiting.length < 4) await new Promise((r) => setImmediate(r));
const inFlight = mib();
const releaser = setInterval(() => waiting.splice(0).forEach((release) => release()), 1);
const answers = {};
for (const result of await Promise.all(calls)) {
  const key = result.code ? `${result.status} ${result.code}` : result.status;
  answers[key] = (answers[key] ?? 0) + 1;
}
clearInterval(releaser);
console.log(`${dir}: before ${before}, in flight ${inFlight}, after ${mib()}; answers ${JSON.stringify(answers)}`);
