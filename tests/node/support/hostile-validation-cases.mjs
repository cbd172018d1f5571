// The validator's worst cases of issue 22 (and a few more built the same
// way), shared by tests/node/hostile-validation.test.mjs and
// benches/validate-worst.mjs; runs in Node and in a page, imports nothing.
//
// Each case is { name, kind, schema, input() } ('call': a tool with that
// input schema called by the agent through the in-page channel) or
// { name, kind: 'validateMessage', message(), direction }.

/** JSON text length of `value`. */
const size = (value) => JSON.stringify(value).length;

/** An array of `make(i)` items whose JSON text is about `bytes` long. */
function arrayOf(bytes, make) {
  const items = [];
  let length = 2;
  for (let i = 0; length < bytes; i++) {
    const item = make(i);
    items.push(item);
    length += size(item) + 1;
  }
  return items;
}

const MiB = 1 << 20;
const clientId = '5742fe13-f99c-4397-b3ca-88ea6f540ffb';

/** 600 names shaped like time zones (`Area_3/City_Name_123`). */
export const ZONES = Array.from({ length: 600 }, (_, i) => `Area_${i % 12}/City_Name_${i}`);

/** 100 distinct objects of a few fields. */
export const OBJECTS = Array.from({ length: 100 }, (_, i) => ({
  id: i, name: `item ${i}`, tags: ['a', `t${i % 7}`], price: { amount: i * 3.5, currency: 'EUR' },
}));

const requiredAbcd = { type: 'array', items: { type: 'object', required: ['a', 'b', 'c', 'd'] } };

/** A chain of `anyOf`s, two refs each to the next: 2^depth paths, all failing. */
function exponential(depth) {
  const defs = {};
  for (let i = 0; i < depth; i++) {
    const next = i + 1 < depth ? { $ref: `#/$defs/d${i + 1}` } : false;
    defs[`d${i}`] = { anyOf: [next, next] };
  }
  return { $defs: defs, $ref: '#/$defs/d0' };
}

export const CASES = [
  // The transport's floor: the same size of input, no validation work.
  { name: '1 MiB array, schema {}', kind: 'call', schema: {}, input: () => arrayOf(MiB, (i) => i) },
  { name: 'required × 10,000 {} (30 KB)', kind: 'call', schema: requiredAbcd, input: () => Array.from({ length: 10_000 }, () => ({})) },
  { name: 'required × 40,000 {} (120 KB)', kind: 'call', schema: requiredAbcd, input: () => Array.from({ length: 40_000 }, () => ({})) },
  {
    name: 'validateMessage: manifest of 10,000 {} tools (30 KB)',
    kind: 'validateMessage',
    direction: 'toAgent',
    message: () => ({ protocol: 1, type: 'manifest', clientId, rev: 1, tools: Array.from({ length: 10_000 }, () => ({})) }),
  },
  {
    name: 'enum of 600 zone names, 1 MiB array of them',
    kind: 'call',
    schema: { type: 'array', items: { enum: ZONES } },
    input: () => arrayOf(MiB, (i) => ZONES[(i * 7919) % ZONES.length]),
  },
  {
    name: 'enum of 100 objects, 1 MiB array of them',
    kind: 'call',
    schema: { type: 'array', items: { enum: OBJECTS } },
    input: () => arrayOf(MiB, (i) => OBJECTS[(i * 31) % OBJECTS.length]),
  },
  {
    name: 'enum of 100 objects, 200 KB array of them',
    kind: 'call',
    schema: { type: 'array', items: { enum: OBJECTS } },
    input: () => arrayOf(200 * 1024, (i) => OBJECTS[(i * 31) % OBJECTS.length]),
  },
  {
    name: 'items {type: string}, 1 MiB of 0s (524k issues)',
    kind: 'call',
    schema: { type: 'array', items: { type: 'string' } },
    input: () => arrayOf(MiB, () => 0),
  },
  { name: 'uniqueItems, 1 MiB of distinct integers', kind: 'call', schema: { uniqueItems: true }, input: () => arrayOf(MiB, (i) => i) },
  {
    name: 'uniqueItems, 1 MiB of distinct small objects',
    kind: 'call',
    schema: { uniqueItems: true },
    input: () => arrayOf(MiB, (i) => ({ k: i % 10, v: [i, 'x'] })),
  },
  {
    name: 'uniqueItems, 100 KB of distinct small objects',
    kind: 'call',
    schema: { uniqueItems: true },
    input: () => arrayOf(100 * 1024, (i) => ({ k: i % 10, v: [i, 'x'] })),
  },
  {
    name: 'pattern ^(a+)+$, 1 MiB of a and a !',
    kind: 'call',
    schema: { type: 'string', pattern: '^(a+)+$' },
    input: () => `${'a'.repeat(MiB - 4)}!`,
  },
  {
    name: 'pattern \\d{4}-\\d{2}-\\d{2} unanchored, 1 MiB of 1',
    kind: 'call',
    schema: { type: 'string', pattern: '\\d{4}-\\d{2}-\\d{2}' },
    input: () => '1'.repeat(MiB - 4),
  },
  // Just under the budget: the longest inputs each pattern still runs on.
  {
    name: 'pattern ^(a+)+$, 340 KB of a and a !',
    kind: 'call',
    schema: { type: 'string', pattern: '^(a+)+$' },
    input: () => `${'a'.repeat(340_000)}!`,
  },
  {
    name: 'pattern \\d{4}-\\d{2}-\\d{2} unanchored, 240 KB of 1',
    kind: 'call',
    schema: { type: 'string', pattern: '\\d{4}-\\d{2}-\\d{2}' },
    input: () => '1'.repeat(240_000),
  },
  {
    name: 'patternProperties × 10, 50,000 keys',
    kind: 'call',
    schema: {
      type: 'object',
      patternProperties: Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`^k${i}x`, { type: 'number' }])),
    },
    input: () => Object.fromEntries(Array.from({ length: 50_000 }, (_, i) => [`key_${i}`, i])),
  },
  {
    name: 'maxLength, 1 MiB string',
    kind: 'call',
    schema: { type: 'string', maxLength: 10 },
    input: () => 'é'.repeat(MiB / 2 - 4),
  },
  { name: 'anyOf chain of 40 (2^40 paths)', kind: 'call', schema: exponential(40), input: () => 1 },
  {
    name: 'required list of 20,000 names × 1,000 {}',
    kind: 'call',
    schema: { type: 'array', items: { required: Array.from({ length: 20_000 }, (_, i) => `name_${i}`) } },
    input: () => Array.from({ length: 1_000 }, () => ({})),
  },
  {
    name: 'properties of 2,000 names, 100,000 keys',
    kind: 'call',
    schema: { type: 'object', properties: Object.fromEntries(Array.from({ length: 2_000 }, (_, i) => [`p${i}`, { type: 'number' }])) },
    input: () => Object.fromEntries(Array.from({ length: 100_000 }, (_, i) => [`k${i}`, i])),
  },
  {
    name: 'allOf of 200 properties, unevaluatedProperties, 50,000 keys',
    kind: 'call',
    schema: { allOf: Array.from({ length: 200 }, (_, i) => ({ properties: { [`p${i}`]: true } })), unevaluatedProperties: true },
    input: () => Object.fromEntries(Array.from({ length: 50_000 }, (_, i) => [`k${i}`, i])),
  },
  // Found by the `validate` fuzz target's time oracle (fuzz/regressions/validate).
  {
    name: 'fuzz: patternProperties ^k and [1-9]$, 1 MiB of keys',
    kind: 'call',
    schema: { patternProperties: { '^k': { type: 'string' }, '[1-9]$': { minLength: 2 } } },
    input: () => Object.fromEntries(Array.from({ length: 95_000 }, (_, i) => [`k${i}`, 'x'])),
  },
  {
    name: 'fuzz: items anyOf string / $ref / const, 1 MiB of {a:[1,2,3]}',
    kind: 'call',
    schema: { items: { anyOf: [{ type: 'string' }, { type: 'object', properties: { a: { $ref: '#' } } }, { const: { a: [1, 2, 3] } }] } },
    input: () => arrayOf(MiB, () => ({ a: [1, 2, 3] })),
  },
];

/** What an answer says, in brief: status, issue count, first and last issue. */
function summary(answer) {
  const issues = answer.issues ?? answer.errors ?? [];
  return {
    status: answer.status ?? (answer.ok ? 'ok' : 'invalid'),
    issues: issues.length,
    first: issues[0],
    last: issues[issues.length - 1],
  };
}

/**
 * Runs `kase` `runs` times with the package's exports `pkg` ({ createToolmark,
 * bridge, createInPageChannel, validateMessage }), after `warmup` small agent
 * calls (inputs of 0–49 `{}` items against `required`, each answered with as
 * many issues), and with `fragment`, that many tools registered and every
 * other one unregistered first. Returns the
 * milliseconds of each run and the last answer's summary; `withFloor`, also
 * the milliseconds of each run's input sent to a tool without a schema (`{}`):
 * the call's cost without validation.
 */
export async function measure(pkg, kase, { runs = 1, warmup = 2000, withFloor = false, fragment = 0 } = {}) {
  const { createToolmark, bridge, createInPageChannel, validateMessage } = pkg;
  const tm = createToolmark();
  // `fragment` tools registered, then every other one unregistered: their
  // compiled schemas' blocks freed between live ones (the heap of a page
  // whose tools came and went).
  const unregister = [];
  for (let i = 0; i < fragment; i++) {
    unregister.push(tm.register({
      name: `t${i}`,
      description: 'Fragments the heap.',
      inputSchema: { type: 'object', properties: { [`p${i}`]: { type: 'string', minLength: i % 5 } }, required: [`p${i}`] },
      run: () => i,
    }));
  }
  for (let i = 0; i < fragment; i += 2) unregister[i]();
  tm.register({ name: 'warm', description: 'Warms up.', inputSchema: requiredAbcd, run: () => 1 });
  if (kase.kind === 'call') {
    tm.register({ name: 'worst', description: 'The case.', inputSchema: kase.schema, run: () => 'ran' });
    tm.register({ name: 'floor', description: 'No validation.', inputSchema: {}, run: () => 'ran' });
  }
  const { transport, agent } = createInPageChannel();
  tm.use(bridge({ transport, maxMessageBytes: 8 * MiB }));
  const wanted = kase.kind === 'call' ? 3 : 1;
  while (agent.tools.length < wanted) await new Promise((resolve) => setTimeout(resolve, 0));
  for (let i = 0; i < warmup; i++) await agent.call('warm', Array.from({ length: i % 50 }, () => ({})));
  const ms = [];
  const floor = [];
  let answer;
  for (let r = 0; r < runs; r++) {
    if (kase.kind === 'call') {
      const input = kase.input();
      let start = performance.now();
      answer = await agent.call('worst', input);
      ms.push(performance.now() - start);
      if (!withFloor) continue;
      start = performance.now();
      await agent.call('floor', input);
      floor.push(performance.now() - start);
    } else {
      const message = kase.message();
      const start = performance.now();
      answer = validateMessage(message, kase.direction);
      ms.push(performance.now() - start);
    }
  }
  return { ms, floor, answer: summary(answer) };
}
