// node benches/pattern.mjs [pkgDir] [--small]: milliseconds for one tm.call
// whose input is checked against a catastrophic-backtracking `pattern`, by
// input length; the hostile input is n letters and a "!". `^(a+)+$` runs in
// regex-lite (linear: 10× the input, about 10× the time); `^(\p{L}+)+$` needs
// `\p{…}`, so it runs in the page's RegExp (V8's backtracking engine here, as
// in Chromium): two more characters, four times the time. `--small` measures
// n ≤ 26 only (for a package whose `^(a+)+$` still goes to RegExp). Prints
// numbers only.
import { pathToFileURL } from 'node:url';
import { resolve } from 'node:path';

const args = process.argv.slice(2);
const small = args.includes('--small');
const dir = pathToFileURL(resolve(args.find((a) => !a.startsWith('--')) || 'pkg') + '/').href;
const { createToolmark } = await import(`${dir}index.js`);

async function timeCall(pattern, text) {
  const tm = createToolmark();
  tm.register({
    name: 't',
    description: 'd',
    inputSchema: { type: 'object', properties: { s: { type: 'string', pattern } } },
    run: () => 1,
  });
  await tm.call('t', { s: 'warm-up' }, { caller: 'human' });
  const start = performance.now();
  const result = await tm.call('t', { s: text }, { caller: 'human' });
  const ms = performance.now() - start;
  if (result.status !== 'invalid') throw new Error(`${pattern}: ${JSON.stringify(result)}`);
  return ms;
}

for (const pattern of ['^(a+)+$', '^(\\p{L}+)+$']) {
  console.log(`${pattern}:`);
  for (const n of [20, 22, 24, 26]) {
    const ms = await timeCall(pattern, `${'a'.repeat(n)}!`);
    console.log(`  n = ${String(n).padStart(9)}: ${ms.toFixed(1)} ms`);
  }
}
if (!small) {
  console.log('^(a+)+$, long inputs:');
  for (const n of [1_000, 10_000, 100_000, 1_000_000]) {
    const ms = await timeCall('^(a+)+$', `${'a'.repeat(n)}!`);
    console.log(`  n = ${String(n).padStart(9)}: ${ms.toFixed(1)} ms`);
  }
}
