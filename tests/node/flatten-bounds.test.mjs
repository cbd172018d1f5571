// `flatten` is linear in its output (docs/api.md, "Path helpers"): paths of
// at most 16,000 UTF-8 bytes (V8 hashes a key of more than 16,383 characters
// by its length alone, so long keys of one length collide and building the
// output is quadratic), at most 4 MiB of output (every path's UTF-8 bytes
// plus each string leaf's, 8 for any other leaf) and 20,000 values. The
// inputs an agent can send a tool that flattens its input, each answered
// with invalid_path or with exactly the right output, in Node and Chromium.
// Each test pairs a refusal with what is just within its bound, so each
// fails where the bound is missing.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { flatten } from '../../pkg/index.js';
import { chromiumWithServer } from './support/browser.mjs';

const OVER_PATH = 'invalid_path: a path is longer than 16000 bytes';
const OVER_OUTPUT = 'invalid_path: the flattened value is larger than 4194304 bytes (paths and values)';

// 262 paths `k×15990.i`: 10 of 15,992 bytes, 90 of 15,993, 162 of 15,994,
// each with a zero (8): 4,192,414 bytes. The string leaf `b` (path 1 byte)
// fills the rest: 1,889 UTF-8 bytes ('é' is two), 4,194,304 in all.
const MIXED = (filler) => `({ ['k'.repeat(15990)]: new Array(262).fill(0), b: ${filler} })`;
const MIXED_OUTPUT = (filler) =>
  `Object.fromEntries([...Array.from({ length: 262 }, (_, i) => ['k'.repeat(15990) + '.' + i, 0]), ['b', ${filler}]])`;

/**
 * `[test name, [[case, input source, expected]]]`: `expected` is the
 * refusal (code and message) or the source of the exact output. Sources,
 * so that Node and the page each build their own.
 */
const GROUPS = [
  ['a 30,000-character key over 2,000 zeros is refused', [
    ['30,000 × 2,000', "({ ['k'.repeat(30000)]: new Array(2000).fill(0) })", OVER_PATH],
  ]],
  ['a 100,000-character key over 1,000 zeros is refused', [
    ['100,000 × 1,000', "({ ['k'.repeat(100000)]: new Array(1000).fill(0) })", OVER_PATH],
  ]],
  ['a 16,500-character key over 1,500 leaves is refused', [
    ['16,500 × 1,500', "({ ['k'.repeat(16500)]: Array.from({ length: 1500 }, (_, i) => i % 2 ? 'v' : i) })", OVER_PATH],
  ]],
  ['a path of 16,000 UTF-8 bytes is written, one of 16,001 refused', [
    // 'é' × 7,999 is 15,998 bytes (7,999 UTF-16 units): with '.4', 16,000.
    ['16,000 bytes', "({ ['é'.repeat(7999)]: [1, 'two', null, {}, []] })",
      "({ ['é'.repeat(7999) + '.0']: 1, ['é'.repeat(7999) + '.1']: 'two', ['é'.repeat(7999) + '.2']: null, ['é'.repeat(7999) + '.3']: {}, ['é'.repeat(7999) + '.4']: [] })"],
    ['16,001 bytes', "({ ['é'.repeat(7999) + 'k']: [1, 'two', null, {}, []] })", OVER_PATH],
  ]],
  ['an output of exactly 4 MiB is written, one byte more refused', [
    ['paths and a string leaf, 4,194,304 bytes', MIXED("'é'.repeat(944) + 'x'"), MIXED_OUTPUT("'é'.repeat(944) + 'x'")],
    ['paths and a string leaf, 4,194,305 bytes', MIXED("'é'.repeat(945)"), OVER_OUTPUT],
    ['one string leaf, 4,194,304 bytes', "({ a: 'x'.repeat(4 * 1048576 - 1) })", "({ a: 'x'.repeat(4 * 1048576 - 1) })"],
    ['one string leaf, 4,194,305 bytes', "({ a: 'x'.repeat(4 * 1048576) })", OVER_OUTPUT],
    ['a 15,990-character key over 250 zeros', "({ ['k'.repeat(15990)]: new Array(250).fill(0) })",
      "Object.fromEntries(Array.from({ length: 250 }, (_, i) => ['k'.repeat(15990) + '.' + i, 0]))"],
    ['a 15,990-character key over 1,500 zeros (24 MB of paths)', "({ ['k'.repeat(15990)]: new Array(1500).fill(0) })", OVER_OUTPUT],
  ]],
  ['20,000 values are flattened, 20,001 refused', [
    ['19,999 keys and the object', "Object.fromEntries(Array.from({ length: 19999 }, (_, i) => ['k' + i, i]))",
      "Object.fromEntries(Array.from({ length: 19999 }, (_, i) => ['k' + i, i]))"],
    ['20,000 keys and the object', "Object.fromEntries(Array.from({ length: 20000 }, (_, i) => ['k' + i, i]))",
      'invalid_path: value has more than 20000 parts'],
  ]],
];

/**
 * What flatten made of `input`: its error (code and message), 'the expected
 * output' when its entries, in order, are `expected`'s, else a brief of its
 * keys (a run of one character written c×N). Self-contained: it also runs in
 * the page.
 */
function outcome(flatten, input, expected) {
  let out;
  try {
    out = flatten(input);
  } catch (error) {
    return `${error.code}: ${error.message}`;
  }
  if (expected !== undefined && JSON.stringify(Object.entries(out)) === JSON.stringify(Object.entries(expected))) {
    return 'the expected output';
  }
  const brief = (key) => key.replace(/(.)\1{99,}/gu, (run, c) => `${c}×${[...run].length}`);
  const keys = Object.keys(out);
  return `${keys.length} keys, first ${brief(keys[0] ?? '')}, last ${brief(keys[keys.length - 1] ?? '')}`;
}

/** `[case, outcome, what was expected]` for each case of a group, run by `evaluate` (indirect eval). */
function run(cases, flatten, evaluate) {
  return cases.map(([name, input, expected]) => {
    const refusal = expected.startsWith('invalid_path: ');
    const got = outcome(flatten, evaluate(input), refusal ? undefined : evaluate(expected));
    return [name, got, refusal ? expected : 'the expected output'];
  });
}

describe('Node', () => {
  for (const [title, cases] of GROUPS) {
    test(title, () => {
      for (const [name, got, want] of run(cases, flatten, (0, eval))) assert.equal(got, want, name);
    });
  }
});

describe('Chromium', () => {
  const session = chromiumWithServer();
  for (const [title, cases] of GROUPS) {
    test(title, async () => {
      const page = await session.open();
      const results = await page.evaluate(async ({ cases, runSource, outcomeSource }) => {
        const { flatten } = await import('/pkg/index.js');
        const outcome = (0, eval)(`(${outcomeSource})`);
        const run = (0, eval)(`(outcome) => (${runSource})`)(outcome);
        return run(cases, flatten, (0, eval));
      }, { cases, runSource: run.toString(), outcomeSource: outcome.toString() });
      for (const [name, got, want] of results) assert.equal(got, want, name);
      assert.deepEqual(page.errors.map(String), []);
      await page.close();
    });
  }
});
