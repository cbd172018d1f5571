// node benches/inbound.mjs [pkgDir] [--node-only]: messages per second of
// the inbound pipeline (agent → page) on a fixed corpus (small call,
// describe, cancel, a call with a 100 KB input, one near 1 MiB, and a mix),
// in the two forms transports deliver: a JSON string (a WebSocket frame) and
// a JS object (Echo, postMessage, in-page). Ours: the package's
// validateMessage (for a string after JSON.parse: the bridge's own frame
// path, text straight into the core, is not reachable from JS without a
// socket). Baseline, same process, interleaved: JSON.parse (strings) or
// JSON.parse(JSON.stringify(…)) (objects), then ajv's compiled validator on
// the published schema protocol/v1/agent-to-page.json. In Node, then in
// headless Chromium. Prints numbers and ratios, asserts only validity.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import * as ajvModule from 'ajv/dist/2020.js';
import { measure, table } from './support/inbound-corpus.mjs';

const args = process.argv.slice(2);
const nodeOnly = args.includes('--node-only');
const dir = args.find((a) => !a.startsWith('--')) || 'pkg';
const schema = JSON.parse(readFileSync(resolve(dir, 'protocol/v1/agent-to-page.json'), 'utf8'));
const ajvOptions = { strict: false, strictNumbers: true };

const Ajv2020 = ajvModule.default.default ?? ajvModule.default;
const { validateMessage } = await import(pathToFileURL(resolve(dir, 'protocol/index.js')).href);
const validate = new Ajv2020(ajvOptions).compile(schema);
console.log(`Node ${process.version}`);
console.log(table(measure({ validateMessage, validate, now: () => performance.now() })));

if (!nodeOnly) {
  const { openBenchPage } = await import('./support/chromium.mjs');
  const bench = await openBenchPage();
  try {
    const rows = await bench.page.evaluate(async ({ dir, schema, ajvOptions }) => {
      const { Ajv2020 } = await import('/bench/ajv.js');
      const { measure } = await import('/benches/support/inbound-corpus.mjs');
      const { validateMessage } = await import(`/${dir}/protocol/index.js`);
      const validate = new Ajv2020(ajvOptions).compile(schema);
      return measure({ validateMessage, validate, now: () => performance.now() });
    }, { dir, schema, ajvOptions });
    console.log(`\nChromium ${bench.version} (headless)`);
    console.log(table(rows));
  } finally {
    await bench.close();
  }
}
