// The input the page holds for calls in flight is bounded (docs/api.md,
// "Busy"): a burst of large calls over several scopes, each under every
// per-message and per-scope limit, is taken up to 32 MiB of held input and
// refused `busy` past it, and the module's WebAssembly memory (which never
// shrinks) stays near what it holds, not several times each message.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadPackage, memoryProbe, waitingScopes } from '../../benches/support/package.mjs';

const MiB = 1 << 20;

test('a burst of 0.8 MB calls over 4 scopes: busy past 32 MiB held, memory bounded', async () => {
  const pkg = await loadPackage(new URL('../../pkg/', import.meta.url).pathname);
  const memory = memoryProbe(pkg);
  const { agent, waiting: pending } = await waitingScopes(pkg, 4, (input) => input.v.length);

  const input = { v: Array(80_000).fill('abcdefgh') }; // 0.8 MB of JSON
  const before = memory();
  const calls = Array.from({ length: 120 }, (_, i) => agent.call(`s${i % 4}.t`, input));
  while (pending.length < 4) await new Promise((r) => setImmediate(r));
  const inFlight = memory();
  const releaser = setInterval(() => pending.splice(0).forEach((release) => release()), 1);
  const results = await Promise.all(calls);
  clearInterval(releaser);

  const ok = results.filter((r) => r.status === 'ok');
  const busy = results.filter((r) => r.status === 'refused' && r.code === 'busy');
  assert.equal(ok.length + busy.length, 120, 'each call answered ok or busy');
  assert.ok(ok.every((r) => r.data === 80_000), 'each run got the whole input');
  // 4 running (their input is JS's) and as many waiting as fit in 32 MiB.
  const inputBytes = JSON.stringify(input).length;
  assert.equal(ok.length, 4 + Math.floor((32 * MiB) / inputBytes));
  assert.ok(busy.every((r) => r.message === 'The page already holds 32 MiB of input for pending calls'));
  // 42 calls of 0.88 MB: about 37 MB of messages. Before the budget and the
  // held text, the same burst grew the memory by about 780 MiB.
  assert.ok(inFlight - before < 64 * MiB, `memory grew ${((inFlight - before) / MiB).toFixed(1)} MiB`);
});
