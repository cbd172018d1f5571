// `flatten` is linear in its output (docs/api.md, "Path helpers"): paths of
// at most 16,000 bytes (longer keys are hashed by length alone in V8 and
// collide), at most 4 MiB of output and 20,000 values. The inputs an agent
// can send a tool that flattens its input, each answered at once with the
// right output or invalid_path, in Node and in Chromium.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { flatten } from '../../pkg/index.js';
import { chromiumWithServer } from './support/browser.mjs';

/** Each case: `[name, input source, expected]`, run in Node and in a page. */
const CASES = [
  ['a 30,000-character key over 2,000 zeros', "({ ['k'.repeat(30000)]: new Array(2000).fill(0) })", 'invalid_path: a path is longer than 16000 bytes'],
  ['a 100,000-character key over 1,000 zeros', "({ ['k'.repeat(100000)]: new Array(1000).fill(0) })", 'invalid_path: a path is longer than 16000 bytes'],
  ['a 16,500-character key over 1,500 zeros', "({ ['k'.repeat(16500)]: new Array(1500).fill(0) })", 'invalid_path: a path is longer than 16000 bytes'],
  [
    'a 15,990-character key over 1,500 zeros (24 MB of paths)',
    "({ ['k'.repeat(15990)]: new Array(1500).fill(0) })",
    'invalid_path: the flattened value is larger than 4194304 bytes (paths and values)',
  ],
  ['a 15,990-character key over 250 zeros (within the bounds)', "({ ['k'.repeat(15990)]: new Array(250).fill(0) })", 'keys 250, first k×15990.0, last k×15990.249'],
  ['20,000 keys (the most values)', "Object.fromEntries(Array.from({ length: 19999 }, (_, i) => ['k' + i, i]))", 'keys 19999, first k0, last k19998'],
  ['20,001 keys', "Object.fromEntries(Array.from({ length: 20001 }, (_, i) => ['k' + i, i]))", 'invalid_path: value has more than 20000 parts'],
  ['a string leaf past the output bound', "({ a: 'x'.repeat(4 * 1048576) })", 'invalid_path: the flattened value is larger than 4194304 bytes (paths and values)'],
  ['a string leaf within it', "({ a: 'x'.repeat(4 * 1048576 - 2) })", 'keys 1, first a, last a'],
];

/** What flatten made of `input`, in brief (a long key written as k×N). */
function outcome(flatten, input) {
  const brief = (key) => key.replace(/k{100,}/, (run) => `k×${run.length}`);
  try {
    const keys = Object.keys(flatten(input));
    return `keys ${keys.length}, first ${brief(keys[0])}, last ${brief(keys[keys.length - 1])}`;
  } catch (error) {
    return `${error.code}: ${error.message}`;
  }
}

describe('Node', () => {
  for (const [name, source, expected] of CASES) {
    test(name, () => {
      assert.equal(outcome(flatten, (0, eval)(source)), expected);
    });
  }
  test('the values of a flattened value are its leaves', () => {
    const out = flatten({ ['k'.repeat(15990)]: [1, 'two', null, {}, []] });
    const path = 'k'.repeat(15990);
    assert.deepEqual(out, { [`${path}.0`]: 1, [`${path}.1`]: 'two', [`${path}.2`]: null, [`${path}.3`]: {}, [`${path}.4`]: [] });
  });
});

describe('Chromium', () => {
  const session = chromiumWithServer();
  test('each case as in Node', async () => {
    const page = await session.open();
    const results = await page.evaluate(async ({ cases, outcomeSource }) => {
      const { flatten } = await import('/pkg/index.js');
      const outcome = (0, eval)(`(${outcomeSource})`);
      return cases.map(([name, source]) => [name, outcome(flatten, (0, eval)(source))]);
    }, { cases: CASES, outcomeSource: outcome.toString() });
    assert.deepEqual(results, CASES.map(([name, , expected]) => [name, expected]));
    await page.close();
  });
});
