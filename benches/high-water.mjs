// node benches/high-water.mjs [pkgDir] [--rounds N] [--big BYTES]: the
// module's WebAssembly memory while messages over maxMessageBytes mix with
// ordinary traffic on the in-page channel. Each round: 20 agent calls whose
// results vary in size up to 200 KB, and one call message of BYTES (default
// 1,100,000: over the 1 MiB limit, dropped with invalid_message). Prints the
// memory every 25 rounds. WebAssembly memory never shrinks, so the figures
// show the high-water mark: flat after a few steps means bounded, steps
// that keep coming mean growth. Asserts nothing.
import { resolve } from 'node:path';
import { loadPackage, memoryProbe } from './support/package.mjs';

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const at = args.indexOf(name);
  return at === -1 ? fallback : Number(args[at + 1]);
};
const rounds = option('--rounds', 1500);
const bigBytes = option('--big', 1_100_000);
const dir = args.find((a, i) => !a.startsWith('--') && !args[i - 1]?.startsWith('--')) || 'pkg';
const pkg = await loadPackage(dir);
const { createToolmark, bridge, createInPageChannel } = pkg;
const memoryBytes = memoryProbe(pkg);
const mib = () => (memoryBytes() / 1048576).toFixed(2);

const tm = createToolmark({ onError: () => {} });
tm.register({
  name: 'echo',
  description: 'Echoes n, padded',
  hints: { readOnly: true },
  run: (input) => ({ n: input.n, pad: 'x'.repeat(input.size) }),
});
const { transport, agent } = createInPageChannel();
tm.use(bridge({ transport }));
while (agent.tools.length < 1) await new Promise((r) => setImmediate(r));

const big = 'y'.repeat(bigBytes);
const samples = [];
for (let round = 0; round < rounds; round++) {
  const calls = [];
  for (let i = 0; i < 20; i++) calls.push(agent.call('echo', { n: i, size: (i * 7919 + round * 104729) % 200_000 }));
  agent.send({ protocol: 1, type: 'call', clientId: agent.clientId, id: `big-${round}`, tool: 'echo', input: { big } });
  for (const result of await Promise.all(calls)) {
    if (result.status !== 'ok') throw new Error(JSON.stringify(result));
  }
  await new Promise((r) => setImmediate(r));
  if (round % 25 === 0 || round === rounds - 1) samples.push(`${round}: ${mib()}`);
}
console.log(`${resolve(dir)}, ${rounds} rounds, one ${bigBytes}-byte message each; WebAssembly memory, MiB`);
console.log(samples.join('  '));
