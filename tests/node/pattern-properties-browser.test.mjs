// `\p{…}` / `\P{…}` in `pattern` through the built package in real headless
// Chromium, against the page's own `new RegExp(p, 'u')` over every code
// point but the surrogates (a JSON input cannot hold a lone one): for each
// property form, the page's RegExp splits the code points into runs in
// and out of the property, and the package must take every run of one
// kind as a whole with `^\p{…}*$`, `^[^\P{…}]*$` (and two other forms), every
// run of the other kind with `^\P{…}*$`, `^[^\p{…}]*$` (and one other):
// so it agrees with RegExp on each code point, both ways.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chromiumWithServer } from './support/browser.mjs';

const chromium = chromiumWithServer();

const PROPERTIES = [
  'L', 'Letter', 'Lu', 'Nd', 'digit', 'gc=L', 'General_Category=Letter', 'Script=Greek', 'sc=Latin',
  'Script_Extensions=Greek', 'scx=Deva', 'Alphabetic', 'White_Space', 'Emoji', 'ASCII', 'Any', 'Assigned',
];

test('every property form agrees with the page RegExp on every code point', { timeout: 300_000 }, async () => {
  const page = await chromium.open();
  const failures = await page.evaluate(async (properties) => {
    const { createToolmark } = await import('/pkg/index.js');
    const tm = createToolmark({ dev: true });
    const failures = [];
    const points = [];
    for (let c = 0; c <= 0x10ffff; c++) if (c < 0xd800 || c > 0xdfff) points.push(c);
    let tool = 0;
    /** Whether every string of `texts` matches `pattern` in the package. */
    const all = async (pattern, texts) => {
      const name = `t${tool++}`;
      tm.register({
        name,
        description: 'Check.',
        inputSchema: { type: 'array', items: { type: 'string', pattern } },
        run: () => true,
      });
      // Calls of at most ~100 KB of input.
      for (let from = 0; from < texts.length; ) {
        let size = 0;
        let to = from;
        while (to < texts.length && (to === from || size + texts[to].length < 25_000)) size += texts[to++].length;
        const result = await tm.call(name, texts.slice(from, to), { caller: 'human' });
        if (result.status !== 'ok') return false;
        from = to;
      }
      return true;
    };
    for (const property of properties) {
      const inside = new RegExp(`^\\p{${property}}$`, 'u');
      // Runs of code points (at most 8192 each) in and out of the property.
      const runs = { true: [], false: [] };
      let run = '';
      let kind;
      for (const c of points) {
        const now = inside.test(String.fromCodePoint(c));
        if (now !== kind || run.length >= 8192) {
          if (run) runs[kind].push(run);
          run = '';
          kind = now;
        }
        run += String.fromCodePoint(c);
      }
      runs[kind].push(run);
      const p = `\\p{${property}}`;
      const P = `\\P{${property}}`;
      const forms = [
        [`^${p}*$`, runs.true], [`^[${p}]*$`, runs.true], [`^[^${P}]*$`, runs.true], [`^[${p}\\uFFFF]*$`, runs.true],
        [`^${P}*$`, runs.false], [`^[${P}]*$`, runs.false], [`^[^${p}]*$`, runs.false],
      ];
      for (const [pattern, texts] of forms) {
        if (!(await all(pattern, texts))) failures.push(`${pattern} refuses some code point the page RegExp takes`);
      }
    }
    return failures;
  }, PROPERTIES);
  assert.deepEqual(page.errors, []);
  assert.deepEqual(failures, []);
  await page.close();
});
