// node benches/flatten-worst.mjs [pkgDir]: milliseconds of `flatten`'s worst
// inputs within its bounds (docs/api.md, "Path helpers"), and of inputs past
// them, in headless Chromium, two fresh pages in a row. Prints each case's
// time and the number of keys made (or the error code); asserts nothing.
import { resolve } from 'node:path';
import { launchChromium, serve, BLANK_PAGE } from '../tests/node/support/browser.mjs';

const dir = resolve(process.argv[2] || 'pkg');
const server = await serve(dir, { '/blank.html': BLANK_PAGE });
const browser = await launchChromium();
for (let run = 0; run < 2; run++) {
const page = await browser.newPage();
await page.goto(`${server.url}/blank.html`);
console.log(await page.evaluate(async (base) => {
  const { flatten } = await import(`${base}/index.js`);
  const out = [];
  const t = (name, f) => { const t0 = performance.now(); let r; try { r = Object.keys(f()).length; } catch (e) { r = e.code; } out.push(`${name} ${(performance.now() - t0).toFixed(1)} ms ${r}`); };
  const wide = Object.fromEntries(Array.from({length: 19999}, (_, i) => ['k' + i, i]));
  const arr = new Array(19998).fill(0);
  t('19,999 keys', () => flatten(wide));
  t('19,998 items under one key', () => flatten({ a: arr }));
  t('15990-char key over 250', () => flatten({ ['k'.repeat(15990)]: new Array(250).fill(0) }));
  t('15990-char key over 1500', () => flatten({ ['k'.repeat(15990)]: new Array(1500).fill(0) }));
  t('3000-char key over 1390 (4 MiB of paths)', () => flatten({ ['k'.repeat(3000)]: new Array(1390).fill(0) }));
  t('30000-char key over 2000', () => flatten({ ['k'.repeat(30000)]: new Array(2000).fill(0) }));
  return out.join('\n');
}, server.url));
await page.close();
}
await browser.close(); await server.close();
