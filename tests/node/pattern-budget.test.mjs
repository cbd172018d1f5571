// A `pattern` match is charged to the validation budget by the work its
// program may do per character, counted repetition expanded: `a{40000}b`
// is 9 bytes of pattern but 40,000 states visited per character, and a
// pattern of empty repetitions visits its states without reading anything.
// Each input here ends in the budget's issue before the search (charged by
// the pattern's bytes, they would run for seconds to minutes); the times are
// printed, not asserted: a time is no test on a shared machine.
import { test } from 'node:test';
import assert from 'node:assert/strict';

const { createToolmark } = await import(new URL('../../pkg/index.js', import.meta.url));

const CASES = [
  ['a{40000}b', 40_000],
  ['(?:(?:)?){100000}x', 30_000],
  ['^(?=.*\\d)(?:ab?){50000}$', 100_000],
  ['(?=.*a{2000})(?=.*b)', 100_000],
];

test('pattern: an expanded counted repetition is charged by its program, not its bytes', async () => {
  const tm = createToolmark({ onError: () => {} });
  const times = [];
  for (const [i, [pattern, n]] of CASES.entries()) {
    tm.register({
      name: `t${i}`,
      description: 'd',
      inputSchema: { type: 'object', properties: { s: { type: 'string', pattern } } },
      run: () => 1,
    });
    const start = performance.now();
    const result = await tm.call(`t${i}`, { s: 'a'.repeat(n) }, { caller: 'human' });
    const ms = performance.now() - start;
    times.push(`${pattern} on ${n}: ${ms.toFixed(1)} ms`);
    assert.equal(result.status, 'invalid', pattern);
    assert.match(JSON.stringify(result), /exceeded/, pattern);
  }
  console.log(times.join('; '));
  // A short text under the same pattern is still matched.
  tm.register({
    name: 'short',
    description: 'd',
    inputSchema: { type: 'object', properties: { s: { type: 'string', pattern: '^a{3,400}b$' } } },
    run: () => 1,
  });
  assert.equal((await tm.call('short', { s: 'aaab' }, { caller: 'human' })).status, 'ok');
  assert.equal((await tm.call('short', { s: 'ab' }, { caller: 'human' })).status, 'invalid');
});
