// node benches/validate-worst.mjs [--node] [--runs N] [--warmup N] [--fragment N] [--only TEXT] [pkgDir ...]:
// milliseconds of each of the validator's worst cases (issue 22;
// tests/node/support/hostile-validation-cases.mjs), each package side by side
// in one run, in headless Chromium (with --node, in this Node process). Each
// case runs in a fresh page (a fresh module), after a warm-up of small agent
// calls (--fragment N: and N tools registered, every other one then
// unregistered, which leaves the heap fragmented); a 'call' case is one agent call
// through the in-page channel (bridge maxMessageBytes 8 MiB), timed from
// agent.call to its answer, so it includes the message's JSON work (the
// same input sent to a tool without a schema is timed after it, printed in
// parentheses: the call's cost without validation). Prints the time of each run
// and their minimum, and the answer (status and issue count), asserts nothing. Default package: pkg.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { CASES, measure } from '../tests/node/support/hostile-validation-cases.mjs';

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const at = args.indexOf(name);
  if (at < 0) return fallback;
  const [value] = args.splice(at, 2).slice(1);
  return value;
};
const runs = Number(option('--runs', 1));
const warmup = Number(option('--warmup', 2000));
const fragment = Number(option('--fragment', 0));
const only = option('--only', '');
const inNode = args.includes('--node');
const dirs = args.filter((a) => !a.startsWith('--'));
if (dirs.length === 0) dirs.push('pkg');
const cases = CASES.filter((c) => c.name.includes(only));

const casesUrl = new URL('../tests/node/support/hostile-validation-cases.mjs', import.meta.url);

/** `(name, options) => { ms, answer }` for the package in `dir`. */
async function runner(dir) {
  if (inNode) {
    const base = pathToFileURL(resolve(dir) + '/').href;
    const pkg = {
      ...(await import(`${base}index.js`)),
      ...(await import(`${base}bridge/index.js`)),
      ...(await import(`${base}bridge/in-page.js`)),
      ...(await import(`${base}protocol/index.js`)),
    };
    return { run: (name) => measure(pkg, CASES.find((c) => c.name === name), { runs, warmup, fragment, withFloor: true }), close() {} };
  }
  const { launchChromium, serve, BLANK_PAGE } = await import('../tests/node/support/browser.mjs');
  const server = await serve(resolve(dir), {
    '/blank.html': BLANK_PAGE,
    '/cases.mjs': { type: 'text/javascript', body: readFileSync(casesUrl) },
  });
  const browser = await launchChromium();
  return {
    async run(name) {
      const page = await browser.newPage();
      await page.goto(`${server.url}/blank.html`);
      const result = await page.evaluate(async ({ name, runs, warmup, fragment }) => {
        const { CASES: all, measure: inPage } = await import('/cases.mjs');
        const pkg = {
          ...(await import('/index.js')),
          ...(await import('/bridge/index.js')),
          ...(await import('/bridge/in-page.js')),
          ...(await import('/protocol/index.js')),
        };
        return inPage(pkg, all.find((c) => c.name === name), { runs, warmup, fragment, withFloor: true });
      }, { name, runs, warmup, fragment });
      await page.close();
      return result;
    },
    async close() {
      await browser.close();
      await server.close();
    },
  };
}

console.log(`${inNode ? `Node ${process.version}` : 'Chromium (headless)'}, warm-up ${warmup} calls, ${fragment} tools to fragment, ${runs} run(s) per case`);
const runners = [];
for (const dir of dirs) runners.push(await runner(dir));
for (const kase of cases) {
  console.log(kase.name);
  for (const [k, dir] of dirs.entries()) {
    const { ms, floor, answer } = await runners[k].run(kase.name);
    const last = answer.last ? ` last: ${JSON.stringify(answer.last.message).slice(0, 60)}` : '';
    const list = (times) => `${times.map((t) => t.toFixed(1)).join(' ')} ms, min ${Math.min(...times).toFixed(1)}`;
    const floors = floor.length ? ` (without a schema: ${list(floor)})` : '';
    console.log(`  ${dir}\t${list(ms)}${floors}\t${answer.status}, ${answer.issues} issue(s)${last}`);
  }
}
for (const r of runners) await r.close();
