// node benches/pattern-properties.mjs [--runs N]: what `\p{…}` costs a
// tool's registration in headless Chromium. Each run is a fresh page:
// `createToolmark()`, then one `register` per property in the order below,
// each with `pattern: '^\p{X}+$'` (the page's RegExp lists the property's
// code points, js/src/unicode-property.js); the first one also builds the
// page's strings of every code point. Baseline in the same run: the same
// registration with `^[a-z]+$`. Prints each property's median, min and max
// (ms) over the runs; asserts nothing. After `npm run build`.
import { openBenchPage } from './support/chromium.mjs';

const args = process.argv.slice(2);
const at = args.indexOf('--runs');
const runs = at === -1 ? 7 : Number(args[at + 1]);
const PROPERTIES = ['ASCII', 'L', 'Lu', 'Nd', 'Script=Greek', 'Script_Extensions=Greek', 'Alphabetic', 'White_Space', 'Emoji', 'Any', 'Assigned', 'Cn'];

const bench = await openBenchPage();
const times = new Map([['[a-z] (baseline)', []], ...PROPERTIES.map((p) => [p, []])]);
for (let run = 0; run < runs; run++) {
  const page = await bench.newPage();
  const measured = await page.evaluate(async (properties) => {
    const { createToolmark } = await import('/pkg/index.js');
    const tm = createToolmark({ dev: true });
    const time = (name, pattern) => {
      const start = performance.now();
      tm.register({ name, description: 'd', inputSchema: { type: 'object', properties: { s: { type: 'string', pattern } } }, run: () => 1 });
      return performance.now() - start;
    };
    const out = [['[a-z] (baseline)', time('base', '^[a-z]+$')]];
    for (const [i, property] of properties.entries()) out.push([property, time(`p${i}`, `^\\p{${property}}+$`)]);
    return out;
  }, PROPERTIES);
  for (const [name, ms] of measured) times.get(name).push(ms);
  await page.close();
}
await bench.close();
console.log(`${bench.version}, ${runs} fresh pages; register with one \\p{…} pattern, ms`);
console.log(`${'property'.padEnd(26)} ${'median'.padStart(7)} ${'min'.padStart(6)} ${'max'.padStart(6)}`);
for (const [name, list] of times) {
  const sorted = [...list].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)];
  console.log(`${name.padEnd(26)} ${median.toFixed(1).padStart(7)} ${sorted[0].toFixed(1).padStart(6)} ${sorted.at(-1).toFixed(1).padStart(6)}`);
}
