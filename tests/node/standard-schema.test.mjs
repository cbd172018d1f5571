// Standard Schema input schemas (real zod 4 and valibot 1) through the built
// package, driven the way an agent does: createInPageChannel() + bridge, then
// agent.call / agent.describe.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as z from 'zod';
import * as v from 'valibot';

const pkgUrl = new URL('../../pkg/', import.meta.url);
const { createToolmark, ToolmarkError } = await import(new URL('index.js', pkgUrl));
const { bridge } = await import(new URL('bridge/index.js', pkgUrl));
const { createInPageChannel } = await import(new URL('bridge/in-page.js', pkgUrl));

const tick = () => new Promise((resolve) => setImmediate(resolve));

async function until(condition, what) {
  for (let i = 0; i < 200; i++) {
    if (condition()) return;
    await tick();
  }
  assert.fail(`timed out waiting for ${what}`);
}

/** A registry with the bridge attached to an in-page channel; `errors` collects error events. */
function setup(options = {}) {
  const errors = [];
  const tm = createToolmark({ ...options, onError: (event) => errors.push(event) });
  const { transport, agent } = createInPageChannel();
  const detach = tm.use(bridge({ transport }));
  return { tm, agent, errors, detach };
}

/** Registers, then waits until the agent's latest manifest lists the tool. */
async function registerVisible({ tm, agent }, def, fullName = def.name) {
  const off = tm.register(def);
  await until(() => agent.tools.some((tool) => tool.name === fullName), `${fullName} in the manifest`);
  return off;
}

const Signup = z.object({
  age: z.coerce.number().int().min(18),
  user: z.object({ email: z.email(), tags: z.array(z.string().min(2)).default([]) }),
  name: z.string().transform((s) => s.trim().toUpperCase()),
});

test('zod: valid input runs, with coercions, transforms and defaults applied before run', async () => {
  const env = setup();
  const seen = [];
  await registerVisible(env, {
    name: 'signup',
    description: 'Sign up.',
    inputSchema: Signup,
    run(input, ctx) {
      seen.push({ input, caller: ctx.caller });
      return { ok: true };
    },
  });
  const result = await env.agent.call('signup', { age: '42', user: { email: 'ada@example.com' }, name: '  ada ' });
  assert.deepEqual(result, { status: 'ok', data: { ok: true } });
  assert.deepEqual(seen, [{ input: { age: 42, user: { email: 'ada@example.com', tags: [] }, name: 'ADA' }, caller: 'inapp' }]);
  assert.deepEqual(env.errors, []);
  env.detach();
});

test('zod: invalid input is `invalid` with dotted paths, and the tool does not run', async () => {
  const env = setup();
  let runs = 0;
  await registerVisible(env, {
    name: 'signup',
    description: 'Sign up.',
    inputSchema: Signup,
    run() {
      runs++;
    },
  });
  const result = await env.agent.call('signup', { age: '12', user: { email: 'nope', tags: ['ok', 'x'] }, name: 7 });
  assert.equal(result.status, 'invalid');
  assert.deepEqual(
    result.issues.map((issue) => issue.path).sort(),
    ['age', 'name', 'user.email', 'user.tags.1'],
  );
  for (const issue of result.issues) {
    assert.equal(typeof issue.message, 'string');
    assert.ok(issue.message.length > 0);
    assert.deepEqual(Object.keys(issue).sort(), ['message', 'path']);
  }
  // The messages are zod's own.
  const expected = Signup.safeParse({ age: '12', user: { email: 'nope', tags: ['ok', 'x'] }, name: 7 });
  assert.deepEqual(
    result.issues.map((issue) => issue.message).sort(),
    expected.error.issues.map((issue) => issue.message).sort(),
  );
  // A root-level issue has the empty path.
  await registerVisible(env, {
    name: 'pair',
    description: 'Two equal fields.',
    inputSchema: z.object({ a: z.string(), b: z.string() }).refine((o) => o.a === o.b, 'a and b differ'),
    run() {
      runs++;
    },
  });
  assert.deepEqual(await env.agent.call('pair', { a: 'x', b: 'y' }), {
    status: 'invalid',
    issues: [{ path: '', message: 'a and b differ' }],
  });
  assert.equal(runs, 0);
  env.detach();
});

test('zod: async refinements are awaited', async () => {
  const env = setup();
  await registerVisible(env, {
    name: 'handle',
    description: 'Claim a handle.',
    inputSchema: z.object({ handle: z.string().refine(async (h) => h !== 'taken', 'Handle is taken') }),
    run: (input) => input.handle,
  });
  assert.deepEqual(await env.agent.call('handle', { handle: 'free' }), { status: 'ok', data: 'free' });
  assert.deepEqual(await env.agent.call('handle', { handle: 'taken' }), {
    status: 'invalid',
    issues: [{ path: 'handle', message: 'Handle is taken' }],
  });
  env.detach();
});

test("zod: describe shows the JSON Schema zod derives (its ~standard.jsonSchema), the manifest only the summary", async () => {
  const env = setup();
  await registerVisible(env, { name: 'signup', title: 'Sign up', description: 'Sign up.', inputSchema: Signup, run() {} });
  const derived = Signup['~standard'].jsonSchema.input({ target: 'draft-2020-12' });
  assert.deepEqual(derived, z.toJSONSchema(Signup, { io: 'input', target: 'draft-2020-12' }));
  assert.equal(derived.$schema, 'https://json-schema.org/draft/2020-12/schema');
  assert.deepEqual(Object.keys(derived.properties), ['age', 'user', 'name']);

  const described = await env.agent.describe('signup');
  assert.equal(described.status, 'ok');
  assert.deepEqual(described.data, {
    name: 'signup',
    llmName: 'signup',
    title: 'Sign up',
    description: 'Sign up.',
    hints: {},
    inputSchema: derived,
  });
  const summary = env.agent.tools.find((tool) => tool.name === 'signup');
  assert.deepEqual(summary, { name: 'signup', llmName: 'signup', title: 'Sign up', description: 'Sign up.', hints: {} });
  assert.deepEqual(env.tm.manifest('inapp'), [summary]);
  assert.deepEqual(env.errors, []);
  env.detach();
});

test('zod: a schema zod cannot express in JSON Schema registers with {} (production) and still validates', async () => {
  const env = setup();
  const seen = [];
  await registerVisible(env, {
    name: 'remind',
    description: 'Set a reminder.',
    inputSchema: z.object({ at: z.date(), text: z.string() }),
    run: (input) => {
      seen.push(input);
    },
  });
  assert.deepEqual(env.errors.map((e) => [e.code, e.tool]), [['schema_conversion_failed', 'remind']]);
  const described = await env.agent.describe('remind');
  assert.deepEqual(described.data.inputSchema, {});
  // JSON carries no Date: the agent's string fails z.date(), and the tool does not run.
  const result = await env.agent.call('remind', { at: '2030-01-01', text: 'x' });
  assert.equal(result.status, 'invalid');
  assert.deepEqual(result.issues.map((issue) => issue.path), ['at']);
  assert.deepEqual(seen, []);
  env.detach();
});

test('zod: human calls through tm.call validate the same way', async () => {
  const { tm, errors } = setup();
  tm.register({ name: 'signup', description: 'Sign up.', inputSchema: Signup, run: (input) => input });
  assert.deepEqual(await tm.call('signup', { age: 30, user: { email: 'a@b.co' }, name: 'x' }, { caller: 'human' }), {
    status: 'ok',
    data: { age: 30, user: { email: 'a@b.co', tags: [] }, name: 'X' },
  });
  const invalid = await tm.call('signup', { age: 30, user: {}, name: 'x' }, { caller: 'human' });
  assert.deepEqual(invalid.issues.map((issue) => issue.path), ['user.email']);
  assert.deepEqual(errors, []);
});

const Order = v.object({
  sku: v.pipe(v.string(), v.minLength(3, 'SKU too short')),
  qty: v.pipe(v.string(), v.transform(Number), v.integer('Whole units only')),
  address: v.object({ zip: v.pipe(v.string(), v.regex(/^\d{5}$/, 'Five digits')) }),
});

test('valibot (production): registers with inputSchema {} and a schema_conversion_failed event; validates with valibot', async () => {
  const env = setup();
  const seen = [];
  const shop = env.tm.scope('shop');
  shop.register({
    name: 'order',
    description: 'Order.',
    inputSchema: Order,
    run(input) {
      seen.push(input);
      return { ordered: input.qty };
    },
  });
  await until(() => env.agent.tools.some((tool) => tool.name === 'shop.order'), 'shop.order in the manifest');
  assert.equal(env.errors.length, 1);
  assert.equal(env.errors[0].code, 'schema_conversion_failed');
  assert.equal(env.errors[0].tool, 'shop.order');
  assert.match(env.errors[0].message, /shop\.order/);

  const described = await env.agent.describe('shop.order');
  assert.deepEqual(described, {
    status: 'ok',
    data: { name: 'shop.order', llmName: 'shop__order', description: 'Order.', hints: {}, inputSchema: {} },
  });

  // Valid: valibot's transform reaches run.
  assert.deepEqual(await env.agent.call('shop.order', { sku: 'ABC-1', qty: '3', address: { zip: '12345' } }), {
    status: 'ok',
    data: { ordered: 3 },
  });
  assert.deepEqual(seen, [{ sku: 'ABC-1', qty: 3, address: { zip: '12345' } }]);

  // Invalid: valibot's path segments ({ key }) become dotted paths; the tool does not run.
  const invalid = await env.agent.call('shop.order', { sku: 'AB', qty: '2.5', address: { zip: 'x' } });
  assert.equal(invalid.status, 'invalid');
  assert.deepEqual(
    invalid.issues.map(({ path, message }) => `${path}: ${message}`).sort(),
    ['address.zip: Five digits', 'qty: Whole units only', 'sku: SKU too short'],
  );
  assert.equal(seen.length, 1);
  env.detach();
});

test('valibot (dev): registering throws ToolmarkError schema_conversion_failed and registers nothing', () => {
  const { tm, errors } = setup({ dev: true });
  const rev = tm.rev;
  assert.throws(
    () => tm.register({ name: 'order', description: 'Order.', inputSchema: Order, run() {} }),
    (error) => {
      assert.ok(error instanceof ToolmarkError);
      assert.equal(error.name, 'ToolmarkError');
      assert.equal(error.code, 'schema_conversion_failed');
      assert.match(error.message, /order/);
      return true;
    },
  );
  assert.equal(tm.rev, rev);
  assert.deepEqual(tm.manifest('inapp'), []);
  assert.deepEqual(errors, []);
  // The name is free: a JSON Schema version of the tool registers.
  tm.register({ name: 'order', description: 'Order.', inputSchema: { type: 'object' }, run() {} });
  assert.deepEqual(tm.manifest('inapp').map((tool) => tool.name), ['order']);
});

/**
 * The shape `toStandardJsonSchema(schema)` of `@valibot/to-json-schema` gives a
 * valibot schema: its own validate plus `~standard.jsonSchema`. Built by hand
 * here so the test needs no extra dependency.
 */
function withJsonSchema(schema, json) {
  return {
    '~standard': {
      ...schema['~standard'],
      jsonSchema: { input: () => json, output: () => json },
    },
  };
}

test('valibot with a Standard JSON Schema converter: describe shows it, dev mode accepts it', async () => {
  const json = {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    type: 'object',
    properties: {
      sku: { type: 'string', minLength: 3 },
      qty: { type: 'string' },
      address: { type: 'object', properties: { zip: { type: 'string', pattern: '^\\d{5}$' } }, required: ['zip'] },
    },
    required: ['sku', 'qty', 'address'],
  };
  const env = setup({ dev: true });
  await registerVisible(env, { name: 'order', description: 'Order.', inputSchema: withJsonSchema(Order, json), run: (input) => input.qty });
  assert.deepEqual((await env.agent.describe('order')).data.inputSchema, json);
  assert.deepEqual(await env.agent.call('order', { sku: 'ABC', qty: '4', address: { zip: '12345' } }), { status: 'ok', data: 4 });
  // The Standard Schema's validate decides, not the JSON Schema (which would accept qty '4.5').
  const invalid = await env.agent.call('order', { sku: 'ABC', qty: '4.5', address: { zip: '12345' } });
  assert.deepEqual(invalid, { status: 'invalid', issues: [{ path: 'qty', message: 'Whole units only' }] });
  assert.deepEqual(env.errors, []);
  env.detach();
});

let toStandardJsonSchema;
try {
  ({ toStandardJsonSchema } = await import('@valibot/to-json-schema'));
} catch {
  toStandardJsonSchema = undefined;
}

test(
  'valibot + @valibot/to-json-schema toStandardJsonSchema: the real converter',
  { skip: toStandardJsonSchema ? false : '@valibot/to-json-schema is not installed (devDependency suggested)' },
  async () => {
    const Simple = v.object({ sku: v.pipe(v.string(), v.minLength(3)), qty: v.number() });
    const env = setup({ dev: true });
    await registerVisible(env, { name: 'order', description: 'Order.', inputSchema: toStandardJsonSchema(Simple), run: (i) => i.qty });
    const schema = (await env.agent.describe('order')).data.inputSchema;
    assert.equal(schema.type, 'object');
    assert.deepEqual(schema.properties.sku, { type: 'string', minLength: 3 });
    assert.deepEqual(await env.agent.call('order', { sku: 'ABC', qty: 2 }), { status: 'ok', data: 2 });
    assert.equal((await env.agent.call('order', { sku: 'A', qty: 2 })).status, 'invalid');
    env.detach();
  },
);

test('a Standard Schema whose validate throws gives error "Tool failed" and a tool_threw event', async () => {
  const env = setup();
  const broken = withJsonSchema(
    { '~standard': { version: 1, vendor: 'test', validate() { throw new Error('validator exploded'); } } },
    { type: 'object' },
  );
  let runs = 0;
  await registerVisible(env, { name: 'broken', description: 'x', inputSchema: broken, run: () => runs++ });
  assert.deepEqual(await env.agent.call('broken', {}), { status: 'error', message: 'Tool failed' });
  assert.deepEqual(env.errors.map((e) => [e.code, e.tool]), [['tool_threw', 'broken']]);
  assert.match(env.errors[0].message, /validator exploded/);
  assert.equal(runs, 0);
  env.detach();
});

// Standard Schema output schemas and non-JSON validated values.

test(
  'zod outputSchema: a Standard Schema output schema is checked in dev (output_invalid) and shown by describe',
  async () => {
    const env = setup({ dev: true });
    const Output = z.object({ n: z.number() });
    await registerVisible(env, { name: 'count', description: 'x', outputSchema: Output, run: () => ({ n: 'three' }) });
    await env.agent.call('count', {});
    assert.deepEqual(env.errors.map((e) => e.code), ['output_invalid']);
    assert.deepEqual((await env.agent.describe('count')).data.outputSchema, Output['~standard'].jsonSchema.output({ target: 'draft-2020-12' }));
    env.detach();
  },
);

test(
  'a validated value that is not JSON-safe (zod coerce.bigint) never reaches run as the raw input',
  async () => {
    const env = setup();
    const seen = [];
    await registerVisible(env, {
      name: 'big',
      description: 'x',
      inputSchema: z.object({ n: z.coerce.bigint(), s: z.string().transform((t) => t.toUpperCase()) }),
      run: (input) => {
        seen.push(input);
      },
    });
    const result = await env.agent.call('big', { n: '5', s: 'a' });
    assert.deepEqual(seen, []);
    assert.deepEqual(result, { status: 'error', message: 'Tool failed' });
    env.detach();
  },
);

// The validated value itself reaches the tool (not a JSON copy of it).

test('zod coerce.date(): run (and snapshot) get the validated value itself, a Date, not its JSON copy', async () => {
  const env = setup();
  const seen = [];
  await registerVisible(env, {
    name: 'when',
    description: 'x',
    inputSchema: z.object({ at: z.coerce.date(), tags: z.array(z.string()).transform((t) => new Set(t)) }),
    snapshot: (input) => {
      seen.push(['snapshot', input.at instanceof Date]);
      return () => {};
    },
    run: (input) => {
      seen.push(['run', input.at instanceof Date, input.tags instanceof Set]);
      return input.at.getTime();
    },
  });
  const at = '2026-12-01T08:00:00.000Z';
  assert.deepEqual(await env.agent.call('when', { at, tags: ['a', 'a', 'b'] }), { status: 'ok', data: Date.parse(at) });
  assert.deepEqual(seen, [
    ['snapshot', true],
    ['run', true, true],
  ]);
  // A human call through tm.call too.
  seen.length = 0;
  assert.deepEqual(await env.tm.call('when', { at, tags: [] }, { caller: 'human' }), { status: 'ok', data: Date.parse(at) });
  assert.deepEqual(seen, [
    ['snapshot', true],
    ['run', true, true],
  ]);
  // zod has no JSON Schema for a Date or a transform: production registers {} (and says so).
  assert.deepEqual(env.errors.map((e) => e.code), ['schema_conversion_failed']);
  env.detach();
});

test('a custom Standard Schema: run gets the very object validate returned, also after a deferred confirmation', async () => {
  const env = setup();
  const values = [];
  const schema = withJsonSchema(
    {
      '~standard': {
        version: 1,
        vendor: 'test',
        validate(input) {
          const value = { when: new Date(input.when), original: input };
          values.push(value);
          return { value };
        },
      },
    },
    { type: 'object' },
  );
  const runs = [];
  const summaries = [];
  await registerVisible(env, { name: 'plain', description: 'x', inputSchema: schema, run: (input) => runs.push(input) });
  await registerVisible(env, {
    name: 'pay',
    description: 'x',
    hints: { consequential: true },
    inputSchema: schema,
    summary: (input) => {
      summaries.push(input);
      return `Pay on ${input.when.toISOString().slice(0, 10)}`;
    },
    run: (input) => runs.push(input),
  });
  await env.agent.call('plain', { when: '2026-12-01' });
  assert.equal(runs[0], values[0], 'the same object');
  const pending = await env.agent.call('pay', { when: '2026-12-02' });
  assert.equal(pending.status, 'needs_confirmation');
  assert.equal(pending.summary, 'Pay on 2026-12-02');
  assert.equal(summaries[0], values[1]);
  assert.deepEqual(await env.tm.confirmPending(pending.confirmId, true), { status: 'ok', data: 2 });
  assert.equal(runs[1], values[1], 'the approved run gets the value validated at the request');
  // A rejected confirmation's value is forgotten, not run.
  const rejected = await env.agent.call('pay', { when: '2026-12-03' });
  assert.deepEqual(await env.tm.confirmPending(rejected.confirmId, false), { status: 'cancelled', by: 'operator' });
  assert.equal(runs.length, 2);
  assert.deepEqual(env.errors, []);
  env.detach();
});
