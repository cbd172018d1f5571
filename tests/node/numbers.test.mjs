// Numbers through the module: a tool receives each number as `JSON.parse`
// has it, and every validation decision on it equals ajv's on the same
// value, at the closest call: each threshold is a random double and each
// input is it or one of its neighbours a unit in the last place away.
// The module converts a number again from its text whenever serde_json's
// own conversion could round it wrong (src/json_value.rs); most doubles
// written in the shortest form take that path.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as ajvModule from 'ajv/dist/2020.js';

const { createToolmark } = await import(new URL('../../pkg/index.js', import.meta.url));
const Ajv2020 = ajvModule.default.default ?? ajvModule.default;
const ajv = new Ajv2020({ strict: false, allErrors: true });

/** xorshift64 over BigInt: finite doubles of random bit patterns. */
function* doubles(seed, count) {
  let x = seed;
  const view = new DataView(new ArrayBuffer(8));
  const mask = (1n << 64n) - 1n;
  for (let made = 0; made < count; ) {
    x ^= (x << 13n) & mask;
    x ^= x >> 7n;
    x ^= (x << 17n) & mask;
    view.setBigUint64(0, x);
    const f = view.getFloat64(0);
    // Mostly moderate magnitudes (where schemas live), some of every size.
    const value = made % 4 === 0 ? f : Number.isFinite(f) ? (f % 1e6) / 7 : NaN;
    if (Number.isFinite(value)) {
      made++;
      yield value;
    }
  }
}

/** The doubles a unit in the last place below and above `x`. */
function neighbours(x) {
  const view = new DataView(new ArrayBuffer(8));
  const step = (sign) => {
    view.setFloat64(0, x);
    const bits = view.getBigUint64(0);
    if (x === 0) return sign * Number.MIN_VALUE;
    view.setBigUint64(0, (x > 0) === (sign > 0) ? bits + 1n : bits - 1n);
    return view.getFloat64(0);
  };
  return [step(-1), step(1)].filter(Number.isFinite);
}

const KEYWORDS = ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'const'];

test('every number a tool receives and every decision on it equal JSON.parse and ajv', async () => {
  const tm = createToolmark({ onError: () => {} });
  let received;
  let calls = 0;
  const disagreements = [];
  let slowPath = 0;
  for (const [i, threshold] of [...doubles(0x9e3779b97f4a7c15n, 400)].entries()) {
    if (String(threshold).replace(/^-|\.|e.*$/g, '').replace(/^0+/, '').length > 15) slowPath++;
    const inputs = [threshold, ...neighbours(threshold)];
    for (const keyword of KEYWORDS) {
      const schema = { type: 'object', properties: { v: { [keyword]: threshold } }, required: ['v'] };
      const check = ajv.compile(schema);
      const unregister = tm.register({
        name: `n${i}_${keyword}`,
        description: 'Takes a number.',
        inputSchema: schema,
        run: (input) => {
          received = input.v;
          return true;
        },
      });
      for (const v of inputs) {
        received = undefined;
        calls++;
        const result = await tm.call(`n${i}_${keyword}`, { v }, { caller: 'human' });
        const ours = result.status === 'ok';
        if (ours !== check({ v })) disagreements.push(`${keyword} ${threshold} on ${v}: ours ${result.status}`);
        if (ours && !Object.is(received, v)) disagreements.push(`${v} reached the tool as ${received}`);
      }
      unregister();
    }
  }
  console.log(`${calls} calls; ${slowPath} of 400 thresholds written in more than 15 digits`);
  assert.ok(slowPath > 200, 'most thresholds take the conversion from text');
  assert.deepEqual(disagreements, []);
});
