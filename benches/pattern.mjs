// node benches/pattern.mjs [pkgDir] [--before baseDir]: milliseconds for one
// tm.call (the median of 3) whose input `s` is checked against a `pattern`
// built to be slow, by input length (the call is answered `invalid`: a
// hostile input, or a pattern refused at registration). With --before, the
// same calls on a second package (the base) in the same process, and
// after/before ratios; the base runs only the lengths its backtracking
// RegExp finishes ("—" otherwise). The last column is the call alone on the
// same text (pattern `^$`). Prints numbers only.
//
// Cases: `^(a+)+$` (the module's own engine: linear); `^(\p{L}+\s?)+$` (the issue's:
// `\p{…}`, refused at registration now, RegExp before: doubling per
// character); `(?=.*[A-Z])(?=.*\d)` unanchored (the issue's: one pass per
// lookahead, line by line, now; quadratic in RegExp); the anchored password
// form; the line-wise form on 1 MiB of short lines (one-atom needs: a scan
// of the characters; longer needs: a search per line holding a match); and
// a plain pattern for scale.
import { pathToFileURL } from 'node:url';
import { resolve } from 'node:path';

const args = process.argv.slice(2);
const at = args.indexOf('--before');
const beforeDir = at >= 0 ? args.splice(at, 2)[1] : null;
const load = async (dir) => import(`${pathToFileURL(resolve(dir) + '/').href}index.js`);
const after = await load(args[0] || 'pkg');
const before = beforeDir ? await load(beforeDir) : null;

async function timeCall({ createToolmark }, pattern, text) {
  const tm = createToolmark({ onError: () => {} });
  tm.register({
    name: 't',
    description: 'd',
    inputSchema: { type: 'object', properties: { s: { type: 'string', pattern } } },
    run: () => 1,
  });
  await tm.call('t', { s: 'warm-up' }, { caller: 'human' });
  const times = [];
  for (let round = 0; round < 3; round++) {
    const start = performance.now();
    const result = await tm.call('t', { s: text }, { caller: 'human' });
    times.push(performance.now() - start);
    if (result.status !== 'invalid') throw new Error(`${pattern}: ${JSON.stringify(result).slice(0, 200)}`);
  }
  return times.sort((a, b) => a - b)[1];
}

const CASES = [
  // [pattern, input of size n, sizes, the largest size the base runs]
  ['^(a+)+$', (n) => `${'a'.repeat(n)}!`, [20, 24, 1_000_000], 24],
  ['^(\\p{L}+\\s?)+$', (n) => `${'a'.repeat(n)}!`, [18, 20, 22, 24, 41], 24],
  ['(?=.*[A-Z])(?=.*\\d)', (n) => 'a'.repeat(n), [10_000, 20_000, 40_000, 200_000, 1_048_576], 40_000],
  ['^(?=.*[A-Z])(?=.*\\d).{8,}$', (n) => 'a'.repeat(n), [1_048_576], 1_048_576],
  ['(?=.*\\s)(?=.*[A-Z])', (n) => 'a\n'.repeat(n / 2), [1_048_576], 1_048_576],
  // A need of two atoms: a regex search per line the atoms hold on, here
  // every other line.
  ['(?=.*a\\d)(?=.*[A-Z])', (n) => 'A\na1\n'.repeat(n / 6), [1_048_576], 1_048_576],
  // Two such needs, the first holding on every line: the line-wise form's
  // most searches per byte.
  ['(?=.*a\\d)(?=.*b\\d)', (n) => 'a1\n'.repeat(n / 3), [1_048_575], 1_048_575],
  // A plain pattern, for scale.
  ['^[a-z0-9._%+-]+@[a-z0-9.-]+\\.[a-z]{2,}$', (n) => 'a'.repeat(n), [1_048_576], 1_048_576],
];

const cell = (ms) => (ms === null ? '—' : ms.toFixed(1));
// The call's own cost for the same text: `^$` fails at the first character.
console.log('pattern | n | after ms | before ms | after/before | call alone (^$) ms');
for (const [pattern, input, sizes, baseLimit] of CASES) {
  for (const n of sizes) {
    const text = input(n);
    const a = await timeCall(after, pattern, text);
    const b = before && n <= baseLimit ? await timeCall(before, pattern, text) : null;
    const ratio = b === null ? '—' : (a / b).toFixed(4);
    const alone = await timeCall(after, '^$', text);
    console.log(`${pattern} | ${n} | ${cell(a)} | ${cell(b)} | ${ratio} | ${cell(alone)}`);
  }
}
