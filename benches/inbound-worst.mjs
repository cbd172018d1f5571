// node benches/inbound-worst.mjs [--runs N] [pkgDir ...]: how long an agent's
// worst messages block the page's main thread in headless Chromium, parsing
// measured apart from validating. Each message arrives as a WebSocket text
// frame (the agent's route: no JS copy on the page's side) through a socket
// stand-in the page dispatches synchronously, and is timed from the frame's
// dispatch to the tool's `run`:
// - parse: the input goes to a tool without a schema (bounds, clientId,
//   the message read and checked, the input's text handed to JS and parsed
//   there for the tool); beside it, in the same page just before, the time
//   of `JSON.parse` of the input's text alone (the floor: making the tool's
//   input object), and the difference, the page's own work;
// - validate: the same message to a tool with the case's schema, beside
//   the parse figure (the input parsed in wasm and validated);
// - within the budget: the heaviest inputs the work budget lets be built
//   and validated under the costliest of those schemas.
// A case whose schema refuses the input is timed to its `result` instead.
// Prints each case's minimum over N runs (a fresh page each); asserts nothing.
// Default package: pkg.
import { resolve } from 'node:path';
import { launchChromium, serve, BLANK_PAGE } from '../tests/node/support/browser.mjs';
import { CASES as VALIDATION, OBJECTS } from '../tests/node/support/hostile-validation-cases.mjs';

const args = process.argv.slice(2);
const at = args.indexOf('--runs');
const runs = at === -1 ? 3 : Number(args.splice(at, 2)[1]);
const dirs = args.length ? args : ['pkg'];
const MiB = 1 << 20;

/** Inputs of about 1 MiB of message, each a worst shape for reading. */
const PARSE = {
  '1 MiB, 90,000 keys': () => Object.fromEntries(Array.from({ length: 90_000 }, (_, i) => [`k${i}`, i % 10])),
  '1 MiB, 500,000 small integers': () => Array.from({ length: 500_000 }, (_, i) => i % 10),
  '1 MiB, 128,000 "abcdefg"': () => Array.from({ length: 128_000 }, () => 'abcdefg'),
  '1 MiB, 170,000 \\u00e9 escapes': () => '\u00e9'.repeat(170_000),
  '1 MiB, 25,000 objects 63 deep': () => Array.from({ length: 900 }, () => JSON.parse('['.repeat(62) + ']'.repeat(62))),
  '1 MiB, 60,000 floats': () => Array.from({ length: 60_000 }, (_, i) => 1 / (i + 3)),
  '1 MiB, 340,000 []': () => Array.from({ length: 340_000 }, () => []),
  '1 MiB, 340,000 {}': () => Array.from({ length: 340_000 }, () => ({})),
};

/** The validation worst cases that fit one 1 MiB message. */
const SCHEMAS = VALIDATION.filter((c) => c.kind === 'call');

/**
 * The heaviest inputs the work budget lets through for the costliest
 * schemas of those cases: each just under (or at) the budget, so built and
 * validated (docs/protocol.md §11: about 60,000 values).
 */
const schemaOf = (prefix) => VALIDATION.find((c) => c.name.startsWith(prefix)).schema;
const keys = (n, name = (i) => `k${i}`) => () => Object.fromEntries(Array.from({ length: n }, (_, i) => [name(i), i % 10]));
const WITHIN = [
  ['55,000 distinct integers, uniqueItems', () => Array.from({ length: 55_000 }, (_, i) => i * 7), { uniqueItems: true }],
  ['58,000 integers, enum of 600 names', () => Array.from({ length: 58_000 }, (_, i) => i), schemaOf('enum of 600')],
  ['2,500 of the enum\'s 100 objects', () => Array.from({ length: 2_500 }, (_, i) => OBJECTS[(i * 31) % OBJECTS.length]), schemaOf('enum of 100 objects')],
  ['19,000 keys, patternProperties × 10', keys(19_000), schemaOf('patternProperties × 10')],
  ['19,000 keys, patternProperties ^k and [1-9]$', keys(19_000), schemaOf('fuzz: patternProperties')],
  ['19,000 keys, properties of 2,000 names', keys(19_000, (i) => `p${i % 3000}_${i}`), schemaOf('properties of 2,000')],
  ['19,000 keys, allOf of 200, unevaluatedProperties', keys(19_000), schemaOf('allOf of 200')],
  ['6,500 {a:[1,2,3]}, items anyOf string / $ref / const', () => Array.from({ length: 6_500 }, () => ({ a: [1, 2, 3] })), schemaOf('fuzz: items anyOf')],
];

function inPage({ entries, input, schema }) {
  return (async () => {
    const [{ createToolmark }, { bridge }, { websocketTransport }] = await Promise.all(entries.map((e) => import(e)));
    let socket;
    class StandIn {
      constructor() {
        socket = this;
        this.readyState = 0;
        this.listeners = {};
        this.sent = [];
        queueMicrotask(() => {
          this.readyState = 1;
          for (const f of this.listeners.open || []) f({ type: 'open' });
        });
      }
      addEventListener(type, f) { (this.listeners[type] ||= []).push(f); }
      removeEventListener() {}
      send(text) { this.sent.push(text); }
      close() {}
    }
    const tm = createToolmark({ onError: () => {} });
    let ranAt = 0;
    tm.register({ name: 'worst', description: 'd', hints: { readOnly: true }, inputSchema: schema, run: () => { ranAt = performance.now(); return 1; } });
    tm.use(bridge({ transport: websocketTransport({ url: 'ws://127.0.0.1:9/x', WebSocket: StandIn }), maxMessageBytes: 2 * 1048576 }));
    while (!socket || socket.sent.length === 0) await new Promise((r) => setTimeout(r, 5));
    const { clientId } = JSON.parse(socket.sent[0]);
    const frame = JSON.stringify({ protocol: 1, type: 'call', clientId, id: 'worst-1', tool: 'worst', input });
    // The floor: the tool's input made from its text, as the page must.
    const inputText = JSON.stringify(input);
    const floorStart = performance.now();
    JSON.parse(inputText);
    const floor = performance.now() - floorStart;
    const start = performance.now();
    for (const f of socket.listeners.message) f({ type: 'message', data: frame });
    const handed = performance.now();
    while (!socket.sent.some((t) => t.includes('"worst-1"'))) await new Promise((r) => setTimeout(r, 0));
    const answer = JSON.parse(socket.sent.find((t) => t.includes('"worst-1"'))).result;
    return { bytes: frame.length, ran: ranAt ? ranAt - start : null, handed: handed - start, status: answer.status, floor };
  })();
}

const browser = await launchChromium();
try {
  for (const dir of dirs) {
    const server = await serve(resolve(dir), { '/blank.html': BLANK_PAGE });
    const entries = ['index.js', 'bridge/index.js', 'bridge/websocket.js'].map((e) => `${server.url}/${e}`);
    const time = async (input, schema) => {
      const value = input();
      let best;
      for (let run = 0; run < runs; run++) {
        const page = await browser.newPage();
        await page.goto(`${server.url}/blank.html`);
        const r = await page.evaluate(inPage, { entries, input: value, schema });
        await page.close();
        const ms = r.ran ?? r.handed;
        if (!best || ms < best.ms) best = { ...r, ms };
      }
      return best;
    };
    console.log(`\n${dir}: parse (frame → run, no schema), minimum of ${runs}`);
    for (const [name, input] of Object.entries(PARSE)) {
      const r = await time(input, {});
      console.log(`  ${name.padEnd(46)} ${(r.bytes / MiB).toFixed(2)} MiB  ${r.ms.toFixed(1).padStart(6)} ms, of which JSON.parse of the input ${r.floor.toFixed(1)} ms: the page's own ${(r.ms - r.floor).toFixed(1)} ms  ${r.status}`);
    }
    console.log(`${dir}: validate (frame → run or result, with the schema), and the same input without`);
    for (const kase of SCHEMAS) {
      const withSchema = await time(kase.input, kase.schema);
      if (withSchema.bytes > 2 * MiB) continue;
      const floor = await time(kase.input, {});
      console.log(`  ${kase.name.slice(0, 60).padEnd(60)} ${withSchema.ms.toFixed(1).padStart(6)} ms (${floor.ms.toFixed(1)} without)  ${withSchema.status}`);
    }
    console.log(`${dir}: the heaviest inputs within the budget (frame → run or result), and the same input without`);
    for (const [name, input, schema] of WITHIN) {
      const withSchema = await time(input, schema);
      const floor = await time(input, {});
      console.log(`  ${name.slice(0, 60).padEnd(60)} ${withSchema.ms.toFixed(1).padStart(6)} ms (${floor.ms.toFixed(1)} without)  ${withSchema.status}`);
    }
    await server.close();
  }
} finally {
  await browser.close();
}
